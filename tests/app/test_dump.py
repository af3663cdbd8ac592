"""``kopf-scheduler dump`` (issue #17): a cluster as one List, ``--minimal`` and ``--anonymize``,
kinds the server does not serve, and the round trip ``dump`` → ``simulate -f`` on the simulated
cluster itself; and a KWOK snapshot (``kwokctl snapshot export``'s shape) replayed by ``simulate``."""

from __future__ import annotations

import asyncio
import copy
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.app.dump import Anonymizer, dump_cluster, strip
from scheduler.app.simulate import SimulationReport, load_objects, replay, run_simulation
from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.model.nodefeatures import required_features
from scheduler.profiles.crd import crd
from scheduler.simulator import SimulatedCluster

Obj = dict[str, Any]
EXPLAIN = "scheduling.kopf-scheduler.io/explain"


def _node(name: str, cpu: str = "4", taints: list[Obj] | None = None, **labels: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {
        "kubernetes.io/hostname": name, "topology.kubernetes.io/zone": "z1", **labels}},
        "spec": {"taints": taints or []}, "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


def _pod(name: str, ns: str = "shop", cpu: str = "500m", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": ns, "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "env": [{"name": "SECRET", "value": "s3cr3t"}],
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


async def populate(api: KubeClient) -> None:
    """A small cluster: a labelled namespace, a tainted node, a PriorityClass, bound, pending and
    terminal pods, a mirror pod owned by its node, a PDB, a Service, a SchedulingProfile, and storage: a
    default StorageClass, a CSIDriver and a CSINode, and a claim that web-0 mounts, bound (by the PV
    controller, Immediate) to a static volume; and DRA: a DeviceClass, a one-GPU slice on n1, a
    ResourceClaimTemplate, and a pending pod with the claim the cluster's controller made from it."""
    await api.create(crd())
    await api.create({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                      "metadata": {"name": "default-scheduler"},
                      "spec": {"schedulerName": "default-scheduler", "percentageOfNodesToScore": 100}})
    await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop", "labels": {"team": "a"}}})
    await api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
                      "value": 1000})
    n1 = await api.create(_node("n1"))
    await api.create(_node("n2", taints=[{"key": "dedicated", "value": "x", "effect": "NoSchedule"}], disk="ssd"))
    web0 = _pod("web-0", nodeName="n1", volumes=[{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}])
    web0["metadata"]["annotations"] = {EXPLAIN: "true", "team.example.com/owner": "alice"}
    await api.create(web0)
    await api.create(_pod("web-1", nodeName="n2", tolerations=[{"key": "dedicated", "operator": "Exists"}]))
    await api.create(_pod("job-done", cpu="4", nodeName="n1"))
    await api.patch("v1", "Pod", "job-done", {"status": {"phase": "Succeeded"}}, "shop", sub="status")
    await api.create(_pod("pending-0", cpu="1", priorityClassName="high"))
    mirror = _pod("etcd-n1", ns="kube-system", nodeName="n1")
    mirror["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Node", "name": "n1",
                                              "uid": n1["metadata"]["uid"], "controller": True}]
    await api.create(mirror)
    await api.create({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "web",
                      "namespace": "shop"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}})
    await api.create({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "shop"},
                      "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    await api.create({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {
        "name": "standard", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
        "provisioner": "kubernetes.io/no-provisioner"})
    await api.create({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "ebs.csi.aws.com"},
                      "spec": {}})
    await api.create({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
                      "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-0abc",
                                            "allocatable": {"count": 25}}]}})
    await api.create({"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
                      "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"],
                               "storageClassName": "standard", "hostPath": {"path": "/data/pv-1"}}})
    await api.create({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data",
                      "namespace": "shop"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                                     "resources": {"requests": {"storage": "1Gi"}}}})
    for _ in range(100):                     # the PV controller binds the claim (the default class's)
        claim = await api.get("v1", "PersistentVolumeClaim", "data", "shop")
        if (claim.get("status") or {}).get("phase") == "Bound":
            break
        await asyncio.sleep(0.05)
    assert claim["spec"]["volumeName"] == "pv-1" and claim["spec"]["storageClassName"] == "standard"
    # DRA: a DeviceClass, n1's one-GPU slice, a template, and a pending pod whose claim the cluster's
    # resourceclaim controller makes from it.
    await api.create({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
                      "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}})
    await api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
                      "spec": {"driver": "gpu.example.com", "nodeName": "n1", "devices": [{"name": "gpu-0"}],
                               "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}}})
    await api.create({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                      "metadata": {"name": "one-gpu", "namespace": "shop"},
                      "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {
                          "deviceClassName": "gpu.example.com"}}]}}}})
    trainer = _pod("trainer", cpu="100m")
    trainer["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
    await api.create(trainer)
    for _ in range(100):
        got = await api.get("v1", "Pod", "trainer", "shop")
        if (got.get("status") or {}).get("resourceClaimStatuses"):
            break
        await asyncio.sleep(0.05)
    assert got["status"]["resourceClaimStatuses"][0]["name"] == "gpu"


_TIME = re.compile(r"(Time|Timestamp)$")


def normal(items: list[Obj]) -> dict[tuple[str, str, str], Obj]:
    """Objects by (kind, namespace, name), without what differs between two clusters by nature:
    uids (also in ownerReferences), timestamps, and the port each one's API server serves on (the
    ``targetPort`` of its own ``default/kubernetes`` Service)."""
    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items() if k != "uid" and not _TIME.search(k)}
        if isinstance(v, list):
            return [clean(x) for x in v]
        return v
    out = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): clean(o) for o in items}
    for port in (out.get(("Service", "default", "kubernetes")) or {}).get("spec", {}).get("ports") or []:
        port.pop("targetPort", None)
    return out


def test_minimal_dump_replays_to_the_same_scheduling_content() -> None:
    async def go() -> None:
        async with SimulatedCluster() as a, SimulatedCluster() as b:
            await populate(a.client)
            first = await dump_cluster(a.client, minimal=True)
            assert not any("managedFields" in o["metadata"] for o in first.items)
            await b.client.create(crd())          # what a simulate run creates before it replays
            report = SimulationReport()
            replayed = replay(b, first.items, report)
            assert report.rejected == []
            assert replayed.terminal == {("shop", "job-done")} and replayed.nodes == 2
            second = await dump_cluster(b.client, minimal=True)
            one, two = normal(first.items), normal(second.items)
            assert set(one) == set(two)
            assert one == two
            pods = {k[2]: o for k, o in two.items() if k[0] == "Pod"}
            assert pods["job-done"]["status"]["phase"] == "Succeeded"
            assert pods["web-0"]["spec"]["nodeName"] == "n1" and pods["web-1"]["spec"]["nodeName"] == "n2"
            assert "nodeName" not in pods["pending-0"]["spec"]
            # the mirror pod still belongs to its node, under the new node's uid
            (ref,) = pods["etcd-n1"]["metadata"]["ownerReferences"]
            node_b = await b.client.get("v1", "Node", "n1")
            raw = await b.client.get("v1", "Pod", "etcd-n1", "kube-system")
            assert ref["name"] == "n1" and raw["metadata"]["ownerReferences"][0]["uid"] == node_b["metadata"]["uid"]
    asyncio.run(go())


def test_minimal_strips_to_what_scheduling_reads() -> None:
    pod = _pod("p")
    pod["metadata"].update({"annotations": {EXPLAIN: "true", "kubectl.kubernetes.io/last-applied-configuration": "{}"},
                            "managedFields": [{"manager": "kubectl"}], "resourceVersion": "7", "uid": "u1",
                            "creationTimestamp": "2026-01-01T00:00:00Z"})
    pod["spec"].update({"serviceAccountName": "default", "volumes": [
        {"name": "token", "projected": {"sources": []}}, {"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]})
    pod["spec"]["containers"][0].update({"command": ["sh"], "ports": [{"containerPort": 80, "hostPort": 8080}]})
    pod["status"] = {"phase": "Running", "podIP": "10.0.0.1", "nominatedNodeName": "n9",
                     "conditions": [{"type": "PodScheduled", "status": "True"}], "containerStatuses": [{"name": "c"}]}
    out = strip(pod)
    assert out["metadata"] == {"name": "p", "namespace": "shop", "uid": "u1", "labels": {"app": "web"},
                               "annotations": {EXPLAIN: "true"}}
    (c,) = out["spec"]["containers"]
    assert c == {"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "500m"}},
                 "ports": [{"containerPort": 80, "hostPort": 8080}]}
    assert out["spec"]["volumes"] == [{"name": "data", "persistentVolumeClaim": {"claimName": "d"}}]
    assert "serviceAccountName" not in out["spec"]
    assert out["status"] == {"phase": "Running", "nominatedNodeName": "n9",
                             "conditions": [{"type": "PodScheduled", "status": "True"}]}
    node = _node("n1")
    node["status"].update({"addresses": [{"type": "InternalIP", "address": "10.1.1.1"}], "nodeInfo": {"x": "y"},
                           "conditions": [{"type": "Ready", "status": "True"}]})
    node["spec"]["providerID"] = "aws:///i-123"
    out = strip(node)
    assert set(out["status"]) == {"capacity", "conditions"} and out["spec"] == {"taints": []}
    assert pod["metadata"]["managedFields"]                  # the input is not changed


def test_minimal_keeps_what_node_declared_features_reads() -> None:
    """A node's status.declaredFeatures, and the pod fields a required feature is inferred from
    (restart rules, securityContext.ulimits, a downward API assigned.cpuset volume)."""
    pod = _pod("p")
    c = pod["spec"]["containers"][0]
    c.update({"restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In",
                                                                                     "values": [1]}}],
              "securityContext": {"ulimits": {"nofile": {"soft": 1, "hard": 2}}, "privileged": True}})
    cpuset = {"name": "cpuset", "downwardAPI": {"items": [{"path": "c", "resourceFieldRef": {
        "containerName": "c", "resource": "assigned.cpuset"}}]}}
    pod["spec"]["volumes"] = [cpuset, {"name": "labels", "downwardAPI": {"items": [
        {"path": "l", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]
    out = strip(pod)
    (kept,) = out["spec"]["containers"]
    assert kept["restartPolicyRules"] == c["restartPolicyRules"]
    assert kept["securityContext"] == {"ulimits": {"nofile": {"soft": 1, "hard": 2}}}
    assert out["spec"]["volumes"] == [cpuset]
    assert required_features(out["spec"]) == required_features(pod["spec"]) == {
        "RestartAllContainersOnContainerExits", "ContainerUlimits", "DownwardAPIAssignedResources"}
    node = _node("n1")
    node["status"]["declaredFeatures"] = ["GuaranteedQoSPodCPUResize"]
    assert strip(node)["status"]["declaredFeatures"] == ["GuaranteedQoSPodCPUResize"]


def _walk(v: Any) -> Iterator[str]:
    if isinstance(v, dict):
        for k, x in v.items():
            yield str(k)
            yield from _walk(x)
    elif isinstance(v, list):
        for x in v:
            yield from _walk(x)
    elif isinstance(v, str):
        yield v


def test_anonymize_renames_consistently_and_still_replays() -> None:
    async def go() -> None:
        async with SimulatedCluster() as a, SimulatedCluster() as b:
            await populate(a.client)
            result = await dump_cluster(a.client, minimal=True, anonymize=True)
            strings = set(_walk(result.items))
            for secret in ("shop", "web-0", "web-1", "job-done", "pending-0", "etcd-n1", "n1", "n2", "high",
                           "nginx:1.27"):
                assert secret not in strings, secret
            by_kind: dict[str, list[Obj]] = {}
            for o in result.items:
                by_kind.setdefault(o["kind"], []).append(o)
            nodes = {n["metadata"]["name"] for n in by_kind["Node"]}
            assert nodes == {"node-0", "node-1"}
            for n in by_kind["Node"]:
                assert n["metadata"]["labels"]["kubernetes.io/hostname"] == n["metadata"]["name"]
            pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in by_kind["Pod"]}
            assert {p["spec"].get("nodeName") for p in pods.values()} - {None} <= nodes
            mirror = next(p for p in pods.values() if p["metadata"]["namespace"] == "kube-system")
            assert mirror["metadata"]["ownerReferences"][0]["name"] == mirror["spec"]["nodeName"]
            ns = {p["metadata"]["namespace"] for p in pods.values()} - {"kube-system"}
            assert ns == {"ns-0"}
            namespace = next(n for n in by_kind["Namespace"] if n["metadata"]["name"] == "ns-0")
            assert namespace["metadata"]["labels"]["kubernetes.io/metadata.name"] == "ns-0"
            pcs = {p["metadata"]["name"] for p in by_kind["PriorityClass"]}
            assert {p["spec"].get("priorityClassName") for p in pods.values()} - {None} <= pcs
            assert {p["spec"]["containers"][0]["image"] for p in pods.values()} == {"image-0"}
            # the anonymized dump replays, bound pods on the same (renamed) nodes
            await b.client.create(crd())
            report = SimulationReport()
            replay(b, result.items, report)
            assert report.rejected == []
            again = await dump_cluster(b.client, minimal=True)
            placed = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"].get("nodeName")
                      for p in again.items if p["kind"] == "Pod"}
            assert placed == {(p["metadata"]["namespace"], p["metadata"]["name"]): p["spec"].get("nodeName")
                              for p in pods.values()}
    asyncio.run(go())


def test_kinds_the_server_does_not_serve_are_skipped_with_a_note() -> None:
    async def go() -> None:
        async with SimulatedCluster() as a:
            await a.client.create(_node("n1"))
            result = await dump_cluster(a.client, kinds=[("example.com/v1", "Widget"), ("v1", "Node")])
            assert [o["metadata"]["name"] for o in result.items] == ["n1"]
            assert result.items[0]["apiVersion"] == "v1" and result.items[0]["kind"] == "Node"
            assert len(result.notes) == 1 and "Widget" in result.notes[0] and "skipped" in result.notes[0]
    asyncio.run(go())


@pytest.fixture
def live() -> Iterator[SimulatedCluster]:
    c = SimulatedCluster()
    c.start()
    try:
        async def fill() -> None:
            api = KubeClient(KubeConfig(c.url, token=c.token, ssl_context=c.tls.client_context()))
            try:
                await populate(api)
            finally:
                await api.close()
        asyncio.run(fill())
        yield c
    finally:
        c.stop()


def test_cli_dump_then_simulate_round_trip(live: SimulatedCluster, tmp_path: Path) -> None:
    out = tmp_path / "dump.yaml"
    result = CliRunner().invoke(main, ["dump", "--kubeconfig", str(live.kubeconfig), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "skipped" not in result.stderr            # every kind is served, the storage kinds too
    doc = yaml.safe_load(out.read_text())
    assert doc["kind"] == "List" and all("apiVersion" in o and "kind" in o for o in doc["items"])
    full = {(o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in doc["items"]}
    assert {("Node", "", "n1"), ("Pod", "shop", "job-done"), ("PriorityClass", "", "high"),
            ("PodDisruptionBudget", "shop", "web"), ("Service", "shop", "web"),
            ("SchedulingProfile", "", "default-scheduler"), ("StorageClass", "", "standard"),
            ("CSIDriver", "", "ebs.csi.aws.com"), ("CSINode", "", "n1"), ("PersistentVolume", "", "pv-1"),
            ("PersistentVolumeClaim", "shop", "data"), ("DeviceClass", "", "gpu.example.com"),
            ("ResourceSlice", "", "n1-gpus"), ("ResourceClaimTemplate", "shop", "one-gpu")} <= full
    assert [o["kind"] for o in doc["items"] if o["kind"] == "ResourceClaim"] == ["ResourceClaim"]
    minimal = CliRunner().invoke(main, ["dump", "--kubeconfig", str(live.kubeconfig), "--minimal"])
    assert minimal.exit_code == 0, minimal.output
    assert "managedFields" in out.read_text() and "managedFields" not in minimal.stdout
    for source in (str(out), "-"):
        sim = CliRunner().invoke(main, ["simulate", "-f", source, "--output", "json", "--timeout", "60"],
                                 input=minimal.stdout)
        assert sim.exit_code == 0, sim.output
        report = json.loads(sim.stdout)
        assert report["rejected"] == []
        assert report["terminal"] == [{"namespace": "shop", "name": "job-done", "phase": "Succeeded", "node": "n1"}]
        placed = {f"{p['namespace']}/{p['name']}": p["node"] for p in report["pods"]}
        assert placed == {"kube-system/etcd-n1": "n1", "shop/web-0": "n1", "shop/web-1": "n2",
                          "shop/pending-0": "n1", "shop/trainer": "n1"}  # n2 is tainted; job-done holds no cpu
        devices = {f"{p['namespace']}/{p['name']}": p.get("devices") for p in report["pods"]}
        # the dumped claim (kept, with the pod's claim status), allocated on replay: not a second one
        assert devices["shop/trainer"] == [{"claim": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                            "device": "gpu-0"}]
        volumes = {f"{p['namespace']}/{p['name']}": p["volumes"] for p in report["pods"]}
        assert volumes["shop/web-0"] == [{"claim": "data", "volume": "pv-1"}] and volumes["shop/web-1"] == []
        assert report["summary"]["terminal"] == 1 and report["summary"]["pods"] == 5


# ---- a KWOK snapshot ------------------------------------------------------------------------------

def kwok_snapshot() -> str:
    """``kwokctl snapshot export``'s shape: YAML documents, one object each with apiVersion and kind,
    in the export's resource order (namespace, node, ..., replicaset, job, pod), uids and status
    kept, ownerReferences by uid; KWOK's nodes carry its annotations, labels and taint, and their
    full status."""
    kwok_node = {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "kwok-node-0", "uid": "7e1f0c55-1111-4c5e-9d0a-000000000001",
                     "resourceVersion": "1501", "creationTimestamp": "2026-11-30T10:00:00Z",
                     "annotations": {"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
                     "labels": {"beta.kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux",
                                "kubernetes.io/arch": "amd64", "kubernetes.io/hostname": "kwok-node-0",
                                "kubernetes.io/os": "linux", "kubernetes.io/role": "agent",
                                "node-role.kubernetes.io/agent": "", "type": "kwok"}},
        "spec": {"taints": [{"key": "kwok.x-k8s.io/node", "value": "fake", "effect": "NoSchedule"}]},
        "status": {
            "allocatable": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "capacity": {"cpu": "32", "memory": "256Gi", "pods": "110"},
            "conditions": [{"type": t, "status": s, "reason": r, "message": m,
                            "lastHeartbeatTime": "2026-11-30T10:05:00Z", "lastTransitionTime": "2026-11-30T10:00:00Z"}
                           for t, s, r, m in (("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
                                              ("MemoryPressure", "False", "KubeletHasSufficientMemory", "ok"),
                                              ("DiskPressure", "False", "KubeletHasNoDiskPressure", "ok"),
                                              ("PIDPressure", "False", "KubeletHasSufficientPID", "ok"),
                                              ("NetworkUnavailable", "False", "RouteCreated", "ok"))],
            "addresses": [{"type": "InternalIP", "address": "10.0.0.1"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10247}},
            "nodeInfo": {"architecture": "amd64", "bootID": "", "containerRuntimeVersion": "kwok-v0.6.0",
                         "kernelVersion": "", "kubeProxyVersion": "fake", "kubeletVersion": "fake",
                         "machineID": "", "operatingSystem": "linux", "osImage": "", "systemUUID": ""},
            "phase": "Running"}}
    node1 = copy.deepcopy(kwok_node)
    node1["metadata"].update({"name": "kwok-node-1", "uid": "7e1f0c55-1111-4c5e-9d0a-000000000002"})
    node1["metadata"]["labels"]["kubernetes.io/hostname"] = "kwok-node-1"
    tolerate = [{"key": "kwok.x-k8s.io/node", "operator": "Exists", "effect": "NoSchedule"}]
    rs_uid, job_uid = "3c1d2a3b-2222-4a1b-8c9d-000000000010", "3c1d2a3b-2222-4a1b-8c9d-000000000020"
    template = {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                                         "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}],
                         "tolerations": tolerate}}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
          "metadata": {"name": "web", "namespace": "demo", "uid": rs_uid, "resourceVersion": "1600", "generation": 1},
          "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": template},
          "status": {"replicas": 2, "readyReplicas": 2, "availableReplicas": 2, "observedGeneration": 1}}
    job = {"apiVersion": "batch/v1", "kind": "Job",
           "metadata": {"name": "batch", "namespace": "demo", "uid": job_uid, "resourceVersion": "1700",
                        "labels": {"batch.kubernetes.io/job-name": "batch"}},
           "spec": {"completions": 1, "parallelism": 1, "manualSelector": True, "backoffLimit": 6,
                    "selector": {"matchLabels": {"batch.kubernetes.io/job-name": "batch"}},
                    "template": {"metadata": {"labels": {"batch.kubernetes.io/job-name": "batch"}},
                                 "spec": {"restartPolicy": "Never", "tolerations": tolerate, "containers": [
                                     {"name": "run", "image": "busybox:1.36",
                                      "resources": {"requests": {"cpu": "30"}}}]}}},
           "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}}

    def pod(name: str, node: str | None, phase: str, owner: tuple[str, str, str], cpu: str) -> Obj:
        kind, owner_name, uid = owner
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": name, "namespace": "demo", "uid": f"9a9a9a9a-0000-4000-8000-{abs(hash(name)) % 10**12:012d}",
            "resourceVersion": "1800", "creationTimestamp": "2026-11-30T10:01:00Z",
            "labels": {"app": "web"} if kind == "ReplicaSet" else {"batch.kubernetes.io/job-name": "batch"},
            "ownerReferences": [{"apiVersion": "apps/v1" if kind == "ReplicaSet" else "batch/v1", "kind": kind,
                                 "name": owner_name, "uid": uid, "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": cpu}}}],
                     "restartPolicy": "Never" if kind == "Job" else "Always", "tolerations": tolerate,
                     "schedulerName": "default-scheduler", **({"nodeName": node} if node else {})},
            "status": {"phase": phase, "hostIP": "10.0.0.1", "podIP": "10.0.0.2",
                       "conditions": [{"type": "Ready", "status": "True" if phase == "Running" else "False"}]}}

    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "demo", "uid": "ns-uid-demo",
                                                                "labels": {"kubernetes.io/metadata.name": "demo"}},
         "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
        kwok_node, node1, rs, job,
        pod("web-abcde", "kwok-node-0", "Running", ("ReplicaSet", "web", rs_uid), "1"),
        pod("web-fghij", "kwok-node-1", "Running", ("ReplicaSet", "web", rs_uid), "1"),
        # the Job's pod ran on kwok-node-1 and is done: it must not hold 30 of its 32 CPUs
        pod("batch-x1y2z", "kwok-node-1", "Succeeded", ("Job", "batch", job_uid), "30"),
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big", "namespace": "demo"},
         "spec": {"containers": [{"name": "c", "image": "nginx:1.27", "resources": {"requests": {"cpu": "30"}}}],
                  "tolerations": tolerate, "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                      "nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                                   "values": ["kwok-node-1"]}]}]}}}}},
    ]
    return "".join("---\n" + yaml.safe_dump(d) for d in docs)


def test_simulate_loads_a_kwok_snapshot(tmp_path: Path) -> None:
    d = tmp_path / "snapshot"
    d.mkdir()
    (d / "snapshot.yaml").write_text(kwok_snapshot())
    objects = load_objects([str(d)])
    assert [o["kind"] for o in objects][:5] == ["Namespace", "Node", "Node", "ReplicaSet", "Job"]
    result = CliRunner().invoke(main, ["simulate", "-f", str(d), "--output", "json", "--timeout", "60"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["rejected"] == []
    assert report["terminal"] == [{"namespace": "demo", "name": "batch-x1y2z", "phase": "Succeeded",
                                   "node": "kwok-node-1"}]
    placed = {p["name"]: p["node"] for p in report["pods"] if not p["deleted"]}
    assert placed["web-abcde"] == "kwok-node-0" and placed["web-fghij"] == "kwok-node-1"
    assert placed["big"] == "kwok-node-1"              # fits only because the Job's pod is done
    nodes = {n["name"]: n for n in report["nodes"]}
    assert nodes["kwok-node-1"]["allocatable"]["cpu"] == "32" and nodes["kwok-node-1"]["requested"]["cpu"] == "31000m"


def test_anonymize_keeps_volume_references_consistent() -> None:
    """Kinds the simulated cluster does not serve yet, renamed the same everywhere they are named."""
    host = {"kubernetes.io/hostname": "n1"}
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": dict(host)}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
         "provisioner": "csi.example.com", "allowedTopologies": [{"matchLabelExpressions": [
             {"key": "kubernetes.io/hostname", "values": ["n1"]}]}]},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {
            "name": "n1", "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u"}]},
         "spec": {"drivers": [{"name": "csi.example.com", "nodeID": "i-0abc"}]}},
        {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "cap", "namespace": "shop"},
         "storageClassName": "fast", "nodeTopology": {"matchLabels": dict(host)}, "capacity": "10Gi"},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv-1"},
         "spec": {"storageClassName": "fast", "claimRef": {"namespace": "shop", "name": "data"},
                  "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                      {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "data", "namespace": "shop"},
         "spec": {"storageClassName": "fast", "volumeName": "pv-1"}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "shop"},
         "spec": {"nodeName": "n1", "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}],
                  "containers": [{"name": "c", "image": "postgres:17"}]}},
    ]
    node, sc, csinode, cap, pv, pvc, pod = Anonymizer().apply(objects)
    assert objects[0]["metadata"]["name"] == "n1"                  # the input is not changed
    n = node["metadata"]["name"]
    assert n != "n1" and csinode["metadata"]["name"] == n == pod["spec"]["nodeName"]
    assert csinode["metadata"]["ownerReferences"][0]["name"] == n
    assert csinode["spec"]["drivers"][0]["nodeID"] != "i-0abc"
    assert sc["allowedTopologies"][0]["matchLabelExpressions"][0]["values"] == [n]
    assert cap["nodeTopology"]["matchLabels"]["kubernetes.io/hostname"] == n
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [n]
    s = sc["metadata"]["name"]
    assert s != "fast" and pv["spec"]["storageClassName"] == pvc["spec"]["storageClassName"] \
        == cap["storageClassName"] == s
    assert pvc["spec"]["volumeName"] == pv["metadata"]["name"] != "pv-1"
    assert pv["spec"]["claimRef"] == {"namespace": pvc["metadata"]["namespace"], "name": pvc["metadata"]["name"]}
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == pvc["metadata"]["name"] != "data"
    assert pod["metadata"]["namespace"] == pvc["metadata"]["namespace"] == cap["metadata"]["namespace"] != "shop"


def test_dra_objects_are_stripped_to_their_allocation_and_renamed_consistently() -> None:
    """The DRA kinds: a pod keeps the names of its generated claims, a claim its allocation and
    reservation; the node, the pool named after it, the claim and template names and the reserving
    pod are renamed the same everywhere; the DeviceClass keeps its name."""
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu.example.com"},
         "spec": {"selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu-x7"},
         "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                  "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                  "devices": [{"name": "gpu-0"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one-gpu", "namespace": "ml"},
         "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {
             "deviceClassName": "gpu.example.com"}}]}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "train", "namespace": "ml", "uid": "p1"},
         "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "trainer"}],
                  "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"},
                                     {"name": "shared", "resourceClaimName": "pool-claim"}]},
         "status": {"phase": "Running", "hostIP": "10.0.0.1",
                    "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "train-gpu-abcde"}]}},
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
            "name": "train-gpu-abcde", "namespace": "ml", "annotations": {
                "resource.kubernetes.io/pod-claim-name": "gpu", "other": "x"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "train", "uid": "p1",
                                 "controller": True}]},
         "spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}},
         "status": {"devices": [{"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}],
                    "allocation": {"devices": {"results": [{"request": "g", "driver": "gpu.example.com",
                                                            "pool": "n1", "device": "gpu-0"}]},
                                   "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                       {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
                    "reservedFor": [{"resource": "pods", "name": "train", "uid": "p1"}]}},
    ]
    stripped = [strip(o) for o in objects]
    pod, claim = stripped[4], stripped[5]
    assert pod["status"] == {"phase": "Running", "resourceClaimStatuses": [
        {"name": "gpu", "resourceClaimName": "train-gpu-abcde"}]}
    assert set(claim["status"]) == {"allocation", "reservedFor"}
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    node, cls, slice_, template, pod, claim = Anonymizer().apply(stripped)
    n = node["metadata"]["name"]
    assert n != "n1" and slice_["spec"]["nodeName"] == slice_["spec"]["pool"]["name"] == n
    assert slice_["metadata"]["name"] != "n1-gpu-x7"
    result = claim["status"]["allocation"]["devices"]["results"][0]
    assert result["pool"] == n and result["device"] == "gpu-0"
    assert claim["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0]["values"] == [n]
    assert cls["metadata"]["name"] == "gpu.example.com"
    assert pod["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] == template["metadata"]["name"] != "one-gpu"
    assert pod["spec"]["resourceClaims"][1]["resourceClaimName"] not in ("pool-claim", claim["metadata"]["name"])
    assert pod["status"]["resourceClaimStatuses"][0]["resourceClaimName"] == claim["metadata"]["name"] \
        != "train-gpu-abcde"
    assert claim["status"]["reservedFor"][0]["name"] == pod["metadata"]["name"] != "train"
    assert claim["metadata"]["ownerReferences"][0]["name"] == pod["metadata"]["name"]
    assert claim["metadata"]["namespace"] == pod["metadata"]["namespace"] == template["metadata"]["namespace"] != "ml"


def test_anonymize_renames_labels_that_carry_names_with_their_selectors() -> None:
    job_label = {"batch.kubernetes.io/job-name": "batch"}
    objects = [
        {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch", "namespace": "shop"},
         "spec": {"selector": {"matchLabels": dict(job_label)},
                  "template": {"metadata": {"labels": dict(job_label)}, "spec": {"containers": []}}}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "batch-x", "namespace": "shop", "labels": dict(job_label),
            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "Job", "name": "batch", "uid": "u"}]},
         "spec": {"containers": [], "topologySpreadConstraints": [
             {"maxSkew": 1, "topologyKey": "zone", "labelSelector": {"matchLabels": dict(job_label)}}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db-0", "namespace": "shop", "labels": {
            "statefulset.kubernetes.io/pod-name": "db-0", "app": "db"}}, "spec": {"containers": []}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "b", "namespace": "shop"},
         "spec": {"selector": {"matchExpressions": [{"key": "batch.kubernetes.io/job-name", "operator": "In",
                                                     "values": ["batch"]}]}}},
    ]
    job, pod, db, pdb = Anonymizer().apply(objects)
    j = job["metadata"]["name"]
    assert j != "batch"
    assert job["spec"]["selector"]["matchLabels"] == job["spec"]["template"]["metadata"]["labels"] \
        == pod["metadata"]["labels"] == {"batch.kubernetes.io/job-name": j}
    assert pod["metadata"]["ownerReferences"][0]["name"] == j
    assert pod["spec"]["topologySpreadConstraints"][0]["labelSelector"]["matchLabels"] == {
        "batch.kubernetes.io/job-name": j}
    assert pdb["spec"]["selector"]["matchExpressions"][0]["values"] == [j]
    assert db["metadata"]["labels"] == {"statefulset.kubernetes.io/pod-name": db["metadata"]["name"], "app": "db"}
    assert db["metadata"]["name"] != "db-0"


def test_anonymize_implies_minimal() -> None:
    async def go() -> None:
        async with SimulatedCluster() as a:
            await populate(a.client)
            result = await dump_cluster(a.client, anonymize=True)
            strings = set(_walk(result.items))
            assert "managedFields" not in strings and "s3cr3t" not in strings and "alice" not in strings
    asyncio.run(go())


GANG = "scheduling.k8s.io/v1beta1"


def test_workloads_and_pod_groups_dump_before_their_pods_and_replay() -> None:
    """A cluster serving the GenericWorkload API: its Workload, PodGroup and member pods are dumped in
    load order (the group before the pods naming it), renamed consistently by --anonymize, and
    replayed by ``simulate``, whose cluster then serves the API because the input carries it."""
    async def go() -> None:
        async with SimulatedCluster(feature_gates={"GenericWorkload": True}) as a:
            api = a.client
            await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}})
            await api.create(_node("n1"))
            await api.create({"apiVersion": GANG, "kind": "Workload", "metadata": {"name": "train", "namespace": "ml"},
                              "spec": {"controllerRef": {"apiGroup": "batch", "kind": "Job", "name": "train"},
                                       "podGroupTemplates": [{"name": "workers",
                                                              "schedulingPolicy": {"gang": {"minCount": 2}}}]}})
            await api.create({"apiVersion": GANG, "kind": "PodGroup", "metadata": {"name": "train-0", "namespace": "ml"},
                              "spec": {"workloadRef": {"workloadName": "train", "templateName": "workers"},
                                       "schedulingPolicy": {"gang": {"minCount": 2}}}})
            for i in range(2):
                await api.create(_pod(f"w-{i}", ns="ml", schedulingGroup={"podGroupName": "train-0"}))
            full = await dump_cluster(api)
            assert not any("Workload" in n or "PodGroup" in n for n in full.notes)
            kinds = [o["kind"] for o in full.items]
            assert kinds.index("Workload") < kinds.index("PodGroup") < kinds.index("Pod")
            group = next(o for o in full.items if o["kind"] == "PodGroup")
            assert group["apiVersion"] == GANG and group["spec"]["disruptionMode"] == {"single": {}}
            anon = (await dump_cluster(api, anonymize=True)).items
            pg = next(o for o in anon if o["kind"] == "PodGroup")
            wl = next(o for o in anon if o["kind"] == "Workload")
            members = [o for o in anon if o["kind"] == "Pod" and o["metadata"]["namespace"] == pg["metadata"]["namespace"]]
            assert pg["metadata"]["name"] != "train-0" and len(members) == 2
            assert {m["spec"]["schedulingGroup"]["podGroupName"] for m in members} == {pg["metadata"]["name"]}
            assert pg["spec"]["workloadRef"]["workloadName"] == wl["metadata"]["name"] != "train"
            # Replayed in reverse input order: the load order still puts the group before its pods.
            report = await run_simulation(list(reversed(strip_all(full.items))), timeout=60)
            assert report.rejected == []
            assert sorted(p["name"] for p in report.pods if p.get("node") == "n1") == ["w-0", "w-1"]
    asyncio.run(go())


def strip_all(items: list[Obj]) -> list[Obj]:
    return [strip(o) for o in items]


def test_a_cluster_without_the_gate_dumps_without_a_note_for_the_gated_kinds() -> None:
    async def go() -> None:
        async with SimulatedCluster() as a:
            await a.client.create(_node("n1"))
            result = await dump_cluster(a.client)
            assert not any("Workload" in n or "PodGroup" in n for n in result.notes)
            assert not any(o["kind"] in ("Workload", "PodGroup") for o in result.items)
    asyncio.run(go())
