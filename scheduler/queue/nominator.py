"""``Nominator``: which pending pods are nominated to which node (upstream's ``nominator``).

A pod gets a nominated node when its preemption chose one (the PostFilter result) or when it
arrives from the API with ``status.nominatedNodeName`` set (for instance after a restart). Until it
is assumed, bound or deleted, the Filter phase counts it on that node for every pod of equal or
lower priority ("filter with nominated pods"), so the space its victims free is not taken by
someone else.

The rules follow upstream's ``UpdateNominatedPod``: an update that carries no nomination, for a pod
that had none in the API either, keeps the in-memory nomination (the watch may deliver an older
status right after PostFilter nominated the pod). Thread-safe: the queue's handlers and the
scheduling worker both use it. The framework and its plugins read it through the framework's
``PodNominator`` Protocol, so they never import the queue.
"""

from __future__ import annotations

import threading

from scheduler.model import Pod

__all__ = ["Nominator"]


class Nominator:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._node_of: dict[str, str] = {}
        self._pods: dict[str, dict[str, Pod]] = {}   # node -> uid -> pod
        self.version = 0                              # bumped on every change (callers cache by it)

    def __len__(self) -> int:
        return len(self._node_of)

    def _delete(self, uid: str) -> None:
        node = self._node_of.pop(uid, None)
        if node is not None:
            self.version += 1
            pods = self._pods[node]
            pods.pop(uid, None)
            if not pods:
                del self._pods[node]

    def _add(self, pod: Pod, node: str) -> None:
        self._delete(pod.uid)
        if not node or pod.node_name:
            return
        self._node_of[pod.uid] = node
        self.version += 1
        self._pods.setdefault(node, {})[pod.uid] = pod

    def add(self, pod: Pod, node: str | None = None) -> None:
        """Nominate ``pod`` to ``node`` (``""`` clears it); ``None`` takes the API's value."""
        with self._lock:
            self._add(pod, pod.nominated_node_name if node is None else node)

    def update(self, old: Pod | None, new: Pod) -> None:
        with self._lock:
            node = new.nominated_node_name
            if not node and (old is None or not old.nominated_node_name):
                node = self._node_of.get(new.uid, "")
            self._add(new, node)

    def delete(self, uid: str) -> None:
        with self._lock:
            self._delete(uid)

    def node_of(self, uid: str) -> str:
        return self._node_of.get(uid, "")

    def pods_for_node(self, node: str) -> list[Pod]:
        with self._lock:
            return list(self._pods.get(node, {}).values())

    def nominated_at_or_above(self, priority: int, exclude_uid: str) -> dict[str, list[Pod]]:
        """Node name → pods nominated there with priority ≥ ``priority`` (the pod itself excluded)."""
        if not self._node_of:
            return {}
        with self._lock:
            out: dict[str, list[Pod]] = {}
            for node, pods in self._pods.items():
                ge = [p for uid, p in pods.items() if p.priority >= priority and uid != exclude_uid]
                if ge:
                    out[node] = ge
            return out
