"""``framework/batch.py``: upstream's ``pkg/scheduler/framework/runtime/batch_test.go``
``TestBatchBasic`` table, case by case, plus our own invalidation rules (conditions 6 and 7 of the
module docstring).

As upstream's test, the batch sees a first pod (maybe scheduled, leaving a node list) and then a
second; the Filter check on the first pod's node rejects the second pod when both are "blocking"
pods (uid ``b-…``, at most one per node), as upstream's ``BatchTestPlugin``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from scheduler.framework.batch import MAX_BATCH_AGE, OpportunisticBatch, ScoredNodes
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Pod
from tests.builders import Clock

ROW = {"n1": 1, "n2": 2, "n3": 3, "n4": 4}
NAME = {r: n for n, r in ROW.items()}
ORDER = np.arange(8, dtype=np.int64)


def blocking(suffix: str) -> str:
    return f"b-{suffix}"


def non_blocking(suffix: str) -> str:
    return f"a-{suffix}"


def nodes(names: list[str] | None) -> ScoredNodes | None:
    """A stored list in score order: the first name has the highest score, as upstream's
    ``testSortedScoredNodes`` pops its names in order."""
    if names is None:
        return None
    rows = np.array([ROW[n] for n in names], np.int64)
    scores = np.arange(len(names), 0, -1, dtype=np.int64) * 10
    return ScoredNodes(rows, [("Score", 1, scores, None)], CycleState(), Pod("default", "p"), NodeToStatus(),
                       np.ones(len(names), np.bool_))


@dataclass
class Case:
    name: str
    first_pod_id: str
    first_sig: str
    first_scheduled: bool
    first_chosen: str
    first_others: list[str] | None
    second_pod_id: str
    second_sig: str
    second_chosen: str
    expected_hint: str
    skip_pod: bool = False
    same_cycle: bool = False
    second_nominated: str = ""
    expected_state: list[str] | None = field(default=None)


# pkg/scheduler/framework/runtime/batch_test.go, TestBatchBasic, in upstream's order. Not ported:
# "pod uses batch from preceding pod when they are from the same cycle state and GenericWorkload is
# enabled" (pod groups scheduled in one cycle: kopf-scheduler has no GenericWorkload).
CASES = [
    Case("a second pod with the same signature gets a hint", blocking("1"), "sig", True, "n3", ["n1"],
         blocking("2"), "sig", "n1", "n1"),
    Case("a second pod with a different signature doesn't get a hint", non_blocking("1"), "sig", True, "n3", ["n1"],
         non_blocking("2"), "sig2", "n1", ""),
    Case("a second pod doesn't get a hint if it's not 1-pod-per-node", non_blocking("1"), "sig", True, "n3", ["n1"],
         non_blocking("2"), "sig", "n1", ""),
    Case("pod doesn't get hint if previous pod didn't scheduled", blocking("1"), "sig", False, "n3", ["n1"],
         blocking("2"), "sig", "n1", ""),
    Case("empty list", blocking("1"), "sig", True, "n3", [], blocking("2"), "sig", "n4", ""),
    Case("nil list", blocking("1"), "sig", True, "n3", None, blocking("2"), "sig", "n4", ""),
    Case("pod doesn't get hint because the previous pod is to a different profile", blocking("1"), "sig", True, "n3",
         ["n1"], blocking("2"), "sig", "n1", "", skip_pod=True),
    Case("pod doesn't use batch from preceding pod when they are from the same cycle state, but GenericWorkload is "
         "disabled", blocking("1"), "sig", True, "n3", ["n1"], blocking("2"), "sig", "n1", "", same_cycle=True),
    Case("pod uses batch from preceding pod and leaves remaining batch to next pod", blocking("1"), "sig", True, "n3",
         ["n1", "n2"], blocking("2"), "sig", "n1", "n1", expected_state=["n2"]),
    Case("a second pod with a nominated node does not get a hint", blocking("1"), "sig", True, "n3", ["n1"],
         blocking("2"), "sig", "n1", "", second_nominated="n1"),
]


def sig(s: str) -> Any:
    """A Signer for the signature ``s`` (the batch asks for it only when a rule needs it)."""
    return lambda: (("test", s),)


def hint_for(batch: OpportunisticBatch, pod: Pod, signature: str, cycle: int, first_pod_id: str, *,
             stamp: int = 0, nominations: bool = False, candidates: int = 8, order: np.ndarray = ORDER) -> str:
    def check(row: int) -> Status:
        # BatchTestPlugin: a node holding a blocking pod rejects another blocking pod.
        both = first_pod_id.startswith("b") and pod.uid.startswith("b")
        return Status.unschedulable("unsched") if both else SUCCESS
    h = batch.get_node_hint(pod, sig(signature), cycle, order=order, candidates=candidates, stamp=stamp,
                            nominations=nominations, check=check, row_of=ROW.get,
                            select=lambda totals: int(np.argmax(totals)))
    return "" if h is None else NAME[h.row]


@pytest.mark.parametrize("tt", CASES, ids=lambda c: c.name)
def test_batch_basic(tt: Case) -> None:
    batch = OpportunisticBatch("default-scheduler")
    first = Pod("default", "pod", uid=tt.first_pod_id)
    assert hint_for(batch, first, tt.first_sig, 1, tt.first_pod_id) == ""
    if tt.first_scheduled:
        batch.store_schedule_results(sig(tt.first_sig), None, tt.first_chosen, ROW[tt.first_chosen],
                                     nodes(tt.first_others), 1, order=ORDER, candidates=8)
        batch.assumed(0)
    cycle = 3 if tt.skip_pod else 1 if tt.same_cycle else 2
    second = Pod("default", "pod2", uid=tt.second_pod_id, nominated_node_name=tt.second_nominated)
    hint = hint_for(batch, second, tt.second_sig, cycle, tt.first_pod_id)
    assert hint == tt.expected_hint
    batch.store_schedule_results(sig(tt.second_sig), hint or None, tt.second_chosen, ROW[tt.second_chosen], None,
                                 cycle, order=ORDER, candidates=8)
    st = batch.state
    empty = st is None or len(st.nodes) == 0
    assert empty == (tt.expected_state is None)
    if tt.expected_state is not None:
        assert st is not None
        assert st.signature == sig("sig")()
        assert [NAME[int(r)] for r in st.nodes.rows[st.nodes.alive]] == tt.expected_state


def stored(batch: OpportunisticBatch, others: list[str], *, stamp: int = 0) -> None:
    batch.store_schedule_results(sig("sig"), None, "n3", ROW["n3"], nodes(others), 1, order=ORDER, candidates=8)
    batch.assumed(stamp)


@pytest.mark.parametrize(("name", "kwargs"), [
    ("the cache changed since the last assume", {"stamp": 1}),
    ("a pod is nominated somewhere", {"nominations": True}),
    ("the node order changed (a node came or went)", {"order": ORDER.copy()}),
    ("another number of candidate nodes", {"candidates": 7}),
])
def test_cluster_changed_flushes(name: str, kwargs: dict) -> None:
    """Ours: a hint only while nothing but the previous pod's assume changed the cache."""
    batch = OpportunisticBatch("p")
    stored(batch, ["n1", "n2"])
    assert hint_for(batch, Pod("default", "x", uid=blocking("2")), "sig", 2, blocking("1"), **kwargs) == ""
    assert hint_for(batch, Pod("default", "x", uid=blocking("2")), "sig", 2, blocking("1")) == "n1"


def test_expired_after_max_batch_age() -> None:
    clock = Clock()
    batch = OpportunisticBatch("p", clock=clock)
    stored(batch, ["n1", "n2"])
    clock.advance(MAX_BATCH_AGE + 0.01)
    assert hint_for(batch, Pod("default", "x", uid=blocking("2")), "sig", 2, blocking("1")) == ""


def test_node_missing() -> None:
    batch = OpportunisticBatch("p")
    batch.store_schedule_results(sig("sig"), None, "gone", 7, nodes(["n1"]), 1, order=ORDER, candidates=8)
    batch.assumed(0)
    assert hint_for(batch, Pod("default", "x", uid=blocking("2")), "sig", 2, blocking("1")) == ""


def test_partial_search_is_not_stored() -> None:
    """Ours: a list the sampled search cut short is flushed (the caller passes None, partial)."""
    batch = OpportunisticBatch("p")
    stored(batch, ["n1", "n2"])
    batch.store_schedule_results(sig("sig"), None, "n4", ROW["n4"], None, 2, order=ORDER, candidates=8, partial=True)
    assert batch.state is None


def test_next_node_is_rescored_with_normalisation() -> None:
    """Ours: the remaining nodes are normalised again without the taken one, and the framework's
    own choice picks among them (here a NormalizeScore that scales the maximum to 100)."""
    class Max100:
        def normalize_score(self, state: CycleState, pod: Pod, scores: np.ndarray) -> Status:
            top = int(scores.max())
            scores[:] = scores * 100 // top if top else 0
            return SUCCESS

    rows = np.array([ROW["n1"], ROW["n2"], ROW["n4"]], np.int64)
    raw = np.array([8, 4, 2], np.int64)           # n3 (taken, not stored) had 10
    other = np.array([0, 60, 0], np.int64)
    scored = ScoredNodes(rows, [("A", 1, raw, Max100()), ("B", 1, other, None)], CycleState(), Pod("d", "p"),
                         NodeToStatus(), np.ones(3, np.bool_))
    _, totals, per_plugin = scored.rescore()
    assert totals.tolist() == [100, 110, 25]
    assert per_plugin["A"].tolist() == [100, 50, 25]
    assert raw.tolist() == [8, 4, 2]              # the stored raw scores are left as they were
