"""Selector requirements, after upstream's tables:

* ``apimachinery/pkg/api/validate/content/kube_test.go``: TestIsLabelKey, TestIsLabelValue;
* ``apimachinery/pkg/labels/selector_test.go``: TestRequirementConstructor;
* ``apimachinery/pkg/apis/meta/v1/helpers_test.go``: TestLabelSelectorAsSelector;
* ``component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity_test.go``: TestNodeSelectorMatch,
  TestPreferredSchedulingTermsScore, TestNodeSelectorRequirementsAsSelector.

Upstream's case names are the ids; where upstream's table has none, the id is its key or input.
Where upstream compares an error's type, field and bad value but not its detail, so do these tests
(the bad value as ``field.Error`` renders it: ``Invalid value: []``); details are compared where
upstream spells them out.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.errors import ParseError
from scheduler.model.selectors import (
    FieldError,
    LabelSelector,
    Requirement,
    aggregate_message,
    label_key_errors,
    label_value_errors,
    parse_label_selector,
    parse_node_selector,
    parse_node_selector_term,
    requirement_errors,
)

NAME_PART_MSG = ("name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                 "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                 "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")


# --- content/kube_test.go -------------------------------------------------------------------------
@pytest.mark.parametrize("key", [
    "simple", "now-with-dashes", "1-starts-with-num", "1234", "simple/simple", "now-with-dashes/simple",
    "now-with-dashes/now-with-dashes", "now.with.dots/simple", "now-with.dashes-and.dots/simple", "1-num.2-num/3-num",
    "1234/5678", "1.2.3.4/5678", "Uppercase_Is_OK_123", "example.com/Uppercase_Is_OK_123", "requests.storage-foo",
    "a" * 63, "a" * 253 + "/" + "b" * 63,
])
def test_is_label_key_success(key: str) -> None:
    assert label_key_errors(key) == []


@pytest.mark.parametrize("key", [
    "nospecialchars%^=@", "cantendwithadash-", "-cantstartwithadash-", "only/one/slash", "Example.com/abc",
    "example_com/abc", "example.com/", "/simple", "a" * 64, "a" * 254 + "/abc",
])
def test_is_label_key_error(key: str) -> None:
    assert label_key_errors(key)


@pytest.mark.parametrize("value", ["simple", "now-with-dashes", "1-starts-with-num", "end-with-num-1", "1234",
                                   "a" * 63, ""])
def test_is_label_value_success(value: str) -> None:
    assert label_value_errors(value) == []


@pytest.mark.parametrize("value", [
    "nospecialchars%^=@", "Tama-nui-te-rā.is.Māori.sun", "\\backslashes\\are\\bad", "-starts-with-dash",
    "ends-with-dash-", ".starts.with.dot", "ends.with.dot.", "a" * 64,
])
def test_is_label_value_error(value: str) -> None:
    assert label_value_errors(value)


def test_label_key_messages_are_upstreams() -> None:
    """The texts content.IsLabelKey builds (the lengths are in bytes, as Go's len())."""
    assert label_key_errors("invalid key") == [NAME_PART_MSG]
    assert label_key_errors("") == ["name part must be non-empty", NAME_PART_MSG]
    assert label_key_errors("example.com/") == ["name part must be non-empty", NAME_PART_MSG]
    assert label_key_errors("/simple") == ["prefix part must be non-empty"]
    assert label_key_errors("a" * 64) == ["name part must be no more than 63 bytes"]
    assert label_key_errors("é" * 32) == ["name part must be no more than 63 bytes", NAME_PART_MSG]
    assert label_key_errors("Example.com/abc") == [
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
        "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"]
    assert label_key_errors("only/one/slash") == [
        "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
        "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
        "(e.g. 'example.com/MyName')"]
    assert label_value_errors("a" * 64) == ["must be no more than 63 bytes"]


# --- labels/selector_test.go: TestRequirementConstructor -------------------------------------------
# (key, operator, values, want: [(field, bad value as rendered)]). Upstream's values are a sorted
# string set, so an absent one is an empty list. Its "x18" case (an operator outside labels'
# selection.Operator set) has no counterpart: callers map the API's operators first (see the term
# and selector tables below for an unsupported operator).
@pytest.mark.parametrize(("key", "op", "values", "want"), [
    pytest.param("x1", "In", [], [("values", "[]")], id="x1"),
    pytest.param("x2", "NotIn", [], [("values", "[]")], id="x2"),
    pytest.param("x3", "In", ["foo"], [], id="x3"),
    pytest.param("x4", "NotIn", ["foo"], [], id="x4"),
    pytest.param("x5", "Equals", ["bar", "foo"], [("values", '["bar","foo"]')], id="x5"),
    pytest.param("x6", "Exists", [], [], id="x6"),
    pytest.param("x7", "DoesNotExist", [], [], id="x7"),
    pytest.param("x8", "Exists", ["foo"], [("values", '["foo"]')], id="x8"),
    pytest.param("x9", "In", ["bar"], [], id="x9"),
    pytest.param("x10", "In", ["bar"], [], id="x10"),
    pytest.param("x11", "Gt", ["1"], [], id="x11"),
    pytest.param("x12", "Lt", ["6"], [], id="x12"),
    pytest.param("x13", "Gt", [], [("values", "[]")], id="x13"),
    pytest.param("x14", "Gt", ["bar"], [("values[0]", '"bar"')], id="x14"),
    pytest.param("x15", "Lt", ["bar"], [("values[0]", '"bar"')], id="x15"),
    pytest.param("a" * 254, "Exists", [], [("key", '"' + "a" * 254 + '"')], id="254-byte key"),
    pytest.param("x16", "Equals", ["a" * 254], [("values[0][x16]", '"' + "a" * 254 + '"')], id="x16"),
    pytest.param("x17", "Equals", ["a b"], [("values[0][x17]", '"a b"')], id="x17"),
])
def test_requirement_constructor(key: str, op: str, values: list[str], want: list[tuple[str, str]]) -> None:
    errs = requirement_errors(key, op, values)
    assert [(e.path, e.problem.split(": ", 2)[1]) for e in errs] == want
    assert all(e.problem.startswith("Invalid value: ") for e in errs)


def test_requirement_details_are_upstreams() -> None:
    """NewRequirement's details; a nil values slice shows as ``null``; a Gt bound is a label value too."""
    assert [str(e) for e in requirement_errors("k", "In", None)] == [
        "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty"]
    assert [str(e) for e in requirement_errors("k", "DoesNotExist", ["a"])] == [
        'values: Invalid value: ["a"]: values set must be empty for exists and does not exist']
    assert [str(e) for e in requirement_errors("k", "Lt", ["1", "2"])] == [
        "values: Invalid value: [\"1\",\"2\"]: for 'Gt', 'Lt' operators, exactly one value is required"]
    assert [e.path for e in requirement_errors("k", "Gt", ["-1"])] == ["values[0][k]"]
    assert [e.path for e in requirement_errors("k", "Gt", ["9" * 400])] == ["values[0]", "values[0][k]"]
    assert requirement_errors("k", "Gt", ["0000000000000000000000042"]) == ()      # ParseInt: leading zeros


# --- meta/v1/helpers_test.go: TestLabelSelectorAsSelector ------------------------------------------
@pytest.mark.parametrize(("raw", "want"), [
    pytest.param({}, LabelSelector(), id="&LabelSelector{}: Everything"),
    pytest.param({"matchLabels": {"foo": "bar"}}, LabelSelector((Requirement("foo", "In", frozenset({"bar"})),)),
                 id="foo=bar"),
    pytest.param({"matchExpressions": [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]},
                 LabelSelector((Requirement("baz", "In", frozenset({"qux", "norf"})),)), id="baz in (norf,qux)"),
    pytest.param({"matchLabels": {"foo": "bar"},
                  "matchExpressions": [{"key": "baz", "operator": "In", "values": ["qux", "norf"]}]},
                 LabelSelector((Requirement("baz", "In", frozenset({"qux", "norf"})),
                                Requirement("foo", "In", frozenset({"bar"})))), id="baz in (norf,qux),foo=bar"),
    pytest.param({"matchExpressions": [{"key": "baz", "operator": "Exists", "values": ["qux", "norf"]}]}, None,
                 id="Exists with values: error"),
])
def test_label_selector_as_selector(raw: dict[str, Any], want: LabelSelector | None) -> None:
    if want is None:
        with pytest.raises(ParseError):
            parse_label_selector(raw, "spec.selector")
    else:
        assert parse_label_selector(raw, "spec.selector") == want


@pytest.mark.parametrize(("raw", "field", "problem"), [
    ({"matchLabels": {"invalid key": "v"}}, "spec.selector.matchLabels",
     f'Invalid value: "invalid key": {NAME_PART_MSG}'),
    ({"matchLabels": {"k": "a b"}}, "spec.selector.matchLabels.k", 'Invalid value: "a b": a valid label must be'),
    ({"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["1"]}]}, "spec.selector.matchExpressions[0]"
     ".operator", '"Gt" is not a valid label selector operator'),
    ({"matchExpressions": [{"key": "k", "operator": "In"}]}, "spec.selector.matchExpressions[0].values",
     "Invalid value: null: for 'in', 'notin' operators, values set can't be empty"),
    ({"matchExpressions": [{"operator": "Exists"}]}, "spec.selector.matchExpressions[0].key",
     'Invalid value: "": name part must be non-empty; '),
    ({"matchExpressions": [{"key": "k", "operator": "In", "values": ["ok", "-no"]}]},
     "spec.selector.matchExpressions[0].values[1][k]", 'Invalid value: "-no": a valid label must be'),
])
def test_a_label_selector_with_a_bad_requirement_is_refused_at_its_field(raw: dict[str, Any], field: str,
                                                                         problem: str) -> None:
    """LabelSelectorAsSelector returns the first requirement's error; the pod (or PDB, or owner)
    that carries the selector cannot be read, and the error names the field."""
    with pytest.raises(ParseError) as e:
        parse_label_selector(raw, "spec.selector")
    assert e.value.field == field and e.value.problem.startswith(problem), str(e.value)


# --- component-helpers nodeaffinity_test.go --------------------------------------------------------
def _req(key: str, op: str, *values: str) -> dict[str, Any]:
    return {"key": key, "operator": op, "values": list(values)}


INVALID_TERMS = [
    {"matchFields": [_req("metadata.name", "In", "host_1", "host_2")]},
    {"matchExpressions": [_req("label_1", "In", "label_1_val")], "matchFields": [_req("metadata.name", "In", "host_1")]},
    {"matchExpressions": [_req("invalid key", "In", "label_value")]},
]


def test_node_selector_match_invalid_field_selector_and_label_selector() -> None:
    """TestNodeSelectorMatch, "invalid field selector and label selector": NewNodeSelector's errors."""
    ns = parse_node_selector({"nodeSelectorTerms": INVALID_TERMS}, "x")
    errs = ns.parse_errors()
    assert [e.path for e in errs] == ["nodeSelectorTerms[0].matchFields[0].values",
                                      "nodeSelectorTerms[2].matchExpressions[0].key"]
    assert errs[0].problem == 'Invalid value: ["host_1","host_2"]: must have one element'
    assert errs[1].problem == f'Invalid value: "invalid key": {NAME_PART_MSG}'
    # Lazily, the valid term still matches (NewLazyErrorNodeSelector); the others match nothing.
    assert ns.matches({"label_1": "label_1_val"}, "host_1")
    assert not ns.matches({}, "host_1")


@pytest.mark.parametrize(("terms", "name", "labels", "want"), [
    pytest.param([{"matchExpressions": [_req("label_1", "In", "label_1_val")],
                   "matchFields": [_req("metadata.name", "In", "host_1")]}], "host_1", {}, False,
                 id="node matches field selector, but not labels"),
    pytest.param([{"matchExpressions": [_req("label_1", "In", "label_1_val")],
                   "matchFields": [_req("metadata.name", "In", "host_1")]}], "host_1", {"label_1": "label_1_val"}, True,
                 id="node matches field selector and label selector"),
    pytest.param([{"matchExpressions": [_req("label_1", "In", "label_1_val")]},
                  {"matchFields": [_req("metadata.name", "In", "host_1")]}], "host_1", {}, True,
                 id="second term matches"),
])
def test_node_selector_match(terms: list[dict[str, Any]], name: str, labels: dict[str, str], want: bool) -> None:
    """TestNodeSelectorMatch ("nil node" has no counterpart: a node always exists here)."""
    ns = parse_node_selector({"nodeSelectorTerms": terms}, "x")
    assert ns.parse_errors() == ()
    assert ns.matches(labels, name) is want


def test_preferred_scheduling_terms_score_invalid_field_selector_and_label_selector() -> None:
    """TestPreferredSchedulingTermsScore, "invalid field selector and label selector": the errors of
    every term, under ``[i]``, aggregated. ("invalid field selector but no weight, error not
    reported" has no counterpart: weight 0 is refused where weights are read, the pod and the args.)"""
    terms = [parse_node_selector_term(t, f"x[{i}]") for i, t in enumerate(INVALID_TERMS)]
    errs = [e.under(f"[{i}]") for i, t in enumerate(terms) for e in t.parse_errors]
    assert [e.path for e in errs] == ["[0].matchFields[0].values", "[2].matchExpressions[0].key"]
    assert aggregate_message(errs) == (f"[[0].matchFields[0].values: {errs[0].problem}, "
                                       f"[2].matchExpressions[0].key: {errs[1].problem}]")


def test_preferred_scheduling_terms_score_first_and_third_term_match() -> None:
    """TestPreferredSchedulingTermsScore, "first and third term match": 5 + 11."""
    weighted = [(5, {"matchFields": [_req("metadata.name", "In", "host_1")]}),
                (7, {"matchExpressions": [_req("unknown_label", "In", "unknown_label_val")]}),
                (11, {"matchExpressions": [_req("label_1", "In", "label_1_val")]})]
    terms = [(w, parse_node_selector_term(t, "x")) for w, t in weighted]
    assert sum(w for w, t in terms if t.matches({"label_1": "label_1_val"}, "host_1")) == 16


@pytest.mark.parametrize(("exprs", "want", "error"), [
    pytest.param(None, None, None, id="nil: Nothing"),
    pytest.param([], None, None, id="empty: Nothing"),
    pytest.param([_req("foo", "In", "bar", "baz")], (Requirement("foo", "In", frozenset({"bar", "baz"})),), None,
                 id="foo in (baz,bar)"),
    pytest.param([_req("foo", "Exists", "bar", "baz")], None,
                 FieldError("matchExpressions[0].values", 'Invalid value: ["bar","baz"]: values set must be empty for '
                                                          "exists and does not exist"),
                 id="Exists with values: error"),
    pytest.param([_req("foo", "Gt", "1")], (Requirement("foo", "Gt", frozenset({"1"})),), None, id="foo>1"),
    pytest.param([_req("bar", "Lt", "7")], (Requirement("bar", "Lt", frozenset({"7"})),), None, id="bar<7"),
])
def test_node_selector_requirements_as_selector(exprs: list[dict[str, Any]] | None,
                                                want: tuple[Requirement, ...] | None, error: FieldError | None) -> None:
    """TestNodeSelectorRequirementsAsSelector: no requirements select nothing (a term without any
    matches no node); a bad one is the term's error."""
    t = parse_node_selector_term({"matchExpressions": exprs}, "x")
    assert t.parse_errors == (() if error is None else (error,))
    assert t.match_expressions == (want or ())
    if want is None:
        assert not t.matches({"foo": "bar"}, "n")


# --- what the lazy parse keeps, and what it still refuses -----------------------------------------
def test_an_unsupported_operator_is_the_terms_error_with_upstreams_list() -> None:
    t = parse_node_selector_term({"matchExpressions": [{"key": "k", "operator": "Near"}],
                                  "matchFields": [{"key": "metadata.name", "operator": "Exists"}]}, "x")
    assert [str(e) for e in t.parse_errors] == [
        'matchExpressions[0].operator: Unsupported value: "Near": supported values: "In", "NotIn", "Exists", '
        '"DoesNotExist", "Gt", "Lt"',
        'matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"']
    assert t.node_names is None


def test_node_names_are_read_from_the_raw_term() -> None:
    """The intersection of its ``metadata.name In`` values, whether or not the term parses."""
    ok = parse_node_selector_term({"matchFields": [_req("metadata.name", "In", "a")]}, "x")
    assert ok.node_names == frozenset({"a"}) and not ok.parse_errors
    two = parse_node_selector_term({"matchFields": [_req("metadata.name", "In", "a"),
                                                    _req("metadata.name", "In", "b")]}, "x")
    assert two.node_names == frozenset() and not two.parse_errors
    broken = parse_node_selector_term({"matchFields": [_req("metadata.name", "In", "a", "b")]}, "x")
    assert broken.node_names == frozenset({"a", "b"}) and broken.parse_errors
    assert parse_node_selector_term({"matchFields": [_req("metadata.name", "NotIn", "a")]}, "x").node_names is None


@pytest.mark.parametrize(("raw", "field", "problem"), [
    ({"matchExpressions": [{"key": "k", "operator": "In", "values": "z1"}]}, "x.matchExpressions[0].values",
     "must be a list of strings"),
    ({"matchExpressions": [{"key": 7, "operator": "Exists"}]}, "x.matchExpressions[0].key", "must be a string"),
    ({"matchExpressions": {"key": "k"}}, "x.matchExpressions", "must be a list"),
    ({"matchFields": [_req("metadata.namespace", "In", "a")]}, "x.matchFields[0].key",
     'Invalid value: "metadata.namespace": not a supported field selector key'),
])
def test_what_does_not_decode_is_still_a_parse_error(raw: dict[str, Any], field: str, problem: str) -> None:
    """Wrong JSON types cannot become a Go object at all, so the pod cannot be read; the same for a
    field key other than ``metadata.name``, which kube-apiserver refuses and a Node does not have."""
    with pytest.raises(ParseError) as e:
        parse_node_selector_term(raw, "x")
    assert e.value.field == field and e.value.problem == problem


def test_parsed_node_selectors_are_shared_and_errors_still_name_their_field() -> None:
    """``parse_node_selector`` keeps what it parsed by content (a workload's pods share one); a
    refused selector is never kept, so each caller's error names its own field."""
    from scheduler.model import selectors
    raw = {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]},
                                 {"matchExpressions": [{"key": "zone", "operator": "Bogus", "values": ["a"]}]}]}
    first = selectors.parse_node_selector(raw, "spec.affinity")
    again = selectors.parse_node_selector({**raw}, "elsewhere")
    assert again is first and first.matches({}, "n1") and not first.matches({"zone": "a"}, "n2")
    assert [e.path for e in first.parse_errors()] == ["nodeSelectorTerms[1].matchExpressions[0].operator"]
    bad = {"nodeSelectorTerms": [{"matchFields": [{"key": "spec.x", "operator": "In", "values": ["n1"]}]}]}
    for field in ("spec.affinity", "spec.nodeAffinity.required"):
        with pytest.raises(ParseError) as e:
            selectors.parse_node_selector(bad, field)
        assert e.value.field == f"{field}.nodeSelectorTerms[0].matchFields[0].key"


def test_a_kept_node_selector_costs_its_size_not_orjsons_buffer() -> None:
    """``parse_node_selector`` memoizes by the selector's JSON; the kept key is copied to its exact
    size (orjson's output keeps a 4 KiB buffer: 2,000 kept keys were 4.9 KB each, now under 1 KB)."""
    import tracemalloc

    from scheduler.model import selectors
    selectors._NODE_SELECTORS.clear()
    tracemalloc.start()
    try:
        for i in range(2000):
            selectors.parse_node_selector({"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "k", "operator": "In", "values": [f"v{i}"]}]}]}, "f")
        per_selector = tracemalloc.get_traced_memory()[0] / 2000
    finally:
        tracemalloc.stop()
        selectors._NODE_SELECTORS.clear()
    assert per_selector < 2048, per_selector
