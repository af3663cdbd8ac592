"""Pod events into the queue (unassigned pods of our profiles) and the cache (every assigned pod).

``on.event`` only: nothing is written to pods from here. Kopf reports the initial listing with
``type=None``; it is an ADDED to us.
"""

from typing import Any

import kopf


@kopf.on.event("v1", "pods")
async def pod_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.runtime.pod_event(event.get("type") or "ADDED", event["object"])
