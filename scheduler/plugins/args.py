"""Typed plugin args: pydantic models shaped as upstream's ``kubescheduler.config.k8s.io/v1``
``*Args`` types, so a ``pluginConfig`` entry pasted from a KubeSchedulerConfiguration validates
here with field-precise errors.

Each model applies upstream's v1 defaulting (``apis/config/v1/defaults.go``) and then its validation
(``apis/config/validation/validation_pluginargs.go``), as kube-scheduler does when it loads the
file: so ``weight: 0`` is an unset weight (1), not an error, and ``resources: []`` is the default
list. Errors carry upstream's wording (``Invalid value: 101: resource weight of cpu not in valid
range (0, 100]``) at the element's own path (``scoringStrategy.resources[0].weight``)."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError

from scheduler.model.parsing import parse_go_duration
from scheduler.model.selectors import label_key_errors

__all__ = [
    "ArgsModel",
    "DefaultPreemptionArgs",
    "DynamicResourcesArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
    "VolumeBindingArgs",
]


class ArgsModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def _invalid(errors: Sequence[tuple[tuple[str | int, ...], str, object]], title: str) -> ValidationError:
    """A pydantic error with one entry per ``(loc, message, input)``: a validator raising it names
    the exact element (``resources[1].weight``), as upstream's ``field.ErrorList`` does, and
    pydantic prefixes the location of the field the validator runs on."""
    return ValidationError.from_exception_data(title, [
        InitErrorDetails(type=PydanticCustomError("value_error", "{msg}", {"msg": msg}), loc=loc, input=value)
        for loc, msg, value in errors])


def _go(value: object) -> str:
    """A value as ``field.Invalid`` prints it: strings quoted, numbers bare."""
    return f'"{value}"' if isinstance(value, str) else str(value)


class ResourceSpec(ArgsModel):
    """``ResourceSpec``. The weight's range depends on the plugin (NodeResourcesFit: (0, 100];
    NodeResourcesBalancedAllocation: exactly 1), so the args that hold the list check it."""

    name: str = Field(min_length=1)
    weight: int = 1

    @field_validator("weight")
    @classmethod
    def _zero_means_one(cls, v: int) -> int:
        # v1 defaulting (SetDefaults_NodeResourcesFitArgs / ..BalancedAllocationArgs): the field is
        # ``omitempty``, so an explicit 0 is an unset weight, and an unset weight is 1.
        return v or 1


DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))
SCORING_STRATEGY_TYPES = ("LeastAllocated", "MostAllocated", "RequestedToCapacityRatio")
MAX_CUSTOM_PRIORITY_SCORE = 10
MAX_UTILIZATION = 100


def _default_if_empty(v: object) -> object:
    # v1 defaulting: no resources (absent, null or []) means cpu and memory, weight 1.
    return DEFAULT_RESOURCES if v is None or (isinstance(v, list | tuple) and not v) else v


# The resource list of NodeResourcesFit's scoring strategy and of NodeResourcesBalancedAllocation,
# both defaulted by v1 alike before their own checks.
DefaultedResources = Annotated[tuple[ResourceSpec, ...], BeforeValidator(_default_if_empty)]


class UtilizationShapePoint(ArgsModel):
    """A point of a ``requestedToCapacityRatio`` shape; the shape checks the ranges, so that every
    bad point is reported at its index (``validateFunctionShape``)."""

    utilization: int
    score: int


def _shape_errors(v: Sequence[UtilizationShapePoint]) -> list[tuple[tuple[str | int, ...], str, object]]:
    """Upstream's ``validateFunctionShape``: at least one point; utilizations strictly increasing
    (the first offender only); each utilization in [0, 100] and score in [0, 10]. Paths are
    relative to the shape."""
    if not v:
        return [((), "Required value: at least one point must be specified", v)]
    errors: list[tuple[tuple[str | int, ...], str, object]] = []
    for i, (a, b) in enumerate(itertools.pairwise(v), start=1):
        if a.utilization >= b.utilization:
            errors.append(((i, "utilization"),
                           f"Invalid value: {b.utilization}: values must be sorted in increasing order",
                           b.utilization))
            break
    for i, p in enumerate(v):
        if not 0 <= p.utilization <= MAX_UTILIZATION:
            errors.append(((i, "utilization"),
                           f"Invalid value: {p.utilization}: not in valid range [0, {MAX_UTILIZATION}]",
                           p.utilization))
        if not 0 <= p.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.append(((i, "score"),
                           f"Invalid value: {p.score}: not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
                           p.score))
    return errors


class RequestedToCapacityRatioParam(ArgsModel):
    shape: tuple[UtilizationShapePoint, ...] = ()

    @field_validator("shape")
    @classmethod
    def _valid_shape(cls, v: tuple[UtilizationShapePoint, ...]) -> tuple[UtilizationShapePoint, ...]:
        """``validateFunctionShape`` (``_shape_errors``).

        Upstream builds these paths from ``scoringStrategy.shape``, which is not where the shape is
        written (``scoringStrategy.requestedToCapacityRatio.shape``); ours name the field the user
        wrote, since a profile's status must point at the exact field."""
        errors = _shape_errors(v)
        if errors:
            raise _invalid(errors, "shape")
        return v


class ScoringStrategy(ArgsModel):
    """``ScoringStrategy``, validated as upstream's ``ValidateNodeResourcesFitArgs`` after v1
    defaulting: a strategy given without ``type`` is an unsupported ``""`` (only an absent
    ``scoringStrategy`` defaults to LeastAllocated); weights in (0, 100]; resources may repeat (upstream
    does not forbid it: a repeated resource counts twice)."""

    type: str = Field(default="", validate_default=True)
    resources: DefaultedResources = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, alias="requestedToCapacityRatio")

    @field_validator("type")
    @classmethod
    def _supported(cls, v: str) -> str:
        if v not in SCORING_STRATEGY_TYPES:
            supported = ", ".join(f'"{t}"' for t in SCORING_STRATEGY_TYPES)
            raise _invalid([((), f"Unsupported value: {_go(v)}: supported values: {supported}", v)], "type")
        return v

    @field_validator("resources")
    @classmethod
    def _weights(cls, v: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
        # validateResources: every resource out of range is reported.
        errors: list[tuple[tuple[str | int, ...], str, object]] = [
            ((i, "weight"), f"Invalid value: {r.weight}: resource weight of {r.name} not in valid range (0, 100]",
             r.weight)
            for i, r in enumerate(v) if not 0 < r.weight <= 100]
        if errors:
            raise _invalid(errors, "resources")
        return v

    @model_validator(mode="after")
    def _ratio_needs_shape(self) -> ScoringStrategy:
        # Upstream dereferences the missing parameter in NewFit (a nil-pointer panic); say so instead.
        if self.type == "RequestedToCapacityRatio" and self.requested_to_capacity_ratio is None:
            raise _invalid([(("requestedToCapacityRatio",),
                             "Required value: required for type RequestedToCapacityRatio", None)], "ScoringStrategy")
        return self


def _label_name_errors(value: str) -> list[str]:
    """``metav1validation.ValidateLabelName`` (``IsQualifiedName``): the label-key rules, with its
    own wording for too many slashes."""
    return [e.replace("a valid label key ", "a qualified name ", 1) for e in label_key_errors(value)]


class NodeResourcesFitArgs(ArgsModel):
    ignored_resources: tuple[str, ...] = Field(default=(), alias="ignoredResources")
    ignored_resource_groups: tuple[str, ...] = Field(default=(), alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(
        default_factory=lambda: ScoringStrategy(type="LeastAllocated"), alias="scoringStrategy")

    @field_validator("ignored_resources")
    @classmethod
    def _qualified_names(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        errors: list[tuple[tuple[str | int, ...], str, object]] = [
            ((i, ), f"Invalid value: {_go(r)}: {e}", r) for i, r in enumerate(v) for e in _label_name_errors(r)]
        if errors:
            raise _invalid(errors, "ignoredResources")
        return v

    @field_validator("ignored_resource_groups")
    @classmethod
    def _groups(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        errors: list[tuple[tuple[str | int, ...], str, object]] = []
        for i, g in enumerate(v):
            if "/" in g:
                errors.append(((i,), f"Invalid value: {_go(g)}: resource group name can't contain '/'", g))
            errors += [((i,), f"Invalid value: {_go(g)}: {e}", g) for e in _label_name_errors(g)]
        if errors:
            raise _invalid(errors, "ignoredResourceGroups")
        return v


class NodeResourcesBalancedAllocationArgs(ArgsModel):
    """``ValidateNodeResourcesBalancedAllocationArgs`` after v1 defaulting: no resources means cpu
    and memory; a name may appear once; every weight must be 1 (0 is defaulted to 1 first)."""

    resources: DefaultedResources = DEFAULT_RESOURCES

    @field_validator("resources")
    @classmethod
    def _unique_and_unweighted(cls, v: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
        errors: list[tuple[tuple[str | int, ...], str, object]] = []
        seen: set[str] = set()
        for i, r in enumerate(v):
            if r.name in seen:
                errors.append(((i, "name"), f"Duplicate value: {_go(r.name)}", r.name))
            seen.add(r.name)
            if r.weight != 1:
                errors.append(((i, "weight"), f"Invalid value: {r.weight}: must be 1", r.weight))
        if errors:
            raise _invalid(errors, "resources")
        return v


class NodeAffinityArgs(ArgsModel):
    # A v1.NodeAffinity, parsed by the plugin with the pod model's parser.
    added_affinity: dict[str, Any] | None = Field(default=None, alias="addedAffinity")


class PodTopologySpreadArgs(ArgsModel):
    default_constraints: tuple[dict[str, Any], ...] = Field(default=(), alias="defaultConstraints")
    defaulting_type: Literal["System", "List"] = Field(default="System", alias="defaultingType")

    @model_validator(mode="after")
    def _system_has_no_list(self) -> PodTopologySpreadArgs:
        if self.defaulting_type == "System" and self.default_constraints:
            raise ValueError("when .defaultingType is \"System\", .defaultConstraints must be empty")
        return self


class InterPodAffinityArgs(ArgsModel):
    hard_pod_affinity_weight: int = Field(default=1, ge=0, le=100, alias="hardPodAffinityWeight")
    ignore_preferred_terms_of_existing_pods: bool = Field(
        default=False, alias="ignorePreferredTermsOfExistingPods")


class DefaultPreemptionArgs(ArgsModel):
    min_candidate_nodes_percentage: int = Field(default=10, ge=0, le=100, alias="minCandidateNodesPercentage")
    min_candidate_nodes_absolute: int = Field(default=100, ge=0, alias="minCandidateNodesAbsolute")

    @model_validator(mode="after")
    def _not_both_zero(self) -> DefaultPreemptionArgs:
        if self.min_candidate_nodes_percentage == 0 and self.min_candidate_nodes_absolute == 0:
            raise ValueError("minCandidateNodesPercentage and minCandidateNodesAbsolute cannot both be zero")
        return self


def _gate(info: ValidationInfo, name: str, default: bool = True) -> bool:
    """A feature gate as a validation sees it: the validation context's value (the process's
    ``--feature-gates``, ``profiles/compile.py``), else upstream's 1.37 default."""
    ctx = info.context
    if isinstance(ctx, dict) and name in ctx:
        return bool(ctx[name])
    return default


def _duration(v: object, field: str) -> float | None:
    """A ``metav1.Duration`` (``"10s"``, ``"1m30s"``) in seconds; None for an absent one."""
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        raise _invalid([((), f"Invalid value: {_go(v)}: must be a duration string such as \"10s\"", v)], field)
    if not isinstance(v, str):
        return float(v)
    try:
        return parse_go_duration(v)
    except ValueError as e:
        raise _invalid([((), str(e), v)], field) from None


class DynamicResourcesArgs(ArgsModel):
    """``DynamicResourcesArgs``: ``filterTimeout`` (how long Filter may take per node before it gives
    up, 0: no limit) and ``bindingTimeout`` (how long PreBind waits for a device's binding
    conditions), as ``metav1.Duration`` strings. v1 defaulting (``SetDefaults_DynamicResourcesArgs``)
    gives 10s and 10m when their gates are on; ``ValidateDynamicResourcesArgs`` then refuses a
    negative ``filterTimeout`` and a ``bindingTimeout`` under one second, and either field at all
    when its gates are off (DRASchedulerFilterTimeout; DRADeviceBindingConditions and
    DRAResourceClaimDeviceStatus), with upstream's messages. Values are seconds here."""

    filter_timeout: float | None = Field(default=None, alias="filterTimeout", validate_default=True)
    binding_timeout: float | None = Field(default=None, alias="bindingTimeout", validate_default=True)

    @field_validator("filter_timeout", mode="before")
    @classmethod
    def _filter_timeout(cls, v: object, info: ValidationInfo) -> float | None:
        seconds = _duration(v, "filterTimeout")
        if not _gate(info, "DRASchedulerFilterTimeout"):
            if seconds is not None:
                raise _invalid([((), "Forbidden: DRASchedulingFilterTimeout feature gate is disabled", v)],
                               "filterTimeout")
            return None
        if seconds is None:
            return 10.0
        if seconds < 0:
            raise _invalid([((), f"Invalid value: {_go(v)}: must be zero or positive", v)], "filterTimeout")
        return seconds

    @field_validator("binding_timeout", mode="before")
    @classmethod
    def _binding_timeout(cls, v: object, info: ValidationInfo) -> float | None:
        seconds = _duration(v, "bindingTimeout")
        if not (_gate(info, "DRADeviceBindingConditions") and _gate(info, "DRAResourceClaimDeviceStatus")):
            if seconds is not None:
                raise _invalid([((), "Forbidden: DRADeviceBindingConditions or DRAResourceClaimDeviceStatus "
                                     "feature gate is disabled", v)], "bindingTimeout")
            return None
        if seconds is None:
            return 600.0
        if seconds < 1:
            raise _invalid([((), f"Invalid value: {_go(v)}: must be at least 1 second", v)], "bindingTimeout")
        return seconds


# The StorageCapacityScoring feature gate's default: alpha and off in 1.33-1.36, beta and on from
# 1.37 (pkg/features). kopf-scheduler has no feature gates; it follows the newest upstream default.
# Validating args with ``context={STORAGE_CAPACITY_SCORING_GATE: False}`` gives the gate-off answers.
STORAGE_CAPACITY_SCORING = True
STORAGE_CAPACITY_SCORING_GATE = "StorageCapacityScoring"
# SetDefaults_VolumeBindingArgs with the gate on: prefer the node with the most free capacity.
DEFAULT_VOLUME_BINDING_SHAPE = (UtilizationShapePoint(utilization=0, score=MAX_CUSTOM_PRIORITY_SCORE),
                                UtilizationShapePoint(utilization=MAX_UTILIZATION, score=0))


def storage_capacity_scoring(info: ValidationInfo | None = None) -> bool:
    """The gate as a validation sees it: the default, unless the caller's context says otherwise."""
    ctx = info.context if info is not None else None
    if isinstance(ctx, dict) and STORAGE_CAPACITY_SCORING_GATE in ctx:
        return bool(ctx[STORAGE_CAPACITY_SCORING_GATE])
    return STORAGE_CAPACITY_SCORING


class VolumeBindingArgs(ArgsModel):
    """``VolumeBindingArgs``: v1 defaulting (``SetDefaults_VolumeBindingArgs``), then
    ``ValidateVolumeBindingArgsWithOptions``.

    ``bindTimeoutSeconds`` defaults to 600 and must not be negative (0 is valid: PreBind then fails
    at once whenever it has a volume to wait for, as upstream's zero-length poll does). ``shape``
    (utilization 0-100 -> score 0-10 points of the storage-capacity Score) is defaulted, when
    absent or empty and StorageCapacityScoring is on, to ``{0: 10}, {100: 0}``, and then validated
    as ``validateFunctionShape``; with the gate off any ``shape`` given (even ``[]``) is refused."""

    bind_timeout_seconds: int = Field(default=600, alias="bindTimeoutSeconds")
    shape: tuple[UtilizationShapePoint, ...] | None = Field(default=None, validate_default=True)

    @field_validator("bind_timeout_seconds", mode="before")
    @classmethod
    def _bind_timeout_defaulted(cls, v: object) -> object:
        return 600 if v is None else v      # a null pointer is defaulted like an absent field

    @field_validator("bind_timeout_seconds")
    @classmethod
    def _not_negative(cls, v: int) -> int:
        if v < 0:
            raise _invalid([((), f"Invalid value: {v}: invalid BindTimeoutSeconds, should not be a negative value",
                             v)], "bindTimeoutSeconds")
        return v

    @field_validator("shape")
    @classmethod
    def _shape(cls, v: tuple[UtilizationShapePoint, ...] | None, info: ValidationInfo
               ) -> tuple[UtilizationShapePoint, ...] | None:
        if storage_capacity_scoring(info):
            if not v:
                return DEFAULT_VOLUME_BINDING_SHAPE
            errors = _shape_errors(v)
            if errors:
                raise _invalid(errors, "shape")
            return v
        if v is not None:
            # field.Invalid renders a slice as JSON; the internal type has no json tags.
            raw = json.dumps([{"Utilization": p.utilization, "Score": p.score} for p in v], separators=(",", ":"))
            raise _invalid([((), f"Invalid value: {raw}: unexpected field `shape`, remove it or turn on the "
                                 f"feature gate {STORAGE_CAPACITY_SCORING_GATE}", v)], "shape")
        return v
