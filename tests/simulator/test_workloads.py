"""The simulated controller manager (``scheduler/simulator/workloads.py``, issue #17): Deployments,
ReplicaSets, StatefulSets, DaemonSets and Jobs make pods as their upstream controllers do, a Job's pods
complete, and the garbage collector follows ownerReferences (background, foreground, orphan).

The scheduler here is a stand-in that binds every pending pod (a DaemonSet pod to its affinity's node):
these tests are about the controllers; ``tests/operator/test_workloads_e2e.py`` runs kopf-scheduler."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, node, pod, wait
from tests.simulator.kubectl import Kubectl, kubectl_for, needs_kubectl

NS = "/api/v1/namespaces/default"
APPS = "/apis/apps/v1/namespaces/default"
BATCH = "/apis/batch/v1/namespaces/default"


@pytest.fixture
def sim(tmp_path: Path) -> Iterator[SimulatedCluster]:
    c = SimulatedCluster(kubeconfig=tmp_path / "config", seed=17, pod_running_after=0.05,
                         pod_completion_seconds=0.2)
    c.start()
    api = Http(c)
    for i in range(3):
        api("POST", "/api/v1/nodes", node(f"n{i}"))
    yield c
    c.stop()


@pytest.fixture
def api(sim: SimulatedCluster) -> Http:
    return Http(sim)




def pods(api: Http, selector: str = "") -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = api("GET", f"{NS}/pods", params={"labelSelector": selector} if selector
                                      else None)[1]["items"]
    return [p for p in items if not p["metadata"].get("deletionTimestamp")]


def bind_pending(api: Http) -> int:
    """The stand-in scheduler: bind each pending pod (round robin, or its DaemonSet node)."""
    nodes = itertools.cycle(["n0", "n1", "n2"])
    n = 0
    for p in pods(api):
        if p["spec"].get("nodeName") or p["status"].get("phase") != "Pending":
            continue
        target = next(nodes)
        aff = ((p["spec"].get("affinity") or {}).get("nodeAffinity") or {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution") or {}
        for term in aff.get("nodeSelectorTerms") or []:
            for f in term.get("matchFields") or []:
                target = f["values"][0]
        code, _ = api("POST", f"{NS}/pods/{p['metadata']['name']}/binding", {
            "apiVersion": "v1", "kind": "Binding", "metadata": {"name": p["metadata"]["name"]},
            "target": {"kind": "Node", "name": target}})
        n += code == 201
    return n


def template(app: str, **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}], **spec}}


def deployment(name: str, replicas: int, image: str = "busybox:1.36") -> dict[str, Any]:
    t = template(name)
    t["spec"]["containers"][0]["image"] = image
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": t}}


def test_a_deployment_makes_a_replica_set_and_its_pods_and_reports_availability(api: Http) -> None:
    assert api("POST", f"{APPS}/deployments", deployment("web", 30))[0] == 201
    wait(lambda: len(pods(api, "app=web")) == 30, message="30 pods")
    rs = api("GET", f"{APPS}/replicasets")[1]["items"]
    assert len(rs) == 1 and rs[0]["metadata"]["name"].startswith("web-")
    assert rs[0]["metadata"]["ownerReferences"][0]["kind"] == "Deployment"
    h = rs[0]["metadata"]["labels"]["pod-template-hash"]
    # rand.SafeEncodeString over a decimal hash: each digit's code point picks from upstream's
    # alphanumerics, so only these ten characters appear (as in upstream's "5d4f8c9b7").
    assert set(h) <= set("456789bcdf"), h
    assert all(p["metadata"]["labels"]["pod-template-hash"] == h and p["metadata"]["generateName"] ==
               f"web-{h}-" for p in pods(api, "app=web"))
    bind_pending(api)

    def rolled_out() -> bool:
        st = api("GET", f"{APPS}/deployments/web")[1]["status"]
        return st.get("availableReplicas") == 30 and st.get("updatedReplicas") == 30
    wait(rolled_out, message="available")
    st = api("GET", f"{APPS}/deployments/web")[1]["status"]
    assert {c["type"]: c["reason"] for c in st["conditions"]} == {"Available": "MinimumReplicasAvailable",
                                                                  "Progressing": "NewReplicaSetAvailable"}
    # A new template is a new ReplicaSet; the old one is scaled to 0.
    api("PATCH", f"{APPS}/deployments/web", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox:1.37"}]}}}}, ctype="application/strategic-merge-patch+json")
    wait(lambda: len(api("GET", f"{APPS}/replicasets")[1]["items"]) == 2, message="a second ReplicaSet")
    wait(lambda: sorted(r["spec"]["replicas"] for r in api("GET", f"{APPS}/replicasets")[1]["items"]) == [0, 30],
         message="old scaled to 0")


def test_scaling_a_replica_set_deletes_unscheduled_pods_first(api: Http) -> None:
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"},
          "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "rs"}}, "template": template("rs")}}
    api("POST", f"{APPS}/replicasets", rs)
    wait(lambda: len(pods(api, "app=rs")) == 3)
    bind_pending(api)
    api("PATCH", f"{APPS}/replicasets/rs", {"spec": {"replicas": 5}}, ctype="application/merge-patch+json")
    wait(lambda: len(pods(api, "app=rs")) == 5)
    api("PATCH", f"{APPS}/replicasets/rs", {"spec": {"replicas": 3}}, ctype="application/merge-patch+json")
    wait(lambda: len(pods(api, "app=rs")) == 3)
    assert all(p["spec"].get("nodeName") for p in pods(api, "app=rs"))     # the two unbound went


def test_a_stateful_set_creates_pods_in_ordinal_order_once_each_is_ready(api: Http) -> None:
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
           "spec": {"replicas": 3, "serviceName": "db", "selector": {"matchLabels": {"app": "db"}},
                    "template": template("db")}}
    api("POST", f"{APPS}/statefulsets", sts)
    order = []
    deadline = time.time() + 10
    while len(order) < 3 and time.time() < deadline:
        names = sorted(p["metadata"]["name"] for p in pods(api, "app=db"))
        # OrderedReady: never a pod N before 0..N-1 exist.
        assert names == [f"db-{i}" for i in range(len(names))]
        for n in names:
            if n not in order:
                order.append(n)
        bind_pending(api)
        time.sleep(0.05)
    assert order == ["db-0", "db-1", "db-2"]
    p1 = api("GET", f"{NS}/pods/db-1")[1]
    assert (p1["spec"]["hostname"], p1["spec"]["subdomain"]) == ("db-1", "db")
    assert p1["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == "db-1"
    api("PATCH", f"{APPS}/statefulsets/db", {"spec": {"replicas": 1}}, ctype="application/merge-patch+json")
    wait(lambda: [p["metadata"]["name"] for p in pods(api, "app=db")] == ["db-0"], message="scaled down")


def test_a_stateful_sets_volume_claim_templates_make_its_pods_claims(api: Http) -> None:
    """``createPersistentVolumeClaims`` before each pod, then ``updateStorage``: claims
    ``<template>-<set>-<ordinal>`` with the template's and the selector's labels, no owner by default
    (retention Retain), the pod's volumes naming them (a template volume of the same name replaced)."""
    t = template("web", volumes=[{"name": "data", "emptyDir": {}}, {"name": "cache", "emptyDir": {}}])
    sts = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "web"},
           "spec": {"replicas": 2, "serviceName": "web", "selector": {"matchLabels": {"app": "web"}},
                    "template": t, "volumeClaimTemplates": [
                        {"metadata": {"name": "data", "labels": {"tier": "db"}},
                         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                                  "resources": {"requests": {"storage": "1Gi"}}}},
                        {"metadata": {"name": "logs"},
                         "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "",
                                  "resources": {"requests": {"storage": "2Gi"}}}}]}}
    api("POST", f"{APPS}/statefulsets", sts)
    wait(lambda: [bind_pending(api), len(pods(api, "app=web")) == 2][1], message="two pods")
    claims = {c["metadata"]["name"]: c for c in api("GET", f"{NS}/persistentvolumeclaims")[1]["items"]}
    assert set(claims) == {"data-web-0", "logs-web-0", "data-web-1", "logs-web-1"}
    data0 = claims["data-web-0"]
    assert data0["metadata"]["labels"] == {"tier": "db", "app": "web"}
    assert "ownerReferences" not in data0["metadata"]
    assert data0["spec"]["resources"]["requests"]["storage"] == "1Gi" and data0["status"]["phase"] == "Pending"
    pod0 = api("GET", f"{NS}/pods/web-0")[1]
    assert pod0["spec"]["volumes"] == [
        {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
        {"name": "logs", "persistentVolumeClaim": {"claimName": "logs-web-0"}},
        {"name": "cache", "emptyDir": {}}]
    # whenDeleted: Delete owns the claims by the set, so they go with it
    owned = {**sts, "metadata": {"name": "tmp"}, "spec": {
        **sts["spec"], "replicas": 1, "selector": {"matchLabels": {"app": "tmp"}}, "template": template("tmp"),
        "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete", "whenScaled": "Retain"}}}
    created = api("POST", f"{APPS}/statefulsets", owned)[1]
    claim = wait(lambda: api("GET", f"{NS}/persistentvolumeclaims/data-tmp-0")[1].get("metadata"), message="claim")
    assert claim["ownerReferences"] == [{"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "tmp",
                                         "uid": created["metadata"]["uid"]}]
    api("DELETE", f"{APPS}/statefulsets/tmp")
    wait(lambda: api("GET", f"{NS}/persistentvolumeclaims/data-tmp-0")[0] == 404, message="owned claim deleted")
    assert api("GET", f"{NS}/persistentvolumeclaims/data-web-0")[0] == 200


def test_a_daemon_set_runs_one_pod_per_eligible_node_pinned_by_match_fields(api: Http) -> None:
    api("PATCH", "/api/v1/nodes/n2", {"spec": {"taints": [{"key": "dedicated", "value": "x",
                                                           "effect": "NoSchedule"}]}},
        ctype="application/merge-patch+json")
    ds = {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
          "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent")}}
    api("POST", f"{APPS}/daemonsets", ds)
    got = wait(lambda: pods(api, "app=agent") if len(pods(api, "app=agent")) == 2 else None, message="2 pods")
    pinned = sorted(p["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"][0]["matchFields"][0]["values"][0] for p in got)
    assert pinned == ["n0", "n1"]                                       # n2's taint is not tolerated
    assert {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"} in \
        got[0]["spec"]["tolerations"]
    api("POST", "/api/v1/nodes", node("n3"))
    wait(lambda: len(pods(api, "app=agent")) == 3, message="a pod for the new node")
    bind_pending(api)
    wait(lambda: api("GET", f"{APPS}/daemonsets/agent")[1]["status"].get("numberReady") == 3, message="ready")
    assert api("GET", f"{APPS}/daemonsets/agent")[1]["status"]["desiredNumberScheduled"] == 3


def test_a_job_runs_parallel_pods_to_completion_and_frees_them(api: Http) -> None:
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "work"},
           "spec": {"completions": 4, "parallelism": 2, "template": template("work", restartPolicy="Never")}}
    assert api("POST", f"{BATCH}/jobs", job)[0] == 201
    most_active = 0
    deadline = time.time() + 15
    while time.time() < deadline:
        active = [p for p in pods(api, "app=work") if p["status"].get("phase") not in ("Succeeded", "Failed")]
        most_active = max(most_active, len(active))
        bind_pending(api)
        conds = {c["type"] for c in api("GET", f"{BATCH}/jobs/work")[1]["status"].get("conditions") or []}
        if "Complete" in conds:
            break
        time.sleep(0.05)
    status = api("GET", f"{BATCH}/jobs/work")[1]["status"]
    assert status["succeeded"] == 4 and "completionTime" in status and most_active == 2
    assert {c["type"] for c in status["conditions"]} == {"Complete", "SuccessCriteriaMet"}
    assert all(p["status"]["phase"] == "Succeeded" for p in pods(api, "app=work"))
    # kubectl's STATUS column shows the container's reason, as printPod does
    table = api("GET", f"{NS}/pods", params={"labelSelector": "app=work"},
                accept="application/json;as=Table;v=v1;g=meta.k8s.io")[1]
    assert {r["cells"][2] for r in table["rows"]} == {"Completed"}


@pytest.mark.parametrize(("policy", "pods_left", "owner_refs_left"), [
    ("Background", 0, None),
    ("Foreground", 0, None),
    ("Orphan", 2, False),
])
def test_deleting_an_owner_collects_or_orphans_its_dependents(api: Http, policy: str, pods_left: int,
                                                              owner_refs_left: bool | None) -> None:
    api("POST", f"{APPS}/deployments", deployment("gc", 2))
    wait(lambda: len(pods(api, "app=gc")) == 2)
    code, body = api("DELETE", f"{APPS}/deployments/gc", {"propagationPolicy": policy})
    assert code == 200
    if policy == "Foreground":          # held, with the collector's finalizer, until its dependents are gone
        assert body["metadata"]["finalizers"] == ["foregroundDeletion"] and body["metadata"]["deletionTimestamp"]
    wait(lambda: api("GET", f"{APPS}/deployments/gc")[0] == 404, message="owner gone")
    if policy == "Orphan":
        wait(lambda: len(api("GET", f"{APPS}/replicasets")[1]["items"]) == 1)
        assert "ownerReferences" not in api("GET", f"{APPS}/replicasets")[1]["items"][0]["metadata"]
    else:
        wait(lambda: not api("GET", f"{APPS}/replicasets")[1]["items"], message="replica set collected")
    wait(lambda: len(pods(api, "app=gc")) == pods_left, message=f"{pods_left} pods left")


def test_an_unknown_propagation_policy_is_refused(api: Http) -> None:
    api("POST", f"{APPS}/deployments", deployment("pp", 0))
    code, body = api("DELETE", f"{APPS}/deployments/pp", {"propagationPolicy": "Sideways"})
    assert (code, body["reason"]) == (422, "Invalid")


def test_a_pod_whose_owner_never_existed_is_collected(api: Http) -> None:
    """Issue #34 §10: attemptToDeleteItem finds the owner absent (no ReplicaSet with that uid) and deletes
    the dependent; one that also has a live owner only loses the dangling reference."""
    ghost = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "ghost",
             "uid": "0b7c6a52-5b8e-4a43-9b8e-000000000001", "controller": True}
    orphan = pod("orphan")
    orphan["metadata"]["ownerReferences"] = [ghost]
    code, body = api("POST", f"{NS}/pods", orphan)
    assert code == 201, body
    wait(lambda: api("GET", f"{NS}/pods/orphan")[0] == 404, message="the orphan collected")

    code, cm = api("POST", f"{NS}/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                 "metadata": {"name": "owner"}})
    assert code == 201
    live = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": cm["metadata"]["uid"]}
    kept = pod("kept")
    kept["metadata"]["ownerReferences"] = [live, {**ghost, "controller": False}]
    assert api("POST", f"{NS}/pods", kept)[0] == 201
    got = wait(lambda: (p := api("GET", f"{NS}/pods/kept")[1])["metadata"]["ownerReferences"] == [live] and p,
               message="the dangling reference removed")
    assert not got["metadata"].get("deletionTimestamp")


@needs_kubectl
def test_kubectl_rollout_status_and_cascading_delete(sim: SimulatedCluster, api: Http, tmp_path: Path) -> None:
    kubectl: Kubectl = kubectl_for(sim, tmp_path / "home")
    kubectl("create", "deployment", "web", "--image=nginx:1.27", "--replicas=3")
    wait(lambda: len(pods(api, "app=web")) == 3)
    bind_pending(api)
    out = kubectl("rollout", "status", "deployment/web", "--timeout=20s").stdout
    assert 'deployment "web" successfully rolled out' in out
    kubectl("delete", "deployment", "web", "--cascade=foreground")          # waits until it is gone
    wait(lambda: not pods(api, "app=web"), message="pods collected")


@needs_kubectl
def test_kubectl_rollout_undo_brings_back_the_previous_template_at_a_new_revision(
        sim: SimulatedCluster, api: Http, tmp_path: Path) -> None:
    """Issue #34 §10: ``kubectl rollout undo`` answered 422, the Deployment carrying no
    ``deployment.kubernetes.io/revision``; the deployment controller sets it, and renumbers the ReplicaSet
    an undo brings back (SetNewReplicaSetAnnotations)."""
    kubectl: Kubectl = kubectl_for(sim, tmp_path / "home")

    def revision() -> str | None:
        d = api("GET", f"{APPS}/deployments/undo")[1]
        return str((d["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision"))

    kubectl("create", "deployment", "undo", "--image=nginx:1.27", "--replicas=1")
    wait(lambda: revision() == "1", message="revision 1")
    kubectl("set", "image", "deployment/undo", "nginx=nginx:1.28")
    wait(lambda: revision() == "2", message="revision 2")
    out = kubectl("rollout", "undo", "deployment/undo")
    assert out.stdout.strip() == "deployment.apps/undo rolled back"
    wait(lambda: revision() == "3", message="revision 3")
    d = api("GET", f"{APPS}/deployments/undo")[1]
    assert d["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.27"
    by_image = {rs["spec"]["template"]["spec"]["containers"][0]["image"]:
                rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]
                for rs in api("GET", f"{APPS}/replicasets", params={"labelSelector": "app=undo"})[1]["items"]}
    assert by_image == {"nginx:1.27": "3", "nginx:1.28": "2"}
    history = kubectl("rollout", "history", "deployment/undo").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]


def test_a_deployment_keeps_a_replica_set_with_another_clusters_hash(api: Http) -> None:
    """FindNewReplicaSet compares templates ignoring pod-template-hash: a replayed dump's ReplicaSet
    (hashed by the real cluster) stays the current one, and its pods are kept."""
    api("POST", f"{APPS}/deployments", deployment("rp", 0))
    rs = wait(lambda: api("GET", f"{APPS}/replicasets")[1]["items"], message="a replica set")[0]
    name = rs["metadata"]["name"]
    rs["metadata"]["labels"]["pod-template-hash"] = "5d4f8c9b7"
    rs["spec"]["template"]["metadata"]["labels"]["pod-template-hash"] = "5d4f8c9b7"
    rs["spec"]["selector"]["matchLabels"]["pod-template-hash"] = "5d4f8c9b7"
    assert api("PUT", f"{APPS}/replicasets/{name}", rs)[0] == 200
    api("PATCH", f"{APPS}/deployments/rp", {"spec": {"replicas": 2}}, ctype="application/merge-patch+json")
    wait(lambda: len(pods(api, "app=rp")) == 2, message="2 pods")
    assert [r["metadata"]["name"] for r in api("GET", f"{APPS}/replicasets")[1]["items"]] == [name]
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in pods(api, "app=rp")} == {"5d4f8c9b7"}
