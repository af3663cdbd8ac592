"""The scheduling framework: ``status`` (Status/Code), ``cycle_state``, ``interfaces`` (one
Protocol per extension point), ``diagnosis`` (per-node failures, the FitError text) and ``runtime``
(a compiled profile running its plugins)."""

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, NodeToStatus, fit_error_message
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE, FilterVerdict, PostFilterResult, PreFilterResult
from scheduler.framework.runtime import Framework, num_feasible_nodes_to_find
from scheduler.framework.status import SUCCESS, Code, Status

__all__ = ["MAX_NODE_SCORE", "SUCCESS", "Code", "CycleState", "Diagnosis", "FilterVerdict", "Framework",
           "Handle", "NodeToStatus", "PostFilterResult", "PreFilterResult", "Status", "fit_error_message",
           "num_feasible_nodes_to_find"]
