"""``scheduler.cache.dra.DraStore``: watch events, the claim assume cache, in-flight allocations and
the allocated-device counts."""

from __future__ import annotations

from dataclasses import replace

from scheduler.cache.dra import DraStore, not_found
from scheduler.model.dra import AllocationResult, DeviceID, DeviceRequestAllocationResult, parse_resource_claim


def claim(name: str, *devices: str) -> dict[str, object]:
    body: dict[str, object] = {"metadata": {"name": name, "namespace": "ns", "uid": f"uid-{name}"}, "spec": {}}
    if devices:
        body["status"] = {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "p", "device": dev} for dev in devices]}}}
    return body


def allocated(name: str, *devices: str) -> AllocationResult:
    return AllocationResult(tuple(DeviceRequestAllocationResult("r", "d", "p", dev) for dev in devices))


def test_events_and_allocated_devices() -> None:
    s = DraStore()
    s.on_event("ResourceClaim", "ADDED", claim("a", "g0", "g1"))
    s.on_event("ResourceClaim", "ADDED", claim("b"))
    assert s.allocated_devices() == {DeviceID("d", "p", "g0"), DeviceID("d", "p", "g1")}
    s.on_event("ResourceClaim", "MODIFIED", claim("a", "g1"))
    assert s.allocated_devices() == {DeviceID("d", "p", "g1")}
    s.on_event("ResourceClaim", "DELETED", claim("a"))
    assert not s.allocated_devices() and s.claim("ns", "a") is None and s.claim("ns", "b") is not None
    # A body that does not parse reads as absent.
    assert s.on_event("ResourceClaim", "MODIFIED", {"metadata": {"name": "b", "namespace": "ns"},
                                                    "spec": {"devices": {"requests": 5}}}) is None
    assert s.claim("ns", "b") is None
    assert not_found("ResourceClaim", "x") == 'resourceclaim.resource.k8s.io "x" not found'


def test_in_flight_then_assumed_then_informer() -> None:
    s = DraStore()
    s.on_event("ResourceClaim", "ADDED", claim("a"))
    c = s.claim("ns", "a")
    assert c is not None
    with_alloc = replace(c, allocation=allocated("a", "g0"))
    s.signal_pending_allocation(with_alloc)
    assert s.has_pending_allocation(c.uid) and s.is_allocated(DeviceID("d", "p", "g0"))
    # Unreserve: gone again.
    assert s.remove_pending_allocation(c.uid) and not s.is_allocated(DeviceID("d", "p", "g0"))
    # PreBind wrote it: assumed until the informer's object arrives.
    s.signal_pending_allocation(with_alloc)
    s.assume(with_alloc)
    s.remove_pending_allocation(c.uid)
    assert s.is_assumed("ns", "a") and s.is_allocated(DeviceID("d", "p", "g0"))
    s.restore("ns", "a")
    assert not s.is_allocated(DeviceID("d", "p", "g0"))
    s.assume(with_alloc)
    s.upsert(parse_resource_claim(claim("a", "g0")))
    assert not s.is_assumed("ns", "a") and s.allocated_devices() == {DeviceID("d", "p", "g0")}


def test_pool_allocated_follows_every_change() -> None:
    """The per-pool device names (the allocator's fast test) always agree with ``is_allocated``:
    informer claims, in-flight allocations, assumptions and their undoing, two claims sharing a
    device, deletion."""
    s = DraStore()

    def agrees(*names: str) -> None:
        assert set(names) == {d for d in ("g0", "g1", "g2") if d in s.pool_allocated("d", "p")}
        assert {d.device for d in s.allocated_devices()} == set(names)
        assert "g0" not in s.pool_allocated("d", "other") and "g0" not in s.pool_allocated("x", "p")

    agrees()
    s.on_event("ResourceClaim", "ADDED", claim("a", "g0"))
    s.on_event("ResourceClaim", "ADDED", claim("b"))
    agrees("g0")
    b = s.claim("ns", "b")
    assert b is not None
    with_alloc = replace(b, allocation=allocated("b", "g1", "g0"))
    s.signal_pending_allocation(with_alloc)          # Reserve: seen by the next pod at once
    agrees("g0", "g1")
    s.assume(with_alloc)                             # PreBind wrote it
    s.remove_pending_allocation(b.uid)
    agrees("g0", "g1")
    s.restore("ns", "b")                             # the write undone
    agrees("g0")
    s.on_event("ResourceClaim", "DELETED", claim("a"))
    agrees()
    s.on_event("ResourceClaim", "ADDED", claim("c", "g2"))
    agrees("g2")


def test_pool_stamp_moves_with_every_change_of_its_pool() -> None:
    """``pool_stamp``: a new value, never seen before, whenever an allocation of one of the pool's
    devices comes or goes (informer claims, in-flight allocations and their undoing, deletion);
    another pool's changes leave it alone. The allocator keeps its openers per pool while it holds."""
    s = DraStore()
    seen = [s.pool_stamp("d", "p")]

    def moved() -> None:
        now = s.pool_stamp("d", "p")
        assert now not in seen
        seen.append(now)

    assert seen == [0]
    s.on_event("ResourceClaim", "ADDED", claim("a", "g0"))
    moved()
    s.on_event("ResourceClaim", "ADDED", claim("b"))
    assert s.pool_stamp("d", "p") == seen[-1]                # no device: nothing changed
    b = s.claim("ns", "b")
    assert b is not None
    s.signal_pending_allocation(replace(b, allocation=allocated("b", "g1")))
    moved()
    s.remove_pending_allocation(b.uid)
    moved()
    s.on_event("ResourceClaim", "DELETED", claim("a"))
    moved()
    s.on_event("ResourceClaim", "ADDED", claim("a", "g0"))   # the same devices as before: still new
    moved()
    other = s.pool_stamp("d", "other")
    s.on_event("ResourceClaim", "ADDED", claim("c", "g2"))
    moved()
    assert s.pool_stamp("d", "other") == other == 0


def test_assume_never_shadows_a_newer_object() -> None:
    """As upstream's assume cache: the written claim is not assumed when the informer already holds
    a newer version (the watch was faster than the write's answer)."""
    s = DraStore()
    s.on_event("ResourceClaim", "ADDED", {**claim("a", "g0"), "metadata": {**claim("a")["metadata"],
                                                                             "resourceVersion": "12"}})
    c = s.claim("ns", "a")
    assert c is not None
    assert not s.assume(replace(c, resource_version="11", reserved_for=())) and not s.is_assumed("ns", "a")
    assert s.assume(replace(c, resource_version="13")) and s.is_assumed("ns", "a")


def test_slices_version_tracks_slices_and_classes() -> None:
    s = DraStore()
    v = s.slices_version
    s.on_event("ResourceClaim", "ADDED", claim("a"))
    assert s.slices_version == v
    s.on_event("DeviceClass", "ADDED", {"metadata": {"name": "gpu"}, "spec": {}})
    s.on_event("ResourceSlice", "ADDED", {"metadata": {"name": "s"}, "spec": {"driver": "d", "pool": {"name": "p"}}})
    assert s.slices_version == v + 2 and [x.name for x in s.slices()] == ["s"] and s.device_class("gpu") is not None


def cls(name: str, extended: str = "", created: str = "") -> dict[str, object]:
    meta: dict[str, object] = {"name": name}
    if created:
        meta["creationTimestamp"] = created
    return {"metadata": meta, "spec": {"extendedResourceName": extended} if extended else {}}


def test_extended_resource_cache() -> None:
    """extendedresourcecache's TestExtendedResourceCache: an explicit extendedResourceName maps to
    its class (the newest by creationTimestamp when several name it, then the first by name); every
    class also backs ``deviceclass.resource.kubernetes.io/<name>``; the holder renamed or deleted
    hands the name to the best class still naming it (kubernetes/kubernetes#141110, 1.38: 1.37's
    cache dropped the name), a deletion drops its implicit name."""
    now, day_before, hour_after = "2026-12-04T09:00:00Z", "2026-12-03T09:00:00Z", "2026-12-04T10:00:00Z"
    s = DraStore()
    s.on_event("DeviceClass", "ADDED", cls("gpu-class", "example.com/gpu", now))
    s.on_event("DeviceClass", "ADDED", cls("fpga-class"))
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "gpu-class"
    got = s.extended_resource_class("deviceclass.resource.kubernetes.io/fpga-class")
    assert got is not None and got.name == "fpga-class"
    got = s.extended_resource_class("deviceclass.resource.kubernetes.io/gpu-class")
    assert got is not None and got.name == "gpu-class"
    s.on_event("DeviceClass", "ADDED", cls("gpu-class-3", "example.com/gpu", day_before))     # older: kept
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "gpu-class"
    s.on_event("DeviceClass", "ADDED", cls("gpu-class-4", "example.com/gpu", hour_after))     # newer: wins
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "gpu-class-4"
    s.on_event("DeviceClass", "ADDED", cls("gpu-class-0", "example.com/gpu", hour_after))     # same time, first name
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "gpu-class-0"
    s.on_event("DeviceClass", "MODIFIED", cls("gpu-class-0", "test.com/gpu", hour_after))
    got = s.extended_resource_class("test.com/gpu")
    assert got is not None and got.name == "gpu-class-0"
    got = s.extended_resource_class("example.com/gpu")           # the newest left (#141110)
    assert got is not None and got.name == "gpu-class-4"
    s.on_event("DeviceClass", "DELETED", cls("gpu-class-0"))
    assert s.extended_resource_class("test.com/gpu") is None
    assert s.extended_resource_class("deviceclass.resource.kubernetes.io/gpu-class-0") is None
    assert s.extended_resource_class("example.com/unknown") is None


def test_extended_resource_name_passes_to_the_next_class_when_its_holder_goes() -> None:
    """kubernetes/kubernetes#141110 (issue #141103): with two classes naming one extended resource,
    1.37's cache lost the name when the winner was deleted or renamed, though the other class still
    named it; pods asking for it stayed unschedulable until some class was updated."""
    s = DraStore()
    s.on_event("DeviceClass", "ADDED", cls("old", "example.com/gpu", "2026-12-03T09:00:00Z"))
    s.on_event("DeviceClass", "ADDED", cls("new", "example.com/gpu", "2026-12-04T09:00:00Z"))
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "new"
    s.on_event("DeviceClass", "DELETED", cls("new", "example.com/gpu", "2026-12-04T09:00:00Z"))
    got = s.extended_resource_class("example.com/gpu")
    assert got is not None and got.name == "old"
    s.on_event("DeviceClass", "MODIFIED", cls("old", "example.com/other", "2026-12-03T09:00:00Z"))
    assert s.extended_resource_class("example.com/gpu") is None
    got = s.extended_resource_class("example.com/other")
    assert got is not None and got.name == "old"


def test_extended_claim_for_a_pod() -> None:
    """findExtendedResourceClaim: the claim annotated as the pod's extended-resource claim and
    controlled by it (name and uid); a plain claim, or another pod's, is not."""
    from scheduler.model import parse_pod
    pod = parse_pod({"metadata": {"name": "p", "namespace": "ns", "uid": "pu"}, "spec": {}})
    owner = [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pu", "controller": True}]
    ann = {"resource.kubernetes.io/extended-resource-claim": "true"}
    s = DraStore()
    s.on_event("ResourceClaim", "ADDED", {"metadata": {"name": "plain", "namespace": "ns", "ownerReferences": owner},
                                          "spec": {}})
    assert s.extended_claim_for(pod) is None
    s.on_event("ResourceClaim", "ADDED", {"metadata": {"name": "p-extended-resources-0", "namespace": "ns",
                                                       "annotations": ann, "ownerReferences": owner}, "spec": {}})
    got = s.extended_claim_for(pod)
    assert got is not None and got.name == "p-extended-resources-0"
    other = parse_pod({"metadata": {"name": "p", "namespace": "ns", "uid": "other"}, "spec": {}})
    assert s.extended_claim_for(other) is None
    s.on_event("ResourceClaim", "DELETED", {"metadata": {"name": "p-extended-resources-0", "namespace": "ns"}})
    assert s.extended_claim_for(pod) is None


def test_shares_of_a_device_are_summed_and_not_held_whole() -> None:
    """Consumable capacity: results with a shareID are shares (the device is allocated, counts for
    counters, but is not held whole) and their consumedCapacity adds up, written or in flight; admin
    access holds nothing; a plain result holds the device whole."""
    def shared(name: str, amount: str, share: str) -> dict[str, object]:
        body = claim(name)
        body["status"] = {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "p", "device": "nic", "shareID": share,
             "consumedCapacity": {"bandwidth": amount}}]}}}
        return body

    nic, gpu = DeviceID("d", "p", "nic"), DeviceID("d", "p", "g0")
    s = DraStore()
    s.on_event("ResourceClaim", "ADDED", shared("a", "4", "11111111-1111-1111-1111-111111111111"))
    s.on_event("ResourceClaim", "ADDED", shared("b", "3", "22222222-2222-2222-2222-222222222222"))
    assert s.is_allocated(nic) and not s.is_held_whole(nic) and s.has_shares
    assert s.consumed_capacity(nic) == {"bandwidth": 7}
    # in flight: counted until removed
    pending = parse_resource_claim(shared("c", "2", "33333333-3333-3333-3333-333333333333"))
    s.signal_pending_allocation(pending)
    assert s.consumed_capacity(nic) == {"bandwidth": 9}
    s.remove_pending_allocation(pending.uid)
    s.on_event("ResourceClaim", "DELETED", shared("a", "4", ""))
    assert s.consumed_capacity(nic) == {"bandwidth": 3}
    s.on_event("ResourceClaim", "DELETED", shared("b", "3", ""))
    assert s.consumed_capacity(nic) is None and not s.is_allocated(nic) and not s.has_shares
    # admin access holds nothing; a plain result holds the device whole
    admin = claim("e", "g0")
    admin["status"]["allocation"]["devices"]["results"][0]["adminAccess"] = True  # type: ignore[index]
    s.on_event("ResourceClaim", "ADDED", admin)
    assert not s.is_allocated(gpu) and not s.is_held_whole(gpu)
    s.on_event("ResourceClaim", "ADDED", claim("f", "g0"))
    assert s.is_allocated(gpu) and s.is_held_whole(gpu)


def test_device_taint_rules_taint_the_slices_handed_out() -> None:
    """A DeviceTaintRule's taint is on the devices it selects in ``slices()`` (not in the slice as
    published: ``slice(name)``); adding, changing or deleting the rule moves ``slices_version``, so
    the allocator's index is rebuilt; ``rule_touches`` says whether the rule selects any device."""
    s = DraStore()
    s.on_event("ResourceSlice", "ADDED", {"metadata": {"name": "s1"}, "spec": {
        "driver": "gpu.example.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}})
    rule = {"metadata": {"name": "broken"}, "spec": {"deviceSelector": {"driver": "gpu.example.com", "device": "gpu-1"},
                                                     "taint": {"key": "example.com/broken", "effect": "NoSchedule"}}}
    version = s.slices_version
    s.on_event("DeviceTaintRule", "ADDED", rule)
    assert s.slices_version > version
    (patched,) = s.slices()
    assert [[t.key for t in d.taints] for d in patched.devices] == [[], ["example.com/broken"]]
    published = s.slice("s1")
    assert published is not None and not published.devices[1].taints
    assert s.rule_touches(s.taint_rule("broken"))
    other = {"metadata": {"name": "other"}, "spec": {"deviceSelector": {"driver": "nic.example.com"},
                                                     "taint": {"key": "k", "effect": "NoSchedule"}}}
    s.on_event("DeviceTaintRule", "ADDED", other)
    assert not s.rule_touches(s.taint_rule("other"))
    version = s.slices_version
    s.on_event("DeviceTaintRule", "DELETED", rule)
    assert s.slices_version > version and not s.slices()[0].devices[1].taints


def test_device_taint_rules_gate_off_taints_nothing() -> None:
    """DRADeviceTaintRules=false (the service sets ``apply_taint_rules``): rules are kept, but no
    device gets their taint and no rule change is a slice change."""
    s = DraStore()
    s.apply_taint_rules = False
    s.on_event("ResourceSlice", "ADDED", {"metadata": {"name": "s1"}, "spec": {
        "driver": "d", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0"}]}})
    s.on_event("DeviceTaintRule", "ADDED", {"metadata": {"name": "all"}, "spec": {
        "deviceSelector": {}, "taint": {"key": "k", "effect": "NoSchedule"}}})
    assert s.taint_rule("all") is not None and not s.slices()[0].devices[0].taints
    assert not s.rule_touches(s.taint_rule("all"))
