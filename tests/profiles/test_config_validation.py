"""``config import`` refuses what kube-scheduler refuses: upstream's ``validation_test.go``
``TestValidateKubeSchedulerConfiguration`` table, its cases by name, on v1 documents.

A case fails as upstream's does when the file is refused (``import_configuration`` raises, with
``validation.go``'s message) or a profile would be rejected by its compile (plugin args, extenders:
``config import`` exits 1 then). The table's own plugins ``CustomSort`` and ``CustomBind`` are
registered as out-of-tree plugins, as upstream's validation never looks them up.

Adapted to v1, as upstream's newer copies of the table are: ``resourceLock`` is ``leases`` (the only
lock validation.go accepts), the removed plugin is v1's ``EBSLimits``/``GCEPDLimits``. Upstream's
table only validates; its profiles also compile here, so each disables the default PrioritySort in
multiPoint (kube-scheduler itself would refuse two queue sorts in one profile). Not ported:
``bad-resource-name-not-set``, ``bad-resource-namespace-not-set`` (component-base leader election
checks; ``run`` takes its own flags) and the bind-address cases (fields v1 no longer has).
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.errors import ProfileError
from scheduler.framework import CycleState, QueuedPodInfo, Status
from scheduler.model import Pod
from scheduler.plugins.registry import PluginSpec, Registry
from scheduler.profiles.compile import compile_profile, parse_spec
from scheduler.profiles.config_validation import aggregate, validate_configuration
from scheduler.profiles.import_config import import_configuration


class _Sort:
    name = "CustomSort"

    def sort_key(self, info: QueuedPodInfo) -> Any:
        return info.timestamp


class _Bind:
    name = "CustomBind"

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()


REGISTRY = Registry({"CustomSort": PluginSpec("CustomSort", lambda args, handle: _Sort()),
                     "CustomBind": PluginSpec("CustomBind", lambda args, handle: _Bind())}, load_entry_points=False)

VALID: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
    "parallelism": 8,
    "clientConnection": {"acceptContentTypes": "application/json", "contentType": "application/json", "qps": 10,
                         "burst": 10},
    "leaderElection": {"resourceLock": "leases", "leaderElect": True, "leaseDuration": "30s", "renewDeadline": "15s",
                       "retryPeriod": "5s", "resourceNamespace": "name", "resourceName": "name"},
    "podInitialBackoffSeconds": 1, "podMaxBackoffSeconds": 1, "percentageOfNodesToScore": 35,
    "profiles": [
        {"schedulerName": "me",
         "plugins": {"multiPoint": {"disabled": [{"name": "PrioritySort"}]},
                     "queueSort": {"enabled": [{"name": "CustomSort"}]}, "score": {"disabled": [{"name": "*"}]}},
         "pluginConfig": [{"name": "DefaultPreemption",
                           "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100}}]},
        {"schedulerName": "other",
         "plugins": {"multiPoint": {"disabled": [{"name": "PrioritySort"}]},
                     "queueSort": {"enabled": [{"name": "CustomSort"}]}, "bind": {"enabled": [{"name": "CustomBind"}]}}},
    ],
    "extenders": [{"urlPrefix": "http://127.0.0.1:8081/extender", "prioritizeVerb": "prioritize", "weight": 1}],
}


def _with(change: Any) -> dict[str, Any]:
    doc = copy.deepcopy(VALID)
    change(doc)
    return doc


def _set(path: str, value: Any) -> Any:
    def go(doc: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        at: Any = doc
        for p in parents:
            at = at[int(p)] if p.isdigit() else at[p]
        if last.isdigit():
            at[int(last)] = value
        else:
            at[last] = value
    return go


def refusal(doc: dict[str, Any]) -> str | None:
    """Why kube-scheduler would not start with ``doc``: the file's validation, else the first profile
    its compile rejects; None when it would start."""
    try:
        result = import_configuration(doc)
    except ProfileError as e:
        return str(e)
    for obj in result.profiles:
        try:
            spec = parse_spec(obj["spec"])
            compile_profile(spec.model_copy(update={"extenders": ()}), registry=REGISTRY)
        except ProfileError as e:
            return str(e)
    return None


CASES: list[tuple[str, Any, str | None]] = [
    ("good", lambda d: None, None),
    ("bad-parallelism-invalid-value", _set("parallelism", 0),
     "parallelism: Invalid value: 0: should be an integer value greater than zero"),
    ("bad-percentage-of-nodes-to-score", _set("percentageOfNodesToScore", 101),
     "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"),
    ("scheduler-name-not-set", _set("profiles.1.schedulerName", ""), "profiles[1].schedulerName: Required value"),
    ("repeated-scheduler-name", _set("profiles.0.schedulerName", "other"),
     "profiles[1].schedulerName: Duplicate value: {}"),
    ("different-queue-sort", _set("profiles.1.plugins.queueSort.enabled.0.name", "AnotherSort"),
     'profiles[1].plugins.queueSort: Invalid value: {"enabled":[{"name":"AnotherSort"}]}: '
     "must be the same for all profiles"),
    ("one-empty-queue-sort", lambda d: d["profiles"][0].pop("plugins"),
     'profiles[1].plugins.queueSort: Invalid value: {"enabled":[{"name":"CustomSort"}]}: '
     "must be the same for all profiles"),
    ("extender-negative-weight", _set("extenders.0.weight", -1),
     "extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"),
    ("extender-duplicate-managed-resources", _set("extenders.0.managedResources",
                                                  [{"name": "foo"}, {"name": "foo"}]),
     "duplicate extender managed resource name"),
    ("extender-duplicate-bind", lambda d: (d["extenders"][0].update(bindVerb="foo"), d["extenders"].append(
        {"urlPrefix": "http://127.0.0.1:8082/extender", "prioritizeVerb": "prioritize", "weight": 1,
         "bindVerb": "bar"})),
     'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
    ("invalid-node-percentage", _set("profiles.0.pluginConfig", [
        {"name": "DefaultPreemption", "args": {"minCandidateNodesPercentage": 200, "minCandidateNodesAbsolute": 100}}]),
     "minCandidateNodesPercentage"),
    # InterPodAffinityArgs given to DefaultPreemption ("has to match plugin args"): in YAML, its field.
    ("invalid-plugin-args", _set("profiles.0.pluginConfig", [
        {"name": "DefaultPreemption", "args": {"hardPodAffinityWeight": 1}}]), "hardPodAffinityWeight"),
    ("duplicated-plugin-config", _set("profiles.0.pluginConfig", [{"name": "config"}, {"name": "config"}]),
     'profiles[0].pluginConfig[1]: Duplicate value: "config"'),
    ("mismatch-queue-sort", _set("profiles", [
        {"schedulerName": "me", "plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}]}},
         "pluginConfig": [{"name": "PrioritySort"}]},
        {"schedulerName": "other", "plugins": {"queueSort": {"enabled": [{"name": "CustomSort"}]}},
         "pluginConfig": [{"name": "CustomSort"}]}]),
     'profiles[1].plugins.queueSort: Invalid value: {"enabled":[{"name":"CustomSort"}]}: '
     "must be the same for all profiles"),
    ("bad-removed-plugins-1", lambda d: d["profiles"][0]["plugins"]["score"].update(
        enabled=[{"name": "EBSLimits", "weight": 2}]),
     'profiles[0].plugins.score.enabled[0]: Invalid value: "EBSLimits": was invalid in version '
     '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'),
    ("good-removed-plugins-2", lambda d: d["profiles"][0]["plugins"]["score"].update(
        enabled=[{"name": "PodTopologySpread", "weight": 2}]), None),
    ("bad-plugins-config", lambda d: d["profiles"][0]["pluginConfig"].append({"name": "GCEPDLimits", "args": {}}),
     'profiles[0].pluginConfig[1]: Invalid value: "GCEPDLimits": was invalid in version '
     '"kubescheduler.config.k8s.io/v1" (KubeSchedulerConfiguration is version "kubescheduler.config.k8s.io/v1")'),
]


@pytest.mark.parametrize(("name", "change", "want"), CASES, ids=[c[0] for c in CASES])
def test_validate_kube_scheduler_configuration_upstream(name: str, change: Any, want: str | None) -> None:
    got = refusal(_with(change))
    if want is None:
        assert got is None, got
    else:
        assert got is not None and want in got, got


def test_several_errors_are_upstreams_aggregate() -> None:
    doc = _with(lambda d: (d.update(parallelism=0, percentageOfNodesToScore=101)))
    errs = validate_configuration(doc)
    assert errs == ["parallelism: Invalid value: 0: should be an integer value greater than zero",
                    "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]"]
    with pytest.raises(ProfileError) as e:
        import_configuration(doc)
    assert str(e.value) == aggregate(errs) == "[" + ", ".join(errs) + "]"


@pytest.mark.parametrize(("doc", "want"), [
    ({"leaderElection": {"leaderElect": True, "resourceLock": "endpointsleases"}},
     'leaderElection.resourceLock: Invalid value: "endpointsleases": resourceLock value must be "leases"'),
    ({"leaderElection": {"leaderElect": False, "resourceLock": "endpointsleases"}}, None),
    ({"podInitialBackoffSeconds": 0}, "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0"),
    ({"podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 2},
     "podMaxBackoffSeconds: Invalid value: 2: must be greater than or equal to PodInitialBackoffSeconds"),
    ({"podInitialBackoffSeconds": 20}, "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to "
                                       "PodInitialBackoffSeconds"),
    ({"profiles": [{"schedulerName": "a", "percentageOfNodesToScore": -1}]},
     "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]"),
    ({"profiles": [{}, {"schedulerName": "default-scheduler"}]}, "profiles[1].schedulerName: Duplicate value: {}"),
    ({"profiles": [{"plugins": {"queueSort": {"enabled": [{"name": "PrioritySort"}, {"name": "CustomSort"}]}}}]},
     "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled"),
])
def test_validation_go_rules(doc: dict[str, Any], want: str | None) -> None:
    """The rest of validation.go's checks, each with its message (defaults: leaderElect true, backoff 1s/10s)."""
    errs = validate_configuration({"apiVersion": "kubescheduler.config.k8s.io/v1",
                                   "kind": "KubeSchedulerConfiguration", **doc})
    assert errs == ([] if want is None else [want])


def test_args_may_name_their_type() -> None:
    """Args may carry their TypeMeta: the plugin's own v1 type comes across (without it), another
    plugin's type is refused as upstream's type check refuses it."""
    def doc(kind: str) -> dict[str, Any]:
        return {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "profiles": [{"pluginConfig": [{"name": "NodeResourcesFit", "args": {
                    "apiVersion": "kubescheduler.config.k8s.io/v1", "kind": kind,
                    "scoringStrategy": {"type": "MostAllocated"}}}]}]}
    assert refusal(doc("NodeResourcesFitArgs")) is None
    (obj,) = import_configuration(doc("NodeResourcesFitArgs")).profiles
    assert obj["spec"]["pluginConfig"] == [{"name": "NodeResourcesFit",
                                            "args": {"scoringStrategy": {"type": "MostAllocated"}}}]
    assert refusal(doc("InterPodAffinityArgs")) == ('profiles[0].pluginConfig[0].args: Invalid value: '
                                                    '"InterPodAffinityArgs": has to match plugin args')


def test_removed_plugins_in_multipoint_are_not_validation_gos() -> None:
    """validatePluginConfig's stages leave multiPoint out: such a plugin is refused later, as unknown."""
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"plugins": {"multiPoint": {"enabled": [{"name": "EBSLimits"}]}}}]}
    assert validate_configuration(doc) == []
    assert "EBSLimits" in (refusal(doc) or "")


DRA_ARGS: list[tuple[str, dict[str, Any], dict[str, bool], str | None, tuple[float | None, float | None]]] = [
    ("defaults", {}, {}, None, (10.0, 600.0)),
    ("both set", {"filterTimeout": "5s", "bindingTimeout": "2m"}, {}, None, (5.0, 120.0)),
    ("no filter timeout", {"filterTimeout": "0s"}, {}, None, (0.0, 600.0)),
    ("negative filter timeout", {"filterTimeout": "-1s"}, {}, "filterTimeout: Invalid value: \"-1s\": must be zero "
                                                              "or positive", (None, None)),
    ("binding timeout under a second", {"bindingTimeout": "500ms"}, {},
     "bindingTimeout: Invalid value: \"500ms\": must be at least 1 second", (None, None)),
    ("filter timeout with its gate off", {"filterTimeout": "5s"}, {"DRASchedulerFilterTimeout": False},
     "filterTimeout: Forbidden: DRASchedulingFilterTimeout feature gate is disabled", (None, None)),
    ("gate off, no field", {}, {"DRASchedulerFilterTimeout": False, "DRADeviceBindingConditions": False}, None,
     (None, None)),
    ("binding timeout with its gate off", {"bindingTimeout": "5s"}, {"DRADeviceBindingConditions": False},
     "bindingTimeout: Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus feature gate is "
     "disabled", (None, None)),
    ("not a duration", {"filterTimeout": "soon"}, {}, 'time: invalid duration "soon"', (None, None)),
]


@pytest.mark.parametrize(("name", "args", "gates", "want", "timeouts"), DRA_ARGS, ids=[c[0] for c in DRA_ARGS])
def test_dynamic_resources_args(name: str, args: dict[str, Any], gates: dict[str, bool], want: str | None,
                                timeouts: tuple[float | None, float | None]) -> None:
    """DynamicResourcesArgs (issue #35: refused before) through import and a profile's compile, with
    v1 defaulting and ValidateDynamicResourcesArgs' rules and messages under the process's gates."""
    from scheduler.framework.handle import Handle
    doc = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
           "profiles": [{"pluginConfig": [{"name": "DynamicResources", "args": args}]}]}
    (obj,) = import_configuration(doc).profiles
    spec = parse_spec(obj["spec"])
    if want is not None:
        with pytest.raises(ProfileError) as e:
            compile_profile(spec, registry=Registry(), handle=Handle(feature_gates=gates))
        assert want in str(e.value) and "spec.pluginConfig[0].args" in (e.value.field or ""), (str(e.value),
                                                                                               e.value.field)
        return
    fwk = compile_profile(spec, registry=Registry(), handle=Handle(feature_gates=gates))
    dra = fwk.plugins_by_name["DynamicResources"].args      # type: ignore[attr-defined]
    assert (dra.filter_timeout, dra.binding_timeout) == timeouts


def test_the_dra_docs_binding_timeout_example() -> None:
    """dynamic-resource-allocation.md's example (args with their TypeMeta, bindingTimeout 60s), which
    the same page says otherwise defaults to 600 seconds."""
    doc = yaml.safe_load("""
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: DynamicResources
    args:
      apiVersion: kubescheduler.config.k8s.io/v1
      kind: DynamicResourcesArgs
      bindingTimeout: 60s
""")
    assert refusal(doc) is None
    (obj,) = import_configuration(doc).profiles
    fwk = compile_profile(parse_spec(obj["spec"]), registry=Registry())
    args = fwk.plugins_by_name["DynamicResources"].args      # type: ignore[attr-defined]
    assert (args.filter_timeout, args.binding_timeout) == (10.0, 60.0)


def test_cli_exits_1_when_a_profile_would_be_rejected_or_the_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"

    def run(doc: dict[str, Any]) -> subprocess.CompletedProcess[str]:
        path.write_text(yaml.safe_dump(doc))
        return subprocess.run([sys.executable, "-m", "scheduler.app.cli", "config", "import", str(path)],
                              capture_output=True, text=True, timeout=60, check=False)
    base = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration"}
    dup = run({**base, "profiles": [{"schedulerName": "a"}, {"schedulerName": "a"}]})
    assert dup.returncode == 1 and not dup.stdout
    assert "profiles[1].schedulerName: Duplicate value: {}" in dup.stderr
    bad = run({**base, "profiles": [{"schedulerName": "ok"}, {"schedulerName": "bad", "plugins": {
        "score": {"enabled": [{"name": "Nope"}]}}}]})
    assert bad.returncode == 1 and not bad.stdout
    assert "error: profiles[1] (bad): would be rejected:" in bad.stderr and "Nope" in bad.stderr
    dra = run({**base, "profiles": [{"pluginConfig": [{"name": "DynamicResources",
                                                       "args": {"filterTimeout": "20s", "bindingTimeout": "5m"}}]}]})
    assert dra.returncode == 0, dra.stderr
    (doc,) = yaml.safe_load_all(dra.stdout)
    assert doc["spec"]["pluginConfig"] == [{"name": "DynamicResources",
                                            "args": {"filterTimeout": "20s", "bindingTimeout": "5m"}}]
