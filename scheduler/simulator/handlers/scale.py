"""The ``scale`` subresource: a workload seen as an autoscaling/v1 Scale, and a Scale written back to
the workload's ``spec.replicas``.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator import tables
from scheduler.simulator.apierrors import ApiError, bad_request, invalid, not_found
from scheduler.simulator.handlers.base import check_resource_version
from scheduler.simulator.handlers.update import UpdateHandler
from scheduler.simulator.interfaces import Writer
from scheduler.simulator.patch import PatchError, json_patch, merge_patch
from scheduler.simulator.resources import ResourceType

__all__ = ["ScaleHandler"]

Obj = dict[str, Any]


def _scale_of(obj: Obj) -> Obj:
    """A workload's autoscaling/v1 Scale: desired and current replicas, and its selector as a string."""
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    sel = spec.get("selector")
    selector = tables.label_map(sel) if obj.get("kind") == "ReplicationController" else tables.selector_string(sel)
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": spec.get("replicas", 1)},
            "status": {"replicas": status.get("replicas", 0), "selector": "" if selector == "<none>" else selector}}


class ScaleHandler(UpdateHandler):
    """GET, PUT and PATCH of ``/scale``."""

    def scale(self, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str, writer: Writer, *,
              dry: bool = False) -> Obj:
        """PUT or PATCH ``/scale``: the autoscaling/v1 Scale view of a workload, written back to its
        ``spec.replicas`` (what ``kubectl scale`` and autoscalers do), owned by the writer's manager
        with subresource ``scale``."""
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        current = _scale_of(old)
        try:
            if patch_type == "application/json-patch+json":
                new_scale = json_patch(current, body)
            elif patch_type:
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                new_scale = merge_patch(current, body)
            else:
                new_scale = body
        except PatchError as e:
            raise ApiError(e.code, "Invalid" if e.code == 422 else "BadRequest", str(e)) from None
        if not isinstance(new_scale, dict):
            raise bad_request("the body must be a Scale object")
        want_rv = (new_scale.get("metadata") or {}).get("resourceVersion")
        check_resource_version(rt, name, want_rv, old)
        replicas = (new_scale.get("spec") or {}).get("replicas", 0)
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise bad_request('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal into Go '
                              "struct field ScaleSpec.spec.replicas of type int32")
        if replicas < 0:
            raise invalid("Scale", name, [("spec.replicas", "FieldValueInvalid",
                                                     f"Invalid value: {replicas}: must be greater than or equal to "
                                                     "0")], "autoscaling")
        new = {**old, "metadata": dict(old["metadata"]), "spec": {**(old.get("spec") or {}), "replicas": replicas}}
        out = self._apply_update(rt, old, new, "", dry, False, writer)
        return _scale_of(out)
