"""scheduler_perf's batching workloads (``scheduler/benchmark/batching.py``): upstream's
``batching/performance-config.yaml`` as data, each at its integration-test size in both modes,
batching pods as their signature labels say, and placing them exactly as with the gate off."""

from __future__ import annotations

import pytest

from scheduler.benchmark import batching
from scheduler.benchmark.core import _bench_service, run_core
from scheduler.benchmark.sink import pod_objects
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import WORKLOADS

# (bench workload, upstream test/workload of batching/performance-config.yaml, initNodes,
# measurePods, signatureBatchSize, OpportunisticBatching, labels)
UPSTREAM = [
    (f"{test}{suffix}", f"{test}/{case}", nodes, pods, batch, gate, labels)
    for test in ("HostPortConflict", "ResourceSaturation")
    for suffix, case, nodes, pods, batch, gate, labels in (
        ("", "10Nodes_10Pods_10BatchSize", 10, 10, 10, True, ("integration-test", "short")),
        ("", "20000Nodes_20000Pods_10BatchSize", 20000, 20000, 10, True, ("performance",)),
        ("/100BatchSize", "20000Nodes_20000Pods_100BatchSize", 20000, 20000, 100, True, ("performance",)),
        ("/1000BatchSize", "20000Nodes_20000Pods_1000BatchSize", 20000, 20000, 1000, True, ("performance",)),
        ("/5000BatchSize", "20000Nodes_20000Pods_5000BatchSize", 20000, 20000, 5000, True, ("performance",)),
        ("/20000BatchSize", "20000Nodes_20000Pods_20000BatchSize", 20000, 20000, 20000, True, ("performance",)),
        ("/OpportunisticBatchingDisabled", "20000Nodes_20000Pods_OpportunisticBatchingDisabled", 20000, 20000, 1,
         False, ("performance",)),
    )]
SMOKE_SIZE = Size(10, 0, 10)     # 10Nodes_10Pods_10BatchSize
# Every variant at upstream's integration-test size (the 20,000-node variants have none upstream:
# theirs, with their own gate and batch size).
SMOKE = {u[0]: SMOKE_SIZE for u in UPSTREAM}


@pytest.mark.parametrize("name,case,nodes,pods,batch,gate,labels", UPSTREAM, ids=[u[1] for u in UPSTREAM])
def test_sizes_gates_and_batch_sizes_are_upstreams(name: str, case: str, nodes: int, pods: int, batch: int,
                                                   gate: bool, labels: tuple[str, ...]) -> None:
    w = WORKLOADS[name]
    assert Size(nodes, 0, pods) in w.sizes, case
    assert w.default == Size(20000, 0, 20000)
    assert w.signature_batch == batch and dict(w.feature_gates) == {"OpportunisticBatching": gate}
    assert w.threshold is None and w.namespace == "namespace-1"
    assert w.profile == {"pluginConfig": [{"name": "PodTopologySpread",
                                           "args": {"defaultingType": "List", "defaultConstraints": []}}]}
    assert batching.LABELS[case.split("/")[1]] == labels


def test_every_batching_workload_is_in_the_table() -> None:
    assert {n for n, w in WORKLOADS.items() if w.signature_batch} == {u[0] for u in UPSTREAM}


def test_the_templates_are_upstreams() -> None:
    """templates/pod-hostport-80.yaml (host port 80, 100m / 100Mi requested) and
    templates/pod-saturation.yaml (3 CPUs and 1Gi of a 4-CPU node): one pod a node either way."""
    (port,) = pod_objects(WORKLOADS["HostPortConflict"].measured, "namespace-1", 1)
    c = port["spec"]["containers"][0]
    assert port["metadata"]["name"] == "pod-hostport-80-0"
    assert c["ports"] == [{"containerPort": 80, "hostPort": 80}]
    assert c["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}
    (sat,) = pod_objects(WORKLOADS["ResourceSaturation"].measured, "namespace-1", 1)
    assert sat["metadata"]["name"] == "pod-saturation-0"
    assert sat["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "3", "memory": "1Gi"}}


def test_signature_batch_size_labels_consecutive_pods_alike() -> None:
    """executor.go's podTemplateWithParams: signature=signature-label-<Index / batchSize>."""
    pods = [batching.signed_pod(p, i, 3) for i, p in enumerate(pod_objects("pod-saturation", "namespace-1", 7))]
    assert [p["metadata"]["labels"]["signature"] for p in pods] == [
        "signature-label-0"] * 3 + ["signature-label-1"] * 3 + ["signature-label-2"]


def test_the_workloads_gate_is_under_the_benchs() -> None:
    _, service = _bench_service(WORKLOADS["HostPortConflict/OpportunisticBatchingDisabled"], 0, 0, None, {}, None)
    assert service.feature_gates["OpportunisticBatching"] is False
    _, on = _bench_service(WORKLOADS["HostPortConflict"], 0, 0, None, {}, None)
    assert on.feature_gates["OpportunisticBatching"] is True


# One pod a node, so after each pod the node it took rejects the next: a batch's first pod runs the
# full cycle and the others take the stored list's next node. 100 pods in batches of 10: 90 batched.
@pytest.mark.parametrize("name", ["HostPortConflict", "ResourceSaturation"])
@pytest.mark.parametrize("size,batched", [(SMOKE_SIZE, 9), (Size(100, 0, 100), 90)])
def test_core_batches_each_signature_and_places_as_without_it(name: str, size: Size, batched: int) -> None:
    on = run_core(name, size, time_limit=60)
    off = run_core(name, size, time_limit=60, feature_gates={"OpportunisticBatching": False})
    assert on.complete and on.bound == size.pods and on.batched_pods == batched
    assert off.complete and off.batched_pods == 0
    assert on.placements == off.placements and len(set(on.placements.values())) == size.pods


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_every_variant_schedules_one_pod_a_node(name: str) -> None:
    r = run_core(name, SMOKE[name], time_limit=60)
    assert r.complete and r.bound == SMOKE[name].pods and len(set(r.placements.values())) == SMOKE[name].pods
    # batches of 10 or more: the first pod's cycle, then the stored list; batch size 1 or the gate off: none
    assert r.batched_pods == (9 if WORKLOADS[name].signature_batch >= 10 else 0)


@pytest.mark.parametrize("name", ["HostPortConflict", "ResourceSaturation/OpportunisticBatchingDisabled"])
def test_e2e_runs_them_through_the_simulated_cluster(name: str) -> None:
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e(name, SMOKE_SIZE, time_limit=120)
    assert r.complete and r.bound == SMOKE_SIZE.pods and r.mode == "e2e"
    assert len(set(r.placements.values())) == SMOKE_SIZE.pods       # one pod a node
