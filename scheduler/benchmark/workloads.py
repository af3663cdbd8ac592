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
pods/s), in both modes: upstream measures it against a real API server, so end to end is the
honest comparison; ``sizes`` lists the sizes it runs at, the first one being the default and
the thresholded one.

**Volumes** (upstream's ``volumes/performance-config.yaml`` and ``misc/``'s PreemptionPVs): a workload
with ``volumes`` gives each of its pods its own PersistentVolume, pre-bound to its own claim, as
``createPods`` with ``persistentVolumeTemplatePath`` does (``test/utils/runners.go``'s
``CreatePodWithPersistentVolume`` with ``bindVolume``): pod ``i`` of namespace ``ns`` mounts the claim
``pvc-i`` (``templates/pvc.yaml``: ReadOnlyMany, 1Gi, ``pv.kubernetes.io/bind-completed``,
``spec.volumeName`` set, phase Bound), bound to the PV ``ns-vol-i`` (the PV template with ``claimRef``
to ``pvc-i``, phase Bound; PVs are cluster-wide, hence the namespace prefix). The PV template's source
is ``templates/pv-aws.yaml`` (``awsElasticBlockStore`` volume ``vol-i``) or ``pv-csi.yaml``
(``ebs.csi.aws.com``, handle ``ns-vol-i``); neither has node affinity. ``nodeAllocatableStrategy``
(``node_strategy``) adds an allocatable to every node and creates its CSINode, with each driver's
``allocatable.count`` and the ``storage.alpha.kubernetes.io/migrated-plugins`` annotation.

**Upstream's newer workloads** (``misc/``, ``affinity/`` and ``topology_spreading/``'s
``performance-config.yaml``): ``workload_nodes`` builds the nodes their ``createNodes`` ops make (the
named node ``scheduler-perf-node`` of ``node-with-name.yaml`` first, a ``tainted_share`` of
``node-with-taint.yaml`` nodes last, or ``node-with-extended-resource.yaml``'s ``foo.com/bar-<i>`` per
node); ``namespace_objects`` the namespaces ``namespace-with-labels.yaml`` labels for a
``namespaceSelector``; ``init_batches`` the init ``createPods`` ops (``createPodSets`` over
``Size.init_namespaces`` namespaces, or one op per ``init_templates`` entry); ``Deleting`` the
``deletePods`` op that deletes the init pods at a fixed rate while the measured ones schedule, with
the gated pods of SchedulingWhileGated created first. ``other_thresholds`` carries a second
thresholded size (SchedulingBasic 5000/5000/50000, 810). The drivers read these in both modes, and
the bar end to end is upstream's own.

**Dynamic resource allocation** (upstream's ``dra/performance-config.yaml`` and its ``prioritizedlist``
and ``extendedresource`` directories): a workload with ``dra`` (``Dra``) runs its pods (namespaces
``init`` and ``test``) against ``nodes`` nodes with the DRA test driver, each publishing one
ResourceSlice of ``max_claims_per_node`` devices; the pods take one device each through a claim
generated from ``test-claim-template`` (``pod-with-claim-template.yaml``), through a claim shared by
five pods (``pod-with-claim-ref.yaml``), or through an extended resource a DeviceClass backs
(``pod-with-extended-resource*.yaml``; ``extendedresource/scoring``'s run under its own scheduler
config, ``Workload.profile``). A size is (``nodesWithDRA``, ``initPods``, ``measurePods``);
a steady-state workload's ``pods`` is its batch (``count: 10``). ``partitionabledevices``,
``consumablecapacity`` and the DRABindingConditions tests add ``createAny`` ResourceSlices
(``dra_template_slices``, ``Size.resource_slices`` of each), selector claims allocated first, and
the ``updateDeviceConditions`` / ``checkPodScheduled`` ops (``Dra.binding``). upstream's list
attributes, compatibility groups and workload claims directories need features this scheduler does
not have (BENCHMARKS.md lists them, not run).

**PodGroups** (upstream's ``podgroup/`` and ``workload_preemption/`` directories): a workload with
``groups`` (``podgroups.Groups``) creates its PodGroups before their pods, and its pods join them
(``podgroups.py``). Its ``feature_gates`` are upstream's ``featureGates`` (GenericWorkload), under
which both drivers run it, ``bench --feature-gates`` winning. upstream's podsPerGroup is part of
the workload, not of the size: each podsPerGroup is a workload of its own (``/1000PerGroup``).
The ``_CompositePodGroupEnabled`` variants need the CompositePodGroup gate, which is not built.

**Batching and NodeDeclaredFeatures** (``batching.py``, ``declaredfeatures.py``, which build their
workloads with ``_w``): ``signature_batch`` is the measured op's ``signatureBatchSize``, and
``node_features`` the ``numNodeDeclaredFeatures`` whose mock features the run registers.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from scheduler.benchmark import batching, declaredfeatures
from scheduler.benchmark.declaredfeatures import DeclaredFeatures
from scheduler.benchmark.podgroups import POD_TEMPLATES as GROUP_POD_TEMPLATES
from scheduler.benchmark.podgroups import GroupOp, Groups

__all__ = ["DRA_DRIVER", "DRA_TEMPLATES", "NAMED_NODE", "NODE_WITH_DRA", "SERVICES", "TEMPLATES", "VOLUME_TEMPLATES",
           "WORKLOADS",
           "Churn", "Deleting", "Dra", "NodeAllocatable", "Size", "Volumes", "Workload", "csi_node", "dra_claim",
           "dra_device_classes", "dra_init_allocations", "dra_init_claims", "dra_node", "dra_node_name", "dra_pod",
           "dra_selector_allocations", "dra_selector_claim", "dra_slice", "dra_template_slices",
           "extended_resource_pod", "init_batches", "init_namespaces", "make_node", "namespace_objects",
           "service_object", "template", "volume_objects", "with_claim", "workload_nodes"]

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
# node-with-name.yaml's node: SchedulingDaemonset's and SchedulingWhileGated's pods all go there.
NAMED_NODE = "scheduler-perf-node"
EXTENDED_RESOURCE = "foo.com/bar-"

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


# The newer workloads' templates (upstream's templates/*.yaml and misc/templates/*.yaml).
# daemonset-pod.yaml: no requests, required node affinity to the one named node by metadata.name.
TEMPLATES["daemonset-pod"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "daemonset-", "labels": {}},
    "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NAMED_NODE]}]}]}}},
             "containers": [{"name": "pause", "image": PAUSE}]}}
# light-pod.yaml: no requests, terminationGracePeriodSeconds 0 (a bound one is deleted at once).
TEMPLATES["light-pod"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "light-pod-", "labels": {}},
                          "spec": {"containers": [{"name": "pause", "image": PAUSE}],
                                   "terminationGracePeriodSeconds": 0}}
# gated-pod.yaml: one scheduling gate, never removed in SchedulingWhileGated.
TEMPLATES["gated-pod"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gated-pod-", "labels": {}},
                          "spec": {"schedulingGates": [{"name": "test.k8s.io/hold"}],
                                   "containers": [{"name": "pause", "image": PAUSE}]}}
# pod-with-finalizer.yaml: the finalizer holds a deleted pod (deletionTimestamp set) for good.
TEMPLATES["pod-with-finalizer"] = {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"generateName": "pod-", "labels": {},
                                                "finalizers": ["test.k8s.io/finalizer"]},
                                   "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}
# pod-with-pod-anti-affinity-label.yaml: matched by pod-with-pod-anti-affinity's term, no affinity itself.
TEMPLATES["pod-with-pod-anti-affinity-label"] = _pod("anti-affinity-matching-pod-", labels={"color": "green"})
# pod-with-node-inclusion-policy.yaml: hostname spreading, maxSkew 1, over the nodes both policies
# admit. upstream's file spells the fields NodeAffinityPolicy/NodeTaintsPolicy; Go's YAML-to-JSON
# decoding matches field names without regard to case, so they arrive as the API's camelCase ones.
TEMPLATES["pod-with-node-inclusion-policy"] = _pod(
    "spreading-pod-with-node-inclusion-policy-", labels={"foo": "bar"}, spec={"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule", "nodeAffinityPolicy": "Honor",
         "nodeTaintsPolicy": "Honor", "labelSelector": {"matchLabels": {"foo": "bar"}}}]})
# The namespaceSelector templates (team=devops, the label namespace-with-labels.yaml gives).
_DEVOPS = {"matchLabels": {"team": "devops"}}
TEMPLATES["pod-anti-affinity-ns-selector"] = _pod("anti-affinity-pod-", labels={"color": "green"}, spec={"affinity": {
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term({"color": "green"}, HOST), "namespaceSelector": _DEVOPS}]}}})
TEMPLATES["pod-preferred-anti-affinity-ns-selector"] = _pod("anti-affinity-pod-", labels={"color": "green"}, spec={
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": {**_term({"color": "green"}, HOST), "namespaceSelector": _DEVOPS}, "weight": 1}]}}})
TEMPLATES["pod-affinity-ns-selector"] = _pod("affinity-pod-", labels={"color": "blue"}, spec={"affinity": {
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term({"color": "blue"}, ZONE), "namespaceSelector": _DEVOPS}]}}})
TEMPLATES["pod-preferred-affinity-ns-selector"] = _pod("preferred-affinity-pod-", labels={"color": "red"}, spec={
    "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": {**_term({"color": "red"}, HOST), "namespaceSelector": _DEVOPS}, "weight": 1}]}}})
# misc/templates/pod-with-extended-resource.yaml: pod i (test-extended-resource-<i>) asks for one
# foo.com/bar-<i>, which only node i has (extended_resource_pod fills the index in).
TEMPLATES["pod-with-indexed-extended-resource"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-extended-resource-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE, "resources": {}}]}}

# templates/pod-with-label.yaml: no requests, selected by templates/service.yaml.
TEMPLATES["pod-with-label"] = {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"generateName": "pod-", "labels": {"app": "scheduler-perf"}},
                               "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}

# podgroup/*/templates and workload_preemption/templates (scheduler/benchmark/podgroups.py); the
# batching and nodedeclaredfeatures pods (batching.py, declaredfeatures.py).
TEMPLATES.update(GROUP_POD_TEMPLATES)
TEMPLATES.update(batching.POD_TEMPLATES)
TEMPLATES.update(declaredfeatures.POD_TEMPLATES)

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
              memory: str = "32Gi", allocatable: dict[str, str] | None = None,
              capacity: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    """upstream's ``node-default.yaml`` (``churn/node-default.yaml`` is ``pods="0"`` and nothing else);
    ``allocatable`` is what a ``nodeAllocatableStrategy`` adds to the allocatable (not the capacity);
    ``capacity`` is more capacity in the template itself (the API copies it into the allocatable,
    ``SetDefaults_NodeStatus``); ``taints`` the template's ``spec.taints``."""
    cap = {"pods": pods, "cpu": cpu, "memory": memory} if pods != "0" else {"pods": "0"}
    cap.update(capacity or {})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": cap, "allocatable": {**cap, **(allocatable or {})},
                       "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}


def workload_nodes(w: Workload, size: Size, rng: Any, allocatable: dict[str, str] | None = None, *,
                   gates: dict[str, bool] | None = None) -> list[Obj]:
    """The nodes of a workload that is not DRA's, in upstream's ``createNodes`` order: the named node
    (``node-with-name.yaml``: ``scheduler-perf-node``, 90000 pods) when ``named_node``; then
    ``size.nodes`` nodes: ``node-default.yaml`` (a zone from ``zones`` each, as
    ``labelNodePrepareStrategy``), of which the last ``tainted_share`` are ``node-with-taint.yaml``
    (``taint-node-<i>``: NoSchedule ``foo``), or ``misc/templates/node-with-extended-resource.yaml``
    (node i: ``scheduler-perf-extended-resource-<i>``, capacity ``foo.com/bar-<i>: 1``); or
    ``node-base.yaml``'s, declaring the mock features of a NodeDeclaredFeatures workload under
    ``gates`` (the run's, the workload's when None)."""
    if w.node_features is not None:         # declaredfeatures.py
        run_gates = dict(w.feature_gates) if gates is None else gates
        return declaredfeatures.nodes(size.nodes, w.node_features.mocked(run_gates))
    out = [make_node(NAMED_NODE, pods="90000")] if w.named_node else []
    tainted = round(size.nodes * w.tainted_share)
    for i in range(size.nodes - tainted):
        if w.extended_resource:
            out.append(make_node(f"scheduler-perf-extended-resource-{i}", {"node-with-extended-resource": "true"},
                                 capacity={f"{EXTENDED_RESOURCE}{i}": "1"}))
            continue
        labels = {ZONE: rng.choice(w.zones)} if w.zones else None
        out.append(make_node(f"scheduler-perf-{i}", labels, allocatable=allocatable))
    out += [make_node(f"taint-node-{i}", taints=[{"effect": "NoSchedule", "key": "foo"}]) for i in range(tainted)]
    return out


def extended_resource_pod(pod: Obj, i: int) -> Obj:
    """Pod ``i`` of ``pod-with-indexed-extended-resource``: one ``foo.com/bar-<i>`` requested and limited."""
    want = {f"{EXTENDED_RESOURCE}{i}": "1"}
    pod["spec"]["containers"][0]["resources"] = {"requests": dict(want), "limits": dict(want)}
    return pod


def namespace_objects(w: Workload, size: Size) -> list[Obj]:
    """The namespaces ``createNamespaces`` makes from ``namespace-with-labels.yaml`` (``ns_labels``):
    ``init-ns-<k>`` for each of ``size.init_namespaces`` and the measured one; none otherwise
    (the drivers create the plain ones)."""
    if not w.ns_labels:
        return []
    names = [*init_namespaces(w, size), w.namespace]
    return [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "labels": dict(w.ns_labels)}}
            for n in names]


def init_namespaces(w: Workload, size: Size) -> list[str]:
    """Where the init pods go: ``createPodSets`` over ``init-ns-<k>``, or the one init namespace."""
    return [f"init-ns-{k}" for k in range(size.init_namespaces)] if size.init_namespaces else [w.init_namespace]


# GangPreemptionAffinity's anchors (workload_preemption/performance-config.yaml): their namespace.
ANCHOR_NAMESPACE = "gang-preempt-2"


def init_batches(w: Workload, size: Size) -> list[tuple[str, str, int]]:
    """The init ``createPods`` ops in order, as (template, namespace, count): ``size.init_pods`` is the
    total, split evenly over the init namespaces (``createPodSets``) or over ``init_templates``
    (MixedSchedulingBasePod's five ops of ``initPods`` each); GangPreemptionAffinity's ``initNodes``
    anchors come first, on top of it."""
    if w.groups is not None and w.groups.anchors:
        return [("pod-anchor-high-priority", ANCHOR_NAMESPACE, size.nodes), (w.init, w.init_namespace, size.init_pods)]
    if w.init_templates:
        each = size.init_pods // len(w.init_templates)
        return [(t, w.init_namespace, each) for t in w.init_templates]
    spaces = init_namespaces(w, size)
    each, extra = divmod(size.init_pods, len(spaces))
    return [(w.init, ns, each + (k < extra)) for k, ns in enumerate(spaces)]


# --- volumes ---------------------------------------------------------------------------------------

EBS_CSI = "ebs.csi.aws.com"
MIGRATED_PLUGINS = "storage.alpha.kubernetes.io/migrated-plugins"
# upstream's templates/pv-aws.yaml, pv-csi.yaml and pvc.yaml
VOLUME_TEMPLATES: dict[str, Obj] = {
    "pv-aws": {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
        "accessModes": ["ReadOnlyMany"], "awsElasticBlockStore": {"volumeID": "<volume-id>"},
        "capacity": {"storage": "1Gi"}, "persistentVolumeReclaimPolicy": "Retain"}},
    "pv-csi": {"apiVersion": "v1", "kind": "PersistentVolume", "spec": {
        "accessModes": ["ReadOnlyMany"], "capacity": {"storage": "1Gi"}, "csi": {"driver": EBS_CSI},
        "persistentVolumeReclaimPolicy": "Retain"}},
    "pvc": {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"annotations": {"pv.kubernetes.io/bind-completed": "true"}},
            "spec": {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}}}},
}


@dataclass(frozen=True)
class Volumes:
    """``persistentVolumeTemplatePath`` / ``persistentVolumeClaimTemplatePath`` of the workload's
    ``createPods`` ops: ``init`` whether the init pods have them too (PreemptionPVs: measured only)."""

    pv: str
    pvc: str = "pvc"
    init: bool = True


@dataclass(frozen=True)
class NodeAllocatable:
    """upstream's ``nodeAllocatableStrategy``: ``node_allocatable`` added to each node's allocatable,
    and a CSINode per node with ``csi_allocatable`` (driver -> count) and ``migrated_plugins``."""

    node_allocatable: tuple[tuple[str, str], ...]
    csi_allocatable: tuple[tuple[str, int], ...]
    migrated_plugins: tuple[str, ...] = ()


def csi_node(node_name: str, strategy: NodeAllocatable) -> Obj:
    """The CSINode ``NodeAllocatableStrategy.createCSINode`` creates for ``node_name``."""
    return {"apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
            "metadata": {"name": node_name, "annotations": {MIGRATED_PLUGINS: ",".join(strategy.migrated_plugins)}},
            "spec": {"drivers": [{"name": driver, "nodeID": node_name, "allocatable": {"count": count}}
                                 for driver, count in strategy.csi_allocatable]}}


def volume_objects(volumes: Volumes, namespace: str, i: int) -> tuple[Obj, Obj]:
    """Pod ``i``'s claim and PV, bound to each other (``CreatePodWithPersistentVolume`` with
    ``bindVolume``; the PV template's factory names it ``vol-i``, and the namespace prefixes it)."""
    claim_name, volume_id = f"pvc-{i}", f"vol-{i}"
    pv_name = f"{namespace}-{volume_id}"
    pvc = copy.deepcopy(VOLUME_TEMPLATES[volumes.pvc])
    pvc["metadata"] = {**pvc.get("metadata", {}), "name": claim_name, "namespace": namespace}
    pvc["spec"]["volumeName"] = pv_name
    pvc["status"] = {"phase": "Bound"}
    pv = copy.deepcopy(VOLUME_TEMPLATES[volumes.pv])
    pv["metadata"] = {**pv.get("metadata", {}), "name": pv_name}
    spec = pv["spec"]
    if "awsElasticBlockStore" in spec:
        spec["awsElasticBlockStore"]["volumeID"] = volume_id
    if "csi" in spec:
        spec["csi"]["volumeHandle"] = pv_name
    spec["claimRef"] = {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim_name,
                        "apiVersion": "v1"}
    pv["status"] = {"phase": "Bound"}
    return pvc, pv


def with_claim(pod: Obj, i: int) -> Obj:
    """Pod ``i`` mounting its claim ``pvc-i`` as the volume ``vol`` (the template's volumes replaced)."""
    pod["spec"]["volumes"] = [{"name": "vol", "persistentVolumeClaim": {"claimName": f"pvc-{i}"}}]
    return pod


# --- dynamic resource allocation -----------------------------------------------------------------

DRA_DRIVER = "test-driver.cdi.k8s.io"
_EXACTLY = {"exactly": {"deviceClassName": "test-class"}}
# upstream's dra/templates/*.yaml (resource.k8s.io/v1). The pod templates are in TEMPLATES.
DRA_TEMPLATES: dict[str, Obj] = {
    "deviceclass": {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}},
    "deviceclass-no-devices": {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "no-devices-class"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "no-such-driver.cdi.k8s.io"'}}]}},
    # resourceclaimtemplate.yaml with its defaults (numRequests 1, no selectors, no constraints)
    "resourceclaimtemplate": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                              "metadata": {"name": "test-claim-template"},
                              "spec": {"spec": {"devices": {"requests": [{"name": "req-0", **_EXACTLY}]}}}},
    "resourceclaimtemplate-first-available": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "no-devices-class"},
            {"name": "sub-1", "deviceClassName": "test-class"}]}]}}}},
    # resourceclaimtemplate-toleration.yaml: tolerates devicetaintrule.yaml's taint
    "resourceclaimtemplate-toleration": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
            "deviceClassName": "test-class", "tolerations": [{"key": "example.com/taint", "operator": "Exists"}]}}]}}}},
    # devicetaintrule.yaml: no deviceSelector ("Empty selector -> all devices!"), taint NoSchedule
    "devicetaintrule": {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                        "metadata": {"name": "taint-all-devices"},
                        "spec": {"taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"}}},
    # resourceclaimtemplate-for-two-devices.yaml: two devices of one slice (partitionable)
    "resourceclaimtemplate-for-two-devices": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {
            "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}],
            "constraints": [{"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"}]}}}},
    # resourceclaimtemplate-backtracking.yaml: seven devices, which only one choice of the eight fits
    "resourceclaimtemplate-backtracking": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 7}}]}}}},
    # deviceclass-consumablecapacity.yaml and resourceclaimtemplate-consumablecapacity.yaml: two
    # requests of 10Gi of a shareable device's memory each
    "deviceclass-consumablecapacity": {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}" &&\n'
                                                      "device.allowMultipleAllocations == true"}}]}},
    "resourceclaimtemplate-consumablecapacity": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": f"req-{k}", "exactly": {"deviceClassName": "test-class",
                                             "capacity": {"requests": {"memory": "10Gi"}}}} for k in (0, 1)]}}}},
    # resourceclaim.yaml: test-claim-<i>
    "resourceclaim": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": "test-claim-"},
                      "spec": {"devices": {"requests": [{"name": "req-0", **_EXACTLY}]}}},
}

_DRA_POD_SPEC: Obj = {"containers": [{"name": "pause", "image": PAUSE,
                                      "resources": {"claims": [{"name": "resource"}]}}]}
# pod-with-claim-template.yaml, pod-with-claim-ref.yaml (the claim test-claim-<i/5>: five pods share
# one) and pod-with-extended-resource*.yaml (example.com/gpu-<i mod classes>, set per pod by dra_pod)
TEMPLATES["pod-with-claim-template"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra", "labels": {}},
    "spec": {**copy.deepcopy(_DRA_POD_SPEC),
             "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}}
TEMPLATES["pod-with-claim-ref"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-", "labels": {}},
    "spec": {**copy.deepcopy(_DRA_POD_SPEC), "resourceClaims": [{"name": "resource", "resourceClaimName": ""}]}}
TEMPLATES["pod-with-extended-resource"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE, "resources": {}}]}}
# pod-with-extended-resource-scoring.yaml: every pod asks for one example.com/gpu, which every
# scoring class backs (extendedresource/scoring/).
_SCORING_GPU = {"example.com/gpu": "1"}
TEMPLATES["pod-with-extended-resource-scoring"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "scoring-test-pod-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE,
                             "resources": {"requests": dict(_SCORING_GPU), "limits": dict(_SCORING_GPU)}}]}}
# extendedresource/scoring/scheduler-config.yaml: NodeResourcesFit LeastAllocated over cpu, memory and
# example.com/gpu (weight 1 each), so that the DRA-backed resource takes part in scoring.
SCORING_PROFILE: Obj = {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
    "type": "LeastAllocated",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                  {"name": "example.com/gpu", "weight": 1}]}}}]}


@dataclass(frozen=True)
class Dra:
    """The DRA ops of a workload of upstream's ``dra/**/performance-config.yaml``.

    ``createNodes`` with ``node-with-dra-test-driver.yaml`` makes the workload's ``nodes``
    (``scheduler-perf-dra-<i>``) after ``nodes_without_dra`` plain ones; ``createResourceDriver``
    publishes one ResourceSlice per DRA node with ``max_claims_per_node`` devices (``dra_slice``);
    ``device_classes`` and the ``claim_template`` (in each pod namespace) are created with
    ``createAny``; ``classes`` > 0 creates that many ``deviceclass-extended-resource.yaml`` classes
    (``test-class-<i>`` backing ``example.com/gpu-<i>``) instead, or, with ``scoring``, that many
    ``deviceclass-extended-resource-scoring.yaml`` classes (``scoring-test-class-<i>``, all backing
    ``example.com/gpu``: the pods' request is not split across classes). ``claim_ref``: the pods name
    the shared claims ``test-claim-<i/5>`` (created before their pods, one per five pods).

    ``init_fill`` is ``allocResourceClaims`` over ``resourceclaim.yaml`` claims created first in
    ``init``: none (``empty``), half of the devices (``half``) or all but ``pods`` (``full``), which
    is upstream's ``initClaims`` at every size it lists (2500 and 4990 of 500 × 10 devices).
    ``steady`` > 0 is ``createPods`` with ``steadyState``: ``pods`` pods at a time, all deleted and
    created anew each time the whole batch is bound, for ``steady`` seconds (then ``init_pods`` is 0).
    ``taint_rules``: the ``DRA_TEMPLATES`` DeviceTaintRules created with ``createAny`` first.

    ``driver``: whether ``createResourceDriver`` runs (the partitionable workloads have none);
    ``slices``: the ``dra_template_slices`` templates created ``Size.resource_slices`` times each
    with ``createAny``; ``init_fill="selector"``: ``resource_slices`` claims of
    ``resourceclaim-with-selector.yaml`` allocated first (``dra_selector_allocations``).
    ``binding``: the DRABindingConditions tests: the driver's devices carry binding conditions
    (``dra_slice``), the pods are created without waiting for them (their PreBind waits),
    ``updateDeviceConditions`` sets ``binding`` (condition type, status) on every allocated device
    of the pods' claims, and ``checkPodScheduled`` expects the pods all bound (``scheduled``) or
    all still unbound for 5 s."""

    max_claims_per_node: int = 10
    nodes_without_dra: int = 0
    device_classes: tuple[str, ...] = ("deviceclass",)
    claim_template: str | None = "resourceclaimtemplate"
    claim_ref: bool = False
    classes: int = 0
    scoring: bool = False
    init_fill: str = "empty"
    steady: float = 0.0
    taint_rules: tuple[str, ...] = ()
    driver: bool = True
    slices: tuple[str, ...] = ()
    binding: tuple[str, str] | None = None
    scheduled: bool = True


def dra_node_name(i: int) -> str:
    """The name ``node-with-dra-test-driver.yaml`` gives DRA node ``i`` (the driver's glob is
    ``scheduler-perf-dra-*``)."""
    return f"scheduler-perf-dra-{i}"


def dra_node(i: int) -> Obj:
    """``node-with-dra-test-driver.yaml``'s node ``i``: the default node, labelled ``node-with-dra=true``
    for the ``createAny`` slices' node selector."""
    return make_node(dra_node_name(i), dict([NODE_WITH_DRA]))


def dra_slice(node_name: str, devices: int, binding: bool = False) -> Obj:
    """The ResourceSlice ``createResourceDriver`` publishes for ``node_name`` (upstream's
    ``resourceSlice()`` in ``scheduler_perf/dra.go``), in resource.k8s.io/v1's flat device shape:
    pool = the node's name, one slice, devices ``instance-<i>`` with attributes ``model``, ``family``,
    ``driverVersion`` and ``dra.example.com/numa`` = i, capacity ``memory`` 1Gi. upstream's function
    also sets ``usageRestrictedToNode`` and the binding conditions, which the API server strips
    unless DRADeviceBindingConditions is on, as it is in none of these workloads (only in the
    DRABindingConditions tests), so they are left out here as the API server would store them;
    ``binding`` keeps them: ``bindsToNode``, ``bindingConditions`` [DeviceAttached],
    ``bindingFailureConditions`` [AttachmentFailed]. (upstream's ``bindingTimeoutSeconds`` 60 is not a
    resource.k8s.io/v1 field: the timeout is DynamicResourcesArgs.bindingTimeout.)"""
    extra: Obj = {"bindsToNode": True, "bindingConditions": ["DeviceAttached"],
                  "bindingFailureConditions": ["AttachmentFailed"]} if binding else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node_name},
            "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}",
                                  "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                 "driverVersion": {"version": "1.2.3"},
                                                 "dra.example.com/numa": {"int": i}},
                                  "capacity": {"memory": {"value": "1Gi"}}, **extra} for i in range(devices)]}}


# The node selector of the createAny slices: node-with-dra-test-driver.yaml labels its nodes so.
NODE_WITH_DRA = ("node-with-dra", "true")
_WITH_DRA: Obj = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": NODE_WITH_DRA[0], "operator": "In", "values": [NODE_WITH_DRA[1]]}]}]}


def _slice(name: str, pool: str, body: Obj, node_name: str | None = None) -> Obj:
    where: Obj = {"nodeName": node_name} if node_name else {"nodeSelector": copy.deepcopy(_WITH_DRA)}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRA_DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
                     **where, **body}}


def _consumes(counter_set: str, **counters: str) -> Obj:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def _device(name: str, index: int, *, preallocate: bool | None = False, counters: str | None = None,
            consumes: Sequence[Obj] = (), **extra: Any) -> Obj:
    dev: Obj = {"name": name}
    if preallocate is not None:
        dev["attributes"] = {"preallocate": {"bool": preallocate}, "dra.example.com/slice": {"int": index}}
    if counters is not None:
        dev["capacity"] = {"counters": {"value": counters}}
    if consumes:
        dev["consumesCounters"] = list(consumes)
    return {**dev, **extra}


def dra_template_slices(template: str, index: int) -> list[Obj]:
    """Object ``index`` of a ResourceSlice template that ``createAny`` creates ``resourceSlices``
    times: pool ``resourceslice-<index>`` in two slices, its counter sets
    (``resourceslice-countersets-<index>``) and its devices (``resourceslice-devices-<index>``), as
    resource.k8s.io/v1 requires (``sharedCounters`` and ``devices`` never share a slice); the devices
    are on the nodes labelled ``node-with-dra=true``.

    - ``resourceslice-partitionable`` (``-countersets.yaml`` / ``-devices.yaml``): counters 1-4 of 1
      each; two devices of two counters (``counters`` capacity 2; the first ``preallocate``) and four
      of one.
    - ``resourceslice-partitionable-backtracking``: eight ``cpu<k>`` counters and 70Gi of ``mem``;
      eight devices of one cpu each, the first with 20Gi of mem, the others 10Gi: seven devices fit
      only without the first. Its counter-set slice is on node ``scheduler-perf-dra-<index>``.
    - ``resourceslice-consumablecapacity``: counters 1-2; ``shareable-device`` and a two-counter
      device, both ``allowMultipleAllocations`` with 80Gi of memory (``requestPolicy`` default 1Gi,
      at least 1Gi). upstream's template (resource.k8s.io/v1beta2) has both in one slice, which v1
      refuses: split as the partitionable ones."""
    pool = f"resourceslice-{index}"
    sets, devices = f"resourceslice-countersets-{index}", f"resourceslice-devices-{index}"
    if template == "resourceslice-partitionable":
        counters = {f"counter{k}": {"value": "1"} for k in range(1, 5)}
        devs = [_device("device-2-counters-1", index, preallocate=True, counters="2",
                        consumes=[_consumes("counter-set", counter1="1", counter2="1")]),
                _device("device-2-counters-2", index, counters="2",
                        consumes=[_consumes("counter-set", counter3="1", counter4="1")]),
                *(_device(f"device-1-counter-{k}", index, counters="1",
                          consumes=[_consumes("counter-set", **{f"counter{k}": "1"})]) for k in range(1, 5))]
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set", "counters": counters}]}),
                _slice(devices, pool, {"devices": devs})]
    if template == "resourceslice-partitionable-backtracking":
        cpu = {f"cpu{k}": {"value": "1"} for k in range(1, 9)}
        devs = [_device(f"device-{k}", index, preallocate=None,
                        consumes=[_consumes("counter-set-for-cpu", **{f"cpu{k}": "1"}),
                                  _consumes("counter-set-for-mem", mem="20Gi" if k == 1 else "10Gi")])
                for k in range(1, 9)]
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set-for-cpu", "counters": cpu},
                                                       {"name": "counter-set-for-mem",
                                                        "counters": {"mem": {"value": "70Gi"}}}]},
                       node_name=dra_node_name(index)),
                _slice(devices, pool, {"devices": devs})]
    if template == "resourceslice-consumablecapacity":
        memory = {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}}}}
        shareable = _device("shareable-device", index, allowMultipleAllocations=True)
        shareable["capacity"] = copy.deepcopy(memory)
        two = _device("device-2-counters-1", index, preallocate=True, counters="2",
                      consumes=[_consumes("counter-set", counter1="1", counter2="1")], allowMultipleAllocations=True)
        two["capacity"].update(copy.deepcopy(memory))
        counters = {f"counter{k}": {"value": "1"} for k in (1, 2)}
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set", "counters": counters}]}),
                _slice(devices, pool, {"devices": [shareable, two]})]
    raise KeyError(template)


def dra_device_classes(dra: Dra) -> list[Obj]:
    """The DeviceClasses the workload creates with ``createAny``."""
    if dra.classes and dra.scoring:
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": f"scoring-test-class-{i}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}],
                          "extendedResourceName": "example.com/gpu"}} for i in range(dra.classes)]
    if dra.classes:
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"test-class-{i}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}],
                          "extendedResourceName": f"example.com/gpu-{i}"}} for i in range(dra.classes)]
    return [copy.deepcopy(DRA_TEMPLATES[name]) for name in dra.device_classes]


def dra_claim(i: int, namespace: str) -> Obj:
    """``resourceclaim.yaml`` number ``i`` in ``namespace``: ``test-claim-<i>``, one request of test-class."""
    claim = copy.deepcopy(DRA_TEMPLATES["resourceclaim"])
    claim["metadata"] = {"name": f"test-claim-{i}", "namespace": namespace}
    return claim


def dra_init_claims(dra: Dra, size: Size) -> int:
    """upstream's ``initClaims``: the claims allocated before the measured pods (``init_fill``)."""
    devices = size.nodes * dra.max_claims_per_node
    return {"empty": 0, "half": devices // 2, "full": max(devices - size.pods, 0),
            "selector": size.resource_slices}[dra.init_fill]


def dra_selector_claim(k: int) -> Obj:
    """``resourceclaim-with-selector.yaml`` number ``k`` in ``init``: one device with at least two
    counters that is ``preallocate``."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"test-claim-with-selector-{k}", "namespace": "init"},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
                "deviceClassName": "test-class", "selectors": [{"cel": {"expression": (
                    f"device.capacity['{DRA_DRIVER}'].counters.compareTo(quantity('2')) >= 0 &&\n"
                    f"device.attributes['{DRA_DRIVER}'].preallocate")}}]}}]}}}


def dra_selector_allocations(size: Size) -> list[tuple[int, Obj]]:
    """``allocResourceClaims`` over the ``dra_selector_claim`` claims: in a partitionable pool only
    ``device-2-counters-1`` matches the selector, so claim ``k`` gets pool ``k``'s (upstream has one
    claim per slice at every size), with the devices' node selector (the allocator's
    ``nodeSelector`` for a slice that has one)."""
    return [(k, {"devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER, "pool": f"resourceslice-{k}",
                                          "device": "device-2-counters-1"}]},
                 "nodeSelector": copy.deepcopy(_WITH_DRA)}) for k in range(size.resource_slices)]


def dra_init_allocations(dra: Dra, size: Size, rng: random.Random) -> list[tuple[int, Obj]]:
    """upstream's ``allocResourceClaimsOp``: for each of the ``initClaims`` claims (``test-claim-<k>``
    in ``init``), its ``status.allocation`` on a random node that can still take it, without a
    pod, that node's first free device (the allocator's first solution; upstream shuffles the nodes
    and takes the first that fits: a uniform pick among the nodes with a free device, as here)."""
    if dra.init_fill == "selector":
        return []       # dra_selector_allocations
    free = {dra_node_name(i): 0 for i in range(size.nodes)}
    open_nodes = list(free)
    allocations = []
    for k in range(dra_init_claims(dra, size)):
        node = rng.choice(open_nodes)
        device = free[node]
        free[node] += 1
        if free[node] >= dra.max_claims_per_node:
            open_nodes.remove(node)
        allocations.append((k, {
            "devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER, "pool": node,
                                     "device": f"instance-{device}"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}))
    return allocations


def dra_pod(dra: Dra, pod: Obj, i: int) -> Obj:
    """Pod ``i`` of a DRA template with its index filled in: ``test-claim-<i/5>`` for a claim
    reference (``DivideInt .Index 5``), ``example.com/gpu-<i mod classes>`` requested and limited
    for an extended resource (the ``Mod .Index 25`` / ``50`` templates)."""
    for pc in pod["spec"].get("resourceClaims") or ():
        if "resourceClaimName" in pc:
            pc["resourceClaimName"] = f"test-claim-{i // 5}"
    if dra.classes and not dra.scoring:
        gpu = {f"example.com/gpu-{i % dra.classes}": "1"}
        pod["spec"]["containers"][0]["resources"] = {"requests": dict(gpu), "limits": dict(gpu)}
    return pod


@dataclass(frozen=True)
class Size:
    """upstream's ``params``: ``nodes`` (``initNodes``), ``init_pods`` (all init pods together),
    ``pods`` (``measurePods``); ``init_namespaces`` (``initNamespaces``: the init pods are split over
    that many labelled namespaces), ``gated_pods`` (``gatedPods``) and ``resource_slices``
    (``resourceSlices``) where a workload has them."""

    nodes: int
    init_pods: int
    pods: int
    init_namespaces: int = 0
    gated_pods: int = 0
    resource_slices: int = 0

    @property
    def key(self) -> tuple[int, int, int]:
        """What the JSON reports, and what a threshold is looked up by."""
        return (self.nodes, self.init_pods, self.pods)


@dataclass(frozen=True)
class Deleting:
    """upstream's ``deletePods`` op over the init pods' namespace: ``rate`` deletions a second
    (``deletePodsPerSecond``; default DeleteOptions, so each pod's own grace period), started once
    the init ``createPods`` op is done and run in the background (``skipWaitToCompletion``) until the
    measured pods are all bound. ``wait``: whether that init op waits for its pods to be bound
    (SchedulingWhileGated) or not (SchedulingDeletedPodsWithFinalizers' ``skipWaitToCompletion``).
    ``gated_namespace``: where the ``gated_pods`` of the ``gated`` template are created first,
    never to be scheduled (their gate stays)."""

    rate: float
    wait: bool = True
    gated: str | None = None
    gated_namespace: str = "namespace-1"


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
    # Service templates created in ``namespace`` before any pod (upstream's ``createAny``).
    services: tuple[str, ...] = ()
    # Each pod's own PV and claim (``persistentVolumeTemplatePath``), and the nodes' CSINodes.
    volumes: Volumes | None = None
    node_strategy: NodeAllocatable | None = None
    # The DRA ops (nodes with the test driver's slices, classes, claims, templates, steady state).
    dra: Dra | None = None
    # Nodes (``workload_nodes``): the named node first; a share of tainted nodes; extended resources.
    named_node: bool = False
    tainted_share: float = 0.0
    extended_resource: bool = False
    # Init pods of several templates, in this order (``init_batches``); namespace labels.
    init_templates: tuple[str, ...] = ()
    ns_labels: tuple[tuple[str, str], ...] = ()
    # Pods deleted while the measured ones schedule, and gated pods (``Deleting``).
    deleting: Deleting | None = None
    # Other thresholded sizes: (nodes, init pods, measured pods) -> upstream's bar, in both modes.
    other_thresholds: tuple[tuple[tuple[int, int, int], float], ...] = ()
    # The SchedulingProfile spec the workload runs under (upstream's ``schedulerConfigPath``), merged
    # under the bench's own (the CLI's --profile wins); None: the default profile.
    profile: Obj | None = None
    # upstream's ``featureGates`` (merged under ``bench --feature-gates``); the PodGroup ops (podgroups.py).
    feature_gates: tuple[tuple[str, bool], ...] = ()
    groups: Groups | None = None
    # the measured createPods op's signatureBatchSize (batching.py; 0: no signature label), and
    # numNodeDeclaredFeatures of the NodeDeclaredFeatures workloads (declaredfeatures.py).
    signature_batch: int = 0
    node_features: DeclaredFeatures | None = None

    def threshold_for(self, mode: str, size: Size) -> float | None:
        """The bar a run must clear: only at a thresholded size (the default one, or one of
        ``other_thresholds``), as upstream's CI; upstream's own bar in both modes, since upstream measures it against a
        real API server."""
        del mode
        if size.key == self.default.key:
            return self.threshold
        return dict(self.other_thresholds).get(size.key)

    @property
    def default(self) -> Size:
        return self.sizes[0]


def _w(name: str, measured: str, sizes: Sequence[tuple[int, ...]], threshold: float | None, **kw: Any) -> Workload:
    return Workload(name, measured, tuple(Size(*s) for s in sizes), threshold, **kw)


_AFF = {"init_namespace": "sched-0", "namespace": "sched-1"}
_MOON = ("moon-1", "moon-2", "moon-3")
# volumes/performance-config.yaml's nodeAllocatableStrategy: 39 EBS attachments per node; the
# migrated workload's CSINodes also say the in-tree aws-ebs plugin is migrated to that driver.
_DRA_NS = {"init_namespace": "init", "namespace": "test"}
_GW = (("GenericWorkload", True),)        # the PodGroup workloads' featureGates
_EBS_CSI_NODES = NodeAllocatable(((f"attachable-volumes-csi-{EBS_CSI}", "39"),), ((EBS_CSI, 39),))

WORKLOADS: dict[str, Workload] = {w.name: w for w in (
    # 5000Nodes_50000Pods (5000 / 5000 / 50000) has its own bar, 810 (misc/performance-config.yaml).
    _w("SchedulingBasic", "pod-default", [(5000, 1000, 10000), (5000, 5000, 50000), (500, 500, 1000)], 680,
       other_thresholds=(((5000, 5000, 50000), 810),)),
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
    # --- upstream's newer workloads. Measured namespaces are createPods' default,
    # namespace-<op index>, where upstream names none. End to end their bar is upstream's own.
    # misc/performance-config.yaml SchedulingDaemonset (15000Nodes): the named node and 15000 default
    # ones; every pod's node affinity names the named node (metadata.name), so NodeAffinity's
    # PreFilterResult leaves one node to filter.
    _w("SchedulingDaemonset", "daemonset-pod", [(15000, 0, 30000), (5, 0, 10)], 1100,
       named_node=True),
    # topology_spreading/performance-config.yaml SchedulingWithNodeInclusionPolicy (5000Nodes): 4000
    # default nodes and 1000 node-with-taint.yaml ones (a fifth at every upstream size), spread by
    # hostname over the nodes the pods' node affinity and taints admit.
    _w("SchedulingWithNodeInclusionPolicy", "pod-with-node-inclusion-policy", [(5000, 0, 4000), (500, 0, 400),
                                                                              (5, 0, 4)], 270,
       tainted_share=0.2),
    # affinity/performance-config.yaml MixedSchedulingBasePod (5000Nodes_5000Pods): initPods (2000) of
    # each of five templates in sched-0 (init_pods is their total), then default pods measured.
    _w("MixedSchedulingBasePod", "pod-default", [(5000, 10000, 5000), (500, 1000, 1000), (5, 10, 10)], 140,
       zones=("zone1",), init_namespace="sched-0", namespace="namespace-7",
       init_templates=("pod-default", "pod-with-pod-affinity", "pod-with-pod-anti-affinity",
                       "pod-with-preferred-pod-affinity", "pod-with-preferred-pod-anti-affinity")),
    # affinity/ SchedulingPodMatchingAntiAffinity (5000Nodes_5000Pods_QueueingHintsEnabled, 543; 595
    # with hints off): the measured pods carry no affinity but match the init pods' anti-affinity.
    _w("SchedulingPodMatchingAntiAffinity", "pod-with-pod-anti-affinity-label", [(5000, 1000, 5000), (500, 100, 400),
                                                                                (5, 1, 4)], 543,
       init="pod-with-pod-anti-affinity", **_AFF),
    # affinity/ the namespaceSelector workloads: initNamespaces namespaces init-ns-<k> and
    # measure-ns-0, all labelled team=devops (namespace-with-labels.yaml); createPodSets puts
    # initPodsPerNamespace pods in each (a size's init_pods is the total). Upstream's required
    # anti-affinity 5000Nodes_2000Pods has 6000 nodes.
    *(_w(name, tmpl, sizes, bar, init=tmpl, init_namespace="init-ns-0", namespace="measure-ns-0",
         ns_labels=(("team", "devops"),), **kw)
      for name, tmpl, sizes, bar, kw in (
          ("SchedulingRequiredPodAntiAffinityWithNSSelector", "pod-anti-affinity-ns-selector",
           [(6000, 4000, 2000, 100), (500, 40, 100, 10), (10, 4, 6, 2)], 24, {}),
          ("SchedulingPreferredAntiAffinityWithNSSelector", "pod-preferred-anti-affinity-ns-selector",
           [(5000, 4000, 2000, 100), (500, 40, 100, 10), (10, 4, 10, 2)], 55, {}),
          ("SchedulingRequiredPodAffinityWithNSSelector", "pod-affinity-ns-selector",
           [(5000, 5000, 2000, 100), (500, 40, 100, 10), (10, 4, 10, 2)], 35, {"zones": ("zone1",)}),
          ("SchedulingPreferredAffinityWithNSSelector", "pod-preferred-affinity-ns-selector",
           [(5000, 5000, 5000, 100), (500, 40, 100, 10), (10, 4, 10, 2)], 90, {}))),
    # misc/ SchedulingWhileGated (1Node_10000GatedPods): the named node only; 10000 gated pods
    # (namespace-1) stay gated; 20000 light pods (namespace-3) are bound, then deleted 50 a second
    # while 20000 light pods are measured (namespace-5). nodes = 0: the named node is the only one.
    _w("SchedulingWhileGated", "light-pod", [(0, 20000, 20000, 0, 10000), (0, 10, 10, 0, 10)], 910,
       named_node=True, init="light-pod", init_namespace="namespace-3", namespace="namespace-5",
       deleting=Deleting(50, wait=True, gated="gated-pod")),
    # misc/ SchedulingDeletedPodsWithFinalizers (5000Node_5000DeletingPods): 5000 pods with a
    # finalizer (namespace-1), not waited for, deleted 100 a second (each then stays with its
    # deletionTimestamp) while 5000 light pods are measured (namespace-3).
    _w("SchedulingDeletedPodsWithFinalizers", "light-pod", [(5000, 5000, 5000), (1000, 1000, 1000), (10, 10, 10)],
       830, init="pod-with-finalizer", init_namespace="namespace-1", namespace="namespace-3",
       deleting=Deleting(100, wait=False)),
    # misc/ SchedulingWithExtendedResource (5000pods_5000nodes; 180 with DRAExtendedResource off or
    # on: no DeviceClass names foo.com/bar-*, so it is a plain extended resource): pod i fits node i only.
    _w("SchedulingWithExtendedResource", "pod-with-indexed-extended-resource", [(5000, 0, 5000), (500, 0, 500),
                                                                                (10, 0, 10)], 180,
       extended_resource=True, namespace="test"),
    # volumes/performance-config.yaml: every pod with its own pre-bound PV; thresholds of the
    # 5000-node performance workloads (5000Nodes_2000Pods, 5000Nodes_5000Pods).
    _w("SchedulingInTreePVs", "pod-default", [(5000, 1000, 2000), (5000, 5000, 1000), (500, 500, 1000)], 290,
       volumes=Volumes("pv-aws")),
    _w("SchedulingMigratedInTreePVs", "pod-default", [(5000, 5000, 5000), (5000, 5000, 1000), (500, 500, 1000)],
       100, volumes=Volumes("pv-aws"),
       node_strategy=replace(_EBS_CSI_NODES, migrated_plugins=("kubernetes.io/aws-ebs",))),
    _w("SchedulingCSIPVs", "pod-default", [(5000, 5000, 5000), (5000, 5000, 1000), (500, 500, 1000)], 100,
       volumes=Volumes("pv-csi"), node_strategy=_EBS_CSI_NODES),
    # High-priority pods with PVs preempting low-priority ones without; no threshold (1000Nodes,
    # labels performance and short; the 5000-node size is commented out upstream, issue #108308).
    _w("PreemptionPVs", "pod-high-priority", [(1000, 4000, 1000), (500, 2000, 500)], None,
       init="pod-low-priority", volumes=Volumes("pv-aws", init=False)),
    # dra/performance-config.yaml. Sizes are (nodesWithDRA, initPods, measurePods); thresholds are
    # those of the QueueingHintsEnabled variants (this scheduler always runs its queueing hints; the
    # hints-off variants' bars are 40, 64, 70 and 60).
    _w("SchedulingWithResourceClaimTemplate", "pod-with-claim-template", [(500, 2500, 2500), (200, 1000, 1000)], 56,
       init="pod-with-claim-template", **_DRA_NS, dra=Dra()),
    # steadyState: 10 pods at a time for 10 s over 0, half or all-but-10 of the devices already
    # allocated (empty_/half_/full_<N>nodes; one bench workload per fill, as each has its own bar).
    *(_w(f"SteadyStateClusterResourceClaimTemplate/{fill}", "pod-with-claim-template",
         [(500, 0, 10), (200, 0, 10), (100, 0, 10)], bar, **_DRA_NS, dra=Dra(init_fill=fill, steady=10.0))
      for fill, bar in (("empty", 64), ("half", 60), ("full", 60))),
    # Five pods share each claim (test-claim-<i/5>), two devices per node; no bar (no performance label).
    _w("SchedulingWithResourceClaim", "pod-with-claim-ref", [(500, 2500, 2500), (200, 1000, 1000)], None,
       init="pod-with-claim-ref", **_DRA_NS, dra=Dra(max_claims_per_node=2, claim_template=None, claim_ref=True)),
    # dra/prioritizedlist: firstAvailable, whose first subrequest's class (no-devices-class) matches
    # no device; upstream runs it at its integration-test size only (1 + 1 nodes, 10 pods).
    # dra/devicetaints: SchedulingWithResourceClaimTemplate with a DeviceTaintRule tainting every
    # device, tolerated by the claim template; upstream runs it at its fast size only (1 + 1 nodes).
    _w("SchedulingWithResourceClaimTemplateToleration", "pod-with-claim-template", [(1, 0, 10)], None, **_DRA_NS,
       dra=Dra(nodes_without_dra=1, claim_template="resourceclaimtemplate-toleration",
               taint_rules=("devicetaintrule",))),
    # dra/partitionabledevices (no createResourceDriver; no bar, no performance label; the fast sizes
    # are labelled integration-test and short, 2000pods_100nodes has no label). Partitionable:
    # resourceSlices pools, each pool's preallocate device held by an allocResourceClaims claim, then
    # steady batches of measurePods pods, each taking two devices of one pool (matchAttribute
    # dra.example.com/slice): one backtrack each. fast: 1 + 1 nodes, 10 slices, 10 pods, 2 s;
    # 2000pods_100nodes: 100 nodes, 2000 slices, 2000 pods, 10 s. Backtracking: one pool of eight
    # devices sharing 70Gi, seven of them wanted (fast only: 1 + 1 nodes, 1 slice, 1 pod, 2 s).
    *(_w(name, "pod-with-claim-template", [size], None, **_DRA_NS,
         dra=Dra(nodes_without_dra=without, driver=False, slices=("resourceslice-partitionable",),
                 init_fill="selector", claim_template="resourceclaimtemplate-for-two-devices", steady=steady))
      for name, size, without, steady in (
          ("SteadyStateClusterResourceClaimTemplatePartitionable", (100, 0, 2000, 0, 0, 2000), 0, 10.0),
          ("SteadyStateClusterResourceClaimTemplatePartitionable/fast", (1, 0, 10, 0, 0, 10), 1, 2.0))),
    _w("SteadyStateClusterResourceClaimTemplatePartitionableBacktracking/fast", "pod-with-claim-template",
       [(1, 0, 1, 0, 0, 1)], None, **_DRA_NS,
       dra=Dra(nodes_without_dra=1, driver=False, slices=("resourceslice-partitionable-backtracking",),
               claim_template="resourceclaimtemplate-backtracking", steady=2.0)),
    # dra/consumablecapacity: the test driver's slices (maxClaimsPerNode devices a node, which the
    # class's allowMultipleAllocations selector leaves out) and resourceSlices pools of two shareable
    # 80Gi devices; steady batches of pods, each claiming 10Gi twice. fast: 1 + 1 nodes, 1 slice,
    # 1 pod, 2 s, 2 claims a node; 2000pods_100nodes: 100 nodes, 2000 slices, 2000 pods, 10 s, 20.
    *(_w(name, "pod-with-claim-template", [size], None, **_DRA_NS,
         dra=Dra(nodes_without_dra=without, max_claims_per_node=per_node,
                 device_classes=("deviceclass-consumablecapacity",), slices=("resourceslice-consumablecapacity",),
                 claim_template="resourceclaimtemplate-consumablecapacity", steady=steady))
      for name, size, without, per_node, steady in (
          ("SteadyStateClusterResourceClaimTemplateConsumableCapacity", (100, 0, 2000, 0, 0, 2000), 0, 20, 10.0),
          ("SteadyStateClusterResourceClaimTemplateConsumableCapacity/fast", (1, 0, 1, 0, 0, 1), 1, 2, 2.0))),
    # dra/performance-config.yaml's DRABindingConditionsTest and ...WithSharedResourceClaimTest
    # (integration-test, short; no bar): the driver's devices need DeviceAttached; the pods wait in
    # PreBind until updateDeviceConditions sets DeviceAttached (all bound) or AttachmentFailed (none
    # bound for 5 s). fast: 1 node, 1 device, 1 pod; multiple_pods: 1 node, 10 devices, 5 pods
    # (with the shared claim: five pods, one claim).
    *(_w(f"{test}/{size_name}_{case}", tmpl, [(1, 0, pods)], None, **_DRA_NS,
         dra=Dra(max_claims_per_node=devices, binding=(cond, "True"), scheduled=cond == "DeviceAttached",
                 claim_template=None if shared else "resourceclaimtemplate", claim_ref=shared))
      for test, tmpl, shared in (("DRABindingConditionsTest", "pod-with-claim-template", False),
                                 ("DRABindingConditionsWithSharedResourceClaimTest", "pod-with-claim-ref", True))
      for size_name, pods, devices in (("fast", 1, 1), ("multiple_pods", 5, 10))
      if test == "DRABindingConditionsTest" or size_name == "multiple_pods"
      for case, cond in (("AttachmentSuccess", "DeviceAttached"), ("AttachmentFailed", "AttachmentFailed"))),
    _w("FirstAvailable", "pod-with-claim-template", [(1, 0, 10)], None, **_DRA_NS,
       dra=Dra(nodes_without_dra=1, device_classes=("deviceclass", "deviceclass-no-devices"),
               claim_template="resourceclaimtemplate-first-available")),
    # dra/extendedresource: pods asking for example.com/gpu-<i mod N>, which N DeviceClasses back
    # (extendedResourceName); DynamicResources makes each pod's claim in PreBind.
    _w("ExtendedResource", "pod-with-extended-resource", [(1, 0, 10)], None, init="pod-with-extended-resource",
       **_DRA_NS, dra=Dra(nodes_without_dra=1, device_classes=(), claim_template=None, classes=10)),
    *(_w(f"ExtendedResource_{n}Classes", "pod-with-extended-resource", [(500, 2500, 2500), (200, 1000, 1000)], bar,
         init="pod-with-extended-resource", **_DRA_NS,
         dra=Dra(device_classes=(), claim_template=None, classes=n))
      for n, bar in ((25, 197), (50, 195))),
    # dra/extendedresource/scoring (at 439aa97): ExtendedResourceScoring, its own scheduler config
    # (SCORING_PROFILE); 2000pods_200nodes (10 classes, bar 336), 5000pods_500nodes (20 classes, bar
    # 164), both 20 devices per node and no init pods, and fast (2 classes, 3 + 1 nodes, 10 devices,
    # 10 pods). The classes differ by size, so each size is its own workload, as the 25/50-class ones.
    *(_w(name, "pod-with-extended-resource-scoring", [size], bar, **_DRA_NS,
         profile=SCORING_PROFILE,
         dra=Dra(device_classes=(), claim_template=None, classes=classes, scoring=True,
                 max_claims_per_node=per_node, nodes_without_dra=without))
      for name, size, bar, classes, per_node, without in (
          ("ExtendedResourceScoring", (200, 0, 2000), 336, 10, 20, 0),
          ("ExtendedResourceScoring_5000pods_500nodes", (500, 0, 5000), 164, 20, 20, 0),
          ("ExtendedResourceScoring/fast", (3, 0, 10), None, 2, 10, 1))),
    # podgroup/gangscheduling and podgroup/basicscheduling (no bar, no init pods): pods = groups x
    # podsPerGroup, 100m each; 5000Nodes_{1000,2000,3000}Gangs_{3000,6000,9000}Pods, then the
    # integration-test sizes (100Nodes_10Gangs, 10Nodes_3Gangs); /1000PerGroup are the
    # 5000Nodes_{3,6,9}Gangs_..._1000PerGroup sizes, /5000PerGroup 5000Nodes_10Gangs_50000Pods.
    *(_w(f"{name}{suffix}", pod, sizes, None, init_namespace=f"{ns}-0", namespace=f"{ns}-0", feature_gates=_GW,
         groups=Groups(GroupOp(group, pod, per)))
      for name, pod, group, ns in (("GangScheduling", "gang-pod", "gang", "gang-ns"),
                                   ("BasicScheduling", "basic-pod", "basic", "basic-ns"))
      for suffix, per, sizes in (
          ("", 3, [(5000, 0, 3000), (5000, 0, 6000), (5000, 0, 9000), (100, 0, 30), (10, 0, 9)]),
          ("/1000PerGroup", 1000, [(5000, 0, 3000), (5000, 0, 6000), (5000, 0, 9000)]),
          ("/5000PerGroup", 5000, [(5000, 0, 50000)]))),
    # workload_preemption/performance-config.yaml: gangs preempting low-priority pods (Basic), gangs
    # (PodGroups), pods next to anchors (Affinity) or spread by zone (TopologySpreading); init pods
    # in gang-preempt-1, the measured gangs in gang-preempt-0. The base name has the 100-node
    # performance size with one big gang; /10PerGroup its ten-gang size; /2PerGroup (/3PerGroup)
    # the integration-test size.
    *(_w(f"{name}{suffix}", measured, [size], None, init=init, init_namespace="gang-preempt-1",
         namespace="gang-preempt-0", zones=zones, feature_gates=_GW,
         groups=Groups(GroupOp("preemption", measured, per, priority, cpu, port),
                       GroupOp("preemption", init, per, 1000, "600m", 8000) if init == "preemptor-gang-pod" else None,
                       anchors=name == "GangPreemptionAffinity"))
      for name, measured, init, zones, variants in (
          ("GangPreemptionBasic", "preemptor-gang-pod", "pod-low-priority-indexed", (), (
              ("", 100, (100, 1000, 100), None, "3970m", None),
              ("/10PerGroup", 10, (100, 1000, 100), None, "3970m", None),
              ("/2PerGroup", 2, (2, 10, 2), None, "3970m", None))),
          ("GangPreemptionPodGroups", "preemptor-gang-pod", "preemptor-gang-pod", (), (
              ("", 100, (100, 500, 100), 9999999, "3500m", 9000),
              ("/10PerGroup", 10, (100, 500, 100), 9999999, "3500m", 9000),
              ("/2PerGroup", 2, (2, 4, 2), 9999999, "3500m", 9000))),
          ("GangPreemptionAffinity", "pod-gang-affinity", "pod-low-priority-indexed", (), (
              ("", 100, (100, 1000, 100), None, None, None),
              ("/10PerGroup", 10, (100, 1000, 100), None, None, None),
              ("/2PerGroup", 2, (2, 10, 2), None, None, None))),
          ("GangPreemptionTopologySpreading", "gang-pod-with-topology-spreading", "pod-low-priority-indexed",
           ("zone-1", "zone-2", "zone-3"), (
              ("", 16, (100, 1000, 96), 9999999, "3970m", None),
              ("/3PerGroup", 3, (3, 12, 3), 9999999, "3900m", None))))
      for suffix, per, size, priority, cpu, port in variants),
    # batching/ HostPortConflict and ResourceSaturation; nodedeclaredfeatures/ (their own modules).
    *batching.workloads(_w), *declaredfeatures.workloads(_w),
)}
