"""The environment record every ``bench`` figure carries (scheduler.benchmark.environment)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.benchmark.environment import (
    ENVIRONMENT_KEYS,
    calibration,
    cpu_model,
    environment,
    finish,
    format_header,
    git_state,
    load_average,
    pip_freeze,
)

ROOT = Path(__file__).resolve().parents[2]


def test_the_record_has_every_key_and_the_digest_is_of_the_freeze() -> None:
    before = load_average()
    env = environment(before)
    assert set(env) == set(ENVIRONMENT_KEYS)
    assert env["pipFreezeDigest"] == hashlib.sha256("\n".join(env["pipFreeze"]).encode()).hexdigest()
    assert env["loadAverage"]["before"] == before and len(env["loadAverage"]["after"]) == 3
    assert env["cpuCount"] == os.cpu_count()
    assert env["pythonVersion"] == ".".join(map(str, sys.version_info[:3]))
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    assert env["commit"] == head and isinstance(env["dirty"], bool)


def test_the_variables_that_change_a_run_are_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KOPF_SCHEDULER_GC_THRESHOLD", "700,10,10")
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    monkeypatch.setenv("HOME_OF_SOMETHING_ELSE", "x")
    variables = environment(None)["variables"]
    assert variables["KOPF_SCHEDULER_GC_THRESHOLD"] == "700,10,10" and variables["PYTHONDONTWRITEBYTECODE"] == "1"
    assert "HOME_OF_SOMETHING_ELSE" not in variables


def test_the_freeze_names_this_project_without_its_path() -> None:
    freeze = pip_freeze()
    assert freeze == sorted(freeze, key=lambda line: line.split("==")[0].lower())
    (own,) = [line for line in freeze if line.lower().startswith("kopf-scheduler==")]
    assert str(ROOT) not in own and "/" not in own
    assert any(line.startswith("numpy==") for line in freeze)


def test_cpu_model_reads_the_first_model_name(tmp_path: Path) -> None:
    info = tmp_path / "cpuinfo"
    info.write_text("processor\t: 0\nmodel name\t: Fast CPU @ 3GHz\n\nprocessor\t: 1\nmodel name\t: Other\n")
    assert cpu_model(info) == "Fast CPU @ 3GHz"
    assert cpu_model(tmp_path / "missing") is None


def test_outside_a_checkout_commit_and_dirty_are_unknown(tmp_path: Path) -> None:
    assert git_state(tmp_path) == (None, None)


def test_the_calibration_is_read_before_and_after_a_run() -> None:
    env = environment(load_average())
    assert env["calibrationMs"]["before"] > 0 and env["calibrationMs"]["after"] is None
    finish(env)
    assert env["calibrationMs"]["after"] > 0 and len(env["loadAverage"]["after"]) == 3
    assert "calibration " in format_header(env) and " ms" in format_header(env)


def test_the_calibration_measures_the_machine_not_chance(monkeypatch: pytest.MonkeyPatch) -> None:
    # The best of its trials: one interrupted trial does not move it; a machine twice as slow does.
    from scheduler.benchmark import environment as module
    clock = iter([0.0, 0.010, 1.0, 1.050, 2.0, 2.010, 3.0, 3.011, 4.0, 4.010])
    monkeypatch.setattr(module.time, "perf_counter", lambda: next(clock))
    assert calibration() == 10.0
    clock = iter([0.0, 0.020, 1.0, 1.021, 2.0, 2.020, 3.0, 3.022, 4.0, 4.020])
    assert calibration() == 20.0


def test_the_text_header_is_one_line() -> None:
    env = environment([1.0, 2.0, 3.0])
    header = format_header(env)
    assert "\n" not in header and header.startswith("# commit ")
    assert env["pipFreezeDigest"][:12] in header and "load 1.00/2.00/3.00 -> " in header


def test_another_interpreter_writes_its_record_as_json() -> None:
    # bench --against runs the module by path in each side's venv: it must need nothing but the stdlib
    out = subprocess.run([sys.executable, "-I", str(ROOT / "scheduler" / "benchmark" / "environment.py"), str(ROOT)],
                         capture_output=True, text=True, timeout=60, check=True)
    assert set(json.loads(out.stdout)) == set(ENVIRONMENT_KEYS)


def test_bench_writes_the_environment_in_both_outputs() -> None:
    args = ["bench", "--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "0", "--pods", "5"]
    doc = json.loads(CliRunner().invoke(main, [*args, "--output", "json"]).stdout)
    assert set(doc["environment"]) == set(ENVIRONMENT_KEYS)
    assert doc["environment"]["calibrationMs"]["before"] > 0 and doc["environment"]["calibrationMs"]["after"] > 0
    text = CliRunner().invoke(main, args).stdout.splitlines()
    assert text[0].startswith("# commit ") and text[1].startswith("WORKLOAD")
