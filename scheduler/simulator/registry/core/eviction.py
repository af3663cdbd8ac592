"""The ``pods/eviction`` subresource (``pkg/registry/core/pod/storage/eviction.go``): a delete that
respects the pod's PodDisruptionBudget. A pod not running, finished or being deleted is deleted at once;
one whose budget allows no disruption while it is healthy is refused with 429 ``TooManyRequests`` (the
budget's numbers are the disruption controller's, asked through ``interfaces.DisruptionHooks``); more
than one budget is a 500, as upstream.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator.apierrors import ApiError, not_found
from scheduler.simulator.interfaces import ClusterWriter, DisruptionHooks
from scheduler.simulator.selectors import matches_labels, stored_label_selector

__all__ = ["Eviction"]

Obj = dict[str, Any]


class Eviction:
    """``POST pods/NAME/eviction``: a delete that respects the pod's disruption budget."""

    def __init__(self, api: ClusterWriter, disruption: DisruptionHooks) -> None:
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
                if matches_labels(stored_label_selector((p.get("spec") or {}).get("selector")), pod)]
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
