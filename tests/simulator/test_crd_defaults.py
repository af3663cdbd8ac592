"""CRD ``default:`` values (``schema.default``, ``schema.prune_nulls``, ``schema.coerce``), as kube-apiserver.

The algorithm tables are ported from upstream's
``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting/algorithm_test.go``
(``TestDefault``) and ``prunenulls_test.go`` (``TestPruneNonNullableNullsWithoutDefaults``), each case
under its upstream name, the ``Structural`` values written as the JSON schemas they stand for. Then
defaulting through the API (create, update, patches, server-side apply, a CRD update defaulting what
was stored before, status writes) and the CRDs refused for their defaults, with raw HTTP and kubectl.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster, crdcheck, schema
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, kubectl_for, needs_kubectl
from tests.simulator.test_crd_cel import CRDS, WIDGETS, widget

Obj = dict[str, Any]


def d(value: Any, **generic: Any) -> Obj:
    """A schema with a default (upstream's Generic{Default: JSON{value}})."""
    return {"default": value, **generic}


ABC = {"properties": {"a": d("A"), "b": d("B"), "c": d("C")}}

# (upstream case, JSON in, schema, JSON out): algorithm_test.go TestDefault.
DEFAULT: list[tuple[str, str, Obj | None, str]] = [
    ("empty", "null", None, "null"),
    ("scalar", "4", d("foo"), "4"),
    ("scalar array", "[1,2]", {"items": d("foo")}, "[1,2]"),
    ("object array", '[{"a":1},{"b":1},{"c":1}]', {"items": ABC},
     '[{"a":1,"b":"B","c":"C"},{"a":"A","b":1,"c":"C"},{"a":"A","b":"B","c":1}]'),
    ("object array object",
     '{"array":[{"a":1},{"b":2}],"object":{"a":1},"additionalProperties":{"x":{"a":1},"y":{"b":2}}}',
     {"properties": {"array": {"items": {"properties": {"a": d("A"), "b": d("B")}}},
                     "object": {"properties": {"a": d("N"), "b": d("O")}},
                     "additionalProperties": {"additionalProperties": {"properties": {"a": d("alpha"),
                                                                                      "b": d("beta")}}},
                     "foo": d("bar")}},
     '{"array":[{"a":1,"b":"B"},{"a":"A","b":2}],"object":{"a":1,"b":"O"},'
     '"additionalProperties":{"x":{"a":1,"b":"beta"},"y":{"a":"alpha","b":2}},"foo":"bar"}'),
    ("empty and null", '[{},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":null},{"a":[]},{"a":{}}]',
     {"items": {"properties": {"a": d("A")}}},
     '[{"a":"A"},{"a":1},{"a":0},{"a":0.0},{"a":""},{"a":"A"},{"a":[]},{"a":{}}]'),
    ("null in nullable list", "[null]", {"nullable": True, "items": {"properties": {"a": d("A")}}}, "[null]"),
    ("null in non-nullable list", "[null]", {"nullable": False, "items": d("A")}, '["A"]'),
    ("null in nullable object", '{"a": null}', {"properties": {"a": d("A", nullable=True)}}, '{"a": null}'),
    ("null in non-nullable object", '{"a": null}', {"properties": {"a": d("A", nullable=False)}}, '{"a": "A"}'),
    ("null in nullable object with additionalProperties", '{"a": null}',
     {"additionalProperties": d("A", nullable=True)}, '{"a": null}'),
    ("null in non-nullable object with additionalProperties", '{"a": null}',
     {"additionalProperties": d("A", nullable=False)}, '{"a": "A"}'),
    ("null unknown field", '{"a": null}', {"additionalProperties": True}, '{"a": null}'),
]


@pytest.mark.parametrize(("case", "given", "s", "want"), DEFAULT, ids=[c[0] for c in DEFAULT])
def test_default(case: str, given: str, s: Obj | None, want: str) -> None:
    value = json.loads(given)
    schema.default(s, value)
    assert value == json.loads(want)


# prunenulls_test.go TestPruneNonNullableNullsWithoutDefaults.
PRUNE_NULLS: list[tuple[str, str, Obj | None, str]] = [
    ("empty", "null", None, "null"),
    ("scalar", "4", d("foo"), "4"),
    ("scalar array", "[1,null]", None, "[1,null]"),
    ("object array", '[{"a":null},{"b":null},{"c":null},{"d":null},{"e":null}]',
     {"items": {"properties": {"a": d("A"), "b": {"nullable": True}, "c": d("C", nullable=True), "d": {}}}},
     '[{"a":null},{"b":null},{"c":null},{},{"e":null}]'),
]


@pytest.mark.parametrize(("case", "given", "s", "want"), PRUNE_NULLS, ids=[c[0] for c in PRUNE_NULLS])
def test_prune_non_nullable_nulls_without_defaults(case: str, given: str, s: Obj | None, want: str) -> None:
    value = json.loads(given)
    schema.prune_nulls(s, value)
    assert value == json.loads(want)


def test_coerce_prunes_then_drops_nulls_then_defaults() -> None:
    s = {"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "replicas": {"type": "integer", "default": 1},
        "mode": {"type": "string"},
        "ports": {"type": "array", "items": {"type": "object", "properties": {
            "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}},
        "nested": {"type": "object", "default": {}, "properties": {"deep": {"type": "string", "default": "d"}}}}}}}
    obj = {"metadata": {"name": "x"}, "spec": {"mode": None, "junk": 1, "replicas": None, "ports": [{"port": 80}]}}
    assert schema.coerce(s, obj) == ["spec.junk"]
    # a default is itself defaulted (the walk goes on into what was defaulted)
    assert obj["spec"] == {"replicas": 1, "ports": [{"port": 80, "protocol": "TCP"}], "nested": {"deep": "d"}}
    cfg = {"spec": {}}
    schema.coerce(s, cfg, defaults=False)
    assert cfg == {"spec": {}}


# crdcheck: CRDs refused for their defaults.
def _crd(spec_schema: Obj, plural: str = "widgets", kind: str = "Widget") -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": f"{plural}.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": kind.lower(), "kind": kind},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                       "spec": spec_schema, "status": {"type": "object", "properties": {
                                           "phase": {"type": "string"}}}}}}}]}}


AT = "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties"
BAD_DEFAULTS: list[tuple[str, Obj, tuple[str, str, str]]] = [
    ("wrong type", {"replicas": {"type": "integer", "default": "three"}},
     (f"{AT}[replicas].default", "FieldValueTypeInvalid",
      f'Invalid value: "string": {AT}[replicas].default in body must be of type integer: "string"')),
    ("out of bounds", {"replicas": {"type": "integer", "maximum": 5, "default": 7}},
     (f"{AT}[replicas].default", "FieldValueInvalid",
      f"Invalid value: 7: {AT}[replicas].default in body should be less than or equal to 5")),
    ("not in the enum", {"mode": {"type": "string", "enum": ["a"], "default": "b"}},
     (f"{AT}[mode].default", "FieldValueNotSupported", 'Unsupported value: "b": supported values: "a"')),
    ("unknown fields", {"o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x",
                                                                                                    "b": 1}}},
     (f"{AT}[o].default", "FieldValueInvalid", 'Invalid value: {"a":"x","b":1}: must not have unknown fields')),
    ("missing a required field", {"o": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}},
                                        "default": {}}},
     (f"{AT}[o].default.a", "FieldValueRequired", "Required value")),
    ("failing its rule", {"n": {"type": "integer", "default": 0, "x-kubernetes-validations": [
        {"rule": "self > 0", "message": "must be positive"}]}},
     (f"{AT}[n].default", "FieldValueInvalid", 'Invalid value: "integer": must be positive')),
]


@pytest.mark.parametrize(("case", "props", "want"), BAD_DEFAULTS, ids=[c[0] for c in BAD_DEFAULTS])
def test_crd_refused_for_its_defaults(case: str, props: Obj, want: tuple[str, str, str]) -> None:
    assert crdcheck.check_crd(_crd({"type": "object", "properties": props})) == [want]


def test_good_defaults_and_the_projects_crd_pass() -> None:
    ok = {"type": "object", "properties": {"replicas": {"type": "integer", "default": 1, "minimum": 0},
                                           "o": {"type": "object", "default": {"a": "x"},
                                                 "properties": {"a": {"type": "string"}}},
                                           "l": {"type": "array", "items": {"type": "string", "default": "i"},
                                                 "default": ["x"]}}}
    assert crdcheck.check_crd(_crd(ok)) == []
    project = yaml.safe_load((Path(__file__).resolve().parents[2] / "crds" / "schedulingprofile.yaml").read_text())
    assert crdcheck.check_crd(project) == []


# Through the API.
SPEC: Obj = {"type": "object", "properties": {
    "replicas": {"type": "integer", "default": 1},
    "strategy": {"type": "string", "default": "Rolling"},
    "paused": {"type": "boolean", "nullable": True, "default": False},
    "ports": {"type": "array", "items": {"type": "object", "properties": {
        "port": {"type": "integer"}, "protocol": {"type": "string", "default": "TCP"}}}},
    "labels": {"type": "object", "additionalProperties": {"type": "object", "properties": {
        "value": {"type": "string"}, "weight": {"type": "integer", "default": 10}}}},
    "limits": {"type": "object", "default": {}, "properties": {"cpu": {"type": "string", "default": "1"}}}}}
DEFAULTED = {"replicas": 1, "strategy": "Rolling", "paused": False, "limits": {"cpu": "1"}}


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 9}


@pytest.fixture(scope="module")
def api(sim: SimulatedCluster) -> Http:
    http = Http(sim)
    assert http("POST", CRDS, _crd(SPEC))[0] == 201
    return http


def test_create_applies_defaults(api: Http) -> None:
    code, body = api("POST", WIDGETS, widget("w1", ports=[{"port": 80}, {"port": 53, "protocol": "UDP"}],
                                             labels={"tier": {"value": "web"}}, replicas=3))
    assert code == 201
    assert body["spec"] == {**DEFAULTED, "replicas": 3, "ports": [{"port": 80, "protocol": "TCP"},
                                                                  {"port": 53, "protocol": "UDP"}],
                            "labels": {"tier": {"value": "web", "weight": 10}}}
    assert api("GET", f"{WIDGETS}/w1")[1]["spec"] == body["spec"]


def test_nulls_defaulted_kept_or_dropped(api: Http) -> None:
    # replicas (not nullable, defaulted): the default; paused (nullable): null kept; ports (not nullable,
    # no default): dropped, as if not sent
    code, body = api("POST", WIDGETS, widget("w2", replicas=None, paused=None, ports=None))
    assert code == 201 and body["spec"] == {**DEFAULTED, "paused": None}


def test_update_and_patches_apply_defaults(api: Http) -> None:
    code, w = api("POST", WIDGETS, widget("w3"))
    assert code == 201 and w["spec"] == DEFAULTED
    put = copy.deepcopy(w)
    put["spec"] = {"ports": [{"port": 1}]}
    code, body = api("PUT", f"{WIDGETS}/w3", put)
    assert code == 200 and body["spec"] == {**DEFAULTED, "ports": [{"port": 1, "protocol": "TCP"}]}
    code, body = api("PATCH", f"{WIDGETS}/w3", {"spec": {"strategy": None, "limits": None}},
                     ctype="application/merge-patch+json")
    assert code == 200 and body["spec"]["strategy"] == "Rolling" and body["spec"]["limits"] == {"cpu": "1"}
    code, body = api("PATCH", f"{WIDGETS}/w3", [{"op": "remove", "path": "/spec/replicas"}],
                     ctype="application/json-patch+json")
    assert code == 200 and body["spec"]["replicas"] == 1


def test_server_side_apply_defaults_the_result_not_the_configuration(api: Http) -> None:
    code, body = api("PATCH", f"{WIDGETS}/w4", widget("w4", replicas=2), ctype="application/apply-patch+yaml",
                     params={"fieldManager": "me"})
    assert code == 201 and body["spec"] == {**DEFAULTED, "replicas": 2}
    owned = next(e for e in body["metadata"]["managedFields"] if e["manager"] == "me")["fieldsV1"]
    assert owned["f:spec"] == {"f:replicas": {}}          # the defaults are nobody's


def test_crd_update_defaults_what_was_stored_before(api: Http) -> None:
    code, before = api("POST", WIDGETS, widget("w5"))
    assert code == 201 and "color" not in before["spec"]
    code, crd = api("GET", f"{CRDS}/widgets.example.com")
    spec = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    spec["properties"]["color"] = {"type": "string", "default": "blue"}
    code, _ = api("PUT", f"{CRDS}/widgets.example.com", crd)
    assert code == 200
    code, after = api("GET", f"{WIDGETS}/w5")
    assert after["spec"]["color"] == "blue"
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]   # a read, not a write
    listed = api("GET", WIDGETS)[1]["items"]
    assert all(i["spec"]["color"] == "blue" for i in listed)


def test_status_write_keeps_defaults(api: Http) -> None:
    assert api("POST", WIDGETS, widget("w6"))[0] == 201
    code, body = api("PATCH", f"{WIDGETS}/w6/status", {"status": {"phase": "Ready"}},
                     ctype="application/merge-patch+json")
    assert code == 200 and body["status"] == {"phase": "Ready"} and body["spec"]["replicas"] == 1


def test_crd_with_a_bad_default_is_refused(api: Http) -> None:
    bad = _crd({"type": "object", "properties": {"replicas": {"type": "integer", "default": "three"}}},
               "gadgets", "Gadget")
    code, body = api("POST", CRDS, bad)
    assert code == 422
    assert body["message"] == (
        'CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: '
        f'{AT}[replicas].default: Invalid value: "string": {AT}[replicas].default in body must be of type '
        'integer: "string"')


@needs_kubectl
def test_kubectl_sees_defaults(sim: SimulatedCluster, api: Http, tmp_path: Path) -> None:
    kubectl: Kubectl = kubectl_for(sim, tmp_path)
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k1", ports=[{"port": 8}]))).stdout
    got = json.loads(kubectl("get", "widget", "k1", "-o", "json").stdout)
    assert got["spec"]["strategy"] == "Rolling" and got["spec"]["ports"] == [{"port": 8, "protocol": "TCP"}]
    # re-applying changes nothing where the defaults are fields the manifest leaves out (a list the
    # server defaulted inside differs from the manifest's, so kubectl sends it again, as with a real server)
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k2", replicas=2))).stdout
    assert "unchanged" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k2", replicas=2))).stdout
    bad = _crd({"type": "object", "properties": {"count": {"type": "integer", "maximum": 1, "default": 2}}},
               "doodads", "Doodad")
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert p.returncode != 0
    assert (f'The CustomResourceDefinition "doodads.example.com" is invalid: {AT}[count].default: Invalid value: 2: '
            f"{AT}[count].default in body should be less than or equal to 1") in p.stderr
