"""client-go's token bucket (``flowcontrol.NewTokenBucketRateLimiter``): ``--kube-api-qps`` and
``--kube-api-burst``, and the event and leader-election clients' buckets of their own."""

from __future__ import annotations

import asyncio
import time

import pytest

from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.kubeapi.ratelimit import TokenBucket
from scheduler.simulator import SimulatedCluster


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_burst_then_qps() -> None:
    clock = Clock()
    b = TokenBucket(10, 3, clock=clock)
    assert [b.reserve() for _ in range(3)] == [0, 0, 0]          # the burst
    assert b.reserve() == pytest.approx(0.1)                      # then one per 1/qps, queued in order
    assert b.reserve() == pytest.approx(0.2)
    clock.now = 1.0                                               # refilled, never above burst
    assert [b.reserve() for _ in range(3)] == [0, 0, 0]


@pytest.mark.parametrize("qps,burst", [(0, 1), (-1, 1), (1, 0)])
def test_invalid(qps: float, burst: int) -> None:
    with pytest.raises(ValueError):
        TokenBucket(qps, burst)


def test_the_client_waits_and_events_and_leases_have_their_own_buckets() -> None:
    cluster = SimulatedCluster()
    cluster.start()
    try:
        async def go() -> tuple[float, float]:
            cfg = KubeConfig(cluster.url, token=cluster.token, ssl_context=cluster.tls.client_context())
            async with KubeClient(cfg, qps=20, burst=5) as api:
                t0 = time.monotonic()
                for _ in range(25):                   # 5 at once, then 20 at 20/s: about 1 s
                    await api.request("GET", "/api/v1/nodes")
                throttled = time.monotonic() - t0
                t0 = time.monotonic()
                for _ in range(5):                    # the event bucket is still full
                    await api.request("GET", "/apis/events.k8s.io/v1/events")
                events = time.monotonic() - t0
                # Issue #32: with the main bucket owed a second ahead, a Lease renewal still goes at once.
                backlog = [asyncio.ensure_future(api.request("GET", "/api/v1/nodes")) for _ in range(20)]
                await asyncio.sleep(0)
                t0 = time.monotonic()
                await api.request("GET", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases")
                lease = time.monotonic() - t0
                await asyncio.gather(*backlog)
                return throttled, events, lease
        throttled, events, lease = asyncio.run(go())
        assert 0.9 <= throttled < 3.0, throttled
        assert events < 0.5, events
        assert lease < 0.5, lease
    finally:
        cluster.stop()
