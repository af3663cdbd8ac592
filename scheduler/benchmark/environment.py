"""Where a figure was measured: the record every ``bench`` result carries.

A throughput figure means little without the machine, the code and the packages it ran on: the
same commit read 1,186 pods/s in BENCHMARKS.md and 493–684 on another machine of the same kind,
and nothing written down could tell a slower CPU from a busier one or from a different set of
installed packages. So ``bench`` records, for every run it reports:

* ``commit`` and ``dirty``: ``git rev-parse HEAD`` of the checkout the code was imported from, and
  whether ``git status --porcelain`` shows changes to tracked files (None outside a git checkout,
  e.g. an installed wheel);
* ``pipFreeze`` and ``pipFreezeDigest``: the interpreter's installed distributions (name==version,
  sorted; an editable install of this project is written ``kopf-scheduler==VERSION (editable)``,
  never its path, so two checkouts of one commit digest alike) and the SHA-256 of that list, so
  two figures' environments compare in one glance;
* ``python`` (version and implementation), ``cpuModel`` and ``cpuCount`` (``/proc/cpuinfo``'s
  ``model name``, and ``os.cpu_count()``);
* ``loadAverage``: ``{"before": [1, 5, 15 min], "after": [...]}``, read around the run, so a
  figure measured under load says so;
* ``calibrationMs``: ``{"before": ms, "after": ms}``, the best of 5 timings of one fixed pure-Python
  task (dict, attribute and integer work like the scheduler's own, about 9 ms on the development
  machine), read around the run. Lower is faster. The load average cannot show a shared machine's
  own phases: the same code on the same idle machine has read a fifth to two fifths slower from one
  hour to the next. This task runs in the core's own caches, so it shows a slower clock or stolen
  CPU time. It does not show contention for a cache or memory shared with other machines' work:
  it read 7.9-9.2 ms in a slow phase and 8.2-8.8 ms in a fast one, an hour apart;
* ``variables``: the environment variables that change how the code runs: every ``PYTHON*`` one
  (``PYTHONDONTWRITEBYTECODE`` makes every process compile the project's modules again at start,
  about 0.15 s each; ``PYTHONPATH`` names the checkout imported) and every ``KOPF_SCHEDULER_*`` one
  (the GC thresholds, the worker mode).

The freeze is read through ``importlib.metadata`` rather than by running ``pip freeze``: it is the
same list, needs no pip in the venv, and costs milliseconds.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

__all__ = ["ENVIRONMENT_KEYS", "calibration", "cpu_model", "environment", "finish", "format_header", "git_state",
           "load_average", "pip_freeze"]

ENVIRONMENT_KEYS = ("commit", "dirty", "pythonVersion", "pythonImplementation", "cpuModel", "cpuCount",
                    "pipFreezeDigest", "pipFreeze", "loadAverage", "calibrationMs", "variables")
# Trials of the calibration task: the best one is the machine's speed, the others met interruptions.
_CALIBRATION_TRIALS = 5


def pip_freeze() -> list[str]:
    """``name==version`` of every distribution this interpreter sees, sorted by name."""
    seen: dict[str, str] = {}
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name or name.lower() in seen:
            continue
        line = f"{name}=={dist.version}"
        try:
            direct = json.loads(dist.read_text("direct_url.json") or "{}")
        except ValueError:
            direct = {}
        if isinstance(direct, dict) and direct.get("dir_info", {}).get("editable"):
            line += " (editable)"
        seen[name.lower()] = line
    return [seen[k] for k in sorted(seen)]


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def git_state(where: Path | None = None) -> tuple[str | None, bool | None]:
    """(commit, dirty) of the git checkout holding ``where`` (default: this package's source);
    (None, None) when it is not in one or git is missing."""
    root = where if where is not None else Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=10, check=True).stdout.strip()
        status = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=30, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return None, None
    return commit, bool(status.strip())


def cpu_model(cpuinfo: Path = Path("/proc/cpuinfo")) -> str | None:
    """The first ``model name`` of ``/proc/cpuinfo`` (None where there is none, e.g. not Linux)."""
    try:
        for line in cpuinfo.read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name":
                return value.strip()
    except OSError:
        return None
    return None


def load_average() -> list[float] | None:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


class _Slot:
    __slots__ = ("value",)

    def __init__(self, value: int) -> None:
        self.value = value


def _calibration_task() -> int:
    """A fixed amount of the interpreter work a scheduling cycle is made of: dict reads and writes,
    attribute reads and writes, integer arithmetic and a sort."""
    slots = [_Slot(i) for i in range(256)]
    index: dict[int, int] = {}
    total = 0
    for i in range(45_000):
        s = slots[i & 255]
        s.value = (s.value * 31 + i) % 1_000_003
        index[s.value & 4095] = index.get(s.value & 4095, 0) + 1
        total += s.value
    return total + len(sorted(index.items(), key=lambda kv: kv[1]))


def calibration() -> float:
    """Milliseconds of ``_calibration_task`` on this machine now, the best of a few trials."""
    best = float("inf")
    for _ in range(_CALIBRATION_TRIALS):
        t0 = time.perf_counter()
        _calibration_task()
        best = min(best, time.perf_counter() - t0)
    return round(best * 1000, 3)


def environment(load_before: list[float] | None, *, where: Path | None = None) -> dict[str, Any]:
    """The record of this interpreter and machine, with the load average read now as ``after``
    and the calibration as ``before`` (a caller that reads the record before a run sets both
    ``after`` values once it is over: ``finish``)."""
    commit, dirty = git_state(where)
    freeze = pip_freeze()
    return {"commit": commit, "dirty": dirty,
            "pythonVersion": platform.python_version(), "pythonImplementation": platform.python_implementation(),
            "cpuModel": cpu_model(), "cpuCount": os.cpu_count(),
            "pipFreezeDigest": _digest(freeze), "pipFreeze": freeze,
            "loadAverage": {"before": load_before, "after": load_average()},
            "calibrationMs": {"before": calibration(), "after": None},
            "variables": {k: v for k, v in sorted(os.environ.items())
                          if k.startswith(("PYTHON", "KOPF_SCHEDULER_"))}}


def finish(env: dict[str, Any]) -> None:
    """Read the ``after`` values of a record taken before a run, now that it is over."""
    env["loadAverage"]["after"] = load_average()
    env["calibrationMs"]["after"] = calibration()


def format_header(env: dict[str, Any]) -> str:
    """The one-line header of the text output."""
    commit = (env["commit"] or "unknown")[:12] + ("+dirty" if env["dirty"] else "")

    def load(x: list[float] | None) -> str:
        return "/".join(f"{v:.2f}" for v in x) if x else "?"

    def calib(x: float | None) -> str:
        return "?" if x is None else f"{x:.1f}"
    return (f"# commit {commit}  python {env['pythonVersion']}  cpu {env['cpuModel'] or '?'} x{env['cpuCount']}  "
            f"pip-freeze {env['pipFreezeDigest'][:12]}  load {load(env['loadAverage']['before'])} -> "
            f"{load(env['loadAverage']['after'])}  calibration {calib(env['calibrationMs']['before'])} -> "
            f"{calib(env['calibrationMs']['after'])} ms")


if __name__ == "__main__":     # `python -I environment.py`: another venv's record (bench --against)
    import json as _json
    import sys as _sys
    print(_json.dumps(environment(load_average(), where=Path(_sys.argv[1]) if len(_sys.argv) > 1 else None)))
