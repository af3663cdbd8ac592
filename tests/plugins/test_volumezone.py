"""VolumeZone, after upstream's ``volumezone/volume_zone_test.go``: TestSingleZone, TestMultiZone,
TestWithBinding, and the queueing-hint tables (TestIsSchedulableAfterPersistentVolumeClaimAdded,
TestIsSchedulableAfterStorageClassAdded, TestIsSchedulableAfterPersistentVolumeChange).

Upstream runs Filter after PreFilter whatever PreFilter said (a failed PreFilter leaves no state,
and Filter falls back to computing it); ``run`` here stops at a PreFilter that does not succeed, so
the Filter column is checked by calling Filter alone, which takes the same fallback.

One message differs by design: TestWithBinding "unbound volume no storage class" expects
``storageclasses.storage.k8s.io "Class_0" not found``, the text of the *fake* lister upstream's test
uses (``testing/framework``'s StorageClassLister). The scheduler's real informer lister, and so ours,
says ``storageclass.storage.k8s.io "Class_0" not found`` (client-go builds it from
``storagev1.Resource("storageclass")``). The code, UnschedulableAndUnresolvable, is upstream's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.framework import ClusterEvent, CycleState
from scheduler.framework.status import Code
from scheduler.model import Node, Pod, parse_node
from scheduler.model.volumes import parse_pv, parse_storage_class
from scheduler.plugins import volumezone
from scheduler.plugins.volumezone import VolumeZone
from tests.plugins.volumes import Want, pv, pvc, run, status, storage_class, store
from tests.st import MakePod

BETA_ZONE, BETA_REGION = volumezone.BETA_ZONE, volumezone.BETA_REGION
ZONE, REGION = volumezone.ZONE, volumezone.REGION
SKIP: Want = (Code.SKIP, "")
CONFLICT: Want = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, volumezone.ERR_REASON_CONFLICT)


def create_pod_with_volume(pod: str, claim: str) -> Pod:
    return MakePod().Name(pod).Namespace("default").PVC(claim).Obj()


def host(labels: dict[str, str] | None = None) -> Node:
    return parse_node({"metadata": {"name": "host1", "labels": dict(labels or {})}})


SINGLE_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_REGION: "us-west1"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {REGION: "us-west1", "uselessLabel": "none"}),
    pv("Vol_Stable_3", {ZONE: "us-west1-a", REGION: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"), pvc("PVC_2", volume_name="Vol_2"), pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"), pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"), pvc("PVC_Stable_3", volume_name="Vol_Stable_3"),
]
SINGLE_ZONE = [
    ("pod without volume", MakePod().Name("pod_1").Namespace("default").Obj(), host({BETA_ZONE: "us-west1-a"}),
     SKIP, None),
    ("node without labels", create_pod_with_volume("pod_1", "PVC_1"), host(), None, None),
    ("beta zone label matched", create_pod_with_volume("pod_1", "PVC_1"),
     host({BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("beta region label matched", create_pod_with_volume("pod_1", "PVC_2"),
     host({BETA_REGION: "us-west1", "uselessLabel": "none"}), None, None),
    ("beta region label doesn't match", create_pod_with_volume("pod_1", "PVC_2"),
     host({BETA_REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
    ("beta zone label doesn't match", create_pod_with_volume("pod_1", "PVC_1"),
     host({BETA_ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
    ("zone label matched", create_pod_with_volume("pod_1", "PVC_Stable_1"),
     host({ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("region label matched", create_pod_with_volume("pod_1", "PVC_Stable_2"),
     host({REGION: "us-west1", "uselessLabel": "none"}), None, None),
    ("region label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_2"),
     host({REGION: "no_us-west1", "uselessLabel": "none"}), None, CONFLICT),
    ("zone label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_1"),
     host({ZONE: "no_us-west1-a", "uselessLabel": "none"}), None, CONFLICT),
    ("pv with zone and region, node with only zone", create_pod_with_volume("pod_1", "PVC_Stable_3"),
     host({ZONE: "us-west1-a"}), None, CONFLICT),
    ("pv with zone,node with beta zone", create_pod_with_volume("pod_1", "PVC_Stable_1"),
     host({BETA_ZONE: "us-west1-a"}), None, CONFLICT),
    ("pv with beta label,node with ga label, matched", create_pod_with_volume("pod_1", "PVC_1"),
     host({ZONE: "us-west1-a"}), None, None),
    ("pv with beta label,node with ga label, don't match", create_pod_with_volume("pod_1", "PVC_1"),
     host({ZONE: "us-west1-b"}), None, CONFLICT),
]

MULTI_ZONE_OBJECTS = [
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pv("Vol_2", {BETA_ZONE: "us-west1-b", "uselessLabel": "none"}),
    pv("Vol_3", {BETA_ZONE: "us-west1-c__us-west1-a"}),
    pv("Vol_Stable_1", {ZONE: "us-west1-a"}),
    pv("Vol_Stable_2", {ZONE: "us-west1-c__us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"), pvc("PVC_2", volume_name="Vol_2"), pvc("PVC_3", volume_name="Vol_3"),
    pvc("PVC_4", volume_name="Vol_not_exist"), pvc("PVC_Stable_1", volume_name="Vol_Stable_1"),
    pvc("PVC_Stable_2", volume_name="Vol_Stable_2"),
]
MULTI_ZONE = [
    ("node without labels", create_pod_with_volume("pod_1", "PVC_3"), host(), None, None),
    ("beta zone label matched", create_pod_with_volume("pod_1", "PVC_3"),
     host({BETA_ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("beta zone label doesn't match", create_pod_with_volume("pod_1", "PVC_1"),
     host({BETA_ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
    ("zone label matched", create_pod_with_volume("pod_1", "PVC_Stable_2"),
     host({ZONE: "us-west1-a", "uselessLabel": "none"}), None, None),
    ("zone label doesn't match", create_pod_with_volume("pod_1", "PVC_Stable_1"),
     host({ZONE: "us-west1-b", "uselessLabel": "none"}), None, CONFLICT),
]

BINDING_OBJECTS = [
    storage_class("Class_Immediate"), storage_class("Class_Wait", mode="WaitForFirstConsumer"),
    pv("Vol_1", {BETA_ZONE: "us-west1-a"}),
    pvc("PVC_1", volume_name="Vol_1"), pvc("PVC_NoSC", storage_class="Class_0"), pvc("PVC_EmptySC"),
    pvc("PVC_WaitSC", storage_class="Class_Wait"), pvc("PVC_ImmediateSC", storage_class="Class_Immediate"),
]
TEST_NODE = host({BETA_ZONE: "us-west1-a", "uselessLabel": "none"})
NO_PV_NAME = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "PersistentVolumeClaim had no pv name and storageClass name")
# storageclasses.storage.k8s.io "Class_0" not found upstream (its fake lister); see the module docstring.
NO_CLASS = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'storageclass.storage.k8s.io "Class_0" not found')
NO_MODE = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'VolumeBindingMode not set for StorageClass "Class_Immediate"')
WITH_BINDING = [
    ("label zone failure domain matched", create_pod_with_volume("pod_1", "PVC_1"), TEST_NODE, None, None),
    ("unbound volume empty storage class", create_pod_with_volume("pod_1", "PVC_EmptySC"), TEST_NODE,
     NO_PV_NAME, NO_PV_NAME),
    ("unbound volume no storage class", create_pod_with_volume("pod_1", "PVC_NoSC"), TEST_NODE, NO_CLASS, NO_CLASS),
    ("unbound volume immediate binding mode", create_pod_with_volume("pod_1", "PVC_ImmediateSC"), TEST_NODE,
     NO_MODE, NO_MODE),
    ("unbound volume wait binding mode", create_pod_with_volume("pod_1", "PVC_WaitSC"), TEST_NODE, SKIP, None),
]

CASES = ([("TestSingleZone", SINGLE_ZONE_OBJECTS, *c) for c in SINGLE_ZONE]
         + [("TestMultiZone", MULTI_ZONE_OBJECTS, *c) for c in MULTI_ZONE]
         + [("TestWithBinding", BINDING_OBJECTS, *c) for c in WITH_BINDING])


def filter_alone(plugin: VolumeZone, pod: Pod, node: Node) -> Want:
    """Filter with an empty CycleState (upstream's Filter after a PreFilter that wrote nothing)."""
    cache = Cache()
    cache.add_node(node)
    with cache.lock:
        snap = cache.snapshot()
        v = plugin.filter_nodes(CycleState(), pod, snap, np.array([snap.row_of(node.name)], np.int64))
    return status(v.statuses[0]) if v.failed[0] else None


@pytest.mark.parametrize(("table", "objects", "name", "pod", "node", "want_pre", "want"), CASES,
                         ids=[f"{c[0]}/{c[2]}" for c in CASES])
def test_volume_zone(table: str, objects: list[dict[str, Any]], name: str, pod: Pod, node: Node,
                     want_pre: Want, want: Want) -> None:
    plugin = VolumeZone(store(*objects))
    got_pre, got = run(plugin, pod, node)
    assert got_pre == want_pre
    if want_pre is None:
        assert got == want
    else:
        assert filter_alone(plugin, pod, node) == want


def test_filter_is_columnar_over_many_nodes() -> None:
    """One call answers for every row: matching beta zone, GA fallback, no labels, mismatch."""
    plugin = VolumeZone(store(*SINGLE_ZONE_OBJECTS))
    nodes = [parse_node({"metadata": {"name": f"n{i}", "labels": labels}}) for i, labels in enumerate(
        [{BETA_ZONE: "us-west1-a"}, {ZONE: "us-west1-a"}, {}, {ZONE: "us-west1-b"}, {BETA_ZONE: "x", ZONE: "us-west1-a"}])]
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    pod = create_pod_with_volume("p", "PVC_1")
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, pod, snap)
        v = plugin.filter_nodes(state, pod, snap, np.array([snap.row_of(n.name) for n in nodes], np.int64))
    # The beta key present with another value fails: the GA fallback is only for a missing key.
    assert v.failed.tolist() == [False, False, False, True, True]


# --- queueing hints ------------------------------------------------------------------------------
def pvc_obj(name: str, ns: str = "default", volume_name: str = "") -> Any:
    return store(pvc(name, ns, volume_name=volume_name)).pvc(ns, name)


PVC_HINT = [
    ("pvc-was-added-but-pod-refers-no-pvc", MakePod().Name("pod_1").Namespace("default").Obj(), None,
     pvc_obj("PVC_1", volume_name="Vol_1"), False),
    ("pvc-was-added-and-pod-was-bound-to-different-pvc", create_pod_with_volume("pod_1", "PVC_2"), None,
     pvc_obj("PVC_1", volume_name="Vol_1"), False),
    ("pvc-was-added-and-pod-was-bound-to-pvc-but-different-ns", create_pod_with_volume("pod_1", "PVC_1"), None,
     pvc_obj("PVC_1", "ns1", volume_name="Vol_1"), False),
    ("pvc-was-added-and-pod-was-bound-to-the-pvc", create_pod_with_volume("pod_1", "PVC_1"), None,
     pvc_obj("PVC_1", volume_name="Vol_1"), True),
    ("pvc-was-updated-and-pod-was-bound-to-the-pvc", create_pod_with_volume("pod_1", "PVC_1"), pvc_obj("PVC_1"),
     pvc_obj("PVC_1", volume_name="Vol_1"), True),
    ("pvc-was-updated-but-pod-refers-no-pvc", MakePod().Name("pod_1").Namespace("default").Obj(), pvc_obj("PVC_1"),
     pvc_obj("PVC_1", volume_name="Vol_1"), False),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "queue"), PVC_HINT, ids=[c[0] for c in PVC_HINT])
def test_is_schedulable_after_pvc_added(name: str, pod: Pod, old: Any, new: Any, queue: bool) -> None:
    assert volumezone.is_schedulable_after_pvc_change(pod, ClusterEvent("PersistentVolumeClaim", "Add", old=old,
                                                                        new=new)) is queue


def test_is_schedulable_after_pvc_added_error_wrong_new_object() -> None:
    with pytest.raises(TypeError):   # an error: the queue reads it as Queue
        volumezone.is_schedulable_after_pvc_change(create_pod_with_volume("pod_1", "PVC_1"),
                                                   ClusterEvent("PersistentVolumeClaim", "Add", new="not-a-pvc"))


SC_HINT = [
    ("sc-doesn't-have-volume-binding-mode", parse_storage_class({"metadata": {"name": "SC_1"}}), False),
    ("new-sc-is-wait-for-first-consumer-mode",
     parse_storage_class({"metadata": {"name": "SC_1"}, "volumeBindingMode": "WaitForFirstConsumer"}), True),
]


@pytest.mark.parametrize(("name", "new", "queue"), SC_HINT, ids=[c[0] for c in SC_HINT])
def test_is_schedulable_after_storage_class_added(name: str, new: Any, queue: bool) -> None:
    pod = create_pod_with_volume("pod_1", "PVC_1")
    assert volumezone.is_schedulable_after_storage_class_added(pod, ClusterEvent("StorageClass", "Add", new=new)) is queue


def test_is_schedulable_after_storage_class_added_error_wrong_new_object() -> None:
    with pytest.raises(TypeError):
        volumezone.is_schedulable_after_storage_class_added(
            create_pod_with_volume("pod_1", "PVC_1"), ClusterEvent("StorageClass", "Add", new="not-a-storageclass"))


def pv_obj(labels: dict[str, str]) -> Any:
    return parse_pv({"metadata": {"name": "Vol_1", "labels": labels}})


PV_HINT = [
    ("error-wrong-new-object", None, "not-a-pv", None),
    ("error-wrong-old-object", "not-a-pv", pv_obj({}), None),
    ("new-pv-was-added", None, pv_obj({BETA_ZONE: "us-west1-b"}), True),
    ("pv-was-updated-and-changed-topology", pv_obj({BETA_ZONE: "us-west1-a"}), pv_obj({BETA_ZONE: "us-west1-b"}), True),
    ("pv-was-updated-and-added-topology-label", pv_obj({BETA_ZONE: "us-west1-a"}),
     pv_obj({BETA_ZONE: "us-west1-a", ZONE: "zone"}), True),
    ("pv-was-updated-but-no-topology-is-changed", pv_obj({BETA_ZONE: "us-west1-a", ZONE: "zone"}),
     pv_obj({BETA_ZONE: "us-west1-a", ZONE: "zone"}), False),
]


@pytest.mark.parametrize(("name", "old", "new", "queue"), PV_HINT, ids=[c[0] for c in PV_HINT])
def test_is_schedulable_after_persistent_volume_change(name: str, old: Any, new: Any, queue: bool | None) -> None:
    pod = create_pod_with_volume("pod_1", "PVC_1")
    event = ClusterEvent("PersistentVolume", "Update" if old is not None else "Add", old=old, new=new)
    if queue is None:   # expectedErr with Queue: our hints raise, which the queue reads as Queue
        with pytest.raises(TypeError):
            volumezone.is_schedulable_after_pv_change(pod, event)
    else:
        assert volumezone.is_schedulable_after_pv_change(pod, event) is queue


def test_label_zones_to_set() -> None:
    assert volumezone.label_zones_to_set("us-west1-c__us-west1-a") == {"us-west1-c", "us-west1-a"}
    assert volumezone.label_zones_to_set("a____b") is None   # an empty zone: the label is ignored
