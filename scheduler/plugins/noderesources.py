"""NodeResourcesFit and NodeResourcesBalancedAllocation.

Fit's Filter is upstream's ``fitsRequest``: ``Too many pods`` when the node already holds its
allowed pod count; ``Insufficient <resource>`` for each requested resource whose free amount
(allocatable - requested) is smaller than the request. The status is Unschedulable, or
UnschedulableAndUnresolvable when the request exceeds the node's *total* allocatable (preemption
cannot help there). The requests checked are upstream's ``framework.Resource``: cpu, memory,
ephemeral-storage and the scalar resources (extended, ``hugepages-*``, ``*kubernetes.io/*``,
``attachable-volumes-*``), a zero request never failing. Resources in ``ignoredResources`` or an
``ignoredResourceGroups`` prefix are skipped (extended resources only, as upstream). An extended
resource a DeviceClass backs (its ``extendedResourceName``, or ``deviceclass.resource.kubernetes.io/
<class>``) is not checked on a node whose allocatable lacks it: DynamicResources provides it there
through a claim (upstream's ``ShouldDelegateResourceToDRA``, DRAExtendedResource, GA in 1.37).

Queueing hints (EnqueueExtensions), as upstream's with hints, in-place resize and
DRAExtendedResource on: a DeviceClass added or updated to back an extended resource the pod asks
for (``is_schedulable_after_device_class_event``, with the DRA store only); a pod deleted
from a node (or a nominated one) or an assigned pod scaling down a request the pending pod has
(``is_schedulable_after_pod_event``); a node that the pod would fit empty, when added or when an
allocatable amount it asks for grew (``is_schedulable_after_node_change``).

Scoring strategies (``scoringStrategy.type``), all over the non-zero requests for cpu and memory
(a container without a request counts as 100m / 200MiB), per resource, then weight-averaged; a
scalar resource takes part only when the pod requests it, and a node without a resource leaves it
out of that node's average:

* LeastAllocated: ``(allocatable - requested) * 100 / allocatable``
* MostAllocated: ``requested * 100 / allocatable`` (requested capped at allocatable)
* RequestedToCapacityRatio: a broken-linear ``shape`` over utilisation (interpolated with Go's
  truncating ``/``), scores ×10, averaged with rounding; a resource the node has none of, or whose
  shaped score is 0, counts in neither the sum nor the weight.

BalancedAllocation scores ``(1 - std(requested/allocatable)) * 100`` over its resources, using
actual requests; a pod that requests none of them is skipped (best-effort pods don't unbalance).

**Extended resources backed by DRA** (DRAExtendedResource, upstream's ``resource_allocation.go``):
where a node's allocatable of a scored extended resource the pod requests is 0 and a DeviceClass
backs it, both strategies and BalancedAllocation read as its allocatable the class's devices on the
node and as its requested amount those a claim holds (written, assumed or in flight) plus the pod's
request (``DraScoring``; which devices count is ``scheduler.dra.capacity``). A node with none of
those devices, or where the class's selector fails, leaves the resource out as before.

Everything is computed with integer numpy arithmetic on the node table's columns, matching Go's
int64 semantics: where all operands are non-negative floor division equals truncation; where they
are not (a decreasing shape segment) ``helpers.go_div`` truncates as Go does.

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import CAP, NZ_CPU, NZ_MEM, Snapshot
from scheduler.cache.dra import DraStore
from scheduler.cache.node_table import NodeTable
from scheduler.dra.capacity import ClassDevices, NodeDevices
from scheduler.dra.extended import is_dra_extended_resource_name
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    ClusterEvent,
    ClusterEventWithHint,
    FilterVerdict,
    PreFilterResult,
    Rows,
    ScoreExtensions,
    Scores,
)
from scheduler.framework.signature import RESOURCES_SIGNER_NAME, SignFragment, unsignable
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Node, Pod
from scheduler.model.dra import IMPLICIT_EXTENDED_RESOURCE_PREFIX, DeviceClass
from scheduler.model.selectors import label_key_errors
from scheduler.plugins.args import (
    MAX_CUSTOM_PRIORITY_SCORE,
    MAX_UTILIZATION,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
)
from scheduler.plugins.helpers import broken_linear, selector_cache

FIT_NAME = "NodeResourcesFit"
BALANCED_NAME = "NodeResourcesBalancedAllocation"
REASON_TOO_MANY_PODS = "Too many pods"
# Fit's filter packs (too many pods, short per resource) into one int64 per node; a pod asking for
# more resources than that (many extended resources) takes the row-matrix path instead.
_MAX_PACKED = 60
_PREFILTER_KEY = "PreFilter" + FIT_NAME
_PRESCORE_KEY = "PreScore" + FIT_NAME
_SKIP = Status(Code.SKIP)


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


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


@dataclass(frozen=True, slots=True)
class _Request:
    """The pod's requests as (column, amount) pairs, in upstream's reason order; ``dra``: the
    positions of the extended resources a DeviceClass backs (DynamicResources provides them on a
    node that does not advertise them: upstream's ``ShouldDelegateResourceToDRA``)."""

    columns: tuple[tuple[str, int, int], ...]  # (resource, column, amount)
    dra: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class _ScoreState:
    """PreScore's state (upstream's ``preScoreState``): the pod's request per scored resource
    (``calculatePodResourceRequestList``), and per resource the DeviceClass that backs it where
    the pod requests it (its ``draPreScoreState``: the devices stand in for a node's missing
    allocatable; ``None``: not backed, or not requested)."""

    requests: tuple[int, ...]
    classes: tuple[DeviceClass | None, ...]


@dataclass(slots=True)
class _ClassRows:
    """One class's devices over the node table's rows (for one table version): the count and the
    devices per row, the rows each pool's devices are on, and the allocated count per row, kept
    current from the store's journal position ``seen``."""

    counts: npt.NDArray[np.int64]
    per_row: list[NodeDevices | None]
    rows_of_pool: dict[tuple[str, str], list[int]]
    allocated: npt.NDArray[np.int64]
    seen: int = -1


class DraScoring:
    """What NodeResourcesFit's and BalancedAllocation's scoring reads of an extended resource a
    DeviceClass backs, on a node that does not advertise it (upstream's
    ``calculateResourceAllocatableRequest`` with DRAExtendedResource on): the class's devices on
    the node as its allocatable, those a claim holds as its requested amount (the pod's request is
    added by the caller).

    Upstream recounts every device of every slice for each node it scores. Here the devices per
    node come from ``scheduler.dra.capacity``, kept per class and per row of the node table until
    the slices, classes or nodes change (``slices_version``, ``NodeTable.version``), and so is the
    allocated count per row: a cycle recounts only the rows of the pools whose allocations changed
    since the last one (``DraStore.pool_changes``: a pod's Reserve and PreBind touch one pool), so a
    pod's scoring is a vector read, not a set intersection per candidate node."""

    def __init__(self, dra: DraStore) -> None:
        self._dra = dra
        self._cache = selector_cache(dra)
        self._version: int | None = None
        self._classes: dict[str, ClassDevices] = {}
        # class name -> (NodeTable.version, its rows)
        self._rows: dict[str, tuple[int, _ClassRows]] = {}

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
        got = self._rows.get(cls.name)
        if got is not None and got[0] == table.version:
            return got[1]
        devices = self._classes.get(cls.name)
        if devices is None or devices.cls is not cls:
            devices = self._classes[cls.name] = ClassDevices(cls, self._dra.slices(), self._cache)
        rows = _ClassRows(np.zeros(table.capacity, np.int64), [None] * table.capacity, {},
                          np.zeros(table.capacity, np.int64))
        for row in np.flatnonzero(table.valid[: table.size]).tolist():
            node = table.info(row).node
            nd = devices.on_node(node.name, node.labels)
            if nd.count:
                rows.counts[row] = nd.count
                rows.per_row[row] = nd
                for pool, _ in nd.pools:
                    rows.rows_of_pool.setdefault(pool, []).append(row)
        self._rows[cls.name] = (table.version, rows)
        return rows

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


class NodeResourcesFit:
    """Upstream's ``noderesources.Fit``: PreFilter, Filter, PreScore, Score, EnqueueExtensions.

    PreScore computes the pod's request for each scored resource once per cycle (upstream's
    ``calculatePodResourceRequestList``, with the non-zero defaults for cpu and memory) and Score
    reads it; Score computes it itself when called without PreScore (explain, tests)."""

    name = FIT_NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes
    pre_filter_reads_pods = False   # PodReadingPreFilter: its state survives a change of the node's pods

    def __init__(self, args: NodeResourcesFitArgs, dra: DraStore | None = None) -> None:
        self.args = args
        self._dra = dra
        strat = args.scoring_strategy
        self._strategy = strat.type
        self._resources = tuple((r.name, r.weight) for r in strat.resources)
        shape = strat.requested_to_capacity_ratio.shape if strat.requested_to_capacity_ratio else ()
        self._shape = tuple((p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                            for p in shape)
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = tuple(args.ignored_resource_groups)
        self._dra_scoring = dra_scoring(dra)

    @property
    def filter_config(self) -> object:
        """FilterConfigured: Filter reads only the ignored resources; the scoring strategy is Score's."""
        return (self._ignored, self._ignored_groups)

    def _ignored_resource(self, name: str) -> bool:
        # fitsRequest: only extended resources can be ignored (hugepages and kubernetes.io/ ones never).
        if not is_extended_resource_name(name):
            return False
        return name in self._ignored or name.split("/", 1)[0] in self._ignored_groups

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreFilter, Filter and Score read the pod's requests."""
        return sign_requests(self._dra, pod)

    # --- PreFilter / Filter ----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status]:
        # Sidecars need no check here: upstream's "SidecarContainers feature is disabled" rejection
        # cannot happen since the gate went GA (1.33).
        table = snapshot.table
        order = sorted(fit_requests(pod).items(), key=lambda kv: (_NATIVE_ORDER.get(kv[0], 3), kv[0]))
        cols = tuple((name, table.resource_column(name), min(amount, CAP)) for name, amount in order
                     if amount > 0 and not self._ignored_resource(name))
        dra = self._dra
        backed = frozenset(i for i, (name, _, _) in enumerate(cols)
                           if _class_backs(dra, name)) if dra is not None else frozenset()
        state.write(_PREFILTER_KEY, _Request(cols, backed))
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        # PreFilter's state, computed now if it did not run (it always writes one).
        req = state.read_or_compute(_PREFILTER_KEY, _Request, lambda: self.pre_filter(state, pod, snapshot))
        assert req is not None
        t = snapshot.table
        pods_col = t.resources["pods"]
        if len(req.columns) > _MAX_PACKED:
            return self._filter_many(req, pod, snapshot, rows)
        # bit 0: too many pods; bit i+1: resource i insufficient. Unresolvable is tracked aside.
        bits = (t.pod_count[rows] + 1 > t.alloc[rows, pods_col]).astype(np.int64)
        unresolvable = np.zeros(len(rows), np.bool_)
        for i, (_, col, amount) in enumerate(req.columns):
            alloc = t.alloc[rows, col]
            short = amount > alloc - t.requested[rows, col]
            over = amount > alloc
            if i in req.dra:        # a node without it gets it through DRA: DynamicResources' Filter
                short &= alloc > 0
                over &= alloc > 0
            bits |= short.astype(np.int64) << (i + 1)
            unresolvable |= over
        for p, row in _big_positions(snapshot, rows):
            exact, unres = self._exact_short(req, pod, snapshot, row)
            bits[p] = (int(bits[p]) & 1) | sum(int(x) << (i + 1) for i, x in enumerate(exact))
            unresolvable[p] = unres
        failed = bits != 0
        if not failed.any():
            return FilterVerdict(failed)
        key = bits * 2 + unresolvable
        uniq, ids = np.unique(key[failed], return_inverse=True)
        statuses = []
        for k in uniq.tolist():
            b, unres = k >> 1, k & 1
            statuses.append(_fit_status(req, [bool(b >> j & 1) for j in range(len(req.columns) + 1)], bool(unres)))
        full_ids = np.zeros(len(rows), np.int64)
        full_ids[failed] = ids.reshape(-1)
        return FilterVerdict(failed, statuses, full_ids)

    def _exact_short(self, req: _Request, pod: Pod, snapshot: Snapshot, row: int) -> tuple[list[bool], bool]:
        """Per resource, is ``row`` short of it; and is any request above its allocatable: with the
        exact totals, for a row whose allocatable the capped columns do not hold exactly."""
        t = snapshot.table
        short, unres = [], False
        for i, (name, col, _) in enumerate(req.columns):
            amount, alloc = pod.requests[name], t.exact_alloc(row, name)
            delegated = i in req.dra and alloc <= 0
            short.append(not delegated and amount > alloc - t.exact_requested(row, col))
            unres |= not delegated and amount > alloc
        return short, unres

    def _filter_many(self, req: _Request, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        """``filter_nodes`` for a pod requesting more resources than fit one int64 of bits: the
        verdicts are rows of a boolean matrix (column 0 too many pods, i+1 resource i, last unresolvable)."""
        t = snapshot.table
        n = len(req.columns)
        m = np.zeros((len(rows), n + 2), np.bool_)
        m[:, 0] = t.pod_count[rows] + 1 > t.alloc[rows, t.resources["pods"]]
        for i, (_, col, amount) in enumerate(req.columns):
            alloc = t.alloc[rows, col]
            keep = alloc > 0 if i in req.dra else True
            m[:, i + 1] = (amount > alloc - t.requested[rows, col]) & keep
            m[:, n + 1] |= (amount > alloc) & keep
        for p, row in _big_positions(snapshot, rows):
            exact, unres = self._exact_short(req, pod, snapshot, row)
            m[p, 1 : n + 1] = exact
            m[p, n + 1] = unres
        failed = np.asarray(m[:, : n + 1].any(axis=1), np.bool_)
        if not failed.any():
            return FilterVerdict(failed)
        uniq, ids = np.unique(m[failed], axis=0, return_inverse=True)
        statuses = [_fit_status(req, r[: n + 1], r[n + 1]) for r in uniq.tolist()]
        full_ids = np.zeros(len(rows), np.int64)
        full_ids[failed] = ids.reshape(-1)
        return FilterVerdict(failed, statuses, full_ids)

    # --- PreScore / Score ------------------------------------------------------------------
    def _score_requests(self, pod: Pod) -> tuple[int, ...]:
        return tuple(_pod_request(pod, name, non_zero=True) for name, _ in self._resources)

    def _score_state(self, pod: Pod) -> _ScoreState:
        requests = self._score_requests(pod)
        dra = self._dra_scoring
        classes = tuple(dra.backing(name, r) if dra is not None else None
                        for (name, _), r in zip(self._resources, requests, strict=True))
        return _ScoreState(requests, classes)

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Status:
        # Never Skip: the non-zero defaults give every pod a cpu and memory request to score.
        state.write(_PRESCORE_KEY, self._score_state(pod))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        node_score = np.zeros(len(rows), np.int64)
        weight_sum = np.zeros(len(rows), np.int64)
        # The weight of the resources every row has (the usual: cpu and memory allocatable
        # everywhere), kept as one number instead of being added to ``weight_sum`` row by row.
        full_weight = 0
        big = _big_positions(snapshot, rows)
        score_state = state.get(_PRESCORE_KEY)
        if not isinstance(score_state, _ScoreState) or len(score_state.requests) != len(self._resources):
            # Score without PreScore (explain, tests): upstream's Score computes the same state.
            score_state = self._score_state(pod)
        for (name, weight), pod_req, cls in zip(self._resources, score_state.requests, score_state.classes,
                                                strict=True):
            if not _scored(name, pod_req):
                continue
            pair, by_dra = _with_dra(self._dra_scoring, cls, snapshot, rows,
                                     _alloc_requested(snapshot, rows, name, pod_req, non_zero=True), pod_req)
            if pair is None:
                continue
            alloc, requested = pair
            present = alloc > 0
            # alloc <= SCORE_SAFE outside ``big``, so ``x * 100`` with x <= alloc cannot overflow there.
            if self._strategy == "LeastAllocated":
                s = np.where(present & (requested <= alloc),
                             (alloc - requested) * MAX_NODE_SCORE // np.maximum(alloc, 1), 0)
            elif self._strategy == "MostAllocated":
                s = np.where(present, np.minimum(requested, alloc) * MAX_NODE_SCORE // np.maximum(alloc, 1), 0)
            else:
                util = np.where(present & (requested <= alloc),
                                np.minimum(requested, alloc) * MAX_UTILIZATION // np.maximum(alloc, 1),
                                MAX_UTILIZATION)
            for p, row in _exact_positions(big, snapshot, name, by_dra):
                a, r = _exact_alloc_requested(snapshot, row, name, pod_req, non_zero=True)
                present[p] = a > 0
                if self._strategy == "LeastAllocated":
                    s[p] = (a - r) * MAX_NODE_SCORE // a if a > 0 and r <= a else 0
                elif self._strategy == "MostAllocated":
                    s[p] = min(r, a) * MAX_NODE_SCORE // a if a > 0 else 0
                else:
                    util[p] = r * MAX_UTILIZATION // a if a > 0 and r <= a else MAX_UTILIZATION
            if self._strategy == "RequestedToCapacityRatio":
                s = broken_linear(self._shape, util)
                # requested_to_capacity_ratio.go: a resource the node has none of, or whose shaped
                # score is 0, is left out of both the sum and the weight.
                counted = present & (s > 0)
                node_score += np.where(counted, s * weight, 0)
                weight_sum += np.where(counted, weight, 0)
            elif present.all():
                node_score += s * weight
                full_weight += weight
            else:
                node_score += np.where(present, s * weight, 0)
                weight_sum += np.where(present, weight, 0)
        if self._strategy == "RequestedToCapacityRatio":
            with np.errstate(invalid="ignore", divide="ignore"):
                # Go's math.Round rounds half away from zero (numpy's round is half-to-even).
                out = np.where(weight_sum > 0, np.floor(node_score / np.maximum(weight_sum, 1) + 0.5), 0)
            return out.astype(np.int64)
        if full_weight:
            return node_score // (weight_sum + full_weight)     # every row has weight: no zero division
        return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        """Upstream's registration with queueing hints on (the default, and the only mode of our
        queue: no preCheck, so Node/UpdateNodeTaint and UpdateNodeLabel are not needed) and
        InPlacePodVerticalScaling on (GA): Pod Delete|UpdatePodScaleDown, Node
        Add|UpdateNodeAllocatable. The service reports an assigned pod's change as one ``Update``
        action, so ``Update`` stands for UpdatePodScaleDown; the hint tells a scale-down apart."""
        after_node: Callable[[Pod, ClusterEvent], bool] = is_schedulable_after_node_change if self._dra is None else \
            functools.partial(is_schedulable_after_node_change, dra=self._dra, dra_enabled=True)
        events = [ClusterEventWithHint(ClusterEvent("Pod", ("Delete", "Update")), is_schedulable_after_pod_event),
                  ClusterEventWithHint(ClusterEvent("Node", ("Add", "UpdateNodeAllocatable")), after_node)]
        if self._dra is not None:
            # DRAExtendedResource: a class that starts backing an extended resource the pod asks for.
            events.append(ClusterEventWithHint(ClusterEvent("DeviceClass", ("Add", "Update")),
                                               is_schedulable_after_device_class_event))
        return tuple(events)


def is_schedulable_after_pod_event(pod: Pod, event: ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPodEvent``: a deleted pod frees its node's resources (and a pod
    slot) when it was on a node or nominated to one; an updated one when it is the pending pod
    itself, or an assigned pod whose request for something the pending pod requests went down
    (``isSchedulableAfterPodScaleDown``). Raises ``TypeError`` for an object that is not a pod
    (upstream's ``util.As`` error, which the runtime reads as Queue)."""
    old, new = event.old, event.new
    if not isinstance(old, Pod) or (new is not None and not isinstance(new, Pod)):
        raise TypeError(f"expected pods, got {type(old).__name__} and {type(new).__name__}")
    if new is None:
        return bool(old.node_name or old.nominated_node_name)
    if new.uid == pod.uid:
        return True
    if not new.node_name or new.requests == old.requests:
        # Our ``Update`` is every change of an assigned pod (status, labels...); most change no request.
        return False
    before, after = fit_requests(old), fit_requests(new)
    return any(before.get(name, 0) > after.get(name, 0) for name, amount in fit_requests(pod).items() if amount)


def is_schedulable_after_node_change(pod: Pod, event: ClusterEvent, *, dra: DraStore | None = None,
                                     dra_enabled: bool = False) -> bool:
    """Upstream's ``isSchedulableAfterNodeChange``: QueueSkip when the pod would not fit the node
    even empty (``isFit``); an added node that fits queues it; an updated one only if an allocatable
    amount the pod asks for, or the pod count, went up (``haveAnyRequestedResourcesIncreased``).
    As upstream's ``isFit`` passes no ignored resources, ``ignoredResources`` do not apply here.
    With DRAExtendedResource (``dra_enabled``, the plugin's DRA store as upstream's draManager), an
    extended resource the node does not advertise and a DeviceClass backs is DynamicResources' to
    judge (``should_delegate_to_dra``), in both."""
    old, new = event.old, event.new
    if not isinstance(new, Node) or (old is not None and not isinstance(old, Node)):
        raise TypeError(f"expected nodes, got {type(old).__name__} and {type(new).__name__}")
    if not is_fit(pod, new, dra=dra, dra_enabled=dra_enabled):
        return False
    return old is None or have_any_requested_resources_increased(pod, old, new, dra=dra, dra_enabled=dra_enabled)


def is_schedulable_after_device_class_event(pod: Pod, event: ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterDeviceClassEvent``: an update that keeps the class's
    extendedResourceName skips; an added class whose implicit name
    (``deviceclass.resource.kubernetes.io/<name>``) the pod requests queues; so does a class whose
    extendedResourceName the pod requests. Raises ``TypeError`` for objects that are not classes."""
    old, new = event.old, event.new
    if not isinstance(new, DeviceClass) or (old is not None and not isinstance(old, DeviceClass)):
        raise TypeError(f"expected device classes, got {type(old).__name__} and {type(new).__name__}")
    if old is not None:
        if old.extended_resource_name == new.extended_resource_name:
            return False
    elif IMPLICIT_EXTENDED_RESOURCE_PREFIX + new.name in pod.requests:
        return True
    return bool(new.extended_resource_name) and new.extended_resource_name in pod.requests


def should_delegate_to_dra(resource: str, node: Node, dra: DraStore | None, dra_enabled: bool) -> bool:
    """Upstream's ``shouldDelegateResourceToDRA`` (fit.go): with DRAExtendedResource on, a resource
    the node does not advertise is DynamicResources' when a DeviceClass backs it; without a DRA
    manager (upstream's nil ``draManager``, the kubelet's admission check) every such resource is."""
    if not dra_enabled or node.allocatable.get(resource, 0) > 0:
        return False
    return dra is None or dra.extended_resource_class(resource) is not None


def is_fit(pod: Pod, node: Node | None, *, dra: DraStore | None = None, dra_enabled: bool = False) -> bool:
    """Upstream's ``isFit``: ``Fits`` against the node with no pods on it (nothing ignored); a
    scalar resource delegated to DRA (``should_delegate_to_dra``) is not Fit's to check."""
    if node is None:
        return False
    alloc = node.allocatable
    if alloc.get("pods", 0) < 1:
        return False                              # Too many pods, even alone
    return all(amount <= alloc.get(name, 0)
               or (name not in _NATIVE and should_delegate_to_dra(name, node, dra, dra_enabled))
               for name, amount in fit_requests(pod).items() if amount)


def have_any_requested_resources_increased(pod: Pod, old: Node, new: Node, *, dra: DraStore | None = None,
                                           dra_enabled: bool = False) -> bool:
    """Upstream's ``haveAnyRequestedResourcesIncreased``: the allowed pod count went up, or the
    allocatable of a resource the pod requests (a non-zero request) did, or, for a scalar one, the
    updated node leaves it to DRA (``should_delegate_to_dra``)."""
    before, after = old.allocatable, new.allocatable
    if after.get("pods", 0) > before.get("pods", 0):
        return True
    return any(after.get(name, 0) > before.get(name, 0)
               or (name not in _NATIVE and should_delegate_to_dra(name, new, dra, dra_enabled))
               for name, amount in fit_requests(pod).items() if amount)


def _fit_status(req: _Request, short: list[bool], unresolvable: bool) -> Status:
    """Fit's status for one verdict pattern: ``short[0]`` too many pods, ``short[i + 1]`` resource i."""
    reasons = [REASON_TOO_MANY_PODS] if short[0] else []
    reasons += [insufficient(name) for i, (name, _, _) in enumerate(req.columns) if short[i + 1]]
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE if unresolvable else Code.UNSCHEDULABLE, tuple(reasons))


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
    alloc = t.alloc[rows, col]
    if non_zero and resource == "cpu":
        requested = t.nz_cpu[rows]
    elif non_zero and resource == "memory":
        requested = t.nz_mem[rows]
    else:
        requested = t.requested[rows, col]
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


class NodeResourcesBalancedAllocation:
    """Upstream's ``noderesources.BalancedAllocation``: PreScore, Score. A DRA-backed extended
    resource among its resources is read as Fit's scoring reads it (``DraScoring``), with the
    actual requests."""

    name = BALANCED_NAME

    def __init__(self, args: NodeResourcesBalancedAllocationArgs, dra: DraStore | None = None) -> None:
        self.args = args
        self._resources = tuple(r.name for r in args.resources)
        self._dra = dra
        self._dra_scoring = dra_scoring(dra)

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreScore and Score read the pod's requests (and, for a DRA-backed extended
        resource, the DRA objects: no signature then, as Fit)."""
        return sign_requests(self._dra, pod)

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Status:
        if not any(pod.requests.get(r, 0) > 0 for r in self._resources):
            return _SKIP
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        fractions = []
        present = []
        dra = self._dra_scoring
        for name in self._resources:
            pod_req = pod.requests.get(name, 0)
            if not _scored(name, pod_req):
                continue
            cls = dra.backing(name, pod_req) if dra is not None else None
            pair, by_dra = _with_dra(dra, cls, snapshot, rows,
                                     _alloc_requested(snapshot, rows, name, pod_req, non_zero=False), pod_req)
            if pair is None:
                continue
            alloc, requested = pair
            ok = alloc > 0
            f = np.where(ok, requested / np.maximum(alloc, 1), 0.0)
            for p, row in _exact_positions(_big_positions(snapshot, rows), snapshot, name, by_dra):
                a, r = _exact_alloc_requested(snapshot, row, name, pod_req, non_zero=False)
                ok[p] = a > 0
                f[p] = 0.0 if a <= 0 else 1.0 if r >= a else r / a   # r / a alone can overflow a float
            fractions.append(np.minimum(f, 1.0))
            present.append(ok)
        if not fractions:
            return np.full(len(rows), MAX_NODE_SCORE, np.int64)
        if len(fractions) == 2 and present[0].all() and present[1].all():
            # The usual case (cpu and memory, allocatable on every node): upstream's two-resource
            # |a - b| / 2 on every row, without the general path's stacking and sums.
            return ((1 - np.abs((fractions[0] - fractions[1]) / 2)) * MAX_NODE_SCORE).astype(np.int64)
        fr = np.vstack(fractions)
        pr = np.vstack(present)
        n = pr.sum(axis=0)
        total = (fr * pr).sum(axis=0)
        mean = total / np.maximum(n, 1)
        std = np.sqrt((((fr - mean) ** 2) * pr).sum(axis=0) / np.maximum(n, 1))
        if len(fractions) == 2:
            # Upstream's two-resource special case, |a - b| / 2, bit for bit.
            std = np.where(n == 2, np.abs((fr[0] - fr[1]) / 2), std)
        std = np.where(n >= 2, std, 0.0)
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)

    def score_extensions(self) -> ScoreExtensions | None:
        return None


def new_fit(args: NodeResourcesFitArgs | None, handle: Handle) -> NodeResourcesFit:
    # The service's store, even empty (its informers fill it later): which classes back which
    # extended resources.
    return NodeResourcesFit(args or NodeResourcesFitArgs(), handle.dra)


def new_balanced(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle
                 ) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args or NodeResourcesBalancedAllocationArgs(), handle.dra)


if TYPE_CHECKING:
    from scheduler.framework.interfaces import (
        BatchFilterPlugin,
        BatchScorePlugin,
        FilterConfigured,
        PreFilterPlugin,
        PreScorePlugin,
    )

    _: type[BatchFilterPlugin] = NodeResourcesFit
    __: type[BatchScorePlugin] = NodeResourcesFit
    ___: type[PreFilterPlugin] = NodeResourcesFit
    _____: type[PreScorePlugin] = NodeResourcesFit
    ______: type[FilterConfigured] = NodeResourcesFit
    ____: type[BatchScorePlugin] = NodeResourcesBalancedAllocation
