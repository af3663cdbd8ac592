"""Upstream's default plugin set (``apis/config/v1/default_plugins.go``), all via multiPoint.

The in-tree volume plugins (VolumeRestrictions, the *Limits plugins, VolumeBinding, VolumeZone)
are not part of kopf-scheduler yet; the order of everything else, and every weight, is upstream's.
"""

from __future__ import annotations

from scheduler.profiles.models import PluginRef, Plugins, PluginSet

__all__ = ["DEFAULT_MULTI_POINT", "default_plugins"]

DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
)


def default_plugins() -> Plugins:
    return Plugins(multi_point=PluginSet(enabled=tuple(PluginRef(name=n, weight=w) for n, w in DEFAULT_MULTI_POINT)))
