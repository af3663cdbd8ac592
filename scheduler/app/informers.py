"""``Informer``: one kind's list-then-watch on the worker's loop, as client-go's reflector does it.

The runtime lists every kind before the first scheduling cycle (``OperatorRuntime.initial_sync``),
then keeps each current with one informer of its own: pods, nodes (thousands of them, whose events
must reach the cache in order with the pods'), the objects the cycle reads per pod
(PersistentVolumeClaims and PersistentVolumes, one of each per pod in a volume workload;
ResourceClaims, one per pod with devices; and their low-rate siblings, so that each plugin's
listers come through one path, as upstream's shared informer factory feeds them), and the low-rate
kinds (namespaces, PodDisruptionBudgets, the selector owners, SchedulingProfiles). One informer per
kind, continuing its own listing, leaves no gap in which an event is lost.

An informer:

- continues the initial listing with a watch from the listing's resourceVersion, with bookmarks,
  and resumes a dropped watch from the last version it saw (a jittered backoff, 0.1 s doubling to
  5 s, reset by the next event);
- on ``410 Gone`` relists and replays the difference: every object listed is an ADDED (the service
  treats an ADDED of a known object as an update, as an informer's Replace does), every object it
  had seen that is not listed any more is a DELETED;
- for an optional kind (a storage or DRA kind the cluster may not serve), a ``404`` is an empty
  listing; it is listed again every ``ABSENT_RETRY`` seconds, so an API installed later is picked up
  without a restart;
- beats its health component on every event and every (re)started watch, so ``/healthz`` can tell a
  stalled informer from a quiet one;
- on ``catch_up`` (a replica that starts leading), drops its watch, lists (a consistent read) and
  applies the listing as a 410 does, then watches on from the listing's version: the caller knows
  the informer holds at least the API's state as of its call, however far the watch lagged.

The handler gets ``(event type, object)`` on the worker loop's thread. It must not raise: the
runtime's handlers log and count an object they cannot read, and a handler that raises anyway is
logged and the informer goes on (one object can never stop an informer).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable, Iterable
from typing import Any

from scheduler.errors import ClientError
from scheduler.kubeapi import KubeClient
from scheduler.kubeapi.client import GoneError

__all__ = ["ABSENT_RETRY", "Informer", "collection_path", "object_key", "sleep_unless"]

log = logging.getLogger("kopf_scheduler")

# How often a kind the cluster does not serve (404) is listed again.
ABSENT_RETRY = 60.0

Handler = Callable[[str, dict[str, Any]], None]


def collection_path(group: str, version: str, plural: str) -> str:
    """The cluster-wide collection of a kind: ``/api/v1/pods``, ``/apis/storage.k8s.io/v1/csinodes``."""
    return f"/api/{version}/{plural}" if not group else f"/apis/{group}/{version}/{plural}"


def object_key(obj: dict[str, Any]) -> str:
    """``namespace/name`` (or ``name`` for a cluster-scoped object): the informer's key."""
    meta = obj.get("metadata") or {}
    ns = meta.get("namespace")
    return f"{ns}/{meta.get('name', '')}" if ns else str(meta.get("name", ""))


def _tombstone(key: str) -> dict[str, Any]:
    ns, _, name = key.rpartition("/")
    return {"metadata": {"name": name, **({"namespace": ns} if ns else {})}}


class Informer:
    """List and watch one collection (``path``) into ``handle``.

    ``known``, when given, says which keys the consumer holds (the pods the service knows, by uid),
    with ``key`` and ``tombstone`` to match them; otherwise the informer remembers the keys it
    delivered itself (``namespace/name``; a few bytes per object, never the objects).
    """

    def __init__(self, api: KubeClient, name: str, path: str, handle: Handler, *, optional: bool = False,
                 known: Callable[[], Iterable[str]] | None = None,
                 key: Callable[[dict[str, Any]], str] = object_key,
                 tombstone: Callable[[str], dict[str, Any]] = _tombstone,
                 watch_timeout: int = 300) -> None:
        self.api, self.name, self.path, self.handle = api, name, path, handle
        self.optional = optional
        self.key, self.tombstone = key, tombstone
        self._known = known
        self._keys: set[str] = set()
        self.resource_version = ""
        self.served = True          # False after a 404 of an optional kind
        self.watch_timeout = watch_timeout
        # Called with time.monotonic() on every event and every (re)started watch: a heartbeat.
        self.on_beat: Callable[[float], None] = lambda _: None
        # ``catch_up``'s request to the run loop, and the futures it resolves once it has listed.
        self._catch_up_wanted = asyncio.Event()
        self._caught_up: list[asyncio.Future[None]] = []

    # ---- listing ---------------------------------------------------------------------------------
    async def list(self) -> dict[str, Any]:
        """The collection's List; an optional kind the cluster does not serve reads as empty."""
        try:
            listing: Any = await self.api.request("GET", self.path)
        except ClientError as e:
            if e.status != 404 or not self.optional:
                raise
            if self.served:
                log.warning("the cluster does not serve %s: the scheduler sees none (listing again every %.0f s)",
                            self.path, ABSENT_RETRY)
            self.served = False
            return {"items": [], "metadata": {}}
        if not isinstance(listing, dict) or not isinstance(listing.get("items"), list):
            raise ClientError(f"GET {self.path}: the answer is not a List")
        if not self.served:
            log.info("the cluster now serves %s", self.path)
        self.served = True
        return listing

    def apply_listing(self, listing: dict[str, Any]) -> None:
        """Deliver a List: each item as ADDED; each key seen before and not listed as DELETED."""
        before = set(self._known()) if self._known is not None else self._keys
        seen: set[str] = set()
        for obj in listing["items"]:
            if isinstance(obj, dict):
                seen.add(self.key(obj))
                self._deliver("ADDED", obj)
        for key in before - seen:
            self._deliver("DELETED", self.tombstone(key))
        if self._known is None:
            self._keys = seen
        self.resource_version = str((listing.get("metadata") or {}).get("resourceVersion") or "")

    async def relist(self) -> None:
        self.apply_listing(await self.list())

    def _deliver(self, event: str, obj: dict[str, Any]) -> None:
        if self._known is None:
            if event == "DELETED":
                self._keys.discard(self.key(obj))
            else:
                self._keys.add(self.key(obj))
        try:
            self.handle(event, obj)
        except Exception as e:     # the handlers catch their own; this is the last line
            log.exception("%s informer: the handler failed on %s %s: %s", self.name, event, self.key(obj), e)

    # ---- watching --------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Watch until ``stop``: resume from the last version; relist on 410; back off on errors; and
        relist whenever ``catch_up`` asks for it (the watch of the moment is dropped first)."""
        delay = 0.1
        while not stop.is_set():
            self.on_beat(time.monotonic())
            if self._catch_up_wanted.is_set():
                delay = await self._catch_up_now(stop, delay)
                continue
            if not self.served:
                waits = {asyncio.ensure_future(self._catch_up_wanted.wait()), asyncio.ensure_future(stop.wait())}
                try:
                    await asyncio.wait(waits, timeout=ABSENT_RETRY * (0.5 + random.random()),
                                       return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for w in waits:
                        w.cancel()
                if stop.is_set() or self._catch_up_wanted.is_set():
                    continue
                try:
                    await self.relist()
                except ClientError as e:
                    log.info("%s: listing again failed: %s", self.path, e)
                continue
            # The watch runs as a task of its own so that a catch-up can drop it between two events
            # (``_deliver`` is synchronous: an event is never half delivered).
            watch = asyncio.ensure_future(self._watch(stop, delay))
            wanted = asyncio.ensure_future(self._catch_up_wanted.wait())
            try:
                await asyncio.wait({watch, wanted}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                wanted.cancel()
                if not watch.done():
                    watch.cancel()
                    with contextlib.suppress(asyncio.CancelledError):
                        await watch
            if not watch.cancelled():
                delay = watch.result()

    async def _watch(self, stop: asyncio.Event, delay: float) -> float:
        """One watch from the last version seen, until it ends or fails; the backoff for the next."""
        try:
            async for kind, obj in self.api.watch_path(self.path, resource_version=self.resource_version,
                                                       timeout=self.watch_timeout,
                                                       params={"allowWatchBookmarks": "true"}):
                self.on_beat(time.monotonic())
                rv = (obj.get("metadata") or {}).get("resourceVersion")
                if rv:
                    self.resource_version = str(rv)
                if kind != "BOOKMARK":
                    self._deliver(kind, obj)
                delay = 0.1
                if stop.is_set():
                    return delay
        except GoneError:
            log.info("%s watch expired (410): relisting", self.name)
            try:
                await self.relist()
            except ClientError as e:
                log.warning("%s relist failed: %s", self.name, e)
                await sleep_unless(stop, delay)
        except ClientError as e:
            if e.status == 404 and self.optional:
                self.served = False        # the API went away: list again later
                return delay
            log.info("%s watch interrupted, resuming from %s: %s", self.name, self.resource_version, e)
            await sleep_unless(stop, delay * (0.5 + random.random()))
            delay = min(delay * 2, 5.0)
        return delay

    # ---- catching up -------------------------------------------------------------------------------
    async def catch_up(self) -> None:
        """Return once this informer has delivered the API's state as of this call: a List (no
        resourceVersion: a consistent read) made after it, applied on the run loop's turn, after
        the watch of the moment was dropped, so no older watch event can follow it; the watch then
        goes on from the List's version. A failed List is retried (with backoff) until it succeeds;
        the caller bounds the wait (cancelling it is safe). Needs ``run`` to be running.

        The watch alone cannot promise this: it may lag the API by any amount (a slow stream, a
        watch resuming after an error), and a quiet collection sends no event to show it has caught
        up. A new leader calls it before it schedules (``OperatorRuntime``)."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._caught_up.append(done)
        self._catch_up_wanted.set()
        await asyncio.shield(done)

    async def _catch_up_now(self, stop: asyncio.Event, delay: float) -> float:
        """The List a ``catch_up`` asked for, applied; its waiters told. The backoff for the next."""
        waiters, self._caught_up = self._caught_up, []
        self._catch_up_wanted.clear()
        try:
            listing = await self.list()
        except ClientError as e:
            log.info("%s: listing to catch up failed, retrying: %s", self.name, e)
            self._caught_up = waiters + self._caught_up
            self._catch_up_wanted.set()
            await sleep_unless(stop, delay * (0.5 + random.random()))
            return min(delay * 2, 5.0)
        self.apply_listing(listing)
        for w in waiters:
            if not w.done():
                w.set_result(None)
        return 0.1


async def sleep_unless(stop: asyncio.Event, seconds: float) -> None:
    """Sleep for ``seconds``, or less if ``stop`` is set meanwhile."""
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), timeout=seconds)
