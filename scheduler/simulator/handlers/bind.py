"""BIND (``pkg/registry/core/pod/storage``'s ``BindingREST``): a Binding sets a pod's node once; a pod
already bound, being deleted or still gated is a 409. Counts every bind, the proof that nothing is bound
twice.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any

from scheduler.simulator.apierrors import bad_request, conflict, invalid, not_found
from scheduler.simulator.handlers.base import HandlerBase
from scheduler.simulator.registry.core.validation import validate_binding
from scheduler.simulator.registry.meta import now_iso, validate_annotations
from scheduler.simulator.typecheck import check_types

__all__ = ["BindHandler"]

Obj = dict[str, Any]
# How many refused bindings the audit names (the count goes on): enough to tell why a soak counted them.
MAX_CONFLICT_LOG = 100


class BindHandler(HandlerBase):
    """POST of ``pods/binding``."""

    def bind(self, namespace: str, name: str, body: Any) -> Obj:
        rt = self.rt("", "v1", "pods")
        if not isinstance(body, dict):
            raise bad_request("couldn't get version/kind; json parse error: expected an object")
        check_types(body, "", "v1", "Binding")
        if causes := validate_binding(name, body):
            raise invalid("Binding", name, causes)
        node = str(body["target"]["name"])
        pod = self.store.get(rt, namespace, name)
        if pod is None:
            raise not_found(rt, name)
        uid = ((body.get("metadata") or {}).get("uid"))
        if uid and uid != pod["metadata"]["uid"]:
            raise conflict(rt, name, f"Precondition failed: UID in precondition: {uid}, UID in object meta: "
                                     f"{pod['metadata']['uid']}")
        # the binding REST's conflicts name the resource pods/binding (apierrors.NewConflict)
        brt = dataclasses.replace(self.rt("", "v1", "bindings"), plural="pods/binding")
        if pod["metadata"].get("deletionTimestamp"):
            raise conflict(brt, name, f"pod {name} is being deleted, cannot be assigned to a host")
        if pod["spec"].get("nodeName"):
            self.bind_conflicts += 1
            if len(self.bind_conflict_log) < MAX_CONFLICT_LOG:
                self.bind_conflict_log.append({"pod": f"{namespace}/{name}", "uid": pod["metadata"]["uid"],
                                               "boundTo": pod["spec"]["nodeName"], "target": node,
                                               "time": time.time()})
            raise conflict(brt, name, f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
        if pod["spec"].get("schedulingGates"):
            raise conflict(brt, name, f"pod {name} has non-empty .spec.schedulingGates")
        status = dict(pod.get("status") or {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": now_iso()})
        status["conditions"] = conds
        # ClearingNominatedNodeNameAfterBinding (on in 1.37, kubernetes/kubernetes#132443): a bound
        # pod's nomination, the scheduler's or another component's, is stale.
        status.pop("nominatedNodeName", None)
        annotations = (body.get("metadata") or {}).get("annotations")
        meta = dict(pod["metadata"])
        if annotations:
            meta["annotations"] = {**(meta.get("annotations") or {}), **annotations}
        new = {**pod, "metadata": meta, "spec": {**pod["spec"], "nodeName": node}, "status": status}
        validate_annotations("Pod", new)      # the pod update a binding makes is validated
        self.write(rt, pod, new)
        self.binds[pod["metadata"]["uid"]] += 1
        self.controllers.disruption.mark(namespace)
        self.controllers.kubelet.pod_bound(namespace, name, pod["metadata"]["uid"])
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
