from dataclasses import replace

import pytest

from scheduler.cache import Cache, SpreadMatch, zone_interleaved
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


def test_table_grows_past_initial_capacity() -> None:
    cache = Cache()
    for i in range(200):
        cache.add_node(node(f"n{i}", labels={"zone": str(i % 3)}))
    cache.add_pod(pod("p", "1", node_name="n150"))
    assert cache.snapshot().num_nodes == 200 and requested_cpu(cache, "n150") == 1000


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
