"""What the real API server does to an object between decoding and storage.

Errors are ``ApiError``s carrying the ``Status`` the server answers: ``400 BadRequest`` for what
cannot be decoded (an unparsable quantity), ``422 Invalid`` for failed validation with the field
path, ``403 Forbidden`` for admission (Priority) refusals. Defaulting follows the built-in
defaulters and admission plugins that a scheduler can observe: requests from limits (a container
with ``limits`` and no request for a resource gets the limit as its request), ports' ``TCP``,
``schedulerName``, ``enableServiceLinks``, ``phase``,
``priority``/``preemptionPolicy`` from PriorityClasses (the Priority admission plugin), the
``not-ready``/``unreachable`` tolerations (DefaultTolerationSeconds), ``qosClass``, and node
allocatable defaulting to capacity.

The order is kube-apiserver's: decode (``typecheck``: a wrong JSON type is a 400), default, then
validate (``validation``: 422s with upstream's causes), then admit. ``typecheck`` and ``validation``
raise this module's ``ApiError``, so the functions here import them where they run.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import time
import uuid
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from scheduler.errors import QuantityError
from scheduler.quantity import parse_quantity
from scheduler.simulator.params import path_segment_errors

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceType

__all__ = ["ApiError", "conflict", "default_node", "default_pod", "invalid", "not_found", "now_iso", "status_body",
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
HIGHEST_USER_PRIORITY = 1_000_000_000
SYSTEM_CLASSES = {"system-cluster-critical": 2_000_000_000, "system-node-critical": 2_000_001_000}


class ApiError(Exception):
    """An error response: HTTP ``code``, Status ``reason`` and ``message``."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None,
                 headers: dict[str, str] | None = None, list_meta: Obj | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details
        self.headers = headers or {}
        self.list_meta = list_meta          # the Status's ListMeta (a continue token for an expired one)

    def body(self) -> Obj:
        out = status_body(self.code, self.reason, self.message, self.details)
        if self.list_meta:
            out["metadata"] = dict(self.list_meta)
        return out


def status_body(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    """A failure ``Status``. An empty ``reason`` is left out, as Go's ``omitempty`` leaves out
    ``StatusReasonUnknown``: that is how kube-apiserver passes on an error it does not recognise (etcd's)."""
    out: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
                "code": code}
    if reason:
        out["reason"] = reason
    if details:
        out["details"] = details
    return out


_NOW: list[Any] = [0, ""]


def now_iso() -> str:
    """The current time as the API's RFC 3339 seconds, formatted once per second."""
    t = int(time.time())
    if t != _NOW[0]:
        _NOW[0], _NOW[1] = t, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
    return str(_NOW[1])


def resource_name(rt: ResourceType) -> str:
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource_name(rt)} "{name}" not found',
                    {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural})


def conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {resource_name(rt)} "{name}": {why}',
                    {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural})


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]], group: str = "") -> ApiError:
    """422 Invalid; ``causes`` are (field, reason, detail) with reason a FieldValue* constant.

    The message names the qualified kind (``PriorityClass.scheduling.k8s.io``), as ``NewInvalid``
    prints its ``GroupKind``; the details carry the bare kind and the group apart."""
    text = ", ".join(f"{f}: {d}" for f, _, d in causes)
    if len(causes) > 1:
        text = f"[{text}]"
    qualified = f"{kind}.{group}" if group and not kind.endswith(f".{group}") else kind
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', {
        "name": name, **({"group": group} if group else {}), "kind": kind,
        "causes": [{"reason": r, "message": d, "field": f} for f, r, d in causes]})


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


def _quantity(kind: str, field: str, raw: Any) -> int:
    """Parse a quantity for validation; 400 naming the field when it cannot be decoded."""
    if isinstance(raw, bool) or not isinstance(raw, (str, int, float)):
        raise ApiError(400, "BadRequest", f'{kind} in version "v1" cannot be handled as a {kind}: {field}: '
                                          f"quantities must match the regular expression {QUANTITY_RE}")
    try:
        q = parse_quantity(str(raw))
    except QuantityError:
        raise ApiError(400, "BadRequest", f'{kind} in version "v1" cannot be handled as a {kind}: {field}: '
                                          f"quantities must match the regular expression {QUANTITY_RE}") from None
    return -1 if q < 0 else (1 if q > 0 else 0)


def _resource_list(kind: str, field: str, rl: Any, causes: list[tuple[str, str, str]]) -> None:
    if rl is None:
        return
    if not isinstance(rl, dict):
        raise ApiError(400, "BadRequest", f'{kind} in version "v1" cannot be handled as a {kind}: {field}: '
                                          "expected a map of resource names to quantities")
    for res, raw in rl.items():
        if _quantity(kind, f"{field}[{res}]", raw) < 0:
            causes.append((f"{field}[{res}]", "FieldValueInvalid",
                           f'Invalid value: "{raw}": must be greater than or equal to 0'))


PriorityLookup = Callable[[str], Obj | None]


def _default_requests_from_limits(container: Obj) -> None:
    """``SetDefaults_Pod``: a resource with a limit and no request gets the limit as its request, for
    every resource (an extended resource such as ``nvidia.com/gpu`` too), in app and init containers."""
    res = container.get("resources")
    if not isinstance(res, dict) or not isinstance(res.get("limits"), dict) or not res["limits"]:
        return
    requests = res.get("requests")
    if not isinstance(requests, dict):
        requests = res["requests"] = {}
    for name, value in res["limits"].items():
        requests.setdefault(name, value)


def default_pod(pod: Obj, classes: PriorityLookup, global_default: Callable[[], Obj | None]) -> None:
    """Default and validate a pod being created (already type-checked: ``typecheck.check_types``), as
    kube-apiserver does in that order (mutates ``pod``); raises ``ApiError``: 400 for an unparsable
    quantity, 422 for what ``ValidatePodCreate`` refuses, 403 for the Priority admission plugin's
    refusals."""
    from scheduler.simulator.validation import validate_pod

    meta = pod.setdefault("metadata", {})
    name = meta.get("name", "")
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise invalid("Pod", name, [("spec.containers", "FieldValueRequired", "Required value")])
    causes: list[tuple[str, str, str]] = []
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            path = f"spec.{group}[{i}]"
            res = c.get("resources") or {}
            _resource_list("Pod", f"{path}.resources.requests", res.get("requests"), causes)
            _resource_list("Pod", f"{path}.resources.limits", res.get("limits"), causes)
            # Defaulting (SetDefaults_Pod, SetDefaults_ContainerPort) runs before validation.
            _default_requests_from_limits(c)
            for p in c.get("ports") or []:
                p.setdefault("protocol", "TCP")
                if spec.get("hostNetwork") and not p.get("hostPort"):
                    p["hostPort"] = p.get("containerPort")
    causes = validate_pod(pod) + causes
    for group in ("initContainers", "containers"):
        for i, c in enumerate(spec.get(group) or []):
            path = f"spec.{group}[{i}]"
            res = c.get("resources") or {}
            for r, raw in (res.get("requests") or {}).items():
                lim = (res.get("limits") or {}).get(r)
                if lim is not None and parse_quantity(str(raw)) > parse_quantity(str(lim)):
                    causes.append((f"{path}.resources.requests", "FieldValueInvalid",
                                   f'Invalid value: "{raw}": must be less than or equal to {r} limit of {lim}'))
            image = str(c.get("image") or "")
            c.setdefault("imagePullPolicy", "Always" if (":" not in image.rsplit("/", 1)[-1]
                                                         or image.endswith(":latest")) else "IfNotPresent")
            c.setdefault("terminationMessagePath", "/dev/termination-log")
            c.setdefault("terminationMessagePolicy", "File")
            c.setdefault("resources", {})
    _resource_list("Pod", "spec.overhead", spec.get("overhead"), causes)
    if isinstance(spec.get("resources"), dict):
        _resource_list("Pod", "spec.resources.requests", spec["resources"].get("requests"), causes)
    if causes:
        raise invalid("Pod", name, causes)
    containers = spec.get("containers") or []
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    spec.setdefault("enableServiceLinks", True)
    _admit_priority(pod, name, spec, classes, global_default)
    tolerations = spec.setdefault("tolerations", [])
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key and t.get("effect") in (None, "", "NoExecute") for t in tolerations
                   if isinstance(t, dict)) and not any(isinstance(t, dict) and t.get("operator") == "Exists"
                                                       and not t.get("key") for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    status = pod.setdefault("status", {})
    status.setdefault("phase", "Pending")
    status.setdefault("qosClass", _qos(containers))
    # applySchedulingGatedCondition (the pod strategy's PrepareForCreate): a gated pod is created
    # with PodScheduled=False, reason SchedulingGated, unless it already has a PodScheduled condition.
    conditions = status.get("conditions") or []
    if spec.get("schedulingGates") and not any(isinstance(c, dict) and c.get("type") == "PodScheduled"
                                               for c in conditions):
        status["conditions"] = [*conditions, {"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                              "lastTransitionTime": now_iso(), "reason": "SchedulingGated",
                                              "message": "Scheduling is blocked due to non-empty scheduling gates"}]


def _admit_priority(pod: Obj, name: str, spec: Obj, classes: PriorityLookup,
                    global_default: Callable[[], Obj | None]) -> None:
    cls_name = spec.get("priorityClassName") or ""
    if cls_name:
        pc = classes(cls_name)
        if pc is None:
            raise ApiError(403, "Forbidden", f'pods "{name}" is forbidden: no PriorityClass with name {cls_name} '
                                             "was found")
    else:
        pc = global_default()
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    value = int(pc.get("value", 0)) if pc else 0
    policy = (pc.get("preemptionPolicy") if pc else None) or "PreemptLowerPriority"
    if spec.get("priority") is not None and spec["priority"] != value:
        raise ApiError(403, "Forbidden", f'pods "{name}" is forbidden: the integer value of priority '
                                         f"({spec['priority']}) must not be provided in pod spec; priority admission "
                                         f"controller computed {value} from the given PriorityClass name")
    if spec.get("preemptionPolicy") is not None and spec["preemptionPolicy"] != policy:
        raise ApiError(403, "Forbidden", f'pods "{name}" is forbidden: the string value of PreemptionPolicy '
                                         f"({spec['preemptionPolicy']}) must not be provided in pod spec; priority "
                                         f"admission controller computed {policy} from the given PriorityClass name")
    spec["priority"] = value
    spec["preemptionPolicy"] = policy


def _qos(containers: list[Obj]) -> str:
    any_set, guaranteed = False, True
    for c in containers:
        res = c.get("resources") or {}
        req, lim = res.get("requests") or {}, res.get("limits") or {}
        if req or lim:
            any_set = True
        for r in ("cpu", "memory"):
            if r not in lim or (r in req and str(req[r]) != str(lim[r])):
                guaranteed = False
    if not any_set:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def default_secret(secret: Obj) -> None:
    """The Secret strategy: ``stringData`` is written into ``data`` (base64, overriding) and never stored;
    ``type`` defaults to Opaque."""
    string_data = secret.pop("stringData", None)
    if isinstance(string_data, dict) and string_data:
        data = secret.setdefault("data", {})
        for k, v in string_data.items():
            data[k] = base64.b64encode(str(v).encode()).decode()
    secret.setdefault("type", "Opaque")


SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")


def default_service(svc: Obj, old: Obj | None, allocate: Callable[[], str]) -> None:
    """``SetDefaults_Service`` and the ClusterIP allocator, for what ``kubectl get svc`` and endpoints
    readers show: type ClusterIP, session affinity None, TCP ports targeting their port, one IPv4
    cluster IP (kept on update; none for ExternalName or a headless ``clusterIP: None``)."""
    spec = svc.setdefault("spec", {})
    kind = spec.setdefault("type", "ClusterIP")
    if kind != "ExternalName":
        spec.setdefault("sessionAffinity", "None")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    for port in spec.get("ports") or []:
        if isinstance(port, dict):
            port.setdefault("protocol", "TCP")
            if kind != "ExternalName":
                port.setdefault("targetPort", port.get("port"))
    if kind == "ExternalName":
        return
    old_ip = ((old or {}).get("spec") or {}).get("clusterIP")
    if old_ip and not spec.get("clusterIP"):
        spec["clusterIP"], spec["clusterIPs"] = old_ip, (old or {}).get("spec", {}).get("clusterIPs", [old_ip])
    elif not spec.get("clusterIP"):
        ip = allocate()
        spec["clusterIP"], spec["clusterIPs"] = ip, [ip]
    else:
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
    if spec["clusterIP"] != "None":
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")


WORKLOAD_STORES = frozenset({"apps/deployments", "apps/replicasets", "apps/statefulsets", "apps/daemonsets",
                             "batch/jobs", "/replicationcontrollers"})


def default_workload(store: str, obj: Obj) -> None:
    """``pkg/apis/apps/v1`` and ``batch/v1`` defaults (SetDefaults_Deployment, _StatefulSet, _DaemonSet,
    _ReplicaSet, _Job): what ``kubectl rollout status`` and the controllers read."""
    spec = obj["spec"]
    if store in ("apps/deployments", "apps/replicasets", "apps/statefulsets", "/replicationcontrollers"):
        spec.setdefault("replicas", 1)
    if store == "apps/deployments":
        strategy = spec.setdefault("strategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", "25%")
            rolling.setdefault("maxSurge", "25%")
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("progressDeadlineSeconds", 600)
    elif store == "apps/statefulsets":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = spec.setdefault("updateStrategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            strategy.setdefault("rollingUpdate", {}).setdefault("partition", 0)
        spec.setdefault("revisionHistoryLimit", 10)
        spec.setdefault("persistentVolumeClaimRetentionPolicy", {"whenDeleted": "Retain", "whenScaled": "Retain"})
    elif store == "apps/daemonsets":
        strategy = spec.setdefault("updateStrategy", {})
        if strategy.setdefault("type", "RollingUpdate") == "RollingUpdate":
            rolling = strategy.setdefault("rollingUpdate", {})
            rolling.setdefault("maxUnavailable", 1)
            rolling.setdefault("maxSurge", 0)
        spec.setdefault("revisionHistoryLimit", 10)
    elif store == "batch/jobs":
        if spec.get("completions") is None and spec.get("parallelism") is None:
            spec["completions"] = 1
        spec.setdefault("parallelism", 1)
        spec.setdefault("backoffLimit", 6)
        spec.setdefault("completionMode", "NonIndexed")
        spec.setdefault("suspend", False)
        spec.setdefault("podReplacementPolicy", "TerminatingOrFailed")


def default_job_selector(job: Obj) -> None:
    """``generateSelector``: a Job's selector is its controller-uid, and its template carries the labels."""
    spec = job.get("spec")
    if not isinstance(spec, dict) or spec.get("manualSelector") or spec.get("selector"):
        return
    uid, name = job["metadata"]["uid"], job["metadata"]["name"]
    spec["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    labels = spec.setdefault("template", {}).setdefault("metadata", {}).setdefault("labels", {})
    labels.update({"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": name,
                   "controller-uid": uid, "job-name": name})


def default_node(node: Obj) -> None:
    """Default and validate a node (``ValidateNode``'s labels and taints); raises ``ApiError``."""
    from scheduler.simulator.validation import validate_node

    name = node.get("metadata", {}).get("name", "")
    status = node.setdefault("status", {})
    causes: list[tuple[str, str, str]] = []
    _resource_list("Node", "status.capacity", status.get("capacity"), causes)
    _resource_list("Node", "status.allocatable", status.get("allocatable"), causes)
    causes = validate_node(node) + causes
    if causes:
        raise invalid("Node", name, causes)
    if "capacity" in status and "allocatable" not in status:
        status["allocatable"] = dict(status["capacity"])
    status.setdefault("conditions", [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                                      "message": "kubelet is posting ready status (simulated)"}])
    # Every NodeSystemInfo field is required in the API's schema: typed clients (the official Python
    # client, kubernetes_asyncio, lightkube) refuse a node without them. The IDs are stable per name.
    info = status.get("nodeInfo")
    if not isinstance(info, dict):
        info = status["nodeInfo"] = {}
    ident = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.nodes.simulated"))
    for key, value in (("machineID", ident.replace("-", "")), ("systemUUID", ident),
                       ("bootID", str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.boot.simulated"))),
                       ("kernelVersion", "6.1.0-sim"), ("osImage", "simulated"),
                       ("containerRuntimeVersion", "sim://1.0"), ("kubeletVersion", "v1.37.0-sim"),
                       ("kubeProxyVersion", ""), ("operatingSystem", "linux"), ("architecture", "amd64")):
        info.setdefault(key, value)


def validate_priority_class(pc: Obj, others: list[Obj]) -> None:
    name = pc.get("metadata", {}).get("name", "")
    value = pc.get("value")
    if not isinstance(value, int) or isinstance(value, bool):
        raise invalid("PriorityClass", name, [("value", "FieldValueRequired", "Required value")],
                      "scheduling.k8s.io")
    if name not in SYSTEM_CLASSES and value > HIGHEST_USER_PRIORITY:
        raise invalid("PriorityClass", name, [("value", "FieldValueForbidden",
                                               f"Forbidden: maximum allowed value of a user defined priority is "
                                               f"{HIGHEST_USER_PRIORITY}")], "scheduling.k8s.io")
    if pc.get("globalDefault"):
        for o in others:
            if o.get("globalDefault") and o["metadata"]["name"] != name:
                raise invalid("PriorityClass", name, [("globalDefault", "FieldValueInvalid",
                                                       f"Invalid value: true: globalDefault {o['metadata']['name']} "
                                                       "already exists")], "scheduling.k8s.io")
    pc.setdefault("preemptionPolicy", "PreemptLowerPriority")
