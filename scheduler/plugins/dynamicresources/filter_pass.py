"""One DynamicResources Filter call over the candidate rows (``_FilterPass``).

``DynamicResources.filter_nodes`` decides, per row, whether the pod's claims can be allocated on
that node, and keeps each answer in the cycle state for Reserve. This module holds the pass itself,
apart from the plugin's other extension points:

* rows whose claims only count devices (``Allocator.countable``) are grouped by claims list and
  settled at once against ``FreeCounts`` (``settle_counts``): too few free devices fails the row,
  enough passes it, and only an undecided row is searched;
* every other row is searched (``search``): the allocator's answer, one deadline per node
  (``filterTimeout``), nodes without slices sharing one answer per claims variant;
* the verdict is a failed mask and status ids into ``statuses`` (ids 0 and 1 are upstream's two
  fixed messages), and Score's rank sum for a ``firstAvailable`` request is taken where the
  allocation is at hand (``_rank_score``, upstream's ``computeScore``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from scheduler.cache import Snapshot
from scheduler.dra.allocator import AllocationError, FilterTimeoutError, Node, NodeAllocationError, SimplePlan
from scheduler.framework import interfaces as fwk
from scheduler.framework.status import Status
from scheduler.model.dra import AllocationResult, ResourceClaim
from scheduler.plugins.dynamicresources.counting import FreeCounts
from scheduler.plugins.dynamicresources.state import _State

__all__ = ["ERR_CANNOT_ALLOCATE", "ERR_NOT_AVAILABLE", "_NO_RESULTS", "_FilterPass"]

ERR_CANNOT_ALLOCATE = "cannot allocate all claims"
ERR_NOT_AVAILABLE = "resourceclaim not available on the node"
_NO_RESULTS: tuple[AllocationResult, ...] = ()


# Rows whose claims count, for one claims list: (plan, indices, claims, key, positions).
_CountingGroup = tuple[SimplePlan, Sequence[int], Sequence[ResourceClaim] | None, tuple[str, ...], list[int]]


class _FilterPass:
    """One Filter call over the candidate rows: the verdict it builds (``failed``, ``ids`` into
    ``statuses``; ids 0 and 1 are ``cannot allocate all claims`` and ``resourceclaim not
    available on the node``) and the allocations it keeps in the cycle state for Reserve (and
    Score's rank sums)."""

    __slots__ = ("counting", "failed", "ids", "infos", "names", "rows", "s", "statuses", "table", "timeout",
                 "unavailable", "without")

    def __init__(self, s: _State, snapshot: Snapshot, rows: fwk.Rows, unavailable: npt.NDArray[np.bool_],
                 timeout: float | None = None) -> None:
        n = len(rows)
        self.s = s
        self.timeout = timeout
        self.rows = rows
        self.table = snapshot.table
        self.unavailable = unavailable
        self.statuses: list[Status] = [Status.unresolvable(ERR_CANNOT_ALLOCATE),
                                       Status.unresolvable(ERR_NOT_AVAILABLE)]
        self.ids = np.zeros(n, np.int64)
        self.failed = np.zeros(n, np.bool_)
        self.names = snapshot.node_names(rows) if s.allocator is not None or s.extended >= 0 else []
        self.infos = snapshot.table.infos
        # Nodes no slice is for share one answer per variant of the claims (the extended claim's
        # requests differ with what the node advertises).
        self.without: dict[tuple[str, ...], Sequence[AllocationResult] | Status | None] = {}
        # Rows whose claims count (``Allocator.countable``), by claims list (``None``: the
        # allocator's own; a variant's list lives through the cycle): (plan, indices, claims,
        # key, positions), or None where the claims do not count.
        self.counting: dict[int, _CountingGroup | None] = {}

    def fail(self, k: int, status: Status) -> None:
        self.failed[k] = True
        self.ids[k] = len(self.statuses)
        self.statuses.append(status)

    def counting_group(self, indices: Sequence[int], claims: Sequence[ResourceClaim] | None,
                       key: tuple[str, ...]) -> _CountingGroup | None:
        """The counting group of ``claims`` (made on first use), or ``None`` when they do not count."""
        allocator = self.s.allocator
        assert allocator is not None
        plan = allocator.countable(claims)
        group = self.counting[id(claims)] = None if plan is None else (plan, indices, claims, key, [])
        return group

    def settle_counts(self, counts: FreeCounts) -> None:
        """Each counting group's rows at once: too few free devices fails the row, enough passes
        it (Reserve searches on the one it picks), and a row where counting does not decide is
        searched."""
        for group in self.counting.values():
            if group is None:
                continue
            plan, indices, claims, key, positions = group
            at = np.array(positions, np.int64)
            free = counts.rows(plan, self.table)[self.rows[at]]
            enough = free >= plan.count
            self.failed[at[~enough & (free >= 0)]] = True        # ids 0: cannot allocate all claims
            for k in at[free < 0].tolist():
                self.search(k, indices, claims, key)
            counted = (indices, claims)
            for k in at[enough & ~self.unavailable[at]].tolist():
                self.s.counted[self.names[k]] = counted

    def search(self, k: int, indices: Sequence[int], claims: Sequence[ResourceClaim] | None,
               key: tuple[str, ...]) -> None:
        """The allocator's answer for row ``k``, kept for Reserve."""
        s, allocator = self.s, self.s.allocator
        info = self.infos[self.rows[k]]
        assert info is not None
        node = Node(self.names[k], info.node.labels)
        # DynamicResourcesArgs.filterTimeout: each node's search has its own deadline
        deadline = time.monotonic() + self.timeout if self.timeout else None
        try:
            if not indices or allocator is None:
                got: Sequence[AllocationResult] | Status | None = _NO_RESULTS
            elif allocator.has_slices(node):
                got = allocator.allocate(node, claims, deadline)
            else:
                if key not in self.without:
                    self.without[key] = allocator.allocate_without_pools(claims, deadline)
                got = self.without[key]
        except FilterTimeoutError:
            # Error, not Unschedulable: a timeout may be transient, so the pod backs off rather
            # than wait for an event (kubernetes#137607, in 1.36); the node's name helps find
            # the slices that make the search slow.
            got = Status.as_error(FilterTimeoutError(f"node {node.name}: timed out trying to allocate devices"))
        except NodeAllocationError as e:
            # upstream's ErrFailedAllocationOnNode: only this node fails, with the text.
            got = Status.unresolvable(str(e))
        except AllocationError as e:
            # Anything else is wrong with the claim or class: an Error aborts the attempt
            # (dynamicresources.go Filter's ``statusError``), the pod retries with backoff.
            got = Status.as_error(e)
        if isinstance(got, Status):
            self.fail(k, got)
        elif got is None or len(got) != len(indices):
            self.failed[k] = True
            self.ids[k] = 0
        elif not self.unavailable[k]:
            s.node_indices[self.names[k]] = indices
            s.node_results[self.names[k]] = got
            if s.ranks:
                # Score's value for this node, taken here where the allocation is at hand.
                if s.scores is None:
                    s.scores = np.zeros(len(self.table.valid), np.int64)
                s.scores[self.rows[k]] = _rank_score(s.ranks, dict(zip(indices, got, strict=True)))


def _rank_score(ranks: Mapping[int, Mapping[str, int]], allocations: Mapping[int, AllocationResult]) -> int:
    """Upstream's ``computeScore`` for one node (as fixed by kubernetes#139017: only the claims
    allocated in this cycle): per claim, each ``request/subrequest`` its results name counts once,
    ``8 - i`` for the ``i``-th of the request's ``firstAvailable`` list."""
    score = 0
    for i, table in ranks.items():
        allocation = allocations.get(i)
        if allocation is not None:
            score += sum(table.get(name, 0) for name in {r.request for r in allocation.results})
    return score
