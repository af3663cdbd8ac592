"""Services, ReplicationControllers, ReplicaSets and StatefulSets: the selectors that drive default
spreading (PodTopologySpread's ``defaultConstraints`` and ``System`` defaults, upstream's
``DefaultSelector``). Read only, and reduced by the service to their selectors."""

from typing import Any

import kopf


@kopf.on.event("v1", "services")
async def service_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_selector_owner("Service", event.get("type") or "ADDED", event["object"])


@kopf.on.event("v1", "replicationcontrollers")
async def replication_controller_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_selector_owner("ReplicationController", event.get("type") or "ADDED", event["object"])


@kopf.on.event("apps", "v1", "replicasets")
async def replica_set_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_selector_owner("ReplicaSet", event.get("type") or "ADDED", event["object"])


@kopf.on.event("apps", "v1", "statefulsets")
async def stateful_set_event(event: kopf.RawEvent, memo: kopf.Memo, **_: Any) -> None:
    memo.service.on_selector_owner("StatefulSet", event.get("type") or "ADDED", event["object"])
