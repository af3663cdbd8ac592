"""NodeAffinity, after upstream's ``nodeaffinity/node_affinity_test.go``: our own first cases, then
upstream's tables, then what upstream's code does with node selector terms that do not parse."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.errors import ParseError, PluginArgsError
from scheduler.framework import CycleState, Status
from scheduler.framework.status import SUCCESS, Code
from scheduler.plugins import nodeaffinity
from scheduler.plugins.args import NodeAffinityArgs
from tests.builders import node, pod, reasons, run_filter, run_score, setup

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


# --- upstream's tables ---------------------------------------------------------------------------
# pkg/scheduler/framework/plugins/nodeaffinity/node_affinity_test.go (release 1.35): TestNodeAffinity
# (PreFilter and Filter on one node) and TestNodeAffinityPriority (PreScore, Score, NormalizeScore).
# Each case keeps upstream's name as its id. Upstream's node is unnamed where no case reads its name;
# ours needs one, and "unnamed" (with the builder's hostname label) changes no case's outcome.
SKIP = Status(Code.SKIP)
POD_REASON = Status.unresolvable(nodeaffinity.ERR_REASON_POD)
ENFORCED_REASON = Status.unresolvable(nodeaffinity.ERR_REASON_ENFORCED)
CONFLICT = Status.unresolvable(nodeaffinity.ERR_REASON_CONFLICT)


def expr(key: str, operator: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": operator, **({"values": list(values)} if values else {})}


def name_in(*names: str) -> dict[str, Any]:
    return {"key": "metadata.name", "operator": "In", "values": list(names)}


def term(*exprs: dict[str, Any], fields: Sequence[dict[str, Any]] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if exprs:
        out["matchExpressions"] = list(exprs)
    if fields:
        out["matchFields"] = list(fields)
    return out


def required(*terms: dict[str, Any]) -> dict[str, Any]:
    return {"nodeSelectorTerms": list(terms)}


def affinity(req: dict[str, Any] | None = None, **more: Any) -> dict[str, Any]:
    """A pod spec with ``affinity.nodeAffinity``: ``req`` as its required selector, ``more`` as is."""
    na: dict[str, Any] = dict(more)
    if req is not None:
        na["requiredDuringSchedulingIgnoredDuringExecution"] = req
    return {"affinity": {"nodeAffinity": na}}


@dataclass(frozen=True)
class FilterCase:
    spec: dict[str, Any]
    labels: dict[str, str] = field(default_factory=dict)
    node_name: str = "unnamed"
    want_status: Status | None = None                   # Filter's; None: the node passes
    want_pre_filter_status: Status = SUCCESS
    want_pre_filter_result: frozenset[str] | None = None
    added_affinity: dict[str, Any] | None = None
    run_pre_filter: bool = True


def case(name: str, **kw: Any) -> Any:
    return pytest.param(FilterCase(**kw), id=name)


TEST_NODE_AFFINITY = [
    case("missing labels", spec={"nodeSelector": {"foo": "bar"}}, want_status=POD_REASON),
    case("same labels", spec={"nodeSelector": {"foo": "bar"}}, labels={"foo": "bar"}),
    case("node labels are superset", spec={"nodeSelector": {"foo": "bar"}}, labels={"foo": "bar", "baz": "blah"}),
    case("node labels are subset", spec={"nodeSelector": {"foo": "bar", "baz": "blah"}}, labels={"foo": "bar"},
         want_status=POD_REASON),
    case("Pod with matchExpressions using In operator that matches the existing node",
         spec=affinity(required(term(expr("foo", "In", "bar", "value2")))), labels={"foo": "bar"}),
    case("Pod with matchExpressions using Gt operator that matches the existing node",
         spec=affinity(required(term(expr("kernel-version", "Gt", "0204")))), labels={"kernel-version": "0206"}),
    case("Pod with matchExpressions using NotIn operator that matches the existing node",
         spec=affinity(required(term(expr("mem-type", "NotIn", "DDR", "DDR2")))), labels={"mem-type": "DDR3"}),
    case("Pod with matchExpressions using Exists operator that matches the existing node",
         spec=affinity(required(term(expr("GPU", "Exists")))), labels={"GPU": "NVIDIA-GRID-K1"}),
    case("Pod with affinity that don't match node's labels won't schedule onto the node",
         spec=affinity(required(term(expr("foo", "In", "value1", "value2")))), labels={"foo": "bar"},
         want_status=POD_REASON),
    case("Pod with empty MatchExpressions is not a valid value will match no objects and won't schedule onto the node",
         spec=affinity(required({"matchExpressions": []})), labels={"foo": "bar"}, want_status=POD_REASON),
    case("Pod with no Affinity will schedule onto a node", spec={}, labels={"foo": "bar"}, want_pre_filter_status=SKIP),
    case("Pod with Affinity but nil NodeSelector will schedule onto a node", spec=affinity(), labels={"foo": "bar"},
         want_pre_filter_status=SKIP),
    case("Pod with multiple matchExpressions ANDed that matches the existing node",
         spec=affinity(required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
         labels={"GPU": "NVIDIA-GRID-K1"}),
    case("Pod with multiple matchExpressions ANDed that doesn't match the existing node",
         spec=affinity(required(term(expr("GPU", "Exists"), expr("GPU", "In", "AMD", "INTER")))),
         labels={"GPU": "NVIDIA-GRID-K1"}, want_status=POD_REASON),
    case("Pod with multiple NodeSelectorTerms ORed in affinity, matches the node's labels and will schedule onto "
         "the node",
         spec=affinity(required(term(expr("foo", "In", "bar", "value2")), term(expr("diffkey", "In", "wrong", "value2")))),
         labels={"foo": "bar"}),
    case("Pod with an Affinity and a PodSpec.NodeSelector(the old thing that we are deprecating) both are "
         "satisfied, will schedule onto the node",
         spec={"nodeSelector": {"foo": "bar"}, **affinity(required(term(expr("foo", "Exists"))))},
         labels={"foo": "bar"}),
    case("Pod with an Affinity matches node's labels but the PodSpec.NodeSelector(the old thing that we are "
         "deprecating) is not satisfied, won't schedule onto the node",
         spec={"nodeSelector": {"foo": "bar"}, **affinity(required(term(expr("foo", "Exists"))))},
         labels={"foo": "barrrrrr"}, want_status=POD_REASON),
    case("Pod with an invalid value in Affinity term won't be scheduled onto the node",
         spec=affinity(required(term(expr("foo", "NotIn", "invalid value: ___@#$%^")))), labels={"foo": "bar"},
         want_status=POD_REASON),
    case("Pod with matchFields using In operator that matches the existing node",
         spec=affinity(required(term(fields=[name_in("node1")]))), node_name="node1",
         want_pre_filter_result=frozenset({"node1"})),
    case("Pod with matchFields using In operator that does not match the existing node",
         spec=affinity(required(term(fields=[name_in("node1")]))), node_name="node2", want_status=POD_REASON,
         want_pre_filter_result=frozenset({"node1"})),
    case("Pod with two terms: matchFields does not match, but matchExpressions matches",
         spec=affinity(required(term(fields=[name_in("node1"), name_in("node2")]), term(expr("foo", "In", "bar")))),
         node_name="node2", labels={"foo": "bar"}),
    case("Pod with one term: matchFields does not match, but matchExpressions matches",
         spec=affinity(required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
         node_name="node2", labels={"foo": "bar"}, want_pre_filter_result=frozenset({"node1"}),
         want_status=POD_REASON),
    case("Pod with one term: both matchFields and matchExpressions match",
         spec=affinity(required(term(expr("foo", "In", "bar"), fields=[name_in("node1")]))),
         node_name="node1", labels={"foo": "bar"}, want_pre_filter_result=frozenset({"node1"})),
    case("Pod with two terms: both matchFields and matchExpressions do not match",
         spec=affinity(required(term(fields=[name_in("node1")]), term(expr("foo", "In", "not-match-to-bar")))),
         node_name="node2", labels={"foo": "bar"}, want_status=POD_REASON),
    case("Pod with two terms of node.Name affinity",
         spec=affinity(required(term(fields=[name_in("node1")]), term(fields=[name_in("node2")]))),
         node_name="node2", want_pre_filter_result=frozenset({"node1", "node2"})),
    case("Pod with two conflicting mach field requirements",
         spec=affinity(required(term(fields=[name_in("node1"), name_in("node2")]))),
         node_name="node2", labels={"foo": "bar"}, want_pre_filter_status=CONFLICT, want_status=POD_REASON),
    case("Matches added affinity and Pod's node affinity",
         spec=affinity(required(term(expr("zone", "In", "foo")))), node_name="node2", labels={"zone": "foo"},
         added_affinity={"requiredDuringSchedulingIgnoredDuringExecution": required(term(fields=[name_in("node2")]))}),
    case("Matches added affinity but not Pod's node affinity",
         spec=affinity(required(term(expr("zone", "In", "bar")))), node_name="node2", labels={"zone": "foo"},
         added_affinity={"requiredDuringSchedulingIgnoredDuringExecution": required(term(fields=[name_in("node2")]))},
         want_status=POD_REASON),
    case("Doesn't match added affinity", spec={}, node_name="node2", labels={"zone": "foo"},
         added_affinity={"requiredDuringSchedulingIgnoredDuringExecution": required(term(expr("zone", "In", "bar")))},
         want_status=ENFORCED_REASON),
    case("Matches node selector correctly even if PreFilter is not called", spec={"nodeSelector": {"foo": "bar"}},
         labels={"foo": "bar", "baz": "blah"}, run_pre_filter=False),
    case("Matches node affinity correctly even if PreFilter is not called",
         spec=affinity(required(term(expr("GPU", "Exists"), expr("GPU", "NotIn", "AMD", "INTER")))),
         labels={"GPU": "NVIDIA-GRID-K1"}, run_pre_filter=False),
]

# staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go,
# TestPodMatchesNodeSelectorAndAffinityTerms: the cases TestNodeAffinity does not already have.
# Upstream's PreFilter narrows nothing for a selector without terms (its loop never runs).
TEST_POD_MATCHES = [
    case("Pod with a nil []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto the "
         "node", spec=affinity({"nodeSelectorTerms": None}), labels={"foo": "bar"}, want_status=POD_REASON),
    case("Pod with an empty []NodeSelectorTerm in affinity, can't match the node's labels and won't schedule onto "
         "the node", spec=affinity(required()), labels={"foo": "bar"}, want_status=POD_REASON),
]


def _filter_case(c: FilterCase) -> None:
    plugin = nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity=c.added_affinity))
    p = pod("p", spec=c.spec)
    snap, state, rows = setup([node(c.node_name, labels=c.labels)], [])
    if c.run_pre_filter:
        result, status = plugin.pre_filter(state, p, snap)
        assert status == c.want_pre_filter_status
        assert (None if result is None else result.node_names) == c.want_pre_filter_result
    # Upstream's table runs Filter even after PreFilter rejected the pod.
    v = plugin.filter_nodes(state, p, snap, rows)
    got = None if not v.failed[0] else v.statuses[0 if v.status_ids is None else int(v.status_ids[0])]
    assert got == c.want_status


@pytest.mark.parametrize("c", TEST_NODE_AFFINITY)
def test_upstream_node_affinity(c: FilterCase) -> None:
    """node_affinity_test.go, TestNodeAffinity."""
    _filter_case(c)


@pytest.mark.parametrize("c", TEST_POD_MATCHES)
def test_upstream_pod_matches_node_selector_and_affinity_terms(c: FilterCase) -> None:
    """nodeaffinity_test.go (component-helpers), TestPodMatchesNodeSelectorAndAffinityTerms."""
    _filter_case(c)


LABEL1 = {"foo": "bar"}
LABEL2 = {"key": "value"}
LABEL3 = {"az": "az1"}
LABEL4 = {"abc": "az11", "def": "az22"}
LABEL5 = {"foo": "bar", "key": "value", "az": "az1"}
AFFINITY1 = {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": term(expr("foo", "In", "bar"))}]}
AFFINITY2 = {"preferredDuringSchedulingIgnoredDuringExecution": [
    {"weight": 2, "preference": term(expr("foo", "In", "bar"))},
    {"weight": 4, "preference": term(expr("key", "In", "value"))},
    {"weight": 5, "preference": term(expr("foo", "In", "bar"), expr("key", "In", "value"), expr("az", "In", "az1"))}]}
BROKEN_KEY_MESSAGE = (
    "[0].matchExpressions[0].key: Invalid value: \"invalid key\": name part must consist of alphanumeric characters, "
    "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
    "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


@dataclass(frozen=True)
class ScoreCase:
    spec: dict[str, Any]
    nodes: tuple[tuple[str, dict[str, str]], ...]
    expected: tuple[int, ...] = ()
    added_affinity: dict[str, Any] | None = None
    run_pre_score: bool = False
    want_pre_score_status: Status = SUCCESS


def score_case(name: str, **kw: Any) -> Any:
    return pytest.param(ScoreCase(**kw), id=name)


TEST_NODE_AFFINITY_PRIORITY = [
    score_case("all nodes are same priority as NodeAffinity is nil", spec={},
               nodes=(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)), expected=(0, 0, 0)),
    score_case("Skip is returned in PreScore when NodeAffinity is nil", spec={}, nodes=(("node1", LABEL1),),
               run_pre_score=True, want_pre_score_status=SKIP),
    score_case("PreScore returns error when an incoming Pod has a broken affinity",
               spec=affinity(preferredDuringSchedulingIgnoredDuringExecution=[
                   {"weight": 2, "preference": term(expr("invalid key", "In", "bar"))}]),
               nodes=(("node1", LABEL1),), run_pre_score=True,
               want_pre_score_status=Status.as_error(ParseError(BROKEN_KEY_MESSAGE))),
    score_case("no node matches preferred scheduling requirements in NodeAffinity of pod so all nodes' priority is "
               "zero", spec=affinity(**AFFINITY1), nodes=(("node1", LABEL4), ("node2", LABEL2), ("node3", LABEL3)),
               expected=(0, 0, 0), run_pre_score=True),
    score_case("only node1 matches the preferred scheduling requirements of pod", spec=affinity(**AFFINITY1),
               nodes=(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL3)), expected=(100, 0, 0),
               run_pre_score=True),
    score_case("all nodes matches the preferred scheduling requirements of pod but with different priorities ",
               spec=affinity(**AFFINITY2), nodes=(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)),
               expected=(18, 100, 36), run_pre_score=True),
    score_case("added affinity", spec={}, nodes=(("node1", LABEL1), ("node2", LABEL2)), expected=(100, 0),
               added_affinity=AFFINITY1, run_pre_score=True),
    score_case("added affinity and pod has default affinity", spec=affinity(**AFFINITY1),
               nodes=(("node1", LABEL1), ("node2", LABEL2), ("node3", LABEL5)), expected=(40, 60, 100),
               added_affinity={"preferredDuringSchedulingIgnoredDuringExecution": [
                   {"weight": 3, "preference": term(expr("key", "In", "value"))}]},
               run_pre_score=True),
    score_case("calculate the priorities correctly even if PreScore is not called", spec=affinity(**AFFINITY2),
               nodes=(("node1", LABEL1), ("node5", LABEL5), ("node2", LABEL2)), expected=(18, 100, 36),
               run_pre_score=True),
]


@pytest.mark.parametrize("c", TEST_NODE_AFFINITY_PRIORITY)
def test_upstream_node_affinity_priority(c: ScoreCase) -> None:
    """node_affinity_test.go, TestNodeAffinityPriority. Like upstream, a PreScore status is compared
    by code and message, and a PreScore that does not succeed ends the case."""
    plugin = nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity=c.added_affinity))
    p = pod("p", spec=c.spec)
    snap, state, rows = setup([node(n, labels=labels) for n, labels in c.nodes], [])
    if c.run_pre_score:
        s = plugin.pre_score(state, p, snap, rows)
        want = c.want_pre_score_status
        assert (s.code, s.message()) == (want.code, want.message())
        if not s.is_success():
            return
    scores = plugin.score_nodes(state, p, snap, rows)
    assert plugin.normalize_score(state, p, scores).is_success()
    assert tuple(scores.tolist()) == c.expected


# pkg/scheduler/apis/config/validation/validation_pluginargs_test.go, TestValidateNodeAffinityArgs: the
# plugin refuses the args with every error, each at its path (upstream compares type and field only).


@pytest.mark.parametrize(("added", "want_fields"), [
    pytest.param(None, [], id="empty"),
    pytest.param({"requiredDuringSchedulingIgnoredDuringExecution": required(term(expr("label-1", "In", "label-1-val"))),
                  "preferredDuringSchedulingIgnoredDuringExecution": [
                      {"weight": 1, "preference": term(fields=[name_in("node-1")])}]},
                 [], id="valid added affinity"),
    pytest.param({"requiredDuringSchedulingIgnoredDuringExecution": required(
                      term(expr("invalid/label/key", "In", "label-1-val"))),
                  "preferredDuringSchedulingIgnoredDuringExecution": [
                      {"weight": 1, "preference": term(fields=[name_in("node-1", "node-2")])}]},
                 ["addedAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
                  ".matchExpressions[0].key",
                  "addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchFields[0].values"],
                 id="invalid added affinity"),
])
def test_upstream_validate_node_affinity_args(added: dict[str, Any] | None, want_fields: list[str]) -> None:
    if not want_fields:
        nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity=added))
        return
    with pytest.raises(PluginArgsError) as e:
        nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity=added))
    message = str(e.value)
    assert message.startswith("[") and message.endswith("]"), message      # an aggregate of several
    at = [message.index(f"{f}: Invalid value: ") for f in want_fields]
    assert at == sorted(at), message


# --- beyond upstream's tables: what upstream's code does with terms that do not parse -------------
def test_a_broken_required_term_is_skipped_and_another_term_still_matches() -> None:
    """NewLazyErrorNodeSelector: a term with a parse error matches nothing, the others still count,
    and Filter reports no error (a Gt bound that is no integer reaches the scheduler: kube-apiserver
    checks only that there is one bound)."""
    spec = affinity(required(term(expr("gen", "Gt", "two")), term(expr("zone", "In", "z1"))))
    got = run_filter(NA, pod("p", spec=spec), [node("a", labels={"zone": "z1", "gen": "3"}),
                                                node("b", labels={"zone": "z2", "gen": "3"})])
    assert reasons(got) == [None, (nodeaffinity.ERR_REASON_POD,)]
    only_broken = affinity(required(term(expr("zone", "In", "z 1"))))   # a value that is no label value
    assert reasons(run_filter(NA, pod("p", spec=only_broken), [node("a", labels={"zone": "z 1"})])) == [
        (nodeaffinity.ERR_REASON_POD,)]


def test_prefilter_pins_the_names_of_a_term_that_does_not_parse() -> None:
    """Upstream's PreFilter reads the raw term: two values under one matchFields requirement (which
    the field selector refuses, "must have one element") still narrow to those names, and Filter then
    rejects them, since the term matches nothing."""
    p = pod("p", spec=affinity(required(term(fields=[name_in("node1", "node2")]))))
    snap, state, rows = setup([node("node1"), node("node2"), node("node3")], [])
    result, status = NA.pre_filter(state, p, snap)
    assert status == SUCCESS and result is not None and result.node_names == frozenset({"node1", "node2"})
    assert NA.filter_nodes(state, p, snap, rows).failed.tolist() == [True, True, True]


def test_a_preferred_value_that_is_no_label_value_is_a_prescore_error_and_a_score_error() -> None:
    """NewPreferredSchedulingTerms checks values too; every bad term's errors make one aggregate
    message. Score without PreScore (upstream's fallback parse) fails with the same message."""
    spec = affinity(preferredDuringSchedulingIgnoredDuringExecution=[
        {"weight": 1, "preference": term(expr("zone", "In", "z1"))},
        {"weight": 2, "preference": term(expr("zone", "In", "z 1"))},
        {"weight": 3, "preference": term(fields=[name_in("a", "b")])}])
    p = pod("p", spec=spec)
    snap, state, rows = setup([node("a", labels={"zone": "z1"})], [])
    s = NA.pre_score(state, p, snap, rows)
    assert s.code == Code.ERROR
    assert s.message().startswith('[[1].matchExpressions[0].values[0][zone]: Invalid value: "z 1": a valid label '
                                  "must be an empty string")
    assert s.message().endswith(', [2].matchFields[0].values: Invalid value: ["a","b"]: must have one element]')
    with pytest.raises(ParseError) as e:
        NA.score_nodes(CycleState(), p, snap, rows)
    assert str(e.value) == s.message()
