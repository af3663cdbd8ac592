"""``OperatorRuntime``, the operator process (``kopf-scheduler run``): the worker thread, the initial
sync, the informers, the HTTP endpoints (``serving``), leader election, and Kopf.

Startup follows upstream's order:

1. the registry holds the in-tree and the installed out-of-tree plugins (``Registry()``);
2. the ``SchedulerService`` is built (queue, cache, profile map, client);
3. the worker thread starts its own event loop. On it, the initial sync lists every kind into the
   cache and the queue, as informers sync before kube-scheduler schedules. Then ``/healthz``,
   ``/readyz`` and ``/metrics`` are served, and the worker loop runs;
4. Kopf starts last, on the main thread's loop. It loads ``operator/main.py`` by path
   (``find_operator_dir``: ``$KOPF_SCHEDULER_OPERATOR_DIR``, the checkout's, or the image's
   ``/app/operator``): the settings, the login, the ``task`` worker mode and the probe. It serves
   no kind.

Every kind the service reads has exactly one informer of the worker loop's own (``informers.py``),
one per entry of ``kinds.watched_kinds`` (the list ``explain`` reads and feeds the same way): pods,
nodes, the storage and DRA kinds the plugins read per pod, namespaces, PodDisruptionBudgets, the
selector owners (Services, ReplicationControllers, ReplicaSets, StatefulSets) and SchedulingProfiles
(``profile_status.py`` turns their events into ``on_profile`` and ``remove_profile``, and writes
their status). One more informer, of SchedulingExplanations, feeds ``explanations.py``, whose loop
the leader answers them with (and deletes them after their TTL): requests to the scheduler, not
state it reads, so ``explain`` does not list them. Each informer continues the initial listing with
a watch from its resourceVersion, resumes after a dropped connection from the last version it saw
(with bookmarks), and on ``410 Gone`` relists, replaying as DELETED every object that vanished
meanwhile. So no event is lost between the listing and the watch: when Kopf served the low-rate
kinds, it listed them a second time after the initial sync, and an object deleted in between (about
200 ms), or while Kopf restarted, was never seen. Events reach the service on the thread that
schedules, in the order the API server wrote them, so a pod never overtakes the claim it was created
after on a path of its own. For the hot kinds, Kopf's per-event machinery (an object logger,
memories, cause detection, a patch per event) also cost more CPU than the scheduling itself, on the
thread that competes with the worker for the GIL (BENCHMARKS.md has the profile).

Kopf is supervised like the worker's loops (``run_kopf``): when it dies (Kopf 1.45 let aiohttp's
``RuntimeError("Connection closed.")`` out of a watch whose connection its credential refresh
closed, which ended its whole operator; it now has no watch to lose), it is started again
in-process with the same backoff, and ``/healthz`` names it while it is down.

A graceful stop (``run`` on SIGTERM or SIGINT, which its main thread handles while Kopf runs in a
thread of its own, ``run_until``) hands over in well under a second: the worker takes no new pod and
waits for its binding cycles (at most ``service.drain_timeout``, 5 s); then the elector releases
the lease (client-go's ``ReleaseOnCancel``), and a standby watching it takes the lease at once;
then the informers end. Kopf stops alongside, and is not waited for beyond ``KOPF_STOP_TIMEOUT``.
The new leader schedules once its pod informer has caught up with the API (a fresh List,
``Informer.catch_up``): its watch may not have delivered the last bindings yet. With leader
election, every Binding and PreBind write is fenced by the elector's ``holds`` (leading, and renewed
within renewDeadline), asked when the write is about to be sent.

A scheduling cycle is CPU work. In a thread, a long cycle does not delay Kopf's loop (its login and
probe). As a task in Kopf's loop (``KOPF_SCHEDULER_WORKER=task``), the informers run there too. The
worker's loop also runs the binding cycles, so they overlap the next scheduling cycle, as upstream's
binding goroutines do.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import importlib.util
import logging
import os
import random
import sys
import sysconfig
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import urlparse

from aiohttp import web

from scheduler.app.explanations import DEFAULT_BURST, DEFAULT_QPS, ExplanationController
from scheduler.app.informers import Informer
from scheduler.app.informers import sleep_unless as _sleep_unless
from scheduler.app.kinds import watched_kinds
from scheduler.app.profile_status import ProfileFollower, spawner
from scheduler.app.serving import SecureServing, ServingError, start_http
from scheduler.errors import ClientError, ParseError
from scheduler.framework.decision import DEFAULT_CAPACITY, DEFAULT_TOP_NODES
from scheduler.kubeapi import KubeClient, KubeConfig, new_event_loop
from scheduler.kubeapi.extender import http_extender
from scheduler.kubeapi.leaderelection import LeaderElector
from scheduler.kubeapi.scheduler_client import ApiSchedulerClient
from scheduler.metrics import Metrics
from scheduler.profiles.crd import PLURAL, profiles_path
from scheduler.profiles.explanation_crd import PLURAL as EXPLANATIONS
from scheduler.profiles.explanation_crd import explanations_path
from scheduler.service import SchedulerService

__all__ = ["OperatorRuntime", "find_operator_dir", "load_handlers", "raise_open_file_limit"]

log = logging.getLogger("kopf_scheduler")
WATCH_TIMEOUT = 300
# client-go's reflector backoff: 0.8 s doubling to a 30 s cap, jitter 1.0, reset after 2 quiet minutes.
BACKOFF_INITIAL, BACKOFF_CAP, BACKOFF_RESET = 0.8, 30.0, 120.0
# How long a loop may go without a heartbeat before /healthz calls it stalled. The informer's watch
# ends at WATCH_TIMEOUT and its read timeout is 30 s more, so a live informer beats within that.
STALL_AFTER = 60.0
MAX_REMEMBERED = 10_000
# How long a stopping ``run`` waits for Kopf once the worker has stopped (Kopf's own stop gives its
# lingering tasks 5 s more; none of them holds anything the next leader needs).
KOPF_STOP_TIMEOUT = 2.0
# How often shadow profiles' status.shadow is written (only what changed, only by the leader).
SHADOW_STATUS_PERIOD = 2.0
# The informers a replica that wins the lease brings up to the API's state before it schedules
# (``_lead_once_caught_up``): the pods, whose bindings by the previous leader it must not repeat.
CATCH_UP_KINDS = ("pods",)


class Backoff:
    """client-go's ``wait.Backoff`` as the reflector configures it: the base doubles from 0.8 s up
    to the 30 s cap, and each delay is jittered by up to 100 % (so 0.8–1.6 s, 1.6–3.2 s, …)."""

    def __init__(self, initial: float = BACKOFF_INITIAL, cap: float = BACKOFF_CAP) -> None:
        self.initial, self.cap = initial, cap
        self.base = initial

    def next(self) -> float:
        delay = self.base * (1.0 + random.random())
        self.base = min(self.base * 2, self.cap)
        return delay

    def reset(self) -> None:
        self.base = self.initial


@dataclass
class Component:
    """One supervised loop of the worker thread, as ``/healthz`` sees it: up or down since when,
    its last error, how often it was restarted, and its heartbeat."""

    name: str
    stall_after: float | None = None
    restarts: int = 0
    last_error: str = ""
    down_since: float | None = None
    beat: float = 0.0

    def up(self, now: float) -> None:
        self.down_since, self.beat = None, now

    def died(self, e: BaseException, now: float) -> None:
        self.down_since, self.last_error = now, f"{type(e).__name__}: {e}"

    def problem(self, now: float) -> str | None:
        if self.down_since is not None:
            return (f"died {now - self.down_since:.0f} s ago ({self.last_error}); restarting "
                    f"({self.restarts} restarts so far)")
        if self.stall_after is not None:
            return _stalled(now - self.beat, self.stall_after)
        return None


def _signals_are_ours(record: logging.LogRecord) -> bool:
    """Drop Kopf's "OS signals are ignored" warning: in ``run`` the main thread handles them."""
    return not record.getMessage().startswith("OS signals are ignored")


def _stalled(idle: float, limit: float) -> str | None:
    return f"stalled: no progress for {idle:.0f} s" if idle > limit else None


def _component_name(informer: str) -> str:
    # "pod-informer" (the name /healthz has always used), "persistentvolumeclaims-informer", ...
    return "pod-informer" if informer == "pods" else f"{informer}-informer"


def _pod_uid(pod: dict[str, Any]) -> str:
    return str((pod.get("metadata") or {}).get("uid", ""))


def _pod_tombstone(uid: str) -> dict[str, Any]:
    return {"metadata": {"uid": uid}}


def _rest_client_metrics(metrics: Metrics, host: str) -> Callable[[str, int | None, float], None]:
    """client-go's ``rest_client_requests_total{code,host,method}`` and
    ``rest_client_request_duration_seconds{host,verb}``, the label children resolved once each."""
    counts: dict[tuple[str, str], Any] = {}
    durations: dict[str, Any] = {}

    def on_response(method: str, status: int | None, seconds: float) -> None:
        code = str(status) if status is not None else "<error>"
        c = counts.get((code, method))
        if c is None:
            c = counts[(code, method)] = metrics.rest_client_requests.labels(code, host, method)
        c.inc()
        d = durations.get(method)
        if d is None:
            d = durations[method] = metrics.rest_client_request_duration.labels(host, method)
        d.observe(seconds)
    return on_response


def find_operator_dir() -> Path:
    """``$KOPF_SCHEDULER_OPERATOR_DIR``; the checkout's ``operator/`` (editable installs: this file is
    ``scheduler/app/runtime.py``); the copy a wheel or ``pip install .`` puts under
    ``<prefix>/share/kopf-scheduler/operator`` (pyproject's data-files; the prefix of a ``--user``
    install too); or ``/app/operator`` (the container image)."""
    shipped = [Path(sysconfig.get_path("data", scheme)) / "share" / "kopf-scheduler" / "operator"
               for scheme in dict.fromkeys([sysconfig.get_default_scheme(), f"{os.name}_user"])
               if scheme in sysconfig.get_scheme_names()]
    candidates = [os.environ.get("KOPF_SCHEDULER_OPERATOR_DIR", ""),
                  str(Path(__file__).resolve().parents[2] / "operator"),
                  str(Path(sys.prefix) / "share" / "kopf-scheduler" / "operator"), *map(str, shipped), "/app/operator"]
    for c in candidates:
        if c and (Path(c) / "main.py").exists():
            return Path(c)
    raise FileNotFoundError("the operator/ handler scripts were not found (looked in: "
                            + ", ".join(c for c in candidates if c) + "); set KOPF_SCHEDULER_OPERATOR_DIR")


def raise_open_file_limit() -> tuple[int, int]:
    """Raise the soft open-file limit to the hard one, as the Go runtime does at start (since Go
    1.19). At the common soft limit of 1,024, a burst of idle connections could exhaust the
    descriptors, and then ``/healthz`` could not even accept its probe. Returns (soft, hard)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft != hard:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError) as e:
            log.warning("cannot raise the open-file limit from %d to %d: %s", soft, hard, e)
    return soft, hard


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


class OperatorRuntime:
    def __init__(self, config: KubeConfig, *, http_addresses: Iterable[tuple[str, int]] = (),
                 seed: int | None = None, series_interval: float = 30.0,
                 leader_election: dict[str, Any] | None = None, request_timeout: float = 30.0,
                 secure_serving: SecureServing | None = None, qps: float | None = None,
                 burst: int | None = None, decision_records: int = DEFAULT_CAPACITY,
                 decision_top_nodes: int = DEFAULT_TOP_NODES,
                 feature_gates: Mapping[str, bool] | None = None,
                 explanation_qps: float = DEFAULT_QPS, explanation_burst: int = DEFAULT_BURST) -> None:
        self.config = config
        self.secure_serving = secure_serving
        self.api = KubeClient(config, limit=128, timeout=request_timeout, qps=qps, burst=burst)
        self.client = ApiSchedulerClient(self.api, series_interval=series_interval)
        # A binding cycle may outlast one request timeout (a PreBind write, then the Binding), not two.
        self.service = SchedulerService(self.client, seed=seed, binding_timeout=2 * request_timeout,
                                        metrics=Metrics(process=True), decision_records=decision_records,
                                        decision_top_nodes=decision_top_nodes, extender_factory=http_extender,
                                        feature_gates=feature_gates)
        self.api.on_response = _rest_client_metrics(self.service.metrics, urlparse(config.server).netloc)
        self.http_addresses = list(http_addresses)
        self._tasks: set[asyncio.Future[None]] = set()
        self.elector: LeaderElector | None = None
        self._catching_up: asyncio.Future[None] | None = None     # a new leader's informers catching up
        if leader_election is not None:
            self.elector = LeaderElector(self.api, on_change=self._leadership, **leader_election)
            # The fence: asked before every Binding and PreBind write (in the core, and again by the
            # client right before it sends), so a replica that froze past its renew deadline never
            # binds on a lease another replica may hold by now.
            self.service.lease_valid = self.elector.holds
            self.client.fence = self.service.is_leader
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
        self.stall_after = STALL_AFTER
        self.restart_backoff = (BACKOFF_INITIAL, BACKOFF_CAP)
        # SchedulingProfile events into the service, and its verdicts into the CRs' status
        # (``profile_status.py``), on the worker loop, which owns the API session.
        self.profile_follower = ProfileFollower(self.service, self.api, self.client, spawner(self._tasks))
        # The informers of the worker loop (``informers.py``), one per kind the service reads, as
        # ``watched_kinds`` lists them (``kinds.py``: the list ``explain`` reads too). A cluster may
        # serve neither storage nor DRA kinds, nor the CRD (404): those informers are optional.
        # Pods, nodes and profiles go through the runtime's own wrappers (an unreadable object is
        # reported; profile statuses are written); every other kind to the service's handler.
        self.kinds = watched_kinds(feature_gates)
        own: dict[str, Callable[[str, dict[str, Any]], None]] = {
            "pods": self.pod_event, "nodes": self.node_event, PLURAL: self.profile_follower.on_event}
        # The pod informer tells which pods went away by the uids the service knows.
        by_uid: dict[str, Any] = {"known": self.service.known_pod_uids, "key": _pod_uid, "tombstone": _pod_tombstone}
        self.informers: dict[str, Informer] = {
            k.key: Informer(self.api, k.name, k.path, k.handler_for(self.service, own), optional=k.optional,
                            watch_timeout=WATCH_TIMEOUT, **(by_uid if k.key == "pods" else {}))
            for k in self.kinds}
        # SchedulingExplanations (``explanations.py``): not a kind the scheduler reads for its cache
        # (``explain`` does not list them), but an informer of the same kind, whose events feed the
        # controller the leader answers them with. Optional: a cluster without the CRD has none.
        self.explanations = ExplanationController(self.service, self.api, qps=explanation_qps,
                                                  burst=explanation_burst)
        self.informers[EXPLANATIONS] = Informer(self.api, EXPLANATIONS, explanations_path(),
                                                self.explanations.on_event, optional=True,
                                                watch_timeout=WATCH_TIMEOUT)
        self.sync_order: tuple[str, ...] = (*(k.key for k in self.kinds), EXPLANATIONS)
        informer_components = [Component(_component_name(name), stall_after=WATCH_TIMEOUT + 30 + STALL_AFTER)
                               for name in self.informers]
        self.components = {c.name: c for c in (
            Component("worker"), *informer_components, Component("shadow-status"), Component("explanations"),
            Component("kopf"),
            *([Component("leader-election")] if self.elector is not None else []))}
        for name, informer in self.informers.items():
            informer.on_beat = partial(setattr, self.components[_component_name(name)], "beat")
        self.synced_kinds: set[str] = set()
        self.sync_errors: dict[str, str] = {}
        self._unreadable_pods: dict[str, str] = {}
        self._unreadable_nodes: dict[str, str] = {}
        # Set when the worker thread itself ends (not one of its loops, which restart): Kopf stops,
        # and ``kopf-scheduler run`` exits non-zero so Kubernetes restarts the container.
        self.fatal = threading.Event()
        # The flag ``run_kopf`` stops Kopf by (it relays it into Kopf's own loop, see there).
        self.kopf_stop: concurrent.futures.Future[None] = concurrent.futures.Future()
        self.service.health = self.health
        self.service.readiness = self.readiness
        # "thread" (the default) or "task": the worker as a task in Kopf's own loop. "task" exists to
        # measure the choice (BENCHMARKS.md); it serves no HTTP endpoints.
        self.worker_mode = os.environ.get("KOPF_SCHEDULER_WORKER", "thread")

    # ---- the worker thread ----------------------------------------------------------------------
    def start(self) -> None:
        if self.worker_mode == "task":
            return                   # started by Kopf's startup handler, in Kopf's loop
        def main() -> None:
            loop = new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            try:
                loop.run_until_complete(self._main())
            except ServingError as e:    # a clear one-liner: the main thread prints it and exits 1
                self.failed = e
                self.synced.set()
            except BaseException as e:   # surfaced to the main thread, which exits non-zero
                self.failed = e
                log.exception("the scheduling worker stopped")
                self.synced.set()
            finally:
                if self._stop is None or not self._stop.is_set():
                    self.failed = self.failed or RuntimeError("the scheduling worker thread ended")
                    self.fatal.set()
                    self.release_kopf_stop()
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
            self.service, self.http_addresses if self.worker_mode == "thread" else [],
            secure=self.secure_serving, api=self.api)
        stop = self._stop
        await self.initial_sync(stop)
        if stop.is_set():
            await self._runner.cleanup()
            return
        self.service.synced = True
        self.synced.set()
        loops = [*(asyncio.ensure_future(self.supervise(self.components[_component_name(name)], informer.run, stop))
                   for name, informer in self.informers.items()),
                 asyncio.ensure_future(self.supervise(self.components["shadow-status"], self.write_shadow_statuses,
                                                      stop)),
                 asyncio.ensure_future(self.supervise(self.components["explanations"], self.explanations.run, stop))]
        elector: asyncio.Future[None] | None = None
        elector_stop = asyncio.Event()
        if self.elector is not None:
            # The elector steps down as it dies (its own ``finally``), so a restart is safe. It stops
            # after the worker: the lease is released only once no binding cycle can still write.
            elector = asyncio.ensure_future(self.supervise(self.components["leader-election"], self.elector.run,
                                                           elector_stop))
        try:
            await self.supervise(self.components["worker"], self.service.run_worker, stop)
        finally:
            # A graceful stop: the worker took no new pod once ``stop`` was set and waited (at most
            # ``service.drain_timeout``) for its binding cycles; now the lease is released, then
            # the informers end (cancelled: nothing of theirs needs finishing).
            elector_stop.set()
            if elector is not None and self.elector is not None:
                _, late = await asyncio.wait([elector], timeout=self.elector.renew_deadline + 1)
                for task in late:
                    task.cancel()
            for task in loops:
                task.cancel()
            await asyncio.wait(loops, timeout=5)
            await self._runner.cleanup()

    async def supervise(self, comp: Component, run: Callable[[asyncio.Event], Awaitable[None]],
                        stop: asyncio.Event) -> None:
        """Run one of the worker thread's loops until ``stop``; restart it in-process, with jittered
        backoff, whenever it dies. Every loop is safe to restart: the informer resumes from its last
        resourceVersion, the worker finds its bindings on the service, the elector campaigns again.
        While it is down, ``/healthz`` fails and names it, so a loop that keeps dying gets the process
        restarted by its liveness probe."""
        backoff = Backoff(*self.restart_backoff)
        while not stop.is_set():
            started = time.monotonic()
            comp.up(started)
            try:
                await run(stop)
                if stop.is_set():
                    return
                raise RuntimeError("it returned while the scheduler was running")
            except asyncio.CancelledError:
                raise
            except Exception as e:
                comp.died(e, time.monotonic())
                log.error("%s died; restarting it in-process: %s: %s", comp.name, type(e).__name__, e, exc_info=e)
            if time.monotonic() - started > BACKOFF_RESET:
                backoff.reset()
            await _sleep_unless(stop, backoff.next())
            if not stop.is_set():
                comp.restarts += 1
                self.service.metrics.component_restarts.labels(comp.name).inc()

    # ---- health ---------------------------------------------------------------------------------
    def health(self) -> dict[str, str | None]:
        """``/healthz``: each check's problem, or None. Upstream's healthz has the leader-election
        watchdog; this adds one check per loop of the worker thread (dead, or stalled)."""
        now = time.monotonic()
        checks: dict[str, str | None] = {"ping": None}
        for comp in self.components.values():
            checks[comp.name] = comp.problem(now)
        checks["worker"] = checks["worker"] or _stalled(now - self.service.worker_beat, self.stall_after)
        overdue = self.service.binding_overdue()
        if overdue > self.stall_after:
            checks["binding"] = f"a binding cycle is {overdue:.0f} s past its deadline"
        else:
            checks["binding"] = None
        if self.elector is not None:
            checks["leaderElection"] = self.elector.watchdog(now)
        return checks

    def readiness(self) -> dict[str, str | None]:
        """``/readyz``: each informer's initial list, and the last error that held it up."""
        return {f"informer-sync:{kind}": None if kind in self.synced_kinds else
                (f"not synced: {self.sync_errors[kind]}" if kind in self.sync_errors else "not synced yet")
                for kind in self.sync_order}

    # ---- leadership -----------------------------------------------------------------------------
    def _leadership(self, leading: bool) -> None:
        """Called on the worker loop when the lease is won or lost. Won: the replica acts as leader
        (``service.leader``) only once its informers of ``CATCH_UP_KINDS`` have caught up with the
        API (``_lead_once_caught_up``). Lost: at once."""
        assert self.elector is not None
        m = self.service.metrics
        m.leader_status.labels(self.elector.name).set(1 if leading else 0)
        m.leader_transitions.labels(self.elector.name, "acquired" if leading else "lost").inc()
        if self._catching_up is not None:
            self._catching_up.cancel()
            self._catching_up = None
        if not leading:
            self.service.leader = False
            return
        task = self._catching_up = asyncio.ensure_future(self._lead_once_caught_up())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _lead_once_caught_up(self) -> None:
        """Lead, once the informers the leader's writes depend on hold at least the API's state as
        of now (``Informer.catch_up``: a fresh List, applied in order with the watch).

        The lease says no other replica binds any more, not that this replica has seen what the last
        one bound. After a graceful hand-over the standby takes the lease within milliseconds of
        the last Binding, while its own pod watch may lag (a slow stream, a watch resuming after a
        503): it would still hold those pods as pending, schedule them again, and only the API's
        409 ("already assigned") would stop the second bind. Meanwhile it schedules nothing, and
        its fence refuses every Binding."""
        started = time.monotonic()
        await asyncio.gather(*(self.informers[k].catch_up() for k in CATCH_UP_KINDS if k in self.informers))
        if self.elector is None or not self.elector.leading:
            return
        log.info("leading: the informers caught up with the API in %.3f s", time.monotonic() - started)
        self.service.leader = True
        self._catching_up = None
        # A standby compiled every profile but wrote no status: the new leader does.
        self.explanations.requeue_all()
        await self.write_profile_statuses()

    def leader_info(self) -> str:
        if self.elector is None:
            return "leader election: off"
        e = self.elector
        return (f"leader election: lease {e.namespace}/{e.name}, holder {e.holder or '<none>'}, "
                f"this replica {e.identity} is {'leading' if e.leading else 'standby'}, "
                f"lease transitions {e.transitions}")

    async def write_profile_statuses(self) -> None:
        """The leader writes every profile's status (a standby wrote none)."""
        self.profile_follower.write_all()

    async def write_shadow_statuses(self, stop: asyncio.Event, period: float = SHADOW_STATUS_PERIOD) -> None:
        """Every ``period``, the leader writes each shadow profile's ``status.shadow`` that changed
        (counts and last differences), and removes it from a CR that stopped being a shadow. A failed
        write is retried with the next change; a standby writes nothing."""
        while not stop.is_set():
            await _sleep_unless(stop, period)
            if not self.service.leader:
                continue
            for name, body in self.service.take_shadow_updates().items():
                try:
                    await self.api.request("PATCH", profiles_path(name, "status"), {"status": {"shadow": body}},
                                           content_type="application/merge-patch+json")
                except ClientError as e:
                    log.warning("cannot write the shadow status of profile %s: %s", name, e)

    async def initial_sync(self, stop: asyncio.Event | None = None) -> None:
        """Each informer's first list, before the first scheduling cycle; its watch (``run``) goes on
        from that list's resourceVersion.

        Each kind is an informer of its own, as in client-go: listed concurrently, retried on its own
        with the reflector's backoff (0.8 s doubling to 30 s, jitter 1.0), and applied as soon as it
        arrives. One failing list neither restarts the others nor throws away what they synced, and
        ``/readyz`` names the kinds still missing. Any arrival order is safe: the cache keeps a pod
        whose node is not known yet on a placeholder row, and a pod whose profile is not known yet is
        parked until it is.
        """
        stop = stop or asyncio.Event()

        async def sync(kind: str) -> None:
            informer = self.informers[kind]
            listing = await self._list_until_synced(kind, informer.list, stop)
            if listing is not None:
                informer.apply_listing(listing)
                self.synced_kinds.add(kind)
                if kind == PLURAL and not informer.served:
                    log.warning("the SchedulingProfile CRD is not installed: kubectl apply -f crds/")
        await asyncio.gather(*(sync(kind) for kind in self.sync_order))

    def apply_profiles(self, profiles: list[dict[str, Any]]) -> None:
        """Deliver SchedulingProfiles as ADDED events (the profile informer's path), on the worker loop."""
        for p in profiles:
            self.profile_follower.on_event("ADDED", p)

    async def _list_until_synced(self, kind: str, fetch: Callable[[], Awaitable[Any]], stop: asyncio.Event) -> Any:
        backoff = Backoff()
        while not stop.is_set():
            try:
                listing = await fetch()
                if not isinstance(listing, dict) or not isinstance(listing.get("items"), list):
                    raise ClientError(f"the {kind} list is not a List")
                self.sync_errors.pop(kind, None)
                return listing
            except ClientError as e:
                delay = backoff.next()
                self.sync_errors[kind] = str(e)
                log.warning("initial list of %s failed, retrying in %.1f s: %s", kind, delay, e)
                await _sleep_unless(stop, delay)
        return None

    async def relist_pods(self) -> None:
        """List every pod into the service; pods it knew that are gone are replayed as DELETED."""
        await self.informers["pods"].relist()

    def pod_event(self, event: str, body: dict[str, Any]) -> None:
        """Feed a pod event to the service. No pod can stop the informer: one the scheduler cannot
        read (or whose handling fails) is logged once, counted in ``kopf_scheduler_unreadable_objects``,
        and, if it is ours and unbound, gets an Event and ``PodScheduled=False``, posted from the
        worker loop that owns the API session."""
        meta = body.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        try:
            self.service.on_pod(event, body)
        except Exception as e:
            spec = body.get("spec") or {}
            spec = spec if isinstance(spec, dict) else {}
            msg = (f"the scheduler cannot read this pod: {e}" if isinstance(e, ParseError)
                   else f"the scheduler cannot handle this pod: {type(e).__name__}: {e}")
            if self._unreadable_pods.get(uid) == msg:
                return                  # the same problem again (e.g. our own status patch echoed back)
            self._unreadable_pods[uid] = msg
            while len(self._unreadable_pods) > MAX_REMEMBERED:
                self._unreadable_pods.pop(next(iter(self._unreadable_pods)))
            self.service.metrics.unreadable_objects.labels("Pod").set(len(self._unreadable_pods))
            log.warning("pod %s/%s: %s", meta.get("namespace"), meta.get("name"), msg,
                        exc_info=None if isinstance(e, ParseError) else e)
            if not spec.get("nodeName") and self.service.profiles.owner_of(
                    str(spec.get("schedulerName", "default-scheduler"))) is not None:
                self.submit(self.client.report_invalid(str(meta.get("namespace")), str(meta.get("name")), uid,
                                                       str(spec.get("schedulerName")), msg))
            return
        if self._unreadable_pods.pop(uid, None) is not None:     # readable again, or deleted
            self.service.metrics.unreadable_objects.labels("Pod").set(len(self._unreadable_pods))

    def node_event(self, event: str, body: dict[str, Any]) -> None:
        """Feed a node event to the service (the node informer, from its initial list on). A node that
        cannot be read keeps its last readable state in the cache; it is logged and gets a Warning
        Event once per distinct problem, and counts in ``kopf_scheduler_unreadable_objects``."""
        name = str((body.get("metadata") or {}).get("name", ""))
        try:
            self.service.on_node(event, body)
        except ParseError as e:
            msg = f"the scheduler cannot read this node, and keeps its last readable state: {e}"
            if self._unreadable_nodes.get(name) != msg:
                self._unreadable_nodes[name] = msg
                log.warning("node %s: %s", name, msg)
                self.submit(self.node_warning(body, msg))
            self.service.metrics.unreadable_objects.labels("Node").set(len(self._unreadable_nodes))
            return
        if self._unreadable_nodes.pop(name, None) is not None:
            self.service.metrics.unreadable_objects.labels("Node").set(len(self._unreadable_nodes))

    async def node_warning(self, node: dict[str, Any], message: str) -> None:
        meta = node.get("metadata") or {}
        await self.client.cluster_event("v1", "Node", str(meta.get("name", "")), str(meta.get("uid", "")),
                                        "Warning", "FailedToReadNode", "Scheduling", message)

    def release_kopf_stop(self) -> None:
        """Resolve Kopf's stop flag (thread-safe, idempotent): Kopf stops, or has stopped."""
        with contextlib.suppress(concurrent.futures.InvalidStateError):
            self.kopf_stop.set_result(None)

    def submit(self, coro: Any) -> None:
        """Run a coroutine on the worker loop (from Kopf's thread), fire and forget."""
        if self._loop is not None:
            asyncio.run_coroutine_threadsafe(coro, self._loop)

    def stop(self) -> None:
        """Stop gracefully and wait for it: the worker takes no new pod, waits for its binding
        cycles (at most ``service.drain_timeout``), the lease is released, the loops end."""
        if self._loop is not None and self._stop is not None and not self._loop.is_closed():
            self._loop.call_soon_threadsafe(self._stop.set)
        if self._thread is not None:
            self._thread.join(timeout=30)

    def run_until(self, terminate: threading.Event) -> None:
        """``kopf-scheduler run``'s main thread, once the worker is ready: Kopf runs in a thread of
        its own while this thread waits for ``terminate`` (SIGTERM, SIGINT) or for the worker
        thread's end. Then both stop at once, the worker's graceful stop (``stop``: drain, release
        the lease) alongside Kopf's. Kopf is given ``KOPF_STOP_TIMEOUT`` to finish; its thread is a
        daemon, so a Kopf that hangs in its stop cannot hold the exit, or the hand-over, up."""
        logging.getLogger("kopf._core.reactor.running").addFilter(_signals_are_ours)
        kopf_thread = threading.Thread(target=self.run_kopf, args=(self.kopf_stop,), name="kopf", daemon=True)
        kopf_thread.start()
        try:
            while kopf_thread.is_alive() and not terminate.wait(0.1):
                pass
        finally:
            self.release_kopf_stop()
            self.stop()
            kopf_thread.join(timeout=KOPF_STOP_TIMEOUT)
            if kopf_thread.is_alive():
                log.warning("Kopf did not stop within %.0f s; exiting without it", KOPF_STOP_TIMEOUT)

    # ---- Kopf -----------------------------------------------------------------------------------
    def run_kopf(self, stop_flag: threading.Event | concurrent.futures.Future[None]) -> None:
        """Run Kopf's operator on this thread until ``stop_flag`` is set, and start it again whenever
        it dies.

        Kopf returns only when told to stop (the flag, or SIGINT/SIGTERM on the main thread), and
        raises when it crashed. A crash of its orchestrator alone (one dead watcher) also ends it
        with that exception, as Kopf then stops its other root tasks; but it could not end while it waited on a
        thread-blocking flag (Kopf waits on a ``threading.Event`` or a ``concurrent`` future in an
        executor thread, which ``asyncio.run`` then joins for ever), so Kopf gets an asyncio future
        of its own run's loop, raised from ``stop_flag``. Each restart reloads the handlers into a
        fresh registry on a fresh event loop; the handlers are idempotent (a profile is compiled
        again, an object listed again)."""
        comp = self.components["kopf"]
        backoff = Backoff(*self.restart_backoff)

        def stopped() -> bool:
            return stop_flag.done() if isinstance(stop_flag, concurrent.futures.Future) else stop_flag.is_set()

        while not stopped():
            started = time.monotonic()
            comp.up(started)
            try:
                asyncio.run(self._kopf_once(stopped))
                return                       # the flag, or SIGINT/SIGTERM: Kopf was told to stop
            except Exception as e:
                comp.died(e, time.monotonic())
                if stopped():
                    log.warning("Kopf failed while stopping: %s: %s", type(e).__name__, e)
                    return
                log.error("Kopf died; restarting it in-process: %s: %s", type(e).__name__, e, exc_info=e)
            if time.monotonic() - started > BACKOFF_RESET:
                backoff.reset()
            deadline = time.monotonic() + backoff.next()
            while time.monotonic() < deadline and not stopped():
                time.sleep(0.1)
            if stopped():
                return
            comp.restarts += 1
            self.service.metrics.component_restarts.labels(comp.name).inc()

    async def _kopf_once(self, stopped: Callable[[], bool]) -> None:
        import kopf
        flag: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def relay() -> None:          # the caller's flag into this loop's future
            while not stopped():
                await asyncio.sleep(0.2)
            if not flag.done():
                flag.set_result(None)
        relay_task = asyncio.ensure_future(relay())
        try:
            await kopf.operator(**self.kopf_kwargs(stop_flag=flag))
        finally:
            relay_task.cancel()

    def kopf_kwargs(self, stop_flag: Any = None, ready_flag: Any = None) -> dict[str, Any]:
        import kopf
        _, registry = _load(find_operator_dir())
        return {"clusterwide": True, "standalone": True, "memo": kopf.Memo(runtime=self, service=self.service),
                "stop_flag": stop_flag, "ready_flag": ready_flag, "registry": registry}
