"""VolumeRestrictions: volumes two pods may not share (upstream's ``volumerestrictions``).

Two checks, as upstream's:

* **ReadWriteOncePod.** PreFilter looks up each ``persistentVolumeClaim`` of the pod (a missing
  claim is UnschedulableAndUnresolvable with the lister's NotFound text) and keeps the ones whose
  access modes include ReadWriteOncePod; it counts how many of those a placed pod already uses
  (``Snapshot.pvc_in_use``, upstream's ``StorageInfos().IsPVCUsedByPods``). Any use makes Filter
  Unschedulable on every node, with a reason preemption can act on: the cache's claim counts
  follow preemption's what-if moves, and PreFilter reads other pods, so the framework runs it
  again on a node whose pods changed (``Framework._filter_refreshed``, upstream's
  AddPod/RemovePod), and evicting the user of the claim frees the node.
* **In-tree disks.** For each of the pod's ``gcePersistentDisk``, ``awsElasticBlockStore``,
  ``rbd`` and ``iscsi`` volumes, a pod on the node using the same disk conflicts (GCE PD, iSCSI
  and RBD unless both mount it read-only; EBS always): Unschedulable, ``node(s) had no available
  disk``. Only the node's pods are read, one row at a time; the loop runs only for the rare pod
  with such a volume.

PreFilter returns Skip when the pod has neither kind of volume to check, as upstream.

Not node-local (``NodeLocalFilter``): the ReadWriteOncePod verdict depends on pods on any node.

EnqueueExtensions, as upstream with queueing hints: Pod/Delete (``is_schedulable_after_pod_deleted``),
Node/Add (no hint) and PersistentVolumeClaim/Add (``is_schedulable_after_pvc_added``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.cache.volumes import VolumeStore, not_found
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import SignFragment, volumes_fragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod, PodVolume
from scheduler.model.volumes import READ_WRITE_ONCE_POD, PersistentVolumeClaim, RBDImage

NAME = "VolumeRestrictions"
ERR_REASON_DISK_CONFLICT = "node(s) had no available disk"
ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode")
_PRE_FILTER_KEY = "PreFilter" + NAME
_DISK_CONFLICT = Status.unschedulable(ERR_REASON_DISK_CONFLICT)
_RWOP_CONFLICT = Status.unschedulable(ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
_SKIP = Status(Code.SKIP)


@dataclass(frozen=True, slots=True)
class _State:
    """upstream's ``preFilterState``: the pod's ReadWriteOncePod claims, and how many placed pods use them."""

    rwop_claims: frozenset[str]
    conflicting_refs: int


class VolumeRestrictions:
    """Upstream's ``volumerestrictions.VolumeRestrictions``: PreFilter, Filter, EnqueueExtensions."""

    name = NAME

    def __init__(self, volumes: VolumeStore | None = None) -> None:
        self._volumes = volumes

    def _claim(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        return None if self._volumes is None else self._volumes.pvc(namespace, name)

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with volumes has no signature (``signature.volumes_fragment``)."""
        return volumes_fragment(pod)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        needs_check = any(v.needs_restrictions_check for v in pod.volumes)
        rwop: set[str] = set()
        for v in pod.volumes:
            if v.claim_name is None:
                continue
            pvc = self._claim(pod.namespace, v.claim_name)
            if pvc is None:
                return None, Status.unresolvable(not_found("PersistentVolumeClaim", v.claim_name))
            if READ_WRITE_ONCE_POD in pvc.access_modes:
                rwop.add(pvc.name)
        # At most one pod may use a ReadWriteOncePod claim, so each claim counts once.
        refs = sum(1 for c in rwop if snapshot.pvc_in_use(pod.namespace, c))
        if not needs_check and refs == 0:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, _State(frozenset(rwop), refs))
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        disks = [v for v in pod.volumes if v.needs_restrictions_check]
        if disks:
            infos = snapshot.table.infos
            failed = np.fromiter((_disk_conflict(disks, info.pods.values()) if (info := infos[r]) is not None
                                  else False for r in rows.tolist()), np.bool_, len(rows))
        else:
            failed = np.zeros(len(rows), np.bool_)
        s = state.get(_PRE_FILTER_KEY)
        if not isinstance(s, _State):
            # Filter without PreFilter (explain, a plugin table): upstream's Filter would be an
            # Error; the verdict PreFilter leads to is better, and cheap to compute.
            fresh = CycleState()
            _, status = self.pre_filter(fresh, pod, snapshot)
            if status.is_rejected() or status.code == Code.ERROR:
                return fwk.FilterVerdict.uniform(np.ones(len(rows), np.bool_), status)
            got = fresh.get(_PRE_FILTER_KEY)
            s = got if isinstance(got, _State) else _State(frozenset(), 0)
        # Upstream checks the disks first: a row with a disk conflict reports that reason.
        if s.conflicting_refs > 0:
            ids = np.where(failed, 0, 1).astype(np.int64)
            return fwk.FilterVerdict(np.ones(len(rows), np.bool_), [_DISK_CONFLICT, _RWOP_CONFLICT], ids)
        return fwk.FilterVerdict(failed, [_DISK_CONFLICT], np.zeros(len(rows), np.int64))

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "Delete"), is_schedulable_after_pod_deleted),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolumeClaim", "Add"),
                                         is_schedulable_after_pvc_added))


def is_volume_conflict(volume: PodVolume, other: Pod) -> bool:
    """Upstream's ``isVolumeConflict``: ``volume`` and one of ``other``'s volumes are the same disk."""
    return any(_same_disk(volume, ev) for ev in other.volumes)


def _same_disk(volume: PodVolume, ev: PodVolume) -> bool:
    """The GCE PD, AWS EBS, iSCSI or RBD disk of both, written by at least one of them."""
    g, eg = volume.gce_pd, ev.gce_pd
    if g is not None and eg is not None and g.handle == eg.handle and not (g.read_only and eg.read_only):
        return True
    if volume.aws_ebs is not None and ev.aws_ebs is not None and volume.aws_ebs.handle == ev.aws_ebs.handle:
        return True
    if (volume.iscsi_iqn is not None and volume.iscsi_iqn == ev.iscsi_iqn
            and not (volume.iscsi_read_only and ev.iscsi_read_only)):
        return True
    return _same_rbd(volume.rbd, ev.rbd)


def _same_rbd(a: RBDImage | None, b: RBDImage | None) -> bool:
    return (a is not None and b is not None and not a.monitors.isdisjoint(b.monitors) and a.pool == b.pool
            and a.image == b.image and not (a.read_only and b.read_only))


def _disk_conflict(disks: Sequence[PodVolume], pods: Iterable[Pod]) -> bool:
    """Upstream's ``satisfyVolumeConflicts``, negated."""
    return any(is_volume_conflict(v, other) for other in pods for v in disks)


def is_schedulable_after_pod_deleted(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPodDeleted``: Queue when the deleted pod (same namespace) had a
    disk the pod conflicts with, or uses one of the pod's claims (a ReadWriteOncePod one, maybe:
    upstream does not fetch the claim to tell). Raises ``TypeError`` for a non-pod (Queue)."""
    deleted = event.old
    if not isinstance(deleted, Pod):
        raise TypeError(f"expected a deleted pod, got {type(deleted).__name__}")
    if deleted.namespace != pod.namespace:
        return False
    if any(is_volume_conflict(v, deleted) for v in pod.volumes if v.needs_restrictions_check):
        return True
    return not set(pod.claim_names).isdisjoint(deleted.claim_names)


def is_schedulable_after_pvc_added(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPersistentVolumeClaimAdded``: Queue when the pod refers to the
    new claim (same namespace and name). Raises ``TypeError`` for a non-claim (Queue)."""
    pvc = event.new
    if not isinstance(pvc, PersistentVolumeClaim):
        raise TypeError(f"expected a PersistentVolumeClaim, got {type(pvc).__name__}")
    return pvc.namespace == pod.namespace and pvc.name in pod.claim_names


def new(args: None, handle: Handle) -> VolumeRestrictions:
    return VolumeRestrictions(handle.volumes)


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = VolumeRestrictions
    __: type[fwk.PreFilterPlugin] = VolumeRestrictions
    ___: type[fwk.EnqueueExtensions] = VolumeRestrictions
