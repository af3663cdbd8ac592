"""The general search: upstream's stable ``allocator`` (``structured/internal/stable``), one
``Allocate`` call on one node. It validates the claims' requests, then tries devices request by
request with the ``matchAttribute`` constraints checked as each is added, and backtracks at a dead
end (``scheduler.dra.allocator`` describes what is and is not supported).
"""

from __future__ import annotations

from collections.abc import Callable, Container, Sequence
from dataclasses import dataclass
from typing import Protocol

from scheduler.dra.cel import CELError, compile_expression
from scheduler.dra.errors import AllocationError, CELSelectorError, NodeAllocationError, _MaxSizeExceeded
from scheduler.dra.pools import Node, Pool, SliceIndex
from scheduler.dra.results import _allocation_result, _RequestData, _Result
from scheduler.dra.selector_cache import SelectorCache
from scheduler.model.dra import (
    ALL,
    ALLOCATION_RESULTS_MAX_SIZE,
    EXACT_COUNT,
    AllocationResult,
    Device,
    DeviceAttribute,
    DeviceClass,
    DeviceID,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)


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


class AllocatorInputs(Protocol):
    """What a search reads of the ``Allocator`` that starts it (``scheduler.dra.allocator``): typed
    here so that the search and the fast plan sit below the class that drives them."""

    @property
    def claims(self) -> list[ResourceClaim]: ...
    @property
    def device_class(self) -> Callable[[str], DeviceClass | None]: ...
    @property
    def index(self) -> SliceIndex: ...
    @property
    def is_allocated(self) -> Callable[[DeviceID], bool]: ...
    @property
    def cache(self) -> SelectorCache: ...
    @property
    def features(self) -> Features: ...
    @property
    def pool_allocated(self) -> Callable[[str, str], Container[str]] | None: ...


class _Run:
    """One ``Allocate`` call (upstream's ``allocator``)."""

    def __init__(self, a: AllocatorInputs, node: Node, no_pools: bool = False,
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
