"""The structured allocator: which devices of which ResourceSlices satisfy a pod's unallocated
claims on one node. A port of upstream's *incubating* variant
(``k8s.io/dynamic-resource-allocation/structured/internal/incubating``: ``allocator_incubating.go``,
``pools_incubating.go``, ``consumable_capacity.go``, ``constraint.go``), the one kube-scheduler 1.37
uses with its default features; ``Features`` (from the gates: ``Features.from_gates``) switches
each off where upstream's code does.

**Pools** (``gather_pools``, upstream's ``GatherPools``): a slice is for the node when its
``nodeName`` is the node, its ``nodeSelector`` matches the node, or it has ``allNodes``. Slices of
one (driver, pool) with an older generation than the newest seen are out of date and ignored. A
pool whose slices for the node do not number ``resourceSliceCount`` is looked at in full: if a newer
generation exists elsewhere the pool is being replaced and is skipped; if the pool's slices of
that generation are still too few the pool is *incomplete* (nothing is allocated from it, and a
request for ``All`` devices fails with an error); duplicate device names make it *invalid*
(likewise; if no solution is found the node fails with ``invalid resource pools were
encountered``).

**Search** (``allocate_one``): claims in order, their requests in order, each device of a request in
turn: every not yet used device of every complete, valid pool that the class's and the request's CEL
selectors accept, is tried, with the claim's ``matchAttribute`` and ``distinctAttribute``
constraints checked as it is added; the first full solution wins, and a dead end backtracks (an
exhaustive search that stops early, as upstream's). ``firstAvailable`` tries its subrequests in
order. ``All`` takes every matching device of the node's pools at once. A claim may hold at most 32
devices (``AllocationResultsMaxSize``). Where no request asks for admin access or capacity and no
slice or allocation uses partitionable or shared devices, an ExactCount request takes the stable
variant's loop (``search._Run.plain``), without those features' checks per device (the taint check
is made there too).

**Devices already allocated** (upstream's ``AllocatedState``, from written, assumed or in-flight
allocations of other claims): ``is_allocated``, the devices held whole, are never given out;
``device_allocated`` (any allocation, shares too) is what consumes counters; ``consumed_capacity``
is what the shares of a device took.

**Partitionable devices** (DRAPartitionableDevices): slices with ``sharedCounters`` give their
pool counter sets, devices ``consumesCounters`` from them, and ``perDeviceNodeSelection`` slices
place each device by its own ``nodeName``/``nodeSelector``/``allNodes`` (``pools``). A device is
taken only while what it consumes, with what allocated devices and this search's devices consume,
fits every counter of its pool. With the gate off such slices are skipped and such devices never
picked, as upstream.

**Consumable capacity** (DRAConsumableCapacity, DRAFractionalCapacityRange): a device with
``allowMultipleAllocations`` may be given to several requests while its capacities last; each
result records ``consumedCapacity`` and a fresh ``shareID`` (``consumable`` computes the amounts,
with the request policies). A request's ``capacity.requests`` must also fit a device held whole.
``distinctAttribute`` constraints come with it. With the gate off, capacity requests are an error.

**Admin access** (DRAAdminAccess): a request with ``adminAccess: true`` may take a device in use
(not twice in one claim); its results say ``adminAccess`` and the store does not count them as
in use. With the gate off such a request is an error.

**Device taints** (DRADeviceTaints, the incubating variant's ``taintPreventsAllocation``): a device
with a NoSchedule or NoExecute taint (its slice's, or a DeviceTaintRule's: the store applies
those) that the request's ``tolerations`` do not tolerate is not given to it; the check is made
where a device is accepted, after "in use" and before the constraints (``taints``), in the plain
loop and the fast path too. Off with ``Features(device_taints=False)``. Each result carries its
request's tolerations. A tainted device may also be partitioned or shared: the checks combine.

**Binding conditions** (DRADeviceBindingConditions): a device with ``bindingConditions`` may be
allocated, and its result carries the device's ``bindingConditions`` and
``bindingFailureConditions`` (PreBind waits for them: ``plugins.dynamicresources``); such devices
are tried last (their slices after the pool's others, their pools after the others: ``pools``), and
one with ``bindsToNode`` pins the allocation to the node it was made for (``results``). With
``Features(device_binding_and_status=False)`` they are never picked.

**Not here**: a ResourceSlice's pool-wide ``spec.taints`` (upstream's tracker has them in
development) are not read, and list-type attributes (DRAListTypeAttributes, alpha: such attributes
match nothing). Two deliberate differences from
upstream's code: counters are kept per (driver, pool), not per pool name, and a device that fails a
constraint or capacity check gives its counters back (upstream's search keeps them taken until it
backtracks further, which can only miss solutions).

Selector results are cached per (expression, device) in a ``SelectorCache`` shared by all nodes and
cycles until a slice or class changes, so a device's CEL runs once, not once per node or pod.

**What the general search shares.** Its answer is a function of the pools, the claims and the
allocated state (which holds still for an ``Allocator``, one cycle), so ``allocate`` runs it once
for all the nodes that see the same pools, or the same shared pools and none of their own that the
claims could take from (``search._Run.reduce``); not where a device is placed per node or binds to
it (``SliceIndex.node_independent``). The walk visits only a request's *openers*
(``search._Run._openers``): the devices not in use, accepted by the selectors, whose counters fit
the pool alone and whose capacity holds the request beside its allocations; each check only gets
worse as a search takes more, so the walk takes what the full walk would. Openers are kept in the
index across cycles, per pool, while the store's ``pool_stamp`` for the pool holds. Checked against
a fresh plain walk on random clusters (``tests/dra/test_search_reuse.py``).

**The single-request fast path** (``SimplePlan``): a claim with one ``exactly`` request of
``ExactCount`` devices, no constraints, no admin access and no capacity requests, while no slice
uses partitionable devices or shared devices (``SliceIndex.advanced``) and no allocation shares a
device (``has_shares``; the usual claim, and every claim of the DRA benchmarks) is validated once
per cycle instead of once per node, and searched without the general machinery: the first devices,
in search order, that are not in use and that the selectors accept. The devices each slice offers a
set of selectors (``SliceIndex.candidates``) and the results built for a set of devices
(``SliceIndex.results``) live as long as the index, that is until a slice or class changes; what is
in use is read from the store in every call (by pool: ``pool_allocated``), so an allocation made or
undone is seen by the next pod. Its answers, errors included, are the general search's (checked case
by case against upstream's table and on random clusters).

**Counting** (``Allocator.countable``, ``SimplePlan.free_on``): on that path, with every slice
node-local, whether a node can be given the claim is whether it has ``count`` free devices the
selectors accept, so a caller that keeps that number per node (DynamicResources' Filter does, per
node row, from the store's pool journal) needs no search on the nodes it only has to accept or
reject. ``free_on`` is -1 where a count does not decide (an invalid pool, or a selector error on a
device: the search's errors); it is checked against the search on random worlds.

The parts, each below this module and none importing another's importer: ``pools`` (the node's
pools and the ``SliceIndex``), ``selector_cache``, ``inputs`` (the ``AllocatorInputs`` a search
reads of an ``Allocator``, and the ``Features``), ``constraints`` (matchAttribute and
distinctAttribute), ``search`` (the general search), ``consumable`` (capacity amounts and
policies), ``simple_plan`` (the fast path and counting),
``results`` (the ``AllocationResult`` of what was found) and ``errors``. ``Allocator`` here picks
the path per call; the public names of the parts are re-exported.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping, Sequence
from fractions import Fraction

from scheduler.dra.errors import AllocationError, CELSelectorError, FilterTimeoutError, NodeAllocationError
from scheduler.dra.inputs import Counters, Features, asks_capacity, check_deadline
from scheduler.dra.pools import Node, Openers, Pool, SliceIndex, gather_pools, node_matches
from scheduler.dra.search import _Run
from scheduler.dra.selector_cache import SelectorCache
from scheduler.dra.simple_plan import SimplePlan
from scheduler.model.dra import AllocationResult, DeviceClass, DeviceID, ResourceClaim, ResourceSlice

# The allocator's public names, wherever they live (``Allocator`` is this module's own).
__all__ = ["AllocationError", "Allocator", "CELSelectorError", "Features", "FilterTimeoutError", "Node",
           "NodeAllocationError", "Pool",
           "SelectorCache", "SimplePlan", "SliceIndex", "gather_pools", "node_matches"]


def _no_capacity(_: DeviceID) -> Mapping[str, Fraction] | None:
    return None


class Allocator:
    """Allocates ``claims`` (all unallocated) on one node at a time (``allocate``); reusable for
    every node of a cycle, as upstream's ``Allocator``."""

    def __init__(self, claims: Sequence[ResourceClaim], device_class: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice], is_allocated: Callable[[DeviceID], bool],
                 cache: SelectorCache | None = None, features: Features = Features(),  # noqa: B008 (frozen)
                 index: SliceIndex | None = None,
                 pool_allocated: Callable[[str, str], Container[str]] | None = None,
                 device_allocated: Callable[[DeviceID], bool] | None = None,
                 consumed_capacity: Callable[[DeviceID], Mapping[str, Fraction] | None] | None = None,
                 pool_stamp: Callable[[str, str], int] | None = None,
                 pool_changes: Callable[[int], tuple[list[tuple[str, str]] | None, int]] | None = None) -> None:
        self.claims = list(claims)
        self.device_class = device_class
        # ``index``: one the caller keeps while the slices do not change (the plugin does, per
        # store version), instead of indexing every slice again for every pod.
        self.index = index if index is not None else SliceIndex(slices, features.partitionable_devices)
        # upstream's AllocatedState: ``is_allocated``, the devices held whole (AllocatedDevices);
        # ``device_allocated``, any allocation at all, shared ones too (IsDeviceAllocated: what
        # consumes counters); ``consumed_capacity``, the sum a shared device's allocations took
        # (AggregatedCapacity; ``None`` when it has none).
        self.is_allocated = is_allocated
        self.device_allocated = device_allocated if device_allocated is not None else is_allocated
        self.consumed_capacity = consumed_capacity if consumed_capacity is not None else _no_capacity
        # ``None`` given: no allocation shares a device (then capacity needs no check unless asked for).
        self.has_shares = consumed_capacity is not None
        self.claims_ask_capacity = asks_capacity(self.claims)
        # Partitionable devices: each pool's counters less what allocated devices consume, for as
        # long as this allocator (one cycle: the allocated state does not change meanwhile).
        self.available_counters: dict[tuple[str, str], Counters] = {}
        # Whether a device's counters fit the pool's available ones with nothing else of the pool
        # taken (``_Run._take_counters``): fixed, as ``available_counters`` is, while this lives.
        self.fits_alone: dict[DeviceID, bool] = {}
        self.cache = cache if cache is not None else SelectorCache()
        self.features = features
        # ``pool_allocated(driver, pool)``: the names of the pool's devices ``is_allocated`` holds
        # (the store keeps them per pool): the fast path's test, a string lookup, where a
        # ``DeviceID`` would hash three strings in Python for every device tried.
        self.pool_allocated = pool_allocated
        # The general search's openers (``search._Run._openers``): the devices of a slice that a
        # request could take first, by what decides that. With ``pool_stamp`` (the store's
        # ``pool_stamp``) they live in the index, across cycles, each while its pool's stamp
        # holds; without, in this allocator (the allocated state holds still while it lives).
        self.pool_stamp = pool_stamp
        self.openers: Openers = self.index.openers if pool_stamp is not None else {}
        # The store's journal of pools whose allocations changed (``pool_changes``), with the
        # stamps: the search skips the pools it knows to offer nothing (``_Run._dead_prefix``).
        self.pool_changes = pool_changes if pool_stamp is not None else None
        # The single-request plan of each claim list seen (by the first claim's id, the claim kept
        # so the id stays its own): ``None`` when the general search is needed.
        self._plans: dict[int, tuple[ResourceClaim, SimplePlan | None]] = {}
        # The general search's outcome per (pools list, claims list) where it does not depend on
        # the node (``SliceIndex.node_independent``): the lists kept so their ids stay their own.
        # A search ``_Run.reduce`` could key, by claims list: its openers serve the next nodes.
        self._probes: dict[int, _Run] = {}
        self._searched: dict[tuple[object, ...], tuple[list[Pool], Sequence[ResourceClaim] | None,
                                                       Sequence[AllocationResult] | AllocationError | None]] = {}

    def allocate(self, node: Node, claims: Sequence[ResourceClaim] | None = None, deadline: float | None = None
                 ) -> Sequence[AllocationResult] | None:
        """One allocation result per claim, or ``None`` when the claims cannot all be allocated on
        ``node``; raises ``AllocationError`` for a problem with the claims or classes, and
        ``NodeAllocationError`` for one with the node's pools. ``claims`` replaces the claims given
        at construction for this call (upstream's ``Allocate(ctx, node, claims)``: the
        extended-resource claim differs per node). ``deadline`` (``time.monotonic()``): past it,
        ``FilterTimeoutError`` (upstream's context deadline, checked as its ``allocateOne`` checks
        ``ctx.Err()``: on entry and at every step of the search; the single-request plan, one
        linear pass, only on entry)."""
        check_deadline(deadline)
        plan = self._plan(self.claims if claims is None else claims)
        if plan is not None:
            return plan.allocate(node, no_pools=False)
        pools = self.index.pools_for(node)
        got = self._searched.get((id(pools), id(claims)))
        if got is None:
            return self._search(node, pools, claims, deadline)
        return _answer(got[2])

    def _search(self, node: Node, pools: list[Pool], claims: Sequence[ResourceClaim] | None,
                deadline: float | None) -> Sequence[AllocationResult] | None:
        """``allocate``'s general search, or the answer kept for another node that it shares."""
        parts = self.index.parts.get(id(pools))
        probe = self._probes.get(id(claims)) if parts is not None else None
        if parts is not None and probe is not None:
            # An earlier node's search knows the claims' openers: this node's own live pools,
            # and with them its answer if another node had it, are found without validating
            # the claims again (``_Run.reduce``'s key).
            own, common = parts
            own_live = probe._live_pools(own, probe.openings)
            if self.index.node_independent(common) and all(self.index.pool_independent(p) for p in own_live):
                got = self._searched.get((id(common), *map(id, own_live), id(claims)))
                if got is not None:
                    return _answer(got[2])
        run = _Run(self, node, claims=claims, deadline=deadline)
        run.pools = pools
        run.prepare()
        # The nodes that see the same pools (one list: ``SliceIndex.pools_for``), or the same
        # shared pools and none of their own that the claims could take from (``_Run.reduce``),
        # get the same answer, so the search runs once per cycle for all of them (``_searched``).
        live = run.reduce()
        if live is not None:
            key: tuple[object, ...] = (*live, id(claims))
            self._probes.setdefault(id(claims), run)
        elif run.pools is pools and self.index.node_independent(pools):
            key = (id(pools), id(claims))
        else:
            return run.search()
        got = self._searched.get(key)
        if got is None:
            try:
                outcome: Sequence[AllocationResult] | AllocationError | None = run.search()
            except FilterTimeoutError:
                raise       # this node's deadline: another node's search may finish in time
            except AllocationError as e:
                outcome = e
            got = self._searched[key] = (pools, claims, outcome)
        return _answer(got[2])

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
        if plan is None or plan.count < 1 or self.index.shared or self.index.advanced or self.pool_allocated is None:
            return None
        return plan

    def has_slices(self, node: Node) -> bool:
        """Whether any slice is for ``node``: a node without is answered by ``allocate_without_pools``,
        the same for every such node."""
        return self.index.has_slices(node)

    def allocate_without_pools(self, claims: Sequence[ResourceClaim] | None = None, deadline: float | None = None
                               ) -> Sequence[AllocationResult] | None:
        """``allocate`` on a node no slice is for (no pools): what every such node gets."""
        check_deadline(deadline)
        plan = self._plan(self.claims if claims is None else claims)
        if plan is not None:
            return plan.allocate(Node("", {}), no_pools=True)
        return _Run(self, Node("", {}), no_pools=True, claims=claims, deadline=deadline).run()


def _answer(outcome: Sequence[AllocationResult] | AllocationError | None) -> Sequence[AllocationResult] | None:
    """A kept search outcome as ``allocate`` gives it: the results, or the search's error raised
    again (each node that shares the search fails with it, as its own search would)."""
    if isinstance(outcome, AllocationError):
        raise outcome
    return outcome
