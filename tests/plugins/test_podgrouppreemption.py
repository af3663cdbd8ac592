"""Workload-aware preemption (``scheduler/plugins/podgrouppreemption.py``), table-driven as upstream's
``pkg/scheduler/framework/preemption/podgrouppreemption_test.go`` (``TestPodGroupEvaluator_Preempt_Victims``,
``TestPodGroupEvaluator_Preempt``) and ``types_test.go`` (``TestResolvePreemptionPolicy``,
``TestIsDisruptionModeAll``, ``TestNewDomainForWorkloadPreemption``). Each case keeps upstream's name.

Upstream's tables run with a mock Filter (a node's capacity against the ``size`` labels of its pods)
and a mock PodGroup scheduling function (round robin over the nodes, each member on the first node
with room, the next member starting at the next node; Unschedulable below ``minCount``). Here a pod's
``size`` is its cpu request and a node's capacity its allocatable cpu, so the real NodeResourcesFit
plays the mock Filter, and ``round_robin`` is the mock scheduling function, on the scheduler's own
cache and snapshot.

Upstream's ``ReprieveFilter`` cases are left out: that hook came after 1.37.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from scheduler.cache import Cache, WhatIf
from scheduler.cache.podgroups import PodGroupStore
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod, parse_pdb
from scheduler.model.podgroup import PodGroup
from scheduler.plugins import podgrouppreemption as wap
from tests.builders import make_scheduler, node, pod

LOW, MID, HIGH = 0, 100, 1000
T0, T1, T2 = "1970-01-01T00:00:00Z", "1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z"
TERMINATING = {"deletionTimestamp": "2026-01-01T00:00:00Z"}


@dataclass
class P:
    """A pod of a case: name, node ("" for a preemptor member), priority, size, and the rest."""

    name: str
    node: str = ""
    priority: int = LOW
    size: int = 1
    group: str = ""
    start: str = ""
    labels: dict[str, str] = field(default_factory=dict)
    terminating: bool = False       # preempted by the scheduler and terminating
    nominated: str = ""
    policy: str = ""


@dataclass
class G:
    name: str
    priority: int = LOW
    mode: str = "Single"
    min_count: int = 1
    gang: bool = True
    policy: str = ""


@dataclass
class Case:
    name: str
    nodes: list[tuple[str, int]]
    pods: list[P]
    preemptor: G
    members: list[P]
    victims: set[str] = field(default_factory=set)
    code: Code = Code.SUCCESS
    message: str = ""
    groups: list[G] = field(default_factory=list)
    pdbs: list[dict[str, Any]] = field(default_factory=list)
    disruptions: int = 0
    violations: int = 0
    policy_gate: bool = False
    nominations: dict[str, str] | None = None


def _pod(p: P) -> Pod:
    spec: dict[str, Any] = {}
    if p.group:
        spec["schedulingGroup"] = {"podGroupName": p.group}
    if p.policy:
        spec["preemptionPolicy"] = p.policy
    status: dict[str, Any] = {}
    if p.start:
        status["startTime"] = p.start
    if p.nominated:
        status["nominatedNodeName"] = p.nominated
    if p.terminating:
        status["conditions"] = [{"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}]
    made = pod(p.name, str(p.size), None, node_name=p.node, priority=p.priority, labels={"size": str(p.size),
               **p.labels}, spec=spec, status=status)
    return replace(made, deleting=True) if p.terminating else made


def _group(g: G) -> PodGroup:
    return PodGroup(namespace="default", name=g.name, uid=f"uid-{g.name}", policy="Gang" if g.gang else "Basic",
                    min_count=g.min_count if g.gang else 0, disruption_mode="All" if g.mode == "All" else "Single",
                    priority=g.priority, preemption_policy=g.policy)


def _pdb(i: int, raw: dict[str, Any]) -> Any:
    return parse_pdb({"metadata": {"name": f"pdb{i}", "namespace": "default"},
                      "spec": {"selector": raw["selector"]}, "status": {"disruptionsAllowed": raw["allowed"]}})


FOO_PDB = [{"selector": {"matchLabels": {"app": "foo"}}, "allowed": 0}]
ONE = P("p", priority=HIGH)


# --- podgrouppreemption_test.go: TestPodGroupEvaluator_Preempt_Victims -------------------------------
VICTIMS = [
    Case("Priority: mix of no groups and pod groups", [("node1", 2)],
         [P("p1", "node1"), P("p2", "node1", group="pg1")], G("preemptor-pg", HIGH), [ONE], {"p1"},
         groups=[G("pg1", LOW)]),
    Case("Priority: StartTime of pods from same group with disruption mode single ", [("node1", 2)],
         [P("p1", "node1", group="pg1", start=T1), P("p2", "node1", group="pg1", start=T0)],
         G("preemptor-pg", HIGH), [ONE], {"p1"}, groups=[G("pg1", LOW)], disruptions=1),
    Case("Pod group with disruption mode group not reprieved", [("node1", 1), ("node2", 1)],
         [P("p1", "node1", group="pg1"), P("p2", "node2", group="pg1")], G("preemptor-pg", HIGH), [ONE],
         {"p1", "p2"}, groups=[G("pg1", LOW, "All")], disruptions=1),
    Case("Complex Mixed: Shared, different, and no groups",
         [("node1", 2), ("node2", 1), ("node3", 2), ("node4", 2), ("node5", 2)],
         [P("p1", "node1", group="pg1", start=T2), P("p2", "node2", group="pg1", start=T1),
          P("p3", "node3", group="pg2", start=T0), P("p4", "node4", MID),
          P("p5", "node5", HIGH, group="pg3", start=T0)],
         G("preemptor-pg", HIGH), [P("p-1", priority=HIGH), P("p-2", priority=HIGH), P("p-3", priority=HIGH)],
         {"p2"}, groups=[G("pg1", LOW), G("pg2", LOW), G("pg3", HIGH)], disruptions=1),
    Case("PDB: Mixed groups", [("node1", 2)],
         [P("victim-pdb", "node1", group="pg1", labels={"app": "foo"}), P("victim-no-pdb", "node1", group="pg1")],
         G("preemptor-pg", HIGH), [ONE], {"victim-no-pdb"}, pdbs=FOO_PDB, disruptions=1),
    Case("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption",
         [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="PreemptLowerPriority"), [P("p-1", priority=HIGH)], {"p1"}, policy_gate=True),
    Case("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption, ignoring member pod "
         "preemption policy", [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="PreemptLowerPriority"), [P("p-1", priority=HIGH, policy="Never")], {"p1"},
         policy_gate=True),
    Case("Preemptor group is eligible if terminating pods are on non-nominated nodes", [("node1", 1), ("node2", 1)],
         [P("victim", "node2", terminating=True), P("other-victim", "node1")], G("preemptor-pg", HIGH),
         [P("p1", priority=HIGH), P("p2", priority=HIGH, nominated="node1")], {"other-victim", "victim"}),
    Case("Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher "
         "priority", [("node1", 2), ("node2", 1)],
         [P("victim", "node1", group="victim-pg", terminating=True), P("other-victim", "node1")],
         G("preemptor-pg", MID), [P("p1", priority=MID), P("p2", priority=MID, nominated="node1")],
         {"other-victim"}, groups=[G("victim-pg", HIGH, "All")]),
    Case("Preemptor group is eligible if nominated node has terminating pod belonging to a pod group of higher "
         "priority with nil DisruptionMode", [("node1", 2), ("node2", 1)],
         [P("victim", "node1", group="victim-pg", terminating=True), P("other-victim", "node1")],
         G("preemptor-pg", MID), [P("p1", priority=MID), P("p2", priority=MID, nominated="node1")],
         {"other-victim"}, groups=[G("victim-pg", HIGH)]),
    Case("Preempt single lower priority pod", [("node1", 1)], [P("p1", "node1")], G("preemptor-pg", HIGH), [ONE],
         {"p1"}),
    Case("Priority: Prefer lower priority victim", [("node1", 2)],
         [P("p1", "node1"), P("p2", "node1", MID), P("p3", "node1", HIGH)], G("preemptor-pg", HIGH), [ONE],
         {"p1", "p2"}),
    Case("Efficiency: Preempt minimum number of victims", [("node1", 3)],
         [P("p1", "node1"), P("p2", "node1"), P("p3", "node1"), P("p4", "node1")], G("preemptor-pg", HIGH), [ONE],
         {"p3", "p4"}),
    Case("PDB: Prefer non-violating victim", [("node1", 2)],
         [P("victim-pdb", "node1", labels={"app": "foo"}), P("victim-no-pdb", "node1")], G("preemptor-pg", HIGH),
         [ONE], {"victim-no-pdb"}, pdbs=FOO_PDB),
    Case("PDB: Prefer removing non-violating victim over lower priority violating victim", [("node1", 2)],
         [P("victim-pdb", "node1", labels={"app": "foo"}), P("victim-no-pdb", "node1", MID)],
         G("preemptor-pg", HIGH), [ONE], {"victim-no-pdb"}, pdbs=FOO_PDB),
    Case("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims",
         [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="PreemptLowerPriority"), [P("p-1", priority=HIGH)], {"p1"},
         groups=[G("pg1", LOW), G("pg2", LOW)], policy_gate=True),
    Case("PodGroup preemptor with PreemptLowerPriority preemption policy performs preemption with PodGroup victims, "
         "ignoring member pod preemption policy", [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="PreemptLowerPriority"), [P("p-1", priority=HIGH, policy="Never")], {"p1"},
         groups=[G("pg1", LOW), G("pg2", LOW)], policy_gate=True),
    Case("PDB: Prefer lower priority pod for preemption, when preemption without pdb violation is not possible",
         [("node1", 2)], [P("p1", "node1", labels={"app": "foo"}), P("p2", "node1", MID, labels={"app": "foo"})],
         G("preemptor-pg", HIGH), [ONE], {"p1"}, pdbs=FOO_PDB, violations=1),
    Case("PodGroup: Preempt group as a whole", [("node1", 1), ("node2", 2)],
         [P("p1", "node1", group="pg1"), P("p2", "node2", group="pg1")], G("preemptor-pg", HIGH), [ONE],
         {"p1", "p2"}, groups=[G("pg1", LOW, "All")], disruptions=1),
    Case("PodGroup: Prefer single pod over podGroup for preemption candidate", [("node1", 3)],
         [P("p1", "node1"), P("g1-1", "node1", group="pg1"), P("g1-2", "node1", group="pg1")],
         G("preemptor-pg", HIGH), [ONE], {"p1"}, groups=[G("pg1", LOW, "All")]),
    Case("PodGroup: Preempt group as a whole on single node", [("node1", 3)],
         [P("g1-1", "node1", group="pg1"), P("g1-2", "node1", group="pg1"), P("p1", "node1", MID)],
         G("preemptor-pg", HIGH), [ONE], {"g1-1", "g1-2"}, groups=[G("pg1", LOW, "All")], disruptions=1),
    Case("PDB: Unit violation if any member violates", [("node1", 3)],
         [P("g1-1", "node1", group="pg1", labels={"app": "foo"}), P("g1-2", "node1", group="pg1"),
          P("p1", "node1")], G("preemptor-pg", HIGH), [ONE], {"p1"}, groups=[G("pg1", LOW, "All")], pdbs=FOO_PDB),
    # Upstream's newest table says Unschedulable where its 1.37 code said UnschedulableAndUnresolvable
    # for "no victims"; the table is followed (the code decides nothing else by it).
    Case("Failure: Cannot preempt the victim with higher priority", [("node1", 100)], [P("p1", "node1", HIGH)],
         G("preemptor-pg", MID), [P("p", priority=MID)], code=Code.UNSCHEDULABLE,
         message=wap.NO_VICTIMS_GROUP),
    Case("Failure: Cannot preempt the victim with equal priority", [("node1", 100)], [P("p1", "node1", MID)],
         G("preemptor-pg", MID), [P("p", priority=MID)], code=Code.UNSCHEDULABLE, message=wap.NO_VICTIMS_GROUP),
    Case("Failure: Cannot preempt if node is empty", [("node1", 100)], [], G("preemptor-pg", MID),
         [P("p", priority=MID)], code=Code.UNSCHEDULABLE, message=wap.NO_VICTIMS_GROUP),
    Case("Priority divergence: candidate victim PodGroup has lower priority than the Pods from that group",
         [("node1", 1), ("node2", 1)], [P("p1", "node1", HIGH, group="pg1"), P("p2", "node2", HIGH, group="pg1")],
         G("preemptor-pg", HIGH), [ONE], {"p1", "p2"}, groups=[G("pg1", MID, "All")], disruptions=1),
    Case("Priority divergence: candidate victim PodGroup has higher priority than the Pods from that group",
         [("node1", 1), ("node2", 1)], [P("p1", "node1", LOW, group="pg1"), P("p2", "node2", LOW, group="pg1")],
         G("preemptor-pg", MID), [P("p", priority=MID)], groups=[G("pg1", MID, "All")], code=Code.UNSCHEDULABLE,
         message=wap.NO_VICTIMS_GROUP),
    Case("Gang scheduling: schedule as many pods as possible without preempting higher priority pods, but still "
         "more than minCount", [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
         [P("p1", "node1"), P("p2", "node2"), P("p3", "node3", HIGH), P("p4", "node4", HIGH)],
         G("preemptor-pg", HIGH), [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)],
         {"p1", "p2"}),
    Case("Gang scheduling: do not reprieve victim pod group of lower priority", [("node1", 1), ("node2", 1),
                                                                                  ("node3", 1)],
         [P("v1", "node1", MID, group="victim-pg"), P("v2", "node2", MID, group="victim-pg"), P("v3", "node3")],
         G("preemptor-pg", HIGH), [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)],
         {"v1", "v2", "v3"}, groups=[G("victim-pg", MID, "All")], disruptions=1),
    Case("Gang scheduling: preempt a pod group victim but do not schedule full pod group",
         [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
         [P("v1", "node1", MID, group="victim-pg"), P("v2", "node2", MID, group="victim-pg"),
          P("v3", "node3", HIGH, group="victim-pg2"), P("v4", "node4", HIGH, group="victim-pg2")],
         G("preemptor-pg", HIGH, "All"), [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)],
         {"v1", "v2"}, groups=[G("victim-pg", MID, "All", 2), G("victim-pg2", HIGH, "All", 2)], disruptions=1),
    Case("Basic scheduling: schedule as many pods as possible without preempting higher priority pods",
         [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
         [P("p1", "node1"), P("p2", "node2"), P("p3", "node3", HIGH), P("p4", "node4", HIGH)],
         G("preemptor-pg", HIGH, gang=False),
         [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)], {"p1", "p2"}),
    Case("Basic scheduling: do not reprieve victim pod group of lower priority",
         [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("v1", "node1", MID, group="victim-pg"), P("v2", "node2", MID, group="victim-pg"), P("v3", "node3")],
         G("preemptor-pg", HIGH, gang=False),
         [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)],
         {"v1", "v2", "v3"}, groups=[G("victim-pg", MID, "All")], disruptions=1),
    Case("Basic scheduling: preempt a pod group victim but do not schedule full pod group",
         [("node1", 1), ("node2", 1), ("node3", 1), ("node4", 1)],
         [P("v1", "node1", MID, group="victim-pg"), P("v2", "node2", MID, group="victim-pg"),
          P("v3", "node3", HIGH, group="victim-pg2"), P("v4", "node4", HIGH, group="victim-pg2")],
         G("preemptor-pg", HIGH, "All", gang=False),
         [P("p-a", priority=HIGH), P("p-b", priority=HIGH), P("p-c", priority=HIGH)],
         {"v1", "v2"}, groups=[G("victim-pg", MID, "All", 2), G("victim-pg2", HIGH, "All", 2)], disruptions=1),
]

# --- podgrouppreemption_test.go: TestPodGroupEvaluator_Preempt (the scheduling function is never called) ----
ONGOING = "ongoing preemption on nominated nodes"
PREEMPT = [
    Case("Preemptor group returns success with current nominating infos if member has nominated node with "
         "terminating pods", [("node1", 1)], [P("victim", "node1", terminating=True)], G("preemptor-pg", HIGH),
         [P("p1", priority=HIGH), P("p2", priority=HIGH, nominated="node1")], message=ONGOING,
         nominations={"p1": "", "p2": "node1"}, policy_gate=True),
    Case("Preemptor group returns success with current nominating infos if nominated node has terminating pod "
         "belonging to a pod group of lower priority", [("node1", 1)],
         [P("victim", "node1", HIGH, group="victim-pg", terminating=True)], G("preemptor-pg", HIGH),
         [P("p1", priority=HIGH), P("p2", priority=HIGH, nominated="node1")], groups=[G("victim-pg", LOW, "All")],
         message=ONGOING, nominations={"p1": "", "p2": "node1"}, policy_gate=True),
    Case("Preemptor group returns success with current nominating infos if nominated node has terminating pod "
         "belonging to a pod group of lower priority with DisruptionModePod", [("node1", 1)],
         [P("victim", "node1", HIGH, group="victim-pg", terminating=True)], G("preemptor-pg", HIGH),
         [P("p1", priority=HIGH), P("p2", priority=HIGH, nominated="node1")], groups=[G("victim-pg", LOW)],
         message=ONGOING, nominations={"p1": "", "p2": "node1"}, policy_gate=True),
    Case("PodGroup preemptor with PreemptNever policy does not perform preemption",
         [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="Never"), [P("p-1", priority=HIGH), P("p-2", priority=HIGH)],
         code=Code.UNSCHEDULABLE, message="not eligible due to preemptionPolicy=Never.", policy_gate=True),
    Case("PodGroup preemptor with PreemptNever preemption policy does not perform preemption with PodGroup victims",
         [("node1", 1), ("node2", 1), ("node3", 1)],
         [P("p1", "node1"), P("p2", "node2", group="pg1"), P("p3", "node3", group="pg2")],
         G("preemptor-pg", HIGH, policy="Never"), [P("p-1", priority=HIGH), P("p-2", priority=HIGH)],
         groups=[G("pg1", LOW), G("pg2", LOW)], code=Code.UNSCHEDULABLE,
         message="not eligible due to preemptionPolicy=Never.", policy_gate=True),
]


def run(case: Case, *, place_allowed: bool = True) -> tuple[wap.GroupPreemption | None, Status, dict[str, Pod]]:
    s, _ = make_scheduler(pdbs=[_pdb(i, p) for i, p in enumerate(case.pdbs)], feature_gates={"GenericWorkload": True})
    cache: Cache = s.cache
    for name, cpu in case.nodes:
        cache.add_node(node(name, cpu=str(cpu)))
    by_name: dict[str, Pod] = {}
    for p in case.pods:
        made = _pod(p)
        cache.add_pod(made)
        by_name[p.name] = made
    store = PodGroupStore()
    for g in case.groups:
        store.upsert(_group(g))
    members = [_pod(m) for m in case.members]
    by_name.update({m.name: m for m in members})
    fwk = s.profiles.for_pod(members[0])
    assert fwk is not None
    group = _group(case.preemptor)
    min_count = group.min_count if group.is_gang else 1
    names = [n for n, _ in case.nodes]
    caps = dict(case.nodes)

    def round_robin(w: WhatIf) -> tuple[list[wap.Assignment], Status]:
        """The mock PodGroupSchedulingFunc of upstream's table (the module docstring)."""
        assert place_allowed, "podGroupSchedulingFunc should not be called when ongoing preemption is detected"
        snap = cache.snapshot()
        used = {}
        for n in names:
            row = snap.row_of(n)
            assert row is not None
            used[n] = sum(int(p.labels.get("size", "1")) for p in snap.node_info(row).pods.values())
        out: list[wap.Assignment] = []
        at = 0
        for m in members:
            size = int(m.labels["size"])
            for step in range(len(names)):
                i = (at + step) % len(names)
                if used[names[i]] + size <= caps[names[i]]:
                    state = fwk.new_cycle_state()
                    fwk.run_pre_filter(state, m, snap)
                    out.append(wap.assignment(m, state, names[i]))
                    used[names[i]] += size
                    at = (i + 1) % len(names)
                    break
        if len(out) >= min_count:
            return out, SUCCESS
        return [], Status(Code.UNSCHEDULABLE)

    with cache.lock:
        result, status = wap.preempt(cache.snapshot(), fwk, group, members, round_robin,
                                     pdbs=[_pdb(i, p) for i, p in enumerate(case.pdbs)], groups=store.get,
                                     policy_gate=case.policy_gate,
                                     nominated={m.uid: m.nominated_node_name for m in members})
    return result, status, by_name


@pytest.mark.parametrize("case", VICTIMS, ids=[c.name for c in VICTIMS])
def test_pod_group_evaluator_preempt_victims(case: Case) -> None:
    result, status, _ = run(case)
    assert status.code == case.code, status.message()
    if case.code != Code.SUCCESS:
        assert status.message() == case.message
        return
    assert result is not None
    assert {p.name for p in result.pods} == case.victims
    assert result.num_pod_group_disruptions == case.disruptions
    assert result.num_pdb_violations == case.violations


@pytest.mark.parametrize("case", PREEMPT, ids=[c.name for c in PREEMPT])
def test_pod_group_evaluator_preempt(case: Case) -> None:
    result, status, pods = run(case, place_allowed=False)
    assert (status.code, status.message()) == (case.code, case.message) or (
        status.code == case.code == Code.SUCCESS and result is not None and result.ongoing)
    if case.code != Code.SUCCESS:
        assert result is None
        return
    assert result is not None and result.ongoing and not result.victims
    assert result.nominations == {pods[n].uid: node for n, node in (case.nominations or {}).items()}


def test_pod_group_evaluator_preempt_nominated_nodes() -> None:
    """TestPodGroupEvaluator_Preempt_NominatedNodes: only the members the scheduling function placed are
    nominated (a member it left out gets none)."""
    case = Case("nominated nodes", [("node1", 1)], [P("p3", "node1")], G("preemptor-pg", HIGH),
                [P("p1", priority=HIGH), P("p2", priority=HIGH)], {"p3"})
    result, status, pods = run(case)
    assert status.is_success() and result is not None
    assert result.nominations == {pods["p1"].uid: "node1"}


# --- types_test.go ------------------------------------------------------------------------------------
NEVER, LOWER = "Never", "PreemptLowerPriority"


@pytest.mark.parametrize(("name", "group_policy", "pods", "gate", "want"), [
    ("PreemptionPolicy PreemptNever is resolved from PodGroup, ignoring policy in pod, with PodGroupPreemptionPolicy "
     "enabled", NEVER, [LOWER], True, NEVER),
    ("PreemptionPolicy PreemptLowerPriority is resolved from PodGroup, ignoring different policies in pods, with "
     "PodGroupPreemptionPolicy enabled", LOWER, [LOWER, ""], True, LOWER),
    ("PreemptionPolicy is resolved from pods with PodGroupPreemptionPolicy disabled", NEVER, [LOWER], False, LOWER),
    ("PreemptionPolicy is resolved from pods when multiple pods have different policies, with "
     "PodGroupPreemptionPolicy disabled", LOWER, [NEVER, LOWER, ""], False, NEVER),
])
def test_resolve_preemption_policy(name: str, group_policy: str, pods: list[str], gate: bool, want: str) -> None:
    group = _group(G("pg", policy=group_policy))
    members = [_pod(P(f"p{i}", policy=p)) for i, p in enumerate(pods)]
    assert wap.resolve_preemption_policy(group, members, gate) == want, name


@pytest.mark.parametrize(("name", "group", "want"), [
    ("nil pod group", None, False),
    ("pod group with DisruptionModeSingle", _group(G("pg1")), False),
    ("pod group with DisruptionModeAll", _group(G("pg1", mode="All")), True),
])
def test_is_disruption_mode_all(name: str, group: PodGroup | None, want: bool) -> None:
    assert wap.is_disruption_mode_all(group) is want, name


@pytest.mark.parametrize(("name", "pods", "groups", "want"), [
    ("no pods", [], [], []),
    ("pods without pod groups", [P("p1", "node1", 10), P("p2", "node2", 20)], [],
     [({"p1"}, {"node1"}, 10), ({"p2"}, {"node2"}, 20)]),
    ("pods with pod group (DisruptionModeAll)", [P("p1", "node1", 10, group="pg1"), P("p2", "node2", 10, group="pg1")],
     [G("pg1", 50, "All")], [({"p1", "p2"}, {"node1", "node2"}, 50)]),
    ("pods with pod group (DisruptionModeSingle)",
     [P("p1", "node1", 10, group="pg1"), P("p2", "node2", 20, group="pg1")], [G("pg1", 50)],
     [({"p1"}, {"node1"}, 50), ({"p2"}, {"node2"}, 50)]),
    ("mix of pod groups and individual pods",
     [P("p1", "node1", 10, group="pg1"), P("p2", "node2", 10, group="pg1"), P("p3", "node1", 20, group="pg2"),
      P("p4", "node2", 30)], [G("pg1", 50, "All"), G("pg2", 60)],
     [({"p1", "p2"}, {"node1", "node2"}, 50), ({"p3"}, {"node1"}, 60), ({"p4"}, {"node2"}, 30)]),
    ("pods with pod group (DisruptionModeAll) but missing pod group state in cache falls back to local pod preemption",
     [P("p1", "node1", 10, group="pg1"), P("p2", "node2", 10, group="pg1")], [],
     [({"p1"}, {"node1"}, 10), ({"p2"}, {"node2"}, 10)]),
])
def test_new_domain_for_workload_preemption(name: str, pods: list[P], groups: list[G],
                                            want: list[tuple[set[str], set[str], int]]) -> None:
    cache = Cache()
    for n in ("node1", "node2"):
        cache.add_node(node(n))
    for p in pods:
        cache.add_pod(_pod(p))
    store = PodGroupStore()
    for g in groups:
        store.upsert(_group(g))
    with cache.lock:
        got = wap.cluster_victims(cache.snapshot(), store.get)
    rows = sorted((({p.name for p in v.pods}, {p.node_name for p in v.pods}, v.priority) for v in got),
                  key=lambda r: sorted(r[0]))
    assert rows == sorted(want, key=lambda r: sorted(r[0])), name


def test_more_important_victim_orders_priority_then_groups_then_size_then_start() -> None:
    """MoreImportantVictim (GenericWorkload on): priority; a PodGroup before a lone pod of the same
    priority; lone pods by earlier start; groups by more members, then earlier start."""
    lone_old = wap.Victim((_pod(P("a", "n", start=T0)),), LOW)
    lone_new = wap.Victim((_pod(P("b", "n", start=T1)),), LOW)
    big = wap.Victim((_pod(P("c", "n", group="g", start=T2)), _pod(P("d", "n", group="g", start=T2))), LOW)
    small = wap.Victim((_pod(P("e", "n", group="h", start=T0)),), LOW)
    high = wap.Victim((_pod(P("f", "n", start=T2)),), MID)
    ranked = sorted([lone_new, small, lone_old, high, big], key=wap.more_important)
    assert [v.pods[0].name for v in ranked] == ["f", "c", "e", "a", "b"]


# --- default_preemption_workload_test.go: TestPreparePotentialVictimPodGroups --------------------------
# The stored copy is of the v1alpha1 API (1.35: a gang's pods named by workloadRef, no PodGroup
# priority); its cases are kept with 1.37's names for the same things (disruptionMode All, the
# PodGroup's priority). Its "gang but missing state" case skipped the pod; 1.37's types_test.go
# ("... missing pod group state in cache falls back to local pod preemption") keeps it alone, and
# 1.37 is followed. The "disabled" case is tests/test_podgroup_cycle.py's gate-off case.
@pytest.mark.parametrize(("name", "pods", "scheduled", "want"), [
    ("workload aware preemption enabled, no gang", [P("p1", "node1", 10, start=T0)], {},
     [({"p1"}, 10, False)]),
    ("workload aware preemption enabled, gang with disruption mode",
     [P("p1", "node1", 10, group="pg1", start=T0)],
     {"pg1": [P("p1", "node1", 10, group="pg1", start=T0), P("p2", "node2", 10, group="pg1", start=T1)]},
     [({"p1", "p2"}, 10, True)]),
    ("workload aware preemption enabled, gang but missing state", [P("p1", "node1", 10, group="pg1", start=T0)], {},
     [({"p1"}, 10, True)]),
])
def test_prepare_potential_victim_pod_groups(name: str, pods: list[P], scheduled: dict[str, list[P]],
                                             want: list[tuple[set[str], int, bool]]) -> None:
    store = PodGroupStore()
    store.upsert(_group(G("pg1", 10, "All")))
    got = wap.node_victims([_pod(p) for p in pods], store.get,
                           lambda g: [_pod(p) for p in scheduled.get(g.name, [])])
    assert [({p.name for p in v.pods}, v.priority, v.is_pod_group) for v in got] == want, name
