"""scheduler_perf's NodeDeclaredFeatures workloads (``scheduler/benchmark/declaredfeatures.py``):
upstream's ``nodedeclaredfeatures/performance-config.yaml`` and the hooks of
``node_declared_features_test.go`` as data, each at its integration-test size in both modes (the
Disabled one refused end to end, as 1.37 locks its gate), with the mock features really filtering."""

from __future__ import annotations

import pytest

from scheduler.benchmark import declaredfeatures
from scheduler.benchmark.core import run_core
from scheduler.benchmark.sink import pod_objects
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import WORKLOADS, workload_nodes
from scheduler.model import nodefeatures, parse_pod

# (bench workload, upstream test/workload, nodes, initPods, measurePods, numNodeDeclaredFeatures,
# NodeDeclaredFeatures gate, labels)
UPSTREAM = [
    ("NodeDeclaredFeaturesDisabled", "NodeDeclaredFeaturesDisabled/5Nodes", 5, 0, 10, None, False,
     ("integration-test", "short")),
    ("NodeDeclaredFeaturesDisabled", "NodeDeclaredFeaturesDisabled/5000Nodes", 5000, 5000, 5000, None, False,
     ("performance",)),
    ("NodeDeclaredFeaturesEnabled/5DeclaredFeatures", "NodeDeclaredFeaturesEnabled/5Nodes5DeclaredFeatures",
     5, 0, 10, 5, True, ("integration-test", "short")),
    ("NodeDeclaredFeaturesEnabled", "NodeDeclaredFeaturesEnabled/5000Nodes20DeclaredFeatures",
     5000, 5000, 5000, 20, True, ("performance",)),
    ("NodeDeclaredFeaturesEnabled/40DeclaredFeatures", "NodeDeclaredFeaturesEnabled/5000Nodes40DeclaredFeatures",
     5000, 5000, 5000, 40, True, ("performance",)),
]
FAST = {"NodeDeclaredFeaturesDisabled": Size(5, 0, 10), "NodeDeclaredFeaturesEnabled/5DeclaredFeatures": Size(5, 0, 10)}
# Every workload at upstream's integration-test size (5 nodes, 10 pods), with its own feature count.
SMOKE = {u[0]: Size(5, 0, 10) for u in UPSTREAM}


@pytest.mark.parametrize("name,case,nodes,init,pods,count,gate,labels", UPSTREAM, ids=[u[1] for u in UPSTREAM])
def test_sizes_params_and_gates_are_upstreams(name: str, case: str, nodes: int, init: int, pods: int,
                                              count: int | None, gate: bool, labels: tuple[str, ...]) -> None:
    w = WORKLOADS[name]
    assert Size(nodes, init, pods) in w.sizes, case
    assert w.node_features == declaredfeatures.DeclaredFeatures(count)
    assert dict(w.feature_gates) == {"NodeDeclaredFeatures": gate}
    assert (w.init_namespace, w.namespace, w.threshold, w.profile) == ("init", "test", None, None)
    assert declaredfeatures.LABELS[case.split("/")[1]] == labels


def test_every_declared_features_workload_is_in_the_table() -> None:
    assert {n for n, w in WORKLOADS.items() if w.node_features is not None} == {u[0] for u in UPSTREAM}


def test_the_hooks_follow_the_gate() -> None:
    """preInitNodeDeclaredFeatures and updateNodesWithDeclaredFeatures return at once with the gate
    off; with it on, numNodeDeclaredFeatures, or defaultDeclaredFeaturesCount (5) when not given."""
    assert declaredfeatures.DeclaredFeatures(None).mocked({"NodeDeclaredFeatures": False}) == 0
    assert declaredfeatures.DeclaredFeatures(None).mocked({}) == 5
    assert declaredfeatures.DeclaredFeatures(40).mocked(None) == 40


def test_nodes_are_node_base_declaring_the_sorted_features() -> None:
    """node-base.yaml: node-<i>, 128 CPUs, 16Gi, 110 pods, no labels; declaredFeatures sorted as Go's
    sort.Strings sorts Feature1..Feature20."""
    w = WORKLOADS["NodeDeclaredFeaturesEnabled"]
    (first, _) = workload_nodes(w, Size(2, 0, 1), None)
    assert first["metadata"] == {"name": "node-0"}
    assert first["status"]["allocatable"] == {"cpu": "128", "memory": "16Gi", "pods": "110"}
    assert first["status"]["declaredFeatures"][:4] == ["Feature1", "Feature10", "Feature11", "Feature12"]
    assert len(first["status"]["declaredFeatures"]) == 20
    (off, _) = workload_nodes(WORKLOADS["NodeDeclaredFeaturesDisabled"], Size(2, 0, 1), None)
    assert "declaredFeatures" not in off["status"]


def test_a_pod_with_pod_level_resources_needs_every_mock_feature() -> None:
    (body,) = pod_objects("pod-with-pod-level-resources", "test", 1)
    assert body["metadata"]["name"] == "pod-0"
    assert body["spec"]["resources"] == {"requests": {"cpu": "100m", "memory": "200Mi"}}
    with declaredfeatures.installed(20):
        assert parse_pod(body).required_features == {f"Feature{i}" for i in range(1, 21)}
    assert parse_pod(body).required_features == frozenset()
    assert nodefeatures.active_registry() is nodefeatures.REGISTRY


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_core_schedules_every_measured_pod(name: str) -> None:
    r = run_core(name, SMOKE[name], time_limit=60)
    assert r.complete and r.bound == 10 and set(r.placements.values()) <= {f"node-{i}" for i in range(5)}
    assert nodefeatures.active_registry() is nodefeatures.REGISTRY      # restored after the run


def test_core_filters_nodes_that_lack_a_required_feature(monkeypatch: pytest.MonkeyPatch) -> None:
    """The mock features really take part: nodes declaring one feature fewer than the pods need
    take none of them (NodeDeclaredFeatures: UnschedulableAndUnresolvable)."""
    real = declaredfeatures.declared
    monkeypatch.setattr(declaredfeatures, "declared", lambda n: real(n - 1))
    r = run_core("NodeDeclaredFeaturesEnabled/5DeclaredFeatures", FAST["NodeDeclaredFeaturesEnabled/5DeclaredFeatures"],
                 time_limit=3)
    assert not r.complete and r.bound == 0
    # the Disabled workload (gate off, no mock features) on the same kind of nodes: all bound
    r = run_core("NodeDeclaredFeaturesDisabled", FAST["NodeDeclaredFeaturesDisabled"], time_limit=30)
    assert r.complete and r.bound == 10


def test_e2e_runs_the_enabled_one_with_the_mock_features_in_the_operator() -> None:
    from scheduler.benchmark.e2e import run_e2e
    size = FAST["NodeDeclaredFeaturesEnabled/5DeclaredFeatures"]
    r = run_e2e("NodeDeclaredFeaturesEnabled/5DeclaredFeatures", size, time_limit=120)
    assert r.complete and r.bound == size.pods and r.mode == "e2e"
    assert set(r.placements.values()) <= {f"node-{i}" for i in range(5)}


def test_e2e_the_operator_parses_pods_with_the_mock_features(monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator is another process: it needs the mock features as much as the nodes do. With
    the nodes declaring one fewer, no pod binds, so the operator's pods did require all five."""
    from scheduler.benchmark.e2e import run_e2e
    real = declaredfeatures.declared
    monkeypatch.setattr(declaredfeatures, "declared", lambda n: real(n - 1))
    r = run_e2e("NodeDeclaredFeaturesEnabled/5DeclaredFeatures", Size(5, 0, 10), time_limit=8)
    assert not r.complete and r.bound == 0


def test_e2e_refuses_the_disabled_one_as_the_gate_is_locked() -> None:
    from scheduler.benchmark.e2e import run_e2e
    with pytest.raises(ValueError, match=r"NodeDeclaredFeatures=false, which 1\.37 locks to true"):
        run_e2e("NodeDeclaredFeaturesDisabled", FAST["NodeDeclaredFeaturesDisabled"], time_limit=30)


def test_bench_refuses_the_disabled_one_end_to_end_and_skips_it_from_all(monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from scheduler.app.cli import main
    from scheduler.benchmark import report
    chosen: list[list[str]] = []

    def fake_run_bench(workloads: list[str], **_: object) -> tuple[list[object], list[str]]:
        chosen.append(list(workloads))
        return [], []
    monkeypatch.setattr(report, "run_bench", fake_run_bench)
    out = CliRunner().invoke(main, ["bench", "--mode", "e2e", "--workload", "NodeDeclaredFeaturesDisabled"])
    assert out.exit_code == 1 and "which 1.37 locks to true" in out.output and not chosen
    out = CliRunner().invoke(main, ["bench", "--mode", "e2e"])
    assert out.exit_code == 0, out.output
    assert "skipped: NodeDeclaredFeaturesDisabled sets NodeDeclaredFeatures=false" in out.output
    assert "NodeDeclaredFeaturesDisabled" not in chosen[-1] and "NodeDeclaredFeaturesEnabled" in chosen[-1]
    out = CliRunner().invoke(main, ["bench", "--mode", "core", "--workload", "NodeDeclaredFeaturesDisabled"])
    assert out.exit_code == 0 and chosen[-1] == ["NodeDeclaredFeaturesDisabled"]
