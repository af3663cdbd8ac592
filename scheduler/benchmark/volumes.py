"""scheduler_perf's volume workloads: each pod's own pre-bound PersistentVolume and claim, and
the nodes' CSINodes (``workloads.py`` is the overview).

**Volumes** (upstream's ``volumes/performance-config.yaml`` and ``misc/``'s PreemptionPVs): a workload
with ``volumes`` gives each of its pods its own PersistentVolume, pre-bound to its own claim, as
``createPods`` with ``persistentVolumeTemplatePath`` does (``test/utils/runners.go``'s
``CreatePodWithPersistentVolume`` with ``bindVolume``): pod ``i`` of namespace ``ns`` mounts the claim
``pvc-i`` (``templates/pvc.yaml``: ReadOnlyMany, 1Gi, ``pv.kubernetes.io/bind-completed``,
``spec.volumeName`` set, phase Bound), bound to the PV ``ns-vol-i`` (the PV template with ``claimRef``
to ``pvc-i``, phase Bound; PVs are cluster-wide, hence the namespace prefix). The PV template's source
is ``templates/pv-aws.yaml`` (``awsElasticBlockStore`` volume ``vol-i``) or ``pv-csi.yaml``
(``ebs.csi.aws.com``, handle ``ns-vol-i``); neither has node affinity. ``nodeAllocatableStrategy``
(``node_strategy``) adds an allocatable to every node and creates its CSINode, with each driver's
``allocatable.count`` and the ``storage.alpha.kubernetes.io/migrated-plugins`` annotation.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["VOLUME_TEMPLATES", "NodeAllocatable", "Volumes", "csi_node", "volume_objects", "with_claim"]

Obj = dict[str, Any]


# --- volumes ---------------------------------------------------------------------------------------

EBS_CSI = "ebs.csi.aws.com"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
# upstream's templates/pv-aws.yaml, pv-csi.yaml and pvc.yaml
VOLUME_TEMPLATES: dict[str, Obj] = {
    "pv-aws": {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
        "accessModes": ["ReadOnlyMany"], "awsElasticBlockStore": {"volumeID": "<volume-id>"},
        "capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain"}},
    "pv-csi": {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
        "accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"}, "csi": {"driver": EBS_CSI},
        "persistentVolumeReclaimPolicy": "Retain"}},
    "pvc": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
            "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}},
}


@dataclass(frozen=True)
class Volumes:
    """``persistentVolumeTemplatePath`` / ``persistentVolumeClaimTemplatePath`` of the workload's
    ``createPods`` ops: ``init`` whether the init pods have them too (PreemptionPVs: measured only)."""

    pv: str
    pvc: str = "pvc"
    init: bool = True


@dataclass(frozen=True)
class NodeAllocatable:
    """upstream's ``nodeAllocatableStrategy``: ``node_allocatable`` added to each node's allocatable,
    and a CSINode per node with ``csi_allocatable`` (driver -> count) and ``migrated_plugins``."""

    node_allocatable: tuple[tuple[str, str], ...]
    csi_allocatable: tuple[tuple[str, int], ...]
    migrated_plugins: tuple[str, ...] = ()


def csi_node(node_name: str, strategy: NodeAllocatable) -> Obj:
    """The CSINode ``NodeAllocatableStrategy.createCSINode`` creates for ``node_name``."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node_name, "annotations": {MIGRATED_PLUGINS: ",".join(strategy.migrated_plugins)}},
            "spec": {"drivers": [{"name": driver, "nodeID": node_name, "allocatable": {"count": count}}
                                 for driver, count in strategy.csi_allocatable]}}


def volume_objects(volumes: Volumes, namespace: str, i: int) -> tuple[Obj, Obj]:
    """Pod ``i``'s claim and PV, bound to each other (``CreatePodWithPersistentVolume`` with
    ``bindVolume``; the PV template's factory names it ``vol-i``, and the namespace prefixes it)."""
    claim_name, volume_id = f"pvc-{i}", f"vol-{i}"
    pv_name = f"{namespace}-{volume_id}"
    pvc = copy.deepcopy(VOLUME_TEMPLATES[volumes.pvc])
    pvc["metadata"] = {**pvc.get("metadata", {}), "name": claim_name, "namespace": namespace}
    pvc["spec"]["volumeName"] = pv_name
    pvc["status"] = {"phase": "Bound"}
    pv = copy.deepcopy(VOLUME_TEMPLATES[volumes.pv])
    pv["metadata"] = {**pv.get("metadata", {}), "name": pv_name}
    spec = pv["spec"]
    if "awsElasticBlockStore" in spec:
        spec["awsElasticBlockStore"]["volumeID"] = volume_id
    if "csi" in spec:
        spec["csi"]["volumeHandle"] = pv_name
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim_name,
                        "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    return pvc, pv


def with_claim(pod: Obj, i: int) -> Obj:
    """Pod ``i`` mounting its claim ``pvc-i`` as the volume ``vol`` (the template's volumes replaced)."""
    pod["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
    return pod
