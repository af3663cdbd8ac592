"""DynamicResources' API writes: PreBind's ``bindClaim`` and Unreserve's ``deleteClaim`` and
reservation removal (upstream's ``dynamicresources.go`` and ``extendeddynamicresources.go``).

**bindClaim**, for each claim not yet reserved for the pod, under ``retry.RetryOnConflict``
(``scheduler.plugins.retry``: 5 attempts, 10 ms apart; a 409 refetches the claim with
``get_claim``): the claim must not be being deleted (``claim ns/name got deleted in the
meantime``) nor, when Reserve allocated it, allocated by someone else (``... got allocated
elsewhere in the meantime``); then the finalizer ``resource.kubernetes.io/delete-protection`` (a
normal update, only with an allocation to write), then ``status.allocation`` and the pod appended
to ``status.reservedFor`` in one status write, both conditional on the resourceVersion read.
Errors carry upstream's wrapping (``add finalizer to claim ns/name: ...``, ``add allocation and
reservation to claim ns/name: ...``, ``add reservation to claim ns/name: ...``, ``get updated claim
ns/name after conflict: ...``) in a ``DynamicResourcesError``, never the API's ConflictError itself
(the binding cycle would read that as "bound elsewhere" and drop the pod). Whatever the outcome the
in-flight allocation ends; a written claim is assumed in the store (``DraStore.assume``) until the
informer brings it.

The extended-resource claim is created first (``extendeddynamicresources``), then written as any
claim, and the pod's ``status.extendedResourceClaimStatus`` set. Unreserve's writes run off the
cycle; a failure is logged, as upstream's Unreserve logs it.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from scheduler.cache.dra import DraStore
from scheduler.dra.extended import SPECIAL_CLAIM_NAME, claim_body
from scheduler.errors import ConflictError
from scheduler.model import Pod
from scheduler.model.dra import FINALIZER, AllocationResult, ResourceClaim
from scheduler.plugins.dynamicresources.state import _State
from scheduler.plugins.retry import retry_on_conflict

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient

log = logging.getLogger("kopf_scheduler.dynamicresources")


class DynamicResourcesError(Exception):
    """A PreBind failure: upstream's error text. Never the API's ConflictError or NotFoundError
    itself, which the binding cycle reads as "the pod is bound elsewhere or gone, never retry";
    a claim's conflict only means this attempt failed, and the pod is retried."""


class _Conflict(DynamicResourcesError):
    """A 409 on a write: RetryOnConflict's cue to refetch and try again."""


def _wrapped(what: str, e: Exception) -> DynamicResourcesError:
    """``fmt.Errorf("%s: %w")``, keeping whether the cause was a conflict (``apierrors.IsConflict``
    sees through the wrapping)."""
    return (_Conflict if isinstance(e, ConflictError) else DynamicResourcesError)(f"{what}: {e}")


async def bind_claim(client: SchedulerClient | None, dra: DraStore, s: _State, index: int, pod: Pod,
                     node_name: str, timestamp: bool = False) -> ResourceClaim:
    """Upstream's ``bindClaim``: under ``retry.RetryOnConflict`` (a conflict refetches the
    claim and tries again), check the claim is not being deleted nor allocated elsewhere, add
    the finalizer (a normal update, only when an allocation is to be written), then write the
    allocation and append the pod to ``reservedFor`` (one status update). Whatever happens, the
    in-flight allocation ends; a written claim is assumed in the store until the informer
    brings it.

    The extended-resource claim: nothing to do where the device plugins provide it all;
    otherwise the in-memory claim is created first (its node's variant: ``create claim for
    extended resources ns/: ...`` on failure), replaces the cycle's copy (Unreserve deletes it
    if binding fails later), and once written the pod's ``status.extendedResourceClaimStatus``
    gets its name and the request mappings. ``timestamp`` (binding conditions on): a new
    allocation is written with ``allocationTimestamp``, as upstream's bindClaim sets it."""
    claim = s.claims[index]
    allocation = s.allocations.get(index)
    if timestamp and allocation is not None and not allocation.allocation_timestamp:
        # With binding conditions on, the allocation records when it was made: their timeout
        # counts from it (metav1.Time: seconds).
        allocation = replace(allocation, allocation_timestamp=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"))
    extended = index == s.extended
    if extended and allocation is None and not claim.spec.requests:
        return claim
    uid = s.extended_uid if extended else claim.uid
    written: ResourceClaim | None = None
    try:
        if client is None:
            raise DynamicResourcesError("DynamicResources has no API client")
        if extended and claim.name == SPECIAL_CLAIM_NAME:
            got = s.node_extended.get(node_name)
            variant = got.claim if got is not None else None
            if variant is None:
                raise DynamicResourcesError(f"extended resource claim not found for node {node_name}")
            try:
                written = await client.create_claim(claim_body(variant))
            except Exception as e:
                raise DynamicResourcesError(
                    f"create claim for extended resources {claim.namespace}/: {e}") from e
            s.claims[index] = claim = written
        written = await update_claim(client, claim, allocation, pod)
    finally:
        if written is not None:
            dra.assume(written)
        if allocation is not None:
            dra.remove_pending_allocation(uid)
    assert written is not None and client is not None
    if extended:
        got = s.node_extended.get(node_name)
        mappings = got.mappings if got is not None else ()
        if not mappings:
            raise DynamicResourcesError(f"nil or empty request mappings, no update of pod {pod.key} "
                                        "ExtendedResourceClaimStatus")
        try:
            await client.set_extended_resource_claim_status(
                pod, written.name, [m.to_json() for m in mappings])
        except Exception as e:
            raise DynamicResourcesError(f"update pod {pod.key} ExtendedResourceClaimStatus: {e}") from e
    return written


async def _current(client: SchedulerClient, claim: ResourceClaim, n: int, failed: str) -> ResourceClaim:
    """The claim a RetryOnConflict closure works on in its attempt ``n``: as given in the first,
    read again after a conflict. A failed read ends the retry as ``failed`` (its ``{}`` the
    claim's key), then the error, as each of upstream's closures words it."""
    if not n:
        return claim
    try:
        return await client.get_claim(claim.namespace, claim.name)
    except Exception as e:
        raise DynamicResourcesError(f"{failed.format(claim.key)}: {e}") from e


async def update_claim(client: SchedulerClient, claim: ResourceClaim, allocation: AllocationResult | None,
                       pod: Pod) -> ResourceClaim:
    """``bindClaim``'s RetryOnConflict closure, retried on a conflict (``_Conflict``, a wrapped
    409), whose last one ends it as a plain ``DynamicResourcesError``."""
    async def attempt(n: int) -> ResourceClaim:
        nonlocal claim
        claim = await _current(client, claim, n, "get updated claim {} after conflict")
        if claim.deleting:
            raise DynamicResourcesError(f"claim {claim.key} got deleted in the meantime")
        if allocation is not None:
            if claim.allocation is not None:
                raise DynamicResourcesError(f"claim {claim.key} got allocated elsewhere in the meantime")
            if FINALIZER not in claim.finalizers:
                try:
                    claim = await client.add_claim_finalizer(claim)
                except Exception as e:
                    raise _wrapped(f"add finalizer to claim {claim.key}", e) from e
        try:
            return await client.reserve_claim(claim, pod, allocation)
        except Exception as e:
            what = "add allocation and reservation to claim" if allocation is not None \
                else "add reservation to claim"
            raise _wrapped(f"{what} {claim.key}", e) from e

    try:
        return await retry_on_conflict(attempt, _Conflict)
    except _Conflict as e:
        raise DynamicResourcesError(str(e)) from None


async def unreserve_claim(client: SchedulerClient, claim: ResourceClaim, pod: Pod) -> None:
    """Upstream's Unreserve patch: the pod removed from the claim's ``reservedFor``."""
    try:
        await client.unreserve_claim(claim, pod)
    except Exception as e:  # upstream: logged; the pod's next attempt unreserves again
        log.error("unreserve: ResourceClaim %s, pod %s: %s", claim.key, pod.key, e)


async def delete_claim(client: SchedulerClient, claim: ResourceClaim) -> None:
    """Upstream's ``deleteClaim``: under RetryOnConflict, the finalizer removed (a conditional
    update; a conflict refetches), then the claim deleted (already gone is fine). Off the
    cycle; a failure is logged, as upstream's Unreserve logs it."""
    async def attempt(n: int) -> None:
        nonlocal claim
        claim = await _current(client, claim, n, "get resourceclaim {}")
        await client.delete_claim(claim)

    try:
        try:
            await retry_on_conflict(attempt, ConflictError)
        except ConflictError as e:
            raise DynamicResourcesError(f"update resourceclaim {claim.key}: {e}") from e
    except Exception as e:
        log.error("delete: ResourceClaim %s: %s", claim.key, e)
