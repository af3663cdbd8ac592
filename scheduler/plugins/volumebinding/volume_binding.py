"""VolumeBinding (upstream's ``volume_binding.go``): the plugin around the volume binder
(``binder``, upstream's ``binder.go``: FindPodVolumes, AssumePodVolumes, BindPodVolumes, read it
for the rules) and the storage-capacity scorer (``scorer``).

**PreFilter** checks every ``persistentVolumeClaim`` and generic ephemeral claim exists, is not
Lost or being deleted, and (ephemeral) is owned by the pod (``podHasPVCs``); each failure is
UnschedulableAndUnresolvable with upstream's text. It sorts the claims (``GetPodVolumeClaims``); an
*unbound, immediate* one makes the pod UnschedulableAndUnresolvable, ``pod has unbound immediate
PersistentVolumeClaims``, until the PV controller binds it. Bound ``local``-style PVs narrow the
nodes (``PreFilterResult``). A pod without claims: Skip.

**Filter** is ``FindPodVolumes`` over the candidate rows. **Reserve** runs it again for the chosen
node, in the cycle's snapshot (PreFilter keeps it in the cycle state), and assumes what it found
(``AssumePodVolumes``); **Unreserve** reverts. ``VolumeBinding.reserved(state)`` gives what was
assumed.

**PreBind** is ``BindPodVolumes``: write, then wait up to ``bindTimeoutSeconds`` for the binding.
A failure is an Error status with upstream's text; the framework then unreserves and the pod is
retried with backoff. **PreBindPreFlight** says Skip when all claims are bound (nothing to write or
wait for), and ``pre_bind_wait`` gives the service the wait's budget, which it adds to the binding
cycle's deadline (``SchedulerService.run_worker``).

**PreScore/Score** (``StorageCapacityScoring``: alpha and off in 1.33-1.36, beta and on from 1.37,
``pkg/features``; this plugin follows the newest default, on, and ``storage_capacity_scoring=False``
gives the gate-off plugin, whose PreScore always skips). PreScore also skips a pod with no unbound
delayed claim (every node would score 0). Score reruns the binder's matching over the rows to
record sizes and hands them to ``scorer.score``.

**EnqueueExtensions** with upstream's queueing hints: StorageClass Add|Update (a new class, or
changed ``allowedTopologies``), PersistentVolumeClaim Add|Update (one of the pod's claims, generic
ephemeral ones included), PersistentVolume Add|Update and Node Add|UpdateNodeLabel (no hint),
CSINode Add|Update (new, or its migrated-plugins annotation changed), CSIDriver Update (an inline
``csi`` volume of the pod uses it and its ``storageCapacity`` was turned off), CSIStorageCapacity
Add|Update (new, or its volume limit, ``maximumVolumeSize`` else ``capacity``, appeared or grew).

The NominatedNodeName write upstream makes before a PreBind that has work
(NominatedNodeNameForExpectation) is the binding cycle's (``cycle.py``), on this PreBindPreFlight's
Success. Not here: the ``scheduler_volume_*`` metrics.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler import features
from scheduler.cache import Snapshot
from scheduler.cache.volumes import VolumeStore, not_found
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import SignFragment, volumes_fragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.volumes import CSIDriver, CSINode, CSIStorageCapacity, PersistentVolumeClaim, StorageClass
from scheduler.plugins.args import DEFAULT_VOLUME_BINDING_SHAPE, MAX_CUSTOM_PRIORITY_SCORE, VolumeBindingArgs
from scheduler.plugins.args import storage_capacity_scoring as scoring_gate
from scheduler.plugins.volumebinding.binder import (
    PodVolumeClaims,
    PodVolumes,
    Reserved,
    VolumeBinder,
    VolumeBindingError,
)
from scheduler.plugins.volumebinding.scorer import _ScoreParts, score

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient

NAME = "VolumeBinding"
ERR_REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"
_STATE_KEY = NAME
_SNAPSHOT_KEY = NAME + "/snapshot"
_RESERVED_KEY = NAME + "/reserved"
_SKIP = Status(Code.SKIP)


class VolumeBinding:
    """Upstream's ``volumebinding.VolumeBinding``: PreFilter, Filter, PreScore, Score, Reserve,
    Unreserve, PreBind (with its PreBindPreFlight) and EnqueueExtensions (see the module docstring and ``binder``'s).

    ``args`` are the validated ``VolumeBindingArgs`` (defaults without); ``storage_capacity_scoring``
    is the feature gate (``args.STORAGE_CAPACITY_SCORING``, the newest upstream default, unless
    given); ``bind_timeout`` overrides ``args.bindTimeoutSeconds`` (tests wait fractions of a
    second). ``client`` makes PreBind's writes; ``assigned_pod`` (the cache's pods by uid) tells
    PreBind's wait that the pod was deleted."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: reads the node's labels and the store
    pre_filter_reads_pods = False   # PodReadingPreFilter: reads the pod and the store only

    def __init__(self, volumes: VolumeStore | None = None, args: VolumeBindingArgs | None = None, *,
                 storage_capacity_scoring: bool | None = None, client: SchedulerClient | None = None,
                 assigned_pod: Callable[[str], Pod | None] | None = None, bind_timeout: float | None = None
                 ) -> None:
        self._volumes = volumes if volumes is not None else VolumeStore()   # an empty store is falsy
        gate = scoring_gate() if storage_capacity_scoring is None else storage_capacity_scoring
        if args is None:
            args = VolumeBindingArgs.model_validate({}, context={"StorageCapacityScoring": gate})
        self.args = args
        self.bind_timeout = float(args.bind_timeout_seconds) if bind_timeout is None else bind_timeout
        self.storage_capacity_scoring = gate
        # The scorer exists only with the gate on (New: ``if fts.EnableStorageCapacityScoring``),
        # its points scaled from 0-10 to 0-100 as upstream's.
        self._shape: tuple[tuple[int, int], ...] | None = None
        if gate:
            self._shape = tuple((p.utilization, p.score * (MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE))
                                for p in args.shape or DEFAULT_VOLUME_BINDING_SHAPE)
        self._client = client
        self._binder = VolumeBinder(self._volumes, assigned_pod)


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


    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with volumes has no signature (``signature.volumes_fragment``)."""
        return volumes_fragment(pod)

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        claims = self._claims_of(pod)
        problem = self._check_claims(pod, claims)
        if problem:
            return None, Status.unresolvable(problem)
        if not claims:
            state.write(_STATE_KEY, PodVolumeClaims())
            return None, _SKIP
        try:
            pvcs = self._binder.pod_volume_claims(pod, claims)
        except ValueError as e:
            return None, Status.as_error(e)
        if pvcs.immediate:
            return None, Status.unresolvable(ERR_REASON_UNBOUND_IMMEDIATE)
        state.write(_STATE_KEY, pvcs)
        # Reserve looks the chosen node up in the cycle's snapshot (still valid: it runs under the
        # cache lock, and this plugin reads only node labels, which Reserve's assumption keeps).
        state.write(_SNAPSHOT_KEY, snapshot)
        eligible = self._binder.eligible_nodes(pvcs.bound)
        return (None if eligible is None else fwk.PreFilterResult(eligible)), SUCCESS

    # --- Filter --------------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
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

    def _filter(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows,
                record: PodVolumes | None = None, parts: _ScoreParts | None = None) -> fwk.FilterVerdict:
        n = len(rows)
        pvcs = state.get(_STATE_KEY)
        if not isinstance(pvcs, PodVolumeClaims):
            # Filter without PreFilter (upstream: an Error): compute what PreFilter would have.
            fresh = CycleState()
            _, status = self.pre_filter(fresh, pod, snapshot)
            if not status.is_success():
                return (fwk.FilterVerdict.passed(n) if status.is_skip()
                        else fwk.FilterVerdict.uniform(np.ones(n, np.bool_), status))
            got = fresh.get(_STATE_KEY)
            assert isinstance(got, PodVolumeClaims)
            pvcs = got
        return self._binder.find_pod_volumes(pvcs, snapshot, rows, record, parts)

    # --- PreScore / Score (storage capacity) ------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        """Upstream's PreScore: Skip without the scorer (StorageCapacityScoring off), else Success.
        A pod with no unbound delayed claim scores 0 everywhere (no static binding, no provision);
        it skips here, which changes no total."""
        if self._shape is None:
            return _SKIP
        pvcs = state.get(_STATE_KEY)
        if not isinstance(pvcs, PodVolumeClaims) or not pvcs.delay_binding:
            return _SKIP
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        """Upstream's Score on every row at once. Per row, the claims matched to a PV (static
        bindings) are grouped by the PV's class, requests and capacities summed; a row with no
        static binding takes instead the claims to provision whose CSIStorageCapacity was found
        (dynamic provisions), requests summed and the class's capacity the last such one's. Each
        class scores ``shape(requested * 100 / capacity)`` (100 when the capacity is 0 or short);
        the row scores the rounded mean over its classes, 0 without any."""
        n = len(rows)
        pvcs = state.get(_STATE_KEY)
        if self._shape is None or not isinstance(pvcs, PodVolumeClaims) or not pvcs.delay_binding:
            return np.zeros(n, np.int64)
        parts = _ScoreParts()
        self._binder.find_unbound(pvcs, snapshot, rows, None, parts)
        return self._score(parts, n)


    def _score(self, parts: _ScoreParts, n: int) -> fwk.Scores:
        assert self._shape is not None
        return score(self._shape, parts, n)

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
        got = self._binder.assume_pod_volumes(pod, node_name, found)
        if isinstance(got, Status):
            return got
        state.write(_RESERVED_KEY, got)
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Upstream's ``RevertAssumedPodVolumes``; idempotent."""
        reserved = state.get(_RESERVED_KEY)
        if isinstance(reserved, Reserved):
            self._binder.revert_assumed_pod_volumes(reserved.assumed)
            reserved.assumed = []

    @staticmethod
    def reserved(state: CycleState) -> Reserved | None:
        """What Reserve assumed for this cycle's pod (what PreBind writes)."""
        got = state.get(_RESERVED_KEY)
        return got if isinstance(got, Reserved) else None

    # --- PreBind -----------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``PreBindPreFlight``: Skip when every claim is bound (PreBind has nothing to
        do), an Error when Reserve found nothing for the node, else Success."""
        reserved = self.reserved(state)
        if reserved is not None and reserved.all_bound:
            return _SKIP
        if reserved is None or reserved.node_name != node_name:
            return Status.as_error(VolumeBindingError(f'no pod volumes found for node "{node_name}"'))
        return SUCCESS

    def pre_bind_wait(self, state: CycleState) -> float:
        """The longest PreBind may wait for this cycle's pod (``PreBindWaiter``): the bind timeout
        when Reserve left something to bind, else 0. The service adds it to the binding cycle's
        deadline, so a long wait for a provisioner is not cut short by the cycle's own timeout."""
        reserved = self.reserved(state)
        return 0.0 if reserved is None or reserved.all_bound else max(self.bind_timeout, 0.0)

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``PreBind`` (``BindPodVolumes``): write what Reserve assumed (each static
        binding's ``claimRef``, each provisioned claim's selected node), then wait until the PV
        controller and the provisioners bind every one of the pod's claims (``checkBindings``), for
        up to ``bindTimeoutSeconds``. A failure is an Error status with upstream's text; the
        framework then unreserves, which restores the assumed objects, and the pod is retried."""
        reserved = self.reserved(state)
        if reserved is not None and reserved.all_bound:
            return SUCCESS
        if reserved is None or reserved.node_name != node_name:
            return Status.as_error(VolumeBindingError(f'no pod volumes found for node "{node_name}"'))
        if self._client is None:
            return Status.as_error(VolumeBindingError("VolumeBinding has no API client"))
        snapshot = state.get(_SNAPSHOT_KEY)
        try:
            await self._binder.bind_pod_volumes(self._client, pod, node_name, reserved,
                                                snapshot if isinstance(snapshot, Snapshot) else None,
                                                self.bind_timeout)
        except VolumeBindingError as e:
            return Status.as_error(e)
        return SUCCESS

    # --- EnqueueExtensions -------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        """Upstream's, with SchedulerQueueingHints on: Node Add|UpdateNodeLabel (UpdateNodeTaint
        is registered only without hints) and PersistentVolume Add|Update have no hint; CSIDriver
        registers Update only."""
        add_update = frozenset({"Add", "Update"})
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("StorageClass", add_update),
                                         is_schedulable_after_storage_class_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolumeClaim", add_update),
                                         is_schedulable_after_pvc_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("PersistentVolume", add_update)),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", frozenset({"Add", "UpdateNodeLabel"}))),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("CSINode", add_update), is_schedulable_after_csi_node_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("CSIDriver", "Update"),
                                         is_schedulable_after_csi_driver_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("CSIStorageCapacity", add_update),
                                         is_schedulable_after_csi_storage_capacity_change))


# --- queueing hints (each raises TypeError for objects of the wrong kind: the queue then Queues) --
def _as(kind: type, event: fwk.ClusterEvent, *, old_may_be_none: bool = True) -> tuple[object, object]:
    """``util.As``: the event's objects as ``kind`` (the old one may be absent: an Add)."""
    old, new = event.old, event.new
    if not isinstance(new, kind) or not (isinstance(old, kind) or (old is None and old_may_be_none)):
        raise TypeError(f"expected {kind.__name__} objects, got {type(old).__name__} and {type(new).__name__}")
    return old, new


def is_schedulable_after_pvc_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """``isSchedulableAfterPersistentVolumeClaimChange``: Queue when the claim is in the pod's
    namespace and is one of its claims (a ``persistentVolumeClaim`` or a generic ephemeral volume's
    ``<pod>-<volume>``): its creation and almost any update of it may make the pod schedulable."""
    _, new = _as(PersistentVolumeClaim, event)
    assert isinstance(new, PersistentVolumeClaim)
    if new.namespace != pod.namespace:
        return False
    return any(new.name == (v.claim_name if v.claim_name is not None else f"{pod.name}-{v.name}")
               for v in pod.volumes if v.claim_name is not None or v.ephemeral)


def is_schedulable_after_storage_class_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """``isSchedulableAfterStorageClassChange``: Queue for a new class, or a change of its
    ``allowedTopologies`` (its binding mode cannot be updated)."""
    old, new = _as(StorageClass, event)
    assert isinstance(new, StorageClass) and (old is None or isinstance(old, StorageClass))
    return old is None or old.allowed_topologies != new.allowed_topologies


def is_schedulable_after_csi_node_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """``isSchedulableAfterCSINodeChange``: Queue for a new CSINode, or a change of its
    ``storage.alpha.kubernetes.io/migrated-plugins`` annotation (compared as the set of plugins
    it names, which is what the scheduler reads of it)."""
    if event.old is None:
        return True
    old, new = _as(CSINode, event)
    assert isinstance(old, CSINode) and isinstance(new, CSINode)
    return old.migrated_plugins != new.migrated_plugins


def is_schedulable_after_csi_driver_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """``isSchedulableAfterCSIDriverChange``: Queue when the pod has an inline ``csi`` volume of
    this driver and the driver's ``storageCapacity`` went from true to false (or unset)."""
    old, new = _as(CSIDriver, event, old_may_be_none=False)
    assert isinstance(old, CSIDriver) and isinstance(new, CSIDriver)
    return any(v.csi_driver == new.name and old.storage_capacity and not new.storage_capacity
               for v in pod.volumes)


def volume_limit(cap: CSIStorageCapacity) -> int | None:
    """``volumeLimit``: the largest volume the capacity object allows, ``maximumVolumeSize`` if set
    (it is more precise), else ``capacity``."""
    return cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity


def is_schedulable_after_csi_storage_capacity_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """``isSchedulableAfterCSIStorageCapacityChange``: Queue for a new object, or when its volume
    limit appeared or grew (its class and node topology cannot be updated)."""
    old, new = _as(CSIStorageCapacity, event)
    assert isinstance(new, CSIStorageCapacity) and (old is None or isinstance(old, CSIStorageCapacity))
    if old is None:
        return True
    new_limit, old_limit = volume_limit(new), volume_limit(old)
    return new_limit is not None and (old_limit is None or new_limit > old_limit)


def new(args: VolumeBindingArgs | None, handle: Handle) -> VolumeBinding:
    # The StorageCapacityScoring gate (beta and on in 1.37) from the process's --feature-gates.
    return VolumeBinding(handle.volumes, args, client=handle.client, assigned_pod=handle.assigned_pod,
                         storage_capacity_scoring=features.enabled(handle.feature_gates, "StorageCapacityScoring"))


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = VolumeBinding
    __: type[fwk.PreFilterPlugin] = VolumeBinding
    ___: type[fwk.EnqueueExtensions] = VolumeBinding
    ____: type[fwk.ReservePlugin] = VolumeBinding
    _____: type[fwk.PreScorePlugin] = VolumeBinding
    ______: type[fwk.BatchScorePlugin] = VolumeBinding
    _______: type[fwk.PreBindPlugin] = VolumeBinding
    ________: type[fwk.PreBindPreFlightPlugin] = VolumeBinding
    _________: type[fwk.PreBindWaiter] = VolumeBinding
