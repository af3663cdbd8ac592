"""The scheduling queue (``scheduling_queue``, its sub-queues' bookkeeping in ``subqueues``) and the
nominated pods (``nominator``).

Its entries (``QueuedPodInfo``) and the cluster events that move them (``ClusterEvent``) are the
framework's types (``scheduler.framework.types``): the queue imports the framework, never the reverse.
"""

from scheduler.queue.nominator import Nominator
from scheduler.queue.scheduling_queue import (
    ACTIVE,
    BACKOFF,
    GATED,
    UNSCHEDULABLE,
    QueueProfile,
    SchedulingQueue,
    backoff_duration,
)

__all__ = ["ACTIVE", "BACKOFF", "GATED", "UNSCHEDULABLE", "Nominator", "QueueProfile", "SchedulingQueue",
           "backoff_duration"]
