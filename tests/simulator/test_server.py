"""The simulated API server over HTTP: status codes, Status bodies and semantics of kube-apiserver."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.simulator import Faults, SimulatedCluster
from scheduler.simulator.faults import ErrorRule
from tests.simulator.helpers import PODS, Http, node, pod


@pytest.fixture
def sim() -> Iterator[SimulatedCluster]:
    c = SimulatedCluster(seed=7, history=50)
    c.start()
    yield c
    c.stop()


@pytest.fixture
def api(sim: SimulatedCluster) -> Http:
    return Http(sim)


def test_requests_without_the_token_get_401(sim: SimulatedCluster) -> None:
    anon = Http(sim, token="")
    code, body = anon("GET", "/api/v1/pods")
    assert (code, body["reason"], body["kind"]) == (401, "Unauthorized", "Status")
    assert anon("GET", "/version")[0] == 200          # public, as system:public-info-viewer allows
    assert Http(sim, token="wrong")("GET", "/api")[0] == 401


def test_discovery_lists_groups_resources_and_subresources(api: Http) -> None:
    assert api("GET", "/api")[1]["versions"] == ["v1"]
    groups = {g["name"] for g in api("GET", "/apis")[1]["groups"]}
    assert {"events.k8s.io", "coordination.k8s.io", "scheduling.k8s.io", "policy", "apiextensions.k8s.io"} <= groups
    names = {r["name"] for r in api("GET", "/api/v1")[1]["resources"]}
    assert {"pods", "pods/status", "pods/binding", "pods/eviction", "nodes", "nodes/status", "bindings",
            "events", "namespaces"} <= names


@pytest.mark.parametrize(("method", "path", "body", "ctype", "code", "reason"), [
    ("GET", "/api/v1/widgets", None, "application/json", 404, "NotFound"),
    ("GET", "/apis/nope.io/v1", None, "application/json", 404, "NotFound"),
    ("POST", PODS, b"{not json", "application/json", 400, "BadRequest"),
    ("POST", PODS, b"{}", "text/plain", 415, "UnsupportedMediaType"),
    ("PATCH", PODS + "/x", b"{}", "application/json", 415, "UnsupportedMediaType"),
    ("POST", PODS, b"[1, 2]", "application/json", 400, "BadRequest"),
    ("POST", PODS, b"x" * (3 * 1024 * 1024 + 10), "application/json", 413, "RequestEntityTooLarge"),
])
def test_bad_requests_get_the_status_the_real_server_returns(api: Http, method: str, path: str, body: bytes,
                                                             ctype: str, code: int, reason: str) -> None:
    got, status = api(method, path, raw=body, ctype=ctype)
    assert (got, status["kind"], status["reason"], status["code"]) == (code, "Status", reason, code)
    assert api("GET", "/healthz")[0] == 200            # and the server lives on


def test_create_defaults_and_generate_name(api: Http) -> None:
    code, created = api("POST", PODS, {**pod(""), "metadata": {"generateName": "web-"}})
    assert code == 201
    meta, spec = created["metadata"], created["spec"]
    assert meta["name"].startswith("web-") and len(meta["name"]) == 9
    assert meta["namespace"] == "default" and meta["uid"] and meta["creationTimestamp"]
    assert spec["schedulerName"] == "default-scheduler" and spec["priority"] == 0
    assert spec["preemptionPolicy"] == "PreemptLowerPriority"
    assert created["status"]["phase"] == "Pending" and created["status"]["qosClass"] == "Burstable"
    code, again = api("POST", PODS, {**pod(meta["name"])})
    assert (code, again["reason"], again["message"]) == (409, "AlreadyExists", f'pods "{meta["name"]}" already exists')


class _Names:
    """``ApiServer.rng`` for generated names: each name's five characters from ``suffixes`` in turn;
    anything else it is asked goes to the real one."""

    def __init__(self, real: Any, *suffixes: str) -> None:
        self.real = real
        self.chars = iter("".join(suffixes))

    def choice(self, alphabet: str) -> str:
        return next(self.chars)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


# apiserver registry/generic/registry/store.go, createWithGenerateNameRetry (RetryGenerateName, GA and
# locked on since 1.32): a generated name that is taken is generated again, 8 attempts in all; then
# CheckGeneratedNameError's NewGenerateNameConflict (errors.go), retry after 1 s.
@pytest.mark.parametrize(("taken", "outcome"), [
    (1, "gen-bbbbc"),         # the first name is taken: the second is used
    (7, "gen-bbbbc"),         # the eighth attempt is still an attempt
    (8, 409),                 # eight taken: the server gives up
])
def test_a_taken_generated_name_is_generated_again(sim: SimulatedCluster, api: Http, taken: int,
                                                   outcome: str | int) -> None:
    ns = f"gen-{taken}"
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    path = f"/api/v1/namespaces/{ns}/pods"
    assert api("POST", path, pod("gen-bbbbb"))[0] == 201
    script = ["bbbbb"] * taken + ["bbbbc"] * (8 - taken)    # the first ``taken`` attempts find it taken
    real, sim.server.rng = sim.server.rng, _Names(sim.server.rng, *script)  # type: ignore[assignment]
    try:
        code, body = api("POST", path, {**pod(""), "metadata": {"generateName": "gen-"}})
    finally:
        sim.server.rng = real
    if isinstance(outcome, str):
        assert (code, body["metadata"]["name"]) == (201, outcome)
        return
    assert code == 409
    assert body["reason"] == "AlreadyExists"
    assert body["message"] == 'pods "gen-bbbbb" already exists, the server was not able to generate a unique ' \
                              "name for the object"
    assert body["details"] == {"name": "gen-bbbbb", "kind": "pods", "retryAfterSeconds": 1}


def test_a_name_taken_by_an_object_being_deleted_says_so(api: Http) -> None:
    """store.go ``create``: the AlreadyExists of an object with a deletionTimestamp is prefixed."""
    body = pod("leaving")
    body["metadata"]["finalizers"] = ["example.com/hold"]
    assert api("POST", PODS, body)[0] == 201
    assert api("DELETE", f"{PODS}/leaving")[0] == 200
    code, again = api("POST", PODS, pod("leaving"))
    assert (code, again["message"]) == (409, 'object is being deleted: pods "leaving" already exists')
    api("PATCH", f"{PODS}/leaving", {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")


def test_error_status_fields_come_in_gos_order(api: Http) -> None:
    """``metav1.Status`` as encoding/json writes it: kind, apiVersion, metadata, status, message, reason,
    details, code (clients that read the body as a stream, or compare it, saw code before reason)."""
    code, body = api("GET", f"{PODS}/missing")
    assert code == 404
    assert list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason", "details", "code"]
    assert list(body["details"]) == ["name", "kind"]
    api("POST", PODS, pod("twice"))
    code, body = api("POST", PODS, pod("twice"))
    assert code == 409 and list(body) == ["kind", "apiVersion", "metadata", "status", "message", "reason",
                                          "details", "code"]


def test_the_empty_objects_kube_apiserver_always_writes_are_there(api: Http) -> None:
    """Issue #34 §4: Go writes a struct field even when empty, and clients index into them: a Service's
    ``status.loadBalancer``, a Node's ``spec``, a Deployment's ``status``, a CRD's ``status.storedVersions``."""
    code, svc = api("POST", "/api/v1/namespaces/default/services", {
        "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
    assert code == 201 and svc["status"] == {"loadBalancer": {}}
    assert api("GET", "/api/v1/namespaces/default/services/web")[1]["status"] == {"loadBalancer": {}}
    code, n = api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "bare"}})
    assert code == 201 and n["spec"] == {}
    code, d = api("POST", "/apis/apps/v1/namespaces/default/deployments", {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "idle"},
        "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "idle"}}, "template": {
            "metadata": {"labels": {"app": "idle"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}}}})
    assert code == 201 and d["status"] == {}
    code, crd = api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
    assert code == 201 and crd["status"]["storedVersions"] == ["v1"]
    assert crd["status"]["acceptedNames"] == {"plural": "", "kind": ""}
    got = api("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")[1]
    assert got["status"]["storedVersions"] == ["v1"] and got["status"]["acceptedNames"]["kind"] == "Widget"
    # A new storage version is appended: objects may still be stored in the old one.
    got["spec"]["versions"] = [{**got["spec"]["versions"][0], "storage": False},
                               {**got["spec"]["versions"][0], "name": "v2", "storage": True}]
    code, upd = api("PUT", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com", got)
    assert code == 200, upd
    got = api("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")[1]
    assert got["status"]["storedVersions"] == ["v1", "v2"]


def test_create_in_a_missing_namespace_is_404(api: Http) -> None:
    code, body = api("POST", "/api/v1/namespaces/ghost/pods", pod("p"))
    assert (code, body["message"]) == (404, 'namespaces "ghost" not found')


@pytest.mark.parametrize(("mutate", "code", "needle"), [
    (lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="lots"), 400,
     "spec.containers[0].resources.requests[cpu]: quantities must match the regular expression"),
    (lambda p: p["spec"]["containers"][0]["resources"]["requests"].update(cpu="-1"), 422,
     'spec.containers[0].resources.requests[cpu]: Invalid value: "-1": must be greater than or equal to 0'),
    (lambda p: p["spec"]["containers"][0].pop("image"), 422, "spec.containers[0].image: Required value"),
    (lambda p: p["spec"].update(containers=[]), 422, "spec.containers: Required value"),
    (lambda p: p["metadata"].update(name="Bad_Name"), 422, 'metadata.name: Invalid value: "Bad_Name"'),
    (lambda p: p["spec"].update(priorityClassName="gold"), 403, "no PriorityClass with name gold was found"),
    (lambda p: p["spec"].update(priority=5), 403, "the integer value of priority (5) must not be provided"),
])
def test_admission_rejects_as_the_real_server(api: Http, mutate, code: int, needle: str) -> None:  # type: ignore[no-untyped-def]
    p = pod("p1")
    mutate(p)
    got, body = api("POST", PODS, p)
    assert got == code, body
    assert needle in body["message"]
    if code == 422:
        assert body["reason"] == "Invalid" and body["details"]["causes"]


def test_priority_comes_from_the_class_or_the_global_default(api: Http) -> None:
    pcs = "/apis/scheduling.k8s.io/v1/priorityclasses"
    assert api("POST", pcs, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "high"}, "value": 1000, "preemptionPolicy": "Never"})[0] == 201
    assert api("POST", pcs, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                             "metadata": {"name": "low"}, "value": 10, "globalDefault": True})[0] == 201
    code, body = api("POST", pcs, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                   "metadata": {"name": "low2"}, "value": 5, "globalDefault": True})
    assert code == 422 and "globalDefault low already exists" in body["message"]
    hi = api("POST", PODS, pod("hi", priorityClassName="high"))[1]["spec"]
    assert (hi["priority"], hi["preemptionPolicy"]) == (1000, "Never")
    dflt = api("POST", PODS, pod("dflt"))[1]["spec"]
    assert (dflt["priority"], dflt["priorityClassName"]) == (10, "low")
    assert api("POST", PODS, pod("sys", priorityClassName="system-node-critical"))[1]["spec"]["priority"] == 2000001000


def test_node_allocatable_defaults_to_capacity(api: Http) -> None:
    code, n = api("POST", "/api/v1/nodes", node("n1", cpu="8"))
    assert code == 201 and n["status"]["allocatable"]["cpu"] == "8"
    bad = node("n2")
    bad["status"]["capacity"]["memory"] = "8 gigs"
    assert api("POST", "/api/v1/nodes", bad)[0] == 400


def test_put_with_a_stale_resource_version_is_409(api: Http) -> None:
    _, p = api("POST", PODS, pod("p"))
    p["metadata"]["labels"] = {"a": "1"}
    code, fresh = api("PUT", f"{PODS}/p", p)
    assert code == 200 and int(fresh["metadata"]["resourceVersion"]) > int(p["metadata"]["resourceVersion"])
    code, body = api("PUT", f"{PODS}/p", p)   # the old resourceVersion again
    assert (code, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]


def test_status_subresource_changes_only_status_and_main_ignores_status(api: Http) -> None:
    api("POST", PODS, pod("p"))
    code, body = api("PATCH", f"{PODS}/p", {"status": {"phase": "Running"}, "metadata": {"labels": {"x": "y"}}},
                     ctype="application/merge-patch+json")
    assert code == 200 and body["status"]["phase"] == "Pending" and body["metadata"]["labels"] == {"x": "y"}
    code, body = api("PATCH", f"{PODS}/p/status", {"status": {"phase": "Running"}, "metadata": {"labels": {"z": "1"}}},
                     ctype="application/merge-patch+json")
    assert code == 200 and body["status"]["phase"] == "Running" and body["metadata"]["labels"] == {"x": "y"}


def test_a_pods_generation_is_1_on_create_and_bumped_by_spec_changes_and_deletion(api: Http) -> None:
    """The pod strategy (``PrepareForCreate``/``PrepareForUpdate``) and ``rest.BeforeDelete``: a spec
    change bumps ``metadata.generation``, a label or status write does not, the first deletion does."""
    code, p = api("POST", PODS, pod("gen"))
    assert code == 201 and p["metadata"]["generation"] == 1
    p["metadata"]["labels"] = {"a": "1"}
    code, p = api("PUT", f"{PODS}/gen", p)
    assert code == 200 and p["metadata"]["generation"] == 1
    p["spec"]["containers"][0]["image"] = "busybox:1.37"
    code, p = api("PUT", f"{PODS}/gen", p)
    assert code == 200 and p["metadata"]["generation"] == 2
    code, p = api("PATCH", f"{PODS}/gen/status", {"status": {"phase": "Running"}},
                  ctype="application/merge-patch+json")
    assert code == 200 and p["metadata"]["generation"] == 2
    p["metadata"]["finalizers"] = ["example.com/hold"]
    code, p = api("PUT", f"{PODS}/gen", p)
    assert code == 200
    code, p = api("DELETE", f"{PODS}/gen")
    assert code == 200 and p["metadata"]["deletionTimestamp"] and p["metadata"]["generation"] == 3
    api("PATCH", f"{PODS}/gen", {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")


def test_noop_update_takes_no_resource_version(api: Http) -> None:
    _, p = api("POST", PODS, pod("p"))
    _, same = api("PATCH", f"{PODS}/p", {"metadata": {"labels": {}}}, ctype="application/merge-patch+json")
    assert same["metadata"]["resourceVersion"] == p["metadata"]["resourceVersion"]


@pytest.mark.parametrize(("ctype", "patch", "code", "image"), [
    ("application/merge-patch+json", {"spec": {"activeDeadlineSeconds": 30}}, 200, "busybox:1.36"),
    ("application/merge-patch+json", {"spec": {"containers": [{"name": "c", "image": "x:2"}]}}, 422, None),
    ("application/strategic-merge-patch+json", {"spec": {"containers": [{"name": "c", "image": "x:2"}]}}, 200, "x:2"),
    ("application/strategic-merge-patch+json", {"spec": {"containers": [{"name": "d", "image": "x:2"}]}}, 422, None),
    ("application/json-patch+json", [{"op": "test", "path": "/spec/containers/0/name", "value": "c"},
                                     {"op": "replace", "path": "/spec/containers/0/image", "value": "x:2"}], 200, "x:2"),
    ("application/json-patch+json", [{"op": "test", "path": "/spec/containers/0/name", "value": "zz"}], 422, None),
])
def test_patch_types(api: Http, ctype: str, patch: object, code: int, image: str | None) -> None:
    """Merge patch replaces lists (so dropping container fields is a forbidden pod update), strategic merge
    patches containers by name (adding one is forbidden), JSON patch applies ops and ``test``s."""
    api("POST", PODS, pod("p"))
    got, body = api("PATCH", f"{PODS}/p", patch, ctype=ctype)
    assert got == code, body
    if code == 200:
        assert [c["name"] for c in body["spec"]["containers"]] == ["c"]
        assert body["spec"]["containers"][0]["image"] == image
        assert body["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m"}}


def test_strategic_merge_replaces_node_taints(api: Http) -> None:
    """NodeSpec.taints declares no patch strategy: a strategic merge patch replaces the list, as upstream
    (kubectl taint sends the taints that remain)."""
    n = node("n1")
    n["spec"] = {"taints": [{"key": "a", "effect": "NoSchedule"}]}
    api("POST", "/api/v1/nodes", n)
    code, body = api("PATCH", "/api/v1/nodes/n1", {"spec": {"taints": [{"key": "b", "effect": "NoExecute"}]}},
                     ctype="application/strategic-merge-patch+json")
    assert code == 200 and [t["key"] for t in body["spec"]["taints"]] == ["b"]
    code, body = api("PATCH", "/api/v1/nodes/n1", [{"op": "test", "path": "/spec/taints/0/key", "value": "zzz"}],
                     ctype="application/json-patch+json")
    assert code == 422 and "test failed" in body["message"]


def test_binding_sets_node_once(api: Http) -> None:
    api("POST", PODS, pod("p"))
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    assert api("POST", f"{PODS}/p/binding", binding)[0] == 201
    _, got = api("GET", f"{PODS}/p")
    assert got["spec"]["nodeName"] == "n1"
    assert any(c["type"] == "PodScheduled" and c["status"] == "True" for c in got["status"]["conditions"])
    code, body = api("POST", f"{PODS}/p/binding", {**binding, "target": {"name": "n2"}})
    assert code == 409 and 'already assigned to node "n1"' in body["message"]
    # A missing pod is a 404 (with a body that names it: another name is upstream's 400 first).
    assert api("POST", f"{PODS}/gone/binding", {**binding, "metadata": {"name": "gone"}})[0] == 404
    code, body = api("POST", f"{PODS}/gone/binding", binding)
    assert (code, body["message"]) == (400, "name in URL does not match name in Binding object")
    api("POST", PODS, pod("q"))   # the legacy bindings resource
    assert api("POST", "/api/v1/namespaces/default/bindings", {**binding, "metadata": {"name": "q"}})[0] == 201


def test_binding_clears_the_nominated_node_name(api: Http) -> None:
    """ClearingNominatedNodeNameAfterBinding (kubernetes/kubernetes#132443): the binding clears
    status.nominatedNodeName, whoever set it and wherever the pod went."""
    api("POST", PODS, pod("p"))
    code, _ = api("PATCH", f"{PODS}/p/status", {"status": {"nominatedNodeName": "n2"}},
                  ctype="application/strategic-merge-patch+json")
    assert code == 200 and api("GET", f"{PODS}/p")[1]["status"]["nominatedNodeName"] == "n2"
    binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}}
    assert api("POST", f"{PODS}/p/binding", binding)[0] == 201
    got = api("GET", f"{PODS}/p")[1]
    assert got["spec"]["nodeName"] == "n1" and "nominatedNodeName" not in got["status"]


def test_eviction_respects_pod_disruption_budgets(api: Http, sim: SimulatedCluster) -> None:
    for name in ("a", "b"):
        api("POST", PODS, pod(name, labels={"app": "db"}))
        api("POST", f"{PODS}/{name}/binding", {"target": {"name": "n1"}, "metadata": {"name": name}})
    api("POST", "/apis/policy/v1/namespaces/default/poddisruptionbudgets", {
        "apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db"},
        "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "db"}}}})
    eviction = {"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "a"}}
    assert api("POST", f"{PODS}/a/eviction", eviction)[0] == 201
    code, body = api("POST", f"{PODS}/b/eviction", {**eviction, "metadata": {"name": "b"}})
    assert (code, body["reason"]) == (429, "TooManyRequests")
    assert "needs 1 healthy pods and has 1 currently" in body["details"]["causes"][0]["message"]
    deadline = time.time() + 5
    while time.time() < deadline:   # the simulated disruption controller keeps status current
        st = api("GET", "/apis/policy/v1/namespaces/default/poddisruptionbudgets/db")[1].get("status", {})
        if st.get("currentHealthy") == 1:
            break
        time.sleep(0.05)
    assert (st["expectedPods"], st["currentHealthy"], st["disruptionsAllowed"]) == (1, 1, 0)


def test_delete_with_finalizers_waits_for_them(api: Http) -> None:
    api("POST", "/api/v1/namespaces/default/configmaps", {"apiVersion": "v1", "kind": "ConfigMap",
                                                          "metadata": {"name": "cm", "finalizers": ["x/y"]}})
    code, body = api("DELETE", "/api/v1/namespaces/default/configmaps/cm")
    assert code == 200 and body["metadata"]["deletionTimestamp"]
    assert api("GET", "/api/v1/namespaces/default/configmaps/cm")[0] == 200
    api("PATCH", "/api/v1/namespaces/default/configmaps/cm", {"metadata": {"finalizers": None}},
        ctype="application/merge-patch+json")
    assert api("GET", "/api/v1/namespaces/default/configmaps/cm")[0] == 404


def _binding(name: str, node_name: str = "n1") -> dict[str, object]:
    return {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name}, "target": {"kind": "Node",
                                                                                        "name": node_name}}


def test_label_keys_are_merged_into_the_selectors_on_create(api: Http) -> None:
    """The pod strategy's PrepareForCreate (pkg/registry/core/pod/strategy.go): mutatePodAffinity
    ANDs ``key In (value)`` for matchLabelKeys and ``key NotIn (value)`` for mismatchLabelKeys
    into each (anti-)affinity term's labelSelector, mutateTopologySpreadConstraints the spread
    matchLabelKeys; a key the pod has no label for adds nothing, a term without a selector is left
    alone, and the keys stay."""
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname",
            "matchLabelKeys": ["version", "absent"], "mismatchLabelKeys": ["tenant"]}
    bare = {"topologyKey": "kubernetes.io/hostname", "matchLabelKeys": ["version"]}
    body = pod("lk", labels={"app": "web", "version": "v2", "tenant": "t1"}, affinity={
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term, bare]},
        "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "podAffinityTerm": term}]}},
        topologySpreadConstraints=[{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
                                    "labelSelector": {"matchLabels": {"app": "web"}}, "matchLabelKeys": ["version"]}])
    code, created = api("POST", PODS, body)
    assert code == 201, created
    merged = [{"key": "version", "operator": "In", "values": ["v2"]},
              {"key": "tenant", "operator": "NotIn", "values": ["t1"]}]
    spec = created["spec"]
    required = spec["affinity"]["podAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert required[0]["labelSelector"] == {"matchLabels": {"app": "web"}, "matchExpressions": merged}
    assert required[0]["matchLabelKeys"] == ["version", "absent"] and "labelSelector" not in required[1]
    preferred = spec["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"]
    assert preferred[0]["podAffinityTerm"]["labelSelector"]["matchExpressions"] == merged
    assert spec["topologySpreadConstraints"][0]["labelSelector"] == {
        "matchLabels": {"app": "web"}, "matchExpressions": [{"key": "version", "operator": "In", "values": ["v2"]}]}


def test_a_gated_pod_is_created_scheduling_gated_and_its_gates_can_only_be_removed(api: Http) -> None:
    """The pod strategy's applySchedulingGatedCondition, validateOnlyDeletedSchedulingGates and the
    binding's refusal of a gated pod (scheduler_perf's SchedulingWhileGated barrier reads the condition)."""
    code, created = api("POST", PODS, pod("g", schedulingGates=[{"name": "example.com/a"}, {"name": "example.com/b"}]))
    assert code == 201
    (cond,) = created["status"]["conditions"]
    assert {k: cond[k] for k in ("type", "status", "reason", "message")} == {
        "type": "PodScheduled", "status": "False", "reason": "SchedulingGated",
        "message": "Scheduling is blocked due to non-empty scheduling gates"}
    assert "conditions" not in api("POST", PODS, pod("plain"))[1]["status"]
    code, body = api("POST", f"{PODS}/g/binding", _binding("g"))
    assert code == 409 and body["message"] == ('Operation cannot be fulfilled on pods/binding "g": pod g has '
                                               "non-empty .spec.schedulingGates")
    merge = "application/merge-patch+json"
    code, body = api("PATCH", f"{PODS}/g", {"spec": {"schedulingGates": [
        {"name": "example.com/a"}, {"name": "example.com/b"}, {"name": "example.com/c"}]}}, ctype=merge)
    assert code == 422 and [(c["field"], c["message"]) for c in body["details"]["causes"]] == [
        ("spec.schedulingGates[2].name", "Forbidden: only deletion is allowed, but found new scheduling gate "
                                         "'example.com/c'")]
    assert api("PATCH", f"{PODS}/g", {"spec": {"schedulingGates": [{"name": "example.com/b"}]}}, ctype=merge)[0] == 200
    assert api("PATCH", f"{PODS}/g", {"spec": {"schedulingGates": None}}, ctype=merge)[0] == 200
    assert api("POST", f"{PODS}/g/binding", _binding("g"))[0] == 201


def test_a_pod_with_a_finalizer_is_kept_when_deleted_and_cannot_be_bound(api: Http) -> None:
    """CheckGracefulDelete: a pod not scheduled is deleted at once (grace 0), but a finalizer keeps it,
    with its deletionTimestamp, until the finalizer goes; the binding refuses a pod being deleted
    (scheduler_perf's SchedulingDeletedPodsWithFinalizers)."""
    body = pod("f")
    body["metadata"]["finalizers"] = ["test.k8s.io/finalizer"]
    api("POST", PODS, body)
    code, deleted = api("DELETE", f"{PODS}/f")
    assert code == 200 and deleted["metadata"]["deletionTimestamp"]
    assert deleted["metadata"]["deletionGracePeriodSeconds"] == 0          # not scheduled: no grace period
    code, got = api("GET", f"{PODS}/f")
    assert code == 200 and got["metadata"]["deletionTimestamp"] == deleted["metadata"]["deletionTimestamp"]
    code, refused = api("POST", f"{PODS}/f/binding", _binding("f"))
    assert code == 409 and refused["message"] == ('Operation cannot be fulfilled on pods/binding "f": pod f is '
                                                  "being deleted, cannot be assigned to a host")
    api("PATCH", f"{PODS}/f", {"metadata": {"finalizers": None}}, ctype="application/merge-patch+json")
    assert api("GET", f"{PODS}/f")[0] == 404
    # bound first, then deleted: the pod's own grace period (30 s by default) is recorded
    body["metadata"]["name"] = "b"
    api("POST", PODS, body)
    api("POST", f"{PODS}/b/binding", _binding("b"))
    assert api("DELETE", f"{PODS}/b")[1]["metadata"]["deletionGracePeriodSeconds"] == 30


def test_deletecollection_by_label(api: Http) -> None:
    for i in range(4):
        api("POST", PODS, pod(f"p{i}", labels={"batch": str(i % 2)}))
    assert api("DELETE", PODS, params={"labelSelector": "batch=0"})[0] == 200
    assert sorted(p["metadata"]["name"] for p in api("GET", PODS)[1]["items"]) == ["p1", "p3"]


@pytest.mark.parametrize(("selector", "field", "want"), [
    ("app=web", "", ["a", "b"]),
    ("app in (web,db)", "", ["a", "b", "c"]),
    ("app notin (web)", "", ["c", "d"]),
    ("app", "", ["a", "b", "c"]),
    ("!app", "", ["d"]),
    ("app!=web", "", ["c", "d"]),
    ("", "spec.nodeName=n1", ["a"]),
    ("", "spec.nodeName=", ["b", "c", "d"]),
    ("", "spec.nodeName!=", ["a"]),
    ("app=web", "metadata.name==b", ["b"]),
    ("", "status.phase=Pending", ["a", "b", "c", "d"]),
    ("", "spec.schedulerName=other", ["c"]),
])
def test_list_selectors(api: Http, selector: str, field: str, want: list[str]) -> None:
    api("POST", PODS, pod("a", labels={"app": "web"}))
    api("POST", PODS, pod("b", labels={"app": "web"}))
    api("POST", PODS, pod("c", labels={"app": "db"}, schedulerName="other"))
    api("POST", PODS, pod("d"))
    api("POST", f"{PODS}/a/binding", {"metadata": {"name": "a"}, "target": {"name": "n1"}})
    params = {k: v for k, v in (("labelSelector", selector), ("fieldSelector", field)) if v}
    code, body = api("GET", PODS, params=params)
    assert code == 200 and [p["metadata"]["name"] for p in body["items"]] == want


def test_unsupported_field_selector_is_400(api: Http) -> None:
    code, body = api("GET", PODS, params={"fieldSelector": "spec.foo=bar"})
    assert code == 400 and "spec.foo" in body["message"]


def test_list_limit_and_continue(api: Http) -> None:
    for i in range(5):
        api("POST", PODS, pod(f"p{i}"))
    seen, token, pages = [], None, 0
    while True:
        params = {"limit": "2", **({"continue": token} if token else {})}
        body = api("GET", PODS, params=params)[1]
        seen += [p["metadata"]["name"] for p in body["items"]]
        pages += 1
        token = body["metadata"].get("continue")
        if not token:
            break
    assert seen == [f"p{i}" for i in range(5)] and pages == 3


def test_continue_pages_are_one_snapshot_and_an_expired_token_is_410(api: Http) -> None:
    for i in range(4):
        api("POST", PODS, pod(f"p{i}"))
    first = api("GET", PODS, params={"limit": "2"})[1]
    api("DELETE", f"{PODS}/p3")                      # after the first page: still in the snapshot
    api("POST", PODS, pod("p9"))                      # created after it: not in the snapshot
    rest = api("GET", PODS, params={"limit": "5", "continue": first["metadata"]["continue"]})[1]
    assert [p["metadata"]["name"] for p in rest["items"]] == ["p2", "p3"]
    assert rest["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]
    # Compacted past the first page's revision (history=50): etcd3's inconsistentContinue, with a
    # token that goes on at the latest state.
    for i in range(60):
        api("PATCH", f"{PODS}/p0", {"metadata": {"labels": {"n": str(i)}}}, ctype="application/merge-patch+json")
    code, body = api("GET", PODS, params={"limit": "5", "continue": first["metadata"]["continue"]})
    assert (code, body["reason"]) == (410, "Expired")
    assert body["message"].startswith("The provided continue parameter is too old to display a consistent list")
    latest = api("GET", PODS, params={"limit": "5", "continue": body["metadata"]["continue"]})[1]
    assert [p["metadata"]["name"] for p in latest["items"]] == ["p2", "p9"]


def test_list_at_an_exact_old_resource_version(api: Http) -> None:
    api("POST", PODS, pod("a"))
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]
    api("POST", PODS, pod("b"))
    api("DELETE", f"{PODS}/a")
    body = api("GET", PODS, params={"resourceVersion": rv, "resourceVersionMatch": "Exact"})[1]
    assert [p["metadata"]["name"] for p in body["items"]] == ["a"] and body["metadata"]["resourceVersion"] == rv
    assert [p["metadata"]["name"] for p in api("GET", PODS)[1]["items"]] == ["b"]


def test_watch_from_rv_replays_history_and_expires(api: Http) -> None:
    api("POST", PODS, pod("a"))
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]
    api("POST", PODS, pod("b"))
    api("PATCH", f"{PODS}/a", {"metadata": {"labels": {"x": "1"}}}, ctype="application/merge-patch+json")
    api("DELETE", f"{PODS}/b")
    events = api.watch_lines(PODS, {"resourceVersion": rv, "timeoutSeconds": "1"})
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "b"), ("MODIFIED", "a"), ("DELETED", "b")]
    for i in range(60):                     # history is 50 events: the old RV is compacted away
        api("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": f"cm{i}"}})
        api("PATCH", f"{PODS}/a", {"metadata": {"labels": {"x": str(i)}}}, ctype="application/merge-patch+json")
    events = api.watch_lines(PODS, {"resourceVersion": rv, "timeoutSeconds": "1"})
    assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
    assert events[0]["object"]["reason"] == "Expired"


def test_watch_without_rv_starts_with_the_current_state_and_bookmarks(api: Http) -> None:
    api("POST", PODS, pod("a"))
    events = api.watch_lines(PODS, {"timeoutSeconds": "2", "allowWatchBookmarks": "true"})
    assert events[0]["type"] == "ADDED" and events[0]["object"]["metadata"]["name"] == "a"
    assert any(e["type"] == "BOOKMARK" and e["object"]["metadata"]["resourceVersion"] for e in events)


def test_watch_delivers_deleted_when_an_object_stops_matching(api: Http) -> None:
    api("POST", PODS, pod("a", labels={"app": "web"}))
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]
    api("PATCH", f"{PODS}/a", {"metadata": {"labels": {"app": "db"}}}, ctype="application/merge-patch+json")
    api("PATCH", f"{PODS}/a", {"metadata": {"labels": {"app": "web"}}}, ctype="application/merge-patch+json")
    api("POST", PODS, pod("b", labels={"app": "db"}))
    events = api.watch_lines(PODS, {"resourceVersion": rv, "labelSelector": "app=web", "timeoutSeconds": "1"})
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "a"), ("ADDED", "a")]
    api("POST", PODS, pod("u"))
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]
    api("POST", f"{PODS}/u/binding", {"metadata": {"name": "u"}, "target": {"name": "n1"}})
    events = api.watch_lines(PODS, {"resourceVersion": rv, "fieldSelector": "spec.nodeName=",
                                    "timeoutSeconds": "1"})
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "u")]


def test_live_watch_sees_writes_from_other_clients(api: Http) -> None:
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]

    def writer() -> None:
        time.sleep(0.3)         # the scenario: the writes come while the watch is open
        for i in range(20):
            api("POST", PODS, pod(f"w{i}"))
    t = threading.Thread(target=writer)
    t.start()
    events = api.watch_lines(PODS, {"resourceVersion": rv, "timeoutSeconds": "1"})
    t.join()
    assert [e["object"]["metadata"]["name"] for e in events] == [f"w{i}" for i in range(20)]


def test_events_v1_and_core_events_share_one_store(api: Http) -> None:
    code, _ = api("POST", "/apis/events.k8s.io/v1/namespaces/default/events", {
        "apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"}, "reason": "Scheduled",
        "note": "Successfully assigned default/p to n1", "type": "Normal", "action": "Binding",
        "reportingController": "kopf-scheduler", "reportingInstance": "kopf-scheduler-1",
        "eventTime": "2026-12-02T10:00:00.000000Z", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}})
    assert code == 201
    core = api("GET", "/api/v1/namespaces/default/events/e1")[1]
    assert (core["message"], core["involvedObject"]["name"], core["reportingComponent"]) == (
        "Successfully assigned default/p to n1", "p", "kopf-scheduler")
    listed = api("GET", "/api/v1/namespaces/default/events", params={
        "fieldSelector": "involvedObject.name=p,involvedObject.namespace=default"})[1]["items"]
    assert [e["metadata"]["name"] for e in listed] == ["e1"]


def test_custom_resources_served_validated_and_printed(api: Http) -> None:
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
                    "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                  "additionalPrinterColumns": [{"name": "Size", "type": "integer",
                                                                "jsonPath": ".spec.size"}],
                                  "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                      "spec": {"type": "object", "required": ["size"], "properties": {
                                          "size": {"type": "integer", "minimum": 1, "maximum": 10},
                                          "color": {"type": "string", "enum": ["red", "blue"]}}},
                                      "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}}}]}}
    assert api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    got = api("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")[1]
    assert {c["type"]: c["status"] for c in got["status"]["conditions"]}["Established"] == "True"
    base = "/apis/example.com/v1/namespaces/default/widgets"
    w = {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"},
         "spec": {"size": 3, "junk": 1}, "status": {"ignored": True}}
    code, body = api("POST", base, w)
    assert code == 201 and body["spec"] == {"size": 3} and "status" not in body   # pruned; status ignored on create
    assert body["metadata"]["generation"] == 1
    for spec, needle in [({"size": 11}, "spec.size: Invalid value: 11: spec.size in body should be less than or "
                                        "equal to 10"),
                         ({}, "spec.size: Required value"),
                         ({"size": "big"}, 'spec.size in body must be of type integer: "string"'),
                         ({"size": 2, "color": "green"}, 'spec.color: Unsupported value: "green": supported values: '
                                                         '"red", "blue"')]:
        code, err = api("POST", base, {**w, "metadata": {"name": "bad"}, "spec": spec})
        assert code == 422 and needle in err["message"], err["message"]
    code, body = api("PATCH", f"{base}/w1/status", {"status": {"ok": True}}, ctype="application/merge-patch+json")
    assert code == 200 and body["status"] == {"ok": True} and body["metadata"]["generation"] == 1
    code, body = api("PATCH", f"{base}/w1", {"spec": {"size": 4}}, ctype="application/merge-patch+json")
    assert body["metadata"]["generation"] == 2
    assert api("PATCH", f"{base}/w1", {"spec": {}}, ctype="application/strategic-merge-patch+json")[0] == 415
    table = api("GET", base, accept="application/json;as=Table;v=v1;g=meta.k8s.io")[1]
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Size"]
    assert table["rows"][0]["cells"] == ["w1", 4]
    assert api("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")[0] == 200
    assert api("GET", base)[0] == 404


def test_namespace_delete_cascades(api: Http) -> None:
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    api("POST", "/api/v1/namespaces/team/pods", pod("p"))
    code, body = api("DELETE", "/api/v1/namespaces/team")
    assert code == 200 and body["status"]["phase"] == "Terminating"
    deadline = time.time() + 5
    while api("GET", "/api/v1/namespaces/team")[0] != 404 and time.time() < deadline:
        time.sleep(0.02)
    assert api("GET", "/api/v1/namespaces/team/pods/p")[0] == 404


def test_faults_are_deterministic_and_answer_retry_after() -> None:
    def run() -> list[int]:
        c = SimulatedCluster(faults=Faults(seed=3, errors=[ErrorRule("create", "pods", 0.5, 503)]))
        c.start()
        try:
            api = Http(c)
            codes = [api("POST", PODS, pod(f"p{i}"))[0] for i in range(20)]
            assert api("GET", PODS)[0] == 200          # other verbs untouched
            return codes
        finally:
            c.stop()
    first = run()
    assert first == run() and set(first) == {201, 503}


def test_forced_gone_and_dropped_watches() -> None:
    c = SimulatedCluster(faults=Faults(seed=1, gone=1.0))
    c.start()
    try:
        api = Http(c)
        events = api.watch_lines(PODS, {"resourceVersion": "1", "timeoutSeconds": "1"})
        assert events[0]["type"] == "ERROR" and events[0]["object"]["code"] == 410
        c.faults.gone, c.faults.drop_watch = 0.0, 1.0
        api("POST", PODS, pod("a"))
        t0 = time.time()
        api.watch_lines(PODS, {"timeoutSeconds": "5"})       # cut at the first delivered event
        assert time.time() - t0 < 2
    finally:
        c.stop()


def test_a_dropped_watch_delivers_the_events_ahead_of_the_cut() -> None:
    """A cut connection loses what is in flight, not what went before it: a client that resumes from
    the last resourceVersion it saw catches up, even when each replay is cut somewhere (once the whole
    replayed batch was cut before its first event, so a watch that fell behind never caught up)."""
    c = SimulatedCluster(faults=Faults(seed=2))
    c.start()
    try:
        api = Http(c)
        rv0 = api("GET", PODS)[1]["metadata"]["resourceVersion"]
        for i in range(40):
            api("POST", PODS, pod(f"p{i}"))
        c.faults.drop_watch = 0.2                       # a 40-event replay survives whole 0.01 % of the time
        seen: list[str] = []
        rv, attempts = rv0, 0
        while len(seen) < 40 and attempts < 100:
            attempts += 1
            for ev in api.watch_lines(PODS, {"resourceVersion": rv, "timeoutSeconds": "1"}):
                seen.append(ev["object"]["metadata"]["name"])
                rv = ev["object"]["metadata"]["resourceVersion"]
        assert seen == [f"p{i}" for i in range(40)], (attempts, seen)
        assert attempts < 60
    finally:
        c.stop()


def test_bound_pod_becomes_running_and_terminates_with_delay() -> None:
    c = SimulatedCluster(pod_running_after=0.05, pod_termination_seconds=0.3)
    c.start()
    try:
        api = Http(c)
        api("POST", PODS, pod("p"))
        api("POST", f"{PODS}/p/binding", {"metadata": {"name": "p"}, "target": {"name": "n1"}})
        time.sleep(0.3)
        got = api("GET", f"{PODS}/p")[1]
        assert got["status"]["phase"] == "Running" and got["status"]["podIP"]
        assert api("DELETE", f"{PODS}/p")[1]["metadata"]["deletionTimestamp"]
        assert api("GET", f"{PODS}/p")[0] == 200          # still terminating
        time.sleep(0.6)         # the scenario: the grace period (0.3 s) has passed, twice over
        assert api("GET", f"{PODS}/p")[0] == 404
    finally:
        c.stop()


def test_load_replays_a_kubectl_list_dump(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import yaml
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {**node("n1"), "metadata": {"name": "n1", "uid": "old", "resourceVersion": "42"}},
        {**pod("running"), "metadata": {"name": "running", "namespace": "prod"},
         "spec": {**pod("running")["spec"], "nodeName": "n1"}, "status": {"phase": "Running"}},
        {**pod("bad", cpu="lots"), "metadata": {"name": "bad", "namespace": "prod"}}]}
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(dump))
    c = SimulatedCluster(load=[f])
    c.start()
    try:
        api = Http(c)
        got = api("GET", "/api/v1/namespaces/prod/pods/running")[1]
        assert got["status"]["phase"] == "Running" and got["spec"]["nodeName"] == "n1"   # status kept
        assert api("GET", "/api/v1/nodes/n1")[1]["metadata"]["uid"] != "old"
        assert [(d["metadata"]["name"], e.code) for d, e in c.rejected] == [("bad", 400)]
    finally:
        c.stop()


@pytest.mark.parametrize(("rule", "check"), [
    ("latency=20ms", lambda f: f.latency == 0.02),
    ("latency=200ms-500ms", lambda f: all(0.2 <= f.delay("get", "pods") <= 0.5 for _ in range(50))),
    ("latency:create:pods=1s", lambda f: f.delay("create", "pods") == 1.0 and f.delay("get", "pods") == 0),
    ("error:create:pods/binding=0.05/503", lambda f: f.errors == [ErrorRule("create", "pods/binding", 0.05, 503)]),
    ("error:*:*=1", lambda f: f.error("list", "nodes") == 500),
    ("drop-watch=0.5", lambda f: f.drop_watch == 0.5),
    ("gone=0.1", lambda f: f.gone == 0.1),
])
def test_fault_rules_parse(rule: str, check) -> None:  # type: ignore[no-untyped-def]
    from scheduler.simulator import parse_fault
    f = Faults(seed=0)
    parse_fault(f, rule)
    assert check(f)


@pytest.mark.parametrize("rule", ["latency", "error:create=0.1", "error:a:b=2", "error:a:b=0.1/404", "boom=1",
                                  "latency=fast", "latency=500ms-200ms"])
def test_bad_fault_rules_say_why(rule: str) -> None:
    from scheduler.simulator import parse_fault
    from scheduler.simulator.faults import FaultError
    with pytest.raises(FaultError):
        parse_fault(Faults(), rule)
