"""LIST (``endpoints/handlers/get.go``'s ``ListResource``): label and field selectors, ``limit`` and
``continue`` pages served from the snapshot of the first page (410 once compacted past it),
``resourceVersionMatch=Exact``, a wait for a resourceVersion the store has not reached, and Tables.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

import orjson
from aiohttp import web

from scheduler.simulator import tables, transform
from scheduler.simulator.apierrors import ApiError, bad_request
from scheduler.simulator.handlers import base
from scheduler.simulator.handlers.base import (
    CONTINUE_EXPIRED,
    HandlerBase,
    Request,
    _dumps,
    too_large_resource_version,
)
from scheduler.simulator.resources import ResourceType
from scheduler.simulator.selectors import SelectorError, field_matcher, label_matcher
from scheduler.simulator.store import external

__all__ = ["ListHandler"]

Obj = dict[str, Any]


class ListHandler(HandlerBase):
    """GET of a collection, and the selectors and resourceVersions every read parses."""

    def _matchers(self, request: Request, rt: ResourceType, name: str = "") -> Callable[[Obj], bool] | None:
        q = request.query
        try:
            lm = label_matcher(q.get("labelSelector"))
            fsel = q.get("fieldSelector") or ""
            if name:
                fsel = f"metadata.name={name}" + (f",{fsel}" if fsel else "")
            fm = field_matcher(fsel, rt.field_labels, rt.kind)
        except SelectorError as e:
            raise bad_request(str(e)) from None
        if rt.to_external is not None and fm is not None:
            fm_ext, conv = fm, rt.to_external
            fm = lambda o: fm_ext(conv(o))  # noqa: E731
        if lm and fm:
            return lambda o: lm(o) and fm(o)
        return lm or fm

    def list(self, request: Request, rt: ResourceType, namespace: str | None, limit: int = 0) -> web.Response:
        q = request.query
        match = self._matchers(request, rt)
        rv = self.store.rv
        source: Any
        if q.get("resourceVersion") not in (None, "", "0") and q.get("resourceVersionMatch") == "Exact":
            rv = self._parse_rv(q["resourceVersion"])
            source = self._source_at(rt, namespace, rv)
        else:
            source = self.store.bucket(rt.store).items(namespace)
        start: tuple[str, ...] | None = None
        if q.get("continue"):
            start, token_rv = _parse_continue(q["continue"], rv)
            if token_rv >= 0:
                # A continued list is the snapshot of its first page, as etcd serves it at that revision;
                # once compacted past it, 410 with a token that goes on at the latest state instead.
                state = self.store.list_at(rt, token_rv)
                if state is None:
                    fresh = base64.urlsafe_b64encode(_dumps({"rv": -1, "start": list(start)})).decode()
                    raise ApiError(410, "Expired", CONTINUE_EXPIRED, list_meta={"continue": fresh})
                source = (o for (ns, _), o in state.items() if namespace is None or ns == namespace)
                rv = token_rv
        objs = [o for o in source if match is None or match(o)]
        objs.sort(key=lambda o: (o["metadata"].get("namespace", ""), o["metadata"]["name"]))
        meta: Obj = {"resourceVersion": str(rv)}
        if start is not None:
            objs = [o for o in objs if (o["metadata"].get("namespace", ""), o["metadata"]["name"]) > start]
        if limit > 0 and len(objs) > limit:
            last = objs[limit - 1]["metadata"]
            meta["continue"] = base64.urlsafe_b64encode(_dumps({"rv": rv, "start": [last.get("namespace", ""),
                                                                                     last["name"]]})).decode()
            meta["remainingItemCount"] = len(objs) - limit
            objs = objs[:limit]
        items = [external(rt, o) for o in objs]
        if (target := transform.metadata_target(request.headers.get("Accept", ""))) is not None:
            if target[0] != transform.PARTIAL_LIST:
                raise transform.not_acceptable(rt, target[0])
            return self.respond(200, transform.partial_list(items, meta, target[1]))
        if "as=Table" in request.headers.get("Accept", ""):
            return self.respond(200, tables.table(rt, items, meta, q.get("includeObject", "PartialObjectMetadata")))
        return self.respond(200, {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta,
                                  "items": items})

    def _source_at(self, rt: ResourceType, namespace: str | None, want: int) -> Any:
        """``resourceVersionMatch=Exact``: the objects as they were at ``want``, or 410 once compacted."""
        state = self.store.list_at(rt, want)
        if state is None:
            oldest = self.store.bucket(rt.store).compacted
            raise ApiError(410, "Expired", f"too old resource version: {want} ({oldest})")
        return (o for (ns, _), o in state.items() if namespace is None or ns == namespace)

    async def _wait_fresh(self, raw_rv: str | None) -> None:
        """A read at a resourceVersion the store has not reached: wait up to ``FRESH_WAIT`` for it, as the
        watch cache does (``waitUntilFreshAndBlock``), then answer 504 Too large resource version."""
        if raw_rv in (None, "", "0"):
            return
        want = self._parse_rv(raw_rv)
        if want > self.store.rv and not await self.store.wait_for_rv(want, base.FRESH_WAIT):
            raise too_large_resource_version(want, self.store.rv)

    @staticmethod
    def _parse_rv(text: str) -> int:
        """``ParseResourceVersion``: an unsigned 64-bit decimal (no sign, no spaces), or 400."""
        if text.isascii() and text.isdigit() and len(text) <= 20 and int(text) < 2**64:
            return int(text)
        raise bad_request(f'resourceVersion: Invalid value: "{text}": must be a non-negative integer')


def _parse_continue(token: str, rv: int) -> tuple[tuple[str, ...], int]:
    """A ``continue`` token: the (namespace, name) the next page starts after, and the snapshot's
    resourceVersion (-1: the latest state); 400 for a token this server did not write."""
    try:
        decoded = orjson.loads(base64.urlsafe_b64decode(token))
        start = tuple(decoded["start"])
        token_rv = int(decoded.get("rv", rv))
        if len(start) != 2 or not all(isinstance(part, str) for part in start):
            raise ValueError("start must be a namespace and a name")    # compared with str tuples
    except Exception:
        raise bad_request("continue key is not valid: illegal base64 data") from None
    return start, token_rv
