"""Field ownership and server-side apply (``scheduler/simulator/managed.py``, issue #16): FieldsV1 as the
real server writes it, who owns what after each kind of write, and apply's conflicts and pruning."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.simulator import managed
from tests.simulator.helpers import Http, pod

APPLY = "application/apply-patch+yaml"
CMS = "/api/v1/namespaces/default/configmaps"


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 41}


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


# ---- duplicates in an apply configuration (issue #32) ----------------------------------------------------
def _ports_pod(name: str) -> dict[str, Any]:
    p = pod(name)
    p["spec"]["containers"][0]["ports"] = [{"containerPort": 8080, "protocol": "TCP", "hostIP": "10.0.0.1"},
                                           {"containerPort": 8080, "protocol": "TCP", "hostIP": "10.0.0.2"}]
    return p


def test_two_ports_on_one_container_port_are_created_but_not_server_side_applied(api: Http) -> None:
    """Issue #32 reported a 500 for two ports sharing containerPort 8080 with different hostIPs. A
    create, update or patch stores them (kube-apiserver too: validation only warns); server-side
    apply of such a configuration corrupted the object here (both entries became the last one).
    kube-apiserver refuses it, with a bare 500 from the fieldmanager (kubernetes#113482 shows the
    text), and so must the simulated one."""
    code, body = api("POST", "/api/v1/namespaces/default/pods", _ports_pod("dup-create"))
    assert code == 201, body
    assert [p["hostIP"] for p in body["spec"]["containers"][0]["ports"]] == ["10.0.0.1", "10.0.0.2"]
    for name in ("dup-create", "dup-apply"):          # apply over a live object, and apply as a create
        code, body = api("PATCH", f"/api/v1/namespaces/default/pods/{name}", _ports_pod(name), ctype=APPLY,
                         params={"fieldManager": "kubectl"})
        assert code == 500, body
        assert body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "code": 500,
                        "message": f"failed to create typed patch object (default/{name}; /v1, Kind=Pod): "
                                   '.spec.containers[name="c"].ports: duplicate entries for key '
                                   '[containerPort=8080,protocol="TCP"]'}
    code, body = api("GET", "/api/v1/namespaces/default/pods/dup-create")
    assert [p["hostIP"] for p in body["spec"]["containers"][0]["ports"]] == ["10.0.0.1", "10.0.0.2"]
    assert api("GET", "/api/v1/namespaces/default/pods/dup-apply")[0] == 404


def test_several_duplicates_are_listed_as_the_fieldmanager_lists_them() -> None:
    node = managed.kind_schema("apps", "v1", "Deployment", None)
    container = {"name": "c",
                 "ports": [{"containerPort": 93, "protocol": "TCP"}, {"containerPort": 93, "protocol": "TCP"}],
                 "env": [{"name": "FOO", "value": "1"}, {"name": "FOO", "value": "2"}]}
    config = {"spec": {"template": {"spec": {"containers": [container]}}}}
    assert managed.duplicate_entries(config, node) == [
        '.spec.template.spec.containers[name="c"].env: duplicate entries for key [name="FOO"]',
        '.spec.template.spec.containers[name="c"].ports: duplicate entries for key [containerPort=93,protocol="TCP"]']
    container["env"].pop()
    container["ports"][1]["protocol"] = "UDP"
    assert managed.duplicate_entries(config, node) == []
