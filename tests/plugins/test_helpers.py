"""Shared plugin helpers: Go's truncating integer division."""

import numpy as np
import pytest

from scheduler.cache.dra import DraStore
from scheduler.framework import CycleState
from scheduler.plugins.dynamicresources import DynamicResources
from scheduler.plugins.helpers import go_div, row_run, selector_cache
from scheduler.plugins.noderesources import DraScoring

# (a, b, Go's a / b): Go truncates toward zero, Python's // floors.
GO_DIV = [
    (7, 2, 3),
    (-7, 2, -3),
    (7, -2, -3),
    (-7, -2, 3),
    (-1, 10, 0),
    (0, 5, 0),
    (10, 5, 2),
    (-10, 5, -2),
]


@pytest.mark.parametrize("a,b,want", GO_DIV)
def test_go_div_scalar(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want


def test_go_div_columns() -> None:
    a = np.array([row[0] for row in GO_DIV], np.int64)
    b = np.array([row[1] for row in GO_DIV], np.int64)
    assert go_div(a, b).tolist() == [row[2] for row in GO_DIV]
    assert go_div(a, 2).tolist() == [3, -3, 3, -3, 0, 0, 5, -5]


def test_selector_cache_is_one_per_store() -> None:
    """DynamicResources' Filter and the scoring of DRA-backed extended resources read one CEL
    cache per store, so a device's selectors run once for both."""
    a, b = DraStore(), DraStore()
    assert selector_cache(a) is selector_cache(a)
    assert selector_cache(a) is not selector_cache(b)
    assert DynamicResources(a)._cache is DraScoring(a)._cache is selector_cache(a)


@pytest.mark.parametrize(("case", "rows", "want"), [
    ("a run", [4, 5, 6, 7], slice(4, 8)),
    ("one row", [9], slice(9, 10)),
    ("two rows in order", [3, 4], slice(3, 5)),
    ("empty", [], None),
    ("descending", [7, 6, 5, 4], None),
    ("the span of a run, out of order", [0, 2, 1, 3], None),
    ("a gap", [1, 2, 4], None),
    ("wrapped round-robin batch", [8, 9, 0, 1], None),
    ("a repeated row", [2, 2, 3], None),
])
def test_row_run(case: str, rows: list[int], want: slice | None) -> None:
    state = CycleState()
    arr = np.array(rows, np.int64)
    assert row_run(state, arr) == want, case
    if want is not None:
        col = np.arange(20, dtype=np.int64) * 10
        assert col[want].tolist() == col[arr].tolist(), case
    assert row_run(state, arr) == want, case            # kept for the same rows array
    other = np.array([0, 1], np.int64)
    assert row_run(state, other) == slice(0, 2), case   # another array is tested anew
