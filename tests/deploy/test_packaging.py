"""The wheel ships what it runs (issue #15 §1): built from this checkout, installed into a fresh
venv, its ``kopf-scheduler simulate`` runs the real operator, handler scripts included, from a
directory that is not the checkout and with no ``KOPF_SCHEDULER_OPERATOR_DIR``."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_wheel_install_runs_simulate(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", str(REPO), "-w", str(dist)],
                   check=True, timeout=600, capture_output=True)
    (wheel,) = dist.glob("kopf_scheduler-*.whl")
    env_dir = tmp_path / "venv"
    venv.create(env_dir, with_pip=False)
    py = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet", "--no-deps", str(wheel)],
                   check=True, timeout=600, capture_output=True)
    # The dependencies come from this environment (a path entry only: its .pth files, among them
    # the editable install of this checkout, are not read), so the test needs no download.
    purelib = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                             check=True, capture_output=True, text=True).stdout.strip()
    Path(purelib, "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if k not in ("KOPF_SCHEDULER_OPERATOR_DIR", "PYTHONPATH")}
    where = subprocess.run([str(py), "-c", "import scheduler; print(scheduler.__file__)"], check=True,
                           capture_output=True, text=True, env=env, cwd=tmp_path).stdout
    assert where.startswith(str(env_dir)), where          # the wheel's package, not the checkout's
    # --gpus-per-node reads the packaged GPU description (scheduler/simulator/data/gpus.yaml, package-data)
    run = subprocess.run([str(env_dir / "bin" / "kopf-scheduler"), "simulate", "--nodes", "3", "--pods", "6",
                          "--output", "json", "--timeout", "60", "--gpus-per-node", "1"],
                         capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180, check=False)
    assert run.returncode == 0, run.stderr[-2000:]
    pods = json.loads(run.stdout)["pods"]
    assert len(pods) == 6 and all(p["node"] for p in pods), pods
    assert "handler scripts were not found" not in run.stderr
