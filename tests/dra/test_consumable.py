"""``scheduler.dra.consumable`` against upstream's table:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/incubating/consumable_capacity_test.go``
(``TestConsumableCapacity``: violate-capacity-sharing, calculate-consumed-capacity, safe-milli-value,
use-milli, cmp-request-over-capacity-fatal-beats-soft, get-consumed-capacity-from-request), each case
named by its subtest and case. Quantities are written as upstream's ``resource.MustParse`` strings.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from scheduler.dra.consumable import _consumed, _milli, _use_milli, _violates, consumed_capacity, fits
from scheduler.dra.errors import AllocationError
from scheduler.model.dra import CapacityRequestPolicy, Device
from scheduler.quantity import parse_quantity

MAX = 2**63 - 1


def q(text: str) -> Fraction:
    return parse_quantity(text)


def rng(default: str | None, low: str | None = None, high: str | None = None, step: str | None = None
        ) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default=None if default is None else q(default), has_range=True,
                                 range_min=None if low is None else q(low), range_max=None if high is None else q(high),
                                 range_step=None if step is None else q(step))


def values(default: str, *vs: str) -> CapacityRequestPolicy:
    return CapacityRequestPolicy(default=q(default), valid_values=tuple(q(v) for v in vs))


too_big_for_milli = "9224372036854776E3"

VIOLATE = [   # (case, requested, policy, fractional, violates)
    ("no constraint", "1", None, False, False),
    ("less than maximum", "1", rng("1", "1", "2"), False, False),
    ("more than maximum", "2", rng("1", "1", "1"), False, True),
    ("in set", "1", values("1", "1"), False, False),
    ("not in set", "2", values("1", "1"), False, True),
    ("fractional step aligned (0.3 = min+1*step)", "300m", rng("200m", "200m", "1", "100m"), True, False),
    ("fractional step not aligned (0.25 is not a multiple of 0.1 from 0.2)", "250m",
     rng("200m", "200m", "1", "100m"), True, True),
    ("requested value overflows milli representation", too_big_for_milli, rng("1", "1", None, "1"), True, True),
]


@pytest.mark.parametrize(("requested", "policy", "fractional", "want"), [c[1:] for c in VIOLATE],
                         ids=[c[0] for c in VIOLATE])
def test_violate_capacity_sharing(requested: str, policy: CapacityRequestPolicy | None, fractional: bool,
                                  want: bool) -> None:
    assert _violates(q(requested), policy, fractional) is want


NOT_REPRESENTABLE = "capacity request cannot be represented in the device's range arithmetic"
CALCULATE = [   # (case, requested, capacity, policy, fractional, result or error substring)
    ("empty", None, "1", CapacityRequestPolicy(), False, "1"),
    ("request-above-maxint64-is-rejected", "18446744073709551619", "18446744073709551619",
     rng("0", "0", None, "3"), False, NOT_REPRESENTABLE),
    ("rounded-value-above-maxint64-is-rejected", str(MAX), str(MAX + 1), rng("0", "0", None, "2"), False,
     NOT_REPRESENTABLE),
    ("max-safe-boundary-rounds-to-maxint64", str(MAX - 1), str(MAX), rng("1", "1", None, "2"), False, str(MAX)),
    ("min in range", None, "2", rng("1", "1"), False, "1"),
    ("default in set", None, "2", values("1", "1"), False, "1"),
    ("more than min in range", "2", "2", rng("1", "1"), False, "2"),
    ("less than min in range", "1", "2", rng("1", "2"), False, "2"),
    ("with step (round up)", "2", "3", rng("1", "1", None, "2"), False, "3"),
    ("with step (no remaining)", "2", "2", rng("1", "1", None, "1"), False, "2"),
    ("fractional step round up (0.25 to 0.3)", "250m", "1", rng("200m", "200m", "1", "100m"), True, "300m"),
    ("fractional step already aligned (0.4 = min+2*step)", "400m", "1", rng("200m", "200m", "1", "100m"), True,
     "400m"),
    ("integer-step-sub-milli-request", "1.0000001", "3", rng("1", "1", None, "1"), True, NOT_REPRESENTABLE),
    ("integer-step-milli-request-rounds-up", "1.001", "3", rng("1", "1", None, "1"), True, "2"),
    ("integer-step-sub-milli-request-rounds-up-without-fractional-range", "1.0000001", "3",
     rng("1", "1", None, "1"), False, "2"),
    ("fractional-step-sub-milli-request", "1.0000001", "2", rng("500m", "500m", None, "500m"), True,
     NOT_REPRESENTABLE),
    ("fractional-step-milli-request-rounds-up", "1.001", "2", rng("500m", "500m", None, "500m"), True, "1500m"),
    ("negative-step-request-above-min-is-rejected", "15", "15", rng("10", "10", None, "-1"), False,
     "rounding request 15 up to the next step passes MaxInt64"),
    ("negative-step-request-above-min-is-rejected-with-fractional-range", "15", "15", rng("10", "10", None, "-1"),
     True, "rounding request 15 up to the next step passes MaxInt64"),
    ("negative-step-request-equal-to-min-is-rejected", "10", "15", rng("10", "10", None, "-1"), False,
     "rounding request 10 up to the next step passes MaxInt64"),
    ("negative-step-request-below-min-returns-min", "5", "15", rng("10", "10", None, "-1"), False, "10"),
    ("negative-binary-step-request-above-min-is-rejected", "3Gi", "3Gi", rng("1Gi", "1Gi", None, "-1Gi"), False,
     "rounding request 3Gi up to the next step passes MaxInt64"),
    ("positive-binary-step-request-above-min-rounds-to-itself", "3Gi", "3Gi", rng("1Gi", "1Gi", None, "1Gi"), False,
     "3Gi"),
    ("valid value in set", "2", "3", values("1", "1", "2", "3"), False, "2"),
    ("set (round up)", "2", "3", values("1", "1", "3"), False, "3"),
    ("larger than set", "3", "3", values("1", "1", "2"), False, "3"),
    ("fractional-step-request-not-milli-representable-is-rejected", too_big_for_milli, too_big_for_milli,
     rng("1", "100m", None, "100m"), True, NOT_REPRESENTABLE),
    ("fractional-step-rounded-value-passes-milli-range-is-rejected", f"{MAX - 1}m", f"{MAX}m",
     rng("100m", "100m", None, "100m"), True, NOT_REPRESENTABLE),
]


@pytest.mark.parametrize(("requested", "capacity", "policy", "fractional", "want"), [c[1:] for c in CALCULATE],
                         ids=[c[0] for c in CALCULATE])
def test_calculate_consumed_capacity(requested: str | None, capacity: str, policy: CapacityRequestPolicy,
                                     fractional: bool, want: str) -> None:
    if not want[0].isdigit():
        with pytest.raises(AllocationError, match=want.replace("(", r"\(").replace(")", r"\)")):
            _consumed(None if requested is None else q(requested), q(capacity), policy, fractional)
        return
    assert _consumed(None if requested is None else q(requested), q(capacity), policy, fractional) == q(want)


@pytest.mark.parametrize(("value", "want"), [("1", 1000), ("100m", 100), (too_big_for_milli, None)],
                         ids=["whole number", "fractional milli", "too large for milli (overflows int64)"])
def test_safe_milli_value(value: str, want: int | None) -> None:
    assert _milli(q(value)) == want


USE_MILLI = [
    ("fractional disabled", rng(None, "200m", "1", "100m"), False, False),
    ("all fractional, fits in milli", rng(None, "200m", "1", "100m"), True, True),
    ("all integer, fits in milli (no hasFractional gate any more)", rng(None, "1", "3", "1"), True, True),
    ("min overflows milli, falls back to integer", rng(None, too_big_for_milli, None, "1"), True, False),
    ("step too small (sub-milli)", rng(None, "1", None, "0"), True, False),
]


@pytest.mark.parametrize(("policy", "fractional", "want"), [c[1:] for c in USE_MILLI], ids=[c[0] for c in USE_MILLI])
def test_use_milli(policy: CapacityRequestPolicy, fractional: bool, want: bool) -> None:
    assert _use_milli(policy, fractional) is want


def test_cmp_request_over_capacity_fatal_beats_soft() -> None:
    """An unrepresentable request is an error even when another capacity is merely over-filled."""
    device = Device("d", capacity={"capacity-0": q("1"), "capacity-1": q(str(MAX + 1))},
                    request_policies={"capacity-1": rng(None, "0", None, "2")})
    with pytest.raises(AllocationError, match=NOT_REPRESENTABLE):
        consumed_capacity({"capacity-0": q("2"), "capacity-1": q(str(MAX))}, "driver-a", device, False)


def test_get_consumed_capacity_from_request() -> None:
    """Requested: the amount; not requested: the policy's default, else the whole capacity. A request
    for a capacity the device lacks ("dummy" here is the device's) is the device's to refuse."""
    device = Device("d", capacity={"capacity-0": q("2"), "capacity-1": q("2"), "dummy": q("1")},
                    request_policies={"capacity-0": rng("2", "1"), "capacity-1": rng("1", "1")})
    got = consumed_capacity({"capacity-0": q("1"), "driver-a/dummy": q("1")}, "driver-a", device, False)
    assert got == {"capacity-0": 1, "capacity-1": 1, "dummy": 1}
    assert consumed_capacity({"other.example.com/dummy": q("1")}, "driver-a", device, False) is None
    assert fits(got, device, None, None, False)
    assert not fits(got, device, {"dummy": q("1")}, None, False)       # with what others took: over
