"""A lean HTTP/1.1 front door for the simulated API server: plain calls served here, the rest by aiohttp.

Why: end to end, the simulated cluster shares the machine's two cores with the operator and the
benchmark driver, and every bound pod costs it three request-response calls (the pod's create, its
Binding, its Scheduled Event). aiohttp's server spends 60 to 75 µs of CPU per such call around the
handler (its parser's objects, routing, its request and response machinery, its writer); a bare
asyncio protocol answers the same call, TLS included, in about 20 µs.

How::

    connection ─► LeanConnection: reads one request at a time (no pipelining is answered out of order)
                  │
                  ├─ a plain call on the resource API: /api/... or /apis/..., GET (not a watch),
                  │  POST, PUT, PATCH or DELETE, HTTP/1.1, a Content-Length body (or none) up to
                  │  MAX_BODY, no Expect, no Transfer-Encoding, no Upgrade, a well-formed head
                  │      ─► ApiServer.dispatch(LeanRequest) ─► its web.Response, written here
                  │
                  └─ anything else (a watch, discovery, OpenAPI, health, a chunked body, HTTP/1.0,
                     a head it cannot read) ─► the connection, with every byte not yet consumed, is
                     handed to aiohttp's own protocol, which serves it from then on as before

So the answers are the same either way: the handler is the same ``ApiServer.dispatch``, and the
response is the ``web.Response`` it returned, written as aiohttp writes one (its status line and
headers, ``Content-Length``, ``Date``, ``Server``, ``Connection: close`` when the client asked to
close). Everything unusual, long-lived or streamed stays on aiohttp, the reference. A hand-off
happens only between requests (one is answered before the next is read), so no response is ever
written by both.

``LeanRequest`` offers the part of ``web.Request`` the handlers read (``method``, ``path``,
``query``, ``headers``, ``content_type``, ``content_length``, ``host``, ``transport`` and
``read()``), with aiohttp's own semantics: the URL is built by yarl exactly as aiohttp's parser
builds it, and the content type is parsed by aiohttp's ``HeadersMixin``.

A handler that finishes without suspending (every hot call: the body is already read) is run in
place, without a task; one that suspends (an injected delay, a freshness wait) goes on in a task
from where it stopped (``_Resume``, a ``yield from`` that starts with the value already yielded).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine, Generator
from typing import TYPE_CHECKING, Any

from aiohttp import web
from aiohttp.helpers import HeadersMixin, rfc822_formatted_time
from aiohttp.http import SERVER_SOFTWARE
from multidict import CIMultiDict, CIMultiDictProxy
from yarl import URL

from scheduler.simulator.handlers.base import MAX_BODY

if TYPE_CHECKING:
    from .server import ApiServer

__all__ = ["LeanRequest", "LeanServer"]

log = logging.getLogger(__name__)

_HEAD_LIMIT = 65536           # a head not ended by then goes to aiohttp, which answers its own error
_METHODS = frozenset({"GET", "POST", "PUT", "PATCH", "DELETE"})
_HANDED = frozenset({"transfer-encoding", "expect", "upgrade"})   # aiohttp's to frame or refuse
_NO_BODY = frozenset({204, 304})
_PAUSE_AT = 8 << 20           # bytes buffered behind a request in progress before reading pauses


class LeanRequest(HeadersMixin):
    """The request a ``LeanConnection`` read, as the handlers see a ``web.Request``."""

    def __init__(self, method: str, url: URL, headers: CIMultiDictProxy[str], body: bytes,
                 transport: asyncio.Transport | None) -> None:
        self.method = method
        self.rel_url = url
        self._headers = headers
        self._body = body
        self.transport = transport

    @property
    def headers(self) -> CIMultiDictProxy[str]:
        return self._headers            # type: ignore[return-value]

    @property
    def path(self) -> str:
        return self.rel_url.path

    @property
    def query(self) -> Any:
        return self.rel_url.query

    @property
    def host(self) -> str:
        host = self._headers.get("Host")
        if host is not None:
            return host
        sockname = self.transport.get_extra_info("sockname") if self.transport is not None else None
        return str(sockname[0]) if isinstance(sockname, tuple) else ""

    @property
    def keep_alive(self) -> bool:
        return "close" not in self._headers.get("Connection", "").lower()

    async def read(self) -> bytes:
        return self._body


class _Resume:
    """Awaiting it goes on with a coroutine that already yielded ``first``: ``yield from`` that
    starts after its first step, so the task that awaits it drives the coroutine as its own."""

    def __init__(self, coro: Coroutine[Any, Any, Any], first: Any) -> None:
        self.coro, self.first = coro, first

    def __await__(self) -> Generator[Any, Any, Any]:
        coro, value = self.coro, self.first
        while True:
            try:
                sent = yield value
            except GeneratorExit:
                coro.close()
                raise
            except BaseException as e:
                try:
                    value = coro.throw(e)
                except StopIteration as done:
                    return done.value
            else:
                try:
                    value = coro.send(sent)
                except StopIteration as done:
                    return done.value


def _encode(resp: web.Response, keep_alive: bool) -> bytes:
    """``resp`` as aiohttp writes it to an HTTP/1.1 client."""
    body = resp.body
    if body is not None and not isinstance(body, (bytes, bytearray)):
        raise TypeError(f"a lean response needs a bytes body, not {type(body).__name__}")
    # The handler's headers in order, then those aiohttp adds where missing: Content-Length (none
    # on a bodiless status), Date, Server and Connection. One pass, without copying the headers
    # (every answer comes here).
    bodiless = resp.status in _NO_BODY or resp.status < 200
    if bodiless:
        body = None
    lines = [f"HTTP/1.1 {resp.status} {resp.reason}\r\n"]
    length = date = server = connection = False
    for k, v in resp.headers.items():
        key = k.lower()
        if key == "content-length":
            if bodiless:
                continue
            length = True
        elif key == "date":
            date = True
        elif key == "server":
            server = True
        elif key == "connection":
            connection = True
        lines.append(f"{k}: {v}\r\n")
    if not bodiless and not length:
        lines.append(f"Content-Length: {len(body or b'')}\r\n")
    if not date:
        lines.append(f"Date: {rfc822_formatted_time()}\r\n")
    if not server:
        lines.append(f"Server: {SERVER_SOFTWARE}\r\n")
    if not keep_alive and not connection:
        lines.append("Connection: close\r\n")
    lines.append("\r\n")
    head = "".join(lines).encode("utf-8")
    return head + bytes(body) if body else head


class LeanConnection(asyncio.Protocol):
    """One client connection, until it is closed or handed to aiohttp (see the module docstring)."""

    def __init__(self, server: LeanServer) -> None:
        self.server = server
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.busy = False               # a request is being served: what arrives waits in ``buf``
        self.task: asyncio.Task[None] | None = None
        self.paused = False
        self.closing = False            # answered with Connection: close; nothing more is read
        # The head of a request whose body is still arriving: (where it ends in ``buf``, its parse).
        self.head: tuple[int, tuple[str, URL, CIMultiDictProxy[str], int]] | None = None

    # ---- asyncio.Protocol ---------------------------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport      # type: ignore[assignment]
        self.server.connections.add(self)

    def data_received(self, data: bytes) -> None:
        if self.closing:
            return
        self.buf += data
        if not self.busy:
            self._next()
        elif len(self.buf) > _PAUSE_AT and self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()

    def eof_received(self) -> bool | None:
        return None                     # the transport closes itself

    def connection_lost(self, exc: Exception | None) -> None:
        self.server.connections.discard(self)
        self.transport = None
        if self.task is not None:
            self.task.cancel()

    # ---- requests -----------------------------------------------------------------------------
    def _next(self) -> None:
        """Serve each complete request in ``buf`` in turn, until one must wait (its body is not all
        here, or its handler suspended) or the connection goes to aiohttp."""
        while self.buf and self.transport is not None and not self.busy:
            if self.head is None:
                end = self.buf.find(b"\r\n\r\n")
                if end < 0:
                    if len(self.buf) > _HEAD_LIMIT:
                        self._hand_off()
                    return
                parsed = self._parse(bytes(self.buf[:end]))
                if parsed is None:
                    self._hand_off()
                    return
                self.head = (end, parsed)
            end, (method, url, headers, length) = self.head
            if len(self.buf) < end + 4 + length:
                return                  # the body is still coming (its head is kept, not read again)
            self.head = None
            body = bytes(self.buf[end + 4:end + 4 + length])
            del self.buf[:end + 4 + length]
            if self.paused and self.transport is not None:
                self.paused = False
                self.transport.resume_reading()
            self._serve(LeanRequest(method, url, headers, body, self.transport))

    @staticmethod
    def _parse(head: bytes) -> tuple[str, URL, CIMultiDictProxy[str], int] | None:
        """The request's method, URL, headers and body length; None if aiohttp must serve it."""
        try:
            text = head.decode("ascii")
        except UnicodeDecodeError:
            return None
        lines = text.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or parts[2] != "HTTP/1.1" or parts[0] not in _METHODS:
            return None
        method, target = parts[0], parts[1]
        if not target.startswith(("/api/", "/apis/")) or "#" in target:
            return None
        headers = _headers(lines)
        if headers is None:
            return None
        length = _content_length(headers)
        if length is None:
            return None
        path, _, query = target.partition("?")
        try:
            url = URL.build(path=path, query_string=query, encoded=True)      # as aiohttp's parser builds it
        except ValueError:
            return None
        if method == "GET" and "watch" in url.query:
            return None                 # a watch streams: aiohttp's
        return method, url, CIMultiDictProxy(headers), length

    def _serve(self, request: LeanRequest) -> None:
        coro = self.server.api.dispatch(request)
        try:
            first = coro.send(None)
        except StopIteration as done:
            self._write(request, done.value)
            return
        except BaseException as e:      # a reset the handler asked for, or a bug: never the loop's
            self._failed(request, e)
            return
        self.busy = True
        self.task = asyncio.get_running_loop().create_task(self._finish(request, coro, first))

    async def _finish(self, request: LeanRequest, coro: Coroutine[Any, Any, Any], first: Any) -> None:
        try:
            resp = await _Resume(coro, first)
        except BaseException as e:
            self._failed(request, e)
            if isinstance(e, asyncio.CancelledError):
                raise
            return
        finally:
            self.task = None
        self.busy = False
        self._write(request, resp)
        self._next()

    def _write(self, request: LeanRequest, resp: Any) -> None:
        if self.transport is None:
            return
        keep_alive = request.keep_alive
        try:
            data = _encode(resp, keep_alive)
        except Exception as e:
            self._failed(request, e)
            return
        self.transport.write(data)
        if not keep_alive:
            # Nothing after this answer is read: requests pipelined behind it are dropped, as
            # aiohttp drops them.
            self.buf.clear()
            self.closing = True
            self.transport.close()

    def _failed(self, request: LeanRequest, e: BaseException) -> None:
        """The handler raised what it answers with no response: the connection is cut, as aiohttp
        cuts it (``dispatch`` itself answers every API error and bug with a Status)."""
        if not isinstance(e, (ConnectionError, asyncio.CancelledError)):
            log.error("lean HTTP front door failed on %s %s: %r", request.method, request.path, e)
        self.busy = False
        if self.transport is not None:
            self.transport.abort()

    def _hand_off(self) -> None:
        """From here on aiohttp serves this connection, from the first byte not yet consumed."""
        transport = self.transport
        if transport is None:
            return
        self.server.connections.discard(self)
        self.transport = None
        handler = self.server.aiohttp()
        transport.set_protocol(handler)
        handler.connection_made(transport)
        if self.paused:
            transport.resume_reading()
        if self.buf:
            data, self.buf = bytes(self.buf), bytearray()
            handler.data_received(data)


class LeanServer:
    """The protocol factory for ``loop.create_server``: a ``LeanConnection`` per connection, handing
    off to ``aiohttp_server`` (the ``web.Server`` of an ``AppRunner`` over ``api.app()``)."""

    def __init__(self, api: ApiServer, aiohttp_server: web.Server) -> None:
        self.api = api
        self.aiohttp = aiohttp_server
        self.connections: set[LeanConnection] = set()

    def __call__(self) -> LeanConnection:
        return LeanConnection(self)

    def close(self) -> None:
        """Cut every connection still served here (the ones handed off are aiohttp's to close)."""
        for conn in list(self.connections):
            if conn.transport is not None:
                conn.transport.abort()
        self.connections.clear()


def _headers(lines: list[str]) -> CIMultiDict[str] | None:
    """The header lines, parsed; None for a malformed one, or a header aiohttp must handle."""
    headers: CIMultiDict[str] = CIMultiDict()
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip() or not name.isascii() or " " in name:
            return None
        headers.add(name, value.strip(" \t"))
    if any(h in headers for h in _HANDED):
        return None
    return headers


def _content_length(headers: CIMultiDict[str]) -> int | None:
    """The body's length (0 without Content-Length); None where it is repeated, not a number or too large."""
    if "Content-Length" not in headers:
        return 0
    values = headers.getall("Content-Length")
    if len(values) != 1 or not values[0].isdigit() or not values[0].isascii():
        return None
    length = int(values[0])
    return None if length > MAX_BODY else length
