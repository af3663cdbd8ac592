"""NodeName: a pod that names ``spec.nodeName`` fits only that node."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import NODE_NAME_SIGNER_NAME, SignFragment
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod

NAME = "NodeName"
ERR_REASON = "node(s) didn't match the requested node name"
_STATUS = Status.unresolvable(ERR_REASON)


class NodeName:
    """Upstream's ``nodename.NodeName``: Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: Filter reads ``spec.nodeName``."""
        return ((NODE_NAME_SIGNER_NAME, pod.node_name),), SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        if not pod.node_name:
            return fwk.FilterVerdict.passed(len(rows))
        return fwk.FilterVerdict.uniform(rows != snapshot.table.row_of.get(pod.node_name, -1), _STATUS)

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),)


def new(args: None, handle: Handle) -> NodeName:
    return NodeName()


_ = np
if TYPE_CHECKING:
    __: type[fwk.BatchFilterPlugin] = NodeName
