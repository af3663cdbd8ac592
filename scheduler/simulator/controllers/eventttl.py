"""Events expire ``event_ttl`` seconds after their last write, as kube-apiserver's Events do.

kube-apiserver stores every Event with an etcd lease of ``--event-ttl`` (default 1 h): the event
registry's ``TTLFunc`` gives each create and each update a fresh lease, and when the lease runs out
etcd deletes the key, which every watcher sees as DELETED. Without it, a scheduler posting a
``Scheduled`` Event for every pod would grow the simulated cluster by an Event a pod for as long
as it runs; with it, what Events hold is bounded by the rate at which they are written.

``EventTTL`` is a store listener: it keeps each Event's deadline in write order (a write moves the
Event to the back), and one timer at a time removes the expired ones from the front through the
server's ``remove``, so the expiry takes a resourceVersion and reaches watchers as any delete does.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter

if TYPE_CHECKING:
    from scheduler.simulator.store import Event

__all__ = ["DEFAULT_EVENT_TTL", "EventTTL"]

Obj = dict[str, Any]
Key = tuple[str, str]
DEFAULT_EVENT_TTL = 3600.0          # kube-apiserver's --event-ttl default, 1h0m0s
_STORE = "core/events"              # core/v1 and events.k8s.io/v1 Events share it


class EventTTL(Controller):
    """Removes each Event ``ttl`` seconds after its last create or update."""

    def __init__(self, api: ClusterWriter, timers: Timers, ttl: float = DEFAULT_EVENT_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__(api, timers)
        self.ttl, self.clock = ttl, clock
        self.deadlines: OrderedDict[Key, float] = OrderedDict()
        self._timer_at: float | None = None

    def on_event(self, store: str, ev: Event) -> None:
        if store != _STORE:
            return
        meta = ev.obj["metadata"]
        key = (meta.get("namespace", ""), meta["name"])
        if ev.type == "DELETED":
            self.deadlines.pop(key, None)
            return
        self.deadlines[key] = self.clock() + self.ttl
        self.deadlines.move_to_end(key)
        if self._timer_at is None:
            self._arm(self.ttl)

    def _arm(self, delay: float) -> None:
        self._timer_at = self.clock() + delay
        self.timers.later(max(delay, 0.0), self._expire)

    def _expire(self) -> None:
        self._timer_at = None
        now = self.clock()
        rt = self.api.rt("", "v1", "events")
        while self.deadlines:
            key, deadline = next(iter(self.deadlines.items()))
            if deadline > now:
                self._arm(deadline - now)
                return
            del self.deadlines[key]
            obj = self.api.store.get(rt, *key)
            if obj is not None:
                self.api.remove(rt, obj)        # its DELETED event pops nothing more: the key is gone
