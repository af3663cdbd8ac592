"""The lean HTTP/1.1 pool (``scheduler/kubeapi/http1.py``) under ``KubeClient``, against raw asyncio
servers on 127.0.0.1 (plain and TLS) that answer as each test scripts: keep-alive and
``Connection: close``, the three ways a body is framed, resets, silence, stale pooled connections,
the connection limit, error statuses, the 401 retry, compressed bodies, and the rule that a POST
is never sent twice."""

from __future__ import annotations

import asyncio
import gzip
import ssl
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pytest
import yarl

from scheduler.errors import ClientError, ConflictError, NotFoundError, TransportError
from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.kubeapi.client import USER_AGENT, new_event_loop
from scheduler.kubeapi.credentials import ExecCredentials
from scheduler.simulator.tls import SelfSigned
from tests.kubeapi.test_credentials import credential, plugin

BIND = "/api/v1/namespaces/ns/pods/p/binding"
BINDING = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p", "namespace": "ns"},
           "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"}}


@dataclass
class Req:
    conn: int
    method: str
    target: str
    headers: dict[str, str]
    body: bytes


def ok(body: Any = None, *, status: int = 200, extra: str = "") -> bytes:
    data = orjson.dumps(body if body is not None else {"kind": "Status", "code": status})
    return (f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {len(data)}\r\n"
            f"{extra}\r\n").encode() + data


# The server's script: given a request and its connection's writer, answer it; return False to
# close the connection afterwards (without saying so in a header).
Respond = Callable[[Req, asyncio.StreamWriter], Awaitable[bool]]


@dataclass
class RawServer:
    respond: Respond
    tls: SelfSigned | None = None
    requests: list[Req] = field(default_factory=list)
    connections: int = 0
    open_now: int = 0
    max_open: int = 0
    sni: list[str | None] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None

    async def start(self) -> None:
        ctx = None
        if self.tls is not None:
            ctx = self.tls.server_context()
            ctx.sni_callback = lambda _s, name, _c: self.sni.append(name)  # type: ignore[assignment]
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=ctx)
        self.port = self._server.sockets[0].getsockname()[1]

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.port}"

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        conn = self.connections
        self.open_now += 1
        self.max_open = max(self.max_open, self.open_now)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                line, *rest = head[:-4].decode().split("\r\n")
                method, target, _ = line.split(" ")
                headers = {k: v.strip() for k, _, v in (h.partition(":") for h in rest)}
                body = await reader.readexactly(int(headers.get("Content-Length", "0")))
                req = Req(conn, method, target, headers, body)
                self.requests.append(req)
                if not await self.respond(req, writer):
                    return
                await writer.drain()
        finally:
            self.open_now -= 1
            writer.close()


async def answer_ok(req: Req, w: asyncio.StreamWriter) -> bool:
    w.write(ok({"method": req.method, "target": req.target}))
    return True


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> SelfSigned:
    return SelfSigned(Path(tmp_path_factory.mktemp("tls")), hosts=("kube.example",))


def run(tls: SelfSigned | None, respond: Respond, test: Callable[[KubeClient, RawServer], Awaitable[None]],
        **client: Any) -> RawServer:
    """Start a server that answers with ``respond``, and run ``test`` with a client of it on uvloop."""
    async def go() -> RawServer:
        srv = RawServer(respond, tls)
        await srv.start()
        cfg = KubeConfig(srv.url, token="t0k3n", ssl_context=tls.client_context() if tls else None,
                         tls_server_name=client.pop("tls_server_name", None), proxy_url=client.pop("proxy_url", None))
        try:
            async with KubeClient(cfg, **client) as api:
                await test(api, srv)
        finally:
            await srv.stop()
        return srv
    loop = new_event_loop()
    try:
        return loop.run_until_complete(go())
    finally:
        loop.close()


@pytest.fixture(params=["plain", "tls"])
def maybe_tls(request: pytest.FixtureRequest, tls: SelfSigned) -> SelfSigned | None:
    return tls if request.param == "tls" else None


def test_keep_alive_one_connection_and_aiohttps_headers(maybe_tls: SelfSigned | None) -> None:
    params = {"labelSelector": "a=b,c!=d", "fieldSelector": "spec.nodeName=", "continue": "eyJ2Ijo/+=", "x": "a b&c"}

    async def test(api: KubeClient, srv: RawServer) -> None:
        for _ in range(5):
            assert await api.request("GET", "/api/v1/nodes") == {"method": "GET", "target": "/api/v1/nodes"}
        await api.request("POST", BIND, BINDING)
        await api.request("GET", "/api/v1/pods", params=params)
        await api.request("GET", "/api/v1/namespaces/a b/pods")
        await api.request("PATCH", "/api/v1/nodes/n", {"x": 1}, content_type="application/merge-patch+json")
        assert api._pool is not None and api._pool.connections == 1
    srv = run(maybe_tls, answer_ok, test)
    assert srv.connections == 1 and len(srv.requests) == 9
    get, post, listing, quoted, patch = srv.requests[0], srv.requests[5], *srv.requests[6:]
    assert get.headers == {"Host": f"127.0.0.1:{srv.port}", "Accept": "application/json", "User-Agent": USER_AGENT,
                           "Authorization": "Bearer t0k3n", "Accept-Encoding": "gzip, deflate"}
    assert post.headers["Content-Type"] == "application/json"
    assert orjson.loads(post.body) == BINDING and post.headers["Content-Length"] == str(len(post.body))
    # The query and the quoting, exactly as aiohttp builds them (yarl).
    assert listing.target == yarl.URL("http://h/api/v1/pods").extend_query(params).raw_path_qs
    assert quoted.target == "/api/v1/namespaces/a%20b/pods"
    assert patch.headers["Content-Type"] == "application/merge-patch+json"


def test_connection_close_honoured_and_read_to_eof(maybe_tls: SelfSigned | None) -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        if req.target == "/eof":            # no length, no chunks: the body ends with the connection
            w.write(b'HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n{"to": "eof"}')
        else:
            w.write(ok({"n": len(srv_requests)}, extra="Connection: close\r\n"))
        return False
    srv_requests: list[Req] = []

    async def test(api: KubeClient, srv: RawServer) -> None:
        for _ in range(3):
            await api.request("GET", "/api/v1/nodes")
        assert await api.request("GET", "/eof") == {"to": "eof"}
        assert api._pool is not None and api._pool.connections == 0
    srv = run(maybe_tls, respond, test)
    assert srv.connections == 4


def test_chunked_and_content_length_bodies(maybe_tls: SelfSigned | None) -> None:
    big = {"items": [{"name": f"pod-{i}", "pad": "x" * 100} for i in range(2000)]}
    data = orjson.dumps(big)

    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        if req.target == "/chunked":
            w.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
            for i in range(0, len(data), 7000):
                part = data[i:i + 7000]
                w.write(b"%x;ext=1\r\n%s\r\n" % (len(part), part))
            w.write(b"0\r\nX-Trailer: y\r\n\r\n")
        else:
            w.write(ok(big))
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        for target in ("/chunked", "/length", "/chunked"):
            assert await api.request("GET", target) == big
    srv = run(maybe_tls, respond, test)
    assert srv.connections == 1


def test_reset_mid_body_names_the_request(maybe_tls: SelfSigned | None) -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n" + b'{"items": [')
        await w.drain()
        await asyncio.sleep(0.05)
        if req.target.endswith("reset"):
            w.transport.abort()             # an RST where TCP allows it
        return False                        # else a FIN: EOF mid-body
    seen: list[tuple[str, int | None]] = []

    async def test(api: KubeClient, srv: RawServer) -> None:
        api.on_response = lambda m, s, _t: seen.append((m, s))
        for target in ("/api/v1/x/eof", "/api/v1/x/reset"):
            with pytest.raises(TransportError) as e:
                await api.request("GET", target)
            assert str(e.value).startswith(f"GET {target}: "), e.value
        with pytest.raises(TransportError, match=r"ServerDisconnectedError: .* after 11 of 100 bytes"):
            await api.request("POST", "/api/v1/x/eof", BINDING)
    run(maybe_tls, respond, test)
    assert seen == [("GET", 200), ("GET", 200), ("POST", 200)]   # the head came: counted once, with its status


def test_a_server_that_never_answers_times_out(maybe_tls: SelfSigned | None) -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(30)
        return False
    seen: list[int | None] = []

    async def test(api: KubeClient, srv: RawServer) -> None:
        api.on_response = lambda _m, s, _t: seen.append(s)
        with pytest.raises(TransportError, match=r"^POST /api/v1/x: timed out after 0.3s$"):
            await api.request("POST", "/api/v1/x", {}, timeout=0.3)
        assert api._pool is not None and api._pool.connections == 0     # the connection is dropped
    run(maybe_tls, respond, test)
    assert seen == [None]


def test_refused_and_malformed_are_transport_errors() -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(b"HTTP/1.1 2x0 What\r\nContent-Length: 0\r\n\r\n" if req.target == "/status"
                else b"HTTP/1.1 200 OK\r\nbad header line\r\n\r\n")
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        with pytest.raises(TransportError, match=r"^GET /status: BadResponseError: malformed status line"):
            await api.request("GET", "/status")
        with pytest.raises(TransportError, match=r"^GET /header: BadResponseError: malformed header line"):
            await api.request("GET", "/header")
        refused = KubeClient(KubeConfig("http://127.0.0.1:9", token="t"))
        # the server named, in aiohttp's words (operators' log searches), and the cause
        with pytest.raises(TransportError, match=r"^GET /api: CannotConnectError: Cannot connect to host "
                                                 r"127\.0\.0\.1:9 ssl:False \[ConnectionRefusedError: "):
            await refused.request("GET", "/api")
        await refused.close()
    run(None, respond, test)


def test_tls_errors_and_tls_server_name(tls: SelfSigned) -> None:
    async def test(api: KubeClient, srv: RawServer) -> None:
        await api.request("GET", "/api")
        untrusted = KubeClient(KubeConfig(srv.url, token="t", ssl_context=ssl.create_default_context()))
        with pytest.raises(TransportError, match=r"^GET /api: .*CERTIFICATE_VERIFY_FAILED"):
            await untrusted.request("GET", "/api")
        await untrusted.close()
        insecure = KubeClient(KubeConfig(srv.url, token="t", ssl_context=False))    # insecure-skip-tls-verify
        assert await insecure.request("GET", "/api") == {"method": "GET", "target": "/api"}
        await insecure.close()
    srv = run(tls, answer_ok, test, tls_server_name="kube.example")
    assert srv.sni[0] == "kube.example"


def test_a_stale_pooled_connection_is_not_used(maybe_tls: SelfSigned | None) -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(ok())
        return False          # an idle timeout on the server: closed after answering, no header said so

    async def test(api: KubeClient, srv: RawServer) -> None:
        await api.request("GET", "/api")
        await asyncio.sleep(0.1)                               # the FIN arrives while the connection is idle
        await api.request("POST", BIND, BINDING)
    srv = run(maybe_tls, respond, test)
    assert [(r.conn, r.method) for r in srv.requests] == [(1, "GET"), (2, "POST")]


def test_concurrency_is_bounded_by_the_limit() -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(0.02)
        w.write(ok())
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        await asyncio.gather(*(api.request("POST", BIND, BINDING) for _ in range(30)))
        assert api._pool is not None and api._pool.connections == 3
    srv = run(None, respond, test, limit=3)
    assert len(srv.requests) == 30 and srv.connections == 3 and srv.max_open == 3


def test_error_statuses_map_as_before() -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        if req.target.endswith("/missing"):
            w.write(ok({"kind": "Status", "message": 'pods "missing" not found', "code": 404}, status=404))
        elif req.target.endswith("/binding"):
            w.write(ok({"kind": "Status", "message": 'pod p is already assigned to node "n0"', "code": 409},
                       status=409))
        elif req.target == "/busy":
            w.write(ok({"kind": "Status", "code": 429}, status=429, extra="Retry-After: 2\r\n"))
        else:
            w.write(b"HTTP/1.1 500 Oops\r\nContent-Length: 4\r\n\r\noops")
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        with pytest.raises(NotFoundError, match='pods "missing" not found') as nf:
            await api.request("GET", "/api/v1/namespaces/ns/pods/missing")
        assert nf.value.status == 404
        with pytest.raises(ConflictError, match='already assigned to node "n0"') as cf:
            await api.request("POST", BIND, BINDING)
        assert cf.value.status == 409
        with pytest.raises(ClientError) as busy:
            await api.request("GET", "/busy")
        assert busy.value.status == 429 and busy.value.retry_after == 2.0
        with pytest.raises(ClientError, match=r"^oops$") as oops:
            await api.request("GET", "/other")
        assert oops.value.status == 500 and not isinstance(oops.value, TransportError)
    srv = run(None, respond, test)
    assert srv.connections == 1                    # error statuses keep the connection


def test_a_post_is_never_sent_twice_but_a_get_is_retried() -> None:
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        if req.target == "/first":
            w.write(ok())
            return True
        return False          # read the request, then close the connection without a word

    async def test(api: KubeClient, srv: RawServer) -> None:
        await api.request("GET", "/first")           # pooled, and alive when reused below
        with pytest.raises(TransportError, match=f"^POST {BIND}: ServerDisconnectedError: .*without a response"):
            await api.request("POST", BIND, BINDING)
        await api.request("GET", "/first")
        with pytest.raises(TransportError, match=r"^GET /again: ServerDisconnectedError"):
            await api.request("GET", "/again")       # retried once on a new connection, which fails too
    srv = run(None, respond, test)
    assert [r.target for r in srv.requests].count(BIND) == 1
    assert [(r.conn, r.target) for r in srv.requests if r.target == "/again"] == [(2, "/again"), (3, "/again")]


def test_close_closes_the_connections() -> None:
    async def test(api: KubeClient, srv: RawServer) -> None:
        await asyncio.gather(*(api.request("GET", "/api") for _ in range(4)))
        assert srv.open_now == 4
        await api.close()
        for _ in range(200):                # until the server has seen every close (bounded: 2 s)
            if srv.open_now == 0:
                break
            await asyncio.sleep(0.01)
        assert srv.open_now == 0
    run(None, answer_ok, test)


def test_behind_a_proxy_requests_stay_on_aiohttp() -> None:
    async def test(api: KubeClient, srv: RawServer) -> None:
        assert await api.request("GET", "/api/v1/nodes") == {"method": "GET", "target": "http://kube.example/api/v1/nodes"}
        assert api._pool is None
    proxy = RawServer(answer_ok)

    async def go() -> None:
        await proxy.start()
        cfg = KubeConfig("http://kube.example", token="t", proxy_url=proxy.url)
        try:
            async with KubeClient(cfg) as api:
                await test(api, proxy)
        finally:
            await proxy.stop()
    asyncio.run(go())


def test_a_401_is_retried_once_with_a_fresh_token(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("old")

    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(ok() if req.headers["Authorization"] == "Bearer new" else ok(status=401))
        return True

    async def go() -> RawServer:
        srv = RawServer(respond)
        await srv.start()
        try:
            async with KubeClient(KubeConfig(srv.url, token_file=str(token))) as api:
                with pytest.raises(ClientError) as e:        # the file still says "old": the second 401 is ours
                    await api.request("GET", "/api")
                assert e.value.status == 401
            async with KubeClient(KubeConfig(srv.url, token_file=str(token))) as api:
                assert api.config.credentials is not None
                api.config.credentials.token()               # "old", cached
                token.write_text("new")                      # rotated
                await api.request("POST", BIND, BINDING)     # 401 with "old", then once more with "new"
        finally:
            await srv.stop()
        return srv
    srv = asyncio.run(go())
    assert [(r.method, r.headers["Authorization"]) for r in srv.requests] == [
        ("GET", "Bearer old"), ("GET", "Bearer old"), ("POST", "Bearer old"), ("POST", "Bearer new")]


def test_a_burst_refused_with_one_expired_token_runs_the_exec_plugin_once(tmp_path: Path) -> None:
    """Issue #32: with tokens that expire every 2 s, the exec plugin ran about 5 times a second,
    as every request of a burst refused with the same token invalidated whatever the credentials
    held by then, the token another request had just fetched included. client-go invalidates only
    credentials that are still the refused ones."""
    counter = tmp_path / "runs"
    cmd = plugin(tmp_path, f"n = int(open({str(counter)!r}).read()) + 1 if os.path.exists({str(counter)!r}) else 1\n"
                           f"open({str(counter)!r}, 'w').write(str(n))\n"
                           f"print({credential('T')!r}.replace('\"T\"', json.dumps(f'tok-{{n}}')))")

    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(ok(status=401) if req.headers["Authorization"] == "Bearer tok-1" else ok())
        return True

    async def go() -> tuple[RawServer, int]:
        srv = RawServer(respond)
        await srv.start()
        creds = ExecCredentials(command=cmd)
        try:
            async with KubeClient(KubeConfig(srv.url, credentials=creds), limit=32) as api:
                assert creds.token() == "tok-1"          # cached; the server has revoked it
                await asyncio.gather(*(api.request("GET", f"/api/v1/namespaces/n{i}") for i in range(20)))
        finally:
            await srv.stop()
        return srv, creds.runs
    srv, runs = asyncio.run(go())
    assert runs == 2, f"the plugin ran {runs} times for one refused token"
    sent = [r.headers["Authorization"] for r in srv.requests]
    assert sent.count("Bearer tok-1") == 20 and sent.count("Bearer tok-2") == 20

@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_compressed_bodies_are_decoded(encoding: str) -> None:
    data = orjson.dumps({"items": ["x" * 50] * 100})
    packed = zlib.compress(data) if encoding == "deflate" else gzip.compress(data)

    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        w.write(f"HTTP/1.1 200 OK\r\nContent-Encoding: {encoding}\r\nContent-Length: {len(packed)}\r\n\r\n"
                .encode() + packed)
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        assert await api.request("GET", "/api/v1/pods") == orjson.loads(data)
    run(None, respond, test)


def test_an_undecoded_answer_is_none_and_an_error_still_raises() -> None:
    """``decode=False`` (the scheduler's Binding and Event writes, the benchmark's creates): a
    success returns None without reading its body, even a body that is not JSON; an error status
    is raised as it is with decoding."""
    async def respond(req: Req, w: asyncio.StreamWriter) -> bool:
        if req.target.endswith("/binding"):
            w.write(ok({"kind": "Status", "message": 'pod p is already assigned to node "n0"', "code": 409},
                       status=409))
        else:
            w.write(b"HTTP/1.1 201 Created\r\nContent-Length: 9\r\n\r\nnot json!")
        return True

    async def test(api: KubeClient, srv: RawServer) -> None:
        assert await api.request("POST", "/api/v1/namespaces/ns/pods", {"x": 1}, decode=False) is None
        assert await api.request("POST", "/api/v1/namespaces/ns/pods", {"x": 1}) == "not json!"
        with pytest.raises(ConflictError, match='already assigned to node "n0"'):
            await api.request("POST", BIND, BINDING, decode=False)
    run(None, respond, test)
