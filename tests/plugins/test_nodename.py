"""NodeName, after upstream's ``nodename/node_name_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework import Status
from scheduler.plugins import nodename
from tests.builders import node, pod, reasons, run_filter


def test_node_name() -> None:
    got = run_filter(nodename.NodeName(), pod("p", node_name="b"), [node("a"), node("b")])
    assert reasons(got) == [("node(s) didn't match the requested node name",), None]


# Upstream's pkg/scheduler/framework/plugins/nodename/node_name_test.go, TestNodeName: its three cases.
@pytest.mark.parametrize(("name", "node_name", "want"), [
    ("no host specified", "", None),
    ("host matches", "foo", None),
    ("host doesn't match", "bar", Status.unresolvable(nodename.ERR_REASON)),
])
def test_node_name_upstream(name: str, node_name: str, want: Status | None) -> None:
    (got,) = run_filter(nodename.NodeName(), pod("p", node_name=node_name), [node("foo")])
    assert got == want, name
