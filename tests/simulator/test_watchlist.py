"""Streaming lists (WatchList) as kube-apiserver serves them, and the ListOptions it refuses.

client-go's WatchListClient (on in kubectl 1.37: ``kubectl wait``, ``delete``'s wait, informers) watches with
``sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true`` and waits for the
BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` that ends the initial ADDED events. Without that
bookmark ``kubectl wait`` hangs until its timeout, whatever the object's state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.handlers import base as server
from tests.simulator.helpers import PODS, Http, node, pod
from tests.simulator.kubectl import Kubectl, kubectl_for, needs_kubectl

END = "k8s.io/initial-events-end"
STREAM = {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "allowWatchBookmarks": "true"}


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 3, "pod_running_after": 0.3}


@pytest.fixture
def api(sim: SimulatedCluster) -> Iterator[Http]:
    http = Http(sim)
    yield http
    http("DELETE", PODS)


@pytest.fixture(scope="module")
def kubectl(sim: SimulatedCluster, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return kubectl_for(sim, tmp_path_factory.mktemp("home"), timeout=30)


def _later(delay: float, fn: Any, *args: Any) -> threading.Thread:
    def run() -> None:
        time.sleep(delay)
        fn(*args)
    t = threading.Thread(target=run)
    t.start()
    return t


def _kinds(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    out = []
    for e in events:
        meta = e["object"]["metadata"]
        out.append((e["type"], "END" if (meta.get("annotations") or {}).get(END) == "true" else meta.get("name", "")))
    return out


# ---- the stream ----------------------------------------------------------------------------------------
def test_streaming_list_sends_the_state_then_the_annotated_bookmark_then_live_events(api: Http) -> None:
    api("POST", PODS, pod("a"))
    api("POST", PODS, pod("b"))
    current = int(api("GET", PODS)[1]["metadata"]["resourceVersion"])
    t = _later(0.5, api, "POST", PODS, pod("c"))
    events = api.watch_lines(PODS, {**STREAM, "timeoutSeconds": "2"})
    t.join()
    seen = [k for k in _kinds(events) if k != ("BOOKMARK", "")]       # periodic bookmarks come and go
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("BOOKMARK", "END"), ("ADDED", "c")]
    end = next(e for e in events if e["type"] == "BOOKMARK")
    assert end["object"]["kind"] == "Pod" and end["object"]["apiVersion"] == "v1"
    assert int(end["object"]["metadata"]["resourceVersion"]) == current     # the snapshot's resourceVersion
    later = [e for e in events if e["type"] == "BOOKMARK"][1:]
    assert all(END not in (e["object"]["metadata"].get("annotations") or {}) for e in later)   # only once


def test_streaming_list_of_nothing_still_ends_with_the_bookmark(api: Http) -> None:
    events = api.watch_lines("/api/v1/namespaces/nothing-here/pods", {**STREAM, "timeoutSeconds": "1"})
    assert _kinds(events)[0] == ("BOOKMARK", "END")


def test_streaming_list_honours_selectors_and_the_name(api: Http) -> None:
    api("POST", PODS, pod("web", labels={"app": "web"}))
    api("POST", PODS, pod("db", labels={"app": "db"}))
    events = api.watch_lines(PODS, {**STREAM, "labelSelector": "app=web", "timeoutSeconds": "1"})
    assert _kinds(events)[:2] == [("ADDED", "web"), ("BOOKMARK", "END")]
    events = api.watch_lines(PODS, {**STREAM, "fieldSelector": "metadata.name=db", "timeoutSeconds": "1"})
    assert _kinds(events)[:2] == [("ADDED", "db"), ("BOOKMARK", "END")]


def test_a_legacy_watch_is_defaulted_to_a_streaming_list(api: Http) -> None:
    """SetListOptionsDefaults (WatchList on since 1.34): a watch from "" or "0" without sendInitialEvents
    sends the annotated bookmark after the state when bookmarks are allowed; without them, just the state."""
    api("POST", PODS, pod("a"))
    for rv in ("", "0"):
        events = api.watch_lines(PODS, {"resourceVersion": rv, "allowWatchBookmarks": "true", "timeoutSeconds": "1"})
        assert _kinds(events)[:2] == [("ADDED", "a"), ("BOOKMARK", "END")]
    events = api.watch_lines(PODS, {"timeoutSeconds": "1"})
    assert _kinds(events) == [("ADDED", "a")]


def test_initial_events_without_bookmarks_are_not_a_streaming_list(api: Http) -> None:
    """sendInitialEvents=true with allowWatchBookmarks=false is valid upstream (isListWatchRequest is false):
    the state is sent and no bookmark ends it."""
    api("POST", PODS, pod("a"))
    events = api.watch_lines(PODS, {"sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan",
                                    "timeoutSeconds": "1"})
    assert _kinds(events) == [("ADDED", "a")]


def test_send_initial_events_false_starts_now_or_after_the_resource_version(api: Http) -> None:
    api("POST", PODS, pod("old"))
    rv = api("GET", PODS)[1]["metadata"]["resourceVersion"]
    api("POST", PODS, pod("newer"))
    t = _later(0.5, api, "POST", PODS, pod("live"))
    events = api.watch_lines(PODS, {"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan",
                                    "timeoutSeconds": "2"})
    t.join()
    assert [k for k in _kinds(events) if k[0] != "BOOKMARK"] == [("ADDED", "live")]
    events = api.watch_lines(PODS, {"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan",
                                    "resourceVersion": rv, "timeoutSeconds": "1"})
    assert [k for k in _kinds(events) if k[0] != "BOOKMARK"] == [("ADDED", "newer"), ("ADDED", "live")]


def test_streaming_list_from_a_resource_version_not_reached_waits_then_times_out(
        api: Http, sim: SimulatedCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """The watch cache waits (blockTimeout, 3 s) for a resourceVersion it has not seen; the state it then sends
    is the current one. Not reached in time: one ERROR event, 504 Too large resource version."""
    monkeypatch.setattr(server, "FRESH_WAIT", 1.0)
    current = int(api("GET", PODS)[1]["metadata"]["resourceVersion"])
    t = _later(0.3, api, "POST", PODS, pod("arrives"))
    events = api.watch_lines(PODS, {**STREAM, "resourceVersion": str(current + 1), "timeoutSeconds": "1"})
    t.join()
    assert _kinds(events)[:2] == [("ADDED", "arrives"), ("BOOKMARK", "END")]
    started = time.monotonic()
    events = api.watch_lines(PODS, {**STREAM, "resourceVersion": str(current + 100), "timeoutSeconds": "5"})
    assert 0.9 < time.monotonic() - started < 3
    assert len(events) == 1 and events[0]["type"] == "ERROR"
    status = events[0]["object"]
    assert (status["code"], status["reason"]) == (504, "Timeout")
    assert status["message"].startswith(f"Timeout: Too large resource version: {current + 100}, current: ")


# ---- ValidateListOptions ---------------------------------------------------------------------------------
FORBID_WATCH = "Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
REQUIRES = "Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
CONTINUE = "Forbidden: resourceVersionMatch is forbidden when continue is provided"


@pytest.mark.parametrize("params, causes", [
    ({"watch": "1", "sendInitialEvents": "true"}, [("resourceVersionMatch", REQUIRES)]),
    ({"watch": "1", "sendInitialEvents": "false"}, [("resourceVersionMatch", REQUIRES)]),
    ({"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "Exact"}, [
        ("resourceVersionMatch", REQUIRES),
        ("resourceVersionMatch", 'Unsupported value: "Exact": supported values: "NotOlderThan"')]),
    ({"watch": "1", "resourceVersionMatch": "NotOlderThan"}, [("resourceVersionMatch", FORBID_WATCH)]),
    ({"watch": "1", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "5"},
     [("resourceVersionMatch", FORBID_WATCH)]),
    ({"watch": "1", "resourceVersionMatch": "Exact", "resourceVersion": "5"}, [
        ("resourceVersionMatch", FORBID_WATCH),
        ("resourceVersionMatch", 'Unsupported value: "Exact": supported values: "NotOlderThan"')]),
    ({"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "continue": "abc"},
     [("resourceVersionMatch", CONTINUE)]),
    ({"sendInitialEvents": "true"}, [("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")]),
    ({"sendInitialEvents": "false", "resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
     [("sendInitialEvents", "Forbidden: sendInitialEvents is forbidden for list")]),
    ({"resourceVersionMatch": "NotOlderThan"}, [
        ("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided")]),
    ({"resourceVersionMatch": "Exact", "resourceVersion": "0"}, [
        ("resourceVersionMatch", 'Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"')]),
    ({"resourceVersionMatch": "Newest", "resourceVersion": "1"}, [
        ("resourceVersionMatch",
         'Unsupported value: "Newest": supported values: "Exact", "NotOlderThan", ""')]),
    ({"resourceVersionMatch": "Exact", "continue": "abc"}, [
        ("resourceVersionMatch", "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"),
        ("resourceVersionMatch", CONTINUE)]),
])
def test_list_options_upstream_refuses_are_422(api: Http, params: dict[str, str],
                                               causes: list[tuple[str, str]]) -> None:
    code, body = api("GET", PODS, params=params)
    assert (code, body["reason"]) == (422, "Invalid"), body
    text = ", ".join(f"{f}: {m}" for f, m in causes)
    assert body["message"] == 'ListOptions.meta.k8s.io "" is invalid: ' + (f"[{text}]" if len(causes) > 1 else text)
    assert body["details"] == {"group": "meta.k8s.io", "kind": "ListOptions", "causes": [
        {"reason": "FieldValueForbidden" if m.startswith("Forbidden") else "FieldValueNotSupported", "message": m,
         "field": f} for f, m in causes]}


def test_deletecollection_validates_its_list_options(api: Http) -> None:
    api("POST", PODS, pod("kept"))
    code, body = api("DELETE", PODS, params={"sendInitialEvents": "true"})
    assert code == 422 and "sendInitialEvents is forbidden for list" in body["message"]
    assert api("GET", f"{PODS}/kept")[0] == 200


@pytest.mark.parametrize("params", [
    {"watch": "1", "sendInitialEvents": "true", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "1"},
    {"watch": "1", "sendInitialEvents": "", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "1"},
    {"watch": "1", "sendInitialEvents": "0", "resourceVersionMatch": "NotOlderThan", "timeoutSeconds": "1"},
    {"resourceVersionMatch": "NotOlderThan", "resourceVersion": "1"},
    {"resourceVersionMatch": "Exact", "resourceVersion": "1"},
    {"resourceVersionMatch": "", "resourceVersion": "0"},
])
def test_list_options_upstream_accepts(api: Http, params: dict[str, str]) -> None:
    code, body = api("GET", PODS, params=params)
    assert code == 200, body


# ---- kubectl (WatchListClient on) -------------------------------------------------------------------------
@needs_kubectl
def test_kubectl_wait_returns_at_once_when_the_condition_holds(api: Http, kubectl: Kubectl) -> None:
    api("POST", "/api/v1/nodes", node("wait-node"))
    api("POST", PODS, pod("ready"))
    api("POST", f"{PODS}/ready/binding", {"metadata": {"name": "ready"}, "target": {"name": "wait-node"}})
    kubectl("wait", "--for=condition=Ready", "pod/ready", "--timeout=10s")     # became Ready (kubelet, 0.3 s)
    for args in (("--for=condition=Ready",), ("--for=condition=PodScheduled=True",),
                 ("--for=jsonpath={.spec.nodeName}=wait-node",), ("--for=jsonpath={.status.phase}=Running",),
                 ("--for=create",)):
        started = time.monotonic()
        out = kubectl("wait", *args, "pod/ready", "--timeout=20s").stdout
        assert "condition met" in out and time.monotonic() - started < 3, args


@needs_kubectl
def test_kubectl_wait_returns_when_the_condition_becomes_true(api: Http, kubectl: Kubectl) -> None:
    api("POST", "/api/v1/nodes", node("later-node"))
    api("POST", PODS, pod("later"))
    t = _later(1.0, api, "POST", f"{PODS}/later/binding", {"metadata": {"name": "later"},
                                                          "target": {"name": "later-node"}})
    started = time.monotonic()
    kubectl("wait", "--for=condition=Ready", "pod/later", "--timeout=20s")
    t.join()
    assert 1.0 < time.monotonic() - started < 4
    t = _later(1.0, api, "DELETE", f"{PODS}/later", {"gracePeriodSeconds": 0})
    started = time.monotonic()
    kubectl("wait", "--for=delete", "pod/later", "--timeout=20s")
    t.join()
    assert 1.0 < time.monotonic() - started < 4


@needs_kubectl
def test_kubectl_wait_times_out_when_the_condition_never_holds(api: Http, kubectl: Kubectl) -> None:
    api("POST", PODS, pod("pending"))
    p = kubectl("wait", "--for=condition=Ready", "pod/pending", "--timeout=2s", check=False)
    assert p.returncode != 0 and "timed out waiting for the condition" in p.stderr


@needs_kubectl
def test_kubectl_delete_waits_for_the_object_to_go(api: Http, kubectl: Kubectl) -> None:
    api("POST", PODS, pod("doomed"))
    started = time.monotonic()
    out = kubectl("delete", "pod", "doomed", "--timeout=20s").stdout
    assert "deleted" in out and time.monotonic() - started < 3
    assert api("GET", f"{PODS}/doomed")[0] == 404
