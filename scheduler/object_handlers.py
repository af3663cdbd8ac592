"""The service's watch-event handlers for the low-rate kinds: PodDisruptionBudgets, the selector
owners (Services, ReplicationControllers, ReplicaSets, StatefulSets), the storage kinds, PodGroups,
the DRA kinds and Namespaces.

``ObjectHandlers`` is a mixin of ``service.SchedulerService``, which owns every store named below
and builds them in its ``__init__``; the class here only declares them for the type checker. The
split follows the event rate: pods and nodes (``on_pod``, ``on_node``, whose handling time is
measured per event) stay with the service, beside the queue and cache bookkeeping they drive; the
kinds here change seldom, and each handler has the same shape: update the store the plugins read,
then move the pods whose rejector plugins registered the kind, with the objects before and after
for the plugins' queueing hints (upstream's ``eventhandlers.go``, ``addAllEventHandlers``).

Every handler runs under the cache's lock (``_serialized``), as the scheduling cycle does, so a
cycle on the extender-cycle thread never sees half an event.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

from scheduler.cache import Cache
from scheduler.cache.dra import DraStore
from scheduler.cache.podgroups import PodGroupStore
from scheduler.cache.selector_owners import SelectorOwners
from scheduler.cache.volumes import VolumeStore
from scheduler.framework.types import ClusterEvent
from scheduler.model import PodDisruptionBudget, parse_pdb
from scheduler.model.devicetaintrules import DeviceTaintRule
from scheduler.queue import SchedulingQueue

__all__ = ["ObjectHandlers"]

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S", bound="ObjectHandlers")

# The service's logger: these handlers log as the service always has.
log = logging.getLogger("kopf_scheduler")


def _serialized(handler: Callable[Concatenate[S, P], R]
                ) -> Callable[Concatenate[S, P], R]:
    """An event handler that runs under the cache's lock, as the scheduling cycle does: the stores it
    writes (claims, volumes, PDBs, selectors) are read by a cycle on the extender-cycle thread
    (``_schedule_off_loop``), which must see each event whole. A cycle on the worker's loop never
    overlaps a handler anyway; there the lock costs an uncontended acquire."""
    def locked(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with self.cache.lock:
            return handler(self, *args, **kwargs)
    functools.update_wrapper(locked, handler)
    return locked


class ObjectHandlers:
    """The low-rate kinds' watch-event handlers, mixed into ``SchedulerService`` (which sets every
    attribute declared here in its ``__init__``)."""

    cache: Cache
    queue: SchedulingQueue
    selector_owners: SelectorOwners
    volumes: VolumeStore
    dra: DraStore
    pod_groups: PodGroupStore
    _pdbs: dict[str, PodDisruptionBudget]
    _pdb_list: tuple[PodDisruptionBudget, ...]

    @_serialized
    def on_pdb(self, event: str, body: Mapping[str, Any]) -> None:
        """A PodDisruptionBudget watch event; a malformed one is logged and protects nothing."""
        pdb = parse_pdb(body)
        if event == "DELETED":
            self._pdbs.pop(pdb.key, None)
        else:
            old = self._pdbs.get(pdb.key)
            if pdb.problem and (old is None or old.problem != pdb.problem):
                log.warning("%s", pdb.problem)
            self._pdbs[pdb.key] = pdb
        self._pdb_list = tuple(self._pdbs.values())

    @_serialized
    def on_selector_owner(self, kind: str, event: str, body: Mapping[str, Any]) -> None:
        """A Service, ReplicationController, ReplicaSet or StatefulSet watch event. When the
        selectors a default spread constraint reads change, the pods a plugin rejected and that
        registered the kind (PodTopologySpread) are moved, as upstream requeues on these kinds."""
        if self.selector_owners.on_event(kind, event, body):
            action = {"ADDED": "Add", "DELETED": "Delete"}.get(event, "Update")
            self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, frozenset({action}),
                                                                  label=f"{kind}{action}"))

    @_serialized
    def on_volume_object(self, kind: str, event: str, body: Mapping[str, Any]) -> None:
        """A PersistentVolume, PersistentVolumeClaim, StorageClass, CSINode, CSIDriver or
        CSIStorageCapacity watch event (``cache.volumes.KINDS``): the store is updated, and the pods
        a plugin rejected that registered the kind are moved, with the objects before and after for
        the plugins' queueing hints."""
        old: Any = None
        meta = body.get("metadata") or {}
        name = str(meta.get("name") or "")
        if kind == "PersistentVolumeClaim":
            old = self.volumes.pvc(str(meta.get("namespace") or "default"), name)
        elif kind == "PersistentVolume":
            old = self.volumes.pv(name)
        elif kind == "StorageClass":
            old = self.volumes.storage_class(name)
        elif kind == "CSINode":
            old = self.volumes.csi_node(name)
        elif kind == "CSIDriver":
            old = self.volumes.csi_driver(name)
        elif kind == "CSIStorageCapacity":
            old = self.volumes.capacity(str(meta.get("namespace") or ""), name)
        new = self.volumes.on_event(kind, event, body)
        if new is None and event != "DELETED":
            # The store dropped it: it reads as absent, and the plugins say so in the pods' reasons.
            log.warning("%s %s cannot be read and is treated as absent", kind,
                        f"{meta.get('namespace')}/{name}" if meta.get("namespace") else name)
        action = "Delete" if event == "DELETED" else "Add" if old is None else "Update"
        self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, frozenset({action}), old=old, new=new,
                                                              label=f"{kind}{action}"))

    def _assumed_claim_changed(self, old: Any, new: Any) -> None:
        """PreBind assumed a written claim, or an assumption was undone: an update event, as
        upstream's assume cache sends one. A pod rejected because the claim was being allocated
        (a shared claim) is moved then; the informer's echo of the same write compares the claim
        with itself and moves nothing."""
        self.queue.move_all_to_active_or_backoff(ClusterEvent("ResourceClaim", frozenset({"Update"}), old=old,
                                                              new=new, label="ResourceClaimUpdate"))

    @_serialized
    def on_pod_group(self, event: str, body: Mapping[str, Any]) -> None:
        """A PodGroup watch event (``scheduling.k8s.io/v1beta1``, with the GenericWorkload gate): the
        store that ``Handle.pod_groups`` reads is updated. A group that cannot be read is logged and
        reads as absent. The pods GangScheduling gated are moved (its hints decide which)."""
        meta = body.get("metadata") or {}
        old = self.pod_groups.get(str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        new = self.pod_groups.on_event(event, body)
        if new is None and event != "DELETED":
            log.warning("PodGroup %s/%s cannot be read and is treated as absent", meta.get("namespace"),
                        meta.get("name"))
        if new is None:
            return
        # GangScheduling's events: a PodGroup added, or updated (its hint: minCount lowered).
        action = "Add" if old is None else "Update"
        self.queue.move_all_to_active_or_backoff(ClusterEvent("PodGroup", frozenset({action}), old=old, new=new,
                                                              label=f"PodGroup{action}"))

    @_serialized
    def on_dra_object(self, kind: str, event: str, body: Mapping[str, Any]) -> None:
        """A DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice or DeviceTaintRule watch event
        (``cache.dra.KINDS``; ``event`` ADDED, MODIFIED or DELETED): the store is updated (the
        informer's object replaces any claim PreBind assumed), and the pods a plugin rejected that
        registered the kind are moved, with the objects before and after for the queueing hints
        (DynamicResources': a claim's creation or status change, a deallocation). An object that
        cannot be read is logged and reads as absent."""
        meta = body.get("metadata") or {}
        name = str(meta.get("name") or "")
        namespace = str(meta.get("namespace") or "default")
        old: Any = None
        if kind == "ResourceClaim":
            old = self.dra.claim(namespace, name)      # as the assume cache's handlers see it
        elif kind == "ResourceClaimTemplate":
            old = self.dra.template(namespace, name)
        elif kind == "DeviceClass":
            old = self.dra.device_class(name)
        elif kind == "ResourceSlice":
            old = self.dra.slice(name)
        elif kind == "DeviceTaintRule":
            old = self.dra.taint_rule(name)
        new = self.dra.on_event(kind, event, body)
        if new is None and event != "DELETED":
            log.warning("%s %s cannot be read and is treated as absent", kind,
                        f"{namespace}/{name}" if kind in ("ResourceClaim", "ResourceClaimTemplate") else name)
        if kind == "DeviceTaintRule":
            # Upstream's scheduler sees a rule only through the slices it patches (the
            # resourceslice tracker): a rule that changes some device's taints is a ResourceSlice
            # update for the queue, one that selects nothing no event at all.
            if self.dra.rule_touches(old) or (isinstance(new, DeviceTaintRule) and self.dra.rule_touches(new)):
                self.queue.move_all_to_active_or_backoff(ClusterEvent("ResourceSlice", frozenset({"Update"}),
                                                                      label="ResourceSliceUpdate"))
            return
        action = "Delete" if event == "DELETED" or new is None else "Add" if old is None else "Update"
        self.queue.move_all_to_active_or_backoff(ClusterEvent(kind, frozenset({action}), old=old, new=new,
                                                              label=f"{kind}{action}"))

    @_serialized
    def on_namespace(self, event: str, body: Mapping[str, Any]) -> None:
        meta = body.get("metadata") or {}
        if event == "DELETED":
            self.cache.remove_namespace(str(meta.get("name", "")))
        else:
            self.cache.set_namespace(str(meta.get("name", "")), dict(meta.get("labels") or {}))
