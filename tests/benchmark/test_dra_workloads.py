"""The DRA workloads of ``kopf-scheduler bench`` (issue #19: upstream's ``dra/**/performance-config.yaml``)
in core mode at tiny sizes: every measured pod bound with its claims allocated on its own node,
no device given to two claims, and the objects the workloads create as upstream's templates make
them. Results only: the timing thresholds live in the benchmark."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from scheduler.benchmark import dynamicresources, workloads
from scheduler.benchmark.core import run_core
from scheduler.benchmark.dynamicresources import DRA_DRIVER, Dra, dra_init_claims, dra_pod, dra_slice
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import template
from scheduler.benchmark.workloads import WORKLOADS
from scheduler.model.dra import parse_resource_slice

STEADY = ("SteadyStateClusterResourceClaimTemplate/empty", "SteadyStateClusterResourceClaimTemplate/half",
          "SteadyStateClusterResourceClaimTemplate/full")
# (DRA nodes, init pods, measured pods): enough devices for every pod (10 a node, 2 for the shared claims)
SMOKE = {
    "SchedulingWithResourceClaimTemplate": Size(2, 5, 10),
    "SchedulingWithResourceClaim": Size(3, 10, 10),
    "FirstAvailable": Size(1, 0, 10),
    "SchedulingWithResourceClaimTemplateToleration": Size(1, 0, 10),
    "ExtendedResource": Size(1, 0, 10),
    "ExtendedResource_25Classes": Size(2, 5, 10),
    "ExtendedResource_50Classes": Size(2, 5, 10),
    "ExtendedResourceScoring": Size(2, 0, 10),
    "ExtendedResourceScoring_5000pods_500nodes": Size(2, 0, 10),
    "ExtendedResourceScoring/fast": Size(3, 0, 10),
    **{name: Size(2, 0, 10) for name in STEADY},
}


def test_upstreams_sizes_and_thresholds() -> None:
    got = {name: (WORKLOADS[name].default, WORKLOADS[name].threshold) for name in SMOKE}
    assert got == {
        "SchedulingWithResourceClaimTemplate": (Size(500, 2500, 2500), 56),
        "SchedulingWithResourceClaim": (Size(500, 2500, 2500), None),
        "FirstAvailable": (Size(1, 0, 10), None),
        "SchedulingWithResourceClaimTemplateToleration": (Size(1, 0, 10), None),
        "ExtendedResource": (Size(1, 0, 10), None),
        "ExtendedResource_25Classes": (Size(500, 2500, 2500), 197),
        "ExtendedResource_50Classes": (Size(500, 2500, 2500), 195),
        "ExtendedResourceScoring": (Size(200, 0, 2000), 336),
        "ExtendedResourceScoring_5000pods_500nodes": (Size(500, 0, 5000), 164),
        "ExtendedResourceScoring/fast": (Size(3, 0, 10), None),
        "SteadyStateClusterResourceClaimTemplate/empty": (Size(500, 0, 10), 64),
        "SteadyStateClusterResourceClaimTemplate/half": (Size(500, 0, 10), 60),
        "SteadyStateClusterResourceClaimTemplate/full": (Size(500, 0, 10), 60),
    }
    # upstream's initClaims at each size it lists: empty/half/full_{100,200,500}nodes
    fills = {(w.dra.init_fill, s.nodes): dra_init_claims(w.dra, s) for name in STEADY
             for w in [WORKLOADS[name]] if w.dra is not None for s in w.sizes}
    assert fills == {("empty", 500): 0, ("empty", 200): 0, ("empty", 100): 0,
                     ("half", 500): 2500, ("half", 200): 1000, ("half", 100): 500,
                     ("full", 500): 4990, ("full", 200): 1990, ("full", 100): 990}
    assert WORKLOADS["SchedulingWithResourceClaim"].dra == Dra(max_claims_per_node=2, claim_template=None,
                                                               claim_ref=True)
    # extendedresource/scoring's params: classes, devices per node, nodes without DRA; its scheduler config
    scoring = {name: (w.dra.classes, w.dra.max_claims_per_node, w.dra.nodes_without_dra, w.profile)
               for name, w in WORKLOADS.items() if w.dra is not None and w.dra.scoring}
    assert scoring == {"ExtendedResourceScoring": (10, 20, 0, dynamicresources.SCORING_PROFILE),
                       "ExtendedResourceScoring_5000pods_500nodes": (20, 20, 0, dynamicresources.SCORING_PROFILE),
                       "ExtendedResourceScoring/fast": (2, 10, 1, dynamicresources.SCORING_PROFILE)}
    assert dynamicresources.SCORING_PROFILE["pluginConfig"][0]["args"]["scoringStrategy"] == {
        "type": "LeastAllocated", "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                                                {"name": "example.com/gpu", "weight": 1}]}


def test_the_test_drivers_slice_and_the_pod_templates() -> None:
    s = parse_resource_slice(dra_slice("scheduler-perf-dra-3", 10))
    assert (s.driver, s.node_name, s.pool.name, s.pool.resource_slice_count) == (
        DRA_DRIVER, "scheduler-perf-dra-3", "scheduler-perf-dra-3", 1)
    assert [d.name for d in s.devices] == [f"instance-{i}" for i in range(10)]
    ref = dra_pod(Dra(claim_ref=True), template("pod-with-claim-ref"), 7)
    assert ref["spec"]["resourceClaims"] == [{"name": "resource", "resourceClaimName": "test-claim-1"}]
    ext = dra_pod(Dra(classes=25), template("pod-with-extended-resource"), 27)
    assert ext["spec"]["containers"][0]["resources"] == {"requests": {"example.com/gpu-2": "1"},
                                                         "limits": {"example.com/gpu-2": "1"}}
    # deviceclass-extended-resource-scoring.yaml and pod-with-extended-resource-scoring.yaml: every
    # class backs example.com/gpu, every pod asks for one
    scoring = Dra(device_classes=(), claim_template=None, classes=3, scoring=True)
    assert [(c["metadata"]["name"], c["spec"]["extendedResourceName"]) for c in dynamicresources.dra_device_classes(scoring)] \
        == [(f"scoring-test-class-{i}", "example.com/gpu") for i in range(3)]
    pod = dra_pod(scoring, template("pod-with-extended-resource-scoring"), 7)
    assert pod["spec"]["containers"][0]["resources"] == {"requests": {"example.com/gpu": "1"},
                                                         "limits": {"example.com/gpu": "1"}}


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_every_measured_pod_is_bound_with_its_devices_on_its_node(name: str, monkeypatch: pytest.MonkeyPatch
                                                                  ) -> None:
    w, size = WORKLOADS[name], SMOKE[name]
    assert w.dra is not None
    if w.dra.steady:    # 10 s upstream; 1 s is enough to see batches come and go
        monkeypatch.setitem(workloads.WORKLOADS, name, replace(w, dra=replace(w.dra, steady=1.0)))
    r = run_core(name, size, time_limit=60)
    assert r.complete
    if w.dra.steady:
        # batches of 10: all bound, deleted with their claims, created anew; the last batch is
        # still there, each pod with its claim (the earlier ones' devices were given back)
        assert r.bound >= 2 * size.pods
        assert len(r.claims) <= size.pods      # the last batch, cut off by the deadline
    else:
        assert r.bound == size.pods
        assert set(r.claims) == set(r.placements) and len(r.claims) == size.pods
    for pod, devices in r.claims.items():
        assert len(devices) == 1
        driver, pool, _ = devices[0].split("/")
        # node-local devices: the pool is the node's name, and the pod is on that node
        assert driver == DRA_DRIVER and pool == r.placements[pod]
    shares = Counter(d for devices in r.claims.values() for d in devices)
    # the shared claims' five pods use one device together
    assert set(shares.values()) <= ({5} if w.dra.claim_ref else {1})
    # no device given to two claims, the allocResourceClaims ones included
    given = [d for devices in r.allocations.values() for d in devices]
    assert len(given) == len(set(given))
    # allocated: the allocResourceClaims claims, then one claim per pod (per five pods when shared)
    # of the init and measured pods, or of the steady state's last batch (the earlier ones' are gone)
    pods = len(r.claims) if w.dra.steady else size.init_pods + size.pods
    assert len(r.allocations) == dra_init_claims(w.dra, size) + (
        -(-size.init_pods // 5) - (-size.pods // 5) if w.dra.claim_ref else pods)


@pytest.mark.parametrize(("name", "size"), [
    pytest.param("SchedulingWithResourceClaimTemplate", Size(2, 5, 10), id="claim template"),
    pytest.param("ExtendedResource", Size(1, 0, 10), id="extended resource"),
    pytest.param("SchedulingWithResourceClaimTemplateToleration", Size(1, 0, 10), id="device taint toleration"),
    pytest.param("ExtendedResourceScoring/fast", Size(3, 0, 10), id="extended resource scoring"),
])
def test_e2e_mode_binds_every_measured_pod_with_its_devices(name: str, size: Size) -> None:
    """Through the API against the simulated cluster, whose resourceclaim controller makes the
    template claims, and the operator's DRA informers: each pod bound where its device is."""
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e(name, size, time_limit=120)
    assert r.complete and r.bound == size.pods and r.mode == "e2e"
    assert set(r.claims) == set(r.placements) and len(r.claims) == size.pods
    for pod, devices in r.claims.items():
        assert len(devices) == 1 and devices[0].split("/")[1] == r.placements[pod]
    given = [d for devices in r.allocations.values() for d in devices]
    assert len(given) == len(set(given)) == size.init_pods + size.pods


def test_the_toleration_workload_binds_only_because_of_the_toleration(monkeypatch: pytest.MonkeyPatch) -> None:
    """dra/devicetaints: the rule (no deviceSelector: every device) taints the devices NoSchedule;
    with upstream's plain claim template instead of the tolerating one, no pod binds."""
    name = "SchedulingWithResourceClaimTemplateToleration"
    w = WORKLOADS[name]
    assert w.dra is not None and w.dra.taint_rules == ("devicetaintrule",) and w.dra.nodes_without_dra == 1
    assert dynamicresources.DRA_TEMPLATES["devicetaintrule"]["spec"] == {
        "taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"}}
    monkeypatch.setitem(workloads.WORKLOADS, name, replace(w, dra=replace(w.dra, claim_template="resourceclaimtemplate")))
    r = run_core(name, Size(1, 0, 10), time_limit=5)
    assert r.bound == 0 and not r.claims
