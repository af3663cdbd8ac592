"""Device taints and tolerations (``resource.k8s.io/v1``, KEP-5055): a ``DeviceTaint`` on a device
of a ResourceSlice or from a DeviceTaintRule (``devicetaintrules``), a ``DeviceToleration`` on a
claim's request. Parsed once when an object arrives (GUIDE §4): the allocator compares strings
only; the matching (``tolerates``, ``prevents_allocation``) is ``scheduler.dra.taints``'.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.errors import ParseError

__all__ = ["EFFECT_NONE", "EFFECT_NO_EXECUTE", "EFFECT_NO_SCHEDULE", "DeviceTaint", "DeviceToleration",
           "parse_device_taint", "parse_device_toleration"]

# resourceapi.DeviceTaintEffect: only NoSchedule and NoExecute keep a device from being allocated;
# None (and any effect a newer server knows) is informational.
EFFECT_NO_SCHEDULE = "NoSchedule"
EFFECT_NO_EXECUTE = "NoExecute"
EFFECT_NONE = "None"


def _str(raw: Any) -> str:
    return raw if isinstance(raw, str) else ""


@dataclass(frozen=True, slots=True)
class DeviceTaint:
    """``resourceapi.DeviceTaint``: ``time_added`` as written (RFC 3339), empty when unset."""

    key: str
    value: str = ""
    effect: str = ""
    time_added: str = ""

    def to_json(self) -> dict[str, str]:
        out = {"key": self.key, "effect": self.effect}
        if self.value:
            out["value"] = self.value
        if self.time_added:
            out["timeAdded"] = self.time_added
        return out


@dataclass(frozen=True, slots=True)
class DeviceToleration:
    """``resourceapi.DeviceToleration``: ``operator`` as written (the API server defaults it to
    ``Equal``; empty means Equal too), ``toleration_seconds`` ``None`` when unset."""

    key: str = ""
    operator: str = "Equal"
    value: str = ""
    effect: str = ""
    toleration_seconds: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.key:
            out["key"] = self.key
        if self.operator:
            out["operator"] = self.operator
        if self.value:
            out["value"] = self.value
        if self.effect:
            out["effect"] = self.effect
        if self.toleration_seconds is not None:
            out["tolerationSeconds"] = self.toleration_seconds
        return out


def parse_device_taint(raw: Any, where: str) -> DeviceTaint:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=where)
    return DeviceTaint(_str(raw.get("key")), _str(raw.get("value")), _str(raw.get("effect")),
                       _str(raw.get("timeAdded")))


def parse_device_toleration(raw: Any, where: str) -> DeviceToleration:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=where)
    seconds = raw.get("tolerationSeconds")
    if seconds is not None and (isinstance(seconds, bool) or not isinstance(seconds, int)):
        raise ParseError(f"must be an integer, got {seconds!r}", field=f"{where}.tolerationSeconds")
    return DeviceToleration(_str(raw.get("key")), _str(raw.get("operator")), _str(raw.get("value")),
                            _str(raw.get("effect")), seconds)
