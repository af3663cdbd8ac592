"""NodeUnschedulable: ``spec.unschedulable`` nodes are out (UnschedulableAndUnresolvable), unless the
pod tolerates ``node.kubernetes.io/unschedulable:NoSchedule``.

EnqueueExtensions: Node/Add and Node/UpdateNodeTaint (which ``spec.unschedulable`` changes raise),
with upstream's queueing hint (``isSchedulableAfterNodeChange``): a rejected pod is requeued only by a
schedulable node added or a node turned schedulable. Anything that is not a node is an error, which
the runtime reads as Queue, as upstream. The pod's own toleration updates (upstream's
Pod/UpdatePodToleration hint) are the queue's rule for a pending pod's spec change
(``SchedulingQueue.update``), so no hint is registered for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import TOLERATIONS_SIGNER_NAME, SignFragment, tolerations_signer
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Node, Pod, Taint
from scheduler.plugins.helpers import derived

NAME = "NodeUnschedulable"
ERR_REASON_UNSCHEDULABLE = "node(s) were unschedulable"
UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
_STATUS = Status.unresolvable(ERR_REASON_UNSCHEDULABLE)
_ANY_KEY = (NAME, "any")


class NodeUnschedulable:
    """Upstream's ``nodeunschedulable.NodeUnschedulable``: Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: Filter reads the tolerations (of the unschedulable taint)."""
        return ((TOLERATIONS_SIGNER_NAME, tolerations_signer(pod)),), SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        t = snapshot.table
        # Whether any node is unschedulable changes only with the nodes (cached per table version):
        # in the usual cluster none is, and no row needs reading.
        if not derived(t, _ANY_KEY, lambda: bool(t.unschedulable[: t.size].any())):
            return fwk.FilterVerdict.passed(len(rows))
        failed = t.unschedulable[rows]
        if failed.any() and any(t.tolerates(UNSCHEDULABLE_TAINT) for t in pod.tolerations):
            return fwk.FilterVerdict.passed(len(rows))
        return fwk.FilterVerdict.uniform(failed, _STATUS)

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add"), is_schedulable_after_node_change),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeTaint"), is_schedulable_after_node_change))


def is_schedulable_after_node_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterNodeChange``: Queue for a schedulable node added, or a node
    that was unschedulable and is not any more. Raises ``TypeError`` for objects that are not
    nodes (upstream's ``util.As`` error: Queue)."""
    old, new = event.old, event.new
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        raise TypeError(f"expected nodes, got {type(old).__name__} and {type(new).__name__}")
    return not new.unschedulable and (old is None or old.unschedulable)


def new(args: None, handle: Handle) -> NodeUnschedulable:
    return NodeUnschedulable()


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodeUnschedulable
