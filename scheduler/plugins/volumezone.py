"""VolumeZone: a pod's bound PersistentVolumes must be reachable from the node's zone and region
(upstream's ``volumezone``).

PreFilter resolves each ``persistentVolumeClaim`` of the pod to its PV, as upstream's ``getPVbyPod``,
with its UnschedulableAndUnresolvable answers: a claim with no name, a claim, class or volume that
is not found (the lister's NotFound text), an unbound claim with no class, a class with no
``volumeBindingMode``, an unbound claim of an Immediate class. Unbound claims of a
WaitForFirstConsumer class are skipped: VolumeBinding places them. From each PV it keeps the
topology labels (``failure-domain.beta.kubernetes.io/{zone,region}`` and
``topology.kubernetes.io/{zone,region}``), a value split on ``__`` into a set of zones
(``LabelZonesToSet``; a value with an empty zone is ignored). No such label: Skip.

Filter is columnar: per PV topology, one ``np.isin`` on the node table's label column for that key,
falling back to the GA key's column where the node lacks the (beta) key, as upstream's
``translateToGALabel``. A node with none of the four labels passes (a single-zone cluster). A
mismatch is UnschedulableAndUnresolvable, ``node(s) had no available volume zone``.

EnqueueExtensions, as upstream with queueing hints: StorageClass/Add (Queue only for a
WaitForFirstConsumer class), Node/Add and Node/UpdateNodeLabel, PersistentVolumeClaim/Add|Update
(Queue when the pod uses the claim) and PersistentVolume/Add|Update (Queue when added, or when its
topology labels changed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import NodeTable, Snapshot
from scheduler.cache.volumes import VolumeStore, not_found
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import SignFragment, volumes_fragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.volumes import WAIT_FOR_FIRST_CONSUMER, PersistentVolume, PersistentVolumeClaim, StorageClass

NAME = "VolumeZone"
ERR_REASON_CONFLICT = "node(s) had no available volume zone"
_PRE_FILTER_KEY = "PreFilter" + NAME
_CONFLICT = Status.unresolvable(ERR_REASON_CONFLICT)
_SKIP = Status(Code.SKIP)

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
TOPOLOGY_LABELS = (BETA_ZONE, BETA_REGION, ZONE, REGION)
_TO_GA = {BETA_ZONE: ZONE, BETA_REGION: REGION}
_MULTI_ZONE_DELIMITER = "__"


@dataclass(frozen=True, slots=True)
class PVTopology:
    """upstream's ``pvTopology``: one topology label of a PV, its value as a set of zones."""

    pv_name: str
    key: str
    values: frozenset[str]


def label_zones_to_set(value: str) -> frozenset[str] | None:
    """``volumehelpers.LabelZonesToSet``; ``None`` where upstream returns an error (an empty zone)."""
    zones = [z.strip() for z in value.split(_MULTI_ZONE_DELIMITER)]
    return None if any(not z for z in zones) else frozenset(zones)


def pv_topologies(pv: PersistentVolume) -> tuple[PVTopology, ...]:
    """Upstream's ``getPVTopologies``, in ``topologyLabels`` order."""
    out = []
    for key in TOPOLOGY_LABELS:
        value = pv.labels.get(key)
        if value is not None and (zones := label_zones_to_set(value)) is not None:
            out.append(PVTopology(pv.name, key, zones))
    return tuple(out)


class VolumeZone:
    """Upstream's ``volumezone.VolumeZone``: PreFilter, Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: reads only the node's labels
    pre_filter_reads_pods = False   # PodReadingPreFilter: reads the pod and the storage objects only

    def __init__(self, volumes: VolumeStore | None = None) -> None:
        self._volumes = volumes if volumes is not None else VolumeStore()   # an empty store is falsy

    def _pv_topologies(self, pod: Pod) -> tuple[tuple[PVTopology, ...], Status]:
        """Upstream's ``getPVbyPod``."""
        out: list[PVTopology] = []
        for claim in pod.claim_names:
            if not claim:
                return (), Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = self._volumes.pvc(pod.namespace, claim)
            if pvc is None:
                return (), Status.unresolvable(not_found("PersistentVolumeClaim", claim))
            if not pvc.volume_name:
                sc_name = pvc.storage_class
                if not sc_name:
                    return (), Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name")
                sc = self._volumes.storage_class(sc_name)
                if sc is None:
                    return (), Status.unresolvable(not_found("StorageClass", sc_name))
                if sc.binding_mode is None:
                    return (), Status.unresolvable(f'VolumeBindingMode not set for StorageClass "{sc_name}"')
                if sc.binding_mode == WAIT_FOR_FIRST_CONSUMER:
                    continue    # unbound: VolumeBinding chooses where it goes
                return (), Status.unresolvable("PersistentVolume had no name")
            pv = self._volumes.pv(pvc.volume_name)
            if pv is None:
                return (), Status.unresolvable(not_found("PersistentVolume", pvc.volume_name))
            out.extend(pv_topologies(pv))
        return tuple(out), SUCCESS

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with volumes has no signature (``signature.volumes_fragment``)."""
        return volumes_fragment(pod)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        topologies, status = self._pv_topologies(pod)
        if not status.is_success():
            return None, status
        if not topologies:
            return None, _SKIP
        state.write(_PRE_FILTER_KEY, topologies)
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        n = len(rows)
        if not pod.volumes:
            return fwk.FilterVerdict.passed(n)
        topologies = state.get(_PRE_FILTER_KEY)
        if not isinstance(topologies, tuple):
            # upstream's fallback: compute the PV list here (Filter without PreFilter).
            topologies, status = self._pv_topologies(pod)
            if not status.is_success():
                return fwk.FilterVerdict.uniform(np.ones(n, np.bool_), status)
        if not topologies:
            return fwk.FilterVerdict.passed(n)
        t = snapshot.table
        columns = {k: t.labels[k][rows] for k in TOPOLOGY_LABELS if k in t.labels}
        constrained = np.zeros(n, np.bool_)
        for col in columns.values():
            constrained |= col >= 0
        failed = np.zeros(n, np.bool_)
        for topo in topologies:
            ga = _TO_GA.get(topo.key, topo.key)
            ok = _has(t, topo.key, topo.values, columns, n)
            if ga != topo.key:
                missing = columns[topo.key] < 0 if topo.key in columns else np.ones(n, np.bool_)
                ok = np.where(missing, _has(t, ga, topo.values, columns, n), ok)
            failed |= ~ok
        return fwk.FilterVerdict.uniform(failed & constrained, _CONFLICT)

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("StorageClass", "Add"),
                                         is_schedulable_after_storage_class_added),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeLabel")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolumeClaim", frozenset({"Add", "Update"})),
                                         is_schedulable_after_pvc_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolume", frozenset({"Add", "Update"})),
                                         is_schedulable_after_pv_change))


def _has(table: NodeTable, key: str, values: frozenset[str], columns: Mapping[str, npt.NDArray[np.int32]],
         n: int) -> npt.NDArray[np.bool_]:
    """Rows whose label ``key`` has one of ``values`` (rows without the label: False)."""
    col = columns.get(key)
    ids = [i for v in values if (i := table.value_id(key, v)) >= 0]
    if col is None or not ids:
        return np.zeros(n, np.bool_)
    return np.isin(col, np.array(ids, np.int32))


def is_schedulable_after_pvc_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPersistentVolumeClaimChange``: Queue when the pod uses the
    claim (same namespace and name). Raises ``TypeError`` for a non-claim (Queue)."""
    pvc = event.new
    if not isinstance(pvc, PersistentVolumeClaim):
        raise TypeError(f"expected a PersistentVolumeClaim, got {type(pvc).__name__}")
    return pvc.namespace == pod.namespace and pvc.name in pod.claim_names


def is_schedulable_after_storage_class_added(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterStorageClassAdded``: Queue for a WaitForFirstConsumer class."""
    sc = event.new
    if not isinstance(sc, StorageClass):
        raise TypeError(f"expected a StorageClass, got {type(sc).__name__}")
    return sc.binding_mode == WAIT_FOR_FIRST_CONSUMER


def is_schedulable_after_pv_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPersistentVolumeChange``: Queue for a new PV, or one whose
    topology labels changed. Raises ``TypeError`` for a non-PV on either side (Queue)."""
    old, new = event.old, event.new
    if not isinstance(new, PersistentVolume) or not (old is None or isinstance(old, PersistentVolume)):
        raise TypeError(f"expected PersistentVolumes, got {type(old).__name__} and {type(new).__name__}")
    return old is None or pv_topologies(old) != pv_topologies(new)


def new(args: None, handle: Handle) -> VolumeZone:
    return VolumeZone(handle.volumes)


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = VolumeZone
    __: type[fwk.PreFilterPlugin] = VolumeZone
    ___: type[fwk.EnqueueExtensions] = VolumeZone
