"""PodTopologySpread, after upstream's ``podtopologyspread/filtering_test.go`` and ``scoring_test.go``."""

from __future__ import annotations

import pytest

from scheduler.model import Pod
from scheduler.plugins import podtopologyspread
from scheduler.plugins.args import PodTopologySpreadArgs
from tests.builders import node, pod, run_filter, run_score, zoned

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
