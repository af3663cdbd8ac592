"""The exported metrics against upstream's list: name, type, label names and buckets, so that a
kube-scheduler dashboard and its alerts carry over (issue #15 §4).

The oracle is kubernetes/kubernetes ``pkg/scheduler/metrics/metrics.go`` (``metricsList``, plus
``scheduler_inflight_events`` of the queueing-hint queue since 1.30), client-go's
``rest_client_*`` (``k8s.io/component-base/metrics/prometheus/restclient``) and client-go's
``leader_election_master_status``. Left out on purpose: ``scheduler_pod_scheduling_duration_seconds``
(deprecated in 1.29, removed in 1.31) and ``scheduler_queueing_hint_execution_duration_seconds``
(kopf-scheduler's hints are plain predicates, run inline; nothing to time separately)."""

from __future__ import annotations

from typing import Any

import pytest
from prometheus_client import generate_latest

from scheduler.metrics import REST_CLIENT_BUCKETS, Metrics, exponential_buckets

# (exposed name, type, label names, buckets or None)
UPSTREAM = [
    ("scheduler_schedule_attempts_total", "counter", ("result", "profile"), None),
    ("scheduler_event_handling_duration_seconds", "histogram", ("event",), exponential_buckets(0.0001, 2, 12)),
    ("scheduler_scheduling_attempt_duration_seconds", "histogram", ("result", "profile"),
     exponential_buckets(0.001, 2, 15)),
    ("scheduler_scheduling_algorithm_duration_seconds", "histogram", (), exponential_buckets(0.001, 2, 15)),
    ("scheduler_preemption_victims", "histogram", (), exponential_buckets(1, 2, 7)),
    ("scheduler_preemption_attempts_total", "counter", (), None),
    ("scheduler_pending_pods", "gauge", ("queue",), None),
    # 1.37: registered whatever the gates (metricsList), every entity a 'pod' without GenericWorkload.
    ("scheduler_queued_entities", "gauge", ("queue", "type"), None),
    ("scheduler_queue_incoming_entities_total", "counter", ("queue", "event", "type"), None),
    ("scheduler_pod_scheduling_sli_duration_seconds", "histogram", ("attempts",), exponential_buckets(0.01, 2, 20)),
    ("scheduler_pod_scheduling_attempts", "histogram", (), exponential_buckets(1, 2, 5)),
    ("scheduler_framework_extension_point_duration_seconds", "histogram", ("extension_point", "status", "profile"),
     exponential_buckets(0.0001, 2, 12)),
    ("scheduler_plugin_execution_duration_seconds", "histogram", ("plugin", "extension_point", "status"),
     exponential_buckets(0.00001, 1.5, 20)),
    ("scheduler_queue_incoming_pods_total", "counter", ("queue", "event"), None),
    ("scheduler_goroutines", "gauge", ("operation",), None),
    ("scheduler_permit_wait_duration_seconds", "histogram", ("result",), exponential_buckets(0.001, 2, 15)),
    ("scheduler_scheduler_cache_size", "gauge", ("type",), None),
    ("scheduler_unschedulable_pods", "gauge", ("plugin", "profile"), None),
    ("scheduler_plugin_evaluation_total", "counter", ("plugin", "extension_point", "profile"), None),
    # Opportunistic batching (KEP-5598): BatchAttemptStats and BatchCacheFlushed.
    ("scheduler_batch_attempts_total", "counter", ("profile", "result"), None),
    ("scheduler_batch_cache_flushed_total", "counter", ("profile", "reason"), None),
    ("scheduler_get_node_hint_duration_seconds", "histogram", ("hinted", "profile"),
     exponential_buckets(0.00001, 2, 12)),
    ("scheduler_store_schedule_results_duration_seconds", "histogram", ("profile",),
     exponential_buckets(0.00001, 2, 12)),
    ("scheduler_inflight_events", "gauge", ("event",), None),
    ("rest_client_requests_total", "counter", ("code", "host", "method"), None),
    ("rest_client_request_duration_seconds", "histogram", ("host", "verb"), REST_CLIENT_BUCKETS),
    ("leader_election_master_status", "gauge", ("name",), None),
]

# Registered only with the GenericWorkload gate (metrics.go's Register), at 1.37's label sets: the
# 1.37 metrics.go (the one that deprecates preemption_goroutines_duration_seconds in 1.37.0) has
# {result, profile} and no labels on the algorithm's histogram; 1.38 development adds ``type``.
GENERIC_WORKLOAD = [
    ("scheduler_podgroup_schedule_attempts_total", "counter", ("result", "profile"), None),
    ("scheduler_podgroup_scheduling_attempt_duration_seconds", "histogram", ("result", "profile"),
     exponential_buckets(0.001, 2, 15)),
    ("scheduler_podgroup_scheduling_algorithm_duration_seconds", "histogram", (), exponential_buckets(0.001, 2, 15)),
    # workload-aware preemption: WorkloadPreemptionAttempts ... PreemptionPDBViolations
    ("scheduler_workload_preemption_attempts_total", "counter", ("result",), None),
    ("scheduler_workload_preemption_victims", "histogram", (), exponential_buckets(1, 2, 11)),
    ("scheduler_preemption_workload_disruptions", "histogram", ("preemptor",), exponential_buckets(1, 2, 11)),
    ("scheduler_preemption_evaluation_duration_seconds", "histogram", ("preemptor", "result"),
     exponential_buckets(0.001, 2, 16)),
    ("scheduler_preemption_execution_duration_seconds", "histogram", ("preemptor", "result"),
     exponential_buckets(0.001, 2, 16)),
    ("scheduler_preemption_pdb_violations_total", "counter", ("preemptor",), None),
]

# Ours, on top of upstream's (kopf_scheduler_*): never under an upstream name.
OURS = {"kopf_scheduler_leader_transitions_total", "kopf_scheduler_unreadable_objects",
        "kopf_scheduler_component_restarts_total", "kopf_scheduler_profile_reloads_total",
        # Not upstream's, but issue #20 §3 names it so: shadow profiles' outcomes.
        "scheduler_shadow_decisions_total"}


def collectors(m: Metrics) -> dict[str, Any]:
    """Exposed name → collector (prometheus_client keeps a counter's name without ``_total``)."""
    out = {}
    for c in vars(m).values():
        if hasattr(c, "_labelnames"):
            out[c._name + ("_total" if c._type == "counter" else "")] = c
    return out


@pytest.mark.parametrize("name,kind,labels,buckets", UPSTREAM, ids=[u[0] for u in UPSTREAM])
def test_upstream_metric(name: str, kind: str, labels: tuple[str, ...], buckets: list[float] | None) -> None:
    c = collectors(Metrics()).get(name)
    assert c is not None, f"{name} is not exported"
    assert c._type == kind
    assert tuple(c._labelnames) == labels
    if buckets is not None:
        assert list(c._upper_bounds[:-1]) == pytest.approx(buckets)


def test_nothing_else_under_an_upstream_prefix() -> None:
    names = set(collectors(Metrics()))
    assert names - {u[0] for u in UPSTREAM} == OURS


def test_exposition_has_no_created_series_and_has_process_metrics() -> None:
    m = Metrics(process=True)
    m.schedule_attempts.labels("scheduled", "p").inc()
    m.preemption_victims.observe(1)
    text = generate_latest(m.registry).decode()
    assert "scheduler_schedule_attempts_total{" in text
    assert "_created" not in text
    for family in ("process_resident_memory_bytes", "process_cpu_seconds_total", "process_open_fds",
                   "python_info", "python_gc_objects_collected_total"):
        assert f"\n{family}" in text or text.startswith(family), family
    assert "process_" not in generate_latest(Metrics().registry).decode()   # only the operator's registry


def gated_metrics() -> Metrics:
    m = Metrics()
    m.register_generic_workload()
    m.register_generic_workload()           # a second call adds nothing (no duplicate registration)
    return m


@pytest.mark.parametrize("name,kind,labels,buckets", GENERIC_WORKLOAD, ids=[u[0] for u in GENERIC_WORKLOAD])
def test_generic_workload_metric(name: str, kind: str, labels: tuple[str, ...], buckets: list[float] | None) -> None:
    assert name not in collectors(Metrics())            # not without the gate, as upstream
    c = collectors(gated_metrics()).get(name)
    assert c is not None, f"{name} is not exported with the gate"
    assert c._type == kind
    assert tuple(c._labelnames) == labels
    if buckets is not None:
        assert list(c._upper_bounds[:-1]) == pytest.approx(buckets)


def test_the_gate_adds_only_the_podgroup_metrics() -> None:
    names = set(collectors(gated_metrics()))
    assert names - {u[0] for u in UPSTREAM} - OURS == {g[0] for g in GENERIC_WORKLOAD}


# (metric, the start of its help text) where 1.37 changed or added it.
HELP = [
    ("scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; "
     "'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulableEntities"),
    ("scheduler_queued_entities", "Number of queued scheduling entities ('pod' or 'podgroup';"),
    ("scheduler_queue_incoming_entities", "Number of scheduling entities added to scheduling queues by event, queue "
     "type, and entity type."),
    ("scheduler_workload_preemption_attempts", "Total preemption attempts initiated by workload (including pod "
     "groups) in the cluster till now."),
    # 1.37 says whose: a PodGroup's victims go to scheduler_workload_preemption_victims.
    ("scheduler_preemption_victims", "Number of selected preemption victims for preemption initiated by a single pod"),
]


@pytest.mark.parametrize("name,help_start", HELP, ids=[h[0] for h in HELP])
def test_help_is_upstreams(name: str, help_start: str) -> None:
    c = {c._name: c for c in vars(gated_metrics()).values() if hasattr(c, "_labelnames")}[name]
    assert c._documentation.startswith(help_start)


def test_the_service_registers_them_with_the_gate_only() -> None:
    from scheduler.service import SchedulerService
    from tests.builders import MemoryClient
    on = SchedulerService(MemoryClient(), feature_gates={"GenericWorkload": True})
    off = SchedulerService(MemoryClient())
    text_on = generate_latest(on.metrics.registry).decode()
    assert "# TYPE scheduler_podgroup_scheduling_algorithm_duration_seconds histogram" in text_on
    assert "scheduler_podgroup" not in generate_latest(off.metrics.registry).decode()
