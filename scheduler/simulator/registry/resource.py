"""What kube-apiserver does to the ``resource.k8s.io/v1`` kinds (Dynamic Resource Allocation)
between decoding and storage: DeviceClasses, ResourceClaims (with their ``status`` subresource),
ResourceClaimTemplates, ResourceSlices and DeviceTaintRules (with their ``status`` subresource).

- **Defaulting** (``pkg/apis/resource/v1/defaults.go``): a request's ``exactly`` and each
  ``firstAvailable`` subrequest get ``allocationMode: ExactCount`` and, in that mode, ``count: 1``;
  a toleration's ``operator`` is ``Equal`` (the type's ``+default``); a device taint gets its
  ``timeAdded``.
- **Validation** (``pkg/apis/resource/validation/validation.go``), with upstream's causes (field
  path, reason, detail): a claim's requests are DNS labels, unique, each with exactly one of
  ``exactly`` or ``firstAvailable``; ``deviceClassName`` is required (a DNS subdomain) for
  ``exactly`` and each subrequest; ``allocationMode`` is ``ExactCount`` (``count`` above zero) or
  ``All`` (no ``count``); a selector has its ``cel.expression``, at most 10 KiB, that compiles
  (``celrules.compile_program``: syntax, undeclared references) and whose worst-case cost is within
  ``CELSelectorExpressionMaxCost`` (``scheduler.dra.celcost``: "too complex, exceeds cost limit"); constraints
  and configs name existing requests (``req`` or ``req/sub``); opaque configs name a driver. The
  claim's (and the template's) spec is immutable after creation. A status update keeps
  ``reservedFor`` at most 256 unique consumers (resource, name, uid required), only while
  ``allocation`` is set and, once the claim is being deleted, never adding one; an allocation once
  written never changes, and a new one's results name existing requests, a driver, a pool and a
  device. The status is written only through ``/status`` (the generic update path keeps the stored
  status on a spec write, and a create drops it). A ResourceSlice names its ``driver`` and
  ``pool`` (name, ``resourceSliceCount`` above zero, ``generation`` not negative), exactly one of
  ``nodeName``, ``nodeSelector`` (one term), ``allNodes``, ``perDeviceNodeSelection``, devices with
  unique DNS-label names (at most 128), each attribute holding exactly one value (a version being
  semver); its pool name, driver and node name never change. A claim or template asking for
  ``adminAccess`` is refused outside a namespace labelled ``resource.kubernetes.io/admin-access:
  "true"`` (the strategies' ``AuthorizedForAdmin``).
- The pod's side (``spec.resourceClaims``, ``resources.claims``, ``status.resourceClaimStatuses``)
  is validated with the pod, in ``registry/core/validation.py``.

The limits are upstream's constants (``pkg/apis/resource/types.go``). Which controllers act on
these objects (the resourceclaim controller, the kubelet's wait, the simulated DRA driver) is
``controllers/resourceclaims.py`` and ``controllers/gpudriver.py``.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from scheduler.dra.celcost import CEL_SELECTOR_MAX_COST, TOO_COMPLEX, CostError, estimate_cost
from scheduler.errors import QuantityError
from scheduler.quantity import format_quantity, parse_quantity
from scheduler.simulator.apierrors import invalid as invalid_error
from scheduler.simulator.celrules import compile_program
from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_name,
    _node_name_errors,
    _node_selector_term,
    dns_label,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    required_and,
    too_long,
    too_many,
    validate_labels,
)
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.storage import _csi_driver_name

__all__ = ["CLAIMS", "CLASSES", "FINALIZER", "GROUP", "POD_CLAIM_NAME", "RULES", "SLICES", "STORES", "TEMPLATES",
           "admit_dra", "claim_state", "default_claim_spec", "validate_claim_status_update",
           "validate_device_class", "validate_device_taint_rule", "validate_resource_claim", "validate_resource_slice",
           "validate_taint_rule_status_update", "validate_template"]

Obj = dict[str, Any]

GROUP = "resource.k8s.io"
CLASSES, CLAIMS = f"{GROUP}/deviceclasses", f"{GROUP}/resourceclaims"
TEMPLATES, SLICES = f"{GROUP}/resourceclaimtemplates", f"{GROUP}/resourceslices"
RULES = f"{GROUP}/devicetaintrules"
STORES = {CLASSES: "DeviceClass", CLAIMS: "ResourceClaim", TEMPLATES: "ResourceClaimTemplate",
          SLICES: "ResourceSlice", RULES: "DeviceTaintRule"}
# The finalizer the scheduler adds before it writes an allocation (resourceapi.Finalizer), and the
# annotation naming the pod's claim a generated claim is for (the resourceclaim controller's).
FINALIZER = "resource.kubernetes.io/delete-protection"
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"

EXACT_COUNT, ALL = "ExactCount", "All"
_ALLOCATION_MODES = (ALL, EXACT_COUNT)
_TOLERATION_OPERATORS = ("Equal", "Exists")
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
_CONFIG_SOURCES = ("FromClaim", "FromClass")
# pkg/apis/resource/types.go
DEVICE_REQUESTS_MAX = 32                 # DeviceRequestsMaxSize
FIRST_AVAILABLE_MAX = 8                  # FirstAvailableDeviceRequestMaxSize
DEVICE_SELECTORS_MAX = 32                # DeviceSelectorsMaxSize
DEVICE_CONSTRAINTS_MAX = 32              # DeviceConstraintsMaxSize
DEVICE_CONFIG_MAX = 32                   # DeviceConfigMaxSize
CEL_MAX_LENGTH = 10 * 1024               # CELSelectorExpressionMaxLength
CEL_MAX_COST = CEL_SELECTOR_MAX_COST     # CELSelectorExpressionMaxCost
RESERVED_FOR_MAX = 256                   # ResourceClaimReservedForMaxSize
ALLOCATION_RESULTS_MAX = 32              # AllocationResultsMaxSize
SLICE_MAX_DEVICES = 128                  # ResourceSliceMaxDevices
BINDING_CONDITIONS_MAX = 4              # BindingConditionsMaxSize, BindingFailureConditionsMaxSize
SLICE_MAX_DEVICES_ADVANCED = 64          # ResourceSliceMaxDevicesWithAdvancedFeatures (taints, counters)
SLICE_MAX_COUNTER_SETS = 8               # ResourceSliceMaxCounterSets
MAX_COUNTERS_PER_COUNTER_SET = 32        # ResourceSliceMaxCountersPerCounterSet
MAX_COUNTER_CONSUMPTIONS_PER_DEVICE = 2  # ResourceSliceMaxDeviceCounterConsumptionsPerDevice
MAX_COUNTERS_PER_CONSUMPTION = 32        # ResourceSliceMaxCountersPerDeviceCounterConsumption
POLICY_MAX_VALID_VALUES = 10             # CapacityRequestPolicyDiscreteMaxOptions
MAX_ATTRIBUTES_AND_CAPACITIES = 32       # ResourceSliceMaxAttributesAndCapacitiesPerDevice
ATTRIBUTE_MAX_VALUE_LENGTH = 64          # DeviceAttributeMaxValueLength
DEVICE_MAX_ID_LENGTH = 32                # DeviceMaxIDLength
POOL_NAME_MAX_LENGTH = 253               # PoolNameMaxLength
OPAQUE_PARAMETERS_MAX_LENGTH = 10 * 1024  # OpaqueParametersMaxLength
IMMUTABLE = "field is immutable"
_CEL_VARIABLES = frozenset({"device"})
# a label value (IsValidLabelValue): what a taint's value must be
_LABEL_VALUE = re.compile(r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
                    "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
_C_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_C_IDENTIFIER_MSG = ("a valid C identifier must start with alphabetic character or '_', followed by a string of "
                     "alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for "
                     "validation is '[A-Za-z_][A-Za-z0-9_]*')")
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
                     r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _ns(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def claim_state(claim: Obj) -> str:
    """``resourceClaimState`` (the STATE column): ``deleted``, then ``pending`` or ``allocated`` and
    ``reserved``, joined by commas."""
    states = []
    deleted = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
    if deleted:
        states.append("deleted")
    status = _map(claim.get("status"))
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


# --- defaulting ------------------------------------------------------------------------------------

def _default_request(req: Any) -> None:
    """``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest``, and the tolerations' operator."""
    if not isinstance(req, dict):
        return
    if not req.get("allocationMode"):
        req["allocationMode"] = EXACT_COUNT
    if req["allocationMode"] == EXACT_COUNT and not req.get("count"):
        req["count"] = 1
    for t in _list(req.get("tolerations")):
        if isinstance(t, dict) and not t.get("operator"):
            t["operator"] = "Equal"


def default_claim_spec(spec: Any) -> None:
    """Default a ResourceClaimSpec in place (a claim's ``spec``, a template's ``spec.spec``)."""
    for r in _list(_map(_map(spec).get("devices")).get("requests")):
        if not isinstance(r, dict):
            continue
        _default_request(r.get("exactly"))
        for sub in _list(r.get("firstAvailable")):
            _default_request(sub)


def _default_slice(slice_: Obj) -> None:
    """``SetDefaults_DeviceTaint``: a taint without ``timeAdded`` gets the time it was written. And what
    decoding into the Go type gives: ``pool.generation`` has no ``omitempty``, so it is 0 when not sent."""
    pool = _map(slice_.get("spec")).get("pool")
    if isinstance(pool, dict):
        pool.setdefault("generation", 0)
    for d in _list(_map(slice_.get("spec")).get("devices")):
        for t in _list(_map(d).get("taints")):
            if isinstance(t, dict) and not t.get("timeAdded"):
                t["timeAdded"] = now_iso()


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


def _checked_unique(items: list[Any], at: str, check: Callable[[Any, str], list[Cause]], key: str) -> list[Cause]:
    """Each item checked, then each item whose ``key`` repeats an earlier one's a Duplicate (all the items'
    own errors first, then the duplicates)."""
    out: list[Cause] = []
    for i, x in enumerate(items):
        out += check(x, f"{at}[{i}]")
    seen: set[str] = set()
    for i, x in enumerate(items):
        k = _str(_map(x).get(key))
        if k in seen:
            out.append(duplicate(f"{at}[{i}]", k))
        seen.add(k)
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


def _selectors(selectors: Any, path: str) -> list[Cause]:
    """``validateSelectorSlice``: each selector has ``cel`` with an expression (not compiled here)."""
    selectors = _list(selectors)
    if len(selectors) > DEVICE_SELECTORS_MAX:
        return [too_many(path, len(selectors), DEVICE_SELECTORS_MAX)]
    out: list[Cause] = []
    for i, s in enumerate(selectors):
        at = f"{path}[{i}]"
        cel = _map(s).get("cel")
        if cel is None:
            out.append(required(f"{at}.cel"))
            continue
        expression = _str(_map(cel).get("expression"))
        if not expression:
            out.append(required(f"{at}.cel.expression"))
        elif len(expression) > CEL_MAX_LENGTH:
            out.append(too_long(f"{at}.cel.expression", CEL_MAX_LENGTH))
        else:
            # compileCELExpression: a syntax error or an undeclared reference (cel-go's words), then
            # its worst-case cost against CELSelectorExpressionMaxCost (scheduler.dra.celcost).
            _, error = compile_program(expression, _CEL_VARIABLES)
            if error:
                out.append(invalid(f"{at}.cel.expression", expression, error))
            elif _max_cost(expression) > CEL_MAX_COST:
                out.append(forbidden(f"{at}.cel.expression", TOO_COMPLEX))
    return out


def _max_cost(expression: str) -> int:
    try:
        return estimate_cost(expression)
    except CostError:        # the engine parsed what the estimator cannot: no verdict, as before
        return 0


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


def _opaque(config: Mapping[str, Any], path: str) -> list[Cause]:
    """``validateDeviceConfiguration``: ``opaque`` with a driver name and JSON-object parameters."""
    opaque = config.get("opaque")
    if opaque is None:
        return [required(f"{path}.opaque")]
    opaque = _map(opaque)
    out = _csi_driver_name(_str(opaque.get("driver")), f"{path}.opaque.driver")
    params = opaque.get("parameters")
    at = f"{path}.opaque.parameters"
    if params is None:
        out.append(required(at))
    elif not isinstance(params, dict):
        out.append(invalid(at, "<value omitted>", "parameters must be a valid JSON object"))
    elif len(json.dumps(params, separators=(",", ":"))) > OPAQUE_PARAMETERS_MAX_LENGTH:
        out.append(too_long(at, OPAQUE_PARAMETERS_MAX_LENGTH))
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


def _pool_name(name: str, path: str) -> list[Cause]:
    """``validatePoolName``: required, at most 253 characters, each ``/``-separated part a DNS subdomain."""
    if not name:
        return [required(path)]
    out = []
    if len(name) > POOL_NAME_MAX_LENGTH:
        out.append(too_long(path, POOL_NAME_MAX_LENGTH))
    for part in name.split("/"):
        out += dns_subdomain(part, path)
    return out


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


# --- ResourceSlice -------------------------------------------------------------------------------

def _qualified_name(name: str, path: str) -> list[Cause]:
    """``validateQualifiedName``: a C identifier, optionally after a driver-name domain and ``/``."""
    parts = name.split("/")
    out: list[Cause] = []
    if len(parts) == 1:
        out += _c_identifier(parts[0], path)
    elif len(parts) == 2:
        if not parts[0]:
            out.append(invalid(path, "", "the domain must not be empty"))
        else:
            out += _csi_driver_name(parts[0], path)
        if not parts[1]:
            out.append(invalid(path, "", "the name must not be empty"))
        else:
            out += _c_identifier(parts[1], path)
    else:
        out.append(invalid(path, name, "must not contain more than one slash"))
    return out


def _fully_qualified_name(name: str, path: str) -> list[Cause]:
    out = _qualified_name(name, path)
    if "/" not in name:
        out.append(invalid(path, name, "a fully qualified name must be a domain and a name separated by a slash"))
    return out


def _c_identifier(ident: str, path: str) -> list[Cause]:
    out = []
    if len(ident) > DEVICE_MAX_ID_LENGTH:
        out.append(too_long(path, DEVICE_MAX_ID_LENGTH))
    if not _C_IDENTIFIER.match(ident):
        out.append(invalid(path, ident, _C_IDENTIFIER_MSG))
    return out


_VALUE_KINDS = ("bool", "int", "string", "version", "bools", "ints", "strings", "versions")


def _attribute(attr: Any, path: str) -> list[Cause]:
    """``validateDeviceAttribute``: exactly one value; strings at most 64 bytes, versions semver."""
    attr = _map(attr)
    out: list[Cause] = []
    kinds = [k for k in _VALUE_KINDS if attr.get(k) is not None]
    for k in kinds:
        value = attr[k]
        if k in ("string", "version"):
            out += _attribute_string(_str(value), f"{path}.{k}", k == "version")
        elif k.endswith("s"):
            if not value:
                out.append(invalid(f"{path}.{k}", value, "must not be empty if specified"))
            if k in ("strings", "versions"):
                for i, v in enumerate(_list(value)):
                    out += _attribute_string(_str(v), f"{path}.{k}[{i}]", k == "versions")
    if not kinds:
        out.append(invalid(path, "", "exactly one value must be specified"))
    elif len(kinds) > 1:
        out.append(invalid(path, dict(attr), "exactly one value must be specified"))
    return out


def _attribute_string(value: str, path: str, version: bool) -> list[Cause]:
    out = []
    if version and not _SEMVER.match(value):
        out.append(invalid(path, value, "must be a string compatible with semver.org spec 2.0.0"))
    if len(value) > ATTRIBUTE_MAX_VALUE_LENGTH:
        out.append(too_long(path, ATTRIBUTE_MAX_VALUE_LENGTH))
    return out


def _device(device: Any, path: str, per_device: bool) -> list[Cause]:
    """``validateDevice``: the name, attributes and capacities (their keys and number), taints and where
    the device is reachable (only with ``perDeviceNodeSelection``)."""
    device = _map(device)
    out = dns_label(_str(device.get("name")), f"{path}.name")
    attrs, capacity = _map(device.get("attributes")), _map(device.get("capacity"))
    if len(attrs) + len(capacity) > MAX_ATTRIBUTES_AND_CAPACITIES:
        out.append(invalid(path, len(attrs) + len(capacity), "the total number of attributes and capacities must "
                                                             f"not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}"))
    for key in sorted(attrs):
        out += _qualified_name(key, f"{path}.attributes[{key}]")
        out += _attribute(attrs[key], f"{path}.attributes[{key}]")
    for key in sorted(capacity):
        out += _qualified_name(key, f"{path}.capacity[{key}]")
        policy = _map(capacity[key]).get("requestPolicy")
        if policy is None:
            continue
        if not device.get("allowMultipleAllocations"):
            out.append(forbidden(f"{path}.capacity[{key}].requestPolicy", "allowMultipleAllocations must be true"))
        else:
            out += _request_policy(_quantity_of(_map(capacity[key]).get("value")), _map(policy),
                                   f"{path}.capacity[{key}].requestPolicy")
    consumes = _list(device.get("consumesCounters"))
    if len(consumes) > MAX_COUNTER_CONSUMPTIONS_PER_DEVICE:
        out.append(too_many(f"{path}.consumesCounters", len(consumes), MAX_COUNTER_CONSUMPTIONS_PER_DEVICE))
    else:
        out += _checked_unique(consumes, f"{path}.consumesCounters",
                               lambda c, p: _counters_of(_map(c), p, "counterSet", MAX_COUNTERS_PER_CONSUMPTION),
                               "counterSet")
    for i, t in enumerate(_list(device.get("taints"))):
        out += _device_taint(_map(t), f"{path}.taints[{i}]")
    out += _binding_parameters(device, path)
    where = [f for f in ("nodeName", "nodeSelector", "allNodes") if device.get(f) is not None]
    if per_device:
        out += _device_node_selection(device, path)
    elif where:
        out.append(invalid(path, None, "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
                                       "`perDeviceNodeSelection` is set to true in the ResourceSlice spec"))
    return out


def _counters_of(c: Mapping[str, Any], path: str, name_key: str, limit: int) -> list[Cause]:
    """``validateCounterSet`` / ``validateDeviceCounterConsumption``: a name (a DNS label) and at most
    ``limit`` counters, each named by a DNS label (any quantity is a valid value)."""
    name = _str(c.get(name_key))
    out = [required(f"{path}.{name_key}")] if not name else dns_label(name, f"{path}.{name_key}")
    counters = _map(c.get("counters"))
    if not counters:
        out.append(required(f"{path}.counters"))
    elif len(counters) > limit:
        out.append(too_many(f"{path}.counters", len(counters), limit))
    else:
        for key in sorted(counters):
            out += dns_label(str(key), f"{path}.counters[{key}]")
    return out


def _quantity_of(raw: Any) -> Fraction | None:
    try:
        return parse_quantity(raw) if isinstance(raw, str) else Fraction(raw) if isinstance(raw, int) else None
    except QuantityError:
        return None


def _request_policy(capacity: Fraction | None, policy: Mapping[str, Any], path: str) -> list[Cause]:
    """``validateRequestPolicy`` of a shared device's capacity: validValues or validRange, with a default
    among them, within the capacity (upstream's messages)."""
    values = [_quantity_of(v) for v in _list(policy.get("validValues"))]
    rng = policy.get("validRange")
    if values and rng is not None:
        return [forbidden(path, 'exactly one policy can be specified, cannot specify "validValues" and '
                                '"validRange" at the same time')]
    default = _quantity_of(policy.get("default"))
    out: list[Cause] = []
    if values:
        if default is None:
            return [required(f"{path}.default", "required when validValues is defined")]
        raw = _list(policy.get("validValues"))
        for i in range(len(values) - 1):
            a, b = values[i], values[i + 1]
            if a is not None and b is not None and a > b:
                out.append(invalid(f"{path}.validValues[{i + 1}]", raw[i + 1], "values must be sorted in ascending "
                                                                                "order"))
        if len(values) > POLICY_MAX_VALID_VALUES:
            out.append(too_many(f"{path}.validValues", len(values), POLICY_MAX_VALID_VALUES))
        for i, v in enumerate(values):
            if v is not None and capacity is not None and v > capacity:
                out.append(invalid(f"{path}.validValues[{i}]", raw[i], f"option is larger than capacity value: "
                                                                        f"{format_quantity(capacity)}"))
        if default not in values:
            out.append(invalid(f"{path}.validValues", policy.get("default"),
                               "default value is not valid according to the requestPolicy"))
        return out
    if rng is None:
        return out
    if default is None:
        return [required(f"{path}.default", "required when validRange is defined")]
    r = _map(rng)
    low, high, step = _quantity_of(r.get("min")), _quantity_of(r.get("max")), _quantity_of(r.get("step"))
    at = f"{path}.validRange"
    if low is None:
        return [required(f"{at}.min", "required when validRange is defined")]
    cap = format_quantity(capacity) if capacity is not None else ""
    if capacity is not None and low > capacity:
        out.append(invalid(f"{at}.min", r.get("min"), f"min is larger than capacity value: {cap}"))
    if default < low:
        out.append(invalid(f"{at}.min", policy.get("default"), f"default is less than min: {r.get('min')}"))
    if high is not None:
        if low > high:
            out.append(invalid(f"{at}.max", r.get("min"), f"min is larger than max: {r.get('max')}"))
        if capacity is not None and high > capacity:
            out.append(invalid(f"{at}.max", r.get("max"), f"max is larger than capacity value: {cap}"))
        if default > high:
            out.append(invalid(f"{at}.max", policy.get("default"), f"default is more than max: {r.get('max')}"))
    if step is not None:
        if capacity is not None and low + step > capacity:
            out.append(invalid(f"{at}.step", r.get("step"), f"one step {format_quantity(low + step)} is larger than "
                                                            f"capacity value: {cap}"))
        for value, raw_value in ((default, policy.get("default")), (high, r.get("max"))):
            # upstream's validateRequestPolicyRangeStep, in whole units (Quantity.Value())
            if value is not None and math.ceil(step) and (math.ceil(value) - math.ceil(low)) % math.ceil(step):
                out.append(invalid(f"{at}.step", raw_value, f"value is not a multiple of a given step "
                                                            f"({r.get('step')}) from ({r.get('min')})"))
    return out


def _binding_parameters(obj: Mapping[str, Any], path: str) -> list[Cause]:
    """``validateDeviceBindingParameters`` (a device's, or an allocation result's copy): at most 4
    of each, condition types that are label names, no duplicates, no overlap, and each list only
    with the other."""
    conditions = [c for c in _list(obj.get("bindingConditions")) if isinstance(c, str)]
    failures = [c for c in _list(obj.get("bindingFailureConditions")) if isinstance(c, str)]
    out: list[Cause] = []
    for name, values in (("bindingConditions", conditions), ("bindingFailureConditions", failures)):
        if len(values) > BINDING_CONDITIONS_MAX:
            out.append(too_many(f"{path}.{name}", len(values), BINDING_CONDITIONS_MAX))
        seen: set[str] = set()
        for i, c in enumerate(values):
            out += _label_name(c, f"{path}.{name}[{i}]")
            if c in seen:
                out.append(duplicate(f"{path}.{name}[{i}]", c))
            seen.add(c)
            if name == "bindingFailureConditions" and c in conditions:
                out.append(invalid(f"{path}.{name}[{i}]", c, "bindingFailureConditions must not overlap with "
                                                             "bindingConditions"))
    if not conditions and failures:
        out.append(invalid(f"{path}.bindingConditions", conditions, "bindingConditions are required to use "
                                                                    "bindingFailureConditions"))
    if not failures and conditions:
        out.append(invalid(f"{path}.bindingFailureConditions", failures, "bindingFailureConditions are required "
                                                                         "to use bindingConditions"))
    return out


def _device_taint(t: Mapping[str, Any], tat: str) -> list[Cause]:
    """``validateDeviceTaint``: a key that is a label name (``ValidateLabelName``), a value that is
    a label value, and a known effect."""
    out: list[Cause] = []
    out += required_and(_str(t.get("key")), f"{tat}.key", _label_name)
    value = _str(t.get("value"))
    if value and (len(value) > 63 or not _LABEL_VALUE.match(value)):
        out.append(invalid(f"{tat}.value", value, _LABEL_VALUE_MSG))
    effect = t.get("effect")
    if not effect:
        out.append(required(f"{tat}.effect"))
    elif effect not in _TAINT_EFFECTS:
        out.append(not_supported(f"{tat}.effect", effect, _TAINT_EFFECTS))
    return out


def _device_node_selection(device: Mapping[str, Any], path: str) -> list[Cause]:
    """With ``perDeviceNodeSelection``: exactly one of the device's nodeName, nodeSelector, allNodes."""
    out: list[Cause] = []
    chosen = []
    if device.get("nodeName") is not None:
        if device["nodeName"]:
            chosen.append("`nodeName`")
            out += [invalid(f"{path}.nodeName", device["nodeName"], m)
                    for m in _node_name_errors(_str(device["nodeName"]))]
        else:
            out.append(invalid(f"{path}.nodeName", "", "must not be empty"))
    if device.get("nodeSelector") is not None:
        chosen.append("`nodeSelector`")
    if device.get("allNodes") is not None:
        if device["allNodes"]:
            chosen.append("`allNodes`")
        else:
            out.append(invalid(f"{path}.allNodes", False, "must be either unset or set to true"))
    detail = ("exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when "
              "`perDeviceNodeSelection` is set to true in the ResourceSlice spec")
    if not chosen:
        out.append(required(path, detail))
    elif len(chosen) > 1:
        out.append(invalid(path, "{" + ", ".join(chosen) + "}", detail))
    return out


def validate_resource_slice(slice_: Obj, old: Obj | None = None) -> list[Cause]:
    """``validateResourceSliceSpec``."""
    spec = _map(slice_.get("spec"))
    out = _csi_driver_name(_str(spec.get("driver")), "spec.driver")
    pool = _map(spec.get("pool"))
    out += _pool_name(_str(pool.get("name")), "spec.pool.name")
    count = pool.get("resourceSliceCount")
    count = count if isinstance(count, int) else 0
    if count <= 0:
        out.append(invalid("spec.pool.resourceSliceCount", count, "must be greater than zero"))
    generation = pool.get("generation")
    if isinstance(generation, int) and generation < 0:
        out.append(invalid("spec.pool.generation", generation, "must be greater than or equal to zero"))
    if old is not None:
        out += _slice_immutable(spec, _map(old.get("spec")))
    out += _slice_node_selection(spec)
    out += _slice_devices(spec)
    return out


def _slice_immutable(spec: Mapping[str, Any], ospec: Mapping[str, Any]) -> list[Cause]:
    """The pool's name, the driver and the node stay as created."""
    out: list[Cause] = []
    pool = _map(spec.get("pool"))
    if pool.get("name") != _map(ospec.get("pool")).get("name"):
        out.append(invalid("spec.pool.name", pool.get("name"), IMMUTABLE))
    if spec.get("driver") != ospec.get("driver"):
        out.append(invalid("spec.driver", spec.get("driver"), IMMUTABLE))
    if spec.get("nodeName") != ospec.get("nodeName"):
        out.append(invalid("spec.nodeName", spec.get("nodeName"), IMMUTABLE))
    return out


def _slice_node_selection(spec: Mapping[str, Any]) -> list[Cause]:
    """Exactly one of nodeName, nodeSelector (one term), allNodes, perDeviceNodeSelection."""
    out: list[Cause] = []
    chosen: list[str] = []
    node = spec.get("nodeName")
    if node is not None:
        if node:
            chosen.append("`nodeName`")
            out += [invalid("spec.nodeName", node, m) for m in _node_name_errors(_str(node))]
        else:
            out.append(invalid("spec.nodeName", "", "must be either unset or set to a non-empty string"))
    selector = spec.get("nodeSelector")
    if selector is not None:
        chosen.append("`nodeSelector`")
        terms = _list(_map(selector).get("nodeSelectorTerms"))
        for i, t in enumerate(terms):
            out += _node_selector_term(t, f"spec.nodeSelector.nodeSelectorTerms[{i}]")
        if len(terms) != 1:
            out.append(invalid("spec.nodeSelector.nodeSelectorTerms", terms, "must have exactly one node selector "
                                                                             "term"))
    for f in ("allNodes", "perDeviceNodeSelection"):
        if spec.get(f) is not None:
            if spec[f]:
                chosen.append(f"`{f}`")
            else:
                out.append(invalid(f"spec.{f}", False, "must be either unset or set to true"))
    which = "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
    if not chosen:
        out.append(required("spec", which))
    elif len(chosen) > 1:
        out.append(invalid("spec", "{" + ", ".join(chosen) + "}", which + ", but multiple fields are set"))
    return out


def _slice_devices(spec: Mapping[str, Any]) -> list[Cause]:
    """The devices: not with sharedCounters, not too many, each valid, names unique."""
    out: list[Cause] = []
    devices = _list(spec.get("devices"))
    if spec.get("sharedCounters") is not None and spec.get("devices") is not None:
        out.append(invalid("spec", "", "only one of `sharedCounters` or `devices` is allowed"))
    advanced = any(_map(d).get("taints") or _map(d).get("consumesCounters") for d in devices)
    limit = SLICE_MAX_DEVICES_ADVANCED if advanced else SLICE_MAX_DEVICES
    if len(devices) > limit:
        out.append(too_many("spec.devices", len(devices), limit))
        return out
    per_device = bool(spec.get("perDeviceNodeSelection"))
    out += _checked_unique(devices, "spec.devices", lambda d, p: _device(d, p, per_device), "name")
    sets = _list(spec.get("sharedCounters"))
    if len(sets) > SLICE_MAX_COUNTER_SETS:
        out.append(too_many("spec.sharedCounters", len(sets), SLICE_MAX_COUNTER_SETS))
    else:
        out += _checked_unique(sets, "spec.sharedCounters",
                               lambda c, p: _counters_of(_map(c), p, "name", MAX_COUNTERS_PER_COUNTER_SET), "name")
    return out


# --- the server's entry point ----------------------------------------------------------------------

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"       # DRAAdminNamespaceLabelKey


def _admin_access(spec: Any, path: str, namespace_labels: Mapping[str, str]) -> list[Cause]:
    """``AuthorizedForAdmin`` (the claim and template strategies): a request with ``adminAccess`` only in
    a namespace labelled ``resource.kubernetes.io/admin-access: "true"``."""
    if namespace_labels.get(ADMIN_ACCESS_LABEL) == "true":
        return []
    return [forbidden(f"{path}.devices.requests[{i}].exactly.adminAccess",
                      f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing "
                      "namespace")
            for i, r in enumerate(_list(_map(_map(spec).get("devices")).get("requests")))
            if _map(_map(r).get("exactly")).get("adminAccess") is True]


def _prepare_taint_rule(rule: Obj, old: Obj | None) -> None:
    """The DeviceTaintRule strategy (``pkg/registry/resource/devicetaintrule/strategy.go``) and
    ``SetDefaults_DeviceTaint``: the taint gets ``timeAdded`` when written without one, and an
    update that changes the effect without changing ``timeAdded`` gets a new one (the time tracks
    when the *effect* was added). The status is reset on create; on update it is kept (the
    generic update path keeps the stored status)."""
    if old is None:
        rule.pop("status", None)
    taint = _map(rule.get("spec")).get("taint")
    if not isinstance(taint, dict):
        return
    if old is not None:
        otaint = _map(_map(old.get("spec")).get("taint"))
        if taint.get("effect") != otaint.get("effect") and taint.get("timeAdded") == otaint.get("timeAdded"):
            taint["timeAdded"] = now_iso()
    if not taint.get("timeAdded"):
        taint["timeAdded"] = now_iso()


def validate_device_taint_rule(rule: Obj, old: Obj | None = None) -> list[Cause]:
    """``ValidateDeviceTaintRule`` / ``ValidateDeviceTaintRuleUpdate``: the object's name a DNS
    subdomain; the selector's ``driver`` a driver name, ``pool`` a pool name, ``device`` a DNS label
    (each when set); the taint's key a qualified name, its value a label value, and its effect one
    of NoSchedule, NoExecute or None, checked on create and when an update changes it (so a rule
    stored with an effect a newer server knew stays updatable)."""
    name = _str(_map(rule.get("metadata")).get("name"))
    out = dns_subdomain(name, "metadata.name") if name else []
    spec = _map(rule.get("spec"))
    sel = spec.get("deviceSelector")
    if sel is not None:
        sel = _map(sel)
        if sel.get("driver") is not None:
            out += _csi_driver_name(_str(sel.get("driver")), "spec.deviceSelector.driver")
        if sel.get("pool") is not None:
            out += _pool_name(_str(sel.get("pool")), "spec.deviceSelector.pool")
        if sel.get("device") is not None:
            out += dns_label(_str(sel.get("device")), "spec.deviceSelector.device")
    taint = spec.get("taint")
    if not isinstance(taint, Mapping):
        out.append(required("spec.taint"))
    else:
        out += required_and(_str(taint.get("key")), "spec.taint.key", _label_name)
        effect = taint.get("effect")
        old_effect = _map(_map(_map(old).get("spec")).get("taint")).get("effect") if old is not None else None
        if old is None or effect != old_effect:
            if not effect:
                out.append(required("spec.taint.effect"))
            elif effect not in _TAINT_EFFECTS:
                out.append(not_supported("spec.taint.effect", effect, _TAINT_EFFECTS))
        value = _str(taint.get("value"))
        if value and (len(value) > 63 or not _LABEL_VALUE.match(value)):
            out.append(invalid("spec.taint.value", value, _LABEL_VALUE_MSG))
    return out


# metav1validation.ValidateCondition's limits and reason format; DeviceTaintRuleStatusMaxConditions.
_CONDITION_STATUSES = ("False", "True", "Unknown")
_REASON = re.compile(r"^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$")
_REASON_MSG = ("a condition reason must start with alphabetic character, optionally followed by a string of "
               "alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. "
               "'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used "
               "for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')")
_REASON_MAX, _MESSAGE_MAX = 1024, 32 * 1024
TAINT_RULE_MAX_CONDITIONS = 8


def _conditions(conditions: Any, path: str) -> list[Cause]:
    """``metav1validation.ValidateConditions``: unique types that are label names, a known status,
    ``observedGeneration`` not negative, ``lastTransitionTime`` and a well-formed ``reason`` set."""
    out: list[Cause] = []
    seen: set[str] = set()
    for i, c in enumerate(_list(conditions)):
        c = _map(c)
        at = f"{path}[{i}]"
        ctype = _str(c.get("type"))
        if ctype in seen:
            out.append(duplicate(f"{at}.type", ctype))
        seen.add(ctype)
        out += required_and(ctype, f"{at}.type", _label_name)
        status = c.get("status")
        if status not in _CONDITION_STATUSES:
            out.append(not_supported(f"{at}.status", status, _CONDITION_STATUSES))
        generation = c.get("observedGeneration")
        if isinstance(generation, int) and generation < 0:
            out.append(invalid(f"{at}.observedGeneration", generation, "must be greater than or equal to zero"))
        if not c.get("lastTransitionTime"):
            out.append(required(f"{at}.lastTransitionTime", "must be set"))
        reason = _str(c.get("reason"))
        if not reason:
            out.append(required(f"{at}.reason", "must be set"))
        else:
            if not _REASON.match(reason):
                out.append(invalid(f"{at}.reason", reason, _REASON_MSG))
            if len(reason) > _REASON_MAX:
                out.append(too_long(f"{at}.reason", _REASON_MAX))
        if len(_str(c.get("message"))) > _MESSAGE_MAX:
            out.append(too_long(f"{at}.message", _MESSAGE_MAX))
    return out


def validate_taint_rule_status_update(new: Obj) -> list[Cause]:
    """``ValidateDeviceTaintRuleStatusUpdate``: the conditions, at most 8."""
    conditions = _list(_map(new.get("status")).get("conditions"))
    out = _conditions(conditions, "status.conditions")
    if len(conditions) > TAINT_RULE_MAX_CONDITIONS:
        out.append(too_many("status.conditions", len(conditions), TAINT_RULE_MAX_CONDITIONS))
    return out


def admit_dra(store: str, obj: Obj, old: Obj | None,
              namespace_labels: Callable[[str], Mapping[str, str]] = lambda _: {}) -> None:
    """Default and validate a ``resource.k8s.io`` object (a create when ``old`` is None, else a spec
    update; status updates are ``validate_claim_status_update``'s); raises the 422. ``namespace_labels``:
    a namespace's labels, for the admin-access check."""
    kind = STORES[store]
    name = str((obj.get("metadata") or {}).get("name") or "")
    causes = validate_labels(_map(obj.get("metadata")).get("labels"), "metadata.labels")
    if store == CLAIMS:
        default_claim_spec(obj.get("spec"))
        causes += validate_resource_claim(obj) if old is None else validate_resource_claim_update(obj, old)
        if old is None:
            causes += _admin_access(obj.get("spec"), "spec", namespace_labels(_ns(obj)))
    elif store == TEMPLATES:
        default_claim_spec(_map(obj.get("spec")).get("spec"))
        causes += validate_template(obj) if old is None else validate_template_update(obj, old)
        if old is None:
            causes += _admin_access(_map(obj.get("spec")).get("spec"), "spec.spec", namespace_labels(_ns(obj)))
    elif store == CLASSES:
        causes += validate_device_class(obj)
    elif store == RULES:
        _prepare_taint_rule(obj, old)
        causes += validate_device_taint_rule(obj, old)
    else:
        _default_slice(obj)
        causes += validate_resource_slice(obj, old)
    if causes:
        raise invalid_error(kind, name, causes, GROUP)

