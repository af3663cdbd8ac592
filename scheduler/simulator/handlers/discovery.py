"""Discovery: ``/version``, the API groups, and the OpenAPI v2 and v3 documents with kube-openapi's caching
headers (``openapi.py`` builds them).

``/api`` and ``/apis`` answer in two forms, by the ``Accept`` header, as kube-apiserver's
``endpoints/discovery/aggregated`` wrapper does: the legacy ``APIVersions`` / ``APIGroupList`` (then
one ``APIResourceList`` per group-version), or, for ``application/json;g=apidiscovery.k8s.io;v=v2;
as=APIGroupDiscoveryList`` (what client-go asks first), the aggregated ``APIGroupDiscoveryList``: every
group, its versions (the preferred first) and their resources, subresources, verbs and response kinds
in one document, with an ETag. client-go tells the two apart by the answer's ``Content-Type``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import orjson
from aiohttp import web

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.handlers.base import _JSON, HandlerBase, Request
from scheduler.simulator.resources import ResourceType

__all__ = ["DiscoveryHandler"]

Obj = dict[str, Any]

_VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.0-kopf-scheduler-sim", "gitCommit": "simulated",
            "gitTreeState": "clean", "buildDate": "2026-12-01T00:00:00Z", "goVersion": "python",
            "compiler": "cpython", "platform": "linux/amd64", "emulationMajor": "1", "emulationMinor": "37",
            "minCompatibilityMajor": "1", "minCompatibilityMinor": "36"}


# kube-openapi's handler: what /openapi/v2 serves, by Accept clause (type, subtype), and the media type
# of the answer (the protobuf one is spelt with a dot where the request has an @).
_V2_PROTO = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
_V2_SERVED = (("application", "json", _JSON),
              ("application", "com.github.proto-openapi.spec.v2@v1.0+protobuf", _V2_PROTO),
              ("application", "com.github.proto-openapi.spec.v2.v1.0+protobuf", _V2_PROTO))


AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"


def wants_aggregated(accept: str) -> bool:
    """Whether the first ``Accept`` clause that can be met asks for the aggregated discovery document
    (``apidiscovery.k8s.io/v2``); a plain JSON clause first, or none, is the legacy form."""
    if "apidiscovery.k8s.io" not in accept:
        return False
    for raw in accept.split(","):
        media, *params = (part.strip() for part in raw.split(";"))
        opts = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in params)}
        if media not in ("application/json", "application/*", "*/*") or opts.get("q") in ("0", "0.0"):
            continue
        if "as" not in opts:
            return False
        if (opts.get("as"), opts.get("g"), opts.get("v")) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io", "v2"):
            return True
    return False


def _discovered(rt: ResourceType) -> Obj:
    """An ``APIResourceDiscovery``: the resource, its response kind, scope, verbs and subresources."""
    top, *subs = rt.describe()
    out: Obj = {"resource": rt.plural, "responseKind": {"group": rt.group, "version": rt.version, "kind": rt.kind},
                "scope": "Namespaced" if rt.namespaced else "Cluster", "singularResource": rt.singular,
                "verbs": top["verbs"]}
    for key in ("shortNames", "categories"):
        if top.get(key):
            out[key] = top[key]
    if subs:
        out["subresources"] = [{"subresource": sub["name"].split("/", 1)[1], "responseKind": {
            "group": sub.get("group", rt.group), "version": sub.get("version", rt.version), "kind": sub["kind"]},
            "verbs": sub["verbs"]} for sub in subs]
    return out


def _v2_media_type(accept: str) -> str | None:
    """The media type ``/openapi/v2`` answers an ``Accept`` header in (None: 406), trying the clauses
    in goautoneg's order (by ``q``, then as written) against JSON and the two protobuf spellings."""
    clauses = []
    for i, raw in enumerate((accept or "*/*").split(",")):
        media, *params = (part.strip() for part in raw.split(";"))
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        kind, _, sub = media.partition("/")
        clauses.append((-q, i, kind, sub))
    for neg_q, _, kind, sub in sorted(clauses):
        if neg_q >= 0:
            continue
        for want_kind, want_sub, answer in _V2_SERVED:
            if kind in (want_kind, "*") and sub in (want_sub, "*"):
                return answer
    return None


class DiscoveryHandler(HandlerBase):
    """``/apis`` groups and the OpenAPI documents."""

    def _group(self, group: str, versions: list[str]) -> Obj:
        pref = self.registry.preferred(group, versions)
        return {"name": group, "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
                "preferredVersion": {"groupVersion": f"{group}/{pref}", "version": pref}}

    def aggregated(self, request: Request, core: bool) -> web.Response:
        """``/api`` (the core group) or ``/apis`` (every other) as an ``APIGroupDiscoveryList``."""
        groups = self.registry.groups()
        items = []
        for group in ([""] if core else sorted(g for g in groups if g)):
            versions = groups.get(group) or []
            pref = self.registry.preferred(group, versions) if versions else ""
            ordered = [pref, *(v for v in versions if v != pref)] if versions else []
            meta: Obj = {"name": group, "creationTimestamp": None} if group else {"creationTimestamp": None}
            items.append({"metadata": meta, "versions": [
                {"version": v, "resources": [_discovered(rt) for rt in sorted(self.registry.resources(group, v),
                                                                              key=lambda rt: rt.plural)],
                 "freshness": "Current"} for v in ordered]})
        body = orjson.dumps({"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2",
                             "metadata": {}, "items": items})
        tag = f'"{hashlib.sha512(body).hexdigest().upper()}"'
        headers = {"Content-Type": AGGREGATED, "Etag": tag, "Vary": "Accept"}
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers={"Etag": tag, "Vary": "Accept"})
        return web.Response(status=200, body=body, headers=headers)

    def openapi(self, request: Request, parts: list[str]) -> web.Response:
        """``/openapi/v3`` (discovery), ``/openapi/v3/api[s]/GROUP/VERSION`` and ``/openapi/v2``: the
        documents kubectl's validation, ``apply``'s strategic merge and ``explain`` read (``openapi.py``)."""
        if parts == ["openapi", "v3"]:
            return web.Response(status=200, body=self.openapi_docs.discovery(), content_type=_JSON)
        if parts == ["openapi", "v2"]:
            served = _v2_media_type(request.headers.get("Accept", ""))
            if served is None:
                return web.Response(status=406)        # kube-openapi: no clause it can meet
            data, etag = self.openapi_docs.v2() if served == _JSON else self.openapi_docs.v2_proto()
            return self._openapi_answer(request, data, etag, hashed=False, content_type=served)
        if len(parts) >= 4 and parts[:2] == ["openapi", "v3"]:
            if parts[2] == "api" and len(parts) == 4:
                group, version = "", parts[3]
            elif parts[2] == "apis" and len(parts) == 5:
                group, version = parts[3], parts[4]
            else:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            got = self.openapi_docs.group_version(group, version)
            if got is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            data, etag = got
            asked = request.query.get("hash")
            if asked is not None and asked != etag:
                # kube-openapi: a stale hash is redirected to the current document's URL.
                return web.Response(status=301, headers={"Location": f"{request.path}?hash={etag}"})
            return self._openapi_answer(request, data, etag, hashed=asked is not None)
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    @staticmethod
    def _openapi_answer(request: Request, data: bytes, etag: str, *, hashed: bool,
                        content_type: str = _JSON) -> web.Response:
        """The document with kube-openapi's caching headers: a hashed URL never changes, so it may be
        cached for a year; otherwise the ETag revalidates it (``If-None-Match`` → 304)."""
        tag = f'"{etag}"'
        cache = "public, immutable, max-age=31536000" if hashed else "no-cache, private"
        headers = {"Etag": tag, "Cache-Control": cache, "Vary": "Accept"}
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers=headers)
        return web.Response(status=200, body=data, content_type=content_type, headers=headers)
