"""Opportunistic batching through the whole cycle (``framework/batch.py``, gate
``OpportunisticBatching``): upstream's integration table, and the same placements and decision
records with the gate on and off on seeded random clusters."""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler import Cache, Metrics, ProfileMap, Registry, Scheduler, SchedulingQueue, compile_profile, parse_spec
from scheduler.framework import Status
from scheduler.framework.decision import DecisionStore
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import FilterVerdict
from scheduler.plugins.registry import PluginSpec
from tests.builders import Clock, MemoryClient, node, pod


class NoSign:
    """A Filter plugin without ``sign_pod`` (upstream's ``testPluginNoSign``): its profile signs nothing."""

    name = "nosign"

    def filter_nodes(self, state, pod, snapshot, rows):  # type: ignore[no-untyped-def]
        return FilterVerdict.passed(len(rows))


class EmptySign(NoSign):
    """A Filter plugin that cannot sign any pod (upstream's ``testPluginEmptySign``)."""

    name = "emptysign"

    def sign_pod(self, pod):  # type: ignore[no-untyped-def]
        return (), Status.unschedulable()


def make(profiles: dict[str, dict[str, Any]], *, batching: bool = True, seed: int = 0,
         decisions: DecisionStore | None = None) -> tuple[Scheduler, MemoryClient]:
    clock = Clock()
    cache = Cache(clock=clock)
    metrics = Metrics()
    pm = ProfileMap()
    queue = SchedulingQueue(pm.for_pod, clock=clock, metrics=metrics)
    client = MemoryClient(cache, queue)
    handle = Handle(client=client, metrics=metrics, nominator=queue.nominator, assigned_pod=cache.get_pod,
                    activate=queue.activate, seed=seed)
    registry = Registry({p.name: PluginSpec(p.name, lambda args, handle, p=p: p()) for p in (NoSign, EmptySign)},
                        load_entry_points=False)
    for name, spec in profiles.items():
        fwk = compile_profile(parse_spec({"schedulerName": name, **spec}), registry=registry, handle=handle,
                              metrics=metrics, seed=seed)
        pm.set(name, fwk)
    return Scheduler(pm, cache, queue, client, metrics=metrics, clock=clock, batching=batching,
                     decisions=decisions), client


# --- test/integration/scheduler/batch/batch_test.go, TestBatchScenarios ---------------------
@dataclass
class PodDef:
    name: str
    expected_node: str
    node_selector: dict[str, str] = field(default_factory=dict)
    node_affinity: list[str] = field(default_factory=list)
    expect_batched: bool = False
    scheduler: str = "default-scheduler"


@dataclass
class NodeDef:
    name: str
    max_pods: int
    labels: dict[str, str] = field(default_factory=dict)


@dataclass
class Scenario:
    name: str
    pods: list[PodDef]
    nodes: list[NodeDef]


def one_per_node(prefix: str, n: int) -> list[NodeDef]:
    return [NodeDef(f"{prefix}-batchn{i}", 1) for i in range(n, 0, -1)]


SCENARIOS = [
    Scenario("one pod one node", [PodDef("1ppn-batchp1", "1ppn-batchn1")], [NodeDef("1ppn-batchn1", 1)]),
    Scenario("distinct pods on distinct nodes", [
        PodDef("dpdn-batchp1", "dpdn-batchn1", node_selector={"forpod": "1"}),
        PodDef("dpdn-batchp2", "dpdn-batchn2", node_selector={"forpod": "2"}),
        PodDef("dpdn-batchp3", "dpdn-batchn3", node_selector={"forpod": "3"}),
    ], [NodeDef("dpdn-batchn3", 10, {"forpod": "3"}), NodeDef("dpdn-batchn2", 10, {"forpod": "2"}),
        NodeDef("dpdn-batchn1", 10, {"forpod": "1"})]),
    Scenario("three pod batch", [
        PodDef("tpb-batchp1", "tpb-batchn1", node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"]),
        PodDef("tpb-batchp2", "tpb-batchn2", node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"],
               expect_batched=True),
        PodDef("tpb-batchp3", "tpb-batchn3", node_affinity=["tpb-batchn1", "tpb-batchn2", "tpb-batchn3"],
               expect_batched=True),
    ], one_per_node("tpb", 3)),
    Scenario("two consecutive batches", [
        PodDef("tcb-batchp1", "tcb-batchn1", node_affinity=["tcb-batchn1", "tcb-batchn2"]),
        PodDef("tcb-batchp2", "tcb-batchn2", node_affinity=["tcb-batchn1", "tcb-batchn2"], expect_batched=True),
        PodDef("tcb-batchp3", "tcb-batchn4", node_affinity=["tcb-batchn4", "tcb-batchn3"]),
        PodDef("tcb-batchp4", "tcb-batchn3", node_affinity=["tcb-batchn4", "tcb-batchn3"], expect_batched=True),
    ], one_per_node("tcb", 4)),
    Scenario("multiple pods per node means no batching", [
        PodDef("mppn-batchp1", "mppn-batchn1", node_affinity=["mppn-batchn1", "mppn-batchn2"]),
        PodDef("mppn-batchp2", "mppn-batchn1", node_affinity=["mppn-batchn1", "mppn-batchn2"]),
        PodDef("mppn-batchp3", "mppn-batchn4", node_affinity=["mppn-batchn4", "mppn-batchn3"]),
        PodDef("mppn-batchp4", "mppn-batchn4", node_affinity=["mppn-batchn4", "mppn-batchn3"]),
    ], [NodeDef(f"mppn-batchn{i}", 2) for i in range(4, 0, -1)]),
    Scenario("no batching between schedulers", [
        PodDef("bts--batchp1", "bts--batchn1", node_affinity=["bts--batchn1", "bts--batchn2", "bts--batchn3"]),
        PodDef("bts--batchp2", "bts--batchn2", node_affinity=["bts--batchn1", "bts--batchn2", "bts--batchn3"],
               scheduler="mysched"),
    ], one_per_node("bts-", 3)),
    Scenario("no batching missing sign", [
        PodDef("nsg-batchp1", "nsg-batchn1", node_affinity=["nsg-batchn1", "nsg-batchn2", "nsg-batchn3"],
               scheduler="nosign"),
        PodDef("nsg-batchp2", "nsg-batchn2", node_affinity=["nsg-batchn1", "nsg-batchn2", "nsg-batchn3"],
               scheduler="nosign"),
    ], one_per_node("nsg", 3)),
    Scenario("no batching empty sign", [
        PodDef("esg-batchp1", "esg-batchn1", node_affinity=["esg-batchn1", "esg-batchn2", "esg-batchn3"],
               scheduler="emptysign"),
        PodDef("esg-batchp2", "esg-batchn2", node_affinity=["esg-batchn1", "esg-batchn2", "esg-batchn3"],
               scheduler="emptysign"),
    ], one_per_node("esg", 3)),
]
# Upstream's commented-out case "nnn trumps hint" is left out as upstream leaves it out.

PROFILES: dict[str, dict[str, Any]] = {
    "default-scheduler": {}, "mysched": {},
    "nosign": {"plugins": {"filter": {"enabled": [{"name": "nosign"}]}}},
    "emptysign": {"plugins": {"filter": {"enabled": [{"name": "emptysign"}]}}},
}


def scenario_pod(d: PodDef):  # type: ignore[no-untyped-def]
    # newPod: preferred node affinity on metadata.name, weights len-i; 10 cpu and 4Mi requested.
    terms = [{"weight": len(d.node_affinity) - i, "preference": {"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": [n]}]}} for i, n in enumerate(d.node_affinity)]
    spec: dict[str, Any] = {"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": terms}}}
    if d.node_selector:
        spec["nodeSelector"] = d.node_selector
    return pod(d.name, "10", str(4 * 1024 * 1024), scheduler_name=d.scheduler, spec=spec)


def run_scenario(tt: Scenario, batching: bool) -> tuple[list[str | None], list[bool]]:
    s, client = make(PROFILES, batching=batching)
    for n in tt.nodes:
        # newNode: 100 cpu, 4Gi, maxPods pods.
        s.cache.add_node(node(n.name, cpu="100", memory=str(4 * 1024**3), pods=n.max_pods, labels=n.labels))
    placed: list[str | None] = []
    batched: list[bool] = []
    for d in tt.pods:
        fwk = s.profiles.current[d.scheduler]
        before = fwk.batch.batched_pods
        p = scenario_pod(d)
        s.queue.add(p)
        asyncio.run(s.run_until_idle())
        placed.append(client.bound.get(p.uid))
        batched.append(fwk.batch.batched_pods > before)
    return placed, batched


@pytest.mark.parametrize("tt", SCENARIOS, ids=lambda t: t.name)
def test_batch_scenarios(tt: Scenario) -> None:
    placed, batched = run_scenario(tt, True)
    assert placed == [d.expected_node for d in tt.pods]
    assert batched == [d.expect_batched for d in tt.pods]
    off, never = run_scenario(tt, False)
    assert off == placed
    assert not any(never)


# --- same placements with the gate on and off, random clusters -------------------------------
ZONE = "topology.kubernetes.io/zone"


def random_cluster(seed: int, n_nodes: int) -> tuple[list[Any], list[Any]]:
    """Nodes of a few shapes (some tainted, labelled, with images) and runs of identical pods of
    mixed kinds: plain, node-selected, preferring nodes by name, tolerating, with host ports,
    and unsignable ones (spread constraints, anti-affinity). Most pods are large, so nodes fill
    one or two pods each and the batch has something to reuse."""
    rng = random.Random(seed)
    taint = [{"key": "t", "value": "v", "effect": "NoSchedule"}]
    nodes = []
    for i in range(n_nodes):
        nodes.append(node(f"n{i}", cpu=rng.choice(["2", "4", "4", "8"]), memory="16Gi", pods=rng.choice([2, 110]),
                          labels={ZONE: f"z{i % 3}", "tier": rng.choice(["a", "b"])},
                          taints=taint if rng.random() < 0.15 else [],
                          images=[("img:1", 500 * 1024 * 1024)] if rng.random() < 0.3 else None))
    pods = []
    kinds = ["plain", "selector", "prefer", "tolerate", "ports", "spread", "anti", "small"]
    k = run = 0
    while len(pods) < n_nodes * 2:
        run += 1
        kind = rng.choice(kinds)
        labels = {"app": f"a{run % 3}"}
        cpu = rng.choice(["1500m", "2", "3"]) if kind != "small" else "100m"
        image = rng.choice(["img:1", "img:2"])
        for _ in range(rng.randint(1, 8)):
            spec: dict[str, Any] = {}
            if kind == "selector":
                spec["nodeSelector"] = {"tier": "a"}
            elif kind == "prefer":
                names = rng.sample(range(n_nodes), min(3, n_nodes))
                spec["affinity"] = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 10 * (j + 1), "preference": {"matchFields": [
                        {"key": "metadata.name", "operator": "In", "values": [f"n{x}"]}]}}
                    for j, x in enumerate(names)]}}
            elif kind == "tolerate":
                spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
            elif kind == "ports":
                spec["containers"] = [{"name": "c", "image": image, "ports": [{"containerPort": 80, "hostPort": 8080}],
                                       "resources": {"requests": {"cpu": cpu}}}]
            elif kind == "spread":
                spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": ZONE,
                                                      "whenUnsatisfiable": "DoNotSchedule",
                                                      "labelSelector": {"matchLabels": labels}}]
            elif kind == "anti":
                spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": labels}, "topologyKey": "kubernetes.io/hostname"}]}}
            pods.append(pod(f"p{k}", cpu, "1Gi", labels=labels, spec=spec, image=image))
            k += 1
    return nodes, pods


def schedule_all(nodes: list[Any], pods: list[Any], *, batching: bool, seed: int,
                 spec: dict[str, Any]) -> tuple[dict[str, str | None], dict[str, Any], int]:
    store = DecisionStore(capacity=100_000)
    s, client = make({"default-scheduler": spec}, batching=batching, seed=seed, decisions=store)
    for n in nodes:
        s.cache.add_node(n)
    for p in pods:
        s.queue.add(p)
    asyncio.run(s.run_until_idle())
    records = {}
    for p in pods:
        r = store.get(p.key)
        # The same record but its time; the "filtered" histogram as a map (a batched pod's nodes
        # taken since the list was made come last, the full search's in filter order).
        records[p.key] = None if r is None else r._replace(time=0.0, filtered=dict(r.filtered))
    batched = s.profiles.current["default-scheduler"].batch.batched_pods
    return {p.key: client.bound.get(p.uid) for p in pods}, records, batched


@pytest.mark.parametrize(("seed", "n_nodes", "spec"), [
    (1, 5, {}), (2, 12, {}), (3, 40, {}), (4, 90, {}),
    (5, 150, {}),                                        # sampled search: lists cut short are never reused
    (6, 150, {"percentageOfNodesToScore": 100}),         # every node searched: batched again
])
def test_same_placements_and_records_with_the_gate_on_and_off(seed: int, n_nodes: int, spec: dict[str, Any]) -> None:
    nodes, pods = random_cluster(seed, n_nodes)
    on, on_records, batched = schedule_all(nodes, pods, batching=True, seed=seed, spec=spec)
    off, off_records, none = schedule_all(nodes, pods, batching=False, seed=seed, spec=spec)
    assert on == off
    assert on_records == off_records
    assert none == 0
    if n_nodes > 20:
        assert batched > 0, "the batch was never used: the test would show nothing"
