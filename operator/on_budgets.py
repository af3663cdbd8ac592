"""PodDisruptionBudget events: the budgets preemption tries not to break (read only)."""

from typing import Any

import kopf


@kopf.on.event("policy", "v1", "poddisruptionbudgets")
async def pdb_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_pdb(event.get("type") or "ADDED", event["object"])
