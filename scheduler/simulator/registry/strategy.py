"""The strategy of a write, as kube-apiserver's ``rest.RESTCreateStrategy`` / ``RESTUpdateStrategy`` apply
it: a body is checked against its kind and decoded to the stored form (unknown fields dropped, or refused
with ``fieldValidation=Strict``; a custom resource pruned and defaulted by its schema), then defaulted and
validated by the kind's API group (``registry.core``, ``apps``, ``scheduling``, ``storage``, ``resource``,
``apiregistration``; a CRD by ``crdcheck``; a custom resource by its schema and CEL rules), and its field
ownership tracked (``managed``). Nothing here stores: ``generic`` does.
"""

from __future__ import annotations

import datetime as dt
import itertools
from typing import Any

import orjson

from scheduler.features import enabled
from scheduler.simulator import crdcheck, managed, schema
from scheduler.simulator.apierrors import (
    ApiError,
    bad_request,
    invalid,
    patch_invalid,
    resource_name,
    strict_decoding_error,
)
from scheduler.simulator.interfaces import Entries, Writer
from scheduler.simulator.openapi import definition_for
from scheduler.simulator.registry import apiregistration, apps, podgroups, scheduling, storage
from scheduler.simulator.registry import resource as dra
from scheduler.simulator.registry.core import admission, limitrange, resourcequota, serviceaccount
from scheduler.simulator.registry.core.immutable import validate_config_update
from scheduler.simulator.registry.core.quantities import Quantity
from scheduler.simulator.registry.core.services import validate_service, validate_service_update
from scheduler.simulator.registry.core.validation import validate_lease, validate_pod_update
from scheduler.simulator.registry.meta import validate_annotations
from scheduler.simulator.registry.podgroups import GENERIC_WORKLOAD
from scheduler.simulator.registry.state import StoreState
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.typecheck import check_types

__all__ = ["Strategy"]

Obj = dict[str, Any]


def _copy(obj: Obj) -> Obj:
    return orjson.loads(orjson.dumps(obj))  # type: ignore[no-any-return]


class Strategy(StoreState):
    """Each kind's strategy, applied to a write: decoding into the stored form (``_check_kind``), the
    namespace's existence, then the group's defaulting and validation (``_admit``, by the kind's store),
    and the managedFields the write leaves (``_track``)."""

    def rt(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self.registry.lookup(group, version, plural)
        assert rt is not None
        return rt

    def _namespace_ok(self, rt: ResourceType, namespace: str, name: str) -> None:
        if not rt.namespaced:
            return
        if not namespace:
            raise bad_request("the namespace of the object must be set")
        ns = self.store.get(self.rt("", "v1", "namespaces"), "", namespace)
        if ns is None:
            raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found',
                           {"name": namespace, "kind": "namespaces"})
        if ns["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", f'{rt.plural} "{name}" is forbidden: unable to create new content in '
                                             f"namespace {namespace} because it is being terminated")

    def _check_kind(self, rt: ResourceType, body: Any, *, fresh: bool = False, strict: bool = False,
                    patch_shown: str | None = None, defaults: bool = True) -> Obj:
        """Check apiVersion/kind and convert to the stored form; ``fresh`` bodies (just decoded from
        the request, owned by nobody else) are used in place instead of copied. Unknown fields (a
        built-in kind's by its Go type, a custom resource's by its structural schema) are dropped, as
        decoding drops them, or refused with ``fieldValidation=Strict`` (kubectl's default) as strict
        decoding refuses them: a 400 for a create or an update (``transformDecodeError``), and for a
        patch, whose result is what failed to decode, the patcher's 422 showing ``patch_shown``. A custom
        resource is then defaulted by its schema, unless ``defaults`` is False (an apply configuration:
        upstream defaults the merged result)."""
        if not isinstance(body, dict):
            raise bad_request("couldn't get version/kind; json parse error: expected an object")
        if body.get("kind") and body["kind"] != rt.kind:
            raise bad_request(f"the kind in the data ({body['kind']}) does not match the expected kind ({rt.kind})")
        if body.get("apiVersion") and body["apiVersion"] != rt.api_version:
            raise bad_request(f"the API version in the data ({body['apiVersion']}) does not match the expected API "
                              f"version ({rt.api_version})")
        if not rt.crd_name:
            # Decoding into the kind's Go type comes first in kube-apiserver: a wrong JSON type is a 400.
            check_types(body, rt.group, rt.version, rt.kind)
        obj = body if fresh else _copy(body)
        unknown: list[str] = []
        if rt.crd_name:
            unknown = schema.coerce(rt.schema, obj, defaults=defaults)
        elif (definition := definition_for(rt.group, rt.version, rt.kind)) is not None:
            unknown = self.fields.unknown(definition, obj, drop=True)
        if unknown and strict:
            if patch_shown is not None:
                raise patch_invalid(patch_shown, strict_decoding_error(unknown))
            raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                              + strict_decoding_error(unknown))
        if unknown and self.warnings is not None:
            self.warnings.extend(f'unknown field "{u}"' for u in unknown)
        if rt.from_external:
            obj = rt.from_external(obj)
        obj.setdefault("metadata", {})
        if not isinstance(obj["metadata"], dict):
            raise bad_request("metadata: expected an object")
        return obj

    def _allocate_cluster_ip(self) -> str:
        """The next free address of the service range (10.96.0.0/12; .0 and .1, the API's own, skipped)."""
        used = {str(((o.get("spec") or {}).get("clusterIP")) or "")
                for o in self.store.bucket("/services").objects.values()}
        for ip in itertools.islice(admission.SERVICE_CIDR.hosts(), 10, None):
            if str(ip) not in used:
                return str(ip)
        raise ApiError(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")

    def _admit(self, rt: ResourceType, obj: Obj, old: Obj | None, strict: bool = False) -> None:
        """Kind-specific defaulting and validation (create when ``old`` is None)."""
        validate_annotations(rt.kind, obj, rt.group)
        if rt.crd_name:
            _admit_custom(rt, obj, old)
            return
        key = rt.store
        if key == "/pods":
            self._admit_pod(obj, old)
        elif key == "/nodes":
            if old is None:
                self.controllers.kubelet.register(obj)
            admission.default_node(obj)
        elif key == "scheduling.k8s.io/priorityclasses":
            self._admit_priority_class(obj, old)
        elif key == "coordination.k8s.io/leases":
            if causes := validate_lease(obj):
                raise invalid("Lease", obj["metadata"].get("name", ""), causes, rt.group)
        elif key in storage.STORES:
            storage.admit_storage(key, obj, old,
                                  self.store.bucket("storage.k8s.io/storageclasses").objects.values)
            if key == "/persistentvolumeclaims" and old is None:
                ns = obj["metadata"].get("namespace", "")
                limitrange.validate_claim(obj, sorted(self.store.bucket("/limitranges").items(ns),
                                                      key=lambda lr: lr["metadata"]["name"]))
        elif key in dra.STORES:
            nrt = self.rt("", "v1", "namespaces")
            dra.admit_dra(key, obj, old, lambda ns: ((self.store.get(nrt, "", ns) or {}).get("metadata") or {})
                          .get("labels") or {})
        elif key == "/namespaces":
            _default_namespace(obj)
        elif key == "apiextensions.k8s.io/customresourcedefinitions":
            self._validate_crd(obj)
            _stored_versions(obj, old)
        elif key in ("/secrets", "/configmaps"):
            if key == "/secrets":
                admission.default_secret(obj)
            if old is not None and (causes := validate_config_update(rt.kind, obj, old)):
                raise invalid(rt.kind, obj["metadata"].get("name", ""), causes)
        elif key == "/limitranges":
            limitrange.default_limit_range(obj)
            limitrange.validate_limit_range(obj)
        elif key == "/resourcequotas":
            resourcequota.validate_quota(obj)
        elif key == "/services":
            admission.default_service(obj, old, self._allocate_cluster_ip)
            if causes := (validate_service(obj) if old is None else validate_service_update(obj, old)):
                raise invalid("Service", obj["metadata"].get("name", ""), causes)
        elif key in apps.WORKLOAD_STORES and isinstance(obj.get("spec"), dict):
            apps.default_workload(key, obj)
        elif key == "policy/poddisruptionbudgets":
            self._admit_pdb(obj)
        elif key in podgroups.STORES:
            if key == podgroups.PODGROUPS and old is None:
                pcs = self.rt("scheduling.k8s.io", "v1", "priorityclasses")
                podgroups.admit_priority(obj, lambda n: self.store.get(pcs, "", n), self._global_default_class)
            podgroups.admit(key, obj, old,
                            policy_gate=enabled(self.feature_gates, podgroups.POD_GROUP_PREEMPTION_POLICY))
        elif key == apiregistration.STORE:
            apiregistration.admit_api_service(obj)

    def _admit_pod(self, obj: Obj, old: Obj | None) -> None:
        """A pod: defaulted (priority from its class) on create, its update validated. Without the
        ``GenericWorkload`` gate ``spec.schedulingGroup`` is dropped unless the old pod had it
        (``dropDisabledFields``)."""
        spec = obj.get("spec")
        if (isinstance(spec, dict) and not enabled(self.feature_gates, GENERIC_WORKLOAD)
                and not ((old or {}).get("spec") or {}).get("schedulingGroup")):
            spec.pop("schedulingGroup", None)
        if old is None:
            ns = obj["metadata"].get("namespace", "")
            ranges = sorted(self.store.bucket("/limitranges").items(ns), key=lambda lr: lr["metadata"]["name"])
            if isinstance(obj.get("spec"), dict):
                # Mutating admission (ServiceAccount) runs before validation, as kube-apiserver's chain does.
                serviceaccount.admit_pod(obj, ns, self._service_account)
            pcs = self.rt("scheduling.k8s.io", "v1", "priorityclasses")
            admission.default_pod(obj, lambda n: self.store.get(pcs, "", n), self._global_default_class,
                                  (lambda pod: limitrange.mutate_pod(pod, ranges)) if ranges else None)
            if ranges:
                limitrange.validate_pod(obj, ranges)
            return
        causes = validate_pod_update(obj, old)
        if causes:
            raise invalid("Pod", obj["metadata"].get("name", ""), causes)
        self._check_pod_update(obj, old)

    def _admit_quota(self, rt: ResourceType, obj: Obj) -> list[tuple[Obj, Obj]]:
        """The ResourceQuota plugin on a create, where the namespace has quotas (validating admission:
        after every kind's defaulting and validation): refused past a quota; else each quota the object
        is charged to, with the status to write before the object is stored."""
        ns = obj["metadata"].get("namespace", "")
        quotas = [q for q in self.store.bucket("/resourcequotas").items(ns) if not q["metadata"].get(
            "deletionTimestamp")] if ns else []
        if not quotas:
            return []
        now = dt.datetime.now(dt.UTC)

        def usage(rq: Obj) -> dict[str, Quantity]:
            current = resourcequota.status_usage(rq)
            return current if current is not None else resourcequota.namespace_usage(self.store, self.registry,
                                                                                     rq, now)
        return resourcequota.check_create(quotas, resource_name(rt), rt.store, rt.group, rt.plural, obj, usage, now)

    def _service_account(self, namespace: str, name: str) -> Obj | None:
        """A pod's account: stored, or (``default``) made now by the ServiceAccounts controller."""
        found = self.store.get(self.rt("", "v1", "serviceaccounts"), namespace, name)
        if found is None and name == serviceaccount.DEFAULT_NAME:
            return self.controllers.serviceaccounts.ensure_default(namespace)
        return found

    def _admit_priority_class(self, obj: Obj, old: Obj | None) -> None:
        """A PriorityClass: validated against the others (one global default); its value immutable."""
        others = list(self.store.bucket("scheduling.k8s.io/priorityclasses").objects.values())
        scheduling.validate_priority_class(obj, others)
        if old is not None and obj.get("value") != old.get("value"):
            raise invalid("PriorityClass", obj["metadata"]["name"], [
                ("value", "FieldValueForbidden", "Forbidden: may not be changed in an update.")],
                "scheduling.k8s.io")

    def _admit_pdb(self, obj: Obj) -> None:
        """A PodDisruptionBudget: minAvailable or maxUnavailable, not both; the disruption controller told."""
        spec = obj.get("spec") or {}
        if "minAvailable" in spec and "maxUnavailable" in spec:
            raise invalid("PodDisruptionBudget", obj["metadata"]["name"], [
                ("spec", "FieldValueInvalid", "Invalid value: {}: minAvailable and maxUnavailable cannot be both "
                                              "set")], "policy")
        self.controllers.disruption.mark(obj["metadata"].get("namespace", ""))

    def _global_default_class(self) -> Obj | None:
        for pc in self.store.bucket("scheduling.k8s.io/priorityclasses").objects.values():
            if pc.get("globalDefault"):
                return pc
        return None

    _POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")

    def _check_pod_update(self, new: Obj, old: Obj) -> None:
        a, b = dict(new.get("spec") or {}), dict(old.get("spec") or {})
        for f in self._POD_MUTABLE:
            a.pop(f, None)
            b.pop(f, None)
        for spec in (a, b):
            for group in ("containers", "initContainers"):
                if group in spec:
                    spec[group] = [{k: v for k, v in c.items() if k != "image"}
                                   for c in spec[group]]
        if a != b:
            raise invalid("Pod", new["metadata"]["name"], [(
                "spec", "FieldValueForbidden",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                "previously negative)")])
        # validateOnlyDeletedSchedulingGates: gates may only be removed; one error per gate (by name)
        # the old pod did not have, at its index in the new list
        gates_old = {g.get("name") for g in (old.get("spec") or {}).get("schedulingGates") or []}
        added = [(i, g.get("name")) for i, g in enumerate((new.get("spec") or {}).get("schedulingGates") or [])
                 if g.get("name") not in gates_old]
        if added:
            raise invalid("Pod", new["metadata"]["name"], [(
                f"spec.schedulingGates[{i}].name", "FieldValueForbidden",
                f"Forbidden: only deletion is allowed, but found new scheduling gate '{gate}'") for i, gate in added])

    def _validate_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        name = crd["metadata"].get("name", "")
        causes = []
        names = spec.get("names") or {}
        for f in ("group", "scope"):
            if not spec.get(f):
                causes.append((f"spec.{f}", "FieldValueRequired", "Required value"))
        for f in ("plural", "kind"):
            if not names.get(f):
                causes.append((f"spec.names.{f}", "FieldValueRequired", "Required value"))
        if not spec.get("versions"):
            causes.append(("spec.versions", "FieldValueInvalid", "Invalid value: []: must have exactly one version "
                                                                 "marked as storage version"))
        if not causes and name != f"{names['plural']}.{spec['group']}":
            causes.append(("metadata.name", "FieldValueInvalid",
                           f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group'))
        causes += crdcheck.check_crd(crd)
        if causes:
            raise invalid("CustomResourceDefinition", name, causes, "apiextensions.k8s.io")
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")

    def _fields_schema(self, rt: ResourceType, obj: Obj) -> managed.Schema:
        """The compiled schema field ownership walks: the stored kind's (core/v1 Event for both APIs)."""
        if rt.crd_name:
            return managed.kind_schema(rt.group, rt.version, rt.kind, rt.schema or {})
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        return managed.kind_schema(group, version, str(obj.get("kind", "")), None)

    def _track(self, rt: ResourceType, old: Obj, new: Obj, sub: str, sent: Any, writer: Writer | None,
               computed: Entries | None) -> None:
        """Set ``new``'s managedFields: as computed (apply); as sent (a request may set them, ``[]`` clears
        them) with this write's changes owned by its manager; or the live ones, for the simulated
        controllers' own writes."""
        meta = new["metadata"]
        if computed is not None:
            meta["managedFields"] = computed
            return
        if sent is not None:
            meta["managedFields"] = sent
        elif "managedFields" in old["metadata"]:
            meta["managedFields"] = old["metadata"]["managedFields"]
        if not meta.get("managedFields"):
            meta.pop("managedFields", None)
        if writer is None or not writer.manager:
            return
        subresource = sub if sub == "status" else ("scale" if writer.sub == "scale" else "")
        entries = self.managed.update(old, new, self._fields_schema(rt, new), writer.manager, new["apiVersion"],
                                      subresource, rt.has_status)
        if entries:
            meta["managedFields"] = entries
        else:
            meta.pop("managedFields", None)


def _admit_custom(rt: ResourceType, obj: Obj, old: Obj | None) -> None:
    """A custom resource: pruned to its schema (what the server itself added; the request's fields were
    seen by ``_check_kind``) and validated against it."""
    schema.prune(rt.schema, obj)
    causes = schema.validate(rt.schema, obj, old=old)
    if causes:
        raise invalid(rt.kind, obj["metadata"].get("name", ""), causes, rt.group)


def _default_namespace(obj: Obj) -> None:
    """A namespace: the kubernetes finalizer, Active, and its name label."""
    obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
    obj.setdefault("status", {}).setdefault("phase", "Active")
    obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]


def _stored_versions(crd: Obj, old: Obj | None) -> None:
    """The CRD strategy's PrepareForCreate/PrepareForUpdate: a new CRD's status is reset to its storage
    version in ``storedVersions`` (and the empty accepted names Go writes); an update appends a new
    storage version to the ones objects may still be stored in."""
    storage = next((v.get("name") for v in (crd.get("spec") or {}).get("versions") or []
                    if isinstance(v, dict) and v.get("storage")), None)
    if old is None:
        crd["status"] = {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": []}
    status = crd["status"] = dict(crd.get("status") or {})
    stored = list(status.get("storedVersions") or [])
    if storage and storage not in stored:
        stored.append(storage)
    status["storedVersions"] = stored
