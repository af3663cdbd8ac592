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
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache

from scheduler.errors import QuantityError

__all__ = ["milli_value", "parse_quantity", "resource_value", "value"]

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
    number = Fraction(match["num"])
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
    """``Quantity.Value()``: whole units, rounded up away from zero."""
    return _round_away(_coerce(raw))


def milli_value(raw: object) -> int:
    """``Quantity.MilliValue()``: thousandths, rounded up away from zero."""
    return _round_away(_coerce(raw) * 1000)


def resource_value(resource: str, raw: object) -> int:
    """The integer the scheduler stores for ``resource``: milli-CPU for ``cpu``, units otherwise."""
    return milli_value(raw) if resource == "cpu" else value(raw)
