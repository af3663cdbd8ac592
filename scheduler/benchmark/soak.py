"""``kopf-scheduler soak``: hours of a bad day in minutes; the proof that no pod is lost or bound twice.

Processes, all on 127.0.0.1 (``processes`` starts and stops them):

* the simulated cluster (``kopf-scheduler cluster``) answering ``error_rate`` of all requests with
  503 (with Retry-After), optionally adding ``latency`` to every request and cutting each delivered
  watch event's connection with probability ``drop_watch``;
* two operator replicas (``kopf-scheduler run --leader-elect``, short lease timings);
* this driver, which creates ``pods`` pods at ``rate`` per second, deletes a share of the bound ones
  again, adds and removes nodes, and every ``kill_every`` seconds SIGKILLs whichever replica leads
  (asking each replica's ``/readyz``) and starts a fresh one in its place. With ``graceful_every``
  it SIGTERMs the leader instead, every that many seconds (a rolling update): the leader drains,
  releases its Lease and exits, and the standby takes over.

The driver's own requests retry through the injected errors. It watches pods to timestamp each
bind (creation → bind latency). At the end it waits for every remaining pod to be bound, then reads
the cluster's binding audit (``/debug/binds``: successful bindings per pod uid, and bindings refused
because the pod was bound already) and reports:

``lost``          pods created, never deleted by the driver, and not bound at the end;
``doubleBound``   pods bound more than once, plus bindings refused as "already assigned";
``doubleBoundPods`` the first of them: each refusal (pod, the node it is on, the node asked for),
                  and the uid of each pod bound more than once;
``bindLatencyP99Seconds``, ``peakRssBytes`` (the largest ``VmHWM`` of any replica), ``leaderKills``;
``failoverSeconds``: for each kill (or SIGTERM), the time until a replica's ``/readyz`` said it
leads again (``failoverSecondsMax`` the worst of them).

With ``graceful_every``, from the Lease as the driver watches it (each record's own microtimes,
written by replicas on this host's clock): ``gracefulStops``; ``handOverSeconds``, for each release
record (no holder) the time from its ``renewTime`` to the next holder's ``acquireTime``
(``handOverSecondsP99``, ``handOverSecondsMax``); ``stopToLeaderSeconds``, from the SIGTERM to that
``acquireTime``; ``gracefulExitSeconds``, from the SIGTERM to the process's exit
(``gracefulExitSecondsMax``), and ``gracefulExitFailures``, exits with a non-zero code;
``releasesUnseen``, SIGTERMs after which no release record was seen (the lease expired instead, or
the watch missed it).
"""

from __future__ import annotations

import asyncio
import calendar
import contextlib
import math
import random
import signal
import subprocess
import tempfile
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from scheduler.benchmark import processes
from scheduler.benchmark.templates import make_node
from scheduler.errors import ClientError, ConflictError, NotFoundError
from scheduler.kubeapi import KubeClient, load_config
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path

__all__ = ["run_soak"]

Obj = dict[str, Any]
LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
LEASE_NAME = "kopf-scheduler"


def _wall(micro: str | None) -> float | None:
    """A Lease MicroTime (``2026-01-02T03:04:05.123456Z``) as seconds since the epoch."""
    if not micro:
        return None
    whole, _, frac = micro.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(whole, "%Y-%m-%dT%H:%M:%S")) + float(f"0.{frac or 0}")


def _p99(values: list[float]) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(len(ordered) * 0.99) - 1, 0)]


class _Replica:
    def __init__(self, kubeconfig: Path, log_dir: Path, n: int) -> None:
        self.port = processes.free_port()
        self.log = (log_dir / f"replica-{n}.log").open("w")
        self.proc = subprocess.Popen(
            processes.cli("run", "--kubeconfig", str(kubeconfig), "--metrics-bind-address", f"127.0.0.1:{self.port}",
                          *processes.SCHEDULER_PERF_CLIENT, "--leader-elect", "--leader-elect-lease-duration", "4s",
                          "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms",
                          "--leader-elect-resource-namespace", "default"),
            stdout=self.log, stderr=subprocess.STDOUT, text=True)
        self.peak = 0

    def leading(self) -> bool:
        return self.identity() is not None

    def identity(self) -> str | None:
        """This replica's identity if its ``/readyz`` says it leads, else None."""
        text = self._readyz()
        if "is leading" not in text or "this replica " not in text:
            return None
        return text.split("this replica ", 1)[1].split(" is leading", 1)[0]

    def standing_by(self) -> bool:
        """Ready (``/readyz`` answers 200: synced) and standing by, as a rolling update waits for the
        new pod's readiness before it stops an old one."""
        return self.proc.poll() is None and "is standby" in self._readyz(ready=True)

    def _readyz(self, ready: bool = False) -> str:
        try:
            status, text = processes.served(self.port, "/readyz", timeout=2)
        except OSError:
            return ""
        return text if status == 200 or not ready else ""

    def sample(self) -> None:
        if self.proc.poll() is None:
            self.peak = max(self.peak, processes.peak_rss(self.proc.pid))


async def _retry(call: Any, attempts: int = 20) -> Any:
    """The driver's own requests, through the injected errors (honouring Retry-After)."""
    for i in range(attempts):
        try:
            return await call()
        except (ConflictError, NotFoundError):
            raise
        except ClientError as e:
            if e.status and e.status < 500 and e.status != 429:
                raise
            await asyncio.sleep(e.retry_after or min(0.05 * 2**i, 1.0))
    return await call()


def _pod(name: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "soak"},
            "spec": {"schedulerName": "default-scheduler", "terminationGracePeriodSeconds": 0,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10.1",
                                     "resources": {"requests": {"cpu": "100m", "memory": "100Mi"}}}]}}


async def _run(pods: int, nodes: int, rate: float, delete_share: float, kill_every: float, error_rate: float,
               seed: int, time_limit: float, home: Path, latency: str, drop_watch: float,
               graceful_every: float | None = None) -> dict[str, Any]:
    kubeconfig = home / "kubeconfig"
    faults = [f"error:*:*={error_rate}/503"] if error_rate else []
    faults += [f"latency={latency}"] if latency else []
    faults += [f"drop-watch={drop_watch}"] if drop_watch else []
    cluster, _ = processes.start_cluster(kubeconfig, faults=faults)
    soak = _Soak(kubeconfig, home, random.Random(seed), bool(graceful_every))
    try:
        async with KubeClient(load_config(str(kubeconfig)), limit=72, timeout=30) as api:
            await _setup(api, nodes)
            soak.replicas = [_Replica(kubeconfig, home, 0), _Replica(kubeconfig, home, 1)]
            listing = await _retry(lambda: api.request("GET", "/api/v1/namespaces/soak/pods"))
            soak.rv = listing["metadata"]["resourceVersion"]
            watcher = asyncio.create_task(soak.watch_pods(api))
            lease_watcher = asyncio.create_task(soak.watch_lease(api))
            # The kills are timed from the first leader, not from the replicas' start: a replica's
            # start (imports, informers listing through the injected errors) varies with the
            # machine's load, and a kill schedule that runs out before anyone leads kills nobody.
            await _first_leader(soak.replicas, time.monotonic() + min(60.0, time_limit))
            start = time.monotonic()
            deadline = start + time_limit
            await soak.drive(api, pods, rate, delete_share, graceful_every or kill_every, start, deadline)
            await soak.settle(deadline)
            for task in (watcher, lease_watcher):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            audit = await _retry(lambda: api.request("GET", "/debug/binds"))
            for r in soak.replicas:
                r.sample()
    finally:
        for r in soak.replicas:
            processes.stop(r.proc)
        processes.stop(cluster)
    out = soak.report(audit, start)
    out.update(errorRate=error_rate, latency=latency or None, dropWatch=drop_watch)
    return {k: out[k] for k in _REPORT_KEYS}


# The report's keys, in the order it has always listed them.
_REPORT_KEYS = (
    "pods", "deleted", "bound", "lost", "doubleBound", "bindLatencyP99Seconds", "peakRssBytes", "leaderKills",
    "failoverSeconds", "failoverSecondsMax", "errorRate", "latency", "dropWatch", "seconds", "lostPods",
    "gracefulStops", "handOverSeconds", "handOverSecondsP99", "handOverSecondsMax", "stopToLeaderSeconds",
    "gracefulExitSeconds", "gracefulExitSecondsMax", "gracefulExitFailures", "releasesUnseen", "doubleBoundPods")


async def _first_leader(replicas: list[_Replica], deadline: float) -> None:
    """Wait until a replica says it leads (``/readyz``), or ``deadline``."""
    loop = asyncio.get_running_loop()
    while time.monotonic() < deadline:
        leading = await loop.run_in_executor(None, lambda: any(r.leading() for r in replicas))
        if leading:
            return
        await asyncio.sleep(0.1)


async def _setup(api: KubeClient, nodes: int) -> None:
    """The CRD, the default profile, the soak namespace and the nodes."""
    await _retry(lambda: api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd()))
    await _retry(lambda: api.request("POST", profiles_path(),
                                     {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "default"},
                                      "spec": {"schedulerName": "default-scheduler"}}))
    await _retry(lambda: api.request("POST", "/api/v1/namespaces", {
        "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "soak"}}))
    for i in range(nodes):
        node = make_node(f"node-{i}")
        await _retry(lambda node=node: api.request("POST", "/api/v1/nodes", node))


class _Soak:
    """One soak run's state: the replicas, the pods created, bound and deleted, the leader kills or
    graceful stops with the failovers they caused, and the Lease's records."""

    def __init__(self, kubeconfig: Path, home: Path, rng: random.Random, graceful: bool) -> None:
        self.kubeconfig = kubeconfig
        self.home = home
        self.rng = rng
        self.graceful = graceful
        self.replicas: list[_Replica] = []
        self.created: dict[str, float] = {}       # name -> creation time
        self.bound_at: dict[str, float] = {}
        self.deleted: set[str] = set()
        self.kills = 0
        # Graceful stops: (wall time of the SIGTERM, the leader's identity); exits: (seconds, code).
        self.stops: list[tuple[float, str]] = []
        self.exits: list[tuple[float, int]] = []
        self.lease_records: list[tuple[str, float | None, float | None]] = []   # (holder, renewTime, acquireTime)
        self.waiters: set[asyncio.Task[None]] = set()
        self.failovers: list[float] = []
        self.killed_at: float | None = None
        self.extra_nodes = 0
        self.rv = ""
        self.sem = asyncio.Semaphore(48)

    def check_failover(self) -> None:
        if self.killed_at is not None and any(r.proc.poll() is None and r.leading() for r in self.replicas):
            self.failovers.append(time.monotonic() - self.killed_at)
            self.killed_at = None

    async def exited(self, proc: subprocess.Popen[str], signalled: float) -> None:
        code = await asyncio.to_thread(proc.wait)
        self.exits.append((time.monotonic() - signalled, code))

    async def watch_pods(self, api: KubeClient) -> None:
        """When each pod was first seen bound (relisting on 410)."""
        bound_at = self.bound_at
        while True:
            try:
                async for kind, obj in api.watch("v1", "Pod", namespace="soak", resource_version=self.rv,
                                                 params={"allowWatchBookmarks": "true"}):
                    self.rv = obj["metadata"].get("resourceVersion") or self.rv
                    name = obj["metadata"].get("name", "")
                    if kind != "DELETED" and obj.get("spec", {}).get("nodeName") and name not in bound_at:
                        bound_at[name] = time.monotonic()
            except ClientError as e:
                if e.status == 410:
                    listing = await _retry(lambda: api.request("GET", "/api/v1/namespaces/soak/pods"))
                    for p in listing["items"]:
                        if p["spec"].get("nodeName") and p["metadata"]["name"] not in bound_at:
                            bound_at[p["metadata"]["name"]] = time.monotonic()
                    self.rv = listing["metadata"]["resourceVersion"]
                await asyncio.sleep(0.05)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)

    async def watch_lease(self, api: KubeClient) -> None:
        """Every change of the Lease's holder, renewTime or acquireTime."""
        lease_rv: str | None = None
        records = self.lease_records
        while True:
            try:
                async for kind, obj in api.watch_path(LEASES, resource_version=lease_rv,
                                                      params={"fieldSelector": f"metadata.name={LEASE_NAME}"}):
                    lease_rv = obj["metadata"].get("resourceVersion") or lease_rv
                    if kind in ("ADDED", "MODIFIED"):
                        spec = obj.get("spec") or {}
                        record = (str(spec.get("holderIdentity") or ""), _wall(spec.get("renewTime")),
                                  _wall(spec.get("acquireTime")))
                        if not records or records[-1] != record:
                            records.append(record)
            except ClientError as e:
                if e.status == 410:
                    lease_rv = None
                await asyncio.sleep(0.05)
            except (OSError, TimeoutError):
                await asyncio.sleep(0.05)

    async def create(self, api: KubeClient, name: str) -> None:
        async with self.sem:
            with contextlib.suppress(ConflictError):
                await _retry(lambda: api.request("POST", "/api/v1/namespaces/soak/pods", _pod(name)))
            self.created[name] = time.monotonic()

    async def delete(self, api: KubeClient, name: str) -> None:
        async with self.sem:
            with contextlib.suppress(NotFoundError):
                await _retry(lambda: api.request("DELETE", f"/api/v1/namespaces/soak/pods/{name}"))

    async def drive(self, api: KubeClient, pods: int, rate: float, delete_share: float, every: float,
                    start: float, deadline: float) -> None:
        """Create the pods at ``rate``, and churn: delete a share of what is bound, add and remove
        nodes, kill (or stop) the leader every ``every`` seconds."""
        next_kill = start + every
        next_node_churn = start + 5.0
        tasks: set[asyncio.Task[None]] = set()
        i = 0
        while i < pods and time.monotonic() < deadline:
            batch = max(1, int(rate / 10))
            for _ in range(min(batch, pods - i)):
                _spawn(tasks, self.create(api, f"p{i}"))
                i += 1
            # churn: delete a share of what is bound, add and remove nodes, kill the leader
            candidates = [n for n in self.bound_at if n not in self.deleted]
            for name in self.rng.sample(candidates, min(len(candidates), int(batch * delete_share))):
                self.deleted.add(name)
                _spawn(tasks, self.delete(api, name))
            now = time.monotonic()
            if now >= next_node_churn:
                next_node_churn = now + 5.0
                await self.churn_nodes(api)
            self.check_failover()
            if now >= next_kill and self.killed_at is None:
                next_kill = self.stop_leader(now, every)
            for r in self.replicas:
                r.sample()
            await asyncio.sleep(0.1)
        if tasks:
            await asyncio.wait(tasks, timeout=max(1.0, deadline - time.monotonic()))

    async def churn_nodes(self, api: KubeClient) -> None:
        """Add a node, and remove the one added before it."""
        node = make_node(f"extra-{self.extra_nodes}")
        with contextlib.suppress(ClientError):
            await _retry(lambda node=node: api.request("POST", "/api/v1/nodes", node))
            if self.extra_nodes >= 1:
                gone = f"/api/v1/nodes/extra-{self.extra_nodes - 1}"
                await _retry(lambda gone=gone: api.request("DELETE", gone))
        self.extra_nodes += 1

    def stop_leader(self, now: float, every: float) -> float:
        """Kill the leading replica (or SIGTERM it, graceful) and start its replacement; the time
        of the next stop."""
        replicas = self.replicas
        for k, r in enumerate(replicas):
            r.sample()
            identity = r.identity()
            if identity is None:
                continue
            if self.graceful and not any(o.standing_by() for o in replicas if o is not r):
                return now + 0.5    # a rolling update waits for its new pod's readiness
            if self.graceful:           # a rolling update: drain, release, exit
                self.stops.append((time.time(), identity))
                r.proc.send_signal(signal.SIGTERM)
                killed_at = self.killed_at = time.monotonic()
                self.waiters.add(asyncio.create_task(self.exited(r.proc, killed_at)))
            else:
                r.proc.kill()
                r.proc.wait()
                self.killed_at = time.monotonic()
                self.kills += 1
            replicas[k] = _Replica(self.kubeconfig, self.home, len(replicas) + self.kills + len(self.stops))
            replicas.append(r)        # keep it for its peak RSS
            break
        return now + every

    async def settle(self, deadline: float) -> None:
        """Wait until every live pod is bound and the last failover is over, then for the stopped
        replicas' exits and the lease watch's last records."""
        live = set(self.created) - self.deleted
        while time.monotonic() < deadline and (not live <= set(self.bound_at) or self.killed_at is not None):
            for r in self.replicas:
                r.sample()
            self.check_failover()
            await asyncio.sleep(0.2)
        if self.waiters:
            await asyncio.wait(self.waiters, timeout=30)
        await asyncio.sleep(0.5)           # the lease watch's last records

    def report(self, audit: dict[str, Any], start: float) -> dict[str, Any]:
        live = set(self.created) - self.deleted
        lost = sorted(live - set(self.bound_at))
        latencies = sorted(self.bound_at[n] - self.created[n] for n in self.bound_at if n in self.created)
        p99 = latencies[max(math.ceil(len(latencies) * 0.99) - 1, 0)] if latencies else 0.0
        twice = sorted(uid for uid, v in audit["binds"].items() if v > 1)
        double = len(twice) + int(audit["conflicts"])
        refused = [f'{c["pod"]} on {c["boundTo"]}, asked {c["target"]}' for c in audit.get("conflictLog", [])]
        hand_overs, stop_to_leader, unseen = _hand_overs(self.stops, self.lease_records)
        exit_seconds = [e for e, _ in self.exits]
        failovers = self.failovers
        return {"pods": len(self.created), "deleted": len(self.deleted), "bound": len(self.bound_at),
                "lost": len(lost), "doubleBound": double, "bindLatencyP99Seconds": round(p99, 3),
                "peakRssBytes": max((r.peak for r in self.replicas), default=0), "leaderKills": self.kills,
                "failoverSeconds": [round(f, 1) for f in failovers],
                "failoverSecondsMax": round(max(failovers), 1) if failovers else None,
                "seconds": round(time.monotonic() - start, 1), "lostPods": lost[:20],
                "gracefulStops": len(self.stops), "handOverSeconds": [round(h, 3) for h in hand_overs],
                "handOverSecondsP99": _round(_p99(hand_overs)),
                "handOverSecondsMax": _round(max(hand_overs) if hand_overs else None),
                "stopToLeaderSeconds": [round(h, 3) for h in stop_to_leader],
                "gracefulExitSeconds": [round(e, 3) for e in exit_seconds],
                "gracefulExitSecondsMax": _round(max(exit_seconds) if exit_seconds else None),
                "gracefulExitFailures": sum(1 for _, code in self.exits if code != 0), "releasesUnseen": unseen,
                "doubleBoundPods": (refused + [f"uid {u} bound twice" for u in twice])[:20]}


def _spawn(tasks: set[asyncio.Task[None]], coro: Coroutine[Any, Any, None]) -> None:
    """Run ``coro`` as a task kept in ``tasks`` until it is done."""
    t = asyncio.create_task(coro)
    tasks.add(t)
    t.add_done_callback(tasks.discard)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 3)


def _hand_overs(stops: list[tuple[float, str]], records: list[tuple[str, float | None, float | None]]
                ) -> tuple[list[float], list[float], int]:
    """For each SIGTERM of the leader ``old``: the first release record (no holder) written after
    it, and the first record after that with another holder. The hand-over runs from the release's
    ``renewTime`` to the new holder's ``acquireTime``; stop-to-leader from the SIGTERM to the same."""
    hand_overs: list[float] = []
    stop_to_leader: list[float] = []
    unseen = 0
    for signalled, old in stops:
        release = next((i for i, (holder, renewed, _) in enumerate(records)
                        if not holder and renewed is not None and renewed >= signalled - 0.1), None)
        after = release + 1 if release is not None else 0
        taken = next(((holder, acquired) for holder, _, acquired in records[after:]
                      if holder and holder != old and acquired is not None and acquired >= signalled), None)
        if release is None:
            unseen += 1
        elif taken is not None:
            released_at = records[release][1]
            assert released_at is not None
            hand_overs.append(max(0.0, taken[1] - released_at))
        if taken is not None:
            stop_to_leader.append(max(0.0, taken[1] - signalled))
    return hand_overs, stop_to_leader, unseen


def run_soak(*, pods: int = 20_000, nodes: int = 300, rate: float = 150.0, delete_share: float = 0.5,
             kill_every: float = 30.0, error_rate: float = 0.05, seed: int = 0, time_limit: float = 1800.0,
             latency: str = "", drop_watch: float = 0.0, graceful_every: float | None = None) -> dict[str, Any]:
    """``graceful_every``: SIGTERM the leader every that many seconds instead of SIGKILLing it every
    ``kill_every``."""
    with tempfile.TemporaryDirectory(prefix="kopf-scheduler-soak-") as home:
        return asyncio.run(_run(pods, nodes, rate, delete_share, kill_every, error_rate, seed, time_limit,
                                Path(home), latency, drop_watch, graceful_every))
