"""The scheduling framework: ``status`` (Status/Code), ``cycle_state``, ``types`` (cluster events and
queued pod info, shared with the queue), ``interfaces`` (one Protocol per extension point and per
optional capability), ``handle`` (what a plugin factory gets), ``diagnosis`` (per-node failures, the
FitError text), ``plugin_lists`` (a profile's checked, typed plugin lists per extension point),
``waiting_pods`` (pods a Permit plugin holds) and ``runtime`` (a compiled profile running its
plugins).

Out-of-tree plugin authors import the extension-point Protocols from here. The framework imports
neither the queue nor the profiles; they import it.
"""

from scheduler.framework.cycle_state import CycleState, StateMissingError
from scheduler.framework.diagnosis import Diagnosis, NodeToStatus, fit_error_message
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    MAX_NODE_SCORE,
    BatchFilterPlugin,
    BatchScorePlugin,
    BindPlugin,
    EnqueueExtensions,
    FilterConfigured,
    FilterPlugin,
    FilterRunner,
    FilterVerdict,
    NodeLocalFilter,
    PermitPlugin,
    Plugin,
    PodNominator,
    PodReadingPreFilter,
    PostBindPlugin,
    PostFilterContext,
    PostFilterPlugin,
    PostFilterResult,
    PreBindPlugin,
    PreBindPreFlightPlugin,
    PreBindWaiter,
    PreEnqueuePlugin,
    PreFilterPlugin,
    PreFilterResult,
    PreScorePlugin,
    QueueSortPlugin,
    ReservePlugin,
    ScoreExtensions,
    ScoreExtensionsPlugin,
    ScorePlugin,
    SignPlugin,
    UniformScorePlugin,
    implements,
)
from scheduler.framework.runtime import Framework, FrameworkError, num_feasible_nodes_to_find
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.framework.types import ClusterEvent, ClusterEventWithHint, QueuedPodInfo

__all__ = [
    "MAX_NODE_SCORE", "SUCCESS", "BatchFilterPlugin", "BatchScorePlugin", "BindPlugin", "ClusterEvent",
    "ClusterEventWithHint", "Code", "CycleState", "Diagnosis", "EnqueueExtensions", "FilterConfigured", "FilterPlugin",
    "FilterRunner",
    "FilterVerdict", "Framework", "FrameworkError", "Handle", "NodeLocalFilter", "NodeToStatus", "PermitPlugin",
    "Plugin", "PodNominator", "PodReadingPreFilter", "PostBindPlugin", "PostFilterContext", "PostFilterPlugin",
    "PostFilterResult", "PreBindPlugin", "PreBindPreFlightPlugin", "PreBindWaiter",
    "PreEnqueuePlugin", "PreFilterPlugin", "PreFilterResult", "PreScorePlugin",
    "QueueSortPlugin", "QueuedPodInfo", "ReservePlugin", "ScoreExtensions", "ScoreExtensionsPlugin", "ScorePlugin",
    "SignPlugin", "StateMissingError", "Status", "UniformScorePlugin", "fit_error_message", "implements",
    "num_feasible_nodes_to_find",
]
