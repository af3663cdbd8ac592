"""scheduler_perf's sizes: a workload's ``params`` (``Size``), which the workload families
(``dynamicresources.py``) and the drivers read, kept apart from ``workloads.py`` so that the
families can name it without importing the workloads that import them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Size"]


@dataclass(frozen=True)
class Size:
    """upstream's ``params``: ``nodes`` (``initNodes``), ``init_pods`` (all init pods together),
    ``pods`` (``measurePods``); ``init_namespaces`` (``initNamespaces``: the init pods are split over
    that many labelled namespaces), ``gated_pods`` (``gatedPods``) and ``resource_slices``
    (``resourceSlices``) where a workload has them."""

    nodes: int
    init_pods: int
    pods: int
    init_namespaces: int = 0
    gated_pods: int = 0
    resource_slices: int = 0

    @property
    def key(self) -> tuple[int, int, int]:
        """What the JSON reports, and what a threshold is looked up by."""
        return (self.nodes, self.init_pods, self.pods)
