"""Vectorised building blocks shared by the in-tree plugins.

Label requirements become boolean masks over *all* node rows, computed from the label columns of
``NodeTable`` and cached in ``table.derived`` until a node's labels or taints change
(``table.version``). Pods created from one template share one selector object, so in a steady
cluster each distinct selector is evaluated once, not once per pod and certainly not per node.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from scheduler.cache import NodeTable
from scheduler.cache.dra import DraStore
from scheduler.dra.allocator import SelectorCache
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import MAX_NODE_SCORE, Rows, Scores
from scheduler.model import NodeSelector, NodeSelectorTerm, Requirement, Taint, Toleration
from scheduler.model.selectors import parse_int64

__all__ = [
    "BoolArray",
    "at_domain",
    "broken_linear",
    "default_normalize_score",
    "derived",
    "go_div",
    "labels_mask",
    "node_selector_mask",
    "requirement_mask",
    "row_run",
    "term_mask",
    "untolerated_taint_per_set",
]

BoolArray = npt.NDArray[np.bool_]
T = TypeVar("T")


def derived(table: NodeTable, key: object, compute: Callable[[], T]) -> T:
    """``compute()``, cached per ``key`` until the node set or node labels/taints change."""
    if table.derived_version != table.version:
        table.derived.clear()
        table.derived_version = table.version
    try:
        return table.derived[key]  # type: ignore[return-value]
    except KeyError:
        value = table.derived[key] = compute()
        return value


_ROW_RUN = "helpers/row-run"


def row_run(state: CycleState, rows: Rows) -> slice | None:
    """``slice(r0, r0 + n)`` when ``rows`` is the ascending run ``r0, r0 + 1, ..., r0 + n - 1``,
    else None. A search batch is one whenever the node order is the row order (a cluster without
    zones, no removed node in between): then ``column[run]`` is a view of the table, where
    ``column[rows]`` gathers (about 2.5 ns a row at 50,000 nodes, several gathers a pod). The
    test is one pass, made once per rows array (kept in the state: the Filter plugins of a batch,
    the Score plugins of a cycle, share it). A view reads the table: never write through it."""
    got = state.get(_ROW_RUN)
    if got is not None and got[0] is rows:
        run: slice | None = got[1]
        return run
    n = len(rows)
    run = None
    if n:
        r0 = rows.item(0)
        # Strictly ascending and spanning exactly n rows: the run itself.
        if rows.item(n - 1) - r0 == n - 1 and (n < 3 or bool((rows[1:] > rows[:-1]).all())):
            run = slice(r0, r0 + n)
    state.write(_ROW_RUN, (rows, run))
    return run


_SELECTOR_CACHES: weakref.WeakKeyDictionary[DraStore, SelectorCache] = weakref.WeakKeyDictionary()


def selector_cache(dra: DraStore) -> SelectorCache:
    """The one CEL result cache of ``dra``'s devices: DynamicResources' Filter and the scoring of
    DRA-backed extended resources (``DraScoring``) ask the same selectors of the same devices, so a
    device's CEL runs once, not once per plugin. Each user resets it to ``dra.slices_version``;
    a reset to the version it already has keeps it."""
    got = _SELECTOR_CACHES.get(dra)
    if got is None:
        got = _SELECTOR_CACHES[dra] = SelectorCache()
    return got


def at_domain(table: NodeTable, key: str, rows: npt.NDArray[np.int64], per_domain: npt.NDArray[np.int64]
              ) -> tuple[BoolArray, npt.NDArray[np.int64]]:
    """For each of ``rows``: whether its node has label ``key``, and ``per_domain`` (indexed by the
    label's value id) at that node's value, 0 for a node without the label."""
    vals = table.label_column(key)[rows]
    has = vals >= 0
    if len(per_domain) == 0:
        return has, np.zeros(len(rows), np.int64)
    return has, np.where(has, per_domain[np.clip(vals, 0, len(per_domain) - 1)], 0)


def _numeric_values(table: NodeTable, key: str) -> npt.NDArray[np.float64]:
    def compute() -> npt.NDArray[np.float64]:
        out = np.full(len(table.label_values.get(key, ())) + 1, np.nan)
        for i, v in enumerate(table.label_values.get(key, ())):
            n = parse_int64(v)   # a label that is no int64 matches neither Gt nor Lt, as upstream
            if n is not None:
                out[i] = n
        return out
    return derived(table, ("numeric", key), compute)


def requirement_mask(table: NodeTable, req: Requirement) -> BoolArray:
    col = table.label_column(req.key)
    op = req.operator
    if op in ("In", "NotIn"):
        ids = [i for i in (table.value_id(req.key, v) for v in req.values) if i >= 0]
        hit = np.isin(col, ids) if ids else np.zeros(len(col), np.bool_)
        return hit if op == "In" else ~hit
    if op == "Exists":
        return col >= 0
    if op == "DoesNotExist":
        return col < 0
    (bound,) = req.values
    values = _numeric_values(table, req.key)[col]  # -1 indexes the trailing NaN
    n = parse_int64(bound)   # validated when the pod was parsed; None only for a hand-built Requirement
    if n is None:
        return np.zeros(len(col), np.bool_)
    with np.errstate(invalid="ignore"):
        return (values > n) if op == "Gt" else (values < n)


def _field_mask(table: NodeTable, req: Requirement) -> BoolArray:
    mask = np.zeros(table.capacity, np.bool_)
    rows = [table.row_of[n] for n in req.values if n in table.row_of]
    mask[rows] = True
    if req.operator == "In":
        return mask
    if req.operator == "NotIn":
        return ~mask
    return np.ones(table.capacity, np.bool_) if req.operator == "Exists" else np.zeros(table.capacity, np.bool_)


def term_mask(table: NodeTable, term: NodeSelectorTerm) -> BoolArray:
    def compute() -> BoolArray:
        if not term.match_expressions and not term.match_fields:
            return np.zeros(table.capacity, np.bool_)
        mask = np.ones(table.capacity, np.bool_)
        for r in term.match_expressions:
            mask &= requirement_mask(table, r)
        for r in term.match_fields:
            mask &= _field_mask(table, r)
        return mask
    return derived(table, ("term", term), compute)


def node_selector_mask(table: NodeTable, selector: NodeSelector) -> BoolArray:
    def compute() -> BoolArray:
        mask = np.zeros(table.capacity, np.bool_)
        for t in selector.terms:
            mask |= term_mask(table, t)
        return mask
    return derived(table, ("selector", selector), compute)


def labels_mask(table: NodeTable, labels: Mapping[str, str]) -> BoolArray:
    key = ("labels", tuple(sorted(labels.items())))

    def compute() -> BoolArray:
        mask = np.ones(table.capacity, np.bool_)
        for k, v in labels.items():
            vid = table.value_id(k, v)
            if vid < 0:
                return np.zeros(table.capacity, np.bool_)
            mask &= table.label_column(k) == vid
        return mask
    return derived(table, key, compute)


def untolerated_taint_per_set(table: NodeTable, tolerations: tuple[Toleration, ...],
                              effects: frozenset[str]) -> list[Taint | None]:
    """For each distinct taint set, the first taint with an effect in ``effects`` that no
    toleration tolerates (``None`` if all are tolerated)."""
    def compute() -> list[Taint | None]:
        out: list[Taint | None] = []
        for taints in table.taint_sets:
            out.append(next((t for t in taints if t.effect in effects
                             and not any(tol.tolerates(t) for tol in tolerations)), None))
        return out
    # taint_sets only grows, so its length is part of the key.
    return derived(table, ("untolerated", tolerations, effects, len(table.taint_sets)), compute)


IntOrArray = TypeVar("IntOrArray", int, npt.NDArray[np.int64])


def go_div(a: IntOrArray, b: IntOrArray | int) -> IntOrArray:
    """Go's integer ``a / b``: the quotient truncated toward zero.

    Python's ``//`` floors, which differs whenever the signs differ: upstream's ``-1 / 10`` is 0,
    Python's ``-1 // 10`` is -1. Every score formula that upstream writes with int64 ``/`` goes
    through here, for scalars and for whole node columns alike. ``b`` must not be 0 (Go panics).
    """
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        an, bn = np.asarray(a, np.int64), np.asarray(b, np.int64)
        q = np.abs(an) // np.abs(bn)
        return np.where((an < 0) != (bn < 0), -q, q)
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


def broken_linear(shape: Sequence[tuple[int, int]], util: Scores) -> Scores:
    """Upstream's ``helper.BuildBrokenLinearFunction`` over a column of utilisations: the first
    point's score below it, the last point's above it, linear in between. The interpolation is Go's
    int64 ``/``, which truncates toward zero: on a decreasing segment that is one point more than
    Python's floor would give (``(0,2)(40,10)(100,0)`` scores 10, 8, 5, 1 at 41, 55, 71, 99)."""
    out = np.full(len(util), shape[-1][1], np.int64)
    done = np.zeros(len(util), np.bool_)
    for i, (u, s) in enumerate(shape):
        hit = ~done & (util <= u)
        if i == 0:
            out[hit] = s
        else:
            pu, ps = shape[i - 1]
            out[hit] = ps + go_div((s - ps) * (util[hit] - pu), u - pu)
        done |= hit
    return out


def default_normalize_score(scores: Scores, reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """Upstream ``helper.DefaultNormalizeScore``, in place: scale to 0..max by the max score."""
    if len(scores) == 0:
        return
    top = int(scores.max())
    if top == 0:
        if reverse:
            scores[:] = max_priority
        return
    scores[:] = max_priority * scores // top
    if reverse:
        scores[:] = max_priority - scores
