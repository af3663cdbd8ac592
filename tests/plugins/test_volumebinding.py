"""VolumeBinding's PreFilter and Filter, after upstream's ``volumebinding/volume_binding_test.go``
TestVolumeBinding, with its builders (``test_utils.go``: makeNode, makePV, makePVC, makePod).

Every case is ported for its PreFilter status and result and its Filter statuses. Not ported: the
cases' ``wantScores`` and ``wantPreScoreStatus`` (the storage-capacity Score is not implemented;
see ``plugins.volumebinding``), and ``wantStateAfterPreFilter`` as a structure (the state's
content shows in the Filter statuses). TestIsSchedulableAfterPersistentVolumeChange is not ported:
no queueing hint is registered (every registered event requeues).

Beyond upstream's table: binder_test.go-style cases for what its table leaves out (a provisioner,
allowedTopologies, CSIStorageCapacity, the selected-node fast path, a PV pre-bound to the claim,
two claims of the pod competing for one PV).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.framework import CycleState
from scheduler.framework.status import Code
from scheduler.model import Node, Pod, parse_node
from scheduler.plugins import volumebinding
from scheduler.plugins.volumebinding import VolumeBinding
from tests.plugins.volumes import Want, status, storage_class, store
from tests.wrappers import MakePod

SKIP: Want = (Code.SKIP, "")
HOSTNAME = "kubernetes.io/hostname"
BIND = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, volumebinding.ERR_REASON_BIND_CONFLICT)
CLASSES = [storage_class("immediate-sc", mode="Immediate"), storage_class("wait-sc", mode="WaitForFirstConsumer"),
           storage_class("wait-hdd-sc", mode="WaitForFirstConsumer")]


def make_node(name: str, **labels: str) -> Node:
    return parse_node({"metadata": {"name": name, "labels": {HOSTNAME: name, **labels}}})


def make_pv(name: str, class_name: str, *, phase: str = "", capacity: str | None = None,
            affinity: dict[str, list[str]] | None = None, claim: tuple[str, str] | None = None,
            provisioned: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"storageClassName": class_name, **(provisioned or {})}
    if capacity is not None:
        spec["capacity"] = {"storage": capacity}
    if affinity is not None:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": k, "operator": "In", "values": v} for k, v in affinity.items()]}]}}
    if claim is not None:
        spec["claimRef"] = {"namespace": claim[0], "name": claim[1]}
    return {"kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec, "status": {"phase": phase}}


def make_pvc(name: str, class_name: str, *, bound_pv: str = "", request: str | None = None, phase: str = "",
             annotations: dict[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "annotations": dict(annotations or {})}
    spec: dict[str, Any] = {"storageClassName": class_name}
    if bound_pv:    # withBoundPV: the volume name and the bind-completed annotation
        spec["volumeName"] = bound_pv
        meta["annotations"][volumebinding.ANN_BIND_COMPLETED] = "true"
    if request is not None:
        spec["resources"] = {"requests": {"storage": request}}
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec, "status": {"phase": phase}}


def make_pod(*claims: str) -> Pod:
    p = MakePod().Name("pod-a").Namespace("default")
    for c in claims:
        p.Volume({"name": "", "persistentVolumeClaim": {"claimName": c}})
    return p.Obj()


def run_all(plugin: VolumeBinding, pod: Pod, nodes: list[Node]) -> tuple[Want, frozenset[str] | None, list[Want]]:
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        result, pre = plugin.pre_filter(state, pod, snap)
        names = None if result is None else result.node_names
        if not pre.is_success():
            return status(pre), names, []
        v = plugin.filter_nodes(state, pod, snap, np.array([snap.row_of(n.name) for n in nodes], np.int64))
    return None, names, [status(v.statuses[0 if v.status_ids is None else int(v.status_ids[i])]) if v.failed[i]
                         else None for i in range(len(nodes))]


def unresolvable(*reasons: str) -> Want:
    return (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, ", ".join(reasons))


WAIT = "wait-sc"
HDD = "wait-hdd-sc"
LOCAL_PVS = [make_pv("pv-a-0", WAIT, phase="Available", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
             make_pv("pv-a-1", WAIT, phase="Available", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
             make_pv("pv-b-0", WAIT, phase="Available", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
             make_pv("pv-b-1", WAIT, phase="Available", capacity="100Gi", affinity={HOSTNAME: ["node-b"]})]
HDD_PVS = [make_pv("pv-a-2", HDD, phase="Available", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
           make_pv("pv-a-3", HDD, phase="Available", capacity="200Gi", affinity={HOSTNAME: ["node-a"]}),
           make_pv("pv-b-2", HDD, phase="Available", capacity="100Gi", affinity={HOSTNAME: ["node-b"]}),
           make_pv("pv-b-3", HDD, phase="Available", capacity="100Gi", affinity={HOSTNAME: ["node-b"]})]
REGION, ZONE = "topology.kubernetes.io/region", "topology.kubernetes.io/zone"
ZONAL_NODES = [make_node(f"zone-{z}-node-{n}", **{REGION: f"region-{z}", ZONE: f"zone-{z}"})
               for z in "abc" for n in "ab"]
ZONAL_PVS = [make_pv(f"pv-{z}-{i}", WAIT, phase="Available", capacity=cap,
                     affinity={REGION: [f"region-{z}"], ZONE: [f"zone-{z}"]})
             for z, cap in (("a", "200Gi"), ("b", "100Gi")) for i in range(2)]
ABC = [make_node("node-a"), make_node("node-b"), make_node("node-c")]

# (name, pod, nodes, pvcs, pvs, wantPreFilterStatus, wantPreFilterResult, wantFilterStatus)
TABLE: list[tuple[str, Pod, list[Node], list[dict[str, Any]], list[dict[str, Any]], Want, frozenset[str] | None,
                  list[Want]]] = [
    ("pod has not pvcs", make_pod(), [make_node("node-a")], [], [], SKIP, None, []),
    ("all bound", make_pod("pvc-a"), [make_node("node-a")], [make_pvc("pvc-a", WAIT, bound_pv="pv-a")],
     [make_pv("pv-a", WAIT, phase="Available")], None, None, [None]),
    ("all bound with local volumes", make_pod("pvc-a", "pvc-b"), [make_node("node-a")],
     [make_pvc("pvc-a", WAIT, bound_pv="pv-a"), make_pvc("pvc-b", WAIT, bound_pv="pv-b")],
     [make_pv("pv-a", WAIT, phase="Bound", affinity={HOSTNAME: ["node-a"]}),
      make_pv("pv-b", WAIT, phase="Bound", affinity={HOSTNAME: ["node-a"]})], None, frozenset({"node-a"}), [None]),
    ("PVC does not exist", make_pod("pvc-a"), [make_node("node-a")], [], [],
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None, []),
    ("Part of PVCs do not exist", make_pod("pvc-a", "pvc-b"), [make_node("node-a")],
     [make_pvc("pvc-a", WAIT, bound_pv="pv-a")], [], unresolvable('persistentvolumeclaim "pvc-b" not found'), None, []),
    ("immediate claims not bound", make_pod("pvc-a"), [make_node("node-a")], [make_pvc("pvc-a", "immediate-sc")], [],
     unresolvable(volumebinding.ERR_REASON_UNBOUND_IMMEDIATE), None, []),
    ("unbound claims no matches", make_pod("pvc-a"), [make_node("node-a")], [make_pvc("pvc-a", WAIT)], [], None, None,
     [BIND]),
    ("bound and unbound unsatisfied", make_pod("pvc-a", "pvc-b"), [make_node("node-a", foo="barbar")],
     [make_pvc("pvc-a", WAIT, bound_pv="pv-a"), make_pvc("pvc-b", WAIT)],
     [make_pv("pv-a", WAIT, phase="Available", affinity={"foo": ["bar"]})], None, None,
     [unresolvable(volumebinding.ERR_REASON_NODE_CONFLICT, volumebinding.ERR_REASON_BIND_CONFLICT)]),
    ("pvc not found", make_pod("pvc-a"), [make_node("node-a")], [], [],
     unresolvable('persistentvolumeclaim "pvc-a" not found'), None, []),
    ("pv not found", make_pod("pvc-a"), [make_node("node-a")], [make_pvc("pvc-a", WAIT, bound_pv="pv-a")], [], None,
     None, [unresolvable(volumebinding.ERR_REASON_PV_NOT_EXIST)]),
    ("pv not found claim lost", make_pod("pvc-a"), [make_node("node-a")],
     [make_pvc("pvc-a", WAIT, bound_pv="pv-a", phase="Lost")], [],
     unresolvable('persistentvolumeclaim "pvc-a" bound to non-existent persistentvolume "pv-a"'), None, []),
    ("local volumes with close capacity are preferred", make_pod("pvc-a"), ABC,
     [make_pvc("pvc-a", WAIT, request="50Gi")], LOCAL_PVS, None, None, [None, None, BIND]),
    ("local volumes with close capacity are preferred (multiple pvcs)", make_pod("pvc-0", "pvc-1"), ABC,
     [make_pvc("pvc-0", WAIT, request="50Gi"), make_pvc("pvc-1", HDD, request="100Gi")], LOCAL_PVS + HDD_PVS,
     None, None, [None, None, BIND]),
    ("zonal volumes with close capacity are preferred", make_pod("pvc-a"), ZONAL_NODES,
     [make_pvc("pvc-a", WAIT, request="50Gi")], ZONAL_PVS, None, None, [None, None, None, None, BIND, BIND]),
    ("zonal volumes with close capacity are preferred (custom shape)", make_pod("pvc-a"), ZONAL_NODES,
     [make_pvc("pvc-a", WAIT, request="50Gi")], ZONAL_PVS, None, None, [None, None, None, None, BIND, BIND]),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "pvcs", "pvs", "want_pre", "want_result", "want"), TABLE,
                         ids=[c[0] for c in TABLE])
def test_volume_binding(name: str, pod: Pod, nodes: list[Node], pvcs: list[dict[str, Any]],
                        pvs: list[dict[str, Any]], want_pre: Want, want_result: frozenset[str] | None,
                        want: list[Want]) -> None:
    got_pre, got_result, got = run_all(VolumeBinding(store(*CLASSES, *pvcs, *pvs)), pod, nodes)
    assert got_pre == want_pre
    assert got_result == want_result
    if want_pre is None:
        assert got == want


# --- beyond upstream's table -----------------------------------------------------------------------
def test_provisioner_and_allowed_topologies() -> None:
    sc = {"kind": "StorageClass", "metadata": {"name": "zonal"}, "provisioner": "ebs.csi.aws.com",
          "volumeBindingMode": "WaitForFirstConsumer",
          "allowedTopologies": [{"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a"]}]}]}
    plugin = VolumeBinding(store(sc, make_pvc("data", "zonal", request="1Gi")))
    _, _, got = run_all(plugin, make_pod("data"), ZONAL_NODES[:4])
    assert got == [None, None, BIND, BIND]


def test_storage_capacity() -> None:
    sc = storage_class("fast", "csi.example.com", mode="WaitForFirstConsumer")
    driver = {"kind": "CSIDriver", "metadata": {"name": "csi.example.com"}, "spec": {"storageCapacity": True}}
    cap = {"kind": "CSIStorageCapacity", "metadata": {"name": "cap-a", "namespace": "kube-system"},
           "storageClassName": "fast", "capacity": "10Gi",
           "nodeTopology": {"matchLabels": {ZONE: "zone-a"}}}
    plugin = VolumeBinding(store(sc, driver, cap, make_pvc("small", "fast", request="5Gi"),
                                 make_pvc("big", "fast", request="50Gi")))
    nodes = ZONAL_NODES[::2]     # one node per zone
    assert run_all(plugin, make_pod("small"), nodes)[2] == [None, *[unresolvable(
        volumebinding.ERR_REASON_NOT_ENOUGH_SPACE)] * 2]
    assert run_all(plugin, make_pod("big"), nodes)[2] == [unresolvable(volumebinding.ERR_REASON_NOT_ENOUGH_SPACE)] * 3


def test_selected_node_fast_path() -> None:
    sc = storage_class("dyn", "csi.example.com", mode="WaitForFirstConsumer")
    pvc = make_pvc("data", "dyn", annotations={"volume.kubernetes.io/selected-node": "node-b"})
    _, _, got = run_all(VolumeBinding(store(sc, pvc)), make_pod("data"), ABC)
    assert got == [BIND, None, BIND]


def test_pv_prebound_to_the_claim_wins_or_fails_the_node() -> None:
    pvs = [make_pv("pre", WAIT, phase="Available", capacity="1Gi", affinity={HOSTNAME: ["node-a"]},
                   claim=("default", "data")),
           make_pv("any", WAIT, phase="Available", capacity="1Gi")]
    _, _, got = run_all(VolumeBinding(store(*CLASSES, make_pvc("data", WAIT, request="1Gi"), *pvs)),
                        make_pod("data"), ABC)
    assert got == [None, BIND, BIND]   # "any" would fit node-b and node-c, but the pre-bound PV decides


def test_two_claims_do_not_share_one_pv() -> None:
    pvs = [make_pv("only-on-a", WAIT, phase="Available", capacity="10Gi", affinity={HOSTNAME: ["node-a"]})]
    claims = [make_pvc("c1", WAIT, request="1Gi"), make_pvc("c2", WAIT, request="2Gi")]
    _, _, got = run_all(VolumeBinding(store(*CLASSES, *claims, *pvs)), make_pod("c1"), ABC[:1])
    assert got == [None]
    _, _, got = run_all(VolumeBinding(store(*CLASSES, *claims, *pvs)), make_pod("c1", "c2"), ABC[:1])
    assert got == [BIND]     # c2 finds no other PV, and wait-sc cannot provision


def test_claim_without_class_to_provision_is_an_error() -> None:
    """checkVolumeProvisions: 'failed to find storage class' is an error (the class vanished after
    PreFilter classified the claim)."""
    plugin = VolumeBinding(store(*CLASSES, make_pvc("data", WAIT)))
    cache = Cache()
    cache.add_node(make_node("node-a"))
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, make_pod("data"), snap)
        plugin._volumes.delete("StorageClass", "", WAIT)
        v = plugin.filter_nodes(state, make_pod("data"), snap, np.array([0], np.int64))
    assert v.failed.tolist() == [True]
    assert status(v.statuses[0]) == (Code.ERROR, 'failed to find storage class "wait-sc"')
