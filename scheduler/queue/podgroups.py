"""The scheduling queue's PodGroup bookkeeping: which pods name a group, where they wait, and the
queue-entity metrics that follow from it (``SchedulingQueue`` delegates here; read that first).

Upstream's queue holds a PodGroup as one entity; this one holds a gang's pods one by one and the
PodGroup cycle gathers them when the first is popped (``SchedulingQueue.pop_group``), so the
entities of 1.37's ``scheduler_queued_entities{queue,type}``, ``scheduler_queue_incoming_entities_total``
and the ``incomplete`` and ``pending`` values of ``scheduler_pending_pods`` are counted from the pods,
as upstream defines them. With GenericWorkload (``pod_group_exists`` set), a pod that names a
scheduling group is a member of the ``podgroup`` entity (namespace, group); every other pod is a
``pod`` entity:

* a group is one entity in each sub-queue (active, backoff, unschedulable, gated) where at least one
  of its members waits (upstream's entity is in one queue; here a group's members may be split, after
  a member was updated alone);
* ``incomplete``: members whose PodGroup object does not exist yet (upstream's
  ``incompletePodGroupPods``; here they wait gated by GangScheduling's PreEnqueue, and are counted
  under ``incomplete`` instead of ``gated``);
* ``pending``: members that wait while their group is in a PodGroup scheduling cycle
  (``begin_group`` .. ``end_group``; upstream's ``pendingPodGroupPods``), counted there instead of
  in their queue;
* a group entering a sub-queue counts as an incoming entity only when none of its other members
  waits there already (upstream adds the pod to the entity that is there).

Without the gate every pod is a ``pod`` entity and ``incomplete`` and ``pending`` stay 0.

Two structures:

* ``members``: the pods the queue knows (queued or in flight) that name a group, by group, so that
  ``pop_group`` costs the group's size rather than the queue's. Entries leave on ``unindex`` (the
  queue's ``delete``, or lazily in ``pop_group`` once the pod is neither queued nor in flight).
* ``entered``: by (sub-queue, group), the members last seen entering that sub-queue, pruned as they
  are looked at (``group_enters``) and with the queue's leftover flush (``prune``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from scheduler.framework.types import QueuedPodInfo
from scheduler.model import Pod

__all__ = ["INCOMPLETE", "PENDING", "POD", "POD_GROUP", "GroupKey", "PodGroups", "pod_group_of"]

# Where a group's members are counted outside every queue's entities (scheduler_pending_pods' values).
INCOMPLETE, PENDING = "incomplete", "pending"
# scheduler_queued_entities' types (metrics.go: Pod, PodGroup).
POD, POD_GROUP = "pod", "podgroup"

GroupKey = tuple[str, str]
_NO_GROUP: GroupKey = ("", "")


def pod_group_of(pod: Pod) -> GroupKey:
    """The PodGroup a pod names (namespace, ``schedulingGroup``), ``("", "")`` for none."""
    return (pod.namespace, pod.scheduling_group) if pod.scheduling_group else _NO_GROUP


class PodGroups:
    """The queue's PodGroup index and entity bookkeeping (the module docstring). Not
    thread-safe on its own: the queue calls it under its lock."""

    def __init__(self) -> None:
        # GenericWorkload: whether a PodGroup exists (the service sets it with the gate); None: every
        # pod is its own entity.
        self.pod_group_exists: Callable[[str, str], bool] | None = None
        self._in_cycle: set[GroupKey] = set()
        self._members: dict[GroupKey, dict[str, None]] = {}
        self._group_of_uid: dict[str, GroupKey] = {}
        self._entered: dict[tuple[str, GroupKey], set[str]] = {}

    # --- the index (queued or in-flight members, by group) ---------------------------------
    def index(self, pod: Pod) -> None:
        """File ``pod`` under its group, moving it if its group changed."""
        key = pod_group_of(pod)
        old = self._group_of_uid.get(pod.uid)
        if old == key:
            return
        if old is not None:
            self.unindex(pod.uid)
        if pod.scheduling_group:
            self._group_of_uid[pod.uid] = key
            self._members.setdefault(key, {})[pod.uid] = None

    def unindex(self, uid: str) -> None:
        key = self._group_of_uid.pop(uid, None)
        if key is None:
            return
        members = self._members.get(key)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self._members[key]

    def members(self, key: GroupKey) -> list[str]:
        """The uids filed under group ``key``, in the order they were filed (a copy)."""
        return list(self._members.get(key, ()))

    def indexed(self) -> set[str]:
        return set(self._group_of_uid)

    # --- who entered where ------------------------------------------------------------------
    def group_enters(self, queue: str, uid: str, pod: Pod, queue_of: Callable[[str], str | None]) -> bool:
        """Whether ``uid``'s group enters ``queue`` as an entity: no other member it was seen with
        there still waits there (``queue_of``: where a pod waits now). The record is pruned of the
        members that left as it is read."""
        key = self.group_key(pod)
        assert key is not None
        seen = self._entered.setdefault((queue, key), set())
        stayed = {u for u in seen if u != uid and queue_of(u) == queue}
        seen.intersection_update(stayed)
        seen.add(uid)
        return not stayed

    def prune(self, queue_of: Callable[[str], str | None]) -> None:
        """Drop the records of members that left their queue (run with the leftover flush)."""
        for k, seen in list(self._entered.items()):
            seen.intersection_update({u for u in seen if queue_of(u) == k[0]})
            if not seen:
                del self._entered[k]

    # --- entities ----------------------------------------------------------------------------
    def begin(self, key: GroupKey) -> None:
        self._in_cycle.add(key)

    def end(self, key: GroupKey) -> None:
        self._in_cycle.discard(key)

    def group_key(self, pod: Pod) -> GroupKey | None:
        """The entity group of ``pod``: None without the gate or for a pod in no group."""
        if self.pod_group_exists is None or not pod.scheduling_group:
            return None
        return pod.namespace, pod.scheduling_group

    def kind(self, key: GroupKey) -> str:
        """What a group's members count as now: ``podgroup``, ``pending`` (its group is in a PodGroup
        cycle) or ``incomplete`` (no PodGroup yet). Gate on only."""
        if key in self._in_cycle:
            return PENDING
        assert self.pod_group_exists is not None
        return POD_GROUP if self.pod_group_exists(*key) else INCOMPLETE

    def entity(self, pod: Pod) -> str:
        """``pod``, or the kind of the pod's group (``kind``)."""
        key = self.group_key(pod)
        return POD if key is None else self.kind(key)

    def census(self, infos: Iterable[QueuedPodInfo]) -> tuple[int, int, int]:
        """Of the pods of one queue: how many count there (``pending_pods``), the ``pod`` entities,
        and the ``podgroup`` entities (the distinct groups)."""
        pods = plain = 0
        groups: set[GroupKey] = set()
        for info in infos:
            kind = self.entity(info.pod)
            if kind == POD:
                pods += 1
                plain += 1
            elif kind == POD_GROUP:
                pods += 1
                key = self.group_key(info.pod)
                assert key is not None
                groups.add(key)
        return pods, plain, len(groups)

    def outside(self, kind: str, infos: Iterable[QueuedPodInfo]) -> int:
        """The members counted as ``incomplete`` or ``pending`` among ``infos``."""
        return sum(1 for info in infos if self.entity(info.pod) == kind)
