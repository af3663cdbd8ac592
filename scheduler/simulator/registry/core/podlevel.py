"""Pod-level resources (PodLevelResources, beta and on in 1.37) as kube-apiserver validates them
against the containers' (``validatePodResourceConsistency`` in ``pkg/apis/core/validation``): a
pod-level request below the containers' aggregate request for the same resource is refused,
``spec.resources.requests[cpu]: Invalid value: "1": must be greater than or equal to aggregate
container requests of 1500m``.

The aggregate is upstream's ``AggregateContainerRequests`` (app containers and sidecars add up, a
regular init container runs beside the sidecars before it, the max of the two), kept with each
quantity's format so both numbers print as Go's ``Quantity.String`` prints them: the sum takes the
format of the first quantity added, a max the larger one's (``format_quantity``).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from scheduler.errors import QuantityError
from scheduler.quantity import parse_quantity
from scheduler.simulator.registry.core.validation import Cause, invalid

__all__ = ["format_quantity", "pod_level_consistency", "quantity_format"]

Obj = dict[str, Any]
Q = tuple[Fraction, str]            # a value and its format: BinarySI, DecimalSI or DecimalExponent

_BINARY_SUFFIXES = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}


def quantity_format(text: str) -> str:
    """The format Go's ``ParseQuantity`` gives a quantity string."""
    if text.endswith(_BINARY_SUFFIXES):
        return "BinarySI"
    body = text.lstrip("+-")
    return "DecimalExponent" if ("e" in body or "E" in body) else "DecimalSI"


def format_quantity(value: Fraction, fmt: str) -> str:
    """Go's ``Quantity.String`` (``CanonicalizeBytes``): BinarySI by powers of 1024 when whole and
    at least 1024 in size, else decimal with the largest 10^3k suffix that keeps the number whole."""
    if value == 0:
        return "0"
    if fmt == "BinarySI":
        if -1024 < value < 1024 or value.denominator != 1:
            fmt = "DecimalSI"
        else:
            n, e = int(value), 0
            while n % 1024 == 0 and e < len(_BINARY_SUFFIXES):
                n //= 1024
                e += 1
            return f"{n}{_BINARY_SUFFIXES[e - 1] if e else ''}"
    sign = "-" if value < 0 else ""
    scaled = abs(value) * 10**9
    n = -(-scaled.numerator // scaled.denominator)      # rounded up to a nano, as the value is kept
    e = -9
    while n % 1000 == 0 and e < 18:
        n //= 1000
        e += 3
    if fmt == "DecimalExponent":
        return f"{sign}{n}" + (f"e{e}" if e else "")
    return f"{sign}{n}{_DECIMAL_SUFFIXES[e]}"


def _requests(c: Any) -> dict[str, Q]:
    out: dict[str, Q] = {}
    raw = ((c.get("resources") or {}).get("requests") or {}) if isinstance(c, Mapping) else {}
    for k, v in raw.items() if isinstance(raw, Mapping) else ():
        text = v if isinstance(v, str) else str(v)
        try:
            out[k] = (parse_quantity(text), quantity_format(text))
        except QuantityError:
            continue        # the quantity's own validation reports it
    return out


def _add(into: dict[str, Q], more: Mapping[str, Q]) -> None:
    for k, (v, f) in more.items():
        into[k] = (into[k][0] + v, into[k][1]) if k in into else (v, f)


def _max(into: dict[str, Q], more: Mapping[str, Q]) -> None:
    for k, q in more.items():
        if k not in into or q[0] > into[k][0]:
            into[k] = q


def _aggregate(spec: Obj) -> dict[str, Q]:
    result: dict[str, Q] = {}
    for c in spec.get("containers") or []:
        _add(result, _requests(c))
    sidecars: dict[str, Q] = {}
    inits: dict[str, Q] = {}
    for c in spec.get("initContainers") or []:
        r = _requests(c)
        if isinstance(c, Mapping) and c.get("restartPolicy") == "Always":
            _add(result, r)
            _add(sidecars, r)
            _max(inits, sidecars)
        else:
            combined = dict(r)
            _add(combined, sidecars)
            _max(inits, combined)
    _max(result, inits)
    return result


def pod_level_consistency(spec: Obj) -> list[Cause]:
    """The pod-level requests below their containers' aggregate, one cause each (by resource name)."""
    pod_level = _requests({"resources": spec.get("resources")}) if isinstance(spec.get("resources"), Mapping) \
        else {}
    if not pod_level:
        return []
    out: list[Cause] = []
    aggregate = _aggregate(spec)
    for name in sorted(aggregate):
        if name not in pod_level or pod_level[name][0] == 0:
            continue
        want, have = aggregate[name], pod_level[name]
        if want[0] > have[0]:
            out.append(invalid(f"spec.resources.requests[{name}]", format_quantity(*have),
                               f"must be greater than or equal to aggregate container requests of "
                               f"{format_quantity(*want)}"))
    return out
