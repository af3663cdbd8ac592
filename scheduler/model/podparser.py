"""``PodParser``: ``parse_pod`` with a memory of each pod's last parse, for status-only updates.

Most pod events change nothing the scheduler reads outside a handful of fields: after its ADDED,
a pod's next events are its Binding (``spec.nodeName`` and the ``PodScheduled`` condition) and
the kubelet's status writes (phase, conditions, container statuses). A full ``parse_pod`` walks
the containers, affinity, tolerations, volumes and node features every time (about 30 µs a pod
on the benchmark machine, twice a pod after its ADDED). This parser keeps, per pod uid, a digest
of every input ``parse_pod`` reads outside the status (the spec less ``nodeName``, and the
metadata it reads: namespace, name, uid, labels, owner references, deletion timestamp, the
explain annotation, creation timestamp) with the options, the node-feature registry in force
(``nodefeatures.active_registry``) and the ``Pod`` it gave. When an event's
digest and options match, and the requests cannot depend on the status
(``podresources.status_affects_requests`` is false now and was at the last parse: no in-place
resize in sight), the new ``Pod`` is the old one with only ``pod.status_fields`` read again, the
same helper ``parse_pod`` builds those fields with. Anything else, an input the digest cannot
encode (not JSON's), or an error on the short path, is a full ``parse_pod``, so the result is
always the ``Pod`` a full parse gives (tests/model/test_podparser.py checks it field by field).

The digest is a 16-byte BLAKE2b of orjson's encoding; the memory holds one entry per pod uid
until ``forget`` (the service calls it on DELETED): about 150 bytes a pod, no raw JSON.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from scheduler.model.nodefeatures import Feature, active_registry
from scheduler.model.pod import EXPLAIN_ANNOTATION, Pod, parse_pod, status_fields
from scheduler.model.podresources import DEFAULT_REQUEST_OPTIONS, RequestOptions, status_affects_requests

__all__ = ["PodParser"]

# The Pod's slots, for the copy with new status fields (``dataclasses.replace`` costs a third of
# a full parse: it validates and re-runs ``__init__`` through keyword arguments).
_SLOTS: tuple[str, ...] = Pod.__slots__
_set = object.__setattr__


class _Last(NamedTuple):
    digest: bytes
    options: RequestOptions
    registry: tuple[Feature, ...]      # the node-feature registry Pod.required_features was read against
    pod: Pod


def _digest(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> bytes:
    """Every input of ``parse_pod`` outside ``status`` and ``spec.nodeName``; raises
    ``TypeError`` (orjson's ``JSONEncodeError`` is one) for what JSON cannot hold."""
    if "nodeName" in spec:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    annotations = meta.get("annotations")
    explain = annotations.get(EXPLAIN_ANNOTATION) if isinstance(annotations, Mapping) else annotations
    raw = orjson.dumps((spec, meta.get("namespace"), meta.get("name"), meta.get("uid"), meta.get("labels"),
                        meta.get("ownerReferences"), meta.get("deletionTimestamp"), explain,
                        meta.get("creationTimestamp")))
    return hashlib.blake2b(raw, digest_size=16).digest()


def _with(pod: Pod, fields: Mapping[str, Any]) -> Pod:
    """A copy of ``pod`` with ``fields`` replaced (the Pod is frozen: set through ``object``)."""
    new = Pod.__new__(Pod)
    for name in _SLOTS:
        _set(new, name, getattr(pod, name))
    for name, value in fields.items():
        _set(new, name, value)
    return new


class PodParser:
    """Parse pod events (``parse`` raises ``ParseError`` as ``parse_pod`` does), reusing each pod's
    last parse when only its status and ``nodeName`` changed. ``hits`` counts the reuses."""

    def __init__(self) -> None:
        self._last: dict[str, _Last] = {}
        self.hits = 0

    def __len__(self) -> int:
        return len(self._last)

    def forget(self, uid: str) -> None:
        self._last.pop(uid, None)

    def parse(self, obj: Mapping[str, Any], options: RequestOptions = DEFAULT_REQUEST_OPTIONS) -> Pod:
        meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status") or {}
        if not isinstance(meta, dict) or not isinstance(spec, dict) or not isinstance(status, dict):
            return parse_pod(obj, options)          # a malformed pod: parse_pod says what is wrong
        uid = meta.get("uid") or f"{meta.get('namespace') or 'default'}/{meta.get('name') or ''}"
        try:
            digest = _digest(meta, spec)
        except TypeError:
            self._last.pop(uid, None)
            return parse_pod(obj, options)
        last = self._last.get(uid)
        registry = active_registry()
        if last is not None and last.digest == digest and last.options is options and last.registry is registry:
            try:
                if not status_affects_requests(spec, status, options):
                    pod = _with(last.pod, status_fields(spec, meta, status))
                    self._last[uid] = _Last(digest, options, registry, pod)
                    self.hits += 1
                    return pod
            except Exception:
                pass
        self._last.pop(uid, None)
        pod = parse_pod(obj, options)               # raises for a pod it cannot read: nothing kept
        if not status_affects_requests(spec, status, options):
            self._last[uid] = _Last(digest, options, registry, pod)
        return pod
