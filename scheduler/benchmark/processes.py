"""The processes a measurement runs: the simulated cluster, the operator, and how to watch them.

Every driver in this package (``e2e``, ``soak``, ``cluster_bench``) runs the system under test in
processes of its own, as a real cluster would, so no two share an interpreter (or a GIL):

* ``start_cluster`` runs ``kopf-scheduler cluster`` and returns once it has written its kubeconfig.
  A thread keeps draining the cluster's output from then on: a full pipe would block the cluster's
  logging, and with it the cluster;
* ``cli`` is the command line of any other ``kopf-scheduler`` command (``run`` for the operator),
  through this interpreter, so a checkout runs without an installed entry point;
* ``free_port`` picks a port for an operator's ``/metrics`` and probes on 127.0.0.1;
* ``served`` asks an operator's secure port for a path (HTTPS, its own self-signed certificate on
  loopback; ``/metrics`` needs a token, the cluster's admin token will do);
* ``stop`` ends a process (SIGTERM, then SIGKILL after 20 s);
* ``peak_rss`` reads a process's peak resident set (``VmHWM``), the memory figure every report gives.
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO

__all__ = ["SCHEDULER_PERF_CLIENT", "cli", "free_port", "peak_rss", "served", "start_cluster", "stop"]

START_TIMEOUT = 60.0
# The operator's client as scheduler_perf sets it: "client rate limit is set to 5000" (util.go
# mustSetupCluster), where a deployed kube-scheduler (and `run`) defaults to 50 QPS, burst 100.
SCHEDULER_PERF_CLIENT = ("--kube-api-qps", "5000", "--kube-api-burst", "5000")


def cli(*args: str) -> list[str]:
    """The argv of ``kopf-scheduler ARGS...`` run by this interpreter."""
    return [sys.executable, "-m", "scheduler.app.cli", *args]


def served(port: int, path: str, token: str | None = None, timeout: float = 10.0) -> tuple[int, str]:
    """(HTTP status, body) of ``GET https://127.0.0.1:PORT/PATH`` on an operator's secure port;
    OSError when nothing answers. The certificate is not verified: it is the operator's own
    self-signed one, on loopback."""
    req = urllib.request.Request(f"https://127.0.0.1:{port}{path}")
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ssl._create_unverified_context()) as r:
            return int(r.status), r.read().decode()
    except urllib.error.HTTPError as e:
        return int(e.code), e.read().decode()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_cluster(kubeconfig: Path | None = None, faults: list[str] | None = None, feature_gates: str = ""
                  ) -> tuple[subprocess.Popen[str], Path]:
    """Start ``kopf-scheduler cluster`` (without its kubelet, with ``--fault`` rules and kube-apiserver's
    ``--feature-gates``, writing its kubeconfig to ``kubeconfig`` or to a file of its own choosing) and
    wait until it serves. Returns the process and the kubeconfig."""
    # No kubelet: upstream's scheduler_perf measures binding, not pods running, and a kubelet's status
    # writes would be load the scheduler never causes.
    args = ["--pod-running-after", "-1", *(a for f in faults or () for a in ("--fault", f)),
            *(("--feature-gates", feature_gates) if feature_gates else ())]
    if kubeconfig is not None:
        args = ["--kubeconfig", str(kubeconfig), *args]
    proc = subprocess.Popen(cli("cluster", *args), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError("the simulated cluster exited before it was ready")
            if line.startswith("kubeconfig: "):
                # Keep draining its output: a full pipe would block the cluster's logging, and the cluster.
                threading.Thread(target=_drain, args=(proc.stdout,), daemon=True).start()
                return proc, Path(line.split(": ", 1)[1].strip())
        raise RuntimeError(f"the simulated cluster did not start within {START_TIMEOUT:.0f} s")
    except BaseException:
        stop(proc)
        raise


def _drain(stream: IO[str]) -> None:
    for _ in stream:
        pass


def stop(proc: subprocess.Popen[str] | None) -> None:
    """SIGTERM, and SIGKILL if it has not exited within 20 s."""
    if proc is None:
        return
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def peak_rss(pid: int) -> int:
    """The process's peak resident set in bytes (``VmHWM``), 0 when it cannot be read (gone, not Linux)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0
