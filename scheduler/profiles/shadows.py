"""Shadow profiles: a profile that decides alongside a live one and binds nothing.

A SchedulingProfile with ``spec.shadowOf: <schedulerName>`` claims no schedulerName. For every pod
the live profile serving that name schedules, the cycle (``cycle.Scheduler``) runs the shadow on
the *same snapshot*, right after the live decision and under the same cache lock, and counts the
outcome:

- ``agreed``: the shadow would choose the live profile's node (or both leave the pod pending);
- ``differed``: it would choose another node (or place a pod the live profile left pending);
- ``wouldBePending``: it would leave pending a pod the live profile placed.

So a user tunes a copy of their profile live, watches its agreement, then swaps the names.

**Cheap by reuse.** A shadow usually changes scoring, not filtering. When its PreFilter and Filter
plugins, their args and ``percentageOfNodesToScore`` equal the live profile's
(``Framework.filter_signature``), the live search *is* the shadow's: same feasible nodes, same
rejections. Of its Score plugins, those configured exactly as the live profile's (same name and
args) would compute the same normalised scores on those nodes, so they are taken from the live
run and weighed with the shadow's weights; only the others run (their PreScore into a copy of the
live cycle state). A shadow that changes one plugin's args or a weight costs one plugin's Score
pass. A shadow that filters differently runs its whole algorithm. A tie counts as agreement: if
the live node is among the shadow's best, the shadow accepts it.

``ShadowStats`` keeps the counts and the last ``MAX_DIFFERENCES`` differences (both nodes and both
chosen totals, or why the shadow would leave the pod pending). The operator writes them into the
shadow CR's ``status.shadow`` (``Shadows.take_updates``); the counts also go to
``scheduler_shadow_decisions_total{profile, outcome}`` with the shadow CR's name as ``profile``
(a shadow often keeps the live profile's schedulerName).
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from scheduler.framework.runtime import Framework

__all__ = ["MAX_DIFFERENCES", "OUTCOMES", "ReusePlan", "Shadow", "ShadowDifference", "ShadowStats", "Shadows"]

OUTCOMES = ("agreed", "differed", "wouldBePending")
MAX_DIFFERENCES = 20


@dataclass(frozen=True, slots=True)
class ShadowDifference:
    """One pod the shadow would have placed differently: both nodes (None: pending) and both totals,
    or the shadow's reason for leaving it pending."""

    pod: str
    time: float
    live_node: str | None
    live_score: int | None
    shadow_node: str | None
    shadow_score: int | None
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        shadow: dict[str, Any] = {"node": self.shadow_node, "score": self.shadow_score}
        if self.reason:
            shadow["reason"] = self.reason
        return {"pod": self.pod, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)),
                "live": {"node": self.live_node, "score": self.live_score}, "shadow": shadow}


class ShadowStats:
    """The counts and the last differences of one shadow; written by the cycle, read by the status
    writer on another thread, hence the lock. ``version`` grows with every record."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.counts = dict.fromkeys(OUTCOMES, 0)
        self.differences: deque[ShadowDifference] = deque(maxlen=MAX_DIFFERENCES)
        self.version = 0

    def record(self, outcome: str, difference: ShadowDifference | None) -> None:
        with self._lock:
            self.counts[outcome] += 1
            if difference is not None:
                self.differences.append(difference)
            self.version += 1

    def to_json(self, shadow_of: str) -> dict[str, Any]:
        """The CR's ``status.shadow``: counts, then the differences, newest last."""
        with self._lock:
            return {"shadowOf": shadow_of, **self.counts, "differences": [d.to_json() for d in self.differences]}


@dataclass(frozen=True, slots=True)
class ReusePlan:
    """What a shadow takes from its live profile's run (see the module docstring)."""

    filters_same: bool
    reused: frozenset[str]          # Score plugins whose normalised scores are the live run's
    rescored: frozenset[str]        # the shadow's Score plugins that run (with their PreScore)


def plan_reuse(live: Framework, shadow: Framework) -> ReusePlan:
    live_scores = {p.name for p, _ in live.score}
    reused = frozenset(p.name for p, _ in shadow.score if p.name in live_scores
                       and live.plugin_args.get(p.name) == shadow.plugin_args.get(p.name))
    return ReusePlan(live.filter_signature() == shadow.filter_signature(), reused,
                     frozenset(p.name for p, _ in shadow.score) - reused)


@dataclass(slots=True)
class Shadow:
    """One shadow CR: the live schedulerName it follows, its compiled framework and its stats."""

    cr_name: str
    shadow_of: str
    framework: Framework
    stats: ShadowStats = field(default_factory=ShadowStats)
    _plans: dict[int, tuple[Framework, ReusePlan]] = field(default_factory=dict)

    def plan(self, live: Framework) -> ReusePlan:
        """The reuse plan against ``live``, computed once per live framework (a live edit compiles a
        new one, and the plan follows it)."""
        hit = self._plans.get(id(live))
        if hit is None or hit[0] is not live:
            self._plans.clear()
            hit = self._plans[id(live)] = (live, plan_reuse(live, self.framework))
        return hit[1]


class Shadows:
    """The shadow CRs by name, and by the live schedulerName they follow. Replaced, never mutated,
    so the cycle reads ``for_live`` without a lock."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._by_cr: Mapping[str, Shadow] = MappingProxyType({})
        self._by_live: Mapping[str, tuple[Shadow, ...]] = MappingProxyType({})
        self._written: dict[str, int] = {}      # CR -> the stats version last handed out

    def _publish(self, by_cr: dict[str, Shadow]) -> None:
        by_live: dict[str, list[Shadow]] = {}
        for sh in sorted(by_cr.values(), key=lambda s: s.cr_name):
            by_live.setdefault(sh.shadow_of, []).append(sh)
        self._by_cr = MappingProxyType(by_cr)
        self._by_live = MappingProxyType({k: tuple(v) for k, v in by_live.items()})

    def set(self, cr_name: str, shadow_of: str, framework: Framework) -> Shadow:
        """Add or replace a shadow. An edit keeps its stats unless it now follows another name."""
        with self._lock:
            by_cr = dict(self._by_cr)
            old = by_cr.get(cr_name)
            stats = old.stats if old is not None and old.shadow_of == shadow_of else ShadowStats()
            by_cr[cr_name] = sh = Shadow(cr_name, shadow_of, framework, stats)
            if old is None or old.stats is not stats:
                self._written.pop(cr_name, None)
            self._publish(by_cr)
            return sh

    def remove(self, cr_name: str) -> bool:
        with self._lock:
            if cr_name not in self._by_cr:
                return False
            by_cr = dict(self._by_cr)
            del by_cr[cr_name]
            self._publish(by_cr)
            return True

    def get(self, cr_name: str) -> Shadow | None:
        return self._by_cr.get(cr_name)

    def for_live(self, scheduler_name: str) -> tuple[Shadow, ...]:
        return self._by_live.get(scheduler_name, ())

    def __len__(self) -> int:
        return len(self._by_cr)

    def take_updates(self) -> dict[str, dict[str, Any] | None]:
        """``status.shadow`` of each shadow whose stats changed since the last call (a new shadow
        too, with zero counts), and ``None`` for a CR that stopped being a shadow."""
        with self._lock:
            out: dict[str, dict[str, Any] | None] = {}
            for name, sh in self._by_cr.items():
                if self._written.get(name) != sh.stats.version:
                    self._written[name] = sh.stats.version
                    out[name] = sh.stats.to_json(sh.shadow_of)
            for name in [n for n in self._written if n not in self._by_cr]:
                del self._written[name]
                out[name] = None
            return out
