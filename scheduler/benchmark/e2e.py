"""``kopf-scheduler bench --mode e2e``: a scheduler_perf workload through the real operator.

Three processes, as in a real cluster, so no two share an interpreter (``processes`` starts and
stops them):

* the simulated cluster (``kopf-scheduler cluster``), serving HTTPS on 127.0.0.1;
* the operator (``kopf-scheduler run``: Kopf, the worker, ``/metrics``), whose peak RSS
  (``VmHWM``) is ``peakRssBytes``;
* this driver: it creates the CRD, the profile, the nodes and the pods through the API, 64 requests
  in flight (as fast as the cluster accepts them), runs the churn, and watches pods the way
  upstream's collector watches its informer: a measured pod counts when its ``spec.nodeName``
  first appears.

A volume workload's nodes get their CSINodes, and each pod its own claim and PV, created as
``CreatePodWithPersistentVolume`` creates them, one pod's requests in sequence (64 pods in flight):
the claim, its status (Bound: a create resets the status), the PV, its status, then the pod. One
difference: upstream's scheduler_perf runs a fake PV controller that never checks a binding, where
the simulated cluster runs a real one, so the PV's ``claimRef`` also carries the claim's uid (read
from the claim's create); without it the controller finds the claim misbound and marks it Lost. The
claim is Lost for a moment anyway (its PV does not exist yet when the controller first syncs it),
and bound again once the PV is created, before its pod is.

A DRA workload's objects go through ``/apis/resource.k8s.io/v1`` as upstream's ops create them
(``_dra_setup``): the test driver's nodes and their ResourceSlices, the DeviceClasses, the claim
templates, ``allocResourceClaims``' claims (created, then their allocation written to the status);
the pods name the template or the shared claims, and the cluster's resourceclaim controller makes
each pod's claim and fills in its ``resourceClaimStatuses``, as upstream's integration harness runs
the real controller. A steady-state workload's batches are created, watched until bound and deleted
(grace period 0) until its duration is up.

The newer workloads create labelled namespaces, tainted, named and extended-resource
nodes through the API; SchedulingWhileGated's gated pods are created and seen by the watch (each has
the SchedulingGated condition the API gives it: upstream's ``Attempted`` barrier) before the init
pods; a ``deletePods`` op lists the init namespace and DELETEs one pod per tick with default options
while the measured pods schedule, and is cancelled when they are all bound, as upstream's context is.

A PodGroup workload (``podgroups.py``) runs a cluster that serves PodGroups (kube-apiserver's
GenericWorkload gate) and an operator under the workload's feature gates with ``bench
--feature-gates`` over them; its PodGroups are created through ``scheduling.k8s.io/v1beta1``
before the operator starts, and its pods name them.

Attempt latency is the measured phase's part of ``scheduler_scheduling_attempt_duration_seconds``
scraped from the operator before and after. Every wait is bounded by ``time_limit``.

Each process's peak RSS is reported: the operator's as ``peakRssBytes`` (the figure the workload's
memory bound is about), the simulated cluster's as ``clusterPeakRssBytes`` (read before it is
stopped) and this driver's as ``driverPeakRssBytes`` (``ru_maxrss``: its own process, a fresh one
per run when ``bench`` spawns it).

Each process's CPU over the measured phase is reported too: ``operatorCpuSeconds``,
``clusterCpuSeconds`` (``/proc/PID/stat``, user + system) and ``driverCpuSeconds``
(``time.process_time``). Two cores run three busy processes, so their sum over the phase's seconds
says how near the machine was to its limit, and the largest which process set the pace.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import os
import random
import resource
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from scheduler.benchmark import declaredfeatures, processes
from scheduler.benchmark.batching import signed_pod
from scheduler.benchmark.core import RunResult
from scheduler.benchmark.core_dra import (
    BINDING_OP_POLL,
    BINDING_OP_SECONDS,
    UNSCHEDULED_STABLE_SECONDS,
    device_statuses,
)
from scheduler.benchmark.dynamicresources import (
    DRA_TEMPLATES,
    Dra,
    dra_claim,
    dra_device_classes,
    dra_init_allocations,
    dra_node,
    dra_node_name,
    dra_pod,
    dra_selector_allocations,
    dra_selector_claim,
    dra_slice,
    dra_template_slices,
)
from scheduler.benchmark.podgroups import GROUP_API, all_group_objects, pod_priorities, prepare_pod, refusal
from scheduler.benchmark.sink import pod_objects, wait_until
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import SERVICES, TEMPLATES, extended_resource_pod, make_node, service_object
from scheduler.benchmark.throughput import histogram_quantile, samples, summary
from scheduler.benchmark.volumes import csi_node, volume_objects, with_claim
from scheduler.benchmark.workloads import (
    WORKLOADS,
    Churn,
    Workload,
    init_batches,
    init_namespaces,
    namespace_objects,
    workload_nodes,
)
from scheduler.errors import ClientError, ConflictError
from scheduler.features import parse_feature_gates
from scheduler.framework.decision import DEFAULT_CAPACITY
from scheduler.kubeapi import KubeClient, load_config, new_event_loop
from scheduler.kubeapi.client import gather_limited
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path
from scheduler.profiles.explanation_crd import API_VERSION as EXPLANATION_API
from scheduler.profiles.explanation_crd import KIND as EXPLANATION_KIND
from scheduler.profiles.explanation_crd import crd as explanation_crd
from scheduler.profiles.explanation_crd import explanations_path

__all__ = ["run_e2e"]

Obj = dict[str, Any]
IN_FLIGHT = 64


def _scrape(port: int, token: str | None) -> tuple[list[float], list[float]]:
    # the secure port: the admin token may read it. A generous timeout: an operator still busy with
    # the run's last events (SchedulingWhileGated's on a loaded machine) answered after the default 10 s
    code, text = processes.served(port, "/metrics", token, timeout=120)
    if code != 200:
        raise RuntimeError(f"GET /metrics: {code}: {text[:200]}")
    counts: dict[float, float] = {}
    for line in text.splitlines():
        if line.startswith("scheduler_scheduling_attempt_duration_seconds_bucket{"):
            le = line.split('le="', 1)[1].split('"', 1)[0]
            counts[float(le)] = counts.get(float(le), 0.0) + float(line.rsplit(" ", 1)[1])
    bounds = sorted(counts)
    return bounds, [counts[b] for b in bounds]


def _ready(port: int) -> bool:
    try:
        return processes.served(port, "/readyz", timeout=2)[0] == 200
    except OSError:
        return False


class _Watch:
    """Counts pods as they get ``spec.nodeName`` (upstream's collector, over a watch)."""

    def __init__(self, api: KubeClient, measured_ns: str) -> None:
        self.api, self.ns = api, measured_ns
        self.bound: set[str] = set()
        self.measured_times: list[float] = []
        self.seen: Counter[str] = Counter()       # pods seen created, by namespace (a barrier's count)

    async def run(self, rv: str) -> None:
        while True:
            try:
                async for kind, obj in self.api.watch("v1", "Pod", resource_version=rv, timeout=600,
                                                      params={"allowWatchBookmarks": "true"}):
                    meta = obj.get("metadata") or {}
                    rv = meta.get("resourceVersion") or rv
                    if kind == "ADDED":
                        self.seen[meta.get("namespace", "")] += 1
                    if kind in ("ADDED", "MODIFIED") and (obj.get("spec") or {}).get("nodeName"):
                        uid = meta.get("uid", "")
                        if uid not in self.bound:
                            self.bound.add(uid)
                            if meta.get("namespace") == self.ns:
                                self.measured_times.append(time.monotonic())
            except ClientError:
                await asyncio.sleep(0.1)      # a 410 or a drop: resume from the last seen version


async def _create_all(api: KubeClient, path_of: Any, objs: Iterator[Obj]) -> int:
    """POST each of ``objs``, ``IN_FLIGHT`` at a time; how many failed. ``IN_FLIGHT`` workers take
    the objects as they go (not a task and a built object per pod up front: 10,000 of each before
    the first request), and skip decoding the created objects, which nobody reads: the driver
    shares the cores with the operator and the cluster it measures."""
    it = iter(objs)
    failed = 0

    async def worker() -> None:
        nonlocal failed
        for o in it:
            try:
                await api.request("POST", path_of(o), o, decode=False)
            except Exception:
                failed += 1
    await asyncio.gather(*(worker() for _ in range(IN_FLIGHT)))
    return failed


def _pod_path(o: Obj) -> str:
    return f"/api/v1/namespaces/{o['metadata']['namespace']}/pods"


_MERGE = "application/merge-patch+json"


async def _pod_with_volume(api: KubeClient, w: Workload, pod: Obj, i: int) -> None:
    """``CreatePodWithPersistentVolume`` for one pod: the claim and the PV, each created and then
    given its Bound status, then the pod mounting the claim."""
    assert w.volumes is not None
    ns = pod["metadata"]["namespace"]
    pvc, pv = volume_objects(w.volumes, ns, i)
    claims = f"/api/v1/namespaces/{ns}/persistentvolumeclaims"
    created = await api.request("POST", claims, pvc)
    await api.request("PATCH", f"{claims}/{pvc['metadata']['name']}/status", {"status": pvc["status"]},
                      content_type=_MERGE)
    # The claim's uid in the PV's claimRef: the simulated cluster runs a PV controller, which would
    # find a claimRef without it naming another claim (ClaimMisbound) and mark the claim Lost.
    pv["spec"]["claimRef"]["uid"] = created["metadata"]["uid"]
    await api.request("POST", "/api/v1/persistentvolumes", pv)
    await api.request("PATCH", f"/api/v1/persistentvolumes/{pv['metadata']['name']}/status",
                      {"status": pv["status"]}, content_type=_MERGE)
    await api.request("POST", _pod_path(pod), with_claim(pod, i))


async def _create_pods(api: KubeClient, w: Workload, size: Size, tmpl: str, namespace: str, count: int,
                      volumes: bool) -> int:
    """Create ``count`` pods of ``tmpl`` (with their volumes when ``volumes``, after the claims they
    share for a DRA workload with ``claim_ref``, in their PodGroups for a PodGroup workload); how many
    failed."""
    if w.dra is not None:
        dra = w.dra
        if dra.claim_ref:
            await _create_all(api, lambda o: f"{RESOURCE}/namespaces/{namespace}/resourceclaims",
                              (dra_claim(k, namespace) for k in range((count + 4) // 5)))
        return await _create_all(api, _pod_path, (dra_pod(dra, pod, i) for i, pod in
                                                  enumerate(_for_api(pod_objects(tmpl, namespace, count)))))
    if w.extended_resource:
        return await _create_all(api, _pod_path, (extended_resource_pod(pod, i) for i, pod in
                                                  enumerate(_for_api(pod_objects(tmpl, namespace, count)))))
    if w.groups is not None:
        groups = w.groups
        return await _create_all(api, _pod_path, _for_api(
            prepare_pod(groups, pod, i, measured=namespace == w.namespace, nodes=size.nodes, init_pods=size.init_pods)
            for i, pod in enumerate(pod_objects(tmpl, namespace, count))))
    if w.signature_batch:
        return await _create_all(api, _pod_path, _for_api(
            signed_pod(pod, i, w.signature_batch) for i, pod in enumerate(pod_objects(tmpl, namespace, count))))
    if not volumes:
        return await _create_all(api, _pod_path, _for_api(pod_objects(tmpl, namespace, count)))
    coros = [_pod_with_volume(api, w, pod, i) for i, pod in enumerate(_for_api(pod_objects(tmpl, namespace, count)))]
    return sum(isinstance(r, BaseException) for r in await gather_limited(IN_FLIGHT, coros))


def _for_api(objs: Iterator[Obj]) -> Iterator[Obj]:
    # The API assigns uids. scheduler_perf disables the Priority admission plugin and writes
    # spec.priority; with admission on, the same priority comes from a PriorityClass of that value
    # (a PodGroup's too: 1.37's Priority admission resolves a PodGroup's as a pod's).
    # Changed in place: ``pod_objects`` yields a fresh copy of the template for every pod.
    for o in objs:
        o["metadata"].pop("uid", None)
        prio = o["spec"].pop("priority", None)
        if prio:
            o["spec"]["priorityClassName"] = f"priority-{prio}"
        yield o


RESOURCE = "/apis/resource.k8s.io/v1"


async def _dra_setup(api: KubeClient, w: Workload, dra: Dra, size: Size, rng: random.Random) -> None:
    """The DRA ops through the API, as upstream's run them against its apiserver: the DeviceTaintRules,
    the nodes with the test driver and one ResourceSlice each (``createResourceDriver``), the
    DeviceClasses, the claim template in each pod namespace, and ``allocResourceClaims``' claims,
    created and then given their allocation with a status write (``dynamicresources.dra_init_allocations``:
    a random node with a free device each, its first free one). The cluster's resourceclaim
    controller makes each pod's claim from the template; nothing here stands in for it."""
    await _create_all(api, lambda o: f"{RESOURCE}/devicetaintrules",
                      (copy.deepcopy(DRA_TEMPLATES[rule]) for rule in dra.taint_rules))
    await _create_all(api, lambda o: "/api/v1/nodes", (dra_node(i) for i in range(size.nodes)))
    if dra.driver:
        await _create_all(api, lambda o: f"{RESOURCE}/resourceslices",
                          (dra_slice(dra_node_name(i), dra.max_claims_per_node, dra.binding is not None)
                           for i in range(size.nodes)))
    for tmpl_name in dra.slices:
        await _create_all(api, lambda o: f"{RESOURCE}/resourceslices",
                          (body for k in range(size.resource_slices) for body in dra_template_slices(tmpl_name, k)))
    await _create_all(api, lambda o: f"{RESOURCE}/deviceclasses", iter(dra_device_classes(dra)))
    if dra.claim_template is not None:
        for ns in (w.init_namespace, w.namespace):
            await api.request("POST", f"{RESOURCE}/namespaces/{ns}/resourceclaimtemplates",
                              copy.deepcopy(DRA_TEMPLATES[dra.claim_template]))
    allocations = dra_init_allocations(dra, size, rng)

    async def allocated(k: int, allocation: Obj) -> None:
        claims = f"{RESOURCE}/namespaces/init/resourceclaims"
        await api.request("POST", claims, dra_claim(k, "init"))
        await api.request("PATCH", f"{claims}/test-claim-{k}/status", {"status": {"allocation": allocation}},
                          content_type=_MERGE)

    async def selector_allocated(k: int, allocation: Obj) -> None:
        claims = f"{RESOURCE}/namespaces/init/resourceclaims"
        body = dra_selector_claim(k)
        await api.request("POST", claims, body)
        await api.request("PATCH", f"{claims}/{body['metadata']['name']}/status",
                          {"status": {"allocation": allocation}}, content_type=_MERGE)

    coros = [allocated(k, a) for k, a in allocations]
    if dra.init_fill == "selector":
        coros += [selector_allocated(k, a) for k, a in dra_selector_allocations(size)]
    failed = [r for r in await gather_limited(IN_FLIGHT, coros) if isinstance(r, BaseException)]
    if failed:
        raise RuntimeError(f"allocResourceClaims: {len(failed)} claims failed, the first: {failed[0]}")


async def _dra_state(api: KubeClient, namespace: str
                     ) -> tuple[dict[str, str], dict[str, tuple[str, ...]], dict[str, tuple[str, ...]]]:
    """After the measured phase, as the API has them: the measured namespace's bound pods and their
    nodes, each one's devices (of the claims reserved for it) and every allocated claim's devices
    (the same fields as core mode's ``RunResult``)."""
    pods = (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods"))["items"]
    bound = {p["metadata"]["uid"]: f"{namespace}/{p['metadata']['name']}" for p in pods
             if (p.get("spec") or {}).get("nodeName")}
    placements = {f"{namespace}/{p['metadata']['name']}": p["spec"]["nodeName"] for p in pods
                  if (p.get("spec") or {}).get("nodeName")}
    claims: dict[str, list[str]] = {}
    allocations: dict[str, tuple[str, ...]] = {}
    for c in (await api.request("GET", f"{RESOURCE}/resourceclaims"))["items"]:
        status = c.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        if not status.get("allocation"):
            continue
        devices = tuple(f"{r['driver']}/{r['pool']}/{r['device']}" for r in results)
        allocations[f"{c['metadata']['namespace']}/{c['metadata']['name']}"] = devices
        for ref in status.get("reservedFor") or ():
            if ref.get("uid") in bound:
                claims.setdefault(bound[ref["uid"]], []).extend(devices)
    return placements, {k: tuple(sorted(v)) for k, v in claims.items()}, allocations


async def _steady_state(api: KubeClient, w: Workload, size: Size, watch: _Watch, deadline: float) -> None:
    """``createPodsSteadily`` through the API: ``size.pods`` pods; once all are bound they are deleted
    (grace period 0) and as many created anew, until ``deadline``. Their claims go with them (the
    cluster's resourceclaim controller and garbage collector)."""
    assert w.dra is not None
    batch = 0
    while time.monotonic() < deadline:
        pods = [dra_pod(w.dra, pod, i) for i, pod in
                enumerate(_for_api(pod_objects(w.measured, w.namespace, size.pods, tag=f"{batch}-")))]
        target = len(watch.measured_times) + size.pods
        await _create_all(api, _pod_path, iter(pods))
        if not await wait_until(lambda t=target: len(watch.measured_times) >= t,
                                max(deadline - time.monotonic(), 0.0), 0.005):
            return
        await gather_limited(IN_FLIGHT, [api.request("DELETE", f"{_pod_path(p)}/{p['metadata']['name']}",
                                                     {"gracePeriodSeconds": 0}) for p in pods])
        batch += 1


async def _delete_pods(api: KubeClient, namespace: str, rate: float) -> None:
    """upstream's ``deletePods`` with ``deletePodsPerSecond``: the pods of ``namespace`` as listed now,
    one DELETE per tick (default options: each pod's own grace period; a finalizer keeps the pod,
    with its deletionTimestamp), each waited for before the next tick, as upstream's loop does."""
    pods = (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods"))["items"]
    start = time.monotonic()
    for k, pod in enumerate(pods, 1):
        await asyncio.sleep(max(start + k / rate - time.monotonic(), 0.0))
        with contextlib.suppress(ClientError):
            await api.request("DELETE", f"/api/v1/namespaces/{namespace}/pods/{pod['metadata']['name']}")


async def _placements(api: KubeClient, namespace: str) -> dict[str, str]:
    """The measured namespace's bound pods and their nodes, as the API has them at the end."""
    pods = (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods"))["items"]
    return {f"{namespace}/{p['metadata']['name']}": p["spec"]["nodeName"] for p in pods
            if (p.get("spec") or {}).get("nodeName")}


async def _pod_counts(api: KubeClient, w: Workload, size: Size) -> dict[str, int]:
    """``core._pod_counts`` from the API: the init pods gone or terminating, the gated pods bound."""
    assert w.deleting is not None
    init = (await api.request("GET", f"/api/v1/namespaces/{w.init_namespace}/pods"))["items"]
    gated = (await api.request("GET", f"/api/v1/namespaces/{w.deleting.gated_namespace}/pods"))["items"] \
        if w.deleting.gated is not None else []
    terminating = [p for p in init if p["metadata"].get("deletionTimestamp")]
    return {"initGone": size.init_pods - len(init), "initTerminating": len(terminating),
            "initTerminatingBound": sum(1 for p in terminating if (p.get("spec") or {}).get("nodeName")),
            "gated": len(gated), "gatedBound": sum(1 for p in gated if (p.get("spec") or {}).get("nodeName"))}


async def _churn(api: KubeClient, churn: Churn, stop: asyncio.Event) -> None:
    n = 0
    previous: list[str] = []
    while not stop.is_set():
        with contextlib.suppress(ClientError):
            if churn.mode == "recreate":
                for path in previous:
                    await api.request("DELETE", path)
                previous = []
            for t in churn.templates:
                if t == "node":
                    node = make_node(f"node-churn-{n}", pods="0")
                    await api.request("POST", "/api/v1/nodes", node)
                    previous.append(f"/api/v1/nodes/{node['metadata']['name']}")
                elif t in SERVICES:
                    svc = service_object(t, "churn", n)
                    await api.request("POST", "/api/v1/namespaces/churn/services", svc)
                    previous.append(f"/api/v1/namespaces/churn/services/{svc['metadata']['name']}")
                else:
                    (body,) = _for_api(pod_objects(t, "churn", 1, n, tag="churn-"))
                    await api.request("POST", "/api/v1/namespaces/churn/pods", body)
                    previous.append(f"/api/v1/namespaces/churn/pods/{body['metadata']['name']}")
        n += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), churn.interval)


async def _explain_stream(api: KubeClient, w: Workload, rate: float, stop: asyncio.Event, limit: int) -> int:
    """SchedulingExplanations at ``rate`` per second (at most ``limit``) until ``stop``: each a pod of
    the measured template, asked with TTL 0, so the leader answers and deletes it; the cost of a
    scheduler that is answering explanations while it schedules. Returns how many were created."""
    (body,) = _for_api(pod_objects(w.measured, w.namespace, 1, tag="explain-"))
    template = {"metadata": {"labels": (body["metadata"].get("labels") or {})}, "spec": body["spec"]}
    created = 0
    for n in range(limit):
        with contextlib.suppress(ClientError):
            await api.request("POST", explanations_path(w.namespace), {
                "apiVersion": EXPLANATION_API, "kind": EXPLANATION_KIND,
                "metadata": {"name": f"bench-{n}"}, "spec": {"template": template, "ttlSecondsAfterFinished": 0}})
            created += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 1.0 / rate)
        if stop.is_set():
            break
    return created


def _cpu_seconds(pid: int) -> float | None:
    """The process's user + system CPU seconds (``/proc/PID/stat``), None when it cannot be read."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return None


async def _run(w: Workload, size: Size, seed: int, time_limit: float, home: Path,
               decision_records: int = DEFAULT_CAPACITY, feature_gates: str = "",
               explanations: float = 0.0) -> RunResult:
    if (why := refusal(w.name, w.groups)) is not None:
        raise ValueError(why)
    gates = {**dict(w.feature_gates), **parse_feature_gates(feature_gates)}
    if (why := declaredfeatures.refusal(w.name, w.node_features, gates)) is not None:
        raise ValueError(why)
    # a NodeDeclaredFeatures workload's mock features, registered in the operator (declaredfeatures.py)
    mocked = w.node_features.mocked(gates) if w.node_features is not None else 0
    feature_gates = _gates(w, feature_gates)
    kubeconfig = home / "kubeconfig"
    # kube-apiserver serves PodGroups with its own GenericWorkload gate
    cluster, _ = processes.start_cluster(kubeconfig, feature_gates="GenericWorkload=true" if w.groups else "")
    operator: subprocess.Popen[str] | None = None
    try:
        async with KubeClient(load_config(str(kubeconfig)), limit=IN_FLIGHT + 8, timeout=60) as api:
            await _create_cluster(api, w, size, seed, gates)
            metrics_port, health_port = processes.free_port(), processes.free_port()
            log = (home / "operator.log").open("w")
            args = ("run", "--kubeconfig", str(kubeconfig), "--metrics-bind-address", f"127.0.0.1:{metrics_port}",
                    "--health-bind-address", f"127.0.0.1:{health_port}", *processes.SCHEDULER_PERF_CLIENT,
                    "--decision-records", str(decision_records),
                    *(("--feature-gates", feature_gates) if feature_gates else ()))
            operator = subprocess.Popen(
                declaredfeatures.operator_cli(mocked, *args) if mocked else processes.cli(*args),
                stdout=log, stderr=subprocess.STDOUT, text=True)
            if not await wait_until(lambda: _ready(metrics_port), 120, 0.05):
                raise RuntimeError(f"the operator did not become ready; see {home / 'operator.log'}")
            rv = (await api.request("GET", "/api/v1/pods", params={"limit": "1"}))["metadata"]["resourceVersion"]
            watch = _Watch(api, w.namespace)
            watcher = asyncio.create_task(watch.run(rv))
            deleting = w.deleting
            await _feed_init(api, w, size, watch, time_limit)
            deleter = asyncio.create_task(_delete_pods(api, w.init_namespace, deleting.rate)) \
                if deleting is not None else None
            before = _scrape(metrics_port, api.config.bearer())
            stop = asyncio.Event()
            churner = asyncio.create_task(_churn(api, w.churn, stop)) if w.churn else None
            explainer = asyncio.create_task(_explain_stream(api, w, explanations, stop,
                                                            int(explanations * time_limit) + 1)) \
                if explanations > 0 else None
            cpu0, cluster0, driver0 = _cpu_seconds(operator.pid), _cpu_seconds(cluster.pid), time.process_time()
            t0 = time.monotonic()
            steady = w.dra is not None and w.dra.steady > 0
            complete, end = await _measured_phase(api, w, size, watch, t0, time_limit)
            cpu1, cluster1, driver1 = _cpu_seconds(operator.pid), _cpu_seconds(cluster.pid), time.process_time()
            stop.set()
            if churner is not None:
                await churner
            explained: dict[str, int] = {}
            if explainer is not None:
                # Created, and not answered yet: an answered one (TTL 0) is deleted within a sweep (1 s).
                explained["created"] = await explainer
                await asyncio.sleep(2.0)
                left = await api.request("GET", explanations_path(w.namespace))
                explained["unanswered"] = sum(1 for e in left.get("items") or [] if not e.get("status"))
            if deleter is not None:         # the workload is over: upstream cancels its context
                deleter.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await deleter
            after = _scrape(metrics_port, api.config.bearer())
            rss = processes.peak_rss(operator.pid)
            cluster_rss = processes.peak_rss(cluster.pid)
            placements, claims, allocations, others = await _placements_after(api, w, size)
            counts = await _pod_counts(api, w, size) if deleting is not None else {}
            watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await watcher
    finally:
        processes.stop(operator)
        processes.stop(cluster)
    bounds = after[0]
    delta = [a - (before[1][i] if i < len(before[1]) else 0.0) for i, a in enumerate(after[1])]
    binds = watch.measured_times
    rates = samples(t0, binds, None if complete and not steady else end)
    return RunResult(
        workload=w.name, mode="e2e", size=size, throughput=summary(rates), samples=len(rates),
        attempt_p50=histogram_quantile(0.5, bounds, delta), attempt_p99=histogram_quantile(0.99, bounds, delta),
        peak_rss=rss, seconds=(binds[-1] if complete and binds and not steady else end) - t0, bound=len(binds),
        complete=complete, placements=placements, claims=claims, allocations=allocations, pods=counts,
        init_placements=others,
        operator_cpu_seconds=cpu1 - cpu0 if cpu0 is not None and cpu1 is not None else None,
        cluster_cpu_seconds=cluster1 - cluster0 if cluster0 is not None and cluster1 is not None else None,
        driver_cpu_seconds=driver1 - driver0,
        cluster_peak_rss=cluster_rss, driver_peak_rss=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        explanations=explained or None)


def _gates(w: Workload, given: str) -> str:
    """The operator's ``--feature-gates``: the workload's ``featureGates``, then ``given`` (``bench
    --feature-gates``), whose values win as a later entry of the flag does."""
    own = ",".join(f"{name}={str(on).lower()}" for name, on in w.feature_gates)
    return ",".join(g for g in (own, given) if g)


async def _create_cluster(api: KubeClient, w: Workload, size: Size, seed: int,
                          gates: dict[str, bool] | None = None) -> None:
    """The CRD and the workload's profile, namespaces, PriorityClasses, nodes (with CSINodes), DRA
    objects and Services, created through the API before the operator starts."""
    for c in (crd(), explanation_crd()):
        await api.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c)
    await api.request("POST", profiles_path(), {
        "apiVersion": API_VERSION, "kind": KIND,
        "metadata": {"name": "bench"}, "spec": {"schedulerName": "default-scheduler", **(w.profile or {})}})
    labelled = namespace_objects(w, size)
    plain = {*init_namespaces(w, size), w.init_namespace, w.namespace, "churn",
             *([w.deleting.gated_namespace] if w.deleting is not None else []),
             *(ns for _, ns, _ in init_batches(w, size))}
    plain -= {ns["metadata"]["name"] for ns in labelled}
    for body in [*labelled, *({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}
                              for ns in sorted(plain))]:
        await api.request("POST", "/api/v1/namespaces", body)
    prios = {t["spec"].get("priority") or 0 for t in TEMPLATES.values()} - {0}
    groups: list[Obj] = []
    if w.groups is not None:
        prios |= pod_priorities(w.groups, w.init, size.nodes, size.init_pods, w.measured)
        groups = list(_for_api(iter(all_group_objects(w.groups, init_namespace=w.init_namespace,
                                                      namespace=w.namespace, init_pods=size.init_pods,
                                                      pods=size.pods))))
        prios |= {int(g["spec"]["priorityClassName"].removeprefix("priority-")) for g in groups
                  if g["spec"].get("priorityClassName")}
    for prio in sorted(prios):
        await api.request("POST", "/apis/scheduling.k8s.io/v1/priorityclasses", {
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": f"priority-{prio}"}, "value": prio})
    rng = random.Random(seed)
    strategy = w.node_strategy
    extra = dict(strategy.node_allocatable) if strategy is not None else None
    nodes = workload_nodes(w, size, rng, extra, gates=gates) if w.dra is None else \
        [make_node(f"scheduler-perf-{i}") for i in range(w.dra.nodes_without_dra)]
    await _create_all(api, lambda o: "/api/v1/nodes", iter(nodes))
    if w.dra is not None:
        await _dra_setup(api, w, w.dra, size, rng)
    if strategy is not None:
        await _create_all(api, lambda o: "/apis/storage.k8s.io/v1/csinodes",
                          (csi_node(f"scheduler-perf-{i}", strategy) for i in range(size.nodes)))
    for k, name in enumerate(w.services):
        await api.request("POST", f"/api/v1/namespaces/{w.namespace}/services",
                          service_object(name, w.namespace, k))
    if groups and await _create_all(
            api, lambda o: f"/apis/{GROUP_API}/namespaces/{o['metadata']['namespace']}/podgroups", iter(groups)):
        raise RuntimeError(f"{w.name}: the API refused some of its PodGroups")


async def _feed_init(api: KubeClient, w: Workload, size: Size, watch: _Watch, time_limit: float) -> None:
    """The unmeasured ops: the gated pods, the init pods, and the wait for them to be bound."""
    deleting = w.deleting
    if deleting is not None and deleting.gated is not None:
        # the gated pods (skipWaitToCompletion), then upstream's barrier (Attempted): each has
        # its PodScheduled condition from the API's create (SchedulingGated) once it is seen
        gated_ns = deleting.gated_namespace
        await _create_all(api, _pod_path, _for_api(pod_objects(deleting.gated, gated_ns, size.gated_pods)))
        await wait_until(lambda: watch.seen[gated_ns] >= size.gated_pods, time_limit, 0.05)
    for tmpl, ns, count in init_batches(w, size):
        await _create_pods(api, w, size, tmpl, ns, count, w.volumes is not None and w.volumes.init)
    if deleting is None or deleting.wait:
        init_total = sum(count for _, _, count in init_batches(w, size))
        await wait_until(lambda: len(watch.bound) >= init_total, time_limit, 0.05)


async def _measured_phase(api: KubeClient, w: Workload, size: Size, watch: _Watch, t0: float,
                          time_limit: float) -> tuple[bool, float]:
    """The measured pods created (or created steadily), and waited for: (complete, end time)."""
    if w.dra is not None and w.dra.steady > 0:
        await _steady_state(api, w, size, watch, t0 + w.dra.steady)
        # upstream fails a steady run only when none was bound
        return bool(watch.measured_times), t0 + w.dra.steady
    await _create_pods(api, w, size, w.measured, w.namespace, size.pods, w.volumes is not None)
    if w.dra is not None and w.dra.binding is not None:
        limit = min(BINDING_OP_SECONDS, time_limit)
        await _update_device_conditions(api, w.namespace, w.dra.binding, limit)
        return await _check_pod_scheduled(api, w.namespace, w.dra.scheduled, limit), time.monotonic()
    complete = await wait_until(lambda: len(watch.measured_times) >= size.pods, time_limit, 0.05)
    return complete, time.monotonic()


async def _update_device_conditions(api: KubeClient, namespace: str, condition: tuple[str, str], limit: float
                                    ) -> None:
    """``updateDeviceConditions`` through the API: once the namespace has claims, each one, when its
    allocation has a device with binding conditions, gets the condition in ``status.devices``
    (a status update, polled every second for at most ``limit`` seconds in all)."""
    deadline = time.monotonic() + limit
    path = f"{RESOURCE}/namespaces/{namespace}/resourceclaims"
    names: list[str] = []
    while not names:
        names = [c["metadata"]["name"] for c in (await api.request("GET", path))["items"]]
        if not names and time.monotonic() > deadline:
            raise RuntimeError(f"no claims found in namespace {namespace} within {limit:g}s")
        if not names:
            await asyncio.sleep(BINDING_OP_POLL)
    for name in names:
        while True:
            claim = await api.request("GET", f"{path}/{name}")
            allocation = (claim.get("status") or {}).get("allocation") or {}
            devices = device_statuses(allocation, condition)
            if devices:
                claim["status"]["devices"] = [*(claim["status"].get("devices") or ()), *devices]
                try:
                    await api.request("PUT", f"{path}/{name}/status", claim)
                    break
                except ConflictError:
                    # The scheduler wrote the claim meanwhile (its reservation): read it again, as
                    # a driver's retry-on-conflict does.
                    pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no devices found in claim {namespace}/{name} within {limit:g}s")
            await asyncio.sleep(BINDING_OP_POLL)


async def _check_pod_scheduled(api: KubeClient, namespace: str, scheduled: bool, limit: float) -> bool:
    """``checkPodScheduled`` through the API: every pod of the namespace bound (``scheduled``), or
    every one unbound for ``UNSCHEDULED_STABLE_SECONDS`` in a row; polled every second."""
    deadline = time.monotonic() + limit
    stable_since: float | None = None
    while time.monotonic() <= deadline:
        pods = (await api.request("GET", f"/api/v1/namespaces/{namespace}/pods"))["items"]
        if all(bool((p.get("spec") or {}).get("nodeName")) == scheduled for p in pods):
            if scheduled:
                return True
            stable_since = stable_since if stable_since is not None else time.monotonic()
            if time.monotonic() - stable_since >= UNSCHEDULED_STABLE_SECONDS:
                return True
        else:
            stable_since = None
        await asyncio.sleep(BINDING_OP_POLL)
    return False


async def _placements_after(api: KubeClient, w: Workload, size: Size
                            ) -> tuple[dict[str, str], dict[str, Any], dict[str, Any], dict[str, str]]:
    """(measured placements, claims, allocations, the other pods' placements): the DRA state of a
    DRA workload; the placements of a small run, which the tests read."""
    placements, claims, allocations = await _dra_state(api, w.namespace) if w.dra is not None else ({}, {}, {})
    others: dict[str, str] = {}
    if w.dra is None and size.pods + size.init_pods <= 1000:     # small runs: the tests read them
        placements = await _placements(api, w.namespace)
        for ns in {*init_namespaces(w, size), w.init_namespace} - {w.namespace}:
            others.update(await _placements(api, ns))
    return placements, claims, allocations, others


def run_e2e(workload: str, size: Size, *, seed: int = 0, time_limit: float = 900.0,
            decision_records: int = DEFAULT_CAPACITY, feature_gates: str = "", explanations: float = 0.0
            ) -> RunResult:
    """``explanations``: SchedulingExplanations created per second over the measured phase."""
    # The driver runs on the loop the operator and the cluster run on (uvloop where installed): on
    # asyncio's own, its TLS reads and writes cost about a fifth of its CPU, on a machine whose two
    # cores the three processes share.
    with tempfile.TemporaryDirectory(prefix="kopf-scheduler-bench-") as home, \
            asyncio.Runner(loop_factory=new_event_loop) as runner:
        return runner.run(_run(WORKLOADS[workload], size, seed, time_limit, Path(home), decision_records,
                               feature_gates, explanations))
