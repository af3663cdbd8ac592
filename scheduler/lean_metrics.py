"""Counters and histograms for the scheduling cycle's hot path, exposed as prometheus_client's are.

The cycle records about thirty samples a pod: ``scheduler_plugin_evaluation_total`` for every
PreFilter, Filter, PreScore and Score plugin, the extension points' durations, the sampled plugin
durations, the attempt's, the REST client's. prometheus_client's children check that they are
observable, then take one lock per value they touch: a histogram observation takes two (the sum
and the bucket) and walks the bounds in Python. End to end that was 6 % of the operator's CPU.

These children keep a list of bucket counts and a sum behind one lock, taken with its bound
``acquire``/``release`` (a ``with`` block costs twice as much), and find the bucket by bisection.
They are collectors of a registry like any other: ``/metrics`` renders them through
``generate_latest``, in prometheus_client's text and order (buckets, ``_count``, ``_sum``; a
counter's ``_total``; no ``_created``, as ``disable_created_metrics`` has it for the rest).

The families keep prometheus_client's attribute names for what a metric is (``_name``, ``_type``,
``_documentation``, ``_labelnames``, ``_upper_bounds``), which tests/metrics/test_metrics.py reads
to hold every metric against upstream's list.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import Generic, TypeVar

from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.utils import INF, floatToGoString

__all__ = ["LeanCounter", "LeanHistogram"]


class CounterChild:
    """One label set's count."""

    __slots__ = ("_acquire", "_release", "value")

    def __init__(self) -> None:
        lock = threading.Lock()
        self._acquire = lock.acquire
        self._release = lock.release
        self.value = 0.0

    def inc(self, amount: float = 1) -> None:
        if amount < 0:
            raise ValueError("Counters can only be incremented by non-negative amounts.")
        self._acquire()
        try:                        # (free on the way through in 3.11; the lock never stays held)
            self.value += amount
        finally:
            self._release()

    def get(self) -> float:
        return self.value


class HistogramChild:
    """One label set's bucket counts (not cumulative: the exposition sums them) and sum."""

    __slots__ = ("_acquire", "_bounds", "_release", "counts", "total")

    def __init__(self, bounds: list[float]) -> None:
        lock = threading.Lock()
        self._acquire = lock.acquire
        self._release = lock.release
        self._bounds = bounds
        self.counts = [0] * len(bounds)
        self.total = 0.0

    def observe(self, amount: float) -> None:
        # The first bound at or above ``amount`` (le is inclusive; the last bound is +Inf), found
        # before the lock is taken: what is not a number raises here. NaN (unequal to itself) goes
        # in no bucket and in the sum, as prometheus_client counts it.
        i = bisect_left(self._bounds, amount) if amount == amount else -1  # noqa: PLR0124
        self._acquire()
        try:
            if i >= 0:
                self.counts[i] += 1
            self.total += amount
        finally:
            self._release()

    def snapshot(self) -> tuple[list[int], float]:
        self._acquire()
        try:
            return list(self.counts), self.total
        finally:
            self._release()


C = TypeVar("C", CounterChild, HistogramChild)


class _Family(Generic[C]):
    """A metric's children by label values; a metric without labels has one, made at once, so that
    it is exposed (at zero) before its first sample, as prometheus_client exposes it."""

    _type = ""

    def __init__(self, name: str, documentation: str, labelnames: Iterable[str] = (), *,
                 registry: CollectorRegistry | None = None) -> None:
        self._name = name
        self._documentation = documentation
        self._labelnames = tuple(labelnames)
        self._lock = threading.Lock()
        self._children: dict[tuple[str, ...], C] = {}
        if not self._labelnames:
            self._children[()] = self._new_child()
        if registry is not None:
            registry.register(self)  # type: ignore[arg-type]  # a Collector by its collect()

    def _new_child(self) -> C:
        raise NotImplementedError

    def labels(self, *values: str) -> C:
        if not self._labelnames:
            raise ValueError(f"No label names were set when constructing {self._name}")
        if len(values) != len(self._labelnames):
            raise ValueError("Incorrect label count")
        key = tuple(str(v) for v in values)
        child = self._children.get(key)
        if child is None:
            with self._lock:
                child = self._children.get(key)
                if child is None:
                    child = self._children[key] = self._new_child()
        return child

    def _solo(self) -> C:
        if self._labelnames:
            raise ValueError(f"{self._name} has labels {self._labelnames}: call .labels() first")
        return self._children[()]

    def _items(self) -> list[tuple[tuple[str, ...], C]]:
        with self._lock:
            return list(self._children.items())

    def describe(self) -> list[Metric]:
        return [self._family()]

    def _family(self) -> Metric:
        raise NotImplementedError


class LeanCounter(_Family[CounterChild]):
    """prometheus_client's ``Counter`` for ``labels(...).inc(n)`` and, unlabelled, ``inc(n)``."""

    _type = "counter"

    def _new_child(self) -> CounterChild:
        return CounterChild()

    def inc(self, amount: float = 1) -> None:
        self._solo().inc(amount)

    def get(self) -> float:
        return self._solo().get()

    def _family(self) -> Metric:
        return CounterMetricFamily(self._name, self._documentation, labels=self._labelnames)

    def collect(self) -> list[Metric]:
        family = CounterMetricFamily(self._name, self._documentation, labels=self._labelnames)
        for values, child in self._items():
            family.add_metric(values, child.value)
        return [family]


class LeanHistogram(_Family[HistogramChild]):
    """prometheus_client's ``Histogram`` for ``labels(...).observe(v)`` and, unlabelled,
    ``observe(v)``. ``buckets`` are the upper bounds; +Inf is added, as prometheus_client adds it."""

    _type = "histogram"

    def __init__(self, name: str, documentation: str, labelnames: Iterable[str] = (), *,
                 buckets: Sequence[float], registry: CollectorRegistry | None = None) -> None:
        bounds = [float(b) for b in buckets]
        if bounds != sorted(bounds):
            raise ValueError("Buckets not in sorted order")
        if not bounds or bounds[-1] != INF:
            bounds.append(INF)
        self._upper_bounds = bounds
        self._le: list[str] = [floatToGoString(b) for b in bounds]  # type: ignore[no-untyped-call]
        super().__init__(name, documentation, labelnames, registry=registry)

    def _new_child(self) -> HistogramChild:
        return HistogramChild(self._upper_bounds)

    def observe(self, amount: float) -> None:
        self._solo().observe(amount)

    def _family(self) -> Metric:
        return HistogramMetricFamily(self._name, self._documentation, labels=self._labelnames)

    def collect(self) -> list[Metric]:
        family = HistogramMetricFamily(self._name, self._documentation, labels=self._labelnames)
        for values, child in self._items():
            counts, total = child.snapshot()
            cumulative, running = [], 0
            for le, n in zip(self._le, counts, strict=True):
                running += n
                cumulative.append((le, float(running)))
            family.add_metric(values, cumulative, total)
        return [family]
