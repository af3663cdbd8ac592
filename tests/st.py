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

``tests/wrappers.py`` is an earlier, partial port that other tables use; it differs in two ways
that matter for resource tables (its ``Req({})`` adds an empty container, its ``Capacity`` drops
the default 32 pods). New tables should use this module.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping
from typing import Any, Self

from scheduler.model import Node, Pod, parse_node, parse_pod

__all__ = ["PAUSE_IMAGE", "MakeNode", "MakePod"]

# imageutils.GetPauseImageName(): the image upstream's container builders use.
PAUSE_IMAGE = "registry.k8s.io/pause:3.10.1"
_uids = itertools.count()


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

    def Obj(self) -> Node:
        obj = copy.deepcopy(self._obj)
        obj["metadata"]["name"] = obj["metadata"]["name"] or "node"
        return parse_node(obj)
