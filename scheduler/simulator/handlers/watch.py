"""WATCH (``endpoints/handlers/watch.go`` over the watch cache's ``Cacher.Watch``): initial events or a replay
from a resourceVersion (410 past the history), bookmarks, the streaming list's end marker, timeouts, and a
watcher cut when it falls behind or stops reading.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Iterator
from typing import Any

from aiohttp import web

from scheduler.simulator import tables
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
        q = request.query
        match = self._matchers(request, rt, name)
        as_table = "as=Table" in request.headers.get("Accept", "")
        include = q.get("includeObject", "PartialObjectMetadata")
        encode = None
        if as_table:
            def encode(kind: str, obj: Obj) -> bytes:
                ext = external(rt, obj) if kind != "BOOKMARK" else obj
                return _dumps({"type": kind, "object": tables.table(
                    rt, [ext], {"resourceVersion": obj["metadata"].get("resourceVersion", "")}, include)}) + b"\n"
        since = None if opts.resource_version in ("", "0") else self._parse_rv(opts.resource_version)
        bookmarks = opts.allow_watch_bookmarks
        loop = asyncio.get_running_loop()
        # No timeoutSeconds (or 0): the server's minRequestTimeout (1800 s) times a random factor in [1, 2).
        timeout = float(opts.timeout_seconds) if opts.timeout_seconds else 1800 + self.rng.random() * 1800
        deadline = loop.time() + timeout
        w = Watcher(rt, namespace, match, encode, max_pending_bytes=self.watch_buffer_bytes)
        # The snapshot the stream starts with is a list of references, encoded chunk by chunk as it is sent:
        # a client that does not read pins one chunk, not an encoded copy of the whole store.
        initial: Iterator[bytes] = iter(())
        expired: bytes | None = None
        if opts.send_initial_events:
            # waitUntilWatchCacheFreshAndForceAllEvents: a streaming list never starts behind what it asked for.
            if since is not None and since > self.store.rv and not await self.store.wait_for_rv(since, base.FRESH_WAIT):
                expired = _dumps({"type": "ERROR", "object": too_large_resource_version(since, self.store.rv).body()}
                                 ) + b"\n"
            else:
                # From here to the watcher's registration nothing awaits: the snapshot and the stream are one.
                snapshot = [o for o in self.store.bucket(rt.store).items(namespace) if match is None or match(o)]
                added = (w.custom_encode("ADDED", o) if w.custom_encode else encode_event("ADDED", rt, o)
                         for o in snapshot)
                if opts.watch_list:
                    end = self._bookmark(rt, self.store.rv, initial_events_end=True)
                    end_line = w.custom_encode("BOOKMARK", end) if w.custom_encode else _dumps(
                        {"type": "BOOKMARK", "object": end}) + b"\n"
                    initial = itertools.chain(added, (end_line,))
                else:
                    initial = added
        elif since is not None:     # (sendInitialEvents=false from "" or "0" starts now: nothing to replay)
            if since > self.store.rv:
                # Ahead of the store: the watch cache opens the stream and sends only what comes after
                # ``since`` (it blocks for freshness only for sendInitialEvents, cacher.go).
                w.after_rv = since
            events = None if self.faults.active and self.faults.force_gone() else self.store.since(rt, since)
            if events is None:
                expired = _dumps({"type": "ERROR", "object": status_body(
                    410, "Expired", f"too old resource version: {since} ({self.store.bucket(rt.store).compacted})")}
                ) + b"\n"
            else:
                initial = (data for ev in events if (data := w.render(ev)) is not None)
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

        async def send(chunk: bytes, n: int) -> bool:
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

        try:
            await resp.prepare(request)
            for chunk, n in _chunks(initial):
                if not await send(chunk, n):
                    return resp
            del initial
            while True:
                if not w.pending:
                    if w.closed:
                        break
                    remaining = deadline - loop.time()
                    if remaining <= 0:
                        break
                    w.wake.clear()
                    try:
                        await asyncio.wait_for(w.wake.wait(), min(remaining, 1.0 if bookmarks else 3600.0))
                    except TimeoutError:
                        if bookmarks and deadline - loop.time() > 0 and self.store.rv > w.after_rv:
                            mark = self._bookmark(rt, self.store.rv)
                            await resp.write(w.custom_encode("BOOKMARK", mark) if w.custom_encode else _dumps(
                                {"type": "BOOKMARK", "object": mark}) + b"\n")
                        continue
                    continue
                if not await send(*w.take()):
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

    @staticmethod
    def _bookmark(rt: ResourceType, rv: int, *, initial_events_end: bool = False) -> Obj:
        """A BOOKMARK's object: an empty object of the kind that carries only the resourceVersion (and,
        once, the ``k8s.io/initial-events-end`` annotation that ends a streaming list's initial events)."""
        meta: Obj = {"resourceVersion": str(rv)}
        if initial_events_end:
            meta["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta}


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
