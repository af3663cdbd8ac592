"""PrioritySort, after upstream's ``queuesort/priority_sort_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework.types import QueuedPodInfo
from scheduler.plugins import queuesort
from tests.builders import pod


def _info(priority: int, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(pod("p", priority=priority), timestamp=timestamp, initial_attempt_timestamp=timestamp)


# Upstream's pkg/scheduler/framework/plugins/queuesort/priority_sort_test.go, TestLess: its four cases
# (lowPriority = 10, highPriority = 20; t1 earlier than t2). Less(p1, p2) is sort_key(p1) < sort_key(p2).
@pytest.mark.parametrize(("name", "p1", "p2", "want"), [
    ("p1.priority less than p2.priority", (10, 1.0), (20, 2.0), False),
    ("p1.priority greater than p2.priority", (20, 1.0), (10, 2.0), True),
    ("equal priority. p1 is added to schedulingQ earlier than p2", (20, 1.0), (20, 2.0), True),
    ("equal priority. p2 is added to schedulingQ earlier than p1", (20, 2.0), (20, 1.0), False),
])
def test_less(name: str, p1: tuple[int, float], p2: tuple[int, float], want: bool) -> None:
    sort = queuesort.PrioritySort()
    assert (sort.sort_key(_info(*p1)) < sort.sort_key(_info(*p2))) == want, name
