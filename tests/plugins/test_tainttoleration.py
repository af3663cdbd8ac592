"""TaintToleration, after upstream's ``tainttoleration/taint_toleration_test.go``."""

from __future__ import annotations

import pytest

from scheduler.model import Node, Pod
from scheduler.plugins import tainttoleration
from tests.builders import node, pod, run_filter, run_score

TT = tainttoleration.TaintToleration()


GPU = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("name", "tolerations", "want"), [
    ("untolerated", [], ("node(s) had untolerated taint(s)",)),
    ("tolerated by equal", [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], None),
    ("tolerated by exists", [{"key": "dedicated", "operator": "Exists"}], None),
    ("wildcard exists", [{"operator": "Exists"}], None),
    ("wrong value", [{"key": "dedicated", "value": "cpu"}], ("node(s) had untolerated taint(s)",)),
    ("wrong effect", [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
     ("node(s) had untolerated taint(s)",)),
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


def test_taint_prescore_never_skips_and_score_agrees_without_it() -> None:
    # Upstream's PreScore (taint_toleration.go) always succeeds: a pod without tolerations is
    # still scored. Score called without PreScore (explain) gives the same numbers.
    from tests.builders import setup
    soft = [{"key": "a", "value": "1", "effect": "PreferNoSchedule"}]
    nodes = [node("n0"), node("n1", taints=soft)]
    for p in (pod("p"), pod("q", spec={"tolerations": [{"key": "a", "operator": "Exists"}]})):
        snap, state, rows = setup(nodes, [])
        assert TT.pre_score(state, p, snap, rows).is_success()
        with_state = TT.score_nodes(state, p, snap, rows).tolist()
        snap, state, rows = setup(nodes, [])
        assert TT.score_nodes(state, p, snap, rows).tolist() == with_state


# --- taint_toleration_test.go --------------------------------------------------------------------------
# The Gt/Lt toleration cases are left out: they need the TaintTolerationComparisonOperators feature
# gate, alpha and off by default (an API server refuses those operators without it).

def tainted(name: str, *taints: tuple[str, str, str]) -> Node:
    return node(name, taints=[{"key": k, "value": v, "effect": e} for k, v, e in taints])


def tolerating(*tolerations: dict[str, str]) -> Pod:
    return pod("pod1", None, None, spec={"containers": [], "tolerations": list(tolerations)})


def tol(key: str, value: str = "", effect: str = "", operator: str = "") -> dict[str, str]:
    t = {"key": key}
    for k, v in (("value", value), ("effect", effect), ("operator", operator)):
        if v:
            t[k] = v
    return t


PNS = "PreferNoSchedule"

TAINT_SCORE = [
    ("node with taints tolerated by the pod, gets a higher score than those node with intolerable taints",
     tolerating(tol("foo", "bar", PNS, "Equal")),
     [tainted("nodeA", ("foo", "bar", PNS)), tainted("nodeB", ("foo", "blah", PNS))], [100, 0]),
    ("the nodes that all of their taints are tolerated by the pod, get the same score, no matter how many tolerable "
     "taints a node has", tolerating(tol("cpu-type", "arm64", PNS, "Equal"), tol("disk-type", "ssd", PNS, "Equal")),
     [tainted("nodeA"), tainted("nodeB", ("cpu-type", "arm64", PNS)),
      tainted("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS))], [100, 100, 100]),
    ("the more intolerable taints a node has, the lower score it gets.", tolerating(tol("foo", "bar", PNS, "Equal")),
     [tainted("nodeA"), tainted("nodeB", ("cpu-type", "arm64", PNS)),
      tainted("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS))], [100, 50, 0]),
    ("only taints and tolerations that have effect PreferNoSchedule are checked by taints-tolerations priority "
     "function", tolerating(tol("cpu-type", "arm64", "NoSchedule", "Equal"), tol("disk-type", "ssd", "NoSchedule", "Equal")),
     [tainted("nodeA"), tainted("nodeB", ("cpu-type", "arm64", "NoSchedule")),
      tainted("nodeC", ("cpu-type", "arm64", PNS), ("disk-type", "ssd", PNS))], [100, 100, 0]),
    ("Default behaviour No taints and tolerations, lands on node with no taints", tolerating(),
     [tainted("nodeA"), tainted("nodeB", ("cpu-type", "arm64", PNS))], [100, 0]),
]


@pytest.mark.parametrize(("name", "p", "nodes", "want"), TAINT_SCORE, ids=[c[0][:80] for c in TAINT_SCORE])
def test_taint_toleration_score(name: str, p: Pod, nodes: list[Node], want: list[int]) -> None:
    assert run_score(TT, p, nodes) == want, name


UNTOLERATED = "node(s) had untolerated taint(s)"
TAINT_FILTER = [
    ("A pod having no tolerations can't be scheduled onto a node with nonempty taints", tolerating(),
     tainted("nodeA", ("dedicated", "user1", "NoSchedule")), UNTOLERATED),
    ("A pod which can be scheduled on a dedicated node assigned to user1 with effect NoSchedule",
     tolerating(tol("dedicated", "user1", "NoSchedule")), tainted("nodeA", ("dedicated", "user1", "NoSchedule")), None),
    ("A pod which can't be scheduled on a dedicated node assigned to user2 with effect NoSchedule",
     tolerating(tol("dedicated", "user2", "NoSchedule", "Equal")), tainted("nodeA", ("dedicated", "user1", "NoSchedule")),
     UNTOLERATED),
    ("A pod can be scheduled onto the node, with a toleration uses operator Exists that tolerates the taints on the "
     "node", tolerating(tol("foo", "", "NoSchedule", "Exists")), tainted("nodeA", ("foo", "bar", "NoSchedule")), None),
    ("A pod has multiple tolerations, node has multiple taints, all the taints are tolerated, pod can be scheduled "
     "onto the node", tolerating(tol("dedicated", "user2", "NoSchedule", "Equal"), tol("foo", "", "NoSchedule", "Exists")),
     tainted("nodeA", ("dedicated", "user2", "NoSchedule"), ("foo", "bar", "NoSchedule")), None),
    ("A pod has a toleration that keys and values match the taint on the node, but (non-empty) effect doesn't match, "
     "can't be scheduled onto the node", tolerating(tol("foo", "bar", PNS, "Equal")),
     tainted("nodeA", ("foo", "bar", "NoSchedule")), UNTOLERATED),
    ("The pod has a toleration that keys and values match the taint on the node, the effect of toleration is empty, "
     "and the effect of taint is NoSchedule. Pod can be scheduled onto the node", tolerating(tol("foo", "bar", "", "Equal")),
     tainted("nodeA", ("foo", "bar", "NoSchedule")), None),
    ("The pod has a toleration that key and value don't match the taint on the node, but the effect of taint on node "
     "is PreferNoSchedule. Pod can be scheduled onto the node", tolerating(tol("dedicated", "user2", "NoSchedule", "Equal")),
     tainted("nodeA", ("dedicated", "user1", PNS)), None),
    ("The pod has no toleration, but the effect of taint on node is PreferNoSchedule. Pod can be scheduled onto the "
     "node", tolerating(), tainted("nodeA", ("dedicated", "user1", PNS)), None),
]


@pytest.mark.parametrize(("name", "p", "n", "want"), TAINT_FILTER, ids=[c[0][:80] for c in TAINT_FILTER])
def test_taint_toleration_filter(name: str, p: Pod, n: Node, want: str | None) -> None:
    (got,) = run_filter(TT, p, [n])
    assert (None if got is None else got.reasons) == (None if want is None else (want,)), name
    if got is not None:
        assert got.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE"
