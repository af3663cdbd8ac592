"""The image, as far as this machine can build it: no Docker engine here, so the test installs the
package the way the Dockerfile does (a plain ``pip install .`` of the copied sources, into a fresh
venv), lays out ``/app/operator`` the same way, and starts the entrypoint."""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DOCKERFILE = (REPO / "Dockerfile").read_text()


def test_dockerfile_shape() -> None:
    assert DOCKERFILE.startswith("# kopf-scheduler") and "FROM python:3.11-slim" in DOCKERFILE
    assert "USER 10001:10001" in DOCKERFILE and 'ENTRYPOINT ["kopf-scheduler", "run"]' in DOCKERFILE
    assert "COPY operator/ /app/operator/" in DOCKERFILE and "KOPF_SCHEDULER_OPERATOR_DIR=/app/operator" in DOCKERFILE
    assert "RUN pip install ." in DOCKERFILE


def test_fresh_install_runs_the_entrypoint(tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, src / name)
    shutil.copytree(REPO / "scheduler", src / "scheduler", ignore=shutil.ignore_patterns("__pycache__"))
    app = tmp_path / "app"
    shutil.copytree(REPO / "operator", app / "operator", ignore=shutil.ignore_patterns("__pycache__"))
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=True)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", str(src)], check=True, timeout=600)
    env = {**os.environ, "KOPF_SCHEDULER_OPERATOR_DIR": str(app / "operator"), "PYTHONPATH": ""}
    out = subprocess.run([str(env_dir / "bin" / "kopf-scheduler"), "run", "--help"], check=True, capture_output=True,
                         text=True, env=env, cwd=app, timeout=60).stdout
    for flag in ("--kubeconfig", "--context", "--metrics-bind-address", "--health-bind-address", "--leader-elect",
                 "--log-format", "-v"):
        assert flag in out
    loaded = subprocess.run([str(py), "-c", "from scheduler.app.runtime import find_operator_dir, load_handlers; "
                             "print(len(load_handlers(find_operator_dir())))"], check=True, capture_output=True,
                            text=True, env=env, cwd=app, timeout=60).stdout
    assert loaded.strip() == str(len(list((REPO / "operator").glob("*.py"))))
    bad = subprocess.run([str(env_dir / "bin" / "kopf-scheduler"), "run", "--metrics-bind-address", "nope"],
                         capture_output=True, text=True, env=env, cwd=app, timeout=60, check=False)
    assert bad.returncode == 2 and "is not HOST:PORT" in bad.stderr
