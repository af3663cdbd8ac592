"""NodePorts: a pod's host ports must be free on the node (same protocol and port, and the same
host IP or either side ``0.0.0.0``). Pods without host ports skip the Filter entirely."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    FilterVerdict,
    PreFilterResult,
    Rows,
)
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATUS = Status.unschedulable(ERR_REASON)
_SKIP = Status(Code.SKIP)


class NodePorts:
    """Upstream's ``nodeports.NodePorts``: PreFilter, Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes
    pre_filter_reads_pods = False   # PodReadingPreFilter: its state survives a change of the node's pods

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status]:
        return None, (SUCCESS if pod.host_ports else _SKIP)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        if not pod.host_ports:
            return FilterVerdict.passed(len(rows))
        infos = snapshot.table.infos
        failed = np.fromiter((infos[r].port_conflicts(pod.host_ports)
                              for r in rows.tolist()), np.bool_, len(rows))
        return FilterVerdict.uniform(failed, _STATUS)

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        def frees_port(pod: Pod, change: object) -> bool:
            old = getattr(change, "old", None)
            return old is None or bool(set(getattr(old, "host_ports", ())) & set(pod.host_ports))
        return (ClusterEventWithHint(ClusterEvent("Pod", "Delete"), frees_port),
                ClusterEventWithHint(ClusterEvent("Node", "Add")))


def new(args: None, handle: Handle) -> NodePorts:
    return NodePorts()


if TYPE_CHECKING:
    from scheduler.framework.interfaces import BatchFilterPlugin, PreFilterPlugin

    _: type[BatchFilterPlugin] = NodePorts
    __: type[PreFilterPlugin] = NodePorts
