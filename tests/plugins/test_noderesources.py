"""NodeResourcesFit and NodeResourcesBalancedAllocation, after upstream's ``noderesources/fit_test.go`` and
``balanced_allocation_test.go``, plus extreme quantities (issue #12)."""

from __future__ import annotations

import pytest

from scheduler.model import Pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesFitArgs, ScoringStrategy
from tests.builders import node, pod, reasons, run_filter, run_score

FIT = noderesources.NodeResourcesFit(NodeResourcesFitArgs())


@pytest.mark.parametrize(("name", "p", "existing", "want", "unresolvable"), [
    ("fits", pod("p", "1", "1Gi"), [], None, False),
    ("insufficient cpu", pod("p", "3", "1Gi"), [pod("e", "2", "1Gi", node_name="n")], ("Insufficient cpu",), False),
    ("insufficient cpu and memory", pod("p", "3", "20Gi"), [pod("e", "2", "20Gi", node_name="n")],
     ("Insufficient cpu", "Insufficient memory"), False),
    ("request above capacity is unresolvable", pod("p", "9", "1Gi"), [], ("Insufficient cpu",), True),
    ("zero-request pod still counts pods", pod("p", None, None), [pod(f"e{i}", None, None, node_name="n")
                                                                  for i in range(2)], ("Too many pods",), False),
])
def test_fit_filter(name: str, p: Pod, existing: list[Pod], want: tuple[str, ...] | None, unresolvable: bool) -> None:
    n = node("n", "4", "32Gi", pods=2)
    (got,) = run_filter(FIT, p, [n], existing)
    assert (None if got is None else got.reasons) == want, name
    if got is not None:
        assert (got.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE") == unresolvable


def test_fit_extended_resource() -> None:
    gpu = node("gpu", extra={"example.com/gpu": "2"})
    plain = node("plain")
    p = pod("p", spec={"containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1"}}}]})
    assert reasons(run_filter(FIT, p, [gpu, plain])) == [None, ("Insufficient example.com/gpu",)]
    ignoring = noderesources.NodeResourcesFit(NodeResourcesFitArgs(ignoredResources=("example.com/gpu",)))
    assert reasons(run_filter(ignoring, p, [gpu, plain])) == [None, None]


@pytest.mark.parametrize(("strategy", "want"), [
    # Upstream's LeastAllocated example: node1 4000m/10000Mi with 3000m/5000Mi requested after the pod,
    # node2 6000m/10000Mi with 3000m/5000Mi: scores (25+50)/2=37 and (50+50)/2=50.
    ("LeastAllocated", [37, 50]),
    ("MostAllocated", [62, 50]),
])
def test_fit_scoring(strategy: str, want: list[int]) -> None:
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type=strategy)))
    nodes = [node("n1", "4", "10000", pods=110), node("n2", "6", "10000", pods=110)]
    p = pod("p", "3", "5000")
    assert run_score(plugin, p, nodes) == want


def test_requested_to_capacity_ratio() -> None:
    args = NodeResourcesFitArgs(scoringStrategy={"type": "RequestedToCapacityRatio",
                                                 "requestedToCapacityRatio": {"shape": [
                                                     {"utilization": 0, "score": 10},
                                                     {"utilization": 100, "score": 0}]}})
    plugin = noderesources.NodeResourcesFit(args)
    # 3000/4000 = 75% -> 25; 5000/10000 = 50% -> 50: avg 37.5 -> 38 (rounded half away from zero)
    assert run_score(plugin, pod("p", "3", "5000"), [node("n1", "4", "10000")]) == [38]


def test_balanced_allocation() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(noderesources.NodeResourcesBalancedAllocationArgs())
    # cpu 3000/4000=0.75, memory 5000/10000=0.5: std=0.125 -> 87; a perfectly balanced node -> 100
    got = run_score(plugin, pod("p", "3", "5000"), [node("n1", "4", "10000"), node("n2", "6", "10000")])
    assert got == [87, 100]
    assert run_score(plugin, pod("p", None, None), [node("n1")]) == [0]  # best-effort pods skip


HUGE = ["0", "1n", "1", "4e15", "1e16", "1E", "9223372036854775807", "8Ei", "1e64"]


@pytest.mark.parametrize(("name", "p", "existing", "want", "unresolvable"), [
    ("a pod asking 1e16 CPUs fits nowhere", pod("p", "1e16", "1Gi"), [], ("Insufficient cpu",), True),
    ("9223372036854775807 CPUs", pod("p", "9223372036854775807"), [], ("Insufficient cpu",), True),
    ("8Ei memory", pod("p", "1", "8Ei"), [], ("Insufficient memory",), True),
    ("1e64 of both", pod("p", "1e64", "1e64"), [], ("Insufficient cpu", "Insufficient memory"), True),
    ("node wrapped by three 4e15 pods is full", pod("p", "3", "1Gi"),
     [pod(f"e{i}", "4e15", None, node_name="n") for i in range(3)], ("Insufficient cpu",), False),
    ("node holding a 1e16 pod is full", pod("p", "1m", None), [pod("e", "1e16", None, node_name="n")],
     ("Insufficient cpu",), False),
])
def test_fit_filter_extremes(name: str, p: Pod, existing: list[Pod], want: tuple[str, ...],
                             unresolvable: bool) -> None:
    (got,) = run_filter(FIT, p, [node("n", "4", "32Gi")], existing)
    assert got is not None and got.reasons == want, name
    assert (got.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE") == unresolvable, name


@pytest.mark.parametrize(("name", "alloc", "cpu", "existing", "fits"), [
    # Allocatable past CAP: the capped columns alone would call these equal; the exact totals decide.
    ("1e30-CPU node takes a 1e20-CPU pod", "1e30", "1e20", [], True),
    ("1e20-CPU node refuses a 1e30-CPU pod", "1e20", "1e30", [], False),
    ("exactly full at 1e25", "1e25", "5e24", ["5e24"], True),
    ("one milli-CPU over at 1e25", "1e25", f"{5 * 10**27 + 1}m", ["5e24"], False),
    ("int64-max node, int64-max pod", "9223372036854775807", "9223372036854775807", [], True),
])
def test_fit_filter_exact_on_huge_nodes(name: str, alloc: str, cpu: str, existing: list[str], fits: bool) -> None:
    others = [pod(f"e{i}", c, None, node_name="n") for i, c in enumerate(existing)]
    (got,) = run_filter(FIT, pod("p", cpu, None), [node("n", alloc)], others)
    assert (got is None) == fits, (name, got)


def test_fit_filter_many_extended_resources() -> None:
    """More requested resources than one int64 of verdict bits holds: the matrix path, same reasons."""
    names = [f"example.com/r{i:03}" for i in range(70)]
    p = pod("p", spec={"containers": [{"name": "c", "resources": {"requests": dict.fromkeys(names, "1")}}]})
    half = node("half", extra=dict.fromkeys(names[:35], "1"))
    full = node("all", extra=dict.fromkeys(names, "1"))
    got = run_filter(FIT, p, [half, full, node("none")])
    assert got[1] is None
    assert got[0] is not None and got[0].reasons == tuple(f"Insufficient {n}" for n in names[35:])
    assert got[2] is not None and len(got[2].reasons) == 70


@pytest.mark.parametrize("strategy", ["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"])
def test_fit_scores_stay_in_range_at_extremes(strategy: str) -> None:
    shape = {"requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                    {"utilization": 100, "score": 10}]}}
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={"type": strategy, **shape}))
    nodes = [node(f"n{i}", cpu=q, memory=q) for i, q in enumerate(HUGE)]
    existing = [pod(f"e{i}", q, q, node_name=f"n{i}") for i, q in enumerate(HUGE)]
    for q in HUGE:
        got = run_score(plugin, pod("p", q, q), nodes, existing)
        assert all(0 <= s <= 100 for s in got), (q, got)


@pytest.mark.parametrize(("name", "strategy", "alloc", "requested", "want"), [
    # The exact formulas, on nodes whose allocatable makes x * 100 overflow int64. The pod adds 1m, so
    # LeastAllocated's floor((alloc - requested) * 100 / alloc) falls just below the round number.
    ("least: half of 1e18 CPUs used", "LeastAllocated", "1E", "5e17", 49),
    ("most: half of 1e18 CPUs used", "MostAllocated", "1E", "5e17", 50),
    ("least: a quarter of 1e30", "LeastAllocated", "1e30", "25e28", 74),
    ("most: over-committed past CAP", "MostAllocated", "1e18", "1e30", 100),
    ("least: over-committed past CAP", "LeastAllocated", "1e18", "1e30", 0),
])
def test_fit_scores_exact_on_huge_nodes(name: str, strategy: str, alloc: str, requested: str, want: int) -> None:
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={
        "type": strategy, "resources": [{"name": "cpu", "weight": 1}]}))
    (got,) = run_score(plugin, pod("p", "1m", None), [node("n", alloc)], [pod("e", requested, None, node_name="n")])
    assert got == want, name


def test_balanced_allocation_at_extremes() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(noderesources.NodeResourcesBalancedAllocationArgs())
    nodes = [node(f"n{i}", cpu=q, memory=q) for i, q in enumerate(HUGE)]
    existing = [pod(f"e{i}", q, q, node_name=f"n{i}") for i, q in enumerate(HUGE)]
    for q in HUGE[1:]:
        got = run_score(plugin, pod("p", q, "1"), nodes, existing)
        assert all(0 <= s <= 100 for s in got), (q, got)
    # 1e30 CPUs half used, memory idle: exactly upstream's |0.5 - 0| / 2 = 0.25 -> 75.
    assert run_score(plugin, pod("p", "1m", "1"), [node("n", "1e30", "1e30")],
                     [pod("e", "5e29", None, node_name="n")]) == [75]


def test_fit_prescore_never_skips_and_score_agrees_without_it() -> None:
    # Upstream's Fit.PreScore (fit.go) always succeeds, writing the pod's requests per scored resource
    # with the non-zero defaults: a pod that requests nothing is scored as 100m cpu / 200Mi memory.
    from tests.builders import setup
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs())
    nodes = [node("n1", "4", "10000", pods=110), node("n2", "6", "10000", pods=110)]
    for p in (pod("p", "3", "5000"), pod("empty")):
        snap, state, rows = setup(nodes, [])
        assert plugin.pre_score(state, p, snap, rows).is_success()
        with_state = plugin.score_nodes(state, p, snap, rows).tolist()
        snap, state, rows = setup(nodes, [])
        assert plugin.score_nodes(state, p, snap, rows).tolist() == with_state
    assert run_score(plugin, pod("empty"), nodes) != [0, 0]
