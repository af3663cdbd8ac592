"""NodeResourcesBalancedAllocation: our own cases first (extreme quantities, issue #12; explicit
zeros and upstream's scorer on random nodes, issue #14), then upstream's table as data
(``noderesources/balanced_allocation_test.go``)."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from scheduler.model import Node, Pod, parse_node
from scheduler.plugins import noderesources
from scheduler.plugins.args import NodeResourcesBalancedAllocationArgs
from scheduler.plugins.noderesources import balanced_allocation as balanced_module
from scheduler.plugins.noderesources import resource_allocation
from tests import st
from tests.builders import node, pod, run_score, setup
from tests.plugins.noderesources.test_fit import (
    DEFAULT_RESOURCES,
    DRA_CLASS,
    EXTENDED_DRA,
    HUGE,
    _random_clusters,
    dra_store,
    resource_slice,
    with_dra_objects,
)


def test_balanced_allocation() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
    # cpu 3000/4000=0.75, memory 5000/10000=0.5: std=0.125 -> 87; a perfectly balanced node -> 100
    got = run_score(plugin, pod("p", "3", "5000"), [node("n1", "4", "10000"), node("n2", "6", "10000")])
    assert got == [87, 100]
    assert run_score(plugin, pod("p", None, None), [node("n1")]) == [0]  # best-effort pods skip


def test_balanced_allocation_at_extremes() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
    nodes = [node(f"n{i}", cpu=q, memory=q) for i, q in enumerate(HUGE)]
    existing = [pod(f"e{i}", q, q, node_name=f"n{i}") for i, q in enumerate(HUGE)]
    for q in HUGE[1:]:
        got = run_score(plugin, pod("p", q, "1"), nodes, existing)
        assert all(0 <= s <= 100 for s in got), (q, got)
    # 1e30 CPUs half used, memory idle: exactly upstream's |0.5 - 0| / 2 = 0.25 -> 75.
    assert run_score(plugin, pod("p", "1m", "1"), [node("n", "1e30", "1e30")],
                     [pod("e", "5e29", None, node_name="n")]) == [75]


def _balanced_resource_scorer(requested: list[int], allocatable: list[int]) -> int:
    """balanced_allocation.go's balancedResourceScorer, line by line."""
    fractions = [min(r / a, 1.0) for r, a in zip(requested, allocatable, strict=True) if a != 0]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) * (f - mean) for f in fractions) / len(fractions))
    return int((1 - std) * 100)


def test_balanced_allocation_is_upstreams_scorer_on_random_nodes() -> None:
    """Every row against upstream's scorer: nodes with and without allocatable memory (the general
    path) and with both (the two-resource fast path), over- and under-committed."""
    plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
    for p, nodes, existing, amounts in _random_clusters(11, used_from=0):
        assert run_score(plugin, p, nodes, existing) == [_balanced_resource_scorer(r, a) for r, a in amounts]


def test_balanced_allocation_fast_path_is_upstreams_scorer() -> None:
    """Clusters where every node has cpu and memory (below the float bound) take the fast path
    (``_fraction_everywhere`` answers), over- and under-committed, up to the bound: every row
    as upstream's scorer."""
    bound = resource_allocation.FLOAT_EXACT_ALLOC
    rng = random.Random(5)
    for _ in range(10):
        nodes, existing, amounts = [], [], []
        p_cpu, p_mem = rng.randrange(0, 4000), rng.randrange(1, 10**9)
        for i in range(rng.randrange(1, 30)):
            cpu, mem = rng.randrange(1, 8000), rng.choice([rng.randrange(1, 4 * 10**9), bound - 1 - i])
            used_cpu, used_mem = rng.randrange(0, 9000), rng.choice([rng.randrange(0, 5 * 10**9), mem, max(mem - p_mem, 0)])
            nodes.append(node(f"n{i}", f"{cpu}m", str(mem)))
            existing.append(pod(f"e{i}", f"{used_cpu}m", str(used_mem), node_name=f"n{i}"))
            amounts.append(([used_cpu + p_cpu, used_mem + p_mem], [cpu, mem]))
        p = pod("p", f"{p_cpu}m", str(p_mem))
        snap, state, rows = setup(nodes, existing)
        assert balanced_module._fraction_everywhere(state, snap, rows, "memory", p_mem) is not None
        plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
        assert run_score(plugin, p, nodes, existing) == [_balanced_resource_scorer(r, a) for r, a in amounts]


def test_balanced_allocation_counts_explicit_zero_as_zero() -> None:
    plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs())
    # cpu 0 of 4, memory 5000 of 10000: |0 - 0.5| / 2 = 0.25 -> 75 (upstream uses the actual requests).
    assert run_score(plugin, pod("p", "0", "5000"), [node("n", "4", "10000")]) == [75]


# --- balanced_allocation_test.go TestNodeResourcesBalancedAllocation --------------------------------------
# Release 1.35's table (its two DRA cases from the 1.35 file: 62 and 63). kubernetes/kubernetes#135573 (merged January 2026, for 1.36) scores the change
# of balance a pod brings instead (50 + (50 + with - without) / 2); its source and table were not
# available to read, so this plugin and table stay at 1.35's formula.
GPU = "nvidia.com/gpu"


def make_node(name: str, milli_cpu: int, memory: int, extended: dict[str, int] | None = None) -> Node:
    """test_util.go's ``makeNode``: capacity and allocatable cpu, memory and the extended resources."""
    res = {"cpu": f"{milli_cpu}m", "memory": str(memory), **{k: str(v) for k, v in (extended or {}).items()}}
    return parse_node({"metadata": {"name": name}, "status": {"capacity": res, "allocatable": res}})


def spec_pod(node_name: str, *requests: dict[str, str]) -> Pod:
    """``&v1.Pod{Spec: ...}``: containers with these requests, on ``node_name``."""
    p = st.MakePod().Node(node_name)
    for r in requests:
        p.Req(r)
    return p.Obj()


def cpu_and_memory_and_gpu() -> Pod:
    return spec_pod("node1", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000", GPU: "3"})


def cpu_only() -> Pod:
    return spec_pod("node1", {"cpu": "1000m", "memory": "0"}, {"cpu": "2000m", "memory": "0"})


def cpu_and_memory() -> Pod:
    return spec_pod("node2", {"cpu": "1000m", "memory": "2000"}, {"cpu": "2000m", "memory": "3000"})


SCALAR = {GPU: 8}
BALANCED_DRA_OBJECTS = (DRA_CLASS, resource_slice("node1", "test-driver", *(f"device-{i}" for i in range(1, 9))))
CPU_MEM_GPU = [("cpu", 1), ("memory", 1), (GPU, 1)]
BALANCED = [
    ("nothing scheduled, nothing requested, skip in PreScore", st.MakePod().Obj,
     [make_node("node1", 4000, 10000), make_node("node2", 4000, 10000)], [], DEFAULT_RESOURCES, True, "skip"),
    ("nothing scheduled, resources requested, differently sized nodes", cpu_and_memory,
     [make_node("node1", 4000, 10000), make_node("node2", 6000, 10000)], [], DEFAULT_RESOURCES, True, [87, 100]),
    ("resources requested, pods scheduled with resources", cpu_and_memory,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], [cpu_only, cpu_and_memory],
     DEFAULT_RESOURCES, True, [82, 95]),
    ("resources requested, pods scheduled with resources, differently sized nodes", cpu_and_memory,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 50000)], [cpu_only, cpu_and_memory],
     DEFAULT_RESOURCES, True, [82, 80]),
    ("requested resources at node capacity", cpu_only,
     [make_node("node1", 6000, 10000), make_node("node2", 6000, 10000)], [cpu_only, cpu_and_memory],
     DEFAULT_RESOURCES, True, [50, 75]),
    ("include scalar resource on a node for balanced resource allocation",
     st.MakePod().Req({"memory": "0", GPU: "1"}).Obj,
     [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000, SCALAR)],
     [cpu_and_memory, cpu_and_memory_and_gpu], CPU_MEM_GPU, True, [70, 65]),
    ("node without the scalar resource should skip the scalar resource", cpu_and_memory,
     [make_node("node1", 3500, 40000, SCALAR), make_node("node2", 3500, 40000)], [], CPU_MEM_GPU, True, [63, 63]),
    ("resources requested, pods scheduled with resources if PreScore not called", cpu_and_memory,
     [make_node("node1", 10000, 20000), make_node("node2", 10000, 20000)], [cpu_only, cpu_and_memory],
     DEFAULT_RESOURCES, False, [82, 95]),
    # Node1: cpu 3000/3500, memory 0/40000, DRA 1/8 (8 devices, the pod's 1): std 0.378 -> 62.
    # Node2: cpu 3000/3500, memory 5000/40000, no devices (left out): |0.8571 - 0.125| / 2 -> 63.
    ("include DRA resource on a node for balanced resource allocation",
     st.MakePod().Req({EXTENDED_DRA: "1"}).Obj,
     [make_node("node1", 3500, 40000), make_node("node2", 3500, 40000)], [cpu_only, cpu_and_memory],
     [*DEFAULT_RESOURCES, (EXTENDED_DRA, 1)], True, [62, 63], BALANCED_DRA_OBJECTS),
    ("include DRA resource on a node for balanced resource allocation if PreScore not called",
     st.MakePod().Req({EXTENDED_DRA: "1"}).Obj,
     [make_node("node1", 3500, 40000), make_node("node2", 3500, 40000)], [cpu_only, cpu_and_memory],
     [*DEFAULT_RESOURCES, (EXTENDED_DRA, 1)], False, [62, 63], BALANCED_DRA_OBJECTS),
]


@pytest.mark.parametrize(("name", "pod", "nodes", "existing", "resources", "run_pre_score", "want", "dra_objects"),
                         with_dra_objects(BALANCED, 7),
                         ids=[c[0][:80] if isinstance(c, tuple) else None for c in BALANCED])
def test_node_resources_balanced_allocation(name: str, pod: Any, nodes: list[Node], existing: list[Any],
                                            resources: list[tuple[str, int]], run_pre_score: bool, want: Any,
                                            dra_objects: tuple[dict[str, Any], ...] | None) -> None:
    """balanced_allocation_test.go TestNodeResourcesBalancedAllocation (10 cases; draObjects as in
    TestFitScore)."""
    from tests.builders import setup
    plugin = noderesources.NodeResourcesBalancedAllocation(NodeResourcesBalancedAllocationArgs(
        resources=[{"name": n, "weight": w} for n, w in resources]),
        None if dra_objects is None else dra_store(*dra_objects))
    snap, state, rows = setup(nodes, [e() for e in existing])
    p = pod()
    if run_pre_score:
        status = plugin.pre_score(state, p, snap, rows)
        if want == "skip":
            assert status.is_skip(), name
            return
        assert status.is_success(), name
    assert plugin.score_nodes(state, p, snap, rows).tolist() == want, name

