"""Opportunistic batching (KEP-5598, upstream's ``framework/runtime/batch.go``, gate
``OpportunisticBatching``): a pod whose scheduling signature equals the previous pod's reuses the
previous pod's filtered and scored node list instead of filtering and scoring every node again.

The state machine, per framework (profile), as upstream's ``OpportunisticBatch``::

    cycle k: pod A (signature s) filtered and scored ──► store: A's feasible nodes but the chosen one
    cycle k+1: pod B ──► get_node_hint: valid? ──no──► full cycle, store B's results (or flush)
                                            │yes
                                            ▼
                          B takes the best remaining node (the hint), after one Filter run on it
                          ──► store: the hint was used, the list keeps its remaining nodes

A stored list is valid for the next pod (``get_node_hint``) only if, in upstream's order, and with
upstream's flush reasons (``scheduler_batch_cache_flushed_total{reason}``):

1. it is not empty;
2. the pod comes in the very next scheduling cycle (``pod_skipped``: another pod, of any profile,
   was popped in between) and the previous pod was scheduled (``pod_failed``);
3. the pod has a signature equal to the stored one (``pod_incompatible``);
4. the list is at most ``MAX_BATCH_AGE`` (0.5 s) old (``expired``);
5. the node the previous pod took still exists (``node_missing``) and now *rejects* this pod
   (``node_not_full``): the list is only reusable one pod per node, since a node that can take
   another pod would have to be scored again.

A pod with a nominated node gets no hint (its nominated node is tried first, as upstream).

**Same placements as with the gate off.** Upstream accepts some staleness (the 0.5 s age) and reuses
a list found by a sampled search. Here a hint is given only when it is exactly what the full cycle
would choose, so the gate changes speed, never a placement; the extra conditions (ours, with our
own flush reasons):

6. nothing in the cache changed since the previous pod was assumed (``cluster_changed``: the
   node table's mutation count, the node order and the candidate count are the stored ones), and
   no pod is nominated anywhere (a nominated pod's what-if depends on the pod's priority, which is
   not in the signature);
7. the stored list came from a search that visited every candidate node, with no pod nominated
   (``partial_search``):
   upstream's sampled search (``percentageOfNodesToScore``) would look at another window of nodes
   for the next pod, so a list cut short by it cannot stand for the next pod's search. Batching
   therefore applies when the feasible nodes fit within ``numFeasibleNodesToFind`` (clusters under
   100 nodes, a percentage of 100, or a cluster filling up);
8. the next node is not simply popped: the remaining nodes' totals are computed again from the
   stored per-plugin scores, re-normalising the plugins that have a ``NormalizeScore`` over the
   remaining nodes (removing the taken node may change a maximum), and the node is picked by the
   framework's own ``select_position`` over them in the search's order, so ties are broken with the
   same random draw as the full cycle makes. That is O(remaining nodes) of array work per pod, no
   plugin call; upstream's ``Pop`` is the same node whenever no normalisation changes and no tie.

The batched pod's decision record (``framework/decision.py``) is the one the full cycle would
write: the nodes rejected on the way are the stored ones plus the nodes taken since (each with the
status its Filter run here gave), ``evaluatedNodes`` and ``feasibleNodes`` count them and the
remaining nodes, and the top scores are over the remaining nodes.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.interfaces import ScoreExtensions
from scheduler.framework.signature import PodSignature
from scheduler.framework.status import Status
from scheduler.metrics import Children, Metrics
from scheduler.model import Pod

__all__ = [
    "BATCH_ATTEMPT_HINT_NOT_USED", "BATCH_ATTEMPT_HINT_USED", "BATCH_ATTEMPT_NO_HINT", "MAX_BATCH_AGE",
    "Hint", "OpportunisticBatch", "ScoredNodes",
]

MAX_BATCH_AGE = 0.5
Rows = npt.NDArray[np.int64]
# The pod's signature, asked for only when a rule needs it (the cycle computes it at most once):
# a pod in a cluster where no list is ever stored (a sampled search) is never signed.
Signer = Callable[[], PodSignature | None]

# Upstream's label values (pkg/scheduler/metrics/metrics.go).
BATCH_ATTEMPT_NO_HINT = "no_hint"
BATCH_ATTEMPT_HINT_USED = "hint_used"
BATCH_ATTEMPT_HINT_NOT_USED = "hint_not_used"
FLUSH_POD_FAILED = "pod_failed"
FLUSH_POD_SKIPPED = "pod_skipped"
FLUSH_NODE_MISSING = "node_missing"
FLUSH_NODE_NOT_FULL = "node_not_full"
FLUSH_EMPTY_LIST = "empty_list"
FLUSH_EXPIRED = "expired"
FLUSH_POD_INCOMPATIBLE = "pod_incompatible"
FLUSH_POD_NOT_BATCHABLE = "pod_not_batchable"
# Ours (conditions 6 and 7 of the module docstring).
FLUSH_CLUSTER_CHANGED = "cluster_changed"
FLUSH_PARTIAL_SEARCH = "partial_search"


@dataclass(slots=True)
class ScoredNodes:
    """A scored cycle's feasible nodes, for the next pod: the rows in the search's order, each Score
    plugin's scores (raw for a plugin with a ``NormalizeScore``, so they can be normalised again
    over fewer nodes; final otherwise) with its weight, and the nodes the search rejected."""

    rows: Rows
    scores: list[tuple[str, int, npt.NDArray[np.int64], ScoreExtensions | None]]
    state: CycleState                    # the cycle's state and pod, for NormalizeScore
    pod: Pod
    node_to_status: NodeToStatus
    alive: npt.NDArray[np.bool_]

    def __len__(self) -> int:
        return int(self.alive.sum())

    def rescore(self) -> tuple[Rows, npt.NDArray[np.int64], dict[str, npt.NDArray[np.int64]]]:
        """The remaining rows, their totals and per-plugin (normalised) scores."""
        keep = self.alive
        rows = self.rows[keep]
        total = np.zeros(len(rows), np.int64)
        per_plugin: dict[str, npt.NDArray[np.int64]] = {}
        for name, weight, values, ext in self.scores:
            s = values[keep]                # a copy: NormalizeScore works in place
            if ext is not None:
                ext.normalize_score(self.state, self.pod, s)
            per_plugin[name] = s
            total += s * weight
        return rows, total, per_plugin


@dataclass(slots=True)
class Hint:
    """The node the batch gives a pod, with what the full cycle would have computed for it."""

    row: int
    rows: Rows                                   # the nodes scored (the remaining ones)
    totals: npt.NDArray[np.int64]
    per_plugin: dict[str, npt.NDArray[np.int64]]
    pos: int | None                              # None: one node left, nothing scored
    node_to_status: NodeToStatus


@dataclass(slots=True)
class _BatchState:
    signature: PodSignature
    nodes: ScoredNodes
    created: float
    order: Rows                  # the snapshot's node order (identity: unchanged while nodes are)
    candidates: int
    stamp: int = -1              # the node table's mutation count after the last assume


@dataclass(slots=True)
class _LastCycle:
    cycle: int
    chosen: str
    row: int
    succeeded: bool


class OpportunisticBatch:
    """Upstream's ``OpportunisticBatch``, one per framework: ``get_node_hint`` before Filter,
    ``store_schedule_results`` after the node is chosen, ``assumed`` once the pod is assumed."""

    def __init__(self, profile: str, *, metrics: Metrics | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.profile = profile
        self.clock = clock
        self.state: _BatchState | None = None
        self.last: _LastCycle | None = None
        self.batched_pods = 0           # pods that took a hint (upstream's test-only counter)
        self._attempts = Children(metrics.batch_attempts) if metrics else None
        self._flushes = Children(metrics.batch_cache_flushed) if metrics else None
        self._hint_durations = Children(metrics.get_node_hint_duration) if metrics else None
        self._store_durations = Children(metrics.store_schedule_results_duration) if metrics else None

    def _empty(self) -> bool:
        return self.state is None or len(self.state.nodes) == 0

    def _flush(self, reason: str) -> None:
        if self._flushes is not None:
            self._flushes(self.profile, reason).inc()

    def _attempt(self, result: str) -> None:
        if self._attempts is not None:
            self._attempts(self.profile, result).inc()

    def get_node_hint(self, pod: Pod, signature: Signer, cycle: int, *, order: Rows,
                      candidates: int, stamp: int, nominations: bool,
                      check: Callable[[int], Status], row_of: Callable[[str], int | None],
                      select: Callable[[npt.NDArray[np.int64]], int]) -> Hint | None:
        """A hint for ``pod`` in scheduling cycle ``cycle``, or None. ``check(row)`` runs the
        Filter plugins on one node; ``select(totals)`` is the framework's ``select_position``."""
        t0 = time.perf_counter()
        hint = self._hint(pod, signature, cycle, order, candidates, stamp, nominations, check, row_of, select)
        if hint is None:
            self._attempt(BATCH_ATTEMPT_NO_HINT)
        if self._hint_durations is not None:
            self._hint_durations("no_hint" if hint is None else "hint", self.profile).observe(
                time.perf_counter() - t0)
        return hint

    def _hint(self, pod: Pod, signature: Signer, cycle: int, order: Rows, candidates: int,
              stamp: int, nominations: bool, check: Callable[[int], Status],
              row_of: Callable[[str], int | None], select: Callable[[npt.NDArray[np.int64]], int]) -> Hint | None:
        st, last = self.state, self.last
        if st is None or self._empty() or last is None:
            return None
        if pod.nominated_node_name:
            return None
        if cycle != last.cycle + 1:
            self._flush(FLUSH_POD_SKIPPED)
            return None
        if not last.succeeded:
            self._flush(FLUSH_POD_FAILED)
            return None
        sig = signature()
        if sig is None or sig != st.signature:
            self._flush(FLUSH_POD_INCOMPATIBLE)
            return None
        if self.clock() > st.created + MAX_BATCH_AGE:
            self._flush(FLUSH_EXPIRED)
            return None
        if stamp != st.stamp or order is not st.order or candidates != st.candidates or nominations:
            self._flush(FLUSH_CLUSTER_CHANGED)
            return None
        row = row_of(last.chosen)
        if row is None or row != last.row:
            self._flush(FLUSH_NODE_MISSING)
            return None
        s = check(row)
        if not s.is_rejected():
            self._flush(FLUSH_NODE_NOT_FULL)
            return None
        nodes = st.nodes
        # The full cycle's search would reject the taken node with this status: the record counts it.
        nodes.node_to_status.set_row(row, s)
        rows, totals, per_plugin = nodes.rescore()
        # One node left: the full cycle takes it unscored (no random draw); else its own choice.
        pos = None if len(rows) == 1 else select(totals)
        chosen = int(rows[0 if pos is None else pos])
        nodes.alive[np.flatnonzero(nodes.rows == chosen)] = False
        return Hint(chosen, rows, totals, per_plugin, pos, nodes.node_to_status)

    def store_schedule_results(self, signature: Signer, hinted: str | None, chosen: str, row: int,
                               others: ScoredNodes | None, cycle: int, *, order: Rows, candidates: int,
                               partial: bool = False) -> None:
        """Upstream's ``StoreScheduleResults``: remember the cycle; keep the list when its hint was
        used, else keep this cycle's other nodes for the next pod (or flush)."""
        t0 = time.perf_counter()
        try:
            self._store(signature, hinted, chosen, row, others, cycle, order, candidates, partial)
        finally:
            if self._store_durations is not None:
                self._store_durations(self.profile).observe(time.perf_counter() - t0)

    def _store(self, signature: Signer, hinted: str | None, chosen: str, row: int,
               others: ScoredNodes | None, cycle: int, order: Rows, candidates: int, partial: bool) -> None:
        self.last = _LastCycle(cycle, chosen, row, True)
        if hinted is not None and hinted == chosen:
            self._attempt(BATCH_ATTEMPT_HINT_USED)
            self.batched_pods += 1
            return
        if hinted is not None:
            self._attempt(BATCH_ATTEMPT_HINT_NOT_USED)
        sig = signature() if others is not None and len(others) > 0 else None
        if sig is not None and others is not None:
            self.state = _BatchState(sig, others, self.clock(), order, candidates)
            return
        if self.state is not None:
            self._flush(FLUSH_PARTIAL_SEARCH if partial
                        else FLUSH_POD_NOT_BATCHABLE if signature() is None else FLUSH_EMPTY_LIST)
        self.state = None

    def assumed(self, stamp: int) -> None:
        """The chosen pod is assumed: the cache as it is now is what the list stands for."""
        if self.state is not None:
            self.state.stamp = stamp

    def failed(self, cycle: int) -> None:
        """The cycle's pod was not scheduled (upstream records nothing; its next pod then sees a
        skipped cycle). Kept explicit for Reserve/Permit rejections after a store."""
        if self.last is not None and self.last.cycle == cycle:
            self.last.succeeded = False
