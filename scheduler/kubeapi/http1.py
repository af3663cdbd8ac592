"""A lean HTTP/1.1 client for ``KubeClient``'s request-response calls: a bounded pool of kept-alive
asyncio stream connections to one server.

Why: end to end, three Python processes share two cores, and aiohttp's ``ClientSession`` costs
120 to 141 µs of client CPU per request against 49 to 53 µs for a bare exchange on a kept-alive
stream (BENCHMARKS.md, "Where the CPU goes end to end"). The operator sends two requests per bound
pod, the benchmark driver one. This module does only what those calls need: one request at a time
per connection (no pipelining), a body of bytes with ``Content-Length``, and a response framed by
``Content-Length``, chunked transfer-encoding or the end of the connection. Watches stay on
aiohttp's streaming path, and so does everything behind a proxy (``KubeClient`` decides).

The pool::

    request ─► acquire a slot (at most ``limit`` exchanges, hence connections, at once)
            ─► the most recently used idle connection, unless the server has closed it (reader at
               EOF or transport closing: then it is dropped), else a new one (TLS with the
               kubeconfig's context, ``tls-server-name`` as the name checked)
            ─► write the request, read the head, then the body
            ─► back to the idle list if both sides keep it alive (no ``Connection: close``, a framed
               body, HTTP/1.1 or an explicit keep-alive); any error, timeout or cancellation aborts it

**Retries.** A request is sent again only when no byte of it could have reached the server, or when
it is replayable: as in Go's net/http, a GET or HEAD that fails on a reused connection before any
byte of the response arrived (the server closed the idle connection as the request went out) is
retried once on a new connection. A POST, PUT, PATCH or DELETE is never retried once any of it was
written: a Binding sent twice would, at best, report a false failure (the second gets a 409) after
the first one bound the pod. The stale-connection check before writing is what keeps that case
rare.

Errors are raised as ``OSError`` (refused, reset, TLS, ``ServerDisconnectedError`` for a connection
closed before or during the response) or ``ValueError`` (``BadResponseError``: a malformed status
line, header or chunk); ``KubeClient`` turns them into ``TransportError`` naming the request. The
total timeout is the caller's (``asyncio.timeout`` around ``request``); connecting alone is bounded
by ``connect_timeout``.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import zlib
from collections.abc import Callable, Mapping

import yarl

__all__ = ["BadResponseError", "CannotConnectError", "Headers", "Http1Pool", "Response", "ServerDisconnectedError"]

# Paths made only of these characters are sent as they are; any other (a space, a '%', a '?',
# non-ASCII) goes through yarl, which quotes exactly as aiohttp's URL(...) does.
_PLAIN_PATH = re.compile(r"[A-Za-z0-9\-._~/:@!$&'()*+,;=]*").fullmatch
_REPLAYABLE = frozenset({"GET", "HEAD"})
_BODYLESS_OK = frozenset({"POST", "PUT", "PATCH"})   # aiohttp sends Content-Length: 0 for these
_HEAD_LIMIT = 1 << 20                                # a response head longer than this is refused


class ServerDisconnectedError(ConnectionError):
    """The server closed the connection before the response was complete."""


class CannotConnectError(ConnectionError):
    """No connection to the server could be made (refused, unreachable, TLS handshake failed)."""


class BadResponseError(ValueError):
    """The response is not HTTP/1.x as this client reads it."""


class _Retry(Exception):
    """A replayable request failed on a reused connection before any response byte: send again."""


class Headers(dict[str, str]):
    """Response headers, keyed in lower case; ``get`` and ``[]`` take any case (as aiohttp's)."""

    def __getitem__(self, key: str) -> str:
        return super().__getitem__(key.lower())

    def get(self, key: str, default: str | None = None) -> str | None:  # type: ignore[override]
        return super().get(key.lower(), default)

    def __contains__(self, key: object) -> bool:
        return super().__contains__(key.lower() if isinstance(key, str) else key)


class Response:
    __slots__ = ("body", "headers", "status")

    def __init__(self, status: int, headers: Headers, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _Conn:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def stale(self) -> bool:
        # The server closed it while it sat idle (its FIN or close_notify fed the reader's EOF).
        return self.reader.at_eof() or self.writer.transport.is_closing()

    def abort(self) -> None:
        self.writer.transport.abort()


def _client_ssl(context: ssl.SSLContext | bool | None) -> ssl.SSLContext:
    """The context for an https server, with aiohttp's meaning of the kubeconfig's value: a context
    as given, None the default verification, False none at all (insecure-skip-tls-verify)."""
    if isinstance(context, ssl.SSLContext):
        return context
    if context is False:
        ctx = ssl.create_default_context()
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
        return ctx
    return ssl.create_default_context()


class Http1Pool:
    """At most ``limit`` kept-alive connections to ``server`` (``https://host:port[/prefix]`` or
    ``http://…``). One exchange holds one connection; a semaphore of ``limit`` bounds the exchanges,
    and a connection is opened only when none is idle, so the connections never outnumber it."""

    def __init__(self, server: str, *, ssl_context: ssl.SSLContext | bool | None = None,
                 server_hostname: str | None = None, limit: int = 100, connect_timeout: float = 10.0) -> None:
        url = yarl.URL(server)
        if url.scheme not in ("http", "https") or not url.host:
            raise ValueError(f"unsupported server URL {server!r}")
        self._server = server.rstrip("/")
        self._host = url.raw_host or url.host
        self._port = url.port or (443 if url.scheme == "https" else 80)
        self._base = url.raw_path.rstrip("/")
        self._host_header = url.host_port_subcomponent
        self._ssl = _client_ssl(ssl_context) if url.scheme == "https" else None
        self._server_hostname = server_hostname if self._ssl is not None else None
        self._limit = limit
        self._connect_timeout = connect_timeout
        self._slots = asyncio.Semaphore(limit)
        self._idle: list[_Conn] = []
        self._busy: set[_Conn] = set()
        self._closed = False

    @property
    def connections(self) -> int:
        """Open connections, idle or in use."""
        return len(self._idle) + len(self._busy)

    def target(self, path: str, params: Mapping[str, str] | None = None) -> str:
        """The request-target for ``path`` and query ``params``, encoded as aiohttp encodes them."""
        if not params and _PLAIN_PATH(path):
            return self._base + path
        url = yarl.URL(self._server + path)
        if params:
            url = url.extend_query(params)
        return url.raw_path_qs

    def _head(self, method: str, target: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
        lines = [f"{method} {target} HTTP/1.1\r\nHost: {self._host_header}\r\n"]
        for k, v in headers.items():
            if "\r" in v or "\n" in v:
                raise ValueError(f"header {k} holds a newline")
            lines.append(f"{k}: {v}\r\n")
        lines.append("Accept-Encoding: gzip, deflate\r\n")
        if body is not None:
            lines.append(f"Content-Length: {len(body)}\r\n")
        elif method in _BODYLESS_OK:
            lines.append("Content-Length: 0\r\n")
        lines.append("\r\n")
        return "".join(lines).encode()

    async def request(self, method: str, path: str, headers: Mapping[str, str], body: bytes | None = None, *,
                      params: Mapping[str, str] | None = None,
                      on_head: Callable[[int], None] | None = None) -> Response:
        """Send one request and read its whole response; ``on_head(status)`` runs once the status
        line and headers are in (before the body). Bound its time with ``asyncio.timeout``."""
        if self._closed:
            raise ConnectionError("the client is closed")
        head = self._head(method, self.target(path, params), headers, body)
        async with self._slots:
            try:
                return await self._exchange(method, head, body, on_head, fresh=False)
            except _Retry:
                return await self._exchange(method, head, body, on_head, fresh=True)

    async def _connect(self) -> _Conn:
        try:
            async with asyncio.timeout(self._connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self._host, self._port, ssl=self._ssl, server_hostname=self._server_hostname,
                    limit=_HEAD_LIMIT)
        except TimeoutError:
            raise ConnectionError(f"connecting to {self._host}:{self._port} timed out after "
                                  f"{self._connect_timeout:g}s") from None
        except OSError as e:
            # Name the server, in the words aiohttp used before this pool (and operators' log
            # searches with them): a bare "[Errno 111] Connection refused" says not where.
            cause = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            raise CannotConnectError(f"Cannot connect to host {self._host}:{self._port} "
                                     f"ssl:{'default' if self._ssl else 'False'} [{cause}]") from e
        return _Conn(reader, writer)

    async def _exchange(self, method: str, head: bytes, body: bytes | None,
                        on_head: Callable[[int], None] | None, *, fresh: bool) -> Response:
        conn = None if fresh else self._idle_conn()
        reused = conn is not None
        if conn is None:
            conn = await self._connect()
        self._busy.add(conn)
        keep = False
        try:
            if body is None:
                conn.writer.write(head)
            elif len(body) < 65536:
                conn.writer.write(head + body)     # one write: one TLS record for a Binding or an Event
            else:
                conn.writer.write(head)
                conn.writer.write(body)
                await conn.writer.drain()
            status, version, hdrs = await _read_head(conn.reader, method, reused)
            if on_head is not None:
                on_head(status)
            keep = _keep_alive(version, hdrs)
            data, to_close = await _read_body(conn.reader, method, status, hdrs)
            if to_close:
                keep = False       # framed by the end of the connection
            encoding = hdrs.get("content-encoding")
            if encoding and data:
                data = _decode(encoding, data)
            return Response(status, hdrs, data)
        except BaseException:
            keep = False           # unknown state (an error, a timeout, a cancellation): never reused
            raise
        finally:
            self._busy.discard(conn)
            if keep and not self._closed:
                self._idle.append(conn)
            else:
                conn.abort()

    def _idle_conn(self) -> _Conn | None:
        """The most recently idled connection that is not stale; stale ones are dropped."""
        while self._idle:
            c = self._idle.pop()
            if not c.stale():
                return c
            c.abort()
        return None

    async def close(self) -> None:
        """Close every connection; a request still running then fails with its connection aborted."""
        self._closed = True
        conns = [*self._idle, *self._busy]
        self._idle.clear()
        for c in conns:
            c.writer.close()
        if conns:
            # Let TLS say close_notify, without waiting long on a peer that does not answer.
            await asyncio.wait([asyncio.ensure_future(_wait_closed(c.writer)) for c in conns], timeout=1.0)
        for c in conns:
            c.abort()


async def _wait_closed(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):          # ssl.SSLError is an OSError
        await writer.wait_closed()


def _parse_head(head: bytes) -> tuple[int, str, Headers]:
    lines = head[:-4].split(b"\r\n")
    status_line = lines[0]
    parts = status_line.split(b" ", 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or len(parts[1]) != 3 or not parts[1].isdigit():
        raise BadResponseError(f"malformed status line {status_line[:100]!r}")
    hdrs = Headers()
    for line in lines[1:]:
        name, sep, value = line.partition(b":")
        if not sep or not name or name != name.strip():
            raise BadResponseError(f"malformed header line {line[:100]!r}")
        key = name.decode("latin-1").lower()
        val = value.strip().decode("latin-1")
        old = dict.get(hdrs, key)
        dict.__setitem__(hdrs, key, f"{old}, {val}" if old is not None else val)
    return int(parts[1]), parts[0].decode("latin-1"), hdrs


async def _read_head(reader: asyncio.StreamReader, method: str, reused: bool
                     ) -> tuple[int, str, Headers]:
    """The final response head (1xx interim ones, 100 Continue or 103, are skipped). On a reused
    connection the server may have closed before any byte came: ``_Retry`` for a replayable method."""
    got_byte = False
    while True:
        try:
            raw_head = await reader.readuntil(b"\r\n\r\n")
        except asyncio.IncompleteReadError as e:
            if not e.partial and reused and method in _REPLAYABLE:
                raise _Retry from None
            raise ServerDisconnectedError(
                "the server closed the connection " + ("mid-response head" if e.partial
                                                       else "without a response")) from None
        except asyncio.LimitOverrunError:
            raise BadResponseError(f"response head longer than {_HEAD_LIMIT} bytes") from None
        except (ConnectionResetError, BrokenPipeError):
            if reused and method in _REPLAYABLE and not got_byte:
                raise _Retry from None
            raise
        got_byte = True
        status, version, hdrs = _parse_head(raw_head)
        if status >= 200 or status == 101:
            return status, version, hdrs


def _keep_alive(version: str, hdrs: Headers) -> bool:
    """Whether the connection stays open after this response (HTTP/1.1's default, or Connection)."""
    keep = version != "HTTP/1.0"
    conn_tokens = hdrs.get("connection")
    if conn_tokens:
        tokens = conn_tokens.lower()
        if "close" in tokens:
            keep = False
        elif "keep-alive" in tokens:
            keep = True
    return keep


async def _read_body(reader: asyncio.StreamReader, method: str, status: int, hdrs: Headers
                     ) -> tuple[bytes, bool]:
    """The body as framed (none, chunked, Content-Length, or up to the end of the connection);
    True with it when the end of the connection framed it."""
    if method == "HEAD" or status in (204, 304) or status < 200:
        return b"", False
    if "chunked" in (hdrs.get("transfer-encoding") or "").lower():
        return await _read_chunked(reader), False
    clen = hdrs.get("content-length")
    if clen is None:
        return await reader.read(), True
    try:
        n = int(clen)
    except ValueError:
        raise BadResponseError(f"bad Content-Length {clen!r}") from None
    if n < 0:
        raise BadResponseError(f"bad Content-Length {clen!r}")
    try:
        return await reader.readexactly(n), False
    except asyncio.IncompleteReadError as e:
        raise ServerDisconnectedError(f"the server closed the connection after {len(e.partial)} "
                                      f"of {n} bytes of the body") from None


async def _read_chunked(reader: asyncio.StreamReader) -> bytes:
    out = bytearray()
    try:
        while True:
            line = await reader.readuntil(b"\r\n")
            size_text = line.split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise BadResponseError(f"malformed chunk size {size_text[:40]!r}") from None
            if size == 0:
                while await reader.readuntil(b"\r\n") != b"\r\n":
                    pass           # trailers, unused
                return bytes(out)
            chunk = await reader.readexactly(size + 2)
            if chunk[-2:] != b"\r\n":
                raise BadResponseError("a chunk not followed by CRLF")
            out += chunk[:-2]
    except asyncio.IncompleteReadError:
        raise ServerDisconnectedError(f"the server closed the connection after {len(out)} bytes of a "
                                      "chunked body") from None
    except asyncio.LimitOverrunError:
        raise BadResponseError("malformed chunked body") from None


def _decode(encoding: str, data: bytes) -> bytes:
    enc = encoding.strip().lower()
    try:
        if enc in ("gzip", "x-gzip"):
            return zlib.decompress(data, 16 + zlib.MAX_WBITS)
        if enc == "deflate":
            try:
                return zlib.decompress(data)
            except zlib.error:
                return zlib.decompress(data, -zlib.MAX_WBITS)   # raw deflate, as some servers send
    except zlib.error as e:
        raise BadResponseError(f"cannot decode a {enc} body: {e}") from None
    if enc == "identity":
        return data
    raise BadResponseError(f"unsupported Content-Encoding {encoding!r}")
