"""``Handle``: what a plugin factory may use besides its args (upstream's ``framework.Handle``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient
    from scheduler.metrics import Metrics
    from scheduler.model import LabelSelector, Pod

__all__ = ["Handle"]


@dataclass(frozen=True, slots=True)
class Handle:
    client: SchedulerClient | None = None
    metrics: Metrics | None = None
    # The label selector of the Services and controllers (ReplicaSet, StatefulSet, ...) that own a
    # pod, as upstream's ``helper.DefaultSelector``; PodTopologySpread's default constraints need
    # it. The operator provides it from its listers; ``None`` means no default constraints.
    default_selector: Callable[[Pod], LabelSelector | None] | None = None
