"""ResourceQuotas: their validation, what an object counts against them (``pkg/quota/v1/evaluator/core``
and ``k8s.io/apiserver/pkg/quota/v1/generic``), and the ResourceQuota admission plugin
(``plugin/pkg/admission/resourcequota/controller.go``).

What is counted in a namespace, by the names a quota's ``hard`` uses:

- pods: ``count/pods`` (every pod), and for pods that are not terminal (nor past their deletion grace)
  ``pods``, ``cpu``/``requests.cpu``, ``memory``/``requests.memory``, ``limits.cpu``,
  ``limits.memory``, the ephemeral-storage trio, ``hugepages-*`` and ``requests.<extended>``, from the
  pod's requests and limits as the scheduler sums them (init containers a floor, overhead added);
- ``count/<resource>`` (``count/<resource>.<group>``) for any namespaced kind, and the older names
  ``services``, ``configmaps``, ``secrets``, ``replicationcontrollers``, ``resourcequotas``,
  ``persistentvolumeclaims``, ``services.loadbalancers``, ``services.nodeports`` and claims'
  ``requests.storage``.

A quota's ``scopes`` and ``scopeSelector`` (Terminating, NotTerminating, BestEffort, NotBestEffort,
PriorityClass) limit it to the pods they match; a scoped quota counts nothing else. Admission refuses a
create that would take a quota past ``hard`` with upstream's 403 (``exceeded quota: q, requested:
pods=1, used: pods=2, limited: pods=2``), and a pod that does not state a cpu or memory request or limit
that a quota limits (``failed quota: q: must specify requests.cpu for: c``). As upstream's, it reads a
quota's ``status.used`` and writes it back with what the new object takes (not on a dry run), so
``used`` is current however fast objects come; the quota controller (``controllers/resourcequota.py``)
recounts it from the store when the quota changes and when objects go or finish, and a quota it has
not synced yet is counted on the spot (upstream refuses with ``status unknown for quota``, for a moment).
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from scheduler.errors import QuantityError
from scheduler.simulator.apierrors import ApiError, invalid
from scheduler.simulator.registry.core.quantities import Quantity, quantity

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceRegistry
    from scheduler.simulator.store import Store

__all__ = ["SCOPES", "check_create", "count_key", "namespace_usage", "status_usage", "usage_of", "used",
           "validate_quota"]

Obj = dict[str, Any]
# Older resource names for object counts: the store each counts.
_LEGACY = {"services": "/services", "configmaps": "/configmaps", "secrets": "/secrets",
           "replicationcontrollers": "/replicationcontrollers", "resourcequotas": "/resourcequotas",
           "persistentvolumeclaims": "/persistentvolumeclaims"}
SCOPES = ("Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass",
          "CrossNamespacePodAffinity", "VolumeAttributesClass")
# podEvaluator's validationSet: a quota on these makes each container state them.
_MUST_STATE = ("cpu", "limits.cpu", "limits.memory", "memory", "requests.cpu", "requests.memory")
_NATIVE = ("cpu", "memory", "ephemeral-storage", "pods", "storage")
_ONE = Quantity(quantity("1").value)


def validate_quota(rq: Obj) -> None:
    """``ValidateResourceQuota``'s spec rules: quantities, scopes; raises the 400 or 422."""
    spec = rq.get("spec") or {}
    name = str(rq["metadata"].get("name", ""))
    causes: list[tuple[str, str, str]] = []
    for k, v in (spec.get("hard") or {}).items():
        try:
            q = quantity(v)
        except QuantityError:
            raise ApiError(400, "BadRequest", 'ResourceQuota in version "v1" cannot be handled as a ResourceQuota: '
                                              "quantities must match the regular expression "
                                              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None
        if q.value < 0:
            causes.append((f"spec.hard[{k}]", "FieldValueInvalid",
                           f'Invalid value: "{v}": must be greater than or equal to 0'))
    scopes = [str(s) for s in spec.get("scopes") or []]
    if any(s not in SCOPES for s in scopes):
        shown = ", ".join(f'"{s}"' for s in scopes)
        causes.append(("spec.scopes", "FieldValueInvalid",
                       f"Invalid value: []core.ResourceQuotaScope{{{shown}}}: unsupported scope"))
    if ("BestEffort" in scopes and "NotBestEffort" in scopes) or (
            "Terminating" in scopes and "NotTerminating" in scopes):
        shown = ", ".join(f'"{s}"' for s in scopes)
        causes.append(("spec.scopes", "FieldValueInvalid",
                       f"Invalid value: []core.ResourceQuotaScope{{{shown}}}: conflicting scopes"))
    if causes:
        raise invalid("ResourceQuota", name, causes)


def count_key(group: str, plural: str) -> str:
    """The ``count/`` name of a kind's object count (``ObjectCountQuotaResourceNameFor``)."""
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _charged(pod: Obj, now: dt.datetime) -> bool:
    """``QuotaV1Pod``: not terminal, and not past its deletion grace period."""
    if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
        return False
    meta = pod.get("metadata") or {}
    stamp, grace = meta.get("deletionTimestamp"), meta.get("deletionGracePeriodSeconds")
    if stamp and grace is not None:
        deleted = dt.datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        return now <= deleted + dt.timedelta(seconds=int(grace))
    return True


def _pod_totals(spec: Obj, field: str) -> dict[str, Quantity]:
    """``PodRequests``/``PodLimits``: app containers and sidecars summed, each other init container
    (with the sidecars before it) a floor, overhead added."""
    total: dict[str, Quantity] = {}
    sidecars: dict[str, Quantity] = {}
    floor: dict[str, Quantity] = {}

    def parsed(c: Obj) -> dict[str, Quantity]:
        rl = (c.get("resources") or {}).get(field)
        return {k: quantity(v) for k, v in rl.items()} if isinstance(rl, dict) else {}

    def add(into: dict[str, Quantity], more: dict[str, Quantity]) -> None:
        for k, q in more.items():
            into[k] = into[k] + q if k in into else q

    for c in spec.get("containers") or []:
        add(total, parsed(c))
    for c in spec.get("initContainers") or []:
        own = parsed(c)
        if c.get("restartPolicy") == "Always":
            add(total, own)
            add(sidecars, own)
            own = dict(sidecars)
        else:
            own = dict(own)
            add(own, sidecars)
        for k, q in own.items():
            if k not in floor or q.value > floor[k].value:
                floor[k] = q
    for k, q in floor.items():
        if k not in total or q.value > total[k].value:
            total[k] = q
    if field == "requests" and isinstance(spec.get("overhead"), dict):
        add(total, {k: quantity(v) for k, v in spec["overhead"].items()})
    return total


def _compute(requests: dict[str, Quantity], limits: dict[str, Quantity]) -> dict[str, Quantity]:
    """``podComputeUsageHelper``."""
    out: dict[str, Quantity] = {"pods": _ONE}
    for r in ("cpu", "memory", "ephemeral-storage"):
        if r in requests:
            out[r] = out[f"requests.{r}"] = requests[r]
        if r in limits:
            out[f"limits.{r}"] = limits[r]
    for r, q in requests.items():
        if r.startswith("hugepages-"):
            out[r] = out[f"requests.{r}"] = q
        elif r not in _NATIVE and not r.startswith("requests.") and (
                "/" in r and not r.split("/", 1)[0].endswith("kubernetes.io")):
            out[f"requests.{r}"] = q
    return out


def usage_of(store: str, group: str, plural: str, obj: Obj, now: dt.datetime) -> dict[str, Quantity]:
    """What one object counts (``Evaluator.Usage``)."""
    out: dict[str, Quantity] = {count_key(group, plural): _ONE}
    for legacy, legacy_store in _LEGACY.items():
        if legacy_store == store:
            out[legacy] = _ONE
    if store == "/pods" and _charged(obj, now):
        spec = obj.get("spec") or {}
        out.update(_compute(_pod_totals(spec, "requests"), _pod_totals(spec, "limits")))
    elif store == "/services":
        kind = (obj.get("spec") or {}).get("type")
        if kind == "LoadBalancer":
            out["services.loadbalancers"] = _ONE
        if kind in ("LoadBalancer", "NodePort"):
            ports = len((obj.get("spec") or {}).get("ports") or [])
            out["services.nodeports"] = quantity(str(ports))
    elif store == "/persistentvolumeclaims":
        storage = (((obj.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage")
        if storage is not None:
            out["requests.storage"] = quantity(storage)
    return out


def _matches_scopes(rq: Obj, store: str, obj: Obj) -> bool:
    """A quota's scopes and scope selector all match (only pods match any scope)."""
    spec = rq.get("spec") or {}
    selectors = [{"scopeName": s, "operator": "Exists"} for s in spec.get("scopes") or []]
    selectors += list((spec.get("scopeSelector") or {}).get("matchExpressions") or [])
    if not selectors:
        return True
    if store != "/pods":
        return False
    pod_spec = obj.get("spec") or {}
    for sel in selectors:
        scope, op = sel.get("scopeName"), sel.get("operator")
        deadline = pod_spec.get("activeDeadlineSeconds")
        terminating = deadline is not None and int(deadline) >= 0
        best_effort = (obj.get("status") or {}).get("qosClass") == "BestEffort"
        pc = str(pod_spec.get("priorityClassName") or "")
        if scope == "Terminating":
            ok = terminating
        elif scope == "NotTerminating":
            ok = not terminating
        elif scope == "BestEffort":
            ok = best_effort
        elif scope == "NotBestEffort":
            ok = not best_effort
        elif scope == "PriorityClass":
            values = [str(v) for v in sel.get("values") or []]
            ok = {"Exists": bool(pc), "DoesNotExist": not pc, "In": bool(pc) and pc in values,
                  "NotIn": not pc or pc not in values}.get(str(op), False)
        else:
            ok = False
        if not ok:
            return False
    return True


def used(rq: Obj, objects: Callable[[str], Iterable[Obj]], key_store: Callable[[str], str | None],
         now: dt.datetime) -> dict[str, Quantity]:
    """A quota's usage of each of its ``hard`` resources, counted from the store: ``objects(store)`` are
    the namespace's objects of a kind, ``key_store(count_name)`` the store a ``count/`` name counts."""
    hard = list((rq.get("spec") or {}).get("hard") or {})
    out: dict[str, Quantity] = {k: Quantity(quantity("0").value, quantity(v).fmt)
                                for k, v in ((rq.get("spec") or {}).get("hard") or {}).items()}
    stores = {"/pods"} | {s for k in hard if (s := _LEGACY.get(k) or key_store(k))}
    if any(k.startswith(("services.",)) for k in hard):
        stores.add("/services")
    if "requests.storage" in hard:
        stores.add("/persistentvolumeclaims")
    for store in stores:
        group, _, plural = store.partition("/")
        for obj in objects(store):
            if not _matches_scopes(rq, store, obj):
                continue
            for k, q in usage_of(store, group, plural, obj, now).items():
                if k in out:
                    out[k] = out[k] + q if out[k].value else Quantity(q.value, q.fmt)
    return out


def _pretty(values: dict[str, Quantity]) -> str:
    return ",".join(f"{k}={values[k]}" for k in sorted(values))


def check_create(quotas: list[Obj], resource: str, store: str, group: str, plural: str, obj: Obj,
                 usage: Callable[[Obj], dict[str, Quantity]], now: dt.datetime) -> list[tuple[Obj, Obj]]:
    """The ResourceQuota plugin on a create: each quota the object matches must hold it (quotas by
    name; the first refusal is the answer). ``usage(quota)`` is the quota's current use. Returns each
    charged quota with the status it has once the object is stored (``used`` plus what it takes), which
    upstream's plugin writes before the object is."""
    name = str(obj["metadata"].get("name", ""))
    delta_all = usage_of(store, group, plural, obj, now)
    charged: list[tuple[Obj, Obj]] = []
    for rq in sorted(quotas, key=lambda q: str(q["metadata"]["name"])):
        hard = {k: quantity(v) for k, v in ((rq.get("spec") or {}).get("hard") or {}).items()}
        matching = [k for k in hard if k in delta_all or (store == "/pods" and k in _MUST_STATE)]
        if not matching or not _matches_scopes(rq, store, obj):
            continue
        qname = str(rq["metadata"]["name"])
        if store == "/pods":
            missing = _missing(obj, [k for k in matching if k in _MUST_STATE])
            if missing:
                raise _forbidden(resource, name, f"failed quota: {qname}: must specify {missing}")
        delta = {k: q for k, q in delta_all.items() if k in hard and q.value}
        if not delta:
            continue
        current = usage(rq)
        exceeded = sorted(k for k, q in delta.items()
                          if (current[k].value if k in current else 0) + q.value > hard[k].value)
        if exceeded:
            raise _forbidden(resource, name, (
                f"exceeded quota: {qname}, requested: {_pretty({k: delta[k] for k in exceeded})}, "
                f"used: {_pretty({k: current.get(k, Quantity(quantity('0').value)) for k in exceeded})}, "
                f"limited: {_pretty({k: hard[k] for k in exceeded})}"))
        after = {k: str(current[k] + delta[k] if k in delta and current[k].value else delta.get(k, current[k]))
                 for k in current}
        charged.append((rq, {"hard": dict((rq.get("spec") or {}).get("hard") or {}), "used": after}))
    return charged


def status_usage(rq: Obj) -> dict[str, Quantity] | None:
    """A quota's ``status.used`` when its status is current (its ``hard`` the spec's, each resource
    counted), else None: the controller has not synced it yet."""
    status, hard = rq.get("status") or {}, (rq.get("spec") or {}).get("hard") or {}
    used_now = status.get("used") or {}
    if status.get("hard") != hard or any(k not in used_now for k in hard):
        return None
    try:
        return {k: quantity(used_now[k]) for k in hard}
    except QuantityError:
        return None


def _missing(pod: Obj, required: list[str]) -> str:
    """podEvaluator.Constraints: the required resources each container does not state, and which."""
    missing: dict[str, set[str]] = {}
    spec = pod.get("spec") or {}
    for c in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        res = c.get("resources") or {}
        stated = _compute({k: quantity(v) for k, v in (res.get("requests") or {}).items()},
                          {k: quantity(v) for k, v in (res.get("limits") or {}).items()})
        for r in required:
            if r not in stated:
                missing.setdefault(r, set()).add(str(c.get("name", "")))
    return "; ".join(f"{r} for: {','.join(sorted(names))}" for r, names in sorted(missing.items()))


def _forbidden(resource: str, name: str, text: str) -> ApiError:
    return ApiError(403, "Forbidden", f'{resource} "{name}" is forbidden: {text}',
                    {"name": name, "kind": resource.split(".", 1)[0]})


def namespace_usage(store: Store, registry: ResourceRegistry, rq: Obj, now: dt.datetime) -> dict[str, Quantity]:
    """``used`` over the store's objects in the quota's namespace."""
    ns = str(rq["metadata"].get("namespace", ""))
    by_count = {count_key(rt.group, rt.plural): rt.store for rt in registry.by_path.values() if rt.namespaced}
    return used(rq, lambda s: store.bucket(s).items(ns), by_count.get, now)
