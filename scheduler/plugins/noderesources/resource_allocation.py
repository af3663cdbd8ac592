"""What NodeResourcesFit's scoring and NodeResourcesBalancedAllocation share (upstream's
``resource_allocation.go``): which requests count, and each node's allocatable and requested
amounts of a resource, read from the node table (``alloc_of`` / ``requested_of``: a dense column,
or the sparse side table of a rare resource).

Cpu, memory and ephemeral-storage always take part; a scalar resource (extended, ``hugepages-*``,
``*kubernetes.io/*``, ``attachable-volumes-*``) only when the pod requests it, and a node without a
resource leaves it out of that node's average.

**Extended resources backed by DRA** (DRAExtendedResource, ``calculateResourceAllocatableRequest``):
where a node's allocatable of a scored extended resource the pod requests is 0 and a DeviceClass
backs it, Fit's strategies and BalancedAllocation read as its allocatable the class's devices on
the node and as its requested amount those a claim holds (written, assumed or in flight) plus the
pod's request (``DraScoring``; which devices count is ``scheduler.dra.capacity``). A node with none
of those devices, or where the class's selector fails, leaves the resource out.

Everything is integer numpy arithmetic on the node table's columns, matching Go's int64 semantics:
where all operands are non-negative floor division equals truncation; where they are not (a
decreasing shape segment) ``helpers.go_div`` truncates as Go does.

**No overflow.** Upstream computes ``(capacity - requested) * MaxNodeScore / capacity`` on int64
(``least_allocated.go``, ``most_allocated.go``, ``requested_to_capacity_ratio.go``) and
``requested + podRequest`` in ``resource_allocation.go``, which overflow for absurd quantities. Here
the columns are capped (``scheduler.cache.node_table``): ``requested + request`` saturates at CAP, and
``alloc - requested`` stays within int64. ``x * 100`` is safe while allocatable is at most
``SCORE_SAFE``; the rare rows above it (``table.big_rows``) are recomputed with exact Python ints
from the exact totals, as are Fit's filter verdicts on them. So a pod that asks more than any node
has fits nowhere (``Insufficient cpu``), and every score lies in [0, 100].
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.cache import CAP, NZ_CPU, NZ_MEM, Snapshot
from scheduler.cache.dra import DraStore
from scheduler.cache.node_table import NodeTable
from scheduler.dra.capacity import ClassDevices, NodeDevices
from scheduler.dra.extended import is_dra_extended_resource_name
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import Rows, Scores
from scheduler.framework.signature import RESOURCES_SIGNER_NAME, SignFragment, unsignable
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod
from scheduler.model.dra import DeviceClass
from scheduler.model.selectors import label_key_errors
from scheduler.plugins.helpers import derived, row_run, selector_cache

# Below this allocatable, ``x * 100 / alloc`` (0 <= x <= alloc, integers) in float64 floors to
# exactly the int64 quotient: the product and ``alloc`` are exact doubles (< 2**53), and a quotient
# just under an integer k lies at least 1/alloc below it, more than the rounding error k * 2**-53
# when alloc * k < 2**53 (k <= 100).
FLOAT_EXACT_ALLOC = 2**53 // 101
# CycleState key of the allocatable columns gathered for this cycle's scored rows (``allocatable_everywhere``).
_GATHERED = "noderesources/allocatable"
# CycleState key of the columns Fit's Filter gathered for a batch in which every row passed.
_FILTERED = "noderesources/filtered"
# framework.Resource's own fields; "pods" is its AllowedPodNumber, which no request is checked against.
_NATIVE = ("cpu", "memory", "ephemeral-storage")
_NATIVE_ORDER = {name: i for i, name in enumerate(_NATIVE)}


@functools.lru_cache(maxsize=4096)
def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: a domain-qualified name outside ``kubernetes.io/``, not
    ``requests.``-prefixed, and a qualified name once ``requests.`` is put in front (quota's form).
    Only these can be ignored (``ignoredResources``, ``ignoredResourceGroups``)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not label_key_errors("requests." + name)


@functools.lru_cache(maxsize=4096)
def is_scalar_resource_name(name: str) -> bool:
    """``schedutil.IsScalarResourceName``: extended, ``hugepages-*``, ``*kubernetes.io/*`` (prefixed
    native) or ``attachable-volumes-*``. Besides cpu, memory and ephemeral-storage these are the only
    requests upstream's ``framework.Resource`` keeps, so the only ones Filter checks and Score reads;
    a scalar the pod does not request is left out of scoring."""
    return (is_extended_resource_name(name) or name.startswith(("hugepages-", "attachable-volumes-"))
            or "kubernetes.io/" in name)


def resources_signer(pod: Pod) -> tuple[object, ...]:
    """The pod's part of the Fit and BalancedAllocation signature (upstream's ``ResourcesSigner``
    over ``computePodResourceRequest``): every request, and the non-zero cpu and memory scoring uses."""
    return (tuple(sorted(pod.requests.items())), pod.non_zero_cpu, pod.non_zero_memory)


def dra_backed(dra: DraStore | None, pod: Pod) -> bool:
    """Whether a DeviceClass backs one of the extended resources ``pod`` asks for (the request goes
    to DynamicResources, DRAExtendedResource): such a pod depends on the DRA objects, not only on
    itself and the node, so it has no signature (upstream makes every pod unsignable while the gate
    is on; here only the pods it concerns)."""
    return dra is not None and any(_class_backs(dra, name) for name in pod.requests)


def _class_backs(dra: DraStore, name: str) -> bool:
    """Whether a DeviceClass backs the extended resource ``name`` (``GetDeviceClass``; the ``/``
    test first, so cpu and memory cost one comparison)."""
    return "/" in name and is_dra_extended_resource_name(name) and dra.extended_resource_class(name) is not None


def sign_requests(dra: DraStore | None, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
    """Fit's and BalancedAllocation's ``SignPod``: the requests, or no signature for a pod that
    asks for a DRA-backed extended resource (``dra_backed``)."""
    if dra_backed(dra, pod):
        return unsignable("signature disabled when dra extended resources are requested")
    return ((RESOURCES_SIGNER_NAME, resources_signer(pod)),), SUCCESS


def fit_requests(pod: Pod) -> dict[str, int]:
    """Upstream's ``computePodResourceRequest`` (``framework.Resource.SetMaxResource`` over
    ``resource.PodRequests``): the pod's requests for cpu, memory, ephemeral-storage and scalar
    resources, zeros included."""
    return {name: amount for name, amount in pod.requests.items() if name in _NATIVE or is_scalar_resource_name(name)}


@dataclass(slots=True)
class _ClassRows:
    """One class's devices over the node table's rows: the count and the devices per row, the rows
    each pool's devices are on, and the allocated count per row, kept current from the store's
    journal position ``seen`` and the table's row journal position ``rows_seen``."""

    table: NodeTable
    devices: ClassDevices
    counts: npt.NDArray[np.int64]
    per_row: list[NodeDevices | None]
    rows_of_pool: dict[tuple[str, str], set[int]]
    allocated: npt.NDArray[np.int64]
    rows_seen: int
    seen: int = -1


class DraScoring:
    """What NodeResourcesFit's and BalancedAllocation's scoring reads of an extended resource a
    DeviceClass backs, on a node that does not advertise it (upstream's
    ``calculateResourceAllocatableRequest`` with DRAExtendedResource on): the class's devices on
    the node as its allocatable, those a claim holds as its requested amount (the pod's request is
    added by the caller).

    Upstream recounts every device of every slice for each node it scores. Here the devices per
    node come from ``scheduler.dra.capacity``, kept per class and per row of the node table. What
    they depend on decides what is redone: a change to the slices or classes (``slices_version``)
    rebuilds every row (``rebuilds`` counts those); a node added, updated or removed redoes only its
    row (``NodeTable.row_changes``; ``ClassDevices.on_node`` answers from its cache unless a slice
    selects nodes by label and the labels changed), so the node updates a real cluster's kubelets
    send all the time cost one lookup each, not a rebuild. The allocated count per row is kept the
    same way: a cycle recounts only the rows of the pools whose allocations changed since the last
    one (``DraStore.pool_changes``: a pod's Reserve and PreBind touch one pool), so a pod's scoring
    is a vector read, not a set intersection per candidate node."""

    def __init__(self, dra: DraStore) -> None:
        self._dra = dra
        self._cache = selector_cache(dra)
        self._version: int | None = None
        self._classes: dict[str, ClassDevices] = {}
        self._rows: dict[str, _ClassRows] = {}
        # Full rebuilds of a class's rows (every row's devices found again): what tests count.
        self.rebuilds = 0

    def backing(self, resource: str, pod_request: int) -> DeviceClass | None:
        """The class whose devices stand for ``resource`` where a node lacks it: for a resource
        the pod requests and whose name is a DRA extended resource's (``getDRAPreScoredParams``,
        then ``GetDeviceClass``); ``None`` for anything else."""
        if pod_request <= 0 or not is_scalar_resource_name(resource) or not is_dra_extended_resource_name(resource):
            return None
        return self._dra.extended_resource_class(resource)

    def _class_rows(self, cls: DeviceClass, table: NodeTable) -> _ClassRows:
        if self._version != self._dra.slices_version:
            self._version = self._dra.slices_version
            self._cache.reset(self._version)
            self._classes.clear()
            self._rows.clear()
        devices = self._classes.get(cls.name)
        if devices is None or devices.cls is not cls:
            devices = self._classes[cls.name] = ClassDevices(cls, self._dra.slices(), self._cache)
        got = self._rows.get(cls.name)
        if got is not None and got.table is table and got.devices is devices and len(got.counts) == table.capacity:
            changed, got.rows_seen = table.row_changes(got.rows_seen)
            if changed is not None:
                for row in set(changed):
                    self._place(got, row)
                return got
        self.rebuilds += 1
        _, end = table.row_changes(0)
        rows = _ClassRows(table, devices, np.zeros(table.capacity, np.int64), [None] * table.capacity, {},
                          np.zeros(table.capacity, np.int64), end)
        for row in np.flatnonzero(table.valid[: table.size]).tolist():
            self._place(rows, row, recount=False)
        self._rows[cls.name] = rows
        return rows

    def _place(self, rows: _ClassRows, row: int, *, recount: bool = True) -> None:
        """Find the class's devices on the node ``row`` holds now (none if it holds none), and, with
        ``recount``, their allocated count (a new build counts every row at its first use)."""
        old = rows.per_row[row]
        if old is not None:
            for pool, _ in old.pools:
                rows.rows_of_pool[pool].discard(row)
        table = rows.table
        info = table.infos[row]
        nd = rows.devices.on_node(info.node.name, info.node.labels) if info is not None and table.valid[row] else None
        if nd is None or not nd.count:
            rows.counts[row] = rows.allocated[row] = 0
            rows.per_row[row] = None
            return
        rows.counts[row] = nd.count
        rows.per_row[row] = nd
        for pool, _ in nd.pools:
            rows.rows_of_pool.setdefault(pool, set()).add(row)
        if recount:
            self._recount(rows, row)

    def _recount(self, rows: _ClassRows, row: int) -> None:
        nd = rows.per_row[row]
        if nd is not None:
            among = self._dra.allocated_among
            rows.allocated[row] = sum(among(driver, pool, names) for (driver, pool), names in nd.pools)

    def totals(self, cls: DeviceClass, table: NodeTable, rows: Rows, wanted: npt.NDArray[np.bool_]
               ) -> tuple[Scores, Scores]:
        """(devices, allocated) per position of ``rows``, computed where ``wanted`` (0, 0 elsewhere,
        and where the node has none, or a selector failed on one of them)."""
        cr = self._class_rows(cls, table)
        changed, cr.seen = self._dra.pool_changes(cr.seen)
        if changed is None:     # first use, or too far behind the journal: count every row
            for row in np.flatnonzero(cr.counts).tolist():
                self._recount(cr, row)
        else:
            for pool in set(changed):
                for row in cr.rows_of_pool.get(pool, ()):
                    self._recount(cr, row)
        count = np.where(wanted, cr.counts[rows], 0)
        return count, np.where(count > 0, cr.allocated[rows], 0)


_SCORINGS: weakref.WeakKeyDictionary[DraStore, DraScoring] = weakref.WeakKeyDictionary()


def dra_scoring(dra: DraStore | None) -> DraScoring | None:
    """The one ``DraScoring`` of ``dra``: Fit and BalancedAllocation, and every profile's instances
    of them, share its per-class device rows instead of each building and updating its own."""
    if dra is None:
        return None
    got = _SCORINGS.get(dra)
    if got is None:
        got = _SCORINGS[dra] = DraScoring(dra)
    return got


def _with_dra(dra: DraScoring | None, cls: DeviceClass | None, snapshot: Snapshot, rows: Rows,
              pair: tuple[Scores, Scores] | None, pod_request: int
              ) -> tuple[tuple[Scores, Scores] | None, npt.NDArray[np.bool_] | None]:
    """``pair`` (allocatable, requested-with-the-pod per row) with the DRA-backed amounts where the
    node's allocatable is 0 and the class has devices there; and where that was done (``None``:
    nowhere). A resource no node advertises has no column: its ``pair`` is ``None``, read as 0."""
    if dra is None or cls is None:
        return pair, None
    alloc, requested = pair if pair is not None else (np.zeros(len(rows), np.int64), np.zeros(len(rows), np.int64))
    need = alloc == 0
    if not need.any():
        return pair, None
    count, allocated = dra.totals(cls, snapshot.table, rows, need)
    use = count > 0
    if not use.any():
        return pair, None
    return (np.where(use, count, alloc), np.where(use, allocated + min(pod_request, CAP), requested)), use


def _scored(resource: str, pod_request: int) -> bool:
    """``calculateResourceAllocatableRequest``'s bypass: cpu, memory and ephemeral-storage always
    take part; a scalar resource only when the pod requests it; anything else (``pods``, names that
    are not resources upstream keeps) never. A node without the resource is left out per node."""
    if resource in _NATIVE:
        return True
    return pod_request > 0 and is_scalar_resource_name(resource)


def _big_positions(snapshot: Snapshot, rows: Rows) -> list[tuple[int, int]]:
    """(position in ``rows``, row) of the rows whose allocatable is beyond ``SCORE_SAFE``: the
    capped columns are not exact there. Empty, at the cost of one set test, in any real cluster."""
    big = snapshot.table.big_rows
    if not big:
        return []
    pos = np.flatnonzero(np.isin(rows, np.fromiter(big, np.int64, len(big))))
    return [(p, int(rows[p])) for p in pos.tolist()]


def _exact_positions(big: list[tuple[int, int]], snapshot: Snapshot, resource: str,
                     by_dra: npt.NDArray[np.bool_] | None) -> list[tuple[int, int]]:
    """The ``big`` rows a resource's exact path recomputes: none for a resource without a column
    (its allocatable is 0 everywhere, as read), and not those whose amounts came from DRA (device
    counts are small and exact)."""
    if not big or resource not in snapshot.table.resources:
        return []
    if by_dra is None:
        return big
    return [(p, row) for p, row in big if not by_dra[p]]


def _pod_request(pod: Pod, resource: str, *, non_zero: bool) -> int:
    if non_zero and resource == "cpu":
        return pod.non_zero_cpu
    if non_zero and resource == "memory":
        return pod.non_zero_memory
    return pod.requests.get(resource, 0)


def _alloc_requested(snapshot: Snapshot, rows: Rows, resource: str, pod_request: int, *, non_zero: bool
                     ) -> tuple[Scores, Scores] | None:
    """Allocatable and requested-with-the-pod per row, from the capped columns: the sum saturates at
    CAP (both terms are at most CAP, and ``min(requested, CAP - r) + r`` cannot overflow)."""
    t = snapshot.table
    col = t.resources.get(resource)
    if col is None:
        return None
    slot = t.slots[col]         # a dense column, read inline (the common case), or the side table
    # ``a[:, slot][rows]`` (a strided view, then a 1-D gather) is twice as fast as ``a[rows, slot]``.
    alloc = t.alloc[:, slot][rows] if slot >= 0 else t.alloc_of(rows, col)
    if non_zero and resource == "cpu":
        requested = t.nz_cpu[rows]
    elif non_zero and resource == "memory":
        requested = t.nz_mem[rows]
    else:
        requested = t.requested[:, slot][rows] if slot >= 0 else t.requested_of(rows, col)
    r = min(pod_request, CAP)
    return alloc, np.minimum(requested, CAP - r) + r


def _exact_alloc_requested(snapshot: Snapshot, row: int, resource: str, pod_request: int, *, non_zero: bool
                           ) -> tuple[int, int]:
    """``_alloc_requested`` for one row, exactly (Python ints): for the rows in ``_big_positions``."""
    t = snapshot.table
    if non_zero and resource == "cpu":
        col = NZ_CPU
    elif non_zero and resource == "memory":
        col = NZ_MEM
    else:
        col = t.resources[resource]
    return t.exact_alloc(row, resource), t.exact_requested(row, col) + pod_request


def _column_in_float_range(table: NodeTable, slot: int) -> bool:
    col = table.alloc[: table.size, slot]
    return bool((((col > 0) & (col < FLOAT_EXACT_ALLOC)) | ~table.valid[: table.size]).all())


def allocatable_everywhere(state: CycleState, snapshot: Snapshot, rows: Rows, resource: str,
                           pod_request: int) -> tuple[Scores, int] | None:
    """The fast path's read of ``resource`` (Fit's LeastAllocated, BalancedAllocation): its
    allocatable on ``rows`` and its dense column, when every live node has it, below
    ``FLOAT_EXACT_ALLOC``, and the request is below CAP; None otherwise (the general path decides).

    That every node has it in range changes only with the nodes (cached per table version, one
    pass over the table after a node change), so a cycle spends no pass on it. Fit and
    BalancedAllocation score the same rows in one cycle: the column is gathered once for both and
    kept in the CycleState. The array is shared: read it, never write it."""
    t = snapshot.table
    col = t.resources.get(resource)
    if col is None or not 0 <= pod_request < CAP:
        return None
    slot = t.slots[col]
    if slot < 0 or not derived(t, ("noderesources/float-range", slot), lambda: _column_in_float_range(t, slot)):
        return None
    got = state.get(_GATHERED)
    if got is None or got[0] is not rows or got[1] is not t or got[2] != t.version:
        got = (rows, t, t.version, {})
        state.write(_GATHERED, got)
    alloc: Scores | None = got[3].get(slot)
    if alloc is None:
        filtered = filtered_columns(state, snapshot, rows, slot)
        if filtered is not None:
            alloc = got[3][slot] = filtered[0]
        else:
            run = row_run(state, rows)
            alloc = got[3][slot] = t.alloc[:, slot][rows if run is None else run]
    return alloc, slot


def remember_filtered(state: CycleState, snapshot: Snapshot, rows: Rows,
                      columns: dict[int, tuple[Scores, Scores]]) -> None:
    """Fit's Filter keeps the (allocatable, requested) columns it gathered for a batch in which
    every row passed, by dense column: the rows Score then reads are usually that batch's first
    ones (``filtered_columns``), and need no second gather."""
    t = snapshot.table
    state.write(_FILTERED, _Filtered(rows, t, t.mutations, columns))


@dataclass(slots=True)
class _Filtered:
    """What ``remember_filtered`` keeps; ``prefix``: the last rows found to be a prefix of
    ``batch`` (each Score plugin asks for the same rows: the test is made once)."""

    batch: Rows
    table: NodeTable
    mutations: int
    columns: dict[int, tuple[Scores, Scores]]
    prefix: Rows | None = None


def filtered_columns(state: CycleState, snapshot: Snapshot, rows: Rows, slot: int) -> tuple[Scores, Scores] | None:
    """(allocatable, requested) of dense column ``slot`` on ``rows`` as Fit's Filter gathered them,
    when ``rows`` is a prefix of the batch it filtered: the same memory (the search hands back
    ``batch[:k]`` when no row failed), and nothing placed or moved since. None otherwise. The
    arrays are shared: read them, never write them."""
    got = state.get(_FILTERED)
    if not isinstance(got, _Filtered):
        return None
    t = snapshot.table
    pair = got.columns.get(slot)
    if pair is None or got.table is not t or got.mutations != t.mutations:
        return None
    if got.prefix is not rows:
        batch = got.batch
        if (len(rows) > len(batch) or rows.strides != batch.strides or rows.dtype != batch.dtype
                or rows.__array_interface__["data"][0] != batch.__array_interface__["data"][0]):
            return None
        got.prefix = rows
    n = len(rows)
    return pair[0][:n], pair[1][:n]
