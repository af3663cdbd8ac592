"""The simulated kube-apiserver: aiohttp handlers over ``Store``, ``ResourceRegistry`` and admission.

One catch-all route parses the URL as the real server's request-info resolver does
(``/api/v1/namespaces/NS/pods/NAME/binding``, ``/apis/GROUP/VERSION/PLURAL``) into a verb, a
resource type, a namespace, a name and a subresource, then dispatches. Every write is synchronous on
the event loop, so each is atomic and totally ordered by resourceVersion, as etcd orders them.

Answers follow the real server: ``Status`` bodies with its reasons and messages (``NotFound``,
``AlreadyExists``, ``Conflict``, ``Invalid``, ``Gone``/``Expired``, ``BadRequest``,
``UnsupportedMediaType``, ``RequestEntityTooLarge``, ``TooManyRequests``, ``Timeout``), Tables for
kubectl, and watch streams of JSON lines. Faults (``faults.py``) are applied before dispatch.

Whatever a client sends gets kube-apiserver's answer, in bounded time and memory:

- Query parameters parse as apimachinery parses them (``params.py``): ``?limit=abc`` is a 400.
- A name that is not a valid path segment (``..``) is a 400.
- Bodies are at most 3 MiB, and YAML may not expand past that (``decode.py``).
- JSON patches are bounded (``patch.py``).
- Objects and the store are bounded, and so are slow watchers (``store.py``).
- A read at a resourceVersion the store has not reached waits at most ``FRESH_WAIT`` seconds, then
  answers ``504 Too large resource version``.

The simulated controllers (kubelet, namespace, disruption, eviction) live in ``controllers.py``; they
write through ``write`` and ``remove``, the same storage paths every request takes.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import dataclasses
import itertools
import logging
import math
import random
import secrets
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, Protocol

import orjson
import yaml
from aiohttp import web

from scheduler.simulator import crdcheck, managed, media, protobuf, schema, tables
from scheduler.simulator.apierrors import ApiError, conflict, invalid, not_found, resource_name, status_body
from scheduler.simulator.auth import ADMIN, REVIEW_TYPES, UserInfo, answer_review
from scheduler.simulator.controllers.manager import Controllers
from scheduler.simulator.decode import (
    MAX_DEPTH,
    DecodeError,
    DepthError,
    TooLargeError,
    decode_yaml,
    encoded_size,
    summarize,
)
from scheduler.simulator.faults import BLACKHOLE, BLACKHOLE_SECONDS, RESET, Faults
from scheduler.simulator.interfaces import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, Entries, Writer
from scheduler.simulator.openapi import FieldChecker, OpenAPI, definition_for
from scheduler.simulator.params import (
    ListOptions,
    ParamError,
    go_quote,
    list_options,
    path_segment_errors,
    query_bool,
    validate_list_options,
)
from scheduler.simulator.patch import PatchError, json_patch, merge_patch, strategic_merge_patch
from scheduler.simulator.registry import apps, scheduling, storage
from scheduler.simulator.registry import resource as dra
from scheduler.simulator.registry.core import admission
from scheduler.simulator.registry.core.validation import (
    validate_binding,
    validate_event,
    validate_lease,
    validate_pod_status,
    validate_pod_update,
)
from scheduler.simulator.registry.meta import now_iso, validate_annotations, validate_name
from scheduler.simulator.resources import ResourceRegistry, ResourceType
from scheduler.simulator.selectors import SelectorError, field_matcher, label_matcher
from scheduler.simulator.store import (
    MAX_OBJECT_BYTES,
    MAX_PENDING_BYTES,
    MAX_TOTAL_BYTES,
    WRITE_CHUNK,
    Store,
    Watcher,
    encode_event,
    external,
)
from scheduler.simulator.typecheck import check_types

__all__ = ["ApiServer", "Writer"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]
MAX_BODY = 3 * 1024 * 1024
FRESH_WAIT = 3.0                   # the watch cache's blockTimeout for a resourceVersion not reached yet
_WATCH_GRACE = 5.0                 # a watch whose write is still stuck this long after its deadline is cut
_WATCHDOG_HORIZON = 10 * 86400.0   # no timer for absurd timeoutSeconds (int64 seconds overflow the loop)
_RV_TOO_HIGH_RETRY_SECONDS = 1     # resourceVersionTooHighRetrySeconds
PUBLIC = {"/version", "/healthz", "/livez", "/readyz", "/version/"}
_GEN_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_VERSION = {"major": "1", "minor": "37", "gitVersion": "v1.37.0-kopf-scheduler-sim", "gitCommit": "simulated",
            "gitTreeState": "clean", "buildDate": "2026-12-01T00:00:00Z", "goVersion": "python",
            "compiler": "cpython", "platform": "linux/amd64", "emulationMajor": "1", "emulationMinor": "37",
            "minCompatibilityMajor": "1", "minCompatibilityMinor": "36"}
_JSON = "application/json"
_PATCH_TYPES = {"application/merge-patch+json", "application/json-patch+json", "application/strategic-merge-patch+json",
                "application/apply-patch+yaml"}
# Kinds whose metadata.generation the registry maintains (spec changes bump it; status writes do not).
# etcd3 store's inconsistentContinue: a continue token from before the compacted revision.
CONTINUE_EXPIRED = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                    "new list without the continue parameter, or use the continue token in this response to retrieve "
                    "the remainder of the results. Continuing with the provided token results in an inconsistent list "
                    "- objects that were created, modified, or deleted between the time the first chunk was returned "
                    "and now may show up in the list.")
_WITH_GENERATION = {"apps/replicasets", "apps/statefulsets", "apps/deployments", "apps/daemonsets", "batch/jobs",
                    "batch/cronjobs", "policy/poddisruptionbudgets", "apiextensions.k8s.io/customresourcedefinitions",
                    dra.CLASSES, dra.CLAIMS, dra.SLICES}
CLUSTER_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
INITIAL_EVENTS_END = "k8s.io/initial-events-end"   # metav1.InitialEventsAnnotationKey


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def list_options_invalid(causes: list[tuple[str, str, str]]) -> ApiError:
    """``NewInvalid(ListOptions.meta.k8s.io, "", errs)``: no name, so none in the details (``omitempty``)."""
    text = ", ".join(f"{f}: {d}" for f, _, d in causes)
    text = f"[{text}]" if len(causes) > 1 else text
    return ApiError(422, "Invalid", f'ListOptions.meta.k8s.io "" is invalid: {text}',
                    {"group": "meta.k8s.io", "kind": "ListOptions",
                     "causes": [{"reason": r, "message": d, "field": f} for f, r, d in causes]})


def strict_decoding_error(unknown: list[str]) -> str:
    """``runtime.NewStrictDecodingError``'s text for the unknown fields a strict decoding found."""
    return "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)


def patch_invalid(shown: str, detail: str) -> ApiError:
    """The patcher's answer when the patched object does not decode: ``NewInvalid(GroupKind{}, "", ...)``
    on the field ``patch`` with the patch as its value (kubectl prints ``The request is invalid: ...``)."""
    body = f"Invalid value: {go_quote(shown)}: {detail}"
    return ApiError(422, "Invalid", f' "" is invalid: patch: {body}',
                    {"causes": [{"reason": "FieldValueInvalid", "message": body, "field": "patch"}]})


def go_value(value: Any) -> str:
    """fmt's ``%+v`` of a decoded JSON value (maps with sorted keys, strings bare, null ``<nil>``): how the
    patcher shows a strategic merge patch in ``patch_invalid``."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(f: float) -> str:
    """``%v`` of a float64: the shortest digits, in exponent form below 1e-4 or from 1e6 (``1e+06``)."""
    if math.isnan(f) or math.isinf(f):
        return "NaN" if math.isnan(f) else ("+Inf" if f > 0 else "-Inf")
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0"
    mantissa, _, e = repr(abs(f)).partition("e")
    whole, _, frac = mantissa.partition(".")
    raw = (whole + frac).lstrip("0")
    exp = (len(whole) - 1 if whole.strip("0") else -(len(frac) - len(frac.lstrip("0"))) - 1) + int(e or 0)
    digits = raw.rstrip("0") or "0"
    if exp < -4 or exp >= 6:
        return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    digits = digits.ljust(exp + 1, "0")
    return f"{sign}{digits[:exp + 1]}{'.' + digits[exp + 1:] if len(digits) > exp + 1 else ''}"


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


def _scale_of(obj: Obj) -> Obj:
    """A workload's autoscaling/v1 Scale: desired and current replicas, and its selector as a string."""
    meta = obj["metadata"]
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    sel = spec.get("selector")
    selector = tables.label_map(sel) if obj.get("kind") == "ReplicationController" else tables.selector_string(sel)
    return {"kind": "Scale", "apiVersion": "autoscaling/v1",
            "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
                         if k in meta},
            "spec": {"replicas": spec.get("replicas", 1)},
            "status": {"replicas": status.get("replicas", 0), "selector": "" if selector == "<none>" else selector}}


def _copy(obj: Obj) -> Obj:
    return orjson.loads(orjson.dumps(obj))  # type: ignore[no-any-return]


class ApiServer:
    """All server state; ``app()`` builds the aiohttp application serving it."""

    def __init__(self, *, token: str | None = None, faults: Faults | None = None, history: int = 20_000,
                 pod_running_after: float | None = None, pod_termination_seconds: float = 0.0,
                 pod_completion_seconds: float = 2.0, provision_seconds: float = 0.2,
                 gpus_per_node: int = 0, gpu_attributes: Obj | None = None, seed: int = 0,
                 storage_quota_bytes: int = MAX_TOTAL_BYTES,
                 max_object_bytes: int = MAX_OBJECT_BYTES, watch_buffer_bytes: int = MAX_PENDING_BYTES) -> None:
        self.token = token if token is not None else secrets.token_hex(16)
        # Further bearer tokens the server accepts, each until an epoch time (None: forever), as a
        # real cluster accepts short-lived tokens that an exec credential plugin hands out; and
        # who each is (``add_token``; the admin, if not said).
        self.tokens: dict[str, float | None] = {}
        self.token_users: dict[str, UserInfo] = {}
        self.faults = faults or Faults(seed=seed)
        self.store = Store(history, max_object_bytes=max_object_bytes, max_total_bytes=storage_quota_bytes)
        self.watch_buffer_bytes = watch_buffer_bytes
        self.terminated_watchers = 0   # apiserver_terminated_watchers_total: watchers dropped for falling behind
        self.registry = ResourceRegistry()
        for review in REVIEW_TYPES:              # created and answered, never stored
            self.registry.add(review)
        self.openapi_docs = OpenAPI(self.registry, str(_VERSION["gitVersion"]))
        self.fields = FieldChecker()
        self.warnings: list[str] | None = None      # the current write request's Warning headers
        self.managed = managed.FieldSets()
        # Successful bindings per pod uid, and bindings refused because the pod was bound already:
        # the tests' proof that nothing is ever bound twice.
        self.binds: Counter[str] = Counter()
        self.bind_conflicts = 0
        self.rng = random.Random(seed)
        self.audit: set[tuple[str, str, str, str]] = set()     # (user agent, verb, group, resource)
        self.controllers = Controllers(self, pod_running_after=pod_running_after,
                                       pod_termination_seconds=pod_termination_seconds,
                                       pod_completion_seconds=pod_completion_seconds,
                                       provision_seconds=provision_seconds, gpus_per_node=gpus_per_node,
                                       gpu_attributes=gpu_attributes)
        self.store.listeners.append(self.controllers.disruption.on_event)
        self.store.listeners.append(self.controllers.workloads.on_event)
        self.store.listeners.append(self.controllers.gc.on_event)
        self.store.listeners.append(self.controllers.volumes.on_event)
        self.store.listeners.append(self.controllers.claims.on_event)
        self.store.listeners.append(self.controllers.gpus.on_event)
        for ns in CLUSTER_NAMESPACES:
            self.create(self.rt("", "v1", "namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                "metadata": {"name": ns}})
        for name, value in scheduling.SYSTEM_CLASSES.items():
            self.create(self.rt("scheduling.k8s.io", "v1", "priorityclasses"), "", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value, "description": "Used for system critical pods that must not be moved from their "
                                               "current node."})

    # ---- plumbing -------------------------------------------------------------------------------
    def rt(self, group: str, version: str, plural: str) -> ResourceType:
        rt = self.registry.lookup(group, version, plural)
        assert rt is not None
        return rt

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_route("*", "/{tail:.*}", self.dispatch)
        app.on_startup.append(self._start_controllers)
        app.on_shutdown.append(self._close_watches)
        app.on_cleanup.append(self._stop_controllers)
        return app

    async def _start_controllers(self, _: web.Application) -> None:
        self.controllers.start()

    async def _close_watches(self, _: web.Application) -> None:
        for bucket in self.store.buckets.values():
            for w in list(bucket.watchers):
                w.close()

    async def _stop_controllers(self, _: web.Application) -> None:
        self.controllers.stop()


    @staticmethod
    def respond(code: int, body: Any, headers: dict[str, str] | None = None) -> web.Response:
        return web.Response(status=code, body=_dumps(body), content_type=_JSON, headers=headers)

    def error(self, err: ApiError) -> web.Response:
        return self.respond(err.code, err.body(), err.headers)

    # ---- request entry --------------------------------------------------------------------------
    def add_token(self, token: str, user: UserInfo | None = None, until: float | None = None) -> None:
        """Accept ``token`` (until the epoch time ``until``) as ``user`` (the admin if None)."""
        self.tokens[token] = until
        if user is not None:
            self.token_users[token] = user

    def user_of(self, token: str) -> UserInfo | None:
        """Who a bearer token is, or None (unknown or expired), as TokenReview answers."""
        if token == self.token:
            return ADMIN
        if token not in self.tokens:
            return None
        until = self.tokens[token]
        if until is not None and time.time() >= until:
            return None
        return self.token_users.get(token, ADMIN)

    def _authenticated(self, authorization: str | None) -> bool:
        if authorization == f"Bearer {self.token}":
            return True
        if not self.tokens or not authorization or not authorization.startswith("Bearer "):
            return False
        return self.user_of(authorization[7:]) is not None

    def _requester(self, request: Request) -> UserInfo:
        header = request.headers.get("Authorization", "")
        return (self.user_of(header[7:]) if header.startswith("Bearer ") else None) or ADMIN

    async def dispatch(self, request: Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path not in PUBLIC and not self._authenticated(request.headers.get("Authorization")):
            return self.respond(401, status_body(401, "Unauthorized", "Unauthorized"))
        try:
            return await self._dispatch(request, path)
        except ApiError as e:
            return self.error(e)
        except web.HTTPRequestEntityTooLarge:
            return self.error(ApiError(413, "RequestEntityTooLarge",
                                       f"Request entity too large: limit is {MAX_BODY}"))
        except (ConnectionResetError, asyncio.CancelledError):
            raise
        except Exception as e:  # never kill the server: answer 500 as the real one does on a panic
            log.exception("internal error serving %s %s", request.method, request.path)
            return self.error(ApiError(500, "InternalError", f"Internal error occurred: {e!r}"))

    async def _dispatch(self, request: Request, path: str) -> web.StreamResponse:
        parts = [p for p in path.split("/") if p]
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/version":
            return self.respond(200, _VERSION)
        if path == "/debug/binds":     # not Kubernetes: the soak test's double-bind audit
            return self.respond(200, {"binds": dict(self.binds), "conflicts": self.bind_conflicts})
        if parts and parts[0] == "openapi":
            return self.openapi(request, parts)
        if parts == ["api"]:
            return self.respond(200, {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [
                {"clientCIDR": "0.0.0.0/0", "serverAddress": request.host}]})
        if parts == ["apis"]:
            return self.respond(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": [
                self._group(g, vs) for g, vs in self.registry.groups().items() if g]})
        if len(parts) == 2 and parts[0] == "apis":
            vs = self.registry.groups().get(parts[1])
            if not vs:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.respond(200, {"kind": "APIGroup", "apiVersion": "v1", **self._group(parts[1], vs)})
        if parts[:2] == ["api", "v1"]:
            group, version, rest = "", "v1", parts[2:]
        elif len(parts) >= 3 and parts[0] == "apis":
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            resources = self.registry.resources(group, version)
            if not resources:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return self.respond(200, {"kind": "APIResourceList", "apiVersion": "v1",
                                      "groupVersion": f"{group}/{version}" if group else version,
                                      "resources": [r for rt in resources for r in rt.describe()]})
        output = media.negotiate_output(request.headers.get("Accept", ""), stream=query_bool(request.query, "watch"))
        resp = await self.resource_request(request, group, version, rest)
        if output == media.YAML and isinstance(resp, web.Response) and resp.content_type == _JSON \
                and resp.body is not None:
            return web.Response(status=resp.status, content_type=media.YAML, headers={
                k: v for k, v in resp.headers.items() if k.lower() not in ("content-type", "content-length")},
                text=yaml.safe_dump(orjson.loads(bytes(resp.body)), sort_keys=False))   # type: ignore[arg-type]
        return resp

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

    # ---- URL → resource -------------------------------------------------------------------------
    async def resource_request(self, request: Request, group: str, version: str,
                               rest: list[str]) -> web.StreamResponse:
        namespace = ""
        if rest[0] == "namespaces" and len(rest) >= 3 and self.registry.lookup(group, version, rest[2]):
            namespace, rest = rest[1], rest[2:]
        rt = self.registry.lookup(group, version, rest[0])
        if rt is None or len(rest) > 3:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        name = rest[1] if len(rest) > 1 else ""
        sub = rest[2] if len(rest) > 2 else ""
        if sub and sub not in rt.subresources:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if rt.namespaced and not namespace and name:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rt.namespaced:
            namespace = ""
        q = request.query
        method = request.method
        watch = query_bool(q, "watch")
        verb = {"GET": "watch" if watch else ("get" if name else "list"), "POST": "create", "PUT": "update",
                "PATCH": "patch", "DELETE": "delete" if name else "deletecollection"}.get(method)
        if verb is None:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        if verb not in rt.verbs and not sub:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
        resource_label = f"{rt.plural}/{sub}" if sub else rt.plural
        # Which client made which kind of call: a small bounded set, for RBAC checks.
        if len(self.audit) < 10_000:
            self.audit.add((request.headers.get("User-Agent", "").split("/")[0], verb, group, resource_label))
        if self.faults.active:
            delay = self.faults.delay(verb, resource_label)
            if delay:
                await asyncio.sleep(delay)
            code = self.faults.error(verb, resource_label)
            if code == BLACKHOLE:          # hold the request unanswered, then cut it
                await asyncio.sleep(BLACKHOLE_SECONDS)
                code = RESET
            if code == RESET:
                if request.transport is not None:
                    request.transport.abort()
                raise ConnectionResetError("simulated fault: connection reset")
            if code is not None:
                reason = {429: "TooManyRequests", 503: "ServiceUnavailable"}.get(code, "InternalError")
                hdrs = {"Retry-After": "1"} if code in (429, 503) else {}
                return self.respond(code, status_body(code, reason, f"simulated fault: {reason}",
                                                      {"retryAfterSeconds": 1} if hdrs else None), hdrs)
        dry = q.get("dryRun") == "All"
        if verb in ("watch", "list", "deletecollection"):
            try:      # ListOptions, decoded as a whole before anything else: one bad parameter fails the request
                opts = list_options(q, verb == "watch")
            except ParamError as e:
                raise bad_request(str(e)) from None
            if causes := validate_list_options(opts):
                raise list_options_invalid(causes)
        if name and verb != "watch" and (errs := path_segment_errors(name)):
            # the registry's key functions (NamespaceKeyFunc, NoNamespaceKeyFunc) refuse it
            raise bad_request(f"Name parameter invalid: {go_quote(name)}: {';'.join(errs)}")
        if verb == "watch":
            # A watch streams, which only aiohttp's protocol does: the lean front door hands every
            # watch to it (http1.py), so this request is aiohttp's.
            assert isinstance(request, web.BaseRequest)
            return await self.watch(request, rt, namespace or None, name, opts)
        if verb == "list":
            await self._wait_fresh(q.get("resourceVersion"))
            return self.list(request, rt, namespace or None, opts.limit)
        if verb == "get":
            if sub in ("binding", "eviction"):
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                                                        "resource")
            await self._wait_fresh(q.get("resourceVersion"))
            obj = self.store.get(rt, namespace, name)
            if obj is None:
                raise not_found(rt, name)
            if sub == "scale":
                return self.respond(200, _scale_of(obj))
            return self.send_obj(request, rt, obj)
        if verb == "deletecollection":
            return self.delete_collection(request, rt, namespace or None, dry)
        body = await self.read_body(request, verb, rt)
        # fieldValidation=Warn (the default): each unknown field dropped is a Warning header, which kubectl
        # prints; collected in the synchronous part below, after the last await.
        self.warnings = [] if q.get("fieldValidation") not in ("Ignore", "Strict") else None
        try:
            resp = self._write_request(request, rt, namespace, name, sub, verb, dry, body)
        finally:
            warnings, self.warnings = self.warnings, None
        for w in warnings or ():
            resp.headers.add("Warning", '299 - ' + orjson.dumps(w).decode())
        return resp

    def _write_request(self, request: Request, rt: ResourceType, namespace: str, name: str, sub: str,
                       verb: str, dry: bool, body: Any) -> web.Response:
        """create, update, patch (apply included) and delete, once the body is read."""
        q = request.query
        writer = Writer(q.get("fieldManager") or request.headers.get("User-Agent", "").split("/")[0][:128],
                        sub, q.get("fieldValidation") == "Strict", query_bool(q, "force"),
                        bool(q.get("fieldManager")))
        if verb == "create":
            if rt in REVIEW_TYPES and not name:
                return self.respond(201, answer_review(rt, body, self._requester(request), self.user_of,
                                                       lambda store: list(self.store.bucket(store).items(None))))
            if sub == "binding" or rt.plural == "bindings":
                return self.respond(201, self.bind(namespace, name or str((body.get("metadata") or {}).get("name")),
                                                   body))
            if sub == "eviction":
                return self.respond(201, self.controllers.eviction.evict(namespace, name, body))
            if name:
                raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                                                        "resource")
            obj = self.create(rt, namespace, body, dry=dry, strict=writer.strict, fresh=True, writer=writer)
            return self.respond(201, external(rt, obj))
        if sub == "scale" and verb in ("update", "patch"):
            return self.respond(200, self.scale(rt, namespace, name, body, request.content_type if verb == "patch"
                                                else "", writer, dry=dry))
        if verb == "update":
            obj = self.update(rt, namespace, name, body, sub, dry=dry, fresh=True, strict=writer.strict,
                              writer=writer)
            return self.respond(200, external(rt, obj))
        if verb == "patch":
            ctype = request.content_type
            if ctype == "application/apply-patch+yaml":
                code, obj = self.server_side_apply(rt, namespace, name, body, writer, dry=dry)
                return self.respond(code, external(rt, obj))
            if writer.force:
                raise invalid("PatchOptions", "", [("force", "FieldValueForbidden",
                                                              "Forbidden: may not be specified for non-apply patch")],
                                        "meta.k8s.io")
            obj = self.patch(rt, namespace, name, body, ctype, sub, dry=dry, strict=writer.strict, writer=writer)
            return self.respond(200, external(rt, obj))
        assert verb == "delete"
        if not body:         # no DeleteOptions body: the query's options count
            body = {k: q[k] for k in ("propagationPolicy",) if k in q}
            if "gracePeriodSeconds" in q and q["gracePeriodSeconds"].lstrip("-").isdigit():
                body["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
        code, out = self.delete(rt, namespace, name, body, dry=dry)
        return self.respond(code, out)

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

    def send_obj(self, request: Request, rt: ResourceType, obj: Obj) -> web.Response:
        if "as=Table" in request.headers.get("Accept", ""):
            return self.respond(200, tables.table(rt, [external(rt, obj)], {"resourceVersion": obj["metadata"].get(
                "resourceVersion", "")}, request.query.get("includeObject", "PartialObjectMetadata")))
        return self.respond(200, external(rt, obj))

    # ---- reads ----------------------------------------------------------------------------------
    def _matchers(self, request: Request, rt: ResourceType, name: str = "") -> Callable[[Obj], bool] | None:
        q = request.query
        try:
            lm = label_matcher(q.get("labelSelector"))
            fsel = q.get("fieldSelector") or ""
            if name:
                fsel = f"metadata.name={name}" + (f",{fsel}" if fsel else "")
            fm = field_matcher(fsel, rt.field_labels, rt.kind)
        except SelectorError as e:
            raise bad_request(str(e)) from None
        if rt.to_external is not None and fm is not None:
            fm_ext, conv = fm, rt.to_external
            fm = lambda o: fm_ext(conv(o))  # noqa: E731
        if lm and fm:
            return lambda o: lm(o) and fm(o)
        return lm or fm

    def list(self, request: Request, rt: ResourceType, namespace: str | None, limit: int = 0) -> web.Response:
        q = request.query
        match = self._matchers(request, rt)
        rv = self.store.rv
        source: Any
        if q.get("resourceVersion") not in (None, "", "0") and q.get("resourceVersionMatch") == "Exact":
            want = self._parse_rv(q["resourceVersion"])
            state = self.store.list_at(rt, want)
            if state is None:
                oldest = self.store.bucket(rt.store).compacted
                raise ApiError(410, "Expired", f"too old resource version: {want} ({oldest})")
            source = (o for (ns, _), o in state.items() if namespace is None or ns == namespace)
            rv = want
        else:
            source = self.store.bucket(rt.store).items(namespace)
        start: tuple[str, ...] | None = None
        if q.get("continue"):
            try:
                token = orjson.loads(base64.urlsafe_b64decode(q["continue"]))
                start = tuple(token["start"])
                token_rv = int(token.get("rv", rv))
                if len(start) != 2 or not all(isinstance(part, str) for part in start):
                    raise ValueError("start must be a namespace and a name")    # compared with str tuples
            except Exception:
                raise bad_request("continue key is not valid: illegal base64 data") from None
            if token_rv >= 0:
                # A continued list is the snapshot of its first page, as etcd serves it at that revision;
                # once compacted past it, 410 with a token that goes on at the latest state instead.
                state = self.store.list_at(rt, token_rv)
                if state is None:
                    fresh = base64.urlsafe_b64encode(_dumps({"rv": -1, "start": list(start)})).decode()
                    raise ApiError(410, "Expired", CONTINUE_EXPIRED, list_meta={"continue": fresh})
                source = (o for (ns, _), o in state.items() if namespace is None or ns == namespace)
                rv = token_rv
        objs = [o for o in source if match is None or match(o)]
        objs.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        meta: Obj = {"resourceVersion": str(rv)}
        if start is not None:
            objs = [o for o in objs if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > start]
        if limit > 0 and len(objs) > limit:
            last = objs[limit - 1]["metadata"]
            meta["continue"] = base64.urlsafe_b64encode(_dumps({"rv": rv, "start": [last.get("namespace", ""),
                                                                                     last["name"]]})).decode()
            meta["remainingItemCount"] = len(objs) - limit
            objs = objs[:limit]
        items = [external(rt, o) for o in objs]
        if "as=Table" in request.headers.get("Accept", ""):
            return self.respond(200, tables.table(rt, items, meta, q.get("includeObject", "PartialObjectMetadata")))
        return self.respond(200, {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta,
                                  "items": items})

    async def _wait_fresh(self, raw_rv: str | None) -> None:
        """A read at a resourceVersion the store has not reached: wait up to ``FRESH_WAIT`` for it, as the
        watch cache does (``waitUntilFreshAndBlock``), then answer 504 Too large resource version."""
        if raw_rv in (None, "", "0"):
            return
        want = self._parse_rv(raw_rv)
        if want > self.store.rv and not await self.store.wait_for_rv(want, FRESH_WAIT):
            raise too_large_resource_version(want, self.store.rv)

    @staticmethod
    def _parse_rv(text: str) -> int:
        """``ParseResourceVersion``: an unsigned 64-bit decimal (no sign, no spaces), or 400."""
        if text.isascii() and text.isdigit() and len(text) <= 20 and int(text) < 2**64:
            return int(text)
        raise bad_request(f'resourceVersion: Invalid value: "{text}": must be a non-negative integer')

    async def watch(self, request: web.BaseRequest, rt: ResourceType, namespace: str | None, name: str,
                    opts: ListOptions) -> web.StreamResponse:
        """A watch stream. Everything that can fail is checked before the 200 goes out and before the
        watcher is registered, and the watcher is registered in the same step as the snapshot it
        continues, so no event falls between the two.

        Where it starts is the watch cache's choice (``Cacher.Watch``, ``getAllEventsSinceLocked``):

        - ``sendInitialEvents=true`` (also a legacy watch from ``""`` or ``"0"``, which ``list_options``
          defaults to it): the current state as ADDED events, after waiting up to ``FRESH_WAIT`` for a
          ``resourceVersion`` the store has not reached. A streaming list (``allowWatchBookmarks`` too) then
          gets a BOOKMARK at the snapshot's resourceVersion annotated ``k8s.io/initial-events-end: "true"``,
          which client-go's WatchList reflector (kubectl ``wait``, informers) waits for;
        - ``sendInitialEvents=false``: from now, or the events after ``resourceVersion``;
        - otherwise (a legacy watch from a resourceVersion): the events after it, or 410 Gone when the
          history no longer reaches back to it.
        """
        q = request.query
        match = self._matchers(request, rt, name)
        as_table = "as=Table" in request.headers.get("Accept", "")
        include = q.get("includeObject", "PartialObjectMetadata")
        encode = None
        if as_table:
            def encode(kind: str, obj: Obj) -> bytes:
                ext = external(rt, obj) if kind != "BOOKMARK" else obj
                return _dumps({"type": kind, "object": tables.table(
                    rt, [ext], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, include)}) + b"\n"
        since = None if opts.resource_version in ("", "0") else self._parse_rv(opts.resource_version)
        bookmarks = opts.allow_watch_bookmarks
        loop = asyncio.get_running_loop()
        # No timeoutSeconds (or 0): the server's minRequestTimeout (1800 s) times a random factor in [1, 2).
        timeout = float(opts.timeout_seconds) if opts.timeout_seconds else 1800 + self.rng.random() * 1800
        deadline = loop.time() + timeout
        w = Watcher(rt, namespace, match, encode, max_pending_bytes=self.watch_buffer_bytes)
        # The snapshot the stream starts with is a list of references, encoded chunk by chunk as it is sent:
        # a client that does not read pins one chunk, not an encoded copy of the whole store.
        initial: Iterator[bytes] = iter(())
        expired: bytes | None = None
        if opts.send_initial_events:
            # waitUntilWatchCacheFreshAndForceAllEvents: a streaming list never starts behind what it asked for.
            if since is not None and since > self.store.rv and not await self.store.wait_for_rv(since, FRESH_WAIT):
                expired = _dumps({"type": "ERROR", "object": too_large_resource_version(since, self.store.rv).body()}
                                 ) + b"\n"
            else:
                # From here to the watcher's registration nothing awaits: the snapshot and the stream are one.
                snapshot = [o for o in self.store.bucket(rt.store).items(namespace) if match is None or match(o)]
                added = (w.custom_encode("ADDED", o) if w.custom_encode else encode_event("ADDED", rt, o)
                         for o in snapshot)
                if opts.watch_list:
                    end = self._bookmark(rt, self.store.rv, initial_events_end=True)
                    end_line = w.custom_encode("BOOKMARK", end) if w.custom_encode else _dumps(
                        {"type": "BOOKMARK", "object": end}) + b"\n"
                    initial = itertools.chain(added, (end_line,))
                else:
                    initial = added
        elif since is not None:     # (sendInitialEvents=false from "" or "0" starts now: nothing to replay)
            if since > self.store.rv:
                # Ahead of the store: the watch cache opens the stream and sends only what comes after
                # ``since`` (it blocks for freshness only for sendInitialEvents, cacher.go).
                w.after_rv = since
            events = None if self.faults.active and self.faults.force_gone() else self.store.since(rt, since)
            if events is None:
                expired = _dumps({"type": "ERROR", "object": status_body(
                    410, "Expired", f"too old resource version: {since} ({self.store.bucket(rt.store).compacted})")}
                ) + b"\n"
            else:
                initial = (data for ev in events if (data := w.render(ev)) is not None)
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON, "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        if expired is not None:
            await resp.prepare(request)
            await resp.write(expired)
            await resp.write_eof()
            return resp
        bucket = self.store.bucket(rt.store)
        bucket.watchers.add(w)

        def cut() -> None:
            if request.transport is not None:
                request.transport.abort()
        # A watcher that falls behind is terminated (store.py); its stream is cut, whatever it is waiting for.
        w.on_terminate = cut
        # A write still stuck some time after the deadline (a client that stopped reading before any new
        # event could overflow its queue) is cut too: every watch ends near its timeout.
        watchdog = loop.call_later(max(timeout, 0.0) + _WATCH_GRACE, cut) if timeout < _WATCHDOG_HORIZON else None

        async def send(chunk: bytes, n: int) -> bool:
            cut_at = next((i for i in range(n) if self.faults.drop()), None) if self.faults.active else None
            if cut_at is not None:
                # A cut connection loses what is in flight, not what was sent before it: the events
                # ahead of the cut arrive (one per line), so a client that resumes makes progress.
                if cut_at:
                    end = -1
                    for _ in range(cut_at):
                        end = chunk.index(b"\n", end + 1)
                    await resp.write(chunk[: end + 1])
                if request.transport is not None:
                    request.transport.close()
                return False
            await resp.write(chunk)
            return True

        try:
            await resp.prepare(request)
            for chunk, n in _chunks(initial):
                if not await send(chunk, n):
                    return resp
            del initial
            while True:
                if not w.pending:
                    if w.closed:
                        break
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        break
                    w.wake.clear()
                    try:
                        await asyncio.wait_for(w.wake.wait(), min(remaining, 1.0 if bookmarks else 3600.0))
                    except TimeoutError:
                        if bookmarks and deadline - loop.time() > 0 and self.store.rv > w.after_rv:
                            mark = self._bookmark(rt, self.store.rv)
                            await resp.write(w.custom_encode("BOOKMARK", mark) if w.custom_encode else _dumps(
                                {"type": "BOOKMARK", "object": mark}) + b"\n")
                        continue
                    continue
                if not await send(*w.take()):
                    return resp
            bucket.watchers.discard(w)
            await resp.write_eof()         # still under the watchdog: a client that stopped reading is cut
        except (ConnectionResetError, ConnectionError):
            return resp
        finally:
            bucket.watchers.discard(w)
            w.close()
            if watchdog is not None:
                watchdog.cancel()
            if w.terminated:
                self.terminated_watchers += 1
        return resp

    @staticmethod
    def _bookmark(rt: ResourceType, rv: int, *, initial_events_end: bool = False) -> Obj:
        """A BOOKMARK's object: an empty object of the kind that carries only the resourceVersion (and,
        once, the ``k8s.io/initial-events-end`` annotation that ends a streaming list's initial events)."""
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}

    # ---- writes ---------------------------------------------------------------------------------
    def _namespace_ok(self, rt: ResourceType, namespace: str, name: str) -> None:
        if not rt.namespaced:
            return
        if not namespace:
            raise bad_request("the namespace of the object must be set")
        ns = self.store.get(self.rt("", "v1", "namespaces"), "", namespace)
        if ns is None:
            raise ApiError(404, "NotFound", f'namespaces "{namespace}" not found',
                           {"name": namespace, "kind": "namespaces"})
        if ns["metadata"].get("deletionTimestamp"):
            raise ApiError(403, "Forbidden", f'{rt.plural} "{name}" is forbidden: unable to create new content in '
                                             f"namespace {namespace} because it is being terminated")

    def _check_kind(self, rt: ResourceType, body: Any, *, fresh: bool = False, strict: bool = False,
                    patch_shown: str | None = None, defaults: bool = True) -> Obj:
        """Check apiVersion/kind and convert to the stored form; ``fresh`` bodies (just decoded from
        the request, owned by nobody else) are used in place instead of copied. Unknown fields (a
        built-in kind's by its Go type, a custom resource's by its structural schema) are dropped, as
        decoding drops them, or refused with ``fieldValidation=Strict`` (kubectl's default) as strict
        decoding refuses them: a 400 for a create or an update (``transformDecodeError``), and for a
        patch, whose result is what failed to decode, the patcher's 422 showing ``patch_shown``. A custom
        resource is then defaulted by its schema, unless ``defaults`` is False (an apply configuration:
        upstream defaults the merged result)."""
        if not isinstance(body, dict):
            raise bad_request("couldn't get version/kind; json parse error: expected an object")
        if body.get("kind") and body["kind"] != rt.kind:
            raise bad_request(f"the kind in the data ({body['kind']}) does not match the expected kind ({rt.kind})")
        if body.get("apiVersion") and body["apiVersion"] != rt.api_version:
            raise bad_request(f"the API version in the data ({body['apiVersion']}) does not match the expected API "
                              f"version ({rt.api_version})")
        if not rt.crd_name:
            # Decoding into the kind's Go type comes first in kube-apiserver: a wrong JSON type is a 400.
            check_types(body, rt.group, rt.version, rt.kind)
        obj = body if fresh else _copy(body)
        unknown: list[str] = []
        if rt.crd_name:
            unknown = schema.coerce(rt.schema, obj, defaults=defaults)
        elif (definition := definition_for(rt.group, rt.version, rt.kind)) is not None:
            unknown = self.fields.unknown(definition, obj, drop=True)
        if unknown and strict:
            if patch_shown is not None:
                raise patch_invalid(patch_shown, strict_decoding_error(unknown))
            raise bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: '
                              + strict_decoding_error(unknown))
        if unknown and self.warnings is not None:
            self.warnings.extend(f'unknown field "{u}"' for u in unknown)
        if rt.from_external:
            obj = rt.from_external(obj)
        obj.setdefault("metadata", {})
        if not isinstance(obj["metadata"], dict):
            raise bad_request("metadata: expected an object")
        return obj

    def create(self, rt: ResourceType, namespace: str, body: Any, *, dry: bool = False, strict: bool = False,
               keep_status: bool = False, fresh: bool = False, writer: Writer | None = None,
               managed_fields: Entries | None = None) -> Obj:
        """Create ``body``. ``writer``: an API request's, whose manager then owns what it set (none for the
        simulated controllers' own writes); ``managed_fields``: already computed (server-side apply)."""
        if rt.plural == "events" and not rt.crd_name and isinstance(body, dict):
            # ValidateEventCreate reads the version the client wrote (events.k8s.io/v1 has stricter
            # rules than core/v1), so it runs on the body as sent, once it decodes.
            check_types(body, rt.group, rt.version, rt.kind)
            meta = body.get("metadata") or {}
            causes = validate_event(body, rt.group, namespace or str(meta.get("namespace") or ""))
            if causes:
                raise invalid("Event", str(meta.get("name") or meta.get("generateName") or ""), causes,
                                        rt.group)
        obj = self._check_kind(rt, body, fresh=fresh, strict=strict)
        obj["apiVersion"] = "v1" if rt.to_external else rt.api_version
        obj["kind"] = rt.kind
        meta = obj["metadata"]
        if rt.namespaced:
            if meta.get("namespace") and namespace and meta["namespace"] != namespace:
                raise bad_request("the namespace of the provided object does not match the namespace sent on the "
                                  "request")
            namespace = namespace or meta.get("namespace", "")
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and meta.get("generateName"):
            # names.SimpleNameGenerator: the base cut to 58 characters, then 5 random ones.
            meta["name"] = str(meta["generateName"])[:58] + "".join(self.rng.choice(_GEN_ALPHABET) for _ in range(5))
        name = str(meta.get("name") or "")
        if rt.plural != "events":
            validate_name(rt.kind, name, store=rt.store, group=rt.group)
        elif not name:
            raise invalid("Event", name, [("metadata.name", "FieldValueRequired", "Required value")])
        self._namespace_ok(rt, namespace, name)
        if self.store.get(rt, namespace, name) is not None:
            raise ApiError(409, "AlreadyExists", f'{resource_name(rt)} "{name}" already exists',
                           {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural})
        if rt.has_status and not keep_status and rt.plural != "nodes":
            obj.pop("status", None)
        self._admit(rt, obj, None, strict)
        if managed_fields is not None:
            meta["managedFields"] = managed_fields
        elif writer is not None and writer.manager:
            meta.pop("managedFields", None)
            meta["managedFields"] = self.managed.update(None, obj, self._fields_schema(rt, obj), writer.manager,
                                                        obj["apiVersion"], "", rt.has_status)
        else:
            meta.pop("managedFields", None)
        meta.pop("deletionTimestamp", None)
        meta.pop("deletionGracePeriodSeconds", None)
        meta["uid"] = str(uuid.uuid4())
        if rt.store == "batch/jobs":
            apps.default_job_selector(obj)      # the selector is the new uid (generateSelector)
        meta["creationTimestamp"] = now_iso()
        if rt.crd_name or rt.store in _WITH_GENERATION:
            meta["generation"] = 1
        if dry:
            meta["resourceVersion"] = str(self.store.rv)
            return obj
        meta["resourceVersion"] = str(self.store.next_rv())
        self.store.commit(rt, "ADDED", (namespace, name), obj, None)
        if rt.plural == "customresourcedefinitions" and not rt.crd_name:
            self._establish(obj)
        return obj

    def _allocate_cluster_ip(self) -> str:
        """The next free address of the service range (10.96.0.0/12; .0 and .1, the API's own, skipped)."""
        used = {str(((o.get("spec") or {}).get("clusterIP")) or "")
                for o in self.store.bucket("/services").objects.values()}
        for ip in itertools.islice(admission.SERVICE_CIDR.hosts(), 10, None):
            if str(ip) not in used:
                return str(ip)
        raise ApiError(500, "InternalError", "Internal error occurred: failed to allocate a serviceIP: range is full")

    def _admit(self, rt: ResourceType, obj: Obj, old: Obj | None, strict: bool = False) -> None:
        """Kind-specific defaulting and validation (create when ``old`` is None)."""
        validate_annotations(rt.kind, obj, rt.group)
        if rt.crd_name:
            schema.prune(rt.schema, obj)   # (what the server itself added; the request's were seen by _check_kind)
            causes = schema.validate(rt.schema, obj, old=old)
            if causes:
                raise invalid(rt.kind, obj["metadata"].get("name", ""), causes, rt.group)
            return
        key = rt.store
        if key == "/pods" and old is None:
            pcs = self.rt("scheduling.k8s.io", "v1", "priorityclasses")
            admission.default_pod(obj, lambda n: self.store.get(pcs, "", n), self._global_default_class)
        elif key == "/pods" and old is not None:
            causes = validate_pod_update(obj, old)
            if causes:
                raise invalid("Pod", obj["metadata"].get("name", ""), causes)
            self._check_pod_update(obj, old)
        elif key == "/nodes":
            admission.default_node(obj)
        elif key == "scheduling.k8s.io/priorityclasses":
            others = list(self.store.bucket(key).objects.values())
            scheduling.validate_priority_class(obj, others)
            if old is not None and obj.get("value") != old.get("value"):
                raise invalid("PriorityClass", obj["metadata"]["name"], [
                    ("value", "FieldValueForbidden", "Forbidden: may not be changed in an update.")],
                    "scheduling.k8s.io")
        elif key == "coordination.k8s.io/leases":
            if causes := validate_lease(obj):
                raise invalid("Lease", obj["metadata"].get("name", ""), causes, rt.group)
        elif key in storage.STORES:
            storage.admit_storage(key, obj, old,
                                  self.store.bucket("storage.k8s.io/storageclasses").objects.values)
        elif key in dra.STORES:
            nrt = self.rt("", "v1", "namespaces")
            dra.admit_dra(key, obj, old, lambda ns: ((self.store.get(nrt, "", ns) or {}).get("metadata") or {})
                          .get("labels") or {})
        elif key == "/namespaces":
            obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
            obj.setdefault("status", {}).setdefault("phase", "Active")
            obj["metadata"].setdefault("labels", {})["kubernetes.io/metadata.name"] = obj["metadata"]["name"]
        elif key == "apiextensions.k8s.io/customresourcedefinitions":
            self._validate_crd(obj)
        elif key == "/secrets":
            admission.default_secret(obj)
        elif key == "/services":
            admission.default_service(obj, old, self._allocate_cluster_ip)
        elif key in apps.WORKLOAD_STORES and isinstance(obj.get("spec"), dict):
            apps.default_workload(key, obj)
        elif key == "policy/poddisruptionbudgets":
            spec = obj.get("spec") or {}
            if "minAvailable" in spec and "maxUnavailable" in spec:
                raise invalid("PodDisruptionBudget", obj["metadata"]["name"], [
                    ("spec", "FieldValueInvalid", "Invalid value: {}: minAvailable and maxUnavailable cannot be both "
                                                  "set")], "policy")
            self.controllers.disruption.mark(obj["metadata"].get("namespace", ""))

    def _global_default_class(self) -> Obj | None:
        for pc in self.store.bucket("scheduling.k8s.io/priorityclasses").objects.values():
            if pc.get("globalDefault"):
                return pc
        return None

    _POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "schedulingGates", "terminationGracePeriodSeconds")

    def _check_pod_update(self, new: Obj, old: Obj) -> None:
        a, b = dict(new.get("spec") or {}), dict(old.get("spec") or {})
        for f in self._POD_MUTABLE:
            a.pop(f, None)
            b.pop(f, None)
        for spec in (a, b):
            for group in ("containers", "initContainers"):
                if group in spec:
                    spec[group] = [{k: v for k, v in c.items() if k != "image"}
                                   for c in spec[group]]
        if a != b:
            raise invalid("Pod", new["metadata"]["name"], [(
                "spec", "FieldValueForbidden",
                "Forbidden: pod updates may not change fields other than `spec.containers[*].image`,"
                "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions "
                "to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was "
                "previously negative)")])
        # validateOnlyDeletedSchedulingGates: gates may only be removed; one error per gate (by name)
        # the old pod did not have, at its index in the new list
        gates_old = {g.get("name") for g in (old.get("spec") or {}).get("schedulingGates") or []}
        added = [(i, g.get("name")) for i, g in enumerate((new.get("spec") or {}).get("schedulingGates") or [])
                 if g.get("name") not in gates_old]
        if added:
            raise invalid("Pod", new["metadata"]["name"], [(
                f"spec.schedulingGates[{i}].name", "FieldValueForbidden",
                f"Forbidden: only deletion is allowed, but found new scheduling gate '{gate}'") for i, gate in added])

    def _validate_crd(self, crd: Obj) -> None:
        spec = crd.get("spec") or {}
        name = crd["metadata"].get("name", "")
        causes = []
        names = spec.get("names") or {}
        for f in ("group", "scope"):
            if not spec.get(f):
                causes.append((f"spec.{f}", "FieldValueRequired", "Required value"))
        for f in ("plural", "kind"):
            if not names.get(f):
                causes.append((f"spec.names.{f}", "FieldValueRequired", "Required value"))
        if not spec.get("versions"):
            causes.append(("spec.versions", "FieldValueInvalid", "Invalid value: []: must have exactly one version "
                                                                 "marked as storage version"))
        if not causes and name != f"{names['plural']}.{spec['group']}":
            causes.append(("metadata.name", "FieldValueInvalid",
                           f'Invalid value: "{name}": must be spec.names.plural+"."+spec.group'))
        causes += crdcheck.check_crd(crd)
        if causes:
            raise invalid("CustomResourceDefinition", name, causes, "apiextensions.k8s.io")
        names.setdefault("singular", names["kind"].lower())
        names.setdefault("listKind", names["kind"] + "List")

    def _establish(self, crd: Obj) -> None:
        self.registry.remove_crd(crd["metadata"]["name"])     # an update re-registers its versions
        storage_version = next((v.get("name") for v in crd["spec"]["versions"] if v.get("storage")), None)
        for rt in self.registry.crd_types(crd):
            self.registry.add(rt)
            if rt.version == storage_version:
                # What was stored before reads as this generation's schema decodes it (pruned, defaulted).
                bucket = self.store.bucket(rt.store)
                for key, obj in schema.redecode(rt.schema, bucket.objects):
                    bucket.put(key, obj)
        names = crd["spec"]["names"]
        status = {"conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
             "lastTransitionTime": now_iso()},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now_iso()}],
            "acceptedNames": names, "storedVersions": [v["name"] for v in crd["spec"]["versions"]
                                                       if v.get("storage")]}
        crt = self.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        self.write(crt, crd, {**crd, "status": status})

    def write(self, rt: ResourceType, old: Obj, new: Obj) -> Obj:
        """Store ``new`` in place of ``old`` with the next resourceVersion (MODIFIED)."""
        meta = new["metadata"] = dict(new["metadata"])
        meta["resourceVersion"] = str(self.store.next_rv())
        key = (meta.get("namespace", ""), meta["name"])
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not (
                rt.store == "/pods" and self.controllers.kubelet.awaits(new)) and not (
                rt.store == "/namespaces" and (new.get("spec") or {}).get("finalizers")):
            # (a namespace's spec.finalizers hold it until the namespace controller has emptied it)
            self.store.commit(rt, "DELETED", key, new, old)
            self._after_delete(rt, new)
        else:
            self.store.commit(rt, "MODIFIED", key, new, old)
        return new

    def update(self, rt: ResourceType, namespace: str, name: str, body: Any, sub: str = "", *,
               dry: bool = False, fresh: bool = False, strict: bool = False, writer: Writer | None = None) -> Obj:
        new = self._check_kind(rt, body, fresh=fresh, strict=strict)
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        meta = new["metadata"]
        if meta.get("name") and meta["name"] != name:
            raise bad_request("the name of the object does not match the name on the URL")
        want_rv = meta.get("resourceVersion")
        if not want_rv and rt.crd_name:
            # A custom resource's update strategy requires the precondition (AllowUnconditionalUpdate false).
            raise invalid(rt.kind, name, [("metadata.resourceVersion", "FieldValueInvalid",
                                                     "Invalid value: 0x0: must be specified for an update")], rt.group)
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name, "the object has been modified; please apply your changes to the latest "
                                     "version and try again")
        return self._apply_update(rt, old, new, sub, dry, strict, writer)

    def _apply_update(self, rt: ResourceType, old: Obj, new: Obj, sub: str, dry: bool, strict: bool = False,
                      writer: Writer | None = None, managed_fields: Entries | None = None) -> Obj:
        name = old["metadata"]["name"]
        sent_fields = new["metadata"].get("managedFields")
        new["apiVersion"], new["kind"] = old["apiVersion"], old["kind"]
        if sub == "status":
            merged = dict(old)
            merged["metadata"] = dict(old["metadata"])
            if "status" in new:
                merged["status"] = new["status"]
            else:
                merged.pop("status", None)
            new = merged
        else:
            meta = new["metadata"]
            for f in ("uid", "creationTimestamp", "namespace", "name", "deletionTimestamp",
                      "deletionGracePeriodSeconds", "generation"):
                if f in old["metadata"]:
                    meta[f] = old["metadata"][f]
                else:
                    meta.pop(f, None)
            if rt.has_status:
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if old["metadata"].get("deletionTimestamp"):
                added = set(meta.get("finalizers") or ()) - set(old["metadata"].get("finalizers") or ())
                if added:
                    raise invalid(rt.kind, name, [("metadata.finalizers", "FieldValueForbidden",
                                                             "Forbidden: no new finalizers can be added if the object "
                                                             "is being deleted")], rt.group)
            self._admit(rt, new, old, strict)
            if rt.store == "/pods" and (old.get("spec") or {}).get("nodeName") != (new.get("spec") or {}).get(
                    "nodeName"):
                raise invalid("Pod", name, [("spec.nodeName", "FieldValueForbidden",
                                                       "Forbidden: pod updates may not change fields other than ...")])
            if "generation" in old["metadata"] and {k: v for k, v in new.items() if k not in ("metadata", "status")} \
                    != {k: v for k, v in old.items() if k not in ("metadata", "status")}:
                new["metadata"]["generation"] = old["metadata"]["generation"] + 1
        if rt.store == "/pods" and sub == "status" and (causes := validate_pod_status(new)):
            raise invalid("Pod", name, causes)
        if rt.store == dra.CLAIMS and sub == "status" and (causes := dra.validate_claim_status_update(new, old)):
            raise invalid("ResourceClaim", name, causes, dra.GROUP)
        if rt.crd_name and sub == "status":
            schema.prune(rt.schema, new)
            causes = schema.validate(rt.schema, new, old=old)
            if causes:
                raise invalid(rt.kind, name, causes, rt.group)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]
        self._track(rt, old, new, sub, sent_fields, writer, managed_fields)
        if new == old:
            return old                    # a no-op write takes no resourceVersion and sends no event
        if dry:
            return new
        out = self.write(rt, old, new)
        if rt.plural == "customresourcedefinitions" and not rt.crd_name and sub != "status":
            self._establish(out)
        return out

    def patch(self, rt: ResourceType, namespace: str, name: str, body: Any, ctype: str, sub: str = "", *,
              dry: bool = False, strict: bool = False, writer: Writer | None = None) -> Obj:
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        current = external(rt, old)
        try:
            if ctype == "application/json-patch+json":
                doc = json_patch(current, body)
            elif ctype == "application/strategic-merge-patch+json":
                if rt.crd_name:
                    raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                                   "accepted media types include: application/json-patch+json, "
                                   "application/merge-patch+json, application/apply-patch+yaml")
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                doc = strategic_merge_patch(current, body)
            else:
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                doc = merge_patch(current, body)
        except PatchError as e:
            if e.code == 413:
                raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {e}") from None
            raise ApiError(e.code, "Invalid" if e.code == 422 else "BadRequest", str(e)) from None
        if not isinstance(doc, dict):
            raise bad_request("the patched object is not an object")
        want_rv = (doc.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name, "the object has been modified; please apply your changes to the latest "
                                     "version and try again")
        # How the patcher shows the patch if the result does not decode strictly: a strategic merge patch
        # as Go prints the patch's map, the others as the patched object's JSON (Go's keeps the fields in
        # the Go type's order; sorted here).
        shown = None
        if strict:
            shown = go_value(body) if ctype == "application/strategic-merge-patch+json" else \
                orjson.dumps(doc, option=orjson.OPT_SORT_KEYS).decode()
        # A merge patch shares untouched subtrees with the stored object: copy it; the others copied already.
        new = self._check_kind(rt, doc, fresh=ctype != "application/merge-patch+json", strict=strict,
                               patch_shown=shown)
        return self._apply_update(rt, old, new, sub, dry, strict, writer)

    def scale(self, rt: ResourceType, namespace: str, name: str, body: Any, patch_type: str, writer: Writer, *,
              dry: bool = False) -> Obj:
        """PUT or PATCH ``/scale``: the autoscaling/v1 Scale view of a workload, written back to its
        ``spec.replicas`` (what ``kubectl scale`` and autoscalers do), owned by the writer's manager
        with subresource ``scale``."""
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        current = _scale_of(old)
        try:
            if patch_type == "application/json-patch+json":
                new_scale = json_patch(current, body)
            elif patch_type:
                if not isinstance(body, dict):
                    raise bad_request("the patch must be a JSON object")
                new_scale = merge_patch(current, body)
            else:
                new_scale = body
        except PatchError as e:
            raise ApiError(e.code, "Invalid" if e.code == 422 else "BadRequest", str(e)) from None
        if not isinstance(new_scale, dict):
            raise bad_request("the body must be a Scale object")
        want_rv = (new_scale.get("metadata") or {}).get("resourceVersion")
        if want_rv and want_rv != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name, "the object has been modified; please apply your changes to the latest "
                                     "version and try again")
        replicas = (new_scale.get("spec") or {}).get("replicas", 0)
        if isinstance(replicas, bool) or not isinstance(replicas, int):
            raise bad_request('Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal into Go '
                              "struct field ScaleSpec.spec.replicas of type int32")
        if replicas < 0:
            raise invalid("Scale", name, [("spec.replicas", "FieldValueInvalid",
                                                     f"Invalid value: {replicas}: must be greater than or equal to "
                                                     "0")], "autoscaling")
        new = {**old, "metadata": dict(old["metadata"]), "spec": {**(old.get("spec") or {}), "replicas": replicas}}
        out = self._apply_update(rt, old, new, "", dry, False, writer)
        return _scale_of(out)

    # ---- field ownership ------------------------------------------------------------------------
    def _fields_schema(self, rt: ResourceType, obj: Obj) -> managed.Schema:
        """The compiled schema field ownership walks: the stored kind's (core/v1 Event for both APIs)."""
        if rt.crd_name:
            return managed.kind_schema(rt.group, rt.version, rt.kind, rt.schema or {})
        group, _, version = str(obj.get("apiVersion", "")).rpartition("/")
        return managed.kind_schema(group, version, str(obj.get("kind", "")), None)

    def _track(self, rt: ResourceType, old: Obj, new: Obj, sub: str, sent: Any, writer: Writer | None,
               computed: Entries | None) -> None:
        """Set ``new``'s managedFields: as computed (apply); as sent (a request may set them, ``[]`` clears
        them) with this write's changes owned by its manager; or the live ones, for the simulated
        controllers' own writes."""
        meta = new["metadata"]
        if computed is not None:
            meta["managedFields"] = computed
            return
        if sent is not None:
            meta["managedFields"] = sent
        elif "managedFields" in old["metadata"]:
            meta["managedFields"] = old["metadata"]["managedFields"]
        if not meta.get("managedFields"):
            meta.pop("managedFields", None)
        if writer is None or not writer.manager:
            return
        subresource = sub if sub == "status" else ("scale" if writer.sub == "scale" else "")
        entries = self.managed.update(old, new, self._fields_schema(rt, new), writer.manager, new["apiVersion"],
                                      subresource, rt.has_status)
        if entries:
            meta["managedFields"] = entries
        else:
            meta.pop("managedFields", None)

    def server_side_apply(self, rt: ResourceType, namespace: str, name: str, body: Any, writer: Writer, *,
                          dry: bool = False) -> tuple[int, Obj]:
        """PATCH with ``application/apply-patch+yaml``: create or merge, owned by ``fieldManager``
        (``managed.py``); 409 on another manager's field unless ``force=true``."""
        if writer.sub:
            raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - "
                           "accepted media types include: application/json-patch+json, "
                           "application/merge-patch+json, application/strategic-merge-patch+json")
        if not writer.requested_manager:
            raise invalid("PatchOptions", "", [("fieldManager", "FieldValueRequired",
                                                          "Required value: is required for apply patch")],
                                    "meta.k8s.io")
        if not isinstance(body, dict):
            raise bad_request("the apply configuration must be an object")
        if not body.get("apiVersion") or not body.get("kind"):
            raise bad_request("apiVersion and kind must be set in an apply configuration")
        sent_meta = body.get("metadata")
        sent_name = sent_meta.get("name") if isinstance(sent_meta, dict) else None
        if sent_name and sent_name != name:
            raise bad_request(f"the name of the object ({sent_name}) does not match the name on the URL ({name})")
        old = self.store.get(rt, namespace, name)
        config = self._check_kind(rt, body, strict=writer.strict, defaults=False)
        config = external(rt, config) if rt.to_external else config
        node = self._fields_schema(rt, {"apiVersion": rt.api_version, "kind": rt.kind})
        live = external(rt, old) if old is not None else None
        merged, entries = self.managed.apply(live, config, node, writer.manager, rt.api_version, writer.force,
                                             rt.has_status)
        merged.setdefault("metadata", {})["name"] = name
        if old is None:
            merged["metadata"].pop("managedFields", None)
            return 201, self.create(rt, namespace, merged, dry=dry, strict=writer.strict, managed_fields=entries)
        new = self._check_kind(rt, merged, strict=writer.strict)
        return 200, self._apply_update(rt, old, new, "", dry, writer.strict, None, entries)

    def delete(self, rt: ResourceType, namespace: str, name: str, options: Any, *, dry: bool = False,
               ) -> tuple[int, Obj]:
        old = self.store.get(rt, namespace, name)
        if old is None:
            raise not_found(rt, name)
        opts = options if isinstance(options, dict) else {}
        if opts:
            # With a body, the DeleteOptions are the body's alone and the query is not read
            # (handlers.DeleteResource): ``kubectl delete --dry-run=server`` sends its dryRun there.
            dry = "All" in (opts.get("dryRun") or ())
        pre = opts.get("preconditions") or {}
        if pre.get("uid") and pre["uid"] != old["metadata"]["uid"]:
            raise conflict(rt, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
                                     f"{old['metadata']['uid']}")
        if pre.get("resourceVersion") and pre["resourceVersion"] != old["metadata"]["resourceVersion"]:
            raise conflict(rt, name, "the object has been modified; please apply your changes to the latest "
                                     "version and try again")
        if dry:
            return 200, external(rt, old)
        grace = opts.get("gracePeriodSeconds")
        if rt.store == "/pods":
            # the pod strategy's CheckGracefulDelete: the options' period, else the pod's own; 0 for a
            # pod not scheduled or already finished; a negative one becomes 1
            if grace is None:
                grace = (old.get("spec") or {}).get("terminationGracePeriodSeconds", 30)
            if not (old.get("spec") or {}).get("nodeName") or \
                    (old.get("status") or {}).get("phase") in ("Failed", "Succeeded"):
                grace = 0
            elif int(grace) < 0:
                grace = 1
        meta = old["metadata"]
        if meta.get("deletionTimestamp"):
            return 200, external(rt, old)
        policy = opts.get("propagationPolicy")
        if opts.get("orphanDependents") is not None and policy is None:     # the deprecated form
            policy = "Orphan" if opts["orphanDependents"] else "Background"
        if policy not in (None, "Background", "Foreground", "Orphan"):
            raise invalid("DeleteOptions", "", [("propagationPolicy", "FieldValueNotSupported",
                                                           f'Unsupported value: "{policy}": supported values: '
                                                           '"Foreground", "Background", "Orphan", "nil"')],
                                    "meta.k8s.io")
        # Foreground and Orphan hold the object with the garbage collector's finalizer until it has
        # deleted (or released) the dependents (controllers.garbagecollector).
        gc_finalizer = {"Foreground": FOREGROUND_FINALIZER, "Orphan": ORPHAN_FINALIZER}.get(
            str(policy)) if self.controllers.gc.dependents.get(str(meta.get("uid"))) else None
        kubelet_holds = rt.store == "/pods" and self.controllers.kubelet.terminates(old, grace)
        if meta.get("finalizers") or rt.plural == "namespaces" or kubelet_holds or gc_finalizer:
            new = dict(old)
            new["metadata"] = {**meta, "deletionTimestamp": now_iso(),
                               "deletionGracePeriodSeconds": int(grace or 0) if rt.store == "/pods" else 0}
            if gc_finalizer and gc_finalizer not in (meta.get("finalizers") or ()):
                new["metadata"]["finalizers"] = [*(meta.get("finalizers") or ()), gc_finalizer]
            if rt.plural == "namespaces":
                new["status"] = {**old.get("status", {}), "phase": "Terminating"}
            out = self.write(rt, old, new)
            if rt.plural == "namespaces":
                self.controllers.namespaces.namespace_deleting(name)
            elif kubelet_holds:
                self.controllers.kubelet.pod_deleting(namespace, name, meta["uid"], grace)
            return 200, external(rt, out)
        self.remove(rt, old)
        return 200, external(rt, old)

    def remove(self, rt: ResourceType, old: Obj) -> None:
        """Remove ``old`` from the store with the next resourceVersion (DELETED), and what depends on it."""
        new = dict(old)
        new["metadata"] = {**old["metadata"], "resourceVersion": str(self.store.next_rv())}
        self.store.commit(rt, "DELETED", (old["metadata"].get("namespace", ""), old["metadata"]["name"]), new, old)
        self._after_delete(rt, new)

    def _after_delete(self, rt: ResourceType, obj: Obj) -> None:
        if rt.plural == "customresourcedefinitions" and not rt.crd_name:
            gone = self.registry.remove_crd(obj["metadata"]["name"])
            if gone:
                for o in list(self.store.bucket(gone[0].store).objects.values()):
                    self.remove(gone[0], o)

    def delete_collection(self, request: Request, rt: ResourceType, namespace: str | None,
                          dry: bool) -> web.Response:
        match = self._matchers(request, rt)
        victims = [o for o in self.store.bucket(rt.store).items(namespace) if match is None or match(o)]
        out = []
        for o in victims:
            out.append(self.delete(rt, o["metadata"].get("namespace", ""), o["metadata"]["name"], {}, dry=dry)[1])
        return self.respond(200, {"kind": rt.list_kind, "apiVersion": rt.api_version,
                                  "metadata": {"resourceVersion": str(self.store.rv)}, "items": out})

    # ---- pods/binding (pods/eviction is in controllers.py) ------------------------------------
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
            raise conflict(brt, name, f'pod {name} is already assigned to node "{pod["spec"]["nodeName"]}"')
        if pod["spec"].get("schedulingGates"):
            raise conflict(brt, name, f"pod {name} has non-empty .spec.schedulingGates")
        status = dict(pod.get("status") or {})
        conds = [c for c in status.get("conditions") or [] if c.get("type") != "PodScheduled"]
        conds.append({"type": "PodScheduled", "status": "True", "lastProbeTime": None,
                      "lastTransitionTime": now_iso()})
        status["conditions"] = conds
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

    # ---- loading --------------------------------------------------------------------------------
    def load(self, obj: Obj) -> Obj:
        """Create one object from a file or a dump: its status is kept, its namespace created if missing,
        server-set metadata (uid, resourceVersion, …) replaced."""
        rt = self.registry.for_object(obj)
        if rt is None:
            raise ApiError(404, "NotFound", f'no matches for kind "{obj.get("kind")}" in version '
                                            f'"{obj.get("apiVersion")}"')
        obj = copy.deepcopy(obj)
        meta = obj.setdefault("metadata", {})
        for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields", "selfLink", "generation"):
            meta.pop(f, None)
        ns = ""
        if rt.namespaced:
            ns = meta.get("namespace") or "default"
            nrt = self.rt("", "v1", "namespaces")
            if self.store.get(nrt, "", ns) is None:
                self.create(nrt, "", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        return self.create(rt, ns, obj, keep_status=True)


def _chunks(events: Iterator[bytes]) -> Iterator[tuple[bytes, int]]:
    """Encoded events joined into writes of about ``WRITE_CHUNK`` bytes, with how many each holds."""
    parts: list[bytes] = []
    size = 0
    for data in events:
        parts.append(data)
        size += len(data)
        if size >= WRITE_CHUNK:
            yield b"".join(parts), len(parts)
            parts, size = [], 0
    if parts:
        yield b"".join(parts), len(parts)
