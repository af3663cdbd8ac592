"""Extended resources backed by DRA in DynamicResources (upstream's ``extendeddynamicresources.go``;
the pure parts are ``scheduler.dra.extended``).

A pod asking for an extended resource that a DeviceClass backs (``spec.extendedResourceName``, or
``deviceclass.resource.kubernetes.io/<class>``) gets one more claim, after its own: the one an
earlier cycle created for it (then every node is ``cannot schedule extended resource claim`` and
PostFilter deletes it: ``deletion of ResourceClaim completed``), else an in-memory
``<extended-resources>`` claim without requests. Filter gives it, per node, requests for the
extended resources the node does not advertise (``container-<i>-request-<j>``), ``cannot fit
resource`` for one neither advertised nor backed, and nothing at all where the device plugins
provide everything (NodeResourcesFit leaves a backed resource the node lacks to this plugin); the
allocator runs over the node's variant. The variant depends on nothing but what the node
advertises of those resources, so it is made once per cycle per such answer
(``_State.extended_by_node_kind``), not once per node: nodes alike share one claim object, and the
allocator's plan for it. Reserve signals it in flight; PreBind creates it (``generateName:
<pod>-extended-resources-``, the pod as controller, the annotation
``resource.kubernetes.io/extended-resource-claim``), writes it as any claim, and sets the pod's
``status.extendedResourceClaimStatus`` (its name and the request mappings); Unreserve deletes a
created one (finalizer off, then delete, under RetryOnConflict).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler.cache.dra import DraStore
from scheduler.dra.extended import RequestMapping, requests_and_mappings, scalar_requests, special_claim, with_requests
from scheduler.framework.status import Status
from scheduler.model import Pod
from scheduler.model.dra import ResourceClaim
from scheduler.plugins.dynamicresources.state import _ExtendedVariant, _State

ERR_EXTENDED_CLAIM = "cannot schedule extended resource claim"
ERR_CANNOT_FIT = "cannot fit resource"


def pre_filter_extended(dra: DraStore, pod: Pod, s: _State) -> ResourceClaim | None:
    """Upstream's ``preFilterExtendedResources``: when the pod asks for an extended resource
    some DeviceClass backs, the claim for them: the one an earlier cycle created (Filter then
    rejects every node and PostFilter deletes it, as upstream's brute force), else a new
    in-memory one, without requests until Filter sizes it per node."""
    if not pod.container_requests:
        return None
    requests = scalar_requests(pod)
    if not any(dra.extended_resource_class(name) is not None for name in requests):
        return None
    s.extended_requests = dict(requests)
    return dra.extended_claim_for(pod) or special_claim(pod)


def filter_extended(dra: DraStore, s: _State, pod: Pod, allocatable: Mapping[str, int]
                    ) -> tuple[ResourceClaim | None, tuple[RequestMapping, ...], Status | None]:
    """Upstream's ``filterExtendedResources`` for one node: the claim's variant for it (the
    extended resources the node does not advertise, to allocate through DRA) and its mappings,
    ``None`` when the device plugins provide them all; a claim from an earlier cycle and a
    resource the node neither advertises nor DRA backs are Unschedulable."""
    claim = s.claims[s.extended]
    if claim.spec.requests:
        return None, (), Status.unresolvable(ERR_EXTENDED_CLAIM)
    through_dra: list[str] = []
    for name in s.extended_requests:
        have = allocatable.get(name)
        if dra.extended_resource_class(name) is not None and not have:
            through_dra.append(name)
        elif have is None:
            return None, (), Status.unresolvable(ERR_CANNOT_FIT)
    if not through_dra or claim.allocation is not None:
        return None, (), None
    requests, mappings = requests_and_mappings(pod, through_dra, dra.extended_resource_class)
    return with_requests(claim, requests), mappings, None


def extended_variant(dra: DraStore, s: _State, pod: Pod, allocatable: Mapping[str, int]) -> _ExtendedVariant:
    """``filter_extended`` for one node, with the claims to allocate there."""
    ext, mappings, st = filter_extended(dra, s, pod, allocatable)
    indices = s.to_allocate
    variant: tuple[str, ...] = ()
    if st is None:
        if ext is None:
            indices = [i for i in s.to_allocate if i != s.extended]
        else:
            variant = tuple(r.name + "=" + str(r.exactly.count if r.exactly else 0) for r in ext.spec.requests)
    claims = [ext if i == s.extended and ext is not None else s.claims[i] for i in indices]
    return _ExtendedVariant(ext, mappings, st, indices, claims, (str(len(indices)), *variant))
