"""Extended resources backed by DRA (upstream's ``extendeddynamicresources.go``, DRAExtendedResource:
alpha 1.34, beta 1.36, GA 1.37): a pod asking for ``example.com/gpu: 1`` (or a class's implicit
``deviceclass.resource.kubernetes.io/<class>``) on a node that does not advertise the resource in
its allocatable is given devices of the DeviceClass that names it, through one ResourceClaim the
scheduler makes for the pod.

The pieces here are pure; the plugin (``scheduler.plugins.dynamicresources``) uses them:

* ``special_claim(pod)``: the in-memory claim PreFilter starts from (upstream's, named
  ``<extended-resources>``, an invalid name so that it never clashes with a real claim; a temporary
  uid for the in-flight bookkeeping; ``generateName: <pod>-extended-resources-``, the pod as
  controller, annotated ``resource.kubernetes.io/extended-resource-claim: "true"``).
* ``requests_and_mappings(pod, resources, resolve)``: the claim's device requests for the extended
  resources a node must get through DRA, and the pod's ``extendedResourceClaimStatus.requestMappings``
  (upstream's ``createRequestsAndMappings``): one ``container-<i>-request-<j>`` ExactCount request per
  long-lived container (``i`` indexes init containers then containers, ``j`` the resource among the
  container's sorted request names); a non-sidecar init container first reuses the requests of the
  long-lived containers after it, and only the largest such init request is kept, the others'
  mappings pointing at it.
* ``claim_body(claim)``: the ResourceClaim PreBind creates.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scheduler.model.dra import (
    EXACT_COUNT,
    EXTENDED_RESOURCE_CLAIM_ANNOTATION,
    IMPLICIT_EXTENDED_RESOURCE_PREFIX,
    DeviceClass,
    DeviceRequest,
    DeviceSubRequest,
    ResourceClaim,
    ResourceClaimSpec,
)
from scheduler.model.pod import ContainerRequests, Pod

__all__ = ["SPECIAL_CLAIM_NAME", "RequestMapping", "claim_body", "is_dra_extended_resource_name",
           "requests_and_mappings", "scalar_requests", "special_claim", "with_requests"]

# specialClaimInMemName
SPECIAL_CLAIM_NAME = "<extended-resources>"


def is_dra_extended_resource_name(name: str) -> bool:
    """``schedutil.IsDRAExtendedResourceName``: an extended resource name (``domain/name``, not in
    the ``kubernetes.io`` namespace, not ``requests.*``) or a device class's implicit name."""
    if name.startswith(IMPLICIT_EXTENDED_RESOURCE_PREFIX):
        return True
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


@dataclass(frozen=True, slots=True)
class RequestMapping:
    """``ContainerExtendedResourceRequest``."""

    container_name: str
    resource_name: str
    request_name: str

    def to_json(self) -> dict[str, str]:
        return {"containerName": self.container_name, "resourceName": self.resource_name,
                "requestName": self.request_name}


def special_claim(pod: Pod) -> ResourceClaim:
    return ResourceClaim(
        namespace=pod.namespace, name=SPECIAL_CLAIM_NAME, uid=str(uuid.uuid4()),
        controller=("v1", "Pod", pod.name, pod.uid),
        annotations={EXTENDED_RESOURCE_CLAIM_ANNOTATION: "true"},
        generate_name=f"{pod.name}-extended-resources-")


def _request(index: int, container: ContainerRequests, resource: str, class_name: str,
             reusable: Sequence[DeviceRequest | None]) -> tuple[DeviceRequest | None, list[RequestMapping]]:
    """``createResourceRequestAndMappings``."""
    wanted = container.requests.get(resource, 0)
    if not wanted:
        return None, []
    mappings: list[RequestMapping] = []
    got = 0
    for r in reusable:
        if r is not None and r.exactly is not None:
            got += r.exactly.count
            mappings.append(RequestMapping(container.name, resource, r.name))
            if got >= wanted:
                return None, mappings
    name = f"container-{index}-request-{sorted(container.requests).index(resource)}"
    mappings.append(RequestMapping(container.name, resource, name))
    return DeviceRequest(name, DeviceSubRequest(name, class_name, allocation_mode=EXACT_COUNT,
                                                count=wanted - got)), mappings


def requests_and_mappings(pod: Pod, resources: Sequence[str], resolve: Callable[[str], DeviceClass | None]
                          ) -> tuple[tuple[DeviceRequest, ...], tuple[RequestMapping, ...]]:
    """``createRequestsAndMappings`` for the extended resources in ``resources``."""
    containers = pod.container_requests
    long_lived = [i for i, c in enumerate(containers) if not c.short_lived]
    short_lived = [i for i, c in enumerate(containers) if c.short_lived]
    requests: list[DeviceRequest] = []
    mappings: list[RequestMapping] = []
    for resource in sorted(resources):
        cls = resolve(resource)
        if cls is None:
            continue
        long_requests: list[DeviceRequest | None] = [None] * len(containers)
        long_mappings: list[RequestMapping] = []
        for i in long_lived:
            req, ms = _request(i, containers[i], resource, cls.name, ())
            long_requests[i] = req
            long_mappings += ms
        biggest: DeviceRequest | None = None
        short_names: set[str] = set()
        short_mappings: list[RequestMapping] = []
        for i in short_lived:
            req, ms = _request(i, containers[i], resource, cls.name, long_requests[i:])
            if req is not None:
                short_names.add(req.name)
                if biggest is None or _count(biggest) < _count(req):
                    biggest = req
            short_mappings += ms
        if biggest is not None and len(short_names) > 1:
            short_names.discard(biggest.name)
            short_mappings = [RequestMapping(m.container_name, m.resource_name, biggest.name)
                              if m.request_name in short_names else m for m in short_mappings]
        if biggest is not None:
            requests.append(biggest)
        requests += [r for r in long_requests if r is not None]
        mappings += long_mappings + short_mappings
    requests.sort(key=lambda r: r.name)
    return tuple(requests), tuple(mappings)


def _count(r: DeviceRequest) -> int:
    return r.exactly.count if r.exactly is not None else 0


def with_requests(claim: ResourceClaim, requests: tuple[DeviceRequest, ...]) -> ResourceClaim:
    """The node's variant of the extended-resource claim (``Spec.Devices.Requests`` set)."""
    return replace(claim, spec=ResourceClaimSpec(requests=requests))


def claim_body(claim: ResourceClaim) -> dict[str, Any]:
    """The ResourceClaim PreBind creates (``createExtendedResourceClaimInAPI``: no name, no uid,
    no allocation; the generateName, owner, annotation and requests of the node's variant)."""
    meta: dict[str, Any] = {"namespace": claim.namespace, "generateName": claim.generate_name,
                            "annotations": dict(claim.annotations)}
    if claim.controller is not None:
        api_version, kind, name, uid = claim.controller
        meta["ownerReferences"] = [{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
                                    "controller": True}]
    requests = [{"name": r.name, "exactly": {"deviceClassName": r.exactly.device_class_name,
                                             "allocationMode": r.exactly.allocation_mode,
                                             "count": r.exactly.count}}
                for r in claim.spec.requests if r.exactly is not None]
    return {"metadata": meta, "spec": {"devices": {"requests": requests}}}


def scalar_requests(pod: Pod) -> Mapping[str, int]:
    """The pod's non-zero requests of DRA extended resource names (upstream's podScalarResources,
    filtered as its Filter loop does)."""
    return {k: v for k, v in pod.requests.items() if v and is_dra_extended_resource_name(k)}
