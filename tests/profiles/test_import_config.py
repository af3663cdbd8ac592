"""``kopf-scheduler config import``: a KubeSchedulerConfiguration v1 as SchedulingProfiles.

The inputs are upstream's own example configurations (kubernetes/website
``content/en/docs/reference/scheduling/config.md``). The oracle for the plugins each profile runs
is upstream's ``pkg/scheduler/apis/config/testing/defaults/defaults.go`` (``ExpandedPluginsV1``),
as ``cmd/kube-scheduler/app/server_test.go`` TestSetup uses it, less the in-tree volume limit
plugins kopf-scheduler does not register (``scheduler.profiles.defaults`` says why)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.errors import ProfileError
from scheduler.plugins.registry import Registry
from scheduler.profiles.compile import compile_profile, parse_spec
from scheduler.profiles.import_config import import_configuration

# The in-tree volume limit plugins are not registered (NodeVolumeLimits counts migrated in-tree
# volumes; scheduler/profiles/defaults.py says why).
NOT_YET = {"EBSLimits", "GCEPDLimits", "AzureDiskLimits"}


def _points(d: dict[str, list[Any]]) -> dict[str, list[Any]]:
    out = {}
    for point, plugins in d.items():
        kept = [p for p in plugins if (p if isinstance(p, str) else p[0]) not in NOT_YET]
        if kept:
            out[point] = kept
    return out


# defaults.go ExpandedPluginsV1: per extension point, names (and (name, weight) for score).
# One update to that copy of defaults.go: DefaultPreemption implements PreEnqueue since async
# preemption (its PreEnqueue gates a preemptor while its victims go; default_preemption.go
# asserts ``var _ fwk.PreEnqueuePlugin = &DefaultPreemption{}``), so multiPoint expands it there.
# And DynamicResources, which the copy read predates (DRA was off by default then): GA since 1.34,
# default_plugins.go lists it between InterPodAffinity and DefaultPreemption (its test,
# default_plugins_test.go, expects that multiPoint list), so multiPoint expands it, in that order, at
# each point dynamicresources.go asserts: PreEnqueue, PreFilter, Filter, PostFilter, Score (since
# 1.35, kubernetes#134711: prioritized lists; no weight in multiPoint, so 1), Reserve, PreBind.
# And NodeDeclaredFeatures (GA and locked on in 1.37): applyFeatureGates appends it to multiPoint,
# after DefaultBinder, so it comes last at the two points it asserts: PreFilter and Filter.
EXPANDED_V1 = _points({
    "preEnqueue": ["SchedulingGates", "DynamicResources", "DefaultPreemption"],
    "queueSort": ["PrioritySort"],
    "preFilter": ["NodeAffinity", "NodePorts", "NodeResourcesFit", "VolumeRestrictions", "EBSLimits", "GCEPDLimits",
                  "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding", "VolumeZone", "PodTopologySpread",
                  "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"],
    "filter": ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts", "NodeResourcesFit",
               "VolumeRestrictions", "EBSLimits", "GCEPDLimits", "NodeVolumeLimits", "AzureDiskLimits", "VolumeBinding",
               "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources", "NodeDeclaredFeatures"],
    "postFilter": ["DynamicResources", "DefaultPreemption"],
    "preScore": ["TaintToleration", "NodeAffinity", "NodeResourcesFit", "VolumeBinding", "PodTopologySpread",
                 "InterPodAffinity", "NodeResourcesBalancedAllocation"],
    "score": [("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1), ("VolumeBinding", 1),
              ("PodTopologySpread", 2), ("InterPodAffinity", 2), ("DynamicResources", 1),
              ("NodeResourcesBalancedAllocation", 1), ("ImageLocality", 1)],
    "reserve": ["VolumeBinding", "DynamicResources"],
    "preBind": ["VolumeBinding", "DynamicResources"],
    "bind": ["DefaultBinder"],
})


def effective(spec: dict[str, Any]) -> dict[str, list[Any]]:
    """The plugins a SchedulingProfile's status would list, in the oracle's shape."""
    fwk = compile_profile(parse_spec(spec), registry=Registry())
    out: dict[str, list[Any]] = {}
    for point, plugins in fwk.effective_plugins().items():
        if plugins:
            out[point] = [(p["name"], p["weight"]) if point == "score" else p["name"] for p in plugins]
    return out


def config(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration", **fields}


def test_minimal_configuration_is_one_default_profile() -> None:
    """config.md "A minimal configuration": no profiles → default-scheduler with the defaults."""
    got = import_configuration(config(clientConnection={"kubeconfig": "/etc/srv/kubernetes/kube-scheduler/kubeconfig"}))
    assert [p["spec"] for p in got.profiles] == [{"schedulerName": "default-scheduler"}]
    assert got.profiles[0]["metadata"] == {"name": "default-scheduler"}
    assert got.profiles[0]["kind"] == "SchedulingProfile"
    assert effective(got.profiles[0]["spec"]) == EXPANDED_V1
    assert got.unsupported == ["clientConnection: not imported: use run --kubeconfig, --kube-api-qps "
                               "and --kube-api-burst (content types are the client's own)"]


def test_multiple_profiles_no_scoring_scheduler() -> None:
    """config.md "Multiple profiles": default-scheduler and no-scoring-scheduler."""
    got = import_configuration(config(profiles=[
        {"schedulerName": "default-scheduler"},
        {"schedulerName": "no-scoring-scheduler", "plugins": {"preScore": {"disabled": [{"name": "*"}]},
                                                             "score": {"disabled": [{"name": "*"}]}}}]))
    assert [p["metadata"]["name"] for p in got.profiles] == ["default-scheduler", "no-scoring-scheduler"]
    assert effective(got.profiles[0]["spec"]) == EXPANDED_V1
    no_scoring = {k: v for k, v in EXPANDED_V1.items() if k not in ("preScore", "score")}
    assert effective(got.profiles[1]["spec"]) == no_scoring


def test_disable_and_reweight_a_default_plugin() -> None:
    """config.md "disable a default plugin" (the custom plugins of the example are out-of-tree; the
    in-tree ImageLocality takes their place): score without PodTopologySpread, ImageLocality weight 5.
    The order is upstream's expandMultiPointPlugins: a multiPoint plugin re-configured at the point
    ("override") comes first, then the other multiPoint plugins, then the point's own."""
    got = import_configuration(config(profiles=[{"plugins": {"score": {
        "disabled": [{"name": "PodTopologySpread"}], "enabled": [{"name": "ImageLocality", "weight": 5}]}}}]))
    score = effective(got.profiles[0]["spec"])["score"]
    assert ("PodTopologySpread", 2) not in score and ("ImageLocality", 5) in score
    assert score == [("ImageLocality", 5), ("TaintToleration", 3), ("NodeAffinity", 2), ("NodeResourcesFit", 1),
                     ("VolumeBinding", 1), ("InterPodAffinity", 2), ("DynamicResources", 1),
                     ("NodeResourcesBalancedAllocation", 1)]


def test_multipoint_disable_all_then_enable() -> None:
    """config.md multiPoint: disable every default, enable a few back (with DefaultBinder and a queue sort)."""
    got = import_configuration(config(profiles=[{"schedulerName": "multipoint-scheduler", "plugins": {"multiPoint": {
        "disabled": [{"name": "*"}],
        "enabled": [{"name": "PrioritySort"}, {"name": "NodeResourcesFit", "weight": 3}, {"name": "DefaultBinder"}]}}}]))
    assert effective(got.profiles[0]["spec"]) == {
        "queueSort": ["PrioritySort"], "preFilter": ["NodeResourcesFit"], "filter": ["NodeResourcesFit"],
        "preScore": ["NodeResourcesFit"], "score": [("NodeResourcesFit", 3)], "bind": ["DefaultBinder"]}


def test_global_settings_fold_into_each_profile() -> None:
    """percentageOfNodesToScore: the profile's own wins over the global one (defaults.go); the
    backoff settings and the extenders (#15 §8) are global upstream and go into every profile here."""
    ext = [{"urlPrefix": "http://127.0.0.1:1"}]
    got = import_configuration(config(percentageOfNodesToScore=30, podInitialBackoffSeconds=2, podMaxBackoffSeconds=20,
                                      parallelism=32, extenders=ext,
                                      leaderElection={"leaderElect": True},
                                      profiles=[{"schedulerName": "a"},
                                                {"schedulerName": "b", "percentageOfNodesToScore": 70}]))
    assert [p["spec"] for p in got.profiles] == [
        {"schedulerName": "a", "percentageOfNodesToScore": 30, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20,
         "extenders": ext},
        {"schedulerName": "b", "percentageOfNodesToScore": 70, "podInitialBackoffSeconds": 2, "podMaxBackoffSeconds": 20,
         "extenders": ext}]
    assert [line.split(":")[0] for line in got.unsupported] == ["parallelism", "leaderElection"]


def test_extenders_come_across_and_validate() -> None:
    """An extender as upstream's docs configure one (scheduler-extender.md: a GPU extender that
    filters, prioritizes and binds the pods requesting its resource) lands in every profile and
    validates there; upstream's validation still applies (a second binder is refused)."""
    gpu = {"urlPrefix": "http://127.0.0.1:8888/scheduler", "filterVerb": "filter", "prioritizeVerb": "prioritize",
           "weight": 5, "bindVerb": "bind", "enableHTTPS": False, "nodeCacheCapable": True, "httpTimeout": "10s",
           "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}], "ignorable": False}
    got = import_configuration(config(extenders=[gpu]))
    spec = parse_spec(got.profiles[0]["spec"])
    assert got.unsupported == [] and spec.extenders[0].timeout == 10.0
    assert spec.extenders[0].managed == {"example.com/gpu"}
    two = import_configuration(config(extenders=[gpu, {**gpu, "managedResources": []}]))
    with pytest.raises(ProfileError, match='extenders: Invalid value: "found 2 extenders implementing bind": '
                                           'only one extender can implement bind'):
        parse_spec(two.profiles[0]["spec"])


def test_unknown_fields_are_named() -> None:
    got = import_configuration(config(profiles=[{"schedulerName": "a", "plugin": {}}], bogus=1))
    assert got.unsupported == ["bogus: not imported: unknown field of KubeSchedulerConfiguration v1",
                               "profiles[0].plugin: not imported: unknown field of KubeSchedulerProfile"]


@pytest.mark.parametrize("doc,message", [
    ({"apiVersion": "kubescheduler.config.k8s.io/v1beta3", "kind": "KubeSchedulerConfiguration"},
     "apiVersion kubescheduler.config.k8s.io/v1beta3 was removed in Kubernetes 1.29"),
    ({"apiVersion": "kubescheduler.config.k8s.io/v2", "kind": "KubeSchedulerConfiguration"}, "unsupported apiVersion"),
    ({"apiVersion": "v1", "kind": "ConfigMap"}, "kind is 'ConfigMap'"),
    ([1, 2], "not a mapping"),
    (config(profiles={"schedulerName": "a"}), "profiles: must be a list"),
    (config(profiles=["a"]), r"profiles\[0\]: must be a mapping"),
])
def test_not_a_v1_configuration(doc: Any, message: str) -> None:
    with pytest.raises(ProfileError, match=message):
        import_configuration(doc)


def test_cli(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config(parallelism=8, profiles=[
        {"schedulerName": "ok"}, {"schedulerName": "bad", "plugins": {"score": {"enabled": [{"name": "Nope"}]}}}])))
    run = subprocess.run([sys.executable, "-m", "scheduler.app.cli", "config", "import", str(path)],
                         capture_output=True, text=True, timeout=60, check=False)
    # A profile that would be rejected makes the file one kube-scheduler would not start with (#35).
    assert run.returncode == 1 and not run.stdout, run.stderr
    assert "warning: parallelism: not imported" in run.stderr
    assert "error: profiles[1] (bad): would be rejected:" in run.stderr and "Nope" in run.stderr
    path.write_text(yaml.safe_dump(config(parallelism=8, profiles=[{"schedulerName": "ok"}, {"schedulerName": "b"}])))
    run = subprocess.run([sys.executable, "-m", "scheduler.app.cli", "config", "import", str(path)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    docs = list(yaml.safe_load_all(run.stdout))
    assert [d["spec"]["schedulerName"] for d in docs] == ["ok", "b"]
    assert "warning: parallelism: not imported" in run.stderr
    path.write_text(json.dumps({"apiVersion": "kubescheduler.config.k8s.io/v1beta2",
                                "kind": "KubeSchedulerConfiguration"}))
    run = subprocess.run([sys.executable, "-m", "scheduler.app.cli", "config", "import", str(path)],
                         capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 1 and "removed in Kubernetes 1.28" in run.stderr and not run.stdout
