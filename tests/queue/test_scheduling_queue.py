import pytest

from scheduler.framework.status import Status
from scheduler.framework.types import ClusterEvent, QueuedPodInfo
from scheduler.queue import SchedulingQueue, backoff_duration
from tests.builders import Clock, make_scheduler, pod


@pytest.mark.parametrize(("attempts", "want"), [(0, 0), (1, 1), (2, 2), (3, 4), (4, 8), (5, 10), (9, 10)])
def test_backoff_formula(attempts: int, want: float) -> None:
    assert backoff_duration(attempts, 1, 10) == want


def queue() -> tuple[SchedulingQueue, Clock]:
    clock = Clock()
    s, _ = make_scheduler(clock=clock)
    return s.queue, clock


def test_priority_then_fifo() -> None:
    q, clock = queue()
    q.add(pod("low", priority=1))
    clock.advance(1)
    q.add(pod("high", priority=10))
    clock.advance(1)
    q.add(pod("low2", priority=1))
    assert [q.pop(0).pod.name for _ in range(3)] == ["high", "low", "low2"]  # type: ignore[union-attr]
    assert q.pop(0) is None


def test_unschedulable_moves_only_on_interesting_event() -> None:
    q, clock = queue()
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info)
    assert q.where(info.uid) == "unschedulable"
    # A label change does interest NodeResourcesFit only via its registered events; an unrelated
    # resource does not move the pod.
    assert q.move_all_to_active_or_backoff(ClusterEvent("Namespace", frozenset({"Add"}))) == 0
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"}))) == 1
    assert q.where(info.uid) == "backoff"  # 1 s backoff after the first attempt
    clock.advance(1.01)
    assert q.pop(0) is info and info.attempts == 2


def test_event_during_cycle_sends_pod_to_backoff() -> None:
    q, _ = queue()
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"})))  # while in flight
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info)
    assert q.where(info.uid) == "backoff"


def test_leftover_flush_after_five_minutes() -> None:
    q, clock = queue()
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    info.unschedulable_plugins = {"TaintToleration"}
    q.add_unschedulable_if_not_present(info)
    clock.advance(200)
    q.flush()
    assert q.where(info.uid) == "unschedulable"
    clock.advance(101)
    q.flush()
    assert q.where(info.uid) == "active"


def test_gated_pod_waits_until_gates_removed() -> None:
    q, _ = queue()
    gated = pod("g", spec={"schedulingGates": [{"name": "a"}, {"name": "b"}]})
    q.add(gated)
    assert q.where(gated.uid) == "gated"
    assert q.counts()["gated"] == 1
    assert q.pop(0) is None
    from dataclasses import replace
    q.update(replace(gated, scheduling_gates=()))
    assert q.where(gated.uid) == "active"


def test_delete_removes_everywhere() -> None:
    q, _ = queue()
    p = pod("p")
    q.add(p)
    q.delete(p)
    assert q.pop(0) is None and p.uid not in q


def test_pending_pods_metric() -> None:
    s, _ = make_scheduler()
    s.queue.add(pod("a"))
    s.queue.add(pod("b", spec={"schedulingGates": [{"name": "x"}]}))
    m = s.metrics
    assert m is not None
    assert m.registry.get_sample_value("scheduler_pending_pods", {"queue": "active"}) == 1
    assert m.registry.get_sample_value("scheduler_pending_pods", {"queue": "gated"}) == 1


def test_scheduling_gates_reason() -> None:
    from scheduler.plugins.schedulinggates import SchedulingGates
    s = SchedulingGates().pre_enqueue(pod("g", spec={"schedulingGates": [{"name": "a"}, {"name": "b"}]}))
    assert s == Status.unresolvable("waiting for scheduling gates: [a b]")


def _index_is_consistent(q: SchedulingQueue) -> None:
    """The unschedulable pods' groups (gated, by scheduler name and gating plugin; plain) hold
    exactly what the recomputation from the pods themselves gives."""
    u = q._unschedulable
    want_gated: dict[tuple[str, str], set[str]] = {}
    for uid, info in u.items():
        if info.gating_plugin:
            want_gated.setdefault((info.pod.scheduler_name, info.gating_plugin), set()).add(uid)
    assert {k: set(g) for k, g in u.gated.items()} == want_gated
    assert set(u.plain) == {uid for uid, info in u.items() if not info.gating_plugin}
    # The gated groups split by PodGroup, and every unschedulable pod numbered in filing order.
    want_by_group: dict[tuple[str, str], dict[tuple[str, str], set[str]]] = {}
    for uid, info in u.items():
        if info.gating_plugin:
            pg = (info.pod.namespace, info.pod.scheduling_group) if info.pod.scheduling_group else ("", "")
            want_by_group.setdefault((info.pod.scheduler_name, info.gating_plugin), {}).setdefault(pg, set()).add(uid)
    assert {k: {pg: set(m) for pg, m in g.items()} for k, g in u.by_pod_group.items()} == want_by_group
    assert set(u.order) == set(u)
    assert [u.order[uid] for uid in u.plain] == sorted(u.order[uid] for uid in u.plain)
    # The PodGroup index holds every queued or in-flight pod that names a group.
    indexed = q._groups.indexed()
    for info in q.pending():
        assert (info.uid in indexed) == bool(info.pod.scheduling_group), info.pod.name


def _scan_group(q: SchedulingQueue, namespace: str, name: str) -> list[str]:
    """What ``pop_group`` popped before its PodGroup index: a scan of activeQ, backoffQ and the
    ungated unschedulable pods, each in its order (the oracle the index must match)."""
    return [info.uid for info in ([i for i, _ in q._active.values()] + [i for i, _ in q._backoff.values()]
                                  + list(q._unschedulable.plain.values()))
            if info.pod.namespace == namespace and info.pod.scheduling_group == name]


def test_gated_pods_are_passed_at_once_by_events_their_plugin_did_not_register(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """With thousands of gated pods (SchedulingWhileGated), an event their gating plugin registered
    nothing for must not be tried pod by pod: SchedulingGates registers only the gated pod's own
    update, so a node or another pod's event asks no hint of any gated pod, and still moves the
    unschedulable pods it may help."""
    from scheduler.framework.runtime import Framework
    q, _ = queue()
    for i in range(50):
        q.add(pod(f"g{i}", spec={"schedulingGates": [{"name": "wait"}]}))
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None and info.pod.name == "p"
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info)
    asked: list[str] = []
    real = Framework.is_worth_ungating

    def counting(self: Framework, i: object, change: ClusterEvent) -> bool:
        asked.append(change.resource)
        return real(self, i, change)  # type: ignore[arg-type]
    monkeypatch.setattr(Framework, "is_worth_ungating", counting)
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"}))) == 1
    assert q.move_all_to_active_or_backoff(ClusterEvent("Pod", frozenset({"Add"}))) == 0
    assert asked == [] and q.counts()["gated"] == 50
    _index_is_consistent(q)


@pytest.mark.parametrize("seed", range(5))
def test_unschedulable_index_follows_every_operation(seed: int) -> None:
    """Random adds, updates (gates lifted or added), deletes, activations, failed attempts, cluster
    events and PodGroup pops: the gated and plain groups always match the unschedulable pods, and
    ``pop_group`` pops exactly what a scan of the queues finds, in the scan's order."""
    import random
    from dataclasses import replace
    rng = random.Random(seed)
    q, clock = queue()
    pods = {}
    for _ in range(300):
        op = rng.choice(("add", "add", "lift", "delete", "activate", "fail", "event", "flush", "group", "done"))
        name = f"p{rng.randrange(30)}"
        if op == "add":
            gates = [{"name": "g"}] if rng.random() < 0.5 else []
            spec: dict[str, object] = {"schedulingGates": gates} if gates else {}
            group = rng.choice(("", "a", "b"))
            if group:
                spec["schedulingGroup"] = {"podGroupName": group}
            pods[name] = pod(name, spec=spec or None)
            q.add(pods[name])
        elif op == "group":
            group = rng.choice(("a", "b"))
            want = _scan_group(q, "default", group)
            assert [i.uid for i in q.pop_group("default", group)] == want
            for uid in want:
                assert q.where(uid) == "inFlight"
        elif op == "done":
            inflight = [i for i in q.pending() if q.where(i.uid) == "inFlight"]
            if inflight:
                q.done(rng.choice(inflight).uid)     # bound: gone from the queue, its event not seen
        elif op == "lift" and name in pods:
            pods[name] = replace(pods[name], scheduling_gates=())
            q.update(pods[name])
        elif op == "delete" and name in pods:
            q.delete(pods.pop(name))
        elif op == "activate" and name in pods:
            q.activate([pods[name].uid])
        elif op == "fail":
            info = q.pop(0)
            if info is not None:
                info.unschedulable_plugins = {rng.choice(("NodeResourcesFit", "TaintToleration"))}
                q.add_unschedulable_if_not_present(info)
        elif op == "event":
            q.move_all_to_active_or_backoff(ClusterEvent(rng.choice(("Node", "Pod")), frozenset({"Add"})))
        elif op == "flush":
            clock.advance(rng.choice((1, 400)))
            q.flush()
        _index_is_consistent(q)


# --- SchedulerPopFromBackoffQ (beta, on in 1.37): upstream's tables, as data ----------------------
# Each case is named by its upstream file and case (pkg/scheduler/backend/queue/). Upstream builds
# QueuedPodInfos and calls the queue's internals (backoffQ.add, moveToActiveQ, moveToBackoffQ); so
# do these, through the same-named private methods. PreEnqueue rejection is SchedulingGates'
# (a pod with a scheduling gate), where upstream uses a test allowlist plugin.
def _gated_queue(gate: bool, clock: Clock | None = None) -> tuple[SchedulingQueue, Clock]:
    clock = clock or Clock()
    s, _ = make_scheduler(clock=clock)
    s.queue.pop_from_backoff = gate
    return s.queue, clock


def _info(name: str, clock: Clock, *, ts: float, attempts: int = 1, plugins: tuple[str, ...] = (),
          priority: int | None = None, gated: bool = False) -> QueuedPodInfo:
    spec = {"schedulingGates": [{"name": "g"}]} if gated else None
    return QueuedPodInfo(pod(name, priority=priority, spec=spec), clock() + ts, clock() + ts,
                         attempts=attempts, unschedulable_plugins=set(plugins))


def _push(q: SchedulingQueue, info: QueuedPodInfo) -> None:
    """Upstream's ``backoffQ.add``: straight into backoffQ (the queue's methods run under its lock)."""
    with q._lock:
        q._push_backoff(info, "PodAdd")


_POP_EACH_COMPLETED = [
    ("Both queues empty, no pods moved to activeQ", [], []),
    ("Pods only in backoffQ, some pods moved to activeQ", ["pod0", "pod1"], ["pod0"]),
    ("Pods only in errorBackoffQ, some pods moved to activeQ", ["pod2", "pod3"], ["pod2"]),
    ("Pods in both queues, some pods moved to activeQ", ["pod0", "pod1", "pod2", "pod3"], ["pod0", "pod2"]),
    ("Pods in both queues, all pods moved to activeQ", ["pod0", "pod2"], ["pod0", "pod2"]),
    ("Pods in both queues, no pods moved to activeQ", ["pod1", "pod3"], []),
]


@pytest.mark.parametrize("gate", [True, False], ids=["popFromBackoffQEnabled(true)", "popFromBackoffQEnabled(false)"])
@pytest.mark.parametrize(("case", "in_backoff", "want"), _POP_EACH_COMPLETED, ids=[c[0] for c in _POP_EACH_COMPLETED])
def test_backoff_queue_test_go_pop_each_backoff_completed(case: str, in_backoff: list[str], want: list[str],
                                                          gate: bool) -> None:
    """backoff_queue_test.go, TestBackoffQueue_popEachBackoffCompleted: the clock is upstream's
    ``time.Now()``, not on a window boundary."""
    q, clock = _gated_queue(gate, Clock(1000.37))
    infos = {
        "pod0": _info("pod0", clock, ts=-2, plugins=("plugin",)),
        "pod1": _info("pod1", clock, ts=1, plugins=("plugin",)),
        "pod2": _info("pod2", clock, ts=-2),
        "pod3": _info("pod3", clock, ts=1),
    }
    for name in in_backoff:
        _push(q, infos[name])
    got = [i.pod.name for i in q._pop_backoff_completed()]
    assert got == want
    assert q.counts()["backoff"] == len(in_backoff) - len(want)


def _ordering_infos(clock: Clock) -> list[QueuedPodInfo]:
    return [_info("pod0", clock, ts=0, plugins=("plugin",), priority=1),
            _info("pod1", clock, ts=-1, plugins=("plugin",), priority=1),
            _info("pod2", clock, ts=-2 + 0.001, plugins=("plugin",), priority=2),
            _info("pod3", clock, ts=-2, plugins=("plugin",), priority=1),
            _info("pod4", clock, ts=-2, plugins=("plugin",), priority=2),
            _info("pod5", clock, ts=-3, plugins=("plugin",), priority=1)]


def test_backoff_queue_test_go_ordering_same_window_by_priority_when_enabled() -> None:
    """backoff_queue_test.go, TestBackoffQueueOrdering, "Pods with the same window are ordered by
    priority if PopFromBackoffQ is enabled" (the clock on a window boundary, as upstream's)."""
    q, clock = _gated_queue(True, Clock(1000.0))
    for info in _ordering_infos(clock):
        _push(q, info)
    assert [i.pod.name for i in q._pop_backoff_completed()] == ["pod5", "pod4", "pod2", "pod3"]


def test_backoff_queue_test_go_ordering_priority_ignored_when_disabled() -> None:
    """backoff_queue_test.go, TestBackoffQueueOrdering, "Pods priority doesn't matter if
    PopFromBackoffQ is disabled": upstream wants pod5, pod4, pod3, pod2. pod3 and pod4 expire at
    the same instant and the disabled less function compares expiries only, so their relative order
    is whatever Go's (unstable) heap gives; the expiry order around them is what is checked."""
    q, clock = _gated_queue(False, Clock(1000.0))
    for info in _ordering_infos(clock):
        _push(q, info)
    got = [i.pod.name for i in q._pop_backoff_completed()]
    assert got[0] == "pod5" and set(got[1:3]) == {"pod3", "pod4"} and got[3:] == ["pod2"]


_MOVE_TO_ACTIVE = [
    # (case, gated pod, event, gate values, want unschedulable, want success)
    ("preEnqueue plugin registered, pod failed one preEnqueue plugin", True, "PodAdd", (True, False), 1, False),
    ("preEnqueue plugin registered, preEnqueue plugin would reject the pod, but isn't run", True,
     "BackoffComplete", (False,), 1, False),
    ("preEnqueue plugin registered, pod would fail one preEnqueue plugin, but is after backoff", True,
     "BackoffComplete", (True,), 0, True),
    ("preEnqueue plugin registered, pod passed all preEnqueue plugins", False, "PodAdd", (True, False), 0, True),
]


@pytest.mark.parametrize(("case", "gated", "event", "gate", "want_unschedulable", "want_success"),
                         [(c, g, e, v, u, s) for c, g, e, vs, u, s in _MOVE_TO_ACTIVE for v in vs],
                         ids=[f"{c} popFromBackoffQEnabled({v})" for c, _, _, vs, _, _ in _MOVE_TO_ACTIVE
                              for v in vs])
def test_scheduling_queue_test_go_move_to_active_q(case: str, gated: bool, event: str, gate: bool,
                                                   want_unschedulable: int, want_success: bool) -> None:
    """scheduling_queue_test.go, TestPriorityQueue_moveToActiveQ (its PreEnqueue cases): a pod
    moving out of backoffQ (``BackoffComplete``) skips PreEnqueue with the gate on."""
    q, clock = _gated_queue(gate)
    info = _info("bar", clock, ts=0, attempts=0, gated=gated)
    with q._lock:
        q._admit(info, event, from_backoff=event == "BackoffComplete")
    assert (q.where(info.uid) == "active") is want_success
    assert len(q._unschedulable) == want_unschedulable


_MOVE_TO_BACKOFF = [
    # (case, gated pod, gate values, want success)
    ("no plugins registered", False, (True, False), True),
    ("preEnqueue plugin registered, pod name would not be in allowlists", True, (False,), True),
    ("preEnqueue plugin registered, pod name not in allowlists", True, (True,), False),
    ("preEnqueue plugin registered, pod passed all preEnqueue plugins", False, (True, False), True),
]


@pytest.mark.parametrize(("case", "gated", "gate", "want_success"),
                         [(c, g, v, s) for c, g, vs, s in _MOVE_TO_BACKOFF for v in vs],
                         ids=[f"{c} popFromBackoffQEnabled({v})" for c, _, vs, _ in _MOVE_TO_BACKOFF for v in vs])
def test_scheduling_queue_test_go_move_to_backoff_q(case: str, gated: bool, gate: bool, want_success: bool) -> None:
    """scheduling_queue_test.go, TestPriorityQueue_moveToBackoffQ: with the gate on, PreEnqueue runs
    on the way into backoffQ, and a pod it rejects waits in unschedulable instead."""
    q, clock = _gated_queue(gate)
    info = _info("p", clock, ts=0, gated=gated)
    with q._lock:
        q._move_to_backoff(info, "PodAdd")
    assert (q.where(info.uid) == "backoff") is want_success
    assert (info.uid in q._unschedulable) is (not want_success)


@pytest.mark.parametrize(("gate", "want"), [(True, ["med", "high"]), (False, ["med"])],
                         ids=["Pop pods from both activeQ and backoffQ when PopFromBackoffQ is enabled",
                              "Pop pod only from activeQ when PopFromBackoffQ is disabled"])
def test_scheduling_queue_test_go_pop(gate: bool, want: list[str]) -> None:
    """scheduling_queue_test.go, TestPriorityQueue_Pop. Upstream's backoffQ pods have no attempt and
    its test never flushes; ``pop`` here flushes completed backoffs first, so the pods are given one
    attempt just now to be in backoffQ still when popped, which is the state upstream's case sets."""
    q, clock = _gated_queue(gate)
    q.add(pod("med", priority=100))
    _push(q, _info("high", clock, ts=0, plugins=("plugin",), priority=1000))
    _push(q, _info("hpp2", clock, ts=0, priority=1000))                          # errorBackoffQ
    unsched = _info("unsched", clock, ts=0, plugins=("plugin",))
    q._unschedulable[unsched.uid] = unsched
    got = []
    for _ in range(len(want) + 1):
        info = q.pop(0)
        if info is None:
            break
        got.append(info.pod.name)
    assert got == want


def _incoming(q: SchedulingQueue, queue: str, event: str) -> float | None:
    assert q._metrics is not None
    return q._metrics.registry.get_sample_value("scheduler_queue_incoming_pods_total",
                                                {"queue": queue, "event": event})


def test_empty_active_queue_pops_the_rejected_pod_without_waiting_its_backoff() -> None:
    """A pod that a node event moved to backoffQ is tried at once when nothing else is pending,
    counted as entering activeQ by ``PopFromBackoffQ``; the backoff gauge drops to zero."""
    q, _ = _gated_queue(True)
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info)
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"}))) == 1
    assert q.where(info.uid) == "backoff"
    assert q.pop(0) is info and info.attempts == 2           # no clock advance: backoff not waited
    assert _incoming(q, "active", "PopFromBackoffQ") == 1
    assert q.counts()["backoff"] == 0 and q.where(info.uid) == "inFlight"


def test_errored_pod_still_waits_its_backoff() -> None:
    """A pod that failed with an error (no rejector plugins) is in the error backoff heap, which
    PopFromBackoffQ never pops from: it waits for its backoff (1 s, then the 1 s window)."""
    q, clock = _gated_queue(True)
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    q.requeue_after_error(info)
    assert q.where(info.uid) == "backoff"
    assert q.pop(0) is None
    clock.advance(1.5)
    assert q.pop(0) is None                     # expiry 1001 is not before the window of 1001.5
    clock.advance(0.5)
    assert q.pop(0) is info
    assert _incoming(q, "active", "PopFromBackoffQ") is None


def test_gate_off_keeps_a_rejected_pod_in_backoff_until_it_expires() -> None:
    """``--feature-gates SchedulerPopFromBackoffQ=false``: pop waits out the backoff, as before."""
    q, clock = _gated_queue(False)
    q.add(pod("p"))
    info = q.pop(0)
    assert info is not None
    info.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(info)
    q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"})))
    assert q.pop(0) is None
    clock.advance(1.01)
    assert q.pop(0) is info


def test_service_passes_the_gate_to_its_queue() -> None:
    from scheduler.service import SchedulerService
    from tests.builders import MemoryClient
    assert SchedulerService(MemoryClient()).queue.pop_from_backoff is True
    off = SchedulerService(MemoryClient(), feature_gates={"SchedulerPopFromBackoffQ": False})
    assert off.queue.pop_from_backoff is False


def test_a_group_popped_from_backoff_counts_its_size() -> None:
    """active_queue.go ``unlockedPop``: an entity popped from backoffQ adds its size to
    ``PopFromBackoffQ``. Here the group's first pod is popped and ``pop_group`` gathers the rest,
    which count too; a pod popped from activeQ gathers without counting."""
    q, _ = _gated_queue(True)
    q.pod_group_exists = lambda ns, name: True
    members = [pod(f"m{i}", spec={"schedulingGroup": {"podGroupName": "g"}}) for i in range(3)]
    for p in members:
        q.add(p)
    for _ in members:
        info = q.pop(0)
        assert info is not None
        info.unschedulable_plugins = {"NodeResourcesFit"}
        q.add_unschedulable_if_not_present(info)
    assert q.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"}))) == 3
    assert q.counts()["backoff"] == 3

    first = q.pop(0)
    assert first is not None and len(q.pop_group("default", "g")) == 2
    assert _incoming(q, "active", "PopFromBackoffQ") == 3
    q2, _ = _gated_queue(True)
    for p in members:
        q2.add(p)
    assert q2.pop(0) is not None and len(q2.pop_group("default", "g")) == 2
    assert _incoming(q2, "active", "PopFromBackoffQ") is None


# --- PodGroups: a gang's gated members are decided per group -----------------------------------
def test_a_gangs_arrival_runs_pre_enqueue_once_an_arrival(monkeypatch: pytest.MonkeyPatch) -> None:
    """A gang of n arriving one pod at a time: each arrival (UnscheduledPod/Add) asked GangScheduling's
    PreEnqueue again for every gated member, n²/2 runs before the quorum. The queue now asks once a
    group while the gate holds: about 3n runs in all (each pod's own, one an arrival, and every member's
    once the quorum is met). Every member stays gated until the last one comes, then all are in
    activeQ; scheduler_queue_incoming_pods_total counts each re-gated member as before."""
    from scheduler.plugins.gangscheduling import GangScheduling
    from tests.test_podgroup_cycle import gang_service, group_obj, pod_obj
    n = 60
    s, _ = gang_service(1)
    s.on_pod_group("ADDED", group_obj("big", n))
    s.on_pod_group("ADDED", group_obj("small", 5))      # a gang that never completes: never asked
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"s{i}", group="small"))
    calls: list[str] = []
    real = GangScheduling.pre_enqueue

    def counting(self: GangScheduling, p: object) -> Status:
        calls.append(p.scheduling_group)  # type: ignore[attr-defined]
        return real(self, p)  # type: ignore[arg-type]
    monkeypatch.setattr(GangScheduling, "pre_enqueue", counting)
    for i in range(n):
        s.on_pod("ADDED", pod_obj(f"m{i}", group="big"))
        want = "gated" if i < n - 1 else "active"
        assert {s.queue.where(f"uid-m{j}") for j in range(i + 1)} == {want}, i
    assert calls.count("small") == 0
    assert calls.count("big") <= 3 * n
    assert {s.queue.where(f"uid-s{j}") for j in range(3)} == {"gated"}
    m = s.metrics.registry.get_sample_value(
        "scheduler_queue_incoming_pods_total", {"queue": "gated", "event": "UnscheduledPodAdd"})
    # Arrival i re-gates the i + 1 gated members (itself among them) until the last: as before
    # (the same figure as the pod-by-pod loop's, checked against it).
    assert m == n * (n - 1) / 2 + 3 * 4 / 2


def test_pop_group_takes_only_its_gangs_waiting_members() -> None:
    """activeQ, backoffQ and unschedulable members of the group come out, in that order; gated and
    in-flight members, other groups' pods and pods in no group stay."""
    q, _ = queue()
    a = [pod(f"a{i}", spec={"schedulingGroup": {"podGroupName": "a"}}) for i in range(4)]
    gated = pod("a-gated", spec={"schedulingGroup": {"podGroupName": "a"}, "schedulingGates": [{"name": "g"}]})
    b = pod("b0", spec={"schedulingGroup": {"podGroupName": "b"}})
    other_ns = pod("a-elsewhere", namespace="other", spec={"schedulingGroup": {"podGroupName": "a"}})
    for p in (*a, gated, b, other_ns, pod("plain")):
        q.add(p)
    first, second, third = q.pop(0), q.pop(0), q.pop(0)          # a0 in flight; a1, a2 fail
    assert first is not None and second is not None and third is not None
    second.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(second)                   # a1: unschedulable
    q.move_all_to_active_or_backoff(ClusterEvent("Namespace", frozenset({"Add"})))
    third.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(third)                    # a2: backoffQ (an event during its cycle)
    assert (q.where(a[1].uid), q.where(a[2].uid)) == ("unschedulable", "backoff")
    got = q.pop_group("default", "a")
    assert [i.pod.name for i in got] == ["a3", "a2", "a1"]
    assert all(q.where(p.uid) == "inFlight" for p in a)
    assert (q.where(gated.uid), q.where(b.uid), q.where(other_ns.uid)) == ("gated", "active", "active")
    q.delete(a[3])
    assert q.pop_group("default", "a") == []


@pytest.mark.parametrize(("forget", "want"), [(False, "backoff"), (True, "unschedulable")])
def test_activate_of_a_pod_in_flight_sends_its_failure_to_backoff(forget: bool, want: str) -> None:
    """upstream's ``Activate`` of an in-flight pod records ``EventForceActivate`` for it, and
    ``AddUnschedulableIfNotPresent`` then requeues it after backoff (queueAfterBackoff) instead of
    leaving it to wait for an event its rejectors asked for; ``forget_activation`` (the PodGroup
    cycle, for a group it rejects whole) drops the mark. A pod not activated waits as ever."""
    q, _ = queue()
    q.add(pod("a"))
    q.add(pod("b"))
    a, b = q.pop(0), q.pop(0)
    assert a is not None and b is not None
    q.activate([a.uid])
    if forget:
        q.forget_activation([a.uid])
    for info in (a, b):
        info.unschedulable_plugins = {"NodeResourcesFit"}
        q.add_unschedulable_if_not_present(info)
    assert (q.where(a.uid), q.where(b.uid)) == (want, "unschedulable")
    # The mark is spent: the next failure waits for an event.
    q.activate([a.uid])                     # not in flight now: moved to activeQ, as upstream's
    again = q.pop(0)
    assert again is not None and again.uid == a.uid
    again.unschedulable_plugins = {"NodeResourcesFit"}
    q.add_unschedulable_if_not_present(again)
    assert q.where(a.uid) == "unschedulable"
