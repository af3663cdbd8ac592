"""NodeUnschedulable: ``spec.unschedulable`` nodes are out, unless the pod tolerates
``node.kubernetes.io/unschedulable:NoSchedule``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.cache import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import ClusterEvent, ClusterEventWithHint, FilterVerdict, Rows
from scheduler.framework.status import Status
from scheduler.model import Pod, Taint

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_STATUS = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)


class NodeUnschedulable:
    """Upstream's ``nodeunschedulable.NodeUnschedulable``: Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        failed = snapshot.table.unschedulable[rows]
        if failed.any() and any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return FilterVerdict.passed(len(rows))
        return FilterVerdict.uniform(failed, _STATUS)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (ClusterEventWithHint(ClusterEvent("Node", "Add")),
                ClusterEventWithHint(ClusterEvent("Node", "UpdateNodeTaint")))


def new(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()


if TYPE_CHECKING:
    from scheduler.framework.interfaces import BatchFilterPlugin

    _: type[BatchFilterPlugin] = NodeUnschedulable
