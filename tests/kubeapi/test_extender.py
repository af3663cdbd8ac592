"""``HTTPExtender`` against a real HTTP extender on 127.0.0.1: upstream's wire types, Go's
decoding, upstream's error texts, timeouts, TLS, and ports of ``pkg/scheduler/extender_test.go``
(TestIsInterested, TestConvertToMetaVictims, TestConvertToVictims)."""

from __future__ import annotations

import asyncio
import base64
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from scheduler.framework.extender import Victims
from scheduler.kubeapi.extender import ExtenderError, HTTPExtender, decode_first, node_object, pod_object
from scheduler.model import Node, Pod, parse_node, parse_pod
from scheduler.profiles.extender_config import ExtenderConfig
from scheduler.simulator.tls import SelfSigned
from tests.extender_server import NODE1, Raw, RawExtender, fake_filter, serving


def pod_body(name: str = "p", uid: str = "uid-p", containers: list[dict[str, Any]] | None = None,
             init: list[dict[str, Any]] | None = None, node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "s", "containers": containers or [{"name": "app", "image": "i"}]}
    if init:
        spec["initContainers"] = init
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "default", "uid": uid}, "spec": spec, "status": {}}


def node_body(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "labels": {"zone": "a"}, "annotations": {"gpu/model": "x"}},
            "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}


class Objects:
    """An ObjectSource over plain dicts (the service's ObjectBodies in the tests)."""

    def __init__(self, pods: Mapping[str, dict[str, Any]] | None = None,
                 nodes: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.pods, self.nodes = dict(pods or {}), dict(nodes or {})

    def pod(self, pod: Pod) -> Mapping[str, Any] | None:
        return self.pods.get(pod.uid)

    def node(self, name: str) -> Mapping[str, Any] | None:
        return self.nodes.get(name)


def extender(url: str, objects: Objects | None = None, **cfg: Any) -> HTTPExtender:
    return HTTPExtender(ExtenderConfig.model_validate({"urlPrefix": url, **cfg}), objects or Objects())


NODES = [parse_node(node_body(n)) for n in ("node1", "node2", "node3")]
POD = parse_pod(pod_body())


# --- what is sent ------------------------------------------------------------------------------
def test_filter_sends_the_pod_and_nodes_as_served() -> None:
    body = pod_body()
    objs = Objects({"uid-p": body}, {n.name: node_body(n.name) for n in NODES[:2]})
    with serving(filter=fake_filter(NODE1)) as srv:
        got = extender(srv.url + "/scheduler/", objs, filterVerb="filter").filter(POD, NODES)
    assert got.nodes == ("node1",)
    assert got.failed == {"node2": 'FakeExtender: node "node2" failed', "node3": 'FakeExtender: node "node3" failed'}
    (verb, args), = srv.requests
    assert verb == "filter" and list(args) == ["Pod", "Nodes", "NodeNames"]
    assert args["Pod"] == body and args["NodeNames"] is None
    # node3's body was never kept: it goes as the scheduler keeps it.
    assert args["Nodes"] == {"metadata": {}, "items": [node_body("node1"), node_body("node2"), node_object(NODES[2])]}
    assert node_object(NODES[2])["status"]["allocatable"] == {"cpu": "4", "memory": "8589934592", "pods": "110"}


def test_node_cache_capable_sends_names_only() -> None:
    with serving(filter=fake_filter(NODE1), prioritize=lambda a: [{"Host": "node1", "Score": 3}]) as srv:
        ext = extender(srv.url, filterVerb="filter", prioritizeVerb="prioritize", weight=2, nodeCacheCapable=True)
        assert ext.filter(POD, NODES).nodes == ("node1",)
        assert ext.prioritize(POD, NODES) == ([("node1", 3)], 2)
    for _, args in srv.requests:
        assert args["Nodes"] is None and args["NodeNames"] == ["node1", "node2", "node3"]
    assert srv.requests[0][1]["Pod"] == pod_object(POD)     # no body kept: the pod as the scheduler keeps it


# --- what is read, as Go's encoding/json reads it ----------------------------------------------
FILTER_ANSWERS = [
    ("keys match ignoring case, unknown keys ignored",
     {"nodenames": ["node2"], "failednodes": {"node1": "busy"}, "extra": 1}, True, ("node2",), {"node1": "busy"}),
    ("NodeNames without nodeCacheCapable: Nodes is read, and is absent, so nothing is kept",
     {"NodeNames": ["node2"]}, False, (), {}),
    ("neither list: nothing is kept", {"FailedNodes": {"node1": "x"}}, True, (), {"node1": "x"}),
    ("null fields are empty", {"NodeNames": ["node1"], "FailedNodes": None, "Error": None}, True, ("node1",), {}),
    ("its own order is kept", {"NodeNames": ["node3", "node1"]}, True, ("node3", "node1"), {}),
]


@pytest.mark.parametrize(("name", "answer", "cache", "nodes", "failed"), FILTER_ANSWERS,
                         ids=[c[0] for c in FILTER_ANSWERS])
def test_filter_answers(name: str, answer: Any, cache: bool, nodes: tuple[str, ...], failed: dict[str, str]) -> None:
    with serving(filter=lambda a: answer) as srv:
        got = extender(srv.url, filterVerb="filter", nodeCacheCapable=cache).filter(POD, NODES)
    assert (got.nodes, dict(got.failed)) == (nodes, failed)


def url_of(srv: Any, verb: str) -> str:
    return f"{srv.url}/{verb}"


BAD_ANSWERS = [
    ("its Error", {"Error": "no GPU left"}, "no GPU left"),
    ("a node it was not given", {"NodeNames": ["node9"]},
     'extender "{url}" claims a filtered node "node9" which is not found in the input node list'),
    ("a wrong type", {"NodeNames": "node1"},
     "json: cannot unmarshal string into Go struct field ExtenderFilterResult.NodeNames of type []string"),
    ("a wrong element type", {"FailedNodes": {"node1": 3}},
     "json: cannot unmarshal number into Go struct field ExtenderFilterResult.FailedNodes of type string"),
    ("not an object", Raw(b"[1]"), "json: cannot unmarshal array into Go value of type v1.ExtenderFilterResult"),
    ("garbage", Raw(b"<html>oops</html>"), "invalid character '<' looking for beginning of value"),
    ("an empty body", Raw(b""), "EOF"),
    ("a cut answer", Raw(b'{"NodeNames": ["node1"'), "unexpected EOF"),
    ("a missing comma", Raw(b'{"NodeNames": ["node1" "node2"]}'), "invalid character '\"' after array element"),
    ("a 500", Raw(b"boom", 500), "failed filter with extender at URL {url}/filter, code 500"),
]


@pytest.mark.parametrize(("name", "answer", "message"), BAD_ANSWERS, ids=[c[0] for c in BAD_ANSWERS])
def test_a_bad_answer_is_an_error_worded_as_upstream(name: str, answer: Any, message: str) -> None:
    with serving(filter=lambda a: answer) as srv, pytest.raises(ExtenderError) as e:
        extender(srv.url, filterVerb="filter", nodeCacheCapable=True).filter(POD, NODES)
    assert str(e.value) == message.format(url=srv.url)


def test_only_the_first_json_value_counts() -> None:
    assert decode_first(b' {"a": 1} trailing garbage') == {"a": 1}


def test_prioritize_reads_a_host_priority_list() -> None:
    answer = [{"host": "node1", "score": 7}, {"Host": "node2", "Score": 2}]
    with serving(prioritize=lambda a: answer) as srv:
        assert extender(srv.url, prioritizeVerb="prioritize", weight=3).prioritize(POD, NODES) == (
            [("node1", 7), ("node2", 2)], 3)
    with serving(prioritize=lambda a: [{"Host": "node1", "Score": 5.5}]) as srv, pytest.raises(ExtenderError) as e:
        extender(srv.url, prioritizeVerb="prioritize", weight=3).prioritize(POD, NODES)
    assert str(e.value) == "json: cannot unmarshal number 5.5 into Go struct field HostPriority.Score of type int64"


# --- time and the network ----------------------------------------------------------------------
def test_a_slow_extender_times_out_within_its_http_timeout() -> None:
    with serving(filter=lambda a: Raw(b"{}", delay=3)) as srv:
        ext = extender(srv.url, filterVerb="filter", httpTimeout="300ms")
        t0 = time.monotonic()
        with pytest.raises(ExtenderError) as e:
            ext.filter(POD, NODES)
        took = time.monotonic() - t0
    assert str(e.value) == (f'Post "{srv.url}/filter": context deadline exceeded '
                            f"(Client.Timeout exceeded while awaiting headers)")
    assert 0.25 < took < 1.5


@pytest.mark.parametrize("mode", ["trickle", "silent"])
def test_http_timeout_is_a_deadline_on_the_whole_call(mode: str) -> None:
    """An extender that answers a status line and then a byte every 0.2 s (each read is quick, so a
    per-read timeout never trips), or one that never answers: the call ends at its httpTimeout."""
    with RawExtender(mode, period=0.2) as srv:
        ext = extender(srv.url, filterVerb="filter", prioritizeVerb="prioritize", httpTimeout="1s")
        for call in (ext.filter, ext.prioritize):
            t0 = time.monotonic()
            with pytest.raises(ExtenderError) as e:
                call(POD, NODES)
            took = time.monotonic() - t0
            assert 0.9 < took < 1.5, (call, took)
            assert str(e.value) == f'Post "{srv.url}/{call.__name__}": context deadline exceeded ' \
                                   f"(Client.Timeout exceeded while awaiting headers)"


def test_an_unreachable_extender_is_an_error() -> None:
    with serving() as srv:
        url = srv.url
    with pytest.raises(ExtenderError, match=r'^Post "http://127\.0\.0\.1:\d+/filter": dial tcp 127\.0\.0\.1:\d+: '
                                            r"connect: connection refused$"):
        extender(url, filterVerb="filter", httpTimeout="1s").filter(POD, NODES)


def test_default_timeout_is_upstreams() -> None:
    assert extender("http://127.0.0.1:1", filterVerb="f").timeout == 5.0
    assert extender("http://127.0.0.1:1", filterVerb="f", httpTimeout="0s").timeout == 5.0
    assert extender("http://127.0.0.1:1", filterVerb="f", httpTimeout="1m30s").timeout == 90.0


# --- bind --------------------------------------------------------------------------------------
def test_bind_sends_extender_binding_args() -> None:
    bound_pod = parse_pod(pod_body("web", "uid-web"))
    with serving(bind=lambda a: {}) as srv:
        asyncio.run(extender(srv.url, bindVerb="bind").bind(bound_pod, "node2"))
    assert srv.requests == [("bind", {"PodName": "web", "PodNamespace": "default", "PodUID": "uid-web",
                                      "Node": "node2"})]
    with serving(bind=lambda a: {"Error": "node2 is full"}) as srv, pytest.raises(ExtenderError, match=r"^node2 is full$"):
        asyncio.run(extender(srv.url, bindVerb="bind").bind(bound_pod, "node2"))
    with serving(bind=lambda a: Raw(b"{}", delay=3)) as srv, pytest.raises(ExtenderError) as e:
        asyncio.run(extender(srv.url, bindVerb="bind", httpTimeout="200ms").bind(bound_pod, "node2"))
    assert "context deadline exceeded" in str(e.value) and str(e.value).startswith(f'Post "{srv.url}/bind"')


# --- TLS, as makeTransport ---------------------------------------------------------------------
def test_https_extender(tmp_path: Path) -> None:
    pair = SelfSigned(tmp_path)
    other = SelfSigned(tmp_path, stem="other")
    with serving(tls=pair.server_context(), filter=fake_filter(NODE1)) as srv:
        ca = base64.b64encode(pair.cert_pem).decode()
        # enableHTTPS without a CA: not verified, as upstream.
        assert extender(srv.url, filterVerb="filter", enableHTTPS=True).filter(POD, NODES).nodes == ("node1",)
        assert extender(srv.url, filterVerb="filter", tlsConfig={"caData": ca}).filter(POD, NODES).nodes == ("node1",)
        assert extender(srv.url, filterVerb="filter", tlsConfig={"caFile": str(pair.cert_file)}).filter(
            POD, NODES).nodes == ("node1",)
        with pytest.raises(ExtenderError, match="tls: failed to verify certificate"):
            extender(srv.url, filterVerb="filter", tlsConfig={"caFile": str(other.cert_file)}).filter(POD, NODES)
    with pytest.raises(ValueError, match="specifying a root certificates file with the insecure flag is not allowed"):
        extender(srv.url, filterVerb="filter", tlsConfig={"caData": ca, "insecure": True})


# --- extender_test.go TestIsInterested ----------------------------------------------------------
IS_INTERESTED = [
    ("Empty managed resources", [], pod_body(), True),
    ("Managed memory, empty resources", ["memory"], pod_body(), False),
    ("Managed memory, container memory with Requests", ["memory"],
     pod_body(containers=[{"name": "c", "image": "i", "resources": {"requests": {"memory": "0"}}}]), True),
    ("Managed memory, container memory with Limits", ["memory"],
     pod_body(containers=[{"name": "c", "image": "i", "resources": {"limits": {"memory": "0"}}}]), True),
    ("Managed memory, init container memory", ["memory"],
     pod_body(init=[{"name": "i", "image": "i", "resources": {"requests": {"memory": "0"}}}]), True),
]


@pytest.mark.parametrize(("label", "managed", "body", "want"), IS_INTERESTED, ids=[c[0] for c in IS_INTERESTED])
def test_is_interested(label: str, managed: list[str], body: dict[str, Any], want: bool) -> None:
    """Upstream builds the extender with managedResources {memory} directly (validation would refuse
    "memory" in a config: not an extended resource); so does this port."""
    pod = parse_pod(body)
    ext = extender("http://127.0.0.1:1", Objects({pod.uid: body}))
    ext._managed = frozenset(managed)
    assert ext.is_interested(pod) is want


def test_is_interested_without_the_body_reads_the_requests() -> None:
    body = pod_body(containers=[{"name": "c", "image": "i", "resources": {"limits": {"example.com/gpu": "1"},
                                                                           "requests": {"example.com/gpu": "1"}}}])
    ext = extender("http://127.0.0.1:1", managedResources=[{"name": "example.com/gpu"}])
    assert ext.is_interested(parse_pod(body)) and not ext.is_interested(POD)


# --- extender_test.go TestConvertToMetaVictims / TestConvertToVictims ----------------------------
def victim(name: str, uid: str) -> Pod:
    return parse_pod(pod_body(name, uid, node="node1"))


def test_convert_to_meta_victims() -> None:
    """TestConvertToMetaVictims "NumPDBViolations is transferred": a nodeCacheCapable extender is sent
    the victims' UIDs and the violation counts."""
    pods = {n: victim(n, u) for n, u in (("pod1", "uid1"), ("pod3", "uid3"), ("pod2", "uid2"), ("pod4", "uid4"))}
    victims = {"node1": Victims((pods["pod1"], pods["pod3"]), 1), "node2": Victims((pods["pod2"], pods["pod4"]), 2)}
    with serving(preempt=lambda a: {}) as srv:
        got = extender(srv.url, preemptVerb="preempt", nodeCacheCapable=True).process_preemption(
            POD, victims, lambda n: {})
    assert got == {}
    args = srv.requests[0][1]
    assert args["NodeNameToVictims"] is None
    assert args["NodeNameToMetaVictims"] == {
        "node1": {"Pods": [{"UID": "uid1"}, {"UID": "uid3"}], "NumPDBViolations": 1},
        "node2": {"Pods": [{"UID": "uid2"}, {"UID": "uid4"}], "NumPDBViolations": 2}}


CONVERT_TO_VICTIMS = [
    ("NumPDBViolations is transferred from NodeNameToMetaVictims to newNodeNameToVictims",
     {"node1": {"Pods": [{"UID": "uid1"}, {"UID": "uid3"}], "NumPDBViolations": 1},
      "node2": {"Pods": [{"UID": "uid2"}, {"UID": "uid4"}], "NumPDBViolations": 2}},
     {"node1": (["uid1", "uid3"], 1), "node2": (["uid2", "uid4"], 2)}, ""),
    ("a pod not on that node", {"node1": {"Pods": [{"UID": "uid2"}], "NumPDBViolations": 0}}, None,
     "extender: {url} claims to preempt pod (UID: &{{uid2}}) on node: node1, but the pod is not found on that node"),
    ("a node that is not there", {"node9": {"Pods": [{"UID": "uid1"}]}}, None,
     'nodeinfo not found for node name "node9"'),
]


@pytest.mark.parametrize(("name", "answer", "want", "error"), CONVERT_TO_VICTIMS, ids=[c[0] for c in CONVERT_TO_VICTIMS])
def test_convert_to_victims(name: str, answer: Any, want: dict[str, tuple[list[str], int]] | None, error: str) -> None:
    on = {"node1": {u: victim(n, u) for n, u in (("pod1", "uid1"), ("pod3", "uid3"))},
          "node2": {u: victim(n, u) for n, u in (("pod2", "uid2"), ("pod4", "uid4"))}}
    with serving(preempt=lambda a: {"NodeNameToMetaVictims": answer}) as srv:
        ext = extender(srv.url, preemptVerb="preempt")
        if error:
            with pytest.raises(ExtenderError) as e:
                ext.process_preemption(POD, {}, on.get)
            assert str(e.value) == error.format(url=srv.url)
            return
        got = ext.process_preemption(POD, {}, on.get)
    assert want is not None
    assert {n: ([p.uid for p in v.pods], v.num_pdb_violations) for n, v in got.items()} == want


def test_preempt_without_node_cache_sends_whole_victims() -> None:
    v = victim("pod1", "uid1")
    with serving(preempt=lambda a: {"NodeNameToMetaVictims": {}}) as srv:
        extender(srv.url, preemptVerb="preempt").process_preemption(POD, {"node1": Victims((v,), 0)}, lambda n: {})
    args = srv.requests[0][1]
    assert args["NodeNameToMetaVictims"] is None
    assert args["NodeNameToVictims"] == {"node1": {"Pods": [pod_object(v)], "NumPDBViolations": 0}}


def test_models_node_for_a_node_without_body() -> None:
    n: Node = parse_node({"metadata": {"name": "n", "labels": {"a": "b"}},
                          "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True},
                          "status": {"allocatable": {"cpu": "1500m", "example.com/gpu": "2"}}})
    assert node_object(n) == {"metadata": {"name": "n", "uid": "", "labels": {"a": "b"}},
                              "spec": {"taints": [{"key": "k", "effect": "NoSchedule"}], "unschedulable": True},
                              "status": {"capacity": {"cpu": "1500m", "example.com/gpu": "2"},
                                         "allocatable": {"cpu": "1500m", "example.com/gpu": "2"}}}
