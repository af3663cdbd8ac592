"""``AttachCounts``: NodeVolumeLimits' per-node state as columns, so its Filter is a few vector
comparisons over the candidate rows instead of a Python pass over every candidate node's pods.

Two kinds of columns, one cell per node row of the cache's ``NodeTable``:

* **Limits**, from the node's CSINode, parsed once per change of the CSINode or of the row's node
  (``NodeTable.row_changes`` and ``VolumeStore.changes`` say which rows): ``has_csi[row]`` (the node
  has a CSINode: in-tree disks migrate to CSI there), ``any_limit[row]`` (some driver publishes
  ``allocatable.count``), and per driver ``limit[driver][row]`` (-1: no limit) and
  ``listed[driver][row]`` (the CSINode lists the driver: VolumeLimitScaling's check).
* **Attached volumes**: per driver ``count[driver][row]``, the distinct ``<driver>/<handle>``
  volumes the row's pods use; ``holding(volume, rows)``, the rows using a volume (so "the new pod's volume
  is already attached there, do not count it twice" is a lookup per new volume, once per cycle);
  and each row's volumes, or the error that computing them raised.

**Keeping them current.** A row's attached volumes depend on its pods and on the storage objects
those pods' claims lead to (claim, PV, class), read through the plugin's ``volumes_of``. The node
table bumps ``pod_epochs[row]`` on every change to a row's pods (a what-if's moves and its restore
included, and never put back), so a row is recounted when its epoch is not the one it was counted
at: lazily, only when it is a candidate that needs its counts, which in a steady stream of pods is
the one row the previous pod went to. A change to a storage object marks stale the rows whose pods
read it (``deps``, recorded when a row is counted) and drops those pods' memoised volumes. Counting
in the cache itself, on each placement, was the other way: it would have to know how the plugin
names a volume (its random prefix for unbound claims, in-tree translation where the node has a
CSINode) and recount on every storage change anyway.

The cells are kept for every row the table may hold (``grow`` follows its capacity). Memory is one
int64 and a few bools per row, plus a column per CSI driver seen: a handful.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import numpy as np
import numpy.typing as npt

from scheduler.cache.node_table import NodeTable
from scheduler.cache.volumes import ObjectKey, VolumeStore
from scheduler.model import Pod

__all__ = ["AttachCounts", "Volumes"]

# volume unique name ("<driver>/<handle>") -> driver
Volumes = dict[str, str]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
# Pods whose volumes (or rows) are memoised, or (object, pod) dependency entries, before everything
# starts over: deleted pods' entries go then.
_MEMO_LIMIT = 100_000


class AttachCounts:
    """Per-row limits and attached-volume counts per CSI driver for one node table and one volume
    store (module doc); ``sync`` then ``recount`` before reading them."""

    def __init__(self, volumes_of: Callable[[Pod, bool], Volumes], deps_of: Callable[[Pod], Iterable[ObjectKey]],
                 failure: type[Exception]) -> None:
        # volumes_of(pod, has_csi): an existing pod's volumes that count (raises ``failure``);
        # deps_of(pod): the storage objects that reading reads.
        self._volumes_of = volumes_of
        self._deps_of = deps_of
        self._failure = failure
        self._table: NodeTable | None = None
        self._store: VolumeStore | None = None
        self._reset_all(0)

    def _reset_all(self, capacity: int) -> None:
        self._capacity = capacity
        self._row_pos = 0
        self._store_version = -1
        self.has_csi = np.zeros(capacity, np.bool_)
        self.any_limit = np.zeros(capacity, np.bool_)
        self.limit: dict[str, IntArray] = {}
        self.listed: dict[str, BoolArray] = {}
        self._reset_counts()

    def _reset_counts(self) -> None:
        self.count: dict[str, IntArray] = {}
        # volume -> the row holding it, or the rows once there are several (one, nearly always:
        # a set per volume was most of this class's memory)
        self._holders: dict[str, int | set[int]] = {}
        self.vols: list[Volumes | Exception | None] = [None] * self._capacity
        self.errors: set[int] = set()          # the rows whose ``vols`` is an error
        self._seen = np.full(self._capacity, -1, np.int64)
        self._memo: dict[tuple[str, bool], Volumes] = {}
        # storage object -> the uid of the pod, or the uids of the pods, whose volumes read it; and
        # each such pod's row when it was last counted (a pod that moved since is on a row that was
        # touched, so stale anyway)
        self._deps: dict[ObjectKey, str | set[str]] = {}
        self._dep_entries = 0
        self._row_of_pod: dict[str, int] = {}

    # --- keeping current ---------------------------------------------------------------------
    def sync(self, table: NodeTable, store: VolumeStore) -> None:
        """Catch up with the rows whose node changed and the storage objects that changed."""
        if table is not self._table or store is not self._store:
            self._table, self._store = table, store
            self._reset_all(table.capacity)
        if table.capacity != self._capacity:
            self._grow(table.capacity)
        rows, self._row_pos = table.row_changes(self._row_pos)
        if rows is None:
            self._refresh_limits(range(table.size))
        elif rows:
            self._refresh_limits(set(rows))
        if store.version != self._store_version:
            changes, self._store_version = store.changes(self._store_version)
            if changes is None:
                self._reset_counts()
                self._refresh_limits(range(table.size))
            else:
                self._apply(changes, table)

    def _apply(self, changes: list[ObjectKey], table: NodeTable) -> None:
        csi_rows: set[int] = set()
        for kind, key in changes:
            if kind == "CSINode":
                row = table.row_of.get(key[1])
                if row is not None:
                    csi_rows.add(row)
                continue
            held = self._deps.pop((kind, key), None)
            if held is None:
                continue
            for uid in (held,) if isinstance(held, str) else held:
                self._dep_entries -= 1
                row = self._row_of_pod.get(uid)
                if row is not None and row < self._capacity:
                    self._seen[row] = -1
                self._memo.pop((uid, True), None)
                self._memo.pop((uid, False), None)
        if csi_rows:
            self._refresh_limits(csi_rows)

    def _grow(self, capacity: int) -> None:
        old = self._capacity

        def grown(a: npt.NDArray[np.generic], fill: int) -> npt.NDArray[np.generic]:
            out = np.full(capacity, fill, a.dtype)
            out[:old] = a
            return out

        self.has_csi = grown(self.has_csi, 0)  # type: ignore[assignment]
        self.any_limit = grown(self.any_limit, 0)  # type: ignore[assignment]
        self._seen = grown(self._seen, -1)  # type: ignore[assignment]
        for d, col in self.limit.items():
            self.limit[d] = grown(col, -1)  # type: ignore[assignment]
        for d, listed in self.listed.items():
            self.listed[d] = grown(listed, 0)  # type: ignore[assignment]
        for d, count in self.count.items():
            self.count[d] = grown(count, 0)  # type: ignore[assignment]
        self.vols.extend([None] * (capacity - old))
        self._capacity = capacity

    def _refresh_limits(self, rows: Iterable[int]) -> None:
        """Re-read the CSINode of each row's node into the limit columns; a row whose ``has_csi``
        flips is recounted (its in-tree disks translate, or stop translating)."""
        assert self._table is not None and self._store is not None
        infos, store = self._table.infos, self._store
        for row in rows:
            info = infos[row]
            csi = store.csi_node(info.name) if info is not None else None
            if bool(self.has_csi[row]) != (csi is not None):
                self.has_csi[row] = csi is not None
                self._seen[row] = -1
            for limit in self.limit.values():
                limit[row] = -1
            for listed in self.listed.values():
                listed[row] = False
            any_limit = False
            if csi is not None:
                for name, driver in csi.drivers.items():
                    if name not in self.listed:
                        self.listed[name] = np.zeros(self._capacity, np.bool_)
                    self.listed[name][row] = True
                    if driver.count is not None:
                        if name not in self.limit:
                            self.limit[name] = np.full(self._capacity, -1, np.int64)
                        self.limit[name][row] = driver.count
                        any_limit = True
            self.any_limit[row] = any_limit

    def holding(self, volume: str, at: IntArray) -> BoolArray | None:
        """Which of rows ``at`` (counted) hold ``volume``; ``None`` when no row does."""
        held = self._holders.get(volume)
        if held is None:
            return None
        if isinstance(held, int):
            out: BoolArray = at == held
            return out
        return np.isin(at, np.fromiter(held, np.int64, len(held)))

    def recount(self, rows: IntArray) -> None:
        """Count again each of ``rows`` whose pods changed since it was counted."""
        assert self._table is not None
        stale = rows[self._seen[rows] != self._table.pod_epochs[rows]]
        if not stale.size:
            return
        if max(len(self._memo), len(self._row_of_pod), self._dep_entries) > _MEMO_LIMIT:
            self._reset_counts()
            stale = rows
        for row in stale.tolist():
            self._recount_row(row)

    def _recount_row(self, row: int) -> None:
        assert self._table is not None
        old = self.vols[row]
        if isinstance(old, dict):
            holders = self._holders
            for unique, driver in old.items():
                self.count[driver][row] = 0
                held = holders.get(unique)
                if held == row:
                    del holders[unique]
                elif isinstance(held, set):
                    held.discard(row)
                    if len(held) == 1:
                        holders[unique] = next(iter(held))
        self.errors.discard(row)
        info = self._table.infos[row]
        has_csi = bool(self.has_csi[row])
        attached: Volumes = {}
        self._seen[row] = self._table.pod_epochs[row]
        self.vols[row] = attached
        if info is None:
            return
        for pod in info.pods.values():
            if not pod.volumes:
                continue
            uid = pod.uid
            self._row_of_pod[uid] = row
            key = (uid, has_csi)
            got = self._memo.get(key)
            if got is None:
                # Its dependencies are recorded with its volumes: a change to one drops both.
                self._depend(uid, pod)
                try:
                    got = self._memo[key] = self._volumes_of(pod, has_csi)
                except self._failure as e:
                    self.vols[row] = e      # counts stay 0: a Filter reading this row fails with e
                    self.errors.add(row)
                    return
            attached.update(got)
        for unique, driver in attached.items():
            col = self.count.get(driver)
            if col is None:
                col = self.count[driver] = np.zeros(self._capacity, np.int64)
            col[row] += 1
            held = self._holders.get(unique)
            if held is None:
                self._holders[unique] = row
            elif isinstance(held, int):
                self._holders[unique] = {held, row}
            else:
                held.add(row)

    def _depend(self, uid: str, pod: Pod) -> None:
        """Record that pod ``uid``'s volumes read the storage objects ``deps_of`` names."""
        deps = self._deps
        for dep in self._deps_of(pod):
            held_by = deps.get(dep)
            if held_by is None:
                deps[dep] = uid
            elif held_by == uid:
                continue
            elif isinstance(held_by, str):
                deps[dep] = {held_by, uid}
            elif uid not in held_by:
                held_by.add(uid)
            else:
                continue
            self._dep_entries += 1
