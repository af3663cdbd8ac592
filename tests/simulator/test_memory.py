"""What the simulated cluster keeps per object (docs/benchmarks.md, "The simulated cluster's memory"):
memo keys at their exact size, one FieldsV1 tree shared by objects that differ only in scalars, and
what a node costs all told (``node_bytes``, also the measurement's tool at full size)::

    PYTHONPATH=. python -c "from tests.simulator.test_memory import node_bytes; print(node_bytes(50000))"
"""

from __future__ import annotations

import asyncio
import copy
import gc
import tracemalloc
from pathlib import Path
from typing import Any

import orjson

from scheduler.benchmark.templates import make_node
from scheduler.simulator import managed
from scheduler.simulator.interfaces import Writer
from scheduler.simulator.server import ApiServer
from scheduler.simulator.typecheck import content_key, memo_bytes
from tests.simulator.helpers import pod


def _kept_bytes(make: Any, n: int = 200) -> float:
    """Traced bytes per object that ``make(i)`` returns, all ``n`` kept alive."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        kept = [make(i) for i in range(n)]
        per = (tracemalloc.get_traced_memory()[0] - before) / n
    finally:
        tracemalloc.stop()
    assert len(kept) == n
    return per


def test_a_memo_key_holds_its_own_length_not_orjsons_buffer() -> None:
    value = {"name": "scheduler-perf-1", "labels": {"kubernetes.io/hostname": "scheduler-perf-1"}}
    data = orjson.dumps(value)
    assert memo_bytes(data) == data
    assert _kept_bytes(lambda i: memo_bytes(orjson.dumps({**value, "i": i}))) < len(data) + 100
    key = content_key(object(), value)
    assert key is not None and key[1] == data
    assert _kept_bytes(lambda i: content_key(value, {**value, "i": i})) < len(data) + 200


def _node(i: int, ip: int | None = None) -> dict[str, Any]:
    n = make_node(f"scheduler-perf-{i}", {"zone": f"z{i % 3}"})
    n["metadata"]["annotations"] = {"note": str(i) * (i % 4)}
    n["status"]["nodeInfo"] = {"machineID": f"m{i}", "bootID": str(i)}
    # a list is kept as it is (its items' keys are values): the same for the nodes meant to share
    n["status"]["addresses"] = [{"type": "InternalIP", "address": f"10.0.0.{i if ip is None else ip}"}]
    return n


def test_objects_differing_in_map_scalars_share_the_tree_they_would_each_build() -> None:
    node_schema = managed.kind_schema("", "v1", "Node", None)
    pod_schema = managed.kind_schema("", "v1", "Pod", None)
    pods = []
    for i in range(6):
        p = pod(f"p{i}", labels={"app": "web", "rev": str(i)}, node_name=f"n{i}" if i % 2 else "")
        p["status"] = {"phase": "Running", "podIP": f"10.1.0.{i}", "conditions": [
            {"type": "Ready", "status": "True" if i % 2 else "False"}]}
        pods.append(p)
    for schema, objs in ((node_schema, [_node(i) for i in range(6)]), (pod_schema, pods)):
        for status in (None, True, False):
            trees = [managed.fields_v1_of(o, schema, status=status) for o in objs]
            for o, tree in zip(objs, trees, strict=True):     # the cached tree is the one the walk builds
                assert tree == managed._fields_v1_of(copy.deepcopy(o), schema, status)
    a, b = (managed.fields_v1_of(_node(i, ip=1), node_schema) for i in (7, 8))
    assert a is b                                             # one tree, shared
    other = _node(9, ip=1)
    other["status"]["addresses"][0]["type"] = "Hostname"      # an item's key is a value the tree spells
    assert managed.fields_v1_of(other, node_schema)["f:status"]["f:addresses"] == {
        'k:{"type":"Hostname"}': {".": {}, "f:address": {}, "f:type": {}}}


def _rss() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def node_bytes(n: int, *, traced: bool = False, warm: int = 300) -> dict[str, float]:
    """Bytes a node costs the simulated cluster: ``n`` nodes of bench's template created through
    ``ApiServer.create`` as a request creates them (its field manager, validation, admission, the
    watch history), after ``warm`` nodes that fill the bounded memos. ``rss``: the growth of VmRSS
    over ``n`` (after ``gc``); ``traced``: tracemalloc's count (slower, and without fragmentation)."""
    async def run() -> dict[str, float]:
        server = ApiServer()
        rt, writer = server.rt("", "v1", "nodes"), Writer("Go-http-client")
        for i in range(warm):
            server.create(rt, "", make_node(f"warm-{i}"), fresh=True, writer=writer)
        gc.collect()
        if traced:
            tracemalloc.start()
        rss0, traced0 = _rss(), tracemalloc.get_traced_memory()[0]
        for i in range(n):
            server.create(rt, "", make_node(f"scheduler-perf-{i}"), fresh=True, writer=writer)
        gc.collect()
        out = {"nodes": n, "rssPerNode": (_rss() - rss0) / n, "rssBytes": _rss(),
               "history": len(server.store.bucket(rt.store).history)}
        if traced:
            out["tracedPerNode"] = (tracemalloc.get_traced_memory()[0] - traced0) / n
            tracemalloc.stop()
        return out
    return asyncio.run(run())


def test_a_node_costs_the_cluster_a_few_kilobytes() -> None:
    # kube-apiserver keeps ~10-20 KiB a node with its watch cache; ours, with its history entry, ~5 KB
    # (docs/benchmarks.md), where orjson's kept buffers and a tree per node made it ~16 KB.
    got = node_bytes(500, traced=True)
    assert got["history"] == 800
    assert 1_000 < got["tracedPerNode"] < 8 * 1024, got


class _Timers:
    """``Timers.later`` recorded, not run: the test fires them as its clock passes them."""

    def __init__(self) -> None:
        self.pending: list[tuple[float, Any]] = []

    def later(self, delay: float, fn: Any) -> None:
        self.pending.append((delay, fn))

    def fire(self) -> None:
        due, self.pending = self.pending, []
        for _, fn in due:
            fn()


def _event(name: str, reason: str = "Scheduled") -> dict[str, Any]:
    return {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": name}, "reason": reason,
            "note": f"Successfully assigned default/{name} to n1", "type": "Normal", "action": "Binding",
            "reportingController": "kopf-scheduler", "reportingInstance": "kopf-scheduler-1",
            "eventTime": "2026-12-07T10:00:00.000000Z", "regarding": {"kind": "Pod", "name": name,
                                                                       "namespace": "default"}}


def test_events_expire_their_ttl_after_their_last_write_and_watchers_see_them_go() -> None:
    # kube-apiserver: --event-ttl (1h), a lease renewed by every create and update (TTLFunc).
    from scheduler.simulator.controllers.eventttl import DEFAULT_EVENT_TTL, EventTTL

    async def run() -> None:
        server = ApiServer()
        assert server.controllers.event_ttl.ttl == DEFAULT_EVENT_TTL == 3600.0
        now = [0.0]
        timers = _Timers()
        ttl = EventTTL(server, timers, ttl=60.0, clock=lambda: now[0])
        server.store.listeners.append(ttl.on_event)
        new, core = server.rt("events.k8s.io", "v1", "events"), server.rt("", "v1", "events")
        for name in ("a", "b", "c"):
            server.create(new, "default", _event(name), fresh=True)
            now[0] += 10.0
        assert [d for d, _ in timers.pending] == [60.0]           # one timer, for the oldest
        old_b = server.store.get(core, "default", "b")
        assert old_b is not None
        server.write(core, old_b, {**old_b, "count": 2})           # b's lease starts again at t=30
        server.remove(core, server.store.get(core, "default", "c"))  # c deleted: nothing left to expire
        now[0] = 60.0
        timers.fire()
        assert server.store.get(core, "default", "a") is None      # written at 0: gone at 60
        assert server.store.get(core, "default", "b") is not None
        assert [round(d, 6) for d, _ in timers.pending] == [30.0]  # b's deadline, 90
        rv = server.store.rv
        now[0] = 90.0
        timers.fire()
        assert server.store.get(core, "default", "b") is None and not ttl.deadlines and not timers.pending
        deleted = server.store.since(core, rv)
        assert deleted is not None and [(e.type, e.obj["metadata"]["name"]) for e in deleted] == [("DELETED", "b")]
        server.create(new, "default", _event("a"), fresh=True)     # a name used again: a lease of its own
        assert list(ttl.deadlines) == [("default", "a")] and [d for d, _ in timers.pending] == [60.0]
    asyncio.run(run())
