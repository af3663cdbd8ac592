"""Exceptions raised by the scheduling core, and where every other exception class of the package sits.

The hierarchy (classes defined outside this module name their module)::

    SchedulerError                      base of everything the core raises on purpose
    ├── ParseError                      API JSON that cannot become a typed object
    │   └── QuantityError               a resource quantity Kubernetes would reject
    ├── ProfileError                    a SchedulingProfile that cannot be compiled
    │   ├── UnknownPluginError          a plugin name no registry knows
    │   └── PluginArgsError             plugin args that fail validation
    ├── ClientError                     an API call made through ``scheduler.client`` failed
    │   ├── ConflictError               409: e.g. the pod is already bound
    │   ├── NotFoundError               404: e.g. the pod is gone
    │   ├── TransportError              no HTTP answer at all: refused, reset, TLS, or timed out
    │   ├── kubeapi.client.GoneError    410: the watch's resourceVersion is too old; list again
    │   └── kubeapi.scheduler_client.NotLeaderError
    │                                   a Binding or PreBind write not sent: the lease may be lost
    ├── kubeapi.config.ConfigError      a kubeconfig or in-cluster config that cannot be used
    └── kubeapi.credentials.CredentialError
                                        an exec credential plugin that failed or printed no token;
                                        KubeClient raises it to callers as a TransportError

    Internal, never crossing the module that raises them:

    ValueError
    └── framework.plugin_lists.FrameworkError   a broken Framework invariant (no QueueSort, no Bind,
                                                a plugin at a point it does not implement); compile
                                                turns it into a ProfileError naming spec.plugins
    LookupError
    └── framework.cycle_state.StateMissingError a plugin read CycleState its PreFilter/PreScore
                                                never wrote (upstream's "error reading ... from cycleState")
    Exception
    └── framework.plugin_lists.ScoreFailed      a per-node Score plugin's non-success status, carried
                                                to run_score, which returns it as the Score status

    The simulated API server's own errors (``scheduler.simulator``) become HTTP answers and never
    reach the core: ``admission.ApiError`` (Exception; an error response with code, reason and
    message), and ValueErrors the server answers with an error status: ``decode.DecodeError``,
    ``decode.TooLargeError``, ``decode.DepthError`` (a request body), ``params.ParamError`` (a query
    parameter), ``patch.PatchError`` (a patch), ``selectors.SelectorError`` (a label selector); and
    two its command line reports: ``faults.FaultError`` (a bad fault rule) and ``cluster.LoadError``
    (a cluster file that cannot be loaded).

Transport failures are ``ClientError``s too, so every caller that handles an API failure handles a
reset connection or a black-holed server the same way: a binding cycle unreserves, forgets and
requeues with backoff whatever went wrong on the wire.

Every error carries a message a user can act on: the object (``kind ns/name``) and the field
path (``spec.containers[0].resources.requests.cpu``) when there is one.
"""

from __future__ import annotations

__all__ = [
    "ClientError",
    "ConflictError",
    "NotFoundError",
    "ParseError",
    "PluginArgsError",
    "ProfileError",
    "QuantityError",
    "SchedulerError",
    "TransportError",
    "UnknownPluginError",
]


class SchedulerError(Exception):
    """Base class of the core's deliberate errors."""


class ParseError(SchedulerError, ValueError):
    """An API object that cannot be turned into the typed model.

    ``obj`` is ``"Pod default/web-1"``-style, ``field`` a JSON path inside it.
    """

    def __init__(self, problem: str, *, obj: str = "", field: str = "") -> None:
        self.problem = problem
        self.obj = obj
        self.field = field
        where = " ".join(p for p in (obj, field) if p)
        super().__init__(f"{where}: {problem}" if where else problem)

    def located(self, obj: str, prefix: str = "") -> ParseError:
        """The same error with the object and a field prefix filled in."""
        field = f"{prefix}.{self.field}" if prefix and self.field else (prefix or self.field)
        return type(self)(self.problem, obj=obj or self.obj, field=field)


class QuantityError(ParseError):
    """A quantity string that does not match Kubernetes' quantity grammar."""


class ProfileError(SchedulerError, ValueError):
    """A SchedulingProfile spec that is well-formed JSON but cannot be compiled."""

    def __init__(self, message: str, *, field: str = "") -> None:
        self.field = field
        super().__init__(f"{field}: {message}" if field else message)


class UnknownPluginError(ProfileError):
    """A plugin name that neither the in-tree nor the out-of-tree registry knows."""


class PluginArgsError(ProfileError):
    """Plugin args that fail the plugin's own validation."""


class ClientError(SchedulerError):
    """An API call failed. ``status`` is the HTTP status code, 0 if none was received."""

    def __init__(self, message: str, *, status: int = 0, retry_after: float | None = None) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)


class ConflictError(ClientError):
    """409 Conflict / AlreadyExists."""


class NotFoundError(ClientError):
    """404 NotFound."""


class TransportError(ClientError):
    """No HTTP answer: the connection was refused or reset, TLS failed, or the request timed out.

    ``status`` is 0. The message names the method, the path and the cause, never an empty string
    (``str(TimeoutError())`` is empty, which once made a lease-renewal timeout log nothing).
    """
