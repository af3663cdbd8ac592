"""Helpers for the volume plugins' tables: storage objects as API JSON (upstream's tf listers and
``st.MakePersistentVolume``/``MakePersistentVolumeClaim``), a ``VolumeStore`` holding them, and a
runner that calls a plugin's PreFilter then Filter on one node, as upstream's table loops do."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from scheduler.cache import Cache, VolumeStore
from scheduler.framework import CycleState, Status
from scheduler.framework.status import Code
from scheduler.model import Node, Pod
from tests.st import MakeNode

Want = tuple[Code, str] | None


def pvc(name: str, namespace: str = "default", *, volume_name: str = "", storage_class: str | None = None,
        access_modes: list[str] | None = None, owner_uid: str = "", owner_name: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if volume_name:
        spec["volumeName"] = volume_name
    if storage_class is not None:
        spec["storageClassName"] = storage_class
    if access_modes:
        spec["accessModes"] = list(access_modes)
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if volume_name:     # a bound claim, as the PV controller leaves it (VolumeBinding reads it so)
        meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": owner_name, "uid": owner_uid,
                                    "controller": True}]
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def pv(name: str, labels: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {"kind": "PersistentVolume", "metadata": {"name": name, "labels": dict(labels or {})}, "spec": spec}


def storage_class(name: str, provisioner: str = "", mode: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": provisioner}
    if mode is not None:
        body["volumeBindingMode"] = mode
    return body


def store(*objects: dict[str, Any]) -> VolumeStore:
    s = VolumeStore()
    for o in objects:
        got = s.on_event(o["kind"], "ADDED", o)
        assert got is not None, o
    return s


def status(s: Status | None) -> Want:
    """A status as ``(code, message)``; ``None`` for success (upstream's nil Status)."""
    if s is None or s.is_success():
        return None
    return (s.code, s.message())


def _uid(p: Pod, fallback: str) -> str:
    """The pod's own uid if the table set one (ephemeral claims are owned by it), else ``fallback``."""
    return p.uid if p.uid != f"{p.namespace}/{p.name}" else fallback


def run(plugin: Any, pod: Pod, node: Node, node_pods: list[Pod] = (),  # type: ignore[assignment]
        cluster_pods: list[Pod] = ()) -> tuple[Want, Want]:  # type: ignore[assignment]
    """PreFilter, then (unless it did not succeed) Filter on ``node``; both as ``status()``.
    ``node_pods`` are placed on ``node``; ``cluster_pods`` on a second node, ``other-node``."""
    cache = Cache()
    cache.add_node(node)
    # Upstream's NodeInfo takes pods as they are; ours places them by nodeName and keys them by uid,
    # and the tables' pods often have neither (or share a name).
    for i, p in enumerate(node_pods):
        cache.add_pod(replace(p, node_name=node.name, uid=_uid(p, f"node-pod-{i}")))
    if cluster_pods:
        cache.add_node(MakeNode().Name("other-node").Obj())
        for i, p in enumerate(cluster_pods):
            cache.add_pod(replace(p, node_name="other-node", uid=_uid(p, f"cluster-pod-{i}")))
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        _, pre = plugin.pre_filter(state, pod, snap)
        if not pre.is_success():
            return status(pre), None
        row = snap.row_of(node.name)
        v = plugin.filter_nodes(state, pod, snap, np.array([row], np.int64))
        if not v.failed[0]:
            return None, None
        return None, status(v.statuses[0 if v.status_ids is None else int(v.status_ids[0])])


def pv_controller(client: Any, volumes: VolumeStore, *, provision: bool = True) -> None:
    """Make the test client also the PV controller and a provisioner, as the watch would show
    them: after PreBind's ``bind_volume`` the store gets the PV with its claimRef and the claim
    bound to it (``pv.kubernetes.io/bind-completed``); after ``select_node`` (with ``provision``)
    a PV with node affinity to the node, bound to the claim. Claims without a uid get one, as the
    API server gives every object one."""
    from scheduler.model import NodeSelector, NodeSelectorTerm, Requirement
    from scheduler.model.volumes import PersistentVolume

    recorded_bind, recorded_select = client.bind_volume, client.select_node

    def bind(pv: PersistentVolume, claim: Any) -> None:
        uid = claim.uid or f"uid-{claim.name}"
        volumes.upsert(replace(pv, claim_ref=(claim.namespace, claim.name, uid), phase="Bound"))
        current = volumes.api_pvc(claim.namespace, claim.name) or claim
        volumes.upsert(replace(current, uid=uid, volume_name=pv.name, phase="Bound",
                               annotations={**current.annotations, "pv.kubernetes.io/bind-completed": "yes"}))

    async def bind_volume(pv: PersistentVolume, claim: Any) -> None:
        await recorded_bind(pv, claim)
        bind(pv, claim)

    async def select_node(claim: Any, node_name: str) -> None:
        await recorded_select(claim, node_name)
        current = volumes.api_pvc(claim.namespace, claim.name) or claim
        annotated = replace(current, annotations={**current.annotations,
                                                  "volume.kubernetes.io/selected-node": node_name})
        volumes.upsert(annotated)
        if provision:
            affinity = NodeSelector((NodeSelectorTerm(
                (Requirement("kubernetes.io/hostname", "In", frozenset({node_name})),)),))
            bind(PersistentVolume(f"pvc-{claim.name}", capacity=claim.request, access_modes=claim.access_modes,
                                  storage_class=claim.storage_class, node_affinity=affinity), annotated)

    client.bind_volume, client.select_node = bind_volume, select_node
