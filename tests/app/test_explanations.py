"""``scheduler/app/explanations.py`` in isolation: the token bucket and the TTL sweep, with injected clocks."""

from __future__ import annotations

import asyncio
from typing import Any

from scheduler.app.explanations import ExplanationController, TokenBucket
from scheduler.service import SchedulerService


def test_the_bucket_admits_burst_at_once_then_qps() -> None:
    now = [0.0]
    b = TokenBucket(qps=2.0, burst=3, clock=lambda: now[0])
    assert [b.delay() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert b.delay() == 0.5 and b.delay() == 1.0          # the 4th waits half a second, the 5th a second
    now[0] = 10.0                                          # refilled, never past the burst
    assert [b.delay() for _ in range(3)] == [0.0, 0.0, 0.0] and b.delay() == 0.5


class _Api:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, Any]] = []

    async def request(self, method: str, path: str, body: Any = None, **_: Any) -> Any:
        self.calls.append((method, path, body))
        return {}


def _expl(name: str, finished: str | None, ttl: int | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "ns", "uid": f"u-{name}", "generation": 1},
            "spec": {"podName": "p", **({"ttlSecondsAfterFinished": ttl} if ttl is not None else {})},
            "status": {"observedGeneration": 1, "finishedAt": finished} if finished else {}}


def test_the_sweep_deletes_only_answered_explanations_past_their_ttl() -> None:
    async def go() -> list[tuple[str, str, Any]]:
        api = _Api()
        now = 1_700_000_000.0                               # 2023-11-14T22:13:20Z
        c = ExplanationController(SchedulerService(object(), seed=0), api, clock=lambda: now)  # type: ignore[arg-type]
        c.on_event("ADDED", _expl("old", "2023-11-14T22:13:10Z", ttl=5))       # 10 s ago, TTL 5: expired
        c.on_event("ADDED", _expl("young", "2023-11-14T22:13:18Z", ttl=5))     # 2 s ago: kept
        c.on_event("ADDED", _expl("default", "2023-11-14T22:10:00Z"))          # 200 s ago, TTL 600: kept
        c.on_event("ADDED", _expl("pending", None, ttl=0))                     # unanswered: never
        c.sweep()
        c.sweep()                                           # one DELETE per object, not one per sweep
        await asyncio.sleep(0)
        assert list(c.queue) == ["ns/pending"]                 # only the unanswered one waits for an answer
        return api.calls
    calls = asyncio.run(go())
    assert [(m, p) for m, p, _ in calls] == [
        ("DELETE", "/apis/scheduling.kopf-scheduler.io/v1alpha1/namespaces/ns/schedulingexplanations/old")]
    assert calls[0][2]["preconditions"] == {"uid": "u-old"}
