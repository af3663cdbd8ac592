"""``bench --against REV`` (scheduler.benchmark.against): the pairing, medians and ratios with a
fake runner; the errors a user sees; and one real comparison of HEAD against itself (soak: it
installs two venvs)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.benchmark.against import (
    AgainstError,
    Side,
    bench_argv,
    format_against,
    install,
    resolve_commit,
    run_against,
    run_pairs,
    side_runner,
)

ROOT = Path(__file__).resolve().parents[2]


def _side(label: str) -> Side:
    return Side(label, "REV" if label == "old" else "HEAD", label * 8, Path("/nowhere/python"), Path("/nowhere"))


def _result(average: float, *, cpu: float | None = None, pods: int = 100) -> dict[str, Any]:
    r: dict[str, Any] = {"workload": "SchedulingBasic", "mode": "core", "nodes": 10, "initPods": 0, "pods": pods,
                         "throughput": {"average": average}, "seconds": 1.0, "peakRssBytes": 1 << 20}
    if cpu is not None:
        r["cpuSeconds"] = cpu
    return r


def test_pairs_alternate_their_order_and_the_ratio_is_new_over_old() -> None:
    calls: list[tuple[str, int]] = []
    # old reads 100, 110, 90 and new 150, 160, 170 over the three pairs; new's measured CPU is half old's
    averages = {"old": [100.0, 110.0, 90.0], "new": [150.0, 160.0, 170.0]}

    def runner(side: Side, seed: int, time_limit: float) -> tuple[list[dict[str, Any]], float]:
        calls.append((side.label, seed))
        k = seed - 5
        return [_result(averages[side.label][k], cpu=0.2 if side.label == "old" else 0.1)], 2.0 + k

    report = run_pairs(_side("old"), _side("new"), runner, repeat=3, seed=5)
    assert calls == [("old", 5), ("new", 5), ("new", 6), ("old", 6), ("old", 7), ("new", 7)]
    assert [p["order"] for p in report["pairs"]] == [["old", "new"], ["new", "old"], ["old", "new"]]
    assert [p["ratio"] for p in report["pairs"]] == [1.5, round(160 / 110, 4), round(170 / 90, 4)]
    (r,) = report["results"]
    assert r["old"]["average"] == 100.0 and r["new"]["average"] == 160.0 and r["old"]["runs"] == 3
    assert r["ratio"] == 1.6
    assert r["medianPairRatio"] == 1.5          # of 1.5, 1.4545 and 1.8889
    assert r["old"]["processCpuSeconds"] == 3.0 and r["processCpuRatio"] == 1.0
    assert r["cpuRatio"] == 0.5 and r["old"]["cpuMicrosPerPod"] == 2000.0
    text = format_against({**report, "against": {s: {"rev": s, "commit": s * 8,
                                                       "environment": {"pipFreezeDigest": "ab" * 32}}
                                                  for s in ("old", "new")}})
    assert "new/old 1.600 (median of pair ratios 1.500)" in text and "2000 µs" in text


def test_an_old_side_without_cpu_seconds_has_no_cpu_ratio() -> None:
    def runner(side: Side, seed: int, time_limit: float) -> tuple[list[dict[str, Any]], float]:
        return [_result(100.0, cpu=None if side.label == "old" else 0.1)], 1.0

    (r,) = run_pairs(_side("old"), _side("new"), runner, repeat=1)["results"]
    assert "cpuRatio" not in r and "cpuSeconds" not in r["old"] and r["new"]["cpuSeconds"] == 0.1


def test_the_time_limit_stops_the_pairs() -> None:
    now = [0.0]

    def runner(side: Side, seed: int, time_limit: float) -> tuple[list[dict[str, Any]], float]:
        now[0] += 40.0                      # every run takes 40 s of the 100 s
        return [_result(100.0)], 1.0

    with pytest.raises(AgainstError, match="--time-limit of 100 s reached after 1 of 5 pairs"):
        run_pairs(_side("old"), _side("new"), runner, repeat=5, time_limit=100.0, clock=lambda: now[0])


def test_both_sides_get_the_same_bench_arguments() -> None:
    assert bench_argv(["SchedulingBasic"], mode="e2e", nodes=50, init_pods=None, pods=100, seed=3) == [
        "bench", "--mode", "e2e", "--repeat", "1", "--output", "json", "--seed", "3",
        "--workload", "SchedulingBasic", "--nodes", "50", "--pods", "100"]


def test_a_side_out_of_time_is_ended_with_its_children(tmp_path: Path) -> None:
    # a stand-in for a side's kopf-scheduler whose bench starts a child (as e2e starts the cluster)
    # and never ends: the time limit ends both, and the user reads why
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "kopf-scheduler"
    exe.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {tmp_path / 'child'}\nwait\n")
    exe.chmod(0o755)
    side = Side("new", "HEAD", "c" * 40, tmp_path / "bin" / "python", tmp_path)
    run = side_runner(["SchedulingBasic"], mode="e2e", nodes=5, init_pods=0, pods=5)
    with pytest.raises(AgainstError, match=r"new \(cccccccccccc\): bench did not finish within 2 s"):
        run(side, 0, 2.0)
    child = int((tmp_path / "child").read_text())
    deadline = time.monotonic() + 10
    while Path(f"/proc/{child}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{child}").exists()


def test_a_side_without_json_says_so(tmp_path: Path) -> None:
    (tmp_path / "bin").mkdir()
    exe = tmp_path / "bin" / "kopf-scheduler"
    exe.write_text("#!/bin/sh\necho 'Error: No such option: --mode' >&2\nexit 2\n")
    exe.chmod(0o755)
    side = Side("old", "REV", "d" * 40, tmp_path / "bin" / "python", tmp_path)
    with pytest.raises(AgainstError, match="bench exited 2 without its JSON:\nError: No such option: --mode"):
        side_runner(["SchedulingBasic"], mode="core", nodes=5, init_pods=0, pods=5)(side, 0, 60.0)


def test_an_unknown_revision_is_a_clear_error() -> None:
    with pytest.raises(AgainstError, match="unknown revision 'no-such-rev'"):
        resolve_commit(ROOT, "no-such-rev")
    out = CliRunner().invoke(main, ["bench", "--against", "no-such-rev", "--workload", "SchedulingBasic"])
    assert out.exit_code == 1 and "error: unknown revision 'no-such-rev'" in out.stderr


def test_a_failed_install_names_the_step_and_is_not_cached(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "pyproject.toml").write_text("[project\nthis is not TOML\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "broken"], check=True)
    commit = resolve_commit(repo, "HEAD")
    with pytest.raises(AgainstError, match=r"installing .* failed: pip install .* exited"):
        install(repo, commit, tmp_path / "cache", timeout=300)
    assert not (tmp_path / "cache" / commit / "ready").exists()


def test_against_outside_a_checkout_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(AgainstError, match="needs a git checkout"):
        run_against("HEAD", ["SchedulingBasic"], mode="core", nodes=5, init_pods=0, pods=5, repeat=1, seed=0,
                    time_limit=60, repo=tmp_path, cache=tmp_path / "cache")


@pytest.mark.soak
def test_head_against_itself_end_to_end(tmp_path: Path) -> None:
    """One fresh install of HEAD (the second side finds it cached), two pairs of tiny core runs: the
    JSON a user gets, each side's environment recorded by its own venv, and a CPU ratio near 1."""
    head = resolve_commit(ROOT, "HEAD")
    out = CliRunner().invoke(main, ["bench", "--against", "HEAD", "--workload", "SchedulingBasic", "--nodes", "20",
                                    "--init-pods", "0", "--pods", "40", "--repeat", "2", "--output", "json",
                                    "--against-cache", str(tmp_path), "--time-limit", "600"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    assert doc["against"]["old"]["commit"] == doc["against"]["new"]["commit"] == head
    env = doc["against"]["old"]["environment"]
    assert env["pipFreezeDigest"] == doc["against"]["new"]["environment"]["pipFreezeDigest"]
    assert any(line.startswith("numpy==") for line in env["pipFreeze"])
    assert (tmp_path / head / "ready").exists() and len(doc["pairs"]) == 2
    (r,) = doc["results"]
    assert r["old"]["runs"] == r["new"]["runs"] == 2
    # 40 pods bind in far less than a throughput sample's two seconds: no Average, no ratio of it;
    # the same code on both sides costs about the same CPU
    assert r["old"]["average"] is None and r["ratio"] is None
    assert 0.5 < r["processCpuRatio"] < 2 and "cpuRatio" in r
    assert r["new"]["cpuMicrosPerPod"] > 0 and doc["environment"]["loadAverage"]["after"] is not None
