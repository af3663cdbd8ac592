"""Prometheus metrics under upstream kube-scheduler's names, labels and buckets.

Every collector lives in a ``Metrics`` object with its own registry, so tests and several
schedulers in one process don't collide; the operator serves ``metrics.registry`` on ``/metrics``.
Names, label sets and buckets follow ``pkg/scheduler/metrics/metrics.go`` so dashboards and alerts
written for kube-scheduler work unchanged. ``kopf_scheduler_profile_reloads_total`` is our own.

The PodGroup and workload-preemption metrics exist only with the ``GenericWorkload`` gate, as
upstream registers them only then (``Register``): ``register_generic_workload`` adds them to the
registry, and until it is called their attributes are None. The PodGroup cycle records the first
(``scheduler/podgroup_cycle.py``), DefaultPreemption the executor's (``observe_preemption``). 1.37's
entity metrics (``scheduler_queued_entities``, ``scheduler_queue_incoming_entities_total``) are
always registered; the queue counts them (``scheduler/queue/podgroups.py``).
"""

from __future__ import annotations

from typing import Any

from prometheus_client import (
    CollectorRegistry,
    Gauge,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
    disable_created_metrics,
)

from scheduler.lean_metrics import LeanCounter, LeanHistogram

# Upstream's (Go client's) exposition has no ``*_created`` series; a Prometheus that ingests them
# gets a second series per counter and histogram that no kube-scheduler dashboard expects.
disable_created_metrics()  # type: ignore[no-untyped-call]

# client-go's rest_client_request_duration_seconds buckets (k8s.io/component-base/metrics/prometheus/restclient).
REST_CLIENT_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0]

__all__ = ["PLUGIN_METRICS_SAMPLE_PERCENT", "REST_CLIENT_BUCKETS", "Children", "Metrics", "exponential_buckets"]

PLUGIN_METRICS_SAMPLE_PERCENT = 10


def exponential_buckets(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


class Children:
    """A labelled metric's children by label values, each resolved once. ``metric.labels()``
    validates and takes the metric's lock on every call (about 1 µs), and the scheduling cycle asks
    for the same few children for every pod, a dozen times per pod (the extension points' durations,
    the attempt counters, the queue's incoming counter): a dict read instead."""

    __slots__ = ("_children", "_metric")

    def __init__(self, metric: Any) -> None:
        self._metric = metric
        self._children: dict[tuple[str, ...], Any] = {}

    def __call__(self, *labels: str) -> Any:
        child = self._children.get(labels)
        if child is None:
            child = self._children[labels] = self._metric.labels(*labels)
        return child


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = False) -> None:
        """``process``: also export ``process_*`` and ``python_*`` (what a Go binary's
        ``process_*``/``go_*`` are to upstream's dashboards); the operator's registry has them, the
        many throw-away registries of tests and benchmarks need not."""
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        if process:
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)
        self.schedule_attempts = LeanCounter(
            "scheduler_schedule_attempts", "Number of attempts to schedule pods, by the result. "
            "'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
            ["result", "profile"], registry=r)
        self.scheduling_attempt_duration = LeanHistogram(
            "scheduler_scheduling_attempt_duration_seconds",
            "Scheduling attempt latency in seconds (scheduling algorithm + binding)",
            ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.scheduling_algorithm_duration = LeanHistogram(
            "scheduler_scheduling_algorithm_duration_seconds", "Scheduling algorithm latency in seconds",
            buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.pending_pods = Gauge(
            "scheduler_pending_pods", "Number of pending pods, by the queue type. 'active' means number of "
            "pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of "
            "pods in unschedulableEntities that the scheduler attempted to schedule and failed; 'gated' is the "
            "number of unschedulable pods that the scheduler never attempted to schedule because they are gated; "
            "'incomplete' means number of pods in incompletePodGroupPods; 'pending' means number of pods in "
            "pendingPodGroupPods.", ["queue"], registry=r)
        # 1.37's entity gauges and counter, registered whatever the gates (metricsList): without
        # GenericWorkload every entity is a 'pod' (queue/podgroups.py counts them).
        self.queued_entities = Gauge(
            "scheduler_queued_entities", "Number of queued scheduling entities ('pod' or 'podgroup'; 'pod' "
            "stands for individual pods that are not members of any podgroup) by the queue type. 'active' means "
            "number of entities in activeQ; 'backoff' means number of entities in backoffQ; 'unschedulable' means "
            "number of entities in unschedulableEntities that the scheduler attempted to schedule and failed; "
            "'gated' is the number of unschedulable entities that the scheduler never attempted to schedule "
            "because they are gated.", ["queue", "type"], registry=r)
        self.queue_incoming_entities = LeanCounter(
            "scheduler_queue_incoming_entities", "Number of scheduling entities added to scheduling queues by "
            "event, queue type, and entity type. Entity types are either 'pod' (for individual pods that are not "
            "members of any podgroup) or 'podgroup'.", ["queue", "event", "type"], registry=r)
        self.pod_scheduling_sli_duration = LeanHistogram(
            "scheduler_pod_scheduling_sli_duration_seconds",
            "E2e latency for a pod being scheduled, from the time the pod enters the scheduling queue and "
            "might involve multiple scheduling attempts.",
            ["attempts"], buckets=exponential_buckets(0.01, 2, 20), registry=r)
        self.pod_scheduling_attempts = LeanHistogram(
            "scheduler_pod_scheduling_attempts", "Number of attempts to successfully schedule a pod.",
            buckets=exponential_buckets(1, 2, 5), registry=r)
        self.framework_extension_point_duration = LeanHistogram(
            "scheduler_framework_extension_point_duration_seconds",
            "Latency for running all plugins of a specific extension point.",
            ["extension_point", "status", "profile"], buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.plugin_execution_duration = LeanHistogram(
            "scheduler_plugin_execution_duration_seconds",
            "Duration for running a plugin at a specific extension point.",
            ["plugin", "extension_point", "status"], buckets=exponential_buckets(0.00001, 1.5, 20), registry=r)
        self.queue_incoming_pods = LeanCounter(
            "scheduler_queue_incoming_pods", "Number of pods added to scheduling queues by event and queue type.",
            ["queue", "event"], registry=r)
        self.unschedulable_pods = Gauge(
            "scheduler_unschedulable_pods",
            "The number of unschedulable pods broken down by plugin name. A pod will increment the gauge for "
            "all plugins that caused it to not schedule and so this metric have meaning only when broken "
            "down by plugin.", ["plugin", "profile"], registry=r)
        self.event_handling_duration = LeanHistogram(
            "scheduler_event_handling_duration_seconds", "Event handling latency in seconds.",
            ["event"], buckets=exponential_buckets(0.0001, 2, 12), registry=r)
        self.plugin_evaluation_total = LeanCounter(
            "scheduler_plugin_evaluation", "Number of attempts to schedule pods by each plugin and the extension "
            "point (available only in PreFilter, Filter, PreScore, and Score).",
            ["plugin", "extension_point", "profile"], registry=r)
        # Opportunistic batching (KEP-5598, framework/batch.py), upstream's names and labels.
        self.batch_attempts = LeanCounter(
            "scheduler_batch_attempts", "Counts of results when we attempt to use batching.",
            ["profile", "result"], registry=r)
        self.batch_cache_flushed = LeanCounter(
            "scheduler_batch_cache_flushed", "Counts of cache flushes by reason.", ["profile", "reason"], registry=r)
        self.get_node_hint_duration = LeanHistogram(
            "scheduler_get_node_hint_duration_seconds", "Latency for getting a node hint.", ["hinted", "profile"],
            buckets=exponential_buckets(0.00001, 2, 12), registry=r)
        self.store_schedule_results_duration = LeanHistogram(
            "scheduler_store_schedule_results_duration_seconds", "Latency for getting a no.", ["profile"],
            buckets=exponential_buckets(0.00001, 2, 12), registry=r)   # upstream's help text, as it is
        self.inflight_events = Gauge(
            "scheduler_inflight_events", "Number of events currently tracked in the scheduling queue.",
            ["event"], registry=r)
        self.permit_wait_duration = LeanHistogram(
            "scheduler_permit_wait_duration_seconds", "Duration of waiting on permit.",
            ["result"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.cache_size = Gauge(
            "scheduler_scheduler_cache_size", "Number of nodes, pods, and assumed (bound) pods in the scheduler cache.",
            ["type"], registry=r)
        self.preemption_attempts = LeanCounter(
            "scheduler_preemption_attempts", "Total preemption attempts in the cluster till now", registry=r)
        self.preemption_victims = LeanHistogram(
            "scheduler_preemption_victims", "Number of selected preemption victims for preemption initiated by a "
            "single pod",
            buckets=exponential_buckets(1, 2, 7), registry=r)
        # Ours, not upstream's: what each shadow profile would have decided.
        self.shadow_decisions = LeanCounter(
            "scheduler_shadow_decisions", "Decisions of shadow profiles, by the shadow's SchedulingProfile name "
            "and whether it agreed with the live profile, differed, or would have left the pod pending.",
            ["profile", "outcome"], registry=r)
        # client-go's request counter, as kube-scheduler exports it: API errors by code and verb.
        self.rest_client_requests = LeanCounter(
            "rest_client_requests", "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "host", "method"], registry=r)
        self.rest_client_request_duration = LeanHistogram(
            "rest_client_request_duration_seconds", "Request latency in seconds. Broken down by verb, and host.",
            ["host", "verb"], buckets=REST_CLIENT_BUCKETS, registry=r)
        self.goroutines = Gauge(
            "scheduler_goroutines", "Number of running goroutines split by the work they do such as binding.",
            ["operation"], registry=r)
        self.leader_status = Gauge(
            "leader_election_master_status", "Gauge of if the reporting system is master of the relevant lease, "
            "0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            ["name"], registry=r)
        self.leader_transitions = LeanCounter(
            "kopf_scheduler_leader_transitions", "Times this replica gained or lost the lease.",
            ["name", "direction"], registry=r)
        self.unreadable_objects = Gauge(
            "kopf_scheduler_unreadable_objects", "Objects the scheduler cannot read (kept at their last readable "
            "state, or not scheduled), by kind.", ["kind"], registry=r)
        self.component_restarts = LeanCounter(
            "kopf_scheduler_component_restarts", "In-process restarts of a component that died (pod informer, "
            "worker, leader elector), by component.", ["component"], registry=r)
        self.profile_reloads = LeanCounter(
            "kopf_scheduler_profile_reloads", "SchedulingProfile compilations, by result (accepted, rejected).",
            ["profile", "result"], registry=r)
        # The GenericWorkload gate's (register_generic_workload).
        self.podgroup_schedule_attempts: LeanCounter | None = None
        self.podgroup_scheduling_attempt_duration: LeanHistogram | None = None
        self.podgroup_scheduling_algorithm_duration: LeanHistogram | None = None
        self.workload_preemption_attempts: LeanCounter | None = None
        self.workload_preemption_victims: LeanHistogram | None = None
        self.preemption_workload_disruptions: LeanHistogram | None = None
        self.preemption_evaluation_duration: LeanHistogram | None = None
        self.preemption_execution_duration: LeanHistogram | None = None
        self.preemption_pdb_violations: LeanCounter | None = None

    def register_generic_workload(self) -> None:
        """Add the PodGroup and workload-preemption metrics (``pkg/scheduler/metrics/metrics.go``,
        registered upstream only with the GenericWorkload gate); a second call does nothing. Their
        label sets are 1.37's: 1.38 development adds ``type`` (``podgroup`` or ``compositepodgroup``)
        to the PodGroup ones. Who records what: docs/metrics.md."""
        if self.podgroup_schedule_attempts is not None:
            return
        r = self.registry
        self.podgroup_schedule_attempts = LeanCounter(
            "scheduler_podgroup_schedule_attempts", "Number of attempts to schedule pod group, by the result. "
            "'unschedulable' means a pod group could not be scheduled, while 'error' means an internal scheduler "
            "problem.", ["result", "profile"], registry=r)
        self.podgroup_scheduling_attempt_duration = LeanHistogram(
            "scheduler_podgroup_scheduling_attempt_duration_seconds", "Pod group scheduling attempt latency in seconds",
            ["result", "profile"], buckets=exponential_buckets(0.001, 2, 15), registry=r)
        self.podgroup_scheduling_algorithm_duration = LeanHistogram(
            "scheduler_podgroup_scheduling_algorithm_duration_seconds",
            "Pod group scheduling algorithm latency in seconds", buckets=exponential_buckets(0.001, 2, 15),
            registry=r)
        # Workload-aware preemption (framework/preemption: PodGroupPostFilter, the evaluator, the executor).
        self.workload_preemption_attempts = LeanCounter(
            "scheduler_workload_preemption_attempts", "Total preemption attempts initiated by workload (including "
            "pod groups) in the cluster till now.", ["result"], registry=r)
        self.workload_preemption_victims = LeanHistogram(
            "scheduler_workload_preemption_victims", "Number of pod preemption victims caused by workload "
            "preemption.", buckets=exponential_buckets(1, 2, 11), registry=r)
        self.preemption_workload_disruptions = LeanHistogram(
            "scheduler_preemption_workload_disruptions", "Number of workload preemption units being preempted. "
            "A single preemption unit can be all pods in a pod group (in case of DisruptionMode=all), or a single "
            "pod (in case of DisruptionMode=single).", ["preemptor"], buckets=exponential_buckets(1, 2, 11),
            registry=r)
        self.preemption_evaluation_duration = LeanHistogram(
            "scheduler_preemption_evaluation_duration_seconds", "Duration in seconds for identifying the target "
            "preemption victims.", ["preemptor", "result"], buckets=exponential_buckets(0.001, 2, 16), registry=r)
        self.preemption_execution_duration = LeanHistogram(
            "scheduler_preemption_execution_duration_seconds", "Duration in seconds for preempting the target "
            "preemption victims. With async preemption enabled, preemption execution does not block the "
            "scheduling of other pods.", ["preemptor", "result"], buckets=exponential_buckets(0.001, 2, 16),
            registry=r)
        self.preemption_pdb_violations = LeanCounter(
            "scheduler_preemption_pdb_violations", "Total number of pod disruption budget violations caused by "
            "preemption.", ["preemptor"], registry=r)

    def observe_preemption(self, preemptor: str, victims: int, pdb_violations: int, disruptions: int) -> None:
        """What upstream's executor records when it carries out a preemption (``executor_test.go``'s
        ``verifyPreemptionMetricsDelta``): the victims of a PodGroup's preemption go to
        ``workload_preemption_victims``, a pod's to ``preemption_victims``; with the gate, the
        PodGroup units disrupted (only when there are some) and the budgets broken, by preemptor
        (``pod`` or ``podgroup``)."""
        if preemptor == "podgroup":
            if self.workload_preemption_victims is not None:
                self.workload_preemption_victims.observe(victims)
        else:
            self.preemption_victims.observe(victims)
        if self.preemption_workload_disruptions is not None and disruptions > 0:
            self.preemption_workload_disruptions.labels(preemptor).observe(disruptions)
        if self.preemption_pdb_violations is not None:
            self.preemption_pdb_violations.labels(preemptor).inc(pdb_violations)

    def observe_preemption_execution(self, preemptor: str, failed: bool, seconds: float) -> None:
        """``scheduler_preemption_execution_duration_seconds{preemptor,result}`` (``success``/``error``,
        upstream's GoroutineResult values), with the gate only."""
        if self.preemption_execution_duration is not None:
            self.preemption_execution_duration.labels(preemptor, "error" if failed else "success").observe(seconds)
