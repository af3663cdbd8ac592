"""VolumeBinding's storage-capacity Score (upstream's ``scorer.go``, ``buildScorerFunction``;
StorageCapacityScoring, on by default from 1.37).

Per node, the claims matched to PVs are grouped by the PV's class; a node with none takes the
claims to provision whose driver publishes CSIStorageCapacity (the capacity object Filter found
for the claim, its ``capacity``). Each class scores ``shape(requested * 100 / capacity)`` (100 when
the capacity is 0 or short), the node the rounded mean over its classes, 0 without any. ``shape``
is ``VolumeBindingArgs.shape``, by default ``{0: 10}, {100: 0}`` (prefer the emptiest), its scores
already scaled to 0-100. It is columnar: the binder's ``find_unbound`` records, per claim, the
chosen PV's or capacity object's size for every row (``_ScoreParts``), and the classes are combined
with array arithmetic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scheduler.framework.interfaces import Scores
from scheduler.plugins.helpers import broken_linear

MAX_UTILIZATION = 100


@dataclass(slots=True)
class _ScoreParts:
    """What Score reads of the pod's volumes on each row (upstream's ``PodVolumes`` per node): per
    claim matched to a PV, (the PV's class, the request, the PV's capacity per row, -1 where the
    claim matched none there); per claim provisioned where its driver publishes capacity, (the
    claim's class, the request, the chosen CSIStorageCapacity's capacity per row, -1 where none)."""

    static: list[tuple[str, int, npt.NDArray[np.int64]]] = field(default_factory=list)
    dynamic: list[tuple[str, int, npt.NDArray[np.int64]]] = field(default_factory=list)


def score(shape: Sequence[tuple[int, int]], parts: _ScoreParts, n: int) -> Scores:
    """The score of each of ``n`` rows from what ``find_unbound`` recorded in ``parts``."""
    has_static = np.zeros(n, np.bool_)
    for _, _, size in parts.static:
        has_static |= size >= 0
    total = np.zeros(n, np.int64)
    count = np.zeros(n, np.int64)
    for cls in dict.fromkeys([c for c, _, _ in parts.static] + [c for c, _, _ in parts.dynamic]):
        s_req, s_cap, s_has = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_)
        for c, request, size in parts.static:
            if c == cls:
                m = size >= 0
                s_req += np.where(m, request, 0)
                s_cap += np.where(m, size, 0)
                s_has |= m
        d_req, d_cap, d_has = np.zeros(n, np.int64), np.zeros(n, np.int64), np.zeros(n, np.bool_)
        for c, request, size in parts.dynamic:
            if c == cls:
                m = size >= 0
                d_req += np.where(m, request, 0)
                d_cap = np.where(m, size, d_cap)     # assigned, not summed, as upstream
                d_has |= m
        req = np.where(has_static, s_req, d_req)
        cap = np.where(has_static, s_cap, d_cap)
        present = np.where(has_static, s_has, d_has)
        short = (cap == 0) | (req > cap)
        util = np.where(short, MAX_UTILIZATION, req * MAX_UTILIZATION // np.where(short, 1, cap))
        total += np.where(present, broken_linear(shape, util), 0)
        count += present
    # math.Round(sum / count): half away from zero, on non-negative scores.
    return np.where(count > 0, (2 * total + count) // np.maximum(2 * count, 1), 0).astype(np.int64)

