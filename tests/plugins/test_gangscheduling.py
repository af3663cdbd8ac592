"""GangScheduling, after upstream's ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling_test.go``
(the 1.37 shape, with Permit): its tables as data, each case named as upstream names it, run through the
plugin's interfaces against the scheduler's own cache, PodGroup store and waiting pods."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import pytest

from scheduler.cache import Cache
from scheduler.cache.podgroups import PodGroupStore
from scheduler.framework.cycle_state import CycleState, PodGroupCycleState
from scheduler.framework.handle import Handle
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.framework.types import ClusterEvent
from scheduler.framework.waiting_pods import WaitingPods
from scheduler.model import Pod
from scheduler.model.podgroup import PodGroup
from scheduler.plugins import gangscheduling
from scheduler.plugins.gangscheduling import GangScheduling
from tests.builders import node, pod


def member(name: str, group: str, namespace: str = "ns1") -> Pod:
    return pod(name, namespace=namespace, spec={"schedulingGroup": {"podGroupName": group}})


def gang(name: str, min_count: int, namespace: str = "ns1") -> PodGroup:
    return PodGroup(namespace=namespace, name=name, uid=f"uid-{name}", policy="Gang", min_count=min_count)


def basic(name: str, namespace: str = "ns1") -> PodGroup:
    return PodGroup(namespace=namespace, name=name, uid=f"uid-{name}")


# --- Test_isSchedulableAfterPodAdded --------------------------------------------------------------
@pytest.mark.parametrize(("name", "target", "added", "queue"), [
    ("add a newPod which matches the pod's scheduling group", member("p", "pg"), member("q", "pg"), True),
    ("add a newPod which doesn't match the pod's namespace", member("p", "pg"), member("q", "pg", "foo"), False),
    ("add a newPod which doesn't match the pod's pod group name", member("p", "pg1"), member("q", "pg2"), False),
])
def test_is_schedulable_after_pod_added(name: str, target: Pod, added: Pod, queue: bool) -> None:
    hints = {e.event.resource: e.hint for e in GangScheduling(Handle()).events_to_register()}
    for resource in ("UnscheduledPod", "Pod"):          # pending or bound (pre-bound) pods alike
        hint = hints[resource]
        assert hint is not None
        assert hint(target, ClusterEvent(resource, "Add", new=added)) is queue, name


# --- Test_isSchedulableAfterPodGroupAdded ----------------------------------------------------------
@pytest.mark.parametrize(("name", "target", "added", "queue"), [
    ("add a pod group which matches the pod's pod group name", member("p", "pg"), gang("pg", 1), True),
    ("add a pod group which doesn't match the pod's scheduling group name", member("p", "pg1"), gang("pg2", 1),
     False),
    ("add a pod group which doesn't match the pod's scheduling group namespace", member("p", "pg", "ns1"),
     gang("pg", 1, "ns2"), False),
])
def test_is_schedulable_after_pod_group_added(name: str, target: Pod, added: PodGroup, queue: bool) -> None:
    registered = [e for e in GangScheduling(Handle()).events_to_register()
                  if e.event.resource == "PodGroup" and "Add" in e.event.actions]
    assert len(registered) == 1 and registered[0].hint is not None
    assert registered[0].hint(target, ClusterEvent("PodGroup", "Add", new=added)) is queue, name


# --- isSchedulableAfterPodGroupUpdated -------------------------------------------------------------
@pytest.mark.parametrize(("name", "old", "new", "queue"), [
    ("minCount decreased", gang("pg", 4), gang("pg", 3), True),
    ("minCount unchanged", gang("pg", 4), gang("pg", 4), False),
    ("minCount increased", gang("pg", 3), gang("pg", 4), False),
    ("another pod group's minCount decreased", gang("other", 4), gang("other", 3), False),
])
def test_is_schedulable_after_pod_group_updated(name: str, old: PodGroup, new: PodGroup, queue: bool) -> None:
    registered = [e for e in GangScheduling(Handle()).events_to_register()
                  if e.event.resource == "PodGroup" and "Update" in e.event.actions]
    assert len(registered) == 1 and registered[0].hint is not None
    assert registered[0].hint(member("p", "pg"), ClusterEvent("PodGroup", "Update", old=old, new=new)) is queue, name


# --- TestGangSchedulingFlow ------------------------------------------------------------------------
P = {n: member(n, g) for n, g in (("p1", "pg1"), ("p2", "pg1"), ("p3", "pg1"), ("p4", "pg2"), ("p5", "pg2"))}
BASIC_POD = member("basic-pod", "pg3")
NON_GANG = pod("non-gang", namespace="ns1")
GROUPS = {"pg1": gang("pg1", 3), "pg2": gang("pg2", 4), "pg3": basic("pg3")}


@dataclass
class Flow:
    name: str
    pod: Pod
    initial_pods: list[str] = field(default_factory=list)
    initial_groups: list[str] = field(default_factory=list)
    waiting_on_permit: list[str] = field(default_factory=list)
    want_pre_enqueue: Status = SUCCESS
    want_permit: Status = SUCCESS
    want_activated: list[str] = field(default_factory=list)
    want_allowed: list[str] = field(default_factory=list)


FLOWS = [
    Flow("non-gang pod succeeds immediately", NON_GANG, initial_groups=["pg1", "pg2", "pg3"]),
    Flow("basic policy pod succeeds immediately", BASIC_POD, initial_groups=["pg1", "pg2", "pg3"]),
    Flow("gang pod fails PreEnqueue when pod group is not yet created", P["p1"], ["p2", "p3", "p4", "p5"],
         want_pre_enqueue=Status.unresolvable('waiting for pods\'s pod group "pg1" to appear in scheduling queue')),
    Flow("gang pod fails PreEnqueue when quorum is not met", P["p1"], ["p2", "p4", "p5"], ["pg1", "pg2"],
         want_pre_enqueue=Status.unresolvable("waiting for minCount pods from a gang to appear in scheduling queue")),
    Flow("gang pod passes PreEnqueue, but waits at Permit", P["p1"], ["p2", "p3", "p4", "p5"], ["pg1", "pg2"],
         waiting_on_permit=["p2", "p4", "p5"], want_activated=["p3"],
         want_permit=Status(Code.WAIT, ("waiting for minCount pods from a gang to be scheduled",))),
    Flow("final gang pod arrives at Permit and allows all waiting pods from a gang", P["p1"],
         ["p2", "p3", "p4", "p5"], ["pg1", "pg2"], waiting_on_permit=["p2", "p3", "p4", "p5"],
         want_allowed=["p1", "p2", "p3"]),
    # Upstream's "final gang pod arrives at Permit during pod group scheduling cycle": Permit reads
    # the members the PodGroup cycle assumed in the cache, so it is the same flow here.
    Flow("final gang pod arrives at Permit during pod group scheduling cycle", P["p1"],
         ["p2", "p3", "p4", "p5"], ["pg1", "pg2"], waiting_on_permit=["p2", "p3", "p4", "p5"],
         want_allowed=["p1", "p2", "p3"]),
]


# ``memo``: with ``Handle.placed_version`` (as the service wires it) Permit keeps its count of the
# scheduled members while the cache and the store are unchanged; the table holds either way.
@pytest.mark.parametrize("memo", [False, True], ids=["recount", "memo"])
@pytest.mark.parametrize("case", FLOWS, ids=lambda c: c.name)
def test_gang_scheduling_flow(case: Flow, memo: bool) -> None:
    cache = Cache()
    cache.add_node(node("some-node", cpu="64"))
    store = PodGroupStore()
    for g in case.initial_groups:
        store.upsert(GROUPS[g])
    for n in case.initial_pods:
        store.track(P[n])
    store.track(case.pod)
    waiting = WaitingPods()
    activated: list[str] = []
    by_uid = {p.uid: n for n, p in [*P.items(), ("basic-pod", BASIC_POD), ("non-gang", NON_GANG)]}
    handle = Handle(pod_groups=store, assigned_pod=cache.get_pod, waiting_pods=waiting,
                    activate=lambda uids: activated.extend(by_uid[u] for u in uids),
                    placed_version=(lambda: cache.pods_version) if memo else None)
    pl = gangscheduling.new(None, handle)

    got = pl.pre_enqueue(case.pod)
    assert got == case.want_pre_enqueue
    if not got.is_success():
        return
    # Other pods have already hit Permit and wait there (as the framework parks them).
    for n in case.waiting_on_permit:
        assumed = cache.assume_pod(P[n], "some-node")
        s, timeout = pl.permit(CycleState(), assumed, "some-node")
        assert s.is_wait() and timeout == gangscheduling.PERMIT_TIMEOUT, n
        waiting.park(assumed.uid)
    activated.clear()

    assumed = cache.assume_pod(case.pod, "some-node")
    got, _ = pl.permit(CycleState(), assumed, "some-node")
    assert got == case.want_permit
    if got.is_wait():
        return
    assert sorted(activated) == sorted(case.want_activated)

    async def decided(name: str) -> Status:
        return await waiting.wait(P[name], 0.01, gangscheduling.NAME)
    for n in case.want_allowed:
        if n != case.pod.name:
            assert asyncio.run(decided(n)).is_success(), f"{n} was not allowed"
    for n in set(case.waiting_on_permit) - set(case.want_allowed):
        assert asyncio.run(decided(n)).code == Code.UNSCHEDULABLE, f"{n} of another gang was allowed"


def test_an_unreserved_member_rejects_the_waiting_members_of_its_gang_only() -> None:
    cache = Cache()
    cache.add_node(node("n", cpu="64"))
    store = PodGroupStore()
    for g in ("pg1", "pg2"):
        store.upsert(GROUPS[g])
    for p in P.values():
        store.track(p)
    waiting = WaitingPods()
    pl = gangscheduling.new(None, Handle(pod_groups=store, assigned_pod=cache.get_pod, waiting_pods=waiting))
    for n in ("p2", "p4"):
        waiting.park(P[n].uid)
    pl.unreserve(CycleState(), P["p1"], "n")

    async def decided(name: str) -> Status:
        return await waiting.wait(P[name], 0.01, gangscheduling.NAME)
    rejected = asyncio.run(decided("p2"))
    assert rejected.code == Code.UNSCHEDULABLE and rejected.plugin == gangscheduling.NAME
    assert rejected.reasons == (gangscheduling.member_rejected(P["p1"]),)
    assert "rejected due to timeout" in asyncio.run(decided("p4")).message()


def test_permits_count_follows_the_cache_and_the_store() -> None:
    """The kept count of scheduled members moves with the cache (a member forgotten, assumed) and
    the store (a member gone): Permit then waits, or allows, as a recount would say."""
    cache = Cache()
    cache.add_node(node("n", cpu="64"))
    store = PodGroupStore()
    store.upsert(GROUPS["pg1"])
    members = [p for p in P.values() if p.scheduling_group == "pg1"]
    for p in members:
        store.track(p)
    pl = gangscheduling.new(None, Handle(pod_groups=store, assigned_pod=cache.get_pod, waiting_pods=WaitingPods(),
                                         placed_version=lambda: cache.pods_version))
    group = GROUPS["pg1"]
    assert group.is_gang
    assumed = [cache.assume_pod(p, "n") for p in members[:group.min_count]]
    assert pl.permit(CycleState(), assumed[0], "n")[0].is_success()
    cache.forget_pod(assumed[-1])
    assert pl.permit(CycleState(), assumed[0], "n")[0].is_wait()
    assumed[-1] = cache.assume_pod(members[group.min_count - 1], "n")
    assert pl.permit(CycleState(), assumed[0], "n")[0].is_success()
    store.untrack(assumed[-1].uid)
    assert pl.permit(CycleState(), assumed[0], "n")[0].is_wait()


def test_permit_in_the_pod_group_cycle_answers_from_the_cycles_count() -> None:
    """In the PodGroup cycle's algorithm (``CycleState.pod_group_cycle`` set), Permit reads the
    cycle's count of scheduled members, not the cache (where nothing is assumed here): Wait below
    minCount, activating the group's unscheduled members as upstream's Permit does (most are the
    cycle's, in flight: the queue marks them), once for the cycle, whose state the members share;
    at minCount the member is allowed, and so are its group's members parked at Permit, not
    another group's."""
    cache = Cache()
    store = PodGroupStore()
    for g in ("pg1", "pg2"):
        store.upsert(GROUPS[g])
    for p in P.values():
        store.track(p)
    waiting = WaitingPods()
    activated: list[list[str]] = []
    pl = gangscheduling.new(None, Handle(pod_groups=store, assigned_pod=cache.get_pod, waiting_pods=waiting,
                                         activate=activated.append))
    for n in ("p2", "p4"):
        waiting.park(P[n].uid)
    state = CycleState()
    state.pod_group_cycle = PodGroupCycleState(scheduled=2)       # minCount 3
    status, timeout = pl.permit(state, P["p1"], "n")
    assert (status.code, status.reasons, timeout) == (Code.WAIT, (gangscheduling.WAITING_AT_PERMIT,),
                                                      gangscheduling.PERMIT_TIMEOUT)
    others = [p.uid for p in P.values() if p.scheduling_group == "pg1" and p.uid != P["p1"].uid]
    assert activated == [others] and others
    assert pl.permit(state, P["p1"], "n")[0].is_wait()
    assert activated == [others]                                  # once for the cycle
    state.pod_group_cycle.scheduled = 3
    assert pl.permit(state, P["p1"], "n") == (SUCCESS, 0.0)

    async def decided(name: str) -> Status:
        return await waiting.wait(P[name], 0.01, gangscheduling.NAME)
    assert asyncio.run(decided("p2")).is_success()
    assert "rejected due to timeout" in asyncio.run(decided("p4")).message()
    # Out of the cycle the same call counts the cache, where no member of pg1 is: Wait.
    assert pl.permit(CycleState(), P["p1"], "n")[0].is_wait()
