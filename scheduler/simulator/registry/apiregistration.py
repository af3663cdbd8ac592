"""The apiregistration.k8s.io group's strategy: APIServices, as the kube-aggregator stores them.

Defaulting (``apiregistration/v1/defaults.go``: a service reference's port is 443) and validation
(``kube-aggregator/pkg/apis/apiregistration/validation/validation.go``: the name is
``spec.version + "." + spec.group``, the group a DNS subdomain, the version a DNS-1035 label, the
priorities in range, a service reference complete, a local APIService without a CA bundle). Nothing
proxies to the referenced service, and no availability controller writes ``status.conditions``: an
APIService is stored, listed, watched and deleted, which is what clients that register one need.
"""

from __future__ import annotations

import re
from typing import Any

from scheduler.simulator.apierrors import invalid as invalid_error
from scheduler.simulator.registry.core.validation import Cause, dns_subdomain, invalid, required

__all__ = ["GROUP", "STORE", "admit_api_service"]

Obj = dict[str, Any]

GROUP = "apiregistration.k8s.io"
STORE = f"{GROUP}/apiservices"
_DNS1035_LABEL = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")
# utilvalidation.IsDNS1035Label's message (RegexError with its two examples).
DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
               "alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', "
               "regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def admit_api_service(obj: Obj) -> None:
    """Default and validate an APIService (create and update alike, as ValidateAPIServiceUpdate adds only
    the metadata checks every kind gets)."""
    spec = obj.get("spec")
    if isinstance(spec, dict) and isinstance(spec.get("service"), dict):
        spec["service"].setdefault("port", 443)
    causes = validate_api_service(obj)
    if causes:
        raise invalid_error("APIService", str((obj.get("metadata") or {}).get("name") or ""), causes, GROUP)


def _name_errors(name: str, required_name: str) -> list[str]:
    """path.IsValidPathSegmentName, then the name that ``spec`` requires."""
    if name in (".", ".."):
        return [f"may not be '{name}'"]
    bad = [f"may not contain '{c}'" for c in ("/", "%") if c in name]
    if bad:
        return bad
    return [] if name == required_name else [f'must be `spec.version+"."+spec.group`: "{required_name}"']


def validate_api_service(obj: Obj) -> list[Cause]:
    spec = obj.get("spec") if isinstance(obj.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    group, version = str(spec.get("group") or ""), str(spec.get("version") or "")
    name = str((obj.get("metadata") or {}).get("name") or "")
    out = [invalid("metadata.name", name, e) for e in _name_errors(name, f"{version}.{group}")]
    if not group and version != "v1":
        out.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        out += dns_subdomain(group, "spec.group")
    if len(version) > 63:
        out.append(invalid("spec.version", version, "must be no more than 63 characters"))
    if not _DNS1035_LABEL.match(version):
        out.append(invalid("spec.version", version, DNS1035_MSG))
    group_min, version_priority = spec.get("groupPriorityMinimum") or 0, spec.get("versionPriority") or 0
    if not 0 < group_min <= 20000:
        out.append(invalid("spec.groupPriorityMinimum", group_min, "must be positive and less than 20000"))
    if not 0 < version_priority <= 1000:
        out.append(invalid("spec.versionPriority", version_priority, "must be positive and less than 1000"))
    ca_bundle, skip_verify = str(spec.get("caBundle") or ""), bool(spec.get("insecureSkipTLSVerify"))
    service = spec.get("service")
    if not isinstance(service, dict):
        if ca_bundle:
            # the bytes the base64 text decodes to
            out.append(invalid("spec.caBundle", f"{len(ca_bundle) * 3 // 4 - ca_bundle.count('=')} bytes",
                               "local APIServices may not have a caBundle"))
        if skip_verify:
            out.append(invalid("spec.insecureSkipTLSVerify", True,
                               "local APIServices may not have insecureSkipTLSVerify"))
        return out
    if not service.get("namespace"):
        out.append(required("spec.service.namespace"))
    if not service.get("name"):
        out.append(required("spec.service.name"))
    port = service.get("port")
    if not isinstance(port, int) or not 0 < port <= 65535:
        out.append(invalid("spec.service.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    if skip_verify and ca_bundle:
        out.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return out
