"""``PodParser``: ``parse_pod`` that reuses an earlier parse when only the status (or the pod's
own name and uid) can differ.

Most pod events change nothing the scheduler reads outside a handful of fields: after its ADDED,
a pod's next events are its Binding (``spec.nodeName`` and the ``PodScheduled`` condition) and
the kubelet's status writes (phase, conditions, container statuses); and the ADDED of a pod made
from a template (a ReplicaSet's, a DaemonSet's, a benchmark's) differs from its siblings' only in
name, uid and creation time. A full ``parse_pod`` walks the containers, affinity, tolerations,
volumes and node features every time (about 30 µs a pod on the benchmark machine).

This parser digests every input ``parse_pod`` reads outside the status, ``spec.nodeName`` and the
pod's name, uid and creation timestamp: the rest of the spec, and the namespace, labels, owner
references, deletion timestamp and explain annotation. It keeps, with the request options, the
node-feature registry in force (``nodefeatures.active_registry``) and the ``Pod`` parsed, the
entry per pod uid (until ``forget``: the service calls it on DELETED) and per digest (the last
``TEMPLATES`` digests, least recently used out). An event whose digest, options and registry
match the pod's own entry (same name), else a template's, and whose requests cannot depend on
the status (``podresources.status_affects_requests`` is false: no in-place resize in sight; an
entry is only kept under the same condition), is the entry's ``Pod`` with ``pod.status_fields``
read again (the helper ``parse_pod`` builds those fields with) and this pod's name and uid.
Anything else, an input the digest cannot encode (not JSON's), or an error on the short path, is
a full ``parse_pod``, so the result is always the ``Pod`` a full parse gives
(tests/model/test_podparser.py checks it field by field).

The digest is a 16-byte BLAKE2b of orjson's encoding: about 150 bytes a pod, no raw JSON kept.
Reused Pods share their immutable parts (the requests, selectors, tolerations), as every value a
parse makes is read-only.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, NamedTuple

import orjson

from scheduler.model.nodefeatures import Feature, active_registry
from scheduler.model.pod import EXPLAIN_ANNOTATION, Pod, copy_with, parse_pod, status_fields
from scheduler.model.podresources import DEFAULT_REQUEST_OPTIONS, RequestOptions, status_affects_requests

__all__ = ["PodParser"]

# How many pod templates (distinct digests) the parser remembers for new pods, least recently
# used first out: a workload's few templates, a cluster's Deployments and DaemonSets in flight.
TEMPLATES = 256


class _Last(NamedTuple):
    digest: bytes
    options: RequestOptions
    registry: tuple[Feature, ...]      # the node-feature registry Pod.required_features was read against
    pod: Pod


def _digest(meta: Mapping[str, Any], spec: Mapping[str, Any]) -> bytes:
    """Every input of ``parse_pod`` outside ``status``, ``spec.nodeName`` and the pod's own name,
    uid and creation timestamp (the fields a pod's siblings from one template differ in); raises
    ``TypeError`` (orjson's ``JSONEncodeError`` is one) for what JSON cannot hold."""
    if "nodeName" in spec:
        spec = {k: v for k, v in spec.items() if k != "nodeName"}
    annotations = meta.get("annotations")
    explain = annotations.get(EXPLAIN_ANNOTATION) if isinstance(annotations, Mapping) else annotations
    raw = orjson.dumps((spec, meta.get("namespace"), meta.get("labels"), meta.get("ownerReferences"),
                        meta.get("deletionTimestamp"), explain))
    return hashlib.blake2b(raw, digest_size=16).digest()


class PodParser:
    """Parse pod events (``parse`` raises ``ParseError`` as ``parse_pod`` does), reusing the
    earlier parse of the same pod (only its status and ``nodeName`` changed) or of a sibling from
    the same template (only its name, uid and status differ). ``hits`` counts the reuses."""

    def __init__(self, templates: int = TEMPLATES) -> None:
        self._last: dict[str, _Last] = {}
        self._templates: OrderedDict[bytes, _Last] = OrderedDict()
        self._max_templates = templates
        self.hits = 0

    def __len__(self) -> int:
        return len(self._last)

    def forget(self, uid: str) -> None:
        self._last.pop(uid, None)

    def parse(self, obj: Mapping[str, Any], options: RequestOptions = DEFAULT_REQUEST_OPTIONS) -> Pod:
        meta, spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status") or {}
        if not isinstance(meta, dict) or not isinstance(spec, dict) or not isinstance(status, dict):
            return parse_pod(obj, options)          # a malformed pod: parse_pod says what is wrong
        name = meta.get("name") or ""
        uid = meta.get("uid") or f"{meta.get('namespace') or 'default'}/{name}"
        last = self._last.pop(uid, None)
        try:
            digest = _digest(meta, spec)
            reusable = not status_affects_requests(spec, status, options)
        except Exception:
            return parse_pod(obj, options)          # not JSON's, or a bad status: parse_pod reports it
        registry = active_registry()
        if reusable:
            pod = self._reuse(last, digest, options, registry, uid, name, spec, meta, status)
            if pod is not None:
                self._last[uid] = _Last(digest, options, registry, pod)
                self.hits += 1
                return pod
        pod = parse_pod(obj, options)               # raises for a pod it cannot read: nothing kept
        if reusable:
            entry = self._last[uid] = _Last(digest, options, registry, pod)
            self._templates[digest] = entry
            self._templates.move_to_end(digest)
            while len(self._templates) > self._max_templates:
                self._templates.popitem(last=False)
        return pod

    def _reuse(self, last: _Last | None, digest: bytes, options: RequestOptions, registry: tuple[Feature, ...],
               uid: str, name: str, spec: Mapping[str, Any], meta: Mapping[str, Any], status: Mapping[str, Any]
               ) -> Pod | None:
        """The pod's own last parse (``last``), else its template's, with this event's status
        fields (and name and uid): None when neither matches or a status field cannot be read."""
        if last is None or last.digest != digest or last.pod.name != name:
            last = self._templates.get(digest)
            if last is None:
                return None
            self._templates.move_to_end(digest)
        if last.options is not options or last.registry is not registry:
            return None
        try:
            fields = status_fields(spec, meta, status)
        except Exception:
            return None
        fields["name"] = name
        fields["uid"] = uid
        return copy_with(last.pod, fields)
