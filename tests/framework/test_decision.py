"""Decision records (issue #20 §1): the JSON shape, the top nodes, the bounded store, and the
records a real cycle leaves: placed, pending with the FitError's counts, and preempting."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import numpy as np
import pytest

from scheduler.framework.decision import (
    DECISION_ANNOTATION,
    DecisionRecord,
    DecisionStore,
    TopScores,
    best_indices,
    top_scores,
)
from scheduler.model.pod import EXPLAIN_ANNOTATION
from scheduler.service import SchedulerService
from tests.builders import MemoryClient

SHAPE = ["pod", "profile", "profileGeneration", "attempt", "time", "node", "evaluatedNodes", "feasibleNodes",
         "filtered", "scores", "preemption"]


def test_json_shape_is_exactly_the_contract() -> None:
    r = DecisionRecord("shop/web-0", "default-scheduler", 3, 2, 1796292000.0, "n7", 500, 212,
                       (("Insufficient cpu", 250),), TopScores(("n7",), (412,), ("A", "B"), (100, 12), (4, 1)),
                       None)
    out = r.to_json()
    assert list(out) == SHAPE
    assert out["time"] == "2026-12-03T10:00:00Z" and out["profileGeneration"] == 3 and out["preemption"] is None
    assert out["filtered"] == {"Insufficient cpu": 250}
    assert out["scores"] == [{"node": "n7", "total": 412, "plugins": {"A": 400, "B": 12}}]
    assert r._replace(preemption=("n2", ("a/v1",))).to_json()["preemption"] == {"nominatedNode": "n2",
                                                                               "victims": ["a/v1"]}


def test_kept_records_are_never_tracked_by_the_garbage_collector() -> None:
    """Ten thousand kept records must not make the collector run more often or longer."""
    import gc
    rec = DecisionRecord("a/b", "p", 1, 1, 0.0, "n", 3, 3, (("r", 1),),
                         top_scores(np.array([0, 1], np.int64), np.array([5, 9], np.int64),
                                    {"A": np.array([1, 2], np.int64)}, {"A": 2}, 3, lambda r: f"n{r}"))
    store = DecisionStore()
    store.put(rec)
    (kept,) = store.kept()
    assert not gc.is_tracked(kept)                   # from the start, not only after a collection
    assert store.get("a/b") == rec                                  # and read back as it went in


def test_top_scores_are_the_best_totals_with_weighted_plugin_scores() -> None:
    totals = np.array([10, 50, 30, 50, 5], np.int64)
    per = {"A": np.array([1, 5, 3, 5, 0], np.int64), "B": np.array([0, 0, 0, 0, 5], np.int64)}
    rows = np.array([10, 11, 12, 13, 14], np.int64)

    def name(r: int) -> str:
        return f"n{r - 10}"
    top = top_scores(rows, totals, per, {"A": 10, "B": 1}, 3, name).to_json()
    assert [t["node"] for t in top] == ["n1", "n3", "n2"]          # ties in the given order ...
    chosen = top_scores(rows, totals, per, {"A": 10, "B": 1}, 2, name, chosen=3).to_json()
    assert [t["node"] for t in chosen] == ["n3", "n1"]             # ... but the chosen node first
    assert top[0] == {"node": "n1", "total": 50, "plugins": {"A": 50, "B": 0}}
    one = top_scores(rows[:1], np.array([7], np.int64), {}, {}, 3, name).to_json()
    assert one == [{"node": "n0", "total": 7, "plugins": {}}]
    assert top_scores(rows[:0], np.zeros(0, np.int64), {}, {}, 3, name).to_json() == []


@pytest.mark.parametrize(("totals", "chosen", "k", "want"), [
    ([50, 50, 50, 50, 10], 2, 3, [2, 0, 1]),        # ties at the chosen total fill k: the first others in order
    ([50, 50, 30, 50, 10], 3, 3, [3, 0, 1]),
    ([50, 40, 30, 50, 45], 3, 3, [3, 0, 4]),        # fewer ties than k: then the next best totals
    ([50, 40, 30, 50, 45], 0, 5, [0, 3, 4, 1, 2]),
    ([7], 0, 3, [0]),
])
def test_best_indices_put_the_chosen_first_then_the_best_in_order(totals: list[int], chosen: int, k: int,
                                                                   want: list[int]) -> None:
    assert best_indices(np.array(totals, np.int64), k, chosen) == want


def test_top_scores_weigh_with_the_profile_given_not_an_earlier_one() -> None:
    """The weight tuple is kept per plugin tuple between records; a new weights mapping (a profile
    edited to other weights, the same plugins) is read again."""
    rows, totals = np.array([0], np.int64), np.array([4], np.int64)
    per = {"A": np.array([2], np.int64)}
    assert top_scores(rows, totals, per, {"A": 2}, 1, str).to_json()[0]["plugins"] == {"A": 4}
    assert top_scores(rows, totals, per, {"A": 5}, 1, str).to_json()[0]["plugins"] == {"A": 10}


def test_store_keeps_the_latest_per_pod_and_is_bounded() -> None:
    store = DecisionStore(capacity=2)

    def rec(pod: str, attempt: int) -> DecisionRecord:
        return DecisionRecord(pod, "p", None, attempt, 0.0, None, 0, 0)
    store.put(rec("a/1", 1))
    store.put(rec("a/1", 2))
    store.put(rec("a/2", 1))
    store.put(rec("a/3", 1))
    assert store.get("a/1") is None and store.get("a/2") is not None and len(store) == 2
    store.forget("a/2")
    assert store.get("a/2") is None
    off = DecisionStore(capacity=0)
    off.put(rec("a/1", 1))
    assert not off.enabled and off.get("a/1") is None
    with pytest.raises(ValueError):
        DecisionStore(capacity=-1)


def pod_obj(name: str, cpu: str = "100m", priority: int = 0) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": "s1", "priority": priority, "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Pending"}}


def node_obj(name: str, cpu: str = "4", taints: list[dict[str, str]] | None = None) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "spec": {"taints": taints or []},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


def service(**kw: Any) -> SchedulerService:
    client = MemoryClient()
    s = SchedulerService(client, seed=1, **kw)
    client.cache = s.cache
    s.on_profile("p", {"schedulerName": "s1"}, {"generation": 4})
    return s


def failures(s: SchedulerService) -> list[tuple[str, str, str, str | None]]:
    client = s.client
    assert isinstance(client, MemoryClient)
    return client.failures


def test_a_placed_pod_records_its_node_scores_and_the_nodes_filtered_out() -> None:
    s = service()
    s.on_node("ADDED", node_obj("big", cpu="8"))
    s.on_node("ADDED", node_obj("small", cpu="4"))
    s.on_node("ADDED", node_obj("tiny", cpu="1"))
    s.on_node("ADDED", node_obj("tainted", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    s.on_pod("ADDED", pod_obj("web", cpu="2"))
    asyncio.run(s.scheduler.run_until_idle())
    r = s.decisions.get("default/web")
    assert r is not None
    out = r.to_json()
    assert out["node"] == "big" and out["profile"] == "s1" and out["profileGeneration"] == 4 and out["attempt"] == 1
    assert out["evaluatedNodes"] == 4 and out["feasibleNodes"] == 2
    assert sum(out["filtered"].values()) == 2 and out["filtered"]["Insufficient cpu"] == 1
    assert [t["node"] for t in out["scores"]] == ["big", "small"]
    for t in out["scores"]:
        assert sum(t["plugins"].values()) == t["total"]        # weighted scores add up to the total
    assert out["scores"][0]["plugins"]["TaintToleration"] % 3 == 0    # weight 3 applied


def test_a_pending_pod_records_the_fit_errors_counts() -> None:
    s = service()
    s.on_node("ADDED", node_obj("a", cpu="1"))
    s.on_node("ADDED", node_obj("b", taints=[{"key": "k", "value": "v", "effect": "NoSchedule"}]))
    s.on_pod("ADDED", pod_obj("huge", cpu="2"))
    asyncio.run(s.scheduler.run_until_idle())
    out = s.decisions.get("default/huge").to_json()       # type: ignore[union-attr]
    assert out["node"] is None and out["feasibleNodes"] == 0 and out["scores"] == []
    # Exactly the FitError's counts, as the FailedScheduling event prints them.
    (_, _, message, _), = [f for f in failures(s) if f[0] == "default/huge"]
    counted = message.split("available: ", 1)[1].split(".", 1)[0]
    fit = {reason: int(n) for n, reason in re.findall(r"(\d+) ([^,]+)", counted)}
    assert out["filtered"] == fit and sum(fit.values()) == 2


def test_a_preempting_pod_records_the_nomination_and_recording_off_costs_nothing() -> None:
    s = service()
    s.on_node("ADDED", node_obj("only", cpu="1"))
    s.on_pod("ADDED", pod_obj("low", cpu="800m"))
    asyncio.run(s.scheduler.run_until_idle())
    s.on_pod("ADDED", pod_obj("high", cpu="800m", priority=100))
    asyncio.run(s.scheduler.run_until_idle())
    out = s.decisions.get("default/high").to_json()       # type: ignore[union-attr]
    assert out["node"] is None and out["preemption"]["nominatedNode"] == "only"
    off = service(decision_records=0)
    off.on_node("ADDED", node_obj("only"))
    off.on_pod("ADDED", pod_obj("web"))
    asyncio.run(off.scheduler.run_until_idle())
    assert off.decisions.get("default/web") is None and len(off.decisions) == 0


def explained(name: str, cpu: str = "100m", value: str = "true") -> dict[str, Any]:
    obj = pod_obj(name, cpu)
    obj["metadata"]["annotations"] = {"scheduling.kopf-scheduler.io/explain": value}
    return obj


@pytest.mark.parametrize("records", [10_000, 0])
def test_a_pod_that_asks_gets_its_record_as_an_annotation(records: int) -> None:
    """The opt-in annotation (§1): the record goes on the pod after its binding or its failure, also
    with the store off (the pod's owner asked); pods that did not ask get nothing written."""
    import json
    s = service(decision_records=records)
    s.on_node("ADDED", node_obj("a", cpu="4"))
    s.on_node("ADDED", node_obj("b", cpu="2"))
    s.on_pod("ADDED", explained("placed", cpu="1"))
    s.on_pod("ADDED", explained("pending", cpu="8"))
    s.on_pod("ADDED", explained("not-asked", cpu="1", value="false"))
    s.on_pod("ADDED", pod_obj("plain", cpu="1"))
    asyncio.run(s.scheduler.run_until_idle())
    client = s.client
    assert isinstance(client, MemoryClient)
    assert set(client.annotations) == {"default/placed", "default/pending"}
    placed = json.loads(client.annotations["default/placed"]["scheduling.kopf-scheduler.io/decision"])
    assert list(placed) == SHAPE
    assert placed["node"] == client.bound["uid-placed"] and placed["pod"] == "default/placed"
    assert placed["scores"][0]["node"] == placed["node"]
    pending = json.loads(client.annotations["default/pending"]["scheduling.kopf-scheduler.io/decision"])
    assert pending["node"] is None and pending["filtered"] == {"Insufficient cpu": 2}
    assert (len(s.decisions) > 0) == (records > 0)


def test_a_failed_annotation_write_never_touches_scheduling() -> None:
    class Refusing(MemoryClient):
        async def annotate(self, pod: Any, annotations: Any) -> None:
            raise RuntimeError("apiserver says no")
    client = Refusing()
    s = SchedulerService(client, seed=1)
    client.cache = s.cache
    s.on_profile("p", {"schedulerName": "s1"}, {"generation": 1})
    s.on_node("ADDED", node_obj("a"))
    s.on_pod("ADDED", explained("web"))
    asyncio.run(s.scheduler.run_until_idle())
    assert client.bound == {"uid-web": "a"} and client.scheduled == [("default/web", "Successfully assigned "
                                                                                    "default/web to a")]


def test_each_plugins_recorded_score_is_what_it_computes_alone_times_its_weight() -> None:
    """Issue #20: a record's per-plugin scores are each Score plugin's own normalised score for the
    node, run alone (its PreScore, Score and NormalizeScore over the same feasible nodes), times the
    plugin's weight in the profile; the total is their sum. Six nodes that all fit, different in
    size, taints, labels and images, so that most default Score plugins give unequal scores."""
    from scheduler.framework.status import Code
    from scheduler.model.pod import parse_pod
    s = service(decision_top_nodes=6)
    sizes = [("n0", "2"), ("n1", "4"), ("n2", "8"), ("n3", "16"), ("n4", "6"), ("n5", "3")]
    for i, (name, cpu) in enumerate(sizes):
        body = node_obj(name, cpu=cpu, taints=[{"key": "soft", "value": "x", "effect": "PreferNoSchedule"}]
                        if i % 2 else None)
        body["metadata"]["labels"]["disk"] = "ssd" if i < 3 else "hdd"
        body["status"]["images"] = [{"names": ["registry/app:1"], "sizeBytes": 500_000_000}] if i in (1, 4) else []
        s.on_node("ADDED", body)
    s.on_pod("ADDED", {"metadata": {"name": "old", "namespace": "default", "uid": "uid-old"},
                       "spec": {"schedulerName": "s1", "nodeName": "n3", "containers": [
                           {"name": "c", "image": "i", "resources": {"requests": {"cpu": "12", "memory": "1Gi"}}}]},
                       "status": {"phase": "Running"}})
    body = pod_obj("web", cpu="1")
    body["spec"]["containers"][0]["image"] = "registry/app:1"
    body["spec"]["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 30, "preference": {"matchExpressions": [{"key": "disk", "operator": "In", "values": ["ssd"]}]}}]}}
    pod = parse_pod(body)
    fwk = s.profiles.for_pod(pod)
    assert fwk is not None
    # Each Score plugin alone, on the cluster as the cycle will see it (every node fits the pod).
    snapshot = s.cache.snapshot()
    rows = snapshot.node_order
    names = [snapshot.table.info(r).name for r in rows.tolist()]
    alone: dict[str, dict[str, int]] = {}
    weights = fwk.score_weights()
    skipped: set[str] = set()
    for entry in fwk._scores:
        state = fwk.new_cycle_state()
        _, st = fwk.run_pre_filter(state, pod, snapshot)
        assert st.is_success()
        plugin = fwk.plugins_by_name[entry.name]
        if hasattr(plugin, "pre_score") and plugin.pre_score(state, pod, snapshot, rows).code == Code.SKIP:
            skipped.add(entry.name)          # PreScore Skip: not scored, and not in NodePluginScores
        else:
            scores = np.asarray(entry.run(state, pod, snapshot, rows), np.int64)
            ext = entry.extensions() if entry.extensions is not None else None
            if ext is not None:
                assert ext.normalize_score(state, pod, scores).is_success()
            alone[entry.name] = {n: int(v) * weights[entry.name] for n, v in zip(names, scores.tolist(), strict=True)}
    s.on_pod("ADDED", body)
    asyncio.run(s.scheduler.run_until_idle())
    record = s.decisions.get("default/web")
    assert record is not None
    out = record.to_json()
    assert out["feasibleNodes"] == 6 and len(out["scores"]) == 6
    assert len({t["total"] for t in out["scores"]}) > 2                # the plugins do tell the nodes apart
    for t in out["scores"]:
        assert t["plugins"] == {name: alone[name][t["node"]] for name in t["plugins"]}, t["node"]
        assert set(t["plugins"]) == set(alone) and sum(t["plugins"].values()) == t["total"]
    assert skipped == {"InterPodAffinity", "PodTopologySpread", "VolumeBinding"}     # nothing to score for them
    assert any(v for t in out["scores"] for v in (t["plugins"]["NodeAffinity"], t["plugins"]["TaintToleration"],
                                                  t["plugins"]["ImageLocality"]))


def test_an_adversarial_extenders_reasons_are_bounded_in_the_record() -> None:
    """#32: an extender that fails each of 100 nodes with its own 1 KB reason made each record tens
    of KB. The record keeps the 32 most frequent reasons, each cut to 256 characters with a
    marker, the rest counted under one entry: the counts still add up to every node."""
    from scheduler.framework.decision import MAX_REASON_CHARS, MAX_REASONS, TRUNCATED
    from scheduler.kubeapi.extender import http_extender
    from tests.extender_server import node_names, serving

    def filter_(args: dict[str, Any]) -> Any:
        names = node_names(args)
        # Two nodes share the first reason, so the most frequent one is kept first.
        return {"NodeNames": [], "FailedNodes": {n: (names[0] if i < 2 else n) + "x" * 1000
                                                 for i, n in enumerate(names)}}
    with serving(filter=filter_) as ext:
        client = MemoryClient()
        s = SchedulerService(client, seed=1, extender_factory=http_extender)
        client.cache = s.cache
        assert s.on_profile("p", {"schedulerName": "s1", "extenders": [
            {"urlPrefix": ext.url, "filterVerb": "filter", "nodeCacheCapable": True}]}).accepted
        for i in range(100):
            s.on_node("ADDED", node_obj(f"node-{i:03}"))
        s.on_pod("ADDED", {**pod_obj("web"), "metadata": {"name": "web", "namespace": "default", "uid": "uid-web",
                                                          "annotations": {EXPLAIN_ANNOTATION: "true"}}})
        asyncio.run(s.scheduler.run_until_idle())
    record = s.decisions.get("default/web")
    assert record is not None and record.node is None
    out = record.to_json()
    filtered = out["filtered"]
    assert len(filtered) == MAX_REASONS and sum(filtered.values()) == 100
    reasons = list(filtered)
    assert filtered[reasons[0]] == 2 and reasons[0] == ("node-000" + "x" * 1000)[:MAX_REASON_CHARS] + TRUNCATED
    assert all(len(r) <= MAX_REASON_CHARS + len(TRUNCATED) for r in reasons)
    assert filtered["… 68 other reasons"] == 68
    assert len(json.dumps(out)) < 10_000
    # The record the pod asked for on itself is the same, bounded one.
    assert json.loads(client.annotations["default/web"][DECISION_ANNOTATION])["filtered"] == filtered
