"""``RowScores``: a Score plugin's per-row scores, kept across cycles for pods that score alike.

Fit's and BalancedAllocation's score of a node is a function of the node's row alone (its
allocatable and requested amounts) and of the pod's requests (the *key*). The pods of one workload
ask the same, and each cycle scores thousands of rows (5 % of 50,000 nodes), of which only a few
changed since they were last scored: the node table journals which
(``NodeTable.amount_changes``: nodes set or removed, pods added, removed, moved or restored). So a
plugin keeps, per key, each row's score and whether it is still known, and recomputes with its own
code only the rows that are not known, over just those rows: the kept and the computed scores
cannot disagree.

A cycle that finds every row known costs three light passes (the flags, their test, the copy
handed back) instead of a dozen passes of arithmetic over the table's columns; this is what keeps
the CPU a pod at 50,000 nodes near the 5,000-node figure (#38). A table other than the last one
seen, or one that grew, starts every key over; at most ``keys`` keys are kept, the least recently
used dropped first (its arrays serve the next key). A key is kept from its second pod on, so pods
that all ask differently are scored as without the cache, for the cost of a lookup.

The scores handed back are the caller's own (a copy): a decision record may keep them.
"""

from __future__ import annotations

import weakref
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.cache.node_table import NodeTable
from scheduler.framework import interfaces as fwk

# Keys kept per plugin: a few workloads interleave in the queue.
DEFAULT_KEYS = 4
# Keys remembered as seen once; a key is kept from its second pod on.
_SEEN_MAX = 64
# Rows recomputed one at a time (the plugin's exact per-row path) rather than in one array call.
EXACT_MAX = 16


@dataclass(slots=True)
class _Kept:
    """One key's scores by row; ``known[row]`` is False until scored and again once it changes."""

    values: npt.NDArray[np.int64]
    known: npt.NDArray[np.bool_]


class RowScores:
    """The per-row scores one plugin instance keeps (see the module doc). Not thread-safe: a
    plugin's cycles run one at a time, as the cache they read does."""

    def __init__(self, keys: int = DEFAULT_KEYS) -> None:
        self._keys = keys
        self._table: weakref.ref[NodeTable] | None = None
        self._capacity = 0
        self._position = 0
        self._kept: OrderedDict[Hashable, _Kept] = OrderedDict()
        # Keys seen once and not kept yet (a key is kept from its second pod on), oldest first.
        self._seen: OrderedDict[Hashable, None] = OrderedDict()

    def scores(self, table: NodeTable, rows: fwk.Rows, run: slice | None, key: Hashable,
               compute: Callable[[fwk.Rows], fwk.Scores], exact: Callable[[int], int] | None = None
               ) -> fwk.Scores:
        """The scores of ``rows`` for pods of ``key``: kept ones where the row has not changed since,
        ``compute(rows_subset)`` for the others, or ``exact(row)`` for each when they are at most
        ``EXACT_MAX`` (the usual: the rows the last pods went to; ``compute``'s fixed cost, a few
        dozen array calls, is what a handful of rows would pay otherwise). ``run``: ``rows`` as a
        slice of the table when they are one ascending run (``helpers.row_run``), read as a view."""
        self._catch_up(table)
        kept = self._kept.get(key)
        if kept is None:
            if key not in self._seen:
                # A key's first pod is scored as without the cache: pods that all ask differently
                # (no two alike) must not pay for keeping scores no later pod reads.
                self._seen[key] = None
                if len(self._seen) > _SEEN_MAX:
                    self._seen.popitem(last=False)
                return compute(rows)
            del self._seen[key]
            if len(self._kept) >= self._keys:
                # The least recently used key's arrays serve the new one: one clear of the flags,
                # no allocation (pods that all ask differently pay that, not two new columns).
                _, kept = self._kept.popitem(last=False)
                kept.known[:] = False
            else:
                kept = _Kept(np.zeros(self._capacity, np.int64), np.zeros(self._capacity, np.bool_))
            self._kept[key] = kept
        else:
            self._kept.move_to_end(key)
        at = rows if run is None else run
        known = kept.known[at]
        if not known.all():
            if not known.any():
                # Nothing kept here: compute over the caller's own rows (their per-cycle helpers
                # in the state are keyed by that array), and keep the result.
                fresh = compute(rows)
                kept.values[at] = fresh
                kept.known[at] = True
                return fresh
            missing = rows[~known]
            if exact is not None and len(missing) <= EXACT_MAX:
                values = kept.values
                for row in missing.tolist():
                    values[row] = exact(row)
            else:
                kept.values[missing] = compute(missing)
            kept.known[missing] = True
        out = kept.values[at]
        return out if run is None else out.copy()

    def _catch_up(self, table: NodeTable) -> None:
        """Forget the rows that changed since the last call; everything on a new or grown table."""
        if self._table is None or self._table() is not table or table.capacity != self._capacity:
            self._table = weakref.ref(table)
            self._capacity = table.capacity
            self._kept.clear()
            _, self._position = table.amount_changes(0)
            return
        changed, self._position = table.amount_changes(self._position)
        if changed is None:
            for kept in self._kept.values():
                kept.known[:] = False
        elif changed:
            for kept in self._kept.values():
                kept.known[changed] = False
