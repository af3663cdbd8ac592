"""The scheduling.k8s.io group's strategy: PriorityClasses (``pkg/apis/scheduling/validation``), and the
two system classes every cluster has.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator.apierrors import invalid

__all__ = ["HIGHEST_USER_PRIORITY", "SYSTEM_CLASSES", "validate_priority_class"]

Obj = dict[str, Any]

HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


def validate_priority_class(pc: Obj, others: list[Obj]) -> None:
    name = pc.get("metadata", {}).get("name", "")
    value = pc.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid("PriorityClass", name, [("value", "FieldValueRequired", "Required value")],
                      "scheduling.k8s.io")
    if name not in SYSTEM_CLASSES and value > HIGHEST_USER_PRIORITY:
        raise invalid("PriorityClass", name, [("value", "FieldValueForbidden",
                                               f"Forbidden: maximum allowed value of a user defined priority is "
                                               f"{HIGHEST_USER_PRIORITY}")], "scheduling.k8s.io")
    if pc.get("globalDefault"):
        for o in others:
            if o.get("globalDefault") and o["metadata"]["name"] != name:
                raise invalid("PriorityClass", name, [("globalDefault", "FieldValueInvalid",
                                                       f"Invalid value: true: globalDefault {o['metadata']['name']} "
                                                       "already exists")], "scheduling.k8s.io")
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")
