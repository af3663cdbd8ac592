"""``protobuf.decode_object`` on its own (no server): bodies encoded by hand as client-go's gogo-protobuf
marshals them, field numbers from k8s.io/api's ``generated.proto``, so the decoder is checked against
upstream's numbering and not against its own table.

gogo writes every non-pointer scalar even when it is zero (an ObjectReference's empty ``uid``), so those
must come out as ``json.Marshal`` would: dropped under ``omitempty``, kept for pointers. Every malformed
body is a ``ProtobufError`` (the server's 400), never another exception (a 500)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.simulator.protobuf import MAGIC, ProtobufError, decode_object


def varint(n: int) -> bytes:
    n &= (1 << 64) - 1                   # negative int64/int32 go on the wire as ten bytes
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | 0x80 if n else b)
        if not n:
            return bytes(out)


def num(field: int, value: int) -> bytes:
    return varint(field << 3) + varint(value)


def msg(field: int, payload: bytes | str) -> bytes:
    data = payload.encode() if isinstance(payload, str) else payload
    return varint(field << 3 | 2) + varint(len(data)) + data


def entry(field: int, key: str, value: bytes | str) -> bytes:
    """One map entry (key = 1, value = 2), as protobuf encodes ``map<string, ...>``."""
    return msg(field, msg(1, key) + msg(2, value))


def envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    """apimachinery's envelope: the magic, then runtime.Unknown{typeMeta = 1, raw = 2}."""
    return MAGIC + msg(1, msg(1, api_version) + msg(2, kind)) + msg(2, raw)


def meta(name: str, namespace: str = "", *extra: bytes) -> bytes:
    """ObjectMeta: name = 1, namespace = 3 (creationTimestamp = 8, labels = 11 via ``extra``)."""
    return msg(1, name) + (msg(3, namespace) if namespace else b"") + b"".join(extra)


def test_a_configmap_as_kubectl_create_configmap_sends_it() -> None:
    # ConfigMap: metadata = 1, data = 2 (map), binaryData = 3 (map of bytes); immutable (4) is a pointer
    # and absent. The zero creationTimestamp is written as an empty message.
    raw = msg(1, meta("x", "default", msg(8, b""), entry(11, "app", "web"))) \
        + entry(2, "a", "b") + entry(2, "empty", "") + entry(3, "bin", b"\x00\xff")
    assert decode_object(envelope("v1", "ConfigMap", raw), "", "v1", "ConfigMap") == {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "x", "namespace": "default", "labels": {"app": "web"}},
        "data": {"a": "b", "empty": ""}, "binaryData": {"bin": "AP8="}}


def test_a_binding_as_kube_scheduler_sends_it() -> None:
    # Binding: metadata = 1, target = 2 (ObjectReference: kind 1, namespace 2, name 3, uid 4,
    # apiVersion 5, resourceVersion 6, fieldPath 7, every one written even when empty).
    target = msg(1, "Node") + msg(2, "") + msg(3, "node-1") + msg(4, "") + msg(5, "") + msg(6, "") + msg(7, "")
    raw = msg(1, meta("web-1", "default", msg(5, "0b6f-uid"))) + msg(2, target)
    assert decode_object(envelope("v1", "Binding", raw), "", "v1", "Binding") == {
        "apiVersion": "v1", "kind": "Binding",
        "metadata": {"name": "web-1", "namespace": "default", "uid": "0b6f-uid"},
        "target": {"kind": "Node", "name": "node-1"}}


def test_well_known_types_take_their_json_forms() -> None:
    # PodDisruptionBudgetSpec: minAvailable = 1 and maxUnavailable = 3 are IntOrString (type 1,
    # intVal 2, strVal 3); LeaseSpec: leaseDurationSeconds = 2 is a pointer (its 0 kept),
    # renewTime = 4 a MicroTime (Timestamp seconds 1, nanos 2; to the microsecond).
    spec = msg(1, num(1, 0) + num(2, 2)) + msg(3, num(1, 1) + msg(3, "50%"))
    pdb = decode_object(envelope("policy/v1", "PodDisruptionBudget", msg(1, meta("p")) + msg(2, spec)),
                        "policy", "v1", "PodDisruptionBudget")
    assert pdb["spec"] == {"minAvailable": 2, "maxUnavailable": "50%"}
    lease = msg(1, "me") + num(2, 0) + msg(4, num(1, 1_700_000_000) + num(2, 123_456_789))
    got = decode_object(envelope("coordination.k8s.io/v1", "Lease", msg(1, meta("l")) + msg(2, lease)),
                        "coordination.k8s.io", "v1", "Lease")
    assert got["spec"] == {"holderIdentity": "me", "leaseDurationSeconds": 0,
                           "renewTime": "2023-11-14T22:13:20.123456Z"}


def test_an_empty_struct_decodes_to_an_empty_object() -> None:
    # A CRD version's subresources.status is CustomResourceSubresourceStatus, a struct with no fields:
    # spec = 2 {group 1, versions 7 {name 1, served 2, storage 3, subresources 5 {status 1}}}.
    version = msg(1, "v1") + num(2, 1) + num(3, 1) + msg(5, msg(1, b""))
    raw = msg(1, meta("things.example.com")) + msg(2, msg(1, "example.com") + msg(7, version))
    crd = decode_object(envelope("apiextensions.k8s.io/v1", "CustomResourceDefinition", raw),
                        "apiextensions.k8s.io", "v1", "CustomResourceDefinition")
    assert crd["spec"]["versions"] == [{"name": "v1", "served": True, "storage": True,
                                        "subresources": {"status": {}}}]


def _configmap_with(meta_extra: bytes) -> bytes:
    return envelope("v1", "ConfigMap", msg(1, meta("x", "", meta_extra)))


MALFORMED: list[tuple[str, bytes, str]] = [
    ("no magic", b'{"kind":"ConfigMap"}', "expected prefix"),
    ("magic only, no kind anywhere", MAGIC, ""),
    ("truncated varint", MAGIC + b"\x0a\xff", "unexpected EOF"),
    ("length past the end", MAGIC + b"\x12\x05ab", "unexpected EOF"),
    ("illegal wire type", MAGIC + b"\x0f", "illegal wireType"),
    ("field number zero", MAGIC + b"\x02\x00", "illegal tag 0"),
    ("varint over 64 bits", MAGIC + b"\x08" + b"\xff" * 11, "integer overflow"),
    ("an unknown kind", envelope("v1", "Nonsense", b""), "no kind"),
    ("a string field as a varint", envelope("v1", "ConfigMap", msg(1, num(1, 5))), "string"),
    ("invalid UTF-8 in a name", envelope("v1", "ConfigMap", msg(1, msg(1, b"\xff\xfe"))), "UTF-8"),
    ("a Time's seconds as bytes", _configmap_with(msg(8, msg(1, "oops"))), "wrong wireType"),
    ("a Time's nanos as bytes", _configmap_with(msg(8, num(1, 1) + msg(2, "x"))), "wrong wireType"),
    ("a Time past year 9999", _configmap_with(msg(8, num(1, 2**62))), "year outside of range"),
    ("a Time before year 1", _configmap_with(msg(8, num(1, -(2**62)))), "year outside of range"),
    ("an IntOrString's intVal as bytes",
     envelope("policy/v1", "PodDisruptionBudget", msg(2, msg(1, num(1, 0) + msg(2, "x")))), "wrong wireType"),
    ("an IntOrString's type as bytes",
     envelope("policy/v1", "PodDisruptionBudget", msg(2, msg(1, msg(1, "x")))), "wrong wireType"),
    ("a managedFields entry's fieldsV1 raw as a varint",
     _configmap_with(msg(17, msg(7, num(1, 3)))), "wrong wireType"),
    ("a managedFields entry's fieldsV1 raw not JSON",
     _configmap_with(msg(17, msg(7, msg(1, "{")))), "embedded JSON"),
    ("a map entry that is a varint", envelope("v1", "ConfigMap", num(2, 1)), "map entry"),
]


@pytest.mark.parametrize(("body", "wanted"), [(b, w) for _, b, w in MALFORMED], ids=[n for n, _, _ in MALFORMED])
def test_a_malformed_body_is_a_protobuf_error(body: bytes, wanted: str) -> None:
    try:
        got: Any = decode_object(body, "", "v1", "ConfigMap")
    except ProtobufError as e:
        assert wanted in str(e)
        return
    # Only a body that is well formed may decode: "magic only" is an empty ConfigMap, as Go reads it.
    assert wanted == "" and got == {"apiVersion": "v1", "kind": "ConfigMap"}
