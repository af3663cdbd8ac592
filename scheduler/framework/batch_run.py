"""``BatchRun``: one scheduling cycle's use of its profile's opportunistic batch.

The batch itself (``batch.py``) lives on the framework and outlives cycles; a cycle asks it for a
node hint after PreFilter and stores its results after the search. This object carries what both
calls need (the pod, its signature, the snapshot's order and stamp) so the cycle's search steps
(``cycle.py``: find feasible nodes, prioritize, select) never refer to batching: it is wrapped
around them. It sits beside the framework runtime rather than in ``batch.py`` because it reads the
``Framework``, which itself imports ``batch.py``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from scheduler.framework.batch import Hint, ScoredNodes
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.signature import PodSignature
from scheduler.model import Pod

if TYPE_CHECKING:
    from scheduler.cache import Snapshot
    from scheduler.framework.runtime import Framework

__all__ = ["BatchRun"]


class BatchRun:
    """One cycle's use of its profile's opportunistic batch (``framework/batch.py``): the hint asked
    for after PreFilter (upstream's ``GetNodeHint``) and the results stored after the search
    (``StoreScheduleResults``). The pod is signed once, and only if a batching rule asks."""

    __slots__ = ("_signed", "candidates", "cycle", "fwk", "hinted", "pod", "snapshot")

    def __init__(self, fwk: Framework, pod: Pod, snapshot: Snapshot, cycle: int, candidates: int) -> None:
        self.fwk = fwk
        self.pod = pod
        self.snapshot = snapshot
        self.cycle = cycle
        self.candidates = candidates
        self.hinted: Hint | None = None
        self._signed: list[PodSignature | None] = []

    def signature(self) -> PodSignature | None:
        if not self._signed:
            self._signed.append(self.fwk.sign_pod(self.pod))
        return self._signed[0]

    def hint(self, state: CycleState, *, nominations: bool) -> Hint | None:
        fwk, pod, snapshot = self.fwk, self.pod, self.snapshot
        self.hinted = fwk.batch.get_node_hint(
            pod, self.signature, self.cycle, order=snapshot.node_order, candidates=self.candidates,
            stamp=snapshot.table.mutations, nominations=nominations,
            check=lambda r: fwk.run_filter_on_node(state, pod, snapshot, r), row_of=snapshot.row_of,
            select=fwk.select_position)
        return self.hinted

    def raw_scores(self, evaluated: int, nominations: int) -> dict[str, np.ndarray] | None:
        """Where ``run_score`` keeps the raw scores: only for a list the next pod may reuse, one from
        a search over every candidate with no pod nominated anywhere (framework/batch.py,
        conditions 6 and 7)."""
        return {} if evaluated == self.candidates and nominations == 0 else None

    def store(self, chosen: str, row: int, others: ScoredNodes | None, *, partial: bool = False) -> None:
        hinted = self.snapshot.node_info(self.hinted.row).name if self.hinted else None
        self.fwk.batch.store_schedule_results(self.signature, hinted, chosen, row, others, self.cycle,
                                              order=self.snapshot.node_order, candidates=self.candidates,
                                              partial=partial)
