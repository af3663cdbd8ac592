"""PodTopologySpread, after upstream's ``podtopologyspread/filtering_test.go`` and ``scoring_test.go``."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model import Pod
from scheduler.plugins import podtopologyspread
from scheduler.plugins.args import PodTopologySpreadArgs
from tests.builders import node, pod, run_filter, run_score, zoned
from tests.st import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY, MakeLabelSelector, MakeNode, MakePod

PTS = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(defaultingType="List"))


def spread(max_skew: int, key: str = "zone", when: str = "DoNotSchedule", **extra: object) -> dict:
    return {"topologySpreadConstraints": [{"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when,
                                           "labelSelector": {"matchLabels": {"app": "web"}}, **extra}]}


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


def test_prescore_state_system_defaults_and_a_replicaset() -> None:
    """scoring_test.go TestPreScoreStateEmptyNodes, "system default constraints and a replicaset":
    nodes without a zone are not excluded under System defaulting; they are one more zone, so
    the weights are log(4+2) for the hostname and log(2+2) for the zone."""
    import math

    from scheduler.cache.selector_owners import SelectorOwners
    from scheduler.model import parse_pod
    from tests.builders import setup

    owners = SelectorOwners()
    owners.on_event("ReplicaSet", "ADDED", {"metadata": {"namespace": "default", "name": "rs1"},
                                            "spec": {"selector": {"matchExpressions": [{"key": "foo", "operator": "Exists"}]}}})
    plugin = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(defaultingType="System"),
                                                 owners.default_selector)
    p = parse_pod({"metadata": {"name": "p", "namespace": "default", "labels": {"foo": "tar", "baz": "sup"},
                                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs1",
                                                     "uid": "u", "controller": True}]},
                   "spec": {"containers": [{"name": "c", "image": "i"}]}})
    zone = {"topology.kubernetes.io/zone": "mars"}
    nodes = [node("node-a", labels=zone), node("node-b", labels=zone), node("node-c"), node("node-d")]
    snap, state, rows = setup(nodes, [])
    assert plugin.pre_score(state, p, snap, rows).is_success()
    got = state.read("PreScore" + podtopologyspread.NAME, object)
    assert [c.topology_key for c in got.constraints] == [podtopologyspread.HOSTNAME, podtopologyspread.ZONE]
    assert [c.max_skew for c in got.constraints] == [3, 5]
    assert got.weights == [math.log(4 + 2), math.log(2 + 2)]
    assert not got.ignored.any()


# --- filtering_test.go TestSingleConstraint, case by case ---------------------------------------------
FOO = MakeLabelSelector().Exists("foo").Obj()
BAR = MakeLabelSelector().Exists("bar").Obj()
OK, UNSCHED, UNRESOLVABLE = "Success", "Unschedulable", "UnschedulableAndUnresolvable"


def four_nodes(zone_b: str = "zone") -> list[Any]:
    return [MakeNode().Name("node-a").Label("zone", "zone1").Label("node", "node-a").Obj(),
            MakeNode().Name("node-b").Label(zone_b, "zone1").Label("node", "node-b").Obj(),
            MakeNode().Name("node-x").Label("zone", "zone2").Label("node", "node-x").Obj(),
            MakeNode().Name("node-y").Label("zone", "zone2").Label("node", "node-y").Obj()]


def foo_pods(*where: tuple[str, str]) -> list[Pod]:
    return [MakePod().Name(name).Node(node).Label("foo", "").Obj() for name, node in where]


SPREAD_2103 = foo_pods(("p-a1", "node-a"), ("p-a2", "node-a"), ("p-b1", "node-b"), ("p-y1", "node-y"),
                       ("p-y2", "node-y"), ("p-y3", "node-y"))

SINGLE_CONSTRAINT = [
    ("no existing pods",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), [], [OK, OK, OK, OK]),
    ("no existing pods, incoming pod doesn't match itself",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, BAR).Obj(),
     four_nodes(), [], [OK, OK, OK, OK]),
    ("existing pods in a different namespace do not count",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(),
     [MakePod().Name("p-a1").Namespace("ns1").Node("node-a").Label("foo", "").Obj(),
      MakePod().Name("p-b1").Namespace("ns2").Node("node-a").Label("foo", "").Obj(),
      *foo_pods(("p-x1", "node-x"), ("p-y1", "node-y"))],
     [OK, OK, UNSCHED, UNSCHED]),
    ("pods spread across zones as 3/3, all nodes fit",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), SPREAD_2103, [OK, OK, OK, OK]),
    ("pods spread across zones as 1/2 due to absence of label 'zone' on node-b",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(zone_b="zon"), foo_pods(("p-a1", "node-a"), ("p-b1", "node-b"), ("p-x1", "node-x"),
                                        ("p-y1", "node-y")),
     [OK, UNRESOLVABLE, UNSCHED, UNSCHED]),
    ("pod cannot be scheduled as all nodes don't have label 'rack'",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "rack", DO_NOT_SCHEDULE, FOO).Obj(),
     [MakeNode().Name("node-a").Label("zone", "zone1").Label("node", "node-a").Obj(),
      MakeNode().Name("node-x").Label("zone", "zone2").Label("node", "node-x").Obj()], [],
     [UNRESOLVABLE, UNRESOLVABLE]),
    ("pods spread across nodes as 2/1/0/3, only node-x fits",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "node", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), SPREAD_2103, [UNSCHED, UNSCHED, OK, UNSCHED]),
    ("pods spread across nodes as 2/1/0/3, maxSkew is 2, node-b and node-x fit",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(2, "node", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), SPREAD_2103, [UNSCHED, OK, OK, UNSCHED]),
    ("pods spread across nodes as 2/1/0/3, but pod doesn't match itself",
     MakePod().Name("p").Label("bar", "").SpreadConstraint(1, "node", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), SPREAD_2103, [UNSCHED, OK, OK, UNSCHED]),
    ("incoming pod has nodeAffinity, pods spread as 2/~1~/~0~/3, hence node-a fits",
     MakePod().Name("p").Label("foo", "").NodeAffinityIn("node", ["node-a", "node-y"])
     .SpreadConstraint(1, "node", DO_NOT_SCHEDULE, FOO).Obj(),
     four_nodes(), SPREAD_2103, [OK, OK, OK, UNSCHED]),     # node-b, node-x: "in real case, it's false"
    ("terminating Pods should be excluded",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "node", DO_NOT_SCHEDULE, FOO).Obj(),
     [MakeNode().Name("node-a").Label("node", "node-a").Obj(), MakeNode().Name("node-b").Label("node", "node-b").Obj()],
     [MakePod().Name("p-a").Node("node-a").Label("foo", "").Terminating().Obj(),
      MakePod().Name("p-b").Node("node-b").Label("foo", "").Obj()],
     [OK, UNSCHED]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "want"), SINGLE_CONSTRAINT,
                         ids=[c[0] for c in SINGLE_CONSTRAINT])
def test_single_constraint(name: str, p: Pod, nodes: list[Any], existing: list[Pod], want: list[str]) -> None:
    """filtering_test.go TestSingleConstraint: PreFilter, then each node's Filter status code."""
    got = run_filter(PTS, p, nodes, existing)
    assert [OK if g is None else ("Unschedulable" if g.code.name == "UNSCHEDULABLE" else
                                  "UnschedulableAndUnresolvable" if g.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"
                                  else g.code.name) for g in got] == want, name


def zone_and_node(zone_selector: dict[str, Any], node_selector: dict[str, Any], *labels: str) -> Pod:
    p = MakePod().Name("p")
    for label in labels:
        p = p.Label(label, "")
    return (p.SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, zone_selector)
            .SpreadConstraint(1, "node", DO_NOT_SCHEDULE, node_selector).Obj())


def labelled(name: str, node: str, *labels: str) -> Pod:
    p = MakePod().Name(name).Node(node)
    for label in labels:
        p = p.Label(label, "")
    return p.Obj()


MULTIPLE_CONSTRAINTS = [
    ("two Constraints on zone and node, spreads = [3/3, 2/1/0/3]", zone_and_node(FOO, FOO, "foo"),
     four_nodes(), SPREAD_2103, [UNSCHED, UNSCHED, OK, UNSCHED]),
    ("two Constraints on zone and node, spreads = [3/4, 2/1/0/4]", zone_and_node(FOO, FOO, "foo"),
     four_nodes(), [*SPREAD_2103, *foo_pods(("p-y4", "node-y"))], [UNSCHED, UNSCHED, UNSCHED, UNSCHED]),
    ("Constraints hold different labelSelectors, spreads = [1/0, 1/0/0/1]", zone_and_node(FOO, BAR, "foo", "bar"),
     four_nodes(), [labelled("p-a1", "node-a", "foo"), labelled("p-y1", "node-y", "bar")],
     [UNSCHED, UNSCHED, OK, UNSCHED]),
    ("Constraints hold different labelSelectors, spreads = [1/0, 0/0/1/1]", zone_and_node(FOO, BAR, "foo", "bar"),
     four_nodes(), [labelled("p-a1", "node-a", "foo"), labelled("p-x1", "node-x", "bar"),
                    labelled("p-y1", "node-y", "bar")],
     [UNSCHED, UNSCHED, UNSCHED, UNSCHED]),
    ("Constraints hold different labelSelectors, spreads = [2/3, 1/0/0/1]", zone_and_node(FOO, BAR, "foo", "bar"),
     four_nodes(), [labelled("p-a1", "node-a", "foo"), labelled("p-a2", "node-a", "foo", "bar"),
                    labelled("p-y1", "node-y", "foo"), labelled("p-y2", "node-y", "foo", "bar"),
                    labelled("p-y3", "node-y", "foo")],
     [UNSCHED, OK, UNSCHED, UNSCHED]),
    ("Constraints hold different labelSelectors but pod doesn't match itself on 'zone' constraint",
     zone_and_node(FOO, BAR, "bar"), four_nodes(),
     [labelled("p-a1", "node-a", "foo"), labelled("p-x1", "node-x", "bar"), labelled("p-y1", "node-y", "bar")],
     [OK, OK, UNSCHED, UNSCHED]),
    ("two Constraints on zone and node, absence of label 'node' on node-x, spreads = [1/1, 1/0/0/1]",
     zone_and_node(FOO, FOO, "foo"),
     [MakeNode().Name("node-a").Label("zone", "zone1").Label("node", "node-a").Obj(),
      MakeNode().Name("node-b").Label("zone", "zone1").Label("node", "node-b").Obj(),
      MakeNode().Name("node-x").Label("zone", "zone2").Obj(),
      MakeNode().Name("node-y").Label("zone", "zone2").Label("node", "node-y").Obj()],
     foo_pods(("p-a1", "node-a"), ("p-y3", "node-y")), [UNSCHED, OK, UNRESOLVABLE, UNSCHED]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "existing", "want"), MULTIPLE_CONSTRAINTS,
                         ids=[c[0] for c in MULTIPLE_CONSTRAINTS])
def test_multiple_constraints(name: str, p: Pod, nodes: list[Any], existing: list[Pod], want: list[str]) -> None:
    """filtering_test.go TestMultipleConstraints."""
    test_single_constraint(name, p, nodes, existing, want)


def test_pre_filter_disabled() -> None:
    """filtering_test.go TestPreFilterDisabled: upstream's Filter without its PreFilter state is an
    Error; ours computes the state itself (CycleState.read_or_compute), so a Filter called alone
    gives the verdict PreFilter would have led to — here, a pod with no constraints fits."""
    from tests.builders import setup
    snap, state, rows = setup([MakeNode().Name("n").Obj()], [])
    verdict = PTS.filter_nodes(state, MakePod().Name("p").Obj(), snap, rows)
    assert not verdict.failed.any()


# --- scoring_test.go TestPodTopologySpreadScore ------------------------------------------------------

HOST = "kubernetes.io/hostname"


def hosts(*names: str, zones: dict[str, str] | None = None, key: str = HOST) -> list[Any]:
    out = []
    for n in names:
        b = MakeNode().Name(n)
        if zones is not None:
            b = b.Label("zone", zones[n])
        out.append(b.Label(key, n).Obj())
    return out


def pods_with(*spec: tuple[str, str, tuple[str, ...]]) -> list[Pod]:
    return [labelled(name, node, *labels) for name, node, labels in spec]


def counted(node: str, n: int, start: int = 1, label: str = "foo") -> list[Pod]:
    return [labelled(f"p-{node[-1]}{i}", node, label) for i in range(start, start + n)]


def one(max_skew: int, key: str, selector: dict[str, Any] | None, *labels: str) -> Pod:
    p = MakePod().Name("p")
    for label in labels or ("foo",):
        p = p.Label(label, "")
    return p.SpreadConstraint(max_skew, key, SCHEDULE_ANYWAY, selector).Obj()


def two(first: tuple[str, dict[str, Any]], second: tuple[str, dict[str, Any]]) -> Pod:
    return (MakePod().Name("p").Label("foo", "").Label("bar", "")
            .SpreadConstraint(1, first[0], SCHEDULE_ANYWAY, first[1])
            .SpreadConstraint(1, second[0], SCHEDULE_ANYWAY, second[1]).Obj())


ZONES4 = {"node-a": "zone1", "node-b": "zone1", "node-x": "zone2", "node-y": "zone2"}
SPREAD_4213 = [*counted("node-a", 4), *counted("node-b", 2), *counted("node-x", 1), *counted("node-y", 3)]

SCORE = [
    ("one constraint on node, no existing pods", one(1, HOST, FOO), [], hosts("node-a", "node-b"), [], [100, 100]),
    ("one constraint on node, only one node is candidate", one(1, HOST, FOO),
     [*counted("node-a", 2), *counted("node-b", 1)], hosts("node-a"), hosts("node-b"), [100]),
    ("one constraint on node, all nodes have the same number of matching pods", one(1, HOST, FOO),
     [*counted("node-a", 1), *counted("node-b", 1)], hosts("node-a", "node-b"), [], [100, 100]),
    ("one constraint on node, all 4 nodes are candidates", one(1, HOST, FOO),
     [*counted("node-a", 2), *counted("node-b", 1), *counted("node-d", 3)],
     hosts("node-a", "node-b", "node-c", "node-d"), [], [20, 60, 100, 0]),
    ("one constraint on node, null selector", one(1, HOST, None),
     [*counted("node-a", 2), *counted("node-b", 1), *counted("node-d", 3)],
     hosts("node-a", "node-b", "node-c", "node-d"), [], [100, 100, 100, 100]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=2", one(2, HOST, FOO),
     [*counted("node-a", 2), *counted("node-b", 1), *counted("node-d", 3)],
     hosts("node-a", "node-b", "node-c", "node-d"), [], [33, 66, 100, 16]),
    ("one constraint on node, all 4 nodes are candidates, maxSkew=3", one(3, HOST, FOO),
     [*counted("node-a", 4), *counted("node-b", 3), *counted("node-c", 2), *counted("node-d", 1)],
     hosts("node-a", "node-b", "node-c", "node-d"), [], [44, 66, 77, 100]),
    ("one constraint on node, 3 out of 4 nodes are candidates", one(1, HOST, FOO), SPREAD_4213,
     hosts("node-a", "node-b", "node-x"), hosts("node-y"), [33, 83, 100]),
    ("one constraint on node, 3 out of 4 nodes are candidates, one node doesn't match topology key",
     one(1, HOST, FOO), SPREAD_4213,
     [*hosts("node-a"), MakeNode().Name("node-b").Label("n", "node-b").Obj(), *hosts("node-x")], hosts("node-y"),
     [16, 0, 100]),
    ("one constraint on zone, 3 out of 4 nodes are candidates", one(1, "zone", FOO), SPREAD_4213,
     hosts("node-a", "node-b", "node-x", zones=ZONES4), hosts("node-y", zones=ZONES4), [75, 75, 100]),
    ("two Constraints on zone and node, 2 out of 4 nodes are candidates",
     MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", SCHEDULE_ANYWAY, FOO)
     .SpreadConstraint(1, HOST, SCHEDULE_ANYWAY, FOO).Obj(),
     [*counted("node-a", 2), *counted("node-b", 1), *counted("node-x", 2), *counted("node-y", 4)],
     hosts("node-a", "node-x", zones=ZONES4), hosts("node-b", "node-y", zones=ZONES4), [100, 63]),
    ("two Constraints on zone, 2 out of 4 nodes are candidates", two(("zone", FOO), ("zone", BAR)),
     pods_with(("p-a1", "node-a", ("foo", "bar")), ("p-a2", "node-a", ("foo",)), ("p-b1", "node-b", ("foo", "bar")),
               ("p-y1", "node-y", ("foo",)), ("p-y2", "node-y", ("foo", "bar")), ("p-y3", "node-y", ("foo",))),
     [MakeNode().Name("node-a").Label("zone", "zone1").Obj(), MakeNode().Name("node-x").Label("zone", "zone2").Obj()],
     [MakeNode().Name("node-b").Label("zone", "zone1").Obj(), MakeNode().Name("node-y").Label("zone", "zone2").Obj()],
     [85, 100]),
    ("two Constraints on zone and node, with different labelSelectors", two(("zone", FOO), (HOST, BAR)),
     pods_with(("p-a1", "node-a", ("foo",)), ("p-b1", "node-b", ("foo", "bar")), ("p-y1", "node-y", ("foo",)),
               ("p-y2", "node-y", ("bar",))),
     hosts("node-a", "node-b", "node-x", "node-y", zones=ZONES4), [], [60, 20, 100, 60]),
    ("two Constraints on zone and node, with different labelSelectors, some nodes have 0 pods",
     two(("zone", FOO), (HOST, BAR)),
     pods_with(("p-b1", "node-b", ("bar",)), ("p-x1", "node-x", ("foo",)), ("p-y1", "node-y", ("foo", "bar"))),
     hosts("node-a", "node-b", "node-x", "node-y", zones=ZONES4), [], [100, 60, 40, 0]),
    ("two Constraints on zone and node, with different labelSelectors, 3 out of 4 nodes are candidates",
     two(("zone", FOO), (HOST, BAR)),
     pods_with(("p-a1", "node-a", ("foo",)), ("p-b1", "node-b", ("foo", "bar")), ("p-y1", "node-y", ("foo",)),
               ("p-y2", "node-y", ("bar",))),
     hosts("node-a", "node-b", "node-x", zones=ZONES4), hosts("node-y", zones=ZONES4), [50, 25, 100]),
    ("existing pods in a different namespace do not count", one(1, HOST, FOO),
     [MakePod().Name("p-a1").Namespace("ns1").Node("node-a").Label("foo", "").Obj(),
      *foo_pods(("p-a2", "node-a"), ("p-b1", "node-b"), ("p-b2", "node-b"))],
     hosts("node-a", "node-b"), [], [100, 33]),
    ("terminating Pods should be excluded", one(1, HOST, FOO),
     [MakePod().Name("p-a").Node("node-a").Label("foo", "").Terminating().Obj(), *foo_pods(("p-b", "node-b"))],
     hosts("node-a", "node-b"), [], [100, 0]),
]


def score_candidates(plugin: Any, p: Pod, existing: list[Pod], nodes: list[Any], failed: list[Any]) -> list[int]:
    """Score ``nodes`` (the candidates) on a snapshot that also holds ``failed`` (upstream's
    failedNodes: in the cluster, not candidates), as upstream's test does."""
    import numpy as np

    from tests.builders import setup
    snap, state, _ = setup([*nodes, *failed], existing)
    rows = np.array([snap.row_of(n.name) for n in nodes], np.int64)
    assert plugin.pre_score(state, p, snap, rows).is_success()
    scores = plugin.score_nodes(state, p, snap, rows)
    plugin.score_extensions().normalize_score(state, p, scores)
    return [int(s) for s in scores]


@pytest.mark.parametrize(("name", "p", "existing", "nodes", "failed", "want"), SCORE, ids=[c[0] for c in SCORE])
def test_pod_topology_spread_score(name: str, p: Pod, existing: list[Pod], nodes: list[Any], failed: list[Any],
                                   want: list[int]) -> None:
    assert score_candidates(PTS, p, existing, nodes, failed) == want, name


def test_pod_topology_spread_score_system_defaulting_with_a_service() -> None:
    """scoring_test.go TestPodTopologySpreadScore, "system defaulting, nodes don't have zone, pods match
    service": the same scores as one spreading constraint on the hostname."""
    from scheduler.cache.selector_owners import SelectorOwners
    owners = SelectorOwners()
    owners.on_event("Service", "ADDED", {"metadata": {"namespace": "default", "name": "s"},
                                         "spec": {"selector": {"foo": ""}}})
    plugin = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(), owners.default_selector)
    existing = [*counted("node-a", 4), *counted("node-b", 3), *counted("node-c", 2), *counted("node-d", 1)]
    got = score_candidates(plugin, MakePod().Name("p").Label("foo", "").Obj(), existing,
                           hosts("node-a", "node-b", "node-c", "node-d"), [])
    assert got == [44, 66, 77, 100]


# --- kubernetes/kubernetes#141340 (1.38): an empty, non-nil labelSelector matches every pod -----------
# 1.37's countPodsMatchSelector returned 0 for `labelSelector: {}` (labels.Everything().Empty() is
# true), so the constraint was a silent no-op; the fix counts every pod of the namespace, and a
# nil selector (labels.Nothing()) still counts none. Cases after the PR's description.
@pytest.mark.parametrize(("name", "selector", "want"), [
    ("empty labelSelector {} counts every pod of the namespace", {}, ["skew", "skew", None, "missing"]),
    ("nil labelSelector counts none", None, [None, None, None, "missing"]),
    ("a selector of the same pods, the new one included",
     {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db", "web"]}]}, ["skew", "skew", None, "missing"]),
])
def test_spread_filter_empty_label_selector_matches_all(name: str, selector: dict[str, Any] | None,
                                                        want: list[str | None]) -> None:
    constraint: dict[str, Any] = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    if selector is not None:
        constraint["labelSelector"] = selector
    p = pod("p", labels={"app": "web"}, spec={"topologySpreadConstraints": [constraint]})
    other = pod("other", labels={"app": "db"}, node_name="a1")     # unlabelled as "web": only {} counts it
    elsewhere = pod("elsewhere", labels={"app": "db"}, node_name="b1", namespace="other-ns")
    got = run_filter(PTS, p, zoned(), [other, elsewhere])
    names = {podtopologyspread.ERR_REASON_CONSTRAINTS_NOT_MATCH: "skew",
             podtopologyspread.ERR_REASON_NODE_LABEL_NOT_MATCH: "missing"}
    assert [None if g is None else names[g.reasons[0]] for g in got] == want, name


# --- MatchLabelKeysInPodTopologySpread (beta, on in 1.37) -------------------------------------------
# scoring_test.go TestPodTopologySpreadScore's matchLabelKeys cases, each with its enableMatchLabelKeys;
# the plugin is built with the gate's value as upstream's test sets the plugin's field.
def _zones_and_hosts() -> list[Any]:
    return [MakeNode().Name(n).Label("zone", z).Label(HOST, n).Obj()
            for n, z in (("node-a", "zone1"), ("node-b", "zone1"), ("node-c", "zone2"), ("node-d", "zone2"))]


_BAR = MakeLabelSelector().Exists("bar").Obj()
MATCH_LABEL_KEYS_SCORE = [
    ("matchLabelKeys ignored when feature gate disabled", False,
     MakePod().Name("p").Label("foo", "").Label("bar", "").Label("baz", "")
     .SpreadConstraint(1, "zone", SCHEDULE_ANYWAY, FOO, None, None, None, ["baz"])
     .SpreadConstraint(1, HOST, SCHEDULE_ANYWAY, _BAR, None, None, None, ["baz"]).Obj(),
     [MakePod().Name("p-a1").Node("node-a").Label("foo", "").Obj(),
      MakePod().Name("p-b1").Node("node-b").Label("foo", "").Label("bar", "").Obj(),
      MakePod().Name("p-y1").Node("node-c").Label("foo", "").Obj(),
      MakePod().Name("p-y2").Node("node-c").Label("bar", "").Obj()],
     [60, 20, 60, 100]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector is empty", True,
     MakePod().Name("p").Label("foo", "").Label("bar", "")
     .SpreadConstraint(1, "zone", SCHEDULE_ANYWAY, MakeLabelSelector().Obj(), None, None, None, ["foo"])
     .SpreadConstraint(1, HOST, SCHEDULE_ANYWAY, MakeLabelSelector().Obj(), None, None, None, ["bar"]).Obj(),
     [MakePod().Name("p-a1").Node("node-a").Label("foo", "").Obj(),
      MakePod().Name("p-b1").Node("node-b").Label("foo", "").Label("bar", "").Obj(),
      MakePod().Name("p-y1").Node("node-c").Label("foo", "").Obj(),
      MakePod().Name("p-y2").Node("node-c").Label("bar", "").Obj()],
     [60, 20, 60, 100]),
    ("matchLabelKeys ANDed with LabelSelector when LabelSelector isn't empty", True,
     MakePod().Name("p").Label("foo", "").Label("bar", "").Label("baz", "")
     .SpreadConstraint(1, "zone", SCHEDULE_ANYWAY, FOO, None, None, None, None)
     .SpreadConstraint(1, HOST, SCHEDULE_ANYWAY, _BAR, None, None, None, ["baz"]).Obj(),
     [MakePod().Name("p-a1").Node("node-a").Label("foo", "").Obj(),
      MakePod().Name("p-b1").Node("node-b").Label("foo", "").Label("bar", "").Label("baz", "").Obj(),
      MakePod().Name("p-c1").Node("node-c").Label("foo", "").Obj(),
      MakePod().Name("p-c2").Node("node-c").Label("bar", "").Obj(),
      MakePod().Name("p-d3").Node("node-c").Label("bar", "").Label("baz", "").Obj()],
     [60, 20, 60, 100]),
]


@pytest.mark.parametrize(("name", "gate", "p", "existing", "want"), MATCH_LABEL_KEYS_SCORE,
                         ids=[c[0] for c in MATCH_LABEL_KEYS_SCORE])
def test_scoring_test_go_match_label_keys(name: str, gate: bool, p: Pod, existing: list[Pod], want: list[int]) -> None:
    plugin = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(defaultingType="System"),
                                                 match_label_keys=gate)
    assert score_candidates(plugin, p, existing, _zones_and_hosts(), []) == want, name


def test_match_label_keys_gate_off_filters_on_the_label_selector_alone() -> None:
    """test/integration/scheduler/filters/filters_test.go TestPodTopologySpreadFilter, "matchLabelKeys ignored when feature
    gate disabled, pods spread across zone as 2/1" and "matchLabelKeys ANDed with LabelSelector
    when LabelSelector isn't empty, pods spread across zone as 0/1": one pod, both gate values."""
    nodes = [MakeNode().Name(n).Label("node", n).Label("zone", z).Obj()
             for n, z in (("node-0", "zone-0"), ("node-1", "zone-0"), ("node-2", "zone-1"), ("node-3", "zone-1"))]
    existing = [MakePod().Name("p1a").Node("node-0").Label("foo", "").Obj(),
                MakePod().Name("p2a").Node("node-1").Label("foo", "").Obj(),
                MakePod().Name("p3a").Node("node-2").Label("foo", "").Label("bar", "").Obj()]
    p = (MakePod().Name("p").Label("foo", "").Label("bar", "")
         .SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, MakeLabelSelector().Exists("foo").Obj(), None, None, None,
                           ["bar"]).Obj())
    for gate, want in ((False, ["node-2", "node-3"]), (True, ["node-0", "node-1"])):
        plugin = podtopologyspread.PodTopologySpread(PodTopologySpreadArgs(defaultingType="List"),
                                                     match_label_keys=gate)
        got = run_filter(plugin, p, nodes, existing)
        assert [n.name for n, g in zip(nodes, got, strict=True) if g is None] == want, gate


def test_match_label_keys_follows_the_handle_feature_gate() -> None:
    from scheduler.framework.handle import Handle
    assert podtopologyspread.new(None, Handle())._match_label_keys is True
    off = Handle(feature_gates={"MatchLabelKeysInPodTopologySpread": False})
    assert podtopologyspread.new(None, off)._match_label_keys is False
