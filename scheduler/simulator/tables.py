"""Server-side printing: the ``meta.k8s.io/v1`` Table that kubectl asks for with
``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

Columns match the real server's printers (``pkg/printers/internalversion``) for pods, nodes, namespaces,
events (both APIs), leases, priority classes, services, endpoints and EndpointSlices, config maps,
secrets, service accounts, resource quotas (``used/hard`` per resource), PDBs,
the workload kinds and the storage kinds (PVs, PVCs, StorageClasses with ``(default)``, CSINodes,
CSIDrivers, CSIStorageCapacities), and the DRA kinds (DeviceClasses, ResourceClaims with their
``allocated,reserved`` state, ResourceClaimTemplates, ResourceSlices); custom
resources get their CRD's ``additionalPrinterColumns`` (JSONPath, simple ``.a.b[0].c`` paths) and
everything else Name and Age, as the default table convertor prints them.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import orjson

from scheduler.errors import QuantityError
from scheduler.simulator.registry.core.quantities import quantity
from scheduler.simulator.registry.resource import claim_state
from scheduler.simulator.registry.storage import access_modes_string, claim_class, is_default_class, volume_class
from scheduler.simulator.resources import ResourceType

__all__ = ["age", "label_map", "selector_string", "table"]

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
    phase = _pod_status(o, spec, st)
    gates = spec.get("readinessGates")
    return [o["metadata"]["name"], f"{ready}/{total}", phase, restarts, age(o["metadata"].get("creationTimestamp")),
            st.get("podIP") or "<none>", spec.get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>",
            f"{len(gates)}" if gates else "<none>"]


def _pod_status(o: Obj, spec: Obj, st: Obj) -> str:
    """printPod's STATUS column: the pod's reason or phase, unless a container's state says more."""
    phase = st.get("reason") or st.get("phase", "")
    for c in reversed(st.get("containerStatuses") or []):       # printPod: a container's state says more
        state = c.get("state") or {}
        if (state.get("waiting") or {}).get("reason"):
            phase = state["waiting"]["reason"]
        elif (state.get("terminated") or {}).get("reason"):
            phase = state["terminated"]["reason"]
    if o["metadata"].get("deletionTimestamp"):
        return "Terminating"
    if phase == "Pending" and spec.get("schedulingGates"):
        return "SchedulingGated"
    return str(phase)


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


def _since(ts: str | None) -> str:
    return age(ts) if ts else "<unknown>"


def _created(o: Obj) -> str:
    return age(o["metadata"].get("creationTimestamp"))


def _template(o: Obj) -> list[str]:
    """The Containers and Images cells of a workload's pod template (``layoutContainerCells``)."""
    containers = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return [",".join(str(c.get("name", "")) for c in containers), ",".join(str(c.get("image", ""))
                                                                         for c in containers)]


def label_map(labels: Any) -> str:
    """labels.FormatLabels: sorted ``k=v`` pairs, ``<none>`` when empty."""
    if not isinstance(labels, dict) or not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def selector_string(sel: Any) -> str:
    """metav1.FormatLabelSelector: matchLabels then matchExpressions, ``<none>`` when empty."""
    if not isinstance(sel, dict):
        return "<none>"
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op, key, values = e.get("operator", ""), e.get("key", ""), e.get("values") or []
        if op in ("In", "NotIn"):
            parts.append(f"{key} {op.lower()} ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op} {values}")
    return ",".join(parts) or "<none>"


def _service_row(o: Obj) -> list[Any]:
    spec = o.get("spec") or {}
    kind = spec.get("type") or "ClusterIP"
    external = list(spec.get("externalIPs") or [])
    if kind == "LoadBalancer":
        ingress = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        lb = [i.get("ip") or i.get("hostname") or "" for i in ingress] + external
        ext = ",".join(lb) if lb else "<pending>"
    elif kind == "ExternalName":
        ext = str(spec.get("externalName", ""))
    else:
        ext = ",".join(external) if external else "<none>"
    ports = []
    for p in spec.get("ports") or []:
        proto = p.get("protocol", "TCP")
        ports.append(f"{p.get('port')}:{p['nodePort']}/{proto}" if p.get("nodePort") else f"{p.get('port')}/{proto}")
    return [o["metadata"]["name"], kind, spec.get("clusterIP") or "<none>", ext, ",".join(ports) or "<none>",
            _created(o), label_map(spec.get("selector"))]


def _quota_row(o: Obj) -> list[Any]:
    """printResourceQuota: ``resource: used/hard`` for each hard resource, ``limits.*`` in Limit."""
    status = o.get("status") or {}
    used, hard = status.get("used") or {}, status.get("hard") or {}
    request: list[str] = []
    limit: list[str] = []
    for r in sorted((o.get("spec") or {}).get("hard") or {}):
        cell = f"{r}: {_canonical(used.get(r))}/{_canonical(hard.get(r))}"
        (limit if r.split(".")[0] == "limits" and "." in r else request).append(cell)
    return [o["metadata"]["name"], _created(o), ", ".join(request), ", ".join(limit)]


def _canonical(raw: Any) -> str:
    try:
        return str(quantity(raw)) if raw is not None else "0"
    except QuantityError:
        return str(raw)


def _first_three(items: list[str], count: int) -> str:
    """At most three, then ``+ N more...``, as the endpoint printers cut their lists."""
    out = ",".join(items[:3])
    return f"{out} + {count - 3} more..." if count > 3 else out


def _endpoints_row(o: Obj) -> list[Any]:
    """formatEndpoints: each address with each port (``ip:port``), or the bare addresses."""
    subsets = o.get("subsets") or []
    items: list[str] = []
    for ss in subsets:
        addresses = [str(a.get("ip", "")) for a in ss.get("addresses") or []]
        if not ss.get("ports"):
            items += addresses
        for port in ss.get("ports") or []:
            items += [f"[{ip}]:{port.get('port')}" if ":" in ip else f"{ip}:{port.get('port')}" for ip in addresses]
    return [o["metadata"]["name"], _first_three(items, len(items)) if subsets else "<none>", _created(o)]


def _endpoint_slice_row(o: Obj) -> list[Any]:
    """formatDiscoveryPorts and formatDiscoveryEndpoints."""
    ports = [str(p["port"]) if p.get("port") is not None else "<unset>" for p in o.get("ports") or []]
    addresses = [str(a) for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
    return [o["metadata"]["name"], o.get("addressType", ""), _first_three(ports, len(ports)) if ports else "<unset>",
            _first_three(addresses, len(addresses)) if addresses else "<unset>", _created(o)]


def _deployment_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}",
            st.get("updatedReplicas", 0), st.get("availableReplicas", 0), _created(o), *_template(o),
            selector_string(spec.get("selector"))]


def _replica_set_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    sel = spec.get("selector")
    return [o["metadata"]["name"], spec.get("replicas", 1), st.get("replicas", 0), st.get("readyReplicas", 0),
            _created(o), *_template(o),
            label_map(sel) if o.get("kind") == "ReplicationController" else selector_string(sel)]


def _stateful_set_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], f"{st.get('readyReplicas', 0)}/{spec.get('replicas', 1)}", _created(o),
            *_template(o)]


def _daemon_set_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    node_sel = (((spec.get("template") or {}).get("spec") or {}).get("nodeSelector"))
    return [o["metadata"]["name"], st.get("desiredNumberScheduled", 0), st.get("currentNumberScheduled", 0),
            st.get("numberReady", 0), st.get("updatedNumberScheduled", 0), st.get("numberAvailable", 0),
            label_map(node_sel), _created(o), *_template(o), selector_string(spec.get("selector"))]


def _job_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    true = {c.get("type") for c in st.get("conditions") or [] if c.get("status") == "True"}
    status = next((s for s in ("Complete", "Failed") if s in true), None)
    if status is None:
        status = "Terminating" if o["metadata"].get("deletionTimestamp") else next(
            (s for s in ("Suspended", "FailureTarget", "SuccessCriteriaMet") if s in true), "Running")
    succeeded = st.get("succeeded", 0)
    if spec.get("completions") is not None:
        completions = f"{succeeded}/{spec['completions']}"
    else:
        parallelism = int(spec.get("parallelism") or 0)
        completions = f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"
    start, done = st.get("startTime"), st.get("completionTime")
    duration = "" if not start else (age(start) if not done else _between(start, done))
    return [o["metadata"]["name"], status, completions, duration, _created(o), *_template(o),
            selector_string(spec.get("selector"))]


def _between(start: str, end: str) -> str:
    try:
        t1 = dt.datetime.fromisoformat(end.replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    return age(start, t1)


def _cron_job_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    job = ((spec.get("jobTemplate") or {}).get("spec") or {})
    return [o["metadata"]["name"], spec.get("schedule", ""), spec.get("timeZone") or "<none>",
            bool(spec.get("suspend", False)), len(st.get("active") or []),
            _since(st.get("lastScheduleTime")) if st.get("lastScheduleTime") else "<none>", _created(o),
            *_template({"spec": job}), selector_string(job.get("selector"))]


def _pdb_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    return [o["metadata"]["name"], str(spec["minAvailable"]) if "minAvailable" in spec else "N/A",
            str(spec["maxUnavailable"]) if "maxUnavailable" in spec else "N/A", st.get("disruptionsAllowed", 0),
            _created(o)]


def _pv_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    ref = spec.get("claimRef")
    claim = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if isinstance(ref, dict) else ""
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "")
    return [o["metadata"]["name"], str((spec.get("capacity") or {}).get("storage", "0")),
            access_modes_string(spec.get("accessModes")), spec.get("persistentVolumeReclaimPolicy", ""), phase,
            claim, volume_class(o), spec.get("volumeAttributesClassName") or "<unset>", st.get("reason", ""),
            _created(o), spec.get("volumeMode") or "<unset>"]


def _pvc_row(o: Obj) -> list[Any]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    phase = "Terminating" if o["metadata"].get("deletionTimestamp") else st.get("phase", "")
    capacity = modes = ""
    if spec.get("volumeName"):
        modes = access_modes_string(st.get("accessModes"))
        capacity = str((st.get("capacity") or {}).get("storage", "0"))
    return [o["metadata"]["name"], phase, spec.get("volumeName", ""), capacity, modes, claim_class(o),
            spec.get("volumeAttributesClassName") or "<unset>", _created(o), spec.get("volumeMode") or "<unset>"]


def _storage_class_row(o: Obj) -> list[Any]:
    name = o["metadata"]["name"] + (" (default)" if is_default_class(o) else "")
    return [name, o.get("provisioner", ""), o.get("reclaimPolicy") or "Delete",
            o.get("volumeBindingMode") or "Immediate", bool(o.get("allowVolumeExpansion", False)), _created(o)]


def _csi_driver_row(o: Obj) -> list[Any]:
    spec = o.get("spec") or {}
    tokens = spec.get("tokenRequests")
    return [o["metadata"]["name"], spec.get("attachRequired", True), spec.get("podInfoOnMount", False),
            spec.get("storageCapacity", False),
            "<unset>" if tokens is None else ",".join(str(t.get("audience", "")) for t in tokens),
            spec.get("requiresRepublish", False), ",".join(spec.get("volumeLifecycleModes") or []) or "<none>",
            _created(o)]


def _resource_slice_row(o: Obj) -> list[Any]:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], spec.get("nodeName") or "", spec.get("driver", ""),
            (spec.get("pool") or {}).get("name", ""), _created(o)]


_WORKLOAD_TAIL = [_col("Containers", priority=1), _col("Images", priority=1), _col("Selector", priority=1)]

_BUILTIN: dict[str, tuple[list[Obj], Any]] = {
    "persistentvolumes": ([_col("Name", fmt="name"), _col("Capacity"), _col("Access Modes"), _col("Reclaim Policy"),
                           _col("Status"), _col("Claim"), _col("StorageClass"), _col("VolumeAttributesClass"),
                           _col("Reason"), _col("Age"), _col("VolumeMode", priority=1)], _pv_row),
    "persistentvolumeclaims": ([_col("Name", fmt="name"), _col("Status"), _col("Volume"), _col("Capacity"),
                                _col("Access Modes"), _col("StorageClass"), _col("VolumeAttributesClass"),
                                _col("Age"), _col("VolumeMode", priority=1)], _pvc_row),
    "storageclasses": ([_col("Name", fmt="name"), _col("Provisioner"), _col("ReclaimPolicy"),
                        _col("VolumeBindingMode"), _col("AllowVolumeExpansion"), _col("Age")], _storage_class_row),
    # printers.go: printDeviceClass, printResourceClaim (resourceClaimState), printResourceClaimTemplate,
    # printResourceSlice
    "deviceclasses": ([_col("Name", fmt="name"), _col("Age")], lambda o: [o["metadata"]["name"], _created(o)]),
    "resourceclaims": ([_col("Name", fmt="name"), _col("State"), _col("Age")],
                       lambda o: [o["metadata"]["name"], claim_state(o), _created(o)]),
    "resourceclaimtemplates": ([_col("Name", fmt="name"), _col("Age")],
                               lambda o: [o["metadata"]["name"], _created(o)]),
    "resourceslices": ([_col("Name", fmt="name"), _col("Node"), _col("Driver"), _col("Pool"), _col("Age")],
                       _resource_slice_row),
    "csinodes": ([_col("Name", fmt="name"), _col("Drivers", "integer"), _col("Age")],
                 lambda o: [o["metadata"]["name"], len((o.get("spec") or {}).get("drivers") or []), _created(o)]),
    "csidrivers": ([_col("Name", fmt="name"), _col("AttachRequired", "boolean"), _col("PodInfoOnMount", "boolean"),
                    _col("StorageCapacity", "boolean"), _col("TokenRequests"), _col("RequiresRepublish", "boolean"),
                    _col("Modes"), _col("Age")], _csi_driver_row),
    "csistoragecapacities": ([_col("Name", fmt="name"), _col("StorageClassName"), _col("Capacity")],
                             lambda o: [o["metadata"]["name"], o.get("storageClassName", ""),
                                        str(o["capacity"]) if o.get("capacity") is not None else "<unset>"]),
    "services": ([_col("Name", fmt="name"), _col("Type"), _col("Cluster-IP"), _col("External-IP"), _col("Port(s)"),
                  _col("Age"), _col("Selector", priority=1)], _service_row),
    "configmaps": ([_col("Name", fmt="name"), _col("Data", "integer"), _col("Age")],
                   lambda o: [o["metadata"]["name"], len(o.get("data") or {}) + len(o.get("binaryData") or {}),
                              _created(o)]),
    "secrets": ([_col("Name", fmt="name"), _col("Type"), _col("Data", "integer"), _col("Age")],
                lambda o: [o["metadata"]["name"], o.get("type", "Opaque"), len(o.get("data") or {}), _created(o)]),
    "serviceaccounts": ([_col("Name", fmt="name"), _col("Secrets", "integer"), _col("Age")],
                        lambda o: [o["metadata"]["name"], len(o.get("secrets") or []), _created(o)]),
    "resourcequotas": ([_col("Name", fmt="name"), _col("Age"), _col("Request"), _col("Limit")], _quota_row),
    "endpoints": ([_col("Name", fmt="name"), _col("Endpoints"), _col("Age")], _endpoints_row),
    "endpointslices": ([_col("Name", fmt="name"), _col("AddressType"), _col("Ports"), _col("Endpoints"),
                        _col("Age")], _endpoint_slice_row),
    "deployments": ([_col("Name", fmt="name"), _col("Ready"), _col("Up-to-date", "integer"),
                     _col("Available", "integer"), _col("Age"), *_WORKLOAD_TAIL], _deployment_row),
    "replicasets": ([_col("Name", fmt="name"), _col("Desired", "integer"), _col("Current", "integer"),
                     _col("Ready", "integer"), _col("Age"), *_WORKLOAD_TAIL], _replica_set_row),
    "replicationcontrollers": ([_col("Name", fmt="name"), _col("Desired", "integer"), _col("Current", "integer"),
                                _col("Ready", "integer"), _col("Age"), *_WORKLOAD_TAIL], _replica_set_row),
    "statefulsets": ([_col("Name", fmt="name"), _col("Ready"), _col("Age"), _col("Containers", priority=1),
                      _col("Images", priority=1)], _stateful_set_row),
    "daemonsets": ([_col("Name", fmt="name"), _col("Desired", "integer"), _col("Current", "integer"),
                    _col("Ready", "integer"), _col("Up-to-date", "integer"), _col("Available", "integer"),
                    _col("Node Selector"), _col("Age"), *_WORKLOAD_TAIL], _daemon_set_row),
    "jobs": ([_col("Name", fmt="name"), _col("Status"), _col("Completions"), _col("Duration"), _col("Age"),
              *_WORKLOAD_TAIL], _job_row),
    "cronjobs": ([_col("Name", fmt="name"), _col("Schedule"), _col("Timezone"), _col("Suspend", "boolean"),
                  _col("Active", "integer"), _col("Last Schedule"), _col("Age"), *_WORKLOAD_TAIL], _cron_job_row),
    "poddisruptionbudgets": ([_col("Name", fmt="name"), _col("Min Available"), _col("Max Unavailable"),
                              _col("Allowed Disruptions", "integer"), _col("Age")], _pdb_row),
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
