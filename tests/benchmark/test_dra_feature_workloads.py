"""The DRA workloads of ``kopf-scheduler bench`` that need the allocator's newer features (issue #35):
upstream's ``dra/partitionabledevices``, ``dra/consumablecapacity`` and ``dra/performance-config.yaml``'s
DRABindingConditions tests, in core mode at their fast sizes and through the simulated cluster.
Results only: none of them has an upstream threshold."""

from __future__ import annotations

from dataclasses import replace

import pytest

from scheduler.benchmark import workloads
from scheduler.benchmark.core import run_core
from scheduler.benchmark.core_dra import device_statuses
from scheduler.benchmark.dynamicresources import (
    DRA_DRIVER,
    NODE_WITH_DRA,
    dra_node,
    dra_selector_allocations,
    dra_slice,
    dra_template_slices,
)
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import WORKLOADS
from scheduler.model.dra import parse_resource_slice

PARTITIONABLE = "SteadyStateClusterResourceClaimTemplatePartitionable"
BACKTRACKING = "SteadyStateClusterResourceClaimTemplatePartitionableBacktracking/fast"
CONSUMABLE = "SteadyStateClusterResourceClaimTemplateConsumableCapacity"
BINDING = ("DRABindingConditionsTest/fast_AttachmentSuccess", "DRABindingConditionsTest/fast_AttachmentFailed",
           "DRABindingConditionsTest/multiple_pods_AttachmentSuccess",
           "DRABindingConditionsTest/multiple_pods_AttachmentFailed",
           "DRABindingConditionsWithSharedResourceClaimTest/multiple_pods_AttachmentSuccess",
           "DRABindingConditionsWithSharedResourceClaimTest/multiple_pods_AttachmentFailed")
STEADY = (f"{PARTITIONABLE}/fast", BACKTRACKING, f"{CONSUMABLE}/fast")
# Every workload this module runs (test_benchmark.py checks each workload is run somewhere).
FEATURE_WORKLOADS = frozenset({PARTITIONABLE, CONSUMABLE, *STEADY, *BINDING})


def _once(monkeypatch: pytest.MonkeyPatch, name: str) -> None:
    """The workload with its pods created once and waited for, instead of steadily."""
    w = WORKLOADS[name]
    assert w.dra is not None
    monkeypatch.setitem(workloads.WORKLOADS, name, replace(w, dra=replace(w.dra, steady=0.0)))


def test_upstreams_sizes_and_params() -> None:
    """(size, nodes without DRA, devices a node, steady seconds): upstream's params; no bar."""
    got = {name: (w.default, w.dra.nodes_without_dra, w.dra.max_claims_per_node if w.dra.driver else None,
                  w.dra.steady, w.threshold)
           for name, w in WORKLOADS.items() if w.dra is not None and (w.dra.slices or w.dra.binding)}
    assert got == {
        PARTITIONABLE: (Size(100, 0, 2000, resource_slices=2000), 0, None, 10.0, None),
        f"{PARTITIONABLE}/fast": (Size(1, 0, 10, resource_slices=10), 1, None, 2.0, None),
        BACKTRACKING: (Size(1, 0, 1, resource_slices=1), 1, None, 2.0, None),
        CONSUMABLE: (Size(100, 0, 2000, resource_slices=2000), 0, 20, 10.0, None),
        f"{CONSUMABLE}/fast": (Size(1, 0, 1, resource_slices=1), 1, 2, 2.0, None),
        BINDING[0]: (Size(1, 0, 1), 0, 1, 0.0, None),
        BINDING[1]: (Size(1, 0, 1), 0, 1, 0.0, None),
        BINDING[2]: (Size(1, 0, 5), 0, 10, 0.0, None),
        BINDING[3]: (Size(1, 0, 5), 0, 10, 0.0, None),
        BINDING[4]: (Size(1, 0, 5), 0, 10, 0.0, None),
        BINDING[5]: (Size(1, 0, 5), 0, 10, 0.0, None),
    }
    assert {name: (WORKLOADS[name].dra.binding, WORKLOADS[name].dra.scheduled, WORKLOADS[name].dra.claim_ref)
            for name in BINDING} == {
        BINDING[0]: (("DeviceAttached", "True"), True, False), BINDING[1]: (("AttachmentFailed", "True"), False, False),
        BINDING[2]: (("DeviceAttached", "True"), True, False), BINDING[3]: (("AttachmentFailed", "True"), False, False),
        BINDING[4]: (("DeviceAttached", "True"), True, True), BINDING[5]: (("AttachmentFailed", "True"), False, True)}


def test_the_slice_templates_as_resource_k8s_io_v1_has_them() -> None:
    counters, devices = (parse_resource_slice(s) for s in dra_template_slices("resourceslice-partitionable", 3))
    assert (counters.pool.name, counters.pool.resource_slice_count, devices.pool.name) == (
        "resourceslice-3", 2, "resourceslice-3")
    assert [d.name for d in devices.devices] == ["device-2-counters-1", "device-2-counters-2", *(
        f"device-1-counter-{k}" for k in range(1, 5))]
    assert not counters.devices and not devices.shared_counters and len(counters.shared_counters) == 1
    cpu, mem = (parse_resource_slice(s) for s in dra_template_slices("resourceslice-partitionable-backtracking", 0))
    assert cpu.node_name == "scheduler-perf-dra-0" and len(mem.devices) == 8
    shared = parse_resource_slice(dra_template_slices("resourceslice-consumablecapacity", 0)[1])
    assert [(d.name, d.allow_multiple_allocations) for d in shared.devices] == [
        ("shareable-device", True), ("device-2-counters-1", True)]
    # the createAny slices reach the nodes node-with-dra-test-driver.yaml labels
    assert dra_node(0)["metadata"]["labels"][NODE_WITH_DRA[0]] == NODE_WITH_DRA[1]
    # the driver's devices carry binding conditions only for the binding-conditions tests
    plain, bound = dra_slice("n", 1)["spec"]["devices"][0], dra_slice("n", 1, True)["spec"]["devices"][0]
    assert "bindingConditions" not in plain
    assert (bound["bindingConditions"], bound["bindingFailureConditions"], bound["bindsToNode"]) == (
        ["DeviceAttached"], ["AttachmentFailed"], True)


def test_update_device_conditions_reports_only_devices_with_binding_conditions() -> None:
    allocation = {"devices": {"results": [
        {"request": "req-0", "driver": DRA_DRIVER, "pool": "p", "device": "a", "bindingConditions": ["DeviceAttached"],
         "bindingFailureConditions": ["AttachmentFailed"]},
        {"request": "req-0", "driver": DRA_DRIVER, "pool": "p", "device": "b"}]}}
    got = device_statuses(allocation, ("AttachmentFailed", "True"))
    assert [(d["device"], d["conditions"][0]["type"], d["conditions"][0]["status"], d["conditions"][0]["reason"])
            for d in got] == [("a", "AttachmentFailed", "True", "Test")]


def test_partitionable_each_pod_gets_the_two_devices_its_pool_has_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """allocResourceClaims holds each pool's device-2-counters-1 (counters 1 and 2); two devices of
    one pool then fit only as device-1-counter-3 and -4 (device-2-counters-2 needs both of theirs):
    one pod per pool, and an eleventh pod finds none."""
    name = f"{PARTITIONABLE}/fast"
    _once(monkeypatch, name)
    r = run_core(name, Size(1, 0, 11, resource_slices=10), time_limit=5)
    assert not r.complete and r.bound == 10
    init = {k: v for k, v in r.allocations.items() if k.startswith("init/")}
    assert init == {f"init/test-claim-with-selector-{k}": (f"{DRA_DRIVER}/resourceslice-{k}/device-2-counters-1",)
                    for k in range(10)}
    pods = sorted(v for k, v in r.allocations.items() if k.startswith("test/"))
    assert pods == [tuple(f"{DRA_DRIVER}/resourceslice-{k}/device-1-counter-{c}" for c in (3, 4)) for k in range(10)]
    assert dra_selector_allocations(Size(1, 0, 1, resource_slices=2))[1][1]["nodeSelector"]["nodeSelectorTerms"] == [
        {"matchExpressions": [{"key": "node-with-dra", "operator": "In", "values": ["true"]}]}]


def test_backtracking_finds_the_seven_devices_that_share_70gi(monkeypatch: pytest.MonkeyPatch) -> None:
    """device-1 (20Gi) plus six of 10Gi is 80Gi: the seven devices that fit are the 10Gi ones."""
    _once(monkeypatch, BACKTRACKING)
    r = run_core(BACKTRACKING, Size(1, 0, 1, resource_slices=1), time_limit=30)
    assert r.complete and r.bound == 1
    assert list(r.allocations.values()) == [tuple(f"{DRA_DRIVER}/resourceslice-0/device-{k}" for k in range(2, 9))]


def test_consumable_capacity_shares_a_device_between_claims(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two 10Gi requests a pod, on a shareable 80Gi device: four pods' claims all on it."""
    name = f"{CONSUMABLE}/fast"
    _once(monkeypatch, name)
    r = run_core(name, Size(1, 0, 4, resource_slices=1), time_limit=10)
    assert r.complete and r.bound == 4
    assert sorted(r.allocations.values()) == [(f"{DRA_DRIVER}/resourceslice-0/shareable-device",) * 2] * 4


@pytest.mark.parametrize("name", STEADY)
def test_the_steady_state_workloads_run_at_their_fast_size(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    w = WORKLOADS[name]
    assert w.dra is not None
    # Three seconds: a batch of the backtracking workload takes over half a second on a loaded CI
    # machine, and the loop must be seen to go round.
    monkeypatch.setitem(workloads.WORKLOADS, name, replace(w, dra=replace(w.dra, steady=3.0)))
    r = run_core(name, w.default, time_limit=30)
    # at least two whole batches bound in the steady state (each batch all bound, deleted, created anew)
    assert r.complete and r.bound >= 2 * w.default.pods


@pytest.mark.parametrize("name", BINDING)
def test_binding_conditions_bind_only_when_the_device_is_attached(name: str) -> None:
    """The pods wait in PreBind until updateDeviceConditions reports DeviceAttached (all bound) or
    AttachmentFailed (none bound for 5 s; the failed claims are deallocated again)."""
    w = WORKLOADS[name]
    assert w.dra is not None
    r = run_core(name, w.default, time_limit=60)
    assert r.complete
    if w.dra.scheduled:
        assert r.bound == w.default.pods
        assert all(devices and all(d.split("/")[1] == r.placements[pod] for d in devices)
                   for pod, devices in r.claims.items())
    else:
        assert r.bound == 0 and not r.claims


@pytest.mark.parametrize("name", [f"{PARTITIONABLE}/fast", BINDING[0], BINDING[5]])
def test_e2e_mode_runs_them_through_the_simulated_cluster(name: str) -> None:
    """Through the API, whose validation takes the v1 slices, and the operator's DRA informers."""
    from scheduler.benchmark.e2e import run_e2e
    w = WORKLOADS[name]
    assert w.dra is not None
    r = run_e2e(name, w.default, time_limit=60)
    assert r.complete and r.mode == "e2e"
    assert r.bound == (0 if not w.dra.scheduled else w.default.pods if not w.dra.steady else r.bound)
    if w.dra.steady:
        assert r.bound >= w.default.pods
