"""The disruption controller (``pkg/controller/disruption``) and the ``pods/eviction`` REST handler that
asks it (``pkg/registry/core/pod/storage/eviction.go``).

``DisruptionController`` keeps each PodDisruptionBudget's status (``expectedPods``, ``currentHealthy``,
``desiredHealthy``, ``disruptionsAllowed``, ``observedGeneration``) current: pod events and PDB writes
mark a namespace dirty, and a loop recounts dirty namespaces every 100 ms. ``Eviction`` refuses with 429
an eviction that would take a healthy pod below its budget, and deletes otherwise.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError, not_found
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.selectors import stored_label_selector
from scheduler.simulator.store import Event

if TYPE_CHECKING:
    from scheduler.model.selectors import LabelSelector

__all__ = ["DisruptionController", "Eviction"]

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
        pods = [p for p in self.api.store.bucket("/pods").items(ns) if _matches(sel, p)
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


class Eviction:
    """``POST pods/NAME/eviction``: a delete that respects the pod's disruption budget."""

    def __init__(self, api: ClusterWriter, disruption: DisruptionController) -> None:
        self.api = api
        self.disruption = disruption

    def evict(self, namespace: str, name: str, body: Any) -> Obj:
        api = self.api
        rt = api.rt("", "v1", "pods")
        pod = api.store.get(rt, namespace, name)
        if pod is None:
            raise not_found(rt, name)
        opts = (body or {}).get("deleteOptions") or {}
        ok: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        if not pod["spec"].get("nodeName") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed") or \
                pod["metadata"].get("deletionTimestamp"):
            api.delete(rt, namespace, name, opts)
            return ok
        prt = api.rt("policy", "v1", "poddisruptionbudgets")
        pdbs = [p for p in api.store.bucket(prt.store).items(namespace)
                if _matches(stored_label_selector((p.get("spec") or {}).get("selector")), pod)]
        if len(pdbs) > 1:
            raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the eviction "
                                                 "subresource does not support.")
        if pdbs:
            pdb = pdbs[0]
            _, healthy, desired, allowed = self.disruption.numbers(pdb)
            if self.disruption.healthy(pod) and allowed <= 0:
                msg = (f"The disruption budget {pdb['metadata']['name']} needs {desired} healthy pods and has "
                       f"{healthy} currently")
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption "
                               "budget.", {"causes": [{"reason": "DisruptionBudget", "message": msg}]})
        api.delete(rt, namespace, name, opts)
        self.disruption.mark(namespace)
        return ok


def _int_or_percent(v: Any, total: int) -> int:
    if isinstance(v, str) and v.endswith("%"):
        return -(-int(v[:-1]) * total // 100)
    return int(v)


def _matches(selector: LabelSelector | None, obj: Obj) -> bool:
    """A PDB's selector against an object's labels: no selector matches nothing, an empty one everything."""
    return selector is not None and selector.matches(obj["metadata"].get("labels") or {})
