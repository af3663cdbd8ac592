"""DynamicResources' cycle state (upstream's ``stateData``): what PreFilter found and Filter
computed for the pod, read by Reserve, PreBind, PostFilter and Score; and ``Reserved``, what
Reserve did, for PreBind.

A cycle keeps no object per node: Filter's allocations are shared objects (a variant's claim
indices, the allocator's results), and ``allocations_on`` searches only for the node Reserve
picks when Filter passed it by counting (``counting``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from scheduler.dra.allocator import Allocator, Node
from scheduler.dra.extended import RequestMapping
from scheduler.framework.status import Status
from scheduler.model import NodeSelector
from scheduler.model.dra import AllocationResult, ResourceClaim


@dataclass(slots=True)
class _State:
    """upstream's ``stateData``."""

    claims: list[ResourceClaim] = field(default_factory=list)
    allocator: Allocator | None = None
    to_allocate: list[int] = field(default_factory=list)          # indices into claims
    available_on: list[NodeSelector | None] = field(default_factory=list)
    unavailable: set[int] = field(default_factory=set)
    # allocated claims whose binding failed or timed out (``bindingconditions.blocked``)
    blocked: list[int] = field(default_factory=list)
    # Filter's allocation per node: the claim indices it allocated and their results, in the same
    # order (the extended-resource claim has none on a node where the device plugins provide it
    # all; ``allocations_on`` pairs them). Both are objects shared by many nodes (the variant's
    # indices, the allocator's result for the devices found), so a cycle keeps no object per node:
    # objects that live through a cycle, a few hundred per pod, made the garbage collector's full
    # passes (0.1 to 0.4 s each at these heap sizes) several times as frequent.
    node_indices: dict[str, Sequence[int]] = field(default_factory=dict)
    node_results: dict[str, Sequence[AllocationResult]] = field(default_factory=dict)
    # Nodes Filter passed by counting (``_FreeRows``), with the claim indices and claims to
    # allocate there (shared per variant): ``allocations_on`` searches on the one Reserve asks for.
    counted: dict[str, tuple[Sequence[int], Sequence[ResourceClaim] | None]] = field(default_factory=dict)
    reserved: Reserved | None = None
    allocations: dict[int, AllocationResult] = field(default_factory=dict)   # Reserve's, by claim index
    # Extended resources backed by DRA: the index of the extended-resource claim in ``claims`` (-1:
    # none), the uid it had in PreFilter (the in-flight key), the pod's requests of DRA extended
    # resource names, and per node the claim's variant for it (its requests) with the mappings.
    extended: int = -1
    extended_uid: str = ""
    extended_requests: dict[str, int] = field(default_factory=dict)
    node_extended: dict[str, _ExtendedVariant] = field(default_factory=dict)
    # Filter's per-node work for the extended-resource claim, by what the node advertises of the
    # pod's extended resources (all that it depends on): computed once per cycle per such answer.
    extended_by_node_kind: dict[object, _ExtendedVariant] = field(default_factory=dict)
    # Score: per claim index to allocate, the rank score of each of its ``request/subrequest``
    # names (only claims with a firstAvailable request; empty: the pod scores 0 everywhere), and
    # Filter's sum per snapshot row (None until Filter kept an allocation for such a pod).
    ranks: dict[int, dict[str, int]] = field(default_factory=dict)
    scores: npt.NDArray[np.int64] | None = None

    def allocations_on(self, node_name: str) -> dict[int, AllocationResult] | None:
        """Filter's allocation for ``node_name`` by claim index, or ``None`` when it kept none.
        For a node Filter passed by counting, the search runs now, over the same store."""
        results = self.node_results.get(node_name)
        if results is None:
            counted = self.counted.get(node_name)
            if counted is None or self.allocator is None:
                return None
            indices, claims = counted
            found = self.allocator.allocate(Node(node_name, {}), claims)
            if found is None or len(found) != len(indices):
                return None
            self.node_indices[node_name] = indices
            self.node_results[node_name] = results = found
        return dict(zip(self.node_indices[node_name], results, strict=True))


_NO_CLAIMS = _State()


@dataclass(slots=True)
class _ExtendedVariant:
    """``_filter_extended``'s answer for the nodes that advertise the same amounts of the pod's
    extended resources, with what Filter derives from it: the claim indices to allocate, their
    claims (one list per variant, so the allocator's plan for it is made once) and the key of the
    shared answer for nodes without slices."""

    claim: ResourceClaim | None
    mappings: tuple[RequestMapping, ...]
    status: Status | None
    indices: list[int]
    claims: list[ResourceClaim]
    key: tuple[str, ...]




@dataclass(slots=True)
class Reserved:
    """What Reserve did for the pod on ``node_name``: ``claims`` are the pod's claims as PreBind must
    leave them (with ``allocation`` set for those allocated in this cycle: ``allocated``, by
    index); each not yet reserved for the pod gets the pod added to ``reservedFor``."""

    node_name: str
    claims: list[ResourceClaim]
    allocated: list[int]
