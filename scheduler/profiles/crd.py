"""Generate the SchedulingProfile CRD from the pydantic models.

The spec schema is the models' JSON schema made *structural*, as apiextensions/v1 requires:
``$ref``s inlined, ``anyOf [X, null]`` turned into ``nullable``, titles dropped, and free-form
plugin ``args`` kept with ``x-kubernetes-preserve-unknown-fields``. ``crds/schedulingprofile.yaml``
is this output; a test fails when the two drift apart.
"""

from __future__ import annotations

from typing import Any

import yaml

from scheduler.profiles.models import SchedulingProfileSpec

__all__ = ["API_VERSION", "GROUP", "KIND", "PLURAL", "VERSION", "crd", "crd_yaml", "profiles_path"]

# The one place the CRD's coordinates are written: the runtime, the operator's handlers, simulate
# and the benchmarks all take them from here.
GROUP = "scheduling.kopf-scheduler.io"
VERSION = "v1alpha1"
API_VERSION = f"{GROUP}/{VERSION}"
KIND = "SchedulingProfile"
PLURAL = "schedulingprofiles"
_DROP = {"title", "default"}


def _structural(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, list):
        return [_structural(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _structural(defs[node["$ref"].split("/")[-1]], defs)
    nullable = _nullable(node, defs)
    if nullable is not None:
        return nullable
    out: dict[str, Any] = {k: _structural(v, defs) for k, v in node.items() if _kept(k, v, node)}
    if out.get("type") == "array" and "prefixItems" in out:
        out.pop("prefixItems")
    if out.get("x-kubernetes-preserve-unknown-fields"):
        out = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return out


def _nullable(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any] | None:
    """``anyOf: [X, null]`` (pydantic's ``X | None``) as X with ``nullable: true``; else None."""
    any_of = node.get("anyOf")
    if any_of is None:
        return None
    rest = [x for x in any_of if x.get("type") != "null"]
    if len(rest) != 1:
        return None
    merged = {**_structural(rest[0], defs), "nullable": True}
    for k in ("description",):
        if k in node:
            merged[k] = node[k]
    return merged


def _kept(k: str, v: Any, node: dict[str, Any]) -> bool:
    """Whether key ``k`` of a JSON schema node stays in the structural schema."""
    if k in _DROP or k == "$defs":
        return False
    return not (k == "additionalProperties" and (v is False or v is True or "properties" in node))


def _spec_schema() -> dict[str, Any]:
    schema = SchedulingProfileSpec.model_json_schema(by_alias=True)
    defs = schema.pop("$defs", {})
    spec: dict[str, Any] = _structural(schema, defs)
    return spec


def profiles_path(name: str | None = None, subresource: str | None = None) -> str:
    """The REST path of the SchedulingProfiles, of one of them, or of its subresource (``status``)."""
    path = f"/apis/{GROUP}/{VERSION}/{PLURAL}"
    if name is not None:
        path += f"/{name}"
    if subresource is not None:
        path += f"/{subresource}"
    return path


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Cluster",
            "names": {"kind": KIND, "listKind": f"{KIND}List", "plural": PLURAL,
                      "singular": "schedulingprofile", "shortNames": ["sp"]},
            "versions": [{
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Scheduler", "type": "string", "jsonPath": ".spec.schedulerName"},
                    {"name": "Accepted", "type": "string",
                     "jsonPath": '.status.conditions[?(@.type=="Accepted")].status'},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": "A kube-scheduler profile served live by kopf-scheduler.",
                    "required": ["spec"],
                    "properties": {
                        "apiVersion": {"type": "string"},
                        "kind": {"type": "string"},
                        "metadata": {"type": "object"},
                        "spec": _spec_schema(),
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                    },
                }},
            }],
        },
    }


def crd_yaml() -> str:
    return yaml.safe_dump(crd(), sort_keys=False, width=120)
