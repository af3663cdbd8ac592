"""NodeResourcesBalancedAllocation (upstream's ``balanced_allocation.go``): it scores
``(1 - std(requested/allocatable)) * 100`` over its resources, using the pods' actual requests
(not the non-zero defaults); a pod that requests none of them is skipped (best-effort pods don't
unbalance). Which resources take part, and their amounts on each node (DRA-backed extended
resources included), are ``resource_allocation``'s.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import Snapshot
from scheduler.cache.dra import DraStore
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import SignFragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.dra import DeviceClass
from scheduler.plugins.args import NodeResourcesBalancedAllocationArgs
from scheduler.plugins.helpers import row_run
from scheduler.plugins.noderesources.resource_allocation import (
    _alloc_requested,
    _big_positions,
    _exact_alloc_requested,
    _exact_positions,
    _scored,
    _with_dra,
    allocatable_everywhere,
    dra_scoring,
    filtered_columns,
    sign_requests,
)
from scheduler.plugins.row_scores import RowScores

BALANCED_NAME = "NodeResourcesBalancedAllocation"
_SKIP = Status(Code.SKIP)


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
        self._kept = RowScores()     # Score's per-row results (row_scores.py)
        self._zeros = (0,) * len(self._resources)
        self._no_classes: tuple[DeviceClass | None, ...] = (None,) * len(self._resources)

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreScore and Score read the pod's requests (and, for a DRA-backed extended
        resource, the DRA objects: no signature then, as Fit)."""
        return sign_requests(self._dra, pod)

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        if not any(pod.requests.get(r, 0) > 0 for r in self._resources):
            return _SKIP
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        requests = tuple(map(pod.requests.get, self._resources, self._zeros))
        dra = self._dra_scoring
        if dra is None:
            classes = self._no_classes
        else:
            classes = tuple(dra.backing(name, r) if _scored(name, r) else None
                            for name, r in zip(self._resources, requests, strict=True))
            if any(cls is not None for cls in classes):
                # Devices stand in for allocatable: not a function of the row alone.
                return self._score_rows(state, snapshot, requests, classes, rows)
        # A row's score depends on the row and the pod's requests alone: kept across cycles.
        compute = functools.partial(self._score_rows, state, snapshot, requests, classes)
        exact = functools.partial(self._score_row, snapshot, requests)
        return self._kept.scores(snapshot.table, rows, row_run(state, rows), requests, compute, exact)

    def _score_row(self, snapshot: Snapshot, requests: tuple[int, ...], row: int) -> int:
        """The score of one row as ``_score_rows`` gives it without DRA, with its float operations
        in the same order: a capped column's amounts divide as float64 (a big row's exactly), and
        the standard deviation sums in resource order."""
        table = snapshot.table
        big = row in table.big_rows
        fractions: list[float] = []
        present: list[bool] = []
        for name, pod_req in zip(self._resources, requests, strict=True):
            if not _scored(name, pod_req) or name not in table.resources:
                continue
            a, r = _exact_alloc_requested(snapshot, row, name, pod_req, non_zero=False)
            present.append(a > 0)
            fractions.append(0.0 if a <= 0 else 1.0 if r >= a else min(r / a if big else float(r) / float(a), 1.0))
        if not fractions:
            return MAX_NODE_SCORE
        n = sum(present)
        if len(fractions) == 2 and n == 2:
            std = abs((fractions[0] - fractions[1]) / 2)
        elif n >= 2:
            mean = sum(f for f, p in zip(fractions, present, strict=True) if p) / n
            std = math.sqrt(sum((f - mean) * (f - mean) for f, p in zip(fractions, present, strict=True) if p) / n)
        else:
            std = 0.0
        return int((1 - std) * MAX_NODE_SCORE)

    def _score_rows(self, state: CycleState, snapshot: Snapshot, requests: tuple[int, ...],
                    classes: tuple[DeviceClass | None, ...], rows: fwk.Rows) -> fwk.Scores:
        """Score's computation over ``rows``: each row's score from that row's amounts alone."""
        fractions = []
        present: list[npt.NDArray[np.bool_] | None] = []     # None: every row has the resource
        dra = self._dra_scoring
        big = _big_positions(snapshot, rows)
        for name, pod_req, cls in zip(self._resources, requests, classes, strict=True):
            if not _scored(name, pod_req):
                continue
            if cls is None and not big:
                fast = _fraction_everywhere(state, snapshot, rows, name, pod_req)
                if fast is not None:
                    fractions.append(fast)
                    present.append(None)
                    continue
            pair, by_dra = _with_dra(dra, cls, snapshot, rows,
                                     _alloc_requested(snapshot, rows, name, pod_req, non_zero=False), pod_req)
            if pair is None:
                continue
            alloc, requested = pair
            ok = alloc > 0
            # Every row has the resource (the usual): no guard against a zero divisor needed.
            f = requested / alloc if ok.all() else np.where(ok, requested / np.maximum(alloc, 1), 0.0)
            for p, row in _exact_positions(big, snapshot, name, by_dra):
                a, r = _exact_alloc_requested(snapshot, row, name, pod_req, non_zero=False)
                ok[p] = a > 0
                f[p] = 0.0 if a <= 0 else 1.0 if r >= a else r / a   # r / a alone can overflow a float
            fractions.append(np.minimum(f, 1.0))
            present.append(ok)
        if not fractions:
            return np.full(len(rows), MAX_NODE_SCORE, np.int64)
        if len(fractions) == 2 and all(p is None or p.all() for p in present):
            # The usual case (cpu and memory, allocatable on every node): upstream's two-resource
            # |a - b| / 2 on every row, without the general path's stacking and sums (the same
            # operations in the same order, in place).
            d = fractions[0] - fractions[1]
            d /= 2
            np.abs(d, out=d)
            np.subtract(1, d, out=d)
            d *= MAX_NODE_SCORE
            return d.astype(np.int64)
        fr = np.vstack(fractions)
        pr = np.vstack([np.ones(len(rows), np.bool_) if p is None else p for p in present])
        n = pr.sum(axis=0)
        total = (fr * pr).sum(axis=0)
        mean = total / np.maximum(n, 1)
        std = np.sqrt((((fr - mean) ** 2) * pr).sum(axis=0) / np.maximum(n, 1))
        if len(fractions) == 2:
            # Upstream's two-resource special case, |a - b| / 2, bit for bit.
            std = np.where(n == 2, np.abs((fr[0] - fr[1]) / 2), std)
        std = np.where(n >= 2, std, 0.0)
        return ((1 - std) * MAX_NODE_SCORE).astype(np.int64)

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return None


def _fraction_everywhere(state: CycleState, snapshot: Snapshot, rows: fwk.Rows, resource: str, pod_request: int
                         ) -> npt.NDArray[np.float64] | None:
    """``min(requested / allocatable, 1)`` per row where every node has the resource
    (``allocatable_everywhere``), in the fewest passes; None otherwise (the general path decides).
    ``used + request`` cannot wrap (both below CAP), and where it exceeds the general path's
    saturated sum, both fractions are >= 1."""
    got = allocatable_everywhere(state, snapshot, rows, resource, pod_request)
    if got is None:
        return None
    alloc, slot = got
    filtered = filtered_columns(state, snapshot, rows, slot)
    if filtered is not None:
        used = filtered[1] + pod_request    # (a new array: the filtered one is shared)
    else:
        used = snapshot.table.requested[:, slot][rows]
        used += pod_request
    f = used / alloc
    np.minimum(f, 1.0, out=f)
    return f


def new_balanced(args: NodeResourcesBalancedAllocationArgs | None, handle: Handle
                 ) -> NodeResourcesBalancedAllocation:
    return NodeResourcesBalancedAllocation(args or NodeResourcesBalancedAllocationArgs(), handle.dra)


if TYPE_CHECKING:
    _: type[fwk.BatchScorePlugin] = NodeResourcesBalancedAllocation
