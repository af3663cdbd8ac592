"""A scheduler extender served on 127.0.0.1 for the tests: ``http.server`` in a thread, each verb
answered by a Python function of the decoded request.

``fake_filter`` / ``fake_prioritize`` / ``fake_bind`` give upstream's ``FakeExtender``
(``pkg/scheduler/testing/framework/fake_extender.go``) over HTTP: its predicates
(``TRUE``, ``FALSE``, ``ERROR``, ``NODE1``, ``NODE2``) with its failure messages, and its
prioritizers (``node1_prioritizer``, ``node2_prioritizer``, ``error_prioritizer``) combined by
weight. A handler may instead return ``Raw`` (a status, bytes, a delay) to misbehave.
"""

from __future__ import annotations

import json
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Handler = Callable[[dict[str, Any]], Any]


@dataclass
class Raw:
    body: bytes = b""
    status: int = 200
    delay: float = 0.0


class ExtenderServer:
    """Serves ``POST /<verb>`` on 127.0.0.1; ``requests`` records (verb, decoded body) in order."""

    def __init__(self, tls: ssl.SSLContext | None = None, **verbs: Handler) -> None:
        self.verbs = verbs
        self.tls = tls
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        owner = self

        class _Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                verb = self.path.rsplit("/", 1)[-1]
                args = json.loads(raw) if raw else {}
                with owner._lock:
                    owner.requests.append((verb, args))
                handler = owner.verbs.get(verb)
                answer: Any = Raw(b"404 page not found", 404) if handler is None else handler(args)
                if not isinstance(answer, Raw):
                    answer = Raw(json.dumps(answer).encode())
                if answer.delay:
                    time.sleep(answer.delay)
                try:
                    self.send_response(answer.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(answer.body)))
                    self.end_headers()
                    self.wfile.write(answer.body)
                except OSError:
                    pass            # the scheduler gave up waiting and closed the connection

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        if tls is not None:
            self.server.socket = tls.wrap_socket(self.server.socket, server_side=True)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self._thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def url(self) -> str:
        return f"{'https' if self.tls else 'http'}://127.0.0.1:{self.server.server_address[1]}"

    def verbs_called(self) -> list[str]:
        with self._lock:
            return [v for v, _ in self.requests]

    def start(self) -> ExtenderServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)


@contextmanager
def serving(tls: ssl.SSLContext | None = None, **verbs: Handler) -> Iterator[ExtenderServer]:
    s = ExtenderServer(tls, **verbs).start()
    try:
        yield s
    finally:
        s.stop()


# --- upstream's FakeExtender, over HTTP ---------------------------------------------------------
Predicate = Callable[[dict[str, Any], str], tuple[str, str]]   # (pod, node) -> (code, message)


def TRUE(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return "Success", ""


def FALSE(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return "Unschedulable", f'pod is unschedulable on the node "{node}"'


def ERROR(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return "Error", "some error"


def NODE1(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return ("Success", "") if node == "node1" else ("Unschedulable", f'node "{node}" is not allowed')


def NODE2(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return ("Success", "") if node == "node2" else ("Unschedulable", f'node "{node}" is not allowed')


def UNRESOLVABLE(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return "UnschedulableAndUnresolvable", "never"


def node_names(args: dict[str, Any]) -> list[str]:
    """The candidate nodes of ExtenderArgs: NodeNames (nodeCacheCapable) or Nodes.items."""
    if args.get("NodeNames") is not None:
        return list(args["NodeNames"])
    return [n["metadata"]["name"] for n in (args.get("Nodes") or {}).get("items") or []]


def fake_filter(*predicates: Predicate) -> Handler:
    """FakeExtender.Filter: a node passes when every predicate does; Unschedulable goes to
    FailedNodes, UnschedulableAndUnresolvable to FailedAndUnresolvableNodes, an Error is the
    answer's Error. The kept nodes come back the way they were sent."""
    def handle(args: dict[str, Any]) -> Any:
        kept, failed, unresolvable = [], {}, {}
        for name in node_names(args):
            code, msg = "Success", ""
            for p in predicates:
                code, msg = p(args["Pod"], name)
                if code != "Success":
                    break
            if code == "Success":
                kept.append(name)
            elif code == "Unschedulable":
                failed[name] = f'FakeExtender: node "{name}" failed'
            elif code == "UnschedulableAndUnresolvable":
                unresolvable[name] = f'FakeExtender: node "{name}" failed and unresolvable'
            else:
                return {"Error": msg}
        if args.get("NodeNames") is not None:
            return {"NodeNames": kept, "FailedNodes": failed, "FailedAndUnresolvableNodes": unresolvable}
        items = [n for n in args["Nodes"]["items"] if n["metadata"]["name"] in kept]
        return {"Nodes": {"metadata": {}, "items": items}, "FailedNodes": failed,
                "FailedAndUnresolvableNodes": unresolvable}
    return handle


Prioritizer = Callable[[list[str]], dict[str, int] | None]


def node1_prioritizer(nodes: list[str]) -> dict[str, int] | None:
    return {n: 10 if n == "node1" else 1 for n in nodes}


def node2_prioritizer(nodes: list[str]) -> dict[str, int] | None:
    return {n: 10 if n == "node2" else 1 for n in nodes}


def error_prioritizer(nodes: list[str]) -> dict[str, int] | None:
    return None


def fake_prioritize(*prioritizers: tuple[Prioritizer, int]) -> Handler:
    """FakeExtender.Prioritize: the prioritizers' scores times their weights, summed per host; an
    error (None) answers 500."""
    def handle(args: dict[str, Any]) -> Any:
        combined: dict[str, int] = {}
        for fn, weight in prioritizers:
            got = fn(node_names(args))
            if got is None:
                return Raw(b"some error", 500)
            for host, score in got.items():
                combined[host] = combined.get(host, 0) + score * weight
        return [{"Host": h, "Score": s} for h, s in combined.items()]
    return handle


def fake_bind(bound: dict[str, str], error: str = "") -> Handler:
    """Binds by recording ``uid -> node`` (or answers ``error``)."""
    def handle(args: dict[str, Any]) -> Any:
        if error:
            return {"Error": error}
        bound[args["PodUID"]] = args["Node"]
        return {}
    return handle


# --- extenders that misbehave below HTTP ---------------------------------------------------------
class RawExtender:
    """A TCP server on 127.0.0.1 that reads a request and then misbehaves: ``trickle`` answers
    ``HTTP/1.1 200 OK\\r\\n`` and then one byte a ``period``; ``silent`` never answers. Each connection
    is held for at most ``hold`` seconds, or until ``stop``."""

    def __init__(self, mode: str, period: float = 1.0, hold: float = 60.0) -> None:
        import socket
        self.mode, self.period, self.hold = mode, period, hold
        self.connections = 0
        self.held: list[float] = []         # how long the scheduler kept each connection, in seconds
        self._stop = threading.Event()
        self._sock = socket.create_server(("127.0.0.1", 0))
        self._sock.settimeout(0.1)
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._misbehave, args=(conn, time.monotonic()), daemon=True).start()

    def _misbehave(self, conn: Any, accepted: float) -> None:
        import select
        with conn:
            try:
                conn.settimeout(1.0)
                conn.recv(65536)
                if self.mode == "trickle":
                    conn.sendall(b"HTTP/1.1 200 OK\r\n")
                while not self._stop.is_set() and time.monotonic() < accepted + self.hold:
                    readable, _, _ = select.select([conn], [], [], self.period)
                    if readable and not conn.recv(65536):
                        break       # the scheduler closed it
                    if self.mode == "trickle":
                        conn.sendall(b"X")
            except OSError:
                pass                # the scheduler closed it
            self.held.append(time.monotonic() - accepted)     # list.append: atomic

    def __enter__(self) -> RawExtender:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self._sock.close()
