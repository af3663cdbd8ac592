"""Immutable ConfigMaps and Secrets, as ``ValidateConfigMapUpdate`` and ``ValidateSecretUpdate`` in
upstream's ``pkg/apis/core/validation/validation.go`` refuse an update: once ``immutable: true`` is
stored, ``immutable`` may not be unset and ``data`` / ``binaryData`` may not change (a Secret's
``stringData`` was already folded into ``data`` by its defaulting, so it is covered too). A Secret's
``type`` never changes. Deletion is not an update, so an immutable object can still be deleted.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator.registry.core.validation import Cause, forbidden, invalid

__all__ = ["validate_config_update"]

Obj = dict[str, Any]

_IMMUTABLE = "field is immutable when `immutable` is set"


def validate_config_update(kind: str, new: Obj, old: Obj) -> list[Cause]:
    """The causes refusing an update of a ConfigMap or Secret (``kind``) from ``old`` to ``new``."""
    out: list[Cause] = []
    if kind == "Secret" and new.get("type") != old.get("type"):
        out.append(invalid("type", new.get("type"), "field is immutable"))
    if old.get("immutable") is not True:
        return out
    if new.get("immutable") is not True:
        out.append(forbidden("immutable", _IMMUTABLE))
    # reflect.DeepEqual on the maps; an absent map and an empty one are alike once stored.
    fields = ("data", "binaryData") if kind == "ConfigMap" else ("data",)
    out += [forbidden(f, _IMMUTABLE) for f in fields if (new.get(f) or {}) != (old.get(f) or {})]
    return out
