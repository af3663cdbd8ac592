"""The PodGroup scheduling cycle (upstream's ``schedule_one_podgroup.go`` and ``algorithm_podgroup.go``,
1.37): a gang is placed as one entity, on one snapshot, all or nothing.

::

    pop (a member of a gang PodGroup) ─► pop_group: the group's other pending members, in QueueSort order
        │
        ▼  the algorithm (place_members(cycle=True)), under the cache lock, member by member,
        │  each seeing the members assumed before it:
    schedule_pod ─┬─► assume ─► Reserve ─► Permit   (CycleState.pod_group_cycle set: GangScheduling
                  │                                   answers from the cycle's count, Wait until the
                  │                                   member that meets minCount, which it allows;
                  │                                   its first Wait activates the group's
                  │                                   unscheduled members, in flight: marked)
                  └─ fits nowhere ─► the member's own PostFilter: a nominated node holds it there
                     (requiresPreemption), else it is a failed member (each node's first rejection
                     kept: GroupDiagnosis); an Error anywhere stops the algorithm
        │
        ▼
    a member's Permit allowed the group?
        yes ─► (none needing preemption before it) each member that fits runs Permit again,
               outside the group's cycle (prepareForBindingCycle), and goes to its binding
               cycle; they bind concurrently; the failed members fail as they are, each with
               its own FitError, no PodGroup PostFilter (marked by the Permit's activation, they
               go to backoffQ, so a left-over member is soon tried again alone: see below);
               PodGroupInitiallyScheduled=True once the binds are through
        no, none placed, but minCount scheduled already (stragglers) ─► the PodGroup's PostFilter
               over them (the scheduled members count towards minCount in its simulation);
               each fails with its own FitError, nominated when a placement was found;
               PodGroupInitiallyScheduled=False (Unschedulable) unless it is True, or a
               cycle of ours found the group feasible (True on its way)
        no  ─► Unreserve and forget every member held in this cycle (nothing stays reserved);
               the PodGroup's PostFilter (workload-aware preemption); every member fails with
               the group's per-node diagnosis (FailedScheduling), nominated to its node when
               the group waits on preemption; PodGroupInitiallyScheduled=False, reason
               Unschedulable (SchedulerError after an Error), with the same message; the
               activation's marks are dropped: the members wait for their rejectors' events
               (upstream's go to backoffQ and retry at the backoff's pace)

Two gangs that each need the whole cluster never deadlock: a cycle holds the cache lock from the
first member to the last and releases every reservation when the quorum is not met, so at most one
of them is placed and the other holds nothing while it waits (``tests/test_podgroup_cycle.py``).

``what_if`` runs the same placement (``place_members``) hypothetically, for ``explain`` and
``capacity``: the members are moved on the cache's rows in a ``WhatIf`` instead of assumed, and
everything is undone before the lock is let go; the answer (``GroupWhatIf``) is whether the quorum
would be met, where each member would go, and otherwise the same per-node diagnosis.

When the group is rejected and the profile runs DefaultPreemption, the gang preempts as a unit
(workload-aware preemption, ``scheduler/plugins/podgrouppreemption.py``; upstream's
``podGroupPostFilter``): the victims are chosen so that the whole gang fits, each member the
simulation placed is nominated to its node, and DefaultPreemption evicts the victims off the cycle
while the members wait in PreEnqueue. The members still fail this cycle (nothing is reserved); their
next cycle, once the victims are gone, places the gang on its nominated nodes. A member's own
PostFilter runs (upstream's ``runAllPostFilters``), but DefaultPreemption's never preempts for a
gang member (``not eligible due to workload aware preemption enabled``).

Metrics (with the GenericWorkload gate, ``Metrics.register_generic_workload``), where upstream's
``podGroupCycle`` and ``submitPodGroupAlgorithmResult`` record them:
``scheduler_podgroup_scheduling_algorithm_duration_seconds`` once the members are placed or not,
and one ``scheduler_podgroup_schedule_attempts_total{result,profile}`` with its
``scheduler_podgroup_scheduling_attempt_duration_seconds`` when the outcome is submitted (the
members' binding cycles still to run): ``scheduled``, ``unschedulable``, ``waiting_on_preemption``
(the group was rejected, but a PostFilter found a placement: victims are going), or ``error``. The
PostFilter counts ``scheduler_workload_preemption_attempts_total{result}`` and times its evaluation
(``scheduler_preemption_evaluation_duration_seconds{preemptor="podgroup"}``); DefaultPreemption's
``preempt_group`` records the rest of the workload-preemption metrics as it carries it out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scheduler import features
from scheduler.cache import Cache, Snapshot, WhatIf
from scheduler.cache.podgroups import PodGroupStore
from scheduler.cycle import Scheduler
from scheduler.framework.cycle_state import CycleState, PodGroupCycleState
from scheduler.framework.diagnosis import NO_NODES_AVAILABLE, fit_error_message
from scheduler.framework.group_diagnosis import GroupDiagnosis
from scheduler.framework.runtime import Framework
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.framework.types import QueuedPodInfo
from scheduler.model import Pod
from scheduler.model.podgroup import POD_GROUP_INITIALLY_SCHEDULED, PodGroup
from scheduler.outcomes import Attempt as _Attempt
from scheduler.outcomes import Binding, Dropped, Failure, GroupOutcome, ScheduleResult
from scheduler.plugins import podgrouppreemption as wap
from scheduler.plugins.defaultpreemption import NAME as DEFAULT_PREEMPTION
from scheduler.plugins.defaultpreemption import DefaultPreemption
from scheduler.plugins.gangscheduling import NAME as GANG_SCHEDULING
from scheduler.plugins.gangscheduling import WAITING_FOR_MIN_COUNT

__all__ = ["REASON_SCHEDULED", "REASON_UNSCHEDULABLE", "GroupPlacement", "GroupWhatIf", "PodGroupCycle",
           "is_gang_member", "place_members", "schedule_pod_group", "scheduled_message", "what_if"]

# The reasons of PodGroupInitiallyScheduled (staging/src/k8s.io/api/scheduling/v1beta1/types.go
# names Unschedulable and SchedulerError for False).
REASON_SCHEDULED = "Scheduled"
REASON_UNSCHEDULABLE = "Unschedulable"
# podGroupSchedulingDefaultAlgorithm's status when a member that needs preemption came before the
# member whose Permit allowed the group.
WAITING_ON_PREEMPTION = "pod group is waiting for preemption to complete"


class PodGroupCycle:
    """The hook ``Scheduler.group_cycle`` calls for every pod that names a PodGroup: the PodGroup
    cycle's outcome for a gang member, None for any other pod (it is scheduled alone)."""

    def __init__(self, scheduler: Scheduler, store: PodGroupStore) -> None:
        self.scheduler = scheduler
        self.store = store

    def __call__(self, fwk: Framework, info: QueuedPodInfo) -> GroupOutcome | None:
        group = self.store.get(info.pod.namespace, info.pod.scheduling_group)
        if group is None or not is_gang_member(fwk, info.pod, group):
            return None
        return schedule_pod_group(self.scheduler, fwk, info, group, self.store)

    @classmethod
    def install(cls, scheduler: Scheduler, store: PodGroupStore) -> PodGroupCycle:
        hook = cls(scheduler, store)
        scheduler.group_cycle = hook
        return hook


def condition(status: str, reason: str, message: str, group: PodGroup | None = None) -> dict[str, object]:
    """The condition to write, as upstream's ``updatePodGroupCondition`` builds it: its
    ``observedGeneration`` is the PodGroup's generation, and its lastTransitionTime moves only when
    the status does (a reason or message change keeps it), as ``apimeta.SetStatusCondition`` does
    (``TestUpdatePodGroupCondition``: "... preserves LastTransitionTime")."""
    have = group.condition(POD_GROUP_INITIALLY_SCHEDULED) if group is not None else None
    since = (have.last_transition_time if have is not None and have.status == status and have.last_transition_time
             else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    out: dict[str, object] = {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": status, "reason": reason,
                              "message": message, "lastTransitionTime": since}
    if group is not None and group.generation:
        out["observedGeneration"] = group.generation
    return out


def _changes(group: PodGroup, status: str, reason: str, message: str) -> bool:
    """Whether upstream's ``updatePodGroupCondition`` writes the condition: never from True to
    anything else (True is terminal: the API doc says it never reverts to False), and only when
    ``SetStatusCondition`` changes something (status, reason, message or observedGeneration), so a
    True condition gets a new message, and an identical one is not written again."""
    have = group.condition(POD_GROUP_INITIALLY_SCHEDULED)
    if have is None:
        return True
    if have.status == "True" and status != "True":
        return False
    return ((have.status, have.reason, have.message, have.observed_generation)
            != (status, reason, message, group.generation))


def _observe(s: Scheduler, fwk: Framework, result: str, started: float) -> None:
    """One PodGroup attempt: upstream's ``PodGroupScheduled`` / ``PodGroupUnschedulable`` /
    ``PodGroupWaitingOnPreemption`` / ``PodGroupScheduleError`` (``metrics/profile_metrics.go``)."""
    m = s.metrics
    if m is None or m.podgroup_schedule_attempts is None or m.podgroup_scheduling_attempt_duration is None:
        return
    m.podgroup_schedule_attempts.labels(result, fwk.profile_name).inc()
    m.podgroup_scheduling_attempt_duration.labels(result, fwk.profile_name).observe(time.perf_counter() - started)


def is_gang_member(fwk: Framework, pod: Pod, group: PodGroup | None) -> bool:
    """Whether ``pod`` is scheduled in a PodGroup cycle: its group exists and is a gang. The cycle
    is installed with the GenericWorkload gate, and (as upstream's queue hands a PodGroup out as one
    entity under that gate) it does not depend on the profile's plugins: the gang's quorum is
    GangScheduling's Permit's to enforce, and a profile without it places the group on one snapshot
    all the same."""
    return group is not None and group.is_gang and bool(pod.scheduling_group)


def _reject_nodes(diag: GroupDiagnosis, a: _Attempt, snapshot: Snapshot) -> None:
    """Each node's reason for refusing a member that fit nowhere (its first reason)."""
    nts = a.diagnosis.node_to_status
    if a.diagnosis.pre_filter_msg:
        for row in snapshot.node_order.tolist():
            diag.reject(snapshot.node_info(row).name, a.diagnosis.pre_filter_msg)
        return
    for row in snapshot.node_order.tolist():
        st = nts.get(row)
        if st is not None and st.reasons:
            diag.reject(snapshot.node_info(row).name, st.reasons[0])
    if not nts and a.status.reasons:
        for row in snapshot.node_order.tolist():
            diag.reject(snapshot.node_info(row).name, a.status.reasons[0])


def _rejected(status: Status) -> _Attempt:
    """A member Reserve or Permit rejected: a FitError over one node, as ``schedule_one`` words it."""
    a = _Attempt(status=status, num_all_nodes=1)
    a.diagnosis.node_to_status.absent = status
    if status.is_rejected():
        a.diagnosis.unschedulable_plugins.add(status.plugin)
    return a


class _Placer(Protocol):
    """How a pass of ``place_members`` holds a placed member: for real (the cycle: assumed in the
    cache, reserved), or hypothetically (``what_if``: moved on the cache's rows in a ``WhatIf``)."""

    def assume(self, pod: Pod, node: str) -> Pod: ...

    def forget(self, pod: Pod) -> None: ...

    def reserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> Status: ...

    def unreserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> None: ...


class _Assume:
    """The cycle's placer: the cache's Assume and Forget, the profile's Reserve and Unreserve."""

    def __init__(self, cache: Cache) -> None:
        self.cache = cache

    def assume(self, pod: Pod, node: str) -> Pod:
        return self.cache.assume_pod(pod, node)

    def forget(self, pod: Pod) -> None:
        self.cache.forget_pod(pod)

    def reserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        return fwk.run_reserve(state, pod, node)

    def unreserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> None:
        fwk.run_unreserve(state, pod, node)


class _Hypothetical:
    """``what_if``'s placer: a member is moved onto its node's row in a ``WhatIf`` (the cache's
    entries, its assumed set and its TTLs never see it), and Reserve runs, so the next member sees
    the claims and volumes it would allocate in the plugins' in-memory stores; everything is undone
    before the cache's lock is let go. GangScheduling takes no part: its Reserve does nothing and
    its Unreserve rejects the group's members parked at Permit, which are real pods."""

    def __init__(self, w: WhatIf) -> None:
        self.w = w

    def assume(self, pod: Pod, node: str) -> Pod:
        placed = pod.with_fields(node_name=node)
        self.w.add(placed, node)
        return placed

    def forget(self, pod: Pod) -> None:
        self.w.remove(pod, pod.node_name or "")

    def reserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> Status:
        for p in fwk.reserve:
            if p.name == GANG_SCHEDULING:
                continue
            s = p.reserve(state, pod, node)
            if not s.is_success():
                return s.with_plugin(p.name)
        return SUCCESS

    def unreserve(self, fwk: Framework, state: CycleState, pod: Pod, node: str) -> None:
        for p in reversed(fwk.reserve):
            if p.name != GANG_SCHEDULING:
                p.unreserve(state, pod, node)


@dataclass(slots=True)
class GroupPlacement:
    """One pass of a PodGroup's members over one snapshot: what the cycle and ``what_if`` share.

    ``before`` members were scheduled already (assigned, or assumed by the cache); ``placed`` are
    held (assumed and reserved) on their nodes, ``failed`` fit nowhere (or Reserve or Permit refused
    them), ``dropped`` are deleting or already in the cache; ``diag`` is the per-node diagnosis.

    The cycle's pass (``place_members(cycle=True)``) is upstream's
    ``podGroupSchedulingDefaultAlgorithm``, and fills the rest: a member that fits nowhere runs its
    own PostFilter, and one it nominates a node for is held there (``preempting``: upstream's
    ``requiresPreemption``, so the next members see it); each held member runs Permit
    (``permits``, aligned with ``placed``); ``outcome`` is the group's: ``success`` once a member's
    Permit allowed it, ``waiting`` (on preemption) when a member needing preemption came first,
    else ``unschedulable``; ``error`` is the first Error, where the pass stopped."""

    group: PodGroup
    before: int
    placed: list[tuple[QueuedPodInfo, CycleState, Pod, _Attempt]] = field(default_factory=list)
    failed: list[tuple[QueuedPodInfo, CycleState, _Attempt, Snapshot]] = field(default_factory=list)
    dropped: list[QueuedPodInfo] = field(default_factory=list)
    diag: GroupDiagnosis = field(default_factory=GroupDiagnosis)
    preempting: dict[str, str] = field(default_factory=dict)
    permits: list[Status] = field(default_factory=list)
    permit_rejected: list[Status] = field(default_factory=list)
    outcome: str = "unschedulable"
    error: Status | None = None

    @property
    def scheduled(self) -> int:
        """The members scheduled: before the pass, and placed by it (not those held for preemption)."""
        return self.before + len(self.placed) - len(self.preempting)

    @property
    def quorum(self) -> bool:
        """At least ``minCount`` of the group scheduled (``what_if``'s answer)."""
        return self.scheduled >= self.group.min_count

    def diagnosis(self, members: int) -> str:
        """The per-node message a failed cycle writes (``group_diagnosis``), for ``members`` pods."""
        return self.diag.message(self.group.key, placed=self.scheduled, members=members,
                                 min_count=self.group.min_count)


def place_members(s: Scheduler, fwk: Framework, group: PodGroup, infos: Sequence[QueuedPodInfo],
                  store: PodGroupStore, placer: _Placer, *, explain: bool = False,
                  cycle: bool = False) -> GroupPlacement:
    """Place ``infos`` member by member on the cache (its lock held by the caller), each member
    seeing those placed before it; a member that fits nowhere keeps each node's first reason.
    ``explain``: the search does not move the profile's round-robin start (``Scheduler.explain``'s).
    ``cycle``: the PodGroup cycle's algorithm (``GroupPlacement``): PostFilter and Permit run for
    each member, and the pass stops at the first Error."""
    scheduled = store.scheduled(group.namespace, group.name, lambda uid: s.cache.get_pod(uid) is not None)
    out = GroupPlacement(group, len(scheduled))
    diag = out.diag
    needs_preemption = False
    # The cycle's state, shared by its members (upstream's podGroupCycleState).
    shared = PodGroupCycleState(out.before) if cycle else None
    for info in infos:
        pod = info.pod
        if pod.deleting or s.cache.get_pod(pod.uid) is not None:
            out.dropped.append(info)
            continue
        snapshot = s.cache.snapshot()
        if not diag.nodes:
            diag.nodes = tuple(snapshot.node_names(snapshot.node_order))
        state = fwk.new_cycle_state()
        if shared is not None:
            shared.scheduled = out.before + len(out.placed)
            state.pod_group_cycle = shared
        a = s._schedule_pod(fwk, state, pod, snapshot, explain=explain)
        node = a.node
        if node is None:
            _reject_nodes(diag, a, snapshot)
            if cycle:
                node = _member_post_filter(fwk, state, pod, a, snapshot)
            if node is None:
                out.failed.append((info, state, a, snapshot))
                if cycle and a.status.code == Code.ERROR:
                    out.error = a.status
                    break
                continue
        assumed = placer.assume(pod, node)
        r = placer.reserve(fwk, state, assumed, node)
        if r.is_success() and cycle:
            assert state.pod_group_cycle is not None
            state.pod_group_cycle.scheduled += 1
            r, _ = fwk.run_permit(state, assumed, node)
            # This Permit only decides the group: the binding cycle's is run when it is prepared.
            fwk.waiting_pods.discard(pod.uid)
            if not (r.is_success() or r.is_wait()):
                out.permit_rejected.append(r)
        if not (r.is_success() or r.is_wait()):
            placer.unreserve(fwk, state, assumed, node)
            placer.forget(assumed)
            diag.reject(node, r.message())
            out.failed.append((info, state, _rejected(r), snapshot))
            if cycle and r.code == Code.ERROR:
                out.error = r
                break
            continue
        out.placed.append((info, state, assumed, a))
        if a.node is None:
            out.preempting[pod.uid] = node
        else:
            diag.place(node)
        if cycle:
            out.permits.append(r)
            needs_preemption = needs_preemption or a.node is None
            if r.is_success():
                # A member's Permit allowed the group (GangScheduling's, once the quorum is met).
                out.outcome = "waiting" if needs_preemption else "success"
    return out


def _member_post_filter(fwk: Framework, state: CycleState, pod: Pod, a: _Attempt, snapshot: Snapshot) -> str | None:
    """A member's own PostFilter in the PodGroup cycle (upstream's ``runAllPostFilters``): the node it
    nominates, where the member is held as if it fit (DefaultPreemption refuses every gang member:
    the group preempts as a unit, ``_post_filter``); None when it nominates none."""
    if a.status.code == Code.ERROR or a.status.message() == NO_NODES_AVAILABLE or not fwk.post_filter:
        return None
    result, ps = fwk.run_post_filter(state, pod, a.diagnosis.node_to_status, snapshot)
    if ps.reasons:
        a.diagnosis.post_filter_msg = ps.message()
    if result is None or not result.nominated_node_name:
        return None
    return result.nominated_node_name


def _release(p: GroupPlacement, fwk: Framework, placer: _Placer) -> None:
    """Unreserve and forget every member the pass placed, newest first: nothing stays held."""
    for _info, state, assumed, _a in reversed(p.placed):
        placer.unreserve(fwk, state, assumed, assumed.node_name or "")
        placer.forget(assumed)


def schedule_pod_group(s: Scheduler, fwk: Framework, first: QueuedPodInfo, group: PodGroup,
                       store: PodGroupStore) -> GroupOutcome:
    """Place ``first``'s whole gang on one snapshot, or none of it (the module docstring). While it
    runs, members that arrive wait as the queue's ``pending`` pods (upstream's pendingPodGroupPods)."""
    s.queue.begin_group(group.namespace, group.name)
    try:
        return _schedule_pod_group(s, fwk, first, group, store)
    finally:
        s.queue.end_group(group.namespace, group.name)


def _nominated(s: Scheduler, preemption: wap.GroupPreemption | None, info: QueuedPodInfo, f: Failure) -> Failure:
    """PostFilter's nomination of a failed member, recorded now so the next cycles count it there."""
    node = preemption.nominations.get(info.uid, "") if preemption is not None else ""
    if node:
        s.queue.nominator.add(info.pod, node)
        f.nominated_node = node
    return f


def _actuate(fwk: Framework, group: PodGroup, preemption: wap.GroupPreemption | None, members: list[Pod]) -> None:
    """Evict a PodGroup preemption's victims (DefaultPreemption does it off the cycle), unless one
    is still going on the nominated nodes."""
    if preemption is not None and not preemption.ongoing:
        plugin = fwk.plugins_by_name.get(DEFAULT_PREEMPTION)
        if isinstance(plugin, DefaultPreemption):
            plugin.preempt_group(preemption, group, members, fwk)


def _mixed_scheduler_names(infos: Sequence[QueuedPodInfo]) -> str:
    """upstream's ``frameworkForPodGroup`` error when the group's queued pods do not all name one
    scheduler, with its words; ``""`` when they do."""
    name = infos[0].pod.scheduler_name
    for info in infos[1:]:
        if info.pod.scheduler_name != name:
            return ("all pods in a single pod group should have the same .spec.schedulerName set, "
                    f'got: "{info.pod.scheduler_name}" and "{name}"')
    return ""


def _schedule_pod_group(s: Scheduler, fwk: Framework, first: QueuedPodInfo, group: PodGroup,
                        store: PodGroupStore) -> GroupOutcome:
    infos = [first, *s.queue.pop_group(group.namespace, group.name)]
    mixed = _mixed_scheduler_names(infos)
    if mixed:
        # upstream's frameworkForPodGroup: a group whose queued pods name different schedulers (two
        # of this scheduler's profiles) is not scheduled; each pod fails with the error, through
        # its own profile, and is retried after its backoff.
        out = GroupOutcome(group)
        started = time.perf_counter()
        status = Status(Code.ERROR, (mixed,))
        for info in infos:
            out.members.append(s._group_failure(s.profiles.for_pod(info.pod) or fwk, info, status, mixed, started))
        return out
    infos.sort(key=fwk.queue_sort_key)
    # The members' nominations (a preemption's) are taken out of the nominator for the cycle, so that
    # no member counts another as already on a node: each is assumed, nominated again, or cleared
    # below. A member still tries its nominated node first (``Pod.nominated_node_name``).
    nominated = {i.uid: i.pod.nominated_node_name or s.queue.nominator.node_of(i.uid) or "" for i in infos}
    for i in infos:
        s.queue.nominator.delete(i.uid)
    out = GroupOutcome(group, superseded=lambda: store.was_feasible(group))
    started = time.perf_counter()
    placer = _Assume(s.cache)
    with s.cache.lock:
        p = place_members(s, fwk, group, infos, store, placer, cycle=True)
        if s.metrics is not None and s.metrics.podgroup_scheduling_algorithm_duration is not None:
            s.metrics.podgroup_scheduling_algorithm_duration.observe(time.perf_counter() - started)
        for info in p.dropped:
            s.queue.done(info.uid)
            out.members.append(Dropped(info, "deleting, or already assumed or assigned"))
        if len(p.dropped) == len(infos):
            # skipPodGroupPodSchedule left no pod: upstream runs no cycle, and writes nothing.
            return out
        if p.error is None and p.outcome == "success":
            _submit_feasible(s, fwk, group, p, out, store, started)
            return out
        if p.error is None and not p.placed and p.before >= group.min_count:
            # None of this cycle's members fits, but the group's quorum is scheduled already (a
            # straggler that came after it): upstream's algorithm leaves the group Unschedulable,
            # so its PodGroup PostFilter runs over these members, the scheduled ones counting
            # towards minCount, and each member fails with its own FitError.
            _submit_stragglers(s, fwk, group, p, out, nominated, store, started)
            return out
        # Rejected, or an Error: release every reservation this cycle made, newest first.
        _release(p, fwk, placer)
        _submit_rejected(s, fwk, group, p, infos, out, nominated, store, started)
        return out


def _submit_feasible(s: Scheduler, fwk: Framework, group: PodGroup, p: GroupPlacement, out: GroupOutcome,
                     store: PodGroupStore, started: float) -> None:
    """A member's Permit allowed the group (upstream's ``submitPodGroupAlgorithmResult`` with a
    Success status): each member that fits goes to its binding cycle once it is prepared, the
    others fail as they are, each with its own FitError (its own PostFilter ran in the
    algorithm). No PodGroup PostFilter runs for them: upstream's ``podGroupCycle`` runs
    workload-aware preemption only for an Unschedulable group. A member left over this way is
    tried again on its own rejectors' events, in a cycle of its own, where the group's scheduled
    members meet the quorum and its PostFilter may preempt for it (``_submit_stragglers``).
    Called with the cache lock held."""
    failed = list(p.failed)
    for (info, state, assumed, a), permit in zip(p.placed, p.permits, strict=True):
        s.queue.nominator.delete(info.uid)
        node = assumed.node_name or ""
        if info.uid in p.preempting:
            # It needs preemption but the group does not wait for one: upstream fails it (with its
            # Permit's message) and clears its nomination.
            fwk.run_unreserve(state, assumed, node)
            s.cache.forget_pod(assumed)
            out.members.append(s._group_failure(fwk, info, Status(Code.UNSCHEDULABLE, permit.reasons, permit.plugin),
                                                permit.message() or fit_error_message(a.num_all_nodes, a.diagnosis),
                                                started))
            continue
        # prepareForBindingCycle: the member leaves the PodGroup cycle and runs Permit again (it is
        # assumed and reserved already: the cycle holds it rather than release it and assume it
        # again). With the gang assumed whole, GangScheduling's Permit allows it at once.
        state.pod_group_cycle = None
        st, wait = fwk.run_permit(state, assumed, node)
        if st.is_success() or st.is_wait():
            out.members.append(Binding(info, fwk, state, assumed, ScheduleResult(node, a.evaluated, a.feasible),
                                       started, wait if st.is_wait() else 0.0, st.plugin if st.is_wait() else ""))
            continue
        fwk.run_unreserve(state, assumed, node)
        s.cache.forget_pod(assumed)
        failed.append((info, state, _rejected(st), s.cache.snapshot()))
    for info, state, a, snapshot in failed:
        out.members.append(s._failure(fwk, state, info, a, started, snapshot, run_post_filter=False))
    message = scheduled_message(p.scheduled, group.min_count)
    store.mark_feasible(group)
    if _changes(group, "True", REASON_SCHEDULED, message):
        out.on_bound = condition("True", REASON_SCHEDULED, message, group)
    _observe(s, fwk, "scheduled", started)


def _submit_stragglers(s: Scheduler, fwk: Framework, group: PodGroup, p: GroupPlacement, out: GroupOutcome,
                       nominated: dict[str, str], store: PodGroupStore, started: float) -> None:
    """No member of this cycle fits, but ``minCount`` of the group are scheduled already: upstream's
    algorithm status stays Unschedulable (no member reached Permit), so ``podGroupCycle`` runs the
    PodGroup's PostFilter (workload-aware preemption) over the cycle's members, the scheduled ones
    counting towards the quorum in its simulation, and ``submitPodGroupAlgorithmResult`` fails each
    member with its own FitError; a placement found nominates them (waiting on preemption).
    ``updatePodGroupCondition`` then writes ``False`` (Unschedulable), unless the condition is
    ``True`` already, which it never regresses; a group a cycle of ours found feasible counts as
    ``True`` (``PodGroupStore.was_feasible``: ours writes it once the binds are through, upstream
    in the cycle, so it may not be back from the informer yet). The message is the group's
    per-node diagnosis, as a rejected group's. Nothing was held in this cycle, so nothing is
    released. Called with the cache lock held."""
    pods = [info.pod for info, _, _, _ in p.failed]
    preemption, ps = _post_filter(s, fwk, group, pods, p.before, nominated, store)
    for info, state, a, snapshot in p.failed:
        out.members.append(_nominated(s, preemption, info, s._failure(fwk, state, info, a, started, snapshot,
                                                                      run_post_filter=False)))
    _actuate(fwk, group, preemption, pods)
    message = p.diagnosis(p.before + len(p.failed))
    if ps.reasons:
        message = f"{message} pod group preemption: {ps.message()}"
    if not store.was_feasible(group) and _changes(group, "False", REASON_UNSCHEDULABLE, message):
        out.condition = condition("False", REASON_UNSCHEDULABLE, message, group)
    _observe(s, fwk, "waiting_on_preemption" if preemption is not None else "unschedulable", started)


def _rejection_message(p: GroupPlacement, members: int) -> str:
    """The condition's (and the members') message for a group the algorithm rejected: the per-node
    diagnosis while fewer than ``minCount`` members fit; once enough fit, Permit decided it, and
    the message says how many passed Permit and the first Permit's reason (a rejection, or a wait
    nobody ended)."""
    group = p.group
    if p.outcome == "waiting":
        return WAITING_ON_PREEMPTION
    if p.scheduled + len(p.permit_rejected) < group.min_count:
        return p.diagnosis(members)
    why = next((st.message() for st in [*p.permit_rejected, *p.permits] if not st.is_success()), "")
    return f"pod group {group.key}: {p.scheduled} of minCount {group.min_count} pods passed Permit: {why}"


def _submit_rejected(s: Scheduler, fwk: Framework, group: PodGroup, p: GroupPlacement, infos: list[QueuedPodInfo],
                     out: GroupOutcome, nominated: dict[str, str], store: PodGroupStore, started: float) -> None:
    """No member's Permit allowed the group, or the algorithm met an Error (upstream's
    ``podGroupCycle`` and ``submitPodGroupAlgorithmResult`` with an Unschedulable or Error status):
    every member fails, with the group's message, after the group's PostFilter (workload-aware
    preemption) when it is unschedulable. When it waits on a preemption its members' PostFilters
    asked for, each member held on a node is nominated there. Called with the lock held and every
    reservation released."""
    dropped = {id(info) for info in p.dropped}
    tried = [i for i in infos if id(i) not in dropped]
    message = _rejection_message(p, p.before + len(tried))
    preemption: wap.GroupPreemption | None = None
    if p.error is None and tried:
        preemption, ps = _post_filter(s, fwk, group, [i.pod for i in tried], p.before, nominated, store)
        if ps.reasons:
            # PodGroupPostFilter's prefix (defaultpreemption.go), as the FitError carries it.
            message = f"{message} pod group preemption: {ps.message()}"
    waiting = p.error is None and p.outcome == "waiting"
    held = {info.uid: assumed.node_name or "" for info, _, assumed, _ in p.placed} if waiting else {}
    plugins = {GANG_SCHEDULING} & set(fwk.plugins_by_name)
    pending: set[str] = set()
    for _, _, a, _ in p.failed:
        plugins |= a.diagnosis.unschedulable_plugins
        pending |= a.diagnosis.pending_plugins
    plugins |= {st.plugin for st in p.permits if st.is_wait() and st.plugin}
    group_status = Status(Code.UNSCHEDULABLE, (message,), GANG_SCHEDULING)
    if p.error is not None:
        # podGroupSchedulingDefaultAlgorithm's wrapping; the member that met it fails with its own.
        group_status = Status(Code.ERROR, (f"failed to schedule other pod from a pod group: {p.error.message()}",),
                              p.error.plugin)
    erred = p.failed[-1][0].uid if p.error is not None else ""
    # GangScheduling's Permit activated the members in flight; upstream's then go to backoffQ and
    # the rejected group is tried again at the backoff's pace whatever happens. Ours waits, as a
    # group rejected whole, for an event one of its rejectors asked for (beyond upstream, with
    # the group's diagnosis below).
    s.queue.forget_activation(info.uid for info in tried)
    for info in tried:
        info.unschedulable_plugins = set(plugins)
        info.pending_plugins = set(pending)
        status = p.error if p.error is not None and info.uid == erred else group_status
        f = s._group_failure(fwk, info, status, status.message(), started)
        node = held.get(info.uid, "")
        if node:
            # submitPodGroupAlgorithmResult: waiting on preemption, each member held on a node is
            # nominated to it, so the next cycles count it there while the victims go.
            s.queue.nominator.add(info.pod, node)
            f.nominated_node = node
        out.members.append(_nominated(s, preemption, info, f))
    _actuate(fwk, group, preemption, [i.pod for i in tried])
    reason = "SchedulerError" if p.error is not None else REASON_UNSCHEDULABLE
    if _changes(group, "False", reason, group_status.message()):
        out.condition = condition("False", reason, group_status.message(), group)
    # The PostFilter found a placement (victims going, or still going), or the members' own did:
    # rejected, but waitingOnPreemption, as submitPodGroupAlgorithmResult tells them apart.
    result = ("error" if p.error is not None
              else "waiting_on_preemption" if preemption is not None or waiting else "unschedulable")
    _observe(s, fwk, result, started)


def _post_filter(s: Scheduler, fwk: Framework, group: PodGroup, pods: list[Pod], before: int,
                 nominated: dict[str, str], store: PodGroupStore, *, record: bool = True
                 ) -> tuple[wap.GroupPreemption | None, Status]:
    """The PodGroup's PostFilter (upstream's ``podGroupPostFilter``): workload-aware preemption when the
    profile runs DefaultPreemption and ``GenericWorkload`` is on. Called with the cache lock held and
    every reservation of the cycle released. It only chooses (the caller evicts), so ``what_if`` runs
    it too, with ``record`` off: no attempt is counted in the metrics."""
    plugin = fwk.plugins_by_name.get(DEFAULT_PREEMPTION)
    if not isinstance(plugin, DefaultPreemption) or plugin not in fwk.post_filter or not plugin.workload_aware:
        return None, Status(Code.UNSCHEDULABLE)
    handle = plugin.handle
    metrics = handle.metrics if record else None

    def place(w: WhatIf) -> tuple[list[wap.Assignment], Status]:
        """The gang placed on the cluster without its potential victims (podGroupSchedulingFunc)."""
        out: list[wap.Assignment] = []
        for pod in pods:
            state = fwk.new_cycle_state()
            a = s._schedule_pod(fwk, state, pod, s.cache.snapshot())
            if a.node is None:
                continue
            asg = wap.assignment(pod, state, a.node)
            w.add(asg.pod, a.node)
            out.append(asg)
        for asg in reversed(out):
            w.remove(asg.pod, asg.node)
        if before + len(out) < group.min_count:
            return [], Status.unschedulable(f"{before + len(out)} of minCount {group.min_count} pods fit "
                                            "with every lower-priority victim removed")
        if not out:
            # Nothing to place: upstream's scheduling function finds no member whose Permit allows
            # the group, so there is no placement (not an empty one that preempts nothing).
            return [], Status.unschedulable("no pending pod of the group fits with every lower-priority victim "
                                            "removed")
        return out, SUCCESS

    def evaluated(status: Status, seconds: float) -> None:
        # PodGroupEvaluator.evaluate's deferred observation (preemptor "podgroup").
        if metrics is not None and metrics.preemption_evaluation_duration is not None:
            metrics.preemption_evaluation_duration.labels("podgroup", str(status.code)).observe(seconds)

    result, status = wap.preempt(
        s.cache.snapshot(), fwk, group, pods, place,
        pdbs=list(handle.pdbs()) if handle.pdbs is not None else [],
        groups=store.get, policy_gate=features.enabled(handle.feature_gates, wap.POD_GROUP_PREEMPTION_POLICY),
        nominated=nominated, on_evaluated=evaluated)
    if result is None:
        pass
    elif result.ongoing:
        status = Status(Code.SUCCESS, ("ongoing preemption on nominated nodes",))
    else:
        status = Status(Code.SUCCESS, (f"found a placement for podgroup, preempting {len(result.pods)} victims",))
    # PodGroupPostFilter's deferred count: one attempt for the group, by its status's code (not
    # scheduler_preemption_attempts_total, which a pod's PostFilter counts).
    if metrics is not None and metrics.workload_preemption_attempts is not None:
        metrics.workload_preemption_attempts.labels(str(status.code)).inc()
    return result, status


def scheduled_message(scheduled: int, min_count: int) -> str:
    """The ``PodGroupInitiallyScheduled=True`` condition's message."""
    return f"{scheduled} of minCount {min_count} pods scheduled"


@dataclass(frozen=True, slots=True)
class GroupWhatIf:
    """``what_if``'s answer: would the PodGroup cycle place ``group`` now, and where.

    ``bound`` and ``placed`` are (pod, node) of the members scheduled already and of those the
    cycle would place; ``unplaced`` (pod, why: its FitError) of those that fit nowhere; ``per_node``
    how many members each node would take; ``message`` the ``PodGroupInitiallyScheduled``
    condition's message the cycle would write (the per-node diagnosis when the quorum is not met);
    ``waiting`` GangScheduling's PreEnqueue message while fewer than ``minCount`` pods exist."""

    group: str
    min_count: int
    fits: bool
    bound: tuple[tuple[str, str], ...]
    placed: tuple[tuple[str, str], ...]
    unplaced: tuple[tuple[str, str], ...]
    per_node: tuple[tuple[str, int], ...]
    message: str
    waiting: str

    @property
    def scheduled(self) -> int:
        return len(self.bound) + len(self.placed)


def _why(fwk: Framework, pod: Pod, a: _Attempt) -> str:
    """A member's reason for fitting nowhere, as its FailedScheduling event words it: the cycle runs
    the member's own PostFilter, whose refusal the FitError carries. ``what_if`` runs no PostFilter
    (one may write, or count an attempt); it words DefaultPreemption's refusal of a gang member,
    the one PostFilter of the default profile that answers a gang member with a message."""
    if a.status.code == Code.ERROR or a.status.message() == NO_NODES_AVAILABLE:
        return a.status.message()
    plugin = fwk.plugins_by_name.get(DEFAULT_PREEMPTION)
    if (not a.diagnosis.post_filter_msg and isinstance(plugin, DefaultPreemption) and plugin in fwk.post_filter
            and plugin.workload_aware and plugin.in_gang(pod)):
        a.diagnosis.post_filter_msg = f"preemption: {wap.NOT_ELIGIBLE_WORKLOAD}"
    return fit_error_message(a.num_all_nodes, a.diagnosis)


def what_if(s: Scheduler, fwk: Framework, group: PodGroup, store: PodGroupStore,
            extra: Sequence[Pod] = ()) -> GroupWhatIf:
    """The PodGroup cycle for ``group``, run hypothetically: its pending members (those ``fwk``
    schedules, in QueueSort order, with ``extra``: pods that do not exist, last) placed member by
    member by ``place_members``, as the cycle places them, but in a ``WhatIf`` on the cache
    (``_Hypothetical``), under the cache's lock: the queue, the cache, the plugins' stores and
    the cluster end as they were, and nothing is written. Members scheduled already count as
    placed. Permit does not run (with the quorum met, GangScheduling's allows every member)."""
    extra_uids = {p.uid for p in extra}
    queued = {i.uid: i for i in s.queue.pending()}
    now = time.monotonic()
    infos: list[QueuedPodInfo] = []
    for pod in store.members(group.namespace, group.name):
        if pod.uid in extra_uids or pod.node_name or s.profiles.for_pod(pod) is not fwk:
            continue
        q = queued.get(pod.uid)
        infos.append(QueuedPodInfo(pod, q.timestamp if q is not None else now, now))
    infos.sort(key=fwk.queue_sort_key)
    infos += [QueuedPodInfo(p, now, now) for p in extra]
    # GangScheduling's PreEnqueue counts the pods that exist (AllPodsCount); ``extra`` would.
    exist = {m.uid for m in store.members(group.namespace, group.name)} | extra_uids
    waiting = WAITING_FOR_MIN_COUNT if len(exist) < group.min_count else ""
    with s.cache.lock, s.cache.what_if() as w:
        placer = _Hypothetical(w)
        p = place_members(s, fwk, group, infos, store, placer, explain=True)
        for _info, state, assumed, a in reversed(p.placed):
            placer.unreserve(fwk, state, assumed, a.node or "")      # the WhatIf undoes the moves
        bound = []
        for m in store.scheduled(group.namespace, group.name, lambda uid: s.cache.get_pod(uid) is not None):
            held = s.cache.get_pod(m.uid)
            bound.append((m.key, held.node_name if held is not None and held.node_name else ""))
    fits = p.quorum and not waiting
    message = scheduled_message(p.scheduled, group.min_count) if p.quorum else p.diagnosis(p.before + len(infos))
    dropped = {id(info) for info in p.dropped}
    tried = [i.pod for i in infos if id(i) not in dropped]
    if not p.quorum and tried and not any(a.status.code == Code.ERROR for _, _, a, _ in p.failed):
        # The cycle's PostFilter, which only chooses victims, so the answer ends as the condition would.
        nominated = {pod.uid: pod.nominated_node_name or s.queue.nominator.node_of(pod.uid) or "" for pod in tried}
        with s.cache.lock:
            _, ps = _post_filter(s, fwk, group, tried, p.before, nominated, store, record=False)
        if ps.reasons:
            message = f"{message} pod group preemption: {ps.message()}"
    return GroupWhatIf(group.key, group.min_count, fits, tuple(sorted(bound)),
                       tuple((info.pod.key, a.node or "") for info, _, _, a in p.placed),
                       tuple((info.pod.key, _why(fwk, info.pod, a)) for info, _, a, _ in p.failed),
                       tuple(sorted(p.diag.accepted.items(), key=lambda kv: (-kv[1], kv[0]))),
                       message, waiting)
