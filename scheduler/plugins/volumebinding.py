"""VolumeBinding, its scheduling-cycle half: which nodes a pod's claims can be bound or provisioned
for (upstream's ``volumebinding`` PreFilter and Filter, with ``binder.go``'s ``GetPodVolumeClaims``
and ``FindPodVolumes``), and Reserve/Unreserve (``AssumePodVolumes`` / ``RevertAssumedPodVolumes``).

**PreFilter** checks every ``persistentVolumeClaim`` and generic ephemeral claim exists, is not
Lost or being deleted, and (ephemeral) is owned by the pod; each failure is
UnschedulableAndUnresolvable with upstream's text. It sorts the claims as ``GetPodVolumeClaims``:
*bound* (``spec.volumeName`` set and the ``pv.kubernetes.io/bind-completed`` annotation),
*unbound, delayed* (a WaitForFirstConsumer class and no volume name), or *unbound, immediate*
(anything else), which makes the pod UnschedulableAndUnresolvable, ``pod has unbound immediate
PersistentVolumeClaims``, until the PV controller binds them. Bound ``local``-style PVs whose node
affinity names hostnames narrow the nodes (``PreFilterResult``, upstream's ``GetEligibleNodes``).
A pod without claims: Skip.

**Filter** is upstream's ``FindPodVolumes`` over all candidate rows at once:

* bound claims: the PV's ``nodeAffinity.required`` as a row mask (labels only: upstream checks a
  node that has nothing but labels, so a ``metadata.name`` field term never matches); a claim whose
  PV is missing stops the check with ``node(s) unavailable due to one or more pvc(s) bound to
  non-existent pv(s)``, else a mismatch is ``node(s) had volume node affinity conflict``;
* delayed claims with ``volume.kubernetes.io/selected-node`` (an earlier attempt chose a node) fit
  only that node, else ``node(s) didn't find available persistent volumes to bind``;
* the other delayed claims, smallest request first, take per row the smallest PV of their class
  that is Available, large enough, of the claim's volume mode, access modes, selector and volume
  attributes class, not being deleted, not bound to another claim, whose node affinity admits the
  row, and not taken by an earlier claim of the pod on that row (a PV pre-bound to the claim wins,
  or fails the row if its affinity does not admit it): a (candidates x rows) mask and one argmax;
* claims left to provision: a class with no provisioner (or
  ``kubernetes.io/no-provisioner``), or whose ``allowedTopologies`` the node does not match, is a
  bind conflict; when the provisioner is a CSIDriver with ``storageCapacity: true``, a
  CSIStorageCapacity of the class whose ``nodeTopology`` matches the node and whose
  ``maximumVolumeSize`` (else ``capacity``) holds the request must exist, else ``node(s) did not
  have enough free storage``. A claim with no class, or a missing class, is an Error, as upstream.

All reasons of a row go in one UnschedulableAndUnresolvable status, in upstream's order.

**Reserve** runs ``FindPodVolumes`` again for the chosen node (in the cycle's snapshot, which
PreFilter keeps in the cycle state) and assumes in the volume store each matched PV with its
``claimRef`` set and each claim to provision with ``volume.kubernetes.io/selected-node``, so the next
cycle neither hands that PV out again nor moves that claim (upstream's assume caches);
**Unreserve** restores them. ``VolumeBinding.reserved(state)`` gives what was assumed.

**What the edge must supply for the rest** (PreBind and the Score are not here): PreBind must
write the assumed objects through the client protocol (the PV's ``spec.claimRef``; the claim's
``volume.kubernetes.io/selected-node``), then wait up to
``bindTimeoutSeconds`` (600 by default) for the PV controller to bind every claim, off the worker's
loop, and fail the binding cycle on timeout so the pod is retried. The store must be fed by
informers on PVs, PVCs, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities, whose
events move pods (``events_to_register``). Until then, a pod whose delayed claim is unbound passes
Filter but nothing provisions its volume; hence this plugin is registered, not default.

Also not here: in-tree PVs translated to CSI before the affinity check (``tryTranslatePVToCSI``:
only matters for PVs whose zone is in labels rather than node affinity), the storage-capacity
Score (upstream's PreScore/Score run only with the ``StorageCapacityScoring`` gate, alpha and off
from 1.33, beta and on from 1.37; through 1.36 upstream's PreScore returns Skip, as having no Score
does here), and queueing hints (every registered event requeues, which is
never less eager than upstream's hints).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import NodeTable, Snapshot
from scheduler.cache.volumes import VolumeStore, not_found
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    FilterVerdict,
    PreFilterResult,
    Rows,
)
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import NodeSelector, Pod
from scheduler.model.volumes import (
    SELECTED_NODE_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from scheduler.plugins.helpers import derived, requirement_mask

NAME = "VolumeBinding"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"
_STATE_KEY = NAME
_SNAPSHOT_KEY = NAME + "/snapshot"
_RESERVED_KEY = NAME + "/reserved"
_SKIP = Status(Code.SKIP)
BoolArray = npt.NDArray[np.bool_]

# FindPodVolumes' order of reasons.
_REASONS = (ERR_REASON_NODE_CONFLICT, ERR_REASON_BIND_CONFLICT, ERR_REASON_NOT_ENOUGH_SPACE, ERR_REASON_PV_NOT_EXIST)
# Per-row outcome of the provisioning check (checkVolumeProvisions).
_OK, _BIND_CONFLICT, _NO_SPACE, _ERROR = 0, 1, 2, 3


@dataclass(slots=True)
class PodVolumeClaims:
    """upstream's ``PodVolumeClaims``: the pod's claims sorted by how they bind."""

    bound: list[PersistentVolumeClaim] = field(default_factory=list)
    delay_binding: list[PersistentVolumeClaim] = field(default_factory=list)
    immediate: list[PersistentVolumeClaim] = field(default_factory=list)
    # class -> the PVs of that class (unboundVolumesDelayBinding)
    volumes_by_class: dict[str, list[PersistentVolume]] = field(default_factory=dict)


@dataclass(slots=True)
class PodVolumes:
    """upstream's ``PodVolumes`` for one node, by name: (claim, PV) static bindings and the claims
    to provision; ``status`` is the node's Filter status."""

    status: Status = SUCCESS
    static_bindings: list[tuple[str, str]] = field(default_factory=list)
    dynamic_provisions: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Reserved:
    """What Reserve assumed for the pod on ``node_name`` (upstream's ``stateData.allBound`` and the
    node's ``PodVolumes``): the PVs pre-bound to their claims and the claims annotated with the
    node, which PreBind must write, then wait for; ``all_bound``: nothing to do."""

    all_bound: bool = True
    node_name: str = ""
    assumed: list[PersistentVolume | PersistentVolumeClaim] = field(default_factory=list)


class VolumeBinding:
    """Upstream's ``volumebinding.VolumeBinding``: PreFilter, Filter, EnqueueExtensions (see the
    module docstring for the extension points left to the edge)."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: reads the node's labels and the store
    pre_filter_reads_pods = False   # PodReadingPreFilter: reads the pod and the store only

    def __init__(self, volumes: VolumeStore | None = None) -> None:
        self._volumes = volumes or VolumeStore()

    # --- PreFilter ---------------------------------------------------------------------------
    def _claims_of(self, pod: Pod) -> list[tuple[str, bool]]:
        return [(v.claim_name, False) if v.claim_name is not None else (f"{pod.name}-{v.name}", True)
                for v in pod.volumes if v.claim_name is not None or v.ephemeral]

    def _check_claims(self, pod: Pod, claims: list[tuple[str, bool]]) -> str:
        """Upstream's ``podHasPVCs``: the first problem's text, or ``""``."""
        for name, ephemeral in claims:
            pvc = self._volumes.pvc(pod.namespace, name)
            if pvc is None:
                return (f'waiting for ephemeral volume controller to create the persistentvolumeclaim "{name}"'
                        if ephemeral else not_found("PersistentVolumeClaim", name))
            if pvc.phase == "Lost":
                return f'persistentvolumeclaim "{pvc.name}" bound to non-existent persistentvolume "{pvc.volume_name}"'
            if pvc.deleting:
                return f'persistentvolumeclaim "{pvc.name}" is being deleted'
            if ephemeral and (pvc.namespace != pod.namespace or not pvc.controller_uid
                              or pvc.controller_uid != pod.uid):
                return (f"PVC {pvc.namespace}/{pvc.name} was not created for pod {pod.namespace}/{pod.name} "
                        "(pod is not owner)")
        return ""

    def pod_volume_claims(self, pod: Pod, claims: list[tuple[str, bool]]) -> PodVolumeClaims:
        """Upstream's ``GetPodVolumeClaims``; raises ``ValueError`` for a class with no binding mode."""
        out = PodVolumeClaims()
        for name, _ in claims:
            pvc = self._volumes.pvc(pod.namespace, name)
            if pvc is None:
                raise ValueError(f'error getting PVC "{pod.namespace}/{name}": not found')
            if pvc.volume_name and ANN_BIND_COMPLETED in pvc.annotations:
                out.bound.append(pvc)
            elif self._delay_binding(pvc) and not pvc.volume_name:
                out.delay_binding.append(pvc)
            else:
                out.immediate.append(pvc)   # pre-bound claims too: the PV controller binds them
        for pvc in out.delay_binding:
            if pvc.storage_class not in out.volumes_by_class:
                out.volumes_by_class[pvc.storage_class] = [
                    pv for pv in self._volumes.pvs() if pv.storage_class == pvc.storage_class]
        return out

    def _delay_binding(self, pvc: PersistentVolumeClaim) -> bool:
        """``volume.IsDelayBindingMode``: no class, or a missing one, binds immediately."""
        if not pvc.storage_class:
            return False
        sc = self._volumes.storage_class(pvc.storage_class)
        if sc is None:
            return False
        if sc.binding_mode is None:
            raise ValueError(f'VolumeBindingMode not set for StorageClass "{pvc.storage_class}"')
        return sc.binding_mode == WAIT_FOR_FIRST_CONSUMER

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status]:
        claims = self._claims_of(pod)
        problem = self._check_claims(pod, claims)
        if problem:
            return None, Status.unresolvable(problem)
        if not claims:
            state.write(_STATE_KEY, PodVolumeClaims())
            return None, _SKIP
        try:
            pvcs = self.pod_volume_claims(pod, claims)
        except ValueError as e:
            return None, Status.as_error(e)
        if pvcs.immediate:
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, pvcs)
        # Reserve looks the chosen node up in the cycle's snapshot (still valid: it runs under the
        # cache lock, and this plugin reads only node labels, which Reserve's assumption keeps).
        state.write(_SNAPSHOT_KEY, snapshot)
        eligible = self._eligible_nodes(pvcs.bound)
        return (None if eligible is None else PreFilterResult(eligible)), SUCCESS

    def _eligible_nodes(self, bound: list[PersistentVolumeClaim]) -> frozenset[str] | None:
        """Upstream's ``GetEligibleNodes``: the hostnames the bound PVs' affinity names, intersected."""
        eligible: frozenset[str] | None = None
        for pvc in bound:
            pv = self._volumes.pv(pvc.volume_name)
            if pv is None:
                return None
            names = local_pv_node_names(pv)
            if names:
                eligible = names if eligible is None else eligible & names
        return eligible

    # --- Filter --------------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        return self._filter(state, pod, snapshot, rows)

    def find_pod_volumes(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int) -> PodVolumes:
        """Upstream's ``FindPodVolumes`` on one node, after PreFilter ran into ``state``: the status
        Filter gives the node, the static bindings found, and (on success) the claims to provision
        there: what Reserve will assume."""
        record = PodVolumes()
        v = self._filter(state, pod, snapshot, np.array([row], np.int64), record)
        if v.failed[0]:
            # As upstream: the static bindings found so far stay, the provisions do not.
            return PodVolumes(v.statuses[0 if v.status_ids is None else int(v.status_ids[0])],
                              record.static_bindings)
        return record

    def _filter(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows,
                record: PodVolumes | None = None) -> FilterVerdict:
        n = len(rows)
        pvcs = state.get(_STATE_KEY)
        if not isinstance(pvcs, PodVolumeClaims):
            # Filter without PreFilter (upstream: an Error): compute what PreFilter would have.
            fresh = CycleState()
            _, status = self.pre_filter(fresh, pod, snapshot)
            if not status.is_success():
                return (FilterVerdict.passed(n) if status.is_skip()
                        else FilterVerdict.uniform(np.ones(n, np.bool_), status))
            got = fresh.get(_STATE_KEY)
            assert isinstance(got, PodVolumeClaims)
            pvcs = got
        t = snapshot.table
        node_conflict = np.zeros(n, np.bool_)
        pv_missing = np.zeros(n, np.bool_)
        alive = np.ones(n, np.bool_)
        for pvc in pvcs.bound:                      # checkBoundClaims
            pv = self._volumes.pv(pvc.volume_name)
            if pv is None:
                pv_missing |= alive
                break
            fits = pv_affinity_mask(t, pv.node_affinity)[rows]
            node_conflict |= alive & ~fits
            alive &= fits
        bind_conflict = np.zeros(n, np.bool_)
        no_space = np.zeros(n, np.bool_)
        errors: dict[int, str] = {}
        if pvcs.delay_binding:
            bind_conflict, no_space, errors = self._unbound(pvcs, snapshot, rows, record)
        return _verdict(n, node_conflict, bind_conflict, no_space, pv_missing, errors)

    def _unbound(self, pvcs: PodVolumeClaims, snapshot: Snapshot, rows: Rows, record: PodVolumes | None = None
                 ) -> tuple[BoolArray, BoolArray, dict[int, str]]:
        t = snapshot.table
        n = len(rows)
        names = np.array(snapshot.node_names(rows), dtype=object)
        selected = [c for c in pvcs.delay_binding if SELECTED_NODE_ANNOTATION in c.annotations]
        to_match = [c for c in pvcs.delay_binding if SELECTED_NODE_ANNOTATION not in c.annotations]
        # The fast path: a claim with a selected node fits that node only, and ends the check.
        fast_fail = np.zeros(n, np.bool_)
        for c in selected:
            fast_fail |= names != c.annotations[SELECTED_NODE_ANNOTATION]
        # findMatchingVolumes: per claim (smallest request first), the rows where it found no PV
        # (they go on to provisioning) and the PV it took on the others.
        to_match.sort(key=lambda c: c.request or 0)
        provision: list[tuple[PersistentVolumeClaim, BoolArray]] = [(c, np.ones(n, np.bool_)) for c in selected]
        taken: dict[str, BoolArray] = {}          # PV name -> rows where an earlier claim took it
        for c in to_match:
            unmatched, chosen_pvs = self._match(c, pvcs.volumes_by_class.get(c.storage_class, []), t, rows, taken)
            for pv_name, mask in chosen_pvs.items():
                taken[pv_name] = taken.get(pv_name, np.zeros(n, np.bool_)) | mask
                if record is not None and mask[0] and not fast_fail[0]:
                    record.static_bindings.append((c.name, pv_name))
            provision.append((c, unmatched))
        # checkVolumeProvisions: the first failing claim decides each row.
        outcome = np.zeros(n, np.int64)
        decided = np.zeros(n, np.bool_)
        errors: dict[int, str] = {}
        for c, applies in provision:
            o, message = self._provision_outcome(c, t, rows)
            take = applies & ~decided & (o != _OK)
            outcome[take] = o[take]
            decided |= take
            if message:
                for i in np.flatnonzero(take & (o == _ERROR)).tolist():
                    errors[i] = message
        if record is not None and not fast_fail[0] and not decided[0]:
            record.dynamic_provisions.extend(c.name for c, applies in provision if applies[0])
        bind_conflict = fast_fail | (~fast_fail & (outcome == _BIND_CONFLICT))
        no_space = ~fast_fail & (outcome == _NO_SPACE)
        errors = {i: m for i, m in errors.items() if not fast_fail[i]}
        return bind_conflict, no_space, errors

    def _match(self, claim: PersistentVolumeClaim, pvs: list[PersistentVolume], t: NodeTable, rows: Rows,
               taken: dict[str, BoolArray]) -> tuple[BoolArray, dict[str, BoolArray]]:
        """``volume.FindMatchingVolume`` for one claim on every row: the rows left unmatched, and
        for each chosen PV the rows it was chosen on."""
        n = len(rows)
        prebound = next((pv for pv in pvs if _bound_to(pv, claim)
                         and _basic_fit(pv, claim)), None)
        if prebound is not None:
            # Upstream returns the pre-bound PV at once: a row it does not fit gets no PV at all.
            ok = pv_affinity_mask(t, prebound.node_affinity)[rows]
            if prebound.name in taken:
                ok &= ~taken[prebound.name]
            return ~ok, {prebound.name: ok}
        cands = [pv for pv in pvs if pv.claim_ref is None and _basic_fit(pv, claim) and _available_fit(pv, claim)]
        if not cands:
            return np.ones(n, np.bool_), {}
        # Smallest first; among equals, store order (upstream keeps the first smallest it meets).
        cands.sort(key=lambda pv: pv.capacity or 0)
        fits = np.empty((len(cands), n), np.bool_)
        for k, pv in enumerate(cands):
            fits[k] = pv_affinity_mask(t, pv.node_affinity)[rows]
            if pv.name in taken:
                fits[k] &= ~taken[pv.name]
        any_fit: BoolArray = np.asarray(fits.any(axis=0), np.bool_)
        first = fits.argmax(axis=0)
        chosen: dict[str, BoolArray] = {}
        for k in np.unique(first[any_fit]).tolist():
            chosen[cands[k].name] = any_fit & (first == k)
        return ~any_fit, chosen

    def _provision_outcome(self, claim: PersistentVolumeClaim, t: NodeTable, rows: Rows
                           ) -> tuple[npt.NDArray[np.int64], str]:
        """``checkVolumeProvisions`` for one claim, per row."""
        n = len(rows)
        if not claim.storage_class:
            return np.full(n, _ERROR, np.int64), f'no class for claim "{claim.key}"'
        sc = self._volumes.storage_class(claim.storage_class)
        if sc is None:
            return np.full(n, _ERROR, np.int64), f'failed to find storage class "{claim.storage_class}"'
        if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
            return np.full(n, _BIND_CONFLICT, np.int64), ""
        out = np.where(topology_mask(t, sc.allowed_topologies)[rows], _OK, _BIND_CONFLICT).astype(np.int64)
        driver = self._volumes.csi_driver(sc.provisioner)
        if claim.request is None or driver is None or not driver.storage_capacity:
            return out, ""
        # hasEnoughCapacity: some capacity object of the class, reachable from the node, is big enough.
        enough = np.zeros(n, np.bool_)
        for cap in self._volumes.capacities():
            limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if (cap.storage_class == sc.name and limit is not None and limit >= claim.request
                    and cap.node_topology is not None):
                mask = np.ones(t.capacity, np.bool_)
                for r in cap.node_topology.requirements:
                    mask &= requirement_mask(t, r)
                enough |= mask[rows]
        out[(out == _OK) & ~enough] = _NO_SPACE
        return out, ""

    # --- Reserve / Unreserve ----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``AssumePodVolumes``: a PV matched on the node is assumed pre-bound to its
        claim (``claimRef``), a claim to provision is assumed annotated with the node, so the next
        cycle does not hand them out again."""
        pvcs = state.get(_STATE_KEY)
        snapshot = state.get(_SNAPSHOT_KEY)
        if not isinstance(pvcs, PodVolumeClaims) or not pvcs.delay_binding:
            # No claims, or all fully bound (arePodVolumesBound): PreBind has nothing to do.
            state.write(_RESERVED_KEY, Reserved())
            return SUCCESS
        row = snapshot.row_of(node_name) if isinstance(snapshot, Snapshot) else None
        if row is None:
            return Status.as_error(ValueError(f'no pod volumes found for node "{node_name}"'))
        assert isinstance(snapshot, Snapshot)
        found = self.find_pod_volumes(state, pod, snapshot, row)
        if not found.status.is_success():
            return found.status
        assumed: list[PersistentVolume | PersistentVolumeClaim] = []
        for claim_name, pv_name in found.static_bindings:
            pv, claim = self._volumes.pv(pv_name), self._volumes.pvc(pod.namespace, claim_name)
            if pv is None or claim is None:
                self._restore(assumed)
                return Status.as_error(ValueError(f'failed to assume PV "{pv_name}" for claim "{claim_name}"'))
            if not _bound_to(pv, claim):        # a PV already pre-bound to it needs no assumption
                bound = replace(pv, claim_ref=(claim.namespace, claim.name, claim.uid))
                self._volumes.assume(bound)
                assumed.append(bound)
        for claim_name in found.dynamic_provisions:
            claim = self._volumes.pvc(pod.namespace, claim_name)
            if claim is None:
                self._restore(assumed)
                return Status.as_error(ValueError(f'failed to assume claim "{claim_name}"'))
            annotated = replace(claim, annotations={**claim.annotations, SELECTED_NODE_ANNOTATION: node_name})
            self._volumes.assume(annotated)
            assumed.append(annotated)
        state.write(_RESERVED_KEY, Reserved(False, node_name, assumed))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Upstream's ``RevertAssumedPodVolumes``; idempotent."""
        reserved = state.get(_RESERVED_KEY)
        if isinstance(reserved, Reserved):
            self._restore(reserved.assumed)
            reserved.assumed = []

    def _restore(self, assumed: Sequence[PersistentVolume | PersistentVolumeClaim]) -> None:
        for obj in assumed:
            self._volumes.restore(obj)

    @staticmethod
    def reserved(state: CycleState) -> Reserved | None:
        """What Reserve assumed for this cycle's pod: the edge's PreBind writes it."""
        got = state.get(_RESERVED_KEY)
        return got if isinstance(got, Reserved) else None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        add_update = frozenset({"Add", "Update"})
        return (ClusterEventWithHint(ClusterEvent("StorageClass", add_update)),
                ClusterEventWithHint(ClusterEvent("PersistentVolumeClaim", add_update)),
                ClusterEventWithHint(ClusterEvent("PersistentVolume", add_update)),
                ClusterEventWithHint(ClusterEvent("Node", "Add")),
                ClusterEventWithHint(ClusterEvent("Node", "UpdateNodeLabel")),
                ClusterEventWithHint(ClusterEvent("CSINode", add_update)),
                ClusterEventWithHint(ClusterEvent("CSIDriver", add_update)),
                ClusterEventWithHint(ClusterEvent("CSIStorageCapacity", add_update)))


def _bound_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``."""
    ref = pv.claim_ref
    return ref is not None and ref[0] == claim.namespace and ref[1] == claim.name and ref[2] in ("", claim.uid)


def _basic_fit(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The checks FindMatchingVolume makes of every PV, pre-bound or not: size, volume mode, not deleting."""
    return (pv.capacity or 0) >= (claim.request or 0) and pv.volume_mode == claim.volume_mode and not pv.deleting


def _available_fit(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The checks for a PV not pre-bound to the claim: Available, selector, class, access modes, VAC."""
    return (pv.phase == "Available"
            and (claim.selector is None or claim.selector.matches(pv.labels))
            and pv.storage_class == claim.storage_class
            and claim.access_modes <= pv.access_modes
            and pv.volume_attributes_class == claim.volume_attributes_class)


def local_pv_node_names(pv: PersistentVolume) -> frozenset[str]:
    """``GetLocalPersistentVolumeNodeNames``: per term, the intersection of its ``kubernetes.io/hostname
    In`` values; the union over terms (a term without one adds nothing)."""
    if pv.node_affinity is None:
        return frozenset()
    out: set[str] = set()
    for term in pv.node_affinity.terms:
        nodes: frozenset[str] | None = None
        for r in term.match_expressions:
            if r.key == HOSTNAME and r.operator == "In":
                nodes = r.values if nodes is None else nodes & r.values
        out |= nodes or set()
    return frozenset(out)


def pv_affinity_mask(t: NodeTable, selector: NodeSelector | None) -> BoolArray:
    """``volume.CheckNodeAffinity`` per row: no affinity fits everywhere; else some term matches the
    node's labels. Upstream matches a node that has only labels, so a field requirement sees the
    name ``""`` (``In`` never holds, ``NotIn`` always does)."""
    if selector is None:
        return np.ones(t.capacity, np.bool_)

    def compute() -> BoolArray:
        mask = np.zeros(t.capacity, np.bool_)
        for term in selector.terms:
            if term.parse_errors or (not term.match_expressions and not term.match_fields):
                continue
            if any(f.operator != "NotIn" for f in term.match_fields):
                continue
            m = np.ones(t.capacity, np.bool_)
            for r in term.match_expressions:
                m &= requirement_mask(t, r)
            mask |= m
        return mask
    return derived(t, ("pv-affinity", selector), compute)


def topology_mask(t: NodeTable, terms: Sequence[Mapping[str, frozenset[str]]]) -> BoolArray:
    """``MatchTopologySelectorTerms``: no terms fit everywhere; else some term's every key has one
    of its values on the node."""
    if not terms:
        return np.ones(t.capacity, np.bool_)
    mask = np.zeros(t.capacity, np.bool_)
    for term in terms:
        m = np.ones(t.capacity, np.bool_)
        for key, values in term.items():
            ids = [i for v in values if (i := t.value_id(key, v)) >= 0]
            if not ids:
                m[:] = False
                break
            m &= np.isin(t.label_column(key), np.array(ids, np.int32))
        mask |= m
    return mask


def _verdict(n: int, node_conflict: BoolArray, bind_conflict: BoolArray, no_space: BoolArray,
             pv_missing: BoolArray, errors: dict[int, str]) -> FilterVerdict:
    """One status per distinct combination of reasons, in FindPodVolumes' order."""
    failed = node_conflict | bind_conflict | no_space | pv_missing
    for i in errors:
        failed[i] = True
    if not failed.any():
        return FilterVerdict(failed)
    statuses: list[Status] = []
    index: dict[object, int] = {}
    ids = np.zeros(n, np.int64)
    for i in np.flatnonzero(failed).tolist():
        flags = (bool(node_conflict[i]), bool(bind_conflict[i]), bool(no_space[i]), bool(pv_missing[i]))
        key: object = ("error", errors[i]) if i in errors else flags
        sid = index.get(key)
        if sid is None:
            sid = index[key] = len(statuses)
            if i in errors:
                statuses.append(Status.as_error(ValueError(errors[i])))
            else:
                statuses.append(Status.unresolvable(*(r for r, on in zip(_REASONS, flags, strict=True) if on)))
        ids[i] = sid
    return FilterVerdict(failed, statuses, ids)


def new(args: None, handle: Handle) -> VolumeBinding:
    return VolumeBinding(handle.volumes)


if TYPE_CHECKING:
    from scheduler.framework.interfaces import BatchFilterPlugin, EnqueueExtensions, PreFilterPlugin, ReservePlugin

    _: type[BatchFilterPlugin] = VolumeBinding
    __: type[PreFilterPlugin] = VolumeBinding
    ___: type[EnqueueExtensions] = VolumeBinding
    ____: type[ReservePlugin] = VolumeBinding
