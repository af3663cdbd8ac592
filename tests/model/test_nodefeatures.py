"""``scheduler/model/nodefeatures.py``: component-helpers' feature registry, with upstream's own test
tables for ``InferForScheduling`` and ``Discover`` kept as data
(``data/nodedeclaredfeatures_inference.json``, each case named by its upstream file, test and case),
and the inference as the parsed pod carries it (``Pod.required_features``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scheduler.errors import ParseError
from scheduler.model import parse_node
from scheduler.model.nodefeatures import (
    COMPONENT_VERSION,
    REGISTRY,
    Feature,
    NodeConfiguration,
    active_registry,
    discover_node_features,
    required_features,
)
from tests.builders import pod

DATA = json.loads((Path(__file__).parent / "data" / "nodedeclaredfeatures_inference.json").read_text())
BY_NAME = {f.name: f for f in REGISTRY}


def _id(case: dict[str, Any]) -> str:
    return f"{case['file']}:{case['test']}/{case['case']}"


@pytest.mark.parametrize("case", DATA["inferForScheduling"], ids=_id)
def test_infer_for_scheduling_upstream(case: dict[str, Any]) -> None:
    assert BY_NAME[case["feature"]].infer_for_scheduling(case["spec"]) is case["want"]
    # The same answer through the whole registry, as the parsed pod carries it.
    assert (case["feature"] in required_features(case["spec"])) is case["want"]


def _config(raw: dict[str, Any]) -> NodeConfiguration:
    return NodeConfiguration(feature_gates=frozenset(raw.get("featureGates", ())),
                             runtime_features=frozenset(raw.get("runtimeFeatures", ())),
                             cgroups_v2=raw.get("cgroupsV2", True), cgroups_per_qos=raw.get("cgroupsPerQOS", True),
                             cgroup_nsdelegate=raw.get("cgroupNsdelegate", False))


@pytest.mark.parametrize("case", DATA["discover"], ids=_id)
def test_discover_upstream(case: dict[str, Any]) -> None:
    cfg = _config(case["config"])
    assert BY_NAME[case["feature"]].discover(cfg) is case["want"]
    assert (case["feature"] in discover_node_features(cfg)) is case["want"]


def test_registry_is_sorted_by_name_as_the_framework_sorts_it() -> None:
    names = [f.name for f in REGISTRY]
    assert names == sorted(names) and len(set(names)) == len(names)


def test_update_only_features_are_never_required_for_scheduling() -> None:
    """guaranteed_cpu_resize.go, pod_level_resource_resize.go, nonsidecar_initcontainers_resize.go,
    memory_backed_volumes_resize.go, extendwebsocketstokubelet: InferForScheduling is false."""
    busy = {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "1"}}}],
            "resources": {"requests": {"cpu": "1"}}, "volumes": [{"name": "m", "emptyDir": {"medium": "Memory"}}]}
    for name in ("GuaranteedQoSPodCPUResize", "InPlacePodLevelResourcesVerticalScaling",
                 "InPlacePodVerticalScalingInitContainers", "InPlacePodVerticalScalingMemoryBackedVolumes",
                 "ExtendWebSocketsToKubelet"):
        assert BY_NAME[name].infer_for_scheduling(busy) is False


def test_guaranteed_cpu_resize_is_declared_by_a_none_policy_or_a_gated_static_one() -> None:
    """guaranteed_cpu_resize.go Discover."""
    f = BY_NAME["GuaranteedQoSPodCPUResize"]
    assert f.discover(NodeConfiguration(cpu_manager_policy="none"))
    assert not f.discover(NodeConfiguration(cpu_manager_policy="static"))
    assert f.discover(NodeConfiguration(cpu_manager_policy="static",
                                        feature_gates=frozenset({"InPlacePodVerticalScalingExclusiveCPUs"})))


def test_user_namespaces_host_network_needs_both() -> None:
    """user_namespaces_host_network.go InferForScheduling (its test file has no table for it)."""
    f = BY_NAME["UserNamespacesHostNetworkSupport"]
    assert f.infer_for_scheduling({"hostNetwork": True, "hostUsers": False})
    assert not f.infer_for_scheduling({"hostNetwork": True})
    assert not f.infer_for_scheduling({"hostNetwork": True, "hostUsers": True})
    assert not f.infer_for_scheduling({"hostUsers": False})


def test_a_feature_above_its_max_version_is_not_required_nor_declared() -> None:
    """framework.go: InferForPodScheduling and DiscoverNodeFeatures skip a feature whose MaxVersion
    the version is greater than."""
    old = Feature("Old", lambda spec: True, lambda cfg: True, max_version=(1, 33, 0))
    current = Feature("Current", lambda spec: True, lambda cfg: True, max_version=COMPONENT_VERSION)
    assert required_features({}, (1, 34, 0), (current, old)) == {"Current"}
    assert required_features({}, (1, 33, 0), (current, old)) == {"Current", "Old"}
    assert discover_node_features(NodeConfiguration(version=(1, 34, 0)), (old, current)) == ["Current"]


def test_the_parsed_pod_carries_its_requirements() -> None:
    restart = {"name": "c", "image": "i", "restartPolicyRules": [{"action": "RestartAllContainers",
                                                                  "exitCodes": {"operator": "In", "values": [1]}}]}
    assert pod("p", spec={"containers": [restart], "resources": {"limits": {"pid": "10"}}}).required_features == {
        "RestartAllContainersOnContainerExits", "PerPodPIDLimit"}
    assert pod("plain").required_features == frozenset()


def test_a_node_reads_status_declared_features() -> None:
    n = parse_node({"metadata": {"name": "n"}, "status": {"declaredFeatures": ["B", "A"]}})
    assert n.declared_features == {"A", "B"}
    assert parse_node({"metadata": {"name": "n"}}).declared_features == frozenset()
    with pytest.raises(ParseError, match=r"status\.declaredFeatures"):
        parse_node({"metadata": {"name": "n"}, "status": {"declaredFeatures": "A"}})


def test_a_swapped_registry_is_what_every_parse_reads() -> None:
    """Upstream's ``features.AllFeatures`` is a package variable that scheduler_perf's
    nodedeclaredfeatures test replaces with mock features for a run (node_declared_features_test.go,
    ``setupFeatures``): ``active_registry`` swaps ours, and the previous one comes back."""
    mock = Feature("Feature1", lambda spec: spec.get("resources") is not None, lambda cfg: True)
    previous = active_registry((mock,))
    try:
        assert required_features({"resources": {"requests": {"cpu": "1"}}}) == {"Feature1"}
        assert required_features({}) == frozenset()
        assert discover_node_features(NodeConfiguration()) == ["Feature1"]
        assert pod("p", spec={"resources": {"requests": {"cpu": "1"}}}).required_features == {"Feature1"}
    finally:
        assert active_registry(previous) == (mock,)
    assert active_registry() is REGISTRY
    assert required_features({"resources": {"requests": {"cpu": "1"}}}) == frozenset()
