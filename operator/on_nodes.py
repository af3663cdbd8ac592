"""Namespace events into the cache (the namespace selectors of inter-pod affinity read them).

Nodes are not here: at 15,000 nodes they are not a low-rate kind, so the runtime's own node
informer on the worker's loop serves them (``scheduler/app/runtime.py`` says why).
"""

from typing import Any

import kopf


@kopf.on.event("v1", "namespaces")
async def namespace_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_namespace(event.get("type") or "ADDED", event["object"])
