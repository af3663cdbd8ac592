"""NodeResourcesFit and NodeResourcesBalancedAllocation, after upstream's ``noderesources/fit_test.go``,
``balanced_allocation_test.go`` and ``requested_to_capacity_ratio_test.go``, plus extreme quantities
(issue #12) and the request/arithmetic semantics of issue #14 (items 1-3)."""

from __future__ import annotations

from typing import Any

import pydantic_core
import pytest

from scheduler.model import Pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesFitArgs, ScoringStrategy
from tests.builders import node, pod, reasons, run_filter, run_score
from tests.wrappers import MakeNode, MakePod

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


# --- issue #14 items 1-3 -------------------------------------------------------------------------------

def _no_containers(name: str, node_name: str = "") -> Pod:
    """st.MakePod().Obj(): a pod without containers (only possible in tests), which requests nothing."""
    return pod(name, node_name=node_name, spec={"containers": []})


def _containers(name: str, *reqs: dict[str, str], node_name: str = "") -> Pod:
    return pod(name, node_name=node_name, spec={"containers": [
        {"name": f"c{i}", "image": "i", "resources": {"requests": r}} for i, r in enumerate(reqs)]})


def _rtcr(shape: list[tuple[int, int]], resources: list[tuple[str, int]] | None = None
          ) -> noderesources.NodeResourcesFit:
    strategy: dict[str, object] = {"type": "RequestedToCapacityRatio", "requestedToCapacityRatio": {
        "shape": [{"utilization": u, "score": s} for u, s in shape]}}
    if resources is not None:
        strategy["resources"] = [{"name": n, "weight": w} for n, w in resources]
    return noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy=strategy))


@pytest.mark.parametrize(("strategy", "cpu", "memory", "want"), [
    # An explicit "0" is a request of 0: an idle 4-CPU / 10000-byte node is untouched by the pod.
    ("LeastAllocated", "0", "0", 100),
    ("MostAllocated", "0", "0", 0),
    # Absent requests count 100m / 200Mi (here: the node's memory is full, cpu 100m of 4).
    ("LeastAllocated", None, None, (97 + 0) // 2),
    ("MostAllocated", None, None, (2 + 100) // 2),
])
def test_zero_request_is_a_request(strategy: str, cpu: str | None, memory: str | None, want: int) -> None:
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy=ScoringStrategy(type=strategy)))
    assert run_score(plugin, pod("p", cpu, memory), [node("n", "4", "10000")]) == [want]


def test_balanced_allocation_counts_explicit_zero_as_zero() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(noderesources.NodeResourcesBalancedAllocationArgs())
    # cpu 0 of 4, memory 5000 of 10000: |0 - 0.5| / 2 = 0.25 -> 75 (upstream uses the actual requests).
    assert run_score(plugin, pod("p", "0", "5000"), [node("n", "4", "10000")]) == [75]


# requested_to_capacity_ratio_test.go, TestRequestedToCapacityRatioScoringStrategy: shape (0,10)(100,0),
# cpu and memory weight 1; nodes' capacities are plain numbers ("4000" CPUs, "10000" bytes).
RTCR_STRATEGY = [
    ("nothing scheduled, nothing requested (default - least requested nodes have priority)",
     _no_containers("p"), [("node1", "4000", "10000"), ("node2", "4000", "10000")],
     [_no_containers("e1", "node1"), _no_containers("e2", "node1")], [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes (default - least requested nodes have "
     "priority)", _containers("p", {"cpu": "1000", "memory": "2000"}, {"cpu": "2000", "memory": "3000"}),
     [("node1", "4000", "10000"), ("node2", "6000", "10000")],
     [_no_containers("e1", "node1"), _no_containers("e2", "node1")], [38, 50]),
    ("no resources requested, pods scheduled with resources (default - least requested nodes have priority)",
     _no_containers("p"), [("node1", "4000", "10000"), ("node2", "6000", "10000")],
     [_containers("e1", {"cpu": "3000", "memory": "5000"}, node_name="node1"),
      _containers("e2", {"cpu": "3000", "memory": "5000"}, node_name="node2")], [38, 50]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "want"), RTCR_STRATEGY, ids=[c[0] for c in RTCR_STRATEGY])
def test_requested_to_capacity_ratio_strategy(name: str, p: Pod, nodes: list[tuple[str, str, str]],
                                              existing: list[Pod], want: list[int]) -> None:
    plugin = _rtcr([(0, 10), (100, 0)])
    assert run_score(plugin, p, [node(n, c, m) for n, c, m in nodes], existing) == want


# requested_to_capacity_ratio_test.go, TestBrokenLinearFunction; the last case is issue #14's
# decreasing segment, where Go's truncating "/" gives one point more than Python's floor would.
BROKEN_LINEAR = [
    ([(10, 1), (90, 9)], [(-10, 1), (0, 1), (9, 1), (10, 1), (15, 1), (19, 1), (20, 2), (89, 8), (90, 9),
                          (99, 9), (100, 9), (110, 9)]),
    ([(0, 2), (40, 10), (100, 0)], [(-10, 2), (0, 2), (20, 6), (30, 8), (40, 10), (70, 5), (100, 0), (110, 0)]),
    ([(0, 2), (40, 2), (100, 2)], [(-10, 2), (0, 2), (20, 2), (30, 2), (40, 2), (70, 2), (100, 2), (110, 2)]),
    ([(0, 2), (40, 10), (100, 0)], [(41, 10), (55, 8), (71, 5), (99, 1)]),
]


@pytest.mark.parametrize(("shape", "assertions"), BROKEN_LINEAR)
def test_broken_linear_function(shape: list[tuple[int, int]], assertions: list[tuple[int, int]]) -> None:
    import numpy as np
    util = np.array([p for p, _ in assertions], np.int64)
    assert noderesources.broken_linear(shape, util).tolist() == [want for _, want in assertions]


def _ext_node(name: str, extended: dict[str, str]) -> object:
    # makeNode(name, 4000, 10000*1024*1024, extended) in upstream's helpers
    return node(name, "4", str(10000 * 1024 * 1024), extra=extended)


# requested_to_capacity_ratio_test.go, TestResourceBinPackingSingleExtended: shape (0,0)(100,1), intel.com/foo.
SINGLE_EXTENDED = [
    ("nothing scheduled, nothing requested", _no_containers("p"), [], [0, 0]),
    ("resources requested, pods scheduled with less resources", _containers("p", {"intel.com/foo": "2"}),
     [_no_containers("e")], [2, 5]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     _containers("p", {"intel.com/foo": "2"}), [_containers("e", {"intel.com/foo": "2"}, node_name="node2")],
     [2, 10]),
    ("resources requested, pods scheduled with more resources", _containers("p", {"intel.com/foo": "4"}),
     [_no_containers("e")], [5, 10]),
]


@pytest.mark.parametrize(("name", "p", "existing", "want"), SINGLE_EXTENDED, ids=[c[0] for c in SINGLE_EXTENDED])
def test_resource_bin_packing_single_extended(name: str, p: Pod, existing: list[Pod], want: list[int]) -> None:
    plugin = _rtcr([(0, 0), (100, 1)], [("intel.com/foo", 1)])
    nodes = [_ext_node("node1", {"intel.com/foo": "8"}), _ext_node("node2", {"intel.com/foo": "4"})]
    assert run_score(plugin, p, nodes, existing) == want


# requested_to_capacity_ratio_test.go, TestResourceBinPackingMultipleExtended: foo weight 3, bar weight 5.
MULTIPLE_EXTENDED = [
    ("nothing scheduled, nothing requested", _no_containers("p"), [], [0, 0]),
    ("resources requested, pods scheduled with less resources",
     _containers("p", {"intel.com/foo": "2", "intel.com/bar": "2"}), [_no_containers("e")], [4, 3]),
    ("resources requested, pods scheduled with resources, on node with existing pod running ",
     _containers("p", {"intel.com/foo": "2", "intel.com/bar": "2"}),
     [_containers("e", {"intel.com/foo": "4", "intel.com/bar": "2"}, node_name="node2")], [4, 7]),
    ("resources requested, pods scheduled with more resources",
     _containers("p", {"intel.com/foo": "4", "intel.com/bar": "2"}), [_no_containers("e")], [5, 5]),
]


@pytest.mark.parametrize(("name", "p", "existing", "want"), MULTIPLE_EXTENDED, ids=[c[0] for c in MULTIPLE_EXTENDED])
def test_resource_bin_packing_multiple_extended(name: str, p: Pod, existing: list[Pod], want: list[int]) -> None:
    plugin = _rtcr([(0, 0), (100, 1)], [("intel.com/foo", 3), ("intel.com/bar", 5)])
    nodes = [_ext_node("node1", {"intel.com/foo": "8", "intel.com/bar": "4"}),
             _ext_node("node2", {"intel.com/foo": "4", "intel.com/bar": "8"})]
    assert run_score(plugin, p, nodes, existing) == want


@pytest.mark.parametrize(("name", "nodes", "want"), [
    # requested_to_capacity_ratio.go: a resource with allocatable 0 is skipped, and one whose shaped
    # score is 0 counts in neither the sum nor the weight. Shape (0,0)(100,10), cpu weight 1, memory 3.
    # cpu 2 of 4 -> 50; memory 0 of 10000 -> 0: left out, so 50 (not (50 + 0) / 4 = 13).
    ("zero-scored resource left out", [("n", "4", "10000")], [50]),
    # A node without memory: only cpu counts.
    ("zero allocatable skipped", [("n", "4", "0")], [50]),
])
def test_requested_to_capacity_ratio_skips(name: str, nodes: list[tuple[str, str, str]], want: list[int]) -> None:
    plugin = _rtcr([(0, 0), (100, 10)], [("cpu", 1), ("memory", 3)])
    assert run_score(plugin, pod("p", "2", "0"), [node(n, c, m) for n, c, m in nodes]) == want, name


# --- least_allocated_test.go / most_allocated_test.go ----------------------------------------------------
# "Resources not set, pods scheduled with error" is left out: our args default and validate the
# resources list, so no profile can have it empty.
EXT = "abc.com/xyz"
DEFAULT_RESOURCES = [("cpu", 1), ("memory", 1)]
EXTENDED_SET = [("cpu", 1), ("memory", 1), (EXT, 1)]


def two_containers() -> Pod:
    return MakePod().Req({"cpu": "1000", "memory": "2000"}).Req({"cpu": "2000", "memory": "3000"}).Obj()


def on(node_name: str, cpu: str, memory: str) -> Pod:
    return MakePod().Name(f"e-{node_name}-{cpu}-{memory}").Node(node_name).Req({"cpu": cpu, "memory": memory}).Obj()


def xnode(name: str, cpu: str, memory: str, ext: str | None = None) -> Any:
    res = {"cpu": cpu, "memory": memory, **({EXT: ext} if ext else {})}
    return MakeNode().Name(name).Capacity(res).Obj()


LEAST = [
    ("nothing scheduled, nothing requested", MakePod().Obj(),
     [xnode("node1", "4000", "10000"), xnode("node2", "4000", "10000")], [], DEFAULT_RESOURCES, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", two_containers(),
     [xnode("node1", "4000", "10000"), xnode("node2", "6000", "10000")], [], DEFAULT_RESOURCES, [37, 50]),
    ("no resources requested, pods scheduled", MakePod().Obj(),
     [xnode("node1", "4000", "10000"), xnode("node2", "4000", "10000")],
     [MakePod().Name(f"e{i}").Node(n).Obj() for i, n in enumerate(("node1", "node1", "node2", "node2"))],
     DEFAULT_RESOURCES, [100, 100]),
    ("no resources requested, pods scheduled with resources", MakePod().Obj(),
     [xnode("node1", "10000", "20000"), xnode("node2", "10000", "20000")],
     [MakePod().Name("a").Node("node1").Req({"cpu": "3000", "memory": "0"}).Obj(),
      MakePod().Name("b").Node("node1").Req({"cpu": "3000", "memory": "0"}).Obj(),
      on("node2", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [70, 57]),
    ("resources requested, pods scheduled with resources", two_containers(),
     [xnode("node1", "10000", "20000"), xnode("node2", "10000", "20000")],
     [on("node1", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", two_containers(),
     [xnode("node1", "10000", "20000"), xnode("node2", "10000", "50000")],
     [on("node1", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [57, 60]),
    ("requested resources exceed node capacity", MakePod().Req({"cpu": "3000", "memory": "0"}).Obj(),
     [xnode("node1", "4000", "10000"), xnode("node2", "4000", "10000")],
     [on("node1", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [50, 25]),
    ("zero node resources, pods scheduled with resources", MakePod().Obj(),
     [MakeNode().Name("node1").Obj(), MakeNode().Name("node2").Obj()],
     [on("node1", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     two_containers(), [xnode("node1", "4000", "10000"), xnode("node2", "6000", "10000")], [],
     [("memory", 2), ("cpu", 1)], [41, 50]),
    ("bypass extended resource if the pod does not request", two_containers(),
     [xnode("node1", "6000", "10000"), xnode("node2", "6000", "10000", "4")], [], EXTENDED_SET, [50, 50]),
]

MOST = [
    ("nothing scheduled, nothing requested", MakePod().Obj(),
     [xnode("node1", "4000", "10000"), xnode("node2", "4000", "10000")], [], DEFAULT_RESOURCES, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", two_containers(),
     [xnode("node1", "4000", "10000"), xnode("node2", "6000", "10000")], [], DEFAULT_RESOURCES, [62, 50]),
    ("no resources requested, pods scheduled with resources", MakePod().Obj(),
     [xnode("node1", "10000", "20000"), xnode("node2", "10000", "20000")],
     [MakePod().Name("a").Node("node1").Req({"cpu": "3000", "memory": "0"}).Obj(),
      MakePod().Name("b").Node("node1").Req({"cpu": "3000", "memory": "0"}).Obj(),
      on("node2", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [30, 42]),
    ("resources requested, pods scheduled with resources", two_containers(),
     [xnode("node1", "10000", "20000"), xnode("node2", "10000", "20000")],
     [on("node1", "3000", "0"), on("node2", "3000", "5000")], DEFAULT_RESOURCES, [42, 55]),
    ("resources requested equal node capacity",
     MakePod().Req({"cpu": "2000", "memory": "4000"}).Req({"cpu": "3000", "memory": "5000"}).Obj(),
     [xnode("node1", "5000", "10000"), xnode("node2", "10000", "9000")], [], DEFAULT_RESOURCES, [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes (memory weight 2)", two_containers(),
     [xnode("node1", "4000", "10000"), xnode("node2", "6000", "10000")], [], [("memory", 2), ("cpu", 1)], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource",
     MakePod().Req({}).Obj(), [xnode("node1", "250m", "1000Mi"), xnode("node2", "250m", "1000Mi")],
     [MakePod().Name("a").Node("node1").Req({}).Obj(), MakePod().Name("b").Node("node1").Req({}).Obj()],
     DEFAULT_RESOURCES, [80, 30]),
    ("bypass extended resource if the pod does not request", two_containers(),
     [xnode("node1", "6000", "10000"), xnode("node2", "6000", "10000", "4")], [], EXTENDED_SET, [50, 50]),
    ("honor extended resource if the pod request", MakePod().Req({"cpu": "3000", "memory": "5000", EXT: "2"}).Obj(),
     [xnode("node1", "6000", "10000", "4"), xnode("node2", "6000", "10000", "10")], [], EXTENDED_SET, [50, 40]),
    ("if the node doesn't have a resource", MakePod().Req({"cpu": "3000", "memory": "4000"}).Obj(),
     [xnode("node1", "6000", "10000"), xnode("node2", "6000", "10000", "4")], [],
     [(EXT, 2), ("cpu", 1), ("memory", 1)], [45, 45]),
]


def _strategy_plugin(kind: str, resources: list[tuple[str, int]]) -> noderesources.NodeResourcesFit:
    return noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={
        "type": kind, "resources": [{"name": n, "weight": w} for n, w in resources]}))


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "resources", "want"), LEAST, ids=[c[0][:70] for c in LEAST])
def test_least_allocated_scoring_strategy(name: str, p: Pod, nodes: list[Any], existing: list[Pod],
                                          resources: list[tuple[str, int]], want: list[int]) -> None:
    assert run_score(_strategy_plugin("LeastAllocated", resources), p, nodes, existing) == want, name


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "resources", "want"), MOST, ids=[c[0][:70] for c in MOST])
def test_most_allocated_scoring_strategy(name: str, p: Pod, nodes: list[Any], existing: list[Pod],
                                         resources: list[tuple[str, int]], want: list[int]) -> None:
    assert run_score(_strategy_plugin("MostAllocated", resources), p, nodes, existing) == want, name


# --- balanced_allocation_test.go TestNodeResourcesBalancedAllocation ------------------------------------
# The two DRA cases need the DRAExtendedResource gate (alpha, off by default): left out.

GPU = "nvidia.com/gpu"


def mnode(name: str, milli_cpu: int, memory: int, gpus: int | None = None) -> Any:
    """upstream's makeNode(name, milliCPU, memory, extended)."""
    res = {"cpu": f"{milli_cpu}m", "memory": str(memory), **({GPU: str(gpus)} if gpus is not None else {})}
    return MakeNode().Name(name).Capacity(res).Obj()


def cpu_and_memory(node_name: str = "node2", name: str = "cm") -> Pod:
    return (MakePod().Name(name).Node(node_name).Req({"cpu": "1000m", "memory": "2000"})
            .Req({"cpu": "2000m", "memory": "3000"}).Obj())


def cpu_only(node_name: str = "node1", name: str = "c") -> Pod:
    return (MakePod().Name(name).Node(node_name).Req({"cpu": "1000m", "memory": "0"})
            .Req({"cpu": "2000m", "memory": "0"}).Obj())


def cpu_memory_gpu(node_name: str = "node1") -> Pod:
    return (MakePod().Name("cmg").Node(node_name).Req({"cpu": "1000m", "memory": "2000"})
            .Req({"cpu": "2000m", "memory": "3000", GPU: "3"}).Obj())


CPU_MEM = [("cpu", 1), ("memory", 1)]
CPU_MEM_GPU = [("cpu", 1), ("memory", 1), (GPU, 1)]
BALANCED = [
    ("nothing scheduled, resources requested, differently sized nodes", cpu_and_memory(),
     [mnode("node1", 4000, 10000), mnode("node2", 6000, 10000)], [], CPU_MEM, True, [87, 100]),
    ("resources requested, pods scheduled with resources", cpu_and_memory(),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 20000)], [cpu_only(), cpu_and_memory(name="e")], CPU_MEM,
     True, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes", cpu_and_memory(),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 50000)], [cpu_only(), cpu_and_memory(name="e")], CPU_MEM,
     True, [82, 80]),
    ("requested resources at node capacity", cpu_only(name="p"),
     [mnode("node1", 6000, 10000), mnode("node2", 6000, 10000)], [cpu_only(), cpu_and_memory(name="e")], CPU_MEM,
     True, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation",
     MakePod().Req({"memory": "0", GPU: "1"}).Obj(), [mnode("node1", 3500, 40000, 8), mnode("node2", 3500, 40000, 8)],
     [cpu_and_memory(name="e"), cpu_memory_gpu()], CPU_MEM_GPU, True, [70, 65]),
    ("node without the scalar resource should skip the scalar resource", cpu_and_memory(),
     [mnode("node1", 3500, 40000, 8), mnode("node2", 3500, 40000)], [], CPU_MEM_GPU, True, [63, 63]),
    ("resources requested, pods scheduled with resources if PreScore not called", cpu_and_memory(),
     [mnode("node1", 10000, 20000), mnode("node2", 10000, 20000)], [cpu_only(), cpu_and_memory(name="e")], CPU_MEM,
     False, [82, 95]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "resources", "pre_score", "want"), BALANCED,
                         ids=[c[0][:70] for c in BALANCED])
def test_node_resources_balanced_allocation(name: str, p: Pod, nodes: list[Any], existing: list[Pod],
                                            resources: list[tuple[str, int]], pre_score: bool, want: list[int]) -> None:
    from tests.builders import setup
    plugin = noderesources.NodeResourcesBalancedAllocation(noderesources.NodeResourcesBalancedAllocationArgs(
        resources=[{"name": n, "weight": w} for n, w in resources]))
    snap, state, rows = setup(nodes, existing)
    if pre_score:
        assert plugin.pre_score(state, p, snap, rows).is_success(), name
    assert plugin.score_nodes(state, p, snap, rows).tolist() == want, name


def test_node_resources_balanced_allocation_skips_best_effort() -> None:
    """"nothing scheduled, nothing requested, skip in PreScore"."""
    from tests.builders import setup
    plugin = noderesources.NodeResourcesBalancedAllocation(noderesources.NodeResourcesBalancedAllocationArgs())
    snap, state, rows = setup([mnode("node1", 4000, 10000), mnode("node2", 4000, 10000)], [])
    assert plugin.pre_score(state, MakePod().Obj(), snap, rows).is_skip()


# --- fit_test.go TestEnoughRequests (the cpu, memory, init-container and extended-resource cases) -------
# Node allocatable: makeAllocatableResources(10, 20, 32, 5, 20, 5). The status code follows current
# upstream's fitsRequest: UnschedulableAndUnresolvable when a request exceeds the node's allocatable
# itself (the table these cases come from predates that split and said Unschedulable throughout).

EXT_A, EXT_B = "example.com/aaa", "example.com/bbb"
UNSCHED_, UNRESOLV_ = "UNSCHEDULABLE", "UNSCHEDULABLE_AND_UNRESOLVABLE"


def res(cpu_m: int = 0, mem: int = 0, scalars: dict[str, int] | None = None) -> dict[str, str]:
    out = {"cpu": f"{cpu_m}m", "memory": str(mem)}
    out.update({k: str(v) for k, v in (scalars or {}).items()})
    return out


def resource_pod(*usages: dict[str, str], init: tuple[dict[str, str], ...] = ()) -> Pod:
    spec: dict[str, Any] = {"containers": [{"name": f"c{i}", "image": "i", "resources": {"requests": u}}
                                           for i, u in enumerate(usages)],
                            "initContainers": [{"name": f"i{i}", "image": "i", "resources": {"requests": u}}
                                               for i, u in enumerate(init)]}
    return pod("p", None, None, spec=spec)


def a(n: int) -> dict[str, int]:
    return {EXT_A: n}


ENOUGH = [
    ("no resources requested always fits", resource_pod(), res(10, 20), None),
    ("too many resources fails", resource_pod(res(1, 1)), res(10, 20),
     (UNSCHED_, ("Insufficient cpu", "Insufficient memory"))),
    ("too many resources fails due to init container cpu", resource_pod(res(1, 1), init=(res(3, 1),)), res(8, 19),
     (UNSCHED_, ("Insufficient cpu",))),
    ("too many resources fails due to highest init container cpu",
     resource_pod(res(1, 1), init=(res(3, 1), res(2, 1))), res(8, 19), (UNSCHED_, ("Insufficient cpu",))),
    ("too many resources fails due to init container memory", resource_pod(res(1, 1), init=(res(1, 3),)), res(9, 19),
     (UNSCHED_, ("Insufficient memory",))),
    ("too many resources fails due to highest init container memory",
     resource_pod(res(1, 1), init=(res(1, 3), res(1, 2))), res(9, 19), (UNSCHED_, ("Insufficient memory",))),
    ("init container fits because it's the max, not sum, of containers and init containers",
     resource_pod(res(1, 1), init=(res(1, 1),)), res(9, 19), None),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     resource_pod(res(1, 1), init=(res(1, 1), res(1, 1))), res(9, 19), None),
    ("both resources fit", resource_pod(res(1, 1)), res(5, 5), None),
    ("one resource memory fits", resource_pod(res(2, 1)), res(9, 5), (UNSCHED_, ("Insufficient cpu",))),
    ("one resource cpu fits", resource_pod(res(1, 2)), res(5, 19), (UNSCHED_, ("Insufficient memory",))),
    ("equal edge case", resource_pod(res(5, 1)), res(5, 19), None),
    ("equal edge case for init container", resource_pod(res(4, 1), init=(res(5, 1),)), res(5, 19), None),
    ("extended resource fits", resource_pod(res(scalars=a(1))), res(), None),
    ("extended resource fits for init container", resource_pod(res(), init=(res(scalars=a(1)),)), res(), None),
    ("extended resource capacity enforced", resource_pod(res(1, 1, a(10))), res(scalars=a(0)),
     (UNRESOLV_, (f"Insufficient {EXT_A}",))),
    ("extended resource capacity enforced for init container", resource_pod(res(), init=(res(1, 1, a(10)),)),
     res(scalars=a(0)), (UNRESOLV_, (f"Insufficient {EXT_A}",))),
    ("extended resource allocatable enforced", resource_pod(res(1, 1, a(1))), res(scalars=a(5)),
     (UNSCHED_, (f"Insufficient {EXT_A}",))),
    ("extended resource allocatable enforced for init container", resource_pod(res(), init=(res(1, 1, a(1)),)),
     res(scalars=a(5)), (UNSCHED_, (f"Insufficient {EXT_A}",))),
    ("extended resource allocatable enforced for multiple containers",
     resource_pod(res(1, 1, a(3)), res(1, 1, a(3))), res(scalars=a(2)), (UNRESOLV_, (f"Insufficient {EXT_A}",))),
    ("extended resource allocatable admits multiple init containers",
     resource_pod(res(), init=(res(1, 1, a(3)), res(1, 1, a(3)))), res(scalars=a(2)), None),
    ("extended resource allocatable enforced for multiple init containers",
     resource_pod(res(), init=(res(1, 1, a(6)), res(1, 1, a(3)))), res(scalars=a(2)),
     (UNRESOLV_, (f"Insufficient {EXT_A}",))),
    ("extended resource allocatable enforced for unknown resource", resource_pod(res(1, 1, {EXT_B: 1})),
     res(), (UNRESOLV_, (f"Insufficient {EXT_B}",))),
    ("extended resource allocatable enforced for unknown resource for init container",
     resource_pod(res(), init=(res(1, 1, {EXT_B: 1}),)), res(), (UNRESOLV_, (f"Insufficient {EXT_B}",))),
]


@pytest.mark.parametrize(("name", "p", "used", "want"), ENOUGH, ids=[c[0][:70] for c in ENOUGH])
def test_enough_requests(name: str, p: Pod, used: dict[str, str], want: tuple[str, tuple[str, ...]] | None) -> None:
    n = MakeNode().Name("n").Capacity({"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5",
                                       "ephemeral-storage": "20", "hugepages-2Mi": "5"}).Obj()
    existing = pod("e", None, None, node_name="n", spec={"containers": [
        {"name": "c", "image": "i", "resources": {"requests": used}}]})
    (got,) = run_filter(FIT, p, [n], [existing])
    assert (None if got is None else (got.code.name, got.reasons)) == want, name


HUGE_A = "hugepages-2Mi"
ENOUGH_MORE = [
    ("kubernetes.io resource capacity enforced", resource_pod(res(1, 1, {"kubernetes.io/something": 10})), res(),
     (UNRESOLV_, ("Insufficient kubernetes.io/something",)), ()),
    ("kubernetes.io resource capacity enforced for init container",
     resource_pod(res(), init=(res(1, 1, {"subdomain.kubernetes.io/something": 10}),)), res(),
     (UNRESOLV_, ("Insufficient subdomain.kubernetes.io/something",)), ()),
    ("hugepages resource capacity enforced", resource_pod(res(1, 1, {HUGE_A: 10})), res(scalars={HUGE_A: 0}),
     (UNRESOLV_, (f"Insufficient {HUGE_A}",)), ()),
    ("hugepages resource capacity enforced for init container", resource_pod(res(), init=(res(1, 1, {HUGE_A: 10}),)),
     res(scalars={HUGE_A: 0}), (UNRESOLV_, (f"Insufficient {HUGE_A}",)), ()),
    ("hugepages resource allocatable enforced for multiple containers",
     resource_pod(res(1, 1, {HUGE_A: 3}), res(1, 1, {HUGE_A: 3})), res(scalars={HUGE_A: 2}),
     (UNRESOLV_, (f"Insufficient {HUGE_A}",)), ()),
    ("skip checking ignored extended resource", resource_pod(res(1, 1, {EXT_B: 1})), res(), None, (EXT_B,)),
]


@pytest.mark.parametrize(("name", "p", "used", "want", "ignored"), ENOUGH_MORE, ids=[c[0][:70] for c in ENOUGH_MORE])
def test_enough_requests_scalars(name: str, p: Pod, used: dict[str, str], want: tuple[str, tuple[str, ...]] | None,
                                 ignored: tuple[str, ...]) -> None:
    """TestEnoughRequests, continued: kubernetes.io-prefixed and hugepages resources, ignoredResources."""
    n = MakeNode().Name("n").Capacity({"cpu": "10m", "memory": "20", "pods": "32", EXT_A: "5",
                                       "ephemeral-storage": "20", HUGE_A: "5"}).Obj()
    existing = pod("e", None, None, node_name="n", spec={"containers": [
        {"name": "c", "image": "i", "resources": {"requests": used}}]})
    fit = noderesources.NodeResourcesFit(NodeResourcesFitArgs(ignoredResources=ignored))
    (got,) = run_filter(fit, p, [n], [existing])
    assert (None if got is None else (got.code.name, got.reasons)) == want, name


def overhead_pod(cpu: str, memory: str) -> Pod:
    return pod("p", None, None, spec={"containers": [{"name": "c", "image": "i", "resources": {"requests": res(1, 1)}}],
                                      "overhead": {"cpu": cpu, "memory": memory}})


@pytest.mark.parametrize(("name", "p", "want"), [
    ("resources + pod overhead fits", overhead_pod("3m", "13"), None),
    ("requests + overhead does not fit for memory", overhead_pod("1m", "15"), (UNSCHED_, ("Insufficient memory",))),
])
def test_enough_requests_with_overhead(name: str, p: Pod, want: tuple[str, tuple[str, ...]] | None) -> None:
    test_enough_requests(name, p, res(5, 5), want)


@pytest.mark.parametrize(("name", "p", "used"), [
    # fit_test.go TestNotEnoughRequests: allocatable pods 1, and one pod is already there.
    ("even without specified resources predicate fails when there's no space for additional pod", resource_pod(),
     res(10, 20)),
    ("even if both resources fit predicate fails when there's no space for additional pod", resource_pod(res(1, 1)),
     res(5, 5)),
    ("even for equal edge case predicate fails when there's no space for additional pod", resource_pod(res(5, 1)),
     res(5, 19)),
    ("even for equal edge case predicate fails when there's no space for additional pod due to init container",
     resource_pod(res(5, 1), init=(res(5, 1),)), res(5, 19)),
])
def test_not_enough_requests(name: str, p: Pod, used: dict[str, str]) -> None:
    n = MakeNode().Name("n").Capacity({"cpu": "10m", "memory": "20", "pods": "1"}).Obj()
    existing = pod("e", None, None, node_name="n", spec={"containers": [
        {"name": "c", "image": "i", "resources": {"requests": used}}]})
    (got,) = run_filter(FIT, p, [n], [existing])
    assert got is not None and (got.code.name, got.reasons) == (UNSCHED_, ("Too many pods",)), name


@pytest.mark.parametrize(("name", "p", "used", "want"), [
    # fit_test.go TestStorageRequests
    ("due to container scratch disk", resource_pod(res(1, 1)), res(10, 10), (UNSCHED_, ("Insufficient cpu",))),
    ("pod fit", resource_pod(res(1, 1)), res(2, 10), None),
    ("storage ephemeral local storage request exceeds allocatable",
     resource_pod({"ephemeral-storage": "25"}), res(2, 2), (UNRESOLV_, ("Insufficient ephemeral-storage",))),
    ("pod fits", resource_pod({"ephemeral-storage": "10"}), res(2, 2), None),
])
def test_storage_requests(name: str, p: Pod, used: dict[str, str], want: tuple[str, tuple[str, ...]] | None) -> None:
    test_enough_requests(name, p, used, want)


def ids(cases: list[Any]) -> list[str]:
    """Unique pytest ids from the upstream case names."""
    return [f"{i}-{c[0][:70]}" for i, c in enumerate(cases)]


# --- validation_pluginargs_test.go and defaults_test.go (the args these plugins take) --------------------
def args_errors(model: Any, raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(path, message) of every error, in the ``a.b[0].c`` notation a profile's status shows (the
    profile compiler's ``pydantic_error_message``, one error at a time), or [] when ``raw`` is valid."""
    import pydantic

    from scheduler.profiles.compile import pydantic_error_message
    try:
        model.model_validate(raw)
    except pydantic.ValidationError as e:
        out = []
        for err in e.errors():
            one = pydantic.ValidationError.from_exception_data("args", [
                {"type": pydantic_core.PydanticCustomError("value_error", "{msg}", {"msg": err["msg"]}),
                 "loc": err["loc"], "input": err["input"]}])
            out.append(pydantic_error_message(one))
        return out
    return []


def fit_args_error(raw: dict[str, Any]) -> list[tuple[str, str]]:
    return args_errors(NodeResourcesFitArgs, raw)


LONG = "longvalue" + "a" * 64
# apimachinery's MaxLenError now says "bytes" (the stored copy of this table still reads "63 characters");
# scheduler.model.selectors ports the current text.
TOO_LONG = "name part must be no more than 63 bytes"
# validation_pluginargs_test.go TestValidateFitArgs: upstream checks that the aggregated error contains `expect`.
VALIDATE_FIT_ARGS = [
    ("IgnoredResources: too long value", {"ignoredResources": [LONG]}, TOO_LONG),
    ("IgnoredResources: name is empty", {"ignoredResources": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResources: name has too many slash", {"ignoredResources": ["example.com/aaa/bbb"]},
     "a qualified name must consist of alphanumeric characters"),
    ("IgnoredResources: valid args", {"ignoredResources": ["example.com"]}, ""),
    ("IgnoredResourceGroups: valid args ", {"ignoredResourceGroups": ["example.com"]}, ""),
    ("IgnoredResourceGroups: illegal args", {"ignoredResourceGroups": ["example.com/"]}, "name part must be non-empty"),
    ("IgnoredResourceGroups: name is too long", {"ignoredResourceGroups": ["a" * 64]}, TOO_LONG),
    ("IgnoredResourceGroups: name cannot be contain slash", {"ignoredResourceGroups": ["example.com/aa"]},
     "resource group name can't contain '/'"),
    # Internal config: a nil ScoringStrategy is an error. In v1 it is defaulted (defaults_test.go
    # "NodeResourcesFitArgs not set"), so through our args it is valid: LeastAllocated over cpu and memory.
    ("ScoringStrategy: field is required", {"scoringStrategy": None}, "NOT SET"),
    ("ScoringStrategy: type is unsupported", {"scoringStrategy": {"type": "Invalid"}}, 'Unsupported value: "Invalid"'),
]


@pytest.mark.parametrize(("name", "raw", "expect"), VALIDATE_FIT_ARGS, ids=ids(VALIDATE_FIT_ARGS))
def test_validate_fit_args(name: str, raw: dict[str, Any], expect: str) -> None:
    """validation_pluginargs_test.go TestValidateFitArgs (10 cases); its default strategy is
    LeastAllocated over cpu and memory, which is also our default."""
    if expect == "NOT SET":
        args = NodeResourcesFitArgs.model_validate({k: v for k, v in raw.items() if v is not None})
        assert args.scoring_strategy.type == "LeastAllocated"
        assert [(r.name, r.weight) for r in args.scoring_strategy.resources] == DEFAULT_RESOURCES
        return
    errors = fit_args_error(raw)
    if not expect:
        assert errors == [], name
    else:
        assert any(expect in msg for _, msg in errors), (name, errors)


WEIGHT_CASES = [
    ("default config", None, []),
    ("multi valid resources", [("cpu", 1), ("memory", 10)], []),
    # weight 0 is defaulted to 1 (v1 defaults.go) before validation, so it cannot be "less than min".
    ("weight less than min", [("cpu", 0)], []),
    ("weight greater than max", [("cpu", 101)], ["scoringStrategy.resources[0].weight"]),
    ("multi invalid resources", [("cpu", 0), ("memory", 101)], ["scoringStrategy.resources[1].weight"]),
]


@pytest.mark.parametrize("kind", ["LeastAllocated", "MostAllocated"])
@pytest.mark.parametrize(("name", "resources", "fields"), WEIGHT_CASES, ids=ids(WEIGHT_CASES))
def test_validate_allocated_scoring_strategy(kind: str, name: str, resources: list[tuple[str, int]] | None,
                                             fields: list[str]) -> None:
    """validation_pluginargs_test.go TestValidateLeastAllocatedScoringStrategy and
    TestValidateMostAllocatedScoringStrategy (5 cases each). Upstream validates the internal config,
    where an unset resources list stays empty and weight 0 is an error; through v1 args the list is
    defaulted and 0 means 1, so "weight less than min" is valid and "multi invalid resources" keeps
    only the 101."""
    raw: dict[str, Any] = {"type": kind}
    if resources is not None:
        raw["resources"] = [{"name": n, "weight": w} for n, w in resources]
    errors = fit_args_error({"scoringStrategy": raw})
    assert [f for f, _ in errors] == fields, name
    assert all("not in valid range (0, 100]" in msg for _, msg in errors), errors


SHAPE = "scoringStrategy.requestedToCapacityRatio.shape"
RTCR_VALIDATION = [
    ("no shapes", None, [], [SHAPE]),
    ("weight greater than max", [("cpu", 101)], [(30, 3)], ["scoringStrategy.resources[0].weight"]),
    ("weight less than min", [("cpu", 0)], [(30, 3)], []),   # 0 is defaulted to 1 (see above)
    ("valid shapes", None, [(30, 3)], []),
    ("utilization less than min", None, [(-1, 3)], [f"{SHAPE}[0].utilization"]),
    ("utilization greater than max", None, [(101, 3)], [f"{SHAPE}[0].utilization"]),
    ("duplicated utilization values", None, [(10, 3), (10, 3)], [f"{SHAPE}[1].utilization"]),
    ("increasing utilization values", None, [(10, 3), (20, 3), (30, 3)], []),
    ("non-increasing utilization values", None, [(10, 3), (20, 3), (15, 3)], [f"{SHAPE}[2].utilization"]),
    ("score less than min", None, [(10, -1)], [f"{SHAPE}[0].score"]),
    ("score greater than max", None, [(10, 11)], [f"{SHAPE}[0].score"]),
]


@pytest.mark.parametrize(("name", "resources", "shape", "fields"), RTCR_VALIDATION, ids=ids(RTCR_VALIDATION))
def test_validate_requested_to_capacity_ratio_scoring_strategy(name: str, resources: list[tuple[str, int]] | None,
                                                               shape: list[tuple[int, int]], fields: list[str]) -> None:
    """validation_pluginargs_test.go TestValidateRequestedToCapacityRatioScoringStrategy (11 cases).
    Upstream names the shape ``scoringStrategy.shape``; the field a user writes (and ours names) is
    ``scoringStrategy.requestedToCapacityRatio.shape``."""
    raw: dict[str, Any] = {"type": "RequestedToCapacityRatio",
                           "requestedToCapacityRatio": {"shape": [{"utilization": u, "score": s} for u, s in shape]}}
    if resources is not None:
        raw["resources"] = [{"name": n, "weight": w} for n, w in resources]
    assert [f for f, _ in fit_args_error({"scoringStrategy": raw})] == fields, name


BALANCED_VALIDATION = [
    ("valid config", [("cpu", 1), ("memory", 1)], []),
    ("invalid config", [("cpu", 2), ("memory", 1)], [("resources[0].weight", "Invalid value: 2: must be 1")]),
    ("repeated resources", [("cpu", 1), ("cpu", 1)], [("resources[1].name", 'Duplicate value: "cpu"')]),
]


@pytest.mark.parametrize(("name", "resources", "errors"), BALANCED_VALIDATION, ids=ids(BALANCED_VALIDATION))
def test_validate_node_resources_balanced_allocation_args(name: str, resources: list[tuple[str, int]],
                                                          errors: list[tuple[str, str]]) -> None:
    """validation_pluginargs_test.go TestValidateNodeResourcesBalancedAllocationArgs (3 cases)."""
    raw = {"resources": [{"name": n, "weight": w} for n, w in resources]}
    assert args_errors(noderesources.NodeResourcesBalancedAllocationArgs, raw) == errors, name


@pytest.mark.parametrize(("name", "raw", "resources", "kind"), [
    # defaults_test.go TestPluginArgsDefaults, the cases for these two args.
    ("NodeResourcesBalancedAllocationArgs resources empty", {}, DEFAULT_RESOURCES, None),
    ("NodeResourcesBalancedAllocationArgs with scalar resource", {"resources": [{"name": "scalar.io/scalar1",
                                                                                  "weight": 1}]},
     [("scalar.io/scalar1", 1)], None),
    ("NodeResourcesBalancedAllocationArgs with mixed resources",
     {"resources": [{"name": "cpu", "weight": 1}, {"name": "scalar.io/scalar1", "weight": 1}]},
     [("cpu", 1), ("scalar.io/scalar1", 1)], None),
    ("NodeResourcesBalancedAllocationArgs have resource no weight",
     {"resources": [{"name": "cpu"}, {"name": "scalar.io/scalar0"}, {"name": "scalar.io/scalar1", "weight": 1}]},
     [("cpu", 1), ("scalar.io/scalar0", 1), ("scalar.io/scalar1", 1)], None),
    ("NodeResourcesFitArgs not set", {}, DEFAULT_RESOURCES, "LeastAllocated"),
    ("NodeResourcesFitArgs Resources empty", {"scoringStrategy": {"type": "MostAllocated"}}, DEFAULT_RESOURCES,
     "MostAllocated"),
])
def test_plugin_args_defaults(name: str, raw: dict[str, Any], resources: list[tuple[str, int]], kind: str | None
                              ) -> None:
    """defaults_test.go TestPluginArgsDefaults (6 of its cases: these plugins' args)."""
    if kind is None:
        args = noderesources.NodeResourcesBalancedAllocationArgs.model_validate(raw)
        assert [(r.name, r.weight) for r in args.resources] == resources, name
    else:
        fit_args = NodeResourcesFitArgs.model_validate(raw)
        assert fit_args.scoring_strategy.type == kind, name
        assert [(r.name, r.weight) for r in fit_args.scoring_strategy.resources] == resources, name


def test_a_strategy_without_type_is_unsupported() -> None:
    """v1 defaults the type only with the whole scoringStrategy; a strategy given without one is
    the internal config's "" and fails ValidateNodeResourcesFitArgs's supported-type check."""
    assert fit_args_error({"scoringStrategy": {"resources": [{"name": "cpu", "weight": 1}]}}) == [
        ("scoringStrategy.type",
         'Unsupported value: "": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"')]
