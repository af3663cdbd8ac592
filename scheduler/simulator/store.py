"""The object store: a global resourceVersion, objects by key, a bounded watch history, watchers.

Every write takes the next resourceVersion and appends an ``Event`` (type, new object, old object)
to its bucket's history, a ``deque`` bounded at ``history`` events. A watch from resourceVersion
*rv* replays the history after *rv*; when *rv* is older than the oldest event kept (the bucket was
*compacted* past it) the answer is ``410 Gone``, as etcd's compaction makes it. A list at an exact
old resourceVersion undoes the history back to it. Stored objects are never mutated: each write
stores a new dict, so events and list results can share them without copying.

A ``Watcher`` filters each event through its selectors against the old and the new object, so an
object that stops matching is delivered as DELETED and one that starts matching as ADDED, as the
real watch cache does. Events are encoded once per view and shared by every watcher. A watch from a
resourceVersion ahead of the store gets only the events after it (the cacher's ``processInterval``).

Bounds, as etcd and the watch cache set them:

- **One object** may encode to at most ``max_object_bytes`` (etcd's ``--max-request-bytes``,
  1.5 MiB). Beyond that, the write fails with ``etcdserver: request is too large``.
- **All objects together** may encode to at most ``max_total_bytes``. This is etcd's
  ``--quota-backend-bytes``, simplified: old revisions and fragmentation are not counted. A write
  that would grow the total past the quota fails with ``etcdserver: mvcc: database space
  exceeded``. Deletes, and writes that do not grow the total, still go through, so a full store can
  be emptied. kube-apiserver passes both etcd errors on as a 500 with etcd's text.
- **A watcher that falls behind** is terminated once its unsent events exceed ``max_pending_bytes``
  or ``MAX_PENDING`` events. This is the cacher's ``forget`` of a watcher whose buffer is full: its
  stream ends, and the client watches again from its last resourceVersion. A stuck client therefore
  holds a bounded amount of memory, not the whole event stream since it stopped reading.
- **An object's nesting** is bounded by ``decode.MAX_DEPTH``, so whatever is stored can be served.

Everything here runs on the server's event loop: no locks. A failed write changes nothing, not even
the resourceVersion.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.decode import MAX_DEPTH, DepthError, encoded_size
from scheduler.simulator.resources import ResourceType

__all__ = ["MAX_OBJECT_BYTES", "MAX_PENDING_BYTES", "MAX_TOTAL_BYTES", "Bucket", "Event", "Store", "Watcher"]

Obj = dict[str, Any]
Key = tuple[str, str]
MAX_PENDING = 100_000                    # events a watcher may fall behind
MAX_PENDING_BYTES = 32 * 1024 * 1024     # ... and their bytes (shared between watchers of one view)
WRITE_CHUNK = 256 * 1024                 # at most this much is handed to one socket write
MAX_OBJECT_BYTES = 1536 * 1024           # etcd's default --max-request-bytes
MAX_TOTAL_BYTES = 512 * 1024 * 1024      # a generous --quota-backend-bytes for an in-memory store
TOO_LARGE = "etcdserver: request is too large"
NO_SPACE = "etcdserver: mvcc: database space exceeded"


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
                 encode: Callable[[str, Obj], bytes] | None, *, max_pending_bytes: int = MAX_PENDING_BYTES,
                 after_rv: int = 0) -> None:
        self.rt, self.namespace, self.match = rt, namespace, match
        self.custom_encode = encode     # Table watches encode per watcher
        self.pending: deque[bytes] = deque()
        self.pending_bytes = 0
        self.max_pending_bytes = max_pending_bytes
        self.after_rv = after_rv        # events at or below it are not sent (a watch from a future RV)
        self.wake = asyncio.Event()
        self.closed = False
        self.terminated = False         # closed because it fell behind
        self.on_terminate: Callable[[], None] | None = None

    def _visible(self, obj: Obj | None) -> bool:
        if obj is None:
            return False
        if self.namespace is not None and obj["metadata"].get("namespace") != self.namespace:
            return False
        return self.match is None or self.match(obj)

    def offer(self, ev: Event) -> None:
        if self.closed:
            return
        data = self.render(ev)
        if data is not None:            # this runs for every watcher on every write: kept inline
            self.pending.append(data)
            self.pending_bytes += len(data)
            if len(self.pending) > MAX_PENDING or self.pending_bytes > self.max_pending_bytes:
                self.terminate()
            self.wake.set()

    def render(self, ev: Event) -> bytes | None:
        """The event as this watcher sees it, encoded; None when it does not see it."""
        if ev.rv <= self.after_rv:
            return None
        if self.match is None:
            if self.namespace is not None and ev.obj["metadata"].get("namespace") != self.namespace:
                return None
            kind = ev.type
        else:
            now, before = self._visible(ev.obj), (ev.type != "ADDED" and self._visible(ev.old))
            if ev.type == "DELETED":
                if not before and not self._visible(ev.obj):
                    return None
                kind = "DELETED"
            elif now and before:
                kind = "MODIFIED"
            elif now:
                kind = "ADDED"
            elif before:
                kind = "DELETED"
            else:
                return None
        return self.encode(kind, ev)

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

    def take(self) -> tuple[bytes, int]:
        """The next chunk to send (at most about ``WRITE_CHUNK`` bytes) and how many events it holds."""
        if self.pending_bytes <= WRITE_CHUNK:
            n, chunk = len(self.pending), b"".join(self.pending)
            self.pending.clear()
            self.pending_bytes = 0
            return chunk, n
        parts: list[bytes] = []
        size = 0
        while self.pending and size < WRITE_CHUNK:
            data = self.pending.popleft()
            parts.append(data)
            size += len(data)
        self.pending_bytes -= size
        return b"".join(parts), len(parts)

    def terminate(self) -> None:
        """Drop a watcher that fell behind, as the cacher forgets one whose buffer is full: its queued
        events are freed at once, and ``on_terminate`` cuts a stream that is stuck in a write."""
        if self.terminated:
            return
        self.terminated = True
        self.pending.clear()
        self.pending_bytes = 0
        self.close()
        if self.on_terminate is not None:
            self.on_terminate()

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
        self.sizes: dict[Key, int] = {}

    def put(self, key: Key, obj: Obj) -> None:
        self.objects[key] = obj
        self.by_ns.setdefault(key[0], {})[key[1]] = obj

    def drop(self, key: Key) -> None:
        self.objects.pop(key, None)
        self.sizes.pop(key, None)
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
    def __init__(self, history: int = 20_000, *, max_object_bytes: int = MAX_OBJECT_BYTES,
                 max_total_bytes: int = MAX_TOTAL_BYTES) -> None:
        self.rv = 1
        self.history_size = history
        self.buckets: dict[str, Bucket] = {}
        self.listeners: list[Callable[[str, Event], None]] = []
        self.max_object_bytes, self.max_total_bytes = max_object_bytes, max_total_bytes
        self.total_bytes = 0
        self._rv_waiters: list[tuple[int, asyncio.Future[None]]] = []

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

        For DELETED, ``obj`` is the object's last state and ``old`` the state before it. A write past
        the size limits raises ApiError and gives the resourceVersion back: callers take it with
        ``next_rv()`` just before, with no await in between, so nothing else can have used it."""
        b = self.bucket(rt.store)
        if kind == "DELETED":
            self.total_bytes -= b.sizes.get(key, 0)
            b.drop(key)
        else:
            # The encoding that this resource's watchers receive is also the size that counts.
            data = encode_event(kind, rt, obj)
            size = self._admit_size(b, key, obj, data)
            self.total_bytes += size - b.sizes.get(key, 0)
            b.sizes[key] = size
            b.put(key, obj)
        ev = Event(self.rv, kind, obj, old)
        if kind != "DELETED":
            ev.encoded[id(rt)] = data
        if len(b.history) == b.history.maxlen:
            b.compacted = b.history[0].rv
        b.history.append(ev)
        for w in list(b.watchers):
            w.offer(ev)
        for listener in self.listeners:
            listener(rt.store, ev)
        if self._rv_waiters:
            self._wake_rv_waiters()
        return ev

    def _admit_size(self, b: Bucket, key: Key, obj: Obj, data: bytes) -> int:
        size = len(data)
        if data.count(b"{") + data.count(b"[") > MAX_DEPTH:      # only then can it nest too deep
            try:
                encoded_size(obj)
            except DepthError as e:
                self.rv -= 1
                raise ApiError(400, "BadRequest", f"couldn't get version/kind; json parse error: {e}") from None
        if size > self.max_object_bytes:
            self.rv -= 1
            raise ApiError(500, "", TOO_LARGE)
        growth = size - b.sizes.get(key, 0)
        if growth > 0 and self.total_bytes + growth > self.max_total_bytes:
            self.rv -= 1
            raise ApiError(500, "", NO_SPACE)
        return size

    async def wait_for_rv(self, rv: int, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds until the store reaches ``rv`` (the watch cache's
        ``waitUntilFreshAndBlock``); False when it did not."""
        if self.rv >= rv:
            return True
        fut: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        entry = (rv, fut)
        self._rv_waiters.append(entry)
        try:
            await asyncio.wait_for(fut, timeout)
        except TimeoutError:
            return False
        finally:
            with contextlib.suppress(ValueError):
                self._rv_waiters.remove(entry)
        return True

    def _wake_rv_waiters(self) -> None:
        for rv, fut in self._rv_waiters:
            if rv <= self.rv and not fut.done():
                fut.set_result(None)

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
