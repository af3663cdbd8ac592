"""Delegated authentication and authorization of the serving port, as kube-scheduler does it.

Upstream serves 10259 over HTTPS and asks the API server about every request but the
always-allowed paths (``--authorization-always-allow-paths``, default ``/healthz,/readyz,/livez``):

- *authentication*: the bearer token goes to ``authentication.k8s.io/v1`` TokenReview, which answers
  with the user (name, uid, groups, extra) or "not authenticated";
- *authorization*: that user, the path and the verb (``get`` for GET) go to
  ``authorization.k8s.io/v1`` SubjectAccessReview as ``nonResourceAttributes``; RBAC answers it
  (``nonResourceURLs: ["/metrics"], verbs: ["get"]``, as Prometheus' ClusterRole grants it).

Both answers are cached as upstream caches them (``--authentication-token-webhook-cache-ttl`` and
``--authorization-webhook-cache-{authorized,unauthorized}-ttl``, 10 s each, denials as long as
grants), so a scrape every 15 s costs the API server at most two reviews, and a flood of bad tokens
at most one per token per 10 s.

The reviews go through a client of their own (``delegated_client``), as upstream's
``DelegatingAuthenticationOptions`` and ``DelegatingAuthorizationOptions`` build one
(k8s.io/apiserver ``pkg/server/options/authentication.go``, ``authorization.go``: QPS 200, burst
400, a 10 s review timeout): a flood of random tokens spends that budget, never the scheduler's
own, so its Bindings are not queued behind TokenReviews. At most ``MAX_PENDING_REVIEWS`` requests
wait for a review (past that, 429 at once), and the serving port caps the connections per client
address and cancels the handler of a request whose client left (``serving.py``).

A request without a token is refused with 401 (kopf-scheduler has no anonymous user; upstream,
with anonymous authentication on, would ask RBAC about ``system:anonymous`` and answer 403).
Answers are Kubernetes ``Status`` objects, as upstream writes them.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from scheduler.errors import ClientError
from scheduler.kubeapi import KubeClient, KubeConfig

__all__ = ["ALWAYS_ALLOW_PATHS", "CACHE_TTL", "DELEGATED_BURST", "DELEGATED_QPS", "DelegatingAuth", "UserInfo",
           "delegated_client"]

ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
CACHE_TTL = 10.0
# The delegated reviews' client (upstream: "set high qps/burst limits since this will effectively
# limit API server responsiveness"), and TokenAccessReviewTimeout / the authorization webhook's timeout.
DELEGATED_QPS = 200.0
DELEGATED_BURST = 400
REVIEW_TIMEOUT = 10.0
# Its connections to the API server: reviews wait for one rather than open more.
DELEGATED_CONNECTIONS = 16
# Requests waiting for a review the cache cannot answer: past this many, a new one is answered 429
# at once (the text of the API server's max-in-flight filter), so a flood's requests queue in
# bounded memory and time rather than behind the rate limit without end.
MAX_PENDING_REVIEWS = 64


def delegated_client(config: KubeConfig) -> KubeClient:
    """A client for TokenReviews and SubjectAccessReviews, apart from the scheduler's own: its own
    connections and its own rate limit, upstream's QPS and burst for delegated auth."""
    return KubeClient(config, limit=DELEGATED_CONNECTIONS, timeout=REVIEW_TIMEOUT, qps=DELEGATED_QPS,
                      burst=DELEGATED_BURST)
MAX_CACHED = 10_000          # entries per cache: a token flood cannot grow memory without bound


@dataclass(frozen=True)
class UserInfo:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


def status(code: int, reason: str, message: str) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
            "reason": reason, "details": {}, "code": code}
    return web.json_response(body, status=code)


@dataclass
class _Cache:
    ttl: float
    clock: Callable[[], float]
    entries: dict[Any, tuple[float, Any]] = field(default_factory=dict)

    def get(self, key: Any) -> tuple[bool, Any]:
        hit = self.entries.get(key)
        if hit is None or hit[0] <= self.clock():
            return False, None
        return True, hit[1]

    def put(self, key: Any, value: Any) -> None:
        if len(self.entries) >= MAX_CACHED:
            now = self.clock()
            self.entries = {k: v for k, v in self.entries.items() if v[0] > now}
            if len(self.entries) >= MAX_CACHED:
                self.entries.pop(next(iter(self.entries)))
        self.entries[key] = (self.clock() + self.ttl, value)


class DelegatingAuth:
    """TokenReview + SubjectAccessReview against the cluster, cached; ``middleware`` guards an app."""

    def __init__(self, api: KubeClient, *, always_allow: Iterable[str] = ALWAYS_ALLOW_PATHS,
                 ttl: float = CACHE_TTL, clock: Callable[[], float] = time.monotonic) -> None:
        self.api = api
        self.always_allow = tuple(always_allow)
        self._tokens = _Cache(ttl, clock)
        self._decisions = _Cache(ttl, clock)
        self.reviews = 0             # TokenReviews and SubjectAccessReviews sent (tests, debugging)
        self.pending = 0             # requests waiting for a review
        self.max_pending = MAX_PENDING_REVIEWS

    def allowed_without_auth(self, path: str) -> bool:
        """Upstream's always-allow paths: exact, or a prefix ending in ``*``."""
        return any(path == p or (p.endswith("*") and path.startswith(p[:-1])) for p in self.always_allow)

    async def authenticate(self, token: str) -> UserInfo | None:
        hit, user = self._tokens.get(token)
        if hit:
            return user                              # type: ignore[no-any-return]
        self.reviews += 1
        review = await self.api.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
            "apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}})
        st = (review or {}).get("status") or {}
        found: UserInfo | None = None
        if st.get("authenticated"):
            u = st.get("user") or {}
            found = UserInfo(str(u.get("username", "")), str(u.get("uid", "")), tuple(u.get("groups") or ()),
                             tuple(sorted((k, tuple(v)) for k, v in (u.get("extra") or {}).items())))
        self._tokens.put(token, found)
        return found

    async def authorize(self, user: UserInfo, path: str, verb: str) -> tuple[bool, str]:
        key = (user, path, verb)
        hit, decision = self._decisions.get(key)
        if hit:
            return decision                          # type: ignore[no-any-return]
        self.reviews += 1
        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups),
                                "nonResourceAttributes": {"path": path, "verb": verb}}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        review = await self.api.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
            "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec})
        st = (review or {}).get("status") or {}
        decision = (bool(st.get("allowed")) and not st.get("denied"), str(st.get("reason") or ""))
        self._decisions.put(key, decision)
        return decision

    @web.middleware
    async def middleware(self, request: web.Request,
                         handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        path = request.path
        if self.allowed_without_auth(path):
            return await handler(request)
        header = request.headers.get("Authorization", "")
        token = header[7:].strip() if header.startswith("Bearer ") else ""
        if not token:
            return status(401, "Unauthorized", "Unauthorized")
        verb = request.method.lower()
        cached, user = self._tokens.get(token)
        needs_review = not cached or (user is not None and not self._decisions.get((user, path, verb))[0])
        if needs_review and self.pending >= self.max_pending:
            response = status(429, "TooManyRequests", "Too many requests, please try again later.")
            response.headers["Retry-After"] = "1"
            return response
        self.pending += 1
        try:
            try:
                user = await self.authenticate(token)
            except ClientError:
                user = None                              # upstream: an authenticator error is a 401
            if user is None:
                return status(401, "Unauthorized", "Unauthorized")
            try:
                allowed, reason = await self.authorize(user, path, verb)
            except ClientError as e:
                return status(500, "InternalError", f"Internal error occurred: authorization: {e}")
        finally:
            self.pending -= 1
        if not allowed:
            message = f'forbidden: User "{user.name}" cannot {verb} path "{path}"'
            return status(403, "Forbidden", f"{message}: {reason}" if reason else message)
        return await handler(request)
