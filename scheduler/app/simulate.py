"""``kopf-scheduler simulate``: the real operator (``runtime``) against the embedded simulated cluster.

A run:

1. starts the simulated cluster in-process (its own thread and loop);
2. loads the input objects (``replay``), recording what the API refused. When no
   SchedulingProfile is given, ``default-scheduler`` with upstream's defaults is applied first, so a
   dump of a real cluster (``kopf-scheduler dump``, ``kwokctl snapshot export``, ``kubectl get -o
   yaml``) replays as it is. The SchedulingProfile CRD is installed first. They are loaded by ``cluster
   --load``'s code (``scheduler.simulator.loader``: kinds in dependency order, a dump's uids kept so
   controllers adopt their pods, status kept: terminal pods stay terminal, a Job stays complete) in one
   turn of the server's loop, so its controllers see the whole input at once. Terminal pods
   (``Succeeded``, ``Failed``) keep their phase, so they use no resources, as in the real cluster, and
   the report lists them apart;
3. starts the operator (worker thread, then Kopf on a thread of its own) against the cluster's
   kubeconfig, over HTTPS, exactly as ``kopf-scheduler run`` would;
4. waits until the run has *settled*: every profile's status reflects its generation, no pod is in
   activeQ, backoffQ or in flight, no binding awaits confirmation, and nothing has changed for
   ``QUIET`` seconds. Pods whose schedulerName has no profile are reported unbound and do not hold
   the run. With no node at all, pods that were tried once and wait in backoff do not hold it either
   (nothing in a simulation can add a node). ``timeout`` ends a run that never settles;
5. reports per-pod placement or failure message, the unbound pods grouped by reason (all, and per
   profile: ``pendingByProfile``), per-node utilisation, profiles and throughput.

The progress line (``Progress``) shows ``bound N/M``; on a terminal it is one line redrawn in
place, and a log record written meanwhile erases it first (``Progress.attach`` wraps the root
logger's stream handlers), so log lines never run into it.
"""

from __future__ import annotations

import asyncio
import logging
import random
import re
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from scheduler.app.runtime import OperatorRuntime
from scheduler.errors import ParseError
from scheduler.kubeapi import KubeClient, load_config
from scheduler.model import parse_pod
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path
from scheduler.profiles.explanation_crd import crd as explanation_crd
from scheduler.quantity import resource_value
from scheduler.simulator import SimulatedCluster, iter_documents, pod_claim_names, pod_claims
from scheduler.simulator.cluster import LoadError, text_documents
from scheduler.simulator.loader import load

__all__ = ["Progress", "Replayed", "SimulationReport", "cluster_gates", "demo_objects", "format_table",
           "group_by_profile", "group_unbound", "load_objects", "pod_devices", "replay", "run_simulation"]

QUIET = 0.5
DEFAULT_PROFILE = {"apiVersion": API_VERSION, "kind": KIND,
                   "metadata": {"name": "default-scheduler"}, "spec": {"schedulerName": "default-scheduler"}}
TERMINAL = ("Succeeded", "Failed")
Obj = dict[str, Any]


@dataclass
class SimulationReport:
    pods: list[Obj] = field(default_factory=list)
    nodes: list[Obj] = field(default_factory=list)
    profiles: list[Obj] = field(default_factory=list)
    rejected: list[Obj] = field(default_factory=list)
    summary: Obj = field(default_factory=dict)
    settled: bool = True
    # pods of the input in phase Succeeded or Failed: kept so, counted nowhere else
    terminal: list[Obj] = field(default_factory=list)
    # the unbound pods, one entry per reason (``group_unbound``)
    unschedulable: list[Obj] = field(default_factory=list)
    # the same per profile (schedulerName): ``group_by_profile``
    pending_by_profile: dict[str, list[Obj]] = field(default_factory=dict)
    # per resource, the smallest request of a pending pod (the HTML page's "no free" threshold)
    smallest_pending: dict[str, int] = field(default_factory=dict)

    def as_json(self) -> Obj:
        return {"pods": self.pods, "nodes": self.nodes, "profiles": self.profiles, "rejected": self.rejected,
                "summary": self.summary, "unschedulable": self.unschedulable, "terminal": self.terminal,
                "pendingByProfile": self.pending_by_profile}


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


@dataclass
class Replayed:
    """What ``replay`` created: the non-terminal pods (keys), the terminal ones, and the node count."""
    pods: set[tuple[str, str]] = field(default_factory=set)
    terminal: set[tuple[str, str]] = field(default_factory=set)
    nodes: int = 0


def replay(cluster: SimulatedCluster, objects: Iterable[Obj], report: SimulationReport) -> Replayed:
    """Load the objects into the cluster as ``cluster --load`` does (``scheduler.simulator.loader``: kinds in
    dependency order, uids kept so owners keep their pods, status kept, all in one turn of the server's
    loop), with the SchedulingProfile CRD installed first when the input needs it. Each refusal goes to
    ``report.rejected``. The input objects are not changed."""
    inputs = list(objects)
    loaded = cluster.call(lambda: load(cluster.server, inputs, crds=[crd(), explanation_crd()]))
    for obj, e in loaded.rejected:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or meta.get("generateName") or "")
        report.rejected.append({"kind": obj.get("kind"), "name": name, "code": e.code, "message": e.message})
    out = Replayed()
    for o in loaded.objects:
        if o.get("apiVersion") != "v1":
            continue
        if o.get("kind") == "Node":
            out.nodes += 1
        elif o.get("kind") == "Pod":
            (out.terminal if (o.get("status") or {}).get("phase") in TERMINAL else out.pods).add(_key(o))
    return out


class Progress:
    """The progress line on ``stream`` (stderr). On a terminal, one line redrawn in place; a log
    record erases it before it is written and the line is drawn again after it (``attach``).
    Elsewhere, one line per update, at most every ``every`` seconds."""

    def __init__(self, stream: TextIO | None = None, *, every: float = 2.0) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.every = every
        self.text = ""
        self._shown = False
        self._last = 0.0
        self.lock = threading.RLock()

    def __call__(self, text: str) -> None:
        with self.lock:
            self.text = text
            if self.tty:
                self.stream.write("\r\033[K" + text)
                self._shown = bool(text)
                self.stream.flush()
            elif text and time.monotonic() - self._last >= self.every:
                self._last = time.monotonic()
                self.stream.write(text + "\n")
                self.stream.flush()

    def erase(self) -> None:
        with self.lock:
            if self._shown:
                self.stream.write("\r\033[K")
                self.stream.flush()
                self._shown = False

    def redraw(self) -> None:
        with self.lock:
            if self.tty and self.text and not self._shown:
                self.stream.write(self.text)
                self.stream.flush()
                self._shown = True

    def attach(self, logger: logging.Logger | None = None) -> Callable[[], None]:
        """Wrap ``logger``'s (the root's) stream handlers so that each record erases the line first;
        returns the function that restores them."""
        logger = logger if logger is not None else logging.getLogger()
        before = list(logger.handlers)
        logger.handlers[:] = [_Erasing(h, self) if isinstance(h, logging.StreamHandler) else h for h in before]

        def detach() -> None:
            logger.handlers[:] = before
        return detach


class _Erasing(logging.Handler):
    """A handler that erases the progress line, lets ``inner`` write the record, and redraws the
    line, all under the progress line's lock (a record from another thread cannot slip between)."""

    def __init__(self, inner: logging.Handler, progress: Progress) -> None:
        super().__init__(inner.level)
        self.inner, self.progress = inner, progress

    def handle(self, record: logging.LogRecord) -> bool:
        with self.progress.lock:
            self.progress.erase()
            try:
                return bool(self.inner.handle(record))
            finally:
                self.progress.redraw()

    def emit(self, record: logging.LogRecord) -> None:     # pragma: no cover - handle() delegates
        self.inner.emit(record)


def progress_text(runtime: OperatorRuntime, elapsed: float) -> str:
    """``bound N/M``: N pods bound (or assumed) in the scheduler's cache, M those plus the pending
    ones (in the queue, in a scheduling cycle and not assumed yet, or waiting for a profile), then
    the queue and the time. A pod in its cycle counts too: without it M dipped by one whenever the
    line was drawn mid-cycle."""
    s = runtime.service
    c = s.queue.counts()
    bound = s.cache.pod_count()
    waiting = {i.uid for i in s.queue.pending()}          # queued and in flight (an assumed one is bound)
    pending = sum(1 for uid in waiting if s.cache.get_pod(uid) is None) + len(s.parked)
    return (f"bound {bound}/{bound + pending}  active {c.get('active', 0)}  backoff {c.get('backoff', 0)}  "
            f"unschedulable {c.get('unschedulable', 0)}  cycles {s.cycles}  {elapsed:.1f}s")


async def _settled(api: KubeClient, runtime: OperatorRuntime, nodes: int = 1) -> bool:
    s = runtime.service
    counts = s.queue.counts()
    if counts.get("active", 0) or counts.get("inFlight", 0) or s.cache.assumed_count():
        return False
    # With no node, a pod that was tried waits in backoff for ever ("no nodes available"), and its
    # retries never leave the run quiet: it is settled as soon as every pod was tried once.
    if nodes and (counts.get("backoff", 0) or time.monotonic() - s.last_activity < QUIET):
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


GANG_API_VERSION = "scheduling.k8s.io/v1beta1"
GANG_KINDS = frozenset({"Workload", "PodGroup"})


def cluster_gates(objects: Iterable[Obj], feature_gates: Mapping[str, bool] | None) -> dict[str, bool]:
    """The simulated cluster's feature gates for a run: the scheduler's, with ``GenericWorkload`` on
    also when the input carries Workloads or PodGroups (a dump of a cluster that served them): the
    API server and the scheduler have gates of their own, so the objects load, and the scheduler
    treats their pods as its own gates say."""
    gates = dict(feature_gates or {})
    if any(o.get("apiVersion") == GANG_API_VERSION and o.get("kind") in GANG_KINDS for o in objects):
        gates["GenericWorkload"] = True
    return gates


async def run_simulation(objects: list[Obj], *, timeout: float = 120.0, seed: int = 0,
                         progress: Callable[[str], None] | None = None, explain: bool = False,
                         gpus_per_node: int = 0, gpu_attributes: Obj | None = None,
                         feature_gates: Mapping[str, bool] | None = None) -> SimulationReport:
    """``progress``: called about four times a second with the progress line (``progress_text``),
    and with ``""`` when the run has ended; a ``Progress`` also erases its line for each log record
    meanwhile. ``explain``: each pod's report carries its last decision record (``"decision"``, None
    when it was never attempted), as ``GET /debug/decisions`` serves it. ``gpus_per_node``: the
    simulated DRA driver publishes that many GPUs on each node (``gpu_attributes``: their description,
    ``scheduler.simulator.load_gpu_attributes``). ``feature_gates``: the scheduler's (``run``'s
    ``--feature-gates``); the cluster's are ``cluster_gates``."""
    report = SimulationReport()
    detach = progress.attach() if isinstance(progress, Progress) else None
    try:
        # Pods run shortly after binding, so StatefulSets proceed ordinal by ordinal and Jobs complete.
        async with SimulatedCluster(seed=seed, pod_running_after=0.1, pod_termination_seconds=0.2,
                                    gpus_per_node=gpus_per_node, gpu_attributes=gpu_attributes,
                                    feature_gates=cluster_gates(objects, feature_gates)) as cluster:
            api = cluster.client
            if not any(o.get("kind") == KIND for o in objects):
                objects = [DEFAULT_PROFILE, *objects]
            created = await asyncio.get_running_loop().run_in_executor(None, replay, cluster, objects, report)
            runtime = OperatorRuntime(load_config(str(cluster.kubeconfig)), seed=seed, series_interval=30,
                                      feature_gates=feature_gates)
            t0 = time.monotonic()
            runtime.start()
            stop = threading.Event()
            kopf_thread = threading.Thread(target=runtime.run_kopf, args=(stop,), name="kopf", daemon=True)
            kopf_thread.start()
            deadline = t0 + timeout
            try:
                while True:
                    await asyncio.sleep(0.25)
                    if runtime.failed is not None:
                        raise RuntimeError(f"the operator failed: {runtime.failed}")
                    if runtime.synced.is_set() and runtime.service.synced and await _settled(api, runtime,
                                                                                             created.nodes):
                        break
                    if time.monotonic() > deadline:
                        report.settled = False
                        break
                    if progress is not None:
                        progress(progress_text(runtime, time.monotonic() - t0))
                quiet = QUIET if report.settled and created.nodes else 0.0
                seconds = time.monotonic() - t0 - quiet
                if progress is not None:
                    progress("")
                await _collect(api, runtime, created, report, max(seconds, 1e-6), explain)
            finally:
                stop.set()
                kopf_thread.join(timeout=15)
                runtime.stop()
    finally:
        if detach is not None:
            detach()
    return report


_FIT = re.compile(r"^0/\d+ nodes are available: (.*)$", re.S)
_COUNTED = re.compile(r"^\d+ (.+)$")


def reason_of(message: str | None) -> str:
    """The reason an unbound pod is grouped by: for upstream's FitError message, its reasons
    without the node counts and without the preemption part (``Insufficient cpu, node(s) had
    untolerated taint(s)``); any other message as it is."""
    if not message:
        return "not attempted yet"
    m = _FIT.match(message)
    if m is None:
        return message
    body = m.group(1)
    cut = body.find(". preemption: ")
    body = body[:cut] if cut >= 0 else body.removesuffix(".")
    parts = body.split(", ")
    reasons = [_COUNTED.match(p) for p in parts]
    if not all(reasons):
        return body                       # a PreFilter's message: one sentence, no counts
    return ", ".join(r.group(1) for r in reasons if r is not None)


def group_unbound(pods: list[Obj]) -> list[Obj]:
    """The unbound (not deleted) pods by ``reason_of`` their message, most pods first: each group
    with its count, one full message as an example, and the pods (``namespace/name``)."""
    groups: dict[str, Obj] = {}
    for p in pods:
        if p["node"] or p["deleted"]:
            continue
        reason = reason_of(p["message"])
        g = groups.setdefault(reason, {"reason": reason, "count": 0, "message": p["message"], "pods": []})
        g["count"] += 1
        g["pods"].append(f"{p['namespace']}/{p['name']}")
    return sorted(groups.values(), key=lambda g: (-g["count"], g["reason"]))


def group_by_profile(pods: list[Obj]) -> dict[str, list[Obj]]:
    """``group_unbound`` per profile: schedulerName to its pending pods' groups, by name. A pod whose
    schedulerName no profile serves is under that name too, with that as its reason."""
    by_name: dict[str, list[Obj]] = {}
    for p in pods:
        if not p["node"] and not p["deleted"]:
            by_name.setdefault(str(p["schedulerName"] or "default-scheduler"), []).append(p)
    return {name: group_unbound(by_name[name]) for name in sorted(by_name)}


async def _collect(api: KubeClient, runtime: OperatorRuntime, created: Replayed,
                   report: SimulationReport, seconds: float, explain: bool = False) -> None:
    all_pods = (await api.list("v1", "Pod"))["items"]
    claims = {_key(c): c for c in (await api.list("v1", "PersistentVolumeClaim"))["items"]}
    resource_claims = {_key(c): c for c in (await api.list("resource.k8s.io/v1", "ResourceClaim"))["items"]}
    pods = [p for p in all_pods if (p.get("status") or {}).get("phase") not in TERMINAL]
    nodes = (await api.list("v1", "Node"))["items"]
    profiles = (await api.request("GET", profiles_path()))["items"]
    served = set(runtime.service.profiles.current)
    present = {_key(p) for p in all_pods}
    by_node: dict[str, list[Obj]] = {}
    scheduled = unschedulable = 0
    report.terminal.extend(_terminal_entries(all_pods))
    for p in sorted(pods, key=_key):
        entry, placed, pending = _pod_entry(p, served, claims, resource_claims)
        scheduled += placed
        unschedulable += pending
        if entry["node"]:
            by_node.setdefault(entry["node"], []).append(p)
        report.pods.append(entry)
        if explain:
            record = runtime.service.decisions.get("/".join(_key(p)))
            report.pods[-1]["decision"] = record.to_json() if record is not None else None
    for ns, name in sorted(created.pods - present):
        report.pods.append({"namespace": ns, "name": name, "schedulerName": None, "node": None,
                            "message": "deleted during the run", "deleted": True})
    report.nodes.extend(_node_entry(n, by_node.get(n["metadata"]["name"], []))
                        for n in sorted(nodes, key=lambda n: n["metadata"]["name"]))
    report.profiles.extend(_profile_entry(p) for p in profiles)
    report.unschedulable = group_unbound(report.pods)
    report.pending_by_profile = group_by_profile(report.pods)
    for p in pods:
        if not (p.get("spec") or {}).get("nodeName"):
            for r, v in _requested([p]).items():
                if v > 0:
                    report.smallest_pending[r] = min(v, report.smallest_pending.get(r, v))
    report.summary = {"pods": len(report.pods), "scheduled": scheduled, "unschedulable": unschedulable,
                      "seconds": round(seconds, 3), "podsPerSecond": round(scheduled / seconds, 1),
                      "terminal": len(report.terminal), "rejected": len(report.rejected)}


def _pod_entry(p: Obj, served: set[str], claims: dict[tuple[str, str], Obj],
               resource_claims: dict[tuple[str, str], Obj]) -> tuple[Obj, int, int]:
    """A live pod's report entry, and whether it counts as scheduled and as unschedulable."""
    spec, st = p.get("spec") or {}, p.get("status") or {}
    node = spec.get("nodeName") or None
    cond = next((c for c in st.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    message = None
    scheduled = unschedulable = 0
    if node is None:
        if spec.get("schedulerName") not in served:
            message = f"no SchedulingProfile serves schedulerName {spec.get('schedulerName')!r}"
        elif cond is not None and cond.get("status") == "False":
            message = cond.get("message")
            unschedulable = 1
    else:
        scheduled = 1             # an input pod, or one a controller created from an input workload
    volumes = []
    for claim in pod_claims(p):
        c = claims.get((_key(p)[0], claim)) or {}
        bound = (c.get("status") or {}).get("phase") == "Bound"
        volumes.append({"claim": claim, "volume": (c.get("spec") or {}).get("volumeName") if bound else None})
    entry = {"namespace": _key(p)[0], "name": _key(p)[1], "schedulerName": spec.get("schedulerName"),
             "node": node, "message": message, "deleted": False, "volumes": volumes,
             "devices": pod_devices(p, resource_claims)}
    return entry, scheduled, unschedulable


def _terminal_entries(all_pods: list[Obj]) -> list[Obj]:
    """The pods that ran to completion (Succeeded or Failed), by namespace and name."""
    out: list[Obj] = []
    for p in sorted(all_pods, key=_key):
        phase = (p.get("status") or {}).get("phase")
        if phase in TERMINAL:
            out.append({"namespace": _key(p)[0], "name": _key(p)[1], "phase": phase,
                        "node": (p.get("spec") or {}).get("nodeName") or None})
    return out


def _node_entry(n: Obj, placed: list[Obj]) -> Obj:
    """A node's report entry: its pods, allocatable and what they request."""
    alloc = (n.get("status") or {}).get("allocatable") or {}
    req = _requested(placed)
    return {"name": n["metadata"]["name"], "pods": len(placed), "allocatable": dict(alloc),
            "requested": {r: _fmt(r, v) for r, v in sorted(req.items())}}


def _profile_entry(p: Obj) -> Obj:
    conds: list[Obj] = (p.get("status") or {}).get("conditions") or []
    accepted_cond: Obj = next((c for c in conds if c.get("type") == "Accepted"), {})
    accepted = accepted_cond.get("status") == "True"
    return {"name": p["metadata"]["name"], "accepted": accepted,
            "message": None if accepted else accepted_cond.get("message")}


def pod_devices(pod: Obj, claims: dict[tuple[str, str], Obj]) -> list[Obj]:
    """The devices allocated to the pod's claims (``spec.resourceClaims`` order, then each claim's
    ``status.allocation.devices.results`` order), each as ``{"claim": <the pod's name for the claim>,
    "driver", "pool", "device"}``; a claim not allocated, or not reserved for this pod, adds none."""
    out: list[Obj] = []
    ns, uid = _key(pod)[0], (pod.get("metadata") or {}).get("uid")
    for pod_claim, name in pod_claim_names(pod):
        claim = claims.get((ns, name)) if isinstance(name, str) else None
        status = (claim or {}).get("status") or {}
        if not any(isinstance(r, dict) and r.get("uid") == uid for r in status.get("reservedFor") or []):
            continue
        for r in ((status.get("allocation") or {}).get("devices") or {}).get("results") or []:
            out.append({"claim": pod_claim, "driver": r.get("driver"), "pool": r.get("pool"),
                        "device": r.get("device")})
    return out


INPUT_SUFFIXES = (".yaml", ".yml", ".json")


def load_objects(files: Iterable[str], stdin: TextIO | None = None) -> list[Obj]:
    """The objects of each ``-f``: a file, ``-`` (``stdin``), or a directory (its ``.yaml``, ``.yml``
    and ``.json`` files, sorted by name, not recursing)."""
    out: list[Obj] = []
    for f in files:
        if f == "-":
            out.extend(text_documents((stdin if stdin is not None else sys.stdin).read(), "<stdin>"))
            continue
        path = Path(f)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and p.suffix in INPUT_SUFFIXES)
            if not found:
                raise LoadError(f"{f}: no .yaml, .yml or .json file in the directory")
            for p in found:
                out.extend(iter_documents(p))
        else:
            out.extend(iter_documents(path))
    return out


def format_table(r: SimulationReport, *, show_pods: bool = False) -> str:
    """The report as text. The unbound pods are grouped by reason; ``show_pods`` (``--show-pods``)
    adds every pod's line."""
    lines: list[str] = []
    if show_pods:
        lines += ["PODS", f"  {'NAMESPACE/NAME':40} {'NODE':20} MESSAGE"]
        for p in r.pods:
            msg = "(deleted)" if p["deleted"] else (p["message"] or "")
            lines.append(f"  {p['namespace'] + '/' + p['name']:40} {p['node'] or '<none>':20} {msg}")
        for t in r.terminal:
            lines.append(f"  {t['namespace'] + '/' + t['name']:40} {t['node'] or '<none>':20} ({t['phase']})")
        lines.append("")
    if r.unschedulable:
        lines += [f"UNBOUND PODS BY REASON ({sum(g['count'] for g in r.unschedulable)})"]
        for profile, groups in r.pending_by_profile.items():
            lines += [f"  {profile} ({sum(g['count'] for g in groups)})", f"  {'PODS':>6}  REASON"]
            for g in groups:
                lines.append(f"  {g['count']:>6}  {g['reason']}")
                if g["message"] and g["message"] != g["reason"]:
                    lines.append(f"  {'':>6}    e.g. {g['pods'][0]}: {g['message']}")
        lines.append("")
    lines += ["NODES", f"  {'NAME':20} {'PODS':>5}  CPU (requested/allocatable)   MEMORY"]
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
    terminal = f", {len(r.terminal)} terminal (not counted)" if r.terminal else ""
    lines += ["", f"{s['scheduled']}/{s['pods']} pods scheduled, {s['unschedulable']} unschedulable{terminal}, in "
                  f"{s['seconds']:.2f} s ({s['podsPerSecond']} pods/s)" + ("" if r.settled else
                                                                          "; the run did NOT settle (timeout)")]
    return "\n".join(lines)
