"""``bench --against REV``: alternated pairs of runs, a reference commit against this checkout.

A figure read on one day and a figure read on another compare two machines as much as two
commits: load, CPU frequency and the installed packages all move. So a comparison is measured in
one sitting, as pairs: pair k runs REV then the current commit (k even) or the current commit then
REV (k odd), with the same seed, so a machine that speeds up or slows down over the sitting favours
neither side. The report gives each pair, each side's medians and the ratio new/old.

Each side runs from a fresh install of its own commit, as ``.ci/run`` installs one: ``git archive``
of the commit into ``CACHE/<commit>/src``, a venv in ``CACHE/<commit>/venv`` (``python -m venv``,
pip upgraded, ``pip install -e 'src[test]'``), then ``CACHE/<commit>/venv/bin/kopf-scheduler bench
--repeat 1 --output json`` with ``PYTHONPATH`` and ``PYTHONHOME`` removed from its environment, so
neither side can import the other's code or this interpreter's packages. The install is cached: a
``ready`` file is written only after it succeeded, so a second run reuses it and a broken one is
redone. The current side is the checkout's HEAD commit, installed the same way; uncommitted changes
are not measured (a warning says so).

Every side records its environment (``environment.py`` run by the side's interpreter: its pip
freeze and digest, Python, CPU, load) and every run its process-tree CPU seconds
(``RUSAGE_CHILDREN``, every process the side's command waited for: the bench driver, its spawned
core run, or the e2e cluster and operator), so a ratio in wall-clock throughput can be told from a
ratio in work done. Core mode's ``cpuSeconds`` (the measured phase only) is compared too where both
sides report it.

The runner is a parameter (``run_pairs``), so the pairing, medians and ratios are tested without
installing anything.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["AgainstError", "Side", "bench_argv", "default_cache", "format_against", "install", "resolve_commit",
           "run_against", "run_pairs", "side_runner"]

INSTALL_TIMEOUT = 1200.0
_ENVIRONMENT_SCRIPT = Path(__file__).with_name("environment.py")


class AgainstError(Exception):
    """A comparison that cannot run: an unknown revision, a failed install, a side that failed or
    ran out of time. Its text is what the user reads."""


@dataclass(frozen=True)
class Side:
    """One side of the comparison: ``label`` is ``old`` (REV) or ``new`` (the current commit)."""
    label: str
    rev: str
    commit: str
    python: Path          # the side's venv interpreter
    source: Path          # its clean source tree


# A runner runs one side once with a seed, within a time limit, and returns (the results of its
# ``bench --output json``, the CPU seconds of its process tree).
Runner = Callable[[Side, int, float], tuple[list[dict[str, Any]], float]]


def default_cache() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kopf-scheduler" / "against"


def resolve_commit(repo: Path, rev: str) -> str:
    """The full commit id of ``rev`` in the git checkout ``repo``; AgainstError if there is none."""
    try:
        out = subprocess.run(["git", "-C", str(repo), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
                             capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError) as e:
        raise AgainstError(f"cannot run git in {repo}: {e}") from None
    if out.returncode != 0 or not out.stdout.strip():
        raise AgainstError(f"unknown revision {rev!r}: not a commit in {repo}")
    return out.stdout.strip()


def _tail(text: str, lines: int = 15) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])


def _clean_env(venv: Path | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    return env


def install(repo: Path, commit: str, cache: Path, *, timeout: float = INSTALL_TIMEOUT,
            progress: Callable[[str], None] | None = None) -> tuple[Path, Path]:
    """(venv interpreter, source tree) of a fresh install of ``commit``, cached under ``cache``."""
    repo, home = repo.resolve(), cache.resolve() / commit
    python, source = home / "venv" / "bin" / "python", home / "src"
    if (home / "ready").exists() and python.exists():
        return python, source
    if progress is not None:
        progress(f"installing {commit[:12]} into {home} (git archive, venv, pip install -e '.[test]')")
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir(parents=True)
    deadline = time.monotonic() + timeout

    def step(argv: list[str], what: str, cwd: Path = home) -> None:
        left = deadline - time.monotonic()
        try:
            out = subprocess.run(argv, cwd=cwd, check=False, capture_output=True, text=True, timeout=max(left, 1.0),
                                 env=_clean_env(home / "venv"), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            raise AgainstError(f"installing {commit[:12]}: {what} did not finish within {timeout:.0f} s") from None
        if out.returncode != 0:
            raise AgainstError(f"installing {commit[:12]} failed: {what} exited {out.returncode}:\n"
                               f"{_tail(out.stdout + out.stderr)}")

    with tempfile.TemporaryDirectory() as tmp:
        archive = Path(tmp) / "src.tar"
        step(["git", "-C", str(repo), "archive", "--format=tar", "-o", str(archive), commit], "git archive")
        with tarfile.open(archive) as tar:
            tar.extractall(source, filter="data")
    step([sys.executable, "-m", "venv", str(home / "venv")], "python -m venv")
    step([str(python), "-m", "pip", "install", "--quiet", "--upgrade", "pip"], "pip install --upgrade pip")
    step([str(python), "-m", "pip", "install", "--quiet", "-e", ".[test]"], "pip install -e '.[test]'", cwd=source)
    (home / "ready").write_text(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) + "\n")
    return python, source


def bench_argv(workloads: Sequence[str], *, mode: str, nodes: int | None, init_pods: int | None,
               pods: int | None, seed: int) -> list[str]:
    """The ``bench`` arguments both sides understand (every commit since the command has had them)."""
    argv = ["bench", "--mode", mode, "--repeat", "1", "--output", "json", "--seed", str(seed)]
    for w in workloads:
        argv += ["--workload", w]
    for flag, value in (("--nodes", nodes), ("--init-pods", init_pods), ("--pods", pods)):
        if value is not None:
            argv += [flag, str(value)]
    return argv


def side_runner(workloads: Sequence[str], *, mode: str, nodes: int | None, init_pods: int | None,
                pods: int | None) -> Runner:
    """The runner that runs a side's installed ``kopf-scheduler bench`` in a process of its own."""
    def run(side: Side, seed: int, time_limit: float) -> tuple[list[dict[str, Any]], float]:
        exe = side.python.with_name("kopf-scheduler")
        argv = [str(exe), *bench_argv(workloads, mode=mode, nodes=nodes, init_pods=init_pods, pods=pods, seed=seed)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        # A session of its own: on a timeout the whole group goes, the e2e cluster and operator too.
        proc = subprocess.Popen(argv, cwd=side.source, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=_clean_env(side.python.parent.parent), stdin=subprocess.DEVNULL,
                                start_new_session=True)
        try:
            stdout, stderr = proc.communicate(timeout=time_limit)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise AgainstError(f"{side.label} ({side.commit[:12]}): bench did not finish within "
                               f"{time_limit:.0f} s") from None
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        try:
            doc = json.loads(stdout)
            results = doc["results"]
        except (ValueError, KeyError, TypeError):
            raise AgainstError(f"{side.label} ({side.commit[:12]}): bench exited {proc.returncode} without its "
                               f"JSON:\n{_tail(stderr)}") from None
        return list(results), cpu
    return run


def _side_environment(side: Side) -> dict[str, Any]:
    """The side's record, taken by its own interpreter (no git in its tree: commit and dirty set here)."""
    out = subprocess.run([str(side.python), "-I", str(_ENVIRONMENT_SCRIPT), str(side.source)], check=False,
                         capture_output=True, text=True, timeout=60, env=_clean_env(side.python.parent.parent),
                         stdin=subprocess.DEVNULL)
    if out.returncode != 0:
        raise AgainstError(f"{side.label} ({side.commit[:12]}): reading its environment failed:\n{_tail(out.stderr)}")
    env: dict[str, Any] = json.loads(out.stdout)
    env["commit"], env["dirty"] = side.commit, False
    return env


def _f(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else format(value, spec)


def _run_fields(result: dict[str, Any], process_cpu: float) -> dict[str, Any]:
    # A run too short for a throughput sample has no Average (report.py): None, never a 0 to divide.
    measured = not result.get("unmeasured") and result["throughput"]["average"] > 0
    out = {"average": result["throughput"]["average"] if measured else None, "seconds": result["seconds"],
           "peakRssBytes": result["peakRssBytes"], "processCpuSeconds": round(process_cpu, 3)}
    if "cpuSeconds" in result:
        out["cpuSeconds"] = result["cpuSeconds"]
        out["cpuMicrosPerPod"] = round(1e6 * result["cpuSeconds"] / result["pods"], 1) if result["pods"] else None
    return out


def _ratio(new: float | None, old: float | None) -> float | None:
    return round(new / old, 4) if new is not None and old else None


def run_pairs(old: Side, new: Side, runner: Runner, *, repeat: int, seed: int = 0, time_limit: float = 3600.0,
              progress: Callable[[str], None] | None = None,
              clock: Callable[[], float] = time.monotonic) -> dict[str, Any]:
    """``repeat`` alternated pairs (old first in even pairs, new first in odd ones; pair k runs both
    with ``seed + k``), their medians and the ratios new/old. AgainstError when the time runs out."""
    deadline = clock() + time_limit
    pairs: list[dict[str, Any]] = []
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {}      # workload -> side -> run fields
    heads: dict[str, dict[str, Any]] = {}                       # workload -> its first result (sizes)
    for k in range(repeat):
        order = (old, new) if k % 2 == 0 else (new, old)
        got: dict[str, dict[str, dict[str, Any]]] = {}
        for side in order:
            left = deadline - clock()
            if left <= 0:
                raise AgainstError(f"--time-limit of {time_limit:.0f} s reached after {k} of {repeat} pairs")
            results, cpu = runner(side, seed + k, left)
            share = cpu / max(len(results), 1)        # the side's process CPU, split over its workloads
            for r in results:
                fields = _run_fields(r, share)
                got.setdefault(r["workload"], {})[side.label] = fields
                runs.setdefault(r["workload"], {"old": [], "new": []})[side.label].append(fields)
                heads.setdefault(r["workload"], r)
                if progress is not None:
                    progress(f"pair {k + 1}/{repeat} {side.label} ({side.commit[:12]}) {r['workload']}: "
                             f"{_f(fields['average'], '.0f')} pods/s average, {fields['processCpuSeconds']:.2f} s CPU")
        for workload, sides in got.items():
            if "old" in sides and "new" in sides:
                pairs.append({"workload": workload, "pair": k + 1, "order": [s.label for s in order],
                              "old": sides["old"], "new": sides["new"],
                              "ratio": _ratio(sides["new"]["average"], sides["old"]["average"])})
    return {"pairs": pairs, "results": [_summary(w, heads[w], runs[w], pairs) for w in runs]}


def _median(values: list[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return statistics.median(vals) if vals else None


def _summary(workload: str, head: dict[str, Any], runs: dict[str, list[dict[str, Any]]],
             pairs: list[dict[str, Any]]) -> dict[str, Any]:
    """A workload's medians per side, the ratio of the medians new/old, and the median of the
    per-pair ratios (the steadier of the two on a machine whose speed drifts)."""
    sides: dict[str, dict[str, Any]] = {}
    for label in ("old", "new"):
        keys = {k for run in runs[label] for k in run}
        sides[label] = {k: _median([run.get(k) for run in runs[label]]) for k in sorted(keys)}
        sides[label]["runs"] = len(runs[label])
    own = [p["ratio"] for p in pairs if p["workload"] == workload]
    out = {"workload": workload, "mode": head["mode"], "nodes": head["nodes"], "initPods": head["initPods"],
           "pods": head["pods"], "old": sides["old"], "new": sides["new"],
           "ratio": _ratio(sides["new"]["average"], sides["old"]["average"]),
           "medianPairRatio": _median(own),
           "processCpuRatio": _ratio(sides["new"]["processCpuSeconds"], sides["old"]["processCpuSeconds"])}
    if "cpuSeconds" in sides["old"] and "cpuSeconds" in sides["new"]:
        out["cpuRatio"] = _ratio(sides["new"]["cpuSeconds"], sides["old"]["cpuSeconds"])
    return out


def run_against(rev: str, workloads: Sequence[str], *, mode: str, nodes: int | None, init_pods: int | None,
                pods: int | None, repeat: int, seed: int, time_limit: float, repo: Path | None = None,
                cache: Path | None = None, progress: Callable[[str], None] | None = None,
                runner: Runner | None = None) -> dict[str, Any]:
    """Install both sides (cached), run the pairs and return the report (``format_against``'s input)."""
    from scheduler.benchmark.environment import git_state
    repo = repo if repo is not None else Path(__file__).resolve().parents[2]
    cache = cache if cache is not None else default_cache()
    head, dirty = git_state(repo)
    if head is None:
        raise AgainstError(f"--against needs a git checkout: {repo} is not one")
    if dirty and progress is not None:
        progress(f"warning: the checkout has uncommitted changes; the new side is HEAD ({head[:12]}) as committed")
    old_commit = resolve_commit(repo, rev)
    sides = []
    for label, r, commit in (("old", rev, old_commit), ("new", "HEAD", head)):
        python, source = install(repo, commit, cache, progress=progress)
        sides.append(Side(label, r, commit, python, source))
    old, new = sides
    report = run_pairs(old, new, runner or side_runner(workloads, mode=mode, nodes=nodes, init_pods=init_pods,
                                                         pods=pods),
                       repeat=repeat, seed=seed, time_limit=time_limit, progress=progress)
    report["against"] = {s.label: {"rev": s.rev, "commit": s.commit, "environment": _side_environment(s)}
                         for s in sides}
    return report


def format_against(report: dict[str, Any]) -> str:
    """The text report: each pair, then each workload's medians and ratios."""
    old, new = report["against"]["old"], report["against"]["new"]
    lines = [f"old {old['rev']} = {old['commit'][:12]} (pip-freeze {old['environment']['pipFreezeDigest'][:12]}), "
             f"new {new['rev']} = {new['commit'][:12]} (pip-freeze {new['environment']['pipFreezeDigest'][:12]})"]
    head = ("WORKLOAD", "PAIR", "ORDER", "OLD AVG", "NEW AVG", "NEW/OLD", "OLD CPU S", "NEW CPU S")
    rows = [head]
    for p in report["pairs"]:
        rows.append((p["workload"], str(p["pair"]), ",".join(p["order"]), _f(p["old"]["average"], ".0f"),
                     _f(p["new"]["average"], ".0f"), _f(p["ratio"]),
                     f"{p['old']['processCpuSeconds']:.2f}", f"{p['new']['processCpuSeconds']:.2f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines += ["  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    for r in report["results"]:
        size = f"{r['nodes']}/{r['initPods']}/{r['pods']}"
        line = (f"{r['workload']} {r['mode']} {size}: median old {_f(r['old']['average'], '.0f')}, "
                f"new {_f(r['new']['average'], '.0f')} pods/s; new/old {_f(r['ratio'])} "
                f"(median of pair ratios {_f(r['medianPairRatio'])}); process CPU new/old {_f(r['processCpuRatio'])}")
        if "cpuRatio" in r:
            line += (f"; measured-phase CPU per pod old {_f(r['old'].get('cpuMicrosPerPod'), '.0f')} µs, "
                     f"new {_f(r['new'].get('cpuMicrosPerPod'), '.0f')} µs (new/old {_f(r['cpuRatio'])})")
        lines.append(line)
    return "\n".join(lines)
