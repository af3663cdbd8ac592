"""``QueuedPodInfo``: a pending pod plus what the queue knows about its attempts."""

from __future__ import annotations

from dataclasses import dataclass, field

from scheduler.model import Pod

__all__ = ["QueuedPodInfo"]


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    pod: Pod
    # When the pod was (re)added to the queue: the PrioritySort tie-break and the backoff base.
    timestamp: float
    # When the pod first entered the queue: the start of the scheduling SLI.
    initial_attempt_timestamp: float
    attempts: int = 0
    # Plugins that rejected the pod in its last attempt; only events they care about move it.
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    # Set when a PreEnqueue plugin keeps the pod out of activeQ (e.g. SchedulingGates).
    gating_plugin: str = ""
    consecutive_errors: int = 0
    # The scheduling cycle in which the pod was last popped.
    cycle: int = 0

    @property
    def key(self) -> str:
        return self.pod.key

    @property
    def uid(self) -> str:
        return self.pod.uid
