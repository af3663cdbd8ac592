"""UPDATE (``endpoints/handlers/update.go`` and the generic store's ``Update``): the resourceVersion
precondition, what a main-resource write keeps of the old object (status, server-set metadata) and what a
status write takes, the generation bump on a spec change, and a no-op that takes no resourceVersion. A
write of ``pods/resize`` takes only the resources (``registry/core/resize.py``) and tells the kubelet.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator import schema
from scheduler.simulator.apierrors import bad_request, conflict, invalid, not_found
from scheduler.simulator.handlers.base import HandlerBase, check_resource_version
from scheduler.simulator.interfaces import Entries, Writer
from scheduler.simulator.registry import podgroups
from scheduler.simulator.registry import resource as dra
from scheduler.simulator.registry.core.resize import resize_write
from scheduler.simulator.registry.core.validation import validate_pod_status
from scheduler.simulator.registry.resource_claims import validate_claim_status_update
from scheduler.simulator.registry.resource_taintrules import validate_taint_rule_status_update
from scheduler.simulator.resources import ResourceType

__all__ = ["UpdateHandler"]

Obj = dict[str, Any]


class UpdateHandler(HandlerBase):
    """PUT of an object or its status, and the update step patch and scale end in."""

    def update(self, rt: ResourceType, namespace: str, name: str, body: Any, sub: str = "", *,
               dry: bool = False, fresh: bool = False, strict: bool = False, writer: Writer | None = None) -> Obj:
        new = self._check_kind(rt, body, fresh=fresh, strict=strict)
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        meta = new["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise bad_request("the name of the object does not match the name on the URL")
        _check_uid(rt, name, meta.get("uid"), old)
        want_rv = meta.get("resourceVersion")
        if not want_rv and rt.crd_name:
            # A custom resource's update strategy requires the precondition (AllowUnconditionalUpdate false).
            raise invalid(rt.kind, name, [("metadata.resourceVersion", "FieldValueInvalid",
                                                     "Invalid value: 0x0: must be specified for an update")], rt.group)
        check_resource_version(rt, name, want_rv, old)
        return self._apply_update(rt, old, new, sub, dry, strict, writer)

    def _apply_update(self, rt: ResourceType, old: Obj, new: Obj, sub: str, dry: bool, strict: bool = False,
                      writer: Writer | None = None, managed_fields: Entries | None = None) -> Obj:
        name = old["metadata"]["name"]
        sent_fields = new["metadata"].get("managedFields")
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        if sub == "status":
            new = _status_write(old, new)
            _validate_status(rt, name, old, new)
        elif sub == "resize":
            new, causes = resize_write(old, new)
            if causes:
                raise invalid("Pod", name, causes)
        else:
            self._main_write(rt, old, new, strict)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        self._track(rt, old, new, sub, sent_fields, writer, managed_fields)
        if new == old:
            return old                    # a no-op write takes no resourceVersion and sends no event
        if dry:
            return new
        out = self.write(rt, old, new)
        if rt.plural == "customresourcedefinitions" and not rt.crd_name and sub != "status":
            self._establish(out)
        if sub == "resize":
            self.controllers.kubelet.pod_resized(out["metadata"].get("namespace", ""), name, out["metadata"]["uid"])
        return out

    def _main_write(self, rt: ResourceType, old: Obj, new: Obj, strict: bool) -> None:
        """A write of the main resource: the server-set metadata and the status kept from ``old``, no new
        finalizer on an object being deleted, the strategy's admission, and the generation bumped when
        the spec changed."""
        name = old["metadata"]["name"]
        meta = new["metadata"]
        if meta.get("uid") and meta["uid"] != old["metadata"].get("uid"):
            # a patch's (a PUT's is the precondition's 409 first): rest.BeforeUpdate keeps a sent uid,
            # and ValidateObjectMetaUpdate refuses it
            raise invalid(rt.kind, name, [("metadata.uid", "FieldValueInvalid",
                                           f'Invalid value: "{meta["uid"]}": field is immutable')], rt.group)
        for f in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                  "deletionGracePeriodSeconds", "generation"):
            if f in old["metadata"]:
                meta[f] = old["metadata"][f]
            else:
                meta.pop(f, None)
        if rt.has_status:
            if "status" in old:
                new["status"] = old["status"]
            else:
                new.pop("status", None)
        if old["metadata"].get("deletionTimestamp"):
            added = set(meta.get("finalizers") or ()) - set(old["metadata"].get("finalizers") or ())
            if added:
                raise invalid(rt.kind, name, [("metadata.finalizers", "FieldValueForbidden",
                                               "Forbidden: no new finalizers can be added if the object "
                                               "is being deleted")], rt.group)
        self._admit(rt, new, old, strict)
        if rt.store == "/pods" and (old.get("spec") or {}).get("nodeName") != (new.get("spec") or {}).get(
                "nodeName"):
            raise invalid("Pod", name, [("spec.nodeName", "FieldValueForbidden",
                                         "Forbidden: pod updates may not change fields other than ...")])
        if "generation" in old["metadata"] and {k: v for k, v in new.items() if k not in ("metadata", "status")} \
                != {k: v for k, v in old.items() if k not in ("metadata", "status")}:
            new["metadata"]["generation"] = old["metadata"]["generation"] + 1


def _status_write(old: Obj, new: Obj) -> Obj:
    """A write of the status subresource: ``old`` with the new status (or none), nothing else taken."""
    merged = dict(old)
    merged["metadata"] = dict(old["metadata"])
    if "status" in new:
        merged["status"] = new["status"]
    else:
        merged.pop("status", None)
    return merged


def _validate_status(rt: ResourceType, name: str, old: Obj, new: Obj) -> None:
    """The status strategies' validation: a pod's, a ResourceClaim's, a DeviceTaintRule's, a custom
    resource's schema."""
    if rt.store == "/pods" and (causes := validate_pod_status(new)):
        raise invalid("Pod", name, causes)
    if rt.store == podgroups.PODGROUPS and (causes := podgroups.validate_status(new)):
        raise invalid("PodGroup", name, causes, podgroups.GROUP)
    if rt.store == dra.CLAIMS and (causes := validate_claim_status_update(new, old)):
        raise invalid("ResourceClaim", name, causes, dra.GROUP)
    if rt.store == dra.RULES and (causes := validate_taint_rule_status_update(new)):
        raise invalid("DeviceTaintRule", name, causes, dra.GROUP)
    if rt.crd_name:
        schema.prune(rt.schema, new)
        causes = schema.validate(rt.schema, new, old=old)
        if causes:
            raise invalid(rt.kind, name, causes, rt.group)


def _storage_key(rt: ResourceType, namespace: str, name: str) -> str:
    """The etcd key kube-apiserver keeps an object under (``/registry/pods/NS/NAME``; a custom
    resource's under its group); StorageError messages show it."""
    resource = "services/specs" if rt.store == "/services" else rt.plural
    prefix = f"/registry/{rt.group}/{resource}" if rt.crd_name else f"/registry/{resource}"
    return "/".join([prefix, *([namespace] if namespace else []), name])


def _check_uid(rt: ResourceType, name: str, sent: Any, old: Obj) -> None:
    """A PUT's body names the object it replaces by its uid: ``rest.DefaultUpdatedObjectInfo`` makes a
    sent uid the storage precondition, and etcd3's ``Preconditions.Check`` refuses another object's
    (``InterpretUpdateError``: a 409 Conflict carrying the StorageError)."""
    have = old["metadata"].get("uid", "")
    if not sent or sent == have:
        return
    key = _storage_key(rt, old["metadata"].get("namespace", ""), name)
    raise conflict(rt, name, f"StorageError: invalid object, Code: 4, Key: {key}, ResourceVersion: 0, "
                             f"AdditionalErrorMsg: Precondition failed: UID in precondition: {sent}, "
                             f"UID in object meta: {have}")
