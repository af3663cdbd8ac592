"""Service validation, as ``ValidateService`` in upstream's ``pkg/apis/core/validation/validation.go``
checks a Service after ``SetDefaults_Service`` (``admission.default_service``) has filled in its
type, session affinity, protocols and target ports; the same checks run on create and on update
(``ValidateServiceUpdate`` calls ``ValidateService`` on the new object).

Covered: ports required unless headless or ExternalName; each port's name (required when there are
several, a DNS-1123 label, unique), number (1-65535), protocol, target port (a number or an
``IANA_SVC_NAME``) and ``appProtocol``; the kubelet's port 10250 refused on a LoadBalancer;
``clusterIP: None`` refused for NodePort and LoadBalancer; ExternalName's ``externalName``;
the selector as labels; the type and session affinity among upstream's values; node ports
forbidden on a ClusterIP Service and unique per protocol; and ports unique per (protocol, port),
reported as upstream reports them, the Go struct printed with ``%#v``. On update
(``validate_service_update``), the primary cluster IP may not change unless the Service is, or was,
an ExternalName (``validateUpgradeDowngradeClusterIPs``).
"""

from __future__ import annotations

import re
from typing import Any

from scheduler.simulator.registry.core.validation import (
    Cause,
    dns_label,
    dns_subdomain,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
    validate_labels,
)

__all__ = ["validate_service", "validate_service_update"]

Obj = dict[str, Any]

_PROTOCOLS = ("SCTP", "TCP", "UDP")
_TYPES = ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")
_AFFINITIES = ("ClientIP", "None")
_KUBELET_PORT = 10250                           # pkg/cluster/ports.KubeletPort
_PORT_RANGE = "must be between 1 and 65535, inclusive"
_PORT_NAME_CHARS = re.compile(r"^[-a-z0-9]+$")
_HAS_LETTER = re.compile(r"[a-z]")
_QUALIFIED = re.compile(r"^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$")


def _port_name_errors(name: str) -> list[str]:
    """apimachinery's ``IsValidPortName`` (an ``IANA_SVC_NAME``)."""
    errs = []
    if len(name) < 1 or len(name) > 15:
        errs.append("must be no more than 15 characters")
    if not _PORT_NAME_CHARS.match(name):
        errs.append("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
    if not _HAS_LETTER.search(name):
        errs.append("must contain at least one letter (a-z)")
    if "--" in name:
        errs.append("must not contain consecutive hyphens")
    if name.startswith("-") or name.endswith("-"):
        errs.append("must not begin or end with a hyphen")
    return errs


def _port_num(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _go_service_port(protocol: str, port: int) -> str:
    """The ``core.ServicePort{Protocol, Port}`` key of the duplicate check, as ``%#v`` prints it."""
    return (f'core.ServicePort{{Name:"", Protocol:"{protocol}", AppProtocol:(*string)(nil), Port:{port}, '
            'TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}')


def _service_port(sp: Obj, require_name: bool, names: set[str], at: str) -> list[Cause]:
    """``validateServicePort``."""
    out: list[Cause] = []
    name = sp.get("name") or ""
    if require_name and not name:
        out.append(required(f"{at}.name"))
    elif name:
        out += dns_label(str(name), f"{at}.name")
        if name in names:
            out.append(duplicate(f"{at}.name", name))
        names.add(str(name))
    port = _port_num(sp.get("port"))
    if not 1 <= port <= 65535:
        out.append(invalid(f"{at}.port", port, _PORT_RANGE))
    protocol = sp.get("protocol") or ""
    if not protocol:
        out.append(required(f"{at}.protocol"))
    elif protocol not in _PROTOCOLS:
        out.append(not_supported(f"{at}.protocol", protocol, _PROTOCOLS))
    target = sp.get("targetPort")
    if isinstance(target, str):
        out += [invalid(f"{at}.targetPort", target, msg) for msg in _port_name_errors(target)]
    elif not 1 <= _port_num(target) <= 65535:
        out.append(invalid(f"{at}.targetPort", _port_num(target), _PORT_RANGE))
    app = sp.get("appProtocol")
    if isinstance(app, str):
        # ValidateQualifiedName, its name part (a prefix before "/" is a DNS subdomain)
        prefix, _, bare = app.rpartition("/")
        if prefix:
            out += dns_subdomain(prefix, f"{at}.appProtocol")
        if not bare or len(bare) > 63 or not _QUALIFIED.match(bare):
            out.append(invalid(f"{at}.appProtocol", app, "name part must consist of alphanumeric characters, "
                               "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
                               "'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
                               "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"))
    return out


def validate_service(svc: Obj) -> list[Cause]:
    """``ValidateService``'s spec checks, on a defaulted Service."""
    spec = svc.get("spec") if isinstance(svc.get("spec"), dict) else {}
    assert isinstance(spec, dict)
    kind = spec.get("type") or ""
    ports = [p if isinstance(p, dict) else {} for p in spec.get("ports") or []]
    ips = spec.get("clusterIPs") or []
    headless = bool(ips) and ips[0] == "None"
    out: list[Cause] = []
    if not ports and not headless and kind != "ExternalName":
        out.append(required("spec.ports"))
    if kind == "LoadBalancer":
        if headless:
            out.append(invalid("spec.clusterIPs[0]", ips[0], "may not be set to 'None' for LoadBalancer services"))
        out += [invalid(f"spec.ports[{i}]", _KUBELET_PORT, f"may not expose port {_KUBELET_PORT} externally since "
                                                          "it is used by kubelet")
                for i, p in enumerate(ports) if p.get("port") == _KUBELET_PORT]
    elif kind == "NodePort" and headless:
        out.append(invalid("spec.clusterIPs[0]", ips[0], "may not be set to 'None' for NodePort services"))
    elif kind == "ExternalName":
        if ips:
            out.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        cname = str(spec.get("externalName") or "").removesuffix(".")
        out += dns_subdomain(cname, "spec.externalName") if cname else [required("spec.externalName")]
    names: set[str] = set()
    for i, p in enumerate(ports):
        out += _service_port(p, len(ports) > 1, names, f"spec.ports[{i}]")
    out += validate_labels(spec.get("selector"), "spec.selector")
    affinity = spec.get("sessionAffinity")
    if affinity is not None and affinity not in _AFFINITIES:
        out.append(not_supported("spec.sessionAffinity", affinity, _AFFINITIES))
    if not kind:
        out.append(required("spec.type"))
    elif kind not in _TYPES:
        out.append(not_supported("spec.type", kind, _TYPES))
    if kind == "ClusterIP":
        out += [forbidden(f"spec.ports[{i}].nodePort", "may not be used when `type` is 'ClusterIP'")
                for i, p in enumerate(ports) if _port_num(p.get("nodePort"))]
    node_ports: set[tuple[str, int]] = set()
    for i, p in enumerate(ports):
        if not (node_port := _port_num(p.get("nodePort"))):
            continue
        if (p.get("protocol"), node_port) in node_ports:
            out.append(duplicate(f"spec.ports[{i}].nodePort", node_port))
        node_ports.add((str(p.get("protocol")), node_port))
    seen: set[tuple[str, int]] = set()
    for i, p in enumerate(ports):
        key = (str(p.get("protocol") or ""), _port_num(p.get("port")))
        if key in seen:
            out.append((f"spec.ports[{i}]", "FieldValueDuplicate", f"Duplicate value: {_go_service_port(*key)}"))
        seen.add(key)
    return out


def validate_service_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidateServiceUpdate``: the primary cluster IP kept, then ``ValidateService``."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    out: list[Cause] = []
    if "ExternalName" not in (spec.get("type"), old_spec.get("type")):
        ips, old_ips = list(spec.get("clusterIPs") or []), list(old_spec.get("clusterIPs") or [])
        primary = spec.get("clusterIP") or (ips[0] if ips else "")
        if primary and ips:
            ips[0] = primary                 # the strategy's normalizeClusterIPs: clusterIP wins
        headless = old_ips[:1] == ["None"] and ips[:1] == ["None"]
        if old_ips and not headless and (not ips or ips[0] != old_ips[0]):
            shown = "[]string{" + ", ".join(f'"{ip}"' for ip in ips) + "}"
            detail = "may not change once set" if ips else "primary clusterIP can not be unset"
            out.append(("spec.clusterIPs[0]", "FieldValueInvalid", f"Invalid value: {shown}: {detail}"))
    return out + validate_service(new)
