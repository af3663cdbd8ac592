"""The kubelets of all nodes (``pkg/kubelet``), reduced to what a scheduler observes: a bound pod
becomes Running and Ready (Initialized, ContainersReady, a pod IP, container statuses)
``running_after`` seconds after its Binding, once its resource claims are ready; a Job's pod
completes after ``completion_seconds``; a pod deleted with a grace period is held, its
``deletionTimestamp`` set (now plus the grace period), for ``min(grace, termination_seconds)`` seconds
and then removed; meanwhile its containers, and so the pod, are no longer Ready.

A running pod's container statuses carry what the kubelet allocated and actuated
(``allocatedResources`` and ``resources``: the spec's requests, and its cpu and memory requests and
limits), and the pod's ``status.allocatedResources`` and ``status.resources`` when it has pod-level
resources. A write of ``pods/resize`` is applied as the kubelet's allocation manager does it
(``pkg/kubelet/allocation``, InPlacePodVerticalScaling): the new requests must fit the node (else the
``PodResizePending`` condition, reason ``Infeasible`` beyond the node's allocatable, ``Deferred`` beyond
what its other pods leave, with the kubelet's messages; a deferred resize is retried when a pod on the
node goes); an admitted resize is allocated at once (``PodResizeInProgress``) and actuated
``running_after`` seconds later, when the condition goes.

Every node is one of these kubelets': it registers with the labels the kubelet's ``initialNode`` gives
(``pkg/kubelet/kubelet_node_status.go``): the hostname, ``kubernetes.io/os`` and ``/arch`` and their
``beta.kubernetes.io`` twins, which labels the node was created with are never overwritten. It declares
the node features (``status.declaredFeatures``, KEP-5328) a 1.37 kubelet with ``KUBELET_CONFIG`` discovers
from the registry the scheduler infers from (``scheduler/model/nodefeatures.py``), unless the node was
created with its own list (a dump or a snapshot of a real cluster keeps what its kubelets declared).
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.errors import ParseError
from scheduler.model import parse_node, parse_pod
from scheduler.model.nodefeatures import NodeConfiguration, discover_node_features
from scheduler.model.podresources import RequestOptions
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.controllers.disruption import DisruptionController
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.store import Event

__all__ = ["KUBELET_CONFIG", "Kubelet", "declared_features", "node_labels"]

Obj = dict[str, Any]

# The platform every simulated kubelet reports (goruntime.GOOS / GOARCH), as the node's nodeInfo does.
OS, ARCH = "linux", "amd64"
RESIZE_PENDING, RESIZE_IN_PROGRESS = "PodResizePending", "PodResizeInProgress"
_SPEC_ONLY = RequestOptions(use_status_resources=False)
_RESIZED = ("cpu", "memory")


def _resources(c: Obj) -> Obj:
    r = c.get("resources")
    return r if isinstance(r, dict) else {}


def _actuated(resources: Obj) -> Obj:
    """``ContainerStatus.resources`` as the runtime reports it: the cpu and memory requests and limits."""
    out: Obj = {}
    for kind in ("requests", "limits"):
        got = {k: v for k, v in (resources.get(kind) or {}).items() if k in _RESIZED}
        if got:
            out[kind] = got
    return out


def _with_resources(status: Obj, spec: Obj, *, allocate: bool, actuate: bool) -> None:
    """Set each running container's allocated and/or actuated resources from the spec, and the
    pod-level twins when the pod has pod-level resources."""
    by_name = {c.get("name"): c for c in spec.get("containers") or []}
    for cs in status.get("containerStatuses") or []:
        c = by_name.get(cs.get("name"))
        if c is None:
            continue
        if allocate:
            cs["allocatedResources"] = copy.deepcopy(_resources(c).get("requests") or {})
        if actuate:
            cs["resources"] = _actuated(_resources(c))
    pod_level = spec.get("resources")
    if isinstance(pod_level, dict) and (pod_level.get("requests") or pod_level.get("limits")):
        if allocate:
            status["allocatedResources"] = copy.deepcopy(pod_level.get("requests") or {})
        if actuate:
            status["resources"] = _actuated(pod_level)


def _condition(kind: str, reason: str = "", message: str = "") -> Obj:
    out: Obj = {"type": kind, "status": "True", "lastProbeTime": None, "lastTransitionTime": now_iso()}
    if reason:
        out["reason"] = reason
    if message:
        out["message"] = message
    return out


# A default 1.37 kubelet, as far as node features go: cpuManagerPolicy "none" (its default), cgroup v2,
# and of the gates the registry's features read only InPlacePodLevelResourcesVerticalScaling (beta and on
# in 1.36) on; the alpha ones stay off.
KUBELET_CONFIG = NodeConfiguration(feature_gates=frozenset({"InPlacePodLevelResourcesVerticalScaling"}),
                                   cpu_manager_policy="none", cgroups_v2=True)


def declared_features() -> list[str]:
    """What every simulated kubelet declares (upstream's ``DiscoverNodeFeatures``: sorted)."""
    return discover_node_features(KUBELET_CONFIG)


def node_labels(name: str) -> dict[str, str]:
    """The labels the kubelet registers its node with (``initialNode``): v1.LabelHostname is the hostname,
    which ``nodeutil.GetHostname`` trims and lowercases; the stable and the beta os/arch labels."""
    return {"kubernetes.io/hostname": name.strip().lower(), "kubernetes.io/os": OS, "kubernetes.io/arch": ARCH,
            "beta.kubernetes.io/os": OS, "beta.kubernetes.io/arch": ARCH}


class Kubelet(Controller):
    """The kubelets of all nodes: run bound pods (when ``running_after`` is set) and finish their termination."""

    def __init__(self, api: ClusterWriter, timers: Timers, disruption: DisruptionController, *,
                 running_after: float | None, termination_seconds: float, completion_seconds: float = 2.0) -> None:
        super().__init__(api, timers)
        self.disruption = disruption
        self.running_after = running_after
        self.termination_seconds = termination_seconds
        self.completion_seconds = completion_seconds
        # node -> uid -> (namespace, name) of the pods whose resize is Deferred there, kept from the
        # pods' events, so a pod leaving a node retries that node's few resizes instead of scanning
        # every pod in the cluster (a scan per deletion made a namespace of 5,000 pods quadratic).
        self._deferred: dict[str, dict[str, tuple[str, str]]] = {}

    def register(self, node: Obj) -> None:
        """A node being created is this kubelet's registration: its default labels added, never replacing
        one the node already has."""
        meta = node.get("metadata")
        if not isinstance(meta, dict) or not isinstance(meta.get("labels") or {}, dict):
            return      # validation answers for a malformed object
        defaults = node_labels(str(meta.get("name") or ""))
        if len(defaults["kubernetes.io/hostname"]) > 63:
            # No kubelet registers under a hostname longer than a label value: such a node was a client's.
            del defaults["kubernetes.io/hostname"]
        meta["labels"] = {**defaults, **(meta.get("labels") or {})}
        status = node.get("status")
        if status is None:
            status = node["status"] = {}
        if isinstance(status, dict) and "declaredFeatures" not in status:
            status["declaredFeatures"] = declared_features()

    def pod_bound(self, namespace: str, name: str, uid: str) -> None:
        if self.running_after is not None:
            self.timers.later(self.running_after, lambda: self._run(namespace, name, uid))

    def terminates(self, pod: Obj, grace: Any) -> bool:
        """Whether deleting ``pod`` with ``grace`` waits for this kubelet (a bound pod, a grace period)."""
        return bool((pod.get("spec") or {}).get("nodeName")) and self.termination_seconds > 0 and bool(grace)

    def awaits(self, pod: Obj) -> bool:
        """Whether a pod with a deletionTimestamp stays stored until this kubelet removes it."""
        return bool((pod.get("spec") or {}).get("nodeName")) and \
            self.termination_seconds > 0 and pod["metadata"].get("deletionGracePeriodSeconds", 0) > 0

    def pod_deleting(self, namespace: str, name: str, uid: str, grace: Any) -> None:
        self.timers.later(0, lambda: self._stop(namespace, name, uid))
        self.timers.later(min(float(grace), self.termination_seconds), lambda: self._delete(namespace, name, uid))

    def _stop(self, namespace: str, name: str, uid: str) -> None:
        """A terminating pod's containers are being killed: not ready, and so neither is the pod, with the
        reason and message of ``status.GeneratePodReadyCondition`` (``pkg/kubelet/status/generate.go``)."""
        rt = self.api.rt("", "v1", "pods")
        pod = self.api.store.get(rt, namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid:
            return
        status = dict(pod.get("status") or {})
        conds = status.get("conditions") or []
        if not any(c.get("type") in ("Ready", "ContainersReady") and c.get("status") == "True" for c in conds):
            return
        ts = now_iso()
        names = " ".join(c["name"] for c in (pod.get("spec") or {}).get("containers") or [])
        status["conditions"] = [{**c, "status": "False", "reason": "ContainersNotReady",
                                 "message": f"containers with unready status: [{names}]", "lastTransitionTime": ts}
                                if c.get("type") in ("Ready", "ContainersReady") else c for c in conds]
        status["containerStatuses"] = [{**c, "ready": False} for c in status.get("containerStatuses") or []]
        self.api.write(rt, pod, {**pod, "status": status})
        self.disruption.mark(namespace)

    def _delete(self, namespace: str, name: str, uid: str) -> None:
        rt = self.api.rt("", "v1", "pods")
        cur = self.api.store.get(rt, namespace, name)
        if cur is not None and cur["metadata"]["uid"] == uid and not cur["metadata"].get("finalizers"):
            self.api.remove(rt, cur)

    # --- in-place resize (pods/resize) -------------------------------------------------------------
    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: it keeps the index of deferred resizes, and a pod leaving a node (deleted,
        or finished) frees what it held there, so the node's deferred resizes are retried (on a later
        turn: listeners never write)."""
        if store != "/pods":
            return
        node = (ev.obj.get("spec") or {}).get("nodeName")
        self._index_deferred(ev, str(node or ""))
        if not node:
            return
        finished = (ev.obj.get("status") or {}).get("phase") in ("Succeeded", "Failed") and (
            ev.old is None or (ev.old.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
        if (ev.type == "DELETED" or finished) and self._deferred.get(str(node)):
            self.timers.later(0, lambda: self._retry_deferred(str(node)))

    def _index_deferred(self, ev: Event, node: str) -> None:
        meta = ev.obj.get("metadata") or {}
        uid = str(meta.get("uid") or "")
        old_node = str(((ev.old or {}).get("spec") or {}).get("nodeName") or "")
        for n in {node, old_node} - {""}:
            held = self._deferred.get(n)
            if held is not None:
                held.pop(uid, None)
                if not held:
                    del self._deferred[n]
        deferred = any(c.get("type") == RESIZE_PENDING and c.get("reason") == "Deferred"
                       for c in (ev.obj.get("status") or {}).get("conditions") or [])
        if ev.type != "DELETED" and node and uid and deferred:
            self._deferred.setdefault(node, {})[uid] = (str(meta.get("namespace") or ""), str(meta.get("name")))

    def pod_resized(self, namespace: str, name: str, uid: str) -> None:
        self.timers.later(0, lambda: self._resize(namespace, name, uid))

    def _retry_deferred(self, node: str) -> None:
        """A pod left the node: the deferred resizes there are tried again (the allocation manager's
        retry of pending resizes)."""
        for uid, (namespace, name) in list(self._deferred.get(node, {}).items()):
            self.pod_resized(namespace, name, uid)

    def _pending_reason(self, pod: Obj) -> tuple[str, str]:
        """Whether the resized pod fits its node: ("", "") if so, else (reason, message) as the
        kubelet words them (``Node didn't have enough capacity: cpu, requested: 8000, capacity:
        4000`` for Infeasible; ``Node didn't have enough resource: ...`` for Deferred)."""
        node_name = str(pod["spec"].get("nodeName") or "")
        node_obj = self.api.store.get(self.api.rt("", "v1", "nodes"), "", node_name)
        if node_obj is None:
            return "", ""
        alloc = parse_node(node_obj).allocatable
        want = parse_pod(pod, _SPEC_ONLY).requests
        used: dict[str, int] = {}
        for p in self.api.store.bucket("/pods").items(None):
            if (p.get("spec") or {}).get("nodeName") != node_name or p["metadata"]["uid"] == pod["metadata"]["uid"] \
                    or (p.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                continue
            try:
                requests = parse_pod(p).requests
            except ParseError:
                continue        # a pod the scheduler cannot read holds what the kubelet never admitted
            for k, v in requests.items():
                used[k] = used.get(k, 0) + v
        for res in _RESIZED:
            if want.get(res, 0) > alloc.get(res, 0):
                return "Infeasible", (f"Node didn't have enough capacity: {res}, requested: {want.get(res, 0)}, "
                                      f"capacity: {alloc.get(res, 0)}")
        for res in _RESIZED:
            if want.get(res, 0) + used.get(res, 0) > alloc.get(res, 0):
                return "Deferred", (f"Node didn't have enough resource: {res}, requested: {want.get(res, 0)}, "
                                    f"used: {used.get(res, 0)}, capacity: {alloc.get(res, 0)}")
        return "", ""

    def _resize(self, namespace: str, name: str, uid: str) -> None:
        """Allocate a resize (or mark it pending), then actuate it ``running_after`` seconds later."""
        rt = self.api.rt("", "v1", "pods")
        pod = self.api.store.get(rt, namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["metadata"].get("deletionTimestamp"):
            return
        status = copy.deepcopy(pod.get("status") or {})
        if status.get("phase") != "Running":
            return              # not started: _run allocates the spec as it is
        reason, message = self._pending_reason(pod)
        conds = [c for c in status.get("conditions") or [] if c.get("type") not in (RESIZE_PENDING,
                                                                                     RESIZE_IN_PROGRESS)]
        if reason:
            status["conditions"] = [*conds, _condition(RESIZE_PENDING, reason, message)]
            self.api.write(rt, pod, {**pod, "status": status})
            return
        _with_resources(status, pod["spec"], allocate=True, actuate=False)
        status["conditions"] = [*conds, _condition(RESIZE_IN_PROGRESS)]
        self.api.write(rt, pod, {**pod, "status": status})
        self.timers.later(self.running_after or 0.0, lambda: self._actuate(namespace, name, uid))

    def _actuate(self, namespace: str, name: str, uid: str) -> None:
        rt = self.api.rt("", "v1", "pods")
        pod = self.api.store.get(rt, namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["metadata"].get("deletionTimestamp"):
            return
        status = copy.deepcopy(pod.get("status") or {})
        _with_resources(status, pod["spec"], allocate=False, actuate=True)
        status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != RESIZE_IN_PROGRESS]
        self.api.write(rt, pod, {**pod, "status": status})

    def _run(self, namespace: str, name: str, uid: str) -> None:
        rt = self.api.rt("", "v1", "pods")
        pod = self.api.store.get(rt, namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["metadata"].get("deletionTimestamp"):
            return
        if ((pod.get("spec") or {}).get("resourceClaims") or (pod.get("status") or {}).get(
                "extendedResourceClaimStatus")) and not self.timers.claims.claims_ready(pod):
            # PrepareResources fails until each claim is allocated and reserved for the pod: wait.
            self.timers.claims.wait(pod, lambda: self._run(namespace, name, uid))
            return
        ts = now_iso()
        n = self.api.store.rv
        status = dict(pod.get("status") or {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") not in ("Ready", "ContainersReady",
                                                                                  "Initialized")]
        for t in ("Initialized", "Ready", "ContainersReady"):
            conds.append({"type": t, "status": "True", "lastProbeTime": None, "lastTransitionTime": ts})
        status.update({"phase": "Running", "conditions": conds, "startTime": ts, "hostIP": "10.0.0.1",
                       "podIP": f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.{n & 255}",
                       "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "ready": True,
                                              "started": True, "restartCount": 0, "imageID": "",
                                              "state": {"running": {"startedAt": ts}}}
                                             for c in pod["spec"].get("containers") or []]})
        _with_resources(status, pod["spec"], allocate=True, actuate=True)
        self.api.write(rt, pod, {**pod, "status": status})
        self.disruption.mark(namespace)
        if any(r.get("kind") == "Job" and r.get("controller") for r in pod["metadata"].get("ownerReferences") or []):
            self.timers.later(self.completion_seconds, lambda: self._complete(namespace, name, uid))

    def _complete(self, namespace: str, name: str, uid: str) -> None:
        """A Job's pod whose containers exited 0: Succeeded, not Ready, its resources free again."""
        rt = self.api.rt("", "v1", "pods")
        pod = self.api.store.get(rt, namespace, name)
        if pod is None or pod["metadata"]["uid"] != uid or pod["metadata"].get("deletionTimestamp"):
            return
        ts = now_iso()
        status = dict(pod.get("status") or {})
        status["phase"] = "Succeeded"
        status["conditions"] = [{**c, "status": "False", "reason": "PodCompleted", "lastTransitionTime": ts}
                                if c.get("type") in ("Ready", "ContainersReady") else c
                                for c in status.get("conditions") or []]
        status["containerStatuses"] = [{**c, "ready": False, "started": False, "state": {"terminated": {
            "exitCode": 0, "reason": "Completed", "startedAt": status.get("startTime"), "finishedAt": ts}}}
            for c in status.get("containerStatuses") or []]
        self.api.write(rt, pod, {**pod, "status": status})
        self.disruption.mark(namespace)
