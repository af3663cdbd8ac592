"""Metadata-only answers: ``Accept: application/json;as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1``,
as apiserver's ``endpoints/handlers/response.go`` transforms a response (``asPartialObjectMetadata``,
``asPartialObjectMetadataList``) for client-go's metadata client and metadata informers (the garbage
collector's, ``kubectl get --show-kind``'s relatives).

The ``Accept`` clauses are tried by ``q``, then as written (``metadata_target``). Protobuf is not
served, so its clauses are passed over (the metadata client sends protobuf first, then JSON). A JSON
clause without ``as`` is the object itself; ``as=Table`` is ``tables.py``'s; ``as=`` anything else, or
another group or version than ``meta.k8s.io`` ``v1``/``v1beta1``, is a clause the server cannot meet
and the next one is tried.

A get answers a ``PartialObjectMetadata`` (kind, apiVersion ``meta.k8s.io/VERSION``, the whole
``metadata``); a list a ``PartialObjectMetadataList`` keeping the list's resourceVersion, continue token
and remaining count, each item a ``PartialObjectMetadata``; a watch, events whose objects are
``PartialObjectMetadata``. Asking a list for ``PartialObjectMetadata`` or an object for the list form is
upstream's 406 ``NotAcceptable``.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.resources import ResourceType

__all__ = ["PARTIAL", "PARTIAL_LIST", "metadata_target", "not_acceptable", "partial", "partial_list"]

Obj = dict[str, Any]

PARTIAL, PARTIAL_LIST = "PartialObjectMetadata", "PartialObjectMetadataList"
_META_VERSIONS = ("v1", "v1beta1")
_JSON_TYPES = ("application/json", "application/*", "*/*")


def metadata_target(accept: str) -> tuple[str, str] | None:
    """(``PartialObjectMetadata`` or ``PartialObjectMetadataList``, the meta.k8s.io version) when the
    first clause this server can meet asks for one; None for the object itself (or a Table)."""
    if "PartialObjectMetadata" not in accept:          # the common case, without parsing
        return None
    clauses = []
    for i, raw in enumerate(accept.split(",")):
        media, *params = (part.strip() for part in raw.split(";"))
        opts = {k.strip(): v.strip() for k, _, v in (p.partition("=") for p in params)}
        try:
            q = float(opts.get("q", "1"))
        except ValueError:
            q = 0.0
        clauses.append((-q, i, media.lower(), opts))
    for neg_q, _, media, opts in sorted(clauses, key=lambda c: (c[0], c[1])):
        if neg_q >= 0 or media not in _JSON_TYPES:
            continue
        kind = opts.get("as")
        if kind is None:
            return None
        if opts.get("g") != "meta.k8s.io" or opts.get("v") not in _META_VERSIONS:
            continue
        if kind == "Table":
            return None
        if kind in (PARTIAL, PARTIAL_LIST):
            return kind, opts["v"]
    return None


def partial(obj: Obj, version: str) -> Obj:
    """``meta.AsPartialObjectMetadata`` of an object (its external form), kind and version set."""
    return {"kind": PARTIAL, "apiVersion": f"meta.k8s.io/{version}", "metadata": obj.get("metadata") or {}}


def partial_list(items: list[Obj], meta: Obj, version: str) -> Obj:
    return {"kind": PARTIAL_LIST, "apiVersion": f"meta.k8s.io/{version}", "metadata": meta,
            "items": [partial(o, version) for o in items]}


def _go_type(rt: ResourceType, suffix: str = "") -> str:
    """The ``%T`` of the object upstream would have transformed: its internal Go type."""
    if rt.crd_name:
        return f"*unstructured.Unstructured{'List' if suffix else ''}"
    package = {"": "core", "events.k8s.io": "core"}.get(rt.group, rt.group.split(".")[0])
    return f"*{package}.{rt.kind}{suffix}"


def not_acceptable(rt: ResourceType, asked: str) -> ApiError:
    """The 406 for the wrong form: ``PartialObjectMetadata`` of a list, or the list form of an object."""
    if asked == PARTIAL:
        why = f"you requested {PARTIAL}, but the requested object is a list ({_go_type(rt, 'List')})"
    else:
        why = f"you requested {PARTIAL_LIST}, but the requested object is not a list ({_go_type(rt)})"
    return ApiError(406, "NotAcceptable", why)
