"""``_micro_time``: metav1.MicroTime as RFC 3339 with microseconds, the second's text cached."""

from __future__ import annotations

import time

import pytest

from scheduler.kubeapi.scheduler_client import _micro_time


def reference(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


@pytest.mark.parametrize("t", [0.0, 0.999999, 1.0, 59.5, 86399.9999999, 1_700_000_000.0, 1_700_000_000.123456,
                               1_699_999_999.999999, 1_700_000_001.000001])
def test_matches_strftime(t: float) -> None:
    assert _micro_time(t) == reference(t)


def test_a_second_cached_then_left_behind() -> None:
    # the same second twice, the next, then back: each from its own second
    seq = [1_800_000_000.25, 1_800_000_000.75, 1_800_000_001.5, 1_800_000_000.5, 1_800_000_000.5]
    assert [_micro_time(t) for t in seq] == [reference(t) for t in seq]
    assert _micro_time(1_800_000_000.5) == "2027-01-15T08:00:00.500000Z"
