"""NodeVolumeLimits: the CSI attach limits a node publishes (upstream's ``nodevolumelimits.CSILimits``).

A node's limits are its CSINode's ``spec.drivers[].allocatable.count``, per driver. A node without a
CSINode, or whose drivers publish no count, has no limit. For a pod with volumes that can attach
(PVCs, generic ephemeral volumes, inline in-tree disks that migrate to CSI), Filter counts, per
driver, the distinct volumes the node's pods already use plus the new pod's volumes not among them,
and rejects the node when a count goes over its limit: Unschedulable, ``node(s) exceed max volume
count`` (preemption can free a slot).

A volume is identified as upstream identifies it, ``<driver>/<volume handle>``:

* a bound claim: its PV's ``csi`` driver and handle; an in-tree PV (``awsElasticBlockStore``,
  ``gcePersistentDisk``, ``azureDisk``) translated as csi-translation-lib does once the node has a
  CSINode (those three migrations are GA, so ``isCSIMigrationOn`` needs no annotation for them);
  any other source is not counted;
* an unbound claim, or one whose PV is missing: its class's provisioner (an in-tree one translated
  to its CSI driver) and a handle unique to the claim, ``<random prefix>-<namespace>/<claim>``; a
  claim without a class, or whose class is missing, is not counted;
* a generic ephemeral volume: the claim ``<pod>-<volume>``, which must be controlled by the pod
  (else an Error, as ``ephemeral.VolumeIsForPod``);
* an inline in-tree disk: translated the same way.

The new pod's claims must exist (a missing one is UnschedulableAndUnresolvable, with the lookup's
text); an existing pod's missing claim is not counted.

**Columns.** The per-node state lives in ``attach_counts.AttachCounts``: each node's limits per
driver (parsed once per CSINode change) and its distinct attached volumes per driver (recounted only
for the rows whose pods, or whose pods' claims, PVs or classes, changed). So Filter computes the
new pod's volumes at most twice (nodes with and without a CSINode), then makes one vector
comparison per driver of them over the candidate rows: ``attached + new not yet attached >
limit``, the "not yet attached" found through the index of rows holding each volume. At 5,000
nodes this took the Filter from about 14 ms a cycle (a Python pass over every candidate node's
pods) to a fraction of a millisecond (docs/benchmarks.md).

**VolumeLimitScaling** (KEP-5030; beta and on in 1.37, kubernetes/kubernetes#135012 and #140612):
before the limits, a node whose CSINode does not list a driver of the pod's new volumes, where that
driver's CSIDriver sets ``preventPodSchedulingIfMissing: true``, or that has no CSINode at all, is
rejected: Unschedulable, ``<driver> CSI driver is not installed on the node`` (the text upstream's
e2e ``csi_node_aware`` test waits for). A driver without a CSIDriver object, or that does not opt
in, keeps the old rule (no CSINode entry: no limit). ``--feature-gates VolumeLimitScaling=false``
turns the check off.

**Left out, with reasons.** Upstream (1.35+) also counts VolumeAttachments already on the node:
they are not in the volume store (no plugin here reads them yet). Inline and PV ``cinder`` and
``portworxVolume`` sources are not modelled (``model.volumes``), so they are never counted.

EnqueueExtensions, as upstream: CSINode/Add (no hint), CSINode/Update (Queue when a driver's
attach limit grew or went away: ``is_schedulable_after_csi_node_updated``, after upstream's
``isSchedulableAfterCSINodeUpdated`` as its package guide describes it; its source was not at hand),
Pod/Delete (Queue when the deleted, assigned pod had a volume that can attach),
PersistentVolumeClaim/Add (Queue when the pod uses the claim, ephemeral claims included).
VolumeAttachment/Delete is not registered: the store holds no VolumeAttachments (above).
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler import features
from scheduler.cache import Snapshot
from scheduler.cache.node_table import BoolArray, IntArray
from scheduler.cache.volumes import ObjectKey, VolumeStore, not_found
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import SignFragment, volumes_fragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.volumes import (
    AWS_EBS_PLUGIN,
    AZURE_DISK_PLUGIN,
    GCE_PD_PLUGIN,
    CSINode,
    InTreeDisk,
    PersistentVolume,
    PersistentVolumeClaim,
)
from scheduler.plugins.attach_counts import AttachCounts, Volumes

NAME = "NodeVolumeLimits"
ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED = "node(s) exceed max volume count"
GATE_VOLUME_LIMIT_SCALING = "VolumeLimitScaling"


def driver_not_installed(driver: str) -> str:
    """VolumeLimitScaling's reason for a node without an opted-in driver."""
    return f"{driver} CSI driver is not installed on the node"
_EXCEEDED = Status.unschedulable(ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED)
_SKIP = Status(Code.SKIP)

# csi-translation-lib: in-tree plugin -> CSI driver, for the sources modelled here.
CSI_DRIVER_OF = {
    AWS_EBS_PLUGIN: "ebs.csi.aws.com",
    GCE_PD_PLUGIN: "pd.csi.storage.gke.io",
    AZURE_DISK_PLUGIN: "disk.csi.azure.com",
}
_AWS_VOLUME_ID = re.compile(r"^vol-[^/]*$")
_GCE_ZONE_LABELS = ("topology.kubernetes.io/zone", "failure-domain.beta.kubernetes.io/zone")



class VolumeError(Exception):
    """upstream's ``filterAttachableVolumes`` errors; ``not_found`` marks a missing claim."""

    def __init__(self, message: str, *, not_found: bool = False) -> None:
        super().__init__(message)
        self.not_found = not_found


def translated_handle(disk: InTreeDisk, pv: PersistentVolume | None = None) -> str:
    """The CSI volume handle csi-translation-lib gives an in-tree disk (inline, or a PV's source).
    Raises ``ValueError`` where the translation fails."""
    if disk.plugin == AWS_EBS_PLUGIN:
        # KubernetesVolumeIDToEBSVolumeID: "aws://<zone>/<vol-id>" or a bare "vol-..." id.
        if not disk.handle.startswith("aws://"):
            return disk.handle
        vol = disk.handle[len("aws://"):].split("/", 1)[-1].strip("/")
        if not _AWS_VOLUME_ID.match(vol):
            raise ValueError(f"Invalid format for AWS volume ({disk.handle})")
        return vol
    if disk.plugin == GCE_PD_PLUGIN:
        zones = next((pv.labels[k] for k in _GCE_ZONE_LABELS if pv is not None and k in pv.labels), "")
        zone_list = [z for z in zones.split("__") if z]
        if len(zone_list) > 1:   # a regional disk
            region = zone_list[0].rsplit("-", 1)[0]
            return f"projects/UNSPECIFIED/regions/{region}/disks/{disk.handle}"
        return f"projects/UNSPECIFIED/zones/{zone_list[0] if zone_list else 'UNSPECIFIED'}/disks/{disk.handle}"
    return disk.handle   # azureDisk: the disk URI


def is_csi_migration_on(has_csi: bool, plugin: str) -> bool:
    """Upstream's ``isCSIMigrationOn`` for the modelled plugins: their migrations are GA and locked
    on, so a CSINode (``has_csi``: the node has one) is all it takes."""
    return has_csi and plugin in CSI_DRIVER_OF


class NodeVolumeLimits:
    """Upstream's ``nodevolumelimits.CSILimits``: PreFilter, Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: reads the node's CSINode and its pods
    pre_filter_reads_pods = False   # PodReadingPreFilter: reads only the pod

    def __init__(self, volumes: VolumeStore | None = None, *, random_prefix: str | None = None,
                 volume_limit_scaling: bool = True) -> None:
        self._volumes = volumes if volumes is not None else VolumeStore()   # an empty store is falsy
        self._volume_limit_scaling = volume_limit_scaling
        # upstream's randomVolumeIDPrefix: handles of unbound claims never collide with real ones.
        self._prefix = random_prefix if random_prefix is not None else secrets.token_hex(16)
        self._columns = AttachCounts(self._existing, self.volume_deps, VolumeError)

    # --- extension points --------------------------------------------------------------------
    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with volumes has no signature (``signature.volumes_fragment``)."""
        return volumes_fragment(pod)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        if any(v.claim_name is not None or v.ephemeral or v.inline_disk is not None for v in pod.volumes):
            return None, SUCCESS
        return None, _SKIP

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        n = len(rows)
        if not pod.volumes or not n:
            return fwk.FilterVerdict.passed(n)
        cols = self._columns
        cols.sync(snapshot.table, self._volumes)
        has_csi = cols.has_csi[rows]
        # The new pod's volumes, for nodes with and without a CSINode (in-tree disks translate only
        # where there is one). An error fails every row; where the per-row loop this replaces met
        # two, it reported the one at the earlier position, so the earliest wins here too.
        errors: list[tuple[int, Status]] = []
        checks: list[tuple[Volumes, IntArray]] = []        # (new volumes, positions to check)
        failed = np.zeros(n, np.bool_)
        missing_ids = np.zeros(n, np.int64)
        statuses = [_EXCEEDED]
        status_of: dict[str, int] = {}                     # driver -> its "not installed" status
        for flag in (True, False):
            where = np.flatnonzero(has_csi == flag)
            if not where.size:
                continue
            try:
                new = self.attachable_volumes(pod, flag, new_pod=True)
            except VolumeError as e:
                errors.append((int(where[0]), Status.unresolvable(str(e)) if e.not_found else Status.as_error(e)))
                continue
            if not new:
                continue
            if self._volume_limit_scaling:
                where = self._check_drivers(new, rows, where, cols, missing_ids, statuses, status_of)
            where = where[cols.any_limit[rows[where]]]
            if where.size:
                checks.append((new, where))
        for new, where in checks:
            at = rows[where]
            cols.recount(at)
            if cols.errors:         # an existing pod's volumes could not be read: an Error
                bad = where[np.isin(at, np.fromiter(cols.errors, np.int64, len(cols.errors)))]
                if bad.size:
                    got = cols.vols[int(rows[bad[0]])]
                    assert isinstance(got, Exception)
                    errors.append((int(bad[0]), Status.as_error(got)))
                    continue
            failed[where] = _exceeds(new, at, cols)
        if errors:
            return fwk.FilterVerdict.uniform(np.ones(n, np.bool_), min(errors, key=lambda e: e[0])[1])
        if len(statuses) == 1:
            return fwk.FilterVerdict.uniform(failed, _EXCEEDED)
        failed |= missing_ids > 0
        return fwk.FilterVerdict(failed, statuses, missing_ids)

    def _check_drivers(self, new: Volumes, rows: fwk.Rows, where: IntArray, cols: AttachCounts,
                       missing_ids: IntArray, statuses: list[Status], status_of: dict[str, int]) -> IntArray:
        """Upstream's driver check (VolumeLimitScaling) on positions ``where``: a node whose CSINode
        does not list (or that has no CSINode for) a driver of the pod's new volumes whose CSIDriver
        opted in (``preventPodSchedulingIfMissing``) fails, naming the first such driver; sets
        ``missing_ids`` (an index into ``statuses``, which it extends once per driver, ``status_of``
        saying where) and returns the positions left."""
        for driver in dict.fromkeys(new.values()):
            spec = self._volumes.csi_driver(driver)
            if spec is None or not spec.prevent_pod_scheduling_if_missing:
                continue
            listed = cols.listed.get(driver)
            lacking = np.ones(where.size, np.bool_) if listed is None else ~listed[rows[where]]
            if lacking.any():
                if driver not in status_of:
                    status_of[driver] = len(statuses)
                    statuses.append(Status.unschedulable(driver_not_installed(driver)))
                missing_ids[where[lacking]] = status_of[driver]
                where = where[~lacking]
        return where

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("CSINode", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("CSINode", "Update"), is_schedulable_after_csi_node_updated),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "Delete"), is_schedulable_after_pod_deleted),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolumeClaim", "Add"),
                                         is_schedulable_after_pvc_added))

    # --- counting ------------------------------------------------------------------------------
    def _existing(self, pod: Pod, has_csi: bool) -> Volumes:
        return self.attachable_volumes(pod, has_csi, new_pod=False)

    def volume_deps(self, pod: Pod) -> list[ObjectKey]:
        """The storage objects ``attachable_volumes`` reads for ``pod``: each claim (found or not),
        and the PV and the class it names, so that a change to any of them recounts the pod."""
        out: list[ObjectKey] = []
        for vol in pod.volumes:
            if vol.claim_name is not None:
                claim = vol.claim_name
            elif vol.ephemeral:
                claim = f"{pod.name}-{vol.name}"
            else:
                continue
            out.append(("PersistentVolumeClaim", (pod.namespace, claim)))
            pvc = self._volumes.pvc(pod.namespace, claim)
            if pvc is not None:
                if pvc.volume_name:
                    out.append(("PersistentVolume", ("", pvc.volume_name)))
                if pvc.storage_class:
                    out.append(("StorageClass", ("", pvc.storage_class)))
        return out

    def attachable_volumes(self, pod: Pod, has_csi: bool, *, new_pod: bool) -> Volumes:
        """Upstream's ``filterAttachableVolumes``: the pod's volumes that count, by unique name, on
        a node with a CSINode (``has_csi``: in-tree disks migrate there) or without."""
        out: Volumes = {}
        for vol in pod.volumes:
            if vol.claim_name is not None:
                claim, ephemeral = vol.claim_name, False
            elif vol.ephemeral:
                claim, ephemeral = f"{pod.name}-{vol.name}", True
            else:
                disk = vol.inline_disk
                if disk is not None and is_csi_migration_on(has_csi, disk.plugin):
                    try:
                        handle = translated_handle(disk)
                    except ValueError as e:
                        raise VolumeError(f"converting volume({vol.name}) from inline to csi: {e}") from None
                    driver = CSI_DRIVER_OF[disk.plugin]
                    out[f"{driver}/{handle}"] = driver
                continue
            if not claim:
                raise VolumeError("PersistentVolumeClaim had no name")
            pvc = self._volumes.pvc(pod.namespace, claim)
            if pvc is None:
                if new_pod:   # it cannot run without the claim: bail out
                    raise VolumeError(f"looking up PVC {pod.namespace}/{claim}: "
                                      f"{not_found('PersistentVolumeClaim', claim)}", not_found=True)
                continue      # an existing pod's missing claim is not counted
            if ephemeral and (pvc.namespace != pod.namespace or not pvc.controller_uid
                              or pvc.controller_uid != pod.uid):
                raise VolumeError(f"PVC {pvc.namespace}/{pvc.name} was not created for pod "
                                  f"{pod.namespace}/{pod.name} (pod is not owner)")
            driver, handle = self._driver_info(has_csi, pvc)
            if driver and handle:
                out[f"{driver}/{handle}"] = driver
        return out

    def _driver_info(self, has_csi: bool, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """Upstream's ``getCSIDriverInfo``: the driver and handle of a claim's volume."""
        pv = self._volumes.pv(pvc.volume_name) if pvc.volume_name else None
        if pv is None:
            return self._driver_info_from_class(has_csi, pvc)
        if pv.csi is not None:
            return pv.csi
        disk = pv.in_tree
        if disk is None or not is_csi_migration_on(has_csi, disk.plugin):
            return "", ""
        try:
            return CSI_DRIVER_OF[disk.plugin], translated_handle(disk, pv)
        except ValueError:
            return "", ""

    def _driver_info_from_class(self, has_csi: bool, pvc: PersistentVolumeClaim) -> tuple[str, str]:
        """Upstream's ``getCSIDriverInfoFromSC``: an unbound claim counts against its class's driver."""
        if not pvc.storage_class:
            return "", ""   # no class: Immediate binding, so bound before scheduling
        sc = self._volumes.storage_class(pvc.storage_class)
        if sc is None:
            return "", ""
        handle = f"{self._prefix}-{pvc.namespace}/{pvc.name}"
        provisioner = sc.provisioner
        if provisioner in CSI_DRIVER_OF:
            return (CSI_DRIVER_OF[provisioner], handle) if is_csi_migration_on(has_csi, provisioner) else ("", "")
        return provisioner, handle


def _exceeds(new: Volumes, at: IntArray, cols: AttachCounts) -> BoolArray:
    """The tail of upstream's Filter, on rows ``at`` (counted): per driver of the new volumes, the
    distinct volumes attached plus the new ones not among them, against the driver's limit. A
    volume already attached to a row is not counted again there, and a driver all of whose new
    volumes are attached already is not checked (upstream counts only the new ones that are not)."""
    failed = np.zeros(len(at), np.bool_)
    by_driver: dict[str, list[str]] = {}
    for unique, driver in new.items():
        by_driver.setdefault(driver, []).append(unique)
    for driver, uniques in by_driver.items():
        limit_col = cols.limit.get(driver)
        if limit_col is None:
            continue                    # no node publishes a limit for it
        need = np.full(len(at), len(uniques), np.int64)
        for unique in uniques:
            held = cols.holding(unique, at)
            if held is not None:
                need -= held
        limit = limit_col[at]
        count_col = cols.count.get(driver)
        attached = count_col[at] if count_col is not None else 0
        failed |= (limit >= 0) & (need > 0) & (attached + need > limit)
    return failed


def _can_attach(pod: Pod) -> bool:
    return any(v.claim_name is not None or v.ephemeral or v.inline_disk is not None for v in pod.volumes)


def is_schedulable_after_pod_deleted(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPodDeleted``: Queue when the deleted pod was assigned and had
    a claim, an ephemeral volume or an inline migratable disk. Raises ``TypeError`` for a non-pod."""
    deleted = event.old
    if not isinstance(deleted, Pod):
        raise TypeError(f"expected a deleted pod, got {type(deleted).__name__}")
    return bool(deleted.node_name) and _can_attach(deleted)


def is_schedulable_after_csi_node_updated(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterCSINodeUpdated`` (MutableCSINodeAllocatableCount made
    ``allocatable.count`` mutable): Queue when a driver's attach limit went up. Its source was not
    at hand, only its description ("Allocatable.Count increased for any driver"), so this Queues
    for every change that can free a slot: a count that grew, and a limit that disappeared (a
    driver without a count has no limit); it skips a CSINode whose limits only stayed or shrank
    or newly appeared. Raises ``TypeError`` for non-CSINodes (Queue)."""
    old, new = event.old, event.new
    if not isinstance(old, CSINode) or not isinstance(new, CSINode):
        raise TypeError(f"expected CSINodes, got {type(old).__name__} and {type(new).__name__}")
    before, after = old.limits(), new.limits()
    return any(name not in after or after[name] > limit for name, limit in before.items())


def is_schedulable_after_pvc_added(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPVCAdded``: Queue when the pod (same namespace) uses the claim,
    directly or as an ephemeral volume's ``<pod>-<volume>``. Raises ``TypeError`` for a non-claim."""
    pvc = event.new
    if not isinstance(pvc, PersistentVolumeClaim):
        raise TypeError(f"expected a PersistentVolumeClaim, got {type(pvc).__name__}")
    if pvc.namespace != pod.namespace:
        return False
    return any(pvc.name == (v.claim_name if v.claim_name is not None else f"{pod.name}-{v.name}")
               for v in pod.volumes if v.claim_name is not None or v.ephemeral)


def new(args: None, handle: Handle) -> NodeVolumeLimits:
    return NodeVolumeLimits(handle.volumes,
                            volume_limit_scaling=features.enabled(handle.feature_gates, GATE_VOLUME_LIMIT_SCALING))


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodeVolumeLimits
    __: type[fwk.PreFilterPlugin] = NodeVolumeLimits
    ___: type[fwk.EnqueueExtensions] = NodeVolumeLimits
