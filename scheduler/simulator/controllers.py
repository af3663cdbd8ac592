"""The simulated controllers: the part of a cluster, beside kube-apiserver, that a scheduler can observe.

``server.py`` serves HTTP and keeps the storage semantics; what would run in kube-controller-manager,
in a kubelet, or behind the ``pods/eviction`` subresource lives here. Each controller writes through
the server's storage paths (``ApiServer.write`` and ``ApiServer.remove``), so its writes take
resourceVersions and reach watchers like any client's. Each stands for one upstream component:

- ``Kubelet`` (``pkg/kubelet``): when ``pod_running_after`` is set, a bound pod becomes Running and
  Ready (Initialized, ContainersReady, a pod IP, container statuses) that many seconds after its
  Binding, as the pod's kubelet would report it. A bound pod deleted with a grace period is held,
  with its ``deletionTimestamp`` set, for ``min(grace, pod_termination_seconds)`` seconds and then
  removed, as the kubelet removes a pod once its containers have stopped (default 0: at once).
- ``VolumeController`` (``volumes.py``): the PersistentVolume controller, an external provisioner
  (``provision_seconds`` after a claim asks; negative: never) and the PV/PVC protection controllers.
- ``ResourceClaimController`` and ``GpuDriver`` (``devices.py``): the resourceclaim controller (claims
  from templates, reservations cleaned, deallocation), and a simulated DRA driver publishing
  ``gpus_per_node`` GPUs per node. The kubelet starts a pod with claims only once they are allocated
  and reserved for it.
- ``NamespaceController`` (``pkg/controller/namespace``): a deleted namespace is Terminating, then
  everything in it is deleted, then the namespace itself.
- ``DisruptionController`` (``pkg/controller/disruption``): keeps each PodDisruptionBudget's status
  (``expectedPods``, ``currentHealthy``, ``desiredHealthy``, ``disruptionsAllowed``,
  ``observedGeneration``) current. Pod events and PDB writes mark a namespace dirty; a loop recounts
  dirty namespaces every 100 ms.
- ``Eviction`` (``pkg/registry/core/pod/storage/eviction.go``, kube-apiserver's own ``pods/eviction``
  REST handler rather than a controller): refuses with 429 an eviction that would take a healthy pod
  below its budget, deletes otherwise.

``Controllers`` owns their timers and tasks: started and stopped with the aiohttp application.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError, not_found
from scheduler.simulator.devices import GpuDriver, ResourceClaimController
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.selectors import stored_label_selector
from scheduler.simulator.store import Event
from scheduler.simulator.volumes import VolumeController
from scheduler.simulator.workloads import GarbageCollector, WorkloadControllers

if TYPE_CHECKING:
    from scheduler.model.selectors import LabelSelector
    from scheduler.simulator.server import ApiServer

__all__ = ["Controllers", "DisruptionController", "Eviction", "Kubelet", "NamespaceController"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]


class Controllers:
    """The simulated controller manager and kubelet of one ``ApiServer``, with their timers and tasks."""

    def __init__(self, api: ApiServer, *, pod_running_after: float | None, pod_termination_seconds: float,
                 pod_completion_seconds: float = 2.0, provision_seconds: float = 0.2, gpus_per_node: int = 0,
                 gpu_attributes: Obj | None = None) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self.disruption = DisruptionController(api, pods_become_ready=pod_running_after is not None)
        self.kubelet = Kubelet(api, self, self.disruption, running_after=pod_running_after,
                               termination_seconds=pod_termination_seconds, completion_seconds=pod_completion_seconds)
        self.workloads = WorkloadControllers(api, self)
        self.volumes = VolumeController(api, self, provision_seconds=provision_seconds)
        self.claims = ResourceClaimController(api, self)
        self.gpus = GpuDriver(api, self, gpus_per_node=gpus_per_node, attributes=gpu_attributes)
        self.gc = GarbageCollector(api, self)
        self.namespaces = NamespaceController(api, self)
        self.eviction = Eviction(api, self.disruption)

    def start(self) -> None:
        self.spawn(self.disruption.run())

    def stop(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        for h in list(self._timers):
            h.cancel()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def later(self, delay: float, fn: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def run() -> None:
            self._timers.discard(handle)
            try:
                fn()
            except ApiError:
                pass
            except Exception:
                log.exception("simulated controller failed")
        handle = loop.call_later(delay, run)
        self._timers.add(handle)


class Kubelet:
    """The kubelets of all nodes: run bound pods (when ``running_after`` is set) and finish their termination."""

    def __init__(self, api: ApiServer, timers: Controllers, disruption: DisruptionController, *,
                 running_after: float | None, termination_seconds: float, completion_seconds: float = 2.0) -> None:
        self.api = api
        self.timers = timers
        self.disruption = disruption
        self.running_after = running_after
        self.termination_seconds = termination_seconds
        self.completion_seconds = completion_seconds

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
        self.timers.later(min(float(grace), self.termination_seconds), lambda: self._delete(namespace, name, uid))

    def _delete(self, namespace: str, name: str, uid: str) -> None:
        rt = self.api.rt("", "v1", "pods")
        cur = self.api.store.get(rt, namespace, name)
        if cur is not None and cur["metadata"]["uid"] == uid and not cur["metadata"].get("finalizers"):
            self.api.remove(rt, cur)

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


class NamespaceController:
    """Namespace deletion as kube-controller-manager's namespace controller runs it.

    A deleted namespace turns Terminating at once (``server.delete``); this controller then, after
    ``START_DELAY`` (the controller's queue and discovery: on a real cluster seconds, never the same
    instant, so ``kubectl delete -k`` still finds the namespace's objects to delete), deletes every
    object in it *through the API's own delete*: finalizers hold an object and a pod's grace period
    holds it until its kubelet confirms. While anything remains it retries every ``RETRY``; when the
    namespace is empty it drops its ``kubernetes`` finalizer (``spec.finalizers``) and the namespace
    goes, unless ``metadata.finalizers`` still hold it.
    """

    START_DELAY = 1.0
    RETRY = 0.5

    def __init__(self, api: ApiServer, timers: Controllers) -> None:
        self.api = api
        self.timers = timers

    def namespace_deleting(self, name: str) -> None:
        self.timers.later(self.START_DELAY, lambda: self._finish(name))

    def _finish(self, name: str) -> None:
        api = self.api
        nrt = api.rt("", "v1", "namespaces")
        ns = api.store.get(nrt, "", name)
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining = 0
        for rt in list(api.registry.by_path.values()):
            if not rt.namespaced or rt.to_external or "delete" not in rt.verbs:
                continue
            for o in list(api.store.bucket(rt.store).items(name)):
                remaining += 1
                if not o["metadata"].get("deletionTimestamp"):
                    with contextlib.suppress(ApiError):   # gone meanwhile, or refused: retried
                        api.delete(rt, name, o["metadata"]["name"], {})
        if remaining:
            self.timers.later(self.RETRY, lambda: self._finish(name))
            return
        ns = api.store.get(nrt, "", name)
        if ns is None:
            return
        if (ns.get("spec") or {}).get("finalizers"):
            ns = api.write(nrt, ns, {**ns, "spec": {**ns["spec"], "finalizers": []}})
        if not ns["metadata"].get("finalizers"):
            api.remove(nrt, ns)


class DisruptionController:
    """PodDisruptionBudget status, recounted for the namespaces whose pods or budgets changed."""

    def __init__(self, api: ApiServer, *, pods_become_ready: bool) -> None:
        self.api = api
        # With a kubelet that makes pods Ready, healthy means Ready; without one, bound and not finished.
        self.pods_become_ready = pods_become_ready
        self.dirty: set[str] = set()

    def mark(self, namespace: str) -> None:
        self.dirty.add(namespace)

    def on_event(self, store: str, ev: Event) -> None:
        """A store listener: a pod event marks its namespace, when any budget exists."""
        if store == "/pods" and self.api.store.bucket("policy/poddisruptionbudgets").objects:
            self.dirty.add(ev.obj["metadata"].get("namespace", ""))

    def healthy(self, pod: Obj) -> bool:
        if pod["metadata"].get("deletionTimestamp") or not (pod.get("spec") or {}).get("nodeName"):
            return False
        if not self.pods_become_ready:
            return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")
        return any(c.get("type") == "Ready" and c.get("status") == "True"
                   for c in (pod.get("status") or {}).get("conditions") or [])

    def numbers(self, pdb: Obj) -> tuple[int, int, int, int]:
        """(expected, currentHealthy, desiredHealthy, disruptionsAllowed) as the disruption controller counts."""
        ns = pdb["metadata"].get("namespace", "")
        sel = stored_label_selector((pdb.get("spec") or {}).get("selector"))
        pods = [p for p in self.api.store.bucket("/pods").items(ns) if _matches(sel, p)
                and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
        expected = len(pods)
        healthy = sum(1 for p in pods if self.healthy(p))
        spec = pdb.get("spec") or {}
        if "minAvailable" in spec:
            desired = _int_or_percent(spec["minAvailable"], expected)
        elif "maxUnavailable" in spec:
            desired = max(0, expected - _int_or_percent(spec["maxUnavailable"], expected))
        else:
            desired = expected
        return expected, healthy, desired, max(0, healthy - desired)

    async def run(self) -> None:
        api = self.api
        prt = api.rt("policy", "v1", "poddisruptionbudgets")
        while True:
            await asyncio.sleep(0.1)
            dirty, self.dirty = self.dirty, set()
            for ns in dirty:
                for pdb in list(api.store.bucket(prt.store).items(ns)):
                    expected, healthy, desired, allowed = self.numbers(pdb)
                    st = dict(pdb.get("status") or {})
                    want = {"expectedPods": expected, "currentHealthy": healthy, "desiredHealthy": desired,
                            "disruptionsAllowed": allowed, "observedGeneration": pdb["metadata"].get("generation", 1)}
                    if any(st.get(k) != v for k, v in want.items()):
                        st.update(want)
                        try:
                            api.write(prt, pdb, {**pdb, "status": st})
                        except ApiError:        # the store is full: the controller retries with the next change
                            self.dirty.add(ns)


class Eviction:
    """``POST pods/NAME/eviction``: a delete that respects the pod's disruption budget."""

    def __init__(self, api: ApiServer, disruption: DisruptionController) -> None:
        self.api = api
        self.disruption = disruption

    def evict(self, namespace: str, name: str, body: Any) -> Obj:
        api = self.api
        rt = api.rt("", "v1", "pods")
        pod = api.store.get(rt, namespace, name)
        if pod is None:
            raise not_found(rt, name)
        opts = (body or {}).get("deleteOptions") or {}
        ok: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
        if not pod["spec"].get("nodeName") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed") or \
                pod["metadata"].get("deletionTimestamp"):
            api.delete(rt, namespace, name, opts)
            return ok
        prt = api.rt("policy", "v1", "poddisruptionbudgets")
        pdbs = [p for p in api.store.bucket(prt.store).items(namespace)
                if _matches(stored_label_selector((p.get("spec") or {}).get("selector")), pod)]
        if len(pdbs) > 1:
            raise ApiError(500, "InternalError", "This pod has more than one PodDisruptionBudget, which the eviction "
                                                 "subresource does not support.")
        if pdbs:
            pdb = pdbs[0]
            _, healthy, desired, allowed = self.disruption.numbers(pdb)
            if self.disruption.healthy(pod) and allowed <= 0:
                msg = (f"The disruption budget {pdb['metadata']['name']} needs {desired} healthy pods and has "
                       f"{healthy} currently")
                raise ApiError(429, "TooManyRequests", "Cannot evict pod as it would violate the pod's disruption "
                               "budget.", {"causes": [{"reason": "DisruptionBudget", "message": msg}]})
        api.delete(rt, namespace, name, opts)
        self.disruption.mark(namespace)
        return ok


def _int_or_percent(v: Any, total: int) -> int:
    if isinstance(v, str) and v.endswith("%"):
        return -(-int(v[:-1]) * total // 100)
    return int(v)


def _matches(selector: LabelSelector | None, obj: Obj) -> bool:
    """A PDB's selector against an object's labels: no selector matches nothing, an empty one everything."""
    return selector is not None and selector.matches(obj["metadata"].get("labels") or {})
