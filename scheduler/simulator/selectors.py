"""Label and field selectors as the API server parses them from ``?labelSelector=`` / ``?fieldSelector=``,
and the label selectors stored in objects (a PodDisruptionBudget's ``spec.selector``).

Label selectors support every operator: ``=``, ``==``, ``!=``, ``in``, ``notin``, ``key`` (exists)
and ``!key``. Both kinds of label selector are parsed here into the core's
``scheduler.model.selectors.LabelSelector``, whose ``matches`` is the one implementation of label
matching in the project. Field selectors support ``=``, ``==`` and ``!=`` on the fields a resource type
declares (``ResourceType.field_labels``); others are a 400, as the real server answers
(``field label not supported``). A compiled selector is a function from an object to bool, built once
per request or watch.
"""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from scheduler.model.selectors import LABEL_OPERATORS, LabelSelector, Requirement

__all__ = ["SelectorError", "field_matcher", "label_matcher", "matches_labels", "stored_label_selector"]

Matcher = Callable[[dict[str, Any]], bool]


class SelectorError(ValueError):
    pass


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside ``( )``."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return [p.strip() for p in parts if p.strip()]


_SET_RE = re.compile(r"^([A-Za-z0-9_./-]+)\s+(in|notin)\s+\(([^)]*)\)$")
_EQ_RE = re.compile(r"^([A-Za-z0-9_./-]+)\s*(==|!=|=)\s*([A-Za-z0-9_.-]*)$")
_KEY_RE = re.compile(r"^(!?)\s*([A-Za-z0-9_./-]+)$")


_QUERY_OPERATORS = {"in": "In", "=": "In", "notin": "NotIn", "!=": "NotIn", "exists": "Exists", "!": "DoesNotExist"}


def label_matcher(text: str | None) -> Matcher | None:
    if not text:
        return None
    reqs: list[Requirement] = []
    for part in _split_top(text):
        if m := _SET_RE.match(part):
            vals = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), _QUERY_OPERATORS[m.group(2)], vals))
        elif m := _EQ_RE.match(part):
            reqs.append(Requirement(m.group(1), _QUERY_OPERATORS["!=" if m.group(2) == "!=" else "="],
                                    frozenset({m.group(3)})))
        elif m := _KEY_RE.match(part):
            reqs.append(Requirement(m.group(2), _QUERY_OPERATORS["!" if m.group(1) == "!" else "exists"]))
        else:
            raise SelectorError(f"unable to parse requirement: {part!r}")
    selector = LabelSelector(tuple(reqs))

    def match(obj: dict[str, Any]) -> bool:
        return selector.matches((obj.get("metadata") or {}).get("labels") or {})
    return match


def stored_label_selector(raw: Any) -> LabelSelector | None:
    """A ``metav1.LabelSelector`` as stored in an object, for the simulated controllers; ``None`` (no
    selector) matches nothing, ``{}`` everything.

    Lenient, because the simulator does not validate these selectors on write: an unknown operator or an
    entry that is not an object is ignored, and a key or value that is not a string can match no label
    (a missing key, for ``NotIn`` and ``DoesNotExist``).
    """
    if not isinstance(raw, dict):
        return None
    reqs: list[Requirement] = []
    labels = raw.get("matchLabels")
    for k, v in (labels.items() if isinstance(labels, dict) else ()):
        reqs.append(Requirement(_text(k), "In", frozenset((v,)) if isinstance(v, str) else frozenset()))
    exprs = raw.get("matchExpressions")
    for r in (exprs if isinstance(exprs, list) else ()):
        if isinstance(r, dict) and r.get("operator") in LABEL_OPERATORS:
            values = r.get("values")
            reqs.append(Requirement(_text(r.get("key")), r["operator"], frozenset(
                v for v in (values if isinstance(values, list) else ()) if isinstance(v, str))))
    return LabelSelector(tuple(reqs))


def _text(key: Any) -> str:
    """A label key; one that is not a string is ``""``, which no label has."""
    return key if isinstance(key, str) else ""


def get_path(obj: dict[str, Any], path: str) -> str:
    cur: Any = obj
    for part in path.split("."):
        if not isinstance(cur, dict):
            return ""
        cur = cur.get(part)
    if cur is None:
        return ""
    if isinstance(cur, bool):
        return "true" if cur else "false"
    return str(cur)


def field_matcher(text: str | None, allowed: frozenset[str], kind: str) -> Matcher | None:
    if not text:
        return None
    tests: list[tuple[str, bool, str]] = []
    for part in _split_top(text):
        m = re.match(r"^([A-Za-z0-9_.]+)\s*(==|!=|=)\s*(.*)$", part)
        if not m:
            raise SelectorError(f"invalid selector: '{text}'; can't understand '{part}'")
        path, op, val = m.group(1), m.group(2), m.group(3).strip()
        if path not in allowed:
            raise SelectorError(f'field label not supported: {path}' if kind == "" else
                                f'"{path}" is not a known field selector: only "{", ".join(sorted(allowed))}"')
        tests.append((path, op == "!=", val))

    def match(obj: dict[str, Any]) -> bool:
        for path, neg, val in tests:
            got = get_path(obj, path)
            if (got == val) == neg:
                return False
        return True
    return match


def matches_labels(selector: LabelSelector | None, obj: dict[str, Any]) -> bool:
    """A PDB's selector against an object's labels: no selector matches nothing, an empty one everything."""
    return selector is not None and selector.matches(obj["metadata"].get("labels") or {})
