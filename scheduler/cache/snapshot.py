"""``Snapshot``: what one scheduling cycle reads.

The cache's mutations and a scheduling cycle are serialised by the cache lock, so the snapshot is a
zero-copy view of the cache rather than upstream's per-cycle copy of changed NodeInfos: the cost of
taking it is O(1), and it is consistent for the whole cycle, except across an HTTP extender's call,
which lets go of the lock (``unlocked``): the cycle looks its nodes up again by name after one.
Plugins read only the snapshot.

``node_order`` lists the live rows interleaved by zone (upstream's ``nodeTree``: zone1's first node,
zone2's first node, ..., zone1's second node, ...), so a sampled search covers every zone. It is
rebuilt only when the node set or a node's labels change.

The snapshot reads the cache through ``CacheView``, the few members it passes on, so this module
does not import ``cache``, which imports it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Protocol

import numpy as np

from scheduler.cache.counters import CountArray, PodPredicate, TermHolders
from scheduler.cache.node_table import IntArray, NodeInfo, NodeTable

if TYPE_CHECKING:
    from scheduler.cache.what_if import WhatIf

__all__ = ["ZONE_LABEL", "CacheView", "Snapshot", "zone_interleaved"]

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
# At or under this many rows, ``in_order`` sorts Python ints instead of calling np.unique.
_FEW = 16


def zone_interleaved(table: NodeTable) -> IntArray:
    rows = table.valid_rows()
    if len(rows) == 0:
        return rows
    zone = table.labels.get(ZONE_LABEL)
    region = table.labels.get(REGION_LABEL)
    if zone is None and region is None:
        return rows
    z = zone[rows].astype(np.int64) if zone is not None else np.zeros(len(rows), np.int64)
    r = region[rows].astype(np.int64) if region is not None else np.zeros(len(rows), np.int64)
    key = (r + 1) * (2**31) + (z + 1)
    # Zones in order of their first node; within a zone, insertion (row) order.
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    zone_rank = np.argsort(np.argsort(first))[inverse]
    order = np.lexsort((rows, zone_rank))
    sorted_rank = zone_rank[order]
    # Position of each node within its zone, then interleave by (position, zone).
    starts = np.searchsorted(sorted_rank, sorted_rank, side="left")
    position = np.arange(len(order)) - starts
    inter = np.lexsort((sorted_rank, position))
    return rows[order][inter]


class CacheView(Protocol):
    """What a ``Snapshot`` reads of the ``Cache`` (each member is the cache's own, documented there)."""

    @property
    def table(self) -> NodeTable: ...

    @property
    def lock(self) -> contextlib.AbstractContextManager[bool]: ...

    @property
    def holders(self) -> TermHolders: ...

    @property
    def pvc_refs(self) -> Mapping[tuple[str, str], int]: ...

    def order_positions(self, order: IntArray) -> IntArray: ...

    def unlocked(self) -> contextlib.AbstractContextManager[None]: ...

    def counter(self, key: PodPredicate) -> CountArray: ...

    def what_if(self, *, columns_only: bool = False) -> WhatIf: ...

    def namespace_labels(self, namespace: str) -> Mapping[str, str]: ...


class Snapshot:
    __slots__ = ("_cache", "node_order", "table")

    def __init__(self, cache: CacheView, node_order: IntArray) -> None:
        self._cache = cache
        self.table: NodeTable = cache.table
        self.node_order = node_order

    @property
    def num_nodes(self) -> int:
        return len(self.node_order)

    def node_info(self, row: int) -> NodeInfo:
        return self.table.info(row)

    def node_names(self, rows: IntArray) -> list[str]:
        infos = self.table.infos
        return [infos[r].node.name for r in rows.tolist()]

    def in_order(self, rows: IntArray) -> IntArray:
        """The distinct live rows of ``rows`` in ``node_order``'s order: what masking
        ``node_order`` with them gives, in O(len(rows)) instead of a pass over every node."""
        if len(rows) == 0:
            return rows
        positions = self._cache.order_positions(self.node_order)
        if len(rows) <= _FEW:
            # A PreFilterResult of a few nodes (a DaemonSet pod's one, by metadata.name): sorted
            # Python ints, where np.unique's sort and masks cost more than the search they order.
            found = sorted({p for p in positions[rows].tolist() if p >= 0})
            return self.node_order[found] if found else rows[:0]
        pos = positions[rows]
        return self.node_order[np.unique(pos[pos >= 0])]

    def unlocked(self) -> contextlib.AbstractContextManager[None]:
        """The cache's lock let go of for a blocking call (``Cache.unlocked``)."""
        return self._cache.unlocked()

    @property
    def lock(self) -> contextlib.AbstractContextManager[bool]:
        """The cache's lock, to read the rows during an ``unlocked`` stretch."""
        return self._cache.lock

    def row_of(self, node_name: str) -> int | None:
        row = self.table.row_of.get(node_name)
        return row if row is not None and self.table.valid[row] else None

    def counter(self, key: PodPredicate) -> CountArray:
        return self._cache.counter(key)

    @property
    def holders(self) -> TermHolders:
        return self._cache.holders

    def what_if(self, *, columns_only: bool = False) -> WhatIf:
        """Hypothetical pod moves on this snapshot, undone on exit (see ``Cache.what_if``)."""
        return self._cache.what_if(columns_only=columns_only)

    def pvc_in_use(self, namespace: str, claim: str) -> bool:
        """Whether a pod placed on a node uses the claim (upstream's ``StorageInfos().IsPVCUsedByPods``)."""
        return (namespace, claim) in self._cache.pvc_refs

    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._cache.namespace_labels(namespace)
