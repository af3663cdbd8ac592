"""CauseLog: one line per cause, then a periodic summary with the count."""

from __future__ import annotations

import logging

import pytest

from scheduler.errors import ClientError
from scheduler.logonce import CauseLog, cause_of
from tests.builders import Clock


def test_once_per_cause_then_a_summary(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    log = CauseLog(logging.getLogger("test.logonce"), interval=60, clock=clock)
    with caplog.at_level(logging.WARNING, "test.logonce"):
        for i in range(500):
            log.report("post event: HTTP 503", "cannot post event for pod-%d", i)
        log.report("post event: HTTP 429", "cannot post event for pod-%d", 0)
        clock.advance(61)
        log.report("post event: HTTP 503", "cannot post event for pod-%d", 500)
    lines = [r.getMessage() for r in caplog.records]
    assert lines == ["cannot post event for pod-0", "cannot post event for pod-0",
                     "cannot post event for pod-500 (and 499 more times for the same cause in the last 60 s)"]


def test_cause_is_the_status_not_the_pod() -> None:
    assert cause_of(ClientError("pods \"a\" boom", status=503)) == "HTTP 503"
    assert cause_of(ConnectionResetError("x")) == "ConnectionResetError"
