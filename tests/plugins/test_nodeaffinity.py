"""NodeAffinity, after upstream's ``nodeaffinity/node_affinity_test.go``."""

from __future__ import annotations

import pytest

from scheduler.plugins import nodeaffinity
from scheduler.plugins.args import NodeAffinityArgs
from tests.builders import node, pod, reasons, run_filter, run_score

NA = nodeaffinity.NodeAffinity(NodeAffinityArgs())


ZONE_AFFINITY = {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
    "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1", "z2"]}]}]}}}}


@pytest.mark.parametrize(("name", "spec", "want"), [
    ("node selector", {"nodeSelector": {"zone": "z1"}}, [True, False, False]),
    ("required In", ZONE_AFFINITY, [True, True, False]),
    ("NotIn matches missing", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["z1"]}]}]}}}},
     [False, True, True]),
    ("Gt", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["2"]}]}]}}}},
     [False, True, False]),
    ("terms are ORed", {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]},
                              {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]}}}},
     [True, False, True]),
    ("selector with unknown value matches nothing", {"nodeSelector": {"zone": "nowhere"}}, [False, False, False]),
])
def test_node_affinity_filter(name: str, spec: dict, want: list[bool]) -> None:
    nodes = [node("a", labels={"zone": "z1", "gen": "1"}), node("b", labels={"zone": "z2", "gen": "3"}), node("c")]
    got = run_filter(NA, pod("p", spec=spec), nodes)
    assert [g is None for g in got] == want, name
    for g in got:
        assert g is None or g.reasons == ("node(s) didn't match Pod's node affinity/selector",)


def test_node_affinity_preferred_score() -> None:
    spec = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 2, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["z1"]}]}},
        {"weight": 8, "preference": {"matchExpressions": [{"key": "ssd", "operator": "Exists"}]}}]}}}
    nodes = [node("a", labels={"zone": "z1"}), node("b", labels={"ssd": "y"}), node("c", labels={"zone": "z1", "ssd": "y"})]
    assert run_score(NA, pod("p", spec=spec), nodes) == [20, 80, 100]


def test_added_affinity() -> None:
    plugin = nodeaffinity.NodeAffinity(NodeAffinityArgs(addedAffinity={
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["batch"]}]}]}}))
    got = run_filter(plugin, pod("p"), [node("a", labels={"pool": "batch"}), node("b")])
    assert reasons(got) == [None, ("node(s) didn't match scheduler-enforced node affinity",)]
