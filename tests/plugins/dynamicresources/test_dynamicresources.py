"""DynamicResources through its extension points, after upstream's ``dynamicresources_test.go``
TestPlugin (release 1.35/1.36), with its objects: ``podWithClaimName``,
``podWithClaimTemplate(InStatus)``, ``pendingClaim``, ``allocatedClaim``, ``otherClaim``,
``otherAllocatedClaim``, ``allocatedClaimWithWrongTopology`` / ``GoodTopology``, ``deviceClass``
(no selectors), ``workerNode`` and ``workerNodeSlice`` (driver ``some-driver``, pool ``worker``,
device ``instance-1``), ``breakCELInClaim`` / ``breakCELInClass`` (the attribute ``healthy`` the
worker's device does not have).

Each ported case checks what the scheduling cycle does: PreEnqueue, PreFilter, Filter on the
worker, PostFilter, Reserve (the allocation signalled in flight) and Unreserve. The binding half
(``prebind``, ``unreserveAfterBindFailure``, ``unreserveBeforePreBind``, PostFilter's deallocation,
``prebindPreFlight``) runs against ``MemoryClient``, which holds the claims as the API server does
(a 409 for a write at a stale resourceVersion): claim-reference, claim-template, good-topology,
with-resources and its finalizer variants (has-finalizer, finalizer-gets-removed,
finalizer-gets-added: the conflict and refetch), skip-bind, bind-failure, reserved-okay,
wrong-topology, empty; bindClaim's error paths are checked against its texts.

Texts from 1.36's ``resourceclaim`` package (``(Pod is not owner)``; 1.35's test reads ``pod``);
PostFilter's no-op answers as 1.37's (``NOOP`` below).
The extended-resource cases (DRAExtendedResource, GA in 1.37): extended-resource-name-with-node-resource,
-one-device-plugin-one-dra, -with-zero-allocatable, non-DRA-...-with-zero-allocatable, -no-resource,
-with-resources, implicit-...-with-resources, implicit-...-two-containers-with-resources,
-with-resources-fail-patch, -has-claim, -delete-claim, -bind-failure, -skip-bind,
-claim-creation-failure (their ``scheduler_resourceclaim_creates_total`` checks aside: no such
metric here); and the default profile giving a pod its extended resource through DRA.
Score and NormalizeScore (1.35+): single-claim-, multiple-claims- and
multiple-requests-prioritized-list-scoring (``scoreResult``, ``normalizeScoreResult``, and the
subrequests Reserve allocates); kubernetes#139016's pod with an allocated and an unallocated claim;
and the default profile placing a pod by its claim's first choice.

Not ported: admin access, device taints, binding conditions, PodGroup claims and filter-timeout
cases (features off or not implemented here), the PreScore half of
``CEL-runtime-error-for-one-of-three-nodes``.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.cache.dra import DraStore
from scheduler.errors import ConflictError
from scheduler.framework import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import PostFilterContext
from scheduler.framework.status import Code
from scheduler.model import Pod, parse_node, parse_pod
from scheduler.model.dra import FINALIZER, DeviceID, ResourceClaim, parse_allocation, parse_resource_claim
from scheduler.plugins.dynamicresources import DynamicResources, DynamicResourcesError
from scheduler.plugins.dynamicresources.dynamicresources import new
from tests.builders import MemoryClient
from tests.plugins.test_volume_cycle import schedule

Want = tuple[Code, str] | None
NAMESPACE, POD_NAME, POD_UID = "default", "my-pod", "1234"
CLAIM_NAME = "my-pod-my-resource"
CLASS_NAME, DRIVER, NODE = "my-resource-class", "some-driver", "worker"
ATTR = "healthy"
NODE_NAME_SELECTOR = {"nodeSelectorTerms": [{"matchFields": [
    {"key": "metadata.name", "operator": "In", "values": [NODE]}]}]}


def pod(*, template: bool = False, in_status: bool = True) -> Pod:
    ref = {"resourceClaimTemplateName": CLAIM_NAME} if template else {"resourceClaimName": CLAIM_NAME}
    body: dict[str, Any] = {"metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
                            "spec": {"resourceClaims": [{"name": "my-resource", **ref}]}}
    if template and in_status:
        body["status"] = {"resourceClaimStatuses": [{"name": "my-resource", "resourceClaimName": CLAIM_NAME}]}
    return parse_pod(body)


def claim(name: str = CLAIM_NAME, *, owner: str | None = POD_UID, allocation: dict[str, Any] | None = None,
          reserved: bool = False, selectors: list[str] | None = None, deleting: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": NAMESPACE, "uid": f"uid-{name}"}
    if owner is not None:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": owner,
                                    "controller": True}]
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    exactly: dict[str, Any] = {"deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 1}
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    body: dict[str, Any] = {"metadata": meta, "spec": {"devices": {"requests": [{"name": "req-1", "exactly": exactly}]}}}
    status: dict[str, Any] = {}
    if allocation is not None:
        status["allocation"] = allocation
    if reserved:
        status["reservedFor"] = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]
    if status:
        body["status"] = status
    return body


ALLOCATION = {"devices": {"results": [{"driver": DRIVER, "pool": NODE, "device": "instance-1", "request": "req-1"}]},
              "nodeSelector": NODE_NAME_SELECTOR}
WRONG_TOPOLOGY = {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "no-such-label", "operator": "In", "values": ["no-such-value"]}]}]}}
GOOD_TOPOLOGY = {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": "kubernetes.io/hostname", "operator": "In", "values": [NODE]}]}]}}
pendingClaim = claim()
allocatedClaim = claim(allocation=ALLOCATION)
inUseClaim = claim(allocation=ALLOCATION, reserved=True)
otherClaim = claim("not-my-claim", owner=None)
otherAllocatedClaim = claim("not-my-claim", owner=None, allocation=ALLOCATION)
deviceClass = {"metadata": {"name": CLASS_NAME}, "spec": {}}
BROKEN = f'device.attributes["{DRIVER}"].{ATTR}'
workerNodeSlice = {"metadata": {"name": f"{NODE}-{DRIVER}"}, "spec": {
    "driver": DRIVER, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1}, "nodeName": NODE,
    "devices": [{"name": "instance-1"}]}}


def store(*objs: dict[str, Any], classes: tuple[dict[str, Any], ...] = ()) -> DraStore:
    s = DraStore()
    for c in classes:
        s.on_event("DeviceClass", "ADDED", c)
    for o in objs:
        s.on_event("ResourceSlice" if "driver" in o.get("spec", {}) else "ResourceClaim", "ADDED", o)
    return s


def status(st: Any) -> Want:
    return None if st is None or st.is_success() else (st.code, st.message())


class Case:
    def __init__(self, name: str, pod: Pod, objs: tuple[dict[str, Any], ...], classes: tuple[dict[str, Any], ...] = (),
                 preenqueue: Want = None, prefilter: Want = None, filter: Want = None, postfilter: Want = None,  # noqa: A002
                 in_flight: bool = False) -> None:
        self.name, self.pod, self.objs, self.classes = name, pod, objs, classes
        self.preenqueue, self.prefilter, self.filter, self.postfilter = preenqueue, prefilter, filter, postfilter
        self.in_flight = in_flight


U = Code.UNSCHEDULABLE_AND_UNRESOLVABLE
# PostFilter's no-op answer. 1.36's test reads `still not schedulable` (no-resources,
# exhausted-resources) and `no new claims to deallocate` (missing-class); kubernetes#140222 (merged
# 2026-07-04, in 1.37) keeps the Unschedulable status of those no-op paths but without a reason, so
# they no longer reach the pod's FailedScheduling message.
NOOP = (Code.UNSCHEDULABLE, "")
CASES = [
    Case("empty", parse_pod({"metadata": {"name": "foo", "namespace": "default"}}), (),
         prefilter=(Code.SKIP, ""), postfilter=(Code.UNSCHEDULABLE, "")),
    Case("claim-reference", pod(), (allocatedClaim, otherClaim)),
    Case("claim-template", pod(template=True), (allocatedClaim, otherClaim)),
    Case("missing-claim", pod(template=True, in_status=False), (allocatedClaim, otherClaim),
         preenqueue=(U, 'pod "default/my-pod": ResourceClaim not created yet')),
    Case("deleted-claim", pod(template=True), (claim(allocation=ALLOCATION, deleting=True),),
         preenqueue=(U, 'resourceclaim "my-pod-my-resource" is being deleted')),
    Case("wrong-claim", pod(template=True), (claim(allocation=ALLOCATION, owner=POD_UID + "123"),),
         preenqueue=(U, "ResourceClaim default/my-pod-my-resource was not created for Pod default/my-pod "
                        "(Pod is not owner)")),
    Case("no-resources", pod(), (pendingClaim,), (deviceClass,),
         filter=(U, "cannot allocate all claims"), postfilter=NOOP),
    Case("with-resources", pod(), (pendingClaim, workerNodeSlice), (deviceClass,), in_flight=True),
    Case("exhausted-resources", pod(), (pendingClaim, otherAllocatedClaim, workerNodeSlice), (deviceClass,),
         filter=(U, "cannot allocate all claims"), postfilter=NOOP),
    Case("claim-parameters-CEL-runtime-error", pod(), (claim(selectors=[BROKEN]), workerNodeSlice), (deviceClass,),
         filter=(Code.ERROR, f"claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: {ATTR}")),
    Case("class-parameters-CEL-runtime-error", pod(), (pendingClaim, workerNodeSlice),
         ({"metadata": {"name": CLASS_NAME}, "spec": {"selectors": [{"cel": {"expression": BROKEN}}]}},),
         filter=(Code.ERROR, f"class my-resource-class: selector #0: CEL runtime error: no such key: {ATTR}")),
    Case("missing-class", pod(), (pendingClaim,),
         prefilter=(U, "request req-1: device class my-resource-class does not exist"),
         postfilter=NOOP),
    Case("wrong-topology", pod(), (claim(allocation=WRONG_TOPOLOGY),),
         filter=(U, "resourceclaim not available on the node"),
         postfilter=(Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")),
    Case("good-topology", pod(), (claim(allocation=GOOD_TOPOLOGY),)),
    Case("reserved-okay", pod(), (inUseClaim,)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_plugin(case: Case) -> None:
    dra = store(*case.objs, classes=case.classes)
    deallocated: list[ResourceClaim] = []
    plugin = DynamicResources(dra, deallocated.append)
    assert status(plugin.pre_enqueue(case.pod)) == case.preenqueue
    if case.preenqueue is not None:
        return
    cache = Cache()
    cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}))
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        _, pre = plugin.pre_filter(state, case.pod, snap)
        assert status(pre) == case.prefilter
        failed = pre.is_skip() is False and not pre.is_success()
        if pre.is_success():
            v = plugin.filter_nodes(state, case.pod, snap, np.array([snap.row_of(NODE)], np.int64))
            got = v.statuses[0 if v.status_ids is None else int(v.status_ids[0])] if v.failed[0] else None
            assert status(got) == case.filter
            if got is not None and not got.is_rejected():
                return                      # an Error stops the attempt: no PostFilter
            failed = bool(v.failed[0])
        if failed or case.postfilter is not None:
            _, post = plugin.post_filter(state, case.pod, None, PostFilterContext(snap, None))  # type: ignore[arg-type]
            assert status(post) == case.postfilter
            if case.postfilter == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed"):
                assert [c.name for c in deallocated] == [CLAIM_NAME]
            return
        if pre.is_skip():
            return
        assert plugin.reserve(state, case.pod, NODE).is_success()
    reserved = DynamicResources.reserved(state)
    assert reserved is not None and reserved.node_name == NODE
    uid = f"uid-{CLAIM_NAME}"
    assert dra.has_pending_allocation(uid) is case.in_flight
    if case.in_flight:
        # allocatedClaim: the allocation found, with the finalizer PreBind adds first.
        inflight = dra.pending_allocation(uid)
        assert inflight is not None and inflight.allocation is not None
        assert [str(r.id) for r in inflight.allocation.results] == [f"{DRIVER}/{NODE}/instance-1"]
        assert inflight.allocation.to_json() == ALLOCATION and FINALIZER in inflight.finalizers
        assert dra.is_allocated(DeviceID(DRIVER, NODE, "instance-1"))
        # skip-bind: Unreserve before PreBind drops the in-flight allocation.
        plugin.unreserve(state, case.pod, NODE)
        assert not dra.has_pending_allocation(uid) and not dra.is_allocated(DeviceID(DRIVER, NODE, "instance-1"))


def test_in_flight_allocation_blocks_the_claim_and_its_devices() -> None:
    """Two pods, one device: the second pod's claim cannot get the device the first reserved, and a
    pod sharing the first pod's claim waits while it is in flight (``is in the process of being
    allocated``)."""
    other = claim("other-claim")
    dra = store(pendingClaim, other, workerNodeSlice, classes=(deviceClass,))
    plugin = DynamicResources(dra)
    cache = Cache()
    cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}))
    rows = None
    with cache.lock:
        snap = cache.snapshot()
        rows = np.array([snap.row_of(NODE)], np.int64)
        s1 = CycleState()
        assert plugin.pre_filter(s1, pod(), snap)[1].is_success()
        assert not plugin.filter_nodes(s1, pod(), snap, rows).failed[0]
        assert plugin.reserve(s1, pod(), NODE).is_success()
        second = parse_pod({"metadata": {"name": "p2", "namespace": NAMESPACE, "uid": "p2"},
                            "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": "other-claim"}]}})
        s2 = CycleState()
        assert plugin.pre_filter(s2, second, snap)[1].is_success()
        v = plugin.filter_nodes(s2, second, snap, rows)
        assert v.failed[0] and v.statuses[int(v.status_ids[0]) if v.status_ids is not None else 0].message() == \
            "cannot allocate all claims"
        sharer = parse_pod({"metadata": {"name": "p3", "namespace": NAMESPACE, "uid": "p3"},
                            "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": CLAIM_NAME}]}})
        _, st = plugin.pre_filter(CycleState(), sharer, snap)
        assert status(st) == (U, "resource claim default/my-pod-my-resource is in the process of being allocated")
        plugin.unreserve(s1, pod(), NODE)
        s3 = CycleState()
        assert plugin.pre_filter(s3, second, snap)[1].is_success()
        assert not plugin.filter_nodes(s3, second, snap, rows).failed[0]


def test_kept_caches_see_every_change() -> None:
    """Beyond upstream: the plugin keeps its slice index across cycles, and with it the devices each
    slice offers a class's selectors and the allocation results built (the single-request fast
    path). What is in use is read from the store in every cycle: a device in flight (Reserve),
    written (assumed) or released is seen by the very next pod, so no device is given twice; a
    changed slice or class replaces the index."""
    claims = [claim(f"c{i}", owner=None) for i in range(4)]
    dra = store(*claims, node_slice(NODE, 2, healthy=True), classes=(deviceClass,))
    plugin = DynamicResources(dra)
    cache = cluster(NODE)

    def cycle(i: int, reserve: bool = True) -> tuple[CycleState, Pod, list[str] | str]:
        p = parse_pod({"metadata": {"name": f"p{i}", "namespace": NAMESPACE, "uid": f"p{i}"},
                       "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": f"c{i}"}]}})
        with cache.lock:
            snap = cache.snapshot()
            state = CycleState()
            assert plugin.pre_filter(state, p, snap)[1].is_success()
            v = plugin.filter_nodes(state, p, snap, np.array([snap.row_of(NODE)], np.int64))
            if v.failed[0]:
                return state, p, v.statuses[int(v.status_ids[0]) if v.status_ids is not None else 0].message()
            if reserve:
                assert plugin.reserve(state, p, NODE).is_success()
        reserved = DynamicResources.reserved(state)
        got = reserved.claims[0].allocation if reserved is not None and reserve else None
        return state, p, [r.device for r in got.results] if got is not None else []

    s0, p0, got = cycle(0)
    assert got == ["instance-1"]
    s1, p1, got = cycle(1)                          # instance-1 is in flight: the next one
    assert got == ["instance-2"]
    assert cycle(2)[2] == "cannot allocate all claims"
    plugin.unreserve(s0, p0, NODE)                  # released: free for the next pod
    _, _, got = cycle(2)
    assert got == ["instance-1"]
    written = dra.pending_allocation("uid-c2")      # PreBind wrote it: assumed, still in use
    assert written is not None
    dra.assume(written)
    dra.remove_pending_allocation("uid-c2")
    assert cycle(3, reserve=False)[2] == "cannot allocate all claims"
    dra.restore(NAMESPACE, "c2")                    # the write undone
    assert not cycle(3, reserve=False)[2]
    # A third device (the slice changed: a new index); instance-1 written again, instance-2 in flight.
    dra.on_event("ResourceSlice", "MODIFIED", node_slice(NODE, 3, healthy=True))
    dra.assume(written)
    _, _, got = cycle(3)
    assert got == ["instance-3"]
    plugin.unreserve(s1, p1, NODE)
    dra.remove_pending_allocation("uid-c3")
    assert cycle(3, reserve=False)[2] == []         # instance-2 and -3 free again
    # The class changed: its selector now rejects every device (all are healthy).
    dra.on_event("DeviceClass", "MODIFIED", {"metadata": {"name": CLASS_NAME}, "spec": {"selectors": [
        {"cel": {"expression": f'!device.attributes["{DRIVER}"].{ATTR}'}}]}})
    assert cycle(3, reserve=False)[2] == "cannot allocate all claims"


def test_nodes_without_slices_share_one_answer() -> None:
    """Beyond upstream: rows no slice is for are answered once; network-attached (allNodes) slices
    are for every node, and their allocation needs no node selector."""
    shared = {"metadata": {"name": "net"}, "spec": {"driver": "net.example.com", "allNodes": True,
                                                    "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                                                    "devices": [{"name": "nic-0"}]}}
    cache = Cache()
    for n in ("a", "b", "c"):
        cache.add_node(parse_node({"metadata": {"name": n}}))
    with cache.lock:
        snap = cache.snapshot()
        rows = np.array([snap.row_of(n) for n in ("a", "b", "c")], np.int64)
        plugin = DynamicResources(store(pendingClaim, classes=(deviceClass,)))
        s = CycleState()
        plugin.pre_filter(s, pod(), snap)
        v = plugin.filter_nodes(s, pod(), snap, rows)
        assert v.failed.tolist() == [True, True, True]
        plugin = DynamicResources(store(pendingClaim, shared, classes=(deviceClass,)))
        s = CycleState()
        plugin.pre_filter(s, pod(), snap)
        assert not plugin.filter_nodes(s, pod(), snap, rows).failed.any()
        assert plugin.reserve(s, pod(), "b").is_success()
    reserved = DynamicResources.reserved(s)
    assert reserved is not None
    allocation = reserved.claims[0].allocation
    assert allocation is not None and allocation.node_selector_raw is None
    assert [str(r.id) for r in allocation.results] == ["net.example.com/fabric/nic-0"]


# --- PreBind, Unreserve and PostFilter's writes (TestPlugin's prebind / unreserve / postfilter) ------

def api_claim(body: dict[str, Any]) -> ResourceClaim:
    return parse_resource_claim(body)


class Env:
    """One pod's cycle on ``worker`` against a MemoryClient that holds the claims as the API does
    (with resourceVersions), the store fed with the same objects (the informer)."""

    def __init__(self, p: Pod, objs: tuple[dict[str, Any], ...], classes: tuple[dict[str, Any], ...] = ()) -> None:
        self.pod = p
        self.client = MemoryClient()
        self.dra = store(*(o for o in objs if "driver" in o.get("spec", {})), classes=classes)
        for o in objs:
            if "driver" not in o.get("spec", {}):
                self.dra.upsert(self.client.add_claim(api_claim(o)))
        self.plugin = DynamicResources(self.dra, client=self.client)
        self.state = CycleState()
        cache = Cache()
        cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}))
        self.cache = cache

    def schedule(self) -> bool:
        """PreFilter, Filter, Reserve on worker; whether it got that far."""
        with self.cache.lock:
            snap = self.cache.snapshot()
            _, pre = self.plugin.pre_filter(self.state, self.pod, snap)
            if pre.is_success():
                v = self.plugin.filter_nodes(self.state, self.pod, snap, np.array([snap.row_of(NODE)], np.int64))
                if v.failed[0]:
                    return False
            return self.plugin.reserve(self.state, self.pod, NODE).is_success()

    def api(self, name: str = CLAIM_NAME) -> ResourceClaim:
        return self.client.claims[(NAMESPACE, name)]


RESERVED_FOR = [{"resource": "pods", "name": POD_NAME, "uid": POD_UID}]


def reserved_for(c: ResourceClaim) -> list[dict[str, str]]:
    return [r.to_json() for r in c.reserved_for]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


@pytest.mark.parametrize("name,p,objs", [
    ("claim-reference", pod(), (allocatedClaim, otherClaim)),
    ("claim-template", pod(template=True), (allocatedClaim, otherClaim)),
    ("good-topology", pod(), (claim(allocation=GOOD_TOPOLOGY),)),
])
def test_prebind_reserves_an_allocated_claim(name: str, p: Pod, objs: tuple[dict[str, Any], ...]) -> None:
    """TestPlugin claim-reference, claim-template, good-topology: PreBind adds the pod to
    ``reservedFor`` (no finalizer: nothing is allocated), the written claim is assumed, the other
    claim is untouched."""
    env = Env(p, objs)
    assert env.schedule()
    assert env.plugin.pre_bind_pre_flight(env.state, p, NODE).is_success()
    assert run(env.plugin.pre_bind(env.state, p, NODE)).is_success()
    got = env.api()
    assert reserved_for(got) == RESERVED_FOR and FINALIZER not in got.finalizers
    assert got.allocation == api_claim(objs[0]).allocation
    assert env.client.claim_writes == [("reserve", f"{NAMESPACE}/{CLAIM_NAME}")]
    assert env.dra.is_assumed(NAMESPACE, CLAIM_NAME) and env.dra.claim(NAMESPACE, CLAIM_NAME) == got
    if len(objs) > 1:
        assert env.api("not-my-claim") == env.dra.claim(NAMESPACE, "not-my-claim")


@pytest.mark.parametrize("name,finalizer,prepare", [
    ("with-resources", False, None),
    ("with-resources-has-finalizer", True, None),
    ("with-resources-finalizer-gets-removed", True, "remove"),
    ("with-resources-finalizer-gets-added", False, "add"),
])
def test_prebind_writes_the_allocation(name: str, finalizer: bool, prepare: str | None) -> None:
    """TestPlugin with-resources and its finalizer variants: PreBind writes the finalizer and the
    allocation Reserve made plus the reservation; a change to the claim between Reserve and PreBind
    (its finalizer removed or added by someone else) is a conflict, and bindClaim refetches and
    tries again. The claim ends allocated, reserved for the pod, with the finalizer; it is assumed,
    and no allocation is in flight any more."""
    body = claim()
    if finalizer:
        body["metadata"]["finalizers"] = [FINALIZER]
    env = Env(pod(), (body, workerNodeSlice), (deviceClass,))
    assert env.schedule()
    uid = f"uid-{CLAIM_NAME}"
    assert env.dra.has_pending_allocation(uid)
    if prepare is not None:      # the API server's copy changes (a new resourceVersion)
        fin = () if prepare == "remove" else (FINALIZER,)
        env.client.add_claim(replace(env.api(), finalizers=fin, resource_version="9"))
    assert run(env.plugin.pre_bind(env.state, pod(), NODE)).is_success()
    got = env.api()
    assert got.finalizers == (FINALIZER,)
    # With DRADeviceBindingConditions on (1.37), bindClaim also stamps allocationTimestamp (now).
    assert got.allocation is not None and got.allocation.allocation_timestamp
    assert replace(got.allocation, allocation_timestamp="").to_json() == ALLOCATION
    assert reserved_for(got) == RESERVED_FOR
    assert not env.dra.has_pending_allocation(uid)
    assert env.dra.is_assumed(NAMESPACE, CLAIM_NAME) and env.dra.claim(NAMESPACE, CLAIM_NAME) == got
    assert env.dra.is_allocated(DeviceID(DRIVER, NODE, "instance-1"))
    verbs = [v for v, _ in env.client.claim_writes]
    assert verbs == {"with-resources": ["finalizer", "reserve"], "with-resources-has-finalizer": ["reserve"],
                     "with-resources-finalizer-gets-removed": ["finalizer", "reserve"],
                     "with-resources-finalizer-gets-added": ["reserve"]}[name]


def test_skip_bind_unreserve_before_prebind() -> None:
    """TestPlugin skip-bind: Unreserve before PreBind (another PreBind failed) drops the in-flight
    allocation and writes nothing."""
    env = Env(pod(), (pendingClaim, workerNodeSlice), (deviceClass,))
    assert env.schedule()
    env.plugin.unreserve(env.state, pod(), NODE)
    assert not env.dra.has_pending_allocation(f"uid-{CLAIM_NAME}") and env.client.claim_writes == []
    assert not env.dra.is_allocated(DeviceID(DRIVER, NODE, "instance-1"))


def test_bind_failure_unreserve_removes_the_pod_from_reserved_for() -> None:
    """TestPlugin bind-failure: after PreBind reserved the claim, Bind fails and Unreserve removes
    the pod from ``reservedFor`` through the API (upstream's strategic-merge patch); the assumed
    claim stays until the informer brings the new one."""
    env = Env(pod(), (claim(allocation=GOOD_TOPOLOGY),))

    async def go() -> None:
        assert env.schedule()
        assert (await env.plugin.pre_bind(env.state, pod(), NODE)).is_success()
        assert reserved_for(env.api()) == RESERVED_FOR
        env.plugin.unreserve(env.state, pod(), NODE)
        await asyncio.sleep(0)
    run(go())
    assert reserved_for(env.api()) == [] and env.client.claim_writes[-1] == ("unreserve", f"{NAMESPACE}/{CLAIM_NAME}")
    assumed = env.dra.claim(NAMESPACE, CLAIM_NAME)
    assert assumed is not None and reserved_for(assumed) == RESERVED_FOR


def test_reserved_okay_prebind_writes_nothing() -> None:
    """TestPlugin reserved-okay: the claim is already reserved for the pod."""
    env = Env(pod(), (inUseClaim,))
    assert env.schedule()
    assert run(env.plugin.pre_bind(env.state, pod(), NODE)).is_success()
    assert env.client.claim_writes == [] and not env.dra.is_assumed(NAMESPACE, CLAIM_NAME)


def test_empty_prebind_preflight_skips() -> None:
    """TestPlugin empty: ``prebindPreFlight`` is Skip for a pod without claims."""
    env = Env(parse_pod({"metadata": {"name": "foo", "namespace": "default"}}), ())
    with env.cache.lock:
        assert env.plugin.pre_filter(env.state, env.pod, env.cache.snapshot())[1].is_skip()
    assert env.plugin.pre_bind_pre_flight(env.state, env.pod, NODE).is_skip()


def test_wrong_topology_postfilter_deallocates_through_the_client() -> None:
    """TestPlugin wrong-topology: PostFilter clears the claim's allocation in the API."""
    env = Env(pod(), (claim(allocation=WRONG_TOPOLOGY),))

    async def go() -> Any:
        assert not env.schedule()
        with env.cache.lock:
            _, st = env.plugin.post_filter(env.state, pod(), None,  # type: ignore[arg-type]
                                           PostFilterContext(env.cache.snapshot(), None))  # type: ignore[arg-type]
        await asyncio.sleep(0)
        return st
    st = run(go())
    assert status(st) == (Code.UNSCHEDULABLE, "deallocation of ResourceClaim completed")
    assert env.api().allocation is None and env.client.claim_writes == [("deallocate", f"{NAMESPACE}/{CLAIM_NAME}")]


@pytest.mark.parametrize("name,setup,want", [
    ("deleted", "deleting", "claim default/my-pod-my-resource got deleted in the meantime"),
    ("allocated-elsewhere", "allocated", "claim default/my-pod-my-resource got allocated elsewhere in the meantime"),
    ("gone", "gone", 'get updated claim default/my-pod-my-resource after conflict: resourceclaims.resource.k8s.io '
                     '"my-pod-my-resource" not found'),
    ("conflicts", "conflicts", 'add finalizer to claim default/my-pod-my-resource: Operation cannot be fulfilled on '
                               'resourceclaims.resource.k8s.io "my-pod-my-resource": the object has been modified; '
                               'please apply your changes to the latest version and try again'),
])
def test_bind_claim_failures(name: str, setup: str, want: str) -> None:
    """bindClaim's errors (dynamicresources.go): after a conflict the fresh claim is being deleted,
    got allocated by someone else, or is gone; five conflicts in a row (retry.DefaultRetry) end it
    with the last one. PreBind fails with an Error and the text; the in-flight allocation ends and
    nothing is assumed; the pod is retried (never a ConflictError, which would drop it)."""
    env = Env(pod(), (pendingClaim, workerNodeSlice), (deviceClass,))
    assert env.schedule()
    now = env.api()
    if setup == "deleting":
        env.client.add_claim(replace(now, deleting=True, resource_version="9"))
    elif setup == "allocated":
        env.client.add_claim(replace(now, allocation=api_claim(allocatedClaim).allocation, resource_version="9"))
    elif setup == "gone":       # a conflict, and the claim is deleted before the refetch
        env.client.add_claim(replace(now, resource_version="9"))
        real = env.client.get_claim

        async def vanish(namespace: str, name: str) -> ResourceClaim:
            env.client.claims.clear()
            return await real(namespace, name)
        env.client.get_claim = vanish  # type: ignore[method-assign]
    else:
        env.client.claim_conflicts = 5
    st = run(env.plugin.pre_bind(env.state, pod(), NODE))
    assert status(st) == (Code.ERROR, want)
    assert isinstance(st.error, DynamicResourcesError) and not isinstance(st.error, ConflictError)
    assert not env.dra.has_pending_allocation(f"uid-{CLAIM_NAME}") and not env.dra.is_assumed(NAMESPACE, CLAIM_NAME)


def test_whole_cycle_allocates_and_binds() -> None:
    """Through the scheduler (a profile enabling DynamicResources): the pod is bound to the node with
    the device, its claim written as upstream's PreBind leaves it (finalizer, allocation,
    reservedFor) before the Binding, and the store holds the written claim; a second pod whose
    claim needs the same device stays pending with the plugin's reason."""
    from tests.builders import make_scheduler
    from tests.builders import pod as plain_pod
    dra = store(workerNodeSlice, classes=(deviceClass,))
    s, client = make_scheduler({"plugins": {"multiPoint": {"enabled": [{"name": "DynamicResources"}]}}}, dra=dra)
    bound_at: list[tuple[str, ...]] = []
    real_bind = client.bind

    async def bind(p: Pod, node_name: str) -> None:
        bound_at.append(tuple(v for v, _ in client.claim_writes))
        await real_bind(p, node_name)
    client.bind = bind  # type: ignore[method-assign]
    for name in ("first", "second"):
        c = claim(f"{name}-claim", owner=None)
        dra.upsert(client.add_claim(api_claim(c)))
    s.cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
                                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
    s.cache.add_node(parse_node({"metadata": {"name": "other", "labels": {"kubernetes.io/hostname": "other"}},
                                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
    first = plain_pod("first", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "first-claim"}]})
    second = plain_pod("second", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "second-claim"}]})

    for p in (first, second):
        schedule(s, p)
    assert client.bound == {first.uid: NODE} and bound_at == [("finalizer", "reserve")]
    got = client.claims[(NAMESPACE, "first-claim")]
    assert got.finalizers == (FINALIZER,) and got.allocation is not None
    assert [str(r.id) for r in got.allocation.results] == [f"{DRIVER}/{NODE}/instance-1"]
    assert reserved_for(got) == [{"resource": "pods", "name": "first", "uid": first.uid}]
    assert dra.claim(NAMESPACE, "first-claim") == got and not dra.has_pending_allocation("uid-first-claim")
    (key, reason, message, _), = client.failures
    assert (key, reason) == ("default/second", "Unschedulable")
    assert message.startswith("0/2 nodes are available: 2 cannot allocate all claims.")


# --- queueing hints (TestIsSchedulableAfterClaimChange, TestIsSchedulableAfterPodChange) ------------

def with_(body: dict[str, Any], **changes: Any) -> ResourceClaim:
    return replace(api_claim(body), **changes)


# (name, pod, claims in the store, old, new, want: True Queue / False QueueSkip / None an error)
CLAIM_HINTS: list[tuple[str, Pod, tuple[dict[str, Any], ...], Any, Any, bool | None]] = [
    ("skip-deletes", pod(template=True, in_status=False), (), api_claim(allocatedClaim), None, False),
    ("backoff-wrong-new-object", pod(template=True, in_status=False), (), None, "not-a-claim", None),
    ("skip-wrong-claim", pod(template=True, in_status=False), (),
     None, api_claim(claim(allocation=ALLOCATION, owner=POD_UID + "123")), False),
    ("skip-unrelated-claim", pod(template=True, in_status=False), (allocatedClaim,),
     None, with_(allocatedClaim, name=CLAIM_NAME + "-foo", uid=f"uid-{CLAIM_NAME}123"), False),
    ("queue-on-add", pod(), (), None, api_claim(pendingClaim), True),
    ("backoff-wrong-old-object", pod(), (pendingClaim,), "not-a-claim", api_claim(pendingClaim), None),
    ("skip-adding-finalizer", pod(), (pendingClaim,), api_claim(pendingClaim),
     with_(pendingClaim, finalizers=("foo",)), False),
    ("queue-on-status-change", pod(), (pendingClaim,), api_claim(pendingClaim),
     with_(pendingClaim, allocation=parse_allocation({})), True),
    ("claim-deallocate", pod(), (pendingClaim, otherAllocatedClaim), api_claim(otherAllocatedClaim),
     with_(otherAllocatedClaim, allocation=None), True),
]


@pytest.mark.parametrize("name,p,claims,old,new,want", CLAIM_HINTS, ids=[c[0] for c in CLAIM_HINTS])
def test_is_schedulable_after_claim_change(name: str, p: Pod, claims: tuple[dict[str, Any], ...], old: Any,
                                           new: Any, want: bool | None) -> None:
    """dynamicresources_test.go TestIsSchedulableAfterClaimChange: the store already holds the new
    claim when the hint runs (as upstream's informer cache does)."""
    from scheduler.framework.types import ClusterEvent
    dra = store(*claims)
    if isinstance(new, ResourceClaim):
        dra.upsert(new)
    plugin = DynamicResources(dra)
    event = ClusterEvent("ResourceClaim", "Update" if old is not None else "Add", old=old, new=new)
    if want is None:
        with pytest.raises(TypeError):
            plugin.is_schedulable_after_claim_change(p, event)
        return
    assert plugin.is_schedulable_after_claim_change(p, event) is want


def two_templates(*, statuses: int = 0) -> Pod:
    names = ("my-resource", "my-resource-2")
    body: dict[str, Any] = {"metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
                            "spec": {"resourceClaims": [{"name": n, "resourceClaimTemplateName": CLAIM_NAME}
                                                        for n in names]}}
    if statuses:
        body["status"] = {"resourceClaimStatuses": [{"name": n, "resourceClaimName": CLAIM_NAME}
                                                    for n in names[:statuses]]}
    return parse_pod(body)


def other_uid(p: Pod) -> Pod:
    return replace(p, name=p.name + "2", uid=p.uid + "2")


POD_HINTS: list[tuple[str, tuple[dict[str, Any], ...], Pod, Any, bool | None]] = [
    ("backoff-wrong-new-object", (), pod(template=True, in_status=False), "not-a-claim", None),
    ("complete", (pendingClaim,), pod(template=True, in_status=False), pod(template=True), True),
    ("wrong-pod", (pendingClaim,), other_uid(pod(template=True, in_status=False)), pod(template=True), False),
    ("missing-claim", (), pod(template=True, in_status=False), pod(template=True), False),
    ("incomplete", (pendingClaim,), two_templates(), two_templates(statuses=1), False),
]


@pytest.mark.parametrize("name,claims,p,new,want", POD_HINTS, ids=[c[0] for c in POD_HINTS])
def test_is_schedulable_after_pod_change(name: str, claims: tuple[dict[str, Any], ...], p: Pod, new: Any,
                                         want: bool | None) -> None:
    """dynamicresources_test.go TestIsSchedulableAfterPodChange."""
    from scheduler.framework.types import ClusterEvent
    plugin = DynamicResources(store(*claims))
    event = ClusterEvent("Pod", "UpdatePodGeneratedResourceClaim", new=new)
    if want is None:
        with pytest.raises(TypeError):
            plugin.is_schedulable_after_pod_change(p, event)
        return
    assert plugin.is_schedulable_after_pod_change(p, event) is want


# --- extended resources backed by DRA (TestPlugin's extended-resource cases) ---------------------------

GPU, GPU2 = "example.com/gpu", "example.com/gpu2"
IMPLICIT = f"deviceclass.resource.kubernetes.io/{CLASS_NAME}"
extendedClass = {"metadata": {"name": CLASS_NAME}, "spec": {"extendedResourceName": GPU}}
extendedClass2 = {"metadata": {"name": CLASS_NAME + "2"}, "spec": {"extendedResourceName": GPU2}}
largeWorkerNodeSlice = {"metadata": {"name": f"{NODE}-{DRIVER}"}, "spec": {
    "driver": DRIVER, "pool": {"name": NODE, "generation": 1, "resourceSliceCount": 1}, "nodeName": NODE,
    "devices": [{"name": f"instance-{i}"} for i in range(1, 5)]}}


def ext_pod(*containers: dict[str, str]) -> Pod:
    """``st.MakePod().Req(...)``: one container per request map (named con0, con1, ...)."""
    return parse_pod({"metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID}, "spec": {
        "containers": [{"name": f"con{i}", "image": "i", "resources": {"requests": r}}
                       for i, r in enumerate(containers)]}})


def existing_extended_claim(node: str = NODE) -> dict[str, Any]:
    """``extendedResourceClaim`` / ``extendedResourceClaimNode2``: created by an earlier cycle."""
    return {"metadata": {"name": "my-pod-extended-resources-0", "namespace": NAMESPACE, "uid": "uid-ext",
                         "generateName": "my-pod-extended-resources-",
                         "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": POD_NAME, "uid": POD_UID,
                                              "controller": True}]},
            "spec": {"devices": {"requests": [{"name": "container-0-request-0",
                                               "exactly": {"deviceClassName": CLASS_NAME}}]}},
            "status": {"allocation": {"devices": {"results": [{"driver": DRIVER, "pool": NODE, "device": "instance-1",
                                                               "request": "container-0-request-0"}]},
                                      "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                          {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}}


class ExtEnv(Env):
    def __init__(self, p: Pod, objs: tuple[dict[str, Any], ...], classes: tuple[dict[str, Any], ...],
                 allocatable: dict[str, str] | None = None) -> None:
        super().__init__(p, objs, classes)
        self.cache = Cache()
        self.cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
                                        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10",
                                                                   **(allocatable or {})}}}))

    def filter(self) -> Any:
        with self.cache.lock:
            snap = self.cache.snapshot()
            _, pre = self.plugin.pre_filter(self.state, self.pod, snap)
            if not pre.is_success():
                return pre
            v = self.plugin.filter_nodes(self.state, self.pod, snap, np.array([snap.row_of(NODE)], np.int64))
            return v.statuses[0 if v.status_ids is None else int(v.status_ids[0])] if v.failed[0] else None

    def in_flight(self) -> list[ResourceClaim]:
        s = self.state.get("DynamicResources")
        return [c for c in [self.dra.pending_allocation(s.extended_uid)] if c is not None]

    def post_filter(self) -> Any:
        with self.cache.lock:
            return self.plugin.post_filter(self.state, self.pod, None,  # type: ignore[arg-type]
                                           PostFilterContext(self.cache.snapshot(), None))[1]  # type: ignore[arg-type]


def requests_of(c: ResourceClaim) -> list[tuple[str, str, int]]:
    return [(r.name, r.exactly.device_class_name, r.exactly.count) for r in c.spec.requests if r.exactly is not None]


@pytest.mark.parametrize("name,p,objs,classes,allocatable,want_requests", [
    ("extended-resource-one-device-plugin-one-dra", ext_pod({GPU: "1", GPU2: "1"}), (workerNodeSlice,),
     (extendedClass, extendedClass2), {GPU: "1"}, [("container-0-request-1", CLASS_NAME + "2", 1)]),
    ("extended-resource-name-with-zero-allocatable", ext_pod({GPU: "1"}), (workerNodeSlice,), (extendedClass,),
     {GPU: "0"}, [("container-0-request-0", CLASS_NAME, 1)]),
    ("extended-resource-name-with-resources", ext_pod({GPU: "1"}), (workerNodeSlice,), (extendedClass,), None,
     [("container-0-request-0", CLASS_NAME, 1)]),
    ("implicit-extended-resource-name-with-resources", ext_pod({IMPLICIT: "1", GPU: "2"}), (largeWorkerNodeSlice,),
     (extendedClass,), None, [("container-0-request-0", CLASS_NAME, 1), ("container-0-request-1", CLASS_NAME, 2)]),
    ("implicit-extended-resource-name-two-containers-with-resources", ext_pod({IMPLICIT: "1"}, {GPU: "2"}),
     (largeWorkerNodeSlice,), (extendedClass,), None,
     [("container-0-request-0", CLASS_NAME, 1), ("container-1-request-0", CLASS_NAME, 2)]),
])
def test_extended_resource_claim_is_created_and_reserved(name: str, p: Pod, objs: tuple[dict[str, Any], ...],
                                                         classes: tuple[dict[str, Any], ...],
                                                         allocatable: dict[str, str] | None,
                                                         want_requests: list[tuple[str, str, int]]) -> None:
    """TestPlugin: Reserve signals the in-memory claim (``<extended-resources>``, the node's
    requests) in flight; PreBind creates ``my-pod-extended-resources-0`` (generateName, the pod as
    controller, the annotation), writes its allocation and reservation, assumes it, and sets the
    pod's ``extendedResourceClaimStatus``."""
    env = ExtEnv(p, objs, classes, allocatable)
    assert env.filter() is None
    with env.cache.lock:
        assert env.plugin.reserve(env.state, p, NODE).is_success()
    (flying,) = env.in_flight()
    assert flying.name == "<extended-resources>" and requests_of(flying) == want_requests
    assert flying.allocation is not None and len(flying.allocation.results) == sum(n for _, _, n in want_requests)
    assert env.plugin.pre_bind_pre_flight(env.state, p, NODE).is_success()
    assert run(env.plugin.pre_bind(env.state, p, NODE)).is_success()
    got = env.client.claims[(NAMESPACE, "my-pod-extended-resources-0")]
    assert got.generate_name == "my-pod-extended-resources-" and got.is_extended_resource_claim
    assert got.controller == ("v1", "Pod", POD_NAME, POD_UID) and requests_of(got) == want_requests
    assert got.allocation is not None and reserved_for(got) == RESERVED_FOR and got.finalizers == (FINALIZER,)
    assert [v for v, _ in env.client.claim_writes] == ["create", "finalizer", "reserve"]
    assert env.dra.claim(NAMESPACE, got.name) == got and env.in_flight() == []
    claim_name, mappings = env.client.extended_claim_status[f"{NAMESPACE}/{POD_NAME}"]
    assert claim_name == got.name and sorted(m["requestName"] for m in mappings) == [r for r, _, _ in want_requests]


def test_extended_resource_name_with_node_resource() -> None:
    """TestPlugin extended-resource-name-with-node-resource: the node advertises it (device plugin):
    Filter passes, nothing is in flight, nothing is created."""
    env = ExtEnv(ext_pod({GPU: "1"}), (), (extendedClass,), {GPU: "1"})
    assert env.filter() is None
    with env.cache.lock:
        assert env.plugin.reserve(env.state, env.pod, NODE).is_success()
    assert env.in_flight() == []
    assert run(env.plugin.pre_bind(env.state, env.pod, NODE)).is_success()
    assert env.client.claim_writes == [] and env.client.extended_claim_status == {}


def test_non_dra_extended_resource_name_with_zero_allocatable() -> None:
    """TestPlugin non-DRA-extended-resource-name-with-zero-allocatable: no class names it: Skip."""
    env = ExtEnv(ext_pod({GPU: "1"}), (workerNodeSlice,), (deviceClass,), {GPU: "0"})
    assert status(env.filter()) == (Code.SKIP, "")
    assert env.plugin.pre_bind_pre_flight(env.state, env.pod, NODE).is_skip()


def test_extended_resource_name_no_resource() -> None:
    """TestPlugin extended-resource-name-no-resource: no devices: ``cannot allocate all claims``."""
    env = ExtEnv(ext_pod({GPU: "1"}), (), (extendedClass,))
    assert status(env.filter()) == (U, "cannot allocate all claims")
    assert status(env.post_filter()) == NOOP


@pytest.mark.parametrize("name,node", [("extended-resource-name-with-resources-has-claim", NODE),
                                       ("extended-resource-name-with-resources-delete-claim", "worker-2")])
def test_stale_extended_resource_claim_is_deleted(name: str, node: str) -> None:
    """TestPlugin: the claim an earlier cycle created makes every node ``cannot schedule extended
    resource claim``; PostFilter deletes it (``deletion of ResourceClaim completed``)."""
    env = ExtEnv(ext_pod({GPU: "1"}), (existing_extended_claim(node), workerNodeSlice), (extendedClass,))

    async def go() -> Any:
        assert status(env.filter()) == (U, "cannot schedule extended resource claim")
        st = env.post_filter()
        await asyncio.sleep(0)
        return st
    assert status(run(go())) == (Code.UNSCHEDULABLE, "deletion of ResourceClaim completed")
    assert (NAMESPACE, "my-pod-extended-resources-0") not in env.client.claims


def test_extended_resource_name_bind_failure() -> None:
    """TestPlugin extended-resource-name-bind-failure: Unreserve after PreBind deletes the claim."""
    env = ExtEnv(ext_pod({GPU: "1"}), (workerNodeSlice,), (extendedClass,))

    async def go() -> None:
        assert env.filter() is None
        assert env.plugin.reserve(env.state, env.pod, NODE).is_success()
        assert (await env.plugin.pre_bind(env.state, env.pod, NODE)).is_success()
        assert (NAMESPACE, "my-pod-extended-resources-0") in env.client.claims
        env.plugin.unreserve(env.state, env.pod, NODE)
        for _ in range(3):
            await asyncio.sleep(0)
    run(go())
    assert env.client.claims == {} and env.client.claim_writes[-1] == ("delete", f"{NAMESPACE}/my-pod-extended-resources-0")


def test_extended_resource_name_skip_bind() -> None:
    """TestPlugin extended-resource-name-skip-bind: Unreserve before PreBind: nothing created."""
    env = ExtEnv(ext_pod({GPU: "1"}), (workerNodeSlice,), (extendedClass,))
    assert env.filter() is None
    with env.cache.lock:
        assert env.plugin.reserve(env.state, env.pod, NODE).is_success()
    assert env.in_flight() != []
    env.plugin.unreserve(env.state, env.pod, NODE)
    assert env.in_flight() == [] and env.client.claim_writes == []
    assert not env.dra.is_allocated(DeviceID(DRIVER, NODE, "instance-1"))


@pytest.mark.parametrize("name,fail,want", [
    ("extended-resource-name-claim-creation-failure", "create",
     "create claim for extended resources default/: claim creation errors"),
    ("extended-resource-name-with-resources-fail-patch", "patch",
     "update pod default/my-pod ExtendedResourceClaimStatus: patch error"),
])
def test_extended_resource_prebind_failures(name: str, fail: str, want: str) -> None:
    """TestPlugin: the claim cannot be created (nothing in the API, nothing in flight after), or the
    pod's status cannot be patched (the claim is created, written and assumed; PreBind fails)."""
    from scheduler.errors import ClientError
    env = ExtEnv(ext_pod({GPU: "1"}), (workerNodeSlice,), (extendedClass,))
    if fail == "create":
        async def refuse(body: Any) -> ResourceClaim:
            raise ClientError("claim creation errors", status=400)
        env.client.create_claim = refuse  # type: ignore[method-assign]
    else:
        async def refuse_patch(*_: Any) -> None:
            raise ClientError("patch error", status=500)
        env.client.set_extended_resource_claim_status = refuse_patch  # type: ignore[method-assign]
    assert env.filter() is None
    with env.cache.lock:
        assert env.plugin.reserve(env.state, env.pod, NODE).is_success()
    st = run(env.plugin.pre_bind(env.state, env.pod, NODE))
    assert status(st) == (Code.ERROR, want) and env.in_flight() == []
    created = env.client.claims.get((NAMESPACE, "my-pod-extended-resources-0"))
    if fail == "create":
        assert created is None
    else:
        assert created is not None and reserved_for(created) == RESERVED_FOR
        assert env.dra.claim(NAMESPACE, created.name) == created


def test_default_profile_gives_an_extended_resource_through_dra() -> None:
    """The default profile (NodeResourcesFit and DynamicResources): a pod asking for
    ``example.com/gpu: 1`` on a node that does not advertise it is not rejected by Fit (upstream's
    ShouldDelegateResourceToDRA) and gets the node's device through the claim PreBind creates; a
    second such pod finds no device left: upstream's FitError text."""
    from tests.builders import make_scheduler
    dra = store(workerNodeSlice, classes=(extendedClass,))
    s, client = make_scheduler(dra=dra)
    s.cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
                                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
    pods = [parse_pod({"metadata": {"name": n, "namespace": NAMESPACE, "uid": f"uid-{n}"}, "spec": {
        "containers": [{"name": "c", "image": "i", "resources": {"requests": {GPU: "1"}}}]}}) for n in ("a", "b")]

    for p in pods:
        schedule(s, p)
    assert client.bound == {"uid-a": NODE}
    (claim_name, mappings), = client.extended_claim_status.values()
    assert claim_name == "a-extended-resources-0"
    assert mappings == [{"containerName": "c", "resourceName": GPU, "requestName": "container-0-request-0"}]
    got = client.claims[(NAMESPACE, claim_name)]
    assert got.allocation is not None and [str(r.id) for r in got.allocation.results] == [f"{DRIVER}/{NODE}/instance-1"]
    (key, _, message, _), = client.failures
    assert key == f"{NAMESPACE}/b" and message == (
        "0/1 nodes are available: 1 cannot allocate all claims. preemption: 0/1 nodes are available: "
        "1 Preemption is not helpful for scheduling.")


# --- Score / NormalizeScore (TestPlugin's prioritized-list scoring cases) ----------------------------
# Upstream's objects: ``claimWithPrioritizedListAndSelector`` (req-1: subreq-1 asks for a device whose
# ``healthy`` attribute is true, subreq-2 for any device), ``claimWithPrioritzedList`` (req-1: one
# subrequest of one device), ``claim2WithPrioritizedListAndMultipleSubrequests`` (req-1: 4, 3, 2 or
# 1 devices), ``claimWithMultiplePrioritizedListRequests`` (req-1 and req-2: 2 devices, else 1);
# ``workerNode2``/``workerNode3`` (``worker-2``, ``worker-3``), slices from
# ``st.MakeResourceSlice(node, driver).Device(...)`` (pool named after the node).
NODE2, NODE3 = "worker-2", "worker-3"
CLAIM_NAME2 = "my-pod-my-resource-2"


def prioritized_claim(name: str, *requests: list[tuple[str, int, str | None]]) -> dict[str, Any]:
    """``st.MakeResourceClaim().RequestWithPrioritizedList(st.SubRequest(name, class, count), ...)``
    per request (named req-1, req-2, ...; ``st.SubRequestWithSelector`` when a selector is given),
    owned by the pod (``pending...``)."""
    def sub(name: str, count: int, selector: str | None) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name, "deviceClassName": CLASS_NAME, "allocationMode": "ExactCount",
                                "count": count}
        if selector is not None:
            body["selectors"] = [{"cel": {"expression": selector}}]
        return body
    body = claim(name)
    body["spec"] = {"devices": {"requests": [
        {"name": f"req-{i}", "firstAvailable": [sub(*s) for s in subs]} for i, subs in enumerate(requests, 1)]}}
    return body


def node_slice(node: str, devices: int, healthy: bool | None = None) -> dict[str, Any]:
    """``st.MakeResourceSlice(node, driver).Device("instance-1", ...)...``."""
    attrs = {} if healthy is None else {"attributes": {ATTR: {"bool": healthy}}}
    return {"metadata": {"name": f"{node}-{DRIVER}"}, "spec": {
        "driver": DRIVER, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "nodeName": node,
        "devices": [{"name": f"instance-{i}", **attrs} for i in range(1, devices + 1)]}}


def two_claims_pod() -> Pod:
    """``podWithTwoClaimNames``."""
    return parse_pod({"metadata": {"name": POD_NAME, "namespace": NAMESPACE, "uid": POD_UID},
                      "spec": {"resourceClaims": [{"name": "my-resource", "resourceClaimName": CLAIM_NAME},
                                                  {"name": "my-resource-2", "resourceClaimName": CLAIM_NAME2}]}})


class ScoreCase:
    def __init__(self, name: str, p: Pod, objs: tuple[dict[str, Any], ...], nodes: tuple[str, ...],
                 score: dict[str, int], normalized: dict[str, int], reserved: dict[str, list[str]],
                 filter: dict[str, str] | None = None) -> None:  # noqa: A002
        self.name, self.pod, self.objs, self.nodes = name, p, objs, nodes
        self.score, self.normalized, self.reserved, self.filter = score, normalized, reserved, filter or {}


SELECTED = f'device.attributes["{DRIVER}"].{ATTR}'
SCORE_CASES = [
    # single-claim-prioritized-list-scoring: worker's device is healthy (subreq-1: 8), worker-2's is
    # not (subreq-2: 7); 7 * 100 // 8 = 87.
    ScoreCase("single-claim-prioritized-list-scoring", pod(),
              (prioritized_claim(CLAIM_NAME, [("subreq-1", 1, SELECTED), ("subreq-2", 1, None)]),
               node_slice(NODE, 1, healthy=True), node_slice(NODE2, 1, healthy=False)),
              (NODE, NODE2), score={NODE: 8, NODE2: 7}, normalized={NODE: 100, NODE2: 87},
              reserved={CLAIM_NAME: ["req-1/subreq-1"]}),
    # multiple-claims-prioritized-list-scoring: worker (4 devices): claim 1 takes one (8), claim 2's
    # four do not fit beside it, three do (subreq-2: 7); worker-2 (2 devices): 8 + 5 (subreq-4);
    # worker-3 (1 device): claim 2 gets nothing.
    ScoreCase("multiple-claims-prioritized-list-scoring", two_claims_pod(),
              (prioritized_claim(CLAIM_NAME, [("subreq-1", 1, None)]),
               prioritized_claim(CLAIM_NAME2, [("subreq-1", 4, None), ("subreq-2", 3, None), ("subreq-3", 2, None),
                                               ("subreq-4", 1, None)]),
               node_slice(NODE, 4), node_slice(NODE2, 2), node_slice(NODE3, 1)),
              (NODE, NODE2, NODE3), score={NODE: 15, NODE2: 13}, normalized={NODE: 100, NODE2: 86},
              reserved={CLAIM_NAME: ["req-1/subreq-1"], CLAIM_NAME2: ["req-1/subreq-2"] * 3},
              filter={NODE3: "cannot allocate all claims"}),
    # multiple-requests-prioritized-list-scoring: 4 devices: 8 + 8; 3: 8 + 7; 2: 7 + 7 (the search
    # backtracks req-1 to its second choice so that req-2 gets a device).
    ScoreCase("multiple-requests-prioritized-list-scoring", pod(),
              (prioritized_claim(CLAIM_NAME, [("subreq-1", 2, None), ("subreq-2", 1, None)],
                                 [("subreq-1", 2, None), ("subreq-2", 1, None)]),
               node_slice(NODE, 4), node_slice(NODE2, 3), node_slice(NODE3, 2)),
              (NODE, NODE2, NODE3), score={NODE: 16, NODE2: 15, NODE3: 14},
              normalized={NODE: 100, NODE2: 93, NODE3: 87},
              reserved={CLAIM_NAME: ["req-1/subreq-1"] * 2 + ["req-2/subreq-1"] * 2}),
]


def cluster(*nodes: str) -> Cache:
    cache = Cache()
    for n in nodes:
        cache.add_node(parse_node({"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}}}))
    return cache


@pytest.mark.parametrize("case", SCORE_CASES, ids=[c.name for c in SCORE_CASES])
def test_prioritized_list_scoring(case: ScoreCase) -> None:
    """TestPlugin (``dynamicresources_test.go``, 1.35+) for the three prioritized-list scoring cases:
    Filter on every node, Score on the potential nodes (``scoreResult``), NormalizeScore
    (``normalizeScoreResult``), Reserve on the best node (the claims' allocations in flight, as
    ``allocatedClaim...``: which subrequest each device went to)."""
    dra = store(*case.objs, classes=(deviceClass,))
    plugin = DynamicResources(dra)
    cache = cluster(*case.nodes)
    state = CycleState()
    with cache.lock:
        snap = cache.snapshot()
        assert plugin.pre_filter(state, case.pod, snap)[1].is_success()
        rows = np.array([snap.row_of(n) for n in case.nodes], np.int64)
        v = plugin.filter_nodes(state, case.pod, snap, rows)
        got_filter = {n: v.statuses[0 if v.status_ids is None else int(v.status_ids[k])].message()
                      for k, n in enumerate(case.nodes) if v.failed[k]}
        assert got_filter == case.filter
        potential = rows[~v.failed]
        names = [n for k, n in enumerate(case.nodes) if not v.failed[k]]
        scores = plugin.score_nodes(state, case.pod, snap, potential)
        assert dict(zip(names, scores.tolist(), strict=True)) == case.score
        ext = plugin.score_extensions()
        assert ext is not None and ext.normalize_score(state, case.pod, scores).is_success()
        assert dict(zip(names, scores.tolist(), strict=True)) == case.normalized
        best = names[int(np.argmax(scores))]
        assert best == NODE
        assert plugin.reserve(state, case.pod, best).is_success()
    for name, want in case.reserved.items():
        flying = dra.pending_allocation(f"uid-{name}")
        assert flying is not None and flying.allocation is not None
        assert [r.request for r in flying.allocation.results] == want
        assert {r.pool for r in flying.allocation.results} == {NODE}


def test_score_without_claims_is_zero_everywhere() -> None:
    """Upstream's Score for a pod without claims: 0 on every node, and NormalizeScore
    (DefaultNormalizeScore) leaves all zeros as they are; here one column of zeros, no per-node work."""
    plugin = DynamicResources(store(workerNodeSlice, classes=(deviceClass,)))
    p = parse_pod({"metadata": {"name": "foo", "namespace": "default"}})
    cache = cluster(NODE, NODE2, NODE3)
    state = CycleState()
    with cache.lock:
        snap = cache.snapshot()
        assert plugin.pre_filter(state, p, snap)[1].is_skip()
        rows = np.array([snap.row_of(n) for n in (NODE, NODE2, NODE3)], np.int64)
        scores = plugin.score_nodes(state, p, snap, rows)
        assert scores.tolist() == [0, 0, 0]
        assert plugin.normalize_score(state, p, scores).is_success() and scores.tolist() == [0, 0, 0]


def test_score_without_prefilter_state_is_an_error() -> None:
    """Upstream's Score on a cycle state PreFilter never wrote: getStateData's error (the framework
    turns the raise into an Error status)."""
    plugin = DynamicResources(store())
    cache = cluster(NODE)
    with cache.lock:
        snap = cache.snapshot()
        with pytest.raises(LookupError, match="error reading 'DynamicResources' from cycleState: not found"):
            plugin.score_nodes(CycleState(), pod(), snap, np.array([snap.row_of(NODE)], np.int64))


def test_score_with_allocated_and_unallocated_claims() -> None:
    """kubernetes#139016 (fixed by #139017, cherry-picked to 1.35 and 1.36): a pod sharing an
    allocated multi-node claim (an ``allNodes`` device) and with a claim to allocate. 1.35.0's
    computeScore failed Score with ``number of allocations 1 is smaller than number of claims``;
    fixed, only the claim allocated in this cycle is scored (the allocated one's device is fixed)."""
    shared_slice = {"metadata": {"name": "net"}, "spec": {
        "driver": "net.example.com", "allNodes": True,
        "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1}, "devices": [{"name": "nic-0"}]}}
    shared = claim(CLAIM_NAME, owner=None, allocation={"devices": {"results": [
        {"driver": "net.example.com", "pool": "fabric", "device": "nic-0", "request": "req-1"}]}})
    own = prioritized_claim(CLAIM_NAME2, [("subreq-1", 1, SELECTED), ("subreq-2", 1, None)])
    dra = store(shared, own, shared_slice, node_slice(NODE, 1, healthy=False), node_slice(NODE2, 1, healthy=True),
                classes=(deviceClass,))
    plugin = DynamicResources(dra)
    cache = cluster(NODE, NODE2)
    state = CycleState()
    with cache.lock:
        snap = cache.snapshot()
        assert plugin.pre_filter(state, two_claims_pod(), snap)[1].is_success()
        rows = np.array([snap.row_of(n) for n in (NODE, NODE2)], np.int64)
        assert not plugin.filter_nodes(state, two_claims_pod(), snap, rows).failed.any()
        scores = plugin.score_nodes(state, two_claims_pod(), snap, rows)
        assert scores.tolist() == [7, 8]
        assert plugin.normalize_score(state, two_claims_pod(), scores).is_success()
        assert scores.tolist() == [87, 100]


def test_default_profile_places_the_pod_where_its_first_choice_fits() -> None:
    """Beyond upstream's unit table, through the default profile (DynamicResources' Score at weight
    1, as upstream's default_plugins.go lists it without a weight): of two nodes otherwise alike, the
    pod goes where its claim's first subrequest fits (DynamicResources 100 against 87), whatever the
    tie-breaking seed; a pod without claims gets 0 from it on every node (its decision record lists
    DynamicResources with 0)."""
    from tests.builders import make_scheduler
    from tests.builders import pod as plain_pod
    for seed in range(4):
        dra = store(node_slice(NODE, 1, healthy=False), node_slice(NODE2, 1, healthy=True), classes=(deviceClass,))
        s, client = make_scheduler(dra=dra, seed=seed)
        dra.upsert(client.add_claim(api_claim(prioritized_claim("gpu", [("subreq-1", 1, SELECTED),
                                                                        ("subreq-2", 1, None)]))))
        for n in (NODE, NODE2):
            s.cache.add_node(parse_node({"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                                         "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
        plain = plain_pod("plain")
        fwk = s.profiles.for_pod(plain)
        assert fwk is not None and ("DynamicResources", 1) in [(p.name, w) for p, w in fwk.score]
        with s.cache.lock:
            snap = s.cache.snapshot()
            state = fwk.new_cycle_state()
            fwk.run_pre_filter(state, plain, snap)
            rows = np.array([snap.row_of(NODE), snap.row_of(NODE2)], np.int64)
            assert fwk.run_pre_score(state, plain, snap, rows).is_success()
            _, per_plugin, st = fwk.run_score(state, plain, snap, rows)
            assert st.is_success() and per_plugin["DynamicResources"].tolist() == [0, 0]
        gpu_pod = plain_pod("with-gpu", spec={"resourceClaims": [{"name": "gpu", "resourceClaimName": "gpu"}]})
        schedule(s, gpu_pod)
        assert client.bound == {gpu_pod.uid: NODE2}, seed
        got = client.claims[(NAMESPACE, "gpu")]
        assert got.allocation is not None and [r.request for r in got.allocation.results] == ["req-1/subreq-1"]


# --- Filter's counting against the search ------------------------------------------------------

def _counting_world(rng: random.Random, nodes: list[str], version: int = 1) -> list[dict[str, Any]]:
    """A slice per node (some nodes have none): 0 to 4 devices, healthy, unhealthy or without the
    attribute (a runtime error for a selector reading it); sometimes an incomplete pool (a second
    slice declared, never published) or a duplicate device (an invalid pool)."""
    slices = []
    for n in nodes:
        if rng.random() < 0.15:
            continue
        devices: list[dict[str, Any]] = []
        for i in range(rng.randrange(0, 5)):
            d: dict[str, Any] = {"name": f"instance-{i}"}
            if rng.random() < 0.9:
                d["attributes"] = {ATTR: {"bool": rng.random() < 0.8}}
            devices.append(d)
        if devices and rng.random() < 0.05:
            devices.append({"name": devices[0]["name"]})
        count = 2 if rng.random() < 0.05 else 1
        slices.append({"metadata": {"name": f"{n}-{DRIVER}"}, "spec": {
            "driver": DRIVER, "pool": {"name": n, "generation": version, "resourceSliceCount": count},
            "nodeName": n, "devices": devices}})
    return slices


@pytest.mark.parametrize("seed", range(30))
def test_counting_filter_agrees_with_the_search(seed: int) -> None:
    """Beyond upstream: Filter passes a node by counting its free devices (``_FreeRows``) and
    searches only on the node Reserve picks; with ``count_free`` off it searches every node, as
    before. Over a random sequence of pods (claims of one or two devices with and without a
    selector that fails on some devices, and pods asking for a DRA-backed extended resource, on
    nodes some of which advertise it), with allocations left in flight, undone or written, slices
    republished, a node updated and a node added between pods (after its slice), both give every row the same verdict and status,
    and Reserve the same devices."""
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(6)]
    classes = ({"metadata": {"name": CLASS_NAME}, "spec": {}},
               {"metadata": {"name": "healthy"}, "spec": {"selectors": [{"cel": {"expression": SELECTED}}]}},
               {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": GPU, "selectors": [
                   {"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
    slices = _counting_world(rng, nodes)
    cache = Cache()

    def add_node(n: str) -> None:
        gpu = {GPU: "1"} if rng.random() < 0.2 else {}
        cache.add_node(parse_node({"metadata": {"name": n, "labels": {"kubernetes.io/hostname": n}},
                                   "status": {"allocatable": {"cpu": "4", "pods": "10", **gpu}}}))

    for n in nodes:
        add_node(n)
    stores = [store(*slices, classes=classes), store(*slices, classes=classes)]
    plugins = [DynamicResources(stores[0]), DynamicResources(stores[1])]
    plugins[1].count_free = False
    counted = 0
    for step in range(40):
        uid = f"p{step}"
        if rng.random() < 0.3:
            p = parse_pod({"metadata": {"name": uid, "namespace": NAMESPACE, "uid": uid}, "spec": {"containers": [
                {"name": "c", "image": "i", "resources": {"requests": {GPU: str(rng.choice([1, 1, 2]))}}}]}})
            written = False
        else:
            exactly: dict[str, Any] = {"deviceClassName": rng.choice([CLASS_NAME, CLASS_NAME, "healthy"]),
                                       "allocationMode": "ExactCount", "count": rng.choice([1, 1, 2])}
            if rng.random() < 0.2:
                exactly["selectors"] = [{"cel": {"expression": SELECTED}}]
            c = {"metadata": {"name": f"c{step}", "namespace": NAMESPACE, "uid": f"uid-c{step}"},
                 "spec": {"devices": {"requests": [{"name": "req-1", "exactly": exactly}]}}}
            for dra in stores:
                dra.on_event("ResourceClaim", "ADDED", c)
            p = parse_pod({"metadata": {"name": uid, "namespace": NAMESPACE, "uid": uid},
                           "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": f"c{step}"}]}})
            written = rng.random() < 0.5
        verdicts = []
        states = []
        with cache.lock:
            snap = cache.snapshot()
            rows = np.array(sorted(snap.row_of(n) for n in nodes), np.int64)
            for plugin in plugins:
                state = CycleState()
                states.append(state)
                plugin.pre_filter(state, p, snap)
                v = plugin.filter_nodes(state, p, snap, rows)
                ids = v.status_ids if v.status_ids is not None else np.zeros(len(rows), np.int64)
                verdicts.append([(v.statuses[int(ids[k])].code, v.statuses[int(ids[k])].message()) if v.failed[k]
                                 else None for k in range(len(rows))])
            assert verdicts[0] == verdicts[1], (step, verdicts)
            passing = [snap.node_names(rows)[k] for k in range(len(rows)) if verdicts[0][k] is None]
            counted += len(states[0].get("DynamicResources").counted)
            if passing:
                chosen = rng.choice(passing)
                got = []
                for plugin, state in zip(plugins, states, strict=True):
                    assert plugin.reserve(state, p, chosen).is_success()
                    reserved = DynamicResources.reserved(state)
                    assert reserved is not None
                    got.append([[str(r.id) for r in c.allocation.results] for c in reserved.claims if c.allocation])
                assert got[0] == got[1]
                action = rng.random()
                for plugin, state, dra in zip(plugins, states, stores, strict=True):
                    if action < 0.25:
                        plugin.unreserve(state, p, chosen)
                    elif written and action < 0.75:
                        claim_ = dra.pending_allocation(f"uid-c{step}")
                        assert claim_ is not None
                        dra.assume(claim_)
                        dra.remove_pending_allocation(f"uid-c{step}")
        if step == 14:      # two slices republished: a new index
            slices = _counting_world(rng, nodes[:2], version=2)
            for dra in stores:
                for s in slices:
                    dra.on_event("ResourceSlice", "MODIFIED", s)
        if step == 8:       # a node updated (its labels and allocatable): the rows and counts stay
            cache.add_node(parse_node({"metadata": {"name": "n0", "labels": {"kubernetes.io/hostname": "n0",
                                                                              "zone": "z1"}},
                                       "status": {"allocatable": {"cpu": "8", "pods": "10"}}}))
        if step == 26:      # a slice for a node not there yet: a new index
            for dra in stores:
                dra.on_event("ResourceSlice", "ADDED", node_slice("n6", 3, healthy=True))
        if step == 30:      # the node comes: new table rows only
            nodes.append("n6")
            add_node("n6")
    assert counted


def _filter_one(plugin: DynamicResources, p: Pod) -> tuple[CycleState, Any]:
    """PreFilter and Filter of ``p`` on the one node: its state, and the node's status (``None``: fits)."""
    cache = Cache()
    cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}}}))
    with cache.lock:
        snap = cache.snapshot()
        rows = np.array([snap.row_of(NODE)], np.int64)
        state = CycleState()
        _, st = plugin.pre_filter(state, p, snap)
        assert st.is_success(), st.message()
        v = plugin.filter_nodes(state, p, snap, rows)
        if not v.failed[0]:
            return state, None
        return state, v.statuses[int(v.status_ids[0]) if v.status_ids is not None else 0]


def test_the_gates_switch_admin_access_and_shared_devices_off() -> None:
    """The plugin's allocator features come from the process's gates (``new``: ``Handle.feature_gates``).
    With 1.37's defaults an adminAccess claim gets a device another claim holds, and two pods share a
    device with allowMultipleAllocations (the first one's share in flight); DRAAdminAccess=false makes
    the adminAccess claim an error, as upstream's allocator, which Filter reports as an Error status;
    DRAConsumableCapacity=false makes the shared device a device held whole, which the second pod
    cannot get."""
    admin = claim()
    admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    objs = (admin, otherAllocatedClaim, workerNodeSlice)
    on = new(None, Handle(dra=store(*objs, classes=(deviceClass,))))
    assert status(_filter_one(on, pod())[1]) is None
    off = new(None, Handle(dra=store(*objs, classes=(deviceClass,)), feature_gates={"DRAAdminAccess": False}))
    # an allocator error about the claim is Filter's Error (dynamicresources.go: ``case err != nil:
    # return statusError(...)``): the attempt stops and the pod backs off
    assert status(_filter_one(off, pod())[1]) == (
        Code.ERROR,
        "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature is disabled")

    shared = {**workerNodeSlice, "spec": {**workerNodeSlice["spec"], "devices": [
        {"name": "instance-1", "allowMultipleAllocations": True, "capacity": {"slots": {"value": "4"}}}]}}
    first, second, plain = claim(), claim("other-claim"), claim("plain-claim")
    for c in (first, second):
        c["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {"requests": {"slots": "2"}}

    def other(name: str) -> Pod:
        return parse_pod({"metadata": {"name": name, "namespace": NAMESPACE, "uid": name},
                          "spec": {"resourceClaims": [{"name": "r", "resourceClaimName": name}]}})

    dra = store(first, second, shared, classes=(deviceClass,))
    plugin = new(None, Handle(dra=dra))
    state, st = _filter_one(plugin, pod())
    assert st is None and plugin.reserve(state, pod(), NODE).is_success()
    pending = dra.pending_allocation("uid-" + CLAIM_NAME)
    assert pending is not None and pending.allocation is not None
    (r,) = pending.allocation.results
    assert r.share_id is not None and r.consumed_capacity == {"slots": 2}
    assert status(_filter_one(plugin, other("other-claim"))[1]) is None      # 2 + 2 of 4

    # The same share seen by a scheduler with DRAConsumableCapacity off: the device is held whole,
    # and a request for capacity is an error.
    dra = store(first, second, plain, shared, classes=(deviceClass,))
    dra.signal_pending_allocation(pending)
    plugin = new(None, Handle(dra=dra, feature_gates={"DRAConsumableCapacity": False}))
    assert status(_filter_one(plugin, other("plain-claim"))[1]) == (U, "cannot allocate all claims")
    assert status(_filter_one(plugin, other("other-claim"))[1]) == (
        Code.ERROR, "claim default/other-claim, request req-1: has capacity requests, but the DRAConsumableCapacity "
                    "feature is disabled")


def test_an_allocator_error_about_the_node_fails_the_node_and_any_other_fails_the_attempt() -> None:
    """dynamicresources.go Filter: ``ErrFailedAllocationOnNode`` (a pool of the node is invalid) is
    the node's UnschedulableAndUnresolvable with the allocator's text, so other nodes may still do;
    any other allocator error (here a claim constraint that no device can hold, with allocation
    mode All) is something wrong with the claim, an Error that stops the attempt."""
    invalid = {**workerNodeSlice, "spec": {**workerNodeSlice["spec"], "devices": [
        {"name": "instance-1", "consumesCounters": [{"counterSet": "no-such-set", "counters": {"c": {"value": "1"}}}]}]}}
    plugin = new(None, Handle(dra=store(pendingClaim, invalid, classes=(deviceClass,))))
    assert status(_filter_one(plugin, pod())[1]) == (U, "invalid resource pools were encountered")

    two = {**workerNodeSlice, "spec": {**workerNodeSlice["spec"], "devices": [
        {"name": "instance-1", "attributes": {"model": {"string": "a"}}},
        {"name": "instance-2", "attributes": {"model": {"string": "b"}}}]}}
    every = claim()
    every["spec"]["devices"]["requests"][0]["exactly"]["allocationMode"] = "All"
    every["spec"]["devices"]["constraints"] = [{"matchAttribute": f"{DRIVER}/model"}]
    plugin = new(None, Handle(dra=store(every, two, classes=(deviceClass,))))
    code, message = status(_filter_one(plugin, pod())[1])
    assert code == Code.ERROR
    assert message.startswith("claim default/my-pod-my-resource, request req-1: cannot add device ") and \
        message.endswith("because a claim constraint would not be satisfied")


# dynamicresources_test.go's largeClaim (five requests of the class) and largeWorkerNodeSlice (four
# devices): no solution, found only after the whole search.
largeClaim = claim()
largeClaim["spec"]["devices"]["requests"] = [
    {"name": f"req-{k}", "exactly": {"deviceClassName": CLASS_NAME, "allocationMode": "ExactCount", "count": 1}}
    for k in range(1, 6)]
largeWorkerNodeSlice = {**workerNodeSlice, "spec": {**workerNodeSlice["spec"], "devices": [
    {"name": f"instance-{k}"} for k in range(1, 5)]}}


def _timeout_plugin(filter_timeout: str | None, gates: dict[str, bool] | None = None) -> DynamicResources:
    from scheduler.plugins.args import DynamicResourcesArgs
    args = None if filter_timeout is None else DynamicResourcesArgs.model_validate({"filterTimeout": filter_timeout})
    return new(args, Handle(dra=store(largeClaim, largeWorkerNodeSlice, classes=(deviceClass,)), feature_gates=gates))


def test_dynamicresources_test_go_timeout() -> None:
    """Upstream's case ``timeout`` (filterTimeout 1ns): Filter's answer is an Error naming the node
    (kubernetes#137607: a timeout may be transient, so the pod backs off; upstream's case has no
    PostFilter, as the Error ends the attempt)."""
    plugin = _timeout_plugin("1ns")
    assert plugin.filter_timeout == 1e-9
    assert status(_filter_one(plugin, pod())[1]) == (Code.ERROR, f"node {NODE}: timed out trying to allocate devices")


@pytest.mark.parametrize(("filter_timeout", "gates"), [(None, {"DRASchedulerFilterTimeout": False}), ("0s", None)],
                         ids=["dynamicresources_test.go/timeout_disabled", "dynamicresources_test.go/timeout_zero"])
def test_dynamicresources_test_go_no_timeout(filter_timeout: str | None, gates: dict[str, bool] | None) -> None:
    """Upstream's ``timeout_disabled`` (DRASchedulerFilterTimeout off) and ``timeout_zero``
    (filterTimeout 0s): no limit; pendingClaim gets workerNodeSlice's device."""
    from scheduler.plugins.args import DynamicResourcesArgs
    args = None if filter_timeout is None else DynamicResourcesArgs.model_validate({"filterTimeout": filter_timeout})
    plugin = new(args, Handle(dra=store(pendingClaim, workerNodeSlice, classes=(deviceClass,)), feature_gates=gates))
    assert plugin.filter_timeout is None
    state, st = _filter_one(plugin, pod())
    assert st is None and plugin.reserve(state, pod(), NODE).is_success()


def test_without_a_deadline_the_search_runs_to_its_end() -> None:
    """largeClaim without a limit (the gate off, 0s) or with the default 10s, far above this
    search: the whole search runs and ends with ``cannot allocate all claims``."""
    for plugin in (_timeout_plugin(None, {"DRASchedulerFilterTimeout": False}), _timeout_plugin("0s"),
                   _timeout_plugin(None)):
        assert status(_filter_one(plugin, pod())[1]) == (U, "cannot allocate all claims")
    assert _timeout_plugin(None).filter_timeout == 10.0


def test_a_filter_timeout_ends_the_attempt_with_upstreams_wrapped_error() -> None:
    """Through the cycle: filterTimeout 1ns, largeClaim: Filter's Error stops the attempt (no
    FitError, no preemption) and the pod's failure reads as RunFilterPlugins words it,
    ``running "DynamicResources" filter plugin: node worker: timed out trying to allocate devices``."""
    from tests.builders import make_scheduler
    s, client = make_scheduler({"pluginConfig": [{"name": "DynamicResources", "args": {"filterTimeout": "1ns"}}]},
                               dra=store(largeClaim, largeWorkerNodeSlice, classes=(deviceClass,)))
    s.cache.add_node(parse_node({"metadata": {"name": NODE, "labels": {"kubernetes.io/hostname": NODE}},
                                 "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"}}}))
    schedule(s, pod())
    assert client.bound == {}
    (key, reason, message, nominated), = client.failures
    assert (key, message, nominated) == (
        f"{NAMESPACE}/{POD_NAME}", f'running "DynamicResources" filter plugin: node {NODE}: timed out trying to '
                                   "allocate devices", None)
    assert reason == "SchedulerError"


@pytest.mark.parametrize(("gates", "want"), [
    (None, None),
    ({"DRAAdminAccess": False},
     (Code.ERROR, "claim default/my-pod-my-resource, request req-1: admin access is requested, but the feature "
                  "is disabled")),
], ids=["dynamicresources_test.go/request-admin-access-with-DRAAdminAccess-featuregate",
        "dynamicresources_test.go/request-admin-access-without-DRAAdminAccess-featuregate"])
def test_upstream_request_admin_access(gates: dict[str, bool] | None, want: Want) -> None:
    """adminAccess(pendingClaim) with otherAllocatedClaim holding the one device: with the gate the
    device is shared; without it the allocator's error. Upstream's table writes that status as
    UnschedulableAndUnresolvable, but its harness compares a rejected status by text only
    (``verify``: ``status.AsError()``), and its Filter returns ``statusError`` for any allocator
    error but ErrFailedAllocationOnNode: the code here is the Error the code gives."""
    admin = claim()
    admin["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
    plugin = new(None, Handle(dra=store(admin, otherAllocatedClaim, workerNodeSlice, classes=(deviceClass,)),
                              feature_gates=gates))
    assert status(_filter_one(plugin, pod())[1]) == want
