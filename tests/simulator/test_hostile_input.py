"""Hostile input to the simulated API server (issue #12, item 8), each case sent the way it was found.

Each test sends raw HTTP to a running server and checks kube-apiserver's answer: the status code, and
the Status body's reason and message. It then checks that the answer was bounded: the server still answers
an ordinary GET within a second, no watcher is left registered, and what was stored or served stays under
its limit. Memory is judged by those sizes, not by RSS.
"""

from __future__ import annotations

import base64
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import urlparse

import pytest

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import PODS, Http, pod

CMS = "/api/v1/namespaces/default/configmaps"


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 12}


@contextmanager
def cluster(**options: Any) -> Iterator[tuple[SimulatedCluster, Http]]:
    c = SimulatedCluster(seed=12, **options)
    c.start()
    try:
        yield c, Http(c)
    finally:
        c.stop()


def watchers(sim: SimulatedCluster) -> int:
    return sim.call(lambda: sum(len(b.watchers) for b in sim.server.store.buckets.values()))


def assert_still_serving(api: Http) -> None:
    start = time.monotonic()
    code, ns = api("GET", "/api/v1/namespaces/default")
    assert (code, ns["kind"]) == (200, "Namespace")
    assert time.monotonic() - start < 1.0


def configmap(name: str, size: int = 0, **fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name},
            "data": {"blob": "x" * size}, **fields}


# ---- query parameters and names: 400 before anything is served or registered -----------------------
NAME_DOTDOT = "Name parameter invalid: \"..\": may not be '..'"


@pytest.mark.parametrize(("method", "path", "params", "message"), [
    ("GET", PODS, {"limit": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("GET", PODS, {"limit": "1e3"}, 'strconv.ParseInt: parsing "1e3": invalid syntax'),
    ("GET", PODS, {"limit": "99999999999999999999"},
     'strconv.ParseInt: parsing "99999999999999999999": value out of range'),
    ("DELETE", PODS, {"limit": "x"}, 'strconv.ParseInt: parsing "x": invalid syntax'),
    ("GET", PODS, {"watch": "true", "timeoutSeconds": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("GET", PODS, {"watch": "", "timeoutSeconds": "abc"}, 'strconv.ParseInt: parsing "abc": invalid syntax'),
    ("GET", PODS, {"watch": "1", "timeoutSeconds": "1.5"}, 'strconv.ParseInt: parsing "1.5": invalid syntax'),
    ("GET", PODS, {"watch": "true", "resourceVersion": "-1"}, 'resourceVersion: Invalid value: "-1"'),
    ("GET", PODS, {"resourceVersion": "1_000"}, 'resourceVersion: Invalid value: "1_000"'),
    ("GET", PODS, {"limit": "1", "continue": base64.urlsafe_b64encode(b'{"start": ["default", 5]}').decode()},
     "continue key is not valid"),
    ("GET", f"{CMS}/..", {}, NAME_DOTDOT),
    ("GET", f"{CMS}/%2E%2E", {}, NAME_DOTDOT),
    ("DELETE", f"{CMS}/..", {}, NAME_DOTDOT),
    ("GET", f"{CMS}/.", {}, "Name parameter invalid: \".\": may not be '.'"),
    ("GET", f"{CMS}/a%25b", {}, "Name parameter invalid: \"a%b\": may not contain '%'"),
    ("GET", "/api/v1/namespaces/..", {}, NAME_DOTDOT),
])
def test_unparseable_parameters_and_names_are_400(sim: SimulatedCluster, api: Http, method: str, path: str,
                                                  params: dict[str, str], message: str) -> None:
    code, body = api(method, path, params=params)
    assert (code, body["kind"], body["reason"], body["code"]) == (400, "Status", "BadRequest", 400)
    assert body["message"].startswith(message)
    assert watchers(sim) == 0
    assert_still_serving(api)


def test_a_dot_dot_name_never_reaches_the_namespace(api: Http) -> None:
    code, body = api("GET", f"{CMS}/..")
    assert code == 400 and body["kind"] == "Status"          # not the Namespace "default"


def test_a_negative_or_huge_timeout_is_a_timeout_not_a_crash(sim: SimulatedCluster, api: Http) -> None:
    assert api("POST", PODS, pod("timeouts"))[0] == 201
    start = time.monotonic()
    events = api.watch_lines(PODS, {"timeoutSeconds": "-5"})      # already over: the starting state, then the end
    assert events and {e["type"] for e in events} == {"ADDED"}
    assert time.monotonic() - start < 1.0
    code, body = api("GET", PODS, params={"watch": "true", "timeoutSeconds": str(2**63)})
    assert (code, body["message"]) == (400, f'strconv.ParseInt: parsing "{2**63}": value out of range')
    assert watchers(sim) == 0


# ---- a resourceVersion the store has not reached ------------------------------------------------------
def test_a_list_from_a_future_resource_version_waits_3s_then_answers_too_large(sim: SimulatedCluster,
                                                                               api: Http) -> None:
    current = int(api("GET", PODS)[1]["metadata"]["resourceVersion"])
    start = time.monotonic()
    code, body = api("GET", PODS, params={"resourceVersion": str(current + 1000)})
    took = time.monotonic() - start
    assert (code, body["reason"]) == (504, "Timeout")
    assert body["message"].startswith(f"Timeout: Too large resource version: {current + 1000}, current: ")
    assert body["details"] == {"causes": [{"reason": "ResourceVersionTooLarge",
                                           "message": "Too large resource version"}], "retryAfterSeconds": 1}
    assert 2.9 <= took < 5.0
    assert_still_serving(api)


def test_a_list_from_a_resource_version_about_to_come_waits_for_it(api: Http) -> None:
    current = int(api("GET", PODS)[1]["metadata"]["resourceVersion"])
    got: list[tuple[int, Any]] = []
    reader = threading.Thread(target=lambda: got.append(api("GET", PODS, params={
        "resourceVersion": str(current + 1)})))
    reader.start()
    time.sleep(0.3)                                          # the scenario: the read waits before the write comes
    assert api("POST", PODS, pod("arrives"))[0] == 201
    reader.join(timeout=5)
    code, body = got[0]
    assert code == 200 and "arrives" in {p["metadata"]["name"] for p in body["items"]}


def test_a_watch_from_a_future_resource_version_sends_only_what_comes_after_it(sim: SimulatedCluster,
                                                                              api: Http) -> None:
    current = int(api("GET", PODS)[1]["metadata"]["resourceVersion"])
    seen: list[list[dict[str, Any]]] = []
    reader = threading.Thread(target=lambda: seen.append(api.watch_lines(PODS, {
        "resourceVersion": str(current + 2), "timeoutSeconds": "3", "allowWatchBookmarks": "true"})))
    start = time.monotonic()
    reader.start()
    time.sleep(1.4)                                          # a bookmark tick passes while the store is behind
    for name in ("f1", "f2", "f3"):                          # resourceVersions current+1 .. current+3
        assert api("POST", PODS, pod(name))[0] == 201
    reader.join(timeout=10)
    events = [(e["type"], e["object"]["metadata"]["name"]) for e in seen[0] if e["type"] != "BOOKMARK"]
    assert events == [("ADDED", "f3")]
    assert all(int(e["object"]["metadata"]["resourceVersion"]) > current + 2 for e in seen[0])
    assert time.monotonic() - start < 5.0                    # ended by its timeoutSeconds, not hanging
    assert watchers(sim) == 0


# ---- bodies -----------------------------------------------------------------------------------------
def yaml_bomb() -> bytes:
    """CVE-2019-11253's shape: nine levels of nine aliases, 9**9 strings once expanded."""
    rows = ['  a: &a ["web","web","web","web","web","web","web","web","web"]']
    for prev, cur in zip("abcdefgh", "bcdefghi", strict=True):
        rows.append(f"  {cur}: &{cur} [{','.join([f'*{prev}'] * 9)}]")
    return ("apiVersion: v1\ndata:\n" + "\n".join(rows) + "\nkind: ConfigMap\nmetadata:\n  name: yaml-bomb\n"
            "  namespace: default\n").encode()


def big_string_aliased() -> bytes:
    """Under go-yaml's 1,000-decode threshold, yet 100 KB repeated 400 times."""
    return (b'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: big-alias}\ndata: {a: &a "' + b"x" * 100_000
            + b'"}\nbinaryData: {}\nx: [' + b",".join([b"*a"] * 400) + b"]\n")


@pytest.mark.parametrize(("body", "code", "reason", "message"), [
    (yaml_bomb(), 400, "BadRequest", "the object provided is unrecognized (must be of type ConfigMap): "
                                     "yaml: document contains excessive aliasing (61706956657273696f6e3a2076310a"),
    (b"apiVersion: v1\nkind: ConfigMap\nmetadata: &m {name: loop, labels: *m}\n", 400, "BadRequest",
     "the object provided is unrecognized (must be of type ConfigMap): yaml: anchor 'm' value contains itself"),
    (big_string_aliased(), 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"),
    (b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deep}\nx: " + b"[" * 300 + b"]" * 300, 400, "BadRequest",
     "the object provided is unrecognized (must be of type ConfigMap): yaml: exceeded max depth"),
])
def test_yaml_that_expands_is_refused_before_it_is_stored(api: Http, body: bytes, code: int, reason: str,
                                                          message: str) -> None:
    before = len(api("GET", CMS)[1]["items"])
    start = time.monotonic()
    got, status = api("POST", CMS, raw=body, ctype="application/yaml")
    assert (got, status["reason"]) == (code, reason)
    assert status["message"].startswith(message)
    assert time.monotonic() - start < 2.0
    assert len(api("GET", CMS)[1]["items"]) == before
    assert_still_serving(api)


def test_the_yaml_bomb_is_small_and_ordinary_aliases_still_work(api: Http) -> None:
    assert len(yaml_bomb()) < 600
    body = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: aliased, labels: &l {app: web}, annotations: *l}\n"
    code, cm = api("POST", CMS, raw=body, ctype="application/yaml")
    assert code == 201 and cm["metadata"]["annotations"] == cm["metadata"]["labels"] == {"app": "web"}


def test_json_nested_past_what_can_be_served_is_refused_and_lists_keep_working(api: Http) -> None:
    deep: Any = "x"
    for _ in range(300):
        deep = {"a": deep}
    code, body = api("POST", CMS, configmap("deep-json", x=deep))
    assert (code, body["reason"]) == (400, "BadRequest") and "exceeded max depth" in body["message"]
    assert api("GET", CMS)[0] == 200


# ---- JSON patch ---------------------------------------------------------------------------------------
def test_a_json_patch_of_self_copies_stops_at_the_copy_limit(api: Http) -> None:
    assert api("POST", CMS, configmap("copies", size=64))[0] == 201
    rv = api("GET", f"{CMS}/copies")[1]["metadata"]["resourceVersion"]
    ops = [{"op": "copy", "from": "/data", "path": f"/data/copy{i}"} for i in range(23)]
    assert len(json.dumps(ops)) < 2000
    start = time.monotonic()
    code, body = api("PATCH", f"{CMS}/copies", ops, ctype="application/json-patch+json")
    assert (code, body["reason"]) == (422, "Invalid")
    assert body["message"].startswith("Unable to complete the copy, the accumulated size increase of copy is ")
    assert body["message"].endswith(", exceeding the limit 3145728")
    assert time.monotonic() - start < 2.0
    assert api("GET", f"{CMS}/copies")[1]["metadata"]["resourceVersion"] == rv      # nothing written
    assert_still_serving(api)


def test_a_json_patch_may_hold_at_most_10000_operations(api: Http) -> None:
    assert api("POST", CMS, configmap("many-ops"))[0] == 201
    ops = [{"op": "test", "path": "/metadata/name", "value": "many-ops"}] * 10_001
    code, body = api("PATCH", f"{CMS}/many-ops", ops, ctype="application/json-patch+json")
    assert (code, body["reason"], body["message"]) == (
        413, "RequestEntityTooLarge",
        "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001")
    assert api("PATCH", f"{CMS}/many-ops", ops[:10_000], ctype="application/json-patch+json")[0] == 200


# ---- storage: etcd's request limit and quota ----------------------------------------------------------
def test_an_object_over_etcds_request_limit_is_refused_as_etcd_refuses_it(api: Http) -> None:
    big = pod("big-env")
    big["spec"]["containers"][0]["env"] = [{"name": "BLOB", "value": "x" * (1600 * 1024)}]
    code, body = api("POST", PODS, big)
    assert (code, body["message"], "reason" in body) == (500, "etcdserver: request is too large", False)
    assert api("GET", f"{PODS}/big-env")[0] == 404
    assert_still_serving(api)


def test_the_storage_quota_refuses_growth_but_not_deletes_or_shrinks() -> None:
    quota = 1024 * 1024
    with cluster(storage_quota_bytes=quota) as (sim, api):
        refused = None
        for i in range(40):
            code, body = api("POST", CMS, configmap(f"fill-{i}", size=100_000))
            if code != 201:
                refused = (i, code, body)
                break
        assert refused is not None
        i, code, body = refused
        assert (code, body["message"], "reason" in body) == (500, "etcdserver: mvcc: database space exceeded", False)
        assert 5 <= i <= 11
        assert sim.call(lambda: sim.server.store.total_bytes) <= quota
        assert api("GET", CMS)[0] == 200
        shrink = {"data": {"blob": "small"}}
        assert api("PATCH", f"{CMS}/fill-0", shrink, ctype="application/merge-patch+json")[0] == 200
        assert api("DELETE", f"{CMS}/fill-1")[0] == 200
        assert api("POST", CMS, configmap("after-delete", size=100_000))[0] == 201
        assert_still_serving(api)


# ---- watchers that never read -------------------------------------------------------------------------
def stuck_watch(sim: SimulatedCluster, query: str = "watch=true") -> ssl.SSLSocket:
    """A watch whose client sends the request and then never reads (a small receive window)."""
    u = urlparse(sim.url)
    raw = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    raw.settimeout(10)
    raw.connect((u.hostname or "127.0.0.1", u.port or 443))
    s = sim.tls.client_context().wrap_socket(raw, server_hostname=u.hostname)
    s.sendall(f"GET {CMS}?{query} HTTP/1.1\r\nHost: {u.hostname}\r\n"
              f"Authorization: Bearer {sim.token}\r\n\r\n".encode())
    return s


def test_watchers_that_never_read_are_terminated_with_bounded_buffers() -> None:
    cap = 256 * 1024
    with cluster(watch_buffer_bytes=cap) as (sim, api):
        socks = [stuck_watch(sim) for _ in range(20)]
        deadline = time.monotonic() + 10
        while watchers(sim) < 20 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watchers(sim) == 20
        peak = 0
        deadline = time.monotonic() + 60
        for i in range(400):
            assert api("POST", CMS, configmap(f"flood-{i}", size=100_000))[0] == 201
            assert api("DELETE", f"{CMS}/flood-{i}")[0] == 200          # keep the store small
            peak = max(peak, sim.call(lambda: max((w.pending_bytes for b in sim.server.store.buckets.values()
                                                   for w in b.watchers), default=0)))
            if sim.call(lambda: sim.server.terminated_watchers) == 20 or time.monotonic() > deadline:
                break
        assert sim.call(lambda: sim.server.terminated_watchers) == 20
        assert peak <= cap
        assert watchers(sim) == 0
        assert_still_serving(api)
        for s in socks:                                    # their streams were cut
            s.close()
        events = api.watch_lines(CMS, {"timeoutSeconds": "1"})   # and a new watch is served as usual
        assert all(e["type"] == "ADDED" for e in events)


def test_a_watch_stuck_sending_its_initial_state_ends_near_its_timeout() -> None:
    with cluster() as (sim, api):
        for i in range(60):                                 # 6 MB of state: more than the socket buffers hold
            assert api("POST", CMS, configmap(f"state-{i}", size=100_000))[0] == 201
        socks = [stuck_watch(sim, "watch=true&timeoutSeconds=1") for _ in range(5)]
        deadline = time.monotonic() + 5
        while watchers(sim) < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert watchers(sim) == 5
        assert_still_serving(api)
        deadline = time.monotonic() + 15                    # timeoutSeconds, then the 5 s grace for a stuck write
        while watchers(sim) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert watchers(sim) == 0
        assert_still_serving(api)
        for s in socks:
            s.close()


@pytest.mark.parametrize(("path", "obj"), [
    ("/api/v1/namespaces/default/configmaps", {"apiVersion": "v1", "kind": "ConfigMap"}),
    ("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node"}),
], ids=["configmap", "node"])
def test_annotations_over_262144_bytes_are_refused(sim: SimulatedCluster, path: str, obj: dict[str, Any]) -> None:
    """apimachinery's TotalAnnotationSizeLimitB, on every kind: what client-side ``kubectl apply`` of a
    big object runs into on a real cluster."""
    api = Http(sim)
    big = {"a": "x" * (256 * 1024 - 1)}                                    # key + value: exactly the limit
    code, _ = api("POST", path, {**obj, "metadata": {"name": "fits", "annotations": big}})
    assert code == 201
    code, body = api("POST", path, {**obj, "metadata": {"name": "over", "annotations": {**big, "b": ""}}})
    assert code == 422 and body["reason"] == "Invalid"
    assert body["message"].endswith('"over" is invalid: metadata.annotations: Too long: may not be more than '
                                    "262144 bytes")
    assert body["details"]["causes"][0]["reason"] == "FieldValueTooLong"
