"""``scheduler.dra.extended`` against upstream's ``extendeddynamicresources_test.go``
(``Test_createRequestsAndMappings_requests`` and ``_mappings``), with its pods: ``Res`` adds a
container ``con<n>``, ``InitReq`` an init container ``init-con<n>``, ``SidecarReq`` a restartable
init container ``sidecar-con<n>`` (``n`` counting within its list), and its class mappings
(``mockDeviceClassResolver``)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.dra.extended import is_dra_extended_resource_name, requests_and_mappings
from scheduler.model import parse_pod
from scheduler.model.dra import DeviceClass
from scheduler.model.pod import Pod

ERN = "example.com/gpu"
IMPLICIT_INIT = "deviceclass.resource.kubernetes.io/classInit"


def make_pod(*containers: tuple[str, dict[str, str]]) -> Pod:
    """(kind, requests) per container, kind ``Res``, ``InitReq`` or ``SidecarReq``, in call order."""
    spec: dict[str, list[dict[str, Any]]] = {"containers": [], "initContainers": []}
    for kind, requests in containers:
        if kind == "Res":
            spec["containers"].append({"name": f"con{len(spec['containers'])}", "resources": {"requests": requests}})
        else:
            n = len(spec["initContainers"])
            c: dict[str, Any] = {"name": f"{'init' if kind == 'InitReq' else 'sidecar'}-con{n}",
                                 "resources": {"requests": requests}}
            if kind == "SidecarReq":
                c["restartPolicy"] = "Always"
            spec["initContainers"].append(c)
    return parse_pod({"metadata": {"name": "my-pod", "namespace": "default", "uid": "1234"}, "spec": spec})


pod1 = make_pod(("Res", {ERN: "1", ERN + "1": "2"}))
pod2 = make_pod(("Res", {ERN: "1"}), ("Res", {ERN + "1": "2"}))
podInit = make_pod(("Res", {ERN: "1"}), ("InitReq", {ERN + "init": "2"}))
podInit2 = make_pod(("Res", {ERN: "1"}), ("InitReq", {ERN + "init": "1"}), ("InitReq", {ERN + "init": "2"}))
podInit3 = make_pod(("Res", {ERN: "1"}), ("InitReq", {ERN + "init": "1"}), ("SidecarReq", {ERN + "init": "1"}),
                    ("InitReq", {ERN + "init": "2"}))
pod1InitImplicit = make_pod(("InitReq", {ERN + "init": "1", IMPLICIT_INIT: "2"}))
podInitImplicit = make_pod(("Res", {ERN: "1"}), ("InitReq", {ERN + "init": "1"}), ("InitReq", {IMPLICIT_INIT: "2"}))

res = [ERN]
res2 = [ERN, ERN + "1"]
resInit = [ERN, ERN + "init"]
resInitImplicit = [ERN, ERN + "init", IMPLICIT_INIT]
devMap = {ERN: "class"}
devMap2 = {ERN: "class", ERN + "1": "class1"}
devMapInit = {ERN: "class", ERN + "init": "classInit", IMPLICIT_INIT: "classInit"}


def resolver(mapping: dict[str, str]) -> Any:
    return lambda name: DeviceClass(mapping[name]) if name in mapping else None


REQUESTS = [
    ("nil", pod1, [], {}, []),
    ("one resource match", pod1, res, devMap, [("container-0-request-0", "class", 1)]),
    ("one resource match, one resource not match", pod1, res2, devMap, [("container-0-request-0", "class", 1)]),
    ("two resources match", pod1, res2, devMap2,
     [("container-0-request-0", "class", 1), ("container-0-request-1", "class1", 2)]),
    ("two containers match", pod2, res2, devMap2,
     [("container-0-request-0", "class", 1), ("container-1-request-0", "class1", 2)]),
    ("one init container, one regular container", podInit, resInit, devMapInit,
     [("container-0-request-0", "classInit", 2), ("container-1-request-0", "class", 1)]),
    ("two init containers, one regular container", podInit2, resInit, devMapInit,
     [("container-1-request-0", "classInit", 2), ("container-2-request-0", "class", 1)]),
    ("three init containers, one sidecar, one regular container", podInit3, resInit, devMapInit,
     [("container-1-request-0", "classInit", 1), ("container-2-request-0", "classInit", 2),
      ("container-3-request-0", "class", 1)]),
]


@pytest.mark.parametrize("name,pod,resources,mapping,want", REQUESTS, ids=[c[0] for c in REQUESTS])
def test_create_requests_and_mappings_requests(name: str, pod: Pod, resources: list[str], mapping: dict[str, str],
                                               want: list[tuple[str, str, int]]) -> None:
    """Test_createRequestsAndMappings_requests: name, class, ExactCount and count of each request."""
    got, _ = requests_and_mappings(pod, resources, resolver(mapping))
    assert [(r.name, r.exactly.device_class_name, r.exactly.count) for r in got if r.exactly is not None] == want
    assert all(r.exactly is not None and r.exactly.allocation_mode == "ExactCount" for r in got)


# The mappings test's ``res`` and ``devMap`` name both resources (the requests test's ``res2``, ``devMap2``).
MAPPINGS = [
    ("one container, two requests", pod1, res2, devMap2,
     [("con0", ERN, "container-0-request-0"), ("con0", ERN + "1", "container-0-request-1")]),
    ("one container, one explicit and one implicit request", pod1InitImplicit, resInitImplicit, devMapInit,
     [("init-con0", IMPLICIT_INIT, "container-0-request-0"), ("init-con0", ERN + "init", "container-0-request-1")]),
    ("two containers, two requests", pod2, res2, devMap2,
     [("con0", ERN, "container-0-request-0"), ("con1", ERN + "1", "container-1-request-0")]),
    ("one init container, one regular container, one request", podInit, resInit, devMapInit,
     [("init-con0", ERN + "init", "container-0-request-0"), ("con0", ERN, "container-1-request-0")]),
    ("three containers (two are init container), two requests", podInit2, resInit, devMapInit,
     [("init-con0", ERN + "init", "container-1-request-0"), ("init-con1", ERN + "init", "container-1-request-0"),
      ("con0", ERN, "container-2-request-0")]),
    ("three containers (two are init container), both explicit and implicit resources", podInitImplicit,
     resInitImplicit, devMapInit,
     [("init-con0", ERN + "init", "container-0-request-0"), ("init-con1", IMPLICIT_INIT, "container-1-request-0"),
      ("con0", ERN, "container-2-request-0")]),
    ("four containers (two are init container, one sidecar), three requests", podInit3, resInit, devMapInit,
     [("init-con0", ERN + "init", "container-1-request-0"), ("sidecar-con1", ERN + "init", "container-1-request-0"),
      ("init-con2", ERN + "init", "container-2-request-0"), ("con0", ERN, "container-3-request-0")]),
]


@pytest.mark.parametrize("name,pod,resources,mapping,want", MAPPINGS, ids=[c[0] for c in MAPPINGS])
def test_create_requests_and_mappings_mappings(name: str, pod: Pod, resources: list[str], mapping: dict[str, str],
                                               want: list[tuple[str, str, str]]) -> None:
    """Test_createRequestsAndMappings_mappings, sorted as upstream sorts them (request name, then
    container name)."""
    _, got = requests_and_mappings(pod, resources, resolver(mapping))
    assert [(m.container_name, m.resource_name, m.request_name)
            for m in sorted(got, key=lambda m: (m.request_name, m.container_name))] == want


@pytest.mark.parametrize("name,want", [
    ("example.com/gpu", True), ("deviceclass.resource.kubernetes.io/gpu", True), ("cpu", False),
    ("kubernetes.io/something", False), ("hugepages-2Mi", False), ("requests.example.com/x", False)])
def test_is_dra_extended_resource_name(name: str, want: bool) -> None:
    """schedutil.IsDRAExtendedResourceName: an extended resource name, or a class's implicit one."""
    assert is_dra_extended_resource_name(name) is want
