"""The resource quota controller (``pkg/controller/resourcequota``): each ResourceQuota's ``status.hard``
is its ``spec.hard`` and ``status.used`` what its namespace uses of it (``registry/core/resourcequota.py``
counts), recounted from the store on a later loop turn when the quota is new or changed, and when an
object in its namespace is deleted or changes what it counts (a pod turning Succeeded or Failed frees
its compute). A create needs no recount: the ResourceQuota admission plugin charged it already.
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any

from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.registry.core.resourcequota import namespace_usage

if TYPE_CHECKING:
    from scheduler.simulator.store import Event

__all__ = ["ResourceQuotaController"]

Obj = dict[str, Any]
_QUOTAS = "/resourcequotas"


def _recount(store: str, ev: Event) -> bool:
    """Whether an event can change what a quota counts in a way admission did not charge: a quota new or
    changed, an object gone, a pod finished or deleting, a Service's type or a claim's size changed."""
    old = ev.old or {}
    if store == _QUOTAS:
        return ev.type == "ADDED" or (ev.type == "MODIFIED" and old.get("spec") != ev.obj.get("spec"))
    if ev.type != "MODIFIED":
        return ev.type == "DELETED"
    if store == "/pods":
        return ((old.get("status") or {}).get("phase") != (ev.obj.get("status") or {}).get("phase")
                or old.get("metadata", {}).get("deletionTimestamp") != ev.obj["metadata"].get("deletionTimestamp"))
    return store in ("/services", "/persistentvolumeclaims") and old.get("spec") != ev.obj.get("spec")


class ResourceQuotaController(Controller):
    """Keeps every ResourceQuota's status current."""

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.dirty: set[str] = set()          # namespaces whose quotas are recounted

    def on_event(self, store: str, ev: Event) -> None:
        ns = str(ev.obj["metadata"].get("namespace", ""))
        if not ns or not self.api.store.bucket(_QUOTAS).by_ns.get(ns) or not _recount(store, ev):
            return
        self.dirty.add(ns)
        self._schedule()

    def _sync_dirty(self) -> None:
        dirty, self.dirty = self.dirty, set()
        rt = self.api.rt("", "v1", "resourcequotas")
        now = dt.datetime.now(dt.UTC)
        for ns in sorted(dirty):
            for rq in list(self.api.store.bucket(_QUOTAS).items(ns)):
                if rq["metadata"].get("deletionTimestamp"):
                    continue
                hard = dict((rq.get("spec") or {}).get("hard") or {})
                status = {"hard": hard, "used": {k: str(q) for k, q in
                                                 namespace_usage(self.api.store, self.api.registry, rq, now).items()}}
                if rq.get("status") != status:
                    self.api.write(rt, rq, {**rq, "status": status})
