"""The structured allocator: which devices of which ResourceSlices satisfy a pod's unallocated
claims on one node. A port of upstream's *stable* variant
(``k8s.io/dynamic-resource-allocation/structured/internal/stable``: ``allocator_stable.go`` and
``pools_stable.go``, release 1.36), the one kube-scheduler uses when only GA features are on.

**Pools** (``gather_pools``, upstream's ``GatherPools``): a slice is for the node when its
``nodeName`` is the node, its ``nodeSelector`` matches the node, or it has ``allNodes``. Slices of
one (driver, pool) with an older generation than the newest seen are out of date and ignored. A
pool whose slices for the node do not number ``resourceSliceCount`` is looked at in full: if a newer
generation exists elsewhere the pool is being replaced and is skipped; if the pool's slices of
that generation are still too few the pool is *incomplete* (nothing is allocated from it, and a
request for ``All`` devices fails with an error); duplicate device names make it *invalid*
(likewise; if no solution is found the node fails with ``invalid resource pools were
encountered``).

**Search** (``allocate_one``): claims in order, their requests in order, each device of a request
in turn: every not yet used device of every complete, valid pool that the class's and the
request's CEL selectors accept, is tried, with the claim's ``matchAttribute`` constraints checked
as it is added; the first full solution wins, and a dead end backtracks (an exhaustive search that
stops early, as upstream's). ``firstAvailable`` tries its subrequests in order. ``All`` takes every
matching device of the node's pools at once. A claim may hold at most 32 devices
(``AllocationResultsMaxSize``).

**Devices already allocated** (``is_allocated``: written, assumed or in-flight allocations of other
claims) are never given out.

**Not ported** (features upstream's stable variant gates off unless enabled, all off here): admin
access (a request with ``adminAccess`` set is an error, as with the gate off), partitionable
devices (slices with ``sharedCounters`` or ``perDeviceNodeSelection`` are skipped and devices
that consume counters are never picked), device taints (ignored, as with the gate off), binding
conditions (such devices are never picked), consumable capacity (requests with
``capacity.requests`` are an error). The per-node filter timeout is not implemented.

Selector results are cached per (expression, device) in a ``SelectorCache`` shared by all nodes and
cycles until a slice or class changes, so a device's CEL runs once, not once per node or pod.

**The single-request fast path** (``SimplePlan``): a claim with one ``exactly`` request of
``ExactCount`` devices and no constraints (the usual claim, and every claim of the DRA benchmarks)
is validated once per cycle instead of once per node, and searched without the general machinery:
the first devices, in search order, that are not in use and that the selectors accept. The devices
each slice offers a set of selectors (``SliceIndex.candidates``) and the results built for a set of
devices (``SliceIndex.results``) live as long as the index, that is until a slice or class
changes; what is in use is read from the store in every call (by pool: ``pool_allocated``), so an
allocation made or undone is seen by the next pod. Its answers, errors included, are the general
search's (checked case by case against upstream's table and on random clusters).

**Counting** (``Allocator.countable``, ``SimplePlan.free_on``): on that path, with every slice
node-local, whether a node can be given the claim is whether it has ``count`` free devices the
selectors accept, so a caller that keeps that number per node (DynamicResources' Filter does, per
node row, from the store's pool journal) needs no search on the nodes it only has to accept or
reject. ``free_on`` is -1 where a count does not decide (an invalid pool, or a selector error on a
device: the search's errors); it is checked against the search on random worlds.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from scheduler.dra.cel import CELError, DeviceEnv, compile_expression, device_env
from scheduler.dra.celcost import COST_LIMIT_EXCEEDED
from scheduler.model.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceID,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)
from scheduler.model.selectors import NodeSelector, parse_node_selector

__all__ = ["AllocationError", "Allocator", "CELSelectorError", "NodeAllocationError", "Pool", "SelectorCache",
           "SimplePlan", "gather_pools"]


class AllocationError(ValueError):
    """A problem with the claims, classes or selectors themselves (upstream's non-nil error from
    ``Allocate``): the scheduler aborts the attempt and reports it, rather than trying other nodes."""


class CELSelectorError(AllocationError):
    """A selector that does not compile, or fails at run time, on some device."""


class NodeAllocationError(AllocationError):
    """An error that concerns only the node (upstream's ``ErrFailedAllocationOnNode``): the node is
    unschedulable with this text."""


class _MaxSizeExceeded(Exception):
    pass


@dataclass(slots=True)
class Node:
    """What the allocator reads of a node: its name and labels."""

    name: str
    labels: Mapping[str, str]


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """upstream's ``NodeMatches``."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node.labels, node.name)
    return False


# --- pools ------------------------------------------------------------------------------------

@dataclass(slots=True)
class Pool:
    driver: str
    pool: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


class SliceIndex:
    """The slices of one cycle, indexed so a node's pools are found without scanning every slice:
    node-local slices by node name, the others (node selector, all nodes) in one list, and all
    slices by pool (for ``checkSlicesInPool``). Slices the stable allocator does not support
    (partitionable devices) are left out, as ``GatherPools`` skips them."""

    def __init__(self, slices: Sequence[ResourceSlice]) -> None:
        # Kept for as long as the slices do not change (the plugin keeps one per store version),
        # so what depends only on the slices is computed once, not per node per pod: each slice's
        # device ids, and a node's pools when no slice depends on node labels (``pools_for``).
        self._ids: dict[int, tuple[DeviceID, ...]] = {}
        self._pools: dict[str, list[Pool]] = {}
        # For the single-request fast path (``SimplePlan``): per (slice, selectors) the devices a
        # request can take, and the allocation results built, by request, class and devices. The
        # index lives for one version of the slices *and classes* (the plugin's does: the store's
        # ``slices_version`` moves with both), so a class's name stands for its selectors and config.
        self.candidates: dict[_Selectors, dict[int, _Candidates]] = {}
        self.results: dict[tuple[object, ...], tuple[AllocationResult]] = {}
        self.order: dict[tuple[str, str], int] = {}
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        for s in slices:
            pid = (s.driver, s.pool.name)
            self.by_pool.setdefault(pid, []).append(s)
            if s.per_device_node_selection or s.shared_counters:
                continue
            self.order.setdefault(pid, len(self.order))
            if s.node_name:
                self.by_node.setdefault(s.node_name, []).append(s)
            elif s.all_nodes or s.node_selector is not None:
                self.shared.append(s)

    def has_slices(self, node: Node) -> bool:
        """Whether any slice is for ``node`` (``for_node`` without building the list)."""
        if node.name in self.by_node:
            return True
        return any(node_matches(node, "", s.all_nodes, s.node_selector) for s in self.shared)

    def for_node(self, node: Node) -> list[ResourceSlice]:
        local = self.by_node.get(node.name, [])
        shared = [s for s in self.shared if node_matches(node, "", s.all_nodes, s.node_selector)]
        return local + shared if shared else local

    def device_ids(self, s: ResourceSlice) -> tuple[DeviceID, ...]:
        """``DeviceID(driver, pool, name)`` of each of ``s``'s devices, in order (the index holds
        ``s``, so its ``id`` stays its own)."""
        ids = self._ids.get(id(s))
        if ids is None:
            ids = self._ids[id(s)] = tuple(DeviceID(s.driver, s.pool.name, d.name) for d in s.devices)
        return ids

    def pools_for(self, node: Node) -> list[Pool]:
        """``gather_pools`` for ``node``; memoised by node name when every slice is node-local
        (then the pools depend on nothing else). The pools are only read by the search."""
        if self.shared:
            return gather_pools(self, node)
        pools = self._pools.get(node.name)
        if pools is None:
            pools = self._pools[node.name] = gather_pools(self, node)
        return pools


def gather_pools(index: SliceIndex, node: Node) -> list[Pool]:
    """upstream's ``GatherPools`` for one node."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in index.for_node(node):
        pid = (s.driver, s.pool.name)
        have = pools.get(pid)
        if have is None or s.pool.generation > have[0].pool.generation:
            pools[pid] = [s]
        elif s.pool.generation == have[0].pool.generation:
            have.append(s)
    out: list[Pool] = []
    for pid in sorted(pools, key=lambda p: index.order.get(p, 0)):
        slices = pools[pid]
        first = slices[0].pool
        if len(slices) == first.resource_slice_count:
            out.append(_build_pool(pid, slices))
            continue
        obsolete, all_slices = _check_slices_in_pool(index.by_pool.get(pid, []), first.generation)
        if obsolete:
            continue
        if len(all_slices) != first.resource_slice_count:
            out.append(Pool(pid[0], pid[1], incomplete=True))
            continue
        out.append(_build_pool(pid, slices))
    return out


def _check_slices_in_pool(slices: Sequence[ResourceSlice], generation: int) -> tuple[bool, list[ResourceSlice]]:
    same = []
    for s in slices:
        if s.pool.generation == generation:
            same.append(s)
        elif s.pool.generation > generation:
            return True, []
    return False, same


def _build_pool(pid: tuple[str, str], slices: list[ResourceSlice]) -> Pool:
    seen: set[str] = set()
    for s in slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate device name {d.name}")
            seen.add(d.name)
    return Pool(pid[0], pid[1], slices=slices)


# --- selector cache ----------------------------------------------------------------------------

class SelectorCache:
    """CEL results per (expression, device), and each device's CEL value (a device: driver, pool,
    generation, slice name and index); the owner clears it (``reset``) when slices or classes change."""

    def __init__(self) -> None:
        self.results: dict[tuple[str, tuple[str, str, int, str, int]], bool | CELError] = {}
        self.envs: dict[tuple[str, str, int, str, int], DeviceEnv] = {}
        self.version: object = None

    def reset(self, version: object) -> None:
        if version != self.version:
            self.results.clear()
            self.envs.clear()
            self.version = version

    def matches(self, expression: str, s: ResourceSlice, index: int) -> bool:
        """Raises ``CELError`` for a runtime error (cached too: it is a property of the device),
        and upstream's cost-limit error, unevaluated, for an expression over the budget."""
        where = (s.driver, s.pool.name, s.pool.generation, s.name, index)
        key = (expression, where)
        got = self.results.get(key)
        if got is None:
            env = self.envs.get(where)
            if env is None:
                env = self.envs[where] = device_env(s.driver, s.devices[index])
            compiled = compile_expression(expression)
            if compiled.over_budget:
                # Upstream's runtime cost limit stops such an expression (cel.CostLimit in
                # dynamic-resource-allocation/cel/compile.go); ours is never started.
                got = CELError(COST_LIMIT_EXCEEDED)
            else:
                try:
                    got = compiled.device_matches(env)
                except CELError as e:
                    got = e
            self.results[key] = got
        if isinstance(got, CELError):
            raise got
        return got


# --- the allocator --------------------------------------------------------------------------------

@dataclass(slots=True)
class _RequestData:
    request: DeviceSubRequest
    parent: str | None                 # the request's name, for a subrequest
    cls: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice]] = field(default_factory=list)
    selected_sub_request: int = 0

    @property
    def name(self) -> str:
        return self.request.name if self.parent is None else f"{self.parent}/{self.request.name}"


@dataclass(slots=True)
class _Result:
    request: str
    parent: str | None
    id: DeviceID
    slice: ResourceSlice

    @property
    def name(self) -> str:
        return self.request if self.parent is None else f"{self.parent}/{self.request}"


class _MatchAttribute:
    """upstream's ``matchAttributeConstraint``: every device of the named requests (all, when none
    is named) must have the attribute, all with the same value."""

    __slots__ = ("attribute", "name", "num_devices", "requests")

    def __init__(self, requests: tuple[str, ...], name: str) -> None:
        self.requests = frozenset(requests)
        self.name = name
        self.attribute: DeviceAttribute | None = None
        self.num_devices = 0

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)

    def add(self, request: str, sub: str, device: Device, device_id: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = _lookup_attribute(device, device_id, self.name)
        if attr is None:
            return False
        if self.num_devices == 0:
            self.attribute = attr
            self.num_devices = 1
            return True
        if attr.kind == "unknown" or attr != self.attribute:
            return False
        self.num_devices += 1
        return True

    def remove(self, request: str, sub: str) -> None:
        if self._applies(request, sub):
            self.num_devices -= 1


def _lookup_attribute(device: Device, device_id: DeviceID, name: str) -> DeviceAttribute | None:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    return device.attributes.get(ident)


@dataclass(frozen=True, slots=True)
class Features:
    """The allocator's optional features; the stable variant supports PrioritizedList (GA in 1.34)."""

    prioritized_list: bool = True


class Allocator:
    """Allocates ``claims`` (all unallocated) on one node at a time (``allocate``); reusable for
    every node of a cycle, as upstream's ``Allocator``."""

    def __init__(self, claims: Sequence[ResourceClaim], device_class: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice], is_allocated: Callable[[DeviceID], bool],
                 cache: SelectorCache | None = None, features: Features = Features(),
                 index: SliceIndex | None = None,
                 pool_allocated: Callable[[str, str], Container[str]] | None = None) -> None:
        self.claims = list(claims)
        self.device_class = device_class
        # ``index``: one the caller keeps while the slices do not change (the plugin does, per
        # store version), instead of indexing every slice again for every pod.
        self.index = index if index is not None else SliceIndex(slices)
        self.is_allocated = is_allocated
        self.cache = cache if cache is not None else SelectorCache()
        self.features = features
        # ``pool_allocated(driver, pool)``: the names of the pool's devices ``is_allocated`` holds
        # (the store keeps them per pool): the fast path's test, a string lookup, where a
        # ``DeviceID`` would hash three strings in Python for every device tried.
        self.pool_allocated = pool_allocated
        # The single-request plan of each claim list seen (by the first claim's id, the claim kept
        # so the id stays its own): ``None`` when the general search is needed.
        self._plans: dict[int, tuple[ResourceClaim, SimplePlan | None]] = {}

    def allocate(self, node: Node, claims: Sequence[ResourceClaim] | None = None
                 ) -> Sequence[AllocationResult] | None:
        """One allocation result per claim, or ``None`` when the claims cannot all be allocated on
        ``node``; raises ``AllocationError`` for a problem with the claims or classes, and
        ``NodeAllocationError`` for one with the node's pools. ``claims`` replaces the claims given
        at construction for this call (upstream's ``Allocate(ctx, node, claims)``: the
        extended-resource claim differs per node)."""
        plan = self._plan(self.claims if claims is None else claims)
        if plan is not None:
            return plan.allocate(node, no_pools=False)
        return _Run(self, node, claims=claims).run()

    def _plan(self, claims: Sequence[ResourceClaim]) -> SimplePlan | None:
        if len(claims) != 1:
            return None
        claim = claims[0]
        got = self._plans.get(id(claim))
        if got is not None and got[0] is claim:
            return got[1]
        plan = SimplePlan.make(self, claim)
        self._plans[id(claim)] = (claim, plan)
        return plan

    def countable(self, claims: Sequence[ResourceClaim] | None = None) -> SimplePlan | None:
        """The plan of ``claims`` when whether ``allocate`` succeeds on a node is a matter of
        counting (``SimplePlan.free_on``): one claim on the single-request fast path, asking for
        at least one device, every slice node-local (so a node's pools are its name's) and the
        store's per-pool sets at hand. ``None`` otherwise: then only ``allocate`` answers."""
        plan = self._plan(self.claims if claims is None else claims)
        if plan is None or plan.count < 1 or self.index.shared or self.pool_allocated is None:
            return None
        return plan

    def has_slices(self, node: Node) -> bool:
        """Whether any slice is for ``node``: a node without is answered by ``allocate_without_pools``,
        the same for every such node."""
        return self.index.has_slices(node)

    def allocate_without_pools(self, claims: Sequence[ResourceClaim] | None = None
                               ) -> Sequence[AllocationResult] | None:
        """``allocate`` on a node no slice is for (no pools): what every such node gets."""
        plan = self._plan(self.claims if claims is None else claims)
        if plan is not None:
            return plan.allocate(Node("", {}), no_pools=True)
        return _Run(self, Node("", {}), no_pools=True, claims=claims).run()


class _Run:
    """One ``Allocate`` call (upstream's ``allocator``)."""

    def __init__(self, a: Allocator, node: Node, no_pools: bool = False,
                 claims: Sequence[ResourceClaim] | None = None) -> None:
        self.no_pools = no_pools
        self.a = a
        self.node = node
        self.claims = a.claims if claims is None else list(claims)
        self.pools: list[Pool] = []
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute]] = []
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        self.result: list[list[_Result]] = [[] for _ in self.claims]

    def run(self) -> list[AllocationResult] | None:
        self.pools = [] if self.no_pools else self.a.index.pools_for(self.node)
        self.prepare()
        try:
            done = self._allocate_one(0, 0, 0, 0, False)
        except _MaxSizeExceeded:
            done = False
        if not done:
            if any(p.invalid for p in self.pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return [self._result(ci, claim) for ci, claim in enumerate(self.claims)]

    def prepare(self) -> None:
        """Validate the claims and their requests (upstream's loop before ``allocateOne``):
        ``request_data`` and ``constraints``; raises ``AllocationError``."""
        for ci, claim in enumerate(self.claims):
            min_devices = 0
            for ri, request in enumerate(claim.spec.requests):
                if request.first_available:
                    if not self.a.features.prioritized_list:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: has subrequests, "
                                              "but the DRAPrioritizedList feature is disabled")
                    least = None
                    for si, sub in enumerate(request.first_available):
                        rd = self._validate(ci, sub, request.name, (ci, ri, si))
                        self.request_data[(ci, ri, si)] = rd
                        least = rd.num_devices if least is None else min(least, rd.num_devices)
                    min_devices += least or 0
                else:
                    if request.exactly is None:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: "
                                              "missing device class name (unsupported request type?)")
                    rd = self._validate(ci, request.exactly, None, (ci, ri, 0))
                    self.request_data[(ci, ri, 0)] = rd
                    min_devices += rd.num_devices
            if min_devices > ALLOCATION_RESULTS_MAX_SIZE:
                raise AllocationError(f"claim {claim.key}: number of requested devices {min_devices} exceeds the "
                                      f"claim limit of {ALLOCATION_RESULTS_MAX_SIZE}")
            constraints = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is None:
                    raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint "
                                          "(unsupported constraint type?)")
                constraints.append(_MatchAttribute(c.requests, c.match_attribute))
            self.constraints.append(constraints)

    # --- validation --------------------------------------------------------------------------
    def _validate(self, ci: int, request: DeviceSubRequest, parent: str | None, key: tuple[int, int, int]
                  ) -> _RequestData:
        claim = self.claims[ci]
        rd = _RequestData(request, parent)
        name = rd.name if parent is None else request.name
        for i, sel in enumerate(request.selectors):
            if sel is None:
                raise AllocationError(f"claim {claim.key}, request {name}, selector #{i}: "
                                      "CEL expression empty (unsupported selector type?)")
        if request.admin_access is not None:
            raise AllocationError(f"claim {claim.key}, request {name}: admin access is requested, "
                                  "but the feature is disabled")
        if request.has_capacity_requests:
            raise AllocationError(f"claim {claim.key}, request {name}: capacity requests are not supported")
        if not request.device_class_name:
            raise AllocationError(f"claim {claim.key}, request {name}: missing device class name "
                                  "(unsupported request type?)")
        cls = self.a.device_class(request.device_class_name)
        if cls is None:
            raise AllocationError(f"claim {claim.key}, request {name}: could not retrieve device class "
                                  f'{request.device_class_name}: deviceclass.resource.k8s.io '
                                  f'"{request.device_class_name}" not found')
        rd.cls = cls
        if request.allocation_mode == EXACT_COUNT:
            rd.num_devices = request.count
        elif request.allocation_mode == ALL:
            for pool in self.pools:
                if pool.incomplete:
                    raise AllocationError(f"claim {claim.key}, request {name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently being updated")
                if pool.invalid:
                    raise AllocationError(f"claim {claim.key}, request {name}: asks for all devices, but "
                                          f"resource pool {pool.id} is currently invalid")
                for s in pool.slices:
                    for di, d in enumerate(s.devices):
                        if self._selectable(key, rd, s, di):
                            rd.all_devices.append((DeviceID(s.driver, s.pool.name, d.name), d, s))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {name}: unsupported count mode "
                                  f"{request.allocation_mode}")
        return rd

    # --- selection ---------------------------------------------------------------------------
    def _selectable(self, key: tuple[int, int, int], rd: _RequestData, s: ResourceSlice, di: int) -> bool:
        device = s.devices[di]
        if device.has_binding_conditions:
            return False
        mk = (self.a.index.device_ids(s)[di], *key)
        got = self.matches.get(mk)
        if got is not None:
            return got
        ok = True
        if rd.cls is not None:
            ok = self._selectors_match(key[0], s, di, rd.cls, rd.cls.selectors)
        if ok:
            ok = self._selectors_match(key[0], s, di, None, rd.request.selectors)
        self.matches[mk] = ok
        return ok

    def _selectors_match(self, ci: int, s: ResourceSlice, di: int, cls: DeviceClass | None,
                         selectors: Sequence[str | None]) -> bool:
        where = f"class {cls.name}" if cls is not None else f"claim {self.claims[ci].key}"
        for i, expr in enumerate(selectors):
            assert expr is not None
            compiled = compile_expression(expr)
            if compiled.error:
                raise CELSelectorError(f"{where}: selector #{i}: CEL compile error: {compiled.error}")
            try:
                if not self.a.cache.matches(expr, s, di):
                    return False
            except CELError as e:
                raise CELSelectorError(f"{where}: selector #{i}: CEL runtime error: {e}") from None
        return True

    def _in_use(self, did: DeviceID) -> bool:
        return self.a.is_allocated(did) or bool(self.allocating.get(did))

    # --- search ------------------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, sub_request: bool) -> bool:
        if ci >= len(self.claims):
            return True
        claim = self.claims[ci]
        if ri >= len(claim.spec.requests):
            try:
                return self._allocate_one(ci + 1, 0, 0, 0, False)
            except _MaxSizeExceeded:
                return False
        key = (ci, ri, si)
        rd = self.request_data[key]
        if not sub_request and rd.parent is not None:
            return self._allocate_sub_requests(ci, ri, di)
        do_all = rd.request.allocation_mode == ALL
        if do_all and not rd.all_devices:
            return False
        if di >= rd.num_devices:
            return self._allocate_one(ci, ri + 1, 0, 0, False)
        if len(self.result[ci]) + rd.num_devices - di > ALLOCATION_RESULTS_MAX_SIZE:
            raise _MaxSizeExceeded()
        if do_all:
            did, device, s = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, device, s, must=True)
            return undo is not None and self._descend(undo, ci, ri, si, di, sub_request)
        return self._allocate_any(key, rd, di, sub_request)

    def _allocate_sub_requests(self, ci: int, ri: int, di: int) -> bool:
        """A request with subrequests (firstAvailable): the first subrequest that can be allocated;
        raises ``_MaxSizeExceeded`` when every one of them exceeds the result's size limit."""
        all_exceeded = True
        sub = 0
        while (ci, ri, sub) in self.request_data:
            try:
                ok = self._allocate_one(ci, ri, sub, di, True)
            except _MaxSizeExceeded:
                sub += 1
                continue
            all_exceeded = False
            if ok:
                self.request_data[(ci, ri, 0)].selected_sub_request = sub
                return True
            sub += 1
        if all_exceeded:
            raise _MaxSizeExceeded()
        return False

    def _allocate_any(self, key: tuple[int, int, int], rd: _RequestData, di: int, sub_request: bool) -> bool:
        """Device ``di`` of an ExactCount request: each free, selectable device in pool order, until
        the rest of the search succeeds with it."""
        ci, ri, si = key
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                ids = self.a.index.device_ids(s)
                for dix, device in enumerate(s.devices):
                    did = ids[dix]
                    if self._in_use(did):
                        continue
                    if not self._selectable(key, rd, s, dix):
                        continue
                    undo = self._allocate_device(ci, rd, did, device, s, must=False)
                    if undo is not None and self._descend(undo, ci, ri, si, di, sub_request):
                        return True
        return False

    def _descend(self, undo: Callable[[], None], ci: int, ri: int, si: int, di: int, sub_request: bool) -> bool:
        """With a device just recorded (``undo`` takes it back): the rest of the search, from the
        next device; the device is taken back unless it succeeds."""
        try:
            done = self._allocate_one(ci, ri, si, di + 1, sub_request)
        except BaseException:
            undo()
            raise
        if not done:
            undo()
        return done

    def _allocate_device(self, ci: int, rd: _RequestData, did: DeviceID, device: Device, s: ResourceSlice,
                         must: bool) -> Callable[[], None] | None:
        """Check and record one device; the undo function, or ``None`` when it cannot be used."""
        if self._in_use(did):
            return None
        if device.consumes_counters:
            return None
        base, sub = (rd.request.name, "") if rd.parent is None else (rd.parent, rd.request.name)
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device, did):
                if must:
                    raise AllocationError(f"claim {self.claims[ci].key}, request {rd.request.name}: cannot add "
                                          f"device {did} because a claim constraint would not be satisfied")
                for prev in constraints[:i]:
                    prev.remove(base, sub)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        results = self.result[ci]
        n = len(results)
        results.append(_Result(rd.request.name, rd.parent, did, s))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub)
            self.allocating[did].discard(ci)
            del results[n:]
        return undo

    # --- the result ---------------------------------------------------------------------------
    def _result(self, ci: int, claim: ResourceClaim) -> AllocationResult:
        chosen = []
        for ri in range(len(claim.spec.requests)):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub_request)]
            chosen.append(rd)
        return _allocation_result(claim, chosen, self.result[ci])


# --- the single-request fast path ------------------------------------------------------------------

# A class's selectors with a request's: what decides which devices a request may take.
_Selectors = tuple[tuple[str | None, ...], tuple[str | None, ...]]


class _Candidates(NamedTuple):
    """The devices of a slice that passed a request's checks except "in use", in order: their
    names and positions in the slice, and by index into those the selector error to raise when
    the search reaches the device (where: ``"class"`` or ``"claim"``, and the text; the class's
    name and the claim's key are filled in when raised, as they are the pod's). Strings and ints
    only, so that the garbage collector stops tracking them: the index holds one per slice and
    set of selectors for as long as the slices do not change."""

    names: tuple[str, ...]
    positions: tuple[int, ...]
    errors: dict[int, tuple[str, str]] | None


class SimplePlan:
    """The search for one claim with one ``exactly`` request of ``ExactCount`` devices and no
    constraints (every DRA benchmark pod's claim, and the usual claim): validated once per cycle,
    not per node. Without constraints and with one request, upstream's backtracking search takes
    the first ``count`` devices in pool, slice and device order that are not in use and that the
    class's and the request's selectors accept (a dead end has nothing to undo that would help),
    so that is what ``allocate`` does, over the devices the index keeps per slice and selectors
    (``_candidates``: the selectors run once per device per slices version, not per pod and node).

    Same answers as ``_Run``, including its errors: a selector error is raised when the search
    reaches the device in the same order (``_Run`` checks "in use" first, then binding conditions,
    then the class's selectors, then the request's, then counter consumption), and the pools'
    invalidity only when nothing was found. The general search is checked against this one on
    upstream's allocator table (``tests/dra/test_allocator.py``)."""

    __slots__ = ("a", "candidates", "claim", "count", "memo", "rd")

    def __init__(self, a: Allocator, claim: ResourceClaim, rd: _RequestData) -> None:
        assert rd.cls is not None
        self.a = a
        self.claim = claim
        self.rd = rd
        self.count = rd.num_devices
        # Which devices the request may take depends on the selectors only (classes alike share
        # them: the error texts name the class when raised): the index's by slice for them.
        self.candidates = a.index.candidates.setdefault((rd.cls.selectors, rd.request.selectors), {})
        # The result depends on the claim only through its request's name, its class's config
        # (the class's name stands for it: see ``SliceIndex``) and its own config; a claim with
        # config of its own is built each time (its raw config is not hashable).
        self.memo: tuple[str, ...] | None = None if claim.spec.config else \
            (rd.request.name, rd.cls.name) if rd.cls.config else (rd.request.name,)

    @staticmethod
    def make(a: Allocator, claim: ResourceClaim) -> SimplePlan | None:
        spec = claim.spec
        if len(spec.requests) != 1 or spec.constraints:
            return None
        request = spec.requests[0]
        if request.first_available or request.exactly is None or request.exactly.allocation_mode != EXACT_COUNT:
            return None
        run = _Run(a, Node("", {}), no_pools=True, claims=(claim,))
        try:
            run.prepare()
        except AllocationError:
            return None         # the general search raises it, on every node, as before
        rd = run.request_data[(0, 0, 0)]
        if rd.cls is None or any(s is None for s in rd.cls.selectors):
            return None
        return SimplePlan(a, claim, rd)

    def _slice_candidates(self, s: ResourceSlice) -> _Candidates:
        """``s``'s candidates for these selectors, from the index (built on first use)."""
        c = self.candidates.get(id(s))
        if c is None:
            c = self.candidates[id(s)] = self._candidates(s)
        return c

    def _candidates(self, s: ResourceSlice) -> _Candidates:
        names: list[str] = []
        positions: list[int] = []
        errors: dict[int, tuple[str, str]] = {}
        for di, device in enumerate(s.devices):
            if device.has_binding_conditions:
                continue
            accepted, error = self._check(s, di)
            if not accepted or (error is None and device.consumes_counters):
                continue
            if error is not None:
                errors[len(names)] = error
            names.append(device.name)
            positions.append(di)
        return _Candidates(tuple(names), tuple(positions), errors or None)

    def _check(self, s: ResourceSlice, di: int) -> tuple[bool, tuple[str, str] | None]:
        """``_Run._selectable``'s selectors for device ``di``: whether they accept it (or error),
        and the error, as (where, text)."""
        rd = self.rd
        assert rd.cls is not None
        for where, selectors in (("class", rd.cls.selectors), ("claim", rd.request.selectors)):
            for i, expr in enumerate(selectors):
                assert expr is not None
                compiled = compile_expression(expr)
                if compiled.error:
                    return True, (where, f"selector #{i}: CEL compile error: {compiled.error}")
                try:
                    if not self.a.cache.matches(expr, s, di):
                        return False, None
                except CELError as e:
                    return True, (where, f"selector #{i}: CEL runtime error: {e}")
        return True, None

    def _raise(self, error: tuple[str, str]) -> None:
        where, text = error
        assert self.rd.cls is not None
        who = f"class {self.rd.cls.name}" if where == "class" else f"claim {self.claim.key}"
        raise CELSelectorError(f"{who}: {text}")

    def allocate(self, node: Node, no_pools: bool) -> Sequence[AllocationResult] | None:
        """The claim's allocation on ``node`` (a tuple of one, shared by every call that finds
        the same devices: the cycle keeps one per node, and objects that live through a cycle
        are what makes the garbage collector's full passes come often), or ``None``."""
        pools = [] if no_pools else self.a.index.pools_for(node)
        need = self.count
        taken: list[tuple[ResourceSlice, int]] = []
        for pool in pools:
            if len(taken) == need:
                break
            if pool.incomplete or pool.invalid:
                continue
            for sl in pool.slices:
                self._take_from(sl, need, taken)
                if len(taken) == need:
                    break
        if len(taken) < need:
            if any(p.invalid for p in pools):
                raise NodeAllocationError("invalid resource pools were encountered")
            return None
        return self._result(taken, need)

    def _take_from(self, sl: ResourceSlice, need: int, taken: list[tuple[ResourceSlice, int]]) -> None:
        """Add the free devices of ``sl`` the selectors accept to ``taken``, in order, until it
        holds ``need``; raise the selector error of a device it would take."""
        names, positions, errors = self._slice_candidates(sl)
        pool_allocated = self.a.pool_allocated
        if pool_allocated is not None:
            used = pool_allocated(sl.driver, sl.pool.name)
            for j, name in enumerate(names):
                if name in used:
                    continue
                if errors is not None and j in errors:
                    self._raise(errors[j])
                taken.append((sl, positions[j]))
                if len(taken) == need:
                    return
            return
        ids = self.a.index.device_ids(sl)
        for j, di in enumerate(positions):
            if self.a.is_allocated(ids[di]):
                continue
            if errors is not None and j in errors:
                self._raise(errors[j])
            taken.append((sl, di))
            if len(taken) == need:
                return

    def _result(self, taken: list[tuple[ResourceSlice, int]], need: int) -> Sequence[AllocationResult]:
        """The allocation of ``taken``, shared through the index by every plan with this memo."""
        if self.memo is None:
            return (self._build(taken),)
        key = (self.memo, *[(id(sl), di) for sl, di in taken]) if need != 1 else \
            (self.memo, id(taken[0][0]), taken[0][1])
        results = self.a.index.results
        got = results.get(key)
        if got is None:
            if len(results) >= 65536:      # bounded: a long-lived index forgets and rebuilds
                results.clear()
            got = results[key] = (self._build(taken),)
        return got

    @property
    def selectors(self) -> _Selectors:
        """What the devices a request may take depend on: plans with equal selectors count alike."""
        assert self.rd.cls is not None
        return (self.rd.cls.selectors, self.rd.request.selectors)

    def pools_of(self, node: Node) -> list[tuple[str, str]]:
        """The (driver, pool) of the pools ``free_on(node)`` reads: an allocation in any other
        pool leaves its answer unchanged."""
        return [(p.driver, p.pool) for p in self.a.index.pools_for(node)]

    def free_on(self, node: Node) -> int:
        """How many devices ``allocate(node)`` could take: it returns an allocation exactly when
        this is at least ``count`` (without constraints the search takes the first free devices
        the selectors accept, and a valid pool names each device once). -1 when counting does not
        decide: a pool of the node is invalid (a failed search raises then), or a selector failed
        on a candidate device (the search raises if it reaches it); ask ``allocate`` then.
        Needs ``Allocator.countable``'s conditions."""
        pool_allocated = self.a.pool_allocated
        assert pool_allocated is not None
        free = 0
        for pool in self.a.index.pools_for(node):
            if pool.invalid:
                return -1
            if pool.incomplete:
                continue
            for sl in pool.slices:
                c = self._slice_candidates(sl)
                if c.errors is not None:
                    return -1
                used = pool_allocated(sl.driver, sl.pool.name)
                free += len(c.names) - sum(1 for name in c.names if name in used) if used else len(c.names)
        return free

    def _build(self, taken: Sequence[tuple[ResourceSlice, int]]) -> AllocationResult:
        rd = self.rd
        return _allocation_result(self.claim, (rd,), [_Result(rd.request.name, None, self.a.index.device_ids(s)[di], s)
                                                     for s, di in taken])


def _allocation_result(claim: ResourceClaim, chosen: Sequence[_RequestData], found: Sequence[_Result]
                       ) -> AllocationResult:
    """The claim's ``AllocationResult``: ``found`` (the devices, in order), the configs of the
    classes of the requests (``chosen[ri]``: request ``ri``'s data, or its chosen subrequest's)
    and of the claim, and the node selector."""
    results = tuple(DeviceRequestAllocationResult(r.name, r.id.driver, r.id.pool, r.id.device) for r in found)
    config: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for rd in chosen:
        cls = rd.cls
        if cls is None:
            continue
        if cls.name in class_ranges:
            start, end = class_ranges[cls.name]
            for i in range(start, end):
                src, reqs, raw = config[i]
                config[i] = (src, (*reqs, rd.name), raw)
            continue
        start = len(config)
        for c in cls.config:
            config.append(("FromClass", (rd.name,), c.raw))
        class_ranges[cls.name] = (start, len(config))
    for c in claim.spec.config:
        if not c.requests:
            config.append(("FromClaim", c.requests, c.raw))
            continue
        for ri, request in enumerate(claim.spec.requests):
            if request.name in c.requests:
                config.append(("FromClaim", c.requests, c.raw))
                continue
            rd = chosen[ri]
            if rd.parent is None:
                continue
            if f"{request.name}/{rd.request.name}" in c.requests:
                config.append(("FromClaim", c.requests, c.raw))
    pinned = next((r.slice.node_name for r in found if r.slice.node_name), None)
    if pinned:       # node-local: the selector depends on the node only, parsed once per node
        return AllocationResult(results, tuple(config), _node_local_selector(pinned), _pin(pinned))
    selector = _node_selector(found)
    return AllocationResult(results, tuple(config),
                            None if selector is None else parse_node_selector(selector, "nodeSelector"), selector)


def _pin(node_name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


@functools.lru_cache(maxsize=65536)
def _node_local_selector(node_name: str) -> NodeSelector:
    """The parsed selector pinning a claim to ``node_name`` (an immutable value, so shared): Filter
    allocates on every candidate node for every pod, and parsing it anew each time was about a
    third of the DRA workloads' time (py-spy)."""
    return parse_node_selector(_pin(node_name), "nodeSelector")


def _node_selector(results: Sequence[_Result]) -> dict[str, Any] | None:
    """upstream's ``createNodeSelector``: a node-local device pins the claim to its node; otherwise
    the slices' one-term selectors are merged; devices available everywhere need none."""
    fields: list[Mapping[str, Any]] = []
    exprs: list[Mapping[str, Any]] = []
    for r in results:
        s = r.slice
        if s.node_name:
            return _pin(s.node_name)
        raw = s.node_selector_raw
        if raw is None:
            continue
        terms = raw.get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(
                f"create NodeSelector: unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if terms:
            for into, key in ((fields, "matchFields"), (exprs, "matchExpressions")):
                for req in terms[0].get(key) or []:
                    if not any(_same_requirement(req, have) for have in into):
                        into.append(req)
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _same_requirement(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("key") == b.get("key") and a.get("operator") == b.get("operator")
            and set(a.get("values") or ()) == set(b.get("values") or ()))
