"""The single-request fast path: the search for one claim with one ``exactly`` request of
``ExactCount`` devices and no constraints, validated once per cycle instead of once per node, and
its counting form (``free_on``) that lets a caller keep a number per node instead of searching.
Its answers, errors included, are the general search's (``search``).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.dra.cel import CELError, compile_expression
from scheduler.dra.errors import AllocationError, CELSelectorError, NodeAllocationError
from scheduler.dra.inputs import AllocatorInputs
from scheduler.dra.pools import Node, _Candidates, _Selectors
from scheduler.dra.results import _allocation_result, _RequestData, _Result
from scheduler.dra.search import _Run
from scheduler.dra.taints import prevents_allocation
from scheduler.model.dra import EXACT_COUNT, AllocationResult, ResourceClaim, ResourceSlice


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
    then the class's selectors, then the request's, then counter consumption, then taints), and
    the pools' invalidity only when nothing was found. The general search is checked against this
    one on upstream's allocator table (``tests/dra/test_allocator.py``, ``tests/dra/test_taints.py``)."""

    __slots__ = ("a", "candidates", "claim", "count", "memo", "rd")

    def __init__(self, a: AllocatorInputs, claim: ResourceClaim, rd: _RequestData) -> None:
        assert rd.cls is not None
        self.a = a
        self.claim = claim
        self.rd = rd
        self.count = rd.num_devices
        # Which devices the request may take depends on the selectors and the tolerations only
        # (classes alike share them: the error texts name the class when raised): the index's by
        # slice for them.
        self.candidates = a.index.candidates.setdefault(self.selectors, {})
        # The result depends on the claim only through its request's name and tolerations (copied
        # into each device result), its class's config (the class's name stands for it: see
        # ``SliceIndex``) and its own config; a claim with config of its own is built each time
        # (its raw config is not hashable).
        self.memo: tuple[object, ...] | None = None if claim.spec.config else \
            (rd.request.name, rd.request.tolerations, rd.cls.name) if rd.cls.config else \
            (rd.request.name, rd.request.tolerations)

    @staticmethod
    def make(a: AllocatorInputs, claim: ResourceClaim) -> SimplePlan | None:
        spec = claim.spec
        if len(spec.requests) != 1 or spec.constraints:
            return None
        request = spec.requests[0]
        if request.first_available or request.exactly is None or request.exactly.allocation_mode != EXACT_COUNT:
            return None
        # Admin access, capacity requests, slices with partitionable devices or shared devices, and
        # allocations that share a device are the general search's alone (the fast path's "in use"
        # is the store's per-pool set, which holds shares too).
        if request.exactly.admin_access is not None or request.exactly.has_capacity_requests or a.index.advanced \
                or a.has_shares:
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
        features = self.a.features
        tolerations = self.rd.request.tolerations
        for di, device in enumerate(s.devices):
            if device.has_binding_conditions and not features.device_binding_and_status:
                continue
            accepted, error = self._check(s, di)
            if not accepted or (error is None and device.consumes_counters):
                continue
            if error is None and device.taints and features.device_taints and \
                    prevents_allocation(device.taints, tolerations):
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
        return self._result(taken, need, node.name)

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

    def _result(self, taken: list[tuple[ResourceSlice, int]], need: int, node_name: str
                ) -> Sequence[AllocationResult]:
        """The allocation of ``taken``, shared through the index by every plan with this memo
        (not when a device binds to the node: its selector is the node's, whatever the slice)."""
        if self.memo is None or any(sl.devices[di].binds_to_node for sl, di in taken):
            return (self._build(taken, node_name),)
        key = (self.memo, *[(id(sl), di) for sl, di in taken]) if need != 1 else \
            (self.memo, id(taken[0][0]), taken[0][1])
        results = self.a.index.results
        got = results.get(key)
        if got is None:
            if len(results) >= 65536:      # bounded: a long-lived index forgets and rebuilds
                results.clear()
            got = results[key] = (self._build(taken, node_name),)
        return got

    @property
    def selectors(self) -> _Selectors:
        """What the devices a request may take depend on: plans with equal selectors (and
        tolerations, which decide which tainted devices it may take) count alike."""
        assert self.rd.cls is not None
        return (self.rd.cls.selectors, self.rd.request.selectors, self.rd.request.tolerations)

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

    def _build(self, taken: Sequence[tuple[ResourceSlice, int]], node_name: str = "") -> AllocationResult:
        rd = self.rd
        return _allocation_result(self.claim, (rd,), [_Result(rd.request.name, None, self.a.index.device_ids(s)[di], s,
                                                             rd.request, s.devices[di]) for s, di in taken],
                                  node_name)
