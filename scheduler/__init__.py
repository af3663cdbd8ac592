"""kopf-scheduler's scheduling core.

Read in this order: ``model`` (typed pods and nodes) → ``cache`` (columnar node state) →
``framework`` (extension points, runtime) → ``plugins`` → ``queue`` → ``profiles`` → ``cycle``
(the scheduling and binding cycles) → ``service`` (the scheduler as the operator runs it: events
in, a worker out). ``client`` is the one interface through which results leave.

This package is the core: nothing here imports Kopf, aiohttp or click, or does network I/O. The
edges around it are packages of their own, and import the core, never the reverse: ``app`` (the
CLI and the operator runtime, whose pod informer feeds ``service``), ``kubeapi`` (the API client),
``simulator`` (the simulated API server) and ``benchmark``. Kopf's handler scripts live outside the
package, in ``operator/``. import-linter's contracts in ``pyproject.toml`` enforce the layering.
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
