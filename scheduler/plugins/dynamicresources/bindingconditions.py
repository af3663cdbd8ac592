"""Binding conditions (KEP-5007, DRADeviceBindingConditions with DRAResourceClaimDeviceStatus):
a device published with ``bindingConditions`` is allocated like any other, but the pod is bound only
once the driver reports every one of them True in the claim's ``status.devices`` for that device; a
``bindingFailureConditions`` entry True there means the binding failed. Upstream's
``dynamicresources.go``: ``isClaimReadyForBinding``, ``isClaimTimeout``, ``isPodReadyForBinding``,
``hasBindingConditions`` and PreBind's wait.

- **PreBind** writes the allocations (``binding``), with ``allocationTimestamp`` set when the gates
  are on, then, if some allocated device has binding conditions, polls the store's claims (every
  5 s, first at once; the informer keeps them current) until each is ready (``wait_until_ready``).
  A failure condition True is an error ``claim <name> binding failed: reason=<r>, message="<m>"``;
  a claim whose ``allocationTimestamp`` is more than ``bindingTimeout`` ago, ``claim <name> binding
  timeout``; the poll running out, ``device binding timeout``. Each is PreBind's Error: the framework
  unreserves and the pod is retried.
- **Filter** (the retry): an allocated claim whose binding failed or timed out is not available on
  any node (``blocked``), so every node fails with ``resourceclaim not available on the node``, and
  PostFilter deallocates the claim (no other pod reserves it once Unreserve removed this one): the
  next attempt allocates it afresh, on other devices if the driver still reports the failure.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from datetime import datetime

from scheduler.model.dra import AllocatedDeviceStatus, DeviceRequestAllocationResult, ResourceClaim

__all__ = ["BINDING_POLL_INTERVAL", "DEFAULT_BINDING_TIMEOUT", "BindingConditionsError", "blocked",
           "has_binding_conditions", "is_claim_ready_for_binding", "is_claim_timeout", "wait_until_ready"]

# DynamicResourcesArgs.bindingTimeout's default (SetDefaults_DynamicResourcesArgs), and PreBind's
# poll interval (wait.PollUntilContextTimeout(ctx, 5*time.Second, ...)).
DEFAULT_BINDING_TIMEOUT = 600.0
BINDING_POLL_INTERVAL = 5.0


class BindingConditionsError(Exception):
    """A binding failure condition is True, or the binding timed out: PreBind's error text."""


def _device_status(claim: ResourceClaim, r: DeviceRequestAllocationResult) -> AllocatedDeviceStatus | None:
    """``getAllocatedDeviceStatus``."""
    return next((d for d in claim.devices if (d.driver, d.pool, d.device) == (r.driver, r.pool, r.device)), None)


def is_claim_ready_for_binding(claim: ResourceClaim) -> bool:
    """``isClaimReadyForBinding``: every binding condition of every allocated device True (a device
    without any is ready); raises ``BindingConditionsError`` when a failure condition is True."""
    if claim.allocation is None:
        return False
    for r in claim.allocation.results:
        if not r.binding_conditions:
            continue
        status = _device_status(claim, r)
        if status is None:
            return False
        for name in r.binding_failure_conditions:
            failed = status.condition(name)
            if failed is not None and failed.status == "True":
                raise BindingConditionsError(f'claim {claim.name} binding failed: reason={failed.reason}, '
                                             f'message="{failed.message}"')
        for name in r.binding_conditions:
            c = status.condition(name)
            if c is None or c.status != "True":
                return False
    return True


def _timestamp(text: str) -> float | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def is_claim_timeout(claim: ResourceClaim, timeout: float, now: float) -> bool:
    """``isClaimTimeout``: some device has binding conditions and ``allocationTimestamp`` is more
    than ``timeout`` seconds before ``now`` (wall-clock seconds). No timestamp: never."""
    if claim.allocation is None or not claim.allocation.allocation_timestamp:
        return False
    at = _timestamp(claim.allocation.allocation_timestamp)
    if at is None:
        return False
    return any(r.binding_conditions for r in claim.allocation.results) and at + timeout < now


def has_binding_conditions(claims: Sequence[ResourceClaim]) -> bool:
    """``hasBindingConditions``: some allocated device of some claim has binding conditions."""
    return any(r.binding_conditions for c in claims if c.allocation is not None for r in c.allocation.results)


def blocked(claim: ResourceClaim, timeout: float, now: float) -> bool:
    """Filter's check of an allocated claim: its binding failed, or it is not ready and timed out."""
    try:
        return not is_claim_ready_for_binding(claim) and is_claim_timeout(claim, timeout, now)
    except BindingConditionsError:
        return True


async def wait_until_ready(current: Callable[[ResourceClaim], ResourceClaim | None], claims: list[ResourceClaim],
                           timeout: float, interval: float = BINDING_POLL_INTERVAL,
                           now: Callable[[], float] = time.time) -> None:
    """PreBind's ``wait.PollUntilContextTimeout`` of ``isPodReadyForBinding``: every claim, read
    again each time from ``current`` (the store; ``claims`` is updated with it), ready. Raises
    ``BindingConditionsError`` on a failure condition, a claim's timeout (``claim <name> binding
    timeout``) or the poll's (``device binding timeout``)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        ready = True
        for i, claim in enumerate(claims):
            got = current(claim)
            if got is None:
                raise BindingConditionsError(f'resourceclaim.resource.k8s.io "{claim.name}" not found')
            claims[i] = got
            if not is_claim_ready_for_binding(got):
                if is_claim_timeout(got, timeout, now()):
                    raise BindingConditionsError(f"claim {got.name} binding timeout")
                ready = False
                break
        if ready:
            return
        left = deadline - asyncio.get_running_loop().time()
        if left <= 0:
            raise BindingConditionsError("device binding timeout")
        await asyncio.sleep(min(interval, left))
