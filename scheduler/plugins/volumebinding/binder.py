"""The volume binder (upstream's ``binder.go``): which nodes a pod's claims can be bound or
provisioned for, what Reserve assumes, and PreBind's writes and wait. ``VolumeBinding``
(``volume_binding``) is the plugin around it; it holds the store the informers feed.

**GetPodVolumeClaims** sorts the pod's claims: *bound* (``spec.volumeName`` set and the
``pv.kubernetes.io/bind-completed`` annotation), *unbound, delayed* (a WaitForFirstConsumer class and
no volume name), or *unbound, immediate* (anything else). Bound ``local``-style PVs whose node
affinity names hostnames narrow the nodes (``eligible_nodes``, upstream's ``GetEligibleNodes``).

**FindPodVolumes** runs over all candidate rows at once:

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

All reasons of a row go in one UnschedulableAndUnresolvable status, in upstream's order. With a
``_ScoreParts``, the same pass records for Score the chosen PV's or capacity object's size per row.

**AssumePodVolumes** (Reserve) assumes in the volume store each PV matched on the chosen node with
its ``claimRef`` set and each claim to provision with ``volume.kubernetes.io/selected-node``, so the
next cycle neither hands that PV out again nor moves that claim (upstream's assume caches);
**RevertAssumedPodVolumes** (Unreserve) restores them.

**BindPodVolumes** (PreBind) writes what Reserve assumed through the client protocol: each static
binding's ``claimRef`` (``bind_volume``, conditional on the PV's resourceVersion), then each
claim's selected node (``select_node``, conditional on the claim's). An API error is raised with
the API's text (wrapped: a 409 here requeues the pod, it does not mean another scheduler bound
it). It then waits, up to ``bindTimeoutSeconds``, until every claim is bound as ``checkBindings``
sees it in the informer's objects (``VolumeStore.api_pv`` / ``api_pvc``, never the assumed ones):
an object not yet newer than the one written waits; a claim fully bound (``volumeName`` and
``pv.kubernetes.io/bind-completed``) whose PV's ``claimRef`` still names it with a uid, and whose PV's
node affinity admits the node, is done. The failures are upstream's texts (``context deadline
exceeded`` on timeout, ``ClaimRef got reset for pv "x"``, ``provisioning failed for PVC "x"`` when
the provisioner removed or changed the selected node, ...). The wait is a coroutine: it wakes when
the store changes one of the objects it waits for (``VolumeStore.watch``) and polls every
``POLL_INTERVAL`` (upstream's second) for the rest (the pod's deletion, the node's labels), so
neither the worker nor other pods' binding cycles wait on it. A zero timeout fails at once, as
upstream's expired context does.

Not here: in-tree PVs translated to CSI before the affinity check (``tryTranslatePVToCSI``: only
matters for PVs whose zone is in labels rather than node affinity).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import NodeTable, Snapshot
from scheduler.cache.volumes import VolumeStore
from scheduler.framework.interfaces import FilterVerdict, Rows
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import NodeSelector, Pod
from scheduler.model.volumes import (
    SELECTED_NODE_ANNOTATION,
    WAIT_FOR_FIRST_CONSUMER,
    PersistentVolume,
    PersistentVolumeClaim,
)
from scheduler.plugins.helpers import derived, requirement_mask
from scheduler.plugins.volumebinding.scorer import _ScoreParts

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient

ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
NOT_SUPPORTED_PROVISIONER = "kubernetes.io/no-provisioner"
HOSTNAME = "kubernetes.io/hostname"
BoolArray = npt.NDArray[np.bool_]
# PreBind's wait: upstream polls every second (wait.PollUntilContextTimeout); here the store's
# changes to the objects waited for wake the wait at once, and this poll catches what the store
# does not carry (the pod's deletion, the node's labels).
POLL_INTERVAL = 1.0
# The error PollUntilContextTimeout returns when bindTimeoutSeconds passes: the context's.
DEADLINE_EXCEEDED = "context deadline exceeded"
# The assume caches' descriptions, in their NotFound text ("could not find v1.PersistentVolume ...").
_PV_CACHE, _PVC_CACHE = "v1.PersistentVolume", "v1.PersistentVolumeClaim"

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


@dataclass(frozen=True, slots=True)
class StaticBinding:
    """upstream's ``BindingInfo`` after ``AssumePodVolumes``: ``pv`` is the informer's PV as Reserve
    read it (PreBind's write is conditional on its resourceVersion, and the wait compares the
    informer's next version against it), ``bound`` the same PV with ``claimRef`` set to ``claim``."""

    pv: PersistentVolume
    bound: PersistentVolume
    claim: PersistentVolumeClaim


@dataclass(frozen=True, slots=True)
class Provision:
    """A claim to provision: ``claim`` as Reserve read it, ``annotated`` with the selected node."""

    claim: PersistentVolumeClaim
    annotated: PersistentVolumeClaim


@dataclass(slots=True)
class Reserved:
    """What Reserve assumed for the pod on ``node_name`` (upstream's ``stateData.allBound`` and the
    node's ``PodVolumes``): the PVs pre-bound to their claims (``bindings``) and the claims
    annotated with the node (``provisions``), which PreBind writes and then waits for;
    ``assumed``, the objects shadowed in the store (Unreserve restores them); ``all_bound``:
    nothing to do."""

    all_bound: bool = True
    node_name: str = ""
    assumed: list[PersistentVolume | PersistentVolumeClaim] = field(default_factory=list)
    bindings: list[StaticBinding] = field(default_factory=list)
    provisions: list[Provision] = field(default_factory=list)


class VolumeBindingError(Exception):
    """A PreBind failure: the API refused a write, or the binding did not complete. Never a
    ``ClientError``: a 409 on a PV must requeue the pod, not read as "someone else bound it"."""


class VolumeBinder:
    """Upstream's ``volumeBinder`` over the store the informers feed (``volumes``);
    ``assigned_pod`` (the cache's pods by uid) tells PreBind's wait that the pod was deleted."""

    def __init__(self, volumes: VolumeStore, assigned_pod: Callable[[str], Pod | None] | None = None) -> None:
        self._volumes = volumes
        self._assigned_pod = assigned_pod

    # --- GetPodVolumeClaims, GetEligibleNodes ------------------------------------------------------
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

    def eligible_nodes(self, bound: list[PersistentVolumeClaim]) -> frozenset[str] | None:
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

    # --- FindPodVolumes ----------------------------------------------------------------------------
    def find_pod_volumes(self, pvcs: PodVolumeClaims, snapshot: Snapshot, rows: Rows,
                         record: PodVolumes | None = None, parts: _ScoreParts | None = None) -> FilterVerdict:
        """Upstream's ``FindPodVolumes`` on every row at once; ``record`` (one row) receives the
        static bindings and provisions found, ``parts`` what Score reads."""
        n = len(rows)
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
            bind_conflict, no_space, errors = self.find_unbound(pvcs, snapshot, rows, record, parts)
        return _verdict(n, node_conflict, bind_conflict, no_space, pv_missing, errors)

    def find_unbound(self, pvcs: PodVolumeClaims, snapshot: Snapshot, rows: Rows, record: PodVolumes | None = None,
                     parts: _ScoreParts | None = None) -> tuple[BoolArray, BoolArray, dict[int, str]]:
        """The delayed claims' part of ``FindPodVolumes`` per row: the bind conflicts, the rows
        short of storage, and the rows' errors (``findMatchingVolumes``, then
        ``checkVolumeProvisions``)."""
        t = snapshot.table
        n = len(rows)
        names = np.array(snapshot.node_names(rows), dtype=object)
        selected = [c for c in pvcs.delay_binding if SELECTED_NODE_ANNOTATION in c.annotations]
        to_match = [c for c in pvcs.delay_binding if SELECTED_NODE_ANNOTATION not in c.annotations]
        # The fast path: a claim with a selected node fits that node only, and ends the check.
        fast_fail = np.zeros(n, np.bool_)
        for c in selected:
            fast_fail |= names != c.annotations[SELECTED_NODE_ANNOTATION]
        provision: list[tuple[PersistentVolumeClaim, BoolArray]] = [(c, np.ones(n, np.bool_)) for c in selected]
        provision += self._match_claims(pvcs, to_match, t, rows, fast_fail, record, parts)
        outcome, decided, errors = self._check_provisions(provision, t, rows, parts)
        if record is not None and not fast_fail[0] and not decided[0]:
            record.dynamic_provisions.extend(c.name for c, applies in provision if applies[0])
        bind_conflict = fast_fail | (~fast_fail & (outcome == _BIND_CONFLICT))
        no_space = ~fast_fail & (outcome == _NO_SPACE)
        errors = {i: m for i, m in errors.items() if not fast_fail[i]}
        return bind_conflict, no_space, errors

    def _match_claims(self, pvcs: PodVolumeClaims, to_match: list[PersistentVolumeClaim], t: NodeTable,
                      rows: Rows, fast_fail: BoolArray, record: PodVolumes | None, parts: _ScoreParts | None
                      ) -> list[tuple[PersistentVolumeClaim, BoolArray]]:
        """``findMatchingVolumes``: per claim (smallest request first), the rows where it found no
        PV (they go on to provisioning), after recording the PV it took on the others."""
        n = len(rows)
        unmatched_rows: list[tuple[PersistentVolumeClaim, BoolArray]] = []
        taken: dict[str, BoolArray] = {}          # PV name -> rows where an earlier claim took it
        for c in sorted(to_match, key=lambda c: c.request or 0):
            unmatched, chosen_pvs, capacity, pv_class = self._match(
                c, pvcs.volumes_by_class.get(c.storage_class, []), t, rows, taken)
            for pv_name, mask in chosen_pvs.items():
                taken[pv_name] = taken.get(pv_name, np.zeros(n, np.bool_)) | mask
                if record is not None and mask[0] and not fast_fail[0]:
                    record.static_bindings.append((c.name, pv_name))
            if parts is not None and chosen_pvs:
                parts.static.append((pv_class, c.request or 0, capacity))
            unmatched_rows.append((c, unmatched))
        return unmatched_rows

    def _check_provisions(self, provision: list[tuple[PersistentVolumeClaim, BoolArray]], t: NodeTable, rows: Rows,
                          parts: _ScoreParts | None) -> tuple[npt.NDArray[np.int64], BoolArray, dict[int, str]]:
        """``checkVolumeProvisions`` over the rows each claim applies to: the first failing claim
        decides each row (its outcome, whether one did, and the rows' error texts)."""
        n = len(rows)
        outcome = np.zeros(n, np.int64)
        decided = np.zeros(n, np.bool_)
        errors: dict[int, str] = {}
        for c, applies in provision:
            o, message, node_capacity = self._provision_outcome(c, t, rows, parts is not None)
            if parts is not None and node_capacity is not None:
                parts.dynamic.append((c.storage_class, c.request or 0, np.where(applies, node_capacity, -1)))
            take = applies & ~decided & (o != _OK)
            outcome[take] = o[take]
            decided |= take
            if message:
                for i in np.flatnonzero(take & (o == _ERROR)).tolist():
                    errors[i] = message
        return outcome, decided, errors

    def _match(self, claim: PersistentVolumeClaim, pvs: list[PersistentVolume], t: NodeTable, rows: Rows,
               taken: dict[str, BoolArray]
               ) -> tuple[BoolArray, dict[str, BoolArray], npt.NDArray[np.int64], str]:
        """``volume.FindMatchingVolume`` for one claim on every row: the rows left unmatched, for
        each chosen PV the rows it was chosen on, the chosen PV's capacity per row (-1: none) and
        the chosen PVs' class (what Score groups by)."""
        n = len(rows)
        prebound = next((pv for pv in pvs if _bound_to(pv, claim)
                         and _basic_fit(pv, claim)), None)
        if prebound is not None:
            # Upstream returns the pre-bound PV at once: a row it does not fit gets no PV at all.
            ok = pv_affinity_mask(t, prebound.node_affinity)[rows]
            if prebound.name in taken:
                ok &= ~taken[prebound.name]
            return ~ok, {prebound.name: ok}, np.where(ok, prebound.capacity or 0, -1), prebound.storage_class
        cands = [pv for pv in pvs if pv.claim_ref is None and _basic_fit(pv, claim) and _available_fit(pv, claim)]
        if not cands:
            return np.ones(n, np.bool_), {}, np.full(n, -1, np.int64), claim.storage_class
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
        sizes = np.array([pv.capacity or 0 for pv in cands], np.int64)
        # Every candidate passed _available_fit: its class is the claim's.
        return ~any_fit, chosen, np.where(any_fit, sizes[first], -1), claim.storage_class

    def _provision_outcome(self, claim: PersistentVolumeClaim, t: NodeTable, rows: Rows, want_capacity: bool = False
                           ) -> tuple[npt.NDArray[np.int64], str, npt.NDArray[np.int64] | None]:
        """``checkVolumeProvisions`` for one claim, per row; with ``want_capacity``, also the
        capacity of the CSIStorageCapacity ``hasEnoughCapacity`` chose per row (-1: none), or
        ``None`` when the claim's driver publishes no capacity (upstream's nil ``NodeCapacity``)."""
        n = len(rows)
        if not claim.storage_class:
            return np.full(n, _ERROR, np.int64), f'no class for claim "{claim.key}"', None
        sc = self._volumes.storage_class(claim.storage_class)
        if sc is None:
            return np.full(n, _ERROR, np.int64), f'failed to find storage class "{claim.storage_class}"', None
        if not sc.provisioner or sc.provisioner == NOT_SUPPORTED_PROVISIONER:
            return np.full(n, _BIND_CONFLICT, np.int64), "", None
        out = np.where(topology_mask(t, sc.allowed_topologies)[rows], _OK, _BIND_CONFLICT).astype(np.int64)
        driver = self._volumes.csi_driver(sc.provisioner)
        if claim.request is None or driver is None or not driver.storage_capacity:
            return out, "", None
        # hasEnoughCapacity: some capacity object of the class, reachable from the node, is big
        # enough; the first such object (in the store's order, as the lister's) is the node's.
        enough = np.zeros(n, np.bool_)
        chosen = np.full(n, -1, np.int64) if want_capacity else None
        for cap in self._volumes.capacities():
            limit = cap.maximum_volume_size if cap.maximum_volume_size is not None else cap.capacity
            if (cap.storage_class == sc.name and limit is not None and limit >= claim.request
                    and cap.node_topology is not None):
                mask = np.ones(t.capacity, np.bool_)
                for r in cap.node_topology.requirements:
                    mask &= requirement_mask(t, r)
                reach = mask[rows]
                if chosen is not None:
                    # Upstream reads Capacity.Value() of the chosen object (a nil capacity beside a
                    # sufficient maximumVolumeSize would panic there): 0 here.
                    chosen[reach & ~enough] = cap.capacity or 0
                enough |= reach
        out[(out == _OK) & ~enough] = _NO_SPACE
        return out, "", chosen

    # --- AssumePodVolumes, RevertAssumedPodVolumes --------------------------------------------------
    def assume_pod_volumes(self, pod: Pod, node_name: str, found: PodVolumes) -> Reserved | Status:
        """Upstream's ``AssumePodVolumes`` for what ``find_pod_volumes`` found on ``node_name``: a PV
        matched there is assumed pre-bound to its claim (``claimRef``), a claim to provision is
        assumed annotated with the node, so the next cycle does not hand them out again. An Error
        status (and nothing assumed) when an object is gone."""
        reserved = Reserved(False, node_name)
        for claim_name, pv_name in found.static_bindings:
            pv, claim = self._volumes.pv(pv_name), self._volumes.pvc(pod.namespace, claim_name)
            if pv is None or claim is None:
                self.revert_assumed_pod_volumes(reserved.assumed)
                return Status.as_error(ValueError(f'failed to assume PV "{pv_name}" for claim "{claim_name}"'))
            bound = pv
            if not _bound_to(pv, claim):        # a PV already pre-bound to it needs no assumption
                bound = replace(pv, claim_ref=(claim.namespace, claim.name, claim.uid))
                self._volumes.assume(bound)
                reserved.assumed.append(bound)
            reserved.bindings.append(StaticBinding(self._volumes.api_pv(pv.name) or pv, bound, claim))
        for claim_name in found.dynamic_provisions:
            claim = self._volumes.pvc(pod.namespace, claim_name)
            if claim is None:
                self.revert_assumed_pod_volumes(reserved.assumed)
                return Status.as_error(ValueError(f'failed to assume claim "{claim_name}"'))
            annotated = replace(claim, annotations={**claim.annotations, SELECTED_NODE_ANNOTATION: node_name})
            self._volumes.assume(annotated)
            reserved.assumed.append(annotated)
            reserved.provisions.append(
                Provision(self._volumes.api_pvc(claim.namespace, claim.name) or claim, annotated))
        return reserved

    def revert_assumed_pod_volumes(self, assumed: Sequence[PersistentVolume | PersistentVolumeClaim]) -> None:
        for obj in assumed:
            self._volumes.restore(obj)

    # --- BindPodVolumes ------------------------------------------------------------------------------
    async def bind_pod_volumes(self, client: SchedulerClient, pod: Pod, node_name: str, reserved: Reserved,
                               snapshot: Snapshot | None, timeout: float) -> None:
        """Upstream's ``BindPodVolumes``: write what Reserve assumed (``bindAPIUpdate``: the PVs
        first, then the claims; no API rollback if one fails), then wait for the binding. Raises
        ``VolumeBindingError``: the API's text for a write, ``binding volumes: ...`` for the wait."""
        try:
            for b in reserved.bindings:
                await client.bind_volume(b.bound, b.claim)
            for p in reserved.provisions:
                await client.select_node(p.claim, node_name)
        except Exception as e:  # the API's error text, as upstream returns the Update's error
            raise VolumeBindingError(str(e)) from e
        try:
            await self._wait_bound(pod, node_name, reserved, snapshot, timeout)
        except VolumeBindingError as e:
            raise VolumeBindingError(f"binding volumes: {e}") from e

    async def _wait_bound(self, pod: Pod, node_name: str, reserved: Reserved, snapshot: Snapshot | None,
                          timeout: float) -> None:
        """Upstream's ``wait.PollUntilContextTimeout(ctx, time.Second, bindTimeout, false,
        checkBindings)``, without blocking the loop: the check runs when the store changes one of the
        objects waited for (a watch, not a poll) and at least every ``POLL_INTERVAL``; raises
        ``VolumeBindingError`` with checkBindings' error, or the context's once the time is up (a
        zero timeout fails at once, as upstream's expired context does)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        if timeout <= 0:
            raise VolumeBindingError(DEADLINE_EXCEEDED)
        wake = asyncio.Event()

        def changed() -> None:      # called by the store, maybe from a watch handler's thread
            with contextlib.suppress(RuntimeError):     # the loop closed meanwhile
                loop.call_soon_threadsafe(wake.set)

        watching: dict[tuple[str, str, str], Callable[[], None]] = {}
        try:
            while True:
                wake.clear()
                wanted = self._watched(reserved)
                for key in wanted.keys() - watching.keys():
                    watching[key] = self._volumes.watch(*key, changed)
                if self._check_bindings(pod, node_name, reserved, snapshot):
                    return
                remaining = deadline - loop.time()
                if remaining <= 0:
                    raise VolumeBindingError(DEADLINE_EXCEEDED)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(wake.wait(), min(remaining, POLL_INTERVAL))
                if loop.time() >= deadline:
                    raise VolumeBindingError(DEADLINE_EXCEEDED)
        finally:
            for unwatch in watching.values():
                unwatch()

    def _watched(self, reserved: Reserved) -> dict[tuple[str, str, str], None]:
        """The store keys whose changes can end the wait: the bindings' PVs and claims, the claims
        to provision, and the PVs those claims were bound to meanwhile."""
        keys: dict[tuple[str, str, str], None] = {}
        for b in reserved.bindings:
            keys[("PersistentVolume", "", b.pv.name)] = None
            keys[("PersistentVolumeClaim", b.claim.namespace, b.claim.name)] = None
        for p in reserved.provisions:
            keys[("PersistentVolumeClaim", p.claim.namespace, p.claim.name)] = None
            got = self._volumes.api_pvc(p.claim.namespace, p.claim.name)
            if got is not None and got.volume_name:
                keys[("PersistentVolume", "", got.volume_name)] = None
        return keys

    def _check_bindings(self, pod: Pod, node_name: str, reserved: Reserved, snapshot: Snapshot | None) -> bool:
        """Upstream's ``checkBindings`` on the informer's objects (never the assumed ones, which
        a later cycle may have changed): True once every claim is fully bound, False to keep
        waiting; raises ``VolumeBindingError`` when binding must be retried."""
        row = snapshot.row_of(node_name) if snapshot is not None else None
        if snapshot is None or row is None:
            raise VolumeBindingError(f'failed to get node "{node_name}": node "{node_name}" not found')
        labels = snapshot.node_info(row).node.labels
        if self._assigned_pod is not None and self._assigned_pod(pod.uid) is None:
            # When the pod is deleted, binding is cancelled: no need to check PVs and PVCs any more.
            raise VolumeBindingError(f'pod does not exist any more: pod "{pod.name}" not found')
        return (all(self._binding_done(b, labels, node_name) for b in reserved.bindings)
                and all(self._provision_done(p, labels, node_name) for p in reserved.provisions))

    def _binding_done(self, b: StaticBinding, labels: Mapping[str, str], node_name: str) -> bool:
        """``checkBindings`` for a static binding: its claim fully bound to the PV, whose
        ``claimRef`` still has a uid and whose affinity admits the node."""
        pv = self._volumes.api_pv(b.pv.name)
        if pv is None:
            raise VolumeBindingError(f'failed to check binding: could not find {_PV_CACHE} "{b.pv.name}"')
        pvc = self._volumes.api_pvc(b.claim.namespace, b.claim.name)
        if pvc is None:
            raise VolumeBindingError(f'failed to check binding: could not find {_PVC_CACHE} "{b.claim.key}"')
        if not _newer(pv, b.pv):
            return False        # our update is not in the informer yet
        if not _affinity_fits(pv, labels):
            raise VolumeBindingError(f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                                     "no matching NodeSelectorTerms")
        if pv.claim_ref is None or not pv.claim_ref[2]:
            raise VolumeBindingError(f'ClaimRef got reset for pv "{pv.name}"')
        return _fully_bound(pvc)

    def _provision_done(self, p: Provision, labels: Mapping[str, str], node_name: str) -> bool:
        """``checkBindings`` for a claim to provision: still annotated with the node, and fully
        bound to a PV whose affinity admits the node."""
        pvc = self._volumes.api_pvc(p.claim.namespace, p.claim.name)
        if pvc is None:
            raise VolumeBindingError(f'failed to check provisioning pvc: could not find {_PVC_CACHE} '
                                     f'"{p.claim.key}"')
        if not _newer(pvc, p.claim):
            return False
        if not pvc.annotations:
            raise VolumeBindingError(f'selectedNode annotation reset for PVC "{pvc.name}"')
        if pvc.annotations.get(SELECTED_NODE_ANNOTATION) != node_name:
            # A provisioner that fails removes the annotation to have the scheduler retry.
            raise VolumeBindingError(f'provisioning failed for PVC "{pvc.name}"')
        if pvc.volume_name:
            pv = self._volumes.api_pv(pvc.volume_name)
            if pv is None:
                return False    # not in the informer yet (or deleted: the claim unbinds)
            if not _affinity_fits(pv, labels):
                raise VolumeBindingError(f'pv "{pv.name}" node affinity doesn\'t match node "{node_name}": '
                                         "no matching NodeSelectorTerms")
        return _fully_bound(pvc)


def _newer(api: PersistentVolume | PersistentVolumeClaim, read: PersistentVolume | PersistentVolumeClaim) -> bool:
    """Whether the informer's ``api`` object is newer than the one PreBind wrote against (upstream
    compares the informer's resourceVersion with the write's answer; our write is conditional on
    ``read``'s, so any later version is ours or newer). Objects read without resourceVersions
    (tests) compare by identity: the store replaces an object on every watch event."""
    a, r = api.resource_version, read.resource_version
    if a.isdigit() and r.isdigit():
        return int(a) > int(r)
    return api is not read


def _fully_bound(pvc: PersistentVolumeClaim) -> bool:
    """``isPVCFullyBound``: a volume name and the ``pv.kubernetes.io/bind-completed`` annotation."""
    return bool(pvc.volume_name) and ANN_BIND_COMPLETED in pvc.annotations


def _affinity_fits(pv: PersistentVolume, labels: Mapping[str, str]) -> bool:
    """``volume.CheckNodeAffinity`` against a node that has only labels (as ``pv_affinity_mask``)."""
    return pv.node_affinity is None or pv.node_affinity.matches(labels, "")


def _bound_to(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """``IsVolumeBoundToClaim``."""
    ref = pv.claim_ref
    return ref is not None and ref[0] == claim.namespace and ref[1] == claim.name and ref[2] in ("", claim.uid)


def _basic_fit(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The checks FindMatchingVolume makes of every PV, pre-bound or not: size, volume mode, the
    volumeAttributesClassName (VolumeAttributesClass, GA and locked on: component-helpers
    storage/volume/pv_helpers.go checks it before it returns a pre-bound PV), not deleting."""
    return ((pv.capacity or 0) >= (claim.request or 0) and pv.volume_mode == claim.volume_mode
            and pv.volume_attributes_class == claim.volume_attributes_class and not pv.deleting)


def _available_fit(pv: PersistentVolume, claim: PersistentVolumeClaim) -> bool:
    """The checks for a PV not pre-bound to the claim: Available, selector, class, access modes."""
    return (pv.phase == "Available"
            and (claim.selector is None or claim.selector.matches(pv.labels))
            and pv.storage_class == claim.storage_class
            and claim.access_modes <= pv.access_modes)


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

