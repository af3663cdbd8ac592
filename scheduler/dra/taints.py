"""Device taints: whether a request tolerates a device's taints.

**Matching** (``tolerates``, upstream's ``resourceclaim.ToleratesTaint``, a copy of core/v1's
``Toleration.ToleratesTaint``): a toleration with an effect matches only that effect, with a key
only that key; operator ``Exists`` matches any value, ``Equal`` (or empty) the same value, any
other operator nothing. ``prevents_allocation`` is the allocator's ``taintPreventsAllocation``
(``structured/internal/incubating/allocator_incubating.go``): a device is not given to a request
when one of its taints with effect ``NoSchedule`` or ``NoExecute`` is tolerated by none of the
request's tolerations; ``None`` and unknown effects never prevent it. The search calls it at the one
place a device is accepted, after "in use" and before the claim's constraints, as upstream's
``allocateDevice`` does (``search._Run._allocate_device``; the fast path filters its candidates
with it: ``simple_plan``).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler.model.devicetaints import EFFECT_NO_EXECUTE, EFFECT_NO_SCHEDULE, DeviceTaint, DeviceToleration

__all__ = ["prevents_allocation", "tolerates"]

_BLOCKING = frozenset({EFFECT_NO_SCHEDULE, EFFECT_NO_EXECUTE})


def tolerates(toleration: DeviceToleration, taint: DeviceTaint) -> bool:
    """``resourceclaim.ToleratesTaint``."""
    if toleration.effect and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator in ("", "Equal"):
        return toleration.value == taint.value
    return toleration.operator == "Exists"


def prevents_allocation(taints: Sequence[DeviceTaint], tolerations: Sequence[DeviceToleration]) -> bool:
    """``taintPreventsAllocation``: some NoSchedule or NoExecute taint no toleration tolerates."""
    return any(taint.effect in _BLOCKING and not any(tolerates(t, taint) for t in tolerations)
               for taint in taints)
