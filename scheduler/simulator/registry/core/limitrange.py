"""LimitRanges: their defaulting and validation, and the LimitRanger admission plugin on pod create.

- ``default_limit_range`` is ``SetDefaults_LimitRangeItem`` (``pkg/apis/core/v1/defaults.go``): a
  Container item's ``default`` is filled from ``max``, then ``defaultRequest`` from ``default``, then
  from ``min``.
- ``validate_limit_range`` is ``ValidateLimitRange`` (``pkg/apis/core/validation``): a type at most
  once, no defaults on a ``Pod`` item, a min or max storage on a ``PersistentVolumeClaim`` item, and
  ``min <= defaultRequest <= default <= max`` and ``maxLimitRequestRatio`` in ``[1, max/min]`` per
  resource, with upstream's texts.
- ``mutate_pod`` and ``validate_pod`` are ``plugin/pkg/admission/limitranger/admission.go``: each
  container and init container without a request or limit for a resource gets the ``defaultRequest``
  or ``default`` of the namespace's Container items (and the ``kubernetes.io/limit-ranger``
  annotation says what was set), before validation; after it, every Container item's min, max and
  ratio hold for each container and every Pod item's for the pod's sum, or the pod is refused with a
  403 listing what failed (``maximum cpu usage per Container is 1, but limit is 2``).
- ``validate_claim`` is the plugin on a PersistentVolumeClaim create: its requests within each
  PersistentVolumeClaim item's min and max.

The scheduler then sees the defaulted requests, as it does on a real cluster.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

from scheduler.simulator.apierrors import ApiError, invalid
from scheduler.simulator.registry.core.quantities import Quantity, quantity

__all__ = ["default_limit_range", "mutate_pod", "validate_claim", "validate_limit_range", "validate_pod"]

Obj = dict[str, Any]
Cause = tuple[str, str, str]
_ANNOTATION = "kubernetes.io/limit-ranger"
_MAX_MILLI = (1 << 63) // 1000          # resource.MaxMilliValue: past it, compare whole units


def default_limit_range(lr: Obj) -> None:
    """``SetDefaults_LimitRangeItem`` on each Container item (mutates ``lr``)."""
    for item in (lr.get("spec") or {}).get("limits") or []:
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = item.setdefault("default", {})
        request = item.setdefault("defaultRequest", {})
        for k, v in (item.get("max") or {}).items():
            default.setdefault(k, v)
        for k, v in default.items():
            request.setdefault(k, v)
        for k, v in (item.get("min") or {}).items():
            request.setdefault(k, v)


def validate_limit_range(lr: Obj) -> None:
    """``ValidateLimitRange``'s spec rules; raises the 422."""
    causes: list[Cause] = []
    seen: set[str] = set()
    for i, item in enumerate((lr.get("spec") or {}).get("limits") or []):
        path = f"spec.limits[{i}]"
        kind = str(item.get("type") or "")
        if not kind:
            causes.append((f"{path}.type", "FieldValueRequired", "Required value"))
        elif kind in seen:
            causes.append((f"{path}.type", "FieldValueDuplicate", f'Duplicate value: "{kind}"'))
        seen.add(kind)
        lists = {f: {k: quantity(v) for k, v in (item.get(f) or {}).items()}
                 for f in ("max", "min", "default", "defaultRequest", "maxLimitRequestRatio")}
        for f, values in lists.items():
            for k, q in values.items():
                if q.value < 0:
                    causes.append((f"{path}.{f}[{k}]", "FieldValueInvalid",
                                   f'Invalid value: "{q}": must be greater than or equal to 0'))
        if kind == "Pod":
            for f in ("default", "defaultRequest"):
                if lists[f]:
                    causes.append((f"{path}.{f}", "FieldValueForbidden",
                                   "Forbidden: may not be specified when `type` is 'Pod'"))
        if kind == "PersistentVolumeClaim" and "storage" not in lists["min"] and "storage" not in lists["max"]:
            causes.append((f"{path}.limits", "FieldValueRequired", "Required value: either minimum or maximum "
                                                                    "storage value is required, but neither was "
                                                                    "provided"))
        causes += _item_order(path, lists)
    if causes:
        raise invalid("LimitRange", str(lr["metadata"].get("name", "")), causes)


def _item_order(path: str, lists: dict[str, dict[str, Quantity]]) -> list[Cause]:
    """min <= defaultRequest <= default <= max, and the ratio's bounds, per resource."""
    causes: list[Cause] = []
    mins, maxs, defs, reqs, ratios = (lists[f] for f in ("min", "max", "default", "defaultRequest",
                                                          "maxLimitRequestRatio"))
    keys = list(dict.fromkeys([*maxs, *mins, *defs, *reqs, *ratios]))

    def bad(field: str, k: str, shown: Quantity, text: str) -> None:
        causes.append((f"{path}.{field}[{k}]", "FieldValueInvalid", f'Invalid value: "{shown}": {text}'))

    for k in keys:
        lo, hi, d, r, ratio = mins.get(k), maxs.get(k), defs.get(k), reqs.get(k), ratios.get(k)
        if lo and hi and lo.value > hi.value:
            bad("min", k, lo, f"min value {lo} is greater than max value {hi}")
        if r and lo and lo.value > r.value:
            bad("defaultRequest", k, r, f"min value {lo} is greater than default request value {r}")
        if r and hi and r.value > hi.value:
            bad("defaultRequest", k, r, f"default request value {r} is greater than max value {hi}")
        if r and d and r.value > d.value:
            bad("defaultRequest", k, r, f"default request value {r} is greater than default limit value {d}")
        if d and lo and lo.value > d.value:
            bad("default", k, lo, f"min value {lo} is greater than default value {d}")
        if d and hi and d.value > hi.value:
            bad("default", k, hi, f"default value {d} is greater than max value {hi}")
        if ratio and ratio.value < 1:
            bad("maxLimitRequestRatio", k, ratio, f"ratio {ratio} is less than 1")
        if ratio and lo and hi and lo.value > 0 and ratio.value > hi.value / lo.value:
            bad("maxLimitRequestRatio", k, ratio,
                f"ratio {ratio} is greater than max/min = {float(hi.value / lo.value):f}")
    return causes


def mutate_pod(pod: Obj, ranges: list[Obj]) -> None:
    """LimitRanger's mutation: each LimitRange's Container defaults into containers that lack them."""
    spec = pod.get("spec") or {}
    for lr in ranges:
        requests: dict[str, Any] = {}
        limits: dict[str, Any] = {}
        for item in (lr.get("spec") or {}).get("limits") or []:
            if item.get("type") == "Container":
                requests.update(item.get("defaultRequest") or {})
                limits.update(item.get("default") or {})
        notes: list[str] = []
        for group, prefix in (("containers", "container"), ("initContainers", "init container")):
            for c in spec.get(group) or []:
                notes += _merge(c, requests, limits, prefix)
        if notes:
            meta = pod.setdefault("metadata", {})
            meta["annotations"] = {**(meta.get("annotations") or {}),
                                   _ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}


def _merge(container: Obj, requests: dict[str, Any], limits: dict[str, Any], prefix: str) -> list[str]:
    """``mergeContainerResources``: what a container lacks, filled in; the notes for the annotation."""
    res = container.get("resources")
    if not isinstance(res, dict):
        res = container["resources"] = {}
    have_lim: dict[str, Any] = res["limits"] if isinstance(res.get("limits"), dict) else {}
    have_req: dict[str, Any] = res["requests"] if isinstance(res.get("requests"), dict) else {}
    set_lim = sorted(k for k in limits if k not in have_lim)
    set_req = sorted(k for k in requests if k not in have_req)
    if set_lim:
        res["limits"] = {**have_lim, **{k: limits[k] for k in set_lim}}
    if set_req:
        res["requests"] = {**have_req, **{k: requests[k] for k in set_req}}
    name = container.get("name", "")
    return ([f"{', '.join(set_req)} request for {prefix} {name}"] if set_req else []) + \
           ([f"{', '.join(set_lim)} limit for {prefix} {name}"] if set_lim else [])


def validate_pod(pod: Obj, ranges: list[Obj]) -> None:
    """LimitRanger's validation; raises the 403 for the first LimitRange a pod violates."""
    spec = pod.get("spec") or {}
    containers = [c for g in ("containers", "initContainers") for c in spec.get(g) or []]
    for lr in ranges:
        errors: list[str] = []
        for item in (lr.get("spec") or {}).get("limits") or []:
            kind = item.get("type")
            if kind == "Container":
                for c in containers:
                    res = c.get("resources") or {}
                    errors += _check(item, "Container", _parsed(res.get("requests")), _parsed(res.get("limits")))
            elif kind == "Pod":
                errors += _check(item, "Pod", *_pod_totals(spec))
        if errors:
            unique = list(dict.fromkeys(errors))
            text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
            raise ApiError(403, "Forbidden", f'pods "{pod["metadata"].get("name", "")}" is forbidden: {text}')


def validate_claim(claim: Obj, ranges: list[Obj]) -> None:
    """``PersistentVolumeClaimValidateLimitFunc``: a claim's requests within each PersistentVolumeClaim
    item's min and max (its limits are not user input here); raises the 403 for the first LimitRange
    it violates."""
    requests = _parsed(((claim.get("spec") or {}).get("resources") or {}).get("requests"))
    for lr in ranges:
        errors: list[str] = []
        for item in (lr.get("spec") or {}).get("limits") or []:
            if item.get("type") != "PersistentVolumeClaim":
                continue
            errors += _check({"min": item.get("min")}, "PersistentVolumeClaim", requests, {})
            for k, raw in (item.get("max") or {}).items():      # maxRequestConstraint
                hi, req = quantity(raw), requests.get(k)
                if req is None:
                    errors.append(f"maximum {k} usage per PersistentVolumeClaim is {hi}.  No request is specified")
                elif _compare(req, hi)[0] > _compare(req, hi)[1]:
                    errors.append(f"maximum {k} usage per PersistentVolumeClaim is {hi}, but request is {req}")
        if errors:
            unique = list(dict.fromkeys(errors))
            text = unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
            raise ApiError(403, "Forbidden", f'persistentvolumeclaims "{claim["metadata"].get("name", "")}" is '
                                             f"forbidden: {text}")


def _parsed(rl: Any) -> dict[str, Quantity]:
    return {k: quantity(v) for k, v in rl.items()} if isinstance(rl, dict) else {}


def _pod_totals(spec: Obj) -> tuple[dict[str, Quantity], dict[str, Quantity]]:
    """The pod's requests and limits as the limit ranger sums them: app containers and sidecars added,
    each other init container (with the sidecars before it) a floor."""
    out: list[dict[str, Quantity]] = []
    for field in ("requests", "limits"):
        total: dict[str, Quantity] = {}
        sidecars: dict[str, Quantity] = {}
        floor: dict[str, Quantity] = {}
        for c in spec.get("containers") or []:
            _add(total, _parsed((c.get("resources") or {}).get(field)))
        for c in spec.get("initContainers") or []:
            own = _parsed((c.get("resources") or {}).get(field))
            if c.get("restartPolicy") == "Always":
                _add(total, own)
                _add(sidecars, own)
                own = dict(sidecars)
            else:
                own = dict(own)
                _add(own, sidecars)
            _max(floor, own)
        _max(total, floor)
        out.append(total)
    return out[0], out[1]


def _add(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    for k, q in more.items():
        into[k] = into[k] + q if k in into else q


def _max(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
    for k, q in more.items():
        if k not in into or q.value > into[k].value:
            into[k] = q


def _compare(a: Quantity, b: Quantity) -> tuple[int, int]:
    """``requestLimitEnforcedValues``: milli-units (rounded up) where none overflows them, else whole
    units."""
    if max(math.ceil(a.value), math.ceil(b.value)) <= _MAX_MILLI:
        return math.ceil(a.value * 1000), math.ceil(b.value * 1000)
    return math.ceil(a.value), math.ceil(b.value)


def _check(item: Obj, kind: str, requests: dict[str, Quantity], limits: dict[str, Quantity]) -> list[str]:
    """minConstraint, maxConstraint and limitRequestRatioConstraint for one item."""
    errors: list[str] = []
    for k, raw in (item.get("min") or {}).items():
        lo, req, lim = quantity(raw), requests.get(k), limits.get(k)
        if req is None:
            errors.append(f"minimum {k} usage per {kind} is {lo}.  No request is specified")
        elif _compare(req, lo)[0] < _compare(req, lo)[1]:
            errors.append(f"minimum {k} usage per {kind} is {lo}, but request is {req}")
        elif lim is not None and _compare(lim, lo)[0] < _compare(lim, lo)[1]:
            errors.append(f"minimum {k} usage per {kind} is {lo}, but limit is {lim}")
    for k, raw in (item.get("max") or {}).items():
        hi, req, lim = quantity(raw), requests.get(k), limits.get(k)
        if lim is None:
            errors.append(f"maximum {k} usage per {kind} is {hi}.  No limit is specified")
        elif _compare(lim, hi)[0] > _compare(lim, hi)[1]:
            errors.append(f"maximum {k} usage per {kind} is {hi}, but limit is {lim}")
        elif req is not None and _compare(req, hi)[0] > _compare(req, hi)[1]:
            errors.append(f"maximum {k} usage per {kind} is {hi}, but request is {req}")
    for k, raw in (item.get("maxLimitRequestRatio") or {}).items():
        ratio, req, lim = quantity(raw), requests.get(k), limits.get(k)
        if req is None or req.value == 0:
            errors.append(f"{k} max limit to request ratio per {kind} is {ratio}, but no request is specified or "
                          "request is 0")
        elif lim is None or lim.value == 0:
            errors.append(f"{k} max limit to request ratio per {kind} is {ratio}, but no limit is specified or "
                          "limit is 0")
        else:
            observed = Fraction(*_compare(lim, req)[:2])
            if observed > ratio.value:
                errors.append(f"{k} max limit to request ratio per {kind} is {ratio}, but provided ratio is "
                              f"{float(observed):f}")
    return errors
