"""VolumeBinding's PreFilter, Filter, Score, args and queueing hints, after upstream's ``volumebinding/volume_binding_test.go``
TestVolumeBinding, with its builders (``test_utils.go``: makeNode, makePV, makePVC, makePod), and
``binder_test.go`` TestFindPodVolumesWithoutProvisioning, TestFindPodVolumesWithProvisioning and TestCapacity
(every scenario, under each of the three CSIDriver variants, through ``find_pod_volumes``).

Every case is ported for its PreFilter status and result and its Filter statuses, and the score
cases for their ``wantScores`` (below: the copy read predates StorageCapacityScoring and scored
with the shape {0: 0}, {100: 10}, which each case passes explicitly; the static-binding Score has
not changed since). ``wantStateAfterPreFilter`` is not ported as a structure (the state's content
shows in the Filter statuses); ``wantPreScoreStatus``: see ``test_pre_score_skips_with_nothing_to_score``.

Also here: ``validation_pluginargs_test.go`` TestValidateVolumeBindingArgs
and ``defaults_test.go`` TestPluginArgsDefaults' VolumeBindingArgs cases; the queueing hints of
``volume_binding.go`` (EventsToRegister with hints; the hint tables are ours, one case per branch:
the upstream hint tables at hand were of other versions of those functions). PreBind is in
``test_binder.py``, ``scorer_test.go`` in ``test_scorer.py``.

Not ported from binder_test.go: TestFindPodVolumesWithCSIMigration (the in-tree PV translation is
not implemented).

Beyond upstream's tables: cases for what they leave out (a provisioner,
allowedTopologies, CSIStorageCapacity, the selected-node fast path, a PV pre-bound to the claim,
two claims of the pod competing for one PV).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pydantic_core
import pytest

from scheduler.cache import Cache
from scheduler.framework import CycleState
from scheduler.framework.status import Code
from scheduler.model import Node, Pod, parse_node
from scheduler.plugins import volumebinding
from scheduler.plugins.volumebinding import VolumeBinding
from tests.plugins.volumes import Want, status, storage_class, store
from tests.st import MakePod

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


# --- binder_test.go TestFindPodVolumesWithoutProvisioning / WithProvisioning -----------------------
# Upstream's fixtures: namespace testns, node node1 labelled nodeKey=node1, PVs with node affinity on
# nodeKey, classes waitClass (no-provisioner), immediateClass, waitClassWithProvisioner (allowed
# topology nodeKey in [node1, reference-value]) and topoMismatchClass (reference-value only).
# ``shouldFail`` (an error from GetPodVolumeClaims or FindPodVolumes) is here a PreFilter that does
# not succeed, or an Error status from Filter: where upstream's helper errors, our PreFilter rejects.
NODE_KEY, PROVISIONER = "nodeKey", "test-provisioner"
BINDER_CLASSES = [
    {"kind": "StorageClass", "metadata": {"name": "waitClassWithProvisioner"}, "provisioner": PROVISIONER,
     "volumeBindingMode": "WaitForFirstConsumer",
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["node1", "reference-value"]}]}]},
    {"kind": "StorageClass", "metadata": {"name": "immediateClass"}, "volumeBindingMode": "Immediate"},
    {"kind": "StorageClass", "metadata": {"name": "waitClass"}, "provisioner": "kubernetes.io/no-provisioner",
     "volumeBindingMode": "WaitForFirstConsumer"},
    {"kind": "StorageClass", "metadata": {"name": "topoMismatchClass"}, "provisioner": PROVISIONER,
     "volumeBindingMode": "WaitForFirstConsumer",
     "allowedTopologies": [{"matchLabelExpressions": [{"key": NODE_KEY, "values": ["reference-value"]}]}]},
]
UNBOUND, PREBOUND, BOUND, SELECTED = range(4)
POD_UID = "test-pod-uid"   # upstream's test pod has no uid, nor has its claim's owner reference; ours must


def make_test_pvc(name: str, size: str, node: str, state: int, pv_name: str, class_name: str,
                  owner_uid: str = "") -> dict[str, Any]:
    """makeTestPVC (the resource version is not modelled)."""
    meta: dict[str, Any] = {"name": name, "namespace": "testns", "uid": "pvc-uid", "annotations": {}}
    if owner_uid:
        meta["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": "test-pod", "uid": owner_uid,
                                    "controller": True}]
    spec: dict[str, Any] = {"resources": {"requests": {"storage": size}}, "storageClassName": class_name,
                            "volumeMode": "Filesystem"}
    if state == SELECTED:
        meta["annotations"]["volume.kubernetes.io/selected-node"] = node
    if state == BOUND:
        meta["annotations"][volumebinding.ANN_BIND_COMPLETED] = "yes"
    if state in (BOUND, PREBOUND):
        spec["volumeName"] = pv_name
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def make_test_pv(name: str, node: str, capacity: str, bound_to: dict[str, Any] | None, class_name: str
                 ) -> dict[str, Any]:
    """makeTestPV."""
    spec: dict[str, Any] = {"capacity": {"storage": capacity}, "storageClassName": class_name,
                            "volumeMode": "Filesystem"}
    if node:
        spec["nodeAffinity"] = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": NODE_KEY, "operator": "In", "values": [node]}]}]}}
    if bound_to is not None:
        m = bound_to["metadata"]
        spec["claimRef"] = {"name": m["name"], "namespace": m["namespace"], "uid": m["uid"]}
    return {"kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec, "status": {"phase": "Available"}}


unbound_pvc = make_test_pvc("unbound-pvc", "1G", "", UNBOUND, "", "waitClass")
unbound_pvc2 = make_test_pvc("unbound-pvc2", "5G", "", UNBOUND, "", "waitClass")
prebound_pvc = make_test_pvc("prebound-pvc", "1G", "", PREBOUND, "pv-node1a", "waitClass")
bound_pvc = make_test_pvc("bound-pvc", "1G", "", BOUND, "pv-bound", "waitClass")
immediate_unbound_pvc = make_test_pvc("immediate-unbound-pvc", "1G", "", UNBOUND, "", "immediateClass")
immediate_bound_pvc = make_test_pvc("immediate-bound-pvc", "1G", "", BOUND, "pv-bound-immediate", "immediateClass")
provisioned_pvc = make_test_pvc("provisioned-pvc", "1Gi", "", UNBOUND, "", "waitClassWithProvisioner")
no_provisioner_pvc = make_test_pvc("no-provisioner-pvc", "1Gi", "", UNBOUND, "", "waitClass")
topo_mismatch_pvc = make_test_pvc("topo-mismatch-pvc", "1Gi", "", UNBOUND, "", "topoMismatchClass")
selected_node_pvc = make_test_pvc("provisioned-pvc", "1Gi", "node1", SELECTED, "", "waitClassWithProvisioner")
conflicting_generic_pvc = make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "immediateClass")
correct_generic_pvc = make_test_pvc("test-pod-test-volume", "1G", "", BOUND, "pv-bound", "immediateClass",
                                    owner_uid=POD_UID)
pv_bound_generic = make_test_pv("pv-bound", "node1", "1G", correct_generic_pvc, "waitClass")
pv_node1a = make_test_pv("pv-node1a", "node1", "5G", None, "waitClass")
pv_node1b = make_test_pv("pv-node1b", "node1", "10G", None, "waitClass")
pv_node2 = make_test_pv("pv-node2", "node2", "1G", None, "waitClass")
pv_bound = make_test_pv("pv-bound", "node1", "1G", bound_pvc, "waitClass")
pv_node1a_bound = make_test_pv("pv-node1a", "node1", "5G", unbound_pvc, "waitClass")
pv_bound_immediate = make_test_pv("pv-bound-immediate", "node1", "1G", immediate_bound_pvc, "immediateClass")
pv_bound_immediate_node2 = make_test_pv("pv-bound-immediate", "node2", "1G", immediate_bound_pvc, "immediateClass")
TEST_NODE = parse_node({"metadata": {"name": "node1", "labels": {NODE_KEY: "node1"}}})


def binder_pod(claims: list[dict[str, Any]] | None = None, *, empty_dir: bool = False,
               ephemeral: str | None = None) -> Pod:
    """makePod("test-pod").withNamespace("testns").withNodeName("node1").withPVCSVolume(...)."""
    p = MakePod().Name("test-pod").Namespace("testns").UID(POD_UID)
    for i, c in enumerate(claims or []):
        p.Volume({"name": f"vol{i}", "persistentVolumeClaim": {"claimName": c["metadata"]["name"]}})
    if empty_dir:
        p.Volume({"name": "", "emptyDir": {}})
    if ephemeral is not None:
        p.Volume({"name": ephemeral, "ephemeral": {}})
    return p.Obj()


def find_pod_volumes(objects: list[dict[str, Any]], pod: Pod) -> tuple[bool, Any]:
    """(failed, PodVolumes): upstream's findPodVolumes helper on TEST_NODE."""
    plugin = VolumeBinding(store(*BINDER_CLASSES, *objects))
    cache = Cache()
    cache.add_node(TEST_NODE)
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        _, pre = plugin.pre_filter(state, pod, snap)
        if pre.is_skip():
            return False, volumebinding.PodVolumes()
        if not pre.is_success():
            return True, None
        got = plugin.find_pod_volumes(state, pod, snap, 0)
    return got.status.code == Code.ERROR, got


def reasons_of(got: Any) -> list[str]:
    return [] if got is None or got.status.is_success() else sorted(got.status.reasons)


# name: (pvs, podPVCs, cachePVCs (None: podPVCs), pod (None: from podPVCs), expectedBindings, reasons, shouldFail)
WITHOUT_PROVISIONING: dict[str, tuple[Any, ...]] = {
    "no-volumes": ([], [], None, binder_pod(), [], [], False),
    "no-pvcs": ([], [], None, binder_pod(empty_dir=True), [], [], False),
    "pvc-not-found": ([], [bound_pvc], [], None, [], [], True),
    "bound-pvc": ([pv_bound], [bound_pvc], None, None, [], [], False),
    "bound-pvc,pv-not-exists": ([], [bound_pvc], None, None, [], [volumebinding.ERR_REASON_PV_NOT_EXIST], False),
    "prebound-pvc": ([pv_node1a_bound], [prebound_pvc], None, None, [], [], True),
    "unbound-pvc,pv-same-node": ([pv_node2, pv_node1a, pv_node1b], [unbound_pvc], None, None,
                                 [("unbound-pvc", "pv-node1a")], [], False),
    "unbound-pvc,pv-different-node": ([pv_node2], [unbound_pvc], None, None, [],
                                      [volumebinding.ERR_REASON_BIND_CONFLICT], False),
    "two-unbound-pvcs": ([pv_node1a, pv_node1b], [unbound_pvc, unbound_pvc2], None, None,
                         [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], False),
    "two-unbound-pvcs,order-by-size": ([pv_node1a, pv_node1b], [unbound_pvc2, unbound_pvc], None, None,
                                       [("unbound-pvc", "pv-node1a"), ("unbound-pvc2", "pv-node1b")], [], False),
    "two-unbound-pvcs,partial-match": ([pv_node1a], [unbound_pvc, unbound_pvc2], None, None,
                                       [("unbound-pvc", "pv-node1a")],
                                       [volumebinding.ERR_REASON_BIND_CONFLICT], False),
    "one-bound,one-unbound": ([pv_bound, pv_node1a], [unbound_pvc, bound_pvc], None, None,
                              [("unbound-pvc", "pv-node1a")], [], False),
    "one-bound,one-unbound,no-match": ([pv_bound, pv_node2], [unbound_pvc, bound_pvc], None, None, [],
                                       [volumebinding.ERR_REASON_BIND_CONFLICT], False),
    "one-prebound,one-unbound": ([pv_node1a, pv_node1b], [unbound_pvc, prebound_pvc], None, None, [], [], True),
    "immediate-bound-pvc": ([pv_bound_immediate], [immediate_bound_pvc], None, None, [], [], False),
    "immediate-bound-pvc-wrong-node": ([pv_bound_immediate_node2], [immediate_bound_pvc], None, None, [],
                                       [volumebinding.ERR_REASON_NODE_CONFLICT], False),
    "immediate-unbound-pvc": ([], [immediate_unbound_pvc], None, None, [], [], True),
    "immediate-unbound-pvc,delayed-mode-bound": ([pv_bound], [immediate_unbound_pvc, bound_pvc], None, None, [], [],
                                                 True),
    "immediate-unbound-pvc,delayed-mode-unbound": ([], [immediate_unbound_pvc, unbound_pvc], None, None, [], [], True),
    "generic-ephemeral,no-pvc": ([], [], None, binder_pod(ephemeral="no-such-pvc"), [], [], True),
    "generic-ephemeral,with-pvc": ([pv_bound_generic], [], [correct_generic_pvc],
                                   binder_pod(ephemeral="test-volume"), [], [], False),
    "generic-ephemeral,wrong-pvc": ([pv_bound_generic], [], [conflicting_generic_pvc],
                                    binder_pod(ephemeral="test-volume"), [], [], True),
}
CSI_DRIVERS = {"no CSIDriver": None,
               "CSIDriver with capacity tracking": True,
               "CSIDriver without capacity tracking": False}


def csi_driver(capacity: bool | None) -> list[dict[str, Any]]:
    """makeCSIDriver(provisioner, storageCapacity)."""
    return [] if capacity is None else [{"kind": "CSIDriver", "metadata": {"name": PROVISIONER},
                                         "spec": {"storageCapacity": capacity}}]


@pytest.mark.parametrize("driver", list(CSI_DRIVERS))
@pytest.mark.parametrize("name", list(WITHOUT_PROVISIONING))
def test_find_pod_volumes_without_provisioning(driver: str, name: str) -> None:
    pvs, pod_pvcs, cache_pvcs, pod, bindings, reasons, should_fail = WITHOUT_PROVISIONING[name]
    claims = pod_pvcs if cache_pvcs is None else cache_pvcs
    failed, got = find_pod_volumes([*pvs, *claims, *csi_driver(CSI_DRIVERS[driver])],
                                   pod if pod is not None else binder_pod(pod_pvcs))
    assert failed == should_fail
    if not should_fail:
        assert reasons_of(got) == sorted(reasons)
        assert got.static_bindings == bindings


# name: (pvs, podPVCs, expectedBindings, expectedProvisions, reasons, shouldFail, needsCapacity)
WITH_PROVISIONING: dict[str, tuple[Any, ...]] = {
    "one-provisioned": ([], [provisioned_pvc], [], ["provisioned-pvc"], [], False, True),
    "two-unbound-pvcs,one-matched,one-provisioned": ([pv_node1a], [unbound_pvc, provisioned_pvc],
                                                     [("unbound-pvc", "pv-node1a")], ["provisioned-pvc"], [], False,
                                                     True),
    "one-bound,one-provisioned": ([pv_bound], [bound_pvc, provisioned_pvc], [], ["provisioned-pvc"], [], False, True),
    "one-binding,one-selected-node": ([pv_bound], [bound_pvc, selected_node_pvc], [], ["provisioned-pvc"], [], False,
                                      True),
    "immediate-unbound-pvc": ([], [immediate_unbound_pvc], [], [], [], True, False),
    "one-immediate-bound,one-provisioned": ([pv_bound_immediate], [immediate_bound_pvc, provisioned_pvc], [],
                                            ["provisioned-pvc"], [], False, True),
    "invalid-provisioner": ([], [no_provisioner_pvc], [], [], [volumebinding.ERR_REASON_BIND_CONFLICT], False, False),
    "volume-topology-unsatisfied": ([], [topo_mismatch_pvc], [], [], [volumebinding.ERR_REASON_BIND_CONFLICT], False,
                                    False),
}


@pytest.mark.parametrize("driver", list(CSI_DRIVERS))
@pytest.mark.parametrize("name", list(WITH_PROVISIONING))
def test_find_pod_volumes_with_provisioning(driver: str, name: str) -> None:
    pvs, pod_pvcs, bindings, provisions, reasons, should_fail, needs_capacity = WITH_PROVISIONING[name]
    capacity = CSI_DRIVERS[driver]
    failed, got = find_pod_volumes([*pvs, *pod_pvcs, *csi_driver(capacity)], binder_pod(pod_pvcs))
    assert failed == should_fail
    if should_fail:
        return
    want_reasons = list(reasons)
    if needs_capacity and capacity:
        # Without CSIStorageCapacity objects, provisioning is blocked.
        want_reasons.append(volumebinding.ERR_REASON_NOT_ENOUGH_SPACE)
        provisions = []
    assert reasons_of(got) == sorted(want_reasons)
    if not want_reasons:
        assert got.static_bindings == bindings
        assert got.dynamic_provisions == provisions


# --- binder_test.go TestCapacity (the chosen capacity object, DynamicProvision.NodeCapacity, is not
# recorded by find_pod_volumes: the scorer that reads it is not implemented) -----------------------
def make_capacity(class_name: str, node: str | None, capacity: str, maximum: str) -> dict[str, Any]:
    """makeCapacity("net", class, node, capacity, maximumVolumeSize): an empty nodeTopology (every
    node) unless ``node`` is given."""
    body: dict[str, Any] = {"kind": "CSIStorageCapacity", "metadata": {"name": "net", "namespace": "testns"},
                            "storageClassName": class_name,
                            "nodeTopology": {"matchLabels": {NODE_KEY: node}} if node else {}}
    if capacity:
        body["capacity"] = capacity
    if maximum:
        body["maximumVolumeSize"] = maximum
    return body


WCP = "waitClassWithProvisioner"
NO_SPACE = [volumebinding.ERR_REASON_NOT_ENOUGH_SPACE]
CAPACITY: dict[str, tuple[list[dict[str, Any]], list[str]]] = {
    "network-attached": ([make_capacity(WCP, None, "1Gi", "")], []),
    "local-storage": ([make_capacity(WCP, "node1", "1Gi", "")], []),
    "multiple": ([make_capacity(WCP, None, "1Gi", ""), make_capacity(WCP, "node2", "1Gi", ""),
                  make_capacity(WCP, "node1", "1Gi", "")], []),
    "no-storage": ([], NO_SPACE),
    "wrong-node": ([make_capacity(WCP, "node2", "1Gi", "")], NO_SPACE),
    "wrong-storage-class": ([make_capacity("waitClass", "node1", "1Gi", "")], NO_SPACE),
    "insufficient-storage": ([make_capacity(WCP, "node1", "1Mi", "")], NO_SPACE),
    "insufficient-volume-size": ([make_capacity(WCP, "node1", "1Gi", "1Mi")], NO_SPACE),
    "zero-storage": ([make_capacity(WCP, "node1", "0Mi", "")], NO_SPACE),
    "zero-volume-size": ([make_capacity(WCP, "node1", "", "0Mi")], NO_SPACE),
    "nil-storage": ([make_capacity(WCP, "node1", "", "")], NO_SPACE),
}


@pytest.mark.parametrize("opt_in", [True, False], ids=["CSIDriver.StorageCapacity=true",
                                                       "CSIDriver.StorageCapacity=false"])
@pytest.mark.parametrize("name", list(CAPACITY))
def test_capacity(opt_in: bool, name: str) -> None:
    capacities, reasons = CAPACITY[name]
    # Several capacity objects share upstream's name "net"; the store keys them by name, so they
    # get distinct names here.
    capacities = [{**c, "metadata": {**c["metadata"], "name": f"net-{i}"}} for i, c in enumerate(capacities)]
    failed, got = find_pod_volumes([provisioned_pvc, *csi_driver(opt_in), *capacities], binder_pod([provisioned_pvc]))
    assert not failed
    want = reasons if opt_in else []
    assert reasons_of(got) == want
    if not want:
        assert got.dynamic_provisions == ["provisioned-pvc"]


# --- Reserve / Unreserve (binder_test.go TestAssumePodVolumes' all-bound and one-binding, and
# TestFindAssumeVolumes: after the assumption, finding again keeps the chosen PV) ----------------
def reserve_on_node1(plugin: VolumeBinding, pod: Pod) -> tuple[CycleState, Any]:
    cache = Cache()
    cache.add_node(TEST_NODE)
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, pod, snap)
        s = plugin.reserve(state, pod, "node1")
    assert s.is_success(), s
    return state, VolumeBinding.reserved(state)


def test_assume_all_bound() -> None:
    plugin = VolumeBinding(store(*BINDER_CLASSES, bound_pvc, pv_bound))
    _, reserved = reserve_on_node1(plugin, binder_pod([bound_pvc]))
    assert reserved.all_bound and reserved.assumed == []


def test_assume_one_binding_then_find_again_and_unreserve() -> None:
    volumes = store(*BINDER_CLASSES, unbound_pvc, pv_node2, pv_node1a, make_test_pv("pv-node1c", "node1", "5G", None,
                                                                                   "waitClass"))
    plugin = VolumeBinding(volumes)
    pod = binder_pod([unbound_pvc])
    state, reserved = reserve_on_node1(plugin, pod)
    assert not reserved.all_bound and [o.name for o in reserved.assumed] == ["pv-node1a"]
    pv = volumes.pv("pv-node1a")
    assert pv is not None and pv.claim_ref == ("testns", "unbound-pvc", "pvc-uid") and volumes.is_assumed(pv)
    for _ in range(5):   # TestFindAssumeVolumes: the assumed PV is found again, bound to its claim
        cache = Cache()
        cache.add_node(TEST_NODE)
        with cache.lock:
            snap = cache.snapshot()
            st = CycleState()
            plugin.pre_filter(st, pod, snap)
            got = plugin.find_pod_volumes(st, pod, snap, 0)
        assert got.status.is_success() and got.static_bindings == [("unbound-pvc", "pv-node1a")]
    plugin.unreserve(state, pod, "node1")
    pv = volumes.pv("pv-node1a")
    assert pv is not None and pv.claim_ref is None and not volumes.is_assumed(pv)


def test_an_assumed_pv_is_not_handed_to_another_claim() -> None:
    other = make_test_pvc("other-pvc", "1G", "", UNBOUND, "", "waitClass")
    volumes = store(*BINDER_CLASSES, unbound_pvc, other, pv_node1a)
    plugin = VolumeBinding(volumes)
    reserve_on_node1(plugin, binder_pod([unbound_pvc]))
    cache = Cache()
    cache.add_node(TEST_NODE)
    with cache.lock:
        snap = cache.snapshot()
        st = CycleState()
        pod2 = MakePod().Name("pod2").Namespace("testns").Volume(
            {"name": "v", "persistentVolumeClaim": {"claimName": "other-pvc"}}).Obj()
        plugin.pre_filter(st, pod2, snap)
        got = plugin.find_pod_volumes(st, pod2, snap, 0)
    assert reasons_of(got) == [volumebinding.ERR_REASON_BIND_CONFLICT]


def test_assume_provision_annotates_the_claim_and_a_watch_event_replaces_it() -> None:
    volumes = store(*BINDER_CLASSES, provisioned_pvc)
    plugin = VolumeBinding(volumes)
    _, reserved = reserve_on_node1(plugin, binder_pod([provisioned_pvc]))
    claim = volumes.pvc("testns", "provisioned-pvc")
    assert claim is not None and claim.annotations["volume.kubernetes.io/selected-node"] == "node1"
    assert [o.name for o in reserved.assumed] == ["provisioned-pvc"]
    volumes.on_event("PersistentVolumeClaim", "MODIFIED", provisioned_pvc)   # the informer's newer object
    claim = volumes.pvc("testns", "provisioned-pvc")
    assert claim is not None and "volume.kubernetes.io/selected-node" not in claim.annotations
    assert not volumes.is_assumed(claim)


# --- PreScore / Score --------------------------------------------------------------------------------
def shaped(*points: tuple[int, int]) -> Any:
    from scheduler.plugins.args import VolumeBindingArgs
    return VolumeBindingArgs.model_validate({"shape": [{"utilization": u, "score": s} for u, s in points]})


def score_all(plugin: VolumeBinding, pod: Pod, nodes: list[Node]) -> tuple[Code | None, list[int]]:
    """PreFilter, Filter, then PreScore and Score over the feasible nodes; (PreScore's code, or None
    for Success, and a score per node, 0 for a node Filter rejected, as upstream's table reads it)."""
    cache = Cache()
    for n in nodes:
        cache.add_node(n)
    with cache.lock:
        snap = cache.snapshot()
        state = CycleState()
        plugin.pre_filter(state, pod, snap)
        rows = np.array([snap.row_of(n.name) for n in nodes], np.int64)
        v = plugin.filter_nodes(state, pod, snap, rows)
        feasible = rows[~v.failed]
        ps = plugin.pre_score(state, pod, snap, feasible)
        out = [0] * len(nodes)
        if ps.is_success():
            got = plugin.score_nodes(state, pod, snap, feasible)
            for r, sc in zip(feasible.tolist(), got.tolist(), strict=True):
                out[rows.tolist().index(r)] = sc
    return (None if ps.is_success() else ps.code), out


# volume_binding_test.go TestVolumeBinding, the score cases: their wantScores are those of the copy
# read (@645c553f, the VolumeCapacityPriority era), whose default shape was {0: 0}, {100: 10}; the
# Score of static bindings is unchanged since, so each case runs with its table's shape given.
OLD_DEFAULT_SHAPE = ((0, 0), (100, 10))
SCORE_CASES = [
    ("local volumes with close capacity are preferred", make_pod("pvc-a"), ABC,
     [make_pvc("pvc-a", WAIT, request="50Gi")], LOCAL_PVS, OLD_DEFAULT_SHAPE, [25, 50, 0]),
    ("local volumes with close capacity are preferred (multiple pvcs)", make_pod("pvc-0", "pvc-1"), ABC,
     [make_pvc("pvc-0", WAIT, request="50Gi"), make_pvc("pvc-1", HDD, request="100Gi")], LOCAL_PVS + HDD_PVS,
     OLD_DEFAULT_SHAPE, [38, 75, 0]),
    ("zonal volumes with close capacity are preferred", make_pod("pvc-a"), ZONAL_NODES,
     [make_pvc("pvc-a", WAIT, request="50Gi")], ZONAL_PVS, OLD_DEFAULT_SHAPE, [25, 25, 50, 50, 0, 0]),
    ("zonal volumes with close capacity are preferred (custom shape)", make_pod("pvc-a"), ZONAL_NODES,
     [make_pvc("pvc-a", WAIT, request="50Gi")], ZONAL_PVS, ((0, 0), (50, 3), (100, 5)), [15, 15, 30, 30, 0, 0]),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "pvcs", "pvs", "shape", "want"), SCORE_CASES,
                         ids=[c[0] for c in SCORE_CASES])
def test_volume_binding_scores(name: str, pod: Pod, nodes: list[Node], pvcs: list[dict[str, Any]],
                               pvs: list[dict[str, Any]], shape: tuple[tuple[int, int], ...], want: list[int]) -> None:
    plugin = VolumeBinding(store(*CLASSES, *pvcs, *pvs), shaped(*shape), storage_capacity_scoring=True)
    assert score_all(plugin, pod, nodes) == (None, want)


def test_default_shape_prefers_the_emptiest() -> None:
    """With the gate's default shape ({0: 10}, {100: 0}) the same table ranks the other way round."""
    plugin = VolumeBinding(store(*CLASSES, make_pvc("pvc-a", WAIT, request="50Gi"), *LOCAL_PVS))
    assert plugin.storage_capacity_scoring
    assert score_all(plugin, make_pod("pvc-a"), ABC) == (None, [75, 50, 0])


@pytest.mark.parametrize("name", ["pod has not pvcs", "all bound", "unbound claims no matches"])
def test_pre_score_skips_with_nothing_to_score(name: str) -> None:
    """A pod without claims, or whose claims are all bound, scores 0 on every node: PreScore skips
    (upstream's PreScore returns Success with the gate on and every Score is 0; no total differs)."""
    case = next(c for c in TABLE if c[0] == name)
    _, pod, nodes, pvcs, pvs = case[:5]
    code, scores = score_all(VolumeBinding(store(*CLASSES, *pvcs, *pvs)), pod, nodes)
    assert scores == [0] * len(nodes)
    if name != "unbound claims no matches":     # that one has a delayed claim, and no feasible node
        assert code == Code.SKIP


def test_gate_off_pre_score_skips() -> None:
    """StorageCapacityScoring off (its default through 1.36): no scorer, PreScore is Skip."""
    plugin = VolumeBinding(store(*CLASSES, make_pvc("pvc-a", WAIT, request="50Gi"), *LOCAL_PVS),
                           storage_capacity_scoring=False)
    assert score_all(plugin, make_pod("pvc-a"), ABC) == (Code.SKIP, [0, 0, 0])


def test_the_gate_follows_feature_gates() -> None:
    """run --feature-gates StorageCapacityScoring=false reaches the plugin through the Handle, and its
    args are validated with the gate off (a shape is then refused, as upstream's validation does)."""
    from scheduler.errors import ProfileError
    from scheduler.framework.handle import Handle
    from scheduler.plugins.registry import Registry
    from scheduler.profiles.compile import compile_profile, parse_spec
    off = Handle(feature_gates={"StorageCapacityScoring": False})
    fwk = compile_profile(parse_spec({"schedulerName": "s"}), registry=Registry(), handle=off)
    assert fwk.plugins_by_name["VolumeBinding"].storage_capacity_scoring is False  # type: ignore[attr-defined]
    on = compile_profile(parse_spec({"schedulerName": "s"}), registry=Registry(), handle=Handle())
    assert on.plugins_by_name["VolumeBinding"].storage_capacity_scoring is True  # type: ignore[attr-defined]
    shaped_spec = parse_spec({"schedulerName": "s", "pluginConfig": [
        {"name": "VolumeBinding", "args": {"shape": [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]}}]})
    with pytest.raises(ProfileError):
        compile_profile(shaped_spec, registry=Registry(), handle=off)
    compile_profile(shaped_spec, registry=Registry(), handle=Handle())


CAP_DRIVER = "csi.example.com"


def capacity_objects(*caps: tuple[str, str, str]) -> list[dict[str, Any]]:
    """A CSIDriver with storageCapacity, class "fast" of it, and (name, zone, capacity) objects."""
    return [storage_class("fast", CAP_DRIVER, mode="WaitForFirstConsumer"),
            {"kind": "CSIDriver", "metadata": {"name": CAP_DRIVER}, "spec": {"storageCapacity": True}},
            *[{"kind": "CSIStorageCapacity", "metadata": {"name": n, "namespace": "kube-system"},
               "storageClassName": "fast", "capacity": c, "nodeTopology": {"matchLabels": {ZONE: z}}}
              for n, z, c in caps]]


def test_dynamic_provisioning_scores_by_storage_capacity() -> None:
    """KEP-4049: with no static binding, a claim to provision scores with the capacity of the
    CSIStorageCapacity Filter found for the node (default shape: the emptiest wins)."""
    objs = capacity_objects(("cap-a", "zone-a", "100Gi"), ("cap-b", "zone-b", "200Gi"), ("cap-c", "zone-c", "40Gi"))
    plugin = VolumeBinding(store(*objs, make_pvc("data", "fast", request="50Gi")))
    nodes = ZONAL_NODES[::2]
    # zone-a 50/100 -> 50; zone-b 50/200 = 25% -> 75; zone-c 40Gi is too small: Filter rejects it.
    assert score_all(plugin, make_pod("data"), nodes) == (None, [50, 75, 0])
    # The custom shape of the table above, on the same nodes.
    plugin = VolumeBinding(store(*objs, make_pvc("data", "fast", request="50Gi")),
                           shaped((0, 0), (50, 3), (100, 5)))
    assert score_all(plugin, make_pod("data"), nodes) == (None, [30, 15, 0])


def test_dynamic_claims_of_one_class_share_the_capacity() -> None:
    """Two claims of one class on a node: requests add up, the capacity is the node's (upstream
    assigns it, it does not add it: two 50Gi claims on 100Gi are full, not half full)."""
    objs = capacity_objects(("cap-a", "zone-a", "100Gi"))
    claims = [make_pvc("c1", "fast", request="50Gi"), make_pvc("c2", "fast", request="50Gi")]
    plugin = VolumeBinding(store(*objs, *claims), shaped((0, 0), (100, 10)))
    assert score_all(plugin, make_pod("c1", "c2"), ZONAL_NODES[:1]) == (None, [100])


def test_static_bindings_win_over_dynamic_provisions() -> None:
    """A node with a static binding scores it alone; the provisioned claim's capacity is left out."""
    objs = capacity_objects(("cap-a", "zone-a", "1000Gi"))
    local = make_pv("pv-a", WAIT, phase="Available", capacity="100Gi", affinity={ZONE: ["zone-a"]})
    claims = [make_pvc("static", WAIT, request="50Gi"), make_pvc("dyn", "fast", request="10Gi")]
    plugin = VolumeBinding(store(*CLASSES, *objs, local, *claims), shaped((0, 0), (100, 10)))
    assert score_all(plugin, make_pod("static", "dyn"), ZONAL_NODES[:1]) == (None, [50])


def test_score_is_columnar_over_many_nodes() -> None:
    """One Score call over 2,000 nodes in 100 zones, each zone with its own capacity object."""
    nodes = [make_node(f"n{i}", **{ZONE: f"z{i % 100}"}) for i in range(2000)]
    objs = capacity_objects(*[(f"cap-{z}", f"z{z}", f"{100 + z}Gi") for z in range(100)])
    plugin = VolumeBinding(store(*objs, make_pvc("data", "fast", request="50Gi")), shaped((0, 0), (100, 10)))
    _, scores = score_all(plugin, make_pod("data"), nodes)
    assert scores[:3] == [50, 49, 49] and scores[99] == 25     # 50Gi of 100, 101, 102, ... 199Gi


# --- VolumeBindingArgs: validation_pluginargs_test.go TestValidateVolumeBindingArgs and the
# VolumeBinding cases of defaults_test.go TestPluginArgsDefaults ---------------------------------------
def volume_binding_args_errors(raw: dict[str, Any], gate: bool) -> list[tuple[str, str]]:
    import pydantic

    from scheduler.plugins.args import VolumeBindingArgs
    from scheduler.profiles.compile import pydantic_error_message
    try:
        VolumeBindingArgs.model_validate(raw, context={"StorageCapacityScoring": gate})
    except pydantic.ValidationError as e:
        out = []
        for err in e.errors():
            one = pydantic.ValidationError.from_exception_data("args", [
                {"type": pydantic_core.PydanticCustomError("value_error", "{msg}", {"msg": err["msg"]}),
                 "loc": err["loc"], "input": err["input"]}])
            out.append(pydantic_error_message(one))
        return out
    return []


def points(*pairs: tuple[int, int]) -> list[dict[str, int]]:
    return [{"utilization": u, "score": s} for u, s in pairs]


# (name, args, gate, wanted errors as (field, message prefix)); upstream compares fields and types,
# ignoring the detail, so the messages here are ours to pin: upstream's field.Error text.
VALIDATE_VOLUME_BINDING_ARGS: list[tuple[str, dict[str, Any], bool, list[tuple[str, str]]]] = [
    ("zero is a valid config", {"bindTimeoutSeconds": 0}, True, []),
    ("positive value is valid config", {"bindTimeoutSeconds": 10}, True, []),
    ("negative value is invalid config ", {"bindTimeoutSeconds": -10}, True,
     [("bindTimeoutSeconds", "Invalid value: -10: invalid BindTimeoutSeconds, should not be a negative value")]),
    ("[StorageCapacityScoring=off] shape should be nil when the feature is off",
     {"bindTimeoutSeconds": 10, "shape": None}, False, []),
    ("[StorageCapacityScoring=off] error if the shape is not nil when the feature is off",
     {"bindTimeoutSeconds": 10, "shape": points((1, 1), (3, 3))}, False,
     [("shape", 'Invalid value: [{"Utilization":1,"Score":1},{"Utilization":3,"Score":3}]: unexpected field '
                "`shape`, remove it or turn on the feature gate StorageCapacityScoring")]),
    # Upstream validates the internal config, where [] stays empty: "Required value". Through v1 an
    # empty shape is defaulted first (SetDefaults_VolumeBindingArgs: len(Shape) == 0), so it is valid.
    ("[StorageCapacityScoring=on] shape should not be empty", {"bindTimeoutSeconds": 10, "shape": []}, True, []),
    ("[StorageCapacityScoring=on] shape points must be sorted in increasing order",
     {"bindTimeoutSeconds": 10, "shape": points((3, 3), (1, 1))}, True,
     [("shape[1].utilization", "Invalid value: 1: values must be sorted in increasing order")]),
    ("[StorageCapacityScoring=on] shape point: invalid utilization and score",
     {"bindTimeoutSeconds": 10, "shape": points((-1, 1), (10, -1), (20, 11), (101, 1))}, True,
     [("shape[0].utilization", "Invalid value: -1: not in valid range [0, 100]"),
      ("shape[1].score", "Invalid value: -1: not in valid range [0, 10]"),
      ("shape[2].score", "Invalid value: 11: not in valid range [0, 10]"),
      ("shape[3].utilization", "Invalid value: 101: not in valid range [0, 100]")]),
]


@pytest.mark.parametrize(("name", "raw", "gate", "want"), VALIDATE_VOLUME_BINDING_ARGS,
                         ids=[c[0] for c in VALIDATE_VOLUME_BINDING_ARGS])
def test_validate_volume_binding_args(name: str, raw: dict[str, Any], gate: bool, want: list[tuple[str, str]]) -> None:
    """validation_pluginargs_test.go TestValidateVolumeBindingArgs (8 cases), after v1 defaulting."""
    assert volume_binding_args_errors(raw, gate) == want


def test_an_empty_shape_required_error_is_kept_for_the_requested_to_capacity_ratio_path() -> None:
    """The shape check itself is upstream's validateFunctionShape, shared with NodeResourcesFit:
    an explicitly empty shape there is the Required error VolumeBinding's v1 defaulting hides."""
    from scheduler.plugins.args import _shape_errors
    assert _shape_errors(()) == [((), "Required value: at least one point must be specified", ())]


@pytest.mark.parametrize(("name", "gate", "shape"), [
    ("VolumeBindingArgs empty, StorageCapacityScoring disabled", False, None),
    ("VolumeBindingArgs empty, StorageCapacityScoring enabled", True, ((0, 10), (100, 0))),
])
def test_volume_binding_args_defaults(name: str, gate: bool, shape: tuple[tuple[int, int], ...] | None) -> None:
    """defaults_test.go TestPluginArgsDefaults, its two VolumeBindingArgs cases."""
    from scheduler.plugins.args import VolumeBindingArgs
    args = VolumeBindingArgs.model_validate({}, context={"StorageCapacityScoring": gate})
    assert args.bind_timeout_seconds == 600
    assert (None if args.shape is None else tuple((p.utilization, p.score) for p in args.shape)) == shape


def test_volume_binding_args_in_a_profile() -> None:
    """Through a profile: the args reach the plugin, and an error names the pluginConfig entry."""
    import pytest as _pytest

    from scheduler.errors import ProfileError
    from scheduler.framework.handle import Handle
    from scheduler.plugins.registry import Registry
    from scheduler.profiles import compile_profile, parse_spec
    spec = {"schedulerName": "s", "plugins": {"multiPoint": {"enabled": [{"name": "VolumeBinding"}]}},
            "pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 30,
                                                                "shape": points((0, 0), (100, 10))}}]}
    fwk = compile_profile(parse_spec(spec), registry=Registry(), handle=Handle())
    vb = fwk.plugins_by_name["VolumeBinding"]
    assert isinstance(vb, VolumeBinding) and vb.bind_timeout == 30.0 and vb._shape == ((0, 0), (100, 100))
    # The default set's PreBind: VolumeBinding, then DynamicResources (upstream's order since DRA is default).
    assert "VolumeBinding" in [p.name for p in fwk.pre_score]
    assert [p.name for p in fwk.pre_bind] == ["VolumeBinding", "DynamicResources"]
    spec["pluginConfig"] = [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": -1}}]
    with _pytest.raises(ProfileError) as e:
        compile_profile(parse_spec(spec), registry=Registry(), handle=Handle())
    assert "spec.pluginConfig[0].args.bindTimeoutSeconds" in str(e.value.field) + str(e.value)


# --- EnqueueExtensions: upstream's EventsToRegister with SchedulerQueueingHints, and the hints ---------
def test_events_to_register() -> None:
    """volume_binding.go EventsToRegister: which events, and which carry a hint."""
    got = [(e.event.resource, tuple(sorted(e.event.actions)), e.hint is not None)
           for e in VolumeBinding().events_to_register()]
    assert got == [("StorageClass", ("Add", "Update"), True), ("PersistentVolumeClaim", ("Add", "Update"), True),
                   ("PersistentVolume", ("Add", "Update"), False), ("Node", ("Add", "UpdateNodeLabel"), False),
                   ("CSINode", ("Add", "Update"), True), ("CSIDriver", ("Update",), True),
                   ("CSIStorageCapacity", ("Add", "Update"), True)]


def event(resource: str, old: Any, new: Any) -> Any:
    from scheduler.framework import ClusterEvent
    return ClusterEvent(resource, "Add" if old is None else "Update", old=old, new=new)


def parsed(kind: str, body: dict[str, Any]) -> Any:
    got = store().on_event(kind, "ADDED", body)
    assert got is not None
    return got


def pod_with(*volumes: dict[str, Any], namespace: str = "default") -> Pod:
    p = MakePod().Name("pod-a").Namespace(namespace)
    for v in volumes:
        p.Volume(v)
    return p.Obj()


PVC_VOL = {"name": "v", "persistentVolumeClaim": {"claimName": "pvc-a"}}
EPHEMERAL_VOL = {"name": "ephemeral-a", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}}
EMPTY_DIR = {"name": "scratch", "emptyDir": {}}


def claim_obj(name: str, namespace: str = "default", **spec: Any) -> Any:
    return parsed("PersistentVolumeClaim", {"metadata": {"name": name, "namespace": namespace}, "spec": spec})


# isSchedulableAfterPersistentVolumeClaimChange: (name, pod, old, new, queue). Cases ours, one per branch.
PVC_HINT = [
    ("pod has no volumes", pod_with(), None, claim_obj("pvc-a"), False),
    ("pod has no pvc or ephemeral volumes", pod_with(EMPTY_DIR), None, claim_obj("pvc-a"), False),
    ("new claim the pod uses", pod_with(PVC_VOL), None, claim_obj("pvc-a"), True),
    ("updated claim the pod uses", pod_with(PVC_VOL), claim_obj("pvc-a"),
     claim_obj("pvc-a", accessModes=["ReadWriteOncePod"]), True),
    ("unchanged claim the pod uses (any update of it queues)", pod_with(PVC_VOL), claim_obj("pvc-a"),
     claim_obj("pvc-a"), True),
    ("claim of another name", pod_with(PVC_VOL), None, claim_obj("pvc-b"), False),
    ("same name in another namespace", pod_with(PVC_VOL), None, claim_obj("pvc-a", "other"), False),
    ("the pod's generic ephemeral claim", pod_with(EPHEMERAL_VOL), None, claim_obj("pod-a-ephemeral-a"), True),
    ("an ephemeral volume's name alone is not its claim", pod_with(EPHEMERAL_VOL), None, claim_obj("ephemeral-a"),
     False),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "queue"), PVC_HINT, ids=[c[0] for c in PVC_HINT])
def test_is_schedulable_after_pvc_change(name: str, pod: Pod, old: Any, new: Any, queue: bool) -> None:
    assert volumebinding.is_schedulable_after_pvc_change(pod, event("PersistentVolumeClaim", old, new)) is queue


def sc_obj(name: str, *topologies: dict[str, list[str]], mode: str = "WaitForFirstConsumer") -> Any:
    return parsed("StorageClass", {"metadata": {"name": name}, "provisioner": "p", "volumeBindingMode": mode,
                                   "allowedTopologies": [{"matchLabelExpressions": [
                                       {"key": k, "values": v} for k, v in t.items()]} for t in topologies]})


# isSchedulableAfterStorageClassChange
SC_HINT = [
    ("a new class", None, sc_obj("sc-a"), True),
    ("allowedTopologies changed", sc_obj("sc-a", {HOSTNAME: ["node1", "node2"]}),
     sc_obj("sc-a", {HOSTNAME: ["node1", "node3"]}), True),
    ("allowedTopologies added", sc_obj("sc-a"), sc_obj("sc-a", {HOSTNAME: ["node1"]}), True),
    ("allowedTopologies unchanged", sc_obj("sc-a", {HOSTNAME: ["node1"]}), sc_obj("sc-a", {HOSTNAME: ["node1"]}),
     False),
]


@pytest.mark.parametrize(("name", "old", "new", "queue"), SC_HINT, ids=[c[0] for c in SC_HINT])
def test_is_schedulable_after_storage_class_change(name: str, old: Any, new: Any, queue: bool) -> None:
    assert volumebinding.is_schedulable_after_storage_class_change(
        pod_with(PVC_VOL), event("StorageClass", old, new)) is queue


def csi_node_obj(migrated: str | None) -> Any:
    meta: dict[str, Any] = {"name": "node-a"}
    if migrated is not None:
        meta["annotations"] = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
    return parsed("CSINode", {"metadata": meta, "spec": {"drivers": []}})


# isSchedulableAfterCSINodeChange
CSI_NODE_HINT = [
    ("a new CSINode", None, csi_node_obj(None), True),
    ("migrated plugins annotation added", csi_node_obj(None), csi_node_obj("kubernetes.io/aws-ebs"), True),
    ("migrated plugins changed", csi_node_obj("kubernetes.io/aws-ebs"),
     csi_node_obj("kubernetes.io/aws-ebs,kubernetes.io/gce-pd"), True),
    ("migrated plugins unchanged", csi_node_obj("kubernetes.io/aws-ebs"), csi_node_obj("kubernetes.io/aws-ebs"),
     False),
]


@pytest.mark.parametrize(("name", "old", "new", "queue"), CSI_NODE_HINT, ids=[c[0] for c in CSI_NODE_HINT])
def test_is_schedulable_after_csi_node_change(name: str, old: Any, new: Any, queue: bool) -> None:
    assert volumebinding.is_schedulable_after_csi_node_change(pod_with(PVC_VOL), event("CSINode", old, new)) is queue


def driver_obj(capacity: bool | None, name: str = "test-driver") -> Any:
    spec = {} if capacity is None else {"storageCapacity": capacity}
    return parsed("CSIDriver", {"metadata": {"name": name}, "spec": spec})


CSI_VOL = {"name": "inline", "csi": {"driver": "test-driver"}}
# isSchedulableAfterCSIDriverChange
CSI_DRIVER_HINT = [
    ("pod has no inline csi volume", pod_with(PVC_VOL), driver_obj(True), driver_obj(False), False),
    ("another driver's inline volume", pod_with({"name": "i", "csi": {"driver": "other"}}), driver_obj(True),
     driver_obj(False), False),
    ("storage capacity turned off", pod_with(CSI_VOL), driver_obj(True), driver_obj(False), True),
    ("storage capacity unset", pod_with(CSI_VOL), driver_obj(True), driver_obj(None), True),
    ("storage capacity turned on", pod_with(CSI_VOL), driver_obj(False), driver_obj(True), False),
    ("storage capacity stays on", pod_with(CSI_VOL), driver_obj(True), driver_obj(True), False),
]


@pytest.mark.parametrize(("name", "pod", "old", "new", "queue"), CSI_DRIVER_HINT, ids=[c[0] for c in CSI_DRIVER_HINT])
def test_is_schedulable_after_csi_driver_change(name: str, pod: Pod, old: Any, new: Any, queue: bool) -> None:
    assert volumebinding.is_schedulable_after_csi_driver_change(pod, event("CSIDriver", old, new)) is queue


def cap_obj(capacity: str | None, maximum: str | None = None) -> Any:
    body: dict[str, Any] = {"metadata": {"name": "cap-a", "namespace": "kube-system"}, "storageClassName": "sc-a"}
    if capacity is not None:
        body["capacity"] = capacity
    if maximum is not None:
        body["maximumVolumeSize"] = maximum
    return parsed("CSIStorageCapacity", body)


# isSchedulableAfterCSIStorageCapacityChange
CAPACITY_HINT = [
    ("a new capacity", None, cap_obj(None), True),
    ("capacity appeared", cap_obj(None), cap_obj("10Gi"), True),
    ("capacity grew", cap_obj("10Gi"), cap_obj("20Gi"), True),
    ("capacity shrank", cap_obj("20Gi"), cap_obj("10Gi"), False),
    ("capacity unchanged", cap_obj("10Gi"), cap_obj("10Gi"), False),
    ("capacity went away", cap_obj("10Gi"), cap_obj(None), False),
    ("maximumVolumeSize decides over capacity", cap_obj("100Gi", "10Gi"), cap_obj("200Gi", "10Gi"), False),
    ("maximumVolumeSize grew", cap_obj("100Gi", "10Gi"), cap_obj("100Gi", "20Gi"), True),
    ("maximumVolumeSize removed, capacity larger", cap_obj("100Gi", "10Gi"), cap_obj("100Gi"), True),
]


@pytest.mark.parametrize(("name", "old", "new", "queue"), CAPACITY_HINT, ids=[c[0] for c in CAPACITY_HINT])
def test_is_schedulable_after_csi_storage_capacity_change(name: str, old: Any, new: Any, queue: bool) -> None:
    assert volumebinding.is_schedulable_after_csi_storage_capacity_change(
        pod_with(PVC_VOL), event("CSIStorageCapacity", old, new)) is queue


@pytest.mark.parametrize("hint", [volumebinding.is_schedulable_after_pvc_change,
                                  volumebinding.is_schedulable_after_storage_class_change,
                                  volumebinding.is_schedulable_after_csi_node_change,
                                  volumebinding.is_schedulable_after_csi_driver_change,
                                  volumebinding.is_schedulable_after_csi_storage_capacity_change])
def test_hints_raise_on_objects_of_another_kind(hint: Any) -> None:
    """Upstream's "type conversion error" cases: util.As fails, and the hint's error means Queue."""
    with pytest.raises(TypeError):
        hint(pod_with(PVC_VOL), event("X", object(), object()))


# --- component-helpers storage/volume/pv_helpers_test.go, TestFindMatchVolumeWithNode ---------------
# Its VolumeAttributesClass cases with vacEnabled true (the gate is GA and locked on in 1.37), and the
# plain and pre-bound matches they are variations of; through the binder's FindMatchingVolume
# (``_match``) on node1 (key1=value1). PVs as upstream's makeTestVolume: RWO+ROX, Available.
def _vac_pv(name: str, capacity: str, *, vac: str = "", claim: str = "", affinity: str = "value1",
            cls: str = "wait") -> dict[str, Any]:
    extra: dict[str, Any] = {"accessModes": ["ReadWriteOnce", "ReadOnlyMany"]}
    if vac:
        extra["volumeAttributesClassName"] = vac
    return make_pv(name, cls, phase="Available", capacity=capacity, affinity={"key1": [affinity]},
                   claim=("myns", claim) if claim else None, provisioned=extra)


def _vac_volumes(vac: str = "") -> list[dict[str, Any]]:
    return [_vac_pv("affinity001", "100G", vac=vac), _vac_pv("affinity002", "150G", vac=vac),
            _vac_pv("affinity003", "100G", vac=vac, claim="claim02"),
            _vac_pv("affinity003-pv3", "200G", vac=vac, affinity="value3")]


def _vac_claim(name: str, vac: str = "") -> dict[str, Any]:
    body = make_pvc(name, "wait", request="100G")
    body["metadata"]["namespace"] = "myns"
    body["spec"]["accessModes"] = ["ReadWriteOnce"]
    if vac:
        body["spec"]["volumeAttributesClassName"] = vac
    return body


FIND_MATCH_VOLUME_WITH_NODE = [
    ("success-match", _vac_volumes(), _vac_claim("claim01"), "affinity001"),
    ("success-prebound", _vac_volumes(), _vac_claim("claim02"), "affinity003"),
    ("success-match-with-vac", _vac_volumes("gold"), _vac_claim("claim01", "gold"), "affinity001"),
    ("fail-vac", _vac_volumes(), _vac_claim("claim01", "silver"), ""),
    ("fail-prebound-vac", _vac_volumes("gold"), _vac_claim("claim02", "silver"), ""),
]


@pytest.mark.parametrize(("name", "pvs", "claim", "want"), FIND_MATCH_VOLUME_WITH_NODE,
                         ids=[c[0] for c in FIND_MATCH_VOLUME_WITH_NODE])
def test_pv_helpers_test_go_find_match_volume_with_node(name: str, pvs: list[dict[str, Any]], claim: dict[str, Any],
                                                        want: str) -> None:
    from scheduler.plugins.volumebinding.binder import VolumeBinder
    volumes = store(*pvs, claim)
    parsed = volumes.pvc("myns", claim["metadata"]["name"])
    assert parsed is not None
    cache = Cache()
    cache.add_node(parse_node({"metadata": {"name": "node1", "labels": {"key1": "value1"}}}))
    with cache.lock:
        snap = cache.snapshot()
    _, chosen, _, _ = VolumeBinder(volumes)._match(parsed, list(volumes.pvs()), snap.table,
                                                    np.array([snap.row_of("node1")], np.int64), {})
    assert [pv for pv, rows in chosen.items() if rows[0]] == ([want] if want else []), name
