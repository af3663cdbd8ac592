"""The disruption controller (``pkg/controller/disruption``): keeps each PodDisruptionBudget's status
(``expectedPods``, ``currentHealthy``, ``desiredHealthy``, ``disruptionsAllowed``, ``observedGeneration``)
current. Pod events and PDB writes mark a namespace dirty, and a loop recounts dirty namespaces every
100 ms. The ``pods/eviction`` subresource (``registry/core/eviction.py``) asks it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.selectors import matches_labels, stored_label_selector
from scheduler.simulator.store import Event

__all__ = ["DisruptionController"]

Obj = dict[str, Any]


class DisruptionController(Controller):
    """PodDisruptionBudget status, recounted for the namespaces whose pods or budgets changed.

    Its queue is a resync loop (``run``, every 100 ms) rather than the base's schedule-once timer:
    ``mark`` is called inside the writes of the binding and admission paths, and only adds to the set."""

    def __init__(self, api: ClusterWriter, timers: Timers, *, pods_become_ready: bool) -> None:
        super().__init__(api, timers)
        # With a kubelet that makes pods Ready, healthy means Ready; without one, bound and not finished.
        self.pods_become_ready = pods_become_ready
        self.dirty: set[str] = set()

    def mark(self, namespace: str) -> None:
        self.dirty.add(namespace)

    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: a pod event marks its namespace, when any budget exists."""
        if store == "/pods" and self.api.store.bucket("policy/poddisruptionbudgets").objects:
            self.dirty.add(ev.obj["metadata"].get("namespace", ""))

    def healthy(self, pod: Obj) -> bool:
        if pod["metadata"].get("deletionTimestamp") or not (pod.get("spec") or {}).get("nodeName"):
            return False
        if not self.pods_become_ready:
            return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (pod.get("status") or {}).get("conditions") or [])

    def numbers(self, pdb: Obj) -> tuple[int, int, int, int]:
        """(expected, currentHealthy, desiredHealthy, disruptionsAllowed) as the disruption controller counts."""
        ns = pdb["metadata"].get("namespace", "")
        sel = stored_label_selector((pdb.get("spec") or {}).get("selector"))
        pods = [p for p in self.api.store.bucket("/pods").items(ns) if matches_labels(sel, p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        expected = len(pods)
        healthy = sum(1 for p in pods if self.healthy(p))
        spec = pdb.get("spec") or {}
        if "minAvailable" in spec:
            desired = _int_or_percent(spec["minAvailable"], expected)
        elif "maxUnavailable" in spec:
            desired = max(0, expected - _int_or_percent(spec["maxUnavailable"], expected))
        else:
            desired = expected
        return expected, healthy, desired, max(0, healthy - desired)

    async def run(self) -> None:
        api = self.api
        prt = api.rt("policy", "v1", "poddisruptionbudgets")
        while True:
            await asyncio.sleep(0.1)
            dirty, self.dirty = self.dirty, set()
            for ns in dirty:
                for pdb in list(api.store.bucket(prt.store).items(ns)):
                    expected, healthy, desired, allowed = self.numbers(pdb)
                    st = dict(pdb.get("status") or {})
                    want = {"expectedPods": expected, "currentHealthy": healthy, "desiredHealthy": desired,
                            "disruptionsAllowed": allowed, "observedGeneration": pdb["metadata"].get("generation", 1)}
                    if any(st.get(k) != v for k, v in want.items()):
                        st.update(want)
                        try:
                            api.write(prt, pdb, {**pdb, "status": st})
                        except ApiError:        # the store is full: the controller retries with the next change
                            self.dirty.add(ns)


def _int_or_percent(v: Any, total: int) -> int:
    if isinstance(v, str) and v.endswith("%"):
        return -(-int(v[:-1]) * total // 100)
    return int(v)
