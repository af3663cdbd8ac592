"""The type check that Go's JSON decoder makes as kube-apiserver decodes a built-in object.

kube-apiserver decodes a request body into the kind's Go struct (``sigs.k8s.io/json``, a fork of
``encoding/json``) before anything else runs. A value of the wrong JSON type for its field cannot be
decoded: ``"nodeSelector": "ssd"``, or ``tolerations`` written as one object instead of a list. The
answer is ``400 BadRequest``::

    Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct
    field PodSpec.spec.nodeSelector of type map[string]string

The server here stores JSON as it comes, so without this check such a body would be stored and then
break every reader that trusts the schema: the scheduler, kubectl, and the server's own validation
(which answered ``tolerations: {key: a}`` with a 500). This module walks the object against the
kind's OpenAPI schema (``apidefs``) and raises the error the decoder would, for the first mismatch in
document order (the decoder keeps the first type error it meets).

As in Go's decoder:

- the field path is the JSON names from the root, without list indexes or map keys; the struct named
  is the Go type holding the last field (``PodSpec``), and the type is the Go type the value was to
  fill (``[]v1.Toleration``, ``map[string]string``, ``int32``, ``v1.Affinity``);
- ``null`` fits anything; a number with a fraction or out of range for an integer field is named with
  its text (``number 1.5``), any other mismatch by its JSON kind (``string``, ``number``, ``object``,
  ``array``, ``bool``);
- types that decode themselves (``Quantity``, ``IntOrString``, ``RawExtension``, ``JSON``) are not walked
  here: quantities have their own check in ``admission``, the rest accept any JSON. ``Time`` and
  ``MicroTime`` are parsed as their ``UnmarshalJSON`` does (RFC 3339; six fraction digits for
  ``MicroTime``), and their error is ``time.Parse``'s (``parsing time "x" as "2006-01-02T15:04:05Z07:00":
  cannot parse "x" as "2006"``).

Unknown fields are not this module's concern (``fieldValidation`` is ``openapi.FieldChecker``'s).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from typing import Any

import orjson

from scheduler.simulator import apidefs
from scheduler.simulator.apierrors import ApiError

__all__ = ["check_types", "content_key", "memo_bytes"]

Obj = dict[str, Any]

_REF = "#/components/schemas/"
# Types with their own UnmarshalJSON: any JSON may reach them, and their errors are not the decoder's.
_SELF_DECODING = frozenset({
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
})
_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


_RFC3339 = ("2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", "Z07:00")
_RFC3339_MICRO = ("2006", "-", "01", "-", "02", "T", "15", ":", "04", ":", "05", ".000000", "Z07:00")
_TIME_LAYOUTS = {"io.k8s.apimachinery.pkg.apis.meta.v1.Time": _RFC3339,
                 "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": _RFC3339_MICRO}
_RANGES = {"01": (1, 12, "month"), "02": (1, 31, "day"), "15": (0, 23, "hour"), "04": (0, 59, "minute"),
           "05": (0, 59, "second")}


class _TimeError(Exception):
    """The error ``metav1.Time``/``MicroTime``'s ``UnmarshalJSON`` returns (``time.Parse``'s)."""


_ZONE = r"(?:Z|[+-][0-9]{2}:[0-9]{2})"
_CLOCK = r"[0-9]{4}-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})"
# The well-formed values, which ``_parse_time_slow`` accepts when the fields are in range: every pod
# and event carries one, so they are checked with one match instead of the element walk.
_FAST = {_RFC3339: re.compile(_CLOCK + r"(?:[.,][0-9]*)?" + _ZONE + r"\Z"),
         _RFC3339_MICRO: re.compile(_CLOCK + r"\.[0-9]{6}" + _ZONE + r"\Z")}


def _parse_time(value: str, layout: tuple[str, ...]) -> None:
    """``time.Parse(layout, value)``'s verdict (``_parse_time_slow``), a well-formed value at once."""
    m = _FAST[layout].match(value)
    if m is not None:
        month, day, hour, minute, second = map(int, m.groups())
        if 1 <= month <= 12 and 1 <= day <= 31 and hour <= 23 and minute <= 59 and second <= 59:
            return
    _parse_time_slow(value, layout)


def _ascii_digits(s: str) -> bool:
    # Go's getnum takes '0'..'9' only; str.isdigit also takes '²', which int() then refuses.
    return s.isascii() and s.isdigit()


def _parse_time_slow(value: str, layout: tuple[str, ...]) -> None:
    """``time.Parse(layout, value)``'s verdict, for the two layouts the API uses: raise its error text.

    Go walks the layout element by element; the first element the value does not fit names both
    (``cannot parse "x" as "2006"``). A fraction after the seconds is accepted even where the layout
    has none; ``.000000`` takes exactly six digits."""
    shown = f'parsing time {json.dumps(value)} as {json.dumps("".join(layout))}'
    rest = value
    for i, elem in enumerate(layout):
        if elem in ("2006", "01", "02", "15", "04", "05"):
            rest = _time_number(value, shown, rest, elem, layout[i + 1] if elem == "05" else "")
        elif elem == ".000000":
            if len(rest) < 7 or rest[0] != "." or not _ascii_digits(rest[1:7]):
                raise _TimeError(f"{shown}: cannot parse {json.dumps(rest)} as {json.dumps(elem)}")
            rest = rest[7:]
        elif elem == "Z07:00":
            rest = _time_zone(shown, rest, elem)
        elif rest.startswith(elem):
            rest = rest[len(elem):]
        else:
            raise _TimeError(f"{shown}: cannot parse {json.dumps(rest)} as {json.dumps(elem)}")
    if rest:
        raise _TimeError(f"parsing time {json.dumps(value)}: extra text: {json.dumps(rest)}")


def _time_number(value: str, shown: str, rest: str, elem: str, after: str) -> str:
    """A number element (year, month, day, hour, minute, second): what follows it, or its error; after
    the seconds (``after``: the next element) a fraction the layout does not name is skipped."""
    n = 4 if elem == "2006" else 2
    if len(rest) < n or not _ascii_digits(rest[:n]):
        raise _TimeError(f"{shown}: cannot parse {json.dumps(rest)} as {json.dumps(elem)}")
    number, rest = int(rest[:n]), rest[n:]
    if elem in _RANGES and not _RANGES[elem][0] <= number <= _RANGES[elem][1]:
        raise _TimeError(f"parsing time {json.dumps(value)}: {_RANGES[elem][2]} out of range")
    if elem == "05" and after != ".000000" and rest[:1] in (".", ","):
        digits = len(rest[1:]) - len(rest[1:].lstrip("0123456789"))
        rest = rest[1 + digits:]
    return rest


def _time_zone(shown: str, rest: str, elem: str) -> str:
    """The zone element: ``Z`` or ``±hh:mm``; what follows it, or its error."""
    if rest[:1] == "Z":
        return rest[1:]
    if (len(rest) >= 6 and rest[0] in "+-" and _ascii_digits(rest[1:3]) and rest[3] == ":"
            and _ascii_digits(rest[4:6])):
        return rest[6:]
    raise _TimeError(f"{shown}: cannot parse {json.dumps(rest)} as {json.dumps(elem)}")


class _Mismatch(Exception):
    def __init__(self, value: str, struct: str, path: tuple[str, ...], go_type: str) -> None:
        super().__init__(value)
        self.value, self.struct, self.path, self.go_type = value, struct, path, go_type


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, list):
        return "array"
    return "object"


def _resolve(schema: Obj) -> str | None:
    """The definition a schema refers to, directly or through ``allOf: [{$ref}]`` (a described ref)."""
    ref = schema.get("$ref")
    if ref is None and schema.get("allOf"):
        ref = schema["allOf"][0].get("$ref")
    return ref[len(_REF):] if isinstance(ref, str) and ref.startswith(_REF) else None


def _short(definition: str) -> str:
    """``io.k8s.api.core.v1.Toleration`` → ``v1.Toleration``, as Go prints a named type."""
    parts = definition.split(".")
    return ".".join(parts[-2:])


def _go_type(schema: Obj) -> str:
    definition = _resolve(schema)
    if definition is not None:
        return _short(definition)
    kind = schema.get("type")
    if kind == "array":
        return "[]" + _go_type(schema.get("items") or {})
    if kind == "object":
        extra = schema.get("additionalProperties")
        return "map[string]" + (_go_type(extra) if isinstance(extra, dict) else "interface {}")
    if kind == "integer":
        return str(schema.get("format") or "int64")
    if kind == "number":
        return "float64"
    if kind == "boolean":
        return "bool"
    if kind == "string":
        return "[]uint8" if schema.get("format") == "byte" else "string"
    return "interface {}"


@functools.cache
def _definitions() -> dict[str, Obj]:
    return apidefs.schemas()


# Compiled schema nodes: a schema is resolved once into what the walk needs, so the walk of a pod
# looks at the object's own fields (a handful) and never at the schema's (PodSpec has forty).
_ANY, _STRUCT, _ARRAY, _MAP, _STRING, _BOOL, _INT, _NUMBER, _TIME = range(9)


class _Node:
    __slots__ = ("definition", "fields", "go_type", "holder", "item", "kind", "layout", "range")

    def __init__(self, kind: int, go_type: str = "") -> None:
        self.kind, self.go_type = kind, go_type
        self.fields: dict[str, _Node] = {}
        self.item: _Node | None = None
        self.holder = ""
        self.definition = ""
        self.layout: tuple[str, ...] = ()
        self.range = _INT_RANGES["int64"]


_NODES: dict[int, _Node] = {}           # id(schema) -> its node; the schemas live as long as the cache
_STRUCTS: dict[str, _Node] = {}


def _compile(schema: Obj) -> _Node:
    node = _NODES.get(id(schema))
    if node is not None:
        return node
    definition = _resolve(schema)
    if definition is not None:
        node = _struct(definition)
    else:
        kind = schema.get("type")
        if kind == "array":
            node = _Node(_ARRAY, _go_type(schema))
            node.item = _compile(schema.get("items") or {})
        elif kind == "object" and isinstance(schema.get("additionalProperties"), dict):
            node = _Node(_MAP, _go_type(schema))
            node.item = _compile(schema["additionalProperties"])
        elif kind == "object":
            node = _Node(_MAP, _go_type(schema))
        elif kind == "string":
            node = _Node(_STRING, _go_type(schema))
        elif kind == "boolean":
            node = _Node(_BOOL, "bool")
        elif kind == "integer":
            node = _Node(_INT, _go_type(schema))
            node.range = _INT_RANGES.get(node.go_type, _INT_RANGES["int64"])
        elif kind == "number":
            node = _Node(_NUMBER, "float64")
        else:
            node = _Node(_ANY)
    _NODES[id(schema)] = node
    return node


def _struct(definition: str) -> _Node:
    node = _STRUCTS.get(definition)
    if node is not None:
        return node
    layout = _TIME_LAYOUTS.get(definition)
    target = _definitions().get(definition)
    if layout is not None:
        node = _Node(_TIME, "string")
        node.layout = layout
    elif definition in _SELF_DECODING or target is None:
        node = _Node(_ANY)
    else:
        node = _Node(_STRUCT, _short(definition))
        node.holder = definition.rsplit(".", 1)[-1]
    node.definition = definition
    _STRUCTS[definition] = node               # before the fields: definitions refer to themselves
    if node.kind == _STRUCT and target is not None:
        node.fields = {name: _compile(sub) for name, sub in (target.get("properties") or {}).items()}
    return node


def _check_scalar(value: Any, node: _Node, struct: str, path: tuple[str, ...], name: str | None = None) -> None:
    """A scalar field (``name`` under ``path``, or at ``path`` itself); the path is built only to fail."""
    kind = node.kind
    if kind == _STRING:
        if type(value) is str:
            return
        bad = _json_kind(value)
    elif kind == _BOOL:
        if type(value) is bool:
            return
        bad = _json_kind(value)
    elif kind in (_INT, _NUMBER):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            bad = _json_kind(value)
        elif kind == _NUMBER:
            return
        else:
            lo, hi = node.range
            if not ((isinstance(value, float) and not value.is_integer()) or not lo <= value <= hi):
                return
            bad = f"number {value!r}"
    elif kind == _TIME:
        if type(value) is not str:
            raise _TimeError(f"json: cannot unmarshal {_json_kind(value)} into Go value of type string")
        _parse_time(value, node.layout)
        return
    else:
        return
    raise _Mismatch(bad, struct, path if name is None else (*path, name), node.go_type)


def _walk(value: Any, node: _Node, struct: str, path: tuple[str, ...], top: bool = False) -> None:
    """Check ``value`` against ``node``, in the value's own order (the decoder's order); at the ``top``
    (the root object) a field whose value was seen clean before is skipped (``_CLEAN``)."""
    kind = node.kind
    if value is None or kind == _ANY:
        return
    if kind == _STRUCT:
        _walk_struct(value, node, struct, path, top)
    elif kind in (_ARRAY, _MAP):
        _walk_items(value, node, struct, path)
    else:
        _check_scalar(value, node, struct, path)


def _walk_struct(value: Any, node: _Node, struct: str, path: tuple[str, ...], top: bool) -> None:
    """A JSON object against a Go struct: each known field checked, unknown ones left to the decoder's
    field validation; at the ``top`` a subtree seen clean before is skipped."""
    if type(value) is not dict:
        raise _Mismatch(_json_kind(value), struct, path, node.go_type)
    fields, holder = node.fields, node.holder
    for name, v in value.items():
        sub = fields.get(name)
        if sub is None or v is None:
            continue
        if sub.kind >= _STRING:
            _check_scalar(v, sub, holder, path, name)
        elif sub.kind != _ANY:
            key = content_key(sub, v) if top else None
            if key is not None and key in _CLEAN:
                continue
            _walk(v, sub, holder, (*path, name))
            if key is not None:
                if len(_CLEAN) >= _CLEAN_MAX:
                    _CLEAN.clear()
                _CLEAN.add(key)


def _walk_items(value: Any, node: _Node, struct: str, path: tuple[str, ...]) -> None:
    """A JSON array against a Go slice, or an object against a Go map: each item against the item type."""
    values: Iterable[Any]
    if node.kind == _ARRAY and type(value) is list:
        values = value
    elif node.kind == _MAP and type(value) is dict:
        values = value.values()
    else:
        raise _Mismatch(_json_kind(value), struct, path, node.go_type)
    item = node.item
    if item is None or item.kind == _ANY:
        return
    for v in values:
        if v is None:
            continue
        if item.kind >= _STRING:
            _check_scalar(v, item, struct, path)
        else:
            _walk(v, item, struct, path)


# Top-level subtrees (a pod's ``spec``) already seen to decode cleanly, by schema node and encoded
# content: a workload's pods share their spec, and the check is a pure function of the two. Only
# clean ones are kept, so an error is always found by the walk itself.
_CLEAN: set[tuple[int, bytes]] = set()
_CLEAN_MAX = 4096


def content_key(tag: object, value: Any) -> tuple[int, bytes] | None:
    """A memo key for a JSON object or array checked against ``tag`` (a compiled schema node, kept for
    the process's life so its id is stable): the id and the encoded content; None for a scalar or a
    value JSON cannot encode (a YAML date, a huge integer), which is then always walked.

    The content is copied to its exact size (``memo_bytes``): a memo keeps thousands of keys, and
    each of orjson's outputs would keep its whole 4 KiB buffer."""
    if type(value) is not dict and type(value) is not list:
        return None
    try:
        return id(tag), memo_bytes(orjson.dumps(value))
    except (orjson.JSONEncodeError, TypeError):
        return None


def memo_bytes(data: bytes) -> bytes:
    """``data`` copied into a bytes object of its own length, for a key that a memo keeps.

    orjson (3.x) allocates its output with a 4 KiB buffer and does not shrink it, so a 100-byte
    ``orjson.dumps`` result kept alive holds 4 KiB: 4,096 kept keys were 16 MiB of resident memory."""
    return memoryview(data).tobytes()


def check_types(obj: Obj, group: str, version: str, kind: str) -> None:
    """Raise the 400 kube-apiserver gives when ``obj`` cannot be decoded into ``kind``'s Go struct.

    Kinds without a built-in definition (custom resources) are not checked here: their schema is the
    CRD's, and apiextensions validates them as 422s."""
    definition = apidefs.kind_definitions().get((group, version, kind))
    if definition is None:
        return
    try:
        _walk(obj, _struct(definition), kind, (), top=True)
    except _TimeError as e:
        raise ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: {e}'
                       ) from None
    except _Mismatch as m:
        raise ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: '
                                          f"json: cannot unmarshal {m.value} into Go struct field "
                                          f"{m.struct}.{'.'.join(m.path)} of type {m.go_type}") from None
