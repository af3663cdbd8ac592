"""NodeUnschedulable, after upstream's ``nodeunschedulable/node_unschedulable_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework import Status
from scheduler.plugins import nodeunschedulable
from tests.builders import node, pod, reasons, run_filter


def test_node_unschedulable() -> None:
    plugin = nodeunschedulable.NodeUnschedulable()
    nodes = [node("a", unschedulable=True), node("b")]
    assert reasons(run_filter(plugin, pod("p"), nodes)) == [("node(s) were unschedulable",), None]
    tolerant = pod("p", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                               "effect": "NoSchedule"}]})
    assert reasons(run_filter(plugin, tolerant, nodes)) == [None, None]


# Upstream's pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go,
# TestNodeUnschedulable: its three cases (the toleration names key and effect, no operator: Equal to "").
@pytest.mark.parametrize(("name", "tolerations", "unschedulable", "want"), [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", [], True,
     Status.unresolvable(nodeunschedulable.ERR_REASON_UNSCHEDULABLE)),
    ("Schedule pod to normal node", [], False, None),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], True, None),
])
def test_node_unschedulable_upstream(name: str, tolerations: list[dict[str, str]], unschedulable: bool,
                                     want: Status | None) -> None:
    p = pod("p", spec={"tolerations": tolerations})
    (got,) = run_filter(nodeunschedulable.NodeUnschedulable(), p, [node("n", unschedulable=unschedulable)])
    assert got == want, name
