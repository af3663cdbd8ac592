"""Nodes and taints, parsed once from API JSON.

``Node.allocatable`` holds integers: milli-CPU for ``cpu``, units for everything else. As the API
server's defaulting does, a node without ``status.allocatable`` gets its ``status.capacity``.
``Node.declared_features`` is ``status.declaredFeatures`` (KEP-5328, ``model/nodefeatures.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.parsing import located, resource_list

__all__ = ["TAINT_EFFECTS", "Node", "Taint", "parse_node", "parse_taint"]

TAINT_EFFECTS = frozenset({"NoSchedule", "PreferNoSchedule", "NoExecute"})
MAX_INT64 = 2**63 - 1


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        # ``{key: value}``, for logs. (Upstream's TaintToleration reason no longer names the taint.)
        return f"{{{self.key}: {self.value}}}"


@dataclass(frozen=True, slots=True)
class Node:
    name: str
    uid: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)
    allocatable: Mapping[str, int] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    unschedulable: bool = False
    # image name -> size in bytes; every name of a multi-name image maps to its size.
    images: Mapping[str, int] = field(default_factory=dict)
    # ``status.declaredFeatures``: what the node's kubelet declares (NodeDeclaredFeatures reads it).
    declared_features: frozenset[str] = frozenset()


def parse_taint(raw: Any, field: str) -> Taint:
    if not isinstance(raw, Mapping):
        raise ParseError("must be an object", field=field)
    key, value, effect = raw.get("key"), raw.get("value") or "", raw.get("effect")
    if not isinstance(key, str) or not key:
        raise ParseError("Required value", field=f"{field}.key")
    if not isinstance(value, str):
        raise ParseError("must be a string", field=f"{field}.value")
    if effect not in TAINT_EFFECTS:
        raise ParseError(f"Unsupported value: {effect!r}", field=f"{field}.effect")
    return Taint(key, value, effect)


def parse_node(obj: Mapping[str, Any]) -> Node:
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise ParseError("Required value", obj="Node", field="metadata.name")
    where = f"Node {name}"
    try:
        return _parse_node(obj, meta, name)
    except (ParseError, AttributeError, TypeError) as e:
        raise located(e, where) from None


def _parse_node(obj: Mapping[str, Any], meta: Mapping[str, Any], name: str) -> Node:
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    labels = meta.get("labels") or {}
    if not isinstance(labels, Mapping):
        raise ParseError("must be an object", field="metadata.labels")
    allocatable = status.get("allocatable")
    if allocatable is None:
        allocatable = status.get("capacity")
    taints = tuple(parse_taint(t, f"spec.taints[{i}]") for i, t in enumerate(spec.get("taints") or []))
    images = _images(status.get("images") or [])
    return Node(
        name=name,
        uid=meta.get("uid") or "",
        labels=dict(labels),
        allocatable=resource_list(allocatable, "status.allocatable"),
        taints=taints,
        unschedulable=bool(spec.get("unschedulable")),
        images=images,
        declared_features=_declared_features(status.get("declaredFeatures")),
    )


def _declared_features(raw: Any) -> frozenset[str]:
    """``status.declaredFeatures``: a list of feature names."""
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise ParseError("must be a list", field="status.declaredFeatures")
    for i, name in enumerate(raw):
        if not isinstance(name, str):
            raise ParseError("must be a string", field=f"status.declaredFeatures[{i}]")
    return frozenset(raw)


def _images(raw: Any) -> dict[str, int]:
    """``status.images``: each name's size in bytes."""
    images: dict[str, int] = {}
    for i, img in enumerate(raw):
        size = img.get("sizeBytes") or 0
        if not isinstance(size, int) or size < 0:
            raise ParseError("must be a non-negative integer", field=f"status.images[{i}].sizeBytes")
        for n in img.get("names") or []:
            # sizeBytes is an int64 upstream; ImageLocality sums sizes as floats.
            images[n] = min(size, MAX_INT64)
    return images
