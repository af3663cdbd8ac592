"""``ApiSchedulerClient``: the core's ``SchedulerClient`` over the Kubernetes API.

- ``bind``: ``POST pods/NAME/binding``. The API's 409 and 404 reach the core as ``ConflictError`` and
  ``NotFoundError``, so a pod bound elsewhere or deleted is forgotten, never retried.
- Events are ``events.k8s.io/v1``, as upstream's recorder posts them: ``Normal Scheduled`` (action
  ``Binding``) and ``Warning FailedScheduling`` (action ``Scheduling``). The reporting controller is
  the profile's schedulerName. A repeat of the same event for the same pod is *aggregated*: it
  increments ``series.count`` and is patched at most once per ``series_interval`` seconds, so a pod
  that retries every 10 s costs one write per interval, not one per attempt.
- Preemption: the victim's ``DisruptionTarget`` condition (strategic status patch), its DELETE with a
  uid precondition (a re-created pod of the same name is never hit), then ``Normal Preempted``
  (action ``Preempting``, related to the preemptor), as upstream's ``PreemptPod``.
- ResourceClaims (DynamicResources' writes): ``resource.k8s.io/v1``. The finalizer and the status
  (allocation, reservedFor) are merge patches carrying ``metadata.resourceVersion``, conditional as
  upstream's ``Update``/``UpdateStatus`` are (409 when the claim changed; the plugin refetches and
  retries). Unreserve is upstream's strategic-merge patch deleting the pod's ``reservedFor`` entry by
  uid, with the claim's uid as precondition. Each write returns the claim as the API wrote it.
- The fence (``fence``, set by the runtime with leader election): the Binding and the PreBind writes
  (a PV's claimRef, a claim's selected node, a ResourceClaim's finalizer, allocation and
  reservation, the extended-resource claim) are refused with ``NotLeaderError`` at the moment they
  would be sent, after the rate limiter, when this replica can no longer be sure it holds its
  lease. Events, conditions and Unreserve's writes are not fenced: they never assign a pod.
- ``PodScheduled=False`` (reason ``Unschedulable`` or ``SchedulerError``) and
  ``status.nominatedNodeName`` are set with a strategic merge patch of ``pods/NAME/status``, and only
  when they change, as upstream's ``updatePod`` skips no-op updates.
"""

from __future__ import annotations

import logging
import socket
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.errors import ClientError, ConflictError, NotFoundError
from scheduler.kubeapi.client import KubeClient
from scheduler.logonce import CauseLog, cause_of
from scheduler.model import Pod
from scheduler.model.dra import FINALIZER, AllocationResult, ResourceClaim, parse_resource_claim
from scheduler.model.podgroup import PodGroup
from scheduler.model.volumes import SELECTED_NODE_ANNOTATION, PersistentVolume, PersistentVolumeClaim

__all__ = ["ApiSchedulerClient", "NotLeaderError"]

log = logging.getLogger("kopf_scheduler.client")
MAX_SERIES = 10_000


# The formatted second of the last ``_micro_time``: the Scheduled Events of a second (hundreds at
# full rate, one a pod) share it instead of each running ``strftime(gmtime(t))``. One (second,
# text) pair, replaced whole, so a thread never reads half an update.
_SECOND: list[tuple[int, str]] = [(-1, "")]


def _micro_time(t: float) -> str:
    """A ``metav1.MicroTime`` in RFC 3339 with microseconds (``2026-01-02T03:04:05.000006Z``)."""
    whole = int(t)
    second = _SECOND[0]
    if second[0] != whole:
        second = _SECOND[0] = (whole, time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)))
    return f"{second[1]}.{int(t % 1 * 1e6):06d}Z"


def _claim_path(namespace: str, name: str = "") -> str:
    base = f"/apis/resource.k8s.io/v1/namespaces/{namespace}/resourceclaims"
    return f"{base}/{name}" if name else base


def _conditional(claim: ResourceClaim) -> dict[str, Any]:
    """The metadata that makes a merge patch conditional on the claim as read (its uid too, so a
    claim re-created under the same name is never written)."""
    meta: dict[str, Any] = {}
    if claim.resource_version:
        meta["resourceVersion"] = claim.resource_version
    if claim.uid:
        meta["uid"] = claim.uid
    return meta


# The annotation upstream's GetBindVolumeToClaim sets on a PV the scheduler (a controller) binds.
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"


@dataclass
class _Series:
    namespace: str
    name: str
    count: int
    last_write: float


class NotLeaderError(ClientError):
    """A Binding or PreBind write refused before it was sent: this replica may have lost its lease."""


class ApiSchedulerClient:
    def __init__(self, api: KubeClient, *, series_interval: float = 30.0, instance: str | None = None) -> None:
        self.api = api
        # True while this replica may assign pods (the elector's fence); None: no leader election.
        self.fence: Callable[[], bool] | None = None
        self.series_interval = series_interval
        self.instance = instance or socket.gethostname()
        # pod uid → (reason, note) → series; by uid so a bound pod's series go in O(1).
        self._series: OrderedDict[str, dict[tuple[str, str], _Series]] = OrderedDict()
        self._condition: dict[str, tuple[str, str, str | None]] = {}
        self.events_posted = 0
        self.api_log = CauseLog(log)
        self.events_aggregated = 0

    def _fenced(self) -> None:
        if self.fence is not None and not self.fence():
            raise NotLeaderError("not sent: this replica may no longer hold its leader election lease")

    async def bind(self, pod: Pod, node_name: str) -> None:
        await self.api.request("POST", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/binding", {
            "apiVersion": "v1", "kind": "Binding",
            "metadata": {"name": pod.name, "namespace": pod.namespace, **({"uid": pod.uid} if pod.uid else {})},
            "target": {"apiVersion": "v1", "kind": "Node", "name": node_name}}, precondition=self._fenced,
            decode=False)
        self._condition.pop(pod.uid, None)

    async def report_scheduled(self, pod: Pod, node_name: str, message: str) -> None:
        self._series.pop(pod.uid, None)
        await self.event(pod.namespace, pod.name, pod.uid, pod.scheduler_name, "Normal", "Scheduled", "Binding",
                         message)

    async def annotate(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        await self.api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}",
                               {"metadata": {"annotations": dict(annotations)}},
                               content_type="application/merge-patch+json")

    async def bind_volume(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        # A merge patch carrying metadata.resourceVersion is conditional on it, as upstream's Update of
        # the assumed PV is: 409 when the PV controller (or another scheduler) changed it meanwhile.
        ref = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": claim.namespace,
               "name": claim.name, "uid": claim.uid, "resourceVersion": claim.resource_version}
        ref = {k: v for k, v in ref.items() if v}
        meta: dict[str, Any] = {"annotations": {BOUND_BY_CONTROLLER: "yes"}}
        if pv.resource_version:
            meta["resourceVersion"] = pv.resource_version
        await self.api.request("PATCH", f"/api/v1/persistentvolumes/{pv.name}",
                               {"metadata": meta, "spec": {"claimRef": ref}},
                               content_type="application/merge-patch+json", precondition=self._fenced)

    async def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        meta: dict[str, Any] = {"annotations": {SELECTED_NODE_ANNOTATION: node_name}}
        if claim.resource_version:
            meta["resourceVersion"] = claim.resource_version
        await self.api.request("PATCH", f"/api/v1/namespaces/{claim.namespace}/persistentvolumeclaims/{claim.name}",
                               {"metadata": meta}, content_type="application/merge-patch+json",
                               precondition=self._fenced)

    # --- ResourceClaims (DynamicResources) ------------------------------------------------------
    async def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        return parse_resource_claim(await self.api.request("GET", _claim_path(namespace, name)))

    async def add_claim_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        # A merge patch replaces the list: it carries every finalizer, conditional on the version read.
        finalizers = [*claim.finalizers, *(() if FINALIZER in claim.finalizers else (FINALIZER,))]
        got = await self.api.request("PATCH", _claim_path(claim.namespace, claim.name),
                                     {"metadata": {**_conditional(claim), "finalizers": finalizers}},
                                     content_type="application/merge-patch+json", precondition=self._fenced)
        return parse_resource_claim(got)

    async def reserve_claim(self, claim: ResourceClaim, pod: Pod, allocation: AllocationResult | None
                            ) -> ResourceClaim:
        status: dict[str, Any] = {"reservedFor": [*(r.to_json() for r in claim.reserved_for),
                                                  {"resource": "pods", "name": pod.name, "uid": pod.uid}]}
        if allocation is not None:
            status["allocation"] = allocation.to_json()
        got = await self.api.request("PATCH", _claim_path(claim.namespace, claim.name) + "/status",
                                     {"metadata": _conditional(claim), "status": status},
                                     content_type="application/merge-patch+json", precondition=self._fenced)
        return parse_resource_claim(got)

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        await self.api.request("PATCH", _claim_path(claim.namespace, claim.name) + "/status",
                               {"metadata": {"uid": claim.uid},
                                "status": {"reservedFor": [{"$patch": "delete", "uid": pod.uid}]}},
                               content_type="application/strategic-merge-patch+json")

    async def deallocate_claim(self, claim: ResourceClaim) -> None:
        await self.api.request("PATCH", _claim_path(claim.namespace, claim.name) + "/status",
                               {"metadata": _conditional(claim),
                                "status": {"allocation": None, "reservedFor": None, "devices": None}},
                               content_type="application/merge-patch+json")

    async def create_claim(self, body: Mapping[str, Any]) -> ResourceClaim:
        namespace = str((body.get("metadata") or {}).get("namespace") or "default")
        got = await self.api.request("POST", _claim_path(namespace),
                                     {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", **body},
                                     precondition=self._fenced)
        return parse_resource_claim(got)

    async def delete_claim(self, claim: ResourceClaim) -> None:
        meta: dict[str, Any] = {**_conditional(claim), "finalizers": [f for f in claim.finalizers if f != FINALIZER]}
        try:
            await self.api.request("PATCH", _claim_path(claim.namespace, claim.name), {"metadata": meta},
                                   content_type="application/merge-patch+json")
            await self.api.request("DELETE", _claim_path(claim.namespace, claim.name),
                                   {"apiVersion": "v1", "kind": "DeleteOptions",
                                    **({"preconditions": {"uid": claim.uid}} if claim.uid else {})})
        except NotFoundError:
            return

    async def set_extended_resource_claim_status(self, pod: Pod, claim_name: str,
                                                 request_mappings: Sequence[Mapping[str, str]]) -> None:
        await self.api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
                               {"status": {"extendedResourceClaimStatus": {
                                   "requestMappings": [dict(m) for m in request_mappings],
                                   "resourceClaimName": claim_name}}},
                               content_type="application/strategic-merge-patch+json", precondition=self._fenced)

    async def report_failure(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        await self.event(pod.namespace, pod.name, pod.uid, pod.scheduler_name, "Warning", "FailedScheduling",
                         "Scheduling", message)
        await self.set_condition(pod.namespace, pod.name, pod.uid, reason, message, nominated_node)

    async def report_pod_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        await self.event(pod.namespace, pod.name, pod.uid, pod.scheduler_name, type_, reason, action, note)

    async def set_pod_group_condition(self, group: PodGroup, condition: Mapping[str, object]) -> None:
        # status.conditions is a list map keyed by type: a strategic merge replaces that one entry.
        await self.api.request(
            "PATCH", f"/apis/scheduling.k8s.io/v1beta1/namespaces/{group.namespace}/podgroups/{group.name}/status",
            {"status": {"conditions": [dict(condition)]}}, content_type="application/strategic-merge-patch+json",
            precondition=self._fenced)

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        ns, name = victim.namespace, victim.name
        # Upstream's ExecutorPreemptor.Type() and UID(): the pod, or (workload-aware) its PodGroup.
        kind, by_uid = ("podgroup", group.uid) if group is not None else ("pod", preemptor.uid)
        cond = {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler",
                "message": f"{preemptor.scheduler_name}: preempting to accommodate a higher priority {kind}",
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
        try:
            await self.api.request("PATCH", f"/api/v1/namespaces/{ns}/pods/{name}/status",
                                   {"status": {"conditions": [cond]}},
                                   content_type="application/strategic-merge-patch+json")
            await self.api.request("DELETE", f"/api/v1/namespaces/{ns}/pods/{name}",
                                   {"apiVersion": "v1", "kind": "DeleteOptions",
                                    **({"preconditions": {"uid": victim.uid}} if victim.uid else {})})
        except NotFoundError:
            log.info("preemption victim %s/%s is already gone", ns, name)
            return
        except ConflictError:  # the uid precondition: a new pod took the name; ours is gone
            log.info("preemption victim %s/%s was replaced; not deleting the new pod", ns, name)
            return
        await self.event(ns, name, victim.uid, preemptor.scheduler_name, "Normal", "Preempted", "Preempting",
                         f"Preempted by {kind} {by_uid} on node {node_name}",
                         related=group if group is not None else preemptor)

    async def clear_nomination(self, pod: Pod) -> None:
        try:
            await self.api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
                                   {"status": {"nominatedNodeName": None}},
                                   content_type="application/strategic-merge-patch+json")
        except NotFoundError:
            return
        self._condition.pop(pod.uid, None)

    async def nominate(self, pod: Pod, node_name: str) -> None:
        # A binding-cycle write: fenced as the others, so a replica that lost the lease stops.
        await self.api.request("PATCH", f"/api/v1/namespaces/{pod.namespace}/pods/{pod.name}/status",
                               {"status": {"nominatedNodeName": node_name}},
                               content_type="application/strategic-merge-patch+json", precondition=self._fenced)

    async def report_invalid(self, namespace: str, name: str, uid: str, scheduler_name: str, message: str) -> None:
        """A pod the scheduler cannot read (the cluster let an invalid field through)."""
        await self.event(namespace, name, uid, scheduler_name, "Warning", "FailedScheduling", "Scheduling", message)
        await self.set_condition(namespace, name, uid, "SchedulerError", message, None)

    async def set_condition(self, namespace: str, name: str, uid: str, reason: str, message: str,
                            nominated_node: str | None) -> None:
        want = (reason, message, nominated_node)
        if self._condition.get(uid) == want:
            return
        status: dict[str, Any] = {"conditions": [{
            "type": "PodScheduled", "status": "False", "reason": reason, "message": message,
            "lastProbeTime": None, "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}]}
        if nominated_node is not None:
            status["nominatedNodeName"] = nominated_node or None
        try:
            await self.api.request("PATCH", f"/api/v1/namespaces/{namespace}/pods/{name}/status",
                                   {"status": status}, content_type="application/strategic-merge-patch+json")
        except NotFoundError:
            return
        self._condition[uid] = want
        if len(self._condition) > MAX_SERIES:
            self._condition.pop(next(iter(self._condition)))

    async def cluster_event(self, api_version: str, kind: str, name: str, uid: str, type_: str, reason: str,
                            action: str, note: str, controller: str = "kopf-scheduler") -> None:
        """An Event about a cluster-scoped object (a Node, a SchedulingProfile): in namespace
        ``default`` with no namespace in ``regarding``, as client-go's recorder writes it, so that
        ``kubectl describe`` (whose field selector has ``involvedObject.namespace=``) finds it."""
        now = time.time()
        body = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": f"{name}.{time.time_ns():x}", "namespace": "default"},
                "eventTime": _micro_time(now), "reportingController": controller,
                "reportingInstance": f"{controller}-{self.instance}", "action": action, "reason": reason,
                "type": type_, "note": note[:1024],
                "regarding": {"kind": kind, "apiVersion": api_version, "name": name, "uid": uid}}
        try:
            await self.api.request("POST", "/apis/events.k8s.io/v1/namespaces/default/events", body)
        except ClientError as e:
            self.api_log.report(f"post {reason} event: {cause_of(e)}", "cannot post %s event for %s %s: %s",
                                 reason, kind, name, e)
            return
        self.events_posted += 1

    async def event(self, namespace: str, name: str, uid: str, controller: str, type_: str, reason: str,
                    action: str, note: str, *, related: Pod | PodGroup | None = None) -> None:
        now = time.time()
        key = (reason, note)
        per_pod = self._series.get(uid, {})
        series = per_pod.get(key)
        if series is not None:
            series.count += 1
            self.events_aggregated += 1
            self._series.move_to_end(uid)
            if now - series.last_write < self.series_interval:
                return
            try:
                await self.api.request(
                    "PATCH", f"/apis/events.k8s.io/v1/namespaces/{series.namespace}/events/{series.name}",
                    {"series": {"count": series.count, "lastObservedTime": _micro_time(now)}},
                    content_type="application/merge-patch+json")
                series.last_write = now
                return
            except NotFoundError:      # the event expired or was deleted: start a new one
                del per_pod[key]
        ev_name = f"{name}.{time.time_ns():x}"
        body = {"apiVersion": "events.k8s.io/v1", "kind": "Event",
                "metadata": {"name": ev_name, "namespace": namespace},
                "eventTime": _micro_time(now), "reportingController": controller,
                "reportingInstance": f"{controller}-{self.instance}", "action": action, "reason": reason,
                "type": type_, "note": note[:1024],
                "regarding": {"kind": "Pod", "apiVersion": "v1", "namespace": namespace, "name": name, "uid": uid}}
        if isinstance(related, PodGroup):
            body["related"] = {"kind": "PodGroup", "apiVersion": "scheduling.k8s.io/v1beta1",
                               "namespace": related.namespace, "name": related.name, "uid": related.uid}
        elif related is not None:
            body["related"] = {"kind": "Pod", "apiVersion": "v1", "namespace": related.namespace,
                               "name": related.name, "uid": related.uid}
        try:
            await self.api.request("POST", f"/apis/events.k8s.io/v1/namespaces/{namespace}/events", body,
                                   decode=False)
        except ClientError as e:
            self.api_log.report(f"post {reason} event: {cause_of(e)}", "cannot post %s event for %s/%s: %s",
                                 reason, namespace, name, e)
            return
        self.events_posted += 1
        if reason != "Scheduled":
            self._series.setdefault(uid, {})[key] = _Series(namespace, ev_name, 1, now)
            self._series.move_to_end(uid)
            while len(self._series) > MAX_SERIES:
                self._series.popitem(last=False)
