"""What a scheduling cycle hands to its binding half (``scheduler/cycle.py``): the outcomes.

A cycle runs under the cache's lock and does no I/O; it ends in an ``Outcome``, which the worker's
loop then finishes (binds, reports, writes a PodGroup's condition) off the lock:

* ``Binding``: the pod is assumed on a node; its binding cycle runs Permit's wait, PreBind, Bind;
* ``Failure``: the pod goes back to the queue, reported (event, PodScheduled condition), maybe after
  a synchronous preemption (``preparation``);
* ``Dropped``: the pod left scheduling (deleted, already assigned, its profile gone);
* ``GroupOutcome``: a PodGroup cycle's members' outcomes and the group's condition.

``Attempt`` is one pod's scheduling algorithm as far as it went, which the cycle, the PodGroup cycle
and the shadow profiles (``scheduler/shadow_cycle.py``) read. They live here, apart from the
``Scheduler``, so that those modules can use them without importing the cycle.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import numpy as np

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.decision import DecisionRecord
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.runtime import Framework
from scheduler.framework.status import Status
from scheduler.framework.types import QueuedPodInfo
from scheduler.model import Pod
from scheduler.model.podgroup import PodGroup

__all__ = ["Attempt", "Binding", "Dropped", "Failure", "GroupOutcome", "Outcome", "ScheduleResult"]


@dataclass(frozen=True, slots=True)
class ScheduleResult:
    node: str
    evaluated_nodes: int
    feasible_nodes: int


@dataclass(slots=True)
class Binding:
    info: QueuedPodInfo
    framework: Framework
    state: CycleState
    assumed: Pod
    result: ScheduleResult
    started: float
    permit_wait: float = 0.0
    permit_plugin: str = ""
    decision: DecisionRecord | None = None      # kept for a pod that asked for it (EXPLAIN_ANNOTATION)
    nominated: bool = False     # the binding cycle set its nominatedNodeName (NominatedNodeNameForExpectation)


@dataclass(slots=True)
class Failure:
    info: QueuedPodInfo
    framework: Framework
    status: Status
    message: str
    started: float
    nominated_node: str | None = None
    error: bool = False
    decision: DecisionRecord | None = None
    # PostFilter's ``prepare`` (synchronous preemption), awaited before the failure is handled;
    # ``message_if_failed`` words the failure when it returns PostFilter's error.
    preparation: Callable[[], Awaitable[str]] | None = None
    message_if_failed: Callable[[str], str] | None = None


@dataclass(slots=True)
class Dropped:
    """The pod left scheduling: deleted, already assigned, or its profile is gone."""

    info: QueuedPodInfo
    why: str


@dataclass(slots=True)
class GroupOutcome:
    """A PodGroup cycle's result (``scheduler/podgroup_cycle.py``): each member's outcome, and the
    group's ``PodGroupInitiallyScheduled`` condition to write: ``condition`` at once (the group
    failed), ``on_bound`` once every Binding went through; None when it would not change."""

    group: PodGroup
    members: list[Binding | Failure | Dropped] = field(default_factory=list)
    condition: dict[str, object] | None = None
    on_bound: dict[str, object] | None = None
    # Whether a later cycle found the group feasible meanwhile (its True condition is on its way,
    # and True is terminal): ``condition`` is then not written. The True-never-regresses rule is
    # checked when a cycle computes the condition; this checks it again when the write is made,
    # after this cycle's failure reports, which a later cycle's binds and True write can overtake.
    superseded: Callable[[], bool] | None = None


Outcome = Binding | Failure | Dropped | GroupOutcome


@dataclass(slots=True)
class Attempt:
    """One pod's scheduling algorithm, as far as it went: the node (None when none fits), the
    status and diagnosis, the counts its messages and metrics need, and what Score computed."""

    node: str | None = None
    status: Status = field(default_factory=Status)
    diagnosis: Diagnosis = field(default_factory=Diagnosis)
    evaluated: int = 0
    feasible: int = 0
    num_all_nodes: int = 0
    # (rows, totals, per-plugin normalised scores) of the Score run, kept for a decision record.
    scored: tuple[np.ndarray, np.ndarray, dict[str, np.ndarray], int] | None = None
