"""ApiSchedulerClient against the simulated cluster: bindings, aggregated events, PodScheduled."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.errors import ConflictError, NotFoundError
from scheduler.kubeapi.scheduler_client import ApiSchedulerClient
from scheduler.model import parse_pod
from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import PODS, Http, pod, started


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.fixture
def sim() -> Iterator[SimulatedCluster]:
    with started() as c:
        yield c


def test_bind_then_409_then_404(sim: SimulatedCluster) -> None:
    api = Http(sim)
    p = parse_pod(api("POST", PODS, pod("p"))[1])

    async def go() -> None:
        client = ApiSchedulerClient(sim.client)
        await client.bind(p, "n1")
        with pytest.raises(ConflictError):
            await client.bind(p, "n2")
        api("DELETE", f"{PODS}/p")
        with pytest.raises(NotFoundError):
            await client.bind(p, "n2")
        await sim.client.close()
    run(go())
    assert api("GET", f"{PODS}/p")[0] == 404


def test_repeated_failures_aggregate_into_one_event_series(sim: SimulatedCluster) -> None:
    api = Http(sim)
    p = parse_pod(api("POST", PODS, pod("p"))[1])
    msg = "0/3 nodes are available: 3 Insufficient cpu."

    async def go(interval: float) -> ApiSchedulerClient:
        client = ApiSchedulerClient(sim.client, series_interval=interval)
        for _ in range(5):
            await client.report_failure(p, "Unschedulable", msg, None)
        await sim.client.close()
        return client
    client = run(go(3600))
    events = api("GET", "/apis/events.k8s.io/v1/namespaces/default/events")[1]["items"]
    assert len(events) == 1 and client.events_posted == 1 and client.events_aggregated == 4
    ev = events[0]
    assert (ev["reason"], ev["type"], ev["note"], ev["action"]) == ("FailedScheduling", "Warning", msg, "Scheduling")
    assert ev["regarding"]["uid"] == p.uid and ev["reportingController"] == "default-scheduler"
    got = api("GET", f"{PODS}/p")[1]["status"]["conditions"]
    assert [(c["type"], c["status"], c["reason"], c["message"]) for c in got] == [
        ("PodScheduled", "False", "Unschedulable", msg)]

    run(go(0))           # interval 0: each repeat patches the series count
    events = api("GET", "/apis/events.k8s.io/v1/namespaces/default/events")[1]["items"]
    assert sorted(e.get("series", {}).get("count", 1) for e in events) == [1, 5]


def test_nominated_node_is_set_and_cleared(sim: SimulatedCluster) -> None:
    api = Http(sim)
    p = parse_pod(api("POST", PODS, pod("p"))[1])

    async def go() -> None:
        client = ApiSchedulerClient(sim.client)
        await client.report_failure(p, "Unschedulable", "m", "n1")
        assert api("GET", f"{PODS}/p")[1]["status"]["nominatedNodeName"] == "n1"
        await client.report_failure(p, "Unschedulable", "m", "")
        assert "nominatedNodeName" not in api("GET", f"{PODS}/p")[1]["status"]
        await sim.client.close()
    run(go())


def test_a_binding_waiting_for_its_rate_limit_token_is_not_sent_once_the_fence_closes(
        sim: SimulatedCluster) -> None:
    """Issue #32: the fence is asked after the token bucket, right before the request goes out, so a
    Binding queued behind the limiter when the lease went is never sent."""
    from scheduler.kubeapi import KubeClient, KubeConfig
    from scheduler.kubeapi.scheduler_client import NotLeaderError

    api = Http(sim)
    first, second = (parse_pod(api("POST", PODS, pod(name))[1]) for name in ("first", "second"))
    holds = [True]

    async def go() -> None:
        kube = KubeClient(KubeConfig(sim.url, token=sim.token, ssl_context=sim.tls.client_context()), qps=1, burst=1)
        client = ApiSchedulerClient(kube)
        client.fence = lambda: holds[0]
        await client.bind(first, "n1")                           # takes the only token
        waiting = asyncio.ensure_future(client.bind(second, "n1"))   # waits about 1 s for the next
        await asyncio.sleep(0.3)
        assert not waiting.done()
        holds[0] = False                                         # the lease may be lost now
        with pytest.raises(NotLeaderError):
            await waiting
        await kube.close()
    run(go())
    assert api("GET", f"{PODS}/first")[1]["spec"].get("nodeName") == "n1"
    assert not api("GET", f"{PODS}/second")[1]["spec"].get("nodeName")
    assert set(sim.server.binds) == {first.uid}
