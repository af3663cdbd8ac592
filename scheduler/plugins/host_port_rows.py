"""``HostPortRows``: NodePorts' per-node state as an index, so its Filter is a few array lookups over
the candidate rows instead of a Python call per candidate node.

Upstream keeps a ``HostPortInfo`` per node (host IP -> the ``(protocol, port)`` pairs in use) and
its ``CheckConflict`` asks it, for each node, about each port the pod wants: the same protocol and
port, and the same host IP or ``0.0.0.0`` on either side. At 20,000 nodes (batching's
HostPortConflict) that walk was most of a cycle. Here the question is turned around: for each *key*
the rows where it is in use, where a key is

* ``(protocol, port, ip)``: some pod on the row holds the port on host IP ``ip`` (``0.0.0.0``
  included, as a key of its own), and
* ``(protocol, port, None)``: some pod on the row holds the port, on any host IP.

A wanted port on ``0.0.0.0`` conflicts where its ``None`` key is in use; a wanted port on another IP
where its own key or its ``0.0.0.0`` key is. So a pod's verdict over the candidate rows is one lookup
per wanted key, OR-ed: no loop over nodes. (The parser has already defaulted an empty host IP to
``0.0.0.0`` and an empty protocol to TCP, as ``HostPortInfo.sanitize``.)

**The rows of a key** are a set while few (most keys: one port on a handful of nodes) and a bool
column over the table's rows once ``DENSE_AT`` rows hold it (HostPortConflict's ``TCP/80``, on every
node by the end), back to a set once fewer than ``SPARSE_AT`` do, so a cluster of many distinct ports
costs a set each, not a column each; the gap between the two bounds keeps a key near one of them
from flipping on every pod.

**Keeping it current** is done as ``AttachCounts`` (NodeVolumeLimits) does it: the node table bumps
``pod_epochs[row]`` on every change to a row's pods (adds, removes, a what-if's moves and its
restore, and the row given to or taken from a node; never put back), and a row is read again from
its ``NodeInfo.ports`` when its epoch is not the one it was read at: lazily, only when it is a
candidate, which in a stream of pods is the row the previous pod went to. Only the keys a row
gained or lost are touched. A table the index has not seen (another cache) starts it over.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import numpy.typing as npt

from scheduler.cache.node_table import NodeTable
from scheduler.model import HostPort

__all__ = ["DENSE_AT", "SPARSE_AT", "HostPortRows", "Key"]

# (protocol, port, host IP), or (protocol, port, None): any host IP
Key = tuple[str, int, str | None]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
ANY_IP = "0.0.0.0"
# A key's rows become a column once this many rows hold it, and a set again below SPARSE_AT.
DENSE_AT = 64
SPARSE_AT = 16
_NO_KEYS: frozenset[Key] = frozenset()
# Distinct key sets kept shared before the table of them starts over.
_INTERN_LIMIT = 1 << 14


def keys_of(ports: Mapping[tuple[str, int], Iterable[str]]) -> frozenset[Key]:
    """The keys a row's ``NodeInfo.ports`` holds (module doc)."""
    out: set[Key] = set()
    for (protocol, port), ips in ports.items():
        if not ips:
            continue
        out.add((protocol, port, None))
        for ip in ips:
            out.add((protocol, port, ip))
    return frozenset(out)


def wanted_keys(wanted: Iterable[HostPort]) -> list[Key]:
    """The keys whose rows conflict with some port of ``wanted`` (``HostPortInfo.CheckConflict``):
    ``0.0.0.0`` conflicts with any IP of the same protocol and port, another IP with itself and
    ``0.0.0.0``."""
    out: dict[Key, None] = {}
    for p in wanted:
        if p.port <= 0:          # upstream's CheckConflict: a port of 0 conflicts with nothing
            continue
        if p.host_ip == ANY_IP:
            out[(p.protocol, p.port, None)] = None
        else:
            out[(p.protocol, p.port, p.host_ip)] = None
            out[(p.protocol, p.port, ANY_IP)] = None
    return list(out)


class HostPortRows:
    """The rows where each host-port key is in use, for one node table (module doc); ``conflicts``
    brings the candidate rows up to date and answers for all of them at once."""

    def __init__(self) -> None:
        self._table: NodeTable | None = None
        self._reset(0)

    def _reset(self, capacity: int) -> None:
        self._capacity = capacity
        self._seen = np.full(capacity, -1, np.int64)      # the pod epoch each row was read at
        self._keys: list[frozenset[Key]] = [_NO_KEYS] * capacity
        # One object per distinct key set, shared by the rows that hold it: at 20,000 nodes each
        # holding TCP/80, a set per row was 9 MiB.
        self._interned: dict[frozenset[Key], frozenset[Key]] = {}
        self._sets: dict[Key, set[int]] = {}
        self._cols: dict[Key, BoolArray] = {}
        self._col_rows: dict[Key, int] = {}               # how many rows a column holds

    def _grow(self, capacity: int) -> None:
        old = self._capacity
        seen = np.full(capacity, -1, np.int64)
        seen[:old] = self._seen
        self._seen = seen
        for key, col in self._cols.items():
            out = np.zeros(capacity, np.bool_)
            out[:old] = col
            self._cols[key] = out
        self._keys.extend([_NO_KEYS] * (capacity - old))
        self._capacity = capacity

    # --- keeping current ---------------------------------------------------------------------
    def sync(self, table: NodeTable, rows: IntArray) -> None:
        """Read again each of ``rows`` whose pods changed since it was read."""
        if table is not self._table:
            self._table = table
            self._reset(table.capacity)
        elif table.capacity != self._capacity:
            self._grow(table.capacity)
        stale = rows[self._seen[rows] != table.pod_epochs[rows]]
        if not stale.size:
            return
        infos, epochs, keys = table.infos, table.pod_epochs, self._keys
        for row in stale.tolist():
            self._seen[row] = epochs.item(row)
            info = infos[row]
            new = keys_of(info.ports) if info is not None and info.ports else _NO_KEYS
            old = keys[row]
            if new == old:
                continue
            shared = self._interned.get(new)
            if shared is None:
                if len(self._interned) >= _INTERN_LIMIT:
                    self._interned.clear()
                shared = self._interned[new] = new
            keys[row] = shared
            for key in old - new:
                self._discard(key, row)
            for key in new - old:
                self._add(key, row)

    def _add(self, key: Key, row: int) -> None:
        col = self._cols.get(key)
        if col is not None:
            col[row] = True
            self._col_rows[key] += 1
            return
        held = self._sets.get(key)
        if held is None:
            held = self._sets[key] = set()
        held.add(row)
        if len(held) >= DENSE_AT:
            col = np.zeros(self._capacity, np.bool_)
            col[np.fromiter(held, np.int64, len(held))] = True
            self._cols[key] = col
            self._col_rows[key] = len(held)
            del self._sets[key]

    def _discard(self, key: Key, row: int) -> None:
        col = self._cols.get(key)
        if col is not None:
            col[row] = False
            left = self._col_rows[key] = self._col_rows[key] - 1
            if left < SPARSE_AT:
                del self._cols[key], self._col_rows[key]
                if left:
                    self._sets[key] = set(np.flatnonzero(col).tolist())
            return
        held = self._sets.get(key)
        if held is not None:
            held.discard(row)
            if not held:
                del self._sets[key]

    # --- reads -------------------------------------------------------------------------------
    def holding(self, key: Key, rows: IntArray) -> BoolArray | None:
        """Which of ``rows`` (read by ``sync``) hold ``key``; ``None`` when no row does."""
        col = self._cols.get(key)
        if col is not None:
            out: BoolArray = col[rows]
            return out
        held = self._sets.get(key)
        if not held:
            return None
        if len(held) == 1:
            out = rows == next(iter(held))
            return out
        full = np.zeros(self._capacity, np.bool_)
        full[np.fromiter(held, np.int64, len(held))] = True
        out = full[rows]
        return out

    def conflicts(self, table: NodeTable, wanted: Iterable[HostPort], rows: IntArray) -> BoolArray:
        """Per row of ``rows``: does some port of ``wanted`` conflict with a port in use there."""
        failed: BoolArray = np.zeros(len(rows), np.bool_)
        keys = wanted_keys(wanted)
        if not keys or not len(rows):
            return failed
        self.sync(table, rows)
        for key in keys:
            got = self.holding(key, rows)
            if got is not None:
                failed |= got
        return failed

    def keys_at(self, row: int) -> frozenset[Key]:
        """The keys ``row`` held when ``sync`` last read it."""
        return self._keys[row] if row < self._capacity else _NO_KEYS

    def rows_of(self, key: Key) -> set[int]:
        """Every row the index holds ``key`` on (tests and debugging; rows not synced may be stale)."""
        col = self._cols.get(key)
        if col is not None:
            return set(np.flatnonzero(col).tolist())
        return set(self._sets.get(key, ()))
