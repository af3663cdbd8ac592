"""Request bodies in ``application/vnd.kubernetes.protobuf``, decoded into the JSON form the server stores.

client-go's generated clients send the built-in kinds as protobuf and nothing else: every typed client
(kubectl's ``create configmap|namespace|priorityclass|poddisruptionbudget|service|...`` generators,
``auth can-i`` and ``auth whoami``, ``drain``'s evictions, kube-scheduler's bindings, events and leases)
uses ``UseProtobufAsDefault``, and unlike CBOR there is no fallback to JSON after a 415. A server that
refused protobuf would refuse them all, so the simulated server reads it (it answers in JSON, which those
clients accept too: they send ``Accept: application/vnd.kubernetes.protobuf,application/json``).

The body is apimachinery's envelope: the magic ``k8s\\x00``, then a ``runtime.Unknown`` message (``typeMeta``
= 1, ``raw`` = 2, ``contentEncoding`` = 3, ``contentType`` = 4) whose ``raw`` is the object's own message.
Messages are decoded with two tables: the Go types' field numbers (``protodefs.proto_fields``) and
their OpenAPI schemas (``apidefs.schemas``), which say what each field holds. The JSON that comes out is what
``json.Marshal`` of the typed object would give, as far as it matters here: a scalar present on the wire
is dropped when it is its zero value and the Go field is neither a pointer nor without ``omitempty``
(gogo-protobuf writes every non-pointer scalar, set or not); the well-known types become their JSON forms
(``Time`` RFC 3339 to the second, ``MicroTime`` to the microsecond, ``Quantity`` its string,
``IntOrString`` an integer or a string, ``RawExtension`` and ``FieldsV1`` their embedded JSON).

Anything malformed (a truncated varint, a length past the end, a wire type the field cannot have, a
message nested deeper than ``MAX_DEPTH``) raises ``ProtobufError``, which the server answers as
kube-apiserver answers an undecodable body: 400.
"""

from __future__ import annotations

import base64
import datetime as dt
import functools
import struct
from typing import Any

import orjson

from scheduler.simulator import apidefs, protodefs
from scheduler.simulator.decode import MAX_DEPTH

__all__ = ["MAGIC", "ProtobufError", "decodable", "decode_object"]

Obj = dict[str, Any]
MAGIC = b"k8s\x00"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_TIME, _MICRO, _DURATION = _META + "Time", _META + "MicroTime", _META + "Duration"
_FIELDS = _META + "FieldsV1"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_RAW = {"io.k8s.apimachinery.pkg.runtime.RawExtension", _FIELDS,
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON"}
_WELL_KNOWN = {_TIME, _MICRO, _DURATION, _QUANTITY, _INT_OR_STRING} | _RAW
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)


class ProtobufError(ValueError):
    """A body that is not a protobuf-encoded object this server can read."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    end = len(buf)
    while True:
        if i >= end:
            raise ProtobufError("unexpected EOF")
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if shift >= 70:
            raise ProtobufError("integer overflow")


def _fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, raw value) in wire order: an int for varints and fixed64, bytes otherwise."""
    out: list[tuple[int, int, Any]] = []
    i, end = 0, len(buf)
    while i < end:
        key, i = _varint(buf, i)
        num, wire = key >> 3, key & 7
        value: Any
        if num == 0:
            raise ProtobufError("illegal tag 0")
        if wire == 0:
            value, i = _varint(buf, i)
        elif wire == 2:
            size, i = _varint(buf, i)
            if size > end - i:
                raise ProtobufError("unexpected EOF")
            value, i = buf[i:i + size], i + size
        elif wire == 1:
            if i + 8 > end:
                raise ProtobufError("unexpected EOF")
            value, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wire == 5:
            if i + 4 > end:
                raise ProtobufError("unexpected EOF")
            value, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ProtobufError(f"illegal wireType {wire}")
        out.append((num, wire, value))
    return out


def _signed(v: int) -> int:
    return v - (1 << 64) if v >= 1 << 63 else v


def _go_duration(ns: int) -> str:
    """Go's ``time.Duration.String``: ``1h2m3.5s``, ``1.5s``, ``500ms``, ``0s``."""
    if ns == 0:
        return "0s"
    sign, ns = ("-", -ns) if ns < 0 else ("", ns)
    if ns < 1_000_000_000:
        for unit, size in (("ms", 1_000_000), ("µs", 1_000), ("ns", 1)):
            if ns >= size:
                whole, frac = divmod(ns, size)
                text = f"{whole}.{frac:0{len(str(size)) - 1}d}".rstrip("0").rstrip(".") if size > 1 else str(whole)
                return f"{sign}{text}{unit}"
    secs, frac = divmod(ns, 1_000_000_000)
    hours, secs = divmod(secs, 3600)
    mins, secs = divmod(secs, 60)
    text = f"{secs}.{frac:09d}".rstrip("0").rstrip(".") + "s"
    if hours or mins:
        text = f"{mins}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def _ref(schema: Obj) -> str | None:
    ref = schema.get("$ref")
    if ref is None and schema.get("allOf"):
        ref = schema["allOf"][0].get("$ref")
    return ref.rpartition("/")[2] if ref else None


def _well_known(name: str, raw: bytes) -> Any:
    """The JSON form of a well-known type's message. Each field must have its declared wire type (gogo's
    ``proto: wrong wireType`` otherwise), so a malformed body is a ``ProtobufError`` (400), never a 500."""
    fields = {num: (wire, value) for num, wire, value in _fields(raw)}
    if name in (_TIME, _MICRO):
        if not raw:
            return None                     # the zero time: gogo writes nothing
        seconds = _signed(_wk_varint(fields, 1, "Seconds"))
        nanos = _wk_varint(fields, 2, "Nanos") & 0xFFFFFFFF
        try:
            t = _EPOCH + dt.timedelta(seconds=seconds)
            if name == _TIME:                # Time keeps only seconds (time_proto.go), MicroTime microseconds
                return t.strftime("%Y-%m-%dT%H:%M:%SZ")
            return (t + dt.timedelta(microseconds=nanos // 1000)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        except (OverflowError, ValueError):
            # Go would decode it, but could never serve it: its JSON form does not exist. Refused here,
            # rather than stored and then failing every read (Go's Time.MarshalJSON error).
            raise ProtobufError("Time.MarshalJSON: year outside of range [0,9999]") from None
    if name == _DURATION:
        return _go_duration(_signed(_wk_varint(fields, 1, "Duration")))
    if name == _QUANTITY:
        return _text(fields.get(1, (2, b""))[1])
    if name == _INT_OR_STRING:
        if _wk_varint(fields, 1, "Type") == 1:
            return _text(fields.get(3, (2, b""))[1])
        return _signed(_wk_varint(fields, 2, "IntVal"))
    wire, data = fields.get(1, (2, b""))      # RawExtension, FieldsV1, apiextensions JSON
    if wire != 2:
        raise ProtobufError(f"proto: wrong wireType = {wire} for field Raw")
    try:
        return orjson.loads(data) if data else None
    except orjson.JSONDecodeError as e:
        raise ProtobufError(f"embedded JSON: {e}") from None


def _wk_varint(fields: dict[int, tuple[int, Any]], num: int, go_name: str) -> int:
    """A varint field of a well-known message (0 when absent, as gogo leaves it)."""
    wire, value = fields.get(num, (0, 0))
    if wire != 0:
        raise ProtobufError(f"proto: wrong wireType = {wire} for field {go_name}")
    return int(value)


def _text(raw: Any) -> str:
    if not isinstance(raw, bytes):
        raise ProtobufError("expected a length-delimited string")
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise ProtobufError("invalid UTF-8 in a string") from None


def _scalar(schema: Obj, wire: int, raw: Any) -> Any:
    t = schema.get("type")
    if t == "string":
        if schema.get("format") == "byte":
            if not isinstance(raw, bytes):
                raise ProtobufError("expected bytes")
            return base64.b64encode(raw).decode()
        return _text(raw)
    if t == "integer":
        if wire != 0:
            raise ProtobufError("expected a varint")
        return _signed(raw)
    if t == "boolean":
        if wire != 0:
            raise ProtobufError("expected a varint")
        return raw != 0
    if t == "number":
        if wire != 1:
            raise ProtobufError("expected a double")
        return struct.unpack("<d", raw.to_bytes(8, "little"))[0]
    raise ProtobufError(f"cannot decode a {t or 'schemaless'} field")


class _Decoder:
    def __init__(self) -> None:
        self.fields = protodefs.proto_fields()
        self.schemas = apidefs.schemas()
        self.by_number: dict[str, dict[int, tuple[str, str]]] = {}

    def numbers(self, message: str) -> dict[int, tuple[str, str]]:
        table = self.by_number.get(message)
        if table is None:
            entries = self.fields.get(message)
            if entries is None:
                schema = self.schemas.get(message)
                if schema is None or schema.get("type") != "object" or schema.get("properties"):
                    raise ProtobufError(f"no protobuf encoding known for {message}")
                # An empty struct (a CRD's ``subresources.status: {}``): no fields, so no numbers; its
                # message decodes to ``{}`` as Go's does, whatever unknown fields it carries.
                entries = ()
            table = self.by_number[message] = {num: (name, flags) for num, name, flags in entries}
        return table

    def message(self, raw: Any, message: str, schema_name: str, out: Obj, depth: int) -> Obj:
        """Decode ``raw`` as the Go type ``message`` into ``out``; field types come from ``schema_name``'s
        schema (the same, except for an inlined embedded struct, whose fields are its parent's)."""
        if not isinstance(raw, bytes):
            raise ProtobufError("expected a message")
        if depth > MAX_DEPTH:
            raise ProtobufError(f"exceeded max depth of {MAX_DEPTH}")
        numbers = self.numbers(message)
        props = self.schemas[schema_name].get("properties") or {}
        for num, wire, value in _fields(raw):
            entry = numbers.get(num)
            if entry is None:
                continue                               # a field this version does not know: skipped, as Go does
            name, flags = entry
            if flags == "+":
                self.message(value, name, schema_name, out, depth + 1)
                continue
            prop = props.get(name)
            if prop is None:
                continue
            if prop.get("type") == "array":
                self._repeated(out.setdefault(name, []), prop.get("items") or {}, wire, value, depth)
            elif prop.get("type") == "object" and isinstance(prop.get("additionalProperties"), dict):
                self._map_entry(out.setdefault(name, {}), prop["additionalProperties"], value, depth)
            else:
                decoded = self.value(prop, wire, value, depth)
                if decoded is None or (not flags and decoded in ("", 0, False) and not isinstance(decoded, float)):
                    out.pop(name, None)               # a non-pointer zero with omitempty: not in the JSON
                    continue
                out[name] = decoded
        return out

    def _repeated(self, lst: list[Any], items: Obj, wire: int, value: Any, depth: int) -> None:
        """One occurrence of a repeated field: an element, or a packed run of scalars."""
        if wire == 2 and items.get("type") in ("integer", "boolean"):
            i = 0
            while i < len(value):                # a packed repeated scalar
                v, i = _varint(value, i)
                lst.append(_scalar(items, 0, v))
        else:
            lst.append(self.value(items, wire, value, depth))

    def _map_entry(self, into: Obj, vschema: Obj, value: Any, depth: int) -> None:
        """One map entry (a message of key 1 and value 2), added to ``into``."""
        entry_fields = {n: (w, v) for n, w, v in _fields(value)} if isinstance(value, bytes) else None
        if entry_fields is None:
            raise ProtobufError("expected a map entry")
        key = _text(entry_fields.get(1, (2, b""))[1])
        w, v = entry_fields.get(2, (2, b""))
        into[key] = self.value(vschema, w, v, depth) if 2 in entry_fields else self.zero(vschema)

    def zero(self, schema: Obj) -> Any:
        """A map value absent from its entry: the zero value of its type."""
        ref = _ref(schema)
        if ref is not None:
            return None if ref in _WELL_KNOWN else {}
        return {"string": "", "integer": 0, "boolean": False, "number": 0.0}.get(schema.get("type", ""))

    def value(self, schema: Obj, wire: int, raw: Any, depth: int) -> Any:
        ref = _ref(schema)
        if ref is None:
            return _scalar(schema, wire, raw)
        if ref in _WELL_KNOWN:
            if not isinstance(raw, bytes):
                raise ProtobufError("expected a message")
            return _well_known(ref, raw)
        return self.message(raw, ref, ref, {}, depth + 1)


@functools.cache
def _decoder() -> _Decoder:
    """One decoder per process: its tables are built on the first protobuf body."""
    return _Decoder()


def decodable(group: str, version: str, kind: str) -> bool:
    """Whether bodies of this kind can be read from protobuf (a built-in kind with a known encoding)."""
    name = apidefs.kind_definitions().get((group, version, kind))
    return name is not None and name in protodefs.proto_fields()


def decode_object(data: bytes, group: str, version: str, kind: str) -> Obj:
    """The object a protobuf request body carries, as JSON; its kind is the envelope's, or ``kind`` (the
    endpoint's) when the envelope names none, as the protobuf serializer defaults it."""
    if not data.startswith(MAGIC):
        raise ProtobufError(f"provided data does not appear to be a protobuf message, expected prefix {list(MAGIC)}")
    envelope = {num: value for num, _, value in _fields(data[len(MAGIC):])}
    type_meta = {num: value for num, _, value in _fields(envelope.get(1, b""))}
    api_version = _text(type_meta.get(1, b"")) or (f"{group}/{version}" if group else version)
    body_kind = _text(type_meta.get(2, b"")) or kind
    if envelope.get(3) or (envelope.get(4) and envelope[4] != b"application/vnd.kubernetes.protobuf"):
        raise ProtobufError("unsupported content encoding or type in the envelope")
    g, _, v = api_version.rpartition("/")
    name = apidefs.kind_definitions().get((g, v, body_kind))
    if name is None or name not in protodefs.proto_fields():
        raise ProtobufError(f"no kind {body_kind!r} is registered for version {api_version!r}")
    dec = _decoder()
    out: Obj = {"apiVersion": api_version, "kind": body_kind}
    dec.message(envelope.get(2, b""), name, name, out, 0)
    return out
