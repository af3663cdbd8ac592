"""``Handle``: what a plugin factory may use besides its args (upstream's ``framework.Handle``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from scheduler.client import SchedulerClient
    from scheduler.metrics import Metrics

__all__ = ["Handle"]


@dataclass(frozen=True, slots=True)
class Handle:
    client: SchedulerClient | None = None
    metrics: Metrics | None = None
