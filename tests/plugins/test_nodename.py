"""NodeName, after upstream's ``nodename/node_name_test.go``."""

from __future__ import annotations

from scheduler.plugins import nodename
from tests.builders import node, pod, reasons, run_filter


def test_node_name() -> None:
    got = run_filter(nodename.NodeName(), pod("p", node_name="b"), [node("a"), node("b")])
    assert reasons(got) == [("node(s) didn't match the requested node name",), None]
