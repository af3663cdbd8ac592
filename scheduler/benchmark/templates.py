"""scheduler_perf's object templates: upstream's ``templates/*.yaml`` pods, nodes and Services.

``TEMPLATES`` holds the pod templates by upstream's file name (without ``.yaml``), with the same
requests, labels, selectors and namespaces; the PodGroup, batching and NodeDeclaredFeatures pods are
their families' (``podgroups.py``, ``batching.py``, ``declaredfeatures.py``), merged in here, and
the DRA pods (``dra/templates``) come last (``dynamicresources.py`` holds the DRA objects that are
not pods). ``make_node`` is ``node-default.yaml`` (4 CPU, 32Gi, 110 pods, Ready, with
``kubernetes.io/hostname`` as a kubelet sets it, so hostname-keyed affinity really constrains
placement); ``SERVICES`` the Services ``createAny`` or churn creates. ``workloads.py`` says which
workload uses which.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.benchmark import batching, declaredfeatures
from scheduler.benchmark.podgroups import POD_TEMPLATES as GROUP_POD_TEMPLATES

__all__ = ["NAMED_NODE", "SERVICES", "TEMPLATES", "extended_resource_pod", "make_node", "service_object", "template"]

Obj = dict[str, Any]


ZONE = "topology.kubernetes.io/zone"
PAUSE = "registry.k8s.io/pause:3.10.1"


def _pod(prefix: str, *, cpu: str = "100m", memory: str = "500Mi", labels: dict[str, str] | None = None,
         priority: int | None = None, spec: Obj | None = None) -> Obj:
    body: Obj = {"containers": [{"name": "pause", "image": PAUSE, "ports": [{"containerPort": 80}],
                                 "resources": {"requests": {"cpu": cpu, "memory": memory},
                                               "limits": {"cpu": cpu, "memory": memory}}}],
                 **(spec or {})}
    if priority is not None:
        body["priority"] = priority
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": prefix, "labels": labels or {}},
            "spec": body}


def _term(labels: dict[str, str], key: str, namespaces: list[str] | None = None) -> Obj:
    t: Obj = {"labelSelector": {"matchLabels": labels}, "topologyKey": key}
    if namespaces is not None:
        t["namespaces"] = namespaces
    return t


HOST = "kubernetes.io/hostname"
SCHED_NS = ["sched-1", "sched-0"]
# node-with-name.yaml's node: SchedulingDaemonset's and SchedulingWhileGated's pods all go there.
NAMED_NODE = "scheduler-perf-node"
EXTENDED_RESOURCE = "foo.com/bar-"

# upstream's templates/*.yaml
TEMPLATES: dict[str, Obj] = {
    "pod-default": _pod("pod-"),
    "pod-low-priority": _pod("low-priority-pod-", cpu="900m", priority=0,
                             spec={"terminationGracePeriodSeconds": 0}),
    "pod-high-priority": _pod("high-priority-pod-", cpu="3000m", priority=10),
    "pod-large-cpu": _pod("large-cpu-pod-", cpu="9"),
    "pod-high-priority-large-cpu": _pod("large-cpu-pod-", cpu="9", priority=10),
    "pod-with-node-affinity": _pod("node-affinity-", spec={"affinity": {"nodeAffinity": {
        "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": ZONE, "operator": "In", "values": ["zone1", "zone2"]}]}]}}}}),
    "pod-with-topology-spreading": _pod("spreading-pod-", labels={"color": "blue"}, spec={
        "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "DoNotSchedule",
                                       "labelSelector": {"matchLabels": {"color": "blue"}}}]}),
    "pod-with-preferred-topology-spreading": _pod("spreading-pod-", labels={"color": "blue"}, spec={
        "topologySpreadConstraints": [{"maxSkew": 5, "topologyKey": ZONE, "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"color": "blue"}}}]}),
    "pod-with-pod-anti-affinity": _pod("anti-affinity-pod-", labels={"color": "green"}, spec={"affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term({"color": "green"}, HOST, SCHED_NS)]}}}),
    "pod-with-pod-affinity": _pod("affinity-pod-", labels={"color": "blue"}, spec={"affinity": {
        "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            _term({"color": "blue"}, ZONE, SCHED_NS)]}}}),
    "pod-with-preferred-pod-affinity": _pod("preferred-affinity-pod-", labels={"color": "red"}, spec={"affinity": {
        "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"podAffinityTerm": _term({"color": "red"}, HOST, SCHED_NS), "weight": 1}]}}}),
    "pod-with-preferred-pod-anti-affinity": _pod("preferred-anti-affinity-pod-", labels={"color": "yellow"},
                                                 spec={"affinity": {"podAntiAffinity": {
                                                     "preferredDuringSchedulingIgnoredDuringExecution": [
                                                         {"podAffinityTerm": _term({"color": "yellow"}, HOST,
                                                                                   SCHED_NS), "weight": 1}]}}}),
}


# The newer workloads' templates (upstream's templates/*.yaml and misc/templates/*.yaml).
# daemonset-pod.yaml: no requests, required node affinity to the one named node by metadata.name.
TEMPLATES["daemonset-pod"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "daemonset-", "labels": {}},
    "spec": {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
        {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [NAMED_NODE]}]}]}}},
             "containers": [{"name": "pause", "image": PAUSE}]}}
# light-pod.yaml: no requests, terminationGracePeriodSeconds 0 (a bound one is deleted at once).
TEMPLATES["light-pod"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "light-pod-", "labels": {}},
                          "spec": {"containers": [{"name": "pause", "image": PAUSE}],
                                   "terminationGracePeriodSeconds": 0}}
# gated-pod.yaml: one scheduling gate, never removed in SchedulingWhileGated.
TEMPLATES["gated-pod"] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "gated-pod-", "labels": {}},
                          "spec": {"schedulingGates": [{"name": "test.k8s.io/hold"}],
                                   "containers": [{"name": "pause", "image": PAUSE}]}}
# pod-with-finalizer.yaml: the finalizer holds a deleted pod (deletionTimestamp set) for good.
TEMPLATES["pod-with-finalizer"] = {"apiVersion": "v1", "kind": "Pod",
                                   "metadata": {"generateName": "pod-", "labels": {},
                                                "finalizers": ["test.k8s.io/finalizer"]},
                                   "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}
# pod-with-pod-anti-affinity-label.yaml: matched by pod-with-pod-anti-affinity's term, no affinity itself.
TEMPLATES["pod-with-pod-anti-affinity-label"] = _pod("anti-affinity-matching-pod-", labels={"color": "green"})
# pod-with-node-inclusion-policy.yaml: hostname spreading, maxSkew 1, over the nodes both policies
# admit. upstream's file spells the fields NodeAffinityPolicy/NodeTaintsPolicy; Go's YAML-to-JSON
# decoding matches field names without regard to case, so they arrive as the API's camelCase ones.
TEMPLATES["pod-with-node-inclusion-policy"] = _pod(
    "spreading-pod-with-node-inclusion-policy-", labels={"foo": "bar"}, spec={"topologySpreadConstraints": [
        {"maxSkew": 1, "topologyKey": HOST, "whenUnsatisfiable": "DoNotSchedule", "nodeAffinityPolicy": "Honor",
         "nodeTaintsPolicy": "Honor", "labelSelector": {"matchLabels": {"foo": "bar"}}}]})
# The namespaceSelector templates (team=devops, the label namespace-with-labels.yaml gives).
_DEVOPS = {"matchLabels": {"team": "devops"}}
TEMPLATES["pod-anti-affinity-ns-selector"] = _pod("anti-affinity-pod-", labels={"color": "green"}, spec={"affinity": {
    "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term({"color": "green"}, HOST), "namespaceSelector": _DEVOPS}]}}})
TEMPLATES["pod-preferred-anti-affinity-ns-selector"] = _pod("anti-affinity-pod-", labels={"color": "green"}, spec={
    "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": {**_term({"color": "green"}, HOST), "namespaceSelector": _DEVOPS}, "weight": 1}]}}})
TEMPLATES["pod-affinity-ns-selector"] = _pod("affinity-pod-", labels={"color": "blue"}, spec={"affinity": {
    "podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {**_term({"color": "blue"}, ZONE), "namespaceSelector": _DEVOPS}]}}})
TEMPLATES["pod-preferred-affinity-ns-selector"] = _pod("preferred-affinity-pod-", labels={"color": "red"}, spec={
    "affinity": {"podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"podAffinityTerm": {**_term({"color": "red"}, HOST), "namespaceSelector": _DEVOPS}, "weight": 1}]}}})
# misc/templates/pod-with-extended-resource.yaml: pod i (test-extended-resource-<i>) asks for one
# foo.com/bar-<i>, which only node i has (extended_resource_pod fills the index in).
TEMPLATES["pod-with-indexed-extended-resource"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-extended-resource-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE, "resources": {}}]}}

# templates/pod-with-label.yaml: no requests, selected by templates/service.yaml.
TEMPLATES["pod-with-label"] = {"apiVersion": "v1", "kind": "Pod",
                               "metadata": {"generateName": "pod-", "labels": {"app": "scheduler-perf"}},
                               "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}

# podgroup/*/templates and workload_preemption/templates (scheduler/benchmark/podgroups.py); the
# batching and nodedeclaredfeatures pods (batching.py, declaredfeatures.py).
TEMPLATES.update(GROUP_POD_TEMPLATES)
TEMPLATES.update(batching.POD_TEMPLATES)
TEMPLATES.update(declaredfeatures.POD_TEMPLATES)

# Objects other than pods, created with ``createAny`` or churned: upstream's templates/service.yaml
# and templates/churn/service-default.yaml.
SERVICES: dict[str, Obj] = {
    "service": {"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-"},
                "spec": {"selector": {"app": "scheduler-perf"},
                         "ports": [{"protocol": "TCP", "port": 80, "targetPort": 8000}]}},
    "service-churn": {"apiVersion": "v1", "kind": "Service", "metadata": {"generateName": "service-churn-"},
                      "spec": {"selector": {"app": "foo"},
                               "ports": [{"protocol": "TCP", "port": 8080, "targetPort": 8080}]}},
}


def service_object(name: str, namespace: str, n: int = 0) -> Obj:
    """Service template ``name`` as an object named as generateName would (``service-0``, ...)."""
    base = SERVICES[name]
    return {**base, "metadata": {"name": f"{base['metadata']['generateName']}{n}", "namespace": namespace}}


def template(name: str) -> Obj:
    return TEMPLATES[name]


def make_node(name: str, labels: dict[str, str] | None = None, *, pods: str = "110", cpu: str = "4",
              memory: str = "32Gi", allocatable: dict[str, str] | None = None,
              capacity: dict[str, str] | None = None, taints: list[Obj] | None = None) -> Obj:
    """upstream's ``node-default.yaml`` (``churn/node-default.yaml`` is ``pods="0"`` and nothing else);
    ``allocatable`` is what a ``nodeAllocatableStrategy`` adds to the allocatable (not the capacity);
    ``capacity`` is more capacity in the template itself (the API copies it into the allocatable,
    ``SetDefaults_NodeStatus``); ``taints`` the template's ``spec.taints``."""
    cap = {"pods": pods, "cpu": cpu, "memory": memory} if pods != "0" else {"pods": "0"}
    cap.update(capacity or {})
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {HOST: name, **(labels or {})}},
            "spec": {"taints": taints} if taints else {},
            "status": {"capacity": cap, "allocatable": {**cap, **(allocatable or {})},
                       "conditions": [{"type": "Ready", "status": "True"}], "phase": "Running"}}


def extended_resource_pod(pod: Obj, i: int) -> Obj:
    """Pod ``i`` of ``pod-with-indexed-extended-resource``: one ``foo.com/bar-<i>`` requested and limited."""
    want = {f"{EXTENDED_RESOURCE}{i}": "1"}
    pod["spec"]["containers"][0]["resources"] = {"requests": dict(want), "limits": dict(want)}
    return pod


# --- the DRA workloads' pod templates (their other objects are dynamicresources.py's) ---------

_DRA_POD_SPEC: Obj = {"containers": [{"name": "pause", "image": PAUSE,
                                      "resources": {"claims": [{"name": "resource"}]}}]}
# pod-with-claim-template.yaml, pod-with-claim-ref.yaml (the claim test-claim-<i/5>: five pods share
# one) and pod-with-extended-resource*.yaml (example.com/gpu-<i mod classes>, set per pod by dra_pod)
TEMPLATES["pod-with-claim-template"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra", "labels": {}},
    "spec": {**copy.deepcopy(_DRA_POD_SPEC),
             "resourceClaims": [{"name": "resource", "resourceClaimTemplateName": "test-claim-template"}]}}
TEMPLATES["pod-with-claim-ref"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-", "labels": {}},
    "spec": {**copy.deepcopy(_DRA_POD_SPEC), "resourceClaims": [{"name": "resource", "resourceClaimName": ""}]}}
TEMPLATES["pod-with-extended-resource"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "test-dra-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE, "resources": {}}]}}
# pod-with-extended-resource-scoring.yaml: every pod asks for one example.com/gpu, which every
# scoring class backs (extendedresource/scoring/).
_SCORING_GPU = {"example.com/gpu": "1"}
TEMPLATES["pod-with-extended-resource-scoring"] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"generateName": "scoring-test-pod-", "labels": {}},
    "spec": {"containers": [{"name": "pause", "image": PAUSE,
                             "resources": {"requests": dict(_SCORING_GPU), "limits": dict(_SCORING_GPU)}}]}}
