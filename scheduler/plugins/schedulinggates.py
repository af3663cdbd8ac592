"""SchedulingGates: a pod with ``spec.schedulingGates`` waits, gated, until they are all removed."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.framework import interfaces as fwk
from scheduler.framework.handle import Handle
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod

NAME = "SchedulingGates"


def reason(gates: Sequence[str]) -> str:
    return f"waiting for scheduling gates: [{' '.join(gates)}]"


class SchedulingGates:
    """Upstream's ``schedulinggates.SchedulingGates``: PreEnqueue, EnqueueExtensions."""

    name = NAME

    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_gates:
            return SUCCESS
        return Status.unresolvable(reason(pod.scheduling_gates))

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        # Only the pod's own update can lift its gates; the queue handles that directly.
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("UnscheduledPod", "UpdatePodSchedulingGatesEliminated")),)


def new(args: None, handle: Handle) -> SchedulingGates:
    return SchedulingGates()


if TYPE_CHECKING:
    _: type[fwk.PreEnqueuePlugin] = SchedulingGates
    __: type[fwk.EnqueueExtensions] = SchedulingGates
