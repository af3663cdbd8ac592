"""``kopf-scheduler dump``: everything ``simulate`` needs from a live cluster, as one ``List``.

It reads, through the project's own client (``scheduler.kubeapi``: any kubeconfig, exec plugins
included), the kinds in ``KINDS``: namespaces, nodes, PriorityClasses, StorageClasses, PVs and PVCs,
CSIDrivers, CSINodes and CSIStorageCapacities (the volume plugins read them), DeviceClasses,
ResourceSlices and ResourceClaimTemplates (DynamicResources reads them), SchedulingProfiles,
the workload objects (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
ReplicationControllers), Workloads and PodGroups (``scheduling.k8s.io/v1beta1``, served with the
GenericWorkload gate: pods name their PodGroup), Services (their selectors are what PodTopologySpread's
default constraints read), pods, ResourceClaims and PDBs, in that order (owners before their dependents,
so a replay creates them in order: a claim generated from a template is owned by its pod). Lists
are read in pages of ``PAGE`` items. A kind the server does not serve is skipped and named in
``notes`` (the CLI prints them on stderr), except the kinds served only behind a feature gate that is
off by default (``GATED``: Workload and PodGroup), whose absence is the norm. Each item gets its
``apiVersion`` and ``kind``; ``uid`` is kept, because ``ownerReferences`` name their owner by it
and the replay (``simulate.replay``) maps them to the new objects.

``minimal`` strips each object to what scheduling reads (``strip``): no ``managedFields`` and no
server-set metadata, only the annotations the scheduler or volume binding read, containers reduced
to name, image, resources, ports, restartPolicy and what NodeDeclaredFeatures infers from (restart
rules, securityContext's ulimits and cgroupOptions), only the volumes that name storage or that a node
feature is inferred from (a downward API ``assigned.cpuset``), pod status
reduced to phase, conditions, nominatedNodeName and the names of its claims
(``resourceClaimStatuses``, ``extendedResourceClaimStatus``: without them a replay would generate
second claims for its templates), node status to capacity, allocatable, conditions, images and
declaredFeatures, a
Service to its selector, ports and type, a ResourceClaim's status to its allocation and
``reservedFor`` (the devices it holds), a PodGroup's status to its conditions (once
``PodGroupInitiallyScheduled`` is true it stays so), and no status on the other kinds except a PV's and a PVC's
phase.

``anonymize`` (``Anonymizer``) renames namespaces (except the built-in ones), object names, node
names, container images, PriorityClasses (except ``system-*``) and StorageClasses, one name for
one original everywhere: ``spec.nodeName``, ``status.nominatedNodeName``, the
``kubernetes.io/hostname`` label and node affinity on it or on ``metadata.name``, the labels that
carry an object's name (``NAME_LABELS``: a StatefulSet pod's ``pod-name``, a Job's ``job-name``)
and the selectors on them,
``ownerReferences``, claim names, a pod's PodGroup (``schedulingGroup.podGroupName``) and a PodGroup's
``workloadRef`` and a Workload's ``controllerRef``, ``claimRef``, ``volumeName``, ``storageClassName``,
``priorityClassName``, affinity terms' ``namespaces``, ``kubernetes.io/metadata.name``, and for DRA
the claim and template names a pod refers to, a claim's ``reservedFor`` pods, a slice's node and
pool and an allocation's pools (a pool named after a node is renamed as that node) and node
selector. DeviceClass names stay, as CSI driver names do: they name drivers' classes, not workloads.
Label keys and values other than these stay as they are (selectors must keep matching them).
``anonymize`` implies ``minimal``: annotations, env values and commands could name what it renames.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scheduler.errors import ClientError
from scheduler.kubeapi import KubeClient
from scheduler.model.nodefeatures import required_features
from scheduler.profiles.crd import API_VERSION as PROFILE_API_VERSION
from scheduler.profiles.crd import KIND as PROFILE_KIND

__all__ = ["GATED", "KINDS", "PAGE", "Anonymizer", "DumpResult", "dump_cluster", "strip"]

Obj = dict[str, Any]
PAGE = 500
KINDS: tuple[tuple[str, str], ...] = (
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("v1", "PersistentVolume"),
    ("v1", "PersistentVolumeClaim"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "CSIStorageCapacity"),
    ("resource.k8s.io/v1", "DeviceClass"),
    ("resource.k8s.io/v1", "ResourceSlice"),
    ("resource.k8s.io/v1", "ResourceClaimTemplate"),
    (PROFILE_API_VERSION, PROFILE_KIND),
    ("apps/v1", "Deployment"),
    ("apps/v1", "StatefulSet"),
    ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"),
    ("apps/v1", "ReplicaSet"),
    ("v1", "ReplicationController"),
    ("scheduling.k8s.io/v1beta1", "Workload"),
    ("scheduling.k8s.io/v1beta1", "PodGroup"),
    ("v1", "Service"),
    ("v1", "Pod"),
    ("resource.k8s.io/v1", "ResourceClaim"),
    ("policy/v1", "PodDisruptionBudget"),
)
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
HOSTNAME_LABEL = "kubernetes.io/hostname"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"
# annotations that scheduling reads (volume binding's, the scheduler's own); --minimal keeps only these
KEPT_ANNOTATION_PREFIXES = ("scheduling.kopf-scheduler.io/", "volume.kubernetes.io/selected-node",
                            "volume.beta.kubernetes.io/storage-class", "pv.kubernetes.io/",
                            "storage.alpha.kubernetes.io/migrated-plugins",
                            "resource.kubernetes.io/pod-claim-name")
# Served only with a feature gate that is off by default (GenericWorkload): skipped without a note.
GATED: frozenset[tuple[str, str]] = frozenset({("scheduling.k8s.io/v1beta1", "Workload"),
                                                ("scheduling.k8s.io/v1beta1", "PodGroup")})
# label keys whose values name an object (of this kind, in the labelled object's namespace)
NAME_LABELS = {"statefulset.kubernetes.io/pod-name": "Pod", "batch.kubernetes.io/job-name": "Job",
               "job-name": "Job"}
WORKLOADS = frozenset({"Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "ReplicationController"})
CONTAINER_FIELDS = ("name", "image", "resources", "ports", "restartPolicy", "resizePolicy", "restartPolicyRules")
# securityContext fields a node feature is inferred from (model/nodefeatures.py)
SECURITY_CONTEXT_FIELDS = ("ulimits", "cgroupOptions")
POD_SPEC_DROPPED = ("serviceAccount", "serviceAccountName", "automountServiceAccountToken", "dnsPolicy",
                    "dnsConfig", "securityContext", "imagePullSecrets", "enableServiceLinks", "hostname",
                    "subdomain", "readinessGates", "terminationGracePeriodSeconds", "activeDeadlineSeconds")
# volumes that name no storage (nothing a scheduling plugin reads)
VOLUMES_DROPPED = frozenset({"configMap", "secret", "projected", "downwardAPI", "emptyDir"})


@dataclass
class DumpResult:
    items: list[Obj] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def as_list(self) -> Obj:
        return {"apiVersion": "v1", "kind": "List", "metadata": {}, "items": self.items}


async def _list_all(api: KubeClient, api_version: str, kind: str) -> list[Obj]:
    out: list[Obj] = []
    cont = ""
    while True:
        params = {"limit": str(PAGE), **({"continue": cont} if cont else {})}
        page = await api.list(api_version, kind, params=params)
        for item in page.get("items") or []:
            out.append({"apiVersion": api_version, "kind": kind, **item})
        cont = str((page.get("metadata") or {}).get("continue") or "")
        if not cont:
            return out


async def dump_cluster(api: KubeClient, *, minimal: bool = False, anonymize: bool = False,
                       kinds: Iterable[tuple[str, str]] = KINDS) -> DumpResult:
    result = DumpResult()
    for api_version, kind in kinds:
        try:
            await api.plural(api_version, kind)
        except ClientError as e:
            if e.status not in (403, 404):
                raise
            if (api_version, kind) not in GATED:
                result.notes.append(f"{kind} ({api_version}): not served by this cluster, skipped")
            continue
        try:
            result.items.extend(await _list_all(api, api_version, kind))
        except ClientError as e:
            if e.status not in (403, 404):
                raise
            result.notes.append(f"{kind} ({api_version}): {e.status} {e}, skipped")
    if minimal or anonymize:            # annotations, env and commands could name what is renamed
        result.items = [strip(o) for o in result.items]
    if anonymize:
        result.items = Anonymizer().apply(result.items)
    return result


# ---- --minimal --------------------------------------------------------------------------------------

def _strip_meta(meta: Obj) -> Obj:
    out = {k: meta[k] for k in ("name", "namespace", "uid", "labels", "ownerReferences") if meta.get(k)}
    notes = {k: v for k, v in (meta.get("annotations") or {}).items() if k.startswith(KEPT_ANNOTATION_PREFIXES)}
    if notes:
        out["annotations"] = notes
    return out


def _strip_pod_spec(spec: Obj) -> Obj:
    out = {k: v for k, v in spec.items() if k not in POD_SPEC_DROPPED}
    for key in ("containers", "initContainers"):
        if key in out:
            out[key] = [_strip_container(c) for c in out[key]]
    out.pop("ephemeralContainers", None)
    if "volumes" in out:
        volumes = [v for v in out["volumes"] if not VOLUMES_DROPPED.intersection(v)
                   or required_features({"volumes": [v]})]
        if volumes:
            out["volumes"] = volumes
        else:
            del out["volumes"]
    return out


def _strip_container(c: Obj) -> Obj:
    out = {f: c[f] for f in CONTAINER_FIELDS if f in c}
    sc = c.get("securityContext")
    kept = {f: sc[f] for f in SECURITY_CONTEXT_FIELDS if f in sc} if isinstance(sc, dict) else {}
    if kept:
        out["securityContext"] = kept
    return out


def strip(obj: Obj) -> Obj:
    """``--minimal``: the object reduced to what scheduling reads."""
    kind = obj.get("kind")
    out: Obj = {"apiVersion": obj.get("apiVersion"), "kind": kind,
                "metadata": _strip_meta(obj.get("metadata") or {})}
    for k, v in obj.items():
        if k not in ("apiVersion", "kind", "metadata", "status"):
            out[k] = copy.deepcopy(v)
    status = obj.get("status") or {}
    strip_kind = _STRIP_BY_KIND.get(str(kind))
    if strip_kind is None and kind in WORKLOADS:
        strip_kind = _strip_workload
    kept = strip_kind(out, status) if strip_kind is not None else {}
    if kept:
        out["status"] = copy.deepcopy(kept)
    return out


def _status_fields(status: Obj, keys: Iterable[str]) -> Obj:
    return {k: status[k] for k in keys if status.get(k)}


def _strip_pod(out: Obj, status: Obj) -> Obj:
    out["spec"] = _strip_pod_spec(out.get("spec") or {})
    return _status_fields(status, ("phase", "conditions", "nominatedNodeName", "resourceClaimStatuses",
                                   "extendedResourceClaimStatus"))


def _strip_node(out: Obj, status: Obj) -> Obj:
    spec = out.get("spec") or {}
    out["spec"] = {k: v for k, v in spec.items() if k in ("taints", "unschedulable")}
    return _status_fields(status, ("capacity", "allocatable", "conditions", "images", "declaredFeatures"))


def _strip_workload(out: Obj, status: Obj) -> Obj:
    template = ((out.get("spec") or {}).get("template") or {})
    if template:
        template["metadata"] = _strip_meta(template.get("metadata") or {})
        template["spec"] = _strip_pod_spec(template.get("spec") or {})
    return {}


def _strip_volume(out: Obj, status: Obj) -> Obj:
    return _status_fields(status, ("phase",))


def _strip_claim(out: Obj, status: Obj) -> Obj:
    return _status_fields(status, ("allocation", "reservedFor"))


def _strip_pod_group(out: Obj, status: Obj) -> Obj:
    return _status_fields(status, ("conditions",))


def _strip_service(out: Obj, status: Obj) -> Obj:
    # the selector is what scheduling reads; the addresses the server allocated are not
    spec = out.get("spec") or {}
    out["spec"] = {k: v for k, v in spec.items() if k in ("selector", "ports", "type")}
    return {}


# Per kind: reduce ``out`` in place and return the status fields kept (workloads: _strip_workload).
_STRIP_BY_KIND: dict[str, Callable[[Obj, Obj], Obj]] = {
    "Pod": _strip_pod, "Node": _strip_node, "PersistentVolume": _strip_volume,
    "PersistentVolumeClaim": _strip_volume, "ResourceClaim": _strip_claim, "Service": _strip_service,
    "PodGroup": _strip_pod_group,
}


# ---- --anonymize ------------------------------------------------------------------------------------

class Anonymizer:
    """One new name per original name, per kind of name; ``apply`` rewrites a list of objects."""

    def __init__(self) -> None:
        self._maps: dict[str, dict[str, str]] = {}

    def name(self, space: str, original: str, prefix: str | None = None) -> str:
        names = self._maps.setdefault(space, {})
        if original not in names:
            names[original] = f"{prefix or space.lower()}-{len(names)}"
        return names[original]

    def namespace(self, ns: str) -> str:
        return ns if ns in BUILTIN_NAMESPACES else self.name("Namespace", ns, "ns")

    def node(self, name: str) -> str:
        return self.name("Node", name, "node")

    def priority_class(self, name: str) -> str:
        return name if name.startswith("system-") else self.name("PriorityClass", name, "priority")

    def storage_class(self, name: str) -> str:
        return name if name == "" else self.name("StorageClass", name, "storage")

    def pool(self, name: str) -> str:
        """A DRA pool: node-local pools are named after their node (the dump lists nodes first)."""
        if name in self._maps.get("Node", {}):
            return self.node(name)
        return self.name("pool", name)

    def image(self, name: str) -> str:
        return self.name("image", name, "image")

    def obj_name(self, kind: str, namespace: str | None, name: str) -> str:
        if kind in ("Node", "CSINode"):              # a CSINode is named after its node
            return self.node(name)
        if kind == "Namespace":
            return self.namespace(name)
        if kind == "PriorityClass":
            return self.priority_class(name)
        if kind == "StorageClass":
            return self.storage_class(name)
        if kind in (PROFILE_KIND, "DeviceClass"):
            return name                     # configuration, not workload: profiles and classes keep their names
        return self.name(f"{kind}/{namespace or ''}", name, kind.lower())

    def apply(self, objects: list[Obj]) -> list[Obj]:
        return [self._one(copy.deepcopy(o)) for o in objects]

    def _one(self, obj: Obj) -> Obj:
        kind = str(obj.get("kind"))
        meta = obj.setdefault("metadata", {})
        ns = meta.get("namespace")
        meta.pop("generateName", None)
        if ns:
            meta["namespace"] = self.namespace(ns)
        if meta.get("name"):
            meta["name"] = self.obj_name(kind, ns, meta["name"])
        for ref in meta.get("ownerReferences") or []:
            ref["name"] = self.obj_name(str(ref.get("kind")), None if ref.get("kind") == "Node" else ns,
                                        str(ref.get("name")))
        self._labels(meta.get("labels"), ns)
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        rename = _ANONYMIZE_BY_KIND.get(kind)
        if rename is None and kind in WORKLOADS:
            rename = Anonymizer._workload
        if rename is not None:
            rename(self, kind, obj, spec, status, ns)
        return obj

    # --- per kind: rename the names in ``obj`` (its ``spec`` and ``status`` given) ---------------
    def _pod(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        self._pod_spec(spec, ns)
        if status.get("nominatedNodeName"):
            status["nominatedNodeName"] = self.node(status["nominatedNodeName"])
        for entry in [*(status.get("resourceClaimStatuses") or []),
                      *([status["extendedResourceClaimStatus"]] if status.get("extendedResourceClaimStatus")
                        else [])]:
            if entry.get("resourceClaimName"):
                entry["resourceClaimName"] = self.obj_name("ResourceClaim", ns, entry["resourceClaimName"])

    def _resource_slice(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        if spec.get("nodeName"):
            spec["nodeName"] = self.node(spec["nodeName"])
        self._node_affinity(spec.get("nodeSelector"))
        pool = spec.get("pool") or {}
        if pool.get("name"):
            pool["name"] = self.pool(pool["name"])

    def _resource_claim(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        allocation = status.get("allocation") or {}
        for result in (allocation.get("devices") or {}).get("results") or []:
            if result.get("pool"):
                result["pool"] = self.pool(result["pool"])
        self._node_affinity(allocation.get("nodeSelector"))
        for ref in status.get("reservedFor") or []:
            if ref.get("name") and ref.get("resource") == "pods":
                ref["name"] = self.obj_name("Pod", ns, ref["name"])

    def _workload(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        template = spec.get("template") or {}
        self._labels((template.get("metadata") or {}).get("labels"), ns)
        if kind == "ReplicationController":
            self._labels(spec.get("selector"), ns)
        else:
            self._selector(spec.get("selector"), ns)
        self._pod_spec(template.get("spec") or {}, ns)
        for claim in spec.get("volumeClaimTemplates") or []:
            self._claim_spec(claim.get("spec") or {})

    def _pod_group(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        ref = spec.get("workloadRef") or {}
        if ref.get("workloadName"):
            ref["workloadName"] = self.obj_name("Workload", ns, ref["workloadName"])
        if spec.get("priorityClassName"):
            spec["priorityClassName"] = self.priority_class(spec["priorityClassName"])

    def _workload_api(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        """A ``scheduling.k8s.io`` Workload: its controller's name and its templates' priority classes
        (template names stay: they are the workload's own vocabulary, like container names)."""
        ref = spec.get("controllerRef") or {}
        if ref.get("name") and ref.get("kind"):
            ref["name"] = self.obj_name(str(ref["kind"]), ns, ref["name"])
        for t in spec.get("podGroupTemplates") or []:
            if t.get("priorityClassName"):
                t["priorityClassName"] = self.priority_class(t["priorityClassName"])

    def _node_obj(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        for image in status.get("images") or []:
            image["names"] = [self.image(n) for n in image.get("names") or []]
        for f in ("addresses", "nodeInfo", "daemonEndpoints"):
            status.pop(f, None)
        for f in ("providerID", "podCIDR", "podCIDRs", "externalID"):
            spec.pop(f, None)

    def _pvc(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        self._claim_spec(spec)

    def _pv(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        if spec.get("storageClassName"):
            spec["storageClassName"] = self.storage_class(spec["storageClassName"])
        ref = spec.get("claimRef")
        if ref and ref.get("name"):
            ref_ns = ref.get("namespace")
            ref["name"] = self.obj_name("PersistentVolumeClaim", ref_ns, ref["name"])
            if ref_ns:
                ref["namespace"] = self.namespace(ref_ns)
        self._node_affinity((spec.get("nodeAffinity") or {}).get("required"))

    def _csi_node(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        for driver in spec.get("drivers") or []:
            if driver.get("nodeID"):
                driver["nodeID"] = self.name("nodeID", str(driver["nodeID"]), "node-id")

    def _csi_capacity(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        if obj.get("storageClassName"):
            obj["storageClassName"] = self.storage_class(obj["storageClassName"])
        topology = obj.get("nodeTopology") or {}
        self._selector(topology, ns)

    def _pdb(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        self._selector(spec.get("selector"), ns)

    def _service(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        self._labels(spec.get("selector"), ns)

    def _storage_class_obj(self, kind: str, obj: Obj, spec: Obj, status: Obj, ns: str | None) -> None:
        for term in obj.get("allowedTopologies") or []:
            for expr in term.get("matchLabelExpressions") or []:
                if expr.get("key") == HOSTNAME_LABEL:
                    expr["values"] = [self.node(v) for v in expr.get("values") or []]

    def _label_value(self, key: str, value: str, ns: str | None) -> str:
        if key == HOSTNAME_LABEL:
            return self.node(value)
        if key == NAMESPACE_NAME_LABEL:
            return self.namespace(value)
        if key in NAME_LABELS:
            return self.obj_name(NAME_LABELS[key], ns, value)
        return value

    def _labels(self, labels: Obj | None, ns: str | None) -> None:
        """Label values that are names, renamed as those names are (``NAME_LABELS``)."""
        if not labels:
            return
        for key, value in labels.items():
            if isinstance(value, str):
                labels[key] = self._label_value(key, value, ns)

    def _selector(self, selector: Obj | None, ns: str | None) -> None:
        if not selector:
            return
        self._labels(selector.get("matchLabels"), ns)
        for expr in selector.get("matchExpressions") or []:
            key = str(expr.get("key"))
            expr["values"] = [self._label_value(key, str(v), ns) for v in expr.get("values") or []]

    def _claim_spec(self, spec: Obj) -> None:
        if spec.get("storageClassName"):
            spec["storageClassName"] = self.storage_class(spec["storageClassName"])
        if spec.get("volumeName"):
            spec["volumeName"] = self.obj_name("PersistentVolume", None, spec["volumeName"])

    def _node_affinity(self, selector: Obj | None) -> None:
        for term in (selector or {}).get("nodeSelectorTerms") or []:
            self._node_term(term)

    def _node_term(self, term: Obj) -> None:
        for expr in term.get("matchFields") or []:
            if expr.get("key") == "metadata.name":
                expr["values"] = [self.node(v) for v in expr.get("values") or []]
        for expr in term.get("matchExpressions") or []:
            if expr.get("key") == HOSTNAME_LABEL:
                expr["values"] = [self.node(v) for v in expr.get("values") or []]

    def _pod_spec(self, spec: Obj, ns: str | None) -> None:
        if spec.get("nodeName"):
            spec["nodeName"] = self.node(spec["nodeName"])
        if spec.get("priorityClassName"):
            spec["priorityClassName"] = self.priority_class(spec["priorityClassName"])
        selector = spec.get("nodeSelector") or {}
        if HOSTNAME_LABEL in selector:
            selector[HOSTNAME_LABEL] = self.node(str(selector[HOSTNAME_LABEL]))
        for key in ("containers", "initContainers", "ephemeralContainers"):
            for c in spec.get(key) or []:
                if c.get("image"):
                    c["image"] = self.image(c["image"])
        self._pod_claims(spec, ns)
        group = spec.get("schedulingGroup") or {}
        if group.get("podGroupName"):
            group["podGroupName"] = self.obj_name("PodGroup", ns, group["podGroupName"])
        self._pod_affinity(spec.get("affinity") or {}, ns)
        for constraint in spec.get("topologySpreadConstraints") or []:
            self._selector(constraint.get("labelSelector"), ns)

    def _pod_claims(self, spec: Obj, ns: str | None) -> None:
        """A pod's resource claims and volume claims (templates included)."""
        for entry in spec.get("resourceClaims") or []:
            for key, kind in (("resourceClaimName", "ResourceClaim"),
                              ("resourceClaimTemplateName", "ResourceClaimTemplate")):
                if entry.get(key):
                    entry[key] = self.obj_name(kind, ns, entry[key])
        for v in spec.get("volumes") or []:
            claim = v.get("persistentVolumeClaim")
            if claim and claim.get("claimName"):
                claim["claimName"] = self.obj_name("PersistentVolumeClaim", ns, claim["claimName"])
            template = (v.get("ephemeral") or {}).get("volumeClaimTemplate")
            if template:
                self._claim_spec(template.get("spec") or {})

    def _pod_affinity(self, affinity: Obj, ns: str | None) -> None:
        """Node affinity's node names, pod (anti-)affinity terms' namespaces and selectors."""
        node_affinity = affinity.get("nodeAffinity") or {}
        self._node_affinity(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution"))
        for pref in node_affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or []:
            self._node_term(pref.get("preference") or {})
        rename: Callable[[str], str] = self.namespace
        for which in ("podAffinity", "podAntiAffinity"):
            group = affinity.get(which) or {}
            terms = list(group.get("requiredDuringSchedulingIgnoredDuringExecution") or [])
            terms += [w.get("podAffinityTerm") or {} for w in
                      group.get("preferredDuringSchedulingIgnoredDuringExecution") or []]
            for term in terms:
                if term.get("namespaces"):
                    term["namespaces"] = [rename(n) for n in term["namespaces"]]
                self._selector(term.get("labelSelector"), ns)


# Per kind: the names Anonymizer renames beyond metadata (workloads: Anonymizer._workload).
_ANONYMIZE_BY_KIND: dict[str, Callable[[Anonymizer, str, Obj, Obj, Obj, str | None], None]] = {
    "Pod": Anonymizer._pod, "ResourceSlice": Anonymizer._resource_slice,
    "ResourceClaim": Anonymizer._resource_claim, "Node": Anonymizer._node_obj,
    "PersistentVolumeClaim": Anonymizer._pvc, "PersistentVolume": Anonymizer._pv, "CSINode": Anonymizer._csi_node,
    "CSIStorageCapacity": Anonymizer._csi_capacity, "PodDisruptionBudget": Anonymizer._pdb,
    "Service": Anonymizer._service, "StorageClass": Anonymizer._storage_class_obj,
    "PodGroup": Anonymizer._pod_group, "Workload": Anonymizer._workload_api,
}
