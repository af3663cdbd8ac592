"""``kopf-scheduler soak``: hours of a bad day in minutes; the proof that no pod is lost or bound twice.

Processes, all on 127.0.0.1 (``processes`` starts and stops them):

* the simulated cluster (``kopf-scheduler cluster``) answering ``error_rate`` of all requests with
  503 (with Retry-After), optionally adding ``latency`` to every request and cutting each delivered
  watch event's connection with probability ``drop_watch``;
* two operator replicas (``kopf-scheduler run --leader-elect``, short lease timings);
* this driver, which creates ``pods`` pods at ``rate`` per second, deletes a share of the bound ones
  again, adds and removes nodes, and every ``kill_every`` seconds SIGKILLs whichever replica leads
  (asking each replica's ``/readyz``) and starts a fresh one in its place.

The driver's own requests retry through the injected errors. It watches pods to timestamp each
bind (creation → bind latency). At the end it waits for every remaining pod to be bound, then reads
the cluster's binding audit (``/debug/binds``: successful bindings per pod uid, and bindings refused
because the pod was bound already) and reports:

``lost``          pods created, never deleted by the driver, and not bound at the end;
``doubleBound``   pods bound more than once, plus bindings refused as "already assigned";
``bindLatencyP99Seconds``, ``peakRssBytes`` (the largest ``VmHWM`` of any replica), ``leaderKills``;
``failoverSeconds``: for each kill, the time until a replica's ``/readyz`` said it leads again
(``failoverSecondsMax`` the worst of them).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import random
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
        try:
            return "is leading" in processes.served(self.port, "/readyz", timeout=2)[1]
        except OSError:
            return False

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
               seed: int, time_limit: float, home: Path, latency: str, drop_watch: float) -> dict[str, Any]:
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

            watcher = asyncio.create_task(watch())
            start = time.monotonic()
            deadline = start + time_limit
            next_kill = start + kill_every
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
                    next_kill = now + kill_every
                    for k, r in enumerate(replicas):
                        r.sample()
                        if r.leading():
                            r.proc.kill()
                            r.proc.wait()
                            killed_at = time.monotonic()
                            kills += 1
                            replicas[k] = _Replica(kubeconfig, home, len(replicas) + kills)
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
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
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
    return {"pods": len(created), "deleted": len(deleted), "bound": len(bound_at), "lost": len(lost),
            "doubleBound": double, "bindLatencyP99Seconds": round(p99, 3),
            "peakRssBytes": max((r.peak for r in replicas), default=0), "leaderKills": kills,
            "failoverSeconds": [round(f, 1) for f in failovers],
            "failoverSecondsMax": round(max(failovers), 1) if failovers else None,
            "errorRate": error_rate, "latency": latency or None, "dropWatch": drop_watch,
            "seconds": round(time.monotonic() - start, 1), "lostPods": lost[:20]}


def run_soak(*, pods: int = 20_000, nodes: int = 300, rate: float = 150.0, delete_share: float = 0.5,
             kill_every: float = 30.0, error_rate: float = 0.05, seed: int = 0, time_limit: float = 1800.0,
             latency: str = "", drop_watch: float = 0.0) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="kopf-scheduler-soak-") as home:
        return asyncio.run(_run(pods, nodes, rate, delete_share, kill_every, error_rate, seed, time_limit,
                                Path(home), latency, drop_watch))
