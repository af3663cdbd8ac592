"""Typed plugin args: pydantic models shaped as upstream's ``kubescheduler.config.k8s.io/v1``
``*Args`` types, so a ``pluginConfig`` entry pasted from a KubeSchedulerConfiguration validates
here with field-precise errors."""

from __future__ import annotations

import itertools
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "ArgsModel",
    "DefaultPreemptionArgs",
    "InterPodAffinityArgs",
    "NodeAffinityArgs",
    "NodeResourcesBalancedAllocationArgs",
    "NodeResourcesFitArgs",
    "PodTopologySpreadArgs",
    "ResourceSpec",
    "ScoringStrategy",
    "UtilizationShapePoint",
]


class ArgsModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class ResourceSpec(ArgsModel):
    name: str = Field(min_length=1)
    weight: int = Field(default=1, ge=1, le=100)


DEFAULT_RESOURCES = (ResourceSpec(name="cpu", weight=1), ResourceSpec(name="memory", weight=1))


class UtilizationShapePoint(ArgsModel):
    utilization: int = Field(ge=0, le=100)
    score: int = Field(ge=0, le=10)


class RequestedToCapacityRatioParam(ArgsModel):
    shape: tuple[UtilizationShapePoint, ...] = Field(min_length=1)

    @field_validator("shape")
    @classmethod
    def _increasing(cls, v: tuple[UtilizationShapePoint, ...]) -> tuple[UtilizationShapePoint, ...]:
        for a, b in itertools.pairwise(v):
            if b.utilization <= a.utilization:
                raise ValueError("utilization values must be sorted in increasing order")
        return v


class ScoringStrategy(ArgsModel):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = Field(
        default=None, alias="requestedToCapacityRatio")

    @model_validator(mode="after")
    def _ratio_needs_shape(self) -> ScoringStrategy:
        if self.type == "RequestedToCapacityRatio" and self.requested_to_capacity_ratio is None:
            raise ValueError("requestedToCapacityRatio is required for type RequestedToCapacityRatio")
        names = [r.name for r in self.resources]
        if len(set(names)) != len(names):
            raise ValueError("resources must not repeat a name")
        return self


class NodeResourcesFitArgs(ArgsModel):
    ignored_resources: tuple[str, ...] = Field(default=(), alias="ignoredResources")
    ignored_resource_groups: tuple[str, ...] = Field(default=(), alias="ignoredResourceGroups")
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy, alias="scoringStrategy")


class NodeResourcesBalancedAllocationArgs(ArgsModel):
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES


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
