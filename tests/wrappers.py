"""A Python port of upstream's test builders (``pkg/scheduler/testing/wrappers.go``), so that tables
from upstream's ``*_test.go`` read here nearly line for line::

    MakePod().Name("p").Label("foo", "").SpreadConstraint(1, "zone", DO_NOT_SCHEDULE, foo_selector).Obj()
    MakeNode().Name("node-a").Label("zone", "zone1").Obj()

The builders write the API JSON and ``Obj()`` parses it with the scheduler's own parsers
(``parse_pod``, ``parse_node``), so a ported case goes through exactly what a real object goes
through. As upstream's, ``MakePod()`` has no containers until ``Req`` adds one, and its namespace is
upstream's empty one (which the parser reads as ``default``, as the API server would default it).
Method names keep upstream's spelling, so a ported table can be compared with its source by eye.
"""

from __future__ import annotations

import copy
from typing import Any

from scheduler.model import Node, Pod, parse_node, parse_pod

__all__ = ["DO_NOT_SCHEDULE", "SCHEDULE_ANYWAY", "MakeLabelSelector", "MakeNode", "MakePod"]

DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


class MakeLabelSelector:
    """``st.MakeLabelSelector()``: ``Label``, ``Exists``, ``NotExist``, ``In``, ``NotIn``."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._exprs: list[dict[str, Any]] = []

    def Label(self, key: str, value: str) -> MakeLabelSelector:
        self._labels[key] = value
        return self

    def Exists(self, key: str) -> MakeLabelSelector:
        self._exprs.append({"key": key, "operator": "Exists"})
        return self

    def NotExist(self, key: str) -> MakeLabelSelector:
        self._exprs.append({"key": key, "operator": "DoesNotExist"})
        return self

    def In(self, key: str, values: list[str]) -> MakeLabelSelector:
        self._exprs.append({"key": key, "operator": "In", "values": list(values)})
        return self

    def NotIn(self, key: str, values: list[str]) -> MakeLabelSelector:
        self._exprs.append({"key": key, "operator": "NotIn", "values": list(values)})
        return self

    def Obj(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self._labels:
            out["matchLabels"] = dict(self._labels)
        if self._exprs:
            out["matchExpressions"] = copy.deepcopy(self._exprs)
        return out


class MakePod:
    """``st.MakePod()``."""

    def __init__(self) -> None:
        self._obj: dict[str, Any] = {"metadata": {"name": "", "namespace": "", "labels": {}},
                                     "spec": {"containers": []}, "status": {}}

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._obj["spec"]
        return spec

    def Name(self, name: str) -> MakePod:
        self._obj["metadata"]["name"] = name
        return self

    def Namespace(self, namespace: str) -> MakePod:
        self._obj["metadata"]["namespace"] = namespace
        return self

    def UID(self, uid: str) -> MakePod:
        self._obj["metadata"]["uid"] = uid
        return self

    def Label(self, key: str, value: str) -> MakePod:
        self._obj["metadata"]["labels"][key] = value
        return self

    def Node(self, name: str) -> MakePod:
        self._spec["nodeName"] = name
        return self

    def Priority(self, value: int) -> MakePod:
        self._spec["priority"] = value
        return self

    def Terminating(self) -> MakePod:
        self._obj["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def Req(self, requests: dict[str, str]) -> MakePod:
        """A container with these requests (one more container per call)."""
        n = len(self._spec["containers"])
        self._spec["containers"].append({"name": f"con{n}", "image": "image",
                                         "resources": {"requests": dict(requests)}})
        return self

    def NodeSelector(self, selector: dict[str, str]) -> MakePod:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def NodeAffinityIn(self, key: str, values: list[str]) -> MakePod:
        """``NodeAffinityIn(key, vals, st.NodeAffinityWithRequiredReq)``: a required term."""
        terms = (self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                 .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
                 .setdefault("nodeSelectorTerms", [{"matchExpressions": []}]))
        terms[0]["matchExpressions"].append({"key": key, "operator": "In", "values": list(values)})
        return self

    def NodeAffinityNotIn(self, key: str, values: list[str]) -> MakePod:
        terms = (self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
                 .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
                 .setdefault("nodeSelectorTerms", [{"matchExpressions": []}]))
        terms[0]["matchExpressions"].append({"key": key, "operator": "NotIn", "values": list(values)})
        return self

    def Toleration(self, key: str) -> MakePod:
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def SpreadConstraint(self, max_skew: int, key: str, when: str,
                         selector: dict[str, Any] | None, min_domains: int | None = None,
                         node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
                         match_label_keys: list[str] | None = None) -> MakePod:
        c: dict[str, Any] = {"maxSkew": max_skew, "topologyKey": key, "whenUnsatisfiable": when}
        if selector is not None:
            c["labelSelector"] = copy.deepcopy(selector)
        if min_domains is not None:
            c["minDomains"] = min_domains
        if node_affinity_policy is not None:
            c["nodeAffinityPolicy"] = node_affinity_policy
        if node_taints_policy is not None:
            c["nodeTaintsPolicy"] = node_taints_policy
        if match_label_keys is not None:
            c["matchLabelKeys"] = list(match_label_keys)
        self._spec.setdefault("topologySpreadConstraints", []).append(c)
        return self

    def _affinity_term(self, kind: str, key: str, selector: dict[str, Any], required: bool,
                       weight: int = 0) -> MakePod:
        term = {"labelSelector": copy.deepcopy(selector), "topologyKey": key}
        aff = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if required:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def PodAffinityExists(self, label_key: str, topology_key: str, required: bool = True,
                          weight: int = 1) -> MakePod:
        return self._affinity_term("podAffinity", topology_key,
                                   MakeLabelSelector().Exists(label_key).Obj(), required, weight)

    def PodAntiAffinityExists(self, label_key: str, topology_key: str, required: bool = True,
                              weight: int = 1) -> MakePod:
        return self._affinity_term("podAntiAffinity", topology_key,
                                   MakeLabelSelector().Exists(label_key).Obj(), required, weight)

    def PVC(self, name: str) -> MakePod:
        """``PVC(name)``: a volume named ``name`` using the claim ``name``."""
        return self.Volume({"name": name, "persistentVolumeClaim": {"claimName": name}})

    def Volume(self, volume: dict[str, Any]) -> MakePod:
        """``Volume(v1.Volume{...})``, written as the API JSON of the volume."""
        self._spec.setdefault("volumes", []).append(copy.deepcopy(volume))
        return self

    def Obj(self) -> Pod:
        return parse_pod(copy.deepcopy(self._obj))


class MakeNode:
    """``st.MakeNode()``: ``Capacity`` sets both capacity and allocatable, as upstream's does."""

    def __init__(self) -> None:
        self._obj: dict[str, Any] = {"metadata": {"name": "", "labels": {}}, "spec": {},
                                     "status": {"allocatable": {"pods": "32"}}}

    def Name(self, name: str) -> MakeNode:
        self._obj["metadata"]["name"] = name
        return self

    def Label(self, key: str, value: str) -> MakeNode:
        self._obj["metadata"]["labels"][key] = value
        return self

    def Capacity(self, resources: dict[str, str]) -> MakeNode:
        self._obj["status"]["capacity"] = dict(resources)
        self._obj["status"]["allocatable"] = dict(resources)
        return self

    def Taints(self, taints: list[dict[str, str]]) -> MakeNode:
        self._obj["spec"]["taints"] = copy.deepcopy(taints)
        return self

    def Unschedulable(self, value: bool) -> MakeNode:
        self._obj["spec"]["unschedulable"] = value
        return self

    def Obj(self) -> Node:
        return parse_node(copy.deepcopy(self._obj))
