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
