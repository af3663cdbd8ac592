"""The simulated PersistentVolume controller, external provisioner and volume protection
(``scheduler/simulator/volumes.py``, issue #18), each case against upstream's behaviour
(``pkg/controller/volume/persistentvolume``: ``syncClaim``, ``syncVolume``, ``bind``, ``reclaimVolume``;
the external provisioner library; ``pvcprotection``/``pvprotection``). Nothing schedules here: a test
writes what the scheduler's PreBind writes (``volume.kubernetes.io/selected-node``, a volume's
``claimRef``) itself."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, node, wait

Obj = dict[str, Any]
PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
CLASSES = "/apis/storage.k8s.io/v1/storageclasses"
MERGE = "application/merge-patch+json"
SELECTED = "volume.kubernetes.io/selected-node"
ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def sim(request: pytest.FixtureRequest) -> Iterator[SimulatedCluster]:
    seconds = getattr(request, "param", 0.3)
    c = SimulatedCluster(seed=18, provision_seconds=seconds)
    c.start()
    api = Http(c)
    api("POST", "/api/v1/nodes", node("n1", labels={ZONE: "zone-a", "kubernetes.io/hostname": "n1"}))
    api("POST", "/api/v1/nodes", node("n2", labels={ZONE: "zone-b", "kubernetes.io/hostname": "n2"}))
    api("POST", "/api/v1/nodes", node("bare", labels={"kubernetes.io/hostname": "bare"}))
    yield c
    c.stop()


@pytest.fixture
def api(sim: SimulatedCluster) -> Http:
    return Http(sim)




def pv(name: str, size: str = "1Gi", cls: str = "", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name, "labels": spec.pop("labels", {})},
            "spec": {"capacity": {"storage": size}, "accessModes": spec.pop("accessModes", ["ReadWriteOnce"]),
                     "storageClassName": cls, "hostPath": {"path": f"/data/{name}"}, **spec}}


def pvc(name: str, size: str = "1Gi", cls: str | None = "", **spec: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": spec.pop("accessModes", ["ReadWriteOnce"]),
                     "resources": {"requests": {"storage": size}},
                     **({"storageClassName": cls} if cls is not None else {}), **spec}}


def sc(name: str, provisioner: str = "ebs.csi.aws.com", mode: str = "Immediate", **fields: Any) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": provisioner, "volumeBindingMode": mode, **fields}


def claim(api: Http, name: str) -> Obj:
    got: Obj = api("GET", f"{PVCS}/{name}")[1]
    return got


def volume(api: Http, name: str) -> Obj:
    got: Obj = api("GET", f"{PVS}/{name}")[1]
    return got


def bound(api: Http, name: str, timeout: float = 10.0) -> Obj:
    return wait(lambda: (c := claim(api, name)).get("status", {}).get("phase") == "Bound" and c, timeout,
                f"claim {name} bound")


def events(api: Http, name: str) -> list[tuple[str, str, str]]:
    items = api("GET", "/api/v1/namespaces/default/events")[1]["items"]
    return [(e["type"], e["reason"], e["message"]) for e in items if e["involvedObject"]["name"] == name]


def test_an_immediate_claim_binds_the_smallest_matching_volume(api: Http) -> None:
    """``findBestMatchForClaim``: same class, enough capacity, the access modes, the selector, Available;
    of those the smallest. Both objects carry upstream's binding annotations and status."""
    api("POST", PVS, pv("pv-big", "10Gi"))
    api("POST", PVS, pv("pv-fit", "2Gi", labels={"tier": "gold"}))
    api("POST", PVS, pv("pv-tiny", "500Mi"))                       # too small
    api("POST", PVS, pv("pv-other-class", "1Gi", cls="gold"))      # another class
    api("POST", PVS, pv("pv-rox", "1Gi", accessModes=["ReadOnlyMany"]))   # lacks ReadWriteOnce
    api("POST", PVS, pv("pv-block", "1Gi", volumeMode="Block"))    # another volume mode
    api("POST", PVCS, pvc("data"))
    got = bound(api, "data")
    assert got["spec"]["volumeName"] == "pv-fit"
    assert got["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes",
                                              "pv.kubernetes.io/bound-by-controller": "yes"}
    assert got["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "2Gi"}}
    vol = volume(api, "pv-fit")
    ref = vol["spec"]["claimRef"]
    assert {k: ref[k] for k in ("apiVersion", "kind", "namespace", "name", "uid")} == {
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "default", "name": "data",
        "uid": got["metadata"]["uid"]}
    assert ref["resourceVersion"]
    assert vol["metadata"]["annotations"] == {"pv.kubernetes.io/bound-by-controller": "yes"}
    assert vol["status"]["phase"] == "Bound"
    assert volume(api, "pv-big")["status"]["phase"] == "Available"
    # a selector narrows the candidates
    api("POST", PVCS, pvc("picky", selector={"matchLabels": {"tier": "gold"}}))
    wait(lambda: ("Normal", "FailedBinding", "no persistent volumes available for this claim and no storage "
                  "class is set") in events(api, "picky"), message="FailedBinding")     # the controller's verdict
    assert claim(api, "picky")["status"]["phase"] == "Pending"       # the only gold volume is taken


def test_a_claim_binds_a_volume_created_after_it(api: Http) -> None:
    api("POST", PVCS, pvc("early", "3Gi"))
    wait(lambda: [e for e in events(api, "early") if e[1] == "FailedBinding"],
         message="the claim seen with no volume for it")
    api("POST", PVS, pv("late", "5Gi"))
    assert bound(api, "early")["spec"]["volumeName"] == "late"


def test_a_volume_whose_claim_ref_names_the_claim_gets_it(api: Http) -> None:
    """What the scheduler's PreBind writes: the volume's claimRef (with the claim's uid), even for a
    WaitForFirstConsumer claim; the controller binds the claim to it, whatever its size."""
    api("POST", CLASSES, sc("local", "kubernetes.io/no-provisioner", "WaitForFirstConsumer"))
    api("POST", PVS, pv("pv-small", "1Gi", cls="local"))
    api("POST", PVS, pv("pv-chosen", "8Gi", cls="local"))
    c = api("POST", PVCS, pvc("wffc", cls="local"))[1]
    wait(lambda: ("Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
         in events(api, "wffc"), message="WaitForFirstConsumer")        # the controller's verdict
    assert claim(api, "wffc")["status"]["phase"] == "Pending"        # never bound without a consumer
    current = wait(lambda: (v := volume(api, "pv-chosen"))["status"]["phase"] == "Available" and v)
    code, _ = api("PATCH", f"{PVS}/pv-chosen", {
        "metadata": {"resourceVersion": current["metadata"]["resourceVersion"],
                     "annotations": {"pv.kubernetes.io/bound-by-controller": "yes"}},
        "spec": {"claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "default",
                              "name": "wffc", "uid": c["metadata"]["uid"]}}}, ctype=MERGE)
    assert code == 200
    got = bound(api, "wffc")
    assert got["spec"]["volumeName"] == "pv-chosen" and got["status"]["capacity"] == {"storage": "8Gi"}
    assert volume(api, "pv-chosen")["status"]["phase"] == "Bound"
    assert volume(api, "pv-small")["status"]["phase"] == "Available"


def test_waiting_for_pod_scheduled_names_the_pods(api: Http) -> None:
    api("POST", CLASSES, sc("late", mode="WaitForFirstConsumer"))
    api("POST", PVCS, pvc("shared", cls="late"))
    for name in ("user-a", "user-b"):
        api("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}],
                     "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "shared"}}]}})
    api("PATCH", f"{PVCS}/shared", {"metadata": {"labels": {"poke": "1"}}}, ctype=MERGE)    # a resync
    wait(lambda: ("Normal", "WaitForPodScheduled", "waiting for pods user-a,user-b to be scheduled")
         in events(api, "shared"), message="WaitForPodScheduled")


def test_wait_for_first_consumer_is_provisioned_in_the_selected_nodes_zone_after_the_delay(api: Http) -> None:
    api("POST", CLASSES, sc("zonal", mode="WaitForFirstConsumer", reclaimPolicy="Retain", mountOptions=["noatime"]))
    c = api("POST", PVCS, pvc("db", "5Gi", cls="zonal"))[1]
    wait(lambda: [e for e in events(api, "db") if e[1] == "WaitForFirstConsumer"], message="WaitForFirstConsumer")
    assert claim(api, "db")["status"]["phase"] == "Pending" and api("GET", PVS)[1]["items"] == []
    api("PATCH", f"{PVCS}/db", {"metadata": {"annotations": {SELECTED: "n2"}}}, ctype=MERGE)
    t0 = time.time()
    got = bound(api, "db")
    assert time.time() - t0 >= 0.25                                   # the provisioning delay (0.3 s)
    name = f"pvc-{c['metadata']['uid']}"
    assert got["spec"]["volumeName"] == name
    ann = got["metadata"]["annotations"]
    assert ann["volume.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    assert ann["volume.beta.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"
    assert ann["pv.kubernetes.io/bind-completed"] == "yes" and ann[SELECTED] == "n2"
    vol = volume(api, name)
    spec = vol["spec"]
    assert spec["capacity"] == {"storage": "5Gi"} and spec["storageClassName"] == "zonal"
    assert spec["persistentVolumeReclaimPolicy"] == "Retain" and spec["mountOptions"] == ["noatime"]
    assert spec["accessModes"] == ["ReadWriteOnce"] and spec["volumeMode"] == "Filesystem"
    assert spec["nodeAffinity"] == {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": ZONE, "operator": "In", "values": ["zone-b"]}]}]}}
    assert "hostPath" in spec                                         # no CSIDriver of that name
    assert vol["metadata"]["annotations"]["pv.kubernetes.io/provisioned-by"] == "ebs.csi.aws.com"
    assert "pv.kubernetes.io/bound-by-controller" not in vol["metadata"]["annotations"]   # the provisioner's ref
    reasons = [r for _, r, _ in events(api, "db")]
    for r in ("WaitForFirstConsumer", "ExternalProvisioning", "Provisioning", "ProvisioningSucceeded"):
        assert r in reasons, reasons


def test_a_node_without_a_zone_pins_the_hostname_and_a_csi_driver_gets_a_csi_source(api: Http) -> None:
    api("POST", "/apis/storage.k8s.io/v1/csidrivers", {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                                         "metadata": {"name": "pd.csi.storage.gke.io"}, "spec": {}})
    api("POST", CLASSES, sc("pd", "pd.csi.storage.gke.io", "WaitForFirstConsumer"))
    c = api("POST", PVCS, pvc("pd-claim", cls="pd"))[1]
    api("PATCH", f"{PVCS}/pd-claim", {"metadata": {"annotations": {SELECTED: "bare"}}}, ctype=MERGE)
    bound(api, "pd-claim")
    spec = volume(api, f"pvc-{c['metadata']['uid']}")["spec"]
    assert spec["csi"] == {"driver": "pd.csi.storage.gke.io", "volumeHandle": f"pvc-{c['metadata']['uid']}",
                           "fsType": "ext4"}
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["bare"]}]


def test_a_csinode_with_topology_keys_gives_the_drivers_keys(api: Http) -> None:
    api("PATCH", "/api/v1/nodes/n1", {"metadata": {"labels": {"topology.ebs.csi.aws.com/zone": "zone-a"}}},
        ctype=MERGE)
    api("POST", "/apis/storage.k8s.io/v1/csidrivers", {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                                         "metadata": {"name": "ebs.csi.aws.com"}, "spec": {}})
    api("POST", "/apis/storage.k8s.io/v1/csinodes", {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
                                                       "metadata": {"name": "n1"}, "spec": {"drivers": [
                                                           {"name": "ebs.csi.aws.com", "nodeID": "i-1",
                                                            "topologyKeys": ["topology.ebs.csi.aws.com/zone"]}]}})
    api("POST", CLASSES, sc("ebs", mode="WaitForFirstConsumer"))
    c = api("POST", PVCS, pvc("ebs-claim", cls="ebs"))[1]
    api("PATCH", f"{PVCS}/ebs-claim", {"metadata": {"annotations": {SELECTED: "n1"}}}, ctype=MERGE)
    bound(api, "ebs-claim")
    spec = volume(api, f"pvc-{c['metadata']['uid']}")["spec"]
    assert "csi" in spec
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "topology.ebs.csi.aws.com/zone", "operator": "In", "values": ["zone-a"]}]


def test_a_node_local_provisioner_pins_the_hostname(api: Http) -> None:
    api("POST", CLASSES, sc("local-path", "rancher.io/local-path", "WaitForFirstConsumer"))
    c = api("POST", PVCS, pvc("lp", cls="local-path"))[1]
    api("PATCH", f"{PVCS}/lp", {"metadata": {"annotations": {SELECTED: "n1"}}}, ctype=MERGE)
    bound(api, "lp")
    spec = volume(api, f"pvc-{c['metadata']['uid']}")["spec"]
    assert spec["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]


def test_an_immediate_claim_of_a_provisioner_class_is_provisioned_without_a_node(api: Http) -> None:
    api("POST", CLASSES, sc("now"))
    c = api("POST", PVCS, pvc("now-claim", "2Gi", cls="now"))[1]
    got = bound(api, "now-claim")
    assert got["spec"]["volumeName"] == f"pvc-{c['metadata']['uid']}"
    vol = volume(api, got["spec"]["volumeName"])
    assert "nodeAffinity" not in vol["spec"] and vol["spec"]["persistentVolumeReclaimPolicy"] == "Delete"


def test_no_provisioner_provisions_nothing(api: Http) -> None:
    api("POST", CLASSES, sc("manual", "kubernetes.io/no-provisioner"))
    api("POST", PVCS, pvc("manual-claim", cls="manual"))
    wait(lambda: ("Warning", "ProvisioningFailed", "no volume plugin matched name: kubernetes.io/no-provisioner")
         in events(api, "manual-claim"), message="ProvisioningFailed")
    time.sleep(0.4)                      # the scenario: nothing may be provisioned meanwhile (no poll for an absence)
    assert api("GET", PVS)[1]["items"] == [] and claim(api, "manual-claim")["status"]["phase"] == "Pending"
    assert "volume.kubernetes.io/storage-provisioner" not in (claim(api, "manual-claim")["metadata"]
                                                              .get("annotations") or {})


def test_a_node_outside_allowed_topologies_fails_and_the_selected_node_is_removed(api: Http) -> None:
    api("POST", CLASSES, sc("only-a", mode="WaitForFirstConsumer", allowedTopologies=[
        {"matchLabelExpressions": [{"key": ZONE, "values": ["zone-a"]}]}]))
    api("POST", PVCS, pvc("topo", cls="only-a"))
    api("PATCH", f"{PVCS}/topo", {"metadata": {"annotations": {SELECTED: "n2"}}}, ctype=MERGE)
    wait(lambda: SELECTED not in (claim(api, "topo")["metadata"].get("annotations") or {}), message="reschedule")
    failed = [(t, m) for t, r, m in events(api, "topo") if r == "ProvisioningFailed"]
    assert failed and failed[0][0] == "Warning"
    assert 'selected node "n2" topology is not in allowed topologies' in failed[0][1]
    assert api("GET", PVS)[1]["items"] == []
    api("PATCH", f"{PVCS}/topo", {"metadata": {"annotations": {SELECTED: "n1"}}}, ctype=MERGE)   # inside it
    got = bound(api, "topo")
    assert volume(api, got["spec"]["volumeName"])["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0][
        "matchExpressions"] == [{"key": ZONE, "operator": "In", "values": ["zone-a"]}]


def test_a_selected_node_removed_before_the_delay_is_not_provisioned(api: Http) -> None:
    api("POST", CLASSES, sc("slow", mode="WaitForFirstConsumer"))
    api("POST", PVCS, pvc("undo", cls="slow"))
    api("PATCH", f"{PVCS}/undo", {"metadata": {"annotations": {SELECTED: "n1"}}}, ctype=MERGE)
    api("PATCH", f"{PVCS}/undo", {"metadata": {"annotations": {SELECTED: None}}}, ctype=MERGE)
    time.sleep(0.6)                      # the scenario: twice the provisioning delay passes, and nothing comes
    assert api("GET", PVS)[1]["items"] == [] and claim(api, "undo")["status"]["phase"] == "Pending"


@pytest.mark.parametrize("sim", [-1.0], indirect=True)
def test_a_negative_provisioning_delay_never_provisions(api: Http) -> None:
    api("POST", CLASSES, sc("never", mode="WaitForFirstConsumer"))
    api("POST", PVCS, pvc("never-claim", cls="never"))
    api("PATCH", f"{PVCS}/never-claim", {"metadata": {"annotations": {SELECTED: "n1"}}}, ctype=MERGE)
    time.sleep(0.6)                      # the scenario: the default delay twice over passes, and nothing comes
    got = claim(api, "never-claim")
    assert got["status"]["phase"] == "Pending" and api("GET", PVS)[1]["items"] == []
    assert got["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] == "ebs.csi.aws.com"


def test_reclaim_delete_removes_a_provisioned_volume_and_retain_releases(api: Http) -> None:
    api("POST", CLASSES, sc("gone"))
    c = api("POST", PVCS, pvc("deleted-claim", cls="gone"))[1]
    name = bound(api, "deleted-claim")["spec"]["volumeName"]
    api("POST", PVS, pv("kept", "1Gi", cls="keep"))                      # Retain, the PV default
    api("POST", PVCS, pvc("kept-claim", cls="keep"))
    bound(api, "kept-claim")
    assert api("DELETE", f"{PVCS}/deleted-claim")[0] == 200
    assert api("DELETE", f"{PVCS}/kept-claim")[0] == 200
    wait(lambda: api("GET", f"{PVS}/{name}")[0] == 404, message=f"{name} deleted")
    kept = wait(lambda: (v := volume(api, "kept"))["status"]["phase"] == "Released" and v)
    assert kept["spec"]["claimRef"]["name"] == "kept-claim" and c["metadata"]["uid"]
    # a static volume with Delete has no deleter here: Failed, as upstream without a deleter plugin
    api("POST", PVS, pv("static", "1Gi", cls="static", persistentVolumeReclaimPolicy="Delete"))
    api("POST", PVCS, pvc("static-claim", cls="static"))
    bound(api, "static-claim")
    api("DELETE", f"{PVCS}/static-claim")
    got = wait(lambda: (v := volume(api, "static"))["status"]["phase"] == "Failed" and v)
    assert got["status"]["message"] == ('error getting deleter volume plugin for volume "static": no deletable '
                                        "volume plugin matched")


def test_a_claim_in_use_stays_terminating_until_its_pod_is_gone(api: Http) -> None:
    """pvc-protection, then pv-protection: each finalizer holds its object while it is in use."""
    api("POST", PVS, pv("held", "1Gi", cls="held"))
    api("POST", PVCS, pvc("held-claim", cls="held"))
    bound(api, "held-claim")
    api("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "user"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}],
                 "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "held-claim"}}]}})
    assert api("DELETE", f"{PVCS}/held-claim")[0] == 200
    assert api("DELETE", f"{PVS}/held")[0] == 200
    time.sleep(0.4)                      # the scenario: the finalizers must still hold after a while
    got = claim(api, "held-claim")
    assert got["metadata"]["deletionTimestamp"] and got["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert volume(api, "held")["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    api("DELETE", "/api/v1/namespaces/default/pods/user")
    wait(lambda: api("GET", f"{PVCS}/held-claim")[0] == 404, message="claim gone")
    wait(lambda: api("GET", f"{PVS}/held")[0] == 404, message="volume gone once Released")


def test_a_claim_without_class_gets_the_default_class_once_there_is_one(api: Http) -> None:
    """Retroactive default StorageClass assignment: the claim was created without storageClassName."""
    api("POST", PVCS, pvc("classless", cls=None))
    time.sleep(0.2)                      # the scenario: no class is assigned while there is no default
    assert "storageClassName" not in claim(api, "classless")["spec"]
    default = sc("standard")
    default["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    api("POST", CLASSES, default)
    got = bound(api, "classless")
    assert got["spec"]["storageClassName"] == "standard"


def test_a_generic_ephemeral_volume_gets_its_claim_owned_by_the_pod(api: Http) -> None:
    pod = api("POST", "/api/v1/namespaces/default/pods", {
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "scratch"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "volumes": [{"name": "tmp", "ephemeral": {
            "volumeClaimTemplate": {"metadata": {"labels": {"kind": "scratch"}}, "spec": {
                "accessModes": ["ReadWriteOnce"], "storageClassName": "",
                "resources": {"requests": {"storage": "1Gi"}}}}}}]}})[1]
    got = wait(lambda: api("GET", f"{PVCS}/scratch-tmp")[1].get("metadata"), message="ephemeral claim")
    assert got["labels"] == {"kind": "scratch"}
    assert got["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "scratch",
                                       "uid": pod["metadata"]["uid"], "controller": True,
                                       "blockOwnerDeletion": True}]
    api("DELETE", "/api/v1/namespaces/default/pods/scratch")
    wait(lambda: api("GET", f"{PVCS}/scratch-tmp")[0] == 404, message="claim collected with its pod")
