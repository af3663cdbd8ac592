"""Validation as kube-apiserver's ``pkg/apis/*/validation`` does it, for what a scheduler touches.

Each function returns upstream's ``field.ErrorList`` as (field, reason, detail) causes for
``admission.invalid`` (a 422 whose message and ``details.causes`` match kube-apiserver's), or raises
the ``ApiError`` kube-apiserver answers where it does not answer 422. The messages are upstream's
``field.Error`` renderings: ``Invalid value: "x": ...`` (strings quoted, numbers bare, structs as
JSON), ``Unsupported value: "x": supported values: "a", "b"``, ``Duplicate value: ...``,
``Required value``, ``Forbidden: ...``.

Covered (the fields the scheduler reads, and the bodies the scheduler writes):

- pods (``ValidatePodCreate``/``ValidatePodSpec``): metadata labels; containers (required, names as
  DNS-1123 labels and unique across init and app containers, image required, ports); ``nodeSelector``
  as labels; ``nodeName``; tolerations (``validateTolerations``); affinity (node selector terms,
  pod (anti-)affinity terms with their ``topologyKey`` and selectors, weights);
  ``topologySpreadConstraints``; scheduling gates; ``resourceClaims`` (``validatePodResourceClaims``) and
  the containers' ``resources.claims`` that name them (``validateResourceClaimNames``);
- pod updates: tolerations may only be added (``validateOnlyAddedTolerations``); ``schedulingGroup``
  is immutable (and on create a union naming its PodGroup by a DNS subdomain);
- pod status: ``nominatedNodeName`` is a node name, ``resourceClaimStatuses`` name the pod's claims
  (``ValidatePodStatusUpdate``);
- nodes: labels and taints (``validateNodeTaints``: key, value, effect, unique by key and effect);
- bindings (``BindingREST.Create``, ``ValidatePodBinding``);
- events.k8s.io/v1 Events (``ValidateEventCreate``, strict for the new API) and core/v1 Events
  (its legacy rules);
- Leases (``ValidateLeaseSpec``).

Wrong JSON types never reach these functions: ``typecheck.check_types`` answers them first with the
decoder's 400, as kube-apiserver decodes before it validates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from scheduler.model.selectors import label_key_errors, label_value_errors, requirement_errors
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.registry.meta import LABEL_MSG, SUBDOMAIN_MSG

__all__ = ["Cause", "dns_label", "not_found", "too_long", "too_many", "validate_binding", "validate_event",
           "validate_labels", "validate_lease", "validate_node", "validate_pod", "validate_pod_status",
           "validate_pod_update"]

Obj = dict[str, Any]
Cause = tuple[str, str, str]

_DNS1123_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_TAINT_EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
_PROTOCOLS = ("SCTP", "TCP", "UDP")
_WHEN_UNSATISFIABLE = ("DoNotSchedule", "ScheduleAnyway")
_INCLUSION_POLICIES = ("Honor", "Ignore")
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
NOT_POSITIVE = "must be greater than zero"
# pkg/apis/core/validation: the events' length limits.
REPORTING_INSTANCE_LIMIT = 128
ACTION_LIMIT = 128
REASON_LIMIT = 128
NOTE_LIMIT = 1024


# --- field.Error's renderings -----------------------------------------------------------------------

def _go_json(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _shown(value: object) -> str:
    """How ``field.Error`` shows a bad value: a string quoted (``%q``), a number or bool bare, ``null``
    for nothing, anything else as JSON."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    return _go_json(value)


def invalid(path: str, value: object, detail: str) -> Cause:
    return path, "FieldValueInvalid", f"Invalid value: {_shown(value)}: {detail}"


def required(path: str, detail: str = "") -> Cause:
    return path, "FieldValueRequired", "Required value" + (f": {detail}" if detail else "")


def not_supported(path: str, value: object, supported: Iterable[str]) -> Cause:
    return path, "FieldValueNotSupported", (f"Unsupported value: {_shown(value)}: supported values: "
                                            + ", ".join(json.dumps(s) for s in supported))


def duplicate(path: str, value: object, detail: str = "") -> Cause:
    return path, "FieldValueDuplicate", f"Duplicate value: {_shown(value)}" + (f": {detail}" if detail else "")


def forbidden(path: str, detail: str) -> Cause:
    return path, "FieldValueForbidden", f"Forbidden: {detail}"


def too_many(path: str, actual: int, limit: int) -> Cause:
    """``field.TooMany``."""
    return path, "FieldValueTooMany", f"Too many: {actual}: must have at most {limit} items"


def too_long(path: str, limit: int) -> Cause:
    """``field.TooLong`` (the value is not shown)."""
    return path, "FieldValueTooLong", f"Too long: may not be more than {limit} bytes"


def not_found(path: str, value: object, detail: str = "") -> Cause:
    """``field.NotFound``."""
    return path, "FieldValueNotFound", f"Not found: {_shown(value)}" + (f": {detail}" if detail else "")


def dns_label(value: str, path: str) -> list[Cause]:
    """``ValidateDNS1123Label``."""
    out = []
    if len(value) > 63:
        out.append(invalid(path, value, "must be no more than 63 characters"))
    if not _DNS1123_LABEL.match(value):
        out.append(invalid(path, value, LABEL_MSG))
    return out


# --- the shared checks ------------------------------------------------------------------------------

def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def validate_labels(labels: Any, path: str) -> list[Cause]:
    """``ValidateLabels``: each key a qualified name, each value a label value, both reported at the map."""
    out: list[Cause] = []
    if not isinstance(labels, Mapping):
        return out
    for k, v in labels.items():
        out += [invalid(path, k, msg) for msg in label_key_errors(str(k))]
        out += [invalid(path, v, msg) for msg in label_value_errors(_str(v))]
    return out


def _label_name(value: str, path: str) -> list[Cause]:
    """``ValidateLabelName``: a qualified name, reported at ``path``."""
    return [invalid(path, value, msg) for msg in label_key_errors(value)]


def _node_name_errors(name: str) -> list[str]:
    """``ValidateNodeName`` (``NameIsDNSSubdomain``)."""
    errs = []
    if len(name) > 253:
        errs.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(name):
        errs.append(SUBDOMAIN_MSG)
    return errs


def required_and(value: str, path: str, check: Callable[[str, str], list[Cause]]) -> list[Cause]:
    """Required, and once given, ``check``ed."""
    return [required(path)] if not value else check(value, path)


def dns_subdomain(value: str, path: str) -> list[Cause]:
    """``ValidateDNS1123Subdomain``: at most 253 characters, a DNS subdomain."""
    return [invalid(path, value, msg) for msg in _node_name_errors(value)]


def _label_selector(raw: Any, path: str) -> list[Cause]:
    """``ValidateLabelSelector``: ``matchLabels`` as labels, each expression's operator and values."""
    out: list[Cause] = []
    if not isinstance(raw, Mapping):
        return out
    out += validate_labels(raw.get("matchLabels"), f"{path}.matchLabels")
    for i, e in enumerate(raw.get("matchExpressions") or []):
        at = f"{path}.matchExpressions[{i}]"
        op, values = _str(e.get("operator")), e.get("values") or []
        if op in ("In", "NotIn"):
            if not values:
                out.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif op in ("Exists", "DoesNotExist"):
            if values:
                out.append(forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or "
                                                     "'DoesNotExist'"))
        else:
            out.append(invalid(f"{at}.operator", op, "not a valid selector operator"))
        out += _label_name(_str(e.get("key")), f"{at}.key")
        for v in values:
            out += [invalid(f"{at}.values", v, msg) for msg in label_value_errors(_str(v))]
    return out


# --- pods -------------------------------------------------------------------------------------------

def _containers(spec: Obj) -> list[Cause]:
    out: list[Cause] = []
    containers = spec.get("containers")
    if not containers:
        out.append(required("spec.containers"))
    names: set[str] = set()
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            at = f"spec.{group}[{i}]"
            name = _str(c.get("name"))
            if not name:
                out.append(required(f"{at}.name"))
            else:
                if len(name) > 63 or not _DNS1123_LABEL.match(name):
                    out.append(invalid(f"{at}.name", name, LABEL_MSG))
                if name in names:
                    out.append(duplicate(f"{at}.name", name))
                names.add(name)
            if not c.get("image"):
                out.append(required(f"{at}.image"))
            if c.get("ports"):
                out += _ports(c["ports"], at)
        if group == "initContainers":
            # They run one by one, so each is checked alone (and upstream names each one index 0).
            for c in spec.get(group) or []:
                out += _host_port_conflicts([c], f"spec.{group}")
        else:
            out += _host_port_conflicts(spec.get(group) or [], f"spec.{group}")
    return out


def _ports(ports: list[Any], at: str) -> list[Cause]:
    """A container's ports: container and host port in range, a known protocol."""
    out: list[Cause] = []
    for j, p in enumerate(ports):
        pat = f"{at}.ports[{j}]"
        cp = p.get("containerPort")
        if not isinstance(cp, int) or not 1 <= cp <= 65535:
            out.append(invalid(f"{pat}.containerPort", cp if cp is not None else 0,
                               "must be between 1 and 65535, inclusive"))
        hp = p.get("hostPort")
        if hp not in (None, 0) and (not isinstance(hp, int) or not 1 <= hp <= 65535):
            out.append(invalid(f"{pat}.hostPort", hp, "must be between 1 and 65535, inclusive"))
        proto = p.get("protocol")
        if proto is None:
            out.append(required(f"{pat}.protocol"))
        elif proto not in _PROTOCOLS:
            out.append(not_supported(f"{pat}.protocol", proto, _PROTOCOLS))
    return out


def _host_port_conflicts(containers: list[Any], path: str) -> list[Cause]:
    """``AccumulateUniqueHostPorts`` (pkg/apis/core/validation/validation.go): a host port is taken
    once per protocol and host IP. Ports that share a ``containerPort`` are fine: only the
    ``protocol/hostIP/hostPort`` triple must be unique (``Duplicate value: "TCP/10.0.0.1/8080"``)."""
    out: list[Cause] = []
    seen: set[str] = set()
    for ci, c in enumerate(containers):
        ports = c.get("ports") if isinstance(c, dict) else None
        for pi, p in enumerate(ports if isinstance(ports, list) else []):
            hp = p.get("hostPort") if isinstance(p, dict) else None
            if not isinstance(hp, int) or isinstance(hp, bool) or hp == 0:
                continue
            key = f"{_str(p.get('protocol'))}/{_str(p.get('hostIP'))}/{hp}"
            if key in seen:
                out.append(duplicate(f"{path}[{ci}].ports[{pi}].hostPort", key))
            seen.add(key)
    return out


def _tolerations(tolerations: Any, path: str) -> list[Cause]:
    """``validateTolerations``."""
    out: list[Cause] = []
    for i, t in enumerate(tolerations or []):
        at = f"{path}[{i}]"
        key, op, value, effect = _str(t.get("key")), _str(t.get("operator")), _str(t.get("value")), \
            _str(t.get("effect"))
        if key:
            out += _label_name(key, f"{at}.key")
        if not key and op != "Exists":
            out.append(invalid(f"{at}.operator", op, 'operator must be Exists when `key` is empty, which means '
                                                     '"match all values and all keys"'))
        if t.get("tolerationSeconds") is not None and effect != "NoExecute":
            out.append(invalid(f"{at}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
        if op in ("Equal", ""):
            errs = label_value_errors(value)
            if errs:
                out.append(invalid(f"{at}.operator", value, ";".join(errs)))
        elif op == "Exists":
            if value:
                out.append(invalid(f"{at}.operator", {k: v for k, v in t.items() if v not in (None, "")},
                                   "value must be empty when `operator` is 'Exists'"))
        else:
            out.append(not_supported(f"{at}.operator", op, ("Equal", "Exists")))
        if effect and effect not in _TAINT_EFFECTS:
            out.append(not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
    return out


def _node_selector_term(term: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    if not isinstance(term, Mapping):
        return out
    for i, r in enumerate(term.get("matchExpressions") or []):
        at = f"{path}.matchExpressions[{i}]"
        op = _str(r.get("operator"))
        if op not in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"):
            out.append(not_supported(f"{at}.operator", op,
                                     ("DoesNotExist", "Exists", "Gt", "In", "Lt", "NotIn")))
            continue
        for e in requirement_errors(_str(r.get("key")), op, r.get("values")):
            out.append((f"{at}.{e.path}" if e.path else at, "FieldValueInvalid", e.problem))
    for i, r in enumerate(term.get("matchFields") or []):
        at = f"{path}.matchFields[{i}]"
        if _str(r.get("key")) != "metadata.name":
            out.append(invalid(f"{at}.key", _str(r.get("key")), "not a valid field selector key"))
        if _str(r.get("operator")) not in ("In", "NotIn"):
            out.append(not_supported(f"{at}.operator", _str(r.get("operator")), ("In", "NotIn")))
        elif len(r.get("values") or []) != 1:
            out.append(required(f"{at}.values", "must be only one value when `operator` is 'In' or 'NotIn' for "
                                                "node field selector"))
    return out


def _pod_affinity_term(term: Any, path: str) -> list[Cause]:
    """``validatePodAffinityTerm``: an empty ``topologyKey`` is Required *and* not a label name."""
    out: list[Cause] = []
    if not isinstance(term, Mapping):
        return out
    out += _label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    out += _label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for ns in term.get("namespaces") or []:
        if len(_str(ns)) > 63 or not _DNS1123_LABEL.match(_str(ns)):
            out.append(invalid(f"{path}.namespace", ns, LABEL_MSG))
    key = _str(term.get("topologyKey"))
    if not key:
        out.append(required(f"{path}.topologyKey", "can not be empty"))
    out += _label_name(key, f"{path}.topologyKey")
    return out


def _weight(raw: Any, path: str) -> list[Cause]:
    w = raw.get("weight") if isinstance(raw, Mapping) else None
    if not isinstance(w, int) or not 1 <= w <= 100:
        return [invalid(f"{path}.weight", w if w is not None else 0, "must be in the range 1-100")]
    return []


def _affinity(affinity: Any) -> list[Cause]:
    out: list[Cause] = []
    if not isinstance(affinity, Mapping):
        return out
    na = affinity.get("nodeAffinity") or {}
    at = "spec.affinity.nodeAffinity"
    req = na.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(req, Mapping):
        terms = req.get("nodeSelectorTerms") or []
        if not terms:
            out.append(required(f"{at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms",
                                "must have at least one node selector term"))
        for i, t in enumerate(terms):
            out += _node_selector_term(
                t, f"{at}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[{i}]")
    for i, p in enumerate(na.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
        pat = f"{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
        out += _weight(p, pat)
        out += _node_selector_term(p.get("preference"), f"{pat}.preference")
    for kind in ("podAffinity", "podAntiAffinity"):
        a = affinity.get(kind) or {}
        at = f"spec.affinity.{kind}"
        for i, t in enumerate(a.get("requiredDuringSchedulingIgnoredDuringExecution") or []):
            out += _pod_affinity_term(t, f"{at}.requiredDuringSchedulingIgnoredDuringExecution[{i}]")
        for i, w in enumerate(a.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
            pat = f"{at}.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
            out += _weight(w, pat)
            out += _pod_affinity_term(w.get("podAffinityTerm"), f"{pat}.podAffinityTerm")
    return out


def _spread(constraints: Any) -> list[Cause]:
    """``validateTopologySpreadConstraints``."""
    out: list[Cause] = []
    seen: set[tuple[str, str]] = set()
    for i, c in enumerate(constraints or []):
        at = f"spec.topologySpreadConstraints[{i}]"
        skew = c.get("maxSkew")
        if not isinstance(skew, int) or skew <= 0:
            out.append(invalid(f"{at}.maxSkew", skew if skew is not None else 0, NOT_POSITIVE))
        key = _str(c.get("topologyKey"))
        if not key:
            out.append(required(f"{at}.topologyKey", "can not be empty"))
        when = _str(c.get("whenUnsatisfiable"))
        if when not in _WHEN_UNSATISFIABLE:
            out.append(not_supported(f"{at}.whenUnsatisfiable", when, _WHEN_UNSATISFIABLE))
        if (key, when) in seen:
            out.append(duplicate(f"{at}.{{topologyKey, whenUnsatisfiable}}", f"{{{key}, {when}}}"))
        seen.add((key, when))
        min_domains = c.get("minDomains")
        if min_domains is not None:
            if not isinstance(min_domains, int) or min_domains <= 0:
                out.append(invalid(f"{at}.minDomains", min_domains, NOT_POSITIVE))
            if when != "DoNotSchedule":
                out.append(invalid(f"{at}.minDomains", min_domains,
                                   f"can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {when}"))
        for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
            value = c.get(policy)
            if value is not None and value not in _INCLUSION_POLICIES:
                out.append(not_supported(f"{at}.{policy}", value, _INCLUSION_POLICIES))
        for j, k in enumerate(c.get("matchLabelKeys") or []):
            out += _label_name(_str(k), f"{at}.matchLabelKeys[{j}]")
        out += _label_selector(c.get("labelSelector"), f"{at}.labelSelector")
    return out


def _claim_name_errors(name: str) -> list[str]:
    """``ValidateResourceClaimName`` (``NameIsDNSSubdomain``)."""
    return _node_name_errors(name)


def _pod_resource_claims(pod: Obj) -> list[Cause]:
    """``validatePodResourceClaims``: each entry a unique DNS-label name with exactly one of
    ``resourceClaimName`` and ``resourceClaimTemplateName``; a template's claim name
    ``<pod>-<name>`` must be a valid claim name too."""
    out: list[Cause] = []
    names: set[str] = set()
    pod_name = _str((pod.get("metadata") or {}).get("name"))
    for i, c in enumerate((pod.get("spec") or {}).get("resourceClaims") or []):
        at = f"spec.resourceClaims[{i}]"
        c = c if isinstance(c, Mapping) else {}
        name = _str(c.get("name"))
        if not name:
            out.append(required(f"{at}.name"))
        elif name in names:
            out.append(duplicate(f"{at}.name", name))
        else:
            errs = dns_label(name, f"{at}.name")
            out += errs
            if not errs and pod_name and c.get("resourceClaimTemplateName") is not None:
                final = f"{pod_name}-{name}"
                out += [invalid(f"{at}.name", final, "final ResourceClaim name: " + m)
                        for m in _claim_name_errors(final)]
            names.add(name)
        out += _pod_claim_source(c, at)
    return out


def _pod_claim_source(c: Mapping[str, Any], at: str) -> list[Cause]:
    """Exactly one of ``resourceClaimName`` and ``resourceClaimTemplateName``, each a valid name."""
    out: list[Cause] = []
    shown = {k: c[k] for k in ("name", "resourceClaimName", "resourceClaimTemplateName") if k in c}
    has_claim, has_template = c.get("resourceClaimName") is not None, c.get("resourceClaimTemplateName") is not None
    if has_claim and has_template:
        out.append(invalid(at, shown, "at most one of `resourceClaimName` or `resourceClaimTemplateName` may be "
                                      "specified"))
    if not has_claim and not has_template:
        out.append(invalid(at, shown, "must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"))
    for f in ("resourceClaimName", "resourceClaimTemplateName"):
        if c.get(f) is not None:
            out += [invalid(f"{at}.{f}", c[f], m) for m in _claim_name_errors(_str(c[f]))]
    return out


def _container_claims(spec: Obj) -> list[Cause]:
    """``validateResourceClaimNames``: a container's ``resources.claims`` name entries of
    ``spec.resourceClaims`` (with an optional request), each once."""
    pod_claims = sorted({_str(c.get("name")) for c in spec.get("resourceClaims") or []
                         if isinstance(c, Mapping) and c.get("name")})
    out: list[Cause] = []
    for group in ("initContainers", "containers"):
        for i, ctr in enumerate(spec.get(group) or []):
            path = f"spec.{group}[{i}].resources.claims"
            seen: set[str] = set()
            for j, claim in enumerate(((ctr.get("resources") or {}).get("claims")) or []):
                at = f"{path}[{j}]"
                claim = claim if isinstance(claim, Mapping) else {}
                name = _str(claim.get("name"))
                if not name:
                    out.append(required(at))
                    continue
                key = name
                if claim.get("request"):
                    out += dns_label(_str(claim["request"]), f"{at}.request")
                    key += "/" + _str(claim["request"])
                if key in seen:
                    out.append(duplicate(at, key))
                seen.add(key)
                if name not in pod_claims:
                    detail = ("must be one of the names in pod.spec.resourceClaims: " + ", ".join(pod_claims)
                              if pod_claims else "must be one of the names in pod.spec.resourceClaims which is empty")
                    out.append(not_found(at, name, detail))
    return out


def validate_pod(pod: Obj) -> list[Cause]:
    """``ValidatePodCreate``'s checks on the fields above, in upstream's order."""
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    out = validate_labels(meta.get("labels"), "metadata.labels")
    out += _pod_resource_claims(pod)
    out += _containers(spec)
    out += _container_claims(spec)
    out += validate_labels(spec.get("nodeSelector"), "spec.nodeSelector")
    node_name = _str(spec.get("nodeName"))
    if node_name:
        out += [invalid("spec.nodeName", node_name, msg) for msg in _node_name_errors(node_name)]
    out += _tolerations(spec.get("tolerations"), "spec.tolerations")
    out += _affinity(spec.get("affinity"))
    out += _spread(spec.get("topologySpreadConstraints"))
    gates: set[str] = set()
    for i, g in enumerate(spec.get("schedulingGates") or []):
        name = _str(g.get("name"))
        out += _label_name(name, f"spec.schedulingGates[{i}].name")
        if name in gates:
            out.append(duplicate(f"spec.schedulingGates[{i}].name", name))
        gates.add(name)
    out += _scheduling_group(spec.get("schedulingGroup"))
    return out


def _scheduling_group(group: Any) -> list[Cause]:
    """``PodSchedulingGroup`` (core/v1 types.go): a union of one member, ``podGroupName``, a DNS
    subdomain. Present only with the ``GenericWorkload`` gate (the strategy drops it otherwise)."""
    if group is None:
        return []
    name = group.get("podGroupName") if isinstance(group, Mapping) else None
    if name is None:
        return [invalid("spec.schedulingGroup", "", "must specify one of: `podGroupName`")]
    return required_and(_str(name), "spec.schedulingGroup.podGroupName", dns_subdomain)


def validate_pod_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidatePodUpdate``'s label and toleration rules: an existing toleration may change only its
    ``tolerationSeconds``, and none may be removed (``validateOnlyAddedTolerations``)."""
    out = validate_labels((new.get("metadata") or {}).get("labels"), "metadata.labels")
    new_t = list((new.get("spec") or {}).get("tolerations") or [])
    for o in (old.get("spec") or {}).get("tolerations") or []:
        if not any({**o, "tolerationSeconds": n.get("tolerationSeconds")} == {**n, "tolerationSeconds":
                   n.get("tolerationSeconds")} for n in new_t):
            out.append(forbidden("spec.tolerations", "existing toleration can not be modified except its "
                                                     "tolerationSeconds"))
            return out
    out += _tolerations(new_t, "spec.tolerations")
    group, old_group = (new.get("spec") or {}).get("schedulingGroup"), (old.get("spec") or {}).get("schedulingGroup")
    if group != old_group:      # +k8s:immutable on PodSpec.SchedulingGroup
        out.append(invalid("spec.schedulingGroup", group, "field is immutable"))
    return out


def validate_pod_status(pod: Obj) -> list[Cause]:
    """``ValidatePodStatusUpdate``: a nominated node must be a valid node name; each
    ``resourceClaimStatuses`` entry names an entry of ``spec.resourceClaims``, once
    (``validatePodResourceClaimStatuses``), and a valid claim name."""
    status = pod.get("status") or {}
    out: list[Cause] = []
    nominated = _str(status.get("nominatedNodeName"))
    if nominated:
        out += [invalid("status.nominatedNodeName", nominated, msg) for msg in _node_name_errors(nominated)]
    pod_claims = {_str(c.get("name")) for c in (pod.get("spec") or {}).get("resourceClaims") or []
                  if isinstance(c, Mapping)}
    seen: set[str] = set()
    for i, st in enumerate(status.get("resourceClaimStatuses") or []):
        at = f"status.resourceClaimStatuses[{i}]"
        st = st if isinstance(st, Mapping) else {}
        name = _str(st.get("name"))
        if name not in pod_claims:
            out.append(invalid(f"{at}.name", name, "must match the name of an entry in `spec.resourceClaims`"))
        if name in seen:
            out.append(duplicate(f"{at}.name", name))
        seen.add(name)
        if st.get("resourceClaimName") is not None:
            claim = _str(st["resourceClaimName"])
            out += [invalid(f"{at}.name", claim, m) for m in _claim_name_errors(claim)]
    return out


# --- nodes ------------------------------------------------------------------------------------------

# validateNodeDeclaredFeatureName: UpperCamelCase segments separated by '/', at most 253 characters.
_DECLARED_FEATURE = re.compile(r"^[A-Z][a-zA-Z0-9]*(/[a-zA-Z][a-zA-Z0-9]*)*$")
_DECLARED_FEATURE_MSG = ("must start with an UpperCamelCase segment, with subsequent segments separated by '/' "
                         "(e.g., MyFeature or MyFeature/mySubFeature), and contain only alphanumeric characters "
                         "and slashes")


def validate_declared_features(raw: object, path: str = "status.declaredFeatures") -> list[Cause]:
    """``validateNodeDeclaredFeatures``: every name valid, the list sorted, no name twice."""
    if raw is None:
        return []
    if not isinstance(raw, list):
        return [invalid(path, raw, "must be a list of strings")]
    out: list[Cause] = []
    for i, name in enumerate(raw):
        if not isinstance(name, str):
            out.append(invalid(f"{path}[{i}]", name, "must be a string"))
            continue
        if len(name) > 253:
            out.append(invalid(f"{path}[{i}]", name, f"invalid feature name {json.dumps(name)}: "
                                                     "must be no more than 253 characters"))
        elif not _DECLARED_FEATURE.match(name):
            out.append(invalid(f"{path}[{i}]", name, f"invalid feature name {json.dumps(name)}: "
                                                     f"{_DECLARED_FEATURE_MSG}"))
        if i + 1 < len(raw) and isinstance(raw[i + 1], str):
            if raw[i + 1] == name:
                out.append(duplicate(f"{path}[{i + 1}]", name))
            elif raw[i + 1] < name:
                out.append(invalid(f"{path}[{i + 1}]", raw[i + 1], "list must be sorted alphabetically"))
    return out


def validate_node(node: Obj) -> list[Cause]:
    """``ValidateNode``'s labels, ``validateNodeTaints`` and ``validateNodeDeclaredFeatures``."""
    out = validate_labels((node.get("metadata") or {}).get("labels"), "metadata.labels")
    out += validate_declared_features((node.get("status") or {}).get("declaredFeatures"))
    unique: dict[str, set[str]] = {}
    for i, t in enumerate((node.get("spec") or {}).get("taints") or []):
        at = f"spec.taints[{i}]"
        key, value, effect = _str(t.get("key")), _str(t.get("value")), _str(t.get("effect"))
        out += _label_name(key, f"{at}.key")
        errs = label_value_errors(value)
        if errs:
            out.append(invalid(f"{at}.value", value, ";".join(errs)))
        if not effect:
            out.append(required(f"{at}.effect"))
        elif effect not in _TAINT_EFFECTS:
            out.append(not_supported(f"{at}.effect", effect, _TAINT_EFFECTS))
        if key in unique.get(effect, ()):
            shown = {"key": key, **({"value": value} if value else {}), "effect": effect}
            out.append(duplicate(at, shown, "taints must be unique by key and effect pair"))
            continue
        unique.setdefault(effect, set()).add(key)
    return out


# --- bindings, events, leases -----------------------------------------------------------------------

def validate_binding(url_name: str, binding: Obj) -> list[Cause]:
    """``BindingREST.Create``: 400 when the body names another pod; then ``ValidatePodBinding``.

    Upstream returns ``ValidatePodBinding``'s errors as a bare aggregate, which kube-apiserver turns
    into a 500; the causes here are answered as a 422 instead (never a 500, never accepted)."""
    if _str((binding.get("metadata") or {}).get("name")) != url_name:
        raise ApiError(400, "BadRequest", "name in URL does not match name in Binding object")
    target = binding.get("target") or {}
    out: list[Cause] = []
    kind = _str(target.get("kind"))
    if kind and kind != "Node":
        out.append(not_supported("target.kind", kind, ("Node", "<empty>")))
    if not _str(target.get("name")):
        out.append(required("target.name"))
    return out


def validate_event(event: Obj, group: str, namespace: str) -> list[Cause]:
    """``ValidateEventCreate`` of an event created in ``namespace``: the legacy rules for core/v1, strict
    ones for events.k8s.io/v1 (whose ``note`` is the internal type's ``message``)."""
    out: list[Cause] = []
    ns = namespace
    new_api = group == "events.k8s.io"
    message = event.get("note" if new_api else "message")
    regarding = event.get("regarding" if new_api else "involvedObject") or {}
    if new_api:
        controller, instance = event.get("reportingController"), event.get("reportingInstance")
    else:
        controller, instance = event.get("reportingComponent"), event.get("reportingInstance")
    controller_field = "reportingController" if new_api else "reportingComponent"
    if not event.get("eventTime"):
        involved_ns = _str(regarding.get("namespace"))
        if (not involved_ns and ns not in ("", "default")) or (involved_ns and ns != involved_ns):
            out.append(invalid("involvedObject.namespace", involved_ns, "does not match event.namespace"))
    else:
        if not _str(regarding.get("namespace")) and ns not in ("default", "kube-system"):
            out.append(invalid("involvedObject.namespace", _str(regarding.get("namespace")),
                               "does not match event.namespace"))
        out += _event_reporting(event, controller_field, controller, instance, message)
    if not _DNS1123_SUBDOMAIN.match(ns):
        out.append(invalid("namespace", ns, SUBDOMAIN_MSG))
    if not new_api:
        return out
    return out + _events_v1(event)


def _event_reporting(event: Obj, controller_field: str, controller: Any, instance: Any, message: Any) -> list[Cause]:
    """An event with an eventTime: who reported it, the action and reason (each required, each bounded),
    and the note's length."""
    out: list[Cause] = []
    if not _str(controller):
        out.append(required(controller_field))
    out += [invalid(controller_field, _str(controller), m) for m in label_key_errors(_str(controller))]
    for field, value, limit in (("reportingInstance", instance, REPORTING_INSTANCE_LIMIT),
                                ("action", event.get("action"), ACTION_LIMIT),
                                ("reason", event.get("reason"), REASON_LIMIT)):
        if not _str(value):
            out.append(required(field))
        if len(_str(value)) > limit:
            out.append(invalid(field, "", f"can have at most {limit} characters"))
    if len(_str(message)) > NOTE_LIMIT:
        out.append(invalid("message", "", f"can have at most {NOTE_LIMIT} characters"))
    return out


def _events_v1(event: Obj) -> list[Cause]:
    """events.k8s.io/v1's stricter rules: a series, an eventTime, a type, and no deprecated fields."""
    out: list[Cause] = []
    series = event.get("series")
    if isinstance(series, Mapping):
        count = series.get("count")
        if not isinstance(count, int) or count < 2:
            out.append(invalid("series.count", "", "should be at least 2"))
        if not series.get("lastObservedTime"):
            out.append(required("series.lastObservedTime"))
    if not event.get("eventTime"):
        out.append(required("eventTime"))
    if event.get("type") not in ("Normal", "Warning"):
        out.append(invalid("type", "", f"has invalid value: {_str(event.get('type'))}"))
    for api_field, internal in (("deprecatedFirstTimestamp", "deprecatedFirstTimestamp"),
                                ("deprecatedLastTimestamp", "deprecatedLastTimestamp")):
        if event.get(api_field):
            out.append(invalid(internal, "", "needs to be unset"))
    if event.get("deprecatedCount"):
        out.append(invalid("deprecatedCount", "", "needs to be unset"))
    source = event.get("deprecatedSource") or {}
    if source.get("component") or source.get("host"):
        out.append(invalid("deprecatedSource", "", "needs to be unset"))
    return out


def validate_lease(lease: Obj) -> list[Cause]:
    """``ValidateLeaseSpec``."""
    spec = lease.get("spec") or {}
    out: list[Cause] = []
    duration = spec.get("leaseDurationSeconds")
    if duration is not None and duration <= 0:
        out.append(invalid("spec.leaseDurationSeconds", duration, "must be greater than 0"))
    transitions = spec.get("leaseTransitions")
    if transitions is not None and transitions < 0:
        out.append(invalid("spec.leaseTransitions", transitions, "must be greater than or equal to 0"))
    if spec.get("preferredHolder") and not spec.get("strategy"):
        out.append(forbidden("spec.preferredHolder", "may only be specified if `strategy` is defined"))
    return out
