"""Decision records: why a pod went where it went, or why it stays pending (issue #20 §1).

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
top nodes are picked with one ``argpartition`` over the totals. ``DecisionStore`` keeps the latest
record per pod, at most ``capacity`` pods (oldest dropped first); capacity 0 records nothing.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["DEFAULT_CAPACITY", "DEFAULT_TOP_NODES", "DecisionRecord", "DecisionStore", "top_scores"]

DEFAULT_CAPACITY = 10_000
DEFAULT_TOP_NODES = 3


@dataclass(slots=True)
class DecisionRecord:
    pod: str
    profile: str
    profile_generation: int | None
    attempt: int
    time: float
    node: str | None
    evaluated_nodes: int
    feasible_nodes: int
    filtered: dict[str, int] = field(default_factory=dict)
    scores: list[dict[str, Any]] = field(default_factory=list)
    preemption: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"pod": self.pod, "profile": self.profile, "profileGeneration": self.profile_generation,
                "attempt": self.attempt,
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.time)),
                "node": self.node, "evaluatedNodes": self.evaluated_nodes, "feasibleNodes": self.feasible_nodes,
                "filtered": dict(self.filtered), "scores": list(self.scores), "preemption": self.preemption}


def top_scores(names: list[str], totals: npt.NDArray[np.int64], per_plugin: dict[str, npt.NDArray[np.int64]],
               weights: dict[str, int], k: int) -> list[dict[str, Any]]:
    """The ``k`` best nodes by total (ties: the node's position, as given), with weighted plugin scores.
    ``names[i]``, ``totals[i]`` and ``per_plugin[p][i]`` describe the i-th scored node."""
    n = len(totals)
    if n == 0 or k <= 0:
        return []
    if n > k:
        part = np.argpartition(-totals, k - 1)[:k]
        best = part[np.lexsort((part, -totals[part]))]
    else:
        best = np.lexsort((np.arange(n), -totals))
    return [{"node": names[int(i)], "total": int(totals[i]),
             "plugins": {p: int(s[i]) * weights.get(p, 1) for p, s in per_plugin.items()}} for i in best]


class DecisionStore:
    """The latest record per pod (``namespace/name``), bounded; thread-safe (the worker writes,
    the serving handler and the runtime read)."""

    def __init__(self, capacity: int = DEFAULT_CAPACITY, top_nodes: int = DEFAULT_TOP_NODES) -> None:
        if capacity < 0 or top_nodes < 0:
            raise ValueError("capacity and top_nodes must be >= 0")
        self.capacity, self.top_nodes = capacity, top_nodes
        self._records: OrderedDict[str, DecisionRecord] = OrderedDict()
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self.capacity > 0

    def put(self, record: DecisionRecord) -> None:
        if not self.capacity:
            return
        with self._lock:
            self._records[record.pod] = record
            self._records.move_to_end(record.pod)
            while len(self._records) > self.capacity:
                self._records.popitem(last=False)

    def get(self, key: str) -> DecisionRecord | None:
        with self._lock:
            return self._records.get(key)

    def forget(self, key: str) -> None:
        with self._lock:
            self._records.pop(key, None)

    def __len__(self) -> int:
        return len(self._records)
