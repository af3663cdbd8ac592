"""Client-side rate limiting, as client-go's ``flowcontrol.NewTokenBucketRateLimiter(qps, burst)``.

Every request waits for a token; the bucket holds at most ``burst`` and refills at ``qps`` per
second. kube-scheduler's defaults (``clientConnection.qps: 50``, ``burst: 100``) are the ``run``
defaults; scheduler_perf raises both to 5,000, and so does ``kopf-scheduler bench --mode e2e``.
Events have a bucket of their own, as upstream's event broadcaster has a client of its own: a burst
of FailedScheduling events never delays a binding. Leases too, as upstream's leader-election client
is its own: binding cycles are not capped, so thousands may queue for tokens, and a Lease renewal
must not wait behind them.

A request that must wait for its token says how long (``scheduler.deadline.throttled``) before it
waits: a binding cycle's whole-cycle deadline does not count that time, as upstream's binding
goroutines have none, so a burst of pods queued behind the QPS is never abandoned for the queue.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from scheduler.deadline import throttled

__all__ = ["TokenBucket"]


class TokenBucket:
    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError(f"qps must be > 0 and burst >= 1 (got qps={qps}, burst={burst})")
        self.qps, self.burst = qps, burst
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()
        self.waited = 0.0            # seconds requests spent waiting for a token, in total

    def _refill(self) -> None:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.qps)
        self._at = now

    def reserve(self) -> float:
        """Take a token; how long to wait before using it (0 if there was one), as
        ``rate.Limiter.Reserve`` does: waiters queue up in order, never starve each other."""
        self._refill()
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    async def wait(self) -> None:
        delay = self.reserve()
        if delay > 0:
            self.waited += delay
            throttled(delay)
            await asyncio.sleep(delay)
