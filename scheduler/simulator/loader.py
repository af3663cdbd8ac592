"""Loading a file or a dump into the server: the one path of ``cluster --load`` and ``simulate -f``.

A dump (``kopf-scheduler dump``, ``kubectl get -A -o yaml``, ``kwokctl snapshot export``) is restored the
way a kubectl user expects it to come back, whatever order it lists its objects in:

- **Kinds in dependency order** (``LOAD_RANK``, a stable sort: objects of one rank keep their input order).
  PriorityClasses and namespaces first (pod admission reads both: the Priority plugin refuses a pod whose
  class is missing with 403), then CRDs (their custom resources come later, with the other kinds), the
  cluster-scoped classes (storage, DRA, runtime), what pods name (ServiceAccounts, ConfigMaps, Secrets)
  and what admits them (LimitRanges, ResourceQuotas), then volumes and claims (and Workloads and
  their PodGroups), everything else (nodes,
  Services, PDBs, custom resources), the workload controllers, and pods last.
- **Owners keep their pods.** A well-formed uid in the dump is kept (a restore, not a re-create), so the
  ``ownerReferences`` of a ReplicaSet's, DaemonSet's, StatefulSet's or Job's pods, a Job's
  ``controller-uid`` selector, a volume's ``claimRef`` and a claim's ``reservedFor`` still name their
  objects: the controllers adopt and count the dumped pods instead of creating new ones, and the garbage
  collector sees live owners. A uid that is malformed or already used in this load gets a fresh one, and
  the references to it are rewritten (owners are created before their dependents for that: an object
  whose owner comes later in the input waits for it). A reference to an owner that is not in the input
  is dropped, so the garbage collector does not delete the restored object as an orphan.
- **What the cluster has from its start** (the built-in namespaces, the ``system-`` PriorityClasses) is
  no refusal when the dump lists it again.
- **CRDs on demand.** ``crds`` are installed before the input when the input holds objects of their kind
  and not the CRD itself (``cluster --load`` of a dump of SchedulingProfiles).

Everything happens in one turn of the server's loop, so its controllers see the whole input at once,
never a workload whose pods are not loaded yet. Each object goes through ``ApiServer.load``: validated
and admitted as a create, its status kept (a terminal pod stays terminal, a Job stays complete).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError

if TYPE_CHECKING:
    from scheduler.simulator.server import ApiServer

__all__ = ["BUILTIN_NAMESPACES", "LOAD_RANK", "Loaded", "load", "load_rank"]

Obj = dict[str, Any]
OwnerKey = tuple[str, str, str, str]         # apiVersion, kind, name, uid

# What a simulated cluster holds from its start: creating these again from a dump is no refusal.
BUILTIN_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})

_CLASSES = 3
_OTHER = 7
# (API group, kind) → rank; kinds not listed rank _OTHER.
LOAD_RANK: dict[tuple[str, str], int] = {
    ("scheduling.k8s.io", "PriorityClass"): 0,
    ("", "Namespace"): 1,
    ("apiextensions.k8s.io", "CustomResourceDefinition"): 2,
    **{("storage.k8s.io", k): _CLASSES for k in ("StorageClass", "CSIDriver", "CSINode", "CSIStorageCapacity",
                                                  "VolumeAttributesClass")},
    ("resource.k8s.io", "DeviceClass"): _CLASSES,
    ("node.k8s.io", "RuntimeClass"): _CLASSES,
    ("networking.k8s.io", "IngressClass"): _CLASSES,
    **{("", k): 4 for k in ("ServiceAccount", "ConfigMap", "Secret", "LimitRange", "ResourceQuota")},
    # volumes and what drivers publish, then the claims on them (a pod never waits for its claim to be
    # created from a template loaded after it; the DefaultStorageClass plugin reads the classes)
    ("", "PersistentVolume"): 5,
    ("resource.k8s.io", "ResourceSlice"): 5,
    # a DeviceTaintRule before the claims: no pod is placed before the rule that taints its device
    ("resource.k8s.io", "DeviceTaintRule"): 5,
    # a PodGroup names its Workload, and pods name their PodGroup (spec.schedulingGroup): the scheduler
    # never sees a member whose group is not there yet
    ("scheduling.k8s.io", "Workload"): 5,
    ("scheduling.k8s.io", "PodGroup"): 6,
    ("", "PersistentVolumeClaim"): 6,
    ("resource.k8s.io", "ResourceClaimTemplate"): 6,
    ("resource.k8s.io", "ResourceClaim"): 6,
    **{("apps", k): 8 for k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")},
    **{("batch", k): 8 for k in ("Job", "CronJob")},
    ("", "ReplicationController"): 8,
    ("", "Pod"): 9,
}
# The uid apiserver generates (a UUID); any other string in a dump is not kept.
_UID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


@dataclass
class Loaded:
    """What ``load`` created (as stored, in load order) and what the server refused (with the input object)."""
    objects: list[Obj] = field(default_factory=list)
    rejected: list[tuple[Obj, ApiError]] = field(default_factory=list)


def load_rank(obj: Obj) -> int:
    api_version = str(obj.get("apiVersion") or "")
    group = api_version.rpartition("/")[0]
    return LOAD_RANK.get((group, str(obj.get("kind") or "")), _OTHER)


def _owner_key(api_version: Any, kind: Any, name: Any, uid: Any) -> OwnerKey:
    return str(api_version), str(kind), str(name), str(uid)


def load(server: ApiServer, objects: Iterable[Obj], *, crds: Iterable[Obj] = ()) -> Loaded:
    """Load ``objects`` (see the module's docstring); the input objects are not changed. Call it on the
    server's loop (``SimulatedCluster.call``)."""
    return _Load(server).run(sorted(objects, key=load_rank), list(crds))


class _Load:
    def __init__(self, server: ApiServer) -> None:
        self.server = server
        self.out = Loaded()
        self.uids: dict[str, str] = {}              # a uid in the input → the loaded object's uid
        self.used: set[str] = set()                 # uids given out in this load
        self.in_input: set[OwnerKey] = set()
        self.created: dict[OwnerKey, str] = {}
        self.failed: set[OwnerKey] = set()
        self.waiting: dict[OwnerKey, list[Obj]] = {}

    def run(self, objects: list[Obj], crds: list[Obj]) -> Loaded:
        self._install(crds, objects)
        self.in_input = {_owner_key(o.get("apiVersion"), o.get("kind"), (o.get("metadata") or {}).get("name"),
                                    (o.get("metadata") or {}).get("uid"))
                         for o in objects if (o.get("metadata") or {}).get("uid")}
        for obj in objects:
            self._place(obj)
        if any(old != new for old, new in self.uids.items()):
            self._rebind()
            self._rereserve()
        return self.out

    def _install(self, crds: list[Obj], objects: list[Obj]) -> None:
        """The given CRDs whose kind the input uses, unless the input or the server has them already."""
        listed = {str((o.get("metadata") or {}).get("name")) for o in objects
                  if o.get("kind") == "CustomResourceDefinition"}
        crt = self.server.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        for crd in crds:
            spec, name = crd.get("spec") or {}, str((crd.get("metadata") or {}).get("name"))
            kind = (spec.get("names") or {}).get("kind")
            used = any(o.get("kind") == kind and str(o.get("apiVersion", "")).startswith(f"{spec.get('group')}/")
                       for o in objects)
            if used and name not in listed and self.server.store.get(crt, "", name) is None:
                try:
                    self.server.load(crd)               # not the input's: not among ``objects``
                except ApiError as e:
                    self.out.rejected.append((crd, e))

    def _place(self, obj: Obj) -> None:
        """Create ``obj`` once the owners it has in the input exist, with its references to them rewritten;
        then the objects that waited for it."""
        meta = obj.get("metadata") or {}
        refs = meta.get("ownerReferences") or []
        for r in refs:
            k = _owner_key(r.get("apiVersion"), r.get("kind"), r.get("name"), r.get("uid"))
            if k in self.in_input and k not in self.created and k not in self.failed:
                self.waiting.setdefault(k, []).append(obj)
                return
        if refs:
            kept = [{**r, "uid": self.created[k]} for r in refs
                    if (k := _owner_key(r.get("apiVersion"), r.get("kind"), r.get("name"), r.get("uid")))
                    in self.created]
            new_meta = {**meta, "ownerReferences": kept}
            if not kept:
                del new_meta["ownerReferences"]
            obj = {**obj, "metadata": new_meta}
        uid = self._create(obj)
        if meta.get("uid"):
            key = _owner_key(obj.get("apiVersion"), obj.get("kind"), meta.get("name"), meta.get("uid"))
            if uid is None:
                self.failed.add(key)
            else:
                self.created[key] = uid
            for dependent in self.waiting.pop(key, []):
                self._place(dependent)

    def _create(self, obj: Obj) -> str | None:
        """The new object's uid ("" for one the cluster had from its start), or None when it was refused."""
        meta = obj.get("metadata") or {}
        kind, name = obj.get("kind"), str(meta.get("name") or meta.get("generateName") or "")
        old = str(meta.get("uid") or "")
        keep = old if _UID.match(old) and old not in self.used else None
        try:
            result = self.server.load(obj, uid=keep)
        except ApiError as e:
            if e.code == 409 and ((kind == "Namespace" and name in BUILTIN_NAMESPACES)
                                  or (kind == "PriorityClass" and name.startswith("system-"))):
                return ""               # the simulated cluster has it from its start, as a real one does
            self.out.rejected.append((obj, e))
            return None
        self.out.objects.append(result)
        new = str(result["metadata"]["uid"])
        self.used.add(new)
        if old:
            self.uids[old] = new
        return new

    def _rebind(self) -> None:
        """Point the loaded volumes' ``claimRef`` at their claims' new uids (still in the loading turn, so the
        PV controller sees the binding the input had, not a volume whose claim was replaced)."""
        rt = self.server.rt("", "v1", "persistentvolumes")
        for pv in list(self.server.store.bucket(rt.store).objects.values()):
            ref = (pv.get("spec") or {}).get("claimRef")
            uid = str(ref.get("uid") or "") if isinstance(ref, dict) else ""
            if isinstance(ref, dict) and self.uids.get(uid, uid) != uid:
                self.server.write(rt, pv, {**pv, "spec": {**pv["spec"], "claimRef": {**ref, "uid": self.uids[uid]}}})

    def _rereserve(self) -> None:
        """Point the loaded ResourceClaims' ``status.reservedFor`` at their pods' new uids, in the loading turn
        (the resourceclaim controller would otherwise see replaced pods, drop them and deallocate)."""
        rt = self.server.rt("resource.k8s.io", "v1", "resourceclaims")
        for claim in list(self.server.store.bucket(rt.store).objects.values()):
            reserved = (claim.get("status") or {}).get("reservedFor") or []
            fixed = [{**r, "uid": self.uids.get(str(r.get("uid") or ""), r.get("uid"))} if isinstance(r, dict) else r
                     for r in reserved]
            if fixed != reserved:
                self.server.write(rt, claim, {**claim, "status": {**claim["status"], "reservedFor": fixed}})
