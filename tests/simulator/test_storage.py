"""The storage kinds as kube-apiserver serves them (``scheduler/simulator/storage.py``, issue #18): core
PersistentVolumes and PersistentVolumeClaims, ``storage.k8s.io/v1`` StorageClasses, CSINodes, CSIDrivers
and CSIStorageCapacities: discovery and short names, defaulting, the DefaultStorageClass admission
plugin, validation as a table (status code and cause, from ``pkg/apis/core/validation`` and
``pkg/apis/storage/validation``), the update rules, 409 on a stale resourceVersion, and the printer
columns through the real kubectl 1.37 (``pkg/printers/internalversion/printers.go``)."""

from __future__ import annotations

import copy
import time
from pathlib import Path
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, node
from tests.simulator.kubectl import Kubectl, needs_kubectl

Obj = dict[str, Any]
PVS = "/api/v1/persistentvolumes"
PVCS = "/api/v1/namespaces/default/persistentvolumeclaims"
STORAGE = "/apis/storage.k8s.io/v1"


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``); it never
# provisions: these tests are about the API, not the controllers (tests/simulator/test_volumes.py).
SIM_OPTIONS: dict[str, Any] = {"seed": 18, "provision_seconds": -1}


def pv(name: str, **spec: Any) -> Obj:
    base: Obj = {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/d"}}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": name},
            "spec": {k: v for k, v in base.items() if v is not None}}


def pvc(name: str, **spec: Any) -> Obj:
    base: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                 "storageClassName": ""}
    base.update(spec)
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {k: v for k, v in base.items() if v is not None}}


def sc(name: str, **fields: Any) -> Obj:
    return {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": name},
            "provisioner": "ebs.csi.aws.com", **fields}


def causes(body: Obj) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in (body.get("details") or {}).get("causes") or []]


# ---- discovery ---------------------------------------------------------------------------------

def test_discovery_serves_the_storage_kinds_with_upstreams_short_names(api: Http) -> None:
    core = {r["name"]: r for r in api("GET", "/api/v1")[1]["resources"]}
    assert core["persistentvolumes"]["shortNames"] == ["pv"] and not core["persistentvolumes"]["namespaced"]
    assert core["persistentvolumeclaims"]["shortNames"] == ["pvc"] and core["persistentvolumeclaims"]["namespaced"]
    assert {"persistentvolumes/status", "persistentvolumeclaims/status"} <= set(core)
    storage = {r["name"]: r for r in api("GET", STORAGE)[1]["resources"]}
    assert storage["storageclasses"]["shortNames"] == ["sc"]
    assert {"storageclasses", "csinodes", "csidrivers", "csistoragecapacities"} <= set(storage)
    assert storage["csistoragecapacities"]["namespaced"] and not storage["csinodes"]["namespaced"]


# ---- defaulting and admission ------------------------------------------------------------------

def test_defaults_as_kube_apiserver_sets_them(api: Http) -> None:
    code, got = api("POST", PVS, pv("def-pv"))
    assert code == 201, got
    assert got["spec"]["persistentVolumeReclaimPolicy"] == "Retain" and got["spec"]["volumeMode"] == "Filesystem"
    assert got["spec"]["hostPath"] == {"path": "/d", "type": ""} and got["status"] == {"phase": "Pending"}
    assert got["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    code, got = api("POST", PVCS, pvc("def-pvc"))
    assert code == 201, got
    assert got["spec"]["volumeMode"] == "Filesystem" and got["status"] == {"phase": "Pending"}
    assert got["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    code, got = api("POST", f"{STORAGE}/storageclasses", sc("def-sc"))
    assert code == 201, got
    assert (got["reclaimPolicy"], got["volumeBindingMode"]) == ("Delete", "Immediate")
    code, got = api("POST", f"{STORAGE}/csidrivers", {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
                                                        "metadata": {"name": "def.csi.example.com"}, "spec": {}})
    assert code == 201, got
    assert got["spec"] == {"attachRequired": True, "podInfoOnMount": False, "storageCapacity": False,
                           "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False,
                           "seLinuxMount": False, "volumeLifecycleModes": ["Persistent"]}


def test_status_given_at_create_is_dropped_as_the_status_subresource_owns_it(api: Http) -> None:
    body = pvc("status-at-create")
    body["status"] = {"phase": "Bound", "capacity": {"storage": "1Gi"}}
    code, got = api("POST", PVCS, body)
    assert code == 201 and got["status"] == {"phase": "Pending"}


def test_default_storage_class_admission(sim: SimulatedCluster, api: Http) -> None:
    """DefaultStorageClass: a claim without storageClassName gets the default class (the newest of several;
    at the same second, the first by name); ``""`` and the beta annotation are left alone."""
    ns = "/api/v1/namespaces/dsc"
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "dsc"}})
    default = {"storageclass.kubernetes.io/is-default-class": "true"}
    for name in ("zz-default", "aa-default"):
        body = sc(name)
        body["metadata"]["annotations"] = default
        assert api("POST", f"{STORAGE}/storageclasses", body)[0] == 201
    try:
        got = api("POST", f"{ns}/persistentvolumeclaims", pvc("none", storageClassName=None))[1]
        assert got["spec"]["storageClassName"] == "aa-default"
        got = api("POST", f"{ns}/persistentvolumeclaims", pvc("empty"))[1]
        assert got["spec"]["storageClassName"] == ""
        beta = pvc("beta", storageClassName=None)
        beta["metadata"]["annotations"] = {"volume.beta.kubernetes.io/storage-class": "old"}
        got = api("POST", f"{ns}/persistentvolumeclaims", beta)[1]
        assert "storageClassName" not in got["spec"]
    finally:
        for name in ("zz-default", "aa-default"):
            api("DELETE", f"{STORAGE}/storageclasses/{name}")


# ---- validation: a table -----------------------------------------------------------------------

def _local_without_affinity() -> Obj:
    return pv("bad", hostPath=None, local={"path": "/mnt/disk"})


CREATE_CASES = [
    # (case, path, body, code, wanted causes (field, reason))
    ("pv without access modes", PVS, pv("bad", accessModes=None), 422,
     [("spec.accessModes", "FieldValueRequired")]),
    ("pv with an unknown access mode", PVS, pv("bad", accessModes=["RWO"]), 422,
     [("spec.accessModes", "FieldValueNotSupported")]),
    ("pv with ReadWriteOncePod and another mode", PVS, pv("bad", accessModes=["ReadWriteOncePod", "ReadWriteOnce"]),
     422, [("spec.accessModes", "FieldValueForbidden")]),
    ("pv without capacity", PVS, pv("bad", capacity=None), 422,
     [("spec.capacity", "FieldValueRequired"), ("spec.capacity", "FieldValueNotSupported")]),
    ("pv with a zero capacity", PVS, pv("bad", capacity={"storage": "0"}), 422,
     [("spec.capacity[storage]", "FieldValueInvalid")]),
    ("pv with a cpu capacity", PVS, pv("bad", capacity={"storage": "1Gi", "cpu": "1"}), 422,
     [("spec.capacity", "FieldValueNotSupported")]),
    ("pv with an unparsable capacity", PVS, pv("bad", capacity={"storage": "lots"}), 400, []),
    ("pv without a volume source", PVS, pv("bad", hostPath=None), 422, [("spec", "FieldValueRequired")]),
    ("pv with two volume sources", PVS, pv("bad", local={"path": "/mnt"}, nodeAffinity={"required": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "a", "operator": "Exists"}]}]}}), 422,
     [("spec.local", "FieldValueForbidden")]),
    ("pv local without node affinity", PVS, _local_without_affinity(), 422,
     [("spec.nodeAffinity", "FieldValueRequired")]),
    ("pv csi without volumeHandle", PVS, pv("bad", hostPath=None, csi={"driver": "ebs.csi.aws.com"}), 422,
     [("spec.csi.volumeHandle", "FieldValueRequired")]),
    ("pv with an unknown reclaim policy", PVS, pv("bad", persistentVolumeReclaimPolicy="Keep"), 422,
     [("spec.persistentVolumeReclaimPolicy", "FieldValueNotSupported")]),
    ("pv with an unknown volume mode", PVS, pv("bad", volumeMode="Raw"), 422,
     [("spec.volumeMode", "FieldValueNotSupported")]),
    ("pv with a bad class name", PVS, pv("bad", storageClassName="Fast_SSD"), 422,
     [("spec.storageClassName", "FieldValueInvalid")]),
    ("pvc without access modes", PVCS, pvc("bad", accessModes=None), 422,
     [("spec.accessModes", "FieldValueRequired")]),
    ("pvc without a storage request", PVCS, pvc("bad", resources={"requests": {}}), 422,
     [("spec.resources[storage]", "FieldValueRequired")]),
    ("pvc with a zero storage request", PVCS, pvc("bad", resources={"requests": {"storage": "0"}}), 422,
     [("spec.resources[storage]", "FieldValueInvalid")]),
    ("pvc with a bad selector", PVCS, pvc("bad", selector={"matchExpressions": [{"key": "a", "operator": "In"}]}),
     422, [("spec.selector.matchExpressions[0].values", "FieldValueRequired")]),
    ("pvc with an unknown volume mode", PVCS, pvc("bad", volumeMode="Raw"), 422,
     [("spec.volumeMode", "FieldValueNotSupported")]),
    ("storage class without provisioner", f"{STORAGE}/storageclasses", {**sc("bad"), "provisioner": ""}, 422,
     [("provisioner", "FieldValueRequired")]),
    ("storage class with reclaim policy Recycle", f"{STORAGE}/storageclasses", sc("bad", reclaimPolicy="Recycle"),
     422, [("reclaimPolicy", "FieldValueNotSupported")]),
    ("storage class with an unknown binding mode", f"{STORAGE}/storageclasses",
     sc("bad", volumeBindingMode="Later"), 422, [("volumeBindingMode", "FieldValueNotSupported")]),
    ("storage class topology without values", f"{STORAGE}/storageclasses",
     sc("bad", allowedTopologies=[{"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone",
                                                              "values": []}]}]), 422,
     [("allowedTopologies[0].matchLabelExpressions[0].values", "FieldValueRequired")]),
    ("csinode with a driver twice", f"{STORAGE}/csinodes",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "bad"}, "spec": {"drivers": [
         {"name": "ebs.csi.aws.com", "nodeID": "i-1"}, {"name": "ebs.csi.aws.com", "nodeID": "i-2"}]}}, 422,
     [("spec.drivers[1].name", "FieldValueDuplicate")]),
    ("csinode driver without nodeID", f"{STORAGE}/csinodes",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "bad"},
      "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": ""}]}}, 422,
     [("spec.drivers[0].nodeID", "FieldValueRequired")]),
    ("csinode with a negative allocatable count", f"{STORAGE}/csinodes",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "bad"},
      "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": -1}}]}}, 422,
     [("spec.drivers[0].allocatable.count", "FieldValueInvalid")]),
    ("csidriver with an unknown lifecycle mode", f"{STORAGE}/csidrivers",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "bad"},
      "spec": {"volumeLifecycleModes": ["Forever"]}}, 422,
     [("spec.volumeLifecycleModes[0]", "FieldValueNotSupported")]),
    ("capacity without storage class", f"{STORAGE}/namespaces/default/csistoragecapacities",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "bad"},
      "capacity": "1Gi"}, 422, [("storageClassName", "FieldValueRequired")]),
    ("capacity below zero", f"{STORAGE}/namespaces/default/csistoragecapacities",
     {"apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "bad"},
      "storageClassName": "fast", "capacity": "-1Gi"}, 422, [("capacity", "FieldValueInvalid")]),
]


@pytest.mark.parametrize(("case", "path", "body", "code", "wanted"), CREATE_CASES, ids=[c[0] for c in CREATE_CASES])
def test_create_validation(api: Http, case: str, path: str, body: Obj, code: int,
                           wanted: list[tuple[str, str]]) -> None:
    got_code, got = api("POST", path, body)
    assert got_code == code, (case, got)
    if wanted:
        assert causes(got) == wanted, (case, got["message"])


def test_messages_are_upstreams(api: Http) -> None:
    got = api("POST", PVS, pv("bad", accessModes=None, hostPath=None))[1]
    assert got["message"] == ('PersistentVolume "bad" is invalid: [spec.accessModes: Required value, spec: Required '
                              "value: must specify a volume type]")
    got = api("POST", PVCS, pvc("bad", accessModes=None))[1]
    assert got["message"] == ('PersistentVolumeClaim "bad" is invalid: spec.accessModes: Required value: at least 1 '
                              "access mode is required")
    got = api("POST", f"{STORAGE}/storageclasses", sc("bad", reclaimPolicy="Recycle"))[1]
    assert got["message"] == ('StorageClass.storage.k8s.io "bad" is invalid: reclaimPolicy: Unsupported value: '
                              '"Recycle": supported values: "Delete", "Retain"')


# ---- updates -----------------------------------------------------------------------------------

def wait_bound(api: Http, name: str) -> Obj:
    deadline = time.time() + 10
    while time.time() < deadline:
        claim: Obj = api("GET", f"{PVCS}/{name}")[1]
        if (claim.get("status") or {}).get("phase") == "Bound":
            return claim
        time.sleep(0.05)
    raise AssertionError(f"claim {name} never bound")


def wait_available(api: Http, name: str) -> Obj:
    deadline = time.time() + 10
    while time.time() < deadline:
        vol: Obj = api("GET", f"{PVS}/{name}")[1]
        if (vol.get("status") or {}).get("phase") == "Available":
            return vol
        time.sleep(0.05)
    raise AssertionError(f"volume {name} never available")


def settled(api: Http, path: str) -> Obj:
    """The object once the controllers have made their writes (its resourceVersion still for 0.2 s)."""
    last: Obj = api("GET", path)[1]
    for _ in range(50):
        time.sleep(0.2)
        now: Obj = api("GET", path)[1]
        if now["metadata"]["resourceVersion"] == last["metadata"]["resourceVersion"]:
            return now
        last = now
    raise AssertionError(f"{path} never settled")


def _put(api: Http, path: str, obj: Obj) -> tuple[int, Obj]:
    return api("PUT", f"{path}/{obj['metadata']['name']}", obj)


def test_pvc_spec_is_immutable_but_volume_name_once_and_a_bound_claims_requests(api: Http) -> None:
    code, claim = api("POST", PVCS, pvc("upd", storageClassName="manual"))     # (no other claim takes its PV)
    assert code == 201
    changed = copy.deepcopy(claim)
    changed["spec"]["accessModes"] = ["ReadWriteMany"]
    code, got = _put(api, PVCS, changed)
    assert code == 422 and causes(got) == [("spec", "FieldValueForbidden")]
    assert got["message"].startswith('PersistentVolumeClaim "upd" is invalid: spec: Forbidden: spec is immutable '
                                     "after creation except resources.requests for bound claims\n")
    grown = copy.deepcopy(claim)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    code, got = _put(api, PVCS, grown)
    assert code == 422 and causes(got) == [("spec", "FieldValueForbidden")]      # not bound: no expansion
    named = copy.deepcopy(claim)
    named["spec"]["volumeName"] = "some-pv"
    code, claim = _put(api, PVCS, named)
    assert code == 200 and claim["spec"]["volumeName"] == "some-pv"            # set once ...
    renamed = copy.deepcopy(claim)
    renamed["spec"]["volumeName"] = "other-pv"
    code, got = _put(api, PVCS, renamed)
    assert code == 422 and causes(got) == [("spec", "FieldValueForbidden")]      # ... never changed
    # Bound (by the PV controller, to the volume it names), the claim may grow, not below its capacity.
    assert api("POST", PVS, pv("some-pv", capacity={"storage": "4Gi"}, storageClassName="manual"))[0] == 201
    claim = wait_bound(api, "upd")
    assert claim["status"]["capacity"] == {"storage": "4Gi"}
    grown = copy.deepcopy(claim)
    grown["spec"]["resources"]["requests"]["storage"] = "2Gi"
    code, claim = _put(api, PVCS, grown)
    assert code == 200 and claim["spec"]["resources"]["requests"]["storage"] == "2Gi"   # a bound claim expands
    shrunk = copy.deepcopy(claim)
    shrunk["spec"]["resources"]["requests"]["storage"] = "512Mi"
    code, got = _put(api, PVCS, shrunk)
    assert code == 422 and causes(got) == [("spec.resources.requests.storage", "FieldValueForbidden")]
    mode = copy.deepcopy(claim)
    mode["spec"]["volumeMode"] = "Block"
    code, got = _put(api, PVCS, mode)
    assert code == 422 and ("volumeMode", "FieldValueInvalid") in causes(got)


def test_pv_source_volume_mode_and_set_affinity_are_immutable(api: Http) -> None:
    code, vol = api("POST", PVS, pv("upd-pv", storageClassName="nobody"))
    assert code == 201
    vol = wait_available(api, "upd-pv")               # (the PV controller's first write: Available)
    moved = copy.deepcopy(vol)
    moved["spec"]["hostPath"]["path"] = "/elsewhere"
    code, got = _put(api, PVS, moved)
    assert code == 422 and causes(got) == [("spec.persistentvolumesource", "FieldValueForbidden")]
    assert "spec.persistentvolumesource is immutable after creation\n" in got["message"]
    affinity = {"required": {"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}]}]}}
    pinned = copy.deepcopy(vol)
    pinned["spec"]["nodeAffinity"] = affinity
    code, vol = _put(api, PVS, pinned)
    assert code == 200                                   # may be set when it was not ...
    repinned = copy.deepcopy(vol)
    repinned["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] = ["n2"]
    code, got = _put(api, PVS, repinned)
    assert code == 422 and causes(got) == [("nodeAffinity", "FieldValueInvalid")]   # ... then never changed
    resized = copy.deepcopy(vol)
    resized["spec"]["capacity"] = {"storage": "5Gi"}
    assert _put(api, PVS, resized)[0] == 200


def test_storage_class_fields_are_immutable(api: Http) -> None:
    code, cls = api("POST", f"{STORAGE}/storageclasses", sc("upd-sc", parameters={"type": "gp3"}))
    assert code == 201
    for field, value, wanted in (("parameters", {"type": "io2"}, ("parameters", "FieldValueForbidden")),
                                 ("provisioner", "other.csi.example.com", ("provisioner", "FieldValueForbidden")),
                                 ("reclaimPolicy", "Retain", ("reclaimPolicy", "FieldValueForbidden")),
                                 ("volumeBindingMode", "WaitForFirstConsumer",
                                  ("volumeBindingMode", "FieldValueInvalid"))):
        code, got = api("PUT", f"{STORAGE}/storageclasses/upd-sc", {**cls, field: value})
        assert code == 422 and causes(got) == [wanted], field
    code, _ = api("PUT", f"{STORAGE}/storageclasses/upd-sc", {**cls, "allowVolumeExpansion": True})
    assert code == 200


def test_csinode_driver_entries_change_only_their_allocatable(api: Http) -> None:
    body = {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "upd-node"},
            "spec": {"drivers": [{"name": "ebs.csi.aws.com", "nodeID": "i-1", "allocatable": {"count": 25}}]}}
    code, got = api("POST", f"{STORAGE}/csinodes", body)
    assert code == 201
    more = copy.deepcopy(got)
    more["spec"]["drivers"][0]["allocatable"]["count"] = 39
    code, got = api("PUT", f"{STORAGE}/csinodes/upd-node", more)
    assert code == 200
    moved = copy.deepcopy(got)
    moved["spec"]["drivers"][0]["nodeID"] = "i-2"
    code, got = api("PUT", f"{STORAGE}/csinodes/upd-node", moved)
    assert code == 422 and causes(got) == [("spec.drivers", "FieldValueInvalid")]


# ---- 409 on a stale resourceVersion ------------------------------------------------------------

STALE_CASES = [
    ("persistentvolumes", PVS, lambda: pv("stale-pv", storageClassName="stale-a"), "persistentvolumes"),
    ("persistentvolumeclaims", PVCS, lambda: pvc("stale-pvc", storageClassName="stale-b"), "persistentvolumeclaims"),
    ("storageclasses", f"{STORAGE}/storageclasses", lambda: sc("stale-sc"), "storageclasses.storage.k8s.io"),
    ("nodes", "/api/v1/nodes", lambda: node("stale-node"), "nodes"),
    ("configmaps", "/api/v1/namespaces/default/configmaps",
     lambda: {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "stale-cm"}, "data": {"a": "1"}},
     "configmaps"),
]


STALE_WRITES = ["application/merge-patch+json", "application/strategic-merge-patch+json",
                "application/json-patch+json", "PUT", "status"]
STALE = [(*c, w) for c in STALE_CASES for w in STALE_WRITES
         if not (w == "status" and c[0] in ("storageclasses", "configmaps"))]      # (no status subresource)


@pytest.mark.parametrize(("case", "path", "make", "resource", "ctype"), STALE, ids=[f"{c[0]}-{c[4]}" for c in STALE])
def test_a_stale_resource_version_is_a_409(api: Http, case: str, path: str, make: Any, resource: str,
                                           ctype: str) -> None:
    """Updates and patches that carry ``metadata.resourceVersion`` are refused with kube-apiserver's 409
    when it is not the stored one: the scheduler's PreBind relies on it (claims, volumes)."""
    body = make()
    name = body["metadata"]["name"]
    code, created = api("POST", path, body)
    assert code in (201, 409), created
    current = settled(api, f"{path}/{name}")
    stale = str(int(current["metadata"]["resourceVersion"]) - 1)
    ann = {"metadata": {"resourceVersion": stale, "annotations": {"touched": "yes"}}}
    if ctype == "PUT":
        code, got = api("PUT", f"{path}/{name}", {**current, "metadata": {**current["metadata"], "resourceVersion":
                                                                          stale}})
    elif ctype == "status":
        code, got = api("PATCH", f"{path}/{name}/status", ann, ctype="application/merge-patch+json")
    elif ctype == "application/json-patch+json":
        code, got = api("PATCH", f"{path}/{name}", [
            {"op": "replace", "path": "/metadata/resourceVersion", "value": stale},
            {"op": "add", "path": "/metadata/annotations", "value": {"touched": "yes"}}], ctype=ctype)
    else:
        code, got = api("PATCH", f"{path}/{name}", ann, ctype=ctype)
    assert code == 409, got
    assert got["reason"] == "Conflict"
    assert got["message"] == (f'Operation cannot be fulfilled on {resource} "{name}": the object has been modified; '
                              "please apply your changes to the latest version and try again")
    assert api("GET", f"{path}/{name}")[1]["metadata"]["resourceVersion"] == current["metadata"]["resourceVersion"]
    fresh = {"metadata": {"resourceVersion": current["metadata"]["resourceVersion"],
                          "annotations": {"touched": "yes"}}}
    assert api("PATCH", f"{path}/{name}", fresh, ctype="application/merge-patch+json")[0] == 200


# ---- printer columns through kubectl -----------------------------------------------------------

@needs_kubectl
def test_kubectl_get_pv_pvc_sc_prints_upstreams_columns(api: Http, kubectl: Kubectl, tmp_path: Path) -> None:
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "print"}})
    fast = sc("print-fast", volumeBindingMode="WaitForFirstConsumer", allowVolumeExpansion=True)
    fast["metadata"]["annotations"] = {"storageclass.kubernetes.io/is-default-class": "true"}
    assert api("POST", f"{STORAGE}/storageclasses", fast)[0] == 201
    assert api("POST", PVS, pv("print-pv", capacity={"storage": "5Gi"}, storageClassName="print-fast",
                               accessModes=["ReadWriteOnce", "ReadOnlyMany"]))[0] == 201
    assert api("POST", "/api/v1/namespaces/print/persistentvolumeclaims",
               pvc("print-claim", storageClassName="print-fast"))[0] == 201
    try:
        out = kubectl("get", "pv", "print-pv").stdout.splitlines()
        assert out[0].split() == ["NAME", "CAPACITY", "ACCESS", "MODES", "RECLAIM", "POLICY", "STATUS", "CLAIM",
                                  "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"]
        assert out[1].split()[:7] == ["print-pv", "5Gi", "RWO,ROX", "Retain", "Available", "print-fast", "<unset>"]
        wide = kubectl("get", "pv", "print-pv", "-o", "wide").stdout.splitlines()
        assert wide[0].split()[-1] == "VOLUMEMODE" and wide[1].split()[-1] == "Filesystem"
        out = kubectl("get", "pvc", "-n", "print").stdout.splitlines()
        assert out[0].split() == ["NAME", "STATUS", "VOLUME", "CAPACITY", "ACCESS", "MODES", "STORAGECLASS",
                                  "VOLUMEATTRIBUTESCLASS", "AGE"]
        assert out[1].split()[:4] == ["print-claim", "Pending", "print-fast", "<unset>"]
        out = kubectl("get", "sc", "print-fast").stdout.splitlines()
        assert out[0].split() == ["NAME", "PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE",
                                  "ALLOWVOLUMEEXPANSION", "AGE"]
        assert out[1].split()[:6] == ["print-fast", "(default)", "ebs.csi.aws.com", "Delete",
                                      "WaitForFirstConsumer", "true"]
        both = kubectl("get", "pv,sc", "-o", "name").stdout.split()
        assert "persistentvolume/print-pv" in both and "storageclass.storage.k8s.io/print-fast" in both
    finally:
        for path in (f"{STORAGE}/storageclasses/print-fast",):
            api("DELETE", path)


@needs_kubectl
def test_kubectl_get_csi_kinds_prints_upstreams_columns(api: Http, kubectl: Kubectl) -> None:
    assert api("POST", f"{STORAGE}/csidrivers", {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": "print.csi.example.com"},
        "spec": {"tokenRequests": [{"audience": "vault"}], "storageCapacity": True}})[0] == 201
    assert api("POST", f"{STORAGE}/csinodes", {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "print-node"},
        "spec": {"drivers": [{"name": "print.csi.example.com", "nodeID": "i-1"}]}})[0] == 201
    assert api("POST", f"{STORAGE}/namespaces/default/csistoragecapacities", {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSIStorageCapacity", "metadata": {"name": "print-cap"},
        "storageClassName": "fast", "capacity": "100Gi"})[0] == 201
    out = kubectl("get", "csidriver", "print.csi.example.com").stdout.splitlines()
    assert out[0].split() == ["NAME", "ATTACHREQUIRED", "PODINFOONMOUNT", "STORAGECAPACITY", "TOKENREQUESTS",
                              "REQUIRESREPUBLISH", "MODES", "AGE"]
    assert out[1].split()[:7] == ["print.csi.example.com", "true", "false", "true", "vault", "false", "Persistent"]
    out = kubectl("get", "csinode", "print-node").stdout.splitlines()
    assert out[0].split() == ["NAME", "DRIVERS", "AGE"] and out[1].split()[:2] == ["print-node", "1"]
    out = kubectl("get", "csistoragecapacity", "print-cap").stdout.splitlines()
    assert out[0].split() == ["NAME", "STORAGECLASSNAME", "CAPACITY"]
    assert out[1].split() == ["print-cap", "fast", "100Gi"]
