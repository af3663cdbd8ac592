"""The ``SchedulingProfile`` spec: one entry of upstream KubeSchedulerConfiguration ``profiles[]``
(``kubescheduler.config.k8s.io/v1``), plus per-profile backoff.

A profile pasted from a kube-scheduler config validates as it is: the same field names
(``schedulerName``, ``plugins.<point>.enabled/disabled``, ``multiPoint``, ``pluginConfig``,
``percentageOfNodesToScore``). These models are also the source of the CRD's OpenAPI schema
(``scheduler.profiles.crd``), so the API server rejects the grossest errors before we see them.

``extenders`` is upstream's top-level ``extenders[]`` (HTTP extenders), per profile here; its
entries are ``ExtenderConfig`` (``extender_config.py``), validated as upstream's
``validateExtenders``.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from scheduler.profiles.extender_config import ExtenderConfig, extenders_errors

__all__ = ["EXTENSION_POINTS", "ExtenderConfig", "PluginConfig", "PluginRef", "PluginSet", "Plugins",
           "SchedulingProfileSpec"]

# Extension points in upstream's field order, as they appear under ``plugins``.
EXTENSION_POINTS = ("preEnqueue", "queueSort", "preFilter", "filter", "postFilter", "preScore", "score",
                    "reserve", "permit", "preBind", "bind", "postBind")
MAX_WEIGHT = 2**31 - 1


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class PluginRef(_Model):
    """A plugin named at an extension point; ``weight`` matters only for Score (0 means 1)."""

    name: str = Field(min_length=1, description="Name of the plugin, or '*' in a disabled list.")
    weight: int | None = Field(default=None, ge=0, le=MAX_WEIGHT,
                               description="Score weight; only used by Score and multiPoint.")


class PluginSet(_Model):
    enabled: tuple[PluginRef, ...] = ()
    disabled: tuple[PluginRef, ...] = ()

    @model_validator(mode="after")
    def _no_star_enable(self) -> PluginSet:
        for i, p in enumerate(self.enabled):
            if p.name == "*":
                raise ValueError(f"enabled[{i}].name: '*' is only allowed in a disabled list")
        return self


class Plugins(_Model):
    pre_enqueue: PluginSet | None = Field(default=None, alias="preEnqueue")
    queue_sort: PluginSet | None = Field(default=None, alias="queueSort")
    pre_filter: PluginSet | None = Field(default=None, alias="preFilter")
    filter: PluginSet | None = None
    post_filter: PluginSet | None = Field(default=None, alias="postFilter")
    pre_score: PluginSet | None = Field(default=None, alias="preScore")
    score: PluginSet | None = None
    reserve: PluginSet | None = None
    permit: PluginSet | None = None
    pre_bind: PluginSet | None = Field(default=None, alias="preBind")
    bind: PluginSet | None = None
    post_bind: PluginSet | None = Field(default=None, alias="postBind")
    multi_point: PluginSet | None = Field(default=None, alias="multiPoint")

    def point(self, name: str) -> PluginSet:
        field = {"preEnqueue": "pre_enqueue", "queueSort": "queue_sort", "preFilter": "pre_filter",
                 "postFilter": "post_filter", "preScore": "pre_score", "preBind": "pre_bind",
                 "postBind": "post_bind", "multiPoint": "multi_point"}.get(name, name)
        value: PluginSet | None = getattr(self, field)
        return value or PluginSet()


class PluginConfig(_Model):
    name: str = Field(min_length=1)
    args: dict[str, Any] = Field(default_factory=dict, json_schema_extra={"x-kubernetes-preserve-unknown-fields": True})


class SchedulingProfileSpec(_Model):
    scheduler_name: str = Field(
        alias="schedulerName", min_length=1, max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        description="Pods with this spec.schedulerName are scheduled by this profile.")
    percentage_of_nodes_to_score: int | None = Field(
        default=None, ge=0, le=100, alias="percentageOfNodesToScore",
        description="Stop searching after this % of nodes were found feasible; 0 or unset: adaptive.")
    pod_initial_backoff_seconds: int = Field(default=1, ge=1, le=3600, alias="podInitialBackoffSeconds")
    pod_max_backoff_seconds: int = Field(default=10, ge=1, le=86400, alias="podMaxBackoffSeconds")
    plugins: Plugins | None = None
    plugin_config: tuple[PluginConfig, ...] = Field(default=(), alias="pluginConfig")
    shadow_of: str | None = Field(
        default=None, alias="shadowOf", min_length=1, max_length=253,
        pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
        description="Make this a shadow of the profile serving this schedulerName: it binds nothing, "
                    "decides alongside it for each of its pods, and counts agreements in status.shadow.")
    extenders: tuple[ExtenderConfig, ...] = Field(
        default=(), description="HTTP extenders this profile calls, as KubeSchedulerConfiguration's extenders[].")

    @model_validator(mode="after")
    def _consistent(self) -> SchedulingProfileSpec:
        if self.pod_max_backoff_seconds < self.pod_initial_backoff_seconds:
            raise ValueError("podMaxBackoffSeconds must be greater than or equal to podInitialBackoffSeconds")
        seen: dict[str, int] = {}
        for i, pc in enumerate(self.plugin_config):
            if pc.name in seen:
                raise ValueError(f"pluginConfig[{i}].name: Duplicate value: {pc.name!r}")
            seen[pc.name] = i
        errors = extenders_errors(self.extenders)
        if errors:
            raise ValueError("; ".join(errors))
        return self
