"""A raw HTTP helper for the simulated cluster tests: status codes and bodies, nothing hidden."""

from __future__ import annotations

import contextlib
import http.client
import json
import time
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlencode, urlparse

from scheduler.simulator import SimulatedCluster


@contextlib.contextmanager
def started(**kwargs: Any) -> Iterator[SimulatedCluster]:
    """A simulated cluster serving (in its own thread) for the ``with`` block; for fixtures."""
    c = SimulatedCluster(**kwargs)
    c.start()
    try:
        yield c
    finally:
        c.stop()


class Http:
    def __init__(self, sim: SimulatedCluster, token: str | None = None) -> None:
        u = urlparse(sim.url)
        self.host, self.port = u.hostname or "127.0.0.1", u.port or 443
        self.ctx = sim.tls.client_context()
        self.token = sim.token if token is None else token

    def __call__(self, method: str, path: str, body: Any = None, *, ctype: str = "application/json",
                 params: dict[str, str] | None = None, accept: str = "application/json",
                 raw: bytes | None = None) -> tuple[int, Any]:
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        headers = {"Accept": accept}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        if data is not None:
            headers["Content-Type"] = ctype
        conn.request(method, path + ("?" + urlencode(params) if params else ""), body=data, headers=headers)
        resp = conn.getresponse()
        text = resp.read()
        conn.close()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, text.decode()

    def watch_lines(self, path: str, params: dict[str, str]) -> list[dict[str, Any]]:
        """A bounded watch: reads until the server closes it (give ``timeoutSeconds``)."""
        conn = http.client.HTTPSConnection(self.host, self.port, context=self.ctx, timeout=30)
        conn.request("GET", path + "?" + urlencode({"watch": "true", **params}),
                     headers={"Authorization": f"Bearer {self.token}"})
        resp = conn.getresponse()
        try:
            data = resp.read()
        except http.client.IncompleteRead as e:     # the server cut the stream (a dropped watch)
            data = e.partial
        out = [json.loads(line) for line in data.splitlines() if line.strip()]
        conn.close()
        return out


def pod(name: str, *, labels: dict[str, str] | None = None, cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": labels or {}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                     "resources": {"requests": {"cpu": cpu}}}], **spec}}


def node(name: str, cpu: str = "4", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels or {}},
            "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "110"}}}


PODS = "/api/v1/namespaces/default/pods"


def wait(what: Callable[[], Any], timeout: float = 10.0, message: str = "") -> Any:
    """Poll ``what`` every 50 ms until it is truthy (its value), or fail after ``timeout`` s."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting: {message}")
