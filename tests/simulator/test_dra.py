"""``resource.k8s.io/v1`` as kube-apiserver serves it (``scheduler/simulator/dra.py``, issue #19), and the
pod's side of it: discovery, OpenAPI, defaulting, validation as a table (cases ported from
``pkg/apis/resource/validation/validation_*_test.go`` and ``pkg/apis/core/validation``, named after
them), the update and status subresource rules, and the printer columns through the real kubectl 1.37.
The controllers around these kinds are ``test_devices.py``'s."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from tests.dra.expressions import nested_comprehensions
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

Obj = dict[str, Any]
G = "/apis/resource.k8s.io/v1"
CLASSES, SLICES = f"{G}/deviceclasses", f"{G}/resourceslices"
CLAIMS, TEMPLATES = f"{G}/namespaces/default/resourceclaims", f"{G}/namespaces/default/resourceclaimtemplates"
PODS = "/api/v1/namespaces/default/pods"
FINALIZER = "resource.kubernetes.io/delete-protection"
MERGE = "application/merge-patch+json"
BAD_NAME = "!@#$%^"


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 19}


def claim(name: str, *requests: Obj, **devices: Any) -> Obj:
    reqs = list(requests) or [{"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com"}}]
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
            "spec": {"devices": {"requests": reqs, **devices}}}


def template(name: str, *requests: Obj) -> Obj:
    c = claim(name, *requests)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": c["spec"]}}


def device_class(name: str, **spec: Any) -> Obj:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
            "spec": spec or {"selectors": [{"cel": {"expression": 'device.driver == "x.example.com"'}}]}}


def resource_slice(name: str, **spec: Any) -> Obj:
    base: Obj = {"driver": "test.example.com", "nodeName": "worker",
                 "pool": {"name": "worker", "generation": 0, "resourceSliceCount": 1},
                 "devices": [{"name": "device-0", "attributes": {"model": {"string": "x"}}}]}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {k: v for k, v in base.items() if v is not None}}


def pod(name: str, *claims: Obj, container_claims: list[Obj] | None = None) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "resourceClaims": list(claims),
        "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                        "resources": {"claims": container_claims if container_claims is not None
                                      else [{"name": c["name"]} for c in claims]}}]}}


def causes(body: Obj) -> list[tuple[str, str]]:
    return [(c["field"], c["reason"]) for c in (body.get("details") or {}).get("causes") or []]


def messages(body: Obj) -> list[str]:
    return [c["message"] for c in (body.get("details") or {}).get("causes") or []]


# ---- discovery and OpenAPI ---------------------------------------------------------------------

def test_discovery_serves_the_four_kinds(api: Http) -> None:
    groups = {g["name"]: g for g in api("GET", "/apis")[1]["groups"]}
    assert groups["resource.k8s.io"]["preferredVersion"]["version"] == "v1"
    res = {r["name"]: r for r in api("GET", G)[1]["resources"]}
    assert {"deviceclasses", "resourceclaims", "resourceclaims/status", "resourceclaimtemplates",
            "resourceslices"} <= set(res)
    assert not res["deviceclasses"]["namespaced"] and not res["resourceslices"]["namespaced"]
    assert res["resourceclaims"]["namespaced"] and res["resourceclaimtemplates"]["namespaced"]


def test_openapi_carries_the_kinds_schemas(api: Http) -> None:
    code, doc = api("GET", "/openapi/v3/apis/resource.k8s.io/v1")
    assert code == 200
    schemas = doc["components"]["schemas"]
    assert {"io.k8s.api.resource.v1.ResourceClaim", "io.k8s.api.resource.v1.ResourceSlice",
            "io.k8s.api.resource.v1.DeviceClass", "io.k8s.api.resource.v1.ResourceClaimTemplate"} <= set(schemas)
    reserved = schemas["io.k8s.api.resource.v1.ResourceClaimStatus"]["properties"]["reservedFor"]
    assert reserved["x-kubernetes-list-map-keys"] == ["uid"]


def test_a_wrong_json_type_is_the_decoders_400(api: Http) -> None:
    body = claim("wrong-type", {"name": "gpu", "exactly": {"deviceClassName": "c", "count": "one"}})
    code, got = api("POST", CLAIMS, body)
    assert code == 400, got
    assert "cannot unmarshal string into Go struct field" in got["message"] and "of type int64" in got["message"]


def test_a_slices_pool_generation_reads_0_when_not_sent(api: Http) -> None:
    body = resource_slice("no-generation", pool={"name": "p", "resourceSliceCount": 1})
    code, got = api("POST", SLICES, body)
    assert code == 201 and got["spec"]["pool"] == {"name": "p", "generation": 0, "resourceSliceCount": 1}, got


def test_slices_select_by_node_and_driver_fields(api: Http) -> None:
    code, got = api("GET", SLICES, params={"fieldSelector": "spec.nodeName=nowhere,spec.driver=gpu.example.com"})
    assert code == 200 and got["items"] == []
    code, _ = api("GET", SLICES, params={"fieldSelector": "spec.pool=x"})
    assert code == 400


# ---- defaulting --------------------------------------------------------------------------------

def test_requests_are_defaulted_as_resource_v1_defaults_go(api: Http) -> None:
    body = claim("defaults", {"name": "one", "exactly": {"deviceClassName": "gpu.example.com", "tolerations": [
        {"key": "example.com/t", "effect": "NoSchedule"}]}},
                 {"name": "all", "exactly": {"deviceClassName": "gpu.example.com", "allocationMode": "All"}},
                 {"name": "either", "firstAvailable": [{"name": "big", "deviceClassName": "gpu.example.com"}]})
    code, got = api("POST", CLAIMS, body)
    assert code == 201, got
    one, everything, either = got["spec"]["devices"]["requests"]
    assert (one["exactly"]["allocationMode"], one["exactly"]["count"]) == ("ExactCount", 1)
    assert one["exactly"]["tolerations"][0]["operator"] == "Equal"
    assert everything["exactly"]["allocationMode"] == "All" and "count" not in everything["exactly"]
    assert (either["firstAvailable"][0]["allocationMode"], either["firstAvailable"][0]["count"]) == ("ExactCount", 1)
    assert got["metadata"]["generation"] == 1 and "status" not in got


# ---- validation: a table -----------------------------------------------------------------------

def _allocation_mode_claim() -> Obj:
    """validation_resourceclaim_test.go "allocation-mode": count -1, an unknown mode, All with a count, a
    duplicate name."""
    def req(name: str, **exactly: Any) -> Obj:
        return {"name": name, "exactly": {"deviceClassName": "gpu.example.com", **exactly}}
    return claim("bad", req("foo", allocationMode="ExactCount", count=1), req("foo2", allocationMode="All"),
                 req("foo3", allocationMode="ExactCount", count=-1), req("foo4", allocationMode="other"),
                 req("foo5", allocationMode="All", count=2), req("foo", allocationMode="ExactCount", count=1))


def _invalid_spec_claim() -> Obj:
    """validation_resourceclaim_test.go "invalid-spec": constraints and config naming a bad request, a
    matchAttribute without a domain, a constraint without an attribute."""
    return claim("bad", constraints=[{"requests": ["gpu", BAD_NAME], "matchAttribute": "missing-domain"},
                                     {}],
                 config=[{"requests": ["gpu", BAD_NAME], "opaque": {"driver": "dra.example.com", "parameters": {
                     "kind": "foo", "apiVersion": "dra.example.com/v1"}}}])


# validation_resourceclaim_test.go "CEL-cost" (from validatingadmissionpolicy_test.go): estimated at
# 85,555,551, over CELSelectorExpressionMaxCost.
EXPENSIVE = ("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, 9, "
             "10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, 4, 5, "
             "6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))")


def _cel_length_claim() -> Obj:
    """validation_resourceclaim_test.go "CEL-length": a selector of exactly 10 KiB, and one a byte over."""
    expression = 'device.driver == ""'
    fits = expression.replace('""', '"' + "x" * (10 * 1024 - len(expression)) + '"')
    over = expression.replace('""', '"' + "x" * (10 * 1024 - len(expression) + 1) + '"')
    return claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c"}},
                 {"name": "gpu-2", "exactly": {"deviceClassName": "c", "selectors": [
                     {"cel": {"expression": fits}}, {"cel": {"expression": over}}]}})


def _too_many_requests() -> Obj:
    return claim("bad", *({"name": f"r{i}", "exactly": {"deviceClassName": "c"}} for i in range(33)))


CREATE_CASES = [
    # (upstream file and case, or what the case is; path; body; wanted causes (field, reason))
    ("resourceclaim: missing-classname", CLAIMS, claim("bad", {"name": "gpu", "exactly": {}}),
     [("spec.devices.requests[0].exactly.deviceClassName", "FieldValueRequired")]),
    ("resourceclaim: bad-classname", CLAIMS, claim("bad", {"name": "gpu", "exactly": {"deviceClassName": BAD_NAME}}),
     [("spec.devices.requests[0].exactly.deviceClassName", "FieldValueInvalid")]),
    ("resourceclaim: allocation-mode", CLAIMS, _allocation_mode_claim(),
     [("spec.devices.requests[2].exactly.count", "FieldValueInvalid"),
      ("spec.devices.requests[3].exactly.allocationMode", "FieldValueNotSupported"),
      ("spec.devices.requests[4].exactly.count", "FieldValueInvalid"),
      ("spec.devices.requests[5]", "FieldValueDuplicate")]),
    ("resourceclaim: invalid-spec", CLAIMS, _invalid_spec_claim(),
     [("spec.devices.constraints[0].requests[1]", "FieldValueInvalid"),
      ("spec.devices.constraints[0].requests[1]", "FieldValueInvalid"),
      ("spec.devices.constraints[0].matchAttribute", "FieldValueInvalid"),
      ("spec.devices.constraints[0].matchAttribute", "FieldValueInvalid"),
      ("spec.devices.constraints[1].matchAttribute", "FieldValueRequired"),
      ("spec.devices.config[0].requests[1]", "FieldValueInvalid"),
      ("spec.devices.config[0].requests[1]", "FieldValueInvalid")]),
    ("resourceclaim: CEL-length", CLAIMS, _cel_length_claim(),
     [("spec.devices.requests[1].exactly.selectors[1].cel.expression", "FieldValueTooLong")]),
    ("resourceclaim: CEL-cost", CLAIMS,
     claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [{"cel": {"expression": EXPENSIVE}}]}}),
     [("spec.devices.requests[0].exactly.selectors[0].cel.expression", "FieldValueForbidden")]),
    ("deviceclass: CEL-cost", CLASSES, device_class("bad.example.com", selectors=[{"cel": {"expression": EXPENSIVE}}]),
     [("spec.selectors[0].cel.expression", "FieldValueForbidden")]),
    ("resourceclaimtemplate: CEL-cost", TEMPLATES,
     template("bad", {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [{"cel": {"expression": EXPENSIVE}}]}}),
     [("spec.spec.devices.requests[0].exactly.selectors[0].cel.expression", "FieldValueForbidden")]),
    ("resourceclaim: invalid-request (too many requests)", CLAIMS, _too_many_requests(),
     [("spec.devices.requests", "FieldValueTooMany")]),
    ("neither exactly nor firstAvailable", CLAIMS, claim("bad", {"name": "gpu"}),
     [("spec.devices.requests[0]", "FieldValueRequired")]),
    ("both exactly and firstAvailable", CLAIMS,
     claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c"},
                   "firstAvailable": [{"name": "a", "deviceClassName": "c"}]}),
     [("spec.devices.requests[0]", "FieldValueInvalid")]),
    ("a request name that is no DNS label", CLAIMS,
     claim("bad", {"name": "GPU_1", "exactly": {"deviceClassName": "c"}}),
     [("spec.devices.requests[0].name", "FieldValueInvalid")]),
    ("a subrequest without a class, subrequests twice", CLAIMS,
     claim("bad", {"name": "gpu", "firstAvailable": [{"name": "a"}, {"name": "a", "deviceClassName": "c"}]}),
     [("spec.devices.requests[0].firstAvailable[0].deviceClassName", "FieldValueRequired"),
      ("spec.devices.requests[0].firstAvailable[1]", "FieldValueDuplicate")]),
    ("a selector without cel", CLAIMS,
     claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [{}]}}),
     [("spec.devices.requests[0].exactly.selectors[0].cel", "FieldValueRequired")]),
    ("a constraint naming a request and subrequest that exist is fine; one that does not is not", CLAIMS,
     claim("bad", {"name": "gpu", "firstAvailable": [{"name": "big", "deviceClassName": "c"}]},
           constraints=[{"requests": ["gpu/big", "gpu/small"], "matchAttribute": "gpu.example.com/model"}]),
     [("spec.devices.constraints[0].requests[1]", "FieldValueInvalid")]),
    ("a config without opaque", CLAIMS, claim("bad", config=[{"requests": ["gpu"]}]),
     [("spec.devices.config[0].opaque", "FieldValueRequired")]),
    ("a claim with a bad label", CLAIMS,
     {**claim("bad"), "metadata": {"name": "bad", "labels": {"hello-world": "spaces not allowed"}}},
     [("metadata.labels", "FieldValueInvalid")]),
    ("resourceclaimtemplate: the claim spec under spec.spec", TEMPLATES, template("bad", {"name": "gpu"}),
     [("spec.spec.devices.requests[0]", "FieldValueRequired")]),
    ("deviceclass: a selector without cel", CLASSES, device_class("bad.example.com", selectors=[{}]),
     [("spec.selectors[0].cel", "FieldValueRequired")]),
    ("deviceclass: an empty expression", CLASSES,
     device_class("bad.example.com", selectors=[{"cel": {"expression": ""}}]),
     [("spec.selectors[0].cel.expression", "FieldValueRequired")]),
    ("deviceclass: a selector that does not compile", CLASSES,
     device_class("bad.example.com", selectors=[{"cel": {"expression": "device.driver =="}},
                                                {"cel": {"expression": "other.driver == 'x'"}}]),
     [("spec.selectors[0].cel.expression", "FieldValueInvalid"),
      ("spec.selectors[1].cel.expression", "FieldValueInvalid")]),
    ("deviceclass: a bad extended resource name", CLASSES,
     device_class("bad.example.com", extendedResourceName="gpu"),
     [("spec.extendedResourceName", "FieldValueInvalid")]),
    ("deviceclass: bad-name", CLASSES, device_class(BAD_NAME), [("metadata.name", "FieldValueInvalid")]),
    ("resourceslice: too-large", SLICES,
     resource_slice("bad", devices=[{"name": f"device-{i}"} for i in range(129)]),
     [("spec.devices", "FieldValueTooMany")]),
    ("resourceslice: bad-pool (no name, no slice count, negative generation)", SLICES,
     resource_slice("bad", pool={"name": "", "resourceSliceCount": 0, "generation": -1}),
     [("spec.pool.name", "FieldValueRequired"), ("spec.pool.resourceSliceCount", "FieldValueInvalid"),
      ("spec.pool.generation", "FieldValueInvalid")]),
    ("resourceslice: missing driver", SLICES, resource_slice("bad", driver=""),
     [("spec.driver", "FieldValueRequired"), ("spec.driver", "FieldValueInvalid")]),
    ("resourceslice: no node selection", SLICES, resource_slice("bad", nodeName=None),
     [("spec", "FieldValueRequired")]),
    ("resourceslice: several node selections", SLICES, resource_slice("bad", allNodes=True),
     [("spec", "FieldValueInvalid")]),
    ("resourceslice: a node selector of two terms", SLICES, resource_slice("bad", nodeName=None, nodeSelector={
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a"]}]},
                              {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["b"]}]}]}),
     [("spec.nodeSelector.nodeSelectorTerms", "FieldValueInvalid")]),
    ("resourceslice: duplicate device names", SLICES,
     resource_slice("bad", devices=[{"name": "device-0"}, {"name": "device-0"}]),
     [("spec.devices[1]", "FieldValueDuplicate")]),
    ("resourceslice: bad-attribute (two values, a bad version, a long string)", SLICES,
     resource_slice("bad", devices=[{"name": "device-0", "attributes": {
         "both": {"int": 1, "bool": True}, "version": {"version": "1.0"}, "long": {"string": "x" * 65}}}]),
     [("spec.devices[0].attributes[both]", "FieldValueInvalid"),
      ("spec.devices[0].attributes[long].string", "FieldValueTooLong"),
      ("spec.devices[0].attributes[version].version", "FieldValueInvalid")]),
    ("resourceslice: a device placed without perDeviceNodeSelection", SLICES,
     resource_slice("bad", devices=[{"name": "device-0", "nodeName": "worker"}]),
     [("spec.devices[0]", "FieldValueInvalid")]),
    ("resourceslice: a device name that is no DNS label", SLICES,
     resource_slice("bad", devices=[{"name": "GPU 0"}]), [("spec.devices[0].name", "FieldValueInvalid")]),
    # partitionable devices (validateCounterSet, validateDeviceCounterConsumption)
    ("resourceslice: counter sets beside devices, nine sets, a set without counters", SLICES,
     resource_slice("bad", sharedCounters=[{"name": f"set-{i}", "counters": {"mem": {"value": "1"}}}
                                           for i in range(9)]),
     [("spec", "FieldValueInvalid"), ("spec.sharedCounters", "FieldValueTooMany")]),
    ("resourceslice: counter set names and counter names are DNS labels, unique", SLICES,
     resource_slice("bad", devices=None, sharedCounters=[
         {"name": "Set", "counters": {"mem_1": {"value": "1"}}}, {"name": "ok"}, {"name": "ok", "counters": {
             "mem": {"value": "1"}}}]),
     [("spec.sharedCounters[0].name", "FieldValueInvalid"),
      ("spec.sharedCounters[0].counters[mem_1]", "FieldValueInvalid"),
      ("spec.sharedCounters[1].counters", "FieldValueRequired"), ("spec.sharedCounters[2]", "FieldValueDuplicate")]),
    ("resourceslice: a device consuming counters of no named set, three consumptions", SLICES,
     resource_slice("bad", devices=[
         {"name": "d0", "consumesCounters": [{"counters": {"mem": {"value": "1"}}}]},
         {"name": "d1", "consumesCounters": [{"counterSet": f"s{i}", "counters": {"mem": {"value": "1"}}}
                                             for i in range(3)]}]),
     [("spec.devices[0].consumesCounters[0].counterSet", "FieldValueRequired"),
      ("spec.devices[1].consumesCounters", "FieldValueTooMany")]),
    # consumable capacity (validateRequestPolicy)
    ("resourceslice: request policies (both kinds, unsorted values, default missing from them, range bounds)",
     SLICES, resource_slice("bad", devices=[{"name": "d0", "allowMultipleAllocations": True, "capacity": {
         "both": {"value": "10", "requestPolicy": {"default": "1", "validValues": ["1"],
                                                    "validRange": {"min": "1"}}},
         "values": {"value": "10", "requestPolicy": {"default": "3", "validValues": ["2", "1", "20"]}},
         "nodefault": {"value": "10", "requestPolicy": {"validRange": {"min": "1"}}},
         "range": {"value": "10", "requestPolicy": {"default": "1", "validRange": {
             "min": "2", "max": "12", "step": "4"}}}}}]),
     [("spec.devices[0].capacity[both].requestPolicy", "FieldValueForbidden"),
      ("spec.devices[0].capacity[values].requestPolicy.validValues[1]", "FieldValueInvalid"),
      ("spec.devices[0].capacity[values].requestPolicy.validValues[2]", "FieldValueInvalid"),
      ("spec.devices[0].capacity[values].requestPolicy.validValues", "FieldValueInvalid"),
      ("spec.devices[0].capacity[nodefault].requestPolicy.default", "FieldValueRequired"),
      ("spec.devices[0].capacity[range].requestPolicy.validRange.min", "FieldValueInvalid"),
      ("spec.devices[0].capacity[range].requestPolicy.validRange.max", "FieldValueInvalid"),
      ("spec.devices[0].capacity[range].requestPolicy.validRange.step", "FieldValueInvalid"),
      ("spec.devices[0].capacity[range].requestPolicy.validRange.step", "FieldValueInvalid")]),
]


@pytest.mark.parametrize(("path", "body", "want"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create_is_validated_as_kube_apiserver_validates(api: Http, path: str, body: Obj,
                                                         want: list[tuple[str, str]]) -> None:
    code, got = api("POST", path, copy.deepcopy(body))
    assert code == 422, got
    assert sorted(causes(got)) == sorted(want), got["message"]


def test_messages_are_upstreams(api: Http) -> None:
    got = api("POST", CLAIMS, claim("bad", {"name": "gpu"}, {"name": "two", "exactly": {
        "deviceClassName": "c", "allocationMode": "All", "count": 2}}))[1]
    assert got["message"] == (
        'ResourceClaim.resource.k8s.io "bad" is invalid: [spec.devices.requests[0]: Required value: exactly one of '
        "`exactly` or `firstAvailable` is required, spec.devices.requests[1].exactly.count: Invalid value: 2: must "
        "not be specified when allocationMode is 'All']")
    got = api("POST", SLICES, resource_slice("bad", nodeName=None))[1]
    assert messages(got) == ["Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
                             "`perDeviceNodeSelection` is required"]
    got = api("POST", SLICES, resource_slice("bad", allNodes=True))[1]
    assert messages(got) == ['Invalid value: "{`nodeName`, `allNodes`}": exactly one of `nodeName`, `nodeSelector`, '
                             "`allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"]


def test_a_selector_compile_error_is_cel_gos(api: Http) -> None:
    got = api("POST", CLAIMS, claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [
        {"cel": {"expression": "foo.bar"}}]}}))[1]
    assert messages(got) == ["Invalid value: \"foo.bar\": compilation failed: ERROR: <input>:1:1: undeclared "
                             "reference to 'foo' (in container '')\n | foo.bar\n | ^"]
    selector = ('device.driver == "gpu.example.com" && device.attributes["gpu.example.com"].model == "x" && '
                'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0')
    code, got = api("POST", CLASSES, device_class("compiles.example.com", selectors=[{"cel": {"expression": selector}}]))
    assert code == 201, got


def test_a_selector_over_the_cost_limit_is_forbidden_in_upstreams_words(api: Http) -> None:
    # Issue #32: four nested comprehensions over literal lists of 60 elements (145.6 million
    # in cel-go's estimate) are refused before they are stored; one nesting less (2.0 million) too,
    # and two (26 thousand) fit.
    got = api("POST", CLAIMS, claim("bad", {"name": "gpu", "exactly": {"deviceClassName": "c", "selectors": [
        {"cel": {"expression": nested_comprehensions(4)}}]}}))[1]
    assert got["message"] == ('ResourceClaim.resource.k8s.io "bad" is invalid: spec.devices.requests[0].exactly.'
                              "selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit")
    assert api("POST", CLASSES, device_class("three.example.com", selectors=[
        {"cel": {"expression": nested_comprehensions(3)}}]))[0] == 422
    code, got = api("POST", CLASSES, device_class("two.example.com", selectors=[
        {"cel": {"expression": nested_comprehensions(2)}}]))
    assert code == 201, got


def test_admin_access_needs_the_namespace_label(api: Http) -> None:
    """The claim and template strategies' AuthorizedForAdmin (registry/resource/*/strategy_test.go's
    adminAccessError)."""
    admin = {"name": "gpu", "exactly": {"deviceClassName": "c", "adminAccess": True}}
    code, got = api("POST", CLAIMS, claim("admin", admin))
    assert code == 422 and causes(got) == [("spec.devices.requests[0].exactly.adminAccess", "FieldValueForbidden")]
    assert messages(got) == ["Forbidden: admin access to devices requires the `resource.kubernetes.io/admin-access: "
                             "true` label on the containing namespace"]
    code, got = api("POST", TEMPLATES, template("admin", admin))
    assert code == 422 and causes(got) == [("spec.spec.devices.requests[0].exactly.adminAccess",
                                            "FieldValueForbidden")]
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {
        "name": "admins", "labels": {"resource.kubernetes.io/admin-access": "true"}}})
    code, got = api("POST", f"{G}/namespaces/admins/resourceclaims", claim("admin", admin))
    assert code == 201, got


def test_partitionable_and_shared_devices_are_served() -> None:
    """What 1.37 accepts for partitionable devices and consumable capacity is created as sent: a slice
    of counter sets, a slice of devices consuming them with per-device placement, a shared device with
    request policies, a claim asking for capacity, and its status with shareID and consumedCapacity."""
    c = SimulatedCluster()
    c.start()
    try:
        api = Http(c)
        pool = {"name": "p", "generation": 0, "resourceSliceCount": 2}
        counters = resource_slice("counters", devices=None, pool=pool, sharedCounters=[
            {"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}])
        devices = resource_slice("devices", nodeName=None, perDeviceNodeSelection=True, pool=pool, devices=[
            {"name": "half-0", "nodeName": "worker",
             "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}]},
            {"name": "nic", "allNodes": True, "allowMultipleAllocations": True, "capacity": {
                "bandwidth": {"value": "10", "requestPolicy": {"default": "1", "validRange": {
                    "min": "1", "max": "10", "step": "500m"}}},
                "queues": {"value": "8", "requestPolicy": {"default": "1", "validValues": ["1", "2", "4"]}}}}])
        for body in (counters, devices):
            code, got = api("POST", SLICES, body)
            assert code == 201, got
            assert got["spec"] == body["spec"]
        asking = claim("asking", {"name": "nic", "exactly": {"deviceClassName": "c", "capacity": {
            "requests": {"bandwidth": "1500m"}}}}, constraints=[{"distinctAttribute": "test.example.com/numa"}])
        code, got = api("POST", CLAIMS, asking)
        assert code == 201, got
        got["status"] = {"allocation": {"devices": {"results": [
            {"request": "nic", "driver": "test.example.com", "pool": "p", "device": "nic",
             "shareID": "11111111-1111-1111-1111-111111111111", "consumedCapacity": {"bandwidth": "1500m"}}]}}}
        code, written = api("PUT", f"{CLAIMS}/asking/status", got)
        assert code == 200, written
        assert written["status"]["allocation"] == got["status"]["allocation"]
    finally:
        c.stop()


def test_valid_objects_of_each_kind_are_created(api: Http) -> None:
    for path, body in ((CLASSES, device_class("valid.example.com")), (SLICES, resource_slice("valid-slice")),
                       (TEMPLATES, template("valid-template")),
                       (CLAIMS, claim("valid", {"name": "gpu", "firstAvailable": [
                           {"name": "big", "deviceClassName": "c", "selectors": [{"cel": {"expression": "true"}}]},
                           {"name": "small", "deviceClassName": "c", "allocationMode": "All"}]},
                           constraints=[{"requests": ["gpu/big"], "matchAttribute": "gpu.example.com/model"}],
                           config=[{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com",
                                                                    "parameters": {"a": 1}}}]))):
        code, got = api("POST", path, body)
        assert code == 201, got


# ---- update rules --------------------------------------------------------------------------------

def test_a_claims_spec_is_immutable_and_its_status_written_only_through_status(api: Http) -> None:
    assert api("POST", CLAIMS, claim("immutable"))[0] == 201
    code, got = api("PATCH", f"{CLAIMS}/immutable", {"spec": {"devices": {"requests": [
        {"name": "other", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("spec", "FieldValueInvalid")], got
    assert got["message"].endswith("field is immutable")
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]}}
    code, got = api("PATCH", f"{CLAIMS}/immutable", {"metadata": {"labels": {"a": "b"}},
                                                     "status": {"allocation": allocation}}, ctype=MERGE)
    assert code == 200 and "status" not in got and got["metadata"]["labels"] == {"a": "b"}
    code, got = api("PATCH", f"{CLAIMS}/immutable/status", {"status": {"allocation": allocation}}, ctype=MERGE)
    assert code == 200 and got["status"]["allocation"] == allocation, got
    changed = copy.deepcopy(allocation)
    changed["devices"]["results"][0]["device"] = "gpu-1"
    code, got = api("PATCH", f"{CLAIMS}/immutable/status", {"status": {"allocation": changed}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("status.allocation", "FieldValueInvalid")], got


def test_a_template_spec_is_immutable(api: Http) -> None:
    assert api("POST", TEMPLATES, template("immutable-template"))[0] == 201
    code, got = api("PATCH", f"{TEMPLATES}/immutable-template", {"spec": {"spec": {"devices": {"requests": [
        {"name": "x", "exactly": {"deviceClassName": "c"}}]}}}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("spec", "FieldValueInvalid")], got


def test_a_slices_pool_driver_and_node_never_change(api: Http) -> None:
    assert api("POST", SLICES, resource_slice("moving"))[0] == 201
    code, got = api("PATCH", f"{SLICES}/moving", {"spec": {"nodeName": "other", "driver": "other.example.com",
                                                           "pool": {"name": "other"}}}, ctype=MERGE)
    assert code == 422, got
    assert sorted(causes(got)) == [("spec.driver", "FieldValueInvalid"), ("spec.nodeName", "FieldValueInvalid"),
                                   ("spec.pool.name", "FieldValueInvalid")]
    code, got = api("PATCH", f"{SLICES}/moving", {"spec": {"pool": {"generation": 1}}}, ctype=MERGE)
    assert code == 200 and got["metadata"]["generation"] == 2, got


STATUS_CASES = [
    # (case, status, wanted causes); the claim has one request "gpu"
    ("reservedFor without an allocation", {"reservedFor": [{"resource": "pods", "name": "p", "uid": "1"}]},
     [("status.reservedFor", "FieldValueForbidden")]),
    ("a consumer without resource, name and uid", {"allocation": {"devices": {"results": []}}, "reservedFor": [{}]},
     [("status.reservedFor[0].resource", "FieldValueRequired"), ("status.reservedFor[0].name", "FieldValueRequired"),
      ("status.reservedFor[0].uid", "FieldValueRequired")]),
    ("a consumer twice", {"allocation": {"devices": {"results": []}}, "reservedFor": [
        {"resource": "pods", "name": "p", "uid": "1"}, {"resource": "pods", "name": "p", "uid": "1"}]},
     [("status.reservedFor[1]", "FieldValueDuplicate")]),
    ("257 consumers", {"allocation": {"devices": {"results": []}}, "reservedFor": [
        {"resource": "pods", "name": f"p{i}", "uid": str(i)} for i in range(257)]},
     [("status.reservedFor", "FieldValueTooMany")]),
    ("a result for an unknown request, without driver, pool and device", {"allocation": {"devices": {"results": [
        {"request": "tpu", "driver": "", "pool": "", "device": ""}]}}},
     [("status.allocation.devices.results[0].request", "FieldValueInvalid"),
      ("status.allocation.devices.results[0].driver", "FieldValueRequired"),
      ("status.allocation.devices.results[0].driver", "FieldValueInvalid"),
      ("status.allocation.devices.results[0].pool", "FieldValueRequired"),
      ("status.allocation.devices.results[0].device", "FieldValueInvalid")]),
]


@pytest.mark.parametrize(("status", "want"), [c[1:] for c in STATUS_CASES], ids=[c[0] for c in STATUS_CASES])
def test_status_updates_are_validated(api: Http, status: Obj, want: list[tuple[str, str]]) -> None:
    name = "status-" + str(abs(hash(json.dumps(status))) % 10**8)
    assert api("POST", CLAIMS, claim(name))[0] == 201
    code, got = api("PATCH", f"{CLAIMS}/{name}/status", {"status": status}, ctype=MERGE)
    assert code == 422, got
    assert sorted(causes(got)) == sorted(want), got["message"]


def test_256_consumers_are_allowed(api: Http) -> None:
    assert api("POST", CLAIMS, claim("full"))[0] == 201
    status = {"allocation": {"devices": {"results": []}},
              "reservedFor": [{"resource": "pods", "name": f"p{i}", "uid": f"uid-{i}"} for i in range(256)]}
    # (these pods do not exist: the controller drops them once the claim is written; only the write is checked)
    code, got = api("PATCH", f"{CLAIMS}/full/status", {"status": status}, ctype=MERGE)
    assert code == 200, got


# ---- the pod's side ----------------------------------------------------------------------------

POD_CASES = [
    # (core validation's rule, pod, wanted causes)
    ("validatePodResourceClaim: both sources", pod("bad", {"name": "gpu", "resourceClaimName": "a",
                                                           "resourceClaimTemplateName": "b"}),
     [("spec.resourceClaims[0]", "FieldValueInvalid")]),
    ("validatePodResourceClaim: no source", pod("bad", {"name": "gpu"}),
     [("spec.resourceClaims[0]", "FieldValueInvalid")]),
    ("validatePodResourceClaim: a name twice", pod("bad", {"name": "gpu", "resourceClaimName": "a"},
                                                   {"name": "gpu", "resourceClaimName": "b"},
                                                   container_claims=[{"name": "gpu"}]),
     [("spec.resourceClaims[1].name", "FieldValueDuplicate")]),
    ("validatePodResourceClaim: a name that is no DNS label", pod("bad", {"name": "GPU", "resourceClaimName": "a"},
                                                                  container_claims=[]),
     [("spec.resourceClaims[0].name", "FieldValueInvalid")]),
    ("validatePodResourceClaim: a bad claim name", pod("bad", {"name": "gpu", "resourceClaimName": BAD_NAME}),
     [("spec.resourceClaims[0].resourceClaimName", "FieldValueInvalid")]),
    ("validateResourceClaimNames: a container claim not in the pod's", pod("bad", {"name": "gpu", "resourceClaimName":
                                                                                 "a"},
                                                                           container_claims=[{"name": "tpu"}]),
     [("spec.containers[0].resources.claims[0]", "FieldValueNotFound")]),
    ("validateResourceClaimNames: a container claim twice", pod("bad", {"name": "gpu", "resourceClaimName": "a"},
                                                                container_claims=[{"name": "gpu"}, {"name": "gpu"}]),
     [("spec.containers[0].resources.claims[1]", "FieldValueDuplicate")]),
]


@pytest.mark.parametrize(("body", "want"), [c[1:] for c in POD_CASES], ids=[c[0] for c in POD_CASES])
def test_pod_resource_claims_are_validated(api: Http, body: Obj, want: list[tuple[str, str]]) -> None:
    code, got = api("POST", PODS, copy.deepcopy(body))
    assert code == 422, got
    assert sorted(causes(got)) == sorted(want), got["message"]


def test_a_container_claim_not_found_says_which_names_there_are(api: Http) -> None:
    got = api("POST", PODS, pod("bad", container_claims=[{"name": "gpu"}]))[1]
    assert messages(got) == ['Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty']
    got = api("POST", PODS, pod("bad", {"name": "b", "resourceClaimName": "x"}, {"name": "a", "resourceClaimName": "y"},
                                container_claims=[{"name": "gpu"}]))[1]
    assert messages(got) == ['Not found: "gpu": must be one of the names in pod.spec.resourceClaims: a, b']


def test_pod_status_claim_statuses_name_the_pods_claims(api: Http) -> None:
    assert api("POST", PODS, pod("statuses", {"name": "gpu", "resourceClaimName": "shared-none"}))[0] == 201
    code, got = api("PATCH", f"{PODS}/statuses/status", {"status": {"resourceClaimStatuses": [
        {"name": "tpu", "resourceClaimName": "x"}]}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("status.resourceClaimStatuses[0].name", "FieldValueInvalid")], got
    assert messages(got) == ['Invalid value: "tpu": must match the name of an entry in `spec.resourceClaims`']
    api("DELETE", f"{PODS}/statuses", {"gracePeriodSeconds": 0})


# ---- kubectl -------------------------------------------------------------------------------------

@needs_kubectl
def test_kubectl_applies_and_prints_the_kinds_as_upstreams_printers(api: Http, kubectl: Kubectl) -> None:
    manifest = "\n---\n".join(json.dumps(o) for o in (
        template("kubectl-template"), claim("kubectl-claim"), device_class("kubectl.example.com")))
    out = kubectl("apply", "-f", "-", stdin=manifest).stdout
    assert "resourceclaim.resource.k8s.io/kubectl-claim created" in out, out
    lines = kubectl("get", "resourceclaims", "kubectl-claim").stdout.splitlines()
    assert lines[0].split() == ["NAME", "STATE", "AGE"] and lines[1].split()[:2] == ["kubectl-claim", "pending"]
    allocation = {"devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                           "device": "gpu-0"}]}}
    kubectl("patch", "resourceclaim", "kubectl-claim", "--subresource=status", "--type=merge", "-p",
            json.dumps({"status": {"allocation": allocation}}))
    assert kubectl("get", "resourceclaim", "kubectl-claim").stdout.splitlines()[1].split()[1] == "allocated"
    assert kubectl("get", "resourceclaimtemplates").stdout.splitlines()[0].split() == ["NAME", "AGE"]
    assert kubectl("get", "deviceclass", "kubectl.example.com").stdout.splitlines()[0].split() == ["NAME", "AGE"]
    assert api("POST", SLICES, resource_slice("kubectl-slice", nodeName="kubectl-node",
                                              pool={"name": "kubectl-pool", "resourceSliceCount": 1}))[0] == 201
    lines = kubectl("get", "resourceslice", "kubectl-slice").stdout.splitlines()
    assert lines[0].split() == ["NAME", "NODE", "DRIVER", "POOL", "AGE"]
    assert lines[1].split()[:4] == ["kubectl-slice", "kubectl-node", "test.example.com", "kubectl-pool"]
    explained = kubectl("explain", "resourceclaim.spec.devices.requests.exactly.allocationMode").stdout
    assert "FIELD: allocationMode <string>" in explained
    bad = kubectl("apply", "-f", "-", stdin=json.dumps(claim("kubectl-bad", {"name": "gpu"})), check=False)
    assert bad.returncode != 0 and "exactly one of `exactly` or `firstAvailable` is required" in bad.stderr


def test_generate_name_is_cut_as_upstreams_name_generator(api: Http) -> None:
    body = claim("unused")
    body["metadata"] = {"generateName": "g" * 70}
    code, got = api("POST", CLAIMS, body)
    assert code == 201 and len(got["metadata"]["name"]) == 63 and got["metadata"]["name"].startswith("g" * 58)


def test_the_official_python_client_reads_and_writes_the_kinds(sim: SimulatedCluster) -> None:
    from kubernetes import client, config

    api_client = config.new_client_from_config(config_file=str(sim.kubeconfig))
    try:
        res = client.ResourceV1Api(api_client)
        created = res.create_namespaced_resource_claim("default", claim("python-client"))
        assert created.spec.devices.requests[0].exactly.allocation_mode == "ExactCount"
        res.patch_namespaced_resource_claim_status("python-client", "default", {"status": {"allocation": {
            "devices": {"results": [{"request": "gpu", "driver": "gpu.example.com", "pool": "n1",
                                     "device": "gpu-0"}]}}}})
        got = res.read_namespaced_resource_claim("python-client", "default")
        assert got.status.allocation.devices.results[0].device == "gpu-0"
        res.create_resource_slice(resource_slice("python-slice"))
        names = [s.metadata.name for s in res.list_resource_slice(field_selector="spec.driver=test.example.com").items]
        assert "python-slice" in names
        assert res.read_device_class("valid.example.com").metadata.name == "valid.example.com"
    finally:
        api_client.close()


# ---- DeviceTaintRule (DRADeviceTaintRules, GA in 1.37: served at v1) -----------------------------

RULES = f"{G}/devicetaintrules"


def taint_rule(name: str, **spec: Any) -> Obj:
    base: Obj = {"deviceSelector": {"driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"},
                 "taint": {"key": "example.com/broken", "value": "ecc", "effect": "NoSchedule"}}
    base.update(spec)
    return {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": name},
            "spec": base}


def test_device_taint_rules_are_served_with_a_status_subresource(api: Http) -> None:
    """Cluster-scoped, with ``/status``; a create drops a status and gets generation 1 and the
    taint's timeAdded; an update that changes the effect gets a new timeAdded (the strategy's
    PrepareForUpdate) and the next generation; a status write keeps the spec."""
    res = {r["name"]: r for r in api("GET", G)[1]["resources"]}
    assert {"devicetaintrules", "devicetaintrules/status"} <= set(res)
    assert not res["devicetaintrules"]["namespaced"]
    body = taint_rule("ecc-errors")
    body["status"] = {"conditions": []}
    code, got = api("POST", RULES, body)
    assert code == 201, got
    assert "status" not in got and got["metadata"]["generation"] == 1 and got["spec"]["taint"]["timeAdded"]
    got["spec"]["taint"]["effect"] = "NoExecute"
    got["spec"]["taint"]["timeAdded"] = "2020-01-01T00:00:00Z"
    code, same_time = api("PUT", f"{RULES}/ecc-errors", got)
    assert code == 200 and same_time["spec"]["taint"]["timeAdded"] == "2020-01-01T00:00:00Z", same_time
    code, moved = api("PATCH", f"{RULES}/ecc-errors", {"spec": {"taint": {"effect": "None"}}}, ctype=MERGE)
    assert code == 200 and moved["spec"]["taint"]["timeAdded"] != "2020-01-01T00:00:00Z", moved
    assert moved["metadata"]["generation"] == 3
    status = {"conditions": [{"type": "EvictionInProgress", "status": "False", "reason": "NoEffect",
                              "message": "", "lastTransitionTime": "2020-01-01T00:00:00Z"}]}
    code, got = api("PATCH", f"{RULES}/ecc-errors/status", {"status": status, "spec": {"taint": {"key": "x"}}},
                    ctype=MERGE)
    assert code == 200 and got["status"] == status and got["spec"]["taint"]["key"] == "example.com/broken", got


@pytest.mark.parametrize(("body", "want"), [
    (taint_rule("no-effect", taint={"key": "example.com/broken"}), [("spec.taint.effect", "FieldValueRequired")]),
    (taint_rule("bad-effect", taint={"key": "example.com/broken", "effect": "PreferNoSchedule"}),
     [("spec.taint.effect", "FieldValueNotSupported")]),
    (taint_rule("no-key", taint={"effect": "NoSchedule"}), [("spec.taint.key", "FieldValueRequired")]),
    (taint_rule("bad-value", taint={"key": "k", "value": "-x-", "effect": "NoSchedule"}),
     [("spec.taint.value", "FieldValueInvalid")]),
    (taint_rule("bad-device", deviceSelector={"device": "GPU_0"}), [("spec.deviceSelector.device", "FieldValueInvalid")]),
    (taint_rule("bad-pool", deviceSelector={"pool": "a/-b"}), [("spec.deviceSelector.pool", "FieldValueInvalid")]),
], ids=["effect-required", "effect-not-supported", "key-required", "value-invalid", "device-invalid", "pool-invalid"])
def test_device_taint_rules_are_validated(api: Http, body: Obj, want: list[tuple[str, str]]) -> None:
    code, got = api("POST", RULES, body)
    assert code == 422 and causes(got) == want, got


@pytest.mark.parametrize(("device", "want"), [
    ({"bindingConditions": ["a.example.com/ready"]}, [("spec.devices[0].bindingFailureConditions", "FieldValueInvalid")]),
    ({"bindingFailureConditions": ["failed"]}, [("spec.devices[0].bindingConditions", "FieldValueInvalid")]),
    ({"bindingConditions": ["ready", "ready"], "bindingFailureConditions": ["ready"]},
     [("spec.devices[0].bindingConditions[1]", "FieldValueDuplicate"),
      ("spec.devices[0].bindingFailureConditions[0]", "FieldValueInvalid")]),
    ({"bindingConditions": [f"c{i}" for i in range(5)], "bindingFailureConditions": ["f"]},
     [("spec.devices[0].bindingConditions", "FieldValueTooMany")]),
    ({"bindingConditions": ["not a name"], "bindingFailureConditions": ["f"]},
     [("spec.devices[0].bindingConditions[0]", "FieldValueInvalid")]),
], ids=["conditions-without-failure", "failure-without-conditions", "duplicate-and-overlap", "too-many", "bad-name"])
def test_binding_conditions_are_validated_as_validate_device_binding_parameters(
        api: Http, device: Obj, want: list[tuple[str, str]]) -> None:
    body = resource_slice(f"binding-{len(want)}-{sorted(device)[0].lower()}",
                          devices=[{"name": "device-0", **device}])
    code, got = api("POST", SLICES, body)
    assert code == 422 and causes(got) == want, got


def test_a_rules_stored_effect_is_checked_only_when_it_changes(api: Http) -> None:
    """ValidateDeviceTaintRuleUpdate checks the effect only when the update changes it."""
    assert api("POST", RULES, taint_rule("effect-kept"))[0] == 201
    code, got = api("PATCH", f"{RULES}/effect-kept", {"spec": {"taint": {"value": "other"}}}, ctype=MERGE)
    assert code == 200 and got["spec"]["taint"]["value"] == "other", got
    code, got = api("PATCH", f"{RULES}/effect-kept", {"spec": {"taint": {"effect": "Evict"}}}, ctype=MERGE)
    assert code == 422 and causes(got) == [("spec.taint.effect", "FieldValueNotSupported")], got


@pytest.mark.parametrize(("toleration", "want"), [
    ({"key": "example.com/ecc", "operator": "Equal", "value": "-bad-"}, "value"),
    ({"key": "-bad-key", "operator": "Exists"}, "key"),
], ids=["equal-value-not-a-label-value", "key-not-a-label-name"])
def test_a_tolerations_key_and_value_are_validated_as_labels(api: Http, toleration: Obj, want: str) -> None:
    """validateDeviceToleration: the key is a label name, an Equal value a label value."""
    body = claim(f"tol-{want}", {"name": "gpu", "exactly": {"deviceClassName": "gpu.example.com",
                                                             "tolerations": [toleration]}})
    code, got = api("POST", CLAIMS, body)
    assert code == 422 and causes(got) == [(f"spec.devices.requests[0].exactly.tolerations[0].{want}",
                                            "FieldValueInvalid")], got


@pytest.mark.parametrize(("conditions", "want"), [
    ([{"type": "EvictionInProgress", "status": "Maybe", "reason": "R", "lastTransitionTime": "2020-01-01T00:00:00Z"}],
     [("status.conditions[0].status", "FieldValueNotSupported")]),
    ([{"type": "EvictionInProgress", "status": "True", "reason": "not a reason",
       "lastTransitionTime": "2020-01-01T00:00:00Z"}], [("status.conditions[0].reason", "FieldValueInvalid")]),
    ([{"type": "EvictionInProgress", "status": "True", "reason": "R"}],
     [("status.conditions[0].lastTransitionTime", "FieldValueRequired")]),
    ([{"type": f"T{i}", "status": "True", "reason": "R", "lastTransitionTime": "2020-01-01T00:00:00Z"} for i in range(9)],
     [("status.conditions", "FieldValueTooMany")]),
], ids=["status", "reason", "last-transition-time", "too-many"])
def test_a_rules_status_is_validated_as_metav1_conditions(api: Http, conditions: list[Obj],
                                                          want: list[tuple[str, str]]) -> None:
    """ValidateDeviceTaintRuleStatusUpdate: metav1 conditions, at most 8."""
    name = f"status-{len(conditions)}-{want[0][0].rsplit('.', 1)[-1].lower()}"
    assert api("POST", RULES, taint_rule(name))[0] == 201
    code, got = api("PATCH", f"{RULES}/{name}/status", {"status": {"conditions": conditions}}, ctype=MERGE)
    assert code == 422 and causes(got) == want, got
