"""Upstream's default plugin set (``apis/config/v1/default_plugins.go``), all via multiPoint, in
upstream's order and with upstream's weights.

Upstream's list also names EBSLimits, GCEPDLimits and AzureDiskLimits, the in-tree volume limit
plugins; they are not registered here: CSI migration is GA for all three, and NodeVolumeLimits
counts migrated in-tree volumes against the CSI driver's limit (``CSINode.allocatable``), which is
where a node's attach limit lives on a current cluster. DynamicResources (DRA, GA and on since
1.34) sits where upstream's list has it, right before DefaultPreemption: when no node fits, it is
better to deallocate an idle ResourceClaim first than to evict a pod that may be doing useful work.
Upstream lists it without a weight, as here (None): since its Score (1.35, prioritized lists) it is
a Score plugin too, and an unset multiPoint weight is 1 (upstream's ``getScoreWeights``;
``scheduler.profiles.compile``). NodeDeclaredFeatures (GA and locked on in 1.37) is appended after
DefaultBinder, as upstream's ``applyFeatureGates`` appends it when its gate is on; GangScheduling is
appended the same way when ``GenericWorkload`` is on (it is off by default, as upstream's gate).
"""

from __future__ import annotations

from collections.abc import Mapping

from scheduler import features
from scheduler.profiles.models import PluginRef, Plugins, PluginSet

__all__ = ["DEFAULT_MULTI_POINT", "GATED_MULTI_POINT", "default_plugins"]

DEFAULT_MULTI_POINT: tuple[tuple[str, int | None], ...] = (
    ("SchedulingGates", None),
    ("PrioritySort", None),
    ("NodeUnschedulable", None),
    ("NodeName", None),
    ("TaintToleration", 3),
    ("NodeAffinity", 2),
    ("NodePorts", None),
    ("NodeResourcesFit", 1),
    ("VolumeRestrictions", None),
    ("NodeVolumeLimits", None),
    ("VolumeBinding", None),
    ("VolumeZone", None),
    ("PodTopologySpread", 2),
    ("InterPodAffinity", 2),
    ("DynamicResources", None),
    ("DefaultPreemption", None),
    ("NodeResourcesBalancedAllocation", 1),
    ("ImageLocality", 1),
    ("DefaultBinder", None),
    ("NodeDeclaredFeatures", None),
)


# Appended by upstream's applyFeatureGates (pkg/scheduler/apis/config/v1/default_plugins.go) when
# their gate is on.
GATED_MULTI_POINT: tuple[tuple[str, str], ...] = (("GenericWorkload", "GangScheduling"),)


def default_plugins(gates: Mapping[str, bool] | None = None) -> Plugins:
    """The default profile's plugins with the process's feature gates (upstream's defaults when None)."""
    names = list(DEFAULT_MULTI_POINT) + [(n, None) for gate, n in GATED_MULTI_POINT if features.enabled(gates, gate)]
    return Plugins(multi_point=PluginSet(enabled=tuple(PluginRef(name=n, weight=w) for n, w in names)))
