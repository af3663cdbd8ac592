"""The scheduling cycle and the binding cycle (upstream's ``schedule_one.go``).

::

    pop ─► schedule_one (sync, CPU only, under the cache lock)
             snapshot ─► PreFilter ─► [nominated node first] ─► Filter (sampled, round robin)
                 │ no node fits                      │ ≥ 1 feasible
                 ▼                                   ▼
             PostFilter ─► FitError             PreScore ─► Score ─► select host
             (preemption nominates)                  │
                 │                                   ▼
                 ▼                             assume (drops any nomination) ─► Reserve ─► Permit ─► Binding
             Failure(requeue, report)                                                             │
    finish (async I/O) ◄─────────────────────────────────────────────────────────────────────────┘
        Binding: [nominate] ─► WaitOnPermit ─► PreBind ─► Bind ─► PostBind ─► report Scheduled ─► queue.done
                 on error (any exception, a reset or a timeout too): Unreserve ─► forget ─►
                     requeue with backoff ─► report SchedulerError
                 on 409 (bound elsewhere) / 404 (gone): forget, drop; never retried
                 cancelled (deadline passed, leadership lost): Unreserve ─► forget ─► requeue
        Failure: queue.add_unschedulable_if_not_present ─► report FailedScheduling

Opportunistic batching (``framework/batch.py``, gate ``OpportunisticBatching``): after PreFilter, a
pod whose signature equals the previous pod's may take the next node of that pod's scored list
(``get_node_hint``), after one Filter run on it, and skip the search and Score; every scored cycle
stores its other nodes for the next pod (``store_schedule_results``), and the assume stamps the
list with the cache's mutation count (``assumed``). The batch only answers what the full search
would, so the cycle's outcome, its round-robin start and its random draws are the same either way.

NominatedNodeNameForExpectation (``nominate_for_expectation``): the binding cycle writes the pod's
``status.nominatedNodeName`` before a Permit wait or a PreBind whose PreBindPreFlight says it has
work, so an autoscaler sees where the pod goes; a binding failure, and a scheduling failure that
no PostFilter answered, clear it (upstream's ``clearNominatedNode``), and the API server clears it
at the Binding. A nomination another component set is tried first and reserved, as preemption's.

A profile's HTTP extenders (``framework/extender.py``) filter after the Filter plugins and add
their scores after Score, inside the synchronous cycle (each call bounded by its timeout), and an
extender that binds takes the Bind plugins' place in the binding cycle.

``schedule_one`` returns an outcome object; ``finish`` carries out its I/O through the
``SchedulerClient``. Splitting them is what lets the worker start the next cycle while earlier
bindings are still in flight, as upstream runs binding in a goroutine.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Callable

import numpy as np

from scheduler.cache import Cache, Snapshot
from scheduler.client import SchedulerClient
from scheduler.errors import ConflictError, NotFoundError
from scheduler.framework.batch import ScoredNodes
from scheduler.framework.batch_run import BatchRun
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.decision import (
    DECISION_ANNOTATION,
    DEFAULT_TOP_NODES,
    DecisionRecord,
    DecisionStore,
    TopScores,
    bounded_filtered,
    top_scores,
)
from scheduler.framework.diagnosis import (
    NO_NODES_AVAILABLE,
    Diagnosis,
    NodeToStatus,
    fit_error_message,
    reason_histogram,
)
from scheduler.framework.extender import (
    EXTENDER_NAME,
    extenders_bind,
    find_nodes_that_pass_extenders,
    prioritize_with_extenders,
)
from scheduler.framework.interfaces import PostFilterResult
from scheduler.framework.runtime import PREFILTER_RESULT_PLUGINS, Framework
from scheduler.framework.status import Code, Status
from scheduler.framework.types import ClusterEvent, QueuedPodInfo
from scheduler.logonce import CauseLog, cause_of
from scheduler.metrics import Children, Metrics
from scheduler.model import Pod
from scheduler.outcomes import Attempt as _Attempt
from scheduler.outcomes import Binding, Dropped, Failure, GroupOutcome, Outcome, ScheduleResult
from scheduler.profiles.profile_map import ProfileMap
from scheduler.profiles.shadows import Shadow, Shadows
from scheduler.queue import SchedulingQueue
from scheduler.shadow_cycle import shadow_decision

__all__ = ["Binding", "Dropped", "Failure", "GroupOutcome", "Outcome", "ScheduleResult", "Scheduler"]

log = logging.getLogger(__name__)
REASON_UNSCHEDULABLE = "Unschedulable"
REASON_SCHEDULER_ERROR = "SchedulerError"
NOTE_LENGTH_LIMIT = 1024
_SKIP = Status(Code.SKIP)     # RunPreBindPreFlights' answer when no PreBind plugin has work


def truncate_message(msg: str) -> str:
    if len(msg) <= NOTE_LENGTH_LIMIT:
        return msg
    return msg[: NOTE_LENGTH_LIMIT - 4] + " ..."


class Scheduler:
    """Runs one pod's scheduling cycle (``schedule_one``, synchronous) and its binding cycle
    (``finish``, async I/O), as upstream's ``schedule_one.go``, over the profile map, cache and queue."""

    def __init__(self, profiles: ProfileMap, cache: Cache, queue: SchedulingQueue, client: SchedulerClient, *,
                 metrics: Metrics | None = None, clock: Callable[[], float] = time.monotonic,
                 decisions: DecisionStore | None = None, shadows: Shadows | None = None,
                 batching: bool = True, nominate_for_expectation: bool = True) -> None:
        self.profiles = profiles
        # Feature gate NominatedNodeNameForExpectation (KEP-5278, beta and on in 1.37): the binding
        # cycle sets the pod's nominatedNodeName before a Permit wait or a PreBind that has work.
        self.nominate_for_expectation = nominate_for_expectation
        # Feature gate OpportunisticBatching (KEP-5598, framework/batch.py), on by default as in
        # upstream 1.35; ``cycle`` counts the pods popped (upstream's scheduling cycle), which is how
        # the batch knows that no other pod was scheduled between two of its pods.
        self.batching = batching
        self.cycle = 0
        self.decisions = decisions
        self.shadows = shadows
        self.cache = cache
        self.queue = queue
        self.client = client
        self.metrics = metrics
        # label children resolved once (metrics.Children): these are observed for every pod
        self._attempts = Children(metrics.schedule_attempts if metrics else None)
        self._attempt_durations = Children(metrics.scheduling_attempt_duration if metrics else None)
        self._sli_durations = Children(metrics.pod_scheduling_sli_duration if metrics else None)
        self.clock = clock
        # Asked before PreBind and before Bind (the service's ``is_leader``: leading, and the lease
        # not possibly taken by another replica yet). False: the cycle is handed back, not failed.
        self.may_bind: Callable[[], bool] = lambda: True
        self.api_log = CauseLog(log)
        # Seconds spent keeping decision records (``_record``), summed: the benchmark divides it by
        # the measured phase's time for the recording's share of a run, measured inside the run,
        # pod by pod, where a paired on/off run on a shared machine swings by more than the effect
        # (BENCHMARKS.md, issue #20). ``perf_counter``: 0.05 µs a read, ``process_time`` 0.6.
        self.recording_seconds = 0.0
        # The PodGroup cycle (``scheduler/podgroup_cycle.py``, installed by the service with the
        # GenericWorkload gate): a gang member's outcome, or None for a pod scheduled alone.
        self.group_cycle: Callable[[Framework, QueuedPodInfo], GroupOutcome | None] | None = None

    # --- the scheduling cycle --------------------------------------------------------------
    def schedule_one(self, info: QueuedPodInfo) -> Outcome:
        pod = info.pod
        self.cycle += 1
        cycle = self.cycle
        fwk = self.profiles.for_pod(pod)
        if fwk is None:
            self.queue.done(info.uid)
            return Dropped(info, f"no profile serves schedulerName {pod.scheduler_name!r}")
        if pod.deleting:
            self.queue.done(info.uid)
            return Dropped(info, f"skip schedule deleting pod: {pod.key}")
        if self.group_cycle is not None and pod.scheduling_group:
            group = self.group_cycle(fwk, info)
            if group is not None:
                return group
        started = time.perf_counter()
        with self.cache.lock:
            if self.cache.get_pod(pod.uid) is not None:
                self.queue.done(info.uid)
                return Dropped(info, "pod is already assumed or assigned")
            snapshot = self.cache.snapshot()
            state = fwk.new_cycle_state()
            t_alg = time.perf_counter()
            batching = self._batching(fwk)
            attempt = self._schedule_pod(fwk, state, pod, snapshot, cycle=cycle if batching else None)
            if self.metrics is not None:
                self.metrics.scheduling_algorithm_duration.observe(time.perf_counter() - t_alg)
            shadows = self.shadows.for_live(fwk.profile_name) if self.shadows is not None else ()
            for shadow in shadows:
                self._run_shadow(shadow, fwk, state, pod, snapshot, attempt)
            if attempt.node is None:
                return self._failure(fwk, state, info, attempt, started, snapshot)
            decision = self._record(fwk, info, attempt, snapshot, None)
            assumed = self.cache.assume_pod(pod, attempt.node)
            if batching:
                fwk.batch.assumed(snapshot.table.mutations)
            self.queue.nominator.delete(pod.uid)
            result = ScheduleResult(attempt.node, attempt.evaluated, attempt.feasible)
            s = fwk.run_reserve(state, assumed, attempt.node)
            if s.is_success():
                s, wait = fwk.run_permit(state, assumed, attempt.node)
                if s.is_success() or s.is_wait():
                    if s.is_wait():
                        return Binding(info, fwk, state, assumed, result, started, wait, s.plugin, decision)
                    return Binding(info, fwk, state, assumed, result, started, decision=decision)
            # Reserve or Permit rejected: undo, and fail as upstream does (a FitError over 1 node).
            if batching:
                fwk.batch.failed(cycle)
            fwk.run_unreserve(state, assumed, attempt.node)
            self.cache.forget_pod(assumed)
            attempt = _Attempt(status=s, num_all_nodes=1)
            attempt.diagnosis.node_to_status.absent = s
            if s.is_rejected():
                attempt.diagnosis.unschedulable_plugins.add(s.plugin)
            return self._failure(fwk, state, info, attempt, started, snapshot, run_post_filter=False)

    def _batching(self, fwk: Framework) -> bool:
        """Whether this cycle may use and feed ``fwk``'s opportunistic batch: the gate is on, the
        profile signs pods, and no shadow profile reads the live cycle (it re-runs Score on it)."""
        return (self.batching and fwk.signatures_enabled
                and not (self.shadows is not None and self.shadows.for_live(fwk.profile_name)))

    def _schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, *,
                      explain: bool = False, all_nodes: bool = False, shadow: bool = False,
                      cycle: int | None = None) -> _Attempt:
        """Upstream's ``schedulePod``: PreFilter, find the feasible nodes, prioritize them, select
        the host. With ``cycle`` (batching on), the profile's batch is asked for a hint after
        PreFilter and told the outcome after the search (``BatchRun``); the search itself does
        not know of it."""
        a = _Attempt(num_all_nodes=snapshot.num_nodes)
        if snapshot.num_nodes == 0:
            a.status = Status.unresolvable(NO_NODES_AVAILABLE)
            return a
        candidates = self._run_pre_filter(fwk, state, pod, snapshot, a)
        if candidates is None:
            return a
        batch = BatchRun(fwk, pod, snapshot, cycle, len(candidates)) if cycle is not None else None
        if batch is not None and self._take_hint(fwk, state, pod, snapshot, a, batch):
            return a
        feasible = self._find_nodes_that_fit_pod(fwk, state, pod, snapshot, a, candidates,
                                                 explain=explain, all_nodes=all_nodes)
        if feasible is None:
            return a
        if len(feasible) == 1 and not explain:
            a.node = snapshot.node_info(int(feasible[0])).name
            if batch is not None:
                batch.store(a.node, int(feasible[0]), None)
            return a
        # The raw scores are kept only for a list the next pod may reuse (BatchRun.raw_scores).
        raw = batch.raw_scores(a.evaluated, len(self.queue.nominator)) if batch is not None else None
        scored = self._prioritize_nodes(fwk, state, pod, snapshot, a, feasible, raw)
        if scored is None:
            return a
        totals, per_plugin = scored
        pos = fwk.select_position(totals)               # upstream's selectHost
        if explain or shadow or self._keeps_scores(fwk, pod):
            a.scored = (feasible, totals, per_plugin, pos)
        a.node = snapshot.node_info(int(feasible[pos])).name
        if batch is not None:
            self._store_scored(fwk, state, pod, a, feasible, per_plugin, raw, pos, batch)
        return a

    def _run_pre_filter(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, a: _Attempt
                        ) -> np.ndarray | None:
        """PreFilter, as upstream's ``findNodesThatFitPod`` begins: the candidate rows (all nodes,
        or those a PreFilterResult names), or None with ``a.status`` set."""
        diag = a.diagnosis
        pre_result, s = fwk.run_pre_filter(state, pod, snapshot)
        if not s.is_success():
            a.status = s
            if s.is_rejected():
                diag.pre_filter_msg = s.message()
                diag.node_to_status.absent = s
                if s.plugin:
                    diag.unschedulable_plugins.add(s.plugin)
            return None
        if pre_result is None or pre_result.node_names is None:
            return snapshot.node_order
        rows = [r for r in (snapshot.row_of(n) for n in pre_result.node_names) if r is not None]
        plugins = " ".join(state.get(PREFILTER_RESULT_PLUGINS) or ())
        diag.node_to_status.absent = Status.unresolvable(f"node(s) didn't satisfy plugin(s) [{plugins}]")
        return snapshot.in_order(np.array(rows, np.int64))

    def _find_nodes_that_fit_pod(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot,
                                 a: _Attempt, candidates: np.ndarray, *, explain: bool, all_nodes: bool
                                 ) -> np.ndarray | None:
        """Upstream's ``findNodesThatFitPod`` after PreFilter: the nominated node alone first, else
        the Filter search over ``candidates`` and the extenders' filters. The feasible rows (at
        least one), or None with ``a.status`` set; ``a``'s counts are set either way."""
        diag = a.diagnosis
        feasible = None if all_nodes else self._evaluate_nominated_node(fwk, state, pod, snapshot, candidates)
        if feasible is None:
            feasible, s = fwk.find_nodes_that_pass_filters(state, pod, snapshot, candidates, diag,
                                                           num_to_find=len(candidates) if all_nodes else None,
                                                           rotate=not explain)
            if s.is_success() and fwk.extenders and len(feasible):
                n = len(feasible)
                feasible, s = find_nodes_that_pass_extenders(fwk.extenders, pod, snapshot, feasible,
                                                             diag.node_to_status)
                if s.is_success() and len(feasible) != n:
                    # Extenders register no events: any cluster event may help (upstream #122019).
                    diag.unschedulable_plugins.add(EXTENDER_NAME)
            if not s.is_success():
                a.status = s
                return None
        a.feasible = len(feasible)
        a.evaluated = len(feasible) + len(diag.node_to_status)
        if len(feasible) == 0:
            a.status = Status(Code.UNSCHEDULABLE)
            return None
        return feasible

    def _evaluate_nominated_node(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot,
                                 candidates: np.ndarray) -> np.ndarray | None:
        """The node preemption made room on, tried alone (upstream's ``evaluateNominatedNode``):
        its row if it passes the filters (with the nominated pods) and the extenders, else None."""
        nominated = pod.nominated_node_name or self.queue.nominator.node_of(pod.uid)
        if not nominated:
            return None
        row = snapshot.row_of(nominated)
        if (row is None or not bool(np.isin(row, candidates))
                or not fwk.run_filter_with_nominated_pods(state, pod, snapshot, row).is_success()):
            return None
        feasible = np.array([row], np.int64)
        if not fwk.extenders:
            return feasible
        # The extenders must accept it too; their verdict on it is kept only by the full search
        # (upstream logs an error here and searches on).
        kept, s = find_nodes_that_pass_extenders(fwk.extenders, pod, snapshot, feasible, NodeToStatus())
        if not s.is_success():
            log.error("Evaluation failed on nominated node pod=%s node=%s: %s", pod.key, nominated, s.message())
        return kept if s.is_success() and len(kept) else None

    def _prioritize_nodes(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, a: _Attempt,
                          feasible: np.ndarray, raw: dict[str, np.ndarray] | None
                          ) -> tuple[np.ndarray, dict[str, np.ndarray]] | None:
        """Upstream's ``prioritizeNodes``: PreScore, Score and the extenders' priorities over the
        feasible rows. (totals, per-plugin normalised scores), or None with ``a.status`` set."""
        s = fwk.run_pre_score(state, pod, snapshot, feasible)
        if not s.is_success():
            a.status = s
            return None
        totals, per_plugin, s = fwk.run_score(state, pod, snapshot, feasible, raw=raw)
        if not s.is_success():
            a.status = s
            return None
        if fwk.extenders:
            nodes = [snapshot.node_info(r).node for r in feasible.tolist()]
            totals = prioritize_with_extenders(fwk.extenders, pod, nodes, totals, per_plugin, snapshot)
            # The calls let go of the cache: a node removed meanwhile (its row freed, or another
            # node's now) fails this attempt, which is retried on the cache as it is.
            gone = [n.name for n, r in zip(nodes, feasible.tolist(), strict=True) if snapshot.row_of(n.name) != r]
            if gone:
                a.status = Status.as_error(RuntimeError(f"node {gone[0]!r} was removed while the extenders "
                                                        f"were called"))
                return None
        return totals, per_plugin

    def _keeps_scores(self, fwk: Framework, pod: Pod) -> bool:
        """Whether the Score run is kept on the attempt: for a decision record, or for a shadow
        profile that reuses the live cycle's scores."""
        return (self._keep_scores(pod)
                or (self.shadows is not None and bool(self.shadows.for_live(fwk.profile_name))))

    # --- opportunistic batching (framework/batch.py) ----------------------------------------
    def _take_hint(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot, a: _Attempt,
                   batch: BatchRun) -> bool:
        """Place ``pod`` on the batch's hint, as the full search would have (the module docstring of
        ``framework/batch.py`` says why it is the same node); False if there is no hint or the
        hinted node fails its Filter run (upstream's evaluateNominatedNode for a hint), and the
        full search runs."""
        hint = batch.hint(state, nominations=len(self.queue.nominator) > 0)
        if hint is None:
            return False
        node = snapshot.node_info(hint.row).name
        if not fwk.run_filter_on_node(state, pod, snapshot, hint.row).is_success():
            return False
        a.diagnosis.node_to_status = hint.node_to_status
        a.feasible = len(hint.rows)
        a.evaluated = len(hint.rows) + len(hint.node_to_status)
        # The full search visits every candidate, so its round-robin start moves by all of them.
        fwk.next_start_node_index %= batch.candidates
        if hint.pos is not None and self._keep_scores(pod):
            a.scored = (hint.rows, hint.totals, hint.per_plugin, hint.pos)
        a.node = node
        batch.store(node, hint.row, None)
        return True

    def _keep_scores(self, pod: Pod) -> bool:
        return pod.explain or (self.decisions is not None and self.decisions.enabled)

    def _store_scored(self, fwk: Framework, state: CycleState, pod: Pod, a: _Attempt, feasible: np.ndarray,
                      per_plugin: dict[str, np.ndarray], raw: dict[str, np.ndarray] | None, pos: int,
                      batch: BatchRun) -> None:
        """Upstream's StoreScheduleResults after a scored cycle: the feasible nodes but the chosen
        one, for the next pod, when they stand for a search over every candidate node."""
        others: ScoredNodes | None = None
        if raw is not None:
            scores = [(name, w, raw[name] if name in raw else per_plugin[name], ext if name in raw else None)
                      for name, w, ext in fwk.score_entries() if name in per_plugin]
            alive = np.ones(len(feasible), np.bool_)
            alive[pos] = False
            others = ScoredNodes(feasible, scores, state, pod, a.diagnosis.node_to_status, alive)
        batch.store(a.node or "", int(feasible[pos]), others, partial=raw is None)

    # --- shadow profiles (profiles/shadows.py) --------------------------------------------
    def _run_shadow(self, shadow: Shadow, live: Framework, state: CycleState, pod: Pod, snapshot: Snapshot,
                    a: _Attempt) -> None:
        """Decide ``pod`` with ``shadow`` on the live cycle's snapshot and count how it compares. A
        shadow never changes the live cycle: it works on copies, and its failures are only logged."""
        try:
            outcome, difference = shadow_decision(shadow, live, state, pod, snapshot, a, self._shadow_schedule_pod)
        except Exception as e:
            self.api_log.report(f"shadow {shadow.cr_name}: {type(e).__name__}",
                                "shadow profile %s failed on %s: %s", shadow.cr_name, pod.key, e)
            return
        shadow.stats.record(outcome, difference)
        if self.metrics is not None:
            self.metrics.shadow_decisions.labels(shadow.cr_name, outcome).inc()

    def _shadow_schedule_pod(self, fwk: Framework, state: CycleState, pod: Pod, snapshot: Snapshot) -> _Attempt:
        return self._schedule_pod(fwk, state, pod, snapshot, shadow=True)

    def _record(self, fwk: Framework, info: QueuedPodInfo, a: _Attempt, snapshot: Snapshot,
                preemption: tuple[str, tuple[str, ...]] | None) -> DecisionRecord | None:
        """Keep this attempt's decision record (``framework/decision.py``) when recording is on; return
        it when the pod asked for it on itself (``EXPLAIN_ANNOTATION``), which it gets even when the
        store is off: the annotation is the pod owner's explicit request."""
        store = self.decisions
        recording = store is not None and store.enabled
        if not recording and not info.pod.explain:
            return None
        t0 = time.perf_counter()
        record = self._make_record(fwk, info, a, snapshot, preemption,
                                   store.top_nodes if store is not None else DEFAULT_TOP_NODES)
        if recording and store is not None:
            store.put(record)
        self.recording_seconds += time.perf_counter() - t0
        return record if info.pod.explain else None

    def _make_record(self, fwk: Framework, info: QueuedPodInfo, a: _Attempt, snapshot: Snapshot,
                     preemption: tuple[str, tuple[str, ...]] | None, top_nodes: int) -> DecisionRecord:
        scores: TopScores | None = None
        if a.scored is not None:
            rows, totals, per_plugin, pos = a.scored
            scores = top_scores(rows, totals, per_plugin, fwk.score_weights(), top_nodes,
                                lambda r: snapshot.table.info(r).name, pos)
        # A pod left pending: the FitError's histogram, nodes a PreFilter excluded included. A pod
        # placed: the nodes evaluated and rejected on the way (the search stopped once it had enough).
        nts = a.diagnosis.node_to_status
        if a.node is not None and not len(nts):
            filtered: tuple[tuple[str, int], ...] = ()           # nothing rejected on the way
        else:
            filtered = bounded_filtered(reason_histogram(a.num_all_nodes if a.node is None else len(nts),
                                                         a.diagnosis))
        return DecisionRecord(info.key, fwk.profile_name, fwk.generation, info.attempts, time.time(), a.node,
                              a.evaluated, a.feasible, filtered, scores, preemption)

    def explain(self, fwk: Framework, pod: Pod, *, all_nodes: bool = False, top_nodes: int = 3
                ) -> tuple[DecisionRecord, list[dict[str, object]]]:
        """What ``fwk`` would decide for ``pod`` on the cache as it is, without assuming, binding or
        preempting anything (``kopf-scheduler explain``). With ``all_nodes``, every node is filtered
        (no sampling) and every feasible one scored, and the second value lists each node: its
        first failing plugin and reasons, or its total and weighted per-plugin scores."""
        info = QueuedPodInfo(pod, time.monotonic(), time.monotonic(), attempts=1)
        with self.cache.lock:
            snapshot = self.cache.snapshot()
            state = fwk.new_cycle_state()
            a = self._schedule_pod(fwk, state, pod, snapshot, explain=True, all_nodes=all_nodes)
            k = snapshot.num_nodes if all_nodes else top_nodes
            record = self._make_record(fwk, info, a, snapshot, None, top_nodes)
            nodes: list[dict[str, object]] = []
            if all_nodes:
                scored: dict[str, dict[str, object]] = {}
                if a.scored is not None:
                    rows, totals, per_plugin, pos = a.scored
                    for s in top_scores(rows, totals, per_plugin, fwk.score_weights(), k,
                                        lambda r: snapshot.table.info(r).name, pos).to_json():
                        scored[str(s["node"])] = s
                nts = a.diagnosis.node_to_status
                for row in snapshot.node_order.tolist():
                    name = snapshot.table.info(row).name
                    if name in scored:
                        nodes.append({"node": name, "feasible": True, "total": scored[name]["total"],
                                      "plugins": scored[name]["plugins"]})
                        continue
                    st = nts.get(row)
                    nodes.append({"node": name, "feasible": st is None and a.feasible > 0,
                                  "plugin": st.plugin if st is not None else None,
                                  "reasons": list(st.reasons) if st is not None else
                                  ([a.status.message()] if not a.status.is_success() else [])})
        return record, nodes

    def _failure(self, fwk: Framework, state: CycleState, info: QueuedPodInfo, a: _Attempt, started: float,
                 snapshot: Snapshot, *, run_post_filter: bool = True) -> Failure:
        s = a.status
        if s.code == Code.ERROR:
            log.error("error scheduling pod %s: %s", info.key, s.message())
            decision = self._record(fwk, info, a, snapshot, None)
            return Failure(info, fwk, s, s.message() or "internal error", started,
                           nominated_node=self._clear_nomination(info), error=True, decision=decision)
        diag = a.diagnosis
        nominated: str | None = None
        result: PostFilterResult | None = None
        if s.message() == NO_NODES_AVAILABLE:
            decision = self._record(fwk, info, a, snapshot, None)
            return Failure(info, fwk, s, NO_NODES_AVAILABLE, started, nominated_node=self._clear_nomination(info),
                           decision=decision)
        if not run_post_filter or not fwk.post_filter:
            # Reserve or Permit rejected, or no PostFilter to run: upstream's clearNominatedNode.
            nominated = self._clear_nomination(info)
        else:
            result, ps = fwk.run_post_filter(state, info.pod, diag.node_to_status, snapshot)
            if ps.code == Code.ERROR:
                log.error("PostFilter error for pod %s: %s", info.key, ps.message())
            elif ps.reasons:
                diag.post_filter_msg = ps.message()
            if result is not None:
                nominated = result.nominated_node_name
                # Recorded now, in the cycle, so the next cycle already counts the pod on its node
                # ("" clears it). A pod deleted later leaves the nominator with the queue. With a
                # preparation to await, once it succeeded (_report_failure).
                if info.uid in self.queue and result.prepare is None:
                    self.queue.nominator.add(info.pod, nominated)
        info.unschedulable_plugins = set(diag.unschedulable_plugins)
        info.pending_plugins = set(diag.pending_plugins)
        decision = self._record(fwk, info, a, snapshot, None if not nominated else (
            nominated, tuple(sorted(getattr(result, "victims", ()) or ()))))
        message = fit_error_message(a.num_all_nodes, diag)
        failure = Failure(info, fwk, s, message, started, nominated_node=nominated, decision=decision)
        if result is not None and result.prepare is not None:
            num_all_nodes = a.num_all_nodes

            def message_if_failed(error: str) -> str:
                # schedule_one.go: PostFilter's message is the FitError's PostFilterMsg, its
                # plugin's prefix included (defaultpreemption.go), and there is no nomination.
                diag.post_filter_msg = f"preemption: {error}"
                return fit_error_message(num_all_nodes, diag)
            failure.preparation, failure.message_if_failed = result.prepare, message_if_failed
        return failure

    def _group_failure(self, fwk: Framework, info: QueuedPodInfo, status: Status, message: str,
                       started: float) -> Failure:
        """A member of a gang whose PodGroup cycle did not meet its quorum: it fails with the group's
        message, and no PostFilter runs for it (workload-aware preemption is not built)."""
        return Failure(info, fwk, status, message, started, nominated_node=self._clear_nomination(info),
                       error=status.code == Code.ERROR)

    def _clear_nomination(self, info: QueuedPodInfo) -> str | None:
        """Upstream's ``clearNominatedNode`` (schedule_one.go, kubernetes/kubernetes#135007): a
        scheduling or binding failure other than a PostFilter's clears the pod's nomination, its
        own (NominatedNodeNameForExpectation) or another component's, in the nominator now and in
        the API with the failure report; ``""`` to clear, ``None`` when there is none to clear
        (``updatePod`` writes only a change)."""
        had = info.pod.nominated_node_name or self.queue.nominator.node_of(info.uid)
        self.queue.nominator.delete(info.uid)
        return "" if had else None

    # --- the I/O half ----------------------------------------------------------------------
    def abandon(self, outcome: Outcome) -> None:
        """The outcome's binding cycle was cancelled before it started (this replica stopped leading
        while it waited for its first turn): undo what the scheduling cycle did, synchronously, as
        ``_hand_back`` does for a cycle stopped later. A Binding is unreserved, forgotten and handed
        back; a Failure goes back to activeQ unreported (the replica that leads reports it)."""
        if isinstance(outcome, Binding):
            self._hand_back(outcome, "it started")
        elif isinstance(outcome, Failure):
            self.queue.put_back(outcome.info)
        elif isinstance(outcome, GroupOutcome):
            for member in outcome.members:
                self.abandon(member)

    async def finish(self, outcome: Outcome) -> None:
        if isinstance(outcome, GroupOutcome):
            await self._finish_group(outcome)
        elif isinstance(outcome, Binding):
            await self._bind(outcome)
        elif isinstance(outcome, Failure):
            await self._report_failure(outcome)
        else:
            log.debug("dropped pod %s: %s", outcome.info.key, outcome.why)

    async def _finish_group(self, g: GroupOutcome) -> None:
        """A PodGroup cycle's I/O: the failures are reported, the members' binding cycles run
        concurrently (each may wait at Permit for the others), then the group's condition."""
        bindings = [m for m in g.members if isinstance(m, Binding)]
        for m in g.members:
            if not isinstance(m, Binding):
                await self.finish(m)
        if bindings:
            await asyncio.gather(*(self._bind(b) for b in bindings))
        cond = g.condition
        if g.on_bound is not None and all(self.cache.get_pod(b.assumed.uid) is not None for b in bindings):
            cond = g.on_bound
        elif cond is not None and g.superseded is not None and g.superseded():
            return
        if cond is None:
            return
        try:
            await self.client.set_pod_group_condition(g.group, cond)
        except Exception as e:  # a status write must never lose the pods: they are bound or requeued
            self.api_log.report(f"PodGroup status: {cause_of(e)}", "cannot write the condition of PodGroup %s: %s",
                                g.group.key, e)

    async def _report_failure(self, f: Failure) -> None:
        info = f.info
        if f.preparation is not None:
            error = await f.preparation()
            if error and f.message_if_failed is not None:
                f.message, f.nominated_node = f.message_if_failed(error), None
            elif f.nominated_node is not None and info.uid in self.queue:
                self.queue.nominator.add(info.pod, f.nominated_node)
        result = "error" if f.error else "unschedulable"
        if f.error:
            self.queue.requeue_after_error(info)
        else:
            self.queue.add_unschedulable_if_not_present(info)
        self._observe_attempt(f.framework, result, f.started)
        await self._report(info, REASON_SCHEDULER_ERROR if f.error else REASON_UNSCHEDULABLE, f.message,
                           f.nominated_node)
        await self._annotate(info, f.decision)

    async def _annotate(self, info: QueuedPodInfo, decision: DecisionRecord | None) -> None:
        """Write the decision record on a pod that asked for it. Best effort, like events: a failed
        write is logged once per cause and never touches the pod's scheduling. (The annotation is
        not a scheduling property, so the pod update it causes requeues nothing.)"""
        if decision is None:
            return
        try:
            await self.client.annotate(info.pod, {DECISION_ANNOTATION: json.dumps(
                decision.to_json(), separators=(",", ":"))})
        except Exception as e:
            self.api_log.report(f"annotate decision: {cause_of(e)}", "cannot write the decision record on %s: %s",
                                info.key, e)

    async def _report(self, info: QueuedPodInfo, reason: str, message: str, nominated_node: str | None) -> None:
        try:
            await self.client.report_failure(info.pod, reason, truncate_message(message), nominated_node)
        except Exception as e:  # reporting must never lose the pod: it is already requeued
            self.api_log.report(f"report failure: {cause_of(e)}", "cannot report scheduling failure of %s: %s",
                                 info.key, e)

    async def _bind(self, b: Binding) -> None:
        fwk, state, pod, node = b.framework, b.state, b.assumed, b.result.node
        rejected = False
        try:
            # PreBindPreFlight first, as upstream's binding cycle: its Skips spare those PreBinds.
            s = fwk.run_pre_bind_pre_flights(state, pod, node) if fwk.pre_bind else _SKIP
            if s.code != Code.ERROR and not s.is_rejected():
                if self.nominate_for_expectation and (s.is_success() or b.permit_plugin):
                    b.nominated = await self._nominate(pod, node)
                if b.permit_plugin:
                    s = await fwk.wait_on_permit(pod, b.permit_wait, b.permit_plugin)
                    rejected = not s.is_success()
                if not rejected:
                    if not self.may_bind():
                        self._hand_back(b, "PreBind")
                        return
                    s = await fwk.run_pre_bind(state, pod, node)
                    if s.is_success():
                        if not self.may_bind():      # PreBind may have waited long (a volume, a claim)
                            self._hand_back(b, "Bind")
                            return
                        # An extender that binds, and is interested in the pod, binds it instead of
                        # the Bind plugins (upstream's extendersBinding, before RunBindPlugins).
                        bound, s = await extenders_bind(fwk.extenders, pod, node) if fwk.extenders else (False, s)
                        if not bound:
                            s = await fwk.run_bind(state, pod, node)
        except asyncio.CancelledError:
            # Abandoned: its deadline passed, or this replica stopped leading. Undo it here, while
            # cancelled (no I/O is possible), so the pod is never left assumed.
            self._undo_binding(b, Status.as_error(TimeoutError("the binding cycle was abandoned")))
            log.warning("binding cycle of %s to %s abandoned: the pod is requeued", pod.key, node)
            raise
        except Exception as e:  # whatever went wrong, the pod must not stay assumed
            s = Status.as_error(e)
        if not s.is_success():
            if not self.may_bind() and not isinstance(s.error, ConflictError | NotFoundError):
                # The lease went while a write was under way (the edge refuses a write it can no
                # longer make safely): not the pod's failure, and not this replica's to report.
                # (Bound elsewhere, or gone: dropped as always.)
                self._hand_back(b, "Bind")
                return
            await self._binding_failed(b, s, rejected=rejected)
            return
        self.cache.finish_binding(pod)
        fwk.run_post_bind(state, pod, node)
        self.queue.done(pod.uid)
        self._observe_attempt(fwk, "scheduled", b.started)
        if self.metrics is not None:
            self._sli_durations(_attempts_label(b.info.attempts)).observe(
                self.clock() - b.info.initial_attempt_timestamp)
            self.metrics.pod_scheduling_attempts.observe(b.info.attempts)
        log.debug("Successfully bound pod to node pod=%s node=%s evaluatedNodes=%d feasibleNodes=%d",
                  pod.key, node, b.result.evaluated_nodes, b.result.feasible_nodes)
        try:
            await self.client.report_scheduled(pod, node, f"Successfully assigned {pod.key} to {node}")
        except Exception as e:
            self.api_log.report(f"post Scheduled: {cause_of(e)}", "cannot post Scheduled event for %s: %s", pod.key, e)
        await self._annotate(b.info, b.decision)

    async def _nominate(self, pod: Pod, node: str) -> bool:
        """Upstream's ``bindingCycle`` with NominatedNodeNameForExpectation (schedule_one.go): tell
        other components (an autoscaler) where the pod goes while Permit or PreBind take their time;
        a pod bound at once gets no such write. Written only when it changes (``updatePod``), and
        a failed write does not stop the binding ("not critical enough to stop binding cycles")."""
        if pod.nominated_node_name == node:
            return True
        try:
            await self.client.nominate(pod, node)
        except Exception as e:
            self.api_log.report(f"nominate: {cause_of(e)}", "failed to update the nominated node name of %s "
                                "in the binding cycle: %s", pod.key, e)
            return False
        return True

    def _release(self, b: Binding) -> None:
        """What every stopped binding cycle undoes: Unreserve, forget the assumed pod, and move the
        pods its freed resources may help, as upstream's AssignedPodDelete."""
        fwk, state, pod, node = b.framework, b.state, b.assumed, b.result.node
        # A pod parked at Permit whose binding cycle stopped before it waited leaves no entry behind.
        fwk.waiting_pods.discard(pod.uid)
        try:
            fwk.run_unreserve(state, pod, node)
        except Exception:  # a plugin's bug must not keep the pod assumed
            log.exception("Unreserve of %s failed", pod.key)
        self.cache.forget_pod(pod)
        self.queue.move_all_to_active_or_backoff(ClusterEvent("Pod", frozenset({"Delete"}), old=pod,
                                                               label="AssignedPodDelete"))

    def _hand_back(self, b: Binding, point: str) -> None:
        """This replica may no longer bind (it lost its lease, or cannot be sure it still holds it):
        unreserve and forget the pod and hand it back to the queue as it was, with no backoff, no
        Event and no failed attempt. A standby pops nothing, so it waits there for this replica's
        next term; the leader that now holds the lease schedules it meanwhile, and its bind reaches
        this replica as an update that removes the pod from the queue."""
        pod, node = b.assumed, b.result.node
        self._release(b)
        self.queue.put_back(b.info)
        log.warning("binding cycle of %s to %s stopped before %s: this replica no longer holds the lease",
                    pod.key, node, point)

    def _undo_binding(self, b: Binding, s: Status, *, rejected: bool = False) -> bool:
        """Upstream's ``handleBindingCycleError``, its synchronous half: Unreserve, forget the assumed
        pod, and move the pods its resources may help. Then either drop the pod (bound elsewhere, or
        gone: a retry would double-bind) or requeue it with backoff. True if it was requeued."""
        fwk, pod, node = b.framework, b.assumed, b.result.node
        self._release(b)
        if isinstance(s.error, ConflictError | NotFoundError):
            # Someone else bound it, or it is gone: never retry, or we would double-bind.
            log.info("binding %s to %s not needed: %s", pod.key, node, s.message())
            self.queue.done(pod.uid)
            self._observe_attempt(fwk, "error", b.started)
            return False
        if rejected:
            return True         # a Permit rejection: _report_failure files it as unschedulable
        self.queue.requeue_after_error(b.info)
        self._observe_attempt(fwk, "error", b.started)
        return True

    async def _binding_failed(self, b: Binding, s: Status, *, rejected: bool = False) -> None:
        if not self._undo_binding(b, s, rejected=rejected):
            return
        fwk = b.framework
        # handleBindingCycleError ends with clearNominatedNode: the nomination this binding cycle
        # wrote, or the one the pod came with.
        cleared = "" if b.nominated else self._clear_nomination(b.info)
        if rejected:
            # A Permit rejection is an unschedulable outcome, reported as a FitError over 1 node.
            b.info.unschedulable_plugins = {s.plugin} if s.plugin else set()
            diag = Diagnosis()
            diag.node_to_status.absent = s
            await self._report_failure(Failure(b.info, fwk, s, fit_error_message(1, diag), b.started,
                                               nominated_node=cleared))
            return
        await self._report(b.info, REASON_SCHEDULER_ERROR, f"binding rejected: {s.message()}", cleared)

    def _observe_attempt(self, fwk: Framework, result: str, started: float) -> None:
        if self.metrics is None:
            return
        self._attempts(result, fwk.profile_name).inc()
        self._attempt_durations(result, fwk.profile_name).observe(time.perf_counter() - started)

    # --- convenience for tests, the simulator and the benchmark ----------------------------
    async def run_until_idle(self, max_cycles: int = 1_000_000) -> int:
        """Schedule until ``pop`` has nothing without waiting: activeQ empty and, with
        SchedulerPopFromBackoffQ, no rejected pod in backoffQ (no waiting for backoffs); returns
        cycles run."""
        n = 0
        while n < max_cycles:
            info = self.queue.pop(timeout=0)
            if info is None:
                break
            await self.finish(self.schedule_one(info))
            n += 1
        return n


def _attempts_label(attempts: int) -> str:
    return str(attempts) if attempts < 15 else "15+"
