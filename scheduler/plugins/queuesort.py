"""PrioritySort: higher ``spec.priority`` first, then earlier queue timestamp."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.framework import interfaces as fwk
from scheduler.framework.handle import Handle
from scheduler.framework.types import QueuedPodInfo

NAME = "PrioritySort"


class PrioritySort:
    """Upstream's ``queuesort.PrioritySort``: QueueSort."""

    name = NAME

    def sort_key(self, info: QueuedPodInfo) -> Any:
        return (-info.pod.priority, info.timestamp)


def new(args: None, handle: Handle) -> PrioritySort:
    return PrioritySort()


if TYPE_CHECKING:
    _: type[fwk.QueueSortPlugin] = PrioritySort
