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
from pathlib import Path
from typing import Any

from scheduler.benchmark import processes
from scheduler.benchmark.workloads import make_node
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
    rng = random.Random(seed)
    kubeconfig = home / "kubeconfig"
    faults = [f"error:*:*={error_rate}/503"] if error_rate else []
    faults += [f"latency={latency}"] if latency else []
    faults += [f"drop-watch={drop_watch}"] if drop_watch else []
    cluster, _ = processes.start_cluster(kubeconfig, faults=faults)
    failovers: list[float] = []
    killed_at: float | None = None

    def check_failover() -> None:
        nonlocal killed_at
        if killed_at is not None and any(r.proc.poll() is None and r.leading() for r in replicas):
            failovers.append(time.monotonic() - killed_at)
            killed_at = None
    replicas: list[_Replica] = []
    created: dict[str, float] = {}       # name -> creation time
    bound_at: dict[str, float] = {}
    deleted: set[str] = set()
    kills = 0
    # Graceful stops: (wall time of the SIGTERM, the leader's identity); exits: (seconds, code).
    stops: list[tuple[float, str]] = []
    exits: list[tuple[float, int]] = []
    lease_records: list[tuple[str, float | None, float | None]] = []    # (holder, renewTime, acquireTime)
    waiters: set[asyncio.Task[None]] = set()

    async def exited(proc: subprocess.Popen[str], signalled: float) -> None:
        code = await asyncio.to_thread(proc.wait)
        exits.append((time.monotonic() - signalled, code))
    try:
        async with KubeClient(load_config(str(kubeconfig)), limit=72, timeout=30) as api:
            await _retry(lambda: api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                                             crd()))
            await _retry(lambda: api.request("POST", profiles_path(),
                                             {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "default"},
                                              "spec": {"schedulerName": "default-scheduler"}}))
            await _retry(lambda: api.request("POST", "/api/v1/namespaces", {
                "apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "soak"}}))
            for i in range(nodes):
                node = make_node(f"node-{i}")
                await _retry(lambda node=node: api.request("POST", "/api/v1/nodes", node))
            replicas = [_Replica(kubeconfig, home, 0), _Replica(kubeconfig, home, 1)]
            listing = await _retry(lambda: api.request("GET", "/api/v1/namespaces/soak/pods"))
            rv = listing["metadata"]["resourceVersion"]

            async def watch() -> None:
                nonlocal rv
                while True:
                    try:
                        async for kind, obj in api.watch("v1", "Pod", namespace="soak", resource_version=rv,
                                                         params={"allowWatchBookmarks": "true"}):
                            rv = obj["metadata"].get("resourceVersion") or rv
                            name = obj["metadata"].get("name", "")
                            if kind != "DELETED" and obj.get("spec", {}).get("nodeName") and name not in bound_at:
                                bound_at[name] = time.monotonic()
                    except ClientError as e:
                        if e.status == 410:
                            listing = await _retry(lambda: api.request("GET", "/api/v1/namespaces/soak/pods"))
                            for p in listing["items"]:
                                if p["spec"].get("nodeName") and p["metadata"]["name"] not in bound_at:
                                    bound_at[p["metadata"]["name"]] = time.monotonic()
                            rv = listing["metadata"]["resourceVersion"]
                        await asyncio.sleep(0.05)
                    except (OSError, TimeoutError):
                        await asyncio.sleep(0.05)

            async def watch_lease() -> None:
                lease_rv: str | None = None
                while True:
                    try:
                        async for kind, obj in api.watch_path(LEASES, resource_version=lease_rv,
                                                              params={"fieldSelector": f"metadata.name={LEASE_NAME}"}):
                            lease_rv = obj["metadata"].get("resourceVersion") or lease_rv
                            if kind in ("ADDED", "MODIFIED"):
                                spec = obj.get("spec") or {}
                                record = (str(spec.get("holderIdentity") or ""), _wall(spec.get("renewTime")),
                                          _wall(spec.get("acquireTime")))
                                if not lease_records or lease_records[-1] != record:
                                    lease_records.append(record)
                    except ClientError as e:
                        if e.status == 410:
                            lease_rv = None
                        await asyncio.sleep(0.05)
                    except (OSError, TimeoutError):
                        await asyncio.sleep(0.05)

            watcher = asyncio.create_task(watch())
            lease_watcher = asyncio.create_task(watch_lease())
            every = graceful_every or kill_every
            start = time.monotonic()
            deadline = start + time_limit
            next_kill = start + every
            next_node_churn = start + 5.0
            extra_nodes = 0
            sem = asyncio.Semaphore(48)

            async def create(name: str) -> None:
                async with sem:
                    with contextlib.suppress(ConflictError):
                        await _retry(lambda: api.request("POST", "/api/v1/namespaces/soak/pods", _pod(name)))
                    created[name] = time.monotonic()

            async def delete(name: str) -> None:
                async with sem:
                    with contextlib.suppress(NotFoundError):
                        await _retry(lambda: api.request("DELETE", f"/api/v1/namespaces/soak/pods/{name}"))

            tasks: set[asyncio.Task[None]] = set()
            i = 0
            while i < pods and time.monotonic() < deadline:
                batch = max(1, int(rate / 10))
                for _ in range(min(batch, pods - i)):
                    t = asyncio.create_task(create(f"p{i}"))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)
                    i += 1
                # churn: delete a share of what is bound, add and remove nodes, kill the leader
                candidates = [n for n in bound_at if n not in deleted]
                for name in rng.sample(candidates, min(len(candidates), int(batch * delete_share))):
                    deleted.add(name)
                    t = asyncio.create_task(delete(name))
                    tasks.add(t)
                    t.add_done_callback(tasks.discard)
                now = time.monotonic()
                if now >= next_node_churn:
                    next_node_churn = now + 5.0
                    node = make_node(f"extra-{extra_nodes}")
                    with contextlib.suppress(ClientError):
                        await _retry(lambda node=node: api.request("POST", "/api/v1/nodes", node))
                        if extra_nodes >= 1:
                            gone = f"/api/v1/nodes/extra-{extra_nodes - 1}"
                            await _retry(lambda gone=gone: api.request("DELETE", gone))
                    extra_nodes += 1
                check_failover()
                if now >= next_kill and killed_at is None:
                    next_kill = now + every
                    for k, r in enumerate(replicas):
                        r.sample()
                        identity = r.identity()
                        if identity is None:
                            continue
                        if graceful_every and not any(o.standing_by() for o in replicas if o is not r):
                            next_kill = now + 0.5    # a rolling update waits for its new pod's readiness
                            break
                        if graceful_every:           # a rolling update: drain, release, exit
                            stops.append((time.time(), identity))
                            r.proc.send_signal(signal.SIGTERM)
                            killed_at = time.monotonic()
                            waiter = asyncio.create_task(exited(r.proc, killed_at))
                            waiters.add(waiter)
                        else:
                            r.proc.kill()
                            r.proc.wait()
                            killed_at = time.monotonic()
                            kills += 1
                        replicas[k] = _Replica(kubeconfig, home, len(replicas) + kills + len(stops))
                        replicas.append(r)        # keep it for its peak RSS
                        break
                for r in replicas:
                    r.sample()
                await asyncio.sleep(0.1)
            if tasks:
                await asyncio.wait(tasks, timeout=max(1.0, deadline - time.monotonic()))
            live = set(created) - deleted
            while time.monotonic() < deadline and (not live <= set(bound_at) or killed_at is not None):
                for r in replicas:
                    r.sample()
                check_failover()
                await asyncio.sleep(0.2)
            if waiters:
                await asyncio.wait(waiters, timeout=30)
            await asyncio.sleep(0.5)           # the lease watch's last records
            for task in (watcher, lease_watcher):
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            audit = await _retry(lambda: api.request("GET", "/debug/binds"))
            for r in replicas:
                r.sample()
    finally:
        for r in replicas:
            processes.stop(r.proc)
        processes.stop(cluster)
    live = set(created) - deleted
    lost = sorted(live - set(bound_at))
    latencies = sorted(bound_at[n] - created[n] for n in bound_at if n in created)
    p99 = latencies[max(math.ceil(len(latencies) * 0.99) - 1, 0)] if latencies else 0.0
    double = sum(1 for v in audit["binds"].values() if v > 1) + int(audit["conflicts"])
    hand_overs, stop_to_leader, unseen = _hand_overs(stops, lease_records)
    exit_seconds = [e for e, _ in exits]
    return {"pods": len(created), "deleted": len(deleted), "bound": len(bound_at), "lost": len(lost),
            "doubleBound": double, "bindLatencyP99Seconds": round(p99, 3),
            "peakRssBytes": max((r.peak for r in replicas), default=0), "leaderKills": kills,
            "failoverSeconds": [round(f, 1) for f in failovers],
            "failoverSecondsMax": round(max(failovers), 1) if failovers else None,
            "errorRate": error_rate, "latency": latency or None, "dropWatch": drop_watch,
            "seconds": round(time.monotonic() - start, 1), "lostPods": lost[:20],
            "gracefulStops": len(stops), "handOverSeconds": [round(h, 3) for h in hand_overs],
            "handOverSecondsP99": _round(_p99(hand_overs)),
            "handOverSecondsMax": _round(max(hand_overs) if hand_overs else None),
            "stopToLeaderSeconds": [round(h, 3) for h in stop_to_leader],
            "gracefulExitSeconds": [round(e, 3) for e in exit_seconds],
            "gracefulExitSecondsMax": _round(max(exit_seconds) if exit_seconds else None),
            "gracefulExitFailures": sum(1 for _, code in exits if code != 0), "releasesUnseen": unseen}


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
