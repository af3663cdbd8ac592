"""Decision records: why a pod went where it went, or why it stays pending.

One record per scheduling attempt, in exactly this JSON shape (``DecisionRecord.to_json``)::

    {"pod": "shop/web-0", "profile": "default-scheduler", "profileGeneration": 3, "attempt": 2,
     "time": "2026-12-03T10:00:00Z", "node": "n7", "evaluatedNodes": 500, "feasibleNodes": 212,
     "filtered": {"Insufficient cpu": 250, "node(s) had untolerated taint(s)": 38},
     "scores": [{"node": "n7", "total": 412, "plugins": {"NodeResourcesFit": 85, ...}}],
     "preemption": null}

- ``filtered`` is the FitError's own histogram (``diagnosis.reason_histogram``): each rejected
  node counted once for each reason of the status its first failing Filter returned;
- ``scores``: the top feasible nodes by total (``top_nodes``, default 3), each with its per-plugin
  *weighted* normalised scores, as upstream's ``NodePluginScores``; empty when the cycle did not
  score (one feasible node, or none);
- ``preemption``: ``{"nominatedNode": ..., "victims": [...]}`` when PostFilter nominated a node.

The records are a by-product of what the cycle computed anyway: no plugin runs again, and the
top nodes are picked with a few ``argmax`` passes over the totals (``best_indices``).

A pod placed by opportunistic batching (``framework/batch.py``) gets the record the full cycle
would have written, field for field: ``evaluatedNodes`` and ``feasibleNodes`` count the search the
stored list stands for (every candidate node), ``filtered`` holds the nodes that search rejected
plus the nodes taken by the batch's earlier pods (each with the status its Filter run gave this
pod), and ``scores`` ranks the remaining nodes, re-normalised. Only the order of ``filtered``'s
keys may differ. No field says the pod was batched: the record explains the decision, which is the
same; ``scheduler_batch_attempts_total`` counts the batching.
``DecisionStore`` keeps the latest record per pod, at most ``capacity`` pods (oldest dropped
first); capacity 0 records nothing.

A record's size is bounded whatever the reasons say (an HTTP extender writes its own, one per node
if it likes: unbounded, a record ran to 33 KB): ``bounded_filtered`` cuts each reason to
``MAX_REASON_CHARS`` with the ``TRUNCATED`` marker, and keeps at most ``MAX_REASONS`` of them, the
most frequent, the rest counted under one ``"… N other reasons"`` entry, so the counts still add up.
``filtered`` then holds at most about 9 KB, and records of ordinary plugin reasons are unchanged.

A pod that opts in with the annotation ``scheduling.kopf-scheduler.io/explain: "true"`` gets each
attempt's record written on it as the annotation ``DECISION_ANNOTATION`` (compact JSON), after its
binding or its failure is reported, whether the store records or not.
"""

from __future__ import annotations

import marshal
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = ["DECISION_ANNOTATION", "DEFAULT_CAPACITY", "DEFAULT_TOP_NODES", "MAX_REASONS", "MAX_REASON_CHARS",
           "TRUNCATED", "DecisionRecord", "DecisionStore", "TopScores", "best_indices", "bounded_filtered",
           "top_scores"]

_FLOOR = int(np.iinfo(np.int64).min)
DEFAULT_CAPACITY = 10_000
DEFAULT_TOP_NODES = 3
# Where the record goes on a pod annotated ``scheduling.kopf-scheduler.io/explain: "true"``.
DECISION_ANNOTATION = "scheduling.kopf-scheduler.io/decision"
# The bound on ``filtered``: the reasons kept, and the characters kept of each (the marker comes on top).
MAX_REASONS = 32
MAX_REASON_CHARS = 256
TRUNCATED = "… (truncated)"


def _clip(reason: str) -> str:
    return reason if len(reason) <= MAX_REASON_CHARS else reason[:MAX_REASON_CHARS] + TRUNCATED


def bounded_filtered(histogram: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    """``filtered`` for a record: each reason cut to ``MAX_REASON_CHARS`` (two that then read alike
    count as one), at most ``MAX_REASONS`` entries, the most frequent kept (ties in their order) and
    the rest summed under ``"… N other reasons"``. A histogram within both bounds is kept as it is."""
    clipped: dict[str, int] = {}
    for reason, n in histogram.items():
        key = _clip(reason)
        clipped[key] = clipped.get(key, 0) + n
    if len(clipped) <= MAX_REASONS:
        return tuple(clipped.items())
    ranked = sorted(clipped.items(), key=lambda kv: -kv[1])      # stable: ties keep their order
    kept, rest = ranked[:MAX_REASONS - 1], ranked[MAX_REASONS - 1:]
    return (*kept, (f"… {len(rest)} other reasons", sum(n for _, n in rest)))


class TopScores(NamedTuple):
    """The best nodes of a Score run: formatted only when a record is read, so the cycle pays
    for a few scalar reads, not for building dicts nobody may ever ask for. Plain tuples of ints
    and strings, so the garbage collector untracks them: ten thousand kept records must not make
    every full collection of the scheduler's process longer."""

    nodes: tuple[str, ...]
    totals: tuple[int, ...]                       # per node
    plugins: tuple[str, ...]
    scores: tuple[int, ...]                       # plugin-major, then node: normalised (unweighted); flat,
    weights: tuple[int, ...]                      # per plugin                  so one GC pass untracks it

    def to_json(self) -> list[dict[str, Any]]:
        k = len(self.nodes)
        return [{"node": node, "total": self.totals[j],
                 "plugins": {p: self.scores[i * k + j] * self.weights[i] for i, p in enumerate(self.plugins)}}
                for j, node in enumerate(self.nodes)]


class DecisionRecord(NamedTuple):
    """One attempt's decision; a tuple of atomic values for the same reason as ``TopScores``."""

    pod: str
    profile: str
    profile_generation: int | None
    attempt: int
    time: float
    node: str | None
    evaluated_nodes: int
    feasible_nodes: int
    filtered: tuple[tuple[str, int], ...] = ()
    scores: TopScores | None = None
    preemption: tuple[str, tuple[str, ...]] | None = None      # (nominated node, victims)

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "profile": self.profile, "profileGeneration": self.profile_generation,
                "attempt": self.attempt,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)),
                "node": self.node, "evaluatedNodes": self.evaluated_nodes, "feasibleNodes": self.feasible_nodes,
                "filtered": dict(self.filtered), "scores": self.scores.to_json() if self.scores else [],
                "preemption": None if self.preemption is None else {
                    "nominatedNode": self.preemption[0], "victims": list(self.preemption[1])}}


def best_indices(totals: npt.NDArray[np.int64], k: int, chosen: int | None = None) -> list[int]:
    """Positions of the ``k`` best totals, best first: the ``chosen`` position (the node the cycle
    picked, a best total) first, then ties in the given order. ``k`` is small (3 by default), so
    ``k`` argmax passes beat any sort or partition of the hundreds of scored nodes."""
    n = len(totals)
    if n == 0 or k <= 0:
        return []
    t = totals.astype(np.int64, copy=True)
    floor = _FLOOR
    out: list[int] = []
    if chosen is not None and 0 <= chosen < n:
        out.append(chosen)
        t[chosen] = floor
    while len(out) < min(k, n):
        i = int(t.argmax())              # the first of the largest: ties in the given order
        out.append(i)
        t[i] = floor
    return out


def top_scores(rows: npt.NDArray[np.int64], totals: npt.NDArray[np.int64],
               per_plugin: dict[str, npt.NDArray[np.int64]], weights: dict[str, int], k: int,
               name_of: Callable[[int], str], chosen: int | None = None) -> TopScores:
    """The ``k`` best of the scored ``rows`` by total (``best_indices``; ``chosen`` is a position
    into ``rows``), with each plugin's normalised score and weight. Only the picked rows are
    named: a cycle scores hundreds of nodes, a record keeps three."""
    idx = best_indices(totals, k, chosen)
    plugins = tuple(per_plugin)
    # Scalar reads (.item(): Python ints, no numpy objects kept), not fancy indexing: for three
    # positions, item access is several times cheaper.
    return TopScores(tuple([name_of(rows.item(i)) for i in idx]), tuple([totals.item(i) for i in idx]), plugins,
                     tuple([per_plugin[p].item(i) for p in plugins for i in idx]),
                     tuple([weights.get(p, 1) for p in plugins]))


def _pack(record: DecisionRecord) -> bytes:
    """The record as one ``bytes`` (``marshal`` of plain tuples, about 2 µs): an object the garbage
    collector never tracks. Kept as tuples, each record left several tracked containers behind:
    they counted towards every generation's threshold until a collection untracked them, and at
    10,000 records per 10,000 pods that doubled the collections (measured: 0.63 s against 0.25 s
    of collection over 11,000 pods of SchedulingBasic, about 35 µs per pod)."""
    scores = tuple(record.scores) if record.scores is not None else None
    pre = record.preemption
    plain: Any = (*record[:9], scores, tuple(pre) if pre is not None else None)     # atoms in tuples
    return marshal.dumps(plain)


def _unpack(data: bytes) -> DecisionRecord:
    t = marshal.loads(data)
    return DecisionRecord._make((*t[:9], TopScores._make(t[9]) if t[9] is not None else None, t[10]))


class DecisionStore:
    """The latest record per pod (``namespace/name``), bounded; thread-safe (the worker writes,
    the serving handler and the runtime read). Records are kept packed (``_pack``)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, top_nodes: int = DEFAULT_TOP_NODES) -> None:
        if capacity < 0 or top_nodes < 0:
            raise ValueError("capacity and top_nodes must be >= 0")
        self.capacity, self.top_nodes = capacity, top_nodes
        self._records: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    def put(self, record: DecisionRecord) -> None:
        if not self.capacity:
            return
        packed = _pack(record)
        with self._lock:
            self._records[record.pod] = packed
            self._records.move_to_end(record.pod)
            while len(self._records) > self.capacity:
                self._records.popitem(last=False)

    def get(self, key: str) -> DecisionRecord | None:
        with self._lock:
            t = self._records.get(key)
        return _unpack(t) if t is not None else None

    def kept(self) -> list[bytes]:
        """The stored values themselves (tests: that the collector never tracks them)."""
        with self._lock:
            return list(self._records.values())

    def forget(self, key: str) -> None:
        with self._lock:
            self._records.pop(key, None)

    def __len__(self) -> int:
        return len(self._records)
