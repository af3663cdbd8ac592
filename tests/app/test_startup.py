"""``kopf-scheduler run`` at start (issue #15 §5): an address in use is one line and exit 1; an
API server that cannot be reached is retried with backoff, a line per attempt, never a traceback."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml

from scheduler.profiles.crd import crd
from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http


def _dead_kubeconfig(tmp_path: Path) -> Path:
    with socket.socket() as s:                      # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    doc = {"apiVersion": "v1", "kind": "Config", "current-context": "c",
           "clusters": [{"name": "c", "cluster": {"server": f"https://127.0.0.1:{port}", "insecure-skip-tls-verify": True}}],
           "users": [{"name": "u", "user": {"token": "t"}}],
           "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}]}
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_an_address_in_use_is_one_line_and_exit_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        run = subprocess.run([sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig",
                              str(_dead_kubeconfig(tmp_path)), "--metrics-bind-address", f"127.0.0.1:{port}"],
                             capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 1
    assert run.stderr.strip().splitlines() == [
        f"Error: the scheduling worker failed to start: cannot serve on 127.0.0.1:{port}: Address already in use"]


def test_an_unreachable_api_server_is_retried_not_fatal(tmp_path: Path) -> None:
    p = subprocess.Popen([sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig", str(_dead_kubeconfig(tmp_path)),
                          "--metrics-bind-address", "127.0.0.1:0"], stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4)                   # the scenario: several retries pass, and it is still running
        assert p.poll() is None, "run exited on an unreachable API server"
    finally:
        p.terminate()
        _, err = p.communicate(timeout=30)
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    retries = [line for line in lines if "initial list of pods failed, retrying in" in line]
    assert len(retries) >= 2, err          # backoff: again, after a wait
    assert all("Cannot connect to host" in line for line in retries)


def test_task_mode_run_schedules_and_stops_on_sigterm(tmp_path: Path) -> None:
    """``KOPF_SCHEDULER_WORKER=task`` starts the worker inside Kopf's loop (its startup handler), so
    ``run`` must not wait for the worker to sync before starting Kopf: it waited for ever."""
    c = SimulatedCluster()
    c.start()
    api = Http(c)
    p = None
    try:
        api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
        api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles", {
            "apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}})
        api("POST", "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n0"},
                                      "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}})
        api("POST", "/api/v1/namespaces/default/pods", {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        p = subprocess.Popen([sys.executable, "-m", "scheduler.app.cli", "run", "--kubeconfig", str(c.kubeconfig),
                              "--metrics-bind-address", "127.0.0.1:0"],
                             env={**os.environ, "KOPF_SCHEDULER_WORKER": "task"}, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not c.server.binds and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.1)
        assert list(c.server.binds.values()) == [1], p.poll()
        p.send_signal(signal.SIGTERM)
        _, err = p.communicate(timeout=30)
        assert p.returncode == 0, err[-3000:]
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        c.stop()
