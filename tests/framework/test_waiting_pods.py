"""Pods waiting at Permit (``scheduler.framework.waiting_pods``, upstream's ``waiting_pods_map.go``):
each wait ends allowed, rejected by a plugin, or timed out, and leaves the map whichever came first.
A decision may come from another thread, as a controller or webhook would make it."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable

from scheduler.framework import Code, Status
from scheduler.framework.waiting_pods import WaitingPods
from tests.builders import pod


async def _wait_then(waiting: WaitingPods, decide: Callable[[str], None] | None, timeout: float = 10.0
                     ) -> tuple[Status, bool]:
    """Start a wait for pod ``p``, poll (bounded) until it is in the map, run ``decide``."""
    p = pod("p")
    task = asyncio.create_task(waiting.wait(p, timeout, "Gate"))
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 5.0
    while p.uid not in waiting and loop.time() < deadline:
        await asyncio.sleep(0.001)
    seen = p.uid in waiting
    if decide is not None:
        decide(p.uid)
    return await task, seen


def test_allowed_from_another_thread_proceeds_and_leaves_the_map() -> None:
    waiting = WaitingPods()

    def allow_from_a_thread(uid: str) -> None:
        t = threading.Thread(target=waiting.allow, args=(uid,))
        t.start()
        t.join()

    status, seen = asyncio.run(_wait_then(waiting, allow_from_a_thread))
    assert seen
    assert status.is_success()
    assert len(waiting) == 0


def test_rejected_is_unschedulable_from_the_rejecting_plugin() -> None:
    waiting = WaitingPods()
    status, _ = asyncio.run(_wait_then(waiting, lambda uid: waiting.reject(uid, "Gate", "not yet")))
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ("not yet",)
    assert status.plugin == "Gate"
    assert len(waiting) == 0


def test_timed_out_wait_is_rejected_with_upstreams_message() -> None:
    waiting = WaitingPods()
    status, _ = asyncio.run(_wait_then(waiting, None, timeout=0.05))
    assert status.code == Code.UNSCHEDULABLE
    assert status.reasons == ("rejected due to timeout after waiting 0.05s at plugin Gate",)
    assert len(waiting) == 0


def test_a_decision_for_a_pod_not_waiting_changes_nothing() -> None:
    waiting = WaitingPods()
    waiting.allow("nobody")
    waiting.reject("nobody", "Gate", "no")
    assert "nobody" not in waiting and len(waiting) == 0


def test_a_decision_made_after_park_and_before_the_wait_is_kept() -> None:
    """A gang's last member allows the others in the same cycle that parked them, before their
    binding cycles wait: the wait returns that decision at once (upstream adds the pod to its map in
    RunPermitPlugins for this). An unparked pod's decision is dropped, as before."""
    waiting = WaitingPods()
    allowed, rejected, unparked = pod("a"), pod("r"), pod("u")
    waiting.park(allowed.uid)
    waiting.park(rejected.uid)
    assert allowed.uid in waiting and sorted(waiting.uids()) == sorted([allowed.uid, rejected.uid])
    waiting.allow(allowed.uid)
    waiting.reject(rejected.uid, "GangScheduling", "no quorum")
    waiting.allow(unparked.uid)

    async def waits() -> list[Status]:
        return [await waiting.wait(allowed, 10.0, "GangScheduling"),
                await waiting.wait(rejected, 10.0, "GangScheduling"),
                await waiting.wait(unparked, 0.01, "GangScheduling")]
    ok, no, late = asyncio.run(waits())
    assert ok.is_success()
    assert (no.code, no.reasons, no.plugin) == (Code.UNSCHEDULABLE, ("no quorum",), "GangScheduling")
    assert late.code == Code.UNSCHEDULABLE and "timeout" in late.message()
    assert len(waiting) == 0
