"""``kopf-scheduler run`` at start (issue #15 §5): an address in use is one line and exit 1; an
API server that cannot be reached is retried with backoff, a line per attempt, never a traceback."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import yaml


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
        time.sleep(4)
        assert p.poll() is None, "run exited on an unreachable API server"
    finally:
        p.terminate()
        _, err = p.communicate(timeout=30)
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    retries = [line for line in lines if "initial list of pods failed, retrying in" in line]
    assert len(retries) >= 2, err          # backoff: again, after a wait
    assert all("Cannot connect to host" in line for line in retries)
