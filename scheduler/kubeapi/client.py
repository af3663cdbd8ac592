"""``KubeClient``: JSON over HTTP/1.1, errors as ``ClientError``s.

Request-response calls go through ``http1.Http1Pool``, a lean kept-alive pool (about a third of
aiohttp's client CPU per request, which counts end to end: BENCHMARKS.md); watches stream through
aiohttp's ``ClientSession``, and so does every call when the kubeconfig names a ``proxy-url``. The
two pools are separate, each bounded by ``limit``.

Paths come from ``resource_path`` for the kinds this project touches, and from discovery for any
other (custom) kind, cached per client. Watches yield ``(type, object)`` pairs and end when the
server closes the stream; a ``410`` ERROR event raises ``GoneError`` so the caller relists.

Every failure is a ``ClientError``: an HTTP error status by its code, and a failure with no answer
at all (refused, reset, TLS, a timeout, a body cut short) as ``TransportError`` with a message that
names the request and the cause. So no caller has to know aiohttp's exception tree, and none can
miss a case (a binding cycle that caught only HTTP errors once stranded its pod on a reset).
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import aiohttp
import orjson

from scheduler.errors import ClientError, ConflictError, NotFoundError, TransportError
from scheduler.kubeapi.config import KubeConfig
from scheduler.kubeapi.credentials import CredentialError
from scheduler.kubeapi.http1 import Http1Pool
from scheduler.kubeapi.ratelimit import TokenBucket

__all__ = ["GoneError", "KubeClient", "new_event_loop", "resource_path"]
# The bearer token the current task's last request carried: a 401 invalidates the credentials only
# if they still hold that token, so a burst of requests refused with one expired token refreshes once.
_SENT_TOKEN: contextvars.ContextVar[str | None] = contextvars.ContextVar("sent_token", default=None)

Obj = dict[str, Any]
USER_AGENT = "kopf-scheduler/0.1.0"

_KNOWN: dict[tuple[str, str], tuple[str, bool]] = {
    ("v1", "Pod"): ("pods", True), ("v1", "Node"): ("nodes", False), ("v1", "Namespace"): ("namespaces", False),
    ("v1", "Event"): ("events", True), ("v1", "Service"): ("services", True), ("v1", "Binding"): ("bindings", True),
    ("v1", "ConfigMap"): ("configmaps", True), ("events.k8s.io/v1", "Event"): ("events", True),
    ("coordination.k8s.io/v1", "Lease"): ("leases", True), ("apps/v1", "ReplicaSet"): ("replicasets", True),
    ("scheduling.k8s.io/v1", "PriorityClass"): ("priorityclasses", False),
    ("policy/v1", "PodDisruptionBudget"): ("poddisruptionbudgets", True),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"): ("customresourcedefinitions", False),
}


class GoneError(ClientError):
    """410: the resourceVersion is too old; list again."""


def new_event_loop() -> asyncio.AbstractEventLoop:
    """The loop every client of this package runs on (the operator's worker thread, the simulated
    cluster, the CLI): uvloop where it is installed (it serves about twice the requests per second),
    else asyncio's."""
    try:
        import uvloop
    except ImportError:
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def resource_path(api_version: str, plural: str, namespace: str | None = None, name: str | None = None,
                  sub: str | None = None) -> str:
    base = "/api/v1" if api_version == "v1" else f"/apis/{api_version}"
    path = f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"
    if name:
        path += f"/{name}"
    if sub:
        path += f"/{sub}"
    return path


_TRANSPORT = (aiohttp.ClientError, OSError, TimeoutError, ValueError)


def transport_error(method: str, path: str, e: BaseException, timeout: float | None = None) -> TransportError:
    """A ``TransportError`` whose message is never empty (``str(TimeoutError())`` is)."""
    if isinstance(e, TimeoutError | aiohttp.ServerTimeoutError):
        cause = f"timed out after {timeout:g}s" if timeout else "timed out"
    else:
        cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return TransportError(f"{method} {path}: {cause}")


def _answer(status: int, raw: bytes, headers: Mapping[str, str], decode: bool = True) -> Any:
    """A response's body, decoded (JSON, else text); an error status raised as its ``ClientError``.
    Without ``decode`` a success is None, its body not read (a caller that ignores it)."""
    if not decode and status < 400:
        return None
    try:
        out = orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        out = raw.decode(errors="replace")
    if status >= 400:
        raise _error(status, out, headers)
    return out


def _error(status: int, body: Any, headers: Mapping[str, str]) -> ClientError:
    msg = body.get("message") if isinstance(body, dict) else None
    text = msg or (str(body)[:300] if body else f"HTTP {status}")
    retry = headers.get("Retry-After")
    retry_after = float(retry) if retry and retry.replace(".", "", 1).isdigit() else None
    if status == 404:
        return NotFoundError(text, status=status)
    if status == 409:
        return ConflictError(text, status=status)
    if status == 410:
        return GoneError(text, status=status)
    return ClientError(text, status=status, retry_after=retry_after)


class KubeClient:
    def __init__(self, config: KubeConfig, *, limit: int = 100, timeout: float = 30.0,
                 qps: float | None = None, burst: int | None = None) -> None:
        """``qps``/``burst``: client-go's token bucket on every request (None: no limit); events
        (``events.k8s.io``) and Leases (``coordination.k8s.io``) draw from buckets of their own, as
        upstream's event client and leader-election client do, so a long queue of bindings waiting
        for a token never delays an Event or a Lease renewal."""
        self.config = config
        self._limiter = TokenBucket(qps, burst or 1) if qps is not None else None
        self._event_limiter = TokenBucket(qps, burst or 1) if qps is not None else None
        self._lease_limiter = TokenBucket(qps, burst or 1) if qps is not None else None
        self._limit = limit
        self._timeout = timeout
        self._session: aiohttp.ClientSession | None = None
        self._pool: Http1Pool | None = None
        self._plurals: dict[tuple[str, str], tuple[str, bool]] = dict(_KNOWN)
        # Called with (method, HTTP status or None for a connection error, seconds until the
        # response's headers, as client-go's request latency) after every request.
        self.on_response: Callable[[str, int | None, float], None] | None = None

    @property
    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            conn = aiohttp.TCPConnector(limit=self._limit, ssl=self.config.ssl_context
                                        if self.config.ssl_context is not None else True)
            self._session = aiohttp.ClientSession(connector=conn, json_serialize=lambda o: orjson.dumps(o).decode(),
                                                  timeout=aiohttp.ClientTimeout(total=None, sock_connect=10))
        return self._session

    def _http1(self) -> Http1Pool:
        """The lean pool for request-response calls (``http1.py``: about a third of aiohttp's CPU
        per request), made on first use so it belongs to the loop that uses it."""
        if self._pool is None:
            self._pool = Http1Pool(self.config.server, ssl_context=self.config.ssl_context,
                                   server_hostname=self.config.tls_server_name, limit=self._limit)
        return self._pool

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None

    async def __aenter__(self) -> KubeClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    def _headers(self, content_type: str | None = None) -> dict[str, str]:
        h = {"Accept": "application/json", "User-Agent": USER_AGENT}
        token = self.config.bearer()
        _SENT_TOKEN.set(token)
        if token:
            h["Authorization"] = f"Bearer {token}"
        if content_type:
            h["Content-Type"] = content_type
        return h

    async def _auth_headers(self, method: str, path: str, content_type: str | None = None) -> dict[str, str]:
        """``_headers``, after refreshing a due token off the loop (an exec plugin may take seconds)."""
        if not self.config.bearer_fresh():
            try:
                await asyncio.to_thread(self.config.bearer)
            except CredentialError as e:
                # No request could be sent: to every caller this is a failure on the way to the
                # server, retried with backoff like a refused connection, and its text says why.
                raise TransportError(f"{method} {path}: getting credentials: {e}") from None
        return self._headers(content_type)

    def _transport(self) -> dict[str, Any]:
        """Per-request options from the kubeconfig's cluster: tls-server-name and proxy-url."""
        out: dict[str, Any] = {}
        if self.config.tls_server_name:
            out["server_hostname"] = self.config.tls_server_name
        if self.config.proxy_url:
            out["proxy"] = self.config.proxy_url
        return out

    async def request(self, method: str, path: str, body: Any = None, *, params: Mapping[str, str] | None = None,
                      content_type: str = "application/json", timeout: float | None = None,
                      precondition: Callable[[], None] | None = None, decode: bool = True) -> Any:
        """One API call. ``precondition`` is called once the request has waited for its rate-limit
        token and its credentials, right before it is sent, and may raise to refuse it: a leader's
        Binding waiting behind the token bucket must not go out once its lease may be lost.
        ``decode=False``: a success returns None without decoding its body (a Binding's or an
        Event's answer, which the scheduler never reads); an error is raised as always."""
        data = orjson.dumps(body) if body is not None else None
        # A 401 with a token that can change (an exec plugin's, a rotated file) is retried once with
        # a fresh one, as client-go's exec authenticator does; a second 401 is the caller's.
        retry = self.config.refreshable()
        while True:
            try:
                return await self._send(method, path, data, params, content_type, timeout, precondition, decode)
            except ClientError as e:
                if e.status != 401 or not retry:
                    raise
                retry = False
                self.config.invalidate_bearer(refused=_SENT_TOKEN.get())

    async def _throttle(self, path: str) -> None:
        limiter = (self._event_limiter if path.startswith("/apis/events.k8s.io/") else
                   self._lease_limiter if path.startswith("/apis/coordination.k8s.io/") else self._limiter)
        if limiter is not None:
            await limiter.wait()

    async def _send(self, method: str, path: str, data: bytes | None, params: Mapping[str, str] | None,
                    content_type: str, timeout: float | None,
                    precondition: Callable[[], None] | None = None, decode: bool = True) -> Any:
        """One request-response call: on the lean HTTP/1.1 pool, or on aiohttp behind a proxy
        (``proxy-url``), which the pool does not speak. Watches never come here (``watch_path``)."""
        if self.config.proxy_url:
            return await self._send_aiohttp(method, path, data, params, content_type, timeout, precondition, decode)
        await self._throttle(path)
        headers = await self._auth_headers(method, path, content_type if data is not None else None)
        if precondition is not None:
            precondition()
        total = timeout or self._timeout
        t0 = time.perf_counter()
        headed = False

        def on_head(status: int) -> None:
            nonlocal headed
            headed = True
            self._count(method, status, t0)
        try:
            async with asyncio.timeout(total):
                resp = await self._http1().request(method, path, headers, data, params=params, on_head=on_head)
        except _TRANSPORT as e:
            if not headed:
                self._count(method, None, t0)
            raise transport_error(method, path, e, total) from e
        return _answer(resp.status, resp.body, resp.headers, decode)

    async def _send_aiohttp(self, method: str, path: str, data: bytes | None, params: Mapping[str, str] | None,
                            content_type: str, timeout: float | None,
                            precondition: Callable[[], None] | None = None, decode: bool = True) -> Any:
        await self._throttle(path)
        headers = await self._auth_headers(method, path, content_type if data is not None else None)
        if precondition is not None:
            precondition()
        t0 = time.perf_counter()
        try:
            ctx = self.session.request(
                method, self.config.server + path, data=data, params=params, headers=headers,
                timeout=aiohttp.ClientTimeout(total=timeout or self._timeout), **self._transport())
            resp = await ctx.__aenter__()
        except _TRANSPORT as e:
            self._count(method, None, t0)
            raise transport_error(method, path, e, timeout or self._timeout) from e
        try:
            self._count(method, resp.status, t0)
            try:
                raw = await resp.read()
            except _TRANSPORT as e:
                raise transport_error(method, path, e, timeout or self._timeout) from e
            return _answer(resp.status, raw, resp.headers, decode)
        finally:
            await ctx.__aexit__(None, None, None)

    def _count(self, method: str, status: int | None, t0: float) -> None:
        if self.on_response is not None:
            self.on_response(method, status, time.perf_counter() - t0)

    # ---- typed helpers --------------------------------------------------------------------------
    async def plural(self, api_version: str, kind: str) -> tuple[str, bool]:
        key = (api_version, kind)
        if key not in self._plurals:
            doc = await self.request("GET", "/api/v1" if api_version == "v1" else f"/apis/{api_version}")
            for r in doc.get("resources", []):
                if "/" not in r["name"]:
                    self._plurals[(api_version, r["kind"])] = (r["name"], r["namespaced"])
            if key not in self._plurals:
                raise NotFoundError(f'no matches for kind "{kind}" in version "{api_version}"', status=404)
        return self._plurals[key]

    async def path_for(self, obj: Obj, *, name: bool = True, sub: str | None = None) -> str:
        plural, namespaced = await self.plural(obj["apiVersion"], obj["kind"])
        meta = obj.get("metadata") or {}
        ns = (meta.get("namespace") or "default") if namespaced else None
        return resource_path(obj["apiVersion"], plural, ns, meta.get("name") if name else None, sub)

    async def create(self, obj: Obj) -> Obj:
        result: Obj = await self.request("POST", await self.path_for(obj, name=False), obj)
        return result

    async def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Obj:
        plural, namespaced = await self.plural(api_version, kind)
        result: Obj = await self.request("GET", resource_path(api_version, plural,
                                                              namespace or "default" if namespaced else None, name))
        return result

    async def list(self, api_version: str, kind: str, namespace: str | None = None,
                   params: Mapping[str, str] | None = None) -> Obj:
        plural, _ = await self.plural(api_version, kind)
        result: Obj = await self.request("GET", resource_path(api_version, plural, namespace), params=params)
        return result

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, namespace: str | None = None, *,
                    sub: str | None = None, patch_type: str = "merge") -> Obj:
        plural, namespaced = await self.plural(api_version, kind)
        ctype = {"merge": "application/merge-patch+json", "json": "application/json-patch+json",
                 "strategic": "application/strategic-merge-patch+json"}[patch_type]
        result: Obj = await self.request("PATCH", resource_path(api_version, plural, namespace or "default"
                                                                if namespaced else None, name, sub), patch,
                                         content_type=ctype)
        return result

    async def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None,
                     grace_period: int | None = None) -> Any:
        plural, namespaced = await self.plural(api_version, kind)
        body = {"kind": "DeleteOptions", "apiVersion": "v1", **({"gracePeriodSeconds": grace_period}
                                                                 if grace_period is not None else {})}
        return await self.request("DELETE", resource_path(api_version, plural, namespace or "default"
                                                          if namespaced else None, name), body)

    async def watch(self, api_version: str, kind: str, *, namespace: str | None = None,
                    resource_version: str | None = None, params: Mapping[str, str] | None = None,
                    timeout: int = 300) -> AsyncIterator[tuple[str, Obj]]:
        plural, _ = await self.plural(api_version, kind)
        async for event in self.watch_path(resource_path(api_version, plural, namespace),
                                           resource_version=resource_version, params=params, timeout=timeout):
            yield event

    async def watch_path(self, path: str, *, resource_version: str | None = None,
                         params: Mapping[str, str] | None = None, timeout: int = 300
                         ) -> AsyncIterator[tuple[str, Obj]]:
        """Watch a collection by its path (``/apis/storage.k8s.io/v1/csinodes``): each event's type
        and object, until the server ends the watch; an ERROR event is raised as its status."""
        q = {"watch": "true", "timeoutSeconds": str(timeout), **(params or {})}
        if resource_version:
            q["resourceVersion"] = resource_version
        await self._throttle(path)
        headers = await self._auth_headers("GET", path + "?watch")
        t0 = time.perf_counter()
        try:
            async with self.session.get(self.config.server + path, params=q, headers=headers,
                                        timeout=aiohttp.ClientTimeout(total=None, sock_read=timeout + 30),
                                        **self._transport()) as resp:
                self._count("GET", resp.status, t0)
                if resp.status == 401:
                    # The watcher re-opens after an error; let that attempt fetch a new token.
                    self.config.invalidate_bearer(refused=_SENT_TOKEN.get())
                if resp.status >= 400:
                    raw = await resp.read()
                    try:
                        body = orjson.loads(raw) if raw else None
                    except orjson.JSONDecodeError:
                        body = raw.decode(errors="replace")
                    raise _error(resp.status, body, resp.headers)
                buf = b""
                async for chunk in resp.content.iter_any():
                    buf += chunk
                    *lines, buf = buf.split(b"\n")
                    for line in lines:
                        if not line.strip():
                            continue
                        ev = orjson.loads(line)
                        if not isinstance(ev, dict) or not isinstance(ev.get("object"), dict):
                            raise TransportError(f"GET {path}?watch: a watch event that is not an object")
                        if ev.get("type") == "ERROR":
                            st = ev["object"]
                            raise _error(int(st.get("code") or 500), st, {})
                        yield str(ev.get("type")), ev["object"]
        except ClientError:
            raise
        except (*_TRANSPORT, RuntimeError) as e:
            # orjson.JSONDecodeError is a ValueError: a stream cut mid-line. aiohttp's stream reader
            # raises a bare RuntimeError("Connection closed.") when the connection under an open
            # response goes away: for a watch, that too is a dropped connection, resumed by the caller.
            self._count("GET", None, t0)
            raise transport_error("GET", path + "?watch", e, timeout + 30) from e


async def gather_limited(n: int, coros: list[Any]) -> list[Any]:
    """Run coroutines with at most ``n`` in flight (used by loaders and benchmarks)."""
    sem = asyncio.Semaphore(n)

    async def one(c: Any) -> Any:
        async with sem:
            return await c
    return await asyncio.gather(*(one(c) for c in coros), return_exceptions=True)
