"""scheduler_perf's workloads: upstream's node and pod templates, sizes, churn and thresholds.

Each ``Workload`` is upstream's ``workloadTemplate`` reduced to what kopf-scheduler needs: create
``nodes`` nodes (the default node: 4 CPU, 32Gi, 110 pods, Ready; a zone label drawn from
``zones`` as ``labelNodePrepareStrategy`` does), schedule ``init_pods`` pods of ``init``
(not measured), then ``pods`` pods of ``measured`` (measured), while ``churn`` creates or recreates
objects every ``interval`` seconds. The templates are upstream's ``templates/*.yaml`` (``templates.py``) with the same
requests, labels, selectors and namespaces (``sched-0`` for init pods and ``sched-1`` for measured
ones where upstream names them).

Nodes carry ``kubernetes.io/hostname`` (as a kubelet sets it), so hostname-keyed affinity really
constrains placement. ``threshold`` is upstream's CI bar for the thresholded size (minimum average
pods/s), in both modes: upstream measures it against a real API server, so end to end is the
honest comparison; ``sizes`` lists the sizes it runs at, the first one being the default and
the thresholded one.

**Volumes** (upstream's ``volumes/performance-config.yaml`` and ``misc/``'s PreemptionPVs): a workload
with ``volumes`` gives each of its pods its own pre-bound PersistentVolume (``volumes.py``).

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

**Dynamic resource allocation** (upstream's ``dra/performance-config.yaml`` and its subdirectories):
a workload with ``dra`` (``Dra``) runs against the DRA test driver's nodes (``dynamicresources.py``).

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

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from scheduler.benchmark import batching, declaredfeatures
from scheduler.benchmark.declaredfeatures import DeclaredFeatures
from scheduler.benchmark.dynamicresources import (
    SCORING_PROFILE,
    Dra,
)
from scheduler.benchmark.podgroups import GroupOp, Groups
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import (
    EXTENDED_RESOURCE,
    NAMED_NODE,
    ZONE,
    make_node,
)
from scheduler.benchmark.volumes import (
    EBS_CSI,
    NodeAllocatable,
    Volumes,
)

__all__ = ["WORKLOADS", "Churn", "Deleting", "Workload", "init_batches", "init_namespaces", "namespace_objects",
           "workload_nodes"]

Obj = dict[str, Any]


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
