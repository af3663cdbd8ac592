"""ApiSchedulerClient's ResourceClaim writes (DynamicResources' PreBind, Unreserve, PostFilter and
the extended-resource claim): the requests it sends, checked against a recording KubeClient, since
what upstream's plugin writes is the contract (the finalizer by a normal update, the status with
``UpdateStatus`` conditional on the resourceVersion read, Unreserve's strategic-merge patch deleting
the pod's ``reservedFor`` entry by uid with the claim's uid as precondition)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from scheduler.errors import ConflictError
from scheduler.kubeapi.scheduler_client import ApiSchedulerClient
from scheduler.model import parse_pod
from scheduler.model.dra import parse_allocation, parse_resource_claim

CLAIM = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
         "metadata": {"name": "c", "namespace": "ns", "uid": "cu", "resourceVersion": "7",
                      "finalizers": ["other"]},
         "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu"}}]}},
         "status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "au"}]}}
PATH = "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims/c"
POD = parse_pod({"metadata": {"name": "p", "namespace": "ns", "uid": "pu"}, "spec": {}})
ALLOCATION = {"devices": {"results": [{"request": "r", "driver": "d", "pool": "n1", "device": "g0"}]},
              "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                  {"key": "metadata.name", "operator": "In", "values": ["n1"]}]}]}}


class Recording:
    """A KubeClient that records each request and answers with ``answer`` (or raises it)."""

    def __init__(self, answer: Any = None) -> None:
        self.calls: list[tuple[str, str, Any, str]] = []
        self.answer = answer

    async def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
                      **_: Any) -> Any:
        self.calls.append((method, path, body, content_type))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer if self.answer is not None else CLAIM


def client(answer: Any = None) -> tuple[ApiSchedulerClient, Recording]:
    api = Recording(answer)
    return ApiSchedulerClient(api), api  # type: ignore[arg-type]


def test_finalizer_is_added_conditionally_and_keeps_the_others() -> None:
    c, api = client({**CLAIM, "metadata": {**CLAIM["metadata"], "resourceVersion": "8",
                                           "finalizers": ["other", "resource.kubernetes.io/delete-protection"]}})
    got = asyncio.run(c.add_claim_finalizer(parse_resource_claim(CLAIM)))
    assert api.calls == [("PATCH", PATH, {"metadata": {"resourceVersion": "7", "uid": "cu", "finalizers": [
        "other", "resource.kubernetes.io/delete-protection"]}}, "application/merge-patch+json")]
    assert got.resource_version == "8" and "resource.kubernetes.io/delete-protection" in got.finalizers


def test_reserve_writes_allocation_and_appends_the_pod() -> None:
    c, api = client()
    asyncio.run(c.reserve_claim(parse_resource_claim(CLAIM), POD, parse_allocation(ALLOCATION)))
    assert api.calls == [("PATCH", PATH + "/status", {
        "metadata": {"resourceVersion": "7", "uid": "cu"},
        "status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "au"},
                                   {"resource": "pods", "name": "p", "uid": "pu"}],
                   "allocation": ALLOCATION}}, "application/merge-patch+json")]
    api.calls.clear()
    asyncio.run(c.reserve_claim(parse_resource_claim(CLAIM), POD, None))     # allocated already: reservation only
    assert "allocation" not in api.calls[0][2]["status"]


def test_a_conflict_reaches_the_caller() -> None:
    c, _ = client(ConflictError("the object has been modified", status=409))
    with pytest.raises(ConflictError):
        asyncio.run(c.reserve_claim(parse_resource_claim(CLAIM), POD, None))


def test_unreserve_is_upstreams_strategic_merge_patch() -> None:
    c, api = client()
    asyncio.run(c.unreserve_claim(parse_resource_claim(CLAIM), POD))
    assert api.calls == [("PATCH", PATH + "/status", {"metadata": {"uid": "cu"}, "status": {
        "reservedFor": [{"$patch": "delete", "uid": "pu"}]}}, "application/strategic-merge-patch+json")]


def test_deallocate_clears_the_status_conditionally() -> None:
    c, api = client()
    asyncio.run(c.deallocate_claim(parse_resource_claim(CLAIM)))
    assert api.calls == [("PATCH", PATH + "/status", {"metadata": {"resourceVersion": "7", "uid": "cu"}, "status": {
        "allocation": None, "reservedFor": None, "devices": None}}, "application/merge-patch+json")]


def test_get_and_create() -> None:
    c, api = client()
    assert asyncio.run(c.get_claim("ns", "c")).uid == "cu"
    body = {"metadata": {"generateName": "p-extended-resources-", "namespace": "ns"}, "spec": {}}
    asyncio.run(c.create_claim(body))
    assert api.calls[0][:2] == ("GET", PATH)
    assert api.calls[1][:3] == ("POST", "/apis/resource.k8s.io/v1/namespaces/ns/resourceclaims",
                                {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", **body})


def test_delete_removes_the_finalizer_then_deletes() -> None:
    """deleteClaim: the finalizer off (conditional on the version read), then DELETE with the uid
    as precondition; a claim already gone is fine."""
    from scheduler.errors import NotFoundError
    c, api = client()
    claim = parse_resource_claim({**CLAIM, "metadata": {**CLAIM["metadata"], "finalizers": [
        "other", "resource.kubernetes.io/delete-protection"]}})
    asyncio.run(c.delete_claim(claim))
    assert api.calls == [
        ("PATCH", PATH, {"metadata": {"resourceVersion": "7", "uid": "cu", "finalizers": ["other"]}},
         "application/merge-patch+json"),
        ("DELETE", PATH, {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": {"uid": "cu"}},
         "application/json")]
    gone, _ = client(NotFoundError("not found", status=404))
    asyncio.run(gone.delete_claim(claim))


def test_extended_resource_claim_status_is_a_status_patch() -> None:
    c, api = client()
    mappings = [{"containerName": "c", "resourceName": "example.com/gpu", "requestName": "container-0-request-0"}]
    asyncio.run(c.set_extended_resource_claim_status(POD, "p-extended-resources-0", mappings))
    assert api.calls == [("PATCH", "/api/v1/namespaces/ns/pods/p/status", {"status": {"extendedResourceClaimStatus": {
        "requestMappings": mappings, "resourceClaimName": "p-extended-resources-0"}}},
        "application/strategic-merge-patch+json")]
