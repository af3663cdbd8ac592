"""The processes a measurement runs: the simulated cluster, the operator, and how to watch them.

Every driver in this package (``e2e``, ``soak``, ``cluster_bench``) runs the system under test in
processes of its own, as a real cluster would, so no two share an interpreter (or a GIL):

* ``start_cluster`` runs ``kopf-scheduler cluster`` and returns once it has written its kubeconfig.
  A thread keeps draining the cluster's output from then on: a full pipe would block the cluster's
  logging, and with it the cluster;
* ``cli`` is the command line of any other ``kopf-scheduler`` command (``run`` for the operator),
  through this interpreter, so a checkout runs without an installed entry point;
* ``free_port`` picks a port for an operator's ``/metrics`` and probes on 127.0.0.1;
* ``stop`` ends a process (SIGTERM, then SIGKILL after 20 s);
* ``peak_rss`` reads a process's peak resident set (``VmHWM``), the memory figure every report gives.
"""

from __future__ import annotations

import contextlib
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import IO

__all__ = ["cli", "free_port", "peak_rss", "start_cluster", "stop"]

START_TIMEOUT = 60.0


def cli(*args: str) -> list[str]:
    """The argv of ``kopf-scheduler ARGS...`` run by this interpreter."""
    return [sys.executable, "-m", "scheduler.app.cli", *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_cluster(kubeconfig: Path | None = None, faults: list[str] | None = None) -> tuple[subprocess.Popen[str],
                                                                                         Path]:
    """Start ``kopf-scheduler cluster`` (with ``--fault`` rules, writing its kubeconfig to ``kubeconfig``
    or to a file of its own choosing) and wait until it serves. Returns the process and the kubeconfig."""
    args = [a for f in faults or () for a in ("--fault", f)]
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
