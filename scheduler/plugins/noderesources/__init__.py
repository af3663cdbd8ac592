"""The node-resources plugins, as upstream's ``pkg/scheduler/framework/plugins/noderesources``:
``fit`` (NodeResourcesFit: Filter on free allocatable, and the LeastAllocated, MostAllocated and
RequestedToCapacityRatio scoring strategies), ``balanced_allocation``
(NodeResourcesBalancedAllocation) and ``resource_allocation``, what both read of a node's
allocatable and requested amounts (DRA-backed extended resources and int64-safe arithmetic
included). Start with ``fit``."""

from scheduler.plugins.noderesources.balanced_allocation import (
    BALANCED_NAME,
    NodeResourcesBalancedAllocation,
    new_balanced,
)
from scheduler.plugins.noderesources.fit import (
    FIT_NAME,
    REASON_TOO_MANY_PODS,
    NodeResourcesFit,
    have_any_requested_resources_increased,
    insufficient,
    is_fit,
    is_schedulable_after_device_class_event,
    is_schedulable_after_node_change,
    is_schedulable_after_pod_event,
    new_fit,
    should_delegate_to_dra,
)
from scheduler.plugins.noderesources.resource_allocation import (
    DraScoring,
    dra_backed,
    dra_scoring,
    fit_requests,
    is_extended_resource_name,
    is_scalar_resource_name,
    resources_signer,
    sign_requests,
)

__all__ = [
    "BALANCED_NAME",
    "FIT_NAME",
    "REASON_TOO_MANY_PODS",
    "DraScoring",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "dra_backed",
    "dra_scoring",
    "fit_requests",
    "have_any_requested_resources_increased",
    "insufficient",
    "is_extended_resource_name",
    "is_fit",
    "is_scalar_resource_name",
    "is_schedulable_after_device_class_event",
    "is_schedulable_after_node_change",
    "is_schedulable_after_pod_event",
    "new_balanced",
    "new_fit",
    "resources_signer",
    "should_delegate_to_dra",
    "sign_requests",
]
