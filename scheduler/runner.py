"""The operator process (an edge): the worker thread, the initial sync, the HTTP endpoints, and Kopf.

Startup follows upstream's order:

1. the registry holds the in-tree and the installed out-of-tree plugins (``Registry()``);
2. the ``SchedulerService`` is built (queue, cache, profile map, client);
3. the worker thread starts its own event loop. On it, the initial sync lists namespaces, nodes, pods
   and SchedulingProfiles into the cache and the queue, as informers sync before kube-scheduler
   schedules. Then ``/healthz``, ``/readyz`` and ``/metrics`` are served, and the worker loop runs;
4. Kopf starts last, on the main thread's loop. It loads the handler scripts of ``operator/`` by path.
   They share the service through ``memo.service``.

Pods are the one resource Kopf does not watch. They are the hot path (two events per scheduled pod),
and Kopf's per-event machinery (an object logger, memories, cause detection, a patch per event)
cost more CPU than the scheduling itself, on the thread that competes with the worker for the GIL
(BENCHMARKS.md has the profile). So the worker loop runs a pod informer of its own: it continues
the initial listing with a watch from its resourceVersion, resumes after a dropped connection from
the last version it saw (with bookmarks), and on ``410 Gone`` relists, replaying as DELETED every
pod that vanished meanwhile. Pod events then reach the service on the thread that schedules.

A scheduling cycle is CPU work. In a thread, a long cycle does not delay Kopf's watch processing;
Kopf's handlers only touch the lock-protected cache and queue. As a task in Kopf's loop, it would
stall watch processing for as long as each cycle runs. The worker's loop also runs the binding
cycles, so they overlap the next scheduling cycle, as upstream's binding goroutines do.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib.util
import logging
import os
import random
import sys
import threading
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlparse

import aiohttp
from aiohttp import web

from scheduler.errors import ClientError, ParseError
from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.kubeapi.client import GoneError
from scheduler.kubeapi.leaderelection import LeaderElector
from scheduler.kubeapi.scheduler_client import ApiSchedulerClient
from scheduler.profiles.crd import GROUP, VERSION
from scheduler.service import ProfileStatus, SchedulerService
from scheduler.serving import start_http

__all__ = ["OperatorRuntime", "find_operator_dir", "load_handlers"]

log = logging.getLogger("kopf_scheduler")
PLURAL = "schedulingprofiles"


def find_operator_dir() -> Path:
    """``$KOPF_SCHEDULER_OPERATOR_DIR``, the checkout's ``operator/`` (editable installs), or
    ``/app/operator`` (the container image)."""
    candidates = [os.environ.get("KOPF_SCHEDULER_OPERATOR_DIR", ""),
                  str(Path(__file__).resolve().parent.parent / "operator"), "/app/operator"]
    for c in candidates:
        if c and (Path(c) / "main.py").exists():
            return Path(c)
    raise FileNotFoundError("the operator/ handler scripts were not found; set KOPF_SCHEDULER_OPERATOR_DIR")


_LOADED: dict[Path, tuple[list[ModuleType], Any]] = {}


def load_handlers(directory: Path) -> list[ModuleType]:
    """Import every ``operator/*.py`` by path (it is not a package), once per process."""
    return _load(directory)[0]


def _load(directory: Path) -> tuple[list[ModuleType], Any]:
    """The handler modules and the Kopf registry they registered into: a registry of our own, so
    other Kopf code in the process (or a test's operator) neither sees nor replaces our handlers."""
    import kopf
    directory = directory.resolve()
    if directory in _LOADED:
        return _LOADED[directory]
    registry = kopf.OperatorRegistry()
    previous = kopf.get_default_registry()
    kopf.set_default_registry(registry)
    mods = []
    try:
        for path in sorted(directory.glob("*.py"), key=lambda p: (p.name != "main.py", p.name)):
            name = f"kopf_scheduler_operator_{path.stem}"
            spec = importlib.util.spec_from_file_location(name, path)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            mods.append(mod)
    finally:
        kopf.set_default_registry(previous)
    _LOADED[directory] = (mods, registry)
    return _LOADED[directory]


def profile_status_body(st: ProfileStatus, generation: int | None) -> dict[str, Any]:
    """The SchedulingProfile ``status`` for a compile outcome (a rejected edit keeps the last good
    plugins: only the condition and observedGeneration change)."""
    body: dict[str, Any] = {"conditions": [st.condition(generation)], "observedGeneration": generation}
    if st.accepted:
        body.update(schedulerName=st.scheduler_name, plugins=st.plugins,
                    percentageOfNodesToScore=st.percentage_of_nodes_to_score)
    return body


class OperatorRuntime:
    def __init__(self, config: KubeConfig, *, http_addresses: Iterable[tuple[str, int]] = (),
                 seed: int | None = None, series_interval: float = 30.0,
                 leader_election: dict[str, Any] | None = None) -> None:
        self.config = config
        self.api = KubeClient(config, limit=128)
        self.client = ApiSchedulerClient(self.api, series_interval=series_interval)
        self.service = SchedulerService(self.client, seed=seed)
        requests, host = self.service.metrics.rest_client_requests, urlparse(config.server).netloc
        self.api.on_response = lambda method, status: requests.labels(
            str(status) if status is not None else "<error>", host, method).inc()
        self.http_addresses = list(http_addresses)
        self.elector: LeaderElector | None = None
        if leader_election is not None:
            self.elector = LeaderElector(self.api, on_change=self._leadership, **leader_election)
            self.service.leader = False
            self.service.metrics.leader_status.labels(self.elector.name).set(0)
        self.service.leader_info = self.leader_info
        self.http_ports: list[int] = []
        self.synced = threading.Event()
        self.failed: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._runner: web.AppRunner | None = None
        self._tasks: set[asyncio.Future[None]] = set()
        self._pods_rv = ""
        # "thread" (the default) or "task": the worker as a task in Kopf's own loop. "task" exists to
        # measure the choice (BENCHMARKS.md); it serves no HTTP endpoints.
        self.worker_mode = os.environ.get("KOPF_SCHEDULER_WORKER", "thread")

    # ---- the worker thread ----------------------------------------------------------------------
    def start(self) -> None:
        if self.worker_mode == "task":
            return                   # started by Kopf's startup handler, in Kopf's loop
        def main() -> None:
            from scheduler.simulator.cluster import new_event_loop
            loop = new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._main())
            except BaseException as e:   # surfaced to the main thread, which exits non-zero
                self.failed = e
                log.exception("the scheduling worker stopped")
                self.synced.set()
            finally:
                loop.run_until_complete(self.api.close())
                loop.close()
        self._thread = threading.Thread(target=main, name="scheduling-worker", daemon=True)
        self._thread.start()

    async def start_in_this_loop(self) -> None:
        """Task mode: run the worker in the calling (Kopf's) loop."""
        self._loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(self._main())
        self._tasks.add(task)

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        self._runner, self.http_ports = await start_http(
            self.service, self.http_addresses if self.worker_mode == "thread" else [])
        delay = 0.5
        while not self._stop.is_set():
            try:
                await self.initial_sync()
                break
            except ClientError as e:
                log.warning("initial sync failed, retrying in %.1f s: %s", delay, e)
                await asyncio.sleep(delay)
                delay = min(delay * 2, 30)
        self.service.synced = True
        self.synced.set()
        elector = asyncio.ensure_future(self.elector.run(self._stop)) if self.elector is not None else None
        informer = asyncio.ensure_future(self.watch_pods(self._stop))
        try:
            await self.service.run_worker(self._stop)
        finally:
            informer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await informer
            if elector is not None:
                await asyncio.wait([elector], timeout=5)
            await self._runner.cleanup()

    # ---- leadership -----------------------------------------------------------------------------
    def _leadership(self, leading: bool) -> None:
        """Called on the worker loop when the lease is won or lost."""
        assert self.elector is not None
        m = self.service.metrics
        m.leader_status.labels(self.elector.name).set(1 if leading else 0)
        m.leader_transitions.labels(self.elector.name, "acquired" if leading else "lost").inc()
        self.service.leader = leading
        if leading:      # a standby compiled every profile but wrote no status: the new leader does
            task = asyncio.ensure_future(self.write_profile_statuses())
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def leader_info(self) -> str:
        if self.elector is None:
            return "leader election: off"
        e = self.elector
        return (f"leader election: lease {e.namespace}/{e.name}, holder {e.holder or '<none>'}, "
                f"this replica {e.identity} is {'leading' if e.leading else 'standby'}, "
                f"lease transitions {e.transitions}")

    async def write_profile_statuses(self) -> None:
        for name, (st, generation) in list(self.service.profile_status.items()):
            try:
                await self.api.request("PATCH", f"/apis/{GROUP}/{VERSION}/{PLURAL}/{name}/status",
                                       {"status": profile_status_body(st, generation)},
                                       content_type="application/merge-patch+json")
            except ClientError as e:
                log.warning("cannot write the status of profile %s: %s", name, e)

    async def initial_sync(self) -> None:
        """List what the informers would, before the first scheduling cycle."""
        s = self.service
        for ns in (await self.api.list("v1", "Namespace"))["items"]:
            s.on_namespace("ADDED", ns)
        for node in (await self.api.list("v1", "Node"))["items"]:
            try:
                s.on_node("ADDED", node)
            except ParseError as e:
                log.warning("node %s cannot be read: %s", node["metadata"].get("name"), e)
        for pdb in (await self.api.request("GET", "/apis/policy/v1/poddisruptionbudgets"))["items"]:
            s.on_pdb("ADDED", pdb)
        try:
            profiles = (await self.api.request("GET", f"/apis/{GROUP}/{VERSION}/{PLURAL}"))["items"]
        except ClientError as e:
            if e.status != 404:
                raise
            log.warning("the SchedulingProfile CRD is not installed: kubectl apply -f crds/")
            profiles = []
        for p in profiles:
            s.profile_status[p["metadata"]["name"]] = (s.on_profile(p["metadata"]["name"], p.get("spec") or {}),
                                                        p["metadata"].get("generation"))
        await self.relist_pods()

    async def relist_pods(self) -> None:
        """List every pod into the service; pods it knew that are gone are replayed as DELETED."""
        listing = await self.api.list("v1", "Pod")
        seen: set[str] = set()
        for pod in listing["items"]:
            seen.add(str((pod.get("metadata") or {}).get("uid", "")))
            self.pod_event("ADDED", pod)
        for uid in self.service.known_pod_uids() - seen:
            self.service.on_pod("DELETED", {"metadata": {"uid": uid}})
        self._pods_rv = str(listing["metadata"].get("resourceVersion") or "")

    async def watch_pods(self, stop: asyncio.Event) -> None:
        """The pod informer: watch from the last version seen; relist on 410; back off on errors."""
        delay = 0.1
        while not stop.is_set():
            try:
                async for kind, obj in self.api.watch("v1", "Pod", resource_version=self._pods_rv, timeout=300,
                                                      params={"allowWatchBookmarks": "true"}):
                    rv = (obj.get("metadata") or {}).get("resourceVersion")
                    if rv:
                        self._pods_rv = str(rv)
                    if kind != "BOOKMARK":
                        self.pod_event(kind, obj)
                    delay = 0.1
                    if stop.is_set():
                        return
            except GoneError:
                log.info("pod watch expired (410): relisting")
                try:
                    await self.relist_pods()
                except ClientError as e:
                    log.warning("pod relist failed: %s", e)
                    await asyncio.sleep(delay)
            except (TimeoutError, ClientError, OSError, aiohttp.ClientError) as e:
                log.info("pod watch interrupted, resuming from %s: %s", self._pods_rv, e)
                await asyncio.sleep(delay * (0.5 + random.random()))
                delay = min(delay * 2, 5.0)

    def pod_event(self, event: str, body: dict[str, Any]) -> None:
        """Feed a pod event to the service (from any thread); an unreadable pod of ours gets an Event
        and ``PodScheduled=False``, posted from the worker loop that owns the API session."""
        try:
            self.service.on_pod(event, body)
        except ParseError as e:
            meta, spec = body.get("metadata") or {}, body.get("spec") or {}
            msg = f"the scheduler cannot read this pod: {e}"
            log.warning("pod %s/%s: %s", meta.get("namespace"), meta.get("name"), msg)
            if not spec.get("nodeName") and self.service.profiles.owner_of(
                    str(spec.get("schedulerName", "default-scheduler"))) is not None:
                self.submit(self.client.report_invalid(str(meta.get("namespace")), str(meta.get("name")),
                                                       str(meta.get("uid", "")), str(spec.get("schedulerName")), msg))

    def submit(self, coro: Any) -> None:
        """Run a coroutine on the worker loop (from Kopf's thread), fire and forget."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(coro, self._loop)

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=30)

    # ---- Kopf -----------------------------------------------------------------------------------
    def kopf_kwargs(self, stop_flag: Any = None, ready_flag: Any = None) -> dict[str, Any]:
        import kopf
        _, registry = _load(find_operator_dir())
        return {"clusterwide": True, "standalone": True, "memo": kopf.Memo(runtime=self, service=self.service),
                "stop_flag": stop_flag, "ready_flag": ready_flag, "registry": registry}
