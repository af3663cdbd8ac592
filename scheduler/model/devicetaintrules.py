"""``DeviceTaintRule`` (``resource.k8s.io/v1``, cluster-scoped, DRADeviceTaintRules): a
``deviceSelector`` by ``driver``, ``pool`` and ``device`` name (each optional) and one taint for the
devices it selects, and how rules apply to slices.

``apply_rules`` is upstream's ``resourceslice/tracker`` ``applyPatches``: each rule whose selector
matches a device (driver, pool and device name, each when set) appends its taint to the device's
taints, rules in name order. A rule without a ``deviceSelector`` selects every device, as the
tracker's code does (``if deviceSelector != nil { ...filter... }``; upstream's scheduler_perf
``devicetaintrule.yaml`` relies on it: "Empty selector -> all devices!"), although the API's doc
comment says such a rule matches nothing. The store applies the rules when
it hands out slices (``DraStore.slices``), so the allocator sees one list of taints per device,
wherever they came from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.devicetaints import DeviceTaint, parse_device_taint
from scheduler.model.dra import Device, ResourceSlice
from scheduler.model.parsing import parsing

__all__ = ["DeviceTaintRule", "apply_rules", "parse_device_taint_rule", "rule_selects"]


def _str(raw: Any) -> str:
    return raw if isinstance(raw, str) else ""


@dataclass(frozen=True, slots=True)
class DeviceTaintRule:
    """A ``DeviceTaintRule``: ``driver``, ``pool``, ``device`` of its ``deviceSelector``, ``None``
    when unset (any; no selector at all: every device)."""

    name: str
    taint: DeviceTaint
    driver: str | None = None
    pool: str | None = None
    device: str | None = None
    uid: str = ""
    resource_version: str = ""
    generation: int = 0


def _opt(raw: Any) -> str | None:
    return raw if isinstance(raw, str) else None


def parse_device_taint_rule(obj: Mapping[str, Any]) -> DeviceTaintRule:
    meta = obj.get("metadata") or {}
    name = _str(meta.get("name")) if isinstance(meta, Mapping) else ""
    with parsing(f"DeviceTaintRule {name}"):
        spec = obj.get("spec") or {}
        if not isinstance(spec, Mapping):
            raise ParseError("must be an object", field="spec")
        sel = spec.get("deviceSelector")
        if sel is not None and not isinstance(sel, Mapping):
            raise ParseError("must be an object", field="spec.deviceSelector")
        gen = meta.get("generation")
        return DeviceTaintRule(
            name=name,
            taint=parse_device_taint(spec.get("taint") or {}, "spec.taint"),
            driver=_opt((sel or {}).get("driver")),
            pool=_opt((sel or {}).get("pool")),
            device=_opt((sel or {}).get("device")),
            uid=_str(meta.get("uid")),
            resource_version=_str(meta.get("resourceVersion")),
            generation=gen if isinstance(gen, int) and not isinstance(gen, bool) else 0,
        )


def rule_selects(rule: DeviceTaintRule, driver: str, pool: str, device: str) -> bool:
    """Whether ``rule``'s ``deviceSelector`` selects the device ``driver/pool/device``."""
    return (rule.driver is None or rule.driver == driver) and \
        (rule.pool is None or rule.pool == pool) and (rule.device is None or rule.device == device)


def apply_rules(slices: Sequence[ResourceSlice], rules: Sequence[DeviceTaintRule]) -> list[ResourceSlice]:
    """``slices`` with the taints of ``rules`` appended to the devices they select (a slice no
    rule touches is returned as it is, so caches keyed by the slice object stay valid)."""
    if not rules:
        return list(slices)
    ordered = sorted(rules, key=lambda r: r.name)
    out: list[ResourceSlice] = []
    for s in slices:
        touching = [r for r in ordered if (r.driver is None or r.driver == s.driver)
                    and (r.pool is None or r.pool == s.pool.name)]
        if not touching:
            out.append(s)
            continue
        devices: list[Device] = []
        changed = False
        for d in s.devices:
            added = tuple(r.taint for r in touching if r.device is None or r.device == d.name)
            if added:
                changed = True
                d = replace(d, taints=(*d.taints, *added))
            devices.append(d)
        out.append(replace(s, devices=tuple(devices)) if changed else s)
    return out
