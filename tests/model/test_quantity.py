from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from scheduler.errors import QuantityError
from scheduler.quantity import format_quantity, milli_value, parse_quantity, resource_value, value


@pytest.mark.parametrize(("text", "want"), [
    ("100m", Fraction(1, 10)), ("1.5", Fraction(3, 2)), ("500Mi", 500 * 2**20), ("1Gi", 2**30),
    ("2k", 2000), ("1e3", 1000), ("1E3", 1000), ("1e-3", Fraction(1, 1000)), ("0", 0), (".5", Fraction(1, 2)),
    ("5.", 5), ("+1", 1), ("-1", -1), ("1Ki", 1024), ("3M", 3_000_000), ("1n", Fraction(1, 10**9)),
    ("1u", Fraction(1, 10**6)), ("2Ei", 2 * 2**60), ("1P", 10**15),
])
def test_parse(text: str, want: Fraction) -> None:
    assert parse_quantity(text) == want


@pytest.mark.parametrize("bad", ["", "abc", "1.2.3", "1 Gi", "1gi", "1KiB", "Mi", ".", "1e", "--1", "1e999"])
def test_malformed(bad: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(bad)


@pytest.mark.parametrize(("resource", "raw", "want"), [
    ("cpu", "100m", 100), ("cpu", "0.5m", 1), ("cpu", 2, 2000), ("cpu", "1.5", 1500), ("memory", "1.5", 2),
    ("memory", "500Mi", 524288000), ("pods", "110", 110), ("cpu", "1e-9", 1),
])
def test_resource_value_rounds_up(resource: str, raw: object, want: int) -> None:
    assert resource_value(resource, raw) == want


def test_bool_is_not_a_quantity() -> None:
    with pytest.raises(QuantityError):
        value(True)


@given(st.integers(min_value=0, max_value=10**12), st.sampled_from(["", "k", "M", "G", "Ki", "Mi", "Gi", "m"]))
def test_integer_with_suffix_roundtrip(n: int, suffix: str) -> None:
    factor = {"": 1, "k": 10**3, "M": 10**6, "G": 10**9, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30,
              "m": Fraction(1, 1000)}[suffix]
    assert parse_quantity(f"{n}{suffix}") == n * factor
    assert milli_value(f"{n}{suffix}") == n * factor * 1000


@given(st.text(max_size=12))
def test_arbitrary_text_parses_or_raises_quantity_error(text: str) -> None:
    try:
        parse_quantity(text)
    except QuantityError:
        pass


@pytest.mark.parametrize(("resource", "raw", "want"), [
    # Exact, never wrapped or zeroed (upstream's MilliValue of these overflows int64; see quantity.py).
    ("cpu", "1e16", 10**19), ("cpu", "9223372036854775807", (2**63 - 1) * 1000), ("cpu", "1E", 10**21),
    ("memory", "8Ei", 2**63), ("memory", "1e64", 10**64), ("cpu", "0", 0), ("cpu", "1n", 1),
    ("memory", 10**30, 10**30), ("cpu", 1e18, 10**21),
    # More digits than CPython converts at once: read as 10**1000, or a fraction cut and rounded up.
    ("memory", "1" + "0" * 5000, 10**1000), ("cpu", "0." + "0" * 5000 + "1", 1),
    ("cpu", "0000" + "0" * 5000 + "2", 2000), ("memory", "1." + "0" * 5000 + "1", 2),
])
def test_extreme_values(resource: str, raw: object, want: int) -> None:
    assert resource_value(resource, raw) == want


@given(st.text(alphabet="0123456789.", min_size=1, max_size=6000), st.sampled_from(["", "m", "n", "E", "Ei", "e-64"]))
def test_long_digit_strings_parse_or_raise_quantity_error(digits: str, suffix: str) -> None:
    try:
        milli_value(digits + suffix)
    except QuantityError:
        pass


@pytest.mark.parametrize(("value", "text"), [
    (Fraction(2), "2"), (Fraction(3, 2), "1500m"), (Fraction(1, 10**6), "1u"), (Fraction(5, 10**9), "5n"),
    (Fraction(0), "0"), (Fraction(-1, 2), "-500m"), (Fraction(1, 10**12), "1e-12"), (Fraction(40 * 2**30), "42949672960"),
])
def test_format_quantity_parses_back(value: Fraction, text: str) -> None:
    """An exact value written back (an allocation's consumedCapacity) reads as the same value."""
    assert format_quantity(value) == text and parse_quantity(text) == value
