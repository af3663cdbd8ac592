"""The live profile map: ``schedulerName -> Framework``, replaced in one assignment.

A SchedulingProfile event compiles the new spec *first*; only a spec that compiles becomes the CR's
*claim* (its last good framework), so a bad edit leaves the last good framework serving. Readers
take ``current`` once per cycle and use that mapping throughout, so a cycle never sees half a change.

**Who owns a schedulerName.** Several CRs may claim one ``schedulerName``; the *oldest* claimant
serves it: the smallest ``(metadata.creationTimestamp, metadata.name)`` (``rank``). The owner is a
function of the set of claims alone, never of the order their events arrived in (initial list,
watch, Kopf's resume), so every replica and every restart agrees on it. The others wait: their
status says who holds the name, and when the owner is deleted or renamed the next one in rank
takes over. A CR that already *serves* a name and is edited to a name an older CR holds is refused,
like an invalid edit: its last good version keeps serving.

**One QueueSort for all.** The queue keeps one activeQ heap for every profile, so sort keys from
different profiles must compare: as upstream's ``profile.NewMap``, every profile uses the same
QueueSort plugin with the same args. A claim whose QueueSort differs from the other CRs' claims is
refused (``ClaimChange.queue_sort_conflict``, upstream's message) and changes nothing: the CR's last
good framework, if any, keeps serving.

Each change returns a ``ClaimChange``: the schedulerNames whose serving framework changed (their
pods are requeued, or parked when nobody serves the name any more) and the *other* CRs whose
standing changed (their status is rewritten).
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from types import MappingProxyType

from scheduler.framework.runtime import Framework
from scheduler.model import Pod

__all__ = ["Claim", "ClaimChange", "ProfileMap", "owner", "queue_sort_conflict", "rank"]


def rank(created: str, cr_name: str) -> tuple[float, str]:
    """The ownership order: older ``creationTimestamp`` first, then the name. A timestamp that is
    missing or unreadable ranks after every readable one, so it never takes a name from a dated CR."""
    try:
        t = datetime.fromisoformat(created.replace("Z", "+00:00")).timestamp() if created else math.inf
    except ValueError:
        t = math.inf
    return t, cr_name


@dataclass(frozen=True)
class Claim:
    """A CR's claim on a schedulerName: its last good framework."""

    cr_name: str
    created: str
    framework: Framework

    @property
    def scheduler_name(self) -> str:
        return self.framework.profile_name

    @property
    def rank(self) -> tuple[float, str]:
        return rank(self.created, self.cr_name)


def owner(claims: Iterable[Claim]) -> Claim | None:
    """The claim that serves a name among ``claims`` (all for that name): the smallest rank."""
    return min(claims, key=lambda c: c.rank, default=None)


@dataclass(frozen=True)
class ClaimChange:
    """What a ``set`` or ``remove`` changed beyond the CR itself."""

    names: frozenset[str] = frozenset()     # schedulerNames whose serving framework changed or went away
    others: frozenset[str] = frozenset()    # other CRs whose standing (owner or waiting, and for whom) changed
    refused_by: str | None = None           # set: the older CR that holds the new name; nothing changed
    queue_sort_conflict: str = ""           # set: upstream's reason the QueueSort differs; nothing changed


def _q(s: str) -> str:
    """Go's ``%q`` for the names in upstream's messages."""
    return json.dumps(s)


def queue_sort_conflict(first: Framework, fwk: Framework) -> str:
    """Why ``fwk`` may not join profiles whose QueueSort is ``first``'s (upstream's ``cfgValidator``
    in ``pkg/scheduler/profile/profile.go``); ``""`` when it may."""
    if fwk.queue_sort.name != first.queue_sort.name:
        return (f"different queue sort plugins for profile {_q(fwk.profile_name)}: {_q(fwk.queue_sort.name)}, "
                f"first: {_q(first.queue_sort.name)}")
    if fwk.queue_sort_args != first.queue_sort_args:
        return f"different queue sort plugin args for profile {_q(fwk.profile_name)}"
    return ""


class ProfileMap:
    """``schedulerName -> Framework`` (upstream's ``profile.Map``), with the CRs' claims behind it."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_scheduler: Mapping[str, Framework] = MappingProxyType({})
        # CR name -> its last good framework; replaced, never mutated, so readers need no lock.
        self._claims: Mapping[str, Claim] = MappingProxyType({})
        self._owners: Mapping[str, str] = MappingProxyType({})  # schedulerName -> the CR serving it

    @property
    def current(self) -> Mapping[str, Framework]:
        return self._by_scheduler

    def for_pod(self, pod: Pod) -> Framework | None:
        return self._by_scheduler.get(pod.scheduler_name)

    def _claimants(self, scheduler_name: str) -> list[Claim]:
        return [c for c in self._claims.values() if c.scheduler_name == scheduler_name]

    def _standing(self, names: Iterable[str]) -> dict[str, str | None]:
        """CR name -> the owner of its name (itself when it serves), for every claimant of ``names``."""
        out: dict[str, str | None] = {}
        for n in names:
            claims = self._claimants(n)
            top = owner(claims)
            for c in claims:
                out[c.cr_name] = top.cr_name if top is not None else None
        return out

    def _swap(self, names: Iterable[str], before: dict[str, str | None], exclude: str) -> ClaimChange:
        """Install each name's owner; report the names and the other CRs that changed."""
        new = dict(self._by_scheduler)
        owners = dict(self._owners)
        changed: set[str] = set()
        for n in names:
            top = owner(self._claimants(n))
            previous = new.get(n)
            if top is None:
                owners.pop(n, None)
                if new.pop(n, None) is not None:
                    changed.add(n)
                continue
            owners[n] = top.cr_name
            fwk = top.framework
            if fwk is previous:
                continue
            if previous is not None:
                # Keep the round-robin position: a live edit should not restart the node scan.
                fwk.next_start_node_index = previous.next_start_node_index
            new[n] = fwk
            changed.add(n)
        self._by_scheduler = MappingProxyType(new)
        self._owners = MappingProxyType(owners)
        after = self._standing(names)
        others = {cr for cr in before.keys() | after.keys() if cr != exclude and before.get(cr) != after.get(cr)}
        return ClaimChange(frozenset(changed), frozenset(others))

    def set(self, cr_name: str, framework: Framework, *, created: str = "") -> ClaimChange:
        """Make ``framework`` CR ``cr_name``'s claim; ``created`` is its ``creationTimestamp``."""
        claim = Claim(cr_name, created, framework)
        name = claim.scheduler_name
        with self._lock:
            first = owner(c for c in self._claims.values() if c.cr_name != cr_name)
            if first is not None and (conflict := queue_sort_conflict(first.framework, framework)):
                return ClaimChange(queue_sort_conflict=conflict)
            prev = self._claims.get(cr_name)
            names = {name} | ({prev.scheduler_name} if prev is not None else set())
            if prev is not None and prev.scheduler_name != name and self.owner_of(prev.scheduler_name) == cr_name:
                holder = owner(self._claimants(name))
                if holder is not None and holder.rank < claim.rank:
                    return ClaimChange(refused_by=holder.cr_name)
            before = self._standing(names)
            self._claims = MappingProxyType({**self._claims, cr_name: claim})
            return self._swap(names, before, cr_name)

    def remove(self, cr_name: str) -> ClaimChange:
        """Drop CR ``cr_name``'s claim; the next claimant in rank, if any, takes its name."""
        with self._lock:
            prev = self._claims.get(cr_name)
            if prev is None:
                return ClaimChange()
            names = {prev.scheduler_name}
            before = self._standing(names)
            self._claims = MappingProxyType({k: c for k, c in self._claims.items() if k != cr_name})
            return self._swap(names, before, cr_name)

    def claim(self, cr_name: str) -> Claim | None:
        return self._claims.get(cr_name)

    def owner_of(self, scheduler_name: str) -> str | None:
        """The CR that serves ``scheduler_name``, if any."""
        return self._owners.get(scheduler_name)

    def claimants(self, scheduler_name: str) -> list[str]:
        """Every CR claiming ``scheduler_name``, the owner first, then in rank order."""
        return [c.cr_name for c in sorted(self._claimants(scheduler_name), key=lambda c: c.rank)]
