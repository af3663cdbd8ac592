"""One ``Protocol`` per extension point, as upstream's ``framework/interface.go``.

A plugin implements only the points it needs; the framework finds them with ``isinstance`` at
compile time (the protocols are ``runtime_checkable``), never per cycle.

Two additions to upstream's interfaces keep the hot path off per-node Python calls:

* ``BatchFilterPlugin.filter_nodes(state, pod, snapshot, rows)`` answers for many node rows at once
  and returns a ``FilterVerdict`` (which rows failed, and with which ``Status``).
* ``BatchScorePlugin.score_nodes(state, pod, snapshot, rows)`` returns an int64 array of scores.

Every in-tree Filter and Score plugin is a batch plugin. Out-of-tree plugins may implement the plain
per-node ``filter`` / ``score`` (upstream's shape) and the framework loops for them.

``QueueSortPlugin`` gives a sort *key* rather than upstream's ``Less``: heaps in Python order by
keys, and any strict weak order ``Less`` can be written as one.

Optional capabilities are Protocols too, found the same way once per compile:

* ``EnqueueExtensions.events_to_register()``: the cluster events that may make a pod this plugin
  rejected schedulable (a plugin without it is interested in every event, as upstream).
* ``ScoreExtensionsPlugin.score_extensions()``: the plugin's ``NormalizeScore``, or ``None``.
* ``NodeLocalFilter.filter_is_node_local``: Filter reads only the node and its own pods, so
  preemption's dry run may batch nodes.
* ``PodReadingPreFilter.pre_filter_reads_pods``: ``False`` when PreFilter reads only the pod, so
  its state survives a change of the node's pods (``Framework._filter_refreshed``); absent means
  ``True``.
* ``PreBindPreFlightPlugin.pre_bind_pre_flight(state, pod, node)``: upstream's ``PreBindPreFlight``
  of a PreBind plugin, Success (its PreBind has work), Skip (it has none: its PreBind is not run)
  or Error; a PreBind plugin without it always runs.
* ``SignPlugin.sign_pod(pod)``: the plugin's fragment of the pod's scheduling signature
  (upstream's ``SignPlugin``, KEP-5598 opportunistic batching; ``framework/signature.py``), or a
  non-success status when the plugin cannot sign the pod.
* ``PreBindWaiter.pre_bind_wait(state)``: the longest the plugin's PreBind may wait for this
  cycle's pod (VolumeBinding's bindTimeoutSeconds); the service adds the sum to the binding
  cycle's deadline, so the cycle's own timeout does not cut a legitimate wait short.

``PodNominator`` is what the framework reads of the queue's nominated pods; the queue's
``Nominator`` provides it, so the framework never imports the queue.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.framework.types import ClusterEvent, ClusterEventWithHint, QueuedPodInfo
from scheduler.model import Pod

if TYPE_CHECKING:
    from scheduler.cache import NodeInfo, Snapshot
    from scheduler.framework.diagnosis import NodeToStatus
    from scheduler.framework.extender_interface import Extender

__all__ = [
    "EXTENSION_POINT_PROTOCOLS",
    "MAX_NODE_SCORE",
    "BatchFilterPlugin",
    "BatchScorePlugin",
    "BindPlugin",
    "ClusterEvent",
    "ClusterEventWithHint",
    "EnqueueExtensions",
    "FilterConfigured",
    "FilterPlugin",
    "FilterRunner",
    "FilterVerdict",
    "NodeLocalFilter",
    "PermitPlugin",
    "Plugin",
    "PodNominator",
    "PodReadingPreFilter",
    "PostBindPlugin",
    "PostFilterContext",
    "PostFilterPlugin",
    "PostFilterResult",
    "PreBindPlugin",
    "PreBindPreFlightPlugin",
    "PreBindWaiter",
    "PreEnqueuePlugin",
    "PreFilterPlugin",
    "PreFilterResult",
    "PreScorePlugin",
    "QueueSortPlugin",
    "ReservePlugin",
    "ScoreExtensions",
    "ScoreExtensionsPlugin",
    "ScorePlugin",
    "SignPlugin",
    "UniformScorePlugin",
    "implements",
]

MAX_NODE_SCORE = 100
Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """``node_names`` restricts the nodes Filter evaluates; ``None`` means all nodes."""

    node_names: frozenset[str] | None = None


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """``nominated_node_name`` is set on the pod (``""`` clears a previous nomination).

    ``prepare`` is work PostFilter asks to be finished before the failure is handled, as upstream's
    synchronous preemption does it inside PostFilter (``SchedulerAsyncPreemption=false``): the
    scheduling cycle is CPU-only here, so the binding half awaits it, and the worker schedules no
    other pod meanwhile. It returns ``""``, or the error that upstream's PostFilter would return
    (the pod is then not nominated)."""

    nominated_node_name: str = ""
    prepare: Callable[[], Awaitable[str]] | None = None


class FilterRunner(Protocol):
    """What a PostFilter plugin may ask of the framework that runs it (upstream's ``fwk.Handle``
    methods used by preemption)."""

    profile_name: str

    def run_filter_with_nominated_pods(self, state: CycleState, pod: Pod, snapshot: Snapshot, row: int, *,
                                       pods_changed: bool = False) -> Status:
        """All filters on one node, counting pods nominated there with priority ≥ the pod's.
        ``pods_changed``: the node's pods differ from when PreFilter ran into ``state``."""
        ...

    def reject_waiting_pod(self, uid: str, plugin: str, reason: str) -> bool:
        """Reject a pod waiting at Permit; ``False`` if no such pod waits."""
        ...

    def nominated_rows(self, pod: Pod, snapshot: Snapshot) -> Collection[int]:
        """Rows that pods of priority ≥ ``pod``'s are nominated to."""
        ...

    def filters_are_node_local(self, state: CycleState) -> bool:
        """Whether every Filter running for the cycle's pod reads only its node and that node's pods."""
        ...

    def run_filter_on_rows(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows, *,
                           statuses: bool = True) -> tuple[npt.NDArray[np.bool_], dict[int, Status]]:
        """Every filter over ``rows`` at once (no nominated pods): passed, and the failed rows' statuses
        (none when not ``statuses``)."""
        ...


@dataclass(frozen=True, slots=True)
class PostFilterContext:
    """The cycle's view for PostFilter: the snapshot the filters ran on, the framework, and the
    profile's HTTP extenders (preemption lets those that support it revise its candidates:
    ``framework.extender.call_extenders_for_preemption``)."""

    snapshot: Snapshot
    framework: FilterRunner
    extenders: Sequence[Extender] = ()


@dataclass(slots=True)
class FilterVerdict:
    """The outcome of a batched Filter over ``rows``.

    ``failed[i]`` says whether ``rows[i]`` was rejected; a rejected row's status is
    ``statuses[status_ids[i]]`` (or ``statuses[0]`` when ``status_ids`` is ``None``).
    """

    failed: npt.NDArray[np.bool_]
    statuses: Sequence[Status] = ()
    status_ids: npt.NDArray[np.int64] | None = None

    @classmethod
    def passed(cls, n: int) -> FilterVerdict:
        return cls(np.zeros(n, np.bool_))

    @classmethod
    def uniform(cls, failed: npt.NDArray[np.bool_], status: Status) -> FilterVerdict:
        return cls(failed, (status,))


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """A plugin may also set ``gates_by_pod_group = True`` when its PreEnqueue verdict and its
    queueing hints read a pod only through its PodGroup (GangScheduling): the queue then decides
    for a PodGroup's gated pods together (``Framework.gates_by_pod_group``)."""

    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def sort_key(self, info: QueuedPodInfo) -> Any: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> Sequence[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status]: ...


@runtime_checkable
class PodReadingPreFilter(Protocol):
    """Capability: ``pre_filter_reads_pods = False`` says PreFilter reads only the pod (not the
    cluster's pods), so its state stays valid when a node's pods change."""

    pre_filter_reads_pods: bool


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: Pod, node: NodeInfo) -> Status: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict: ...


@runtime_checkable
class NodeLocalFilter(Protocol):
    """Capability: ``filter_is_node_local = True`` says Filter reads only the node and that node's
    pods, so removing pods from one node cannot change another node's verdict."""

    filter_is_node_local: bool


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """Upstream's ``SignPlugin`` (KEP-5598): the parts of ``pod`` this plugin's PreFilter, Filter,
    PreScore and Score read, as ``(signer name, hashable value)`` fragments, so that two pods with
    equal fragments from every plugin get the same verdict and score on every node in the same
    state. A non-success status means the plugin cannot sign this pod (its result depends on more
    than the pod and the node): the pod then has no signature. A profile with a PreFilter, Filter,
    PreScore or Score plugin that lacks this method signs no pod at all."""

    def sign_pod(self, pod: Pod) -> tuple[Sequence[tuple[str, object]], Status]: ...


@runtime_checkable
class FilterConfigured(Protocol):
    """Capability: ``filter_config`` is the part of the plugin's args that PreFilter and Filter read
    (absent: all of them). Two instances with equal ``filter_config`` filter alike, so a shadow
    profile that changes only a plugin's scoring args reuses the live profile's search."""

    @property
    def filter_config(self) -> object: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: PostFilterContext
                    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Status: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(self, state: CycleState, pod: Pod, scores: Scores) -> Status:
        """Normalise ``scores`` in place to 0..MAX_NODE_SCORE."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: Pod, node: NodeInfo) -> tuple[int, Status]: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Scores: ...


@runtime_checkable
class UniformScorePlugin(Protocol):
    """Capability of a Score plugin: ``uniform_score(state, pod, snapshot)``, called after PreScore,
    is the score Score would give *every* row of this cycle when that is one number (a pod with no
    image any node holds, a cluster without an untolerated PreferNoSchedule taint), else None and
    the rows are scored. The runtime then spends no pass over the rows on the plugin: it normalises
    the one number as a one-row list and adds it, weighted, to every total once. So the plugin's
    NormalizeScore must give n equal scores what it gives one, as every max-based one does."""

    def uniform_score(self, state: CycleState, pod: Pod, snapshot: Snapshot) -> int | None: ...


@runtime_checkable
class ScoreExtensionsPlugin(Protocol):
    """Capability of a Score plugin (upstream's ``ScorePlugin.ScoreExtensions``): its
    ``NormalizeScore``, or ``None``; a plugin without the method has none."""

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, Unschedulable, or Wait with a timeout in seconds."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PreBindPreFlightPlugin(Plugin, Protocol):
    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Success, Skip or Error; lightweight, no API calls (upstream's ``PreBindPreFlight``)."""
        ...


@runtime_checkable
class PreBindWaiter(Protocol):
    """Capability of a PreBind plugin: the most seconds its PreBind may wait for this cycle's pod."""

    def pre_bind_wait(self, state: CycleState) -> float: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Bind, or return Skip to let the next Bind plugin do it."""
        ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


class PodNominator(Protocol):
    """The nominated pods, as the framework and its plugins read them (upstream's ``PodNominator``);
    ``scheduler.queue.Nominator`` implements it."""

    version: int

    def __len__(self) -> int: ...

    def node_of(self, uid: str) -> str: ...

    def pods_for_node(self, node: str) -> list[Pod]: ...

    def nominated_at_or_above(self, priority: int, exclude_uid: str) -> dict[str, list[Pod]]: ...

    def delete(self, uid: str) -> None: ...


# The Protocol(s) that make a plugin serve each extension point: ``implements`` is how
# ``scheduler.profiles.compile`` and ``Framework`` match plugins to points (Filter and Score accept
# the batched or the per-node shape).
EXTENSION_POINT_PROTOCOLS: dict[str, tuple[type, ...]] = {
    "preEnqueue": (PreEnqueuePlugin,), "queueSort": (QueueSortPlugin,), "preFilter": (PreFilterPlugin,),
    "filter": (BatchFilterPlugin, FilterPlugin), "postFilter": (PostFilterPlugin,), "preScore": (PreScorePlugin,),
    "score": (BatchScorePlugin, ScorePlugin), "reserve": (ReservePlugin,), "permit": (PermitPlugin,),
    "preBind": (PreBindPlugin,), "bind": (BindPlugin,), "postBind": (PostBindPlugin,),
}


def implements(plugin: object, point: str) -> bool:
    """Whether ``plugin`` serves extension point ``point`` (``preFilter``, ``score``, ...)."""
    return isinstance(plugin, EXTENSION_POINT_PROTOCOLS[point])
