"""``kopf-scheduler cluster-bench``: how fast the simulated cluster creates pods, binds them and
feeds watchers.

The cluster runs in a process of its own (``kopf-scheduler cluster``, started by
``processes.start_cluster``), as a real API server would, and one concurrent aiohttp client drives it
over HTTPS on 127.0.0.1. Each run:

1. opens ``watchers`` watches on all pods from the current resourceVersion;
2. creates ``pods`` pods with ``concurrency`` requests in flight → *creates/s*;
3. binds every pod (``POST pods/NAME/binding``) the same way → *bindings/s*;
4. waits until every watcher has seen both events of every pod → *watch events/s* (all watchers'
   events divided by the time from the first create to the last delivery), and checks the watchers
   *kept up*: their last event arrived within ``lag`` seconds of the last write.

Every loop is bounded by count and by ``time_limit`` seconds. The report gives the medians over
``repeat`` runs, each run in a fresh namespace.
"""

from __future__ import annotations

import asyncio
import os
import ssl
import statistics
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from scheduler.benchmark import processes
from scheduler.kubeapi.config import load_config

__all__ = ["RunResult", "format_table", "run_bench"]


@dataclass
class RunResult:
    creates_per_second: float
    bindings_per_second: float
    watch_events_per_second: float
    watchers_kept_up: bool
    watch_lag_seconds: float


def _pod(i: int, ns: str) -> bytes:
    return orjson.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": ns},
                         "spec": {"schedulerName": "bench", "containers": [
                             {"name": "c", "image": "registry.k8s.io/pause:3.10",
                              "resources": {"requests": {"cpu": "100m", "memory": "500Mi"}}}]}})


async def _one_run(server: str, token: str, ctx: ssl.SSLContext, run: int, pods: int, watchers: int,
                   concurrency: int, time_limit: float) -> RunResult:
    ns = f"bench-{run}-{os.getpid()}"
    hdr = {"Authorization": f"Bearer {token}", "Content-Type": "application/json", "Accept": "application/json"}
    conn = aiohttp.TCPConnector(limit=concurrency + watchers + 4, ssl=ctx)
    async with aiohttp.ClientSession(connector=conn, headers=hdr) as s:
        async with s.post(f"{server}/api/v1/namespaces", data=orjson.dumps(
                {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})) as r:
            assert r.status == 201, await r.text()
        async with s.get(f"{server}/api/v1/namespaces/{ns}/pods", params={"limit": "1"}) as r:
            rv = (await r.json())["metadata"]["resourceVersion"]
        want = 2 * pods
        counts = [0] * watchers
        last_seen = [0.0] * watchers
        deadline = time.monotonic() + time_limit

        async def watch(k: int) -> None:
            async with s.get(f"{server}/api/v1/namespaces/{ns}/pods",
                             params={"watch": "true", "resourceVersion": rv, "timeoutSeconds": str(int(time_limit))},
                             timeout=aiohttp.ClientTimeout(total=time_limit + 5)) as r:
                async for chunk in r.content.iter_any():
                    counts[k] += chunk.count(b"\n")
                    last_seen[k] = time.monotonic()
                    if counts[k] >= want or time.monotonic() > deadline:
                        return

        watch_tasks = [asyncio.create_task(watch(k)) for k in range(watchers)]
        await asyncio.sleep(0.2)          # let the watches open before the first write

        async def phase(make: Any) -> float:
            queue = iter(range(pods))
            t0 = time.monotonic()

            async def worker() -> None:
                for i in queue:
                    if time.monotonic() > deadline:
                        return
                    url, body = make(i)
                    async with s.post(url, data=body) as r:
                        await r.read()
                        if r.status != 201:
                            raise RuntimeError(f"{url}: HTTP {r.status}")
            await asyncio.gather(*(worker() for _ in range(concurrency)))
            return time.monotonic() - t0

        base = f"{server}/api/v1/namespaces/{ns}/pods"
        t_start = time.monotonic()
        create_s = await phase(lambda i: (base, _pod(i, ns)))
        bind_s = await phase(lambda i: (f"{base}/p{i}/binding", orjson.dumps(
            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": f"p{i}"},
             "target": {"kind": "Node", "name": f"node-{i % 100}"}})))
        t_writes_done = time.monotonic()
        await asyncio.wait(watch_tasks, timeout=max(1.0, deadline - time.monotonic()))
        for t in watch_tasks:
            t.cancel()
        delivered = sum(min(c, want) for c in counts)
        t_last = max(last_seen) if any(last_seen) else t_writes_done
        lag = max(0.0, t_last - t_writes_done)
        async with s.delete(f"{server}/api/v1/namespaces/{ns}") as r:
            await r.read()
        return RunResult(round(pods / create_s, 1), round(pods / bind_s, 1),
                         round(delivered / max(t_last - t_start, 1e-9), 1),
                         all(c >= want for c in counts) and lag < 1.0, round(lag, 3))


def run_bench(*, pods: int = 5000, watchers: int = 10, concurrency: int = 64, repeat: int = 3,
              time_limit: float = 60.0) -> dict[str, Any]:
    """Start ``kopf-scheduler cluster`` in a subprocess, run the phases ``repeat`` times, report medians."""
    proc, kubeconfig = processes.start_cluster()
    try:
        cfg = load_config(str(kubeconfig))
        assert cfg.token is not None and isinstance(cfg.ssl_context, ssl.SSLContext)
        results = [asyncio.run(_one_run(cfg.server, cfg.token, cfg.ssl_context, k, pods, watchers, concurrency,
                                        time_limit)) for k in range(repeat)]
    finally:
        processes.stop(proc)
    median = {f: statistics.median(getattr(r, f) for r in results)
              for f in ("creates_per_second", "bindings_per_second", "watch_events_per_second",
                        "watch_lag_seconds")}
    return {"pods": pods, "watchers": watchers, "concurrency": concurrency, "repeat": repeat,
            "median": {**median, "watchers_kept_up": all(r.watchers_kept_up for r in results)},
            "runs": [asdict(r) for r in results]}


def format_table(report: dict[str, Any]) -> str:
    m = report["median"]
    lines = [f"simulated cluster: {report['pods']} pods, {report['watchers']} watchers, "
             f"{report['concurrency']} requests in flight, median of {report['repeat']} runs",
             f"  pod creates/s        {m['creates_per_second']:>10.0f}",
             f"  bindings/s           {m['bindings_per_second']:>10.0f}",
             f"  watch events/s       {m['watch_events_per_second']:>10.0f}  (all watchers together)",
             f"  watchers kept up     {'yes' if m['watchers_kept_up'] else 'NO':>10}  "
             f"(last event {m['watch_lag_seconds']:.3f} s after the last write)"]
    return "\n".join(lines)


if __name__ == "__main__":  # pragma: no cover
    print(Path(__file__).name, orjson.dumps(run_bench(pods=int(sys.argv[1]) if len(sys.argv) > 1 else 2000)))
