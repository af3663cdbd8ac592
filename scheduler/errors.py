"""Exceptions raised by the scheduling core, and where every other exception class of the package sits.

The hierarchy. Classes defined outside this module are named by their module under ``scheduler``;
``tests/errors/test_errors.py`` imports every module and fails when a class is missing here::

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
    ├── kubeapi.credentials.CredentialError
    │                                   an exec credential plugin that failed or printed no token;
    │                                   KubeClient raises it to callers as a TransportError
    ├── kubeapi.extender.ExtenderError  an HTTP extender call failed; the message is upstream's
    ├── app.explain.ExplainError        ``explain``: the pod, or the profile to explain it with, is missing
    └── app.serving.ServingError        a bind address that cannot be served on: one line, exit 1

    Raised by the core and turned into a Status or a message where they are caught:

    ValueError
    ├── features.FeatureGateError       a bad ``--feature-gates`` value: a usage error naming it
    ├── dra.errors.AllocationError      upstream's non-nil error from ``Allocate``: the attempt aborts
    │   ├── dra.errors.CELSelectorError
    │   │                               a device selector that does not compile or fails at run time
    │   ├── dra.errors.NodeAllocationError
    │   │                               upstream's ``ErrFailedAllocationOnNode``: only this node fails
    │   └── dra.errors.FilterTimeoutError
    │                                   the node's search ran past DynamicResourcesArgs.filterTimeout
    ├── dra.cel.CELError                a CEL runtime (or compile) error in a device selector
    └── dra.cel_ast.CostError           a selector whose cost cannot be estimated: it does not parse
    Exception
    ├── plugins.dynamicresources.binding.DynamicResourcesError
    │   │                               a DRA PreBind failure, upstream's text; never a ClientError,
    │   │                               so a claim's 409 retries the pod instead of dropping it
    │   └── plugins.dynamicresources.binding._Conflict
    │                                   a 409 on a claim write: retry-on-conflict's cue to refetch
    ├── plugins.dynamicresources.bindingconditions.BindingConditionsError
    │                                   a device's binding failure condition, or its binding timeout:
    │                                   PreBind's error text, upstream's
    ├── plugins.volumebinding.binder.VolumeBindingError
    │                                   a volume PreBind failure; never a ClientError, as above
    ├── plugins.nodevolumelimits.VolumeError
    │                                   upstream's ``filterAttachableVolumes`` errors
    ├── app.capacity.CapacityError      ``capacity``: a bad manifest, an unknown profile, an unreadable
    │                                   cluster: one ``Error:`` line, exit 1
    ├── benchmark.against.AgainstError  ``bench --against``: an unknown revision, a failed install, a
    │                                   side that failed or ran out of time: one line, exit 1
    └── app.explanations.NotAnswered    ``explain``: no SchedulingExplanation answer (the CRD is not
                                        served, or no leader answered in time): the local route runs

    Internal, never crossing the module that raises them:

    ValueError
    └── framework.plugin_lists.FrameworkError   a broken Framework invariant (no QueueSort, no Bind,
                                                a plugin at a point it does not implement); compile
                                                turns it into a ProfileError naming spec.plugins
    LookupError
    └── framework.cycle_state.StateMissingError a plugin read CycleState its PreFilter/PreScore
                                                never wrote (upstream's "error reading ... from cycleState")
    Exception
    ├── framework.plugin_lists.ScoreFailed      a per-node Score plugin's non-success status, carried
    │                                           to run_score, which returns it as the Score status
    ├── dra.errors._MaxSizeExceeded             the allocation would exceed upstream's
    │                                           ``AllocationResultsMaxSize``: this node cannot allocate
    └── app.explanations._Problem               a SchedulingExplanation that cannot be answered: its
                                                condition's reason and message, written to its status

    The API client's HTTP/1.1 transport (``scheduler.kubeapi``), turned into a TransportError by
    KubeClient: ``kubeapi.http1.ServerDisconnectedError`` and ``kubeapi.http1.CannotConnectError``
    (ConnectionError), ``kubeapi.http1.BadResponseError`` (ValueError), and
    ``kubeapi.http1._Retry`` (Exception; a replayable request failed on a reused connection before
    any response byte: send it again).

    The simulated API server's own errors (``scheduler.simulator``) become HTTP answers and never
    reach the core: ``simulator.apierrors.ApiError`` (Exception; an error response with code, reason
    and message) and its ``simulator.managed.Conflict`` (server-side apply's 409, one cause per field),
    and ValueErrors the server answers with an error status:
    ``simulator.decode.DecodeError``, ``simulator.decode.TooLargeError``,
    ``simulator.decode.DepthError`` (a request body), ``simulator.protobuf.ProtobufError`` (a
    protobuf body), ``simulator.params.ParamError`` (a query parameter), ``simulator.patch.PatchError``
    (a patch), ``simulator.selectors.SelectorError`` (a label selector), ``simulator.cellib.CELError``
    (a CRD validation rule's runtime error); internal ones: ``simulator.typecheck._TimeError`` and
    ``simulator.typecheck._Mismatch`` (Exception; a value of the wrong JSON type, which becomes the
    decoder's ``400``), ``simulator.controllers.resourceclaims._Failed`` (Exception; the pod's
    ``FailedResourceClaimCreation`` event); and two its command line reports:
    ``simulator.faults.FaultError`` (a bad fault rule) and ``simulator.cluster.LoadError`` (a cluster
    file that cannot be loaded).

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
