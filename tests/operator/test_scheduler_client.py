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


def test_the_binding_cycle_nominates_and_the_binding_clears_it(sim: SimulatedCluster) -> None:
    """NominatedNodeNameForExpectation: ``nominate`` writes status.nominatedNodeName (and nothing
    else); the Binding then clears it (ClearingNominatedNodeNameAfterBinding)."""
    api = Http(sim)
    p = parse_pod(api("POST", PODS, pod("p"))[1])

    async def go() -> None:
        client = ApiSchedulerClient(sim.client)
        await client.nominate(p, "n1")
        status = api("GET", f"{PODS}/p")[1]["status"]
        assert status["nominatedNodeName"] == "n1" and "conditions" not in status
        await client.bind(p, "n1")
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
        await asyncio.sleep(0.3)        # the scenario: still waiting for its token (no poll for an absence)
        assert not waiting.done()
        holds[0] = False                                         # the lease may be lost now
        with pytest.raises(NotLeaderError):
            await waiting
        await kube.close()
    run(go())
    assert api("GET", f"{PODS}/first")[1]["spec"].get("nodeName") == "n1"
    assert not api("GET", f"{PODS}/second")[1]["spec"].get("nodeName")
    assert set(sim.server.binds) == {first.uid}


def test_bindings_that_wait_past_the_binding_deadline_for_tokens_are_fenced_when_sent(
        sim: SimulatedCluster, caplog: pytest.LogCaptureFixture) -> None:
    """Issue #32: a binding cycle's deadline no longer counts its wait for rate-limit tokens, so a
    Binding may wait far past it; the fence must still stop it right before it is sent. Four pods
    bind at 2 requests/s (burst 1) under a 0.3 s binding deadline; once the first Binding is out the
    worker stops taking pods (a graceful stop: the rest drain), and then the lease is lost. The
    queued Bindings, each waiting longer than the deadline for its token, are refused by the fence
    when their tokens come and handed back, not sent and not abandoned by the deadline."""
    import logging

    from scheduler.kubeapi import KubeClient, KubeConfig
    from scheduler.service import SchedulerService
    from tests.simulator.helpers import node

    api = Http(sim)
    api("POST", "/api/v1/nodes", node("n1"))
    bodies = [api("POST", PODS, pod(f"p{i}", schedulerName="kopf-scheduler"))[1] for i in range(4)]
    holds = [True]

    async def go() -> SchedulerService:
        kube = KubeClient(KubeConfig(sim.url, token=sim.token, ssl_context=sim.tls.client_context()), qps=2, burst=1)
        client = ApiSchedulerClient(kube)
        service = SchedulerService(client, seed=1, binding_timeout=0.3)
        service.lease_valid = lambda: holds[0]      # as the runtime wires the elector's fence
        client.fence = service.is_leader
        assert service.on_profile("p", {"schedulerName": "kopf-scheduler"}).accepted
        service.on_node("ADDED", api("GET", "/api/v1/nodes/n1")[1])
        for body in bodies:
            service.on_pod("ADDED", body)
        stop = asyncio.Event()
        worker = asyncio.ensure_future(service.run_worker(stop))
        loop = asyncio.get_running_loop()
        end = loop.time() + 10
        while not sim.server.binds and loop.time() < end:
            await asyncio.sleep(0.01)
        stop.set()                  # no new pod; the queued Bindings drain (drain_timeout 5 s)
        holds[0] = False            # ... and the lease may be lost now
        t0 = loop.time()
        await asyncio.wait_for(worker, 10)
        assert loop.time() - t0 > 0.3 * 3, "the queued Bindings did not wait past their deadline"
        await kube.close()
        return service
    with caplog.at_level(logging.WARNING):
        service = run(go())
    first = bodies[0]["metadata"]["uid"]
    assert set(sim.server.binds) == {first} and sim.server.bind_conflicts == 0
    # The first stays assumed until a watch confirms it (none here); the others went back to the queue.
    assert service.cache.assumed_count() == 1
    assert all(service.queue.where(b["metadata"]["uid"]) == "active" for b in bodies[1:])
    messages = [r.getMessage() for r in caplog.records]
    assert sum("no longer holds the lease" in m for m in messages) == 3, messages
    assert not [m for m in messages if "abandoned" in m or "did not finish" in m], messages
