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
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
import random
import resource
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.benchmark import declaredfeatures
from scheduler.benchmark.batching import signed_pod
from scheduler.benchmark.dynamicresources import (
    DRA_TEMPLATES,
    Dra,
    dra_claim,
    dra_device_classes,
    dra_init_allocations,
    dra_node,
    dra_node_name,
    dra_pod,
    dra_selector_allocations,
    dra_selector_claim,
    dra_slice,
    dra_template_slices,
)
from scheduler.benchmark.podgroups import all_group_objects, prepare_pod, refusal
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import SERVICES, extended_resource_pod, make_node, service_object, template
from scheduler.benchmark.throughput import histogram_quantile, samples, summary
from scheduler.benchmark.volumes import csi_node, volume_objects, with_claim
from scheduler.benchmark.workloads import WORKLOADS, Churn, Workload, init_batches, namespace_objects, workload_nodes
from scheduler.framework.decision import DEFAULT_CAPACITY
from scheduler.model import Pod
from scheduler.model.dra import FINALIZER, AllocationResult, ConsumerRef, ResourceClaim, parse_resource_claim
from scheduler.model.podgroup import PodGroup
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
from scheduler.service import SchedulerService

__all__ = ["RunResult", "SinkClient", "pod_objects", "run_core", "wait_until"]

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
        if self.explanations is not None:
            out["explanations"] = self.explanations
        if self.recording_seconds is not None and self.seconds > 0:
            out["recordingShare"] = self.recording_seconds / self.seconds
        if self.batched_pods is not None:
            out["batchedPods"] = self.batched_pods
        return out


def pod_objects(tmpl: str, namespace: str, count: int, start: int = 0, tag: str = "") -> Iterator[Obj]:
    """``count`` pods from upstream template ``tmpl`` (named as generateName would, uids unique)."""
    base = template(tmpl)
    prefix = base["metadata"]["generateName"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for i in range(start, start + count):
        name = f"{prefix}{tag}{i}"
        obj = copy.deepcopy(base)
        obj["metadata"] = {"name": name, "namespace": namespace, "uid": f"{namespace}/{name}",
                           "labels": dict(base["metadata"]["labels"]), "creationTimestamp": now}
        if base["metadata"].get("finalizers"):
            obj["metadata"]["finalizers"] = list(base["metadata"]["finalizers"])
        yield obj


class SinkClient:
    """The in-memory API: binds are confirmed through the service as the watch would."""

    def __init__(self) -> None:
        self.service: SchedulerService | None = None
        self.bodies: dict[str, Obj] = {}
        self.measured: set[str] = set()
        self.bind_times: list[float] = []
        self.placements: dict[str, str] = {}
        self.bound = 0
        self.events = 0
        self.preempted = 0
        self.volume_bodies: dict[tuple[str, str, str], Obj] = {}
        self.volume_binds = 0
        self.provisioned = 0
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
        self._claim_version = 0
        # DRA: each claim's body as created (spec, metadata), what the informer's events are rebuilt from
        self.claim_bodies: dict[tuple[str, str], Obj] = {}

    def _confirm(self, event: str, body: Obj) -> None:
        assert self.service is not None
        self.service.on_pod(event, body)

    async def bind(self, pod: Pod, node_name: str) -> None:
        from scheduler.errors import ConflictError, NotFoundError
        body = self.bodies.get(pod.uid)
        if body is None:
            raise NotFoundError(f'pods "{pod.name}" not found', status=404)
        if body["metadata"].get("deletionTimestamp"):
            # kube-apiserver's binding refuses a pod being deleted (pod/storage's setPodNodeAndMetadata)
            raise ConflictError(f"Operation cannot be fulfilled on pods/binding \"{pod.name}\": pod {pod.name} "
                                "is being deleted, cannot be assigned to a host", status=409)
        if body["spec"].get("nodeName"):
            raise ConflictError(f'pod {pod.name} is already assigned to node "{body["spec"]["nodeName"]}"')
        body["spec"]["nodeName"] = node_name
        self.bound += 1
        if pod.uid in self.measured:
            self.bind_times.append(time.monotonic())
            self.placements[pod.key] = node_name
        self._confirm("MODIFIED", body)

    async def report_scheduled(self, pod: Pod, node_name: str, message: str) -> None:
        self.events += 1

    async def annotate(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        body = self.bodies.get(pod.uid)
        if body is not None:
            body.setdefault("metadata", {}).setdefault("annotations", {}).update(annotations)

    async def set_pod_group_condition(self, group: PodGroup, condition: Mapping[str, object]) -> None:
        self.events += 1

    async def report_pod_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        self.events += 1

    async def report_failure(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        self.events += 1
        body = self.bodies.get(pod.uid)
        if body is not None and nominated_node is not None:
            body.setdefault("status", {})["nominatedNodeName"] = nominated_node or None

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        body = self.bodies.pop(victim.uid, None)
        if body is not None:
            self.preempted += 1
            self._confirm("DELETED", body)

    async def clear_nomination(self, pod: Pod) -> None:
        body = self.bodies.get(pod.uid)
        if body is not None:
            body.setdefault("status", {})["nominatedNodeName"] = None

    async def nominate(self, pod: Pod, node_name: str) -> None:
        body = self.bodies.get(pod.uid)
        if body is not None:
            body.setdefault("status", {})["nominatedNodeName"] = node_name

    def add(self, body: Obj, *, measured: bool = False) -> None:
        uid = body["metadata"]["uid"]
        self.bodies[uid] = body
        if measured:
            self.measured.add(uid)
        self._confirm("ADDED", body)

    def delete(self, uid: str) -> None:
        body = self.bodies.pop(uid, None)
        if body is not None:
            self._confirm("DELETED", body)

    def delete_with_finalizers(self, uid: str) -> None:
        """A DELETE with default options, as kube-apiserver answers it for these pods (no kubelet, so
        no grace period is waited for): a pod with finalizers keeps its body, now with a
        deletionTimestamp (MODIFIED), until they are removed; any other pod goes (DELETED)."""
        body = self.bodies.get(uid)
        if body is None or body["metadata"].get("deletionTimestamp"):
            return
        if not body["metadata"].get("finalizers"):
            self.delete(uid)
            return
        body["metadata"] = {**body["metadata"], "deletionTimestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                            "deletionGracePeriodSeconds": 0 if not body["spec"].get("nodeName") else
                            body["spec"].get("terminationGracePeriodSeconds", 30)}
        self._confirm("MODIFIED", body)

    # --- volumes: the in-memory client is also the PV controller, and binds at once ----------------
    def add_volume_object(self, kind: str, body: Obj) -> None:
        """A PV, PVC, StorageClass, CSINode, CSIDriver or CSIStorageCapacity of the workload."""
        meta = body["metadata"]
        self.volume_bodies[(kind, meta.get("namespace", ""), meta["name"])] = body
        assert self.service is not None
        self.service.on_volume_object(kind, "ADDED", body)

    def _bind_claim(self, pv: Obj, claim: Obj) -> None:
        assert self.service is not None
        meta = claim["metadata"]
        pv["spec"]["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", "default"),
                                  "name": meta["name"], "uid": meta.get("uid", "")}
        pv.setdefault("status", {})["phase"] = "Bound"
        claim["spec"]["volumeName"] = pv["metadata"]["name"]
        meta.setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
        claim.setdefault("status", {})["phase"] = "Bound"
        self.service.on_volume_object("PersistentVolume", "MODIFIED", pv)
        self.service.on_volume_object("PersistentVolumeClaim", "MODIFIED", claim)

    async def bind_volume(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        pv_body = self.volume_bodies[("PersistentVolume", "", pv.name)]
        claim_body = self.volume_bodies[("PersistentVolumeClaim", claim.namespace, claim.name)]
        self.volume_binds += 1
        self._bind_claim(pv_body, claim_body)

    async def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        claim_body = self.volume_bodies[("PersistentVolumeClaim", claim.namespace, claim.name)]
        claim_body["metadata"].setdefault("annotations", {})["volume.kubernetes.io/selected-node"] = node_name
        spec = claim_body["spec"]
        name = f"pvc-{claim.uid or claim.name}"
        pv: Obj = {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name}, "spec": {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")},
            "accessModes": list(spec.get("accessModes") or ["ReadWriteOnce"]),
            "storageClassName": claim.storage_class,
            "csi": {"driver": "provisioned.kopf-scheduler.io", "volumeHandle": name},
            "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "kubernetes.io/hostname", "operator": "In", "values": [node_name]}]}]}}}}
        self.volume_bodies[("PersistentVolume", "", name)] = pv
        self.provisioned += 1
        self._bind_claim(pv, claim_body)

    # --- ResourceClaims: DynamicResources' writes, with the API's resourceVersion conflicts -------
    def _claim(self, claim: ResourceClaim, *, conditional: bool = True) -> ResourceClaim:
        from scheduler.errors import ConflictError, NotFoundError
        stored = self.claims.get((claim.namespace, claim.name))
        if stored is None:
            raise NotFoundError(f'resourceclaims.resource.k8s.io "{claim.name}" not found', status=404)
        if conditional and claim.resource_version and claim.resource_version != stored.resource_version:
            raise ConflictError(f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{claim.name}": '
                                "the object has been modified; please apply your changes to the latest version "
                                "and try again", status=409)
        return stored

    def _write_claim(self, claim: ResourceClaim) -> ResourceClaim:
        self._claim_version += 1
        written = dataclasses.replace(claim, resource_version=f"c{self._claim_version}")
        self.claims[(written.namespace, written.name)] = written
        self._claim_changed((written.namespace, written.name))
        return written

    # --- DRA objects: created by the workload, fed as the runtime's informers feed them ----------
    def add_dra_object(self, kind: str, body: Obj) -> None:
        """A DeviceClass, ResourceSlice, ResourceClaimTemplate or ResourceClaim of the workload,
        handed to ``SchedulerService.on_dra_object`` at once (``ADDED``); a claim is also kept,
        with a resourceVersion, for DynamicResources' writes."""
        assert self.service is not None
        if kind == "ResourceClaim":
            meta = body["metadata"]
            meta.setdefault("uid", f"{meta['namespace']}/{meta['name']}")
            key = (meta["namespace"], meta["name"])
            self.claim_bodies[key] = body
            self._claim_version += 1
            meta["resourceVersion"] = f"c{self._claim_version}"
            self.claims[key] = parse_resource_claim(body)
        self.service.on_dra_object(kind, "ADDED", body)

    def remove_claim(self, namespace: str, name: str) -> None:
        """The claim is gone (the resourceclaim controller and the garbage collector after its pod
        was deleted): forgotten here and fed as ``DELETED``."""
        assert self.service is not None
        self.claims.pop((namespace, name), None)
        body = self.claim_bodies.pop((namespace, name), None)
        if body is not None:
            self.service.on_dra_object("ResourceClaim", "DELETED", body)

    def _claim_changed(self, key: tuple[str, str]) -> None:
        """A write to a claim reaches the service as the informer's event, at once: before the
        write returns, so before DynamicResources assumes what it wrote (a watch faster than the
        write's answer, which the API allows). Fed after the assume, the event would compare the
        assumed claim with itself and DynamicResources' hint would skip it: a pod rejected while a
        shared claim was in flight would never be requeued, because ``DraStore.assume`` does not
        emit the event upstream's ``AssumeCache.Assume`` pushes to the handlers."""
        assert self.service is not None
        claim = self.claims.get(key)
        if claim is None:
            return
        base = self.claim_bodies.get(key) or {}
        status: Obj = {}
        if claim.allocation is not None:
            status["allocation"] = claim.allocation.to_json()
        if claim.reserved_for:
            status["reservedFor"] = [r.to_json() for r in claim.reserved_for]
        if (base.get("status") or {}).get("devices"):
            status["devices"] = base["status"]["devices"]
        body = {**base, "metadata": {**base.get("metadata", {}), "resourceVersion": claim.resource_version,
                                     "finalizers": list(claim.finalizers)}, "status": status}
        self.claim_bodies[key] = body
        # a claim created through create_claim (PreBind's extended-resource claim) is new to the informer
        self.service.on_dra_object("ResourceClaim", "ADDED" if "resourceVersion" not in base.get("metadata", {})
                                   else "MODIFIED", body)

    def set_device_statuses(self, namespace: str, name: str, devices: list[Obj]) -> None:
        """A driver's status write: the claim's ``status.devices`` replaced by ``devices`` (the
        conditions binding waits for), fed as the informer's MODIFIED."""
        key = (namespace, name)
        body = self.claim_bodies[key]
        body.setdefault("status", {})["devices"] = devices
        parsed = parse_resource_claim(body)
        self._write_claim(dataclasses.replace(self.claims[key], devices=parsed.devices))

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        from scheduler.errors import NotFoundError
        got = self.claims.get((namespace, name))
        if got is None:
            raise NotFoundError(f'resourceclaims.resource.k8s.io "{name}" not found', status=404)
        return got

    async def add_claim_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        stored = self._claim(claim)
        if FINALIZER in stored.finalizers:
            return stored
        return self._write_claim(dataclasses.replace(stored, finalizers=(*stored.finalizers, FINALIZER)))

    async def reserve_claim(self, claim: ResourceClaim, pod: Pod, allocation: AllocationResult | None
                            ) -> ResourceClaim:
        stored = self._claim(claim)
        return self._write_claim(dataclasses.replace(
            stored, allocation=allocation if allocation is not None else stored.allocation,
            reserved_for=(*claim.reserved_for, ConsumerRef(resource="pods", name=pod.name, uid=pod.uid))))

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        stored = self._claim(claim, conditional=False)
        self._write_claim(dataclasses.replace(stored, reserved_for=tuple(r for r in stored.reserved_for
                                                                          if r.uid != pod.uid)))

    async def deallocate_claim(self, claim: ResourceClaim) -> None:
        # PostFilter's status write: allocation, reservedFor and the drivers' device statuses go
        stored = self._claim(claim)
        (self.claim_bodies.get((claim.namespace, claim.name)) or {}).get("status", {}).pop("devices", None)
        self._write_claim(dataclasses.replace(stored, allocation=None, reserved_for=(), devices=()))

    async def delete_claim(self, claim: ResourceClaim) -> None:
        self.remove_claim(claim.namespace, claim.name)

    async def set_extended_resource_claim_status(self, pod: Pod, claim_name: str,
                                                 request_mappings: Sequence[Mapping[str, str]]) -> None:
        body = self.bodies.get(pod.uid)
        if body is not None:
            body.setdefault("status", {})["extendedResourceClaimStatus"] = {
                "requestMappings": [dict(m) for m in request_mappings], "resourceClaimName": claim_name}

    async def create_claim(self, body: Mapping[str, Any]) -> ResourceClaim:
        meta = dict(body.get("metadata") or {})
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName', '')}{len(self.claims)}"
        meta["uid"] = f"{meta.get('namespace') or 'default'}/{meta['name']}"
        created = {**body, "metadata": meta}
        self.claim_bodies[(meta.get("namespace") or "default", meta["name"])] = created
        return self._write_claim(parse_resource_claim(created))


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


async def wait_until(pred: Any, limit: float, interval: float = 0.005) -> bool:
    """Poll ``pred`` every ``interval`` s for at most ``limit`` s; whether it came true."""
    deadline = time.monotonic() + limit
    while not pred():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(interval)
    return True


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


# The binding-conditions ops' durationParam (updateDuration, checkDuration: 30s), their poll
# interval, and how long checkPodScheduled wants every pod unbound to call it stable.
BINDING_OP_SECONDS = 30.0
BINDING_OP_POLL = 1.0
UNSCHEDULED_STABLE_SECONDS = 5.0


def device_statuses(allocation: Obj, condition: tuple[str, str]) -> list[Obj]:
    """upstream's ``updateDeviceConditionsOp`` for one claim: an ``AllocatedDeviceStatus`` with the
    condition (reason and message ``Test``) for each allocated device that has binding (failure)
    conditions (``makeBindingConditions``)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return [{"driver": r["driver"], "pool": r["pool"], "device": r["device"], "conditions": [
        {"type": condition[0], "status": condition[1], "lastTransitionTime": now, "reason": "Test",
         "message": "Test"}]}
            for r in (allocation.get("devices") or {}).get("results") or ()
            if r.get("bindingConditions") or r.get("bindingFailureConditions")]


async def _update_device_conditions(sink: SinkClient, namespace: str, condition: tuple[str, str],
                                    limit: float) -> None:
    """``updateDeviceConditions``: once the namespace has claims, each one, when its allocation has a
    device with binding conditions, gets its ``status.devices`` report (polled every second, for at
    most ``limit`` seconds in all)."""
    deadline = time.monotonic() + limit
    if not await wait_until(lambda: any(ns == namespace for ns, _ in sink.claims), limit, BINDING_OP_POLL):
        raise RuntimeError(f"no claims found in namespace {namespace} within {limit:g}s")
    for key in [k for k in sink.claims if k[0] == namespace]:
        def pending(key: tuple[str, str] = key) -> bool:
            claim = sink.claims.get(key)
            return claim is not None and claim.allocation is not None and any(
                r.binding_conditions for r in claim.allocation.results)
        if not await wait_until(pending, max(deadline - time.monotonic(), 0.0), BINDING_OP_POLL):
            raise RuntimeError(f"no devices found in claim {key[0]}/{key[1]} within {limit:g}s")
        allocation = (sink.claim_bodies[key].get("status") or {}).get("allocation") or {}
        sink.set_device_statuses(*key, [*((sink.claim_bodies[key].get("status") or {}).get("devices") or ()),
                                        *device_statuses(allocation, condition)])


async def _check_pod_scheduled(sink: SinkClient, namespace: str, scheduled: bool, limit: float) -> bool:
    """``checkPodScheduled``: every pod of the namespace bound (``scheduled``), or every one unbound
    for ``UNSCHEDULED_STABLE_SECONDS`` in a row; polled every second for at most ``limit`` seconds."""
    stable_since: float | None = None

    def check() -> bool:
        nonlocal stable_since
        pods = [b for b in sink.bodies.values() if b["metadata"]["namespace"] == namespace]
        if not all(bool(b["spec"].get("nodeName")) == scheduled for b in pods):
            stable_since = None
            return False
        if scheduled:
            return True
        if stable_since is None:
            stable_since = time.monotonic()
        return time.monotonic() - stable_since >= UNSCHEDULED_STABLE_SECONDS
    return await wait_until(check, limit, BINDING_OP_POLL)


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


# --- DRA: the workload's objects, and the controllers of upstream's integration harness -------------

def _dra_setup(sink: SinkClient, w: Workload, dra: Dra, size: Size, rng: random.Random) -> None:
    """The DRA ops before any pod: the DeviceTaintRules, the nodes with the test driver and their
    ResourceSlices (``createResourceDriver``), the DeviceClasses, the claim template in each pod namespace, and the
    ``allocResourceClaims`` claims."""
    assert sink.service is not None
    for rule in dra.taint_rules:
        sink.add_dra_object("DeviceTaintRule", copy.deepcopy(DRA_TEMPLATES[rule]))
    for i in range(size.nodes):
        name = dra_node_name(i)
        sink.service.on_node("ADDED", dra_node(i))
        if dra.driver:
            sink.add_dra_object("ResourceSlice", dra_slice(name, dra.max_claims_per_node, dra.binding is not None))
    for tmpl_name in dra.slices:
        for k in range(size.resource_slices):
            for body in dra_template_slices(tmpl_name, k):
                sink.add_dra_object("ResourceSlice", body)
    for cls in dra_device_classes(dra):
        sink.add_dra_object("DeviceClass", cls)
    if dra.claim_template is not None:
        for ns in (w.init_namespace, w.namespace):
            tmpl = copy.deepcopy(DRA_TEMPLATES[dra.claim_template])
            tmpl["metadata"] = {**tmpl["metadata"], "namespace": ns}
            sink.add_dra_object("ResourceClaimTemplate", tmpl)
    _alloc_claims(sink, dra, size, rng)


def _alloc_claims(sink: SinkClient, dra: Dra, size: Size, rng: random.Random) -> None:
    """upstream's ``allocResourceClaimsOp``: ``initClaims`` claims (``resourceclaim.yaml`` in
    ``init``) each allocated on a random node that can still take it, without a pod, its first free
    device (the allocator's first solution; upstream shuffles the nodes and takes the first that
    fits: a uniform pick among the nodes with a free device, as here)."""
    for k, allocation in dra_init_allocations(dra, size, rng):
        claim = dra_claim(k, "init")
        claim["status"] = {"allocation": allocation}
        sink.add_dra_object("ResourceClaim", claim)
    if dra.init_fill == "selector":
        for k, allocation in dra_selector_allocations(size):
            claim = dra_selector_claim(k)
            claim["status"] = {"allocation": allocation}
            sink.add_dra_object("ResourceClaim", claim)


_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"     # the API server's generateName alphabet


class _ClaimController:
    """upstream's resourceclaim controller, as the integration harness runs it, reduced to what the
    workloads need: a pod's ``resourceClaimTemplateName`` entry gets its claim (``<pod>-<entry>-xxxxx``,
    the pod as controlling owner, ``resource.kubernetes.io/pod-claim-name``, the template's claim
    spec) and the pod its ``status.resourceClaimStatuses`` before it is fed, as the controller's
    status update would reach the scheduler right after the pod's creation; a deleted pod's
    generated claims are deleted with it (the controller and the garbage collector)."""

    def __init__(self, sink: SinkClient, dra: Dra) -> None:
        self.sink, self.dra = sink, dra
        self.generated: dict[str, list[tuple[str, str]]] = {}
        self._n = 0

    def _suffix(self) -> str:
        self._n += 1
        n, out = self._n, ""
        for _ in range(5):
            n, r = divmod(n, len(_SUFFIX))
            out += _SUFFIX[r]
        return out

    def shared_claims(self, namespace: str, pods: int) -> None:
        """The ``test-claim-<k>`` claims five pods each share, created before the pods (``createAny``)."""
        for k in range((pods + 4) // 5):
            self.sink.add_dra_object("ResourceClaim", dra_claim(k, namespace))

    def pod(self, body: Obj, i: int) -> Obj:
        body = dra_pod(self.dra, body, i)
        meta = body["metadata"]
        statuses = []
        for pc in body["spec"].get("resourceClaims") or ():
            tmpl_name = pc.get("resourceClaimTemplateName")
            if tmpl_name is None or self.dra.claim_template is None:
                continue
            tmpl = DRA_TEMPLATES[self.dra.claim_template]
            name = f"{meta['name']}-{pc['name']}-{self._suffix()}"
            claim: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
                "name": name, "generateName": f"{meta['name']}-{pc['name']}-", "namespace": meta["namespace"],
                "annotations": {"resource.kubernetes.io/pod-claim-name": pc["name"]},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                     "controller": True, "blockOwnerDeletion": True}]},
                "spec": copy.deepcopy(tmpl["spec"]["spec"])}
            self.sink.add_dra_object("ResourceClaim", claim)
            self.generated.setdefault(meta["uid"], []).append((meta["namespace"], name))
            statuses.append({"name": pc["name"], "resourceClaimName": name})
        if statuses:
            body.setdefault("status", {})["resourceClaimStatuses"] = statuses
        return body

    def delete_pod(self, uid: str) -> None:
        self.sink.delete(uid)
        for ns, name in self.generated.pop(uid, ()):
            self.sink.remove_claim(ns, name)


async def _steady_state(sink: SinkClient, w: Workload, size: Size, controller: _ClaimController,
                        deadline: float) -> float:
    """upstream's ``createPodsSteadily``: ``size.pods`` pods; each time all of them are bound they
    are deleted (grace period 0) and as many new ones created, until ``deadline``; when it ended."""
    batch = 0
    while time.monotonic() < deadline:
        uids = []
        for i, body in enumerate(pod_objects(w.measured, w.namespace, size.pods, tag=f"{batch}-")):
            sink.add(controller.pod(body, i), measured=True)
            uids.append(body["metadata"]["uid"])
        target = len(sink.bind_times) + size.pods
        if not await wait_until(lambda t=target: len(sink.bind_times) >= t,
                                max(deadline - time.monotonic(), 0.0), interval=0.001):
            break
        for uid in uids:
            controller.delete_pod(uid)
        batch += 1
    return deadline


def _pod_devices(sink: SinkClient) -> dict[str, tuple[str, ...]]:
    """Measured pod -> the devices allocated to the claims reserved for it (bound pods only)."""
    by_uid: dict[str, list[str]] = {}
    for claim in sink.claims.values():
        if claim.allocation is None:
            continue
        devices = [f"{r.driver}/{r.pool}/{r.device}" for r in claim.allocation.results]
        for ref in claim.reserved_for:
            by_uid.setdefault(ref.uid, []).extend(devices)
    out: dict[str, tuple[str, ...]] = {}
    for uid in sink.measured:
        body = sink.bodies.get(uid)
        if body is not None and body["spec"].get("nodeName") and uid in by_uid:
            out[f"{body['metadata']['namespace']}/{body['metadata']['name']}"] = tuple(sorted(by_uid[uid]))
    return out


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
