"""The ``scheduling.k8s.io/v1beta1`` kinds of workload-aware scheduling: ``Workload`` and ``PodGroup``
(both namespaced; PodGroup with ``/status``), served only when the cluster's ``GenericWorkload`` gate is
on, as kube-apiserver serves them only with the beta API enabled.

The strategies follow ``pkg/registry/scheduling/workload`` and ``podgroup``: a PodGroup's status is
reset on create and kept by a main-resource write (``generic``/``handlers.update`` do that for every kind
with ``/status``); its ``disruptionMode`` defaults to ``{"single": {}}`` (``+default`` on
``PodGroupSpec.DisruptionMode``). Validation is ``pkg/apis/scheduling/validation``'s handwritten rules
plus the declarative tags of ``staging/src/k8s.io/api/scheduling/v1beta1/types.go``, with their
messages: the policy union (``basic`` xor ``gang``), ``gang.minCount`` required and positive, template
names as DNS labels and unique, at most 8 templates, ``priority`` at most 1000000000, the
``workloadRef`` and ``controllerRef`` formats, one priority configuration per Workload, and on update the
immutable fields (templates may not be added or removed; a policy may not switch between basic and
gang; ``minCount`` stays mutable). Fields behind gates this server does not have on
(``CompositePodGroup``, ``TopologyAwareWorkloadScheduling``, ``DRAWorkloadResourceClaims``,
``PodGroupPreemptionPolicy``) are refused as ``Forbidden`` or dropped, as upstream does with the gate off;
with ``PodGroupPreemptionPolicy`` on, a PodGroup's ``preemptionPolicy`` is served, defaulted to
``PreemptLowerPriority`` and immutable, and a Workload's PodGroupTemplate may carry one too (one of the
two policies, immutable, not defaulted: ``PodGroupTemplate.PreemptionPolicy`` has no ``+default``).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.apierrors import invalid as invalid_error
from scheduler.simulator.registry.core.validation import (
    Cause,
    dns_label,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    too_many,
)
from scheduler.simulator.resources import ResourceType

__all__ = ["GENERIC_WORKLOAD", "GROUP", "PODGROUPS", "STORES", "TYPES", "WORKLOADS", "admit", "admit_priority",
           "validate_status"]

Obj = dict[str, Any]

GENERIC_WORKLOAD = "GenericWorkload"
GROUP = "scheduling.k8s.io"
VERSION = "v1beta1"
WORKLOADS = f"{GROUP}/workloads"
PODGROUPS = f"{GROUP}/podgroups"
STORES = (WORKLOADS, PODGROUPS)
TYPES = (ResourceType(GROUP, VERSION, "workloads", "Workload", True),
         ResourceType(GROUP, VERSION, "podgroups", "PodGroup", True, subresources=("status",)))

# staging/src/k8s.io/api/scheduling/v1beta1/types.go
MAX_POD_GROUP_TEMPLATES = 8
HIGHEST_USER_PRIORITY = 1_000_000_000
PREEMPTION_POLICIES = ("Never", "PreemptLowerPriority")
POD_GROUP_PREEMPTION_POLICY = "PodGroupPreemptionPolicy"
_CONDITION_STATUSES = ("False", "True", "Unknown")
_MAX_CONDITION_MESSAGE = 32768


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _policy(policy: Any, at: str) -> list[Cause]:
    """``validatePodGroupSchedulingPolicy``: exactly one of ``basic`` and ``gang``; a gang's
    ``minCount`` required (0 counts as unset, as declarative validation treats it) and at least 1."""
    policy = _map(policy)
    given = [f"`{k}`" for k in ("basic", "gang") if policy.get(k) is not None]
    if not given:
        return [invalid(at, "", "must specify one of: `basic`, `gang`")]
    if len(given) > 1:
        return [invalid(at, "{" + ", ".join(given) + "}",
                        "exactly one of `basic`, `gang` is required, but multiple fields are set")]
    if "gang" not in policy:
        return []
    count = _map(policy["gang"]).get("minCount")
    if not count:
        return [required(f"{at}.gang.minCount")]
    if isinstance(count, int) and count < 1:
        return [invalid(f"{at}.gang.minCount", count, "must be greater than or equal to 1")]
    return []


def _disruption_mode(mode: Any, at: str) -> list[Cause]:
    """``DisruptionMode`` is a union: one of ``single`` and ``all``."""
    if mode is None:
        return []
    given = [f"`{k}`" for k in ("single", "all") if _map(mode).get(k) is not None]
    if not given:
        return [invalid(at, "", "must specify one of: `single`, `all`")]
    if len(given) > 1:
        return [invalid(at, "{" + ", ".join(given) + "}",
                        "exactly one of `single`, `all` is required, but multiple fields are set")]
    return []


def _priority(obj: Mapping[str, Any], at: str) -> list[Cause]:
    out: list[Cause] = []
    if name := obj.get("priorityClassName"):
        out += dns_subdomain(str(name), f"{at}.priorityClassName")
    prio = obj.get("priority")
    if isinstance(prio, int) and prio > HIGHEST_USER_PRIORITY:
        out.append(invalid(f"{at}.priority", prio, f"must be less than or equal to {HIGHEST_USER_PRIORITY}"))
    return out


def _gated(obj: Mapping[str, Any], at: str, fields: tuple[str, ...]) -> list[Cause]:
    """``+k8s:ifDisabled(Gate)=+k8s:forbidden``: a field whose gate is off may not be set."""
    return [(f"{at}.{f}", "FieldValueForbidden", "Forbidden") for f in fields if obj.get(f) is not None]


def _template(t: Any, at: str, policy_gate: bool) -> list[Cause]:
    t = _map(t)
    out: list[Cause] = []
    name = t.get("name")
    out += [required(f"{at}.name")] if not name else dns_label(str(name), f"{at}.name")
    out += _policy(t.get("schedulingPolicy"), f"{at}.schedulingPolicy")
    out += _disruption_mode(t.get("disruptionMode"), f"{at}.disruptionMode")
    out += _priority(t, at)
    out += _gated(t, at, ("schedulingConstraints",))
    # No default here (the type has no +default): the PodGroup made from the template is defaulted.
    out += _preemption_policy(t, at, policy_gate)
    return out


def _controller_ref(ref: Any, at: str) -> list[Cause]:
    """``validateControllerRef``: ``kind`` and ``name`` required path segment names; ``apiGroup`` a
    DNS subdomain when given."""
    ref = _map(ref)
    out: list[Cause] = []
    if group := ref.get("apiGroup"):
        out += dns_subdomain(str(group), f"{at}.apiGroup")
    for f in ("kind", "name"):
        value = ref.get(f)
        if not value:
            out.append(required(f"{at}.{f}"))
        elif value in (".", "..") or "/" in str(value) or "%" in str(value):
            out.append(invalid(f"{at}.{f}", value, "may not contain '/' or '%'" if value not in (".", "..")
                               else f"may not be '{value}'"))
    return out


def validate_workload(obj: Obj, old: Obj | None, *, policy_gate: bool = False) -> list[Cause]:
    """``ValidateWorkload`` / ``ValidateWorkloadUpdate``; ``policy_gate`` is ``PodGroupPreemptionPolicy``,
    which lets a template carry ``preemptionPolicy``."""
    spec = _map(obj.get("spec"))
    out: list[Cause] = []
    if spec.get("controllerRef") is not None:
        out += _controller_ref(spec["controllerRef"], "spec.controllerRef")
    out += _gated(spec, "spec", ("compositePodGroupTemplates",))
    templates = spec.get("podGroupTemplates") or []
    at = "spec.podGroupTemplates"
    if not templates:
        out.append(required(at, "must have at least one item"))
    elif len(templates) > MAX_POD_GROUP_TEMPLATES:
        out.append(too_many(at, len(templates), MAX_POD_GROUP_TEMPLATES))
    else:
        seen: set[str] = set()
        for i, t in enumerate(templates):
            out += _template(t, f"{at}[{i}]", policy_gate)
            name = str(_map(t).get("name") or "")
            if name in seen:
                out.append(duplicate(f"{at}[{i}]", name))
            seen.add(name)
        configs = {(str(_map(t).get("priorityClassName") or ""), _map(t).get("priority")) for t in templates}
        if len(configs) > 1:        # validateWorkloadPriority
            out.append(invalid("spec", None, "detected multiple priority configurations"))
    if old is not None:
        out += _workload_update(spec, _map(old.get("spec")))
    return out


def _immutable(new: Any, old: Any, at: str, order: tuple[str, ...] = ()) -> list[Cause]:
    """``ValidateImmutableField``; a struct value is shown as Go marshals it, its fields in ``order``."""
    if new == old:
        return []
    if order and isinstance(new, Mapping):
        new = {k: new[k] for k in sorted(new, key=lambda k: order.index(k) if k in order else len(order))}
    return [invalid(at, new, "field is immutable")]


def _policy_update(new: Any, old: Any, at: str) -> list[Cause]:
    """``basic`` immutable; ``gang`` may be neither set nor unset (``+k8s:update=NoSet,NoUnset``), its
    ``minCount`` mutable."""
    new, old = _map(new), _map(old)
    out = _immutable(new.get("basic"), old.get("basic"), f"{at}.basic")
    if (new.get("gang") is None) != (old.get("gang") is None):
        out.append(forbidden(f"{at}.gang", "field is immutable"))
    return out


def _workload_update(spec: Mapping[str, Any], old: Mapping[str, Any]) -> list[Cause]:
    out: list[Cause] = []
    if old.get("controllerRef") is not None:
        out += _immutable(spec.get("controllerRef"), old["controllerRef"], "spec.controllerRef",
                          ("apiGroup", "kind", "name"))
    at = "spec.podGroupTemplates"
    olds = {str(_map(t).get("name")): _map(t) for t in old.get("podGroupTemplates") or []}
    news = {str(_map(t).get("name")): _map(t) for t in spec.get("podGroupTemplates") or []}
    for i, t in enumerate(spec.get("podGroupTemplates") or []):
        name = str(_map(t).get("name"))
        if name not in olds:
            out.append(forbidden(f"{at}[{i}]", "items may not be added"))
            continue
        prev, cur, here = olds[name], _map(t), f"{at}[{i}]"
        out += _policy_update(cur.get("schedulingPolicy"), prev.get("schedulingPolicy"),
                              f"{here}.schedulingPolicy")
        for f in ("disruptionMode", "priorityClassName", "priority", "preemptionPolicy"):
            out += _immutable(cur.get(f), prev.get(f), f"{here}.{f}")
    if any(name not in news for name in olds):
        out.append(forbidden(at, "items may not be removed"))
    return out


def _preemption_policy(spec: Mapping[str, Any], at: str, policy_gate: bool) -> list[Cause]:
    """``preemptionPolicy`` (``PodGroupPreemptionPolicy``): forbidden with the gate off, else one of
    the core API's two policies."""
    if not policy_gate:
        return _gated(spec, at, ("preemptionPolicy",))
    value = spec.get("preemptionPolicy")
    if value is None or value in PREEMPTION_POLICIES:
        return []
    return [not_supported(f"{at}.preemptionPolicy", str(value), PREEMPTION_POLICIES)]


def validate_pod_group(obj: Obj, old: Obj | None, *, policy_gate: bool = False) -> list[Cause]:
    """``ValidatePodGroup`` / ``ValidatePodGroupUpdate`` with ``PodGroupSpec``'s declarative tags."""
    spec = _map(obj.get("spec"))
    out: list[Cause] = []
    ref = spec.get("workloadRef")
    if ref is not None:
        ref = _map(ref)
        wl, tmpl = ref.get("workloadName"), ref.get("templateName")
        out += [required("spec.workloadRef.workloadName")] if not wl else \
            dns_subdomain(str(wl), "spec.workloadRef.workloadName")
        out += [required("spec.workloadRef.templateName")] if not tmpl else \
            dns_label(str(tmpl), "spec.workloadRef.templateName")
    out += _policy(spec.get("schedulingPolicy"), "spec.schedulingPolicy")
    out += _disruption_mode(spec.get("disruptionMode"), "spec.disruptionMode")
    out += _priority(spec, "spec")
    out += _gated(spec, "spec", ("parentCompositePodGroupName",))
    out += _preemption_policy(spec, "spec", policy_gate)
    if old is not None:
        prev = _map(old.get("spec"))
        out += _immutable(spec.get("workloadRef"), prev.get("workloadRef"), "spec.workloadRef",
                          ("workloadName", "templateName"))
        out += _policy_update(spec.get("schedulingPolicy"), prev.get("schedulingPolicy"), "spec.schedulingPolicy")
        for f in ("disruptionMode", "priorityClassName", "priority", "preemptionPolicy"):
            out += _immutable(spec.get(f), prev.get(f), f"spec.{f}")
    return out


def _drop_disabled(spec: Obj, old: Mapping[str, Any] | None) -> None:
    """``dropDisabledPodGroupFields``: ``schedulingConstraints`` (TopologyAwareWorkloadScheduling) and
    ``resourceClaims`` (DRAWorkloadResourceClaims) are dropped unless the old object used them."""
    for f in ("schedulingConstraints", "resourceClaims"):
        if not (old and old.get(f)):
            spec.pop(f, None)


def admit_priority(obj: Obj, classes: Callable[[str], Obj | None], global_default: Callable[[], Obj | None]) -> None:
    """The Priority admission plugin on a PodGroup's create (``TestAdmitPodGroup``): an empty
    ``priorityClassName`` takes the global default class (its name and value; 0 without one); a named
    class must exist (403); ``priority`` is set from the class, and a different one already given is
    refused (403). An update is not touched."""
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return
    name = str(obj["metadata"].get("name", ""))
    cls_name = spec.get("priorityClassName") or ""
    if cls_name:
        pc = classes(cls_name)
        if pc is None:
            raise ApiError(403, "Forbidden", f'podgroups.scheduling.k8s.io "{name}" is forbidden: no PriorityClass '
                                             f"with name {cls_name} was found")
    else:
        pc = global_default()
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    value = int(pc.get("value", 0)) if pc else 0
    if spec.get("priority") is not None and spec["priority"] != value:
        raise ApiError(403, "Forbidden", f'podgroups.scheduling.k8s.io "{name}" is forbidden: the integer value of '
                                         f"priority ({spec['priority']}) must not be provided in pod group spec; "
                                         f"priority admission controller computed {value} from the given "
                                         "PriorityClass name")
    spec["priority"] = value


def admit(key: str, obj: Obj, old: Obj | None, *, policy_gate: bool = False) -> None:
    """Default and validate a Workload or PodGroup write (create when ``old`` is None).
    ``policy_gate``: the server's ``PodGroupPreemptionPolicy``, with which a PodGroup's
    ``preemptionPolicy`` is served and defaulted to ``PreemptLowerPriority`` (``SetDefaults_PodGroup``)."""
    name = str(obj["metadata"].get("name", ""))
    if key == PODGROUPS:
        spec = obj.get("spec")
        if isinstance(spec, dict):
            _drop_disabled(spec, _map(old.get("spec")) if old else None)
            spec.setdefault("disruptionMode", {"single": {}})
            if policy_gate:
                spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
        if causes := validate_pod_group(obj, old, policy_gate=policy_gate):
            raise invalid_error("PodGroup", name, causes, GROUP)
    elif causes := validate_workload(obj, old, policy_gate=policy_gate):
        raise invalid_error("Workload", name, causes, GROUP)


def validate_status(obj: Obj) -> list[Cause]:
    """``ValidatePodGroupStatusUpdate``: the conditions (``metav1validation.ValidateConditions``) and each
    ``resourceClaimStatuses`` entry naming an entry of ``spec.resourceClaims``."""
    status = _map(obj.get("status"))
    out: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(status.get("conditions") or []):
        c, at = _map(c), f"status.conditions[{i}]"
        ctype = str(c.get("type") or "")
        if not ctype:
            out.append(required(f"{at}.type"))
        elif ctype in seen:
            out.append(duplicate(f"{at}.type", ctype))
        seen.add(ctype)
        if c.get("status") not in _CONDITION_STATUSES:
            out.append(not_supported(f"{at}.status", c.get("status") or "", _CONDITION_STATUSES))
        if not c.get("lastTransitionTime"):
            out.append(required(f"{at}.lastTransitionTime"))
        if not c.get("reason"):
            out.append(required(f"{at}.reason"))
        if len(str(c.get("message") or "")) > _MAX_CONDITION_MESSAGE:
            out.append((f"{at}.message", "FieldValueTooLong",
                        f"Too long: may not be more than {_MAX_CONDITION_MESSAGE} bytes"))
    claims = {str(_map(c).get("name")) for c in _map(obj.get("spec")).get("resourceClaims") or []}
    for i, st in enumerate(status.get("resourceClaimStatuses") or []):
        if str(_map(st).get("name")) not in claims:
            out.append(invalid(f"status.resourceClaimStatuses[{i}].name", _map(st).get("name"),
                               "must match the name of an entry in `spec.resourceClaims`"))
    return out
