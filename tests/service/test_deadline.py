"""Deadline: a binding cycle's whole-cycle deadline, which waits for rate-limit tokens do not spend."""

from __future__ import annotations

import asyncio

import pytest

from scheduler.deadline import Deadline, throttled


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize(("case", "waits", "due"), [
    ("no wait", [], 110.0),
    ("one wait", [(0.0, 3.0)], 113.0),
    ("two waits one after the other", [(0.0, 3.0), (5.0, 2.0)], 115.0),
    # Requests of one cycle waiting at once (a PreBind writing two claims): the time counts once.
    ("two waits at once", [(0.0, 3.0), (0.0, 3.0)], 113.0),
    ("a shorter wait inside a longer one", [(0.0, 3.0), (1.0, 1.0)], 113.0),
    ("a wait that outlasts an earlier one", [(0.0, 3.0), (2.0, 4.0)], 116.0),
    ("a zero wait", [(0.0, 0.0)], 110.0),
])
def test_throttled_waits_move_the_deadline_out_by_their_union(case: str, waits: list[tuple[float, float]],
                                                              due: float) -> None:
    clock = Clock()
    d = Deadline(10.0, clock=clock)
    for at, seconds in waits:
        clock.now = 100.0 + at
        d.throttled(seconds)
    assert d.due == due, case


def test_throttled_outside_a_cycle_does_nothing_and_inside_reaches_only_its_own() -> None:
    throttled(5.0)                  # an informer's or the elector's request: no current deadline
    a, b = Deadline(0.3), Deadline(0.3)
    due_b = b.due

    async def cycle(d: Deadline) -> str:
        throttled(0.5)              # as the edge's limiter says before it waits
        await asyncio.sleep(0.5)
        return "done"

    async def go() -> None:
        assert await a.guard(cycle(a)) == "done"    # 0.5 s waited for a token under a 0.3 s deadline
    asyncio.run(go())
    assert b.due == due_b


def test_a_cycle_that_hangs_is_cut_at_its_deadline_after_its_throttled_wait() -> None:
    d = Deadline(0.2)

    async def hung() -> None:
        throttled(0.3)
        await asyncio.sleep(0.3)
        await asyncio.Event().wait()

    async def go() -> float:
        loop = asyncio.get_running_loop()
        t0 = loop.time()
        with pytest.raises(TimeoutError):
            await d.guard(hung())
        return loop.time() - t0
    took = asyncio.run(go())
    assert 0.45 < took < 2.0, took


def test_a_wait_reported_after_the_deadline_passed_is_ignored() -> None:
    """A plugin that swallows the cancellation and sends again: its token wait moves nothing, and
    the report does not fail the request."""
    d = Deadline(0.05)

    async def swallows() -> str:
        try:
            await asyncio.sleep(1)
        except asyncio.CancelledError:
            pass
        throttled(0.1)
        return "went on"

    async def go() -> str:
        return await d.guard(swallows())
    assert asyncio.run(go()) == "went on"
