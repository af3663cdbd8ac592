"""The framework runtime itself (``scheduler.framework.runtime``): the typed plugin lists a profile
compiles to, the capability Protocols, and how each ``run_*`` turns plugin results into one Status.

Cases are ported from upstream's ``pkg/scheduler/framework/runtime/framework_test.go`` where they map;
the comment on each names the upstream test and case. Upstream's ``TestPlugin`` returns an injected
code at every extension point; ``Injected`` does the same here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from scheduler.cache import NodeInfo, Snapshot
from scheduler.framework import (
    BatchFilterPlugin,
    BatchScorePlugin,
    ClusterEvent,
    ClusterEventWithHint,
    Code,
    CycleState,
    EnqueueExtensions,
    FilterPlugin,
    FilterVerdict,
    Framework,
    FrameworkError,
    NodeLocalFilter,
    NodeToStatus,
    Plugin,
    PodReadingPreFilter,
    QueuedPodInfo,
    ScoreExtensionsPlugin,
    ScorePlugin,
    Status,
    UniformScorePlugin,
    implements,
)
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import Rows, Scores
from scheduler.framework.runtime import MAX_TOTAL_SCORE
from scheduler.model import Pod
from scheduler.plugins.registry import Registry
from scheduler.profiles import compile_profile, parse_spec
from tests.builders import node, pod, setup

INJECT_REASON = "injected status"
INJECT_FILTER_REASON = "injected filter status"


class QueueSort:
    name = "no-op-queue-sort-plugin"

    def sort_key(self, info: QueuedPodInfo) -> Any:
        return 0


class Binder:
    name = "bind-plugin"

    async def bind(self, state: CycleState, p: Pod, node_name: str) -> Status:
        return Status()


class Injected:
    """Upstream's ``TestPlugin``: every extension point returns the injected code."""

    def __init__(self, name: str, code: Code = Code.SUCCESS, *, raises: bool = False) -> None:
        self.name = name
        self.code = code
        self.raises = raises

    def _status(self, reason: str = INJECT_REASON) -> Status:
        if self.raises:
            raise RuntimeError(f"{self.name} crashed")
        return Status(self.code, (reason,) if self.code != Code.SUCCESS else ())

    def pre_filter(self, state: CycleState, p: Pod, snapshot: Snapshot) -> tuple[None, Status]:
        return None, self._status()

    def filter(self, state: CycleState, p: Pod, node_info: NodeInfo) -> Status:
        return self._status(INJECT_FILTER_REASON)

    def score(self, state: CycleState, p: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        return 0, self._status()

    def reserve(self, state: CycleState, p: Pod, node_name: str) -> Status:
        return self._status()

    def unreserve(self, state: CycleState, p: Pod, node_name: str) -> None:
        pass

    def permit(self, state: CycleState, p: Pod, node_name: str) -> tuple[Status, float]:
        return self._status(), 0.0

    async def pre_bind(self, state: CycleState, p: Pod, node_name: str) -> Status:
        return self._status()

    async def bind(self, state: CycleState, p: Pod, node_name: str) -> Status:
        return self._status()


def framework(points: dict[str, Sequence[Plugin]], weights: dict[str, int] | None = None) -> Framework:
    """Upstream's ``newFrameworkWithQueueSortAndBind``: a no-op QueueSort and Bind unless given."""
    plugins: dict[str, Sequence[Plugin]] = {"queueSort": [QueueSort()], "bind": [Binder()], **points}
    return Framework("test-profile", plugins, score_weights=weights or {})


def plugins(*spec: tuple[str, Code]) -> list[Injected]:
    return [Injected(name, code) for name, code in spec]


# ---- compiling: typed lists per extension point ---------------------------------------------------
def test_default_profile_compiles_to_typed_lists_per_extension_point() -> None:
    fwk = compile_profile(parse_spec({"schedulerName": "s"}), registry=Registry(), handle=Handle())
    assert fwk.queue_sort.name == "PrioritySort"
    assert [p.name for p in fwk.pre_enqueue] == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert [p.name for p in fwk.pre_filter] == ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions",
                                                "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                                                "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"]
    assert [p.name for p in fwk.filter] == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity",
                                            "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits",
                                            "VolumeBinding", "VolumeZone", "PodTopologySpread", "InterPodAffinity",
                                            "DynamicResources", "NodeDeclaredFeatures"]
    assert [p.name for p in fwk.post_filter] == ["DynamicResources", "DefaultPreemption"]
    assert [(p.name, w) for p, w in fwk.score] == [
        ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
        ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 1), ("NodeResourcesBalancedAllocation", 1),
        ("ImageLocality", 1)]
    assert [p.name for p in fwk.reserve] == ["VolumeBinding", "DynamicResources"]
    assert [p.name for p in fwk.pre_bind] == ["VolumeBinding", "DynamicResources"]
    assert [p.name for p in fwk.bind] == ["DefaultBinder"]
    for point, listed in (("preFilter", fwk.pre_filter), ("filter", fwk.filter), ("postFilter", fwk.post_filter),
                          ("preScore", fwk.pre_score), ("bind", fwk.bind)):
        assert all(implements(p, point) for p in listed), point
    # The same instance serves every point it is listed at (built once per compile).
    assert fwk.plugins_by_name["NodeAffinity"] is next(p for p in fwk.filter if p.name == "NodeAffinity")


@pytest.mark.parametrize(("case", "points", "error"), [
    # TestInitFrameworkWithScorePlugins "enabled Score plugin doesn't extend the ScorePlugin interface"
    ("a Score plugin that does not score", {"score": [Binder()]}, "plugin 'bind-plugin' does not extend Score plugin"),
    ("a Filter plugin that does not filter", {"filter": [QueueSort()]},
     "plugin 'no-op-queue-sort-plugin' does not extend Filter plugin"),
    ("a Bind plugin that does not bind", {"bind": [QueueSort()]},
     "plugin 'no-op-queue-sort-plugin' does not extend Bind plugin"),
    ("no QueueSort", {"queueSort": []}, "one queue sort plugin required for profile with scheduler name"),
    ("two QueueSorts", {"queueSort": [QueueSort(), QueueSort()]}, "got 2"),
    ("no Bind", {"bind": []}, "at least one bind plugin is needed"),
])
def test_new_framework_errors(case: str, points: dict[str, Sequence[Plugin]], error: str) -> None:
    with pytest.raises(FrameworkError, match=error):
        framework(points)


@pytest.mark.parametrize(("case", "weight", "error"), [
    # TestInitFrameworkWithScorePlugins "enabled plugin only implements ScorePlugin interface"
    ("a positive weight", 1, ""),
    ("weight 0", 0, "weight must be positive"),
    ("weights that could overflow the total", MAX_TOTAL_SCORE // 100, "could overflow"),
])
def test_score_weights(case: str, weight: int, error: str) -> None:
    points: dict[str, Sequence[Plugin]] = {"score": [Injected("score-plugin-1"), Injected("score-plugin-2")]}
    weights = {"score-plugin-1": weight, "score-plugin-2": weight}
    if error:
        with pytest.raises(FrameworkError, match=error):
            framework(points, weights)
    else:
        assert [w for _, w in framework(points, weights).score] == [1, 1]


# ---- capability Protocols -----------------------------------------------------------------------
def test_in_tree_capabilities_are_declared_on_protocols() -> None:
    fwk = compile_profile(parse_spec({"schedulerName": "s"}), registry=Registry(), handle=Handle())
    by_name = fwk.plugins_by_name
    node_local = {n for n, p in by_name.items() if isinstance(p, NodeLocalFilter) and p.filter_is_node_local}
    assert node_local == {"NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                          "NodeResourcesFit", "NodeVolumeLimits", "VolumeBinding", "VolumeZone", "DynamicResources",
                          "NodeDeclaredFeatures"}
    pod_only = {n for n, p in by_name.items() if isinstance(p, PodReadingPreFilter) and not p.pre_filter_reads_pods}
    assert pod_only == {"NodeAffinity", "NodePorts", "NodeResourcesFit", "NodeVolumeLimits", "VolumeBinding",
                        "VolumeZone", "DynamicResources", "NodeDeclaredFeatures"}
    assert not isinstance(by_name["PrioritySort"], EnqueueExtensions)
    assert isinstance(by_name["NodeResourcesFit"], EnqueueExtensions)
    for name in ("TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity"):
        p = by_name[name]
        assert isinstance(p, ScoreExtensionsPlugin) and p.score_extensions() is not None, name
    assert all(isinstance(by_name[n], BatchFilterPlugin) for n in node_local)
    assert isinstance(by_name["ImageLocality"], BatchScorePlugin)
    uniform = {n for n, p in by_name.items() if isinstance(p, UniformScorePlugin)}
    assert uniform == {"TaintToleration", "ImageLocality", "DynamicResources"}


def test_capabilities_are_optional_and_default_as_upstream() -> None:
    """A plain per-node plugin with none of the capabilities: interested in every event, its Filter
    not node-local, its PreFilter re-run when a node's pods change, no NormalizeScore."""
    plain = Injected("plain")
    assert isinstance(plain, FilterPlugin) and isinstance(plain, ScorePlugin)
    assert not isinstance(plain, EnqueueExtensions | NodeLocalFilter | PodReadingPreFilter | ScoreExtensionsPlugin)
    fwk = framework({"preFilter": [plain], "filter": [plain], "score": [plain]})
    state = CycleState()
    assert not fwk.filters_are_node_local(state)
    state.skip_filter_plugins.add("plain")
    assert fwk.filters_are_node_local(state)       # a skipped Filter does not count
    info = QueuedPodInfo(pod("p"), 0.0, 0.0, unschedulable_plugins={"plain"})
    assert fwk.is_worth_requeuing(info, ClusterEvent("Namespace", "Add"))


class Gating:
    """A PreEnqueue plugin registering one event with a hint."""

    name = "gating"

    def __init__(self) -> None:
        self.hinted: list[ClusterEvent] = []

    def pre_enqueue(self, p: Pod) -> Status:
        return Status.unresolvable("gated")

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        def hint(p: Pod, event: ClusterEvent) -> bool:
            self.hinted.append(event)
            return event.new == "lift"
        return (ClusterEventWithHint(ClusterEvent("Node", "Update"), hint),)


@pytest.mark.parametrize(("case", "event", "requeue"), [
    ("a registered action, hint says Queue", ClusterEvent("Node", "UpdateNodeLabel", new="lift"), True),
    ("a registered action, hint says QueueSkip", ClusterEvent("Node", "UpdateNodeTaint", new="keep"), False),
    ("another action of the resource", ClusterEvent("Node", "Add", new="lift"), False),
    ("another resource", ClusterEvent("Pod", "UpdatePodLabel", new="lift"), False),
])
def test_events_and_queueing_hints(case: str, event: ClusterEvent, requeue: bool) -> None:
    gating = Gating()
    fwk = framework({"preEnqueue": [gating]})
    info = QueuedPodInfo(pod("p"), 0.0, 0.0, unschedulable_plugins={"gating"}, gating_plugin="gating")
    assert fwk.is_worth_requeuing(info, event) is requeue, case
    assert fwk.is_worth_ungating(info, event) is requeue, case
    assert fwk.run_pre_enqueue(info.pod) == Status.unresolvable("gated").with_plugin("gating")


# ---- Filter: statuses carry the plugin name ---------------------------------------------------
@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # TestFilterPlugins, case by case
    ("SuccessFilter", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, ""),
    ("ErrorFilter", [("TestPlugin", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("UnschedulableFilter", [("TestPlugin", Code.UNSCHEDULABLE)], Code.UNSCHEDULABLE, "TestPlugin"),
    ("UnschedulableAndUnresolvableFilter", [("TestPlugin", Code.UNSCHEDULABLE_AND_UNRESOLVABLE)],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "TestPlugin"),
    ("ErrorAndErrorFilters", [("TestPlugin1", Code.ERROR), ("TestPlugin2", Code.ERROR)], Code.ERROR, "TestPlugin1"),
    ("SuccessAndSuccessFilters", [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", Code.SUCCESS)], Code.SUCCESS, ""),
    ("ErrorAndSuccessFilters", [("TestPlugin1", Code.ERROR), ("TestPlugin2", Code.SUCCESS)], Code.ERROR,
     "TestPlugin1"),
    ("SuccessAndErrorFilters", [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", Code.ERROR)], Code.ERROR,
     "TestPlugin2"),
    ("SuccessAndUnschedulableFilters", [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", Code.UNSCHEDULABLE)],
     Code.UNSCHEDULABLE, "TestPlugin2"),
])
def test_filter_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    fwk = framework({"filter": plugins(*spec)})
    snap, state, rows = setup([node("n1")], [])
    s = fwk.run_filter_on_node(state, pod("p"), snap, int(rows[0]))
    assert (s.code, s.plugin) == (code, plugin), case
    if code not in (Code.SUCCESS, Code.ERROR):
        assert s.reasons == (INJECT_FILTER_REASON,)


def test_filter_on_rows_names_the_first_rejecting_plugin_per_node() -> None:
    class OddRows:
        """A batched Filter rejecting odd rows."""

        name = "odd-rows"

        def filter_nodes(self, state: CycleState, p: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
            return FilterVerdict.uniform(rows % 2 == 1, Status.unschedulable("odd"))

    fwk = framework({"filter": [OddRows(), Injected("all", Code.UNSCHEDULABLE)]})
    snap, state, rows = setup([node(f"n{i}") for i in range(4)], [])
    passed, statuses = fwk.run_filter_on_rows(state, pod("p"), snap, rows)
    assert not passed.any()
    assert {r: (s.plugin, s.reasons) for r, s in statuses.items()} == {
        int(r): (("odd-rows", ("odd",)) if r % 2 else ("all", (INJECT_FILTER_REASON,))) for r in rows}


def test_a_filter_that_raises_is_an_error_status_naming_it() -> None:
    fwk = framework({"filter": [Injected("crashing", raises=True)]})
    snap, state, rows = setup([node("n1")], [])
    s = fwk.run_filter_on_node(state, pod("p"), snap, int(rows[0]))
    # RunFilterPlugins wraps a Filter's Error (framework_test.go TestFilterPlugins "ErrorFilter":
    # `running "TestPlugin" filter plugin: %w`)
    assert s.code == Code.ERROR and s.plugin == "crashing"
    assert s.message() == 'running "crashing" filter plugin: crashing crashed'


# ---- PreFilter / PostFilter ----------------------------------------------------------------------
@pytest.mark.parametrize(("case", "spec", "code", "plugin", "skipped"), [
    ("success", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, "", set()),
    # TestPreFilterPlugins "a plugin returning Skip is not run at Filter"
    ("skip", [("TestPlugin", Code.SKIP)], Code.SUCCESS, "", {"TestPlugin"}),
    ("error names the plugin", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.ERROR)], Code.ERROR,
     "TestPlugin 1", set()),
    ("unschedulable stops", [("TestPlugin", Code.UNSCHEDULABLE), ("TestPlugin 1", Code.ERROR)],
     Code.UNSCHEDULABLE, "TestPlugin", set()),
])
def test_pre_filter_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str,
                            skipped: set[str]) -> None:
    fwk = framework({"preFilter": plugins(*spec)})
    snap, state, _ = setup([node("n1")], [])
    _, s = fwk.run_pre_filter(state, pod("p"), snap)
    assert (s.code, s.plugin) == (code, plugin), case
    assert state.skip_filter_plugins == skipped


class PostFilter:
    def __init__(self, name: str, code: Code) -> None:
        self.name = name
        self.code = code

    def post_filter(self, state: CycleState, p: Pod, statuses: Any, ctx: Any) -> tuple[None, Status]:
        return None, Status(self.code, (INJECT_REASON,))


@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # TestPostFilterPlugins, case by case
    ("a single plugin makes a Pod schedulable", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, "TestPlugin"),
    ("plugin1 failed to make a Pod schedulable, followed by plugin2 which makes the Pod schedulable",
     [("TestPlugin1", Code.UNSCHEDULABLE), ("TestPlugin2", Code.SUCCESS)], Code.SUCCESS, "TestPlugin2"),
    ("plugin1 makes a Pod schedulable, followed by plugin2 which cannot make the Pod schedulable",
     [("TestPlugin1", Code.SUCCESS), ("TestPlugin2", Code.UNSCHEDULABLE)], Code.SUCCESS, "TestPlugin1"),
    ("no plugin makes the Pod schedulable: their reasons add up",
     [("TestPlugin1", Code.UNSCHEDULABLE), ("TestPlugin2", Code.UNSCHEDULABLE)], Code.UNSCHEDULABLE, ""),
])
def test_post_filter_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    fwk = framework({"postFilter": [PostFilter(n, c) for n, c in spec]})
    snap, state, _ = setup([node("n1")], [])
    _, s = fwk.run_post_filter(state, pod("p"), NodeToStatus(), snap)
    assert (s.code, s.plugin) == (code, plugin), case


# ---- Score ---------------------------------------------------------------------------------------
class Scorer:
    """A batched Score plugin with fixed scores, and optionally a NormalizeScore adding ``shift``."""

    def __init__(self, name: str, scores: list[int], shift: int | None = None) -> None:
        self.name = name
        self.scores = scores
        self.shift = shift

    def score_nodes(self, state: CycleState, p: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        return np.array(self.scores[: len(rows)], np.int64)

    def score_extensions(self) -> Scorer | None:
        return self if self.shift is not None else None

    def normalize_score(self, state: CycleState, p: Pod, scores: Scores) -> Status:
        assert self.shift is not None
        scores += self.shift
        return Status()


@pytest.mark.parametrize(("case", "scorers", "weights", "totals", "error"), [
    # TestRunScorePlugins, case by case (upstream's weights 1 and 2)
    ("single Score plugin", [Scorer("score-plugin-1", [1, 1])], {"score-plugin-1": 1}, [1, 1], ""),
    ("single ScoreWithNormalize plugin", [Scorer("score-with-normalize-plugin-1", [1, 2], shift=10)],
     {"score-with-normalize-plugin-1": 1}, [11, 12], ""),
    ("3 Score plugins, 2 NormalizeScore plugins",
     [Scorer("score-plugin-1", [1, 1]), Scorer("score-with-normalize-plugin-1", [3, 3], shift=0),
      Scorer("score-with-normalize-plugin-2", [4, 4], shift=2)],
     {"score-plugin-1": 1, "score-with-normalize-plugin-1": 1, "score-with-normalize-plugin-2": 2}, [16, 16], ""),
    ("Score plugin return score greater than MaxNodeScore", [Scorer("score-plugin-1", [101, 0])],
     {"score-plugin-1": 1}, None, "plugin 'score-plugin-1' returns an invalid score 101"),
    ("Score plugin return score less than MinNodeScore", [Scorer("score-plugin-1", [-1, 0])],
     {"score-plugin-1": 1}, None, "plugin 'score-plugin-1' returns an invalid score -1"),
    ("ScoreWithNormalize plugin return score greater than MaxNodeScore",
     [Scorer("score-with-normalize-plugin-1", [100, 0], shift=1)], {"score-with-normalize-plugin-1": 1}, None,
     "returns an invalid score 101"),
])
def test_run_score_plugins(case: str, scorers: list[Scorer], weights: dict[str, int], totals: list[int] | None,
                           error: str) -> None:
    fwk = framework({"score": scorers}, weights)
    snap, state, rows = setup([node("n1"), node("n2")], [])
    got, _, s = fwk.run_score(state, pod("p"), snap, rows)
    if error:
        assert s.code == Code.ERROR and error in s.message() and s.plugin in {x.name for x in scorers}, case
    else:
        assert s.is_success() and got.tolist() == totals, case


@pytest.mark.parametrize(("case", "plugin", "message"), [
    # TestRunScorePlugins "score fails"
    ("score fails", Injected("score-plugin-1", Code.ERROR), INJECT_REASON),
    ("score raises", Injected("score-plugin-1", raises=True), "score-plugin-1 crashed"),
])
def test_a_failing_per_node_score_is_an_error_naming_the_plugin(case: str, plugin: Injected, message: str) -> None:
    fwk = framework({"score": [Scorer("before", [1, 1]), plugin]})
    snap, state, rows = setup([node("n1"), node("n2")], [])
    _, per_plugin, s = fwk.run_score(state, pod("p"), snap, rows)
    assert (s.code, s.plugin, s.message()) == (Code.ERROR, "score-plugin-1", message), case
    assert list(per_plugin) == ["before"]


def test_skipped_score_plugins_are_not_run() -> None:
    fwk = framework({"score": [Scorer("a", [1, 1]), Scorer("b", [200, 200])]})
    snap, state, rows = setup([node("n1"), node("n2")], [])
    state.skip_score_plugins.add("b")            # PreScore returned Skip for it
    got, per_plugin, s = fwk.run_score(state, pod("p"), snap, rows)
    assert s.is_success() and got.tolist() == [1, 1] and list(per_plugin) == ["a"]


class Uniform(Scorer):
    """A Scorer that says, through ``uniform_score``, that it scores every row ``same`` (None: it
    does not); its ``score_nodes`` gives the same rows' scores, so the runtime's shortcut can be
    checked against the full run. ``scored`` counts the calls that read rows."""

    def __init__(self, name: str, scores: list[int], same: int | None, shift: int | None = None) -> None:
        super().__init__(name, scores, shift)
        self.same = same
        self.scored = 0

    def uniform_score(self, state: CycleState, p: Pod, snapshot: Snapshot) -> int | None:
        return self.same

    def score_nodes(self, state: CycleState, p: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        self.scored += 1
        return super().score_nodes(state, p, snapshot, rows)


@pytest.mark.parametrize(("case", "uniform", "others"), [
    ("alone", Uniform("u", [7, 7, 7], 7), []),
    ("weighted, after another plugin", Uniform("u", [7, 7, 7], 7), [Scorer("a", [1, 2, 3])]),
    ("normalised as one row", Uniform("u", [0, 0, 0], 0, shift=5), [Scorer("a", [1, 2, 3], shift=1)]),
    ("says no: its rows are scored", Uniform("u", [1, 5, 9], None, shift=2), [Scorer("a", [3, 2, 1])]),
])
def test_a_uniform_score_equals_scoring_every_row(case: str, uniform: Uniform, others: list[Scorer]) -> None:
    """UniformScorePlugin: the totals, per-plugin scores and raw scores are those of the full run,
    and the plugin's rows are not read when it gives its one score."""
    weights = {"u": 3, **{o.name: 1 for o in others}}
    snap, state, rows = setup([node("n1"), node("n2"), node("n3")], [])
    full = framework({"score": [*others, Scorer(uniform.name, uniform.scores, uniform.shift)]}, weights)
    want, want_per, ws = full.run_score(state, pod("p"), snap, rows, raw=(want_raw := {}))
    fwk = framework({"score": [*others, uniform]}, weights)
    got, per, s = fwk.run_score(state, pod("p"), snap, rows, raw=(raw := {}))
    assert s.is_success() and ws.is_success(), case
    assert got.tolist() == want.tolist(), case
    assert {k: v.tolist() for k, v in per.items()} == {k: v.tolist() for k, v in want_per.items()}, case
    assert {k: v.tolist() for k, v in raw.items()} == {k: v.tolist() for k, v in want_raw.items()}, case
    assert uniform.scored == (uniform.same is None), case


def test_a_uniform_score_out_of_range_is_an_error_naming_the_plugin() -> None:
    fwk = framework({"score": [Uniform("u", [101, 101], 101)]})
    snap, state, rows = setup([node("n1"), node("n2")], [])
    _, _, s = fwk.run_score(state, pod("p"), snap, rows)
    assert (s.code, s.plugin) == (Code.ERROR, "u") and "returns an invalid score 101" in s.message()


# ---- Reserve / Permit ----------------------------------------------------------------------------
@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # TestReservePlugins (upstream turns every rejection into an Error; here the code is kept)
    ("NoReservePlugin", [], Code.SUCCESS, ""),
    ("SuccessReservePlugins", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, ""),
    ("ErrorReservePlugin", [("TestPlugin", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("SuccessSuccessReservePlugins", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.SUCCESS)],
     Code.SUCCESS, ""),
    ("ErrorErrorReservePlugins", [("TestPlugin", Code.ERROR), ("TestPlugin 1", Code.ERROR)], Code.ERROR,
     "TestPlugin"),
    ("SuccessErrorReservePlugins", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.ERROR)], Code.ERROR,
     "TestPlugin 1"),
    ("ErrorSuccessReservePlugin", [("TestPlugin", Code.ERROR), ("TestPlugin 1", Code.SUCCESS)], Code.ERROR,
     "TestPlugin"),
])
def test_reserve_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    s = framework({"reserve": plugins(*spec)}).run_reserve(CycleState(), pod("p"), "n1")
    assert (s.code, s.plugin) == (code, plugin), case


@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # TestPermitPlugins, case by case
    ("NilPermitPlugin", [], Code.SUCCESS, ""),
    ("SuccessPermitPlugin", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, ""),
    ("UnschedulablePermitPlugin", [("TestPlugin", Code.UNSCHEDULABLE)], Code.UNSCHEDULABLE, "TestPlugin"),
    ("ErrorPermitPlugin", [("TestPlugin", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("UnschedulableAndUnresolvablePermitPlugin", [("TestPlugin", Code.UNSCHEDULABLE_AND_UNRESOLVABLE)],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "TestPlugin"),
    ("WaitPermitPlugin", [("TestPlugin", Code.WAIT)], Code.WAIT, "TestPlugin"),
    ("SuccessSuccessPermitPlugin", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.SUCCESS)], Code.SUCCESS, ""),
    ("ErrorAndErrorPlugins", [("TestPlugin", Code.ERROR), ("TestPlugin 1", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("a Skip is no verdict Permit knows: an Error", [("TestPlugin", Code.SKIP)], Code.ERROR, "TestPlugin"),
])
def test_permit_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    s, _ = framework({"permit": plugins(*spec)}).run_permit(CycleState(), pod("p"), "n1")
    assert (s.code, s.plugin) == (code, plugin), case


# ---- binding cycle: a plugin raising becomes an Error status -------------------------------------
@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # TestPreBindPlugins, case by case
    ("NoPreBindPlugin", [], Code.SUCCESS, ""),
    ("SuccessPreBindPlugins", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, ""),
    ("UnschedulablePreBindPlugin", [("TestPlugin", Code.UNSCHEDULABLE)], Code.UNSCHEDULABLE, "TestPlugin"),
    ("ErrorPreBindPlugin", [("TestPlugin", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("UnschedulableAndUnresolvablePreBindPlugin", [("TestPlugin", Code.UNSCHEDULABLE_AND_UNRESOLVABLE)],
     Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "TestPlugin"),
    ("SuccessErrorPreBindPlugins", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.ERROR)], Code.ERROR,
     "TestPlugin 1"),
    ("ErrorSuccessPreBindPlugin", [("TestPlugin", Code.ERROR), ("TestPlugin 1", Code.SUCCESS)], Code.ERROR,
     "TestPlugin"),
    ("SuccessSuccessPreBindPlugin", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.SUCCESS)], Code.SUCCESS, ""),
    ("ErrorAndErrorPlugins", [("TestPlugin", Code.ERROR), ("TestPlugin 1", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("UnschedulableAndSuccessPreBindPlugin", [("TestPlugin", Code.UNSCHEDULABLE), ("TestPlugin 1", Code.SUCCESS)],
     Code.UNSCHEDULABLE, "TestPlugin"),
])
def test_pre_bind_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    s = asyncio.run(framework({"preBind": plugins(*spec)}).run_pre_bind(CycleState(), pod("p"), "n1"))
    assert (s.code, s.plugin) == (code, plugin), case


@pytest.mark.parametrize(("case", "spec", "code", "plugin"), [
    # upstream's RunBindPlugins: Skip passes to the next binder; the first other status is the answer
    ("SuccessBindPlugins", [("TestPlugin", Code.SUCCESS)], Code.SUCCESS, "TestPlugin"),
    ("ErrorBindPlugin", [("TestPlugin", Code.ERROR)], Code.ERROR, "TestPlugin"),
    ("SkipAndSuccessBindPlugins", [("TestPlugin", Code.SKIP), ("TestPlugin 1", Code.SUCCESS)], Code.SUCCESS,
     "TestPlugin 1"),
    ("SkipAndErrorBindPlugins", [("TestPlugin", Code.SKIP), ("TestPlugin 1", Code.ERROR)], Code.ERROR,
     "TestPlugin 1"),
    ("SuccessAndErrorBindPlugins", [("TestPlugin", Code.SUCCESS), ("TestPlugin 1", Code.ERROR)], Code.SUCCESS,
     "TestPlugin"),
    ("all Skip: nobody bound the pod", [("TestPlugin", Code.SKIP), ("TestPlugin 1", Code.SKIP)], Code.SKIP, ""),
])
def test_bind_plugins(case: str, spec: list[tuple[str, Code]], code: Code, plugin: str) -> None:
    s = asyncio.run(framework({"bind": plugins(*spec)}).run_bind(CycleState(), pod("p"), "n1"))
    assert (s.code, s.plugin) == (code, plugin), case


@pytest.mark.parametrize("point", ["preBind", "bind"])
def test_a_plugin_raising_in_the_binding_cycle_is_an_error_status(point: str) -> None:
    fwk = framework({point: [Injected("ok"), Injected("crashing", raises=True), Injected("never")]})
    run = fwk.run_pre_bind if point == "preBind" else fwk.run_bind
    s = asyncio.run(run(CycleState(), pod("p"), "n1"))
    if point == "bind":
        assert s.is_success() and s.plugin == "ok"   # the first binder that did not skip bound it
        fwk = framework({point: [Injected("crashing", raises=True), Injected("never")]})
        s = asyncio.run(fwk.run_bind(CycleState(), pod("p"), "n1"))
    assert (s.code, s.plugin, s.message()) == (Code.ERROR, "crashing", "crashing crashed")
    assert isinstance(s.error, RuntimeError)


# ---- introspection --------------------------------------------------------------------------------
def test_effective_plugins_lists_each_point_with_score_weights() -> None:
    fwk = framework({"filter": [Injected("f")], "score": [Injected("s")]}, {"s": 4})
    assert fwk.effective_plugins() == {
        "queueSort": [{"name": "no-op-queue-sort-plugin"}], "filter": [{"name": "f"}],
        "bind": [{"name": "bind-plugin"}], "score": [{"name": "s", "weight": 4}]}


# ---- PreBindPreFlight and the PreBind wait budget ---------------------------------------------------
class Flighted:
    """A PreBind plugin with a PreBindPreFlight answering ``code`` and a wait budget."""

    def __init__(self, name: str, code: Code, wait: float = 0.0) -> None:
        self.name, self.code, self.wait, self.ran = name, code, wait, False

    def pre_bind_pre_flight(self, state: CycleState, p: Pod, node_name: str) -> Status:
        return Status(self.code, ("preflight says so",) if self.code not in (Code.SUCCESS, Code.SKIP) else ())

    def pre_bind_wait(self, state: CycleState) -> float:
        return self.wait

    async def pre_bind(self, state: CycleState, p: Pod, node_name: str) -> Status:
        self.ran = True
        return Status()


@pytest.mark.parametrize(("case", "codes", "want", "ran"), [
    # upstream's RunPreBindPreFlights: Success when one or more plugins return Success, Skip when all
    # skip (or there is none), Error when one errs; other codes are unsupported (an Error)
    ("no PreBind plugin", [], Code.SKIP, []),
    ("all Success", [Code.SUCCESS, Code.SUCCESS], Code.SUCCESS, [True, True]),
    ("all Skip", [Code.SKIP, Code.SKIP], Code.SKIP, [False, False]),
    ("Success and Skip", [Code.SUCCESS, Code.SKIP], Code.SUCCESS, [True, False]),
    ("Skip and Success", [Code.SKIP, Code.SUCCESS], Code.SUCCESS, [False, True]),
    ("Error", [Code.SUCCESS, Code.ERROR], Code.ERROR, [True, True]),
    ("Unschedulable is unsupported", [Code.UNSCHEDULABLE], Code.ERROR, [True]),
])
def test_pre_bind_pre_flights(case: str, codes: list[Code], want: Code, ran: list[bool]) -> None:
    ps = [Flighted(f"p{i}", c) for i, c in enumerate(codes)]
    fwk = framework({"preBind": ps})
    state = CycleState()
    s = fwk.run_pre_bind_pre_flights(state, pod("p"), "n1")
    assert s.code == want, case
    if want == Code.ERROR:
        assert s.message() in ('running PreBindPreFlight "p1": preflight says so',
                               'PreBindPreFlight p0 returned "Unschedulable", which is unsupported. It is supposed '
                               "to return Success, Skip, or Error status"), s.message()
        return
    assert asyncio.run(fwk.run_pre_bind(state, pod("p"), "n1")).is_success()
    assert [p.ran for p in ps] == ran, case


def test_a_pre_bind_plugin_without_a_pre_flight_always_runs() -> None:
    plain = Injected("plain")
    fwk = framework({"preBind": [Flighted("f", Code.SKIP), plain]})
    assert fwk.run_pre_bind_pre_flights(CycleState(), pod("p"), "n1").is_success()


def test_pre_bind_budget_sums_the_waiting_plugins_not_skipped() -> None:
    ps = [Flighted("a", Code.SUCCESS, 2.0), Flighted("b", Code.SKIP, 5.0), Flighted("c", Code.SUCCESS, 0.5)]
    fwk = framework({"preBind": [*ps, Injected("plain")]})
    state = CycleState()
    assert fwk.pre_bind_budget(state) == 7.5
    fwk.run_pre_bind_pre_flights(state, pod("p"), "n1")
    assert fwk.pre_bind_budget(state) == 2.5
