"""The simulated controller manager's volume controllers: a minimal PersistentVolume controller, an external
provisioner, the ephemeral volume controller, and the PV/PVC protection controllers.

Each stands for its upstream loop, reduced to what a scheduler can observe:

- **PersistentVolume controller** (``pkg/controller/volume/persistentvolume/pv_controller.go``):
  ``syncClaim`` and ``syncVolume``.

  - An unbound claim is bound to the smallest Available volume that fits
    (``findBestMatchForClaim``): same class, a ``storage`` capacity at least the request, the same
    ``volumeMode``, every requested access mode, the claim's label selector, not being deleted and not
    claimed by another. A volume pre-bound to the claim (``spec.claimRef`` naming it, as the
    scheduler's PreBind or a provisioner writes it) wins whatever its size. A claim of a
    ``WaitForFirstConsumer`` class is bound only to a pre-bound volume: the scheduler picks the node.
  - ``bind``: the volume's ``claimRef`` (apiVersion, kind, namespace, name, uid, resourceVersion; with
    ``pv.kubernetes.io/bound-by-controller: "yes"`` when the controller set it) and phase Bound; the
    claim's ``volumeName`` (``bound-by-controller`` when the controller set it), ``bind-completed``
    and status Bound with the volume's access modes and capacity. Four writes, as upstream makes them.
  - No volume: a ``WaitForFirstConsumer`` claim without ``volume.kubernetes.io/selected-node`` waits
    (event ``WaitForFirstConsumer``, or ``WaitForPodScheduled`` naming the unscheduled pods using it);
    a claim with a class is provisioned (``provisionClaim``: the
    ``volume.kubernetes.io/storage-provisioner`` annotations and ``ExternalProvisioning``); a claim
    without a class gets ``FailedBinding``. A claim without ``storageClassName`` gets the default
    class once there is one (retroactive default StorageClass assignment).
  - A volume whose claim is gone (or was replaced: another uid) is Released, then reclaimed by its
    policy: Retain keeps it; Delete deletes a provisioned one (``pv.kubernetes.io/provisioned-by``) and
    fails a static one (``VolumeFailedDelete``), as no in-tree deleter exists here; Recycle makes it
    Available again.
- **External provisioner** (``sig-storage-lib-external-provisioner`` and csi-provisioner, the provisioner
  of every class but ``kubernetes.io/no-provisioner``, which has no plugin: ``ProvisioningFailed``):
  ``provision_seconds`` after the claim asked (events ``Provisioning``, then ``ProvisioningSucceeded``)
  it creates ``pvc-<claim uid>`` with the request as capacity, the class's reclaim policy and mount
  options, the claim's access modes and volume mode, a ``claimRef`` to the claim, and the source: ``csi``
  (driver = the provisioner) when a CSIDriver of that name exists, else ``hostPath``. With a selected
  node its node affinity is the node's values of the driver's ``topologyKeys`` (its CSINode entry), else
  the node's ``topology.kubernetes.io/zone``, else its ``kubernetes.io/hostname``; a node-local
  provisioner (its name has ``local`` or ``hostpath``) always pins the hostname. A node outside the
  class's ``allowedTopologies``, or a node that does not exist, fails (``ProvisioningFailed``) and the
  ``selected-node`` annotation is removed so the scheduler tries again (``ProvisioningReschedule``);
  a claim whose ``selected-node`` was removed meanwhile is not provisioned. ``provision_seconds < 0``:
  nothing is ever provisioned (to exercise the scheduler's PreBind timeout).
- **Ephemeral volumes** (``pkg/controller/volume/ephemeral``): a pod's generic ephemeral volume gets its
  claim ``<pod>-<volume>`` from the volume's template, owned (controller) by the pod.
- **Protection** (``pkg/controller/volume/pvcprotection``, ``pvprotection``): a deleted claim keeps its
  ``kubernetes.io/pvc-protection`` finalizer while a non-terminal pod uses it; a deleted volume keeps
  ``kubernetes.io/pv-protection`` while it is Bound.

Events are posted as upstream's recorders post them (``persistentvolume-controller``, or
``<provisioner>_simulated`` for the provisioner); a repeated one bumps its ``count``. Like the workload
controllers, these react to store events (cheap marks) and sync on the next loop turn.
"""

from __future__ import annotations

import contextlib
import json
import logging
import uuid
from collections.abc import Iterable
from typing import Any

from scheduler.errors import QuantityError
from scheduler.quantity import value as quantity_value
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers, without_finalizer
from scheduler.simulator.interfaces import ClusterWriter, Writer
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.storage import PROTECTION_PV, PROTECTION_PVC, claim_class, default_class, volume_class
from scheduler.simulator.selectors import stored_label_selector
from scheduler.simulator.store import Event

__all__ = ["ANN_BIND_COMPLETED", "ANN_BOUND_BY_CONTROLLER", "ANN_PROVISIONED_BY", "ANN_SELECTED_NODE",
           "ANN_STORAGE_PROVISIONER", "NO_PROVISIONER", "VolumeController"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]
ClaimKey = tuple[str, str]

PVS, PVCS, CLASSES = "/persistentvolumes", "/persistentvolumeclaims", "storage.k8s.io/storageclasses"
ANN_BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
ANN_BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
ANN_PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
ANN_SELECTED_NODE = "volume.kubernetes.io/selected-node"
ANN_STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
ANN_BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
NO_PROVISIONER = "kubernetes.io/no-provisioner"
CONTROLLER = "persistentvolume-controller"
ZONE, HOSTNAME = "topology.kubernetes.io/zone", "kubernetes.io/hostname"
HOST_PATH_ROOT = "/var/lib/kopf-scheduler-sim/volumes"


def _ann(obj: Obj) -> dict[str, str]:
    return (obj.get("metadata") or {}).get("annotations") or {}


def _storage(raw: Any) -> int:
    try:
        return quantity_value(raw) if raw is not None else 0
    except QuantityError:
        return 0


def _request(claim: Obj) -> int:
    return _storage((((claim.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage"))


def _capacity(pv: Obj) -> int:
    return _storage(((pv.get("spec") or {}).get("capacity") or {}).get("storage"))


def _mode(obj: Obj) -> str:
    return str((obj.get("spec") or {}).get("volumeMode") or "Filesystem")


def _key(claim: Obj) -> ClaimKey:
    return claim["metadata"].get("namespace", ""), claim["metadata"]["name"]


def _bound_to(pv: Obj, claim: Obj) -> bool:
    """``IsVolumeBoundToClaim``: the claimRef names the claim, and its uid (if any) is the claim's."""
    ref = (pv.get("spec") or {}).get("claimRef")
    if not isinstance(ref, dict):
        return False
    if (ref.get("namespace"), ref.get("name")) != _key(claim):
        return False
    return not ref.get("uid") or ref.get("uid") == claim["metadata"].get("uid")


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def pod_claims(pod: Obj) -> list[str]:
    """The claims a pod uses: its ``persistentVolumeClaim`` volumes, and its generic ephemeral volumes'
    ``<pod>-<volume>`` claims."""
    out = []
    for v in (pod.get("spec") or {}).get("volumes") or []:
        if not isinstance(v, dict):
            continue
        if isinstance(v.get("persistentVolumeClaim"), dict):
            out.append(str(v["persistentVolumeClaim"].get("claimName", "")))
        elif isinstance(v.get("ephemeral"), dict):
            out.append(f"{pod['metadata']['name']}-{v.get('name', '')}")
    return out


class _VolumeBase(Controller):
    """The volume controllers' shared state and their writes: annotations, phases, Events."""


    def __init__(self, api: ClusterWriter, timers: Timers, *, provision_seconds: float = 0.2) -> None:
        super().__init__(api, timers)
        self.provision_seconds = provision_seconds
        self.claims: set[ClaimKey] = set()
        self.volumes: set[str] = set()
        self.pods: set[ClaimKey] = set()                  # pods with generic ephemeral volumes to serve
        self.by_claim: dict[ClaimKey, set[str]] = {}      # claimRef → the volumes naming it
        self.by_class: dict[str, set[str]] = {}           # class → its volumes
        self.users: dict[ClaimKey, set[str]] = {}         # claim → the pods using it
        # Unbound claims that a new or released volume could serve, by class and by the volumeName they ask
        # for (upstream finds them on its periodic resync; here a volume event marks them at once).
        self.waiting: dict[str, set[ClaimKey]] = {}
        self.provisioning: set[str] = set()               # claim uids with a provisioning timer
        self.events: dict[tuple[str, str, str, str], str] = {}   # (uid, type, reason, message) → event name

    def _guard(self, fn: Any, obj: Obj) -> None:
        try:
            fn(obj)
        except ApiError as e:
            log.warning("simulated persistentvolume controller: %s %s: %s", obj.get("kind"),
                        obj["metadata"]["name"], e.message)

    def _get_claim(self, key: ClaimKey) -> Obj | None:
        return self.api.store.bucket(PVCS).objects.get(key)

    def _get_volume(self, name: str) -> Obj | None:
        return self.api.store.bucket(PVS).objects.get(("", name))

    def _class(self, name: str) -> Obj | None:
        return self.api.store.bucket(CLASSES).objects.get(("", name)) if name else None

    def _write(self, store: str, old: Obj, new: Obj) -> Obj:
        rt = self.api.rt("", "v1", store.lstrip("/"))
        return self.api.write(rt, old, new)

    def _set_annotations(self, store: str, obj: Obj, add: dict[str, str], drop: Iterable[str] = ()) -> Obj:
        ann = {k: v for k, v in _ann(obj).items() if k not in set(drop)}
        ann.update(add)
        if ann == _ann(obj):
            return obj
        meta = {**obj["metadata"], "annotations": ann}
        if not ann:
            meta.pop("annotations")
        return self._write(store, obj, {**obj, "metadata": meta})

    def _set_phase(self, store: str, obj: Obj, phase: str, extra: Obj | None = None) -> Obj:
        status = dict(obj.get("status") or {})
        want = {"phase": phase, **(extra or {})}
        if all(status.get(k) == v for k, v in want.items()):
            return obj
        status.update(want)
        if store == PVS and status.get("phase") != (obj.get("status") or {}).get("phase"):
            status["lastPhaseTransitionTime"] = now_iso()
        return self._write(store, obj, {**obj, "status": status})

    def event(self, obj: Obj, type_: str, reason: str, message: str, component: str = CONTROLLER) -> None:
        """Post an Event about ``obj`` as an event recorder does (a repeat bumps ``count``)."""
        meta = obj["metadata"]
        rt = self.api.rt("", "v1", "events")
        ns = meta.get("namespace") or "default"
        key = (str(meta.get("uid", "")), type_, reason, message)
        ts = now_iso()
        name = self.events.get(key)
        if name is not None and (old := self.api.store.get(rt, ns, name)) is not None:
            self.api.write(rt, old, {**old, "count": int(old.get("count") or 1) + 1, "lastTimestamp": ts})
            return
        name = f"{meta['name']}.{uuid.uuid4().hex[:16]}"
        if len(self.events) > 10_000:            # the recorder's cache is bounded too
            self.events.clear()
        self.events[key] = name
        with contextlib.suppress(ApiError):
            self.api.create(rt, ns, {
                "apiVersion": "v1", "kind": "Event", "metadata": {"name": name, "namespace": ns},
                "involvedObject": {"kind": obj.get("kind"), "apiVersion": obj.get("apiVersion"),
                                   "name": meta["name"], "uid": meta.get("uid"),
                                   "resourceVersion": meta.get("resourceVersion"),
                                   **({"namespace": meta["namespace"]} if meta.get("namespace") else {})},
                "reason": reason, "message": message, "type": type_, "source": {"component": component},
                "firstTimestamp": ts, "lastTimestamp": ts, "count": 1, "reportingComponent": component,
                "reportingInstance": ""})


class _Provisioner(_VolumeBase):
    """The simulated external provisioner (``provisionClaimOperation``): a PV for a claim whose class
    names a provisioner, after ``provision_seconds``, on the selected node for a local class."""


    def _provision_claim(self, claim: Obj, sc: Obj | None) -> None:
        """``provisionClaim``: the claim names its provisioner; the external provisioner takes over."""
        name = claim_class(claim)
        if sc is None:
            self.event(claim, "Warning", "ProvisioningFailed", f'storageclass.storage.k8s.io "{name}" not found')
            self._set_phase(PVCS, claim, "Pending")
            return
        provisioner = str(sc.get("provisioner", ""))
        if provisioner == NO_PROVISIONER:
            self.event(claim, "Warning", "ProvisioningFailed", f"no volume plugin matched name: {provisioner}")
            self._set_phase(PVCS, claim, "Pending")
            return
        claim = self._set_annotations(PVCS, claim, {ANN_BETA_STORAGE_PROVISIONER: provisioner,
                                                    ANN_STORAGE_PROVISIONER: provisioner})
        self.event(claim, "Normal", "ExternalProvisioning",
                   f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or "
                   "manually by the system administrator. If volume creation is delayed, please verify that the "
                   "provisioner is running and correctly registered.")
        claim = self._set_phase(PVCS, claim, "Pending")
        uid = str(claim["metadata"].get("uid"))
        if self.provision_seconds < 0 or uid in self.provisioning:
            return
        self.provisioning.add(uid)
        self.event(claim, "Normal", "Provisioning", f'External provisioner is provisioning volume for claim '
                                                    f'"{claim["metadata"].get("namespace", "")}/'
                                                    f'{claim["metadata"]["name"]}"', f"{provisioner}_simulated")
        key = _key(claim)
        self.timers.later(self.provision_seconds, lambda: self._provision(key, uid))

    def _provision(self, key: ClaimKey, uid: str) -> None:
        self.provisioning.discard(uid)
        claim = self._get_claim(key)
        if claim is None or claim["metadata"].get("uid") != uid or claim["metadata"].get("deletionTimestamp") \
                or (claim.get("spec") or {}).get("volumeName"):
            return
        sc = self._class(claim_class(claim))
        if sc is None:
            return
        provisioner = str(sc.get("provisioner", ""))
        component = f"{provisioner}_simulated"
        delay = sc.get("volumeBindingMode") == "WaitForFirstConsumer"
        node_name = _ann(claim).get(ANN_SELECTED_NODE)
        if delay and not node_name:
            return                                   # the scheduler took its choice back
        pv_name = f"pvc-{uid}"
        if self._get_volume(pv_name) is not None:
            return
        node = self.api.store.bucket("/nodes").objects.get(("", node_name)) if node_name else None
        if node_name and node is None:
            self._reschedule(claim, component, f'failed to get target node: node "{node_name}" not found')
            return
        terms = sc.get("allowedTopologies") or []
        if node is not None and terms and not self._in_topology(claim, sc, component, node, terms):
            return
        pv = self._provisioned_volume(claim, sc, pv_name, node, terms)
        try:
            self.api.create(self.api.rt("", "v1", "persistentvolumes"), "", pv, fresh=True,
                            writer=Writer(provisioner.replace("/", "-")[:128] or "provisioner"))
        except ApiError as e:
            self.event(claim, "Warning", "ProvisioningFailed",
                       f'failed to provision volume with StorageClass "{sc["metadata"]["name"]}": {e.message}',
                       component)
            return
        self.event(claim, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}", component)

    def _in_topology(self, claim: Obj, sc: Obj, component: str, node: Obj, terms: list[Obj]) -> bool:
        """Whether the selected node is in the class's allowed topologies; if not, the claim is handed back
        to the scheduler."""
        labels: dict[str, str] = node.get("metadata", {}).get("labels") or {}
        if any(_term_matches(t, labels) for t in terms):
            return True
        self._reschedule(claim, component, f'failed to provision volume with StorageClass '
                         f'"{sc["metadata"]["name"]}": error generating accessibility requirements: selected '
                         f'node "{node["metadata"]["name"]}" topology is not in allowed topologies: '
                         f'{_topology_text(terms)}')
        return False

    def _provisioned_volume(self, claim: Obj, sc: Obj, pv_name: str, node: Obj | None, terms: list[Obj]) -> Obj:
        """The PersistentVolume provisioned for ``claim``: a CSI volume where the driver is registered
        (a hostPath one for a local provisioner or none), bound to the claim, pinned to the selected
        node or the class's allowed topologies."""
        provisioner = str(sc.get("provisioner", ""))
        uid = claim["metadata"]["uid"]
        spec = claim.get("spec") or {}
        driver = self.api.store.bucket("storage.k8s.io/csidrivers").objects.get(("", provisioner))
        local = "local" in provisioner.lower() or "hostpath" in provisioner.lower()
        source: Obj
        if driver is not None and not local:
            source = {"csi": {"driver": provisioner, "volumeHandle": pv_name,
                              **({"fsType": "ext4"} if _mode(claim) == "Filesystem" else {})}}
        else:
            source = {"hostPath": {"path": f"{HOST_PATH_ROOT}/{pv_name}", "type": "DirectoryOrCreate"}}
        affinity = None
        if node is not None:
            affinity = self._affinity(node, provisioner, local)
        elif terms:
            affinity = {"required": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": e.get("key"), "operator": "In", "values": list(e.get("values") or [])}
                                      for e in t.get("matchLabelExpressions") or []]} for t in terms]}}
        meta = claim["metadata"]
        pv: Obj = {
            "apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": pv_name, "annotations": {ANN_PROVISIONED_BY: provisioner}},
            "spec": {"capacity": {"storage": str(((spec.get("resources") or {}).get("requests") or {})
                                                 .get("storage"))},
                     "accessModes": list(spec.get("accessModes") or []),
                     "persistentVolumeReclaimPolicy": sc.get("reclaimPolicy") or "Delete",
                     "storageClassName": sc["metadata"]["name"], "volumeMode": _mode(claim),
                     "claimRef": {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""),
                                  "name": meta["name"], "uid": uid, "apiVersion": "v1",
                                  "resourceVersion": meta.get("resourceVersion")},
                     **({"mountOptions": list(sc["mountOptions"])} if sc.get("mountOptions") else {}),
                     **({"nodeAffinity": affinity} if affinity else {}), **source}}
        return pv

    def _affinity(self, node: Obj, provisioner: str, local: bool) -> Obj:
        labels: dict[str, str] = node["metadata"].get("labels") or {}
        name = node["metadata"]["name"]
        exprs: list[Obj] = []
        if not local:
            csinode = self.api.store.bucket("storage.k8s.io/csinodes").objects.get(("", name))
            for d in ((csinode or {}).get("spec") or {}).get("drivers") or []:
                if d.get("name") == provisioner:
                    exprs = [{"key": k, "operator": "In", "values": [labels[k]]}
                             for k in d.get("topologyKeys") or [] if k in labels]
            if not exprs and labels.get(ZONE):
                exprs = [{"key": ZONE, "operator": "In", "values": [labels[ZONE]]}]
        if not exprs:
            exprs = [{"key": HOSTNAME, "operator": "In", "values": [labels.get(HOSTNAME, name)]}]
        return {"required": {"nodeSelectorTerms": [{"matchExpressions": exprs}]}}

    def _reschedule(self, claim: Obj, component: str, message: str) -> None:
        """A failed provisioning with a selected node: the event, and the annotation removed (the
        library's ``ProvisioningReschedule``), so the scheduler picks a node again."""
        self.event(claim, "Warning", "ProvisioningFailed", message, component)
        self._set_annotations(PVCS, claim, {}, drop=(ANN_SELECTED_NODE,))


class VolumeController(_Provisioner):
    """The PV controller, the simulated external provisioner and the protection controllers."""


    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: index and mark what must be synced; sync on the next loop turn."""
        if store == PVCS:
            key = _key(ev.obj)
            self._mark_claim(key)
            if ev.type == "DELETED":
                for name in self.by_claim.get(key, ()):
                    self._mark_volume(name)
        elif store == PVS:
            self._on_volume(ev)
        elif store == CLASSES and ev.type != "DELETED":
            name = ev.obj["metadata"]["name"]
            for c in self.api.store.bucket(PVCS).objects.values():
                spec = c.get("spec") or {}
                if not spec.get("volumeName") and spec.get("storageClassName", name) == name:
                    self._mark_claim(_key(c))
        elif store == "/pods" and (ev.type in ("ADDED", "DELETED") or (
                ev.old is not None and _terminal(ev.obj) and not _terminal(ev.old))):
            self._on_pod(ev)

    def _on_volume(self, ev: Event) -> None:
        """A PersistentVolume event: the claim and class indexes kept, the volume marked, and the claims
        waiting for an unbound volume of its class (or for it by name) marked."""
        name = ev.obj["metadata"]["name"]
        for obj, add in ((ev.old, False), (ev.obj, ev.type != "DELETED")):
            if obj is not None:
                self._index_volume(name, obj, add)
        if ev.type != "DELETED":
            self._mark_volume(name)
            if not (ev.obj.get("spec") or {}).get("claimRef"):
                for key in (*self.waiting.get(volume_class(ev.obj), ()), *self.waiting.get("/" + name, ())):
                    self._mark_claim(key)

    def _index_volume(self, name: str, obj: Obj, add: bool) -> None:
        """Add a volume to (or take it from) the by-claim and by-class indexes; a claim it now names is marked."""
        ref = (obj.get("spec") or {}).get("claimRef")
        if isinstance(ref, dict):
            ck = (str(ref.get("namespace", "")), str(ref.get("name", "")))
            names = self.by_claim.setdefault(ck, set())
            (names.add if add else names.discard)(name)
            if not names:
                del self.by_claim[ck]
            if add:
                self._mark_claim(ck)
        cls = volume_class(obj)
        members = self.by_class.setdefault(cls, set())
        (members.add if add else members.discard)(name)
        if not members:
            del self.by_class[cls]

    def _on_pod(self, ev: Event) -> None:
        """A pod added, deleted or finished: its ephemeral volumes queued, the users of its claims kept,
        and (but for an add) its claims marked."""
        ns, pod = ev.obj["metadata"].get("namespace", ""), ev.obj["metadata"]["name"]
        if ev.type == "ADDED" and any(isinstance(v, dict) and v.get("ephemeral") is not None
                                      for v in (ev.obj.get("spec") or {}).get("volumes") or []):
            self.pods.add((ns, pod))
            self._schedule()
        for claim in pod_claims(ev.obj):
            users = self.users.setdefault((ns, claim), set())
            if ev.type == "DELETED":
                users.discard(pod)
                if not users:
                    del self.users[(ns, claim)]
            else:
                users.add(pod)
            if ev.type != "ADDED":
                self._mark_claim((ns, claim))

    def _mark_claim(self, key: ClaimKey) -> None:
        self.claims.add(key)
        self._schedule()

    def _mark_volume(self, name: str) -> None:
        self.volumes.add(name)
        self._schedule()

    def _sync_dirty(self) -> None:
        pods, self.pods = self.pods, set()
        for key in sorted(pods):
            pod = self.api.store.bucket("/pods").objects.get(key)
            if pod is not None:
                self._guard(self._ephemeral, pod)
        for _ in range(10):                       # a sync may dirty more (a bound volume its claim)
            if not self.claims and not self.volumes:
                return
            volumes, self.volumes = self.volumes, set()
            claims, self.claims = self.claims, set()
            for name in sorted(volumes):
                pv = self.api.store.bucket(PVS).objects.get(("", name))
                if pv is not None:
                    self._guard(self._sync_volume, pv)
            for key in sorted(claims):
                claim = self.api.store.bucket(PVCS).objects.get(key)
                if claim is not None:
                    self._guard(self._sync_claim, claim)
        if (self.claims or self.volumes):
            self._schedule(0.05)

    def _ephemeral(self, pod: Obj) -> None:
        """The ephemeral volume controller (``pkg/controller/volume/ephemeral``): each generic ephemeral
        volume's claim ``<pod>-<volume>``, from its template, owned (controller) by the pod."""
        if pod["metadata"].get("deletionTimestamp"):
            return
        ns, name = pod["metadata"].get("namespace", ""), pod["metadata"]["name"]
        rt = self.api.rt("", "v1", "persistentvolumeclaims")
        for v in (pod.get("spec") or {}).get("volumes") or []:
            template = ((v.get("ephemeral") or {}).get("volumeClaimTemplate") or {}) if isinstance(v, dict) else {}
            if not template:
                continue
            claim = f"{name}-{v.get('name', '')}"
            existing = self.api.store.get(rt, ns, claim)
            if existing is not None:
                if not any(r.get("uid") == pod["metadata"].get("uid")
                           for r in existing["metadata"].get("ownerReferences") or []):
                    self.event(pod, "Warning", "FailedBinding", f"PVC {ns}/{claim} was not created for the pod",
                               "ephemeral_volume")
                continue
            tmeta = template.get("metadata") or {}
            meta: Obj = {"name": claim, "namespace": ns, "ownerReferences": [
                {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": pod["metadata"].get("uid"),
                 "controller": True, "blockOwnerDeletion": True}]}
            for k in ("labels", "annotations"):
                if tmeta.get(k):
                    meta[k] = dict(tmeta[k])
            self.api.create(rt, ns, {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                                     "spec": json.loads(json.dumps(template.get("spec") or {}))}, fresh=True,
                            writer=Writer("kube-controller-manager"))

    def _sync_claim(self, claim: Obj) -> None:
        key = _key(claim)
        spec = claim.get("spec") or {}
        for w in (claim_class(claim), "/" + str(spec.get("volumeName") or "")):
            if w in self.waiting:
                self.waiting[w].discard(key)
                if not self.waiting[w]:
                    del self.waiting[w]
        if claim["metadata"].get("deletionTimestamp"):
            self._protect_claim(claim)
            return
        if _ann(claim).get(ANN_BIND_COMPLETED):
            self._sync_bound_claim(claim)
        else:
            self._sync_unbound_claim(claim)

    def _protect_claim(self, claim: Obj) -> None:
        """pvc-protection: the finalizer goes once no non-terminal pod uses the claim."""
        if PROTECTION_PVC not in (claim["metadata"].get("finalizers") or []):
            return
        ns = claim["metadata"].get("namespace", "")
        pods = self.api.store.bucket("/pods").objects
        for name in self.users.get(_key(claim), ()):
            pod = pods.get((ns, name))
            if pod is not None and not _terminal(pod):
                return
        self._write(PVCS, claim, without_finalizer(claim, PROTECTION_PVC))

    def _sync_unbound_claim(self, claim: Obj) -> None:
        spec = claim.get("spec") or {}
        if not spec.get("volumeName"):
            sc = self._class(claim_class(claim))
            delay = sc is not None and sc.get("volumeBindingMode") == "WaitForFirstConsumer"
            volume = self._best_match(claim, delay)
            if volume is not None:
                self._bind(volume, claim)
                return
            if "storageClassName" not in spec and claim_class(claim) == "":
                found = default_class(self.api.store.bucket(CLASSES).objects.values())
                if found is not None:                # retroactive default StorageClass assignment
                    self._write(PVCS, claim, {**claim, "spec": {**spec, "storageClassName":
                                                                found["metadata"]["name"]}})
                    return
            if not delay:
                self.waiting.setdefault(claim_class(claim), set()).add(_key(claim))
            if delay and not _ann(claim).get(ANN_SELECTED_NODE):
                self._wait_for_consumer(claim)
            elif claim_class(claim):
                self._provision_claim(claim, sc)
                return
            else:
                self.event(claim, "Normal", "FailedBinding",
                           "no persistent volumes available for this claim and no storage class is set")
            self._set_phase(PVCS, claim, "Pending")
            return
        volume = self._get_volume(str(spec["volumeName"]))
        if volume is None:
            self.waiting.setdefault("/" + str(spec["volumeName"]), set()).add(_key(claim))
            self._set_phase(PVCS, claim, "Pending")
        elif not (volume.get("spec") or {}).get("claimRef"):
            problem = self._unsatisfied(volume, claim)
            if problem:
                self.event(claim, "Warning", "VolumeMismatch",
                           f'Cannot bind to requested volume "{volume["metadata"]["name"]}": {problem}')
                self._set_phase(PVCS, claim, "Pending")
            else:
                self._bind(volume, claim)
        elif _bound_to(volume, claim):
            self._bind(volume, claim)
        else:
            self.event(claim, "Warning", "FailedBinding",
                       f'volume "{volume["metadata"]["name"]}" already bound to a different claim.')
            self._set_phase(PVCS, claim, "Pending")

    def _sync_bound_claim(self, claim: Obj) -> None:
        name = (claim.get("spec") or {}).get("volumeName")
        if not name:
            self._lost(claim, "ClaimLost", "Bound claim has lost reference to PersistentVolume. Data on the volume "
                                           "is lost!")
            return
        volume = self._get_volume(str(name))
        if volume is None:
            self._lost(claim, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
            return
        ref = (volume.get("spec") or {}).get("claimRef")
        if not ref or ref.get("uid") == claim["metadata"].get("uid"):
            self._bind(volume, claim)
        else:
            self._lost(claim, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound "
                                               "incorrectly")

    def _lost(self, claim: Obj, reason: str, message: str) -> None:
        if (claim.get("status") or {}).get("phase") != "Lost":
            self._set_phase(PVCS, claim, "Lost")
            self.event(claim, "Warning", reason, message)

    def _wait_for_consumer(self, claim: Obj) -> None:
        """``emitEventForUnboundDelayBindingClaim``."""
        ns = claim["metadata"].get("namespace", "")
        pods = self.api.store.bucket("/pods").objects
        waiting = sorted(n for n in self.users.get(_key(claim), ())
                         if (p := pods.get((ns, n))) is not None and not (p.get("spec") or {}).get("nodeName"))
        if not waiting:
            self.event(claim, "Normal", "WaitForFirstConsumer", "waiting for first consumer to be created before "
                                                                "binding")
        elif len(waiting) == 1:
            self.event(claim, "Normal", "WaitForPodScheduled", f"waiting for pod {waiting[0]} to be scheduled")
        else:
            self.event(claim, "Normal", "WaitForPodScheduled", f"waiting for pods {','.join(waiting)} to be "
                                                               "scheduled")

    def _unsatisfied(self, volume: Obj, claim: Obj) -> str:
        """``checkVolumeSatisfyClaim``: why ``volume`` cannot serve ``claim`` ("" if it can)."""
        if volume["metadata"].get("deletionTimestamp"):
            return f'the volume is marked for deletion "{volume["metadata"]["name"]}"'
        if _capacity(volume) < _request(claim):
            return "requested PV is too small"
        if volume_class(volume) != claim_class(claim):
            return "storageClassName does not match"
        if _mode(volume) != _mode(claim):
            return "incompatible volumeMode"
        if not set((claim.get("spec") or {}).get("accessModes") or ()) <= \
                set((volume.get("spec") or {}).get("accessModes") or ()):
            return "incompatible accessMode"
        return ""

    def _best_match(self, claim: Obj, delay: bool) -> Obj | None:
        """``findBestMatchForClaim`` without a node: a volume pre-bound to the claim, else (unless binding
        waits for the first consumer) the smallest Available volume that satisfies it."""
        request, mode = _request(claim), _mode(claim)
        for name in sorted(self.by_claim.get(_key(claim), ())):
            pv = self._get_volume(name)
            if pv is not None and _bound_to(pv, claim) and _capacity(pv) >= request and _mode(pv) == mode \
                    and not pv["metadata"].get("deletionTimestamp"):
                return pv
        if delay:
            return None
        spec = claim.get("spec") or {}
        selector = stored_label_selector(spec["selector"]) if spec.get("selector") is not None else None
        modes = set(spec.get("accessModes") or ())
        best: Obj | None = None
        for name in sorted(self.by_class.get(claim_class(claim), ())):
            pv = self._get_volume(name)
            if pv is None or not _available_for(pv, request, mode, modes, selector):
                continue
            if best is None or _capacity(pv) < _capacity(best):
                best = pv
        return best

    def _bind(self, volume: Obj, claim: Obj) -> None:
        """``bind``: volume → claim, volume Bound, claim → volume, claim Bound."""
        ref = (volume.get("spec") or {}).get("claimRef") or {}
        meta = claim["metadata"]
        if not ref or ref.get("namespace") != meta.get("namespace") or ref.get("name") != meta["name"] \
                or ref.get("uid") != meta.get("uid"):
            new_ref = {"kind": "PersistentVolumeClaim", "namespace": meta.get("namespace", ""), "name": meta["name"],
                       "uid": meta.get("uid"), "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion")}
            vmeta = dict(volume["metadata"])
            if not _bound_to(volume, claim):
                vmeta["annotations"] = {**_ann(volume), ANN_BOUND_BY_CONTROLLER: "yes"}
            volume = self._write(PVS, volume, {**volume, "metadata": vmeta,
                                               "spec": {**volume["spec"], "claimRef": new_ref}})
        volume = self._set_phase(PVS, volume, "Bound")
        spec = claim.get("spec") or {}
        name = volume["metadata"]["name"]
        ann = dict(_ann(claim))
        if spec.get("volumeName") != name:
            ann.setdefault(ANN_BOUND_BY_CONTROLLER, "yes")
        ann.setdefault(ANN_BIND_COMPLETED, "yes")
        if spec.get("volumeName") != name or ann != _ann(claim):
            claim = self._write(PVCS, claim, {**claim, "metadata": {**meta, "annotations": ann},
                                              "spec": {**spec, "volumeName": name}})
        vspec = volume.get("spec") or {}
        self._set_phase(PVCS, claim, "Bound", {"accessModes": list(vspec.get("accessModes") or []),
                                               "capacity": dict(vspec.get("capacity") or {})})

    def _sync_volume(self, volume: Obj) -> None:
        if volume["metadata"].get("deletionTimestamp"):
            self._protect_volume(volume)
        ref = (volume.get("spec") or {}).get("claimRef")
        if not isinstance(ref, dict) or not ref.get("uid"):
            self._set_phase(PVS, volume, "Available")
            return
        claim = self._get_claim((str(ref.get("namespace", "")), str(ref.get("name", ""))))
        if claim is not None and claim["metadata"].get("uid") != ref.get("uid"):
            claim = None
        if claim is None:
            if (volume.get("status") or {}).get("phase") not in ("Released", "Failed"):
                volume = self._set_phase(PVS, volume, "Released")
            self._reclaim(volume)
            return
        name = volume["metadata"]["name"]
        if not (claim.get("spec") or {}).get("volumeName"):
            if _mode(volume) != _mode(claim):
                self.event(volume, "Warning", "VolumeMismatch", "Cannot bind PersistentVolume to requested "
                           f'PersistentVolumeClaim "{claim["metadata"]["name"]}" due to incompatible volumeMode.')
                self.event(claim, "Warning", "VolumeMismatch", f'Cannot bind PersistentVolume "{name}" to '
                                                               "requested PersistentVolumeClaim due to incompatible "
                                                               "volumeMode.")
                return
            self._mark_claim(_key(claim))
        elif claim["spec"]["volumeName"] == name:
            self._set_phase(PVS, volume, "Bound")
        elif _ann(volume).get(ANN_BOUND_BY_CONTROLLER):
            # The claim went to another volume: this binding was the controller's, undo it (unbindVolume).
            vspec = {k: v for k, v in volume["spec"].items() if k != "claimRef"}
            meta = {**volume["metadata"], "annotations": {k: v for k, v in _ann(volume).items()
                                                          if k != ANN_BOUND_BY_CONTROLLER}}
            volume = self._write(PVS, volume, {**volume, "metadata": meta, "spec": vspec})
            self._set_phase(PVS, volume, "Available")

    def _protect_volume(self, volume: Obj) -> None:
        """pv-protection: the finalizer goes once the volume is not Bound."""
        if PROTECTION_PV in (volume["metadata"].get("finalizers") or []) and \
                (volume.get("status") or {}).get("phase") != "Bound":
            self._write(PVS, volume, without_finalizer(volume, PROTECTION_PV))

    def _reclaim(self, volume: Obj) -> None:
        """``reclaimVolume`` for a Released volume."""
        policy = (volume.get("spec") or {}).get("persistentVolumeReclaimPolicy", "Retain")
        name = volume["metadata"]["name"]
        if policy == "Delete" and not volume["metadata"].get("deletionTimestamp"):
            provisioner = _ann(volume).get(ANN_PROVISIONED_BY)
            if provisioner and provisioner != NO_PROVISIONER:
                with contextlib.suppress(ApiError):
                    self.api.delete(self.api.rt("", "v1", "persistentvolumes"), "", name, {})
            elif (volume.get("status") or {}).get("phase") != "Failed":
                message = (f'error getting deleter volume plugin for volume "{name}": no deletable volume plugin '
                           "matched")
                self._set_phase(PVS, volume, "Failed", {"message": message})
                self.event(volume, "Warning", "VolumeFailedDelete", message)
        elif policy == "Recycle":
            vspec = {k: v for k, v in volume["spec"].items() if k != "claimRef"}
            volume = self._write(PVS, volume, {**volume, "spec": vspec})
            self._set_phase(PVS, volume, "Available")
            self.event(volume, "Normal", "VolumeRecycled", "Volume recycled")


def _term_matches(term: Obj, labels: dict[str, str]) -> bool:
    """A TopologySelectorTerm: every expression's key has one of its values (an empty term matches all)."""
    return all(labels.get(str(e.get("key"))) in (e.get("values") or []) for e in term.get("matchLabelExpressions")
               or [])


def _topology_text(terms: list[Obj]) -> str:
    return "; ".join(" && ".join(f"{e.get('key')} in [{','.join(e.get('values') or [])}]"
                                 for e in t.get("matchLabelExpressions") or []) for t in terms)


def _available_for(pv: Obj, request: int, mode: str, modes: set[str], selector: Any) -> bool:
    """Whether an unbound volume can take a claim: Available, not being deleted, large enough, of its
    volume mode and access modes, and matching its selector."""
    if pv["metadata"].get("deletionTimestamp"):
        return False
    pspec = pv.get("spec") or {}
    if pspec.get("claimRef") or (pv.get("status") or {}).get("phase") != "Available":
        return False
    if _capacity(pv) < request or _mode(pv) != mode or not modes <= set(pspec.get("accessModes") or ()):
        return False
    return selector is None or selector.matches(pv["metadata"].get("labels") or {})
