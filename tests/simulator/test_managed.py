"""Field ownership and server-side apply (``scheduler/simulator/managed.py``, issue #16): FieldsV1 as the
real server writes it, who owns what after each kind of write, and apply's conflicts and pruning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster, managed
from tests.simulator.helpers import Http, pod

APPLY = "application/apply-patch+yaml"
CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(scope="module")
def sim() -> Iterator[SimulatedCluster]:
    c = SimulatedCluster(seed=41)
    c.start()
    yield c
    c.stop()


@pytest.fixture
def api(sim: SimulatedCluster) -> Http:
    return Http(sim)


def entries(obj: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    return {(e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
            for e in obj["metadata"].get("managedFields") or []}


# ---- FieldsV1 ---------------------------------------------------------------------------------------------
def test_fields_v1_marks_members_and_keys_associative_items() -> None:
    node = managed.kind_schema("", "v1", "Pod", None)
    p = pod("p", labels={"app": "web"}, tolerations=[{"key": "a", "operator": "Exists"}])
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "protocol": "TCP"}]
    fields = managed.to_fields_v1(managed.field_set(p, node))
    assert fields["f:metadata"] == {"f:labels": {".": {}, "f:app": {}}}          # a map is a member
    container = fields["f:spec"]["f:containers"]['k:{"name":"c"}']
    assert next(iter(container)) == "."
    assert container["f:ports"] == {'k:{"containerPort":80,"protocol":"TCP"}': {
        ".": {}, "f:containerPort": {}, "f:protocol": {}}}
    assert container["f:resources"] == {"f:requests": {".": {}, "f:cpu": {}}}    # a struct is not
    assert fields["f:spec"]["f:tolerations"] == {}                                # atomic list: a leaf
    assert managed.from_fields_v1(fields) == set(managed.field_set(p, node))


@pytest.mark.parametrize(("path", "text"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:containers", 'k:{"name":"c"}', "f:image"), '.spec.containers[name="c"].image'),
    (("f:spec", "f:ports", 'k:{"containerPort":80,"protocol":"TCP"}'), '.spec.ports[containerPort=80,protocol="TCP"]'),
    (("f:metadata", "f:finalizers", 'v:"a"'), '.metadata.finalizers[="a"]'),
])
def test_paths_print_as_fieldpath_does(path: tuple[str, ...], text: str) -> None:
    assert managed.path_string(path) == text


# ---- through the API ----------------------------------------------------------------------------------
def cm(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_a_create_is_owned_by_its_field_manager_or_user_agent(api: Http) -> None:
    code, body = api("POST", CMS, cm("owned", a="1"), params={"fieldManager": "tool"})
    assert code == 201 and entries(body) == {("tool", "Update", ""): {"f:data": {".": {}, "f:a": {}}}}
    code, body = api("POST", CMS, cm("by-agent", a="1"))        # http.client sends no User-Agent: none tracked
    assert code == 201 and "managedFields" not in body["metadata"]


def test_an_update_takes_what_it_changes_from_the_other_managers(api: Http) -> None:
    api("POST", CMS, cm("shared", a="1", b="2"), params={"fieldManager": "first"})
    code, body = api("PATCH", f"{CMS}/shared", {"data": {"b": "3"}}, ctype="application/merge-patch+json",
                     params={"fieldManager": "second"})
    assert code == 200
    assert entries(body) == {("first", "Update", ""): {"f:data": {".": {}, "f:a": {}}},
                             ("second", "Update", ""): {"f:data": {"f:b": {}}}}


def test_status_writes_are_owned_with_their_subresource(api: Http) -> None:
    api("POST", "/api/v1/namespaces/default/pods", pod("st"), params={"fieldManager": "creator"})
    status = {"status": {"conditions": [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}]}}
    code, body = api("PATCH", "/api/v1/namespaces/default/pods/st/status", status,
                     ctype="application/strategic-merge-patch+json", params={"fieldManager": "sched"})
    assert code == 200
    assert entries(body)[("sched", "Update", "status")] == {"f:status": {"f:conditions": {
        'k:{"type":"PodScheduled"}': {".": {}, "f:reason": {}, "f:status": {}, "f:type": {}}}}}
    assert "f:status" not in entries(body)[("creator", "Update", "")]


def test_managed_fields_sent_are_honoured_and_an_empty_list_resets_them(api: Http) -> None:
    _, body = api("POST", CMS, cm("reset", a="1"), params={"fieldManager": "tool"})
    code, body = api("PATCH", f"{CMS}/reset", {"metadata": {"managedFields": []}},
                     ctype="application/merge-patch+json")
    assert code == 200 and "managedFields" not in body["metadata"]


def test_apply_creates_then_conflicts_then_forces(api: Http) -> None:
    code, body = api("PATCH", f"{CMS}/applied", cm("applied", a="1"), ctype=APPLY, params={"fieldManager": "one"})
    assert code == 201 and entries(body) == {("one", "Apply", ""): {"f:data": {".": {}, "f:a": {}}}}
    code, body = api("PATCH", f"{CMS}/applied", cm("applied", a="2"), ctype=APPLY, params={"fieldManager": "two"})
    assert (code, body["reason"]) == (409, "Conflict")
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "one": .data.a'
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict", "message": 'conflict with "one"',
                                          "field": ".data.a"}]
    code, body = api("PATCH", f"{CMS}/applied", cm("applied", a="2"), ctype=APPLY,
                     params={"fieldManager": "two", "force": "true"})
    assert code == 200 and body["data"] == {"a": "2"}
    # "one" keeps the map itself (a member with no owned children is a leaf in FieldsV1), "two" the key.
    assert entries(body) == {("one", "Apply", ""): {"f:data": {}}, ("two", "Apply", ""): {"f:data": {
        ".": {}, "f:a": {}}}}


def test_apply_conflicts_name_every_field_by_manager(api: Http) -> None:
    api("POST", CMS, cm("many", a="1", b="1"), params={"fieldManager": "x"})
    code, body = api("PATCH", f"{CMS}/many", cm("many", a="2", b="2"), ctype=APPLY, params={"fieldManager": "y"})
    assert code == 409
    assert body["message"] == ('Apply failed with 2 conflicts: conflicts with "x" using v1:\n- .data.a\n- .data.b')


@pytest.mark.parametrize(("case", "params", "ctype", "body", "code", "needle"), [
    ("apply without a field manager", {}, APPLY, cm("bad"), 422, "fieldManager: Required value: is required for "
                                                                 "apply patch"),
    ("force on a merge patch", {"fieldManager": "m", "force": "true"}, "application/merge-patch+json",
     {"data": {"a": "1"}}, 422, "force: Forbidden: may not be specified for non-apply patch"),
    ("apply with another name", {"fieldManager": "m"}, APPLY, cm("other"), 400,
     "the name of the object (other) does not match the name on the URL (bad)"),
    ("apply without a kind", {"fieldManager": "m"}, APPLY, {"apiVersion": "v1", "metadata": {"name": "bad"}}, 400,
     "apiVersion and kind must be set"),
])
def test_bad_apply_requests(api: Http, case: str, params: dict[str, str], ctype: str, body: dict[str, Any],
                            code: int, needle: str) -> None:
    api("POST", CMS, cm("bad"))
    got, out = api("PATCH", f"{CMS}/bad", body, ctype=ctype, params=params)
    assert got == code and needle in out["message"], (case, out)
