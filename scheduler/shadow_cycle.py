"""Shadow profiles in the live cycle (``profiles/shadows.py``): how a shadow would have decided.

The live cycle (``Scheduler._run_shadow``) hands its attempt over once it has decided a pod. A
shadow that filters as the live profile re-runs only the Score plugins it configures differently
and reuses the live per-plugin scores for the rest (``_shadow_rescored``); one that filters
differently, or where extenders take part, runs its own whole algorithm on the same snapshot
(``_shadow_whole``, through the cycle's ``schedule_pod``, passed in so that this module does not
import the cycle). Nothing here changes the live cycle's state: the shadow works on copies.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from scheduler.cache import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import fit_error_message
from scheduler.framework.runtime import Framework
from scheduler.framework.status import Code
from scheduler.model import Pod
from scheduler.outcomes import Attempt
from scheduler.profiles.shadows import ReusePlan, Shadow, ShadowDifference

__all__ = ["SchedulePod", "shadow_decision"]

# The cycle's algorithm for one pod, as a shadow runs it (``Scheduler._schedule_pod(..., shadow=True)``).
SchedulePod = Callable[[Framework, CycleState, Pod, Snapshot], Attempt]


def shadow_decision(shadow: Shadow, live: Framework, state: CycleState, pod: Pod, snapshot: Snapshot,
                    a: Attempt, schedule_pod: SchedulePod) -> tuple[str, ShadowDifference | None]:
    """How ``shadow`` would decide ``pod`` against the live cycle's attempt ``a``: ("agreed",
    None), or ("differed" or "wouldBePending", the difference)."""
    sfw = shadow.framework
    plan = shadow.plan(live)
    live_score = int(a.scored[1][a.scored[3]]) if a.scored is not None and a.node is not None else None
    node: str | None
    score: int | None = None
    reason = ""
    if not plan.filters_same or a.status.code == Code.ERROR or sfw.extenders or live.extenders:
        # It filters differently (or extenders take part, whose scores are no per-plugin scores
        # to reuse): its own whole algorithm, on the same snapshot.
        node, score, reason = _shadow_whole(sfw, pod, snapshot, a, schedule_pod)
    elif a.node is None:
        node, reason = None, a.status.message() or fit_error_message(a.num_all_nodes, a.diagnosis)
    elif a.scored is None:
        node = a.node                                   # one feasible node: any scoring picks it
    else:
        node, score, reason = _shadow_rescored(sfw, plan, state, pod, snapshot, a, a.scored)
    if node == a.node:
        return "agreed", None
    outcome = "wouldBePending" if node is None else "differed"
    return outcome, ShadowDifference(pod.key, time.time(), a.node, live_score, node, score, reason)

def _shadow_whole(sfw: Framework, pod: Pod, snapshot: Snapshot, a: Attempt, schedule_pod: SchedulePod
                  ) -> tuple[str | None, int | None, str]:
    """The shadow's own whole algorithm on the live cycle's snapshot: (node, score, reason)."""
    sa = schedule_pod(sfw, sfw.new_cycle_state(), pod, snapshot)
    node = sa.node
    score: int | None = None
    if sa.scored is not None and node is not None:
        score = int(sa.scored[1][sa.scored[3]])
        if a.node is not None and a.node != node:
            rows, totals = sa.scored[0], sa.scored[1]
            live_row = snapshot.row_of(a.node)
            hit = np.flatnonzero(rows == live_row)
            if len(hit) and totals[hit[0]] == totals.max():
                node = a.node                       # a tie: the shadow accepts the live node
    if node is None:
        return None, score, sa.status.message() or fit_error_message(sa.num_all_nodes, sa.diagnosis)
    return node, score, ""

def _shadow_rescored(sfw: Framework, plan: ReusePlan, state: CycleState, pod: Pod, snapshot: Snapshot,
                     a: Attempt, scored: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int]
                     ) -> tuple[str | None, int | None, str]:
    """The shadow filters as the live profile: re-run only the Score plugins it configures
    differently, reuse the live per-plugin scores for the others: (node, score, reason)."""
    rows, _, live_per_plugin, pos = scored
    s_state = state.copy()
    s_state.skip_score_plugins -= plan.rescored
    s = sfw.run_pre_score(s_state, pod, snapshot, rows, only=plan.rescored)
    totals = np.zeros(len(rows), np.int64)
    if s.is_success():
        totals, _, s = sfw.run_score(s_state, pod, snapshot, rows, only=plan.rescored)
    if not s.is_success():
        return None, None, s.message()
    for name, weight in sfw.score_weights().items():
        if name in plan.reused and name in live_per_plugin:
            totals = totals + live_per_plugin[name] * weight
    best = int(totals.max())
    if int(totals[pos]) == best:
        return a.node, best, ""                         # the live node is among the shadow's best
    return snapshot.node_info(int(rows[sfw.select_position(totals)])).name, best, ""
