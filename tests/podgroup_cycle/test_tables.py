"""Upstream's PodGroup-cycle tables (``pkg/scheduler/schedule_one_podgroup_test.go``, 1.37),
replayed through our PodGroup cycle (``scheduler/podgroup_cycle.py``) as the operator drives it.

Upstream splits the cycle in two and tests each half on its internals:
``TestPodGroupSchedulingAlgorithm`` feeds fake Filter/PostFilter/Permit statuses to
``podGroupSchedulingAlgorithm`` and checks its result struct, and
``TestSubmitPodGroupAlgorithmResult`` feeds such a result struct to
``submitPodGroupAlgorithmResult`` and checks what comes out: which pods are bound, which fail
nominated (preempting), which fail, and the PodGroup's condition. The two tables share their case
names (the submit table's input is the algorithm table's output for the same case), so each row
here is one upstream case: the algorithm table's plugin statuses in, the submit table's
observable outcome out. Where a case is only in the algorithm table, its outcome is the
algorithm's group status as the submit table turns that status into an outcome (named per row).

The fake plugin is upstream's ``fakePodGroupPlugin``: per pod a Filter status, a PostFilter
nomination and status, and a Permit status, with upstream's defaults (a pod not named fails
Filter, PostFilter and Permit as Unschedulable). The profile is upstream's test profile, with the
GenericWorkload gate on: the fake at Filter, PostFilter and Permit, PrioritySort and DefaultBinder,
and nothing else (no GangScheduling, no DefaultPreemption: the algorithm table registers none).
The submit table's profile has no Permit plugin at all, so the fake answers Permit with its
status only in the group's algorithm (``CycleState.pod_group_cycle`` set), and allows the member
when its binding cycle is prepared, as that profile does. One node, ``node1``. The PodGroup has
minCount 3; without GangScheduling nothing enforces it, as in upstream's tables.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.framework.diagnosis import NodeToStatus
from scheduler.framework.interfaces import PostFilterContext, PostFilterResult
from scheduler.framework.status import Code, Status
from scheduler.model.podgroup import POD_GROUP_INITIALLY_SCHEDULED
from scheduler.plugins.registry import PluginSpec, Registry
from scheduler.service import SchedulerService
from tests.builders import MemoryClient

UPSTREAM = "pkg/scheduler/schedule_one_podgroup_test.go"
FAKE = "FakePodGroupPlugin"
PODS = ("p1", "p2", "p3")
OK = "Success"

_CODES = {"Unschedulable": Code.UNSCHEDULABLE, "UnschedulableAndUnresolvable": Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
          "Error": Code.ERROR, "Wait": Code.WAIT}


def _status(code: str, default: str) -> Status:
    if code == OK:
        return Status(Code.SUCCESS)
    return Status(_CODES[code], (f"fake {code.lower()} ({default})",), FAKE)


class FakePodGroupPlugin:
    """upstream's ``fakePodGroupPlugin``: statuses looked up by pod name, upstream's defaults
    (Unschedulable) for a pod the case does not name."""

    name = FAKE

    def __init__(self, filter_status: dict[str, str], permit_status: dict[str, str],
                 post_filter: dict[str, tuple[str, str]]) -> None:
        self.filter_status = filter_status
        self.permit_status = permit_status
        self.post_filter_by_pod = post_filter      # pod -> (nominated node, status)
        self.post_filter_called: list[str] = []

    def filter(self, state: Any, pod: Any, node: Any) -> Status:
        return _status(self.filter_status.get(pod.name, "Unschedulable"), "default fake filter failure")

    def post_filter(self, state: Any, pod: Any, statuses: NodeToStatus, ctx: PostFilterContext
                    ) -> tuple[PostFilterResult | None, Status]:
        self.post_filter_called.append(pod.name)
        node, code = self.post_filter_by_pod.get(pod.name, ("", "Unschedulable"))
        return PostFilterResult(nominated_node_name=node), _status(code, "default fake postfilter failure")

    def permit(self, state: Any, pod: Any, node_name: str) -> tuple[Status, float]:
        if state.pod_group_cycle is None:
            return Status(Code.SUCCESS), 0.0        # prepareForBindingCycle: the submit table's profile
        return _status(self.permit_status.get(pod.name, "Unschedulable"), "default fake permit failure"), 0.0


@dataclass(frozen=True)
class Case:
    """One upstream case: statuses in (``filter``, ``permit``, ``post_filter``: pod -> code or
    (nominated node, code)), and the observable outcome: the pods bound, the pods that fail
    nominated (upstream's "preempting"), the pods that fail, and the PodGroup's condition."""

    name: str
    source: str
    filter: dict[str, str]
    permit: dict[str, str] = field(default_factory=dict)
    post_filter: dict[str, tuple[str, str]] = field(default_factory=dict)
    bound: frozenset[str] = frozenset()
    preempting: frozenset[str] = frozenset()
    failed: frozenset[str] = frozenset()
    condition: tuple[str, str] = ("True", "Scheduled")
    existing: tuple[str, str] | None = None      # the condition the PodGroup already has
    xfail: str = ""


ALL_OK = {p: OK for p in PODS}
NOMINATE = ("node1", OK)
ALG = "TestPodGroupSchedulingAlgorithm"
SUB = "TestSubmitPodGroupAlgorithmResult"
BOTH = f"{ALG} + {SUB}"
CASES: tuple[Case, ...] = (
    Case("All pods feasible", BOTH, ALL_OK, ALL_OK, bound=frozenset(PODS)),
    Case("All pods feasible, two waiting", f"{ALG} (group Success: {SUB} 'All pods feasible')", ALL_OK,
         {"p1": "Wait", "p2": "Wait", "p3": OK}, bound=frozenset(PODS)),
    Case("All pods feasible, but all waiting", BOTH, ALL_OK, {p: "Wait" for p in PODS},
         failed=frozenset(PODS), condition=("False", "Unschedulable")),
    Case("All pods feasible, but last waiting", BOTH, ALL_OK, {"p1": OK, "p2": OK, "p3": "Wait"},
         bound=frozenset(PODS)),
    Case("All pods feasible, one waiting, one unschedulable", BOTH, ALL_OK,
         {"p1": "Wait", "p2": "Unschedulable", "p3": OK},
         bound=frozenset({"p1", "p3"}), failed=frozenset({"p2"})),
    Case("All pods require preemption", BOTH, {p: "Unschedulable" for p in PODS}, ALL_OK,
         {p: NOMINATE for p in PODS}, preempting=frozenset(PODS), condition=("False", "Unschedulable")),
    Case("All pods require preemption, but waiting", BOTH, {p: "Unschedulable" for p in PODS},
         {p: "Wait" for p in PODS}, {p: NOMINATE for p in PODS}, failed=frozenset(PODS),
         condition=("False", "Unschedulable")),
    Case("One pod requires preemption, but waiting, two are feasible", BOTH,
         {"p1": "Unschedulable", "p2": OK, "p3": OK}, {"p1": "Wait", "p2": "Wait", "p3": OK},
         {"p1": NOMINATE}, preempting=frozenset(PODS), condition=("False", "Unschedulable")),
    Case("One pod unschedulable, one requires preemption, one feasible", BOTH,
         {"p1": "Unschedulable", "p2": "Unschedulable", "p3": OK}, {"p1": OK, "p3": OK},
         {"p1": NOMINATE, "p2": ("", "Unschedulable")}, preempting=frozenset({"p1", "p3"}),
         failed=frozenset({"p2"}), condition=("False", "Unschedulable")),
    Case("All pods unschedulable", BOTH,
         {"p1": "UnschedulableAndUnresolvable", "p2": "Unschedulable", "p3": "Unschedulable"},
         failed=frozenset(PODS), condition=("False", "Unschedulable")),
    Case("Any filter returned Error", f"{ALG} (group Error: {SUB} 'Error for one pod')",
         {"p1": OK, "p2": "Error", "p3": OK}, ALL_OK, failed=frozenset(PODS),
         condition=("False", "SchedulerError")),
    Case("Any permit returned Error", f"{ALG} (group Error: {SUB} 'Error for one pod')", ALL_OK,
         {"p1": OK, "p2": "Error", "p3": OK}, failed=frozenset(PODS), condition=("False", "SchedulerError")),
    Case("Any filter returned Error while waiting on preemption",
         f"{ALG} (group Error: {SUB} 'Error for one pod while waiting on preemption')",
         {"p1": "Unschedulable", "p2": "Error", "p3": OK}, ALL_OK, {"p1": NOMINATE},
         failed=frozenset(PODS), condition=("False", "SchedulerError")),
    Case("Any permit returned Error while waiting on preemption",
         f"{ALG} (group Error: {SUB} 'Error for one pod while waiting on preemption')",
         {"p1": "Unschedulable", "p2": OK, "p3": OK}, {"p1": OK, "p2": "Error", "p3": OK}, {"p1": NOMINATE},
         failed=frozenset(PODS), condition=("False", "SchedulerError")),
    Case("Already Scheduled, successful cycle keeps condition", SUB, ALL_OK, ALL_OK, bound=frozenset(PODS),
         existing=("True", "Scheduled")),
    Case("Already Scheduled, rejected cycle does not regress condition", SUB,
         {p: "Unschedulable" for p in PODS}, failed=frozenset(PODS), existing=("True", "Scheduled")),
    Case("Already Scheduled, error cycle does not regress condition", SUB, {"p1": OK, "p2": "Error", "p3": OK},
         ALL_OK, failed=frozenset(PODS), existing=("True", "Scheduled")),
)

# Cases of the file with no observable equivalent here (asserted on upstream's internal structs).
NOT_PORTED = {
    f"{SUB} 'All pods unschedulable with nil nominatingInfo'":
        "differs from 'All pods unschedulable' only in a nil vs cleared nominatingInfo struct field",
    f"{SUB} 'Unschedulable for the entire pod group'":
        "an algorithm result with no pod results, which no Filter/Permit input produces",
    "TestPodGroupCycle_UpdateSnapshotError": "a fake cache whose UpdateSnapshot fails; ours snapshots in memory",
    "TestFrameworkForPodGroup 'success for same scheduler name', 'failure when profile not found'":
        "internal lookup; a pod naming no profile of ours is never queued",
    "TestRunWorkloadAwarePreemption":
        "asserts which internal hook is called and its status; the group's preemption is tested in "
        "tests/test_podgroup_cycle.py",
    "TestPodGroupSchedulingPlacementAlgorithm, TestPodGroupSchedulingPlacementAlgorithm_Scoring":
        "topology-aware placement (TopologyAwareWorkloadScheduling), not built",
}


def _service(case: Case, *, gang: bool = False) -> tuple[SchedulerService, MemoryClient, FakePodGroupPlugin]:
    """The scheduler with upstream's test profile; ``gang``: the default profile (GangScheduling,
    DefaultPreemption and the rest) with the fake beside them, as a real cluster runs it."""
    plugin = FakePodGroupPlugin(case.filter, case.permit, case.post_filter)
    client = MemoryClient()
    registry = Registry(extra={FAKE: PluginSpec(FAKE, lambda args, handle: plugin)}, load_entry_points=False)
    s = SchedulerService(client, seed=1, registry=registry, feature_gates={"GenericWorkload": True})
    client.cache = s.cache
    enabled = {"enabled": [{"name": FAKE}]}
    plugins: dict[str, Any] = {"filter": enabled, "postFilter": enabled, "permit": enabled}
    if not gang:
        plugins |= {"multiPoint": {"disabled": [{"name": "*"}]},
                    "queueSort": {"enabled": [{"name": "PrioritySort"}]},
                    "bind": {"enabled": [{"name": "DefaultBinder"}]}}
    s.on_profile("default", {"schedulerName": "default-scheduler", "plugins": plugins})
    s.on_node("ADDED", {"metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}},
                        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})
    return s, client, plugin


def _pod_group(case: Case) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default", "uid": "uid-pg", "resourceVersion": "1"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": 3}}}}
    if case.existing is not None:
        status, reason = case.existing
        obj["status"] = {"conditions": [{"type": POD_GROUP_INITIALLY_SCHEDULED, "status": status, "reason": reason,
                                         "message": "All pods scheduled",
                                         "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    return obj


def _pod(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
            "spec": {"schedulerName": "default-scheduler", "schedulingGroup": {"podGroupName": "pg"},
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]},
            "status": {"phase": "Pending"}}


def _params() -> list[Any]:
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail else [])
            for c in CASES]


@pytest.mark.parametrize("case", _params())
def test_pod_group_cycle_tables(case: Case) -> None:
    s, client, _plugin = _service(case)
    s.on_pod_group("ADDED", _pod_group(case))
    for name in PODS:
        s.on_pod("ADDED", _pod(name))
    # One PodGroup cycle (it pops the whole group) and the binding cycles it starts; not
    # run_until_idle, as the members that fail go back to the queue and would be tried again.
    info = s.queue.pop(timeout=0)
    assert info is not None
    asyncio.run(asyncio.wait_for(s.scheduler.finish(s.scheduler.schedule_one(info)), timeout=5))

    bound = {uid.removeprefix("uid-") for uid in client.bound}
    first_failure: dict[str, str | None] = {}
    for key, _reason, _message, nominated in client.failures:
        first_failure.setdefault(key.removeprefix("default/"), nominated)
    preempting = {p for p, node in first_failure.items() if node}
    failed = {p for p, node in first_failure.items() if not node}
    assert (bound, preempting, failed) == (set(case.bound), set(case.preempting), set(case.failed)), case.source

    cond = client.pod_group_conditions.get("default/pg", {}).get(POD_GROUP_INITIALLY_SCHEDULED)
    if case.existing is not None and case.existing == case.condition:
        # The condition already holds: upstream's write is a no-op, ours writes nothing or the same.
        assert cond is None or (cond["status"], cond["reason"]) == case.condition
    else:
        assert cond is not None, "no PodGroup condition written"
        assert (cond["status"], cond["reason"]) == case.condition


@dataclass(frozen=True)
class ConditionCase:
    """A ``TestUpdatePodGroupCondition`` case, driven by a cycle whose outcome asks for the case's
    condition: ``existing`` is what the PodGroup has (status, reason), ``want`` what it has after
    (status, reason), ``kept`` whether its lastTransitionTime is the existing one."""

    name: str
    existing: tuple[str, str] | None
    filter: dict[str, str]
    want: tuple[str, str]
    kept: bool = False
    message: str = ""          # the message upstream leaves, when it is the case's point
    generation: int = 0
    xfail: str = ""


FEASIBLE = ALL_OK
UNSCHEDULABLE = {p: "Unschedulable" for p in PODS}
ERROR = {"p1": OK, "p2": "Error", "p3": OK}
EXISTING_TIME = "2026-01-01T00:00:00Z"

CONDITION_CASES: tuple[ConditionCase, ...] = (
    ConditionCase("set Scheduled condition to True on empty status", None, FEASIBLE, ("True", "Scheduled")),
    ConditionCase("set Scheduled condition to False with Unschedulable reason", None, UNSCHEDULABLE,
                  ("False", "Unschedulable")),
    ConditionCase("set Scheduled condition to False with SchedulerError reason", None, ERROR,
                  ("False", "SchedulerError")),
    ConditionCase("transition from Unschedulable to Scheduled", ("False", "Unschedulable"), FEASIBLE,
                  ("True", "Scheduled")),
    ConditionCase("transition from SchedulerError to Scheduled", ("False", "SchedulerError"), FEASIBLE,
                  ("True", "Scheduled")),
    ConditionCase("do not regress Scheduled to Unschedulable", ("True", "Scheduled"), UNSCHEDULABLE,
                  ("True", "Scheduled"), kept=True),
    ConditionCase("do not regress Scheduled to SchedulerError", ("True", "Scheduled"), ERROR,
                  ("True", "Scheduled"), kept=True),
    ConditionCase("transition from Unschedulable to SchedulerError preserves LastTransitionTime",
                  ("False", "Unschedulable"), ERROR, ("False", "SchedulerError"), kept=True),
    ConditionCase("transition from SchedulerError to Unschedulable preserves LastTransitionTime",
                  ("False", "SchedulerError"), UNSCHEDULABLE, ("False", "Unschedulable"), kept=True),
    ConditionCase("Scheduled to Scheduled preserves LastTransitionTime", ("True", "Scheduled"), FEASIBLE,
                  ("True", "Scheduled"), kept=True, message="3 of minCount 3 pods scheduled"),
    ConditionCase("ObservedGeneration is set from PodGroup generation", None, FEASIBLE, ("True", "Scheduled"),
                  generation=7),
)

NOT_PORTED["TestUpdatePodGroupCondition 'PodGroup not found does not panic'"] = (
    "a condition write for a PodGroup that is gone; a member of a missing group is never tried here")


def _condition_params() -> list[Any]:
    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail else [])
            for c in CONDITION_CASES]


@pytest.mark.parametrize("case", _condition_params())
def test_update_pod_group_condition(case: ConditionCase) -> None:
    """``TestUpdatePodGroupCondition``: True is never regressed, and lastTransitionTime moves only
    when the status does."""
    s, client, _plugin = _service(Case(case.name, "TestUpdatePodGroupCondition", case.filter, ALL_OK))
    group = _pod_group(Case(case.name, "", {}, existing=case.existing))
    if case.generation:
        group["metadata"]["generation"] = case.generation
    s.on_pod_group("ADDED", group)
    for name in PODS:
        s.on_pod("ADDED", _pod(name))
    info = s.queue.pop(timeout=0)
    assert info is not None
    asyncio.run(asyncio.wait_for(s.scheduler.finish(s.scheduler.schedule_one(info)), timeout=5))

    written = client.pod_group_conditions.get("default/pg", {}).get(POD_GROUP_INITIALLY_SCHEDULED)
    before: dict[str, str] | None = None
    if case.existing is not None:
        status, reason = case.existing
        before = {"status": status, "reason": reason, "message": "All pods scheduled",
                  "lastTransitionTime": EXISTING_TIME}
    cond = written if written is not None else before
    assert cond is not None, "no PodGroup condition written"
    assert (cond["status"], cond["reason"]) == case.want
    assert (cond["lastTransitionTime"] == EXISTING_TIME) == case.kept
    if case.message:
        assert cond["message"] == case.message
    if case.generation:
        assert str(cond.get("observedGeneration")) == str(case.generation)


def test_a_permit_rejection_below_min_count_binds_none_of_the_gang() -> None:
    """Not an upstream case: the all-or-nothing rule under a Permit plugin other than GangScheduling.
    p2's Permit rejects it after the three were placed; 2 of minCount 3 is no quorum, so no member is
    bound, none is left waiting at GangScheduling's Permit, and every reservation is released."""
    case = Case("permit rejection", "", ALL_OK, {"p1": "Wait", "p2": "Unschedulable", "p3": OK})
    s, client, _plugin = _service(case, gang=True)
    s.on_pod_group("ADDED", _pod_group(case))
    for name in PODS:
        s.on_pod("ADDED", _pod(name))
    info = s.queue.pop(timeout=0)
    assert info is not None
    asyncio.run(asyncio.wait_for(s.scheduler.finish(s.scheduler.schedule_one(info)), timeout=5))
    assert client.bound == {}
    assert sorted(f[0] for f in client.failures) == ["default/p1", "default/p2", "default/p3"]
    assert s.cache.assumed_count() == 0
    fwk = s.profiles.for_pod(info.pod)
    assert fwk is not None and len(fwk.waiting_pods) == 0
    cond = client.pod_group_conditions["default/pg"][POD_GROUP_INITIALLY_SCHEDULED]
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("pod group default/pg: 2 of minCount 3 pods passed Permit: ")


@dataclass(frozen=True)
class PostFilterCase:
    """A ``TestPodGroupCycle_PodGroupPostFilter`` case: both members fail Filter, so the group is
    Unschedulable; whether the PodGroup's PostFilter (workload-aware preemption) runs, seen as
    ``scheduler_workload_preemption_attempts_total``, which it counts once per run."""

    name: str
    gate: bool
    post_filter: str
    called: bool


POST_FILTER_CASES: tuple[PostFilterCase, ...] = (
    PostFilterCase("runs pod group post filter when GenericWorkload is enabled and DefaultPreemption is registered",
                   True, "DefaultPreemption", True),
    PostFilterCase("disables pod group post filter when GenericWorkload feature gate is disabled",
                   False, "DefaultPreemption", False),
    PostFilterCase("disables pod group post filter when DefaultPreemption is not registered",
                   True, FAKE, False),
)


def _total(counter: Any) -> float:
    return sum(m.value for metric in counter.collect() for m in metric.samples if m.name.endswith("_total"))


@pytest.mark.parametrize("case", POST_FILTER_CASES, ids=[c.name for c in POST_FILTER_CASES])
def test_pod_group_cycle_pod_group_post_filter(case: PostFilterCase) -> None:
    """``TestPodGroupCycle_PodGroupPostFilter``: upstream's profile (PrioritySort, the fake at
    Filter, DefaultBinder, and the case's PostFilter plugin), two members that fail Filter. The
    group's PostFilter runs only with the gate on and DefaultPreemption registered (without the
    gate there is no PodGroup cycle: the pods are tried one by one, and DefaultPreemption's own
    PostFilter runs for each)."""
    plugin = FakePodGroupPlugin({"p1": "Unschedulable", "p2": "Unschedulable"}, {}, {})
    client = MemoryClient()
    registry = Registry(extra={FAKE: PluginSpec(FAKE, lambda args, handle: plugin)}, load_entry_points=False)
    s = SchedulerService(client, seed=1, registry=registry, feature_gates={"GenericWorkload": case.gate})
    client.cache = s.cache
    s.on_profile("default", {"schedulerName": "default-scheduler", "plugins": {
        "multiPoint": {"disabled": [{"name": "*"}]},
        "queueSort": {"enabled": [{"name": "PrioritySort"}]},
        "filter": {"enabled": [{"name": FAKE}]},
        "postFilter": {"enabled": [{"name": case.post_filter}]},
        "bind": {"enabled": [{"name": "DefaultBinder"}]}}})
    s.on_node("ADDED", {"metadata": {"name": "node1", "labels": {"kubernetes.io/hostname": "node1"}},
                        "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})
    s.on_pod_group("ADDED", _pod_group(Case(case.name, "", {})))
    for name in ("p1", "p2"):
        s.on_pod("ADDED", _pod(name))
    asyncio.run(asyncio.wait_for(s.scheduler.run_until_idle(), timeout=5))
    assert client.bound == {}
    assert sorted({f[0] for f in client.failures}) == ["default/p1", "default/p2"]
    counter = s.metrics.workload_preemption_attempts
    assert (counter is not None and _total(counter) > 0) == case.called
    if not case.gate:
        assert _total(s.metrics.preemption_attempts) == 2      # pod by pod, each its own PostFilter
