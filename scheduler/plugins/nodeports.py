"""NodePorts: a pod's host ports must be free on the node (same protocol and port, and the same
host IP or either side ``0.0.0.0``). Pods without host ports skip the Filter entirely.

The Filter reads the rows where each port is in use (``host_port_rows.HostPortRows``: per
protocol, port and host IP, a set of rows or a bool column) instead of asking each candidate node
about its ports: a pod's wanted ports become a mask over the candidate rows in one lookup per port.

Unlike upstream's, the Filter keeps no PreFilter state: it reads the pod's ports itself, so a
Filter called alone (upstream's ``TestPreFilterDisabled`` is an Error there) gives the verdict
PreFilter would have led to.

EnqueueExtensions, as upstream with queueing hints: Pod/Delete with ``isSchedulableAfterPodDeleted``
(Queue only when the deleted pod was on a node or nominated to one, and one of its host ports
conflicts with one the pending pod wants; anything that is not a pod is an error, which the runtime
reads as Queue), and Node/Add without a hint. Pod updates are not registered: a pod's ports are
immutable.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import HOST_PORTS_SIGNER_NAME, SignFragment, host_ports_signer
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import HostPort, Pod
from scheduler.plugins.host_port_rows import HostPortRows

NAME = "NodePorts"
ERR_REASON = "node(s) didn't have free ports for the requested pod ports"
_STATUS = Status.unschedulable(ERR_REASON)
_SKIP = Status(Code.SKIP)


class NodePorts:
    """Upstream's ``nodeports.NodePorts``: PreFilter, Filter, EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes
    pre_filter_reads_pods = False   # PodReadingPreFilter: its state survives a change of the node's pods

    def __init__(self) -> None:
        self._rows = HostPortRows()

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreFilter and Filter read the host ports."""
        return ((HOST_PORTS_SIGNER_NAME, host_ports_signer(pod)),), SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        return None, (SUCCESS if pod.host_ports else _SKIP)

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        if not pod.host_ports:
            return fwk.FilterVerdict.passed(len(rows))
        return fwk.FilterVerdict.uniform(self._rows.conflicts(snapshot.table, pod.host_ports, rows), _STATUS)

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "Delete"), is_schedulable_after_pod_deleted),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")))


def is_schedulable_after_pod_deleted(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterPodDeleted``. Raises ``TypeError`` when the deleted object is
    not a pod (upstream's ``util.As`` error: Queue)."""
    deleted = event.old
    if not isinstance(deleted, Pod):
        raise TypeError(f"expected a deleted pod, got {type(deleted).__name__}")
    if not deleted.node_name and not deleted.nominated_node_name:
        return False    # it held no ports anywhere
    return ports_conflict(pod.host_ports, deleted.host_ports)


def ports_conflict(wanted: Sequence[HostPort], used: Sequence[HostPort]) -> bool:
    """Upstream's ``HostPortInfo.CheckConflict`` over ``wanted``: the same protocol and port, and
    the same host IP or ``0.0.0.0`` on either side (the parser already defaulted an empty IP to
    ``0.0.0.0`` and an empty protocol to TCP, as ``HostPortInfo.sanitize``)."""
    return any(w.protocol == u.protocol and w.port == u.port
               and (w.host_ip == u.host_ip or "0.0.0.0" in (w.host_ip, u.host_ip))
               for w in wanted for u in used)


def new(args: None, handle: Handle) -> NodePorts:
    return NodePorts()


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodePorts
    __: type[fwk.PreFilterPlugin] = NodePorts
