"""Validation and defaulting as kube-apiserver does them (issue #16): each invalid body sent raw, with
kube-apiserver's status code and causes (``pkg/apis/core/validation``'s field paths and messages, and
Go's JSON decoder's 400 for a wrong type), and the defaults that the scheduler relies on."""

from __future__ import annotations

import copy
import time
from typing import Any

import pytest

from scheduler.model import parse_node, parse_pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesFitArgs
from scheduler.simulator import SimulatedCluster
from scheduler.simulator.registry.core.validation import (
    validate_binding,
    validate_event,
    validate_lease,
    validate_pod_status,
    validate_pod_update,
)
from tests.builders import run_filter
from tests.simulator.helpers import PODS, Http, node, pod

NODES = "/api/v1/nodes"
LABEL_KEY_REGEX = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                   "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
                   "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
LABEL_VALUE_REGEX = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
                     "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  "
                     "or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 16}


def spec_with(**fields: Any) -> dict[str, Any]:
    return pod("p", **fields)


def container(name: str = "c", **fields: Any) -> dict[str, Any]:
    return {"name": name, "image": "busybox:1.36", **fields}


def anti_affinity(term: dict[str, Any]) -> dict[str, Any]:
    return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def spread(**fields: Any) -> list[dict[str, Any]]:
    return [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"app": "a"}}, **fields}]


# (name, body, code, causes as (field, message) pairs; for a 400, the message's tail)
POD_CREATE = [
    ("nodeSelector is a string (decoding)", spec_with(nodeSelector="ssd"), 400,
     'json: cannot unmarshal string into Go struct field PodSpec.spec.nodeSelector of type map[string]string'),
    ("tolerations is one object (decoding; was a 500 AttributeError)", spec_with(tolerations={"key": "a"}), 400,
     "json: cannot unmarshal object into Go struct field PodSpec.spec.tolerations of type []v1.Toleration"),
    ("maxSkew is a string (decoding)", spec_with(topologySpreadConstraints=spread(maxSkew="1")), 400,
     "json: cannot unmarshal string into Go struct field TopologySpreadConstraint.spec.topologySpreadConstraints"
     ".maxSkew of type int32"),
    ("bad label key", pod("p", labels={"bad key": "v"}), 422,
     [("metadata.labels", f'Invalid value: "bad key": {LABEL_KEY_REGEX}')]),
    ("bad label value", pod("p", labels={"app": "-x-"}), 422,
     [("metadata.labels", f'Invalid value: "-x-": {LABEL_VALUE_REGEX}')]),
    ("duplicate container names", spec_with(containers=[container(), container()]), 422,
     [("spec.containers[1].name", 'Duplicate value: "c"')]),
    ("maxSkew 0", spec_with(topologySpreadConstraints=spread(maxSkew=0)), 422,
     [("spec.topologySpreadConstraints[0].maxSkew", "Invalid value: 0: must be greater than zero")]),
    ("whenUnsatisfiable Maybe", spec_with(topologySpreadConstraints=spread(whenUnsatisfiable="Maybe")), 422,
     [("spec.topologySpreadConstraints[0].whenUnsatisfiable",
       'Unsupported value: "Maybe": supported values: "DoNotSchedule", "ScheduleAnyway"')]),
    ("repeated {topologyKey, whenUnsatisfiable}",
     spec_with(topologySpreadConstraints=spread() + spread(maxSkew=2)), 422,
     [("spec.topologySpreadConstraints[1].{topologyKey, whenUnsatisfiable}",
       'Duplicate value: "{zone, DoNotSchedule}"')]),
    ("minDomains with ScheduleAnyway",
     spec_with(topologySpreadConstraints=spread(whenUnsatisfiable="ScheduleAnyway", minDomains=2)), 422,
     [("spec.topologySpreadConstraints[0].minDomains",
       "Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway")]),
    ("anti-affinity term without topologyKey",
     spec_with(affinity=anti_affinity({"labelSelector": {"matchLabels": {"app": "a"}}})), 422,
     [("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
       "Required value: can not be empty"),
      ("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
       'Invalid value: "": name part must be non-empty'),
      ("spec.affinity.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey",
       f'Invalid value: "": {LABEL_KEY_REGEX}')]),
    ("toleration with Exists and a value",
     spec_with(tolerations=[{"key": "a", "operator": "Exists", "value": "b"}]), 422,
     [("spec.tolerations[0].operator",
       'Invalid value: {"key":"a","operator":"Exists","value":"b"}: value must be empty when `operator` is '
       "'Exists'")]),
    ("toleration without key nor Exists", spec_with(tolerations=[{"operator": "Equal", "value": "b"}]), 422,
     [("spec.tolerations[0].operator", 'Invalid value: "Equal": operator must be Exists when `key` is empty, '
                                       'which means "match all values and all keys"')]),
    ("tolerationSeconds without NoExecute",
     spec_with(tolerations=[{"key": "a", "operator": "Exists", "effect": "NoSchedule", "tolerationSeconds": 5}]),
     422, [("spec.tolerations[0].effect",
            "Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set")]),
    ("toleration effect Sometimes", spec_with(tolerations=[{"key": "a", "operator": "Exists",
                                                            "effect": "Sometimes"}]), 422,
     [("spec.tolerations[0].effect",
       'Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"')]),
    ("nodeSelector with a bad key", spec_with(nodeSelector={"a b": "x"}), 422,
     [("spec.nodeSelector", f'Invalid value: "a b": {LABEL_KEY_REGEX}')]),
    ("preferred weight 0", spec_with(affinity={"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 0, "podAffinityTerm": {"topologyKey": "zone"}}]}}), 422,
     [("spec.affinity.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
       "Invalid value: 0: must be in the range 1-100")]),
    ("required node affinity without terms", spec_with(affinity={"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}), 422,
     [("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
       "Required value: must have at least one node selector term")]),
    ("bad nodeName", spec_with(nodeName="Node_1"), 422,
     [("spec.nodeName", 'Invalid value: "Node_1": a lowercase RFC 1123 subdomain must consist of lower case '
                        "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character "
                        "(e.g. 'example.com', regex used for validation is "
                        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")]),
    ("duplicate scheduling gates", spec_with(schedulingGates=[{"name": "a"}, {"name": "a"}]), 422,
     [("spec.schedulingGates[1].name", 'Duplicate value: "a"')]),
    ("containerPort 0", spec_with(containers=[container(ports=[{"containerPort": 0}])]), 422,
     [("spec.containers[0].ports[0].containerPort", "Invalid value: 0: must be between 1 and 65535, inclusive")]),
    # AccumulateUniqueHostPorts: a protocol/hostIP/hostPort triple is taken once across the containers,
    # and within each init container (which upstream names index 0, as it checks each one alone).
    ("a host port taken twice on one host IP",
     spec_with(containers=[container(ports=[{"containerPort": 8080, "hostPort": 80, "hostIP": "10.0.0.1"}]),
                           container("d", ports=[{"containerPort": 9090, "hostPort": 80, "hostIP": "10.0.0.1"}])]),
     422, [("spec.containers[1].ports[0].hostPort", 'Duplicate value: "TCP/10.0.0.1/80"')]),
    ("an init container's host port taken twice",
     spec_with(initContainers=[container("i"), container("j", ports=[{"containerPort": 1, "hostPort": 53},
                                                                     {"containerPort": 2, "hostPort": 53}])]),
     422, [("spec.initContainers[0].ports[1].hostPort", 'Duplicate value: "TCP//53"')]),
]


@pytest.mark.parametrize(("name", "body", "code", "want"), POD_CREATE, ids=[c[0] for c in POD_CREATE])
def test_invalid_pods_are_refused_as_kube_apiserver_refuses_them(api: Http, name: str, body: dict[str, Any],
                                                                 code: int, want: Any) -> None:
    got_code, status = api("POST", PODS, body)
    assert got_code == code, (name, status)
    assert status["kind"] == "Status"
    if code == 400:
        assert status["reason"] == "BadRequest"
        assert status["message"] == f'Pod in version "v1" cannot be handled as a Pod: {want}'
        return
    assert status["reason"] == "Invalid"
    causes = [(c["field"], c["message"]) for c in status["details"]["causes"]]
    assert causes == want, name
    text = ", ".join(f"{f}: {m}" for f, m in want)
    assert status["message"] == 'Pod "p" is invalid: ' + (f"[{text}]" if len(want) > 1 else text)
    assert api("GET", f"{PODS}/p")[0] == 404


def test_a_valid_pod_with_every_checked_field_is_accepted(api: Http) -> None:
    body = pod("ok", labels={"app": "a", "example.com/tier": "web"}, nodeSelector={"disk": "ssd"},
               tolerations=[{"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
                            {"operator": "Exists"}],
               affinity={**anti_affinity({"labelSelector": {"matchLabels": {"app": "a"}}, "topologyKey": "zone"}),
                         "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                             {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}]}}},
               topologySpreadConstraints=spread() + spread(whenUnsatisfiable="ScheduleAnyway"),
               schedulingGates=[{"name": "example.com/gate"}])
    code, got = api("POST", PODS, body)
    assert code == 201, got
    api("DELETE", f"{PODS}/ok", params={"gracePeriodSeconds": "0"})


@pytest.mark.parametrize(("name", "limits", "node_alloc", "reason"), [
    # SetDefaults_Pod: limits without requests become the requests, for every resource.
    ("limits-only cpu", {"cpu": "8"}, {"cpu": "4"}, "Insufficient cpu"),
    ("limits-only extended resource", {"nvidia.com/gpu": "1"}, {"cpu": "4"}, "Insufficient nvidia.com/gpu"),
])
def test_a_limits_only_pod_is_defaulted_and_a_node_too_small_refuses_it(
        api: Http, name: str, limits: dict[str, str], node_alloc: dict[str, str], reason: str) -> None:
    body = pod("lim", containers=[container(resources={"limits": limits})])
    code, stored = api("POST", PODS, body)
    assert code == 201, stored
    try:
        assert stored["spec"]["containers"][0]["resources"]["requests"] == limits, name
        p = parse_pod(stored)
        n = parse_node({"metadata": {"name": "small"},
                        "status": {"allocatable": {"memory": "8Gi", "pods": "110", **node_alloc}}})
        fit = noderesources.NodeResourcesFit(NodeResourcesFitArgs())
        (status,) = run_filter(fit, p, [n])
        assert status is not None and reason in status.reasons, name
    finally:
        api("DELETE", f"{PODS}/lim", params={"gracePeriodSeconds": "0"})


@pytest.mark.parametrize("host_port", [None, 8080])
def test_ports_sharing_a_container_port_on_different_host_ips_are_accepted(api: Http, host_port: int | None) -> None:
    """#32: two ports of one container share ``containerPort`` 8080 and differ in ``hostIP`` (with or
    without a ``hostPort``). kube-apiserver accepts it (only protocol/hostIP/hostPort must be unique);
    created, then patched and replaced, it is answered 2xx, never 500."""
    ports = [{"containerPort": 8080, "hostIP": ip, **({"hostPort": host_port} if host_port else {})}
             for ip in ("10.0.0.1", "10.0.0.2")]
    name = f"two-ips-{host_port or 0}"
    body = pod(name, containers=[container(ports=ports)])
    code, stored = api("POST", PODS, body)
    assert code == 201, stored
    assert [(p["containerPort"], p["hostIP"], p["protocol"]) for p in stored["spec"]["containers"][0]["ports"]] == \
        [(8080, "10.0.0.1", "TCP"), (8080, "10.0.0.2", "TCP")]
    code, patched = api("PATCH", f"{PODS}/{name}", {"metadata": {"labels": {"a": "b"}}},
                        ctype="application/strategic-merge-patch+json")
    assert code == 200, patched
    code, replaced = api("PUT", f"{PODS}/{name}", patched)
    assert code == 200 and len(replaced["spec"]["containers"][0]["ports"]) == 2, replaced
    api("DELETE", f"{PODS}/{name}", params={"gracePeriodSeconds": "0"})


def test_explicit_requests_are_kept_beside_limits(api: Http) -> None:
    body = pod("both", containers=[container(resources={"limits": {"cpu": "2", "memory": "1Gi"},
                                                        "requests": {"cpu": "1"}},
                                             ports=[{"containerPort": 80}])])
    code, stored = api("POST", PODS, body)
    assert code == 201, stored
    assert stored["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1", "memory": "1Gi"}
    assert stored["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert stored["spec"]["enableServiceLinks"] is True and stored["spec"]["schedulerName"] == "default-scheduler"
    api("DELETE", f"{PODS}/both", params={"gracePeriodSeconds": "0"})


def taints(*ts: dict[str, str]) -> dict[str, Any]:
    n = node("n1")
    n["spec"] = {"taints": list(ts)}
    return n


NODE_CREATE = [
    ("duplicate taints by key and effect",
     taints({"key": "a", "effect": "NoSchedule"}, {"key": "a", "value": "x", "effect": "NoSchedule"}), 422,
     [("spec.taints[1]", 'Duplicate value: {"key":"a","value":"x","effect":"NoSchedule"}: taints must be unique '
                         "by key and effect pair")]),
    ("taint without effect", taints({"key": "a"}), 422, [("spec.taints[0].effect", "Required value")]),
    ("taint with a bad key", taints({"key": "a b", "effect": "NoSchedule"}), 422,
     [("spec.taints[0].key", f'Invalid value: "a b": {LABEL_KEY_REGEX}')]),
    ("node label with a bad value", node("n1", labels={"zone": "a b"}), 422,
     [("metadata.labels", f'Invalid value: "a b": {LABEL_VALUE_REGEX}')]),
    ("taints is a map (decoding)", {**node("n1"), "spec": {"taints": {"key": "a"}}}, 400,
     "json: cannot unmarshal object into Go struct field NodeSpec.spec.taints of type []v1.Taint"),
]


@pytest.mark.parametrize(("name", "body", "code", "want"), NODE_CREATE, ids=[c[0] for c in NODE_CREATE])
def test_invalid_nodes_are_refused(api: Http, name: str, body: dict[str, Any], code: int, want: Any) -> None:
    got_code, status = api("POST", NODES, body)
    assert got_code == code, (name, status)
    if code == 400:
        assert status["message"] == f'Node in version "v1" cannot be handled as a Node: {want}'
        return
    assert [(c["field"], c["message"]) for c in status["details"]["causes"]] == want, name


def test_a_node_carries_every_node_info_field(api: Http) -> None:
    code, got = api("POST", NODES, node("info"))
    assert code == 201, got
    info = got["status"]["nodeInfo"]
    for key in ("machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
                "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture"):
        assert isinstance(info.get(key), str), key
    assert info["bootID"] and info["machineID"] and info["systemUUID"]
    api("DELETE", f"{NODES}/info")


# --- the validators the server runs on updates, statuses, bindings, events and leases -------------

TOLERATION = {"key": "a", "operator": "Equal", "value": "b", "effect": "NoExecute", "tolerationSeconds": 5}


@pytest.mark.parametrize(("name", "new_tolerations", "ok"), [
    ("unchanged", [TOLERATION], True),
    ("tolerationSeconds changed", [{**TOLERATION, "tolerationSeconds": 60}], True),
    ("one added", [TOLERATION, {"key": "c", "operator": "Exists"}], True),
    ("removed", [], False),
    ("value changed", [{**TOLERATION, "value": "z"}], False),
])
def test_pod_updates_may_only_add_tolerations(name: str, new_tolerations: list[dict[str, Any]], ok: bool) -> None:
    old = pod("p", tolerations=[TOLERATION])
    new = copy.deepcopy(old)
    new["spec"]["tolerations"] = new_tolerations
    got = validate_pod_update(new, old)
    want = [] if ok else [("spec.tolerations", "FieldValueForbidden",
                           "Forbidden: existing toleration can not be modified except its tolerationSeconds")]
    assert got == want, name


def test_a_nominated_node_name_must_be_a_node_name() -> None:
    assert validate_pod_status({"status": {"nominatedNodeName": "node-1"}}) == []
    (cause,) = validate_pod_status({"status": {"nominatedNodeName": "Node 1"}})
    assert cause[0] == "status.nominatedNodeName" and cause[2].startswith('Invalid value: "Node 1": a lowercase')


def test_bindings() -> None:
    from scheduler.simulator.apierrors import ApiError
    with pytest.raises(ApiError) as e:
        validate_binding("p", {"metadata": {"name": "q"}, "target": {"kind": "Node", "name": "n"}})
    assert (e.value.code, e.value.message) == (400, "name in URL does not match name in Binding object")
    assert validate_binding("p", {"metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n"}}) == []
    assert validate_binding("p", {"metadata": {"name": "p"}, "target": {"kind": "Pod", "name": "n"}}) == [
        ("target.kind", "FieldValueNotSupported", 'Unsupported value: "Pod": supported values: "Node", "<empty>"')]
    assert validate_binding("p", {"metadata": {"name": "p"}, "target": {}}) == [
        ("target.name", "FieldValueRequired", "Required value")]


GOOD_EVENT = {"metadata": {"name": "e", "namespace": "default"}, "eventTime": "2026-12-04T00:00:00.000000Z",
              "reportingController": "kopf-scheduler", "reportingInstance": "kopf-scheduler-x", "action": "Binding",
              "reason": "Scheduled", "type": "Normal", "note": "ok",
              "regarding": {"kind": "Pod", "namespace": "default", "name": "p"}}


@pytest.mark.parametrize(("name", "change", "want"), [
    ("valid", {}, []),
    ("no eventTime", {"eventTime": None}, [("eventTime", "FieldValueRequired", "Required value")]),
    ("no reportingController", {"reportingController": ""},
     [("reportingController", "FieldValueRequired", "Required value"),
      ("reportingController", "FieldValueInvalid", 'Invalid value: "": name part must be non-empty'),
      ("reportingController", "FieldValueInvalid", f'Invalid value: "": {LABEL_KEY_REGEX}')]),
    ("no action", {"action": ""}, [("action", "FieldValueRequired", "Required value")]),
    ("type Bogus", {"type": "Bogus"}, [("type", "FieldValueInvalid", 'Invalid value: "": has invalid value: Bogus')]),
    ("over-long note", {"note": "x" * 1025},
     [("message", "FieldValueInvalid", 'Invalid value: "": can have at most 1024 characters')]),
    ("series.count 1", {"series": {"count": 1, "lastObservedTime": "2026-12-04T00:00:00.000000Z"}},
     [("series.count", "FieldValueInvalid", 'Invalid value: "": should be at least 2')]),
])
def test_events_k8s_io_events(name: str, change: dict[str, Any], want: list[tuple[str, str, str]]) -> None:
    event = {**GOOD_EVENT, **change}
    assert validate_event(event, "events.k8s.io", "default") == want, name


@pytest.mark.parametrize(("name", "spec", "want"), [
    ("valid", {"holderIdentity": "a", "leaseDurationSeconds": 15}, []),
    ("duration 0", {"leaseDurationSeconds": 0},
     [("spec.leaseDurationSeconds", "FieldValueInvalid", "Invalid value: 0: must be greater than 0")]),
    ("negative transitions", {"leaseTransitions": -1},
     [("spec.leaseTransitions", "FieldValueInvalid", "Invalid value: -1: must be greater than or equal to 0")]),
])
def test_leases(name: str, spec: dict[str, Any], want: list[tuple[str, str, str]]) -> None:
    assert validate_lease({"spec": spec}) == want, name


# --- the same validators, through the server ----------------------------------------------------

EVENTS = "/apis/events.k8s.io/v1/namespaces/default/events"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def test_updates_statuses_bindings_events_and_leases_are_validated(sim: SimulatedCluster, api: Http) -> None:
    code, _ = api("POST", PODS, pod("upd", tolerations=[TOLERATION]))
    assert code == 201
    # Removing a toleration (merge patch replaces the list) is refused; adding one is not.
    code, status = api("PATCH", f"{PODS}/upd", {"spec": {"tolerations": []}}, ctype="application/merge-patch+json")
    assert code == 422 and status["details"]["causes"][0] == {
        "reason": "FieldValueForbidden", "field": "spec.tolerations",
        "message": "Forbidden: existing toleration can not be modified except its tolerationSeconds"}
    # (The stored pod also has the not-ready/unreachable tolerations admission added: keep them too.)
    added = [*api("GET", f"{PODS}/upd")[1]["spec"]["tolerations"], {"key": "c", "operator": "Exists"}]
    assert api("PATCH", f"{PODS}/upd", {"spec": {"tolerations": added}},
               ctype="application/merge-patch+json")[0] == 200
    # An invalid nominatedNodeName in a status patch.
    code, status = api("PATCH", f"{PODS}/upd/status", {"status": {"nominatedNodeName": "Bad Node"}},
                       ctype="application/merge-patch+json")
    assert code == 422 and status["details"]["causes"][0]["field"] == "status.nominatedNodeName"
    # Bindings: another pod's name in the body, a target that is not a Node, a wrong type.
    code, status = api("POST", f"{PODS}/upd/binding", {"metadata": {"name": "other"}, "target": {"name": "n"}})
    assert (code, status["message"]) == (400, "name in URL does not match name in Binding object")
    code, status = api("POST", f"{PODS}/upd/binding", {"metadata": {"name": "upd"},
                                                       "target": {"kind": "Pod", "name": "n"}})
    assert code == 422 and status["details"]["causes"][0]["field"] == "target.kind"
    code, status = api("POST", f"{PODS}/upd/binding", {"metadata": {"name": "upd"}, "target": "n"})
    assert code == 400 and "cannot unmarshal string into Go struct field Binding.target of type v1.ObjectReference" \
        in status["message"]
    # events.k8s.io/v1: strict validation of new events.
    event = {**GOOD_EVENT, "metadata": {"name": "e1"}}
    assert api("POST", EVENTS, event)[0] == 201
    code, status = api("POST", EVENTS, {**event, "metadata": {"name": "e2"}, "type": "Bogus", "action": ""})
    assert code == 422 and status["message"].startswith('Event.events.k8s.io "e2" is invalid: [')
    assert [c["field"] for c in status["details"]["causes"]] == ["action", "type"]
    # Leases.
    lease = {"metadata": {"name": "l1"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 0}}
    code, status = api("POST", LEASES, lease)
    assert code == 422 and status["details"]["causes"][0]["message"] == "Invalid value: 0: must be greater than 0"
    code, status = api("POST", LEASES, {"metadata": {"name": "l2"}, "spec": {"renewTime": "yesterday"}})
    assert code == 400 and status["message"] == (
        'Lease in version "v1" cannot be handled as a Lease: parsing time "yesterday" as '
        '"2006-01-02T15:04:05.000000Z07:00": cannot parse "yesterday" as "2006"')
    api("DELETE", f"{PODS}/upd", params={"gracePeriodSeconds": "0"})


def test_a_custom_resource_put_needs_a_resource_version(sim: SimulatedCluster, api: Http) -> None:
    from scheduler.profiles.crd import crd
    api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    path = "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles"
    deadline = time.monotonic() + 10
    while api("GET", path)[0] != 200 and time.monotonic() < deadline:
        time.sleep(0.05)
    body = {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "p"}, "spec": {"schedulerName": "x"}}
    code, created = api("POST", path, body)
    assert code == 201, created
    code, status = api("PUT", f"{path}/p", body)
    assert code == 422 and status["details"]["causes"][0] == {
        "reason": "FieldValueInvalid", "field": "metadata.resourceVersion",
        "message": "Invalid value: 0x0: must be specified for an update"}
    with_rv = {**body, "metadata": {"name": "p", "resourceVersion": created["metadata"]["resourceVersion"]}}
    assert api("PUT", f"{path}/p", with_rv)[0] == 200
