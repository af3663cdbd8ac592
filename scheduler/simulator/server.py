"""The simulated kube-apiserver: ``ApiServer`` routes each request to its verb's handler.

One catch-all route parses the URL as the real server's request-info resolver does
(``/api/v1/namespaces/NS/pods/NAME/binding``, ``/apis/GROUP/VERSION/PLURAL``) into a verb, a
resource type, a namespace, a name and a subresource, authenticates, authorizes (impersonation and
RBAC: ``impersonation.py``, ``requestinfo.py``, ``auth.py``), applies faults (``faults.py``),
then hands the request to the handler of its verb (``handlers/``: list, watch, create, update, patch,
delete, bind, scale). The handlers go through the kinds' strategies (``registry/``) into the store
(``store.py``). Every write is synchronous on the event loop, so each is atomic and totally ordered by
resourceVersion, as etcd orders them.

``ApiServer`` is assembled from the handler mixins, each over ``registry.generic.GenericStore`` and
``registry.strategy.Strategy``; the controllers (``controllers/``) see it only as
``interfaces.ClusterWriter``, and it tells them of writes through ``interfaces.ControllerHooks``.

Answers follow the real server: ``Status`` bodies with its reasons and messages (``NotFound``,
``AlreadyExists``, ``Conflict``, ``Invalid``, ``Gone``/``Expired``, ``BadRequest``,
``UnsupportedMediaType``, ``RequestEntityTooLarge``, ``TooManyRequests``, ``Timeout``), Tables for
kubectl, and watch streams of JSON lines.

Whatever a client sends gets kube-apiserver's answer, in bounded time and memory:

- Query parameters parse as apimachinery parses them (``params.py``): ``?limit=abc`` is a 400.
- A name that is not a valid path segment (``..``) is a 400.
- Bodies are at most 3 MiB, and YAML may not expand past that (``decode.py``).
- JSON patches are bounded (``patch.py``).
- Objects and the store are bounded, and so are slow watchers (``store.py``).
- A read at a resourceVersion the store has not reached waits at most ``FRESH_WAIT`` seconds, then
  answers ``504 Too large resource version``.
"""

from __future__ import annotations

import asyncio
import logging
import random
import secrets
import time
from collections import Counter
from collections.abc import Mapping
from typing import Any

import orjson
import yaml
from aiohttp import web

from scheduler.features import enabled
from scheduler.simulator import managed, media
from scheduler.simulator.apierrors import ApiError, bad_request, invalid, not_found, status_body
from scheduler.simulator.auth import ADMIN, REVIEW_TYPES, UserInfo, answer_review, authorize, forbidden
from scheduler.simulator.controllers.eventttl import DEFAULT_EVENT_TTL
from scheduler.simulator.controllers.manager import Controllers
from scheduler.simulator.faults import BLACKHOLE, BLACKHOLE_SECONDS, RESET, Faults
from scheduler.simulator.handlers.base import (
    _JSON,
    MAX_BODY,
    WRITE_OPTIONS,
    Request,
    check_dry_run,
    list_options_invalid,
)
from scheduler.simulator.handlers.bind import BindHandler
from scheduler.simulator.handlers.delete import DeleteHandler
from scheduler.simulator.handlers.discovery import _VERSION, DiscoveryHandler, wants_aggregated
from scheduler.simulator.handlers.patch import PatchHandler
from scheduler.simulator.handlers.scale import ScaleHandler, _scale_of
from scheduler.simulator.handlers.watch import WatchHandler
from scheduler.simulator.impersonation import impersonated, wants_impersonation
from scheduler.simulator.interfaces import Writer
from scheduler.simulator.openapi import FieldChecker, OpenAPI
from scheduler.simulator.params import (
    ListOptions,
    ParamError,
    go_quote,
    list_options,
    path_segment_errors,
    query_bool,
    validate_list_options,
)
from scheduler.simulator.registry import podgroups, scheduling
from scheduler.simulator.registry.core import serviceaccount
from scheduler.simulator.registry.core.eviction import Eviction
from scheduler.simulator.requestinfo import request_attributes
from scheduler.simulator.resources import ResourceRegistry, ResourceType
from scheduler.simulator.store import MAX_OBJECT_BYTES, MAX_PENDING_BYTES, MAX_TOTAL_BYTES, Store, external

__all__ = ["MAX_BODY", "ApiServer", "Writer"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]
PUBLIC = {"/version", "/healthz", "/livez", "/readyz", "/version/"}
CLUSTER_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


class ApiServer(DiscoveryHandler, WatchHandler, DeleteHandler, PatchHandler, ScaleHandler, BindHandler):
    """All server state; ``app()`` builds the aiohttp application serving it."""

    def __init__(self, *, token: str | None = None, faults: Faults | None = None, history: int = 20_000,
                 pod_running_after: float | None = None, pod_termination_seconds: float = 0.0,
                 pod_completion_seconds: float = 2.0, provision_seconds: float = 0.2,
                 gpus_per_node: int = 0, gpu_attributes: Obj | None = None, seed: int = 0,
                 storage_quota_bytes: int = MAX_TOTAL_BYTES,
                 max_object_bytes: int = MAX_OBJECT_BYTES, watch_buffer_bytes: int = MAX_PENDING_BYTES,
                 feature_gates: Mapping[str, bool] | None = None, ca_pem: bytes = b"",
                 event_ttl: float = DEFAULT_EVENT_TTL) -> None:
        self.token = token if token is not None else secrets.token_hex(16)
        # Further bearer tokens the server accepts, each until an epoch time (None: forever), as a
        # real cluster accepts short-lived tokens that an exec credential plugin hands out; and
        # who each is (``add_token``; the admin, if not said).
        self.tokens: dict[str, float | None] = {}
        self.token_users: dict[str, UserInfo] = {}
        self.issued: dict[str, None] = {}       # TokenRequest's tokens, oldest first
        self.faults = faults or Faults(seed=seed)
        self.store = Store(history, max_object_bytes=max_object_bytes, max_total_bytes=storage_quota_bytes)
        self.watch_buffer_bytes = watch_buffer_bytes
        self.terminated_watchers = 0   # apiserver_terminated_watchers_total: watchers dropped for falling behind
        self.registry = ResourceRegistry()
        # kube-apiserver's --feature-gates: GenericWorkload serves scheduling.k8s.io/v1beta1's Workload and
        # PodGroup (``registry/podgroups.py``) and lets pods carry spec.schedulingGroup.
        self.feature_gates: Mapping[str, bool] = dict(feature_gates or {})
        if enabled(self.feature_gates, podgroups.GENERIC_WORKLOAD):
            for rt in podgroups.TYPES:
                self.registry.add(rt)
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
        # The first refused bindings, each as (namespace/name, uid, the node it is on, the node asked
        # for, the refusal's wall time): which pods the audit counts, for the soak's report.
        self.bind_conflict_log: list[dict[str, Any]] = []
        self.rng = random.Random(seed)
        self.audit: set[tuple[str, str, str, str]] = set()     # (user agent, verb, group, resource)
        self.controllers = Controllers(self, pod_running_after=pod_running_after,
                                       pod_termination_seconds=pod_termination_seconds,
                                       pod_completion_seconds=pod_completion_seconds,
                                       provision_seconds=provision_seconds, gpus_per_node=gpus_per_node,
                                       gpu_attributes=gpu_attributes, root_ca=ca_pem, event_ttl=event_ttl)
        self.store.listeners.append(self.controllers.disruption.on_event)
        self.store.listeners.append(self.controllers.workloads.on_event)
        self.store.listeners.append(self.controllers.gc.on_event)
        self.store.listeners.append(self.controllers.volumes.on_event)
        self.store.listeners.append(self.controllers.claims.on_event)
        self.store.listeners.append(self.controllers.gpus.on_event)
        self.store.listeners.append(self.controllers.kubelet.on_event)
        self.store.listeners.append(self.controllers.serviceaccounts.on_event)
        self.store.listeners.append(self.controllers.root_ca.on_event)
        self.store.listeners.append(self.controllers.quota.on_event)
        self.store.listeners.append(self.controllers.kubernetes_service.on_event)
        self.store.listeners.append(self.controllers.event_ttl.on_event)
        self.eviction = Eviction(self, self.controllers.disruption)
        for ns in CLUSTER_NAMESPACES:
            self.create(self.rt("", "v1", "namespaces"), "", {"apiVersion": "v1", "kind": "Namespace",
                                                                "metadata": {"name": ns}})
        for name, value in scheduling.SYSTEM_CLASSES.items():
            self.create(self.rt("scheduling.k8s.io", "v1", "priorityclasses"), "", {
                "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
                "value": value, "description": "Used for system critical pods that must not be moved from their "
                                               "current node."})


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


    def advertise(self, host: str, port: int) -> None:
        """The server now serves on ``host:port``: the ``default/kubernetes`` Service and its endpoints
        say so."""
        self.controllers.kubernetes_service.advertise(host, port)

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

    def _token_user(self, request: Request) -> UserInfo:
        header = request.headers.get("Authorization", "")
        return (self.user_of(header[7:]) if header.startswith("Bearer ") else None) or ADMIN

    def _requester(self, request: Request) -> UserInfo:
        """Who the request runs as: its token's user, or the user it impersonates (allowed already)."""
        user = self._token_user(request)
        return impersonated(request.headers, user, None) if wants_impersonation(request.headers) else user

    def _rbac_objects(self, store: str) -> list[Obj]:
        return list(self.store.bucket(store).items(None))

    def _authorize(self, request: Request) -> None:
        """apiserver's ``WithImpersonation`` then ``WithAuthorization``: the 403 for a request its
        user may not make (``requestinfo``, ``auth.authorize``); ``system:masters`` may make any."""
        user = self._token_user(request)
        if wants_impersonation(request.headers):
            user = impersonated(request.headers, user,
                                lambda who, attrs: authorize(self._rbac_objects, who, attrs, False))
        if "system:masters" in user.groups:
            return
        attrs, resource_request = request_attributes(request.method, request.path, request.query)
        allowed, reason = authorize(self._rbac_objects, user, attrs, not resource_request)
        if not allowed:
            raise forbidden(user, attrs, resource_request, reason)

    async def dispatch(self, request: Request) -> web.StreamResponse:
        path = request.path.rstrip("/") or "/"
        if path not in PUBLIC and not self._authenticated(request.headers.get("Authorization")):
            return self.respond(401, status_body(401, "Unauthorized", "Unauthorized"))
        try:
            if path not in PUBLIC:
                self._authorize(request)
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
        found = self._discovery(request, path, parts)
        if found is not None:
            return found
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

    def _discovery(self, request: Request, path: str, parts: list[str]) -> web.StreamResponse | None:
        """The paths outside a group version's resources: health, version, OpenAPI and group discovery
        (None for any other path)."""
        if path in ("/healthz", "/livez", "/readyz"):
            return web.Response(text="ok")
        if path == "/version":
            return self.respond(200, _VERSION)
        if path == "/debug/binds":     # not Kubernetes: the soak test's double-bind audit
            return self.respond(200, {"binds": dict(self.binds), "conflicts": self.bind_conflicts,
                                      "conflictLog": self.bind_conflict_log})
        if parts and parts[0] == "openapi":
            return self.openapi(request, parts)
        if parts in (["api"], ["apis"]) and wants_aggregated(request.headers.get("Accept", "")):
            return self.aggregated(request, core=parts == ["api"])
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
        return None


    async def resource_request(self, request: Request, group: str, version: str,
                               rest: list[str]) -> web.StreamResponse:
        rt, namespace, name, sub = self._resource_path(group, version, rest)
        q = request.query
        verb = _request_verb(rt, request.method, query_bool(q, "watch"), name, sub)
        resource_label = f"{rt.plural}/{sub}" if sub else rt.plural
        # Which client made which kind of call: a small bounded set, for RBAC checks.
        if len(self.audit) < 10_000:
            self.audit.add((request.headers.get("User-Agent", "").split("/")[0], verb, group, resource_label))
        if self.faults.active and (faulted := await self._fault(request, verb, resource_label)) is not None:
            return faulted
        if verb in WRITE_OPTIONS:          # the write's options are decoded and validated before its body
            check_dry_run(q.getall("dryRun", []), WRITE_OPTIONS[verb])
        dry = q.get("dryRun") == "All"
        opts = _request_options(q, verb, name)
        if verb == "watch":
            # A watch streams, which only aiohttp's protocol does: the lean front door hands every
            # watch to it (http1.py), so this request is aiohttp's.
            assert isinstance(request, web.BaseRequest) and opts is not None
            return await self.watch(request, rt, namespace or None, name, opts)
        if verb == "list":
            assert opts is not None
            await self._wait_fresh(q.get("resourceVersion"))
            return self.list(request, rt, namespace or None, opts.limit)
        if verb == "get":
            return await self._get_request(request, rt, namespace, name, sub)
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

    def _resource_path(self, group: str, version: str, rest: list[str]) -> tuple[ResourceType, str, str, str]:
        """The kind, namespace, name and subresource a resource path names, or 404."""
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
        return rt, namespace, name, sub

    async def _fault(self, request: Request, verb: str, resource_label: str) -> web.Response | None:
        """The fault injector's answer to this request: a delay, a cut connection or an error status
        (None: serve it)."""
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
        if code is None:
            return None
        reason = {429: "TooManyRequests", 503: "ServiceUnavailable"}.get(code, "InternalError")
        hdrs = {"Retry-After": "1"} if code in (429, 503) else {}
        return self.respond(code, status_body(code, reason, f"simulated fault: {reason}",
                                              {"retryAfterSeconds": 1} if hdrs else None), hdrs)

    async def _get_request(self, request: Request, rt: ResourceType, namespace: str, name: str,
                           sub: str) -> web.StreamResponse:
        """GET of one object (or its scale)."""
        if sub in ("binding", "eviction"):
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                                                    "resource")
        await self._wait_fresh(request.query.get("resourceVersion"))
        obj = self.store.get(rt, namespace, name)
        if obj is None:
            raise not_found(rt, name)
        if sub == "scale":
            return self.respond(200, _scale_of(obj))
        return self.send_obj(request, rt, obj)

    def _write_request(self, request: Request, rt: ResourceType, namespace: str, name: str, sub: str,
                       verb: str, dry: bool, body: Any) -> web.Response:
        """create, update, patch (apply included) and delete, once the body is read."""
        q = request.query
        writer = Writer(q.get("fieldManager") or request.headers.get("User-Agent", "").split("/")[0][:128],
                        sub, q.get("fieldValidation") == "Strict", query_bool(q, "force"),
                        bool(q.get("fieldManager")))
        if verb == "create":
            return self._create_request(request, rt, namespace, name, sub, dry, body, writer)
        if sub == "scale" and verb in ("update", "patch"):
            return self.respond(200, self.scale(rt, namespace, name, body, request.content_type if verb == "patch"
                                                else "", writer, dry=dry))
        if verb == "update":
            obj = self.update(rt, namespace, name, body, sub, dry=dry, fresh=True, strict=writer.strict,
                              writer=writer)
            return self.respond(200, external(rt, obj))
        if verb == "patch":
            return self._patch_request(request, rt, namespace, name, sub, dry, body, writer)
        assert verb == "delete"
        if not body:         # no DeleteOptions body: the query's options count
            body = {k: q[k] for k in ("propagationPolicy",) if k in q}
            if "gracePeriodSeconds" in q and q["gracePeriodSeconds"].lstrip("-").isdigit():
                body["gracePeriodSeconds"] = int(q["gracePeriodSeconds"])
        code, out = self.delete(rt, namespace, name, body, dry=dry)
        return self.respond(code, out)

    def _create_request(self, request: Request, rt: ResourceType, namespace: str, name: str, sub: str, dry: bool,
                        body: Any, writer: Writer) -> web.Response:
        """POST: a review, a binding, an eviction, or a new object."""
        if rt in REVIEW_TYPES and not name:
            return self.respond(201, answer_review(rt, body, self._requester(request), self.user_of,
                                                   self._rbac_objects, namespace))
        if sub == "binding" or rt.plural == "bindings":
            return self.respond(201, self.bind(namespace, name or str((body.get("metadata") or {}).get("name")),
                                               body))
        if sub == "eviction":
            return self.respond(201, self.eviction.evict(namespace, name, body))
        if sub == "token":
            return self.respond(201, self._token_request(rt, namespace, name, body))
        if name:
            raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                                                    "resource")
        obj = self.create(rt, namespace, body, dry=dry, strict=writer.strict, fresh=True, writer=writer)
        return self.respond(201, external(rt, obj))

    def _token_request(self, rt: ResourceType, namespace: str, name: str, body: Any) -> Obj:
        """POST of ``serviceaccounts/NAME/token``: a token the server then accepts as the account."""
        account = self.store.get(rt, namespace, name)
        if account is None:
            raise not_found(rt, name)
        kinds = {"Pod": self.rt("", "v1", "pods"), "Secret": self.rt("", "v1", "secrets")}
        out, grant = serviceaccount.token_request(account, body, lambda kind, n: self.store.get(kinds[kind],
                                                                                               namespace, n))
        now = time.time()
        for token in list(self.issued):     # the expired, and the oldest past the bound, are forgotten
            if len(self.issued) < serviceaccount.MAX_ISSUED and (self.tokens.get(token) or now + 1) > now:
                break
            del self.issued[token]
            self.tokens.pop(token, None)
            self.token_users.pop(token, None)
        self.issued[grant.token] = None
        self.add_token(grant.token, UserInfo(grant.username, grant.uid, grant.groups), grant.until)
        return out

    def _patch_request(self, request: Request, rt: ResourceType, namespace: str, name: str, sub: str, dry: bool,
                       body: Any, writer: Writer) -> web.Response:
        """PATCH: server-side apply, or a JSON, merge or strategic merge patch."""
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


def _request_options(q: Any, verb: str, name: str) -> ListOptions | None:
    """A list, watch or delete-collection's ListOptions, decoded as a whole before anything else (one bad
    parameter fails the request); and the name checked as the registry's key functions check it."""
    opts = None
    if verb in ("watch", "list", "deletecollection"):
        try:
            opts = list_options(q, verb == "watch")
        except ParamError as e:
            raise bad_request(str(e)) from None
        if causes := validate_list_options(opts):
            raise list_options_invalid(causes)
    if name and verb != "watch" and (errs := path_segment_errors(name)):
        # the registry's key functions (NamespaceKeyFunc, NoNamespaceKeyFunc) refuse it
        raise bad_request(f"Name parameter invalid: {go_quote(name)}: {';'.join(errs)}")
    return opts


def _request_verb(rt: ResourceType, method: str, watch: bool, name: str, sub: str) -> str:
    """The request's verb (``RequestInfoFactory``), or 405 where the kind does not serve it."""
    verb = {"GET": "watch" if watch else ("get" if name else "list"), "POST": "create", "PUT": "update",
            "PATCH": "patch", "DELETE": "delete" if name else "deletecollection"}.get(method)
    if verb is None:
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    if verb not in rt.verbs and not sub:
        raise ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource")
    return verb
