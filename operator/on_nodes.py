"""Node and namespace events into the cache; node changes requeue the pods they may help."""

import logging
from typing import Any

import kopf

from scheduler.errors import ParseError

log = logging.getLogger("kopf_scheduler")


@kopf.on.event("v1", "nodes")
async def node_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    try:
        memo.service.on_node(event.get("type") or "ADDED", event["object"])
    except ParseError as e:
        log.warning("node %s cannot be read, ignoring it: %s", event["object"]["metadata"].get("name"), e)


@kopf.on.event("v1", "namespaces")
async def namespace_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_namespace(event.get("type") or "ADDED", event["object"])
