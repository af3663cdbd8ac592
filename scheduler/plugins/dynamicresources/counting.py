"""Counting instead of searching: DynamicResources' Filter for the usual claim.

For the usual claim (one request for a count of devices, no constraints: the allocator's
single-request plan, ``Allocator.countable``) the search on a node succeeds exactly when the node
has at least that many free devices the selectors accept. So Filter reads that number per row from
a column kept per set of selectors (``_FreeRows``: built once per version of the slices, classes
and node rows, and recounted only for the rows of the pools whose allocations changed, from the
store's journal), compares it with the count over all candidate rows at once, and runs the search
only for the node Reserve picks (``_State.allocations_on``), not for every feasible node. The store
cannot change between Filter and Reserve (both run in one synchronous cycle, on the loop that feeds
the store), so that search finds what Filter would have. A node where counting does not decide (an
invalid pool, a selector error on one of its devices) is searched as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.cache import NodeTable
from scheduler.cache.dra import DraStore
from scheduler.dra.allocator import Node, SimplePlan


@dataclass(slots=True)
class _FreeRows:
    """For one set of selectors (``SimplePlan.selectors``), per row of the node table: how many
    free devices they accept on the node (``SimplePlan.free_on``; -1 where counting does not
    decide; 0 for a node without slices). Valid for one version of the slices and classes and of
    the node table's rows (which node each row holds); kept current from the store's journal
    position ``seen`` by recounting only the rows of the pools that changed (a pod's Reserve,
    PreBind and the informer's echo touch one pool)."""

    free: npt.NDArray[np.int64]
    names: list[str | None]                       # by row: the node counted there
    rows_of_pool: dict[tuple[str, str], list[int]]
    seen: int = -1



class FreeCounts:
    """The ``_FreeRows`` of one store, by selectors, for (slices_version, NodeTable.rows_version):
    with node-local slices only (``Allocator.countable``) a row's count depends on the node's name
    alone, not on its labels, so a node's update keeps them."""

    def __init__(self, dra: DraStore) -> None:
        self._dra = dra
        self._free: dict[object, _FreeRows] = {}
        self._free_version: tuple[int, int] | None = None

    def rows(self, plan: SimplePlan, table: NodeTable) -> npt.NDArray[np.int64]:
        """``plan``'s free-device counts by row of ``table``, current with the store."""
        version = (self._dra.slices_version, table.rows_version)
        if self._free_version != version:
            self._free.clear()
            self._free_version = version
        fr = self._free.get(plan.selectors)
        if fr is None:
            names: list[str | None] = [None] * table.capacity
            rows_of_pool: dict[tuple[str, str], list[int]] = {}
            for row in np.flatnonzero(table.valid[: table.size]).tolist():
                node = table.info(row).node
                for pool in plan.pools_of(Node(node.name, node.labels)):
                    rows_of_pool.setdefault(pool, []).append(row)
                names[row] = node.name
            fr = self._free[plan.selectors] = _FreeRows(np.zeros(table.capacity, np.int64), names, rows_of_pool)
        changed, fr.seen = self._dra.pool_changes(fr.seen)
        if changed is None:      # first use, or too far behind the journal: count every row
            recount: Sequence[int] = sorted({row for rows in fr.rows_of_pool.values() for row in rows})
        else:
            recount = sorted({row for pool in set(changed) for row in fr.rows_of_pool.get(pool, ())})
        for row in recount:
            name = fr.names[row]
            assert name is not None
            fr.free[row] = plan.free_on(Node(name, {}))
        return fr.free

