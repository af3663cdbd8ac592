"""What the general search keeps between calls, checked against the search that keeps nothing.

``Allocator.allocate`` answers every node that sees the same pools with one search per cycle
(``SliceIndex.node_independent``), and the search walks only a request's *openers*, the devices it
could take whatever else it holds (``search._Run._openers``), kept per pool across cycles while the
store's ``pool_stamp`` for the pool holds. Neither may change an answer: on random clusters of
shared pools (node selectors, allNodes, partitionable counters, shareable devices with capacity),
node-local pools, devices placed one by one (``perDeviceNodeSelection``) and claims of one or two requests with matchAttribute constraints, each node's
answer over several cycles of changing allocations is compared with a fresh allocator's plain
walk (no memo, no openers), the search upstream's tables check (``test_allocator*.py``).
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction
from typing import Any

import pytest

from scheduler.dra.allocator import AllocationError, Allocator, Node, SelectorCache, SliceIndex
from scheduler.dra.search import _Run
from scheduler.model.dra import DeviceID, parse_device_class, parse_resource_claim, parse_resource_slice

DRIVER = "driver-a"
# node-2 and node-4 have no pool of their own, so they see the same pools (one search for both
# where it does not depend on the node); node-3 and node-5 see the same shared pools beside their
# own (one search where neither's own pools offer anything).
NODES = [Node("node-1", {"zone": "a"}), Node("node-2", {"zone": "a"}), Node("node-3", {"zone": "b"}),
         Node("node-4", {"zone": "a"}), Node("node-5", {"zone": "b"})]
_GI = 1 << 30


def _world(rng: random.Random) -> tuple[list[Any], list[Any], list[DeviceID], list[DeviceID]]:
    """Raw slices and classes, every device id, and the shareable ones."""
    slices: list[Any] = []
    ids: list[DeviceID] = []
    shareable: list[DeviceID] = []

    def add(name: str, pool: str, where: dict[str, Any], body: dict[str, Any], count: int = 1) -> None:
        slices.append({"metadata": {"name": name}, "spec": {
            "driver": DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": count}, **where, **body}})

    if rng.random() < 0.5:                 # devices placed one by one: a node-dependent search
        devs = [{"name": f"d{i}", "attributes": {"slice": {"int": rng.randrange(3)}},
                 **({"nodeName": rng.choice(NODES).name} if i % 2 else {"allNodes": True})}
                for i in range(rng.randrange(1, 5))][::-1]
        add("placed", "placed", {"perDeviceNodeSelection": True}, {"devices": devs})
        ids += [DeviceID(DRIVER, "placed", d["name"]) for d in devs]
    for n in (NODES[0], NODES[2], NODES[4]):   # node-local pools, devices held whole (or none to take)
        pool = f"local-{n.name}"
        devs = [{"name": f"d{i}", "attributes": {"slice": {"int": rng.randrange(2)},
                                                 "healthy": {"bool": rng.random() < 0.5}}}
                for i in range(rng.randrange(1, 4))]
        add(pool, pool, {"nodeName": n.name}, {"devices": devs})
        ids += [DeviceID(DRIVER, pool, d["name"]) for d in devs]
    for p in range(rng.randrange(2, 7)):   # shared pools: counters, capacity, both, or neither
        pool = f"shared-{p}"
        where: dict[str, Any] = rng.choice([
            {"allNodes": True},
            {"nodeSelector": {"nodeSelectorTerms": [{"matchExpressions": [
                {"key": "zone", "operator": "In", "values": [rng.choice("ab")]}]}]}}])
        partitionable = rng.random() < 0.6
        devs = []
        for i in range(rng.randrange(1, 5)):
            d: dict[str, Any] = {"name": f"d{i}", "attributes": {"slice": {"int": p % 3},
                                                                 "healthy": {"bool": rng.random() < 0.8}}}
            if partitionable:
                d["consumesCounters"] = [{"counterSet": "set", "counters": {
                    f"c{k}": {"value": "1"} for k in rng.sample(range(3), rng.randrange(1, 3))}}]
            if rng.random() < 0.4:
                d["allowMultipleAllocations"] = True
                d["capacity"] = {"memory": {"value": "8Gi", "requestPolicy": {
                    "default": "1Gi", "validRange": {"min": "1Gi"}}}}
                shareable.append(DeviceID(DRIVER, pool, d["name"]))
            devs.append(d)
        if partitionable:
            add(f"{pool}-counters", pool, where, {"sharedCounters": [
                {"name": "set", "counters": {f"c{k}": {"value": "1"} for k in range(3)}}]}, 2)
            add(f"{pool}-devices", pool, where, {"devices": devs}, 2)
        else:
            add(pool, pool, where, {"devices": devs})
        ids += [DeviceID(DRIVER, pool, d["name"]) for d in devs]
    classes = [{"metadata": {"name": "any"}, "spec": {}},
               {"metadata": {"name": "healthy"}, "spec": {"selectors": [{"cel": {"expression": (
                   f'!has(device.attributes["{DRIVER}"].healthy) || device.attributes["{DRIVER}"].healthy')}}]}}]
    return slices, classes, ids, shareable


def _claim(rng: random.Random, i: int) -> Any:
    requests = []
    for r in range(rng.choice([1, 1, 2])):
        exactly: dict[str, Any] = {"deviceClassName": rng.choice(["any", "healthy"]), "count": rng.choice([1, 1, 2])}
        if rng.random() < 0.3:
            exactly["capacity"] = {"requests": {"memory": rng.choice(["2Gi", "4Gi"])}}
        requests.append({"name": f"req-{r}", "exactly": exactly})
    spec: dict[str, Any] = {"requests": requests}
    if rng.random() < 0.5:
        spec["constraints"] = [{"matchAttribute": f"{DRIVER}/slice"}]
    return parse_resource_claim({"metadata": {"name": f"claim-{i}", "namespace": "default", "uid": f"uid-{i}"},
                                 "spec": {"devices": spec}})


def _answer(allocate: Any) -> object:
    try:
        got = allocate()
    except AllocationError as e:
        return f"{type(e).__name__}: {e}"
    if got is None:
        return None
    out = []
    for r in got:
        body = r.to_json()
        for res in body["devices"]["results"]:      # a share's id is fresh in every search
            if res.pop("shareID", None) is not None:
                res["shareID"] = True
        out.append(body)
    return out


@pytest.mark.parametrize("seed", range(60))
def test_kept_searches_answer_as_a_fresh_walk(seed: int) -> None:
    rng = random.Random(seed)
    raw_slices, raw_classes, ids, shareable = _world(rng)
    slices = [parse_resource_slice(s) for s in raw_slices]
    by_name = {c.name: c for c in (parse_device_class(c) for c in raw_classes)}
    index, cache = SliceIndex(slices), SelectorCache()       # kept across cycles, as the plugin keeps them
    stamps: dict[tuple[str, str], int] = {}
    journal: list[tuple[str, str]] = []         # the store's pool_changes, never trimmed here

    def pool_changes(since: int) -> tuple[list[tuple[str, str]] | None, int]:
        if rng.random() < 0.1:
            return None, len(journal)          # as a trimmed journal answers: start over
        return journal[since:], len(journal)
    held: set[DeviceID] = set()
    consumed: dict[DeviceID, dict[str, Fraction]] = {}
    compared = 0
    for cycle in range(6):
        # A new allocated state; the pools whose state changed get a new stamp, as the store's.
        new_held = {d for d in ids if rng.random() < 0.3 and d not in shareable}
        new_consumed = {d: {"memory": Fraction(rng.choice([2, 4, 6, 8]) * _GI)} for d in shareable
                        if rng.random() < 0.5}
        for d in {*(held ^ new_held), *consumed, *new_consumed}:
            if d in new_held or consumed.get(d) != new_consumed.get(d) or d in held:
                stamps[(d.driver, d.pool)] = stamps.get((d.driver, d.pool), 0) + 1
                journal.append((d.driver, d.pool))
        held, consumed = new_held, new_consumed
        in_use = held | set(consumed)
        claims = [_claim(rng, k) for k in range(rng.choice([1, 1, 2]))]
        kept = Allocator(claims, by_name.get, (), held.__contains__, cache, index=index,
                         device_allocated=in_use.__contains__,
                         consumed_capacity=consumed.get if consumed else None,
                         pool_stamp=lambda driver, pool: stamps.get((driver, pool), 0), pool_changes=pool_changes)
        for n in NODES:
            fresh = Allocator(claims, by_name.get, slices, held.__contains__, device_allocated=in_use.__contains__,
                              consumed_capacity=consumed.get if consumed else None)
            fresh._plan = lambda claims: None  # type: ignore[method-assign]
            walk = _Run(fresh, n)
            walk._openers_key = lambda ci, rd: None  # type: ignore[method-assign]
            want = _answer(walk.run)
            assert _answer(functools.partial(kept.allocate, n)) == want, (seed, cycle, n.name)
            compared += want is not None and not isinstance(want, str)
    if seed == 0:
        assert compared        # some answers are allocations, not only failures
