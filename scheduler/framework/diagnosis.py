"""Why a pod did not fit: per-node statuses, and upstream's FitError message.

``NodeToStatus`` stores the failure of every rejected node compactly (a row array and a status-id
array per Filter plugin) because a pod that fits nowhere in a 5,000-node cluster would otherwise
make 5,000 ``Status`` objects per attempt. Nodes absent from the map share ``absent``, as
upstream's ``absentNodesStatus`` (nodes a PreFilter result excluded).

``fit_error_message`` builds exactly upstream's ``FitError.Error()``::

    0/N nodes are available: <PreFilterMsg>.                 (if PreFilter rejected)
    0/N nodes are available: <count reason>, ....            (otherwise; sorted as strings)
    ... then " <PostFilterMsg>" when PostFilter said something (no period added)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scheduler.framework.status import Code, Status

__all__ = ["NO_NODES_AVAILABLE", "Diagnosis", "NodeToStatus", "fit_error_message", "reason_histogram"]

NO_NODES_AVAILABLE = "no nodes available to schedule pods"
Rows = npt.NDArray[np.int64]


class NodeToStatus:
    def __init__(self) -> None:
        self._chunks: list[tuple[Rows, npt.NDArray[np.int64]]] = []
        self._statuses: list[Status] = []
        self._index: dict[Status, int] = {}
        self._by_row: dict[int, Status] | None = None
        self.absent: Status | None = None
        self._count = 0

    def _id(self, status: Status) -> int:
        i = self._index.get(status)
        if i is None:
            i = self._index[status] = len(self._statuses)
            self._statuses.append(status)
        return i

    def add_many(self, rows: Rows, status_ids: npt.NDArray[np.int64] | None,
                 statuses: Sequence[Status], plugin: str) -> None:
        if len(rows) == 0:
            return
        remap = np.array([self._id(s.with_plugin(plugin)) for s in statuses], np.int64)
        ids = remap[status_ids] if status_ids is not None else np.full(len(rows), remap[0], np.int64)
        self._chunks.append((rows, ids))
        self._count += len(rows)
        self._by_row = None

    def set_row(self, row: int, status: Status) -> None:
        self.add_many(np.array([row], np.int64), None, (status,), status.plugin)

    def __len__(self) -> int:
        return self._count

    def _map(self) -> dict[int, Status]:
        if self._by_row is None:
            self._by_row = {}
            for rows, ids in self._chunks:
                for r, i in zip(rows.tolist(), ids.tolist(), strict=True):
                    self._by_row[r] = self._statuses[i]
        return self._by_row

    def get(self, row: int) -> Status | None:
        s = self._map().get(row)
        return s if s is not None else self.absent

    def items(self) -> Iterator[tuple[int, Status]]:
        return iter(self._map().items())

    def rows_with_code(self, code: Code) -> Rows:
        parts = [rows[np.isin(ids, [i for i, s in enumerate(self._statuses) if s.code == code])]
                 for rows, ids in self._chunks]
        return np.concatenate(parts) if parts else np.zeros(0, np.int64)

    def status_counts(self) -> Counter[Status]:
        """How many nodes carry each distinct status (without materialising the map)."""
        counts: Counter[Status] = Counter()
        for _rows, ids in self._chunks:
            if not len(ids):
                continue
            # ids index ``_statuses``: a count per id in one pass (np.unique would sort them).
            n = np.bincount(ids)
            for i in np.flatnonzero(n).tolist():
                counts[self._statuses[i]] += int(n[i])
        return counts

    def plugins(self) -> set[str]:
        return {s.plugin for s in self._statuses if s.plugin}


@dataclass(slots=True)
class Diagnosis:
    node_to_status: NodeToStatus = field(default_factory=NodeToStatus)
    unschedulable_plugins: set[str] = field(default_factory=set)
    pending_plugins: set[str] = field(default_factory=set)
    pre_filter_msg: str = ""
    post_filter_msg: str = ""


def reason_histogram(num_all_nodes: int, diagnosis: Diagnosis) -> Counter[str]:
    """Nodes per reason, as the FitError counts them: each rejected node once for every reason of
    its status, the nodes a PreFilter result left out under ``absent``'s reasons."""
    histogram: Counter[str] = Counter()
    nts = diagnosis.node_to_status
    for status, n in nts.status_counts().items():
        for reason in status.reasons:
            histogram[reason] += n
    absent = num_all_nodes - len(nts)
    if nts.absent is not None and absent > 0:
        for reason in nts.absent.reasons:
            histogram[reason] += absent
    return histogram


def fit_error_message(num_all_nodes: int, diagnosis: Diagnosis) -> str:
    msg = f"0/{num_all_nodes} nodes are available:"
    if diagnosis.pre_filter_msg:
        msg += f" {diagnosis.pre_filter_msg}."
    else:
        histogram = reason_histogram(num_all_nodes, diagnosis)
        if histogram:
            msg += " " + ", ".join(sorted(f"{n} {r}" for r, n in histogram.items())) + "."
    if diagnosis.post_filter_msg:
        msg += " " + diagnosis.post_filter_msg
    return msg
