"""InterPodAffinity, after upstream's ``interpodaffinity/filtering_test.go`` and ``scoring_test.go``."""

from __future__ import annotations

import pytest

from scheduler.model import Pod
from scheduler.plugins import interpodaffinity
from scheduler.plugins.args import InterPodAffinityArgs
from tests.builders import pod, run_filter, run_score, zoned

IPA = interpodaffinity.InterPodAffinity(InterPodAffinityArgs())


def affinity(kind: str, key: str = "zone", match: dict | None = None) -> dict:
    return {"affinity": {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": match or {"app": "db"}}, "topologyKey": key}]}}}


@pytest.mark.parametrize(("name", "p", "existing", "want"), [
    ("affinity to zone with db", pod("p", spec=affinity("podAffinity")), [pod("db", labels={"app": "db"}, node_name="a1")],
     [None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("no db anywhere, pod does not match itself", pod("p", spec=affinity("podAffinity")), [],
     [interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH] * 4),
    ("first pod of a group goes anywhere with the key", pod("p", labels={"app": "db"}, spec=affinity("podAffinity")), [],
     [None, None, None, interpodaffinity.ERR_REASON_AFFINITY_RULES_NOT_MATCH]),
    ("anti-affinity keeps out of the zone", pod("p", spec=affinity("podAntiAffinity")),
     [pod("db", labels={"app": "db"}, node_name="a1")],
     [interpodaffinity.ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH] * 2 + [None, None]),
    ("existing pod's anti-affinity", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "web"}))],
     [None, None, interpodaffinity.ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH, None]),
])
def test_inter_pod_affinity_filter(name: str, p: Pod, existing: list[Pod], want: list[str | None]) -> None:
    got = run_filter(IPA, p, zoned(), existing)
    assert [None if g is None else g.reasons[0] for g in got] == want, name


def test_inter_pod_affinity_preferred_score() -> None:
    spec = {"affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 5, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone"}}]}}}
    got = run_score(IPA, pod("p", spec=spec), zoned()[:3], [pod("db", labels={"app": "db"}, node_name="b1")])
    assert got == [0, 0, 100]


@pytest.mark.parametrize(("name", "p", "existing", "skip"), [
    # filtering.go PreFilter (issue #14 item 9): Skip when the pod has no required terms and no existing
    # pod's required anti-affinity counts against it, as upstream's wantPreFilterStatus: fwk.Skip cases.
    ("no terms, no existing pods", pod("p"), [], True),
    ("no terms; an existing anti-affinity term that does not match the pod", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "cache"}))], True),
    ("no terms; the matching holder's node lacks the topology key", pod("p", labels={"app": "web"}),
     [pod("db", node_name="c1", spec=affinity("podAntiAffinity", match={"app": "web"}))], True),
    ("no terms; an existing anti-affinity term matches the pod", pod("p", labels={"app": "web"}),
     [pod("db", node_name="b1", spec=affinity("podAntiAffinity", match={"app": "web"}))], False),
    ("required affinity of its own", pod("p", spec=affinity("podAffinity")), [], False),
    ("required anti-affinity of its own", pod("p", spec=affinity("podAntiAffinity")), [], False),
])
def test_inter_pod_affinity_pre_filter_skip(name: str, p: Pod, existing: list[Pod], skip: bool) -> None:
    from tests.builders import setup
    snap, state, _ = setup(zoned(), existing)
    _, status = IPA.pre_filter(state, p, snap)
    assert status.is_skip() == skip, name
    assert status.is_success() != skip, name
