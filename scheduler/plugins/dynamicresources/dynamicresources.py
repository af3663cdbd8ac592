"""DynamicResources: ResourceClaims allocated on the node the pod goes to, as upstream's
``dynamicresources`` plugin (``dynamicresources.go``, the structured-parameters path; the store is
``scheduler.cache.dra``, the allocator ``scheduler.dra.allocator``). The package around this module
holds its cycle state (``state``), Filter's counting (``counting``), the extended resources backed
by DRA (``extendeddynamicresources``) and the API writes of PreBind and Unreserve (``binding``).

**The pod's claims** (``pod_claims``, upstream's ``foreachPodResourceClaim``): each
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
(``allocate_without_pools``), and rows whose claims count are decided by counting (``counting``).
A row the allocator cannot satisfy: ``cannot allocate all claims``; else one where an allocated
claim is not available: ``resourceclaim not available on the node`` (both
UnschedulableAndUnresolvable, as upstream's ``statusUnschedulable``). An allocator error that
concerns only the node (upstream's ``ErrFailedAllocationOnNode``: ``invalid resource pools were
encountered``) is UnschedulableAndUnresolvable with its text; any other (a CEL selector that does
not compile or fails on a device, a constraint that cannot hold for All, admin access or capacity
requests with their gate off) is an Error status with its text: as upstream's Filter, the attempt
stops rather than schedule a pod whose claim or class is broken, and the pod retries with backoff.
Each node's search has its own deadline, DynamicResourcesArgs.filterTimeout (10s; 0 or the
DRASchedulerFilterTimeout gate off: none); past it, Filter's Error ``node <name>: timed out trying
to allocate devices`` (an Error since kubernetes#137607: the pod backs off and retries, where an
unschedulable pod would wait for an event). Rows that counting decides run no search, so no deadline.
The allocation found for each node is kept in the cycle state for Reserve.

**Reserve** takes the allocation found for the chosen node and signals it in flight in the store:
its devices count as allocated at once, so the next cycle never gives them again, and no other pod
allocates the same claim meanwhile. **Unreserve** removes the in-flight allocations (and any
assumption), idempotently, and the pod from ``reservedFor`` of each allocated claim reserved for it
(upstream's strategic-merge patch, spawned; a failure is logged as upstream's).

**PostFilter** (upstream's): when filtering failed, a claim that was allocated but unavailable on
some node and that no other pod reserves is the one to deallocate: its ``status.allocation``,
``reservedFor`` and ``devices`` are cleared through the client (``deallocate_claim``, conditional
on the version read), and the answer is ``deallocation of ResourceClaim completed``; otherwise
Unschedulable with no reason (1.37: the no-op answers carry no text, which every pod's
FailedScheduling message would carry). Upstream makes that write inside PostFilter; here
PostFilter is synchronous, so the write is spawned off the cycle (``Handle.spawn``) and a failure is
logged (the claim stays allocated; the next attempt's PostFilter tries again). Without a client (a
test's ``deallocate`` callback aside) nothing can be deallocated.

**PreBindPreFlight**: Skip for a pod without claims, so its binding cycle never enters PreBind.
**PreBind**: ``bindClaim`` (``binding``) for each claim not yet reserved for the pod.

The store is fed by the service's ``on_dra_object`` for the DRA kinds (``cache.dra.KINDS``); a
DeviceTaintRule that changes some device's taints reaches the queue as a ResourceSlice update, as
upstream's slice tracker turns it into one.

**Queueing hints** (upstream's, with SchedulerQueueingHints on): a claim's add or update requeues
the pods that use it when it was created or its status changed, and every pod when a claim got
deallocated; a pod's own update requeues it once all its claims exist; DeviceClass and
ResourceSlice events requeue without a hint; Node Add, UpdateNodeLabel, UpdateNodeAllocatable.

**Score** (KEP-4816's prioritized-list scoring): a node where the allocator could satisfy a
``firstAvailable`` request with a better-ranked subrequest scores higher, ``8 - i`` for the
``i``-th subrequest chosen (``FirstAvailableDeviceRequestMaxSize`` is 8), summed over the requests
of the claims this cycle allocates. An allocated claim's devices are fixed, so it scores nothing
(upstream's ``computeScore`` once walked all the claims and failed for a pod with an allocated and
an unallocated one). The subrequest chosen is read off the allocation Filter already found for the
node (its results name ``request/subrequest``), as upstream's ``computeScore`` reads it; nothing is
allocated again. The sum is taken in Filter's own per-node loop, right where the node's allocation
is kept, into a column by snapshot row (only for a pod with such a request: ``_State.ranks``), so
Score is one gather over the candidate rows, and for any other pod (no claims: every pod in the
default profile that uses no DRA) a column of zeros. **NormalizeScore** is upstream's
``helper.DefaultNormalizeScore`` (``score * 100 // max``; all zero stays all zero), not the KEP's
``(score - min) * 100 / (max - min)``: the PR's review replaced it. There is no PreScore (upstream
has none), so the plugin scores every pod, with 0 on every node for a pod without claims, which
leaves the totals and the choice as they were. Weight 1: upstream's default profile lists
DynamicResources in multiPoint without a weight, and an unset weight is 1.

**Device taints and binding conditions** are the allocator's (``features``, from the process's
gates: ``Features.from_gates``); PreBind's wait for binding conditions, and Filter's check of a claim
whose binding failed or timed out, are ``bindingconditions``'; while it waits, PreBind posts the
pod's ``Normal BindingConditionsPending`` event (``waiting for binding conditions for device on node
<node>``).

Not here: the per-node filter timeout, PodGroup claims, the
``scheduler_resourceclaim_creates_total`` metric, and upstream's wait (up to 120 s) for the created
claim to reach the assume cache (here the written claim is assumed at once).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler.cache import Snapshot
from scheduler.cache.dra import DraStore, not_found
from scheduler.dra.allocator import (
    Allocator,
    Features,
    SliceIndex,
)
from scheduler.dra.extended import SPECIAL_CLAIM_NAME
from scheduler.features import enabled
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState, StateMissingError
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.handle import Handle
from scheduler.framework.signature import SignFragment, unsignable
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.dra import FINALIZER, ResourceClaim
from scheduler.plugins.args import DynamicResourcesArgs
from scheduler.plugins.dynamicresources.binding import DynamicResourcesError, bind_claim, delete_claim, unreserve_claim
from scheduler.plugins.dynamicresources.bindingconditions import (
    DEFAULT_BINDING_TIMEOUT,
    BindingConditionsError,
    blocked,
    has_binding_conditions,
    wait_until_ready,
)
from scheduler.plugins.dynamicresources.counting import FreeCounts
from scheduler.plugins.dynamicresources.extendeddynamicresources import extended_variant, pre_filter_extended
from scheduler.plugins.dynamicresources.filter_pass import _NO_RESULTS, _FilterPass
from scheduler.plugins.dynamicresources.state import _NO_CLAIMS, Reserved, _State
from scheduler.plugins.helpers import default_normalize_score, node_selector_mask, selector_cache

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient

__all__ = ["NAME", "DynamicResources", "DynamicResourcesError", "Reserved", "new"]

log = logging.getLogger("kopf_scheduler.dynamicresources")

NAME = "DynamicResources"
ERR_CLAIM_NOT_CREATED = "ResourceClaim not created yet"
MSG_DEALLOCATED = "deallocation of ResourceClaim completed"
MSG_DELETED = "deletion of ResourceClaim completed"
# PreBind's Normal event while it waits for binding conditions (reason, action "Scheduling").
BINDING_CONDITIONS_PENDING = "BindingConditionsPending"
_STATE_KEY = NAME
# resourceapi.FirstAvailableDeviceRequestMaxSize: at most 8 subrequests; the i-th chosen scores 8 - i.
FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE = 8
_SKIP = Status(Code.SKIP)
_NOOP = Status(Code.UNSCHEDULABLE)      # PostFilter did nothing: Unschedulable, no reason (1.37)
_NO_INDICES: tuple[int, ...] = ()
_UNSET: Any = object()


class DynamicResources:
    """Upstream's ``DynamicResources``: PreEnqueue, PreFilter, Filter, PostFilter, Score
    (NormalizeScore), Reserve, PreBindPreFlight, PreBind, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # reads the node and the store, never other nodes' pods
    pre_filter_reads_pods = False

    def __init__(self, dra: DraStore | None = None,
                 deallocate: Callable[[ResourceClaim], None] | None = None, *,
                 client: SchedulerClient | None = None,
                 spawn: Callable[[Coroutine[Any, Any, None]], None] | None = None,
                 features: Features = Features(),  # noqa: B008 (frozen)
                 binding_timeout: float = DEFAULT_BINDING_TIMEOUT) -> None:
        # Not ``dra or DraStore()``: an empty store is falsy, and the service's store, empty when
        # the profile is compiled, is the one its informers feed.
        self._dra = dra if dra is not None else DraStore()
        self._client = client
        self._spawn_fn = spawn
        if deallocate is None and client is not None:
            deallocate = self._deallocate_through_client
        self._deallocate = deallocate
        self._cache = selector_cache(self._dra)
        self._index: tuple[int, SliceIndex] | None = None
        self._counts = FreeCounts(self._dra)     # Filter's free-device counts (``counting``)
        # The allocator's features, from the process's gates (``new``; 1.37's defaults), and
        # DynamicResourcesArgs.bindingTimeout, in seconds.
        self._features = features
        self.binding_timeout = binding_timeout
        self.binding_poll_interval = 5.0         # PreBind's poll (a test shortens it)
        self.count_free = True      # False: search every node, as before counting (tests compare)
        # pluginConfig's DynamicResourcesArgs, defaulted (filterTimeout 10s, bindingTimeout 10m).
        self.args = DynamicResourcesArgs()
        # The per-node search deadline in seconds (``new``: filterTimeout with its gate on), or None.
        self.filter_timeout: float | None = None

    def _slice_index(self) -> SliceIndex:
        """The slices indexed once per store version of the slices (``DraStore.slices_version``
        moves with every slice or class change), not once per pod: indexing all of a 500-node
        cluster's slices was a seventh of each DRA pod's cycle (py-spy)."""
        version = self._dra.slices_version
        if self._index is None or self._index[0] != version:
            self._index = (version, SliceIndex(self._dra.slices(), self._features.partitionable_devices))
        return self._index[1]

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run an API write off the cycle (Unreserve and PostFilter are synchronous here)."""
        if self._spawn_fn is not None:
            self._spawn_fn(coro)
            return
        try:
            asyncio.get_running_loop().create_task(coro)
        except RuntimeError:        # no loop (a direct call in a test): the write cannot happen
            coro.close()
            log.warning("DynamicResources: no event loop to write the claim on")

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
    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with claims has no signature, as upstream (which of its claims are
        node-local is not simple to tell, kubernetes#134986), nor one asking for an extended
        resource a DeviceClass backs (its claim is made here)."""
        if pod.resource_claims:
            return unsignable("pods with dra resource claims are not signable")
        if any("/" in name and self._dra.extended_resource_class(name) is not None for name in pod.requests):
            return unsignable("pods with dra extended resources are not signable")
        return (), SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> tuple[fwk.PreFilterResult | None, Status]:
        if not pod.resource_claims and not pod.container_requests:
            # The common case, in the default profile for every pod: one shared empty state (never
            # written to: every later point returns at once for a state without claims), Skip.
            state.write(_STATE_KEY, _NO_CLAIMS)
            return None, _SKIP
        s = _State()
        state.write(_STATE_KEY, s)
        claims, problem = self.pod_claims(pod)
        if problem:
            return None, Status.unresolvable(problem)
        extended = pre_filter_extended(self._dra, pod, s)
        if extended is not None:
            s.extended = len(claims)
            s.extended_uid = extended.uid
            claims.append(extended)
        if not claims:
            return None, _SKIP
        s.available_on = [None] * len(claims)
        now = time.time()
        for i, claim in enumerate(claims):
            if claim.allocation is not None:
                # CanBeReserved is always true (no limit on reservedFor), so no "resourceclaim in use".
                s.available_on[i] = claim.allocation.node_selector
                # Filter's binding check: a claim whose binding failed or timed out is available
                # nowhere (node-independent, so decided once here), for PostFilter to deallocate.
                if self._features.device_binding_and_status and blocked(claim, self.binding_timeout, now):
                    s.blocked.append(i)
                continue
            s.to_allocate.append(i)
            if self._dra.has_pending_allocation(claim.uid):
                return None, Status.unresolvable(f"resource claim {claim.key} is in the process of being allocated")
            if i == s.extended:
                # Its requests are the node's (Filter); a claim from an earlier cycle is Filter's too.
                continue
            bad = self._check_requests(claim, i, s)
            if bad is not None:
                return None, bad
        s.claims = claims     # only now, as upstream: PostFilter has no claims when PreFilter failed
        if s.to_allocate:
            self._cache.reset(self._dra.slices_version)
            # A device some claims share is not held whole (``is_held_whole``); the plain test
            # while no claim shares one, and with DRAConsumableCapacity off (then upstream's
            # GatherAllocatedState counts a shared result as a device held whole).
            dra = self._dra
            shares = dra.has_shares and self._features.consumable_capacity
            held = dra.is_held_whole if shares else dra.is_allocated
            s.allocator = Allocator([claims[i] for i in s.to_allocate], dra.device_class, (), held, self._cache,
                                    self._features, index=self._slice_index(), pool_allocated=dra.pool_allocated,
                                    device_allocated=dra.is_allocated,
                                    consumed_capacity=dra.consumed_capacity if shares else None,
                                    pool_stamp=dra.pool_stamp, pool_changes=dra.pool_changes)
        return None, SUCCESS

    def _check_requests(self, claim: ResourceClaim, i: int, s: _State) -> Status | None:
        """PreFilter's check of an unallocated claim's requests: each (sub)request names a device
        class that exists; for a ``firstAvailable`` request, computeScore's rank table (built once
        per cycle rather than per node). The failing status, or ``None``."""
        for request in claim.spec.requests:
            subs = request.first_available or ((request.exactly,) if request.exactly is not None else ())
            if not subs:
                return Status.as_error(ValueError(f"request {request.name}: unsupported request type"))
            for rank, sub in enumerate(subs):
                qualified = request.name if not request.first_available else f"{request.name}/{sub.name}"
                if not sub.device_class_name:
                    return Status.as_error(ValueError(f"request {qualified}: unsupported request type"))
                if self._dra.device_class(sub.device_class_name) is None:
                    return Status.unresolvable(
                        f"request {qualified}: device class {sub.device_class_name} does not exist")
                if request.first_available:
                    s.ranks.setdefault(i, {})[qualified] = FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE - rank
        return None

    # --- Filter ------------------------------------------------------------------------------------
    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        n = len(rows)
        s = state.read_or_compute(_STATE_KEY, _State, lambda: self.pre_filter(state, pod, snapshot))
        if s is None or not s.claims:
            return fwk.FilterVerdict.passed(n)
        t = snapshot.table
        unavailable = np.zeros(n, np.bool_)
        per_claim: list[tuple[int, np.ndarray]] = []
        for i, sel in enumerate(s.available_on):
            if sel is not None:
                miss = ~node_selector_mask(t, sel)[rows]
                if miss.any():
                    per_claim.append((i, miss))
                    unavailable |= miss
        for i in s.blocked:
            per_claim.append((i, np.ones(n, np.bool_)))
            unavailable[:] = True
        f = _FilterPass(s, snapshot, rows, unavailable, self.filter_timeout)
        if s.allocator is not None or s.extended >= 0:
            self._filter_rows(f, pod)
        # Rows the allocator accepted but where an allocated claim is not available.
        not_available = unavailable & ~f.failed
        if not_available.any():
            for i, miss in per_claim:
                if (miss & not_available).any():
                    s.unavailable.add(i)
            f.ids[not_available] = 1
            f.failed |= not_available
        return fwk.FilterVerdict(f.failed, f.statuses, f.ids)

    def _filter_rows(self, f: _FilterPass, pod: Pod) -> None:
        """The allocator's verdict per row: by counting where the row's claims count (decided for
        all such rows at once, after the loop), else by a search. The loop is the hot path of a
        DRA pod's cycle: it stays inline (a method call per row cost a quarter of it)."""
        s = f.s
        names, infos, counting = f.names, f.infos, f.counting
        may_count = self.count_free and s.allocator is not None and not s.ranks
        has_user_claims = s.extended < 0 or len(s.claims) > 1
        extended_names = tuple(s.extended_requests)
        one_name = extended_names[0] if len(extended_names) == 1 else None
        user_key: tuple[str, ...] = (str(len(s.to_allocate)),)
        for k, row in enumerate(f.rows.tolist()):
            indices: Sequence[int] = s.to_allocate
            claims: Sequence[ResourceClaim] | None = None
            key = user_key
            if s.extended >= 0:
                info = infos[row]
                assert info is not None
                allocatable = info.node.allocatable
                # (one resource, the usual: its amount, not a tuple made per node)
                kind: object = allocatable.get(one_name) if one_name is not None else \
                    tuple([allocatable.get(name) for name in extended_names])
                v = s.extended_by_node_kind.get(kind)
                if v is None:
                    v = s.extended_by_node_kind[kind] = extended_variant(self._dra, s, pod, allocatable)
                if v.status is not None:
                    f.fail(k, v.status)
                    continue
                if v.claim is None:
                    if not has_user_claims:
                        s.node_indices[names[k]] = _NO_INDICES  # the device plugins provide it all
                        s.node_results[names[k]] = _NO_RESULTS
                        continue
                else:
                    s.node_extended[names[k]] = v
                indices, claims, key = v.indices, v.claims, v.key
            if may_count and indices:
                group = counting.get(id(claims), _UNSET)
                if group is _UNSET:
                    group = f.counting_group(indices, claims, key)
                if group is not None:
                    group[4].append(k)
                    continue
            f.search(k, indices, claims, key)
        f.settle_counts(self._counts)

    # --- PostFilter --------------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: fwk.PostFilterContext
                    ) -> tuple[fwk.PostFilterResult | None, Status]:
        """Upstream's PostFilter, with the no-op answers carrying no reason (kubernetes#140222, in
        1.37: "no new claims to deallocate" and "still not schedulable" are no longer appended to
        the pod's FailedScheduling message; only a deallocation, actual work, is reported). A state
        PreFilter never wrote (an earlier PreFilter rejected the pod) reads as "no claims" here:
        upstream's getStateData would make that an Error and stop DefaultPreemption."""
        if not pod.resource_claims and not pod.container_requests:
            return None, _NOOP
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return None, _NOOP
        extended = s.claims[s.extended] if s.extended >= 0 else None
        stale = extended is not None and extended.name != SPECIAL_CLAIM_NAME
        for i in sorted(s.unavailable):
            if i == s.extended:
                if stale:
                    break       # deleted below
                continue
            claim = s.claims[i]
            reserved = claim.reserved_for
            if not reserved or (len(reserved) == 1 and reserved[0].uid == pod.uid):
                state.write(_STATE_KEY + "/deallocate", claim)
                if self._deallocate is not None:
                    self._deallocate(claim)
                    return None, Status.unschedulable(MSG_DEALLOCATED)
                break
        if stale and extended is not None and self._client is not None:
            # The extended-resource claim of an earlier cycle: deleted, and the pod tries anew.
            self._spawn(delete_claim(self._client, extended))
            return None, Status.unschedulable(MSG_DELETED)
        return None, _NOOP

    @staticmethod
    def to_deallocate(state: CycleState) -> ResourceClaim | None:
        """The claim PostFilter chose to deallocate (``status.allocation`` and ``reservedFor`` cleared)."""
        got = state.get(_STATE_KEY + "/deallocate")
        return got if isinstance(got, ResourceClaim) else None

    # --- Score -------------------------------------------------------------------------------------
    def uniform_score(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> int | None:
        """UniformScorePlugin: 0 on every row when Filter kept no rank sums (no claims, or none with
        a ``firstAvailable`` request); None otherwise, and when the state is missing (Score then
        returns upstream's error)."""
        s = state.get(_STATE_KEY)
        return 0 if isinstance(s, _State) and s.scores is None else None

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        """Upstream's ``Score`` over the candidate rows: the rank sums Filter kept (0 for a node it
        kept none for, and for every node when the pod has no claims or no ``firstAvailable``
        request to allocate). A state PreFilter never wrote is upstream's getStateData error."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State):
            raise StateMissingError(f"error reading {_STATE_KEY!r} from cycleState: not found")
        if s.scores is None:
            return np.zeros(len(rows), np.int64)
        return s.scores[rows]           # a gather: a copy, which NormalizeScore may scale in place

    def normalize_score(self, state: CycleState, pod: Pod, scores: fwk.Scores) -> Status:
        """Upstream's ``NormalizeScore``: ``helper.DefaultNormalizeScore(MaxNodeScore, false)``."""
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return self

    # --- Reserve / Unreserve -----------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State) or not s.claims:
            return SUCCESS
        claims = list(s.claims)
        if not s.to_allocate:
            s.reserved = Reserved(node_name, claims, [])
            return SUCCESS
        allocations = s.allocations_on(node_name)
        if allocations is None:
            return Status.as_error(ValueError("claim allocation not found for node"))
        users = [i for i in s.to_allocate if i != s.extended]
        if any(i not in allocations for i in users):
            return Status.as_error(ValueError(
                f"internal error, have {len(allocations)} allocations, {len(s.to_allocate)} claims to allocate"))
        extended = s.node_extended.get(node_name)
        for i, allocation in allocations.items():
            s.allocations[i] = allocation
            # The extended-resource claim: the node's variant of it (its requests), allocated.
            claim = extended.claim if i == s.extended and extended is not None and extended.claim is not None \
                else claims[i]
            finalizers = claim.finalizers if FINALIZER in claim.finalizers else (*claim.finalizers, FINALIZER)
            claims[i] = replace(claim, allocation=allocation, finalizers=finalizers)
            self._dra.signal_pending_allocation(claims[i])
        s.reserved = Reserved(node_name, claims, sorted(allocations))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """Upstream's Unreserve, idempotent: in-flight allocations removed (and their assumption
        restored); a claim PreBind reserved for the pod (or that was reserved before) gets the pod
        removed from ``reservedFor`` with upstream's strategic-merge patch, off the cycle (upstream
        logs a failed patch: the next attempt gets here again)."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State):
            return
        for i, claim in enumerate(s.claims):
            if i == s.extended:
                continue
            if self._dra.remove_pending_allocation(claim.uid):
                self._dra.restore(claim.namespace, claim.name)
            if claim.allocation is not None and claim.is_reserved_for(pod.uid) and self._client is not None:
                self._spawn(unreserve_claim(self._client, claim, pod))
        if s.extended >= 0:
            # unreserveExtendedResourceClaim: the in-flight allocation (under PreFilter's uid) ends,
            # and a claim written to the API is deleted, lest it be orphaned.
            claim = s.claims[s.extended]
            if self._dra.remove_pending_allocation(s.extended_uid):
                self._dra.restore(claim.namespace, claim.name)
            if claim.name != SPECIAL_CLAIM_NAME and self._client is not None:
                self._spawn(delete_claim(self._client, claim))
        s.reserved = None

    def _deallocate_through_client(self, claim: ResourceClaim) -> None:
        client = self._client
        assert client is not None

        async def deallocate() -> None:
            try:
                await client.deallocate_claim(claim)
            except Exception as e:  # the claim stays allocated; a later PostFilter tries again
                log.error("deallocation of ResourceClaim %s failed: %s", claim.key, e)
        self._spawn(deallocate())

    # --- PreBind -----------------------------------------------------------------------------------
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``PreBindPreFlight``: Skip for a pod without claims, else Success."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State):
            return Status.as_error(StateMissingError(f"error reading {_STATE_KEY!r} from cycleState: not found"))
        return SUCCESS if s.claims else _SKIP

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Upstream's ``PreBind``: each claim not yet reserved for the pod goes through
        ``bindClaim`` (the allocation Reserve made, and the reservation, written); the written claim
        replaces the cycle's copy so that Unreserve sees the reservation. Any failure is an Error
        with upstream's text: the framework unreserves and the pod is retried."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State):
            return Status.as_error(StateMissingError(f"error reading {_STATE_KEY!r} from cycleState: not found"))
        binding_conditions = self._features.device_binding_and_status
        for i, claim in enumerate(s.claims):
            if claim.is_reserved_for(pod.uid):
                continue
            try:
                s.claims[i] = await bind_claim(self._client, self._dra, s, i, pod, node_name,
                                               timestamp=binding_conditions)
            except DynamicResourcesError as e:
                return Status.as_error(e)
        if not binding_conditions or not has_binding_conditions(s.claims):
            return SUCCESS
        # Wait until the drivers report every binding condition True (bindingconditions), and say
        # so on the pod, as upstream's PreBind does (a failed post is only logged: it is news).
        if self._client is not None:
            try:
                await self._client.report_pod_event(pod, "Normal", BINDING_CONDITIONS_PENDING, "Scheduling",
                                                    f"waiting for binding conditions for device on node {node_name}")
            except Exception as e:
                log.warning("BindingConditionsPending event for %s: %s", pod.key, e)
        try:
            await wait_until_ready(lambda c: self._dra.claim(c.namespace, c.name), s.claims, self.binding_timeout,
                                   self.binding_poll_interval)
        except BindingConditionsError as e:
            return Status.as_error(e)
        return SUCCESS

    def pre_bind_wait(self, state: CycleState) -> float:
        """``PreBindWaiter``: ``bindingTimeout`` when a device this pod gets has binding conditions
        (PreBind may wait that long for them), else 0; the service adds it to the binding cycle's
        deadline, which would otherwise cut the wait short."""
        s = state.get(_STATE_KEY)
        if not isinstance(s, _State) or not self._features.device_binding_and_status:
            return 0.0
        claims = s.reserved.claims if s.reserved is not None else s.claims
        return self.binding_timeout if has_binding_conditions(claims) else 0.0

    @staticmethod
    def reserved(state: CycleState) -> Reserved | None:
        """What Reserve did for this cycle's pod (the claims as PreBind leaves them)."""
        s = state.get(_STATE_KEY)
        return s.reserved if isinstance(s, _State) else None

    # --- queueing hints --------------------------------------------------------------------------
    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        """Upstream's, with SchedulerQueueingHints on: Node Add|UpdateNodeLabel|UpdateNodeAllocatable
        (no UpdateNodeTaint), ResourceClaim Add|Update and the pod's generated claims with their
        hints, DeviceClass and ResourceSlice Add|Update without one."""
        add_update = frozenset({"Add", "Update"})
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", frozenset({"Add", "UpdateNodeLabel",
                                                                             "UpdateNodeAllocatable"}))),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("ResourceClaim", add_update),
                                         self.is_schedulable_after_claim_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "UpdatePodGeneratedResourceClaim"),
                                         self.is_schedulable_after_pod_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("DeviceClass", add_update)),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("ResourceSlice", add_update)))

    def is_schedulable_after_claim_change(self, pod: Pod, event: fwk.ClusterEvent) -> bool:
        """Upstream's ``isSchedulableAfterClaimChange`` (an added or updated claim; the store
        already holds it): QueueSkip while one of the pod's claims is missing or not its own; Queue
        when any claim got deallocated (its devices are free); QueueSkip for a claim the pod does
        not use; Queue when the pod's claim was created or its status changed (a finalizer added
        by a driver is not a reason). Raises TypeError for objects that are not claims (the queue
        then Queues, as upstream does with the hint's error)."""
        old, new = event.old, event.new
        if (new is not None and not isinstance(new, ResourceClaim)) or \
                (old is not None and not isinstance(old, ResourceClaim)):
            raise TypeError(f"unexpected object in isSchedulableAfterClaimChange: "
                            f"{type(old).__name__}, {type(new).__name__}")
        claims, problem = self.pod_claims(pod)
        if problem:
            return False
        if old is not None and old.allocation is not None and new is not None and new.allocation is None:
            return True
        if new is None or not any(c.uid == new.uid for c in claims):
            return False
        if old is None:
            return True
        return (old.allocation, old.reserved_for) != (new.allocation, new.reserved_for)

    def is_schedulable_after_pod_change(self, pod: Pod, event: fwk.ClusterEvent) -> bool:
        """Upstream's ``isSchedulableAfterPodChange``: Queue when the update is of this pod and
        every one of its claims now exists (``status.resourceClaimStatuses`` filled in)."""
        modified = event.new
        if not isinstance(modified, Pod):
            raise TypeError(f"unexpected object in isSchedulableAfterPodChange: {type(modified).__name__}")
        if pod.uid != modified.uid:
            return False
        return not self.pod_claims(modified)[1]


def new(args: DynamicResourcesArgs | None, handle: Handle) -> DynamicResources:
    # DynamicResourcesArgs.bindingTimeout bounds PreBind's wait for binding conditions.
    binding_timeout = DEFAULT_BINDING_TIMEOUT
    if args is not None and args.binding_timeout is not None:
        binding_timeout = args.binding_timeout
    plugin = DynamicResources(handle.dra, client=handle.client, spawn=handle.spawn,
                              features=Features.from_gates(handle.feature_gates), binding_timeout=binding_timeout)
    if args is not None:
        plugin.args = args
    # DynamicResourcesArgs.filterTimeout (10s by default; 0: none) bounds each node's search while
    # DRASchedulerFilterTimeout is on (dynamicresources.go: ``pl.enableFilterTimeout && pl.filterTimeout > 0``).
    timeout = plugin.args.filter_timeout
    plugin.filter_timeout = timeout if enabled(handle.feature_gates, "DRASchedulerFilterTimeout") and timeout \
        else None
    return plugin


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = DynamicResources
    __: type[fwk.PreFilterPlugin] = DynamicResources
    ___: type[fwk.EnqueueExtensions] = DynamicResources
    ____: type[fwk.ReservePlugin] = DynamicResources
    _____: type[fwk.PreEnqueuePlugin] = DynamicResources
    ______: type[fwk.PostFilterPlugin] = DynamicResources
    _______: type[fwk.PreBindPlugin] = DynamicResources
    ________: type[fwk.PreBindPreFlightPlugin] = DynamicResources
    _________: type[fwk.BatchScorePlugin] = DynamicResources
    __________: type[fwk.ScoreExtensionsPlugin] = DynamicResources
    ___________: type[fwk.PreBindWaiter] = DynamicResources
    ____________: type[fwk.UniformScorePlugin] = DynamicResources
