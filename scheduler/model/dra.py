"""Dynamic Resource Allocation (``resource.k8s.io/v1``): what the DynamicResources plugin and the
structured allocator read, parsed once when an object arrives (GUIDE §4).

* ``DeviceClass``: its CEL ``selectors`` (the expressions, compiled later by ``scheduler.dra.cel``),
  its opaque ``config`` and ``extendedResourceName``.
* ``ResourceClaim``: ``spec.devices`` (``requests`` with ``exactly`` or ``firstAvailable``,
  ``constraints`` with ``matchAttribute``, opaque ``config``) and ``status`` (``allocation``,
  ``reservedFor``). ``ResourceClaimTemplate`` holds a claim spec.
* ``ResourceSlice``: a ``driver``'s ``pool`` (name, generation, resourceSliceCount), where its devices
  are reachable (``nodeName``, ``nodeSelector``, ``allNodes``, ``perDeviceNodeSelection``) and the
  ``devices`` with typed ``attributes`` and ``capacity`` (exact quantities: ``Fraction``).
* The pod's side: ``spec.resourceClaims`` and ``status.resourceClaimStatuses``
  (``PodResourceClaim``, ``PodResourceClaimStatus``), parsed into ``model.pod.Pod``.

Defaults are the API server's (``allocationMode: ExactCount``, ``count: 1``), so an object read
back from a server and one written by hand in a test parse alike. A malformed object raises
``ParseError`` naming the object and the field. Opaque configuration parameters and node selectors
keep their JSON too (``raw``), since an allocation result written back must carry them.

The store that holds these is ``scheduler.cache.dra``; the allocator ``scheduler.dra.allocator``;
the plugin ``scheduler.plugins.dynamicresources``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.devicetaints import DeviceTaint, DeviceToleration, parse_device_taint, parse_device_toleration
from scheduler.model.parsing import parsing
from scheduler.model.selectors import NodeSelector, parse_node_selector
from scheduler.quantity import format_quantity, parse_quantity

__all__ = [
    "ALL",
    "EXACT_COUNT",
    "EXTENDED_RESOURCE_CLAIM_ANNOTATION",
    "FINALIZER",
    "IMPLICIT_EXTENDED_RESOURCE_PREFIX",
    "AllocatedDeviceStatus",
    "AllocationResult",
    "CapacityRequestPolicy",
    "ConsumerRef",
    "CounterSet",
    "Device",
    "DeviceAttribute",
    "DeviceClass",
    "DeviceCondition",
    "DeviceConfig",
    "DeviceConstraint",
    "DeviceCounterConsumption",
    "DeviceID",
    "DeviceRequest",
    "DeviceRequestAllocationResult",
    "DeviceSubRequest",
    "PodResourceClaim",
    "PodResourceClaimStatus",
    "ResourceClaim",
    "ResourceClaimSpec",
    "ResourceClaimTemplate",
    "ResourcePool",
    "ResourceSlice",
    "parse_device_class",
    "parse_pod_resource_claim_statuses",
    "parse_pod_resource_claims",
    "parse_resource_claim",
    "parse_resource_claim_template",
    "parse_resource_slice",
]

EXACT_COUNT = "ExactCount"
ALL = "All"
# resourceapi.Finalizer: the scheduler adds it before it writes an allocation.
FINALIZER = "resource.kubernetes.io/delete-protection"
# resourceapi.AllocationResultsMaxSize
ALLOCATION_RESULTS_MAX_SIZE = 32
# resourceapi.ExtendedResourceClaimAnnotation: on the claim the scheduler creates for a pod's
# extended resources backed by DRA.
EXTENDED_RESOURCE_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
# resourceapi.ResourceDeviceClassPrefix: every DeviceClass also backs the extended resource
# ``deviceclass.resource.kubernetes.io/<class name>`` (its implicit name).
IMPLICIT_EXTENDED_RESOURCE_PREFIX = "deviceclass.resource.kubernetes.io/"


def _str(raw: Any) -> str:
    return raw if isinstance(raw, str) else ""


def _obj(raw: Any, where: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=where)
    return raw


def _list(raw: Any, where: str) -> Sequence[Any]:
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ParseError("must be a list", field=where)
    return raw


def _int(raw: Any, where: str, default: int = 0) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int):
        raise ParseError(f"must be an integer, got {raw!r}", field=where)
    return raw


def _opt_bool(raw: Any) -> bool | None:
    return raw if isinstance(raw, bool) else None


# --- devices ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeviceID:
    """upstream's ``DeviceID``: driver, pool and device name; ``str()`` is ``driver/pool/device``.
    Its hash is computed once: the allocator looks a device up in several sets per candidate, and a
    dataclass's own ``__hash__`` builds and hashes a tuple on every lookup."""

    driver: str
    pool: str
    device: str
    _hash: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_hash", hash((self.driver, self.pool, self.device)))

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[DeviceID], tuple[str, str, str]]:
        # Rebuilt from its fields: another process hashes strings with another seed.
        return DeviceID, (self.driver, self.pool, self.device)

    def __str__(self) -> str:
        return f"{self.driver}/{self.pool}/{self.device}"


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
                     r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$")


@dataclass(frozen=True, slots=True)
class DeviceAttribute:
    """One of ``int``, ``bool``, ``string`` or ``version`` (a semver 2.0.0 string): ``kind`` says which.
    Two attributes are equal when kind and value are (matchAttribute's comparison)."""

    kind: str
    value: int | bool | str


def _attribute(raw: Any, where: str) -> DeviceAttribute:
    m = _obj(raw, where)
    for kind, key, typ in (("int", "int", int), ("bool", "bool", bool), ("string", "string", str),
                           ("version", "version", str)):
        if key in m and m[key] is not None:
            v = m[key]
            if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
                raise ParseError(f"must be a {kind}", field=f"{where}.{key}")
            if kind == "version" and not _SEMVER.match(str(v)):
                raise ParseError(f"must be a semantic version, got {v!r}", field=f"{where}.{key}")
            return DeviceAttribute(kind, v)
    # A list-typed attribute (DRAListTypeAttributes, alpha) or a future kind: kept, matches nothing.
    return DeviceAttribute("unknown", "")


@dataclass(frozen=True, slots=True)
class CapacityRequestPolicy:
    """A device capacity's ``requestPolicy`` (DRAConsumableCapacity): the ``default`` consumed when
    a request names no amount, and either ``valid_values`` (ascending) or a ``valid_range``
    (``range_min``, optional ``range_max`` and ``range_step``). ``None``: not set."""

    default: Fraction | None = None
    valid_values: tuple[Fraction, ...] = ()
    has_range: bool = False
    range_min: Fraction | None = None
    range_max: Fraction | None = None
    range_step: Fraction | None = None


@dataclass(frozen=True, slots=True)
class CounterSet:
    """A slice's ``sharedCounters[]`` entry (DRAPartitionableDevices): counters by name."""

    name: str
    counters: Mapping[str, Fraction] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class DeviceCounterConsumption:
    """A device's ``consumesCounters[]`` entry: what it takes from the counter set named."""

    counter_set: str
    counters: Mapping[str, Fraction] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Device:
    """A device of a slice: ``attributes`` and ``capacity`` by qualified name as written (an
    unqualified name belongs to the slice's driver); capacity values are exact quantities, and
    ``request_policies`` the capacities' ``requestPolicy`` where set. ``consumes_counters``
    (partitionable devices) and ``allow_multiple_allocations`` (consumable capacity) are what the
    allocator reads of those features."""

    name: str
    attributes: Mapping[str, DeviceAttribute] = field(default_factory=dict)
    capacity: Mapping[str, Fraction] = field(default_factory=dict)
    # perDeviceNodeSelection: where this device is reachable
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    consumes_counters: tuple[DeviceCounterConsumption, ...] = ()
    has_binding_conditions: bool = False
    # taints: the slice's own, and (``DraStore.slices``) those DeviceTaintRules add
    taints: tuple[DeviceTaint, ...] = ()
    # KEP-5007: conditions the claim's status.devices must show True (or a failure one True)
    # before the pod is bound
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()
    binds_to_node: bool = False
    allow_multiple_allocations: bool = False
    request_policies: Mapping[str, CapacityRequestPolicy] = field(default_factory=dict)
    # the JSON node selector, for an allocation result's nodeSelector (perDeviceNodeSelection)
    node_selector_raw: Mapping[str, Any] | None = None


def _q(raw: Any, where: str) -> Fraction:
    """A quantity (a string, or a JSON integer) as an exact number."""
    try:
        return parse_quantity(raw) if isinstance(raw, str) else Fraction(_int(raw, ""))
    except ParseError as e:
        raise ParseError(e.problem, field=where) from None


def _opt_q(raw: Any, where: str) -> Fraction | None:
    return None if raw is None else _q(raw, where)


def _request_policy(raw: Any, where: str) -> CapacityRequestPolicy | None:
    if raw is None:
        return None
    m = _obj(raw, where)
    rng = m.get("validRange")
    r = _obj(rng, f"{where}.validRange")
    return CapacityRequestPolicy(
        default=_opt_q(m.get("default"), f"{where}.default"),
        valid_values=tuple(_q(v, f"{where}.validValues[{i}]")
                           for i, v in enumerate(_list(m.get("validValues"), f"{where}.validValues"))),
        has_range=rng is not None,
        range_min=_opt_q(r.get("min"), f"{where}.validRange.min"),
        range_max=_opt_q(r.get("max"), f"{where}.validRange.max"),
        range_step=_opt_q(r.get("step"), f"{where}.validRange.step"),
    )


def _counters(raw: Any, where: str) -> dict[str, Fraction]:
    return {str(k): _q(_obj(v, f"{where}[{k}]").get("value"), f"{where}[{k}].value")
            for k, v in _obj(raw, where).items()}


def _device(raw: Any, where: str) -> Device:
    m = _obj(raw, where)
    attrs = {str(k): _attribute(v, f"{where}.attributes[{k}]")
             for k, v in _obj(m.get("attributes"), f"{where}.attributes").items()}
    cap: dict[str, Fraction] = {}
    policies: dict[str, CapacityRequestPolicy] = {}
    for k, v in _obj(m.get("capacity"), f"{where}.capacity").items():
        c = _obj(v, f"{where}.capacity[{k}]")
        cap[str(k)] = _q(c.get("value"), f"{where}.capacity[{k}].value")
        policy = _request_policy(c.get("requestPolicy"), f"{where}.capacity[{k}].requestPolicy")
        if policy is not None:
            policies[str(k)] = policy
    consumes = tuple(
        DeviceCounterConsumption(_str(_obj(c, f"{where}.consumesCounters[{i}]").get("counterSet")),
                                 _counters(_obj(c, "").get("counters"), f"{where}.consumesCounters[{i}].counters"))
        for i, c in enumerate(_list(m.get("consumesCounters"), f"{where}.consumesCounters")))
    sel = m.get("nodeSelector")
    return Device(
        name=_str(m.get("name")),
        attributes=attrs,
        capacity=cap,
        node_name=_str(m.get("nodeName")),
        node_selector=None if sel is None else parse_node_selector(sel, f"{where}.nodeSelector"),
        all_nodes=m.get("allNodes") is True,
        consumes_counters=consumes,
        has_binding_conditions=bool(m.get("bindingConditions")),
        taints=tuple(parse_device_taint(t, f"{where}.taints[{i}]")
                     for i, t in enumerate(_list(m.get("taints"), f"{where}.taints"))),
        binding_conditions=_strings(m.get("bindingConditions"), f"{where}.bindingConditions"),
        binding_failure_conditions=_strings(m.get("bindingFailureConditions"), f"{where}.bindingFailureConditions"),
        binds_to_node=m.get("bindsToNode") is True,
        allow_multiple_allocations=m.get("allowMultipleAllocations") is True,
        request_policies=policies,
        node_selector_raw=sel if isinstance(sel, Mapping) else None,
    )


def _strings(raw: Any, where: str) -> tuple[str, ...]:
    return tuple(x for x in _list(raw, where) if isinstance(x, str))


@dataclass(frozen=True, slots=True)
class ResourcePool:
    name: str
    generation: int = 0
    resource_slice_count: int = 0


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    """A ResourceSlice: exactly one of ``node_name``, ``node_selector``, ``all_nodes`` or
    ``per_device_node_selection`` says where its devices are (API validation); ``shared_counters``:
    the counter sets it publishes for its pool (partitionable devices)."""

    name: str
    driver: str
    pool: ResourcePool
    node_name: str = ""
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    per_device_node_selection: bool = False
    devices: tuple[Device, ...] = ()
    shared_counters: tuple[CounterSet, ...] = ()
    uid: str = ""
    resource_version: str = ""
    # the JSON node selector, for an allocation result's nodeSelector
    node_selector_raw: Mapping[str, Any] | None = None


def _identity(obj: Mapping[str, Any], kind: str, *, namespaced: bool = False
              ) -> tuple[Mapping[str, Any], str, str, str]:
    """An object's metadata, namespace (``default`` when unset; ``""`` when cluster-scoped), name,
    and the ``where`` its parse errors are located at (``"ResourceClaim ns/name"``)."""
    meta = _obj(obj.get("metadata"), "metadata")
    name = _str(meta.get("name"))
    if not namespaced:
        return meta, "", name, f"{kind} {name}"
    ns = _str(meta.get("namespace")) or "default"
    return meta, ns, name, f"{kind} {ns}/{name}"


def parse_resource_slice(obj: Mapping[str, Any]) -> ResourceSlice:
    meta, _, name, where = _identity(obj, "ResourceSlice")
    with parsing(where):
        spec = _obj(obj.get("spec"), "spec")
        pool = _obj(spec.get("pool"), "spec.pool")
        sel = spec.get("nodeSelector")
        return ResourceSlice(
            name=name,
            driver=_str(spec.get("driver")),
            pool=ResourcePool(_str(pool.get("name")), _int(pool.get("generation"), "spec.pool.generation"),
                              _int(pool.get("resourceSliceCount"), "spec.pool.resourceSliceCount")),
            node_name=_str(spec.get("nodeName")),
            node_selector=None if sel is None else parse_node_selector(sel, "spec.nodeSelector"),
            all_nodes=spec.get("allNodes") is True,
            per_device_node_selection=spec.get("perDeviceNodeSelection") is True,
            devices=tuple(_device(d, f"spec.devices[{i}]") for i, d in enumerate(_list(spec.get("devices"),
                                                                                      "spec.devices"))),
            shared_counters=tuple(
                CounterSet(_str(_obj(c, f"spec.sharedCounters[{i}]").get("name")),
                           _counters(_obj(c, "").get("counters"), f"spec.sharedCounters[{i}].counters"))
                for i, c in enumerate(_list(spec.get("sharedCounters"), "spec.sharedCounters"))),
            uid=_str(meta.get("uid")),
            resource_version=_str(meta.get("resourceVersion")),
            node_selector_raw=sel if isinstance(sel, Mapping) else None,
        )


# --- classes --------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeviceConfig:
    """An opaque configuration (``opaque: {driver, parameters}``) and the requests it applies to
    (a claim's config; empty: all). ``raw`` is the configuration as written, passed through."""

    requests: tuple[str, ...] = ()
    raw: Mapping[str, Any] = field(default_factory=dict)


def _configs(raw: Any, where: str) -> tuple[DeviceConfig, ...]:
    out = []
    for i, c in enumerate(_list(raw, where)):
        m = _obj(c, f"{where}[{i}]")
        reqs = tuple(r for r in _list(m.get("requests"), f"{where}[{i}].requests") if isinstance(r, str))
        out.append(DeviceConfig(reqs, {k: v for k, v in m.items() if k != "requests"}))
    return tuple(out)


def _selectors(raw: Any, where: str) -> tuple[str | None, ...]:
    """CEL expressions; ``None`` for a selector with no ``cel`` (an unknown future selector type)."""
    out: list[str | None] = []
    for i, s in enumerate(_list(raw, where)):
        cel = _obj(s, f"{where}[{i}]").get("cel")
        out.append(None if not isinstance(cel, Mapping) else _str(cel.get("expression")))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    selectors: tuple[str | None, ...] = ()
    config: tuple[DeviceConfig, ...] = ()
    extended_resource_name: str = ""
    generation: int = 0
    uid: str = ""
    # metadata.creationTimestamp (RFC 3339, UTC: sorts as text): the newest class wins an
    # extendedResourceName several classes name.
    created: str = ""


def parse_device_class(obj: Mapping[str, Any]) -> DeviceClass:
    meta, _, name, where = _identity(obj, "DeviceClass")
    with parsing(where):
        spec = _obj(obj.get("spec"), "spec")
        return DeviceClass(name, _selectors(spec.get("selectors"), "spec.selectors"),
                           _configs(spec.get("config"), "spec.config"), _str(spec.get("extendedResourceName")),
                           _int(meta.get("generation"), "metadata.generation"), _str(meta.get("uid")),
                           _str(meta.get("creationTimestamp")))


# --- claims ---------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class DeviceSubRequest:
    """An ``exactly`` request or one ``firstAvailable`` entry (upstream's ``requestAccessor``):
    ``admin_access`` is ``None`` when unset (always for a subrequest)."""

    name: str
    device_class_name: str
    selectors: tuple[str | None, ...] = ()
    allocation_mode: str = EXACT_COUNT
    count: int = 1
    admin_access: bool | None = None
    tolerations: tuple[DeviceToleration, ...] = ()
    # ``capacity.requests`` (DRAConsumableCapacity) by capacity name; ``None``: no ``capacity``.
    capacity_requests: Mapping[str, Fraction] | None = None

    @property
    def has_capacity_requests(self) -> bool:
        """Whether ``capacity`` is set (upstream's ``Capacity != nil``)."""
        return self.capacity_requests is not None


def _capacity_requests(raw: Any, where: str) -> Mapping[str, Fraction] | None:
    if raw is None:
        return None
    reqs = _obj(raw, where).get("requests")
    return {str(k): _q(v, f"{where}.requests[{k}]") for k, v in _obj(reqs, f"{where}.requests").items()}


def _sub_request(m: Mapping[str, Any], name: str, where: str) -> DeviceSubRequest:
    mode = _str(m.get("allocationMode")) or EXACT_COUNT
    count = _int(m.get("count"), f"{where}.count", 1 if mode == EXACT_COUNT else 0)
    return DeviceSubRequest(
        name=name,
        device_class_name=_str(m.get("deviceClassName")),
        selectors=_selectors(m.get("selectors"), f"{where}.selectors"),
        allocation_mode=mode,
        count=count,
        admin_access=_opt_bool(m.get("adminAccess")),
        tolerations=tuple(parse_device_toleration(t, f"{where}.tolerations[{i}]")
                          for i, t in enumerate(_list(m.get("tolerations"), f"{where}.tolerations"))),
        capacity_requests=_capacity_requests(m.get("capacity"), f"{where}.capacity"),
    )


@dataclass(frozen=True, slots=True)
class DeviceRequest:
    """A claim's request: ``exactly`` one kind of device, or the ``first_available`` of a list."""

    name: str
    exactly: DeviceSubRequest | None = None
    first_available: tuple[DeviceSubRequest, ...] = ()


@dataclass(frozen=True, slots=True)
class DeviceConstraint:
    """``requests`` (empty: all) and one of ``match_attribute`` or ``distinct_attribute``
    (DRAConsumableCapacity); neither: a constraint type the allocator does not know."""

    requests: tuple[str, ...] = ()
    match_attribute: str | None = None
    distinct_attribute: str | None = None


@dataclass(frozen=True, slots=True)
class ResourceClaimSpec:
    requests: tuple[DeviceRequest, ...] = ()
    constraints: tuple[DeviceConstraint, ...] = ()
    config: tuple[DeviceConfig, ...] = ()


def _claim_spec(raw: Any, where: str) -> ResourceClaimSpec:
    devices = _obj(_obj(raw, where).get("devices"), f"{where}.devices")
    requests = []
    for i, r in enumerate(_list(devices.get("requests"), f"{where}.devices.requests")):
        f = f"{where}.devices.requests[{i}]"
        m = _obj(r, f)
        name = _str(m.get("name"))
        exactly = m.get("exactly")
        subs = tuple(_sub_request(_obj(s, f"{f}.firstAvailable[{j}]"), _str(_obj(s, "").get("name")),
                                  f"{f}.firstAvailable[{j}]")
                     for j, s in enumerate(_list(m.get("firstAvailable"), f"{f}.firstAvailable")))
        requests.append(DeviceRequest(
            name, None if not isinstance(exactly, Mapping) else _sub_request(exactly, name, f"{f}.exactly"), subs))
    constraints = []
    for i, c in enumerate(_list(devices.get("constraints"), f"{where}.devices.constraints")):
        m = _obj(c, f"{where}.devices.constraints[{i}]")
        attr, distinct = m.get("matchAttribute"), m.get("distinctAttribute")
        constraints.append(DeviceConstraint(tuple(r for r in _list(m.get("requests"), "") if isinstance(r, str)),
                                            attr if isinstance(attr, str) and attr else None,
                                            distinct if isinstance(distinct, str) and distinct else None))
    return ResourceClaimSpec(tuple(requests), tuple(constraints),
                             _configs(devices.get("config"), f"{where}.devices.config"))


@dataclass(frozen=True, slots=True)
class DeviceRequestAllocationResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool | None = None
    # consumable capacity: the share of a device allocated to several claims, and what it took
    share_id: str | None = None
    consumed_capacity: Mapping[str, Fraction] | None = None
    # the request's tolerations, and the device's binding conditions (upstream copies both in)
    tolerations: tuple[DeviceToleration, ...] = ()
    binding_conditions: tuple[str, ...] = ()
    binding_failure_conditions: tuple[str, ...] = ()

    @property
    def id(self) -> DeviceID:
        return DeviceID(self.driver, self.pool, self.device)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"request": self.request, "driver": self.driver, "pool": self.pool,
                               "device": self.device}
        if self.admin_access is not None:
            out["adminAccess"] = self.admin_access
        if self.share_id is not None:
            out["shareID"] = self.share_id
        if self.consumed_capacity is not None:
            out["consumedCapacity"] = {k: format_quantity(v) for k, v in self.consumed_capacity.items()}
        if self.tolerations:
            out["tolerations"] = [t.to_json() for t in self.tolerations]
        if self.binding_conditions:
            out["bindingConditions"] = list(self.binding_conditions)
        if self.binding_failure_conditions:
            out["bindingFailureConditions"] = list(self.binding_failure_conditions)
        return out


@dataclass(frozen=True, slots=True)
class AllocationResult:
    """``status.allocation``: the devices, the configs copied from class and claim (``source``:
    FromClass / FromClaim, with their requests), and where the claim can be used."""

    results: tuple[DeviceRequestAllocationResult, ...] = ()
    config: tuple[tuple[str, tuple[str, ...], Mapping[str, Any]], ...] = ()
    node_selector: NodeSelector | None = None
    node_selector_raw: Mapping[str, Any] | None = None
    # allocationTimestamp (RFC 3339): PreBind sets it for binding conditions (their timeout)
    allocation_timestamp: str = ""

    def to_json(self) -> dict[str, Any]:
        """The JSON PreBind writes as ``status.allocation``."""
        devices: dict[str, Any] = {"results": [r.to_json() for r in self.results]}
        if self.config:
            devices["config"] = [{"source": s, **({"requests": list(r)} if r else {}), **dict(c)}
                                 for s, r, c in self.config]
        out: dict[str, Any] = {"devices": devices}
        if self.node_selector_raw is not None:
            out["nodeSelector"] = self.node_selector_raw
        if self.allocation_timestamp:
            out["allocationTimestamp"] = self.allocation_timestamp
        return out


def parse_allocation(raw: Any, where: str = "status.allocation") -> AllocationResult | None:
    if raw is None:
        return None
    m = _obj(raw, where)
    devices = _obj(m.get("devices"), f"{where}.devices")
    results = []
    for i, r in enumerate(_list(devices.get("results"), f"{where}.devices.results")):
        d = _obj(r, f"{where}.devices.results[{i}]")
        f = f"{where}.devices.results[{i}]"
        share = d.get("shareID")
        consumed = d.get("consumedCapacity")
        results.append(DeviceRequestAllocationResult(
            _str(d.get("request")), _str(d.get("driver")), _str(d.get("pool")), _str(d.get("device")),
            _opt_bool(d.get("adminAccess")), share if isinstance(share, str) else None,
            None if consumed is None else {str(k): _q(v, f"{f}.consumedCapacity[{k}]")
                                           for k, v in _obj(consumed, "").items()},
            tuple(parse_device_toleration(t, f"{f}.tolerations[{j}]")
                  for j, t in enumerate(_list(d.get("tolerations"), f"{f}.tolerations"))),
            _strings(d.get("bindingConditions"), f"{f}.bindingConditions"),
            _strings(d.get("bindingFailureConditions"), f"{f}.bindingFailureConditions")))
    config = []
    for i, c in enumerate(_list(devices.get("config"), f"{where}.devices.config")):
        d = _obj(c, f"{where}.devices.config[{i}]")
        config.append((_str(d.get("source")), tuple(x for x in _list(d.get("requests"), "") if isinstance(x, str)),
                       {k: v for k, v in d.items() if k not in ("source", "requests")}))
    sel = m.get("nodeSelector")
    return AllocationResult(tuple(results), tuple(config),
                            None if sel is None else parse_node_selector(sel, f"{where}.nodeSelector"),
                            sel if isinstance(sel, Mapping) else None, _str(m.get("allocationTimestamp")))


@dataclass(frozen=True, slots=True)
class DeviceCondition:
    """A condition of ``status.devices[].conditions`` (metav1.Condition: what binding needs)."""

    type: str
    status: str = ""
    reason: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class AllocatedDeviceStatus:
    """An entry of ``status.devices``: a driver's report on one allocated device."""

    driver: str
    pool: str
    device: str
    conditions: tuple[DeviceCondition, ...] = ()

    def condition(self, type_: str) -> DeviceCondition | None:
        """``apimeta.FindStatusCondition``."""
        return next((c for c in self.conditions if c.type == type_), None)


def _device_statuses(raw: Any, where: str) -> tuple[AllocatedDeviceStatus, ...]:
    out = []
    for i, d in enumerate(_list(raw, where)):
        m = _obj(d, f"{where}[{i}]")
        conditions = tuple(DeviceCondition(_str(c.get("type")), _str(c.get("status")), _str(c.get("reason")),
                                           _str(c.get("message")))
                           for c in _list(m.get("conditions"), f"{where}[{i}].conditions") if isinstance(c, Mapping))
        out.append(AllocatedDeviceStatus(_str(m.get("driver")), _str(m.get("pool")), _str(m.get("device")),
                                         conditions))
    return tuple(out)


@dataclass(frozen=True, slots=True)
class ConsumerRef:
    """An entry of ``status.reservedFor``."""

    api_group: str = ""
    resource: str = "pods"
    name: str = ""
    uid: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"resource": self.resource, "name": self.name, "uid": self.uid}
        if self.api_group:
            out["apiGroup"] = self.api_group
        return out


@dataclass(frozen=True, slots=True)
class ResourceClaim:
    namespace: str
    name: str
    uid: str = ""
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)
    allocation: AllocationResult | None = None
    reserved_for: tuple[ConsumerRef, ...] = ()
    # status.devices: the drivers' reports (binding conditions are read there)
    devices: tuple[AllocatedDeviceStatus, ...] = ()
    deleting: bool = False
    # the controlling ownerReference: (apiVersion, kind, name, uid)
    controller: tuple[str, str, str, str] | None = None
    finalizers: tuple[str, ...] = ()
    generation: int = 0
    resource_version: str = ""
    annotations: Mapping[str, str] = field(default_factory=dict)
    generate_name: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def is_extended_resource_claim(self) -> bool:
        return self.annotations.get(EXTENDED_RESOURCE_CLAIM_ANNOTATION) == "true"

    def is_reserved_for(self, pod_uid: str) -> bool:
        """``resourceclaim.IsReservedForPod`` (pods only)."""
        return any(r.uid == pod_uid for r in self.reserved_for)


def _controller(meta: Mapping[str, Any]) -> tuple[str, str, str, str] | None:
    for ref in _list(meta.get("ownerReferences"), "metadata.ownerReferences"):
        if isinstance(ref, Mapping) and ref.get("controller") is True:
            return (_str(ref.get("apiVersion")), _str(ref.get("kind")), _str(ref.get("name")), _str(ref.get("uid")))
    return None


def parse_resource_claim(obj: Mapping[str, Any]) -> ResourceClaim:
    meta, ns, name, where = _identity(obj, "ResourceClaim", namespaced=True)
    with parsing(where):
        status = _obj(obj.get("status"), "status")
        reserved = tuple(ConsumerRef(_str(r.get("apiGroup")), _str(r.get("resource")), _str(r.get("name")),
                                     _str(r.get("uid")))
                         for r in _list(status.get("reservedFor"), "status.reservedFor") if isinstance(r, Mapping))
        return ResourceClaim(
            namespace=ns,
            name=name,
            uid=_str(meta.get("uid")),
            spec=_claim_spec(obj.get("spec"), "spec"),
            allocation=parse_allocation(status.get("allocation")),
            reserved_for=reserved,
            devices=_device_statuses(status.get("devices"), "status.devices"),
            deleting=bool(meta.get("deletionTimestamp")),
            controller=_controller(meta),
            finalizers=tuple(f for f in _list(meta.get("finalizers"), "metadata.finalizers") if isinstance(f, str)),
            generation=_int(meta.get("generation"), "metadata.generation"),
            resource_version=_str(meta.get("resourceVersion")),
            annotations={str(k): str(v) for k, v in _obj(meta.get("annotations"), "metadata.annotations").items()},
            generate_name=_str(meta.get("generateName")),
        )


@dataclass(frozen=True, slots=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    spec: ResourceClaimSpec = field(default_factory=ResourceClaimSpec)
    labels: Mapping[str, str] = field(default_factory=dict)
    annotations: Mapping[str, str] = field(default_factory=dict)


def parse_resource_claim_template(obj: Mapping[str, Any]) -> ResourceClaimTemplate:
    _, ns, name, where = _identity(obj, "ResourceClaimTemplate", namespaced=True)
    with parsing(where):
        spec = _obj(obj.get("spec"), "spec")
        tmeta = _obj(spec.get("metadata"), "spec.metadata")
        return ResourceClaimTemplate(
            ns, name, _claim_spec(spec.get("spec"), "spec.spec"),
            {str(k): str(v) for k, v in _obj(tmeta.get("labels"), "spec.metadata.labels").items()},
            {str(k): str(v) for k, v in _obj(tmeta.get("annotations"), "spec.metadata.annotations").items()})


# --- the pod's side -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class PodResourceClaim:
    """``spec.resourceClaims[]``: exactly one of the two names is set (API validation); neither is a
    future source (upstream's ``ErrAPIUnsupported``)."""

    name: str
    resource_claim_name: str | None = None
    resource_claim_template_name: str | None = None


@dataclass(frozen=True, slots=True)
class PodResourceClaimStatus:
    """``status.resourceClaimStatuses[]``: the claim generated for a template (``None``: none was
    needed)."""

    name: str
    resource_claim_name: str | None = None


def parse_pod_resource_claims(raw: Any, where: str = "spec.resourceClaims") -> tuple[PodResourceClaim, ...]:
    out = []
    for i, c in enumerate(_list(raw, where)):
        m = _obj(c, f"{where}[{i}]")
        rcn, rctn = m.get("resourceClaimName"), m.get("resourceClaimTemplateName")
        out.append(PodResourceClaim(_str(m.get("name")), rcn if isinstance(rcn, str) else None,
                                    rctn if isinstance(rctn, str) else None))
    return tuple(out)


def parse_pod_resource_claim_statuses(raw: Any, where: str = "status.resourceClaimStatuses"
                                      ) -> tuple[PodResourceClaimStatus, ...]:
    out = []
    for i, c in enumerate(_list(raw, where)):
        m = _obj(c, f"{where}[{i}]")
        rcn = m.get("resourceClaimName")
        out.append(PodResourceClaimStatus(_str(m.get("name")), rcn if isinstance(rcn, str) else None))
    return tuple(out)
