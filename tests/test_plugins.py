"""Plugin tables, after upstream's ``*_test.go``: pods, nodes, the wanted status per node."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.cache import Cache, Snapshot
from scheduler.framework import CycleState, Status
from scheduler.framework.interfaces import Rows
from scheduler.model import Node, Pod
from scheduler.plugins import (
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    podtopologyspread,
    tainttoleration,
)
from scheduler.plugins.args import (
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    ScoringStrategy,
)
from tests.builders import node, pod


def setup(nodes: list[Node], existing: list[Pod]) -> tuple[Snapshot, CycleState, Rows]:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for e in existing:
        cache.add_pod(e)
    snap = cache.snapshot()
    return snap, CycleState(), np.array([snap.row_of(n.name) for n in nodes], np.int64)


def run_filter(plugin: object, p: Pod, nodes: list[Node], existing: list[Pod] = ()) -> list[Status | None]:
    """Run PreFilter+Filter; per node the failure Status, or None when the node passes."""
    snap, state, rows = setup(nodes, existing)
    if hasattr(plugin, "pre_filter"):
        _, s = plugin.pre_filter(state, p, snap)
        if s.is_skip():
            return [None] * len(nodes)
        if not s.is_success():
            return [s] * len(nodes)
    v = plugin.filter_nodes(state, p, snap, rows)
    out: list[Status | None] = []
    for i in range(len(nodes)):
        if not v.failed[i]:
            out.append(None)
        else:
            out.append(v.statuses[0 if v.status_ids is None else int(v.status_ids[i])])
    return out


def run_score(plugin: object, p: Pod, nodes: list[Node], existing: list[Pod] = ()) -> list[int]:
    """Run PreScore+Score+NormalizeScore; the normalised score per node (0 when PreScore skips)."""
    snap, state, rows = setup(nodes, existing)
    if hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, p, snap, rows)
        if s.is_skip():
            return [0] * len(nodes)
    scores = plugin.score_nodes(state, p, snap, rows)
    ext = plugin.score_extensions()
    if ext is not None:
        ext.normalize_score(state, p, scores)
    return scores.tolist()


def reasons(statuses: list[Status | None]) -> list[tuple[str, ...] | None]:
    return [None if s is None else s.reasons for s in statuses]


# --- NodeResourcesFit -------------------------------------------------------------------------
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


# --- extreme quantities: no wrap, no overflow, scores in [0, 100] (issue #12) -------------------
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


def test_image_locality_with_huge_image_sizes() -> None:
    il = imagelocality.ImageLocality()
    nodes = [node("a", images=[("img:1", 2**63 - 1)]), node("b", images=[("img:1", 10**400)]), node("c")]
    got = run_score(il, pod("p", image="img:1"), nodes)
    assert got[2] == 0 and all(0 <= s <= 100 for s in got)


# --- TaintToleration --------------------------------------------------------------------------
TT = tainttoleration.TaintToleration()
GPU = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("name", "tolerations", "want"), [
    ("untolerated", [], ("node(s) had untolerated taint {dedicated: gpu}",)),
    ("tolerated by equal", [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], None),
    ("tolerated by exists", [{"key": "dedicated", "operator": "Exists"}], None),
    ("wildcard exists", [{"operator": "Exists"}], None),
    ("wrong value", [{"key": "dedicated", "value": "cpu"}], ("node(s) had untolerated taint {dedicated: gpu}",)),
    ("wrong effect", [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
     ("node(s) had untolerated taint {dedicated: gpu}",)),
])
def test_taint_filter(name: str, tolerations: list[dict], want: tuple[str, ...] | None) -> None:
    p = pod("p", spec={"tolerations": tolerations})
    (got,) = run_filter(TT, p, [node("n", taints=GPU)])
    assert (None if got is None else got.reasons) == want, name


def test_taint_prefer_no_schedule_score() -> None:
    soft = [{"key": "a", "value": "1", "effect": "PreferNoSchedule"}]
    two = [*soft, {"key": "b", "value": "2", "effect": "PreferNoSchedule"}]
    got = run_score(TT, pod("p"), [node("n0"), node("n1", taints=soft), node("n2", taints=two)])
    assert got == [100, 50, 0]


# --- NodeAffinity -----------------------------------------------------------------------------
NA = nodeaffinity.NodeAffinity(NodeAffinityArgs())
ZONE_AFFINITY = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]}]}}}}


@pytest.mark.parametrize(("name", "spec", "want"), [
    ("node selector", {"nodeSelector": {"zone": "z1"}}, [True, False, False]),
    ("required In", ZONE_AFFINITY, [True, True, False]),
    ("NotIn matches missing", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1"]}]}]}}}},
     [False, True, True]),
    ("Gt", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["2"]}]}]}}}},
     [False, True, False]),
    ("terms are ORed", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                              {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]}}}},
     [True, False, True]),
    ("selector with unknown value matches nothing", {"nodeSelector": {"zone": "nowhere"}}, [False, False, False]),
])
def test_node_affinity_filter(name: str, spec: dict, want: list[bool]) -> None:
    nodes = [node("a", labels={"zone": "z1", "gen": "1"}), node("b", labels={"zone": "z2", "gen": "3"}), node("c")]
    got = run_filter(NA, pod("p", spec=spec), nodes)
    assert [g is None for g in got] == want, name
    for g in got:
        assert g is None or g.reasons == ("node(s) didn't match Pod's node affinity/selector",)


def test_node_affinity_preferred_score() -> None:
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}},
        {"weight": 8, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]}}}
    nodes = [node("a", labels={"zone": "z1"}), node("b", labels={"ssd": "y"}), node("c", labels={"zone": "z1", "ssd": "y"})]
    assert run_score(NA, pod("p", spec=spec), nodes) == [20, 80, 100]


def test_added_affinity() -> None:
    plugin = nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}))
    got = run_filter(plugin, pod("p"), [node("a", labels={"pool": "batch"}), node("b")])
    assert reasons(got) == [None, ("node(s) didn't match scheduler-enforced node affinity",)]


# --- small filters ----------------------------------------------------------------------------
def test_node_unschedulable() -> None:
    plugin = nodeunschedulable.NodeUnschedulable()
    nodes = [node("a", unschedulable=True), node("b")]
    assert reasons(run_filter(plugin, pod("p"), nodes)) == [("node(s) were unschedulable",), None]
    tolerant = pod("p", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                               "effect": "NoSchedule"}]})
    assert reasons(run_filter(plugin, tolerant, nodes)) == [None, None]


def test_node_name() -> None:
    got = run_filter(nodename.NodeName(), pod("p", node_name="b"), [node("a"), node("b")])
    assert reasons(got) == [("node(s) didn't match the requested node name",), None]


def test_node_ports() -> None:
    spec = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    existing = pod("e", node_name="a", spec=spec)
    got = run_filter(nodeports.NodePorts(), pod("p", spec=spec), [node("a"), node("b")], [existing])
    assert reasons(got) == [("node(s) didn't have free ports for the requested pod ports",), None]
    other_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}]}]}
    first_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}]}
    got = run_filter(nodeports.NodePorts(), pod("p", spec=other_ip), [node("a")], [pod("e", node_name="a", spec=first_ip)])
    assert reasons(got) == [None]


def test_image_locality() -> None:
    mb = 1024 * 1024
    nodes = [node("a", images=[("nginx:1.25", 500 * mb)]), node("b")]
    got = run_score(imagelocality.ImageLocality(), pod("p", image="nginx:1.25"), nodes)
    # 500MB spread over 1 of 2 nodes = 250MB; (250-23)/(1000-23) * 100 = 23
    assert got == [23, 0]


# --- PodTopologySpread ------------------------------------------------------------------------
PTS = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(defaultingType="List"))


def spread(max_skew: int, key: str = "zone", when: str = "DoNotSchedule", **extra: object) -> dict:
    return {"topologySpreadConstraints": [{"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
                                           "labelSelector": {"matchLabels": {"app": "web"}}, **extra}]}


def zoned() -> list[Node]:
    return [node("a1", labels={"zone": "a"}), node("a2", labels={"zone": "a"}), node("b1", labels={"zone": "b"}),
            node("c1")]


def web(name: str, on: str) -> Pod:
    return pod(name, labels={"app": "web"}, node_name=on)


@pytest.mark.parametrize(("name", "existing", "max_skew", "want"), [
    ("empty cluster: all zones ok", [], 1, [None, None, None, "missing"]),
    ("zone a full by one", [web("w1", "a1")], 1, ["skew", "skew", None, "missing"]),
    ("skew 2 allows", [web("w1", "a1")], 2, [None, None, None, "missing"]),
    ("balanced", [web("w1", "a1"), web("w2", "b1")], 1, [None, None, None, "missing"]),
])
def test_spread_filter(name: str, existing: list[Pod], max_skew: int, want: list[str | None]) -> None:
    p = pod("p", labels={"app": "web"}, spec=spread(max_skew))
    got = run_filter(PTS, p, zoned(), existing)
    names = {podtopologyspread.ERR_REASON_CONSTRAINTS_NOT_MATCH: "skew",
             podtopologyspread.ERR_REASON_NODE_LABEL_NOT_MATCH: "missing"}
    assert [None if g is None else names[g.reasons[0]] for g in got] == want, name


def test_spread_min_domains() -> None:
    # Two domains exist but minDomains=3: the global minimum is treated as 0.
    existing = [web("w1", "a1"), web("w2", "b1")]
    p = pod("p", labels={"app": "web"}, spec=spread(1, minDomains=3))
    got = run_filter(PTS, p, zoned()[:3], existing)
    assert all(g is not None for g in got)


def test_spread_other_namespace_does_not_count() -> None:
    p = pod("p", labels={"app": "web"}, spec=spread(1))
    other = pod("x", labels={"app": "web"}, node_name="a1", namespace="other")
    assert [g is None for g in run_filter(PTS, p, zoned()[:3], [other])] == [True, True, True]


def test_spread_score_prefers_emptier_domain() -> None:
    p = pod("p", labels={"app": "web"}, spec=spread(1, when="ScheduleAnyway"))
    got = run_score(PTS, p, zoned()[:3], [web("w1", "a1"), web("w2", "a2")])
    assert got[2] == 100 and got[0] == got[1] < 100


# --- InterPodAffinity -------------------------------------------------------------------------
IPA = interpodaffinity.InterPodAffinity(InterPodAffinityArgs())


def affinity(kind: str, key: str = "zone", match: dict | None = None) -> dict:
    return {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": match or {"app": "db"}}, "topologyKey": key}]}}}


@pytest.mark.parametrize(("name", "p", "existing", "want"), [
    ("affinity to zone with db", pod("p", spec=affinity("podAffinity")), [pod("db", labels={"app": "db"}, node_name="a1")],
     [None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("no db anywhere, pod does not match itself", pod("p", spec=affinity("podAffinity")), [],
     [interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH] * 4),
    ("first pod of a group goes anywhere with the key", pod("p", labels={"app": "db"}, spec=affinity("podAffinity")), [],
     [None, None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("anti-affinity keeps out of the zone", pod("p", spec=affinity("podAntiAffinity")),
     [pod("db", labels={"app": "db"}, node_name="a1")],
     [interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH] * 2 + [None, None]),
    ("existing pod's anti-affinity", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "web"}))],
     [None, None, interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, None]),
])
def test_inter_pod_affinity_filter(name: str, p: Pod, existing: list[Pod], want: list[str | None]) -> None:
    got = run_filter(IPA, p, zoned(), existing)
    assert [None if g is None else g.reasons[0] for g in got] == want, name


def test_inter_pod_affinity_preferred_score() -> None:
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}}]}}}
    got = run_score(IPA, pod("p", spec=spec), zoned()[:3], [pod("db", labels={"app": "db"}, node_name="b1")])
    assert got == [0, 0, 100]


def test_spread_system_defaults_need_a_default_selector() -> None:
    from scheduler.model.selectors import parse_label_selector

    selector = parse_label_selector({"matchLabels": {"app": "web"}}, "s")
    with_selector = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(), lambda p: selector)
    without = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs())
    nodes = [node("a1", labels={"topology.kubernetes.io/zone": "a"}), node("b1", labels={"topology.kubernetes.io/zone": "b"})]
    existing = [pod(f"w{i}", labels={"app": "web"}, node_name="a1") for i in range(3)]
    p = pod("p", labels={"app": "web"})
    assert run_score(without, p, nodes, existing) == [0, 0]  # no constraints: PreScore skips
    got = run_score(with_selector, p, nodes, existing)
    assert got[1] == 100 and got[0] < 100  # hostname maxSkew 3, zone maxSkew 5: spread away from a1
