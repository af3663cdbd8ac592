"""Validation of ResourceClaims, ResourceClaimTemplates, a claim's status and DeviceClasses
(``pkg/apis/resource/validation/validation.go``; ``resource.py`` is the overview).

A claim's requests are DNS labels, unique, each with exactly one of ``exactly`` or
``firstAvailable``; ``deviceClassName`` is required (a DNS subdomain) for ``exactly`` and each
subrequest; ``allocationMode`` is ``ExactCount`` (``count`` above zero) or ``All`` (no ``count``);
selectors are ``resource_fields._selectors``'s; constraints and configs name existing requests
(``req`` or ``req/sub``); opaque configs name a driver. The claim's (and the template's) spec is
immutable after creation. A status update keeps ``reservedFor`` at most 256 unique consumers
(resource, name, uid required), only while ``allocation`` is set and, once the claim is being
deleted, never adding one; an allocation once written never changes, and a new one's results name
existing requests, a driver, a pool and a device. A DeviceClass has selectors, opaque configs and
optionally an extended resource name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_name,
    _node_selector_term,
    dns_label,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    required_and,
    too_many,
    validate_labels,
)
from scheduler.simulator.registry.resource_fields import (
    _LABEL_VALUE,
    _LABEL_VALUE_MSG,
    _TAINT_EFFECTS,
    ALL,
    ALLOCATION_RESULTS_MAX,
    DEVICE_CONFIG_MAX,
    DEVICE_CONSTRAINTS_MAX,
    DEVICE_REQUESTS_MAX,
    EXACT_COUNT,
    FIRST_AVAILABLE_MAX,
    IMMUTABLE,
    RESERVED_FOR_MAX,
    _binding_parameters,
    _checked_unique,
    _fully_qualified_name,
    _list,
    _map,
    _opaque,
    _pool_name,
    _selectors,
    _str,
)
from scheduler.simulator.registry.storage import _csi_driver_name

__all__ = ["validate_claim_spec", "validate_claim_status_update", "validate_device_class", "validate_resource_claim",
           "validate_resource_claim_update", "validate_template", "validate_template_update"]

Obj = dict[str, Any]


_ALLOCATION_MODES = (ALL, EXACT_COUNT)
_TOLERATION_OPERATORS = ("Equal", "Exists")
_CONFIG_SOURCES = ("FromClaim", "FromClass")


# --- ResourceClaim spec ------------------------------------------------------------------------

def _request_names(devices: Mapping[str, Any]) -> dict[str, set[str] | None]:
    """``gatherRequestNames``: each request, with its subrequests' names when it has ``firstAvailable``."""
    out: dict[str, set[str] | None] = {}
    for r in _list(devices.get("requests")):
        r = _map(r)
        subs = _list(r.get("firstAvailable"))
        out[_str(r.get("name"))] = {_str(_map(s).get("name")) for s in subs} if subs else None
    return out


def _has_request(names: dict[str, set[str] | None], ref: str) -> bool:
    parts = ref.split("/")
    if len(parts) > 2 or parts[0] not in names:
        return False
    if len(parts) == 1:
        return True
    subs = names[parts[0]]
    return subs is not None and parts[1] in subs


_REF_MSG = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'"


def _request_ref(ref: Any, path: str, names: dict[str, set[str] | None]) -> list[Cause]:
    """``validateRequestNameRef``."""
    ref = _str(ref)
    parts = ref.split("/")
    if len(parts) > 2:
        return [invalid(path, ref, _REF_MSG)]
    out = [c for p in parts for c in dns_label(p, path)]
    if not _has_request(names, ref):
        out.append(invalid(path, ref, _REF_MSG))
    return out


def _request_refs(refs: Any, path: str, names: dict[str, set[str] | None]) -> list[Cause]:
    refs = _list(refs)
    if len(refs) > DEVICE_REQUESTS_MAX:
        return [too_many(path, len(refs), DEVICE_REQUESTS_MAX)]
    out: list[Cause] = []
    seen: set[str] = set()
    for i, ref in enumerate(refs):
        out += _request_ref(ref, f"{path}[{i}]", names)
        if _str(ref) in seen:
            out.append(duplicate(f"{path}[{i}]", _str(ref)))
        seen.add(_str(ref))
    return out


def _allocation_mode(req: Mapping[str, Any], path: str) -> list[Cause]:
    """``validateDeviceAllocationMode``."""
    mode, count = req.get("allocationMode"), req.get("count")
    count = count if isinstance(count, int) else 0
    if mode == ALL:
        if count:
            return [invalid(f"{path}.count", count, "must not be specified when allocationMode is 'All'")]
    elif mode == EXACT_COUNT:
        if count <= 0:
            return [invalid(f"{path}.count", count, "must be greater than zero")]
    else:
        return [not_supported(f"{path}.allocationMode", mode if mode is not None else "", _ALLOCATION_MODES)]
    return []


def _toleration(t: Any, path: str) -> list[Cause]:
    """``validateDeviceToleration``."""
    t = _map(t)
    out: list[Cause] = []
    key = _str(t.get("key"))
    if key:
        out += _label_name(key, f"{path}.key")
    op = t.get("operator") or "Equal"
    if op == "Exists":
        if t.get("value"):
            out.append(invalid(f"{path}.value", t.get("value"), "must be empty for operator `Exists`"))
    elif op == "Equal":
        value = _str(t.get("value"))
        if value and (len(value) > 63 or not _LABEL_VALUE.match(value)):
            out.append(invalid(f"{path}.value", value, _LABEL_VALUE_MSG))
    else:
        out.append(not_supported(f"{path}.operator", op, _TOLERATION_OPERATORS))
    effect = t.get("effect")
    if effect and effect not in _TAINT_EFFECTS:
        out.append(not_supported(f"{path}.effect", effect, _TAINT_EFFECTS))
    return out


def _exact_request(req: Any, path: str) -> list[Cause]:
    """``validateExactDeviceRequest`` (and the same for a subrequest)."""
    req = _map(req)
    out: list[Cause] = []
    out += required_and(_str(req.get("deviceClassName")), f"{path}.deviceClassName", dns_subdomain)
    out += _selectors(req.get("selectors"), f"{path}.selectors")
    out += _allocation_mode(req, path)
    for i, t in enumerate(_list(req.get("tolerations"))):
        out += _toleration(t, f"{path}.tolerations[{i}]")
    return out


def _request(req: Any, path: str) -> list[Cause]:
    """``validateDeviceRequest``."""
    req = _map(req)
    out = dns_label(_str(req.get("name")), f"{path}.name")
    first = _list(req.get("firstAvailable"))
    exactly = req.get("exactly")
    kinds = (1 if first else 0) + (1 if exactly is not None else 0)
    if kinds == 0:
        out.append(required(path, "exactly one of `exactly` or `firstAvailable` is required"))
    elif kinds > 1:
        out.append(invalid(path, None, "exactly one of `exactly` or `firstAvailable` is required, but multiple "
                                        "fields are set"))
    elif first:
        at = f"{path}.firstAvailable"
        if len(first) > FIRST_AVAILABLE_MAX:
            return [*out, too_many(at, len(first), FIRST_AVAILABLE_MAX)]
        out += _checked_unique(first, at, lambda sub, p: [*dns_label(_str(_map(sub).get("name")), f"{p}.name"),
                                                          *_exact_request(sub, p)], "name")
    else:
        out += _exact_request(exactly, f"{path}.exactly")
    return out


def validate_claim_spec(spec: Any, path: str) -> list[Cause]:
    """``validateResourceClaimSpec`` → ``validateDeviceClaim``."""
    devices = _map(_map(spec).get("devices"))
    at = f"{path}.devices"
    names = _request_names(devices)
    out: list[Cause] = []
    requests = _list(devices.get("requests"))
    if len(requests) > DEVICE_REQUESTS_MAX:
        out.append(too_many(f"{at}.requests", len(requests), DEVICE_REQUESTS_MAX))
    else:
        out += _checked_unique(requests, f"{at}.requests", _request, "name")
    constraints = _list(devices.get("constraints"))
    if len(constraints) > DEVICE_CONSTRAINTS_MAX:
        out.append(too_many(f"{at}.constraints", len(constraints), DEVICE_CONSTRAINTS_MAX))
    else:
        for i, c in enumerate(constraints):
            c = _map(c)
            cat = f"{at}.constraints[{i}]"
            out += _request_refs(c.get("requests"), f"{cat}.requests", names)
            if c.get("matchAttribute") is not None:
                out += _fully_qualified_name(_str(c["matchAttribute"]), f"{cat}.matchAttribute")
            elif c.get("distinctAttribute") is not None:
                out += _fully_qualified_name(_str(c["distinctAttribute"]), f"{cat}.distinctAttribute")
            else:
                out.append(required(f"{cat}.matchAttribute"))
    configs = _list(devices.get("config"))
    if len(configs) > DEVICE_CONFIG_MAX:
        out.append(too_many(f"{at}.config", len(configs), DEVICE_CONFIG_MAX))
    else:
        for i, c in enumerate(configs):
            out += _request_refs(_map(c).get("requests"), f"{at}.config[{i}].requests", names)
            out += _opaque(_map(c), f"{at}.config[{i}]")
    return out


def validate_resource_claim(claim: Obj) -> list[Cause]:
    """``ValidateResourceClaim`` (the name was checked with the metadata)."""
    return validate_claim_spec(claim.get("spec"), "spec")


def validate_resource_claim_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidateResourceClaimUpdate``: the spec is immutable; only that is checked."""
    if new.get("spec") != old.get("spec"):
        return [invalid("spec", new.get("spec"), IMMUTABLE)]
    return []


def validate_template(template: Obj) -> list[Cause]:
    """``ValidateResourceClaimTemplate``: the template's metadata labels and annotations, and its claim spec."""
    spec = _map(template.get("spec"))
    out = validate_labels(_map(spec.get("metadata")).get("labels"), "spec.metadata.labels")
    return out + validate_claim_spec(spec.get("spec"), "spec.spec")


def validate_template_update(new: Obj, old: Obj) -> list[Cause]:
    if new.get("spec") != old.get("spec"):
        return [invalid("spec", new.get("spec"), IMMUTABLE)]
    return []


# --- ResourceClaim status ----------------------------------------------------------------------

def _consumer(ref: Any, path: str) -> list[Cause]:
    """``validateResourceClaimUserReference``."""
    ref = _map(ref)
    return [required(f"{path}.{f}") for f in ("resource", "name", "uid") if not _str(ref.get(f))]


def _allocation(allocation: Any, path: str, names: dict[str, set[str] | None]) -> list[Cause]:
    """``validateAllocationResult`` for a new allocation."""
    allocation = _map(allocation)
    devices = _map(allocation.get("devices"))
    out: list[Cause] = []
    results = _list(devices.get("results"))
    at = f"{path}.devices.results"
    if len(results) > ALLOCATION_RESULTS_MAX:
        out.append(too_many(at, len(results), ALLOCATION_RESULTS_MAX))
    else:
        for i, r in enumerate(results):
            r = _map(r)
            rat = f"{at}[{i}]"
            out += _request_ref(r.get("request"), f"{rat}.request", names)
            out += _csi_driver_name(_str(r.get("driver")), f"{rat}.driver")
            out += _pool_name(_str(r.get("pool")), f"{rat}.pool")
            out += dns_label(_str(r.get("device")), f"{rat}.device")
            out += _binding_parameters(r, rat)
    for i, c in enumerate(_list(devices.get("config"))):
        c = _map(c)
        cat = f"{path}.devices.config[{i}]"
        source = c.get("source")
        if not source:
            out.append(required(f"{cat}.source"))
        elif source not in _CONFIG_SOURCES:
            out.append(not_supported(f"{cat}.source", source, _CONFIG_SOURCES))
        out += _request_refs(c.get("requests"), f"{cat}.requests", names)
        out += _opaque(c, cat)
    selector = allocation.get("nodeSelector")
    if selector is not None:
        terms = _list(_map(selector).get("nodeSelectorTerms"))
        if not terms:
            out.append(required(f"{path}.nodeSelector.nodeSelectorTerms", "must have at least one node selector "
                                                                          "term"))
        for i, t in enumerate(terms):
            out += _node_selector_term(t, f"{path}.nodeSelector.nodeSelectorTerms[{i}]")
    return out


def validate_claim_status_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidateResourceClaimStatusUpdate``."""
    status, old_status = _map(new.get("status")), _map(old.get("status"))
    names = _request_names(_map(_map(new.get("spec")).get("devices")))
    out: list[Cause] = []
    reserved = _list(status.get("reservedFor"))
    if len(reserved) > RESERVED_FOR_MAX:
        out.append(too_many("status.reservedFor", len(reserved), RESERVED_FOR_MAX))
    else:
        out += _checked_unique(reserved, "status.reservedFor", _consumer, "uid")
    allocation, old_allocation = status.get("allocation"), old_status.get("allocation")
    if reserved:
        if allocation is None:
            out.append(forbidden("status.reservedFor", "may not be specified when `allocated` is not set"))
        elif (new.get("metadata") or {}).get("deletionTimestamp"):
            before = [json.dumps(r, sort_keys=True) for r in _list(old_status.get("reservedFor"))]
            if any(json.dumps(r, sort_keys=True) not in before for r in reserved):
                out.append(forbidden("status.reservedFor", "new entries may not be added while "
                                                           "`deallocationRequested` or `deletionTimestamp` are set"))
    if old_allocation is not None and allocation is not None:
        if allocation != old_allocation:
            out.append(invalid("status.allocation", allocation, IMMUTABLE))
    elif allocation is not None:
        out += _allocation(allocation, "status.allocation", names)
    return out


# --- DeviceClass -----------------------------------------------------------------------------------

def validate_device_class(cls: Obj) -> list[Cause]:
    """``validateDeviceClassSpec``: selectors, opaque configs, an extended resource name."""
    spec = _map(cls.get("spec"))
    out = _selectors(spec.get("selectors"), "spec.selectors")
    configs = _list(spec.get("config"))
    if len(configs) > DEVICE_CONFIG_MAX:
        out.append(too_many("spec.config", len(configs), DEVICE_CONFIG_MAX))
    else:
        for i, c in enumerate(configs):
            out += _opaque(_map(c), f"spec.config[{i}]")
    ext = spec.get("extendedResourceName")
    if ext is not None and not _extended_resource_name(_str(ext)):
        out.append(invalid("spec.extendedResourceName", ext, "must be a valid extended resource name"))
    return out


def _extended_resource_name(name: str) -> bool:
    """``IsExtendedResourceName``: a qualified name outside ``kubernetes.io/``, not ``requests.``-prefixed."""
    from scheduler.model.selectors import label_key_errors

    if "/" not in name or name.startswith("requests.") or "kubernetes.io/" in name:
        return False
    return not label_key_errors("requests." + name)
