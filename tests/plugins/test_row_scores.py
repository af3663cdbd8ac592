"""``RowScores`` (scheduler/plugins/row_scores.py): Fit's and BalancedAllocation's per-row scores
kept across cycles must be exactly what a plugin with nothing kept computes, whatever happened to
the rows in between (pods added, removed, moved by a what-if and restored, nodes updated, removed
and added, the table grown), and ``RowJournal`` must say which rows changed."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.cache.row_journal import RowJournal
from scheduler.framework.cycle_state import CycleState
from scheduler.model import Node, Pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from scheduler.plugins.row_scores import RowScores
from tests.builders import node, pod

EXTENDED = "example.com/gpu"
# Allocatables from ordinary to past SCORE_SAFE (a big row takes the exact path), and none at all.
CPUS = ["0", "500m", "2", "4", "16", "96", "1e17", "9223372036854775807"]
MEMORIES = ["0", "1Gi", "4Gi", "32Gi", "512Gi", "8Ei"]
# The pod shapes (each a key): usual, best-effort (non-zero defaults), memory only, extended.
SHAPES: list[tuple[str | None, str | None, str | None]] = [
    ("100m", "500Mi", None), (None, None, None), (None, "2Gi", None), ("1", "1Gi", "1"), ("3", None, "2"),
]


def _node(rng: random.Random, name: str) -> Node:
    extra = {EXTENDED: str(rng.choice([0, 1, 4, 8]))} if rng.random() < 0.4 else None
    return node(name, rng.choice(CPUS), rng.choice(MEMORIES), extra=extra)


def _pod(name: str, shape: tuple[str | None, str | None, str | None], node_name: str = "") -> Pod:
    cpu, memory, gpus = shape
    p = pod(name, cpu, memory, node_name=node_name)
    if gpus is None:
        return p
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory), (EXTENDED, gpus)) if v is not None}
    return pod(name, node_name=node_name,
               spec={"containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}]})


def _plugins() -> list[tuple[str, Any]]:
    ratio = {"type": "RequestedToCapacityRatio", "resources": [{"name": "cpu", "weight": 1},
                                                               {"name": "memory", "weight": 2},
                                                               {"name": EXTENDED, "weight": 3}],
             "requestedToCapacityRatio": {"shape": [{"utilization": 0, "score": 0},
                                                    {"utilization": 100, "score": 10}]}}
    fits = {
        "LeastAllocated": {},
        "LeastAllocated, weighted, extended": {"scoringStrategy": {
            "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 3}, {"name": "memory", "weight": 1},
                                                    {"name": EXTENDED, "weight": 2}]}},
        "MostAllocated": {"scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu", "weight": 1},
                                                                                     {"name": "memory", "weight": 1}]}},
        "RequestedToCapacityRatio": {"scoringStrategy": ratio},
    }
    out: list[tuple[str, Any]] = [
        (f"Fit {k}", lambda a=a: noderesources.NodeResourcesFit(NodeResourcesFitArgs.model_validate(a)))
        for k, a in fits.items()]
    out.append(("BalancedAllocation", lambda: noderesources.NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs())))
    out.append(("BalancedAllocation with extended", lambda: noderesources.NodeResourcesBalancedAllocation(
        NodeResourcesBalancedAllocationArgs.model_validate({"resources": [
            {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXTENDED, "weight": 1}]}))))
    return out


def _scores(plugin: Any, p: Pod, cache: Cache, rows: np.ndarray) -> list[int]:
    snap = cache.snapshot()
    state = CycleState()
    if plugin.pre_score(state, p, snap, rows).is_skip():
        return []
    got: list[int] = plugin.score_nodes(state, p, snap, rows).tolist()
    return got


@pytest.mark.parametrize(("name", "make"), _plugins(), ids=[n for n, _ in _plugins()])
@pytest.mark.parametrize("seed", range(6))
def test_kept_scores_are_what_a_fresh_plugin_computes(name: str, make: Any, seed: int) -> None:
    rng = random.Random(seed)
    cache = Cache()
    names = [f"n{i}" for i in range(40)]
    for n in names:
        cache.add_node(_node(rng, n))
    placed: list[Pod] = []
    kept = make()
    for step in range(160):
        action = rng.random()
        if action < 0.35:
            p = _pod(f"e{step}", rng.choice(SHAPES), rng.choice(names))
            cache.add_pod(p)
            placed.append(p)
        elif action < 0.45 and placed:
            cache.remove_pod(placed.pop(rng.randrange(len(placed))))
        elif action < 0.5:
            cache.add_node(_node(rng, rng.choice(names)))       # an update: new allocatable
        elif action < 0.53:
            gone = rng.choice(names)
            cache.remove_node(gone)
            names.remove(gone)
            if rng.random() < 0.8:       # a new node, perhaps on the released row, perhaps growing the table
                names.append(f"m{step}")
                cache.add_node(_node(rng, names[-1]))
        elif action < 0.58 and placed:
            # A what-if moves pods and puts them back: every row it touched must read as before.
            victims = rng.sample(placed, min(3, len(placed)))
            with cache.what_if() as w:
                for v in victims:
                    w.remove(v, v.node_name)
                snap = cache.snapshot()
                rows = np.array(sorted(snap.row_of(n) for n in names), np.int64)
                p = _pod("w", rng.choice(SHAPES))
                assert _scores(kept, p, cache, rows) == _scores(make(), p, cache, rows), (name, step, "what-if")
        else:
            snap = cache.snapshot()
            all_rows = sorted(snap.row_of(n) for n in names)
            k = rng.randrange(1, len(all_rows) + 1)
            if rng.random() < 0.5:          # a window of rows in table order (a run, usually)
                start = rng.randrange(len(all_rows))
                rows = np.array((all_rows + all_rows)[start:start + k], np.int64)
            else:                            # any rows, in any order
                rows = np.array(rng.sample(all_rows, k), np.int64)
            p = _pod("p", rng.choice(SHAPES))
            assert _scores(kept, p, cache, rows) == _scores(make(), p, cache, rows), (name, step)


def test_a_journal_reader_behind_its_limit_redoes_everything() -> None:
    j = RowJournal(4)
    assert j.since(0) == ([], 0)
    j.add(7)
    j.extend([1, 2])
    assert j.since(0) == ([7, 1, 2], 3)
    assert j.since(2) == ([2], 3)
    j.extend([3, 4])                    # past the limit: starts over
    assert j.since(2) == (None, 5)
    assert j.since(3) == ([3, 4], 5)
    j.extend(range(9))                  # longer than the limit: skipped past whole
    assert j.since(5) == (None, 14)
    assert j.since(14) == ([], 14)


def test_the_table_journals_every_change_to_a_rows_amounts() -> None:
    cache = Cache()
    for n in ("a", "b", "c"):
        cache.add_node(node(n))
    table = cache.snapshot().table
    row = {n: cache.snapshot().row_of(n) for n in ("a", "b", "c")}
    _, start = table.amount_changes(0)
    p = pod("p", node_name="b")
    cache.add_pod(p)
    changed, pos = table.amount_changes(start)
    assert changed == [row["b"]]
    with cache.what_if() as w:
        w.remove(p, "b")
    changed, pos2 = table.amount_changes(pos)
    assert changed is not None and set(changed) == {row["b"]}      # the move and the restore
    cache.add_node(node("c", cpu="8"))
    cache.remove_node("a")
    changed, _ = table.amount_changes(pos2)
    assert changed == [row["c"], row["a"]]
    # Node changes stay in the node journal too; pod changes do not go there.
    node_changes, _ = table.row_changes(0)
    assert node_changes is not None and row["b"] not in node_changes[3:]


def test_a_key_is_kept_from_its_second_pod_and_only_changed_rows_are_redone() -> None:
    cache = Cache()
    for n in ("a", "b", "c", "d"):
        cache.add_node(node(n))
    snap = cache.snapshot()
    table = snap.table
    rows = np.array(sorted(snap.row_of(n) for n in ("a", "b", "c", "d")), np.int64)
    computed: list[list[int]] = []
    exact: list[int] = []

    def compute(at: np.ndarray) -> np.ndarray:
        computed.append(at.tolist())
        return at * 10

    def one(row: int) -> int:
        exact.append(row)
        return row * 10

    kept = RowScores()
    want = (rows * 10).tolist()
    for _ in range(2):          # the first pod of a key and its second: both compute every row
        assert kept.scores(table, rows, None, "k", compute, one).tolist() == want
    assert computed == [rows.tolist()] * 2 and exact == []
    assert kept.scores(table, rows, None, "k", compute, one).tolist() == want
    assert len(computed) == 2                                   # all kept: nothing computed
    for i in range(3):          # keys seen once each are not kept: "k" is still there
        kept.scores(table, rows, None, f"once-{i}", compute, one)
    cache.add_pod(pod("p", node_name="c"))
    assert kept.scores(table, rows, None, "k", compute, one).tolist() == want
    assert len(computed) == 5 and exact == [snap.row_of("c")]   # only the changed row, one at a time
