"""``bench --mode core``'s DRA ops (``core.py`` is the overview): what upstream's integration
harness does around the scheduler for a ``dra/`` workload.

``_dra_setup`` creates the DeviceTaintRules, the test driver's nodes and ResourceSlices, the
DeviceClasses and claim templates, and the ``allocResourceClaims`` claims; ``_ClaimController``
stands in for the resourceclaim controller (a pod's template claim created, owned by the pod and
named in its ``status.resourceClaimStatuses`` before the pod is fed; a deleted pod's generated
claims go with it); ``_steady_state`` is ``createPodsSteadily``; ``_update_device_conditions`` and
``_check_pod_scheduled`` are the DRABindingConditions tests' ``updateDeviceConditions`` and
``checkPodScheduled``.
"""

from __future__ import annotations

import copy
import random
import time
from typing import Any

from scheduler.benchmark.dynamicresources import (
    DRA_TEMPLATES,
    Dra,
    dra_claim,
    dra_device_classes,
    dra_init_allocations,
    dra_node,
    dra_node_name,
    dra_pod,
    dra_selector_allocations,
    dra_selector_claim,
    dra_slice,
    dra_template_slices,
)
from scheduler.benchmark.sink import SinkClient, pod_objects, wait_until
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import Workload

__all__ = ["BINDING_OP_POLL", "BINDING_OP_SECONDS", "UNSCHEDULED_STABLE_SECONDS", "device_statuses"]

Obj = dict[str, Any]


# --- the DRABindingConditions tests' ops ---------------------------------------------------------

# The binding-conditions ops' durationParam (updateDuration, checkDuration: 30s), their poll
# interval, and how long checkPodScheduled wants every pod unbound to call it stable.
BINDING_OP_SECONDS = 30.0
BINDING_OP_POLL = 1.0
UNSCHEDULED_STABLE_SECONDS = 5.0


def device_statuses(allocation: Obj, condition: tuple[str, str]) -> list[Obj]:
    """upstream's ``updateDeviceConditionsOp`` for one claim: an ``AllocatedDeviceStatus`` with the
    condition (reason and message ``Test``) for each allocated device that has binding (failure)
    conditions (``makeBindingConditions``)."""
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return [{"driver": r["driver"], "pool": r["pool"], "device": r["device"], "conditions": [
        {"type": condition[0], "status": condition[1], "lastTransitionTime": now, "reason": "Test",
         "message": "Test"}]}
            for r in (allocation.get("devices") or {}).get("results") or ()
            if r.get("bindingConditions") or r.get("bindingFailureConditions")]


async def _update_device_conditions(sink: SinkClient, namespace: str, condition: tuple[str, str],
                                    limit: float) -> None:
    """``updateDeviceConditions``: once the namespace has claims, each one, when its allocation has a
    device with binding conditions, gets its ``status.devices`` report (polled every second, for at
    most ``limit`` seconds in all)."""
    deadline = time.monotonic() + limit
    if not await wait_until(lambda: any(ns == namespace for ns, _ in sink.claims), limit, BINDING_OP_POLL):
        raise RuntimeError(f"no claims found in namespace {namespace} within {limit:g}s")
    for key in [k for k in sink.claims if k[0] == namespace]:
        def pending(key: tuple[str, str] = key) -> bool:
            claim = sink.claims.get(key)
            return claim is not None and claim.allocation is not None and any(
                r.binding_conditions for r in claim.allocation.results)
        if not await wait_until(pending, max(deadline - time.monotonic(), 0.0), BINDING_OP_POLL):
            raise RuntimeError(f"no devices found in claim {key[0]}/{key[1]} within {limit:g}s")
        allocation = (sink.claim_bodies[key].get("status") or {}).get("allocation") or {}
        sink.set_device_statuses(*key, [*((sink.claim_bodies[key].get("status") or {}).get("devices") or ()),
                                        *device_statuses(allocation, condition)])


async def _check_pod_scheduled(sink: SinkClient, namespace: str, scheduled: bool, limit: float) -> bool:
    """``checkPodScheduled``: every pod of the namespace bound (``scheduled``), or every one unbound
    for ``UNSCHEDULED_STABLE_SECONDS`` in a row; polled every second for at most ``limit`` seconds."""
    stable_since: float | None = None

    def check() -> bool:
        nonlocal stable_since
        pods = [b for b in sink.bodies.values() if b["metadata"]["namespace"] == namespace]
        if not all(bool(b["spec"].get("nodeName")) == scheduled for b in pods):
            stable_since = None
            return False
        if scheduled:
            return True
        if stable_since is None:
            stable_since = time.monotonic()
        return time.monotonic() - stable_since >= UNSCHEDULED_STABLE_SECONDS
    return await wait_until(check, limit, BINDING_OP_POLL)


# --- DRA: the workload's objects, and the controllers of upstream's integration harness -------------

def _dra_setup(sink: SinkClient, w: Workload, dra: Dra, size: Size, rng: random.Random) -> None:
    """The DRA ops before any pod: the DeviceTaintRules, the nodes with the test driver and their
    ResourceSlices (``createResourceDriver``), the DeviceClasses, the claim template in each pod namespace, and the
    ``allocResourceClaims`` claims."""
    assert sink.service is not None
    for rule in dra.taint_rules:
        sink.add_dra_object("DeviceTaintRule", copy.deepcopy(DRA_TEMPLATES[rule]))
    for i in range(size.nodes):
        name = dra_node_name(i)
        sink.service.on_node("ADDED", dra_node(i))
        if dra.driver:
            sink.add_dra_object("ResourceSlice", dra_slice(name, dra.max_claims_per_node, dra.binding is not None))
    for tmpl_name in dra.slices:
        for k in range(size.resource_slices):
            for body in dra_template_slices(tmpl_name, k):
                sink.add_dra_object("ResourceSlice", body)
    for cls in dra_device_classes(dra):
        sink.add_dra_object("DeviceClass", cls)
    if dra.claim_template is not None:
        for ns in (w.init_namespace, w.namespace):
            tmpl = copy.deepcopy(DRA_TEMPLATES[dra.claim_template])
            tmpl["metadata"] = {**tmpl["metadata"], "namespace": ns}
            sink.add_dra_object("ResourceClaimTemplate", tmpl)
    _alloc_claims(sink, dra, size, rng)


def _alloc_claims(sink: SinkClient, dra: Dra, size: Size, rng: random.Random) -> None:
    """upstream's ``allocResourceClaimsOp``: ``initClaims`` claims (``resourceclaim.yaml`` in
    ``init``) each allocated on a random node that can still take it, without a pod, its first free
    device (the allocator's first solution; upstream shuffles the nodes and takes the first that
    fits: a uniform pick among the nodes with a free device, as here)."""
    for k, allocation in dra_init_allocations(dra, size, rng):
        claim = dra_claim(k, "init")
        claim["status"] = {"allocation": allocation}
        sink.add_dra_object("ResourceClaim", claim)
    if dra.init_fill == "selector":
        for k, allocation in dra_selector_allocations(size):
            claim = dra_selector_claim(k)
            claim["status"] = {"allocation": allocation}
            sink.add_dra_object("ResourceClaim", claim)


_SUFFIX = "bcdfghjklmnpqrstvwxz2456789"     # the API server's generateName alphabet


class _ClaimController:
    """upstream's resourceclaim controller, as the integration harness runs it, reduced to what the
    workloads need: a pod's ``resourceClaimTemplateName`` entry gets its claim (``<pod>-<entry>-xxxxx``,
    the pod as controlling owner, ``resource.kubernetes.io/pod-claim-name``, the template's claim
    spec) and the pod its ``status.resourceClaimStatuses`` before it is fed, as the controller's
    status update would reach the scheduler right after the pod's creation; a deleted pod's
    generated claims are deleted with it (the controller and the garbage collector)."""

    def __init__(self, sink: SinkClient, dra: Dra) -> None:
        self.sink, self.dra = sink, dra
        self.generated: dict[str, list[tuple[str, str]]] = {}
        self._n = 0

    def _suffix(self) -> str:
        self._n += 1
        n, out = self._n, ""
        for _ in range(5):
            n, r = divmod(n, len(_SUFFIX))
            out += _SUFFIX[r]
        return out

    def shared_claims(self, namespace: str, pods: int) -> None:
        """The ``test-claim-<k>`` claims five pods each share, created before the pods (``createAny``)."""
        for k in range((pods + 4) // 5):
            self.sink.add_dra_object("ResourceClaim", dra_claim(k, namespace))

    def pod(self, body: Obj, i: int) -> Obj:
        body = dra_pod(self.dra, body, i)
        meta = body["metadata"]
        statuses = []
        for pc in body["spec"].get("resourceClaims") or ():
            tmpl_name = pc.get("resourceClaimTemplateName")
            if tmpl_name is None or self.dra.claim_template is None:
                continue
            tmpl = DRA_TEMPLATES[self.dra.claim_template]
            name = f"{meta['name']}-{pc['name']}-{self._suffix()}"
            claim: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
                "name": name, "generateName": f"{meta['name']}-{pc['name']}-", "namespace": meta["namespace"],
                "annotations": {"resource.kubernetes.io/pod-claim-name": pc["name"]},
                "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                     "controller": True, "blockOwnerDeletion": True}]},
                "spec": copy.deepcopy(tmpl["spec"]["spec"])}
            self.sink.add_dra_object("ResourceClaim", claim)
            self.generated.setdefault(meta["uid"], []).append((meta["namespace"], name))
            statuses.append({"name": pc["name"], "resourceClaimName": name})
        if statuses:
            body.setdefault("status", {})["resourceClaimStatuses"] = statuses
        return body

    def delete_pod(self, uid: str) -> None:
        self.sink.delete(uid)
        for ns, name in self.generated.pop(uid, ()):
            self.sink.remove_claim(ns, name)


async def _steady_state(sink: SinkClient, w: Workload, size: Size, controller: _ClaimController,
                        deadline: float) -> float:
    """upstream's ``createPodsSteadily``: ``size.pods`` pods; each time all of them are bound they
    are deleted (grace period 0) and as many new ones created, until ``deadline``; when it ended."""
    batch = 0
    while time.monotonic() < deadline:
        uids = []
        for i, body in enumerate(pod_objects(w.measured, w.namespace, size.pods, tag=f"{batch}-")):
            sink.add(controller.pod(body, i), measured=True)
            uids.append(body["metadata"]["uid"])
        target = len(sink.bind_times) + size.pods
        if not await wait_until(lambda t=target: len(sink.bind_times) >= t,
                                max(deadline - time.monotonic(), 0.0), interval=0.001):
            break
        for uid in uids:
            controller.delete_pod(uid)
        batch += 1
    return deadline


def _pod_devices(sink: SinkClient) -> dict[str, tuple[str, ...]]:
    """Measured pod -> the devices allocated to the claims reserved for it (bound pods only)."""
    by_uid: dict[str, list[str]] = {}
    for claim in sink.claims.values():
        if claim.allocation is None:
            continue
        devices = [f"{r.driver}/{r.pool}/{r.device}" for r in claim.allocation.results]
        for ref in claim.reserved_for:
            by_uid.setdefault(ref.uid, []).extend(devices)
    out: dict[str, tuple[str, ...]] = {}
    for uid in sink.measured:
        body = sink.bodies.get(uid)
        if body is not None and body["spec"].get("nodeName") and uid in by_uid:
            out[f"{body['metadata']['namespace']}/{body['metadata']['name']}"] = tuple(sorted(by_uid[uid]))
    return out
