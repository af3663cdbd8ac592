"""TaintToleration, after upstream's ``tainttoleration/taint_toleration_test.go``."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler.framework import ClusterEvent, Code
from scheduler.model import Node, Pod, Toleration
from scheduler.plugins import tainttoleration
from scheduler.queue import SchedulingQueue
from tests.builders import node, node_event, pod, rejected_by, run_filter, run_score

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
# The Gt/Lt toleration cases need the TaintTolerationComparisonOperators feature gate: see below.

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


@pytest.mark.parametrize(("name", "p", "nodes", "want"), [*TAINT_SCORE, ("no taint anywhere", pod("p"),
                                                                        [node("n0"), node("n1")], [100, 100])],
                         ids=[c[0][:80] for c in [*TAINT_SCORE, ("no taint anywhere",)]])
def test_uniform_score_is_every_rows_score(name: str, p: Pod, nodes: list[Node], want: list[int]) -> None:
    """UniformScorePlugin: where TaintToleration says it scores every row the same, Score agrees;
    it says so exactly when no row has an untolerated PreferNoSchedule taint."""
    from tests.builders import setup
    snap, state, rows = setup(nodes, [])
    assert TT.pre_score(state, p, snap, rows).is_success()
    same = TT.uniform_score(state, p, snap)
    scores = TT.score_nodes(state, p, snap, rows).tolist()
    assert (same is not None) == (set(want) == {100}), name
    if same is not None:
        assert scores == [same] * len(rows), name


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


# --- taint_toleration_test.go: the cases of the TaintTolerationComparisonOperators feature gate -------
# Gt/Lt tolerations compare integer taint values only with the TaintTolerationComparisonOperators
# gate (alpha, off by default); without it the API server refuses the operators, and so does our
# parser. The gate-on cases are kept as data and skipped; the gate-off cases of
# TestTaintTolerationFilterWithFeatureGate are run, with the tolerations built directly (as
# upstream's test builds them, past validation): a Gt/Lt toleration must tolerate nothing.
GATE = "needs the TaintTolerationComparisonOperators feature gate (alpha, off by default)"
SLA = "node.kubernetes.io/sla"
PRIO = "node.example.com/priority-level"
NS = "NoSchedule"

TAINT_SCORE_GATED = [
    ("Numeric Gt operator: pod with Gt toleration prefers nodes with matching SLA taint",
     [(SLA, "Gt", "950", PNS)], [("nodeA", SLA, "800"), ("nodeB", SLA, "999")], [0, 100]),
    ("Numeric Lt operator: pod with Lt toleration prefers nodes with matching SLA taint",
     [(SLA, "Lt", "800", PNS)], [("nodeA", SLA, "950"), ("nodeB", SLA, "700")], [0, 100]),
    ("Score ignores parse errors from numeric PreferNoSchedule taint value",
     [(SLA, "Gt", "950", PNS)], [("nodeA", "", ""), ("nodeB", SLA, "high")], [100, 0]),
]


@pytest.mark.skip(reason=GATE)
@pytest.mark.parametrize(("name", "tolerations", "nodes", "want"), TAINT_SCORE_GATED,
                         ids=[c[0][:80] for c in TAINT_SCORE_GATED])
def test_taint_toleration_score_comparison_operators(name: str, tolerations: list[tuple[str, str, str, str]],
                                                     nodes: list[tuple[str, str, str]], want: list[int]) -> None:
    """TestTaintTolerationScore, its enableTaintTolerationComparisonOps cases."""


TAINT_FILTER_GATED = [
    ("Pod with Gt toleration cannot be scheduled on node when taint value is lower than threshold",
     (PRIO, "Gt", "950", NS), (PRIO, "800", NS), UNTOLERATED),
    ("Pod with Gt toleration can be scheduled on node when taint value is higher than threshold",
     (SLA, "Gt", "750", NS), (SLA, "950", NS), None),
    ("Pod with Lt toleration cannot be scheduled on node when taint value is higher than threshold",
     (PRIO, "Lt", "800", NS), (PRIO, "950", NS), UNTOLERATED),
    ("Pod with Lt toleration can be scheduled on node when taint value is lower than threshold",
     (SLA, "Lt", "950", NS), (SLA, "800", NS), None),
    ("Pod with Gt toleration cannot be scheduled on node with non-numeric taint value",
     (SLA, "Gt", "950", NS), (SLA, "high", NS),
     'failed to parse taint value "high" as int64: must be a valid decimal integer in canonical form'),
]


@pytest.mark.skip(reason=GATE)
@pytest.mark.parametrize(("name", "toleration", "taint", "want"), TAINT_FILTER_GATED,
                         ids=[c[0][:80] for c in TAINT_FILTER_GATED])
def test_taint_toleration_filter_comparison_operators(name: str, toleration: tuple[str, str, str, str],
                                                      taint: tuple[str, str, str], want: str | None) -> None:
    """TestTaintTolerationFilter, its enableTaintTolerationComparisonOps cases."""


def _tolerations(*raw: tuple[str, str, str, str]) -> Pod:
    return replace(tolerating(), tolerations=tuple(Toleration(k, op, v, e) for k, op, v, e in raw))


FILTER_WITH_FEATURE_GATE = [
    ("Pod with Gt toleration can be scheduled when feature gate is enabled and taint value is higher", True,
     [(SLA, "Gt", "750", NS)], [(SLA, "950", NS)], None),
    ("Pod with Gt toleration cannot be scheduled when feature gate is disabled", False,
     [(SLA, "Gt", "750", NS)], [(SLA, "950", NS)], UNTOLERATED),
    ("Pod with Lt toleration can be scheduled when feature gate is enabled and taint value is lower", True,
     [(SLA, "Lt", "950", NS)], [(SLA, "800", NS)], None),
    ("Pod with Lt toleration cannot be scheduled when feature gate is disabled", False,
     [(SLA, "Lt", "950", NS)], [(SLA, "800", NS)], UNTOLERATED),
    ("Pod with mixed tolerations (Equal and Gt) when feature gate is disabled - only Equal is honored", False,
     [("dedicated", "Equal", "user1", NS), (SLA, "Gt", "750", NS)], [("dedicated", "user1", NS)], None),
    ("Pod with mixed tolerations, Gt toleration needed but filtered out when feature gate is disabled", False,
     [("dedicated", "Equal", "user1", NS), (SLA, "Gt", "750", NS)],
     [("dedicated", "user1", NS), (SLA, "950", NS)], UNTOLERATED),
]


@pytest.mark.parametrize(("name", "gate", "tolerations", "taints", "want"), [
    pytest.param(*c, marks=[pytest.mark.skip(reason=GATE)] if c[1] else [], id=c[0][:80])
    for c in FILTER_WITH_FEATURE_GATE])
def test_taint_toleration_filter_with_feature_gate(name: str, gate: bool, tolerations: list[tuple[str, str, str, str]],
                                                   taints: list[tuple[str, str, str]], want: str | None) -> None:
    """TestTaintTolerationFilterWithFeatureGate."""
    (got,) = run_filter(TT, _tolerations(*tolerations), [tainted("nodeA", *taints)])
    assert (None if got is None else (got.code, got.reasons)) == (
        None if want is None else (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want,))), name


# --- taint_toleration_test.go TestIsSchedulableAfterNodeChange and
# Test_isSchedulableAfterTargetPodTolerationChange, through the queue: a pod TaintToleration rejected
# waits in unschedulablePods, and the event either moves it (Queue) or not (QueueSkip). A hint that
# fails (an object that is not a node) means Queue, as upstream's error.
def _rejected(p: Pod) -> tuple[SchedulingQueue, str]:
    q, uid = rejected_by(tainttoleration.NAME, p)
    return q, uid


def _node_event(old: object, new: object) -> ClusterEvent:
    event: ClusterEvent = node_event(old, new)
    return event


USER2 = tol("dedicated", "user2", NS, "Equal")
AFTER_NODE_CHANGE = [
    ("backoff-wrong-new-object", tolerating(), None, "not-a-node", True),
    ("backoff-wrong-old-object", tolerating(), "not-a-node", tainted("nodeA", ("dedicated", "user1", NS)), True),
    ("skip-queue-on-untoleratedtaint-node-added", tolerating(USER2), None,
     tainted("nodeA", ("dedicated", "user1", NS)), False),
    ("queue-on-toleratedtaint-node-added", tolerating(USER2), None, tainted("nodeA", ("dedicated", "user2", NS)), True),
    ("skip-unrelated-change", tolerating(USER2), tainted("nodeA", ("dedicated", "user1", NS)),
     tainted("nodeA", ("dedicated", "user1", NS), ("dedicated", "user3", NS)), False),
    ("queue-on-taint-change", tolerating(USER2), tainted("nodeA", ("dedicated", "user1", NS)),
     tainted("nodeA", ("dedicated", "user2", NS)), True),
]


@pytest.mark.parametrize(("name", "p", "old", "new", "queue"), AFTER_NODE_CHANGE, ids=[c[0] for c in AFTER_NODE_CHANGE])
def test_is_schedulable_after_node_change(name: str, p: Pod, old: object, new: object, queue: bool) -> None:
    """TestIsSchedulableAfterNodeChange (the hint also runs on its own: an error for a non-node)."""
    q, uid = _rejected(p)
    assert q.move_all_to_active_or_backoff(_node_event(old, new)) == int(queue), name
    assert (q.where(uid) != "unschedulable") is queue, name
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        with pytest.raises(TypeError):
            tainttoleration.is_schedulable_after_node_change(p, _node_event(old, new))


def test_is_schedulable_after_target_pod_toleration_change() -> None:
    """Test_isSchedulableAfterTargetPodTolerationChange "queue-on-toleration-added": the rejected pod
    itself gains a toleration, and it is queued (our queue's rule for a pending pod's spec change)."""
    p = pod("pod-1", None, None, namespace="ns-1", spec={"containers": []})
    q, uid = _rejected(p)
    q.update(replace(p, tolerations=(Toleration("foo", "Equal", "", NS),)))
    assert q.where(uid) != "unschedulable"
