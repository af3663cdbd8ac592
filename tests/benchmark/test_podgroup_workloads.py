"""scheduler_perf's PodGroup workloads (``scheduler/benchmark/podgroups.py``): upstream's params and
templates as data, each workload at a smoke size in core mode, one of each kind end to end, and the
GangPreemption family preempting as gangs (workload-aware preemption)."""

from __future__ import annotations

from typing import Any

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.benchmark import podgroups
from scheduler.benchmark.core import _bench_service, run_core
from scheduler.benchmark.sink import pod_objects
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import WORKLOADS, init_batches

# (workload, upstream file and case, initNodes, init pods, initPodGroups x podsPerGroup measured)
# gs: podgroup/gangscheduling/performance-config.yaml, bs: podgroup/basicscheduling/..., wp:
# workload_preemption/performance-config.yaml. Upstream's init pods of GangPreemptionPodGroups are
# lowPriorityGroups x podsPerGroup; GangPreemptionAffinity's anchors (initNodes) come on top.
UPSTREAM = [
    ("GangScheduling", "gs GangScheduling/5000Nodes_1000Gangs_3000Pods", 5000, 0, 1000, 3),
    ("GangScheduling", "gs GangScheduling/5000Nodes_2000Gangs_6000Pods", 5000, 0, 2000, 3),
    ("GangScheduling", "gs GangScheduling/5000Nodes_3000Gangs_9000Pods", 5000, 0, 3000, 3),
    ("GangScheduling", "gs GangScheduling/100Nodes_10Gangs", 100, 0, 10, 3),
    ("GangScheduling", "gs GangScheduling/10Nodes_3Gangs", 10, 0, 3, 3),
    ("GangScheduling/1000PerGroup", "gs GangScheduling/5000Nodes_3Gangs_3000Pods_1000PerGroup", 5000, 0, 3, 1000),
    ("GangScheduling/1000PerGroup", "gs GangScheduling/5000Nodes_6Gangs_6000Pods_1000PerGroup", 5000, 0, 6, 1000),
    ("GangScheduling/1000PerGroup", "gs GangScheduling/5000Nodes_9Gangs_9000Pods_1000PerGroup", 5000, 0, 9, 1000),
    ("GangScheduling/5000PerGroup", "gs GangScheduling/5000Nodes_10Gangs_50000Pods_5000PerGroup", 5000, 0, 10, 5000),
    ("BasicScheduling", "bs BasicScheduling/5000Nodes_1000Groups_3000Pods", 5000, 0, 1000, 3),
    ("BasicScheduling", "bs BasicScheduling/5000Nodes_2000Groups_6000Pods", 5000, 0, 2000, 3),
    ("BasicScheduling", "bs BasicScheduling/5000Nodes_3000Groups_9000Pods", 5000, 0, 3000, 3),
    ("BasicScheduling", "bs BasicScheduling/100Nodes_10Groups", 100, 0, 10, 3),
    ("BasicScheduling", "bs BasicScheduling/10Nodes_3Groups", 10, 0, 3, 3),
    ("BasicScheduling/1000PerGroup", "bs BasicScheduling/5000Nodes_3Groups_3000Pods_1000PerGroup", 5000, 0, 3, 1000),
    ("BasicScheduling/1000PerGroup", "bs BasicScheduling/5000Nodes_6Groups_6000Pods_1000PerGroup", 5000, 0, 6, 1000),
    ("BasicScheduling/1000PerGroup", "bs BasicScheduling/5000Nodes_9Groups_9000Pods_1000PerGroup", 5000, 0, 9, 1000),
    ("BasicScheduling/5000PerGroup", "bs BasicScheduling/5000Nodes_10Groups_50000Pods_5000PerGroup", 5000, 0, 10,
     5000),
    ("GangPreemptionBasic", "wp GangPreemptionBasic/100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods",
     100, 1000, 1, 100),
    ("GangPreemptionBasic/10PerGroup", "wp GangPreemptionBasic/100Nodes_10PreemptorGangs_10Pods_Evicting_1000InitPods",
     100, 1000, 10, 10),
    ("GangPreemptionBasic/2PerGroup", "wp GangPreemptionBasic/2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods",
     2, 10, 1, 2),
    ("GangPreemptionPodGroups", "wp GangPreemptionPodGroups/100Nodes_1PreemptorGang_100Pods_Evicting_5LowPriorityGangs",
     100, 500, 1, 100),
    ("GangPreemptionPodGroups/10PerGroup",
     "wp GangPreemptionPodGroups/100Nodes_10PreemptorGangs_10Pods_Evicting_50LowPriorityGangs", 100, 500, 10, 10),
    ("GangPreemptionPodGroups/2PerGroup",
     "wp GangPreemptionPodGroups/2Nodes_1PreemptorGang_2Pods_Evicting_2LowPriorityGangs", 2, 4, 1, 2),
    ("GangPreemptionAffinity", "wp GangPreemptionAffinity/100Nodes_1PreemptorGang_100Pods_Evicting_1000InitPods",
     100, 1000, 1, 100),
    ("GangPreemptionAffinity/10PerGroup",
     "wp GangPreemptionAffinity/100Nodes_10PreemptorGangs_10Pods_Evicting_1000InitPods", 100, 1000, 10, 10),
    ("GangPreemptionAffinity/2PerGroup", "wp GangPreemptionAffinity/2Nodes_1PreemptorGang_2Pods_Evicting_10InitPods",
     2, 10, 1, 2),
    ("GangPreemptionTopologySpreading",
     "wp GangPreemptionTopologySpreading/100Nodes_6PreemptorGangs_16Pods_Evicting_1000InitPods", 100, 1000, 6, 16),
    ("GangPreemptionTopologySpreading/3PerGroup",
     "wp GangPreemptionTopologySpreading/3Nodes_1PreemptorGang_3Pods_Evicting_12InitPods", 3, 12, 1, 3),
]

GANG_FAMILY = sorted({u[0] for u in UPSTREAM if u[0].startswith("GangPreemption")})
RUNNABLE = sorted({u[0] for u in UPSTREAM} - set(GANG_FAMILY))
# Smoke sizes: upstream's integration-test size where the workload has one; full groups otherwise,
# on as few nodes as hold them (40 pods of 100m on a 4-CPU node).
SMOKE = {
    "GangScheduling": Size(10, 0, 9), "BasicScheduling": Size(10, 0, 9),
    "GangScheduling/1000PerGroup": Size(25, 0, 1000), "BasicScheduling/1000PerGroup": Size(25, 0, 1000),
    "GangScheduling/5000PerGroup": Size(125, 0, 5000), "BasicScheduling/5000PerGroup": Size(125, 0, 5000),
    **{name: WORKLOADS[name].sizes[-1] for name in GANG_FAMILY},
}


@pytest.mark.parametrize("name,case,nodes,init,groups,per", UPSTREAM, ids=[u[1] for u in UPSTREAM])
def test_sizes_are_upstreams(name: str, case: str, nodes: int, init: int, groups: int, per: int) -> None:
    w = WORKLOADS[name]
    assert Size(nodes, init, groups * per) in w.sizes, case
    assert w.groups is not None and w.groups.measured.per_group == per
    assert dict(w.feature_gates) == {"GenericWorkload": True}       # every one's featureGates


def test_every_podgroup_workload_is_in_the_table() -> None:
    assert {n for n, w in WORKLOADS.items() if w.groups is not None} == set(RUNNABLE) | set(GANG_FAMILY)


def test_a_gang_op_renders_upstreams_templates() -> None:
    """GangScheduling at 10Nodes_3Gangs: gang-0..2 with minCount 3; pod i joins gang-(i/3), 100m."""
    w = WORKLOADS["GangScheduling"]
    assert w.groups is not None
    op = w.groups.measured
    groups = podgroups.pod_group_objects(op, "gang-ns-0", 9)
    assert [g["metadata"]["name"] for g in groups] == ["gang-0", "gang-1", "gang-2"]
    assert groups[0]["apiVersion"] == "scheduling.k8s.io/v1beta1"
    assert groups[0]["spec"] == {"schedulingPolicy": {"gang": {"minCount": 3}}}
    pods = [podgroups.prepare_pod(w.groups, p, i, measured=True, nodes=10, init_pods=0)
            for i, p in enumerate(pod_objects(w.measured, w.namespace, 9))]
    assert [p["spec"]["schedulingGroup"]["podGroupName"] for p in pods] == [f"gang-{i // 3}" for i in range(9)]
    assert pods[4]["metadata"]["name"] == "test-gang-scheduling-4"
    assert pods[0]["spec"]["containers"][0]["resources"] == {"requests": {"cpu": "100m", "memory": "100Mi"}}
    basic = podgroups.pod_group_objects(podgroups.GroupOp("basic", "basic-pod", 3), "basic-ns-0", 3)
    assert basic[0]["metadata"]["name"] == "basic-group-0" and basic[0]["spec"] == {"schedulingPolicy": {"basic": {}}}


def test_the_preemption_templates_take_their_params() -> None:
    """GangPreemptionPodGroups/2Nodes_1PreemptorGang_2Pods_Evicting_2LowPriorityGangs: low-priority gangs
    (priority 1000, 600m, host port 8000 + group) in gang-preempt-1, the preemptor (9999999, 3500m,
    9000 + group) in gang-preempt-0; the groups' priority is the op's, disruptionMode single."""
    w = WORKLOADS["GangPreemptionPodGroups/2PerGroup"]
    g = w.groups
    assert g is not None and g.init is not None
    objs = podgroups.all_group_objects(g, init_namespace=w.init_namespace, namespace=w.namespace, init_pods=4, pods=2)
    assert [(o["metadata"]["namespace"], o["metadata"]["name"], o["spec"]["priority"]) for o in objs] == [
        ("gang-preempt-1", "gang-0", 1000), ("gang-preempt-1", "gang-1", 1000), ("gang-preempt-0", "gang-0", 9999999)]
    assert objs[0]["spec"]["disruptionMode"] == {"single": {}}
    low = [podgroups.prepare_pod(g, p, i, measured=False, nodes=2, init_pods=4)
           for i, p in enumerate(pod_objects(w.init, w.init_namespace, 4))]
    assert [(p["spec"]["priority"], p["spec"]["containers"][0]["ports"][0]["hostPort"],
             p["spec"]["containers"][0]["resources"]["requests"]["cpu"]) for p in low] == [
        (1000, 8000, "600m"), (1000, 8000, "600m"), (1000, 8001, "600m"), (1000, 8001, "600m")]
    (hi, _) = [podgroups.prepare_pod(g, p, i, measured=True, nodes=2, init_pods=4)
               for i, p in enumerate(pod_objects(w.measured, w.namespace, 2))]
    assert (hi["spec"]["priority"], hi["spec"]["containers"][0]["ports"][0]["hostPort"]) == (9999999, 9000)
    assert hi["spec"]["containers"][0]["resources"]["limits"]["cpu"] == "3500m"


def test_low_priority_and_anchor_pods_are_indexed() -> None:
    """pod-low-priority.yaml: priority {{.Index}}, host port 8000 + Index mod (podsCount / nodesCount);
    GangPreemptionAffinity's anchors (one a node, host port 7000) come before them."""
    w = WORKLOADS["GangPreemptionAffinity/2PerGroup"]
    assert w.groups is not None
    assert init_batches(w, Size(2, 10, 2)) == [("pod-anchor-high-priority", "gang-preempt-2", 2),
                                               ("pod-low-priority-indexed", "gang-preempt-1", 10)]
    low = [podgroups.prepare_pod(w.groups, p, i, measured=False, nodes=2, init_pods=10)
           for i, p in enumerate(pod_objects("pod-low-priority-indexed", "gang-preempt-1", 10))]
    assert [p["spec"]["priority"] for p in low] == list(range(10))
    assert [p["spec"]["containers"][0]["ports"][0]["hostPort"] for p in low] == [8000 + i % 5 for i in range(10)]
    anchors = [podgroups.prepare_pod(w.groups, p, i, measured=False, nodes=2, init_pods=10)
               for i, p in enumerate(pod_objects("pod-anchor-high-priority", "gang-preempt-2", 2))]
    assert [p["spec"]["containers"][0]["ports"][0]["hostPort"] for p in anchors] == [7000, 7000]
    assert podgroups.pod_priorities(w.groups, w.init, 2, 10, w.measured) == {*range(1, 10), 9999999}


def test_the_workloads_gates_are_under_the_bench_ones() -> None:
    w = WORKLOADS["GangScheduling"]
    _, service = _bench_service(w, 0, 0, None, {}, None)
    assert service.generic_workload and service.scheduler.group_cycle is not None
    _, off = _bench_service(w, 0, 0, {"GenericWorkload": False}, {}, None)
    assert not off.generic_workload


# Every runnable workload, the gang of 5,000 included: about 8 s in core mode (it took 110 s,
# quadratic in the gang's size) now that the queue decides a gang's gated members per group and
# GangScheduling's Permit counts the members once a cycle (docs/benchmarks.md, PodGroup hot spots).
@pytest.mark.parametrize("name", RUNNABLE)
def test_workload_schedules_every_measured_pod(name: str) -> None:
    size = SMOKE[name]
    r = run_core(name, size, time_limit=120)
    assert r.complete and r.bound == size.pods and len(r.placements) == size.pods


def test_a_gang_run_goes_through_podgroup_cycles(monkeypatch: pytest.MonkeyPatch) -> None:
    """The gangs of GangScheduling are placed by PodGroup cycles: one scheduled attempt a gang."""
    from scheduler.benchmark import core
    seen: list[float | None] = []
    real = core._run_result

    def spy(sink: Any, service: Any, *args: Any) -> Any:
        seen.append(service.metrics.registry.get_sample_value(
            "scheduler_podgroup_schedule_attempts_total", {"result": "scheduled", "profile": "default-scheduler"}))
        return real(sink, service, *args)
    monkeypatch.setattr(core, "_run_result", spy)
    r = run_core("GangScheduling", Size(10, 0, 9), time_limit=60)
    assert r.complete and seen == [3.0]


# The GangPreemption family at upstream's integration-test sizes: the measured gangs fit only once
# lower-priority pods (or gangs) are preempted, so every measured pod bound shows the gang preempting
# as a unit. Their 100-node sizes take 3-11 s each in core mode: run by hand.
SMALL_GANG_FAMILY = [n for n in GANG_FAMILY if n.endswith(("/2PerGroup", "/3PerGroup"))]


@pytest.mark.parametrize("name", SMALL_GANG_FAMILY)
def test_the_gang_preemption_family_preempts_and_binds_every_gang(name: str) -> None:
    size = WORKLOADS[name].sizes[-1]
    r = run_core(name, size, time_limit=120)
    assert r.complete and r.bound == size.pods and len(r.placements) == size.pods


def test_e2e_a_gang_preempts_through_the_simulated_cluster() -> None:
    from scheduler.benchmark.e2e import run_e2e
    size = WORKLOADS["GangPreemptionBasic/2PerGroup"].sizes[-1]
    r = run_e2e("GangPreemptionBasic/2PerGroup", size, time_limit=120)
    assert r.complete and r.bound == size.pods and r.mode == "e2e"


def test_e2e_runs_the_operator_under_the_workloads_gates_then_the_benchs() -> None:
    from scheduler.benchmark.e2e import _gates
    from scheduler.features import parse_feature_gates
    w = WORKLOADS["GangScheduling"]
    assert _gates(w, "") == "GenericWorkload=true"
    both = _gates(w, "GenericWorkload=false,OpportunisticBatching=false")
    assert parse_feature_gates(both) == {"GenericWorkload": False, "OpportunisticBatching": False}
    assert _gates(WORKLOADS["SchedulingBasic"], "") == ""


@pytest.mark.parametrize("name", ["GangScheduling", "BasicScheduling"])
def test_e2e_mode_runs_them_through_the_simulated_cluster(name: str) -> None:
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e(name, SMOKE[name], time_limit=120)
    assert r.complete and r.bound == SMOKE[name].pods and r.mode == "e2e"
    assert len(r.placements) == SMOKE[name].pods


def test_a_bench_of_every_workload_runs_the_gang_preemption_family_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduler.benchmark import report
    chosen: list[list[str]] = []

    def fake_run_bench(workloads: list[str], **_: Any) -> tuple[list[Any], list[str]]:
        chosen.append(list(workloads))
        return [], []
    monkeypatch.setattr(report, "run_bench", fake_run_bench)
    out = CliRunner().invoke(main, ["bench"])
    assert out.exit_code == 0, out.output
    (ran,) = chosen
    assert set(ran) == set(WORKLOADS) and "skipped" not in out.output
