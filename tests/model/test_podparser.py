"""``PodParser``: every parse equals a full ``parse_pod`` of the same body, field by field; the
earlier parse is reused only for status-only updates (and ``nodeName``) or a sibling from the same
template (name, uid, creation timestamp), never across a resize."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.errors import ParseError
from scheduler.model import Pod, parse_pod
from scheduler.model.nodefeatures import REGISTRY, active_registry
from scheduler.model.podparser import PodParser
from scheduler.model.podresources import RequestOptions


def pending() -> dict[str, Any]:
    """A pod as the simulated cluster serves it on ADDED (defaulted, no status but the phase)."""
    return {
        "metadata": {"name": "p", "namespace": "ns", "uid": "u1", "resourceVersion": "10",
                     "creationTimestamp": "2026-01-01T00:00:00Z", "labels": {"app": "a"},
                     "annotations": {"note": "x"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs",
                                          "uid": "o1", "controller": True}]},
        "spec": {"containers": [{"name": "c", "image": "pause",
                                 "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}},
                                 "ports": [{"containerPort": 80, "hostPort": 8080}]}],
                 "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                     "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                             "values": ["n1"]}]}]}}},
                 "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                  "tolerationSeconds": 300}],
                 "schedulerName": "default-scheduler", "priority": 0},
        "status": {"phase": "Pending"},
    }


def bound(b: dict[str, Any]) -> None:
    """The Binding's update: nodeName and the PodScheduled condition."""
    b["spec"]["nodeName"] = "n1"
    b["status"]["conditions"] = [{"type": "PodScheduled", "status": "True"}]


def running(b: dict[str, Any]) -> None:
    """The simulated kubelet's update: Running, Ready, container statuses echoing the spec."""
    bound(b)
    b["status"].update({
        "phase": "Running", "startTime": "2026-01-01T00:00:01Z", "podIP": "10.0.0.1", "qosClass": "Burstable",
        "conditions": [{"type": t, "status": "True"} for t in ("PodScheduled", "Initialized", "Ready")],
        "containerStatuses": [{"name": "c", "ready": True, "state": {"running": {}},
                               "allocatedResources": {"cpu": "100m", "memory": "1Gi"},
                               "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}]})


def set_in(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def change(b: dict[str, Any]) -> None:
        *head, last = path.split(".")
        d = b
        for k in head:
            d = d.setdefault(k, {})
        d[last] = value
    return change


def both(*changes: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def change(b: dict[str, Any]) -> None:
        for c in changes:
            c(b)
    return change


def fields(p: Pod) -> dict[str, Any]:
    return {name: getattr(p, name) for name in Pod.__slots__}


# (case, the update after the ADDED, whether the earlier parse may be reused)
CASES: list[tuple[str, Callable[[dict[str, Any]], None], bool]] = [
    ("binding: nodeName and PodScheduled", bound, True),
    ("kubelet: Running, start time, container statuses", running, True),
    ("only the resourceVersion and an unread annotation", both(set_in("metadata.resourceVersion", "11"),
                                                               set_in("metadata.annotations", {"other": "y"})), True),
    ("nominated node name", set_in("status.nominatedNodeName", "n2"), True),
    ("preempted by the scheduler", set_in("status.conditions", [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]), True),
    ("resource claim statuses", set_in("status.resourceClaimStatuses", [
        {"name": "gpu", "resourceClaimName": "p-gpu-x"}]), True),
    ("succeeded", set_in("status.phase", "Succeeded"), True),
    ("labels changed", set_in("metadata.labels", {"app": "b"}), False),
    ("explain annotation set", set_in("metadata.annotations", {"scheduling.kopf-scheduler.io/explain": "true"}),
     False),
    ("deletion timestamp", set_in("metadata.deletionTimestamp", "2026-01-01T00:01:00Z"), False),
    ("owner references dropped", set_in("metadata.ownerReferences", []), False),
    ("a toleration added", set_in("spec.tolerations", [{"key": "k", "operator": "Exists"}]), False),
    ("scheduling gates", set_in("spec.schedulingGates", [{"name": "g"}]), False),
    ("container requests resized", set_in("spec.containers", [{"name": "c", "image": "pause", "resources": {
        "requests": {"cpu": "200m"}}}]), False),
    # In-place resize: the status's allocated or actuated requests differ from the spec's, so the
    # requests depend on the status (podresources.status_affects_requests): always a full parse.
    ("resize allocated above the spec", both(running, set_in("status.containerStatuses", [
        {"name": "c", "allocatedResources": {"cpu": "500m", "memory": "1Gi"}}])), False),
    ("pod-level status resources", both(running, set_in("status.resources", {"requests": {"cpu": "1"}})), False),
    ("resize infeasible", set_in("status.conditions", [
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]), False),
]


@pytest.mark.parametrize(("name", "change", "reused"), CASES, ids=[c[0] for c in CASES])
def test_update_equals_full_parse(name: str, change: Callable[[dict[str, Any]], None], reused: bool) -> None:
    parser = PodParser()
    first = pending()
    assert fields(parser.parse(first)) == fields(parse_pod(first))
    assert parser.hits == 0
    updated = copy.deepcopy(first)
    change(updated)
    got = parser.parse(updated)
    assert fields(got) == fields(parse_pod(updated)), name
    assert parser.hits == (1 if reused else 0), name
    # and once more from the updated state: the memory follows the last parse
    again = copy.deepcopy(updated)
    again["metadata"]["resourceVersion"] = "99"
    assert fields(parser.parse(again)) == fields(parse_pod(again)), name


def test_a_chain_of_updates_matches_full_parses() -> None:
    """ADDED, Binding, kubelet, resize, resize done, preempted: each parse equals a full one."""
    parser = PodParser()
    b = pending()
    steps = [bound, running,
             set_in("status.containerStatuses", [{"name": "c", "allocatedResources": {"cpu": "2"}}]),
             set_in("status.containerStatuses", [{"name": "c", "allocatedResources": {"cpu": "100m", "memory": "1Gi"},
                                                  "resources": {"requests": {"cpu": "100m", "memory": "1Gi"}}}]),
             set_in("status.conditions", [{"type": "DisruptionTarget", "status": "True",
                                           "reason": "PreemptionByScheduler"}])]
    parser.parse(b)
    for step in steps:
        step(b)
        assert fields(parser.parse(b)) == fields(parse_pod(b))
    # bound, running, (resize: full), back to the spec (the pod's template), preempted
    assert parser.hits == 4


def test_a_bad_status_raises_as_parse_pod_does() -> None:
    parser = PodParser()
    b = pending()
    parser.parse(b)
    b["status"]["resourceClaimStatuses"] = "not a list"
    with pytest.raises(ParseError) as full:
        parse_pod(b)
    with pytest.raises(ParseError) as got:
        parser.parse(b)
    assert str(got.value) == str(full.value)
    assert len(parser) == 0                         # nothing kept for a pod it cannot read


def test_options_and_registry_are_part_of_the_key() -> None:
    parser = PodParser()
    b = pending()
    parser.parse(b)
    other = RequestOptions(use_status_resources=False)
    running(b)
    assert fields(parser.parse(b, other)) == fields(parse_pod(b, other))
    assert parser.hits == 0
    previous = active_registry(tuple(f for f in REGISTRY if f.name != "PerPodPIDLimit"))
    try:
        b["status"]["phase"] = "Succeeded"
        assert fields(parser.parse(b, other)) == fields(parse_pod(b, other))
        assert parser.hits == 0
    finally:
        active_registry(previous)


def test_not_json_and_forget() -> None:
    parser = PodParser(templates=0)                 # no template to fall back on
    b = pending()
    b["spec"]["priority"] = 2**70                  # orjson cannot encode it: a full parse each time
    with pytest.raises(ParseError):
        parser.parse(b)
    b = pending()
    parser.parse(b)
    assert len(parser) == 1
    parser.forget("u1")
    assert len(parser) == 0
    running(b)
    parser.parse(b)
    assert parser.hits == 0


def sibling(name: str, **meta: Any) -> dict[str, Any]:
    b = pending()
    b["metadata"].update({"name": name, "uid": f"uid-{name}", "creationTimestamp": "2026-01-01T00:00:09Z", **meta})
    return b


# (case, the sibling, whether the first pod's parse may be its template)
SIBLINGS: list[tuple[str, dict[str, Any], bool]] = [
    ("same template: name, uid, creation time differ", sibling("q"), True),
    ("without a uid (the key is namespace/name)", sibling("r", uid=None), True),
    ("another namespace (pod affinity defaults to it)", sibling("s", namespace="other"), False),
    ("other labels (spread's matchLabelKeys read them)", sibling("t", labels={"app": "z"}), False),
    ("another owner", sibling("u", ownerReferences=[]), False),
]


@pytest.mark.parametrize(("name", "body", "reused"), SIBLINGS, ids=[c[0] for c in SIBLINGS])
def test_a_sibling_from_the_same_template(name: str, body: dict[str, Any], reused: bool) -> None:
    parser = PodParser()
    parser.parse(pending())
    got = parser.parse(body)
    assert fields(got) == fields(parse_pod(body)), name
    assert parser.hits == (1 if reused else 0), name
    assert got.uid == (body["metadata"]["uid"] or f"ns/{body['metadata']['name']}")


def test_templates_are_bounded_least_recently_used_first() -> None:
    parser = PodParser(templates=1)
    parser.parse(pending())
    parser.parse(sibling("a", labels={"app": "other"}))     # a second template pushes the first out
    parser.parse(sibling("b"))
    assert parser.hits == 0
    parser.parse(sibling("c"))                               # b's parse is the template now
    assert parser.hits == 1
