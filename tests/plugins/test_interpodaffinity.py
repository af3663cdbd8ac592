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
