"""The queue's PodGroup bookkeeping (``scheduler.queue.podgroups``): the queue-entity metrics, through
the queue."""

from __future__ import annotations

from tests.builders import make_scheduler, pod


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
