"""The OpenAPI v2 document in protobuf: gnostic's ``openapi.v2.Document``
(``github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto``), which kube-openapi's handler
(``k8s.io/kube-openapi/pkg/handler/handler.go``) serves for
``Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf``.

client-go's ``OpenAPISchema()`` asks for nothing else, and kubectl uses it for client-side
validation: when the OpenAPI v3 document has no answer for a kind (an unknown ``apiVersion``/``kind``
in ``kubectl apply -f``; a kind whose POST lacks ``fieldValidation``), kubectl falls back to v2, and
without it fails with "failed to download openapi" before it ever says "no matches for kind".

The encoding is the JSON Swagger 2.0 document (``OpenAPI.v2``) written field by field as the gnostic
messages number them: ``Document`` (swagger, info, paths, definitions), ``PathItem`` and ``Operation``,
their parameters (a ``BodyParameter``, or a query/path ``NonBodyParameter``), responses, and
``Schema`` with its properties, items, ``additionalProperties``, ``allOf`` and vendor extensions. A
vendor extension (``x-kubernetes-group-version-kind``, the patch strategies...) is a ``NamedAny``
whose ``yaml`` holds the value (JSON is YAML), which is where kube-openapi's ``proto`` package reads it
from. Proto3 leaves out zero values, as gnostic's Go encoder does.
"""

from __future__ import annotations

import struct
from typing import Any

import orjson

__all__ = ["document"]

Obj = dict[str, Any]

_SCHEMA_STRINGS = {"$ref": 1, "format": 2, "title": 3, "description": 4, "pattern": 13, "discriminator": 26}
_SCHEMA_DOUBLES = {"multipleOf": 6, "maximum": 7, "minimum": 9}
_SCHEMA_INTS = {"maxLength": 11, "minLength": 12, "maxItems": 14, "minItems": 15, "maxProperties": 17,
                "minProperties": 18}
_SCHEMA_BOOLS = {"exclusiveMaximum": 8, "exclusiveMinimum": 10, "uniqueItems": 16, "readOnly": 27}
# QueryParameterSubSchema and PathParameterSubSchema share their first fields but not the numbers after
# ``name``: a query parameter has ``allowEmptyValue`` (5) first.
_QUERY = {"required": 1, "in": 2, "description": 3, "name": 4, "type": 6, "format": 7, "uniqueItems": 20,
          "vendor": 23}
_PATH = {"required": 1, "in": 2, "description": 3, "name": 4, "type": 5, "format": 6, "uniqueItems": 19,
         "vendor": 22}
_METHODS = {"get": 2, "put": 3, "post": 4, "delete": 5, "options": 6, "head": 7, "patch": 8}


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1                 # negative int64s are ten bytes, as Go writes them
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _bytes(field: int, data: bytes) -> bytes:
    return _varint(field << 3 | 2) + _varint(len(data)) + data


def _string(field: int, value: Any) -> bytes:
    return _bytes(field, str(value).encode()) if value not in (None, "") else b""


def _int(field: int, value: Any) -> bytes:
    return _varint(field << 3) + _varint(int(value)) if value else b""


def _double(field: int, value: Any) -> bytes:
    return _varint(field << 3 | 1) + struct.pack("<d", float(value)) if value else b""


def _any(value: Any) -> bytes:
    """``Any``: the value as YAML (its JSON) in ``yaml`` (2)."""
    return _string(2, orjson.dumps(value).decode())


def _named_any(field: int, name: str, value: Any) -> bytes:
    return _bytes(field, _string(1, name) + _bytes(2, _any(value)))


def _vendor(field: int, obj: Obj) -> bytes:
    return b"".join(_named_any(field, k, v) for k, v in obj.items() if k.startswith("x-"))


def _schema(s: Obj) -> bytes:
    out = bytearray()
    for key, value in s.items():
        if key in _SCHEMA_STRINGS:
            out += _string(_SCHEMA_STRINGS[key], value)
        elif key in _SCHEMA_DOUBLES:
            out += _double(_SCHEMA_DOUBLES[key], value)
        elif key in _SCHEMA_INTS:
            out += _int(_SCHEMA_INTS[key], value)
        elif key in _SCHEMA_BOOLS:
            out += _int(_SCHEMA_BOOLS[key], value)
        elif key == "default":
            out += _bytes(5, _any(value))
        elif key == "example":
            out += _bytes(30, _any(value))
        elif key == "required":
            out += b"".join(_string(19, r) for r in value)
        elif key == "enum":
            out += b"".join(_bytes(20, _any(v)) for v in value)
        elif key == "additionalProperties":
            item = _bytes(1, _schema(value)) if isinstance(value, dict) else _int(2, bool(value))
            out += _bytes(21, item)
        elif key == "type":
            out += _bytes(22, b"".join(_string(1, t) for t in (value if isinstance(value, list) else [value])))
        elif key == "items":
            items = value if isinstance(value, list) else [value]
            out += _bytes(23, b"".join(_bytes(1, _schema(i)) for i in items))
        elif key == "allOf":
            out += b"".join(_bytes(24, _schema(a)) for a in value)
        elif key == "properties":
            out += _bytes(25, b"".join(_bytes(1, _string(1, k) + _bytes(2, _schema(v))) for k, v in value.items()))
    out += _vendor(31, s)
    return bytes(out)


def _parameter(p: Obj) -> bytes:
    """A ``ParametersItem`` holding a ``Parameter``: the body, or a query or path parameter."""
    if p.get("in") == "body":
        body = (_string(1, p.get("description")) + _string(2, p.get("name")) + _string(3, "body")
                + _int(4, p.get("required")) + _bytes(5, _schema(p.get("schema") or {})))
        parameter = _bytes(1, body)
    else:
        numbers, which = (_PATH, 4) if p.get("in") == "path" else (_QUERY, 3)
        sub = b"".join((_int if k in ("required", "uniqueItems") else _string)(numbers[k], p.get(k))
                       for k in ("required", "in", "description", "name", "type", "format", "uniqueItems"))
        sub += _vendor(numbers["vendor"], p)
        parameter = _bytes(2, _bytes(which, sub))
    return _bytes(1, parameter)


def _operation(op: Obj) -> bytes:
    out = bytearray()
    out += b"".join(_string(1, t) for t in op.get("tags") or ())
    out += _string(2, op.get("summary")) + _string(3, op.get("description")) + _string(5, op.get("operationId"))
    out += b"".join(_string(6, m) for m in op.get("produces") or ())
    out += b"".join(_string(7, m) for m in op.get("consumes") or ())
    out += b"".join(_bytes(8, _parameter(p)) for p in op.get("parameters") or ())
    codes = b""
    for code, r in (op.get("responses") or {}).items():
        response = _string(1, r.get("description"))
        if "schema" in r:
            response += _bytes(2, _bytes(1, _schema(r["schema"])))
        codes += _bytes(1, _string(1, code) + _bytes(2, _bytes(1, response)))
    out += _bytes(9, codes)
    out += b"".join(_string(10, s) for s in op.get("schemes") or ())
    out += _int(11, op.get("deprecated"))
    out += _vendor(13, op)
    return bytes(out)


def _path_item(item: Obj) -> bytes:
    out = b"".join(_bytes(_METHODS[m], _operation(op)) for m, op in item.items() if m in _METHODS)
    out += b"".join(_bytes(9, _parameter(p)) for p in item.get("parameters") or ())
    return out + _vendor(10, item)


def document(doc: Obj) -> bytes:
    """The Swagger 2.0 ``doc`` as an ``openapi.v2.Document`` message."""
    info = doc.get("info") or {}
    out = bytearray(_string(1, doc.get("swagger")))
    out += _bytes(2, _string(1, info.get("title")) + _string(2, info.get("version")) + _vendor(7, info))
    out += _bytes(8, b"".join(_bytes(2, _string(1, path) + _bytes(2, _path_item(item)))
                              for path, item in (doc.get("paths") or {}).items()))
    out += _bytes(9, b"".join(_bytes(1, _string(1, name) + _bytes(2, _schema(schema)))
                              for name, schema in (doc.get("definitions") or {}).items()))
    out += _vendor(16, doc)
    return bytes(out)
