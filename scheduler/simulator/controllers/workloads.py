"""The simulated controller manager's workload controllers and garbage collector.

Each stands for its kube-controller-manager loop, reduced to what a scheduler can observe:

- ``Deployment`` → a ReplicaSet per pod template (``<name>-<pod-template-hash>``, the hash an FNV-32a of
  the template, encoded as ``rand.SafeEncodeString``); the current one gets ``spec.replicas``, older
  ones are scaled to 0 at once (a rollout without surge pacing). Status as ``kubectl rollout status``
  reads it: observed generation, replicas, updated, ready, available, and the Available and
  Progressing conditions.
- ``ReplicaSet`` (and ``ReplicationController``) → pods from the template, named ``<name>-xxxxx``, owned by
  a controller reference; extra pods deleted unscheduled first, then not ready, then newest.
- ``StatefulSet`` → pods ``<name>-<ordinal>`` with ``hostname``, ``subdomain`` and the pod-name and
  pod-index labels. ``OrderedReady`` (the default) creates ordinal N only once 0..N-1 are Running and
  Ready, and removes the highest ordinal first; ``Parallel`` does both at once. A failed pod is
  recreated. Before a pod, each of its ``volumeClaimTemplates``' claims ``<template>-<name>-<ordinal>`` is
  created (unless it exists; owned by the set only with ``persistentVolumeClaimRetentionPolicy``
  ``whenDeleted: Delete``) and the pod's volumes name them, as upstream's ``updateStorage`` does.
- ``DaemonSet`` → one pod per eligible node (its nodeSelector, required node affinity and NoSchedule /
  NoExecute taints, with the tolerations upstream adds to daemon pods), carrying the single-node
  ``matchFields metadata.name`` affinity upstream's controller sets; the default scheduler (or the
  template's ``schedulerName``) binds it. Pods on nodes no longer eligible are deleted.
- ``Job`` → up to ``parallelism`` active pods until ``completions`` succeeded (a Job without
  completions needs one); the kubelet (``kubelet.Kubelet``) completes a Job's running pod after
  ``pod_completion_seconds``. ``Complete`` and ``SuccessCriteriaMet`` conditions, start and completion
  times, as upstream's job controller writes them. With the ``WorkloadWithJob`` and ``GenericWorkload``
  gates, a Workload and a PodGroup for it first, its pods in the group (``jobscheduling.py``).
- Garbage collection through ``ownerReferences``: when an owner is gone, its dependents are deleted
  (background); ``propagationPolicy: Foreground`` holds the owner (finalizer ``foregroundDeletion``)
  until its dependents are gone; ``Orphan`` (finalizer ``orphan``) strips the owner reference from its
  dependents first.

Controllers react to store events (a listener, cheap: it only marks keys dirty) and sync on the next
loop turn, so one burst of events is one sync per object. Their creates go through the API's own create
(validation, defaulting, managedFields as ``kube-controller-manager``); status writes go straight to
storage, as status subresource writes.
"""

from __future__ import annotations

import contextlib
import copy
import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import orjson

from scheduler.model.selectors import parse_node_selector
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.controllers.jobscheduling import JobScheduling
from scheduler.simulator.interfaces import ClusterWriter, Writer
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.store import Event

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceType

__all__ = ["WorkloadControllers", "template_hash"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]
# The annotation holding a Deployment's and its ReplicaSets' revision (deploymentutil.RevisionAnnotation).
REVISION = "deployment.kubernetes.io/revision"
Key = tuple[str, str, str]          # (store, namespace, name)

_WORKLOADS = ("apps/deployments", "apps/replicasets", "/replicationcontrollers", "apps/statefulsets",
              "apps/daemonsets", "batch/jobs")
_SAFE = "bcdfghjklmnpqrstvwxz2456789"     # rand.SafeEncodeString's alphabet
# The tolerations upstream's DaemonSet controller adds to every daemon pod (util.AddOrUpdateDaemonPodTolerations).
_DAEMON_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def template_hash(template: Obj, collisions: int = 0) -> str:
    """``ComputeHash``: FNV-32a over the template (and the collision count), safe-encoded."""
    h = 0x811C9DC5
    data = orjson.dumps(_semantic(template), option=orjson.OPT_SORT_KEYS)
    for b in data + (str(collisions).encode() if collisions else b""):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    digits = str(h)
    # SafeEncodeString maps each character by its code point, not its digit value.
    return "".join(_SAFE[ord(d) % len(_SAFE)] for d in digits)


def _equal_ignoring_hash(a: Obj, b: Obj) -> bool:
    """EqualIgnoreHash: two pod templates, the pod-template-hash label left out of both."""
    def strip(t: Obj) -> Obj:
        labels = {k: v for k, v in ((t.get("metadata") or {}).get("labels") or {}).items()
                  if k != "pod-template-hash"}
        return {**t, "metadata": {**(t.get("metadata") or {}), "labels": labels}}
    return bool(_semantic(strip(a)) == _semantic(strip(b)))


def _semantic(value: Any) -> Any:
    """The template as the Go struct holds it: an explicit null is the zero value, as if absent (kubectl's
    rollout undo sends ``metadata.creationTimestamp: null``, which apiequality.Semantic finds equal)."""
    if isinstance(value, dict):
        return {k: _semantic(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_semantic(v) for v in value]
    return value


def _controller_of(obj: Obj) -> Obj | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def _owner_ref(owner: Obj) -> Obj:
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": owner["metadata"]["name"],
            "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _terminal(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def _active(pod: Obj) -> bool:
    return not pod["metadata"].get("deletionTimestamp") and not _terminal(pod)


def _tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return True
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


class _WorkloadBase(Controller):
    """The workload controllers' shared steps: owned pods, pod creation and deletion, status writes."""


    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.dirty: set[Key] = set()
        self.job_scheduling = JobScheduling(api)

    def _rt(self, store: str) -> ResourceType:
        for rt in self.api.registry.by_path.values():
            if rt.store == store and not rt.to_external:
                return rt
        raise KeyError(store)

    def _owned(self, store: str, owner: Obj) -> Iterator[Obj]:
        uid = owner["metadata"]["uid"]
        for o in self.api.store.bucket(store).items(owner["metadata"].get("namespace", "")):
            ref = _controller_of(o)
            if ref is not None and ref.get("uid") == uid:
                yield o

    def _create_pod(self, owner: Obj, template: Obj, *, name: str = "", generate_name: str = "",
                    labels: Obj | None = None, spec_patch: Obj | None = None) -> None:
        tmeta = template.get("metadata") or {}
        meta: Obj = {"namespace": owner["metadata"].get("namespace", ""),
                     "labels": {**(tmeta.get("labels") or {}), **(labels or {})},
                     "ownerReferences": [_owner_ref(owner)]}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        if name:
            meta["name"] = name
        else:
            meta["generateName"] = generate_name
        spec = copy.deepcopy(template.get("spec") or {})
        spec.update(spec_patch or {})
        self.api.create(self.api.rt("", "v1", "pods"), meta["namespace"],
                        {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}, fresh=True,
                        writer=Writer("kube-controller-manager"))

    def _delete(self, store: str, obj: Obj) -> None:
        with contextlib.suppress(ApiError):          # gone meanwhile
            self.api.delete(self._rt(store), obj["metadata"].get("namespace", ""), obj["metadata"]["name"], {})

    def _set_status(self, store: str, obj: Obj, status: Obj) -> None:
        status = {k: v for k, v in status.items() if v is not None}
        if obj.get("status") != status:
            self.api.write(self._rt(store), obj, {**obj, "metadata": dict(obj["metadata"]), "status": status})

    @staticmethod
    def _conditions(old: Obj, wanted: list[tuple[str, bool, str, str]]) -> list[Obj]:
        """Conditions keeping their lastTransitionTime while their status stays."""
        before = {c.get("type"): c for c in old.get("conditions") or []}
        out = []
        for kind, ok, reason, message in wanted:
            status = "True" if ok else "False"
            prev = before.get(kind)
            if prev is not None and prev.get("status") == status and prev.get("reason") == reason:
                out.append(prev)
                continue
            ts = now_iso()
            out.append({"type": kind, "status": status, "lastUpdateTime": ts, "lastTransitionTime":
                        prev["lastTransitionTime"] if prev is not None and prev.get("status") == status else ts,
                        "reason": reason, "message": message})
        return out


class _ReplicaControllers(_WorkloadBase):
    """The ReplicaSet (and ReplicationController) and Deployment controllers."""


    def _replica_set(self, rs: Obj) -> None:
        spec = rs.get("spec") or {}
        want = int(spec.get("replicas", 1))
        self._scale_pods(rs, want, [p for p in self._owned("/pods", rs) if _active(p)])
        pods = [p for p in self._owned("/pods", rs) if _active(p)]
        tlabels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        ready = sum(1 for p in pods if _ready(p))
        store = "/replicationcontrollers" if rs.get("kind") == "ReplicationController" else "apps/replicasets"
        self._set_status(store, rs, {
            "replicas": len(pods),
            "fullyLabeledReplicas": sum(1 for p in pods if all(
                (p["metadata"].get("labels") or {}).get(k) == v for k, v in tlabels.items())),
            "readyReplicas": ready, "availableReplicas": ready,
            "observedGeneration": rs["metadata"].get("generation", 1)})

    def _scale_pods(self, rs: Obj, want: int, pods: list[Obj]) -> None:
        """Create the missing pods, or delete the surplus (getPodsToDelete's order: unassigned before
        assigned, pending before running, not ready before ready, newer before older)."""
        if len(pods) < want:
            template = (rs.get("spec") or {}).get("template") or {}
            for _ in range(want - len(pods)):
                self._create_pod(rs, template, generate_name=rs["metadata"]["name"] + "-")
        elif len(pods) > want:
            pods.sort(key=lambda p: (bool((p.get("spec") or {}).get("nodeName")),
                                     (p.get("status") or {}).get("phase") == "Running", _ready(p),
                                     "~" + str(p["metadata"].get("creationTimestamp", ""))), reverse=False)
            for p in pods[:len(pods) - want]:
                self._delete("/pods", p)

    def _deployment(self, d: Obj) -> None:
        spec = d.get("spec") or {}
        want = int(spec.get("replicas", 1))
        template = spec.get("template") or {}
        h = template_hash(template, int((d.get("status") or {}).get("collisionCount", 0)))
        owned = list(self._owned("apps/replicasets", d))
        # FindNewReplicaSet: the oldest ReplicaSet whose template equals the Deployment's, the
        # pod-template-hash label aside (a replayed cluster's hashes are its own).
        owned.sort(key=lambda rs: str(rs["metadata"].get("creationTimestamp", "")))
        current = next((rs for rs in owned if _equal_ignoring_hash((rs.get("spec") or {}).get("template") or {},
                                                                    template)), None)
        if current is not None:
            h = str((current["metadata"].get("labels") or {}).get("pod-template-hash", h))
        rs_rt = self.api.rt("apps", "v1", "replicasets")
        if current is None:
            current = self._new_replica_set(d, want, h, owned)
            owned.append(current)
        current, owned = self._newest_revision(rs_rt, current, owned)
        for rs in owned:
            target = want if rs is current else 0
            if int((rs.get("spec") or {}).get("replicas", 1)) != target:
                new = {**rs, "metadata": dict(rs["metadata"]), "spec": {**rs["spec"], "replicas": target}}
                self.api.write(rs_rt, rs, new)
        # SetDeploymentRevision: the Deployment carries its current revision, which kubectl rollout undo
        # and rollout history read (pkg/controller/deployment/sync.go).
        annotations = d["metadata"].get("annotations") or {}
        if annotations.get(REVISION) != str(_revision(current)):
            d = self.api.write(self._rt("apps/deployments"), d, {**d, "metadata": {
                **d["metadata"], "annotations": {**annotations, REVISION: str(_revision(current))}}})
        self._deployment_status(d, want, h, current)

    def _newest_revision(self, rs_rt: Any, current: Obj, owned: list[Obj]) -> tuple[Obj, list[Obj]]:
        """SetNewReplicaSetAnnotations: the current ReplicaSet is always the newest revision, so one
        that an undo brings back is renumbered above the others, as kubectl rollout history shows it."""
        revision = 1 + max((_revision(rs) for rs in owned if rs is not current), default=0)
        if _revision(current) >= revision:
            return current, owned
        current = self.api.write(rs_rt, current, {**current, "metadata": {
            **current["metadata"], "annotations": {**(current["metadata"].get("annotations") or {}),
                                                   REVISION: str(revision)}}})
        return current, [current if rs["metadata"]["uid"] == current["metadata"]["uid"] else rs for rs in owned]

    def _new_replica_set(self, d: Obj, want: int, h: str, owned: list[Obj]) -> Obj:
        """The ReplicaSet of the Deployment's current template, at the next revision."""
        spec = d.get("spec") or {}
        revision = 1 + max((_revision(rs) for rs in owned), default=0)
        tmpl = copy.deepcopy(spec.get("template") or {})
        tmpl.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = h
        selector = copy.deepcopy(spec.get("selector") or {})
        selector.setdefault("matchLabels", {})["pod-template-hash"] = h
        namespace = str(d["metadata"].get("namespace", ""))
        body: Obj = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {
            "name": f"{d['metadata']['name']}-{h}", "namespace": d["metadata"].get("namespace", ""),
            "labels": dict(tmpl["metadata"]["labels"]), "ownerReferences": [_owner_ref(d)],
            "annotations": {"deployment.kubernetes.io/desired-replicas": str(want),
                            "deployment.kubernetes.io/max-replicas": str(want),
                            REVISION: str(revision)}},
            "spec": {"replicas": want, "selector": selector, "template": tmpl}}
        return self.api.create(self.api.rt("apps", "v1", "replicasets"), namespace, body, fresh=True,
                               writer=Writer("kube-controller-manager"))

    def _deployment_status(self, d: Obj, want: int, h: str, current: Obj) -> None:
        """The Deployment's status from its ReplicaSets': replica counts, Available and Progressing."""
        owned = list(self._owned("apps/replicasets", d))
        st = [rs.get("status") or {} for rs in owned]
        cur_status = next(((rs.get("status") or {}) for rs in owned
                           if (rs["metadata"].get("labels") or {}).get("pod-template-hash") == h), {})
        replicas = sum(int(s.get("replicas", 0)) for s in st)
        available = sum(int(s.get("availableReplicas", 0)) for s in st)
        updated = int(cur_status.get("replicas", 0))
        old = d.get("status") or {}
        complete = updated == want and replicas == want and available == want
        conditions = self._conditions(old, _deployment_conditions(available >= want, complete,
                                                                  current["metadata"]["name"]))
        self._set_status("apps/deployments", d, {
            "observedGeneration": d["metadata"].get("generation", 1), "replicas": replicas or None,
            "updatedReplicas": updated or None,
            "readyReplicas": sum(int(s.get("readyReplicas", 0)) for s in st) or None,
            "availableReplicas": available or None, "unavailableReplicas": max(0, want - available) or None,
            "conditions": conditions, "collisionCount": old.get("collisionCount")})


def _revision(rs: Obj) -> int:
    """deploymentutil.Revision: the ReplicaSet's ``deployment.kubernetes.io/revision``, 0 when unset or bad."""
    try:
        return int((rs["metadata"].get("annotations") or {}).get(REVISION, "0"))
    except ValueError:
        return 0


def _deployment_conditions(available: bool, complete: bool, rs_name: str) -> list[tuple[str, bool, str, str]]:
    """The Deployment's Available and Progressing conditions (type, status, reason, message)."""
    return [
        ("Available", available, "MinimumReplicasAvailable" if available else "MinimumReplicasUnavailable",
         "Deployment has minimum availability." if available else "Deployment does not have minimum availability."),
        ("Progressing", True, "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
         f'ReplicaSet "{rs_name}" has successfully progressed.' if complete
         else f'ReplicaSet "{rs_name}" is progressing.')]


class WorkloadControllers(_ReplicaControllers):
    """Deployment, ReplicaSet, ReplicationController, StatefulSet, DaemonSet and Job controllers."""


    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: mark what must be synced (the object, or a pod's controller); sync later."""
        meta = ev.obj["metadata"]
        if store in _WORKLOADS:
            self._mark((store, meta.get("namespace", ""), meta["name"]))
        elif store == "/pods":
            ref = _controller_of(ev.obj)
            if ref is not None:
                owner_store = {"ReplicaSet": "apps/replicasets", "StatefulSet": "apps/statefulsets",
                               "DaemonSet": "apps/daemonsets", "Job": "batch/jobs",
                               "ReplicationController": "/replicationcontrollers"}.get(str(ref.get("kind")))
                if owner_store:
                    self._mark((owner_store, meta.get("namespace", ""), str(ref.get("name", ""))))
        elif store == "/nodes" and self.api.store.bucket("apps/daemonsets").objects:
            for ds in self.api.store.bucket("apps/daemonsets").items(None):
                self._mark(("apps/daemonsets", ds["metadata"].get("namespace", ""), ds["metadata"]["name"]))
        if store == "apps/replicasets" and (ref := _controller_of(ev.obj)) is not None \
                and ref.get("kind") == "Deployment":
            self._mark(("apps/deployments", meta.get("namespace", ""), str(ref.get("name", ""))))

    def _mark(self, key: Key) -> None:
        self.dirty.add(key)
        self._schedule(0)

    def _sync_dirty(self) -> None:
        for _ in range(10):                       # a sync may dirty more (a Deployment its ReplicaSet)
            if not self.dirty:
                return
            batch, self.dirty = self.dirty, set()
            for store, ns, name in sorted(batch):
                obj = self.api.store.bucket(store).objects.get((ns, name))
                if obj is None or obj["metadata"].get("deletionTimestamp"):
                    continue
                try:
                    self._sync(store, obj)
                except ApiError as e:
                    log.warning("simulated %s controller: %s/%s: %s", obj.get("kind"), ns, name, e.message)
        if self.dirty:
            self._schedule(0.05)

    def _sync(self, store: str, obj: Obj) -> None:
        if store == "apps/deployments":
            self._deployment(obj)
        elif store in ("apps/replicasets", "/replicationcontrollers"):
            self._replica_set(obj)
        elif store == "apps/statefulsets":
            self._stateful_set(obj)
        elif store == "apps/daemonsets":
            self._daemon_set(obj)
        elif store == "batch/jobs":
            self._job(obj)

    def _stateful_set(self, sts: Obj) -> None:
        spec = sts.get("spec") or {}
        want = int(spec.get("replicas", 1))
        name = sts["metadata"]["name"]
        parallel = spec.get("podManagementPolicy") == "Parallel"
        revision = f"{name}-{template_hash(spec.get('template') or {})}"
        pods = {p["metadata"]["name"]: p for p in self._owned("/pods", sts)}
        for i in range(want):
            # OrderedReady: one step at a time, and a pod not ready holds the ones after it.
            if self._stateful_pod(sts, i, pods.get(f"{name}-{i}"), revision) and not parallel:
                break
        self._stateful_scale_down(name, want, pods, parallel)
        self._stateful_set_status(sts, revision)

    def _stateful_scale_down(self, name: str, want: int, pods: dict[str, Obj], parallel: bool) -> None:
        """Delete the pods past ``want``, highest ordinal first (OrderedReady: one at a time, once all
        below are ready)."""
        extra = sorted((p for n, p in pods.items() if self._ordinal(name, n) >= want and _active(p)),
                       key=lambda p: -self._ordinal(name, p["metadata"]["name"]))
        lower_ready = all(_ready(p) for n, p in pods.items() if 0 <= self._ordinal(name, n) < want)
        for p in extra:
            if not parallel and not lower_ready:
                break
            self._delete("/pods", p)
            if not parallel:
                break

    def _stateful_set_status(self, sts: Obj, revision: str) -> None:
        """The StatefulSet's status: its active and ready pods at one revision."""
        current = [p for p in self._owned("/pods", sts) if _active(p)]
        ready = sum(1 for p in current if _ready(p))
        self._set_status("apps/statefulsets", sts, {
            "observedGeneration": sts["metadata"].get("generation", 1), "replicas": len(current),
            "readyReplicas": ready or None, "currentReplicas": len(current) or None,
            "updatedReplicas": len(current) or None, "availableReplicas": ready,
            "currentRevision": revision, "updateRevision": revision, "collisionCount": 0})

    def _stateful_pod(self, sts: Obj, i: int, pod: Obj | None, revision: str) -> bool:
        """One ordinal's step: a failed or finished pod deleted (to be replaced), a missing one created
        once its claims are there. True where it acted or waits (for a claim being deleted, or for its pod
        to be ready), which stops an OrderedReady set."""
        if pod is not None and _terminal(pod) and not pod["metadata"].get("deletionTimestamp"):
            self._delete("/pods", pod)                        # a failed or finished pod is replaced
            return True
        if pod is not None:
            return not (_ready(pod) and _active(pod))
        volumes = self._claims_for(sts, i)
        if volumes is None:                                   # a claim is being deleted: wait for it
            return True
        spec = sts.get("spec") or {}
        name = sts["metadata"]["name"]
        self._create_pod(sts, spec.get("template") or {}, name=f"{name}-{i}", labels={
            "statefulset.kubernetes.io/pod-name": f"{name}-{i}", "apps.kubernetes.io/pod-index": str(i),
            "controller-revision-hash": revision},
            spec_patch={"hostname": f"{name}-{i}", **({"subdomain": spec["serviceName"]}
                                                       if spec.get("serviceName") else {}),
                        **({"volumes": volumes} if volumes else {})})
        return True

    def _claims_for(self, sts: Obj, ordinal: int) -> list[Obj] | None:
        """``createPersistentVolumeClaims`` then ``updateStorage``: each ``volumeClaimTemplate``'s claim
        ``<template>-<set>-<ordinal>`` (labels: the template's and the selector's ``matchLabels``; an owner
        reference to the set when ``persistentVolumeClaimRetentionPolicy.whenDeleted`` is Delete),
        created unless it exists; and the pod's volumes, the claims first, then the template's other
        volumes. None while a claim is being deleted (the pod cannot be created yet)."""
        spec = sts.get("spec") or {}
        templates = [t for t in spec.get("volumeClaimTemplates") or [] if isinstance(t, dict)]
        pod_volumes = ((spec.get("template") or {}).get("spec") or {}).get("volumes") or []
        if not templates:
            return list(pod_volumes) or []
        ns, set_name = sts["metadata"].get("namespace", ""), sts["metadata"]["name"]
        prt = self.api.rt("", "v1", "persistentvolumeclaims")
        policy = spec.get("persistentVolumeClaimRetentionPolicy") or {}
        volumes: list[Obj] = []
        names: set[str] = set()
        for t in templates:
            tmeta = t.get("metadata") or {}
            vol = str(tmeta.get("name", ""))
            claim_name = f"{vol}-{set_name}-{ordinal}"
            existing = self.api.store.get(prt, ns, claim_name)
            if existing is not None and existing["metadata"].get("deletionTimestamp"):
                return None
            if existing is None:
                self._create_claim(sts, t, claim_name, policy.get("whenDeleted") == "Delete")
            volumes.append({"name": vol, "persistentVolumeClaim": {"claimName": claim_name}})
            names.add(vol)
        return volumes + [v for v in pod_volumes if isinstance(v, dict) and v.get("name") not in names]

    def _create_claim(self, sts: Obj, t: Obj, claim_name: str, owned: bool) -> None:
        """A volumeClaimTemplate's claim for one ordinal: the template's labels and the selector's
        matchLabels, its annotations, and an owner reference to the set where deleting it deletes them."""
        spec = sts.get("spec") or {}
        tmeta = t.get("metadata") or {}
        ns, set_name = sts["metadata"].get("namespace", ""), sts["metadata"]["name"]
        labels = {**(tmeta.get("labels") or {}),
                  **(((spec.get("selector") or {}).get("matchLabels")) or {})}
        meta: Obj = {"name": claim_name, "namespace": ns, **({"labels": labels} if labels else {})}
        if tmeta.get("annotations"):
            meta["annotations"] = dict(tmeta["annotations"])
        if owned:
            meta["ownerReferences"] = [{"apiVersion": sts["apiVersion"], "kind": sts["kind"],
                                        "name": set_name, "uid": sts["metadata"]["uid"]}]
        self.api.create(self.api.rt("", "v1", "persistentvolumeclaims"), ns, {
            "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
            "spec": copy.deepcopy(t.get("spec") or {})}, fresh=True, writer=Writer("kube-controller-manager"))

    @staticmethod
    def _ordinal(set_name: str, pod_name: str) -> int:
        prefix, _, tail = pod_name.rpartition("-")
        return int(tail) if prefix == set_name and tail.isdigit() else -1

    def _eligible(self, template_spec: Obj, node: Obj) -> bool:
        """nodeShouldRunDaemonPod: the node's labels and name against the template's node selector and
        required affinity, its NoSchedule/NoExecute taints against the daemon pod's tolerations."""
        labels = node["metadata"].get("labels") or {}
        for k, v in (template_spec.get("nodeSelector") or {}).items():
            if labels.get(k) != v:
                return False
        req = (((template_spec.get("affinity") or {}).get("nodeAffinity") or {})
               .get("requiredDuringSchedulingIgnoredDuringExecution"))
        if req:
            try:
                if not parse_node_selector(req, "spec.affinity").matches(labels, node["metadata"]["name"]):
                    return False
            except ValueError:
                return False
        tolerations = list(template_spec.get("tolerations") or []) + _DAEMON_TOLERATIONS
        return all(_tolerates(tolerations, t) for t in (node.get("spec") or {}).get("taints") or []
                   if t.get("effect") in ("NoSchedule", "NoExecute"))

    def _daemon_set(self, ds: Obj) -> None:
        spec = ds.get("spec") or {}
        template = spec.get("template") or {}
        tspec = template.get("spec") or {}
        nodes = {n["metadata"]["name"]: n for n in self.api.store.bucket("/nodes").items(None)}
        eligible = {name for name, n in nodes.items() if self._eligible(tspec, n)}
        by_node: dict[str, list[Obj]] = {}
        for p in self._owned("/pods", ds):
            if _active(p):
                by_node.setdefault(self._daemon_node(p), []).append(p)
        for node_name in sorted(eligible):
            if node_name not in by_node:
                self._create_daemon_pod(ds, node_name)
        for node_name, pods in by_node.items():
            for p in (pods if node_name not in eligible else pods[1:]):
                self._delete("/pods", p)
        self._daemon_set_status(ds, eligible)

    def _create_daemon_pod(self, ds: Obj, node_name: str) -> None:
        """The daemon pod for one node: pinned to it by a matchFields term, with the daemon tolerations."""
        template = (ds.get("spec") or {}).get("template") or {}
        tspec = template.get("spec") or {}
        affinity = copy.deepcopy(tspec.get("affinity") or {})
        affinity.setdefault("nodeAffinity", {})["requiredDuringSchedulingIgnoredDuringExecution"] = {
            "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In",
                                                    "values": [node_name]}]}]}
        tolerations = list(tspec.get("tolerations") or [])
        tolerations += [t for t in _DAEMON_TOLERATIONS if t not in tolerations]
        self._create_pod(ds, template, generate_name=ds["metadata"]["name"] + "-", labels={
            "controller-revision-hash": template_hash(template)},
            spec_patch={"affinity": affinity, "tolerations": tolerations})

    def _daemon_set_status(self, ds: Obj, eligible: set[str]) -> None:
        """The DaemonSet's status: its pods scheduled, misscheduled, ready and available."""
        pods = [p for p in self._owned("/pods", ds) if _active(p)]
        scheduled = [p for p in pods if (p.get("spec") or {}).get("nodeName")]
        ready = sum(1 for p in scheduled if _ready(p))
        self._set_status("apps/daemonsets", ds, {
            "currentNumberScheduled": len(scheduled), "desiredNumberScheduled": len(eligible),
            "numberMisscheduled": sum(1 for p in scheduled if p["spec"]["nodeName"] not in eligible),
            "numberReady": ready, "updatedNumberScheduled": len(scheduled) or None,
            "numberAvailable": ready or None, "numberUnavailable": max(0, len(eligible) - ready) or None,
            "observedGeneration": ds["metadata"].get("generation", 1)})

    @staticmethod
    def _daemon_node(pod: Obj) -> str:
        terms = (((((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {})
                  .get("requiredDuringSchedulingIgnoredDuringExecution") or {}).get("nodeSelectorTerms") or [])
        for term in terms:
            for f in term.get("matchFields") or []:
                if f.get("key") == "metadata.name" and f.get("values"):
                    return str(f["values"][0])
        return str((pod.get("spec") or {}).get("nodeName") or "")

    def _job(self, job: Obj) -> None:
        spec = job.get("spec") or {}
        status = dict(job.get("status") or {})
        done = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                   for c in status.get("conditions") or [])
        pods = list(self._owned("/pods", job))
        succeeded = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Succeeded")
        failed = sum(1 for p in pods if (p.get("status") or {}).get("phase") == "Failed")
        active = [p for p in pods if _active(p)]
        completions = spec.get("completions")
        need = int(completions) if completions is not None else 1
        parallelism = int(spec.get("parallelism", 1))
        if not done and not spec.get("suspend"):
            # isNewJob: no pods, no start time, no counts, never suspended.
            new_job = not pods and not status.get("startTime") and not status.get("conditions")
            group = self.job_scheduling.pod_group_for(job, new_job)
            self._start_job_pods(job, min(parallelism, max(0, need - succeeded)) - len(active),
                                 {"schedulingGroup": {"podGroupName": group}} if group else None)
        active = [p for p in self._owned("/pods", job) if _active(p)]
        self._job_status(job, status, done, active, succeeded, failed, need)

    def _start_job_pods(self, job: Obj, n: int, spec_patch: Obj | None = None) -> None:
        """``n`` more pods of the Job's template, labelled with its name and uid (and in its PodGroup,
        ``spec_patch``, with the workload integration: ``jobscheduling.py``)."""
        template = (job.get("spec") or {}).get("template") or {}
        for _ in range(n):
            self._create_pod(job, template, generate_name=job["metadata"]["name"] + "-", spec_patch=spec_patch,
                             labels={"batch.kubernetes.io/job-name": job["metadata"]["name"],
                                     "job-name": job["metadata"]["name"],
                                     "batch.kubernetes.io/controller-uid": job["metadata"]["uid"],
                                     "controller-uid": job["metadata"]["uid"]})

    def _job_status(self, job: Obj, status: Obj, done: bool, active: list[Obj], succeeded: int, failed: int,
                    need: int) -> None:
        """The Job's status: its pods' counts, and Complete once enough pods succeeded."""
        ts = now_iso()
        out: Obj = {"active": len(active) or None, "succeeded": succeeded or None, "failed": failed or None,
                    "startTime": status.get("startTime") or ts, "ready": sum(1 for p in active if _ready(p)),
                    "terminating": 0, "uncountedTerminatedPods": {}}
        conditions = list(status.get("conditions") or [])
        if not done and succeeded >= need and not active:
            conditions += [{"type": t, "status": "True", "lastProbeTime": ts, "lastTransitionTime": ts,
                            "reason": "CompletionsReached", "message": "Reached expected number of succeeded pods"}
                           for t in ("SuccessCriteriaMet", "Complete")]
            out["completionTime"] = ts
        elif status.get("completionTime"):
            out["completionTime"] = status["completionTime"]
        out["conditions"] = conditions or None
        self._set_status("batch/jobs", job, out)
