"""The typed model: pods, nodes and selectors, parsed once from API JSON.

Read ``selectors`` first (the matching semantics), then ``node`` and ``pod``.
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
from scheduler.model.selectors import LabelSelector, NodeSelector, NodeSelectorTerm, Requirement

__all__ = [
    "EXPLAIN_ANNOTATION",
    "ControllerRef",
    "HostPort",
    "LabelSelector",
    "Node",
    "NodeSelector",
    "NodeSelectorTerm",
    "Pod",
    "PodAffinityTerm",
    "PodDisruptionBudget",
    "Requirement",
    "Taint",
    "Toleration",
    "TopologySpreadConstraint",
    "WeightedPodAffinityTerm",
    "parse_node",
    "parse_pdb",
    "parse_pod",
]
