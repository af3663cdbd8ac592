"""CRD ``x-kubernetes-validations`` (``celrules.py``, ``cellib.py``, ``crdcheck.py``), as kube-apiserver.

The expression tables are ported from upstream's
``staging/src/k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/validation_test.go``
(``TestValidationExpressions``; each case keeps its upstream name). Left out: what needs cel-go's type
checker beyond undefined fields (``no matching overload`` at compile time), ``type(x) ==
google.protobuf.Duration``, the timezone argument of timestamp accessors, embedded resources,
``set``/``map`` list equality ignoring order, and ``exists``/``all`` absorbing an element's error
when another element decides (the engine's macros stop at the first error:
``self.listMap.exists(m, m.v2 == 'z')`` fails here, stricter).
Then the rules through the API (raw HTTP, then the real kubectl): the 422s, their messages, transition
rules, ratcheting, and CRDs refused for their rules.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster, celrules, crdcheck
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, kubectl_for, needs_kubectl

Obj = dict[str, Any]
INT: Obj = {"type": "integer"}
NUM: Obj = {"type": "number"}
STR: Obj = {"type": "string"}
BOOL: Obj = {"type": "boolean"}
IOS: Obj = {"x-kubernetes-int-or-string": True}


def obj(props: Obj, **ext: Any) -> Obj:
    return {"type": "object", "properties": props, **ext}


def list_of(items: Obj, **ext: Any) -> Obj:
    return {"type": "array", "items": items, **ext}


def map_of(values: Obj) -> Obj:
    return {"type": "object", "additionalProperties": values}


def vals(*schemas: Obj) -> Obj:
    """upstream's schemas(...): properties val1, val2, ..."""
    return {f"val{i}": s for i, s in enumerate(schemas, 1)}


def objs(*values: Any) -> Obj:
    return {f"val{i}": v for i, v in enumerate(values, 1)}


def equal_and_literal(a: str, b: str, literal: str) -> str:
    """upstream's ValsEqualThemselvesAndDataLiteral."""
    return f"{a} == {a} && {b} == {b} && {a} == {b} && {a} == {literal} && {literal} == {b}"


MAX_INT64 = 2**63 - 1
MAX_INT32 = 2**31 - 1
LIST_MAP = list_of(obj({"k": STR, "v": STR, "v2": STR}), **{"x-kubernetes-list-type": "map",
                                                            "x-kubernetes-list-map-keys": ["k"]})
STDLIB_LISTS = {"ints": [1, 2, 2, 3], "unsortedInts": [2, 1], "emptyInts": [],
                "doubles": [1.0, 2.0, 2.0, 3.0], "unsortedDoubles": [2.0, 1.0], "emptyDoubles": [],
                "intBackedDoubles": [1, 2, 2, 3], "unsortedIntBackedDDoubles": [2, 1], "emptyIntBackedDDoubles": [],
                "strings": ["a", "b", "b", "c"], "unsortedStrings": ["b", "a"], "emptyStrings": [],
                "objs": [{"f1": "a", "f2": "a"}, {"f1": "a", "f2": "b"}, {"f1": "a", "f2": "b"},
                         {"f1": "a", "f2": "c"}]}
STDLIB_SCHEMA = {k: list_of(INT if "Ints" in k or k == "ints" else NUM if "oubles" in k else STR)
                 for k in STDLIB_LISTS if k != "objs"} | {"objs": list_of(obj({"f1": STR, "f2": STR}))}

# (upstream case, schema properties, object, rules that hold, {rule: text its error contains})
EXPRESSIONS: list[tuple[str, Obj, Any, list[str], dict[str, str]]] = [
    ("integers", vals(INT, INT, {**INT, "format": "int32"}, {**INT, "format": "int32"}, {**INT, "format": "int64"},
                      {**INT, "format": "int64"}),
     objs(MAX_INT64, MAX_INT64, MAX_INT32, MAX_INT32, MAX_INT64, MAX_INT64),
     [equal_and_literal("self.val1", "self.val2", str(MAX_INT64)),
      equal_and_literal("self.val3", "self.val4", str(MAX_INT32)),
      equal_and_literal("self.val5", "self.val6", str(MAX_INT64)),
      "self.val1 == self.val6", "type(self.val1) == int", f"self.val3 + 1 == {MAX_INT32} + 1",
      "type(self.val3) == int", "type(self.val5) == int"],
     {"self.val1 + 1 == 0": "integer overflow", "self.val5 + 1 == 0": "integer overflow",
      "1 / 0 == 1 / 0": "division by zero"}),
    ("numbers", vals(NUM, NUM, NUM), objs(math.pi, math.pi, 1),
     ["self.val1 == self.val2", "type(self.val1) == double", "type(self.val3) == double", "self.val3 == 1.0"], {}),
    ("numeric comparisons", vals(INT, INT, INT, NUM, NUM, NUM, NUM), objs(5, 10, 15, 10.0, 10.0, 10.0, 10),
     ["double(self.val1) < self.val4", "double(self.val1) <= self.val4", "double(self.val2) <= self.val4",
      "double(self.val2) == self.val4", "double(self.val2) >= self.val4", "double(self.val3) > self.val4",
      "double(self.val3) >= self.val4", "self.val1 < int(self.val4)", "self.val2 == int(self.val4)",
      "self.val3 > int(self.val4)", "double(self.val1) < self.val7", "double(self.val2) == self.val7",
      "double(self.val3) > self.val7", "self.val1 < int(self.val7)", "self.val2 == int(self.val7)",
      "double(5) < 10.0", "double(10) == 10.0", "5 < int(10.0)", "10 == int(10.0)",
      "double(self.val1) < 10.0", "double(self.val3) > 10.0"], {}),
    ("unicode strings", vals(STR, STR), objs("Rook takes 👑", "Rook takes 👑"),
     [equal_and_literal("self.val1", "self.val2", "'Rook takes 👑'"),
      "self.val1.startsWith('Rook')", "!self.val1.startsWith('knight')", "self.val1.contains('takes')",
      "!self.val1.contains('gives')", "self.val1.endsWith('👑')", "!self.val1.endsWith('pawn')",
      "self.val1.matches('^[^0-9]*$')", "!self.val1.matches('^[0-9]*$')", "type(self.val1) == string",
      "self.val1.charAt(3) == 'k'", "self.val1.indexOf('o') == 1", "self.val1.indexOf('o', 2) == 2",
      "self.val1.replace(' ', 'x') == 'Rookxtakesx👑'", "self.val1.replace(' ', 'x', 1) == 'Rookxtakes 👑'",
      "self.val1.split(' ') == ['Rook', 'takes', '👑']", "self.val1.split(' ', 2) == ['Rook', 'takes 👑']",
      "self.val1.substring(5) == 'takes 👑'", "self.val1.substring(0, 4) == 'Rook'",
      "self.val1.substring(4, 10).trim() == 'takes'", "self.val1.upperAscii() == 'ROOK TAKES 👑'",
      "self.val1.lowerAscii() == 'rook takes 👑'"], {}),
    ("booleans", vals(BOOL, BOOL, BOOL, BOOL), objs(True, True, False, False),
     [equal_and_literal("self.val1", "self.val2", "true"), equal_and_literal("self.val3", "self.val4", "false"),
      "self.val1 != self.val4", "type(self.val1) == bool"], {}),
    ("bytes", vals({**STR, "format": "byte"}, {**STR, "format": "byte"}), objs("QUI=", "QUI="),
     ["self.val1 == self.val2", "self.val1 == b'AB'", "self.val1 == bytes('AB')", "self.val1 == b'\\x41\\x42'",
      "type(self.val1) == bytes", "size(self.val1) == 2"], {}),
    ("duration format", vals({**STR, "format": "duration"}, {**STR, "format": "duration"}),
     objs("1h2m3s4ms", "1h2m3s4ms"),
     [equal_and_literal("self.val1", "self.val2", "duration('1h2m3s4ms')"),
      "self.val1 == duration('1h2m') + duration('3s4ms')", "self.val1.getHours() == 1",
      "self.val1.getMinutes() == 62", "self.val1.getSeconds() == 3723", "self.val1.getMilliseconds() == 3723004"],
     {}),
    ("date format", vals({**STR, "format": "date"}, {**STR, "format": "date"}), objs("1997-07-16", "1997-07-16"),
     [equal_and_literal("self.val1", "self.val2", "timestamp('1997-07-16T00:00:00.000Z')"),
      "self.val1.getDate() == 16", "self.val1.getMonth() == 06", "self.val1.getFullYear() == 1997"], {}),
    ("date-time format", vals({**STR, "format": "date-time"}, {**STR, "format": "date-time"}),
     objs("2011-08-18T19:03:37.010000000+01:00", "2011-08-18T19:03:37.010000000+01:00"),
     [equal_and_literal("self.val1", "self.val2", "timestamp('2011-08-18T19:03:37.010+01:00')"),
      "self.val1 == timestamp('2011-08-18T00:00:00.000+01:00') + duration('19h3m37s10ms')"], {}),
    ("enums", {"enumStr": {**STR, "enum": ["Pending", "Available", "Bound", "Released", "Failed"]}},
     {"enumStr": "Pending"}, ["self.enumStr == 'Pending'", "self.enumStr in ['Pending', 'Available']"], {}),
    ("lists", vals(list_of(INT), list_of(INT)), objs([1, 2, 3], [1, 2, 3]),
     [equal_and_literal("self.val1", "self.val2", "[1, 2, 3]"), "1 in self.val1", "self.val2[0] in self.val1",
      "!(0 in self.val1)", "self.val1 + self.val2 == [1, 2, 3, 1, 2, 3]", "self.val1 + [4, 5] == [1, 2, 3, 4, 5]"],
     {}),
    ("maps", vals(map_of(STR), map_of(STR)), objs({"k1": "a", "k2": "b"}, {"k2": "b", "k1": "a"}),
     ["self.val1 == self.val2", "'k1' in self.val1", "!('k3' in self.val1)", "self.val1 == {'k1': 'a', 'k2': 'b'}"],
     {}),
    ("objects", {"objs": list_of(obj({"f1": STR, "f2": STR}))},
     {"objs": [{"f1": "a", "f2": "b"}, {"f1": "a", "f2": "b"}]}, ["self.objs[0] == self.objs[1]"], {}),
    ("object access", {"a": obj({"b": INT, "c": INT, "d": {**INT, "nullable": True}}),
                       "a1": obj({"b1": obj({"c1": INT}), "d2": obj({"e2": INT})})},
     {"a": {"b": 1, "d": None}, "a1": {"b1": {"c1": 4}}, "a3": {}},
     ["has(self.a.b)", "!has(self.a.c)", "!has(self.a.d)", "has(self.a1.b1.c1)",
      "!(has(self.a1.d2) && has(self.a1.d2.e2))", "!has(self.a1.d2)"],
     {"has(self.a.z)": "undefined field 'z'", "has(self.a1.d2.e2)": "no such key: d2"}),
    ("map access", {"val": map_of(INT)}, {"val": {"b": 1, "d": 2}},
     ["!('a' in self.val)", "'b' in self.val", "!('c' in self.val)", "'d' in self.val", "!has(self.val.a)",
      "has(self.val.b)", "!has(self.val.c)", "has(self.val.d)", "self.val.all(k, self.val[k] > 0)",
      "self.val.exists(k, self.val[k] > 1)", "self.val.exists_one(k, self.val[k] == 2)",
      "!self.val.exists(k, self.val[k] > 2)", "!self.val.exists_one(k, self.val[k] > 0)", "size(self.val) == 2",
      "self.val.map(k, self.val[k]).exists(v, v == 1)", "size(self.val.filter(k, self.val[k] > 1)) == 1"],
     {"self.val['c'] == 1": "no such key: c"}),
    ("listMap access", {"listMap": LIST_MAP},
     {"listMap": [{"k": "a1", "v": "b1"}, {"k": "a2", "v": "b2"}, {"k": "a3", "v": "b3", "v2": "z"}]},
     ["has(self.listMap[0].v)", "self.listMap.all(m, m.k.startsWith('a'))",
      "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')", "self.listMap.exists(m, m.k.endsWith('1'))",
      "self.listMap.exists_one(m, m.k == 'a3')", "!self.listMap.all(m, m.k.endsWith('1'))",
      "!self.listMap.exists(m, m.v == 'x')", "!self.listMap.exists_one(m, m.k.startsWith('a'))",
      "size(self.listMap.filter(m, m.k == 'a1')) == 1", "self.listMap.exists(m, m.k == 'a1' && m.v == 'b1')",
      "self.listMap.map(m, m.v).exists(v, v == 'b1')", "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')",
      "!self.listMap.all(m, has(m.v2) && m.v2 != 'z')", "self.listMap.exists_one(m, has(m.v2) && m.v2 == 'z')",
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').size() == 1",
      "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
      "self.listMap.filter(m, has(m.v2) && m.v2 == 'z').map(m, m.v2).size() == 1"],
     {"self.listMap.all(m, m.v2 == 'z')": "no such key: v2",
      "self.listMap.exists_one(m, m.v2 == 'z')": "no such key: v2",
      "self.listMap.filter(m, m.v2 == 'z').size() == 1": "no such key: v2",
      "self.listMap.map(m, m.v2).size() == 1": "no such key: v2",
      "self.listMap.map(m, m.v2 == 'z', m.v2).size() == 1": "no such key: v2"}),
    ("list access", {"array": list_of(INT)}, {"array": [1, 1, 2, 2, 3, 3, 4, 5]},
     ["2 in self.array", "self.array.all(e, e > 0)", "self.array.exists(e, e > 2)", "self.array.exists_one(e, e > 4)",
      "!self.array.all(e, e < 2)", "!self.array.exists(e, e < 0)", "!self.array.exists_one(e, e == 2)",
      "self.array.all(e, e < 100)", "size(self.array.filter(e, e%2 == 0)) == 3",
      "self.array.map(e, e * 20).filter(e, e > 50).exists(e, e == 60)", "size(self.array) == 8"],
     {"self.array[100] == 0": "index out of bounds: 100"}),
    ("typemeta and objectmeta access not specified", {"spec": obj({"field1": STR})},
     {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "generateName": "pickItForMe",
                                                      "namespace": "xyz"}, "spec": {"field1": "a"}},
     ["self.kind == 'Pod'", "self.apiVersion == 'v1'", "self.metadata.name == 'foo'",
      "self.metadata.generateName == 'pickItForMe'", "self.spec.field1 == 'a'"],
     {"has(self.metadata.namespace)": "undefined field 'namespace'"}),
    ("string in intOrString", {"something": IOS}, {"something": "25%"},
     ["self.something == '25%'", "self.something != 1", "self.something == 1 || self.something == '25%'",
      "self.something == '25%' || self.something == 1", "type(self.something) == string && self.something == '25%'",
      "type(self.something) == int ? self.something == 1 : self.something == '25%'",
      "self.something != ['anything']"], {}),
    ("int in intOrString", {"something": IOS}, {"something": 1},
     ["self.something == 1", "self.something != 'some string'", "self.something == 1 || self.something == '25%'",
      "self.something == '25%' || self.something == 1", "type(self.something) == int && self.something == 1",
      "type(self.something) == int ? self.something == 1 : self.something == '25%'",
      "self.something != ['anything']"], {}),
    ("null in intOrString", {"something": {**IOS, "nullable": True}}, {"something": None},
     ["!has(self.something)"], {"type(self.something) == int": "no such key"}),
    ("percent comparison using intOrString", {"min": IOS, "current": INT, "available": INT},
     {"min": "50%", "current": 5, "available": 10},
     [r"type(self.min) == string && self.min.matches(r'(\d+(\.\d+)?%)')",
      "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= "
      "double(self.min.replace('%', '')) / 100.0"], {}),
    ("stdlib list functions", STDLIB_SCHEMA, STDLIB_LISTS,
     ["self.ints.sum() == 8", "self.ints.min() == 1", "self.ints.max() == 3", "self.emptyInts.sum() == 0",
      "self.ints.isSorted()", "self.emptyInts.isSorted()", "self.unsortedInts.isSorted() == false",
      "self.ints.indexOf(2) == 1", "self.ints.lastIndexOf(2) == 2", "self.ints.indexOf(10) == -1",
      "self.ints.lastIndexOf(10) == -1", "self.doubles.sum() == 8.0", "self.doubles.min() == 1.0",
      "self.doubles.max() == 3.0", "self.doubles.isSorted()", "self.emptyDoubles.isSorted()",
      "self.unsortedDoubles.isSorted() == false", "self.doubles.indexOf(2.0) == 1",
      "self.doubles.lastIndexOf(2.0) == 2", "self.doubles.indexOf(10.0) == -1",
      "self.intBackedDoubles.sum() == 8.0", "self.intBackedDoubles.min() == 1.0",
      "self.intBackedDoubles.max() == 3.0", "self.intBackedDoubles.isSorted()",
      "self.unsortedIntBackedDDoubles.isSorted() == false", "self.intBackedDoubles.indexOf(2.0) == 1",
      "self.intBackedDoubles.lastIndexOf(2.0) == 2", "self.strings.min() == 'a'", "self.strings.max() == 'c'",
      "self.strings.isSorted()", "self.emptyStrings.isSorted()", "self.unsortedStrings.isSorted() == false",
      "self.strings.indexOf('b') == 1", "self.strings.lastIndexOf('b') == 2", "self.strings.indexOf('x') == -1",
      "self.strings.lastIndexOf('x') == -1", "[[1], [2]].indexOf([1]) == 0",
      "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1", "self.objs.indexOf(self.objs[1]) == 1",
      "self.objs.lastIndexOf(self.objs[1]) == 2", "([0] + self.emptyInts).min() == 0",
      "dyn([1, 2]).sum() == 3", "dyn([1.0, 2.0]).sum() == 3.0"],
     {"self.emptyInts.min() == 1": "min called on empty list", "self.emptyInts.max() == 3": "max called on empty list",
      "self.emptyDoubles.min() == 1.0": "min called on empty list",
      "self.emptyStrings.max() == 'c'": "max called on empty list"}),
    ("stdlib regex functions", {"str": STR}, {"str": "this is a 123 string 456"},
     ["self.str.find('[0-9]+') == '123'", "self.str.find('[0-9]+') != '456'", "self.str.find('xyz') == ''",
      "self.str.findAll('[0-9]+') == ['123', '456']", "self.str.findAll('[0-9]+', 0) == []",
      "self.str.findAll('[0-9]+', 1) == ['123']", "self.str.findAll('[0-9]+', 2) == ['123', '456']",
      "self.str.findAll('[0-9]+', 3) == ['123', '456']", "self.str.findAll('[0-9]+', -1) == ['123', '456']",
      "self.str.findAll('xyz') == []", "self.str.findAll('xyz', 1) == []"], {}),
    ("URL parsing", {"url": STR}, {"url": "https://user:pass@kubernetes.io:80/docs/home?k1=a&k2=b&k2=c#anchor"},
     ["url('/path').getScheme() == ''", "url('https://example.com/').getScheme() == 'https'",
      "url('https://example.com:80/').getHost() == 'example.com:80'",
      "url('https://example.com/').getHost() == 'example.com'", "url('https://[::1]:80/').getHost() == '[::1]:80'",
      "url('https://[::1]/').getHost() == '[::1]'", "url('/path').getHost() == ''",
      "url('https://example.com:80/').getHostname() == 'example.com'",
      "url('https://127.0.0.1/').getHostname() == '127.0.0.1'", "url('https://[::1]/').getHostname() == '::1'",
      "url('/path').getHostname() == ''", "url('https://example.com:80/').getPort() == '80'",
      "url('https://example.com/').getPort() == ''", "url('/path').getPort() == ''",
      "url('https://example.com/path').getEscapedPath() == '/path'",
      "url('https://example.com/with space/').getEscapedPath() == '/with%20space/'",
      "url('https://example.com').getEscapedPath() == ''",
      "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == { 'k1': ['a'], 'k2': ['b', 'c']}",
      "url('https://example.com/path?key with spaces=value with spaces').getQuery() == "
      "{ 'key with spaces': ['value with spaces']}",
      "url('https://example.com/path?').getQuery() == {}", "url('https://example.com/path').getQuery() == {}",
      "url(self.url).getScheme() == 'https'", "url(self.url).getHost() == 'kubernetes.io:80'",
      "url(self.url).getHostname() == 'kubernetes.io'", "url(self.url).getPort() == '80'",
      "url(self.url).getEscapedPath() == '/docs/home'",
      "url(self.url).getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
      "isURL('https://user:pass@example.com:80/path?query=val#fragment')", "isURL('/path') == true",
      "isURL('https://a:b:c/') == false", "isURL('../relative-path') == false"], {}),
]


def _at_root(props: Obj, rule: str) -> Obj:
    return obj(props, **{"x-kubernetes-validations": [{"rule": rule}]})


@pytest.mark.parametrize(("case", "props", "value", "valid", "errors"), EXPRESSIONS, ids=[c[0] for c in EXPRESSIONS])
def test_validation_expressions(case: str, props: Obj, value: Any, valid: list[str], errors: dict[str, str]) -> None:
    for rule in valid:
        assert celrules.validate(_at_root(props, rule), value) == [], rule
    for rule, needle in errors.items():
        s = _at_root(props, rule)
        compiled = celrules.compile_rule({"rule": rule}, s, root=True)
        if compiled.error:      # refused when the CRD is created
            assert needle in compiled.error, (rule, compiled.error)
            continue
        got = celrules.validate(s, value)
        assert len(got) == 1 and needle in got[0][2], (rule, got)


# validation_test.go: "transition rules" and "skipped transition rule for nil old primitive".
def test_transition_rules_run_only_with_an_old_value() -> None:
    s = _at_root({"v": STR}, "oldSelf.v != self.v")
    assert celrules.validate(s, {"v": "new"}, {"v": "old"}) == []
    assert celrules.validate(_at_root({"v": STR}, "oldSelf.v == 'old' && self.v == 'new'"), {"v": "new"},
                             {"v": "old"}) == []
    prim = {**STR, "x-kubernetes-validations": [{"rule": "oldSelf == self"}]}
    assert celrules.validate(prim, "exists", None) == []         # skipped: no old value
    assert celrules.validate(prim, "exists", "was")[0][2] == 'Invalid value: "string": failed rule: oldSelf == self'


# The error of a failed rule, as fieldErrorForReason words it (message, messageExpression, reason, fieldPath).
SPEC = obj({"min": INT, "max": INT, "m": map_of(STR), "tags": list_of(STR)})
FAILURES: list[tuple[str, Obj, tuple[str, str, str]]] = [
    ("no message", {"rule": "self.min <= self.max"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.min <= self.max')),
    ("message", {"rule": "self.min <= self.max", "message": " min must not exceed max "},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": min must not exceed max')),
    ("messageExpression", {"rule": "self.min <= self.max", "message": "static",
                           "messageExpression": "'min ' + string(self.min) + ' > max ' + string(self.max)"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": min 5 > max 1')),
    ("messageExpression failing falls back to message", {"rule": "self.min <= self.max", "message": "static",
                                                          "messageExpression": "self.m.zz"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": static')),
    ("messageExpression empty falls back to the default", {"rule": "self.min <= self.max",
                                                            "messageExpression": "'  '"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.min <= self.max')),
    ("FieldValueForbidden", {"rule": "self.min <= self.max", "message": "m", "reason": "FieldValueForbidden"},
     ("spec", "FieldValueForbidden", "Forbidden: m")),
    ("FieldValueRequired", {"rule": "self.min <= self.max", "message": "m", "reason": "FieldValueRequired"},
     ("spec", "FieldValueRequired", "Required value: m")),
    ("FieldValueDuplicate", {"rule": "self.min <= self.max", "message": "m", "reason": "FieldValueDuplicate"},
     ("spec", "FieldValueDuplicate", 'Duplicate value: "object"')),
    ("fieldPath", {"rule": "self.min <= self.max", "message": "m", "fieldPath": ".max"},
     ("spec.max", "FieldValueInvalid", 'Invalid value: "object": m')),
    ("fieldPath into a map", {"rule": "self.min <= self.max", "message": "m", "fieldPath": ".m['a.b']"},
     ("spec.m[a.b]", "FieldValueInvalid", 'Invalid value: "object": m')),
    ("runtime error", {"rule": "self.m.zz == 'a'"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": no such key: zz evaluating rule: self.m.zz == \'a\'')),
    ("runtime error names the message", {"rule": "self.m.zz == 'a'", "message": "needs zz"},
     ("spec", "FieldValueInvalid", 'Invalid value: "object": no such key: zz evaluating rule: needs zz')),
]


@pytest.mark.parametrize(("case", "rule", "want"), FAILURES, ids=[c[0] for c in FAILURES])
def test_failure_errors(case: str, rule: Obj, want: tuple[str, str, str]) -> None:
    s = obj({"spec": {**SPEC, "x-kubernetes-validations": [rule]}})
    assert celrules.validate(s, {"spec": {"min": 5, "max": 1, "m": {}}}) == [want]


def test_root_rules_and_scalar_rules() -> None:
    s = obj({"spec": obj({"name": {**STR, "x-kubernetes-validations": [{"rule": "self.size() < 3"}]}})},
            **{"x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith('a')"}]})
    got = celrules.validate(s, {"metadata": {"name": "b"}, "spec": {"name": "long"}})
    assert got == [("<nil>", "FieldValueInvalid", "Invalid value: \"object\": failed rule: "
                                                   "self.metadata.name.startsWith('a')"),
                   ("spec.name", "FieldValueInvalid", 'Invalid value: "string": failed rule: self.size() < 3')]
    # int-or-string shows the empty type; escaped property names
    ios = obj({"x-y": {**IOS, "x-kubernetes-validations": [{"rule": "self == 1"}]}},
              **{"x-kubernetes-validations": [{"rule": "self.x__dash__y == 1"}]})
    assert celrules.validate(ios, {"x-y": 2}, path="spec") == [
        ("spec", "FieldValueInvalid", 'Invalid value: "object": failed rule: self.x__dash__y == 1'),
        ("spec.x-y", "FieldValueInvalid", 'Invalid value: "": failed rule: self == 1')]


def test_list_map_items_correlate_by_key_and_ratcheting() -> None:
    items = obj({"k": STR, "v": INT}, **{"x-kubernetes-validations": [
        {"rule": "self.v >= oldSelf.v", "message": "v may not decrease"},
        {"rule": "self.v < 10", "message": "v too big"}]})
    s = obj({"l": list_of(items, **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]}),
             "a": list_of(items)})
    old = {"l": [{"k": "x", "v": 5}, {"k": "y", "v": 50}]}
    # reordered, y unchanged at 50 (ratcheted), x decreased (transition rule), z new (no oldSelf)
    new = {"l": [{"k": "z", "v": 1}, {"k": "y", "v": 50}, {"k": "x", "v": 4}]}
    assert celrules.validate(s, new, old) == [
        ("l[2]", "FieldValueInvalid", 'Invalid value: "object": v may not decrease')]
    # an atomic list's items have no oldSelf, and ratchet only while the whole list is unchanged
    assert celrules.validate(s, {"a": [{"k": "x", "v": 50}]}, {"a": [{"k": "x", "v": 50}]}) == []
    assert celrules.validate(s, {"a": [{"k": "x", "v": 50}, {"k": "y", "v": 1}]}, {"a": [{"k": "x", "v": 50}]}) == [
        ("a[0]", "FieldValueInvalid", 'Invalid value: "object": v too big')]
    # on create, everything is checked
    assert [c[0] for c in celrules.validate(s, new)] == ["l[1]"]


def test_optional_old_self() -> None:
    s = obj({"v": {**STR, "x-kubernetes-validations": [{
        "rule": "!oldSelf.hasValue() || oldSelf.value() == self", "optionalOldSelf": True,
        "message": "immutable once set"}]}})
    assert celrules.validate(s, {"v": "a"}) == []
    assert celrules.validate(s, {"v": "a"}, {"v": "a"}) == []
    assert celrules.validate(s, {"v": "b"}, {"v": "a"}) == [("v", "FieldValueInvalid",
                                                             'Invalid value: "string": immutable once set')]
    assert celrules.validate(s, {"v": "b"}, {}) == []        # the field was unset: no old value


# crdcheck: CRDs refused for their rules.
def _crd(spec_schema: Obj) -> Obj:
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": obj({"spec": spec_schema,
                                                                      "status": obj({"ok": BOOL})})}}]}}


AT = "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0]"
REFUSED: list[tuple[str, Obj, tuple[str, str, str]]] = [
    ("syntax error", {"rule": "self.min <"},
     (f"{AT}.rule", "FieldValueInvalid", "compilation failed: ERROR: <input>:1:11: Syntax error: ")),
    ("undeclared reference", {"rule": "foo == 1"},
     (f"{AT}.rule", "FieldValueInvalid", "compilation failed: ERROR: <input>:1:1: undeclared reference to 'foo' "
                                         "(in container '')")),
    ("undefined field", {"rule": "self.mni > 0"},
     (f"{AT}.rule", "FieldValueInvalid", "compilation failed: ERROR: <input>:1:5: undefined field 'mni'")),
    ("undeclared function", {"rule": "self.min.frobnicate()"},
     (f"{AT}.rule", "FieldValueInvalid", "undeclared reference to 'frobnicate'")),
    ("bad literal regex", {"rule": "self.name.matches(')')"},
     (f"{AT}.rule", "FieldValueInvalid", "program instantiation failed: error parsing regexp: ")),
    ("empty rule", {"rule": ""}, (f"{AT}.rule", "FieldValueRequired", "Required value")),
    ("messageExpression", {"rule": "true", "messageExpression": "self.min +"},
     (f"{AT}.messageExpression", "FieldValueInvalid", "messageExpression compilation failed: ERROR: <input>")),
    ("reason", {"rule": "true", "reason": "FieldValueBogus"},
     (f"{AT}.reason", "FieldValueNotSupported", 'Unsupported value: "FieldValueBogus": supported values: '
                                                '"FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", '
                                                '"FieldValueDuplicate"')),
    ("fieldPath", {"rule": "true", "fieldPath": ".nope"},
     (f"{AT}.fieldPath", "FieldValueInvalid", 'Invalid value: ".nope": fieldPath must be a valid path: does not '
                                              "refer to a valid field")),
]


@pytest.mark.parametrize(("case", "rule", "want"), REFUSED, ids=[c[0] for c in REFUSED])
def test_crd_refused_for_its_rules(case: str, rule: Obj, want: tuple[str, str, str]) -> None:
    got = crdcheck.check_crd(_crd(obj({"min": INT, "name": STR}, **{"x-kubernetes-validations": [rule]})))
    assert len(got) == 1 and got[0][:2] == want[:2] and want[2] in got[0][2], got


def test_crd_rule_error_shows_the_rule_as_upstream_prints_it() -> None:
    got = crdcheck.check_crd(_crd(obj({"min": INT}, **{"x-kubernetes-validations": [{"rule": "self.min <"}]})))
    assert got[0][2].startswith('Invalid value: apiextensions.ValidationRule{Rule:"self.min <", Message:"", '
                                'MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), '
                                'FieldPath:"", OptionalOldSelf:(*bool)(nil)}: compilation failed: ')


def test_old_self_refused_where_nothing_correlates() -> None:
    s = obj({"tags": list_of({**STR, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]})})
    got = crdcheck.check_crd(_crd(s))
    assert len(got) == 1 and got[0][0].endswith(".properties[tags].items.x-kubernetes-validations[0].rule")
    assert "oldSelf cannot be used on the uncorrelatable portion of the schema within" in got[0][2]
    keyed = obj({"l": list_of(obj({"k": STR}, **{"x-kubernetes-validations": [{"rule": "self == oldSelf"}]}),
                              **{"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"]})})
    assert crdcheck.check_crd(_crd(keyed)) == []


# Through the API.
WIDGETS = "/apis/example.com/v1/namespaces/default/widgets"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
WIDGET_SPEC = obj({"min": INT, "max": INT, "size": {**INT, "maximum": 10},
                   "name": {**STR, "x-kubernetes-validations": [{"rule": "self == oldSelf",
                                                                 "message": "name is immutable"}]},
                   "mode": {**STR, "enum": ["a", "b"]}},
                  **{"x-kubernetes-validations": [{"rule": "self.min <= self.max", "message": "min must be <= max"}]})


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 7}


@pytest.fixture(scope="module")
def api(sim: SimulatedCluster) -> Http:
    http = Http(sim)
    assert http("POST", CRDS, _crd(WIDGET_SPEC))[0] == 201
    return http


def widget(obj_name: str, **spec: Any) -> Obj:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": obj_name}, "spec": spec}


def test_api_refuses_a_rule_violation_with_upstreams_message(api: Http) -> None:
    code, body = api("POST", WIDGETS, widget("w0", min=5, max=1))
    assert code == 422 and body["reason"] == "Invalid"
    assert body["message"] == 'Widget.example.com "w0" is invalid: spec: Invalid value: "object": min must be <= max'
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "field": "spec",
                                          "message": 'Invalid value: "object": min must be <= max'}]


def test_api_skips_rules_after_a_blocking_schema_error(api: Http) -> None:
    code, body = api("POST", WIDGETS, widget("w1", min=5, max=1, mode="c"))
    assert code == 422
    assert body["message"] == (
        'Widget.example.com "w1" is invalid: [spec.mode: Unsupported value: "c": supported values: "a", "b", '
        '<nil>: Invalid value: "null": some validation rules were not checked because the object was invalid; '
        "correct the existing errors to complete validation]")
    # a non-blocking schema error (a bound) still lets the rules run
    code, body = api("POST", WIDGETS, widget("w1", min=5, max=1, size=11))
    assert code == 422 and "min must be <= max" in body["message"] and "less than or equal to 10" in body["message"]


def test_api_transition_rule_and_ratcheting(api: Http) -> None:
    code, w = api("POST", WIDGETS, widget("w2", min=1, max=2, name="first"))
    assert code == 201
    url = f"{WIDGETS}/w2"
    code, body = api("PATCH", url, {"spec": {"name": "second"}}, ctype="application/merge-patch+json")
    assert code == 422 and body["message"] == ('Widget.example.com "w2" is invalid: spec.name: Invalid value: '
                                               '"string": name is immutable')
    changed = copy.deepcopy(w)
    changed["spec"]["name"] = "second"
    assert api("PUT", url, changed)[0] == 422
    assert api("PATCH", url, {"spec": {"max": 3}}, ctype="application/merge-patch+json")[0] == 200


def test_api_status_writes_run_the_rules_with_the_old_object(api: Http) -> None:
    assert api("POST", WIDGETS, widget("w3", min=1, max=2, name="n"))[0] == 201
    code, body = api("PATCH", f"{WIDGETS}/w3/status", {"status": {"ok": True}},
                     ctype="application/merge-patch+json")
    assert code == 200 and body["status"] == {"ok": True}


def test_crd_with_a_bad_rule_is_refused_through_the_api(api: Http) -> None:
    bad = _crd(obj({"min": INT}, **{"x-kubernetes-validations": [{"rule": "self.min <"}]}))
    bad["metadata"]["name"] = "gadgets.example.com"
    bad["spec"]["names"] = {"plural": "gadgets", "kind": "Gadget"}
    code, body = api("POST", CRDS, bad)
    assert code == 422
    assert body["message"].startswith(
        'CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: '
        f"{AT}.rule: Invalid value: apiextensions.ValidationRule{{")
    assert "compilation failed: ERROR: <input>:1:11: Syntax error:" in body["message"]


@needs_kubectl
def test_kubectl_apply_sees_the_rules(sim: SimulatedCluster, api: Http, tmp_path: Path) -> None:
    kubectl: Kubectl = kubectl_for(sim, tmp_path)
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k1", min=3, max=1)), check=False)
    assert p.returncode != 0
    assert 'The Widget "k1" is invalid: spec: Invalid value: "object": min must be <= max' in p.stderr
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k1", min=1, max=3,
                                                                                  name="a"))).stdout
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(widget("k1", min=1, max=3, name="b")), check=False)
    assert p.returncode != 0 and 'spec.name: Invalid value: "string": name is immutable' in p.stderr
    p = kubectl("apply", "--server-side", "--force-conflicts", "-f", "-",
                stdin=yaml.safe_dump(widget("k1", min=9, max=3, name="a")),
                check=False)
    assert p.returncode != 0 and "min must be <= max" in p.stderr
