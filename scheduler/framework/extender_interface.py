"""The ``Extender`` Protocol and the results its verbs return: upstream's ``fwk.Extender``
(``k8s.io/kube-scheduler/framework/extender.go``) and extenderv1's ``ExtenderFilterResult`` and
``Victims`` (``k8s.io/kube-scheduler/extender/v1/types.go``).

``extender`` (which runs the extenders in a cycle, and re-exports these names) and ``interfaces``
(whose ``PostFilterContext`` carries a profile's extenders) both import this module; it imports
neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from scheduler.model import Node, Pod

__all__ = ["Extender", "ExtenderFilterResult", "Victims"]


@dataclass(frozen=True, slots=True)
class ExtenderFilterResult:
    """What a filter call returned (``ExtenderFilterResult``, its nodes resolved to names)."""

    nodes: tuple[str, ...]                                   # the nodes it kept, in its order
    failed: Mapping[str, str] = field(default_factory=dict)  # FailedNodes: node → reason
    failed_and_unresolvable: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Victims:
    """``extenderv1.Victims``: the pods preemption would remove from a node (most important
    first) and how many PodDisruptionBudgets that breaks."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int = 0


class Extender(Protocol):
    """One configured extender (upstream's ``fwk.Extender``). ``filter``, ``prioritize`` and
    ``process_preemption`` block (for at most the configured timeout) and raise on any failure;
    ``bind`` is a coroutine. The verbs it was not configured with are never called."""

    @property
    def name(self) -> str:
        """Its ``urlPrefix``, as upstream names an extender."""
        ...

    @property
    def config(self) -> object:
        """Its configuration, comparable with ``==`` (a shadow profile reuses the live search only
        when both run the same extenders)."""
        ...

    @property
    def weight(self) -> int: ...

    def is_ignorable(self) -> bool: ...

    def is_filter(self) -> bool: ...

    def is_prioritizer(self) -> bool: ...

    def is_binder(self) -> bool: ...

    def supports_preemption(self) -> bool: ...

    def is_interested(self, pod: Pod) -> bool:
        """Whether the pod requests one of its ``managedResources`` (always, with none)."""
        ...

    def filter(self, pod: Pod, nodes: Sequence[Node]) -> ExtenderFilterResult:
        """The nodes it keeps of ``nodes`` (by name), and why it failed the others."""
        ...

    def prioritize(self, pod: Pod, nodes: Sequence[Node]) -> tuple[list[tuple[str, int]], int]:
        """``(host, score)`` pairs, and the weight to apply to them."""
        ...

    async def bind(self, pod: Pod, node: str) -> None: ...

    def process_preemption(self, pod: Pod, victims: Mapping[str, Victims],
                           pods_on: Callable[[str], Mapping[str, Pod] | None]) -> dict[str, Victims]:
        """The candidates it accepts, with their victims. ``pods_on(node)`` is the node's pods by
        uid (``None``: no such node), to resolve the victims it names by uid."""
        ...
