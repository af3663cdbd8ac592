"""VolumeRestrictions, after upstream's ``volumerestrictions/volume_restrictions_test.go``: the four
Test*DiskConflicts tables, TestAccessModeConflicts, Test_isSchedulableAfterPodDeleted and
Test_isSchedulableAfterPersistentVolumeClaimChange.

Each table keeps upstream's case names. A case's node is upstream's ``nodeInfo``: its pods are
placed on the node. In TestAccessModeConflicts upstream's snapshot holds ``existingPods`` on
``node-1``; the same pods are the node's pods there, so they are placed once, on the node.
"""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.framework import ClusterEvent
from scheduler.framework.status import Code
from scheduler.model import Pod
from scheduler.plugins import volumerestrictions
from scheduler.plugins.volumerestrictions import VolumeRestrictions
from tests.plugins.volumes import Want, pvc, run, store
from tests.st import MakeNode, MakePod

SKIP: Want = (Code.SKIP, "")
DISK: Want = (Code.UNSCHEDULABLE, volumerestrictions.ERR_REASON_DISK_CONFLICT)
RWOP: Want = (Code.UNSCHEDULABLE, volumerestrictions.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT)
NODE = MakeNode().Name("node-1").Obj()


def with_volume(source: dict[str, Any], name: str = "") -> Pod:
    return MakePod().Volume({"name": name, **source}).Obj()


def disk_table(vol: dict[str, Any], vol2: dict[str, Any]) -> list[tuple[str, Pod, list[Pod], Want, Want]]:
    """The four cases every Test*DiskConflicts shares: (name, pod, node's pods, PreFilter, Filter)."""
    return [
        ("nothing", MakePod().Obj(), [], SKIP, None),
        ("one state", MakePod().Obj(), [with_volume(vol)], SKIP, None),
        ("same state", with_volume(vol), [with_volume(vol)], None, DISK),
        ("different state", with_volume(vol2), [with_volume(vol)], None, None),
    ]


GCE = [*disk_table({"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}),
       ("pod with a volume that doesn't have restrictions", with_volume({}, "volume with no restriction"), [], SKIP,
        None)]
AWS = disk_table({"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}})
RBD = disk_table({"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}},
                 {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}})
ISCSI = disk_table(
    {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4",
               "lun": 0}},
    {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4",
               "lun": 0}})


@pytest.mark.parametrize(("table", "name", "pod", "node_pods", "want_pre", "want"),
                         [(t, *c) for t, cases in (("TestGCEDiskConflicts", GCE), ("TestAWSDiskConflicts", AWS),
                                                   ("TestRBDDiskConflicts", RBD), ("TestISCSIDiskConflicts", ISCSI))
                          for c in cases],
                         ids=lambda x: x if isinstance(x, str) else "")
def test_disk_conflicts(table: str, name: str, pod: Pod, node_pods: list[Pod], want_pre: Want, want: Want) -> None:
    assert run(VolumeRestrictions(), pod, NODE, node_pods) == (want_pre, want), (table, name)


# --- TestAccessModeConflicts ---------------------------------------------------------------------
POD_WITH_ONE_PVC = MakePod().Name("pod-with-one-pvc").Namespace("default").PVC("claim-with-rwop-1").Node("node-1").Obj()
POD_WITH_TWO_PVCS = (MakePod().Name("pod-with-two-pvcs").Namespace("default").PVC("claim-with-rwop-1")
                     .PVC("claim-with-rwop-2").Node("node-1").Obj())
POD_WITH_ONE_CONFLICT = (MakePod().Name("pod-with-one-conflict").Namespace("default").PVC("claim-with-rwop-1")
                         .Node("node-1").Obj())
POD_WITH_TWO_CONFLICTS = (MakePod().Name("pod-with-two-conflicts").Namespace("default").PVC("claim-with-rwop-1")
                          .PVC("claim-with-rwop-2").Node("node-1").Obj())
POD_WITH_RWX = MakePod().Name("pod-with-rwx").Namespace("default").PVC("claim-with-rwx").Node("node-1").Obj()
RWOP_1 = pvc("claim-with-rwop-1", access_modes=["ReadWriteOncePod"])
RWOP_2 = pvc("claim-with-rwop-2", access_modes=["ReadWriteOncePod"])
RWX = pvc("claim-with-rwx", access_modes=["ReadWriteMany"])

ACCESS_MODE = [
    ("nothing", MakePod().Obj(), [], [], SKIP, None),
    ("failed to get PVC", POD_WITH_ONE_PVC, [], [],
     (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "claim-with-rwop-1" not found'), None),
    ("no access mode conflict", POD_WITH_ONE_PVC, [POD_WITH_RWX], [RWOP_1, RWX], SKIP, None),
    ("access mode conflict, unschedulable", POD_WITH_ONE_CONFLICT, [POD_WITH_ONE_PVC, POD_WITH_RWX], [RWOP_1, RWX],
     None, RWOP),
    ("two conflicts, unschedulable", POD_WITH_TWO_CONFLICTS, [POD_WITH_TWO_PVCS, POD_WITH_RWX], [RWOP_1, RWOP_2, RWX],
     None, RWOP),
]


@pytest.mark.parametrize(("name", "pod", "node_pods", "pvcs", "want_pre", "want"), ACCESS_MODE,
                         ids=[c[0] for c in ACCESS_MODE])
def test_access_mode_conflicts(name: str, pod: Pod, node_pods: list[Pod], pvcs: list[dict[str, Any]],
                               want_pre: Want, want: Want) -> None:
    assert run(VolumeRestrictions(store(*pvcs)), pod, NODE, node_pods) == (want_pre, want), name


def test_read_write_once_pod_user_on_another_node_rejects_every_node() -> None:
    """The claim's user runs elsewhere: upstream's count is cluster-wide (usedPVCSet), so this node
    is Unschedulable too (preemption, not a different node, can resolve it)."""
    got = run(VolumeRestrictions(store(RWOP_1)), POD_WITH_ONE_CONFLICT, NODE, [], [POD_WITH_ONE_PVC])
    assert got == (None, RWOP)


def test_filter_without_pre_filter_gives_pre_filters_verdict() -> None:
    """Upstream's Filter without its PreFilter state is an Error; ours computes the same verdict."""
    import numpy as np

    from scheduler.cache import Cache
    from scheduler.framework import CycleState
    cache = Cache()
    cache.add_node(NODE)
    cache.add_pod(POD_WITH_ONE_PVC)
    with cache.lock:
        snap = cache.snapshot()
        v = VolumeRestrictions(store(RWOP_1)).filter_nodes(CycleState(), POD_WITH_ONE_CONFLICT, snap,
                                                           np.array([snap.row_of("node-1")], np.int64))
    assert v.failed.tolist() == [True]
    assert v.statuses[int(v.status_ids[0]) if v.status_ids is not None else 0].reasons == (
        volumerestrictions.ERR_REASON_READ_WRITE_ONCE_POD_CONFLICT,)


# --- Test_isSchedulableAfterPodDeleted -------------------------------------------------------------
def disk_pod(source: dict[str, Any]) -> Pod:
    return MakePod().Volume({"name": "", **source}).Obj()


GCE1, GCE2 = {"gcePersistentDisk": {"pdName": "foo"}}, {"gcePersistentDisk": {"pdName": "bar"}}
AWS1, AWS2 = {"awsElasticBlockStore": {"volumeID": "foo"}}, {"awsElasticBlockStore": {"volumeID": "bar"}}
RBD1 = {"rbd": {"monitors": ["a", "b"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
RBD2 = {"rbd": {"monitors": ["c", "d"], "pool": "foo", "image": "bar", "fsType": "ext4"}}
ISCSI1 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2016-12.server:storage.target01", "fsType": "ext4",
                    "lun": 0}}
ISCSI2 = {"iscsi": {"targetPortal": "127.0.0.1:3260", "iqn": "iqn.2017-12.server:storage.target01", "fsType": "ext4",
                    "lun": 0}}
POD_DELETED = [
    ("queue-new-object-gcedisk-conflict", disk_pod(GCE1), disk_pod(GCE1), True),
    ("skip-new-object-gcedisk-no-conflict", disk_pod(GCE1), disk_pod(GCE2), False),
    ("queue-new-object-awsdisk-conflict", disk_pod(AWS1), disk_pod(AWS1), True),
    ("skip-new-object-awsdisk-no-conflict", disk_pod(AWS1), disk_pod(AWS2), False),
    ("queue-new-object-rbddisk-conflict", disk_pod(RBD1), disk_pod(RBD1), True),
    ("skip-new-object-rbddisk-no-conflict", disk_pod(RBD1), disk_pod(RBD2), False),
    ("queue-new-object-iscsidisk-conflict", disk_pod(ISCSI1), disk_pod(ISCSI1), True),
    ("skip-new-object-iscsidisk-no-conflict", disk_pod(ISCSI1), disk_pod(ISCSI2), False),
    ("queue-has-same-claim", MakePod().Name("pod1").PVC("claim-rwop").Obj(),
     MakePod().Name("pod2").PVC("claim-rwop").Obj(), True),
    ("skip-no-same-claim", MakePod().Name("pod1").PVC("claim-1-rwop").Obj(),
     MakePod().Name("pod2").PVC("claim-2-rwop").Obj(), False),
]


@pytest.mark.parametrize(("name", "pod", "deleted", "queue"), POD_DELETED, ids=[c[0] for c in POD_DELETED])
def test_is_schedulable_after_pod_deleted(name: str, pod: Pod, deleted: Pod, queue: bool) -> None:
    assert volumerestrictions.is_schedulable_after_pod_deleted(pod, ClusterEvent("Pod", "Delete", old=deleted)) is queue


def test_is_schedulable_after_pod_deleted_other_namespace_and_non_pod() -> None:
    """Upstream's namespace check and its util.As error (an error: the queue reads it as Queue)."""
    hint = volumerestrictions.is_schedulable_after_pod_deleted
    assert not hint(disk_pod(GCE1), ClusterEvent("Pod", "Delete", old=MakePod().Namespace("other").Volume(
        {"name": "", **GCE1}).Obj()))
    with pytest.raises(TypeError):
        hint(disk_pod(GCE1), ClusterEvent("Pod", "Delete", old="not-a-pod"))


# --- Test_isSchedulableAfterPersistentVolumeClaimChange ---------------------------------------------
RWX_PVCS = store(pvc("claim-with-rwx-1", access_modes=["ReadWriteMany"]),
                 pvc("claim-with-rwx-2", access_modes=["ReadWriteMany"]))
PVC1, PVC2 = RWX_PVCS.pvc("default", "claim-with-rwx-1"), RWX_PVCS.pvc("default", "claim-with-rwx-2")
POD_WITH_ONE_RWX = MakePod().Name("pod-with-one-pvc").Namespace("default").PVC("claim-with-rwx-1").Node("node-1").Obj()
POD_WITH_TWO_RWX = (MakePod().Name("pod-with-two-pvcs").Namespace("default").PVC("claim-with-rwx-1")
                    .PVC("claim-with-rwx-2").Node("node-1").Obj())
POD_OTHER_NAMESPACE = (MakePod().Name("pod-with-one-pvc").Namespace("kube-system").PVC("claim-with-rwx-1")
                       .Node("claim-with-rwx-2").Obj())
PVC_CHANGE = [
    ("queue-new-object-pvc-belong-pod", POD_WITH_TWO_RWX, PVC1, True),
    ("skip-new-object-unused", POD_WITH_ONE_RWX, PVC2, False),
    ("skip-nil-old-object", POD_WITH_ONE_RWX, PVC2, False),
    ("skip-new-object-not-belong-pod", POD_WITH_ONE_RWX, PVC2, False),
    ("skip-new-object-namespace-not-equal-pod", POD_OTHER_NAMESPACE, PVC1, False),
]


@pytest.mark.parametrize(("name", "pod", "new", "queue"), PVC_CHANGE, ids=[c[0] for c in PVC_CHANGE])
def test_is_schedulable_after_persistent_volume_claim_change(name: str, pod: Pod, new: Any, queue: bool) -> None:
    event = ClusterEvent("PersistentVolumeClaim", "Add", new=new)
    assert volumerestrictions.is_schedulable_after_pvc_added(pod, event) is queue


def test_is_schedulable_after_pvc_added_non_claim() -> None:
    with pytest.raises(TypeError):
        volumerestrictions.is_schedulable_after_pvc_added(
            POD_WITH_ONE_PVC, ClusterEvent("PersistentVolumeClaim", "Add", new="not-a-pvc"))
