"""A pod's requests, as upstream's ``component-helpers/resource/helpers.go`` computes them
(``PodRequests`` with the options the scheduler passes).

``pod.py`` reads each container's ``resources.requests`` and hands them here:

* **containers** add up; a restartable (sidecar) init container adds to that sum and runs beside
  the init containers after it; a regular init container runs alone beside the sidecars started
  before it; the pod needs the max of the two (``aggregate``).
* **in-place resize** (InPlacePodVerticalScaling, GA; ``use_status_resources``): an assigned pod
  counts, per resource, the max of three aggregates: the spec, what the node *allocated*
  (``status.containerStatuses[].allocatedResources``) and what is *actuated*
  (``status.containerStatuses[].resources.requests``). A container without a status counts its
  spec. When the kubelet reports a resize ``Infeasible`` (condition ``PodResizePending``), the
  spec is left out: the pod keeps what it has. With InPlacePodLevelResourcesVerticalScaling
  (``pod_level_resize``), the pod-level status maps (``status.allocatedResources`` and
  ``status.resources.requests``), when both are there, stand for the containers' aggregates.
* **pod-level resources** (PodLevelResources; ``pod_level_resources``): ``spec.resources.requests``
  replace the aggregate for the resources pod-level management supports (cpu, memory,
  ``hugepages-*``: ``is_supported_pod_level_resource``); any other name there is ignored. With
  pod-level resize, the pod-level status (less the overhead) is maxed in as above.
* ``spec.overhead`` is added last.

The pending pod has no status, so the same computation gives upstream's spec-only request for it
(Fit's ``computePodResourceRequest``) and the status-aware one for the pods on nodes
(``NodeInfo``'s ``calculateResource``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.model.parsing import resource_list

__all__ = ["DEFAULT_MEMORY_REQUEST", "DEFAULT_MILLI_CPU_REQUEST", "DEFAULT_REQUEST_OPTIONS", "HUGE_PAGES_PREFIX",
           "RequestOptions", "add_into", "aggregate", "is_pod_resize_infeasible", "is_supported_pod_level_resource",
           "max_into", "pod_requests", "status_affects_requests"]

HUGE_PAGES_PREFIX = "hugepages-"
# The scheduler's NonMissingContainerRequests (``pkg/scheduler/util``): scoring's request for a
# container that names no cpu or memory request.
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024
_POD_LEVEL = frozenset({"cpu", "memory"})


@dataclass(frozen=True, slots=True)
class RequestOptions:
    """The gates that shape a pod's requests (upstream's ``PodResourcesOptions`` as the scheduler's
    ``calculateResource`` fills it from the feature gates; the service builds it from its gates)."""

    pod_level_resources: bool = True      # PodLevelResources (beta, on)
    use_status_resources: bool = True     # InPlacePodVerticalScaling (GA)
    pod_level_resize: bool = True         # InPlacePodLevelResourcesVerticalScaling (beta, on)


DEFAULT_REQUEST_OPTIONS = RequestOptions()


@dataclass(frozen=True, slots=True)
class ContainerSpec:
    """One container's requests, for the resize path: its name (to find its status), whether it is
    an init container and whether that one restarts (a sidecar)."""

    name: str
    init: bool
    restartable: bool
    requests: Mapping[str, int]


def is_supported_pod_level_resource(name: str) -> bool:
    """Upstream's ``IsSupportedPodLevelResource``: cpu, memory and ``hugepages-*``."""
    return name in _POD_LEVEL or name.startswith(HUGE_PAGES_PREFIX)


def is_pod_resize_infeasible(status: Mapping[str, Any]) -> bool:
    """Upstream's ``IsPodResizeInfeasible``: the first ``PodResizePending`` condition says Infeasible."""
    for c in status.get("conditions") or ():
        if isinstance(c, Mapping) and c.get("type") == "PodResizePending":
            return c.get("reason") == "Infeasible"
    return False


def add_into(into: dict[str, int], more: Mapping[str, int]) -> None:
    for k, v in more.items():
        into[k] = into.get(k, 0) + v


def max_into(into: dict[str, int], more: Mapping[str, int]) -> None:
    """Upstream's ``maxResourceList``: each resource of ``more`` raises ``into``'s to it."""
    for k, v in more.items():
        if k not in into or v > into[k]:
            into[k] = v


def aggregate(containers: Sequence[Mapping[str, int]], inits: Sequence[tuple[Mapping[str, int], bool]]
              ) -> dict[str, int]:
    """Upstream's ``aggregateContainerResourcesByFn``: app containers, then init containers as
    ``(requests, restartable)`` in spec order (the module docstring)."""
    reqs: dict[str, int] = {}
    for c in containers:
        add_into(reqs, c)
    sidecars: dict[str, int] = {}
    init_max: dict[str, int] = {}
    for c, restartable in inits:
        if restartable:
            add_into(reqs, c)
            add_into(sidecars, c)
            max_into(init_max, sidecars)
        else:
            alone = dict(c)
            add_into(alone, sidecars)
            max_into(init_max, alone)
    max_into(reqs, init_max)
    return reqs


def _aggregate_specs(specs: Sequence[tuple[ContainerSpec, Mapping[str, int]]]) -> dict[str, int]:
    return aggregate([r for c, r in specs if not c.init], [(r, c.restartable) for c, r in specs if c.init])


def _status_map(raw: Any, field: str) -> dict[str, int] | None:
    """A status ResourceList; ``None`` when absent (Go's nil map: ``{}`` is an empty, non-nil one)."""
    return None if raw is None else resource_list(raw, field)


def _container_statuses(status: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Upstream's ``findContainerStatus``: by name, app containers' statuses before init ones'."""
    found: dict[str, Mapping[str, Any]] = {}
    for key in ("initContainerStatuses", "containerStatuses"):   # later wins: containers first
        for cs in status.get(key) or ():
            if isinstance(cs, Mapping) and isinstance(cs.get("name"), str):
                found[cs["name"]] = cs
    return found


def _raw_requests(spec: Mapping[str, Any]) -> dict[str, Any]:
    """Each container's ``resources.requests`` as sent, by name."""
    out: dict[str, Any] = {}
    for key in ("containers", "initContainers"):
        for c in spec.get(key) or ():
            if isinstance(c, Mapping):
                out[str(c.get("name") or "")] = (c.get("resources") or {}).get("requests") or {}
    return out


def _has_resize_status(spec: Mapping[str, Any], status: Mapping[str, Any]) -> bool:
    """Whether any status field can change the answer. Without one, or when every container's
    allocated and actuated requests are its spec's as sent (what the kubelet reports for a pod
    that is not resizing, the common case), the max is the spec, found without parsing."""
    if status.get("allocatedResources") is not None or status.get("resources") is not None:
        return True
    raw: dict[str, Any] | None = None
    for key in ("containerStatuses", "initContainerStatuses"):
        for cs in status.get(key) or ():
            if not isinstance(cs, Mapping):
                continue
            alloc, res = cs.get("allocatedResources"), cs.get("resources")
            if alloc is None and res is None:
                continue
            if raw is None:
                raw = _raw_requests(spec)
            want = raw.get(str(cs.get("name") or ""))
            if want is None or (alloc is not None and alloc != want):
                return True
            actuated = res.get("requests") if isinstance(res, Mapping) else None
            if actuated is not None and actuated != {k: v for k, v in want.items() if k in _POD_LEVEL}:
                return True
    return is_pod_resize_infeasible(status)


def status_affects_requests(spec: Mapping[str, Any], status: Mapping[str, Any],
                            opts: RequestOptions = DEFAULT_REQUEST_OPTIONS) -> bool:
    """Whether ``pod_requests`` reads ``status`` for this pod at all: without it the requests are a
    function of the spec alone (``model.podparser`` reuses them across status-only updates)."""
    return opts.use_status_resources and _has_resize_status(spec, status)


def _container_aggregates(containers: Sequence[ContainerSpec], status: Mapping[str, Any],
                          non_missing: Mapping[str, int] | None, opts: RequestOptions, resizing: bool
                          ) -> dict[str, int]:
    """``AggregateContainerRequests``: the spec aggregate, or with status resources the per-resource
    max of the spec, allocated and actuated aggregates (without the spec when infeasible)."""
    def with_defaults(r: Mapping[str, int] | None) -> Mapping[str, int]:
        # applyNonMissing: only an absent request is defaulted (a nil list gets every default).
        if not non_missing:
            return r or {}
        return {**non_missing, **(r or {})}

    spec = _aggregate_specs([(c, with_defaults(c.requests)) for c in containers])
    if not opts.use_status_resources or not resizing:
        return spec
    infeasible = is_pod_resize_infeasible(status)
    pod_resources = status.get("resources")
    pod_allocated = status.get("allocatedResources")
    if (opts.pod_level_resize and pod_allocated is not None and isinstance(pod_resources, Mapping)
            and pod_resources.get("requests") is not None):
        # The pod-level status maps already hold the containers' aggregate.
        allocated = resource_list(pod_allocated, "status.allocatedResources")
        actuated = resource_list(pod_resources["requests"], "status.resources.requests")
    else:
        statuses = _container_statuses(status)
        alloc_specs: list[tuple[ContainerSpec, Mapping[str, int]]] = []
        act_specs: list[tuple[ContainerSpec, Mapping[str, int]]] = []
        for c in containers:
            cs = statuses.get(c.name)
            fallback = None if infeasible else c.requests
            alloc = _status_map(cs.get("allocatedResources"), "allocatedResources") if cs is not None else None
            res = cs.get("resources") if cs is not None else None
            act = (_status_map(res.get("requests"), "resources.requests")
                   if isinstance(res, Mapping) else None)
            # containerAllocatedRequests / containerActuatedRequests
            alloc_specs.append((c, with_defaults(alloc if alloc is not None else fallback)))
            act_specs.append((c, with_defaults(act if act is not None
                                               else alloc if alloc is not None else fallback)))
        allocated, actuated = _aggregate_specs(alloc_specs), _aggregate_specs(act_specs)
    out = {} if infeasible else spec
    out = dict(out)
    max_into(out, actuated)
    max_into(out, allocated)
    return out


def _minus_overhead(raw: dict[str, int] | None, overhead: Mapping[str, int]) -> dict[str, int] | None:
    """``subtractResourceList``: the overhead off the names the list has, floored at 0."""
    if raw is None:
        return None
    return {k: max(0, v - overhead.get(k, 0)) for k, v in raw.items()}


def _pod_level(spec: Mapping[str, Any], status: Mapping[str, Any], overhead: Mapping[str, int],
               opts: RequestOptions) -> dict[str, int] | None:
    """The pod-level requests that replace the aggregate (supported names only), or ``None`` when
    ``IsPodLevelRequestsSet`` is false or PodLevelResources is off."""
    if not opts.pod_level_resources:
        return None
    pod_level = resource_list((spec.get("resources") or {}).get("requests"), "spec.resources.requests",
                              non_negative=True)
    if not any(is_supported_pod_level_resource(k) for k in pod_level):
        return None
    effective: Mapping[str, int] = pod_level
    resources, allocated = status.get("resources"), status.get("allocatedResources")
    if opts.pod_level_resize and opts.use_status_resources and (resources is not None or allocated is not None):
        st = _status_map(resources.get("requests"), "status.resources.requests") \
            if isinstance(resources, Mapping) else None
        al = _status_map(allocated, "status.allocatedResources")
        # effectivePodLevelResources: the spec drops out when the resize is infeasible.
        out: dict[str, int] = {} if is_pod_resize_infeasible(status) else dict(pod_level)
        for other in (_minus_overhead(st, overhead), _minus_overhead(al, overhead)):
            if other is not None:
                max_into(out, other)
        effective = out
    return {k: v for k, v in effective.items() if is_supported_pod_level_resource(k)}


def _non_zero(r: Mapping[str, int]) -> dict[str, int]:
    # NonMissingContainerRequests for cpu and memory: only an absent request is defaulted (an
    # explicit "0" stays 0); scoring reads no other resource of this aggregate.
    return {"cpu": r.get("cpu", DEFAULT_MILLI_CPU_REQUEST), "memory": r.get("memory", DEFAULT_MEMORY_REQUEST)}


def pod_requests(spec: Mapping[str, Any], status: Mapping[str, Any], apps: Sequence[Mapping[str, int]],
                 inits: Sequence[tuple[Mapping[str, int], bool]], names: Sequence[str],
                 opts: RequestOptions = DEFAULT_REQUEST_OPTIONS) -> tuple[dict[str, int], dict[str, int]]:
    """``PodRequests``: the requests, and their non-zero twin (cpu and memory with
    ``NonMissingContainerRequests``, which scoring reads), each with pod-level resources and the
    overhead applied. ``apps`` and ``inits`` (``(requests, restartable)``) are the containers' spec
    requests in spec order, ``names`` their names (apps, then inits) to find their statuses.

    Hot path: a pod whose status says nothing about a resize (``_has_resize_status``) costs two
    plain aggregates, as before in-place resize."""
    if status_affects_requests(spec, status, opts):
        containers = [ContainerSpec(n, False, False, r) for n, r in zip(names, apps, strict=False)]
        containers += [ContainerSpec(n, True, rs, r) for n, (r, rs) in zip(names[len(apps):], inits, strict=False)]
        defaults = {"cpu": DEFAULT_MILLI_CPU_REQUEST, "memory": DEFAULT_MEMORY_REQUEST}
        requests = _container_aggregates(containers, status, None, opts, True)
        nz_all = _container_aggregates(containers, status, defaults, opts, True)
        nz: dict[str, int] = {k: nz_all[k] for k in ("cpu", "memory") if k in nz_all}
    else:
        requests = aggregate(apps, inits)
        nz = aggregate([_non_zero(r) for r in apps], [(_non_zero(r), rs) for r, rs in inits])
    overhead = resource_list(spec.get("overhead"), "spec.overhead", non_negative=True)
    pod_level = _pod_level(spec, status, overhead, opts) if spec.get("resources") else None
    if pod_level:
        requests.update(pod_level)
        nz.update({k: v for k, v in pod_level.items() if k in ("cpu", "memory")})
    if overhead:
        add_into(requests, overhead)
        add_into(nz, overhead)
    return requests, nz
