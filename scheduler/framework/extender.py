"""HTTP extenders, as the core sees them (upstream's ``fwk.Extender`` and ``WithExtenders``).

An extender is an external process that takes part in a profile's decisions through four verbs:
*filter* (which of the feasible nodes it accepts), *prioritize* (a score per node), *bind* (it
binds the pod itself) and *preempt* (it revises preemption's candidates). The core never speaks
HTTP: it calls the ``Extender`` Protocol (``extender_interface``, re-exported here), and the edge
implements it (``scheduler/kubeapi/extender.py``, one ``HTTPExtender`` per ``spec.extenders[]``
entry, built by the factory the app hands to ``SchedulerService``).

Where they run, as upstream's ``schedule_one.go`` runs them::

    Filter plugins ─► find_nodes_that_pass_extenders ─► PreScore/Score ─► prioritize_with_extenders ─► select
                      each interested extender in turn,   every interested extender; its scores
                      on the nodes the previous left;     times weight × (MaxNodeScore / MaxExtenderPriority)
                      FailedNodes → Unschedulable,        added to the total; an error only loses its
                      FailedAndUnresolvableNodes →        scores (logged)
                      UnschedulableAndUnresolvable;
                      an error fails the cycle (Error),
                      unless the extender is ignorable
    binding cycle: PreBind ─► extenders_bind (the first binder interested in the pod, instead of the
                   Bind plugins; an ignorable one's error passes to the next) ─► PostBind
    preemption:    call_extenders_for_preemption (each interested extender that supports it revises
                   the candidates and their victims, as upstream's ``Evaluator.callExtenders``)

The scheduling cycle is synchronous, so filter, prioritize and preempt *block* it, each call for at
most the extender's ``httpTimeout`` (upstream's cycle blocks on them the same way); bind is async,
in the binding cycle. While a call is out, the cycle lets go of the cache's lock
(``Snapshot.unlocked``): the informers and the binding cycles go on (the service runs a cycle that
calls extenders on a thread of its own, off the loop that serves health and renews the Lease), and
the nodes an extender answers about are looked up again by name, so a node removed meanwhile is
never chosen. Every error an extender raises is a plain exception whose text is upstream's
(``Post "http://…/filter": context deadline exceeded …``, ``failed filter with extender at URL …,
code 500``): the failure Event quotes it as it is.

Extenders see the objects as the API served them (a v1.Pod, v1.Nodes): ``ObjectBodies`` keeps
those while any profile has extenders, and is what the edge reads (``ObjectSource``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from scheduler.framework.extender_interface import Extender, ExtenderFilterResult, Victims
from scheduler.framework.interfaces import MAX_NODE_SCORE, Rows, Scores
from scheduler.framework.status import SUCCESS, Status
from scheduler.model import Node, Pod

if TYPE_CHECKING:
    from scheduler.cache import Snapshot
    from scheduler.framework.diagnosis import NodeToStatus

__all__ = ["EXTENDER_NAME", "MAX_EXTENDER_PRIORITY", "Extender", "ExtenderFilterResult", "ObjectBodies",
           "ObjectSource", "Victims", "call_extenders_for_preemption", "extenders_bind",
           "find_nodes_that_pass_extenders", "prioritize_with_extenders"]

log = logging.getLogger("kopf_scheduler.extender")

# extenderv1.MaxExtenderPriority: extenders score 0..10; the framework's scores are 0..100.
MAX_EXTENDER_PRIORITY = 10
# Upstream's framework.ExtenderName: what a pod rejected by an extender has in its unschedulable
# plugins. No plugin registers events under it, so any cluster event requeues such a pod.
EXTENDER_NAME = "Extender"


class ObjectSource(Protocol):
    """The API objects as served, for what an extender is sent."""

    def pod(self, pod: Pod) -> Mapping[str, Any] | None: ...

    def node(self, name: str) -> Mapping[str, Any] | None: ...


class ObjectBodies:
    """The bodies of unassigned pods and of nodes, as the watch delivered them, kept only while
    ``enabled`` (some profile has extenders), so a scheduler without extenders pays nothing.
    Objects seen before it was enabled have no body until their next event: the edge then sends
    what the scheduler keeps of them. Written by the informers' threads, read by the worker's:
    single dict operations, atomic in CPython."""

    def __init__(self) -> None:
        self._enabled = False
        self._pods: dict[str, Mapping[str, Any]] = {}
        self._nodes: dict[str, Mapping[str, Any]] = {}

    @property
    def enabled(self) -> bool:
        return self._enabled

    def enable(self, on: bool) -> None:
        if not on:
            self._pods, self._nodes = {}, {}
        self._enabled = on

    def pod(self, pod: Pod) -> Mapping[str, Any] | None:
        return self._pods.get(pod.uid)

    def node(self, name: str) -> Mapping[str, Any] | None:
        return self._nodes.get(name)

    def set_pod(self, uid: str, body: Mapping[str, Any] | None) -> None:
        if body is None or not self._enabled:
            self._pods.pop(uid, None)
        else:
            self._pods[uid] = body

    def set_node(self, name: str, body: Mapping[str, Any] | None) -> None:
        if body is None or not self._enabled:
            self._nodes.pop(name, None)
        else:
            self._nodes[name] = body

    def __len__(self) -> int:
        return len(self._pods) + len(self._nodes)


# --- the scheduling cycle ----------------------------------------------------------------------
def find_nodes_that_pass_extenders(extenders: Sequence[Extender], pod: Pod, snapshot: Snapshot, feasible: Rows,
                                   statuses: NodeToStatus) -> tuple[Rows, Status]:
    """Upstream's ``findNodesThatPassExtenders``: the feasible rows each interested filter
    extender keeps, in turn (the next one sees only what the previous kept). Its failed nodes get
    its reasons in ``statuses`` (FailedAndUnresolvableNodes wins over FailedNodes). An error fails
    the cycle with an Error status, unless the extender is ignorable: then it is skipped."""
    for ext in extenders:
        if len(feasible) == 0:
            break
        if not ext.is_filter() or not ext.is_interested(pod):
            continue
        nodes = [snapshot.node_info(r).node for r in feasible.tolist()]
        try:
            with snapshot.unlocked():
                result = ext.filter(pod, nodes)
        except Exception as e:
            if ext.is_ignorable():
                log.info("Skipping extender as it returned error and has ignorable flag set extender=%s err=%s",
                         ext.name, e)
                continue
            return feasible, Status.as_error(e)
        for name, msg in result.failed_and_unresolvable.items():
            row = snapshot.row_of(name)
            if row is not None:
                statuses.set_row(row, Status.unresolvable(msg))
        for name, msg in result.failed.items():
            if name in result.failed_and_unresolvable:
                continue            # FailedAndUnresolvableNodes takes precedence
            row = snapshot.row_of(name)
            if row is not None:
                statuses.set_row(row, Status.unschedulable(msg))
        rows = [snapshot.row_of(n) for n in result.nodes]
        feasible = np.array([r for r in rows if r is not None], np.int64)
    return feasible, SUCCESS


# Extenders that prioritize are called concurrently, as upstream's goroutines: the cycle waits for
# the slowest, not for their sum. Threads, because each call blocks on its socket; the executor
# starts them only when first used.
_POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="extender-prioritize")


def prioritize_with_extenders(extenders: Sequence[Extender], pod: Pod, nodes: Sequence[Node], totals: Scores,
                              per_plugin: dict[str, Scores], snapshot: Snapshot | None = None) -> Scores:
    """Upstream's extender half of ``prioritizeNodes``: each interested extender's scores times its
    weight times ``MAX_NODE_SCORE / MAX_EXTENDER_PRIORITY`` are added to ``totals`` (returned) and
    kept in ``per_plugin`` under its name, already weighted (decision records show them as is). An
    extender whose call fails gives no scores, whether it is ignorable or not (logged). With a
    ``snapshot``, the calls are made with its lock let go of: the caller checks its rows after."""
    callers = [e for e in extenders if e.is_interested(pod)]
    if not callers:
        return totals

    def call(ext: Extender) -> tuple[list[tuple[str, int]], int] | None:
        if not ext.is_prioritizer():
            return [], 0                  # upstream: score 0 on every node, weight 0
        try:
            return ext.prioritize(pod, nodes)
        except Exception as e:
            log.debug("Failed to run extender's priority function. No score given by this extender. "
                      "error=%s pod=%s extender=%s", e, pod.key, ext.name)
            return None

    with snapshot.unlocked() if snapshot is not None else contextlib.nullcontext():
        if sum(e.is_prioritizer() for e in callers) > 1:
            results: Iterable[tuple[list[tuple[str, int]], int] | None] = list(_POOL.map(call, callers))
        else:
            results = [call(e) for e in callers]
    index = {n.name: i for i, n in enumerate(nodes)}
    out = totals.astype(np.int64, copy=True)
    scale = MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY
    for ext, got in zip(callers, results, strict=True):
        if got is None or not ext.is_prioritizer():
            continue
        scores, weight = got
        mine = np.zeros(len(nodes), np.int64)
        with np.errstate(over="ignore"):          # int64 arithmetic wraps, as Go's does
            for host, score in scores:
                i = index.get(host)
                if i is not None:                 # a host it was not asked about counts nowhere
                    mine[i] += np.int64(score) * np.int64(weight) * np.int64(scale)
            out += mine
        per_plugin[ext.name] = mine
    return out


# --- the binding cycle -------------------------------------------------------------------------
async def extenders_bind(extenders: Sequence[Extender], pod: Pod, node: str) -> tuple[bool, Status]:
    """Upstream's ``extendersBinding``: the first extender that binds and is interested in the pod
    binds it (``True``, and its outcome); ``False`` when none did, so the Bind plugins run. An
    ignorable extender's error passes the pod on to the next binder."""
    for ext in extenders:
        if not ext.is_binder() or not ext.is_interested(pod):
            continue
        try:
            await ext.bind(pod, node)
        except Exception as e:
            if ext.is_ignorable():
                log.info("Skipping extender in bind as it returned error and has ignorable flag set "
                         "extender=%s err=%s", ext.name, e)
                continue
            return True, Status.as_error(e).with_plugin(EXTENDER_NAME)
        return True, SUCCESS
    return False, SUCCESS


# --- preemption --------------------------------------------------------------------------------
def call_extenders_for_preemption(extenders: Sequence[Extender], pod: Pod, candidates: Mapping[str, Victims],
                                  snapshot: Snapshot) -> tuple[dict[str, Victims], Status]:
    """Upstream's ``Evaluator.callExtenders``: every interested extender that supports preemption
    revises the candidates (node → victims) in turn. An error fails preemption (Error status)
    unless the extender is ignorable; a candidate it returns without victims is an error, or, for
    an ignorable extender, dropped. DefaultPreemption calls this between its dry run and choosing
    the node (``PostFilterContext.extenders``)."""
    victims = dict(candidates)
    if not extenders or not victims:
        return victims, SUCCESS

    def pods_on(name: str) -> Mapping[str, Pod] | None:
        with snapshot.lock:             # called while the call has the lock let go of
            row = snapshot.row_of(name)
            return None if row is None else dict(snapshot.node_info(row).pods)

    for ext in extenders:
        if not ext.supports_preemption() or not ext.is_interested(pod):
            continue
        try:
            with snapshot.unlocked():
                got = ext.process_preemption(pod, victims, pods_on)
        except Exception as e:
            if ext.is_ignorable():
                log.info("Skipped extender as it returned error and has ignorable flag set extender=%s err=%s",
                         ext.name, e)
                continue
            return {}, Status.as_error(e)
        for name, v in list(got.items()):
            if not v.pods:
                if ext.is_ignorable():
                    del got[name]
                    log.info("Ignored node for which the extender didn't report victims node=%s extender=%s",
                             name, ext.name)
                    continue
                return {}, Status.as_error(ValueError(f'expected at least one victim pod on node "{name}"'))
        victims = got
        if not victims:
            break           # no candidate left: no preemption, whatever the other extenders say
    return victims, SUCCESS
