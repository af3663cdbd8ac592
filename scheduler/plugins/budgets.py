"""PodDisruptionBudgets as preemption spends them (``FilterPodsWithPDBViolation``): one helper that
the pod preemption (``defaultpreemption.py``) and the PodGroup preemption (``podgrouppreemption.py``,
which counts a unit's pods) share, so both read a budget the same way."""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.model import Pod, PodDisruptionBudget

__all__ = ["breaks_budget"]


def breaks_budget(p: Pod, pdbs: Sequence[PodDisruptionBudget], allowed: list[int]) -> bool:
    """Whether evicting ``p`` breaks one of ``pdbs``, counting it against each budget that protects
    it (``allowed``: the disruptions each budget still allows, spent in place, in eviction order).
    Unlabelled pods are checked too: a `selector: {}` budget protects them
    (kubernetes/kubernetes#141785, which dropped 1.37's len(pod.Labels) shortcut)."""
    violated = False
    for i, b in enumerate(pdbs):
        if not b.protects(p.namespace, p.labels) or p.name in b.disrupted_pods:
            continue
        allowed[i] -= 1
        if allowed[i] < 0:
            violated = True
    return violated
