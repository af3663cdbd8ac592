"""The scheduling queue (``scheduling_queue``) and its entries (``pod_info``)."""

from scheduler.queue.pod_info import QueuedPodInfo
from scheduler.queue.scheduling_queue import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    ClusterChange,
    QueueProfile,
    SchedulingQueue,
    backoff_duration,
)

__all__ = ["ACTIVE", "BACKOFF", "GATED", "UNSCHEDULABLE", "ClusterChange", "QueueProfile",
           "QueuedPodInfo", "SchedulingQueue", "backoff_duration"]
