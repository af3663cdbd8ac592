"""Node and namespace events into the cache; node changes requeue the pods they may help."""

from typing import Any

import kopf


@kopf.on.event("v1", "nodes")
async def node_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    # An unreadable node keeps its last readable state; the runtime logs it, posts a Warning Event
    # on it and counts it in kopf_scheduler_unreadable_objects{kind="Node"}.
    memo.runtime.node_event(event.get("type") or "ADDED", event["object"])


@kopf.on.event("v1", "namespaces")
async def namespace_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_namespace(event.get("type") or "ADDED", event["object"])
