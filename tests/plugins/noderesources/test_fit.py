"""NodeResourcesFit: our own cases first (extreme quantities, issue #12; the request/arithmetic
semantics of issue #14 items 1-3), then upstream's tables as data, each naming its file, test
function and case (``noderesources/fit_test.go``, ``least_allocated_test.go``,
``most_allocated_test.go``, ``requested_to_capacity_ratio_test.go``, and the args'
``validation_pluginargs_test.go`` / ``defaults_test.go``, Fit's and BalancedAllocation's). The
builders and DRA objects here are shared with ``test_balanced_allocation`` and
``test_resource_allocation``."""

from __future__ import annotations

import random
from typing import Any

import pydantic_core
import pytest

from scheduler.cache.dra import DraStore
from scheduler.model import Node, Pod, parse_node, parse_pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs, ScoringStrategy
from scheduler.plugins.helpers import broken_linear
from scheduler.plugins.noderesources import fit as fit_module
from scheduler.plugins.noderesources import resource_allocation
from tests import st
from tests.builders import node, pod, reasons, run_filter, run_score, setup

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


def _random_clusters(seed: int, used_from: int) -> Any:
    """30 random clusters of 1 to 11 nodes, each with a pod already on it: (the pod to score, nodes,
    existing pods, and per node its cpu and memory requested with the pod, and allocatable). Half
    the nodes have no allocatable memory."""
    rng = random.Random(seed)
    for _ in range(30):
        nodes, existing, amounts = [], [], []
        p_cpu, p_mem = rng.randrange(1, 4000), rng.randrange(1, 10**9)
        for i in range(rng.randrange(1, 12)):
            cpu, mem = rng.randrange(1, 8000), rng.choice([0, rng.randrange(1, 4 * 10**9)])
            nodes.append(node(f"n{i}", f"{cpu}m", str(mem)))
            used_cpu, used_mem = rng.randrange(used_from, 9000), rng.randrange(used_from, 5 * 10**9)
            existing.append(pod(f"e{i}", f"{used_cpu}m", str(used_mem), node_name=f"n{i}"))
            amounts.append(([used_cpu + p_cpu, used_mem + p_mem], [cpu, mem]))
        yield pod("p", f"{p_cpu}m", str(p_mem)), nodes, existing, amounts


def _least_resource_scorer(requested: list[int], allocatable: list[int], weights: list[int]) -> int:
    """least_allocated.go's leastResourceScorer and leastRequestedScore, line by line."""
    node_score = weight_sum = 0
    for r, a, w in zip(requested, allocatable, weights, strict=True):
        if a == 0:
            continue
        node_score += (0 if r > a else (a - r) * 100 // a) * w
        weight_sum += w
    return 0 if weight_sum == 0 else node_score // weight_sum


@pytest.mark.parametrize("weights", [(1, 1), (3, 1)])
def test_fit_least_allocated_is_upstreams_scorer_on_random_nodes(weights: tuple[int, int]) -> None:
    """Every row against upstream's scorer: nodes with and without allocatable memory (the general
    path) and with both (every row weighted: the fast path), over- and under-committed."""
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoring_strategy=ScoringStrategy(
        type="LeastAllocated", resources=[{"name": "cpu", "weight": weights[0]},
                                          {"name": "memory", "weight": weights[1]}])))
    for p, nodes, existing, amounts in _random_clusters(12, used_from=1):
        assert run_score(plugin, p, nodes, existing) == [_least_resource_scorer(r, a, list(weights))
                                                         for r, a in amounts]


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
    assert broken_linear(shape, util).tolist() == [want for _, want in assertions]


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


# =========================================================================================================
# Upstream's tables, release 1.35 (pkg/scheduler/framework/plugins/noderesources/*_test.go), as data.
# Builders are tests/st.py (st.MakePod / st.MakeNode); "cpu": "4000" is 4000 CPUs, as upstream writes it.
# Gates: PodLevelResources on (beta, default on since 1.34); SidecarContainers, InPlacePodVerticalScaling
# and SchedulerQueueingHints on (GA / default); DRAExtendedResource on (GA in 1.37): Fit's Filter leaves a
# DRA-backed extended resource the node lacks to DynamicResources (the cases marked draExtendedResourceEnabled
# run with a store holding upstream's deviceClassWithExtendResourceName), and scoring counts the class's
# devices on a node that lacks the resource (the cases with draObjects get a store holding them); its
# queueing-hint side delegates such a resource as Filter does (shouldDelegateResourceToDRA).
# =========================================================================================================

UNSCHED, UNRESOLV = "UNSCHEDULABLE", "UNSCHEDULABLE_AND_UNRESOLVABLE"
EXTENDED_A, EXTENDED_B = "example.com/aaa", "example.com/bbb"
KUBERNETES_IO_A, KUBERNETES_IO_B = "kubernetes.io/something", "subdomain.kubernetes.io/something"
HUGE_PAGE_A = "hugepages-2Mi"
EXTENDED_DRA = "extended.resource.dra.io/something"
# fit_test.go's deviceClassWithExtendResourceName, for the cases with draExtendedResourceEnabled: true.
DEVICE_CLASS_NAME = "device-class-name"
DRA_CLASS = {"metadata": {"name": DEVICE_CLASS_NAME}, "spec": {"extendedResourceName": EXTENDED_DRA}}


def resource_slice(node_name: str, driver: str, *devices: str) -> dict[str, Any]:
    """``st.MakeResourceSlice(nodeName, driverName).Device(...)...``: named ``<node>-<driver>``, on
    the node, pool = the node (one slice), devices with a name only."""
    return {"metadata": {"name": f"{node_name}-{driver}"},
            "spec": {"driver": driver, "nodeName": node_name, "pool": {"name": node_name, "resourceSliceCount": 1},
                     "devices": [{"name": d} for d in devices]}}


def allocated_claim(name: str, *results: dict[str, str]) -> dict[str, Any]:
    """``st.MakeResourceClaim().Name(name).Request(deviceClassName).Allocation(...)``."""
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"devices": {"requests": [{"name": "req-1", "exactly": {"deviceClassName": DEVICE_CLASS_NAME}}]}},
            "status": {"allocation": {"devices": {"results": list(results)}}}}


def dra_store(*objects: dict[str, Any]) -> DraStore:
    """``newTestDRAManager(tCtx, objects...)``: a store fed with the objects (kind by their shape)."""
    store = DraStore()
    for obj in objects:
        spec = obj.get("spec", {})
        kind = ("ResourceClaim" if "status" in obj else "ResourceSlice" if "driver" in spec else "DeviceClass")
        assert store.on_event(kind, "ADDED", obj) is not None, obj
    return store


def gated(reason: str, *values: Any) -> Any:
    return pytest.param(*values, marks=pytest.mark.skip(reason=f"needs {reason}"), id=str(values[0])[:80])


def ids(cases: list[Any]) -> list[str]:
    """Unique pytest ids from the upstream case names (two of upstream's cases share a name)."""
    return [f"{i}-{c[0][:70]}" for i, c in enumerate(cases)]


def Resource(MilliCPU: int = 0, Memory: int = 0, EphemeralStorage: int = 0, AllowedPodNumber: int = 0,
             ScalarResources: dict[str, int] | None = None) -> dict[str, str]:
    """``framework.Resource{...}`` as ``newResourcePod`` writes it into a container's requests: cpu,
    memory, pods and ephemeral-storage always (zeros included), then the scalar resources."""
    rl = {"cpu": f"{MilliCPU}m", "memory": str(Memory), "pods": str(AllowedPodNumber),
          "ephemeral-storage": str(EphemeralStorage)}
    rl.update({k: str(v) for k, v in (ScalarResources or {}).items()})
    return rl


def new_resource_pod(*usage: dict[str, str]) -> st.MakePod:
    """``newResourcePod(usage...)``: one container per usage (none for none)."""
    p = st.MakePod()
    for u in usage:
        p.Req(u)
    return p


def new_resource_init_pod(pod: st.MakePod, *usage: dict[str, str]) -> st.MakePod:
    """``newResourceInitPod``: the usages as init containers."""
    for u in usage:
        pod.InitReq(u)
    return pod


def new_resource_overhead_pod(pod: st.MakePod, overhead: dict[str, str]) -> st.MakePod:
    return pod.Overhead(overhead)


def new_pod_level_resources_pod(pod: st.MakePod, requests: dict[str, str]) -> st.MakePod:
    return pod.PodLevelResourceRequests(requests)


def make_resources(milli_cpu: int, memory: int, pods: int, extended_a: int, storage: int, huge_page_a: int
                   ) -> dict[str, str]:
    """``makeResources`` / ``makeAllocatableResources``."""
    return {"cpu": f"{milli_cpu}m", "memory": str(memory), "pods": str(pods), EXTENDED_A: str(extended_a),
            "ephemeral-storage": str(storage), HUGE_PAGE_A: str(huge_page_a)}


def fit(ignored: tuple[str, ...] = (), groups: tuple[str, ...] = ()) -> noderesources.NodeResourcesFit:
    return noderesources.NodeResourcesFit(NodeResourcesFitArgs(ignoredResources=ignored,
                                                               ignoredResourceGroups=groups))


def filter_on(plugin: noderesources.NodeResourcesFit, p: Pod, alloc: dict[str, str], node_pods: list[st.MakePod]
              ) -> tuple[str, tuple[str, ...]] | None:
    """PreFilter + Filter of ``p`` on one node with ``alloc`` holding ``node_pods`` (upstream's
    ``framework.NewNodeInfo(pods...)`` with ``SetNode``): None, or (code, reasons)."""
    node = st.MakeNode().Name("node").Capacity(alloc).Obj()
    (got,) = run_filter(plugin, p, [node], [b.Node("node").Obj() for b in node_pods])
    return None if got is None else (got.code.name, got.reasons)


def ins(code: str, *resources: str) -> tuple[str, tuple[str, ...]]:
    return code, tuple(f"Insufficient {r}" for r in resources)


A, B = EXTENDED_A, EXTENDED_B
# fit_test.go TestEnoughRequests: (name, pod, node's pods' usages, args (ignored, groups), want).
ENOUGH_REQUESTS = [
    ("no resources requested always fits", st.MakePod(), [Resource(MilliCPU=10, Memory=20)], None, None),
    ("too many resources fails", new_resource_pod(Resource(MilliCPU=1, Memory=1)),
     [Resource(MilliCPU=10, Memory=20)], None, ins(UNSCHED, "cpu", "memory")),
    ("too many resources fails due to init container cpu",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=3, Memory=1)),
     [Resource(MilliCPU=8, Memory=19)], None, ins(UNSCHED, "cpu")),
    ("too many resources fails due to highest init container cpu",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=3, Memory=1),
                           Resource(MilliCPU=2, Memory=1)),
     [Resource(MilliCPU=8, Memory=19)], None, ins(UNSCHED, "cpu")),
    ("too many resources fails due to init container memory",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=1, Memory=3)),
     [Resource(MilliCPU=9, Memory=19)], None, ins(UNSCHED, "memory")),
    ("too many resources fails due to highest init container memory",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=1, Memory=3),
                           Resource(MilliCPU=1, Memory=2)),
     [Resource(MilliCPU=9, Memory=19)], None, ins(UNSCHED, "memory")),
    ("init container fits because it's the max, not sum, of containers and init containers",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=1, Memory=1)),
     [Resource(MilliCPU=9, Memory=19)], None, None),
    ("multiple init containers fit because it's the max, not sum, of containers and init containers",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=1, Memory=1),
                           Resource(MilliCPU=1, Memory=1)),
     [Resource(MilliCPU=9, Memory=19)], None, None),
    ("both resources fit", new_resource_pod(Resource(MilliCPU=1, Memory=1)), [Resource(MilliCPU=5, Memory=5)],
     None, None),
    ("one resource memory fits", new_resource_pod(Resource(MilliCPU=2, Memory=1)),
     [Resource(MilliCPU=9, Memory=5)], None, ins(UNSCHED, "cpu")),
    ("one resource cpu fits", new_resource_pod(Resource(MilliCPU=1, Memory=2)),
     [Resource(MilliCPU=5, Memory=19)], None, ins(UNSCHED, "memory")),
    ("equal edge case", new_resource_pod(Resource(MilliCPU=5, Memory=1)), [Resource(MilliCPU=5, Memory=19)],
     None, None),
    ("equal edge case for init container",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=4, Memory=1)), Resource(MilliCPU=5, Memory=1)),
     [Resource(MilliCPU=5, Memory=19)], None, None),
    ("extended resource fits", new_resource_pod(Resource(ScalarResources={A: 1})), [Resource()], None, None),
    ("extended resource fits for init container",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(ScalarResources={A: 1})), [Resource()], None,
     None),
    ("extended resource capacity enforced", new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={A: 10})),
     [Resource(ScalarResources={A: 0})], None, ins(UNRESOLV, A)),
    ("extended resource capacity enforced for init container",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(MilliCPU=1, Memory=1, ScalarResources={A: 10})),
     [Resource(ScalarResources={A: 0})], None, ins(UNRESOLV, A)),
    ("extended resource allocatable enforced",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={A: 1})),
     [Resource(ScalarResources={A: 5})], None, ins(UNSCHED, A)),
    ("extended resource allocatable enforced for init container",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(MilliCPU=1, Memory=1, ScalarResources={A: 1})),
     [Resource(ScalarResources={A: 5})], None, ins(UNSCHED, A)),
    ("extended resource allocatable enforced for multiple containers",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={A: 3}),
                      Resource(MilliCPU=1, Memory=1, ScalarResources={A: 3})),
     [Resource(ScalarResources={A: 2})], None, ins(UNRESOLV, A)),
    ("extended resource allocatable admits multiple init containers",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(MilliCPU=1, Memory=1, ScalarResources={A: 3}),
                           Resource(MilliCPU=1, Memory=1, ScalarResources={A: 3})),
     [Resource(ScalarResources={A: 2})], None, None),
    ("extended resource allocatable enforced for multiple init containers",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(MilliCPU=1, Memory=1, ScalarResources={A: 6}),
                           Resource(MilliCPU=1, Memory=1, ScalarResources={A: 3})),
     [Resource(ScalarResources={A: 2})], None, ins(UNRESOLV, A)),
    ("extended resource allocatable enforced for unknown resource",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={B: 1})), [Resource()], None,
     ins(UNRESOLV, B)),
    ("extended resource allocatable enforced for unknown resource for init container",
     new_resource_init_pod(new_resource_pod(Resource()), Resource(MilliCPU=1, Memory=1, ScalarResources={B: 1})),
     [Resource()], None, ins(UNRESOLV, B)),
    ("kubernetes.io resource capacity enforced",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={KUBERNETES_IO_A: 10})), [Resource()], None,
     ins(UNRESOLV, KUBERNETES_IO_A)),
    ("kubernetes.io resource capacity enforced for init container",
     new_resource_init_pod(new_resource_pod(Resource()),
                           Resource(MilliCPU=1, Memory=1, ScalarResources={KUBERNETES_IO_B: 10})),
     [Resource()], None, ins(UNRESOLV, KUBERNETES_IO_B)),
    ("hugepages resource capacity enforced",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={HUGE_PAGE_A: 10})),
     [Resource(ScalarResources={HUGE_PAGE_A: 0})], None, ins(UNRESOLV, HUGE_PAGE_A)),
    ("hugepages resource capacity enforced for init container",
     new_resource_init_pod(new_resource_pod(Resource()),
                           Resource(MilliCPU=1, Memory=1, ScalarResources={HUGE_PAGE_A: 10})),
     [Resource(ScalarResources={HUGE_PAGE_A: 0})], None, ins(UNRESOLV, HUGE_PAGE_A)),
    ("hugepages resource allocatable enforced for multiple containers",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={HUGE_PAGE_A: 3}),
                      Resource(MilliCPU=1, Memory=1, ScalarResources={HUGE_PAGE_A: 3})),
     [Resource(ScalarResources={HUGE_PAGE_A: 2})], None, ins(UNRESOLV, HUGE_PAGE_A)),
    ("skip checking ignored extended resource",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={B: 1})), [Resource()],
     (("example.com/bbb",), ()), None),
    ("resources + pod overhead fits",
     new_resource_overhead_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), {"cpu": "3m", "memory": "13"}),
     [Resource(MilliCPU=5, Memory=5)], None, None),
    ("requests + overhead does not fit for memory",
     new_resource_overhead_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), {"cpu": "1m", "memory": "15"}),
     [Resource(MilliCPU=5, Memory=5)], None, ins(UNSCHED, "memory")),
    ("skip checking ignored extended resource via resource groups",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={B: 1, KUBERNETES_IO_A: 1})), [Resource()],
     ((), ("example.com",)), ins(UNRESOLV, KUBERNETES_IO_A)),
    ("skip checking extended resource request with quantity zero via resource groups",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={A: 0})), [Resource(ScalarResources={A: 6})],
     None, None),
    # podLevelResourcesEnabled: true (PodLevelResources is on by default).
    ("skip checking resource request with quantity zero", new_resource_pod(Resource(ScalarResources={A: 1})),
     [Resource(MilliCPU=20, Memory=30, ScalarResources={A: 1})], None, None),
    ("both pod-level and container-level resources fit",
     new_pod_level_resources_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), {"cpu": "1m", "memory": "2"}),
     [Resource(MilliCPU=5, Memory=5)], None, None),
    ("pod-level cpu resource not fit",
     new_pod_level_resources_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), {"cpu": "7m", "memory": "2"}),
     [Resource(MilliCPU=5, Memory=5)], None, ins(UNSCHED, "cpu")),
    ("pod-level memory resource not fit",
     new_pod_level_resources_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)), {"cpu": "3m", "memory": "2"}),
     [Resource(MilliCPU=5, Memory=19)], None, ins(UNSCHED, "memory")),
    ("pod-level hugepages resource fit",
     new_pod_level_resources_pod(new_resource_pod(), {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "5"}), [], None,
     None),
    ("both pod-level and container-level hugepages resource fit",
     new_pod_level_resources_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={HUGE_PAGE_A: 3})),
                                 {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "5"}), [], None, None),
    ("pod-level hugepages resource not fit",
     new_pod_level_resources_pod(new_resource_pod(), {"cpu": "3m", "memory": "2", HUGE_PAGE_A: "10"}), [], None,
     ins(UNRESOLV, HUGE_PAGE_A)),
    ("one pod-level cpu resource fits and all init and non-init containers resources fit",
     new_resource_init_pod(new_pod_level_resources_pod(new_resource_pod(Resource(MilliCPU=1, Memory=1)),
                                                       {"cpu": "3m", "memory": "2"}), Resource(MilliCPU=1, Memory=1)),
     [Resource(MilliCPU=5, Memory=19)], None, ins(UNSCHED, "memory")),
    # draExtendedResourceEnabled: true. With the gate on, only a resource the node lacks and a
    # DeviceClass claims is delegated to DRA; these two cases take the device-plugin path either way.
    ("extended resource backed by device plugin", new_resource_pod(Resource(ScalarResources={A: 1})), [Resource()],
     None, None),
    ("extended resource backed by DRA",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={EXTENDED_DRA: 1})), [Resource()], None, None),
    ("extended resource backed by DRA, nil draManager",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={A: 1})), [Resource()], None, None),
    ("extended resource backed by DRA not enabled",
     new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={EXTENDED_DRA: 1})), [Resource()], None,
     ins(UNRESOLV, EXTENDED_DRA)),
    ("extended resource NOT backed by DRA", new_resource_pod(Resource(MilliCPU=1, Memory=1, ScalarResources={B: 1})),
     [Resource()], None, ins(UNRESOLV, B)),
    ("extended resource was backed by Device Plugin (Allocatable: 0)",
     new_resource_pod(Resource(ScalarResources={EXTENDED_DRA: 1})), [Resource(ScalarResources={EXTENDED_DRA: 0})],
     None, None),
    ("extended resource was backed by Device Plugin (Allocatable: 0), global cache",
     new_resource_pod(Resource(ScalarResources={A: 1})), [Resource(ScalarResources={A: 0})], None, None),
]


# The cases upstream runs with draExtendedResourceEnabled: true.
DRA_ENABLED = {"extended resource backed by device plugin", "extended resource backed by DRA",
               "extended resource backed by DRA, nil draManager", "extended resource NOT backed by DRA",
               "extended resource was backed by Device Plugin (Allocatable: 0)",
               "extended resource was backed by Device Plugin (Allocatable: 0), global cache"}


@pytest.mark.parametrize(("name", "pod", "node_pods", "args", "want"), ENOUGH_REQUESTS,
                         ids=[c[0][:80] if isinstance(c, tuple) else None for c in ENOUGH_REQUESTS])
def test_enough_requests(name: str, pod: st.MakePod, node_pods: list[dict[str, str]],
                         args: tuple[tuple[str, ...], tuple[str, ...]] | None,
                         want: tuple[str, tuple[str, ...]] | None) -> None:
    """fit_test.go TestEnoughRequests (49 cases): the node is makeResources(10, 20, 32, 5, 20, 5)
    and holds one pod per usage. Upstream also compares fitsRequest's InsufficientResource list
    (requested/used/capacity); ours has no such list, the status carries its reasons and code. The
    cases with draExtendedResourceEnabled get the store with upstream's device class (the gate is
    GA and on here; the "not enabled" case keeps upstream's plugin without DRA)."""
    plugin = fit(*args) if args else fit()
    if name in DRA_ENABLED:
        store = DraStore()
        store.on_event("DeviceClass", "ADDED", DRA_CLASS)
        plugin = noderesources.NodeResourcesFit(plugin.args, store)
    got = filter_on(plugin, pod.Obj(), make_resources(10, 20, 32, 5, 20, 5), [new_resource_pod(u) for u in node_pods])
    assert got == want, name


def test_pre_filter_disabled() -> None:
    """fit_test.go TestPreFilterDisabled: upstream's Filter without its PreFilter state is an Error
    (``fwk.AsStatus(fwk.ErrNotFound)``). Ours computes the state itself (``CycleState.read_or_compute``,
    the framework's design: preemption's what-ifs call Filter alone), so it gives the verdict PreFilter
    would have led to: on upstream's ``v1.Node{}`` (no allocatable, so no pods), "Too many pods"."""
    from tests.builders import setup
    node = parse_node({"metadata": {"name": "node"}})
    snap, state, rows = setup([node], [])
    verdict = fit().filter_nodes(state, st.MakePod().Obj(), snap, rows)
    assert verdict.failed.tolist() == [True]
    assert verdict.statuses[0].reasons == ("Too many pods",)


NOT_ENOUGH_REQUESTS = [
    ("even without specified resources, predicate fails when there's no space for additional pod", st.MakePod(),
     Resource(MilliCPU=10, Memory=20)),
    ("even if both resources fit, predicate fails when there's no space for additional pod",
     new_resource_pod(Resource(MilliCPU=1, Memory=1)), Resource(MilliCPU=5, Memory=5)),
    ("even for equal edge case, predicate fails when there's no space for additional pod",
     new_resource_pod(Resource(MilliCPU=5, Memory=1)), Resource(MilliCPU=5, Memory=19)),
    ("even for equal edge case, predicate fails when there's no space for additional pod due to init container",
     new_resource_init_pod(new_resource_pod(Resource(MilliCPU=5, Memory=1)), Resource(MilliCPU=5, Memory=1)),
     Resource(MilliCPU=5, Memory=19)),
]


@pytest.mark.parametrize(("name", "pod", "used"), NOT_ENOUGH_REQUESTS, ids=ids(NOT_ENOUGH_REQUESTS))
def test_not_enough_requests(name: str, pod: st.MakePod, used: dict[str, str]) -> None:
    """fit_test.go TestNotEnoughRequests: allocatable makeAllocatableResources(10, 20, 1, 0, 0, 0),
    one pod there already."""
    got = filter_on(fit(), pod.Obj(), make_resources(10, 20, 1, 0, 0, 0), [new_resource_pod(used)])
    assert got == (UNSCHED, ("Too many pods",)), name


STORAGE_REQUESTS = [
    ("empty storage requested, and pod fits", new_resource_pod(Resource(MilliCPU=1, Memory=1)),
     Resource(MilliCPU=2, Memory=10), None),
    ("storage ephemeral local storage request exceeds allocatable", new_resource_pod(Resource(EphemeralStorage=25)),
     Resource(MilliCPU=2, Memory=2), ins(UNRESOLV, "ephemeral-storage")),
    ("ephemeral local storage is sufficient", new_resource_init_pod(new_resource_pod(Resource(EphemeralStorage=5))),
     Resource(MilliCPU=2, Memory=2, EphemeralStorage=10), None),
    ("pod fits", new_resource_pod(Resource(EphemeralStorage=10)), Resource(MilliCPU=2, Memory=2), None),
]


@pytest.mark.parametrize(("name", "pod", "used", "want"), STORAGE_REQUESTS, ids=ids(STORAGE_REQUESTS))
def test_storage_requests(name: str, pod: st.MakePod, used: dict[str, str],
                          want: tuple[str, tuple[str, ...]] | None) -> None:
    """fit_test.go TestStorageRequests: node makeResources(10, 20, 32, 5, 20, 5)."""
    assert filter_on(fit(), pod.Obj(), make_resources(10, 20, 32, 5, 20, 5), [new_resource_pod(used)]) == want, name


def new_pod_with_restartable_init_containers(request: dict[str, str] | None, sidecar_request: dict[str, str] | None
                                             ) -> Pod:
    """fit_test.go's ``newPodWithRestartableInitContainers`` (a raw v1.Pod there too)."""
    container: dict[str, Any] = {"name": "regular"}
    if request is not None:
        container["resources"] = {"requests": request}
    sidecar: dict[str, Any] = {"name": "restartable-init", "restartPolicy": "Always"}
    if sidecar_request is not None:
        sidecar["resources"] = {"requests": sidecar_request}
    return parse_pod({"metadata": {"name": "", "uid": "restartable"},
                      "spec": {"containers": [container], "initContainers": [sidecar]}})


SIDECARS_OFF = "SidecarContainers disabled (GA since 1.33, the disabled path is gone)"
RESTARTABLE_INIT_CONTAINERS = [
    gated(SIDECARS_OFF, "allow pod without restartable init containers if sidecar containers is disabled", None,
          None),
    gated(SIDECARS_OFF, "not allow pod with restartable init containers if sidecar containers is disabled", None,
          None),
    ("allow pod without restartable init containers if sidecar containers is enabled",
     parse_pod({"metadata": {"name": "", "uid": "regular"}, "spec": {"containers": [{"name": "regular"}]}}), None),
    ("allow pod with restartable init containers if sidecar containers is enabled",
     new_pod_with_restartable_init_containers(None, None), None),
    ("allow pod if the total requested resources do not exceed the node's allocatable resources",
     new_pod_with_restartable_init_containers({"cpu": "1m"}, {"cpu": "1m"}), None),
    ("not allow pod if the total requested resources do exceed the node's allocatable resources",
     new_pod_with_restartable_init_containers({"cpu": "1m"}, {"cpu": "2m"}), ins(UNRESOLV, "cpu")),
]


@pytest.mark.parametrize(("name", "pod", "want"), RESTARTABLE_INIT_CONTAINERS,
                         ids=[c[0][:80] if isinstance(c, tuple) else None for c in RESTARTABLE_INIT_CONTAINERS])
def test_restartable_init_containers(name: str, pod: Pod, want: tuple[str, tuple[str, ...]] | None) -> None:
    """fit_test.go TestRestartableInitContainers: allocatable makeAllocatableResources(2, 0, 1, 0, 0, 0);
    PreFilter succeeds for every pod (the sidecar rejection needs the gate off)."""
    from tests.builders import setup
    node = st.MakeNode().Name("node").Capacity(make_resources(2, 0, 1, 0, 0, 0)).Obj()
    snap, state, _ = setup([node], [])
    assert fit().pre_filter(state, pod, snap)[1].is_success(), name
    assert filter_on(fit(), pod, make_resources(2, 0, 1, 0, 0, 0), []) == want, name


def strategy(kind: str, resources: list[tuple[str, int]] | None = None,
             shape: list[tuple[int, int]] | None = None) -> noderesources.NodeResourcesFit:
    raw: dict[str, Any] = {"type": kind}
    if resources is not None:
        raw["resources"] = [{"name": n, "weight": w} for n, w in resources]
    if shape is not None:
        raw["requestedToCapacityRatio"] = {"shape": [{"utilization": u, "score": s} for u, s in shape]}
    return noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy=raw))


def scores(plugin: Any, pod: Pod, nodes: list[Node], existing: list[Pod], run_pre_score: bool = True) -> list[int]:
    """PreScore (unless told not to) and Score over ``nodes``, as upstream's score tables run them."""
    from tests.builders import setup
    snap, state, rows = setup(nodes, existing)
    if run_pre_score:
        assert plugin.pre_score(state, pod, snap, rows).is_success()
    got: list[int] = plugin.score_nodes(state, pod, snap, rows).tolist()
    return got


def cap(name: str, **res: str) -> Node:
    return st.MakeNode().Name(name).Capacity(res).Obj()


DEFAULT_RESOURCES = [("cpu", 1), ("memory", 1)]
EXTENDED_RES = "abc.com/xyz"
EXTENDED_RESOURCE_SET = [("cpu", 1), ("memory", 1), (EXTENDED_RES, 1)]


def fit_score_existing() -> list[Pod]:
    return [st.MakePod().Node("node1").Req({"cpu": "2000", "memory": "4000"}).Obj(),
            st.MakePod().Node("node2").Req({"cpu": "1000", "memory": "2000"}).Obj()]


def sidecar_existing() -> list[Pod]:
    return [st.MakePod().Node("node1").Req({"cpu": "1000", "memory": "2000"})
            .SidecarReq({"cpu": "1000", "memory": "2000"}).Obj(),
            st.MakePod().Node("node2").Req({"cpu": "1000", "memory": "2000"}).Obj()]


N46 = [cap("node1", cpu="4000", memory="10000"), cap("node2", cpu="6000", memory="10000")]
N44 = [cap("node1", cpu="4000", memory="10000"), cap("node2", cpu="4000", memory="10000")]
RTCR_DOWN = {"shape": [(0, 10), (100, 0)]}
RTCR_UP = {"shape": [(0, 0), (100, 10)]}
POD_3000_5000 = st.MakePod().Req({"cpu": "3000", "memory": "5000"})
POD_1000_2000 = st.MakePod().Req({"cpu": "1000", "memory": "2000"})
# The slices of fit_test.go's two DRA cases: three devices on node1, two on node2, none allocated.
FIT_SCORE_DRA_OBJECTS = (DRA_CLASS, resource_slice("node1", "test-driver", "device-1", "device-2", "device-3"),
                         resource_slice("node2", "test-driver", "device-1", "device-2"))
# fit_test.go TestFitScore: (name, pod, nodes, existing, (type, resources, shape), want, runPreScore[, draObjects]).
FIT_SCORE = [
    ("test case for ScoringStrategy RequestedToCapacityRatio case1", POD_3000_5000, N46, fit_score_existing,
     ("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_DOWN["shape"]), [10, 32], True),
    ("test case for ScoringStrategy RequestedToCapacityRatio case2", POD_3000_5000, N46, fit_score_existing,
     ("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_UP["shape"]), [95, 68], True),
    ("test case for ScoringStrategy MostAllocated", POD_1000_2000, N46, fit_score_existing,
     ("MostAllocated", DEFAULT_RESOURCES, None), [67, 36], True),
    ("test case for ScoringStrategy LeastAllocated", POD_1000_2000, N46, fit_score_existing,
     ("LeastAllocated", DEFAULT_RESOURCES, None), [32, 63], True),
    ("test case for ScoringStrategy RequestedToCapacityRatio case1 if PreScore is not called", POD_3000_5000, N46,
     fit_score_existing, ("RequestedToCapacityRatio", DEFAULT_RESOURCES, RTCR_DOWN["shape"]), [10, 32], False),
    ("test case for ScoringStrategy MostAllocated if PreScore is not called", POD_1000_2000, N46, fit_score_existing,
     ("MostAllocated", DEFAULT_RESOURCES, None), [67, 36], False),
    ("test case for ScoringStrategy LeastAllocated if PreScore is not called", POD_1000_2000, N46, fit_score_existing,
     ("LeastAllocated", DEFAULT_RESOURCES, None), [32, 63], False),
    ("test case for ScoringStrategy MostAllocated with sidecar container", POD_1000_2000, N44, sidecar_existing,
     ("MostAllocated", DEFAULT_RESOURCES, None), [67, 45], True),
    ("test case for ScoringStrategy LeastAllocated with sidecar container", POD_1000_2000, N44, sidecar_existing,
     ("LeastAllocated", DEFAULT_RESOURCES, None), [32, 55], True),
    ("test case for ScoringStrategy LeastAllocated with Extended resources",
     st.MakePod().Req({EXTENDED_DRA: "1"}), [st.MakeNode().Name("node1").Obj(), st.MakeNode().Name("node2").Obj()],
     list, ("LeastAllocated", [(EXTENDED_DRA, 1)], None), [66, 50], True, FIT_SCORE_DRA_OBJECTS),
    ("test case for ScoringStrategy LeastAllocated with Extended resources if PreScore is not called",
     st.MakePod().Req({EXTENDED_DRA: "1"}), [st.MakeNode().Name("node1").Obj(), st.MakeNode().Name("node2").Obj()],
     list, ("LeastAllocated", [(EXTENDED_DRA, 1)], None), [66, 50], False, FIT_SCORE_DRA_OBJECTS),
]


def with_dra_objects(cases: list[Any], width: int) -> list[Any]:
    """The table with its ``draObjects`` column (upstream's field, nil in most cases) filled in."""
    return [(*c, None) if isinstance(c, tuple) and len(c) == width else c for c in cases]


@pytest.mark.parametrize(("name", "pod", "nodes", "existing", "args", "want", "run_pre_score", "dra_objects"),
                         with_dra_objects(FIT_SCORE, 7),
                         ids=[c[0][:80] if isinstance(c, tuple) else None for c in FIT_SCORE])
def test_fit_score(name: str, pod: st.MakePod, nodes: list[Node], existing: Any,
                   args: tuple[str, list[tuple[str, int]], list[tuple[int, int]] | None], want: list[int],
                   run_pre_score: bool, dra_objects: tuple[dict[str, Any], ...] | None) -> None:
    """fit_test.go TestFitScore (11 cases). A case with draObjects runs with DRAExtendedResource on
    and a store holding them (upstream's newTestDRAManager); the others without DRA."""
    kind, resources, shape = args
    plugin = strategy(kind, resources, shape)
    if dra_objects is not None:
        plugin = noderesources.NodeResourcesFit(plugin.args, dra_store(*dra_objects))
    assert scores(plugin, pod.Obj(), nodes, existing(), run_pre_score) == want, name


def test_events_to_register() -> None:
    """fit_test.go TestEventsToRegister. None of its five cases has the default gates together
    (SchedulerQueueingHints and InPlacePodVerticalScaling on, DRAExtendedResource off); for them
    fit.go's EventsToRegister gives Pod Delete|UpdatePodScaleDown and Node Add|UpdateNodeAllocatable,
    each with its hint. Our service reports an assigned pod's change as ``Update``: it stands for
    UpdatePodScaleDown, and the hint tells a scale-down apart."""
    from scheduler.framework.types import ClusterEvent
    got = [(e.event, e.hint) for e in fit().events_to_register()]
    assert got == [(ClusterEvent("Pod", ("Delete", "Update")), noderesources.is_schedulable_after_pod_event),
                   (ClusterEvent("Node", ("Add", "UpdateNodeAllocatable")),
                    noderesources.is_schedulable_after_node_change)]


def test_events_to_register_without_in_place_pod_vertical_scaling() -> None:
    """fit_test.go TestEventsToRegister "Register events with InPlacePodVerticalScaling feature
    disabled": Pod Delete only (no update can free resources); the gate comes from the Handle."""
    from scheduler.framework.handle import Handle
    from scheduler.framework.types import ClusterEvent
    plugin = noderesources.new_fit(None, Handle(feature_gates={"InPlacePodVerticalScaling": False}))
    got = [e.event for e in plugin.events_to_register()]
    assert got[:2] == [ClusterEvent("Pod", ("Delete",)), ClusterEvent("Node", ("Add", "UpdateNodeAllocatable"))]
    on = noderesources.new_fit(None, Handle())
    assert on.events_to_register()[0].event == ClusterEvent("Pod", ("Delete", "Update"))


def test_events_to_register_with_dra_extended_resources() -> None:
    """fit_test.go TestEventsToRegister "Register events with DRAExtendedResource feature enabled":
    also DeviceClass Add|Update (with its hint); here whenever the plugin has the DRA store."""
    from scheduler.framework.types import ClusterEvent
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(), DraStore())
    got = [(e.event, e.hint) for e in plugin.events_to_register()]
    assert got[-1] == (ClusterEvent("DeviceClass", ("Add", "Update")),
                       noderesources.is_schedulable_after_device_class_event)


def dclass(name: str = "", extended: str | None = None) -> Any:
    from scheduler.model.dra import DeviceClass
    return DeviceClass(name, extended_resource_name=extended or "")


# fit_test.go Test_isSchedulableAfterDeviceClassChange: (name, pod, old, new, queue; None = an error).
AFTER_DEVICE_CLASS = [
    ("backoff-wrong-new-object", st.MakePod(), None, "not-a-class", None),
    ("backoff-wrong-old-object", st.MakePod(), "not-a-class", dclass(), None),
    ("skip-queue-on-class-nil-extended-resource-name-pointer", new_resource_pod(Resource(Memory=2)), dclass(),
     dclass(), False),
    ("skip-queue-on-class-same-extended-resource-name-pointer", new_resource_pod(Resource(Memory=2)),
     dclass(extended="example.com/gpu"), dclass(extended="example.com/gpu"), False),
    ("skip-queue-on-class-same-extended-resource-name", new_resource_pod(Resource(Memory=2)),
     dclass(extended="example.com/gpu"), dclass(extended="example.com/gpu"), False),
    ("queue-on-class-add-with-implicit-extended-resource-name",
     new_resource_pod(Resource(ScalarResources={"deviceclass.resource.kubernetes.io/gpuclass": 1})), None,
     dclass("gpuclass", "example.com/gpu"), True),
    ("skip-on-class-add-with-implicit-extended-resource-name-not-matching",
     new_resource_pod(Resource(ScalarResources={"deviceclass.resource.kubernetes.io/gpuclass": 1})), None,
     dclass("myclass", "example.com/gpu"), False),
    ("skip-on-class-add-with-explicit-extended-resource-name-not-matching",
     new_resource_pod(Resource(ScalarResources={"example.com/othergpu": 1})), None,
     dclass("myclass", "example.com/gpu"), False),
    ("skip-on-class-update-with-implicit-extended-resource-name",
     new_resource_pod(Resource(ScalarResources={"deviceclass.resource.kubernetes.io/gpuclass": 1})),
     dclass("gpuclass"), dclass("gpuclass", "example.com/gpu"), False),
    ("queue-on-class-add-with-extended-resource-name",
     new_resource_pod(Resource(ScalarResources={"example.com/gpu": 1})), None, dclass(extended="example.com/gpu"),
     True),
    ("queue-on-class-update-with-extended-resource-name",
     new_resource_pod(Resource(ScalarResources={"example.com/gpu": 1})), dclass(extended="example.com/gpu1"),
     dclass(extended="example.com/gpu"), True),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "want"), AFTER_DEVICE_CLASS,
                         ids=[c[0] for c in AFTER_DEVICE_CLASS])
def test_is_schedulable_after_device_class_change(name: str, pod: st.MakePod, old: Any, new: Any,
                                                  want: bool | None) -> None:
    """fit_test.go Test_isSchedulableAfterDeviceClassChange (11 cases)."""
    from scheduler.framework.types import ClusterEvent
    event = ClusterEvent("DeviceClass", "Update" if old is not None else "Add", old=old, new=new)
    if want is None:
        with pytest.raises(TypeError):
            noderesources.is_schedulable_after_device_class_event(pod.Obj(), event)
        return
    assert noderesources.is_schedulable_after_device_class_event(pod.Obj(), event) is want, name


IPPVS_OFF = "InPlacePodVerticalScaling disabled (GA, on)"
# fit_test.go Test_isSchedulableAfterPodChange: (name, pod, oldObj, newObj, queue; None = an error).
AFTER_POD_CHANGE = [
    ("backoff-wrong-old-object", lambda: st.MakePod().Obj(), lambda: "not-a-pod", lambda: None, None),
    ("backoff-wrong-new-object", lambda: st.MakePod().Obj(), lambda: None, lambda: "not-a-pod", None),
    ("queue-on-other-pod-deleted", lambda: st.MakePod().Name("pod1").Req({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod2").Req({"cpu": "1"}).Node("fake").Obj(), lambda: None, True),
    ("skip-queue-on-unscheduled-pod-deleted", lambda: st.MakePod().Obj(), lambda: st.MakePod().Obj(), lambda: None,
     False),
    gated(IPPVS_OFF, "skip-queue-on-disable-inplace-pod-vertical-scaling", None, None, None, None),
    ("skip-queue-on-other-unscheduled-pod",
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "1"}).UID("uid0").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"cpu": "2"}).UID("uid1").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"cpu": "1"}).UID("uid1").Obj(), False),
    ("skip-queue-on-other-pod-unrelated-resource-scaled-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"memory": "2"}).Node("fake").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"memory": "1"}).Node("fake").Obj(), False),
    ("skip-queue-on-other-pod-unrelated-pod-level-resource-scaled-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").PodLevelResourceRequests({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").PodLevelResourceRequests({"memory": "2"}).Node("fake").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").PodLevelResourceRequests({"memory": "1"}).Node("fake").Obj(),
     False),
    ("queue-on-other-pod-some-resource-scale-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"cpu": "2"}).Node("fake").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").Req({"cpu": "1"}).Node("fake").Obj(), True),
    ("queue-on-other-pod-some-pod-level-resource-scale-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").PodLevelResourceRequests({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").PodLevelResourceRequests({"cpu": "2"}).Node("fake").Obj(),
     lambda: st.MakePod().Name("pod2").UID("pod2").PodLevelResourceRequests({"cpu": "1"}).Node("fake").Obj(), True),
    ("queue-on-target-pod-some-resource-scale-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "2"}).Obj(),
     lambda: st.MakePod().Name("pod1").UID("pod1").Req({"cpu": "1"}).Obj(), True),
    ("queue-on-target-pod-some-pod-level-resource-scale-down",
     lambda: st.MakePod().Name("pod1").UID("pod1").PodLevelResourceRequests({"cpu": "1"}).Obj(),
     lambda: st.MakePod().Name("pod1").UID("pod1").PodLevelResourceRequests({"cpu": "2"}).Obj(),
     lambda: st.MakePod().Name("pod1").UID("pod1").PodLevelResourceRequests({"cpu": "1"}).Obj(), True),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "queue"), AFTER_POD_CHANGE,
                         ids=[c[0] if isinstance(c, tuple) else None for c in AFTER_POD_CHANGE])
def test_is_schedulable_after_pod_change(name: str, pod: Any, old: Any, new: Any, queue: bool | None) -> None:
    """fit_test.go Test_isSchedulableAfterPodChange (12 cases)."""
    from scheduler.framework.types import ClusterEvent
    new_obj = new()
    event = ClusterEvent("Pod", "Delete" if new_obj is None else "Update", old=old(), new=new_obj)
    if queue is None:
        with pytest.raises(TypeError):
            noderesources.is_schedulable_after_pod_event(pod(), event)
    else:
        assert noderesources.is_schedulable_after_pod_event(pod(), event) is queue, name


def test_pod_deletion_requeues_a_pod_rejected_for_too_many_pods() -> None:
    """Through the queue: a pod NodeResourcesFit rejected moves when any assigned pod is deleted,
    one that requested nothing included (it frees a pod slot), as upstream's hint says."""
    from scheduler.framework.types import ClusterEvent
    from tests.builders import rejected_by
    queue, _ = rejected_by(noderesources.FIT_NAME, st.MakePod().Name("p").Req({"cpu": "1"}).Obj())
    best_effort = st.MakePod().Name("e").Node("n").Obj()
    assert queue.move_all_to_active_or_backoff(ClusterEvent("Pod", "Delete", old=best_effort)) == 1


# fit_test.go Test_isSchedulableAfterNodeChange: (name, pod, oldObj, newObj, queue; None = an error).
POD_M2_A1 = new_resource_pod(Resource(Memory=2, ScalarResources={A: 1}))
AFTER_NODE_CHANGE = [
    ("backoff-wrong-new-object", st.MakePod(), None, "not-a-node", None),
    ("backoff-wrong-old-object", st.MakePod(), "not-a-node", st.MakeNode(), None),
    ("skip-queue-on-node-add-without-sufficient-resources", new_resource_pod(Resource(Memory=2)), None,
     st.MakeNode().Capacity({"memory": "1"}), False),
    ("skip-queue-on-node-add-without-required-resource-type", new_resource_pod(Resource(ScalarResources={A: 1})), None,
     st.MakeNode().Capacity({B: "1"}), False),
    ("queue-on-node-add-with-sufficient-resources", POD_M2_A1, None, st.MakeNode().Capacity({"memory": "4", A: "2"}),
     True),
    ("skip-queue-on-node-unrelated-changes", POD_M2_A1, st.MakeNode().Capacity({"memory": "2", A: "2"}),
     st.MakeNode().Capacity({"memory": "2", A: "1", B: "2"}), False),
    ("queue-on-pod-requested-resources-increase", POD_M2_A1, st.MakeNode().Capacity({"memory": "2", A: "1"}),
     st.MakeNode().Capacity({"memory": "2", A: "2"}), True),
    ("skip-queue-on-node-changes-from-suitable-to-unsuitable", POD_M2_A1,
     st.MakeNode().Capacity({"memory": "4", A: "2"}), st.MakeNode().Capacity({"memory": "1", A: "2"}), False),
    ("queue-on-node-changes-from-unsuitable-to-suitable", POD_M2_A1, st.MakeNode().Capacity({"memory": "1", A: "2"}),
     st.MakeNode().Capacity({"memory": "4", A: "2"}), True),
]


def _built(x: Any) -> Any:
    return x.Obj() if isinstance(x, st.MakeNode | st.MakePod) else x


@pytest.mark.parametrize(("name", "pod", "old", "new", "queue"), AFTER_NODE_CHANGE, ids=[c[0] for c in AFTER_NODE_CHANGE])
def test_is_schedulable_after_node_change(name: str, pod: st.MakePod, old: Any, new: Any, queue: bool | None) -> None:
    """fit_test.go Test_isSchedulableAfterNodeChange (9 cases)."""
    from scheduler.framework.types import ClusterEvent
    event = ClusterEvent("Node", "Add" if old is None else "UpdateNodeAllocatable", old=_built(old), new=_built(new))
    if queue is None:
        with pytest.raises(TypeError):
            noderesources.is_schedulable_after_node_change(pod.Obj(), event)
    else:
        assert noderesources.is_schedulable_after_node_change(pod.Obj(), event) is queue, name


def test_node_change_through_the_queue() -> None:
    """Through the queue (the service's node events): a node too small for the pod leaves it where
    it waits; an allocatable increase that makes it fit moves it."""
    from tests.builders import node_event, rejected_by
    queue, _ = rejected_by(noderesources.FIT_NAME, new_resource_pod(Resource(Memory=2)).Name("p").Obj())
    small = st.MakeNode().Name("n").Capacity({"memory": "1"}).Obj()
    assert queue.move_all_to_active_or_backoff(node_event(None, small)) == 0
    assert queue.move_all_to_active_or_backoff(node_event(small, st.MakeNode().Name("n").Label("a", "b")
                                                          .Capacity({"memory": "1"}).Obj())) == 0
    assert queue.move_all_to_active_or_backoff(node_event(small, st.MakeNode().Name("n")
                                                          .Capacity({"memory": "4"}).Obj())) == 1


# fit_test.go TestIsFit (podLevelResourcesEnabled where upstream sets it: the gate is on by default).
IS_FIT = [
    ("nil node", st.MakePod(), None, False),
    ("insufficient resource", st.MakePod().Req({"cpu": "2"}), st.MakeNode().Capacity({"cpu": "1"}), False),
    ("sufficient resource", st.MakePod().Req({"cpu": "1"}), st.MakeNode().Capacity({"cpu": "2"}), True),
    ("insufficient pod-level resource", st.MakePod().Resources({"requests": {"cpu": "2"}}),
     st.MakeNode().Capacity({"cpu": "1"}), False),
    ("sufficient pod-level resource", st.MakePod().Resources({"requests": {"cpu": "2"}}),
     st.MakeNode().Capacity({"cpu": "2"}), True),
    ("sufficient pod-level resource hugepages", st.MakePod().Resources({"requests": {HUGE_PAGE_A: "2Mi"}}),
     st.MakeNode().Capacity({HUGE_PAGE_A: "2Mi"}), True),
    ("insufficient pod-level resource hugepages", st.MakePod().Resources({"requests": {HUGE_PAGE_A: "4Mi"}}),
     st.MakeNode().Capacity({HUGE_PAGE_A: "2Mi"}), False),
]


@pytest.mark.parametrize(("name", "pod", "node", "expected"), IS_FIT, ids=[c[0] for c in IS_FIT])
def test_is_fit(name: str, pod: st.MakePod, node: st.MakeNode | None, expected: bool) -> None:
    """fit_test.go TestIsFit (7 cases)."""
    assert noderesources.is_fit(pod.Obj(), None if node is None else node.Obj()) is expected, name


def rnode(**res: str) -> st.MakeNode:
    """``st.MakeNode().Capacity(...)`` with upstream's ResourceName keys spelled as keywords."""
    names = {"pods": "pods", "cpu": "cpu", "memory": "memory", "eph": "ephemeral-storage", "a": A}
    return st.MakeNode().Capacity({names[k]: v for k, v in res.items()})


REQUESTED_2 = new_resource_pod(Resource(MilliCPU=2, Memory=2, EphemeralStorage=2, ScalarResources={A: 2}))
INCREASED = [
    ("no-requested-resources", new_resource_pod(Resource()), rnode(pods="1", cpu="1", memory="1", eph="1", a="1"),
     rnode(pods="1", cpu="2", memory="2", eph="2", a="2"), False),
    ("no-requested-resources-pods-increased", new_resource_pod(Resource()),
     rnode(pods="1", cpu="1", memory="1", eph="1", a="1"), rnode(pods="2", cpu="1", memory="1", eph="1", a="1"), True),
    # draExtendedResourceEnabled: true, but the node has the resource, so nothing is delegated.
    ("requested-resources-dra-in-node", REQUESTED_2, rnode(cpu="1", memory="2", eph="3", a="4"),
     rnode(cpu="1", memory="2", eph="1", a="1"), False, True),
    # draExtendedResourceEnabled: true and no DRA manager (upstream's test passes nil): a resource the
    # updated node does not advertise is delegated, so the pod may fit now.
    ("requested-resources-dra-not-in-node", REQUESTED_2, rnode(cpu="1", memory="2", eph="3"),
     rnode(cpu="1", memory="2", eph="1"), True, True),
    ("requested-resources-dra-zero-capacity", new_resource_pod(Resource(ScalarResources={A: 1})), rnode(a="0"),
     rnode(a="0"), True, True),
    ("scalar-resources-not-in-node", REQUESTED_2, rnode(cpu="1", memory="2", eph="3"),
     rnode(cpu="1", memory="2", eph="1"), False, False),
    ("requested-resources-decreased", REQUESTED_2, rnode(cpu="1", memory="2", eph="3", a="4"),
     rnode(cpu="1", memory="2", eph="1", a="1"), False),
    ("requested-resources-increased", REQUESTED_2, rnode(cpu="1", memory="2", eph="3", a="4"),
     rnode(cpu="3", memory="4", eph="3", a="4"), True),
    ("non-requested-resources-decreased", new_resource_pod(Resource(MilliCPU=2, Memory=2)),
     rnode(cpu="1", memory="2", eph="3", a="4"), rnode(cpu="1", memory="2", eph="1", a="1"), False),
    ("non-requested-resources-increased", new_resource_pod(Resource(MilliCPU=2, Memory=2)),
     rnode(cpu="1", memory="2", eph="3", a="4"), rnode(cpu="1", memory="2", eph="5", a="6"), False),
]


@pytest.mark.parametrize("case", INCREASED, ids=[c[0] for c in INCREASED])
def test_have_any_requested_resources_increased(case: tuple[Any, ...]) -> None:
    """fit_test.go TestHaveAnyRequestedResourcesIncreased (10 cases): (name, pod, original node,
    modified node, expected, draExtendedResourceEnabled (false where upstream leaves it out)), with
    upstream's nil draManager."""
    name, pod, original, modified, expected, *dra_enabled = case
    got = noderesources.have_any_requested_resources_increased(pod.Obj(), original.Obj(), modified.Obj(),
                                                               dra=None, dra_enabled=bool(dra_enabled and dra_enabled[0]))
    assert got is expected, name


def test_a_node_whose_extended_resource_a_class_backs_requeues_a_pod_fit_rejected() -> None:
    """fit.go isSchedulableAfterNodeChange with DRAExtendedResource and a DRA manager, through the
    plugin's registered hint: a pod asking for 2 CPUs and a DRA-backed extended resource waits on
    Fit; a node with the CPUs that does not advertise the resource queues it when a DeviceClass backs
    the resource (DynamicResources judges the devices), and skips it when none does; and an update
    that grows nothing but the delegated resource's absence still queues (upstream's loop)."""
    from scheduler.framework.types import ClusterEvent
    want = st.MakePod().Req({"cpu": "2", EXTENDED_DRA: "1"}).Obj()
    small, big = rnode(cpu="1", memory="8"), rnode(cpu="4", memory="8")

    def hint(store: DraStore) -> Any:
        plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs(), store)
        (node_hint,) = [e.hint for e in plugin.events_to_register() if e.event.resource == "Node"]
        return node_hint

    backed, unbacked = hint(dra_store(DRA_CLASS)), hint(DraStore())
    added = ClusterEvent("Node", "Add", old=None, new=big.Obj())
    assert backed(want, added) is True
    assert unbacked(want, added) is False                 # Insufficient example.com/... even empty
    grown = ClusterEvent("Node", "UpdateNodeAllocatable", old=small.Obj(), new=big.Obj())
    assert backed(want, grown) is True
    same = ClusterEvent("Node", "UpdateNodeAllocatable", old=big.Obj(), new=big.Obj())
    assert backed(want, same) is True                     # the delegated resource counts as increased
    assert hint(dra_store(DRA_CLASS))(st.MakePod().Req({"cpu": "2"}).Obj(), same) is False


# --- least_allocated_test.go TestLeastAllocatedScoringStrategy / most_allocated_test.go -------------------
# Upstream builds the plugin from the internal config, unvalidated by v1 defaulting; ours takes v1 args
# (defaults.go first). So "Resources not set" (nil resources: Score's Error "resources not found") is,
# through v1 args, the default cpu/memory set; and "resource with zero weight" is weight 1, not an error.
TWO_CONTAINERS = st.MakePod().Req({"cpu": "1000", "memory": "2000"}).Req({"cpu": "2000", "memory": "3000"})
NOT_SET = "not set"   # resources nil in upstream's case
ZERO_WEIGHT = "zero weight"


def on(node: str, req: dict[str, str]) -> Pod:
    return st.MakePod().Node(node).Req(req).Obj()


LEAST_ALLOCATED = [
    ("nothing scheduled, nothing requested", st.MakePod(), N44, [], DEFAULT_RESOURCES, [100, 100]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS, N46, [], DEFAULT_RESOURCES,
     [37, 50]),
    ("Resources not set, pods scheduled with error", TWO_CONTAINERS, N46, [], NOT_SET, [37, 50]),
    ("no resources requested, pods scheduled", st.MakePod(), N44,
     [st.MakePod().Node("node1").Obj(), st.MakePod().Node("node1").Obj(), st.MakePod().Node("node2").Obj(),
      st.MakePod().Node("node2").Obj()], DEFAULT_RESOURCES, [100, 100]),
    ("no resources requested, pods scheduled with resources", st.MakePod(),
     [cap("node1", cpu="10000", memory="20000"), cap("node2", cpu="10000", memory="20000")],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node1", {"cpu": "3000", "memory": "0"}),
      on("node2", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [70, 57]),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [cap("node1", cpu="10000", memory="20000"), cap("node2", cpu="10000", memory="20000")],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [57, 45]),
    ("resources requested, pods scheduled with resources, differently sized nodes", TWO_CONTAINERS,
     [cap("node1", cpu="10000", memory="20000"), cap("node2", cpu="10000", memory="50000")],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [57, 60]),
    ("requested resources exceed node capacity", st.MakePod().Req({"cpu": "3000", "memory": "0"}), N44,
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [50, 25]),
    ("zero node resources, pods scheduled with resources", st.MakePod(),
     [st.MakeNode().Name("node1").Obj(), st.MakeNode().Name("node2").Obj()],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [0, 0]),
    ("nothing scheduled, resources requested with different weight on CPU and memory, differently sized nodes",
     TWO_CONTAINERS, N46, [], [("memory", 2), ("cpu", 1)], [41, 50]),
    ("resource with negative weight", TWO_CONTAINERS, N46, [], [("memory", -1), ("cpu", 1)],
     "scoringStrategy.resources[0].weight"),
    ("resource with zero weight", TWO_CONTAINERS, N46, [], [("memory", 1), ("cpu", 0)], ZERO_WEIGHT),
    ("resource weight larger than MaxNodeScore", TWO_CONTAINERS, N46, [], [("memory", 1), ("cpu", 101)],
     "scoringStrategy.resources[1].weight"),
    ("bypass extended resource if the pod does not request", TWO_CONTAINERS,
     [cap("node1", cpu="6000", memory="10000"), cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "4"})],
     [], EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod requests", st.MakePod().Req({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
     [cap("node1", cpu="6000", memory="10000", **{EXTENDED_RES: "4"}),
      cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "10"})], [], EXTENDED_RESOURCE_SET, [50, 60]),
    ("if the node doesn't have a resource", st.MakePod().Req({"cpu": "3000", "memory": "4000"}),
     [cap("node1", cpu="6000", memory="10000"), cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "4"})],
     [], [(EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)], [55, 55]),
]

MOST_ALLOCATED = [
    ("nothing scheduled, nothing requested", st.MakePod(), N44, [], DEFAULT_RESOURCES, [0, 0]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS, N46, [], DEFAULT_RESOURCES,
     [62, 50]),
    ("Resources not set, pods scheduled with error", TWO_CONTAINERS, N46, [], NOT_SET, [62, 50]),
    ("no resources requested, pods scheduled with resources", st.MakePod(),
     [cap("node1", cpu="10000", memory="20000"), cap("node2", cpu="10000", memory="20000")],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node1", {"cpu": "3000", "memory": "0"}),
      on("node2", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [30, 42]),
    ("resources requested, pods scheduled with resources", TWO_CONTAINERS,
     [cap("node1", cpu="10000", memory="20000"), cap("node2", cpu="10000", memory="20000")],
     [on("node1", {"cpu": "3000", "memory": "0"}), on("node2", {"cpu": "3000", "memory": "5000"})],
     DEFAULT_RESOURCES, [42, 55]),
    ("resources requested equal node capacity",
     st.MakePod().Req({"cpu": "2000", "memory": "4000"}).Req({"cpu": "3000", "memory": "5000"}),
     [cap("node1", cpu="5000", memory="10000"), cap("node2", cpu="10000", memory="9000")], [], DEFAULT_RESOURCES,
     [95, 75]),
    ("nothing scheduled, resources requested, differently sized nodes", TWO_CONTAINERS, N46, [],
     [("memory", 2), ("cpu", 1)], [58, 50]),
    ("no resources requested, pods scheduled, nonzero request for resource", st.MakePod().Container("container"),
     [cap("node1", cpu="250m", memory="1000Mi"), cap("node2", cpu="250m", memory="1000Mi")],
     [st.MakePod().Node("node1").Container("container").Obj(), st.MakePod().Node("node1").Container("container").Obj()],
     DEFAULT_RESOURCES, [80, 30]),
    ("resource with negative weight", TWO_CONTAINERS, [cap("node2", cpu="4000", memory="10000")], [],
     [("memory", -1), ("cpu", 1)], "scoringStrategy.resources[0].weight"),
    ("resource with zero weight", TWO_CONTAINERS, [cap("node2", cpu="4000", memory="10000")], [],
     [("memory", 1), ("cpu", 0)], ZERO_WEIGHT),
    ("resource weight larger than MaxNodeScore", TWO_CONTAINERS, [cap("node2", cpu="4000", memory="10000")], [],
     [("memory", 101)], "scoringStrategy.resources[0].weight"),
    ("bypass extended resource if the pod does not request", TWO_CONTAINERS,
     [cap("node1", cpu="6000", memory="10000"), cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "4"})],
     [], EXTENDED_RESOURCE_SET, [50, 50]),
    ("honor extended resource if the pod request",
     st.MakePod().Node("node1").Req({"cpu": "3000", "memory": "5000", EXTENDED_RES: "2"}),
     [cap("node1", cpu="6000", memory="10000", **{EXTENDED_RES: "4"}),
      cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "10"})], [], EXTENDED_RESOURCE_SET, [50, 40]),
    ("if the node doesn't have a resource", st.MakePod().Node("node1").Req({"cpu": "3000", "memory": "4000"}),
     [cap("node1", cpu="6000", memory="10000"), cap("node2", cpu="6000", memory="10000", **{EXTENDED_RES: "4"})],
     [], [(EXTENDED_RES, 2), ("cpu", 1), ("memory", 1)], [45, 45]),
]


def _allocated_strategy(kind: str, name: str, pod: st.MakePod, nodes: list[Node], existing: list[Pod],
                        resources: Any, want: Any) -> None:
    import pydantic
    if isinstance(want, str) and want.startswith("scoringStrategy."):
        with pytest.raises(pydantic.ValidationError) as e:
            strategy(kind, resources)
        assert [".".join(str(x) for x in err["loc"]).replace(".0.", "[0].").replace(".1.", "[1].")
                for err in e.value.errors()] == [want], name
        return
    if want == ZERO_WEIGHT:
        # v1 defaulting: the weight is ``omitempty``, so 0 is unset, and unset is 1.
        assert strategy(kind, resources).args.scoring_strategy.resources[1].weight == 1, name
        return
    plugin = strategy(kind, [] if resources == NOT_SET else resources)
    if resources == NOT_SET:
        assert plugin.args.scoring_strategy.resources == NodeResourcesFitArgs().scoring_strategy.resources
    assert scores(plugin, pod.Obj(), nodes, existing) == want, name


@pytest.mark.parametrize(("name", "pod", "nodes", "existing", "resources", "want"), LEAST_ALLOCATED,
                         ids=ids(LEAST_ALLOCATED))
def test_least_allocated_scoring_strategy(name: str, pod: st.MakePod, nodes: list[Node], existing: list[Pod],
                                          resources: Any, want: Any) -> None:
    """least_allocated_test.go TestLeastAllocatedScoringStrategy (16 cases)."""
    _allocated_strategy("LeastAllocated", name, pod, nodes, existing, resources, want)


@pytest.mark.parametrize(("name", "pod", "nodes", "existing", "resources", "want"), MOST_ALLOCATED,
                         ids=ids(MOST_ALLOCATED))
def test_most_allocated_scoring_strategy(name: str, pod: st.MakePod, nodes: list[Node], existing: list[Pod],
                                         resources: Any, want: Any) -> None:
    """most_allocated_test.go TestMostAllocatedScoringStrategy (14 cases)."""
    _allocated_strategy("MostAllocated", name, pod, nodes, existing, resources, want)


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
    assert args_errors(NodeResourcesBalancedAllocationArgs, raw) == errors, name


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
        args = NodeResourcesBalancedAllocationArgs.model_validate(raw)
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


def test_ignored_resources_are_extended_resources_only() -> None:
    """fitsRequest ignores only ``v1helper.IsExtendedResourceName`` names: a prefixed native one
    (``kubernetes.io/...``) or hugepages listed in ignoredResources is still checked."""
    p = new_resource_pod(Resource(ScalarResources={KUBERNETES_IO_A: 1, HUGE_PAGE_A: 1, B: 1})).Obj()
    got = filter_on(fit((KUBERNETES_IO_A, HUGE_PAGE_A, B)), p, make_resources(10, 20, 32, 5, 20, 0), [])
    assert got == ins(UNRESOLV, HUGE_PAGE_A, KUBERNETES_IO_A)


def test_scoring_leaves_out_pods_and_unrequested_scalars() -> None:
    """``calculateResourceAllocatableRequest``: ``pods`` is not a resource Score reads (it is no
    scalar), and hugepages the pod does not request are bypassed like extended resources."""
    plugin = strategy("LeastAllocated", [("cpu", 1), ("memory", 1), ("pods", 5), (HUGE_PAGE_A, 5)])
    node = cap("node1", cpu="4000", memory="10000", pods="10", **{HUGE_PAGE_A: "100"})
    assert scores(plugin, POD_3000_5000.Obj(), [node], [on("node1", {"cpu": "0", "memory": "0", HUGE_PAGE_A: "90"})]) == [(25 + 50) // 2]


# --- the fast paths (issue #38: 50,000 nodes) -------------------------------------------------
# Fit's Filter first tests only pass/fail per row and works out the reasons for the failing rows
# alone; LeastAllocated scores in float64 where every node's allocatable is below
# resource_allocation.FLOAT_EXACT_ALLOC. Both must answer exactly as upstream's per-node code.

def _fits_request(p_cpu: int, p_mem: int, alloc: tuple[int, int, int], used: tuple[int, int, int]
                  ) -> tuple[tuple[str, ...], bool] | None:
    """fit.go's fitsRequest for cpu, memory and the pod count: (reasons, unresolvable) or None."""
    reasons_, unresolvable = [], False
    if used[2] + 1 > alloc[2]:
        reasons_.append("Too many pods")
    for name, want, a, u in (("cpu", p_cpu, alloc[0], used[0]), ("memory", p_mem, alloc[1], used[1])):
        if want > 0 and want > a - u:
            reasons_.append(f"Insufficient {name}")
            unresolvable |= want > a
    return (tuple(reasons_), unresolvable) if reasons_ else None


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_fit_filter_is_fits_request_on_random_nodes(seed: int) -> None:
    """Clusters where some rows fail (short of cpu, memory, pods, or asking above allocatable) and
    most pass: every row's verdict, reasons and code as upstream's per-node fitsRequest."""
    rng = random.Random(seed)
    for _ in range(20):
        p_cpu, p_mem = rng.randrange(1, 3000), rng.randrange(1, 4 * 10**9)
        nodes, existing, want = [], [], []
        for i in range(rng.randrange(1, 40)):
            alloc = (rng.choice([2000, 4000, 8000]), rng.choice([2 * 10**9, 8 * 10**9]), rng.choice([1, 2, 110]))
            k = rng.randrange(0, 2)
            used = [0, 0, k]
            for j in range(k):
                # Random amounts, or leaving exactly the request free, or one less than it.
                c, m = rng.choice([(rng.randrange(0, 5000), rng.randrange(0, 6 * 10**9)),
                                   (alloc[0] - p_cpu, alloc[1] - p_mem), (alloc[0] - p_cpu + 1, alloc[1] - p_mem),
                                   (alloc[0] - p_cpu, alloc[1] - p_mem + 1)])
                c, m = max(c, 0), max(m, 0)
                existing.append(pod(f"e{i}-{j}", f"{c}m", str(m), node_name=f"n{i}"))
                used[0] += c
                used[1] += m
            nodes.append(node(f"n{i}", f"{alloc[0]}m", str(alloc[1]), pods=alloc[2]))
            want.append(_fits_request(p_cpu, p_mem, alloc, (used[0], used[1], used[2])))
        got = run_filter(FIT, pod("p", f"{p_cpu}m", str(p_mem)), nodes, existing)
        assert [None if g is None else (g.reasons, g.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE")
                for g in got] == want


def test_fit_least_allocated_in_float_floors_as_int64() -> None:
    """At allocatable amounts up to the bound, the float path's every score is the int64 quotient
    (the path must be taken: a table whose nodes stay below the bound), and a node above it sends
    the whole batch to the integer path, with the same answers."""
    bound = resource_allocation.FLOAT_EXACT_ALLOC
    rng = random.Random(7)
    plugin = noderesources.NodeResourcesFit(NodeResourcesFitArgs())
    for above in (False, True):
        nodes, existing, amounts = [], [], []
        for i in range(60):
            mem = bound - 1 - rng.randrange(0, 1000) if i % 2 else rng.randrange(1, bound)
            if above and i == 0:
                mem = bound + 5
            # Free amounts x (after the pod's 1000) with x * 100 just under k * mem, the quotient a
            # hair below the integer k (where a float division would round up to k if it could),
            # on it exactly, or at the edges of the node.
            k = rng.randrange(1, 100)
            x = (k * mem - 1) // 100 if i % 3 else k * mem // 100
            used = rng.choice([0, mem // 3, mem - 1000, mem - 999, mem, mem + 1, rng.randrange(0, mem + 1),
                               mem - 1000 - x, mem - 1000 - x, mem - 1000 - x])
            nodes.append(node(f"n{i}", "4", str(mem)))
            existing.append(pod(f"e{i}", "1", str(used), node_name=f"n{i}"))
            amounts.append(([1000 + 1000, used + 1000], [4000, mem]))
        p = pod("p", "1", "1000")
        assert run_score(plugin, p, nodes, existing) == [_least_resource_scorer(r, a, [1, 1]) for r, a in amounts]
        snap, state, rows = setup(nodes, existing)
        fast = fit_module._least_allocated_in_float(state, snap, rows, "memory", 1000)
        assert (fast is None) == above
        if fast is not None:
            assert fast.tolist() == [_least_resource_scorer([r[1]], [a[1]], [1]) for r, a in amounts]
