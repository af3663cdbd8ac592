"""The scheduling queue: activeQ, backoffQ and unschedulable pods, as upstream's PriorityQueue.

::

      add ──PreEnqueue──► activeQ ──pop──► (in flight: a scheduling cycle) ──done──► gone
              │ gated        ▲  ▲                         │ failure
              ▼              │  │ backoff expired         ▼
        unschedulable ───────┘  └────────── backoffQ ◄── add_unschedulable_if_not_present
         (gated / rejected)  move event      ▲             │ (a move event arrived during
              │ ▲            (hint: Queue)   │             │  the cycle, or no plugin rejected:
              │ └────────────────────────────┼─────────────┘  the pod goes to backoffQ)
              └── 5 min leftover flush ──────┘

* activeQ is a heap ordered by the profile's QueueSort key (PrioritySort: priority desc, then the
  queue timestamp).
* Backoff is ``min(initial * 2**(attempts-1), max)`` per profile (defaults 1 s and 10 s), counted
  from the time the pod was put back. backoffQ is two heaps, as upstream's ``backoffQueue``: pods
  that plugins rejected, and pods that failed with an error (no rejector plugins).
* ``SchedulerPopFromBackoffQ`` (beta, on by default; ``pop_from_backoff``), as upstream's
  ``backend/queue/backoff_queue.go`` and ``active_queue.go``: when activeQ is empty, ``pop`` takes
  the head of the rejected pods' heap instead of waiting out its backoff (never an errored pod's:
  their heap only drains on backoff completion). Backoff expiries are truncated to a 1 s ordering
  window (KEP-5142), within which the heap orders pods as activeQ does; PreEnqueue runs when a pod
  enters backoffQ rather than when it leaves it, so a pod popped from there was already admitted.
  Off, backoffQ is ordered by expiry alone and PreEnqueue runs on the way out.
* A pod in unschedulable moves only on a cluster event that one of its rejector plugins registered
  for and whose queueing hint says Queue; a pod with no rejectors moves on any event.
* PreEnqueue runs on every way into activeQ (add, move, backoff completion, activate), as
  upstream's ``moveToActiveQ``, except from backoffQ with PopFromBackoffQ (see above): a pod whose
  preemption is still deleting victims is gated again.
* PodGroups: the queue indexes the pods that name one (``pop_group`` pops a gang's other members
  by that index), and the pods a PodGroup-wide gate (GangScheduling) holds are decided per group:
  one hint and, while the gate holds, one PreEnqueue per event (``_ungate_by_pod_group``).
* ``nominator`` follows the pods' nominated nodes on add, update and delete (see ``nominator``).
* ``move_request_cycle``: an event that arrives while a pod is in flight sends the pod to backoffQ
  rather than unschedulable when it fails, so the event is not lost.

Entities (1.37's ``scheduler_queued_entities{queue,type}``, ``scheduler_queue_incoming_entities_total``
and the ``incomplete`` and ``pending`` values of ``scheduler_pending_pods``): a gang's pods wait here
one by one, and a group counts once in each sub-queue where some of its members wait. The PodGroup
index and the per-sub-queue member counts behind those metrics are ``podgroups.PodGroups``: the
sub-queues (``subqueues._SubQueue`` for activeQ and backoffQ, ``subqueues._Unschedulable``) tell it every pod that comes
and goes. A group popped from backoffQ counts every pod ``pop_group`` gathers in ``PopFromBackoffQ``,
as upstream counts the entity's size.

Time comes from an injected clock; ``pop(timeout=0)`` never blocks, so tests never sleep. All
methods are thread-safe (one lock, one condition for ``pop``).
"""

from __future__ import annotations

import heapq
import itertools
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from scheduler.framework.status import Status
from scheduler.framework.types import ClusterEvent, QueuedPodInfo
from scheduler.metrics import Children, Metrics
from scheduler.model import Pod
from scheduler.queue.nominator import Nominator
from scheduler.queue.podgroups import INCOMPLETE, PENDING, POD, POD_GROUP, PodGroups
from scheduler.queue.subqueues import ACTIVE, BACKOFF, GATED, UNSCHEDULABLE, _SubQueue, _Unschedulable

__all__ = [
    "ACTIVE",
    "BACKOFF",
    "BACKOFF_Q_ORDERING_WINDOW",
    "DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION",
    "GATED",
    "INCOMPLETE",
    "PENDING",
    "POD",
    "POD_GROUP",
    "POP_FROM_BACKOFF_Q",
    "UNSCHEDULABLE",
    "QueueProfile",
    "SchedulingQueue",
    "backoff_duration",
]

# The ``scheduler_queue_incoming_pods_total`` event of a pod popped from backoffQ (upstream's
# ``framework.PopFromBackoffQ``).
POP_FROM_BACKOFF_Q = "PopFromBackoffQ"
# backend/queue/backoff_queue.go: backoffQOrderingWindowDuration.
BACKOFF_Q_ORDERING_WINDOW = 1.0
DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION = 300.0
UNSCHEDULABLE_LEFTOVER_FLUSH_INTERVAL = 30.0


class QueueProfile(Protocol):
    """What the queue needs from a pod's profile (the compiled framework provides it)."""

    pod_initial_backoff: float
    pod_max_backoff: float

    def queue_sort_key(self, info: QueuedPodInfo) -> Any: ...

    def run_pre_enqueue(self, pod: Pod) -> Status: ...

    def is_worth_requeuing(self, info: QueuedPodInfo, change: ClusterEvent) -> bool: ...

    def is_worth_ungating(self, info: QueuedPodInfo, change: ClusterEvent) -> bool: ...

    def may_ungate(self, plugin: str, change: ClusterEvent) -> bool: ...

    def gates_by_pod_group(self, plugin: str) -> bool: ...


def backoff_duration(attempts: int, initial: float, maximum: float) -> float:
    if attempts <= 0:
        return 0.0
    d = initial
    for _ in range(attempts - 1):
        d *= 2
        if d >= maximum:
            return maximum
    return min(d, maximum)


class SchedulingQueue:
    """Pending pods, as upstream's ``PriorityQueue``: activeQ, backoffQ and the unschedulable pods
    (the state machine above), the pods in flight, and the ``Nominator``."""

    def __init__(self, profile_of: Callable[[Pod], QueueProfile | None], *,
                 clock: Callable[[], float] = time.monotonic, metrics: Metrics | None = None,
                 max_in_unschedulable: float = DEFAULT_POD_MAX_IN_UNSCHEDULABLE_PODS_DURATION,
                 pop_from_backoff: bool = True) -> None:
        self._profile_of = profile_of
        self.pop_from_backoff = pop_from_backoff
        self._clock = clock
        self._metrics = metrics
        self._incoming_pods = Children(metrics.queue_incoming_pods if metrics else None)
        self._incoming_entities = Children(metrics.queue_incoming_entities if metrics else None)
        # The PodGroup index, who waits where, and the entities (``podgroups``).
        self._groups = PodGroups()
        # The pod the last pop took from backoffQ (PopFromBackoffQ), for ``pop_group``.
        self._popped_from_backoff: QueuedPodInfo | None = None
        self._max_in_unschedulable = max_in_unschedulable
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._seq = itertools.count()
        # uid -> (info, entry id); the heaps hold (key, seq, uid, entry id) with lazy deletion.
        self._active = _SubQueue(ACTIVE, self._groups)
        self._active_heap: list[tuple[Any, int, str, int]] = []
        self._backoff = _SubQueue(BACKOFF, self._groups)
        # backoffQ's two heaps (upstream's podBackoffQ and podErrorBackoffQ): the key is the expiry,
        # then (PopFromBackoffQ, rejected pods only) the QueueSort key.
        self._backoff_heap: list[tuple[Any, int, str, int]] = []
        self._error_backoff_heap: list[tuple[Any, int, str, int]] = []
        self._unschedulable = _Unschedulable(self._groups)
        self._in_flight: dict[str, QueuedPodInfo] = {}
        self.scheduling_cycle = 0
        self._move_request_cycle = -1
        # Pods activated while in flight (``activate``): their failure sends them to backoffQ.
        self._activated_in_flight: set[str] = set()
        self._last_leftover_flush = clock()
        self._closed = False
        self.nominator = Nominator()
        if metrics is not None:
            self._export_gauges(metrics)

    # --- bookkeeping -----------------------------------------------------------------------
    def _incoming(self, queue: str, event: str, info: QueuedPodInfo, *, entity: bool = True) -> None:
        """``entity`` False: the pod was gated and stays gated (upstream's ``addOrUpdate`` of an
        entity already there counts nothing; the pod is still counted here, as it always was)."""
        if self._metrics is None:
            return
        self._incoming_pods(queue, event).inc()
        if not entity:
            return
        kind = self._groups.incoming_entity(queue, info.uid, info.pod)
        if kind is not None:
            self._incoming_entities(queue, event, kind).inc()

    # --- entities (``podgroups``) -----------------------------------------------------------
    @property
    def pod_group_exists(self) -> Callable[[str, str], bool] | None:
        """GenericWorkload: whether a PodGroup exists (the service sets it with the gate); None:
        every pod is its own entity."""
        return self._groups.pod_group_exists

    @pod_group_exists.setter
    def pod_group_exists(self, exists: Callable[[str, str], bool] | None) -> None:
        with self._lock:
            self._groups.pod_group_exists = exists

    def begin_group(self, namespace: str, name: str) -> None:
        """A PodGroup scheduling cycle starts: members that wait meanwhile are ``pending``."""
        with self._lock:
            self._groups.begin((namespace, name))

    def end_group(self, namespace: str, name: str) -> None:
        with self._lock:
            self._groups.end((namespace, name))

    def _size(self, queue: str) -> int:
        if queue == ACTIVE:
            return len(self._active)
        if queue == BACKOFF:
            return len(self._backoff)
        gated = sum(len(g) for g in self._unschedulable.gated.values())
        return gated if queue == GATED else len(self._unschedulable) - gated

    def _export_gauges(self, metrics: Metrics) -> None:
        """``scheduler_pending_pods`` and ``scheduler_queued_entities``, read when scraped rather than
        set on every queue change: each change cost four label lookups and a count of the gated pods
        among all unschedulable ones, which made every queue operation O(unschedulable pods)
        (SchedulingWhileGated holds 10,000). A queue's size, and with GenericWorkload one pass over
        the groups waiting there (``PodGroups.census``), is all there is to read."""
        g, e = metrics.pending_pods, metrics.queued_entities
        queues = (ACTIVE, BACKOFF, UNSCHEDULABLE, GATED)

        def read(queue: str, field: int) -> Callable[[], float]:
            def value() -> float:
                with self._lock:
                    return self._groups.census(queue, self._size(queue))[field]
            return value

        def outside(kind: str) -> Callable[[], float]:
            def value() -> float:
                with self._lock:
                    return self._groups.outside(kind, queues)
            return value

        for queue in queues:
            g.labels(queue).set_function(read(queue, 0))
            e.labels(queue, POD).set_function(read(queue, 1))
            e.labels(queue, POD_GROUP).set_function(read(queue, 2))
        for kind in (INCOMPLETE, PENDING):
            g.labels(kind).set_function(outside(kind))

    def _push_active(self, info: QueuedPodInfo, event: str) -> None:
        prof = self._profile_of(info.pod)
        if prof is None:
            return
        entry = next(self._seq)
        self._active[info.uid] = (info, entry)
        heapq.heappush(self._active_heap, (prof.queue_sort_key(info), entry, info.uid, entry))
        self._incoming(ACTIVE, event, info)
        self._cond.notify()

    def _push_backoff(self, info: QueuedPodInfo, event: str) -> None:
        """Into backoffQ as it is (upstream's ``backoffQueue.add``): a pod no plugin rejected (an
        error) into the error heap, the others into the rejected pods' heap."""
        entry = next(self._seq)
        self._backoff[info.uid] = (info, entry)
        expiry = self._backoff_expiry(info)
        if not info.unschedulable_plugins and not info.pending_plugins:
            heapq.heappush(self._error_backoff_heap, ((expiry,), entry, info.uid, entry))
        else:
            prof = self._profile_of(info.pod)
            key: tuple[Any, ...] = (expiry,)
            if self.pop_from_backoff and prof is not None:
                # lessBackoffCompletedWithPriority: one window, ordered as activeQ orders.
                key = (expiry, prof.queue_sort_key(info))
            heapq.heappush(self._backoff_heap, (key, entry, info.uid, entry))
        self._incoming(BACKOFF, event, info)
        self._cond.notify()

    def _move_to_backoff(self, info: QueuedPodInfo, event: str) -> None:
        """Upstream's ``moveToBackoffQ``: with PopFromBackoffQ, PreEnqueue runs here (a pod popped
        from backoffQ skips it), and a gated pod waits in unschedulable instead."""
        if self.pop_from_backoff:
            prof = self._profile_of(info.pod)
            if prof is None or not self._passes_pre_enqueue(prof, info, event):
                return
        self._push_backoff(info, event)

    def _passes_pre_enqueue(self, prof: QueueProfile, info: QueuedPodInfo, event: str, *,
                            was_gated: bool = False) -> bool:
        """Run the profile's PreEnqueue plugins: a gated pod waits in unschedulable (False)."""
        status = prof.run_pre_enqueue(info.pod)
        if not status.is_success():
            info.gating_plugin = status.plugin or "PreEnqueue"
            self._unschedulable[info.uid] = info
            self._incoming(GATED, event, info, entity=not was_gated)
            return False
        info.gating_plugin = ""
        return True

    def _backoff_expiry(self, info: QueuedPodInfo) -> float:
        """Upstream's ``getBackoffTime``: with PopFromBackoffQ truncated to the ordering window;
        a pod never attempted has none (``-inf``: it never backs off)."""
        if info.attempts <= 0:
            return float("-inf")
        prof = self._profile_of(info.pod)
        initial, maximum = (1.0, 10.0) if prof is None else (prof.pod_initial_backoff, prof.pod_max_backoff)
        return self._align(info.timestamp + backoff_duration(info.attempts, initial, maximum))

    def _align(self, t: float) -> float:
        if not self.pop_from_backoff:
            return t
        return math.floor(t / BACKOFF_Q_ORDERING_WINDOW) * BACKOFF_Q_ORDERING_WINDOW

    def _expired(self, expiry: float, now: float) -> bool:
        # isPodBackingoff: still backing off while the expiry is not before (the window of) now.
        return expiry < self._align(now)

    def _is_backing_off(self, info: QueuedPodInfo, now: float) -> bool:
        return not self._expired(self._backoff_expiry(info), now)

    def _remove_everywhere(self, uid: str) -> QueuedPodInfo | None:
        return self._active.take(uid) or self._backoff.take(uid) or self._unschedulable.pop(uid, None)

    def _admit(self, info: QueuedPodInfo, event: str, *, from_backoff: bool = False, was_gated: bool = False) -> None:
        """Run PreEnqueue; a gated pod waits in unschedulable, the rest go to activeQ (upstream's
        ``moveToActiveQ``). A pod that leaves backoffQ with PopFromBackoffQ passed PreEnqueue when
        it went in, so it goes straight to activeQ."""
        prof = self._profile_of(info.pod)
        if prof is None:
            return
        if from_backoff and self.pop_from_backoff:
            info.gating_plugin = ""
            self._push_active(info, event)
        elif self._passes_pre_enqueue(prof, info, event, was_gated=was_gated):
            self._push_active(info, event)

    # --- pod events ------------------------------------------------------------------------
    def add(self, pod: Pod) -> None:
        with self._lock:
            now = self._clock()
            if pod.uid in self._in_flight or self._find(pod.uid) is not None:
                self.update(pod)
                return
            self.nominator.add(pod)
            self._groups.index(pod)
            self._admit(QueuedPodInfo(pod, now, now), "PodAdd")

    def _find(self, uid: str) -> QueuedPodInfo | None:
        for q in (self._active, self._backoff):
            hit = q.get(uid)
            if hit is not None:
                return hit[0]
        return self._unschedulable.get(uid)

    def update(self, pod: Pod) -> None:
        """A pending pod changed. In activeQ/backoffQ it is updated in place; in unschedulable it
        moves when its gates were lifted or its spec changed; unknown pods are added."""
        with self._lock:
            uid = pod.uid
            known = self._in_flight.get(uid) or self._find(uid)
            if known is None:
                self.add(pod)
                return
            self.nominator.update(known.pod, pod)
            self._groups.index(pod)
            if uid in self._in_flight:
                known.pod = pod
                return
            for name, q in ((ACTIVE, self._active), (BACKOFF, self._backoff)):
                hit = q.get(uid)
                if hit is not None:
                    hit[0].pod = pod
                    self._groups.enter(name, uid, pod)     # counted under its group as it is now
                    return
            info = self._unschedulable[uid]
            old = info.pod
            info.pod = pod
            self._groups.enter(GATED if info.gating_plugin else UNSCHEDULABLE, uid, pod)
            if info.gating_plugin:
                del self._unschedulable[uid]
                self._admit(info, "PodUpdate", was_gated=True)
            elif _scheduling_relevant_change(old, pod):
                del self._unschedulable[uid]
                if self._is_backing_off(info, self._clock()):
                    self._move_to_backoff(info, "PodUpdate")
                else:
                    self._admit(info, "PodUpdate")

    def delete(self, pod: Pod | str) -> None:
        uid = pod if isinstance(pod, str) else pod.uid
        with self._lock:
            self._remove_everywhere(uid)
            self._in_flight.pop(uid, None)
            self._activated_in_flight.discard(uid)
            self._groups.unindex(uid)
            self.nominator.delete(uid)

    def __contains__(self, uid: object) -> bool:
        with self._lock:
            return isinstance(uid, str) and (self._find(uid) is not None or uid in self._in_flight)

    # --- the worker's side -----------------------------------------------------------------
    def pop(self, timeout: float | None = None) -> QueuedPodInfo | None:
        """The next pod by QueueSort order; waits up to ``timeout`` (None: forever). With
        PopFromBackoffQ an empty activeQ gives the head of backoffQ's rejected pods instead."""
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                self.flush()
                info = self._pop_active()
                self._popped_from_backoff = None
                if info is None and self.pop_from_backoff:
                    info = self._pop_backoff()
                    self._popped_from_backoff = info
                if info is not None or self._closed:
                    return info
                wait = None if deadline is None else deadline - time.monotonic()
                if wait is not None and wait <= 0:
                    return None
                nxt = self._next_backoff_expiry()
                if nxt is not None:
                    # The first instant at which that expiry is before (the window of) now.
                    done_at = nxt + BACKOFF_Q_ORDERING_WINDOW if self.pop_from_backoff else nxt
                    until = max(0.001, done_at - self._clock())
                    wait = until if wait is None else min(wait, until)
                self._cond.wait(wait)

    def _pop_active(self) -> QueuedPodInfo | None:
        while self._active_heap:
            _, _, uid, entry = heapq.heappop(self._active_heap)
            hit = self._active.get(uid)
            if hit is None or hit[1] != entry:
                continue
            del self._active[uid]
            return self._to_in_flight(hit[0])
        return None

    def _pop_backoff(self) -> QueuedPodInfo | None:
        """active_queue.go ``unlockedPop``: the head of the rejected pods' heap, counted as coming
        into activeQ by ``PopFromBackoffQ``."""
        if self._peek(self._backoff_heap) is None:
            return None
        _, _, uid, _ = heapq.heappop(self._backoff_heap)
        info, _ = self._backoff.pop(uid)
        self._incoming(ACTIVE, POP_FROM_BACKOFF_Q, info)
        return self._to_in_flight(info)

    def _to_in_flight(self, info: QueuedPodInfo) -> QueuedPodInfo:
        info.attempts += 1
        self.scheduling_cycle += 1
        info.cycle = self.scheduling_cycle
        self._in_flight[info.uid] = info
        return info

    def _peek(self, heap: list[tuple[Any, int, str, int]]) -> float | None:
        """The live head's expiry of one backoff heap (dropping stale entries), or None."""
        while heap:
            key, _, uid, entry = heap[0]
            hit = self._backoff.get(uid)
            if hit is None or hit[1] != entry:
                heapq.heappop(heap)
                continue
            expiry: float = key[0]
            return expiry
        return None

    def pop_group(self, namespace: str, name: str) -> list[QueuedPodInfo]:
        """Pop the other pending pods of PodGroup ``namespace/name``, of every profile (the cycle
        refuses a group whose pods name two schedulers, as upstream), wherever they wait (activeQ,
        backoffQ, or unschedulable when no PreEnqueue plugin gates them): the rest of a gang whose
        first pod was popped, so the group is scheduled as one entity in one cycle (upstream's
        queue pops a group's pods together). They are looked up in the queue's PodGroup index, so
        a cycle costs the group's size, not the queue's; they come in the order a scan would find
        them (activeQ, backoffQ, unschedulable; each in the order its pods were put there). Each
        counts an attempt, as ``pop`` does. When the first was popped from backoffQ, the others
        count as coming into activeQ by ``PopFromBackoffQ`` too: upstream's activeQ adds the
        popped entity's size."""
        with self._lock:
            found: list[tuple[int, int, str]] = []
            for uid in self._groups.members((namespace, name)):
                hit = self._active.get(uid)
                if hit is not None:
                    found.append((0, hit[1], uid))
                    continue
                hit = self._backoff.get(uid)
                if hit is not None:
                    found.append((1, hit[1], uid))
                    continue
                if uid in self._unschedulable:
                    if not self._unschedulable[uid].gating_plugin:
                        found.append((2, self._unschedulable.order[uid], uid))
                elif uid not in self._in_flight:
                    self._groups.unindex(uid)   # gone from the queue (bound): forget it
            found.sort()
            out: list[QueuedPodInfo] = []
            for where, _, uid in found:
                info = (self._active[uid][0] if where == 0 else self._backoff[uid][0] if where == 1
                        else self._unschedulable[uid])
                if where == 0:
                    del self._active[uid]
                elif where == 1:
                    del self._backoff[uid]
                else:
                    del self._unschedulable[uid]
                out.append(info)
            first = self._popped_from_backoff
            if first is not None and self._metrics is not None and out:
                self._incoming_pods(ACTIVE, POP_FROM_BACKOFF_Q).inc(len(out))
            for info in out:
                info.attempts += 1
                info.cycle = self.scheduling_cycle
                self._in_flight[info.uid] = info
            return out

    def _next_backoff_expiry(self) -> float | None:
        heads = [e for e in (self._peek(self._backoff_heap), self._peek(self._error_backoff_heap)) if e is not None]
        return min(heads) if heads else None

    def _pop_backoff_completed(self) -> list[QueuedPodInfo]:
        """Take every pod whose backoff is over out of backoffQ, the rejected pods' heap first,
        each heap in its order (upstream's ``popEachBackoffCompleted``)."""
        now = self._clock()
        out: list[QueuedPodInfo] = []
        for heap in (self._backoff_heap, self._error_backoff_heap):
            while (expiry := self._peek(heap)) is not None and self._expired(expiry, now):
                _, _, uid, _ = heapq.heappop(heap)
                out.append(self._backoff.pop(uid)[0])
        return out

    def done(self, uid: str) -> None:
        """The pod's scheduling attempt is over (bound, or put back)."""
        with self._lock:
            self._in_flight.pop(uid, None)
            self._activated_in_flight.discard(uid)

    def put_back(self, info: QueuedPodInfo) -> None:
        """The attempt ended with no outcome (the replica lost its lease before it could bind): the
        pod returns to activeQ as it was, with no backoff and no attempt counted against it,
        unless it was deleted (or re-added) while in flight."""
        with self._lock:
            self._activated_in_flight.discard(info.uid)
            if self._in_flight.pop(info.uid, None) is None or self._find(info.uid) is not None:
                return
            self._admit(info, "PodAdd")

    def add_unschedulable_if_not_present(self, info: QueuedPodInfo, *, error: bool = False) -> None:
        """Put a pod back after a failed attempt (upstream's ``AddUnschedulableIfNotPresent``)."""
        with self._lock:
            uid = info.uid
            if uid not in self._in_flight:
                return  # deleted while in flight: drop it
            self._in_flight.pop(uid)
            if self._find(uid) is not None:
                return
            info.timestamp = self._clock()
            if error:
                info.consecutive_errors += 1
            else:
                info.consecutive_errors = 0
            rejectors = info.unschedulable_plugins | info.pending_plugins
            activated = uid in self._activated_in_flight
            self._activated_in_flight.discard(uid)
            if activated or self._move_request_cycle >= info.cycle or not rejectors:
                self._move_to_backoff(info, "ScheduleAttemptFailure")
            else:
                self._unschedulable[uid] = info
                self._incoming(UNSCHEDULABLE, "ScheduleAttemptFailure", info)

    def requeue_after_error(self, info: QueuedPodInfo) -> None:
        info.unschedulable_plugins.clear()
        info.pending_plugins.clear()
        self.add_unschedulable_if_not_present(info, error=True)

    # --- cluster events --------------------------------------------------------------------
    def move_all_to_active_or_backoff(self, change: ClusterEvent,
                                      pre_check: Callable[[Pod], bool] | None = None) -> int:
        """Move the unschedulable pods that ``change`` may help. Returns how many moved."""
        with self._lock:
            self._move_request_cycle = self.scheduling_cycle
            now = self._clock()
            moved = 0
            for group in list(self._unschedulable.gated.values()):
                # One profile and one gating plugin per group: when that plugin registered no event
                # this change matches, no pod of the group can be ungated by it.
                first = next(iter(group.values()))
                prof = self._profile_of(first.pod)
                if prof is None or not prof.may_ungate(first.gating_plugin, change):
                    continue
                if pre_check is None and prof.gates_by_pod_group(first.gating_plugin):
                    moved += self._ungate_by_pod_group(prof, (first.pod.scheduler_name, first.gating_plugin),
                                                       change)
                    continue
                for uid, info in list(group.items()):
                    if pre_check is not None and not pre_check(info.pod):
                        continue
                    # PreEnqueue decides again when the gating plugin asked for this event.
                    if prof.is_worth_ungating(info, change):
                        del self._unschedulable[uid]
                        self._admit(info, change.name, was_gated=True)
                        moved += 1
            for uid, info in list(self._unschedulable.plain.items()):
                if pre_check is not None and not pre_check(info.pod):
                    continue
                prof = self._profile_of(info.pod)
                if prof is None or not prof.is_worth_requeuing(info, change):
                    continue
                del self._unschedulable[uid]
                if info.pending_plugins and not info.unschedulable_plugins:
                    # Only Pending plugins rejected it: they asked to retry as soon as possible.
                    self._admit(info, change.name)
                elif self._is_backing_off(info, now):
                    self._move_to_backoff(info, change.name)
                else:
                    self._admit(info, change.name)
                moved += 1
            return moved

    def _ungate_by_pod_group(self, prof: QueueProfile, key: tuple[str, str], change: ClusterEvent) -> int:
        """The gated pods of ``key`` (one profile, one gating plugin whose PreEnqueue verdict and
        hints read a pod only through its PodGroup: ``QueueProfile.gates_by_pod_group``), one
        PodGroup at a time, as upstream's queue handles a group as one entity: the hint is asked of
        one member, and PreEnqueue runs member by member only until the plugin gates one again,
        for then it gates the rest too (they stay as they are). Before, every member of a gang
        of n re-ran PreEnqueue whenever another arrived: n²/2 runs before its quorum, 110 s for
        one gang of 5,000. Returns how many pods the hint let through, as the pod-by-pod loop."""
        moved = 0
        plugin = key[1]
        groups = self._unschedulable.by_pod_group
        for pg, members in list(groups.get(key, {}).items()):
            if pg == ("", ""):
                # Pods in no PodGroup (a plugin that gates them is asked pod by pod).
                for uid, info in list(members.items()):
                    if prof.is_worth_ungating(info, change):
                        del self._unschedulable[uid]
                        self._admit(info, change.name, was_gated=True)
                        moved += 1
                continue
            if not prof.is_worth_ungating(next(iter(members.values())), change):
                continue
            n = len(members)
            moved += n
            # Member by member, oldest first, without copying the group (that alone was n² for a
            # gang arriving pod by pod): one gated again is filed last, one that passes leaves.
            for i in range(n):
                uid, info = next(iter(members.items()))
                del self._unschedulable[uid]
                self._admit(info, change.name, was_gated=True)
                if info.gating_plugin == plugin and uid in self._unschedulable:
                    # Gated again by the group's verdict: so would every other member be.
                    # (Pods only: a member gated again counts no entity, ``_incoming``.)
                    if self._metrics is not None and n - i - 1:
                        self._incoming_pods(GATED, change.name).inc(n - i - 1)
                    break
                members = groups.get(key, {}).get(pg, {})
                if not members:
                    break
        return moved

    def flush(self) -> None:
        """Move completed backoffs to activeQ, and 5-minute leftovers out of unschedulable."""
        with self._lock:
            now = self._clock()
            for info in self._pop_backoff_completed():
                self._admit(info, "BackoffComplete", from_backoff=True)
            if now - self._last_leftover_flush >= UNSCHEDULABLE_LEFTOVER_FLUSH_INTERVAL:
                self._last_leftover_flush = now
                for uid, info in list(self._unschedulable.plain.items()):
                    if now - info.timestamp <= self._max_in_unschedulable:
                        continue
                    del self._unschedulable[uid]
                    if self._is_backing_off(info, now):
                        self._move_to_backoff(info, "UnschedulableTimeout")
                    else:
                        self._admit(info, "UnschedulableTimeout")

    def activate(self, uids: Iterable[str]) -> None:
        """Move the named pods, gated or not, to activeQ through PreEnqueue again (upstream's
        ``Activate``: used when a pod's preemption finished, and by GangScheduling's Permit for
        the group's unscheduled members). A pod in flight is marked instead, as upstream records
        ``EventForceActivate`` for it: should its attempt fail, it goes to backoffQ rather than
        to the unschedulable pods (``add_unschedulable_if_not_present``)."""
        with self._lock:
            for uid in uids:
                info = self._unschedulable.pop(uid, None)
                from_backoff = False
                if info is None:
                    info = self._backoff.take(uid)
                    from_backoff = True
                if info is not None:
                    self._admit(info, "ForceActivate", from_backoff=from_backoff)
                elif uid in self._in_flight:
                    self._activated_in_flight.add(uid)

    def forget_activation(self, uids: Iterable[str]) -> None:
        """Drop ``activate``'s mark from the named pods in flight: their failure goes where their
        rejectors send it (the PodGroup cycle, for the members of a group it rejects whole)."""
        with self._lock:
            self._activated_in_flight.difference_update(uids)

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    # --- inspection ------------------------------------------------------------------------
    def in_flight_count(self) -> int:
        """Pods popped and not yet done (their scheduling cycle, or binding, still running)."""
        with self._lock:
            return len(self._in_flight)

    def counts(self) -> Mapping[str, int]:
        with self._lock:
            gated = sum(len(g) for g in self._unschedulable.gated.values())
            return {ACTIVE: len(self._active), BACKOFF: len(self._backoff),
                    UNSCHEDULABLE: len(self._unschedulable) - gated, GATED: gated,
                    "inFlight": len(self._in_flight)}

    def pending(self) -> Sequence[QueuedPodInfo]:
        with self._lock:
            return ([i for i, _ in self._active.values()] + [i for i, _ in self._backoff.values()]
                    + list(self._unschedulable.values()) + list(self._in_flight.values()))

    def where(self, uid: str) -> str | None:
        with self._lock:
            if uid in self._active:
                return ACTIVE
            if uid in self._backoff:
                return BACKOFF
            if uid in self._unschedulable:
                return GATED if self._unschedulable[uid].gating_plugin else UNSCHEDULABLE
            if uid in self._in_flight:
                return "inFlight"
            return None


def _scheduling_relevant_change(old: Pod, new: Pod) -> bool:
    """Legacy (no-hint) rule: any change beyond status/resourceVersion may make the pod fit; of
    the status, ``resourceClaimStatuses`` (upstream's UpdatePodGeneratedResourceClaim: the claims
    generated for its templates now exist; PreEnqueue checks them again)."""
    fields = ("labels", "requests", "node_selector", "required_node_affinity", "tolerations",
              "affinity_required", "anti_affinity_required", "topology_spread", "host_ports",
              "scheduling_gates", "priority", "preferred_node_affinity", "affinity_preferred",
              "anti_affinity_preferred", "resource_claims", "resource_claim_statuses")
    return any(getattr(old, f) != getattr(new, f) for f in fields)
