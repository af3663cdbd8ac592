"""Extreme objects through the scheduling core (issue #12): the two incidents as they were found, then
a fuzz of valid-shaped but extreme pods and nodes. After each, an ordinary pod must still schedule,
and no exception may escape the core."""

from __future__ import annotations

import asyncio
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.errors import ParseError
from scheduler.service import SchedulerService
from tests.builders import MemoryClient

PROFILE = "s1"


def pod_obj(name: str, cpu: str | None = "100m", *, node: str = "", memory: str | None = None,
            spec: dict[str, Any] | None = None, namespace: str = "default") -> dict[str, Any]:
    requests = {k: v for k, v in (("cpu", cpu), ("memory", memory)) if v is not None}
    return {"metadata": {"name": name, "namespace": namespace, "uid": f"uid-{name}"},
            "spec": {"schedulerName": PROFILE, "nodeName": node or None,
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": requests}}],
                     **(spec or {})},
            "status": {"phase": "Pending"}}


def node_obj(name: str, cpu: str = "4", memory: str = "32Gi", pods: str = "110") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": pods}}}


def service(*nodes: dict[str, Any]) -> tuple[SchedulerService, MemoryClient]:
    client = MemoryClient()
    s = SchedulerService(client, seed=1)
    client.cache = s.cache
    assert s.on_profile("p", {"schedulerName": PROFILE}).accepted
    for n in nodes:
        s.on_node("ADDED", n)
    return s, client


def schedule(s: SchedulerService) -> None:
    asyncio.run(s.scheduler.run_until_idle())


def attempts(s: SchedulerService, result: str) -> float:
    return s.metrics.registry.get_sample_value("scheduler_schedule_attempts_total",
                                               {"result": result, "profile": PROFILE}) or 0.0


# --- the incidents, as found ---------------------------------------------------------------------
def test_a_bound_1e16_cpu_pod_fills_its_node_and_scheduling_goes_on() -> None:
    s, client = service(node_obj("n1"), node_obj("n2"))
    s.on_pod("ADDED", pod_obj("huge", "1e16", node="n1"))          # raised OverflowError in add_pod
    s.on_pod("ADDED", pod_obj("ordinary"))
    s.on_pod("ADDED", pod_obj("three", "3"))
    schedule(s)
    assert client.bound == {"uid-ordinary": "n2", "uid-three": "n2"}
    assert attempts(s, "error") == 0 and attempts(s, "scheduled") == 2
    s.on_pod("DELETED", pod_obj("huge", "1e16", node="n1"))        # the exact total comes back
    t = s.cache.table
    assert int(t.requested[t.row_of["n1"], t.resources["cpu"]]) == 0 and not t.info(t.row_of["n1"]).over


def test_three_4e15_pods_no_longer_wrap_the_total() -> None:
    s, client = service(node_obj("n1"))
    for i in range(3):
        s.on_pod("ADDED", pod_obj(f"w{i}", "4e15", node="n1"))
    s.on_pod("ADDED", pod_obj("three", "3"))
    schedule(s)
    assert client.bound == {}                                      # was bound to the full node
    ((key, reason, message, _),) = client.failures
    assert key == "default/three" and reason == "Unschedulable"
    assert message.startswith("0/1 nodes are available: 1 Insufficient cpu."), message
    assert attempts(s, "unschedulable") == 1 and attempts(s, "error") == 0   # was "invalid score"
    s.on_node("ADDED", node_obj("n2"))                             # NodeAdd requeues the pod
    s.on_pod("ADDED", pod_obj("later"))
    schedule(s)
    assert client.bound.get("uid-later") == "n2"
    assert attempts(s, "error") == 0


def test_a_pod_asking_more_than_any_node_fits_nowhere() -> None:
    s, client = service(node_obj("n1"), node_obj("n2", cpu="9223372036854775807"))
    s.on_pod("ADDED", pod_obj("greedy", "1e30"))
    schedule(s)
    assert client.bound == {}
    assert "2 Insufficient cpu" in client.failures[0][2]


# --- the fuzz ------------------------------------------------------------------------------------
QUANTITIES = ["0", "1n", "1m", "1", "100m", "4", "1Gi", "4e15", "1e16", "1e18", "1E", "8Ei", "7Ei",
              "9223372036854775807", "9223372036854775808", "1e64", "1" + "0" * 60, "0." + "0" * 40 + "1",
              "1" + "0" * 1200]
quantity = st.one_of(st.sampled_from(QUANTITIES), st.integers(0, 2**70).map(str),
                     st.integers(0, 10**6).map(lambda n: f"{n}m"))
RESOURCES = ["cpu", "memory", "ephemeral-storage", "example.com/gpu", "hugepages-2Mi"]
requests = st.dictionaries(st.sampled_from(RESOURCES), quantity, max_size=4)
container = st.builds(lambda r, i: {"name": "c", "image": f"img{i}", "resources": {"requests": r}},
                      requests, st.integers(0, 3))
init_container = st.builds(lambda c, always: {**c, **({"restartPolicy": "Always"} if always else {})},
                           container, st.booleans())
key = st.sampled_from(["zone", "kubernetes.io/hostname", "rack", "k"])
label_value = st.sampled_from(["a", "b", "1", "9" * 19, "-9223372036854775808", "x" * 63])
# Values inside selectors and affinity terms must be label values (labels.NewRequirement: the API
# server refuses the pod, and upstream's scheduler errors on it), so no leading "-" there.
selector_value = st.sampled_from(["a", "b", "1", "9" * 19, "9223372036854775807", "x" * 63])
selector = st.fixed_dictionaries({"matchLabels": st.dictionaries(key, selector_value, max_size=2)})
node_requirement = st.one_of(
    st.fixed_dictionaries({"key": key, "operator": st.sampled_from(["In", "NotIn"]),
                           "values": st.lists(selector_value, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"key": key, "operator": st.sampled_from(["Exists", "DoesNotExist"])}),
    st.fixed_dictionaries({"key": key, "operator": st.sampled_from(["Gt", "Lt"]),
                           "values": st.sampled_from([["0"], ["9223372036854775807"], ["0" * 40 + "1"]]
                                                     ).map(list)}))
term = st.fixed_dictionaries({"matchExpressions": st.lists(node_requirement, min_size=1, max_size=3)})
pod_term = st.fixed_dictionaries({"labelSelector": selector, "topologyKey": key})
weighted = st.fixed_dictionaries({"weight": st.integers(1, 100), "podAffinityTerm": pod_term})
affinity = st.fixed_dictionaries({}, optional={
    "nodeAffinity": st.fixed_dictionaries({}, optional={
        "requiredDuringSchedulingIgnoredDuringExecution": st.fixed_dictionaries(
            {"nodeSelectorTerms": st.lists(term, min_size=1, max_size=3)}),
        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(
            st.fixed_dictionaries({"weight": st.integers(1, 100), "preference": term}), max_size=20)}),
    "podAffinity": st.fixed_dictionaries({}, optional={
        "requiredDuringSchedulingIgnoredDuringExecution": st.lists(pod_term, max_size=3),
        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(weighted, max_size=20)}),
    "podAntiAffinity": st.fixed_dictionaries({}, optional={
        "requiredDuringSchedulingIgnoredDuringExecution": st.lists(pod_term, max_size=3),
        "preferredDuringSchedulingIgnoredDuringExecution": st.lists(weighted, max_size=20)}),
})
toleration = st.one_of(st.just({"operator": "Exists"}),
                       st.fixed_dictionaries({"key": key, "operator": st.just("Exists")}),
                       st.fixed_dictionaries({"key": key, "value": label_value,
                                              "effect": st.sampled_from(["NoSchedule", "NoExecute"])}))
spread = st.fixed_dictionaries({
    "maxSkew": st.sampled_from([1, 2, 2**31 - 1]), "topologyKey": key,
    "whenUnsatisfiable": st.sampled_from(["DoNotSchedule", "ScheduleAnyway"]), "labelSelector": selector})
pod_spec = st.fixed_dictionaries({
    "containers": st.one_of(st.lists(container, min_size=1, max_size=5),
                            st.integers(100, 1000).map(lambda n: [{"name": "c", "image": "i", "resources": {
                                "requests": {"cpu": "1E", "memory": "8Ei"}}}] * n)),
}, optional={
    "initContainers": st.one_of(st.lists(init_container, max_size=5),
                                st.integers(100, 1000).map(lambda n: [{"name": "i", "resources": {
                                    "requests": {"cpu": "1e16"}}}] * n)),
    "overhead": requests,
    "resources": st.fixed_dictionaries({"requests": requests}),
    "priority": st.sampled_from([0, -(2**31), 2**31 - 1]),
    "affinity": affinity,
    "tolerations": st.lists(toleration, max_size=30),
    "topologySpreadConstraints": st.lists(spread, max_size=4),
    "nodeSelector": st.dictionaries(key, label_value, max_size=2),
})
node_body = st.fixed_dictionaries({
    "metadata": st.fixed_dictionaries({"name": st.just("extreme"),
                                       "labels": st.dictionaries(key, label_value, max_size=3)}),
    "status": st.fixed_dictionaries({
        "allocatable": st.dictionaries(st.sampled_from([*RESOURCES, "pods"]), quantity, max_size=6),
        "images": st.lists(st.fixed_dictionaries({"names": st.just(["img1"]),
                                                  "sizeBytes": st.sampled_from([0, 2**63 - 1, 10**30])}),
                           max_size=2)}),
    "spec": st.fixed_dictionaries({}, optional={"taints": st.lists(st.fixed_dictionaries({
        "key": key, "value": label_value, "effect": st.sampled_from(["NoSchedule", "PreferNoSchedule"])}),
        max_size=3)}),
})


def _ordinary_still_schedules(s: SchedulerService, client: MemoryClient, name: str) -> None:
    # Another namespace, so the extreme pod's (anti-)affinity terms, which default to its own
    # namespace, do not apply; and of two plain nodes the extreme pod fills one at most.
    s.on_pod("ADDED", pod_obj(name, "100m", memory="100Mi", namespace="other"))
    schedule(s)
    assert client.bound.get(f"uid-{name}") in ("plain-a", "plain-b", "extreme"), (client.bound, client.failures[-3:])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(pod_spec, node_body, st.sampled_from(["pending", "assigned", "assigned-elsewhere"]))
def test_extreme_pods_and_nodes_never_stop_scheduling(spec: dict[str, Any], node: dict[str, Any],
                                                      how: str) -> None:
    s, client = service(node_obj("plain-a", cpu="64", memory="256Gi", pods="1000"),
                        node_obj("plain-b", cpu="64", memory="256Gi", pods="1000"))
    s.on_node("ADDED", node)
    target = {"pending": "", "assigned": "extreme", "assigned-elsewhere": "ghost"}[how]
    extreme = pod_obj("extreme", spec=spec, node=target)
    try:
        s.on_pod("ADDED", extreme)
    except ParseError:
        raise AssertionError("a valid-shaped pod must parse") from None
    schedule(s)
    assert attempts(s, "error") == 0, client.failures[-3:]
    _ordinary_still_schedules(s, client, "ordinary-1")
    # The extreme objects leave again; scheduling still works and the plain node's totals are exact.
    s.on_pod("DELETED", extreme)
    s.on_node("DELETED", node)
    _ordinary_still_schedules(s, client, "ordinary-2")
    assert attempts(s, "error") == 0
    t = s.cache.table
    for name in ("plain-a", "plain-b"):
        row = t.row_of[name]
        assert not t.info(row).over
        assert 0 <= int(t.requested[row, t.resources["cpu"]]) <= 64_000
