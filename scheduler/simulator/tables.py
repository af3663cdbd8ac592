"""Server-side printing: the ``meta.k8s.io/v1`` Table that kubectl asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

Columns match the real server's printers for pods, nodes, namespaces, events and leases; custom
resources get their CRD's ``additionalPrinterColumns`` (JSONPath, simple ``.a.b[0].c`` paths) and
everything else Name and Age, as the default table convertor prints them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import orjson

from scheduler.simulator.resources import ResourceType

__all__ = ["age", "table"]

Obj = dict[str, Any]


def _col(name: str, type_: str = "string", priority: int = 0, fmt: str = "", desc: str = "") -> Obj:
    return {"name": name, "type": type_, "format": fmt, "description": desc or name, "priority": priority}


def age(ts: str | None, now: dt.datetime | None = None) -> str:
    if not ts:
        return "<unknown>"
    try:
        t = dt.datetime.fromisoformat(ts.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    secs = int(((now or dt.datetime.now(dt.UTC)) - t).total_seconds())
    secs = max(secs, 0)
    if secs < 120:
        return f"{secs}s"
    mins = secs // 60
    if mins < 10:
        return f"{mins}m{secs % 60}s" if secs % 60 else f"{mins}m"
    if mins < 180:
        return f"{mins}m"
    hours = mins // 60
    if hours < 8:
        return f"{hours}h{mins % 60}m" if mins % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    return f"{hours // 24}d"


def _pod_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec", {}), o.get("status", {})
    total = len(spec.get("containers") or [])
    ready = sum(1 for c in st.get("containerStatuses") or [] if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in st.get("containerStatuses") or [])
    phase = st.get("reason") or st.get("phase", "")
    if o["metadata"].get("deletionTimestamp"):
        phase = "Terminating"
    elif phase == "Pending" and spec.get("schedulingGates"):
        phase = "SchedulingGated"
    gates = spec.get("readinessGates")
    return [o["metadata"]["name"], f"{ready}/{total}", phase, restarts, age(o["metadata"].get("creationTimestamp")),
            st.get("podIP") or "<none>", spec.get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>",
            f"{len(gates)}" if gates else "<none>"]


def _node_row(o: Obj) -> list[Any]:
    st, spec = o.get("status", {}), o.get("spec", {})
    ready = next((c for c in st.get("conditions") or [] if c.get("type") == "Ready"), None)
    status = "Unknown" if ready is None else ("Ready" if ready.get("status") == "True" else "NotReady")
    if spec.get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = o["metadata"].get("labels") or {}
    roles = sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/")) or ["<none>"]
    info = st.get("nodeInfo") or {}
    addrs = {a.get("type"): a.get("address") for a in st.get("addresses") or []}
    return [o["metadata"]["name"], status, ",".join(roles), age(o["metadata"].get("creationTimestamp")),
            info.get("kubeletVersion", ""), addrs.get("InternalIP", "<none>"), addrs.get("ExternalIP", "<none>"),
            info.get("osImage", "<unknown>"), info.get("kernelVersion", "<unknown>"),
            info.get("containerRuntimeVersion", "<unknown>")]


def _event_row(o: Obj) -> list[Any]:
    inv = o.get("involvedObject") or {}
    last = o.get("lastTimestamp") or (o.get("series") or {}).get("lastObservedTime") or o.get("eventTime")
    obj = f"{str(inv.get('kind', '')).lower()}/{inv.get('name', '')}"
    return [age(last), o.get("type", ""), o.get("reason", ""), obj, o.get("message", "")]


_BUILTIN: dict[str, tuple[list[Obj], Any]] = {
    "pods": ([_col("Name", fmt="name"), _col("Ready"), _col("Status"), _col("Restarts", "string"), _col("Age"),
              _col("IP", priority=1), _col("Node", priority=1), _col("Nominated Node", priority=1),
              _col("Readiness Gates", priority=1)], _pod_row),
    "nodes": ([_col("Name", fmt="name"), _col("Status"), _col("Roles"), _col("Age"), _col("Version"),
               _col("Internal-IP", priority=1), _col("External-IP", priority=1), _col("OS-Image", priority=1),
               _col("Kernel-Version", priority=1), _col("Container-Runtime", priority=1)], _node_row),
    "namespaces": ([_col("Name", fmt="name"), _col("Status"), _col("Age")],
                   lambda o: [o["metadata"]["name"], (o.get("status") or {}).get("phase", "Active"),
                              age(o["metadata"].get("creationTimestamp"))]),
    "events": ([_col("Last Seen"), _col("Type"), _col("Reason"), _col("Object"), _col("Message")], _event_row),
    "leases": ([_col("Name", fmt="name"), _col("Holder"), _col("Age")],
               lambda o: [o["metadata"]["name"], (o.get("spec") or {}).get("holderIdentity", ""),
                          age(o["metadata"].get("creationTimestamp"))]),
    "priorityclasses": ([_col("Name", fmt="name"), _col("Value", "integer"), _col("Global-Default", "boolean"),
                         _col("Age"), _col("PreemptionPolicy")],
                        lambda o: [o["metadata"]["name"], o.get("value", 0), bool(o.get("globalDefault", False)),
                                   age(o["metadata"].get("creationTimestamp")),
                                   o.get("preemptionPolicy", "PreemptLowerPriority")]),
}


_TOKEN = re.compile(r"""\[\?\(@\.([\w.]+)\s*==\s*["']([^"']*)["']\)\]|\[(\d+)\]|([^.\[\]]+)""")


def _jsonpath(obj: Any, path: str) -> Any:
    """The JSONPath subset printer columns use: ``.a.b``, ``[0]`` and ``[?(@.type=="Ready")]``."""
    cur = obj
    for m in _TOKEN.finditer(path.strip().lstrip("$").strip("{}")):
        key, want, idx, name = m.groups()
        if key is not None:
            if not isinstance(cur, list):
                return None
            cur = next((x for x in cur if isinstance(x, dict) and str(_jsonpath(x, key)) == want), None)
        elif idx is not None:
            cur = cur[int(idx)] if isinstance(cur, list) and int(idx) < len(cur) else None
        else:
            cur = cur.get(name) if isinstance(cur, dict) else None
        if cur is None:
            return None
    return cur


def columns(rt: ResourceType) -> tuple[list[Obj], Any]:
    if not rt.crd_name and rt.plural in _BUILTIN:
        return _BUILTIN[rt.plural]
    if rt.crd_name:
        cols = [_col("Name", fmt="name")]
        paths = []
        for c in rt.printer_columns:
            cols.append(_col(c["name"], c.get("type", "string"), int(c.get("priority", 0)), c.get("format", ""),
                             c.get("description", "")))
            paths.append((c.get("jsonPath", ""), c.get("type", "string")))
        if not rt.printer_columns:
            cols.append(_col("Age", "date"))
            paths.append((".metadata.creationTimestamp", "age"))

        def row(o: Obj) -> list[Any]:
            out: list[Any] = [o["metadata"]["name"]]
            for p, t in paths:
                v = _jsonpath(o, p)
                if t in ("age", "date") and isinstance(v, str):
                    v = age(v)
                elif isinstance(v, (dict, list)):
                    v = orjson.dumps(v).decode()
                out.append(v)
            return out
        return cols, row
    return [_col("Name", fmt="name"), _col("Created At", "date")], lambda o: [
        o["metadata"]["name"], o["metadata"].get("creationTimestamp")]


def table(rt: ResourceType, objects: list[Obj], list_meta: Obj, include: str = "PartialObjectMetadata") -> Obj:
    cols, row = columns(rt)
    rows = []
    for o in objects:
        r: Obj = {"cells": row(o)}
        if include == "Object":
            r["object"] = o
        elif include != "None":
            r["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
        rows.append(r)
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": cols,
            "rows": rows}
