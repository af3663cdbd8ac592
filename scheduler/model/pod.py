"""Pods, parsed once from API JSON into what the scheduler reads.

Requests are computed as upstream's ``resource.PodRequests`` does (``podresources``): containers,
sidecars and init containers, in-place resize (the larger of spec and status resources),
pod-level resources, then ``spec.overhead``.

``non_zero_cpu`` / ``non_zero_memory`` are the same aggregate where a container without a CPU or
memory request counts as 100m / 200MiB: scoring uses them (so empty pods still spread), filtering
never does. Only an *absent* request is defaulted (upstream's ``NonMissingContainerRequests``): an
explicit ``"0"`` counts 0, and a pod with no containers at all counts 0.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scheduler.errors import ParseError
from scheduler.model.dra import (
    PodResourceClaim,
    PodResourceClaimStatus,
    parse_pod_resource_claim_statuses,
    parse_pod_resource_claims,
)
from scheduler.model.node import TAINT_EFFECTS, Taint
from scheduler.model.nodefeatures import required_features
from scheduler.model.parsing import located, resource_list
from scheduler.model.podresources import (
    DEFAULT_MEMORY_REQUEST,
    DEFAULT_MILLI_CPU_REQUEST,
    DEFAULT_REQUEST_OPTIONS,
    RequestOptions,
    pod_requests,
)
from scheduler.model.selectors import (
    LabelSelector,
    NodeSelector,
    NodeSelectorTerm,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
)
from scheduler.model.volumes import PodVolume, parse_pod_volumes

__all__ = [
    "DEFAULT_MEMORY_REQUEST",
    "DEFAULT_MILLI_CPU_REQUEST",
    "EXPLAIN_ANNOTATION",
    "ContainerRequests",
    "HostPort",
    "Pod",
    "PodAffinityTerm",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "copy_with",
    "parse_pod",
    "status_fields",
]

# A pod annotated with this set to "true" gets its decision record written on it (issue #20).
EXPLAIN_ANNOTATION = "scheduling.kopf-scheduler.io/explain"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.value == taint.value


@dataclass(frozen=True, slots=True)
class PodAffinityTerm:
    """``v1.PodAffinityTerm``. ``namespaces`` is resolved: an empty list with no namespace selector
    means the owning pod's namespace. ``namespace_selector`` ``{}`` means all namespaces."""

    selector: LabelSelector | None
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str


@dataclass(frozen=True, slots=True)
class WeightedPodAffinityTerm:
    weight: int
    term: PodAffinityTerm


@dataclass(frozen=True, slots=True)
class TopologySpreadConstraint:
    max_skew: int
    topology_key: str
    when_unsatisfiable: str  # DoNotSchedule | ScheduleAnyway
    selector: LabelSelector | None
    min_domains: int = 1
    node_affinity_policy: str = "Honor"
    node_taints_policy: str = "Ignore"
    # ``matchLabelKeys`` and the ``labelSelector`` alone: ``selector`` has the pod's values for those
    # keys ANDed in, which MatchLabelKeysInPodTopologySpread=false ignores (podtopologyspread).
    match_label_keys: tuple[str, ...] = ()
    label_selector: LabelSelector | None = None


@dataclass(frozen=True, slots=True)
class HostPort:
    protocol: str
    host_ip: str
    port: int


class ControllerRef(NamedTuple):
    """A pod's controlling ownerReference: ``apiVersion``, ``kind`` and ``name``."""

    api_version: str
    kind: str
    name: str


@dataclass(frozen=True, slots=True)
class ContainerRequests:
    """A container's ``resources.requests`` (all of them: the sorted names index the claim's
    request names); ``short_lived``: an init container that is not a sidecar."""

    name: str
    short_lived: bool
    requests: Mapping[str, int]


@dataclass(frozen=True, slots=True, eq=False)
class Pod:
    """A pod as the scheduler sees it. Identity is ``uid`` (equality is by identity)."""

    namespace: str
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    scheduler_name: str = "default-scheduler"
    node_name: str = ""
    nominated_node_name: str = ""
    priority: int = 0
    preemption_policy: str = "PreemptLowerPriority"
    requests: Mapping[str, int] = field(default_factory=dict)
    non_zero_cpu: int = DEFAULT_MILLI_CPU_REQUEST
    non_zero_memory: int = DEFAULT_MEMORY_REQUEST
    node_selector: Mapping[str, str] = field(default_factory=dict)
    required_node_affinity: NodeSelector | None = None
    preferred_node_affinity: tuple[tuple[int, NodeSelectorTerm], ...] = ()
    tolerations: tuple[Toleration, ...] = ()
    affinity_required: tuple[PodAffinityTerm, ...] = ()
    affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    anti_affinity_required: tuple[PodAffinityTerm, ...] = ()
    anti_affinity_preferred: tuple[WeightedPodAffinityTerm, ...] = ()
    topology_spread: tuple[TopologySpreadConstraint, ...] = ()
    host_ports: tuple[HostPort, ...] = ()
    images: tuple[str, ...] = ()
    scheduling_gates: tuple[str, ...] = ()
    deleting: bool = False
    # Annotated ``scheduling.kopf-scheduler.io/explain: "true"``: the scheduler writes its decision
    # record on the pod (``framework.decision.DECISION_ANNOTATION``).
    explain: bool = False
    # DisruptionTarget=True with reason PreemptionByScheduler: a victim of our preemption.
    preempted_by_scheduler: bool = False
    phase: str = "Pending"
    start_time: str = ""
    # The ownerReference with ``controller: true`` (upstream's ``metav1.GetControllerOf``):
    # PodTopologySpread's default selector reads the owning ReplicaSet, StatefulSet or
    # ReplicationController through it.
    controller: ControllerRef | None = None
    # ``spec.volumes``, reduced to what the volume plugins read (``model.volumes.PodVolume``).
    volumes: tuple[PodVolume, ...] = ()
    # ``spec.resourceClaims`` and ``status.resourceClaimStatuses`` (DynamicResources reads them).
    resource_claims: tuple[PodResourceClaim, ...] = ()
    resource_claim_statuses: tuple[PodResourceClaimStatus, ...] = ()
    # Per container (init containers first, then containers, upstream's order), only when some
    # container requests a resource whose name has a "/" (extended, or a device class's implicit
    # name): DynamicResources maps those requests onto the claim it creates for them.
    container_requests: tuple[ContainerRequests, ...] = ()
    # ``spec.schedulingGroup.podGroupName``: the PodGroup (same namespace) the pod belongs to, "" for
    # none. The API serves it only with the GenericWorkload gate, and it is immutable there.
    scheduling_group: str = ""
    # The node features the pod needs (``model/nodefeatures.required_features``, inferred once here):
    # NodeDeclaredFeatures keeps it off nodes whose ``status.declaredFeatures`` lack one.
    required_features: frozenset[str] = frozenset()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def claim_names(self) -> tuple[str, ...]:
        """The ``persistentVolumeClaim`` claim names of the pod's volumes (not the ephemeral ones),
        as upstream's ``NodeInfo.PVCRefCounts`` counts them."""
        return tuple(v.claim_name for v in self.volumes if v.claim_name is not None)

    @property
    def has_affinity_terms(self) -> bool:
        return bool(self.affinity_required or self.affinity_preferred
                    or self.anti_affinity_required or self.anti_affinity_preferred)

    def __repr__(self) -> str:
        return f"Pod({self.key}, node={self.node_name or '-'})"

    def with_fields(self, **fields: Any) -> Pod:
        """A copy with ``fields`` replaced: ``dataclasses.replace`` without its per-field checks and
        ``__init__`` call (8.3 µs for a Pod, this 4 µs; the cycle assumes every pod it places). The
        fields are the Pod's own; nothing is derived from them at construction."""
        for name in fields:
            if name not in _POD_FIELDS:
                raise TypeError(f"Pod has no field {name!r}")
        return copy_with(self, fields)


_POD_FIELDS = frozenset(Pod.__slots__)


def _make_copier() -> Callable[[Pod, Mapping[str, Any]], Pod]:
    """``copy_with``, generated once with one line a slot, as ``dataclasses`` generates
    ``__init__``: a loop over the slot names costs a quarter more (4.7 against 3.7 µs, timeit), and
    the pod informer copies every pod it sees (``PodParser``), 30,000 a run in SchedulingDaemonset."""
    lines = ["def copy_with(pod, fields):", "    new = new_pod(Pod)"]
    lines += [f"    set_(new, {name!r}, pod.{name})" for name in Pod.__slots__]
    lines += ["    for name, value in fields.items():", "        set_(new, name, value)", "    return new"]
    namespace: dict[str, Any] = {"new_pod": Pod.__new__, "Pod": Pod, "set_": object.__setattr__}
    exec("\n".join(lines), namespace)     # our own source, from the slot names
    copier: Callable[[Pod, Mapping[str, Any]], Pod] = namespace["copy_with"]
    return copier


copy_with = _make_copier()
copy_with.__doc__ = """A copy of ``pod`` with ``fields`` replaced, unchecked: the names must be the Pod's own
(``Pod.with_fields`` checks them)."""


# --- parsing -------------------------------------------------------------------------------------

def _controller_ref(raw: Any) -> ControllerRef | None:
    """The controlling owner, if any. The API server validates ownerReferences (at most one
    controller), so a malformed entry is skipped rather than failing the pod."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return None
    for ref in raw:
        if (isinstance(ref, Mapping) and ref.get("controller") is True and isinstance(ref.get("kind"), str)
                and isinstance(ref.get("name"), str) and isinstance(ref.get("apiVersion"), str)):
            return ControllerRef(ref["apiVersion"], ref["kind"], ref["name"])
    return None


def _str_map(raw: Any, field: str) -> dict[str, str]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, str) for v in raw.values()):
        raise ParseError("must be a map of strings", field=field)
    return dict(raw)


_INT32 = (-(2**31), 2**31 - 1)


def _json_type(raw: object) -> str:
    """How Go's encoding/json names a JSON value it cannot put in a Go number."""
    if isinstance(raw, bool):
        return "bool"
    if isinstance(raw, str):
        return "string"
    if isinstance(raw, int | float):
        return f"number {raw}"
    if isinstance(raw, Mapping):
        return "object"
    return "array" if isinstance(raw, list | tuple) else type(raw).__name__


def _int32(raw: object, field: str, go_field: str) -> int:
    """A JSON value that a Go ``int32`` field accepts, else kube-apiserver's decoding error.

    ``maxSkew: "1"`` never reaches validation upstream: the Pod does not decode. So the message names
    the field and the type problem (``json: cannot unmarshal string into Go struct field
    TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32``) instead of a
    misleading range check. ``go_field`` is the struct-qualified field Go prints.
    """
    if raw is None:
        return 0  # Go's decoder leaves a null number at its zero value
    if isinstance(raw, int) and not isinstance(raw, bool) and _INT32[0] <= raw <= _INT32[1]:
        return raw
    kind = _json_type(raw)
    shown = kind.split(" ", 1)[0] if " " in kind else kind
    raise ParseError(f'Invalid value: "{shown}": json: cannot unmarshal {kind} into Go struct field '
                     f"{go_field} of type int32", field=field)


def _pod_affinity_term(raw: Any, field: str, own_ns: str) -> PodAffinityTerm:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise ParseError("can not be empty", field=f"{field}.topologyKey")
    sel_raw = raw.get("labelSelector")
    selector = None if sel_raw is None else parse_label_selector(sel_raw, f"{field}.labelSelector")
    ns_sel_raw = raw.get("namespaceSelector")
    ns_selector = (None if ns_sel_raw is None
                   else parse_label_selector(ns_sel_raw, f"{field}.namespaceSelector"))
    namespaces = raw.get("namespaces") or []
    if not isinstance(namespaces, Sequence) or isinstance(namespaces, str):
        raise ParseError("must be a list of strings", field=f"{field}.namespaces")
    ns = frozenset(namespaces)
    if not ns and ns_selector is None:
        ns = frozenset((own_ns,))
    return PodAffinityTerm(selector, ns, ns_selector, key)


def _weighted(raw: Any, field: str, own_ns: str) -> WeightedPodAffinityTerm:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    w = _int32(raw.get("weight"), f"{field}.weight", "WeightedPodAffinityTerm.weight")
    if not 1 <= w <= 100:
        raise ParseError("must be in the range 1-100", field=f"{field}.weight")
    return WeightedPodAffinityTerm(w, _pod_affinity_term(raw.get("podAffinityTerm"),
                                                         f"{field}.podAffinityTerm", own_ns))


def _spread(raw: Any, field: str, labels: Mapping[str, str]) -> TopologySpreadConstraint:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    go = "TopologySpreadConstraint.spec.topologySpreadConstraints"
    skew = _int32(raw.get("maxSkew"), f"{field}.maxSkew", f"{go}.maxSkew")
    if skew <= 0:
        raise ParseError("must be greater than zero", field=f"{field}.maxSkew")
    key = raw.get("topologyKey")
    if not isinstance(key, str) or not key:
        raise ParseError("can not be empty", field=f"{field}.topologyKey")
    when = raw.get("whenUnsatisfiable")
    if when not in ("DoNotSchedule", "ScheduleAnyway"):
        raise ParseError(f"Unsupported value: {when!r}", field=f"{field}.whenUnsatisfiable")
    min_domains = raw.get("minDomains")
    if min_domains is None:
        min_domains = 1
    elif _int32(min_domains, f"{field}.minDomains", f"{go}.minDomains") <= 0:
        raise ParseError("must be greater than zero", field=f"{field}.minDomains")
    elif when != "DoNotSchedule":
        raise ParseError("can only use minDomains if whenUnsatisfiable=DoNotSchedule",
                         field=f"{field}.minDomains")
    sel_raw = raw.get("labelSelector")
    selector = None if sel_raw is None else parse_label_selector(sel_raw, f"{field}.labelSelector")
    # matchLabelKeys: the incoming pod's values for those keys are ANDed into the selector.
    mlk = raw.get("matchLabelKeys") or []
    label_selector = selector
    if mlk and selector is not None:
        from scheduler.model.selectors import Requirement

        extra = tuple(Requirement(k, "In", frozenset((labels[k],))) for k in mlk if k in labels)
        selector = LabelSelector(tuple(sorted(selector.requirements + extra,
                                              key=lambda r: (r.key, r.operator, sorted(r.values)))))
    policies = []
    for name, default, allowed in (("nodeAffinityPolicy", "Honor", ("Honor", "Ignore")),
                                   ("nodeTaintsPolicy", "Ignore", ("Honor", "Ignore"))):
        v = raw.get(name) or default
        if v not in allowed:
            raise ParseError(f"Unsupported value: {v!r}", field=f"{field}.{name}")
        policies.append(v)
    return TopologySpreadConstraint(skew, key, when, selector, min_domains, policies[0], policies[1],
                                    tuple(mlk) if selector is not None else (), label_selector)


def _toleration(raw: Any, field: str) -> Toleration:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    op = raw.get("operator") or "Equal"
    if op not in ("Equal", "Exists"):
        raise ParseError(f"Unsupported value: {op!r}", field=f"{field}.operator")
    effect = raw.get("effect") or ""
    if effect and effect not in TAINT_EFFECTS:
        raise ParseError(f"Unsupported value: {effect!r}", field=f"{field}.effect")
    key, value = raw.get("key") or "", raw.get("value") or ""
    if not isinstance(key, str) or not isinstance(value, str):
        raise ParseError("must be a string", field=field)
    if op == "Exists" and value:
        raise ParseError("value must be empty when `operator` is 'Exists'", field=f"{field}.value")
    if not key and op != "Exists":
        raise ParseError("operator must be Exists when `key` is empty", field=f"{field}.operator")
    return Toleration(key, op, value, effect)


def _preempted_by_scheduler(status: Mapping[str, Any]) -> bool:
    for c in status.get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == "DisruptionTarget":
            return c.get("status") == "True" and c.get("reason") == "PreemptionByScheduler"
    return False


class _Resources(NamedTuple):
    """What a pod's containers add up to (``_resources``)."""

    requests: dict[str, int]
    non_zero: dict[str, int]
    per_container: tuple[ContainerRequests, ...]
    images: tuple[str, ...]
    host_ports: tuple[HostPort, ...]


def _host_ports(c: Mapping[str, Any], f: str, into: list[HostPort]) -> None:
    for j, p in enumerate(c.get("ports") or []):
        hp = _int32(p.get("hostPort") or 0, f"{f}.ports[{j}].hostPort", "ContainerPort.hostPort")
        if not 0 <= hp <= 65535:
            raise ParseError("must be between 1 and 65535, inclusive", field=f"{f}.ports[{j}].hostPort")
        if hp:
            into.append(HostPort(p.get("protocol") or "TCP", p.get("hostIP") or "0.0.0.0", hp))


def _resources(spec: Mapping[str, Any], status: Mapping[str, Any], opts: RequestOptions) -> _Resources:
    """Requests as upstream's ``resource.PodRequests`` (``podresources``), their non-zero twin,
    the per-container requests (kept only when an extended resource is asked for), and the
    containers' images and host ports (app and sidecar containers only)."""
    apps: list[dict[str, int]] = []
    inits: list[tuple[dict[str, int], bool]] = []
    names: list[str] = []
    per_container: dict[str, list[ContainerRequests]] = {"containers": [], "initContainers": []}
    images: list[str] = []
    ports: list[HostPort] = []
    for kind in ("containers", "initContainers"):
        init = kind == "initContainers"
        for i, c in enumerate(spec.get(kind) or []):
            f = f"spec.{kind}[{i}]"
            r = resource_list((c.get("resources") or {}).get("requests"), f"{f}.resources.requests",
                              non_negative=True)
            restartable = init and c.get("restartPolicy") == "Always"
            name = str(c.get("name") or "")
            per_container[kind].append(ContainerRequests(name, init and not restartable, r))
            names.append(name)
            if init:
                inits.append((r, restartable))
            else:
                apps.append(r)
            if isinstance(c.get("image"), str):
                images.append(c["image"])
            if (not init or restartable) and c.get("ports"):
                _host_ports(c, f, ports)

    requests, nz = pod_requests(spec, status, apps, inits, names, opts)
    container_requests = ((*per_container["initContainers"], *per_container["containers"])
                          if any("/" in k for r in apps for k in r) or any("/" in k for r, _ in inits for k in r)
                          else ())
    return _Resources(requests, nz, container_requests, tuple(images), tuple(ports))


def _node_affinity(affinity: Mapping[str, Any]
                   ) -> tuple[NodeSelector | None, tuple[tuple[int, NodeSelectorTerm], ...]]:
    """``spec.affinity.nodeAffinity``: the required node selector (None without) and the weighted
    preferred terms."""
    na = affinity.get("nodeAffinity") or {}
    req_raw = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    req = (None if req_raw is None else parse_node_selector(
        req_raw, "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution"))
    pref = []
    for i, p in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        f = f"spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        w = _int32(p.get("weight"), f"{f}.weight", "PreferredSchedulingTerm.weight")
        if not 1 <= w <= 100:
            raise ParseError("must be in the range 1-100", field=f"{f}.weight")
        pref.append((w, parse_node_selector_term(p.get("preference") or {}, f"{f}.preference")))
    return req, tuple(pref)


def _pod_affinity(affinity: Mapping[str, Any], kind: str, ns: str
                  ) -> tuple[tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]:
    """``spec.affinity.<kind>`` (podAffinity or podAntiAffinity): required and preferred terms."""
    a = affinity.get(kind) or {}
    f = f"spec.affinity.{kind}"
    req = tuple(_pod_affinity_term(t, f"{f}.requiredDuringSchedulingIgnoredDuringExecution[{i}]", ns)
                for i, t in enumerate(a.get("requiredDuringSchedulingIgnoredDuringExecution") or []))
    pref = tuple(_weighted(t, f"{f}.preferredDuringSchedulingIgnoredDuringExecution[{i}]", ns)
                 for i, t in enumerate(a.get("preferredDuringSchedulingIgnoredDuringExecution") or []))
    return req, pref


def parse_pod(obj: Mapping[str, Any], options: RequestOptions = DEFAULT_REQUEST_OPTIONS) -> Pod:
    """Parse a pod; raises :class:`ParseError` naming ``Pod ns/name`` and the field.

    Parsed once, on every pod event, so each part is read by one helper in field order (the first
    bad field is the one reported): containers and resources, node and pod affinity, spread,
    tolerations, then volumes and claims. ``options``: the gates that shape the requests
    (the service builds them from its gates; upstream 1.37's defaults unless given)."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace") or "default"
    name = meta.get("name") or ""
    try:
        return _parse_pod(obj, meta, ns, name, options)
    except (ParseError, AttributeError, TypeError) as e:
        raise located(e, f"Pod {ns}/{name}") from None


def status_fields(spec: Mapping[str, Any], meta: Mapping[str, Any], status: Mapping[str, Any]) -> dict[str, Any]:
    """The ``Pod`` fields that can change while the spec (less ``nodeName``) and the metadata the
    scheduler reads stay as they were: the kubelet's status writes, the Binding's ``nodeName``.
    ``parse_pod`` and ``model.podparser``'s reuse of an earlier parse both take them from here, so
    the two cannot drift apart. (The requests can depend on the status too, through an in-place
    resize: ``podresources.status_affects_requests`` says when, and then nothing is reused.)"""
    return {
        "node_name": spec.get("nodeName") or "",
        "nominated_node_name": status.get("nominatedNodeName") or "",
        "resource_claim_statuses": parse_pod_resource_claim_statuses(status.get("resourceClaimStatuses")),
        "preempted_by_scheduler": _preempted_by_scheduler(status),
        "phase": status.get("phase") or "Pending",
        "start_time": status.get("startTime") or meta.get("creationTimestamp") or "",
    }


_Affinity = tuple[NodeSelector | None, tuple[tuple[int, NodeSelectorTerm], ...],
                  tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...],
                  tuple[PodAffinityTerm, ...], tuple[WeightedPodAffinityTerm, ...]]
_NO_AFFINITY: _Affinity = (None, (), (), (), (), ())


def _affinity(affinity: Mapping[str, Any], ns: str) -> _Affinity:
    """``spec.affinity``: node affinity, then pod affinity, then pod anti-affinity terms."""
    if not affinity:
        return _NO_AFFINITY                         # most pods: no call per part
    return (*_node_affinity(affinity), *_pod_affinity(affinity, "podAffinity", ns),
            *_pod_affinity(affinity, "podAntiAffinity", ns))


def _scheduling_group(group: Any) -> str:
    """``spec.schedulingGroup.podGroupName`` ("" when the pod is in no group)."""
    if group is None:
        return ""
    if not isinstance(group, Mapping):
        raise ParseError("must be an object", field="spec.schedulingGroup")
    name = group.get("podGroupName")
    if name is not None and not isinstance(name, str):
        raise ParseError("must be a string", field="spec.schedulingGroup.podGroupName")
    return name or ""


def _parse_pod(obj: Mapping[str, Any], meta: Mapping[str, Any], ns: str, name: str,
               options: RequestOptions) -> Pod:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    labels = _str_map(meta.get("labels"), "metadata.labels")
    res = _resources(spec, status, options)
    node_selector = _str_map(spec.get("nodeSelector"), "spec.nodeSelector")
    req_na, pref_na, aff_req, aff_pref, anti_req, anti_pref = _affinity(spec.get("affinity") or {}, ns)
    spread = tuple(_spread(c, f"spec.topologySpreadConstraints[{i}]", labels)
                   for i, c in enumerate(spec.get("topologySpreadConstraints") or []))
    tolerations = tuple(_toleration(t, f"spec.tolerations[{i}]")
                        for i, t in enumerate(spec.get("tolerations") or []))
    priority = _int32(spec.get("priority"), "spec.priority", "PodSpec.spec.priority")
    gates = tuple(g.get("name", "") for g in spec.get("schedulingGates") or [])
    return Pod(
        namespace=ns,
        name=name,
        uid=meta.get("uid") or f"{ns}/{name}",
        labels=labels,
        scheduler_name=spec.get("schedulerName") or "default-scheduler",
        priority=priority,
        preemption_policy=spec.get("preemptionPolicy") or "PreemptLowerPriority",
        requests=res.requests,
        # No containers (only possible in tests) means no defaulted request: 0, as upstream.
        non_zero_cpu=res.non_zero.get("cpu", 0),
        non_zero_memory=res.non_zero.get("memory", 0),
        node_selector=node_selector,
        required_node_affinity=req_na,
        preferred_node_affinity=pref_na,
        tolerations=tolerations,
        affinity_required=aff_req,
        affinity_preferred=aff_pref,
        anti_affinity_required=anti_req,
        anti_affinity_preferred=anti_pref,
        topology_spread=spread,
        host_ports=res.host_ports,
        images=res.images,
        scheduling_gates=gates,
        controller=_controller_ref(meta.get("ownerReferences")),
        volumes=parse_pod_volumes(spec.get("volumes")),
        resource_claims=parse_pod_resource_claims(spec.get("resourceClaims")),
        **status_fields(spec, meta, status),    # in the order the fields were read before
        container_requests=res.per_container,
        scheduling_group=_scheduling_group(spec.get("schedulingGroup")),
        deleting=bool(meta.get("deletionTimestamp")),
        explain=(meta.get("annotations") or {}).get(EXPLAIN_ANNOTATION) == "true",
        required_features=required_features(spec),
    )
