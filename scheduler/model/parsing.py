"""What the parsers of whole API objects share: errors located at the object, and resource lists.

The parse of one object raises, for a ``ParseError`` or an ``AttributeError`` or ``TypeError``
met inside (a field of the wrong JSON type met by a ``.get`` or an iteration), ``located(e,
where)`` from ``None`` (``where`` is ``"Node n1"``-style): the ``ParseError`` with the object
filled in, or ``ParseError("malformed object: ...")`` at the object, so the user reads one message,
not a chain. The parsers of the low-rate kinds (DRA and storage objects) say it as ``with
parsing(where):``; ``parse_pod`` and ``parse_node``, on every pod and node event, write the
``try``/``except`` themselves, as a ``try`` costs nothing until it raises and the context manager
costs two calls (about half a microsecond) per object.

``resource_list`` parses a ``ResourceList`` (``{name: quantity}``), the unit per resource as
``quantity.resource_value`` has it (milli-CPU for ``cpu``); a pod's requests must not be negative.
``parse_go_duration`` reads a ``metav1.Duration`` (Go's ``time.ParseDuration``), as extenders'
``httpTimeout`` and DynamicResourcesArgs' timeouts are written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import TracebackType
from typing import Any

from scheduler.errors import ParseError
from scheduler.quantity import resource_value

__all__ = ["located", "parse_go_duration", "parsing", "resource_list"]


def located(e: ParseError | AttributeError | TypeError, where: str) -> ParseError:
    """The error to raise for ``e``, met while parsing the object ``where``: a ``ParseError``
    with the object filled in; an ``AttributeError`` or ``TypeError`` (a field of the wrong JSON
    type met by a ``.get`` or an iteration) as ``malformed object``."""
    if isinstance(e, ParseError):
        return e.located(where)
    return ParseError(f"malformed object: {e}", obj=where)


class parsing:  # lower case: a context manager read as a phrase, as contextlib.suppress
    """``with parsing("ResourceClaim ns/name"): ...``: the errors of one object's parse, located."""

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(e, ParseError | AttributeError | TypeError):
            raise located(e, self.where) from None


def resource_list(raw: Any, field: str, *, non_negative: bool = False) -> dict[str, int]:
    """A ``ResourceList`` at ``field`` (absent: empty); with ``non_negative``, as a pod's requests
    are validated, a negative quantity is refused."""
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    out: dict[str, int] = {}
    for name, q in raw.items():
        try:
            v = resource_value(name, q)
        except ParseError as e:
            raise e.located("", f"{field}.{name}") from None
        if non_negative and v < 0:
            raise ParseError("must be greater than or equal to 0", field=f"{field}.{name}")
        out[name] = v
    return out


def _go_quote(s: str) -> str:
    """Go's ``%q`` for the plain strings of these messages."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_MAX_SECONDS = (2**63 - 1) / 1e9


def parse_go_duration(text: str) -> float:
    """``time.ParseDuration`` (``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+``), in seconds; ValueError with Go's
    message when it does not parse."""
    invalid = ValueError(f"time: invalid duration {_go_quote(text)}")
    s, neg = text, False
    if s[:1] in ("-", "+"):
        neg, s = s[0] == "-", s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise invalid
    total = 0.0
    while s:
        m = re.match(r"([0-9]*)(?:\.([0-9]*))?", s)
        assert m is not None                      # the pattern matches the empty string
        whole, frac = m.group(1), m.group(2)
        if not whole and not frac:                # neither digits before nor after a period
            raise invalid
        s = s[m.end():]
        unit = re.match(r"[^0-9.]*", s).group(0)  # type: ignore[union-attr]
        if not unit:
            raise ValueError(f"time: missing unit in duration {_go_quote(text)}")
        if unit not in _UNITS:
            raise ValueError(f"time: unknown unit {_go_quote(unit)} in duration {_go_quote(text)}")
        s = s[len(unit):]
        total += float(f"{whole or 0}.{frac or 0}") * _UNITS[unit]
        if total > _MAX_SECONDS:
            raise invalid
    return -total if neg else total
