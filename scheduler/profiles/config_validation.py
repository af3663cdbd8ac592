"""What kube-scheduler refuses in a ``KubeSchedulerConfiguration`` before it builds a profile:
``ValidateKubeSchedulerConfiguration`` (``pkg/scheduler/apis/config/validation/validation.go``),
on the file as v1 defaulting leaves it (``apis/config/v1/defaults.go``), with upstream's messages
in ``field.Error`` form (``profiles[1].schedulerName: Duplicate value: ...``).

``config import`` (``import_config.py``) refuses such a file whole, as kube-scheduler refuses to
start with it: one error is its message, several are upstream's aggregate ``[e1, e2]``. What a
profile's own compile refuses (unknown plugins, bad plugin args, a bad extender) is checked there,
per profile, by the same code a SchedulingProfile runs through.

Checked here: ``parallelism``; ``leaderElection.resourceLock`` (only ``leases``); each profile's
``schedulerName`` (an explicit empty one is Required; two profiles with one name is Duplicate) and
``percentageOfNodesToScore`` (and the global one) in [0, 100]; plugins removed from v1
(``AzureDiskLimits``, ``CinderLimits``, ``EBSLimits``, ``GCEPDLimits``) enabled at an extension point
or configured; a plugin configured twice; args whose ``kind`` names another plugin's args type
(``has to match plugin args``; the value is shown as the kind); one queue sort per profile and the
same one, with the same args, in every profile; the backoff seconds.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["REMOVED_PLUGINS", "aggregate", "args_kind", "validate_configuration"]

V1 = "kubescheduler.config.k8s.io/v1"
# invalidPluginsByVersion: plugins removed in (or before) v1.
REMOVED_PLUGINS = ("AzureDiskLimits", "CinderLimits", "EBSLimits", "GCEPDLimits")
# validatePluginConfig's stagesToPluginSet: multiPoint is not among them.
_STAGES = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit",
           "preBind", "bind", "postBind")
# SetDefaults_KubeSchedulerConfiguration
_DEFAULT_PARALLELISM = 16
_DEFAULT_INITIAL_BACKOFF = 1
_DEFAULT_MAX_BACKOFF = 10


def _value(v: Any) -> str:
    """A bad value as ``field.Error`` prints it: strings quoted, numbers and booleans bare, others as JSON."""
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    return json.dumps(v, sort_keys=True, separators=(",", ":"))


def args_kind(plugin: str) -> str:
    """The v1 args type of a plugin's ``pluginConfig`` (``DefaultPreemption`` -> ``DefaultPreemptionArgs``)."""
    return f"{plugin}Args"


def _invalid(path: str, value: Any, detail: str) -> str:
    return f"{path}: Invalid value: {_value(value)}: {detail}"


def aggregate(errors: Sequence[str]) -> str:
    """``utilerrors.NewAggregate(errs).Error()``: one error as it is, several in brackets."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


def validate_configuration(doc: Mapping[str, Any]) -> list[str]:
    """Every error ``ValidateKubeSchedulerConfiguration`` finds in ``doc`` (a v1 document), in its order."""
    errs: list[str] = []
    election = doc.get("leaderElection")
    if isinstance(election, Mapping):
        lock = election.get("resourceLock", "leases")
        if election.get("leaderElect", True) and lock != "leases":
            errs.append(_invalid("leaderElection.resourceLock", lock, 'resourceLock value must be "leases"'))
    parallelism = doc.get("parallelism", _DEFAULT_PARALLELISM)
    if isinstance(parallelism, int) and parallelism <= 0:
        errs.append(_invalid("parallelism", parallelism, "should be an integer value greater than zero"))
    profiles = doc.get("profiles") or [{}]
    if isinstance(profiles, list) and all(isinstance(p, Mapping) for p in profiles):
        seen: dict[str, int] = {}
        for i, profile in enumerate(profiles):
            path = f"profiles[{i}]"
            errs += _profile_errors(path, profile)
            name = profile.get("schedulerName", "default-scheduler")
            if name in seen:
                # field.Duplicate(path, profilesPath.Index(idx).Child("schedulerName")): the bad value is
                # a *field.Path, which field.Error prints as "{}".
                errs.append(f"{path}.schedulerName: Duplicate value: {{}}")
            seen[name] = i
        errs += _common_queue_sort(profiles)
    errs += _percentage("percentageOfNodesToScore", doc.get("percentageOfNodesToScore"))
    initial = doc.get("podInitialBackoffSeconds", _DEFAULT_INITIAL_BACKOFF)
    maximum = doc.get("podMaxBackoffSeconds", _DEFAULT_MAX_BACKOFF)
    if isinstance(initial, int) and initial <= 0:
        errs.append(_invalid("podInitialBackoffSeconds", initial, "must be greater than 0"))
    if isinstance(initial, int) and isinstance(maximum, int) and maximum < initial:
        errs.append(_invalid("podMaxBackoffSeconds", maximum,
                             "must be greater than or equal to PodInitialBackoffSeconds"))
    return errs


def _percentage(path: str, value: Any) -> list[str]:
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= 100:
        return [_invalid(path, value, "not in valid range [0-100]")]
    return []


def _removed(path: str, name: Any) -> list[str]:
    if name in REMOVED_PLUGINS:
        return [_invalid(path, name, f'was invalid in version "{V1}" (KubeSchedulerConfiguration is version "{V1}")')]
    return []


def _profile_errors(path: str, profile: Mapping[str, Any]) -> list[str]:
    """validateKubeSchedulerProfile and validatePluginConfig."""
    errs: list[str] = []
    if profile.get("schedulerName", "default-scheduler") == "":
        errs.append(f"{path}.schedulerName: Required value")
    errs += _percentage(f"{path}.percentageOfNodesToScore", profile.get("percentageOfNodesToScore"))
    plugins = profile.get("plugins")
    if isinstance(plugins, Mapping):
        for stage in _STAGES:
            enabled = (plugins.get(stage) or {}).get("enabled") or []
            for i, p in enumerate(enabled):
                if isinstance(p, Mapping):
                    errs += _removed(f"{path}.plugins.{stage}.enabled[{i}]", p.get("name"))
    configured: set[str] = set()
    for i, pc in enumerate(profile.get("pluginConfig") or []):
        if not isinstance(pc, Mapping):
            continue
        name = pc.get("name")
        if name in configured:
            errs.append(f"{path}.pluginConfig[{i}]: Duplicate value: {_value(name)}")
        elif isinstance(name, str):
            configured.add(name)
        removed = _removed(f"{path}.pluginConfig[{i}]", name)
        errs += removed
        args = pc.get("args")
        # The args decode as the type their kind names; another plugin's type is refused.
        if (not removed and isinstance(name, str) and isinstance(args, Mapping) and "kind" in args
                and (args.get("apiVersion", V1) != V1 or args["kind"] != args_kind(name))):
            errs.append(_invalid(f"{path}.pluginConfig[{i}].args", args["kind"], "has to match plugin args"))
    return errs


def _queue_sort(profile: Mapping[str, Any]) -> Any:
    plugins = profile.get("plugins")
    return (plugins.get("queueSort") if isinstance(plugins, Mapping) else None) or {}


def _common_queue_sort(profiles: Sequence[Mapping[str, Any]]) -> list[str]:
    """validateCommonQueueSort: at most one queue sort in the first profile, and every profile with
    the first's queueSort set and the same args for it."""
    errs: list[str] = []
    canon = _queue_sort(profiles[0])
    enabled = canon.get("enabled") or []
    name = enabled[0].get("name") if enabled and isinstance(enabled[0], Mapping) else ""
    if len(enabled) > 1:
        errs.append(_invalid("profiles[0].plugins.queueSort.Enabled", len(enabled),
                             "only one queue sort plugin can be enabled"))
    canon_args = next((pc.get("args") for pc in profiles[0].get("pluginConfig") or []
                       if name and pc.get("name") == name), None)
    for i in range(1, len(profiles)):
        curr = _queue_sort(profiles[i])
        if curr != canon:
            errs.append(_invalid(f"profiles[{i}].plugins.queueSort", curr, "must be the same for all profiles"))
        for pc in profiles[i].get("pluginConfig") or []:
            if name and pc.get("name") == name and pc.get("args") != canon_args:
                errs.append(_invalid(f"profiles[{i}].pluginConfig.args", pc.get("args"),
                                     "queueSort must be the same for all profiles"))
    return errs
