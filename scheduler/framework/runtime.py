"""The framework runtime: one compiled profile, running its plugins at each extension point.

A ``Framework``'s configuration is fixed once built (``scheduler.profiles.compile`` builds it from
checked, frozen ``PluginLists``, ``framework/plugin_lists.py``, which enforces upstream's
``NewFramework`` invariants): a profile edit builds a new one and swaps it in, and a cycle that
started on the old one finishes on it. What does change while pods are scheduled on it is the
per-profile scheduling state upstream also keeps beside its framework; the class docstring lists it.
Pods waiting at Permit live in ``framework/waiting_pods.py``.

The Filter search (``find_nodes_that_pass_filters``) follows upstream's ``findNodesThatFitPod``:
nodes are visited from a round-robin start index in the snapshot's zone-interleaved order, and the
search stops after ``num_feasible_nodes_to_find`` feasible nodes. Filters run plugin by plugin over
*batches* of rows: each plugin sees only the rows every earlier plugin passed, so a node's status is
the first rejecting plugin's, as in upstream's per-node loop. Upstream cancels parallel workers
once enough nodes are found; here the batch is cut at the exact node that reached the count, which
makes the search deterministic.

"Filter with nominated pods" (upstream's ``RunFilterPluginsWithNominatedPods``): a node that pods of
equal or higher priority are nominated to must pass the filters twice, once with those pods added
(a what-if on the snapshot, with PreFilter re-run so spread and affinity counts include them) and
once as it is. Only nodes with such nominations pay for the second pass, and only after they passed
the batched first one, so a cluster with no nominations runs exactly the plain search.

A profile's HTTP extenders (``extenders``, ``framework/extender.py``) travel with its framework;
the cycle calls them after Filter and Score, and, as upstream, they make the search find more than
one node even without Score plugins.
"""

from __future__ import annotations

import random
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fw
from scheduler.framework.batch import OpportunisticBatch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, NodeToStatus
from scheduler.framework.extender import Extender
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    Plugin,
    PodNominator,
    PostFilterContext,
    PostFilterResult,
    PreFilterResult,
    Rows,
    ScoreExtensions,
    Scores,
)
from scheduler.framework.plugin_lists import MAX_TOTAL_SCORE, FrameworkError, PluginLists, ScoreFailed
from scheduler.framework.recorder import Recorder
from scheduler.framework.signature import PodSignature, sign_pod
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.framework.types import ClusterEvent, ClusterEventWithHint, QueuedPodInfo
from scheduler.framework.waiting_pods import WaitingPods
from scheduler.metrics import PLUGIN_METRICS_SAMPLE_PERCENT, Metrics
from scheduler.model import Pod

__all__ = [
    "MAX_TOTAL_SCORE",
    "MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND",
    "MIN_FEASIBLE_NODES_TO_FIND",
    "Framework",
    "FrameworkError",
    "num_feasible_nodes_to_find",
]

MIN_FEASIBLE_NODES_TO_FIND = 100
MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND = 5
# CycleState key: the PreFilter plugins whose results narrowed the candidate nodes.
PREFILTER_RESULT_PLUGINS = "framework/preFilterResultPlugins"


def num_feasible_nodes_to_find(percentage: int, num_all_nodes: int) -> int:
    """Upstream's ``numFeasibleNodesToFind`` (percentage 0 means adaptive)."""
    if num_all_nodes < MIN_FEASIBLE_NODES_TO_FIND:
        return num_all_nodes
    if percentage == 0:
        percentage = 50 - num_all_nodes // 125
        percentage = max(percentage, MIN_FEASIBLE_NODES_PERCENTAGE_TO_FIND)
    num = num_all_nodes * percentage // 100
    return max(num, MIN_FEASIBLE_NODES_TO_FIND)


@dataclass(slots=True)
class _Failures:
    """Filter failures of one batch, kept until the batch is cut at the last needed node."""

    parts: list[tuple[str, Rows, Any, Sequence[Status]]] = field(default_factory=list)


def _or_zeros(total: Scores | None, n: int) -> Scores:
    return total if total is not None else np.zeros(n, np.int64)


def _window(candidates: Rows, begin: int, count: int) -> Rows:
    """``count`` candidates (fewer at the end) from position ``begin`` of the round-robin order that
    starts over at the first candidate after the last: the search's next batch. Only the batch is
    copied, never the whole candidate list (at 50,000 nodes that copy cost more than the batch)."""
    n = len(candidates)
    begin %= n
    end = begin + count
    if end <= n:
        return candidates[begin:end]
    return np.concatenate((candidates[begin:], candidates[: end - n]))


def _hint_says_queue(events: Sequence[ClusterEventWithHint], pod: Pod, event: ClusterEvent) -> bool:
    """Whether one of ``events`` matches ``event`` and its queueing hint says Queue."""
    for e in events:
        if e.event.matches(event):
            try:
                if e.hint is None or e.hint(pod, event):
                    return True
            except Exception:  # a failing hint means Queue, as upstream treats errors
                return True
    return False


class Framework:
    """One compiled profile (upstream's ``frameworkImpl``): its plugins as typed lists per extension
    point (``PluginLists``, stored as given), and the ``run_*`` methods the scheduling and binding
    cycles call.

    The plugins, weights, args, extenders and backoffs never change. These attributes do, each
    because it is state of the profile's scheduling, not of its configuration:

    - ``next_start_node_index``: the Filter search's round-robin start (upstream's
      ``nextStartNodeIndex``), moved by every search so pods spread over the nodes;
    - ``rng``: the tie-breaking draws of ``select_host`` (seeded, so runs replay);
    - ``batch``: opportunistic batching's scored list from the previous pod (``framework/batch.py``);
    - ``waiting_pods``: pods waiting at Permit (``framework/waiting_pods.py``);
    - ``generation``: set once by the service after compiling (the CR's ``metadata.generation``);
    - memos that change no result: the nominated pods of the last snapshot, the metric label
      children, the Score weights by name.

    Scheduling cycles run on it one at a time, under the cache lock; only the waiting pods'
    decisions may come from another thread, and those are handed to the event loop.
    """

    def __init__(
        self,
        profile_name: str,
        plugins: PluginLists | Mapping[str, Sequence[Plugin]],
        *,
        score_weights: Mapping[str, int] | None = None,
        percentage_of_nodes_to_score: int | None = None,
        pod_initial_backoff: float = 1.0,
        pod_max_backoff: float = 10.0,
        metrics: Metrics | None = None,
        seed: int | None = None,
        all_plugins: Sequence[Plugin] = (),
        nominator: PodNominator | None = None,
        plugin_args: Mapping[str, object] | None = None,
        extenders: Sequence[Extender] = (),
        waiting_pods: WaitingPods | None = None,
    ) -> None:
        # ``profiles/compile.py`` hands over checked ``PluginLists``; a plain mapping (extension
        # point name to plugins, as tests build them) is checked here the same way.
        lists = plugins if isinstance(plugins, PluginLists) else PluginLists.build(
            profile_name, plugins, score_weights or {}, all_plugins)
        self.profile_name = profile_name
        self.plugins = lists
        self.extenders: tuple[Extender, ...] = tuple(extenders)
        # The typed lists, as attributes: the run_* methods and the plugins' tests read them.
        self.queue_sort = lists.queue_sort
        self.pre_enqueue = lists.pre_enqueue
        self._group_gates = frozenset(p.name for p in self.pre_enqueue if getattr(p, "gates_by_pod_group", False))
        self.pre_filter = lists.pre_filter
        self.filter = lists.filter
        self.post_filter = lists.post_filter
        self.pre_score = lists.pre_score
        self.score = lists.score
        self.reserve = lists.reserve
        self.permit = lists.permit
        self.pre_bind = lists.pre_bind
        self.bind = lists.bind
        self.post_bind = lists.post_bind
        self.plugins_by_name = lists.by_name
        self._filters = lists.filters
        self._scores = lists.scores
        # Each plugin's validated args (None without). Every profile must share the QueueSort and its
        # args; a shadow profile reuses the live one's results for the plugins configured alike.
        self.plugin_args: Mapping[str, object] = dict(plugin_args or {})
        self.queue_sort_args = self.plugin_args.get(self.queue_sort.name)
        # A profile with extenders signs no pod (their answers are no plugin's to sign).
        self.signatures_enabled = lists.all_sign and not self.extenders
        self.percentage_of_nodes_to_score = percentage_of_nodes_to_score
        self.pod_initial_backoff = pod_initial_backoff
        self.pod_max_backoff = pod_max_backoff
        self.metrics = metrics
        self.nominator = nominator
        self._recorder = Recorder(metrics, profile_name)
        self._observe = self._recorder.observe_point
        self._observe_plugin = self._recorder.observe_plugin
        # --- what changes after construction (the class docstring says why) ---
        # The SchedulingProfile's metadata.generation this framework was compiled from (records).
        self.generation: int | None = None
        self.next_start_node_index = 0
        self.rng = random.Random(seed)
        self.batch = OpportunisticBatch(profile_name, metrics=metrics)
        self.waiting_pods = waiting_pods if waiting_pods is not None else WaitingPods(metrics)
        self._nominated_cache: tuple[Snapshot, tuple[str, int, int], dict[int, list[Pod]]] | None = None
        self._weights: dict[str, int] | None = None

    def new_cycle_state(self) -> CycleState:
        return CycleState(record_plugin_metrics=self.rng.randrange(100) < PLUGIN_METRICS_SAMPLE_PERCENT)

    def sign_pod(self, pod: Pod) -> PodSignature | None:
        """Upstream's ``SignPod``: ``pod``'s scheduling signature, None if it has none."""
        if not self.signatures_enabled:
            return None
        return sign_pod(self.plugins.signers, pod)

    # --- queue-side ------------------------------------------------------------------------
    def queue_sort_key(self, info: QueuedPodInfo) -> Any:
        return self.queue_sort.sort_key(info)

    def run_pre_enqueue(self, pod: Pod) -> Status:
        for p in self.pre_enqueue:
            s = p.pre_enqueue(pod)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    def is_worth_requeuing(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        rejectors = info.unschedulable_plugins | info.pending_plugins
        if not rejectors or event.resource == "*":
            return True
        for name in rejectors:
            events = self.plugins.events.get(name)
            if events is None or _hint_says_queue(events, info.pod, event):
                return True
        return False

    def is_worth_ungating(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """Whether ``event`` may lift the PreEnqueue rejection of a gated pod: only events its
        gating plugin registered, with their hints, count (a plugin registering none never lifts)."""
        return _hint_says_queue(self.plugins.events.get(info.gating_plugin) or (), info.pod, event)

    def gates_by_pod_group(self, plugin: str) -> bool:
        """Whether PreEnqueue plugin ``plugin`` reads a pod only through its PodGroup, in its
        PreEnqueue and in its hints (``PreEnqueuePlugin.gates_by_pod_group``): then its verdict is
        one for the whole group, and the queue asks it once per group (``SchedulingQueue``)."""
        return plugin in self._group_gates

    def may_ungate(self, plugin: str, event: ClusterEvent) -> bool:
        """Whether ``plugin`` registered any event ``event`` matches, whatever its hint says: when
        not, ``is_worth_ungating`` is False for every pod it gates (the queue skips them at once)."""
        return any(e.event.matches(event) for e in self.plugins.events.get(plugin) or ())

    # --- PreFilter / Filter ----------------------------------------------------------------
    def run_pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot, *, observe: bool = True
                       ) -> tuple[PreFilterResult | None, Status]:
        t0 = time.perf_counter()
        result: PreFilterResult | None = None
        status = SUCCESS
        narrowing: list[str] = []
        timed = self._recorder.timed(state)
        evals = self._recorder.evaluations("PreFilter", self.pre_filter)
        for p, counted in zip(self.pre_filter, evals, strict=True):
            t1 = time.perf_counter()
            if counted is not None:
                counted.inc()
            r, s = p.pre_filter(state, pod, snapshot)
            if timed:
                self._observe_plugin(state, p.name, "PreFilter", s, t1)
            if s.is_skip():
                state.skip_filter_plugins.add(p.name)
                continue
            if not s.is_success():
                status = s.with_plugin(p.name)
                break
            if r is not None and r.node_names is not None:
                narrowing.append(p.name)
                names = r.node_names if result is None or result.node_names is None \
                    else result.node_names & r.node_names
                result = PreFilterResult(names)
        state.write(PREFILTER_RESULT_PLUGINS, tuple(narrowing))
        if observe:
            self._observe("PreFilter", status, t0)
        return result, status

    def _filter_batch(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows,
                      failures: _Failures) -> tuple[Rows, Status]:
        """Positions (into ``rows``) that pass every filter; failures go to ``failures``.

        Each plugin sees ``sub``, the rows still alive. Until a plugin rejects one, ``sub`` is
        ``rows`` itself and ``alive`` is None (every position): the usual batch, in which every node
        passes, then costs no gather of the rows per plugin."""
        alive: Rows | None = None
        sub = rows
        timed = self._recorder.timed(state)
        evals = self._recorder.evaluations("Filter", self._filters)
        for f, counted in zip(self._filters, evals, strict=True):
            if f.name in state.skip_filter_plugins or len(sub) == 0:
                continue
            t1 = time.perf_counter()
            if counted is not None:
                counted.inc(len(sub))
            verdict = f.run(state, pod, snapshot, sub)
            failed = verdict.failed
            if np.count_nonzero(failed):    # (a C call: ndarray.any() costs 2.4 times as much)
                if alive is None:
                    alive = np.arange(len(rows), dtype=np.int64)
                ids = verdict.status_ids[failed] if verdict.status_ids is not None else None
                for s in verdict.statuses:
                    if s.code == Code.ERROR:
                        # RunFilterPlugins: a Filter's Error ends the cycle, wrapped as
                        # fmt.Errorf("running %q filter plugin: %w", ...) (framework/runtime/framework.go)
                        err = Status(Code.ERROR, (f'running "{f.name}" filter plugin: {s.message()}',), f.name,
                                     s.error)
                        self._observe_plugin(state, f.name, "Filter", err, t1)
                        return alive, err   # (callers read no positions of a failed run)
                failures.parts.append((f.name, alive[failed], ids, verdict.statuses))
                keep = ~failed
                alive, sub = alive[keep], sub[keep]
            if timed:
                self._observe_plugin(state, f.name, "Filter", SUCCESS, t1)
        return (np.arange(len(rows), dtype=np.int64) if alive is None else alive), SUCCESS

    def find_nodes_that_pass_filters(self, state: CycleState, pod: Pod, snapshot: Snapshot,
                                     candidates: Rows, diagnosis: Diagnosis, *, num_to_find: int | None = None,
                                     rotate: bool = True) -> tuple[Rows, Status]:
        """The feasible rows among ``candidates`` (visited from the round-robin start)."""
        t0 = time.perf_counter()
        n = len(candidates)
        if n == 0:
            return candidates, SUCCESS
        want = num_to_find if num_to_find is not None else self.num_nodes_to_find(n)
        nominated = self._nominated_rows(pod, snapshot)
        start = self.next_start_node_index % n if rotate else 0
        feasible: list[Rows] = []
        found = processed = 0
        # The first batch assumes nearly every node passes (the usual search: the rows filtered past
        # the cut are wasted work); a later one, the rows that should hold the nodes still needed at
        # the pass rate seen so far, with a margin. Batch sizes change no result, only the work.
        batch = min(n, want + want // 16 + 8)
        status = SUCCESS
        while processed < n and found < want:
            rows = _window(candidates, start + processed, batch)
            failures = _Failures()
            passed, status = self._filter_batch(state, pod, snapshot, rows, failures)
            if not status.is_success():
                break
            if nominated:
                passed = self._recheck_nominated(state, pod, snapshot, rows, passed, nominated, failures)
            need = want - found
            cut = len(rows)
            if len(passed) >= need:
                cut = int(passed[need - 1]) + 1
                passed = passed[:need]
            # No row failed (the usual): the passed rows are a prefix of the batch, handed on as a
            # view of it (no gather; Score plugins may recognise the batch they filtered).
            feasible.append(rows[: len(passed)] if not failures.parts else rows[passed])
            found += len(passed)
            for plugin, pos, ids, statuses in failures.parts:
                keep = pos < cut
                if keep.any():
                    diagnosis.node_to_status.add_many(rows[pos[keep]], None if ids is None else ids[keep],
                                                      statuses, plugin)
                    diagnosis.unschedulable_plugins.add(plugin)
            processed += cut
            need = want - found
            batch = n - processed if not found else min(n - processed, need * processed // found + need // 4 + 8)
        if rotate:
            self.next_start_node_index = (start + processed) % n
        self._observe("Filter", status, t0)
        out = feasible[0] if len(feasible) == 1 else np.concatenate(feasible) if feasible else np.zeros(0, np.int64)
        return out, status

    # --- filter with nominated pods ---------------------------------------------------------
    def _nominated_rows(self, pod: Pod, snapshot: Snapshot) -> dict[int, list[Pod]]:
        """Rows with pods nominated at ≥ ``pod``'s priority (empty, at no cost, without any).
        Cached for the cycle: preemption's dry run asks once per node and per reprieve."""
        nominator = self.nominator
        if nominator is None or not len(nominator):
            return {}
        cached = self._nominated_cache
        if cached is not None and cached[0] is snapshot and cached[1] == (pod.uid, pod.priority, nominator.version):
            return cached[2]
        out: dict[int, list[Pod]] = {}
        for name, pods in nominator.nominated_at_or_above(pod.priority, pod.uid).items():
            row = snapshot.row_of(name)
            if row is not None:
                out[row] = pods
        self._nominated_cache = (snapshot, (pod.uid, pod.priority, nominator.version), out)
        return out

    def _recheck_nominated(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows, passed: Rows,
                           nominated: dict[int, list[Pod]], failures: _Failures) -> Rows:
        keep = np.ones(len(passed), np.bool_)
        # Only the passed rows with nominations are visited: one isin, not a Python loop per node.
        hits = np.flatnonzero(np.isin(rows[passed], np.fromiter(nominated, np.int64, len(nominated))))
        for i in hits.tolist():
            pos = int(passed[i])
            s = self._filter_with(state, pod, snapshot, int(rows[pos]), nominated[int(rows[pos])])
            if not s.is_success():
                if s.code == Code.ERROR:
                    s = Status.unschedulable(s.message()).with_plugin(s.plugin)
                keep[i] = False
                failures.parts.append((s.plugin, np.array([pos], np.int64), None, (s,)))
        return passed if keep.all() else passed[keep]

    def _filter_with(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int, pods: Sequence[Pod]) -> Status:
        """Filters on ``row`` as if ``pods`` were already there."""
        name = snapshot.node_info(row).name
        with snapshot.what_if() as w:
            for p in pods:
                w.add(p, name)
            return self._filter_refreshed(state, pod, snapshot, row)

    def _filter_refreshed(self, base: CycleState, pod: Pod, snapshot: Snapshot, row: int) -> Status:
        """Filter on one node whose pods changed since PreFilter ran into ``base``: the PreFilter
        plugins that read other pods (spread and affinity counts) run again, unobserved, into a copy;
        the ones that read only the pod (``pre_filter_reads_pods = False``) keep their state."""
        st = base.copy()
        for p in self.plugins.pre_filter_reading_pods:
            st.skip_filter_plugins.discard(p.name)
            _, s = p.pre_filter(st, pod, snapshot)
            if s.is_skip():
                st.skip_filter_plugins.add(p.name)
            elif not s.is_success():
                return s.with_plugin(p.name)
        return self.run_filter_on_node(st, pod, snapshot, row)

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int, *,
                                       pods_changed: bool = False) -> Status:
        """Upstream's ``RunFilterPluginsWithNominatedPods`` on one node. ``pods_changed``: the node's
        pods differ from when PreFilter ran into ``state`` (preemption's dry run)."""
        pods = self._nominated_rows(pod, snapshot).get(row)
        if pods:
            s = self._filter_with(state, pod, snapshot, row, pods)
            if not s.is_success():
                return s
        if pods_changed:
            return self._filter_refreshed(state, pod, snapshot, row)
        return self.run_filter_on_node(state, pod, snapshot, row)

    def nominated_rows(self, pod: Pod, snapshot: Snapshot) -> Collection[int]:
        return self._nominated_rows(pod, snapshot).keys()

    def filters_are_node_local(self, state: CycleState) -> bool:
        """Whether every Filter that runs for this cycle's pod reads only the node and its own pods
        (``filter_is_node_local``): then removing pods from one node cannot change another's verdict."""
        return all(f.node_local or f.name in state.skip_filter_plugins for f in self._filters)

    def run_filter_on_rows(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows, *,
                           statuses: bool = True) -> tuple[npt.NDArray[np.bool_], dict[int, Status]]:
        """Every filter over ``rows`` in one batch: which passed, and (unless not ``statuses``) each
        failed row's status."""
        failures = _Failures()
        alive, status = self._filter_batch(state, pod, snapshot, rows, failures)
        passed = np.zeros(len(rows), np.bool_)
        out: dict[int, Status] = {}
        if not statuses:
            if status.is_success():
                passed[alive] = True
            return passed, out
        if not status.is_success():
            for r in rows.tolist():
                out[r] = status
            return passed, out
        passed[alive] = True
        for plugin, pos, ids, found in failures.parts:
            for k, p in enumerate(pos.tolist()):
                st = found[0 if ids is None else int(ids[k])]
                out[int(rows[p])] = st.with_plugin(plugin)
        return passed, out

    def reject_waiting_pod(self, uid: str, plugin: str, reason: str) -> bool:
        if uid not in self.waiting_pods:
            return False
        self.reject(uid, plugin, reason)
        return True

    def num_nodes_to_find(self, n: int) -> int:
        if not self.score and not any(e.is_filter() or e.is_prioritizer() for e in self.extenders):
            # No scoring: the first feasible node is as good as any (upstream returns 1 when no
            # extender filters, and neither a Score plugin nor an extender prioritizes).
            return min(n, 1) if n else 0
        return num_feasible_nodes_to_find(self.percentage_of_nodes_to_score or 0, n)

    def run_filter_on_node(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int) -> Status:
        """Every filter on one node (nominated-node fast path, preemption's dry run)."""
        failures = _Failures()
        passed, status = self._filter_batch(state, pod, snapshot, np.array([row], np.int64), failures)
        if not status.is_success():
            return status
        if len(passed):
            return SUCCESS
        plugin, _, ids, statuses = failures.parts[0]
        return statuses[0 if ids is None else int(ids[0])].with_plugin(plugin)

    def run_post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, snapshot: Snapshot
                        ) -> tuple[PostFilterResult | None, Status]:
        t0 = time.perf_counter()
        result: PostFilterResult | None = None
        final = Status(Code.UNSCHEDULABLE)
        reasons: list[str] = []
        ctx = PostFilterContext(snapshot, self, self.extenders)
        for p in self.post_filter:
            try:
                r, s = p.post_filter(state, pod, statuses, ctx)
            except Exception as e:  # a plugin's bug fails this attempt, never the worker
                r, s = None, Status.as_error(e)
            if s.is_success():
                result, final = r, s.with_plugin(p.name)
                break
            if s.code == Code.ERROR:
                final = s.with_plugin(p.name)
                break
            if s.reasons:
                reasons.extend(s.reasons)
            if r is not None:
                result = r
        else:
            final = Status(Code.UNSCHEDULABLE, tuple(reasons))
        self._observe("PostFilter", final, t0)
        return result, final

    # --- PreScore / Score ------------------------------------------------------------------
    def run_pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows, *,
                      only: Collection[str] | None = None) -> Status:
        """PreScore; with ``only``, just those plugins (a shadow profile re-scoring what differs)."""
        t0 = time.perf_counter()
        status = SUCCESS
        timed = self._recorder.timed(state)
        evals = self._recorder.evaluations("PreScore", self.pre_score)
        for p, counted in zip(self.pre_score, evals, strict=True):
            if only is not None and p.name not in only:
                continue
            t1 = time.perf_counter()
            if counted is not None:
                counted.inc()
            s = p.pre_score(state, pod, snapshot, rows)
            if timed:
                self._observe_plugin(state, p.name, "PreScore", s, t1)
            if s.is_skip():
                state.skip_score_plugins.add(p.name)
            elif not s.is_success():
                status = s.with_plugin(p.name)
                break
        self._observe("PreScore", status, t0)
        return status

    def run_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows, *,
                  only: Collection[str] | None = None, raw: dict[str, Scores] | None = None
                  ) -> tuple[Scores, dict[str, Scores], Status]:
        """Weighted total per row, the per-plugin normalised scores, and the status; with ``only``,
        over just those plugins. ``raw`` receives a copy of the scores before NormalizeScore of each
        plugin that has one (opportunistic batching normalises them again over fewer nodes)."""
        t0 = time.perf_counter()
        # Begun by the first plugin's weighted scores (a copy: ``per_plugin`` keeps the scores).
        total: Scores | None = None
        # The weighted sum of the plugins that scored every row the same (UniformScorePlugin),
        # added to every total once at the end.
        offset = 0
        n = len(rows)
        per_plugin: dict[str, Scores] = {}
        timed = self._recorder.timed(state)
        evals = self._recorder.evaluations("Score", self._scores)
        for e, counted in zip(self._scores, evals, strict=True):
            if e.name in state.skip_score_plugins or (only is not None and e.name not in only):
                continue
            t1 = time.perf_counter()
            if counted is not None and n:
                counted.inc(n)
            uniform = False
            try:
                same = e.uniform(state, pod, snapshot) if e.uniform is not None and n else None
                if same is not None:
                    # One row stands for all: NormalizeScore gives n equal scores what it gives one.
                    uniform = True
                    s = np.array([same], np.int64)
                else:
                    s = np.asarray(e.run(state, pod, snapshot, rows), np.int64)
                ext = e.extensions() if e.extensions is not None else None
                if ext is not None:
                    if raw is not None:
                        raw[e.name] = np.full(n, same, np.int64) if uniform else s.copy()
                    st = ext.normalize_score(state, pod, s)
                    if not st.is_success():
                        return _or_zeros(total, len(rows)), per_plugin, st.with_plugin(e.name)
            except ScoreFailed as failed:
                status = failed.status.with_plugin(e.name)
                self._observe("Score", status, t0)
                return _or_zeros(total, len(rows)), per_plugin, status
            except Exception as exc:
                status = Status.as_error(exc).with_plugin(e.name)
                self._observe("Score", status, t0)
                return _or_zeros(total, len(rows)), per_plugin, status
            # One pass: a negative score read as unsigned is above MAX_NODE_SCORE too.
            if len(s) and int(s.view(np.uint64).max()) > MAX_NODE_SCORE:
                status = Status(Code.ERROR, (f"plugin {e.name!r} returns an invalid score "
                                             f"{int(s.max() if s.max() > MAX_NODE_SCORE else s.min())}, "
                                             f"it should in the range of [0, {MAX_NODE_SCORE}] after "
                                             f"normalizing",), e.name)
                self._observe("Score", status, t0)
                return _or_zeros(total, len(rows)), per_plugin, status
            if uniform:
                # The per-node scores as a filled array (np.broadcast_to's Python costs more here).
                same_everywhere = np.empty(n, np.int64)
                same_everywhere.fill(s.item(0))
                per_plugin[e.name] = same_everywhere
                offset += s.item(0) * e.weight
            else:
                per_plugin[e.name] = s
                if total is None:
                    total = s * e.weight if e.weight != 1 else s.copy()
                else:
                    total += s * e.weight if e.weight != 1 else s
            if timed:
                self._observe_plugin(state, e.name, "Score", SUCCESS, t1)
        self._observe("Score", SUCCESS, t0)
        if offset:
            if total is None:
                total = np.full(n, offset, np.int64)
            else:
                total += offset
        return _or_zeros(total, n), per_plugin, SUCCESS

    def score_entries(self) -> list[tuple[str, int, ScoreExtensions | None]]:
        """Each Score plugin's name, weight and NormalizeScore (None without), in run order."""
        return [(e.name, e.weight, e.extensions() if e.extensions is not None else None) for e in self._scores]

    def select_host(self, rows: Rows, totals: Scores) -> int:
        """The row with the highest total; ties are broken uniformly at random (seedable)."""
        return int(rows[self.select_position(totals)])

    def select_position(self, totals: Scores) -> int:
        """``select_host``'s choice as a position into the scored rows (decision records use it)."""
        best = np.flatnonzero(totals == totals.max())
        return int(best[0] if len(best) == 1 else best[self.rng.randrange(len(best))])

    # --- Reserve / Permit ------------------------------------------------------------------
    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        status = SUCCESS
        for p in self.reserve:
            s = p.reserve(state, pod, node_name)
            if not s.is_success():
                status = s.with_plugin(p.name)
                break
        self._observe("Reserve", status, t0)
        return status

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        t0 = time.perf_counter()
        for p in reversed(self.reserve):
            p.unreserve(state, pod, node_name)
        self._observe("Unreserve", SUCCESS, t0)

    def run_permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        t0 = time.perf_counter()
        wait = 0.0
        status = SUCCESS
        for p in self.permit:
            s, timeout = p.permit(state, pod, node_name)
            if s.is_wait():
                wait = max(wait, timeout)
                status = s.with_plugin(p.name)
                # Parked now, so a decision made before the binding cycle waits is kept.
                self.waiting_pods.park(pod.uid)
            elif not s.is_success():
                status = s.with_plugin(p.name)
                if s.code not in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
                    status = Status(Code.ERROR, s.reasons, p.name)
                break
        self._observe("Permit", status, t0)
        return status, wait

    # --- waiting pods (Permit returned Wait; framework/waiting_pods.py) ---------------------
    def allow(self, uid: str) -> None:
        """A Permit plugin allows a waiting pod to proceed to binding."""
        self.waiting_pods.allow(uid)

    def reject(self, uid: str, plugin: str, reason: str) -> None:
        self.waiting_pods.reject(uid, plugin, reason)

    async def wait_on_permit(self, pod: Pod, timeout: float, plugin: str) -> Status:
        """Upstream's ``WaitOnPermit``: block the binding cycle until allowed, rejected or timed out."""
        return await self.waiting_pods.wait(pod, timeout, plugin)

    # --- binding cycle ---------------------------------------------------------------------
    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``RunPreBindPreFlights``: Success when some PreBind plugin has work (one
        without a PreBindPreFlight always has), Skip when none has, Error (with upstream's wrapping)
        when one fails. The plugins that said Skip are not run by ``run_pre_bind``."""
        t0 = time.perf_counter()
        skip: set[str] = set()
        status = Status(Code.SKIP)
        for p, flight in zip(self.pre_bind, self.plugins.pre_bind_flights, strict=True):
            if flight is None:
                status = SUCCESS
                continue
            try:
                s = flight.pre_bind_pre_flight(state, pod, node_name)
            except Exception as e:
                s = Status.as_error(e)
            if s.code == Code.ERROR:
                status = Status(Code.ERROR, (f'running PreBindPreFlight "{p.name}": {s.message()}',), p.name, s.error)
                break
            if s.is_success():
                status = SUCCESS
            elif s.is_skip():
                skip.add(p.name)
            else:
                status = Status(Code.ERROR, (f'PreBindPreFlight {p.name} returned "{s.code}", which is unsupported. '
                                             "It is supposed to return Success, Skip, or Error status",), p.name)
                break
        else:
            state.skip_pre_bind_plugins = skip
        self._observe("PreBindPreFlight", status, t0)
        return status

    def pre_bind_budget(self, state: CycleState) -> float:
        """The longest the PreBind plugins may wait for this cycle's pod (``PreBindWaiter``),
        summed, as they run one after another."""
        return float(sum(p.pre_bind_wait(state) for p in self.plugins.pre_bind_waiters
                         if p.name not in state.skip_pre_bind_plugins))

    async def run_pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        status = SUCCESS
        for p in self.pre_bind:
            if p.name in state.skip_pre_bind_plugins:
                continue
            try:
                s = await p.pre_bind(state, pod, node_name)
            except Exception as e:  # any failure of the binding cycle unreserves and requeues
                s = Status.as_error(e)
            if not s.is_success():
                status = s.with_plugin(p.name)
                break
        self._observe("PreBind", status, t0)
        return status

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        t0 = time.perf_counter()
        status = Status(Code.SKIP)
        for p in self.bind:
            try:
                s = await p.bind(state, pod, node_name)
            except Exception as e:  # a binder that raises (not only returns an error) fails the bind
                s = Status.as_error(e)
            if s.is_skip():
                continue
            status = s.with_plugin(p.name)
            break
        self._observe("Bind", status, t0)
        return status

    def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        t0 = time.perf_counter()
        for p in self.post_bind:
            p.post_bind(state, pod, node_name)
        self._observe("PostBind", SUCCESS, t0)

    # --- introspection ---------------------------------------------------------------------
    def filter_signature(self) -> tuple[object, ...]:
        """What decides which nodes are feasible and which are evaluated: the PreFilter and Filter
        plugins in order with their args, and ``percentageOfNodesToScore``. Two frameworks with equal
        signatures find the same feasible nodes on one snapshot (a shadow profile reuses the live
        one's search when they are equal)."""
        def config(p: Plugin) -> object:
            return p.filter_config if isinstance(p, fw.FilterConfigured) else self.plugin_args.get(p.name)
        return (tuple((p.name, config(p)) for p in self.pre_filter), tuple((p.name, config(p)) for p in self.filter),
                self.percentage_of_nodes_to_score, tuple(e.config for e in self.extenders))

    def score_weights(self) -> dict[str, int]:
        """Each Score plugin's weight (decision records weigh the normalised scores with it)."""
        if self._weights is None:
            self._weights = {e.name: e.weight for e in self._scores}
        return self._weights

    def effective_plugins(self) -> dict[str, list[dict[str, Any]]]:
        """Per extension point, the enabled plugins (and weights for Score): for the CR status."""
        points: dict[str, Sequence[Plugin]] = {
            "queueSort": [self.queue_sort], "preEnqueue": self.pre_enqueue, "preFilter": self.pre_filter,
            "filter": self.filter, "postFilter": self.post_filter, "preScore": self.pre_score,
            "reserve": self.reserve, "permit": self.permit, "preBind": self.pre_bind,
            "bind": self.bind, "postBind": self.post_bind,
        }
        out: dict[str, list[dict[str, Any]]] = {k: [{"name": p.name} for p in v] for k, v in points.items() if v}
        out["score"] = [{"name": p.name, "weight": w} for p, w in self.score]
        return out

