"""The framework's per-plugin metrics over one cycle's extension points, as upstream's
``frameworkImpl`` records them: ``scheduler_plugin_evaluation_total`` on every cycle (Filter and
Score once per node), ``scheduler_plugin_execution_duration_seconds`` only on the cycles sampled
for it (``pluginMetricsSamplePercent``), and the extension points' durations on every cycle."""

from __future__ import annotations

import pytest

from scheduler.framework import CycleState, Diagnosis
from tests.builders import make_scheduler, node, pod, setup


def _cycle(record: bool) -> tuple[object, object]:
    sched, _ = make_scheduler()
    fwk = sched.profiles.current["default-scheduler"]
    nodes = [node(f"n{i}") for i in range(4)]
    snap, _, rows = setup(nodes, [])
    p = pod("a")
    for _ in range(2):                      # twice: the cached label children count on
        state = CycleState(record_plugin_metrics=record)
        fwk.run_pre_filter(state, p, snap)
        fwk.find_nodes_that_pass_filters(state, p, snap, rows, Diagnosis())
        fwk.run_pre_score(state, p, snap, rows)
        fwk.run_score(state, p, snap, rows)
    return fwk, fwk.metrics.registry


def _value(registry: object, name: str, **labels: str) -> float:
    got = registry.get_sample_value(name, labels)  # type: ignore[attr-defined]
    return 0.0 if got is None else got


@pytest.mark.parametrize("record", [True, False], ids=["sampled cycles", "unsampled cycles"])
def test_evaluations_count_every_cycle_and_durations_only_sampled_ones(record: bool) -> None:
    _, registry = _cycle(record)
    evaluations = "scheduler_plugin_evaluation_total"
    labels = {"profile": "default-scheduler"}
    assert _value(registry, evaluations, plugin="NodeResourcesFit", extension_point="PreFilter", **labels) == 2
    assert _value(registry, evaluations, plugin="NodeResourcesFit", extension_point="Filter", **labels) == 8
    assert _value(registry, evaluations, plugin="NodeResourcesFit", extension_point="Score", **labels) == 8
    assert _value(registry, evaluations, plugin="NodeResourcesBalancedAllocation", extension_point="PreScore",
                  **labels) == 2
    durations = "scheduler_plugin_execution_duration_seconds_count"
    for point in ("PreFilter", "Filter", "PreScore", "Score"):
        got = _value(registry, durations, plugin="NodeResourcesFit", extension_point=point, status="Success")
        assert got == (2 if record else 0), point
    points = "scheduler_framework_extension_point_duration_seconds_count"
    for point in ("PreFilter", "Filter", "PreScore", "Score"):
        assert _value(registry, points, extension_point=point, status="Success", **labels) == 2, point
