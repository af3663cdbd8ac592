"""``Informer`` against the simulated cluster: list then watch, resume, relist on 410 with the
vanished objects replayed as DELETED, an unserved optional kind, a handler that raises."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from scheduler.app.informers import Informer, collection_path
from scheduler.errors import ClientError
from scheduler.kubeapi import KubeClient, KubeConfig
from scheduler.simulator import ErrorRule, SimulatedCluster
from tests.simulator.helpers import Http, started

CLAIMS = "/api/v1/namespaces/default/persistentvolumeclaims"


def claim(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
                     "storageClassName": "none"}}


@pytest.fixture
def sim() -> Iterator[SimulatedCluster]:
    with started() as c:
        yield c


def client(sim: SimulatedCluster) -> KubeClient:
    # One per asyncio.run: a session belongs to its event loop.
    return KubeClient(KubeConfig(sim.url, token=sim.token, ssl_context=sim.tls.client_context()))


async def until(check: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.02)


def test_list_then_watch_from_the_listing_version(sim: SimulatedCluster) -> None:
    http = Http(sim)
    http("POST", CLAIMS, claim("a"))
    seen: list[tuple[str, str]] = []

    async def go() -> None:
        async with client(sim) as api:
            inf = Informer(api, "pvcs", collection_path("", "v1", "persistentvolumeclaims"),
                           lambda ev, obj: seen.append((ev, obj["metadata"]["name"])))
            inf.apply_listing(await inf.list())
            assert seen == [("ADDED", "a")] and inf.resource_version
            stop = asyncio.Event()
            task = asyncio.create_task(inf.run(stop))
            await asyncio.to_thread(http, "POST", CLAIMS, claim("b"))
            await asyncio.to_thread(http, "DELETE", f"{CLAIMS}/a")
            await until(lambda: ("DELETED", "a") in seen)
            stop.set()
            task.cancel()
    asyncio.run(go())
    # Nothing delivered twice: the watch started where the listing ended.
    assert seen[:2] == [("ADDED", "a"), ("ADDED", "b")] and seen.count(("ADDED", "a")) == 1


def test_410_relists_and_replays_what_vanished_as_deleted(sim: SimulatedCluster) -> None:
    http = Http(sim)
    for n in ("a", "b"):
        http("POST", CLAIMS, claim(n))
    seen: list[tuple[str, str]] = []

    def handle(ev: str, obj: dict[str, Any]) -> None:
        seen.append((ev, f'{obj["metadata"].get("namespace")}/{obj["metadata"]["name"]}'))
        if ev == "DELETED":
            sim.server.faults.gone = 0.0       # one expiry is enough

    async def go() -> None:
        async with client(sim) as api:
            inf = Informer(api, "pvcs", collection_path("", "v1", "persistentvolumeclaims"), handle)
            inf.apply_listing(await inf.list())
            # While nobody watches, "a" is deleted; the next watch is answered 410 Gone.
            await asyncio.to_thread(http, "DELETE", f"{CLAIMS}/a")
            sim.server.faults.gone = 1.0
            stop = asyncio.Event()
            task = asyncio.create_task(inf.run(stop))
            await until(lambda: ("DELETED", "default/a") in seen)
            await asyncio.to_thread(http, "POST", CLAIMS, claim("c"))
            await until(lambda: ("ADDED", "default/c") in seen)
            stop.set()
            task.cancel()
    asyncio.run(go())
    assert seen[:2] == [("ADDED", "default/a"), ("ADDED", "default/b")]
    # The relist: b listed again (an update for the consumer), a replayed as DELETED.
    assert seen[2:4] == [("ADDED", "default/b"), ("DELETED", "default/a")]


def test_an_optional_kind_the_cluster_does_not_serve_reads_as_empty(sim: SimulatedCluster) -> None:
    async def go() -> None:
        async with client(sim) as api:
            path = collection_path("widgets.example.com", "v1", "widgets")
            optional = Informer(api, "widgets", path, lambda *_: None, optional=True)
            assert await optional.list() == {"items": [], "metadata": {}}
            assert not optional.served
            required = Informer(api, "widgets", path, lambda *_: None)
            with pytest.raises(ClientError) as e:
                await required.list()
            assert e.value.status == 404
    asyncio.run(go())


def test_a_handler_that_raises_does_not_stop_the_informer(sim: SimulatedCluster) -> None:
    http = Http(sim)
    seen: list[str] = []

    def handle(ev: str, obj: dict[str, Any]) -> None:
        seen.append(obj["metadata"]["name"])
        if obj["metadata"]["name"] == "bad":
            raise ValueError("cannot read it")

    async def go() -> None:
        async with client(sim) as api:
            inf = Informer(api, "pvcs", collection_path("", "v1", "persistentvolumeclaims"), handle)
            inf.apply_listing(await inf.list())
            stop = asyncio.Event()
            task = asyncio.create_task(inf.run(stop))
            await asyncio.to_thread(http, "POST", CLAIMS, claim("bad"))
            await asyncio.to_thread(http, "POST", CLAIMS, claim("good"))
            await until(lambda: "good" in seen)
            stop.set()
            task.cancel()
    asyncio.run(go())
    assert seen == ["bad", "good"]


class HeldWatch:
    """The client, but its watches deliver nothing while ``held`` (each event waits): a lagging stream."""

    def __init__(self, api: KubeClient) -> None:
        self.api, self.held = api, False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.api, name)

    async def watch_path(self, *args: Any, **kwargs: Any) -> Any:
        async for event in self.api.watch_path(*args, **kwargs):
            while self.held:
                await asyncio.sleep(0.02)
            yield event


def test_catch_up_delivers_the_api_state_however_far_the_watch_lags(sim: SimulatedCluster) -> None:
    """``catch_up`` (a new leader, before it schedules): a fresh List applied in the run loop's turn,
    the lagging watch dropped first, so none of its older events follows the List, and the watch
    goes on from the List's version."""
    http = Http(sim)
    http("POST", CLAIMS, claim("a"))
    seen: list[tuple[str, str]] = []

    async def go() -> None:
        async with client(sim) as api:
            held = HeldWatch(api)
            inf = Informer(held, "pvcs", collection_path("", "v1", "persistentvolumeclaims"),  # type: ignore[arg-type]
                           lambda ev, obj: seen.append((ev, obj["metadata"]["name"])))
            inf.apply_listing(await inf.list())
            stop = asyncio.Event()
            task = asyncio.create_task(inf.run(stop))
            await asyncio.sleep(0.2)               # the watch is open
            held.held = True
            await asyncio.to_thread(http, "POST", CLAIMS, claim("b"))
            await asyncio.to_thread(http, "DELETE", f"{CLAIMS}/a")
            await asyncio.sleep(0.3)
            assert seen == [("ADDED", "a")]        # the watch lags: nothing of b, nor of a's deletion
            await asyncio.wait_for(inf.catch_up(), 10)
            assert seen == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a")]
            held.held = False
            await asyncio.to_thread(http, "POST", CLAIMS, claim("c"))
            await until(lambda: ("ADDED", "c") in seen)
            await asyncio.sleep(0.2)
            stop.set()
            task.cancel()
    asyncio.run(go())
    # The dropped watch's events (b added, a deleted) were never delivered a second time.
    assert seen == [("ADDED", "a"), ("ADDED", "b"), ("DELETED", "a"), ("ADDED", "c")]


def test_catch_up_retries_a_failed_list(sim: SimulatedCluster) -> None:
    """A List that fails (503) is retried until one succeeds; only then does ``catch_up`` return."""
    http = Http(sim)
    seen: list[tuple[str, str]] = []

    async def go() -> None:
        async with client(sim) as api:
            inf = Informer(api, "pvcs", collection_path("", "v1", "persistentvolumeclaims"),
                           lambda ev, obj: seen.append((ev, obj["metadata"]["name"])))
            inf.apply_listing(await inf.list())
            stop = asyncio.Event()
            task = asyncio.create_task(inf.run(stop))
            await asyncio.to_thread(http, "POST", CLAIMS, claim("a"))
            await until(lambda: ("ADDED", "a") in seen)
            sim.server.faults.errors.append(ErrorRule("list", "persistentvolumeclaims", 1.0, 503))
            waiter = asyncio.ensure_future(inf.catch_up())
            await asyncio.sleep(0.5)
            assert not waiter.done()               # every List so far answered 503
            sim.server.faults.errors.clear()
            await asyncio.wait_for(waiter, 10)
            stop.set()
            task.cancel()
    asyncio.run(go())
    assert seen == [("ADDED", "a"), ("ADDED", "a")]      # the catch-up's List: an update for the consumer
