"""``kopf-scheduler bench --mode core``: a scheduler_perf workload against the scheduling core.

The core runs exactly as the operator runs it (``SchedulerService`` and its worker), with the API
replaced by ``SinkClient``:

* nodes and pods enter through ``on_node`` / ``on_pod`` with API-shaped objects, the same event
  interface the operator's watch handlers use (so every pod is parsed, as a watch event would be);
* a Binding is confirmed at once by feeding the bound pod back through ``on_pod("MODIFIED")``, as
  the watch would deliver it; a preemption victim is fed back as ``DELETED``;
* events and status writes are counted and dropped;
* a volume workload's PVs, claims and CSINodes enter through ``add_volume_object``, which hands
  them to ``SchedulerService.on_volume_object`` as the storage informers would: each pod's claim
  and PV before the pod, the CSINodes with their nodes. The client is also the PV controller
  (``bind_volume``, ``select_node``): what PreBind writes is bound at once.
* a DRA workload's nodes get the test driver's ResourceSlices, and its DeviceClasses, claim
  templates and claims enter through ``add_dra_object`` (``SchedulerService.on_dra_object``, as the
  runtime's DRA informers). ``_ClaimController`` stands in for upstream's resourceclaim controller
  (the integration harness runs the real one): a pod's template claim is created, owned by the pod,
  and named in its ``status.resourceClaimStatuses`` before the pod is fed; a deleted pod's generated
  claims go with it. DynamicResources' claim writes (finalizer, allocation and reservedFor,
  Unreserve, deallocation, the extended-resource claim) land in ``SinkClient.claims`` with
  resourceVersions and are fed back as the informer's events, so allocated devices count from the
  informer's state as well as from the plugin's assumption. ``allocResourceClaims`` and
  ``createPodsSteadily`` (steady state: batches of pods created, bound, deleted) are emulated, and
  so are the DRABindingConditions tests' ``updateDeviceConditions`` (the driver's ``status.devices``
  report, ``SinkClient.set_device_statuses``) and ``checkPodScheduled``.

* a workload with ``Deleting`` (SchedulingWhileGated, SchedulingDeletedPodsWithFinalizers) feeds its
  gated pods first (SchedulingGates' PreEnqueue holds them), then deletes the init pods at upstream's
  rate in a task beside the measured phase, answering each DELETE as kube-apiserver does
  (``SinkClient.delete_with_finalizers``: a finalizer keeps the pod with its deletionTimestamp, fed as
  MODIFIED; others go, DELETED); ``bind`` refuses a pod being deleted with the API's 409. Labelled
  namespaces reach the service through ``on_namespace`` before any pod.

One run: create the nodes, schedule the init pods (not measured), then create the measured pods
while the workload's churn runs, until every measured pod is bound (or the time limit passes).
Each bind of a measured pod is timestamped; ``throughput.samples`` replays upstream's 1 s ticker
over them. Attempt latency comes from ``scheduler_scheduling_attempt_duration_seconds`` over the
measured phase only. Each run is meant for a fresh process (``report.run_bench`` spawns one), so the peak
RSS (``ru_maxrss``) is this run's.

``SinkClient`` (the in-memory API), ``pod_objects`` and ``wait_until`` are ``sink.py``'s; the DRA ops
(the workload's objects, ``_ClaimController``, steady state, the binding-condition ops) are
``core_dra.py``'s. This module runs the phases and builds the ``RunResult``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import resource
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from scheduler.benchmark import declaredfeatures
from scheduler.benchmark.batching import signed_pod
from scheduler.benchmark.core_dra import (
    BINDING_OP_SECONDS,
    _check_pod_scheduled,
    _ClaimController,
    _dra_setup,
    _pod_devices,
    _steady_state,
    _update_device_conditions,
)
from scheduler.benchmark.podgroups import all_group_objects, prepare_pod, refusal
from scheduler.benchmark.sink import SinkClient, pod_objects, wait_until
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import SERVICES, extended_resource_pod, make_node, service_object
from scheduler.benchmark.throughput import histogram_quantile, samples, summary
from scheduler.benchmark.volumes import csi_node, volume_objects, with_claim
from scheduler.benchmark.workloads import WORKLOADS, Churn, Workload, init_batches, namespace_objects, workload_nodes
from scheduler.framework.decision import DEFAULT_CAPACITY
from scheduler.service import SchedulerService

__all__ = ["RunResult", "run_core"]


log = logging.getLogger("kopf_scheduler.bench")
Obj = dict[str, Any]
FEED_CHUNK = 200


@dataclass
class RunResult:
    workload: str
    mode: str
    size: Size
    throughput: dict[str, float]
    attempt_p50: float
    attempt_p99: float
    peak_rss: int
    seconds: float
    bound: int
    complete: bool
    placements: dict[str, str] = field(default_factory=dict)
    shadow: dict[str, int] | None = None        # the shadow profile's counts, when one ran (--shadow)
    # measured pod -> the PV its claim is bound to, as the scheduler's volume store has them at the end
    # (only where the claim names the PV and the PV's claimRef names the claim back)
    volumes: dict[str, str] = field(default_factory=dict)
    # DRA: measured pod -> the devices (driver/pool/device) of its claims' allocations, as the
    # SinkClient holds the claims at the end (pods bound with a claim reserved for them only)
    claims: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # DRA: every allocated claim (namespace/name, the init claims too) -> its devices, at the end
    allocations: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # A workload that deletes pods: what it left of the init and gated pods (``_pod_counts``)
    pods: dict[str, int] = field(default_factory=dict)
    # The other pods (init, gated, churn) bound at the end: namespace/name -> node (e2e: small runs only)
    init_placements: dict[str, str] = field(default_factory=dict)
    # Core mode: the CPU time of the run's process over the measured phase (``time.process_time``,
    # every thread). Unlike the wall-clock throughput, it does not move when the virtual machine is
    # paused or another process takes the core, so a cost measured as a CPU ratio (``--baseline``)
    # needs far fewer pairs to rise above the noise. None in e2e mode (three processes).
    cpu_seconds: float | None = None
    # E2e mode: the operator process's user + system CPU seconds over the measured phase
    # (``/proc/PID/stat``): what a scheduler answering SchedulingExplanations costs in CPU.
    operator_cpu_seconds: float | None = None
    # E2e mode: the same for the simulated cluster's process and for the driver's (this process:
    # ``time.process_time``, every thread). The three side by side show which process an end-to-end
    # figure is bound by: with two cores and three busy processes, the busiest sets the pace.
    cluster_cpu_seconds: float | None = None
    driver_cpu_seconds: float | None = None
    # E2e mode: the peak resident sets (``VmHWM``) of the simulated cluster's process and of the
    # driver's (the process running ``run_e2e``: it builds every object and watches the pods), beside
    # ``peak_rss``, the operator's. None in core mode (one process: ``peak_rss`` is all of it).
    cluster_peak_rss: int | None = None
    driver_peak_rss: int | None = None
    # E2e mode with ``--explanations``: how many were created, and how many were left unanswered.
    explanations: dict[str, int] | None = None
    # Core mode with decision records on: the seconds the scheduler spent keeping them over the
    # measured phase (``Scheduler.recording_seconds``); their share of ``seconds`` is the
    # recording's cost, measured inside the run.
    recording_seconds: float | None = None
    # Core mode: pods placed on an opportunistic batch's hint (``framework/batch.py``), all profiles.
    batched_pods: int | None = None
    # How many throughput samples the run had (``throughput.samples``); 0: the measured phase was
    # too short for one, and the run has no SchedulingThroughput (upstream's collector then reports
    # no metric, and nothing is compared with the bar). None: not counted (taken as measured).
    samples: int | None = None

    def as_json(self) -> dict[str, Any]:
        out = {"workload": self.workload, "mode": self.mode, "nodes": self.size.nodes,
               "initPods": self.size.init_pods, "pods": self.size.pods, "throughput": self.throughput,
               "attemptLatencySeconds": {"p50": self.attempt_p50, "p99": self.attempt_p99},
               "peakRssBytes": self.peak_rss, "seconds": self.seconds}
        if self.shadow is not None:
            out["shadow"] = self.shadow
        if self.cpu_seconds is not None:
            out["cpuSeconds"] = self.cpu_seconds
        if self.operator_cpu_seconds is not None:
            out["operatorCpuSeconds"] = round(self.operator_cpu_seconds, 2)
        if self.cluster_cpu_seconds is not None:
            out["clusterCpuSeconds"] = round(self.cluster_cpu_seconds, 2)
        if self.driver_cpu_seconds is not None:
            out["driverCpuSeconds"] = round(self.driver_cpu_seconds, 2)
        if self.cluster_peak_rss is not None:
            out["clusterPeakRssBytes"] = self.cluster_peak_rss
        if self.driver_peak_rss is not None:
            out["driverPeakRssBytes"] = self.driver_peak_rss
        if self.explanations is not None:
            out["explanations"] = self.explanations
        if self.recording_seconds is not None and self.seconds > 0:
            out["recordingShare"] = self.recording_seconds / self.seconds
        if self.batched_pods is not None:
            out["batchedPods"] = self.batched_pods
        return out


def _histogram(service: SchedulerService) -> tuple[list[float], list[float]]:
    """Cumulative bucket counts of scheduling_attempt_duration_seconds, summed over labels."""
    bounds: list[float] = []
    counts: dict[float, float] = {}
    for metric in service.metrics.scheduling_attempt_duration.collect():
        for s in metric.samples:
            if s.name.endswith("_bucket"):
                le = float(s.labels["le"])
                counts[le] = counts.get(le, 0.0) + s.value
    bounds = sorted(counts)
    return bounds, [counts[b] for b in bounds]


async def _churn(sink: SinkClient, churn: Churn, stop: asyncio.Event) -> None:
    n = 0
    previous: list[tuple[str, str]] = []
    assert sink.service is not None
    service = sink.service
    while not stop.is_set():
        if churn.mode == "recreate":
            for kind, name in previous:
                if kind == "node":
                    service.on_node("DELETED", {"metadata": {"name": name}})
                elif kind == "service":
                    service.on_selector_owner("Service", "DELETED", {"metadata": {"name": name, "namespace": "churn"}})
                else:
                    sink.delete(name)
            previous = []
        for t in churn.templates:
            if t == "node":
                name = f"node-churn-{n}"
                service.on_node("ADDED", make_node(name, pods="0"))
                previous.append(("node", name))
            elif t in SERVICES:
                svc = service_object(t, "churn", n)
                service.on_selector_owner("Service", "ADDED", svc)
                previous.append(("service", svc["metadata"]["name"]))
            else:
                body = next(pod_objects(t, "churn", 1, n, tag="churn-"))
                sink.add(body)
                previous.append(("pod", body["metadata"]["uid"]))
        n += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), churn.interval)


async def _run(w: Workload, size: Size, seed: int, time_limit: float, profile: dict[str, Any],
               decision_records: int = DEFAULT_CAPACITY, shadow: dict[str, Any] | None = None,
               feature_gates: dict[str, bool] | None = None) -> RunResult:
    sink, service = _bench_service(w, seed, decision_records, feature_gates, profile, shadow)
    # a NodeDeclaredFeatures workload's mock features, registered for the run (declaredfeatures.py)
    mocked = w.node_features.mocked(service.feature_gates) if w.node_features is not None else 0
    with declaredfeatures.installed(mocked):
        return await _run_installed(sink, service, w, size, seed, time_limit)


async def _run_installed(sink: SinkClient, service: SchedulerService, w: Workload, size: Size, seed: int,
                         time_limit: float) -> RunResult:
    rng = random.Random(seed)
    controller = _bench_cluster(sink, service, w, size, rng)
    dra = w.dra
    stop = asyncio.Event()
    worker = asyncio.create_task(service.run_worker(stop))
    prepare = _preparer(sink, w, size, controller)
    deleting = w.deleting
    deleter: asyncio.Task[None] | None = None
    try:
        await _feed_init(sink, w, size, controller, prepare, time_limit)
        if deleting is not None:
            deleter = asyncio.create_task(_delete_pods(sink, w.init_namespace, deleting.rate))
        before = _histogram(service)
        churn_stop = asyncio.Event()
        churner = asyncio.create_task(_churn(sink, w.churn, churn_stop)) if w.churn else None
        if controller is not None and dra is not None and dra.claim_ref:
            controller.shared_claims(w.namespace, size.pods)
        t0, cpu0 = time.monotonic(), time.process_time()
        rec0 = service.scheduler.recording_seconds
        complete, end = await _measured_phase(sink, w, size, controller, prepare, t0, time_limit)
        cpu = time.process_time() - cpu0
        recording = service.scheduler.recording_seconds - rec0
        churn_stop.set()
        if churner is not None:
            await churner
    finally:
        if deleter is not None:       # the workload is over: upstream cancels its context
            deleter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await deleter
        stop.set()
        await worker
    return _run_result(sink, service, w, size, before, t0, end, complete, cpu, recording)


def _bench_service(w: Workload, seed: int, decision_records: int, feature_gates: dict[str, bool] | None,
                   profile: dict[str, Any], shadow: dict[str, Any] | None) -> tuple[SinkClient, SchedulerService]:
    """The service on a sink client, with the workload's profile (and the shadow) accepted, under the
    workload's feature gates with ``feature_gates`` (``bench --feature-gates``) over them."""
    if (why := refusal(w.name, w.groups)) is not None:
        raise ValueError(why)
    sink = SinkClient()
    gates = {**dict(w.feature_gates), **(feature_gates or {})}
    service = SchedulerService(sink, seed=seed, decision_records=decision_records, feature_gates=gates)
    sink.service = service
    st = service.on_profile("bench", {"schedulerName": "default-scheduler", **(w.profile or {}), **profile})
    if not st.accepted:
        raise ValueError(f"benchmark profile rejected: {st.message}")
    if shadow is not None:
        st = service.on_profile("bench-shadow", {"schedulerName": "default-scheduler", **shadow,
                                                 "shadowOf": "default-scheduler"})
        if not st.accepted:
            raise ValueError(f"benchmark shadow profile rejected: {st.message}")
    return sink, service


def _bench_cluster(sink: SinkClient, service: SchedulerService, w: Workload, size: Size, rng: random.Random
                   ) -> _ClaimController | None:
    """The nodes (with CSINodes), namespaces, DRA objects and Services; the claim controller of a
    DRA workload."""
    strategy = w.node_strategy
    dra = w.dra
    nodes = workload_nodes(w, size, rng, dict(strategy.node_allocatable) if strategy is not None else None,
                           gates=service.feature_gates) \
        if dra is None else [make_node(f"scheduler-perf-{i}") for i in range(dra.nodes_without_dra)]
    for node in nodes:
        service.on_node("ADDED", node)
        if strategy is not None:
            sink.add_volume_object("CSINode", csi_node(node["metadata"]["name"], strategy))
    for namespace in namespace_objects(w, size):
        service.on_namespace("ADDED", namespace)
    controller = _ClaimController(sink, dra) if dra is not None else None
    if dra is not None and controller is not None:
        _dra_setup(sink, w, dra, size, rng)
    for k, name in enumerate(w.services):
        service.on_selector_owner("Service", "ADDED", service_object(name, w.namespace, k))
    if w.groups is not None:                 # the createPodGroups ops, seen by the informer first
        for body in all_group_objects(w.groups, init_namespace=w.init_namespace, namespace=w.namespace,
                                      init_pods=size.init_pods, pods=size.pods):
            meta = body["metadata"]
            meta.update(uid=f"{meta['namespace']}/{meta['name']}", resourceVersion="1")
            service.on_pod_group("ADDED", body)
    return controller


_Prepare = Callable[[Obj, int, bool], Obj]


def _preparer(sink: SinkClient, w: Workload, size: Size, controller: _ClaimController | None) -> _Prepare:
    """What a pod body gets before it is fed: its claims, its extended resource, its volume, or its
    PodGroup and indexed fields."""
    groups = w.groups

    def prepare(body: Obj, i: int, volumes: bool) -> Obj:
        if w.signature_batch:
            signed_pod(body, i, w.signature_batch)
        if groups is not None:
            return prepare_pod(groups, body, i, measured=body["metadata"]["namespace"] == w.namespace,
                               nodes=size.nodes, init_pods=size.init_pods)
        if controller is not None:
            return controller.pod(body, i)
        if w.extended_resource:
            return extended_resource_pod(body, i)
        return _with_volume(sink, w, body, i) if volumes else body
    return prepare


async def _feed_init(sink: SinkClient, w: Workload, size: Size, controller: _ClaimController | None,
                     prepare: _Prepare, time_limit: float) -> None:
    """The unmeasured ops: the gated pods, the init pods, and the wait for them to be bound."""
    deleting = w.deleting
    dra = w.dra
    if deleting is not None and deleting.gated is not None:
        # createPods of the gated pods (skipWaitToCompletion), then the barrier (Attempted): fed
        # here, each is already in the queue, held by SchedulingGates' PreEnqueue.
        for body in pod_objects(deleting.gated, deleting.gated_namespace, size.gated_pods):
            sink.add(body)
        await asyncio.sleep(0)
    if controller is not None and dra is not None and dra.claim_ref:
        controller.shared_claims(w.init_namespace, size.init_pods)
    init_volumes = w.volumes is not None and w.volumes.init
    init_total = sum(count for _, _, count in init_batches(w, size))
    for tmpl, ns, count in init_batches(w, size):
        for chunk_start in range(0, count, FEED_CHUNK):
            for i, body in enumerate(pod_objects(tmpl, ns, min(FEED_CHUNK, count - chunk_start), chunk_start),
                                     chunk_start):
                sink.add(prepare(body, i, init_volumes))
            await asyncio.sleep(0)
    if deleting is not None and not deleting.wait:
        pass        # skipWaitToCompletion: the deletions start while the init pods are still pending
    elif not await wait_until(lambda: sink.bound >= init_total, time_limit):
        log.warning("%s: only %d of %d init pods bound in %.0f s", w.name, sink.bound, init_total, time_limit)


async def _measured_phase(sink: SinkClient, w: Workload, size: Size, controller: _ClaimController | None,
                          prepare: _Prepare, t0: float, time_limit: float) -> tuple[bool, float]:
    """The measured pods fed (or created steadily), and waited for: (complete, end time)."""
    dra = w.dra
    if dra is not None and dra.steady and controller is not None:
        end = await _steady_state(sink, w, size, controller, t0 + dra.steady)
        # as upstream's createPodsSteadily: the run fails only when no pod at all got scheduled
        return bool(sink.bind_times), end
    for chunk_start in range(0, size.pods, FEED_CHUNK):
        for i, body in enumerate(pod_objects(w.measured, w.namespace,
                                             min(FEED_CHUNK, size.pods - chunk_start), chunk_start),
                                 chunk_start):
            sink.add(prepare(body, i, w.volumes is not None), measured=True)
        await asyncio.sleep(0)
    if dra is not None and dra.binding is not None:
        await _update_device_conditions(sink, w.namespace, dra.binding, min(BINDING_OP_SECONDS, time_limit))
        complete = await _check_pod_scheduled(sink, w.namespace, dra.scheduled, min(BINDING_OP_SECONDS, time_limit))
        return complete, time.monotonic()
    complete = await wait_until(lambda: len(sink.bind_times) >= size.pods, time_limit)
    return complete, time.monotonic()


def _run_result(sink: SinkClient, service: SchedulerService, w: Workload, size: Size,
                before: tuple[list[float], list[float]], t0: float, end: float, complete: bool, cpu: float,
                recording: float) -> RunResult:
    dra = w.dra
    after = _histogram(service)
    bounds = after[0]
    delta = [a - (before[1][i] if i < len(before[1]) else 0.0) for i, a in enumerate(after[1])]
    binds = sink.bind_times
    shadow_stats = service.shadows.get("bench-shadow")
    steady = dra is not None and dra.steady > 0      # the collector runs for the op's duration
    rates = samples(t0, binds, end if not complete or steady else None)
    return RunResult(
        workload=w.name, mode="core", size=size,
        shadow=dict(shadow_stats.stats.counts) if shadow_stats is not None else None,
        throughput=summary(rates), samples=len(rates),
        attempt_p50=histogram_quantile(0.5, bounds, delta), attempt_p99=histogram_quantile(0.99, bounds, delta),
        peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        seconds=(binds[-1] if complete and binds and not steady else end) - t0, bound=len(binds), complete=complete,
        placements=sink.placements, volumes=_bound_volumes(sink, service) if w.volumes is not None else {},
        claims=_pod_devices(sink) if dra is not None else {},
        allocations=_allocations(sink),
        pods=_pod_counts(sink, w, size) if w.deleting is not None else {},
        init_placements=_init_placements(sink),
        cpu_seconds=cpu, recording_seconds=recording if service.decisions.enabled else None,
        batched_pods=sum(f.batch.batched_pods for f in service.profiles.current.values()))


def _allocations(sink: SinkClient) -> dict[str, tuple[str, ...]]:
    """Each allocated claim's devices, as driver/pool/device."""
    return {c.key: tuple(f"{r.driver}/{r.pool}/{r.device}" for r in c.allocation.results)
            for c in sink.claims.values() if c.allocation is not None}


def _init_placements(sink: SinkClient) -> dict[str, str]:
    """Where each bound unmeasured pod went, by namespace/name."""
    return {f"{b['metadata']['namespace']}/{b['metadata']['name']}": b["spec"]["nodeName"]
            for uid, b in sink.bodies.items() if uid not in sink.measured and b["spec"].get("nodeName")}


async def _delete_pods(sink: SinkClient, namespace: str, rate: float) -> None:
    """upstream's ``deletePods`` with ``deletePodsPerSecond``: the pods of ``namespace`` as listed
    now, one deleted per tick (a ticker: a late tick does not shift the later ones)."""
    uids = [uid for uid, body in list(sink.bodies.items()) if body["metadata"]["namespace"] == namespace]
    start = time.monotonic()
    for k, uid in enumerate(uids, 1):
        await asyncio.sleep(max(start + k / rate - time.monotonic(), 0.0))
        sink.delete_with_finalizers(uid)


def _pod_counts(sink: SinkClient, w: Workload, size: Size) -> dict[str, int]:
    """What a deleting workload leaves: the init pods gone, those kept by a finalizer with their
    deletionTimestamp (bound or not), and the gated pods bound (never, while their gate stays)."""
    assert w.deleting is not None
    init = [b for b in sink.bodies.values() if b["metadata"]["namespace"] == w.init_namespace]
    gated = [b for b in sink.bodies.values() if b["metadata"]["namespace"] == w.deleting.gated_namespace] \
        if w.deleting.gated is not None else []
    terminating = [b for b in init if b["metadata"].get("deletionTimestamp")]
    return {"initGone": size.init_pods - len(init), "initTerminating": len(terminating),
            "initTerminatingBound": sum(1 for b in terminating if b["spec"].get("nodeName")),
            "gated": len(gated), "gatedBound": sum(1 for b in gated if b["spec"].get("nodeName"))}


def _with_volume(sink: SinkClient, w: Workload, body: Obj, i: int) -> Obj:
    """Pod ``i`` (``body``) with its own claim, the claim and its PV added first
    (``CreatePodWithPersistentVolume``)."""
    assert w.volumes is not None
    ns = body["metadata"]["namespace"]
    pvc, pv = volume_objects(w.volumes, ns, i)
    pvc["metadata"]["uid"] = f"{ns}/{pvc['metadata']['name']}"
    pv["metadata"]["uid"] = f"pv/{pv['metadata']['name']}"
    sink.add_volume_object("PersistentVolumeClaim", pvc)
    sink.add_volume_object("PersistentVolume", pv)
    return with_claim(body, i)


def _bound_volumes(sink: SinkClient, service: SchedulerService) -> dict[str, str]:
    out: dict[str, str] = {}
    for uid in sink.measured:
        body = sink.bodies.get(uid)
        if body is None:
            continue
        ns, name = body["metadata"]["namespace"], body["metadata"]["name"]
        for vol in body["spec"].get("volumes") or ():
            claim = service.volumes.pvc(ns, (vol.get("persistentVolumeClaim") or {}).get("claimName", ""))
            pv = service.volumes.pv(claim.volume_name) if claim is not None and claim.volume_name else None
            if claim is not None and pv is not None and pv.claim_ref is not None \
                    and pv.claim_ref[:2] == (claim.namespace, claim.name):
                out[f"{ns}/{name}"] = pv.name
    return out


def run_core(workload: str, size: Size, *, seed: int = 0, time_limit: float = 600.0,
             profile: dict[str, Any] | None = None, decision_records: int = DEFAULT_CAPACITY,
             shadow: dict[str, Any] | None = None, feature_gates: dict[str, bool] | None = None) -> RunResult:
    """One run of ``workload`` at ``size`` in this process (a fresh event loop); ``decision_records``
    as ``run --decision-records`` (the product's default: on); ``shadow``, a SchedulingProfile spec
    run as a shadow of the workload's profile (``spec.shadowOf``); ``feature_gates`` as ``run
    --feature-gates`` (upstream's defaults otherwise)."""
    logging.getLogger("kopf_scheduler").setLevel(logging.WARNING)
    return asyncio.run(_run(WORKLOADS[workload], size, seed, time_limit, profile or {}, decision_records, shadow,
                            feature_gates))
