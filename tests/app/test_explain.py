"""``kopf-scheduler explain NAMESPACE/NAME`` against a cluster (issue #20 §2): the pod's profile run
over the cluster's state, locally; another profile on request; every node with --all-nodes; and
nothing written to the cluster."""

from __future__ import annotations

import asyncio
import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

import scheduler.app.explain as explain_module
import scheduler.app.kinds as kinds_module
from scheduler.app.cli import main
from scheduler.app.explain import list_cluster
from scheduler.app.kinds import watched_kinds
from scheduler.app.runtime import OperatorRuntime
from scheduler.cache.dra import KINDS as DRA_KINDS
from scheduler.kubeapi.config import load_config
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path
from scheduler.profiles.explanation_crd import PLURAL as EXPLANATIONS
from scheduler.simulator import SimulatedCluster
from scheduler.simulator.tls import SelfSigned
from tests.operator.harness import Env, running_operator
from tests.operator.test_e2e import accepted
from tests.simulator.helpers import Http


def node(name: str, cpu: str, taint: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}] if taint else []},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def pod(name: str, cpu: str, node_name: str | None = None, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"schedulerName": scheduler, **({"nodeName": node_name} if node_name else {}),
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimulatedCluster]:
    c = SimulatedCluster()
    c.start()
    http = Http(c)
    http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    for name, spec in (("default", {"schedulerName": "default-scheduler"}),
                       ("packing", {"schedulerName": "bin-packing", "pluginConfig": [
                           {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]})):
        assert http("POST", profiles_path(), {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name},
                                              "spec": spec})[0] == 201
    http("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    for n in (node("empty", "8"), node("busy", "8"), node("small", "1"), node("db", "8", taint=True)):
        http("POST", "/api/v1/nodes", n)
    http("POST", "/api/v1/namespaces/shop/pods", pod("resident", "6", node_name="busy"))
    http("POST", "/api/v1/namespaces/shop/pods", pod("web", "1500m"))
    http("POST", "/api/v1/namespaces/shop/pods", pod("huge", "16"))
    yield c
    c.stop()


def explain(cluster: SimulatedCluster, *args: str) -> Any:
    result = CliRunner().invoke(main, ["explain", *args, "--kubeconfig", str(cluster.kubeconfig), "--output", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_pods_own_profile_spreads_and_another_packs(cluster: SimulatedCluster) -> None:
    out = explain(cluster, "shop/web")
    d = out["decision"]
    assert d["pod"] == "shop/web" and d["profile"] == "default-scheduler" and d["profileGeneration"] == 1
    assert d["node"] == "empty"                                     # LeastAllocated
    assert d["evaluatedNodes"] == 4 and d["feasibleNodes"] == 2
    assert sum(d["filtered"].values()) == 2 and d["filtered"]["Insufficient cpu"] == 1
    assert [s["node"] for s in d["scores"]] == ["empty", "busy"]
    assert all(sum(s["plugins"].values()) == s["total"] for s in d["scores"])
    assert out["recorded"] is None and "not reachable" in out["recordedError"]
    packed = explain(cluster, "shop/web", "--profile", "packing")["decision"]        # by CR name
    assert packed["node"] == "busy" and packed["profile"] == "bin-packing"          # MostAllocated
    assert explain(cluster, "shop/web", "--profile", "bin-packing")["decision"]["node"] == "busy"


def test_all_nodes_and_a_pending_pod(cluster: SimulatedCluster) -> None:
    out = explain(cluster, "shop/huge", "--all-nodes")
    d = out["decision"]
    assert d["node"] is None and d["feasibleNodes"] == 0 and d["scores"] == []
    assert d["filtered"]["Insufficient cpu"] == 3
    nodes = {n["node"]: n for n in out["nodes"]}
    assert set(nodes) == {"empty", "busy", "small", "db"}
    assert nodes["db"]["plugin"] == "TaintToleration" and not nodes["db"]["feasible"]
    assert nodes["small"]["plugin"] == "NodeResourcesFit" and nodes["small"]["reasons"] == ["Insufficient cpu"]
    web = {n["node"]: n for n in explain(cluster, "shop/web", "--all-nodes")["nodes"]}
    assert web["empty"]["feasible"] and web["empty"]["total"] >= web["busy"]["total"]


def test_nothing_is_written_and_errors_are_one_line(cluster: SimulatedCluster) -> None:
    http = Http(cluster)
    explain(cluster, "shop/web")
    assert http("GET", "/api/v1/namespaces/shop/pods/web")[1]["spec"].get("nodeName") is None
    assert http("GET", "/api/v1/namespaces/shop/events")[1]["items"] == []
    for args, message in ((["shop/nope"], "pod shop/nope"), (["shop/web", "--profile", "nobody"], "'nobody'"),
                          (["web"], "expected NAMESPACE/NAME")):
        result = CliRunner().invoke(main, ["explain", *args, "--kubeconfig", str(cluster.kubeconfig)])
        assert result.exit_code != 0 and message in result.output, result.output


@contextmanager
def decisions_server(tls: SelfSigned | None) -> Iterator[tuple[str, list[str]]]:
    """A stand-in for the scheduler's secure port on 127.0.0.1: answers any GET with a record, and
    keeps the Authorization header of each request it got."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization") or "")
            body = json.dumps({"pod": "shop/web", "node": "empty"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(tls.cert_file), str(tls.key_file))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_scheduler_url_gets_the_token_only_over_verified_https(cluster: SimulatedCluster, tmp_path: Path) -> None:
    """#32: ``--scheduler-url`` sends the user's cluster token. Plain HTTP is refused before anything
    is sent; HTTPS whose certificate does not verify gets no request; HTTPS verified against
    ``--scheduler-ca-file`` gets the token and its record is shown."""
    token = load_config(str(cluster.kubeconfig)).bearer()
    assert token
    with decisions_server(None) as (url, seen):
        result = CliRunner().invoke(main, ["explain", "shop/web", "--kubeconfig", str(cluster.kubeconfig),
                                           "--scheduler-url", url])
        assert result.exit_code == 1 and "only https:// is allowed" in result.output, result.output
    assert seen == []
    pair = SelfSigned(tmp_path, common_name="kopf-scheduler", stem="serving")
    with decisions_server(pair) as (url, seen):
        out = explain(cluster, "shop/web", "--scheduler-url", url)
        assert out["recorded"] is None and "certificate verify failed" in out["recordedError"], out
        assert seen == []
        out = explain(cluster, "shop/web", "--scheduler-url", url, "--scheduler-ca-file", str(pair.cert_file))
        assert out["recorded"] == {"pod": "shop/web", "node": "empty"} and "recordedError" not in out
        assert seen == [f"Bearer {token}"]


# ---- one list of kinds for the live scheduler and for explain (issue #37 item 1) -------------------

# A DRA kind not (yet) in ``cache.dra.KINDS`` and not served by the simulated cluster: upstream's
# alpha ResourcePoolStatusRequest stands in for the next kind a plugin's lister needs.
EXTRA_DRA_KIND = ("resource.k8s.io", "v1alpha3", "resourcepoolstatusrequests", "ResourcePoolStatusRequest")


class RecordingApi:
    """A stand-in for ``KubeClient`` that answers every List empty and keeps the paths asked."""

    def __init__(self) -> None:
        self.paths: list[str] = []

    async def request(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
        self.paths.append(path)
        return {"items": []}


def test_explain_lists_exactly_the_kinds_the_live_scheduler_watches(cluster: SimulatedCluster,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The runtime's informers and explain's listing come from one ``watched_kinds``: a kind added
    there for the live scheduler (here a DRA kind, as DeviceTaintRules would be) is listed and fed
    by explain too, with no second edit (as DeviceTaintRules were); the PodGroups' gate holds for both."""
    monkeypatch.setattr(kinds_module, "DRA_KINDS",
                        (*DRA_KINDS, EXTRA_DRA_KIND))
    for gates in (None, {"GenericWorkload": True}):
        runtime = OperatorRuntime(load_config(str(cluster.kubeconfig)), feature_gates=gates)
        kinds = watched_kinds(gates)
        # Besides: the SchedulingExplanations' informer, last; requests to the scheduler, not state it reads.
        informers = {k: i for k, i in runtime.informers.items() if k != EXPLANATIONS}
        assert list(runtime.informers)[-1] == EXPLANATIONS == runtime.sync_order[-1]
        assert {k: (i.path, i.optional) for k, i in informers.items()} == \
            {k.key: (k.path, k.optional) for k in kinds}
        assert runtime.sync_order[:-1] == tuple(k.key for k in kinds)
        api = RecordingApi()
        listed = asyncio.run(list_cluster(api, kinds))          # type: ignore[arg-type]
        assert sorted(api.paths) == sorted(i.path for i in informers.values())
        assert "/apis/resource.k8s.io/v1alpha3/resourcepoolstatusrequests" in api.paths
        assert "resourcepoolstatusrequests" in listed and "devicetaintrules" in listed
        assert ("podgroups" in runtime.informers) == bool(gates)
    # explain_pod itself lists through watched_kinds (no list of its own).
    seen: list[Any] = []

    def recording(*args: Any) -> Any:
        seen.append(args)
        return watched_kinds(*args)
    monkeypatch.setattr(explain_module, "watched_kinds", recording)
    explain(cluster, "shop/web")
    assert seen


def test_a_kind_missing_from_a_cluster_is_an_empty_list_for_explain_as_for_the_informer(
        cluster: SimulatedCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds_module, "DRA_KINDS",
                        (*DRA_KINDS, EXTRA_DRA_KIND))
    d = explain(cluster, "shop/web")["decision"]
    assert d["node"] == "empty"


# ---- explain against the live scheduler's own records (issue #37) ----------------------------------

ZONE = "topology.kubernetes.io/zone"
ASK = {"scheduling.kopf-scheduler.io/explain": "true"}      # the scheduler writes its record on the pod
GPU_DRIVER = "gpu.example.com"


def zoned_node(name: str, zone: str, cpu: str = "8") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, ZONE: zone}},
            "status": {"capacity": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def container(cpu: str = "100m", **extra: Any) -> dict[str, Any]:
    return {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}, **extra}}


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    """The real operator on a simulated cluster with a GPU driver (2 per node) and volumes."""
    with running_operator(tmp_path_factory.mktemp("live"), gpus_per_node=2, pod_running_after=0.2,
                          provision_seconds=0.3) as env:
        env.apply({"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"},
                   "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "try-packing"},
                   "spec": {"schedulerName": "kopf-scheduler", "shadowOf": "kopf-scheduler", "pluginConfig": [
                       {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}},
                  *[zoned_node(f"n{i}", zone) for i, zone in enumerate(("zone-a", "zone-a", "zone-b", "zone-b"))])
        env.wait(lambda: accepted(env, "live") and accepted(env, "try-packing"), message="profiles accepted")
        yield env


def live_explain(env: Env, *args: str) -> Any:
    # --local: the local route and its comparison with the record (the default asks the scheduler).
    result = CliRunner().invoke(main, ["explain", *args, "--local", "--kubeconfig", str(env.cluster.kubeconfig),
                                       "--output", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def by_node(scores: list[dict[str, Any]]) -> dict[str, Any]:
    return {s["node"]: s for s in scores}


def running(env: Env, name: str, namespace: str = "default") -> dict[str, Any] | None:
    p = env.get_json("pod", name, "-n", namespace)
    return p if p["status"].get("phase") == "Running" else None


def test_a_running_pod_on_a_pre_bound_pv_is_explained_on_its_node(live: Env) -> None:
    """It was shown pending with ``persistentvolumeclaim "db-data" not found``: explain never read
    the storage kinds. Now its PVC, bound to a PV only n3 reaches, is read, and the answer is the
    scheduler's: n3, with the same scores."""
    live.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "local"},
                "provisioner": "kubernetes.io/no-provisioner", "volumeBindingMode": "WaitForFirstConsumer"},
               {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "db-disk"}, "spec": {
                   "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "local",
                   "persistentVolumeReclaimPolicy": "Retain", "local": {"path": "/mnt/db"},
                   "claimRef": {"namespace": "default", "name": "db-data"},
                   "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                       {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n3"]}]}]}}}},
               {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "db-data",
                                                                                 "namespace": "default"},
                "spec": {"storageClassName": "local", "accessModes": ["ReadWriteOnce"], "volumeName": "db-disk",
                         "resources": {"requests": {"storage": "1Gi"}}}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "db", "namespace": "default",
                                                                "annotations": ASK},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [container()],
                         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "db-data"}}]}})
    live.wait(lambda: running(live, "db"), message="db running")
    out = live_explain(live, "default/db", "--all-nodes")
    d = out["decision"]
    assert d["node"] == "n3" == out["recorded"]["node"], out
    assert d["feasibleNodes"] == 1 and not any("not found" in r for r in d["filtered"]), d
    assert {n["node"]: n["feasible"] for n in out["nodes"]}["n3"]
    assert out["comparison"] == {"agrees": True, "verdict": "agrees", "differences": [], "changedSince": []}, out


def test_a_pod_whose_volume_was_provisioned_for_it_is_explained_as_before_provisioning(live: Env) -> None:
    """A WaitForFirstConsumer claim is provisioned after the scheduler chose a node, in that node's
    zone. Read as bound, its volume would pin the pod to that zone; the scheduler saw it unbound,
    with every node feasible, and so does explain."""
    live.apply({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "wffc"},
                "provisioner": "ebs.csi.example.com", "volumeBindingMode": "WaitForFirstConsumer"},
               {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "scratch",
                                                                                 "namespace": "default"},
                "spec": {"storageClassName": "wffc", "accessModes": ["ReadWriteOnce"],
                         "resources": {"requests": {"storage": "1Gi"}}}},
               {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache", "namespace": "default",
                                                                "annotations": ASK},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [container()],
                         "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "scratch"}}]}})
    live.wait(lambda: running(live, "cache"), timeout=60, message="cache running")
    assert live.get_json("pvc", "scratch")["status"]["phase"] == "Bound"
    out = live_explain(live, "default/cache", "--all-nodes")
    d, rec = out["decision"], out["recorded"]
    assert d["feasibleNodes"] == rec["feasibleNodes"] == 4, out
    every = {n["node"]: {"node": n["node"], "total": n["total"], "plugins": n["plugins"]} for n in out["nodes"]}
    assert all(every[s["node"]] == s for s in rec["scores"]) and out["comparison"]["agrees"], out


def test_a_running_gpu_pod_with_a_resource_claim_is_explained_on_its_node(live: Env) -> None:
    """It got ``resourceclaim.resource.k8s.io "<claim>" not found``. Its claim, allocated for it
    and reserved for it alone, is read as the scheduler saw it before: unallocated. The pod needs
    both GPUs of a node, and n0 and n1 have one taken already: the scheduler found n2 and n3
    feasible, and so does explain (kept allocated, the claim would pin it to its node alone)."""
    live.apply({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "gpus", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": GPU_DRIVER, "count": 1}}]}}}},
               {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "two-gpus", "namespace": "default"},
                "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                    "deviceClassName": GPU_DRIVER, "count": 2}}]}}}})

    def gpu_pod(name: str, template: str, node: str | None = None) -> dict[str, Any]:
        return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                                "annotations": ASK},
                "spec": {"schedulerName": "kopf-scheduler", **({"nodeSelector": {"kubernetes.io/hostname": node}}
                                                               if node else {}),
                         "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": template}],
                         "containers": [container(claims=[{"name": "gpu"}])]}}
    live.apply(*[gpu_pod(f"one-{i}", "gpus", f"n{i}") for i in range(2)])
    live.wait(lambda: all(running(live, f"one-{i}") for i in range(2)), timeout=60, message="one-GPU pods running")
    live.apply(gpu_pod("trainer", "two-gpus"))
    live.wait(lambda: running(live, "trainer"), timeout=60, message="trainer running")
    out = live_explain(live, "default/trainer")
    d, rec = out["decision"], out["recorded"]
    # n2 and n3 tie, and the scheduler picks among the best at random (upstream's selectHost):
    # either node is the decision, with the same scores.
    assert {d["node"], rec["node"]} <= {"n2", "n3"}, out
    assert d["feasibleNodes"] == rec["feasibleNodes"] == 2, out
    assert by_node(d["scores"]) == by_node(rec["scores"]) and len(d["scores"]) == 2, out
    assert not any("not found" in r for r in d["filtered"]), d
    assert out["comparison"]["agrees"], out


def test_a_deployment_pod_behind_a_service_gets_the_records_spreading_scores(live: Env) -> None:
    """Explain picked another node (no PodTopologySpread: it read no Services nor ReplicaSets)
    while the record had ``PodTopologySpread: 200``. The newest replica is explained: the same
    node and the same per-plugin scores as the record, PodTopologySpread's among them."""
    live.kubectl("create", "namespace", "web")
    template = {"metadata": {"labels": {"app": "web"}, "annotations": ASK},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [container("500m")]}}
    live.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "web"},
                "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
               {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "web"},
                "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template}})

    def names() -> set[str]:
        return {p["metadata"]["name"] for p in live.get_json("pods", "-n", "web")["items"]
                if p["spec"].get("nodeName")}
    live.wait(lambda: len(names()) == 3, timeout=60, message="3 replicas bound")
    first = names()
    live.kubectl("scale", "deployment", "web", "-n", "web", "--replicas=4")
    live.wait(lambda: len(names()) == 4, timeout=60, message="the 4th replica bound")
    (newest,) = names() - first
    out = live_explain(live, f"web/{newest}")
    rec, d = out["recorded"], out["decision"]
    assert any("PodTopologySpread" in s["plugins"] and s["plugins"]["PodTopologySpread"] > 0
               for s in rec["scores"]), rec
    assert by_node(d["scores"]) == by_node(rec["scores"]), out
    assert d["node"] == rec["node"] or by_node(d["scores"])[d["node"]]["total"] == rec["scores"][0]["total"], out
    assert out["comparison"]["agrees"], out


def test_explaining_an_older_replica_flags_the_disagreement_with_what_changed(live: Env) -> None:
    """The first replica's record was made before the others were bound: explain cannot reproduce
    it now, and says so, naming the pods bound since, never silently."""
    pods = sorted(live.get_json("pods", "-n", "web")["items"], key=lambda p: p["metadata"]["creationTimestamp"])
    assert pods, "runs after the Deployment test"
    outs = [live_explain(live, f"web/{p['metadata']['name']}") for p in pods]
    for out in outs:
        c = out["comparison"]
        assert c["agrees"] or (c["differences"] and c["verdict"] in ("clusterChanged", "unexplained")), out
        if not c["agrees"]:
            assert c["verdict"] == "clusterChanged" and any("was bound to" in x for x in c["changedSince"]), out
    assert not all(o["comparison"]["agrees"] for o in outs)
    text = CliRunner().invoke(main, ["explain", f"web/{pods[0]['metadata']['name']}", "--local", "--kubeconfig",
                                     str(live.cluster.kubeconfig)]).output
    assert ("explain AGREES" in text) or ("explain DISAGREES" in text), text


# ---- hypothetical pods: explain -f (issue #37 item 2) ------------------------------------------------

def write_pod(tmp_path: Path, cpu: str, name: str = "new-web") -> Path:
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
                                    "spec": {"containers": [{"name": "c", "image": "i",
                                                             "resources": {"requests": {"cpu": cpu}}}]}}))
    return path


def test_a_pod_that_does_not_exist_is_explained_and_not_created(cluster: SimulatedCluster, tmp_path: Path) -> None:
    """``explain -f pod.yaml``: where it would go and why not elsewhere, in the shapes of a pod's
    answer; nothing is created (a dry run defaults it); ``-f -`` reads stdin."""
    http = Http(cluster)
    before = sorted(p["metadata"]["name"] for p in http("GET", "/api/v1/namespaces/shop/pods")[1]["items"])
    out = explain(cluster, "-f", str(write_pod(tmp_path, "1500m")), "--all-nodes")
    d = out["decision"]
    assert d["pod"] == "shop/new-web" and d["profile"] == "default-scheduler" and d["node"] == "empty", d
    assert d["feasibleNodes"] == 2 and d["filtered"]["Insufficient cpu"] == 1
    assert {n["node"] for n in out["nodes"] if not n["feasible"]} == {"small", "db"}
    assert "recorded" not in out and "comparison" not in out
    packed = explain(cluster, "-f", str(write_pod(tmp_path, "1500m")), "--profile", "packing")["decision"]
    assert packed["node"] == "busy" and packed["profile"] == "bin-packing"
    result = CliRunner().invoke(main, ["explain", "-f", "-", "--kubeconfig", str(cluster.kubeconfig)],
                                input=write_pod(tmp_path, "16").read_text())
    assert result.exit_code == 0 and "node: (none: the pod stays pending)" in result.output, result.output
    assert "Insufficient cpu" in result.output
    assert sorted(p["metadata"]["name"] for p in http("GET", "/api/v1/namespaces/shop/pods")[1]["items"]) == before


def test_a_dump_explains_in_memory_as_the_live_cluster_does(cluster: SimulatedCluster, tmp_path: Path) -> None:
    """``--from cluster.yaml``: the dump fed through the same path into an in-memory scheduler,
    with no API server: the same answer as the live cluster gives."""
    dumped = tmp_path / "cluster.yaml"
    result = CliRunner().invoke(main, ["dump", "--kubeconfig", str(cluster.kubeconfig), "-o", str(dumped)])
    assert result.exit_code == 0, result.output
    pod_file = write_pod(tmp_path, "1500m")
    live_out = explain(cluster, "-f", str(pod_file), "--all-nodes")
    result = CliRunner().invoke(main, ["explain", "-f", str(pod_file), "--from", str(dumped), "--all-nodes",
                                       "--output", "json"])
    assert result.exit_code == 0, result.output
    offline = json.loads(result.stdout)
    for out in (live_out, offline):
        del out["decision"]["time"]
    assert offline == live_out
    for args, message in ((["shop/web", "--from", str(dumped)], "give NAMESPACE/NAME, or -f"),
                          (["-f", str(pod_file), "--from", str(dumped), "--profile", "nobody"],
                           "profiles: default (schedulerName default-scheduler), packing (schedulerName bin-packing)")):
        result = CliRunner().invoke(main, ["explain", *args])
        assert result.exit_code != 0 and message in result.output, result.output


def test_profile_names_a_shadow_and_gets_the_shadows_answer(live: Env, tmp_path: Path) -> None:
    """``--profile <shadow>`` answered with the live profile (the shadow keeps its schedulerName).
    The shadow packs (MostAllocated) where the live profile spreads: the answers differ, and the
    output names the shadow."""
    live.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "anchor", "namespace": "default"},
                "spec": {"schedulerName": "kopf-scheduler", "nodeSelector": {"kubernetes.io/hostname": "n0"},
                         "containers": [container("4")]}})
    live.wait(lambda: running(live, "anchor"), message="anchor running")
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "probe"},
                                    "spec": {"schedulerName": "kopf-scheduler", "containers": [container("1")]}}))
    spread = live_explain(live, "-f", str(path))
    shadow = live_explain(live, "-f", str(path), "--profile", "try-packing")
    assert "shadow" not in spread and shadow["shadow"] == {"profile": "try-packing", "shadowOf": "kopf-scheduler"}
    assert shadow["decision"]["node"] == "n0" != spread["decision"]["node"], (spread, shadow)
    assert live_explain(live, "-f", str(path), "--profile", "live")["decision"]["node"] == spread["decision"]["node"]
    text = CliRunner().invoke(main, ["explain", "-f", str(path), "--profile", "try-packing", "--kubeconfig",
                                     str(live.cluster.kubeconfig)]).output
    assert "shadow profile try-packing of kopf-scheduler" in text, text
    result = CliRunner().invoke(main, ["explain", "-f", str(path), "--profile", "nope", "--kubeconfig",
                                       str(live.cluster.kubeconfig)])
    assert result.exit_code == 1 and "'nope'" in result.output, result.output
    assert "live (schedulerName kopf-scheduler), try-packing (shadow of kopf-scheduler)" in result.output


def test_node_declared_features_and_the_gates_reach_the_local_cycle(cluster: SimulatedCluster) -> None:
    """A pod with a RestartAllContainers rule needs RestartAllContainersOnContainerExits, which no
    simulated kubelet declares: NodeDeclaredFeatures rejects every node the earlier filters let
    through. The explained cycle runs with the gates given (a locked gate switched off here through
    the function, as no flag can): then the pod fits."""
    import asyncio

    from scheduler.app.explain import explain_pod
    from scheduler.kubeapi import KubeClient
    http = Http(cluster)
    restarter = pod("restarter", "100m")
    restarter["spec"]["containers"][0].update(restartPolicy="Never", restartPolicyRules=[
        {"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [42]}}])
    assert http("POST", "/api/v1/namespaces/shop/pods", restarter)[0] == 201
    try:
        d = explain(cluster, "shop/restarter", "--feature-gates", "NodeDeclaredFeatures=true")["decision"]
        assert d["node"] is None
        assert d["filtered"] == {"node(s) didn't match Pod's required features": 3,
                                 "node(s) had untolerated taint(s)": 1}

        async def off() -> Any:
            async with KubeClient(load_config(str(cluster.kubeconfig))) as api:
                return await explain_pod(api, "shop", "restarter", feature_gates={"NodeDeclaredFeatures": False})
        assert asyncio.run(off())["decision"]["node"] == "empty"
    finally:
        http("DELETE", "/api/v1/namespaces/shop/pods/restarter")
