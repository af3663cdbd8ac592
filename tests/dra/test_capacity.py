"""scheduler.dra.capacity (ClassDevices) and the scoring's DraScoring: our own cases for what
upstream's resource_allocation.go does beyond its table (ported in tests/plugins/noderesources/test_resource_allocation.py):
which slices count for a node, a selector's error, and what is kept across pods."""

from __future__ import annotations

from typing import Any

from scheduler.cache.dra import DraStore
from scheduler.dra.allocator import SelectorCache
from scheduler.dra.capacity import ClassDevices
from scheduler.model.dra import parse_device_class, parse_resource_claim, parse_resource_slice
from scheduler.plugins import noderesources
from tests import st
from tests.builders import setup

DRIVER = "test-driver"


def slice_(name: str, *devices: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"driver": DRIVER, "pool": {"name": name, "resourceSliceCount": 1},
                                                 "devices": list(devices), **spec}}


def dev(name: str, model: str = "a", **where: Any) -> dict[str, Any]:
    return {"name": name, "attributes": {"model": {"string": model}}, **where}


def cls(*expressions: str) -> dict[str, Any]:
    return {"metadata": {"name": "gpu"}, "spec": {"extendedResourceName": "example.com/gpu",
                                                  "selectors": [{"cel": {"expression": e}} for e in expressions]}}


ZONE_A = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}


def counts(c: dict[str, Any], *slices: dict[str, Any], nodes: tuple[tuple[str, dict[str, str]], ...]
           ) -> list[tuple[int, bool]]:
    devices = ClassDevices(parse_device_class(c), [parse_resource_slice(s) for s in slices], SelectorCache())
    return [(d.count, d.error) for d in (devices.on_node(n, labels) for n, labels in nodes)]


NODES = (("n1", {"zone": "a"}), ("n2", {"zone": "b"}))


def test_which_slices_count_for_a_node() -> None:
    """Node-local slices for their node; a node selector where it matches; allNodes everywhere; in a
    perDeviceNodeSelection slice each device by its own; every generation (upstream lists all)."""
    got = counts(cls(), slice_("local", dev("d1"), dev("d2"), nodeName="n1"),
                 slice_("old-generation", dev("d1"), nodeName="n1"),
                 slice_("zoned", dev("z1"), nodeSelector=ZONE_A), slice_("everywhere", dev("e1"), allNodes=True),
                 slice_("per-device", dev("p1", nodeName="n2"), dev("p2", nodeSelector=ZONE_A), dev("p3"),
                        perDeviceNodeSelection=True), nodes=NODES)
    assert got == [(2 + 1 + 1 + 1 + 1, False), (1 + 1, False)]


def test_selectors_in_order_and_errors_per_node() -> None:
    """The first selector that rejects decides; a selector failing on a device of the node's slices
    is an error for that node only (the resource is left out of its score)."""
    bad = 'device.attributes["test-driver"].missing == "x"'
    assert counts(cls('device.attributes["test-driver"].model == "a"'), slice_("s1", dev("d1"), dev("d2", "b"),
                  nodeName="n1"), nodes=NODES) == [(1, False), (0, False)]
    assert counts(cls('device.attributes["test-driver"].model == "b"', bad),
                  slice_("s1", dev("d1"), nodeName="n1"), nodes=NODES) == [(0, False), (0, False)]
    assert counts(cls(bad), slice_("s1", dev("d1"), nodeName="n1"), slice_("s2", dev("d1"), nodeName="n2"),
                  nodes=NODES[:1]) == [(0, True)]


def test_labels_are_read_again_when_they_change() -> None:
    devices = ClassDevices(parse_device_class(cls()), [parse_resource_slice(slice_("z", dev("d"), nodeSelector=ZONE_A))],
                           SelectorCache())
    assert devices.on_node("n", {"zone": "a"}).count == 1
    assert devices.on_node("n", {"zone": "b"}).count == 0


def test_scoring_sees_in_flight_allocations_and_new_slices() -> None:
    """What is allocated is read per cycle (an in-flight allocation of Reserve counts at once); the
    devices per node are kept until the slices change."""
    store = DraStore()
    store.on_event("DeviceClass", "ADDED", cls())
    store.on_event("ResourceSlice", "ADDED", slice_("n1", dev("d1"), dev("d2"), nodeName="n1"))
    scoring = noderesources.DraScoring(store)
    gpu = store.extended_resource_class("example.com/gpu")
    assert gpu is not None and scoring.backing("example.com/gpu", 1) is gpu
    assert scoring.backing("example.com/gpu", 0) is None
    snap, _, rows = setup([st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()], [])

    def totals() -> list[tuple[int, int]]:
        count, allocated = scoring.totals(gpu, snap.table, rows, rows >= 0)
        return list(zip(count.tolist(), allocated.tolist(), strict=True))

    assert totals() == [(2, 0), (0, 0)]
    claim = parse_resource_claim({"metadata": {"name": "c", "namespace": "default", "uid": "u"}, "spec": {},
                                  "status": {"allocation": {"devices": {"results": [
                                      {"request": "r", "driver": DRIVER, "pool": "n1", "device": "d2"}]}}}})
    store.signal_pending_allocation(claim)
    assert totals() == [(2, 1), (0, 0)]
    store.remove_pending_allocation("u")
    store.on_event("ResourceSlice", "ADDED", slice_("n2", dev("d1"), nodeName="n2"))
    assert totals() == [(2, 0), (1, 0)]


def test_allocated_counts_follow_the_journal_even_when_it_is_cut() -> None:
    """DraScoring recounts only the pools the store's journal names since its last read; a reader
    left behind a cut journal (``pool_changes`` answers None) recounts every row."""
    store = DraStore()
    store.on_event("DeviceClass", "ADDED", cls())
    for n in ("n1", "n2"):
        store.on_event("ResourceSlice", "ADDED", slice_(n, dev("d1"), dev("d2"), nodeName=n))
    scoring = noderesources.DraScoring(store)
    gpu = store.extended_resource_class("example.com/gpu")
    assert gpu is not None
    snap, _, rows = setup([st.MakeNode().Name("n1").Obj(), st.MakeNode().Name("n2").Obj()], [])

    def claim(uid: str, pool: str, device: str) -> Any:
        return parse_resource_claim({"metadata": {"name": uid, "namespace": "default", "uid": uid}, "spec": {},
                                     "status": {"allocation": {"devices": {"results": [
                                         {"request": "r", "driver": DRIVER, "pool": pool, "device": device}]}}}})

    def allocated() -> list[int]:
        result: list[int] = scoring.totals(gpu, snap.table, rows, rows >= 0)[1].tolist()
        return result

    assert allocated() == [0, 0]
    store.signal_pending_allocation(claim("a", "n2", "d1"))
    _, pos = store.pool_changes(0)
    assert store.pool_changes(pos) == ([], pos)
    assert allocated() == [0, 1]
    for i in range(5000):       # past the journal's length: the reader is cut off
        store.signal_pending_allocation(claim(f"x{i}", "n1", "d1"))
        store.remove_pending_allocation(f"x{i}")
    assert store.pool_changes(0)[0] is None
    store.signal_pending_allocation(claim("b", "n1", "d2"))
    assert allocated() == [1, 1]
