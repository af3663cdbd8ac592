"""NodeResourcesFit (upstream's ``fit.go``, with ``least_allocated.go``, ``most_allocated.go``
and ``requested_to_capacity_ratio.go`` for its scoring strategies).

Filter is upstream's ``fitsRequest``: ``Too many pods`` when the node already holds its allowed pod
count; ``Insufficient <resource>`` for each requested resource whose free amount (allocatable -
requested) is smaller than the request. The status is Unschedulable, or
UnschedulableAndUnresolvable when the request exceeds the node's *total* allocatable (preemption
cannot help there). The requests checked are upstream's ``framework.Resource``: cpu, memory,
ephemeral-storage and the scalar resources (extended, ``hugepages-*``, ``*kubernetes.io/*``,
``attachable-volumes-*``), a zero request never failing. Resources in ``ignoredResources`` or an
``ignoredResourceGroups`` prefix are skipped (extended resources only, as upstream). An extended
resource a DeviceClass backs (its ``extendedResourceName``, or ``deviceclass.resource.kubernetes.io/
<class>``) is not checked on a node whose allocatable lacks it: DynamicResources provides it there
through a claim (upstream's ``ShouldDelegateResourceToDRA``, DRAExtendedResource).

Queueing hints (EnqueueExtensions), as upstream's with hints, in-place resize and
DRAExtendedResource on: a DeviceClass added or updated to back an extended resource the pod asks
for (``is_schedulable_after_device_class_event``, with the DRA store only); a pod deleted
from a node (or a nominated one) or an assigned pod scaling down a request the pending pod has
(``is_schedulable_after_pod_event``); a node that the pod would fit empty, when added or when an
allocatable amount it asks for grew (``is_schedulable_after_node_change``).

Scoring strategies (``scoringStrategy.type``), all over the non-zero requests for cpu and memory
(a container without a request counts as 100m / 200MiB), per resource, then weight-averaged (which
resources take part, and the amounts read, are ``resource_allocation``'s):

* LeastAllocated: ``(allocatable - requested) * 100 / allocatable``
* MostAllocated: ``requested * 100 / allocatable`` (requested capped at allocatable)
* RequestedToCapacityRatio: a broken-linear ``shape`` over utilisation (interpolated with Go's
  truncating ``/``), scores ×10, averaged with rounding; a resource the node has none of, or whose
  shaped score is 0, counts in neither the sum nor the weight.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler import features
from scheduler.cache import CAP, NodeTable, Snapshot
from scheduler.cache.dra import DraStore
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import SignFragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Node, Pod
from scheduler.model.dra import IMPLICIT_EXTENDED_RESOURCE_PREFIX, DeviceClass
from scheduler.plugins.args import MAX_CUSTOM_PRIORITY_SCORE, MAX_UTILIZATION, NodeResourcesFitArgs
from scheduler.plugins.helpers import broken_linear, derived, row_run
from scheduler.plugins.noderesources.resource_allocation import (
    _NATIVE,
    _NATIVE_ORDER,
    _alloc_requested,
    _big_positions,
    _class_backs,
    _exact_alloc_requested,
    _exact_positions,
    _pod_request,
    _scored,
    _with_dra,
    allocatable_everywhere,
    dra_scoring,
    fit_requests,
    is_extended_resource_name,
    remember_filtered,
    sign_requests,
)
from scheduler.plugins.row_scores import RowScores

FIT_NAME = "NodeResourcesFit"
REASON_TOO_MANY_PODS = "Too many pods"
# Fit's filter packs (too many pods, short per resource) into one int64 per node; a pod asking for
# more resources than that (many extended resources) takes the row-matrix path instead.
_MAX_PACKED = 60
_PREFILTER_KEY = "PreFilter" + FIT_NAME
_PRESCORE_KEY = "PreScore" + FIT_NAME
_SKIP = Status(Code.SKIP)


def _add(total: fwk.Scores | None, term: fwk.Scores) -> fwk.Scores:
    """``total + term``, in place when there is a total (every term is a fresh array)."""
    if total is None:
        return term
    total += term
    return total


def _least_allocated_in_float(state: CycleState, snapshot: Snapshot, rows: fwk.Rows, resource: str,
                              pod_request: int) -> fwk.Scores | None:
    """LeastAllocated's score of ``resource`` on every row, ``(alloc - used - request) * 100 //
    alloc`` clamped at 0, in the fewest array passes: in float64, which floors exactly there
    (``allocatable_everywhere`` says where; None elsewhere, and the integer path decides). With
    ``used`` capped at CAP and the request below it, ``alloc - used - request`` cannot wrap, and it
    is negative exactly where the integer path's saturated ``requested`` exceeds ``alloc`` (both
    score 0)."""
    got = allocatable_everywhere(state, snapshot, rows, resource, pod_request)
    if got is None:
        return None
    alloc, slot = got
    t = snapshot.table
    used = t.nz_cpu if resource == "cpu" else t.nz_mem if resource == "memory" else t.requested[:, slot]
    run = row_run(state, rows)
    free = alloc - used[rows if run is None else run]
    free -= pod_request
    np.maximum(free, 0, out=free)
    score = free * float(MAX_NODE_SCORE)
    score /= alloc
    return score.astype(np.int64)


def _min_live_alloc(table: NodeTable, slot: int) -> int:
    """The smallest allocatable in dense column ``slot`` over the live nodes (0 without any)."""
    col = table.alloc[: table.size, slot][table.valid[: table.size]]
    return int(col.min()) if len(col) else 0


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


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
    backed: bool = False        # some class is not None: Score's rows are not a function of the row alone


class NodeResourcesFit:
    """Upstream's ``noderesources.Fit``: PreFilter, Filter, PreScore, Score, EnqueueExtensions.

    PreScore computes the pod's request for each scored resource once per cycle (upstream's
    ``calculatePodResourceRequestList``, with the non-zero defaults for cpu and memory) and Score
    reads it; Score computes it itself when called without PreScore (explain, tests)."""

    name = FIT_NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes
    pre_filter_reads_pods = False   # PodReadingPreFilter: its state survives a change of the node's pods

    def __init__(self, args: NodeResourcesFitArgs, dra: DraStore | None = None, *,
                 in_place_pod_vertical_scaling: bool = True) -> None:
        self.args = args
        self._dra = dra
        # Feature gate InPlacePodVerticalScaling (GA, on): an assigned pod's update can free resources.
        self._in_place = in_place_pod_vertical_scaling
        strat = args.scoring_strategy
        self._strategy = strat.type
        self._resources = tuple((r.name, r.weight) for r in strat.resources)
        shape = strat.requested_to_capacity_ratio.shape if strat.requested_to_capacity_ratio else ()
        self._shape = tuple((p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                            for p in shape)
        self._ignored = frozenset(args.ignored_resources)
        self._ignored_groups = tuple(args.ignored_resource_groups)
        self._dra_scoring = dra_scoring(dra)
        self._kept = RowScores()     # Score's per-row results (row_scores.py)
        self._no_classes: tuple[DeviceClass | None, ...] = (None,) * len(self._resources)

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
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
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

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        # PreFilter's state, computed now if it did not run (it always writes one).
        req = state.read_or_compute(_PREFILTER_KEY, _Request, lambda: self.pre_filter(state, pod, snapshot))
        assert req is not None
        t = snapshot.table
        if len(req.columns) > _MAX_PACKED:
            return self._filter_many(req, pod, snapshot, rows)
        if req.dra or t.big_rows:
            return self._filter_packed(req, pod, snapshot, rows)
        # Most batches have no node short of anything: first only whether each row fails, in the
        # fewest array operations (one gather per column read); the reasons, which need a bit per
        # resource and the unresolvable test, are worked out for the failing rows alone. Without
        # DRA-backed requests and capped rows, both read the same columns the same way.
        slots = t.slots
        alloc, requested = t.alloc, t.requested
        pods = slots[t.resources["pods"]]
        # A batch that is a run of rows reads views of the columns instead of gathering them.
        run = row_run(state, rows)
        at: slice | fwk.Rows = rows if run is None else run
        # No pod-count pass while no row can hold as many pods as the fewest any live node allows.
        failed: npt.NDArray[np.bool_] | None = None
        if t.pods_bound >= derived(t, ("noderesources/min-pods", pods), lambda: _min_live_alloc(t, pods)):
            failed = t.pod_count[at] >= alloc[:, pods][at]      # count + 1 > allowed
        gathered: dict[int, tuple[fwk.Scores, fwk.Scores]] = {}
        for _, col, amount in req.columns:
            slot = slots[col]
            if slot >= 0:
                a, r = gathered[slot] = alloc[:, slot][at], requested[:, slot][at]
                free = a - r
            else:
                free = t.alloc_of(rows, col) - t.requested_of(rows, col)
            if failed is None:
                failed = free < amount
            else:
                failed |= free < amount
        if failed is None:
            failed = np.zeros(len(rows), np.bool_)
        if not failed.any():
            remember_filtered(state, snapshot, rows, gathered)     # Score may read them again
            return fwk.FilterVerdict(failed)
        short = np.flatnonzero(failed)
        some = self._filter_packed(req, pod, snapshot, rows[short])
        ids = np.zeros(len(rows), np.int64)
        if some.status_ids is not None:
            ids[short] = some.status_ids
        return fwk.FilterVerdict(failed, some.statuses, ids)

    def _filter_packed(self, req: _Request, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        """``filter_nodes`` with every row's reasons: which resources it is short of, packed as bits
        of one int64, and whether a request exceeds its allocatable (unresolvable)."""
        t = snapshot.table
        pods_col = t.resources["pods"]
        # bit 0: too many pods; bit i+1: resource i insufficient. Unresolvable is tracked aside.
        bits = (t.pod_count[rows] + 1 > t.alloc[rows, pods_col]).astype(np.int64)
        unresolvable = np.zeros(len(rows), np.bool_)
        slots = t.slots
        for i, (_, col, amount) in enumerate(req.columns):
            slot = slots[col]       # a dense column, read inline (the common case), or the side table
            if slot >= 0:
                alloc, requested = t.alloc[rows, slot], t.requested[rows, slot]
            else:
                alloc, requested = t.alloc_of(rows, col), t.requested_of(rows, col)
            short = amount > alloc - requested
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
            return fwk.FilterVerdict(failed)
        key = bits * 2 + unresolvable
        uniq, ids = np.unique(key[failed], return_inverse=True)
        statuses = []
        for k in uniq.tolist():
            b, unres = k >> 1, k & 1
            statuses.append(_fit_status(req, [bool(b >> j & 1) for j in range(len(req.columns) + 1)], bool(unres)))
        full_ids = np.zeros(len(rows), np.int64)
        full_ids[failed] = ids.reshape(-1)
        return fwk.FilterVerdict(failed, statuses, full_ids)

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

    def _filter_many(self, req: _Request, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        """``filter_nodes`` for a pod requesting more resources than fit one int64 of bits: the
        verdicts are rows of a boolean matrix (column 0 too many pods, i+1 resource i, last unresolvable)."""
        t = snapshot.table
        n = len(req.columns)
        m = np.zeros((len(rows), n + 2), np.bool_)
        m[:, 0] = t.pod_count[rows] + 1 > t.alloc[rows, t.resources["pods"]]
        for i, (_, col, amount) in enumerate(req.columns):
            alloc = t.alloc_of(rows, col)
            keep = alloc > 0 if i in req.dra else True
            m[:, i + 1] = (amount > alloc - t.requested_of(rows, col)) & keep
            m[:, n + 1] |= (amount > alloc) & keep
        for p, row in _big_positions(snapshot, rows):
            exact, unres = self._exact_short(req, pod, snapshot, row)
            m[p, 1 : n + 1] = exact
            m[p, n + 1] = unres
        failed = np.asarray(m[:, : n + 1].any(axis=1), np.bool_)
        if not failed.any():
            return fwk.FilterVerdict(failed)
        uniq, ids = np.unique(m[failed], axis=0, return_inverse=True)
        statuses = [_fit_status(req, r[: n + 1], r[n + 1]) for r in uniq.tolist()]
        full_ids = np.zeros(len(rows), np.int64)
        full_ids[failed] = ids.reshape(-1)
        return fwk.FilterVerdict(failed, statuses, full_ids)

    # --- PreScore / Score ------------------------------------------------------------------
    def _score_requests(self, pod: Pod) -> tuple[int, ...]:
        return tuple(_pod_request(pod, name, non_zero=True) for name, _ in self._resources)

    def _score_state(self, pod: Pod) -> _ScoreState:
        requests = self._score_requests(pod)
        dra = self._dra_scoring
        if dra is None:
            return _ScoreState(requests, self._no_classes)
        classes = tuple(dra.backing(name, r) for (name, _), r in zip(self._resources, requests, strict=True))
        return _ScoreState(requests, classes, any(c is not None for c in classes))

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        # Never Skip: the non-zero defaults give every pod a cpu and memory request to score.
        state.write(_PRESCORE_KEY, self._score_state(pod))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        score_state = state.get(_PRESCORE_KEY)
        if not isinstance(score_state, _ScoreState) or len(score_state.requests) != len(self._resources):
            # Score without PreScore (explain, tests): upstream's Score computes the same state.
            score_state = self._score_state(pod)
        if score_state.backed:
            # Devices stand in for allocatable: not a function of the row alone.
            return self._score_rows(state, snapshot, score_state, rows)
        # A row's score depends on the row and the pod's requests alone: kept across cycles.
        compute = functools.partial(self._score_rows, state, snapshot, score_state)
        exact = (functools.partial(self._least_allocated_row, snapshot, score_state.requests)
                 if self._strategy == "LeastAllocated" else None)
        return self._kept.scores(snapshot.table, rows, row_run(state, rows), score_state.requests, compute, exact)

    def _least_allocated_row(self, snapshot: Snapshot, requests: tuple[int, ...], row: int) -> int:
        """LeastAllocated's score of one row, exactly (Python ints), as ``_score_rows`` gives it
        without DRA: a resource the node has none of is left out of the sum and the weight."""
        table = snapshot.table
        total = weights = 0
        for (name, weight), pod_req in zip(self._resources, requests, strict=True):
            if not _scored(name, pod_req) or name not in table.resources:
                continue
            a, r = _exact_alloc_requested(snapshot, row, name, pod_req, non_zero=True)
            if a > 0:
                total += ((a - r) * MAX_NODE_SCORE // a if r <= a else 0) * weight
                weights += weight
        return total // weights if weights else 0

    def _score_rows(self, state: CycleState, snapshot: Snapshot, score_state: _ScoreState, rows: fwk.Rows
                    ) -> fwk.Scores:
        """Score's computation over ``rows``: each row's score from that row's amounts alone."""
        # Sums begun by their first term (None before it): no zero array, and no pass to add to it.
        node_score: fwk.Scores | None = None
        weight_sum: fwk.Scores | None = None
        # The weight of the resources every row has (the usual: cpu and memory allocatable
        # everywhere), kept as one number instead of being added to ``weight_sum`` row by row.
        full_weight = 0
        big = _big_positions(snapshot, rows)
        for (name, weight), pod_req, cls in zip(self._resources, score_state.requests, score_state.classes,
                                                strict=True):
            if not _scored(name, pod_req):
                continue
            if self._strategy == "LeastAllocated" and cls is None and not big:
                fast = _least_allocated_in_float(state, snapshot, rows, name, pod_req)
                if fast is not None:
                    node_score = _add(node_score, fast * weight if weight != 1 else fast)
                    full_weight += weight
                    continue
            pair, by_dra = _with_dra(self._dra_scoring, cls, snapshot, rows,
                                     _alloc_requested(snapshot, rows, name, pod_req, non_zero=True), pod_req)
            if pair is None:
                continue
            alloc, requested = pair
            present = alloc > 0
            exact = _exact_positions(big, snapshot, name, by_dra)
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
            for p, row in exact:
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
                node_score = _add(node_score, np.where(counted, s * weight, 0))
                weight_sum = _add(weight_sum, np.where(counted, weight, 0))
            elif present.all():
                node_score = _add(node_score, s * weight)
                full_weight += weight
            else:
                node_score = _add(node_score, np.where(present, s * weight, 0))
                weight_sum = _add(weight_sum, np.where(present, weight, 0))
        if node_score is None:      # no resource scored: 0 everywhere, as the divisions below give
            return np.zeros(len(rows), np.int64)
        if self._strategy == "RequestedToCapacityRatio":
            if weight_sum is None:
                weight_sum = np.zeros(len(rows), np.int64)
            with np.errstate(invalid="ignore", divide="ignore"):
                # Go's math.Round rounds half away from zero (numpy's round is half-to-even).
                out = np.where(weight_sum > 0, np.floor(node_score / np.maximum(weight_sum, 1) + 0.5), 0)
            return out.astype(np.int64)
        if full_weight:
            # Every row has weight: no zero division; a scalar divisor when every row has the same.
            return node_score // (full_weight if weight_sum is None else weight_sum + full_weight)
        if weight_sum is None:
            return np.zeros(len(rows), np.int64)
        return np.where(weight_sum > 0, node_score // np.maximum(weight_sum, 1), 0)

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return None

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        """Upstream's registration with queueing hints on (the default, and the only mode of our
        queue: no preCheck, so Node/UpdateNodeTaint and UpdateNodeLabel are not needed) and
        InPlacePodVerticalScaling on (GA): Pod Delete|UpdatePodScaleDown, Node
        Add|UpdateNodeAllocatable. The service reports an assigned pod's change as one ``Update``
        action, so ``Update`` stands for UpdatePodScaleDown; the hint tells a scale-down apart."""
        after_node: Callable[[Pod, fwk.ClusterEvent], bool] = is_schedulable_after_node_change \
            if self._dra is None else \
            functools.partial(is_schedulable_after_node_change, dra=self._dra, dra_enabled=True)
        # fit.go: UpdatePodScaleDown only with InPlacePodVerticalScaling (else no update frees anything).
        pod_actions = ("Delete", "Update") if self._in_place else ("Delete",)
        events = [fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", pod_actions), is_schedulable_after_pod_event),
                  fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", ("Add", "UpdateNodeAllocatable")), after_node)]
        if self._dra is not None:
            # DRAExtendedResource: a class that starts backing an extended resource the pod asks for.
            events.append(fwk.ClusterEventWithHint(fwk.ClusterEvent("DeviceClass", ("Add", "Update")),
                                                   is_schedulable_after_device_class_event))
        return tuple(events)


def is_schedulable_after_pod_event(pod: Pod, event: fwk.ClusterEvent) -> bool:
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


def is_schedulable_after_node_change(pod: Pod, event: fwk.ClusterEvent, *, dra: DraStore | None = None,
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


def is_schedulable_after_device_class_event(pod: Pod, event: fwk.ClusterEvent) -> bool:
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


def new_fit(args: NodeResourcesFitArgs | None, handle: Handle) -> NodeResourcesFit:
    # The service's store, even empty (its informers fill it later): which classes back which
    # extended resources.
    return NodeResourcesFit(args or NodeResourcesFitArgs(), handle.dra,
                            in_place_pod_vertical_scaling=features.enabled(handle.feature_gates,
                                                                           "InPlacePodVerticalScaling"))


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodeResourcesFit
    __: type[fwk.BatchScorePlugin] = NodeResourcesFit
    ___: type[fwk.PreFilterPlugin] = NodeResourcesFit
    _____: type[fwk.PreScorePlugin] = NodeResourcesFit
    ______: type[fwk.FilterConfigured] = NodeResourcesFit
