"""The types the framework shares with the queue, as upstream's ``framework/types.go``.

* ``QueuedPodInfo``: a pending pod plus what the queue knows about its attempts.
* ``ClusterEvent``: a change in the cluster: a ``resource`` (Node, Pod, Namespace, ...) and the
  ``actions`` on it (Add, Delete, UpdateNodeLabel, ...). One type serves both sides, as upstream's:
  a plugin *registers* the events that may make a pod it rejected schedulable
  (``EnqueueExtensions.events_to_register``, with an optional queueing hint), and the service
  *reports* the events that happened (``SchedulingQueue.move_all_to_active_or_backoff``), with the
  objects before and after (``old``, ``new``) for the hints to read.

The queue imports these from here; the framework never imports the queue.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from scheduler.model import Pod

__all__ = ["WILDCARD", "ClusterEvent", "ClusterEventWithHint", "QueuedPodInfo"]

WILDCARD = "*"


@dataclass(slots=True, eq=False)
class QueuedPodInfo:
    """A pending pod in the queue (upstream's ``QueuedPodInfo``)."""

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


@dataclass(frozen=True, slots=True, init=False)
class ClusterEvent:
    """A cluster event (upstream's ``ClusterEvent``): ``resource`` is Node, Pod (assigned), Namespace,
    ... or ``*``; ``actions`` a set of Add, Update, UpdateNodeLabel, UpdateNodeTaint,
    UpdateNodeAllocatable, Delete or ``*`` (one action may be given as a string). An event that
    happened carries the objects before and after (``old``, ``new``); ``label`` names it in metrics."""

    resource: str
    actions: frozenset[str]
    old: Any = field(default=None, compare=False, repr=False)
    new: Any = field(default=None, compare=False, repr=False)
    label: str = field(default="", compare=False)

    def __init__(self, resource: str, actions: str | Iterable[str] = WILDCARD, *, old: Any = None,
                 new: Any = None, label: str = "") -> None:
        object.__setattr__(self, "resource", resource)
        object.__setattr__(self, "actions", frozenset((actions,) if isinstance(actions, str) else actions))
        object.__setattr__(self, "old", old)
        object.__setattr__(self, "new", new)
        object.__setattr__(self, "label", label)

    @property
    def name(self) -> str:
        return self.label or f"{self.resource}{'/'.join(sorted(self.actions))}"

    def matches(self, event: ClusterEvent) -> bool:
        """Whether this registered event covers ``event`` (one that happened): the same resource
        (or ``*``), and a shared action (``*`` covers all, ``Update`` every ``Update…``)."""
        if self.resource not in (WILDCARD, event.resource):
            return False
        if WILDCARD in self.actions or not self.actions.isdisjoint(event.actions):
            return True
        return "Update" in self.actions and any(a.startswith("Update") for a in event.actions)


@dataclass(frozen=True, slots=True)
class ClusterEventWithHint:
    """An event a plugin registers, with an optional queueing hint: ``hint(pod, event)`` says
    whether the event may make the pod, which this plugin rejected, schedulable (Queue) or not
    (QueueSkip). No hint means Queue."""

    event: ClusterEvent
    hint: Callable[[Pod, ClusterEvent], bool] | None = None
