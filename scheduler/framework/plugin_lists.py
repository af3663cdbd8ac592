"""A profile's plugins as typed lists, one per extension point (upstream's ``frameworkImpl`` fields).

``PluginLists.build`` takes the plugins ``scheduler.profiles.compile`` placed at each point and
checks upstream's ``NewFramework`` invariants on them: every plugin implements the Protocol of the
point it is listed at (``updatePluginList``), exactly one QueueSort plugin, at least one Bind
plugin, every Score plugin has a positive weight, and the weights cannot overflow the total score.
It also resolves, once, what the hot path calls: each Filter and Score plugin as one batched call
over rows whatever its shape, the plugins that sign pods for opportunistic batching, and the
PreBind capabilities. The result is frozen; ``framework/runtime.py``'s ``Framework`` only stores it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fw
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_NODE_SCORE, FilterVerdict, Plugin, Rows, ScoreExtensions, Scores
from scheduler.framework.status import Status
from scheduler.framework.types import ClusterEventWithHint
from scheduler.model import Pod

__all__ = ["MAX_TOTAL_SCORE", "FilterEntry", "FrameworkError", "PluginLists", "ScoreEntry", "ScoreFailed"]

MAX_TOTAL_SCORE = 2**63 - 1

FilterFn = Callable[[CycleState, Pod, Snapshot, Rows], FilterVerdict]
ScoreFn = Callable[[CycleState, Pod, Snapshot, Rows], Scores]
UniformFn = Callable[[CycleState, Pod, Snapshot], int | None]
ScorePlugin = fw.BatchScorePlugin | fw.ScorePlugin


class FrameworkError(ValueError):
    pass


class ScoreFailed(Exception):
    """A per-node Score plugin returned a non-success status (carried to ``run_score``)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


@dataclass(frozen=True, slots=True)
class FilterEntry:
    """A Filter plugin as the runtime calls it: one batched call over rows, whatever its shape."""

    name: str
    run: FilterFn
    node_local: bool


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    """A Score plugin as the runtime calls it: batched scores, its weight, its NormalizeScore."""

    name: str
    run: ScoreFn
    weight: int
    extensions: Callable[[], ScoreExtensions | None] | None
    # UniformScorePlugin's ``uniform_score`` (None: the plugin has none, its rows are always scored).
    uniform: UniformFn | None = None


def _filter_per_node(p: fw.FilterPlugin) -> FilterFn:
    """Upstream's per-node Filter, looped over the rows (out-of-tree plugins)."""
    def run(state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        statuses: list[Status] = []
        index: dict[Status, int] = {}
        failed = np.zeros(len(rows), np.bool_)
        ids = np.zeros(len(rows), np.int64)
        for i, row in enumerate(rows.tolist()):
            try:
                s = p.filter(state, pod, snapshot.node_info(row))
            except Exception as e:  # an out-of-tree plugin's bug is an Error status, not a crash
                s = Status.as_error(e)
            if not s.is_success():
                failed[i] = True
                j = index.get(s)
                if j is None:
                    j = index[s] = len(statuses)
                    statuses.append(s)
                ids[i] = j
        return FilterVerdict(failed, statuses, ids)
    return run


def _score_per_node(p: fw.ScorePlugin) -> ScoreFn:
    """Upstream's per-node Score, looped over the rows; a failed node raises ``ScoreFailed``."""
    def run(state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        out = np.zeros(len(rows), np.int64)
        for i, row in enumerate(rows.tolist()):
            v, st = p.score(state, pod, snapshot.node_info(row))
            if not st.is_success():
                raise ScoreFailed(st)
            out[i] = v
        return out
    return run


def _typed(point: str, plugins: Sequence[Plugin], kind: Any) -> tuple[Any, ...]:
    """The plugins listed at ``point``, each checked against the point's Protocol ``kind``; refuse
    one that does not implement it (upstream's ``updatePluginList``)."""
    for p in plugins:
        if not isinstance(p, kind):
            raise FrameworkError(f"plugin {p.name!r} does not extend {point} plugin")
    return tuple(plugins)


def _weighted(plugins: Sequence[Plugin], score_weights: Mapping[str, int]) -> tuple[tuple[ScorePlugin, int], ...]:
    """The Score plugins with their weights: positive, and summing to no more than the total score."""
    out: list[tuple[ScorePlugin, int]] = []
    total = 0
    for p in plugins:
        if not isinstance(p, fw.BatchScorePlugin | fw.ScorePlugin):
            raise FrameworkError(f"plugin {p.name!r} does not extend Score plugin")
        w = score_weights.get(p.name, 1)
        if w <= 0:
            raise FrameworkError(f"score plugin {p.name!r} weight must be positive, got {w}")
        total += w * MAX_NODE_SCORE
        if total > MAX_TOTAL_SCORE:
            raise FrameworkError("total score of Score plugins could overflow")
        out.append((p, w))
    return tuple(out)


def _signers(plugins: Sequence[Plugin]) -> tuple[tuple[fw.SignPlugin, ...], bool]:
    """Opportunistic batching (framework/batch.py), as upstream's ``computeBatchablePlugins``: the
    PreFilter, Filter, PreScore and Score plugins sign pods, each once; False if one of them cannot
    sign at all (no ``sign_pod``)."""
    signers: list[fw.SignPlugin] = []
    all_sign = True
    seen: set[int] = set()
    for p in plugins:
        if id(p) in seen:
            continue
        seen.add(id(p))
        if isinstance(p, fw.SignPlugin):
            signers.append(p)
        else:
            all_sign = False
    return tuple(signers), all_sign


def _filter_entries(plugins: Sequence[fw.BatchFilterPlugin | fw.FilterPlugin]) -> tuple[FilterEntry, ...]:
    return tuple(FilterEntry(p.name, p.filter_nodes if isinstance(p, fw.BatchFilterPlugin) else _filter_per_node(p),
                             isinstance(p, fw.NodeLocalFilter) and p.filter_is_node_local)
                 for p in plugins)


def _score_entries(plugins: Sequence[tuple[ScorePlugin, int]]) -> tuple[ScoreEntry, ...]:
    return tuple(ScoreEntry(p.name, p.score_nodes if isinstance(p, fw.BatchScorePlugin) else _score_per_node(p),
                            w, p.score_extensions if isinstance(p, fw.ScoreExtensionsPlugin) else None,
                            p.uniform_score if isinstance(p, fw.UniformScorePlugin) else None)
                 for p, w in plugins)


def _by_name(plugins: Mapping[str, Sequence[Plugin]], all_plugins: Sequence[Plugin]) -> dict[str, Plugin]:
    by_name: dict[str, Plugin] = {p.name: p for p in all_plugins}
    for point in plugins.values():
        for p in point:
            by_name.setdefault(p.name, p)
    return by_name


def _events(by_name: Mapping[str, Plugin]) -> dict[str, Sequence[ClusterEventWithHint] | None]:
    return {name: p.events_to_register() if isinstance(p, fw.EnqueueExtensions) else None
            for name, p in by_name.items()}


@dataclass(frozen=True, slots=True)
class PluginLists:
    """One profile's plugins per extension point, checked and resolved once (``build``)."""

    queue_sort: fw.QueueSortPlugin
    pre_enqueue: tuple[fw.PreEnqueuePlugin, ...]
    pre_filter: tuple[fw.PreFilterPlugin, ...]
    filter: tuple[fw.BatchFilterPlugin | fw.FilterPlugin, ...]
    post_filter: tuple[fw.PostFilterPlugin, ...]
    pre_score: tuple[fw.PreScorePlugin, ...]
    score: tuple[tuple[ScorePlugin, int], ...]
    reserve: tuple[fw.ReservePlugin, ...]
    permit: tuple[fw.PermitPlugin, ...]
    pre_bind: tuple[fw.PreBindPlugin, ...]
    bind: tuple[fw.BindPlugin, ...]
    post_bind: tuple[fw.PostBindPlugin, ...]
    # Every plugin by name: the listed ones and any the profile built but placed nowhere.
    by_name: Mapping[str, Plugin]
    # What the hot path calls, resolved once from the lists above.
    filters: tuple[FilterEntry, ...]
    scores: tuple[ScoreEntry, ...]
    signers: tuple[fw.SignPlugin, ...]
    all_sign: bool                              # every PreFilter/Filter/PreScore/Score plugin signs
    # The PreFilter plugins that read other pods (absent capability: they do), re-run when a
    # node's pods change.
    pre_filter_reading_pods: tuple[fw.PreFilterPlugin, ...]
    # Each PreBind plugin's PreBindPreFlight (None: it has none) and the plugins whose PreBind may
    # wait (the binding cycle's deadline adds their budget).
    pre_bind_flights: tuple[fw.PreBindPreFlightPlugin | None, ...]
    pre_bind_waiters: tuple[Any, ...]
    # Plugins that register no events are interested in every event (upstream's wildcard): None.
    events: Mapping[str, Sequence[ClusterEventWithHint] | None]

    @classmethod
    def build(cls, profile_name: str, plugins: Mapping[str, Sequence[Plugin]], score_weights: Mapping[str, int],
              all_plugins: Sequence[Plugin] = ()) -> PluginLists:
        """Check ``plugins`` (extension point name to its plugins, in order) and resolve them."""
        def at(point: str) -> Sequence[Plugin]:
            return plugins.get(point, ())

        queue_sort: tuple[fw.QueueSortPlugin, ...] = _typed("QueueSort", at("queueSort"), fw.QueueSortPlugin)
        if len(queue_sort) != 1:
            raise FrameworkError(f"one queue sort plugin required for profile with scheduler name "
                                 f"{profile_name!r}, got {len(queue_sort)}")
        pre_enqueue: tuple[fw.PreEnqueuePlugin, ...] = _typed("PreEnqueue", at("preEnqueue"), fw.PreEnqueuePlugin)
        pre_filter: tuple[fw.PreFilterPlugin, ...] = _typed("PreFilter", at("preFilter"), fw.PreFilterPlugin)
        filter_: tuple[fw.BatchFilterPlugin | fw.FilterPlugin, ...] = _typed(
            "Filter", at("filter"), fw.BatchFilterPlugin | fw.FilterPlugin)
        post_filter: tuple[fw.PostFilterPlugin, ...] = _typed("PostFilter", at("postFilter"), fw.PostFilterPlugin)
        pre_score: tuple[fw.PreScorePlugin, ...] = _typed("PreScore", at("preScore"), fw.PreScorePlugin)
        score = _weighted(at("score"), score_weights)
        reserve: tuple[fw.ReservePlugin, ...] = _typed("Reserve", at("reserve"), fw.ReservePlugin)
        permit: tuple[fw.PermitPlugin, ...] = _typed("Permit", at("permit"), fw.PermitPlugin)
        pre_bind: tuple[fw.PreBindPlugin, ...] = _typed("PreBind", at("preBind"), fw.PreBindPlugin)
        bind: tuple[fw.BindPlugin, ...] = _typed("Bind", at("bind"), fw.BindPlugin)
        if not bind:
            raise FrameworkError(f"at least one bind plugin is needed for profile with scheduler name "
                                 f"{profile_name!r}")
        post_bind: tuple[fw.PostBindPlugin, ...] = _typed("PostBind", at("postBind"), fw.PostBindPlugin)
        by_name = _by_name(plugins, all_plugins)
        signers, all_sign = _signers([*pre_filter, *filter_, *pre_score, *(p for p, _ in score)])
        return cls(
            queue_sort[0], pre_enqueue, pre_filter, filter_, post_filter, pre_score, score, reserve, permit,
            pre_bind, bind, post_bind, by_name,
            filters=_filter_entries(filter_), scores=_score_entries(score), signers=signers, all_sign=all_sign,
            pre_filter_reading_pods=tuple(p for p in pre_filter
                                          if not isinstance(p, fw.PodReadingPreFilter) or p.pre_filter_reads_pods),
            pre_bind_flights=tuple(p if isinstance(p, fw.PreBindPreFlightPlugin) else None for p in pre_bind),
            pre_bind_waiters=tuple(p for p in pre_bind if isinstance(p, fw.PreBindWaiter)),
            events=_events(by_name),
        )
