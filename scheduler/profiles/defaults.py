"""Upstream's default plugin set (``apis/config/v1/default_plugins.go``), all via multiPoint.

Upstream's set also has the volume plugins (VolumeRestrictions, the *Limits plugins, VolumeBinding,
VolumeZone). VolumeRestrictions, NodeVolumeLimits, VolumeZone and VolumeBinding (PreFilter, Filter
and Reserve; no PreBind yet) are registered (issue #18) and a profile may enable them, but they stay
out of the default set until the operator feeds their ``VolumeStore`` (``Handle.volumes``): with an empty store
a pod with a claim would be UnschedulableAndUnresolvable everywhere (the claim reads as not found).
EBSLimits, GCEPDLimits and AzureDiskLimits are not registered. The order of everything
else, and every weight, is upstream's.
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
