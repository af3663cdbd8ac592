"""What the request handlers share, as apiserver's ``endpoints/handlers`` share ``rest.go``: the ``Request``
they read (aiohttp's, or the lean front door's), the bounds (3 MiB bodies, ``FRESH_WAIT``), the JSON
answers, and the body decoding (JSON, YAML off the loop, protobuf for the built-in kinds).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Protocol

import orjson
from aiohttp import web

from scheduler.simulator import media, protobuf, tables, transform
from scheduler.simulator.apierrors import ApiError, bad_request, conflict
from scheduler.simulator.decode import (
    MAX_DEPTH,
    DecodeError,
    DepthError,
    TooLargeError,
    decode_yaml,
    encoded_size,
    summarize,
)
from scheduler.simulator.registry.generic import GenericStore
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.store import external

if TYPE_CHECKING:
    from collections import Counter

    from scheduler.simulator.faults import Faults
    from scheduler.simulator.openapi import OpenAPI

__all__ = ["FRESH_WAIT", "MAX_BODY", "WRITE_OPTIONS", "HandlerBase", "Request", "check_dry_run",
           "check_resource_version"]

Obj = dict[str, Any]

MAX_BODY = 3 * 1024 * 1024

FRESH_WAIT = 3.0                   # the watch cache's blockTimeout for a resourceVersion not reached yet

_RV_TOO_HIGH_RETRY_SECONDS = 1     # resourceVersionTooHighRetrySeconds

_JSON = "application/json"

_PATCH_TYPES = {"application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"}

# etcd3 store's inconsistentContinue: a continue token from before the compacted revision.
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                    "new list without the continue parameter, or use the continue token in this response to retrieve "
                    "the remainder of the results. Continuing with the provided token results in an inconsistent list "
                    "- objects that were created, modified, or deleted between the time the first chunk was returned "
                    "and now may show up in the list.")

INITIAL_EVENTS_END = "k8s.io/initial-events-end"   # metav1.InitialEventsAnnotationKey


def list_options_invalid(causes: list[tuple[str, str, str]], kind: str = "ListOptions") -> ApiError:
    """``NewInvalid(ListOptions.meta.k8s.io, "", errs)`` (or another options kind's): no name, so none in
    the details (``omitempty``)."""
    text = ", ".join(f"{f}: {d}" for f, _, d in causes)
    text = f"[{text}]" if len(causes) > 1 else text
    return ApiError(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {text}',
                    {"group": "meta.k8s.io", "kind": kind,
                     "causes": [{"reason": r, "message": d, "field": f} for f, r, d in causes]})


# The options kind each write verb decodes its query into (endpoints/handlers: create.go, update.go,
# patch.go, delete.go).
WRITE_OPTIONS = {"create": "CreateOptions", "update": "UpdateOptions", "patch": "PatchOptions",
                 "delete": "DeleteOptions", "deletecollection": "DeleteOptions"}


def check_dry_run(values: list[str], kind: str) -> None:
    """apimachinery's ``ValidateDryRun``: every value ``All``, else the options' 422 (the value, a
    ``[]string``, printed with ``%#v`` as ``field.Error`` prints a slice)."""
    if all(v == "All" for v in values):
        return
    shown = "[]string{" + ", ".join(orjson.dumps(v).decode() for v in values) + "}"
    raise list_options_invalid([("dryRun", "FieldValueNotSupported",
                                 f'Unsupported value: {shown}: supported values: "All"')], kind)


def check_resource_version(rt: ResourceType, name: str, want_rv: Any, old: Obj) -> None:
    """The resourceVersion precondition of a write: 409 where the caller names one that is not the stored
    object's (the generic registry's ``OptimisticLockErrorMsg``)."""
    if want_rv and want_rv != old["metadata"]["resourceVersion"]:
        raise conflict(rt, name, "the object has been modified; please apply your changes to the latest "
                                 "version and try again")


def too_large_resource_version(wanted: int, current: int) -> ApiError:
    """storage's ``NewTooLargeResourceVersionError``: a 504 Timeout the client retries after a second."""
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {wanted}, current: {current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                     "retryAfterSeconds": _RV_TOO_HIGH_RETRY_SECONDS})


def _dumps(obj: Any) -> bytes:
    return orjson.dumps(obj)


class Request(Protocol):
    """What the handlers read of a request: aiohttp's ``web.Request``, or the lean front door's
    ``LeanRequest`` (http1.py), which offers exactly this with aiohttp's semantics."""

    @property
    def method(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def query(self) -> Any: ...
    @property
    def headers(self) -> Any: ...
    @property
    def content_type(self) -> str: ...
    @property
    def content_length(self) -> int | None: ...
    @property
    def host(self) -> str: ...
    @property
    def transport(self) -> asyncio.Transport | None: ...
    async def read(self) -> bytes: ...


class HandlerBase(GenericStore):
    """What every verb's handler shares: the answers (``respond``, ``error``, ``send_obj``), the
    request body as the API decodes it (``read_body``), and the server state the handlers read."""

    faults: Faults
    openapi_docs: OpenAPI
    watch_buffer_bytes: int
    terminated_watchers: int      # apiserver_terminated_watchers_total: watchers dropped for falling behind
    binds: Counter[str]           # successful bindings per pod uid: the proof nothing is bound twice
    bind_conflicts: int
    bind_conflict_log: list[dict[str, Any]]     # the first refused bindings (bind.py's MAX_CONFLICT_LOG)

    @staticmethod
    def respond(code: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        # A JSON body ends with a newline, as Go's json.Encoder writes it (apimachinery's
        # runtime/serializer/json/json.go doEncode); clients that print an error body show it.
        return web.Response(status=code, body=_dumps(body) + b"\n", content_type=_JSON, headers=headers)

    def error(self, err: ApiError) -> web.Response:
        return self.respond(err.code, err.body(), err.headers)

    def send_obj(self, request: Request, rt: ResourceType, obj: Obj) -> web.Response:
        if (target := transform.metadata_target(request.headers.get("Accept", ""))) is not None:
            if target[0] != transform.PARTIAL:
                raise transform.not_acceptable(rt, target[0])
            return self.respond(200, transform.partial(external(rt, obj), target[1]))
        if "as=Table" in request.headers.get("Accept", ""):
            return self.respond(200, tables.table(rt, [external(rt, obj)], {"resourceVersion": obj["metadata"].get(
                "resourceVersion", "")}, request.query.get("includeObject", "PartialObjectMetadata")))
        return self.respond(200, external(rt, obj))

    async def read_body(self, request: Request, verb: str, rt: ResourceType) -> Any:
        if request.content_length is not None and request.content_length > MAX_BODY:
            raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY}")
        raw = await request.read()
        ctype = request.content_type
        if not raw:
            if verb == "delete":
                return {}
            raise bad_request("the body of the request was empty")
        if verb == "patch":
            if ctype not in _PATCH_TYPES:
                raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - "
                               f"accepted media types include: {', '.join(sorted(_PATCH_TYPES))}")
            if ctype == "application/apply-patch+yaml":
                ctype = "application/yaml"           # an apply configuration: YAML, or JSON (a YAML subset)
        elif ctype == media.PROTOBUF and not rt.crd_name and protobuf.decodable(rt.group, rt.version, rt.kind):
            # client-go's typed clients (kubectl create configmap|secret|job, auth can-i, drain) send
            # built-in kinds only as protobuf, with no fallback to JSON.
            try:
                return protobuf.decode_object(raw, rt.group, rt.version, rt.kind)
            except protobuf.ProtobufError as e:
                raise bad_request(f"the object provided is unrecognized (must be of type {rt.kind}): {e}") from None
        elif ctype not in (_JSON, "application/yaml", "application/x-yaml", "", "application/octet-stream"):
            # Advertise only what is served: protobuf only for the built-in kinds it can be read as.
            served = [media.JSON, media.YAML]
            if not rt.crd_name and protobuf.decodable(rt.group, rt.version, rt.kind):
                served.append(media.PROTOBUF)
            raise media.unsupported_media_type(served)
        if ctype in ("application/yaml", "application/x-yaml"):
            # YAML is slow to parse (seconds for a 3 MiB body): off the loop, so other requests go on.
            try:
                return await asyncio.get_running_loop().run_in_executor(None, decode_yaml, raw, MAX_BODY)
            except DecodeError as e:     # transformDecodeError: no kind could be read from a broken body
                raise bad_request(f"the object provided is unrecognized (must be of type {rt.kind}): {e} "
                                  f"({summarize(raw)})") from None
            except TooLargeError as e:
                raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {e}") from None
        try:
            body = orjson.loads(raw)
            if raw.count(b"{") + raw.count(b"[") > MAX_DEPTH:       # only then can it nest too deep
                encoded_size(body)
        except (orjson.JSONDecodeError, DepthError) as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
        return body
