"""kopf-scheduler's scheduling core.

Read in this order: ``model`` (typed pods and nodes) → ``cache`` (columnar node state) →
``framework`` (extension points, runtime) → ``plugins`` → ``queue`` → ``profiles`` → ``cycle``
(the scheduling and binding cycles). ``client`` is the one interface through which results leave.
Nothing here imports Kopf or does network I/O.
"""

from scheduler.cache import Cache
from scheduler.cycle import Scheduler
from scheduler.errors import ParseError, ProfileError, QuantityError, SchedulerError
from scheduler.framework import Code, Framework, Status
from scheduler.metrics import Metrics
from scheduler.model import Node, Pod, parse_node, parse_pod
from scheduler.plugins.registry import Registry
from scheduler.profiles import ProfileMap, SchedulingProfileSpec, compile_profile, parse_spec
from scheduler.queue import SchedulingQueue

__all__ = ["Cache", "Code", "Framework", "Metrics", "Node", "ParseError", "Pod", "ProfileError", "ProfileMap",
           "QuantityError", "Registry", "Scheduler", "SchedulerError", "SchedulingProfileSpec", "SchedulingQueue",
           "Status", "compile_profile", "parse_node", "parse_pod", "parse_spec"]
