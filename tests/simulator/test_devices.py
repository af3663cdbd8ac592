"""The simulated controllers around ``resource.k8s.io/v1`` (``scheduler/simulator/devices.py``, issue #19):
the resourceclaim controller (``pkg/controller/resourceclaim/controller.go``: claims from templates,
reservations for pods bound without the scheduler, reservations of finished or deleted pods dropped,
deallocation, generated claims deleted), the kubelet's wait for a pod's claims, and the simulated DRA
driver ``gpu.example.com`` (``--gpus-per-node``, ``--gpu-attributes``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.controllers.gpudriver import load_gpu_attributes
from tests.simulator.helpers import Http, node, wait
from tests.simulator.test_dra import (
    CLAIMS,
    CLASSES,
    FINALIZER,
    MERGE,
    PODS,
    SLICES,
    TEMPLATES,
    Obj,
    causes,
    claim,
    device_class,
    pod,
    template,
)

# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 19, "gpus_per_node": 2, "pod_running_after": 0.05}


# ---- the resourceclaim controller and the kubelet -----------------------------------------------

def _pod_status(api: Http, name: str) -> Obj:
    return api("GET", f"{PODS}/{name}")[1].get("status") or {}


def _generated(api: Http, name: str) -> str:
    statuses = wait(lambda: _pod_status(api, name).get("resourceClaimStatuses"), message="resourceClaimStatuses")
    return str(statuses[0]["resourceClaimName"])


def _allocate(api: Http, claim_name: str, node_name: str, *, reserve_for: Obj | None = None) -> Obj:
    """What the scheduler's PreBind writes: the finalizer, then allocation and reservation in one status write."""
    code, got = api("PATCH", f"{CLAIMS}/{claim_name}", {"metadata": {"finalizers": [FINALIZER]}}, ctype=MERGE)
    assert code == 200, got
    status: Obj = {"allocation": {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com",
                                                           "pool": node_name, "device": "gpu-0"}]}}}
    if reserve_for is not None:
        status["reservedFor"] = [{"resource": "pods", "name": reserve_for["metadata"]["name"],
                                  "uid": reserve_for["metadata"]["uid"]}]
    code, got = api("PATCH", f"{CLAIMS}/{claim_name}/status", {"status": status}, ctype=MERGE)
    assert code == 200, got
    return dict(got)


def _bind(api: Http, name: str, node_name: str) -> None:
    code, got = api("POST", f"{PODS}/{name}/binding", {"apiVersion": "v1", "kind": "Binding",
                                                       "metadata": {"name": name},
                                                       "target": {"kind": "Node", "name": node_name}})
    assert code == 201, got


def test_a_template_claim_is_created_for_the_pod_as_upstreams_controller_creates_it(api: Http) -> None:
    tmpl = template("ctl-one-gpu")
    tmpl["spec"]["metadata"] = {"labels": {"team": "a"}, "annotations": {"note": "from-template"}}
    assert api("POST", TEMPLATES, tmpl)[0] == 201
    code, created = api("POST", PODS, pod("ctl-pod", {"name": "gpu", "resourceClaimTemplateName": "ctl-one-gpu"}))
    assert code == 201, created
    name = _generated(api, "ctl-pod")
    assert name.startswith("ctl-pod-gpu-") and len(name) == len("ctl-pod-gpu-") + 5
    got = api("GET", f"{CLAIMS}/{name}")[1]
    assert got["metadata"]["annotations"] == {"note": "from-template", "resource.kubernetes.io/pod-claim-name": "gpu"}
    assert got["metadata"]["labels"] == {"team": "a"}
    assert got["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "ctl-pod",
                                                   "uid": created["metadata"]["uid"], "controller": True,
                                                   "blockOwnerDeletion": True}]
    assert got["spec"]["devices"]["requests"][0]["exactly"]["count"] == 1
    # The pod deleted, its claim goes with it (the garbage collector, by the owner reference).
    api("DELETE", f"{PODS}/ctl-pod", {"gracePeriodSeconds": 0})
    wait(lambda: api("GET", f"{CLAIMS}/{name}")[0] == 404, message="the generated claim deleted")


def test_long_names_are_shortened_in_proportion_as_upstream(api: Http) -> None:
    assert api("POST", TEMPLATES, template("ctl-long"))[0] == 201
    pod_name, claim_name = "p" * 50, "c" * 20
    assert api("POST", PODS, pod(pod_name, {"name": claim_name, "resourceClaimTemplateName": "ctl-long"}))[0] == 201
    got = _generated(api, pod_name)
    n = len(pod_name) + len(claim_name) + 2
    base = pod_name[:len(pod_name) * 57 // n] + "-" + claim_name[:len(claim_name) * 57 // n]
    assert got.startswith(base) and len(got) == len(base) + 5, got
    api("DELETE", f"{PODS}/{pod_name}", {"gracePeriodSeconds": 0})


def test_a_missing_template_is_an_event_and_the_claim_comes_with_the_template(api: Http) -> None:
    assert api("POST", PODS, pod("ctl-waits", {"name": "gpu", "resourceClaimTemplateName": "ctl-later"}))[0] == 201
    events = wait(lambda: [e for e in api("GET", "/api/v1/namespaces/default/events")[1]["items"]
                           if e["involvedObject"]["name"] == "ctl-waits"
                           and e["reason"] == "FailedResourceClaimCreation"], message="the event")
    assert events[0]["message"] == ('PodResourceClaim gpu: resource claim template "ctl-later": '
                                    'resourceclaimtemplates.resource.k8s.io "ctl-later" not found')
    assert events[0]["type"] == "Warning"
    assert api("POST", TEMPLATES, template("ctl-later"))[0] == 201
    assert _generated(api, "ctl-waits").startswith("ctl-waits-gpu-")
    api("DELETE", f"{PODS}/ctl-waits", {"gracePeriodSeconds": 0})


def test_the_kubelet_starts_a_pod_only_once_its_claims_are_allocated_and_reserved(api: Http) -> None:
    api("POST", "/api/v1/nodes", node("ctl-node"))
    assert api("POST", TEMPLATES, template("ctl-run"))[0] == 201
    assert api("POST", PODS, pod("ctl-runner", {"name": "gpu", "resourceClaimTemplateName": "ctl-run"}))[0] == 201
    name = _generated(api, "ctl-runner")
    _bind(api, "ctl-runner", "ctl-node")
    wait(lambda: api("GET", f"{PODS}/ctl-runner")[1]["spec"].get("nodeName"), message="bound")
    time.sleep(0.3)        # the scenario: past pod_running_after (0.05 s), and still no start (no poll for an absence)
    assert _pod_status(api, "ctl-runner").get("phase") == "Pending"       # the claim is not allocated
    _allocate(api, name, "ctl-node")
    # Bound without the scheduler: the controller reserves the claim for the pod, and the kubelet runs it.
    wait(lambda: _pod_status(api, "ctl-runner").get("phase") == "Running", message="running")
    got = api("GET", f"{CLAIMS}/{name}")[1]
    assert [r["name"] for r in got["status"]["reservedFor"]] == ["ctl-runner"]
    # The pod ends: its reservation goes, the claim is deallocated, the finalizer removed, the claim deleted.
    pod_obj = api("GET", f"{PODS}/ctl-runner")[1]
    code, _ = api("PATCH", f"{PODS}/ctl-runner/status", {"status": {"phase": "Succeeded"}}, ctype=MERGE)
    assert code == 200
    wait(lambda: api("GET", f"{CLAIMS}/{name}")[0] == 404, message="the claim of a finished pod deleted")
    assert pod_obj["metadata"]["uid"]
    api("DELETE", f"{PODS}/ctl-runner", {"gracePeriodSeconds": 0})


def test_a_shared_claim_is_deallocated_when_its_last_consumer_is_gone(api: Http) -> None:
    assert api("POST", CLAIMS, claim("ctl-shared"))[0] == 201
    assert api("POST", PODS, pod("ctl-user", {"name": "gpu", "resourceClaimName": "ctl-shared"}))[0] == 201
    user = api("GET", f"{PODS}/ctl-user")[1]
    _allocate(api, "ctl-shared", "n1", reserve_for=user)
    got = api("GET", f"{CLAIMS}/ctl-shared")[1]
    assert got["status"]["reservedFor"][0]["uid"] == user["metadata"]["uid"]
    api("DELETE", f"{PODS}/ctl-user", {"gracePeriodSeconds": 0})

    def released() -> Obj | None:
        c = api("GET", f"{CLAIMS}/ctl-shared")[1]
        return c if not c.get("status") and not c["metadata"].get("finalizers") else None
    wait(released, message="reservation dropped, allocation cleared, finalizer removed")


def test_a_deleted_allocated_claim_is_released(api: Http) -> None:
    assert api("POST", CLAIMS, claim("ctl-deleted"))[0] == 201
    _allocate(api, "ctl-deleted", "n1")
    code, _ = api("DELETE", f"{CLAIMS}/ctl-deleted")
    assert code == 200
    wait(lambda: api("GET", f"{CLAIMS}/ctl-deleted")[0] == 404, message="deallocated and gone")


def test_new_consumers_are_refused_once_the_claim_is_being_deleted(api: Http) -> None:
    assert api("POST", CLAIMS, claim("ctl-closing"))[0] == 201
    api("PATCH", f"{CLAIMS}/ctl-closing", {"metadata": {"finalizers": ["example.com/hold"]}}, ctype=MERGE)
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]}}
    assert api("PATCH", f"{CLAIMS}/ctl-closing/status", {"status": {"allocation": allocation}}, ctype=MERGE)[0] == 200
    api("DELETE", f"{CLAIMS}/ctl-closing")
    code, got = api("PATCH", f"{CLAIMS}/ctl-closing/status", {"status": {"reservedFor": [
        {"resource": "pods", "name": "p", "uid": "u"}]}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("status.reservedFor", "FieldValueForbidden")], got
    api("PATCH", f"{CLAIMS}/ctl-closing", {"metadata": {"finalizers": None}}, ctype=MERGE)


# ---- the simulated DRA driver ---------------------------------------------------------------------

def test_each_node_gets_a_slice_of_gpus_and_the_class_exists(api: Http) -> None:
    created = api("POST", "/api/v1/nodes", node("gpu-node"))[1]
    slices = wait(lambda: [s for s in api("GET", SLICES)[1]["items"] if s["spec"].get("nodeName") == "gpu-node"],
                  message="the node's slice")
    assert len(slices) == 1
    s = slices[0]
    assert s["metadata"]["name"].startswith("gpu-node-gpu.example.com-")
    assert s["metadata"]["ownerReferences"] == [{"apiVersion": "v1", "kind": "Node", "name": "gpu-node",
                                                 "uid": created["metadata"]["uid"], "controller": True}]
    assert s["spec"]["driver"] == "gpu.example.com"
    assert s["spec"]["pool"] == {"name": "gpu-node", "generation": 0, "resourceSliceCount": 1}
    assert [d["name"] for d in s["spec"]["devices"]] == ["gpu-0", "gpu-1"]
    d = s["spec"]["devices"][1]
    assert d["attributes"]["index"] == {"int": 1} and d["attributes"]["model"] == {"string": "LATEST-GPU-MODEL"}
    assert d["attributes"]["driverVersion"] == {"version": "1.0.0"}
    assert d["attributes"]["uuid"]["string"].startswith("gpu-")
    assert d["capacity"] == {"memory": {"value": "80Gi"}}
    cls = api("GET", f"{CLASSES}/gpu.example.com")[1]
    assert cls["spec"]["selectors"] == [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]
    # The node goes, its slice with it; a new node of the same name at once gets a slice of its own.
    api("DELETE", "/api/v1/nodes/gpu-node")
    again = api("POST", "/api/v1/nodes", node("gpu-node"))[1]

    def owners() -> list[str]:
        return [r["uid"] for s in api("GET", SLICES)[1]["items"] if s["spec"].get("nodeName") == "gpu-node"
                for r in s["metadata"]["ownerReferences"]]
    wait(lambda: owners() == [again["metadata"]["uid"]], message="only the new node's slice")
    api("DELETE", "/api/v1/nodes/gpu-node")
    wait(lambda: not owners(), message="the slice gone with its node")


def test_the_gpu_description_comes_from_a_file(tmp_path: Path) -> None:
    default = load_gpu_attributes()
    assert default == {"model": "LATEST-GPU-MODEL", "memory": "80Gi", "driverVersion": "1.0.0", "attributes": {}}
    f = tmp_path / "gpus.yaml"
    f.write_text("model: H100\nmemory: 94Gi\nattributes:\n  productName: Example\n  mig: true\n")
    assert load_gpu_attributes(f) == {"model": "H100", "memory": "94Gi", "driverVersion": "1.0.0",
                                      "attributes": {"productName": "Example", "mig": True}}
    for text, error in (("model: x\nmodl: x\n", r"unknown key\(s\) modl"), ("memory: lots\n", "not a quantity"),
                        ("driverVersion: '1.0'\n", "semver"), ("attributes: {'bad name': 1}\n", "C identifier"),
                        ("- a\n", "expected a mapping")):
        f.write_text(text)
        with pytest.raises(ValueError, match=error):
            load_gpu_attributes(f)


def test_a_custom_description_is_published_and_a_class_given_is_kept() -> None:
    desc = {"model": "H100", "memory": "94Gi", "driverVersion": "2.1.0", "attributes": {"productName": "Example"}}
    c = SimulatedCluster(gpus_per_node=1, gpu_attributes=desc)
    c.start()
    try:
        api = Http(c)
        mine = device_class("gpu.example.com", selectors=[{"cel": {"expression": "true"}}])
        assert api("POST", CLASSES, mine)[0] == 201
        api("POST", "/api/v1/nodes", node("n1"))
        (s,) = wait(lambda: api("GET", SLICES)[1]["items"], message="the slice")
        (d,) = s["spec"]["devices"]
        assert d["attributes"] == {"driverVersion": {"version": "2.1.0"}, "index": {"int": 0},
                                   "model": {"string": "H100"}, "productName": {"string": "Example"},
                                   "uuid": d["attributes"]["uuid"]}
        assert d["capacity"] == {"memory": {"value": "94Gi"}}
        assert api("GET", f"{CLASSES}/gpu.example.com")[1]["spec"] == mine["spec"]
    finally:
        c.stop()


def test_the_kubelet_waits_for_the_extended_resource_claim_too(api: Http) -> None:
    """A pod whose extended resources are backed by DRA (status.extendedResourceClaimStatus, the claim the
    scheduler's PreBind creates) runs only once that claim is allocated and reserved for it; when the pod is
    gone its reservation goes and the claim is deallocated."""
    api("POST", "/api/v1/nodes", node("ext-node"))
    body = pod("ext-user")
    body["spec"].pop("resourceClaims")
    body["spec"]["containers"][0]["resources"] = {"requests": {"example.com/gpu": "1"},
                                                  "limits": {"example.com/gpu": "1"}}
    created = api("POST", PODS, body)[1]
    assert api("POST", CLAIMS, claim("ext-user-extended-resources-abcde"))[0] == 201
    code, got = api("PATCH", f"{PODS}/ext-user/status", {"status": {"extendedResourceClaimStatus": {
        "resourceClaimName": "ext-user-extended-resources-abcde",
        "requestMappings": [{"containerName": "c", "resourceName": "example.com/gpu", "requestName": "gpu"}]}}},
        ctype=MERGE)
    assert code == 200, got
    _bind(api, "ext-user", "ext-node")
    time.sleep(0.3)        # the scenario: past pod_running_after (0.05 s), and still no start (no poll for an absence)
    assert _pod_status(api, "ext-user").get("phase") == "Pending"
    _allocate(api, "ext-user-extended-resources-abcde", "ext-node", reserve_for=created)
    wait(lambda: _pod_status(api, "ext-user").get("phase") == "Running", message="running")
    api("DELETE", f"{PODS}/ext-user", {"gracePeriodSeconds": 0})

    def released() -> bool:
        c = api("GET", f"{CLAIMS}/ext-user-extended-resources-abcde")[1]
        return not c.get("status") and not c["metadata"].get("finalizers")
    wait(released, message="reservation dropped, allocation cleared")


def test_partitioned_gpus_are_published_whole_and_as_halves_sharing_counters(tmp_path: Path) -> None:
    """``partitions: true``: the node's pool holds a slice of counter sets (one per GPU, its memory) and a
    slice of devices: each GPU whole and as two halves, all consuming that GPU's counters; the API
    accepts both (they are created, not refused)."""
    f = tmp_path / "gpus.yaml"
    f.write_text("memory: 80Gi\npartitions: true\n")
    c = SimulatedCluster(gpus_per_node=2, gpu_attributes=load_gpu_attributes(f))
    c.start()
    try:
        api = Http(c)
        api("POST", "/api/v1/nodes", node("n1"))
        def both() -> list[Obj] | None:
            items: list[Obj] = api("GET", SLICES)[1]["items"]
            return items if len(items) == 2 else None
        slices = wait(both, message="the two slices")
        (counters,) = [s["spec"] for s in slices if "sharedCounters" in s["spec"]]
        (devices,) = [s["spec"] for s in slices if "devices" in s["spec"]]
        assert counters["pool"] == devices["pool"] == {"name": "n1", "generation": 0, "resourceSliceCount": 2}
        assert counters["sharedCounters"] == [{"name": f"gpu-{i}", "counters": {"memory": {"value": "80Gi"}}}
                                              for i in range(2)]
        half = "42949672960"        # 40Gi
        assert [(d["name"], d["attributes"]["partition"]["string"], d["capacity"]["memory"]["value"],
                 d["consumesCounters"]) for d in devices["devices"]] == [
            (f"gpu-{i}{part}", kind, memory, [{"counterSet": f"gpu-{i}", "counters": {"memory": {"value": memory}}}])
            for i in range(2) for part, kind, memory in (("", "whole", "80Gi"), ("-half-0", "half", half),
                                                         ("-half-1", "half", half))]
    finally:
        c.stop()


def test_gpus_with_binding_conditions_are_attached_after_the_delay(tmp_path: Path) -> None:
    """``bindingDelaySeconds`` in the description: the GPUs are published with binding conditions
    (and bindsToNode); a claim allocated one gets the ``attached`` condition True in its
    ``status.devices`` once the delay has passed, not before."""
    f = tmp_path / "gpus.yaml"
    f.write_text("bindingDelaySeconds: 0.5\n")
    desc = load_gpu_attributes(f)
    assert desc["bindingDelaySeconds"] == 0.5
    f.write_text("bindingDelaySeconds: -1\n")
    with pytest.raises(ValueError, match="bindingDelaySeconds"):
        load_gpu_attributes(f)
    c = SimulatedCluster(gpus_per_node=1, gpu_attributes=desc)
    c.start()
    try:
        api = Http(c)
        api("POST", "/api/v1/nodes", node("n1"))
        (s,) = wait(lambda: api("GET", SLICES)[1]["items"], message="the slice")
        (d,) = s["spec"]["devices"]
        assert d["bindingConditions"] == ["gpu.example.com/attached"]
        assert d["bindingFailureConditions"] == ["gpu.example.com/attach-failed"] and d["bindsToNode"] is True
        assert api("POST", CLAIMS, claim("attach-me"))[0] == 201
        status: Obj = {"allocation": {"devices": {"results": [{
            "request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0",
            "bindingConditions": ["gpu.example.com/attached"],
            "bindingFailureConditions": ["gpu.example.com/attach-failed"]}]}}}
        assert api("PATCH", f"{CLAIMS}/attach-me/status", {"status": status}, ctype=MERGE)[0] == 200
        written = time.monotonic()
        assert not (api("GET", f"{CLAIMS}/attach-me")[1]["status"].get("devices"))
        devices = wait(lambda: api("GET", f"{CLAIMS}/attach-me")[1]["status"].get("devices"),
                       message="the device attached")
        assert time.monotonic() - written >= 0.4
        (reported,) = devices
        assert (reported["driver"], reported["pool"], reported["device"]) == ("gpu.example.com", "n1", "gpu-0")
        assert [(c["type"], c["status"]) for c in reported["conditions"]] == [("gpu.example.com/attached", "True")]
    finally:
        c.stop()
