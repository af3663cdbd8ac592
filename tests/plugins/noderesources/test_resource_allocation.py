"""``noderesources.resource_allocation`` against upstream's ``resource_allocation_test.go``: the
non-zero requests Fit scores a pod with, and the allocatable and requested amounts scoring reads
of one resource (DRA-backed extended resources included)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.model import parse_pod
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesFitArgs
from scheduler.plugins.noderesources import resource_allocation
from tests import st
from tests.builders import node, pod, setup
from tests.plugins.noderesources.test_fit import (
    DEVICE_CLASS_NAME,
    DRA_CLASS,
    EXTENDED_DRA,
    allocated_claim,
    dra_store,
    fit,
    ids,
    resource_slice,
)

# --- resource_allocation_test.go --------------------------------------------------------------------------
ONE_MI = 1048576
CALCULATE_REQUESTS = [
    ("overhead only", {"overhead": {"cpu": "1", "memory": "1Mi"}}, 1000, ONE_MI),
    ("1x requestless container", {"containers": [{}]}, 100, 200 * ONE_MI),
    ("2x requestless container", {"containers": [{}, {}]}, 200, 400 * ONE_MI),
    ("request container + requestless container",
     {"containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 1100, ONE_MI + 200 * ONE_MI),
    ("container + requestless container + overhead",
     {"overhead": {"cpu": "1", "memory": "1Mi"},
      "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 2100, 2 * ONE_MI + 200 * ONE_MI),
    ("init container + container + requestless container + overhead",
     {"overhead": {"cpu": "1", "memory": "1Mi"}, "initContainers": [{"resources": {"requests": {"cpu": "3"}}}],
      "containers": [{"resources": {"requests": {"cpu": "1", "memory": "1Mi"}}}, {}]}, 4000, 2 * ONE_MI + 200 * ONE_MI),
    ("requestless init container + small init container + small container ",
     {"initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
      "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}]}, 100, 200 * ONE_MI),
    ("requestless init container + small init container + small container + requestless container ",
     {"initContainers": [{}, {"resources": {"requests": {"cpu": "1m", "memory": "1"}}}],
      "containers": [{"resources": {"requests": {"cpu": "3m", "memory": "3"}}}, {}]}, 103, 3 + 200 * ONE_MI),
]


@pytest.mark.parametrize(("name", "spec", "cpu", "memory"), CALCULATE_REQUESTS, ids=ids(CALCULATE_REQUESTS))
def test_resource_allocation_scorer_calculate_requests(name: str, spec: dict[str, Any], cpu: int, memory: int) -> None:
    """resource_allocation_test.go TestResourceAllocationScorerCalculateRequests: the non-zero requests
    Fit scores the pod with (``calculatePodResourceRequest`` with NonMissingContainerRequests)."""
    for kind in ("containers", "initContainers"):
        for i, c in enumerate(spec.get(kind, [])):
            c.setdefault("name", f"{kind}-{i}")
    p = parse_pod({"metadata": {"name": "p", "uid": "p"}, "spec": spec})
    plugin = fit()
    assert plugin._score_requests(p) == (cpu, memory), name


RESOURCE_NODE, TEST_DRIVER = "resource-node", "test-driver"
IMPLICIT_DRA = "deviceclass.resource.kubernetes.io/" + DEVICE_CLASS_NAME
# A class with upstream's "realistic GPU selection" (the per-device node selection case).
GPU_SELECTOR_CLASS = {"metadata": {"name": DEVICE_CLASS_NAME}, "spec": {
    "extendedResourceName": EXTENDED_DRA,
    "selectors": [{"cel": {"expression": 'device.driver == "test-driver" && device.capacity["test-driver"].memory'
                                         '.compareTo(quantity("8Gi")) >= 0 && device.attributes["test-driver"].model'
                                         '.startsWith("SOME-")'}}]}}


def gpu(name: str, model: str, memory: str, **where: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model}}, "capacity": {"memory": {"value": memory}},
            **where}


PER_DEVICE_SLICE = {"metadata": {"name": "per-device-slice"}, "spec": {
    "driver": TEST_DRIVER, "pool": {"name": "per-device-pool", "resourceSliceCount": 1},
    "perDeviceNodeSelection": True,
    "devices": [gpu("device-1", "SOME-XYZ", "16Gi", nodeName=RESOURCE_NODE),
                gpu("device-2", "SOME-ZYX", "12Gi", nodeName="other-node"),
                gpu("device-3", "SOME-XZY", "24Gi", nodeSelector={"nodeSelectorTerms": [{"matchExpressions": [
                    {"key": "zone", "operator": "In", "values": ["us-east-1a"]}]}]})]}}


def result(device: str, pool: str = RESOURCE_NODE, share_id: str | None = None) -> dict[str, str]:
    r = {"request": "req-1", "driver": TEST_DRIVER, "pool": pool, "device": device}
    if share_id is not None:
        r["shareID"] = share_id     # a shared (consumable capacity) allocation: the device counts as allocated
    return r


# resource_allocation_test.go TestCalculateResourceAllocatableRequest: (name, DRAExtendedResource on,
# node capacity, resource, draObjects, expected allocatable, expected requested); the pod requests 1.
ALLOCATABLE_REQUEST = [
    ("device-plugin-resource-feature-disabled", False, {EXTENDED_DRA: "4"}, EXTENDED_DRA, (), 4, 1),
    ("device-plugin-resource-feature-enabled", True, {EXTENDED_DRA: "4"}, EXTENDED_DRA, (), 4, 1),
    ("DRA-backed-resource-explicit", True, {}, EXTENDED_DRA,
     (DRA_CLASS, resource_slice(RESOURCE_NODE, TEST_DRIVER, "device-1")), 1, 1),
    ("DRA-backed-resource-implicit", True, {}, IMPLICIT_DRA,
     ({"metadata": {"name": DEVICE_CLASS_NAME}}, resource_slice(RESOURCE_NODE, TEST_DRIVER, "device-1")), 1, 1),
    ("DRA-backed-resource-no-slices", True, {}, EXTENDED_DRA, (DRA_CLASS,), 0, 0),
    ("DRA-backed-resource-with-allocated-device", True, {}, EXTENDED_DRA,
     (DRA_CLASS, resource_slice(RESOURCE_NODE, TEST_DRIVER, "device-1", "device-2"),
      allocated_claim("test-claim", result("device-1"))), 2, 2),
    ("DRA-backed-resource-with-shared-device-allocation", True, {}, EXTENDED_DRA,
     (DRA_CLASS, resource_slice(RESOURCE_NODE, TEST_DRIVER, "device-1", "device-2"),
      allocated_claim("test-claim", result("device-1", share_id="share-123"))), 2, 2),
    ("DRA-backed-resource-multiple-devices-mixed-allocation", True, {}, EXTENDED_DRA,
     (DRA_CLASS, resource_slice(RESOURCE_NODE, TEST_DRIVER, "device-1", "device-2", "device-3"),
      allocated_claim("test-claim-1", result("device-1")),
      allocated_claim("test-claim-2", result("device-2", share_id="share-456"))), 3, 3),
    ("DRA-backed-resource-with-per-device-node-selection", True, {}, EXTENDED_DRA,
     (GPU_SELECTOR_CLASS, PER_DEVICE_SLICE, allocated_claim("test-claim", result("device-1", "per-device-pool"))),
     2, 2),
]


@pytest.mark.parametrize(("name", "enabled", "capacity", "resource", "objects", "expected_allocatable",
                          "expected_requested"), ALLOCATABLE_REQUEST, ids=[c[0] for c in ALLOCATABLE_REQUEST])
def test_calculate_resource_allocatable_request(name: str, enabled: bool, capacity: dict[str, str], resource: str,
                                                objects: tuple[dict[str, Any], ...], expected_allocatable: int,
                                                expected_requested: int) -> None:
    """resource_allocation_test.go TestCalculateResourceAllocatableRequest (9 cases): allocatable and
    requested (with the pod's 1) of one resource on node ``resource-node`` (labelled zone=us-east-1a
    in the per-device case), as Fit's Score reads them: the node's allocatable, or, where it is 0
    and a class backs the resource, the class's devices there and those allocated. A resource no
    node has (no column in the node table) reads (0, 0), as upstream's for a node without it."""
    from tests.builders import setup
    n = st.MakeNode().Name(RESOURCE_NODE).Label("zone", "us-east-1a").Capacity(capacity).Obj()
    snap, _, rows = setup([n], [])
    scoring = noderesources.DraScoring(dra_store(*objects)) if enabled else None
    cls = scoring.backing(resource, 1) if scoring is not None else None
    pair, _ = resource_allocation._with_dra(scoring, cls, snap, rows,
                                      resource_allocation._alloc_requested(snap, rows, resource, 1, non_zero=False), 1)
    got = (0, 0) if pair is None else (int(pair[0][0]), int(pair[1][0]))
    assert got == (expected_allocatable, expected_requested), name



ZONE_SLICE = {"metadata": {"name": "zone-slice"}, "spec": {
    "driver": TEST_DRIVER, "pool": {"name": "zone-pool", "resourceSliceCount": 1},
    "nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]},
    "devices": [{"name": "z-1"}, {"name": "z-2"}]}}


def test_dra_scoring_redoes_only_the_rows_of_changed_nodes() -> None:
    """DraScoring's per-row device counts depend on the slices and classes, and on which node a row
    holds (and its labels, where a slice selects nodes by label): a node update such as a kubelet's
    label or allocatable change redoes only that node's row, never every row, and the counts stay
    those a fresh DraScoring finds. A slice change rebuilds."""
    import numpy as np

    from scheduler.cache import Cache
    from tests.builders import node

    store = dra_store(DRA_CLASS, ZONE_SLICE, *(resource_slice(f"n{i}", TEST_DRIVER, *(f"d{k}" for k in range(i % 3)))
                                              for i in range(6)),
                      allocated_claim("c1", result("d0", "n1")), allocated_claim("c2", result("z-1", "zone-pool")))
    cache = Cache()
    for i in range(6):
        cache.add_node(node(f"n{i}", labels={"zone": "a" if i < 2 else "b"}))
    t = cache.table
    scoring = noderesources.DraScoring(store)
    cls = scoring.backing(EXTENDED_DRA, 1)
    assert cls is not None

    def totals(s: noderesources.DraScoring) -> list[tuple[int, int]]:
        rows = t.valid_rows()
        count, allocated = s.totals(cls, t, rows, np.ones(len(rows), np.bool_))
        return list(zip(count.tolist(), allocated.tolist(), strict=True))

    def fresh() -> list[tuple[int, int]]:
        return totals(noderesources.DraScoring(store))

    # zone a: n0 (0 own + 2 zone devices), n1 (1 + 2, d0 and z-1 allocated)
    assert totals(scoring) == fresh() == [(2, 1), (3, 2), (2, 0), (0, 0), (1, 0), (2, 0)]
    assert scoring.rebuilds == 1
    cache.add_node(node("n3", labels={"zone": "b", "kubelet": "v2"}))                   # a label no slice reads
    cache.add_node(node("n4", cpu="8", labels={"zone": "b"}))                          # allocatable
    assert totals(scoring) == fresh() and scoring.rebuilds == 1
    cache.add_node(node("n2", labels={"zone": "a"}))                # into the zone slice's selector
    cache.remove_node("n5")
    cache.add_node(node("n6", labels={"zone": "a"}))                # a new node, a new row
    assert totals(scoring) == fresh() == [(2, 1), (3, 2), (4, 1), (0, 0), (1, 0), (2, 1)]
    assert scoring.rebuilds == 1
    store.on_event("ResourceSlice", "ADDED", resource_slice("n3", TEST_DRIVER, "x"))
    assert totals(scoring) == fresh() and totals(scoring)[3] == (1, 0) and scoring.rebuilds == 2


def test_score_reads_the_columns_fit_filtered_only_for_a_prefix_of_that_batch() -> None:
    """Fit's Filter keeps the columns it gathered for a batch in which every row passed; Score
    reads them for a prefix view of that batch, and gathers again for other rows (a copy, a
    later slice), after a pod moved, or once a row failed."""
    nodes = [node(f"n{i}", "4", "8Gi") for i in range(6)]
    snap, state, rows = setup(nodes, [pod("e", "1", "1Gi", node_name="n2")])
    fit = noderesources.NodeResourcesFit(NodeResourcesFitArgs())
    p = pod("p", "1", "1Gi")
    fit.pre_filter(state, p, snap)
    assert not fit.filter_nodes(state, p, snap, rows).failed.any()
    cpu = snap.table.slots[snap.table.resources["cpu"]]
    got = resource_allocation.filtered_columns(state, snap, rows[:4], cpu)
    assert got is not None
    assert got[0].tolist() == [4000] * 4 and got[1].tolist() == [0, 0, 1000, 0]
    assert resource_allocation.filtered_columns(state, snap, rows[:4].copy(), cpu) is None
    assert resource_allocation.filtered_columns(state, snap, rows[1:], cpu) is None
    snap.table.add_pod(int(rows[0]), pod("f", "1", "1Gi", node_name="n0"))
    assert resource_allocation.filtered_columns(state, snap, rows[:4], cpu) is None
    big = pod("big", "4", "1Gi")                # fails on n2: nothing kept for this batch
    state2 = type(state)()
    fit.pre_filter(state2, big, snap)
    assert fit.filter_nodes(state2, big, snap, rows).failed.any()
    assert resource_allocation.filtered_columns(state2, snap, rows[:4], cpu) is None
