"""NodeUnschedulable, after upstream's ``nodeunschedulable/node_unschedulable_test.go``."""

from __future__ import annotations

from scheduler.plugins import nodeunschedulable
from tests.builders import node, pod, reasons, run_filter


def test_node_unschedulable() -> None:
    plugin = nodeunschedulable.NodeUnschedulable()
    nodes = [node("a", unschedulable=True), node("b")]
    assert reasons(run_filter(plugin, pod("p"), nodes)) == [("node(s) were unschedulable",), None]
    tolerant = pod("p", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                               "effect": "NoSchedule"}]})
    assert reasons(run_filter(plugin, tolerant, nodes)) == [None, None]
