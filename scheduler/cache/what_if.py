"""``WhatIf``: hypothetical pod moves on the cache's live rows, undone by ``restore``.

``Cache.what_if`` hands one out (its module docstring says how the moves reach the columns, the pod
counters and the term holders); ``Snapshot.what_if`` passes it on to the plugins. It is typed
against ``Placements``, the few members of the cache it moves pods with, so that neither this
module nor ``snapshot`` imports ``cache``, which imports both.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from scheduler.cache.node_table import NodeTable, PodVectors, SavedRows
from scheduler.model import Pod

__all__ = ["Placements", "WhatIf"]


class Placements(Protocol):
    """What a ``WhatIf`` uses of the ``Cache``: its rows, the request vectors of bulk moves, and the
    placement primitives a real Add or Remove goes through (the caller holds the cache's lock)."""

    @property
    def table(self) -> NodeTable: ...

    @property
    def pod_vectors(self) -> PodVectors: ...

    def _place(self, pod: Pod, node: str) -> None: ...

    def _unplace(self, pod: Pod, node: str) -> None: ...


class WhatIf:
    """Hypothetical pod removals and additions on the cache's rows, undone by ``restore``.

    Use as a context manager (``with cache.what_if() as w: w.remove(pod, node) ...``).
    """

    __slots__ = ("_blocks", "_cache", "_columns_only", "_moves", "_saved")

    def __init__(self, cache: Placements, *, columns_only: bool = False) -> None:
        self._cache = cache
        self._columns_only = columns_only
        self._moves: list[tuple[int, Pod, str]] = []
        # columns_only: each touched row's state before its first move; restore puts it back whole,
        # instead of undoing thousands of moves one by one.
        self._saved: set[int] = set()
        self._blocks: list[SavedRows] = []

    def _move(self, pod: Pod, node: str, sign: int) -> None:
        c = self._cache
        if self._columns_only:
            row = c.table.row_of.get(node)
            if row is None:
                return
            self._save((row,))
            c.table.add_pod(row, pod, sign)
            return
        if sign > 0:
            c._place(pod, node)
        else:
            c._unplace(pod, node)
        self._moves.append((sign, pod, node))

    def move_rows(self, rows: Sequence[int], pods: Sequence[Sequence[Pod]], sign: int) -> None:
        """``add`` (sign 1) or ``remove`` (sign -1) every pod of ``pods[i]`` on row ``rows[i]``, the rows
        distinct: in ``columns_only`` mode one array operation per column over all the rows
        (``NodeTable.move_pods``), which is what preemption's batched dry run spends its time on."""
        table = self._cache.table
        if not self._columns_only:
            for i, row in enumerate(rows):
                node = table.info(row).name
                for pod in pods[i]:
                    self._move(pod, node, sign)
            return
        self._save(rows)
        table.move_pods(rows, pods, sign, self._cache.pod_vectors)

    def _save(self, rows: Sequence[int]) -> None:
        """Keep the state of the rows not kept yet (columns_only), for ``restore``."""
        fresh = [row for row in rows if row not in self._saved]
        if fresh:
            self._blocks.append(self._cache.table.save_rows(fresh))
            self._saved.update(fresh)

    def remove(self, pod: Pod, node: str) -> None:
        self._move(pod, node, -1)

    def add(self, pod: Pod, node: str) -> None:
        self._move(pod, node, +1)

    def restore(self) -> None:
        table = self._cache.table
        for block in self._blocks:
            table.restore_rows(block)
        self._saved.clear()
        self._blocks.clear()
        while self._moves:
            sign, pod, node = self._moves.pop()
            if sign > 0:
                self._cache._unplace(pod, node)
            else:
                self._cache._place(pod, node)

    def __enter__(self) -> WhatIf:
        return self

    def __exit__(self, *exc: object) -> None:
        self.restore()
