"""``RowJournal``: the node-table rows that changed, in order, for readers that keep data per row.

A reader remembers the journal's position (``end``) when it last caught up, and next asks
``since(position)`` for the rows changed after it: it redoes only those rows, not the whole table.
The journal keeps at most ``limit`` entries; when it starts over, a reader behind it gets ``None``
and redoes every row. A row may appear many times: readers treat the list as a set.
"""

from __future__ import annotations

from collections.abc import Iterable


class RowJournal:
    """An append-only list of row numbers from absolute position ``base``, bounded by ``limit``
    (a reader far behind rebuilds rather than replays a long history)."""

    __slots__ = ("_base", "_limit", "_rows")

    def __init__(self, limit: int) -> None:
        self._rows: list[int] = []
        self._base = 0
        self._limit = limit

    @property
    def end(self) -> int:
        """The position after the newest entry: a reader that has seen everything holds this."""
        return self._base + len(self._rows)

    def add(self, row: int) -> None:
        if len(self._rows) >= self._limit:
            self._base += len(self._rows)
            self._rows.clear()
        self._rows.append(row)

    def extend(self, rows: Iterable[int]) -> None:
        rows = list(rows)
        if len(self._rows) + len(rows) > self._limit:
            # Start over; a batch longer than the limit is skipped past whole (its readers rebuild).
            self._base += len(self._rows)
            self._rows.clear()
            if len(rows) > self._limit:
                self._base += len(rows)
                return
        self._rows.extend(rows)

    def since(self, position: int) -> tuple[list[int] | None, int]:
        """The rows changed after ``position`` and the position now; ``None`` when ``position`` is
        older than the journal keeps (redo every row)."""
        end = self._base + len(self._rows)
        if position < self._base:
            return None, end
        return self._rows[position - self._base:], end
