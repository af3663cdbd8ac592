"""The PodGroups the scheduler knows (``scheduling.k8s.io/v1beta1``): upstream's PodGroup lister, as a
core store.

The edge (the operator's PodGroup informer, which runs only with the ``GenericWorkload`` gate) feeds it
with ``on_event(event, body)``; plugins read it through ``Handle.pod_groups``: ``get(namespace,
name)`` for the group a pod names in ``Pod.scheduling_group``. It does no I/O and holds only the parsed
objects (``scheduler.model.podgroup``). A body that does not parse is dropped and reported by the
return value, so one bad object never blocks a cycle: the group then reads as absent, as a group the
informer never delivered would (a pod may name a PodGroup that does not exist yet).

It also follows the group's *members*, upstream's ``PodGroupState`` (``backend/podgroupmanager``): the
service tells it of every pod that names a group (``track``, ``untrack``), assigned or not, so that
GangScheduling's PreEnqueue counts the pods that exist (``AllPodsCount``) and its Permit the ones that
are scheduled (assigned, or assumed by the cache: ``scheduled``).

Writes come from the worker loop's informer and reads from the scheduling cycle; one dict assignment
or deletion per event keeps every read consistent without a lock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler.errors import ParseError
from scheduler.model import Pod
from scheduler.model.podgroup import PodGroup, parse_pod_group

__all__ = ["PodGroupStore"]


class PodGroupStore:
    def __init__(self) -> None:
        self._groups: dict[tuple[str, str], PodGroup] = {}
        # (namespace, group) -> {uid: pod}: every live pod that names the group, bound or not.
        self._members: dict[tuple[str, str], dict[str, Pod]] = {}
        self._group_of: dict[str, tuple[str, str]] = {}
        # Bumped on every track and untrack: what is derived from the members holds until it moves.
        self.version = 0
        # The groups (by uid) a PodGroup cycle of this scheduler found feasible: their
        # PodGroupInitiallyScheduled=True is written, or on its way once the binds are through.
        self._feasible: set[str] = set()

    # --- members (upstream's PodGroupState) ---------------------------------------------------
    def track(self, pod: Pod) -> None:
        """A pod that exists (pending or bound, not terminated): counted in its group, if it names one."""
        if not pod.scheduling_group:
            return
        key = (pod.namespace, pod.scheduling_group)
        self.version += 1
        self._group_of[pod.uid] = key
        self._members.setdefault(key, {})[pod.uid] = pod

    def untrack(self, uid: str) -> None:
        """The pod is gone (deleted, or terminated): no longer counted."""
        key = self._group_of.pop(uid, None)
        if key is None:
            return
        self.version += 1
        members = self._members.get(key)
        if members is not None:
            members.pop(uid, None)
            if not members:
                del self._members[key]

    def group_of(self, uid: str) -> tuple[str, str] | None:
        """The (namespace, group) a tracked pod names."""
        return self._group_of.get(uid)

    def members(self, namespace: str, name: str) -> list[Pod]:
        """The group's pods as last seen (``AllPods``)."""
        return list(self._members.get((namespace, name), {}).values())

    def all_pods_count(self, namespace: str, name: str) -> int:
        """Upstream's ``AllPodsCount``: the pods that name the group and exist."""
        return len(self._members.get((namespace, name), ()))

    def scheduled(self, namespace: str, name: str, placed: Callable[[str], bool]) -> list[Pod]:
        """The members ``placed`` says are assigned or assumed (``ScheduledPodsCount``'s pods)."""
        return [p for uid, p in list(self._members.get((namespace, name), {}).items()) if placed(uid)]

    def get(self, namespace: str, name: str) -> PodGroup | None:
        return self._groups.get((namespace, name))

    def __len__(self) -> int:
        return len(self._groups)

    def __iter__(self) -> Iterator[PodGroup]:
        return iter(list(self._groups.values()))

    def mark_feasible(self, group: PodGroup) -> None:
        """A PodGroup cycle found ``group`` feasible: its True condition is written or on its way."""
        self._feasible.add(group.uid)

    def was_feasible(self, group: PodGroup) -> bool:
        """Whether a PodGroup cycle found ``group`` feasible before (``mark_feasible``): the
        condition then reads as True, even before the informer brings the write back, so a later
        cycle never writes ``False`` over it (upstream writes True in the cycle itself)."""
        return group.uid in self._feasible

    def upsert(self, group: PodGroup) -> None:
        self._groups[(group.namespace, group.name)] = group

    def delete(self, namespace: str, name: str) -> None:
        gone = self._groups.pop((namespace, name), None)
        if gone is not None:
            self._feasible.discard(gone.uid)

    def on_event(self, event: str, body: Mapping[str, Any]) -> PodGroup | None:
        """Apply a watch event (ADDED, MODIFIED, DELETED); the group as now stored, ``None`` when it
        was deleted or cannot be read (then it is dropped: it reads as absent)."""
        meta = body.get("metadata") or {}
        key = (str(meta.get("namespace") or "default"), str(meta.get("name") or ""))
        if event == "DELETED":
            self.delete(*key)
            return None
        try:
            group = parse_pod_group(body)
        except ParseError:
            self._groups.pop(key, None)
            return None
        self._groups[key] = group
        return group
