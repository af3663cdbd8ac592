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
    # component-helpers resource.PodRequests with NonMissingContainerRequests (issue #14 item 1): the
    # default replaces an absent request only; "0" is a request of 0; no containers count 0.
    ("explicit zero is a request", {"containers": [container("0", "0")]}, 0, 0, 0),
    ("zero and absent per container", {"containers": [container("0"), container()]}, 0, 0, 100),
    ("no containers", {"containers": []}, 0, 0, 0),
    ("pod-level cpu without containers", {"containers": [], "resources": {"requests": {"cpu": "1"}}},
     1000, 0, 1000),
    ("pod-level resources", {"containers": [container("100m")], "resources": {"requests": {"cpu": "2"}}},
     2000, 0, 2000),
])
def test_pod_requests(name: str, spec: dict, cpu: int, mem: int, nz_cpu: int) -> None:
    p = parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    assert p.requests.get("cpu", 0) == cpu, name
    assert p.requests.get("memory", 0) == mem, name
    assert p.non_zero_cpu == nz_cpu, name


@pytest.mark.parametrize(("name", "spec", "nz_memory"), [
    ("absent memory is 200Mi", {"containers": [container("1")]}, 200 * 1024 * 1024),
    ("explicit 0 memory stays 0", {"containers": [container("1", "0")]}, 0),
    ("no containers", {"containers": []}, 0),
])
def test_pod_non_zero_memory(name: str, spec: dict, nz_memory: int) -> None:
    p = parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    assert p.non_zero_memory == nz_memory, name


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


# --- extreme values and wrongly typed numbers (issue #12) ---------------------------------------
def spread(max_skew: object, **more: object) -> dict:
    return {"containers": [], "topologySpreadConstraints": [
        {"maxSkew": max_skew, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule", **more}]}


@pytest.mark.parametrize(("name", "spec", "field", "problem"), [
    ("maxSkew as a string", spread("1"), "spec.topologySpreadConstraints[0].maxSkew",
     'Invalid value: "string": json: cannot unmarshal string into Go struct field '
     "TopologySpreadConstraint.spec.topologySpreadConstraints.maxSkew of type int32"),
    ("maxSkew as a fraction", spread(1.5), "spec.topologySpreadConstraints[0].maxSkew",
     "cannot unmarshal number 1.5 into Go struct field"),
    ("maxSkew as a bool", spread(True), "spec.topologySpreadConstraints[0].maxSkew", "cannot unmarshal bool"),
    ("maxSkew past int32", spread(2**31), "spec.topologySpreadConstraints[0].maxSkew",
     "cannot unmarshal number 2147483648 into Go struct field"),
    ("maxSkew zero is a range problem", spread(0), "spec.topologySpreadConstraints[0].maxSkew",
     "must be greater than zero"),
    ("maxSkew missing", spread(None), "spec.topologySpreadConstraints[0].maxSkew", "must be greater than zero"),
    ("minDomains as a string", spread(1, minDomains="2"), "spec.topologySpreadConstraints[0].minDomains",
     "cannot unmarshal string into Go struct field TopologySpreadConstraint.spec.topologySpreadConstraints"
     ".minDomains of type int32"),
    ("priority past int32", {"containers": [], "priority": 2**40}, "spec.priority",
     "cannot unmarshal number 1099511627776 into Go struct field PodSpec.spec.priority of type int32"),
    ("hostPort as a string", {"containers": [{"name": "c", "ports": [{"hostPort": "80"}]}]},
     "spec.containers[0].ports[0].hostPort", "cannot unmarshal string"),
    ("node affinity weight as a string", {"containers": [], "affinity": {"nodeAffinity": {
        "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": "5", "preference": {}}]}}},
     "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight", "cannot unmarshal string"),
])
def test_wrongly_typed_numbers_name_the_field_and_the_type(name: str, spec: dict, field: str, problem: str) -> None:
    with pytest.raises(ParseError) as e:
        parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    assert field in str(e.value) and problem in str(e.value), (name, str(e.value))
    assert str(e.value).startswith("Pod ns/p spec."), name


def test_max_skew_at_int32_max_parses() -> None:
    p = parse_pod({"metadata": {"name": "p"}, "spec": spread(2**31 - 1)})
    assert p.topology_spread[0].max_skew == 2**31 - 1


@pytest.mark.parametrize(("name", "spec", "cpu", "nz_cpu"), [
    ("int64-max CPUs", {"containers": [container("9223372036854775807")]}, (2**63 - 1) * 1000, (2**63 - 1) * 1000),
    ("1000 containers of 1E: exact, no wrap", {"containers": [container("1E")] * 1000}, 10**24, 10**24),
    ("1000 init containers: the max, not the sum", {"containers": [container("1")],
                                                    "initContainers": [container("1e16")] * 1000}, 10**19, 10**19),
    ("1000 sidecars add up", {"containers": [container()],
                              "initContainers": [container("8Ei", restart="Always")] * 1000},
     1000 * 2**63 * 1000, 1000 * 2**63 * 1000 + 100),
    ("overhead on top of 1e64", {"containers": [container("1e64")], "overhead": {"cpu": "1e64"}},
     2 * 10**67, 2 * 10**67),
    ("a 5000-digit quantity", {"containers": [container("1" + "0" * 5000)]}, 10**1003, 10**1003),
    ("1n", {"containers": [container("1n")]}, 1, 1),
])
def test_extreme_requests_stay_exact(name: str, spec: dict, cpu: int, nz_cpu: int) -> None:
    p = parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    assert p.requests.get("cpu", 0) == cpu, name
    assert p.non_zero_cpu == nz_cpu, name


def test_node_image_size_past_int64_is_capped() -> None:
    n = parse_node({"metadata": {"name": "n"}, "status": {"images": [{"names": ["a"], "sizeBytes": 10**400}]}})
    assert n.images == {"a": 2**63 - 1}


def test_malformed_node_is_a_parse_error() -> None:
    with pytest.raises(ParseError) as e:
        parse_node({"metadata": {"name": "n"}, "status": {"images": ["not-an-object"]}})
    assert "Node n" in str(e.value)


def test_a_gt_bound_past_int64_drops_its_required_term_as_upstream() -> None:
    """Not a parse error: upstream's NewLazyErrorNodeSelector keeps the pod and the term's error,
    and the term matches no node (the API server does not check Gt/Lt bounds)."""
    p = parse_pod({"metadata": {"name": "p", "namespace": "ns"}, "spec": {"containers": [], "affinity": {
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "k", "operator": "Gt", "values": ["9" * 400]}]}]}}}}})
    assert p.required_node_affinity is not None
    # Both of labels.NewRequirement's complaints: not an int64, and longer than a label value.
    errs = [str(e) for e in p.required_node_affinity.parse_errors()]
    assert any("matchExpressions[0].values[0]" in e and "must be an integer" in e for e in errs), errs
    assert any("must be no more than 63 bytes" in e for e in errs), errs
    assert not p.required_node_affinity.matches({"k": "1"}, "n")
