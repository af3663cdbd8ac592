"""Pods waiting at Permit (upstream's ``waiting_pods_map.go``).

A Permit plugin that returns Wait parks the pod's binding cycle here until a plugin allows or
rejects it, or its timeout passes::

    run_permit ─► Wait(timeout) ─► wait() parks a future under the pod's uid
                                     │ allow(uid)          ─► Success: binding goes on
                                     │ reject(uid, ...)    ─► Unschedulable, from that plugin
                                     │ timeout             ─► Unschedulable, "rejected due to timeout ..."
                                     ▼
                                   the entry is removed, whichever came first

A pod is *parked* as soon as its Permit says Wait, in the scheduling cycle (``park``), so a plugin
may decide for it before its binding cycle starts waiting: a gang's last member allows the others
in the same PodGroup cycle that parked them (upstream's ``waitingPodsMap`` gets the pod in
``RunPermitPlugins`` for the same reason); ``wait`` then returns that decision at once.

The map is the one piece of a ``Framework`` that changes while pods are scheduled on it, so it
lives here; the service shares one among its frameworks (uids are unique), so that GangScheduling
finds a group's waiting pods whatever profile parked them. Plugins may decide from another thread (a controller, a
webhook), so a decision is handed to the future's event loop rather than set in place. Next:
``framework/runtime.py``, which runs Permit and owns this map.
"""

from __future__ import annotations

import asyncio
import time

from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.metrics import Metrics
from scheduler.model import Pod

__all__ = ["WaitingPods"]


class WaitingPods:
    """The pods a Permit plugin told to wait, by uid, each with the future its binding cycle awaits."""

    def __init__(self, metrics: Metrics | None = None) -> None:
        self._futures: dict[str, asyncio.Future[Status]] = {}
        # Parked in a scheduling cycle, not yet waiting: uid -> the decision made meanwhile, if any.
        self._parked: dict[str, Status | None] = {}
        self._metrics = metrics

    def __contains__(self, uid: object) -> bool:
        return uid in self._futures or uid in self._parked

    def __len__(self) -> int:
        return len(self._futures.keys() | self._parked.keys())

    def uids(self) -> list[str]:
        """The pods parked or waiting now."""
        return list(self._futures.keys() | self._parked.keys())

    def park(self, uid: str) -> None:
        """Permit said Wait for ``uid`` in the scheduling cycle: decisions for it count from now."""
        self._parked.setdefault(uid, None)

    def discard(self, uid: str) -> None:
        """The pod's binding cycle will never wait (it was unreserved first): forget it."""
        self._parked.pop(uid, None)

    def allow(self, uid: str) -> None:
        """A Permit plugin allows a waiting pod to proceed to binding."""
        self._decide(uid, SUCCESS)

    def reject(self, uid: str, plugin: str, reason: str) -> None:
        self._decide(uid, Status(Code.UNSCHEDULABLE, (reason,), plugin))

    def _decide(self, uid: str, status: Status) -> None:
        fut = self._futures.get(uid)
        if fut is None:
            if uid in self._parked and self._parked[uid] is None:
                self._parked[uid] = status          # its binding cycle reads it when it waits
            return
        if fut.done():
            return

        def settle() -> None:
            if not fut.done():
                fut.set_result(status)
        # Plugins may decide from another thread (a controller, a webhook): settle in the loop.
        fut.get_loop().call_soon_threadsafe(settle)

    async def wait(self, pod: Pod, timeout: float, plugin: str) -> Status:
        """Upstream's ``WaitOnPermit``: block the binding cycle until allowed, rejected or timed out."""
        early = self._parked.pop(pod.uid, None)
        if early is not None:
            return early
        fut: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        self._futures[pod.uid] = fut
        t0 = time.perf_counter()
        status = SUCCESS
        try:
            status = await asyncio.wait_for(fut, timeout)
            return status
        except TimeoutError:
            status = Status(Code.UNSCHEDULABLE, (f"rejected due to timeout after waiting {timeout:g}s at plugin "
                                                 f"{plugin}",), plugin)
            return status
        finally:
            self._futures.pop(pod.uid, None)
            if self._metrics is not None:       # scheduler_permit_wait_duration_seconds{result}: the code
                self._metrics.permit_wait_duration.labels(str(status.code)).observe(time.perf_counter() - t0)
