"""Shadow profiles (issue #20 §3): a profile with ``spec.shadowOf`` decides alongside the live one on the
same snapshot, binds nothing, and counts agreements; what it reuses from the live run gives the same
answers as running it whole."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from scheduler.profiles.shadows import ReusePlan, Shadows
from scheduler.service import SchedulerService, profile_status_body
from tests.builders import MemoryClient


def node_obj(name: str, cpu: str = "4", labels: dict[str, str] | None = None,
             taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def pod_obj(name: str, cpu: str = "500m", scheduler: str = "live") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": scheduler, "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu, "memory": "100Mi"}}}]},
            "status": {"phase": "Pending"}}


def strategy(kind: str) -> list[dict[str, Any]]:
    return [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": kind}}}]


def service(**live: Any) -> tuple[SchedulerService, MemoryClient]:
    client = MemoryClient()
    s = SchedulerService(client, seed=7)
    client.cache = s.cache
    st = s.on_profile("live", {"schedulerName": "live", **live}, {"generation": 1})
    assert st.accepted, st.message
    return s, client


def run(s: SchedulerService) -> None:
    asyncio.run(s.scheduler.run_until_idle())


def counts(s: SchedulerService, cr: str) -> dict[str, int]:
    shadow = s.shadows.get(cr)
    assert shadow is not None
    return dict(shadow.stats.counts)


def test_a_most_allocated_shadow_of_a_least_allocated_profile_differs_and_binds_nothing() -> None:
    s, client = service(pluginConfig=strategy("LeastAllocated"))
    st = s.on_profile("packer", {"schedulerName": "live", "shadowOf": "live",
                                 "pluginConfig": strategy("MostAllocated")}, {"generation": 2})
    assert st.accepted and st.reason == "Shadow" and st.shadow_of == "live", st.message
    assert "decides alongside schedulerName live (served by SchedulingProfile 'live')" in st.message
    body = profile_status_body(st, 2)
    assert body["shadowOf"] == "live" and body["conditions"][0]["reason"] == "Shadow"
    # Only the scoring strategy differs (FilterConfigured): the live search is reused, Fit re-scored.
    shadow = s.shadows.get("packer")
    assert shadow is not None
    assert shadow.plan(s.profiles.current["live"]) == ReusePlan(
        True, frozenset(p.name for p, _ in shadow.framework.score) - {"NodeResourcesFit"},
        frozenset({"NodeResourcesFit"}))
    for i, cpu in enumerate(("2", "4", "8")):
        s.on_node("ADDED", node_obj(f"n{i}", cpu=cpu))
    for i in range(6):
        s.on_pod("ADDED", pod_obj(f"p{i}"))
    run(s)
    assert len(client.bound) == 6                                   # the live profile bound them all
    assert s.profiles.owner_of("live") == "live"                    # the shadow claims no name
    c = counts(s, "packer")
    assert sum(c.values()) == 6 and c["differed"] > 0 and c["wouldBePending"] == 0
    status = s.take_shadow_updates()["packer"]
    assert status is not None and status["shadowOf"] == "live" and status["differed"] == c["differed"]
    d = status["differences"][0]
    assert set(d) == {"pod", "time", "live", "shadow"}
    # The live node is where the pod was bound; the shadow packs onto the node already most used.
    assert d["live"]["node"] == client.bound["uid-" + d["pod"].split("/")[1]] != d["shadow"]["node"] == "n2"
    assert isinstance(d["live"]["score"], int) and isinstance(d["shadow"]["score"], int)
    assert s.take_shadow_updates() == {}                              # nothing changed since
    from prometheus_client import generate_latest
    metrics = generate_latest(s.metrics.registry).decode()
    assert f'scheduler_shadow_decisions_total{{outcome="differed",profile="packer"}} {float(c["differed"])}' \
        in metrics


def test_an_identical_shadow_reuses_everything_and_always_agrees() -> None:
    s, _ = service()
    s.on_profile("copy", {"schedulerName": "copy", "shadowOf": "live"}, {"generation": 1})
    shadow = s.shadows.get("copy")
    assert shadow is not None
    live = s.profiles.current["live"]
    plan = shadow.plan(live)
    assert plan == ReusePlan(True, frozenset(n for n, _ in ((p.name, 0) for p, _ in live.score)), frozenset())
    for i in range(4):
        s.on_node("ADDED", node_obj(f"n{i}", cpu=str(2 + i)))
    for i in range(10):
        s.on_pod("ADDED", pod_obj(f"p{i}"))
    run(s)
    assert counts(s, "copy") == {"agreed": 10, "differed": 0, "wouldBePending": 0}


def test_a_shadow_that_filters_differently_runs_whole_and_counts_would_be_pending() -> None:
    s, _ = service()
    # The shadow only accepts nodes labelled pool=gpu (NodeAffinity's addedAffinity): a Filter change.
    s.on_profile("strict", {"schedulerName": "live", "shadowOf": "live", "pluginConfig": [
        {"name": "NodeAffinity", "args": {"addedAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}}}}]},
        {"generation": 1})
    shadow = s.shadows.get("strict")
    assert shadow is not None and not shadow.plan(s.profiles.current["live"]).filters_same
    s.on_node("ADDED", node_obj("plain"))
    s.on_pod("ADDED", pod_obj("web"))
    run(s)
    assert counts(s, "strict") == {"agreed": 0, "differed": 0, "wouldBePending": 1}
    (d,) = s.take_shadow_updates()["strict"]["differences"]          # type: ignore[index]
    assert d["live"]["node"] == "plain" and d["shadow"]["node"] is None
    assert d["shadow"]["reason"] == "0/1 nodes are available: 1 node(s) didn't match scheduler-enforced node affinity."


def test_a_shadow_that_tolerates_more_places_what_the_live_profile_leaves_pending() -> None:
    s, client = service()
    s.on_profile("lenient", {"schedulerName": "live", "shadowOf": "live",
                             "plugins": {"filter": {"disabled": [{"name": "TaintToleration"}]}}}, {"generation": 1})
    s.on_node("ADDED", node_obj("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    s.on_pod("ADDED", pod_obj("web"))
    run(s)
    assert client.bound == {} and counts(s, "lenient")["differed"] == 1
    (d,) = s.take_shadow_updates()["lenient"]["differences"]         # type: ignore[index]
    assert d["live"] == {"node": None, "score": None} and d["shadow"]["node"] == "tainted"


@pytest.mark.parametrize("seed", range(12))
def test_reusing_the_live_run_decides_as_running_the_shadow_whole(seed: int) -> None:
    """The reuse plan is an optimisation only: on random clusters, a shadow that reuses the live
    search and scores gives the same outcomes as the same shadow forced to run whole."""
    rng = random.Random(seed)
    shadow_spec = {"schedulerName": "live", "shadowOf": "live",
                   "pluginConfig": strategy(rng.choice(["MostAllocated", "LeastAllocated"])),
                   "plugins": {"score": {"enabled": [{"name": "NodeResourcesBalancedAllocation",
                                                      "weight": rng.randint(1, 5)}]}}}
    results = []
    for force_whole in (False, True):
        s, _ = service()
        s.on_profile("shadow", shadow_spec, {"generation": 1})
        shadow = s.shadows.get("shadow")
        assert shadow is not None
        if force_whole:
            live = s.profiles.current["live"]
            shadow._plans[id(live)] = (live, ReusePlan(False, frozenset(), frozenset()))
        r = random.Random(seed)
        for i in range(r.randint(3, 12)):
            s.on_node("ADDED", node_obj(f"n{i}", cpu=str(r.choice([2, 4, 8, 16]))))
        for i in range(30):
            s.on_pod("ADDED", pod_obj(f"p{i}", cpu=f"{r.choice([100, 250, 500, 1000, 3000])}m"))
        run(s)
        results.append(counts(s, "shadow"))
    assert results[0] == results[1]


def test_shadow_lifecycle_edits_and_names() -> None:
    s, client = service()
    # A CR serving a name becomes a shadow: it releases the name, and the next claimant takes over.
    s.on_profile("other", {"schedulerName": "other"}, {"generation": 1, "creationTimestamp": "2026-01-01T00:00:00Z"})
    assert s.profiles.owner_of("other") == "other"
    s.on_profile("other", {"schedulerName": "other", "shadowOf": "live"}, {"generation": 2})
    assert s.profiles.owner_of("other") is None and s.shadows.get("other") is not None
    # A bad edit keeps the last good shadow.
    st = s.on_profile("other", {"schedulerName": "other", "shadowOf": "Not A Name"}, {"generation": 3})
    assert not st.accepted and "shadowOf" in st.message and s.shadows.get("other") is not None
    # Back to a live profile: it stops shadowing and serves its name again; its status.shadow goes.
    s.take_shadow_updates()
    st = s.on_profile("other", {"schedulerName": "other"}, {"generation": 4})
    assert st.accepted and not st.shadow_of and s.profiles.owner_of("other") == "other"
    assert s.take_shadow_updates() == {"other": None}
    assert profile_status_body(st, 4)["shadowOf"] is None
    # Deleting a shadow drops it.
    s.on_profile("gone", {"schedulerName": "gone", "shadowOf": "live"}, {"generation": 1})
    s.remove_profile("gone")
    assert s.shadows.get("gone") is None and len(s.shadows) == 0
    # A shadow of a name nobody serves is accepted and waits.
    st = s.on_profile("early", {"schedulerName": "x", "shadowOf": "nobody"}, {"generation": 1})
    assert st.accepted and "not served now" in st.message
    del client


def test_shadows_registry_hands_out_each_change_once() -> None:
    from scheduler.profiles.shadows import ShadowDifference
    s, _ = service()
    shadows: Shadows = s.shadows
    s.on_profile("a", {"schedulerName": "a", "shadowOf": "live"}, {"generation": 1})
    assert shadows.take_updates() == {"a": {"shadowOf": "live", "agreed": 0, "differed": 0, "wouldBePending": 0,
                                            "differences": []}}
    sh = shadows.get("a")
    assert sh is not None
    for i in range(25):
        sh.stats.record("differed", ShadowDifference(f"ns/p{i}", 0.0, "n1", 10, "n2", 20))
    body = shadows.take_updates()["a"]
    assert body is not None and body["differed"] == 25 and len(body["differences"]) == 20
    assert body["differences"][0]["pod"] == "ns/p5" and body["differences"][-1]["pod"] == "ns/p24"
