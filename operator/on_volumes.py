"""PersistentVolumes, PersistentVolumeClaims, StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities: the storage objects the volume plugins read (upstream's storage listers).

Read only here, and handed whole to the service (``SchedulerService.on_volume_object``), which keeps
them in its VolumeStore, the plugins' assume cache, and moves the pods whose rejection the event may
resolve. The scheduler's own writes (a PV's ``claimRef``, a claim's selected node) go through its
client during PreBind, and come back through these watches as the PV controller completes them.
"""

from typing import Any

import kopf


def _forward(kind: str, event: kopf.RawEvent, memo: kopf.Memo) -> None:
    # Kopf's initial listing has no type: each listed object is an ADDED.
    memo.service.on_volume_object(kind, event.get("type") or "ADDED", event["object"])


@kopf.on.event("v1", "persistentvolumes")
async def persistent_volume_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("PersistentVolume", event, memo)


@kopf.on.event("v1", "persistentvolumeclaims")
async def persistent_volume_claim_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("PersistentVolumeClaim", event, memo)


@kopf.on.event("storage.k8s.io", "v1", "storageclasses")
async def storage_class_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("StorageClass", event, memo)


@kopf.on.event("storage.k8s.io", "v1", "csinodes")
async def csi_node_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("CSINode", event, memo)


@kopf.on.event("storage.k8s.io", "v1", "csidrivers")
async def csi_driver_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("CSIDriver", event, memo)


@kopf.on.event("storage.k8s.io", "v1", "csistoragecapacities")
async def csi_storage_capacity_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    _forward("CSIStorageCapacity", event, memo)
