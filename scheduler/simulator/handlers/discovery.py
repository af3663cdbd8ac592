"""Discovery: ``/version``, the API groups, and the OpenAPI v2 and v3 documents with kube-openapi's caching
headers (``openapi.py`` builds them).
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.handlers.base import _JSON, HandlerBase, Request

__all__ = ["DiscoveryHandler"]

Obj = dict[str, Any]

_VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.0-kopf-scheduler-sim", "gitCommit": "simulated",
            "gitTreeState": "clean", "buildDate": "2026-12-01T00:00:00Z", "goVersion": "python",
            "compiler": "cpython", "platform": "linux/amd64", "emulationMajor": "1", "emulationMinor": "37",
            "minCompatibilityMajor": "1", "minCompatibilityMinor": "36"}


class DiscoveryHandler(HandlerBase):
    """``/apis`` groups and the OpenAPI documents."""

    def _group(self, group: str, versions: list[str]) -> Obj:
        pref = self.registry.preferred(group, versions)
        return {"name": group, "versions": [{"groupVersion": f"{group}/{v}", "version": v} for v in versions],
                "preferredVersion": {"groupVersion": f"{group}/{pref}", "version": pref}}

    def openapi(self, request: Request, parts: list[str]) -> web.Response:
        """``/openapi/v3`` (discovery), ``/openapi/v3/api[s]/GROUP/VERSION`` and ``/openapi/v2``: the
        documents kubectl's validation, ``apply``'s strategic merge and ``explain`` read (``openapi.py``)."""
        if parts == ["openapi", "v3"]:
            return web.Response(status=200, body=self.openapi_docs.discovery(), content_type=_JSON)
        if parts == ["openapi", "v2"]:
            # kube-openapi answers an Accept it cannot meet (kubectl asks for gnostic protobuf first)
            # with 406; kubectl then does without v2, which only serves as its fallback.
            accept = request.headers.get("Accept", "")
            if accept and not any(t.split(";")[0].strip() in ("application/json", "*/*", "application/*")
                                  for t in accept.split(",")):
                return web.Response(status=406)
            data, etag = self.openapi_docs.v2()
            return self._openapi_answer(request, data, etag, hashed=False)
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
    def _openapi_answer(request: Request, data: bytes, etag: str, *, hashed: bool) -> web.Response:
        """The document with kube-openapi's caching headers: a hashed URL never changes, so it may be
        cached for a year; otherwise the ETag revalidates it (``If-None-Match`` → 304)."""
        tag = f'"{etag}"'
        cache = "public, immutable, max-age=31536000" if hashed else "no-cache, private"
        headers = {"Etag": tag, "Cache-Control": cache, "Vary": "Accept"}
        if request.headers.get("If-None-Match") == tag:
            return web.Response(status=304, headers=headers)
        return web.Response(status=200, body=data, content_type=_JSON, headers=headers)
