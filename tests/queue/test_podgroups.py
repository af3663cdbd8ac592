"""The queue's PodGroup bookkeeping (``scheduler.queue.podgroups``): the per-sub-queue member counts
against a brute-force recount, and the queue-entity metrics built on them, through the queue."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from scheduler.framework.types import ClusterEvent, QueuedPodInfo
from scheduler.model import Pod
from scheduler.queue import SchedulingQueue
from scheduler.queue.podgroups import INCOMPLETE, PENDING, POD, POD_GROUP, PodGroups
from tests.builders import Clock, make_scheduler, pod

QUEUES = ("active", "backoff", "unschedulable", "gated")
# (namespace, group) of the fuzzed members; "" is no group. Two namespaces share a group name.
GROUPS = [("default", ""), ("default", "a"), ("default", "b"), ("default", "c"), ("other", "a")]


def member(name: str, namespace: str, group: str, **spec: Any) -> Pod:
    body: dict[str, Any] = dict(spec)
    if group:
        body["schedulingGroup"] = {"podGroupName": group}
    return pod(name, namespace=namespace, spec=body or None)


# --- PodGroups alone: random enter / leave / move against a recount ------------------------------
@pytest.mark.parametrize("seed", range(5))
def test_counts_follow_every_enter_leave_and_move(seed: int) -> None:
    """Members of several groups (and pods in none) enter, leave, move between sub-queues and are
    replaced in place with another group; after every step the counts, ``alone`` and the census
    equal a recount of where each pod is, with groups randomly existing or in a cycle."""
    rng = random.Random(seed)
    g = PodGroups()
    exists: set[tuple[str, str]] = set()
    g.pod_group_exists = lambda ns, name: (ns, name) in exists
    where: dict[str, tuple[str, Pod]] = {}          # the oracle: uid -> (sub-queue, pod)
    pods = [member(f"p{i}", *rng.choice(GROUPS)) for i in range(25)]
    for _ in range(600):
        p = rng.choice(pods)
        op = rng.random()
        if op < 0.45:                               # enter, or move (from wherever it was)
            queue = rng.choice(QUEUES)
            g.enter(queue, p.uid, p)
            where[p.uid] = (queue, p)
        elif op < 0.75:
            g.leave(p.uid)
            where.pop(p.uid, None)
        elif op < 0.85 and p.uid in where:          # replaced in place, maybe naming another group
            ns, name = rng.choice(GROUPS)
            new = replace(p, namespace=ns, scheduling_group=name)
            g.enter(where[p.uid][0], p.uid, new)
            where[p.uid] = (where[p.uid][0], new)
        elif op < 0.95:
            key = rng.choice(GROUPS[1:])
            exists.symmetric_difference_update({key})
        else:
            key = rng.choice(GROUPS[1:])
            (g.end if rng.random() < 0.5 else g.begin)(key)

        recount: dict[str, Counter[tuple[str, str]]] = {q: Counter() for q in QUEUES}
        for queue, member_pod in where.values():
            if member_pod.scheduling_group:
                recount[queue][(member_pod.namespace, member_pod.scheduling_group)] += 1
        assert {q: dict(c) for q, c in recount.items() if c} == {q: c for q, c in g._waiting.items() if c}
        for queue in QUEUES:
            for ns, name in GROUPS[1:]:
                others = [u for u, (wq, wp) in where.items() if u != p.uid and wq == queue
                          and (wp.namespace, wp.scheduling_group) == (ns, name)]
                assert g.alone(queue, p.uid, (ns, name)) == (not others)
            size = sum(1 for wq, _ in where.values() if wq == queue)
            kinds = [g.entity(wp) for wq, wp in where.values() if wq == queue]
            keys = {(wp.namespace, wp.scheduling_group) for wq, wp in where.values()
                    if wq == queue and g.entity(wp) == POD_GROUP}
            assert g.census(queue, size) == (kinds.count(POD) + kinds.count(POD_GROUP), kinds.count(POD), len(keys))
        for kind in (INCOMPLETE, PENDING):
            assert g.outside(kind, QUEUES) == sum(1 for _, wp in where.values() if g.entity(wp) == kind)


# --- through the queue: the metrics against a brute-force recount after every step --------------
class Oracle:
    """Recounts the entity metrics from the queue's public view (``pending``, ``where``): the
    gauges from scratch, the incoming-entity counter by asking, at each entry the queue reports,
    whether another member of the pod's group waits in that sub-queue (the definition)."""

    def __init__(self, q: SchedulingQueue, exists: set[tuple[str, str]], in_cycle: set[tuple[str, str]]) -> None:
        self.q, self.exists, self.in_cycle = q, exists, in_cycle
        self.incoming: Counter[tuple[str, str, str]] = Counter()

    def kind(self, p: Pod) -> str:
        key = (p.namespace, p.scheduling_group)
        if self.q.pod_group_exists is None or not p.scheduling_group:
            return POD
        if key in self.in_cycle:
            return PENDING
        return POD_GROUP if key in self.exists else INCOMPLETE

    def entered(self, queue: str, event: str, info: QueuedPodInfo) -> None:
        kind = self.kind(info.pod)
        if kind == POD:
            self.incoming[(queue, event, POD)] += 1
        elif kind == POD_GROUP:
            key = (info.pod.namespace, info.pod.scheduling_group)
            if not any(i.uid != info.uid and (i.pod.namespace, i.pod.scheduling_group) == key
                       and self.q.where(i.uid) == queue for i in self.q.pending()):
                self.incoming[(queue, event, POD_GROUP)] += 1

    def gauges(self) -> dict[tuple[str, ...], float]:
        out: dict[tuple[str, ...], float] = {}
        waiting = [(self.q.where(i.uid), i.pod) for i in self.q.pending()]
        for queue in QUEUES:
            kinds = [self.kind(p) for w, p in waiting if w == queue]
            out[("pending", queue)] = kinds.count(POD) + kinds.count(POD_GROUP)
            out[("entities", queue, POD)] = kinds.count(POD)
            out[("entities", queue, POD_GROUP)] = len({(p.namespace, p.scheduling_group) for w, p in waiting
                                                       if w == queue and self.kind(p) == POD_GROUP})
        for kind in (INCOMPLETE, PENDING):
            out[("pending", kind)] = sum(1 for w, p in waiting if w in QUEUES and self.kind(p) == kind)
        return out


def _metrics(q: SchedulingQueue, registry: Any) -> tuple[dict[tuple[str, ...], float], Counter[tuple[str, str, str]]]:
    gauges: dict[tuple[str, ...], float] = {}
    for queue in (*QUEUES, INCOMPLETE, PENDING):
        gauges[("pending", queue)] = registry.get_sample_value("scheduler_pending_pods", {"queue": queue})
    for queue in QUEUES:
        for kind in (POD, POD_GROUP):
            gauges[("entities", queue, kind)] = registry.get_sample_value(
                "scheduler_queued_entities", {"queue": queue, "type": kind})
    incoming: Counter[tuple[str, str, str]] = Counter()
    for metric in registry.collect():
        if metric.name == "scheduler_queue_incoming_entities":
            for s in metric.samples:
                if s.name.endswith("_total") and s.value:
                    incoming[(s.labels["queue"], s.labels["event"], s.labels["type"])] = int(s.value)
    return gauges, incoming


@pytest.mark.parametrize("seed", range(6))
def test_entity_metrics_match_a_recount_after_every_operation(seed: int) -> None:
    """Random adds (gated or not, in one of several groups), updates, deletes, failed attempts,
    cluster events, flushes, activations, PodGroup pops, groups created and deleted, and PodGroup
    cycles: after every step ``scheduler_queued_entities``, ``scheduler_pending_pods`` and
    ``scheduler_queue_incoming_entities_total`` equal the recount."""
    rng = random.Random(seed)
    clock = Clock()
    s, _ = make_scheduler(clock=clock)
    q, m = s.queue, s.metrics
    assert m is not None
    exists: set[tuple[str, str]] = set()
    in_cycle: set[tuple[str, str]] = set()
    q.pod_group_exists = lambda ns, name: (ns, name) in exists
    oracle = Oracle(q, exists, in_cycle)
    real = q._incoming

    def observed(queue: str, event: str, info: QueuedPodInfo, *, entity: bool = True) -> None:
        if entity:
            oracle.entered(queue, event, info)
        real(queue, event, info, entity=entity)
    q._incoming = observed  # type: ignore[method-assign]
    pods: dict[str, Pod] = {}
    for _ in range(400):
        op = rng.choice(("add", "add", "add", "update", "delete", "fail", "fail", "error", "done", "event",
                         "flush", "activate", "group", "exists", "cycle"))
        name = f"p{rng.randrange(24)}"
        if op == "add":
            gates = {"schedulingGates": [{"name": "g"}]} if rng.random() < 0.3 else {}
            pods[name] = member(name, *rng.choice(GROUPS), **gates)
            q.add(pods[name])
        elif op == "update" and name in pods:
            p = pods[name]
            change = rng.random()
            if change < 0.4:
                p = replace(p, scheduling_gates=())
            elif change < 0.8:
                p = replace(p, labels={"v": str(rng.randrange(9))})
            else:                                   # another group, in place (the queue allows it)
                ns, group = rng.choice(GROUPS)
                p = replace(p, namespace=ns, scheduling_group=group)
            pods[name] = p
            q.update(p)
        elif op == "delete" and name in pods:
            q.delete(pods.pop(name))
        elif op in ("fail", "error", "done"):
            info = q.pop(0)
            if info is not None and op == "fail":
                info.unschedulable_plugins = {rng.choice(("NodeResourcesFit", "TaintToleration"))}
                q.add_unschedulable_if_not_present(info)
            elif info is not None and op == "error":
                q.requeue_after_error(info)
            elif info is not None:
                q.done(info.uid)
        elif op == "event":
            q.move_all_to_active_or_backoff(ClusterEvent(rng.choice(("Node", "Pod")), frozenset({"Add"})))
        elif op == "flush":
            clock.advance(rng.choice((0.5, 2, 400)))
            q.flush()
        elif op == "activate" and name in pods:
            q.activate([pods[name].uid])
        elif op == "group":
            ns, group = rng.choice(GROUPS[1:])
            for info in q.pop_group(ns, group):
                q.add_unschedulable_if_not_present(info) if rng.random() < 0.5 else q.done(info.uid)
        elif op == "exists":
            exists.symmetric_difference_update({rng.choice(GROUPS[1:])})
        elif op == "cycle":
            ns, group = rng.choice(GROUPS[1:])
            if (ns, group) in in_cycle:
                in_cycle.discard((ns, group))
                q.end_group(ns, group)
            else:
                in_cycle.add((ns, group))
                q.begin_group(ns, group)
        gauges, incoming = _metrics(q, m.registry)
        assert gauges == oracle.gauges(), op
        assert incoming == +oracle.incoming, op


# --- the entity metrics, as upstream's tables -------------------------------------------------
def test_queued_entities_count_a_pod_group_once() -> None:
    """1.37's scheduler_queued_entities{queue,type}: with GenericWorkload (``pod_group_exists`` set),
    the members of one group waiting in a queue are one 'podgroup' entity, their pods still counted
    one by one in pending_pods (metric_recorder_test.go, TestQueuedEntitiesRecorder); members of a
    group that does not exist yet are 'incomplete'. The profile here has no GangScheduling, so the
    members are in activeQ."""
    s, _ = make_scheduler()
    q, m = s.queue, s.metrics
    assert m is not None

    def value(name: str, **labels: str) -> float | None:
        return m.registry.get_sample_value(name, labels)

    q.pod_group_exists = lambda ns, name: name == "g"
    for name, group in (("a", "g"), ("b", "g"), ("c", ""), ("d", "missing")):
        q.add(pod(name, spec={"schedulingGroup": {"podGroupName": group}} if group else None))
    assert value("scheduler_pending_pods", queue="active") == 3
    assert value("scheduler_pending_pods", queue="incomplete") == 1
    assert value("scheduler_queued_entities", queue="active", type="podgroup") == 1
    assert value("scheduler_queued_entities", queue="active", type="pod") == 1
    assert value("scheduler_queue_incoming_entities_total", queue="active", event="PodAdd", type="podgroup") == 1
    assert value("scheduler_queue_incoming_entities_total", queue="active", event="PodAdd", type="pod") == 1
    # the gate off: every pod its own entity
    q.pod_group_exists = None
    assert value("scheduler_queued_entities", queue="active", type="pod") == 4
    assert value("scheduler_queued_entities", queue="active", type="podgroup") == 0
    assert value("scheduler_pending_pods", queue="active") == 4
    assert value("scheduler_pending_pods", queue="incomplete") == 0


# pkg/scheduler/metrics/metric_recorder_test.go, TestQueuedEntitiesRecorder, replayed on the queue: its
# entities are pods and groups in activeQ (pInfo1 and pInfo3 pods, pInfo2 a 5-pod group growing to 8).
# (step, pods added, pods deleted, pending_pods{active}, entities{active,pod}, entities{active,podgroup})
RECORDER_STEPS = [
    ("Add entity", ["p1", *[f"g{i}" for i in range(5)], "p3"], [], 7, 2, 1),
    ("Remove entity", [], ["p1"], 6, 1, 1),
    ("Update entity", ["g5", "g6", "g7"], [], 9, 1, 1),
    ("Clear", [], ["p3", *[f"g{i}" for i in range(8)]], 0, 0, 0),
]


def test_queued_entities_follow_upstreams_recorder_table() -> None:
    s, _ = make_scheduler()
    q, m = s.queue, s.metrics
    assert m is not None
    q.pod_group_exists = lambda ns, name: True
    made = {n: pod(n, spec={"schedulingGroup": {"podGroupName": "pg2"}} if n.startswith("g") else None)
            for n in ["p1", "p3", *[f"g{i}" for i in range(8)]]}
    for step, add, delete, pods, plain, groups in RECORDER_STEPS:
        for n in add:
            q.add(made[n])
        for n in delete:
            q.delete(made[n])
        got = (m.registry.get_sample_value("scheduler_pending_pods", {"queue": "active"}),
               m.registry.get_sample_value("scheduler_queued_entities", {"queue": "active", "type": "pod"}),
               m.registry.get_sample_value("scheduler_queued_entities", {"queue": "active", "type": "podgroup"}))
        assert got == (pods, plain, groups), step
