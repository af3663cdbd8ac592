"""The scheduler cache: nodes and assigned pods, with optimistic assumptions.

A pod's life in the cache, as upstream's ``backend/cache``::

                 +-------------------------------------------+  +----+
                 |                 Add                       |  |    | Update
                 +      Assume             Add               v  v    |
        Initial +--------> Assumed +------------+------>  Added <----+
           ^                 +   +              |           +
           |                 |   |              | Add       | Remove
           |          Forget |   | Expire       |           |
           +-----------------+   +-------> Expired          +----> Deleted

* **Assume**: the scheduling cycle chose a node; the pod counts there at once, so the next cycle
  sees its resources used, before the binding has even been sent.
* **Add** (the watch delivers the pod with ``spec.nodeName``) confirms an assumed pod; if the
  pod landed on another node than assumed, it is moved.
* **Forget**: binding failed; the assumption is undone.
* **Expire**: ``finish_binding`` starts a TTL; an assumed pod the watch never confirms is dropped
  by ``cleanup``, so a lost watch event cannot pin resources forever.

A pod is never counted on two nodes: every path removes it from its old row before adding it to a
new one. All methods take ``lock``; a scheduling cycle holds it from snapshot to assume, which is
what makes the zero-copy ``Snapshot`` consistent, except while it waits on an HTTP extender
(``unlocked``): then the rows may change, and the cycle finds its nodes again by name after.

``what_if()`` gives the cycle hypothetical moves on the live rows: preemption's dry run removes
victims and reprieves them, and "filter with nominated pods" adds pods that are not there yet.
Every move goes through the same ``_place``/``_unplace`` as a real one, so the columns, the pod
counters and the term holders all see it, and ``restore`` undoes the moves in reverse order. The
entries (``_pods``) are never touched, and counters built meanwhile scan the rows (``iter_pods``),
so a counter created during a what-if counts exactly what the rows hold. ``what_if(columns_only=True)``
moves pods in the node table alone, leaving the pod counters and term holders as they are: for a
caller whose filters read neither (preemption's batched, node-local dry run), at a fraction of
the cost.
"""

from __future__ import annotations

import contextlib
import enum
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from scheduler.cache.counters import CountArray, PodCounters, PodPredicate, TermHolders
from scheduler.cache.node_table import IntArray, NodeInfo, NodeTable, PodVectors
from scheduler.cache.snapshot import Snapshot, zone_interleaved
from scheduler.cache.what_if import WhatIf
from scheduler.model import Node, Pod

__all__ = ["DEFAULT_ASSUMED_TTL", "Cache", "PodState"]

DEFAULT_ASSUMED_TTL = 30.0


class PodState(enum.Enum):
    ASSUMED = "Assumed"
    ADDED = "Added"


@dataclass(slots=True)
class _Entry:
    pod: Pod
    node: str
    state: PodState
    deadline: float | None = None


class Cache:
    """Nodes and assigned (or assumed) pods, as upstream's ``backend/cache``: the pod state machine
    above, the ``NodeTable`` rows, the incremental pod counters, and the ``Snapshot`` a cycle reads."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic,
                 assumed_ttl: float = DEFAULT_ASSUMED_TTL) -> None:
        self.lock = threading.RLock()
        self._clock = clock
        self._ttl = assumed_ttl
        self.table = NodeTable()
        # Request vectors of the pods that what-ifs move in bulk (preemption's batched dry run).
        self.pod_vectors = PodVectors()
        self.table.on_grow = self._on_grow  # type: ignore[method-assign]
        self._pods: dict[str, _Entry] = {}
        # Bumped whenever a pod joins or leaves the cache (assumed, added, forgotten, removed,
        # expired): a plugin may keep what it derived from "which pods are placed" until it moves
        # (GangScheduling's scheduled members, ``Handle.placed_version``).
        self.pods_version = 0
        self._assumed: set[str] = set()        # uids in state Assumed: cleanup visits only these
        self._namespaces: dict[str, Mapping[str, str]] = {}
        self._counters = PodCounters(self.table.capacity, self.namespace_labels)
        self.holders = TermHolders()
        # (namespace, claim name) -> how many placed pods use the claim (upstream's snapshot
        # ``usedPVCSet``, counted: VolumeRestrictions' ReadWriteOncePod check reads it, and what-if
        # moves keep it current, so preemption's dry run sees a victim's claim released).
        self.pvc_refs: dict[tuple[str, str], int] = {}
        self._order_version = -1
        self._order = self.table.valid_rows()
        # (an order, each row's index in it or -1), built on first use for that order.
        self._positions: tuple[IntArray, IntArray] | None = None

    def _on_grow(self, capacity: int) -> None:
        self._counters.grow(capacity)

    # --- namespaces ------------------------------------------------------------------------
    def namespace_labels(self, namespace: str) -> Mapping[str, str]:
        return self._namespaces.get(namespace, {})

    def set_namespace(self, name: str, labels: Mapping[str, str]) -> None:
        with self.lock:
            if self._namespaces.get(name) != labels:
                self._namespaces[name] = dict(labels)
                self._counters.drop_namespace_dependent()
                self.table.mutations += 1

    def remove_namespace(self, name: str) -> None:
        with self.lock:
            if self._namespaces.pop(name, None) is not None:
                self._counters.drop_namespace_dependent()
                self.table.mutations += 1

    # --- nodes -----------------------------------------------------------------------------
    def add_node(self, node: Node) -> NodeInfo:
        with self.lock:
            return self.table.set_node(node)

    def remove_node(self, name: str) -> None:
        with self.lock:
            self.table.remove_node(name)

    # --- pods ------------------------------------------------------------------------------
    def _place(self, pod: Pod, node: str) -> None:
        row = self.table.row_of.get(node)
        if row is None:
            # A pod bound to a node we have not seen (yet): keep a placeholder row so its usage is
            # counted once the node arrives. The row stays invalid, so nothing schedules onto it.
            info = self.table.set_node(Node(name=node))
            self.table.valid[info.row] = False
            row = info.row
        self.table.add_pod(row, pod, +1)
        self._counters.update(row, pod, +1)
        self.holders.update(row, pod, +1)
        if pod.volumes:
            self._count_claims(pod, +1)

    def _unplace(self, pod: Pod, node: str) -> None:
        row = self.table.row_of.get(node)
        if row is None:
            return
        self._counters.update(row, pod, -1)
        self.holders.update(row, pod, -1)
        self.table.add_pod(row, pod, -1)
        if pod.volumes:
            self._count_claims(pod, -1)

    def _count_claims(self, pod: Pod, sign: int) -> None:
        refs = self.pvc_refs
        for claim in pod.claim_names:
            key = (pod.namespace, claim)
            n = refs.get(key, 0) + sign
            if n > 0:
                refs[key] = n
            else:
                refs.pop(key, None)

    def assume_pod(self, pod: Pod, node: str) -> Pod:
        """Count ``pod`` on ``node`` before the bind; returns the pod with ``node_name`` set."""
        with self.lock:
            if pod.uid in self._pods:
                raise ValueError(f"pod {pod.key} is in the cache, so can't be assumed")
            assumed = pod.with_fields(node_name=node)
            self._place(assumed, node)
            self._pods[pod.uid] = _Entry(assumed, node, PodState.ASSUMED)
            self.pods_version += 1
            self._assumed.add(pod.uid)
            return assumed

    def finish_binding(self, pod: Pod) -> None:
        with self.lock:
            e = self._pods.get(pod.uid)
            if e is not None and e.state is PodState.ASSUMED:
                e.deadline = self._clock() + self._ttl

    def forget_pod(self, pod: Pod) -> None:
        with self.lock:
            e = self._pods.get(pod.uid)
            if e is None or e.state is not PodState.ASSUMED:
                return
            self._unplace(e.pod, e.node)
            del self._pods[pod.uid]
            self.pods_version += 1
            self._assumed.discard(pod.uid)

    def add_pod(self, pod: Pod) -> None:
        """An assigned pod arrived from the watch (ADDED or first sight of it bound)."""
        if not pod.node_name:
            return
        with self.lock:
            e = self._pods.get(pod.uid)
            if (e is not None and e.state is PodState.ASSUMED and e.node == pod.node_name
                    and (row := self.table.row_of.get(e.node)) is not None and _same_placement(e.pod, pod)):
                # The watch confirming a pod as it was assumed (every bound pod's second event):
                # its columns, counters, term holders and claim counts already hold it, and taking
                # it out and in again would leave them as they are. Only the object the node keeps
                # changes, to the server's (its status); no cycle's reading changes, so an
                # opportunistic batch (framework/batch.py) stays valid across it.
                self.table.swap_pod(row, pod)
                self._pods[pod.uid] = _Entry(pod, pod.node_name, PodState.ADDED)
                self._assumed.discard(pod.uid)
                return
            mutations = self.table.mutations
            if e is not None:
                # Confirms an assumption, or is a re-list of a known pod: replace in place.
                self._unplace(e.pod, e.node)
            self._place(pod, pod.node_name)
            if e is not None and e.node == pod.node_name and _same_placement(e.pod, pod):
                # The watch confirming an assumed pod as it was assumed changes nothing a cycle
                # reads: an opportunistic batch (framework/batch.py) stays valid across it.
                self.table.mutations = mutations
            self._pods[pod.uid] = _Entry(pod, pod.node_name, PodState.ADDED)
            if e is None:
                self.pods_version += 1
            self._assumed.discard(pod.uid)

    def remove_pod(self, pod: Pod) -> None:
        with self.lock:
            e = self._pods.pop(pod.uid, None)
            self._assumed.discard(pod.uid)
            if e is not None:
                self.pods_version += 1
                self._unplace(e.pod, e.node)

    def is_assumed(self, uid: str) -> bool:
        e = self._pods.get(uid)
        return e is not None and e.state is PodState.ASSUMED

    def get_pod(self, uid: str) -> Pod | None:
        e = self._pods.get(uid)
        return None if e is None else e.pod

    def cleanup(self) -> list[Pod]:
        """Drop assumed pods whose binding finished more than the TTL ago; returns them."""
        now = self._clock()
        expired: list[Pod] = []
        with self.lock:
            for uid in list(self._assumed):
                e = self._pods[uid]
                if e.deadline is not None and e.deadline <= now:
                    self._unplace(e.pod, e.node)
                    del self._pods[uid]
                    self.pods_version += 1
                    self._assumed.discard(uid)
                    expired.append(e.pod)
        return expired

    def pod_count(self) -> int:
        return len(self._pods)

    def assumed_count(self) -> int:
        return len(self._assumed)

    def iter_pods(self) -> Iterator[tuple[int, Pod]]:
        """Every pod on every row, as the rows hold them now (what-if moves included)."""
        for info in self.table.infos:
            if info is not None and info.pods:
                for pod in info.pods.values():
                    yield info.row, pod

    def what_if(self, *, columns_only: bool = False) -> WhatIf:
        """Hypothetical moves on the rows; call with ``lock`` held, and ``restore`` before releasing it."""
        self.pod_vectors.trim()
        return WhatIf(self, columns_only=columns_only)


    # --- snapshot --------------------------------------------------------------------------
    def counter(self, key: PodPredicate) -> CountArray:
        return self._counters.get(key, self.iter_pods)

    def _order_rows(self) -> IntArray:
        if self._order_version != self.table.version:
            self._order = zone_interleaved(self.table)
            self._order_version = self.table.version
        return self._order

    def order_positions(self, order: IntArray) -> IntArray:
        """Each row's index in ``order`` (a snapshot's ``node_order``; -1 for a row not in it).
        Built once per order, and only when asked: it orders a PreFilter result of a few nodes
        without a pass over every node."""
        if (self._positions is None or self._positions[0] is not order
                or len(self._positions[1]) < self.table.capacity):
            positions = np.full(self.table.capacity, -1, np.int64)
            positions[order] = np.arange(len(order), dtype=np.int64)
            self._positions = (order, positions)
        return self._positions[1]

    @contextlib.contextmanager
    def unlocked(self) -> Iterator[None]:
        """Let go of ``lock`` (held by this thread, at whatever depth) for the duration, and take it
        back as it was: for a cycle's blocking network call (an HTTP extender), so the informers and
        the binding cycles are not held up behind it. Rows may change hands meanwhile: what the
        cycle reads after it must be looked up again by node name. Without the lock, it does nothing."""
        lock = cast(Any, self.lock)         # RLock's save/restore, the pair threading.Condition uses
        if not lock._is_owned():
            yield
            return
        saved = lock._release_save()
        try:
            yield
        finally:
            lock._acquire_restore(saved)

    def snapshot(self) -> Snapshot:
        """Call with ``lock`` held for as long as the snapshot is read."""
        self._order_rows()
        return Snapshot(self, self._order)


def _same_placement(a: Pod, b: Pod) -> bool:
    """Whether placing ``b`` instead of ``a`` on the same node leaves every column, counter, term
    holder and claim count as it was: the fields ``_place`` reads are equal."""
    return (a.requests == b.requests and a.non_zero_cpu == b.non_zero_cpu and a.non_zero_memory == b.non_zero_memory
            and a.namespace == b.namespace and a.labels == b.labels and a.host_ports == b.host_ports
            and a.volumes == b.volumes and a.resource_claims == b.resource_claims
            and a.affinity_required == b.affinity_required and a.affinity_preferred == b.affinity_preferred
            and a.anti_affinity_required == b.anti_affinity_required
            and a.anti_affinity_preferred == b.anti_affinity_preferred and a.priority == b.priority
            and a.deleting == b.deleting and a.phase == b.phase)
