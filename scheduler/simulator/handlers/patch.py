"""PATCH (``endpoints/handlers/patch.go``): a JSON patch, a merge patch or a strategic merge patch of the
external object, then an update; ``application/apply-patch+yaml`` is server-side apply, which creates or
merges by field ownership (``managed``), with 409 on another manager's field unless forced.
"""

from __future__ import annotations

from typing import Any

import orjson

from scheduler.simulator.apierrors import ApiError, bad_request, invalid, not_found
from scheduler.simulator.handlers.base import check_resource_version
from scheduler.simulator.handlers.create import CreateHandler
from scheduler.simulator.handlers.update import UpdateHandler
from scheduler.simulator.interfaces import Writer
from scheduler.simulator.managed import duplicate_entries
from scheduler.simulator.patch import PatchError, _go_float, go_value, json_patch, merge_patch, strategic_merge_patch
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.store import external

__all__ = ["PatchHandler", "_go_float", "go_value"]

Obj = dict[str, Any]


class PatchHandler(CreateHandler, UpdateHandler):
    """PATCH: JSON, merge and strategic merge patches, and server-side apply."""

    def patch(self, rt: ResourceType, namespace: str, name: str, body: Any, ctype: str, sub: str = "", *,
              dry: bool = False, strict: bool = False, writer: Writer | None = None) -> Obj:
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        current = external(rt, old)
        try:
            if ctype == "application/json-patch+json":
                doc = json_patch(current, body)
            elif ctype == "application/strategic-merge-patch+json":
                if rt.crd_name:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                   "accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, application/apply-patch+yaml")
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                doc = strategic_merge_patch(current, body, self._fields_schema(rt, {"apiVersion": rt.api_version,
                                                                                     "kind": rt.kind}))
            else:
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                doc = merge_patch(current, body)
        except PatchError as e:
            if e.code == 413:
                raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {e}") from None
            # interpretStrategicMergePatchError: format errors 400, two 422s; any other merge error is
            # passed on as a bare 500, as apiserver does.
            raise ApiError(e.code, {422: "Invalid", 400: "BadRequest"}.get(e.code, ""), str(e)) from None
        if not isinstance(doc, dict):
            raise bad_request("the patched object is not an object")
        want_rv = (doc.get("metadata") or {}).get("resourceVersion")
        check_resource_version(rt, name, want_rv, old)
        # How the patcher shows the patch if the result does not decode strictly: a strategic merge patch
        # as Go prints the patch's map, the others as the patched object's JSON (Go's keeps the fields in
        # the Go type's order; sorted here).
        shown = None
        if strict:
            shown = go_value(body) if ctype == "application/strategic-merge-patch+json" else \
                orjson.dumps(doc, option=orjson.OPT_SORT_KEYS).decode()
        # A merge patch shares untouched subtrees with the stored object: copy it; the others copied already.
        new = self._check_kind(rt, doc, fresh=ctype != "application/merge-patch+json", strict=strict,
                               patch_shown=shown)
        return self._apply_update(rt, old, new, sub, dry, strict, writer)

    def server_side_apply(self, rt: ResourceType, namespace: str, name: str, body: Any, writer: Writer, *,
                          dry: bool = False) -> tuple[int, Obj]:
        """PATCH with ``application/apply-patch+yaml``: create or merge, owned by ``fieldManager``
        (``managed.py``); 409 on another manager's field unless ``force=true``."""
        if writer.sub:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/strategic-merge-patch+json")
        if not writer.requested_manager:
            raise invalid("PatchOptions", "", [("fieldManager", "FieldValueRequired",
                                                          "Required value: is required for apply patch")],
                                    "meta.k8s.io")
        if not isinstance(body, dict):
            raise bad_request("the apply configuration must be an object")
        if not body.get("apiVersion") or not body.get("kind"):
            raise bad_request("apiVersion and kind must be set in an apply configuration")
        if body["apiVersion"] != rt.api_version:     # structuredMergeManager.Apply's first check
            raise bad_request(f"Incorrect version specified in apply patch. Specified patch version: "
                              f"{body['apiVersion']}, expected: {rt.api_version}")
        sent_meta = body.get("metadata")
        sent_name = sent_meta.get("name") if isinstance(sent_meta, dict) else None
        if sent_name and sent_name != name:
            raise bad_request(f"the name of the object ({sent_name}) does not match the name on the URL ({name})")
        old = self.store.get(rt, namespace, name)
        config = self._check_kind(rt, body, strict=writer.strict, defaults=False)
        config = external(rt, config) if rt.to_external else config
        node = self._fields_schema(rt, {"apiVersion": rt.api_version, "kind": rt.kind})
        live = external(rt, old) if old is not None else None
        duplicates = duplicate_entries(config, node)
        if duplicates:       # fieldmanager's ObjectToTyped error, which apiserver passes on as a bare 500
            group_version = rt.api_version if "/" in rt.api_version else f"/{rt.api_version}"
            raise ApiError(500, "", f"failed to create typed patch object ({namespace}/{name}; {group_version}, "
                                    f"Kind={rt.kind}): " + (duplicates[0] if len(duplicates) == 1 else
                                                             "errors:\n  " + "\n  ".join(duplicates)))
        merged, entries = self.managed.apply(live, config, node, writer.manager, rt.api_version, writer.force,
                                             rt.has_status)
        merged.setdefault("metadata", {})["name"] = name
        if old is None:
            merged["metadata"].pop("managedFields", None)
            return 201, self.create(rt, namespace, merged, dry=dry, strict=writer.strict, managed_fields=entries)
        new = self._check_kind(rt, merged, strict=writer.strict)
        return 200, self._apply_update(rt, old, new, "", dry, writer.strict, None, entries)
