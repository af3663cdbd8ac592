"""Builders for API-shaped pods and nodes, an in-memory SchedulerClient, and runners that call a plugin
through its extension points (``run_filter``, ``run_score``), for the tests."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from scheduler import Cache, Metrics, ProfileMap, Registry, Scheduler, SchedulingQueue, compile_profile, parse_spec
from scheduler.cache import Snapshot, VolumeStore
from scheduler.cache.dra import DraStore
from scheduler.errors import ConflictError, NotFoundError
from scheduler.framework import CycleState, Status
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import Rows
from scheduler.framework.types import ClusterEvent
from scheduler.model import Node, Pod, PodDisruptionBudget, parse_node, parse_pod
from scheduler.model.dra import FINALIZER, AllocationResult, ConsumerRef, ResourceClaim, parse_resource_claim
from scheduler.model.podgroup import PodGroup
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim

_uid = itertools.count()


def node(name: str, cpu: str = "4", memory: str = "32Gi", pods: int = 110, *, labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
         images: list[tuple[str, int]] | None = None, extra: dict[str, str] | None = None) -> Node:
    alloc: dict[str, Any] = {"cpu": cpu, "memory": memory, "pods": str(pods), **(extra or {})}
    return parse_node({
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "spec": {"taints": taints or [], "unschedulable": unschedulable},
        "status": {"allocatable": alloc,
                   "images": [{"names": [n], "sizeBytes": s} for n, s in (images or [])]},
    })


def pod(name: str, cpu: str | None = "100m", memory: str | None = "500Mi", *, namespace: str = "default",
        labels: dict[str, str] | None = None, node_name: str = "", priority: int | None = None,
        scheduler_name: str = "default-scheduler", spec: dict[str, Any] | None = None,
        image: str = "registry.k8s.io/pause:3.10.1", status: dict[str, Any] | None = None) -> Pod:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    body: dict[str, Any] = {
        "containers": [{"name": "c", "image": image, "resources": {"requests": requests}}],
        "schedulerName": scheduler_name,
        **(spec or {}),
    }
    if node_name:
        body["nodeName"] = node_name
    if priority is not None:
        body["priority"] = priority
    return parse_pod({"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{next(_uid)}-{name}",
                                   "labels": labels or {}},
                      "spec": body, "status": status or {}})


class MemoryClient:
    """Records bindings, reports and preemptions; can be told to fail binds. With a cache (and a
    queue) it also plays the watch: a bind confirms the assumption, a preemption deletes the victim
    and sends the queue the AssignedPodDelete event."""

    def __init__(self, cache: Cache | None = None, queue: SchedulingQueue | None = None) -> None:
        self.cache = cache
        self.queue = queue
        self.bound: dict[str, str] = {}
        self.scheduled: list[tuple[str, str]] = []
        self.failures: list[tuple[str, str, str, str | None]] = []
        self.pod_events: list[tuple[str, str, str, str, str]] = []      # (pod, type, reason, action, note)
        self.preempted: list[tuple[str, str, str]] = []   # (victim, preemptor, node)
        self.preempted_for_group: list[tuple[str, str]] = []   # (victim, PodGroup) of a PodGroup's preemption
        self.cleared: list[str] = []
        self.nominated: list[tuple[str, str]] = []     # NominatedNodeNameForExpectation writes
        self.annotations: dict[str, dict[str, str]] = {}
        # PodGroup key -> condition type -> the condition as written (set_pod_group_condition).
        self.pod_group_conditions: dict[str, dict[str, dict[str, Any]]] = {}
        self.bind_error: Exception | None = None
        self.preempt_error: Exception | None = None
        self.volume_binds: list[tuple[str, str]] = []       # (pv, namespace/claim) PreBind wrote
        self.selected_nodes: list[tuple[str, str]] = []     # (namespace/claim, node) PreBind annotated
        self.volume_error: Exception | None = None
        # The ResourceClaims the DRA writes go to, by (namespace, name): each write gets a new
        # resourceVersion, and a write conditional on an older one is a 409, as the API server's.
        self.claims: dict[tuple[str, str], ResourceClaim] = {}
        self.claim_writes: list[tuple[str, str]] = []       # (verb, namespace/name)
        self.claim_error: Exception | None = None           # raised by every claim call
        self.claim_conflicts = 0                            # the next N conditional writes answer 409
        self.claim_write_hook: Any = None                   # called with each written claim (a watch)
        # pod key -> (claim name, request mappings): status.extendedResourceClaimStatus written
        self.extended_claim_status: dict[str, tuple[str, list[dict[str, str]]]] = {}
        self._rv = itertools.count(1000)

    def add_claim(self, claim: ResourceClaim) -> ResourceClaim:
        """Store a claim as the API has it (a resourceVersion when it has none); the stored claim."""
        stored = claim if claim.resource_version else replace(claim, resource_version=str(next(self._rv)))
        self.claims[(stored.namespace, stored.name)] = stored
        return stored

    def _stored(self, claim: ResourceClaim, *, conditional: bool = True) -> ResourceClaim:
        if self.claim_error is not None:
            raise self.claim_error
        stored = self.claims.get((claim.namespace, claim.name))
        if stored is None or (claim.uid and stored.uid and claim.uid != stored.uid):
            raise NotFoundError(f'resourceclaims.resource.k8s.io "{claim.name}" not found', status=404)
        if conditional and (self.claim_conflicts > 0 or
                            (claim.resource_version and claim.resource_version != stored.resource_version)):
            self.claim_conflicts = max(0, self.claim_conflicts - 1)
            raise ConflictError(f'Operation cannot be fulfilled on resourceclaims.resource.k8s.io "{claim.name}": '
                                "the object has been modified; please apply your changes to the latest version "
                                "and try again", status=409)
        return stored

    def _write(self, verb: str, claim: ResourceClaim) -> ResourceClaim:
        written = replace(claim, resource_version=str(next(self._rv)))
        self.claims[(written.namespace, written.name)] = written
        self.claim_writes.append((verb, written.key))
        if self.claim_write_hook is not None:
            self.claim_write_hook(written)
        return written

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        if self.claim_error is not None:
            raise self.claim_error
        got = self.claims.get((namespace, name))
        if got is None:
            raise NotFoundError(f'resourceclaims.resource.k8s.io "{name}" not found', status=404)
        return got

    async def add_claim_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        stored = self._stored(claim)
        finalizers = stored.finalizers if FINALIZER in stored.finalizers else (*stored.finalizers, FINALIZER)
        return self._write("finalizer", replace(stored, finalizers=finalizers))

    async def reserve_claim(self, claim: ResourceClaim, pod: Pod, allocation: AllocationResult | None
                            ) -> ResourceClaim:
        stored = self._stored(claim)
        return self._write("reserve", replace(
            stored, allocation=allocation if allocation is not None else stored.allocation,
            reserved_for=(*claim.reserved_for, ConsumerRef(resource="pods", name=pod.name, uid=pod.uid))))

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        stored = self._stored(claim, conditional=False)
        self._write("unreserve", replace(stored, reserved_for=tuple(r for r in stored.reserved_for
                                                                     if r.uid != pod.uid)))

    async def deallocate_claim(self, claim: ResourceClaim) -> None:
        # as the real client's status patch (and upstream's PostFilter): allocation, reservedFor
        # and the drivers' device statuses cleared
        stored = self._stored(claim)
        self._write("deallocate", replace(stored, allocation=None, reserved_for=(), devices=()))

    async def create_claim(self, body: Mapping[str, Any]) -> ResourceClaim:
        if self.claim_error is not None:
            raise self.claim_error
        meta = dict(body.get("metadata") or {})
        if not meta.get("name"):
            meta["name"] = f"{meta.get('generateName', '')}{len(self.claims)}"
        key = (str(meta.get("namespace") or "default"), str(meta["name"]))
        if key in self.claims:
            raise ConflictError(f'resourceclaims.resource.k8s.io "{key[1]}" already exists', status=409)
        meta["uid"] = f"uid-{key[0]}-{key[1]}"
        return self._write("create", parse_resource_claim({**body, "metadata": meta}))

    async def delete_claim(self, claim: ResourceClaim) -> None:
        try:
            stored = self._stored(claim)
        except NotFoundError:
            return
        del self.claims[(stored.namespace, stored.name)]
        self.claim_writes.append(("delete", stored.key))

    async def set_extended_resource_claim_status(self, pod: Pod, claim_name: str,
                                                 request_mappings: Sequence[Mapping[str, str]]) -> None:
        if self.claim_error is not None:
            raise self.claim_error
        self.extended_claim_status[pod.key] = (claim_name, [dict(m) for m in request_mappings])

    async def bind(self, pod: Pod, node_name: str) -> None:
        if self.bind_error is not None:
            raise self.bind_error
        assert pod.uid not in self.bound, f"{pod.key} bound twice"
        self.bound[pod.uid] = node_name
        if self.cache is not None:  # the watch confirming the assumption
            from dataclasses import replace
            self.cache.add_pod(replace(pod, node_name=node_name))

    async def report_scheduled(self, pod: Pod, node_name: str, message: str) -> None:
        self.scheduled.append((pod.key, message))

    async def report_failure(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        self.failures.append((pod.key, reason, message, nominated_node))

    async def set_pod_group_condition(self, group: PodGroup, condition: Mapping[str, object]) -> None:
        self.pod_group_conditions.setdefault(group.key, {})[str(condition["type"])] = dict(condition)

    async def report_pod_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        self.pod_events.append((pod.key, type_, reason, action, note))

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        if self.preempt_error is not None:
            raise self.preempt_error
        assert all(v != victim.key for v, _, _ in self.preempted), f"{victim.key} preempted twice"
        self.preempted.append((victim.key, preemptor.key, node_name))
        if group is not None:
            self.preempted_for_group.append((victim.key, group.key))
        if self.cache is not None and self.cache.get_pod(victim.uid) is not None:
            self.cache.remove_pod(victim)
            if self.queue is not None:
                self.queue.move_all_to_active_or_backoff(ClusterEvent("Pod", frozenset({"Delete"}), old=victim,
                                                                       label="AssignedPodDelete"))

    async def clear_nomination(self, pod: Pod) -> None:
        self.cleared.append(pod.key)

    async def nominate(self, pod: Pod, node_name: str) -> None:
        self.nominated.append((pod.key, node_name))

    async def annotate(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        self.annotations.setdefault(pod.key, {}).update(annotations)

    async def bind_volume(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        if self.volume_error is not None:
            raise self.volume_error
        self.volume_binds.append((pv.name, claim.key))

    async def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        if self.volume_error is not None:
            raise self.volume_error
        self.selected_nodes.append((claim.key, node_name))


class Clock:
    def __init__(self, t: float = 1000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t

    def advance(self, dt: float) -> None:
        self.t += dt


def make_scheduler(spec: dict[str, Any] | None = None, *, seed: int = 0, clock: Clock | None = None,
                   pdbs: Sequence[PodDisruptionBudget] = (), volumes: VolumeStore | None = None,
                   dra: DraStore | None = None, feature_gates: Mapping[str, bool] | None = None
                   ) -> tuple[Scheduler, MemoryClient]:
    """A scheduler with one profile (upstream defaults unless ``spec`` says otherwise); the
    plugins read ``feature_gates`` (upstream's defaults for the gates not given)."""
    clock = clock or Clock()
    cache = Cache(clock=clock)
    metrics = Metrics()
    profiles = ProfileMap()
    queue = SchedulingQueue(profiles.for_pod, clock=clock, metrics=metrics)
    client = MemoryClient(cache, queue)
    raw = {"schedulerName": "default-scheduler", **(spec or {})}
    handle = Handle(client=client, metrics=metrics, nominator=queue.nominator, pdbs=lambda: pdbs,
                    assigned_pod=cache.get_pod, activate=queue.activate, seed=seed, volumes=volumes, dra=dra,
                    feature_gates=feature_gates)
    fwk = compile_profile(parse_spec(raw), registry=Registry(), handle=handle, metrics=metrics, seed=seed)
    profiles.set("default", fwk)
    return Scheduler(profiles, cache, queue, client, metrics=metrics, clock=clock), client


# --- running one plugin through its extension points (the plugin tables in tests/plugins/) ----
def setup(nodes: list[Node], existing: list[Pod]) -> tuple[Snapshot, CycleState, Rows]:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    for e in existing:
        cache.add_pod(e)
    snap = cache.snapshot()
    return snap, CycleState(), np.array([snap.row_of(n.name) for n in nodes], np.int64)


def run_filter(plugin: object, p: Pod, nodes: list[Node], existing: list[Pod] = ()) -> list[Status | None]:
    """Run PreFilter+Filter; per node the failure Status, or None when the node passes."""
    snap, state, rows = setup(nodes, existing)
    if hasattr(plugin, "pre_filter"):
        _, s = plugin.pre_filter(state, p, snap)
        if s.is_skip():
            return [None] * len(nodes)
        if not s.is_success():
            return [s] * len(nodes)
    v = plugin.filter_nodes(state, p, snap, rows)
    out: list[Status | None] = []
    for i in range(len(nodes)):
        if not v.failed[i]:
            out.append(None)
        else:
            out.append(v.statuses[0 if v.status_ids is None else int(v.status_ids[i])])
    return out


def run_score(plugin: object, p: Pod, nodes: list[Node], existing: list[Pod] = ()) -> list[int]:
    """Run PreScore+Score+NormalizeScore; the normalised score per node (0 when PreScore skips)."""
    snap, state, rows = setup(nodes, existing)
    if hasattr(plugin, "pre_score"):
        s = plugin.pre_score(state, p, snap, rows)
        if s.is_skip():
            return [0] * len(nodes)
    scores = plugin.score_nodes(state, p, snap, rows)
    ext = plugin.score_extensions()
    if ext is not None:
        ext.normalize_score(state, p, scores)
    return scores.tolist()


def reasons(statuses: list[Status | None]) -> list[tuple[str, ...] | None]:
    return [None if s is None else s.reasons for s in statuses]


def zoned() -> list[Node]:
    return [node("a1", labels={"zone": "a"}), node("a2", labels={"zone": "a"}), node("b1", labels={"zone": "b"}),
            node("c1")]


def rejected_by(plugin: str, p: Pod) -> tuple[Any, str]:
    """A queue holding ``p`` in unschedulablePods as rejected by ``plugin``, and its uid: the real path
    an event takes to move it (a plugin's queueing hint says Queue) or not (QueueSkip)."""
    s, _ = make_scheduler()
    s.queue.add(p)
    info = s.queue.pop(0)
    assert info is not None
    info.unschedulable_plugins = {plugin}
    s.queue.add_unschedulable_if_not_present(info)
    return s.queue, info.uid


def node_event(old: object, new: object) -> Any:
    """The event the service reports for a node change (``service.node_change``'s actions); an object
    that is not a node (a hint must treat it as an error) gets Add or UpdateNodeTaint."""
    from scheduler.framework import ClusterEvent
    from scheduler.service import node_change
    if isinstance(new, Node) and (old is None or isinstance(old, Node)):
        return ClusterEvent("Node", node_change(old, new), old=old, new=new)
    return ClusterEvent("Node", "Add" if old is None else "UpdateNodeTaint", old=old, new=new)
