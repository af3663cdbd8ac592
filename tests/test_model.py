import pytest

from scheduler.errors import ParseError
from scheduler.model import parse_node, parse_pod


def container(cpu: str | None = None, mem: str | None = None, restart: str | None = None) -> dict:
    req = {k: v for k, v in (("cpu", cpu), ("memory", mem)) if v}
    c: dict = {"name": "c", "image": "i", "resources": {"requests": req}}
    if restart:
        c["restartPolicy"] = restart
    return c


@pytest.mark.parametrize(("name", "spec", "cpu", "mem", "nz_cpu"), [
    ("sum of containers", {"containers": [container("100m", "1Gi"), container("200m")]}, 300, 2**30, 300),
    ("init larger wins", {"containers": [container("100m")], "initContainers": [container("1")]}, 1000, 0, 1000),
    ("sidecar adds to the sum", {"containers": [container("100m")],
                                 "initContainers": [container("200m", restart="Always")]}, 300, 0, 300),
    ("init runs beside earlier sidecars", {"containers": [container("100m")],
                                           "initContainers": [container("500m", restart="Always"), container("1")]},
     1500, 0, 1500),
    ("overhead added", {"containers": [container("100m")], "overhead": {"cpu": "50m"}}, 150, 0, 150),
    ("no requests", {"containers": [container()]}, 0, 0, 100),
    ("pod-level resources", {"containers": [container("100m")], "resources": {"requests": {"cpu": "2"}}},
     2000, 0, 2000),
])
def test_pod_requests(name: str, spec: dict, cpu: int, mem: int, nz_cpu: int) -> None:
    p = parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    assert p.requests.get("cpu", 0) == cpu, name
    assert p.requests.get("memory", 0) == mem, name
    assert p.non_zero_cpu == nz_cpu, name


def test_bad_quantity_names_object_and_field() -> None:
    with pytest.raises(ParseError) as e:
        parse_pod({"metadata": {"name": "web", "namespace": "prod"},
                   "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1 core"}}}]}})
    assert "Pod prod/web" in str(e.value)
    assert "spec.containers[0].resources.requests.cpu" in str(e.value)


def test_node_allocatable_defaults_to_capacity() -> None:
    n = parse_node({"metadata": {"name": "n"}, "status": {"capacity": {"cpu": "4", "memory": "32Gi", "pods": "110"}}})
    assert n.allocatable == {"cpu": 4000, "memory": 32 * 2**30, "pods": 110}


@pytest.mark.parametrize(("raw", "field"), [
    ({"spec": {"taints": [{"key": "k", "effect": "Sometimes"}]}}, "spec.taints[0].effect"),
    ({"status": {"allocatable": {"cpu": "x"}}}, "status.allocatable.cpu"),
])
def test_bad_node(raw: dict, field: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_node({"metadata": {"name": "n1"}, **raw})
    assert field in str(e.value) and "Node n1" in str(e.value)


def test_affinity_term_namespaces_default_to_own() -> None:
    p = parse_pod({"metadata": {"name": "p", "namespace": "team"}, "spec": {"containers": [], "affinity": {
        "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"a": "b"}}, "topologyKey": "zone"}]}}}})
    assert p.anti_affinity_required[0].namespaces == frozenset({"team"})
