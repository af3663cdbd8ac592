"""The image, as far as this machine can build it: no Docker engine here, so the test installs the
package the way the Dockerfile does (a plain ``pip install .`` of the copied sources, into a fresh
venv), lays out ``/app/operator`` the same way, and starts the entrypoint."""

from __future__ import annotations

import os
import shutil
import subprocess
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DOCKERFILE = (REPO / "Dockerfile").read_text()


def pins() -> dict[str, str]:
    """The Dockerfile's pinned dependencies: name → version (from its PINS here-document)."""
    body = DOCKERFILE.split("<<'PINS'", 1)[1].split("\nPINS\n", 1)[0]
    out = {}
    for line in body.strip().splitlines()[1:] if body.startswith(" &&") else body.strip().splitlines():
        name, _, version = line.strip().partition("==")
        out[_norm(name)] = version
    return out


def _norm(name: str) -> str:
    import re
    return re.sub(r"[-_.]+", "-", name).lower()


def test_pins_cover_exactly_the_runtime_dependencies() -> None:
    """Drift between pyproject.toml and the image: every runtime dependency (and theirs, as this
    environment resolves them) pinned, nothing else, and each pin allowed by pyproject."""
    import importlib.metadata as md
    import tomllib

    from packaging.markers import default_environment
    from packaging.requirements import Requirement
    env = default_environment()
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    closure: set[str] = set()

    def walk(text: str) -> None:
        req = Requirement(text)
        if req.marker is not None and not req.marker.evaluate({**env, "extra": ""}):
            return
        if _norm(req.name) in closure:
            return
        closure.add(_norm(req.name))
        for sub in md.distribution(req.name).requires or []:
            walk(sub)
    for dep in declared:
        walk(dep)
    pinned = pins()
    assert sorted(closure - pinned.keys()) == [], "runtime dependencies the image does not pin"
    assert sorted(pinned.keys() - closure) == [], "pins for packages nothing depends on"
    for dep in declared:
        req = Requirement(dep)
        assert req.specifier.contains(pinned[_norm(req.name)], prereleases=True), (dep, pinned[_norm(req.name)])


def test_dockerfile_shape() -> None:
    assert DOCKERFILE.startswith("# syntax=docker/dockerfile:1.4\n# kopf-scheduler")   # here-documents need 1.4
    assert "FROM python:3.11-slim" in DOCKERFILE
    assert "USER 10001:10001" in DOCKERFILE and 'ENTRYPOINT ["kopf-scheduler", "run"]' in DOCKERFILE
    assert "COPY operator/ /app/operator/" in DOCKERFILE and "KOPF_SCHEDULER_OPERATOR_DIR=/app/operator" in DOCKERFILE
    assert "RUN pip install --constraint /dev/stdin . <<'PINS'" in DOCKERFILE


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
    constraints = tmp_path / "pins.txt"          # the Dockerfile's here-document, as a file
    constraints.write_text("".join(f"{n}=={v}\n" for n, v in pins().items()))
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--constraint", str(constraints), str(src)],
                   check=True, timeout=600)
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
