"""``bench --mode core``'s stand-in for the API (``core.py`` is the overview): ``SinkClient``.

A bind is confirmed at once by feeding the bound pod back through ``on_pod("MODIFIED")``, a preemption
victim as ``DELETED``; events and status writes are counted and dropped; PVs, claims and CSINodes
enter through ``add_volume_object`` and the client is the PV controller (``bind_volume``,
``select_node``); DRA objects enter through ``add_dra_object``, and DynamicResources' claim writes
land in ``claims`` with resourceVersions and are fed back as the informer's events. ``pod_objects``
makes the pods a run feeds it, from upstream's templates; ``wait_until`` polls its state.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import orjson

from scheduler.benchmark.templates import template
from scheduler.model import Pod
from scheduler.model.dra import FINALIZER, AllocationResult, ConsumerRef, ResourceClaim, parse_resource_claim
from scheduler.model.podgroup import PodGroup
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
from scheduler.service import SchedulerService

__all__ = ["SinkClient", "pod_objects", "wait_until"]

Obj = dict[str, Any]


def pod_objects(tmpl: str, namespace: str, count: int, start: int = 0, tag: str = "") -> Iterator[Obj]:
    """``count`` pods from upstream template ``tmpl`` (named as generateName would, uids unique)."""
    base = template(tmpl)
    prefix = base["metadata"]["generateName"]
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    # Each pod a fresh copy, decoded from the template's JSON: 1.5 us where copy.deepcopy took 10
    # (end to end, the driver that builds them shares the two cores with what it measures).
    encoded = orjson.dumps(base)
    for i in range(start, start + count):
        name = f"{prefix}{tag}{i}"
        obj = orjson.loads(encoded)
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


async def wait_until(pred: Any, limit: float, interval: float = 0.005) -> bool:
    """Poll ``pred`` every ``interval`` s for at most ``limit`` s; whether it came true."""
    deadline = time.monotonic() + limit
    while not pred():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(interval)
    return True
