"""The ``resource.k8s.io`` limits and the field checks its kinds share (``resource.py`` is the overview).

The limits are upstream's constants (``pkg/apis/resource/types.go``), under their Go names in the
comments. The checks are ``pkg/apis/resource/validation/validation.go``'s helpers that more than one
kind calls: a selector's ``cel.expression`` (at most 10 KiB, compiled by ``celrules.compile_program``
for syntax and undeclared references, its worst-case cost within ``CELSelectorExpressionMaxCost``
by ``scheduler.dra.celcost``: "too complex, exceeds cost limit"), an opaque config (a driver name
and JSON-object parameters), a pool name, a qualified attribute name, the binding conditions of a
device or an allocation result, and items checked then de-duplicated by a key. Each returns its
causes (field path, reason, detail) in upstream's order; the kinds' modules gather them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from scheduler.dra.celcost import CEL_SELECTOR_MAX_COST, TOO_COMPLEX, CostError, estimate_cost
from scheduler.simulator.celrules import compile_program
from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_name,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    required,
    too_long,
    too_many,
)
from scheduler.simulator.registry.storage import _csi_driver_name

EXACT_COUNT, ALL = "ExactCount", "All"
_TAINT_EFFECTS = ("NoExecute", "NoSchedule", "None")
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


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


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


# --- names: qualified names, C identifiers ----------------------------------------------------

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
