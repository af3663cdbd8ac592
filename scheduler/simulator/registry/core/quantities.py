"""Quantities as apimachinery's ``resource.Quantity`` prints and adds them, for the messages and
statuses that show them (LimitRanger's and ResourceQuota's).

A quantity keeps the format it was written in (``Ki``..``Ei``: binary; ``e3``: exponent; otherwise
decimal SI) and ``String()`` prints its canonical form in that format: the largest suffix that keeps
the mantissa whole (``1000m`` is ``1``, ``2000`` is ``2k``, ``1536Mi`` stays ``1536Mi``; a binary
quantity below 1024 prints as decimal), rounded up to nano units. A sum has its first term's format,
as ``Quantity.Add`` keeps its receiver's.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from scheduler.quantity import parse_quantity

__all__ = ["BINARY", "DECIMAL", "EXPONENT", "Quantity", "quantity"]

BINARY, DECIMAL, EXPONENT = "BinarySI", "DecimalSI", "DecimalExponent"
_DECIMAL_SUFFIX = {-9: "n", -6: "u", -3: "m", 0: "", 3: "k", 6: "M", 9: "G", 12: "T", 15: "P", 18: "E"}
_BINARY_SUFFIX = {0: "", 10: "Ki", 20: "Mi", 30: "Gi", 40: "Ti", 50: "Pi", 60: "Ei"}


class Quantity:
    """An exact value and the format it prints in."""

    __slots__ = ("fmt", "value")

    def __init__(self, value: Fraction, fmt: str = DECIMAL) -> None:
        self.value, self.fmt = value, fmt

    def __add__(self, other: Quantity) -> Quantity:
        return Quantity(self.value + other.value, self.fmt)

    def __str__(self) -> str:
        v = self.value
        if self.fmt == BINARY and abs(v) >= 1024 and v.denominator == 1:
            m, e = abs(int(v)), 0
            while m % 1024 == 0 and e < 60:
                m, e = m // 1024, e + 10
            return f"{'-' if v < 0 else ''}{m}{_BINARY_SUFFIX[e]}"
        nanos = math.ceil(abs(v) * 10**9)            # rounded up to the smallest scale
        if nanos == 0:
            return "0"
        m, e = nanos, -9
        while m % 1000 == 0 and e < 18:
            m, e = m // 1000, e + 3
        sign = "-" if v < 0 else ""
        if self.fmt == EXPONENT:
            return f"{sign}{m}" + (f"e{e}" if e else "")
        return f"{sign}{m}{_DECIMAL_SUFFIX[e]}"

    def __repr__(self) -> str:
        return f"Quantity({self!s})"


def quantity(raw: Any) -> Quantity:
    """A quantity as written (a string, or a JSON number)."""
    text = str(raw)
    fmt = BINARY if text.endswith("i") else (EXPONENT if "e" in text.lower() else DECIMAL)
    return Quantity(parse_quantity(text), fmt)
