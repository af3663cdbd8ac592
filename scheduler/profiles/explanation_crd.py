"""The SchedulingExplanation CRD: a namespaced request "explain this pod", answered in its status.

It sits in the SchedulingProfiles' API group (``scheduler.profiles.crd``), so one ``apiGroups``
entry of RBAC covers both kinds. ``spec`` names a pod of the explanation's own namespace
(``podName``) or embeds a pod template (``template``: a PodTemplateSpec, ``metadata`` and
``spec``), and optionally the ``profile`` to ask (a CR name, a shadow's included, or a
schedulerName); ``ttlSecondsAfterFinished`` (default ``DEFAULT_TTL_SECONDS``) says how long the
answered object is kept. The leading scheduler fills ``status`` (``scheduler/app/explanations.py``).
``crds/schedulingexplanation.yaml`` is this output; a test fails when the two drift apart.

Access follows RBAC by construction: the object only ever names pods of its own namespace (a
template's namespace is the explanation's), so whoever may create explanations in a namespace sees
decisions about that namespace's pods and nothing else.
"""

from __future__ import annotations

from typing import Any

import yaml

from scheduler.profiles.crd import GROUP, VERSION

__all__ = ["API_VERSION", "DEFAULT_TTL_SECONDS", "KIND", "PLURAL", "crd", "crd_yaml", "explanations_path"]

API_VERSION = f"{GROUP}/{VERSION}"
KIND = "SchedulingExplanation"
PLURAL = "schedulingexplanations"
# How long an answered explanation is kept when its spec does not say: long enough to read it with
# kubectl, short enough that forgotten ones do not pile up in etcd.
DEFAULT_TTL_SECONDS = 600


def explanations_path(namespace: str | None = None, name: str | None = None, subresource: str | None = None) -> str:
    """The REST path of every explanation, of a namespace's, of one, or of its ``status``."""
    path = f"/apis/{GROUP}/{VERSION}"
    if namespace is not None:
        path += f"/namespaces/{namespace}"
    path += f"/{PLURAL}"
    if name is not None:
        path += f"/{name}"
    if subresource is not None:
        path += f"/{subresource}"
    return path


def _spec_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The pod to explain: podName, or template; and optionally the profile to ask.",
        "properties": {
            "podName": {"type": "string", "description": "A pod in this explanation's namespace."},
            "template": {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                         "description": "A pod that need not exist (a PodTemplateSpec: metadata, spec), placed "
                                        "in this explanation's namespace."},
            "profile": {"type": "string", "description": "A SchedulingProfile's name (a shadow's included) or a "
                                                         "schedulerName; default: the pod's own."},
            "ttlSecondsAfterFinished": {"type": "integer", "minimum": 0, "format": "int32",
                                        "description": f"Seconds the answered explanation is kept before the "
                                                       f"scheduler deletes it (default {DEFAULT_TTL_SECONDS})."},
        },
        "x-kubernetes-validations": [{"rule": "has(self.podName) != has(self.template)",
                                      "message": "give exactly one of podName and template"}],
    }


def crd() -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{PLURAL}.{GROUP}"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"kind": KIND, "listKind": f"{KIND}List", "plural": PLURAL,
                      "singular": "schedulingexplanation", "shortNames": ["sexp"]},
            "versions": [{
                "name": VERSION,
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "additionalPrinterColumns": [
                    {"name": "Pod", "type": "string", "jsonPath": ".status.pod"},
                    {"name": "Node", "type": "string", "jsonPath": ".status.node"},
                    {"name": "Profile", "type": "string", "jsonPath": ".status.profile"},
                    {"name": "Verdict", "type": "string", "jsonPath": ".status.verdict"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "description": "Why a pod is (or would be) placed where it is, answered by the leading "
                                   "kopf-scheduler from its live state.",
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
