"""``model.podgroup``: a PodGroup as the API serves it, parsed once into the typed model, and the pod's
``spec.schedulingGroup`` read into ``Pod.scheduling_group``."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.errors import ParseError
from scheduler.model import PodGroup, PodGroupCondition, parse_pod, parse_pod_group
from scheduler.model.podgroup import POD_GROUP_INITIALLY_SCHEDULED


def served(spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": "train", "namespace": "ml", "uid": "u-1", "resourceVersion": "42"},
            "spec": spec, **({"status": status} if status is not None else {})}


def test_a_gang_with_its_quorum_disruption_mode_priority_and_conditions() -> None:
    cond = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/4 nodes are available", "lastTransitionTime": "2026-12-07T04:00:00Z"}
    got = parse_pod_group(served({"schedulingPolicy": {"gang": {"minCount": 4}}, "disruptionMode": {"all": {}},
                                  "priorityClassName": "high", "priority": 1000,
                                  "workloadRef": {"workloadName": "job-1", "templateName": "workers"}},
                                 {"conditions": [cond]}))
    assert got == PodGroup(namespace="ml", name="train", uid="u-1", policy="Gang", min_count=4,
                           disruption_mode="All", priority=1000, priority_class_name="high",
                           workload_name="job-1", template_name="workers",
                           conditions=(PodGroupCondition(POD_GROUP_INITIALLY_SCHEDULED, "False", "Unschedulable",
                                                         "0/4 nodes are available", "2026-12-07T04:00:00Z"),),
                           resource_version="42")
    assert got.key == "ml/train" and got.is_gang
    assert got.condition(POD_GROUP_INITIALLY_SCHEDULED) is got.conditions[0]
    assert got.condition("DisruptionTarget") is None


def test_a_basic_group_has_no_quorum_and_the_defaults() -> None:
    got = parse_pod_group(served({"schedulingPolicy": {"basic": {}}, "disruptionMode": {"single": {}}}))
    assert (got.policy, got.min_count, got.disruption_mode, got.priority, got.is_gang) == \
        ("Basic", 0, "Single", 0, False)


@pytest.mark.parametrize(("spec", "field"), [
    ({"schedulingPolicy": {}}, "spec.schedulingPolicy"),
    ({"schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}}, "spec.schedulingPolicy"),
    ({"schedulingPolicy": {"gang": {"minCount": 0}}}, "spec.schedulingPolicy.gang.minCount"),
    ({"schedulingPolicy": {"gang": {"minCount": "4"}}}, "spec.schedulingPolicy.gang.minCount"),
    ({"schedulingPolicy": {"gang": {"minCount": 2}}, "disruptionMode": {"single": {}, "all": {}}},
     "spec.disruptionMode"),
    ({"schedulingPolicy": {"gang": {"minCount": 2}}, "priority": "high"}, "spec.priority"),
])
def test_what_would_make_the_model_lie_is_refused_naming_the_field(spec: dict[str, Any], field: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_pod_group(served(spec))
    assert e.value.obj == "PodGroup ml/train"
    assert e.value.field == field


def test_a_pods_scheduling_group_is_its_pod_group_name() -> None:
    pod: dict[str, Any] = {"metadata": {"name": "w-0", "namespace": "ml"},
                           "spec": {"containers": [{"name": "c"}], "schedulingGroup": {"podGroupName": "train"}}}
    assert parse_pod(pod).scheduling_group == "train"
    del pod["spec"]["schedulingGroup"]
    assert parse_pod(pod).scheduling_group == ""
    pod["spec"]["schedulingGroup"] = {"podGroupName": 7}
    with pytest.raises(ParseError) as e:
        parse_pod(pod)
    assert e.value.field == "spec.schedulingGroup.podGroupName"
