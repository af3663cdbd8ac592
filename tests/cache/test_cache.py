import random
from dataclasses import replace

import numpy as np
import pytest

from scheduler.cache import Cache, SpreadMatch, zone_interleaved
from scheduler.model import Pod
from scheduler.model.selectors import parse_label_selector
from tests.builders import Clock, node, pod


def requested_cpu(cache: Cache, name: str) -> int:
    t = cache.table
    return int(t.requested[t.row_of[name], t.resources["cpu"]])


def test_assume_confirm_forget() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    cache.add_node(node("b"))
    p = pod("p", "1")
    assumed = cache.assume_pod(p, "a")
    assert cache.is_assumed(p.uid) and requested_cpu(cache, "a") == 1000
    with pytest.raises(ValueError):
        cache.assume_pod(p, "b")
    cache.forget_pod(assumed)
    assert requested_cpu(cache, "a") == 0 and cache.pod_count() == 0


def test_confirm_on_another_node_moves_the_pod() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    cache.add_node(node("b"))
    p = pod("p", "1")
    cache.assume_pod(p, "a")
    cache.add_pod(replace(p, node_name="b"))
    assert not cache.is_assumed(p.uid)
    assert requested_cpu(cache, "a") == 0 and requested_cpu(cache, "b") == 1000


def test_assumed_pod_expires_after_ttl() -> None:
    clock = Clock()
    cache = Cache(clock=clock, assumed_ttl=30)
    cache.add_node(node("a"))
    p = cache.assume_pod(pod("p", "1"), "a")
    clock.advance(100)
    assert cache.cleanup() == []  # binding not finished: never expires
    cache.finish_binding(p)
    clock.advance(29)
    assert cache.cleanup() == []
    clock.advance(2)
    assert [x.uid for x in cache.cleanup()] == [p.uid]
    assert requested_cpu(cache, "a") == 0


def test_pod_before_its_node() -> None:
    cache = Cache()
    cache.add_pod(pod("p", "1", node_name="late"))
    assert cache.snapshot().num_nodes == 0
    cache.add_node(node("late"))
    assert cache.snapshot().num_nodes == 1 and requested_cpu(cache, "late") == 1000


def test_removed_node_row_is_recycled_after_its_pods() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    p = pod("p", node_name="a")
    cache.add_pod(p)
    cache.remove_node("a")
    assert cache.snapshot().num_nodes == 0 and "a" in cache.table.row_of
    cache.remove_pod(p)
    assert "a" not in cache.table.row_of


def test_rows_version_moves_only_when_a_row_changes_hands() -> None:
    """``NodeTable.rows_version``: a node's update (labels, allocatable) keeps it, as does removing a
    node; a new node, or a released row given to another node, moves it."""
    cache = Cache()
    cache.add_node(node("a"))
    cache.add_node(node("b"))
    t = cache.table
    v = t.rows_version
    cache.add_node(node("a", cpu="8", labels={"zone": "z1"}))
    assert t.rows_version == v and t.version > v
    cache.remove_node("b")
    assert t.rows_version == v
    cache.add_node(node("c"))           # takes b's released row
    assert t.rows_version == v + 1 and t.row_of["c"] == 1


def test_counters_track_adds_and_removes() -> None:
    cache = Cache()
    cache.add_node(node("a"))
    key = SpreadMatch("default", parse_label_selector({"matchLabels": {"app": "web"}}, "s"))
    before = pod("w0", labels={"app": "web"}, node_name="a")
    cache.add_pod(before)
    arr = cache.counter(key)
    row = cache.table.row_of["a"]
    assert arr[row] == 1
    later = pod("w1", labels={"app": "web"}, node_name="a")
    cache.add_pod(later)
    cache.add_pod(pod("x", labels={"app": "db"}, node_name="a"))
    assert cache.counter(key)[row] == 2
    cache.remove_pod(before)
    assert cache.counter(key)[row] == 1


def test_zone_interleaving_matches_upstream_example() -> None:
    cache = Cache()
    for n, z in [("n1", "z1"), ("n2", "z1"), ("n3", "z1"), ("n4", "z1"), ("n5", "z2"), ("n6", "z2")]:
        cache.add_node(node(n, labels={"topology.kubernetes.io/zone": z}))
    order = zone_interleaved(cache.table)
    assert cache.snapshot().node_names(order) == ["n1", "n5", "n2", "n6", "n3", "n4"]


def test_in_order_is_node_order_masked_by_the_rows() -> None:
    """``Snapshot.in_order`` (a PreFilter result's candidates) equals masking ``node_order`` with the
    rows, duplicates and rows of deleted nodes included, and follows the order when nodes change."""
    rng = random.Random(7)
    cache = Cache()
    names = [f"n{i}" for i in range(60)]
    for i, name in enumerate(names):
        cache.add_node(node(name, labels={"topology.kubernetes.io/zone": f"z{i % 4}"}))
    for step in range(80):
        if step % 10 == 5:
            cache.remove_node(names.pop(rng.randrange(len(names))))
            cache.add_node(node(f"m{step}", labels={"topology.kubernetes.io/zone": "z9"}))
        snap = cache.snapshot()
        # A few rows (sorted as Python ints) and more (np.unique): both ways.
        rows = np.array([rng.randrange(cache.table.capacity) for _ in range(rng.randrange(0, 12 if step % 2 else 48))],
                        np.int64)
        keep = np.zeros(cache.table.capacity, np.bool_)
        keep[rows] = True
        want = snap.node_order[keep[snap.node_order]]
        got = snap.in_order(rows)
        assert got.tolist() == want.tolist() and got.dtype == np.int64


def test_table_grows_past_initial_capacity() -> None:
    cache = Cache()
    for i in range(200):
        cache.add_node(node(f"n{i}", labels={"zone": str(i % 3)}))
    cache.add_pod(pod("p", "1", node_name="n150"))
    assert cache.snapshot().num_nodes == 200 and requested_cpu(cache, "n150") == 1000


def test_rare_resources_stay_in_the_side_table_and_keep_their_values() -> None:
    """A resource per node (SchedulingWithExtendedResource) adds no dense column: each lives in the
    sparse side table, and every node and pod keeps its amounts."""
    cache = Cache()
    t = cache.table
    for i in range(300):
        cache.add_node(node(f"n{i}", extra={f"foo.com/bar-{i}": "1"}))
        cache.add_pod(replace(pod(f"p{i}", spec={"containers": [{"name": "c", "resources": {"requests": {
            f"foo.com/bar-{i}": "1", "cpu": "1"}}}]}), node_name=f"n{i}"))
    assert len(t.resources) == 304 and t.dense_width == 4 and t.alloc.shape[1] == t.requested.shape[1] == 4
    rows = t.valid_rows()
    for i in (0, 150, 299):
        row, rid = t.row_of[f"n{i}"], t.resources[f"foo.com/bar-{i}"]
        assert t.slots[rid] == -1
        assert (t.alloc_of(rows, rid)[rows == row].tolist(), t.requested_of(rows, rid)[rows == row].tolist()) == ([1], [1])
        assert int(t.requested_of(rows, rid).sum()) == 1 and int(t.alloc_of(rows, rid).sum()) == 1
        assert t.exact_requested(row, rid) == 1 and requested_cpu(cache, f"n{i}") == 1000
    gone = t.resources["foo.com/bar-0"]
    cache.remove_pod(next(iter(t.info(t.row_of["n0"]).pods.values())))
    cache.remove_node("n0")                                   # a released row drops its entries
    assert not t.sparse[gone].alloc and not t.sparse[gone].requested


def test_a_resource_on_many_rows_moves_to_a_dense_column_with_its_values() -> None:
    """Once a resource is on ``SPARSE_MIN_ROWS`` rows it gets a dense column (the arrays double their
    width), holding what the side table held; its id stays the same."""
    from scheduler.cache.node_table import SPARSE_MIN_ROWS
    cache = Cache()
    t = cache.table
    names = [f"foo.com/r-{k}" for k in range(6)]
    for i in range(SPARSE_MIN_ROWS - 1):
        cache.add_node(node(f"n{i}", extra=dict.fromkeys(names, str(i + 1))))
    cache.add_pod(replace(pod("p", spec={"containers": [{"name": "c", "resources": {"requests": {
        names[0]: "1", "cpu": "1"}}}]}), node_name="n5"))
    rids = [t.resources[n] for n in names]
    # r-0 has 63 allocatable entries and one requested: 64, so it is dense; the others are not yet.
    assert t.slots[rids[0]] == 4 and all(t.slots[r] == -1 for r in rids[1:])
    cache.add_node(node("last", extra=dict.fromkeys(names, "1")))
    assert sorted(t.slots[r] for r in rids) == list(range(4, 10)) and t.alloc.shape[1] == 16
    rows = t.valid_rows()
    want = [t.info(r).node.allocatable[names[0]] for r in rows.tolist()]
    for rid in rids:
        assert t.alloc_of(rows, rid).tolist() == want
    assert t.requested_of(rows, rids[0]).tolist() == [int(r == t.row_of["n5"]) for r in rows.tolist()]
    assert not t.requested[:, t.dense_width:].any() and not t.alloc[:, t.dense_width:].any()


@pytest.mark.parametrize("columns_only", [False, True])
def test_what_if_restores_every_column_and_the_pod_order(columns_only: bool) -> None:
    from scheduler.cache import Cache
    from tests.builders import node, pod
    c = Cache()
    c.add_node(node("n1"))
    c.add_node(node("n2"))
    pods = [pod(f"p{i}", "500m", node_name="n1", spec={"containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m"}},
         "ports": [{"containerPort": 80, "hostPort": 8000 + i}]}]}) for i in range(3)]
    for p in pods:
        c.add_pod(p)
    t = c.table
    row = t.row_of["n1"]
    def state() -> tuple[object, ...]:
        info = t.info(row)
        order = list(info.pods) if columns_only else sorted(info.pods)   # a full undo may reorder
        return (int(t.pod_count[row]), int(t.nz_cpu[row]), {k: list(v) for k, v in info.ports.items()}, order)

    before, requested = state(), t.requested[row].copy()
    with c.lock, c.what_if(columns_only=columns_only) as w:
        for p in pods:
            w.remove(p, "n1")
        w.add(pods[1], "n1")
        w.add(pod("extra", "1"), "n2")
        w.remove(pods[1], "n1")
        assert int(t.pod_count[row]) == 0 and not t.info(row).ports
    assert (t.requested[row] == requested).all() and state() == before
    assert int(t.pod_count[t.row_of["n2"]]) == 0


# --- saturation: totals never wrap, and stay exact once pods leave (issue #12) -------------------
CAP = 2**62


def cpu_total(cache: Cache, name: str) -> tuple[int, int]:
    """(the int64 column, the exact total) of a node's requested CPU."""
    t = cache.table
    row, col = t.row_of[name], t.resources["cpu"]
    return int(t.requested[row, col]), t.exact_requested(row, col)


@pytest.mark.parametrize(("name", "cpus", "removed", "exact"), [
    ("one pod past int64 (1e16 CPUs)", ["1e16"], [], 10**19),
    ("three pods that once wrapped", ["4e15"] * 3, [], 12 * 10**18),
    ("still past CAP after one removal", ["4e15"] * 3, [0], 8 * 10**18),
    ("back below CAP after two", ["4e15"] * 3, [0, 1], 4 * 10**18),
    ("back to the true small total", ["4e15", "4e15", "1"], [0, 1], 1000),
    ("9223372036854775807 CPUs", ["9223372036854775807"], [], (2**63 - 1) * 1000),
    ("1E and 8Ei", ["1E", "8Ei"], [1], 10**21),
    ("all removed", ["1e16", "1e16", "500m"], [0, 1, 2], 0),
])
def test_requested_saturates_at_cap_and_stays_exact(name: str, cpus: list[str], removed: list[int],
                                                    exact: int) -> None:
    cache = Cache()
    cache.add_node(node("n"))
    pods = [pod(f"p{i}", cpu, node_name="n") for i, cpu in enumerate(cpus)]
    for p in pods:
        cache.add_pod(p)
    for i in removed:
        cache.remove_pod(pods[i])
    assert cpu_total(cache, "n") == (min(exact, CAP), exact), name
    t = cache.table
    row = t.row_of["n"]
    assert 0 <= int(t.nz_cpu[row]) <= CAP and 0 <= int(t.nz_mem[row]) <= CAP
    assert bool(t.info(row).over) == (exact >= CAP), name


def test_non_zero_columns_saturate_and_come_back() -> None:
    cache = Cache()
    cache.add_node(node("n"))
    from scheduler.cache import NZ_CPU, NZ_MEM
    huge = [pod(f"h{i}", "4e15", "8Ei", node_name="n") for i in range(3)]
    small = pod("s", "100m", "1Gi", node_name="n")
    for p in [*huge, small]:
        cache.add_pod(p)
    t, row = cache.table, cache.table.row_of["n"]
    assert int(t.nz_cpu[row]) == CAP and t.exact_requested(row, NZ_CPU) == 12 * 10**18 + 100
    assert int(t.nz_mem[row]) == CAP and t.exact_requested(row, NZ_MEM) == 3 * 2**63 + 2**30
    for p in huge:
        cache.remove_pod(p)
    assert int(t.nz_cpu[row]) == 100 and int(t.nz_mem[row]) == 2**30 and not t.info(row).over


@pytest.mark.parametrize("columns_only", [False, True])
def test_what_if_restores_saturated_totals(columns_only: bool) -> None:
    cache = Cache()
    cache.add_node(node("n"))
    pods = [pod(f"p{i}", "4e15", node_name="n") for i in range(3)]
    for p in pods:
        cache.add_pod(p)
    t, row = cache.table, cache.table.row_of["n"]
    before = (cpu_total(cache, "n"), dict(t.info(row).over), int(t.nz_cpu[row]))
    with cache.lock, cache.what_if(columns_only=columns_only) as w:
        w.remove(pods[0], "n")
        w.remove(pods[1], "n")
        assert cpu_total(cache, "n") == (4 * 10**18, 4 * 10**18) and not t.info(row).over
        w.add(pod("x", "1e16"), "n")
        assert cpu_total(cache, "n") == (CAP, 4 * 10**18 + 10**19)
    assert (cpu_total(cache, "n"), dict(t.info(row).over), int(t.nz_cpu[row])) == before


@pytest.mark.parametrize(("name", "cpu", "column", "big"), [
    ("ordinary", "4", 4000, False),
    ("past what x*100 keeps in int64", "1e14", 10**17, True),
    ("past CAP", "1E", CAP, True),
    ("int64 max", "9223372036854775807", CAP, True),
    ("negative is clamped to 0", "-4", 0, False),
])
def test_allocatable_is_clamped_and_big_rows_are_listed(name: str, cpu: str, column: int, big: bool) -> None:
    cache = Cache()
    cache.add_node(node("n", cpu=cpu))
    t, row = cache.table, cache.table.row_of["n"]
    assert int(t.alloc[row, t.resources["cpu"]]) == column, name
    assert (row in t.big_rows) == big, name
    cache.add_node(node("n", cpu="4"))           # an update to ordinary numbers takes the row off the list
    assert row not in t.big_rows


# --- bulk what-if moves (preemption's batched dry run) -------------------------------------------
def _row_state(cache: Cache, name: str) -> tuple[object, ...]:
    t = cache.table
    row = t.row_of[name]
    info = t.info(row)
    at = np.array([row], np.int64)
    requested = {name: int(t.requested_of(at, rid)[0]) for name, rid in t.resources.items()
                 if t.requested_of(at, rid)[0]}
    return (requested, int(t.pod_count[row]), int(t.nz_cpu[row]), int(t.nz_mem[row]),
            dict(info.over), sorted(p.name for p in info.pods.values()), {k: sorted(v) for k, v in info.ports.items()},
            info.generation)


def _bulk_pod(name: str, cpu: str, *, mem: str = "1Gi", host_port: int = 0, extra: str = "") -> Pod:
    requests = {"cpu": cpu, "memory": mem, **({extra: "1"} if extra else {})}
    container: dict[str, object] = {"name": "c", "image": "i", "resources": {"requests": requests}}
    if host_port:
        container["ports"] = [{"containerPort": 80, "hostPort": host_port}]
    return pod(name, spec={"containers": [container]})


@pytest.mark.parametrize(("name", "on_nodes", "moved"), [
    # (pods placed first: node -> cpus), (the moves: node -> pods, each "-name" removed or "+cpu" added)
    ("removals from many rows", {"n0": ["1", "2"], "n1": ["500m"], "n2": ["3", "1", "1"]},
     {"n0": ["-0", "-1"], "n1": ["-0"], "n2": ["-0", "-2"]}),
    ("one addition a row", {"n0": ["1"], "n1": []}, {"n0": ["+2"], "n1": ["+100m"]}),
    ("a saturated row takes the exact way", {"n0": ["4e15", "4e15", "4e15"], "n1": ["1"]},
     {"n0": ["-0"], "n1": ["-0"]}),
    ("an addition that saturates", {"n0": ["4e15"], "n1": []}, {"n0": ["+4e15"], "n1": ["+1"]}),
    ("an amount of 2**52 or more", {"n0": ["1"], "n1": []}, {"n0": ["+1e13"], "n1": ["+1"]}),
    ("a pod with a host port", {"n0": ["1"], "n1": []}, {"n0": ["+1:8080"], "n1": ["+1"]}),
    ("a resource without a column yet", {"n0": ["1"], "n1": []}, {"n0": ["+1:new.io/gpu"], "n1": ["+1"]}),
])
def test_move_pods_in_bulk_equals_one_by_one(name: str, on_nodes: dict[str, list[str]],
                                             moved: dict[str, list[str]]) -> None:
    """``NodeTable.move_pods`` (one array operation per column) leaves every row as ``add_pod`` one
    pod at a time does, exact fallbacks included (saturation, huge amounts, host ports, new columns)."""
    def build() -> tuple[Cache, dict[str, list[Pod]]]:
        cache = Cache()
        placed: dict[str, list[Pod]] = {}
        for n, cpus in on_nodes.items():
            cache.add_node(node(n, cpu="1E", pods="1000"))
            placed[n] = [replace(_bulk_pod(f"{n}-{i}", c), node_name=n) for i, c in enumerate(cpus)]
            for p in placed[n]:
                cache.add_pod(p)
        return cache, placed

    def moves(placed: dict[str, list[Pod]], sign: int) -> list[tuple[str, list[Pod]]]:
        out = []
        for n, ops in moved.items():
            pods = []
            for k, op in enumerate(ops):
                if op[0] != ("-" if sign < 0 else "+"):
                    continue
                if sign < 0:
                    pods.append(placed[n][int(op[1:])])
                else:
                    cpu, _, rest = op[1:].partition(":")
                    pods.append(_bulk_pod(f"{n}-new{k}", cpu, host_port=int(rest) if rest.isdigit() else 0,
                                          extra=rest if rest and not rest.isdigit() else ""))
            out.append((n, pods))
        return out

    one, placed_one = build()
    bulk, placed_bulk = build()
    for sign in (-1, +1):
        for n, pods in moves(placed_one, sign):
            for p in pods:
                one.table.add_pod(one.table.row_of[n], p, sign)
        pairs = [(bulk.table.row_of[n], pods) for n, pods in moves(placed_bulk, sign) if pods]
        bulk.table.move_pods([r for r, _ in pairs], [p for _, p in pairs], sign, bulk.pod_vectors)
    assert one.table.resources == bulk.table.resources, name
    for n in on_nodes:
        assert _row_state(one, n) == _row_state(bulk, n), (name, n)


@pytest.mark.parametrize("columns_only", [False, True])
def test_move_rows_is_undone_by_the_what_if(columns_only: bool) -> None:
    cache = Cache()
    for n in ("n0", "n1"):
        cache.add_node(node(n))
    pods = {n: [replace(_bulk_pod(f"{n}-{i}", "500m"), node_name=n) for i in range(3)] for n in ("n0", "n1")}
    for ps in pods.values():
        for p in ps:
            cache.add_pod(p)
    before = {n: _row_state(cache, n) for n in pods}
    row = cache.table.row_of
    with cache.lock, cache.what_if(columns_only=columns_only) as w:
        w.move_rows([row["n0"], row["n1"]], [pods["n0"], pods["n1"]], -1)
        assert int(cache.table.pod_count[row["n0"]]) == 0
        w.move_rows([row["n1"]], [[pods["n1"][0]]], +1)
        assert requested_cpu(cache, "n1") == 500
        w.add(pods["n0"][1], "n0")                          # one at a time on a row moved in bulk
        w.move_rows([row["n0"]], [[_bulk_pod("gpu", "1", extra="new.io/gpu")]], +1)    # a new column
        assert int(cache.table.pod_count[row["n0"]]) == 2
    # a full undo re-places pods, which counts as a change (generation); columns_only puts rows back whole
    after = {n: _row_state(cache, n) for n in pods}
    assert after == before if columns_only else {n: s[:-1] for n, s in after.items()} == {
        n: s[:-1] for n, s in before.items()}
    gpu = cache.table.resources["new.io/gpu"]
    assert not cache.table.requested_of(cache.table.valid_rows(), gpu).any()


def test_unlocked_lets_another_thread_in_and_restores_the_depth() -> None:
    """A cycle holds the lock (here twice, as nested calls do) and lets go of it for an extender's
    call: another thread (an informer) updates the cache meanwhile, and the cycle gets the lock back
    at the depth it had."""
    import threading

    c = Cache()
    added = threading.Event()

    def informer() -> None:
        with c.lock:
            c.add_node(node("late"))
        added.set()
    with c.lock, c.lock:
        t = threading.Thread(target=informer)
        t.start()
        assert not added.wait(0.2)              # held: the informer waits
        with c.unlocked():
            assert added.wait(5)                # let go of: it gets in
        t.join()
        assert c.snapshot().row_of("late") is not None
    free: list[bool] = []                       # released as often as taken: free for another thread
    probe = threading.Thread(target=lambda: free.append(c.lock.acquire(blocking=False)))
    probe.start()
    probe.join()
    assert free == [True]
    with c.unlocked():                          # without the lock: nothing to let go of
        pass


# --- the watch confirming an assumed pod -----------------------------------------------------------
def _rich_pod(name: str, **kw: object) -> Pod:
    """A pod every part of the cache counts: requests, host ports, labels and affinity terms."""
    term = {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}
    return pod(name, "500m", labels={"app": "web"}, spec={
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                        "ports": [{"containerPort": 80, "hostPort": 8080}]}],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}}, **kw)


def _cache_state(c: Cache, uid: str) -> tuple[object, ...]:
    t = c.table
    key = SpreadMatch("default", parse_label_selector({"matchLabels": {"app": "web"}}, "s"))
    holders = {k: {repr(term): dict(rows) for term, rows in v.items()} for k, v in c.holders.by_kind.items()}
    return (t.requested.copy().tolist(), t.nz_cpu.tolist(), t.nz_mem.tolist(), t.pod_count.tolist(),
            [dict(i.ports) if i is not None else None for i in t.infos], c.counter(key).tolist(), holders,
            t.mutations, c.pod_count(), c.is_assumed(uid))


@pytest.mark.parametrize(("case", "confirmed"), [
    ("as assumed: kept in place", lambda p: p.with_fields(node_name="a", phase="Pending")),
    ("another node: moved", lambda p: p.with_fields(node_name="b")),
    ("other requests: counted anew", lambda p: p.with_fields(node_name="a", requests={"cpu": 900})),
])
def test_confirming_an_assumed_pod_counts_it_as_adding_it_bound(case: str, confirmed: object) -> None:
    """``Cache.add_pod`` of an assumed pod: the cache ends as if the confirmed pod had been added
    bound from the start, whatever path it takes (kept in place when it places as assumed)."""
    def fresh() -> Cache:
        c = Cache()
        c.add_node(node("a"))
        c.add_node(node("b"))
        c.add_pod(_rich_pod("other", node_name="b"))
        return c

    p = _rich_pod("p")
    final = confirmed(p)  # type: ignore[operator]
    via_assume = fresh()
    via_assume.assume_pod(p, "a")
    mutations = via_assume.table.mutations
    swapped: list[str] = []
    swap = via_assume.table.swap_pod
    via_assume.table.swap_pod = lambda row, q: (swapped.append(q.uid), swap(row, q))[1]  # type: ignore[method-assign]
    via_assume.add_pod(final)
    assert swapped == ([p.uid] if case.startswith("as assumed") else []), case
    direct = fresh()
    direct.add_pod(final)
    got, want = _cache_state(via_assume, p.uid), _cache_state(direct, p.uid)
    assert got[:-3] == want[:-3], case                  # every column, counter and holder
    assert got[-2:] == want[-2:], case                  # one pod, not assumed
    assert via_assume.get_pod(p.uid) is final
    row = via_assume.table.row_of[final.node_name]
    assert via_assume.table.info(row).pods[p.uid] is final
    if case.startswith("as assumed"):
        assert via_assume.table.mutations == mutations  # no cycle's reading changed
    via_assume.remove_pod(final)
    direct.remove_pod(final)
    assert _cache_state(via_assume, p.uid)[:-3] == _cache_state(direct, p.uid)[:-3]
