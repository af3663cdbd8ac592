"""Upstream's newer scheduler_perf workloads in ``kopf-scheduler bench`` (issue #21), at upstream's
integration-test sizes, in core and e2e mode: every measured pod bound to a node its constraints
allow, the gated pods left gated, the deleted pods gone (or kept by their finalizer), and the
objects built as upstream's templates build them. Results only: the timing thresholds live in the
benchmark."""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import replace

import pytest

from scheduler.benchmark import workloads
from scheduler.benchmark.core import RunResult, run_core
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import NAMED_NODE, extended_resource_pod, template
from scheduler.benchmark.workloads import WORKLOADS, init_batches, namespace_objects, workload_nodes

# upstream's smallest (integration-test) workloads of each: 5Nodes, 10Nodes, 1Node_10GatedPods,
# 10Node_100DeletingPods (10 deleting pods), fast (its node without the resource left out)
SMOKE = {
    "SchedulingDaemonset": Size(5, 0, 10),
    "SchedulingWithNodeInclusionPolicy": Size(5, 0, 4),
    "MixedSchedulingBasePod": Size(5, 10, 10),
    "SchedulingPodMatchingAntiAffinity": Size(5, 1, 4),
    "SchedulingRequiredPodAntiAffinityWithNSSelector": Size(10, 4, 6, init_namespaces=2),
    "SchedulingPreferredAntiAffinityWithNSSelector": Size(10, 4, 10, init_namespaces=2),
    "SchedulingRequiredPodAffinityWithNSSelector": Size(10, 4, 10, init_namespaces=2),
    "SchedulingPreferredAffinityWithNSSelector": Size(10, 4, 10, init_namespaces=2),
    "SchedulingWhileGated": Size(0, 10, 10, gated_pods=10),
    "SchedulingDeletedPodsWithFinalizers": Size(10, 10, 10),
    "SchedulingWithExtendedResource": Size(10, 0, 10),
}


def test_upstreams_sizes_and_thresholds() -> None:
    got = {name: (WORKLOADS[name].default, WORKLOADS[name].threshold) for name in SMOKE}
    assert got == {
        "SchedulingDaemonset": (Size(15000, 0, 30000), 1100),
        "SchedulingWithNodeInclusionPolicy": (Size(5000, 0, 4000), 270),
        "MixedSchedulingBasePod": (Size(5000, 10000, 5000), 140),
        "SchedulingPodMatchingAntiAffinity": (Size(5000, 1000, 5000), 543),
        "SchedulingRequiredPodAntiAffinityWithNSSelector": (Size(6000, 4000, 2000, init_namespaces=100), 24),
        "SchedulingPreferredAntiAffinityWithNSSelector": (Size(5000, 4000, 2000, init_namespaces=100), 55),
        "SchedulingRequiredPodAffinityWithNSSelector": (Size(5000, 5000, 2000, init_namespaces=100), 35),
        "SchedulingPreferredAffinityWithNSSelector": (Size(5000, 5000, 5000, init_namespaces=100), 90),
        "SchedulingWhileGated": (Size(0, 20000, 20000, gated_pods=10000), 910),
        "SchedulingDeletedPodsWithFinalizers": (Size(5000, 5000, 5000), 830),
        "SchedulingWithExtendedResource": (Size(5000, 0, 5000), 180),
    }
    for name, size in SMOKE.items():       # each smoke size is one of the workload's sizes
        assert size in WORKLOADS[name].sizes, name
    gated, final = WORKLOADS["SchedulingWhileGated"].deleting, WORKLOADS["SchedulingDeletedPodsWithFinalizers"].deleting
    assert gated is not None and (gated.rate, gated.wait, gated.gated) == (50, True, "gated-pod")
    assert final is not None and (final.rate, final.wait, final.gated) == (100, False, None)
    # end to end the bar is upstream's own, as in core mode (none is invented)
    for name, small in SMOKE.items():
        w = WORKLOADS[name]
        assert w.threshold_for("e2e", w.default) == w.threshold_for("core", w.default) == w.threshold, name
        assert w.threshold_for("core", small) is None, name
    # SchedulingBasic's second thresholded size; its default size's bar is upstream's in both modes too
    basic = WORKLOADS["SchedulingBasic"]
    assert basic.threshold_for("core", Size(5000, 5000, 50000)) == basic.threshold_for("e2e", Size(
        5000, 5000, 50000)) == 810
    assert (basic.threshold_for("core", basic.default), basic.threshold_for("e2e", basic.default)) == (680, 680)
    # every thresholded workload: upstream's bar end to end, as in core mode (issue #21)
    for w in WORKLOADS.values():
        assert w.threshold_for("e2e", w.default) == w.threshold_for("core", w.default) == w.threshold, w.name


def test_the_nodes_namespaces_and_templates_are_upstreams() -> None:
    rng = random.Random(0)
    # the named node first (node-with-name.yaml, 90000 pods), then the default ones
    nodes = workload_nodes(WORKLOADS["SchedulingDaemonset"], Size(3, 0, 1), rng)
    assert [n["metadata"]["name"] for n in nodes] == [NAMED_NODE, "scheduler-perf-0", "scheduler-perf-1",
                                                      "scheduler-perf-2"]
    assert nodes[0]["status"]["capacity"] == {"pods": "90000", "cpu": "4", "memory": "32Gi"}
    assert template("daemonset-pod")["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"] == [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NAMED_NODE]}]}]
    # a fifth of the nodes tainted (upstream's 1 of 5, 100 of 500, 1000 of 5000)
    nodes = workload_nodes(WORKLOADS["SchedulingWithNodeInclusionPolicy"], Size(5000, 0, 1), rng)
    tainted = [n for n in nodes if n["spec"].get("taints")]
    assert len(tainted) == 1000 and tainted[0]["spec"]["taints"] == [{"effect": "NoSchedule", "key": "foo"}]
    (tsc,) = template("pod-with-node-inclusion-policy")["spec"]["topologySpreadConstraints"]
    assert (tsc["maxSkew"], tsc["topologyKey"], tsc["nodeAffinityPolicy"], tsc["nodeTaintsPolicy"]) == (
        1, "kubernetes.io/hostname", "Honor", "Honor")
    # node i has one foo.com/bar-i, which pod i alone asks for
    node = workload_nodes(WORKLOADS["SchedulingWithExtendedResource"], Size(3, 0, 1), rng)[2]
    assert node["metadata"]["labels"]["node-with-extended-resource"] == "true"
    assert node["status"]["capacity"]["foo.com/bar-2"] == node["status"]["allocatable"]["foo.com/bar-2"] == "1"
    pod = extended_resource_pod(template("pod-with-indexed-extended-resource"), 2)
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"foo.com/bar-2": "1"},
                                                         "limits": {"foo.com/bar-2": "1"}}
    # namespaceSelector workloads: init-ns-<k> and measure-ns-0 labelled team=devops, the init pods split
    w = WORKLOADS["SchedulingRequiredPodAntiAffinityWithNSSelector"]
    size = Size(10, 4, 6, init_namespaces=2)
    assert [(n["metadata"]["name"], n["metadata"]["labels"]) for n in namespace_objects(w, size)] == [
        ("init-ns-0", {"team": "devops"}), ("init-ns-1", {"team": "devops"}), ("measure-ns-0", {"team": "devops"})]
    assert init_batches(w, size) == [("pod-anti-affinity-ns-selector", "init-ns-0", 2),
                                     ("pod-anti-affinity-ns-selector", "init-ns-1", 2)]
    (term,) = template("pod-anti-affinity-ns-selector")["spec"]["affinity"]["podAntiAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]
    assert term["namespaceSelector"] == {"matchLabels": {"team": "devops"}} and "namespaces" not in term
    # MixedSchedulingBasePod: initPods of each of five templates in sched-0
    assert [t for t, ns, n in init_batches(WORKLOADS["MixedSchedulingBasePod"], Size(5, 10, 10))] == [
        "pod-default", "pod-with-pod-affinity", "pod-with-pod-anti-affinity", "pod-with-preferred-pod-affinity",
        "pod-with-preferred-pod-anti-affinity"]
    assert template("pod-with-finalizer")["metadata"]["finalizers"] == ["test.k8s.io/finalizer"]
    assert template("gated-pod")["spec"]["schedulingGates"] == [{"name": "test.k8s.io/hold"}]
    assert template("light-pod")["spec"]["terminationGracePeriodSeconds"] == 0


def _check_shape(name: str, size: Size, r: RunResult) -> None:
    """What each workload must leave, whichever mode ran it."""
    assert r.complete and r.bound == size.pods, (name, r.bound)
    assert len(r.placements) == size.pods
    nodes = set(r.placements.values())
    if name in ("SchedulingDaemonset", "SchedulingWhileGated"):
        assert nodes == {NAMED_NODE}
    elif name == "SchedulingWithNodeInclusionPolicy":
        # maxSkew 1 by hostname over the untainted nodes only: one pod on each of the 4 normal nodes
        assert sorted(Counter(r.placements.values()).values()) == [1] * 4
        assert not any(n.startswith("taint-node-") for n in nodes)
    elif name == "SchedulingPodMatchingAntiAffinity":
        # the init pod's anti-affinity (namespaces sched-0 and sched-1) keeps the matching pods off its node
        (init_node,) = r.init_placements.values()
        assert init_node not in nodes
    elif name == "SchedulingRequiredPodAntiAffinityWithNSSelector":
        # every pod repels every other across the labelled namespaces: 10 pods on 10 nodes
        every = [*r.init_placements.values(), *r.placements.values()]
        assert len(every) == 10 and len(set(every)) == 10
    elif name == "SchedulingPreferredAffinityWithNSSelector":
        # the measured pods prefer the init pods' nodes, found through the namespace selector
        assert nodes <= set(r.init_placements.values())
    elif name == "SchedulingWithExtendedResource":
        assert r.placements == {f"test/test-extended-resource-{i}": f"scheduler-perf-extended-resource-{i}"
                                for i in range(size.pods)}
    elif name == "MixedSchedulingBasePod":
        assert len(r.init_placements) == size.init_pods
    if name == "SchedulingWhileGated":
        # the gated pods never bound; the light pods deleted (grace 0, no finalizer: gone)
        assert r.pods == {"initGone": size.init_pods, "initTerminating": 0, "initTerminatingBound": 0,
                          "gated": size.gated_pods, "gatedBound": 0}
    if name == "SchedulingDeletedPodsWithFinalizers":
        # every deleted pod kept by its finalizer, with its deletionTimestamp; none gone
        assert r.pods["initGone"] == 0 and r.pods["initTerminating"] == size.init_pods


def _fast_deletions(name: str, monkeypatch: pytest.MonkeyPatch, rate: float) -> Size:
    """The deleting workloads: upstream's 50 or 100 deletions a second outlast a 10-pod run, so a
    faster rate and more measured pods let every deletion happen before the measured pods are bound."""
    w, size = WORKLOADS[name], SMOKE[name]
    if w.deleting is None:
        return size
    monkeypatch.setitem(workloads.WORKLOADS, name, replace(w, deleting=replace(w.deleting, rate=rate)))
    return replace(size, pods=300)


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_core_mode_binds_every_measured_pod_where_it_may_go(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    size = _fast_deletions(name, monkeypatch, 10_000)
    r = run_core(name, size, time_limit=60)
    _check_shape(name, size, r)


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_e2e_mode_binds_every_measured_pod_where_it_may_go(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator against the simulated cluster: labelled namespaces, tainted and named nodes,
    extended resources, gated pods (the API sets their SchedulingGated condition) and DELETEs
    through the API (a finalizer keeps the pod with its deletionTimestamp; its binding is refused)."""
    from scheduler.benchmark.e2e import run_e2e
    size = _fast_deletions(name, monkeypatch, 1_000)
    r = run_e2e(name, size, time_limit=120)
    assert r.mode == "e2e"
    _check_shape(name, size, r)
