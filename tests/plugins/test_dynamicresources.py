"""DynamicResources through its extension points, after upstream's ``dynamicresources_test.go``
TestPlugin (release 1.35/1.36), with its objects: ``podWithClaimName``,
``podWithClaimTemplate(InStatus)``, ``pendingClaim``, ``allocatedClaim``, ``otherClaim``,
``otherAllocatedClaim``, ``allocatedClaimWithWrongTopology`` / ``GoodTopology``, ``deviceClass``
(no selectors), ``workerNode`` and ``workerNodeSlice`` (driver ``some-driver``, pool ``worker``,
device ``instance-1``), ``breakCELInClaim`` / ``breakCELInClass`` (the attribute ``healthy`` the
worker's device does not have).

Each ported case checks what the scheduling cycle does: PreEnqueue, PreFilter, Filter on the
worker, PostFilter, Reserve (the allocation signalled in flight) and Unreserve. Upstream's
``prebind``/``postbind`` expectations (the claim's status written through the API) are the edge's
part here and are not checked; Reserve's ``Reserved`` record holds what PreBind must write.

Texts from 1.36's ``resourceclaim`` package (``(Pod is not owner)``; 1.35's test reads ``pod``).
Not ported: the extended-resource cases (not implemented), admin access, device taints, binding
conditions, PodGroup claims and filter-timeout cases (features off here), the PreScore half of
``CEL-runtime-error-for-one-of-three-nodes``, and the API-write cases (``bind-failure``,
``with-resources-finalizer-gets-*``: PreBind).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.cache.dra import DraStore
from scheduler.framework import CycleState
from scheduler.framework.interfaces import PostFilterContext
from scheduler.framework.status import Code
from scheduler.model import Pod, parse_node, parse_pod
from scheduler.model.dra import FINALIZER, DeviceID, ResourceClaim
from scheduler.plugins.dynamicresources import DynamicResources

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
         filter=(U, "cannot allocate all claims"), postfilter=(Code.UNSCHEDULABLE, "still not schedulable")),
    Case("with-resources", pod(), (pendingClaim, workerNodeSlice), (deviceClass,), in_flight=True),
    Case("exhausted-resources", pod(), (pendingClaim, otherAllocatedClaim, workerNodeSlice), (deviceClass,),
         filter=(U, "cannot allocate all claims"), postfilter=(Code.UNSCHEDULABLE, "still not schedulable")),
    Case("claim-parameters-CEL-runtime-error", pod(), (claim(selectors=[BROKEN]), workerNodeSlice), (deviceClass,),
         filter=(Code.ERROR, f"claim default/my-pod-my-resource: selector #0: CEL runtime error: no such key: {ATTR}")),
    Case("class-parameters-CEL-runtime-error", pod(), (pendingClaim, workerNodeSlice),
         ({"metadata": {"name": CLASS_NAME}, "spec": {"selectors": [{"cel": {"expression": BROKEN}}]}},),
         filter=(Code.ERROR, f"class my-resource-class: selector #0: CEL runtime error: no such key: {ATTR}")),
    Case("missing-class", pod(), (pendingClaim,),
         prefilter=(U, "request req-1: device class my-resource-class does not exist"),
         postfilter=(Code.UNSCHEDULABLE, "no new claims to deallocate")),
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
