"""``st``: a Python port of upstream's test builders (``pkg/scheduler/testing/wrappers.go``), so a
table from an upstream ``*_test.go`` reads here nearly line for line::

    # st.MakePod().Name("p").Node("node1").Req(map[v1.ResourceName]string{"cpu": "1000"}).Obj()
    st.MakePod().Name("p").Node("node1").Req({"cpu": "1000"}).Obj()
    # st.MakeNode().Name("node1").Capacity(map[v1.ResourceName]string{"cpu": "4000"}).Obj()
    st.MakeNode().Name("node1").Capacity({"cpu": "4000"}).Obj()

Import it as ``from tests import st``; method names and arguments keep upstream's spelling and
order, and quantities stay the strings upstream writes (``"cpu": "4000"`` is 4000 CPUs).

**Objects go through the parsers.** A builder writes the API JSON (``_obj``) and ``Obj()`` parses a
copy with ``scheduler.model.parse_pod`` / ``parse_node``, so a ported case sees exactly what a real
object would. ``Obj()`` can be called again after more calls; each call parses afresh.

**Where a parsed object must differ from upstream's.**

* Pods: upstream's objects have no UID unless ``UID`` sets one, and upstream keeps pods as
  pointers, so two nameless pods on a node are two pods. Our cache tells pods apart by UID, so
  ``Obj()`` gives a pod without ``UID`` a unique one (``st-pod-<n>``). A test that compares UIDs
  sets them, as upstream's do. The empty namespace is read as ``default``, as the API server
  defaults it.
* Nodes: the parser requires a name, as the API server does; ``MakeNode()`` without ``Name`` is
  called ``node``.

**Extending.** Add a method per upstream method, same name and arguments, writing the JSON field
the Go code sets; return ``Self`` so chains keep their type. Container-producing methods share
``_container`` (upstream's ``MakeContainer()...Obj()``). A selector argument (``SpreadConstraint``,
``PodAffinity``...) should take the API JSON of a ``metav1.LabelSelector`` (a dict), which a
``MakeLabelSelector`` port can build.

This is the only port: the volume, spreading and affinity tables use it too
(``MakeLabelSelector``, ``SpreadConstraint``, ``PodAffinityExists``, ``PVC``, ``Taints``...).
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any, Self

from scheduler.model import Node, Pod, parse_node, parse_pod

__all__ = ["DO_NOT_SCHEDULE", "PAUSE_IMAGE", "SCHEDULE_ANYWAY", "MakeLabelSelector", "MakeNode", "MakePod"]

# imageutils.GetPauseImageName(): the image upstream's container builders use.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
_uids = itertools.count()

# v1.DoNotSchedule and v1.ScheduleAnyway, the two whenUnsatisfiable values.
DO_NOT_SCHEDULE = "DoNotSchedule"
SCHEDULE_ANYWAY = "ScheduleAnyway"


def _container(name: str, image: str = PAUSE_IMAGE, *, requests: Mapping[str, str] | None = None,
               limits: Mapping[str, str] | None = None, restart_policy: str | None = None) -> dict[str, Any]:
    """``MakeContainer().Name(name).Image(image)...Obj()`` as API JSON."""
    c: dict[str, Any] = {"name": name, "image": image}
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = dict(requests)
    if limits is not None:
        resources["limits"] = dict(limits)
    if resources:
        c["resources"] = resources
    if restart_policy is not None:
        c["restartPolicy"] = restart_policy
    return c


class MakeLabelSelector:
    """``st.MakeLabelSelector()``: ``Label``, ``Exists``, ``NotExist``, ``In``, ``NotIn``; ``Obj()``
    is the API JSON of a ``metav1.LabelSelector``."""

    def __init__(self) -> None:
        self._labels: dict[str, str] = {}
        self._exprs: list[dict[str, Any]] = []

    def Label(self, key: str, value: str) -> Self:
        self._labels[key] = value
        return self

    def Exists(self, key: str) -> Self:
        self._exprs.append({"key": key, "operator": "Exists"})
        return self

    def NotExist(self, key: str) -> Self:
        self._exprs.append({"key": key, "operator": "DoesNotExist"})
        return self

    def In(self, key: str, values: list[str]) -> Self:
        self._exprs.append({"key": key, "operator": "In", "values": list(values)})
        return self

    def NotIn(self, key: str, values: list[str]) -> Self:
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
    """``st.MakePod()``: a pod with no name, namespace or containers until calls add them."""

    def __init__(self) -> None:
        self._obj: dict[str, Any] = {"metadata": {"name": "", "namespace": ""}, "spec": {"containers": []},
                                     "status": {}}

    @property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self._obj["metadata"]
        return meta

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._obj["spec"]
        return spec

    # --- metadata ----------------------------------------------------------------------------
    def Name(self, s: str) -> Self:
        self._meta["name"] = s
        return self

    def Namespace(self, s: str) -> Self:
        self._meta["namespace"] = s
        return self

    def UID(self, s: str) -> Self:
        self._meta["uid"] = s
        return self

    def Label(self, k: str, v: str) -> Self:
        self._meta.setdefault("labels", {})[k] = v
        return self

    # --- spec ----------------------------------------------------------------------------------
    def Node(self, s: str) -> Self:
        """``spec.nodeName``."""
        self._spec["nodeName"] = s
        return self

    def Container(self, s: str) -> Self:
        """A container ``con<i>`` running image ``s``, without resources."""
        containers = self._spec["containers"]
        containers.append(_container(f"con{len(containers)}", s))
        return self

    def Req(self, req_map: Mapping[str, str]) -> Self:
        """A container ``con<i>`` requesting ``req_map``; an empty map adds nothing, as upstream's."""
        if not req_map:
            return self
        containers = self._spec["containers"]
        containers.append(_container(f"con{len(containers)}", requests=req_map))
        return self

    def InitReq(self, res_map: Mapping[str, str]) -> Self:
        """An init container ``init-con<i>`` with ``res_map`` as requests and limits
        (``MakeContainer().Resources``); an empty map adds nothing."""
        if not res_map:
            return self
        inits = self._spec.setdefault("initContainers", [])
        inits.append(_container(f"init-con{len(inits)}", requests=res_map, limits=res_map))
        return self

    def SidecarReq(self, res_map: Mapping[str, str]) -> Self:
        """A restartable init container (``restartPolicy: Always``, a sidecar) ``sidecar-con<i>``
        with ``res_map`` as requests and limits; an empty map adds nothing."""
        if not res_map:
            return self
        inits = self._spec.setdefault("initContainers", [])
        inits.append(_container(f"sidecar-con{len(inits)}", requests=res_map, limits=res_map,
                                restart_policy="Always"))
        return self

    def Overhead(self, rl: Mapping[str, str]) -> Self:
        """``spec.overhead``."""
        self._spec["overhead"] = dict(rl)
        return self

    def Resources(self, resources: Mapping[str, Mapping[str, str]]) -> Self:
        """Pod-level ``spec.resources`` (a ``v1.ResourceRequirements``: ``requests``, ``limits``)."""
        self._spec["resources"] = copy.deepcopy(dict(resources))
        return self

    def PodLevelResourceRequests(self, req_map: Mapping[str, str]) -> Self:
        """Pod-level requests: ``spec.resources`` with ``requests`` only."""
        return self.Resources({"requests": req_map})

    def Priority(self, value: int) -> Self:
        self._spec["priority"] = value
        return self

    def Terminating(self) -> Self:
        """``metadata.deletionTimestamp`` set."""
        self._meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def NodeSelector(self, selector: Mapping[str, str]) -> Self:
        self._spec["nodeSelector"] = dict(selector)
        return self

    def _required_node_terms(self) -> list[dict[str, Any]]:
        terms: list[dict[str, Any]] = (
            self._spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
            .setdefault("requiredDuringSchedulingIgnoredDuringExecution", {})
            .setdefault("nodeSelectorTerms", [{"matchExpressions": []}]))
        return terms

    def NodeAffinityIn(self, key: str, values: list[str]) -> Self:
        """``NodeAffinityIn(key, vals, st.NodeAffinityWithRequiredReq)``: a required term."""
        self._required_node_terms()[0]["matchExpressions"].append(
            {"key": key, "operator": "In", "values": list(values)})
        return self

    def NodeAffinityNotIn(self, key: str, values: list[str]) -> Self:
        self._required_node_terms()[0]["matchExpressions"].append(
            {"key": key, "operator": "NotIn", "values": list(values)})
        return self

    def Toleration(self, key: str) -> Self:
        """A toleration of ``key`` with operator ``Exists``."""
        self._spec.setdefault("tolerations", []).append({"key": key, "operator": "Exists"})
        return self

    def SpreadConstraint(self, max_skew: int, key: str, when: str,
                         selector: dict[str, Any] | None, min_domains: int | None = None,
                         node_affinity_policy: str | None = None, node_taints_policy: str | None = None,
                         match_label_keys: list[str] | None = None) -> Self:
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
                       weight: int = 0) -> Self:
        term = {"labelSelector": copy.deepcopy(selector), "topologyKey": key}
        aff = self._spec.setdefault("affinity", {}).setdefault(kind, {})
        if required:
            aff.setdefault("requiredDuringSchedulingIgnoredDuringExecution", []).append(term)
        else:
            aff.setdefault("preferredDuringSchedulingIgnoredDuringExecution", []).append(
                {"weight": weight, "podAffinityTerm": term})
        return self

    def PodAffinityExists(self, label_key: str, topology_key: str, required: bool = True,
                          weight: int = 1) -> Self:
        return self._affinity_term("podAffinity", topology_key,
                                   MakeLabelSelector().Exists(label_key).Obj(), required, weight)

    def PodAntiAffinityExists(self, label_key: str, topology_key: str, required: bool = True,
                              weight: int = 1) -> Self:
        return self._affinity_term("podAntiAffinity", topology_key,
                                   MakeLabelSelector().Exists(label_key).Obj(), required, weight)

    def PVC(self, name: str) -> Self:
        """``PVC(name)``: a volume named ``name`` using the claim ``name``."""
        return self.Volume({"name": name, "persistentVolumeClaim": {"claimName": name}})

    def Volume(self, volume: dict[str, Any]) -> Self:
        """``Volume(v1.Volume{...})``, written as the API JSON of the volume."""
        self._spec.setdefault("volumes", []).append(copy.deepcopy(volume))
        return self

    # --- result --------------------------------------------------------------------------------
    def Obj(self) -> Pod:
        obj = copy.deepcopy(self._obj)
        if not obj["metadata"].get("uid"):
            obj["metadata"]["uid"] = f"st-pod-{next(_uids)}"
        return parse_pod(obj)


class MakeNode:
    """``st.MakeNode()``: as upstream's, it starts with ``Capacity(nil)``, i.e. 32 pods."""

    def __init__(self) -> None:
        self._obj: dict[str, Any] = {"metadata": {"name": ""}, "spec": {}, "status": {}}
        self.Capacity({})

    def Name(self, s: str) -> Self:
        self._obj["metadata"]["name"] = s
        return self

    def Label(self, k: str, v: str) -> Self:
        self._obj["metadata"].setdefault("labels", {})[k] = v
        return self

    def Capacity(self, resources: Mapping[str, str]) -> Self:
        """Capacity and allocatable both ``resources``, over a default of 32 pods."""
        res = {"pods": "32", **resources}
        self._obj["status"]["capacity"] = dict(res)
        self._obj["status"]["allocatable"] = dict(res)
        return self

    def Taints(self, taints: list[dict[str, str]]) -> Self:
        self._obj["spec"]["taints"] = copy.deepcopy(taints)
        return self

    def Unschedulable(self, value: bool) -> Self:
        self._obj["spec"]["unschedulable"] = value
        return self

    def Obj(self) -> Node:
        obj = copy.deepcopy(self._obj)
        obj["metadata"]["name"] = obj["metadata"]["name"] or "node"
        return parse_node(obj)
