"""DELETE (``endpoints/handlers/delete.go`` and the generic store's ``Delete``): preconditions, a pod's
grace period, finalizers and propagation policies (the garbage collector's finalizers), the kubelet's
hold of a running pod and the namespace controller's of a namespace, else removal.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from scheduler.simulator.apierrors import conflict, invalid, not_found
from scheduler.simulator.handlers.base import Request, check_dry_run, check_resource_version
from scheduler.simulator.handlers.list import ListHandler
from scheduler.simulator.interfaces import FOREGROUND_FINALIZER, ORPHAN_FINALIZER
from scheduler.simulator.registry.meta import iso_after
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.store import external

__all__ = ["DeleteHandler"]

Obj = dict[str, Any]


class DeleteHandler(ListHandler):
    """DELETE of an object or a collection."""

    def delete(self, rt: ResourceType, namespace: str, name: str, options: Any, *, dry: bool = False,
               ) -> tuple[int, Obj]:
        opts = options if isinstance(options, dict) else {}
        if opts:
            # With a body, the DeleteOptions are the body's alone and the query is not read
            # (handlers.DeleteResource): ``kubectl delete --dry-run=server`` sends its dryRun there.
            sent = opts.get("dryRun") or []
            check_dry_run([str(v) for v in sent] if isinstance(sent, list) else [str(sent)], "DeleteOptions")
            dry = "All" in sent
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        _check_preconditions(rt, name, old, opts.get("preconditions") or {})
        if dry:
            return 200, external(rt, old)
        grace = opts.get("gracePeriodSeconds")
        if rt.store == "/pods":
            grace = _pod_grace(old, grace)
        meta = old["metadata"]
        if meta.get("deletionTimestamp"):
            return 200, external(rt, old)
        policy = _propagation_policy(opts)
        # Foreground and Orphan hold the object with the garbage collector's finalizer until it has
        # deleted (or released) the dependents (controllers.garbagecollector).
        gc_finalizer = {"Foreground": FOREGROUND_FINALIZER, "Orphan": ORPHAN_FINALIZER}.get(
            str(policy)) if self.controllers.gc.dependents.get(str(meta.get("uid"))) else None
        kubelet_holds = rt.store == "/pods" and self.controllers.kubelet.terminates(old, grace)
        if meta.get("finalizers") or rt.plural == "namespaces" or kubelet_holds or gc_finalizer:
            return 200, external(rt, self._mark_deleting(rt, namespace, name, old, grace, gc_finalizer,
                                                         kubelet_holds))
        self.remove(rt, old)
        return 200, external(rt, old)

    def _mark_deleting(self, rt: ResourceType, namespace: str, name: str, old: Obj, grace: Any,
                       gc_finalizer: str | None, kubelet_holds: bool) -> Obj:
        """A graceful delete: the deletionTimestamp set (and the garbage collector's finalizer added), and
        the controller that holds the object told; what is left is theirs to remove."""
        meta = old["metadata"]
        new = dict(old)
        period = max(int(grace or 0), 0) if rt.store == "/pods" else 0
        # rest.BeforeDelete: the deletionTimestamp is now plus the grace period, when the object should be gone.
        new["metadata"] = {**meta, "deletionTimestamp": iso_after(period), "deletionGracePeriodSeconds": period}
        if int(meta.get("generation") or 0) > 0:
            # BeforeDelete and markAsDeleting: the first deletion bumps a generation that is set, so the
            # object's controllers see the change of intent.
            new["metadata"]["generation"] = int(meta["generation"]) + 1
        if gc_finalizer and gc_finalizer not in (meta.get("finalizers") or ()):
            new["metadata"]["finalizers"] = [*(meta.get("finalizers") or ()), gc_finalizer]
        if rt.plural == "namespaces":
            new["status"] = {**old.get("status", {}), "phase": "Terminating"}
        out = self.write(rt, old, new)
        if rt.plural == "namespaces":
            self.controllers.namespaces.namespace_deleting(name)
        elif kubelet_holds:
            self.controllers.kubelet.pod_deleting(namespace, name, meta["uid"], grace)
        return out

    def delete_collection(self, request: Request, rt: ResourceType, namespace: str | None,
                          dry: bool) -> web.Response:
        match = self._matchers(request, rt)
        victims = [o for o in self.store.bucket(rt.store).items(namespace) if match is None or match(o)]
        out = []
        for o in victims:
            out.append(self.delete(rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], {}, dry=dry)[1])
        return self.respond(200, {"kind": rt.list_kind, "apiVersion": rt.api_version,
                                  "metadata": {"resourceVersion": str(self.store.rv)}, "items": out})


def _check_preconditions(rt: ResourceType, name: str, old: Obj, pre: Obj) -> None:
    """The DeleteOptions' preconditions: a 409 where the uid or resourceVersion is not the object's."""
    if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
        raise conflict(rt, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                                 f"{old['metadata']['uid']}")
    check_resource_version(rt, name, pre.get("resourceVersion"), old)


def _pod_grace(old: Obj, grace: Any) -> Any:
    """The pod strategy's CheckGracefulDelete: the options' period, else the pod's own; 0 for a pod not
    scheduled or already finished; a negative one becomes 1."""
    if grace is None:
        grace = (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
    if not (old.get("spec") or {}).get("nodeName") or \
            (old.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
        return 0
    if int(grace) < 0:
        return 1
    return grace


def _propagation_policy(opts: Obj) -> Any:
    """The propagation policy, from ``propagationPolicy`` or the deprecated ``orphanDependents``."""
    policy = opts.get("propagationPolicy")
    if opts.get("orphanDependents") is not None and policy is None:     # the deprecated form
        policy = "Orphan" if opts["orphanDependents"] else "Background"
    if policy not in (None, "Background", "Foreground", "Orphan"):
        raise invalid("DeleteOptions", "", [("propagationPolicy", "FieldValueNotSupported",
                                             f'Unsupported value: "{policy}": supported values: '
                                             '"Foreground", "Background", "Orphan", "nil"')],
                      "meta.k8s.io")
    return policy
