"""What every simulated controller stands on: the server it writes through and one work queue.

A controller is a store listener. ``on_event`` runs inside the write that caused it, so it only
marks what must be synced (a key in the controller's own dirty set) and calls ``_schedule``; the
sync runs on a later loop turn, once however many events marked it, as client-go's work queue
collapses repeated adds of one key. ``_sync_dirty`` drains the dirty set; a sync that dirties more
(a Deployment its ReplicaSet) schedules itself again.

A controller types against ``interfaces.ClusterWriter`` (never the server class) and against
``Timers``, the manager's timers and the two neighbours a controller asks: the resource claims
controller (the kubelet waits for a pod's claims) and the volume controller (which records Events).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scheduler.simulator.interfaces import ClusterWriter
    from scheduler.simulator.store import Event

__all__ = ["ClaimWaits", "Controller", "EventRecorder", "Timers", "without_finalizer"]

Obj = dict[str, Any]


class ClaimWaits(Protocol):
    def claims_ready(self, pod: Obj) -> bool: ...
    def wait(self, pod: Obj, start: Callable[[], None]) -> None: ...


class EventRecorder(Protocol):
    def event(self, obj: Obj, type_: str, reason: str, message: str, component: str = ...) -> None: ...


class Timers(Protocol):
    """The controller manager's timers and tasks (``manager.Controllers``), and the neighbours asked."""

    def later(self, delay: float, fn: Callable[[], None]) -> None: ...
    def spawn(self, coro: Awaitable[Any]) -> None: ...
    @property
    def claims(self) -> ClaimWaits: ...
    @property
    def volumes(self) -> EventRecorder: ...


class Controller:
    """A store listener with a coalescing work queue: ``_schedule`` runs ``_sync_dirty`` on a later
    loop turn, at most once until it has run."""

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        self.api = api
        self.timers = timers
        self._scheduled = False

    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: mark what must be synced, then ``_schedule``. The base marks nothing."""

    def _schedule(self, delay: float = 0.0) -> None:
        if not self._scheduled:
            self._scheduled = True
            self.timers.later(delay, self._run_queue)

    def _run_queue(self) -> None:
        self._scheduled = False
        self._sync_dirty()

    def _sync_dirty(self) -> None:
        """Sync what is marked."""


def without_finalizer(obj: Obj, finalizer: str) -> Obj:
    """A copy of ``obj`` without ``finalizer`` (and without ``finalizers`` once none is left): what a
    controller writes when it lets an object go."""
    rest = [f for f in obj["metadata"].get("finalizers") or [] if f != finalizer]
    meta = {**obj["metadata"], "finalizers": rest}
    if not rest:
        meta.pop("finalizers")
    return {**obj, "metadata": meta}
