"""The claim constraints the general search checks as it adds each device (upstream's
``constraint.go``: ``matchAttribute``, and ``distinctAttribute`` with DRAConsumableCapacity), and
the index of devices by attribute value that a walk narrows to once a matchAttribute constraint
has its value (``_with_attribute``). Below ``search``, which adds and removes devices as it
descends and backtracks.
"""

from __future__ import annotations

from scheduler.dra.errors import AllocationError
from scheduler.dra.pools import SliceIndex
from scheduler.model.dra import Device, DeviceAttribute, DeviceID


class _Constraint:
    """What both constraints share: the requests they bind (all, when none is named; a subrequest
    by ``request/sub``) and the attribute they compare."""

    __slots__ = ("name", "requests")

    def __init__(self, requests: tuple[str, ...], name: str) -> None:
        self.requests = frozenset(requests)
        self.name = name

    def _applies(self, request: str, sub: str) -> bool:
        if not self.requests:
            return True
        return request in self.requests or (bool(sub) and f"{request}/{sub}" in self.requests)


class _MatchAttribute(_Constraint):
    """upstream's ``matchAttributeConstraint``: every device of the named requests (all, when none
    is named) must have the attribute, all with the same value."""

    __slots__ = ("attribute", "num_devices")

    def __init__(self, requests: tuple[str, ...], name: str) -> None:
        super().__init__(requests, name)
        self.attribute: DeviceAttribute | None = None
        self.num_devices = 0

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


class _DistinctAttribute(_Constraint):
    """upstream's ``distinctAttributeConstraint`` (DRAConsumableCapacity): every device of the
    named requests (all, when none is named) must have the attribute, each with another value.
    As upstream, a value of another kind than one already taken ends the comparison (accepted)."""

    __slots__ = ("values",)

    def __init__(self, requests: tuple[str, ...], name: str) -> None:
        super().__init__(requests, name)
        self.values: list[DeviceAttribute] = []

    def add(self, request: str, sub: str, device: Device, device_id: DeviceID) -> bool:
        if not self._applies(request, sub):
            return True
        attr = _lookup_attribute(device, device_id, self.name)
        if attr is None:
            return False
        if attr.kind == "unknown":
            raise AllocationError(f"device {device_id}: attribute {self.name}: unsupported attribute value")
        for have in self.values:
            if have.kind != attr.kind:
                break
            if have.value == attr.value:
                return False
        self.values.append(attr)
        return True

    def remove(self, request: str, sub: str) -> None:
        if self._applies(request, sub):
            self.values.pop()


def _lookup_attribute(device: Device, device_id: DeviceID, name: str) -> DeviceAttribute | None:
    attr = device.attributes.get(name)
    if attr is not None:
        return attr
    domain, sep, ident = name.partition("/")
    if not sep or domain != device_id.driver:
        return None
    return device.attributes.get(ident)


def _with_attribute(index: SliceIndex, name: str, value: DeviceAttribute) -> dict[int, tuple[int, ...]]:
    """The devices whose attribute ``name`` is ``value`` (as ``_MatchAttribute`` compares them), by
    ``id`` of their slice: built once per attribute name for the index's lifetime."""
    table = index.by_attribute.get(name)
    if table is None:
        built: dict[DeviceAttribute, dict[int, list[int]]] = {}
        for slices in index.by_pool.values():
            for s in slices:
                ids = index.device_ids(s)
                for dix, device in enumerate(s.devices):
                    attr = _lookup_attribute(device, ids[dix], name)
                    if attr is not None and attr.kind != "unknown":
                        built.setdefault(attr, {}).setdefault(id(s), []).append(dix)
        table = index.by_attribute[name] = {a: {k: tuple(v) for k, v in m.items()} for a, m in built.items()}
    return table.get(value, {})
