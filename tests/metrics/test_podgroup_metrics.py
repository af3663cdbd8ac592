"""The PodGroup metrics' values after PodGroup cycles, as upstream's ``submitPodGroupAlgorithmResult``
records them (``schedule_one_podgroup.go``): one attempt per cycle, by result and profile, with its
duration, and one algorithm duration per cycle; nothing for a pod scheduled alone."""

from __future__ import annotations

from prometheus_client import CollectorRegistry

from scheduler.service import SchedulerService
from tests.test_podgroup_cycle import drain, gang_service, group_obj, pod_obj


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
