"""What a request asks to do, in the terms authorization decides on: apiserver's
``RequestInfoFactory.NewRequestInfo`` (``staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go``),
parsed from the method, path and query before any routing, so that a user who may not do a thing is
refused (403) whether or not the thing exists.

A resource request (``/api/v1/...``, ``/apis/GROUP/VERSION/...`` with a resource) carries the verb
(``get``, ``list``, ``watch``, ``create``, ``update``, ``patch``, ``delete``, ``deletecollection``),
the API group and version, the resource, subresource, namespace and name. Anything else (``/api``,
``/apis/GROUP/VERSION``, ``/openapi/v2``, ``/version``) is a non-resource request: the path, and the
verb from the method in lower case (``get``, ``post``...).
"""

from __future__ import annotations

from typing import Any

__all__ = ["request_attributes"]

Obj = dict[str, Any]

_METHOD_VERBS = {"POST": "create", "GET": "get", "HEAD": "get", "PUT": "update", "PATCH": "patch",
                 "DELETE": "delete"}
_NAMESPACE_SUBRESOURCES = frozenset({"status", "finalize"})


def request_attributes(method: str, path: str, query: Any) -> tuple[Obj, bool]:
    """(attributes, is a resource request): the ``resourceAttributes`` or ``nonResourceAttributes``
    of a SubjectAccessReview for this request, which ``auth.authorize`` decides on."""
    parts = [p for p in path.strip("/").split("/") if p]
    non_resource: tuple[Obj, bool] = ({"path": path, "verb": method.lower()}, False)
    if len(parts) < 3 or parts[0] not in ("api", "apis"):
        return non_resource
    group = ""
    rest = parts[1:]
    if parts[0] == "apis":
        if len(rest) < 3:
            return non_resource
        group, rest = rest[0], rest[1:]
    version, rest = rest[0], rest[1:]
    verb = _METHOD_VERBS.get(method, "")
    if rest[0] == "watch" and len(rest) > 1:          # the deprecated /watch/ prefix
        verb, rest = "watch", rest[1:]
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in _NAMESPACE_SUBRESOURCES:
            rest = rest[2:]
    attrs: Obj = {"verb": verb, "group": group, "version": version, "resource": rest[0],
                  "namespace": namespace}
    if len(rest) >= 2:
        attrs["name"] = rest[1]
    if len(rest) >= 3:
        attrs["subresource"] = rest[2]
    if not attrs.get("name") and verb == "get":
        attrs["verb"] = "watch" if str(query.get("watch", "")).lower() in ("1", "true") else "list"
        name = _exact_name(str(query.get("fieldSelector", "")))
        if name:
            attrs["name"] = name
    if not attrs.get("name") and verb == "delete":
        attrs["verb"] = "deletecollection"
    return attrs, True


def _exact_name(selector: str) -> str:
    """The name a ``metadata.name=NAME`` field selector requires (``RequiresExactMatch``), or ''."""
    for term in selector.split(","):
        key, op, value = term.partition("==") if "==" in term else term.partition("=")
        if op and key.strip() == "metadata.name" and not key.endswith("!"):
            return value.strip()
    return ""
