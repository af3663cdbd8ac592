"""Workload-aware preemption: a gang preempts as a unit, and a victim is a unit too (upstream 1.37's
``pkg/scheduler/framework/preemption/podgrouppreemption.go`` and ``types.go``, which DefaultPreemption
runs for a PodGroup when ``GenericWorkload`` is on).

A **victim** is what preemption may take away at once (``Victim``):

* a pod that names no PodGroup, or one whose group's ``disruptionMode`` is ``Single`` (the API's
  default), is a victim of its own;
* the pods of a group whose ``disruptionMode`` is ``All`` are *one* victim: every scheduled member,
  on whatever node (``cluster_victims``), so a group is never left half-evicted.

A grouped pod's priority is its PodGroup's ``priority`` (``GetPodPriority``). Victims are ordered most
important first (``more_important``: higher priority; a PodGroup before a lone pod; lone pods by
earlier start; groups by more members, then earlier start).

The **preemptor** is the gang (``preempt``, which ``scheduler/podgroup_cycle.py`` calls when its
PodGroup cycle misses the quorum), and its domain is the whole cluster::

    policy Never?             ─► "not eligible due to preemptionPolicy=Never."  (Unschedulable)
    a nominated member's node has a lower-priority pod terminating by preemption
                              ─► the ongoing preemption: keep the nominations (Success)
    victims: priority < the group's          none ─► "No preemption victims found for incoming
                                                      preemptor" (Unschedulable)
    remove them all (a what-if on the cache) ─► place the gang (``place``): no quorum ─► its status
    reprieve, budget-violating victims first, most important first: add the victim back and run
                  each placed member's filters on its node in placement order (each member counted
                  once it passes); any failure takes the victim out again: it is preempted
    result: each placed member nominated to its node, the victims to evict (``GroupPreemption``)

The preemption policy is the group's ``spec.preemptionPolicy`` with ``PodGroupPreemptionPolicy`` on
(``PreemptLowerPriority`` when unset); with it off, ``Never`` if any member says ``Never``
(``resolvePreemptionPolicy``). DefaultPreemption carries the result out (``preempt_group``).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.interfaces import FilterRunner
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod, PodDisruptionBudget
from scheduler.model.podgroup import PodGroup
from scheduler.plugins.budgets import breaks_budget

if TYPE_CHECKING:
    from scheduler.cache import Snapshot, WhatIf

__all__ = ["GENERIC_WORKLOAD", "NOT_ELIGIBLE_WORKLOAD", "NO_VICTIMS_GROUP", "POD_GROUP_PREEMPTION_POLICY",
           "WAITING_GROUP", "Assignment", "GroupLookup", "GroupPreemption", "Victim", "assignment",
           "cluster_victims", "is_disruption_mode_all", "more_important", "node_victims", "order_victims",
           "pod_priority", "preempt", "resolve_preemption_policy", "victims_with_pdb_violation"]

GENERIC_WORKLOAD = "GenericWorkload"
POD_GROUP_PREEMPTION_POLICY = "PodGroupPreemptionPolicy"
# defaultpreemption.go: a gang member's own PostFilter leaves preemption to its PodGroup's.
NOT_ELIGIBLE_WORKLOAD = "not eligible due to workload aware preemption enabled"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NO_VICTIMS_GROUP = "No preemption victims found for incoming preemptor"
WAITING_GROUP = "waiting for the preemption for this pod group to be finished"
PREEMPT_NEVER = "Never"
PREEMPT_LOWER_PRIORITY = "PreemptLowerPriority"

GroupLookup = Callable[[str, str], PodGroup | None]


def _start(p: Pod) -> str:
    # A pod that has not started counts as starting now: later than any recorded time.
    return p.start_time or "~"


@dataclass(frozen=True, slots=True)
class Victim:
    """One unit of preemption: a lone pod, or every scheduled pod of a ``disruptionMode: All`` group."""

    pods: tuple[Pod, ...]
    priority: int

    @property
    def is_pod_group(self) -> bool:
        """Upstream's ``IsPodGroup``: the unit's pods belong to a PodGroup (a ``Single`` group's pod
        counts too, as upstream counts it)."""
        return bool(self.pods) and bool(self.pods[0].scheduling_group)

    @property
    def earliest_start(self) -> str:
        return min(_start(p) for p in self.pods)

    @property
    def uids(self) -> tuple[str, ...]:
        return tuple(p.uid for p in self.pods)


def is_disruption_mode_all(group: PodGroup | None) -> bool:
    return group is not None and group.disruption_mode == "All"


def _group(pod: Pod, groups: GroupLookup | None) -> PodGroup | None:
    if groups is None or not pod.scheduling_group:
        return None
    return groups(pod.namespace, pod.scheduling_group)


def pod_priority(pod: Pod, groups: GroupLookup | None) -> int:
    """``GetPodPriority``: a grouped pod preempts and is preempted at its PodGroup's priority."""
    group = _group(pod, groups)
    return group.priority if group is not None else pod.priority


def cluster_victims(snapshot: Snapshot, groups: GroupLookup | None) -> list[Victim]:
    """``getCrossNodesVictims``: every pod of the cluster as a victim unit, a ``disruptionMode: All``
    group's pods (on any node) as one unit, in node order."""
    units: list[Victim] = []
    whole: dict[tuple[str, str], list[Pod]] = {}
    order: list[tuple[str, str]] = []
    for row in snapshot.node_order.tolist():
        for p in list(snapshot.node_info(int(row)).pods.values()):
            group = _group(p, groups)
            if group is None or not is_disruption_mode_all(group):
                units.append(Victim((p,), pod_priority(p, groups)))
                continue
            key = (group.namespace, group.name)
            if key not in whole:
                whole[key] = []
                order.append(key)
            whole[key].append(p)
    for key in order:
        g = groups(*key) if groups is not None else None
        units.append(Victim(tuple(whole[key]), g.priority if g is not None else whole[key][0].priority))
    return units


def node_victims(pods: Sequence[Pod], groups: GroupLookup | None,
                 scheduled: Callable[[PodGroup], Sequence[Pod]]) -> list[Victim]:
    """The victim units a node's ``pods`` belong to (``SelectVictimsOnNode``'s DomainVictims): a lone pod
    or ``Single`` member alone, a ``disruptionMode: All`` group with every one of its ``scheduled``
    pods, wherever they run."""
    units: list[Victim] = []
    seen: set[tuple[str, str]] = set()
    for p in pods:
        group = _group(p, groups)
        if group is None or not is_disruption_mode_all(group):
            units.append(Victim((p,), pod_priority(p, groups)))
            continue
        key = (group.namespace, group.name)
        if key in seen:
            continue
        seen.add(key)
        members = tuple(scheduled(group)) or (p,)
        units.append(Victim(members, group.priority))
    return units


def more_important(v: Victim) -> tuple[int, int, int, str]:
    """Sort key, most important first (``MoreImportantVictim`` with GenericWorkload on): higher
    priority; a PodGroup before a lone pod; lone pods by earlier start; groups by more pods, then
    earlier start. Sorting is stable, so equal units keep the cluster's node and pod order."""
    group = v.is_pod_group
    return (-v.priority, 0 if group else 1, -len(v.pods) if group else 0, v.earliest_start)


def victims_with_pdb_violation(victims: Sequence[Victim], pdbs: Sequence[PodDisruptionBudget]
                               ) -> tuple[list[tuple[Victim, int]], list[Victim]]:
    """``FilterVictimsWithPDBViolation`` over units (order kept): the units with at least one pod whose
    eviction would break a budget (with how many of its pods do), and the rest."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[tuple[Victim, int]] = []
    fine: list[Victim] = []
    for v in victims:
        count = sum(breaks_budget(p, pdbs, allowed) for p in v.pods)
        if count:
            violating.append((v, count))
        else:
            fine.append(v)
    return violating, fine


def order_victims(victims: Sequence[Victim], preemptor_priority: int, pdbs: Sequence[PodDisruptionBudget]
                  ) -> list[tuple[Victim, int]]:
    """``prepareDomainVictims``: the units of strictly lower priority, most important first, the
    budget-violating ones (with their violation counts) before the others."""
    potential = sorted((v for v in victims if v.priority < preemptor_priority), key=more_important)
    violating, fine = victims_with_pdb_violation(potential, pdbs)
    return violating + [(v, 0) for v in fine]


def resolve_preemption_policy(group: PodGroup, members: Sequence[Pod], policy_gate: bool) -> str:
    """``resolvePreemptionPolicy``: the PodGroup's own policy with ``PodGroupPreemptionPolicy`` on
    (the default when a group made with the gate off has none); else ``Never`` if any member says so."""
    if policy_gate:
        return group.preemption_policy or PREEMPT_LOWER_PRIORITY
    if any(p.preemption_policy == PREEMPT_NEVER for p in members):
        return PREEMPT_NEVER
    return PREEMPT_LOWER_PRIORITY


@dataclass(frozen=True, slots=True)
class Assignment:
    """One member's proposed placement: the pod (``node_name`` set), the cycle state its PreFilter
    filled, and the node (``fwk.ProposedAssignment``)."""

    pod: Pod
    state: CycleState
    node: str


# Places the gang on the snapshot as the what-if leaves it (victims removed), member by member, each
# counted in the what-if once placed, and takes the members out again before returning: the placed
# members in order, and Success, or the status of a gang that misses its quorum even so.
PlaceFunc = Callable[["WhatIf"], tuple[list[Assignment], Status]]


@dataclass(slots=True)
class GroupPreemption:
    """The outcome: the members' nominated nodes (by uid), the victims to evict (most important
    first), how many of their pods break a budget; ``ongoing`` when an earlier preemption is still
    under way and the nominations are kept as they are."""

    nominations: dict[str, str] = field(default_factory=dict)
    victims: list[Victim] = field(default_factory=list)
    num_pdb_violations: int = 0
    ongoing: bool = False

    @property
    def pods(self) -> list[Pod]:
        return [p for v in self.victims for p in v.pods]

    @property
    def num_pod_group_disruptions(self) -> int:
        """The victims that are (or belong to) a PodGroup (``isGroupVictim``)."""
        return sum(1 for v in self.victims if len(v.pods) > 1 or v.is_pod_group)


def _ongoing(snapshot: Snapshot, members: Sequence[Pod], nominated: Mapping[str, str], priority: int,
             groups: GroupLookup | None) -> bool:
    """``isOngoingPreemption``: a member's nominated node still has a lower-priority pod that the
    scheduler's preemption is terminating."""
    for node in {nominated[p.uid] for p in members if nominated.get(p.uid)}:
        row = snapshot.row_of(node)
        if row is None:
            continue
        for p in snapshot.node_info(row).pods.values():
            if p.deleting and p.preempted_by_scheduler and pod_priority(p, groups) < priority:
                return True
    return False


def preempt(snapshot: Snapshot, fwk: FilterRunner, group: PodGroup, members: Sequence[Pod],
            place: PlaceFunc, *, pdbs: Sequence[PodDisruptionBudget], groups: GroupLookup | None,
            policy_gate: bool, nominated: Mapping[str, str],
            on_evaluated: Callable[[Status, float], None] | None = None) -> tuple[GroupPreemption | None, Status]:
    """``PodGroupEvaluator.Preempt`` without the actuation (the module docstring); call with the
    cache's lock held. ``members`` are the gang's pods this cycle tries to place, ``nominated`` their
    current nominated nodes. ``on_evaluated`` hears how the evaluation (placing the gang without
    the victims, then reprieving them) ended and how long it took, as upstream's ``evaluate`` times
    it: not when the preemptor is not eligible, a preemption is ongoing, or there are no victims."""
    if resolve_preemption_policy(group, members, policy_gate) == PREEMPT_NEVER:
        return None, Status.unschedulable(NOT_ELIGIBLE_NEVER)
    priority = group.priority
    if _ongoing(snapshot, members, nominated, priority, groups):
        # buildCurrentNominatingInfos: every member keeps the node it has ("" for none).
        return GroupPreemption({p.uid: nominated.get(p.uid, "") for p in members}, ongoing=True), SUCCESS
    ordered = order_victims(cluster_victims(snapshot, groups), priority, pdbs)
    if not ordered:
        return None, Status.unschedulable(NO_VICTIMS_GROUP)
    started = time.perf_counter()
    result, status = _evaluate(snapshot, fwk, ordered, place)
    if on_evaluated is not None:
        on_evaluated(status, time.perf_counter() - started)
    return result, status


def _evaluate(snapshot: Snapshot, fwk: FilterRunner, ordered: Sequence[tuple[Victim, int]], place: PlaceFunc
              ) -> tuple[GroupPreemption | None, Status]:
    """``selectVictimsOnDomain``: place the gang with every potential victim gone, then reprieve."""
    out = GroupPreemption()
    with snapshot.what_if() as w:
        for v, _ in ordered:
            for p in v.pods:
                w.remove(p, p.node_name)
        placed, status = place(w)
        if not status.is_success():
            return None, status
        for v, violations in ordered:
            if not _reprieve(snapshot, fwk, w, v, placed):
                out.victims.append(v)
                out.num_pdb_violations += violations
    out.nominations = {a.pod.uid: a.node for a in placed}
    return out, SUCCESS


def _reprieve(snapshot: Snapshot, fwk: FilterRunner, w: WhatIf, v: Victim, placed: Sequence[Assignment]) -> bool:
    """``reprieveVictim``: add the unit back; it stays if every placed member, in placement order, still
    passes its filters on its node (each counted there once it passes, and taken out again after)."""
    for p in v.pods:
        w.add(p, p.node_name)
    counted: list[Assignment] = []
    fits = True
    for a in placed:
        row = snapshot.row_of(a.node)
        if row is None or not fwk.run_filter_with_nominated_pods(a.state, a.pod, snapshot, row,
                                                                 pods_changed=True).is_success():
            fits = False
            break
        w.add(a.pod, a.node)
        counted.append(a)
    for a in reversed(counted):
        w.remove(a.pod, a.node)
    if not fits:
        for p in v.pods:
            w.remove(p, p.node_name)
    return fits


def assignment(pod: Pod, state: CycleState, node: str) -> Assignment:
    return Assignment(pod.with_fields(node_name=node), state, node)

