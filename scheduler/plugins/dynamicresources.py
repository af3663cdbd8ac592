"""DynamicResources, the scheduling-cycle half: ResourceClaims allocated on the node the pod goes to,
as upstream's ``dynamicresources`` plugin (``dynamicresources.go``, release 1.35/1.36, the
structured-parameters path; the store is ``scheduler.cache.dra``, the allocator
``scheduler.dra.allocator``).

**The pod's claims** (``foreach_pod_resource_claim``, upstream's ``foreachPodResourceClaim``): each
``spec.resourceClaims`` entry names a claim (``resourceClaimName``) or a template, whose generated
claim is in ``status.resourceClaimStatuses`` (not there yet: ``pod "ns/name": ResourceClaim not
created yet``; there with no name: no claim was needed, skipped). The claim must exist (the
lister's NotFound text), not be being deleted, and a generated one must be controlled by the pod.

**PreEnqueue**: the pod waits, gated, until every claim exists (the same checks). **PreFilter**:
the same checks (UnschedulableAndUnresolvable with the text), then Skip for a pod without claims;
an allocated claim restricts the nodes to its ``status.allocation.nodeSelector``; an unallocated
one must have no allocation in flight (``resource claim ns/name is in the process of being
allocated``) and every request's class must exist (``request r: device class c does not exist``),
and then an ``Allocator`` is built once for the cycle over the unallocated claims, the slices and
the devices already allocated (written, assumed or in flight).

**Filter** over the candidate rows: the allocated claims' node selectors as one row mask (columnar);
then the allocator per row, except that all rows no slice is for share one answer
(``allocate_without_pools``). A row the allocator cannot satisfy: ``cannot allocate all claims``;
else one where an allocated claim is not available: ``resourceclaim not available on the node``
(both UnschedulableAndUnresolvable, as upstream's ``statusUnschedulable``). An allocator error is
UnschedulableAndUnresolvable with its text (a constraint that cannot hold for All, an invalid pool,
admin access asked for), except a CEL error in a selector (it does not compile, or fails on a
device), which is an Error status: as upstream, the attempt stops rather than schedule a pod whose
claim or class is broken. The
allocation found for each node is kept in the cycle state for Reserve.

**Reserve** takes the allocation found for the chosen node and signals it in flight in the store:
its devices count as allocated at once, so the next cycle never gives them again, and no other pod
allocates the same claim meanwhile. **Unreserve** removes the in-flight allocations (and any
assumption), idempotently.

**PostFilter** (upstream's): when filtering failed, a claim that was allocated but unavailable on
some node and that no other pod reserves is the one to deallocate. Upstream writes
``status.allocation = nil`` at once; here that write is the edge's (see below), so PostFilter
records the claim (``DynamicResources.to_deallocate(state)``) and answers ``deallocation of
ResourceClaim completed`` only when the edge has a deallocator (``deallocate`` given), else
``still not schedulable``.

**What the edge must do** (PreBind and the writes; the client protocol has no claim method yet):
for each claim of ``DynamicResources.reserved(state)`` not yet reserved for the pod, as upstream's
``bindClaim``: add the finalizer ``resource.kubernetes.io/delete-protection`` (a normal update),
then write ``status.allocation`` (``AllocationResult.to_json()``, for claims allocated in this cycle)
and append ``{resource: pods, name, uid}`` to ``status.reservedFor`` with ``UpdateStatus``,
retrying on conflict with a fresh claim (failing if it got deleted or allocated elsewhere); then
``DraStore.assume`` the written claim and ``remove_pending_allocation``. On any failure the binding
cycle fails and Unreserve runs; upstream's Unreserve also removes the pod from ``reservedFor`` with a
strategic-merge patch. The store must be fed by informers on the four kinds (``cache.dra.KINDS``).

Not here: the Score (upstream has none for DRA in 1.36), extended resources backed by DRA
(``DeviceClass.extendedResourceName``: an implicit claim), the per-node filter timeout, PodGroup
claims, queueing hints (every registered event requeues, never less eager than upstream).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.cache.dra import DraStore, not_found
from scheduler.dra.allocator import AllocationError, Allocator, CELSelectorError, Node, SelectorCache
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    FilterVerdict,
    PostFilterContext,
    PostFilterResult,
    PreFilterResult,
    Rows,
)
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import NodeSelector, Pod
from scheduler.model.dra import FINALIZER, AllocationResult, ResourceClaim
from scheduler.plugins.helpers import node_selector_mask

__all__ = ["NAME", "DynamicResources", "Reserved", "new"]

NAME = "DynamicResources"
ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
ERR_CLAIM_NOT_CREATED = "ResourceClaim not created yet"
MSG_NO_CLAIMS = "no new claims to deallocate"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_STILL_UNSCHEDULABLE = "still not schedulable"
_STATE_KEY = NAME
_SKIP = Status(Code.SKIP)


@dataclass(slots=True)
class _State:
    """upstream's ``stateData``."""

    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    to_allocate: list[int] = field(default_factory=list)          # indices into claims
    available_on: list[NodeSelector | None] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    node_allocations: dict[str, list[AllocationResult]] = field(default_factory=dict)
    reserved: Reserved | None = None


@dataclass(slots=True)
class Reserved:
    """What Reserve did for the pod on ``node_name``: ``claims`` are the pod's claims as PreBind must
    leave them (with ``allocation`` set for those allocated in this cycle: ``allocated``, by
    index); each not yet reserved for the pod gets the pod added to ``reservedFor``."""

    node_name: str
    claims: list[ResourceClaim]
    allocated: list[int]


class DynamicResources:
    """Upstream's ``DynamicResources``: PreEnqueue, PreFilter, Filter, PostFilter, Reserve,
    EnqueueExtensions (PreBind is the edge's: see the module docstring)."""

    name = NAME
    filter_is_node_local = True     # reads the node and the store, never other nodes' pods
    pre_filter_reads_pods = False

    def __init__(self, dra: DraStore | None = None,
                 deallocate: Callable[[ResourceClaim], None] | None = None) -> None:
        self._dra = dra or DraStore()
        self._deallocate = deallocate
        self._cache = SelectorCache()

    # --- the pod's claims ----------------------------------------------------------------------
    def pod_claims(self, pod: Pod) -> tuple[list[ResourceClaim], str]:
        """upstream's ``foreachPodResourceClaim``: the claims, or the first problem's text."""
        claims: list[ResourceClaim] = []
        for pc in pod.resource_claims:
            must_check_owner = False
            if pc.resource_claim_name is not None:
                name: str | None = pc.resource_claim_name
            elif pc.resource_claim_template_name is not None:
                status = next((s for s in pod.resource_claim_statuses if s.name == pc.name), None)
                if status is None:
                    return [], f'pod "{pod.namespace}/{pod.name}": {ERR_CLAIM_NOT_CREATED}'
                name, must_check_owner = status.resource_claim_name, True
            else:
                return [], (f'pod "{pod.namespace}/{pod.name}", spec.resourceClaim "{pc.name}": '
                            "none of the supported fields are set")
            if name is None:
                continue
            claim = self._dra.claim(pod.namespace, name)
            if claim is None:
                return [], not_found("ResourceClaim", name)
            if claim.deleting:
                return [], f'resourceclaim "{claim.name}" is being deleted'
            if must_check_owner:
                if claim.namespace != pod.namespace:
                    return [], (f"ResourceClaim {claim.key} is not in the same namespace as Pod "
                                f"{pod.namespace}/{pod.name}")
                if claim.controller is None or claim.controller[3] != pod.uid:
                    return [], (f"ResourceClaim {claim.key} was not created for Pod {pod.namespace}/{pod.name} "
                                "(Pod is not owner)")
            claims.append(claim)
        return claims, ""

    # --- PreEnqueue --------------------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.resource_claims:
            return SUCCESS
        _, problem = self.pod_claims(pod)
        return Status.unresolvable(problem) if problem else SUCCESS

    # --- PreFilter ---------------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> tuple[PreFilterResult | None, Status]:
        s = _State()
        state.write(_STATE_KEY, s)
        if not pod.resource_claims:
            return None, _SKIP
        claims, problem = self.pod_claims(pod)
        if problem:
            return None, Status.unresolvable(problem)
        if not claims:
            return None, _SKIP
        s.available_on = [None] * len(claims)
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                # CanBeReserved is always true (no limit on reservedFor), so no "resourceclaim in use".
                s.available_on[i] = claim.allocation.node_selector
                continue
            s.to_allocate.append(i)
            if self._dra.has_pending_allocation(claim.uid):
                return None, Status.unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            for request in claim.spec.requests:
                subs = request.first_available or ((request.exactly,) if request.exactly is not None else ())
                if not subs:
                    return None, Status.as_error(ValueError(f"request {request.name}: unsupported request type"))
                for sub in subs:
                    qualified = request.name if not request.first_available else f"{request.name}/{sub.name}"
                    if not sub.device_class_name:
                        return None, Status.as_error(ValueError(f"request {qualified}: unsupported request type"))
                    if self._dra.device_class(sub.device_class_name) is None:
                        return None, Status.unresolvable(
                            f"request {qualified}: device class {sub.device_class_name} does not exist")
        s.claims = claims     # only now, as upstream: PostFilter has no claims when PreFilter failed
        if s.to_allocate:
            self._cache.reset(self._dra.slices_version)
            s.allocator = Allocator([claims[i] for i in s.to_allocate], self._dra.device_class, self._dra.slices(),
                                    self._dra.is_allocated, self._cache)
        return None, SUCCESS

    # --- Filter ------------------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        n = len(rows)
        s = state.read_or_compute(_STATE_KEY, _State, lambda: self.pre_filter(state, pod, snapshot))
        if s is None or not s.claims:
            return FilterVerdict.passed(n)
        t = snapshot.table
        unavailable = np.zeros(n, np.bool_)
        per_claim: list[tuple[int, np.ndarray]] = []
        for i, sel in enumerate(s.available_on):
            if sel is not None:
                miss = ~node_selector_mask(t, sel)[rows]
                if miss.any():
                    per_claim.append((i, miss))
                    unavailable |= miss
        statuses: list[Status] = [Status.unresolvable(ERR_CANNOT_ALLOCATE), Status.unresolvable(ERR_NOT_AVAILABLE)]
        ids = np.zeros(n, np.int64)
        failed = np.zeros(n, np.bool_)
        if s.allocator is not None:
            names = snapshot.node_names(rows)
            without: list[AllocationResult] | Status | None = None
            without_done = False
            for k in range(n):
                info = snapshot.node_info(int(rows[k]))
                node = Node(names[k], info.node.labels)
                try:
                    if s.allocator.has_slices(node):
                        got: list[AllocationResult] | Status | None = s.allocator.allocate(node)
                    else:
                        if not without_done:
                            without_done = True
                            without = s.allocator.allocate_without_pools()
                        got = without
                except CELSelectorError as e:
                    got = Status.as_error(e)
                except AllocationError as e:
                    got = Status.unresolvable(str(e))
                if isinstance(got, Status):
                    failed[k] = True
                    ids[k] = len(statuses)
                    statuses.append(got)
                elif got is None or len(got) != len(s.to_allocate):
                    failed[k] = True
                    ids[k] = 0
                elif not unavailable[k]:
                    s.node_allocations[names[k]] = got
        # Rows the allocator accepted but where an allocated claim is not available.
        not_available = unavailable & ~failed
        if not_available.any():
            for i, miss in per_claim:
                if (miss & not_available).any():
                    s.unavailable.add(i)
            ids[not_available] = 1
            failed |= not_available
        return FilterVerdict(failed, statuses, ids)

    # --- PostFilter --------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: PostFilterContext
                    ) -> tuple[PostFilterResult | None, Status]:
        if not pod.resource_claims:
            return None, Status(Code.UNSCHEDULABLE)
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return None, Status.unschedulable(MSG_NO_CLAIMS)
        for i in sorted(s.unavailable):
            claim = s.claims[i]
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                state.write(_STATE_KEY + "/deallocate", claim)
                if self._deallocate is not None:
                    self._deallocate(claim)
                    return None, Status.unschedulable(MSG_DEALLOCATED)
                break
        return None, Status.unschedulable(MSG_STILL_UNSCHEDULABLE)

    @staticmethod
    def to_deallocate(state: CycleState) -> ResourceClaim | None:
        """The claim PostFilter chose to deallocate (``status.allocation`` and ``reservedFor`` cleared)."""
        got = state.get(_STATE_KEY + "/deallocate")
        return got if isinstance(got, ResourceClaim) else None

    # --- Reserve / Unreserve -----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return SUCCESS
        claims = list(s.claims)
        if not s.to_allocate:
            s.reserved = Reserved(node_name, claims, [])
            return SUCCESS
        allocations = s.node_allocations.get(node_name)
        if allocations is None:
            return Status.as_error(ValueError("claim allocation not found for node"))
        if len(allocations) != len(s.to_allocate):
            return Status.as_error(ValueError(
                f"internal error, have {len(allocations)} allocations, {len(s.to_allocate)} claims to allocate"))
        for i, allocation in zip(s.to_allocate, allocations, strict=True):
            claim = claims[i]
            finalizers = claim.finalizers if FINALIZER in claim.finalizers else (*claim.finalizers, FINALIZER)
            claims[i] = replace(claim, allocation=allocation, finalizers=finalizers)
            self._dra.signal_pending_allocation(claims[i])
        s.reserved = Reserved(node_name, claims, list(s.to_allocate))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Idempotent: in-flight allocations removed, assumptions restored."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State):
            return
        for claim in s.claims:
            if self._dra.remove_pending_allocation(claim.uid):
                self._dra.restore(claim.namespace, claim.name)
        s.reserved = None

    @staticmethod
    def reserved(state: CycleState) -> Reserved | None:
        """What Reserve did for this cycle's pod: the edge's PreBind writes it."""
        s = state.get(_STATE_KEY)
        return s.reserved if isinstance(s, _State) else None

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        add_update = frozenset({"Add", "Update"})
        return (ClusterEventWithHint(ClusterEvent("Node", frozenset({"Add", "UpdateNodeLabel"}))),
                ClusterEventWithHint(ClusterEvent("ResourceClaim", add_update)),
                ClusterEventWithHint(ClusterEvent("Pod", "UpdatePodGeneratedResourceClaim")),
                ClusterEventWithHint(ClusterEvent("DeviceClass", add_update)),
                ClusterEventWithHint(ClusterEvent("ResourceSlice", add_update)))


def new(args: None, handle: Handle) -> DynamicResources:
    return DynamicResources(handle.dra)


if TYPE_CHECKING:
    from scheduler.framework.interfaces import (
        BatchFilterPlugin,
        EnqueueExtensions,
        PostFilterPlugin,
        PreEnqueuePlugin,
        PreFilterPlugin,
        ReservePlugin,
    )

    _: type[BatchFilterPlugin] = DynamicResources
    __: type[PreFilterPlugin] = DynamicResources
    ___: type[EnqueueExtensions] = DynamicResources
    ____: type[ReservePlugin] = DynamicResources
    _____: type[PreEnqueuePlugin] = DynamicResources
    ______: type[PostFilterPlugin] = DynamicResources
