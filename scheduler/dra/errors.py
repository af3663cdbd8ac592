"""The allocator's exceptions: what ``Allocate`` returns as an error upstream (``AllocationError``
and its kinds: the attempt aborts, only this node fails, or the per-node deadline passed), and the
search's internal signal that a claim would exceed ``AllocationResultsMaxSize``.
"""

from __future__ import annotations


class AllocationError(ValueError):
    """A problem with the claims, classes or selectors themselves (upstream's non-nil error from
    ``Allocate``): the scheduler aborts the attempt and reports it, rather than trying other nodes."""


class CELSelectorError(AllocationError):
    """A selector that does not compile, or fails at run time, on some device."""


class NodeAllocationError(AllocationError):
    """An error that concerns only the node (upstream's ``ErrFailedAllocationOnNode``): the node is
    unschedulable with this text."""


class FilterTimeoutError(AllocationError):
    """The search ran past its deadline (upstream's ``Allocate`` with a context whose deadline is
    exceeded: DynamicResourcesArgs.filterTimeout per node)."""


class _MaxSizeExceeded(Exception):
    pass
