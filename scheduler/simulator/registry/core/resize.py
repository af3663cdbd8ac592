"""The ``pods/resize`` subresource (in-place pod resize, InPlacePodVerticalScaling, GA): what a write of
it takes from the new pod and what it refuses, as ``pkg/registry/core/pod/strategy.go``'s
``podResizeStrategy`` and ``ValidatePodResize`` do.

A resize write keeps the stored pod and takes only each container's ``resources`` and ``resizePolicy``
(app containers and sidecars; ``dropNonResizeUpdates``) and the pod-level ``spec.resources``
(InPlacePodLevelResourcesVerticalScaling); the generation goes up when the spec changed. It refuses,
with the API server's texts:

* a container renamed, added or reordered: ``containers may not be renamed or reordered on resize``;
* a change to a resource other than cpu and memory: ``only cpu and memory resources are mutable``;
* a cpu or memory request or limit removed: ``resource requests cannot be removed`` /
  ``resource limits cannot be removed``;
* any resources change on a regular (non-sidecar) init container:
  ``resources for non-sidecar init containers are immutable``.

The pod-level requests must still cover the containers' (``podlevel.py``, as on create). Not
checked here (the simulator checks neither on create): a request above its limit, and the QoS
class changing. The kubelet applies the resize (``controllers/kubelet.py``).
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.simulator.registry.core.podlevel import pod_level_consistency
from scheduler.simulator.registry.core.validation import Cause, forbidden

__all__ = ["RESIZABLE", "resize_write"]

Obj = dict[str, Any]
RESIZABLE = frozenset({"cpu", "memory"})


def _resources(c: Obj) -> Obj:
    r = c.get("resources")
    return r if isinstance(r, dict) else {}


def _other(rl: Any) -> Obj:
    """A ResourceList without cpu and memory (what a resize may not touch)."""
    return {k: v for k, v in (rl or {}).items() if k not in RESIZABLE} if isinstance(rl, dict) else {}


def _container_causes(old: Obj, new: Obj, at: str, sidecar_or_app: bool) -> list[Cause]:
    before, after = _resources(old), _resources(new)
    if before == after:
        return []
    if not sidecar_or_app:
        return [forbidden(f"{at}.resources", "resources for non-sidecar init containers are immutable")]
    out: list[Cause] = []
    if ({k: v for k, v in before.items() if k not in ("requests", "limits")}
            != {k: v for k, v in after.items() if k not in ("requests", "limits")}
            or _other(before.get("requests")) != _other(after.get("requests"))
            or _other(before.get("limits")) != _other(after.get("limits"))):
        out.append(forbidden("spec", "only cpu and memory resources are mutable"))
    for kind in ("requests", "limits"):
        had, has = before.get(kind) or {}, after.get(kind) or {}
        for name in sorted(RESIZABLE):
            if name in had and name not in has:
                out.append(forbidden(f"{at}.resources.{kind}[{name}]", f"resource {kind} cannot be removed"))
    return out


def resize_write(old: Obj, new: Obj) -> tuple[Obj, list[Cause]]:
    """The pod a resize write stores (``old`` with ``new``'s resources), and the causes refusing it."""
    merged = copy.deepcopy(old)
    spec, new_spec = merged.setdefault("spec", {}), new.get("spec") or {}
    causes: list[Cause] = []
    for group in ("initContainers", "containers"):
        before = spec.get(group) or []
        after = new_spec.get(group) or []
        if [c.get("name") for c in before] != [c.get("name") for c in after if isinstance(c, dict)]:
            causes.append(forbidden(f"spec.{group}", "containers may not be renamed or reordered on resize"))
            continue
        for i, (o, n) in enumerate(zip(before, after, strict=True)):
            sidecar_or_app = group == "containers" or o.get("restartPolicy") == "Always"
            causes += _container_causes(o, n, f"spec.{group}[{i}]", sidecar_or_app)
            for f in ("resources", "resizePolicy"):
                if f in n:
                    o[f] = copy.deepcopy(n[f])
                else:
                    o.pop(f, None)
    if "resources" in new_spec:
        spec["resources"] = copy.deepcopy(new_spec["resources"])
    if not causes and isinstance(spec.get("resources"), dict):
        causes += pod_level_consistency(spec)
    if merged.get("spec") != old.get("spec") and "generation" in merged["metadata"]:
        merged["metadata"]["generation"] = merged["metadata"]["generation"] + 1
    return merged, causes
