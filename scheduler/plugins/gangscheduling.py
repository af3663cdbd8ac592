"""GangScheduling: all-or-nothing scheduling for the pods of a PodGroup whose policy is ``gang``
(upstream's ``pkg/scheduler/framework/plugins/gangscheduling/gangscheduling.go``, the 1.37 shape:
PreEnqueue and Permit; 1.38 development moved the Permit check to a PlacementFeasible point).

* **PreEnqueue** keeps a member out of activeQ until its PodGroup exists and ``minCount`` of its pods
  exist (``PodGroupStore.all_pods_count``, upstream's ``AllPodsCount``).
* **EventsToRegister**: a pod of the same group added (pending or bound), the PodGroup added, or its
  ``minCount`` lowered, may let a gated member in; any other event is skipped by the hints.
* **Permit** parks a member until ``minCount`` of the group are scheduled (assigned, or assumed in
  the cache), then allows every parked member; it waits at most ``PERMIT_TIMEOUT`` (upstream's
  ``permitTimeoutDuration``, five minutes). While it waits it activates the group's unscheduled
  members (``Handle.activate``), in case they wait for this one; in the PodGroup cycle most are
  the cycle's own, in flight, which the queue marks so that a member that fails goes to backoffQ.
* **Unreserve** (beyond upstream's 1.37 plugin, which leaves it to the timeout): a member that is
  unreserved (its wait timed out, its PreBind or Bind failed) rejects the group's other parked
  members, so no part of a gang holds capacity waiting for a quorum it has lost.

The PodGroup scheduling cycle (``scheduler/podgroup_cycle.py``) runs Permit twice for a member, as
upstream's does. In the cycle's algorithm (``CycleState.pod_group_cycle`` set) the members are tried
one by one, and Permit answers from the cycle's count: Wait until the member that completes the
quorum, which is allowed, and so makes the group feasible. Then, as each member's binding cycle is
prepared, Permit runs again on the cache, where the whole gang is now assumed: no member waits. The
wait is for members scheduled in separate cycles.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod
from scheduler.model.podgroup import PodGroup

if TYPE_CHECKING:
    from scheduler.cache.podgroups import PodGroupStore

__all__ = ["NAME", "PERMIT_TIMEOUT", "WAITING_AT_PERMIT", "WAITING_FOR_MIN_COUNT", "GangScheduling",
           "waiting_for_group"]

NAME = "GangScheduling"
# gangscheduling.go: permitTimeoutDuration.
PERMIT_TIMEOUT = 300.0
WAITING_FOR_MIN_COUNT = "waiting for minCount pods from a gang to appear in scheduling queue"
WAITING_AT_PERMIT = "waiting for minCount pods from a gang to be scheduled"


def waiting_for_group(name: str) -> str:
    # Upstream's text, its "pods's" included (Go's %q quotes the name).
    return f"waiting for pods's pod group {json.dumps(name)} to appear in scheduling queue"


def member_rejected(pod: Pod) -> str:
    return f"pod {pod.key} of the same gang was unreserved: the gang no longer meets its minCount"


def _same_group(pod: Pod, other: object) -> bool:
    return (isinstance(other, Pod) and bool(pod.scheduling_group) and other.namespace == pod.namespace
            and other.scheduling_group == pod.scheduling_group)


def _names_group(pod: Pod, group: object) -> bool:
    return (isinstance(group, PodGroup) and bool(pod.scheduling_group) and group.namespace == pod.namespace
            and group.name == pod.scheduling_group)


class GangScheduling:
    """Upstream's ``GangScheduling``: PreEnqueue, EnqueueExtensions, Reserve (Unreserve), Permit."""

    name = NAME
    # Its PreEnqueue and its hints read a pod only through its namespace and schedulingGroup, so
    # the queue may ask once for a whole PodGroup (``Framework.gates_by_pod_group``), as upstream's
    # queue, which holds a PodGroup as one entity, does.
    gates_by_pod_group = True

    def __init__(self, handle: Handle) -> None:
        self.handle = handle
        # The last ``_scheduled`` answer, with what it was computed from (the group, the cache's
        # and the store's versions): a PodGroup cycle runs Permit for each of a gang's n members
        # on the same cache, and recounting the members each time cost n² lookups (5,000² for
        # GangScheduling/5000PerGroup).
        self._memo: tuple[tuple[str, str, int, int], list[Pod], dict[str, int]] | None = None

    # --- helpers --------------------------------------------------------------------------
    def _group(self, pod: Pod) -> PodGroup | None:
        store = self.handle.pod_groups
        return None if store is None else store.get(pod.namespace, pod.scheduling_group)

    def _placed(self, uid: str) -> bool:
        lookup = self.handle.assigned_pod
        return lookup is not None and lookup(uid) is not None

    def _scheduled(self, store: PodGroupStore, namespace: str, name: str) -> tuple[list[Pod], dict[str, int]]:
        """The group's scheduled members (``PodGroupStore.scheduled``) and each one's position."""
        version = self.handle.placed_version
        key = None if version is None else (namespace, name, version(), store.version)
        if key is not None and self._memo is not None and self._memo[0] == key:
            return self._memo[1], self._memo[2]
        scheduled = store.scheduled(namespace, name, self._placed)
        index = {p.uid: i for i, p in enumerate(scheduled)}
        if key is not None:
            self._memo = (key, scheduled, index)
        return scheduled, index

    # --- PreEnqueue -----------------------------------------------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        if not pod.scheduling_group:
            return SUCCESS
        group = self._group(pod)
        if group is None:
            return Status.unresolvable(waiting_for_group(pod.scheduling_group))
        if not group.is_gang:
            return SUCCESS
        store = self.handle.pod_groups
        count = store.all_pods_count(pod.namespace, group.name) if store is not None else 0
        if count < group.min_count:
            return Status.unresolvable(WAITING_FOR_MIN_COUNT)
        return SUCCESS

    # --- EnqueueExtensions ----------------------------------------------------------------
    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (
            # A new pod, pending or bound, may be the one that completes the quorum. The pod's
            # schedulingGroup is immutable, so its updates need no subscription.
            fwk.ClusterEventWithHint(fwk.ClusterEvent("UnscheduledPod", "Add"), self._pod_added),
            fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "Add"), self._pod_added),
            fwk.ClusterEventWithHint(fwk.ClusterEvent("PodGroup", "Add"), self._group_added),
            fwk.ClusterEventWithHint(fwk.ClusterEvent("PodGroup", "Update"), self._group_updated),
        )

    @staticmethod
    def _pod_added(pod: Pod, event: fwk.ClusterEvent) -> bool:
        return _same_group(pod, event.new)

    @staticmethod
    def _group_added(pod: Pod, event: fwk.ClusterEvent) -> bool:
        return _names_group(pod, event.new)

    @staticmethod
    def _group_updated(pod: Pod, event: fwk.ClusterEvent) -> bool:
        """isSchedulableAfterPodGroupUpdated: only a lowered ``minCount`` of the pod's own group."""
        old, new = event.old, event.new
        if not _names_group(pod, new):
            return False
        assert isinstance(new, PodGroup)
        if not isinstance(old, PodGroup) or not old.is_gang or not new.is_gang:
            return True         # a policy is immutable: an unexpected change, so look again
        return new.min_count < old.min_count

    # --- Reserve --------------------------------------------------------------------------
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        waiting = self.handle.waiting_pods
        store = self.handle.pod_groups
        if waiting is None or store is None or not pod.scheduling_group:
            return
        waiting.discard(pod.uid)
        key = (pod.namespace, pod.scheduling_group)
        for uid in waiting.uids():
            if uid != pod.uid and store.group_of(uid) == key:
                waiting.reject(uid, NAME, member_rejected(pod))

    # --- Permit ---------------------------------------------------------------------------
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        if not pod.scheduling_group:
            return SUCCESS, 0.0
        group = self._group(pod)
        if group is None:
            # The group was removed meanwhile: an error, so the pod is retried when it returns.
            name = pod.scheduling_group
            return Status(Code.ERROR, (f"failed to get podGroup {pod.namespace}/{name}: "
                                       f"podgroups.scheduling.k8s.io {json.dumps(name)} not found",)), 0.0
        if not group.is_gang:
            return SUCCESS, 0.0
        store = self.handle.pod_groups
        assert store is not None
        cycle = state.pod_group_cycle
        if cycle is not None:
            # The PodGroup cycle's algorithm tries the members one by one and keeps the count:
            # the member that completes the quorum is the first to be allowed, which tells the
            # cycle that the group is feasible.
            if cycle.scheduled < group.min_count:
                if not cycle.activated:
                    # As upstream's Permit does in the cycle too: most of the unscheduled members
                    # are this cycle's, in flight, and the queue marks each so that, should it
                    # fail, it goes to backoffQ rather than wait for an event (Activate of an
                    # in-flight pod); a member left over once the rest were placed is thus tried
                    # again, alone, where the group's PostFilter may preempt for it.
                    cycle.activated = True
                    self._activate_unscheduled(store, pod, group.name)
                return Status(Code.WAIT, (WAITING_AT_PERMIT,)), PERMIT_TIMEOUT
            self._allow_parked(store, pod)
            return SUCCESS, 0.0
        scheduled, index = self._scheduled(store, pod.namespace, group.name)
        if len(scheduled) < group.min_count:
            # Activate the group's unscheduled pods, in case they were waiting for this one.
            self._activate_unscheduled(store, pod, group.name, scheduled)
            return Status(Code.WAIT, (WAITING_AT_PERMIT,)), PERMIT_TIMEOUT
        # The quorum is met: allow every member parked at Permit, in the members' order (the
        # waiting pods are few, the members many: allowing one that does not wait does nothing).
        waiting = self.handle.waiting_pods
        if waiting is not None:
            for uid in sorted((u for u in waiting.uids() if u in index), key=index.__getitem__):
                waiting.allow(uid)
        return SUCCESS, 0.0

    def _activate_unscheduled(self, store: PodGroupStore, pod: Pod, name: str,
                              scheduled: list[Pod] | None = None) -> None:
        """``handle.Activate`` of the group's members other than ``pod`` that are not scheduled
        (assigned, or assumed in the cache) yet: upstream's ``podGroupState.UnscheduledPods()``."""
        if self.handle.activate is None:
            return
        if scheduled is None:
            scheduled, _ = self._scheduled(store, pod.namespace, name)
        placed = {p.uid for p in scheduled}
        self.handle.activate([p.uid for p in store.members(pod.namespace, name)
                              if p.uid not in placed and p.uid != pod.uid])

    def _allow_parked(self, store: PodGroupStore, pod: Pod) -> None:
        """Allow the members of ``pod``'s group parked at Permit (by earlier cycles): few pods wait,
        so they are looked up by group rather than the group's members scanned."""
        waiting = self.handle.waiting_pods
        if waiting is None:
            return
        key = (pod.namespace, pod.scheduling_group)
        for uid in waiting.uids():
            if uid != pod.uid and store.group_of(uid) == key:
                waiting.allow(uid)


def new(args: None, handle: Handle) -> GangScheduling:
    return GangScheduling(handle)


if TYPE_CHECKING:
    _: type[fwk.PreEnqueuePlugin] = GangScheduling
    __: type[fwk.EnqueueExtensions] = GangScheduling
    ___: type[fwk.ReservePlugin] = GangScheduling
    ____: type[fwk.PermitPlugin] = GangScheduling
