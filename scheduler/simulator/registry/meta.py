"""ObjectMeta rules every kind shares (``apimachinery/pkg/api/validation/objectmeta.go``): the name
rules (a DNS-1123 subdomain, a label, a DNS-1035 label or a path segment, by kind), the annotations'
total size, and the timestamps the server stamps (``now_iso``).
"""

from __future__ import annotations

import re
import time
from typing import Any

from scheduler.simulator.apierrors import invalid
from scheduler.simulator.params import path_segment_errors

__all__ = ["DNS1035_MSG", "LABEL_MSG", "QUANTITY_RE", "SUBDOMAIN_MSG", "iso_after", "now_iso", "validate_annotations",
           "validate_name"]

Obj = dict[str, Any]

QUANTITY_RE = "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                 "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                 "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
             "start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
             "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
_DNS1035 = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
               "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")
# apimachinery's TotalAnnotationSizeLimitB: all annotation keys and values together, in bytes.
TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024


def validate_annotations(kind: str, obj: Obj, group: str = "") -> None:
    """``ValidateAnnotations``' size check, on every kind (CRs too): kube-apiserver refuses an object
    whose annotations exceed 262,144 bytes, as client-side ``kubectl apply`` of a big object finds."""
    annotations = (obj.get("metadata") or {}).get("annotations") or {}
    if not isinstance(annotations, dict):
        return
    size = sum(len(str(k).encode()) + len(str(v).encode()) for k, v in annotations.items())
    if size > TOTAL_ANNOTATION_SIZE_LIMIT:
        raise invalid(kind, str((obj.get("metadata") or {}).get("name", "")), [(
            "metadata.annotations", "FieldValueTooLong",
            f"Too long: may not be more than {TOTAL_ANNOTATION_SIZE_LIMIT} bytes")], group)


# Which of apimachinery's name rules a kind's ValidateObjectMeta uses (the rest: a DNS-1123 subdomain).
_LABEL_NAMED = frozenset({"/namespaces"})                       # ValidateNamespaceName
_DNS1035_NAMED = frozenset({"/services"})                       # ValidateServiceName
_PATH_SEGMENT_GROUPS = frozenset({"rbac.authorization.k8s.io"})     # ValidateRBACName


def validate_name(kind: str, name: str, *, store: str = "", group: str = "") -> None:
    """metadata.name by the kind's rule, with ValidateObjectMeta's causes."""
    if not name:
        raise invalid(kind, name, [("metadata.name", "FieldValueRequired",
                                    "Required value: name or generateName is required")], group)
    if group in _PATH_SEGMENT_GROUPS:
        msgs = path_segment_errors(name)
    elif store in _DNS1035_NAMED:
        msgs = [] if _DNS1035.match(name) else [DNS1035_MSG]
        if len(name) > 63:
            msgs.insert(0, "must be no more than 63 characters")
    else:
        pattern, msg, limit = (_LABEL, LABEL_MSG, 63) if store in _LABEL_NAMED else (_SUBDOMAIN, SUBDOMAIN_MSG, 253)
        msgs = [] if pattern.match(name) else [msg]
        if len(name) > limit:
            msgs.insert(0, f"must be no more than {limit} characters")
    if msgs:
        raise invalid(kind, name, [("metadata.name", "FieldValueInvalid", f'Invalid value: "{name}": {m}')
                                   for m in msgs], group)


_NOW: list[Any] = [0, ""]


def iso_after(seconds: int) -> str:
    """The API's RFC 3339 seconds ``seconds`` from now (a deletionTimestamp: now plus the grace period)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(time.time()) + seconds))


def now_iso() -> str:
    """The current time as the API's RFC 3339 seconds, formatted once per second."""
    t = int(time.time())
    if t != _NOW[0]:
        _NOW[0], _NOW[1] = t, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    return str(_NOW[1])
