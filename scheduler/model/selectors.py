"""Label selectors and node selectors, as frozen hashable values.

Hashability matters: the hot path caches results keyed by selectors (a selector against a label
column, a toleration set against a taint set), so two pods from one template share one entry.

Semantics follow ``k8s.io/apimachinery/pkg/labels`` and ``component-helpers/scheduling/corev1``:

* ``LabelSelector``: ``{}`` matches everything; the absence of a selector (``None`` where a term
  allows one) matches nothing. Requirements are ANDed.
* ``NodeSelectorTerm``: requirements ANDed; a term with no requirements matches nothing.
* ``NodeSelector``: terms ORed.
* ``Gt``/``Lt`` compare the label's value as an integer; a non-integer label never matches.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.errors import ParseError

__all__ = [
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "Requirement",
    "parse_label_selector",
    "parse_node_selector",
    "parse_node_selector_term",
]

LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
NODE_OPERATORS = LABEL_OPERATORS | {"Gt", "Lt"}


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key <operator> values`` requirement."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        present = self.key in labels
        if op == "In":
            return present and labels[self.key] in self.values
        if op == "NotIn":
            return not present or labels[self.key] not in self.values
        if op == "Exists":
            return present
        if op == "DoesNotExist":
            return not present
        if not present:
            return False
        have = parse_int64(labels[self.key])
        (bound,) = self.values
        want = parse_int64(bound)
        if have is None or want is None:
            return False
        return have > want if op == "Gt" else have < want


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """``metav1.LabelSelector``; ``match_labels`` are folded into ``In`` requirements."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    @property
    def is_empty(self) -> bool:
        return not self.requirements


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """``v1.NodeSelectorTerm``: label requirements plus ``metadata.name`` field requirements."""

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``v1.NodeSelector``: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)


_INT64_TEXT = re.compile(r"[+-]?[0-9]{1,19}")


def parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, as upstream reads ``Gt``/``Lt`` values and node
    labels: ``None`` where Go returns an error (not an integer, or outside int64). Python's ``int``
    would accept ``" 1_0 "`` and numbers of any size."""
    if not _INT64_TEXT.fullmatch(text):
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


def _requirement(raw: Any, field: str, operators: frozenset[str]) -> Requirement:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    key = raw.get("key")
    if not isinstance(key, str) or not key:
        raise ParseError("Required value", field=f"{field}.key")
    op = raw.get("operator")
    if op not in operators:
        raise ParseError(
            f"Unsupported value: {op!r}: supported values: {', '.join(sorted(operators))}",
            field=f"{field}.operator",
        )
    values = raw.get("values") or []
    if not isinstance(values, Sequence) or isinstance(values, str) or not all(
        isinstance(v, str) for v in values
    ):
        raise ParseError("must be a list of strings", field=f"{field}.values")
    if op in ("In", "NotIn") and not values:
        raise ParseError("must be specified when `operator` is 'In' or 'NotIn'", field=f"{field}.values")
    if op in ("Exists", "DoesNotExist") and values:
        raise ParseError(
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'", field=f"{field}.values"
        )
    if op in ("Gt", "Lt"):
        if len(values) != 1:
            raise ParseError("must be specified single value when `operator` is 'Lt' or 'Gt'",
                             field=f"{field}.values")
        if parse_int64(values[0]) is None:
            raise ParseError(f"invalid value {values[0]!r}: must be an integer",
                             field=f"{field}.values[0]")
    return Requirement(key, op, frozenset(values))


def parse_label_selector(raw: Any, field: str) -> LabelSelector:
    """Parse a ``metav1.LabelSelector``; ``{}`` gives the match-everything selector."""
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    reqs: list[Requirement] = []
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise ParseError("must be an object", field=f"{field}.matchLabels")
    for k, v in labels.items():
        if not isinstance(v, str):
            raise ParseError("must be a string", field=f"{field}.matchLabels.{k}")
        reqs.append(Requirement(k, "In", frozenset((v,))))
    for i, r in enumerate(raw.get("matchExpressions") or []):
        reqs.append(_requirement(r, f"{field}.matchExpressions[{i}]", LABEL_OPERATORS))
    # A canonical order, so equal selectors written differently share cache entries.
    reqs.sort(key=lambda r: (r.key, r.operator, sorted(r.values)))
    return LabelSelector(tuple(reqs))


def parse_node_selector_term(raw: Any, field: str) -> NodeSelectorTerm:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    exprs = tuple(
        _requirement(r, f"{field}.matchExpressions[{i}]", NODE_OPERATORS)
        for i, r in enumerate(raw.get("matchExpressions") or [])
    )
    fields = tuple(
        _requirement(r, f"{field}.matchFields[{i}]", NODE_OPERATORS)
        for i, r in enumerate(raw.get("matchFields") or [])
    )
    for i, r in enumerate(fields):
        if r.key != "metadata.name":
            raise ParseError(f"Invalid value: {r.key!r}: not a supported field selector key",
                             field=f"{field}.matchFields[{i}].key")
    return NodeSelectorTerm(exprs, fields)


def parse_node_selector(raw: Any, field: str) -> NodeSelector:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    terms = raw.get("nodeSelectorTerms")
    if not isinstance(terms, Sequence) or not terms:
        raise ParseError("must have at least one node selector term", field=f"{field}.nodeSelectorTerms")
    return NodeSelector(
        tuple(parse_node_selector_term(t, f"{field}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))
    )
