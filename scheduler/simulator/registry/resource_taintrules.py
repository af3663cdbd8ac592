"""DeviceTaintRules: their strategy, validation and status validation (``resource.py`` is the overview).

The strategy (``pkg/registry/resource/devicetaintrule/strategy.go``) stamps the taint's
``timeAdded``; ``ValidateDeviceTaintRule`` checks the selector and the taint;
``ValidateDeviceTaintRuleStatusUpdate`` checks the conditions as ``metav1validation`` does, with
upstream's messages.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_name,
    dns_label,
    dns_subdomain,
    duplicate,
    invalid,
    not_supported,
    required,
    required_and,
    too_long,
    too_many,
)
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.resource_fields import (
    _LABEL_VALUE,
    _LABEL_VALUE_MSG,
    _TAINT_EFFECTS,
    _list,
    _map,
    _pool_name,
    _str,
)
from scheduler.simulator.registry.storage import _csi_driver_name

__all__ = ["TAINT_RULE_MAX_CONDITIONS", "validate_device_taint_rule", "validate_taint_rule_status_update"]

Obj = dict[str, Any]


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
