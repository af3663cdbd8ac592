"""PodGroups (``scheduling.k8s.io/v1beta1``) as the scheduler reads them, parsed once per watch event.

A PodGroup is the runtime instance of a group of pods that pods join through
``spec.schedulingGroup.podGroupName`` (``Pod.scheduling_group``). Its ``schedulingPolicy`` is a union:
``basic`` (pod-by-pod scheduling, the group only a label) or ``gang`` (all or nothing, with a
``minCount`` quorum that stays mutable). ``disruptionMode`` says whether preemption may take one member
(``Single``, the default) or only the whole group (``All``). ``priority`` is what the Priority admission
plugin resolved from ``priorityClassName`` (0 when unset); ``preemptionPolicy`` (behind the alpha
``PodGroupPreemptionPolicy`` gate) says whether the group may preempt at all. The status conditions are kept as parsed
values, so a plugin can tell whether the group was ever scheduled (``PodGroupInitiallyScheduled``).

The API server validates all of this (``simulator/registry/podgroups.py``); the parser still refuses
what would make the model lie (a gang without a positive ``minCount``, both policies at once), with a
``ParseError`` naming the object and the field.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from scheduler.errors import ParseError

__all__ = ["DISRUPTION_TARGET", "POD_GROUP_INITIALLY_SCHEDULED", "PodGroup", "PodGroupCondition",
           "parse_pod_group"]

# staging/src/k8s.io/api/scheduling/v1beta1/types.go: the well-known condition types.
POD_GROUP_INITIALLY_SCHEDULED = "PodGroupInitiallyScheduled"
DISRUPTION_TARGET = "DisruptionTarget"

Policy = Literal["Basic", "Gang"]
DisruptionMode = Literal["Single", "All"]


@dataclass(frozen=True, slots=True)
class PodGroupCondition:
    type: str
    status: str
    reason: str = ""
    message: str = ""
    last_transition_time: str = ""
    observed_generation: int = 0


@dataclass(frozen=True, slots=True)
class PodGroup:
    namespace: str
    name: str
    uid: str = ""
    policy: Policy = "Basic"
    # The gang's quorum; 0 for a basic group (which has none).
    min_count: int = 0
    disruption_mode: DisruptionMode = "Single"
    priority: int = 0
    priority_class_name: str = ""
    # spec.preemptionPolicy (PodGroupPreemptionPolicy, alpha): "Never", "PreemptLowerPriority", or ""
    # when unset (a group made with the gate off).
    preemption_policy: str = ""
    # spec.workloadRef: the Workload and template the group was made from ("" when none).
    workload_name: str = ""
    template_name: str = ""
    conditions: tuple[PodGroupCondition, ...] = ()
    resource_version: str = ""
    # metadata.generation: a condition the scheduler writes records it as its observedGeneration.
    generation: int = 0

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_gang(self) -> bool:
        return self.policy == "Gang"

    def condition(self, type_: str) -> PodGroupCondition | None:
        return next((c for c in self.conditions if c.type == type_), None)


def _object(value: Any, field: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ParseError("must be an object", field=field)
    return value


def _str(value: Any, field: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ParseError("must be a string", field=field)
    return value


def _policy(raw: Any) -> tuple[Policy, int]:
    policy = _object(raw, "spec.schedulingPolicy")
    basic, gang = policy.get("basic"), policy.get("gang")
    if (basic is None) == (gang is None):
        raise ParseError("must specify exactly one of: `basic`, `gang`", field="spec.schedulingPolicy")
    if basic is not None:
        _object(basic, "spec.schedulingPolicy.basic")
        return "Basic", 0
    count = _object(gang, "spec.schedulingPolicy.gang").get("minCount")
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        raise ParseError("must be a positive integer", field="spec.schedulingPolicy.gang.minCount")
    return "Gang", count


def _disruption_mode(raw: Any) -> DisruptionMode:
    mode = _object(raw, "spec.disruptionMode")
    if mode.get("all") is not None:
        if mode.get("single") is not None:
            raise ParseError("must specify exactly one of: `single`, `all`", field="spec.disruptionMode")
        return "All"
    return "Single"         # the API's default ({"single": {}})


def _int(value: Any, field: str) -> int:
    if value is None:
        return 0
    if not isinstance(value, int) or isinstance(value, bool):
        raise ParseError("must be an integer", field=field)
    return value


def _conditions(raw: Any) -> tuple[PodGroupCondition, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ParseError("must be a list", field="status.conditions")
    out = []
    for i, c in enumerate(raw):
        at = f"status.conditions[{i}]"
        c = _object(c, at)
        out.append(PodGroupCondition(
            type=_str(c.get("type"), f"{at}.type"), status=_str(c.get("status"), f"{at}.status"),
            reason=_str(c.get("reason"), f"{at}.reason"), message=_str(c.get("message"), f"{at}.message"),
            last_transition_time=_str(c.get("lastTransitionTime"), f"{at}.lastTransitionTime"),
            observed_generation=_int(c.get("observedGeneration"), f"{at}.observedGeneration")))
    return tuple(out)


def parse_pod_group(obj: Mapping[str, Any]) -> PodGroup:
    """Parse a PodGroup; raises :class:`ParseError` naming ``PodGroup ns/name`` and the field."""
    meta = obj.get("metadata") or {}
    ns = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    try:
        spec = _object(obj.get("spec"), "spec")
        policy, min_count = _policy(spec.get("schedulingPolicy"))
        priority = spec.get("priority")
        if priority is not None and (not isinstance(priority, int) or isinstance(priority, bool)):
            raise ParseError("must be an integer", field="spec.priority")
        ref = _object(spec.get("workloadRef"), "spec.workloadRef")
        return PodGroup(
            namespace=ns, name=name, uid=str(meta.get("uid") or f"{ns}/{name}"),
            policy=policy, min_count=min_count, disruption_mode=_disruption_mode(spec.get("disruptionMode")),
            priority=priority or 0,
            priority_class_name=_str(spec.get("priorityClassName"), "spec.priorityClassName"),
            preemption_policy=_str(spec.get("preemptionPolicy"), "spec.preemptionPolicy"),
            workload_name=_str(ref.get("workloadName"), "spec.workloadRef.workloadName"),
            template_name=_str(ref.get("templateName"), "spec.workloadRef.templateName"),
            conditions=_conditions(_object(obj.get("status"), "status").get("conditions")),
            resource_version=str(meta.get("resourceVersion") or ""),
            generation=_int(meta.get("generation"), "metadata.generation"))
    except ParseError as e:
        raise e.located(f"PodGroup {ns}/{name}") from None
