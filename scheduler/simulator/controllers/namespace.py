"""The namespace controller (``pkg/controller/namespace``): a deleted namespace is Terminating, then
everything in it is deleted, then the namespace itself.
"""

from __future__ import annotations

import contextlib

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter

__all__ = ["NamespaceController"]


class NamespaceController(Controller):
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

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)

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
