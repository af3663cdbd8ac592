"""Request bodies decoded with kube-apiserver's bounds: a small body must stay small once decoded.

JSON (orjson) cannot grow while it decodes. YAML can. An alias (``*a``) repeats a whole anchored subtree,
so 532 bytes of nested aliases ("billion laughs") decode to tens of megabytes. kube-apiserver decodes
YAML with go-yaml v2 (through ``sigs.k8s.io/yaml``), which counts its decode operations and refuses a
document when too many of them come from alias expansion (CVE-2019-11253): above 100 aliased decodes and
1,000 decodes in all, at most 99 % may be aliased. That share falls to 10 % between 400,000 and 4,000,000
decodes. The error is ``yaml: document contains excessive aliasing``.

This module composes the YAML node graph itself from libyaml's events, so that it can keep go-yaml's
counts as it goes. An alias adds the node count and the JSON size of its anchor's subtree, which are
known when the anchor closes. That keeps time and memory in line with the input, and it catches three
things before any object is built:

- go-yaml's excessive-aliasing ratio;
- an anchor used inside its own subtree (``yaml: anchor 'a' value contains itself``);
- a decoded size beyond ``limit``. The caller passes the request-body limit, and the answer is 413, as
  for a body that big. go-yaml has no such bound, but a string anchored once and aliased 999 times stays
  under go-yaml's 1,000-decode threshold and still expands a thousandfold.

Decoded values follow go-yaml's choices for interface values. A timestamp stays a string, ``!!binary``
becomes its decoded text, and non-string keys become strings (``sigs.k8s.io/yaml`` converts them for
JSON). The result is one JSON round trip away from what the client sent, so nothing in it is shared.

``encoded_size`` is the other half. orjson serialises at most 254 levels of nesting. An object deeper
than that could be stored but never listed or watched, so one object would fail every list of its kind.
The server therefore refuses objects deeper than ``MAX_DEPTH``. That is 254 less the 8 levels a list,
a Table or a watch event wraps around an object. kube-apiserver's JSON limit (10,000) is far above this,
but no Kubernetes object comes near either.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from yaml import events as ev
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["MAX_DEPTH", "DecodeError", "DepthError", "TooLargeError", "decode_yaml", "encoded_size", "summarize"]

MAX_DEPTH = 246
_WRAP = 8                          # levels added around a stored object: list items, Table rows, watch events
_ALIAS_LOW, _ALIAS_HIGH = 400_000, 4_000_000
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class DecodeError(ValueError):
    """A body that cannot be decoded; the message is the decoder's (go-yaml's words where it has them)."""


class TooLargeError(ValueError):
    """A body that decodes to more than the size limit."""


class DepthError(ValueError):
    """An object nested deeper than ``MAX_DEPTH``."""


def encoded_size(obj: Any) -> int:
    """The JSON size of ``obj``, checking on the way that the server can always serialise it."""
    wrapped = obj
    for _ in range(_WRAP):
        wrapped = [wrapped]
    try:
        return len(orjson.dumps(wrapped)) - 2 * _WRAP
    except orjson.JSONEncodeError:
        raise DepthError(f"exceeded max depth of {MAX_DEPTH}") from None


def summarize(data: bytes, max_length: int = 30) -> str:
    """apiserver's ``summarizeData``: a JSON body's first characters, any other body's first bytes in hex."""
    if not data:
        return "<empty>"
    if data[:1] == b"{":
        text = data[:max_length].decode("utf-8", "replace")
        return text + " ..." if len(data) > max_length else text
    return data[:max_length].hex() + (" ..." if len(data) > max_length else "")


def _allowed_alias_ratio(decodes: int) -> float:
    """go-yaml v2's ``allowedAliasRatio``: 99 % for small documents, scaling down to 10 % for large ones."""
    if decodes <= _ALIAS_LOW:
        return 0.99
    if decodes >= _ALIAS_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decodes - _ALIAS_LOW) / (_ALIAS_HIGH - _ALIAS_LOW)


def _binary(loader: Any, node: ScalarNode) -> str:
    try:
        return base64.decodebytes(str(loader.construct_scalar(node)).encode("ascii")).decode("utf-8", "replace")
    except (binascii.Error, UnicodeEncodeError) as e:
        raise yaml.constructor.ConstructorError(None, None, f"failed to decode base64 data: {e}",
                                                node.start_mark) from None


def _set(loader: Any, node: MappingNode) -> Iterator[dict[Any, Any]]:
    data: dict[Any, Any] = {}
    yield data
    data.update(loader.construct_mapping(node))


class _Loader(_BASE):  # type: ignore[misc]
    """libyaml's safe loader, resolving scalars as go-yaml does for interface values."""


_Loader.yaml_implicit_resolvers = {first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP]
                                   for first, resolvers in _BASE.yaml_implicit_resolvers.items()}
_Loader.add_constructor("tag:yaml.org,2002:binary", _binary)
_Loader.add_constructor("tag:yaml.org,2002:set", _set)


@dataclass(slots=True)
class _Open:
    """A collection being composed: its node, anchor, and the counts when it opened."""
    node: SequenceNode | MappingNode
    anchor: str | None
    decodes: int
    size: int
    key: Node | None = None


@dataclass(slots=True)
class _Anchor:
    node: Node
    decodes: int = 0               # go-yaml decode operations its subtree costs, aliases expanded
    size: int = 0                  # its JSON size, aliases expanded
    closed: bool = False


class _Composer:
    """The state of one document's composition: open collections, anchors, and go-yaml's counts of
    decode operations (aliases expanded) and JSON size. Each event method returns True once the root
    node is complete."""

    def __init__(self, resolve: Any) -> None:
        self.resolve = resolve
        self.anchors: dict[str, _Anchor] = {}
        self.stack: list[_Open] = []
        self.decodes = self.aliased = self.size = 0
        self.root: Node | None = None

    def attach(self, node: Node) -> bool:
        stack = self.stack
        if not stack:
            self.root = node
            return True
        top = stack[-1]
        if isinstance(top.node, SequenceNode):
            top.node.value.append(node)
        elif top.key is None:
            top.key = node
        else:
            top.node.value.append((top.key, node))
            top.key = None
        return False

    def scalar(self, event: Any) -> bool:
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(ScalarNode, event.value, event.implicit)
        node: Node = ScalarNode(tag, event.value, event.start_mark, event.end_mark, style=event.style)
        self.decodes += 1
        self.size += len(event.value) + 3
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(node, 1, len(event.value) + 3, True)
        return self.attach(node)

    def alias(self, event: Any) -> bool:
        anchor = self.anchors.get(event.anchor)
        if anchor is None:
            raise DecodeError(f"yaml: unknown anchor '{event.anchor}' referenced")
        if not anchor.closed:
            raise DecodeError(f"yaml: anchor '{event.anchor}' value contains itself")
        self.decodes += 1 + anchor.decodes
        self.aliased += anchor.decodes
        self.size += anchor.size
        decodes, aliased = self.decodes, self.aliased
        if aliased > 100 and decodes > 1000 and aliased / decodes > _allowed_alias_ratio(decodes):
            raise DecodeError("yaml: document contains excessive aliasing")
        return self.attach(anchor.node)

    def start(self, event: Any, kind: type[SequenceNode] | type[MappingNode]) -> None:
        if len(self.stack) >= MAX_DEPTH:
            raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        tag = event.tag
        if tag is None or tag == "!":
            tag = self.resolve(kind, None, event.implicit)
        coll = kind(tag, [], event.start_mark, None, flow_style=event.flow_style)
        self.decodes += 1
        self.size += 2
        self.stack.append(_Open(coll, event.anchor, self.decodes, self.size))
        if event.anchor is not None:
            self.anchors[event.anchor] = _Anchor(coll)

    def end(self, event: Any) -> bool:
        top = self.stack.pop()
        top.node.end_mark = event.end_mark
        anchors = self.anchors
        if top.anchor is not None and anchors.get(top.anchor, _Anchor(top.node)).node is top.node:
            anchors[top.anchor] = _Anchor(top.node, self.decodes - top.decodes + 1, self.size - top.size + 2, True)
        return self.attach(top.node)


def decode_yaml(raw: bytes, limit: int) -> Any:
    """One YAML document as JSON-compatible values; DecodeError, or TooLargeError beyond ``limit`` bytes."""
    loader = _Loader(raw)
    try:
        node = _compose(loader, limit)
        data = None if node is None else loader.construct_document(node)
        return orjson.loads(orjson.dumps(data, default=_jsonable, option=orjson.OPT_NON_STR_KEYS))
    except yaml.YAMLError as e:
        raise DecodeError(f"yaml: {e}".replace("\n", " ")) from None
    except orjson.JSONEncodeError:
        raise DecodeError(f"yaml: exceeded max depth of {MAX_DEPTH}") from None
    finally:
        loader.dispose()


def _jsonable(value: Any) -> Any:
    if isinstance(value, (set, frozenset)):
        return dict.fromkeys(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    raise TypeError(f"cannot encode {type(value).__name__}")


def _compose(loader: Any, limit: int) -> Node | None:
    """The document's node graph, built from events with go-yaml's decode and alias counts."""
    loader.get_event()                                  # StreamStart
    if loader.check_event(ev.StreamEndEvent):
        return None
    loader.get_event()                                  # DocumentStart
    composer = _Composer(loader.resolve)
    get_event = loader.get_event
    while True:
        event = get_event()
        cls = type(event)
        if cls is ev.ScalarEvent:
            done = composer.scalar(event)
        elif cls is ev.AliasEvent:
            done = composer.alias(event)
        elif cls is ev.SequenceStartEvent or cls is ev.MappingStartEvent:
            composer.start(event, SequenceNode if cls is ev.SequenceStartEvent else MappingNode)
            done = False
        elif cls is ev.SequenceEndEvent or cls is ev.MappingEndEvent:
            done = composer.end(event)
        else:
            raise DecodeError(f"yaml: unexpected {cls.__name__}")
        if composer.size > limit:
            raise TooLargeError(f"limit is {limit}")
        if done:
            break
    root = composer.root
    loader.get_event()                                  # DocumentEnd
    if not loader.check_event(ev.StreamEndEvent):
        raise DecodeError("yaml: expected a single document in the stream")
    return root
