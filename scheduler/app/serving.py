"""The scheduler's HTTP endpoints (an edge: aiohttp): ``/healthz``, ``/livez``, ``/readyz`` and
``/metrics``, as kube-scheduler serves them on its secure port (10259): over HTTPS (a given
certificate, else a self-signed one made at start), every path but the always-allowed probes
authenticated and authorized by the API server (``auth.py``). ``kopf-scheduler run`` always serves
securely; plain HTTP is left for in-process tests and tools that build ``OperatorRuntime`` themselves.

``/healthz`` (and ``/livez``) answer 500 naming the check that fails: a loop of the worker thread
that died and awaits its restart, or stalled, a binding cycle past its deadline, or the leader
election watchdog (``service.health``, filled by the runtime). The server runs on the worker's own
loop, so a loop that blocks it makes the probe time out, which a liveness probe counts as a failure too.
``/readyz`` answers 200 only once every informer's initial list has been applied, naming those that
have not and their last error (``service.readiness``);
``/metrics`` is the Prometheus text format of ``service.metrics.registry``. The server runs on the
worker's event loop, never on Kopf's.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import ssl
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from aiohttp import web
from aiohttp.web_protocol import RequestHandler
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from scheduler.app.auth import ALWAYS_ALLOW_PATHS, DelegatingAuth, delegated_client
from scheduler.errors import SchedulerError
from scheduler.kubeapi import KubeClient
from scheduler.service import SchedulerService

__all__ = ["SecureServing", "ServingError", "parse_bind_address", "start_http"]

log = logging.getLogger("kopf_scheduler.serving")


@dataclass(frozen=True)
class SecureServing:
    """``--tls-cert-file``/``--tls-private-key-file`` (both or neither: neither makes a self-signed
    pair, as kube-scheduler does) and ``--authorization-always-allow-paths``."""

    cert_file: str | None = None
    key_file: str | None = None
    always_allow_paths: Sequence[str] = ALWAYS_ALLOW_PATHS

    def ssl_context(self) -> ssl.SSLContext:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        if self.cert_file is None or self.key_file is None:
            from scheduler.simulator.tls import SelfSigned
            with tempfile.TemporaryDirectory(prefix="kopf-scheduler-serving-") as tmp:
                # The context keeps the pair in memory: the files live only while it loads them.
                pair = SelfSigned(Path(tmp), common_name="kopf-scheduler", stem="kopf-scheduler",
                                  hosts=(os.uname().nodename,))
                ctx.load_cert_chain(str(pair.cert_file), str(pair.key_file))
            return ctx
        try:
            ctx.load_cert_chain(self.cert_file, self.key_file)
        except (OSError, ssl.SSLError) as e:
            raise ServingError(f"cannot load --tls-cert-file {self.cert_file} / --tls-private-key-file "
                               f"{self.key_file}: {e}") from None
        return ctx


class ServingError(SchedulerError):
    """An address to serve on cannot be bound (in use, not local, no permission): one line, exit 1."""

# Idle connections on the serving ports: at most this many, each for at most this long. A probe or a
# Prometheus scrape holds a connection for milliseconds; keep-alive between scrapes reconnects cheaply.
MAX_IDLE = 128
IDLE_SECONDS = 30.0
# Connections still in their TLS handshake: at most this many (a new one closes the oldest), each for
# at most this long. Silent ones would otherwise hold a descriptor each until none is left to accept
# /healthz with (4,041 of them took every one of a 4,096 NOFILE); a real client's handshake takes
# milliseconds, so it completes long before a flood could push it out.
MAX_HANDSHAKES = 64
TLS_HANDSHAKE_TIMEOUT = 5.0
# Connections from one client address, in any state: past this, a new one takes the place of the
# client's oldest still in its handshake, or is closed at once. A probe, a scrape or kubectl holds one
# or two; a flood of keep-alive connections cannot take the port.
MAX_PER_CLIENT = 16


class _Acceptor:
    """Accepts the port's connections itself, so it knows those still in their TLS handshake and
    who holds which: it bounds the handshakes in flight (``max_handshakes``, the oldest closed
    for a new one, each given ``handshake_timeout``) and the connections per client address
    (``max_per_client``), then hands each connection to aiohttp (``connect_accepted_socket``).
    Stands in for the ``asyncio.Server`` that ``web.TCPSite`` keeps (``close``, ``sockets``)."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], sock: socket.socket, ctx: ssl.SSLContext | None,
                 *, max_handshakes: int, handshake_timeout: float, max_per_client: int) -> None:
        self.sockets = [sock]
        self._factory, self._ctx = factory, ctx
        self._max_handshakes, self._timeout, self._per_client = max_handshakes, handshake_timeout, max_per_client
        self._handshakes: dict[asyncio.Task[None], None] = {}       # insertion order: oldest first
        # Per client address: its connections, a handshake's task or the transport it made.
        self._by_client: dict[str, list[_Held]] = {}
        self.refused = 0             # connections closed at once: past the client's share, or evicted
        self._task = asyncio.ensure_future(self._accept())

    async def _accept(self) -> None:
        loop = asyncio.get_running_loop()
        listener = self.sockets[0]
        while True:
            try:
                conn, addr = await loop.sock_accept(listener)
            except OSError as e:        # EMFILE and the like: the bounds above free descriptors soon
                log.warning("cannot accept a connection on the serving port: %s", e)
                await asyncio.sleep(0.1)
                continue
            client = str(addr[0]) if isinstance(addr, tuple) else str(addr)
            if len(self._by_client) > 4 * self._max_handshakes:     # forget the clients that left
                self._by_client = {k: live for k, v in self._by_client.items()
                                   if (live := [c for c in v if not _closed(c)])}
            held = [c for c in self._by_client.get(client, ()) if not _closed(c)]
            if len(held) >= self._per_client:
                # The client's share is taken: its oldest connection still in its handshake makes
                # room; with none, the new one is refused (closed before any TLS work is spent on it).
                # An established one is left to the idle guard: closing TLS under a reader is noisy.
                shaking = next((c for c in held if isinstance(c, asyncio.Task)), None)
                self.refused += 1
                if shaking is None:
                    conn.close()
                    self._by_client[client] = held
                    continue
                held.remove(shaking)
                shaking.cancel()
            while len(self._handshakes) >= self._max_handshakes:
                oldest = next(iter(self._handshakes))
                del self._handshakes[oldest]
                self.refused += 1
                oldest.cancel()             # closes its socket (connect_accepted_socket's cleanup)
            task = loop.create_task(self._hand_over(conn, client))
            self._handshakes[task] = None
            task.add_done_callback(lambda t: self._handshakes.pop(t, None))
            held.append(task)
            self._by_client[client] = held

    async def _hand_over(self, conn: socket.socket, client: str) -> None:
        loop = asyncio.get_running_loop()
        conn.setblocking(False)
        try:
            transport, _ = await loop.connect_accepted_socket(
                self._factory, conn, ssl=self._ctx,
                ssl_handshake_timeout=self._timeout if self._ctx is not None else None)
        except (OSError, ssl.SSLError, TimeoutError, ConnectionError, asyncio.CancelledError):
            conn.close()                 # a handshake that failed, timed out or was pushed out
            return
        task = asyncio.current_task()
        held = self._by_client.get(client, [])
        self._by_client[client] = [transport if c is task else c for c in held]

    def close(self) -> None:
        self._task.cancel()
        for task in list(self._handshakes):
            task.cancel()
        self.sockets[0].close()

    async def wait_closed(self) -> None:
        await asyncio.gather(self._task, *self._handshakes, return_exceptions=True)


_Held = asyncio.Task[None] | asyncio.BaseTransport


def _closed(c: _Held) -> bool:
    return c.done() if isinstance(c, asyncio.Task) else c.is_closing()




class _Site(web.TCPSite):
    """``web.TCPSite`` served through an ``_Acceptor``: bounded TLS handshakes and connections per
    client (aiohttp's own site passes no handshake timeout, and bounds neither)."""

    limits: tuple[int, float, int] = (MAX_HANDSHAKES, TLS_HANDSHAKE_TIMEOUT, MAX_PER_CLIENT)

    async def start(self) -> None:
        await web.BaseSite.start(self)
        server = self._runner.server
        assert server is not None
        sock = socket.create_server((self._host or "0.0.0.0", self._port or 0), backlog=self._backlog,
                                    reuse_port=bool(self._reuse_port),
                                    family=socket.AF_INET6 if ":" in (self._host or "") else socket.AF_INET)
        sock.setblocking(False)
        max_handshakes, timeout, per_client = self.limits
        self._server = _Acceptor(server, sock, self._ssl_context,  # type: ignore[assignment]
                                 max_handshakes=max_handshakes, handshake_timeout=timeout,
                                 max_per_client=per_client)


def parse_bind_address(text: str) -> tuple[str, int]:
    """``host:port`` (``[::]:10259`` for IPv6); ValueError with the reason otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (e.g. 0.0.0.0:10259)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _report(checks: dict[str, str | None], what: str) -> tuple[bool, str]:
    """Upstream's healthz text: ``[+]name ok`` / ``[-]name failed: why``, then the verdict."""
    lines = [f"[+]{name} ok" if problem is None else f"[-]{name} failed: {problem}" for name, problem in checks.items()]
    ok = all(p is None for p in checks.values())
    lines.append(f"{what} check passed" if ok else f"{what} check failed")
    return ok, "\n".join(lines) + "\n"


def _app(service: SchedulerService, auth: DelegatingAuth | None = None) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        ok, text = _report(service.health() if service.health is not None else {"ping": None}, "healthz")
        return web.Response(status=200 if ok else 500, text=text)

    async def readyz(_: web.Request) -> web.Response:
        checks = dict(service.readiness()) if service.readiness is not None else {}
        if not checks:
            checks["informer-sync"] = None if service.synced else "caches not synced yet"
        ok, text = _report(checks, "readyz")
        info = service.leader_info() if service.leader_info is not None else ""
        return web.Response(status=200 if ok else 503, text=f"{text}{info}\n" if info else text)

    async def metrics(_: web.Request) -> web.Response:
        service.refresh_gauges()
        return web.Response(body=generate_latest(service.metrics.registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    async def decision(request: web.Request) -> web.Response:
        """The latest decision record of a pod (``framework/decision.py``), as /metrics guarded."""
        key = f"{request.match_info['namespace']}/{request.match_info['name']}"
        record = service.decisions.get(key)
        if record is None:
            why = "decision records are off (--decision-records 0)" if not service.decisions.enabled else \
                f"no decision recorded for pod {key}"
            return web.json_response({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                                      "message": why, "reason": "NotFound", "code": 404}, status=404)
        return web.json_response(record.to_json())

    app = web.Application(middlewares=[auth.middleware] if auth is not None else [])
    app.router.add_get("/debug/decisions/{namespace}/{name}", decision)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/livez", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


async def _guard_connections(runner: web.AppRunner, max_idle: int, idle_seconds: float) -> None:
    """Bound the idle connections: close those idle for ``idle_seconds``, and past ``max_idle`` the
    oldest idle ones. A connection that never sends a request is never timed out by aiohttp, so a
    pile of them would otherwise hold file descriptors until ``/healthz`` cannot even be accepted."""
    first_seen: dict[RequestHandler, float] = {}
    while True:
        await asyncio.sleep(min(1.0, idle_seconds / 2))
        if runner.server is None:
            continue
        now = time.monotonic()
        first_seen = {h: first_seen.get(h, now) for h in runner.server.connections}
        idle = sorted((t, id(h), h) for h, t in first_seen.items() if not getattr(h, "_request_in_progress", False))
        excess = len(idle) - max_idle
        for n, (t, _, h) in enumerate(idle):
            if n < excess or now - t >= idle_seconds:
                h.force_close()
                if h.transport is not None:
                    h.transport.close()


async def start_http(service: SchedulerService, addresses: list[tuple[str, int]], *, max_idle: int = MAX_IDLE,
                     idle_seconds: float = IDLE_SECONDS, secure: SecureServing | None = None,
                     api: KubeClient | None = None, max_handshakes: int = MAX_HANDSHAKES,
                     handshake_timeout: float = TLS_HANDSHAKE_TIMEOUT, max_per_client: int = MAX_PER_CLIENT,
                     ) -> tuple[web.AppRunner, list[int]]:
    """Serve every endpoint on each address (HTTPS with delegated auth when ``secure``, through a
    client of its own made from ``api``'s config: ``auth.delegated_client``); returns the runner and
    the bound ports. The limits bound the connections (``_Acceptor``, ``_guard_connections``)."""
    ctx = secure.ssl_context() if secure is not None else None
    auth_api = delegated_client(api.config) if secure is not None and api is not None else None
    auth = DelegatingAuth(auth_api, always_allow=secure.always_allow_paths) \
        if secure is not None and auth_api is not None else None
    app = _app(service, auth)

    async def guard(_: web.Application) -> AsyncIterator[None]:
        task = asyncio.ensure_future(_guard_connections(runner, max_idle, idle_seconds))
        yield
        task.cancel()

    async def close_auth_client(_: web.Application) -> None:
        if auth_api is not None:
            await auth_api.close()
    if addresses:
        app.cleanup_ctx.append(guard)
    app.on_cleanup.append(close_auth_client)
    # handler_cancellation: a request whose client has gone stops waiting (for a review, say), so a
    # flood that reconnects leaves no orphaned requests behind it.
    runner = web.AppRunner(app, access_log=None, handle_signals=False, keepalive_timeout=idle_seconds,
                           handler_cancellation=True)
    await runner.setup()
    ports = []
    for host, port in addresses:
        site = _Site(runner, host, port, ssl_context=ctx)
        site.limits = (max_handshakes, handshake_timeout, max_per_client)
        try:
            await site.start()
        except OSError as e:
            await runner.cleanup()
            raise ServingError(f"cannot serve on {host}:{port}: {os.strerror(e.errno) if e.errno else e}") from None
        server = site._server
        ports.append(server.sockets[0].getsockname()[1] if server is not None else port)  # type: ignore[attr-defined]
    return runner, ports
