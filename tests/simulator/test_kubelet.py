"""The simulated kubelet as a client observes it: the labels and the declared node features it registers
its node with, and how it ends a deleted pod; the API server's validation of ``status.declaredFeatures``."""

from __future__ import annotations

import calendar
import time
from typing import Any

from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

# Pods run 50 ms after their Binding; a deleted one is held 3 s (its grace period is 30 s) as a kubelet
# stops its containers.
SIM_OPTIONS = {"pod_running_after": 0.05, "pod_termination_seconds": 3.0}
PODS = "/api/v1/namespaces/default/pods"


def _node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "Node", "metadata": meta,
            "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


def test_a_new_node_carries_the_kubelets_hostname_os_and_arch_labels(api: Http) -> None:
    code, body = api("POST", "/api/v1/nodes", _node("Worker-A.example"))
    assert code == 422     # node names are lowercase DNS subdomains
    code, body = api("POST", "/api/v1/nodes", _node("worker-a.example", {"team": "x"}))
    assert code == 201, body
    code, got = api("GET", "/api/v1/nodes/worker-a.example")
    assert got["metadata"]["labels"] == {
        "team": "x", "kubernetes.io/hostname": "worker-a.example", "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64", "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64"}


def test_the_kubelets_labels_never_overwrite_the_nodes_own(api: Http) -> None:
    own = {"kubernetes.io/hostname": "host-7", "kubernetes.io/arch": "arm64"}
    code, body = api("POST", "/api/v1/nodes", _node("labelled", own))
    assert code == 201, body
    labels = api("GET", "/api/v1/nodes/labelled")[1]["metadata"]["labels"]
    assert labels["kubernetes.io/hostname"] == "host-7" and labels["kubernetes.io/arch"] == "arm64"
    assert labels["kubernetes.io/os"] == "linux"
    # Removing one later is the client's to do: an update is no registration.
    code, body = api("PATCH", "/api/v1/nodes/labelled", {"metadata": {"labels": {"kubernetes.io/os": None}}},
                     ctype="application/merge-patch+json")
    assert code == 200 and "kubernetes.io/os" not in body["metadata"]["labels"]


def test_a_pod_selecting_linux_nodes_matches_a_new_node(api: Http) -> None:
    api("POST", "/api/v1/nodes", _node("linux-1"))
    code, body = api("GET", "/api/v1/nodes", params={"labelSelector": "kubernetes.io/os=linux,"
                                                                       "kubernetes.io/hostname=linux-1"})
    assert code == 200 and [n["metadata"]["name"] for n in body["items"]] == ["linux-1"]


def test_a_new_node_declares_the_features_of_a_137_kubelet(api: Http) -> None:
    """DiscoverNodeFeatures over the registry the scheduler infers from: cpuManagerPolicy none declares
    GuaranteedQoSPodCPUResize, the beta InPlacePodLevelResourcesVerticalScaling gate its feature."""
    code, body = api("POST", "/api/v1/nodes", _node("declaring"))
    assert code == 201, body
    got = api("GET", "/api/v1/nodes/declaring")[1]
    assert got["status"]["declaredFeatures"] == ["GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling"]


def test_a_node_created_with_its_own_declared_features_keeps_them(api: Http) -> None:
    own = _node("snapshot")
    own["status"]["declaredFeatures"] = ["RestartAllContainersOnContainerExits"]
    assert api("POST", "/api/v1/nodes", own)[0] == 201
    got = api("GET", "/api/v1/nodes/snapshot")[1]
    assert got["status"]["declaredFeatures"] == ["RestartAllContainersOnContainerExits"]
    empty = _node("declares-nothing")
    empty["status"]["declaredFeatures"] = []
    assert api("POST", "/api/v1/nodes", empty)[0] == 201


def test_declared_features_are_validated_as_the_api_server_does(api: Http) -> None:
    """validateNodeDeclaredFeatures: names are UpperCamelCase segments joined by '/', sorted, unique."""
    for i, (features, field, message) in enumerate([
        (["invalid-name"], "status.declaredFeatures[0]", 'invalid feature name "invalid-name": must start with an '
                                                         "UpperCamelCase segment"),
        (["invalidName"], "status.declaredFeatures[0]", 'invalid feature name "invalidName"'),
        (["Invalid/"], "status.declaredFeatures[0]", 'invalid feature name "Invalid/"'),
        (["B", "A"], "status.declaredFeatures[1]", "list must be sorted alphabetically"),
        (["A", "A"], "status.declaredFeatures[1]", "Duplicate value"),
    ]):
        bad = _node(f"bad-{i}")
        bad["status"]["declaredFeatures"] = features
        code, body = api("POST", "/api/v1/nodes", bad)
        assert code == 422, (features, body)
        causes = body["details"]["causes"]
        assert any(c["field"] == field and message in c["message"] for c in causes), (features, causes)
    ok = _node("ok")
    ok["status"]["declaredFeatures"] = ["MyFeature/MySubFeature", "MyFeature/mySubFeature", "ValidFeature"]
    assert api("POST", "/api/v1/nodes", ok)[0] == 201


def _running_pod(api: Http, name: str, node: str) -> dict[str, Any]:
    api("POST", "/api/v1/nodes", _node(node))
    code, body = api("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                    "spec": {"containers": [{"name": "app", "image": "pause"},
                                                            {"name": "side", "image": "pause"}]}})
    assert code == 201, body
    code, body = api("POST", f"{PODS}/{name}/binding", {"apiVersion": "v1", "kind": "Binding",
                                                        "metadata": {"name": name},
                                                        "target": {"kind": "Node", "name": node}})
    assert code == 201, body
    return _poll(api, name, lambda p: _cond(p, "Ready") == "True", "the pod Running and Ready")


def _cond(pod: dict[str, Any], kind: str) -> str | None:
    return next((c["status"] for c in (pod.get("status") or {}).get("conditions") or [] if c["type"] == kind), None)


def _poll(api: Http, name: str, ok: Any, what: str, timeout: float = 10.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code, pod = api("GET", f"{PODS}/{name}")
        if code == 200 and ok(pod):
            return pod
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_deleted_pods_deletion_timestamp_is_now_plus_its_grace_period(api: Http) -> None:
    _running_pod(api, "graceful", "grace-node")
    before = int(time.time())
    code, body = api("DELETE", f"{PODS}/graceful", {"gracePeriodSeconds": 30})
    after = int(time.time())
    assert code == 200, body
    meta = body["metadata"]
    assert meta["deletionGracePeriodSeconds"] == 30
    stamp = calendar.timegm(time.strptime(meta["deletionTimestamp"], "%Y-%m-%dT%H:%M:%SZ"))
    assert before + 30 <= stamp <= after + 30


def test_a_terminating_pod_is_no_longer_ready(api: Http) -> None:
    """What ``kubectl wait --for=condition=Ready=false`` waits for: the kubelet stopping the containers."""
    _running_pod(api, "stopping", "stop-node")
    code, body = api("DELETE", f"{PODS}/stopping")
    assert code == 200 and body["metadata"]["deletionTimestamp"], body
    pod = _poll(api, "stopping", lambda p: _cond(p, "Ready") == "False", "Ready=False")
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "ContainersNotReady"
    assert ready["message"] == "containers with unready status: [app side]"
    assert _cond(pod, "ContainersReady") == "False"
    assert [c["ready"] for c in pod["status"]["containerStatuses"]] == [False, False]
    assert pod["metadata"]["deletionTimestamp"] == body["metadata"]["deletionTimestamp"]


@needs_kubectl
def test_kubectl_wait_for_ready_false_returns_once_a_deleted_pod_stops(api: Http, kubectl: Kubectl) -> None:
    _running_pod(api, "waited", "wait-node")
    kubectl("delete", "pod", "waited", "--wait=false")
    out = kubectl("wait", "--for=condition=Ready=false", "pod/waited", "--timeout=10s")
    assert out.stdout.strip() == "pod/waited condition met"


# --- in-place resize (pods/resize): what the kubelet allocates and actuates ---------------------------
def _sized_pod(api: Http, name: str, node: str, cpu: str, node_cpu: str = "4") -> dict[str, Any]:
    body = _node(node)
    body["status"]["capacity"]["cpu"] = node_cpu
    api("POST", "/api/v1/nodes", body)
    code, out = api("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                                   "spec": {"containers": [{"name": "app", "image": "pause", "resources": {
                                       "requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}})
    assert code == 201, out
    code, out = api("POST", f"{PODS}/{name}/binding", {"apiVersion": "v1", "kind": "Binding",
                                                       "metadata": {"name": name},
                                                       "target": {"kind": "Node", "name": node}})
    assert code == 201, out
    return _poll(api, name, lambda p: _cond(p, "Ready") == "True", "the pod Running and Ready")


def _resize(api: Http, name: str, cpu: str) -> tuple[int, Any]:
    return api("PATCH", f"{PODS}/{name}/resize", {"spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": cpu}, "limits": {"cpu": cpu}}}]}},
        ctype="application/strategic-merge-patch+json")


def test_a_running_pods_statuses_carry_its_allocated_and_actuated_resources(api: Http) -> None:
    pod = _sized_pod(api, "sized", "sized-node", "500m")
    (cs,) = pod["status"]["containerStatuses"]
    assert cs["allocatedResources"] == {"cpu": "500m"}
    assert cs["resources"] == {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}


def test_an_admitted_resize_is_allocated_then_actuated(api: Http) -> None:
    _sized_pod(api, "grows", "grow-node", "500m")
    code, body = _resize(api, "grows", "1")
    assert code == 200, body
    assert body["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1"}
    done = _poll(api, "grows", lambda p: p["status"]["containerStatuses"][0].get("resources", {}).get(
        "requests") == {"cpu": "1"}, "the resize actuated")
    assert done["status"]["containerStatuses"][0]["allocatedResources"] == {"cpu": "1"}
    assert _cond(done, "PodResizeInProgress") is None and _cond(done, "PodResizePending") is None


def test_a_resize_beyond_the_node_is_infeasible_and_leaves_the_status(api: Http) -> None:
    _sized_pod(api, "too-big", "small-node", "500m", node_cpu="2")
    code, body = _resize(api, "too-big", "3")
    assert code == 200, body
    pod = _poll(api, "too-big", lambda p: _cond(p, "PodResizePending") == "True", "the resize pending")
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodResizePending")
    assert (cond["reason"], cond["message"]) == (
        "Infeasible", "Node didn't have enough capacity: cpu, requested: 3000, capacity: 2000")
    (cs,) = pod["status"]["containerStatuses"]
    assert cs["allocatedResources"] == {"cpu": "500m"} and cs["resources"]["requests"] == {"cpu": "500m"}


def test_a_deferred_resize_is_applied_once_a_pod_leaves_the_node(api: Http) -> None:
    _sized_pod(api, "waits", "shared-node", "1", node_cpu="2")
    _sized_pod(api, "neighbour", "shared-node", "1", node_cpu="2")
    code, body = _resize(api, "waits", "1500m")
    assert code == 200, body
    pod = _poll(api, "waits", lambda p: _cond(p, "PodResizePending") == "True", "the resize deferred")
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodResizePending")
    assert (cond["reason"], cond["message"]) == (
        "Deferred", "Node didn't have enough resource: cpu, requested: 1500, used: 1000, capacity: 2000")
    assert api("DELETE", f"{PODS}/neighbour", {"gracePeriodSeconds": 0})[0] == 200
    _poll(api, "waits", lambda p: p["status"]["containerStatuses"][0].get("allocatedResources") == {"cpu": "1500m"}
          and _cond(p, "PodResizePending") is None, "the deferred resize allocated")
