"""The PodGroup metrics' values after PodGroup cycles, as upstream's ``submitPodGroupAlgorithmResult``
records them (``schedule_one_podgroup.go``): one attempt per cycle, by result and profile, with its
duration, and one algorithm duration per cycle; nothing for a pod scheduled alone."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, generate_latest

from scheduler.service import SchedulerService
from tests.test_podgroup_cycle import (
    bound_of,
    drain,
    gang_service,
    group_obj,
    node_obj,
    pod_obj,
    prio_group,
    prio_pod,
    run_until,
)


def sample(registry: CollectorRegistry, name: str, **labels: str) -> float:
    value = registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


def attempts(s: SchedulerService, result: str) -> float:
    return sample(s.metrics.registry, "scheduler_podgroup_schedule_attempts_total", result=result, profile="default-scheduler")


def attempt_count(s: SchedulerService, result: str) -> float:
    return sample(s.metrics.registry, "scheduler_podgroup_scheduling_attempt_duration_seconds_count",
                  result=result, profile="default-scheduler")


def algorithm_count(s: SchedulerService) -> float:
    return sample(s.metrics.registry, "scheduler_podgroup_scheduling_algorithm_duration_seconds_count")


def test_a_gang_that_fits_counts_one_scheduled_attempt() -> None:
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("fits", 3))
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"fits-{i}", group="fits"))
    drain(s)
    assert len(client.bound) == 3
    assert attempts(s, "scheduled") == 1
    assert attempt_count(s, "scheduled") == 1
    assert attempts(s, "unschedulable") == attempts(s, "error") == 0
    assert algorithm_count(s) == 1
    # the attempt's duration is observed once the outcome is submitted, after the algorithm's
    total = sample(s.metrics.registry, "scheduler_podgroup_scheduling_attempt_duration_seconds_sum",
                   result="scheduled", profile="default-scheduler")
    assert total >= sample(s.metrics.registry, "scheduler_podgroup_scheduling_algorithm_duration_seconds_sum") > 0


def test_a_gang_that_does_not_fit_counts_an_unschedulable_attempt() -> None:
    """Three members of 3 CPU each on two 4-CPU nodes: two fit, the quorum of three does not."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("big", 3))
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"big-{i}", group="big", cpu="3"))
    drain(s)
    assert client.bound == {}
    assert attempts(s, "unschedulable") == 1
    assert attempt_count(s, "unschedulable") == 1
    assert attempts(s, "scheduled") == 0
    assert algorithm_count(s) == 1
    # a second gang that fits beside it: its own attempt, scheduled; the first holds nothing
    s.on_pod_group("ADDED", group_obj("small", 2))
    for i in range(2):
        s.on_pod("ADDED", pod_obj(f"small-{i}", group="small"))
    drain(s)
    assert set(client.bound) == {"uid-small-0", "uid-small-1"}
    assert (attempts(s, "unschedulable"), attempts(s, "scheduled")) == (1, 1)
    assert algorithm_count(s) == 2


def test_pods_outside_a_gang_record_no_podgroup_attempt() -> None:
    s, client = gang_service(1)
    s.on_pod_group("ADDED", {**group_obj("basic", 1), "spec": {"schedulingPolicy": {"basic": {}}}})
    s.on_pod("ADDED", pod_obj("alone"))
    s.on_pod("ADDED", pod_obj("member", group="basic"))
    drain(s)
    assert set(client.bound) == {"uid-alone", "uid-member"}
    assert algorithm_count(s) == 0
    assert sum(attempts(s, r) for r in ("scheduled", "unschedulable", "error")) == 0


# --- the queue's entities (1.37 metrics.go: QueuedEntities, SchedulerQueueIncomingEntities, and the
# 'incomplete' and 'pending' values of pending_pods; metric_recorder_test.go's TestQueuedEntitiesRecorder
# counts a pod group once as an entity and its pods in pending_pods) ------------------------------------
QUEUES = ("active", "backoff", "unschedulable", "gated")


def pending(s: SchedulerService) -> dict[str, float]:
    return {q: sample(s.metrics.registry, "scheduler_pending_pods", queue=q)
            for q in (*QUEUES, "incomplete", "pending")}


def entities(s: SchedulerService) -> dict[tuple[str, str], float]:
    return {(q, t): v for q in QUEUES for t in ("pod", "podgroup")
            if (v := sample(s.metrics.registry, "scheduler_queued_entities", queue=q, type=t))}


def incoming(s: SchedulerService, queue: str, event: str, kind: str) -> float:
    return sample(s.metrics.registry, "scheduler_queue_incoming_entities_total", queue=queue, event=event, type=kind)


def test_a_gang_waiting_for_its_quorum_is_one_gated_entity() -> None:
    """Two of three members exist: two pods gated, one podgroup entity; a member of a PodGroup not yet
    observed is 'incomplete', not gated; a plain gated pod is a 'pod' entity. The third member lets
    the gang in: it binds, and every gauge is back to 0."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", group_obj("train", 3))
    for i in range(2):
        s.on_pod("ADDED", pod_obj(f"train-{i}", group="train"))
    s.on_pod("ADDED", pod_obj("orphan", group="later"))
    gated = pod_obj("plain")
    gated["spec"]["schedulingGates"] = [{"name": "x"}]
    s.on_pod("ADDED", gated)
    drain(s)
    assert client.bound == {}
    assert pending(s) == {"active": 0, "backoff": 0, "unschedulable": 0, "gated": 3, "incomplete": 1, "pending": 0}
    assert entities(s) == {("gated", "podgroup"): 1, ("gated", "pod"): 1}
    # the gang entered gated once, though both its pods did (the orphan's is no entity yet)
    assert incoming(s, "gated", "PodAdd", "podgroup") == 1
    assert sum(_incoming_all(s, "gated", "podgroup").values()) == 1
    assert incoming(s, "gated", "PodAdd", "pod") == 1
    assert sum(v for (q, _), v in _incoming_pods(s).items() if q == "gated") >= 4
    s.on_pod("ADDED", pod_obj("train-2", group="train"))
    drain(s)
    assert len(client.bound) == 3
    assert attempts(s, "scheduled") == 1
    assert entities(s) == {("gated", "pod"): 1}
    assert pending(s)["gated"] == 1 and pending(s)["incomplete"] == 1
    # into activeQ: one podgroup entity, though its three pods went there
    assert sum(_incoming_all(s, "active", "podgroup").values()) == 1
    assert sum(v for (q, e), v in _incoming_pods(s).items() if q == "active") >= 3


def _incoming_all(s: SchedulerService, queue: str, kind: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for metric in s.metrics.registry.collect():
        if metric.name != "scheduler_queue_incoming_entities":
            continue
        for smp in metric.samples:
            if smp.name.endswith("_total") and smp.labels["queue"] == queue and smp.labels["type"] == kind:
                out[smp.labels["event"]] = smp.value
    return out


def _incoming_pods(s: SchedulerService) -> dict[tuple[str, str], float]:
    return {(smp.labels["queue"], smp.labels["event"]): smp.value for metric in s.metrics.registry.collect()
            if metric.name == "scheduler_queue_incoming_pods" for smp in metric.samples if smp.name.endswith("_total")}


def test_without_the_gate_every_pod_is_its_own_entity() -> None:
    s, _ = gang_service(1, gates={})
    for i in range(2):
        s.on_pod("ADDED", pod_obj(f"m-{i}", group="g"))
    assert entities(s) == {("active", "pod"): 2}
    assert pending(s)["active"] == 2 and pending(s)["incomplete"] == pending(s)["pending"] == 0
    assert incoming(s, "active", "PodAdd", "pod") == 2
    assert "scheduler_workload_preemption" not in generate_latest(s.metrics.registry).decode()


def test_members_arriving_during_their_groups_cycle_are_pending() -> None:
    """Upstream's pendingPodGroupPods: a member that comes while its PodGroup is being scheduled
    waits for that attempt, outside every queue's entities."""
    s, _ = gang_service(1)
    s.on_pod_group("ADDED", group_obj("g", 1))
    s.queue.begin_group("default", "g")
    s.on_pod("ADDED", pod_obj("late", group="g"))
    assert pending(s)["pending"] == 1 and pending(s)["active"] == 0
    assert entities(s) == {}
    assert sum(_incoming_all(s, "active", "podgroup").values()) == 0
    s.queue.end_group("default", "g")
    assert pending(s)["pending"] == 0 and pending(s)["active"] == 1
    assert entities(s) == {("active", "podgroup"): 1}


# --- a gang that preempts (workload-aware preemption; metrics.go's WorkloadPreemption* and Preemption*
# metrics, recorded where PodGroupPostFilter, PodGroupEvaluator.evaluate and the executor record them;
# executor_test.go's verifyPreemptionMetricsDelta: a podgroup's victims are not preemption_victims) -----
def count(s: SchedulerService, name: str, **labels: str) -> float:
    return sample(s.metrics.registry, f"{name}_count", **labels)


def test_a_gang_that_preempts_waits_on_preemption_then_schedules() -> None:
    """Gang "old" (priority 0, disruptionMode All) runs a 4-cpu member on each node; gang "train" (two
    4-cpu members, priority 1000) preempts it as one unit: two victim pods, one PodGroup disrupted."""
    s, client = gang_service(2)
    s.on_pod_group("ADDED", prio_group("old", 2, 0, "all"))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"old-{i}", 0, group="old", cpu="4", node=f"node-{i}"))
    s.on_pod_group("ADDED", prio_group("train", 2, 1000))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"train-{i}", 1000, group="train", cpu="4"))
    run_until(s, client, lambda: len(bound_of(client, "train")) == 2)
    assert sorted(v for v, _, _ in client.preempted) == ["default/old-0", "default/old-1"]
    waiting = attempts(s, "waiting_on_preemption")
    assert waiting >= 1 and attempts(s, "scheduled") == 1 and attempts(s, "unschedulable") == 0
    assert attempt_count(s, "waiting_on_preemption") == waiting
    # PodGroupPostFilter: one attempt per rejected cycle, by its status code. Each member's own
    # PostFilter ran in those cycles too (upstream's runAllPostFilters): DefaultPreemption refuses a
    # gang member, and counts the attempt as upstream's deferred PreemptionAttempts.Inc() does.
    assert sample(s.metrics.registry, "scheduler_workload_preemption_attempts_total", result="Success") == waiting
    assert sample(s.metrics.registry, "scheduler_preemption_attempts_total") == 2 * waiting
    # the evaluation (once: a later cycle finds the preemption ongoing) and the execution, as "podgroup"
    assert count(s, "scheduler_preemption_evaluation_duration_seconds", preemptor="podgroup", result="Success") == 1
    assert count(s, "scheduler_preemption_execution_duration_seconds", preemptor="podgroup", result="success") == 1
    # the victims: two pods in workload_preemption_victims, none in preemption_victims; one unit
    assert count(s, "scheduler_workload_preemption_victims") == 1
    assert sample(s.metrics.registry, "scheduler_workload_preemption_victims_sum") == 2
    assert count(s, "scheduler_preemption_victims") == 0
    assert count(s, "scheduler_preemption_workload_disruptions", preemptor="podgroup") == 1
    assert sample(s.metrics.registry, "scheduler_preemption_workload_disruptions_sum", preemptor="podgroup") == 1
    assert s.metrics.registry.get_sample_value("scheduler_preemption_pdb_violations_total",
                                               {"preemptor": "podgroup"}) == 0


def test_a_gang_with_nothing_to_preempt_counts_an_unschedulable_preemption_attempt() -> None:
    s, client = gang_service(2)
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"hi-{i}", 2000, cpu="4", node=f"node-{i}"))
    s.on_pod_group("ADDED", prio_group("train", 2, 1000))
    for i in range(2):
        s.on_pod("ADDED", prio_pod(f"train-{i}", 1000, group="train", cpu="4"))
    drain(s)
    assert client.bound == {} and client.preempted == []
    assert attempts(s, "unschedulable") == 1 and attempts(s, "waiting_on_preemption") == 0
    assert sample(s.metrics.registry, "scheduler_workload_preemption_attempts_total", result="Unschedulable") == 1
    assert count(s, "scheduler_preemption_evaluation_duration_seconds", preemptor="podgroup", result="Success") == 0
    assert count(s, "scheduler_workload_preemption_victims") == 0


def test_a_pod_preempting_a_disruption_mode_all_gang_counts_one_disruption() -> None:
    """A plain pod's preemption (preemptor "pod"), with the gate: its victims in preemption_victims,
    the gang it disrupts as one unit, and its execution."""
    s, client = gang_service(0)
    s.on_node("ADDED", node_obj("node-0", "4"))
    s.on_node("ADDED", node_obj("node-1", "2"))
    s.on_pod_group("ADDED", prio_group("old", 2, 0, "all"))
    s.on_pod("ADDED", prio_pod("old-0", 0, group="old", cpu="2", node="node-0"))
    s.on_pod("ADDED", prio_pod("old-1", 0, group="old", cpu="2", node="node-1"))
    s.on_pod("ADDED", prio_pod("hi", 1000, cpu="4"))
    run_until(s, client, lambda: "uid-hi" in client.bound)
    assert sample(s.metrics.registry, "scheduler_preemption_attempts_total") >= 1
    assert count(s, "scheduler_preemption_victims") == 1
    assert sample(s.metrics.registry, "scheduler_preemption_victims_sum") == 2
    assert count(s, "scheduler_workload_preemption_victims") == 0
    assert count(s, "scheduler_preemption_workload_disruptions", preemptor="pod") == 1
    assert sample(s.metrics.registry, "scheduler_preemption_workload_disruptions_sum", preemptor="pod") == 1
    assert count(s, "scheduler_preemption_execution_duration_seconds", preemptor="pod", result="success") == 1
