"""The node table's two homes for a resource (``scheduler.cache.node_table``): a dense column, or the
sparse side table of a rare resource. Readers must see the same amounts either way, so Fit's and
BalancedAllocation's answers, and a what-if's undo, are checked with every extended resource forced
into one home, then the other."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.cache import node_table as nt
from scheduler.framework import CycleState
from scheduler.model import Node, Pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesBalancedAllocationArgs, NodeResourcesFitArgs
from tests.builders import node, pod, run_filter, run_score

EXTRA = ("example.com/a", "example.com/b", "hugepages-2Mi", "foo.io/c")
SCORED = [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
          {"name": "example.com/a", "weight": 3}, {"name": "hugepages-2Mi", "weight": 2}]
SHAPE = {"shape": [{"utilization": 0, "score": 0}, {"utilization": 60, "score": 10}, {"utilization": 100, "score": 4}]}
PLUGINS: list[Any] = [
    noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={"type": "LeastAllocated", "resources": SCORED})),
    noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={"type": "MostAllocated", "resources": SCORED})),
    noderesources.NodeResourcesFit(NodeResourcesFitArgs(scoringStrategy={
        "type": "RequestedToCapacityRatio", "resources": SCORED, "requestedToCapacityRatio": SHAPE})),
    noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs(resources=[{**r, "weight": 1} for r in SCORED])),
]


def _homes(monkeypatch: pytest.MonkeyPatch, home: str) -> None:
    """Every resource dense from its first entry, or sparse for good."""
    monkeypatch.setattr(nt, "SPARSE_MIN_ROWS", 0 if home == "dense" else 10**9)
    monkeypatch.setattr(nt, "SPARSE_FRACTION", 10**9)


def _requests(rng: random.Random) -> dict[str, str]:
    out = {"cpu": f"{rng.randint(0, 3000)}m", "memory": str(rng.randint(0, 4 << 30))}
    for name in rng.sample(EXTRA, rng.randint(0, 3)):
        out[name] = str(rng.randint(0, 3))
    return out


def _pod(name: str, rng: random.Random, node_name: str = "") -> Pod:
    return pod(name, node_name=node_name, spec={"containers": [
        {"name": "c", "image": "i", "resources": {"requests": _requests(rng)}}]})


def _cluster(seed: int) -> tuple[list[Node], list[Pod], list[Pod]]:
    rng = random.Random(seed)
    nodes = [node(f"n{i}", f"{rng.randint(1, 8)}", f"{rng.randint(1, 16)}Gi", pods=rng.randint(1, 6),
                  extra={r: str(rng.randint(0, 6)) for r in rng.sample(EXTRA, rng.randint(0, len(EXTRA)))})
             for i in range(rng.randint(1, 12))]
    existing = [_pod(f"e{k}", rng, rng.choice(nodes).name) for k in range(rng.randint(0, 20))]
    pending = [_pod(f"p{k}", rng) for k in range(4)]
    return nodes, existing, pending


def _answers(nodes: list[Node], existing: list[Pod], pending: list[Pod]) -> list[object]:
    out: list[object] = []
    for p in pending:
        out.append([None if s is None else (s.code, s.reasons) for s in run_filter(PLUGINS[0], p, nodes, existing)])
        out += [run_score(plugin, p, nodes, existing) for plugin in PLUGINS]
    return out


@pytest.mark.parametrize("seed", range(40))
def test_fit_and_scores_answer_the_same_from_either_home(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Random clusters: Fit's verdicts and reasons, and every scoring strategy's and
    BalancedAllocation's scores, are the same whether the extended resources are dense or sparse."""
    nodes, existing, pending = _cluster(seed)
    got = {}
    for home in ("dense", "sparse"):
        with monkeypatch.context() as m:
            _homes(m, home)
            cache = Cache()
            for n in nodes:
                cache.add_node(n)
            for e in existing:
                cache.add_pod(e)
            t = cache.table
            for name, rid in t.resources.items():
                if name in EXTRA:
                    held = rid in t.sparse and bool(t.sparse[rid].alloc or t.sparse[rid].requested)
                    assert (t.slots[rid] >= 0 or not held) if home == "dense" else t.slots[rid] == -1
            got[home] = _answers(nodes, existing, pending)
    assert got["dense"] == got["sparse"], seed


def _state(cache: Cache) -> list[object]:
    t = cache.table
    rows = t.valid_rows()
    return [(name, t.alloc_of(rows, rid).tolist(), t.requested_of(rows, rid).tolist())
            for name, rid in sorted(t.resources.items())] + [
        (t.info(r).generation, sorted(t.info(r).pods)) for r in rows.tolist()]


@pytest.mark.parametrize("seed", range(10))
def test_a_what_if_undoes_sparse_amounts_even_across_a_promotion(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """A what-if (preemption's dry run) that removes and adds pods asking for a rare resource, one at
    a time and in bulk, leaves every amount as it was, also when an addition gives the resource its
    dense column midway."""
    monkeypatch.setattr(nt, "SPARSE_MIN_ROWS", 5)
    rng = random.Random(seed)
    cache = Cache()
    t = cache.table
    names = [f"n{i}" for i in range(8)]
    for n in names:
        cache.add_node(node(n, pods=50, extra={"example.com/a": "9"} if n in ("n0", "n1") else {}))

    def gpu(name: str, node_name: str = "") -> Pod:
        return pod(name, node_name=node_name, spec={"containers": [{"name": "c", "image": "i", "resources": {
            "requests": {"cpu": f"{rng.randint(1, 900)}m", "example.com/a": str(rng.randint(1, 3))}}}]})

    placed = [gpu(f"e{k}", rng.choice(("n0", "n1"))) for k in range(6)] + [
        pod(f"o{k}", f"{rng.randint(1, 900)}m", node_name=rng.choice(names)) for k in range(6)]
    for p in placed:
        cache.add_pod(p)
    rid = t.resources["example.com/a"]
    assert t.slots[rid] == -1 and t.sparse[rid].requested      # 2 allocatable + at most 2 requested entries
    before = _state(cache)
    with cache.lock, cache.what_if(columns_only=True) as w:
        for p in rng.sample(placed, 6):
            w.remove(p, p.node_name)
        w.move_rows([t.row_of[n] for n in names[2:5]], [[gpu(f"g{k}")] for k in range(3)], +1)
        for k, n in enumerate(names[5:]):
            w.add(gpu(f"h{k}"), n)
        assert t.slots[rid] >= 0            # six rows more with a request: promoted midway
    assert _state(cache) == before
    assert not t.sparse.get(rid) and t.slots[rid] >= 0


def test_pod_epochs_move_on_every_change_to_a_rows_pods_and_never_back() -> None:
    """What a plugin derives from a row's pods (NodeVolumeLimits' attach counts) is valid while the
    row's epoch is unchanged: a what-if's moves, bulk or one by one, and its restore all move it,
    though restore puts ``NodeInfo.generation`` back."""
    cache = Cache()
    cache.add_node(node("n1"))
    cache.add_node(node("n2"))
    row = cache.table.row_of["n1"]
    epochs = cache.table.pod_epochs
    seen = [int(epochs[row])]

    def moved() -> bool:
        now = int(cache.table.pod_epochs[row])
        fresh = now not in seen
        seen.append(now)
        return fresh

    p = pod("p", node_name="n1")
    cache.add_pod(p)
    assert moved()
    generation = cache.table.info(row).generation
    with cache.lock:
        for columns_only in (True, False):
            with cache.what_if(columns_only=columns_only) as w:
                w.remove(p, "n1")
                assert moved()
            assert moved()
            if columns_only:        # restore_rows puts the generation back, not the epoch
                assert cache.table.info(row).generation == generation
        with cache.what_if(columns_only=True) as w:
            w.move_rows([row], [[p]], -1)
            assert moved()
        assert moved()
    assert int(cache.table.pod_epochs[cache.table.row_of["n2"]]) == 1    # set once, no pods since
    cache.remove_pod(p)
    assert moved()


@pytest.mark.parametrize("seed", range(30))
def test_pods_bound_holds_every_row_and_fit_still_counts_pods(seed: int) -> None:
    """``NodeTable.pods_bound`` is at least every row's pod count after a random history (pods
    added, assumed, forgotten and removed, what-ifs moving pods one by one and in bulk, and their
    restore, nodes updated to allow fewer or more pods, removed and added), and Fit's Filter, which
    skips its pod-count pass while the bound is below every live node's allowed pods, says
    ``Too many pods`` on exactly the nodes at their allowed count."""
    rng = random.Random(seed)
    cache = Cache()
    fit = PLUGINS[0]
    names = [f"n{i}" for i in range(rng.randint(1, 6))]
    for name in names:
        cache.add_node(node(name, "64", "64Gi", pods=rng.randint(1, 5)))
    placed: dict[str, Pod] = {}
    for step in range(60):
        r = rng.random()
        live = list(cache.table.row_of)
        if r < 0.35 and live:
            p = pod(f"p{step}", node_name=rng.choice(live), cpu="10m")
            placed[p.uid] = p
            if rng.random() < 0.5:
                cache.add_pod(p)
            else:
                cache.assume_pod(pod(f"p{step}", cpu="10m"), p.node_name)
                placed[p.uid] = cache.get_pod(p.uid) or p
        elif r < 0.55 and placed:
            p = placed.pop(rng.choice(list(placed)))
            if cache.is_assumed(p.uid):
                cache.forget_pod(p)
            else:
                cache.remove_pod(p)
        elif r < 0.75 and placed:
            with cache.lock, cache.what_if(columns_only=rng.random() < 0.5) as w:
                victims = [p for p in placed.values() if rng.random() < 0.5]
                for p in victims:
                    w.remove(p, p.node_name)
                if rng.random() < 0.5:      # pods moved onto rows in bulk (a what-if's nominated pods)
                    at = rng.sample(list(cache.table.row_of.values()), rng.randint(1, len(cache.table.row_of)))
                    w.move_rows(at, [[pod(f"m{step}-{k}-{i}", cpu="10m") for i in range(rng.randint(1, 3))]
                                     for k in range(len(at))], 1)
                assert cache.table.pods_bound >= int(cache.table.pod_count.max())
        elif r < 0.9:
            name = rng.choice(names)
            cache.add_node(node(name, "64", "64Gi", pods=rng.randint(1, 5)))
        elif name_gone := [n for n in names if n in cache.table.row_of and len(cache.table.row_of) > 1]:
            gone = rng.choice(name_gone)
            for uid in [u for u, p in placed.items() if p.node_name == gone]:
                p = placed.pop(uid)
                cache.forget_pod(p) if cache.is_assumed(uid) else cache.remove_pod(p)
            cache.remove_node(gone)
        t = cache.table
        assert t.pods_bound >= int(t.pod_count.max()), step
        nodes = [t.info(row).node for row in t.valid_rows().tolist()]
        counts = {n.name: int(t.pod_count[t.row_of[n.name]]) for n in nodes}
        snap = cache.snapshot()
        rows = np.array([snap.row_of(n.name) for n in nodes], np.int64)
        probe = pod("probe", cpu="1m")
        state = CycleState()
        fit.pre_filter(state, probe, snap)
        verdict = fit.filter_nodes(state, probe, snap, rows)
        want = [counts[n.name] >= n.allocatable["pods"] for n in nodes]
        assert verdict.failed.tolist() == want, step


@pytest.mark.parametrize("seed", range(20))
def test_fit_and_scores_agree_on_a_run_of_rows_and_its_gather(monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    """Fit's Filter and Score and BalancedAllocation read views of the columns when the rows are a
    run (``helpers.row_run``) and gather them otherwise: the answers are the same either way."""
    nodes, existing, pending = _cluster(seed)
    on_runs = _answers(nodes, existing, pending)
    from scheduler.plugins.noderesources import fit, resource_allocation
    monkeypatch.setattr(fit, "row_run", lambda state, rows: None)
    monkeypatch.setattr(resource_allocation, "row_run", lambda state, rows: None)
    assert _answers(nodes, existing, pending) == on_runs


def test_resource_columns_stay_column_major() -> None:
    """``alloc`` and ``requested`` are column-major through growth and a promoted column (Filter
    and Score read a resource's column over many rows: contiguous, 8 bytes a row), and their
    values are those of the nodes and pods, whatever the layout."""
    t = nt.NodeTable(capacity=4)
    for i in range(70):                 # grows past 4 rows several times; a rare resource is promoted
        t.set_node(node(f"n{i}", cpu=f"{i + 1}", extra={"example.com/gpu": "1"}))
        t.add_pod(i, pod(f"p{i}", cpu="100m", node_name=f"n{i}"))
    assert t.slots[t.resources["example.com/gpu"]] >= 0
    for a in (t.alloc, t.requested):
        assert a.flags.f_contiguous
        assert a[:, t.slots[t.resources["cpu"]]].flags.c_contiguous
    cpu = t.slots[t.resources["cpu"]]
    assert t.alloc[:70, cpu].tolist() == [1000 * (i + 1) for i in range(70)]
    assert t.requested[:70, cpu].tolist() == [100] * 70
    assert t.alloc[:70, t.slots[t.resources["example.com/gpu"]]].tolist() == [1] * 70
