"""Columnar node state: the data the hot path reads.

Each node owns one *row*. A row's columns are numpy arrays, so a Filter or Score plugin handles
all candidate nodes of a cycle in a few vectorised operations instead of a Python call per node:

* ``alloc[row, c]`` / ``requested[row, c]``: allocatable and requested amounts per dense resource
  column (cpu is milli-CPU, the rest units); ``pod_count[row]``; ``nz_cpu`` / ``nz_mem``: non-zero
  requests, for scoring. ``resources`` maps a name to a stable resource id; ``slots[id]`` is its dense
  column, or -1 while it lives in the sparse side table. Read any resource with ``alloc_of`` /
  ``requested_of`` (the standard four have id == column, so ``alloc[rows, resources["pods"]]`` is fine).
* ``sparse[id]``: a rare resource's amounts as ``row -> amount`` maps (upstream's per-node
  ``ScalarResources``, turned per resource). A resource with a column per node
  (SchedulingWithExtendedResource: 5,000 nodes, each with a resource of its own) made the dense
  arrays 5,000 columns wide, 8,192 rows deep, twice: 1.4 GiB. The rule: cpu, memory,
  ephemeral-storage and pods are always dense; any other resource starts sparse and moves into a
  dense column, for good, once its side table holds ``max(SPARSE_MIN_ROWS, rows in use //
  SPARSE_FRACTION)`` entries (rows advertising it plus rows with a non-zero request of it), that is
  once it is on at least 64 rows or 1 % of them. Both hold the same capped values, so readers see the
  same numbers either way; a sparse read is one scatter into a row-long zero vector.
* ``labels[key][row]``: the interned value id of label ``key`` on the node, ``-1`` where absent.
  A selector requirement becomes ``np.isin`` on one column, so even per-node labels such as
  ``kubernetes.io/hostname`` stay vectorised.
* ``taint_set[row]``: the id of the node's (interned) taint tuple. Clusters have few distinct taint
  sets, so "does this toleration set tolerate the node" is computed once per distinct set and
  fanned out with one fancy-index.
* ``feature_set[row]``: the id of the node's (interned) ``status.declaredFeatures`` set; as with
  taints, "does the node declare every feature the pod needs" is one subset test per distinct set.
* ``unschedulable[row]``, ``valid[row]`` (the row holds a live node).
* ``pods_bound``: an upper bound on every row's ``pod_count`` (raised on add, never lowered).
* ``pod_epochs[row]``: bumped on every change to the row's pods (add, remove, a what-if's bulk move
  and its restore) and whenever the row is given to or taken from a node; never put back. Data a
  plugin derives from a row's pods (NodeVolumeLimits' attach counts) stays valid while the row's
  epoch is the one it read. ``NodeInfo.generation`` cannot serve: ``restore_rows`` puts it back.

``NodeInfo`` keeps the per-node Python objects (the node, its pods, its host ports). Rows of
removed nodes are recycled. ``row_changes`` journals the rows whose node was set or removed, so data
kept per row (DRA scoring's device counts) redoes only those rows instead of keying on ``version``;
``amount_changes`` adds the rows whose pods changed (per-row scores kept across cycles).

**Saturation.** A quantity can be as large as 2^63-1 (``scheduler.quantity``) and a node can hold
many pods, so a true total does not always fit an int64. Upstream's ``Resource.Add``
(``pkg/scheduler/framework/types.go``) adds int64s and wraps; three pods of ``cpu: "4e15"`` once
wrapped a node's total negative here, so a full node looked empty and scores left [0, 100]. Instead:

* every int64 column holds ``min(true value, CAP)`` (``CAP = 2**62``), so filter arithmetic such as
  ``alloc - requested`` or ``requested + request`` (with the request also capped) cannot overflow;
* ``NodeInfo.over`` keeps the *exact* Python-int total for the few (row, resource id) pairs whose total
  reached CAP (``NZ_CPU`` / ``NZ_MEM`` for the non-zero columns). While a pair is in ``over`` its
  column reads CAP; once removals bring the total back below CAP the column is exact again. So
  saturation is lossless: removing the pods that pushed a total past CAP restores the true value.
* allocatable is clamped to [0, CAP] in ``alloc``; the node keeps the exact numbers.
  ``big_rows`` lists the rows whose allocatable exceeds ``SCORE_SAFE`` (where ``x * 100`` could
  overflow int64) so a plugin can take an exact Python-int path for just those rows
  (``exact_alloc`` / ``exact_requested``), and never in an ordinary cluster.

A column below CAP is exact, so for every node whose allocatable is below CAP the capped columns
give exactly the filter verdicts and scores that the exact totals would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

from scheduler.cache.row_journal import RowJournal
from scheduler.model import HostPort, Node, Pod, Taint

__all__ = ["CAP", "NZ_CPU", "NZ_MEM", "SCORE_SAFE", "SPARSE_FRACTION", "SPARSE_MIN_ROWS", "STANDARD_RESOURCES",
           "NodeInfo", "NodeTable", "PodVectors", "SparseColumn", "normalized_image_name"]

CAP = 2**62
# The largest allocatable for which ``x * MAX_NODE_SCORE`` (x <= allocatable) fits an int64.
SCORE_SAFE = (2**63 - 1) // 100
# Keys of NodeInfo.over for the 1-D non-zero request columns (resource columns are >= 0).
NZ_CPU = -1
NZ_MEM = -2
STANDARD_RESOURCES = ("cpu", "memory", "ephemeral-storage", "pods")
# Node changes the row journal keeps before it starts over (a reader behind it rebuilds).
_ROW_JOURNAL_MAX = 4096
# The memory order of the 2-D columns (``alloc``, ``requested``). A cycle reads a few resources
# (cpu, memory) over thousands of rows: at 50,000 nodes those rows are not in cache (each pod's
# search window moves on, so the table is swept every few dozen pods), and the cost per row is the
# bytes brought in. Row-major, a column read strides over every resource of each row (4 standard
# ones: 32 bytes a row and table, 64 once a column is promoted); column-major it reads 8.
_COLUMN_ORDER: Literal["F"] = "F"
# A resource leaves the sparse side table for a dense column once it has this many entries, or
# 1/SPARSE_FRACTION of the rows in use if more (see module doc).
SPARSE_MIN_ROWS = 64
SPARSE_FRACTION = 100
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


def normalized_image_name(name: str) -> str:
    """Upstream's ImageLocality normalisation: an image with no tag means ``:latest``."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def _store(over: dict[int, int], key: int, total: int) -> int:
    """The column value for the exact ``total`` of ``key``: the total itself inside (-CAP, CAP);
    else ±CAP, with the total kept in ``over`` until it comes back into range."""
    if -CAP < total < CAP:
        over.pop(key, None)
        return total
    over[key] = total
    return CAP if total > 0 else -CAP


@dataclass(slots=True, eq=False)
class NodeInfo:
    """A node and the pods assigned (or assumed) to it."""

    node: Node
    row: int
    pods: dict[str, Pod] = field(default_factory=dict)
    # (protocol, port) -> host IPs in use, one entry per pod-port.
    ports: dict[tuple[str, int], list[str]] = field(default_factory=dict)
    generation: int = 0
    # resource id (or NZ_CPU / NZ_MEM) -> exact total, only while it lies outside (-CAP, CAP); see module doc.
    over: dict[int, int] = field(default_factory=dict)
    # Ids of the sparse resources with a requested entry on this row (what save_rows keeps).
    sparse: set[int] = field(default_factory=set)

    @property
    def name(self) -> str:
        return self.node.name

    def port_conflicts(self, wanted: Iterable[HostPort]) -> bool:
        for p in wanted:
            used = self.ports.get((p.protocol, p.port))
            if used and (p.host_ip == "0.0.0.0" or "0.0.0.0" in used or p.host_ip in used):
                return True
        return False


# move_pods' bounds: at most _MAX_MOVED pods a row, each amount below _MAX_AMOUNT, so a row's sum
# stays below 2**62 and a total plus it below 2**63.
_MAX_MOVED = 1024
_MAX_AMOUNT = 2**52


@dataclass(slots=True, eq=False)
class SparseColumn:
    """A rare resource's amounts by row, capped as the dense columns are: allocatable where above 0,
    requested where not 0."""
    alloc: dict[int, int] = field(default_factory=dict)
    requested: dict[int, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SavedRows:
    """Rows as ``NodeTable.save_rows`` kept them: the columns as blocks, and per row its pods, ports,
    generation, saturated totals and sparse requested amounts."""
    rows: IntArray
    requested: IntArray
    pod_count: IntArray
    nz_cpu: IntArray
    nz_mem: IntArray
    rest: list[tuple[dict[str, Pod], dict[tuple[str, int], list[str]], int, dict[int, int], dict[int, int]]]


class PodVectors:
    """Pods' request vectors for ``NodeTable.move_pods``, kept by the cache across what-ifs (``trim``
    bounds them): the distinct vectors (dense columns with amounts, non-zero cpu and memory), and each
    pod's vector (by identity). A pod requesting a sparse resource has none: it moves one by one."""

    __slots__ = ("_dense", "by_pod", "index", "sparse")

    # More pods than this and the cache starts over (a pod is held until then, even once deleted).
    MAX_PODS = 1 << 16
    MAX_VECTORS = 1 << 10

    def __init__(self) -> None:
        self.index: dict[tuple[tuple[tuple[str, int], ...], int, int], int] = {}
        self.sparse: list[tuple[list[tuple[int, int]], int, int]] = []
        self.by_pod: dict[int, tuple[Pod, int]] = {}
        self._dense = np.zeros((0, 3), np.int64)

    def dense(self, width: int) -> IntArray:
        """The vectors as rows: ``width`` resource columns, then non-zero cpu, memory and 1 (the pod)."""
        if self._dense.shape != (len(self.sparse), width + 3):
            dense = np.zeros((len(self.sparse), width + 3), np.int64)
            for k, (cells, cpu, mem) in enumerate(self.sparse):
                for col, amount in cells:
                    dense[k, col] += amount
                dense[k, width:] = (cpu, mem, 1)
            self._dense = dense
        return self._dense

    def trim(self) -> None:
        """Start over once the cache holds too many pods or vectors (pods with unique requests)."""
        if len(self.by_pod) > self.MAX_PODS or len(self.sparse) > self.MAX_VECTORS:
            self.by_pod.clear()
            self.index.clear()
            self.sparse.clear()


class NodeTable:
    """Every node's state as numpy columns, one row per node (upstream's ``NodeInfo`` list, turned
    columnar): what Filter and Score plugins read for all candidate rows at once."""

    def __init__(self, capacity: int = 64) -> None:
        self.capacity = capacity
        self.size = 0
        self.free_rows: list[int] = []
        self.row_of: dict[str, int] = {}
        self.infos: list[NodeInfo | None] = [None] * capacity
        # name -> resource id; id -> dense column or -1 (sparse); see module doc.
        self.resources: dict[str, int] = {r: i for i, r in enumerate(STANDARD_RESOURCES)}
        self.slots: list[int] = list(range(len(STANDARD_RESOURCES)))
        self.dense_width = len(STANDARD_RESOURCES)
        self.sparse: dict[int, SparseColumn] = {}
        self.valid = np.zeros(capacity, np.bool_)
        # Column-major (Fortran order): Filter and Score read one resource over many rows, so each
        # column is contiguous; row-major, reading the cpu column pulled every resource's bytes
        # of those rows into cache (see ``_COLUMN_ORDER``).
        self.alloc = np.zeros((capacity, len(self.resources)), np.int64, order=_COLUMN_ORDER)
        self.requested = np.zeros((capacity, len(self.resources)), np.int64, order=_COLUMN_ORDER)
        self.pod_count = np.zeros(capacity, np.int64)
        # At least every row's pod count: raised with it, never lowered (``restore_rows`` puts back
        # counts it saw), so Fit's Filter skips its pod-count pass while it is below every live
        # node's allowed pods.
        self.pods_bound = 0
        self.nz_cpu = np.zeros(capacity, np.int64)
        self.nz_mem = np.zeros(capacity, np.int64)
        self.unschedulable = np.zeros(capacity, np.bool_)
        self.pod_epochs = np.zeros(capacity, np.int64)
        self.taint_set = np.zeros(capacity, np.int32)
        self.taint_sets: list[tuple[Taint, ...]] = [()]
        self._taint_ids: dict[tuple[Taint, ...], int] = {(): 0}
        self.feature_set = np.zeros(capacity, np.int32)
        self.feature_sets: list[frozenset[str]] = [frozenset()]
        self._feature_ids: dict[frozenset[str], int] = {frozenset(): 0}
        self.labels: dict[str, npt.NDArray[np.int32]] = {}
        self.label_ids: dict[str, dict[str, int]] = {}
        self.label_values: dict[str, list[str]] = {}
        # image -> {row: size}
        self.images: dict[str, dict[int, int]] = {}
        # Rows whose allocatable exceeds SCORE_SAFE in some column (see module doc).
        self.big_rows: set[int] = set()
        # Bumped on any change to the set of nodes or to a node's labels/taints/allocatable, so
        # per-node-set derived data (zone order, label masks) can be cached.
        self.version = 0
        # Bumped only when a row is given to a node it did not hold (a node added, or a released
        # row reused): data kept by row that depends on nothing but which node a row holds (its
        # name) stays valid across node updates, which a real cluster's kubelets send all the time.
        self.rows_version = 0
        # The rows set (a node added or updated) or removed, in order: a journal (``row_changes``) from
        # absolute position ``_row_journal_base``, so data kept per row can redo only those rows.
        self._row_journal = RowJournal(_ROW_JOURNAL_MAX)
        # Every row whose amounts changed: the journal above, and pods placed, moved or restored
        # (``amount_changes``: per-row scores kept across cycles redo only those rows).
        self._amount_journal = RowJournal(_ROW_JOURNAL_MAX)
        # Results derived from node labels/taints (selector masks, taint verdicts), valid while
        # ``version`` is unchanged; see ``scheduler.plugins.helpers.derived``.
        self.derived: dict[object, object] = {}
        self.derived_version = 0
        # Bumped on every change to what a node holds or is (pods placed or removed, what-if moves
        # and their restore, node updates): opportunistic batching reuses a scored node list only
        # while it is exactly the count it was when the list's last pod was assumed.
        self.mutations = 0

    # --- growth ----------------------------------------------------------------------------
    def _grow(self) -> None:
        old, new = self.capacity, self.capacity * 2

        def grow(a: npt.NDArray[np.generic], fill: int = 0) -> npt.NDArray[np.generic]:
            out = np.full((new, *a.shape[1:]), fill, a.dtype, order=_COLUMN_ORDER)
            out[:old] = a
            return out

        self.valid = grow(self.valid)  # type: ignore[assignment]
        self.alloc = grow(self.alloc)  # type: ignore[assignment]
        self.requested = grow(self.requested)  # type: ignore[assignment]
        self.pod_count = grow(self.pod_count)  # type: ignore[assignment]
        self.nz_cpu = grow(self.nz_cpu)  # type: ignore[assignment]
        self.nz_mem = grow(self.nz_mem)  # type: ignore[assignment]
        self.unschedulable = grow(self.unschedulable)  # type: ignore[assignment]
        self.pod_epochs = grow(self.pod_epochs)  # type: ignore[assignment]
        self.taint_set = grow(self.taint_set)  # type: ignore[assignment]
        self.feature_set = grow(self.feature_set)  # type: ignore[assignment]
        for k, col in self.labels.items():
            self.labels[k] = grow(col, -1)  # type: ignore[assignment]
        self.infos.extend([None] * (new - old))
        self.capacity = new
        self.on_grow(new)

    def on_grow(self, capacity: int) -> None:
        """Hook for owners of per-row arrays (the cache's pod counters)."""

    def resource_column(self, name: str) -> int:
        """The id of resource ``name``, added (sparse) if new."""
        rid = self.resources.get(name)
        if rid is None:
            rid = self.resources[name] = len(self.slots)
            self.slots.append(-1)
            self.sparse[rid] = SparseColumn()
        return rid

    def _maybe_promote(self, rid: int, sc: SparseColumn) -> None:
        """Give ``rid`` a dense column once it is on many rows (module doc's rule)."""
        if len(sc.alloc) + len(sc.requested) < max(SPARSE_MIN_ROWS, self.size // SPARSE_FRACTION):
            return
        slot = self.dense_width
        width = self.alloc.shape[1]
        if slot >= width:
            # Widen by doubling: the spare columns are all 0 and no reader goes past dense_width.
            for attr in ("alloc", "requested"):
                a = getattr(self, attr)
                out = np.zeros((a.shape[0], 2 * width), np.int64, order=_COLUMN_ORDER)
                out[:, :width] = a
                setattr(self, attr, out)
        self.dense_width += 1
        for cells, dense in ((sc.alloc, self.alloc), (sc.requested, self.requested)):
            if cells:
                dense[np.fromiter(cells, np.int64, len(cells)), slot] = np.fromiter(cells.values(), np.int64,
                                                                                    len(cells))
        for row in sc.requested:
            info = self.infos[row]
            if info is not None:
                info.sparse.discard(rid)
        del self.sparse[rid]
        self.slots[rid] = slot

    def _sparse_read(self, cells: dict[int, int], rows: IntArray) -> IntArray:
        if not cells:
            return np.zeros(len(rows), np.int64)
        full = np.zeros(self.capacity, np.int64)
        full[np.fromiter(cells, np.int64, len(cells))] = np.fromiter(cells.values(), np.int64, len(cells))
        return full[rows]

    def alloc_of(self, rows: IntArray, rid: int) -> IntArray:
        """Allocatable of resource ``rid`` per row of ``rows`` (capped, as the columns are)."""
        slot = self.slots[rid]
        if slot >= 0:
            out: IntArray = self.alloc[rows, slot]
            return out
        return self._sparse_read(self.sparse[rid].alloc, rows)

    def requested_of(self, rows: IntArray, rid: int) -> IntArray:
        """Requested amount of resource ``rid`` per row of ``rows`` (capped, as the columns are)."""
        slot = self.slots[rid]
        if slot >= 0:
            out: IntArray = self.requested[rows, slot]
            return out
        return self._sparse_read(self.sparse[rid].requested, rows)

    def _add_sparse(self, info: NodeInfo, rid: int, delta: int) -> None:
        sc = self.sparse[rid]
        row, over = info.row, info.over
        value = _store(over, rid, over.get(rid, sc.requested.get(row, 0)) + delta)
        if value:
            sc.requested[row] = value
            info.sparse.add(rid)
            self._maybe_promote(rid, sc)
        else:
            sc.requested.pop(row, None)
            info.sparse.discard(rid)

    # --- nodes -----------------------------------------------------------------------------
    def _taint_id(self, taints: tuple[Taint, ...]) -> int:
        tid = self._taint_ids.get(taints)
        if tid is None:
            tid = len(self.taint_sets)
            self.taint_sets.append(taints)
            self._taint_ids[taints] = tid
        return tid

    def _feature_id(self, features: frozenset[str]) -> int:
        fid = self._feature_ids.get(features)
        if fid is None:
            fid = len(self.feature_sets)
            self.feature_sets.append(features)
            self._feature_ids[features] = fid
        return fid

    def _label_id(self, key: str, value: str) -> int:
        ids = self.label_ids.get(key)
        if ids is None:
            ids = self.label_ids[key] = {}
            self.label_values[key] = []
            self.labels[key] = np.full(self.capacity, -1, np.int32)
        vid = ids.get(value)
        if vid is None:
            vid = ids[value] = len(ids)
            self.label_values[key].append(value)
        return vid

    def value_id(self, key: str, value: str) -> int:
        """The id of ``key=value`` or -1 if no node ever had it (so it matches no row)."""
        ids = self.label_ids.get(key)
        return -1 if ids is None else ids.get(value, -1)

    def label_column(self, key: str) -> npt.NDArray[np.int32]:
        col = self.labels.get(key)
        if col is None:
            col = self.labels[key] = np.full(self.capacity, -1, np.int32)
            self.label_ids[key] = {}
            self.label_values[key] = []
        return col

    def set_node(self, node: Node) -> NodeInfo:
        """Add a node or replace its spec/status; its pods and their aggregates are kept."""
        row = self.row_of.get(node.name)
        if row is None:
            if self.free_rows:
                row = self.free_rows.pop()
            else:
                if self.size == self.capacity:
                    self._grow()
                row = self.size
                self.size += 1
            self.row_of[node.name] = row
            info = NodeInfo(node, row)
            self.infos[row] = info
            self.rows_version += 1
            self.pod_epochs[row] += 1
        else:
            info = self.infos[row]  # type: ignore[assignment]
            assert info is not None
            self._unset_node_columns(info)
            self._unset_sparse_alloc(info)
            info.node = node
        info.generation += 1
        self.valid[row] = True
        self.alloc[row, :] = 0
        self.big_rows.discard(row)
        for name, amount in node.allocatable.items():
            rid = self.resource_column(name)
            value = max(0, min(amount, CAP))
            slot = self.slots[rid]
            if slot >= 0:
                self.alloc[row, slot] = value
            elif value:
                sc = self.sparse[rid]
                sc.alloc[row] = value
                self._maybe_promote(rid, sc)
            if amount > SCORE_SAFE:
                self.big_rows.add(row)
        self.unschedulable[row] = node.unschedulable
        self.taint_set[row] = self._taint_id(node.taints)
        self.feature_set[row] = self._feature_id(node.declared_features)
        for k, v in node.labels.items():
            vid = self._label_id(k, v)
            self.labels[k][row] = vid
        for img, size in node.images.items():
            self.images.setdefault(normalized_image_name(img), {})[row] = size
        self.version += 1
        self.mutations += 1
        self._journal_row(row)
        return info

    def _journal_row(self, row: int) -> None:
        self._row_journal.add(row)
        self._amount_journal.add(row)

    def row_changes(self, since: int) -> tuple[list[int] | None, int]:
        """The rows whose node was set or removed since journal position ``since``, and the position
        now; ``None`` when ``since`` is older than the journal keeps (redo every row)."""
        return self._row_journal.since(since)

    def amount_changes(self, since: int) -> tuple[list[int] | None, int]:
        """``row_changes`` plus the rows whose requested amounts changed (a pod added, removed,
        moved or restored), since position ``since`` of their own journal."""
        return self._amount_journal.since(since)

    def _unset_node_columns(self, info: NodeInfo) -> None:
        row = info.row
        for k in info.node.labels:
            self.labels[k][row] = -1
        for img in info.node.images:
            rows = self.images.get(normalized_image_name(img))
            if rows is not None:
                rows.pop(row, None)
                if not rows:
                    del self.images[normalized_image_name(img)]

    def _unset_sparse_alloc(self, info: NodeInfo) -> None:
        for name in info.node.allocatable:
            sc = self.sparse.get(self.resources[name])
            if sc is not None:
                sc.alloc.pop(info.row, None)

    def remove_node(self, name: str) -> NodeInfo | None:
        """Remove a node. Its row is recycled once no pod is left on it."""
        row = self.row_of.get(name)
        if row is None:
            return None
        info = self.infos[row]
        assert info is not None
        self._unset_node_columns(info)
        self.valid[row] = False
        self.version += 1
        self.mutations += 1
        self._journal_row(row)
        if not info.pods:
            self._release(row, name)
        return info

    def _release(self, row: int, name: str) -> None:
        del self.row_of[name]
        info = self.infos[row]
        if info is not None:
            self._unset_sparse_alloc(info)
            for rid in info.sparse:
                self.sparse[rid].requested.pop(row, None)
            info.sparse.clear()
        self.infos[row] = None
        self.pod_epochs[row] += 1
        self.alloc[row, :] = 0
        self.big_rows.discard(row)
        self.requested[row, :] = 0
        self.pod_count[row] = 0
        self.nz_cpu[row] = 0
        self.nz_mem[row] = 0
        self.taint_set[row] = 0
        self.feature_set[row] = 0
        self.unschedulable[row] = False
        self.free_rows.append(row)

    # --- pods ------------------------------------------------------------------------------
    def add_pod(self, row: int, pod: Pod, sign: int = 1) -> None:
        info = self.infos[row]
        assert info is not None
        self.mutations += 1
        self.pod_epochs[row] += 1
        self._amount_journal.add(row)
        requested, resources, slots, over = self.requested, self.resources, self.slots, info.over
        for name, amount in pod.requests.items():
            if name == "pods":
                continue
            rid = resources.get(name)
            if rid is None:
                rid = self.resource_column(name)
            col = slots[rid]
            if col < 0:
                self._add_sparse(info, rid, sign * amount)
                requested = self.requested     # a promotion may have widened it
                continue
            # Python-int arithmetic is exact and never wraps; the column takes the total while it lies
            # in (-CAP, CAP) and no total on this row is saturated (the common, inlined case).
            if over:
                requested[row, col] = _store(over, rid, over.get(rid, requested.item(row, col)) + sign * amount)
            else:
                total = requested.item(row, col) + sign * amount
                requested[row, col] = total if -CAP < total < CAP else _store(over, rid, total)
        self.pod_count[row] += sign
        if sign > 0 and self.pod_count.item(row) > self.pods_bound:
            self.pods_bound = self.pod_count.item(row)
        nz_cpu, nz_mem = self.nz_cpu, self.nz_mem
        if over:
            nz_cpu[row] = _store(over, NZ_CPU, over.get(NZ_CPU, nz_cpu.item(row)) + sign * pod.non_zero_cpu)
            nz_mem[row] = _store(over, NZ_MEM, over.get(NZ_MEM, nz_mem.item(row)) + sign * pod.non_zero_memory)
        else:
            total = nz_cpu.item(row) + sign * pod.non_zero_cpu
            nz_cpu[row] = total if -CAP < total < CAP else _store(over, NZ_CPU, total)
            total = nz_mem.item(row) + sign * pod.non_zero_memory
            nz_mem[row] = total if -CAP < total < CAP else _store(over, NZ_MEM, total)
        for p in pod.host_ports:
            key = (p.protocol, p.port)
            if sign > 0:
                info.ports.setdefault(key, []).append(p.host_ip)
            else:
                used = info.ports.get(key)
                if used and p.host_ip in used:
                    used.remove(p.host_ip)
                    if not used:
                        del info.ports[key]
        if sign > 0:
            info.pods[pod.uid] = pod
        else:
            info.pods.pop(pod.uid, None)
            if not self.valid[row] and not info.pods:
                self._release(row, info.node.name)
        info.generation += 1

    def swap_pod(self, row: int, pod: Pod) -> None:
        """Keep ``pod`` on ``row`` in place of the pod of its uid that is counted there, which
        ``pod`` places exactly as (``Cache.add_pod`` checks): what ``add_pod(-1)`` then
        ``add_pod(+1)`` leave, without their arithmetic; no cycle's reading changes (``mutations``)."""
        info = self.infos[row]
        assert info is not None and pod.uid in info.pods
        self.pod_epochs[row] += 1
        info.pods[pod.uid] = pod
        info.generation += 1

    def move_pods(self, rows: Sequence[int], pods: Sequence[Sequence[Pod]], sign: int,
                  vectors: PodVectors | None = None) -> None:
        """``add_pod(rows[i], pod, sign)`` for every pod of ``pods[i]``, the rows distinct.

        Preemption's batched dry run moves every lower-priority pod of hundreds of rows, then one pod
        a row per reprieve step: one pod at a time, that was most of its time (a dozen numpy scalar
        writes a pod). Here each column kind is one array operation over all the rows; ``vectors``
        keeps each pod's request vector across calls. The exact per-pod path is taken instead
        whenever it could differ: a row that is saturated (``over``) or no longer a node, a pod with
        host ports or an amount of 2**52 or more, or a total that would leave (-CAP, CAP). Below
        those bounds no sum here can wrap an int64.
        """
        n = len(rows)
        if not n:
            return
        vecs = vectors if vectors is not None else PodVectors()
        picked = self._pick_vectors(rows, pods, vecs)
        if picked is None:
            return self._move_pods_exactly(rows, pods, sign)
        picks, owners, single = picked
        width = self.requested.shape[1]
        dense = vecs.dense(width)
        if single:
            delta = dense[picks]
        else:
            delta = np.zeros((n, width + 3), np.int64)
            np.add.at(delta, np.array(owners, np.int64), dense[picks])
        at = np.array(rows, np.int64)
        if sign < 0:
            delta = -delta
        new_req = self.requested[at] + delta[:, :width]
        new_cpu = self.nz_cpu[at] + delta[:, width]
        new_mem = self.nz_mem[at] + delta[:, width + 1]
        if (np.abs(new_req) >= CAP).any() or (np.abs(new_cpu) >= CAP).any() or (np.abs(new_mem) >= CAP).any():
            return self._move_pods_exactly(rows, pods, sign)
        self.requested[at] = new_req
        self.nz_cpu[at] = new_cpu
        self.nz_mem[at] = new_mem
        self.pod_count[at] += delta[:, width + 2]
        if sign > 0:
            self.pods_bound = max(self.pods_bound, int(self.pod_count[at].max()))
        self.pod_epochs[at] += 1
        self.mutations += len(picks)
        self._amount_journal.extend(rows)
        self._hold_pods(rows, pods, sign)

    def _pick_vectors(self, rows: Sequence[int], pods: Sequence[Sequence[Pod]], vecs: PodVectors
                      ) -> tuple[list[int], list[int], bool] | None:
        """Per moved pod, its vector's index and its row's index, and whether every row moves one
        pod; None when the exact per-pod path must be taken (``move_pods`` says when)."""
        picks: list[int] = []       # per pod: its vector
        owners: list[int] = []      # per pod: its row's index
        by_pod = vecs.by_pod
        infos, valid = self.infos, self.valid
        single = True
        for i, row in enumerate(rows):
            info = infos[row]
            moved = pods[i]
            if info is None or info.over or not valid[row] or len(moved) > _MAX_MOVED:
                return None
            if len(moved) != 1:
                single = False
            for pod in moved:
                got = by_pod.get(id(pod))
                k = got[1] if got is not None and got[0] is pod else self._vector_of(pod, vecs)
                if k < 0:
                    return None
                picks.append(k)
                owners.append(i)
        return picks, owners, single

    def _hold_pods(self, rows: Sequence[int], pods: Sequence[Sequence[Pod]], sign: int) -> None:
        """The moved pods' entries in their rows' NodeInfo, once the columns are moved."""
        infos = self.infos
        for i, row in enumerate(rows):
            info = infos[row]
            assert info is not None
            held = info.pods
            if sign > 0:
                for pod in pods[i]:
                    held[pod.uid] = pod
            else:
                for pod in pods[i]:
                    held.pop(pod.uid, None)
            info.generation += len(pods[i])

    def _move_pods_exactly(self, rows: Sequence[int], pods: Sequence[Sequence[Pod]], sign: int) -> None:
        for i, row in enumerate(rows):
            for pod in pods[i]:
                self.add_pod(row, pod, sign)

    def _vector_of(self, pod: Pod, vecs: PodVectors) -> int:
        """The index of ``pod``'s request vector in ``vecs`` (-1: it takes the exact path)."""
        k = -1
        if not pod.host_ports and 0 <= pod.non_zero_cpu < _MAX_AMOUNT and 0 <= pod.non_zero_memory < _MAX_AMOUNT:
            key = (tuple(pod.requests.items()), pod.non_zero_cpu, pod.non_zero_memory)
            got = vecs.index.get(key)
            if got is not None:
                k = got
            else:
                cells: list[tuple[int, int]] = []
                for name, amount in key[0]:
                    if name == "pods":
                        continue
                    if not 0 <= amount < _MAX_AMOUNT:
                        break
                    rid = self.resources.get(name)
                    col = self.slots[self.resource_column(name) if rid is None else rid]
                    if col < 0:         # a sparse resource: no vector, this pod moves one by one
                        break
                    cells.append((col, amount))
                else:
                    k = vecs.index[key] = len(vecs.sparse)
                    vecs.sparse.append((cells, pod.non_zero_cpu, pod.non_zero_memory))
        vecs.by_pod[id(pod)] = (pod, k)
        return k

    def save_rows(self, rows: Sequence[int]) -> SavedRows:
        """What ``add_pod`` changes on ``rows``, for ``restore_rows`` (a what-if's cheap undo): the
        columns gathered once, and each row's pods, ports, generation, saturated totals and sparse
        requested amounts."""
        at = np.array(rows, np.int64)
        rest = []
        sparse = self.sparse
        for row in rows:
            i = self.infos[row]
            assert i is not None
            rest.append((dict(i.pods), {k: list(v) for k, v in i.ports.items()} if i.ports else {},
                         i.generation, dict(i.over) if i.over else {},
                         {rid: sparse[rid].requested[row] for rid in i.sparse} if i.sparse else {}))
        return SavedRows(at, self.requested[at], self.pod_count[at], self.nz_cpu[at], self.nz_mem[at], rest)

    def restore_rows(self, saved: SavedRows) -> None:
        """Put back every row ``save_rows`` kept."""
        at = saved.rows
        self.mutations += len(at)
        self._amount_journal.extend(at.tolist())
        self.pod_epochs[at] += 1
        width = saved.requested.shape[1]
        self.requested[at, width:] = 0          # columns added meanwhile were 0 on these rows before
        self.requested[at, :width] = saved.requested
        self.pod_count[at], self.nz_cpu[at], self.nz_mem[at] = saved.pod_count, saved.nz_cpu, saved.nz_mem
        for row, (pods, ports, generation, over, sparse) in zip(at.tolist(), saved.rest, strict=True):
            info = self.infos[row]
            assert info is not None
            info.pods, info.ports, info.generation, info.over = pods, ports, generation, over
            if info.sparse or sparse:
                self._restore_sparse(info, sparse)

    def _restore_sparse(self, info: NodeInfo, saved: dict[int, int]) -> None:
        row = info.row
        for rid in info.sparse:
            self.sparse[rid].requested.pop(row, None)
        info.sparse = set()
        for rid, value in saved.items():
            slot = self.slots[rid]
            if slot >= 0:       # promoted meanwhile: restore_rows zeroed its column on this row
                self.requested[row, slot] = value
            else:
                self.sparse[rid].requested[row] = value
                info.sparse.add(rid)

    # --- reads -----------------------------------------------------------------------------
    def info(self, row: int) -> NodeInfo:
        info = self.infos[row]
        assert info is not None
        return info

    def exact_requested(self, row: int, col: int) -> int:
        """The exact total of resource id ``col`` (or ``NZ_CPU`` / ``NZ_MEM``) on ``row``."""
        info = self.infos[row]
        if info is not None and col in info.over:
            return info.over[col]
        if col == NZ_CPU:
            return self.nz_cpu.item(row)
        if col == NZ_MEM:
            return self.nz_mem.item(row)
        slot = self.slots[col]
        if slot < 0:
            return self.sparse[col].requested.get(row, 0)
        return self.requested.item(row, slot)

    def exact_alloc(self, row: int, resource: str) -> int:
        """The node's exact allocatable ``resource`` (the ``alloc`` column is clamped to [0, CAP])."""
        info = self.infos[row]
        return 0 if info is None else max(0, info.node.allocatable.get(resource, 0))

    def valid_rows(self) -> IntArray:
        return np.flatnonzero(self.valid[: self.size]).astype(np.int64)
