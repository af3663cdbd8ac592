"""Kubernetes resource quantities, parsed exactly as ``k8s.io/apimachinery`` parses them.

Grammar (from ``resource.ParseQuantity``)::

    <quantity>        ::= <signedNumber><suffix>
    <signedNumber>    ::= [+-] <digits> | [+-] <digits>.<digits> | [+-] .<digits> | [+-] <digits>.
    <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
    <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
    <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
    <decimalExponent> ::= e <signedNumber> | E <signedNumber>      (integer exponent)

Values are exact (``fractions.Fraction``); conversion to integers rounds *up, away from zero*, as
``Quantity.Value()`` and ``Quantity.MilliValue()`` do, so ``0.5m`` CPU is 1 milli-CPU and ``1.5``
bytes is 2 bytes. The scheduler only ever stores the integers: CPU in milli-cores, everything else in
units (bytes for memory and storage, counts for pods and extended resources).

**Out of range.** ``resource.Quantity``'s documentation says no quantity may exceed 2^63-1 in
magnitude, but upstream is not consistent about it (``quantity.go``, ``scale_int.go``,
``amount.go``): ``ParseQuantity`` caps only BinarySI values (``8Ei`` becomes 2^63-1), keeps larger
decimal ones exact in an ``inf.Dec``, and ``ScaledValue`` (hence ``Value``/``MilliValue``) of an
out-of-range value wraps or returns 0, so upstream reads ``cpu: "1e16"`` as 0 milli-CPU. We keep
every value exact, as ``inf.Dec`` does (BinarySI too: past 2^63-1 nothing fits anyway). The
integers are Python ints, so sums (a pod's containers, init-container maxima, overhead) never wrap
either. Only the node table's int64 columns need a bound; they saturate there
(``scheduler.cache.node_table``).

A number with more than ``_MAX_DIGITS`` significant digits cannot be converted exactly (CPython
refuses longer int strings). Such an integer part is far beyond any int64 whatever the suffix, so
it is read as ``10**_MAX_DIGITS``; a longer fraction is cut and rounded up, which changes nothing
after rounding to milli-units.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from scheduler.errors import QuantityError

__all__ = ["format_quantity", "milli_value", "parse_quantity", "resource_value", "value"]

_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 10**3),
    "": Fraction(1),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
}
_QUANTITY = re.compile(
    r"(?P<sign>[+-]?)(?P<num>[0-9]+(?:\.[0-9]*)?|\.[0-9]+)"
    r"(?:(?P<bin>Ki|Mi|Gi|Ti|Pi|Ei)|[eE](?P<exp>[+-]?[0-9]+)|(?P<dec>[numkMGTPE]?))"
)
# Kubernetes caps decimal exponents far below what Fraction could represent; anything this large
# is a typo or an attack, and would otherwise make Fraction arithmetic arbitrarily slow.
_MAX_EXPONENT = 64
# Below CPython's limit on int-from-string conversion (4300 digits). An integer part this long is
# >= 10**(_MAX_DIGITS - 64) whatever the suffix: far past any int64, so its exact value never matters.
_MAX_DIGITS = 1000


def _number(text: str) -> Fraction:
    """The digits ``123.456`` as an exact Fraction, or a saturated one when they are too many."""
    whole, _, frac = text.partition(".")
    whole = whole.lstrip("0")
    frac = frac.rstrip("0")
    if len(whole) > _MAX_DIGITS:
        return Fraction(10**_MAX_DIGITS)
    if len(frac) > _MAX_DIGITS:
        # Cut, and add less than the cut-off part could be: still strictly above the cut value.
        return Fraction(int(whole or "0")) + Fraction(int(frac[:_MAX_DIGITS]) * 10 + 1, 10 ** (_MAX_DIGITS + 1))
    return Fraction(int(whole or "0")) + (Fraction(int(frac), 10 ** len(frac)) if frac else 0)


@lru_cache(maxsize=4096)
def parse_quantity(text: str) -> Fraction:
    """The exact value of a quantity string; raises :class:`QuantityError` if it is malformed."""
    if not isinstance(text, str):
        raise QuantityError(f"quantities must be strings or numbers, got {type(text).__name__}")
    match = _QUANTITY.fullmatch(text)
    if match is None:
        raise QuantityError(
            f"quantities must match the regular expression "
            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$', got {text!r}"
        )
    number = _number(match["num"])
    if match["bin"]:
        number *= _BINARY[match["bin"]]
    elif match["exp"] is not None:
        exponent = int(match["exp"])
        if abs(exponent) > _MAX_EXPONENT:
            raise QuantityError(f"quantity exponent out of range in {text!r}")
        number *= Fraction(10) ** exponent
    else:
        number *= _DECIMAL[match["dec"] or ""]
    return -number if match["sign"] == "-" else number


def format_quantity(x: Fraction) -> str:
    """An exact value as a quantity string that parses back to it: whole units (``"2"``), or
    thousandths (``"500m"``), or billionths (``"5n"``) where those are exact; else the smallest
    decimal exponent that is (``"1e-12"``: a value Kubernetes itself would have rounded)."""
    if x.denominator == 1:
        return str(x.numerator)
    for suffix, scale in (("m", 1000), ("u", 10**6), ("n", 10**9)):
        scaled = x * scale
        if scaled.denominator == 1:
            return f"{scaled.numerator}{suffix}"
    exponent = 9
    while (x * 10**exponent).denominator != 1 and exponent < _MAX_EXPONENT:
        exponent += 1
    return f"{_round_away(x * 10**exponent)}e-{exponent}"


def _round_away(x: Fraction) -> int:
    return math.ceil(x) if x >= 0 else math.floor(x)


def _coerce(raw: object) -> Fraction:
    # JSON numbers are legal quantities too (``cpu: 2`` in YAML); bools are not.
    if isinstance(raw, bool):
        raise QuantityError(f"quantities must be strings or numbers, got {raw!r}")
    if isinstance(raw, int):
        return Fraction(raw)
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"quantity must be finite, got {raw!r}")
        return Fraction(repr(raw)) if "e" not in repr(raw) else Fraction(raw)
    return parse_quantity(raw)


def value(raw: object) -> int:
    """``Quantity.Value()``: whole units, rounded up away from zero (exact, never wrapped)."""
    return _round_away(_coerce(raw))


def milli_value(raw: object) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up away from zero (exact, never wrapped)."""
    return _round_away(_coerce(raw) * 1000)


def resource_value(resource: str, raw: object) -> int:
    """The integer the scheduler stores for ``resource``: milli-CPU for ``cpu``, units otherwise."""
    if type(raw) is str:
        # Every pod's requests are parsed on each of its watch events; the strings repeat.
        return _str_resource_value(resource == "cpu", raw)
    return milli_value(raw) if resource == "cpu" else value(raw)


@lru_cache(maxsize=4096)
def _str_resource_value(milli: bool, raw: str) -> int:
    return milli_value(raw) if milli else value(raw)
