"""The object store: a global resourceVersion, objects by key, a bounded watch history, watchers.

Every write takes the next resourceVersion and appends an ``Event`` (type, new object, old object)
to its bucket's history, a ``deque`` bounded at ``history`` events. A watch from resourceVersion
*rv* replays the history after *rv*; when *rv* is older than the oldest event kept (the bucket was
*compacted* past it) the answer is ``410 Gone``, as etcd's compaction makes it. A list at an exact
old resourceVersion undoes the history back to it. Stored objects are never mutated: each write
stores a new dict, so events and list results can share them without copying.

A ``Watcher`` filters each event through its selectors against the old and the new object, so an
object that stops matching is delivered as DELETED and one that starts matching as ADDED, as the
real watch cache does. Events are encoded once per view and shared by every watcher; a watcher
that falls ``MAX_PENDING`` events behind is closed (the client relists), so a stuck client cannot
grow memory without bound. Everything here runs on the server's event loop: no locks.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from scheduler.simulator.resources import ResourceType

__all__ = ["Bucket", "Event", "Store", "Watcher"]

Obj = dict[str, Any]
Key = tuple[str, str]
MAX_PENDING = 100_000


@dataclass(eq=False, slots=True)
class Event:
    rv: int
    type: str                  # ADDED, MODIFIED, DELETED
    obj: Obj
    old: Obj | None
    encoded: dict[int, bytes] = field(default_factory=dict)


class Watcher:
    """One open watch: its filter, its pending encoded events, and a wake-up flag."""

    def __init__(self, rt: ResourceType, namespace: str | None, match: Callable[[Obj], bool] | None,
                 encode: Callable[[str, Obj], bytes] | None) -> None:
        self.rt, self.namespace, self.match = rt, namespace, match
        self.custom_encode = encode     # Table watches encode per watcher
        self.pending: deque[bytes] = deque()
        self.wake = asyncio.Event()
        self.closed = False
        self.sent = 0

    def _visible(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.match is None or self.match(obj)

    def offer(self, ev: Event) -> None:
        if self.closed:
            return
        if self.match is None:
            if self.namespace is not None and ev.obj["metadata"].get("namespace") != self.namespace:
                return
            kind = ev.type
        else:
            now, before = self._visible(ev.obj), (ev.type != "ADDED" and self._visible(ev.old))
            if ev.type == "DELETED":
                if not before and not self._visible(ev.obj):
                    return
                kind = "DELETED"
            elif now and before:
                kind = "MODIFIED"
            elif now:
                kind = "ADDED"
            elif before:
                kind = "DELETED"
            else:
                return
        self.push(self.encode(kind, ev))

    def encode(self, kind: str, ev: Event) -> bytes:
        if self.custom_encode is not None:
            return self.custom_encode(kind, ev.obj)
        if kind == ev.type:
            key = id(self.rt)
            data = ev.encoded.get(key)
            if data is None:
                data = ev.encoded[key] = encode_event(kind, self.rt, ev.obj)
            return data
        return encode_event(kind, self.rt, ev.obj)

    def push(self, data: bytes) -> None:
        self.pending.append(data)
        if len(self.pending) > MAX_PENDING:
            self.close()
        self.wake.set()

    def close(self) -> None:
        self.closed = True
        self.wake.set()


def external(rt: ResourceType, obj: Obj) -> Obj:
    return rt.to_external(obj) if rt.to_external else obj


def encode_event(kind: str, rt: ResourceType, obj: Obj) -> bytes:
    return orjson.dumps({"type": kind, "object": external(rt, obj)}) + b"\n"


class Bucket:
    """The objects of one storage key, its history and its watchers."""

    def __init__(self, history: int) -> None:
        self.objects: dict[Key, Obj] = {}
        self.by_ns: dict[str, dict[str, Obj]] = {}
        self.history: deque[Event] = deque(maxlen=history)
        self.compacted = 0          # watches from an RV below this get 410
        self.watchers: set[Watcher] = set()

    def put(self, key: Key, obj: Obj) -> None:
        self.objects[key] = obj
        self.by_ns.setdefault(key[0], {})[key[1]] = obj

    def drop(self, key: Key) -> None:
        self.objects.pop(key, None)
        ns = self.by_ns.get(key[0])
        if ns is not None:
            ns.pop(key[1], None)
            if not ns:
                del self.by_ns[key[0]]

    def items(self, namespace: str | None) -> Iterator[Obj]:
        if namespace is None:
            return iter(self.objects.values())
        return iter(self.by_ns.get(namespace, {}).values())


class Store:
    def __init__(self, history: int = 20_000) -> None:
        self.rv = 1
        self.history_size = history
        self.buckets: dict[str, Bucket] = {}
        self.listeners: list[Callable[[str, Event], None]] = []

    def bucket(self, store: str) -> Bucket:
        b = self.buckets.get(store)
        if b is None:
            b = self.buckets[store] = Bucket(self.history_size)
        return b

    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj | None:
        return self.bucket(rt.store).objects.get((namespace, name))

    def next_rv(self) -> int:
        self.rv += 1
        return self.rv

    def commit(self, rt: ResourceType, kind: str, key: Key, obj: Obj, old: Obj | None) -> Event:
        """Store ``obj`` (already stamped with its resourceVersion ``self.rv``) and notify.

        For DELETED, ``obj`` is the object's last state and ``old`` the state before it."""
        b = self.bucket(rt.store)
        if kind == "DELETED":
            b.drop(key)
        else:
            b.put(key, obj)
        ev = Event(self.rv, kind, obj, old)
        if len(b.history) == b.history.maxlen:
            b.compacted = b.history[0].rv
        b.history.append(ev)
        for w in list(b.watchers):
            w.offer(ev)
        for listener in self.listeners:
            listener(rt.store, ev)
        return ev

    def since(self, rt: ResourceType, rv: int) -> list[Event] | None:
        """Events after ``rv``, or None when the history no longer reaches back to it."""
        b = self.bucket(rt.store)
        if rv < b.compacted:
            return None
        out: list[Event] = []
        for ev in reversed(b.history):
            if ev.rv <= rv:
                break
            out.append(ev)
        out.reverse()
        return out

    def list_at(self, rt: ResourceType, rv: int) -> dict[Key, Obj] | None:
        """The bucket's objects as they were at ``rv`` (None when compacted past it)."""
        events = self.since(rt, rv)
        if events is None:
            return None
        state = dict(self.bucket(rt.store).objects)
        for ev in reversed(events):
            key = (ev.obj["metadata"].get("namespace", ""), ev.obj["metadata"]["name"])
            if ev.type == "ADDED":
                state.pop(key, None)
            elif ev.old is not None:
                state[key] = ev.old
        return state
