"""Feature gates: upstream's ``--feature-gates Name=bool[,Name=bool]`` for the gates kopf-scheduler
has, with upstream's names and defaults.

=========================  =======  ============================================================
gate                       default  what it turns on
=========================  =======  ============================================================
``OpportunisticBatching``  true     KEP-5598 (beta and on in 1.35): a pod with the previous pod's
                                    scheduling signature reuses its scored node list
                                    (``framework/batch.py``)
=========================  =======  ============================================================

``parse_feature_gates`` reads the flag's value as upstream's ``featuregate.Set`` does (names are
case-sensitive, values are Go's ``strconv.ParseBool``); an unknown name or a bad value is a
``FeatureGateError`` naming it. A KubeSchedulerConfiguration's ``featureGates`` are not imported
(``profiles/import_config.py``): gates are a process setting, given to ``run``.
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["DEFAULT_FEATURE_GATES", "OPPORTUNISTIC_BATCHING", "UPSTREAM_DEFAULTS", "FeatureGateError", "enabled",
           "feature_gates", "parse_feature_gates"]

OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
DEFAULT_FEATURE_GATES: Mapping[str, bool] = {OPPORTUNISTIC_BATCHING: True}
# Upstream 1.37's defaults for the gates ``pkg/scheduler`` reads (``pkg/features/kube_features.go``):
# what ``enabled`` answers for a gate the process was not given.
UPSTREAM_DEFAULTS: Mapping[str, bool] = {
    "NodeDeclaredFeatures": True, OPPORTUNISTIC_BATCHING: True, "SchedulerPopFromBackoffQ": True,
    "SchedulerAsyncAPICalls": False, "DRAPartitionableDevices": True, "DRAConsumableCapacity": True,
    "DRAFractionalCapacityRange": True, "DRADeviceBindingConditions": True, "DRADeviceTaints": True,
    "DRADeviceTaintRules": True, "DRAExtendedResource": True, "DRAPrioritizedList": True, "DRAAdminAccess": True,
    "DRAResourceClaimDeviceStatus": True, "DRASchedulerFilterTimeout": True, "DRAWorkloadResourceClaims": False,
    "PodLevelResources": True, "InPlacePodVerticalScaling": True, "InPlacePodLevelResourcesVerticalScaling": True,
    "NominatedNodeNameForExpectation": True, "GenericWorkload": False, "VolumeLimitScaling": True,
}
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ValueError):
    pass


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``Name=bool[,Name=bool]`` as a map (only the gates given); raises ``FeatureGateError``."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        if name not in DEFAULT_FEATURE_GATES:
            known = ", ".join(sorted(DEFAULT_FEATURE_GATES))
            raise FeatureGateError(f"unrecognized feature gate: {name} (known: {known})")
        if value in _TRUE:
            out[name] = True
        elif value in _FALSE:
            out[name] = False
        else:
            raise FeatureGateError(f"invalid value of {name}={value}, err: strconv.ParseBool: parsing \"{value}\": "
                                   "invalid syntax")
    return out


def enabled(gates: Mapping[str, bool] | None, name: str) -> bool:
    """Whether gate ``name`` is on: its value in ``gates`` (a ``Handle``'s, from ``run --feature-gates``),
    else upstream's default. A name upstream does not have is a programming error (``KeyError``)."""
    if gates is not None and name in gates:
        return gates[name]
    return UPSTREAM_DEFAULTS[name]


def feature_gates(overrides: Mapping[str, bool] | None = None) -> dict[str, bool]:
    """Every gate's value: the defaults, with ``overrides`` applied."""
    return {**DEFAULT_FEATURE_GATES, **(overrides or {})}
