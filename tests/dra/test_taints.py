"""Device taints in the allocator (``scheduler.dra.taints``, the search and the fast path) against
upstream's allocator table: ``staging/src/k8s.io/dynamic-resource-allocation/structured/internal/
allocatortesting/allocator_testing.go`` (``TestAllocator``), its ``tainted-*`` cases, with the same
builders as ``test_allocator`` plus upstream's ``withTaints`` / ``withTolerations``. ``deviceTaints:
false`` is ``Features(device_taints=False)`` (the DRADeviceTaints gate off).

``tainted-admin-access`` and ``tainted-admin-access-disabled``, and taints on partitioned or shared
devices, are in ``test_allocator_features.py``, with the other cases of those features.

Then the matching itself (``tolerates``: each branch of upstream's ``resourceclaim.ToleratesTaint``) and
DeviceTaintRules applied to slices (``model.devicetaintrules.apply_rules``).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.dra.allocator import AllocationError, Allocator, Features
from scheduler.dra.taints import prevents_allocation, tolerates
from scheduler.model.devicetaintrules import apply_rules, parse_device_taint_rule
from scheduler.model.devicetaints import DeviceTaint, DeviceToleration
from scheduler.model.dra import parse_device_class, parse_resource_claim, parse_resource_slice
from tests.dra.test_allocator import (
    W,
    Want,
    _device_class,
    allDeviceRequest,
    allocationResult,
    claim0,
    claimWithRequest,
    claimWithRequests,
    class_,
    classA,
    classB,
    device,
    device1,
    device2,
    deviceAllocationResult,
    driverA,
    driverB,
    got,
    localNodeSelector,
    node,
    node1,
    objects,
    pool1,
    region1,
    req0,
    req0SubReq1,
    request,
    requestWithPrioritizedList,
    slice1,
    sliceWithDevices,
    subReq0,
    subReq1,
    subRequest,
)

taintKey, taintValue, taintValue2 = "taint-key", "taint-value", "taint-value-2"
taintNoSchedule = {"key": taintKey, "value": taintValue, "effect": "NoSchedule"}
taintNoExecute = {"key": taintKey, "value": taintValue2, "effect": "NoExecute"}
tolerationNoSchedule = {"operator": "Exists", "key": taintKey, "effect": "NoSchedule"}
tolerationNoExecute = {"operator": "Equal", "key": taintKey, "value": taintValue2, "effect": "NoExecute"}


def withTaints(d: dict[str, Any], *taints: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(d)
    out["taints"] = [dict(t) for t in taints]
    return out


def withTolerations(c: W, *tolerations: dict[str, Any]) -> W:
    """upstream's ``wrapResourceClaim.withTolerations``: on every ``exactly`` request."""
    out = c._copy()
    for r in out["spec"]["devices"]["requests"]:
        if "exactly" in r:
            r["exactly"]["tolerations"] = [dict(t) for t in tolerations]
    return out


def claim(name: str, req: str, cls: str) -> W:
    return claimWithRequest(name, req, cls)


TAINTED: list[tuple[str, bool, list[Any], list[Any], list[Any], Any, list[Want] | None]] = [
    # (case, deviceTaints, claims, classes, slices, allocated devices, expectResults)
    ("tainted-two-devices", True, objects(claim(claim0, req0, classA)), objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule),
                              withTaints(device(device2, None, None), taintNoExecute))), (), None),
    ("tainted-one-device-two-taints", True, objects(claim(claim0, req0, classA)), objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA,
                              withTaints(device(device1, None, None), taintNoSchedule, taintNoExecute))), (), None),
    ("tainted-two-devices-tolerated", True, objects(withTolerations(claim(claim0, req0, classA), tolerationNoExecute)),
     objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule),
                              withTaints(device(device2, None, None), taintNoExecute))), (),
     [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device2, False))]),
    ("tainted-one-device-two-taints-both-tolerated", True,
     objects(withTolerations(claim(claim0, req0, classA), tolerationNoSchedule, tolerationNoExecute)),
     objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA,
                              withTaints(device(device1, None, None), taintNoSchedule, taintNoExecute))), (),
     [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    ("tainted-disabled", False, objects(claim(claim0, req0, classA)), objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA,
                              withTaints(device(device1, None, None), taintNoSchedule, taintNoExecute))), (),
     [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))]),
    ("tainted-prioritized-list", True,
     objects(claimWithRequests(claim0, None, requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1),
                                                                        subRequest(subReq1, classA, 1)))),
     objects(class_(classA, driverA), class_(classB, driverB)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule))),
     (), None),
    ("tainted-prioritized-list-disabled", False,
     objects(claimWithRequests(claim0, None, requestWithPrioritizedList(req0, subRequest(subReq0, classB, 1),
                                                                        subRequest(subReq1, classA, 1)))),
     objects(class_(classA, driverA), class_(classB, driverB)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule))),
     (), [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0SubReq1, driverA, pool1, device1,
                                                                             False))]),
    ("tainted-all-devices-single", True, objects(claimWithRequests(claim0, None, allDeviceRequest(req0, classA))),
     objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule))),
     (), None),
    ("tainted-all-devices-single-disabled", False,
     objects(claimWithRequests(claim0, None, allDeviceRequest(req0, classA))), objects(class_(classA, driverA)),
     objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device1, None, None), taintNoSchedule))),
     (), [allocationResult(localNodeSelector(node1), deviceAllocationResult(req0, driverA, pool1, device1, False))]),
]


def _run(claims: list[Any], classes: list[Any], slices: list[Any], taints: bool, fast: bool
         ) -> tuple[list[Want] | None, str | None]:
    parsed = [parse_resource_claim(c) for c in claims]
    allocator = Allocator(parsed, _device_class([parse_device_class(c) for c in classes]),
                          [parse_resource_slice(s) for s in slices], lambda d: False,
                          features=Features(device_taints=taints))
    if not fast:
        allocator._plan = lambda claims: None  # type: ignore[method-assign]
    try:
        results = allocator.allocate(node(node1, region1))
    except AllocationError as e:
        return None, str(e)
    return (None if results is None else [got(r) for r in results]), None


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "search"])
@pytest.mark.parametrize("case", TAINTED, ids=[c[0] for c in TAINTED])
def test_allocator_tainted(case: Any, fast: bool) -> None:
    _, taints, claims, classes, slices, _, want = case
    results, err = _run(claims, classes, slices, taints, fast)
    assert err is None, err
    assert sorted(results or [], key=repr) == sorted(want or [], key=repr)


def test_result_carries_the_requests_tolerations() -> None:
    """As upstream's result assembly: each device result holds its request's tolerations."""
    claims = objects(withTolerations(claim(claim0, req0, classA), tolerationNoExecute))
    slices = objects(sliceWithDevices(slice1, node1, pool1, driverA, withTaints(device(device2, None, None),
                                                                                taintNoExecute)))
    for fast in (True, False):
        parsed = [parse_resource_claim(c) for c in claims]
        a = Allocator(parsed, _device_class([parse_device_class(class_(classA, driverA))]),
                      [parse_resource_slice(s) for s in slices], lambda d: False)
        if not fast:
            a._plan = lambda claims: None  # type: ignore[method-assign]
        results = a.allocate(node(node1, region1))
        assert results is not None
        assert results[0].results[0].to_json()["tolerations"] == [tolerationNoExecute]


# --- resourceclaim.ToleratesTaint ---------------------------------------------------------------------

TOLERATES = [
    # (case, toleration, taint, tolerated): each branch of ToleratesTaint
    ("empty-toleration-matches-nothing-with-value", DeviceToleration(operator="Equal"),
     DeviceTaint("k", "v", "NoSchedule"), False),
    ("exists-no-key-matches-all", DeviceToleration(operator="Exists"), DeviceTaint("k", "v", "NoExecute"), True),
    ("exists-key", DeviceToleration(key="k", operator="Exists"), DeviceTaint("k", "v", "NoSchedule"), True),
    ("exists-other-key", DeviceToleration(key="x", operator="Exists"), DeviceTaint("k", "v", "NoSchedule"), False),
    ("equal-value", DeviceToleration(key="k", operator="Equal", value="v"), DeviceTaint("k", "v", "NoSchedule"), True),
    ("empty-operator-is-equal", DeviceToleration(key="k", operator="", value="v"),
     DeviceTaint("k", "v", "NoSchedule"), True),
    ("equal-other-value", DeviceToleration(key="k", operator="Equal", value="w"),
     DeviceTaint("k", "v", "NoSchedule"), False),
    ("effect-must-match", DeviceToleration(key="k", operator="Exists", effect="NoExecute"),
     DeviceTaint("k", "v", "NoSchedule"), False),
    ("unknown-operator", DeviceToleration(key="k", operator="Lt", value="v"), DeviceTaint("k", "v", "NoSchedule"),
     False),
]


@pytest.mark.parametrize("case", TOLERATES, ids=[c[0] for c in TOLERATES])
def test_tolerates(case: Any) -> None:
    _, toleration, taint, want = case
    assert tolerates(toleration, taint) is want


def test_only_noschedule_and_noexecute_prevent_allocation() -> None:
    """``taintPreventsAllocation``: effect None (and an unknown one) is informational."""
    assert not prevents_allocation([DeviceTaint("k", "v", "None")], [])
    assert not prevents_allocation([DeviceTaint("k", "v", "SomeFutureEffect")], [])
    assert prevents_allocation([DeviceTaint("k", "v", "NoSchedule")], [])
    assert prevents_allocation([DeviceTaint("k", "v", "NoExecute")], [DeviceToleration("k", "Equal", "w")])


# --- DeviceTaintRules on slices -------------------------------------------------------------------

def _rule(name: str, selector: dict[str, str] | None, effect: str = "NoSchedule") -> Any:
    spec: dict[str, Any] = {"taint": {"key": "example.com/broken", "value": name, "effect": effect}}
    if selector is not None:
        spec["deviceSelector"] = selector
    return parse_device_taint_rule({"metadata": {"name": name}, "spec": spec})


def test_rules_taint_the_devices_they_select() -> None:
    s1 = parse_resource_slice(sliceWithDevices(slice1, node1, pool1, driverA, device(device1, None, None),
                                               withTaints(device(device2, None, None), taintNoSchedule)))
    s2 = parse_resource_slice(sliceWithDevices("slice-2", node1, "pool-2", driverB, device(device1, None, None)))
    rules = [_rule("b-device", {"driver": driverA, "pool": pool1, "device": device2}),
             _rule("a-driver", {"driver": driverA}, "NoExecute"),
             _rule("other-pool", {"pool": "pool-3"})]
    p1, p2 = apply_rules([s1, s2], rules)
    assert p2 is s2                                  # untouched: the same object (caches stay valid)
    assert [t.value for t in p1.devices[0].taints] == ["a-driver"]
    # the slice's own taint first, then the rules' in name order
    assert [t.value for t in p1.devices[1].taints] == [taintValue, "a-driver", "b-device"]
    # an empty selector, and no selector at all (the tracker's code: "Empty selector -> all
    # devices!" in upstream's devicetaintrule.yaml), select every device
    for selector in ({}, None):
        q1, q2 = apply_rules([s1, s2], [_rule("all", selector)])
        assert [t.value for t in q1.devices[0].taints] == ["all"] and [t.value for t in q2.devices[0].taints] == ["all"]


# --- binding conditions in the allocator -----------------------------------------------------------

def _shared_bound_slice() -> dict[str, Any]:
    s = sliceWithDevices(slice1, None, pool1, driverA, {"name": device1, "bindingConditions": ["ready"],
                                                        "bindingFailureConditions": ["failed"], "bindsToNode": True})
    s["spec"].pop("nodeName", None)
    s["spec"]["allNodes"] = True
    return s


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "search"])
def test_a_device_with_binding_conditions_is_allocated_pinned_to_the_node(fast: bool) -> None:
    """DeviceBindingAndStatus on: the device is selectable, its result carries the binding
    conditions, and bindsToNode pins the allocation to the node it was made for, though the slice
    is for all nodes (createNodeSelector); off: the device is never picked."""
    claims = objects(claim(claim0, req0, classA))
    classes = objects(class_(classA, driverA))
    for node_name in ("node-a", "node-b"):
        parsed = [parse_resource_claim(c) for c in claims]
        a = Allocator(parsed, _device_class([parse_device_class(c) for c in classes]),
                      [parse_resource_slice(_shared_bound_slice())], lambda d: False)
        if not fast:
            a._plan = lambda claims: None  # type: ignore[method-assign]
        results = a.allocate(node(node_name, region1))
        assert results is not None
        (r,) = results[0].results
        assert (r.binding_conditions, r.binding_failure_conditions) == (("ready",), ("failed",))
        assert results[0].node_selector_raw == {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}
    off = Allocator([parse_resource_claim(c) for c in claims],
                    _device_class([parse_device_class(c) for c in classes]),
                    [parse_resource_slice(_shared_bound_slice())], lambda d: False,
                    features=Features(device_binding_and_status=False))
    if not fast:
        off._plan = lambda claims: None  # type: ignore[method-assign]
    assert off.allocate(node("node-a", region1)) is None


def _one(name: str, pool: str, dev: str, binding: bool = False, count: int = 1) -> dict[str, Any]:
    d: dict[str, Any] = {"name": dev}
    if binding:
        d["bindingConditions"] = ["Ready"]
        d["bindingFailureConditions"] = ["Failed"]
    return sliceWithDevices(name, node1, {"name": pool, "resourceSliceCount": count, "generation": 1}, driverA, d)


# allocatortesting/lexicographical_testing.go's binding-condition cases, with our pool order (input
# order, not lexicographical): devices with binding conditions are taken last, their slice after the
# pool's other slices and their pool after the other pools (GatherPools).
PREFERRED = [
    ("lexicographical-sorting-pools-with-binding-conditions",
     [_one(slice1, pool1, device1, binding=True), _one("slice-2", "pool-3", device2), _one("slice-3", "pool-2", "device-3")],
     {("pool-2", "device-3"), ("pool-3", device2)}),
    ("lexicographical-sorting-slices-with-binding-conditions",
     [_one(slice1, pool1, device1, binding=True, count=3), _one("slice-3", pool1, "device-3", count=3),
      _one("slice-2", pool1, device2, count=3)],
     {(pool1, device2), (pool1, "device-3")}),
]


@pytest.mark.parametrize("fast", [True, False], ids=["fast-path", "search"])
@pytest.mark.parametrize("case", PREFERRED, ids=[c[0] for c in PREFERRED])
def test_devices_without_binding_conditions_are_preferred(case: Any, fast: bool) -> None:
    _, slices, want = case
    claims = [parse_resource_claim(claimWithRequests(claim0, None, request(req0, classA, 2)))]
    a = Allocator(claims, _device_class([parse_device_class(class_(classA, driverA))]),
                  [parse_resource_slice(s) for s in slices], lambda d: False)
    if not fast:
        a._plan = lambda claims: None  # type: ignore[method-assign]
    results = a.allocate(node(node1, region1))
    assert results is not None
    assert {(r.pool, r.device) for r in results[0].results} == want


@pytest.mark.parametrize("seed", range(30))
def test_fast_path_agrees_with_the_search_on_tainted_random_worlds(seed: int) -> None:
    """``test_allocator``'s random worlds with taints of every effect on random devices (some with
    binding conditions, which are now allocatable) and random tolerations on the claims: on every
    node the fast path answers as the general search, results (tolerations, binding conditions,
    node selector) and errors alike."""
    import random

    from scheduler.dra.allocator import SelectorCache, SliceIndex
    from tests.dra.test_allocator import _random_world
    rng = random.Random(seed)
    raw_slices, raw_classes, raw_claims, allocated, nodes = _random_world(rng)
    effects = ["NoSchedule", "NoExecute", "None"]
    for s in raw_slices:
        for d in s["spec"]["devices"]:
            if rng.random() < 0.4:
                d["taints"] = [{"key": rng.choice(["a", "b"]), "value": rng.choice(["x", "y"]),
                                "effect": rng.choice(effects)} for _ in range(rng.randrange(1, 3))]
    for c in raw_claims:
        exactly = c["spec"]["devices"]["requests"][0]["exactly"]
        if rng.random() < 0.5:
            exactly["tolerations"] = [rng.choice([
                {"key": "a", "operator": "Exists"}, {"key": "b", "operator": "Equal", "value": "x"},
                {"operator": "Exists", "effect": "NoSchedule"}, {"operator": "Exists"}])]
    slices = [parse_resource_slice(s) for s in raw_slices]
    classes = _device_class([parse_device_class(c) for c in raw_classes])
    pools: dict[tuple[str, str], set[str]] = {}
    for d in allocated:
        pools.setdefault((d.driver, d.pool), set()).add(d.device)
    index, cache = SliceIndex(slices), SelectorCache()
    for raw in raw_claims:
        c = parse_resource_claim(raw)
        for name in nodes:
            answers = []
            for fast in (True, False):
                a = Allocator([c], classes, slices, allocated.__contains__, cache, index=index,
                              pool_allocated=lambda driver, pool: pools.get((driver, pool), set()))
                if not fast:
                    a._plan = lambda claims: None  # type: ignore[method-assign]
                try:
                    got_ = a.allocate(node(name, region1))
                    answers.append(None if got_ is None else [r.to_json() for r in got_])
                except AllocationError as e:
                    answers.append(f"{type(e).__name__}: {e}")
            assert answers[0] == answers[1], (name, raw["spec"], answers)
