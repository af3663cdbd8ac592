"""NodePorts' index of rows by host port (``plugins.host_port_rows``) against the rule it replaced.

``reference`` is the per-node rule NodePorts ran before the index, twice over: upstream's
``HostPortInfo.CheckConflict`` (``nodeports.ports_conflict``) over the ports of every pod the node
holds, and ``NodeInfo.port_conflicts`` over the node's port table. Seeded random histories of a
small cluster (pods placed, assumed, forgotten and removed, pods bound to nodes not seen yet, what-ifs
of both kinds and their restore, nodes added, updated and removed, rows recycled) must give, after
every step, the same verdict on every node from the index as from the reference, both over all the
nodes and over a random subset (a sampled search reads only some rows). The histories run with the
real set/column bounds and with tiny ones, so that keys move between the two forms all the time.

Then upstream's ``HostPortInfo`` tables (``staging/src/k8s.io/kube-scheduler/framework/types_test.go``,
once ``pkg/scheduler/framework/types_test.go``: ``TestHostPortInfo_AddRemove``,
``TestHostPortInfo_Check``), run on a row of the node table and the index. ``test_nodeports`` holds
``node_ports_test.go``'s tables, through the plugin.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache, NodeTable
from scheduler.errors import ParseError
from scheduler.framework import CycleState
from scheduler.model import HostPort, Pod
from scheduler.plugins import host_port_rows
from scheduler.plugins.host_port_rows import HostPortRows
from scheduler.plugins.nodeports import NodePorts, ports_conflict
from tests.builders import node, pod

NODES = [f"node-{i}" for i in range(7)]
PROTOCOLS = ["TCP", "UDP", "SCTP", ""]          # "" defaults to TCP
IPS = ["0.0.0.0", "", "10.0.0.1", "10.0.0.2"]   # "" defaults to 0.0.0.0
PORTS = [80, 81, 8080]


def port_pod(name: str, *ports: tuple[str, str, int], node_name: str = "") -> Pod:
    """A pod with one container holding ``(protocol, hostIP, hostPort)`` ports, as the API sends them."""
    spec: list[dict[str, Any]] = [{"containerPort": port, "hostPort": port, "hostIP": ip, "protocol": protocol}
                                  for protocol, ip, port in ports]
    return pod(name, node_name=node_name, spec={"containers": [{"name": "c", "image": "i", "ports": spec}]})


def reference(cache: Cache, wanted: Pod, names: list[str]) -> list[bool]:
    """Per node of ``names``: does ``wanted`` conflict there, by the per-node rules (module doc)."""
    out = []
    for name in names:
        info = cache.table.info(cache.table.row_of[name])
        used = [p for held in info.pods.values() for p in held.host_ports]
        by_check = ports_conflict(wanted.host_ports, used)
        assert info.port_conflicts(wanted.host_ports) == by_check, name
        out.append(by_check)
    return out


def columnar(plugin: NodePorts, cache: Cache, wanted: Pod, names: list[str]) -> list[bool]:
    snap = cache.snapshot()
    rows = np.array([snap.table.row_of[n] for n in names], np.int64)
    if not wanted.host_ports:
        return [False] * len(names)
    v = plugin.filter_nodes(CycleState(), wanted, snap, rows)
    return [bool(f) for f in v.failed]


class World:
    """A small cluster whose pods and nodes a seeded random history changes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.cache = Cache()
        self.plugin = NodePorts()
        self.placed: dict[str, Pod] = {}        # uid -> the pod as the cache holds it (node_name set)
        self.assumed: set[str] = set()
        self.serial = 0
        for name in NODES[:5]:
            self.cache.add_node(node(name))

    def make_pod(self) -> Pod:
        self.serial += 1
        rng = self.rng
        ports = [(rng.choice(PROTOCOLS), rng.choice(IPS), rng.choice(PORTS)) for _ in range(rng.choice((0, 1, 1, 2, 3)))]
        return port_pod(f"p-{self.serial}", *ports)

    def live_nodes(self) -> list[str]:
        t = self.cache.table
        return [n for n in NODES if n in t.row_of and t.valid[t.row_of[n]]]

    def step(self) -> None:
        rng, r, cache = self.rng, self.rng.random(), self.cache
        nodes = self.live_nodes()
        if (r < 0.35 or not self.placed) and nodes:
            p = self.make_pod()
            if rng.random() < 0.3:
                placed = cache.assume_pod(p, rng.choice(nodes))
                self.assumed.add(p.uid)
            else:
                # now and then bound to a node the cache has not seen (a placeholder row)
                placed = replace(p, node_name=rng.choice(NODES if rng.random() < 0.1 else nodes))
                cache.add_pod(placed)
            self.placed[p.uid] = placed
        elif r < 0.55 and self.placed:
            uid = rng.choice(sorted(self.placed))
            p = self.placed.pop(uid)
            if uid in self.assumed and rng.random() < 0.5:
                cache.forget_pod(p)
            else:
                cache.remove_pod(p)
            self.assumed.discard(uid)
        elif r < 0.65:
            name = rng.choice(NODES)
            if name in nodes and rng.random() < 0.5:
                cache.remove_node(name)
            else:       # added, or updated (its pods are kept), or back after its removal
                cache.add_node(node(name, labels={"v": str(rng.randint(0, 3))}))
        else:
            self.what_if()

    def check(self, pods: int = 3) -> None:
        nodes = self.live_nodes()
        if not nodes:
            return
        for _ in range(pods):
            wanted = self.make_pod()
            with self.cache.lock:
                subset = sorted(self.rng.sample(nodes, self.rng.randint(1, len(nodes))))
                for names in (subset, nodes):
                    got = columnar(self.plugin, self.cache, wanted, names)
                    assert got == reference(self.cache, wanted, names), (wanted.host_ports, names)

    def what_if(self) -> None:
        """Checks inside a what-if (preemption's dry run: pods removed, some put back, a preemptor
        placed) and after its restore."""
        rng = self.rng
        with self.cache.lock:
            live = self.live_nodes()
            by_row: dict[int, list[Pod]] = {}
            for p in self.placed.values():
                if p.node_name in live and rng.random() < 0.5:
                    by_row.setdefault(self.cache.table.row_of[p.node_name], []).append(p)
            with self.cache.what_if(columns_only=rng.random() < 0.5) as w:
                if rng.random() < 0.5:
                    rows = sorted(by_row)
                    w.move_rows(rows, [by_row[r] for r in rows], -1)
                else:
                    for ps in by_row.values():
                        for p in ps:
                            w.remove(p, p.node_name)
                self.check(2)
                for ps in list(by_row.values())[: len(by_row) // 2]:
                    for p in ps:
                        w.add(p, p.node_name)
                if live:
                    w.add(replace(self.make_pod(), node_name=(target := rng.choice(live))), target)
                self.check(2)
            self.check(2)


@pytest.mark.parametrize("bounds", [(host_port_rows.DENSE_AT, host_port_rows.SPARSE_AT), (3, 2), (1, 1)],
                         ids=["real-bounds", "tiny-bounds", "always-columns"])
@pytest.mark.parametrize("seed", range(8))
def test_index_gives_the_per_node_verdicts(seed: int, bounds: tuple[int, int], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(host_port_rows, "DENSE_AT", bounds[0])
    monkeypatch.setattr(host_port_rows, "SPARSE_AT", bounds[1])
    world = World(random.Random(seed))
    world.check()
    for _ in range(150):
        world.step()
        world.check()


def test_a_port_on_every_node_becomes_a_column_and_back() -> None:
    """HostPortConflict in small: port 80 placed on node after node, past the set-to-column bound and
    the table's growth (64 rows), then removed in random order past the column-to-set bound; the
    verdict over every node is the per-node rule's all along."""
    cache, plugin = Cache(), NodePorts()
    names = [f"n{i}" for i in range(150)]
    for name in names:
        cache.add_node(node(name))
    wanted = port_pod("want", ("TCP", "0.0.0.0", 80))
    placed = []
    for i, name in enumerate(names[:120]):
        p = port_pod(f"p{i}", ("TCP", "0.0.0.0", 80), node_name=name)
        cache.add_pod(p)
        placed.append(p)
        if i % 7 == 0 or i in (62, 63, 64):
            with cache.lock:
                assert columnar(plugin, cache, wanted, names) == reference(cache, wanted, names)
    assert ("TCP", 80, None) in plugin._rows._cols
    for i in range(150, 300):       # the table grows with a column in the index
        cache.add_node(node(f"n{i}"))
    names += [f"n{i}" for i in range(150, 300)]
    random.Random(0).shuffle(placed)
    for i, p in enumerate(placed):
        cache.remove_pod(p)
        if i % 7 == 0 or len(placed) - i - 1 in (15, 16, 17, 0):
            with cache.lock:
                assert columnar(plugin, cache, wanted, names) == reference(cache, wanted, names)
    assert plugin._rows.rows_of(("TCP", 80, None)) == set()
    assert not plugin._rows._cols and not plugin._rows._sets


def test_one_plugin_over_two_caches() -> None:
    """A plugin that meets another node table starts its index over (rows of one cache mean nothing
    in another), and again when it comes back."""
    plugin = NodePorts()
    wanted = port_pod("want", ("TCP", "0.0.0.0", 80))
    caches = [Cache(), Cache()]
    for k, cache in enumerate(caches):
        for name in ("a", "b"):
            cache.add_node(node(name))
        cache.add_pod(port_pod(f"p{k}", ("TCP", "0.0.0.0", 80), node_name="ab"[k]))
    for cache in (*caches, *caches):
        with cache.lock:
            assert columnar(plugin, cache, wanted, ["a", "b"]) == reference(cache, wanted, ["a", "b"])


# --- types_test.go: TestHostPortInfo_AddRemove and TestHostPortInfo_Check -----------------------------
# Upstream adds and removes (protocol, ip, port) entries of one HostPortInfo; here they are one pod's
# ports added to (and a pod's removed from) a row of the node table, and Len is the number of
# (protocol, port, ip) keys the index holds on that row. Upstream's Add ignores a port <= 0; our pods
# never have one (``test_ports_at_or_below_zero``), so those entries are left out of the pods.
Param = tuple[str, str, int]     # (protocol, ip, port) as hostPortInfoParam


def _row_keys(added: list[Param], removed: list[Param]) -> tuple[HostPortRows, NodeTable, int]:
    table = NodeTable()
    row = table.set_node(node("n")).row
    kept = [p for p in added if p[2] > 0]
    table.add_pod(row, port_pod("p", *kept), +1)
    if removed:
        table.add_pod(row, port_pod("p", *removed), -1)
    index = HostPortRows()
    index.sync(table, np.array([row], np.int64))
    return index, table, row


ADD_REMOVE = [
    ("normal add case",
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
      ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82),
      ("TCP", "0.0.0.0", 0), ("TCP", "0.0.0.0", -1)], [], 8),
    ("empty ip and protocol add should work",
     [("", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82),
      ("", "", 79), ("UDP", "", 80), ("", "", 81), ("", "", 82), ("", "", 0), ("", "", -1)], [], 8),
    ("normal remove case",
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
      ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
      ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)], 0),
    ("empty ip and protocol remove should work",
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82),
      ("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
     [("", "127.0.0.1", 79), ("", "127.0.0.1", 81), ("", "127.0.0.1", 82), ("UDP", "127.0.0.1", 80),
      ("", "", 79), ("", "", 81), ("", "", 82), ("UDP", "", 80)], 0),
]


@pytest.mark.parametrize(("name", "added", "removed", "length"), ADD_REMOVE, ids=[c[0] for c in ADD_REMOVE])
def test_host_port_info_add_remove(name: str, added: list[Param], removed: list[Param], length: int) -> None:
    index, _, row = _row_keys(added, removed)
    held = index.keys_at(row)
    assert len([k for k in held if k[2] is not None]) == length, name
    # the any-IP keys are exactly the (protocol, port) pairs of those entries
    assert {k for k in held if k[2] is None} == {(k[0], k[1], None) for k in held if k[2] is not None}


CHECK = [
    ("empty check should check 0.0.0.0 and TCP", [("TCP", "127.0.0.1", 80)], ("", "", 81), False),
    ("empty check should check 0.0.0.0 and TCP (conflicted)", [("TCP", "127.0.0.1", 80)], ("", "", 80), True),
    ("empty port check should pass", [("TCP", "127.0.0.1", 80)], ("", "", 0), False),
    ("0.0.0.0 should check all registered IPs", [("TCP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), True),
    ("0.0.0.0 with different protocol should be allowed", [("UDP", "127.0.0.1", 80)], ("TCP", "0.0.0.0", 80), False),
    ("0.0.0.0 with different port should be allowed",
     [("TCP", "127.0.0.1", 79), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)], ("TCP", "0.0.0.0", 80), False),
    ("normal ip should check all registered 0.0.0.0", [("TCP", "0.0.0.0", 80)], ("TCP", "127.0.0.1", 80), True),
    ("normal ip with different port/protocol should be allowed (0.0.0.0)",
     [("TCP", "0.0.0.0", 79), ("UDP", "0.0.0.0", 80), ("TCP", "0.0.0.0", 81), ("TCP", "0.0.0.0", 82)],
     ("TCP", "127.0.0.1", 80), False),
    ("normal ip with different port/protocol should be allowed",
     [("TCP", "127.0.0.1", 79), ("UDP", "127.0.0.1", 80), ("TCP", "127.0.0.1", 81), ("TCP", "127.0.0.1", 82)],
     ("TCP", "127.0.0.1", 80), False),
]


@pytest.mark.parametrize(("name", "added", "check", "expect"), CHECK, ids=[c[0] for c in CHECK])
def test_host_port_info_check(name: str, added: list[Param], check: Param, expect: bool) -> None:
    """CheckConflict(ip, protocol, port), sanitized as upstream sanitizes it ("" is 0.0.0.0 and TCP);
    a port of 0 is no host port, so such a pod asks for none."""
    index, table, row = _row_keys(added, [])
    protocol, ip, port = check
    wanted = (HostPort(protocol or "TCP", ip or "0.0.0.0", port),)
    assert bool(index.conflicts(table, wanted, np.array([row], np.int64))[0]) is expect, name
    if port > 0:
        assert port_pod("w", check).host_ports == wanted
    else:
        assert port_pod("w", check).host_ports == ()


def test_ports_at_or_below_zero() -> None:
    """Where upstream's HostPortInfo.Add ignores a port <= 0, a hostPort of 0 is no host port here
    and a negative one is refused when the pod is read (the API server's validation)."""
    assert port_pod("p", ("TCP", "0.0.0.0", 0)).host_ports == ()
    with pytest.raises(ParseError):
        port_pod("p", ("TCP", "0.0.0.0", -1))
