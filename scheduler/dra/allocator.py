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

The parts, each below this module and none importing another's importer: ``pools`` (the node's
pools and the ``SliceIndex``), ``selector_cache``, ``search`` (the general search, and the
``AllocatorInputs`` it reads of an ``Allocator``), ``simple_plan`` (the fast path and counting),
``results`` (the ``AllocationResult`` of what was found) and ``errors``. ``Allocator`` here picks
the path per call; the public names of the parts are re-exported.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence

from scheduler.dra.errors import AllocationError, CELSelectorError, NodeAllocationError
from scheduler.dra.pools import Node, Pool, SliceIndex, gather_pools, node_matches
from scheduler.dra.search import Features, _Run
from scheduler.dra.selector_cache import SelectorCache
from scheduler.dra.simple_plan import SimplePlan
from scheduler.model.dra import AllocationResult, DeviceClass, DeviceID, ResourceClaim, ResourceSlice

# The allocator's public names, wherever they live (``Allocator`` is this module's own).
__all__ = ["AllocationError", "Allocator", "CELSelectorError", "Features", "Node", "NodeAllocationError", "Pool",
           "SelectorCache", "SimplePlan", "SliceIndex", "gather_pools", "node_matches"]


class Allocator:
    """Allocates ``claims`` (all unallocated) on one node at a time (``allocate``); reusable for
    every node of a cycle, as upstream's ``Allocator``."""

    def __init__(self, claims: Sequence[ResourceClaim], device_class: Callable[[str], DeviceClass | None],
                 slices: Sequence[ResourceSlice], is_allocated: Callable[[DeviceID], bool],
                 cache: SelectorCache | None = None, features: Features = Features(),  # noqa: B008 (frozen)
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
