"""scheduler_perf's PodGroup workloads: the ``createPodGroups`` op and the pods that join its groups.

Upstream 1.37 has them in ``test/integration/scheduler_perf/podgroup/`` (GangScheduling and
BasicScheduling, each ``podgroup/<dir>/performance-config.yaml`` with ``templates/``) and
``workload_preemption/`` (the GangPreemption family); every one has ``featureGates:
{GenericWorkload: true}``, which the drivers merge under ``bench --feature-gates``
(``Workload.feature_gates``).

A ``GroupOp`` is one ``createPodGroups`` op with its ``templateParams`` (``podsPerGroup``,
``priority``, ``cpuRequest``, ``hostPortBase``) and the ``createPods`` op after it, whose pod ``i``
joins group ``i / podsPerGroup`` (upstream's ``{{DivideInt .Index .podsPerGroup}}``). ``Groups``
says which of a workload's pod ops join groups: the measured one always, the init one in
GangPreemptionPodGroups (low-priority gangs to preempt), and whether GangPreemptionAffinity's
anchor pods (one high-priority pod a node, spread by a host port) come first.

The PodGroup templates (``GROUP_TEMPLATES``) and the pod templates (``POD_TEMPLATES``, merged into
``templates.TEMPLATES``) are upstream's; ``group_pod`` and ``indexed_pod`` fill in what the
templates compute from ``.Index``. ``Groups.needs`` names what kopf-scheduler lacks to run a
workload (workload-aware preemption, for the GangPreemption family): the drivers refuse it with
that message instead of reporting a run that cannot finish.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

__all__ = ["GROUP_API", "GROUP_TEMPLATES", "POD_TEMPLATES", "GroupOp", "Groups",
           "all_group_objects", "group_count", "group_pod", "indexed_pod", "pod_group_objects", "pod_priorities",
           "prepare_pod", "refusal"]

Obj = dict[str, Any]
GROUP_API = "scheduling.k8s.io/v1beta1"
PAUSE = "registry.k8s.io/pause:3.10.1"
# workload_preemption/templates/pod-low-priority.yaml and pod-anchor-high-priority.yaml: the labels
# the anchors carry and GangPreemptionAffinity's gang pods require on their node.
BLUE = {"app": "blue", "label1": "value1", "label2": "value2", "label3": "value3", "label4": "value4"}


@dataclass(frozen=True)
class GroupOp:
    """One ``createPodGroups`` op (``template``: a ``GROUP_TEMPLATES`` key, whose groups are named
    ``<prefix><k>``) and the pods of the ``createPods`` op after it (``pod``: a ``POD_TEMPLATES``
    key). ``priority``, ``cpu`` and ``host_port_base`` are the ops' ``templateParams``
    (``priority``, ``cpuRequest``, ``hostPortBase``); None leaves the template's own."""

    template: str
    pod: str
    per_group: int
    priority: int | None = None
    cpu: str | None = None
    host_port_base: int | None = None


@dataclass(frozen=True)
class Groups:
    measured: GroupOp
    init: GroupOp | None = None
    anchors: bool = False
    needs: str = ""


def _container(cpu: str, memory: str, *, limits: bool, host_port: bool = False) -> Obj:
    res: Obj = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        res["limits"] = {"cpu": cpu, "memory": memory}
    c: Obj = {"image": PAUSE, "name": "pause", "resources": res}
    if host_port:
        c["ports"] = [{"containerPort": 80}]
    return c


def _pod(name_prefix: str, spec: Obj, labels: Obj | None = None) -> Obj:
    # ``generateName`` is how ``pod_objects`` names pod i (``<prefix><i>``): for the templates that
    # name their pods ``<prefix>{{.Index}}`` that is upstream's very name.
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": name_prefix, "labels": dict(labels or {})},
            "spec": spec}


POD_TEMPLATES: dict[str, Obj] = {
    # podgroup/gangscheduling/templates/gang-pod.yaml and podgroup/basicscheduling/templates/basic-pod.yaml
    "gang-pod": _pod("test-gang-scheduling-", {"containers": [_container("100m", "100Mi", limits=False)]}),
    "basic-pod": _pod("test-basic-scheduling-", {"containers": [_container("100m", "100Mi", limits=False)]}),
    # workload_preemption/templates/gang-pod.yaml: priority 8888888 unless given; cpuRequest; a host
    # port per group when hostPortBase is given, so a group's pods land on different nodes.
    "preemptor-gang-pod": _pod("pod-gang-", {"priority": 8888888, "terminationGracePeriodSeconds": 0,
                                             "containers": [_container("0", "100Mi", limits=True)]}),
    # workload_preemption/templates/pod-low-priority.yaml: priority {{.Index}}; a host port that puts
    # podsCount / nodesCount of them on each node.
    "pod-low-priority-indexed": _pod("pod-low-priority-", {
        "terminationGracePeriodSeconds": 0,
        "containers": [_container("40m", "100Mi", limits=True, host_port=True)]}, BLUE),
    # workload_preemption/templates/pod-anchor-high-priority.yaml: one a node (host port 7000).
    "pod-anchor-high-priority": _pod("pod-anchor-", {
        "priority": 9999999, "terminationGracePeriodSeconds": 0,
        "containers": [_container("10m", "100Mi", limits=True, host_port=True)]}, BLUE),
    # workload_preemption/templates/pod-gang-affinity.yaml: no priority; 3970m; required affinity to
    # a node that runs an anchor (the BLUE labels, any namespace).
    "pod-gang-affinity": _pod("pod-gang-", {
        "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": dict(BLUE)}, "topologyKey": "kubernetes.io/hostname",
             "namespaceSelector": {}}]}},
        "terminationGracePeriodSeconds": 0, "containers": [_container("3970m", "500Mi", limits=True)]}),
    # workload_preemption/templates/gang-pod-with-topology-spreading.yaml: spread by zone, maxSkew 5.
    "gang-pod-with-topology-spreading": _pod("pod-gang-", {
        "priority": 8888888, "terminationGracePeriodSeconds": 0,
        "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": "topology.kubernetes.io/zone",
                                       "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"color": "blue"}}}],
        "containers": [_container("0", "100Mi", limits=True)]}, {"color": "blue"}),
}

# (name prefix, spec) of upstream's PodGroup templates; minCount is podsPerGroup.
GROUP_TEMPLATES: dict[str, tuple[str, Obj]] = {
    # podgroup/gangscheduling/templates/podgroup.yaml
    "gang": ("gang-", {"schedulingPolicy": {"gang": {"minCount": 0}}}),
    # podgroup/basicscheduling/templates/podgroup.yaml
    "basic": ("basic-group-", {"schedulingPolicy": {"basic": {}}}),
    # workload_preemption/templates/podgroup.yaml: priority 10000 unless given; disruptionMode single
    "preemption": ("gang-", {"priority": 10000, "disruptionMode": {"single": {}},
                             "schedulingPolicy": {"gang": {"minCount": 0}}}),
}


def group_count(op: GroupOp, pods: int) -> int:
    """How many groups ``pods`` pods fill (upstream's ``countParam``: pods = groups x podsPerGroup)."""
    return -(-pods // op.per_group)


def pod_group_objects(op: GroupOp, namespace: str, pods: int) -> list[Obj]:
    """The ``createPodGroups`` op for ``pods`` pods: ``<prefix>0`` .. ``<prefix>(n-1)``."""
    prefix, spec = GROUP_TEMPLATES[op.template]
    out = []
    for k in range(group_count(op, pods)):
        body = copy.deepcopy(spec)
        gang = body["schedulingPolicy"].get("gang")
        if gang is not None:
            gang["minCount"] = op.per_group
        if op.priority is not None and "priority" in body:
            body["priority"] = op.priority
        out.append({"apiVersion": GROUP_API, "kind": "PodGroup",
                    "metadata": {"name": f"{prefix}{k}", "namespace": namespace}, "spec": body})
    return out


def all_group_objects(groups: Groups, *, init_namespace: str, namespace: str, init_pods: int, pods: int
                      ) -> list[Obj]:
    """Every PodGroup of a workload: the init op's (when its pods are gangs), then the measured op's.
    The drivers create them before any pod, which upstream's ``createPodGroups`` ops do for their
    own pods (each op waits until the scheduler's informer has its groups)."""
    out = pod_group_objects(groups.init, init_namespace, init_pods) if groups.init is not None else []
    return out + pod_group_objects(groups.measured, namespace, pods)


def group_pod(op: GroupOp, body: Obj, i: int) -> Obj:
    """Pod ``i`` of the op: its group (``<prefix>{i / podsPerGroup}``), and the op's priority, CPU
    request and host port (``hostPortBase + i / podsPerGroup``) where the template takes them."""
    spec = body["spec"]
    prefix, _ = GROUP_TEMPLATES[op.template]
    k = i // op.per_group
    spec["schedulingGroup"] = {"podGroupName": f"{prefix}{k}"}
    if op.priority is not None and "priority" in spec:
        spec["priority"] = op.priority
    c = spec["containers"][0]
    if op.cpu is not None:
        for key in c["resources"]:
            c["resources"][key]["cpu"] = op.cpu
    if op.host_port_base is not None:
        c["ports"] = [{"containerPort": 80, "hostPort": op.host_port_base + k}]
    return body


def indexed_pod(body: Obj, i: int, nodes: int, pods: int) -> Obj:
    """What the low-priority and anchor templates compute from ``.Index``: the low-priority pod's
    priority (``i``), and the host port ``base + i mod (podsCount / nodesCount)`` both use."""
    name = body["metadata"]["name"]
    c = body["spec"]["containers"][0]
    per_node = max(pods // max(nodes, 1), 1)
    if name.startswith("pod-low-priority-"):
        body["spec"]["priority"] = i
        c["ports"] = [{"containerPort": 80, "hostPort": 8000 + i % per_node}]
    elif name.startswith("pod-anchor-"):
        c["ports"] = [{"containerPort": 80, "hostPort": 7000 + i % per_node}]
    return body


def prepare_pod(groups: Groups, body: Obj, i: int, *, measured: bool, nodes: int, init_pods: int) -> Obj:
    """Pod ``i`` of its op, as upstream's template renders it: the measured op's pods (and the init
    op's, when the init pods are gangs) join their groups; the anchors and low-priority pods get
    their indexed fields (``podsCount`` is the op's own count: ``initNodes`` anchors, ``initPods``)."""
    op = groups.measured if measured else groups.init
    if op is not None:
        return group_pod(op, body, i)
    anchor = body["metadata"]["name"].startswith("pod-anchor-")
    return indexed_pod(body, i, nodes, nodes if anchor else init_pods)


def pod_priorities(groups: Groups, init: str, nodes: int, init_pods: int, measured: str) -> set[int]:
    """The priorities the workload's pods carry (each needs its PriorityClass when created through an
    API with the Priority admission plugin): the indexed low-priority pods', the anchors', the ops'."""
    out: set[int] = set()
    if init == "pod-low-priority-indexed":
        out |= set(range(init_pods))
    if groups.anchors:
        out.add(POD_TEMPLATES["pod-anchor-high-priority"]["spec"]["priority"])
    for op, tmpl in ((groups.measured, measured), (groups.init, init)):
        base = POD_TEMPLATES.get(tmpl, {}).get("spec", {}).get("priority")
        if op is not None and base is not None:
            out.add(op.priority if op.priority is not None else base)
    return out - {0}


def refusal(name: str, groups: Groups | None) -> str | None:
    """Why workload ``name`` cannot run here (its ``needs``), or None."""
    if groups is None or not groups.needs:
        return None
    return f"{name} needs {groups.needs}, which kopf-scheduler has not built yet: not run"
