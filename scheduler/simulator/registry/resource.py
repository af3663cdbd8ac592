"""What kube-apiserver does to the ``resource.k8s.io/v1`` kinds (Dynamic Resource Allocation)
between decoding and storage: DeviceClasses, ResourceClaims (with their ``status`` subresource),
ResourceClaimTemplates, ResourceSlices and DeviceTaintRules (with their ``status`` subresource).

This module is the server's entry point (``admit_dra``), the kinds' store names, and what is done
before validation:

- **Defaulting** (``pkg/apis/resource/v1/defaults.go``): a request's ``exactly`` and each
  ``firstAvailable`` subrequest get ``allocationMode: ExactCount`` and, in that mode, ``count: 1``;
  a toleration's ``operator`` is ``Equal`` (the type's ``+default``); a device taint gets its
  ``timeAdded``.
- **Admission by namespace**: a claim or template asking for ``adminAccess`` is refused outside a
  namespace labelled ``resource.kubernetes.io/admin-access: "true"`` (the strategies'
  ``AuthorizedForAdmin``).

**Validation** (``pkg/apis/resource/validation/validation.go``), with upstream's causes (field path,
reason, detail), is one module a concern: ``resource_claims.py`` (claims, templates, the claim's
status, device classes), ``resource_slices.py`` (ResourceSlices), ``resource_taintrules.py``
(DeviceTaintRules and their status) over ``resource_fields.py`` (upstream's limits and the field
checks the kinds share). The status is written only through ``/status`` (the generic update path
keeps the stored status on a spec write, and a create drops it).

The pod's side (``spec.resourceClaims``, ``resources.claims``, ``status.resourceClaimStatuses``) is
validated with the pod, in ``registry/core/validation.py``. Which controllers act on these objects
(the resourceclaim controller, the kubelet's wait, the simulated DRA driver) is
``controllers/resourceclaims.py`` and ``controllers/gpudriver.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from scheduler.simulator.apierrors import invalid as invalid_error
from scheduler.simulator.registry.core.validation import (
    Cause,
    forbidden,
    validate_labels,
)
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.resource_claims import (
    validate_device_class,
    validate_resource_claim,
    validate_resource_claim_update,
    validate_template,
    validate_template_update,
)
from scheduler.simulator.registry.resource_fields import (
    EXACT_COUNT,
    _list,
    _map,
)
from scheduler.simulator.registry.resource_slices import validate_resource_slice
from scheduler.simulator.registry.resource_taintrules import _prepare_taint_rule, validate_device_taint_rule

__all__ = ["CLAIMS", "CLASSES", "FINALIZER", "GROUP", "POD_CLAIM_NAME", "RULES", "SLICES", "STORES", "TEMPLATES",
           "admit_dra", "claim_state", "default_claim_spec"]

Obj = dict[str, Any]

GROUP = "resource.k8s.io"
CLASSES, CLAIMS = f"{GROUP}/deviceclasses", f"{GROUP}/resourceclaims"
TEMPLATES, SLICES = f"{GROUP}/resourceclaimtemplates", f"{GROUP}/resourceslices"
RULES = f"{GROUP}/devicetaintrules"
STORES = {CLASSES: "DeviceClass", CLAIMS: "ResourceClaim", TEMPLATES: "ResourceClaimTemplate",
          SLICES: "ResourceSlice", RULES: "DeviceTaintRule"}
# The finalizer the scheduler adds before it writes an allocation (resourceapi.Finalizer), and the
# annotation naming the pod's claim a generated claim is for (the resourceclaim controller's).
FINALIZER = "resource.kubernetes.io/delete-protection"
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"


def _ns(obj: Obj) -> str:
    return str((obj.get("metadata") or {}).get("namespace") or "")


def claim_state(claim: Obj) -> str:
    """``resourceClaimState`` (the STATE column): ``deleted``, then ``pending`` or ``allocated`` and
    ``reserved``, joined by commas."""
    states = []
    deleted = bool((claim.get("metadata") or {}).get("deletionTimestamp"))
    if deleted:
        states.append("deleted")
    status = _map(claim.get("status"))
    if not status.get("allocation"):
        if not deleted:
            states.append("pending")
    else:
        states.append("allocated")
        if status.get("reservedFor"):
            states.append("reserved")
    return ",".join(states)


# --- defaulting ------------------------------------------------------------------------------------

def _default_request(req: Any) -> None:
    """``SetDefaults_ExactDeviceRequest`` / ``SetDefaults_DeviceSubRequest``, and the tolerations' operator."""
    if not isinstance(req, dict):
        return
    if not req.get("allocationMode"):
        req["allocationMode"] = EXACT_COUNT
    if req["allocationMode"] == EXACT_COUNT and not req.get("count"):
        req["count"] = 1
    for t in _list(req.get("tolerations")):
        if isinstance(t, dict) and not t.get("operator"):
            t["operator"] = "Equal"


def default_claim_spec(spec: Any) -> None:
    """Default a ResourceClaimSpec in place (a claim's ``spec``, a template's ``spec.spec``)."""
    for r in _list(_map(_map(spec).get("devices")).get("requests")):
        if not isinstance(r, dict):
            continue
        _default_request(r.get("exactly"))
        for sub in _list(r.get("firstAvailable")):
            _default_request(sub)


def _default_slice(slice_: Obj) -> None:
    """``SetDefaults_DeviceTaint``: a taint without ``timeAdded`` gets the time it was written. And what
    decoding into the Go type gives: ``pool.generation`` has no ``omitempty``, so it is 0 when not sent."""
    pool = _map(slice_.get("spec")).get("pool")
    if isinstance(pool, dict):
        pool.setdefault("generation", 0)
    for d in _list(_map(slice_.get("spec")).get("devices")):
        for t in _list(_map(d).get("taints")):
            if isinstance(t, dict) and not t.get("timeAdded"):
                t["timeAdded"] = now_iso()


# --- the server's entry point ----------------------------------------------------------------------

ADMIN_ACCESS_LABEL = "resource.kubernetes.io/admin-access"       # DRAAdminNamespaceLabelKey


def _admin_access(spec: Any, path: str, namespace_labels: Mapping[str, str]) -> list[Cause]:
    """``AuthorizedForAdmin`` (the claim and template strategies): a request with ``adminAccess`` only in
    a namespace labelled ``resource.kubernetes.io/admin-access: "true"``."""
    if namespace_labels.get(ADMIN_ACCESS_LABEL) == "true":
        return []
    return [forbidden(f"{path}.devices.requests[{i}].exactly.adminAccess",
                      f"admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing "
                      "namespace")
            for i, r in enumerate(_list(_map(_map(spec).get("devices")).get("requests")))
            if _map(_map(r).get("exactly")).get("adminAccess") is True]


def admit_dra(store: str, obj: Obj, old: Obj | None,
              namespace_labels: Callable[[str], Mapping[str, str]] = lambda _: {}) -> None:
    """Default and validate a ``resource.k8s.io`` object (a create when ``old`` is None, else a spec
    update; status updates are ``validate_claim_status_update``'s); raises the 422. ``namespace_labels``:
    a namespace's labels, for the admin-access check."""
    kind = STORES[store]
    name = str((obj.get("metadata") or {}).get("name") or "")
    causes = validate_labels(_map(obj.get("metadata")).get("labels"), "metadata.labels")
    if store == CLAIMS:
        default_claim_spec(obj.get("spec"))
        causes += validate_resource_claim(obj) if old is None else validate_resource_claim_update(obj, old)
        if old is None:
            causes += _admin_access(obj.get("spec"), "spec", namespace_labels(_ns(obj)))
    elif store == TEMPLATES:
        default_claim_spec(_map(obj.get("spec")).get("spec"))
        causes += validate_template(obj) if old is None else validate_template_update(obj, old)
        if old is None:
            causes += _admin_access(_map(obj.get("spec")).get("spec"), "spec.spec", namespace_labels(_ns(obj)))
    elif store == CLASSES:
        causes += validate_device_class(obj)
    elif store == RULES:
        _prepare_taint_rule(obj, old)
        causes += validate_device_taint_rule(obj, old)
    else:
        _default_slice(obj)
        causes += validate_resource_slice(obj, old)
    if causes:
        raise invalid_error(kind, name, causes, GROUP)
