"""HTTP extenders in the scheduling and binding cycles (#15 §8), through ``SchedulerService`` with
the real ``HTTPExtender`` and extenders served on 127.0.0.1.

``SCHEDULER_WITH_EXTENDERS`` is upstream's ``pkg/scheduler/extender_test.go`` TestSchedulerWithExtenders
(tests 1 to 11), its ``FakeExtender``s served over HTTP (``tests/extender_server.py``) and its test
plugins (TrueFilter, EqualPrioritizerPlugin, Node2Prioritizer) registered out of tree;
``SCHEDULER_BINDING`` is ``schedule_one_test.go`` TestSchedulerBinding (its fakeExtender's interest in
one pod is the pod requesting the resource the extender manages). The rest
follows ``schedule_one.go``: extender failures in the FitError, ignorable extenders skipped, an
extender that binds instead of DefaultBinder, and what a timeout or garbage does to the pod."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

import pytest

from scheduler.cycle import Binding, Failure
from scheduler.framework import SUCCESS, CycleState, Status
from scheduler.framework.decision import DECISION_ANNOTATION
from scheduler.framework.extender import EXTENDER_NAME
from scheduler.kubeapi.extender import http_extender
from scheduler.model import Pod
from scheduler.plugins.registry import PluginSpec, Registry
from scheduler.service import SchedulerService
from tests.builders import Clock, MemoryClient
from tests.extender_server import (
    ERROR,
    FALSE,
    NODE1,
    NODE2,
    TRUE,
    ExtenderServer,
    Predicate,
    Prioritizer,
    Raw,
    error_prioritizer,
    fake_bind,
    fake_filter,
    fake_prioritize,
    node1_prioritizer,
    node2_prioritizer,
    serving,
)


# --- upstream's test plugins (pkg/scheduler/testing/framework) ----------------------------------
class TrueFilter:
    name = "TrueFilter"

    def filter(self, state: CycleState, pod: Pod, node: Any) -> Status:
        return SUCCESS


class EqualPrioritizer:
    name = "EqualPrioritizerPlugin"

    def score(self, state: CycleState, pod: Pod, node: Any) -> tuple[int, Status]:
        return 1, SUCCESS


class Node2Prioritizer:
    name = "Node2Prioritizer"

    def score(self, state: CycleState, pod: Pod, node: Any) -> tuple[int, Status]:
        return (100 if node.name == "node2" else 10), SUCCESS


REGISTRY = Registry(extra={
    "TrueFilter": PluginSpec("TrueFilter", lambda a, h: TrueFilter()),
    "EqualPrioritizerPlugin": PluginSpec("EqualPrioritizerPlugin", lambda a, h: EqualPrioritizer()),
    "Node2Prioritizer": PluginSpec("Node2Prioritizer", lambda a, h: Node2Prioritizer()),
}, load_entry_points=False)


def pod_obj(name: str, *, requests: dict[str, str] | None = None, explain: bool = False) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}"}
    if explain:
        meta["annotations"] = {"scheduling.kopf-scheduler.io/explain": "true"}
    return {"metadata": meta, "spec": {"schedulerName": "s1", "containers": [
        {"name": "c", "image": "i", "resources": {"requests": requests or {"cpu": "100m"}}}]}, "status": {}}


def node_obj(name: str, cpu: str = "4") -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
            "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}


@dataclass
class Fake:
    """Upstream's FakeExtender, as a config and the handlers that serve it."""

    predicates: tuple[Predicate, ...] = ()
    prioritizers: tuple[tuple[Prioritizer, int], ...] = ()
    weight: int = 0
    uninterested: bool = False
    ignorable: bool = False
    binder: bool = False
    node_cache_capable: bool = False
    bound: dict[str, str] = field(default_factory=dict)

    def serve(self) -> ExtenderServer:
        verbs: dict[str, Any] = {}
        if self.predicates:
            verbs["filter"] = fake_filter(*self.predicates)
        if self.prioritizers:
            verbs["prioritize"] = fake_prioritize(*self.prioritizers)
        if self.binder:
            verbs["bind"] = fake_bind(self.bound)
        return ExtenderServer(**verbs)

    def config(self, url: str) -> dict[str, Any]:
        cfg: dict[str, Any] = {"urlPrefix": url, "ignorable": self.ignorable, "nodeCacheCapable": self.node_cache_capable}
        if self.predicates:
            cfg["filterVerb"] = "filter"
        if self.prioritizers:
            cfg["prioritizeVerb"] = "prioritize"
            cfg["weight"] = self.weight
        if self.binder:
            cfg["bindVerb"] = "bind"
        if self.uninterested:       # it manages a resource no pod here requests
            cfg["managedResources"] = [{"name": "example.com/unrequested"}]
        return cfg


def spec(plugins: dict[str, list[dict[str, Any]]], extenders: list[dict[str, Any]], **more: Any) -> dict[str, Any]:
    """A profile with only the given plugins (upstream's registerPlugins) and the extenders."""
    points = {"multiPoint": {"disabled": [{"name": "*"}], "enabled": [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]}}
    for point, enabled in plugins.items():
        points[point] = {"enabled": enabled}
    return {"schedulerName": "s1", "plugins": points, "extenders": extenders, **more}


def service(profile: dict[str, Any], nodes: Sequence[str] = ("node1", "node2")
            ) -> tuple[SchedulerService, MemoryClient]:
    client = MemoryClient()
    s = SchedulerService(client, seed=1, registry=REGISTRY, extender_factory=http_extender)
    client.cache = s.cache
    st = s.on_profile("p", profile)
    assert st.accepted, st.message
    for n in nodes:
        s.on_node("ADDED", node_obj(n))
    return s, client


@pytest.fixture
def servers() -> Iterator[ExitStack]:
    with ExitStack() as stack:
        yield stack


def start(stack: ExitStack, server: ExtenderServer) -> ExtenderServer:
    server.start()
    stack.callback(server.stop)
    return server


TRUE_FILTER = {"filter": [{"name": "TrueFilter"}]}
SCHEDULER_WITH_EXTENDERS: list[tuple[str, dict[str, list[dict[str, Any]]], list[Fake], list[str],
                                     tuple[str, int, int] | None]] = [
    ("test 1", TRUE_FILTER, [Fake((TRUE,)), Fake((ERROR,))], ["node1", "node2"], None),
    ("test 2", TRUE_FILTER, [Fake((TRUE,)), Fake((FALSE,))], ["node1", "node2"], None),
    ("test 3", {**TRUE_FILTER, "score": [{"name": "EqualPrioritizerPlugin", "weight": 1}]},
     [Fake((TRUE,)), Fake((NODE1,))], ["node1", "node2"], ("node1", 2, 1)),
    ("test 4", TRUE_FILTER, [Fake((NODE2,)), Fake((NODE1,))], ["node1", "node2"], None),
    ("test 5", TRUE_FILTER, [Fake((TRUE,), ((error_prioritizer, 10),), weight=1)], ["node1"], ("node1", 1, 1)),
    ("test 6", TRUE_FILTER, [Fake((TRUE,), ((node1_prioritizer, 10),), weight=1),
                             Fake((TRUE,), ((node2_prioritizer, 10),), weight=5)], ["node1", "node2"], ("node2", 2, 2)),
    ("test 7", {**TRUE_FILTER, "score": [{"name": "Node2Prioritizer", "weight": 20}]},
     [Fake((TRUE,), ((node1_prioritizer, 10),), weight=1)], ["node1", "node2"], ("node2", 2, 2)),
    # Not sent to an extender not interested in the pod (its errors would fail the pod).
    ("test 8", {**TRUE_FILTER, "score": [{"name": "Node2Prioritizer", "weight": 1}]},
     [Fake((ERROR,), ((error_prioritizer, 10),), weight=1, uninterested=True)], ["node1", "node2"], ("node2", 2, 2)),
    # An unavailable ignorable extender is skipped.
    ("test 9", {**TRUE_FILTER, "score": [{"name": "EqualPrioritizerPlugin", "weight": 1}]},
     [Fake((ERROR,), ignorable=True), Fake((NODE1,))], ["node1", "node2"], ("node1", 2, 1)),
    ("test 10 - no scoring, extender filters configured, multiple feasible nodes are evaluated", TRUE_FILTER,
     [Fake((TRUE,)), Fake((NODE1,))], ["node1", "node2"], ("node1", 2, 1)),
    ("test 11 - no scoring, no prefilters or  extender filters configured, a single feasible node is evaluated", {},
     [Fake(binder=True)], ["node1", "node2"], ("node1", 1, 1)),
]


@pytest.mark.parametrize(("name", "plugins", "fakes", "nodes", "want"), SCHEDULER_WITH_EXTENDERS,
                         ids=[c[0] for c in SCHEDULER_WITH_EXTENDERS])
def test_scheduler_with_extenders(servers: ExitStack, name: str, plugins: dict[str, list[dict[str, Any]]],
                                  fakes: list[Fake], nodes: list[str], want: tuple[str, int, int] | None) -> None:
    urls = [start(servers, f.serve()).url for f in fakes]
    s, _ = service(spec(plugins, [f.config(u) for f, u in zip(fakes, urls, strict=True)]), nodes)
    s.on_pod("ADDED", pod_obj("p"))
    info = s.queue.pop(timeout=0)
    assert info is not None
    outcome = s.scheduler.schedule_one(info)
    if want is None:
        assert isinstance(outcome, Failure)
        return
    assert isinstance(outcome, Binding), outcome
    r = outcome.result
    assert (r.node, r.evaluated_nodes, r.feasible_nodes) == want


# --- filter: the diagnosis ---------------------------------------------------------------------
def run(s: SchedulerService) -> None:
    asyncio.run(s.scheduler.run_until_idle())


def test_failed_nodes_are_the_fit_errors_reasons(servers: ExitStack) -> None:
    srv = start(servers, ExtenderServer(filter=fake_filter(NODE1)))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "filterVerb": "filter"}]),
                        ["node2", "node3"])
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    (key, reason, message, _), = client.failures
    assert (key, reason) == ("default/p", "Unschedulable")
    assert message == ('0/2 nodes are available: 1 FakeExtender: node "node2" failed, '
                       '1 FakeExtender: node "node3" failed.')
    info = next(iter(s.queue.pending()))
    assert info.unschedulable_plugins == {EXTENDER_NAME}
    assert s.queue.where(info.uid) == "unschedulable"
    # An extender registers no events: any cluster event may help.
    s.on_node("ADDED", node_obj("node1"))
    assert s.queue.where(info.uid) in ("active", "backoff")


def test_failed_and_unresolvable_nodes_are_not_preemption_candidates(servers: ExitStack) -> None:
    """With the default plugins (DefaultPreemption among them): FailedAndUnresolvableNodes become
    UnschedulableAndUnresolvable, which preemption does not try; both maps name a node: unresolvable wins."""
    def answer(args: dict[str, Any]) -> Any:
        return {"NodeNames": [], "FailedNodes": {"node1": "busy", "node2": "busy"},
                "FailedAndUnresolvableNodes": {"node1": "no GPU", "node2": "no GPU"}}
    srv = start(servers, ExtenderServer(filter=answer))
    s, client = service({"schedulerName": "s1", "extenders": [
        {"urlPrefix": srv.url, "filterVerb": "filter", "nodeCacheCapable": True}]})
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert client.failures[0][2] == ("0/2 nodes are available: 2 no GPU. preemption: 0/2 nodes are available: "
                                     "2 Preemption is not helpful for scheduling.")
    assert srv.requests[0][1]["NodeNames"] == ["node1", "node2"] and srv.requests[0][1]["Nodes"] is None


def test_the_pod_sent_is_the_pod_as_served(servers: ExitStack) -> None:
    srv = start(servers, ExtenderServer(filter=fake_filter(TRUE)))
    s, _ = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "filterVerb": "filter"}]))
    body = pod_obj("p")
    body["metadata"]["annotations"] = {"gpu.example.com/model": "a100"}
    s.on_pod("ADDED", body)
    run(s)
    args = srv.requests[0][1]
    assert args["Pod"] == body
    assert [n["metadata"]["name"] for n in args["Nodes"]["items"]] == ["node1", "node2"]
    assert args["Nodes"]["items"][0] == node_obj("node1")


# --- filter: timeouts and garbage --------------------------------------------------------------
@pytest.mark.parametrize(("answer", "message"), [
    (Raw(b"{}", delay=3), 'Post "{url}/filter": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'),
    (Raw(b"not json"), "invalid character 'o' in literal null (expecting 'u')"),
    (Raw(b"{}", 503), "failed filter with extender at URL {url}/filter, code 503"),
], ids=["timeout", "garbage", "503"])
def test_a_failing_extender_fails_the_attempt_with_its_error(servers: ExitStack, answer: Raw, message: str) -> None:
    srv = start(servers, ExtenderServer(filter=lambda a: answer))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "filterVerb": "filter", "httpTimeout": "300ms"}]))
    s.on_pod("ADDED", pod_obj("p", explain=True))
    run(s)
    (key, reason, got, nominated), = client.failures
    assert (key, reason, nominated) == ("default/p", "SchedulerError", None)
    assert got == message.format(url=srv.url)
    # Not lost: back in the queue with backoff, and never bound.
    assert s.queue.where("uid-p") == "backoff" and not client.bound
    record = json.loads(client.annotations["default/p"][DECISION_ANNOTATION])
    assert record["node"] is None and record["pod"] == "default/p"


def test_an_ignorable_extender_that_fails_is_skipped_with_a_log_line(servers: ExitStack,
                                                                     caplog: pytest.LogCaptureFixture) -> None:
    slow = start(servers, ExtenderServer(filter=lambda a: Raw(b"{}", delay=3)))
    garbage = start(servers, ExtenderServer(filter=lambda a: Raw(b"<html>")))
    only1 = start(servers, ExtenderServer(filter=fake_filter(NODE1)))
    s, client = service(spec(TRUE_FILTER, [
        {"urlPrefix": slow.url, "filterVerb": "filter", "httpTimeout": "200ms", "ignorable": True},
        {"urlPrefix": garbage.url, "filterVerb": "filter", "ignorable": True},
        {"urlPrefix": only1.url, "filterVerb": "filter"}]))
    s.on_pod("ADDED", pod_obj("p"))
    with caplog.at_level(logging.INFO, logger="kopf_scheduler.extender"):
        run(s)
    assert client.bound == {"uid-p": "node1"} and not client.failures
    skipped = [r.getMessage() for r in caplog.records if "ignorable flag set" in r.getMessage()]
    assert len(skipped) == 2
    assert f"extender={slow.url}" in skipped[0] and "context deadline exceeded" in skipped[0]


def test_ignorable_extenders_are_called_last() -> None:
    """buildExtenders puts the ignorable extenders at the tail of the list."""
    s, _ = service(spec(TRUE_FILTER, [
        {"urlPrefix": "http://127.0.0.1:1/a", "filterVerb": "f", "ignorable": True},
        {"urlPrefix": "http://127.0.0.1:1/b", "filterVerb": "f"}]))
    fwk = s.profiles.current["s1"]
    assert [e.name for e in fwk.extenders] == ["http://127.0.0.1:1/b", "http://127.0.0.1:1/a"]


# --- managedResources --------------------------------------------------------------------------
def test_only_pods_with_a_managed_resource_are_sent(servers: ExitStack) -> None:
    srv = start(servers, ExtenderServer(filter=fake_filter(FALSE)))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "filterVerb": "filter",
                                           "managedResources": [{"name": "example.com/gpu"}]}]))
    for n in ("node1", "node2"):
        s.on_node("MODIFIED", {**node_obj(n), "status": {"allocatable": {"cpu": "4", "memory": "32Gi", "pods": "110",
                                                                          "example.com/gpu": "4"}}})
    s.on_pod("ADDED", pod_obj("plain"))
    s.on_pod("ADDED", pod_obj("gpu", requests={"cpu": "100m", "example.com/gpu": "1"}))
    run(s)
    assert set(client.bound) == {"uid-plain"}
    assert [a["Pod"]["metadata"]["name"] for _, a in srv.requests] == ["gpu"]


def test_ignored_by_scheduler_resources_are_nodes_resources_fit_ignored_resources() -> None:
    """buildExtenders: a managed resource ignoredByScheduler is not checked by NodeResourcesFit (a
    node without the resource still fits); the extender alone decides on it."""
    s, _ = service({"schedulerName": "s1", "extenders": [
        {"urlPrefix": "http://127.0.0.1:1", "bindVerb": "bind", "ignorable": True,
         "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}]}]})
    assert s.profiles.current["s1"].plugin_args["NodeResourcesFit"].ignored_resources == ("example.com/gpu",)
    st = s.on_profile("q", {"schedulerName": "s2", "plugins": {"multiPoint": {"disabled": [{"name": "NodeResourcesFit"}]}},
                            "extenders": [{"urlPrefix": "http://x", "managedResources": [
                                {"name": "example.com/gpu", "ignoredByScheduler": True}]}]})
    assert not st.accepted and st.message == "spec.extenders: can't find NodeResourcesFitArgs in plugin config"


# --- prioritize ---------------------------------------------------------------------------------
def test_extender_scores_are_scaled_weighted_and_recorded(servers: ExitStack) -> None:
    """score × weight × (MaxNodeScore / MaxExtenderPriority), added to the plugins' total; the
    decision record shows them under the extender's name."""
    srv = start(servers, ExtenderServer(prioritize=lambda a: [{"Host": "node1", "Score": 3}, {"Host": "node2", "Score": 7},
                                                              {"Host": "elsewhere", "Score": 10}]))
    s, client = service(spec({**TRUE_FILTER, "score": [{"name": "EqualPrioritizerPlugin", "weight": 1}]},
                             [{"urlPrefix": srv.url, "prioritizeVerb": "prioritize", "weight": 2}]))
    s.on_pod("ADDED", pod_obj("p", explain=True))
    run(s)
    assert client.bound == {"uid-p": "node2"}
    record = json.loads(client.annotations["default/p"][DECISION_ANNOTATION])
    assert record["scores"] == [
        {"node": "node2", "total": 141, "plugins": {"EqualPrioritizerPlugin": 1, srv.url: 140}},
        {"node": "node1", "total": 61, "plugins": {"EqualPrioritizerPlugin": 1, srv.url: 60}}]


def test_a_failing_prioritizer_only_loses_its_scores(servers: ExitStack) -> None:
    bad = start(servers, ExtenderServer(prioritize=lambda a: Raw(b"", delay=3)))
    good = start(servers, ExtenderServer(prioritize=fake_prioritize((node2_prioritizer, 1))))
    s, client = service(spec(TRUE_FILTER, [
        {"urlPrefix": bad.url, "prioritizeVerb": "prioritize", "weight": 100, "httpTimeout": "200ms"},
        {"urlPrefix": good.url, "prioritizeVerb": "prioritize", "weight": 1}]))
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert client.bound == {"uid-p": "node2"} and not client.failures


# --- bind ---------------------------------------------------------------------------------------
def test_an_extender_binds_instead_of_default_binder(servers: ExitStack) -> None:
    bound: dict[str, str] = {}
    srv = start(servers, ExtenderServer(bind=fake_bind(bound)))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "bindVerb": "bind"}]))
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert bound == {"uid-p": "node1"} and client.bound == {}          # DefaultBinder never called
    assert client.scheduled == [("default/p", "Successfully assigned default/p to node1")]
    assert srv.requests == [("bind", {"PodName": "p", "PodNamespace": "default", "PodUID": "uid-p", "Node": "node1"})]


def test_a_bind_error_requeues_the_pod_and_it_binds_once_later(servers: ExitStack) -> None:
    bound: dict[str, str] = {}
    answers = iter([{"Error": "the GPU allocator is busy"}])

    def bind(args: dict[str, Any]) -> Any:
        got = next(answers, None)
        return got if got is not None else fake_bind(bound)(args)
    srv = start(servers, ExtenderServer(bind=bind))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "bindVerb": "bind"}]))
    clock = Clock()
    s.queue._clock = clock                                          # the service's queue, on test time
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert client.failures == [("default/p", "SchedulerError", "binding rejected: the GPU allocator is busy", None)]
    assert s.queue.where("uid-p") == "backoff" and s.cache.get_pod("uid-p") is None    # forgotten, not lost
    clock.advance(20)                                               # its backoff is over
    run(s)
    assert list(bound) == ["uid-p"] and client.bound == {}          # bound once, by the extender
    assert srv.verbs_called() == ["bind", "bind"]


def test_a_bind_timeout_requeues_the_pod(servers: ExitStack) -> None:
    srv = start(servers, ExtenderServer(bind=lambda a: Raw(b"{}", delay=3)))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "bindVerb": "bind", "httpTimeout": "200ms"}]))
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    (_, reason, message, _), = client.failures
    assert reason == "SchedulerError" and message == (
        f'binding rejected: Post "{srv.url}/bind": context deadline exceeded (Client.Timeout exceeded while '
        f"awaiting headers)")
    assert s.queue.where("uid-p") == "backoff" and not client.bound


def test_an_ignorable_binder_that_fails_leaves_the_pod_to_default_binder(servers: ExitStack) -> None:
    srv = start(servers, ExtenderServer(bind=lambda a: Raw(b"", 500)))
    s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "bindVerb": "bind", "ignorable": True}]))
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert client.bound == {"uid-p": "node1"} and srv.verbs_called() == ["bind"]


def test_a_binder_not_interested_in_the_pod_leaves_it_to_default_binder() -> None:
    with serving(bind=lambda a: {"Error": "must not be called"}) as srv:
        s, client = service(spec(TRUE_FILTER, [{"urlPrefix": srv.url, "bindVerb": "bind",
                                               "managedResources": [{"name": "example.com/gpu"}]}]))
        s.on_pod("ADDED", pod_obj("p"))
        run(s)
    assert client.bound == {"uid-p": "node1"} and srv.requests == []


# --- without a client ----------------------------------------------------------------------------
def test_a_process_without_an_extender_client_refuses_such_profiles() -> None:
    s = SchedulerService(MemoryClient())
    st = s.on_profile("p", {"schedulerName": "s1", "extenders": [{"urlPrefix": "http://127.0.0.1:1", "filterVerb": "f"}]})
    assert not st.accepted and st.message.startswith("spec.extenders: HTTP extenders are configured, but this process")


def test_bodies_are_kept_only_while_a_profile_has_extenders() -> None:
    s, _ = service(spec(TRUE_FILTER, [{"urlPrefix": "http://127.0.0.1:1", "filterVerb": "f"}]))
    s.on_pod("ADDED", pod_obj("p"))
    assert s.bodies.enabled and len(s.bodies) == 3                 # two nodes, one pending pod
    s.on_profile("p", spec(TRUE_FILTER, []))
    assert not s.bodies.enabled and len(s.bodies) == 0
    s.on_pod("MODIFIED", pod_obj("p"))
    assert len(s.bodies) == 0


# --- the nominated node, shadows ---------------------------------------------------------------
@pytest.mark.parametrize(("nominated", "want"), [("node1", ("node1", 1, 1)), ("node2", ("node1", 2, 1))])
def test_the_nominated_node_must_pass_the_extenders_too(servers: ExitStack, nominated: str,
                                                        want: tuple[str, int, int]) -> None:
    """evaluateNominatedNode: the nominated node alone, through the filters and the extenders; one
    the extenders refuse sends the pod to the full search."""
    srv = start(servers, ExtenderServer(filter=fake_filter(NODE1)))
    s, _ = service(spec({**TRUE_FILTER, "score": [{"name": "EqualPrioritizerPlugin", "weight": 1}]},
                        [{"urlPrefix": srv.url, "filterVerb": "filter"}]))
    body = pod_obj("p")
    body["status"] = {"nominatedNodeName": nominated}
    s.on_pod("ADDED", body)
    info = s.queue.pop(timeout=0)
    assert info is not None
    outcome = s.scheduler.schedule_one(info)
    assert isinstance(outcome, Binding)
    assert (outcome.result.node, outcome.result.evaluated_nodes, outcome.result.feasible_nodes) == want


def test_a_shadow_with_an_extender_decides_with_it(servers: ExitStack) -> None:
    """A shadow whose extender refuses the live choice runs its whole algorithm (extenders
    included) and counts the difference; it binds nothing."""
    srv = start(servers, ExtenderServer(filter=fake_filter(NODE2)))
    s, client = service(spec(TRUE_FILTER, []), ["node1"])
    st = s.on_profile("shadow", {**spec(TRUE_FILTER, [{"urlPrefix": srv.url, "filterVerb": "filter"}]),
                                 "shadowOf": "s1"})
    assert st.accepted, st.message
    s.on_pod("ADDED", pod_obj("p"))
    run(s)
    assert client.bound == {"uid-p": "node1"}
    shadow = s.shadows.get("shadow")
    assert shadow is not None and dict(shadow.stats.counts)["wouldBePending"] == 1
    assert srv.verbs_called() == ["filter"]


# --- schedule_one_test.go TestSchedulerBinding ---------------------------------------------------
@dataclass
class BindFake:
    """schedule_one_test.go's fakeExtender: a binder or not, interested in one pod (here: the pod
    requesting the resource it manages), failing its binds or not."""

    is_binder: bool
    interested_pod_name: str
    err_bind: bool = False
    ignorable: bool = False

    def serve(self, got: list[str]) -> ExtenderServer:
        def bind(args: dict[str, Any]) -> Any:
            if self.err_bind:
                return {"Error": "bind error"}
            got.append(args["PodName"])
            return {}
        return ExtenderServer(bind=bind)

    def config(self, url: str, i: int) -> dict[str, Any]:
        cfg: dict[str, Any] = {"urlPrefix": url, "ignorable": self.ignorable,
                               "managedResources": [{"name": f"example.com/ext{i}"}]}
        if self.is_binder:
            cfg["bindVerb"] = "bind"
        return cfg


SCHEDULER_BINDING: list[tuple[str, str, list[BindFake], int]] = [
    ("the extender is not a binder", "pod0", [BindFake(False, "pod0")], -1),
    ("one of the extenders is a binder and interested in pod", "pod0",
     [BindFake(False, "pod0"), BindFake(True, "pod0")], 1),
    ("one of the extenders is a binder, but not interested in pod", "pod1",
     [BindFake(False, "pod1"), BindFake(True, "pod0")], -1),
    ("ignore when extender bind returns error", "pod1", [BindFake(True, "pod1", err_bind=True, ignorable=True)], -1),
]


@pytest.mark.parametrize(("name", "pod_name", "fakes", "want_binder"), SCHEDULER_BINDING,
                         ids=[c[0] for c in SCHEDULER_BINDING])
def test_scheduler_binding(servers: ExitStack, name: str, pod_name: str, fakes: list[BindFake],
                           want_binder: int) -> None:
    got: list[list[str]] = [[] for _ in fakes]
    urls = [start(servers, f.serve(g)).url for f, g in zip(fakes, got, strict=True)]
    s, client = service(spec({}, [f.config(u, i) for i, (f, u) in enumerate(zip(fakes, urls, strict=True))]),
                        ["node"])
    # Interested in the pod: the extenders managing a resource it requests.
    s.on_pod("ADDED", pod_obj(pod_name, requests={f"example.com/ext{i}": "1" for i, f in enumerate(fakes)
                                                   if f.interested_pod_name == pod_name}))
    run(s)
    assert not client.failures
    assert (client.bound == {f"uid-{pod_name}": "node"}) is (want_binder == -1)     # the default binding
    for i, g in enumerate(got):
        assert (g == [pod_name]) is (i == want_binder), (i, g)


def test_preemption_lets_an_extender_revise_the_candidates(servers: ExitStack) -> None:
    """preemption.go: between the dry run and choosing a node, an extender with preemptVerb revises
    the candidates. node1's victim would be the natural pick (its pod started later); the extender
    keeps only node2, so node2 is nominated and its pod is the one preempted."""
    def keep_node2(args: dict[str, Any]) -> Any:
        return {"NodeNameToMetaVictims": {"node2": args["NodeNameToMetaVictims"]["node2"]}}
    srv = start(servers, ExtenderServer(preempt=keep_node2))
    s, client = service({"schedulerName": "s1", "extenders": [
        {"urlPrefix": srv.url, "preemptVerb": "preempt", "nodeCacheCapable": True}]})
    for name, node, started in (("low1", "node1", "2026-01-02T00:00:00Z"), ("low2", "node2", "2026-01-01T00:00:00Z")):
        body = pod_obj(name, requests={"cpu": "4"})
        body["spec"]["nodeName"] = node
        body["status"] = {"phase": "Running", "startTime": started}
        s.on_pod("ADDED", body)
    high = pod_obj("high", requests={"cpu": "4"})
    high["spec"]["priority"] = 100
    s.on_pod("ADDED", high)
    run(s)
    (victim, preemptor, node), = client.preempted
    assert (victim, preemptor, node) == ("default/low2", "default/high", "node2")
    assert set(srv.requests[0][1]["NodeNameToMetaVictims"]) == {"node1", "node2"}
    assert client.failures[0][3] == "node2"            # the nomination
