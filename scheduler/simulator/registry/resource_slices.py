"""Validation of ResourceSlices (``validateResourceSliceSpec`` in
``pkg/apis/resource/validation/validation.go``; ``resource.py`` is the overview).

A ResourceSlice names its ``driver`` and ``pool`` (name, ``resourceSliceCount`` above zero,
``generation`` not negative), exactly one of ``nodeName``, ``nodeSelector`` (one term),
``allNodes``, ``perDeviceNodeSelection``, devices with unique DNS-label names (at most 128, or 64
with taints or counters), each attribute holding exactly one value (a version being semver), each
shared capacity's request policy within the capacity, and counter sets or devices, not both; its
pool name, driver and node name never change.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from fractions import Fraction
from typing import Any

from scheduler.errors import QuantityError
from scheduler.quantity import format_quantity, parse_quantity
from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_name,
    _node_name_errors,
    _node_selector_term,
    dns_label,
    forbidden,
    invalid,
    not_supported,
    required,
    required_and,
    too_long,
    too_many,
)
from scheduler.simulator.registry.resource_fields import (
    _LABEL_VALUE,
    _LABEL_VALUE_MSG,
    _TAINT_EFFECTS,
    ATTRIBUTE_MAX_VALUE_LENGTH,
    IMMUTABLE,
    MAX_ATTRIBUTES_AND_CAPACITIES,
    MAX_COUNTER_CONSUMPTIONS_PER_DEVICE,
    MAX_COUNTERS_PER_CONSUMPTION,
    MAX_COUNTERS_PER_COUNTER_SET,
    POLICY_MAX_VALID_VALUES,
    SLICE_MAX_COUNTER_SETS,
    SLICE_MAX_DEVICES,
    SLICE_MAX_DEVICES_ADVANCED,
    _binding_parameters,
    _checked_unique,
    _list,
    _map,
    _pool_name,
    _qualified_name,
    _str,
)
from scheduler.simulator.registry.storage import _csi_driver_name

__all__ = ["validate_resource_slice"]

Obj = dict[str, Any]


_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
                     r"(-(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*)?"
                     r"(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$")


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
