"""The pools a node sees (upstream's ``GatherPools``, ``NodeMatches``: ``pools_incubating.go`` and
``pools_experimental.go``, with partitionable devices), and the ``SliceIndex`` that finds them
without scanning every slice.

**Partitionable devices** (DRAPartitionableDevices): a slice publishing ``sharedCounters`` is part
of its pool on every node; a ``perDeviceNodeSelection`` slice is for a node when one of its
devices is (each device is then checked on its own by the search). A pool's counter sets are
those of its slices (a name twice: the pool is invalid, ``duplicate counter set name``), and every
device's ``consumesCounters`` must name a counter set and counters that exist (``counter set X not
found``, ``counter X not found in counter set Y``: invalid), the pool's slices for other nodes
included (``other_slices``: their allocated devices consume the same counters). The index also holds what the
single-request fast path (``simple_plan``) keeps per slice for as long as the slices and classes do
not change: the candidates per set of selectors, and the results built.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import NamedTuple

from scheduler.model.devicetaints import DeviceToleration
from scheduler.model.dra import AllocationResult, DeviceAttribute, DeviceID, ResourceSlice
from scheduler.model.selectors import NodeSelector


@dataclass(slots=True)
class Node:
    """What the allocator reads of a node: its name and labels."""

    name: str
    labels: Mapping[str, str]


def node_matches(node: Node, node_name: str, all_nodes: bool, selector: NodeSelector | None) -> bool:
    """upstream's ``NodeMatches``."""
    if node_name:
        return node.name == node_name
    if all_nodes:
        return True
    if selector is not None:
        return selector.matches(node.labels, node.name)
    return False


# A class's selectors with a request's, and the request's tolerations (``taints``): what decides
# which devices a request may take.
_Selectors = tuple[tuple[str | None, ...], tuple[str | None, ...], tuple[DeviceToleration, ...]]


class _Candidates(NamedTuple):
    """The devices of a slice that passed a request's checks except "in use", in order: their
    names and positions in the slice, and by index into those the selector error to raise when
    the search reaches the device (where: ``"class"`` or ``"claim"``, and the text; the class's
    name and the claim's key are filled in when raised, as they are the pod's). Strings and ints
    only, so that the garbage collector stops tracking them: the index holds one per slice and
    set of selectors for as long as the slices do not change."""

    names: tuple[str, ...]
    positions: tuple[int, ...]
    errors: dict[int, tuple[str, str]] | None


# id(pool) -> (the pool's stamp, per slice of ``pool.slices`` the positions of the devices a
# request could take, or ``None`` when the pool has none: ``search._Run._openers``), by what
# decides them (a request's class, selectors and capacity, and the search's mode).
PoolOpeners = dict[int, tuple[int, tuple[tuple[int, ...], ...] | None]]
Openers = dict[object, PoolOpeners]


# --- pools ------------------------------------------------------------------------------------

@dataclass(slots=True)
class Pool:
    driver: str
    pool: str
    incomplete: bool = False
    invalid: bool = False
    invalid_reason: str = ""
    slices: list[ResourceSlice] = field(default_factory=list)
    # partitionable devices: the pool's counter sets (``None``: the feature is off), and its
    # device slices for other nodes
    counter_sets: dict[str, Mapping[str, Fraction]] | None = None
    other_slices: list[ResourceSlice] = field(default_factory=list)

    @property
    def id(self) -> str:
        return f"{self.driver}/{self.pool}"


class SliceIndex:
    """The slices of one cycle, indexed so a node's pools are found without scanning every slice:
    node-local slices by node name, the others (node selector, all nodes) in one list, those of
    partitionable devices (counter sets, per-device node selection) in another, and all slices by
    pool (for ``checkSlicesInPool``). With ``partitionable`` off (DRAPartitionableDevices) those
    are left out, as upstream's ``GatherPools`` skips them. ``advanced``: some slice uses
    partitionable devices or consumable capacity, which only the general search handles."""

    def __init__(self, slices: Sequence[ResourceSlice], partitionable: bool = True) -> None:
        # Kept for as long as the slices do not change (the plugin keeps one per store version),
        # so what depends only on the slices is computed once, not per node per pod: each slice's
        # device ids, and a node's pools when no slice depends on node labels (``pools_for``).
        self._ids: dict[int, tuple[DeviceID, ...]] = {}
        self._pools: dict[object, list[Pool]] = {}
        self._gathered: dict[tuple[int, ...], list[Pool]] = {}
        self._independent: dict[int, bool] = {}
        self._independent_lists: dict[int, bool] = {}
        # (pool, ids of the slices a node sees of it) -> its Pool (``None``: being replaced)
        self.built: dict[tuple[tuple[str, str], tuple[int, ...]], Pool | None] = {}
        # attribute name -> value -> id(slice) -> positions of its devices with that value: the
        # search's candidates once a matchAttribute constraint has its value (``search.py``).
        self.by_attribute: dict[str, dict[DeviceAttribute, dict[int, tuple[int, ...]]]] = {}
        # For the single-request fast path (``SimplePlan``): per (slice, selectors) the devices a
        # request can take, and the allocation results built, by request, class and devices. The
        # index lives for one version of the slices *and classes* (the plugin's does: the store's
        # ``slices_version`` moves with both), so a class's name stands for its selectors and config.
        self.candidates: dict[_Selectors, dict[int, _Candidates]] = {}
        # The general search's openers across cycles (``search._Run._openers``): what a request
        # (by what decides it) could take first of each slice, with the stamp of its pool's
        # allocated state they were worked out for.
        self.openers: Openers = {}
        # (id(a request kind's openers), id(a pools list)) -> [journal position, how many of the
        # list's first pools offer that kind nothing] (``search._Run._dead_prefix``)
        self.dead_prefixes: dict[tuple[int, int], list[int]] = {}
        self._positions: dict[int, dict[tuple[str, str], int]] = {}
        self._narrowed: dict[tuple[int, int], tuple[int, ...]] = {}
        self._slice_pool = {id(s): (s.driver, s.pool.name) for s in slices}
        self.results: dict[tuple[object, ...], tuple[AllocationResult]] = {}
        self.order: dict[tuple[str, str], int] = {}
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.partitionable: list[ResourceSlice] = []
        self.counters = partitionable
        self.advanced = False
        self.by_pool: dict[tuple[str, str], list[ResourceSlice]] = {}
        # The slices every node matching a selector sees (``_shared_for``): the shared slices by
        # selector (its JSON, or allNodes), one slice of each standing for the others; the lists
        # made per set of selectors matched; the pools of shared slices, and the pools gathered
        # after the others (binding conditions).
        self._group_of: dict[int, str] = {}
        self._groups: dict[str, ResourceSlice] = {}
        self._shared_lists: dict[object, list[ResourceSlice]] = {}
        self._shared_pids: set[tuple[str, str]] = set()
        self._late: set[int] = set()
        # id(a node's pools) -> (its node-local pools, its shared pools) where those are apart
        self.parts: dict[int, tuple[list[Pool], list[Pool]]] = {}
        for s in slices:
            pid = (s.driver, s.pool.name)
            self.by_pool.setdefault(pid, []).append(s)
            if any(d.consumes_counters or d.allow_multiple_allocations or d.request_policies for d in s.devices):
                self.advanced = True
            if s.per_device_node_selection or s.shared_counters:
                if partitionable:
                    self.advanced = True
                    self.order.setdefault(pid, len(self.order))
                    self.partitionable.append(s)
                    self._shared_pids.add(pid)
                continue
            self.order.setdefault(pid, len(self.order))
            if s.node_name:
                self.by_node.setdefault(s.node_name, []).append(s)
            elif s.all_nodes or s.node_selector is not None:
                self.shared.append(s)
                self._shared_pids.add(pid)
                group = "" if s.all_nodes else json.dumps(s.node_selector_raw, sort_keys=True)
                self._group_of[id(s)] = group
                self._groups.setdefault(group, s)

    def has_slices(self, node: Node) -> bool:
        """Whether any slice is for ``node`` (``for_node`` without building the list)."""
        if node.name in self.by_node:
            return True
        return any(node_matches(node, "", s.all_nodes, s.node_selector) for s in self.shared) or \
            any(_per_device_matches(node, s) for s in self.partitionable)

    def for_node(self, node: Node) -> list[ResourceSlice]:
        local = self.by_node.get(node.name, [])
        shared = self._shared_for(node)
        return local + shared if shared else local

    def _shared_for(self, node: Node) -> list[ResourceSlice]:
        """The slices for ``node`` that are not node-local, in order: one list for every node
        that matches the same selectors (each distinct selector matched once per node, not once
        per slice: 2,000 pools published with one selector are one match)."""
        matched = tuple(g for g, rep in self._groups.items()
                        if node_matches(node, "", rep.all_nodes, rep.node_selector))
        # upstream's GatherPools: a slice with counter sets is always relevant (its pool needs
        # them); a per-device one when one of its devices is for the node.
        placed = tuple(id(s) for s in self.partitionable if not s.shared_counters and _per_device_matches(node, s))
        key = (matched, placed)
        got = self._shared_lists.get(key)
        if got is None:
            groups, ids = set(matched), set(placed)
            got = self._shared_lists[key] = [s for s in self.shared if self._group_of[id(s)] in groups] + [
                s for s in self.partitionable if s.shared_counters or id(s) in ids]
        return got

    def pool_independent(self, pool: Pool) -> bool:
        """``node_independent`` for one pool (a pool ``pools_for`` gave: the index holds it)."""
        got = self._independent.get(id(pool))
        if got is None:
            got = self._independent[id(pool)] = not any(
                s.per_device_node_selection or any(d.binds_to_node for d in s.devices) for s in pool.slices)
        return got

    def positions(self, pools: list[Pool]) -> dict[tuple[str, str], int]:
        """(driver, pool) -> its place in ``pools`` (a list the index holds)."""
        got = self._positions.get(id(pools))
        if got is None:
            got = self._positions[id(pools)] = {(p.driver, p.pool): at for at, p in enumerate(pools)}
        return got

    def narrowed_positions(self, narrow: Mapping[int, object], pools: list[Pool]) -> tuple[int, ...]:
        """The places in ``pools`` (a list the index holds) of the pools that hold a slice of
        ``narrow`` (a table of ``search._with_attribute``, by ``id`` of slice; the index holds
        it), in order: a walk narrowed by a matchAttribute value visits those pools only,
        instead of every pool the node sees."""
        key = (id(narrow), id(pools))
        got = self._narrowed.get(key)
        if got is None:
            positions = self.positions(pools)
            got = self._narrowed[key] = tuple(sorted({at for sid in narrow
                                                      if (at := positions.get(self._slice_pool[sid], -1)) >= 0}))
        return got

    def merged(self, own: list[Pool], common: list[Pool]) -> list[Pool]:
        """A node's own pools and shared ones (or parts of them) in ``gather_slices``' order:
        the pools with binding conditions last, each part by arrival."""
        return sorted(own + common, key=lambda p: (id(p) in self._late, self.order.get((p.driver, p.pool), 0)))

    def node_independent(self, pools: list[Pool]) -> bool:
        """Whether a search over ``pools`` (a list ``pools_for`` gave) reads nothing of the node
        but the pools: no device placed on its own (``perDeviceNodeSelection``: the search matches
        it against the node) and none that ``bindsToNode`` (its result pins the claim to the node
        searched for). Then every node that sees these pools gets the same devices, as upstream's
        search, a function of the pools, the claims and the allocated state, finds them.
        Memoised per list for the index's lifetime (the index holds the lists)."""
        got = self._independent_lists.get(id(pools))
        if got is None:
            got = self._independent_lists[id(pools)] = all(self.pool_independent(p) for p in pools)
        return got

    def device_ids(self, s: ResourceSlice) -> tuple[DeviceID, ...]:
        """``DeviceID(driver, pool, name)`` of each of ``s``'s devices, in order (the index holds
        ``s``, so its ``id`` stays its own)."""
        ids = self._ids.get(id(s))
        if ids is None:
            ids = self._ids[id(s)] = tuple(DeviceID(s.driver, s.pool.name, d.name) for d in s.devices)
        return ids

    def pools_for(self, node: Node) -> list[Pool]:
        """``gather_pools`` for ``node``, memoised for the index's lifetime (one version of the
        slices) by node name, and by its labels too when a slice selects nodes (node-local slices
        depend on the name alone; a selector, on the labels and, through ``matchFields``, the
        name). A node's pools are gathered once, not once per pod; they are only read by the
        search."""
        key: object = node.name
        if self.shared or self.partitionable:
            key = (node.name, tuple(sorted(node.labels.items())))
        pools = self._pools.get(key)
        if pools is None:
            # Nodes that see the same slices (every node a pool's selector picks) share one
            # gathering: the pools are built from the slices alone. Where no pool has both
            # node-local and shared slices, the shared pools are gathered once for every node
            # that sees them and merged in order with the node's own (``parts``).
            local = self.by_node.get(node.name, [])
            shared = self._shared_for(node)
            if local and shared and not any((s.driver, s.pool.name) in self._shared_pids for s in local):
                own, common = self._gather(local), self._gather(shared)
                pools = self.merged(own, common)
                self.parts[id(pools)] = (own, common)
            else:
                pools = self._gather(local + shared if shared else local)
            self._pools[key] = pools
        return pools

    def _gather(self, slices: list[ResourceSlice]) -> list[Pool]:
        seen = tuple(map(id, slices))
        pools = self._gathered.get(seen)
        if pools is None:
            pools = self._gathered[seen] = gather_slices(self, slices)
        return pools


def gather_pools(index: SliceIndex, node: Node) -> list[Pool]:
    """upstream's ``GatherPools`` for one node."""
    return gather_slices(index, index.for_node(node))


def gather_slices(index: SliceIndex, node_slices: Sequence[ResourceSlice]) -> list[Pool]:
    """``GatherPools`` over the slices a node sees (``SliceIndex.for_node``)."""
    pools: dict[tuple[str, str], list[ResourceSlice]] = {}
    for s in node_slices:
        pid = (s.driver, s.pool.name)
        have = pools.get(pid)
        if have is None or s.pool.generation > have[0].pool.generation:
            pools[pid] = [s]
        elif s.pool.generation == have[0].pool.generation:
            have.append(s)
    out: list[Pool] = []
    late: list[Pool] = []
    for pid in sorted(pools, key=lambda p: index.order.get(p, 0)):
        slices = pools[pid]
        # Slices with a device that has binding conditions come after the others of their pool,
        # and such pools after the others, so the search prefers the simpler devices (upstream's
        # GatherPools, pools_incubating.go).
        binding = [s for s in slices if _has_binding_conditions(s)]
        if binding:
            slices = [s for s in slices if not _has_binding_conditions(s)] + binding
        into = late if binding else out
        # A pool is a function of its slices (the index fixed): nodes that see the same slices of
        # it share one Pool, so what is kept per pool (the search's openers) serves them all.
        built = index.built.get((pid, tuple(map(id, slices))), _UNBUILT)
        if built is _UNBUILT:
            built = index.built[(pid, tuple(map(id, slices)))] = _gather_pool(index, pid, slices)
        if built is not None:
            into.append(built)
            if binding:
                index._late.add(id(built))
    return out + late if late else out


_UNBUILT = Pool("", "")


def _gather_pool(index: SliceIndex, pid: tuple[str, str], slices: list[ResourceSlice]) -> Pool | None:
    """The pool of ``slices`` (the newest generation of pool ``pid`` a node sees), or ``None``
    when it is being replaced (a newer generation exists elsewhere)."""
    first = slices[0].pool
    if len(slices) == first.resource_slice_count:
        return _build_pool(pid, slices, None, index.counters)
    obsolete, all_slices = _check_slices_in_pool(index.by_pool.get(pid, []), first.generation)
    if obsolete:
        return None
    if len(all_slices) != first.resource_slice_count:
        return Pool(pid[0], pid[1], incomplete=True)
    return _build_pool(pid, slices, all_slices, index.counters)


def _has_binding_conditions(s: ResourceSlice) -> bool:
    """upstream's ``hasBindingConditions``: some device of ``s`` has binding conditions."""
    return any(d.has_binding_conditions for d in s.devices)


def _per_device_matches(node: Node, s: ResourceSlice) -> bool:
    return s.per_device_node_selection and any(
        node_matches(node, d.node_name, d.all_nodes, d.node_selector) for d in s.devices)


def _check_slices_in_pool(slices: Sequence[ResourceSlice], generation: int) -> tuple[bool, list[ResourceSlice]]:
    same = []
    for s in slices:
        if s.pool.generation == generation:
            same.append(s)
        elif s.pool.generation > generation:
            return True, []
    return False, same


def _build_pool(pid: tuple[str, str], slices: list[ResourceSlice], all_slices: list[ResourceSlice] | None,
                partitionable: bool) -> Pool:
    """upstream's ``buildPool``: device names unique, and (partitionable devices) the counter sets
    and every device's consumption of them consistent."""
    device_slices = [s for s in slices if not s.shared_counters] if partitionable else slices
    seen: set[str] = set()
    for s in device_slices:
        for d in s.devices:
            if d.name in seen:
                return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate device name {d.name}")
            seen.add(d.name)
    if not partitionable:
        return Pool(pid[0], pid[1], slices=slices)
    counter_sets: dict[str, Mapping[str, Fraction]] = {}
    for s in slices:
        for cs in s.shared_counters:
            if cs.name in counter_sets:
                return Pool(pid[0], pid[1], invalid=True, invalid_reason=f"duplicate counter set name {cs.name}")
            counter_sets[cs.name] = cs.counters
    problem = _check_consumption(counter_sets, slices)
    if problem:
        return Pool(pid[0], pid[1], invalid=True, invalid_reason=problem)
    other: list[ResourceSlice] = []
    if all_slices is not None and len(all_slices) != len(slices):
        names = {s.name for s in slices}
        other = [s for s in all_slices if s.name not in names]
        problem = _check_consumption(counter_sets, other)
        if problem:
            return Pool(pid[0], pid[1], invalid=True, invalid_reason=problem)
    return Pool(pid[0], pid[1], slices=device_slices, counter_sets=counter_sets, other_slices=other)


def _check_consumption(counter_sets: Mapping[str, Mapping[str, Fraction]], slices: Sequence[ResourceSlice]) -> str:
    """upstream's ``validateDeviceCounterConsumption``: the first problem, or ``""``."""
    for s in slices:
        for d in s.devices:
            for c in d.consumes_counters:
                counters = counter_sets.get(c.counter_set)
                if counters is None:
                    return f"counter set {c.counter_set} not found"
                for name in c.counters:
                    if name not in counters:
                        return f"counter {name} not found in counter set {c.counter_set}"
    return ""
