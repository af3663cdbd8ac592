"""The general search: upstream's ``allocator`` (``structured/internal/incubating``, the variant
1.37's default features pick), one ``Allocate`` call on one node. It validates the claims'
requests, then tries devices request by request with the ``matchAttribute`` constraints checked as
each is added, and backtracks at a dead end (``scheduler.dra.allocator`` describes what is and is
not supported).

Where a device is accepted: ``_allocate_any`` (ExactCount: the cheap checks, "in use" and
selectors and capacity) and then ``_allocate_device`` (both modes: in use, counters, constraints,
then recorded with its undo). A new per-device check belongs in ``_allocate_device``, before the
constraints, as upstream's taint check is.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Sequence
from fractions import Fraction

from scheduler.dra.cel import CELError, compile_expression
from scheduler.dra.constraints import _DistinctAttribute, _MatchAttribute, _with_attribute
from scheduler.dra.consumable import consumed_capacity, fits
from scheduler.dra.errors import (
    AllocationError,
    CELSelectorError,
    FilterTimeoutError,
    NodeAllocationError,
    _MaxSizeExceeded,
)
from scheduler.dra.inputs import AllocatorInputs, Counters, asks_capacity
from scheduler.dra.pools import Node, Pool, PoolOpeners, node_matches
from scheduler.dra.results import _allocation_result, _RequestData, _Result
from scheduler.dra.taints import prevents_allocation
from scheduler.model.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceClass,
    DeviceID,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)

_NOTHING: dict[str, Fraction] = {}      # never written to


class _Run:
    """One ``Allocate`` call (upstream's ``allocator``)."""

    def __init__(self, a: AllocatorInputs, node: Node, no_pools: bool = False,
                 claims: Sequence[ResourceClaim] | None = None, deadline: float | None = None) -> None:
        self.deadline = deadline
        self.no_pools = no_pools
        self.a = a
        self.node = node
        self.claims = a.claims if claims is None else list(claims)
        # ``reduce``: each request's kept openers, once it found them all
        self.openings: list[tuple[tuple[int, int, int], _RequestData, PoolOpeners]] = []
        self.pools: list[Pool] = []
        # whether ``pools`` is a list the index holds (``_dead_prefix`` keys on it)
        self.pools_kept = True
        # Per pool, how many devices hold counters in this search (``_take_counters``).
        self.counter_holders: dict[tuple[str, str], int] = {}
        self.request_data: dict[tuple[int, int, int], _RequestData] = {}
        self.constraints: list[list[_MatchAttribute | _DistinctAttribute]] = []
        self.matches: dict[tuple[DeviceID, int, int, int], bool] = {}
        self.allocating: dict[DeviceID, set[int]] = {}
        # consumable capacity: what this search has given of each shared device so far
        self.allocating_capacity: dict[DeviceID, dict[str, Fraction]] = {}
        # partitionable devices: the counters this search's devices consume, by pool
        self.consumed_counters: dict[tuple[str, str], Counters] = {}
        self.result: list[list[_Result]] = [[] for _ in self.claims]
        # id(request data) -> its kept openers (``_openers_key``)
        self.opening: dict[int, PoolOpeners | None] = {}
        # Whether capacity must be checked at all: some request asks for capacity, some device is
        # shared (or may be), or some share is allocated. When not (the usual claim and cluster),
        # the search runs as the stable variant's, with none of those features' checks per device
        # (the taint check is made on both paths: taints need none of them).
        self.check_capacity = a.features.consumable_capacity and (
            a.index.advanced or a.has_shares
            or (a.claims_ask_capacity if claims is None else asks_capacity(self.claims)))
        self.plain = not a.index.advanced and not self.check_capacity

    def run(self) -> list[AllocationResult] | None:
        self.pools = [] if self.no_pools else self.a.index.pools_for(self.node)
        self.prepare()
        return self.search()

    def search(self) -> list[AllocationResult] | None:
        """The search proper, over ``pools`` (after ``prepare``)."""
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
                if not self.a.features.consumable_capacity:
                    if request.exactly is not None and request.exactly.has_capacity_requests:
                        raise AllocationError(f"claim {claim.key}, request {request.name}: has capacity requests, "
                                              "but the DRAConsumableCapacity feature is disabled")
                    for sub in request.first_available:
                        if sub.has_capacity_requests:
                            raise AllocationError(f"claim {claim.key}, subrequest {sub.name}: has capacity "
                                                  "requests, but the DRAConsumableCapacity feature is disabled")
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
            constraints: list[_MatchAttribute | _DistinctAttribute] = []
            for i, c in enumerate(claim.spec.constraints):
                if c.match_attribute is not None:
                    constraints.append(_MatchAttribute(c.requests, c.match_attribute))
                elif c.distinct_attribute is not None:
                    constraints.append(_DistinctAttribute(c.requests, c.distinct_attribute))
                else:
                    raise AllocationError(f"claim {claim.key}, constraint #{i}: empty constraint "
                                          "(unsupported constraint type?)")
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
        if not self.a.features.admin_access and request.admin_access is not None:
            raise AllocationError(f"claim {claim.key}, request {name}: admin access is requested, "
                                  "but the feature is disabled")
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
                            did = DeviceID(s.driver, s.pool.name, d.name)
                            if self.check_capacity and self._consumes(rd, did, d, s) is None:
                                continue
                            rd.all_devices.append((did, d, s, pool))
            rd.num_devices = len(rd.all_devices)
        else:
            raise AllocationError(f"claim {claim.key}, request {name}: unsupported count mode "
                                  f"{request.allocation_mode}")
        return rd

    # --- selection ---------------------------------------------------------------------------
    def _selectable(self, key: tuple[int, int, int], rd: _RequestData, s: ResourceSlice, di: int) -> bool:
        device = s.devices[di]
        if device.has_binding_conditions and not self.a.features.device_binding_and_status:
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
        if ok and s.per_device_node_selection:
            ok = node_matches(self.node, device.node_name, device.all_nodes, device.node_selector)
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

    def _capacity_in_use(self, did: DeviceID) -> bool:
        """upstream's ``deviceCapacityInUse``: some claim, written or in this search, shares it."""
        return self.a.consumed_capacity(did) is not None or did in self.allocating_capacity

    def _consumes(self, rd: _RequestData, did: DeviceID, device: Device, s: ResourceSlice, alone: bool = False
                  ) -> dict[str, Fraction] | None:
        """What the request would consume of the device's capacities, when that fits beside the
        device's other allocations (upstream's ``CmpRequestOverCapacity``); ``None`` when not.
        ``alone``: beside the allocated state's only, not this search's (``_openers``)."""
        allocating = None if alone else self.allocating_capacity.get(did)
        if rd.request.capacity_requests is None and not device.allow_multiple_allocations \
                and not device.request_policies and self.a.consumed_capacity(did) is None \
                and allocating is None:
            # The common case, decided without the arithmetic: a device held whole that no share
            # took from, asked for nothing: it "consumes" each capacity whole, which always fits.
            return _NOTHING
        fractional = self.a.features.fractional_capacity_range
        consumed = consumed_capacity(rd.request.capacity_requests, s.driver, device, fractional)
        if consumed is None:
            return None
        if not fits(consumed, device, self.a.consumed_capacity(did), allocating, fractional):
            return None
        return consumed

    # --- search ------------------------------------------------------------------------------
    def _allocate_one(self, ci: int, ri: int, si: int, di: int, sub_request: bool) -> bool:
        # allocateOne's ``alloc.ctx.Err()`` check: the per-node filter timeout
        if self.deadline is not None and time.monotonic() >= self.deadline:
            raise FilterTimeoutError("filter operation aborted: context deadline exceeded")
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
            did, device, s, pool = rd.all_devices[di]
            undo = self._allocate_device(ci, rd, did, device, s, pool, must=True)
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
        admin = rd.request.admin_access is True
        if self.plain and not admin:
            return self._allocate_any_plain(key, rd, di, sub_request)
        consumable = self.check_capacity
        narrow = self._narrowed(ci, rd)
        opening = self._openers_key(ci, rd) if narrow is None and not admin else None
        stamp_of = self.a.pool_stamp
        pools = self.pools
        dead = self._dead_prefix(opening) if opening is not None else None
        walk: Sequence[int] = range(0 if dead is None else dead[1], len(pools))
        if narrow is not None and self.pools_kept:
            walk = self.a.index.narrowed_positions(narrow, pools)      # the pools that hold them
        for at in walk:
            pool = pools[at]
            if pool.incomplete or pool.invalid:
                if dead is not None and dead[1] == at:
                    dead[1] = at + 1
                continue
            openers = None
            if opening is not None:
                # (``_openers``, its kept answer read inline: most pools are used up, and this
                # loop passes over each of them for every pod)
                got = opening.get(id(pool))
                if got is not None and got[0] == (0 if stamp_of is None else stamp_of(pool.driver, pool.pool)):
                    openers = got[1]
                else:
                    openers = self._openers(opening, key, rd, pool)
                if openers is None:
                    if dead is not None and dead[1] == at:
                        dead[1] = at + 1
                    continue        # nothing in it the request could take
            for k, s in enumerate(pool.slices):
                if openers is not None:
                    positions: Sequence[int] = openers[k]
                else:
                    positions = range(len(s.devices)) if narrow is None else narrow.get(id(s), ())
                if not positions:
                    continue
                ids = self.a.index.device_ids(s)
                for dix in positions:
                    device, did = s.devices[dix], ids[dix]
                    # Admin access may take a device in use, but not twice for one claim.
                    if ci in self.allocating.get(did, ()) if admin else self._in_use(did):
                        continue
                    if not self._selectable(key, rd, s, dix):
                        continue
                    if consumable and self._consumes(rd, did, device, s) is None:
                        continue
                    undo = self._allocate_device(ci, rd, did, device, s, pool, must=False)
                    if undo is not None and self._descend(undo, ci, ri, si, di, sub_request):
                        return True
        return False

    # --- the live pools: those the search could take a device of -------------------------------
    def reduce(self) -> tuple[object, ...] | None:
        """Where the node's pools are its own and shared ones apart (``SliceIndex.parts``), keep
        of its own only the *live* ones, where some request of the claims has an opener
        (``_openers``), and the invalid ones (a failed search says it met them); return what the
        answer then depends on, for ``Allocator.allocate`` to share it between the nodes that see
        the same shared pools and the same live pools of their own (the test driver's devices on
        each node, which the consumable-capacity class rejects, are none), or ``None`` when it
        depends on the node (or the pools are not apart).

        The search takes what it took over all the pools: a pool without openers for a request
        is one the walk would leave empty-handed. Not where a request takes ``All`` devices (its
        check reads every pool), asks for admin access (it may take a device in use) or its
        claim has a distinctAttribute constraint (no openers); nor where the pools hold a device
        placed by node or bound to it (``SliceIndex.pool_independent``)."""
        index = self.a.index
        parts = index.parts.get(id(self.pools))
        if parts is None:
            return None
        openings = []
        for key, rd in self.request_data.items():
            if rd.request.allocation_mode != EXACT_COUNT or rd.request.admin_access is True:
                return None
            kept = self._openers_key(key[0], rd)
            if kept is None:
                return None
            openings.append((key, rd, kept))
        self.openings = openings
        own, common = parts
        own_live = self._live_pools(own, openings)
        if own_live:
            self.pools = index.merged(own_live, common)
            self.pools_kept = False
        else:
            self.pools = common
        if not index.node_independent(common) or not all(index.pool_independent(p) for p in own_live):
            return None
        return (id(common), *map(id, own_live))

    def _live_pools(self, pools: Sequence[Pool], openings: list[tuple[tuple[int, int, int], _RequestData, PoolOpeners]]
                    ) -> list[Pool]:
        """The pools of ``pools`` where some request has an opener, and the invalid ones. Every
        pool a node sees is looked at once per cycle: the kept openers are read inline where
        they are still good (``_openers`` when not)."""
        stamp_of = self.a.pool_stamp
        out = []
        for pool in pools:
            if pool.invalid:
                out.append(pool)
                continue
            if pool.incomplete:
                continue
            stamp = 0 if stamp_of is None else stamp_of(pool.driver, pool.pool)
            for key, rd, kept in openings:
                got = kept.get(id(pool))
                opened = got[1] if got is not None and got[0] == stamp else self._openers(kept, key, rd, pool)
                if opened is not None:
                    out.append(pool)
                    break
        return out

    # --- openers: what a request could take at all, kept while the pool's allocations hold -----
    def _openers_key(self, ci: int, rd: _RequestData) -> PoolOpeners | None:
        """The openers kept for what decides which devices the request could take, whatever else
        this search holds (``_openers``), or ``None`` where they are not worked out: a claim with
        a distinctAttribute constraint (its check, made before the counters', may raise on a
        device). The class's name stands for its selectors (the index lives for one version of
        the classes). Looked up once per request of a search, not once per pool."""
        if id(rd) in self.opening:
            return self.opening[id(rd)]
        kept: PoolOpeners | None = None
        if not any(isinstance(c, _DistinctAttribute) for c in self.constraints[ci]):
            request = rd.request
            capacity = None if request.capacity_requests is None else tuple(sorted(request.capacity_requests.items()))
            opening = (None if rd.cls is None else rd.cls.name, request.selectors, capacity, self.check_capacity,
                       self.a.has_shares)
            kept = self.a.openers.get(opening)
            if kept is None:
                kept = self.a.openers[opening] = {}
        self.opening[id(rd)] = kept
        return kept

    def _dead_prefix(self, kept: PoolOpeners) -> list[int] | None:
        """How many of the first pools of ``pools`` offer the request nothing (no openers,
        incomplete or invalid), kept across cycles per request kind and pools list as
        ``[journal position, count]``: a walk starts past them, and extends the count as it
        passes more. The store's journal (``pool_changes``) names the pools whose allocations
        changed since; the count falls back to the first of them in the list (a journal too old
        to say: to 0). Pods take the pools of the partitionable workload in order, so without
        this pod *k* of a batch looked up *k* used-up pools. ``None`` where there is no journal
        or the list is this search's own (``reduce`` merged it)."""
        changes_of = self.a.pool_changes
        if changes_of is None or not self.pools_kept:
            return None
        prefixes = self.a.index.dead_prefixes
        entry = prefixes.get((id(kept), id(self.pools)))
        changes, end = changes_of(entry[0] if entry is not None else sys.maxsize)
        count = 0
        if entry is not None and changes is not None:
            count = entry[1]
            if changes and count:
                positions = self.a.index.positions(self.pools)
                for pid in changes:
                    at = positions.get(pid)
                    if at is not None and at < count:
                        count = at
        entry = prefixes[(id(kept), id(self.pools))] = [end, count]
        return entry

    def _openers(self, kept: PoolOpeners, key: tuple[int, int, int], rd: _RequestData, pool: Pool
                 ) -> tuple[tuple[int, ...], ...] | None:
        """For each of the pool's slices, the positions of its devices that the request could take
        in some search (``None``: none in any slice): those the walk would turn away whatever this
        search holds are left out. In the partitionable and consumable-capacity workloads nearly every pool is used
        up, and walking each of its devices for every pod on every node was most of the time.

        Left out: a device in use (held by an allocation: ``is_allocated``), one the selectors
        reject, one whose counters do not fit what the pool has left with nothing else taken, and
        (capacity checked) one whose capacity cannot hold the request beside its other
        allocations. Each of those only gets worse as a search takes devices (counters and
        capacity are summed, never given back below the allocated state), so the walk over the
        rest takes what the full walk would take, in the same order. A device whose check raises
        (a CEL error) stays in, so the walk raises where it would have. The answer depends on the
        pool's allocations only: kept per pool (the index holds the pools) with the pool's stamp
        (``pool_stamp``), or for the allocator's lifetime without one."""
        stamp_of = self.a.pool_stamp
        stamp = 0 if stamp_of is None else stamp_of(pool.driver, pool.pool)
        got = kept.get(id(pool))
        if got is None or got[0] != stamp:
            per_slice = tuple(self._slice_openers(key, rd, s, pool) for s in pool.slices)
            got = kept[id(pool)] = (stamp, per_slice if any(per_slice) else None)
        return got[1]

    def _slice_openers(self, key: tuple[int, int, int], rd: _RequestData, s: ResourceSlice, pool: Pool
                       ) -> tuple[int, ...]:
        ids = self.a.index.device_ids(s)
        out = []
        for dix, device in enumerate(s.devices):
            did = ids[dix]
            if self.a.is_allocated(did):
                continue
            if not s.per_device_node_selection:       # (those devices' selection is the node's)
                try:
                    if not self._selectable(key, rd, s, dix) or not self._could_take(rd, did, device, s, pool):
                        continue
                except AllocationError:
                    pass
            out.append(dix)
        return tuple(out)

    def _could_take(self, rd: _RequestData, did: DeviceID, device: Device, s: ResourceSlice, pool: Pool) -> bool:
        """The counters and capacity checks of ``_allocate_any`` and ``_allocate_device`` with
        nothing taken by a search (``_openers``)."""
        features = self.a.features
        multi = features.consumable_capacity and device.allow_multiple_allocations
        if device.consumes_counters and features.partitionable_devices \
                and not (multi and self.a.consumed_capacity(did) is not None):
            fits = self.a.fits_alone.get(did)
            if fits is None:
                fits = self.a.fits_alone[did] = self._room(self._available(pool), {}, device)
            if not fits:
                return False
        return not self.check_capacity or self._consumes(rd, did, device, s, alone=True) is not None

    def _narrowed(self, ci: int, rd: _RequestData) -> dict[int, tuple[int, ...]] | None:
        """The only devices a matchAttribute constraint of the claim still lets this request take,
        by slice (``_with_attribute``), once an earlier device fixed its value; None when no such
        constraint binds the request. The walk then visits just those, in the same pool and slice
        order, so it takes the device the full walk would: every other device fails the
        constraint in ``_allocate_device``. (The full walk would also evaluate their selectors, so
        a CEL runtime error on a device that cannot match is not raised from here.)"""
        base, sub = (rd.request.name, "") if rd.parent is None else (rd.parent, rd.request.name)
        for c in self.constraints[ci]:
            if isinstance(c, _MatchAttribute) and c.num_devices > 0 and c._applies(base, sub):
                if c.attribute is None or c.attribute.kind == "unknown":
                    return {}
                return _with_attribute(self.a.index, c.name, c.attribute)
        return None

    def _allocate_any_plain(self, key: tuple[int, int, int], rd: _RequestData, di: int, sub_request: bool) -> bool:
        """``_allocate_any`` where no feature applies (no admin access, nothing partitionable, shared
        or asked for by capacity): the stable variant's loop, without their checks per device; the
        taint check is in ``_allocate_plain``, as in ``_allocate_device``."""
        ci, ri, si = key
        narrow = self._narrowed(ci, rd)
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                continue
            for s in pool.slices:
                positions = range(len(s.devices)) if narrow is None else narrow.get(id(s), ())
                ids = self.a.index.device_ids(s)
                for dix in positions:
                    device, did = s.devices[dix], ids[dix]
                    if self._in_use(did):
                        continue
                    if not self._selectable(key, rd, s, dix):
                        continue
                    undo = self._allocate_plain(ci, rd, did, device, s)
                    if undo is not None and self._descend(undo, ci, ri, si, di, sub_request):
                        return True
        return False

    def _allocate_plain(self, ci: int, rd: _RequestData, did: DeviceID, device: Device, s: ResourceSlice
                        ) -> Callable[[], None] | None:
        """``_allocate_device`` for an ExactCount device where no feature applies."""
        if self._in_use(did):
            return None
        # allocateDevice's taint check, as in ``_allocate_device`` (``taints``)
        if device.taints and self.a.features.device_taints and prevents_allocation(device.taints,
                                                                                   rd.request.tolerations):
            return None
        base, sub = (rd.request.name, "") if rd.parent is None else (rd.parent, rd.request.name)
        constraints = self.constraints[ci]
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device, did):
                for prev in constraints[:i]:
                    prev.remove(base, sub)
                return None
        self.allocating.setdefault(did, set()).add(ci)
        results = self.result[ci]
        n = len(results)
        results.append(_Result(rd.request.name, rd.parent, did, s, rd.request, device))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub)
            self.allocating[did].discard(ci)
            del results[n:]
        return undo

    @staticmethod
    def _add_constraints(constraints: list[_MatchAttribute | _DistinctAttribute], base: str, sub: str, device: Device,
                         did: DeviceID) -> bool:
        """Add the device to every constraint of its claim, or to none (those added are removed)."""
        for i, c in enumerate(constraints):
            if not c.add(base, sub, device, did):
                for prev in constraints[:i]:
                    prev.remove(base, sub)
                return False
        return True

    @staticmethod
    def _remove_constraints(constraints: list[_MatchAttribute | _DistinctAttribute], base: str, sub: str) -> None:
        for c in constraints:
            c.remove(base, sub)

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
                         pool: Pool, must: bool) -> Callable[[], None] | None:
        """Check and record one device (upstream's ``allocateDevice``); the undo function, or
        ``None`` when it cannot be used."""
        features = self.a.features
        admin = rd.request.admin_access is True
        multi = features.consumable_capacity and device.allow_multiple_allocations
        if not multi and admin and ci in self.allocating.get(did, ()):
            return None
        if not admin and self._in_use(did):
            return None
        if not features.partitionable_devices and device.consumes_counters:
            return None
        # allocateDevice's taint check (``taints``). Upstream makes it after taking the counters;
        # before is the same outcome (a device it rejects gives its counters back), without the work.
        if device.taints and features.device_taints and prevents_allocation(device.taints, rd.request.tolerations):
            return None
        base, sub = (rd.request.name, "") if rd.parent is None else (rd.parent, rd.request.name)
        constraints = self.constraints[ci]
        # A search's candidate (not ``must``) meets the claim's constraints first: a cheap lookup
        # that turns away most devices of other pools before their counters are summed. The outcome
        # is upstream's, which checks them last: a device is taken only if every check passes.
        if not must and not self._add_constraints(constraints, base, sub, device, did):
            return None
        # A shared device already in use has had its counters taken by its first allocation.
        counted = bool(device.consumes_counters) and not (multi and self._capacity_in_use(did))
        if counted and not self._take_counters(pool, device, did):
            if not must:
                self._remove_constraints(constraints, base, sub)
            return None
        consumed: dict[str, Fraction] | None = None
        if self.check_capacity:
            consumed = self._consumes(rd, did, device, s)
            if consumed is None:
                if counted:
                    self._give_back_counters(pool, device)
                if not must:
                    self._remove_constraints(constraints, base, sub)
                return None
        if must and not self._add_constraints(constraints, base, sub, device, did):
            if counted:
                self._give_back_counters(pool, device)
            raise AllocationError(f"claim {self.claims[ci].key}, request {rd.request.name}: cannot add "
                                  f"device {did} because a claim constraint would not be satisfied")
        share_id: str | None = None
        if multi:
            assert consumed is not None
            share_id = str(uuid.uuid4())
            taken = self.allocating_capacity.setdefault(did, {})
            for name, amount in consumed.items():
                taken[name] = taken.get(name, 0) + amount
        else:
            self.allocating.setdefault(did, set()).add(ci)
        results = self.result[ci]
        n = len(results)
        results.append(_Result(rd.request.name, rd.parent, did, s, rd.request, device, True if admin else None,
                               share_id, consumed if multi and consumed else None))

        def undo() -> None:
            for c in constraints:
                c.remove(base, sub)
            if multi:
                assert consumed is not None
                taken = self.allocating_capacity[did]
                for name, amount in consumed.items():
                    taken[name] -= amount
                if not any(taken.values()):
                    del self.allocating_capacity[did]
            else:
                self.allocating[did].discard(ci)
            if counted:
                self._give_back_counters(pool, device)
            del results[n:]
        return undo

    # --- partitionable devices ---------------------------------------------------------------
    def _available(self, pool: Pool) -> Counters:
        """The pool's counters less what allocated devices (written, assumed, in flight) consume:
        computed once per pool for the ``Allocator``'s lifetime, as upstream's
        ``availableCounters`` (the allocated state does not change while it lives)."""
        key = (pool.driver, pool.pool)
        got = self.a.available_counters.get(key)
        if got is None:
            got = {name: dict(counters) for name, counters in (pool.counter_sets or {}).items()}
            for s in (*pool.slices, *pool.other_slices):
                ids = self.a.index.device_ids(s)
                for di, d in enumerate(s.devices):
                    if not d.consumes_counters or not self.a.device_allocated(ids[di]):
                        continue
                    for c in d.consumes_counters:
                        have = got.get(c.counter_set, {})
                        for name, amount in c.counters.items():
                            if name in have:
                                have[name] -= amount      # may go negative: nothing is left
            self.a.available_counters[key] = got
        return got

    def _take_counters(self, pool: Pool, device: Device, did: DeviceID) -> bool:
        """upstream's ``checkAvailableCounters``: whether each counter the device consumes still has
        room for it beside what this search already took, and if so record the consumption. Only
        the device's own counters are looked at, as upstream's loop over ``ConsumesCounters`` (a
        counter it does not consume is none of its business, even one already overdrawn)."""
        key = (pool.driver, pool.pool)
        available = self._available(pool)
        used = self.consumed_counters.setdefault(key, {})
        if not self.counter_holders.get(key):
            # Nothing of this pool is taken in this search: the answer depends on the allocated
            # state alone, which the Allocator holds still, so it is worked out once per device
            # (a node's search, and every node's, asks it again for each pod).
            fits = self.a.fits_alone.get(did)
            if fits is None:
                fits = self.a.fits_alone[did] = self._room(available, used, device)
        else:
            fits = self._room(available, used, device)
        if not fits:
            return False
        self.counter_holders[key] = self.counter_holders.get(key, 0) + 1
        for c in device.consumes_counters:
            into = used.setdefault(c.counter_set, {})
            for name, amount in c.counters.items():
                into[name] = into.get(name, 0) + amount
        return True

    @staticmethod
    def _room(available: Counters, used: Counters, device: Device) -> bool:
        for c in device.consumes_counters:
            have, taken = available.get(c.counter_set), used.get(c.counter_set)
            if have is None:
                continue
            for name, amount in c.counters.items():
                limit = have.get(name)
                if limit is not None and limit < (taken.get(name, 0) if taken else 0) + amount:
                    return False
        return True

    def _give_back_counters(self, pool: Pool, device: Device) -> None:
        self.counter_holders[(pool.driver, pool.pool)] -= 1
        used = self.consumed_counters[(pool.driver, pool.pool)]
        for c in device.consumes_counters:
            into = used[c.counter_set]
            for name, amount in c.counters.items():
                into[name] -= amount

    # --- the result ---------------------------------------------------------------------------
    def _result(self, ci: int, claim: ResourceClaim) -> AllocationResult:
        chosen = []
        for ri in range(len(claim.spec.requests)):
            rd = self.request_data[(ci, ri, 0)]
            if rd.parent is not None:
                rd = self.request_data[(ci, ri, rd.selected_sub_request)]
            chosen.append(rd)
        return _allocation_result(claim, chosen, self.result[ci], self.node.name)


# --- the single-request fast path ------------------------------------------------------------------
