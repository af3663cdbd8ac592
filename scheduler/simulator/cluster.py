"""``SimulatedCluster``: the simulated API server on 127.0.0.1, in a thread of its own or in this loop.

Embedded use (tests, ``simulate``, benchmarks)::

    async with SimulatedCluster(load=["cluster.yaml"]) as c:   # loaded as ``loader`` says; crds=[...] on demand
        c.url, c.kubeconfig            # https://127.0.0.1:PORT and a kubeconfig file with a bearer token
        await c.client.create(pod)     # a KubeClient bound to the caller's event loop

By default the server runs its own event loop in a daemon thread, so that an operator (Kopf) in the
caller's loop never shares a loop with the server (Kopf treats every task in its loop as its own).
``threaded=False`` serves from the caller's loop instead, which the ``cluster`` command does.
``c.call(fn, *args)`` runs ``fn`` on the server's loop (the one safe way to touch server state).
``feature_gates`` are kube-apiserver's (``{"GenericWorkload": True}`` serves Workloads and PodGroups);
a gate not given has upstream's default.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import json
import tempfile
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

import yaml
from aiohttp import web

from scheduler.kubeapi import KubeClient, KubeConfig, new_event_loop
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.faults import Faults
from scheduler.simulator.http1 import LeanServer
from scheduler.simulator.loader import load as load_objects
from scheduler.simulator.server import ApiServer
from scheduler.simulator.store import MAX_OBJECT_BYTES, MAX_PENDING_BYTES, MAX_TOTAL_BYTES
from scheduler.simulator.tls import SelfSigned

__all__ = ["LoadError", "SimulatedCluster", "iter_documents", "text_documents", "write_kubeconfig"]

T = TypeVar("T")
Obj = dict[str, Any]


class LoadError(ValueError):
    pass


def iter_documents(path: str | Path) -> Iterator[Obj]:
    """Objects in a YAML or JSON file: single objects, multi-document YAML, and ``List``s flattened."""
    return text_documents(Path(path).read_text(), str(path))


def text_documents(text: str, name: str) -> Iterator[Obj]:
    """``iter_documents`` for text already read (stdin); ``name`` says where it came from in errors."""
    try:
        docs: Iterable[Any] = [json.loads(text)] if text.lstrip().startswith("{") else list(yaml.safe_load_all(text))
    except (json.JSONDecodeError, yaml.YAMLError) as e:
        raise LoadError(f"{name}: not YAML or JSON: {e}") from None
    return _flatten(docs, name)


def _flatten(docs: Iterable[Any], name: str) -> Iterator[Obj]:
    for doc in docs:
        if doc is None:
            continue
        if not isinstance(doc, dict):
            raise LoadError(f"{name}: a document is not an object")
        if str(doc.get("kind", "")).endswith("List") and isinstance(doc.get("items"), list):
            yield from (item for item in doc["items"] if isinstance(item, dict))
        else:
            yield doc


def write_kubeconfig(path: Path, url: str, token: str, ca_pem: bytes, name: str = "kopf-scheduler-sim") -> None:
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": name,
           "clusters": [{"name": name, "cluster": {"server": url, "certificate-authority-data":
                                                   base64.b64encode(ca_pem).decode()}}],
           "users": [{"name": name, "user": {"token": token}}],
           "contexts": [{"name": name, "context": {"cluster": name, "user": name, "namespace": "default"}}]}
    path.write_text(yaml.safe_dump(doc))
    path.chmod(0o600)


class SimulatedCluster:
    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, kubeconfig: str | Path | None = None,
                 load: Iterable[str | Path] = (), faults: Faults | None = None, seed: int = 0,
                 pod_running_after: float | None = None, pod_termination_seconds: float = 0.0,
                 pod_completion_seconds: float = 2.0, provision_seconds: float = 0.2,
                 gpus_per_node: int = 0, gpu_attributes: Obj | None = None, history: int = 20_000,
                 threaded: bool = True, token: str | None = None, crds: Iterable[Obj] = (),
                 storage_quota_bytes: int = MAX_TOTAL_BYTES, max_object_bytes: int = MAX_OBJECT_BYTES,
                 watch_buffer_bytes: int = MAX_PENDING_BYTES,
                 feature_gates: Mapping[str, bool] | None = None) -> None:
        if host not in ("127.0.0.1", "localhost", "::1"):
            raise ValueError("the simulated cluster serves on loopback only (127.0.0.1)")
        self.host, self.port = host, port
        self._tmp = tempfile.TemporaryDirectory(prefix="kopf-scheduler-sim-")
        self.tls = SelfSigned(Path(self._tmp.name))
        self.server = ApiServer(token=token, faults=faults, history=history, pod_running_after=pod_running_after,
                                pod_termination_seconds=pod_termination_seconds,
                                pod_completion_seconds=pod_completion_seconds,
                                provision_seconds=provision_seconds, gpus_per_node=gpus_per_node,
                                gpu_attributes=gpu_attributes, seed=seed,
                                storage_quota_bytes=storage_quota_bytes, max_object_bytes=max_object_bytes,
                                watch_buffer_bytes=watch_buffer_bytes, feature_gates=feature_gates,
                                ca_pem=self.tls.cert_pem)
        self._kubeconfig_arg = Path(kubeconfig) if kubeconfig else None
        self.kubeconfig = Path()
        self.url = ""
        self.threaded = threaded
        self._load = list(load)
        self._crds = list(crds)
        self.loaded: list[Obj] = []
        self.rejected: list[tuple[Obj, ApiError]] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._lean: LeanServer | None = None
        self._listener: asyncio.Server | None = None
        self._client: KubeClient | None = None

    @property
    def token(self) -> str:
        return self.server.token

    @property
    def faults(self) -> Faults:
        return self.server.faults

    @property
    def client(self) -> KubeClient:
        if self._client is None:
            self._client = KubeClient(KubeConfig(self.url, token=self.token, ssl_context=self.tls.client_context()))
        return self._client

    # ---- lifecycle ------------------------------------------------------------------------------
    async def _serve(self) -> None:
        self._runner = web.AppRunner(self.server.app(), access_log=None, handle_signals=False,
                                     shutdown_timeout=2.0)
        await self._runner.setup()
        assert self._runner.server is not None
        # Plain calls are served by the lean front door, the rest by aiohttp (simulator/http1.py).
        self._lean = LeanServer(self.server, self._runner.server)
        self._listener = await asyncio.get_running_loop().create_server(
            self._lean, self.host, self.port, backlog=1024, ssl=self.tls.server_context())
        self.port = self._listener.sockets[0].getsockname()[1]
        self.url = f"https://{self.host}:{self.port}"
        self.server.advertise(self.host, self.port)
        if self._load:
            # every file at once, as ``simulate -f`` loads them (``loader``): kinds ordered, uids kept
            loaded = load_objects(self.server, [doc for path in self._load for doc in iter_documents(path)],
                                  crds=self._crds)
            self.loaded, self.rejected = loaded.objects, loaded.rejected

    async def _shutdown(self) -> None:
        if self._listener is not None:
            self._listener.close()
        if self._lean is not None:
            self._lean.close()
        if self._runner is not None:
            await self._runner.cleanup()

    def _write_kubeconfig(self) -> None:
        self.kubeconfig = self._kubeconfig_arg or Path(self._tmp.name) / "kubeconfig"
        write_kubeconfig(self.kubeconfig, self.url, self.token, self.tls.cert_pem)

    def start(self) -> None:
        """Start serving in a daemon thread (``threaded=True``); returns once the port is open."""
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()

        def main() -> None:
            loop = new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._serve())
            except BaseException as e:
                ready.set_exception(e)
                return
            ready.set_result(None)
            loop.run_forever()
            loop.run_until_complete(self._shutdown())
            loop.close()

        self._thread = threading.Thread(target=main, name="simulated-apiserver", daemon=True)
        self._thread.start()
        ready.result(timeout=60)
        self._write_kubeconfig()

    def stop(self) -> None:
        if self._loop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._tmp.cleanup()

    async def __aenter__(self) -> SimulatedCluster:
        if self.threaded:
            await asyncio.get_running_loop().run_in_executor(None, self.start)
        else:
            self._loop = asyncio.get_running_loop()
            await self._serve()
            self._write_kubeconfig()
        return self

    async def __aexit__(self, *_: object) -> None:
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self.threaded:
            await asyncio.get_running_loop().run_in_executor(None, self.stop)
        else:
            await self._shutdown()
            self._tmp.cleanup()

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Run ``fn(*args)`` on the server's loop and return its result (from any other thread)."""
        assert self._loop is not None
        if not self.threaded:
            return fn(*args)
        fut: concurrent.futures.Future[T] = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn(*args))
            except BaseException as e:
                fut.set_exception(e)
        self._loop.call_soon_threadsafe(run)
        return fut.result(timeout=30)
