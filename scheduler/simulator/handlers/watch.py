"""WATCH (``endpoints/handlers/watch.go`` over the watch cache's ``Cacher.Watch``): initial events or a replay
from a resourceVersion (410 past the history), bookmarks, the streaming list's end marker, timeouts, and a
watcher cut when it falls behind or stops reading.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable, Iterator
from typing import Any

from aiohttp import web

from scheduler.simulator import tables, transform
from scheduler.simulator.apierrors import status_body
from scheduler.simulator.handlers import base
from scheduler.simulator.handlers.base import _JSON, INITIAL_EVENTS_END, _dumps, too_large_resource_version
from scheduler.simulator.handlers.list import ListHandler
from scheduler.simulator.params import ListOptions
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.store import WRITE_CHUNK, Watcher, encode_event, external

__all__ = ["WatchHandler"]

Obj = dict[str, Any]

_WATCH_GRACE = 5.0                 # a watch whose write is still stuck this long after its deadline is cut

_WATCHDOG_HORIZON = 10 * 86400.0   # no timer for absurd timeoutSeconds (int64 seconds overflow the loop)


class WatchHandler(ListHandler):
    """GET with ``watch=true``: a stream of JSON lines."""

    async def watch(self, request: web.BaseRequest, rt: ResourceType, namespace: str | None, name: str,
                    opts: ListOptions) -> web.StreamResponse:
        """A watch stream. Everything that can fail is checked before the 200 goes out and before the
        watcher is registered, and the watcher is registered in the same step as the snapshot it
        continues, so no event falls between the two.

        Where it starts is the watch cache's choice (``Cacher.Watch``, ``getAllEventsSinceLocked``):

        - ``sendInitialEvents=true`` (also a legacy watch from ``""`` or ``"0"``, which ``list_options``
          defaults to it): the current state as ADDED events, after waiting up to ``FRESH_WAIT`` for a
          ``resourceVersion`` the store has not reached. A streaming list (``allowWatchBookmarks`` too) then
          gets a BOOKMARK at the snapshot's resourceVersion annotated ``k8s.io/initial-events-end: "true"``,
          which client-go's WatchList reflector (kubectl ``wait``, informers) waits for;
        - ``sendInitialEvents=false``: from now, or the events after ``resourceVersion``;
        - otherwise (a legacy watch from a resourceVersion): the events after it, or 410 Gone when the
          history no longer reaches back to it.
        """
        match = self._matchers(request, rt, name)
        encode = None
        if (target := transform.metadata_target(request.headers.get("Accept", ""))) is not None:
            if target[0] != transform.PARTIAL:       # a watch's events each carry one object
                raise transform.not_acceptable(rt, target[0])
            encode = _partial_encoder(rt, target[1])
        elif "as=Table" in request.headers.get("Accept", ""):
            encode = _table_encoder(rt, request.query.get("includeObject", "PartialObjectMetadata"))
        since = None if opts.resource_version in ("", "0") else self._parse_rv(opts.resource_version)
        loop = asyncio.get_running_loop()
        # No timeoutSeconds (or 0): the server's minRequestTimeout (1800 s) times a random factor in [1, 2).
        timeout = float(opts.timeout_seconds) if opts.timeout_seconds else 1800 + self.rng.random() * 1800
        deadline = loop.time() + timeout
        w = Watcher(rt, namespace, match, encode, max_pending_bytes=self.watch_buffer_bytes)
        if opts.send_initial_events:
            initial, expired = await self._initial_events(rt, namespace, match, w, since, opts)
        else:
            initial, expired = self._replay(rt, w, since)
        resp = web.StreamResponse(status=200, headers={"Content-Type": _JSON, "Cache-Control": "no-cache"})
        resp.enable_chunked_encoding()
        if expired is not None:
            await resp.prepare(request)
            await resp.write(expired)
            await resp.write_eof()
            return resp
        bucket = self.store.bucket(rt.store)
        bucket.watchers.add(w)

        def cut() -> None:
            if request.transport is not None:
                request.transport.abort()
        # A watcher that falls behind is terminated (store.py); its stream is cut, whatever it is waiting for.
        w.on_terminate = cut
        # A write still stuck some time after the deadline (a client that stopped reading before any new
        # event could overflow its queue) is cut too: every watch ends near its timeout.
        watchdog = loop.call_later(max(timeout, 0.0) + _WATCH_GRACE, cut) if timeout < _WATCHDOG_HORIZON else None
        try:
            await resp.prepare(request)
            for chunk, n in _chunks(initial):
                if not await self._send(request, resp, chunk, n):
                    return resp
            del initial
            if not await self._follow(request, resp, rt, w, deadline, opts.allow_watch_bookmarks):
                return resp
            bucket.watchers.discard(w)
            await resp.write_eof()         # still under the watchdog: a client that stopped reading is cut
        except (ConnectionResetError, ConnectionError):
            return resp
        finally:
            bucket.watchers.discard(w)
            w.close()
            if watchdog is not None:
                watchdog.cancel()
            if w.terminated:
                self.terminated_watchers += 1
        return resp

    async def _initial_events(self, rt: ResourceType, namespace: str | None,
                              match: Callable[[Obj], bool] | None, w: Watcher, since: int | None,
                              opts: ListOptions) -> tuple[Iterator[bytes], bytes | None]:
        """``sendInitialEvents=true``: the snapshot as ADDED events (and a streaming list's end marker), or
        the ERROR line when the store does not reach ``since`` in time.

        The snapshot is a list of references, encoded chunk by chunk as it is sent: a client that does not
        read pins one chunk, not an encoded copy of the whole store."""
        # waitUntilWatchCacheFreshAndForceAllEvents: a streaming list never starts behind what it asked for.
        if since is not None and since > self.store.rv and not await self.store.wait_for_rv(since, base.FRESH_WAIT):
            return iter(()), _dumps({"type": "ERROR", "object": too_large_resource_version(
                since, self.store.rv).body()}) + b"\n"
        # From here to the watcher's registration nothing awaits: the snapshot and the stream are one.
        snapshot = [o for o in self.store.bucket(rt.store).items(namespace) if match is None or match(o)]
        added = (w.custom_encode("ADDED", o) if w.custom_encode else encode_event("ADDED", rt, o)
                 for o in snapshot)
        if not opts.watch_list:
            return added, None
        end = self._bookmark(rt, self.store.rv, initial_events_end=True)
        end_line = w.custom_encode("BOOKMARK", end) if w.custom_encode else _dumps(
            {"type": "BOOKMARK", "object": end}) + b"\n"
        return itertools.chain(added, (end_line,)), None

    def _replay(self, rt: ResourceType, w: Watcher, since: int | None) -> tuple[Iterator[bytes], bytes | None]:
        """``sendInitialEvents`` false or unset: the events after ``since``, or the 410 ERROR line when the
        history no longer reaches back to it (from "" or "0" the stream starts now: nothing to replay)."""
        if since is None:
            return iter(()), None
        if since > self.store.rv:
            # Ahead of the store: the watch cache opens the stream and sends only what comes after
            # ``since`` (it blocks for freshness only for sendInitialEvents, cacher.go).
            w.after_rv = since
        events = None if self.faults.active and self.faults.force_gone() else self.store.since(rt, since)
        if events is None:
            return iter(()), _dumps({"type": "ERROR", "object": status_body(
                410, "Expired", f"too old resource version: {since} ({self.store.bucket(rt.store).compacted})")}
            ) + b"\n"
        return (data for ev in events if (data := w.render(ev)) is not None), None

    async def _send(self, request: web.BaseRequest, resp: web.StreamResponse, chunk: bytes, n: int) -> bool:
        """Write ``chunk`` (``n`` events), or cut the connection where the fault injector drops one."""
        cut_at = next((i for i in range(n) if self.faults.drop()), None) if self.faults.active else None
        if cut_at is not None:
            # A cut connection loses what is in flight, not what was sent before it: the events
            # ahead of the cut arrive (one per line), so a client that resumes makes progress.
            if cut_at:
                end = -1
                for _ in range(cut_at):
                    end = chunk.index(b"\n", end + 1)
                await resp.write(chunk[: end + 1])
            if request.transport is not None:
                request.transport.close()
            return False
        await resp.write(chunk)
        return True

    async def _follow(self, request: web.BaseRequest, resp: web.StreamResponse, rt: ResourceType, w: Watcher,
                      deadline: float, bookmarks: bool) -> bool:
        """Send the watcher's events as they come, with a bookmark each idle second where asked for, until
        the deadline or the watcher closes (True), or the connection is cut (False)."""
        loop = asyncio.get_running_loop()
        while True:
            if not w.pending:
                if w.closed:
                    return True
                remaining = deadline - loop.time()
                if remaining <= 0:
                    return True
                w.wake.clear()
                try:
                    await asyncio.wait_for(w.wake.wait(), min(remaining, 1.0 if bookmarks else 3600.0))
                except TimeoutError:
                    if bookmarks and deadline - loop.time() > 0 and self.store.rv > w.after_rv:
                        mark = self._bookmark(rt, self.store.rv)
                        await resp.write(w.custom_encode("BOOKMARK", mark) if w.custom_encode else _dumps(
                            {"type": "BOOKMARK", "object": mark}) + b"\n")
                continue
            if not await self._send(request, resp, *w.take()):
                return False

    @staticmethod
    def _bookmark(rt: ResourceType, rv: int, *, initial_events_end: bool = False) -> Obj:
        """A BOOKMARK's object: an empty object of the kind that carries only the resourceVersion (and,
        once, the ``k8s.io/initial-events-end`` annotation that ends a streaming list's initial events)."""
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


def _table_encoder(rt: ResourceType, include: str) -> Callable[[str, Obj], bytes]:
    """Events as Tables (``Accept: ...;as=Table``), one line each."""
    def encode(kind: str, obj: Obj) -> bytes:
        ext = external(rt, obj) if kind != "BOOKMARK" else obj
        return _dumps({"type": kind, "object": tables.table(
            rt, [ext], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, include)}) + b"\n"
    return encode


def _partial_encoder(rt: ResourceType, version: str) -> Callable[[str, Obj], bytes]:
    """Events carrying ``PartialObjectMetadata`` (``Accept: ...;as=PartialObjectMetadata``), one line each."""
    def encode(kind: str, obj: Obj) -> bytes:
        ext = external(rt, obj) if kind != "BOOKMARK" else obj
        return _dumps({"type": kind, "object": transform.partial(ext, version)}) + b"\n"
    return encode


def _chunks(events: Iterator[bytes]) -> Iterator[tuple[bytes, int]]:
    """Encoded events joined into writes of about ``WRITE_CHUNK`` bytes, with how many each holds."""
    parts: list[bytes] = []
    size = 0
    for data in events:
        parts.append(data)
        size += len(data)
        if size >= WRITE_CHUNK:
            yield b"".join(parts), len(parts)
            parts, size = [], 0
    if parts:
        yield b"".join(parts), len(parts)
