import pytest

from scheduler.framework.status import Status
from scheduler.framework.types import ClusterEvent
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
    """Random adds, updates (gates lifted or added), deletes, activations, failed attempts and
    cluster events: the gated and plain groups always match the unschedulable pods."""
    import random
    from dataclasses import replace
    rng = random.Random(seed)
    q, clock = queue()
    pods = {}
    for _ in range(300):
        op = rng.choice(("add", "add", "lift", "delete", "activate", "fail", "event", "flush"))
        name = f"p{rng.randrange(30)}"
        if op == "add":
            gates = [{"name": "g"}] if rng.random() < 0.5 else []
            pods[name] = pod(name, spec={"schedulingGates": gates} if gates else None)
            q.add(pods[name])
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
