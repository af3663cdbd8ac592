"""How many devices of one DeviceClass a node has: the "allocatable" of an extended resource backed
by DRA when NodeResourcesFit or BalancedAllocation score it (upstream's ``resource_allocation.go``:
``calculateDRAResourceTotals`` and ``deviceMatchesClass``, DRAExtendedResource, release 1.36).

Upstream counts, for one node, every device of every ResourceSlice for that node that the class's
CEL selectors accept, and of those the ones some claim holds (``IsDeviceAllocated`` over
``GatherAllocatedState``: written, assumed and in-flight allocations, shared ones included, admin
access not). Which slices are for the node:

* a slice with ``perDeviceNodeSelection``: each device by its own ``allNodes``, ``nodeName`` or
  ``nodeSelector`` (a device with none of them is on no node);
* any other slice: ``allNodes``; else its ``nodeName`` must be the node; else its ``nodeSelector``
  must match the node; a slice with none of the three (API validation forbids it) is on every node.

Every slice counts, whatever its pool's generation or completeness (upstream lists all slices,
unlike the allocator's ``GatherPools``). A class without selectors accepts every device; a selector
that is not CEL is passed over; the first selector that rejects a device rejects it. A selector
that does not compile or fails on a device the node has is an *error for that node*: upstream then
leaves the resource out of the node's score (``calculateDRAExtendedResourceAllocatableRequest``
logs it and returns 0, 0). Devices with taints, binding conditions or counters are counted as any
other (upstream does not look at them here).

The answer depends only on the slices, the class and the node's name and labels, never on the
pod, so ``ClassDevices`` computes it once per class per version of the slices and classes and
keeps it by node: a pod's cycle reads a node's pools (one ``(driver, pool)`` key and the set of
its device names per slice) and counts what is allocated among them, a set intersection per
pool instead of a CEL run per device per node per pod. Upstream caches the same CEL results
(``deviceMatchCache``, ``nodeMatchCache``) for the plugin's lifetime, keyed by device and node
name; here they are dropped with the slices' version, so a changed device or node label is seen.

Which of them are allocated changes with every pod, so it is not kept here: the scoring plugins
(``noderesources.DraScoring``) keep a count per node row and recount, each cycle, only the rows of
the pools whose allocations changed (``DraStore.pool_changes``, ``DraStore.allocated_among``). This
module reads only slices and classes, so it stays in the ``dra`` layer beside the allocator whose
CEL cache it shares.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scheduler.dra.allocator import SelectorCache
from scheduler.dra.cel import CELError
from scheduler.model.dra import Device, DeviceClass, ResourceSlice
from scheduler.model.selectors import NodeSelector

__all__ = ["ClassDevices", "NodeDevices"]

PoolKey = tuple[str, str]


Names = frozenset[str] | tuple[str, ...]


@dataclass(frozen=True, slots=True)
class NodeDevices:
    """The class's devices on one node: ``count`` of them, as (pool, device names) per slice;
    ``error``: a selector failed on one of them (the resource is then not scored on the node).
    The names are a frozenset, or a tuple where a slice repeats a name (an invalid pool, whose
    devices upstream still counts one by one)."""

    count: int
    pools: tuple[tuple[PoolKey, Names], ...] = ()
    error: bool = False


_NONE = NodeDevices(0)
_ERROR = NodeDevices(0, error=True)


@dataclass(frozen=True, slots=True)
class _Where:
    """Where a slice's (or one device's) devices are: ``always`` on every node, else on the node
    named ``node_name``, else where ``selector`` matches."""

    always: bool = False
    node_name: str = ""
    selector: NodeSelector | None = None

    def matches(self, name: str, labels: Mapping[str, str]) -> bool:
        if self.always:
            return True
        if self.node_name:
            return self.node_name == name
        return self.selector is not None and self.selector.matches(labels, name)


class ClassDevices:
    """The devices of one class, found once for a version of the slices and classes. The owner
    builds a new one when ``DraStore.slices_version`` moves (it moves with slices and classes)."""

    def __init__(self, cls: DeviceClass, slices: Sequence[ResourceSlice], cache: SelectorCache) -> None:
        self.cls = cls
        self._cache = cache
        self._expressions = tuple(e for e in cls.selectors if e is not None)
        # node name -> its node-local slices' (pool, names, error); the rest need the node's labels.
        self._local: dict[str, list[tuple[PoolKey, Names, bool]]] = {}
        self._shared: list[tuple[_Where, PoolKey, Names, bool]] = []
        self._by_node: dict[str, NodeDevices] = {}
        # node name -> the labels its entry in _by_node was computed with (only with _shared)
        self._labels: dict[str, Mapping[str, str]] = {}
        for s in slices:
            pool = (s.driver, s.pool.name)
            if s.per_device_node_selection:
                for i, d in enumerate(s.devices):
                    where = _device_where(d)
                    if where is not None:
                        self._shared.append((where, pool, *self._accepted(s, (i,))))
                continue
            names, error = self._accepted(s, range(len(s.devices)))
            if s.all_nodes or (not s.node_name and s.node_selector is None):
                self._shared.append((_Where(always=True), pool, names, error))
            elif s.node_name:
                self._local.setdefault(s.node_name, []).append((pool, names, error))
            else:
                self._shared.append((_Where(selector=s.node_selector), pool, names, error))

    def _accepted(self, s: ResourceSlice, indexes: Sequence[int]) -> tuple[Names, bool]:
        """The names of the devices at ``indexes`` of ``s`` that the class accepts, and whether a
        selector failed on one of them (``deviceMatchesClass``'s error)."""
        names: list[str] = []
        error = False
        for i in indexes:
            try:
                if self._accepts(s, i):
                    names.append(s.devices[i].name)
            except CELError:
                error = True
        unique = frozenset(names)
        return (unique if len(unique) == len(names) else tuple(names)), error

    def _accepts(self, s: ResourceSlice, index: int) -> bool:
        # The selectors in order: the first that rejects the device decides (a later one's
        # error is never seen), as upstream's loop.
        return all(self._cache.matches(expression, s, index) for expression in self._expressions)

    def on_node(self, name: str, labels: Mapping[str, str]) -> NodeDevices:
        """The class's devices on the node ``name`` with ``labels``, kept by node name (and labels,
        when a slice selects nodes by label)."""
        got = self._by_node.get(name)
        if got is not None and (not self._shared or self._labels.get(name) == labels):
            return got
        pools: list[tuple[PoolKey, Names]] = []
        error = False
        for pool, names, err in self._local.get(name, ()):
            error |= err
            if names:
                pools.append((pool, names))
        for where, pool, names, err in self._shared:
            if where.matches(name, labels):
                error |= err
                if names:
                    pools.append((pool, names))
        got = _ERROR if error else NodeDevices(sum(len(n) for _, n in pools), tuple(pools)) if pools else _NONE
        self._by_node[name] = got
        if self._shared:
            self._labels[name] = dict(labels)
        return got


def _device_where(d: Device) -> _Where | None:
    """Where a device of a ``perDeviceNodeSelection`` slice is: ``allNodes``, its ``nodeName``, or
    its ``nodeSelector`` (only without a name: upstream's ``NodeMatches`` compares a name alone)."""
    if d.all_nodes:
        return _Where(always=True)
    if d.node_name:
        return _Where(node_name=d.node_name)
    if d.node_selector is not None:
        return _Where(selector=d.node_selector)
    return None
