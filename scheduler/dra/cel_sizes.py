"""The size model of cel-go's cost estimate (``checker/cost.go``) for a device selector: saturating
arithmetic as ``CostEstimate``/``SizeEstimate`` do it, the types the estimate reads, and DRA's
``sizeEstimator`` over the ``device`` declaration (``dynamic-resource-allocation/cel/compile.go``),
whose limits come from ``pkg/apis/resource/types.go``. ``scheduler.dra.celcost`` explains the
estimate as a whole; ``cel_estimate`` is what reads these sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

# pkg/apis/resource/types.go
_MAX_ATTRIBUTES_AND_CAPACITIES = 32      # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_ATTRIBUTE_MAX_VALUE_LENGTH = 64         # DeviceAttributeMaxValueLength
_MAX_DOMAIN_LENGTH = 63                  # DeviceMaxDomainLength
_MAX_ID_LENGTH = 32                      # DeviceMaxIDLength
_DRIVER_NAME_MAX_LENGTH = 63             # DriverNameMaxLength

U64 = 2**64 - 1
# cel-go common/cost.go
_SELECT_AND_IDENT, _LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 1, 10, 30, 40
_STRING_TRAVERSAL, _REGEX_LENGTH = 0.1, 0.25
_PRESENCE_TEST = 0                       # Kubernetes: checker.PresenceTestHasCost(false)


def _add(a: int, b: int) -> int:
    return min(a + b, U64)


def _mul(a: int, b: int) -> int:
    return min(a * b, U64)


def _factor(x: int, f: float) -> int:
    """``multiplyByCostFactor``: ceil(x * f) in float64, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > float(U64) / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2**64 else int(c)


Size = tuple[int, int]
_UNKNOWN: Size = (0, U64)


def _size_add(a: Size, b: Size) -> Size:
    return _add(a[0], b[0]), _add(a[1], b[1])


def _size_mul(a: Size, b: Size) -> Size:
    return _mul(a[0], b[0]), _mul(a[1], b[1])


def _union(a: Size, b: Size) -> Size:
    return min(a[0], b[0]), max(a[1], b[1])


# --- types: just what the estimate reads ----------------------------------------------------------

@dataclass(eq=False)
class _T:
    """A type as the estimate needs it: its kind, a list's or map's element (a map's value) and
    key, a struct's fields; ``max`` is the declaration's MaxElements for the size estimator."""

    kind: str                              # struct map list string bytes int uint double bool null dyn ...
    elem: _T | None = None
    key: _T | None = None
    fields: dict[str, _T] = field(default_factory=dict)
    max: int = 0


_DYN = _T("dyn")
_SCALARS = frozenset({"bool", "double", "int", "uint", "duration", "timestamp"})
_STRINGISH = frozenset({"string", "bytes"})
# compile.go: the device variable's declaration (newCompiler) and its size limits.
_ATTRIBUTE = _T("dyn", max=_ATTRIBUTE_MAX_VALUE_LENGTH)
_QUANTITY = _T("quantity")
_DOMAIN = _T("string", max=_MAX_DOMAIN_LENGTH)
_ID = _T("string", max=_MAX_ID_LENGTH)
_INNER_ATTRIBUTES = _T("map", elem=_ATTRIBUTE, key=_ID, max=_MAX_ATTRIBUTES_AND_CAPACITIES)
_INNER_CAPACITY = _T("map", elem=_QUANTITY, key=_ID, max=_MAX_ATTRIBUTES_AND_CAPACITIES)
_DEVICE = _T("struct", fields={
    "driver": _T("string", max=_DRIVER_NAME_MAX_LENGTH),
    "attributes": _T("map", elem=_INNER_ATTRIBUTES, key=_DOMAIN, max=_MAX_ATTRIBUTES_AND_CAPACITIES),
    "capacity": _T("map", elem=_INNER_CAPACITY, key=_DOMAIN, max=_MAX_ATTRIBUTES_AND_CAPACITIES),
    "allowMultipleAllocations": _T("bool")})


def _child(path: tuple[str, ...] | None, name: str) -> tuple[str, ...] | None:
    return (*path, name) if path else None


def _path_size(path: tuple[str, ...] | None) -> Size | None:
    """DRA's ``sizeEstimator.EstimateSize``: walk the declaration from ``device``."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        nxt: _T | None
        if name in ("@items", "@values"):
            nxt = node.elem
        elif name == "@keys":
            nxt = node.key
        else:
            nxt = node.fields.get(name)
            if nxt is None and node.elem is _ATTRIBUTE:
                nxt = _ATTRIBUTE      # every attribute has the same maximum size, whatever its name
        if nxt is None:
            return None
        node = nxt
    return 0, node.max


@dataclass(eq=False)
class _Info:
    """What the estimate knows of a subexpression: its type, its path from ``device`` (for the
    size estimator), its computed size and, for a list or map literal, its entries' sizes."""

    t: _T
    path: tuple[str, ...] | None = None
    size: Size | None = None
    entry: Size | None = None


def _size(info: _Info) -> Size:
    """``sizeOrUnknown`` / ``computeSize``: computed, then the size estimator, then the type."""
    if info.size is not None:
        return info.size
    got = _path_size(info.path)
    if got is not None:
        return got
    if info.t.kind in _SCALARS:
        return 1, 1
    return _UNKNOWN
