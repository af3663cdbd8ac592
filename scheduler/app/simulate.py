"""``kopf-scheduler simulate``: the real operator (``runtime``) against the embedded simulated cluster.

A run:

1. starts the simulated cluster in-process (its own thread and loop) and applies the CRD;
2. creates the input objects in file order through the API, recording what the API refused. When no
   SchedulingProfile is given, ``default-scheduler`` with upstream's defaults is applied first, so a
   dump of a real cluster replays as it is;
3. starts the operator (worker thread, then Kopf on a thread of its own) against the cluster's
   kubeconfig, over HTTPS, exactly as ``kopf-scheduler run`` would;
4. waits until the run has *settled*: every profile's status reflects its generation, no pod is in
   activeQ, backoffQ or in flight, no binding awaits confirmation, and nothing has changed for
   ``QUIET`` seconds. Pods whose schedulerName has no profile are reported unbound and do not hold
   the run. ``timeout`` ends a run that never settles;
5. reports per-pod placement or failure message, per-node utilisation, profiles and throughput.
"""

from __future__ import annotations

import asyncio
import random
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scheduler.app.runtime import OperatorRuntime
from scheduler.errors import ClientError, ParseError
from scheduler.kubeapi import KubeClient, load_config
from scheduler.model import parse_pod
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path
from scheduler.quantity import resource_value
from scheduler.simulator import SimulatedCluster, iter_documents

__all__ = ["SimulationReport", "demo_objects", "format_table", "run_simulation"]

QUIET = 0.5
DEFAULT_PROFILE = {"apiVersion": API_VERSION, "kind": KIND,
                   "metadata": {"name": "default-scheduler"}, "spec": {"schedulerName": "default-scheduler"}}
Obj = dict[str, Any]


@dataclass
class SimulationReport:
    pods: list[Obj] = field(default_factory=list)
    nodes: list[Obj] = field(default_factory=list)
    profiles: list[Obj] = field(default_factory=list)
    rejected: list[Obj] = field(default_factory=list)
    summary: Obj = field(default_factory=dict)
    settled: bool = True

    def as_json(self) -> Obj:
        return {"pods": self.pods, "nodes": self.nodes, "profiles": self.profiles, "rejected": self.rejected,
                "summary": self.summary}


def demo_objects(nodes: int, pods: int, seed: int) -> list[Obj]:
    """A generated cluster: upstream's node template (4 CPU, 32Gi, 110 pods) in three zones, and
    pods of 100m–1 CPU and 128Mi–2Gi."""
    rng = random.Random(seed)
    out: list[Obj] = []
    for i in range(nodes):
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {
            "kubernetes.io/hostname": f"node-{i}", "topology.kubernetes.io/zone": f"zone-{i % 3}"}},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})
    for i in range(pods):
        cpu = rng.choice(["100m", "250m", "500m", "1"])
        mem = rng.choice(["128Mi", "512Mi", "1Gi", "2Gi"])
        out.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"demo-{i}", "namespace": "default",
                                                                   "labels": {"app": f"app-{i % 5}"}},
                    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                             "resources": {"requests": {"cpu": cpu, "memory": mem}}}]}})
    return out


def _key(o: Obj) -> tuple[str, str]:
    m = o.get("metadata") or {}
    return str(m.get("namespace") or "default"), str(m.get("name") or "")


async def _create_all(api: KubeClient, objects: Iterable[Obj], report: SimulationReport) -> set[tuple[str, str]]:
    """Create in order; returns the keys of the pods that were created."""
    pods: set[tuple[str, str]] = set()
    namespaces: set[str] = {"default", "kube-system", "kube-public", "kube-node-lease"}
    for obj in objects:
        meta = obj.setdefault("metadata", {})
        for f in ("uid", "resourceVersion", "creationTimestamp", "managedFields"):
            meta.pop(f, None)
        ns = meta.get("namespace")
        try:
            if ns and ns not in namespaces and obj.get("kind") != "Namespace":
                try:
                    await api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
                except ClientError as e:
                    if e.status != 409:
                        raise
                namespaces.add(ns)
            await api.create(obj)
            if obj.get("kind") == "Namespace":
                namespaces.add(str(meta.get("name")))
            if obj.get("kind") == "Pod" and obj.get("apiVersion") == "v1":
                pods.add(_key(obj))
        except ClientError as e:
            report.rejected.append({"kind": obj.get("kind"), "name": meta.get("name") or meta.get("generateName"),
                                    "code": e.status, "message": str(e)})
    return pods


def _progress(text: str) -> None:
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + text)
    else:
        sys.stderr.write(text + "\n")
    sys.stderr.flush()


async def _settled(api: KubeClient, runtime: OperatorRuntime) -> bool:
    s = runtime.service
    counts = s.queue.counts()
    if counts.get("active", 0) or counts.get("backoff", 0) or counts.get("inFlight", 0):
        return False
    if s.cache.assumed_count() or time.monotonic() - s.last_activity < QUIET:
        return False
    items = (await api.request("GET", profiles_path()))["items"]
    return all((p.get("status") or {}).get("observedGeneration") == p["metadata"].get("generation") for p in items)


def _requested(pods: list[Obj]) -> dict[str, int]:
    out: dict[str, int] = {}
    for p in pods:
        try:
            for r, v in parse_pod(p).requests.items():
                out[r] = out.get(r, 0) + v
        except ParseError:
            continue
    return out


def _fmt(resource: str, v: int) -> str:
    return f"{v}m" if resource == "cpu" else str(v)


async def run_simulation(objects: list[Obj], *, timeout: float = 120.0, seed: int = 0,
                         progress: Callable[[str], None] | None = _progress, explain: bool = False
                         ) -> SimulationReport:
    """``explain``: each pod's report carries its last decision record (``"decision"``, None when
    it was never attempted), as ``GET /debug/decisions`` serves it."""
    report = SimulationReport()
    async with SimulatedCluster(seed=seed) as cluster:
        api = cluster.client
        await api.create(crd())
        if not any(o.get("kind") == KIND for o in objects):
            objects = [DEFAULT_PROFILE, *objects]
        created = await _create_all(api, objects, report)
        runtime = OperatorRuntime(load_config(str(cluster.kubeconfig)), seed=seed, series_interval=30)
        t0 = time.monotonic()
        runtime.start()
        stop = threading.Event()
        kopf_thread = threading.Thread(target=_run_kopf, args=(runtime, stop), name="kopf", daemon=True)
        kopf_thread.start()
        deadline = t0 + timeout
        try:
            while True:
                await asyncio.sleep(0.25)
                if runtime.failed is not None:
                    raise RuntimeError(f"the operator failed: {runtime.failed}")
                if runtime.synced.is_set() and runtime.service.synced and await _settled(api, runtime):
                    break
                if time.monotonic() > deadline:
                    report.settled = False
                    break
                if progress is not None:
                    c = runtime.service.queue.counts()
                    progress(f"cycles {runtime.service.cycles}  active {c.get('active', 0)}  backoff "
                             f"{c.get('backoff', 0)}  unschedulable {c.get('unschedulable', 0)}  "
                             f"{time.monotonic() - t0:.1f}s")
            seconds = time.monotonic() - t0 - (QUIET if report.settled else 0)
            if progress is not None:
                progress("")
            await _collect(api, runtime, created, report, max(seconds, 1e-6), explain)
        finally:
            stop.set()
            kopf_thread.join(timeout=15)
            runtime.stop()
    return report


def _run_kopf(runtime: OperatorRuntime, stop: threading.Event) -> None:
    import kopf
    asyncio.run(kopf.operator(**runtime.kopf_kwargs(stop_flag=stop)))


async def _collect(api: KubeClient, runtime: OperatorRuntime, created: set[tuple[str, str]],
                   report: SimulationReport, seconds: float, explain: bool = False) -> None:
    pods = (await api.list("v1", "Pod"))["items"]
    nodes = (await api.list("v1", "Node"))["items"]
    profiles = (await api.request("GET", profiles_path()))["items"]
    served = set(runtime.service.profiles.current)
    present = {_key(p) for p in pods}
    by_node: dict[str, list[Obj]] = {}
    scheduled = unschedulable = 0
    for p in sorted(pods, key=_key):
        spec, st = p.get("spec") or {}, p.get("status") or {}
        node = spec.get("nodeName") or None
        cond = next((c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
        message = None
        if node is None:
            if spec.get("schedulerName") not in served:
                message = f"no SchedulingProfile serves schedulerName {spec.get('schedulerName')!r}"
            elif cond is not None and cond.get("status") == "False":
                message = cond.get("message")
                unschedulable += 1
        elif _key(p) in created:
            scheduled += 1
        if node:
            by_node.setdefault(node, []).append(p)
        report.pods.append({"namespace": _key(p)[0], "name": _key(p)[1], "schedulerName": spec.get("schedulerName"),
                            "node": node, "message": message, "deleted": False})
        if explain:
            record = runtime.service.decisions.get("/".join(_key(p)))
            report.pods[-1]["decision"] = record.to_json() if record is not None else None
    for ns, name in sorted(created - present):
        report.pods.append({"namespace": ns, "name": name, "schedulerName": None, "node": None,
                            "message": "deleted during the run", "deleted": True})
    for n in sorted(nodes, key=lambda n: n["metadata"]["name"]):
        name = n["metadata"]["name"]
        alloc = (n.get("status") or {}).get("allocatable") or {}
        req = _requested(by_node.get(name, []))
        report.nodes.append({"name": name, "pods": len(by_node.get(name, [])), "allocatable": dict(alloc),
                             "requested": {r: _fmt(r, v) for r, v in sorted(req.items())}})
    for p in profiles:
        conds: list[Obj] = (p.get("status") or {}).get("conditions") or []
        accepted_cond: Obj = next((c for c in conds if c.get("type") == "Accepted"), {})
        accepted = accepted_cond.get("status") == "True"
        report.profiles.append({"name": p["metadata"]["name"], "accepted": accepted,
                                "message": None if accepted else accepted_cond.get("message")})
    report.summary = {"pods": len(report.pods), "scheduled": scheduled, "unschedulable": unschedulable,
                      "seconds": round(seconds, 3), "podsPerSecond": round(scheduled / seconds, 1)}


def load_objects(files: Iterable[str]) -> list[Obj]:
    out: list[Obj] = []
    for f in files:
        out.extend(iter_documents(Path(f)))
    return out


def format_table(r: SimulationReport) -> str:
    lines = ["PODS", f"  {'NAMESPACE/NAME':40} {'NODE':20} MESSAGE"]
    for p in r.pods:
        msg = "(deleted)" if p["deleted"] else (p["message"] or "")
        lines.append(f"  {p['namespace'] + '/' + p['name']:40} {p['node'] or '<none>':20} {msg}")
    lines += ["", "NODES", f"  {'NAME':20} {'PODS':>5}  CPU (requested/allocatable)   MEMORY"]
    for n in r.nodes:
        cpu_req = n["requested"].get("cpu", "0m")
        mem_req = int(n["requested"].get("memory", "0"))
        cpu_alloc = resource_value("cpu", n["allocatable"].get("cpu", "0"))
        mem_alloc = resource_value("memory", n["allocatable"].get("memory", "0"))
        lines.append(f"  {n['name']:20} {n['pods']:>5}  {cpu_req:>7}/{cpu_alloc}m"
                     f"{'':16} {mem_req / 2**30:.1f}/{mem_alloc / 2**30:.1f}Gi")
    lines += ["", "PROFILES"] + [f"  {p['name']}: {'accepted' if p['accepted'] else 'REJECTED: ' + str(p['message'])}"
                                  for p in r.profiles]
    if r.rejected:
        lines += ["", "REJECTED BY THE API"] + [f"  {x['kind']} {x['name']}: {x['code']} {x['message']}"
                                                for x in r.rejected]
    s = r.summary
    lines += ["", f"{s['scheduled']}/{s['pods']} pods scheduled, {s['unschedulable']} unschedulable, in "
                  f"{s['seconds']:.2f} s ({s['podsPerSecond']} pods/s)" + ("" if r.settled else
                                                                          "; the run did NOT settle (timeout)")]
    return "\n".join(lines)
