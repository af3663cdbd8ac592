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
validate (``validation``: 422s with upstream's causes), then admit. Errors are ``apierrors.ApiError``s;
the ObjectMeta rules every kind shares are in ``registry.meta``. The admission plugins that read other
objects are beside this module: ServiceAccount (``serviceaccount``) and LimitRanger (``limitrange``,
whose defaults ``default_pod`` takes as its ``mutate`` step, before validation), and ResourceQuota
(``resourcequota``), which the create handler runs last, for every kind.
"""

from __future__ import annotations

import base64
import ipaddress
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from scheduler.errors import QuantityError
from scheduler.quantity import parse_quantity
from scheduler.simulator.apierrors import ApiError, invalid
from scheduler.simulator.registry.core.podlevel import pod_level_consistency
from scheduler.simulator.registry.core.validation import validate_node, validate_pod
from scheduler.simulator.registry.meta import QUANTITY_RE, now_iso

__all__ = ["SERVICE_CIDR", "default_node", "default_pod", "default_secret", "default_service"]

Obj = dict[str, Any]


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


def default_pod(pod: Obj, classes: PriorityLookup, global_default: Callable[[], Obj | None],
                mutate: Callable[[Obj], None] | None = None) -> None:
    """Default and validate a pod being created (already type-checked: ``typecheck.check_types``), as
    kube-apiserver does in that order (mutates ``pod``); raises ``ApiError``: 400 for an unparsable
    quantity, 422 for what ``ValidatePodCreate`` refuses, 403 for the Priority admission plugin's
    refusals. ``mutate`` is the mutating admission that runs between decoding's defaults and
    validation (LimitRanger's defaults)."""
    meta = pod.setdefault("metadata", {})
    name = meta.get("name", "")
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        raise invalid("Pod", name, [("spec.containers", "FieldValueRequired", "Required value")])
    causes: list[tuple[str, str, str]] = []
    _default_containers(spec, causes)
    if mutate is not None:
        mutate(pod)
    _merge_label_keys(spec, meta.get("labels"))
    causes = validate_pod(pod) + causes
    _check_limits_and_default(spec, causes)
    _resource_list("Pod", "spec.overhead", spec.get("overhead"), causes)
    if isinstance(spec.get("resources"), dict):
        _resource_list("Pod", "spec.resources.requests", spec["resources"].get("requests"), causes)
        if not causes:
            causes += pod_level_consistency(spec)
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
    _default_tolerations(spec.setdefault("tolerations", []))
    _initial_status(pod, spec, containers)


def _label_keys_into_selector(selector: Any, keys: Any, operator: str, labels: Mapping[str, Any]) -> None:
    """``applyLabelKeysToLabelSelector``: ``key <operator> (the pod's value)`` for each key the pod
    has a label for, appended to the selector's matchExpressions."""
    for key in keys or ():
        if isinstance(key, str) and key in labels:
            selector.setdefault("matchExpressions", []).append(
                {"key": key, "operator": operator, "values": [labels[key]]})


def _merge_label_keys(spec: Obj, labels: Any) -> None:
    """The pod strategy's PrepareForCreate (pkg/registry/core/pod/strategy.go): ``mutatePodAffinity``
    (MatchLabelKeysInPodAffinity, GA and locked) merges every pod (anti-)affinity term's
    ``matchLabelKeys`` (In) and ``mismatchLabelKeys`` (NotIn) into its labelSelector, and
    ``mutateTopologySpreadConstraints`` (MatchLabelKeysInPodTopologySpreadSelectorMerge, beta and
    on since 1.34) a spread constraint's ``matchLabelKeys``; a term without a labelSelector is left
    alone (it matches nothing). The keys stay in the spec."""
    labels = labels if isinstance(labels, dict) else {}
    affinity = spec.get("affinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        section = affinity.get(kind) if isinstance(affinity, dict) else None
        if not isinstance(section, dict):
            continue
        terms = [t for t in section.get("requiredDuringSchedulingIgnoredDuringExecution") or ()]
        terms += [w.get("podAffinityTerm") for w in section.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
                  if isinstance(w, dict)]
        for term in terms:
            if not isinstance(term, dict) or not isinstance(term.get("labelSelector"), dict):
                continue
            _label_keys_into_selector(term["labelSelector"], term.get("matchLabelKeys"), "In", labels)
            _label_keys_into_selector(term["labelSelector"], term.get("mismatchLabelKeys"), "NotIn", labels)
    for c in spec.get("topologySpreadConstraints") or ():
        if isinstance(c, dict) and isinstance(c.get("labelSelector"), dict):
            _label_keys_into_selector(c["labelSelector"], c.get("matchLabelKeys"), "In", labels)


def _default_containers(spec: Obj, causes: list[tuple[str, str, str]]) -> None:
    """Before validation: each container's quantities parsed (a cause each that does not), requests
    defaulted from limits, and ports' protocol (and hostPort on the host network) defaulted
    (SetDefaults_Pod, SetDefaults_ContainerPort)."""
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


def _check_limits_and_default(spec: Obj, causes: list[tuple[str, str, str]]) -> None:
    """After validation: each container's requests within its limits (a cause each that is not), and its
    imagePullPolicy, termination message and resources defaulted."""
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


def _default_tolerations(tolerations: list[Any]) -> None:
    """The DefaultTolerationSeconds admission plugin: not-ready and unreachable, NoExecute, 300 s, unless
    the pod tolerates them already."""
    for key in ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"):
        if not any(t.get("key") == key and t.get("effect") in (None, "", "NoExecute") for t in tolerations
                   if isinstance(t, dict)) and not any(isinstance(t, dict) and t.get("operator") == "Exists"
                                                       and not t.get("key") for t in tolerations):
            tolerations.append({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})


def _initial_status(pod: Obj, spec: Obj, containers: list[Obj]) -> None:
    """Pending, the QoS class, and a gated pod's PodScheduled=False condition."""
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
    # ServiceStatus.LoadBalancer is a struct, so kube-apiserver always writes it, empty or not.
    status = svc.get("status")
    if status is None or isinstance(status, dict):
        svc["status"] = {**(status or {}), "loadBalancer": (status or {}).get("loadBalancer") or {}}
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


def default_node(node: Obj) -> None:
    """Default and validate a node (``ValidateNode``'s labels and taints); raises ``ApiError``."""
    name = node.get("metadata", {}).get("name", "")
    if node.get("spec") is None:
        node["spec"] = {}          # NodeSpec is a struct: an empty one is written as {}
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
