"""DynamicResources, as upstream's ``pkg/scheduler/framework/plugins/dynamicresources``: the plugin
(``dynamicresources``), its cycle state (``state``), Filter's pass over the rows (``filter_pass``)
and its counting of free devices (``counting``), the extended resources backed by DRA
(``extendeddynamicresources``) and the API writes of PreBind and Unreserve (``binding``). Start with
``dynamicresources``."""

from scheduler.plugins.dynamicresources.binding import DynamicResourcesError
from scheduler.plugins.dynamicresources.dynamicresources import (
    ERR_CLAIM_NOT_CREATED,
    FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE,
    MSG_DEALLOCATED,
    MSG_DELETED,
    NAME,
    DynamicResources,
    new,
)
from scheduler.plugins.dynamicresources.extendeddynamicresources import ERR_CANNOT_FIT, ERR_EXTENDED_CLAIM
from scheduler.plugins.dynamicresources.filter_pass import ERR_CANNOT_ALLOCATE, ERR_NOT_AVAILABLE
from scheduler.plugins.dynamicresources.state import Reserved
from scheduler.plugins.retry import RETRY_INTERVAL, RETRY_STEPS

__all__ = [
    "ERR_CANNOT_ALLOCATE",
    "ERR_CANNOT_FIT",
    "ERR_CLAIM_NOT_CREATED",
    "ERR_EXTENDED_CLAIM",
    "ERR_NOT_AVAILABLE",
    "FIRST_AVAILABLE_DEVICE_REQUEST_MAX_SIZE",
    "MSG_DEALLOCATED",
    "MSG_DELETED",
    "NAME",
    "RETRY_INTERVAL",
    "RETRY_STEPS",
    "DynamicResources",
    "DynamicResourcesError",
    "Reserved",
    "new",
]
