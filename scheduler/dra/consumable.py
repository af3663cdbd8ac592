"""Consumable capacity (DRAConsumableCapacity): how much of a device's capacity a request consumes,
and whether it still fits beside what other allocations took. A port of upstream's
``structured/internal/incubating/consumable_capacity.go``.

A device with ``allowMultipleAllocations`` may be allocated to several requests (of one or more
claims) while its capacities last; each allocation records its ``consumedCapacity`` and a
``shareID``. For every capacity the device publishes, the consumed amount is:

* no amount requested: the policy's ``default``, else the whole capacity;
* an amount and no policy: the amount;
* a ``validRange``: at least ``min``, rounded up to ``min + n * step`` (``step`` set);
* ``validValues``: the first valid value at or above the amount (the amount if none is).

The amount must then satisfy the policy (equal to the default, or within ``max`` and on a step, or
one of the valid values), and the sum over the device's allocations (already written, and in this
search) may not exceed the capacity. A request naming a capacity the device does not publish does
not fit the device. Names: a request's unqualified name means the device's driver's domain, in
both directions (``bandwidth`` is ``<driver>/bandwidth``); consumed amounts are recorded under the
name the device publishes (upstream's ``capacityNameForStatus``).

**DRAFractionalCapacityRange**: with it on, a range whose bounds and step are whole thousandths
(step at least ``1m``) is rounded and checked in thousandths, so a step of ``500m`` works; with it
off (or for other ranges) amounts are read as upstream's ``Quantity.Value()``: whole units,
rounded up. A request that cannot be represented in that arithmetic (upstream's int64 limits) is
an ``AllocationError`` for the whole allocation, as upstream's ``errCapacityRequestNotRepresentable``
(and ``errNegativeCapacity``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from fractions import Fraction

from scheduler.dra.errors import AllocationError
from scheduler.model.dra import CapacityRequestPolicy, Device
from scheduler.quantity import format_quantity

__all__ = ["consumed_capacity", "fits"]

_MAX_INT64 = 2**63 - 1
# upstream's errCapacityRequestNotRepresentable
_NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"


def _value(q: Fraction) -> int:
    """``Quantity.Value()``: whole units, rounded up away from zero."""
    return math.ceil(q) if q >= 0 else math.floor(q)


def _milli(q: Fraction) -> int | None:
    """``safeMilliValue``: the value in thousandths when exact, else ``None``."""
    m = q * 1000
    return m.numerator if m.denominator == 1 and abs(m.numerator) <= _MAX_INT64 else None


def _text(q: Fraction) -> str:
    """A quantity as upstream's messages print it (``Quantity.String()``): a whole number of KiB,
    MiB, ... in binary form (``3Gi``), else the exact value (``15``, ``1500m``)."""
    if q.denominator == 1 and q > 0:
        for suffix, scale in (("Ei", 2**60), ("Pi", 2**50), ("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20),
                              ("Ki", 2**10)):
            if q.numerator % scale == 0:
                return f"{q.numerator // scale}{suffix}"
    return format_quantity(q)


def _use_milli(p: CapacityRequestPolicy, fractional: bool) -> bool:
    """upstream's ``useMilli``: the gate on, every bound exact in thousandths, the step >= 1m."""
    if not fractional:
        return False
    for q in (p.range_min, p.range_max, p.range_step):
        if q is not None and _milli(q) is None:
            return False
    return not (p.range_step is not None and (_milli(p.range_step) or 0) < 1)


def _round_up_range(requested: Fraction, p: CapacityRequestPolicy, fractional: bool) -> Fraction:
    """upstream's ``roundUpRange``."""
    assert p.range_min is not None
    if requested < p.range_min:
        return p.range_min
    if p.range_step is None:
        return requested
    if _use_milli(p, fractional):
        req = _milli(requested)
        if req is None:
            raise AllocationError(f"{_NOT_REPRESENTABLE}: request {_text(requested)} is not a representable milli "
                                  "value")
        step, low = _milli(p.range_step), _milli(p.range_min)
        assert step is not None and low is not None
        n = -((low - req) // step)
        if n > (_MAX_INT64 - low) // step:
            raise AllocationError(f"{_NOT_REPRESENTABLE}: rounding request {_text(requested)} up to the next step "
                                  "passes the milli-value range")
        return Fraction(low + step * n, 1000)
    if requested > _MAX_INT64:
        raise AllocationError(f"{_NOT_REPRESENTABLE}: request {_text(requested)} exceeds MaxInt64")
    req, step, low = _value(requested), _value(p.range_step), _value(p.range_min)
    n = -((low - req) // step)      # req >= low here: Go's truncating division rounded up
    if low >= 0 and n > (_MAX_INT64 - low) // step:
        raise AllocationError(f"{_NOT_REPRESENTABLE}: rounding request {_text(requested)} up to the next step "
                              "passes MaxInt64")
    return Fraction(low + step * n)


def _consumed(requested: Fraction | None, total: Fraction, p: CapacityRequestPolicy | None,
              fractional: bool) -> Fraction:
    """upstream's ``calculateConsumedQuantity``."""
    if requested is None:
        return p.default if p is not None and p.default is not None else total
    if p is None:
        return requested
    if p.has_range and p.range_min is not None:
        return _round_up_range(requested, p, fractional)
    if p.valid_values:
        return next((v for v in p.valid_values if requested <= v), requested)
    return requested


def _violates(amount: Fraction, p: CapacityRequestPolicy | None, fractional: bool) -> bool:
    """upstream's ``violatesPolicy``."""
    if p is None:
        return False
    if p.default is not None and amount == p.default:
        return False
    if p.has_range:
        if p.range_max is not None and amount > p.range_max:
            return True
        if p.range_step is not None:
            if _use_milli(p, fractional):
                req = _milli(amount)
                if req is None:
                    return True
                step, low = _milli(p.range_step), _milli(p.range_min or Fraction(0))
                assert step is not None and low is not None
            else:
                req, step, low = _value(amount), _value(p.range_step), _value(p.range_min or Fraction(0))
            return (req - low) % step != 0
        return False
    if p.valid_values:
        return amount not in p.valid_values
    return False


def _resolve_requests(requests: Mapping[str, Fraction], driver: str, device: Device
                      ) -> dict[str, Fraction] | None:
    """The requests by the device's own capacity names (upstream's ``resolveCapacityName``);
    ``None`` when one names a capacity the device does not have. A capacity requested under both
    spellings is an error."""
    out: dict[str, Fraction] = {}
    capacity = device.capacity
    for name, amount in requests.items():
        domain, sep, ident = name.partition("/")
        if name in capacity:
            key = name if sep or f"{driver}/{name}" not in capacity else f"{driver}/{name}"
        elif sep:
            if domain != driver or ident not in capacity:
                return None
            key = ident
        elif f"{driver}/{name}" in capacity:
            key = f"{driver}/{name}"
        else:
            return None
        canonical = _canonical(key, driver)
        if any(_canonical(k, driver) == canonical for k in out):
            raise AllocationError(f'capacity "{canonical.partition("/")[2]}" requested both as "{name}" and as '
                                  f'"{_other_spelling(name, driver)}"')
        out[key] = amount
    return out


def _canonical(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _other_spelling(name: str, driver: str) -> str:
    return name.partition("/")[2] if "/" in name else f"{driver}/{name}"


def _device_capacity(device: Device, driver: str) -> dict[str, str]:
    """Each capacity once, by its canonical name -> the name the device publishes it under (an
    entry qualified with the driver wins over an unqualified one: ``resolveDeviceCapacity``)."""
    out: dict[str, str] = {}
    for name in device.capacity:
        canonical = _canonical(name, driver)
        if canonical not in out or "/" in name:
            out[canonical] = name
    return out


def consumed_capacity(requests: Mapping[str, Fraction] | None, driver: str, device: Device,
                      fractional: bool) -> dict[str, Fraction] | None:
    """What the request consumes of each of the device's capacities, by the name the device
    publishes it under; ``None`` when the device lacks a capacity the request names. Raises
    ``AllocationError`` for a request that cannot be represented (or is negative)."""
    resolved = _resolve_requests(requests or {}, driver, device)
    if resolved is None:
        return None
    by_canonical = {_canonical(k, driver): v for k, v in resolved.items()}
    out: dict[str, Fraction] = {}
    for canonical, name in _device_capacity(device, driver).items():
        try:
            amount = _consumed(by_canonical.get(canonical), device.capacity[name], device.request_policies.get(name),
                               fractional)
        except AllocationError as e:
            raise AllocationError(f'capacity "{canonical}": {e}') from None
        if amount < 0:
            raise AllocationError(f'capacity "{canonical}": capacity value is negative')
        out[name] = amount
    return out


def fits(consumed: Mapping[str, Fraction], device: Device, allocated: Mapping[str, Fraction] | None,
         allocating: Mapping[str, Fraction] | None, fractional: bool) -> bool:
    """upstream's ``cmpRequestOverCapacity`` after the amounts are known: each amount satisfies
    its policy, and with what is ``allocated`` (written claims) and ``allocating`` (this search)
    it stays within the capacity."""
    for name, amount in consumed.items():
        if _violates(amount, device.request_policies.get(name), fractional):
            return False
        total = amount + (allocated or {}).get(name, 0) + (allocating or {}).get(name, 0)
        if total > device.capacity[name]:
            return False
    return True
