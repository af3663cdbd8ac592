"""The typed model: pods, nodes and selectors, parsed once from API JSON.

Read ``selectors`` first (the matching semantics), then ``node`` and ``pod``; ``volumes`` holds
a pod's ``spec.volumes`` and the storage kinds the volume plugins read; ``podgroup`` the PodGroups
that pods join through ``Pod.scheduling_group``.
"""

from scheduler.model.node import Node, Taint, parse_node
from scheduler.model.pdb import PodDisruptionBudget, parse_pdb
from scheduler.model.pod import (
    EXPLAIN_ANNOTATION,
    ControllerRef,
    HostPort,
    Pod,
    PodAffinityTerm,
    Toleration,
    TopologySpreadConstraint,
    WeightedPodAffinityTerm,
    parse_pod,
)
from scheduler.model.podgroup import PodGroup, PodGroupCondition, parse_pod_group
from scheduler.model.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement
from scheduler.model.volumes import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    PodVolume,
    StorageClass,
)

__all__ = [
    "EXPLAIN_ANNOTATION",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "ControllerRef",
    "HostPort",
    "LabelSelector",
    "Node",
    "NodeSelector",
    "NodeSelectorTerm",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "PodGroup",
    "PodGroupCondition",
    "PodVolume",
    "Requirement",
    "StorageClass",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "parse_node",
    "parse_pdb",
    "parse_pod",
    "parse_pod_group",
]
