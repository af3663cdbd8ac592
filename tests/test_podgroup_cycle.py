"""The PodGroup cycle (``scheduler/podgroup_cycle.py``) through the service, as the operator drives
it: PodGroups, nodes and pods in through the watch handlers, bindings, events and the PodGroup's
condition out through the client. After upstream's ``schedule_one_podgroup_test.go`` where its
cases apply (a group that fits binds whole, one that does not binds nothing and reserves nothing)."""

from __future__ import annotations

import asyncio
import random
import time
from typing import Any

import pytest

from scheduler import podgroup_cycle
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.interfaces import PostFilterContext
from scheduler.framework.status import Code
from scheduler.model import parse_pod
from scheduler.model.podgroup import POD_GROUP_INITIALLY_SCHEDULED
from scheduler.plugins import gangscheduling
from scheduler.plugins.defaultpreemption import DefaultPreemption
from scheduler.service import SchedulerService
from tests.builders import MemoryClient, pod

GATES = {"GenericWorkload": True}


def group_obj(name: str, min_count: int, *, namespace: str = "default") -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": namespace, "uid": f"uid-pg-{name}", "resourceVersion": "1"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def pod_obj(name: str, *, group: str | None = None, cpu: str = "1", node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "default-scheduler", "containers": [
        {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": spec,
            "status": {"phase": "Pending"}}


def node_obj(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def gang_service(nodes: int, cpu: str = "4", *, gates: dict[str, bool] | None = None
                 ) -> tuple[SchedulerService, MemoryClient]:
    client = MemoryClient()
    s = SchedulerService(client, seed=1, feature_gates=GATES if gates is None else gates)
    client.cache = s.cache
    s.on_profile("default", {"schedulerName": "default-scheduler"})
    for i in range(nodes):
        s.on_node("ADDED", node_obj(f"node-{i}", cpu))
    return s, client


def drain(s: SchedulerService) -> None:
    asyncio.run(s.scheduler.run_until_idle())


def bound_of(client: MemoryClient, prefix: str) -> dict[str, str]:
    return {uid: n for uid, n in client.bound.items() if uid.startswith(f"uid-{prefix}")}


def reasons_of(s: SchedulerService, p: Any) -> tuple[str, ...]:
    fwk = s.profiles.for_pod(p)
    assert fwk is not None
    return fwk.run_pre_enqueue(p).reasons


def condition(client: MemoryClient, group: str) -> dict[str, str]:
    return client.pod_group_conditions[f"default/{group}"][POD_GROUP_INITIALLY_SCHEDULED]


def test_the_gate_puts_gang_scheduling_in_the_default_profile_and_only_then() -> None:
    on, _ = gang_service(1)
    off, _ = gang_service(1, gates={})
    on_fwk = on.profiles.for_pod(pod("probe"))
    assert on_fwk is not None and gangscheduling.NAME in on_fwk.plugins_by_name
    assert [p.name for p in on_fwk.pre_enqueue][-1] == gangscheduling.NAME
    assert [p.name for p in on_fwk.permit] == [gangscheduling.NAME]
    off_fwk = off.profiles.for_pod(pod("probe"))
    assert off_fwk is not None and gangscheduling.NAME not in off_fwk.plugins_by_name


def test_a_gang_waits_for_its_quorum_then_binds_whole() -> None:
    """Quorum wait: two of three members exist, so both are gated with upstream's message and nothing
    binds; the third's arrival lets all three in, and the group binds in one cycle."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("train", 3))
    for i in range(2):
        s.on_pod("ADDED", pod_obj(f"train-{i}", group="train"))
    drain(s)
    assert client.bound == {}
    assert s.queue.where("uid-train-0") == "gated"
    gated = next(i for i in s.queue.pending() if i.uid == "uid-train-0")
    assert gated.gating_plugin == gangscheduling.NAME
    assert reasons_of(s, gated.pod) == (
        gangscheduling.WAITING_FOR_MIN_COUNT,)
    s.on_pod("ADDED", pod_obj("train-2", group="train"))
    cycles = asyncio.run(s.scheduler.run_until_idle())
    assert len(bound_of(client, "train")) == 3
    assert cycles == 1                  # one PodGroup cycle placed the three
    assert condition(client, "train")["status"] == "True"
    assert condition(client, "train")["reason"] == "Scheduled"


def test_a_member_waits_for_its_missing_pod_group() -> None:
    s, client = gang_service(1)
    s.on_pod("ADDED", pod_obj("solo", group="later"))
    drain(s)
    gated = next(i for i in s.queue.pending() if i.uid == "uid-solo")
    assert reasons_of(s, gated.pod) == (
        'waiting for pods\'s pod group "later" to appear in scheduling queue',)
    s.on_pod_group("ADDED", group_obj("later", 1))
    drain(s)
    assert client.bound == {"uid-solo": "node-0"}


def test_a_gang_that_fits_binds_every_member() -> None:
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("fits", 4))
    for i in range(4):
        s.on_pod("ADDED", pod_obj(f"fits-{i}", group="fits", cpu="2"))
    drain(s)
    assert sorted(bound_of(client, "fits").values()) == ["node-0", "node-0", "node-1", "node-1"]
    assert client.failures == []


def test_a_gang_that_does_not_fit_binds_none_reserves_nothing_and_says_why_per_node() -> None:
    """Three members of 3 cpu on two 4-cpu nodes: each node takes one and refuses the next, so the
    quorum (3) is never met: nothing is bound or left assumed, and the group's condition and every
    member's FailedScheduling event give the per-node diagnosis."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("big", 3))
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"big-{i}", group="big", cpu="3"))
    drain(s)
    assert client.bound == {}
    assert s.cache.assumed_count() == 0
    # The group's PostFilter (workload-aware preemption) found nothing to preempt: its message follows,
    # as upstream's FitError carries it.
    want = ("pod group default/big: 2 of 3 pods placed, minCount 3; 0/2 nodes can take the rest: "
            "node-0 accepted 1, then Insufficient cpu; node-1 accepted 1, then Insufficient cpu. "
            "pod group preemption: No preemption victims found for incoming preemptor")
    cond = condition(client, "big")
    assert (cond["status"], cond["reason"], cond["message"]) == ("False", "Unschedulable", want)
    assert sorted((f[0], f[1], f[2]) for f in client.failures) == [
        (f"default/big-{i}", "Unschedulable", want) for i in range(3)]
    # All three wait together, each with the plugins whose events may help the group.
    for i in range(3):
        assert s.queue.where(f"uid-big-{i}") in ("unschedulable", "backoff")


def test_a_gang_larger_than_its_quorum_binds_the_members_that_fit() -> None:
    """minCount 2 of 3 members, room for two: the quorum is met, so the two are bound and the third
    fails on its own, with its own FitError, while the group counts as scheduled. The FitError carries
    its own PostFilter's refusal, as upstream's PodGroup cycle runs every member's PostFilter
    (runAllPostFilters) and DefaultPreemption refuses a gang member. GangScheduling's Permit
    activated it while it was in flight, so it goes to backoffQ, not to wait for an event, and is
    tried again alone: the quorum bound, its group's PostFilter finds no victim, and it fails the
    same way, this time to wait in the unschedulable pods (nothing activated it)."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("elastic", 2))
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"elastic-{i}", group="elastic", cpu="3"))
    drain(s)
    assert sorted(bound_of(client, "elastic").values()) == ["node-0", "node-1"]
    straggler = next(uid for uid in ("uid-elastic-0", "uid-elastic-1", "uid-elastic-2")
                     if uid not in client.bound)
    assert [(f[1], f[2]) for f in client.failures] == [
        ("Unschedulable", "0/2 nodes are available: 2 Insufficient cpu. "
                          "preemption: not eligible due to workload aware preemption enabled")] * 2
    assert s.queue.where(straggler) == "unschedulable"
    assert condition(client, "elastic")["status"] == "True"


def test_two_gangs_that_each_need_the_whole_cluster_never_deadlock() -> None:
    """Each gang needs both nodes whole. One binds fully, the other not at all; once the first
    gang's pods are deleted, the second binds fully."""
    s, client = gang_service(2)
    for g in ("a", "b"):
        s.on_pod_group("ADDED", group_obj(g, 2))
    for i in range(2):
        for g in ("a", "b"):
            s.on_pod("ADDED", pod_obj(f"{g}-{i}", group=g, cpu="4"))
    drain(s)
    a, b = bound_of(client, "a"), bound_of(client, "b")
    assert sorted((len(a), len(b))) == [0, 2], (a, b)
    first, second = ("a", "b") if a else ("b", "a")
    for i in range(2):
        s.on_pod("DELETED", pod_obj(f"{first}-{i}", group=first, cpu="4", node=f"node-{i}"))
    deadline = time.monotonic() + 30
    while len(bound_of(client, second)) < 2 and time.monotonic() < deadline:
        drain(s)                              # the second gang waits out its backoff
        time.sleep(0.05)
    assert sorted(bound_of(client, second).values()) == ["node-0", "node-1"]


def test_a_group_whose_pods_name_two_schedulers_is_not_scheduled() -> None:
    """schedule_one_podgroup.go's frameworkForPodGroup (TestFrameworkForPodGroup, "pods with
    different scheduler names"): the group's queued pods name two of this scheduler's profiles, so
    none is placed and each fails with upstream's error, through its own profile."""
    s, client = gang_service(2)
    s.on_profile("other", {"schedulerName": "other-scheduler"})
    s.on_pod_group("ADDED", group_obj("mixed", 2))
    s.on_pod("ADDED", pod_obj("mixed-0", group="mixed"))
    other = pod_obj("mixed-1", group="mixed")
    other["spec"]["schedulerName"] = "other-scheduler"
    s.on_pod("ADDED", other)
    drain(s)
    assert client.bound == {}
    messages = {f[0]: f[2] for f in client.failures}
    assert set(messages) == {"default/mixed-0", "default/mixed-1"}
    assert {m.split(", got: ")[0] for m in messages.values()} == {
        "all pods in a single pod group should have the same .spec.schedulerName set"}
    assert all(sorted(m.split("got: ")[1].split(" and ")) == ['"default-scheduler"', '"other-scheduler"']
               for m in messages.values()), messages


def test_a_basic_pod_group_is_scheduled_pod_by_pod() -> None:
    s, client = gang_service(1, cpu="2")
    s.on_pod_group("ADDED", {**group_obj("web", 1), "spec": {"schedulingPolicy": {"basic": {}}}})
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"web-{i}", group="web", cpu="1"))
    drain(s)
    assert len(bound_of(client, "web")) == 2          # two fit; a basic group is no gang
    assert "default/web" not in client.pod_group_conditions


@pytest.mark.parametrize("seed", range(6))
def test_fuzz_no_gang_is_ever_partly_bound_and_no_pod_is_bound_twice(seed: int) -> None:
    """Random gangs and plain pods arriving in random order on a random small cluster, with whole
    gangs deleted now and then: after every drain each gang has none or all of its members bound,
    nothing stays assumed, and MemoryClient refuses a second bind of any pod. Bounded: 20 s a seed."""
    rng = random.Random(seed)
    s, client = gang_service(rng.randint(2, 4), cpu=str(rng.choice((4, 6, 8))))
    gangs: dict[str, int] = {}
    events: list[tuple[str, dict[str, Any]]] = []
    for g in range(rng.randint(2, 4)):
        name, size = f"g{g}", rng.randint(2, 4)
        gangs[name] = size
        events.append(("group", group_obj(name, size)))
        events += [("pod", pod_obj(f"g{g}x{i}", group=name, cpu=str(rng.randint(1, 4)))) for i in range(size)]
    events += [("pod", pod_obj(f"plain{i}", cpu=str(rng.randint(1, 3)))) for i in range(rng.randint(0, 6))]
    rng.shuffle(events)
    # A PodGroup may come after its pods (they wait for it), as an informer may deliver them.

    def check() -> None:
        for name, size in gangs.items():
            n = sum(1 for uid in client.bound if uid.startswith(f"uid-{name}x"))
            assert n in (0, size), f"seed {seed}: gang {name} has {n} of {size} bound"
        assert s.cache.assumed_count() == 0

    deadline = time.monotonic() + 20
    for kind, obj in events:
        (s.on_pod_group if kind == "group" else s.on_pod)("ADDED", obj)
        if rng.random() < 0.3:
            drain(s)
            check()
    drain(s)
    check()
    for _ in range(2):                        # whole gangs go, the others may then fit
        done = [g for g in gangs if any(uid.startswith(f"uid-{g}x") for uid in client.bound)]
        if not done:
            break
        victim = rng.choice(done)
        for uid, node in list(client.bound.items()):
            if uid.startswith(f"uid-{victim}x"):
                s.on_pod("DELETED", pod_obj(uid.removeprefix("uid-"), group=victim, node=node))
                del client.bound[uid]
        del gangs[victim]
        while time.monotonic() < deadline and s.queue.counts()["backoff"]:
            drain(s)
            check()
            time.sleep(0.05)
        drain(s)
        check()


def test_pod_group_info_for_pod_orders_members_by_priority_then_time() -> None:
    """schedule_one_podgroup_test.go, TestPodGroupInfoForPod, "Success with multiple pods, sorted by
    priority and timestamp": p1 (100, t), p2 (200, t+1), p4 (150, t+1), p3 (150, t+2) are tried in the
    order p2, p4, p3, p1. Seen from outside: a 2-cpu node and a gang of 1-cpu pods with minCount 2 binds
    the first two tried, p2 and p4."""
    s, client = gang_service(1, cpu="2")
    s.on_pod_group("ADDED", group_obj("pg", 2))
    for name, priority in (("p1", 100), ("p2", 200), ("p4", 150), ("p3", 150)):
        s.on_pod("ADDED", prio_pod(name, priority, group="pg"))
    drain(s)
    assert client.bound == {"uid-p2": "node-0", "uid-p4": "node-0"}


def test_skip_pod_group_pod_schedule() -> None:
    """schedule_one_podgroup_test.go, TestSkipPodGroupPodSchedule: of a group's pods p1, p2 (terminating)
    and p3 (already assumed), the cycle places p1 alone; p2 and p3 are skipped, neither bound nor
    assumed again."""
    s, client = gang_service(1)
    s.on_pod_group("ADDED", group_obj("pg", 1))
    terminating = pod_obj("p2", group="pg")
    terminating["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    for obj in (pod_obj("p1", group="pg"), terminating, pod_obj("p3", group="pg")):
        s.on_pod("ADDED", obj)
    s.cache.assume_pod(parse_pod(pod_obj("p3", group="pg")), "node-0")
    drain(s)
    assert client.bound == {"uid-p1": "node-0"}
    assert s.cache.is_assumed("uid-p3") and not s.cache.is_assumed("uid-p2")


# --- workload-aware preemption (scheduler/plugins/podgrouppreemption.py) ---------------------------------
def prio_group(name: str, min_count: int, priority: int, mode: str = "single") -> dict[str, Any]:
    obj = group_obj(name, min_count)
    obj["spec"].update({"priority": priority, "disruptionMode": {mode: {}}})
    return obj


def prio_pod(name: str, priority: int, *, group: str | None = None, cpu: str = "1", node: str = "") -> dict[str, Any]:
    obj = pod_obj(name, group=group, cpu=cpu, node=node)
    obj["spec"]["priority"] = priority
    return obj


def run_until(s: SchedulerService, client: MemoryClient, done: Any, seconds: float = 10) -> None:
    """The worker as the operator runs it (async preemption included), until ``done()`` or the bound."""
    client.queue = s.queue

    async def go() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(s.run_worker(stop))
        deadline = time.monotonic() + seconds
        while not done() and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        stop.set()
        await worker

    asyncio.run(go())


def test_a_gang_preempts_lower_priority_pods_as_a_unit_then_binds_whole() -> None:
    """Two 4-cpu nodes full of priority-0 pods; a gang of two 4-cpu members at priority 1000 (minCount
    2) cannot be placed, so its PodGroup cycle preempts both pods at once, nominates each member, and
    the gang then binds whole. The members' first failure says so in upstream's words."""
    s, client = gang_service(2)
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"low-{i}", 0, cpu="4", node=f"node-{i}"))
    s.on_pod_group("ADDED", prio_group("train", 2, 1000))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"train-{i}", 1000, group="train", cpu="4"))
    run_until(s, client, lambda: len(bound_of(client, "train")) == 2)
    assert sorted(v for v, _, _ in client.preempted) == ["default/low-0", "default/low-1"]
    assert sorted(bound_of(client, "train").values()) == ["node-0", "node-1"]
    first = [f for f in client.failures if f[0].startswith("default/train")][:2]
    assert all("pod group preemption: found a placement for podgroup, preempting 2 victims" in f[2] for f in first)
    assert sorted(f[3] or "" for f in first) == ["node-0", "node-1"]      # nominated, one member each
    assert condition(client, "train")["status"] == "True"


def test_a_gang_never_preempts_pods_of_equal_or_higher_priority() -> None:
    s, client = gang_service(2)
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"peer-{i}", 1000, cpu="4", node=f"node-{i}"))
    s.on_pod_group("ADDED", prio_group("train", 2, 1000))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"train-{i}", 1000, group="train", cpu="4"))
    drain(s)
    assert client.preempted == [] and client.bound == {}
    assert condition(client, "train")["message"].endswith(
        "pod group preemption: No preemption victims found for incoming preemptor")
    assert all(f[3] is None for f in client.failures)                   # nobody nominated


@pytest.mark.parametrize(("mode", "victims"), [
    ("single", ["default/old-0"]),                      # one pod of the group is enough, and allowed
    ("all", ["default/old-0", "default/old-1"]),        # the group goes whole, node-1's member too
])
def test_a_victim_group_is_evicted_whole_only_with_disruption_mode_all(mode: str, victims: list[str]) -> None:
    """A running gang "old" (priority 0) has a member on each node; a 1-cpu plain pod shares node-1. The
    new gang's single 4-cpu member fits only on node-0 once old-0 goes. ``Single`` lets preemption
    take old-0 alone; ``All`` takes every member of "old" (upstream's disruptionMode). The plain pod
    is never a victim: it is reprieved."""
    s, client = gang_service(0)
    s.on_node("ADDED", node_obj("node-0", "4"))
    s.on_node("ADDED", node_obj("node-1", "3"))
    s.on_pod_group("ADDED", prio_group("old", 2, 0, mode))
    s.on_pod("ADDED", prio_pod("old-0", 0, group="old", cpu="2", node="node-0"))
    s.on_pod("ADDED", prio_pod("old-1", 0, group="old", cpu="2", node="node-1"))
    s.on_pod("ADDED", prio_pod("plain", 0, cpu="1", node="node-1"))
    s.on_pod_group("ADDED", prio_group("new", 1, 1000))
    s.on_pod("ADDED", prio_pod("new-0", 1000, group="new", cpu="4"))
    run_until(s, client, lambda: "uid-new-0" in client.bound)
    assert sorted(v for v, _, _ in client.preempted) == victims
    assert client.bound.get("uid-new-0") == "node-0"


@pytest.mark.parametrize(("mode", "gates", "victims"), [
    ("single", GATES, ["default/old-0"]),
    ("all", GATES, ["default/old-0", "default/old-1"]),
    # default_preemption_workload_test.go, "workload aware preemption disabled": every pod alone.
    ("all", {}, ["default/old-0"]),
], ids=["single", "all", "all, GenericWorkload off"])
def test_a_plain_pod_preempts_a_disruption_mode_all_group_whole(mode: str, gates: dict[str, bool],
                                                                victims: list[str]) -> None:
    """A plain high-priority pod needs node-0 whole, where one member of the running gang "old" is; the
    other member is on node-1. With GenericWorkload a victim is a unit: ``All`` takes "old" whole, on
    both nodes; ``Single`` takes old-0 alone (upstream's SelectVictimsOnNode over DomainVictims). With
    the gate off, groups mean nothing to preemption."""
    s, client = gang_service(0, gates=gates)
    s.on_node("ADDED", node_obj("node-0", "4"))
    s.on_node("ADDED", node_obj("node-1", "2"))
    s.on_pod_group("ADDED", prio_group("old", 2, 0, mode))
    s.on_pod("ADDED", prio_pod("old-0", 0, group="old", cpu="2", node="node-0"))
    s.on_pod("ADDED", prio_pod("old-1", 0, group="old", cpu="2", node="node-1"))
    s.on_pod("ADDED", prio_pod("hi", 1000, cpu="4"))
    run_until(s, client, lambda: "uid-hi" in client.bound)
    assert sorted(v for v, _, _ in client.preempted) == victims
    assert client.bound.get("uid-hi") == "node-0"


def test_a_gang_member_never_preempts_on_its_own() -> None:
    """A member left over once its gang's quorum is met fails alone, and preempts nothing: only the
    PodGroup cycle preempts for a gang (here nothing would make room: its bound member fills the node
    with "low"). Its own PostFilter refuses in upstream's words, which its FitError carries (upstream
    runs a member's PostFilter in the PodGroup cycle), and nothing else is said of preemption."""
    s, client = gang_service(1)
    s.on_pod("ADDED", prio_pod("low", 0, cpu="4", node="node-0"))
    s.on_pod_group("ADDED", prio_group("g", 1, 1000))
    s.on_pod("ADDED", prio_pod("g-0", 1000, group="g", cpu="4", node="node-0"))   # the quorum, already bound
    s.on_pod("ADDED", prio_pod("g-1", 1000, group="g", cpu="4"))
    drain(s)
    assert client.preempted == []
    assert [f[0] for f in client.failures] == ["default/g-1"]
    assert client.failures[0][2].endswith(" Insufficient cpu. preemption: "
                                          "not eligible due to workload aware preemption enabled")
    assert client.failures[0][2].count("preemption") == 2       # the refusal's own two words, no more
    member = parse_pod(prio_pod("g-1", 1000, group="g", cpu="4"))
    fwk = s.profiles.for_pod(member)
    assert fwk is not None
    plugin = fwk.plugins_by_name["DefaultPreemption"]
    assert isinstance(plugin, DefaultPreemption)
    with s.cache.lock:
        result, status = plugin.post_filter(fwk.new_cycle_state(), member, NodeToStatus(),
                                            PostFilterContext(s.cache.snapshot(), fwk))
    assert result is None
    assert (status.code, status.message()) == (Code.UNSCHEDULABLE,
                                               "preemption: not eligible due to workload aware preemption enabled")


def test_a_member_left_over_after_the_quorum_preempts_through_its_pod_group() -> None:
    """podgroup_test.go, "gang schedules with workload-aware preemption", when the fourth member comes
    after the first three were placed: four 1-cpu pods at priority 10 fill the 4-cpu node; the gang
    (minCount 3, priority 100) preempts three of them for its first three members. The fourth, alone,
    fits nowhere; its PodGroup cycle (the quorum already met) preempts the last low pod for it, as the
    group, on the cluster-wide candidate, and it binds."""
    s, client = gang_service(1)
    for i in range(4):
        s.on_pod("ADDED", prio_pod(f"low-{i}", 10, node="node-0"))
    s.on_pod_group("ADDED", prio_group("g", 3, 100))
    for i in range(3):
        s.on_pod("ADDED", prio_pod(f"g-{i}", 100, group="g"))
    run_until(s, client, lambda: len(bound_of(client, "g-")) == 3)
    assert len(bound_of(client, "g-")) == 3 and len(client.preempted) == 3
    s.on_pod("ADDED", prio_pod("g-3", 100, group="g"))
    run_until(s, client, lambda: len(bound_of(client, "g-")) == 4)
    assert bound_of(client, "g-") == {f"uid-g-{i}": "node-0" for i in range(4)}
    assert sorted(v for v, _, _ in client.preempted) == [f"default/low-{i}" for i in range(4)]
    assert {n for _, _, n in client.preempted} == {"cluster"}
    assert sorted(client.preempted_for_group) == [(f"default/low-{i}", "default/g") for i in range(4)]


def test_a_member_left_over_in_the_cycle_that_allowed_its_group_fails_as_it_is_then_preempts_alone() -> None:
    """schedule_one_podgroup.go: the group is allowed (GangScheduling's Permit at the third member),
    so ``podGroupCycle`` runs no PodGroup PostFilter and ``submitPodGroupAlgorithmResult`` fails the
    fourth member, which fits nowhere, with its own FitError; nothing is preempted in that cycle.
    The Permit of the first members activated the group's unscheduled members, this one among them
    while it was in flight, so it goes to backoffQ rather than wait for an event; tried again
    alone, the quorum scheduled, the group is Unschedulable and its PostFilter preempts the low pod
    for it (how upstream's "gang schedules with workload-aware preemption" places its straggler)."""
    s, client = gang_service(1)
    s.on_pod("ADDED", prio_pod("low", 10, node="node-0"))
    s.on_pod_group("ADDED", prio_group("g", 3, 100))
    for i in range(4):
        s.on_pod("ADDED", prio_pod(f"g-{i}", 100, group="g"))
    info = s.queue.pop(timeout=0)
    assert info is not None
    asyncio.run(asyncio.wait_for(s.scheduler.finish(s.scheduler.schedule_one(info)), timeout=5))
    assert len(bound_of(client, "g-")) == 3 and client.preempted == []
    straggler = next(f"uid-g-{i}" for i in range(4) if f"uid-g-{i}" not in client.bound)
    assert [(f[0], f[2], f[3]) for f in client.failures] == [
        (f"default/{straggler.removeprefix('uid-')}", "0/1 nodes are available: 1 Insufficient cpu. "
         "preemption: not eligible due to workload aware preemption enabled", None)]
    assert s.queue.where(straggler) == "backoff"
    assert condition(client, "g")["status"] == "True"
    run_until(s, client, lambda: straggler in client.bound)
    assert client.bound[straggler] == "node-0"
    assert client.preempted_for_group == [("default/low", "default/g")]
    assert condition(client, "g")["status"] == "True"


@pytest.mark.parametrize(("existing", "want"), [
    (None, ("False", "Unschedulable")),        # upstream writes False ...
    ("True", ("True", "Scheduled")),           # ... unless the condition is True already
])
def test_a_cycle_of_stragglers_after_the_quorum_writes_false_unless_the_group_is_scheduled(
        existing: str | None, want: tuple[str, str]) -> None:
    """None of the cycle's members fits, and the quorum is scheduled (here bound by someone else):
    upstream's algorithm leaves the group Unschedulable, its PostFilter runs (and finds nothing to
    preempt: the bound member fills the node), each member fails with its own FitError, and
    ``updatePodGroupCondition`` writes False, reason Unschedulable, unless the condition is True."""
    s, client = gang_service(1)
    group = prio_group("g", 1, 1000)
    if existing is not None:
        group["status"] = {"conditions": [{"type": POD_GROUP_INITIALLY_SCHEDULED, "status": existing,
                                           "reason": "Scheduled", "message": "1 of minCount 1 pods scheduled",
                                           "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    s.on_pod_group("ADDED", group)
    s.on_pod("ADDED", prio_pod("g-0", 1000, group="g", cpu="4", node="node-0"))   # the quorum, bound
    s.on_pod("ADDED", prio_pod("g-1", 1000, group="g", cpu="4"))
    drain(s)
    assert client.preempted == [] and client.bound == {}
    assert [f[0] for f in client.failures] == ["default/g-1"]
    assert client.failures[0][2].startswith("0/1 nodes are available: 1 Insufficient cpu.")
    written = client.pod_group_conditions.get("default/g", {}).get(POD_GROUP_INITIALLY_SCHEDULED)
    if existing is None:
        assert written is not None and (written["status"], written["reason"]) == want
        assert written["message"].startswith("pod group default/g: 1 of 2 pods placed, minCount 1;")
    else:
        assert written is None                  # True is never regressed: nothing to write
    assert s.queue.where("uid-g-1") == "unschedulable"


def test_a_basic_group_member_never_preempts_its_own_group() -> None:
    """podgroup_test.go, "basic group schedules with preemption": a 2-cpu blocker at priority 10 on the
    4-cpu node; a basic group with no priority (0) whose four 1-cpu pods are at priority 100. Two fit;
    the other two preempt pod by pod. Their siblings are victims at the group's priority 0, below the
    blocker's 10, but a member never takes its own group: the blocker goes, and all four bind."""
    s, client = gang_service(1)
    s.on_pod("ADDED", prio_pod("blocker", 10, cpu="2", node="node-0"))
    basic = group_obj("b", 1)
    basic["spec"] = {"schedulingPolicy": {"basic": {}}, "priority": 0}
    s.on_pod_group("ADDED", basic)
    for i in range(4):
        s.on_pod("ADDED", prio_pod(f"b-{i}", 100, group="b"))
    run_until(s, client, lambda: len(bound_of(client, "b-")) == 4)
    assert len(bound_of(client, "b-")) == 4
    assert [v for v, _, _ in client.preempted] == ["default/blocker"]
    assert client.preempted_for_group == []


@pytest.mark.parametrize("seed", range(4))
def test_fuzz_preemption_never_leaves_a_disruption_mode_all_gang_partly_bound(seed: int) -> None:
    """Random ``disruptionMode: all`` gangs and plain pods on a random small cluster, in two waves: first
    at priority 0 (they fill the cluster), then at random higher priorities (100, 1000), each wave run
    by the worker (async preemption included) until it goes quiet. Then every gang has none or all of
    its members running (bound and not preempted), no pod was preempted or bound twice (MemoryClient
    refuses both), no preemptor took a pod of equal or higher priority, and nothing stays assumed.
    Bounded: 6 s a seed."""
    rng = random.Random(1000 + seed)
    s, client = gang_service(rng.randint(2, 3), cpu="4")
    gangs: dict[str, int] = {}
    priority: dict[str, int] = {}

    def wave(tag: str, priorities: tuple[int, ...]) -> None:
        events: list[tuple[str, dict[str, Any]]] = []
        for g in range(rng.randint(2, 3)):
            name, size, prio = f"{tag}g{g}", rng.randint(1, 3), rng.choice(priorities)
            gangs[name] = size
            events.append(("group", prio_group(name, size, prio, "all")))
            for i in range(size):
                events.append(("pod", prio_pod(f"{name}x{i}", prio, group=name, cpu=str(rng.randint(1, 3)))))
                priority[f"default/{name}x{i}"] = prio
        for i in range(rng.randint(0, 4)):
            prio = rng.choice(priorities)
            events.append(("pod", prio_pod(f"{tag}plain{i}", prio, cpu=str(rng.randint(1, 2)))))
            priority[f"default/{tag}plain{i}"] = prio
        rng.shuffle(events)
        for kind, obj in events:
            (s.on_pod_group if kind == "group" else s.on_pod)("ADDED", obj)
        run_until(s, client, lambda: False, seconds=3)

    wave("lo", (0,))
    wave("hi", (100, 1000))
    gone = {v for v, _, _ in client.preempted}
    for name, size in gangs.items():
        running = [uid for uid in client.bound if uid.startswith(f"uid-{name}x")
                   and f"default/{uid.removeprefix('uid-')}" not in gone]
        assert len(running) in (0, size), f"seed {seed}: gang {name} has {len(running)} of {size} running"
    for victim, preemptor, _ in client.preempted:
        assert priority[victim] < priority[preemptor], (victim, preemptor)
    assert s.cache.assumed_count() == 0
# --- what_if: the PodGroup cycle run hypothetically (explain and capacity) -----------------------
def what_if_of(s: SchedulerService, group: str, extra: tuple[Any, ...] = ()) -> podgroup_cycle.GroupWhatIf:
    fwk = s.profiles.for_pod(pod("probe"))
    g = s.pod_groups.get("default", group)
    assert fwk is not None and g is not None
    return podgroup_cycle.what_if(s.scheduler, fwk, g, s.pod_groups, extra)


def cache_state(s: SchedulerService) -> tuple[Any, ...]:
    """What a what-if must leave as it found: the rows' requests and pod counts, the cache's
    entries and assumptions, and where each pod waits in the queue."""
    t = s.cache.table
    return (t.requested.copy().tolist(), t.pod_count.copy().tolist(), s.cache.assumed_count(),
            sorted((i.uid, s.queue.where(i.uid)) for i in s.queue.pending()))


# Each case: members (cpu each) of one gang on nodes of 4 cpu, and what the cycle does with them.
# A what-if of the group is beyond upstream (issue #36 §3: explain for a group), so no upstream
# table applies; the oracle is the real cycle: after the what-if, draining the queue must bind exactly so, or fail
# with exactly the what-if's message (one code path: ``place_members``).
WHAT_IF_CASES = [
    # (case, nodes, minCount, member cpus, bound before (cpu, node) or None, fits)
    ("fits whole", 2, 4, ["2"] * 4, None, True),
    ("does not fit: each node takes one and refuses the next", 2, 3, ["3"] * 3, None, False),
    ("a bound member counts as placed", 3, 3, ["3"] * 2, ("3", "node-0"), True),
    ("quorum met, one member left over", 2, 2, ["3"] * 3, None, True),
]


@pytest.mark.parametrize(("case", "nodes", "min_count", "cpus", "before", "fits"), WHAT_IF_CASES,
                         ids=[c[0] for c in WHAT_IF_CASES])
def test_what_if_answers_as_the_cycle_then_does_and_changes_nothing(
        case: str, nodes: int, min_count: int, cpus: list[str], before: tuple[str, str] | None,
        fits: bool) -> None:
    s, client = gang_service(nodes)
    s.on_pod_group("ADDED", group_obj("g", min_count))
    if before is not None:
        s.on_pod("ADDED", pod_obj("g-bound", group="g", cpu=before[0], node=before[1]))
    for i, cpu in enumerate(cpus):
        s.on_pod("ADDED", pod_obj(f"g-{i}", group="g", cpu=cpu))
    was = cache_state(s)
    answer = what_if_of(s, "g")
    assert cache_state(s) == was, case                   # nothing assumed, moved or popped
    assert client.bound == {} and client.failures == [] and client.pod_group_conditions == {}
    assert answer.fits is fits, (case, answer)
    assert answer.bound == ((("default/g-bound", before[1]),) if before else ())
    assert answer.scheduled == len(answer.bound) + len(answer.placed)
    assert sum(n for _, n in answer.per_node) == len(answer.placed)
    drain(s)
    cond = condition(client, "g")
    assert cond["message"] == answer.message, case       # the cycle writes what the what-if said
    bound = {uid: n for uid, n in client.bound.items() if uid != "uid-g-bound"}
    if fits:
        assert cond["status"] == "True"
        assert sorted(bound.values()) == sorted(n for _, n in answer.placed), case
        assert [p for p, _ in answer.unplaced] == [f"default/g-{i}" for i in range(len(cpus))
                                                   if f"uid-g-{i}" not in client.bound]
        for _, why in answer.unplaced:
            assert why in {f[2] for f in client.failures}, (why, client.failures)
    else:
        assert cond["status"] == "False" and bound == {}
        assert answer.message.startswith("pod group default/g: ") and "accepted" in answer.message


def test_what_if_waits_with_the_quorum_and_a_hypothetical_member_completes_it() -> None:
    """Two of three members exist: GangScheduling's PreEnqueue holds the group, so the answer is
    no, with its message. A third pod that does not exist yet (``extra``: ``explain -f``,
    ``capacity``) completes the quorum, and the three would be placed."""
    s, _ = gang_service(2)
    s.on_pod_group("ADDED", group_obj("q", 3))
    for i in range(2):
        s.on_pod("ADDED", pod_obj(f"q-{i}", group="q", cpu="1"))
    waiting = what_if_of(s, "q")
    assert (waiting.fits, waiting.waiting) == (False, gangscheduling.WAITING_FOR_MIN_COUNT)
    assert len(waiting.placed) == 2
    was = cache_state(s)
    new = s.pod_groups.members("default", "q")[0].__class__
    extra = parse_pod({**pod_obj("q-new", group="q", cpu="1"), "metadata": {
        "name": "q-new", "namespace": "default", "uid": "uid-q-new"}})
    assert isinstance(extra, new)
    full = what_if_of(s, "q", (extra,))
    assert (full.fits, full.waiting, full.scheduled) == (True, "", 3)
    assert [p for p, _ in full.placed][-1] == "default/q-new"          # a new pod comes last
    assert cache_state(s) == was


def test_what_if_leaves_members_parked_at_permit_alone() -> None:
    """A member waiting at Permit (scheduled in a cycle of its own) is a real pod: the what-if's
    Unreserve must not reject it, as GangScheduling's Unreserve would."""
    s, _ = gang_service(2)
    s.on_pod_group("ADDED", group_obj("p", 2))
    s.on_pod("ADDED", pod_obj("p-0", group="p", cpu="1"))
    parked = next(m for m in s.pod_groups.members("default", "p"))
    s.queue.delete(parked.uid)
    s.cache.assume_pod(parked, "node-0")                 # its cycle assumed it, and Permit said Wait
    s.waiting_pods.park(parked.uid)
    s.on_pod("ADDED", pod_obj("p-1", group="p", cpu="1"))
    answer = what_if_of(s, "p")
    assert answer.fits and answer.bound == (("default/p-0", "node-0"),)
    assert [p for p, _ in answer.placed] == ["default/p-1"]
    assert s.waiting_pods._parked == {parked.uid: None}      # no decision was taken for it


class _LateReports(MemoryClient):
    """A client whose failure report for one pod is held until the PodGroup's condition turns True:
    the preempting cycle's I/O is overtaken by the next cycle's binds and True write, the order a
    loaded machine once produced (CI, "gang schedules with preemption")."""

    def __init__(self, held: str) -> None:
        super().__init__()
        self.held, self.released = held, asyncio.Event()
        self.writes: list[str] = []      # the condition's status, in the order written

    async def report_failure(self, pod: Any, reason: str, message: str, nominated_node: str | None) -> None:
        if pod.key == self.held and not self.released.is_set():
            await asyncio.wait_for(self.released.wait(), 5)
        await super().report_failure(pod, reason, message, nominated_node)

    async def set_pod_group_condition(self, group: Any, condition: Any) -> None:
        self.writes.append(str(condition["status"]))
        await super().set_pod_group_condition(group, condition)
        if condition["status"] == "True":
            self.released.set()


def test_a_preempting_cycle_whose_reports_are_overtaken_never_writes_false_over_true() -> None:
    """The preempting cycle computes False (waiting on preemption), evicts its victims and then
    reports its members' failures. Its last member's report is held; meanwhile the members are back
    in the queue, the next cycle places the gang, binds it and writes True. When the held report goes
    through, the first cycle's False is no longer written: True is terminal (upstream writes a
    PodGroup's condition from the cycle it computes it in, so it has no such overtaking)."""
    client = _LateReports("default/train-1")
    s = SchedulerService(client, seed=1, feature_gates=GATES)
    client.cache = s.cache
    s.on_profile("default", {"schedulerName": "default-scheduler"})
    for i in range(2):
        s.on_node("ADDED", node_obj(f"node-{i}"))
        s.on_pod("ADDED", prio_pod(f"low-{i}", 0, cpu="4", node=f"node-{i}"))
    s.on_pod_group("ADDED", prio_group("train", 2, 1000))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"train-{i}", 1000, group="train", cpu="4"))
    run_until(s, client, lambda: client.released.is_set() and len(client.failures) >= 2)
    assert client.released.is_set(), "the next cycle never bound the gang while the report was held"
    assert sorted(bound_of(client, "train").values()) == ["node-0", "node-1"]
    assert client.writes == ["True"]
    assert condition(client, "train")["status"] == "True"
