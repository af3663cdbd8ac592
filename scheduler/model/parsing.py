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
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from scheduler.errors import ParseError
from scheduler.quantity import resource_value

__all__ = ["located", "parsing", "resource_list"]


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
