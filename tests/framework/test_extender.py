"""``framework/extender.py``: upstream's ``schedule_one_test.go`` TestFindNodesThatPassExtenders;
preemption's extender step (upstream's ``Evaluator.callExtenders``,
as ``preemption.go`` runs it between the dry run and choosing a node), with HTTP extenders on
127.0.0.1; the hook PostFilter plugins get it through (``PostFilterContext.extenders``); the
bodies kept for extenders."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any, ClassVar

import numpy as np
import pytest

from scheduler.cache import Cache
from scheduler.framework import Code, CycleState, PostFilterContext, PostFilterResult, Status
from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.extender import (
    ObjectBodies,
    Victims,
    call_extenders_for_preemption,
    find_nodes_that_pass_extenders,
)
from scheduler.kubeapi.extender import HTTPExtender
from scheduler.model import Pod
from scheduler.plugins.registry import PluginSpec, Registry
from scheduler.profiles import compile_profile, parse_spec
from scheduler.profiles.extender_config import ExtenderConfig
from tests.builders import node, pod
from tests.extender_server import ERROR, TRUE, Raw, fake_filter, serving


def cluster() -> tuple[Cache, dict[str, Pod]]:
    cache = Cache()
    for n in ("node1", "node2", "node3"):
        cache.add_node(node(n))
    pods = {name: pod(name, node_name=n) for name, n in (("a1", "node1"), ("a2", "node1"), ("b1", "node2"),
                                                          ("c1", "node3"))}
    for p in pods.values():
        cache.add_pod(p)
    return cache, pods


def ext(url: str, **cfg: Any) -> HTTPExtender:
    return HTTPExtender(ExtenderConfig.model_validate({"urlPrefix": url, "preemptVerb": "preempt",
                                                       "nodeCacheCapable": True, **cfg}), ObjectBodies())


def meta(*uids: str, violations: int = 0) -> dict[str, Any]:
    return {"Pods": [{"UID": u} for u in uids], "NumPDBViolations": violations}


PREEMPTOR = pod("preemptor", priority=100)


def candidates(pods: dict[str, Pod]) -> dict[str, Victims]:
    return {"node1": Victims((pods["a1"], pods["a2"]), 1), "node2": Victims((pods["b1"],), 0),
            "node3": Victims((pods["c1"],), 0)}


def test_an_extender_narrows_the_candidates_and_their_victims() -> None:
    cache, pods = cluster()
    answer = {"NodeNameToMetaVictims": {"node1": meta(pods["a2"].uid, violations=0), "node3": meta(pods["c1"].uid)}}
    with serving(preempt=lambda a: answer) as srv:
        got, s = call_extenders_for_preemption([ext(srv.url)], PREEMPTOR, candidates(pods), cache.snapshot())
    assert s.is_success()
    assert {n: ([p.name for p in v.pods], v.num_pdb_violations) for n, v in got.items()} == {
        "node1": (["a2"], 0), "node3": (["c1"], 0)}
    args = srv.requests[0][1]
    assert args["NodeNameToMetaVictims"]["node1"] == meta(pods["a1"].uid, pods["a2"].uid, violations=1)


def test_each_extender_sees_what_the_previous_left() -> None:
    cache, pods = cluster()
    with serving(preempt=lambda a: {"NodeNameToMetaVictims": {"node2": meta(pods["b1"].uid)}}) as first, \
            serving(preempt=lambda a: {"NodeNameToMetaVictims": a["NodeNameToMetaVictims"]}) as second:
        got, s = call_extenders_for_preemption([ext(first.url), ext(second.url)], PREEMPTOR, candidates(pods),
                                               cache.snapshot())
    assert s.is_success() and list(got) == ["node2"]
    assert list(second.requests[0][1]["NodeNameToMetaVictims"]) == ["node2"]


def test_no_candidate_left_stops_there() -> None:
    cache, pods = cluster()
    with serving(preempt=lambda a: {"NodeNameToMetaVictims": {}}) as first, serving() as second:
        got, s = call_extenders_for_preemption([ext(first.url), ext(second.url)], PREEMPTOR, candidates(pods),
                                               cache.snapshot())
    assert s.is_success() and got == {} and second.requests == []


@pytest.mark.parametrize(("ignorable", "want"), [(False, 'expected at least one victim pod on node "node2"'),
                                                 (True, None)])
def test_a_candidate_without_victims(ignorable: bool, want: str | None) -> None:
    cache, pods = cluster()
    answer = {"NodeNameToMetaVictims": {"node1": meta(pods["a1"].uid), "node2": meta()}}
    with serving(preempt=lambda a: answer) as srv:
        got, s = call_extenders_for_preemption([ext(srv.url, ignorable=ignorable)], PREEMPTOR, candidates(pods),
                                               cache.snapshot())
    if want is None:
        assert s.is_success() and list(got) == ["node1"]        # the empty one is dropped
    else:
        assert not s.is_success() and s.message() == want


@pytest.mark.parametrize("ignorable", [False, True])
def test_an_extender_that_fails(ignorable: bool) -> None:
    cache, pods = cluster()
    with serving(preempt=lambda a: Raw(b"{}", delay=3)) as srv:
        got, s = call_extenders_for_preemption([ext(srv.url, ignorable=ignorable, httpTimeout="200ms")], PREEMPTOR,
                                               candidates(pods), cache.snapshot())
    if ignorable:
        assert s.is_success() and got == candidates(pods)      # skipped: the candidates stand
    else:
        assert not s.is_success() and "context deadline exceeded" in s.message()


def test_extenders_that_do_not_preempt_or_do_not_care_are_not_asked() -> None:
    cache, pods = cluster()
    with serving(preempt=lambda a: {}) as srv:
        no_verb = HTTPExtender(ExtenderConfig.model_validate({"urlPrefix": srv.url, "filterVerb": "f"}), ObjectBodies())
        uninterested = ext(srv.url, managedResources=[{"name": "example.com/gpu"}])
        got, s = call_extenders_for_preemption([no_verb, uninterested], PREEMPTOR, candidates(pods), cache.snapshot())
    assert s.is_success() and got == candidates(pods) and srv.requests == []


class Recorder:
    """A PostFilter plugin that records the context it was given."""

    name = "Recorder"
    seen: ClassVar[list[PostFilterContext]] = []

    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: PostFilterContext
                    ) -> tuple[PostFilterResult | None, Status]:
        self.seen.append(ctx)
        return None, Status.unschedulable("nothing to do")


def test_post_filter_plugins_get_the_profiles_extenders() -> None:
    registry = Registry(extra={"Recorder": PluginSpec("Recorder", lambda a, h: Recorder())}, load_entry_points=False)
    spec = parse_spec({"schedulerName": "s", "plugins": {"postFilter": {"enabled": [{"name": "Recorder"}],
                                                                        "disabled": [{"name": "*"}]}},
                       "extenders": [{"urlPrefix": "http://127.0.0.1:1", "preemptVerb": "preempt"}]})
    fwk = compile_profile(spec, registry=registry, extender_factory=lambda c: HTTPExtender(c, ObjectBodies()))
    cache, _ = cluster()
    fwk.run_post_filter(CycleState(), PREEMPTOR, NodeToStatus(), cache.snapshot())
    assert [e.name for e in Recorder.seen[-1].extenders] == ["http://127.0.0.1:1"]


def test_object_bodies() -> None:
    b = ObjectBodies()
    p = pod("x")
    b.set_pod(p.uid, {"metadata": {}})
    assert b.pod(p) is None                          # not kept while disabled
    b.enable(True)
    b.set_pod(p.uid, {"metadata": {}})
    b.set_node("n", {"metadata": {"name": "n"}})
    assert b.pod(p) == {"metadata": {}} and b.node("n") == {"metadata": {"name": "n"}} and len(b) == 2
    b.set_pod(p.uid, None)
    assert b.pod(p) is None
    b.enable(False)
    assert len(b) == 0 and b.node("n") is None


# --- schedule_one_test.go TestFindNodesThatPassExtenders -----------------------------------------
def a_b_c(pod: dict[str, Any], node: str) -> tuple[str, str]:
    """a passes, b is Unschedulable, anything else UnschedulableAndUnresolvable."""
    if node == "a":
        return "Success", ""
    return ("Unschedulable" if node == "b" else "UnschedulableAndUnresolvable"), f'node "{node}" is not allowed'


def only_a(pod: dict[str, Any], node: str) -> tuple[str, str]:
    return ("Success", "") if node == "a" else ("Unschedulable", f'node "{node}" is not allowed')


ABSENT = Status.unresolvable("node(s) didn't satisfy plugin(s) [PreFilter]")
FIND_NODES_THAT_PASS_EXTENDERS: list[tuple[str, list[tuple[Any, ...]], list[str], dict[str, Status], bool,
                                           list[str], dict[str, tuple[Code, str]]]] = [
    ("error", [(ERROR,)], ["a"], {}, True, [], {}),
    ("success", [(TRUE,)], ["a"], {}, False, ["a"], {}),
    ("unschedulable", [(only_a,)], ["a", "b"], {}, False, ["a"],
     {"b": (Code.UNSCHEDULABLE, 'FakeExtender: node "b" failed')}),
    ("unschedulable and unresolvable", [(a_b_c,)], ["a", "b", "c"], {}, False, ["a"],
     {"b": (Code.UNSCHEDULABLE, 'FakeExtender: node "b" failed'),
      "c": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'FakeExtender: node "c" failed and unresolvable')}),
    ("extender does not overwrite the previous statuses", [(a_b_c,)], ["a", "b"],
     {"c": Status.unschedulable('FakeFilterPlugin: node "c" failed')}, False, ["a"],
     {"b": (Code.UNSCHEDULABLE, 'FakeExtender: node "b" failed'),
      "c": (Code.UNSCHEDULABLE, 'FakeFilterPlugin: node "c" failed')}),
    ("multiple extenders", [(a_b_c,), (only_a,)], ["a", "b", "c"], {}, False, ["a"],
     {"b": (Code.UNSCHEDULABLE, 'FakeExtender: node "b" failed'),
      "c": (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'FakeExtender: node "c" failed and unresolvable')}),
]


@pytest.mark.parametrize(("name", "predicates", "nodes", "before", "expects_err", "want_nodes", "want_statuses"),
                         FIND_NODES_THAT_PASS_EXTENDERS, ids=[c[0] for c in FIND_NODES_THAT_PASS_EXTENDERS])
def test_find_nodes_that_pass_extenders(name: str, predicates: list[tuple[Any, ...]], nodes: list[str],
                                        before: dict[str, Status], expects_err: bool, want_nodes: list[str],
                                        want_statuses: dict[str, tuple[Code, str]]) -> None:
    cache = Cache()
    for n in ("a", "b", "c"):
        cache.add_node(node(n))
    snap = cache.snapshot()
    statuses = NodeToStatus()
    statuses.absent = ABSENT
    for n, st in before.items():
        row = snap.row_of(n)
        assert row is not None
        statuses.set_row(row, st)
    rows = np.array([snap.row_of(n) for n in nodes], np.int64)
    with ExitStack() as stack:
        exts = []
        for preds in predicates:
            srv = stack.enter_context(serving(filter=fake_filter(*preds)))
            exts.append(HTTPExtender(ExtenderConfig.model_validate({"urlPrefix": srv.url, "filterVerb": "filter"}),
                                     ObjectBodies()))
        got, s = find_nodes_that_pass_extenders(exts, pod("1"), snap, rows, statuses)
    if expects_err:
        assert s.code == Code.ERROR and s.message() == "some error"
        return
    assert s.is_success()
    assert [snap.node_info(r).name for r in got.tolist()] == want_nodes
    assert {snap.node_info(r).name: (st.code, st.message()) for r, st in statuses.items()} == want_statuses
    assert statuses.absent is ABSENT
