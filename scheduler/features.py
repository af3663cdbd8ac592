"""Feature gates: upstream's ``--feature-gates Name=bool[,Name=bool]``, for every gate kube-scheduler
1.37 has, with upstream's stage, default and lock state.

``GATES`` is the table, in upstream's order (``staging/src/k8s.io/kube-scheduler/pkg/features/
kube_features.go``, ``defaultVersionedKubernetesFeatureGates`` at emulation version 1.37: each gate's
newest spec not after 1.37). ``built`` says whether kopf-scheduler has the behaviour the gate's
*non-default* value asks for:

* a gate locked to its default (GA, ``LockToDefault``) refuses the other value with upstream's
  ``cannot set feature gate X to V, feature is locked to D`` (``component-base/featuregate/
  feature_gate.go``, ``SetFromMap``);
* an off-by-default gate whose behaviour is not built refuses ``=true`` with a message naming it,
  rather than accept a switch that would change nothing;
* a default-on gate accepts ``=false``: the component that follows it reads
  ``enabled(handle.feature_gates, Name)`` (``framework/handle.py``).

``parse_feature_gates`` reads the flag's value as ``featuregate.Set`` does (names are
case-sensitive, values are Go's ``strconv.ParseBool``). A KubeSchedulerConfiguration's
``featureGates`` are not imported (``profiles/import_config.py``): gates are a process setting,
given to ``run``, ``simulate``, ``explain`` and ``bench``. The README's gate table
(``docs/running.md``) lists the same rows.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

__all__ = ["DEFAULT_FEATURE_GATES", "GATES", "NODE_DECLARED_FEATURES", "OPPORTUNISTIC_BATCHING", "UPSTREAM_DEFAULTS",
           "FeatureGateError", "Gate", "enabled", "feature_gates", "parse_feature_gates"]

OPPORTUNISTIC_BATCHING = "OpportunisticBatching"
NODE_DECLARED_FEATURES = "NodeDeclaredFeatures"


@dataclass(frozen=True, slots=True)
class Gate:
    """One row of upstream's table: the gate's 1.37 ``stage`` (Alpha, Beta, GA), ``default``,
    whether it is ``locked`` to that default, and whether kopf-scheduler has ``built`` what the
    non-default value turns on (always true for a locked gate: it cannot be switched)."""

    name: str
    stage: str
    default: bool
    locked: bool = False
    built: bool = True


def _alpha(name: str, *, built: bool = False) -> Gate:
    return Gate(name, "Alpha", False, built=built)


GATES: tuple[Gate, ...] = (
    _alpha("CompositePodGroup"),
    Gate("DRAAdminAccess", "GA", True, locked=True),
    Gate("DRAConsumableCapacity", "Beta", True),
    _alpha("DRADerivedAttributes"),
    Gate("DRADeviceBindingConditions", "Beta", True),
    _alpha("DRADeviceCompatibilityGroups"),
    # GA in 1.37 but not locked until 1.38 (upstream's comment on both DeviceTaint gates).
    Gate("DRADeviceTaintRules", "GA", True),
    Gate("DRADeviceTaints", "GA", True),
    Gate("DRAExtendedResource", "GA", True, locked=True),
    # Two 1.37 specs: off, or on with MinCompatibilityVersion 1.37; at 1.37 the second applies.
    Gate("DRAFractionalCapacityRange", "Beta", True),
    _alpha("DRAListTypeAttributes"),
    _alpha("DRANodeAllocatableResources"),
    _alpha("DRAOptionalNodeOperations"),
    Gate("DRAPartitionableDevices", "Beta", True),
    Gate("DRAPrioritizedList", "GA", True, locked=True),
    Gate("DRAResourceClaimDeviceStatus", "GA", True, locked=True),
    Gate("DRASchedulerFilterTimeout", "Beta", True),
    Gate("DRAWorkloadResourceClaims", "Beta", False, built=False),
    Gate("DynamicResourceAllocation", "GA", True, locked=True),
    Gate("GenericWorkload", "Beta", False),
    Gate("InPlacePodLevelResourcesVerticalScaling", "Beta", True),
    Gate("InPlacePodVerticalScaling", "GA", True, locked=True),
    _alpha("InPlacePodVerticalScalingSchedulerPreemption"),
    _alpha("InterPodAffinityHostnameFastPath"),
    Gate("MatchLabelKeysInPodTopologySpread", "Beta", True),
    Gate(NODE_DECLARED_FEATURES, "GA", True, locked=True),
    Gate("NodeInclusionPolicyInPodTopologySpread", "GA", True, locked=True),
    Gate("NominatedNodeNameForExpectation", "Beta", True),
    Gate(OPPORTUNISTIC_BATCHING, "Beta", True),
    _alpha("PodGroupPreemptionPolicy", built=True),
    Gate("PodLevelResources", "Beta", True),
    Gate("SchedulerAsyncAPICalls", "Beta", False, built=False),
    Gate("SchedulerAsyncPreemption", "Beta", True),
    Gate("SchedulerPopFromBackoffQ", "Beta", True),
    _alpha("SchedulerPreQueueingHints"),
    Gate("StorageCapacityScoring", "Beta", True),
    _alpha("TaintTolerationComparisonOperators"),
    _alpha("TopologyAwareWorkloadScheduling"),
    Gate("VolumeAttributesClass", "GA", True, locked=True),
    Gate("VolumeLimitScaling", "Beta", True),
)
_BY_NAME: Mapping[str, Gate] = {g.name: g for g in GATES}
# Every gate's 1.37 default: what ``enabled`` answers for a gate the process was not given.
UPSTREAM_DEFAULTS: Mapping[str, bool] = {g.name: g.default for g in GATES}
DEFAULT_FEATURE_GATES: Mapping[str, bool] = UPSTREAM_DEFAULTS
_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


class FeatureGateError(ValueError):
    pass


def _bool(name: str, value: str) -> bool:
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise FeatureGateError(f"invalid value of {name}={value}, err: strconv.ParseBool: parsing \"{value}\": "
                           "invalid syntax")


def _check(gate: Gate, value: bool) -> None:
    """Refuse a value the gate cannot take: upstream's lock, or behaviour kopf-scheduler lacks."""
    if value == gate.default:
        return
    if gate.locked:
        # component-base/featuregate/feature_gate.go (SetFromMap).
        raise FeatureGateError(f"cannot set feature gate {gate.name} to {str(value).lower()}, "
                               f"feature is locked to {str(gate.default).lower()}")
    if not gate.built:
        raise FeatureGateError(f"cannot set feature gate {gate.name} to true: kopf-scheduler has not built "
                               f"this {gate.stage.lower()} feature yet, so it stays off")


def parse_feature_gates(text: str) -> dict[str, bool]:
    """``Name=bool[,Name=bool]`` as a map (only the gates given); raises ``FeatureGateError`` for an
    unknown name, a bad value, a locked gate's other value, or an unbuilt gate turned on."""
    out: dict[str, bool] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        name, sep, value = part.partition("=")
        name, value = name.strip(), value.strip()
        if not sep:
            raise FeatureGateError(f"missing bool value for {name}")
        gate = _BY_NAME.get(name)
        if gate is None:
            raise FeatureGateError(f"unrecognized feature gate: {name}")
        on = _bool(name, value)
        _check(gate, on)
        out[name] = on
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
