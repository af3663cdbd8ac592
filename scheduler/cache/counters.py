"""Incrementally maintained per-node counts of pods that match a predicate.

PodTopologySpread and InterPodAffinity ask "how many pods matching selector S are on each node".
Recomputing that per cycle is O(pods); instead each distinct predicate (a ``SpreadMatch`` or a
``TermMatch``, hashable, so pods from one template share it) gets an int32 count per node row,
built once by scanning the cache and then updated on every pod add and remove. The registry is an
LRU bounded at ``MAX_COUNTERS``, so a stream of unique selectors cannot grow it without bound.

``TermHolders`` is the inverse index for *existing* pods' terms: for each distinct affinity term
held by some assigned pod, the rows (and summed counts or weights) of the pods holding it. The
incoming pod is matched once against each distinct term instead of once per existing pod.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from scheduler.model import LabelSelector, Pod, PodAffinityTerm

__all__ = ["MAX_COUNTERS", "AllTermsMatch", "PodCounters", "PodPredicate", "SpreadMatch",
           "TermHolders", "TermMatch", "term_match"]

MAX_COUNTERS = 512
NsLabels = Callable[[str], Mapping[str, str]]
CountArray = npt.NDArray[np.int32]


class PodPredicate(Protocol):
    @property
    def uses_namespace_labels(self) -> bool: ...

    def matches(self, pod: Pod, ns_labels: NsLabels) -> bool: ...


@dataclass(frozen=True, slots=True)
class SpreadMatch:
    """PodTopologySpread's ``countPodsMatchSelector``: same namespace, not terminating."""

    namespace: str
    selector: LabelSelector

    @property
    def uses_namespace_labels(self) -> bool:
        return False

    def matches(self, pod: Pod, ns_labels: NsLabels) -> bool:
        return pod.namespace == self.namespace and not pod.deleting and self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class TermMatch:
    """An affinity term's pod predicate (upstream ``AffinityTerm.Matches``), topology aside."""

    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    selector: LabelSelector | None

    @property
    def uses_namespace_labels(self) -> bool:
        return self.namespace_selector is not None

    def matches(self, pod: Pod, ns_labels: NsLabels) -> bool:
        if self.selector is None:
            return False
        if pod.namespace not in self.namespaces and (
            self.namespace_selector is None or not self.namespace_selector.matches(ns_labels(pod.namespace))
        ):
            return False
        return self.selector.matches(pod.labels)


@dataclass(frozen=True, slots=True)
class AllTermsMatch:
    """Matches a pod that matches every one of ``terms`` (``podMatchesAllAffinityTerms``)."""

    terms: tuple[TermMatch, ...]

    @property
    def uses_namespace_labels(self) -> bool:
        return any(t.uses_namespace_labels for t in self.terms)

    def matches(self, pod: Pod, ns_labels: NsLabels) -> bool:
        return bool(self.terms) and all(t.matches(pod, ns_labels) for t in self.terms)


def term_match(term: PodAffinityTerm) -> TermMatch:
    return TermMatch(term.namespaces, term.namespace_selector, term.selector)


class PodCounters:
    def __init__(self, capacity: int, ns_labels: NsLabels) -> None:
        self._capacity = capacity
        self._ns_labels = ns_labels
        self._counters: OrderedDict[PodPredicate, CountArray] = OrderedDict()

    def get(self, key: PodPredicate, pods: Callable[[], Iterable[tuple[int, Pod]]]) -> CountArray:
        arr = self._counters.get(key)
        if arr is not None:
            self._counters.move_to_end(key)
            return arr
        arr = np.zeros(self._capacity, np.int32)
        for row, pod in pods():
            if key.matches(pod, self._ns_labels):
                arr[row] += 1
        self._counters[key] = arr
        if len(self._counters) > MAX_COUNTERS:
            self._counters.popitem(last=False)
        return arr

    def update(self, row: int, pod: Pod, sign: int) -> None:
        for key, arr in self._counters.items():
            if key.matches(pod, self._ns_labels):
                arr[row] += sign

    def grow(self, capacity: int) -> None:
        for key, arr in self._counters.items():
            new = np.zeros(capacity, np.int32)
            new[: len(arr)] = arr
            self._counters[key] = new
        self._capacity = capacity

    def drop_namespace_dependent(self) -> None:
        """Namespace labels changed: counters that read them are rebuilt on next use."""
        for key in [k for k in self._counters if k.uses_namespace_labels]:
            del self._counters[key]


class TermHolders:
    """For each kind of existing-pod term, ``term -> {row: count or summed weight}``."""

    KINDS = ("required_affinity", "required_anti_affinity", "preferred_affinity", "preferred_anti_affinity")

    def __init__(self) -> None:
        self.by_kind: dict[str, dict[PodAffinityTerm, dict[int, int]]] = {k: {} for k in self.KINDS}
        self.version = 0

    @staticmethod
    def _terms(pod: Pod) -> Iterable[tuple[str, PodAffinityTerm, int]]:
        for t in pod.affinity_required:
            yield "required_affinity", t, 1
        for t in pod.anti_affinity_required:
            yield "required_anti_affinity", t, 1
        for w in pod.affinity_preferred:
            yield "preferred_affinity", w.term, w.weight
        for w in pod.anti_affinity_preferred:
            yield "preferred_anti_affinity", w.term, w.weight

    def update(self, row: int, pod: Pod, sign: int) -> None:
        if not pod.has_affinity_terms:
            return
        for kind, term, amount in self._terms(pod):
            rows = self.by_kind[kind].setdefault(term, {})
            left = rows.get(row, 0) + sign * amount
            if left:
                rows[row] = left
            else:
                rows.pop(row, None)
                if not rows:
                    del self.by_kind[kind][term]
        self.version += 1
