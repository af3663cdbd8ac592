"""The PodGroup scheduling cycle (upstream's ``schedule_one_podgroup.go`` and ``algorithm_podgroup.go``,
1.37): a gang is placed as one entity, on one snapshot, all or nothing.

::

    pop (a member of a gang PodGroup) ─► pop_group: the group's other pending pods, in QueueSort order
        │
        ▼  under the cache lock, member by member (each sees the members assumed before it):
    schedule_pod ─► assume ─► Reserve        (a member that fits nowhere is a failed member;
        │                                     each node's first rejection is kept: GroupDiagnosis)
        ▼
    scheduled (assigned + assumed) ≥ minCount?
        yes ─► Permit for each placed member (GangScheduling sees the quorum: no one waits); if
               another plugin's Permit rejects members and the rest fall below minCount, the
               group is rejected as below (none bound, none left waiting)
               ─► one Binding per member, bound concurrently; the failed members fail as usual;
               PodGroupInitiallyScheduled=True once the binds are through
        no  ─► Unreserve and forget every member placed in this cycle (nothing stays reserved),
               every member fails with the group's per-node diagnosis (FailedScheduling), and
               PodGroupInitiallyScheduled=False, reason Unschedulable, with the same message

Two gangs that each need the whole cluster never deadlock: a cycle holds the cache lock from the
first member to the last and releases every reservation when the quorum is not met, so at most one
of them is placed and the other holds nothing while it waits (``tests/test_podgroup_cycle.py``).

``what_if`` runs the same placement (``place_members``) hypothetically, for ``explain`` and
``capacity``: the members are moved on the cache's rows in a ``WhatIf`` instead of assumed, and
everything is undone before the lock is let go; the answer (``GroupWhatIf``) is whether the quorum
would be met, where each member would go, and otherwise the same per-node diagnosis.

When the quorum is not met and the profile runs DefaultPreemption, the gang preempts as a unit
(workload-aware preemption, ``scheduler/plugins/podgrouppreemption.py``; upstream's
``podGroupPostFilter``): the victims are chosen so that the whole gang fits, each member the
simulation placed is nominated to its node, and DefaultPreemption evicts the victims off the cycle
while the members wait in PreEnqueue. The members still fail this cycle (nothing is reserved); their
next cycle, once the victims are gone, places the gang on its nominated nodes. A member's own
PostFilter never preempts (``not eligible due to workload aware preemption enabled``).

Metrics (with the GenericWorkload gate, ``Metrics.register_generic_workload``), where upstream's
``podGroupCycle`` and ``submitPodGroupAlgorithmResult`` record them:
``scheduler_podgroup_scheduling_algorithm_duration_seconds`` once the members are placed or not,
and one ``scheduler_podgroup_schedule_attempts_total{result,profile}`` with its
``scheduler_podgroup_scheduling_attempt_duration_seconds`` when the outcome is submitted (the
members' binding cycles still to run): ``scheduled``, ``unschedulable``, ``waiting_on_preemption``
(the quorum was not met but the PostFilter found a placement: victims are going), or ``error``. The
PostFilter counts ``scheduler_workload_preemption_attempts_total{result}`` and times its evaluation
(``scheduler_preemption_evaluation_duration_seconds{preemptor="podgroup"}``); DefaultPreemption's
``preempt_group`` records the rest of the workload-preemption metrics as it carries it out.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from scheduler import features
from scheduler.cache import Cache, Snapshot, WhatIf
from scheduler.cache.podgroups import PodGroupStore
from scheduler.cycle import Binding, Dropped, Failure, GroupOutcome, Scheduler, ScheduleResult, _Attempt
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NO_NODES_AVAILABLE, fit_error_message
from scheduler.framework.group_diagnosis import GroupDiagnosis
from scheduler.framework.runtime import Framework
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.framework.types import QueuedPodInfo
from scheduler.model import Pod
from scheduler.model.podgroup import POD_GROUP_INITIALLY_SCHEDULED, PodGroup
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
    """Whether ``pod`` is scheduled in a PodGroup cycle: its group exists and is a gang, and its
    profile runs GangScheduling (upstream runs the PodGroup cycle for groups under that gate)."""
    return (group is not None and group.is_gang and bool(pod.scheduling_group)
            and GANG_SCHEDULING in fwk.plugins_by_name)


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
        placed = replace(pod, node_name=node)
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
    held (assumed and reserved) on their nodes, ``failed`` fit nowhere (or Reserve refused them),
    ``dropped`` are deleting or already in the cache; ``diag`` is the per-node diagnosis."""

    group: PodGroup
    before: int
    placed: list[tuple[QueuedPodInfo, CycleState, Pod, _Attempt]] = field(default_factory=list)
    failed: list[tuple[QueuedPodInfo, CycleState, _Attempt, Snapshot]] = field(default_factory=list)
    dropped: list[QueuedPodInfo] = field(default_factory=list)
    diag: GroupDiagnosis = field(default_factory=GroupDiagnosis)

    @property
    def scheduled(self) -> int:
        return self.before + len(self.placed)

    @property
    def quorum(self) -> bool:
        """At least ``minCount`` of the group scheduled: the cycle binds the placed members."""
        return self.scheduled >= self.group.min_count

    def diagnosis(self, members: int) -> str:
        """The per-node message a failed cycle writes (``group_diagnosis``), for ``members`` pods."""
        return self.diag.message(self.group.key, placed=self.scheduled, members=members,
                                 min_count=self.group.min_count)


def place_members(s: Scheduler, fwk: Framework, group: PodGroup, infos: Sequence[QueuedPodInfo],
                  store: PodGroupStore, placer: _Placer, *, explain: bool = False) -> GroupPlacement:
    """Place ``infos`` member by member on the cache (its lock held by the caller), each member
    seeing those placed before it; a member that fits nowhere keeps each node's first reason.
    ``explain``: the search does not move the profile's round-robin start (``Scheduler.explain``'s)."""
    scheduled = store.scheduled(group.namespace, group.name, lambda uid: s.cache.get_pod(uid) is not None)
    out = GroupPlacement(group, len(scheduled))
    diag = out.diag
    for info in infos:
        pod = info.pod
        if pod.deleting or s.cache.get_pod(pod.uid) is not None:
            out.dropped.append(info)
            continue
        snapshot = s.cache.snapshot()
        if not diag.nodes:
            diag.nodes = tuple(snapshot.node_names(snapshot.node_order))
        state = fwk.new_cycle_state()
        a = s._schedule_pod(fwk, state, pod, snapshot, explain=explain)
        if a.node is not None:
            assumed = placer.assume(pod, a.node)
            r = placer.reserve(fwk, state, assumed, a.node)
            if r.is_success():
                out.placed.append((info, state, assumed, a))
                diag.place(a.node)
                continue
            placer.unreserve(fwk, state, assumed, a.node)
            placer.forget(assumed)
            diag.reject(a.node, r.message())
            a = _rejected(r)
        else:
            _reject_nodes(diag, a, snapshot)
        out.failed.append((info, state, a, snapshot))
    return out


def _release(p: GroupPlacement, fwk: Framework, placer: _Placer) -> None:
    """Unreserve and forget every member the pass placed, newest first: nothing stays held."""
    for _info, state, assumed, a in reversed(p.placed):
        placer.unreserve(fwk, state, assumed, a.node or "")
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
    out = GroupOutcome(group)
    started = time.perf_counter()
    placer = _Assume(s.cache)
    with s.cache.lock:
        p = place_members(s, fwk, group, infos, store, placer)
        if s.metrics is not None and s.metrics.podgroup_scheduling_algorithm_duration is not None:
            s.metrics.podgroup_scheduling_algorithm_duration.observe(time.perf_counter() - started)
        for info in p.dropped:
            s.queue.done(info.uid)
            out.members.append(Dropped(info, "deleting, or already assumed or assigned"))
        failed = p.failed
        # Permit for every placed member first: a rejection may take the group below minCount.
        permits = ([fwk.run_permit(state, assumed, a.node or "") for _, state, assumed, a in p.placed]
                   if p.quorum else [])
        passed = sum(1 for st, _ in permits if st.is_success() or st.is_wait())
        permit_lost = p.quorum and p.before + passed < group.min_count
        if permit_lost:
            # Permit rejected members (a plugin other than GangScheduling) and the rest no longer make
            # minCount: as upstream, where GangScheduling's Permit then leaves every member waiting and
            # the group is rejected, none is bound. Binding the others would leave the gang partly
            # bound, and hold the rest at GangScheduling's Permit until it times out.
            for (info, state, _assumed, _a), (st, _) in zip(p.placed, permits, strict=True):
                fwk.waiting_pods.discard(info.uid)
                if not (st.is_success() or st.is_wait()):
                    failed.append((info, state, _rejected(st), s.cache.snapshot()))
        elif p.quorum:
            for (info, state, assumed, a), (st, wait) in zip(p.placed, permits, strict=True):
                s.queue.nominator.delete(info.uid)
                node = a.node or ""
                if st.is_success() or st.is_wait():
                    out.members.append(Binding(info, fwk, state, assumed, ScheduleResult(node, a.evaluated, a.feasible),
                                               started, wait if st.is_wait() else 0.0,
                                               st.plugin if st.is_wait() else ""))
                    continue
                fwk.run_unreserve(state, assumed, node)
                s.cache.forget_pod(assumed)
                failed.append((info, state, _rejected(st), s.cache.snapshot()))
            # The quorum holds, but members that fit nowhere (a straggler that came after the others
            # were placed) preempt as the group would: the PodGroup's PostFilter over them alone, the
            # group's scheduled members counted towards minCount, so they are not stuck behind
            # lower-priority pods ("gang schedules with workload-aware preemption").
            late: wap.GroupPreemption | None = None
            if failed and not any(a.status.code == Code.ERROR for _, _, a, _ in failed):
                late, _ = _post_filter(s, fwk, group, [i.pod for i, _, _, _ in failed], p.scheduled, nominated,
                                       store)
            for info, state, a, snapshot in failed:
                out.members.append(_nominated(s, late, info, s._failure(fwk, state, info, a, started, snapshot,
                                                                        run_post_filter=False)))
            _actuate(fwk, group, late, [i.pod for i, _, _, _ in failed])
            message = scheduled_message(p.scheduled, group.min_count)
            if _changes(group, "True", REASON_SCHEDULED, message):
                out.on_bound = condition("True", REASON_SCHEDULED, message, group)
            _observe(s, fwk, "scheduled", started)
            return out
        # The quorum is not met: release every reservation this cycle made, newest first.
        _release(p, fwk, placer)
        message = p.diagnosis(p.before + len(infos))
        if permit_lost:
            why = next(st.message() for st, _ in permits if not (st.is_success() or st.is_wait()))
            message = (f"pod group {group.key}: {p.before + passed} of minCount {group.min_count} pods passed "
                       f"Permit: {why}")
        errors = [a for _, _, a, _ in failed if a.status.code == Code.ERROR]
        dropped = {id(info) for info in p.dropped}
        tried = [i for i in infos if id(i) not in dropped]
        preemption: wap.GroupPreemption | None = None
        if not errors and tried:
            preemption, ps = _post_filter(s, fwk, group, [i.pod for i in tried], p.before, nominated, store)
            if ps.reasons:
                # PodGroupPostFilter's prefix (defaultpreemption.go), as the FitError carries it.
                message = f"{message} pod group preemption: {ps.message()}"
        plugins = {GANG_SCHEDULING}
        pending: set[str] = set()
        for _, _, a, _ in failed:
            plugins |= a.diagnosis.unschedulable_plugins
            pending |= a.diagnosis.pending_plugins
        for info in tried:
            info.unschedulable_plugins = set(plugins)
            info.pending_plugins = set(pending)
            status = errors[0].status if errors else Status(Code.UNSCHEDULABLE, (message,), GANG_SCHEDULING)
            out.members.append(_nominated(s, preemption, info, s._group_failure(fwk, info, status, message, started)))
        _actuate(fwk, group, preemption, [i.pod for i in tried])
        reason = "SchedulerError" if errors else REASON_UNSCHEDULABLE
        if _changes(group, "False", reason, message):
            out.condition = condition("False", reason, message, group)
        # The PostFilter found a placement (victims going, or still going): rejected, but
        # waitingOnPreemption, as submitPodGroupAlgorithmResult tells them apart.
        result = "error" if errors else "waiting_on_preemption" if preemption is not None else "unschedulable"
        _observe(s, fwk, result, started)
        return out


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


def _why(a: _Attempt) -> str:
    """A member's reason for fitting nowhere, as its FailedScheduling event words it."""
    if a.status.code == Code.ERROR or a.status.message() == NO_NODES_AVAILABLE:
        return a.status.message()
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
                       tuple((info.pod.key, _why(a)) for info, _, a, _ in p.failed),
                       tuple(sorted(p.diag.accepted.items(), key=lambda kv: (-kv[1], kv[0]))),
                       message, waiting)
