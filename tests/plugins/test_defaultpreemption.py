"""DefaultPreemption, table-driven as upstream's ``default_preemption_test.go``: which node is
nominated, which pods are victims, and the exact messages; then the tie-breaks of
``pickOneNodeForPreemption``, the nominated-node fast path, filtering with nominated pods, and the
asynchronous carry-out."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.model import Pod, parse_pdb
from scheduler.plugins.defaultpreemption import (
    NAME,
    Candidate,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    pick_one_node_for_preemption,
)
from tests.builders import make_scheduler, node, pod

TAINT = [{"key": "dedicated", "value": "x", "effect": "NoSchedule"}]


@dataclass
class Case:
    name: str
    nodes: list[tuple[str, str]]                        # (name, cpu)
    pods: list[tuple[str, str, str, int]]               # (name, node, cpu, priority)
    preemptor: tuple[str, int]                          # (cpu, priority)
    nominated: str | None                               # the nominated node; None: no preemption
    victims: set[str] = field(default_factory=set)
    message: str | None = None
    labels: dict[str, dict[str, str]] = field(default_factory=dict)
    start: dict[str, str] = field(default_factory=dict)
    pdbs: list[dict[str, Any]] = field(default_factory=list)
    tainted: set[str] = field(default_factory=set)
    policy: str = ""


CASES = [
    Case("one victim beats two", [("n1", "4"), ("n2", "4")],
         [("a", "n1", "2", 1), ("b", "n1", "2", 1), ("c", "n2", "3", 1)], ("3", 10), "n2", {"c"},
         "0/2 nodes are available: 2 Insufficient cpu."),
    Case("the lowest highest-priority victim wins", [("n1", "4"), ("n2", "4")],
         [("a", "n1", "4", 5), ("b", "n2", "4", 3)], ("4", 10), "n2", {"b"}),
    Case("reprieve keeps the more important pod", [("n1", "4")],
         [("hi", "n1", "2", 5), ("lo", "n1", "2", 1)], ("2", 10), "n1", {"lo"}),
    Case("equal priority is never preempted", [("n1", "4")], [("a", "n1", "4", 10)], ("1", 10), None,
         message="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                 "1 No preemption victims found for incoming pod."),
    Case("higher priority is never preempted", [("n1", "4")], [("a", "n1", "4", 11)], ("1", 10), None,
         message="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                 "1 No preemption victims found for incoming pod."),
    Case("preemptionPolicy Never", [("n1", "4")], [("a", "n1", "4", 1)], ("1", 10), None, policy="Never",
         message="0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to "
                 "preemptionPolicy=Never."),
    Case("an unresolvable node is never a candidate", [("n1", "4"), ("n2", "4")],
         [("a", "n1", "1", 1), ("b", "n2", "4", 1)], ("4", 10), "n2", {"b"}, tainted={"n1"}),
    Case("only unresolvable nodes: preemption is not helpful", [("n1", "4"), ("n2", "2")],
         [("a", "n1", "1", 1)], ("3", 10), None, tainted={"n1"},
         message="0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint(s). "
                 "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."),
    Case("the issue's message", [("n1", "4"), ("n2", "2"), ("n3", "2")],
         [("a", "n1", "4", 10)], ("3", 10), None,
         message="0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
                 "1 No preemption victims found for incoming pod, 2 Preemption is not helpful for scheduling."),
    Case("still no fit without the victims", [("n1", "4")],
         [("a", "n1", "1", 1), ("b", "n1", "2", 20)], ("3", 10), None,
         message="0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: "
                 "1 Insufficient cpu."),
    Case("a PDB-protected pod is spared when an alternative exists", [("n1", "4"), ("n2", "4")],
         [("db", "n1", "4", 1), ("web", "n2", "4", 1)], ("4", 10), "n2", {"web"},
         labels={"db": {"app": "db"}, "web": {"app": "web"}},
         pdbs=[{"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": 0}]),
    Case("PDB-violating pods are reprieved first on a node", [("n1", "4")],
         [("db", "n1", "2", 1), ("web", "n1", "2", 5)], ("2", 10), "n1", {"web"},
         labels={"db": {"app": "db"}},
         pdbs=[{"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": 0}]),
    Case("a budget with room is not violated", [("n1", "4"), ("n2", "4")],
         [("db", "n1", "4", 1), ("web", "n2", "4", 2)], ("4", 10), "n1", {"db"},
         labels={"db": {"app": "db"}},
         pdbs=[{"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": 1}]),
    Case("when every candidate violates, the fewest violations win", [("n1", "4"), ("n2", "4")],
         [("a", "n1", "2", 1), ("b", "n1", "2", 1), ("c", "n2", "4", 1)], ("4", 10), "n2", {"c"},
         labels={"a": {"app": "db"}, "b": {"app": "db"}, "c": {"app": "db"}},
         pdbs=[{"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": 0}]),
    Case("ties go to the victims that started last", [("n1", "4"), ("n2", "4")],
         [("old", "n1", "4", 1), ("new", "n2", "4", 1)], ("4", 10), "n2", {"new"},
         start={"old": "2026-01-01T00:00:00Z", "new": "2026-06-01T00:00:00Z"}),
]


def _pdb(i: int, raw: dict[str, Any]) -> Any:
    return parse_pdb({"metadata": {"name": f"pdb{i}", "namespace": "default"},
                      "spec": {"selector": raw["selector"]}, "status": {"disruptionsAllowed": raw["disruptionsAllowed"]}})


def setup(case: Case, async_preemption: bool = True) -> tuple[Any, Any, Pod]:
    s, client = make_scheduler(pdbs=[_pdb(i, p) for i, p in enumerate(case.pdbs)],
                               feature_gates={"SchedulerAsyncPreemption": async_preemption})
    for name, cpu in case.nodes:
        s.cache.add_node(node(name, cpu=cpu, taints=TAINT if name in case.tainted else None))
    for name, where, cpu, prio in case.pods:
        status = {"startTime": case.start[name]} if name in case.start else None
        s.cache.add_pod(pod(name, cpu, node_name=where, priority=prio, labels=case.labels.get(name),
                            status=status))
    cpu, prio = case.preemptor
    spec = {"preemptionPolicy": case.policy} if case.policy else None
    p = pod("preemptor", cpu, priority=prio, spec=spec)
    return s, client, p


# Upstream's TestPreempt runs each case with asyncPreemptionEnabled true and false.
@pytest.mark.parametrize("async_preemption", [True, False], ids=["async", "sync"])
@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_preemption(case: Case, async_preemption: bool) -> None:
    s, client, p = setup(case, async_preemption)

    async def go() -> None:
        s.queue.add(p)
        info = s.queue.pop(timeout=0)
        assert info is not None
        await s.finish(s.schedule_one(info))
        await asyncio.sleep(0)           # let the carry-out task run
        for _ in range(20):
            await asyncio.sleep(0)

    asyncio.run(go())
    (key, reason, message, nominated), = client.failures
    assert (key, reason) == ("default/preemptor", "Unschedulable")
    if case.message is not None:
        assert message == case.message
    victims = {v.split("/")[1] for v, _, _ in client.preempted}
    assert victims == case.victims
    assert all(n == case.nominated for _, _, n in client.preempted)
    if case.nominated is None:
        assert nominated in (None, "")
        assert s.queue.nominator.node_of(p.uid) == ""
    else:
        assert nominated == case.nominated
        assert s.queue.nominator.node_of(p.uid) == case.nominated
    assert s.metrics.preemption_attempts.get() == 1


def _c(node_name: str, *victims: tuple[int, str], violations: int = 0) -> Candidate:
    return Candidate(node_name, tuple(pod(f"{node_name}-{i}", priority=prio, status={"startTime": t} if t else None)
                                      for i, (prio, t) in enumerate(victims)), violations)


T1, T2 = "2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z"


@pytest.mark.parametrize(("candidates", "want"), [
    pytest.param([_c("a", (1, T1), violations=1), _c("b", (5, T1))], "b", id="fewest PDB violations"),
    pytest.param([_c("a", (5, T1)), _c("b", (3, T1), (3, T1))], "b", id="lowest highest-priority victim"),
    pytest.param([_c("a", (3, T1), (2, T1)), _c("b", (3, T1), (1, T1))], "b", id="smallest sum of priorities"),
    pytest.param([_c("a", (-5, T1), (-5, T1)), _c("b", (-5, T1))], "b",
                 id="negative priorities: fewer victims is a smaller shifted sum"),
    pytest.param([_c("a", (3, T1), (0, T1), (0, T1)), _c("b", (3, T1), (0, T1), (0, T1))], "a",
                 id="all equal: the first"),
    pytest.param([_c("a", (3, T1)), _c("b", (3, T2))], "b", id="latest start of the highest-priority victims"),
    pytest.param([_c("a", (3, T2), (1, T1)), _c("b", (3, T1), (1, T2))], "a",
                 id="start time looks only at the highest-priority victims"),
])
def test_pick_one_node_for_preemption(candidates: list[Candidate], want: str) -> None:
    best = pick_one_node_for_preemption(candidates)
    assert best is not None and best.node == want


def test_pdb_split_counts_the_budget_down() -> None:
    pdb = _pdb(0, {"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": 1})
    pods = [pod(f"db{i}", labels={"app": "db"}) for i in range(3)] + [pod("other", labels={"app": "x"})]
    violating, fine = filter_pods_with_pdb_violation(pods, [pdb])
    assert [p.name for p in violating] == ["db1", "db2"]
    assert [p.name for p in fine] == ["db0", "other"]


def test_pdb_with_nil_or_broken_selector_protects_nothing() -> None:
    nil = parse_pdb({"metadata": {"name": "nil", "namespace": "default"}, "spec": {}})
    broken = parse_pdb({"metadata": {"name": "bad", "namespace": "default"},
                        "spec": {"selector": {"matchExpressions": [{"key": "a", "operator": "Bogus"}]}}})
    assert broken.problem and "spec.selector" in broken.problem
    violating, _ = filter_pods_with_pdb_violation([pod("p", labels={"a": "b"}), pod("q")], [nil, broken])
    assert violating == []


# kubernetes/kubernetes#141785 (1.38): a policy/v1 budget whose selector is `{}` selects every pod of
# its namespace, unlabelled ones included; 1.37's preemption skipped unlabelled pods and read an
# empty selector (labels.Everything().Empty()) as matching nothing.
@pytest.mark.parametrize(("name", "victim", "namespace", "violates"), [
    ("empty selector protects a labelled pod", pod("p", labels={"a": "b"}), "default", True),
    ("empty selector protects an unlabelled pod", pod("q"), "default", True),
    ("empty selector in another namespace does not", pod("p", labels={"a": "b"}), "elsewhere", False),
])
def test_pdb_with_empty_selector_protects_every_pod_of_its_namespace(name: str, victim: Pod, namespace: str,
                                                                     violates: bool) -> None:
    empty = parse_pdb({"metadata": {"name": "all", "namespace": namespace}, "spec": {"selector": {}},
                       "status": {"disruptionsAllowed": 0}})
    violating, fine = filter_pods_with_pdb_violation([victim], [empty])
    assert (violating, fine) == (([victim], []) if violates else ([], [victim])), name


def test_preemption_spares_the_pod_an_empty_selector_budget_protects() -> None:
    """Through the cycle: n1's pod is under a `selector: {}` budget with no disruption left, n2's is in
    a namespace without one and has the higher priority (the victim preemption would otherwise
    spare); fewest PDB violations come first, so the preemptor evicts n2's pod."""
    s, client = make_scheduler(pdbs=[parse_pdb({"metadata": {"name": "all", "namespace": "guarded"},
                                                "spec": {"selector": {}}, "status": {"disruptionsAllowed": 0}})])
    s.cache.add_node(node("n1", cpu="4"))
    s.cache.add_node(node("n2", cpu="4"))
    s.cache.add_pod(pod("guarded", "4", namespace="guarded", node_name="n1", priority=1))
    s.cache.add_pod(pod("open", "4", node_name="n2", priority=5))
    s.queue.add(pod("preemptor", "4", priority=10))
    asyncio.run(s.run_until_idle())
    assert [(v, n) for v, _, n in client.preempted] == [("default/open", "n2")]


def test_disrupted_pods_do_not_count_against_the_budget() -> None:
    pdb = parse_pdb({"metadata": {"name": "b", "namespace": "default"},
                     "spec": {"selector": {"matchLabels": {"app": "db"}}},
                     "status": {"disruptionsAllowed": 0, "disruptedPods": {"db0": "2026-01-01T00:00:00Z"}}})
    violating, fine = filter_pods_with_pdb_violation([pod("db0", labels={"app": "db"})], [pdb])
    assert violating == [] and len(fine) == 1


def test_num_candidates() -> None:
    s, _ = make_scheduler()
    fwk = s.profiles.for_pod(pod("x"))
    assert fwk is not None
    plugin = fwk.plugins_by_name[NAME]
    assert isinstance(plugin, DefaultPreemption)
    assert [plugin.num_candidates(n) for n in (5, 100, 1000, 5000)] == [5, 100, 100, 500]


# --- the cycle around it: nominations, the fast path, async carry-out ----------------------------

async def _settle(s: Any, clock: Any, rounds: int = 30) -> None:
    """Cycles until nothing is left to do: run activeQ dry, let carry-outs run, pass backoffs."""
    for _ in range(rounds):
        await s.run_until_idle()
        for _ in range(10):
            await asyncio.sleep(0)
        clock.advance(11)


def test_burst_of_high_priority_pods_preempts_the_minimal_set() -> None:
    from tests.builders import Clock
    clock = Clock()
    s, client = make_scheduler(clock=clock)
    for i in range(4):
        s.cache.add_node(node(f"n{i}"))
    low = [pod(f"low-{n}-{j}", "1", node_name=f"n{n}", priority=0) for n in range(4) for j in range(4)]
    for p in low:
        s.cache.add_pod(p)
    high = [pod(f"high-{i}", "3", priority=10) for i in range(4)]
    for p in high:
        s.queue.add(p)
    asyncio.run(_settle(s, clock))
    assert sorted(client.bound) == sorted(p.uid for p in high)
    assert len(set(client.bound.values())) == 4                    # one per node
    # 3 of the 4 low pods on each node are the fewest that make room for 3 CPUs.
    victims = [v for v, _, _ in client.preempted]
    assert len(victims) == len(set(victims)) == 12
    survivors = {p.node_name for p in low if p.key not in victims}
    assert survivors == {"n0", "n1", "n2", "n3"}
    for p in high:
        assert s.queue.nominator.node_of(p.uid) == ""               # assumed: nomination dropped
    m = s.metrics
    assert m.preemption_attempts.get() == 4
    assert m.registry.get_sample_value("scheduler_preemption_victims_count") == 4


def test_preemptor_waits_gated_until_its_victims_are_gone() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    victim = pod("v", "4", node_name="n1", priority=0)
    s.cache.add_pod(victim)
    gate = asyncio.Event()
    real = client.preempt

    async def slow(v: Pod, p: Pod, n: str) -> None:
        await gate.wait()
        await real(v, p, n)

    client.preempt = slow  # type: ignore[method-assign]
    hi = pod("hi", "4", priority=10)

    async def go() -> None:
        s.queue.add(hi)
        info = s.queue.pop(timeout=0)
        assert info is not None
        await s.finish(s.schedule_one(info))
        await asyncio.sleep(0)
        s.queue.activate([hi.uid])              # anything trying to let it in meanwhile ...
        assert s.queue.where(hi.uid) == "gated"  # ... is refused by PreEnqueue
        info = next(i for i in s.queue.pending() if i.uid == hi.uid)
        assert info.gating_plugin == NAME
        gate.set()
        for _ in range(10):
            await asyncio.sleep(0)
        assert s.queue.where(hi.uid) == "active"
        await s.run_until_idle()

    asyncio.run(go())
    assert client.bound == {hi.uid: "n1"}


def test_victims_still_terminating_keep_the_preemptor_waiting() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    going = pod("v", "4", node_name="n1", priority=0)
    from dataclasses import replace
    s.cache.add_pod(replace(going, deleting=True, preempted_by_scheduler=True))
    hi = pod("hi", "4", priority=10, status={"nominatedNodeName": "n1"})
    s.queue.add(hi)
    asyncio.run(s.run_until_idle())
    (_, _, message, nominated), = client.failures
    assert message == ("0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to a "
                       "terminating pod on the nominated node.")
    assert nominated is None and client.preempted == []           # the nomination is kept as it is
    assert s.queue.nominator.node_of(hi.uid) == "n1"


def test_nominated_node_is_tried_first() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("busy"))
    s.cache.add_node(node("empty"))
    s.cache.add_pod(pod("x", "2", node_name="busy"))
    # Scoring (LeastAllocated) would pick "empty"; the nomination wins.
    s.queue.add(pod("p", "1", status={"nominatedNodeName": "busy"}))
    asyncio.run(s.run_until_idle())
    assert list(client.bound.values()) == ["busy"]


def test_nominated_pods_hold_their_room_against_lower_priority() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.queue.nominator.add(pod("nominee", "3", priority=10), "n1")
    s.queue.add(pod("low", "2", priority=5))
    asyncio.run(s.run_until_idle())
    assert client.bound == {}
    assert client.failures[0][2].startswith("0/1 nodes are available: 1 Insufficient cpu.")


def test_nominated_pods_do_not_block_higher_priority() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.queue.nominator.add(pod("nominee", "3", priority=10), "n1")
    p = pod("vip", "2", priority=50)
    s.queue.add(p)
    asyncio.run(s.run_until_idle())
    assert client.bound == {p.uid: "n1"}


def test_nominated_pods_count_for_spreading() -> None:
    # A nominated pod counts in PodTopologySpread's domains (PreFilter runs again with it added).
    s, client = make_scheduler()
    for n in ("a", "b"):
        s.cache.add_node(node(n, labels={"zone": n}))
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable":
                                             "DoNotSchedule", "labelSelector": {"matchLabels": {"app": "w"}}}]}
    s.queue.nominator.add(pod("w1", labels={"app": "w"}, spec=spread, priority=10), "b")
    p = pod("w2", labels={"app": "w"}, spec=spread)
    fwk = s.profiles.for_pod(p)
    assert fwk is not None
    with s.cache.lock:
        snap = s.cache.snapshot()
        row_b = snap.row_of("b")
        assert row_b is not None
        base = fwk.new_cycle_state()
        fwk.run_pre_filter(base, p, snap)
        st = fwk.run_filter_with_nominated_pods(base, p, snap, row_b)
        assert st.reasons == ("node(s) didn't match pod topology spread constraints",)
    s.queue.add(p)
    asyncio.run(s.run_until_idle())
    # Both zones are empty, so either would do; counting the nominee in b, placing the pod there too
    # makes skew 2: only a passes both filter passes.
    assert client.bound == {p.uid: "a"}


async def _one_cycle(s: Any, p: Pod) -> None:
    """Queue ``p``, run one cycle and its I/O, and let the carry-out task finish."""
    s.queue.add(p)
    info = s.queue.pop(timeout=0)
    assert info is not None
    await s.finish(s.schedule_one(info))
    for _ in range(10):
        await asyncio.sleep(0)


def test_preemption_clears_lower_priority_nominations_on_the_node() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.cache.add_pod(pod("v", "4", node_name="n1", priority=0))
    lower = pod("lower", "4", priority=5, status={"nominatedNodeName": "n1"})
    s.queue.add(lower)
    s.queue.nominator.add(lower, "n1")
    hi = pod("hi", "4", priority=10)

    s.queue.delete(lower.uid)       # keep it out of the way; only its nomination matters
    s.queue.nominator.add(lower, "n1")
    asyncio.run(_one_cycle(s, hi))
    assert client.cleared == ["default/lower"]
    assert s.queue.nominator.node_of(lower.uid) == ""
    assert [v for v, _, _ in client.preempted] == ["default/v"]


def test_failed_eviction_lets_the_preemptor_retry() -> None:
    from scheduler.errors import ClientError
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.cache.add_pod(pod("v", "4", node_name="n1", priority=0))
    client.preempt_error = ClientError("boom", status=500)
    hi = pod("hi", "4", priority=10)
    asyncio.run(_one_cycle(s, hi))
    assert s.queue.where(hi.uid) == "active"          # re-activated, not stuck gated


def _dry_run(s: Any, p: Pod, batched: bool, offset: int, num: int) -> tuple[list[Any], list[Any]]:
    fwk = s.profiles.for_pod(p)
    plugin = fwk.plugins_by_name[NAME]
    plugin.batch_dry_run = batched
    with s.cache.lock:
        snap = s.cache.snapshot()
        state = fwk.new_cycle_state()
        fwk.run_pre_filter(state, p, snap)
        cands, statuses = plugin.dry_run(state, p, snap, fwk, snap.node_order, plugin.handle.pdbs(), offset, num)
        rows = {r: st for r, st in statuses.items()}
        names = sorted((snap.node_info(r).name, st.code, st.reasons) for r, st in rows.items())
    return [(c.node, tuple(v.key for v in c.victims), c.num_pdb_violations) for c in cands], names


@pytest.mark.parametrize("seed", range(150))
def test_batched_dry_run_equals_node_by_node(seed: int) -> None:
    import random
    rng = random.Random(seed)
    pdbs = [_pdb(0, {"selector": {"matchLabels": {"app": "db"}}, "disruptionsAllowed": rng.randint(0, 2)})]
    if seed % 3 == 0:
        pdbs = []              # no budgets at all: the batched path skips the budget split
    s, _ = make_scheduler(pdbs=pdbs)
    n = rng.randint(3, 25)
    for i in range(n):
        s.cache.add_node(node(f"n{i}", cpu=str(rng.choice([2, 4, 8])), pods=rng.choice([3, 110]),
                              taints=TAINT if rng.random() < 0.15 else None))
    for j in range(rng.randint(0, 6 * n)):
        s.cache.add_pod(pod(f"v{j}", f"{rng.choice([100, 500, 1000, 1500])}m", node_name=f"n{rng.randrange(n)}",
                            priority=rng.randint(0, 12), labels={"app": rng.choice(["db", "web"])},
                            status={"startTime": f"2026-01-{rng.randint(1, 28):02d}T00:00:00Z"}))
    if rng.random() < 0.4:
        s.queue.nominator.add(pod("nominee", "1", priority=rng.randint(5, 15)), f"n{rng.randrange(n)}")
    p = pod("preemptor", f"{rng.choice([500, 1500, 3000])}m", priority=10,
            spec={"nodeSelector": {"kubernetes.io/hostname": "n0"}} if rng.random() < 0.1 else None)
    offset, num = rng.randrange(n), rng.randint(1, n)
    assert _dry_run(s, p, True, offset, num) == _dry_run(s, p, False, offset, num)


def test_dry_run_with_spreading_is_node_by_node() -> None:
    s, _ = make_scheduler()
    s.cache.add_node(node("n1"))
    spread = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "kubernetes.io/hostname",
                                             "whenUnsatisfiable": "DoNotSchedule",
                                             "labelSelector": {"matchLabels": {"app": "w"}}}]}
    p = pod("w", spec=spread, labels={"app": "w"})
    fwk = s.profiles.for_pod(p)
    assert fwk is not None
    with s.cache.lock:
        state = fwk.new_cycle_state()
        fwk.run_pre_filter(state, p, s.cache.snapshot())
    assert not fwk.filters_are_node_local(state)
    with s.cache.lock:
        state = fwk.new_cycle_state()
        fwk.run_pre_filter(state, pod("plain"), s.cache.snapshot())
    assert fwk.filters_are_node_local(state)


# --- SchedulerAsyncPreemption=false: upstream's synchronous prepareCandidate -------------------------
def test_sync_preemption_deletes_the_victims_before_the_failure_is_reported() -> None:
    """With the gate off the victims are gone once the attempt's I/O is over (no task left to run),
    the preemptor is nominated and never gated by PreEnqueue, and binds on the next cycle."""
    s, client = make_scheduler(feature_gates={"SchedulerAsyncPreemption": False})
    s.cache.add_node(node("n1"))
    s.cache.add_pod(pod("v", "4", node_name="n1", priority=0))
    hi = pod("hi", "4", priority=10)
    order: list[str] = []
    real_preempt, real_report = client.preempt, client.report_failure

    async def preempt(v: Pod, p: Pod, n: str) -> None:
        order.append("preempt")
        await real_preempt(v, p, n)

    async def report(p: Pod, reason: str, message: str, nominated: str | None) -> None:
        order.append("report")
        await real_report(p, reason, message, nominated)
    client.preempt, client.report_failure = preempt, report  # type: ignore[method-assign]

    async def go() -> None:
        s.queue.add(hi)
        info = s.queue.pop(timeout=0)
        assert info is not None
        await s.finish(s.schedule_one(info))           # no sleeps: nothing runs in the background
        assert order == ["preempt", "report"]
        assert client.failures[-1][3] == "n1" and s.queue.nominator.node_of(hi.uid) == "n1"
        plugin = s.profiles.for_pod(hi).plugins_by_name[NAME]
        assert plugin.preempting == set() and plugin.pre_enqueue(hi).is_success()
        s.queue.activate([hi.uid])
        await s.run_until_idle()

    asyncio.run(go())
    assert client.bound == {hi.uid: "n1"}


def test_sync_preemption_failure_is_post_filter_error_without_nomination() -> None:
    """preemption.go: prepareCandidate's error is PostFilter's status, so the pod is reported with
    it ("preemption: <error>") and not nominated."""
    from scheduler.errors import ClientError
    s, client = make_scheduler(feature_gates={"SchedulerAsyncPreemption": False})
    s.cache.add_node(node("n1"))
    s.cache.add_pod(pod("v", "4", node_name="n1", priority=0))
    client.preempt_error = ClientError("boom", status=500)
    hi = pod("hi", "4", priority=10)
    asyncio.run(_one_cycle(s, hi))
    (key, reason, message, nominated), = client.failures
    assert (key, reason, nominated) == ("default/hi", "Unschedulable", None)
    assert message.endswith(" preemption: boom"), message
    assert s.queue.nominator.node_of(hi.uid) in (None, "")


def test_async_preemption_follows_the_handle_feature_gate() -> None:
    from scheduler.framework.handle import Handle
    from scheduler.plugins import defaultpreemption
    assert defaultpreemption.new(None, Handle()).async_preemption is True
    off = Handle(feature_gates={"SchedulerAsyncPreemption": False})
    assert defaultpreemption.new(None, off).async_preemption is False
