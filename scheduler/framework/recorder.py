"""``Recorder``: a framework's per-extension-point and per-plugin metrics, as upstream's framework
records them (``frameworkImpl`` with its ``metricsRecorder``).

- ``scheduler_framework_extension_point_duration_seconds{extension_point,status,profile}`` on every
  run of an extension point;
- ``scheduler_plugin_evaluation_total{plugin,extension_point,profile}`` for every call of a
  PreFilter, Filter, PreScore and Score plugin (Filter and Score once per node evaluated);
- ``scheduler_plugin_execution_duration_seconds{plugin,extension_point,status}`` only on the cycles
  sampled for it (``CycleState.record_plugin_metrics``, ``PLUGIN_METRICS_SAMPLE_PERCENT``).

The cycle records a dozen of these a pod per extension point, so each label child is resolved once
per framework, by a key that needs no label string built, and each extension point keeps its
plugins' evaluation children in run order. A cycle not sampled for plugin durations tests that once
an extension point (``timed``), not once a plugin.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any, Protocol

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Code, Status
from scheduler.metrics import Children, Metrics

__all__ = ["Recorder"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class Recorder:
    """One framework's metric children; does nothing without ``metrics``."""

    __slots__ = ("_evaluation_children", "_evaluations", "_metrics", "_plugin_durations", "_point_children",
                 "_point_durations", "_profile")

    def __init__(self, metrics: Metrics | None, profile_name: str) -> None:
        self._metrics = metrics
        self._profile = profile_name
        self._point_durations = Children(metrics.framework_extension_point_duration) if metrics else None
        self._plugin_durations = Children(metrics.plugin_execution_duration) if metrics else None
        self._point_children: dict[tuple[str, Code], Any] = {}
        self._evaluation_children: dict[tuple[str, str], Any] = {}
        self._evaluations: dict[str, list[Any]] = {}

    def observe_point(self, point: str, status: Status, t0: float) -> None:
        """An extension point's run, begun at ``t0`` (``time.perf_counter``), ended with ``status``."""
        if self._point_durations is not None:
            child = self._point_children.get((point, status.code))
            if child is None:
                child = self._point_children[(point, status.code)] = self._point_durations(
                    point, str(status.code), self._profile)
            child.observe(time.perf_counter() - t0)

    def timed(self, state: CycleState) -> bool:
        """Whether this cycle records its plugins' durations."""
        return self._plugin_durations is not None and state.record_plugin_metrics

    def observe_plugin(self, state: CycleState, plugin: str, point: str, status: Status, t0: float) -> None:
        """A plugin's run at ``point``, on a cycle sampled for it (else nothing)."""
        if self._plugin_durations is not None and state.record_plugin_metrics:
            self._plugin_durations(plugin, point, str(status.code)).observe(time.perf_counter() - t0)

    def evaluations(self, point: str, plugins: Sequence[_Named]) -> list[Any]:
        """Each of ``plugins``' evaluation child at ``point``, in their order (Nones without
        metrics): ``child.inc(n)`` counts ``n`` evaluations. ``plugins`` must be the point's own
        list, the same every call (the children are kept by point)."""
        got = self._evaluations.get(point)
        if got is None:
            got = self._evaluations[point] = [self._evaluation_child(p.name, point) for p in plugins]
        return got

    def _evaluation_child(self, plugin: str, point: str) -> Any:
        if self._metrics is None:
            return None
        child = self._evaluation_children.get((plugin, point))
        if child is None:
            child = self._evaluation_children[(plugin, point)] = self._metrics.plugin_evaluation_total.labels(
                plugin, point, self._profile)
        return child
