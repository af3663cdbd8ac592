"""scheduler_perf's workloads: upstream's node and pod templates, sizes, churn and thresholds.

Each ``Workload`` is upstream's ``workloadTemplate`` reduced to what kopf-scheduler needs: create
``nodes`` nodes (the default node: 4 CPU, 32Gi, 110 pods, Ready; a zone label drawn from
``zones`` as ``labelNodePrepareStrategy`` does), schedule ``init_pods`` pods of ``init``
(not measured), then ``pods`` pods of ``measured`` (measured), while ``churn`` creates or recreates
objects every ``interval`` seconds. The templates are upstream's ``templates/*.yaml`` with the same
requests, labels, selectors and namespaces (``sched-0`` for init pods and ``sched-1`` for measured
ones where upstream names them).

Nodes carry ``kubernetes.io/hostname`` (as a kubelet sets it), so hostname-keyed affinity really
constrains placement. ``threshold`` is upstream's CI bar for the thresholded size (minimum average
pods/s; ``e2e_threshold`` the end-to-end one); ``sizes`` lists the sizes the issue names, the first
one being the default and the thresholded one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["SERVICES", "TEMPLATES", "WORKLOADS", "Churn", "Size", "Workload", "make_node", "service_object", "template"]

Obj = dict[str, Any]
ZONE = "topology.kubernetes.io/zone"
PAUSE = "registry.k8s.io/pause:3.10.1"


def _pod(prefix: str, *, cpu: str = "100m", memory: str = "500Mi", labels: dict[str, str] | None = None,
         priority: int | None = None, spec: Obj | None = None) -> Obj:
    body: Obj = {"containers": [{"name": "pause", "image": PAUSE, "ports": [{"containerPort": 80}],
                                 "resources": {"requests": {"cpu": cpu, "memory": memory},
                                               "limits": {"cpu": cpu, "memory": memory}}}],
                 **(spec or {})}
    if priority is not None:
        body["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": prefix, "labels": labels or {}},
            "spec": body}


def _term(labels: dict[str, str], key: str, namespaces: list[str] | None = None) -> Obj:
    t: Obj = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    if namespaces is not None:
        t["namespaces"] = namespaces
    return t


HOST = "kubernetes.io/hostname"
SCHED_NS = ["sched-1", "sched-0"]

# upstream's templates/*.yaml
TEMPLATES: dict[str, Obj] = {
    "pod-default": _pod("pod-"),
    "pod-low-priority": _pod("low-priority-pod-", cpu="900m", priority=0,
                             spec={"terminationGracePeriodSeconds": 0}),
    "pod-high-priority": _pod("high-priority-pod-", cpu="3000m", priority=10),
    "pod-large-cpu": _pod("large-cpu-pod-", cpu="9"),
    "pod-high-priority-large-cpu": _pod("large-cpu-pod-", cpu="9", priority=10),
    "pod-with-node-affinity": _pod("node-affinity-", spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}}),
    "pod-with-topology-spreading": _pod("spreading-pod-", labels={"color": "blue"}, spec={
        "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"color": "blue"}}}]}),
    "pod-with-preferred-topology-spreading": _pod("spreading-pod-", labels={"color": "blue"}, spec={
        "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"color": "blue"}}}]}),
    "pod-with-pod-anti-affinity": _pod("anti-affinity-pod-", labels={"color": "green"}, spec={"affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term({"color": "green"}, HOST, SCHED_NS)]}}}),
    "pod-with-pod-affinity": _pod("affinity-pod-", labels={"color": "blue"}, spec={"affinity": {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term({"color": "blue"}, ZONE, SCHED_NS)]}}}),
    "pod-with-preferred-pod-affinity": _pod("preferred-affinity-pod-", labels={"color": "red"}, spec={"affinity": {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": _term({"color": "red"}, HOST, SCHED_NS), "weight": 1}]}}}),
    "pod-with-preferred-pod-anti-affinity": _pod("preferred-anti-affinity-pod-", labels={"color": "yellow"},
                                                 spec={"affinity": {"podAntiAffinity": {
                                                     "preferredDuringSchedulingIgnoredDuringExecution": [
                                                         {"podAffinityTerm": _term({"color": "yellow"}, HOST,
                                                                                   SCHED_NS), "weight": 1}]}}}),
}


# templates/pod-with-label.yaml: no requests, selected by templates/service.yaml.
TEMPLATES["pod-with-label"] = {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"generateName": "pod-", "labels": {"app": "scheduler-perf"}},
                               "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}

# Objects other than pods, created with ``createAny`` or churned: upstream's templates/service.yaml
# and templates/churn/service-default.yaml.
SERVICES: dict[str, Obj] = {
    "service": {"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-"},
                "spec": {"selector": {"app": "scheduler-perf"},
                         "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]}},
    "service-churn": {"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-churn-"},
                      "spec": {"selector": {"app": "foo"},
                               "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]}},
}


def service_object(name: str, namespace: str, n: int = 0) -> Obj:
    """Service template ``name`` as an object named as generateName would (``service-0``, ...)."""
    base = SERVICES[name]
    return {**base, "metadata": {"name": f"{base['metadata']['generateName']}{n}", "namespace": namespace}}


def template(name: str) -> Obj:
    return TEMPLATES[name]


def make_node(name: str, labels: dict[str, str] | None = None, *, pods: str = "110", cpu: str = "4",
              memory: str = "32Gi") -> Obj:
    """upstream's ``node-default.yaml`` (``churn/node-default.yaml`` is ``pods="0"`` and nothing else)."""
    capacity = {"pods": pods, "cpu": cpu, "memory": memory} if pods != "0" else {"pods": "0"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}},
            "spec": {}, "status": {"capacity": capacity, "allocatable": capacity,
                                   "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}


@dataclass(frozen=True)
class Size:
    nodes: int
    init_pods: int
    pods: int


@dataclass(frozen=True)
class Churn:
    """upstream's ``churn`` op: ``create`` adds one of each template per interval; ``recreate``
    deletes the previous ones first. ``"node"`` in ``templates`` is the churn node."""

    mode: str
    templates: tuple[str, ...]
    interval: float


@dataclass(frozen=True)
class Workload:
    name: str
    measured: str
    sizes: tuple[Size, ...]
    threshold: float | None = None
    init: str = "pod-default"
    zones: tuple[str, ...] = ()
    init_namespace: str = "namespace-1"
    namespace: str = "namespace-2"
    churn: Churn | None = None
    note: str = ""
    e2e_threshold: float | None = None
    # Service templates created in ``namespace`` before any pod (upstream's ``createAny``).
    services: tuple[str, ...] = ()

    def threshold_for(self, mode: str, size: Size) -> float | None:
        """The bar a run must clear: only at the thresholded (default) size, as upstream's CI."""
        if size != self.default:
            return None
        return self.threshold if mode == "core" else self.e2e_threshold

    @property
    def default(self) -> Size:
        return self.sizes[0]


def _w(name: str, measured: str, sizes: list[tuple[int, int, int]], threshold: float | None, **kw: Any) -> Workload:
    return Workload(name, measured, tuple(Size(*s) for s in sizes), threshold, **kw)


_AFF = {"init_namespace": "sched-0", "namespace": "sched-1"}
_MOON = ("moon-1", "moon-2", "moon-3")

WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    # e2e: issue #7's bar, half of upstream's, on this 2-core machine.
    _w("SchedulingBasic", "pod-default", [(5000, 1000, 10000), (500, 500, 1000)], 680, e2e_threshold=340),
    _w("SchedulingNodeAffinity", "pod-with-node-affinity", [(5000, 5000, 10000)], 220,
       init="pod-with-node-affinity", zones=("zone1",)),
    _w("TopologySpreading", "pod-with-topology-spreading", [(5000, 5000, 5000)], 460, zones=_MOON),
    _w("PreferredTopologySpreading", "pod-with-preferred-topology-spreading", [(5000, 5000, 5000)], 340,
       zones=_MOON),
    _w("SchedulingPodAntiAffinity", "pod-with-pod-anti-affinity", [(5000, 1000, 2000)], 60,
       init="pod-with-pod-anti-affinity", **_AFF),
    _w("SchedulingPodAffinity", "pod-with-pod-affinity", [(5000, 5000, 5000)], 35,
       init="pod-with-pod-affinity", zones=("zone1",), **_AFF),
    _w("SchedulingPreferredPodAffinity", "pod-with-preferred-pod-affinity", [(5000, 5000, 5000)], 90,
       init="pod-with-preferred-pod-affinity", **_AFF),
    _w("SchedulingPreferredPodAntiAffinity", "pod-with-preferred-pod-anti-affinity", [(5000, 5000, 5000)], 90,
       init="pod-with-preferred-pod-anti-affinity", **_AFF),
    _w("Unschedulable", "pod-default", [(5000, 100, 10000)], 590,
       churn=Churn("create", ("pod-high-priority-large-cpu",), 0.2)),
    _w("SchedulingWithMixedChurn", "pod-default", [(5000, 0, 10000)], 710,
       churn=Churn("recreate", ("node", "pod-high-priority-large-cpu", "service-churn"), 1.0)),
    # Default spreading: the System default constraints with the selector derived from a Service.
    _w("DefaultTopologySpreading", "pod-with-label", [(5000, 5000, 50000), (5000, 5000, 10000), (500, 1000, 1000)],
       160, zones=_MOON, namespace="service-ns", services=("service",)),
    _w("PreemptionBasic", "pod-high-priority", [(500, 2000, 500), (1000, 4000, 1000)], None,
       init="pod-low-priority"),
    _w("PreemptionAsync", "pod-default", [(5000, 20000, 5000), (500, 2000, 500)], 570,
       init="pod-low-priority", churn=Churn("create", ("pod-high-priority",), 0.2)),
)}
