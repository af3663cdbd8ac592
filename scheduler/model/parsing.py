"""What the parsers of whole API objects share: errors located at the object, and resource lists.

``with parsing(where):`` wraps the parse of one object (``where`` is ``"Node n1"``-style): a
``ParseError`` raised inside gets the object filled in, and an ``AttributeError`` or ``TypeError``
(a field of the wrong JSON type met by a ``.get`` or an iteration) becomes ``ParseError("malformed
object: ...")`` at the object. Both are raised ``from None``, so the user reads one message, not a
chain. It is a class with slots, not a ``contextlib`` generator, so that it costs two plain calls.

``resource_list`` parses a ``ResourceList`` (``{name: quantity}``), the unit per resource as
``quantity.resource_value`` has it (milli-CPU for ``cpu``); a pod's requests must not be negative.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import TracebackType
from typing import Any

from scheduler.errors import ParseError
from scheduler.quantity import resource_value

__all__ = ["parsing", "resource_list"]


class parsing:  # lower case: a context manager read as a phrase, as contextlib.suppress
    """``with parsing("Node n1"): ...``: the errors of one object's parse, located at it."""

    __slots__ = ("where",)

    def __init__(self, where: str) -> None:
        self.where = where

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        if isinstance(e, ParseError):
            raise e.located(self.where) from None
        if isinstance(e, AttributeError | TypeError):
            raise ParseError(f"malformed object: {e}", obj=self.where) from None


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
