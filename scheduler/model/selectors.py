"""Label selectors and node selectors, as frozen hashable values.

Hashability matters: the hot path caches results keyed by selectors (a selector against a label
column, a toleration set against a taint set), so two pods from one template share one entry.

Semantics follow ``k8s.io/apimachinery/pkg/labels`` and ``component-helpers/scheduling/corev1``:

* ``LabelSelector``: ``{}`` matches everything; the absence of a selector (``None`` where a term
  allows one) matches nothing. Requirements are ANDed.
* ``NodeSelectorTerm``: requirements ANDed; a term with no requirements matches nothing.
* ``NodeSelector``: terms ORed; one with no terms matches nothing.
* ``Gt``/``Lt`` compare the label's value as an integer; a non-integer label never matches.

Syntax is checked as upstream's ``labels.NewRequirement`` checks it (``requirement_errors``): the
key is a qualified name, every value a label value (even a ``Gt`` bound), and the operator's arity
holds. Where a bad requirement *ends up* differs, as it does upstream:

* a label selector (pod affinity, topology spread, PDBs, owners' selectors) is rejected whole:
  ``parse_label_selector`` raises ``ParseError``, as ``metav1.LabelSelectorAsSelector`` returns
  its first error (kube-apiserver rejects such selectors, so this is a pod the cluster let slip);
* a node selector term is parsed *lazily*, as ``nodeaffinity.NewLazyErrorNodeSelector`` does: a
  term that does not parse keeps its errors (``NodeSelectorTerm.parse_errors``) and matches no node,
  while the selector's other terms still can. kube-apiserver accepts some of these: ``Gt``/``Lt``
  bounds are never checked to be integers, and values in required node affinity are not checked
  for pods that already had bad ones before the check existed. Who reads the errors decides: the
  pod's required terms drop them silently (NodeAffinity's Filter "ignores parsing errors for
  backwards compatibility"), preferred terms turn them into an error Status at PreScore, and the
  plugin's ``addedAffinity`` arg is refused.

Errors are Go's ``field.Error`` texts (``FieldError``), with paths relative to the term, so that the
caller can put them under the path upstream reports them at (``[0].matchExpressions[0].key`` for
the pod's first preferred term).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from scheduler.errors import ParseError

__all__ = [
    "FieldError",
    "LabelSelector",
    "NodeSelector",
    "NodeSelectorTerm",
    "Requirement",
    "aggregate_message",
    "label_key_errors",
    "label_value_errors",
    "parse_label_selector",
    "parse_node_selector",
    "parse_node_selector_term",
    "requirement_errors",
]

LABEL_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
NODE_OPERATORS = LABEL_OPERATORS | {"Gt", "Lt"}
# The orders upstream lists them in its "supported values" messages.
_NODE_OPERATOR_ORDER = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATOR_ORDER = ("In", "NotIn")
OBJECT_NAME_FIELD = "metadata.name"


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


class FieldError(NamedTuple):
    """Go's ``*field.Error``: ``path`` (``matchExpressions[0].key``) and the rest of its text
    (``Invalid value: "a b": ...``). ``str()`` is ``Error()``."""

    path: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}: {self.problem}"

    def under(self, parent: str) -> FieldError:
        """The error at ``parent`` + this path, as ``field.Path.Child`` renders it (a name after an
        index or a name is joined with a dot; the relative paths here always start with a name)."""
        return FieldError(f"{parent}.{self.path}" if parent else self.path, self.problem)


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """``v1.NodeSelectorTerm``: label requirements plus ``metadata.name`` field requirements.

    A term that did not parse has ``parse_errors`` and no requirements, so it matches no node
    wherever it is evaluated (the batched masks included), exactly as upstream's ``match`` returns
    false for it. ``node_names`` is what NodeAffinity's PreFilter reads: the intersection of the
    values of the term's ``metadata.name In`` field requirements, taken from the raw term as
    upstream does (so a term that failed to parse still pins its names), or ``None`` when it has
    none.
    """

    match_expressions: tuple[Requirement, ...] = ()
    match_fields: tuple[Requirement, ...] = ()
    parse_errors: tuple[FieldError, ...] = ()
    node_names: frozenset[str] | None = None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {OBJECT_NAME_FIELD: node_name}
        return all(r.matches(fields) for r in self.match_fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """``v1.NodeSelector``: the terms are ORed."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(t.matches(labels, node_name) for t in self.terms)

    def parse_errors(self) -> tuple[FieldError, ...]:
        """Every term's errors, under ``nodeSelectorTerms[i]`` (``NewNodeSelector``'s error list)."""
        return tuple(e.under(f"nodeSelectorTerms[{i}]") for i, t in enumerate(self.terms) for e in t.parse_errors)


# --- Go's numbers and texts -----------------------------------------------------------------------

_DIGITS = re.compile(r"[+-]?[0-9]+")


def parse_int64(text: str) -> int | None:
    """Go's ``strconv.ParseInt(text, 10, 64)``, as upstream reads ``Gt``/``Lt`` values and node
    labels: ``None`` where Go returns an error (not an integer, or outside int64). Python's ``int``
    would accept ``" 1_0 "`` and numbers of any size; Go accepts any number of leading zeros."""
    if not _DIGITS.fullmatch(text):
        return None
    if len(text.lstrip("+-").lstrip("0")) > 19:   # out of range whatever the digits (and int() stays cheap)
        return None
    n = int(text)
    return n if -(2**63) <= n < 2**63 else None


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable text selectors hold (JSON's escapes agree with Go's there)."""
    return json.dumps(text, ensure_ascii=False)


def _go_json(value: object) -> str:
    """``json.Marshal``, as ``field.Error`` renders a bad value that is not a plain string (a values
    list; ``null`` for an absent one). Go escapes ``<``, ``>`` and ``&`` for HTML."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _invalid(path: str, shown: str, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {shown}: {detail}")


def _not_supported(path: str, value: str, supported: Iterable[str]) -> FieldError:
    # The operator is a named string type (v1.NodeSelectorOperator), so field.Error shows it JSON-encoded.
    return FieldError(path, f"Unsupported value: {_go_json(value)}: supported values: "
                            + ", ".join(_go_quote(s) for s in supported))


def aggregate_message(errors: Iterable[object]) -> str:
    """``errors.NewAggregate(errs).Error()`` over flattened errors: one message alone, several
    deduplicated between brackets, comma-separated."""
    seen: list[str] = []
    for e in errors:
        msg = str(e)
        if msg not in seen:
            seen.append(msg)
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


# --- apimachinery/pkg/api/validate/content: IsLabelKey, IsLabelValue -------------------------------

_LABEL_KEY_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_KEY_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                  "alphanumeric character")
_LABEL_VALUE_FMT = f"({_LABEL_KEY_FMT})?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
                          "or '.', and must start and end with an alphanumeric character")
_LABEL_KEY_RE = re.compile(_LABEL_KEY_FMT)
_LABEL_VALUE_RE = re.compile(_LABEL_VALUE_FMT)
_DNS1123_SUBDOMAIN_RE = re.compile(_DNS1123_SUBDOMAIN_FMT)
_NAME_MAX = 63
_PREFIX_MAX = 253


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    """``content.RegexError``, double spaces and all (``'MyName',  or 'my.name', ...``)."""
    shown = "".join((" or " if i else "") + f"'{e}', " for i, e in enumerate(examples))
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} bytes"


def _bytes(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))   # Go's len(): bytes, not characters


def label_key_errors(key: str) -> list[str]:
    """``content.IsLabelKey`` (``IsQualifiedName``): an optional DNS-1123 subdomain prefix of at most
    253 bytes and ``/``, then a name of at most 63 bytes of ``[-A-Za-z0-9_.]`` that starts and ends
    alphanumeric. The reasons it is not one (empty when it is)."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            if _bytes(prefix) > _PREFIX_MAX:
                errs.append("prefix part " + _max_len_error(_PREFIX_MAX))
            if not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix):
                errs.append("prefix part " + _regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT,
                                                          "example.com"))
    else:
        return ["a valid label key " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _bytes(name) > _NAME_MAX:
        errs.append("name part " + _max_len_error(_NAME_MAX))
    if not _LABEL_KEY_RE.fullmatch(name):
        errs.append("name part " + _regex_error(_LABEL_KEY_MSG, _LABEL_KEY_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value_errors(value: str) -> list[str]:
    """``content.IsLabelValue``: empty, or at most 63 bytes of ``[-A-Za-z0-9_.]`` that start and end
    alphanumeric. The reasons it is not one (empty when it is)."""
    errs: list[str] = []
    if _bytes(value) > _NAME_MAX:
        errs.append(_max_len_error(_NAME_MAX))
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


def requirement_errors(key: str, operator: str, values: Sequence[str] | None) -> tuple[FieldError, ...]:
    """``labels.NewRequirement(key, op, values)``'s error list (``ToAggregate``, so deduplicated),
    with paths relative to the requirement. ``operator`` is the API's spelling (``In``, ``NotIn``,
    ``Exists``, ``DoesNotExist``, ``Gt``, ``Lt``), or ``Equals`` for a ``matchLabels`` entry;
    ``values`` is ``None`` where the object has none (shown as ``null``, as Go shows a nil slice)."""
    return _requirement_errors(key, operator, None if values is None else tuple(values))


# Every pod event parses its selectors, and pods of one template repeat the same requirements: the
# check runs once per distinct requirement (bounded, as values such as a pod-template-hash churn).
@functools.lru_cache(maxsize=4096)
def _requirement_errors(key: str, operator: str, values: tuple[str, ...] | None) -> tuple[FieldError, ...]:
    errs: list[FieldError] = []
    msgs = label_key_errors(key)
    if msgs:
        errs.append(_invalid("key", _go_quote(key), "; ".join(msgs)))
    vals = values or ()

    def shown() -> str:
        return _go_json(None if values is None else list(vals))
    if operator in ("In", "NotIn"):
        if not vals:
            errs.append(_invalid("values", shown(), "for 'in', 'notin' operators, values set can't be empty"))
    elif operator == "Equals":
        if len(vals) != 1:
            errs.append(_invalid("values", shown(), "exact-match compatibility requires one single value"))
    elif operator in ("Exists", "DoesNotExist"):
        if vals:
            errs.append(_invalid("values", shown(), "values set must be empty for exists and does not exist"))
    elif operator in ("Gt", "Lt"):
        if len(vals) != 1:
            errs.append(_invalid("values", shown(), "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if parse_int64(v) is None:
                errs.append(_invalid(f"values[{i}]", _go_quote(v),
                                     "for 'Gt', 'Lt' operators, the value must be an integer"))
    else:
        raise ValueError(f"not a selector operator: {operator!r}")   # callers map the API's operators first
    # Every value is a label value, whatever the operator (a Gt bound of "-1" is refused too).
    for i, v in enumerate(vals):
        msgs = label_value_errors(v)
        if msgs:
            errs.append(_invalid(f"values[{i}][{key}]", _go_quote(v), "; ".join(msgs)))
    unique: list[FieldError] = []
    for e in errs:
        if e not in unique:
            unique.append(e)
    return tuple(unique)


# --- decoding the API's JSON ------------------------------------------------------------------------

class _RawRequirement(NamedTuple):
    key: str
    operator: str
    values: list[str] | None


def _raw_requirement(raw: Any, field: str, index: int) -> _RawRequirement:
    """``field[index]``, a ``NodeSelectorRequirement``/``LabelSelectorRequirement``, as Go decodes
    it: what does not decode (a wrong JSON type) is a ``ParseError``; what decodes is judged later.
    An absent key or operator decodes to ``""``, absent values to ``None`` (Go's nil slice). (The
    paths are only formatted for an error: every pod event comes through here.)"""
    if type(raw) is not dict and not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=f"{field}[{index}]")
    key = raw.get("key")
    if key is None:
        key = ""
    elif type(key) is not str:
        raise ParseError("must be a string", field=f"{field}[{index}].key")
    op = raw.get("operator")
    if op is None:
        op = ""
    elif type(op) is not str:
        raise ParseError("must be a string", field=f"{field}[{index}].operator")
    values = raw.get("values")
    if values is not None:
        if (type(values) is not list and (not isinstance(values, Sequence) or isinstance(values, str))) or not all(
                type(v) is str for v in values):
            raise ParseError("must be a list of strings", field=f"{field}[{index}].values")
        values = list(values)
    return _RawRequirement(key, op, values)


def _raw_list(raw: Any, field: str) -> Sequence[Any]:
    if raw is None:
        return ()
    if type(raw) is not list and (not isinstance(raw, Sequence) or isinstance(raw, str)):
        raise ParseError("must be a list", field=field)
    return raw


def parse_label_selector(raw: Any, field: str) -> LabelSelector:
    """Parse a ``metav1.LabelSelector``; ``{}`` gives the match-everything selector.

    ``metav1.LabelSelectorAsSelector``: each ``matchLabels`` entry and each expression must make a
    valid requirement, or the selector is refused; the ``ParseError`` names the first bad
    requirement's first error (upstream returns that requirement's whole aggregate, but one field
    is what our errors carry)."""
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    reqs: list[Requirement] = []
    labels = raw.get("matchLabels") or {}
    if not isinstance(labels, Mapping):
        raise ParseError("must be an object", field=f"{field}.matchLabels")
    for k, v in labels.items():
        if not isinstance(v, str):
            raise ParseError("must be a string", field=f"{field}.matchLabels.{k}")
        errs = requirement_errors(k, "Equals", [v])
        if errs:   # a bad key is reported at the map, a bad value at its entry
            raise ParseError(errs[0].problem,
                             field=f"{field}.matchLabels" if errs[0].path == "key" else f"{field}.matchLabels.{k}")
        reqs.append(Requirement(k, "In", frozenset((v,))))
    path = f"{field}.matchExpressions"
    for i, r in enumerate(_raw_list(raw.get("matchExpressions"), path)):
        req = _raw_requirement(r, path, i)
        if req.operator not in LABEL_OPERATORS:
            raise ParseError(f"{_go_quote(req.operator)} is not a valid label selector operator",
                             field=f"{path}[{i}].operator")
        errs = requirement_errors(req.key, req.operator, req.values)
        if errs:
            raise ParseError(errs[0].problem, field=errs[0].under(f"{path}[{i}]").path)
        reqs.append(Requirement(req.key, req.operator, frozenset(req.values or ())))
    # A canonical order, so equal selectors written differently share cache entries.
    reqs.sort(key=lambda r: (r.key, r.operator, sorted(r.values)))
    return LabelSelector(tuple(reqs))


def parse_node_selector_term(raw: Any, field: str) -> NodeSelectorTerm:
    """Parse a ``v1.NodeSelectorTerm`` lazily (``nodeaffinity.newNodeSelectorTerm``): wrong JSON
    types raise ``ParseError`` naming ``field``; requirements that decode but are not valid make a
    term with ``parse_errors`` that matches nothing."""
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    exprs_at, fields_at = f"{field}.matchExpressions", f"{field}.matchFields"
    raw_exprs = [_raw_requirement(r, exprs_at, i)
                 for i, r in enumerate(_raw_list(raw.get("matchExpressions"), exprs_at))]
    raw_fields = [_raw_requirement(r, fields_at, i) for i, r in enumerate(_raw_list(raw.get("matchFields"), fields_at))]
    errors: list[FieldError] = []
    exprs = _node_expressions(raw_exprs, errors)
    fields = _node_fields(raw_fields, field, errors)
    # PreFilter's names come from the raw term, valid or not (node_affinity.go reads the API object).
    names: frozenset[str] | None = None
    for r in raw_fields:
        if r.operator == "In":       # every key is metadata.name by now
            names = frozenset(r.values or ()) if names is None else names & frozenset(r.values or ())
    if errors:
        return NodeSelectorTerm(parse_errors=tuple(errors), node_names=names)
    return NodeSelectorTerm(tuple(exprs), tuple(fields), node_names=names)


def _node_expressions(raw_exprs: Sequence[_RawRequirement], errors: list[FieldError]) -> list[Requirement]:
    """A term's valid ``matchExpressions``; the invalid ones go to ``errors``."""
    exprs: list[Requirement] = []
    for i, r in enumerate(raw_exprs):
        if r.operator not in NODE_OPERATORS:
            errors.append(_not_supported(f"matchExpressions[{i}].operator", r.operator, _NODE_OPERATOR_ORDER))
            continue
        errs = requirement_errors(r.key, r.operator, r.values)
        if errs:
            errors.extend(e.under(f"matchExpressions[{i}]") for e in errs)
        else:
            exprs.append(Requirement(r.key, r.operator, frozenset(r.values or ())))
    return exprs


def _node_fields(raw_fields: Sequence[_RawRequirement], field: str, errors: list[FieldError]) -> list[Requirement]:
    """A term's valid ``matchFields``; the invalid ones go to ``errors``, an unknown key raises."""
    fields: list[Requirement] = []
    for i, r in enumerate(raw_fields):
        if r.key != OBJECT_NAME_FIELD:
            # kube-apiserver accepts no other field, and a Node has no other; refusing the pod names it.
            raise ParseError(f"Invalid value: {_go_quote(r.key)}: not a supported field selector key",
                             field=f"{field}.matchFields[{i}].key")
        if r.operator not in _FIELD_OPERATOR_ORDER:
            errors.append(_not_supported(f"matchFields[{i}].operator", r.operator, _FIELD_OPERATOR_ORDER))
        elif len(r.values or ()) != 1:
            # fields.OneTermEqualSelector takes one value; kube-apiserver asks for one too.
            errors.append(_invalid(f"matchFields[{i}].values", _go_json(r.values), "must have one element"))
        else:
            fields.append(Requirement(r.key, r.operator, frozenset(r.values or ())))
    return fields


# Parsed node selectors by their encoded form: a pod's required node affinity is parsed on each of
# its watch events, and a workload's pods share it (SchedulingDaemonset: 30,000 pods, one selector).
# The result does not depend on ``field`` (only a ParseError names it, and errors are not kept).
_NODE_SELECTORS: dict[bytes, NodeSelector] = {}
_NODE_SELECTORS_MAX = 4096


def parse_node_selector(raw: Any, field: str) -> NodeSelector:
    """Parse a ``v1.NodeSelector``. No terms (absent or ``[]``) make a selector that matches no
    node, as ``NewLazyErrorNodeSelector`` builds it (kube-apiserver refuses one for a pod, but the
    scheduler's ``addedAffinity`` arg may have it)."""
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    try:
        key: bytes | None = orjson.dumps(raw)
    except (orjson.JSONEncodeError, TypeError):     # not JSON's (a YAML date, a huge integer): parse it
        key = None
    if key is not None and (hit := _NODE_SELECTORS.get(key)) is not None:
        return hit
    terms = _raw_list(raw.get("nodeSelectorTerms"), f"{field}.nodeSelectorTerms")
    out = NodeSelector(
        tuple(parse_node_selector_term(t, f"{field}.nodeSelectorTerms[{i}]") for i, t in enumerate(terms))
    )
    if key is not None:
        if len(_NODE_SELECTORS) >= _NODE_SELECTORS_MAX:
            _NODE_SELECTORS.clear()
        # Kept at its exact size: orjson (3.x) does not shrink its 4 KiB output buffer, so 4,096
        # kept keys of a hundred bytes each would hold 16 MiB.
        _NODE_SELECTORS[memoryview(key).tobytes()] = out
    return out
