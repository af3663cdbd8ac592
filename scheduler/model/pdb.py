"""PodDisruptionBudgets as preemption reads them (upstream's ``filterPodsWithPDBViolation``).

Only three things matter to the scheduler: the namespace, the selector, and the status the
disruption controller keeps (``disruptionsAllowed`` and ``disruptedPods``). A policy/v1 budget
whose selector is empty (``{}``) protects every pod of its namespace, unlabelled ones included
(kubernetes/kubernetes#141785, fixed in 1.38: 1.37 read it as protecting nothing). A nil selector
protects nothing; so does one that cannot be parsed, which ``parse_pdb`` reports in ``problem``
instead of raising, so one broken budget never blocks preemption for the whole cluster.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.selectors import LabelSelector, parse_label_selector

__all__ = ["PodDisruptionBudget", "parse_pdb"]


@dataclass(frozen=True, slots=True)
class PodDisruptionBudget:
    namespace: str
    name: str
    selector: LabelSelector | None
    disruptions_allowed: int = 0
    disrupted_pods: frozenset[str] = frozenset()
    problem: str = ""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def protects(self, namespace: str, labels: Mapping[str, str]) -> bool:
        """Same namespace and a selector that matches: ``{}`` matches every pod, nil none
        (``LabelSelectorAsSelector``; kubernetes/kubernetes#141785)."""
        if self.selector is None or namespace != self.namespace:
            return False
        return self.selector.matches(labels)


def parse_pdb(obj: Mapping[str, Any]) -> PodDisruptionBudget:
    meta = obj.get("metadata") or {}
    ns = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    spec = obj.get("spec") or {}
    status = obj.get("status") or {}
    problem = ""
    selector: LabelSelector | None = None
    raw = spec.get("selector")
    if raw is not None:
        try:
            selector = parse_label_selector(raw, "spec.selector")
        except ParseError as e:
            problem = f"PodDisruptionBudget {ns}/{name}: {e}; it protects no pod"
    allowed = status.get("disruptionsAllowed", 0)
    if not isinstance(allowed, int) or isinstance(allowed, bool):
        problem = problem or f"PodDisruptionBudget {ns}/{name}: status.disruptionsAllowed must be an integer"
        allowed = 0
    disrupted = status.get("disruptedPods") or {}
    return PodDisruptionBudget(ns, name, selector, allowed,
                               frozenset(disrupted) if isinstance(disrupted, Mapping) else frozenset(), problem)
