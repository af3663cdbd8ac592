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
        yes ─► Permit for each placed member (GangScheduling sees the quorum: no one waits)
               ─► one Binding per member, bound concurrently; the failed members fail as usual;
               PodGroupInitiallyScheduled=True once the binds are through
        no  ─► Unreserve and forget every member placed in this cycle (nothing stays reserved),
               every member fails with the group's per-node diagnosis (FailedScheduling), and
               PodGroupInitiallyScheduled=False, reason Unschedulable, with the same message

Two gangs that each need the whole cluster never deadlock: a cycle holds the cache lock from the
first member to the last and releases every reservation when the quorum is not met, so at most one
of them is placed and the other holds nothing while it waits (``tests/test_podgroup_cycle.py``).

When the quorum is not met and the profile runs DefaultPreemption, the gang preempts as a unit
(workload-aware preemption, ``scheduler/plugins/podgrouppreemption.py``; upstream's
``podGroupPostFilter``): the victims are chosen so that the whole gang fits, each member the
simulation placed is nominated to its node, and DefaultPreemption evicts the victims off the cycle
while the members wait in PreEnqueue. The members still fail this cycle (nothing is reserved); their
next cycle, once the victims are gone, places the gang on its nominated nodes. A member's own
PostFilter never preempts (``not eligible due to workload aware preemption enabled``).
"""

from __future__ import annotations

import time

from scheduler import features
from scheduler.cache import Snapshot, WhatIf
from scheduler.cache.podgroups import PodGroupStore
from scheduler.cycle import Binding, Dropped, GroupOutcome, Scheduler, ScheduleResult, _Attempt
from scheduler.framework.cycle_state import CycleState
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

__all__ = ["REASON_SCHEDULED", "REASON_UNSCHEDULABLE", "PodGroupCycle", "is_gang_member", "schedule_pod_group"]

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


def condition(status: str, reason: str, message: str) -> dict[str, str]:
    return {"type": POD_GROUP_INITIALLY_SCHEDULED, "status": status, "reason": reason, "message": message,
            "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def _changes(group: PodGroup, status: str, reason: str, message: str) -> bool:
    """Whether writing the condition changes it: True is terminal (upstream's API doc: it never
    reverts to False), and an identical condition is not written again."""
    have = group.condition(POD_GROUP_INITIALLY_SCHEDULED)
    if have is None:
        return True
    if have.status == "True":
        return False
    return (have.status, have.reason, have.message) != (status, reason, message)


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


def schedule_pod_group(s: Scheduler, fwk: Framework, first: QueuedPodInfo, group: PodGroup,
                       store: PodGroupStore) -> GroupOutcome:
    """Place ``first``'s whole gang on one snapshot, or none of it (the module docstring)."""

    def member(p: Pod) -> bool:
        return (p.namespace == group.namespace and p.scheduling_group == group.name
                and s.profiles.for_pod(p) is fwk)

    infos = [first, *s.queue.pop_group(member)]
    infos.sort(key=fwk.queue_sort_key)
    # The members' nominations (a preemption's) are taken out of the nominator for the cycle, so that
    # no member counts another as already on a node: each is assumed, nominated again, or cleared
    # below. A member still tries its nominated node first (``Pod.nominated_node_name``).
    nominated = {i.uid: i.pod.nominated_node_name or s.queue.nominator.node_of(i.uid) or "" for i in infos}
    for i in infos:
        s.queue.nominator.delete(i.uid)
    out = GroupOutcome(group)
    started = time.perf_counter()
    placed: list[tuple[QueuedPodInfo, CycleState, Pod, _Attempt]] = []
    failed: list[tuple[QueuedPodInfo, CycleState, _Attempt, Snapshot]] = []
    diag = GroupDiagnosis()
    with s.cache.lock:
        before = len(store.scheduled(group.namespace, group.name, lambda uid: s.cache.get_pod(uid) is not None))
        for info in infos:
            pod = info.pod
            if pod.deleting or s.cache.get_pod(pod.uid) is not None:
                s.queue.done(info.uid)
                out.members.append(Dropped(info, "deleting, or already assumed or assigned"))
                continue
            snapshot = s.cache.snapshot()
            if not diag.nodes:
                diag.nodes = tuple(snapshot.node_names(snapshot.node_order))
            state = fwk.new_cycle_state()
            a = s._schedule_pod(fwk, state, pod, snapshot)
            if a.node is not None:
                assumed = s.cache.assume_pod(pod, a.node)
                r = fwk.run_reserve(state, assumed, a.node)
                if r.is_success():
                    placed.append((info, state, assumed, a))
                    diag.place(a.node)
                    continue
                fwk.run_unreserve(state, assumed, a.node)
                s.cache.forget_pod(assumed)
                diag.reject(a.node, r.message())
                a = _Attempt(status=r, num_all_nodes=1)
                a.diagnosis.node_to_status.absent = r
                if r.is_rejected():
                    a.diagnosis.unschedulable_plugins.add(r.plugin)
            else:
                _reject_nodes(diag, a, snapshot)
            failed.append((info, state, a, snapshot))
        scheduled = before + len(placed)
        if scheduled >= group.min_count:
            for info, state, assumed, a in placed:
                s.queue.nominator.delete(info.uid)
                node = a.node or ""
                st, wait = fwk.run_permit(state, assumed, node)
                if st.is_success() or st.is_wait():
                    out.members.append(Binding(info, fwk, state, assumed, ScheduleResult(node, a.evaluated, a.feasible),
                                               started, wait if st.is_wait() else 0.0,
                                               st.plugin if st.is_wait() else ""))
                    continue
                fwk.run_unreserve(state, assumed, node)
                s.cache.forget_pod(assumed)
                b = _Attempt(status=st, num_all_nodes=1)
                b.diagnosis.node_to_status.absent = st
                if st.is_rejected():
                    b.diagnosis.unschedulable_plugins.add(st.plugin)
                failed.append((info, state, b, s.cache.snapshot()))
            for info, state, a, snapshot in failed:
                out.members.append(s._failure(fwk, state, info, a, started, snapshot, run_post_filter=False))
            message = f"{scheduled} of minCount {group.min_count} pods scheduled"
            if _changes(group, "True", REASON_SCHEDULED, message):
                out.on_bound = condition("True", REASON_SCHEDULED, message)
            return out
        # The quorum is not met: release every reservation this cycle made, newest first.
        for _info, state, assumed, a in reversed(placed):
            fwk.run_unreserve(state, assumed, a.node or "")
            s.cache.forget_pod(assumed)
        message = diag.message(group.key, placed=scheduled, members=before + len(infos), min_count=group.min_count)
        errors = [a for _, _, a, _ in failed if a.status.code == Code.ERROR]
        tried = [i for i in infos if not any(isinstance(m, Dropped) and m.info is i for m in out.members)]
        preemption: wap.GroupPreemption | None = None
        if not errors and tried:
            preemption, ps = _post_filter(s, fwk, group, [i.pod for i in tried], before, nominated, store)
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
            f = s._group_failure(fwk, info, status, message, started)
            if preemption is not None:
                # PostFilter's nomination: recorded now, so the next cycles count the member there.
                node = preemption.nominations.get(info.uid, "")
                if node:
                    s.queue.nominator.add(info.pod, node)
                    f.nominated_node = node
            out.members.append(f)
        if preemption is not None and not preemption.ongoing:
            plugin = fwk.plugins_by_name.get(DEFAULT_PREEMPTION)
            if isinstance(plugin, DefaultPreemption):
                plugin.preempt_group(preemption, [i.pod for i in tried], fwk)
        reason = "SchedulerError" if errors else REASON_UNSCHEDULABLE
        if _changes(group, "False", reason, message):
            out.condition = condition("False", reason, message)
        return out


def _post_filter(s: Scheduler, fwk: Framework, group: PodGroup, pods: list[Pod], before: int,
                 nominated: dict[str, str], store: PodGroupStore) -> tuple[wap.GroupPreemption | None, Status]:
    """The PodGroup's PostFilter (upstream's ``podGroupPostFilter``): workload-aware preemption when the
    profile runs DefaultPreemption and ``GenericWorkload`` is on. Called with the cache lock held and
    every reservation of the cycle released."""
    plugin = fwk.plugins_by_name.get(DEFAULT_PREEMPTION)
    if not isinstance(plugin, DefaultPreemption) or plugin not in fwk.post_filter or not plugin.workload_aware:
        return None, Status(Code.UNSCHEDULABLE)
    handle = plugin.handle
    if handle.metrics is not None:
        handle.metrics.preemption_attempts.inc()        # one attempt for the group, whatever its outcome

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

    result, status = wap.preempt(
        s.cache.snapshot(), fwk, group, pods, place,
        pdbs=list(handle.pdbs()) if handle.pdbs is not None else [],
        groups=store.get, policy_gate=features.enabled(handle.feature_gates, wap.POD_GROUP_PREEMPTION_POLICY),
        nominated=nominated)
    if result is None:
        return None, status
    if result.ongoing:
        return result, Status(Code.SUCCESS, ("ongoing preemption on nominated nodes",))
    return result, Status(Code.SUCCESS, (f"found a placement for podgroup, preempting {len(result.pods)} victims",))
