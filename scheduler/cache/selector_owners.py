"""The Services and controllers whose selectors spread a pod by default.

PodTopologySpread's default constraints (a profile's ``defaultConstraints`` or the ``System``
defaults) carry no selector of their own: upstream derives one per pod with
``helper.DefaultSelector`` from four listers. This module is those listers, fed by watch events,
and that function:

- every Service in the pod's namespace whose ``spec.selector`` is set and matches the pod's labels
  contributes its selector map (merged, later keys win: they all match the pod, so they agree);
- then the pod's *controller* (its ownerReference with ``controller: true``) by exact kind:
  a ``v1`` ReplicationController merges its selector map, an ``apps/v1`` ReplicaSet or StatefulSet
  adds its ``spec.selector`` requirements. A controller that is not known, or a selector that does
  not parse, contributes nothing, as upstream ignores a lister or conversion error.

The result is ``None`` when nothing selects the pod: the plugin then applies no default constraint
(upstream: ``selector.Empty()``). Objects are kept reduced to what the function reads, so the store
costs a few dicts per Service, not the objects' bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.errors import ParseError
from scheduler.model import LabelSelector, Pod, Requirement
from scheduler.model.selectors import parse_label_selector

__all__ = ["KINDS", "SelectorOwners"]

# The kinds the operator watches for this, as (group, version, plural, kind).
KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("", "v1", "services", "Service"),
    ("", "v1", "replicationcontrollers", "ReplicationController"),
    ("apps", "v1", "replicasets", "ReplicaSet"),
    ("apps", "v1", "statefulsets", "StatefulSet"),
)
# The controller kinds upstream's DefaultSelector reads, by (apiVersion, kind) exactly.
_CONTROLLERS = {("v1", "ReplicationController"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet")}


class SelectorOwners:
    """Services and controllers by namespace and name, reduced to their selectors."""

    def __init__(self) -> None:
        # Service and ReplicationController selectors are plain maps; None: no selector set.
        self._services: dict[str, dict[str, dict[str, str]]] = {}
        self._maps: dict[tuple[str, str], dict[str, str]] = {}            # RC (ns, name) -> selector
        self._selectors: dict[tuple[str, str, str], LabelSelector | None] = {}  # (kind, ns, name)

    def __len__(self) -> int:
        return sum(len(v) for v in self._services.values()) + len(self._maps) + len(self._selectors)

    def on_event(self, kind: str, event: str, body: Mapping[str, Any]) -> bool:
        """Apply one watch event; whether what a default selector reads changed."""
        meta = body.get("metadata") or {}
        ns, name = str(meta.get("namespace") or "default"), str(meta.get("name") or "")
        spec = body.get("spec") or {}
        deleted = event == "DELETED"
        if kind == "Service":
            per_ns = self._services.setdefault(ns, {})
            sel = spec.get("selector")
            # A Service without a selector (externally managed endpoints) selects no pod.
            new = None if deleted or not isinstance(sel, Mapping) else _str_map(sel)
            old = per_ns.get(name)
            if new is None:
                per_ns.pop(name, None)
            else:
                per_ns[name] = new
            return old != new
        if kind == "ReplicationController":
            sel = spec.get("selector")
            new = None if deleted or not isinstance(sel, Mapping) else _str_map(sel)
            old = self._maps.get((ns, name))
            if new is None:
                self._maps.pop((ns, name), None)
            else:
                self._maps[(ns, name)] = new
            return old != new
        if kind in ("ReplicaSet", "StatefulSet"):
            key = (kind, ns, name)
            had, old_sel = key in self._selectors, self._selectors.get(key)
            if deleted:
                self._selectors.pop(key, None)
                return had
            try:
                parsed: LabelSelector | None = parse_label_selector(spec.get("selector") or {}, "spec.selector")
            except ParseError:
                parsed = None   # upstream: a conversion error contributes nothing
            self._selectors[key] = parsed
            return not had or old_sel != parsed
        return False

    def default_selector(self, pod: Pod) -> LabelSelector | None:
        """Upstream's ``helper.DefaultSelector`` for ``pod``; ``None`` when it would be empty."""
        merged: dict[str, str] = {}
        for sel in self._services.get(pod.namespace, {}).values():
            if all(pod.labels.get(k) == v for k, v in sel.items()):
                merged.update(sel)
        extra: tuple[Requirement, ...] = ()
        owner = pod.controller
        if owner is not None and (owner.api_version, owner.kind) in _CONTROLLERS:
            if owner.kind == "ReplicationController":
                merged.update(self._maps.get((pod.namespace, owner.name), {}))
            else:
                found = self._selectors.get((owner.kind, pod.namespace, owner.name))
                if found is not None:
                    extra = found.requirements
        reqs = [Requirement(k, "In", frozenset((v,))) for k, v in merged.items()] + list(extra)
        if not reqs:
            return None
        # The canonical order parse_label_selector uses, so equal selectors share counters.
        reqs.sort(key=lambda r: (r.key, r.operator, sorted(r.values)))
        return LabelSelector(tuple(reqs))


def _str_map(raw: Mapping[Any, Any]) -> dict[str, str]:
    return {str(k): str(v) for k, v in raw.items()}
