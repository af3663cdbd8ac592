"""The scheduling and binding cycles, end to end through the core."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.errors import ClientError, ConflictError
from scheduler.framework import num_feasible_nodes_to_find
from scheduler.framework.cycle_state import CycleState
from tests.builders import make_scheduler, node, pod


def run(s) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(s.run_until_idle())


@pytest.mark.parametrize(("n", "want"), [(50, 50), (100, 100), (500, 230), (1000, 420), (2000, 680), (3000, 780),
                                         (5000, 500), (6000, 300), (15000, 750)])
def test_num_feasible_nodes_to_find(n: int, want: int) -> None:
    assert num_feasible_nodes_to_find(0, n) == want


def test_fit_error_text_as_upstream() -> None:
    s, client = make_scheduler()
    gpu = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    for i in range(2):
        s.cache.add_node(node(f"small{i}", cpu="1"))
    for i in range(3):
        s.cache.add_node(node(f"gpu{i}", taints=gpu))
    s.queue.add(pod("big", "2"))
    run(s)
    (key, reason, message, _), = client.failures
    assert (key, reason) == ("default/big", "Unschedulable")
    # Every node is unresolvable (too little total cpu, an untolerated taint), so DefaultPreemption,
    # in the default profile, has no candidate: upstream appends its own FitError.
    assert message == ("0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint(s). "
                       "preemption: 0/5 nodes are available: 5 Preemption is not helpful for scheduling.")
    assert s.queue.where(next(iter(s.queue.pending())).uid) == "unschedulable"


def test_counts_sort_as_strings() -> None:
    s, client = make_scheduler()
    for i in range(10):
        s.cache.add_node(node(f"a{i}", cpu="1"))
    for i in range(2):
        s.cache.add_node(node(f"b{i}", unschedulable=True))
    s.queue.add(pod("big", "2"))
    run(s)
    assert client.failures[0][2] == ("0/12 nodes are available: 10 Insufficient cpu, "
                                     "2 node(s) were unschedulable. preemption: 0/12 nodes are available: "
                                     "12 Preemption is not helpful for scheduling.")


def test_no_nodes() -> None:
    s, client = make_scheduler()
    s.queue.add(pod("p"))
    run(s)
    assert client.failures[0][2] == "no nodes available to schedule pods"


def test_binds_and_reports_scheduled() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.queue.add(pod("p"))
    run(s)
    assert client.scheduled == [("default/p", "Successfully assigned default/p to n1")]
    m = s.metrics
    assert m is not None
    assert m.registry.get_sample_value("scheduler_schedule_attempts_total",
                                       {"result": "scheduled", "profile": "default-scheduler"}) == 1


def test_unschedulable_pod_binds_after_node_added() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("small", cpu="1"))
    p = pod("p", "2")
    s.queue.add(p)
    run(s)
    assert not client.bound
    from scheduler.framework.types import ClusterEvent
    s.cache.add_node(node("big", cpu="8"))
    s.queue.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Add"})))
    s.clock.advance(1.5)  # type: ignore[attr-defined]
    run(s)
    assert client.bound == {p.uid: "big"}


def test_binding_error_forgets_and_requeues() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p", "1")
    client.bind_error = ClientError("boom", status=500)
    s.queue.add(p)
    run(s)
    assert s.cache.get_pod(p.uid) is None  # forgotten
    assert s.queue.where(p.uid) == "backoff"
    assert client.failures[0][1] == "SchedulerError"
    client.bind_error = None
    s.clock.advance(2)  # type: ignore[attr-defined]
    run(s)
    assert client.bound == {p.uid: "n1"}


def test_conflict_on_bind_is_never_retried() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p")
    client.bind_error = ConflictError("already bound", status=409)
    s.queue.add(p)
    run(s)
    assert s.cache.get_pod(p.uid) is None and p.uid not in s.queue
    assert not client.failures


def test_profile_gone_drops_pod() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    s.queue.add(pod("p", scheduler_name="other"))
    run(s)
    assert not client.bound and not client.failures


def test_full_scan_with_percentage_100_picks_global_best() -> None:
    s, client = make_scheduler({"percentageOfNodesToScore": 100})
    for i in range(300):
        s.cache.add_node(node(f"n{i}", cpu="4"))
    s.cache.add_node(node("huge", cpu="64", memory="256Gi"))
    s.queue.add(pod("p", "1"))
    run(s)
    assert set(client.bound.values()) == {"huge"}


def test_round_robin_start_index_advances() -> None:
    s, _ = make_scheduler()
    for i in range(1000):
        s.cache.add_node(node(f"n{i}"))
    fwk = s.profiles.current["default-scheduler"]
    s.queue.add(pod("p"))
    run(s)
    assert fwk.next_start_node_index == 420


def test_pod_with_unknown_topology_key_fails_cleanly() -> None:
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    spec = {"topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "no/such-key",
                                           "whenUnsatisfiable": "DoNotSchedule",
                                           "labelSelector": {"matchLabels": {"a": "b"}}}]}
    s.queue.add(pod("p", spec=spec))
    s.queue.add(pod("ok"))
    run(s)
    assert client.failures[0][2] == ("0/1 nodes are available: 1 node(s) didn't match pod topology spread "
                                     "constraints (missing required label). preemption: 0/1 nodes are "
                                     "available: 1 Preemption is not helpful for scheduling.")
    assert len(client.bound) == 1


def test_out_of_tree_plugin_from_entry_point() -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "fixtures" / "oot"))
    try:
        s, client = make_scheduler({"plugins": {"multiPoint": {"enabled": [{"name": "GpuFirst", "weight": 5}]}},
                                    "pluginConfig": [{"name": "GpuFirst", "args": {"required_label": "gpu"}}]})
        s.cache.add_node(node("cpu1"))
        s.cache.add_node(node("gpu1", labels={"gpu": "true", "gpu-count": "1"}))
        s.cache.add_node(node("gpu8", labels={"gpu": "true", "gpu-count": "8"}))
        s.queue.add(pod("p"))
        run(s)
        assert list(client.bound.values()) == ["gpu8"]
    finally:
        sys.path.remove(str(Path(__file__).parents[1] / "fixtures" / "oot"))


CLUSTER_NODES = st.lists(st.tuples(st.sampled_from(["1", "2", "4"]), st.sampled_from(["z1", "z2", "z3"]),
                                   st.booleans(), st.booleans()), min_size=1, max_size=12)
PODS = st.lists(st.tuples(st.sampled_from(["100m", "500m", "1", "3"]), st.booleans(), st.booleans(),
                          st.sampled_from(["a", "b"])), min_size=1, max_size=15)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CLUSTER_NODES, PODS, st.integers(0, 2**16))
def test_chosen_node_passes_every_filter(nodes: list, pods: list, seed: int) -> None:
    s, client = make_scheduler(seed=seed)
    taint = [{"key": "t", "value": "v", "effect": "NoSchedule"}]
    for i, (cpu, zone, tainted, unsched) in enumerate(nodes):
        s.cache.add_node(node(f"n{i}", cpu=cpu, labels={"topology.kubernetes.io/zone": zone},
                              taints=taint if tainted else [], unschedulable=unsched))
    created = []
    for i, (cpu, tolerate, spread, app) in enumerate(pods):
        spec: dict = {}
        if tolerate:
            spec["tolerations"] = [{"key": "t", "operator": "Exists"}]
        if spread:
            spec["topologySpreadConstraints"] = [{"maxSkew": 1, "topologyKey": "topology.kubernetes.io/zone",
                                                  "whenUnsatisfiable": "DoNotSchedule",
                                                  "labelSelector": {"matchLabels": {"app": app}}}]
            spec["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "kubernetes.io/hostname"}]}}
        p = pod(f"p{i}", cpu, labels={"app": app}, spec=spec)
        created.append(p)
        s.queue.add(p)
        # Schedule one pod at a time, then check its node against every filter with the pod removed.
        run(s)
        node_name = client.bound.get(p.uid)
        if node_name is None:
            continue
        fwk = s.profiles.current["default-scheduler"]
        with s.cache.lock:
            bound = s.cache.get_pod(p.uid)
            assert bound is not None
            s.cache.remove_pod(bound)
            snap = s.cache.snapshot()
            state = CycleState()
            fwk.run_pre_filter(state, p, snap)
            row = snap.row_of(node_name)
            assert row is not None
            assert fwk.run_filter_on_node(state, p, snap, row).is_success()
            s.cache.add_pod(bound)
    assert len(client.bound) == len(set(client.bound))


class Gate:
    """A Permit plugin that makes every pod wait up to 5 s."""

    name = "Gate"

    def permit(self, state, pod, node_name):  # type: ignore[no-untyped-def]
        from scheduler.framework import Status
        from scheduler.framework.status import Code
        return Status(Code.WAIT), 5.0


def gated_scheduler():  # type: ignore[no-untyped-def]
    from scheduler.plugins.registry import PluginSpec
    from tests import builders

    original = builders.Registry
    builders.Registry = lambda: original(extra={"Gate": PluginSpec("Gate", lambda a, h: Gate())})  # type: ignore[misc]
    try:
        return make_scheduler({"plugins": {"permit": {"enabled": [{"name": "Gate"}]}}})
    finally:
        builders.Registry = original  # type: ignore[misc]


def permit_decision(decide) -> tuple:  # type: ignore[no-untyped-def]
    """Schedule one pod that waits at Permit, call ``decide(framework, pod)`` while it waits."""
    s, client = gated_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p")
    s.queue.add(p)

    async def go() -> None:
        outcome = s.schedule_one(s.queue.pop(0))  # type: ignore[arg-type]
        task = asyncio.create_task(s.finish(outcome))
        await asyncio.sleep(0.01)
        assert not client.bound  # waiting at Permit
        decide(s.profiles.current["default-scheduler"], p)
        await task
    asyncio.run(go())
    return s, client, p


def test_permit_wait_then_allow() -> None:
    _, client, p = permit_decision(lambda fwk, p: fwk.allow(p.uid))
    assert client.bound == {p.uid: "n1"}


def test_permit_reject_unreserves_and_requeues() -> None:
    s, client, p = permit_decision(lambda fwk, p: fwk.reject(p.uid, "Gate", "not yet"))
    assert not client.bound and s.cache.get_pod(p.uid) is None
    assert client.failures[0][2] == "0/1 nodes are available: 1 not yet."
    # As upstream: the binding-cycle failure first fires AssignedPodDelete during the pod's own
    # cycle, so moveRequestCycle sends it to backoffQ rather than unschedulablePods.
    assert s.queue.where(p.uid) == "backoff"


# --- bad input that the API lets through: an upstream-style outcome, and the queue keeps flowing ---

_NOTHING = {"labelSelector": {"matchLabels": {"app": "nobody"}}, "topologyKey": "kubernetes.io/hostname"}


@pytest.mark.parametrize(("name", "cpu", "spec", "message"), [
    pytest.param("huge", "100000000", None,
                 "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
                 "3 Preemption is not helpful for scheduling.", id="huge requests"),
    pytest.param("tolerant", "100m", {"tolerations": [{"key": f"k{i}", "operator": "Exists"} for i in range(1000)]},
                 None, id="1000 tolerations"),
    pytest.param("lonely", "100m", {"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                                 [_NOTHING]}}},
                 "0/3 nodes are available: 3 node(s) didn't match pod affinity rules. preemption: 0/3 nodes are "
                 "available: 3 Preemption is not helpful for scheduling.", id="affinity matching nothing"),
    pytest.param("aloof", "100m", {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
                                                                    [_NOTHING]}}},
                 None, id="anti-affinity matching nothing"),
    pytest.param("nowhere", "100m", {"topologySpreadConstraints": [{
        "maxSkew": 1, "topologyKey": "no/such-key", "whenUnsatisfiable": "ScheduleAnyway",
        "labelSelector": {"matchLabels": {"a": "b"}}}]}, None, id="soft spread on a key no node has"),
    pytest.param("gpu", "100m", {"nodeSelector": {"gpu": "h100"}},
                 "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 "
                 "nodes are available: 3 Preemption is not helpful for scheduling.", id="selector no node has"),
])
def test_bad_input_gets_an_upstream_outcome_and_the_queue_flows(name: str, cpu: str, spec: dict | None,
                                                                 message: str | None) -> None:
    s, client = make_scheduler()
    for i in range(3):
        s.cache.add_node(node(f"n{i}"))
    odd = pod(name, cpu, spec=spec)
    s.queue.add(odd)
    normal = [pod(f"ok{i}") for i in range(5)]
    for p in normal:
        s.queue.add(p)
    run(s)
    assert all(p.uid in client.bound for p in normal)          # the rest of the queue kept flowing
    if message is None:
        assert odd.uid in client.bound
    else:
        assert odd.uid not in client.bound
        assert [m for k, _, m, _ in client.failures if k == odd.key] == [message]


def test_a_replica_that_may_no_longer_bind_hands_the_pod_back_before_prebind() -> None:
    """Issue #32: a deposed leader's binding cycle sends nothing; the pod is unassumed and waits in
    activeQ (no backoff, no FailedScheduling) for whoever leads."""
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p", "1")
    s.may_bind = lambda: False
    s.queue.add(p)
    assert asyncio.run(s.run_until_idle(max_cycles=1)) == 1
    assert client.bound == {} and not client.failures and not client.scheduled
    assert s.cache.get_pod(p.uid) is None                    # not left assumed
    assert s.queue.where(p.uid) == "active"
    s.may_bind = lambda: True                                # it leads again
    run(s)
    assert client.bound == {p.uid: "n1"}


def test_a_bind_refused_because_the_lease_went_meanwhile_is_handed_back_not_failed() -> None:
    """The edge refuses the Binding at the moment it would be sent (the fence closed while it waited
    for its rate-limit token): the pod is not the one at fault, so no backoff and no Event."""
    s, client = make_scheduler()
    s.cache.add_node(node("n1"))
    p = pod("p", "1")
    answers = iter([True, True])                             # before PreBind, before Bind; then closed
    s.may_bind = lambda: next(answers, False)
    client.bind_error = ClientError("not sent: this replica may no longer hold its leader election lease")
    s.queue.add(p)
    asyncio.run(s.run_until_idle(max_cycles=1))
    assert client.bound == {} and not client.failures
    assert s.cache.get_pod(p.uid) is None and s.queue.where(p.uid) == "active"
