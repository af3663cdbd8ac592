"""SchedulingGates, after upstream's ``schedulinggates/scheduling_gates_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework import Status
from scheduler.model import Pod
from scheduler.plugins import schedulinggates
from tests.builders import pod


# Upstream's pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates_test.go, TestPreEnqueue.
@pytest.mark.parametrize(("name", "p", "want"), [
    ("pod does not carry scheduling gates", pod("p"), Status()),
    ("pod carries scheduling gates", pod("p", spec={"schedulingGates": [{"name": "foo"}, {"name": "bar"}]}),
     Status.unresolvable("waiting for scheduling gates: [foo bar]")),
])
def test_pre_enqueue(name: str, p: Pod, want: Status) -> None:
    assert schedulinggates.SchedulingGates().pre_enqueue(p) == want, name
