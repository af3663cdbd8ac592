"""``CycleState``: per-cycle scratch space shared by one pod's plugin calls.

A plugin writes its precomputed data once (PreFilter, PreScore) under a private key and reads it
many times (Filter, Score). Each plugin module defines its key and a typed getter: ``read`` raises
a clear error when the state is missing, as upstream's ``getPreFilterState`` does;
``read_or_compute`` runs the plugin's own PreFilter first when it did not run (a Filter called
alone, as preemption's what-ifs and the tests do) and gives ``None`` when PreFilter wrote nothing
(it returned Skip). A cycle is single-threaded, so there is no lock.

``pod_group_cycle`` is upstream's ``SetPodGroupSchedulingCycle``: set on a gang member's state while
the PodGroup cycle's algorithm tries the member (``scheduler/podgroup_cycle.py``), cleared before the
member's binding cycle is prepared, so a plugin can tell the two Permit calls apart.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

__all__ = ["CycleState", "PodGroupCycleState", "StateMissingError"]

T = TypeVar("T")


class StateMissingError(LookupError):
    pass


@dataclass(slots=True)
class PodGroupCycleState:
    """What a plugin sees of the PodGroup cycle trying a member (upstream's ``PodGroupCycleState``),
    one object shared by the cycle's members, as upstream's is: ``scheduled`` is the group's
    members assigned or assumed so far, this member included once it is assumed (upstream's
    ``ScheduledPodsCount`` on the cycle's snapshot), kept by the cycle so that GangScheduling's
    Permit does not recount a gang of thousands for each member; ``activated`` is set once
    GangScheduling's Permit has activated the group's unscheduled members in this cycle (upstream
    activates them at every waiting Permit; once per cycle reaches the same pods, as every later
    member was unscheduled at the first)."""

    scheduled: int = 0
    activated: bool = False


class CycleState:
    __slots__ = ("_data", "pod_group_cycle", "record_plugin_metrics", "skip_filter_plugins",
                 "skip_pre_bind_plugins", "skip_score_plugins")

    def __init__(self, *, record_plugin_metrics: bool = False) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        self.skip_pre_bind_plugins: set[str] = set()     # PreBindPreFlight said Skip
        self.record_plugin_metrics = record_plugin_metrics
        self.pod_group_cycle: PodGroupCycleState | None = None

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[T]) -> T:
        try:
            value = self._data[key]
        except KeyError:
            raise StateMissingError(f"error reading {key!r} from cycleState: not found") from None
        if not isinstance(value, kind):
            raise StateMissingError(f"{key!r} in cycleState is {type(value).__name__}, not {kind.__name__}")
        return value

    def read_or_compute(self, key: str, kind: type[T], compute: Callable[[], object]) -> T | None:
        """The ``kind`` entry under ``key``; if there is none, ``compute()`` (the plugin's PreFilter)
        writes it first. ``None`` when ``compute`` wrote none (its PreFilter skipped)."""
        value = self._data.get(key)
        if isinstance(value, kind):
            return value
        compute()
        value = self._data.get(key)
        return value if isinstance(value, kind) else None

    def get(self, key: str) -> Any:
        return self._data.get(key)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def copy(self) -> CycleState:
        """A shallow copy: entries are shared, so a plugin that runs again must write, not mutate."""
        c = CycleState(record_plugin_metrics=False)
        c._data = dict(self._data)
        c.skip_filter_plugins = set(self.skip_filter_plugins)
        c.skip_score_plugins = set(self.skip_score_plugins)
        c.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        c.pod_group_cycle = self.pod_group_cycle
        return c
