"""What a search produces: the per-request data the search fills in, the devices it found, and the
claim's ``AllocationResult`` built from them (upstream's result assembly at the end of
``Allocate``, with ``createNodeSelector``). Shared by the general search (``search``) and the
single-request fast path (``simple_plan``).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from scheduler.dra.errors import AllocationError
from scheduler.dra.pools import Pool
from scheduler.model.dra import (
    AllocationResult,
    Device,
    DeviceClass,
    DeviceID,
    DeviceRequestAllocationResult,
    DeviceSubRequest,
    ResourceClaim,
    ResourceSlice,
)
from scheduler.model.selectors import NodeSelector, parse_node_selector


@dataclass(slots=True)
class _RequestData:
    request: DeviceSubRequest
    parent: str | None                 # the request's name, for a subrequest
    cls: DeviceClass | None = None
    num_devices: int = 0
    all_devices: list[tuple[DeviceID, Device, ResourceSlice, Pool]] = field(default_factory=list)
    selected_sub_request: int = 0

    @property
    def name(self) -> str:
        return self.request.name if self.parent is None else f"{self.parent}/{self.request.name}"


@dataclass(slots=True)
class _Result:
    request: str
    parent: str | None
    id: DeviceID
    slice: ResourceSlice
    # the (sub)request and the device: their tolerations and binding conditions go into the
    # result, and a perDeviceNodeSelection slice's device gives its own node selection
    sub_request: DeviceSubRequest | None = None
    device: Device | None = None
    # admin access (``True``, else ``None``), and consumable capacity's share and amounts
    admin: bool | None = None
    share_id: str | None = None
    consumed: Mapping[str, Fraction] | None = None

    @property
    def name(self) -> str:
        return self.request if self.parent is None else f"{self.parent}/{self.request}"

    def allocation(self) -> DeviceRequestAllocationResult:
        """The result entry: as upstream, the request's tolerations and the device's binding
        conditions copied in."""
        tolerations = self.sub_request.tolerations if self.sub_request is not None else ()
        d = self.device
        if d is None or not d.binding_conditions:
            return DeviceRequestAllocationResult(self.name, self.id.driver, self.id.pool, self.id.device, self.admin,
                                                 self.share_id, self.consumed, tolerations)
        return DeviceRequestAllocationResult(self.name, self.id.driver, self.id.pool, self.id.device, self.admin,
                                             self.share_id, self.consumed, tolerations, d.binding_conditions,
                                             d.binding_failure_conditions)


def _allocation_result(claim: ResourceClaim, chosen: Sequence[_RequestData], found: Sequence[_Result],
                       node_name: str = "") -> AllocationResult:
    """The claim's ``AllocationResult``: ``found`` (the devices, in order), the configs of the
    classes of the requests (``chosen[ri]``: request ``ri``'s data, or its chosen subrequest's)
    and of the claim, and the node selector. ``node_name``: the node allocated for, which a device
    with ``bindsToNode`` pins the claim to (upstream's ``createNodeSelector``)."""
    results = tuple(r.allocation() for r in found)
    config: list[tuple[str, tuple[str, ...], Mapping[str, Any]]] = []
    class_ranges: dict[str, tuple[int, int]] = {}
    for rd in chosen:
        cls = rd.cls
        if cls is None:
            continue
        if cls.name in class_ranges:
            start, end = class_ranges[cls.name]
            for i in range(start, end):
                src, reqs, raw = config[i]
                config[i] = (src, (*reqs, rd.name), raw)
            continue
        start = len(config)
        for c in cls.config:
            config.append(("FromClass", (rd.name,), c.raw))
        class_ranges[cls.name] = (start, len(config))
    for c in claim.spec.config:
        if not c.requests:
            config.append(("FromClaim", c.requests, c.raw))
            continue
        for ri, request in enumerate(claim.spec.requests):
            if request.name in c.requests:
                config.append(("FromClaim", c.requests, c.raw))
                continue
            rd = chosen[ri]
            if rd.parent is None:
                continue
            if f"{request.name}/{rd.request.name}" in c.requests:
                config.append(("FromClaim", c.requests, c.raw))
    pinned = next((r.slice.node_name for r in found if r.slice.node_name), None) or \
        next((r.device.node_name for r in found
              if r.device is not None and r.slice.per_device_node_selection and r.device.node_name), None) or \
        (node_name if node_name and any(r.device is not None and r.device.binds_to_node for r in found) else None)
    if pinned:       # node-local: the selector depends on the node only, parsed once per node
        return AllocationResult(results, tuple(config), _node_local_selector(pinned), _pin(pinned))
    selector = _node_selector(found)
    return AllocationResult(results, tuple(config),
                            None if selector is None else parse_node_selector(selector, "nodeSelector"), selector)


def _pin(node_name: str) -> dict[str, Any]:
    return {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}


@functools.lru_cache(maxsize=65536)
def _node_local_selector(node_name: str) -> NodeSelector:
    """The parsed selector pinning a claim to ``node_name`` (an immutable value, so shared): Filter
    allocates on every candidate node for every pod, and parsing it anew each time was about a
    third of the DRA workloads' time (py-spy)."""
    return parse_node_selector(_pin(node_name), "nodeSelector")


def _node_selector(results: Sequence[_Result]) -> dict[str, Any] | None:
    """upstream's ``createNodeSelector``: a node-local device pins the claim to its node; otherwise
    the slices' one-term selectors are merged; devices available everywhere need none."""
    fields: list[Mapping[str, Any]] = []
    exprs: list[Mapping[str, Any]] = []
    for r in results:
        s = r.slice
        if s.node_name:
            return _pin(s.node_name)
        if r.device is not None and s.per_device_node_selection:     # the device's own
            if r.device.node_name:
                return _pin(r.device.node_name)
            raw = r.device.node_selector_raw
        else:
            raw = s.node_selector_raw
        if raw is None:
            continue
        terms = raw.get("nodeSelectorTerms") or []
        if len(terms) > 1:
            raise AllocationError(
                f"create NodeSelector: unsupported ResourceSlice.NodeSelector with {len(terms)} terms")
        if terms:
            for into, key in ((fields, "matchFields"), (exprs, "matchExpressions")):
                for req in terms[0].get(key) or []:
                    if not any(_same_requirement(req, have) for have in into):
                        into.append(req)
    if not fields and not exprs:
        return None
    term: dict[str, Any] = {}
    if exprs:
        term["matchExpressions"] = exprs
    if fields:
        term["matchFields"] = fields
    return {"nodeSelectorTerms": [term]}


def _same_requirement(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return (a.get("key") == b.get("key") and a.get("operator") == b.get("operator")
            and set(a.get("values") or ()) == set(b.get("values") or ()))
