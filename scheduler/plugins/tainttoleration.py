"""TaintToleration.

Filter: a node with a NoSchedule or NoExecute taint the pod does not tolerate is
UnschedulableAndUnresolvable, with upstream's reason ``node(s) had untolerated taint(s)`` (upstream
stopped naming the taint's key and value: a FailedScheduling event must not disclose them).
PreScore: the pod's tolerations with an empty or PreferNoSchedule effect, once per cycle
(upstream's ``getAllTolerationPreferNoSchedule``). Score: the number of PreferNoSchedule taints those do not
tolerate, normalised in reverse (fewer is better).

Both are computed once per *distinct taint set* and fanned out to the rows with one fancy index.

EnqueueExtensions: Node/Add and Node/UpdateNodeTaint, with upstream's queueing hint
(``isSchedulableAfterNodeChange``): a pod this plugin rejected is requeued only when the node had an
untolerated NoSchedule/NoExecute taint (or is new) and now has none. Anything that is not a node is
an error, which the runtime reads as Queue, as upstream. The pod's own toleration updates
(upstream's Pod/UpdatePodToleration hint, Queue for the target pod) are the queue's rule for a
pending pod's spec change (``SchedulingQueue.update``), so no hint is registered for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import TOLERATIONS_SIGNER_NAME, SignFragment, tolerations_signer
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Node, Pod, Taint, Toleration
from scheduler.plugins.helpers import default_normalize_score, derived, untolerated_taint_per_set

NAME = "TaintToleration"
_PRESCORE_KEY = "PreScore" + NAME
_HARD = frozenset({"NoSchedule", "NoExecute"})


ERR_REASON_UNTOLERATED = "node(s) had untolerated taint(s)"
_UNTOLERATED = Status.unresolvable(ERR_REASON_UNTOLERATED)


class TaintToleration:
    """Upstream's ``tainttoleration.TaintToleration``: Filter, PreScore, Score (NormalizeScore),
    EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: Filter and Score read the tolerations."""
        return ((TOLERATIONS_SIGNER_NAME, tolerations_signer(pod)),), SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        t = snapshot.table
        per_set = untolerated_taint_per_set(t, pod.tolerations, _HARD)
        bad = np.array([x is not None for x in per_set], np.bool_)
        if not np.count_nonzero(bad):       # every taint set tolerated (the usual): no row to read
            return fwk.FilterVerdict.passed(len(rows))
        failed = bad[t.taint_set[rows]]
        if not failed.any():
            return fwk.FilterVerdict(failed)
        # One reason for every untolerated taint set, so one status for all failing rows.
        return fwk.FilterVerdict(failed, [_UNTOLERATED], np.zeros(len(rows), np.int64))

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        # Never Skip: a pod without tolerations is still scored (an untolerated PreferNoSchedule
        # taint counts against the node), as upstream.
        state.write(_PRESCORE_KEY, _prefer_no_schedule(pod))
        return SUCCESS

    def _per_set(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> fwk.Scores:
        """Per taint set of the table, how many of its PreferNoSchedule taints the pod does not tolerate."""
        t = snapshot.table
        # PreScore's state; computed here when a caller scores without it (explain, tests).
        prefer = state.get(_PRESCORE_KEY)
        if not isinstance(prefer, tuple):
            prefer = _prefer_no_schedule(pod)

        def counts() -> fwk.Scores:
            return np.array([sum(1 for x in taints if x.effect == "PreferNoSchedule"
                                 and not any(tol.tolerates(x) for tol in prefer))
                             for taints in t.taint_sets], np.int64)
        per_set: fwk.Scores = derived(t, ("prefer-no-schedule", prefer, len(t.taint_sets)), counts)
        return per_set

    def uniform_score(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> int | None:
        """UniformScorePlugin: 0 on every row while no node has a PreferNoSchedule taint the pod
        does not tolerate (the usual cluster), so the runtime reads no row for this plugin."""
        return None if np.count_nonzero(self._per_set(state, pod, snapshot)) else 0

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        per_set = self._per_set(state, pod, snapshot)
        if not np.count_nonzero(per_set):   # no untolerated PreferNoSchedule taint anywhere: no row to read
            return np.zeros(len(rows), np.int64)
        return per_set[snapshot.table.taint_set[rows]]

    def normalize_score(self, state: CycleState, pod: Pod, scores: fwk.Scores) -> Status:
        default_normalize_score(scores, reverse=True)
        return SUCCESS

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return self

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add"), is_schedulable_after_node_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeTaint"), is_schedulable_after_node_change))


def is_schedulable_after_node_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterNodeChange``: Queue only when the change took away the last
    untolerated NoSchedule/NoExecute taint (a node added counts as having had one). Raises
    ``TypeError`` for objects that are not nodes (upstream's ``util.As`` error: Queue)."""
    old, new = event.old, event.new
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        raise TypeError(f"expected nodes, got {type(old).__name__} and {type(new).__name__}")
    was_untolerated = old is None or _has_untolerated(old.taints, pod.tolerations)
    return was_untolerated and not _has_untolerated(new.taints, pod.tolerations)


def _has_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> bool:
    """Upstream's ``FindMatchingUntoleratedTaint`` with ``DoNotScheduleTaintsFilterFunc``."""
    return any(t.effect in _HARD and not any(tol.tolerates(t) for tol in tolerations) for t in taints)


def _prefer_no_schedule(pod: Pod) -> tuple[Toleration, ...]:
    return tuple(tol for tol in pod.tolerations if tol.effect in ("", "PreferNoSchedule"))


def new(args: None, handle: Handle) -> TaintToleration:
    return TaintToleration()


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = TaintToleration
    __: type[fwk.BatchScorePlugin] = TaintToleration
    ___: type[fwk.PreScorePlugin] = TaintToleration
    _uniform: type[fwk.UniformScorePlugin] = TaintToleration
