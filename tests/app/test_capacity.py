"""``kopf-scheduler capacity -f pod.yaml`` (issue #37 §3), checked against brute force: the real
operator schedules the replicas, created one by one in the simulated cluster until one stays
pending, and the count and the nodes must be what ``capacity`` answered before any was created.

Each scenario has nodes of its own (label ``pool``) and its pods select them, so the scenarios
share one operator without seeing each other's pods."""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.profiles.crd import API_VERSION, KIND
from scheduler.simulator.controllers.gpudriver import GPU_DRIVER
from tests.operator.harness import Env, running_operator
from tests.operator.test_e2e import accepted

SCHEDULER = "kopf-scheduler"
ZONE = "topology.kubernetes.io/zone"


def node(name: str, pool: str, cpu: str, zone: str = "zone-a") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone, "pool": pool}},
            "status": {"capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod(name: str, pool: str, cpu: str, *, labels: dict[str, str] | None = None, node_name: str | None = None,
        priority_class: str | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "cap", "labels": labels or {"app": pool}},
            "spec": {"schedulerName": SCHEDULER, "nodeSelector": {"pool": pool},
                     **({"nodeName": node_name} if node_name else {}),
                     **({"priorityClassName": priority_class} if priority_class else {}),
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with running_operator(tmp_path_factory.mktemp("capacity"), gpus_per_node=2) as e:
        api = e.api
        for obj in ({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"},
                     "spec": {"schedulerName": SCHEDULER}},):
            assert api("POST", f"/apis/{API_VERSION}/schedulingprofiles", obj)[0] == 201
        assert api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "cap"}})[0] == 201
        for name, value in (("low", 10), ("mid", 50), ("high", 100)):
            assert api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value})[0] == 201
        e.wait(lambda: accepted(e, "live"), message="profile accepted")
        yield e


def create(env: Env, *objs: dict[str, Any]) -> None:
    for obj in objs:
        path = {"Node": "/api/v1/nodes", "Pod": "/api/v1/namespaces/cap/pods"}[obj["kind"]]
        status, body = env.api("POST", path, obj)
        assert status == 201, body


def capacity(env: Env, tmp_path: Path, manifest: dict[str, Any], *args: str) -> Any:
    path = tmp_path / f"{manifest['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(manifest))
    result = CliRunner().invoke(main, ["capacity", "-f", str(path), "--kubeconfig", str(env.cluster.kubeconfig),
                                       "--output", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def settled(env: Env, name: str) -> tuple[str, str] | None:
    """("bound", node), ("pending", message) once the scheduler gave up on it (a FitError with
    no nomination, not waiting for a controller), else None."""
    status, p = env.api("GET", f"/api/v1/namespaces/cap/pods/{name}")
    assert status == 200, p
    if (p.get("spec") or {}).get("nodeName"):
        return "bound", p["spec"]["nodeName"]
    for c in (p.get("status") or {}).get("conditions") or []:
        # "waiting for ephemeral volume controller to create the persistentvolumeclaim": a first
        # attempt before a controller's object exists, retried when it does.
        if c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable" \
                and not (p.get("status") or {}).get("nominatedNodeName") and "waiting for" not in c.get("message", ""):
            return "pending", str(c.get("message"))
    return None


def brute_force(env: Env, manifest: dict[str, Any], limit: int) -> tuple[Counter[str], str]:
    """Create replicas of ``manifest`` one by one, each after the last settled, until one stays
    pending: the nodes they were bound to, and the pending one's message."""
    per_node: Counter[str] = Counter()
    base = manifest["metadata"]["name"]
    for i in range(limit):
        name = f"{base}-bf-{i}"
        create(env, {**manifest, "metadata": {**manifest["metadata"], "name": name}})
        verdict, where = env.wait(lambda name=name: settled(env, name), timeout=60, message=f"{name} settled")
        if verdict == "pending":
            return per_node, where
        per_node[where] += 1
    raise AssertionError(f"more than {limit} replicas of {base} fit")


def check_against_brute_force(env: Env, tmp_path: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    answer = capacity(env, tmp_path, manifest)
    assert answer["firstUnfit"] is not None, answer
    per_node, message = brute_force(env, manifest, answer["fits"] + 3)
    assert answer["fits"] == sum(per_node.values()), (answer, per_node, message)
    assert answer["perNode"] == dict(per_node), (answer, per_node)
    # The live scheduler's FitError for the first replica that stays pending, word for word.
    assert message.startswith(answer["firstUnfit"].rstrip(".")), (message, answer["firstUnfit"])
    return answer


def test_resources_only(env: Env, tmp_path: Path) -> None:
    create(env, node("r1", "res", "4"), node("r2", "res", "2500m"), node("r3", "res", "1"),
           pod("res-resident", "res", "1500m", node_name="r1"))
    answer = check_against_brute_force(env, tmp_path, pod("res", "res", "1"))
    assert answer["perNode"] == {"r1": 2, "r2": 2, "r3": 1}, answer
    assert "Insufficient cpu" in answer["firstUnfit"]


def test_hostname_anti_affinity(env: Env, tmp_path: Path) -> None:
    create(env, *(node(f"aa{i}", "aa", "8") for i in range(3)))
    term = {"labelSelector": {"matchLabels": {"app": "aa"}}, "topologyKey": "kubernetes.io/hostname"}
    answer = check_against_brute_force(env, tmp_path, pod("aa", "aa", "100m", affinity={
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}))
    assert answer["perNode"] == {"aa0": 1, "aa1": 1, "aa2": 1}
    assert "didn't match pod anti-affinity rules" in answer["firstUnfit"]


def test_topology_spread(env: Env, tmp_path: Path) -> None:
    """Zone b has room for 2: with maxSkew 1, zone a takes 3 and then no zone may take more."""
    create(env, node("ts-a", "ts", "5", zone="zone-a"), node("ts-b", "ts", "2", zone="zone-b"))
    answer = check_against_brute_force(env, tmp_path, pod("ts", "ts", "1", topologySpreadConstraints=[
        {"maxSkew": 1, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
         "labelSelector": {"matchLabels": {"app": "ts"}}}]))
    assert answer["perNode"] == {"ts-a": 3, "ts-b": 2}
    assert "didn't match pod topology spread constraints" in answer["firstUnfit"]


def test_host_ports(env: Env, tmp_path: Path) -> None:
    port = {"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}
    taken = pod("hp-taken", "hp", "100m", node_name="hp0", labels={"app": "other"})
    taken["spec"]["containers"][0]["ports"] = [port]
    create(env, *(node(f"hp{i}", "hp", "8") for i in range(3)), taken)
    manifest = pod("hp", "hp", "100m")
    manifest["spec"]["containers"][0]["ports"] = [port]
    answer = check_against_brute_force(env, tmp_path, manifest)
    assert answer["perNode"] == {"hp1": 1, "hp2": 1}
    assert "didn't have free ports for the requested pod ports" in answer["firstUnfit"]


def test_preemption_counts_victims_by_priority_and_a_dump_gives_the_same(env: Env, tmp_path: Path) -> None:
    """pm0 holds two low and one mid pod (2 CPUs each, full); pm1 has 2 CPUs free. Without
    preemption 2 replicas fit; with it the low pods go first (one at a time, as each replica
    needs), then the mid one: 8 in all. The dump of this cluster answers the same in memory.
    Then the live operator, given the replicas one by one, preempts exactly so."""
    create(env, node("pm0", "pm", "6"), node("pm1", "pm", "2"),
           pod("pm-low-1", "pm", "2", node_name="pm0", priority_class="low", labels={"app": "v"}),
           pod("pm-low-2", "pm", "2", node_name="pm0", priority_class="low", labels={"app": "v"}),
           pod("pm-mid", "pm", "2", node_name="pm0", priority_class="mid", labels={"app": "v"}))
    manifest = pod("pm", "pm", "1", priority_class="high")
    answer = capacity(env, tmp_path, manifest)
    assert answer["fits"] == 2 and answer["perNode"] == {"pm1": 2}, answer
    assert answer["withPreemption"] == {"fits": 8, "perNode": {"pm0": 6, "pm1": 2},
                                        "victims": {"50": 1, "10": 2}}, answer
    assert answer["firstUnfit"].startswith("0/"), answer
    dumped = tmp_path / "cluster.yaml"
    result = CliRunner().invoke(main, ["dump", "--kubeconfig", str(env.cluster.kubeconfig), "-o", str(dumped)])
    assert result.exit_code == 0, result.output
    result = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "pm.yaml"), "--from", str(dumped),
                                       "--output", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == answer
    per_node, message = brute_force(env, manifest, 12)
    assert dict(per_node) == answer["withPreemption"]["perNode"], per_node
    assert "preemption:" in message, message
    # The third replica was the first not to fit: the live scheduler's FailedScheduling event for it
    # (before it preempted) says what firstUnfit says.
    status, events = env.api("GET", "/api/v1/namespaces/cap/events")
    assert status == 200
    failed = [e["message"] for e in events["items"]
              if e["involvedObject"]["name"] == "pm-bf-2" and e["reason"] == "FailedScheduling"]
    assert failed and failed[0].startswith(answer["firstUnfit"].rstrip(".")), (failed, answer["firstUnfit"])
    status, left = env.api("GET", "/api/v1/namespaces/cap/pods", params={"labelSelector": "app=v"})
    assert status == 200 and [p for p in left["items"] if not p["metadata"].get("deletionTimestamp")] == [], left


def test_max_stops_the_count_and_the_json_shape(env: Env, tmp_path: Path) -> None:
    create(env, node("mx0", "mx", "64"))
    answer = capacity(env, tmp_path, pod("mx", "mx", "100m"), "--max", "5")
    assert set(answer) >= {"fits", "perNode", "withPreemption", "firstUnfit"}
    assert answer["fits"] == 5 and isinstance(answer["fits"], int) and answer["perNode"] == {"mx0": 5}
    assert answer["withPreemption"] == {"fits": 5, "perNode": {"mx0": 5}, "victims": {}}
    assert answer["firstUnfit"] is None and "note" not in answer
    # Nothing was created: capacity only reads.
    status, pods = env.api("GET", "/api/v1/namespaces/cap/pods", params={"fieldSelector": "spec.nodeName=mx0"})
    assert status == 200 and pods["items"] == []
    text = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "mx.yaml"), "--kubeconfig",
                                     str(env.cluster.kubeconfig), "--max", "5"])
    assert text.exit_code == 0, text.output
    assert "fits now: 5 more replica(s)  (mx0 5)" in text.output and "stopped at --max 5" in text.output


def test_a_pod_in_a_scheduling_group_is_counted_pod_by_pod_and_says_so(tmp_path: Path) -> None:
    dump = tmp_path / "cluster.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"}, "spec": {"schedulerName": SCHEDULER}},
        node("g0", "g", "2")]}))
    manifest = pod("g", "g", "1", schedulingGroup={"podGroupName": "trainers"})
    (tmp_path / "g.yaml").write_text(yaml.safe_dump(manifest))
    result = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "g.yaml"), "--from", str(dump),
                                       "--output", "json"])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    assert out["fits"] == 2 and "not scheduled as gangs" in out["note"], out
    text = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "g.yaml"), "--from", str(dump)])
    assert "note: the pod names spec.schedulingGroup" in text.output, text.output


def test_bad_input_is_one_clear_error(env: Env, tmp_path: Path) -> None:
    (tmp_path / "svc.yaml").write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Service",
                                                       "metadata": {"name": "s"}}))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pod("p", "res", "1")))
    (tmp_path / "pinned.yaml").write_text(yaml.safe_dump(pod("p", "res", "1", node_name="r1")))
    (tmp_path / "gated.yaml").write_text(yaml.safe_dump(pod("p", "res", "1", schedulingGates=[{"name": "wait"}])))
    kube = ["--kubeconfig", str(env.cluster.kubeconfig)]
    for args, message in (
            (["-f", str(tmp_path / "missing.yaml"), *kube], "missing.yaml"),
            (["-f", str(tmp_path / "svc.yaml"), *kube], "expected a Pod, got a Service"),
            (["-f", str(tmp_path / "p.yaml"), "--profile", "nobody", *kube],
             "no accepted SchedulingProfile is named or serves 'nobody'"),
            (["-f", str(tmp_path / "pinned.yaml"), *kube], "the pod names spec.nodeName, so no scheduler places it"),
            (["-f", str(tmp_path / "gated.yaml"), *kube], "the pod has spec.schedulingGates"),
            (["-f", str(tmp_path / "p.yaml"), "--max", "0", *kube], "--max"),
            (["-f", str(tmp_path / "p.yaml"), "--from", str(tmp_path / "p.yaml"), *kube], "not both")):
        t0 = time.monotonic()
        result = CliRunner().invoke(main, ["capacity", *args])
        assert result.exit_code != 0 and message in result.output, (args, result.output)
        assert isinstance(result.exception, SystemExit) and "Traceback" not in result.output, result.output
        assert time.monotonic() - t0 < 30


def test_a_claim_from_a_template_per_replica(env: Env, tmp_path: Path) -> None:
    """Each replica gets a claim of its own from the template, as the resourceclaim controller
    makes one per pod: one GPU each, two GPUs a node, two nodes: four replicas."""
    create(env, node("gpu0", "gpu", "8"), node("gpu1", "gpu", "8"))
    status, body = env.api("POST", "/apis/resource.k8s.io/v1/namespaces/cap/resourceclaimtemplates", {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "one-gpu"},
        "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
            "deviceClassName": GPU_DRIVER, "count": 1}}]}}}})
    assert status == 201, body
    manifest = pod("gpu", "gpu", "100m", resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}])
    manifest["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu"}]
    answer = check_against_brute_force(env, tmp_path, manifest)
    assert answer["perNode"] == {"gpu0": 2, "gpu1": 2}, answer
    assert "cannot allocate all claims" in answer["firstUnfit"], answer


def test_an_ephemeral_volume_per_replica(env: Env, tmp_path: Path) -> None:
    """Each replica's generic ephemeral volume is a claim of its own, and each needs one of the
    three local volumes (two on ev0, one on ev1): three replicas, each one's volume assumed
    bound before the next is placed."""
    create(env, node("ev0", "ev", "8"), node("ev1", "ev", "8"))
    sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "ev-local"},
          "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"}
    assert env.api("POST", "/apis/storage.k8s.io/v1/storageclasses", sc)[0] == 201
    for i, where in enumerate(("ev0", "ev0", "ev1")):
        status, body = env.api("POST", "/api/v1/persistentvolumes", {
            "apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": f"ev-disk-{i}"},
            "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                     "storageClassName": "ev-local", "persistentVolumeReclaimPolicy": "Retain",
                     "local": {"path": f"/mnt/{i}"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
                         {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                "values": [where]}]}]}}}})
        assert status == 201, body
    manifest = pod("ev", "ev", "100m", volumes=[{"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
        "spec": {"storageClassName": "ev-local", "accessModes": ["ReadWriteOnce"],
                 "resources": {"requests": {"storage": "1Gi"}}}}}}])
    answer = check_against_brute_force(env, tmp_path, manifest)
    assert answer["perNode"] == {"ev0": 2, "ev1": 1}, answer
    assert "didn't find available persistent volumes to bind" in answer["firstUnfit"], answer


def test_profile_counts_with_another_profile_and_refuses_a_shadow(tmp_path: Path) -> None:
    """``--profile`` (a CR name or a schedulerName) places with that profile's plugins: the
    packing one puts both replicas on the fuller node, the pod's own spreads them. A shadow
    never schedules: it is refused, with the profile to ask instead."""
    packing = {"NodeResourcesFit": {"scoringStrategy": {"type": "MostAllocated"}}}
    dump = tmp_path / "cluster.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"}, "spec": {"schedulerName": SCHEDULER}},
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "packing"}, "spec": {
            "schedulerName": "bin-packing", "pluginConfig": [{"name": n, "args": a} for n, a in packing.items()]}},
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "try-packing"}, "spec": {
            "schedulerName": SCHEDULER, "shadowOf": SCHEDULER,
            "pluginConfig": [{"name": n, "args": a} for n, a in packing.items()]}},
        node("p0", "p", "8"), node("p1", "p", "8"),
        {**pod("resident", "p", "4", node_name="p1"), "status": {"phase": "Running"}}]}))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(pod("p", "p", "1")))

    def run(*args: str) -> Any:
        result = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "p.yaml"), "--from", str(dump),
                                           "--max", "2", *args])
        return result
    for args, profile, per_node in (((), SCHEDULER, {"p0": 2}), (("--profile", "packing"), "bin-packing", {"p1": 2}),
                                    (("--profile", "bin-packing"), "bin-packing", {"p1": 2})):
        result = run(*args, "--output", "json")
        assert result.exit_code == 0, result.output
        out = json.loads(result.stdout)
        assert out["profile"] == profile and out["perNode"] == per_node, (args, out)
    result = run("--profile", "try-packing")
    assert result.exit_code == 1 and "a shadow profile never schedules" in result.output, result.output
    assert f"ask its live profile ({SCHEDULER})" in result.output


def test_text_names_the_busiest_nodes_in_natural_order(tmp_path: Path) -> None:
    """Twelve nodes, one replica each: the text names ten, n2 before n10, and points to the JSON."""
    dump = tmp_path / "cluster.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"}, "spec": {"schedulerName": SCHEDULER}},
        *(node(f"n{i}", "t", "1") for i in range(12))]}))
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(pod("t", "t", "1")))
    result = CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "t.yaml"), "--from", str(dump)])
    assert result.exit_code == 0, result.output
    assert "fits now: 12 more replica(s)  (n0 1, n1 1, n2 1, n3 1, n4 1, n5 1, n6 1, n7 1, n8 1, n9 1, " \
           "and 2 more nodes: --output json lists them all)" in result.output, result.output
    out = json.loads(CliRunner().invoke(main, ["capacity", "-f", str(tmp_path / "t.yaml"), "--from", str(dump),
                                               "--output", "json"]).stdout)
    assert list(out["perNode"]) == [f"n{i}" for i in range(12)], out
