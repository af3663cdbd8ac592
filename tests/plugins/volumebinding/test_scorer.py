"""``scorer``: upstream's ``volumebinding/scorer_test.go`` TestScore, the scorer alone over class
(requested, capacity) maps, through the plugin's ``_score``."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.plugins.volumebinding import VolumeBinding

# scorer_test.go TestScore: the scorer alone, over class (requested, capacity) maps.
DEFAULT_SHAPE_OLD = [(0, 0), (100, 100)]
SCORER_CASES = [
    ("default shape, single class", DEFAULT_SHAPE_OLD, [
        ({"hdd": (0, 100)}, 0), ({"hdd": (30, 100)}, 30), ({"hdd": (50, 100)}, 50), ({"hdd": (100, 100)}, 100)]),
    ("default shape, multiple classes", DEFAULT_SHAPE_OLD, [
        ({"hdd": (0, 100), "ssd": (0, 100)}, 0), ({"hdd": (0, 100), "ssd": (30, 100)}, 15),
        ({"hdd": (30, 100), "ssd": (30, 100)}, 30), ({"hdd": (30, 100), "ssd": (60, 100)}, 45),
        ({"hdd": (50, 100), "ssd": (50, 100)}, 50), ({"hdd": (50, 100), "ssd": (100, 100)}, 75),
        ({"hdd": (100, 100), "ssd": (100, 100)}, 100)]),
    ("custom shape, multiple classes", [(50, 0), (80, 30), (100, 50)], [
        ({"hdd": (0, 100), "ssd": (0, 100)}, 0), ({"hdd": (0, 100), "ssd": (30, 100)}, 0),
        ({"hdd": (30, 100), "ssd": (30, 100)}, 0), ({"hdd": (30, 100), "ssd": (60, 100)}, 5),
        ({"hdd": (50, 100), "ssd": (100, 100)}, 25), ({"hdd": (90, 100), "ssd": (90, 100)}, 40),
        ({"hdd": (100, 100), "ssd": (100, 100)}, 50)]),
]


@pytest.mark.parametrize(("name", "shape", "cases"), SCORER_CASES, ids=[c[0] for c in SCORER_CASES])
def test_scorer(name: str, shape: list[tuple[int, int]], cases: list[tuple[dict[str, tuple[int, int]], int]]) -> None:
    """scorer_test.go TestScore (its shape is already scaled to 0-100, as buildScorerFunction takes
    it). Each map becomes one node whose static bindings are those classes."""
    from scheduler.plugins.volumebinding.scorer import _ScoreParts
    plugin = VolumeBinding()
    plugin._shape = tuple(shape)
    parts = _ScoreParts()
    n = len(cases)
    for cls in ("hdd", "ssd"):
        for req_row in range(n):
            got = cases[req_row][0].get(cls)
            if got is not None:
                size = np.full(n, -1, np.int64)
                size[req_row] = got[1]
                # A binding per (class, node): the request is per row, so one entry per row.
                parts.static.append((cls, got[0], size))
    assert plugin._score(parts, n).tolist() == [want for _, want in cases]


def test_capacity_zero_or_short_scores_as_full() -> None:
    from scheduler.plugins.volumebinding.scorer import _ScoreParts
    plugin = VolumeBinding()
    plugin._shape = ((0, 0), (100, 100))
    parts = _ScoreParts(static=[("hdd", 10, np.array([0, 5, 20], np.int64))])
    assert plugin._score(parts, 3).tolist() == [100, 100, 50]
