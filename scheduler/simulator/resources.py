"""The resource types the simulated API server serves, and how a URL path names one.

A ``ResourceType`` is what discovery lists: group, version, plural, kind, scope, verbs and
subresources. Built-in types are fixed here; each established CustomResourceDefinition adds one
``ResourceType`` per served version (``ResourceRegistry.add_crd``). Two types may share one
``store`` key: ``events.k8s.io/v1`` events are ``core/v1`` events seen through a converter, as on a
real server, so both APIs read and write the same objects.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["BUILTIN", "ResourceRegistry", "ResourceType"]

Obj = dict[str, Any]
ALL_VERBS = ("create", "delete", "deletecollection", "get", "list", "patch", "update", "watch")


@dataclass(eq=False)          # identity: one object per served type (and ``rt in`` lists stay cheap)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    singular: str = ""
    short_names: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ALL_VERBS
    subresources: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    store: str = ""                       # shared storage key; defaults to group/plural
    list_kind: str = ""
    field_labels: frozenset[str] = frozenset()
    # CRD-only: the OpenAPI schema, printer columns and whether status is a subresource.
    schema: Obj | None = None
    printer_columns: list[Obj] = field(default_factory=list)
    # Converters between the stored form and this version's form (events.k8s.io/v1).
    to_external: Callable[[Obj], Obj] | None = None
    from_external: Callable[[Obj], Obj] | None = None
    crd_name: str = ""

    def __post_init__(self) -> None:
        self.singular = self.singular or self.kind.lower()
        self.store = self.store or f"{self.group}/{self.plural}"
        self.list_kind = self.list_kind or f"{self.kind}List"
        self.field_labels = self.field_labels | {"metadata.name", "metadata.namespace"}

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def has_status(self) -> bool:
        return "status" in self.subresources

    def describe(self) -> list[Obj]:
        """APIResource entries for discovery: the resource and its subresources."""
        out: list[Obj] = [{
            "name": self.plural, "singularName": self.singular, "namespaced": self.namespaced,
            "kind": self.kind, "verbs": list(self.verbs), **({"shortNames": list(self.short_names)}
                                                           if self.short_names else {}),
            **({"categories": list(self.categories)} if self.categories else {}),
            "storageVersionHash": "",
        }]
        for sub in self.subresources:
            kind, verbs = _SUB_KIND.get(sub, (self.kind, ["get", "patch", "update"]))
            out.append({"name": f"{self.plural}/{sub}", "singularName": "", "namespaced": self.namespaced,
                        "kind": kind, "verbs": verbs, **_SUB_GROUP.get(sub, {})})
        return out


_SUB_KIND = {"binding": ("Binding", ["create"]), "eviction": ("Eviction", ["create"]),
             "token": ("TokenRequest", ["create"]), "scale": ("Scale", ["get", "patch", "update"])}
_SUB_GROUP = {"eviction": {"group": "policy", "version": "v1"}, "scale": {"group": "autoscaling", "version": "v1"},
              "token": {"group": "authentication.k8s.io", "version": "v1"}}

_POD_FIELDS = frozenset({"spec.nodeName", "spec.schedulerName", "status.phase", "spec.serviceAccountName",
                         "spec.restartPolicy", "status.podIP", "status.nominatedNodeName", "spec.hostNetwork"})
_EVENT_FIELDS = frozenset({"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                           "involvedObject.uid", "involvedObject.apiVersion", "involvedObject.resourceVersion",
                           "involvedObject.fieldPath", "reason", "reportingComponent", "source", "type"})
_NEW_EVENT_FIELDS = frozenset({"regarding.kind", "regarding.namespace", "regarding.name", "regarding.uid",
                               "reason", "type", "reportingController"})


# core/v1 Event field → events.k8s.io/v1 Event field (the apiserver's conversion).
_EVENT_PAIRS = (("involvedObject", "regarding"), ("related", "related"), ("message", "note"), ("reason", "reason"),
                ("type", "type"), ("action", "action"), ("eventTime", "eventTime"),
                ("reportingComponent", "reportingController"), ("reportingInstance", "reportingInstance"),
                ("count", "deprecatedCount"), ("firstTimestamp", "deprecatedFirstTimestamp"),
                ("lastTimestamp", "deprecatedLastTimestamp"), ("source", "deprecatedSource"), ("series", "series"))


def _event_to_v1(obj: Obj) -> Obj:
    """core/v1 Event (stored) → events.k8s.io/v1 Event."""
    out: Obj = {"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    out.update({new: obj[old] for old, new in _EVENT_PAIRS if old in obj})
    return out


def _event_from_v1(obj: Obj) -> Obj:
    """events.k8s.io/v1 Event → core/v1 Event (stored)."""
    out: Obj = {"apiVersion": "v1", "kind": "Event", "metadata": obj.get("metadata", {})}
    out.update({old: obj[new] for old, new in _EVENT_PAIRS if new in obj})
    out.setdefault("involvedObject", {})
    if "series" in out and isinstance(out["series"], dict):
        out["series"] = {k: v for k, v in out["series"].items() if k in ("count", "lastObservedTime")}
    return out


BUILTIN: list[ResourceType] = [
    ResourceType("", "v1", "namespaces", "Namespace", False, short_names=("ns",), subresources=("status",),
                 field_labels=frozenset({"status.phase"})),
    ResourceType("", "v1", "nodes", "Node", False, short_names=("no",), subresources=("status",),
                 field_labels=frozenset({"spec.unschedulable"})),
    ResourceType("", "v1", "pods", "Pod", True, short_names=("po",), categories=("all",),
                 subresources=("status", "binding", "eviction", "resize"), field_labels=_POD_FIELDS),
    ResourceType("", "v1", "bindings", "Binding", True, verbs=("create",)),
    ResourceType("", "v1", "events", "Event", True, short_names=("ev",), field_labels=_EVENT_FIELDS,
                 store="core/events"),
    ResourceType("", "v1", "services", "Service", True, short_names=("svc",), categories=("all",),
                 subresources=("status",)),
    ResourceType("", "v1", "persistentvolumes", "PersistentVolume", False, short_names=("pv",),
                 subresources=("status",)),
    ResourceType("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim", True, short_names=("pvc",),
                 subresources=("status",)),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, short_names=("cm",)),
    ResourceType("", "v1", "secrets", "Secret", True),
    ResourceType("", "v1", "limitranges", "LimitRange", True, short_names=("limits",)),
    ResourceType("", "v1", "resourcequotas", "ResourceQuota", True, short_names=("quota",), subresources=("status",)),
    ResourceType("", "v1", "endpoints", "Endpoints", True, short_names=("ep",), singular="endpoints"),
    ResourceType("discovery.k8s.io", "v1", "endpointslices", "EndpointSlice", True,
                 field_labels=frozenset({"addressType"})),
    ResourceType("", "v1", "serviceaccounts", "ServiceAccount", True, short_names=("sa",), subresources=("token",)),
    ResourceType("events.k8s.io", "v1", "events", "Event", True, short_names=("ev",), field_labels=_NEW_EVENT_FIELDS,
                 store="core/events", to_external=_event_to_v1, from_external=_event_from_v1),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True),
    ResourceType("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", False, short_names=("pc",)),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, short_names=("pdb",),
                 subresources=("status",)),
    ResourceType("", "v1", "replicationcontrollers", "ReplicationController", True, short_names=("rc",),
                 categories=("all",), subresources=("status", "scale")),
    ResourceType("apps", "v1", "replicasets", "ReplicaSet", True, short_names=("rs",), categories=("all",),
                 subresources=("status", "scale")),
    ResourceType("apps", "v1", "statefulsets", "StatefulSet", True, short_names=("sts",), categories=("all",),
                 subresources=("status", "scale")),
    ResourceType("apps", "v1", "deployments", "Deployment", True, short_names=("deploy",), categories=("all",),
                 subresources=("status", "scale")),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True, short_names=("ds",), categories=("all",),
                 subresources=("status",)),
    ResourceType("batch", "v1", "jobs", "Job", True, categories=("all",), subresources=("status",)),
    ResourceType("batch", "v1", "cronjobs", "CronJob", True, short_names=("cj",), categories=("all",),
                 subresources=("status",)),
    ResourceType("storage.k8s.io", "v1", "storageclasses", "StorageClass", False, short_names=("sc",)),
    ResourceType("storage.k8s.io", "v1", "csinodes", "CSINode", False),
    ResourceType("storage.k8s.io", "v1", "csidrivers", "CSIDriver", False),
    ResourceType("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity", True),
    # Dynamic Resource Allocation: what is stored and how is in ``registry/resource.py``.
    ResourceType("resource.k8s.io", "v1", "deviceclasses", "DeviceClass", False),
    ResourceType("resource.k8s.io", "v1", "resourceclaims", "ResourceClaim", True, subresources=("status",)),
    ResourceType("resource.k8s.io", "v1", "resourceclaimtemplates", "ResourceClaimTemplate", True),
    ResourceType("resource.k8s.io", "v1", "resourceslices", "ResourceSlice", False,
                 field_labels=frozenset({"spec.nodeName", "spec.driver"})),
    # DRADeviceTaintRules (GA in 1.37): served at v1, cluster-scoped, with a status subresource.
    ResourceType("resource.k8s.io", "v1", "devicetaintrules", "DeviceTaintRule", False, subresources=("status",)),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterroles", "ClusterRole", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "clusterrolebindings", "ClusterRoleBinding", False),
    ResourceType("rbac.authorization.k8s.io", "v1", "roles", "Role", True),
    ResourceType("rbac.authorization.k8s.io", "v1", "rolebindings", "RoleBinding", True),
    ResourceType("apiextensions.k8s.io", "v1", "customresourcedefinitions", "CustomResourceDefinition", False,
                 short_names=("crd", "crds"), subresources=("status",)),
    # Stored and validated, never proxied to (registry/apiregistration.py).
    ResourceType("apiregistration.k8s.io", "v1", "apiservices", "APIService", False, subresources=("status",)),
]

_PREFERRED = {"events.k8s.io": "v1"}


class ResourceRegistry:
    """All served types, by (group, version, plural) and by (apiVersion, kind)."""

    def __init__(self) -> None:
        self.by_path: dict[tuple[str, str, str], ResourceType] = {}
        self.by_kind: dict[tuple[str, str], ResourceType] = {}
        for rt in BUILTIN:
            self.add(rt)

    def add(self, rt: ResourceType) -> None:
        self.by_path[(rt.group, rt.version, rt.plural)] = rt
        self.by_kind[(rt.api_version, rt.kind)] = rt

    def remove_crd(self, crd_name: str) -> list[ResourceType]:
        gone = [rt for rt in self.by_path.values() if rt.crd_name == crd_name]
        for rt in gone:
            del self.by_path[(rt.group, rt.version, rt.plural)]
            self.by_kind.pop((rt.api_version, rt.kind), None)
        return gone

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        return self.by_path.get((group, version, plural))

    def for_object(self, obj: Obj) -> ResourceType | None:
        return self.by_kind.get((str(obj.get("apiVersion", "")), str(obj.get("kind", ""))))

    def groups(self) -> dict[str, list[str]]:
        """group → served versions (core group is "")."""
        out: dict[str, list[str]] = {}
        for g, v, _ in self.by_path:
            vs = out.setdefault(g, [])
            if v not in vs:
                vs.append(v)
        return out

    def resources(self, group: str, version: str) -> list[ResourceType]:
        return [rt for (g, v, _), rt in self.by_path.items() if g == group and v == version]

    def crd_types(self, crd: Obj) -> list[ResourceType]:
        """The ResourceTypes that a CRD object serves (one per served version)."""
        spec = crd.get("spec", {})
        names = spec.get("names", {})
        out = []
        for ver in spec.get("versions", []):
            if not ver.get("served", True):
                continue
            subs = ver.get("subresources") or {}
            out.append(ResourceType(
                spec["group"], ver["name"], names["plural"], names["kind"], spec.get("scope") == "Namespaced",
                singular=names.get("singular", ""), short_names=tuple(names.get("shortNames", ())),
                categories=tuple(names.get("categories", ())),
                subresources=("status",) if "status" in subs else (), store=f"{spec['group']}/{names['plural']}",
                list_kind=names.get("listKind", ""), schema=(ver.get("schema") or {}).get("openAPIV3Schema"),
                printer_columns=list(ver.get("additionalPrinterColumns") or ()),
                crd_name=crd["metadata"]["name"]))
        return out

    @staticmethod
    def preferred(group: str, versions: list[str]) -> str:
        return _PREFERRED.get(group, versions[0])
