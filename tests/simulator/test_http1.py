"""The simulated cluster's lean HTTP/1.1 front door (scheduler/simulator/http1.py).

Its contract: a call it serves gets the very answer aiohttp gives (same handler, same status, headers
and body); any call it does not serve goes, with the connection, to aiohttp, which answers as it
always did; and a connection is never answered twice or left behind. The answers are compared with
an aiohttp-only listener on the same ``ApiServer``, byte for byte but for ``Date``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import ssl
import time
from typing import Any
from urllib.parse import urlparse

import pytest
from aiohttp import web

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.faults import parse_fault
from scheduler.simulator.http1 import LeanServer, _Resume
from scheduler.simulator.server import MAX_BODY

from .helpers import started

PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **extra}}


def aiohttp_port(sim: SimulatedCluster) -> int:
    """A second listener on the same ApiServer, served by aiohttp alone: the reference."""
    async def add() -> int:
        assert sim._runner is not None
        site = web.TCPSite(sim._runner, "127.0.0.1", 0, ssl_context=sim.tls.server_context())
        await site.start()
        return int(site._server.sockets[0].getsockname()[1])     # type: ignore[union-attr]
    assert sim._loop is not None
    return asyncio.run_coroutine_threadsafe(add(), sim._loop).result(10)


@pytest.fixture(scope="module")
def reference(sim: SimulatedCluster) -> int:
    return aiohttp_port(sim)


class Conn:
    """One raw TLS connection: bytes out exactly as given, responses read one at a time."""

    def __init__(self, sim: SimulatedCluster, port: int | None = None) -> None:
        u = urlparse(sim.url)
        raw = socket.create_connection(("127.0.0.1", port or u.port or 443), timeout=15)
        self.sock = sim.tls.client_context().wrap_socket(raw, server_hostname="127.0.0.1")
        self.file = self.sock.makefile("rb")
        self.token = sim.token

    def request(self, method: str, path: str, body: bytes | None = None, headers: dict[str, str] | None = None,
                version: str = "HTTP/1.1") -> bytes:
        hdrs = {"Host": "127.0.0.1", "Authorization": f"Bearer {self.token}", "User-Agent": "test/1",
                "Content-Type": "application/json", **(headers or {})}
        if body is not None and "Transfer-Encoding" not in hdrs:
            hdrs.setdefault("Content-Length", str(len(body)))
        head = f"{method} {path} {version}\r\n" + "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n"
        return head.encode() + (body or b"")

    def send(self, data: bytes) -> None:
        self.sock.sendall(data)

    def response(self, head: bool = False) -> tuple[int, dict[str, list[str]], bytes]:
        status_line = self.file.readline()
        if not status_line:
            raise EOFError("the server closed the connection")
        status = int(status_line.split()[1])
        headers: dict[str, list[str]] = {}
        while (line := self.file.readline()) not in (b"\r\n", b""):
            k, _, v = line.decode().partition(":")
            headers.setdefault(k.strip().lower(), []).append(v.strip())
        if head:
            body = b""          # the answer to a HEAD has no body, whatever its Content-Length says
        elif "content-length" in headers:
            body = self.file.read(int(headers["content-length"][0]))
        elif headers.get("transfer-encoding") == ["chunked"]:
            body = b""
            while size := int(self.file.readline().strip(), 16):
                body += self.file.read(size)
                self.file.readline()
            self.file.readline()
        else:
            body = self.file.read()
        return status, headers, body

    def exchange(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, list[str]], bytes]:
        self.send(self.request(*args, **kwargs))
        return self.response()

    def at_eof(self) -> bool:
        try:
            return self.file.read(1) == b""
        except (ConnectionError, ssl.SSLError):
            return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()


def lean_connections(sim: SimulatedCluster) -> int:
    lean: LeanServer | None = sim._lean
    assert lean is not None
    return sim.call(lambda: len(lean.connections))


def served_by_aiohttp(sim: SimulatedCluster) -> int:
    """The connections aiohttp serves that came in through the front door (handed off): the
    reference listener's are aiohttp's too, but its handshakes and closes land on the server's
    loop a moment after the client's, so counting them made the before/after comparisons race."""
    assert sim._runner is not None and sim._runner.server is not None
    server = sim._runner.server
    port = urlparse(sim.url).port

    def count() -> int:
        return sum(1 for h in server.connections
                   if h.transport is not None and (h.transport.get_extra_info("sockname") or ("", 0))[1] == port)
    return sim.call(count)


# ---- the same answers -------------------------------------------------------------------------

# (case, method, path, body, extra headers): none of them changes the store, so both listeners
# answer the same state; the writes that succeed are compared in the next test.
SAME_ANSWER = [
    ("list", "GET", PODS, None, {}),
    ("list, percent-encoded selector", "GET", PODS + "?labelSelector=app%3Dweb%2Ctier%21%3Ddb&limit=5", None, {}),
    ("get, not found", "GET", PODS + "/nope", None, {}),
    ("list as YAML", "GET", PODS, None, {"Accept": "application/yaml"}),
    ("list as Table", "GET", PODS, None, {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}),
    ("bad JSON", "POST", PODS, b"{not json", {}),
    ("empty body", "POST", PODS, b"", {}),
    ("unsupported media type", "POST", PODS, b"{}", {"Content-Type": "text/plain"}),
    ("invalid pod", "POST", PODS, json.dumps(pod("Bad_Name")).encode(), {}),
    ("strict unknown field", "POST", PODS + "?fieldValidation=Strict",
     json.dumps({**pod("strict"), "bogus": 1}).encode(), {}),
    ("no token", "GET", PODS, None, {"Authorization": "Bearer wrong"}),
    ("unknown resource", "GET", "/api/v1/namespaces/default/widgets", None, {}),
    ("method not allowed", "PUT", PODS, b"{}", {}),
    ("delete, not found", "DELETE", PODS + "/nope", None, {}),
    ("patch, not found", "PATCH", PODS + "/nope", b"{}", {"Content-Type": "application/merge-patch+json"}),
    ("binding, not found", "POST", PODS + "/nope/binding",
     b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"nope"},"target":{"name":"n1"}}', {}),
    ("group resource list", "GET", "/apis/apps/v1/namespaces/default/deployments", None, {}),
    ("invalid name in path", "GET", PODS + "/a%2Fb", None, {}),
    ("too old resourceVersion, exact", "GET", PODS + "?resourceVersion=1&resourceVersionMatch=Exact", None, {}),
    ("bad list option", "GET", PODS + "?limit=-1", None, {}),
]


@pytest.mark.parametrize(("case", "method", "path", "body", "headers"), SAME_ANSWER, ids=[c[0] for c in SAME_ANSWER])
def test_a_lean_answer_is_aiohttps_answer(sim: SimulatedCluster, reference: int, case: str, method: str,
                                          path: str, body: bytes | None, headers: dict[str, str]) -> None:
    lean, ref = Conn(sim), Conn(sim, reference)
    try:
        before = served_by_aiohttp(sim)
        got = lean.exchange(method, path, body, headers)
        # served by the front door: aiohttp took no connection for it
        assert served_by_aiohttp(sim) == before
        want = ref.exchange(method, path, body, headers)
    finally:
        lean.close()
        ref.close()
    assert got[0] == want[0]
    assert {k: v for k, v in got[1].items() if k != "date"} == {k: v for k, v in want[1].items() if k != "date"}
    assert got[2] == want[2]


def _masked(body: bytes) -> Any:
    obj = json.loads(body)
    meta = obj["metadata"]
    for k in ("name", "uid", "resourceVersion", "creationTimestamp"):
        meta.pop(k, None)
    for entry in meta.get("managedFields") or []:
        entry.pop("time", None)
    return obj


@pytest.mark.parametrize(("query", "extra"), [("", {}), ("?fieldValidation=Warn", {"bogus": True}),
                                              ("?dryRun=All", {})])
def test_a_lean_create_is_aiohttps_create(sim: SimulatedCluster, reference: int, query: str,
                                          extra: dict[str, Any]) -> None:
    lean, ref = Conn(sim), Conn(sim, reference)
    tag = f"{len(query)}-{len(extra)}"
    try:
        got = lean.exchange("POST", PODS + query, json.dumps({**pod(f"lean-{tag}"), **extra}).encode())
        want = ref.exchange("POST", PODS + query, json.dumps({**pod(f"ref-{tag}"), **extra}).encode())
    finally:
        lean.close()
        ref.close()
    assert got[0] == want[0] == 201
    drop = {"date", "content-length"}
    assert {k: v for k, v in got[1].items() if k not in drop} == {k: v for k, v in want[1].items() if k not in drop}
    assert _masked(got[2]) == _masked(want[2])
    if extra:
        assert got[1]["warning"] == ['299 - "unknown field \\"bogus\\""']


def test_a_binding_and_its_conflict_are_served(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        assert c.exchange("POST", PODS, json.dumps(pod("bound")).encode())[0] == 201
        binding = b'{"apiVersion":"v1","kind":"Binding","metadata":{"name":"bound"},"target":{"name":"n1"}}'
        status, _, body = c.exchange("POST", PODS + "/bound/binding", binding)
        assert (status, json.loads(body)["status"]) == (201, "Success")
        status, _, body = c.exchange("POST", PODS + "/bound/binding", binding)
        assert status == 409
        assert json.loads(body)["message"] == ('Operation cannot be fulfilled on pods/binding "bound": '
                                               'pod bound is already assigned to node "n1"')
    finally:
        c.close()


# ---- framing ------------------------------------------------------------------------------------

def test_pipelined_requests_are_answered_in_order(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        c.send(c.request("GET", PODS + "/nope-1") + c.request("GET", "/api/v1/namespaces/default/configmaps")
               + c.request("GET", PODS + "/nope-2"))
        first, second, third = c.response(), c.response(), c.response()
        assert (first[0], second[0], third[0]) == (404, 200, 404)
        assert json.loads(first[2])["details"]["name"] == "nope-1"
        assert json.loads(second[2])["kind"] == "ConfigMapList"
        assert json.loads(third[2])["details"]["name"] == "nope-2"
    finally:
        c.close()


def test_a_request_that_arrives_a_byte_at_a_time_is_served(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        for b in c.request("POST", PODS, json.dumps(pod("trickle")).encode()):
            c.send(bytes([b]))
        status, _, body = c.response()
        assert (status, json.loads(body)["metadata"]["name"]) == (201, "trickle")
        assert lean_connections(sim) >= 1
    finally:
        c.close()


def test_connection_close_is_honoured(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        # a request pipelined behind the one that asked to close is never answered
        c.send(c.request("GET", PODS, headers={"Connection": "close"}) + c.request("GET", PODS + "/nope"))
        status, headers, _ = c.response()
        assert status == 200
        assert headers["connection"] == ["close"]
        assert c.at_eof()
    finally:
        c.close()


# ---- what goes to aiohttp, with the connection ------------------------------------------------

@pytest.mark.parametrize(("case", "method", "path", "body", "headers", "version", "want"), [
    ("health", "GET", "/healthz", None, {}, "HTTP/1.1", 200),
    ("discovery", "GET", "/api", None, {}, "HTTP/1.1", 200),
    ("HTTP/1.0", "GET", PODS, None, {}, "HTTP/1.0", 200),
    ("chunked body", "POST", PODS, b"", {"Transfer-Encoding": "chunked"}, "HTTP/1.1", 201),
    ("over the body limit", "POST", PODS, None, {"Content-Length": str(MAX_BODY + 1)}, "HTTP/1.1", 413),
    ("malformed header", "GET", PODS, None, {"Bad Header": "x"}, "HTTP/1.1", 400),
    ("HEAD", "HEAD", PODS, None, {}, "HTTP/1.1", 405),
])
def test_what_the_front_door_does_not_serve_aiohttp_does(sim: SimulatedCluster, reference: int, case: str,
                                                         method: str, path: str, body: bytes | None,
                                                         headers: dict[str, str], version: str, want: int) -> None:
    def run(port: int | None) -> tuple[int, bytes]:
        c = Conn(sim, port)
        try:
            data = c.request(method, path, body, headers, version)
            if case == "chunked body":
                payload = json.dumps(pod(f"chunked-{port or 0}")).encode()
                data += b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload)
            c.send(data)
            status, _, got = c.response(head=method == "HEAD")
            return status, got
        finally:
            c.close()
    before = served_by_aiohttp(sim)
    status, got = run(None)
    assert status == want
    ref_status, ref_body = run(reference)
    assert ref_status == want
    if case != "chunked body":
        assert got == ref_body
    deadline = time.monotonic() + 5
    while served_by_aiohttp(sim) != before and time.monotonic() < deadline:
        time.sleep(0.02)        # both connections closed: aiohttp has forgotten them


def test_a_watch_takes_the_connection_to_aiohttp_and_it_keeps_serving(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        assert c.exchange("POST", PODS, json.dumps(pod("before-watch")).encode())[0] == 201
        lean_before, aio_before = lean_connections(sim), served_by_aiohttp(sim)
        status, headers, body = c.exchange("GET", PODS + "?watch=1&timeoutSeconds=1&fieldSelector="
                                           "metadata.name%3Dbefore-watch&resourceVersion=0")
        assert (status, headers["transfer-encoding"]) == (200, ["chunked"])
        events = [json.loads(line) for line in body.splitlines()]
        assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("ADDED", "before-watch")]
        assert (lean_connections(sim), served_by_aiohttp(sim)) == (lean_before - 1, aio_before + 1)
        # the same connection, now aiohttp's, serves the next call
        status, _, body = c.exchange("GET", PODS + "/before-watch")
        assert (status, json.loads(body)["metadata"]["name"]) == (200, "before-watch")
    finally:
        c.close()


def test_bytes_after_the_handed_off_request_reach_aiohttp(sim: SimulatedCluster) -> None:
    c = Conn(sim)
    try:
        c.send(c.request("GET", "/version") + c.request("GET", PODS + "/nope-after"))
        assert c.response()[0] == 200
        status, _, body = c.response()
        assert (status, json.loads(body)["details"]["name"]) == (404, "nope-after")
    finally:
        c.close()


# ---- handlers that suspend, faults and closing ------------------------------------------------

def test_a_handler_that_suspends_is_answered_and_the_next_request_waits_for_it() -> None:
    with started() as sim:
        parse_fault(sim.faults, "latency:get:pods=200ms")
        c = Conn(sim)
        try:
            t0 = time.monotonic()
            c.send(c.request("GET", PODS + "/slow") + c.request("GET", "/api/v1/namespaces/default/configmaps"))
            first, second = c.response(), c.response()
            # The fault's 200 ms sleep is the server loop's timer, which asyncio may fire up to its
            # clock resolution early (a CI run measured 0.19995 s): the response waited for it.
            assert time.monotonic() - t0 >= 0.19
            assert (first[0], json.loads(first[2])["details"]["name"]) == (404, "slow")
            assert second[0] == 200
        finally:
            c.close()


def test_a_reset_fault_cuts_the_connection_and_a_client_gone_mid_call_is_forgotten() -> None:
    with started() as sim:
        parse_fault(sim.faults, "reset:get:pods=1")
        c = Conn(sim)
        try:
            c.send(c.request("GET", PODS + "/x"))
            with pytest.raises((EOFError, ConnectionError, ssl.SSLError)):
                c.response()
        finally:
            c.close()
        sim.faults.errors.clear()
        parse_fault(sim.faults, "latency:get:pods=2s")
        c = Conn(sim)
        c.send(c.request("GET", PODS + "/y"))
        time.sleep(0.2)
        assert lean_connections(sim) == 1
        c.close()               # gone while its handler sleeps: the handler is cancelled, nothing answers
        deadline = time.monotonic() + 5
        while lean_connections(sim) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert lean_connections(sim) == 0


def test_stopping_the_cluster_closes_its_lean_connections() -> None:
    sim = SimulatedCluster()
    sim.start()
    c = Conn(sim)
    try:
        assert c.exchange("GET", PODS)[0] == 200
        sim.stop()
        assert c.at_eof()
    finally:
        c.close()


# ---- _Resume is ``yield from`` from the second step on ------------------------------------------

async def _steps(log: list[str]) -> str:
    await asyncio.sleep(0)
    log.append("one")
    await asyncio.sleep(0.01)
    log.append("two")
    try:
        await asyncio.get_running_loop().create_future()     # never done: only a cancel ends it
    except asyncio.CancelledError:
        log.append("cancelled")
        raise
    return "unreachable"


async def _raises() -> None:
    await asyncio.sleep(0)
    raise KeyError("boom")


async def _returns() -> int:
    await asyncio.sleep(0)
    await asyncio.sleep(0.001)
    return 42


def test_resume_drives_a_started_coroutine_as_a_task_would() -> None:
    async def main() -> None:
        coro = _returns()
        assert await _Resume(coro, coro.send(None)) == 42
        coro2 = _raises()
        with pytest.raises(KeyError):
            await _Resume(coro2, coro2.send(None))
        log: list[str] = []
        coro3 = _steps(log)
        task = asyncio.get_running_loop().create_task(_resume(coro3, coro3.send(None)))
        while "two" not in log:
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert log == ["one", "two", "cancelled"]

    async def _resume(coro: Any, first: Any) -> Any:
        return await _Resume(coro, first)
    asyncio.run(main())
