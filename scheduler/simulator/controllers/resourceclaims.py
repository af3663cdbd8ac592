"""The simulated controller manager's resourceclaim controller and the kubelet's wait for a pod's claims.
The API side of these kinds is ``registry/resource.py``; the simulated DRA driver is ``gpudriver.py``.

- **ResourceClaim controller** (``pkg/controller/resourceclaim/controller.go``), ``syncPod`` and
  ``syncClaim``:

  - For each ``spec.resourceClaims`` entry of a pod that is not being deleted with a
    ``resourceClaimTemplateName``, and whose claim is not recorded yet (or was deleted, or is not the
    pod's any more), the claim is created from the template: ``generateName``
    ``<pod>-<podClaimName>-`` (both shortened proportionally past 57 characters, as upstream), the
    template's labels and annotations plus ``resource.kubernetes.io/pod-claim-name: <podClaimName>``,
    the pod as its controller owner (``blockOwnerDeletion``), the template's claim spec. A claim made
    for the pod before (found by that annotation and owner) is reused instead. The names go to the
    pod's ``status.resourceClaimStatuses``. A missing template is the event
    ``FailedResourceClaimCreation`` (``PodResourceClaim <name>: resource claim template ...``), and
    the pod is synced again when the template appears.
  - For a pod bound without the scheduler (``spec.nodeName`` set), an allocated claim not reserved
    for it is reserved for it (``reservedFor`` gets ``{resource: pods, name, uid}``).
  - A claim's ``reservedFor`` loses the pods that are gone, replaced (another uid) or done
    (``Succeeded``/``Failed``, or deleted before being bound). When that leaves it empty and the
    claim carries the scheduler's ``resource.kubernetes.io/delete-protection`` finalizer, the
    allocation is cleared too, then the finalizer removed; a claim being deleted with that finalizer
    and no consumer is deallocated and released the same way. An unreserved claim generated for a
    pod that is done or replaced is deleted (a deleted pod's claims go with the garbage collector,
    through their owner reference).

- **Kubelet** (``Kubelet._run`` asks ``claims_ready``): a bound pod is not started (Running) before
  each of its claims exists, is the pod's own (a generated claim), is allocated and is reserved for
  the pod, as a kubelet's ``PrepareResources`` refuses to run it. It waits; a claim change in its
  namespace, or a change of the pod, tries again.

Like the other controllers it reacts to store events (cheap marks) and syncs on the next loop turn
(``base.Controller``), writing through the ``ClusterWriter``'s ``write``, ``create`` and ``delete``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers, without_finalizer
from scheduler.simulator.interfaces import ClusterWriter, Writer
from scheduler.simulator.registry.resource import CLAIMS, FINALIZER, POD_CLAIM_NAME, TEMPLATES
from scheduler.simulator.registry.resource_fields import RESERVED_FOR_MAX
from scheduler.simulator.store import Event

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceType

__all__ = ["ResourceClaimController", "pod_claim_names"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]
Key = tuple[str, str]

PODS = "/pods"
CONTROLLER = "resource_claim"                         # upstream's event source for this controller
_MAX_BASE_LEN = 57                                    # handleClaim's maxBaseLen
_NOT_FOUND = object()                                 # a template claim the pod's status does not name yet


def _key(obj: Obj) -> Key:
    return obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def _done(pod: Obj) -> bool:
    """``isPodDone``: terminal, or deleted before it was bound."""
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed") or bool(
        pod["metadata"].get("deletionTimestamp") and not (pod.get("spec") or {}).get("nodeName"))


def _owner_pod(claim: Obj) -> tuple[str, str]:
    """``owningPod``: the name and uid of the pod controlling the claim ("" if none)."""
    for ref in claim["metadata"].get("ownerReferences") or []:
        if ref.get("controller") and ref.get("apiVersion") == "v1" and ref.get("kind") == "Pod":
            return str(ref.get("name", "")), str(ref.get("uid", ""))
    return "", ""


def _owned_by(claim: Obj, pod: Obj) -> bool:
    """``resourceclaim.IsForPod``: the pod is the claim's controller owner."""
    return _owner_pod(claim)[1] == str(pod["metadata"].get("uid"))


def pod_claim_names(pod: Obj) -> list[tuple[str, Any]]:
    """``resourceclaim.Name`` for each ``spec.resourceClaims`` entry: (the pod's name for it, the claim's
    name, ``None`` when no claim is needed, or ``_NOT_FOUND`` when the pod's status does not name the
    generated claim yet), in the pod's order."""
    statuses = {str(s.get("name")): s.get("resourceClaimName")
                for s in (pod.get("status") or {}).get("resourceClaimStatuses") or [] if isinstance(s, dict)}
    out: list[tuple[str, Any]] = []
    for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
        if not isinstance(pc, dict):
            continue
        name = str(pc.get("name", ""))
        if pc.get("resourceClaimName"):
            out.append((name, str(pc["resourceClaimName"])))
        elif pc.get("resourceClaimTemplateName"):
            out.append((name, statuses.get(name, _NOT_FOUND)))
        else:
            out.append((name, None))
    return out


def _extended_claim(pod: Obj) -> str | None:
    """The claim the scheduler created for the pod's extended resources backed by DRA
    (``status.extendedResourceClaimStatus.resourceClaimName``), if any."""
    st = (pod.get("status") or {}).get("extendedResourceClaimStatus")
    name = st.get("resourceClaimName") if isinstance(st, dict) else None
    return str(name) if name else None


def _all_claims(pod: Obj) -> list[str]:
    """The names of every claim the pod uses that is known yet: its own and its extended-resource claim."""
    out = [c for _, c in pod_claim_names(pod) if isinstance(c, str)]
    extended = _extended_claim(pod)
    return [*out, extended] if extended else out


def _reserved_for(claim: Obj, pod: Obj) -> bool:
    uid = pod["metadata"].get("uid")
    return any(isinstance(r, dict) and r.get("uid") == uid
               for r in (claim.get("status") or {}).get("reservedFor") or [])


class ResourceClaimController(Controller):
    """Generated claims, reservations and deallocation; and the kubelet's wait for them."""

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.pods: set[Key] = set()
        self.claims: set[Key] = set()
        self.owned: dict[str, set[Key]] = {}              # pod uid → claims it controls
        self.users: dict[Key, set[str]] = {}              # claim → the pods naming it (podResourceClaimIndex)
        self.by_template: dict[Key, set[str]] = {}        # a missing template → pods waiting for it
        # Bound pods the kubelet holds until their claims are ready: namespace → pod name → (uid, start).
        self.waiting: dict[str, dict[str, tuple[str, Callable[[], None]]]] = {}
        self._recheck: set[str] = set()

    # ---- events ---------------------------------------------------------------------------------
    def on_event(self, store: str, ev: Event) -> None:
        if store == PODS:
            pod = ev.obj
            if not (pod.get("spec") or {}).get("resourceClaims") and not _extended_claim(pod) and not (
                    ev.old is not None and _extended_claim(ev.old)):
                return
            self._on_pod(ev)
        elif store == CLAIMS:
            self._on_claim(ev)
        elif store == TEMPLATES and ev.type != "DELETED":
            waiting = self.by_template.pop(_key(ev.obj), set())
            self.pods.update((ev.obj["metadata"].get("namespace", ""), p) for p in waiting)
            if waiting:
                self._schedule()

    def _on_pod(self, ev: Event) -> None:
        """A pod with claims: marked, the users of its claims kept, a held pod rechecked."""
        ns, name = _key(ev.obj)
        if ev.type != "DELETED":
            self.pods.add((ns, name))
        for obj, add in ((ev.old, False), (ev.obj, ev.type != "DELETED")):
            for claim in _all_claims(obj) if obj is not None else ():
                self.claims.add((ns, claim))
                users = self.users.setdefault((ns, claim), set())
                (users.add if add else users.discard)(name)
                if not users:
                    del self.users[(ns, claim)]
        if name in self.waiting.get(ns, {}):
            self._recheck.add(ns)
        self._schedule()

    def _on_claim(self, ev: Event) -> None:
        """A claim: the index of claims by owning pod kept, the claim and the pods using it marked."""
        key = _key(ev.obj)
        owner_name, owner_uid = _owner_pod(ev.obj)
        if ev.old is not None:
            old_uid = _owner_pod(ev.old)[1]
            if old_uid and old_uid != owner_uid:
                self.owned.get(old_uid, set()).discard(key)
        if owner_uid:
            members = self.owned.setdefault(owner_uid, set())
            if ev.type == "DELETED":
                members.discard(key)
                if not members:
                    del self.owned[owner_uid]
                self.pods.add((key[0], owner_name))      # recreated if the pod still wants it
            else:
                members.add(key)
        if ev.type != "DELETED":
            self.claims.add(key)
            # The pods using it may have work now (a reservation for a pod bound without the scheduler).
            self.pods.update((key[0], p) for p in self.users.get(key, ()))
        if key[0] in self.waiting:
            self._recheck.add(key[0])
        self._schedule()

    def _sync_dirty(self) -> None:
        for _ in range(10):                       # a sync may dirty more (a created claim its pod)
            if not self.pods and not self.claims:
                break
            pods, self.pods = self.pods, set()
            claims, self.claims = self.claims, set()
            for key in sorted(pods):
                pod = self.api.store.bucket(PODS).objects.get(key)
                if pod is not None:
                    self._guard(self._sync_pod, pod)
            for key in sorted(claims):
                claim = self.api.store.bucket(CLAIMS).objects.get(key)
                if claim is not None:
                    self._guard(self._sync_claim, claim)
        recheck, self._recheck = self._recheck, set()
        for ns in sorted(recheck):
            for name, (uid, start) in list(self.waiting.get(ns, {}).items()):
                pod = self.api.store.bucket(PODS).objects.get((ns, name))
                if pod is None or pod["metadata"].get("uid") != uid:
                    self._unwait(ns, name)
                elif self.claims_ready(pod):
                    self._unwait(ns, name)
                    start()
        if (self.pods or self.claims):
            self._schedule(0.05)

    def _guard(self, fn: Callable[[Obj], None], obj: Obj) -> None:
        try:
            fn(obj)
        except ApiError as e:
            log.warning("simulated resourceclaim controller: %s %s: %s", obj.get("kind"), obj["metadata"]["name"],
                        e.message)

    def _rt(self, store: str) -> ResourceType:
        group, _, plural = store.partition("/")
        return self.api.rt(group, "v1", plural)

    def _get(self, store: str, ns: str, name: str) -> Obj | None:
        return self.api.store.bucket(store).objects.get((ns, name))

    # ---- the kubelet's wait ----------------------------------------------------------------------
    def claims_ready(self, pod: Obj) -> bool:
        """Whether each of the pod's claims exists, is its own when generated, is allocated and reserved
        for it (what a kubelet's ``PrepareResources`` needs before the pod's containers start); the claim
        of its extended resources backed by DRA too, when it has one."""
        ns = pod["metadata"].get("namespace", "")
        generated = {str(pc.get("name")) for pc in (pod.get("spec") or {}).get("resourceClaims") or []
                     if isinstance(pc, dict) and pc.get("resourceClaimTemplateName")}
        for pod_claim, name in pod_claim_names(pod):
            if name is None:
                continue
            if name is _NOT_FOUND:
                return False
            claim = self._get(CLAIMS, ns, str(name))
            if claim is None or (pod_claim in generated and not _owned_by(claim, pod)):
                return False
            if not (claim.get("status") or {}).get("allocation") or not _reserved_for(claim, pod):
                return False
        extended = _extended_claim(pod)
        if extended is not None:
            claim = self._get(CLAIMS, ns, extended)
            if claim is None or not (claim.get("status") or {}).get("allocation") or not _reserved_for(claim, pod):
                return False
        return True

    def wait(self, pod: Obj, start: Callable[[], None]) -> None:
        """Hold a bound pod until ``claims_ready``; then call ``start`` (on a later loop turn)."""
        ns, name = _key(pod)
        self.waiting.setdefault(ns, {})[name] = (str(pod["metadata"].get("uid")), start)

    def _unwait(self, ns: str, name: str) -> None:
        pods = self.waiting.get(ns, {})
        pods.pop(name, None)
        if not pods:
            self.waiting.pop(ns, None)

    # ---- pods ----------------------------------------------------------------------------------
    def _sync_pod(self, pod: Obj) -> None:
        """``syncPod``."""
        if pod["metadata"].get("deletionTimestamp"):
            return
        new: dict[str, str] = {}
        for pc in (pod.get("spec") or {}).get("resourceClaims") or []:
            if not isinstance(pc, dict):
                continue
            try:
                self._handle_claim(pod, pc, new)
            except _Failed as e:
                self.timers.volumes.event(pod, "Warning", "FailedResourceClaimCreation",
                                          f"PodResourceClaim {pc.get('name')}: {e}", CONTROLLER)
                return
        if new:
            pod = self._record_claim_names(pod, new)
        if not (pod.get("spec") or {}).get("nodeName"):
            return                                 # the scheduler reserves the claims of the pods it binds
        self._reserve(pod)

    def _record_claim_names(self, pod: Obj, new: dict[str, str]) -> Obj:
        """The names of the claims generated for the pod, in its ``resourceClaimStatuses``."""
        status = dict(pod.get("status") or {})
        entries = [dict(s) for s in status.get("resourceClaimStatuses") or [] if isinstance(s, dict)]
        for s in entries:
            if str(s.get("name")) in new:
                s["resourceClaimName"] = new.pop(str(s["name"]))
        entries += [{"name": n, "resourceClaimName": c} for n, c in new.items()]
        status["resourceClaimStatuses"] = entries
        return self.api.write(self._rt(PODS), pod, {**pod, "status": status})

    def _reserve(self, pod: Obj) -> None:
        """A pod bound without the scheduler: each allocated claim of its reserved for it (room allowing)."""
        ns = pod["metadata"].get("namespace", "")
        for _, name in pod_claim_names(pod):
            if not isinstance(name, str):
                continue
            claim = self._get(CLAIMS, ns, name)
            if claim is None:
                continue
            status = claim.get("status") or {}
            reserved = list(status.get("reservedFor") or [])
            if status.get("allocation") and not _reserved_for(claim, pod) and len(reserved) < RESERVED_FOR_MAX:
                reserved.append({"resource": "pods", "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]})
                self.api.write(self._rt(CLAIMS), claim, {**claim, "status": {**status, "reservedFor": reserved}})

    def _handle_claim(self, pod: Obj, pc: Obj, new: dict[str, str]) -> None:
        """``handleClaim``: the pod's claim for this entry, created from its template if needed."""
        ns = pod["metadata"].get("namespace", "")
        pod_claim = str(pc.get("name", ""))
        name = dict(pod_claim_names(pod)).get(pod_claim)
        if name is None:
            return                                 # no claim needed
        if isinstance(name, str):
            claim = self._get(CLAIMS, ns, name)
            if claim is not None and (pc.get("resourceClaimName") or _owned_by(claim, pod)):
                return                             # created already (or not generated at all)
        template = pc.get("resourceClaimTemplateName")
        if not template:
            return
        found = self._orphan(pod, pod_claim)
        if found is None:
            tmpl = self._get(TEMPLATES, ns, str(template))
            if tmpl is None:
                self.by_template.setdefault((ns, str(template)), set()).add(pod["metadata"]["name"])
                raise _Failed(f'resource claim template "{template}": resourceclaimtemplates.resource.k8s.io '
                              f'"{template}" not found')
            found = self._create(pod, pod_claim, tmpl)
        new[pod_claim] = found["metadata"]["name"]

    def _orphan(self, pod: Obj, pod_claim: str) -> Obj | None:
        """``findPodResourceClaim``: a claim created for this pod and entry whose name the pod's status
        lost (the controller died between creating it and writing the status)."""
        for ns, name in sorted(self.owned.get(str(pod["metadata"].get("uid")), ())):
            claim = self._get(CLAIMS, ns, name)
            if claim is not None and (claim["metadata"].get("annotations") or {}).get(POD_CLAIM_NAME) == pod_claim:
                return claim
        return None

    def _create(self, pod: Obj, pod_claim: str, template: Obj) -> Obj:
        meta = pod["metadata"]
        tspec = template.get("spec") or {}
        tmeta = tspec.get("metadata") or {}
        generate = f"{meta['name']}-{pod_claim}-"
        if len(generate) > _MAX_BASE_LEN:
            # Both parts shortened in proportion, as upstream (and, as there, without the trailing dash).
            n = len(generate)
            generate = meta["name"][:len(meta["name"]) * _MAX_BASE_LEN // n] + "-" + \
                pod_claim[:len(pod_claim) * _MAX_BASE_LEN // n]
        annotations = {**(tmeta.get("annotations") or {}), POD_CLAIM_NAME: pod_claim}
        body: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {
            "generateName": generate, "namespace": meta.get("namespace", ""), "annotations": annotations,
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": meta["name"], "uid": meta["uid"],
                                 "controller": True, "blockOwnerDeletion": True}],
            **({"labels": dict(tmeta["labels"])} if tmeta.get("labels") else {})},
            "spec": _copy(tspec.get("spec") or {})}
        try:
            return self.api.create(self._rt(CLAIMS), meta.get("namespace", ""), body, fresh=True,
                                   writer=Writer("kube-controller-manager"))
        except ApiError as e:
            raise _Failed(f"create ResourceClaim : {e.message}") from None

    # ---- claims --------------------------------------------------------------------------------
    def _sync_claim(self, claim: Obj) -> None:
        """``syncClaim``."""
        ns = claim["metadata"].get("namespace", "")
        status = claim.get("status") or {}
        reserved = list(status.get("reservedFor") or [])
        valid = [r for r in reserved if self._consumer_live(ns, r)]
        rt = self._rt(CLAIMS)
        protected = FINALIZER in (claim["metadata"].get("finalizers") or [])
        current: Obj | None = claim
        if len(valid) < len(reserved):
            current = self._drop_reservations(claim, valid, protected)
        elif protected and claim["metadata"].get("deletionTimestamp") and not valid:
            if status.get("allocation"):
                claim = self.api.write(rt, claim, {**claim, "status": {k: v for k, v in status.items()
                                                                       if k != "allocation"}})
            current = self._release(claim)
        if not valid and current is not None:
            self._delete_if_owner_gone(current)

    def _drop_reservations(self, claim: Obj, valid: list[Any], protected: bool) -> Obj | None:
        """reservedFor cut to the consumers still there; once none is left, a protected claim deallocated
        and released (None: it is gone)."""
        status = claim.get("status") or {}
        new_status = {k: v for k, v in status.items() if k != "reservedFor"}
        if valid:
            new_status["reservedFor"] = valid
        elif protected:
            new_status.pop("allocation", None)    # the last consumer is gone: deallocate
        claim = self.api.write(self._rt(CLAIMS), claim, {**claim, "status": new_status})
        return self._release(claim) if protected and not new_status.get("allocation") else claim

    def _consumer_live(self, ns: str, r: Any) -> bool:
        """Whether a reservedFor entry still holds: a pod that exists, with that uid, not finished (any
        other consumer is kept)."""
        if isinstance(r, dict) and not r.get("apiGroup") and r.get("resource") == "pods":
            pod = self._get(PODS, ns, str(r.get("name", "")))
            if pod is None or pod["metadata"].get("uid") != r.get("uid") or _done(pod):
                return False
        return True

    def _delete_if_owner_gone(self, claim: Obj) -> None:
        """A generated claim whose pod was replaced or finished is deleted."""
        ns = claim["metadata"].get("namespace", "")
        name, uid = _owner_pod(claim)
        pod = self._get(PODS, ns, name) if name else None
        if pod is not None and (pod["metadata"].get("uid") != uid or _done(pod)) \
                and not claim["metadata"].get("deletionTimestamp"):
            with contextlib.suppress(ApiError):
                self.api.delete(self._rt(CLAIMS), ns, claim["metadata"]["name"], {})

    def _release(self, claim: Obj) -> Obj | None:
        """The scheduler's finalizer off (the claim goes if it was being deleted: then None)."""
        new = without_finalizer(claim, FINALIZER)
        out = self.api.write(self._rt(CLAIMS), claim, new)
        return None if out["metadata"].get("deletionTimestamp") and "finalizers" not in new["metadata"] else out


class _Failed(Exception):
    """``handleClaim``'s error, for the pod's ``FailedResourceClaimCreation`` event."""


def _copy(obj: Any) -> Any:
    return json.loads(json.dumps(obj))


# --- the simulated DRA driver ----------------------------------------------------------------------
