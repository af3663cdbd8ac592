"""Shared plugin helpers: Go's truncating integer division."""

import numpy as np
import pytest

from scheduler.plugins.helpers import go_div

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
