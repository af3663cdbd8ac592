"""TaintToleration, after upstream's ``tainttoleration/taint_toleration_test.go``."""

from __future__ import annotations

import pytest

from scheduler.plugins import tainttoleration
from tests.builders import node, pod, run_filter, run_score

TT = tainttoleration.TaintToleration()


GPU = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]


@pytest.mark.parametrize(("name", "tolerations", "want"), [
    ("untolerated", [], ("node(s) had untolerated taint(s)",)),
    ("tolerated by equal", [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}], None),
    ("tolerated by exists", [{"key": "dedicated", "operator": "Exists"}], None),
    ("wildcard exists", [{"operator": "Exists"}], None),
    ("wrong value", [{"key": "dedicated", "value": "cpu"}], ("node(s) had untolerated taint(s)",)),
    ("wrong effect", [{"key": "dedicated", "operator": "Exists", "effect": "NoExecute"}],
     ("node(s) had untolerated taint(s)",)),
])
def test_taint_filter(name: str, tolerations: list[dict], want: tuple[str, ...] | None) -> None:
    p = pod("p", spec={"tolerations": tolerations})
    (got,) = run_filter(TT, p, [node("n", taints=GPU)])
    assert (None if got is None else got.reasons) == want, name


def test_taint_prefer_no_schedule_score() -> None:
    soft = [{"key": "a", "value": "1", "effect": "PreferNoSchedule"}]
    two = [*soft, {"key": "b", "value": "2", "effect": "PreferNoSchedule"}]
    got = run_score(TT, pod("p"), [node("n0"), node("n1", taints=soft), node("n2", taints=two)])
    assert got == [100, 50, 0]


def test_taint_prescore_never_skips_and_score_agrees_without_it() -> None:
    # Upstream's PreScore (taint_toleration.go) always succeeds: a pod without tolerations is
    # still scored. Score called without PreScore (explain) gives the same numbers.
    from tests.builders import setup
    soft = [{"key": "a", "value": "1", "effect": "PreferNoSchedule"}]
    nodes = [node("n0"), node("n1", taints=soft)]
    for p in (pod("p"), pod("q", spec={"tolerations": [{"key": "a", "operator": "Exists"}]})):
        snap, state, rows = setup(nodes, [])
        assert TT.pre_score(state, p, snap, rows).is_success()
        with_state = TT.score_nodes(state, p, snap, rows).tolist()
        snap, state, rows = setup(nodes, [])
        assert TT.score_nodes(state, p, snap, rows).tolist() == with_state
