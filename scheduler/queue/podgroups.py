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

Two structures, both O(1) per queue operation:

* ``members``: the pods the queue knows (queued or in flight) that name a group, by group, so that
  ``pop_group`` costs the group's size rather than the queue's. Entries leave on ``unindex`` (the
  queue's ``delete``, or lazily in ``pop_group`` once the pod is neither queued nor in flight).
* ``waiting``: per sub-queue, per group, how many members are there now. The sub-queues call
  ``enter`` and ``leave`` on every change of membership (a move is a leave then an enter; a pod
  replaced in place enters its sub-queue again, under the group its new spec names); a member's
  (sub-queue, group) is recorded when it enters, so it leaves exactly what it entered. A group is an
  entity of a sub-queue while its count there is above 0, so "entered as an entity" is a 0 -> 1
  transition (``alone``), found without looking at the other members. Whether that entity is a
  ``podgroup``, ``incomplete`` or ``pending`` is a property of the group at the time it is read
  (``kind``), so the counts hold every member whatever its kind, and the gauges apply the kind when
  scraped: one pass over the groups in a sub-queue, not over its pods.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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
    """The queue's PodGroup index and per-sub-queue member counts (the module docstring). Not
    thread-safe on its own: the queue calls it under its lock."""

    def __init__(self) -> None:
        # GenericWorkload: whether a PodGroup exists (the service sets it with the gate); None: every
        # pod is its own entity.
        self.pod_group_exists: Callable[[str, str], bool] | None = None
        self._in_cycle: set[GroupKey] = set()
        self._members: dict[GroupKey, dict[str, None]] = {}
        self._group_of_uid: dict[str, GroupKey] = {}
        # sub-queue -> group -> members there now (no zero entries), and where each member was counted.
        self._waiting: dict[str, dict[GroupKey, int]] = {}
        self._counted: dict[str, tuple[str, GroupKey]] = {}

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

    # --- who waits where (the sub-queues call these) ---------------------------------------
    def enter(self, queue: str, uid: str, pod: Pod) -> None:
        """``uid`` is now in sub-queue ``queue`` (leaving wherever it was counted before)."""
        if uid in self._counted:
            self.leave(uid)
        if not pod.scheduling_group:
            return
        key = (pod.namespace, pod.scheduling_group)
        self._counted[uid] = (queue, key)
        groups = self._waiting.setdefault(queue, {})
        groups[key] = groups.get(key, 0) + 1

    def leave(self, uid: str) -> None:
        """``uid`` left its sub-queue (a no-op for a pod in no group)."""
        hit = self._counted.pop(uid, None)
        if hit is None:
            return
        queue, key = hit
        groups = self._waiting[queue]
        n = groups[key] - 1
        if n:
            groups[key] = n
        else:
            del groups[key]

    def alone(self, queue: str, uid: str, key: GroupKey) -> bool:
        """Whether no member of ``key`` other than ``uid`` waits in ``queue``: the group enters it
        as an entity (``uid`` may be there already, or have passed through on its way elsewhere,
        as a pod popped from backoffQ counts as coming into activeQ)."""
        n = self._waiting.get(queue, {}).get(key, 0)
        if self._counted.get(uid) == (queue, key):
            n -= 1
        return n == 0

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

    def incoming_entity(self, queue: str, uid: str, pod: Pod) -> str | None:
        """The entity type that ``uid`` brings into ``queue`` as it enters: ``pod``, ``podgroup``
        when its group was not there yet, else None (a member of a group already there, or one
        counted as ``incomplete`` or ``pending``)."""
        key = self.group_key(pod)
        if key is None:
            return POD
        if self.kind(key) == POD_GROUP and self.alone(queue, uid, key):
            return POD_GROUP
        return None

    # --- the gauges (read when scraped; ``size`` is the sub-queue's pod count) ----------------
    def census(self, queue: str, size: int) -> tuple[int, int, int]:
        """Of ``queue``'s ``size`` pods: how many count there (``pending_pods``: all but the
        ``incomplete`` and ``pending`` members), its ``pod`` entities and its ``podgroup`` entities."""
        if self.pod_group_exists is None:
            return size, size, 0
        groups = self._waiting.get(queue, {})
        members = outside = entities = 0
        for key, n in groups.items():
            members += n
            if self.kind(key) == POD_GROUP:
                entities += 1
            else:
                outside += n
        return size - outside, size - members, entities

    def outside(self, kind: str, queues: Iterable[str]) -> int:
        """The members counted as ``incomplete`` or ``pending`` across ``queues``."""
        if self.pod_group_exists is None:
            return 0
        return sum(n for q in queues for key, n in self._waiting.get(q, {}).items() if self.kind(key) == kind)
