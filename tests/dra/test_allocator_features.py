"""The allocator's features beyond the stable variant (partitionable devices, consumable capacity,
admin access, distinctAttribute) against upstream's shared allocator table:
``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/allocatortesting/
allocator_testing.go`` (``TestAllocator``), the cases the *incubating* variant runs for them.

As in ``test_allocator.py``, the cases are upstream's translated as data, with upstream's builder
names (``sliceWithCounterSets``, ``deviceCounterConsumption``, ``withCapacityRequest``,
``withConsumedCapacity``, ...). A case's ``features`` are exactly the ones upstream sets (the others
off, as in upstream's ``Features{...}`` literal). Results are compared as upstream's ``ConsistOf``;
a share ID is compared by presence (upstream generates a random one and its matcher ignores it);
consumed capacity by value. Error texts by substring, ``claim claim-0`` read as our namespaced
``claim default/claim-0``.

Device taints (``TAINTS``: DRADeviceTaints) where they meet these features: upstream's
``tainted-admin-access`` and ``tainted-admin-access-disabled``, and cases of our own (named
``tainted-...-ours``: upstream's table has none) for a tainted device that is partitioned or shared.
The other ``tainted-*`` cases are in ``test_taints.py``. Not ported here: the binding-condition
cases (``test_taints.py`` too) and the list-type attribute cases (DRAListTypeAttributes, alpha and
off).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import pytest

from scheduler.dra.allocator import (
    AllocationError,
    Allocator,
    Features,
    Node,
    NodeAllocationError,
    SliceIndex,
    gather_pools,
)
from scheduler.model.dra import (
    AllocationResult,
    DeviceID,
    parse_device_class,
    parse_resource_claim,
    parse_resource_slice,
)
from scheduler.quantity import parse_quantity
from tests.dra.test_allocator import CASES as STABLE_CASES
from tests.dra.test_allocator import Case as StableCase
from tests.dra.test_allocator import (
    W,
    _device_class,
    _norm_selector,
    allDeviceRequest,
    boolAttribute,
    claim0,
    claim1,
    claimWithRequest,
    claimWithRequests,
    class_,
    classA,
    classB,
    device1,
    device2,
    device3,
    device4,
    driverA,
    driverB,
    intAttribute,
    localNodeSelector,
    node,
    node1,
    node2,
    nodeLabelSelector,
    nodeSelectionAll,
    nodeSelectionPerDevice,
    pool1,
    pool2,
    region1,
    regionKey,
    req0,
    req0SubReq0,
    req0SubReq1,
    req1,
    req1SubReq1,
    req2,
    req2SubReq0,
    req3,
    request,
    requestWithPrioritizedList,
    resourcePool,
    slice1,
    slice2,
    slice3,
    slice4,
    slice_,
    stringAttribute,
    subReq0,
    subReq1,
    versionAttribute,
)

counterSet1, counterSet2 = "counter-set-1", "counter-set-2"
capacity0, capacity1 = "capacity-0", "capacity-1"
fromCounters = "fromCounters"
fixedShareID = "aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa"
zero, one, two, three, four = "0", "1", "2", "3", "4"


def MustParse(text: str) -> str:
    return text


def NewQuantity(n: int) -> str:
    return str(n)


# --- builders (upstream's of the same names) ----------------------------------------------------

class X(W):
    """upstream's wrap* types for requests, subrequests, claims and devices."""

    def _copy(self) -> X:
        return X(copy.deepcopy(dict(self)))

    def withRequests(self, *requests: dict[str, Any]) -> X:
        return X(super().withRequests(*requests))

    def withConstraints(self, *constraints: dict[str, Any]) -> X:
        return X(super().withConstraints(*constraints))

    def withAllocationMode(self, mode: str) -> X:
        return X(super().withAllocationMode(mode))

    def withCapacityRequest(self, quantity: str | None) -> X:
        out = self._copy()
        target = out.get("exactly", out)
        target["capacity"] = {"requests": {capacity0: quantity} if quantity is not None else {}}
        return out

    def withTaints(self, *taints: dict[str, Any]) -> X:
        out = self._copy()
        out["taints"] = [dict(taint) for taint in taints]
        return out

    def withTolerations(self, *tolerations: dict[str, Any]) -> X:
        """On a claim: every ``exactly`` request's (upstream's ``wrapResourceClaim.withTolerations``)."""
        out = self._copy()
        for r in out["spec"]["devices"]["requests"]:
            r["exactly"]["tolerations"] = [dict(tol) for tol in tolerations]
        return out

    def withAdminAccess(self) -> X:
        out = self._copy()
        out["spec"]["devices"]["requests"][0]["exactly"]["adminAccess"] = True
        return out

    # devices
    def withDeviceCounterConsumption(self, *consumption: dict[str, Any]) -> X:
        out = self._copy()
        out.setdefault("consumesCounters", []).extend(consumption)
        if out.pop("_fromCounters", False):
            out["capacity"] = {name: {"value": value["value"]}
                               for c in out["consumesCounters"] for name, value in c["counters"].items()}
        return out

    def withNodeSelection(self, selection: Any) -> X:
        out = self._copy()
        if isinstance(selection, dict):
            out["nodeSelector"] = selection
        elif selection == nodeSelectionAll:
            out["allNodes"] = True
        else:
            out["nodeName"] = selection
        return out

    def withAllowMultipleAllocations(self) -> X:
        out = self._copy()
        out["allowMultipleAllocations"] = True
        return out

    def withCapacityRequestPolicyRange(self, capacity: dict[str, str]) -> X:
        """A capacity with the requestPolicy default 2, validRange min 2 step 2 max 4."""
        out = self._copy()
        caps = out.setdefault("capacity", {})
        for name, q in capacity.items():
            caps[name] = {"value": q, "requestPolicy": {"default": two,
                                                        "validRange": {"min": two, "step": two, "max": four}}}
        return out

    def withCapacityRequestPolicyValidValues(self, default: str, capacity: dict[str, str],
                                             additional: list[str] | None) -> X:
        out = self._copy()
        caps = out.setdefault("capacity", {})
        for name, q in capacity.items():
            caps[name] = {"value": q, "requestPolicy": {"default": default,
                                                        "validValues": [default, *(additional or [])]}}
        return out


def claim(name: str) -> X:
    return X({"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"}, "spec": {"devices": {}}})


def deviceRequest(name: str, cls: str, count: int) -> X:
    return X(request(name, cls, count))


def allRequest(name: str, cls: str) -> X:
    return X(allDeviceRequest(name, cls))


def subRequest(name: str, cls: str, count: int, *selectors: dict[str, Any]) -> X:
    sub: dict[str, Any] = {"name": name, "count": count, "allocationMode": "ExactCount", "deviceClassName": cls}
    if selectors:
        sub["selectors"] = list(selectors)
    return X(sub)


def cel(expression: str) -> dict[str, Any]:
    return {"cel": {"expression": expression}}


def classWithAllowMultipleAllocations(name: str, driver: str, multi: bool) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"selectors": [cel(
        f'device.driver == "{driver}" && device.allowMultipleAllocations == {str(multi).lower()}')]}}


def device(name: str, capacity: Any, attributes: dict[str, dict[str, Any]] | None) -> X:
    d = X({"name": name})
    if attributes:
        d["attributes"] = attributes
    if capacity == fromCounters:
        d["_fromCounters"] = True
    elif capacity:
        d["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return d


def deviceCounterConsumption(counter_set: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def counterSet(name: str, counters: dict[str, str]) -> dict[str, Any]:
    return {"name": name, "counters": {k: {"value": v} for k, v in counters.items()}}


def sliceWithDevices(name: str, nodeSelection: Any, pool: Any, driver: str, *devices: dict[str, Any]) -> dict[str, Any]:
    s = slice_(name, nodeSelection, pool, driver)
    s["spec"]["devices"] = [{k: v for k, v in d.items() if not k.startswith("_")} for d in devices]
    return s


def sliceWithCounterSets(name: str, nodeSelection: Any, pool: Any, driver: str, *sets: dict[str, Any]) -> dict[str, Any]:
    s = slice_(name, nodeSelection, pool, driver)
    s["spec"]["sharedCounters"] = list(sets)
    return s


def sliceWithOneDevice(name: str, nodeSelection: Any, pool: Any, driver: str) -> dict[str, Any]:
    return sliceWithDevices(name, nodeSelection, pool, driver, device(device1, None, None))


def attr(**value: Any) -> dict[str, Any]:
    """A DeviceAttribute literal: ``attr(string="x")``; none: an attribute of no known type."""
    return dict(value)


# --- results ------------------------------------------------------------------------------------

# (request, driver, pool, device, adminAccess, has shareID, consumed capacity)
Result = tuple[str, str, str, str, bool | None, bool, tuple[tuple[str, Fraction], ...] | None]


class R(tuple):  # type: ignore[type-arg]
    """upstream's ``wrapDeviceRequestAllocationResult``."""

    def withConsumedCapacity(self, share_id: str | None, consumed: dict[str, str] | None) -> Result:
        norm = None if consumed is None else tuple(sorted((k, parse_quantity(v)) for k, v in consumed.items()))
        return (self[0], self[1], self[2], self[3], None, share_id is not None, norm)


def deviceRequestAllocationResult(req: str, driver: str, pool: str, dev: str) -> R:
    return R((req, driver, pool, dev))


def deviceAllocationResult(req: str, driver: str, pool: str, dev: str, admin: bool) -> Result:
    return (req, driver, pool, dev, True if admin else None, False, None)


@dataclass(frozen=True)
class Want:
    selector: Any
    results: tuple[Result, ...]


def allocationResult(selector: Any, *results: Result) -> Want:
    return Want(_norm_selector(selector), tuple(sorted(results, key=repr)))


def got(result: AllocationResult) -> Want:
    return Want(_norm_selector(result.node_selector_raw), tuple(sorted((
        (r.request, r.driver, r.pool, r.device, r.admin_access, r.share_id is not None,
         None if r.consumed_capacity is None else tuple(sorted(r.consumed_capacity.items())))
        for r in result.results), key=repr)))


def MakeDeviceID(driver: str, pool: str, dev: str) -> DeviceID:
    return DeviceID(driver, pool, dev)


@dataclass
class Case:
    name: str
    features: tuple[str, ...] = ()
    claimsToAllocate: list[dict[str, Any]] | None = None
    allocatedDevices: list[DeviceID] = field(default_factory=list)
    allocatedCapacityDevices: dict[DeviceID, dict[str, str]] = field(default_factory=dict)
    classes: list[dict[str, Any]] | None = None
    slices: list[dict[str, Any]] | None = None
    node: Node | None = None
    expectResults: list[Want] | None = None
    expectError: str | None = None


PRIORITIZED, ADMIN, PARTITIONABLE, CONSUMABLE = "PrioritizedList", "AdminAccess", "PartitionableDevices", \
    "ConsumableCapacity"
TAINTS = "DeviceTaints"
taintNoSchedule = {"key": "taint-key", "value": "taint-value", "effect": "NoSchedule"}
tolerationNoSchedule = {"operator": "Exists", "key": "taint-key", "effect": "NoSchedule"}
# upstream's Features{DeviceBindingAndStatus: true} "to forcefully use the experimental allocator":
# a feature this table does not model, and that changes nothing in these cases.
BINDING = "DeviceBindingAndStatus"


def _gpu_counters(*consumption: tuple[str, str]) -> list[X]:
    """Devices device-1.. consuming ``memory`` of counter-set-1, capacity from counters."""
    return [device(f"device-{i + 1}", fromCounters, None).withDeviceCounterConsumption(
        deviceCounterConsumption(counterSet1, {"memory": MustParse(q)})) for i, (_, q) in enumerate(consumption)]


def _memory_at_least(q: str) -> dict[str, Any]:
    return cel(f'device.capacity["{driverA}"].memory.compareTo(quantity("{q}")) >= 0')


CASES: list[Case] = [
    # --- admin access ---
    Case("admin-access-disabled", features=(),
         claimsToAllocate=[X(claimWithRequest(claim0, req0, classA)).withAdminAccess()],
         classes=[class_(classA, driverA)], slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
         node=node(node1, region1),
         expectError="claim claim-0, request req-0: admin access is requested, but the feature is disabled"),
    Case("admin-access-enabled", features=(ADMIN,),
         claimsToAllocate=[X(claimWithRequest(claim0, req0, classA)).withAdminAccess()],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
         classes=[class_(classA, driverA)], slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, True))]),
    # --- device taints with admin access (upstream's) ---
    Case("tainted-admin-access", features=(ADMIN, TAINTS),
         claimsToAllocate=[X(claimWithRequest(claim0, req0, classA)).withAdminAccess()],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, None).withTaints(taintNoSchedule))],
         node=node(node1, region1)),
    Case("tainted-admin-access-disabled", features=(ADMIN,),
         claimsToAllocate=[X(claimWithRequest(claim0, req0, classA)).withAdminAccess()],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device1), MakeDeviceID(driverA, pool1, device2)],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, None).withTaints(taintNoSchedule))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, True))]),
    # --- device taints with partitionable and shared devices (ours) ---
    # device-1 is tainted and would take all of the counter set: skipping it must leave its
    # counters free for device-2, which needs them all too.
    Case("tainted-partitionable-device-skipped-ours", features=(PARTITIONABLE, TAINTS),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  device(device1, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))
                                  .withTaints(taintNoSchedule),
                                  device(device2, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device2, False))]),
    # tolerated, the tainted device is taken, and then the counters are used up: two devices fail
    Case("tainted-partitionable-device-tolerated-ours", features=(PARTITIONABLE, TAINTS),
         claimsToAllocate=[X(claimWithRequests(claim0, None, request(req0, classA, 2)))
                           .withTolerations(tolerationNoSchedule)],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  device(device1, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))
                                  .withTaints(taintNoSchedule),
                                  device(device2, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1), expectResults=[]),
    Case("tainted-partitionable-device-tolerated-one-ours", features=(PARTITIONABLE, TAINTS),
         claimsToAllocate=[X(claimWithRequests(claim0, None, request(req0, classA, 1)))
                           .withTolerations(tolerationNoSchedule)],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  device(device1, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))
                                  .withTaints(taintNoSchedule),
                                  device(device2, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("8Gi")}))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    # a shared device with capacity to spare, but tainted: the share goes to the untainted one,
    # unless the request tolerates the taint
    Case("tainted-shared-device-ours", features=(CONSUMABLE, TAINTS),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: one}},
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: four}, None).withAllowMultipleAllocations()
                                  .withTaints(taintNoSchedule),
                                  device(device2, {capacity0: four}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))]),
    Case("tainted-shared-device-tolerated-ours", features=(CONSUMABLE, TAINTS),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))
                           .withTolerations(tolerationNoSchedule)],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: one}},
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: four}, None).withAllowMultipleAllocations()
                                  .withTaints(taintNoSchedule),
                                  device(device2, {capacity0: four}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}))]),
    # --- partitionable devices ---
    Case("partitionable-devices-single-device", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  device(device1, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": MustParse("4Gi")}))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    Case("partitionable-devices-prioritized-list", features=(PRIORITIZED, PARTITIONABLE),
         claimsToAllocate=[claim(claim0).withRequests(
             deviceRequest(req0, classA, 1),
             requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, _memory_at_least("6Gi")),
                                        subRequest(subReq1, classA, 1, _memory_at_least("4Gi"))))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  *_gpu_counters(("1", "4Gi"), ("2", "6Gi"), ("3", "4Gi"))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False),
                                         deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False))]),
    Case("partitionable-devices-multiple-devices", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  *_gpu_counters(("1", "4Gi"), ("2", "6Gi"), ("3", "4Gi"))),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": MustParse("8Gi")}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False),
                                         deviceAllocationResult(req1, driverA, pool1, device3, False))]),
    Case("partitionable-devices-multiple-capacity-pools", features=(PRIORITIZED, PARTITIONABLE),
         claimsToAllocate=[claim(claim0).withRequests(
             deviceRequest(req0, classA, 1),
             requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, _memory_at_least("6Gi")),
                                        subRequest(subReq1, classA, 1, _memory_at_least("4Gi"))))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             device(device1, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"})),
             device(device2, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "6Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "6"})),
             device(device3, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), deviceCounterConsumption(counterSet2, {"cpus": "4"}))),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {"memory": "18Gi"}), counterSet(counterSet2, {"cpus": "8"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False),
                                         deviceAllocationResult(req1SubReq1, driverA, pool1, device3, False))]),
    Case("partitionable-devices-multiple-counters", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             device(device1, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "6"}),
                 deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "2Gi"})),
             device(device2, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "6Gi", "cpus": "4"}),
                 deviceCounterConsumption(counterSet2, {"cpus": "6", "memory": "6Gi"})),
             device(device3, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"memory": "4Gi", "cpus": "4"}),
                 deviceCounterConsumption(counterSet2, {"cpus": "4", "memory": "4Gi"}))),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"}),
                                  counterSet(counterSet2, {"cpus": "12", "memory": "18Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device2, False),
                                         deviceAllocationResult(req1, driverA, pool1, device3, False))]),
    Case("partitionable-devices-multiple-pools", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1), request(req1, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             device(device1, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})),
             device(device2, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "6Gi"})),
             device(device3, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "4", "memory": "4Gi"}))),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"})),
             sliceWithDevices(
             slice3, node1, resourcePool(pool2, 2), driverA,
             device(device1, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "6", "memory": "4Gi"})),
             device(device2, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"})),
             device(device3, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {"cpus": "1", "memory": "7Gi"}))),
             sliceWithCounterSets(slice4, node1, resourcePool(pool2, 2), driverA,
                                  counterSet(counterSet1, {"cpus": "8", "memory": "18Gi"}))],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device2), MakeDeviceID(driverA, pool1, device3),
                           MakeDeviceID(driverA, pool2, device1)],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool2, device2, False),
                                         deviceAllocationResult(req1, driverA, pool2, device3, False))]),
    Case("partitionable-devices-unused-counters-in-counter-set", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             *[device(d, None, None).withDeviceCounterConsumption(deviceCounterConsumption(counterSet1, {"memory": q}))
               for d, q in ((device1, "5Gi"), (device2, "4Gi"), (device3, "4Gi"))]),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {"memory": "8Gi", "unused": "1Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device2, False),
                                         deviceAllocationResult(req0, driverA, pool1, device3, False))]),
    Case("partitionable-devices-no-capacity-available", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, *_gpu_counters(("1", "4Gi"), ("2", "16Gi"))),
                 sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
         node=node(node1, region1), expectResults=None),
    Case("partitionable-devices-overallocated-capacity-pool", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, *_gpu_counters(("1", "4Gi"), ("2", "20Gi"))),
                 sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))],
         allocatedDevices=[MakeDeviceID(driverA, pool1, device2)],
         node=node(node1, region1), expectResults=None),
    Case("partitionable-devices-disabled-device-consumes-counters", features=(),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withDeviceCounterConsumption(
             deviceCounterConsumption(counterSet1, {"memory": "4Gi"}))),
             sliceWithCounterSets(slice2, node1, pool1, driverA, counterSet(counterSet1, {"memory": "18Gi"}))],
         node=node(node1, region1), expectResults=None),
    Case("partitionable-devices-disabled-other-device-do-not-consume-counters", features=(),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  device(device1, None, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": "4Gi"})),
                                  device(device2, None, None)),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": "18Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device2, False))]),
    Case("partitionable-devices-disabled-per-device-node-selection", features=(),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, nodeSelectionPerDevice, pool1, driverA,
                                  device(device2, None, None).withNodeSelection(node1))],
         node=node(node1, region1), expectResults=None),
    Case("partitionable-devices-per-device-node-selection-nodename", features=(PARTITIONABLE, PRIORITIZED),
         claimsToAllocate=[claim(claim0).withRequests(
             requestWithPrioritizedList(req0, subRequest(subReq0, classA, 1, _memory_at_least("6Gi")),
                                        subRequest(subReq1, classA, 1, _memory_at_least("4Gi"))))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                  _gpu_counters(("1", "4Gi"))[0].withNodeSelection(node1),
                                  device(device2, fromCounters, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": "6Gi"})).withNodeSelection(node2)),
                 sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": "18Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0SubReq1, driverA, pool1, device1, False))]),
    Case("partitionable-devices-per-device-node-selection-node-selector", features=(PARTITIONABLE, PRIORITIZED),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                  _gpu_counters(("1", "4Gi"))[0].withNodeSelection(nodeLabelSelector(regionKey, region1))),
                 sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": "18Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(nodeLabelSelector(regionKey, region1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    Case("partitionable-devices-per-device-node-selection-node-selector-multiple-devices",
         features=(PARTITIONABLE, PRIORITIZED),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 3), request(req1, classB, 3))],
         classes=[class_(classA, driverA), class_(classB, driverB)],
         slices=[sliceWithDevices(slice1, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                  *[device(d, fromCounters, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet1, {"memory": "4Gi"})).withNodeSelection(sel)
                                    for d, sel in ((device1, nodeLabelSelector(regionKey, region1)), (device2, node1),
                                                   (device3, nodeSelectionAll))]),
                 sliceWithCounterSets(slice2, nodeSelectionPerDevice, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": "18Gi"})),
                 sliceWithDevices(slice3, node1, resourcePool(pool2, 2), driverB,
                                  *[device(d, fromCounters, None).withDeviceCounterConsumption(
                                      deviceCounterConsumption(counterSet2, {"memory": "4Gi"}))
                                    for d in (device1, device2, device3)]),
                 sliceWithCounterSets(slice4, node1, resourcePool(pool2, 2), driverB,
                                      counterSet(counterSet2, {"memory": "12Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         *[deviceAllocationResult(req0, driverA, pool1, d, False)
                                           for d in (device1, device2, device3)],
                                         *[deviceAllocationResult(req1, driverB, pool2, d, False)
                                           for d in (device1, device2, device3)])]),
    Case("partitionable-devices-with-attribute-selector", features=(PARTITIONABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 2),
                                             request(req1, classA, 1, cel(f'device.attributes["{driverA}"].special')))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             *[device(d, None, {"special": attr(bool=special)}).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {cpu: "1"}), deviceCounterConsumption(counterSet2, {"mem": "10Gi"}))
               for d, special, cpu in ((device1, True, "cpu1"), (device2, False, "cpu2"), (device3, False, "cpu3"))]),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {"cpu1": "1", "cpu2": "1", "cpu3": "1"}),
                                  counterSet(counterSet2, {"mem": "30Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device2, False),
                                         deviceAllocationResult(req0, driverA, pool1, device3, False),
                                         deviceAllocationResult(req1, driverA, pool1, device1, False))]),
    # --- consumable capacity ---
    Case("consumable-capacity-disabled-feature", features=(BINDING,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[class_(classA, driverA)], slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
         node=node(node1, region1),
         expectError="claim claim-0, request req-0: has capacity requests, but the DRAConsumableCapacity feature "
                     "is disabled"),
    Case("consumable-capacity-disabled-feature-with-prioritized-list", features=(PRIORITIZED, BINDING),
         claimsToAllocate=[claim(claim0).withRequests(requestWithPrioritizedList(
             req0, subRequest(subReq0, classA, 1).withCapacityRequest(one),
             subRequest(subReq1, classA, 1).withCapacityRequest(one)))],
         classes=[class_(classA, driverA)], slices=[sliceWithOneDevice(slice1, node1, pool1, driverA)],
         node=node(node1, region1),
         expectError="claim claim-0, subrequest subReq-0: has capacity requests, but the DRAConsumableCapacity "
                     "feature is disabled"),
    Case("consumable-capacity-multi-allocatable-device-with-missing-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity1: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-with-missing-capacity-request",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(allRequest(req0, classA).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity1: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-without-capacity-without-capacity-request",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
                           claim(claim1).withRequests(deviceRequest(req0, classA, 1))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, None))] * 2),
    Case("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
                           claim(claim1).withRequests(deviceRequest(req0, classA, 1))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, d).withConsumedCapacity(fixedShareID, {capacity0: one})) for d in (device1, device2)]),
    Case("consumable-capacity-multi-allocatable-device-without-policy-without-capacity-request-block",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1)),
                           claim(claim1).withRequests(deviceRequest(req0, classA, 1))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-without-policy-with-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claim(c).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))
                           for c in (claim0, claim1)],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}))] * 2),
    Case("consumable-capacity-multi-allocatable-device-with-policy-without-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1)),
                           claimWithRequests(claim1, None, request(req0, classA, 1))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))] * 2),
    Case("consumable-capacity-multi-allocatable-device-with-zero-request-policy", features=(CONSUMABLE,),
         claimsToAllocate=[claimWithRequests(claim0, None, request(req0, classA, 1)),
                           claimWithRequests(claim1, None, request(req0, classA, 1))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations()
                                  .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: zero}))] * 2),
    Case("consumable-capacity-multi-allocatable-device-violates-zero-request-policy", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations()
                                  .withCapacityRequestPolicyValidValues(zero, {capacity0: one}, None))],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-with-range-policy-with-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claim(c).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))
                           for c in (claim0, claim1)],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))] * 2),
    Case("consumable-capacity-multi-allocatable-device-with-range-policy-step", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(3)))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: four}))]),
    Case("consumable-capacity-multi-allocatable-device-with-valid-values-policy", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2)))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations()
                                  .withCapacityRequestPolicyValidValues(one, {capacity0: four}, [two]))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-with-valid-values-policy-round-up", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(2)))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations()
                                  .withCapacityRequestPolicyValidValues(one, {capacity0: three}, [three]))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: three}))]),
    Case("consumable-capacity-multi-allocatable-device-with-exceeded-consumable-capacity-request",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one)),
                           claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-with-request-over-max-sharing-policy", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(NewQuantity(6)))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations()
                                  .withCapacityRequestPolicyRange({capacity0: NewQuantity(10)}))],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-with-allocated-capacity-use-remaining", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: two}},
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-with-allocated-capacity-next-device", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: two}},
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  *[device(d, None, None).withAllowMultipleAllocations()
                                    .withCapacityRequestPolicyRange({capacity0: two}) for d in (device1, device2)])],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-with-multi-allocatable-device-backtrack", features=(CONSUMABLE,),
         claimsToAllocate=[
             claim(claim0).withConstraints({"matchAttribute": stringAttribute}).withRequests(
                 deviceRequest(req0, classA, 1).withCapacityRequest(two),
                 deviceRequest(req1, classA, 1).withCapacityRequest(two)),
             claim(claim1).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device2, None, {"stringAttribute": attr(string="stringAttributeValue1")})
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}),
                                  device(device1, None, {"stringAttribute": attr(string="stringAttributeValue2")})
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: four}))],
         node=node(node1, region1),
         expectResults=[
             allocationResult(localNodeSelector(node1),
                              deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                                  fixedShareID, {capacity0: two}),
                              deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(
                                  fixedShareID, {capacity0: two})),
             allocationResult(localNodeSelector(node1),
                              deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(
                                  fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-with-subrequest", features=(CONSUMABLE, PRIORITIZED),
         claimsToAllocate=[claim(claim0).withRequests(requestWithPrioritizedList(
             req0, subRequest(subReq0, classA, 1).withCapacityRequest(four),
             subRequest(subReq1, classA, 1).withCapacityRequest(two), subRequest(subReq1, classA, 1)))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0SubReq1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-with-no-available-consumable-capacity",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(two))],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: two}},
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-no-capacity",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(allRequest(req0, classA).withCapacityRequest(two))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                                  device(device2, None, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-filter-out-insufficient-capacity",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(allRequest(req0, classA).withCapacityRequest(two))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: two}))]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-sufficient",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one),
                                                      allRequest(req1, classA).withCapacityRequest(one))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(
             localNodeSelector(node1),
             deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
             deviceRequestAllocationResult(req1, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
             deviceRequestAllocationResult(req1, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-sufficient", features=(CONSUMABLE,),
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: one}},
         claimsToAllocate=[claim(claim0).withRequests(allRequest(req0, classA).withCapacityRequest(one))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: two}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(
             localNodeSelector(node1),
             deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(fixedShareID, {capacity0: one}),
             deviceRequestAllocationResult(req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-allocating-insufficient",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one),
                                                      allRequest(req1, classA).withCapacityRequest(one))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("consumable-capacity-multi-allocatable-device-allocation-mode-all-in-use-insufficient", features=(CONSUMABLE,),
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: one}},
         claimsToAllocate=[claim(claim0).withRequests(allRequest(req0, classA).withCapacityRequest(one))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: one}, None).withAllowMultipleAllocations(),
                                  device(device2, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), deviceRequestAllocationResult(
             req0, driverA, pool1, device2).withConsumedCapacity(fixedShareID, {capacity0: one}))]),
    Case("consumable-capacity-dedicated-device-with-consumable-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, {capacity0: one}, None))],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1),
                                         deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    Case("consumable-capacity-dedicated-device-with-multiple-consumable-capacity-request", features=(CONSUMABLE,),
         claimsToAllocate=[claim(c).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))
                           for c in (claim0, claim1)],
         classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
    Case("allow-multiple-allocations-exclude-multi-allocatable-device-by-class-selector", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, False)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, {capacity0: one}, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("allow-multiple-allocations-not-allocate-multi-allocatable-device-which-already-dedicated",
         features=(CONSUMABLE,),
         allocatedDevices=[MakeDeviceID(driverA, pool1, device1)],
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None)
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
    Case("allow-multiple-allocations-not-allocate-dedicated-device-which-change-from-multi-allocatable",
         features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withRequests(deviceRequest(req0, classA, 1).withCapacityRequest(one))],
         allocatedCapacityDevices={MakeDeviceID(driverA, pool1, device1): {capacity0: one}},
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, None).withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
    Case("allow-multiple-allocations-with-partitionable-device", features=(PRIORITIZED, PARTITIONABLE, CONSUMABLE),
         claimsToAllocate=[claim(claim0).withRequests(
             deviceRequest(req0, classA, 1),
             requestWithPrioritizedList(req1, subRequest(subReq0, classA, 1, _memory_at_least("6Gi")),
                                        subRequest(subReq1, classA, 1, _memory_at_least("4Gi"))))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                                  *[d.withAllowMultipleAllocations()
                                    for d in _gpu_counters(("1", "4Gi"), ("2", "6Gi"), ("3", "4Gi"))]),
                 sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                      counterSet(counterSet1, {"memory": "8Gi"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(
             localNodeSelector(node1),
             deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                 fixedShareID, {"memory": MustParse("4Gi")}),
             deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device3).withConsumedCapacity(
                 fixedShareID, {"memory": MustParse("4Gi")}))]),
    Case("consumable-capacity-with-partitionable-device-multiple-capacity-pools",
         features=(PRIORITIZED, PARTITIONABLE, CONSUMABLE),
         claimsToAllocate=[claim(claim0).withRequests(
             deviceRequest(req0, classA, 1).withCapacityRequest(one),
             deviceRequest(req2, classA, 1).withCapacityRequest(two),
             requestWithPrioritizedList(
                 req1,
                 subRequest(subReq0, classA, 1, cel(f'device.capacity["{driverA}"]["{capacity0}"].compareTo(quantity("4")) >= 0'))
                 .withCapacityRequest(one),
                 subRequest(subReq1, classA, 1, cel(f'device.capacity["{driverA}"]["{capacity0}"].compareTo(quantity("2")) >= 0'))
                 .withCapacityRequest(one)))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(
             slice1, node1, resourcePool(pool1, 2), driverA,
             *[device(d, fromCounters, None).withDeviceCounterConsumption(
                 deviceCounterConsumption(counterSet1, {capacity0: c0}), deviceCounterConsumption(counterSet2, {capacity1: four}))
               .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity1: four})
               for d, c0 in ((device1, two), (device2, four), (device3, two))]),
             sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA,
                                  counterSet(counterSet1, {capacity0: four}), counterSet(counterSet2, {capacity1: "8"}))],
         node=node(node1, region1),
         expectResults=[allocationResult(
             localNodeSelector(node1),
             deviceRequestAllocationResult(req0, driverA, pool1, device1).withConsumedCapacity(
                 fixedShareID, {capacity0: one, capacity1: two}),
             deviceRequestAllocationResult(req2, driverA, pool1, device3).withConsumedCapacity(
                 fixedShareID, {capacity0: two, capacity1: two}),
             deviceRequestAllocationResult(req1SubReq1, driverA, pool1, device1).withConsumedCapacity(
                 fixedShareID, {capacity0: one, capacity1: two}))]),
    # --- distinctAttribute (consumable capacity) ---
    Case("with-distinct-constraints", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withConstraints(
             {"distinctAttribute": boolAttribute, "requests": [req0, req1]},
             {"distinctAttribute": versionAttribute, "requests": [req0, req1, req2]},
             {"distinctAttribute": intAttribute, "requests": [req0, req1, req2, req3]},
         ).withRequests(*[deviceRequest(r, classA, 1) for r in (req0, req1, req2, req3)])],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, *[
             device(d, None, {"driverVersion": attr(version=v), "numa": attr(int=n), "boolAttribute": attr(bool=b)})
             .withAllowMultipleAllocations()
             for d, v, n, b in ((device1, "1.0.0", 0, True), (device2, "1.0.1", 1, False), (device3, "1.0.2", 2, True),
                                (device4, "1.0.0", 3, True))])],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), *[
             deviceRequestAllocationResult(r, driverA, pool1, d).withConsumedCapacity(fixedShareID, None)
             for r, d in ((req0, device1), (req1, device2), (req2, device3), (req3, device4))])]),
    Case("with-distinct-constraints-attribute-not-set", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withConstraints({"distinctAttribute": boolAttribute, "requests": [req0]})
                           .withRequests(deviceRequest(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[]),
    Case("with-distinct-constraints-unknown-type-attribute", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withConstraints({"distinctAttribute": boolAttribute, "requests": [req0]})
                           .withRequests(deviceRequest(req0, classA, 1))],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, {"boolAttribute": attr()}).withAllowMultipleAllocations())],
         node=node(node1, region1), expectResults=[], expectError="unsupported attribute value"),
    Case("with-distinct-constraints-with-subrequests", features=(CONSUMABLE, PRIORITIZED),
         claimsToAllocate=[claim(claim0).withConstraints({"distinctAttribute": boolAttribute, "requests": [req0, req1]})
                           .withRequests(*[requestWithPrioritizedList(
                               r, subRequest(subReq0, classA, 1, cel(f'device.attributes["{driverA}"].boolAttribute')),
                               subRequest(subReq1, classA, 1)) for r in (req0, req1, req2)])],
         classes=[class_(classA, driverA)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, {"boolAttribute": attr(bool=True)}).withAllowMultipleAllocations(),
                                  device(device2, None, {"boolAttribute": attr(bool=False)}).withAllowMultipleAllocations())],
         node=node(node1, region1),
         expectResults=[allocationResult(localNodeSelector(node1), *[
             deviceRequestAllocationResult(r, driverA, pool1, d).withConsumedCapacity(fixedShareID, None)
             for r, d in ((req0SubReq0, device1), (req1SubReq1, device2), (req2SubReq0, device1))])]),
    Case("distinct-constraint-one-multi-allocatable-device-with-distinct-constraint", features=(CONSUMABLE,),
         claimsToAllocate=[claim(claim0).withConstraints({"distinctAttribute": stringAttribute}).withRequests(
             deviceRequest(req0, classA, 1).withCapacityRequest(one), deviceRequest(req1, classA, 1).withCapacityRequest(one))],
         classes=[classWithAllowMultipleAllocations(classA, driverA, True)],
         slices=[sliceWithDevices(slice1, node1, pool1, driverA,
                                  device(device1, None, {"stringAttribute": attr(string="stringAttributeValue")})
                                  .withAllowMultipleAllocations().withCapacityRequestPolicyRange({capacity0: two}))],
         node=node(node1, region1), expectResults=[]),
]
del req0SubReq1


def _features(case: Case) -> Features:
    return Features(prioritized_list=PRIORITIZED in case.features, admin_access=ADMIN in case.features,
                    partitionable_devices=PARTITIONABLE in case.features,
                    consumable_capacity=CONSUMABLE in case.features, fractional_capacity_range=False,
                    device_taints=TAINTS in case.features)


def run(case: Case) -> tuple[list[Want] | None, str | None]:
    claims = [parse_resource_claim(c) for c in case.claimsToAllocate or ()]
    classes = [parse_device_class(c) for c in case.classes or ()]
    slices = [parse_resource_slice(s) for s in case.slices or ()]
    whole = set(case.allocatedDevices)
    consumed = {d: {k: parse_quantity(v) for k, v in c.items()} for d, c in case.allocatedCapacityDevices.items()}
    allocator = Allocator(claims, _device_class(classes), slices, whole.__contains__, features=_features(case),
                          device_allocated=lambda d: d in whole or d in consumed, consumed_capacity=consumed.get)
    try:
        results = allocator.allocate(case.node or node(node1, region1))
    except AllocationError as e:
        return None, str(e)
    return (None if results is None else [got(r) for r in results]), None


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_allocator_features(case: Case) -> None:
    results, err = run(case)
    if case.expectError is not None:
        want = case.expectError.replace("claim claim-", "claim default/claim-")
        assert err is not None and want in err, err
        return
    assert err is None, err
    assert sorted(results or [], key=repr) == sorted(case.expectResults or [], key=repr)


@pytest.mark.parametrize("case", STABLE_CASES, ids=[c.name for c in STABLE_CASES])
def test_the_feature_checks_change_nothing_for_stable_cases(case: StableCase) -> None:
    """With the features' per-device checks forced on (a store that has shares), upstream's stable
    cases get the stable answers: the plain loop the search takes without them is the same search."""
    claims = [parse_resource_claim(c) for c in case.claimsToAllocate or ()]
    classes = [parse_device_class(c) for c in case.classes or ()]
    slices = [parse_resource_slice(s) for s in case.slices or ()]
    allocated = set(case.allocatedDevices)
    plain = Allocator(claims, _device_class(classes), slices, allocated.__contains__)
    checked = Allocator(claims, _device_class(classes), slices, allocated.__contains__,
                        consumed_capacity=lambda _: None)
    assert not plain.has_shares and checked.has_shares
    answers = []
    for a in (plain, checked):
        try:
            results = a.allocate(case.node or node(node1, region1))
            answers.append(None if results is None else [got(r) for r in results])
        except AllocationError as e:
            answers.append(str(e))
    assert answers[0] == answers[1]


@pytest.mark.parametrize(("sets", "consumption", "reason"), [
    ([counterSet(counterSet1, {"memory": "8Gi"}), counterSet(counterSet1, {"memory": "8Gi"})],
     deviceCounterConsumption(counterSet1, {"memory": "4Gi"}), "duplicate counter set name counter-set-1"),
    ([counterSet(counterSet1, {"memory": "8Gi"})],
     deviceCounterConsumption(counterSet2, {"memory": "4Gi"}), "counter set counter-set-2 not found"),
    ([counterSet(counterSet1, {"memory": "8Gi"})],
     deviceCounterConsumption(counterSet1, {"cpus": "4"}), "counter cpus not found in counter set counter-set-1"),
], ids=["duplicate-counter-set", "counter-set-not-found", "counter-not-found"])
def test_inconsistent_counters_make_the_pool_invalid(sets: list[dict[str, Any]], consumption: dict[str, Any],
                                                    reason: str) -> None:
    """pools_experimental.go's buildPool: a pool whose counter sets repeat a name, or whose devices
    consume a counter set or counter it does not have, is invalid with that reason; nothing is
    allocated from it, and a node where nothing else fits fails with upstream's node error."""
    slices = [parse_resource_slice(s) for s in (
        sliceWithDevices(slice1, node1, resourcePool(pool1, 2), driverA,
                         device(device1, None, None).withDeviceCounterConsumption(consumption)),
        sliceWithCounterSets(slice2, node1, resourcePool(pool1, 2), driverA, *sets))]
    (pool,) = gather_pools(SliceIndex(slices), node(node1, region1))
    assert pool.invalid and pool.invalid_reason == reason
    claims = [parse_resource_claim(claimWithRequests(claim0, None, request(req0, classA, 1)))]
    allocator = Allocator(claims, _device_class([parse_device_class(class_(classA, driverA))]), slices,
                          set().__contains__)
    with pytest.raises(NodeAllocationError, match="invalid resource pools were encountered"):
        allocator.allocate(node(node1, region1))
