"""The live profile map: ``schedulerName -> Framework``, replaced in one assignment.

A SchedulingProfile event compiles the new spec *first*; only a spec that compiles replaces the
entry, so a bad edit leaves the last good framework serving. Readers take ``current`` once per
cycle and use that mapping throughout, so a cycle never sees half a change. Two CRs claiming one
``schedulerName`` are a conflict: the first keeps it, the second is rejected.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from types import MappingProxyType

from scheduler.errors import ProfileError
from scheduler.framework.runtime import Framework
from scheduler.model import Pod

__all__ = ["ProfileMap"]


class ProfileMap:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_scheduler: Mapping[str, Framework] = MappingProxyType({})
        self._owner: dict[str, str] = {}  # schedulerName -> CR name
        self._cr: dict[str, str] = {}  # CR name -> schedulerName

    @property
    def current(self) -> Mapping[str, Framework]:
        return self._by_scheduler

    def for_pod(self, pod: Pod) -> Framework | None:
        return self._by_scheduler.get(pod.scheduler_name)

    def set(self, cr_name: str, framework: Framework) -> Framework | None:
        """Install ``framework`` for CR ``cr_name``; returns the framework it replaced."""
        name = framework.profile_name
        with self._lock:
            owner = self._owner.get(name)
            if owner is not None and owner != cr_name:
                raise ProfileError(f"schedulerName {name!r} is already served by SchedulingProfile {owner!r}",
                                   field="spec.schedulerName")
            new = dict(self._by_scheduler)
            old_name = self._cr.get(cr_name)
            if old_name is not None and old_name != name:
                new.pop(old_name, None)
                self._owner.pop(old_name, None)
            previous = new.get(name)
            if previous is not None:
                # Keep the round-robin position: a live edit should not restart the node scan.
                framework.next_start_node_index = previous.next_start_node_index
            new[name] = framework
            self._owner[name] = cr_name
            self._cr[cr_name] = name
            self._by_scheduler = MappingProxyType(new)
            return previous

    def remove(self, cr_name: str) -> str | None:
        with self._lock:
            name = self._cr.pop(cr_name, None)
            if name is None:
                return None
            new = dict(self._by_scheduler)
            new.pop(name, None)
            self._owner.pop(name, None)
            self._by_scheduler = MappingProxyType(new)
            return name

    def owner_of(self, scheduler_name: str) -> str | None:
        return self._owner.get(scheduler_name)
