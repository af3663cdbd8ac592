"""CREATE (``endpoints/handlers/create.go`` and the generic store's ``Create``): a generated name, the
namespace's existence, AlreadyExists, the strategy's defaulting and validation, server-set metadata
(uid, creationTimestamp, generation, resourceVersion) and managedFields; dry runs stop before the store.
"""

from __future__ import annotations

import copy
import uuid
from typing import Any

from scheduler.simulator.apierrors import ApiError, bad_request, invalid, resource_name
from scheduler.simulator.handlers.base import HandlerBase
from scheduler.simulator.interfaces import Entries, Writer
from scheduler.simulator.registry import apps
from scheduler.simulator.registry import resource as dra
from scheduler.simulator.registry.core.validation import validate_event
from scheduler.simulator.registry.meta import now_iso, validate_name
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.typecheck import check_types

__all__ = ["CreateHandler"]

Obj = dict[str, Any]

_GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
# maxNameGenerationCreateAttempts (apiserver registry/generic/registry/store.go): a generated name
# that is taken is generated again, 8 attempts in all.
MAX_NAME_GENERATION_ATTEMPTS = 8
# Kinds whose metadata.generation the registry maintains (spec changes bump it; status writes do not);
# pods since pkg/registry/core/pod/strategy.go's PrepareForCreate sets it to 1.
_WITH_GENERATION = {"/pods", "apps/replicasets", "apps/statefulsets", "apps/deployments", "apps/daemonsets",
                    "batch/jobs", "batch/cronjobs", "policy/poddisruptionbudgets",
                    "apiextensions.k8s.io/customresourcedefinitions", dra.CLASSES, dra.CLAIMS, dra.SLICES,
                    dra.RULES}


# Objects the simulated cluster's own controllers keep: (store, namespace, name), and (store, name) in
# every namespace.
_CLUSTER_MADE = {("/services", "default", "kubernetes"), ("/endpoints", "default", "kubernetes"),
                 ("discovery.k8s.io/endpointslices", "default", "kubernetes")}
_CLUSTER_MADE_EACH_NAMESPACE = {("/serviceaccounts", "default"), ("/configmaps", "kube-root-ca.crt")}


class CreateHandler(HandlerBase):
    """POST of an object, and the load of a file or a dump."""

    def create(self, rt: ResourceType, namespace: str, body: Any, *, dry: bool = False, strict: bool = False,
               keep_status: bool = False, fresh: bool = False, writer: Writer | None = None,
               managed_fields: Entries | None = None, uid: str | None = None) -> Obj:
        """Create ``body``. ``writer``: an API request's, whose manager then owns what it set (none for the
        simulated controllers' own writes); ``managed_fields``: already computed (server-side apply);
        ``uid``: the one to give the object (a restored dump's), instead of a new one."""
        if rt.plural == "events" and not rt.crd_name and isinstance(body, dict):
            _validate_event_as_sent(rt, namespace, body)
        obj = self._check_kind(rt, body, fresh=fresh, strict=strict)
        obj["apiVersion"] = "v1" if rt.to_external else rt.api_version
        obj["kind"] = rt.kind
        meta = obj["metadata"]
        namespace = _place_namespace(rt, meta, namespace)
        generated = not meta.get("name") and bool(meta.get("generateName"))
        name = self._name(rt, meta)
        self._namespace_ok(rt, namespace, name)
        name = self._free_name(rt, meta, namespace, name, generated)
        if rt.has_status and not keep_status and rt.plural != "nodes":
            obj.pop("status", None)
        self._admit(rt, obj, None, strict)
        charged = self._admit_quota(rt, obj) if rt.namespaced else []
        self._set_managed_fields(rt, obj, writer, managed_fields)
        _set_server_metadata(rt, obj, uid)
        if dry:
            meta["resourceVersion"] = str(self.store.rv)
            return obj
        qrt = self.rt("", "v1", "resourcequotas")
        for quota, status in charged:     # the quotas' new use first, as the ResourceQuota plugin writes it
            if quota.get("status") != status:
                self.write(qrt, quota, {**quota, "status": status})
        meta["resourceVersion"] = str(self.store.next_rv())
        self.store.commit(rt, "ADDED", (namespace, name), obj, None)
        if rt.plural == "customresourcedefinitions" and not rt.crd_name:
            self._establish(obj)
        return obj

    def _free_name(self, rt: ResourceType, meta: Obj, namespace: str, name: str, generated: bool) -> str:
        """``name``, or a 409 when an object has it. A name the server generated is generated again, up
        to ``MAX_NAME_GENERATION_ATTEMPTS`` in all (``createWithGenerateNameRetry``, RetryGenerateName:
        GA and locked on since 1.32); the last conflict then says the server could not pick a unique
        name (``CheckGeneratedNameError``, ``NewGenerateNameConflict``, retry after 1 s)."""
        attempts = 1
        while (taken := self.store.get(rt, namespace, name)) is not None:
            if not generated or attempts == MAX_NAME_GENERATION_ATTEMPTS:
                details: Obj = {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural}
                message = f'{resource_name(rt)} "{name}" already exists'
                if generated:
                    message += ", the server was not able to generate a unique name for the object"
                    details["retryAfterSeconds"] = 1
                if taken["metadata"].get("deletionTimestamp"):
                    message = f"object is being deleted: {message}"
                raise ApiError(409, "AlreadyExists", message, details)
            del meta["name"]
            name = self._name(rt, meta)
            attempts += 1
        return name

    def _name(self, rt: ResourceType, meta: Obj) -> str:
        """The object's name, generated from ``generateName`` where it has none, and validated."""
        if not meta.get("name") and meta.get("generateName"):
            # names.SimpleNameGenerator: the base cut to 58 characters, then 5 random ones.
            meta["name"] = str(meta["generateName"])[:58] + "".join(self.rng.choice(_GEN_ALPHABET) for _ in range(5))
        name = str(meta.get("name") or "")
        if rt.plural != "events":
            validate_name(rt.kind, name, store=rt.store, group=rt.group)
        elif not name:
            raise invalid("Event", name, [("metadata.name", "FieldValueRequired", "Required value")])
        return name

    def _set_managed_fields(self, rt: ResourceType, obj: Obj, writer: Writer | None,
                            managed_fields: Entries | None) -> None:
        """managedFields: given (server-side apply), computed for a request's manager, or none."""
        meta = obj["metadata"]
        if managed_fields is not None:
            meta["managedFields"] = managed_fields
        elif writer is not None and writer.manager:
            meta.pop("managedFields", None)
            meta["managedFields"] = self.managed.update(None, obj, self._fields_schema(rt, obj), writer.manager,
                                                        obj["apiVersion"], "", rt.has_status)
        else:
            meta.pop("managedFields", None)

    def load(self, obj: Obj, *, uid: str | None = None) -> Obj:
        """Create one object from a file or a dump: its status is kept, its namespace created if missing,
        server-set metadata (resourceVersion, …) replaced, and its uid too unless ``uid`` is given
        (``simulator/loader.py`` keeps a dump's uids)."""
        rt = self.registry.for_object(obj)
        if rt is None:
            raise ApiError(404, "NotFound", f'no matches for kind "{obj.get("kind")}" in version '
                                            f'"{obj.get("apiVersion")}"')
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "generation"):
            meta.pop(f, None)
        ns = ""
        if rt.namespaced:
            ns = meta.get("namespace") or "default"
            nrt = self.rt("", "v1", "namespaces")
            if self.store.get(nrt, "", ns) is None:
                self.create(nrt, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        # What the cluster's own controllers keep (a dump of a live cluster has them too) is the
        # cluster's, as a replay onto a real cluster would find it.
        made = (rt.store, ns, meta.get("name")) in _CLUSTER_MADE or (
            rt.store, meta.get("name")) in _CLUSTER_MADE_EACH_NAMESPACE
        if made and (found := self.store.get(rt, ns, str(meta["name"]))) is not None:
            return found
        return self.create(rt, ns, obj, keep_status=True, uid=uid)


def _validate_event_as_sent(rt: ResourceType, namespace: str, body: Obj) -> None:
    """ValidateEventCreate reads the version the client wrote (events.k8s.io/v1 has stricter rules than
    core/v1), so it runs on the body as sent, once it decodes."""
    check_types(body, rt.group, rt.version, rt.kind)
    meta = body.get("metadata") or {}
    causes = validate_event(body, rt.group, namespace or str(meta.get("namespace") or ""))
    if causes:
        raise invalid("Event", str(meta.get("name") or meta.get("generateName") or ""), causes, rt.group)


def _place_namespace(rt: ResourceType, meta: Obj, namespace: str) -> str:
    """The namespace the object lands in: the request's, which the body may repeat but not contradict;
    none for a cluster-scoped kind."""
    if not rt.namespaced:
        meta.pop("namespace", None)
        return namespace
    if meta.get("namespace") and namespace and meta["namespace"] != namespace:
        raise bad_request("the namespace of the provided object does not match the namespace sent on the "
                          "request")
    namespace = namespace or meta.get("namespace", "")
    meta["namespace"] = namespace
    return namespace


def _set_server_metadata(rt: ResourceType, obj: Obj, uid: str | None = None) -> None:
    """What the server sets on every new object: a fresh uid (or the given one), the creation time and the
    generation."""
    meta = obj["metadata"]
    meta.pop("deletionTimestamp", None)
    meta.pop("deletionGracePeriodSeconds", None)
    meta["uid"] = uid or str(uuid.uuid4())
    if rt.store == "batch/jobs":
        apps.default_job_selector(obj)      # the selector is the new uid (generateSelector)
    meta["creationTimestamp"] = now_iso()
    if rt.crd_name or rt.store in _WITH_GENERATION:
        meta["generation"] = 1
