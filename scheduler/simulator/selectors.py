"""Label and field selectors as the API server parses them from ``?labelSelector=`` / ``?fieldSelector=``.

Label selectors support every operator: ``=``, ``==``, ``!=``, ``in``, ``notin``, ``key`` (exists)
and ``!key``. Field selectors support ``=``, ``==`` and ``!=`` on the fields a resource type
declares (``ResourceType.field_labels``); others are a 400, as the real server answers
(``field label not supported``). A compiled selector is a function from an object to bool, built once
per request or watch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

__all__ = ["SelectorError", "field_matcher", "label_matcher"]

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


def label_matcher(text: str | None) -> Matcher | None:
    if not text:
        return None
    tests: list[tuple[str, str, frozenset[str]]] = []       # (op, key, values)
    for part in _split_top(text):
        if m := _SET_RE.match(part):
            vals = frozenset(v.strip() for v in m.group(3).split(",") if v.strip())
            tests.append((m.group(2), m.group(1), vals))
        elif m := _EQ_RE.match(part):
            tests.append(("!=" if m.group(2) == "!=" else "=", m.group(1), frozenset({m.group(3)})))
        elif m := _KEY_RE.match(part):
            tests.append(("!" if m.group(1) == "!" else "exists", m.group(2), frozenset()))
        else:
            raise SelectorError(f"unable to parse requirement: {part!r}")

    def ok(labels: dict[str, str], op: str, key: str, vals: frozenset[str]) -> bool:
        if op in ("in", "="):
            return labels.get(key) in vals
        if op in ("notin", "!="):
            return labels.get(key) not in vals
        return (key in labels) == (op == "exists")

    def match(obj: dict[str, Any]) -> bool:
        labels = (obj.get("metadata") or {}).get("labels") or {}
        return all(ok(labels, op, key, vals) for op, key, vals in tests)
    return match


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
