"""The scheduler's HTTP endpoints (an edge: aiohttp): ``/healthz``, ``/livez``, ``/readyz`` and
``/metrics``, as kube-scheduler serves them on its secure port (10259) — here over plain HTTP.

``/readyz`` answers 200 only once the initial sync has filled the cache (``service.synced``);
``/metrics`` is the Prometheus text format of ``service.metrics.registry``. The server runs on the
worker's event loop, never on Kopf's.
"""

from __future__ import annotations

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from scheduler.service import SchedulerService

__all__ = ["parse_bind_address", "start_http"]


def parse_bind_address(text: str) -> tuple[str, int]:
    """``host:port`` (``[::]:10259`` for IPv6); ValueError with the reason otherwise."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r} is not HOST:PORT (e.g. 0.0.0.0:10259)")
    return host.strip("[]") or "0.0.0.0", int(port)


def _app(service: SchedulerService) -> web.Application:
    async def healthz(_: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def readyz(_: web.Request) -> web.Response:
        info = service.leader_info() if service.leader_info is not None else ""
        if not service.synced:
            return web.Response(status=503, text=f"[-]informer-sync failed: caches not synced yet\n[+]{info}\n")
        return web.Response(text=f"[+]informer-sync ok\n[+]{info}\nreadyz check passed\n")

    async def metrics(_: web.Request) -> web.Response:
        service.refresh_unschedulable_gauge()
        return web.Response(body=generate_latest(service.metrics.registry),
                            headers={"Content-Type": CONTENT_TYPE_LATEST})

    app = web.Application()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/livez", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
    return app


async def start_http(service: SchedulerService, addresses: list[tuple[str, int]]) -> tuple[web.AppRunner, list[int]]:
    """Serve every endpoint on each address; returns the runner and the bound ports."""
    runner = web.AppRunner(_app(service), access_log=None, handle_signals=False)
    await runner.setup()
    ports = []
    for host, port in addresses:
        site = web.TCPSite(runner, host, port)
        await site.start()
        server = site._server
        ports.append(server.sockets[0].getsockname()[1] if server is not None else port)  # type: ignore[attr-defined]
    return runner, ports
