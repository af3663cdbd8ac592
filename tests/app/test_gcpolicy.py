"""The collector's thresholds every kopf-scheduler process sets (``scheduler.app.gcpolicy``)."""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

from scheduler.app.gcpolicy import DEFAULT_THRESHOLD, ENV, apply_gc_policy


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


@pytest.mark.parametrize(("env", "want"), [
    ({}, DEFAULT_THRESHOLD),
    ({ENV: ""}, DEFAULT_THRESHOLD),
    ({ENV: "700,10,10"}, (700, 10, 10)),          # CPython's own defaults, to measure against
    ({ENV: " 1000, 5 ,2 "}, (1000, 5, 2)),
])
def test_thresholds(env: dict[str, str], want: tuple[int, int, int]) -> None:
    assert apply_gc_policy(env) == want
    assert gc.get_threshold() == want


@pytest.mark.parametrize("raw", ["700,10", "a,b,c", "700,10,10,1", "-1,10,10"])
def test_a_malformed_value_names_the_variable(raw: str) -> None:
    before = gc.get_threshold()
    with pytest.raises(ValueError, match=f"{ENV}=.*three non-negative integers"):
        apply_gc_policy({ENV: raw})
    assert gc.get_threshold() == before


def _cli(env: dict[str, str], code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=60, check=False)


def test_every_command_sets_them_and_a_bad_value_is_a_usage_error() -> None:
    probe = ("import gc, sys; from scheduler.app.cli import main\n"
             "try:\n    main(['crd'])\nexcept SystemExit as e:\n    print(gc.get_threshold(), e.code, file=sys.stderr)")
    ok = _cli({ENV: ""}, probe)
    assert f"{DEFAULT_THRESHOLD} 0" in ok.stderr, ok.stderr
    bad = _cli({ENV: "lots"}, probe)
    assert "Error: KOPF_SCHEDULER_GC_THRESHOLD='lots': expected three non-negative integers" in bad.stderr, bad.stderr
    assert bad.stderr.rstrip().endswith(" 2"), bad.stderr
