"""NominatedNodeNameForExpectation (KEP-5278, beta and on in 1.37): the binding cycle writes
``status.nominatedNodeName`` before a Permit wait or a PreBind that has work, clears it when the
binding fails, and a nomination another component set is honoured (tried first, reserved).

Upstream: ``pkg/scheduler/schedule_one.go`` (``bindingCycle``, ``handleBindingCycleError``,
``clearNominatedNode``) and ``test/integration/scheduler/nominated_node_name``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.plugins.registry import PluginSpec
from scheduler.service import SchedulerService
from tests import builders
from tests.builders import MemoryClient, make_scheduler, node, pod
from tests.cycle.test_cycle import gated_scheduler, run


class Provisioning:
    """A PreBind with work (its PreBindPreFlight says Success), as VolumeBinding with a volume to
    provision: it records what the client had written when it ran."""

    name = "Provisioning"

    def __init__(self, client: MemoryClient, fail: bool = False) -> None:
        self.client, self.fail = client, fail
        self.seen: list[tuple[str, str]] | None = None

    def pre_bind_pre_flight(self, state: Any, p: Any, node_name: str) -> Status:
        return SUCCESS

    async def pre_bind(self, state: Any, p: Any, node_name: str) -> Status:
        self.seen = list(self.client.nominated)
        return Status(Code.ERROR, ("provisioning failed",)) if self.fail else SUCCESS


def provisioning_scheduler(fail: bool = False) -> tuple[Any, MemoryClient, Provisioning]:
    holder: dict[str, Provisioning] = {}
    original = builders.Registry

    def factory(args: Any, handle: Any) -> Provisioning:
        holder["p"] = Provisioning(handle.client, fail)
        return holder["p"]

    builders.Registry = lambda: original(extra={"Provisioning": PluginSpec("Provisioning", factory)})  # type: ignore[misc]
    try:
        s, client = make_scheduler({"plugins": {"preBind": {"enabled": [{"name": "Provisioning"}]}}})
    finally:
        builders.Registry = original  # type: ignore[misc]
    return s, client, holder["p"]


def test_a_pod_bound_at_once_is_not_nominated() -> None:
    """No Permit wait, and the default PreBinds (VolumeBinding, DynamicResources) say Skip for a
    pod without volumes or claims: it is bound at once, with no nominatedNodeName write."""
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p")
    s.queue.add(p)
    run(s)
    assert client.bound == {p.uid: "n1"} and client.nominated == []


def test_a_pod_whose_pre_bind_has_work_is_nominated_before_it_runs() -> None:
    s, client, plugin = provisioning_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p")
    s.queue.add(p)
    run(s)
    assert plugin.seen == [("default/p", "n1")]          # written before PreBind ran
    assert client.bound == {p.uid: "n1"}


def test_a_pod_waiting_at_permit_is_nominated_while_it_waits() -> None:
    s, client = gated_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p")
    s.queue.add(p)

    async def go() -> None:
        task = asyncio.create_task(s.finish(s.schedule_one(s.queue.pop(0))))  # type: ignore[arg-type]
        deadline = time.monotonic() + 5
        while not client.nominated and time.monotonic() < deadline:
            await asyncio.sleep(0.001)
        assert client.nominated == [("default/p", "n1")] and not client.bound     # waiting at Permit
        s.profiles.current["default-scheduler"].allow(p.uid)
        await task
    asyncio.run(go())
    assert client.bound == {p.uid: "n1"}


def test_a_failed_binding_clears_the_nomination_it_wrote() -> None:
    """handleBindingCycleError reports with clearNominatedNode: the FailedScheduling status write
    clears nominatedNodeName ("")."""
    s, client, _ = provisioning_scheduler(fail=True)
    s.cache.add_node(node("n1"))
    p = pod("p")
    s.queue.add(p)
    run(s)
    assert client.nominated == [("default/p", "n1")]
    assert client.failures == [("default/p", "SchedulerError", "binding rejected: provisioning failed", "")]
    assert s.queue.nominator.node_of(p.uid) == ""


def test_a_failure_without_post_filter_clears_another_components_nomination() -> None:
    """Upstream's schedulingCycle: no PostFilter plugin to run (preemption disabled), so the
    failure clears the nomination (kubernetes/kubernetes#135007); a pod without one is not written."""
    s, client = make_scheduler({"plugins": {"postFilter": {"disabled": [{"name": "*"}]}}})
    s.cache.add_node(node("n1", cpu="1"))
    nominated = pod("big", "2", status={"nominatedNodeName": "n1"})
    plain = pod("plain", "2")
    s.queue.add(nominated)
    s.queue.add(plain)
    run(s)
    by_pod = {k: nnn for k, _, _, nnn in client.failures}
    assert by_pod == {"default/big": "", "default/plain": None}
    assert s.queue.nominator.node_of(nominated.uid) == ""


def test_another_components_nomination_is_tried_first() -> None:
    """An autoscaler nominated ``p`` to the small node n2: the scheduler evaluates n2 first and
    binds it there, where the same pod without a nomination goes to the emptier n1."""
    s, client = make_scheduler()
    s.cache.add_node(node("n1", cpu="8"))
    s.cache.add_node(node("n2", cpu="2"))
    expected = pod("expected", "1", status={"nominatedNodeName": "n2"})
    plain = pod("plain", "1")
    s.queue.add(expected)
    s.queue.add(plain)
    run(s)
    assert client.bound == {expected.uid: "n2", plain.uid: "n1"}


def test_another_components_nomination_reserves_its_room() -> None:
    """While ``expected`` (nominated to n2 by another component) waits in the queue, a pod of lower
    priority does not take n2's room (Filter with nominated pods); then ``expected`` gets n2."""
    s, client = make_scheduler()
    s.cache.add_node(node("n1", cpu="1"))
    s.cache.add_node(node("n2", cpu="2"))
    low = pod("low", "1500m", priority=0)
    s.queue.add(low)
    info = s.queue.pop(0)
    assert info is not None
    expected = pod("expected", "1500m", priority=10, status={"nominatedNodeName": "n2"})
    s.queue.add(expected)
    asyncio.run(s.finish(s.schedule_one(info)))
    assert low.uid not in client.bound
    run(s)
    assert client.bound == {expected.uid: "n2"}


def test_the_gate_off_writes_no_nomination() -> None:
    off = SchedulerService(MemoryClient(), feature_gates={"NominatedNodeNameForExpectation": False})
    assert off.scheduler.nominate_for_expectation is False
    assert SchedulerService(MemoryClient()).scheduler.nominate_for_expectation is True
    s, client, plugin = provisioning_scheduler()
    s.nominate_for_expectation = False
    s.cache.add_node(node("n1"))
    s.queue.add(pod("p"))
    run(s)
    assert plugin.seen == [] and client.nominated == []
