"""The plugin registry: in-tree plugins plus out-of-tree ones from the entry-point group
``kopf_scheduler.plugins``.

An out-of-tree entry point is named after the plugin and loads either a ``PluginSpec`` or a
factory ``(args, handle) -> plugin``; a factory may carry an ``args_model`` attribute (a pydantic
model) to have its ``pluginConfig`` args validated with field-precise errors. For example, in the
plugin package's ``pyproject.toml``::

    [project.entry-points."kopf_scheduler.plugins"]
    GpuFirst = "my_plugins.gpu:new"
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

from pydantic import BaseModel

from scheduler.errors import UnknownPluginError
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import Plugin
from scheduler.plugins import (
    defaultbinder,
    defaultpreemption,
    dynamicresources,
    gangscheduling,
    imagelocality,
    interpodaffinity,
    nodeaffinity,
    nodedeclaredfeatures,
    nodename,
    nodeports,
    noderesources,
    nodeunschedulable,
    nodevolumelimits,
    podtopologyspread,
    queuesort,
    schedulinggates,
    tainttoleration,
    volumebinding,
    volumerestrictions,
    volumezone,
)
from scheduler.plugins.args import (
    DefaultPreemptionArgs,
    DynamicResourcesArgs,
    InterPodAffinityArgs,
    NodeAffinityArgs,
    NodeResourcesBalancedAllocationArgs,
    NodeResourcesFitArgs,
    PodTopologySpreadArgs,
    VolumeBindingArgs,
)

__all__ = ["ENTRY_POINT_GROUP", "IN_TREE", "PluginSpec", "Registry"]

ENTRY_POINT_GROUP = "kopf_scheduler.plugins"
log = logging.getLogger(__name__)
Factory = Callable[[Any, Handle], Plugin]


@dataclass(frozen=True, slots=True)
class PluginSpec:
    name: str
    factory: Factory
    args_model: type[BaseModel] | None = None


IN_TREE: dict[str, PluginSpec] = {s.name: s for s in (
    PluginSpec(queuesort.NAME, queuesort.new),
    PluginSpec(schedulinggates.NAME, schedulinggates.new),
    PluginSpec(nodeunschedulable.NAME, nodeunschedulable.new),
    PluginSpec(nodename.NAME, nodename.new),
    PluginSpec(tainttoleration.NAME, tainttoleration.new),
    PluginSpec(nodeaffinity.NAME, nodeaffinity.new, NodeAffinityArgs),
    PluginSpec(nodeports.NAME, nodeports.new),
    PluginSpec(noderesources.FIT_NAME, noderesources.new_fit, NodeResourcesFitArgs),
    PluginSpec(volumerestrictions.NAME, volumerestrictions.new),
    PluginSpec(nodevolumelimits.NAME, nodevolumelimits.new),
    PluginSpec(volumebinding.NAME, volumebinding.new, VolumeBindingArgs),
    PluginSpec(volumezone.NAME, volumezone.new),
    PluginSpec(dynamicresources.NAME, dynamicresources.new, DynamicResourcesArgs),
    PluginSpec(podtopologyspread.NAME, podtopologyspread.new, PodTopologySpreadArgs),
    PluginSpec(interpodaffinity.NAME, interpodaffinity.new, InterPodAffinityArgs),
    PluginSpec(defaultpreemption.NAME, defaultpreemption.new, DefaultPreemptionArgs),
    PluginSpec(noderesources.BALANCED_NAME, noderesources.new_balanced, NodeResourcesBalancedAllocationArgs),
    PluginSpec(imagelocality.NAME, imagelocality.new),
    PluginSpec(defaultbinder.NAME, defaultbinder.new),
    PluginSpec(nodedeclaredfeatures.NAME, nodedeclaredfeatures.new),
    PluginSpec(gangscheduling.NAME, gangscheduling.new),
)}


def _load_entry_points() -> dict[str, PluginSpec]:
    out: dict[str, PluginSpec] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            obj = ep.load()
        except Exception as e:  # a broken plugin package must not take the scheduler down
            log.error("cannot load out-of-tree plugin %s from %s: %s", ep.name, ep.value, e)
            continue
        if isinstance(obj, PluginSpec):
            spec = obj
        elif callable(obj):
            spec = PluginSpec(ep.name, obj, getattr(obj, "args_model", None))
        else:
            log.error("out-of-tree plugin %s is neither a PluginSpec nor a factory", ep.name)
            continue
        if spec.name in IN_TREE:
            log.error("out-of-tree plugin %s shadows an in-tree plugin; ignored", spec.name)
            continue
        out[spec.name] = spec
    return out


class Registry:
    def __init__(self, extra: Mapping[str, PluginSpec] | None = None, *, load_entry_points: bool = True) -> None:
        self._specs: dict[str, PluginSpec] = dict(IN_TREE)
        if load_entry_points:
            self._specs.update(_load_entry_points())
        if extra:
            self._specs.update(extra)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def get(self, name: str, field: str = "") -> PluginSpec:
        spec = self._specs.get(name)
        if spec is None:
            raise UnknownPluginError(f"plugin {name!r} is not registered "
                                     f"(known: {', '.join(sorted(self._specs))})", field=field)
        return spec

    def names(self) -> list[str]:
        return sorted(self._specs)
