"""``scheduler.model.dra``: resource.k8s.io/v1 objects parsed into the typed model, defaults as the API
server's, and ParseErrors that name the object and the field."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest

from scheduler.errors import ParseError
from scheduler.model import parse_pod
from scheduler.model.dra import (
    DeviceAttribute,
    parse_device_class,
    parse_resource_claim,
    parse_resource_claim_template,
    parse_resource_slice,
)

SLICE: dict[str, Any] = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpu"},
         "spec": {"driver": "gpu.example.com", "pool": {"name": "n1", "generation": 2, "resourceSliceCount": 1},
                  "nodeName": "n1", "devices": [
                      {"name": "gpu-0", "attributes": {"model": {"string": "a100"}, "index": {"int": 0},
                                                       "driverVersion": {"version": "1.2.3"},
                                                       "other.com/ok": {"bool": True}},
                       "capacity": {"memory": {"value": "40Gi"}}}]}}
CLAIM: dict[str, Any] = {"metadata": {"name": "c", "namespace": "ns", "uid": "u1",
                      "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "pu",
                                           "controller": True}]},
         "spec": {"devices": {
             "requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu", "selectors": [
                 {"cel": {"expression": "device.driver == 'x'"}}]}},
                 {"name": "any", "firstAvailable": [{"name": "big", "deviceClassName": "gpu", "count": 2},
                                                   {"name": "all", "deviceClassName": "gpu", "allocationMode": "All"}]}],
             "constraints": [{"requests": ["gpu"], "matchAttribute": "gpu.example.com/model"}],
             "config": [{"requests": ["gpu"], "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]}},
         "status": {"allocation": {"devices": {"results": [
             {"request": "gpu", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"}]},
             "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                 {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}},
             "reservedFor": [{"resource": "pods", "name": "p", "uid": "pu"}]}}


def test_slice() -> None:
    s = parse_resource_slice(SLICE)
    assert (s.driver, s.pool.name, s.pool.generation, s.pool.resource_slice_count, s.node_name) == (
        "gpu.example.com", "n1", 2, 1, "n1")
    d = s.devices[0]
    assert d.attributes["model"] == DeviceAttribute("string", "a100")
    assert d.attributes["index"] == DeviceAttribute("int", 0)
    assert d.attributes["driverVersion"] == DeviceAttribute("version", "1.2.3")
    assert d.attributes["other.com/ok"] == DeviceAttribute("bool", True)
    assert d.capacity["memory"] == Fraction(40 * 2**30)


def test_claim_defaults_and_status() -> None:
    c = parse_resource_claim(CLAIM)
    gpu, any_ = c.spec.requests
    assert gpu.exactly is not None and (gpu.exactly.allocation_mode, gpu.exactly.count) == ("ExactCount", 1)
    assert gpu.exactly.selectors == ("device.driver == 'x'",)
    assert [(s.name, s.allocation_mode, s.count) for s in any_.first_available] == [
        ("big", "ExactCount", 2), ("all", "All", 0)]
    assert c.spec.constraints[0].match_attribute == "gpu.example.com/model"
    assert c.spec.config[0].requests == ("gpu",)
    assert c.allocation is not None and c.allocation.results[0].id.device == "gpu-0"
    assert c.allocation.node_selector is not None and c.allocation.node_selector.matches({}, "n1")
    assert c.is_reserved_for("pu") and not c.is_reserved_for("other")
    assert c.controller == ("v1", "Pod", "p", "pu")
    assert c.allocation.to_json()["nodeSelector"] == CLAIM["status"]["allocation"]["nodeSelector"]


def test_class_and_template() -> None:
    cls = parse_device_class({"metadata": {"name": "gpu", "generation": 3}, "spec": {
        "selectors": [{"cel": {"expression": "true"}}, {}], "extendedResourceName": "example.com/gpu"}})
    assert cls.selectors == ("true", None) and cls.generation == 3 and cls.extended_resource_name == "example.com/gpu"
    t = parse_resource_claim_template({"metadata": {"name": "t", "namespace": "ns"},
                                       "spec": {"spec": CLAIM["spec"]}})
    assert t.spec == parse_resource_claim(CLAIM).spec


def test_pod_resource_claims() -> None:
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {"resourceClaims": [
        {"name": "a", "resourceClaimName": "claim-a"}, {"name": "b", "resourceClaimTemplateName": "t"}]},
        "status": {"resourceClaimStatuses": [{"name": "b", "resourceClaimName": "p-b-x"}, {"name": "c"}]}})
    assert [(c.name, c.resource_claim_name, c.resource_claim_template_name) for c in pod.resource_claims] == [
        ("a", "claim-a", None), ("b", None, "t")]
    assert [(s.name, s.resource_claim_name) for s in pod.resource_claim_statuses] == [("b", "p-b-x"), ("c", None)]


@pytest.mark.parametrize(("obj", "parse", "message"), [
    ({**SLICE, "spec": {**SLICE["spec"], "devices": [{"name": "d", "attributes": {"v": {"version": "1.0"}}}]}},
     parse_resource_slice, "ResourceSlice n1-gpu spec.devices[0].attributes[v].version: must be a semantic version"),
    ({**SLICE, "spec": {**SLICE["spec"], "devices": [{"name": "d", "capacity": {"m": {"value": "lots"}}}]}},
     parse_resource_slice, "ResourceSlice n1-gpu spec.devices[0].capacity[m].value: quantities must match"),
    ({"metadata": {"name": "c"}, "spec": {"devices": {"requests": [{"name": "r", "exactly": {"count": "2"}}]}}},
     parse_resource_claim, "ResourceClaim default/c spec.devices.requests[0].exactly.count: must be an integer"),
    ({"metadata": {"name": "c"}, "spec": {"devices": {"requests": "nope"}}},
     parse_resource_claim, "ResourceClaim default/c spec.devices.requests: must be a list"),
])
def test_parse_errors(obj: dict[str, object], parse: object, message: str) -> None:
    with pytest.raises(ParseError) as e:
        parse(obj)  # type: ignore[operator]
    assert str(e.value).startswith(message)


def test_pod_container_requests_for_extended_resources() -> None:
    """The per-container requests DynamicResources maps onto the extended-resource claim: kept, in
    upstream's order (init containers, then containers; a non-sidecar init container short-lived),
    only for a pod that asks for a resource with a "/" in its name."""
    from scheduler.model.pod import ContainerRequests
    plain = parse_pod({"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"requests": {"cpu": "1"}}}]}})
    assert plain.container_requests == ()
    pod = parse_pod({"metadata": {"name": "p"}, "spec": {
        "initContainers": [{"name": "i", "resources": {"requests": {"example.com/gpu": "2"}}},
                           {"name": "s", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}],
        "containers": [{"name": "c", "resources": {"requests": {"example.com/gpu": "1", "cpu": "500m"}}}]}})
    assert pod.container_requests == (ContainerRequests("i", True, {"example.com/gpu": 2}),
                                      ContainerRequests("s", False, {"cpu": 1000}),
                                      ContainerRequests("c", False, {"example.com/gpu": 1, "cpu": 500}))


def test_claim_annotations_and_class_creation_time() -> None:
    claim = parse_resource_claim({"metadata": {"name": "c", "generateName": "p-extended-resources-",
                                               "annotations": {"resource.kubernetes.io/extended-resource-claim": "true"}},
                                  "spec": {}})
    assert claim.is_extended_resource_claim and claim.generate_name == "p-extended-resources-"
    cls = parse_device_class({"metadata": {"name": "g", "creationTimestamp": "2026-01-01T00:00:00Z"}, "spec": {}})
    assert cls.created == "2026-01-01T00:00:00Z"


def test_partitionable_and_consumable_fields() -> None:
    """What the allocator reads of partitionable devices and consumable capacity, parsed once: counter
    sets, counter consumption, per-device placement, request policies, capacity requests, and an
    allocation's shareID and consumedCapacity (written back as the API spells them)."""
    counters = parse_resource_slice({"metadata": {"name": "c"}, "spec": {
        "driver": "d", "pool": {"name": "p", "resourceSliceCount": 2}, "nodeName": "n1",
        "sharedCounters": [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]}})
    assert [(c.name, dict(c.counters)) for c in counters.shared_counters] == [("gpu-0", {"memory": 80 * 2**30})]
    s = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
        "driver": "d", "pool": {"name": "p", "resourceSliceCount": 2}, "perDeviceNodeSelection": True,
        "devices": [{"name": "half", "nodeName": "n1", "allowMultipleAllocations": True,
                     "consumesCounters": [{"counterSet": "gpu-0", "counters": {"memory": {"value": "40Gi"}}}],
                     "capacity": {"bw": {"value": "10", "requestPolicy": {
                         "default": "1", "validRange": {"min": "1", "max": "8", "step": "500m"}}},
                                  "slots": {"value": "4", "requestPolicy": {"validValues": ["1", "2"]}}}}]}})
    (d,) = s.devices
    assert d.allow_multiple_allocations and d.node_name == "n1"
    assert [(c.counter_set, dict(c.counters)) for c in d.consumes_counters] == [("gpu-0", {"memory": 40 * 2**30})]
    bw, slots = d.request_policies["bw"], d.request_policies["slots"]
    assert (bw.default, bw.has_range, bw.range_min, bw.range_max, bw.range_step) == (1, True, 1, 8, Fraction(1, 2))
    assert (slots.has_range, slots.valid_values) == (False, (1, 2))
    c = parse_resource_claim({"metadata": {"name": "c", "namespace": "ns"}, "spec": {"devices": {
        "requests": [{"name": "r", "exactly": {"deviceClassName": "x", "capacity": {"requests": {"bw": "1500m"}}}},
                     {"name": "plain", "exactly": {"deviceClassName": "x"}}],
        "constraints": [{"distinctAttribute": "d/numa"}]}},
        "status": {"allocation": {"devices": {"results": [
            {"request": "r", "driver": "d", "pool": "p", "device": "half",
             "shareID": "11111111-1111-1111-1111-111111111111", "consumedCapacity": {"bw": "1500m"}}]}}}})
    exact = [r.exactly for r in c.spec.requests]
    assert [e.capacity_requests if e else None for e in exact] == [{"bw": Fraction(3, 2)}, None]
    assert c.spec.constraints[0].distinct_attribute == "d/numa" and c.spec.constraints[0].match_attribute is None
    assert c.allocation is not None
    (r,) = c.allocation.results
    assert r.share_id == "11111111-1111-1111-1111-111111111111" and r.consumed_capacity == {"bw": Fraction(3, 2)}
    assert r.to_json() == {"request": "r", "driver": "d", "pool": "p", "device": "half",
                           "shareID": "11111111-1111-1111-1111-111111111111", "consumedCapacity": {"bw": "1500m"}}
