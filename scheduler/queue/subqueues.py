"""The scheduling queue's sub-queues as containers: activeQ's and backoffQ's pods by uid
(``_SubQueue``) and the unschedulable pods (``_Unschedulable``), with the sub-queue names.

``scheduling_queue.SchedulingQueue`` owns the ordering (the heaps), the moves between sub-queues
and the lock; what lives here is only the bookkeeping each sub-queue keeps beside its pods, split
out so that the queue's state machine reads on its own:

* every pod put in or taken out of any sub-queue is reported to ``podgroups.PodGroups``
  (``enter``/``leave``) under the sub-queue's name, which is what the entity metrics
  (``scheduler_queued_entities``, ``scheduler_pending_pods``) count from;
* the unschedulable pods are also indexed by scheduler name and gating plugin, and within that by
  PodGroup, so that a move event is checked once per group of gated pods rather than once per pod.

These classes take no lock: the queue calls them under its own. The names keep their leading
underscore because nothing outside ``scheduler.queue`` should hold one.
"""

from __future__ import annotations

import itertools
from typing import Any

from scheduler.framework.types import QueuedPodInfo
from scheduler.queue.podgroups import PodGroups, pod_group_of

__all__ = ["ACTIVE", "BACKOFF", "GATED", "UNSCHEDULABLE"]

ACTIVE, BACKOFF, UNSCHEDULABLE, GATED = "active", "backoff", "unschedulable", "gated"


class _Unschedulable(dict[str, QueuedPodInfo]):
    """The unschedulable pods by uid, with the gated ones also grouped by scheduler name and gating
    plugin (``gated``), so that an event no gating plugin registered for passes a whole group with
    one check instead of one per pod: with SchedulingWhileGated's 10,000 gated pods, every pod
    event walked all of them. A pod's ``gating_plugin`` is set before it is put here and does not
    change while it is here (``_admit``), so the group it was filed under is the one it leaves.

    Each gated group is also split by the pods' PodGroup (``by_pod_group``: namespace and
    ``schedulingGroup``; ``("", "")`` for pods in none), so that a plugin whose gate is the same for
    a whole PodGroup (GangScheduling) is asked once per group rather than once per pod
    (``SchedulingQueue._ungate_by_pod_group``). ``order`` numbers the pods in the order they were
    filed, which is each dict's iteration order (``pop_group`` sorts by it). Every pod filed or
    unfiled is reported to ``groups`` (``PodGroups.enter``/``leave``), as unschedulable or gated."""

    def __init__(self, groups: PodGroups) -> None:
        super().__init__()
        self._groups = groups
        self.gated: dict[tuple[str, str], dict[str, QueuedPodInfo]] = {}
        self.by_pod_group: dict[tuple[str, str], dict[tuple[str, str], dict[str, QueuedPodInfo]]] = {}
        self.plain: dict[str, QueuedPodInfo] = {}         # the others, in the order they came
        self.order: dict[str, int] = {}
        # Where each gated pod was filed: its pod may be replaced (``update``) before it leaves.
        self._filed: dict[str, tuple[tuple[str, str], tuple[str, str]]] = {}
        self._seq = itertools.count()

    def __setitem__(self, uid: str, info: QueuedPodInfo) -> None:
        self._unfile(uid)
        super().__setitem__(uid, info)
        self.order[uid] = next(self._seq)
        self._groups.enter(GATED if info.gating_plugin else UNSCHEDULABLE, uid, info.pod)
        if info.gating_plugin:
            key, pg = (info.pod.scheduler_name, info.gating_plugin), pod_group_of(info.pod)
            self._filed[uid] = (key, pg)
            self.gated.setdefault(key, {})[uid] = info
            self.by_pod_group.setdefault(key, {}).setdefault(pg, {})[uid] = info
        else:
            self.plain[uid] = info

    def __delitem__(self, uid: str) -> None:
        self._unfile(uid)
        super().__delitem__(uid)

    def pop(self, uid: str, default: QueuedPodInfo | None = None) -> QueuedPodInfo | None:  # type: ignore[override]
        self._unfile(uid)
        return super().pop(uid, default)

    def _unfile(self, uid: str) -> None:
        if uid not in self:
            return
        del self.order[uid]
        self._groups.leave(uid)
        filed = self._filed.pop(uid, None)
        if filed is None:
            self.plain.pop(uid, None)
            return
        key, pg = filed
        group = self.gated.get(key)
        if group is not None:
            group.pop(uid, None)
            if not group:
                del self.gated[key]
        groups = self.by_pod_group.get(key)
        if groups is not None:
            members = groups.get(pg)
            if members is not None:
                members.pop(uid, None)
                if not members:
                    del groups[pg]
            if not groups:
                del self.by_pod_group[key]


class _SubQueue(dict[str, tuple[QueuedPodInfo, int]]):
    """activeQ's or backoffQ's pods by uid, each with its heap entry id; every pod put in or taken
    out is reported to the PodGroup counts (``PodGroups.enter``/``leave``) under the queue's name."""

    def __init__(self, name: str, groups: PodGroups) -> None:
        super().__init__()
        self._name = name
        self._groups = groups

    def __setitem__(self, uid: str, hit: tuple[QueuedPodInfo, int]) -> None:
        super().__setitem__(uid, hit)
        self._groups.enter(self._name, uid, hit[0].pod)

    def __delitem__(self, uid: str) -> None:
        super().__delitem__(uid)
        self._groups.leave(uid)

    def pop(self, uid: str, default: Any = None) -> Any:
        if uid not in self:
            return default
        hit = super().pop(uid)
        self._groups.leave(uid)
        return hit

    def take(self, uid: str) -> QueuedPodInfo | None:
        """Remove ``uid`` if it is here: its pod info, else None."""
        hit = self.pop(uid)
        return None if hit is None else hit[0]
