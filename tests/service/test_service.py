"""SchedulerService: profiles swap, parked pods, watch events into queue and cache, the worker."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.model.dra import parse_resource_claim
from scheduler.service import SchedulerService
from tests.builders import MemoryClient


def pod_obj(name: str, *, scheduler: str = "s1", node: str = "", cpu: str = "100m", uid: str | None = None,
            phase: str = "Pending") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": uid or f"uid-{name}"},
            "spec": {"schedulerName": scheduler, "nodeName": node or None, "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": phase}}


def node_obj(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": labels or {}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def service(feature_gates: dict[str, bool] | None = None) -> tuple[SchedulerService, MemoryClient]:
    client = MemoryClient()
    s = SchedulerService(client, seed=1, feature_gates=feature_gates)
    client.cache = s.cache
    return s, client


async def drain(s: SchedulerService) -> None:
    await s.scheduler.run_until_idle()


def test_profile_accepted_and_rejected_keeps_the_last_good() -> None:
    s, _ = service()
    ok = s.on_profile("p", {"schedulerName": "s1"})
    assert ok.accepted and ok.scheduler_name == "s1" and "score" in ok.plugins
    bad = s.on_profile("p", {"schedulerName": "s1", "percentageOfNodesToScore": 300})
    assert not bad.accepted and "percentageOfNodesToScore" in bad.message
    assert s.profiles.owner_of("s1") == "p"
    clash = s.on_profile("q", {"schedulerName": "s1"})
    assert not clash.accepted and "already served by SchedulingProfile 'p'" in clash.message


def test_pods_wait_for_their_profile_and_are_parked_when_it_goes() -> None:
    s, client = service()
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("early"))
    assert "uid-early" in s.parked and s.queue.where("uid-early") is None
    s.on_profile("p", {"schedulerName": "s1"})
    assert not s.parked and s.queue.where("uid-early") == "active"
    s.remove_profile("p")
    assert "uid-early" in s.parked and s.queue.where("uid-early") is None
    s.on_profile("p", {"schedulerName": "s1"})
    asyncio.run(drain(s))
    assert client.bound == {"uid-early": "n1"}


def test_assigned_pods_fill_the_cache_and_deletes_free_it() -> None:
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    s.on_pod("ADDED", pod_obj("other", scheduler="someone-else", node="n1", cpu="900m"))
    s.on_pod("ADDED", pod_obj("mine", cpu="500m"))
    asyncio.run(drain(s))
    assert s.queue.where("uid-mine") == "unschedulable"
    s.on_pod("DELETED", pod_obj("other", scheduler="someone-else", node="n1"))   # AssignedPodDelete requeues
    assert s.queue.where("uid-mine") in ("active", "backoff")


def test_a_pod_bound_by_someone_else_leaves_the_queue() -> None:
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_pod("ADDED", pod_obj("x"))
    s.on_pod("MODIFIED", pod_obj("x", node="elsewhere"))
    assert s.queue.where("uid-x") is None and s.cache.get_pod("uid-x") is not None


def test_node_label_change_requeues_pods_rejected_by_node_affinity() -> None:
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    body = pod_obj("picky")
    body["spec"]["nodeSelector"] = {"disk": "ssd"}
    s.on_pod("ADDED", body)
    asyncio.run(drain(s))
    assert s.queue.where("uid-picky") == "unschedulable"
    s.on_node("MODIFIED", node_obj("n1", labels={"disk": "ssd"}))
    assert s.queue.where("uid-picky") in ("active", "backoff")


def test_unschedulable_gauge_counts_per_plugin() -> None:
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    s.on_pod("ADDED", pod_obj("huge", cpu="2"))
    asyncio.run(drain(s))
    s.refresh_unschedulable_gauge()
    assert s.metrics.unschedulable_pods.labels("NodeResourcesFit", "s1")._value.get() == 1


def sample(s: SchedulerService, name: str, **labels: str) -> float:
    value = s.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def test_event_handling_plugin_evaluation_and_cache_size_metrics() -> None:
    """Upstream's labels: UnschedulablePodAdd/Update, AssignedPodAdd/Delete, NodeAdd/Update; Filter
    and Score count once per node evaluated, PreFilter and PreScore once per cycle."""
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    for i in range(3):
        s.on_node("ADDED", node_obj(f"n{i}"))
    s.on_node("MODIFIED", node_obj("n0", labels={"a": "b"}))
    s.on_pod("ADDED", pod_obj("a"))
    s.on_pod("MODIFIED", pod_obj("a", cpu="200m"))
    s.on_pod("ADDED", pod_obj("bound", node="n1", uid="uid-bound"))
    s.on_pod("DELETED", pod_obj("bound", node="n1", uid="uid-bound"))
    asyncio.run(drain(s))
    count = "scheduler_event_handling_duration_seconds_count"
    assert sample(s, count, event="NodeAdd") == 3 and sample(s, count, event="NodeUpdate") == 1
    assert sample(s, count, event="UnschedulablePodAdd") == 1
    assert sample(s, count, event="UnschedulablePodUpdate") == 1
    assert sample(s, count, event="AssignedPodAdd") == 1 and sample(s, count, event="AssignedPodDelete") == 1
    total = "scheduler_plugin_evaluation_total"
    assert sample(s, total, plugin="NodeResourcesFit", extension_point="PreFilter", profile="s1") == 1
    assert sample(s, total, plugin="NodeResourcesFit", extension_point="Filter", profile="s1") == 3
    assert sample(s, total, plugin="NodeResourcesFit", extension_point="Score", profile="s1") == 3
    assert sample(s, total, plugin="NodeResourcesBalancedAllocation", extension_point="PreScore", profile="s1") == 1
    s.refresh_gauges()
    size = "scheduler_scheduler_cache_size"
    assert sample(s, size, type="nodes") == 3
    assert sample(s, size, type="pods") == 1                # "a", bound by us ...
    assert sample(s, size, type="assumed_pods") == 0        # ... and its binding confirmed (MemoryClient)
    assert sample(s, "scheduler_inflight_events", event="PodPopped") == 0


def test_worker_schedules_until_stopped() -> None:
    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    for i in range(20):
        s.on_pod("ADDED", pod_obj(f"w{i}"))

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        for _ in range(200):
            if len(client.bound) == 20:
                break
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 5)
    asyncio.run(go())
    assert len(client.bound) == 20 and s.cycles == 20


def test_pdbs_come_from_the_watch_and_a_broken_one_is_logged_once(caplog: Any) -> None:
    s, _ = service()
    ok = {"metadata": {"name": "db", "namespace": "default"}, "spec": {"selector": {"matchLabels": {"app": "db"}}},
          "status": {"disruptionsAllowed": 1}}
    bad = {"metadata": {"name": "bad", "namespace": "default"},
           "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Nope"}]}}}
    s.on_pdb("ADDED", ok)
    s.on_pdb("ADDED", bad)
    s.on_pdb("MODIFIED", bad)
    assert s.handle.pdbs is not None
    assert {b.key for b in s.handle.pdbs()} == {"default/db", "default/bad"}
    warnings = [r for r in caplog.records if "PodDisruptionBudget default/bad" in r.getMessage()]
    assert len(warnings) == 1 and "spec.selector" in warnings[0].getMessage()
    s.on_pdb("DELETED", ok)
    assert [b.key for b in s.handle.pdbs()] == ["default/bad"]


@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "SchedulerAsyncPreemption=false"])
def test_preemption_through_the_service_and_its_watch(async_preemption: bool) -> None:
    s, client = service({"SchedulerAsyncPreemption": async_preemption})
    client.queue = s.queue
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    low = pod_obj("low", node="n1", cpu="1")
    s.on_pod("ADDED", low)
    hi = pod_obj("hi", cpu="1")
    hi["spec"]["priority"] = 100
    s.on_pod("ADDED", hi)

    async def go() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(s.run_worker(stop))
        for _ in range(100):
            if "uid-hi" in client.bound:
                break
            await asyncio.sleep(0.05)
        stop.set()
        await worker

    asyncio.run(go())
    assert client.preempted == [("default/low", "default/hi", "n1")]
    assert client.bound == {"uid-hi": "n1"}


def test_profiles_configure_or_disable_preemption() -> None:
    s, client = service()
    off = s.on_profile("p", {"schedulerName": "s1", "plugins": {"postFilter": {"disabled": [{"name": "*"}]}}})
    assert off.accepted and "postFilter" not in off.plugins
    bad = s.on_profile("q", {"schedulerName": "s2", "pluginConfig": [
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 0, "minCandidateNodesAbsolute": 0}}]})
    assert not bad.accepted and "cannot both be zero" in bad.message
    good = s.on_profile("q", {"schedulerName": "s2", "pluginConfig": [
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 50, "minCandidateNodesAbsolute": 1}}]})
    assert good.accepted
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    s.on_pod("ADDED", pod_obj("low", node="n1", cpu="1"))
    hi = pod_obj("hi", cpu="1")
    hi["spec"]["priority"] = 100
    s.on_pod("ADDED", hi)
    asyncio.run(drain(s))
    (_, _, message, _), = client.failures
    assert message == "0/1 nodes are available: 1 Insufficient cpu."      # no PostFilter, no preemption
    assert client.preempted == []


def test_an_unreadable_pod_gets_a_failed_scheduling_event_naming_the_field_and_keeps_its_queue_entry(
        monkeypatch: Any) -> None:
    """A pod the scheduler cannot read (here a field of the wrong JSON type, which cannot become a
    Go object either) is reported where it is read: ``on_pod`` raises a ParseError naming the pod and
    the field and changes nothing, so the version already queued stays queued and is scheduled; the
    operator's watch handler turns the error into a FailedScheduling Warning Event and
    PodScheduled=False with that text. A pod unreadable from the start is queued once readable."""

    from scheduler.app.runtime import OperatorRuntime
    from scheduler.errors import ParseError
    from scheduler.kubeapi.config import KubeConfig

    def unreadable(name: str) -> dict[str, Any]:
        body = pod_obj(name)
        body["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": "z1"}]}]}}}
        return body
    field = ("spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
             ".matchExpressions[0].values")
    problem = f"Pod default/web {field}: must be a list of strings"

    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("web"))
    with pytest.raises(ParseError) as e:
        s.on_pod("MODIFIED", unreadable("web"))
    assert str(e.value) == problem
    assert s.queue.where("uid-web") == "active"
    asyncio.run(drain(s))
    assert client.bound == {"uid-web": "n1"}

    rt = OperatorRuntime(KubeConfig(server="https://127.0.0.1:9"), seed=1)      # never started: no connection
    events: list[tuple[str, str, str, str]] = []
    conditions: list[tuple[str, str, str]] = []

    async def event(namespace: str, name: str, uid: str, controller: str, type_: str, reason: str, action: str,
                    note: str, **_: Any) -> None:
        events.append((name, type_, reason, note))

    async def set_condition(namespace: str, name: str, uid: str, reason: str, message: str,
                            nominated_node: str | None) -> None:
        conditions.append((name, reason, message))
    monkeypatch.setattr(rt.client, "event", event)
    monkeypatch.setattr(rt.client, "set_condition", set_condition)
    monkeypatch.setattr(rt, "submit", asyncio.run)           # the worker loop's job, done in place
    rt.service.on_profile("p", {"schedulerName": "s1"})
    rt.pod_event("ADDED", pod_obj("web"))
    rt.pod_event("MODIFIED", unreadable("web"))
    note = f"the scheduler cannot read this pod: {problem}"
    assert events == [("web", "Warning", "FailedScheduling", note)]
    assert conditions == [("web", "SchedulerError", note)]
    assert rt.service.queue.where("uid-web") == "active"
    rt.pod_event("ADDED", unreadable("late"))
    assert rt.service.queue.where("uid-late") is None and [e[0] for e in events] == ["web", "late"]
    rt.pod_event("MODIFIED", pod_obj("late"))
    assert rt.service.queue.where("uid-late") == "active"


# ---- the binding cycle's deadline and the PreBind wait budget (issue #18) -------------------------
class SlowPreBind:
    """A PreBind that waits ``wait`` seconds, declaring ``budget`` (``PreBindWaiter``), or none."""

    name = "SlowPreBind"

    def __init__(self, wait: float, budget: float | None) -> None:
        self.wait, self.budget = wait, budget

    async def pre_bind(self, state: Any, p: Any, node_name: str) -> Any:
        import asyncio as aio

        from scheduler.framework.status import SUCCESS
        await aio.sleep(self.wait)
        return SUCCESS


class BudgetedPreBind(SlowPreBind):
    def pre_bind_wait(self, state: Any) -> float:
        assert self.budget is not None
        return self.budget


def slow_service(plugin: SlowPreBind, binding_timeout: float) -> tuple[SchedulerService, MemoryClient]:
    from scheduler.plugins.registry import PluginSpec, Registry
    client = MemoryClient()
    registry = Registry({plugin.name: PluginSpec(plugin.name, lambda args, handle: plugin)}, load_entry_points=False)
    s = SchedulerService(client, seed=1, registry=registry, binding_timeout=binding_timeout)
    client.cache = s.cache
    st = s.on_profile("p", {"schedulerName": "s1", "plugins": {"preBind": {"enabled": [{"name": plugin.name}]}}})
    assert st.accepted, st.message
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("db"))
    return s, client


def run_worker_for(s: SchedulerService, seconds: float, until: Callable[[], object] | None = None) -> None:
    """The worker for ``seconds`` (the scenario's span), or until ``until()`` is true within them."""
    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (until and until()):
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 10)
    asyncio.run(go())


def test_a_pre_bind_wait_within_its_budget_outlasts_the_binding_timeout() -> None:
    """A 2 s PreBind wait under a 1 s binding_timeout: the plugin's budget (VolumeBinding's
    bindTimeoutSeconds) extends the cycle's deadline, so it is not cancelled."""
    s, client = slow_service(BudgetedPreBind(2.0, budget=2.5), binding_timeout=1.0)
    run_worker_for(s, 10, until=lambda: client.bound or client.failures)
    assert client.bound == {"uid-db": "n1"} and client.failures == []


def test_a_pre_bind_wait_without_a_budget_is_cut_at_the_binding_timeout() -> None:
    """The same wait from a plugin that declares none is abandoned at the deadline and requeued."""
    s, client = slow_service(SlowPreBind(2.0, budget=None), binding_timeout=0.5)
    run_worker_for(s, 1.0)          # the scenario: past the 0.5 s deadline, and not bound meanwhile
    assert client.bound == {} and s.queue.where("uid-db") is not None and s.cache.assumed_count() == 0


# ---- the deadline does not count client-side throttling (issue #32, item 4's follow-up) ----------
class ThrottledClient(MemoryClient):
    """A MemoryClient whose Bindings wait for a token from the API client's own token bucket
    (``kubeapi/ratelimit.py``, as ``KubeClient`` does), then answer, or never answer (``hang``:
    a request hung past any deadline)."""

    def __init__(self, qps: float, burst: int) -> None:
        from scheduler.kubeapi.ratelimit import TokenBucket
        super().__init__()
        self.bucket = TokenBucket(qps, burst)
        self.sent: list[str] = []       # each Binding sent, in order (a pod twice would be a bug)
        self.hang = False

    async def bind(self, pod: Any, node_name: str) -> None:
        await self.bucket.wait()
        self.sent.append(pod.uid)
        if self.hang:
            await asyncio.Event().wait()
        await super().bind(pod, node_name)


def throttled_service(client: ThrottledClient, binding_timeout: float, pods: int) -> SchedulerService:
    s = SchedulerService(client, seed=1, binding_timeout=binding_timeout)
    client.cache = s.cache
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="64"))
    for i in range(pods):
        s.on_pod("ADDED", pod_obj(f"w{i}"))
    return s


def test_a_burst_queued_behind_the_qps_binds_first_time_however_long_the_queue(caplog: Any) -> None:
    """40 pods at once, Bindings at 20 per second (burst 1), under a 0.5 s binding_timeout: the
    last Binding waits about 2 s for its token, four times the deadline. No binding cycle is
    abandoned or requeued for that wait: each pod is scheduled once and bound once, and the binding
    watchdog never sees a cycle past its deadline."""
    import logging
    pods = 40
    client = ThrottledClient(qps=20, burst=1)
    s = throttled_service(client, binding_timeout=0.5, pods=pods)
    overdue: list[float] = []

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        loop = asyncio.get_running_loop()
        end = loop.time() + 15
        while len(client.bound) < pods and loop.time() < end:
            overdue.append(s.binding_overdue())
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(task, 10)
    with caplog.at_level(logging.WARNING):
        asyncio.run(go())
    assert client.bucket.waited > 4 * 0.5        # the last Binding did wait past the deadline
    assert len(client.bound) == pods and sorted(client.sent) == sorted(client.bound), client.sent
    assert s.cycles == pods and client.failures == []
    assert sample(s, "scheduler_schedule_attempts_total", result="scheduled", profile="s1") == pods
    assert sample(s, "scheduler_schedule_attempts_total", result="error", profile="s1") == 0
    assert not [r.message for r in caplog.records if "binding cycle" in r.getMessage()]
    assert max(overdue) < 0.5, overdue


def test_a_binding_that_hangs_after_its_token_is_still_cut_at_the_deadline() -> None:
    """The watchdog still catches a hung cycle: a Binding that waits about 1 s for its token (a
    0.5 s binding_timeout) and then never answers is sent on the pod's first attempt, abandoned
    0.5 s after it got the token, and its pod is forgotten and requeued."""
    client = ThrottledClient(qps=1, burst=1)
    s = throttled_service(client, binding_timeout=0.5, pods=0)
    client.bucket.reserve()                     # another request took the only token: a 1 s wait
    client.hang = True
    s.on_pod("ADDED", pod_obj("hung"))
    times: dict[str, float] = {}

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        loop = asyncio.get_running_loop()
        t0, end = loop.time(), loop.time() + 10
        while loop.time() < end and "abandoned" not in times:
            if client.sent and "sent" not in times:
                times["sent"] = loop.time() - t0
                times["cycles"] = s.cycles
            if "sent" in times and s.cache.assumed_count() == 0:
                times["abandoned"] = loop.time() - t0
            await asyncio.sleep(0.01)
        stop.set()
        await asyncio.wait_for(task, 10)
    asyncio.run(go())
    assert times["cycles"] == 1 and times["sent"] > 0.8, times     # it waited for the token, uncut
    assert 0.4 < times["abandoned"] - times["sent"] < 2.0, times
    assert client.bound == {} and s.queue.where("uid-hung") is not None


# ---- back-pressure: binds that only talk to the API hold the worker, waiting ones do not ----------------
class HeldClient(MemoryClient):
    """Bindings that wait until released: an API slower than the scheduling cycle."""

    def __init__(self) -> None:
        super().__init__()
        self.release = asyncio.Event()

    async def bind(self, pod: Any, node_name: str) -> None:
        await self.release.wait()
        await super().bind(pod, node_name)


def test_the_worker_waits_when_its_api_bound_bindings_fill_the_slots() -> None:
    """End to end the worker scheduled faster than the Bindings completed, and without a bound each
    attempt's latency (scheduling through binding) grew with the backlog for the whole run (issue #32
    item 4's follow-up: SchedulingBasic e2e attempt P50 0.06 -> 0.44 s). With every Binding held, the
    worker runs MAX_BINDING_API_IN_FLIGHT cycles and waits; the rest stay queued, and all bind, once
    each, when the API answers."""
    from scheduler.service import MAX_BINDING_API_IN_FLIGHT
    client = HeldClient()
    s = SchedulerService(client, seed=1)
    client.cache = s.cache
    s.on_profile("p", {"schedulerName": "s1"})
    for n in range(4):                            # 110 pods a node
        s.on_node("ADDED", node_obj(f"n{n}", cpu="64"))
    pods = MAX_BINDING_API_IN_FLIGHT + 44
    for i in range(pods):
        s.on_pod("ADDED", pod_obj(f"w{i}", cpu="1m"))
    seen: dict[str, int] = {}

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        loop = asyncio.get_running_loop()
        end = loop.time() + 3
        while loop.time() < end and s.cycles < MAX_BINDING_API_IN_FLIGHT:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.3)                  # the scenario: the worker would go on if it could
        seen["held"], seen["queued"] = s.cycles, s.queue.counts()["active"]
        client.release.set()
        end = loop.time() + 15
        while len(client.bound) < pods and loop.time() < end:
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(task, 10)
    asyncio.run(go())
    assert seen["held"] == MAX_BINDING_API_IN_FLIGHT and seen["queued"] == pods - MAX_BINDING_API_IN_FLIGHT, seen
    assert len(client.bound) == pods and s.cycles == pods and client.failures == []


def test_bindings_that_wait_in_pre_bind_take_no_slot() -> None:
    """Pods parked in a budgeted PreBind wait (VolumeBinding's provisioning) do not count: more of
    them than there are slots never stop the worker (issue #32 item 4)."""
    from scheduler.service import MAX_BINDING_API_IN_FLIGHT
    s, client = slow_service(BudgetedPreBind(30.0, budget=60.0), binding_timeout=5.0)
    pods = MAX_BINDING_API_IN_FLIGHT + 20
    for i in range(pods):
        s.on_pod("ADDED", pod_obj(f"w{i}", cpu="1m"))
    run_worker_for(s, 5, until=lambda: s.cycles >= pods + 1)
    assert s.cycles == pods + 1 and client.bound == {}      # every cycle ran; all still in PreBind

def test_volume_events_carry_the_old_object_for_the_hints() -> None:
    """CSIDriver and CSIStorageCapacity updates reach the queue with the object before, which
    VolumeBinding's hints compare (a capacity that shrank does not move the pod, one that grew does)."""
    from scheduler.framework.types import ClusterEvent
    s, _ = service()
    seen: list[ClusterEvent] = []
    s.queue.move_all_to_active_or_backoff = lambda event, **kw: seen.append(event)  # type: ignore[method-assign]
    cap = {"metadata": {"name": "cap", "namespace": "kube-system"}, "storageClassName": "fast", "capacity": "10Gi"}
    s.on_volume_object("CSIStorageCapacity", "ADDED", cap)
    s.on_volume_object("CSIStorageCapacity", "MODIFIED", {**cap, "capacity": "20Gi"})
    driver = {"metadata": {"name": "d"}, "spec": {"storageCapacity": True}}
    s.on_volume_object("CSIDriver", "ADDED", driver)
    s.on_volume_object("CSIDriver", "MODIFIED", {**driver, "spec": {}})
    (add_cap, upd_cap, add_drv, upd_drv) = seen
    assert add_cap.old is None and upd_cap.old.capacity == 10 * 2**30 and upd_cap.new.capacity == 20 * 2**30
    assert upd_cap.actions == frozenset({"Update"}) and add_drv.old is None
    assert upd_drv.old.storage_capacity and not upd_drv.new.storage_capacity


DRA_PROFILE = {"schedulerName": "s1", "plugins": {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}}
GPU_CLASS = {"metadata": {"name": "gpu"}, "spec": {}}


def gpu_slice(node: str) -> dict[str, Any]:
    return {"metadata": {"name": f"{node}-gpus"}, "spec": {
        "driver": "gpu.example.com", "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}]}}


def gpu_claim(name: str, *, owner_uid: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": "1"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": owner_uid,
                                    "controller": True}]
    return {"metadata": meta, "spec": {"devices": {"requests": [
        {"name": "gpu", "exactly": {"deviceClassName": "gpu"}}]}}}


def test_dra_events_update_the_store_and_carry_the_old_object() -> None:
    """on_dra_object: the four kinds reach the store, updates carry the object before (the claim
    hint compares status), and an object that cannot be read is logged and reads as absent."""
    from scheduler.framework.types import ClusterEvent
    s, _ = service()
    seen: list[ClusterEvent] = []
    s.queue.move_all_to_active_or_backoff = lambda event, **kw: seen.append(event)  # type: ignore[method-assign]
    s.on_dra_object("DeviceClass", "ADDED", GPU_CLASS)
    s.on_dra_object("ResourceSlice", "ADDED", gpu_slice("n1"))
    s.on_dra_object("ResourceClaim", "ADDED", gpu_claim("c"))
    s.on_dra_object("ResourceClaim", "MODIFIED", {**gpu_claim("c"), "status": {"reservedFor": [
        {"resource": "pods", "name": "p", "uid": "u"}]}})
    s.on_dra_object("ResourceClaimTemplate", "ADDED", {"metadata": {"name": "t", "namespace": "default"},
                                                       "spec": {"spec": {}}})
    s.on_dra_object("ResourceClaim", "MODIFIED", {**gpu_claim("c"), "spec": {"devices": {"requests": "broken"}}})
    assert [(e.resource, set(e.actions)) for e in seen] == [
        ("DeviceClass", {"Add"}), ("ResourceSlice", {"Add"}), ("ResourceClaim", {"Add"}), ("ResourceClaim", {"Update"}),
        ("ResourceClaimTemplate", {"Add"}), ("ResourceClaim", {"Delete"})]
    upd = seen[3]
    assert upd.old.reserved_for == () and [r.uid for r in upd.new.reserved_for] == ["u"]
    assert s.dra.device_class("gpu") is not None and s.dra.template("default", "t") is not None
    assert s.dra.claim("default", "c") is None          # unreadable: absent
    s.on_dra_object("ResourceSlice", "DELETED", gpu_slice("n1"))
    assert s.dra.slices() == []


def test_a_pod_waits_for_its_generated_claim_then_gets_the_device() -> None:
    """A pod whose claim template's claim does not exist yet is gated by PreEnqueue; once the claim
    exists and the pod's status names it, the pod is scheduled to the node with the device and the
    claim is written (allocation, reservedFor) before the pod is bound."""
    s, client = service()
    s.on_profile("p", DRA_PROFILE)
    s.on_node("ADDED", node_obj("n1"))
    s.on_node("ADDED", node_obj("n2"))
    s.on_dra_object("DeviceClass", "ADDED", GPU_CLASS)
    s.on_dra_object("ResourceSlice", "ADDED", gpu_slice("n2"))
    p = pod_obj("p")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "gpu-template"}]
    s.on_pod("ADDED", p)
    asyncio.run(drain(s))
    assert client.bound == {} and s.queue.where("uid-p") == "gated"    # PreEnqueue: no claim yet
    body = gpu_claim("p-gpu-x", owner_uid="uid-p")
    client.add_claim(parse_resource_claim(body))
    s.on_dra_object("ResourceClaim", "ADDED", body)
    assert s.queue.where("uid-p") == "gated"       # the pod's status does not name it yet
    p["status"]["resourceClaimStatuses"] = [{"name": "gpu", "resourceClaimName": "p-gpu-x"}]
    s.on_pod("MODIFIED", p)
    asyncio.run(drain(s))
    for _ in range(3):
        asyncio.run(asyncio.sleep(0))
    assert client.bound == {"uid-p": "n2"}
    written = client.claims[("default", "p-gpu-x")]
    assert written.allocation is not None and [r.uid for r in written.reserved_for] == ["uid-p"]


def test_assuming_and_restoring_a_claim_are_update_events_as_upstreams_assume_cache_sends() -> None:
    """PreBind assumes the claim it wrote; upstream's assume cache then sends an update event to the
    scheduler's handlers, so a pod rejected while that claim was in flight (``is in the process of
    being allocated``, a shared claim) is moved at once: the informer's later echo of the same
    write compares the claim with itself and moves nothing. Restoring is an update back."""
    from scheduler.framework.types import ClusterEvent
    s, _ = service()
    seen: list[ClusterEvent] = []
    s.queue.move_all_to_active_or_backoff = lambda event, **kw: seen.append(event)  # type: ignore[method-assign]
    s.on_dra_object("ResourceClaim", "ADDED", gpu_claim("shared"))
    informer = s.dra.claim("default", "shared")
    written = parse_resource_claim({**gpu_claim("shared"), "metadata": {**gpu_claim("shared")["metadata"],
                                                                        "resourceVersion": "2"},
                                    "status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "ua"}]}})
    seen.clear()
    assert s.dra.assume(written)
    s.dra.restore("default", "shared")
    assert [(e.resource, set(e.actions)) for e in seen] == [("ResourceClaim", {"Update"})] * 2
    assert seen[0].old is informer and seen[0].new is written
    assert seen[1].old is written and seen[1].new is informer


def test_a_new_slice_moves_a_pod_dra_rejected_and_an_unrelated_claim_does_not() -> None:
    """A pod rejected for lack of devices waits in unschedulable: another pod's claim changing
    its finalizers (the hint: not its claim, status unchanged) leaves it there; a ResourceSlice
    (registered without a hint) moves it."""
    s, client = service()
    s.on_profile("p", DRA_PROFILE)
    s.on_node("ADDED", node_obj("n1"))
    s.on_dra_object("DeviceClass", "ADDED", GPU_CLASS)
    s.on_dra_object("ResourceClaim", "ADDED", gpu_claim("mine"))
    s.on_dra_object("ResourceClaim", "ADDED", gpu_claim("other"))
    p = pod_obj("p")
    p["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": "mine"}]
    s.on_pod("ADDED", p)
    asyncio.run(drain(s))
    assert s.queue.where("uid-p") == "unschedulable"
    assert "cannot allocate all claims" in client.failures[-1][2]
    other = gpu_claim("other")
    other["metadata"]["finalizers"] = ["x"]
    s.on_dra_object("ResourceClaim", "MODIFIED", other)
    assert s.queue.where("uid-p") == "unschedulable"
    s.on_dra_object("ResourceSlice", "ADDED", gpu_slice("n1"))
    assert s.queue.where("uid-p") in ("active", "backoff")


def test_a_pod_waiting_for_an_extended_resource_moves_when_a_class_backs_it() -> None:
    """The default profile: a pod asking for example.com/gpu, which no node advertises, is rejected
    by NodeResourcesFit; a DeviceClass naming it (extendedResourceName) moves it (Fit's
    DeviceClass hint), and with a ResourceSlice it is bound, its claim created by PreBind."""
    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    p = pod_obj("p")
    p["spec"]["containers"][0]["resources"]["requests"]["example.com/gpu"] = "1"
    s.on_pod("ADDED", p)
    asyncio.run(drain(s))
    assert s.queue.where("uid-p") == "unschedulable" and "Insufficient example.com/gpu" in client.failures[-1][2]
    s.on_dra_object("ResourceSlice", "ADDED", gpu_slice("n1"))
    assert s.queue.where("uid-p") == "unschedulable"          # Fit registers no ResourceSlice event
    s.on_dra_object("DeviceClass", "ADDED", {"metadata": {"name": "gpu"},
                                             "spec": {"extendedResourceName": "example.com/gpu"}})
    assert s.queue.where("uid-p") in ("active", "backoff")

    async def run() -> None:
        await drain(s)
        for _ in range(5):
            await asyncio.sleep(0)
    s.queue.activate(["uid-p"])         # past its backoff, as the clock would have it
    asyncio.run(run())
    assert client.bound == {"uid-p": "n1"}
    (name, _), = client.extended_claim_status.values()
    assert name == "p-extended-resources-0" and client.claims[("default", name)].allocation is not None


def test_a_binding_cancelled_before_it_ran_hands_its_pod_back() -> None:
    """A replica that stops leading cancels its binding tasks; one cancelled before it ever ran never
    entered its coroutine, so nothing unreserved it: its pod stayed assumed, and in flight in the
    queue, so the replica never scheduled it again when it led once more (session 32's note). Now
    the task's done callback hands the pod back: nothing assumed while standing by, and bound once
    leading again."""
    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("web"))
    lease = {"held": True}
    s.lease_valid = lambda: lease["held"]
    schedule_one = s.scheduler.schedule_one

    def then_lose_the_lease(info: Any) -> Any:
        outcome = schedule_one(info)
        lease["held"] = False          # the next loop turn cancels the task before it runs
        return outcome
    s.scheduler.schedule_one = then_lose_the_lease  # type: ignore[method-assign]
    seen: dict[str, object] = {}

    async def go() -> None:
        stop = asyncio.Event()
        task = asyncio.ensure_future(s.run_worker(stop))
        loop = asyncio.get_running_loop()
        end = loop.time() + 3
        while loop.time() < end and s.cycles < 1:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)                   # standing by
        seen["assumed"], seen["bound"] = s.cache.assumed_count(), dict(client.bound)
        seen["queued"] = s.queue.where("uid-web")
        s.scheduler.schedule_one = schedule_one  # type: ignore[method-assign]
        lease["held"] = True
        end = loop.time() + 5
        while not (client.bound or client.failures) and loop.time() < end:
            await asyncio.sleep(0.02)
        stop.set()
        await asyncio.wait_for(task, 10)
    asyncio.run(go())
    assert s.cycles == 2 and seen["assumed"] == 0 and seen["bound"] == {}, seen
    assert seen["queued"] == "active", seen
    assert client.bound == {"uid-web": "n1"} and client.failures == []


def test_an_unreported_failure_abandoned_goes_back_to_active_unreported() -> None:
    """The worker yields after a failed cycle, so its report task starts at once; were it cancelled
    first, ``abandon`` puts the pod back in activeQ with no Event, for the leader to attempt."""
    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("big", cpu="64"))
    info = s.queue.pop(timeout=0)
    assert info is not None
    outcome = s.scheduler.schedule_one(info)
    assert s.queue.where("uid-big") == "inFlight"
    s.scheduler.abandon(outcome)
    assert s.queue.where("uid-big") == "active" and client.failures == [] and s.cache.assumed_count() == 0


def resizing(body: dict[str, Any], *, allocated: str, actuated: str) -> dict[str, Any]:
    """``body`` with the kubelet's report of an in-place resize: its container's allocated and
    actuated cpu (``status.containerStatuses[0]``)."""
    status = {**body["status"], "phase": "Running", "containerStatuses": [
        {"name": "c", "image": "i", "imageID": "", "ready": True, "restartCount": 0,
         "allocatedResources": {"cpu": allocated}, "resources": {"requests": {"cpu": actuated}}}]}
    return {**body, "status": status}


def test_a_pod_resized_down_frees_its_cpu_when_the_kubelet_actuates_it() -> None:
    """In-place resize (InPlacePodVerticalScaling): a pod resized from 900m to 200m keeps counting
    900m while the kubelet has not actuated the new size (``helpers.go``'s max of spec, allocated
    and actuated), so a 500m pod does not fit the 1-cpu node; when the status reports 200m, the
    update is a scale-down (Fit's ``isSchedulableAfterPodEvent``) and the pending pod binds."""
    s, client = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    big = pod_obj("big", scheduler="someone-else", node="n1", cpu="200m")   # spec: already resized down
    s.on_pod("ADDED", resizing(big, allocated="200m", actuated="900m"))
    s.on_pod("ADDED", pod_obj("mine", cpu="500m"))
    asyncio.run(drain(s))
    assert s.queue.where("uid-mine") == "unschedulable" and client.bound == {}
    s.on_pod("MODIFIED", resizing(big, allocated="200m", actuated="200m"))
    assert s.queue.where("uid-mine") in ("active", "backoff")
    s.queue.activate(["uid-mine"])      # past its backoff, as the clock would have it
    asyncio.run(drain(s))
    assert client.bound == {"uid-mine": "n1"}


def test_with_in_place_resize_off_a_pod_counts_its_spec() -> None:
    """``--feature-gates InPlacePodVerticalScaling=false``: status resources are not read
    (``UseStatusResources`` false), so the same pod counts only its 200m spec."""
    s, client = service()
    s = SchedulerService(client, seed=1, feature_gates={"InPlacePodVerticalScaling": False})
    client.cache = s.cache
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1", cpu="1"))
    big = pod_obj("big", scheduler="someone-else", node="n1", cpu="200m")
    s.on_pod("ADDED", resizing(big, allocated="200m", actuated="900m"))
    s.on_pod("ADDED", pod_obj("mine", cpu="500m"))
    asyncio.run(drain(s))
    assert client.bound == {"uid-mine": "n1"}


def test_a_device_taint_rule_event_is_a_resource_slice_update_when_it_taints_a_device() -> None:
    """upstream's scheduler sees a DeviceTaintRule through the slices the tracker patches: a rule
    selecting a device of some slice (its add, change or delete) moves pods as a ResourceSlice
    Update; one that selects nothing moves none."""
    from scheduler.framework.types import ClusterEvent
    s, _ = service()
    seen: list[ClusterEvent] = []
    s.queue.move_all_to_active_or_backoff = lambda event, **kw: seen.append(event)  # type: ignore[method-assign]
    s.on_dra_object("ResourceSlice", "ADDED", gpu_slice("n1"))
    seen.clear()
    driver = gpu_slice("n1")["spec"]["driver"]
    rule = {"metadata": {"name": "r"}, "spec": {"deviceSelector": {"driver": driver, "pool": "n1"},
                                                "taint": {"key": "k", "effect": "NoSchedule"}}}
    elsewhere = {"metadata": {"name": "r2"}, "spec": {"deviceSelector": {"pool": "n9"},
                                                      "taint": {"key": "k", "effect": "NoSchedule"}}}
    s.on_dra_object("DeviceTaintRule", "ADDED", elsewhere)
    assert seen == []
    s.on_dra_object("DeviceTaintRule", "ADDED", rule)
    s.on_dra_object("DeviceTaintRule", "DELETED", rule)
    assert [(e.resource, set(e.actions)) for e in seen] == [("ResourceSlice", {"Update"})] * 2
    assert all(d.taints == () for d in s.dra.slices()[0].devices)


def test_status_only_pod_updates_reuse_the_parse_and_still_reach_the_cache() -> None:
    """The Binding's echo and the kubelet's status write reuse the pod's last parse
    (``model.podparser``); the cache still gets the new Pod (phase, node), and DELETED forgets it."""
    s, _ = service()
    s.on_profile("p", {"schedulerName": "s1"})
    s.on_node("ADDED", node_obj("n1"))
    s.on_pod("ADDED", pod_obj("a", cpu="300m"))
    asyncio.run(drain(s))
    assert s.cache.get_pod("uid-a") is not None and s.cache.get_pod("uid-a").node_name == "n1"  # type: ignore[union-attr]
    s.on_pod("MODIFIED", pod_obj("a", node="n1", cpu="300m"))                       # the Binding's echo
    s.on_pod("MODIFIED", pod_obj("a", node="n1", cpu="300m", phase="Running"))      # the kubelet's write
    assert s.pod_parser.hits == 2
    cached = s.cache.get_pod("uid-a")
    assert cached is not None and not s.cache.is_assumed("uid-a")
    assert (cached.node_name, cached.phase, cached.requests.get("cpu")) == ("n1", "Running", 300)
    s.on_pod("MODIFIED", pod_obj("a", node="n1", cpu="500m", phase="Running"))      # a spec change: parsed
    assert s.pod_parser.hits == 2 and s.cache.get_pod("uid-a").requests.get("cpu") == 500  # type: ignore[union-attr]
    s.on_pod("DELETED", pod_obj("a", node="n1"))
    assert len(s.pod_parser) == 0 and s.cache.get_pod("uid-a") is None
