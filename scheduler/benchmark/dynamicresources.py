"""scheduler_perf's DRA workloads: the DRA test driver's nodes and slices, DeviceClasses, claims
and their allocations (``workloads.py`` is the overview; the pod templates are ``templates.py``'s).

**Dynamic resource allocation** (upstream's ``dra/performance-config.yaml`` and its ``prioritizedlist``
and ``extendedresource`` directories): a workload with ``dra`` (``Dra``) runs its pods (namespaces
``init`` and ``test``) against ``nodes`` nodes with the DRA test driver, each publishing one
ResourceSlice of ``max_claims_per_node`` devices; the pods take one device each through a claim
generated from ``test-claim-template`` (``pod-with-claim-template.yaml``), through a claim shared by
five pods (``pod-with-claim-ref.yaml``), or through an extended resource a DeviceClass backs
(``pod-with-extended-resource*.yaml``; ``extendedresource/scoring``'s run under its own scheduler
config, ``Workload.profile``). A size is (``nodesWithDRA``, ``initPods``, ``measurePods``);
a steady-state workload's ``pods`` is its batch (``count: 10``). ``partitionabledevices``,
``consumablecapacity`` and the DRABindingConditions tests add ``createAny`` ResourceSlices
(``dra_template_slices``, ``Size.resource_slices`` of each), selector claims allocated first, and
the ``updateDeviceConditions`` / ``checkPodScheduled`` ops (``Dra.binding``). upstream's list
attributes, compatibility groups and workload claims directories need features this scheduler does
not have (BENCHMARKS.md lists them, not run).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import (
    make_node,
)

__all__ = ["DRA_DRIVER", "DRA_TEMPLATES", "NODE_WITH_DRA", "Dra", "dra_claim", "dra_device_classes",
           "dra_init_allocations", "dra_init_claims", "dra_node", "dra_node_name", "dra_pod",
           "dra_selector_allocations", "dra_selector_claim", "dra_slice", "dra_template_slices"]

Obj = dict[str, Any]


# --- dynamic resource allocation -----------------------------------------------------------------

DRA_DRIVER = "test-driver.cdi.k8s.io"
_EXACTLY = {"exactly": {"deviceClassName": "test-class"}}
# upstream's dra/templates/*.yaml (resource.k8s.io/v1). The pod templates are in TEMPLATES.
DRA_TEMPLATES: dict[str, Obj] = {
    "deviceclass": {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}]}},
    "deviceclass-no-devices": {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "no-devices-class"},
        "spec": {"selectors": [{"cel": {"expression": 'device.driver == "no-such-driver.cdi.k8s.io"'}}]}},
    # resourceclaimtemplate.yaml with its defaults (numRequests 1, no selectors, no constraints)
    "resourceclaimtemplate": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                              "metadata": {"name": "test-claim-template"},
                              "spec": {"spec": {"devices": {"requests": [{"name": "req-0", **_EXACTLY}]}}}},
    "resourceclaimtemplate-first-available": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "firstAvailable": [
            {"name": "sub-0", "deviceClassName": "no-devices-class"},
            {"name": "sub-1", "deviceClassName": "test-class"}]}]}}}},
    # resourceclaimtemplate-toleration.yaml: tolerates devicetaintrule.yaml's taint
    "resourceclaimtemplate-toleration": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
            "deviceClassName": "test-class", "tolerations": [{"key": "example.com/taint", "operator": "Exists"}]}}]}}}},
    # devicetaintrule.yaml: no deviceSelector ("Empty selector -> all devices!"), taint NoSchedule
    "devicetaintrule": {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                        "metadata": {"name": "taint-all-devices"},
                        "spec": {"taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"}}},
    # resourceclaimtemplate-for-two-devices.yaml: two devices of one slice (partitionable)
    "resourceclaimtemplate-for-two-devices": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {
            "requests": [{"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 2}}],
            "constraints": [{"requests": ["req-0"], "matchAttribute": "dra.example.com/slice"}]}}}},
    # resourceclaimtemplate-backtracking.yaml: seven devices, which only one choice of the eight fits
    "resourceclaimtemplate-backtracking": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": "req-0", "exactly": {"deviceClassName": "test-class", "count": 7}}]}}}},
    # deviceclass-consumablecapacity.yaml and resourceclaimtemplate-consumablecapacity.yaml: two
    # requests of 10Gi of a shareable device's memory each
    "deviceclass-consumablecapacity": {
        "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "test-class"},
        "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}" &&\n'
                                                      "device.allowMultipleAllocations == true"}}]}},
    "resourceclaimtemplate-consumablecapacity": {
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
        "metadata": {"name": "test-claim-template"},
        "spec": {"spec": {"devices": {"requests": [
            {"name": f"req-{k}", "exactly": {"deviceClassName": "test-class",
                                             "capacity": {"requests": {"memory": "10Gi"}}}} for k in (0, 1)]}}}},
    # resourceclaim.yaml: test-claim-<i>
    "resourceclaim": {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                      "metadata": {"name": "test-claim-"},
                      "spec": {"devices": {"requests": [{"name": "req-0", **_EXACTLY}]}}},
}
# extendedresource/scoring/scheduler-config.yaml: NodeResourcesFit LeastAllocated over cpu, memory and
# example.com/gpu (weight 1 each), so that the DRA-backed resource takes part in scoring.
SCORING_PROFILE: Obj = {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {
    "type": "LeastAllocated",
    "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
                  {"name": "example.com/gpu", "weight": 1}]}}}]}


@dataclass(frozen=True)
class Dra:
    """The DRA ops of a workload of upstream's ``dra/**/performance-config.yaml``.

    ``createNodes`` with ``node-with-dra-test-driver.yaml`` makes the workload's ``nodes``
    (``scheduler-perf-dra-<i>``) after ``nodes_without_dra`` plain ones; ``createResourceDriver``
    publishes one ResourceSlice per DRA node with ``max_claims_per_node`` devices (``dra_slice``);
    ``device_classes`` and the ``claim_template`` (in each pod namespace) are created with
    ``createAny``; ``classes`` > 0 creates that many ``deviceclass-extended-resource.yaml`` classes
    (``test-class-<i>`` backing ``example.com/gpu-<i>``) instead, or, with ``scoring``, that many
    ``deviceclass-extended-resource-scoring.yaml`` classes (``scoring-test-class-<i>``, all backing
    ``example.com/gpu``: the pods' request is not split across classes). ``claim_ref``: the pods name
    the shared claims ``test-claim-<i/5>`` (created before their pods, one per five pods).

    ``init_fill`` is ``allocResourceClaims`` over ``resourceclaim.yaml`` claims created first in
    ``init``: none (``empty``), half of the devices (``half``) or all but ``pods`` (``full``), which
    is upstream's ``initClaims`` at every size it lists (2500 and 4990 of 500 × 10 devices).
    ``steady`` > 0 is ``createPods`` with ``steadyState``: ``pods`` pods at a time, all deleted and
    created anew each time the whole batch is bound, for ``steady`` seconds (then ``init_pods`` is 0).
    ``taint_rules``: the ``DRA_TEMPLATES`` DeviceTaintRules created with ``createAny`` first.

    ``driver``: whether ``createResourceDriver`` runs (the partitionable workloads have none);
    ``slices``: the ``dra_template_slices`` templates created ``Size.resource_slices`` times each
    with ``createAny``; ``init_fill="selector"``: ``resource_slices`` claims of
    ``resourceclaim-with-selector.yaml`` allocated first (``dra_selector_allocations``).
    ``binding``: the DRABindingConditions tests: the driver's devices carry binding conditions
    (``dra_slice``), the pods are created without waiting for them (their PreBind waits),
    ``updateDeviceConditions`` sets ``binding`` (condition type, status) on every allocated device
    of the pods' claims, and ``checkPodScheduled`` expects the pods all bound (``scheduled``) or
    all still unbound for 5 s."""

    max_claims_per_node: int = 10
    nodes_without_dra: int = 0
    device_classes: tuple[str, ...] = ("deviceclass",)
    claim_template: str | None = "resourceclaimtemplate"
    claim_ref: bool = False
    classes: int = 0
    scoring: bool = False
    init_fill: str = "empty"
    steady: float = 0.0
    taint_rules: tuple[str, ...] = ()
    driver: bool = True
    slices: tuple[str, ...] = ()
    binding: tuple[str, str] | None = None
    scheduled: bool = True


def dra_node_name(i: int) -> str:
    """The name ``node-with-dra-test-driver.yaml`` gives DRA node ``i`` (the driver's glob is
    ``scheduler-perf-dra-*``)."""
    return f"scheduler-perf-dra-{i}"


def dra_node(i: int) -> Obj:
    """``node-with-dra-test-driver.yaml``'s node ``i``: the default node, labelled ``node-with-dra=true``
    for the ``createAny`` slices' node selector."""
    return make_node(dra_node_name(i), dict([NODE_WITH_DRA]))


def dra_slice(node_name: str, devices: int, binding: bool = False) -> Obj:
    """The ResourceSlice ``createResourceDriver`` publishes for ``node_name`` (upstream's
    ``resourceSlice()`` in ``scheduler_perf/dra.go``), in resource.k8s.io/v1's flat device shape:
    pool = the node's name, one slice, devices ``instance-<i>`` with attributes ``model``, ``family``,
    ``driverVersion`` and ``dra.example.com/numa`` = i, capacity ``memory`` 1Gi. upstream's function
    also sets ``usageRestrictedToNode`` and the binding conditions, which the API server strips
    unless DRADeviceBindingConditions is on, as it is in none of these workloads (only in the
    DRABindingConditions tests), so they are left out here as the API server would store them;
    ``binding`` keeps them: ``bindsToNode``, ``bindingConditions`` [DeviceAttached],
    ``bindingFailureConditions`` [AttachmentFailed]. (upstream's ``bindingTimeoutSeconds`` 60 is not a
    resource.k8s.io/v1 field: the timeout is DynamicResourcesArgs.bindingTimeout.)"""
    extra: Obj = {"bindsToNode": True, "bindingConditions": ["DeviceAttached"],
                  "bindingFailureConditions": ["AttachmentFailed"]} if binding else {}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": node_name},
            "spec": {"driver": DRA_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 0, "resourceSliceCount": 1},
                     "devices": [{"name": f"instance-{i}",
                                  "attributes": {"model": {"string": "A100"}, "family": {"string": "GPU"},
                                                 "driverVersion": {"version": "1.2.3"},
                                                 "dra.example.com/numa": {"int": i}},
                                  "capacity": {"memory": {"value": "1Gi"}}, **extra} for i in range(devices)]}}


# The node selector of the createAny slices: node-with-dra-test-driver.yaml labels its nodes so.
NODE_WITH_DRA = ("node-with-dra", "true")
_WITH_DRA: Obj = {"nodeSelectorTerms": [{"matchExpressions": [
    {"key": NODE_WITH_DRA[0], "operator": "In", "values": [NODE_WITH_DRA[1]]}]}]}


def _slice(name: str, pool: str, body: Obj, node_name: str | None = None) -> Obj:
    where: Obj = {"nodeName": node_name} if node_name else {"nodeSelector": copy.deepcopy(_WITH_DRA)}
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name},
            "spec": {"driver": DRA_DRIVER, "pool": {"name": pool, "generation": 1, "resourceSliceCount": 2},
                     **where, **body}}


def _consumes(counter_set: str, **counters: str) -> Obj:
    return {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}


def _device(name: str, index: int, *, preallocate: bool | None = False, counters: str | None = None,
            consumes: Sequence[Obj] = (), **extra: Any) -> Obj:
    dev: Obj = {"name": name}
    if preallocate is not None:
        dev["attributes"] = {"preallocate": {"bool": preallocate}, "dra.example.com/slice": {"int": index}}
    if counters is not None:
        dev["capacity"] = {"counters": {"value": counters}}
    if consumes:
        dev["consumesCounters"] = list(consumes)
    return {**dev, **extra}


def dra_template_slices(template: str, index: int) -> list[Obj]:
    """Object ``index`` of a ResourceSlice template that ``createAny`` creates ``resourceSlices``
    times: pool ``resourceslice-<index>`` in two slices, its counter sets
    (``resourceslice-countersets-<index>``) and its devices (``resourceslice-devices-<index>``), as
    resource.k8s.io/v1 requires (``sharedCounters`` and ``devices`` never share a slice); the devices
    are on the nodes labelled ``node-with-dra=true``.

    - ``resourceslice-partitionable`` (``-countersets.yaml`` / ``-devices.yaml``): counters 1-4 of 1
      each; two devices of two counters (``counters`` capacity 2; the first ``preallocate``) and four
      of one.
    - ``resourceslice-partitionable-backtracking``: eight ``cpu<k>`` counters and 70Gi of ``mem``;
      eight devices of one cpu each, the first with 20Gi of mem, the others 10Gi: seven devices fit
      only without the first. Its counter-set slice is on node ``scheduler-perf-dra-<index>``.
    - ``resourceslice-consumablecapacity``: counters 1-2; ``shareable-device`` and a two-counter
      device, both ``allowMultipleAllocations`` with 80Gi of memory (``requestPolicy`` default 1Gi,
      at least 1Gi). upstream's template (resource.k8s.io/v1beta2) has both in one slice, which v1
      refuses: split as the partitionable ones."""
    pool = f"resourceslice-{index}"
    sets, devices = f"resourceslice-countersets-{index}", f"resourceslice-devices-{index}"
    if template == "resourceslice-partitionable":
        counters = {f"counter{k}": {"value": "1"} for k in range(1, 5)}
        devs = [_device("device-2-counters-1", index, preallocate=True, counters="2",
                        consumes=[_consumes("counter-set", counter1="1", counter2="1")]),
                _device("device-2-counters-2", index, counters="2",
                        consumes=[_consumes("counter-set", counter3="1", counter4="1")]),
                *(_device(f"device-1-counter-{k}", index, counters="1",
                          consumes=[_consumes("counter-set", **{f"counter{k}": "1"})]) for k in range(1, 5))]
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set", "counters": counters}]}),
                _slice(devices, pool, {"devices": devs})]
    if template == "resourceslice-partitionable-backtracking":
        cpu = {f"cpu{k}": {"value": "1"} for k in range(1, 9)}
        devs = [_device(f"device-{k}", index, preallocate=None,
                        consumes=[_consumes("counter-set-for-cpu", **{f"cpu{k}": "1"}),
                                  _consumes("counter-set-for-mem", mem="20Gi" if k == 1 else "10Gi")])
                for k in range(1, 9)]
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set-for-cpu", "counters": cpu},
                                                       {"name": "counter-set-for-mem",
                                                        "counters": {"mem": {"value": "70Gi"}}}]},
                       node_name=dra_node_name(index)),
                _slice(devices, pool, {"devices": devs})]
    if template == "resourceslice-consumablecapacity":
        memory = {"memory": {"value": "80Gi", "requestPolicy": {"default": "1Gi", "validRange": {"min": "1Gi"}}}}
        shareable = _device("shareable-device", index, allowMultipleAllocations=True)
        shareable["capacity"] = copy.deepcopy(memory)
        two = _device("device-2-counters-1", index, preallocate=True, counters="2",
                      consumes=[_consumes("counter-set", counter1="1", counter2="1")], allowMultipleAllocations=True)
        two["capacity"].update(copy.deepcopy(memory))
        counters = {f"counter{k}": {"value": "1"} for k in (1, 2)}
        return [_slice(sets, pool, {"sharedCounters": [{"name": "counter-set", "counters": counters}]}),
                _slice(devices, pool, {"devices": [shareable, two]})]
    raise KeyError(template)


def dra_device_classes(dra: Dra) -> list[Obj]:
    """The DeviceClasses the workload creates with ``createAny``."""
    if dra.classes and dra.scoring:
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
                 "metadata": {"name": f"scoring-test-class-{i}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}],
                          "extendedResourceName": "example.com/gpu"}} for i in range(dra.classes)]
    if dra.classes:
        return [{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": f"test-class-{i}"},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRA_DRIVER}"'}}],
                          "extendedResourceName": f"example.com/gpu-{i}"}} for i in range(dra.classes)]
    return [copy.deepcopy(DRA_TEMPLATES[name]) for name in dra.device_classes]


def dra_claim(i: int, namespace: str) -> Obj:
    """``resourceclaim.yaml`` number ``i`` in ``namespace``: ``test-claim-<i>``, one request of test-class."""
    claim = copy.deepcopy(DRA_TEMPLATES["resourceclaim"])
    claim["metadata"] = {"name": f"test-claim-{i}", "namespace": namespace}
    return claim


def dra_init_claims(dra: Dra, size: Size) -> int:
    """upstream's ``initClaims``: the claims allocated before the measured pods (``init_fill``)."""
    devices = size.nodes * dra.max_claims_per_node
    return {"empty": 0, "half": devices // 2, "full": max(devices - size.pods, 0),
            "selector": size.resource_slices}[dra.init_fill]


def dra_selector_claim(k: int) -> Obj:
    """``resourceclaim-with-selector.yaml`` number ``k`` in ``init``: one device with at least two
    counters that is ``preallocate``."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": f"test-claim-with-selector-{k}", "namespace": "init"},
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {
                "deviceClassName": "test-class", "selectors": [{"cel": {"expression": (
                    f"device.capacity['{DRA_DRIVER}'].counters.compareTo(quantity('2')) >= 0 &&\n"
                    f"device.attributes['{DRA_DRIVER}'].preallocate")}}]}}]}}}


def dra_selector_allocations(size: Size) -> list[tuple[int, Obj]]:
    """``allocResourceClaims`` over the ``dra_selector_claim`` claims: in a partitionable pool only
    ``device-2-counters-1`` matches the selector, so claim ``k`` gets pool ``k``'s (upstream has one
    claim per slice at every size), with the devices' node selector (the allocator's
    ``nodeSelector`` for a slice that has one)."""
    return [(k, {"devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER, "pool": f"resourceslice-{k}",
                                          "device": "device-2-counters-1"}]},
                 "nodeSelector": copy.deepcopy(_WITH_DRA)}) for k in range(size.resource_slices)]


def dra_init_allocations(dra: Dra, size: Size, rng: random.Random) -> list[tuple[int, Obj]]:
    """upstream's ``allocResourceClaimsOp``: for each of the ``initClaims`` claims (``test-claim-<k>``
    in ``init``), its ``status.allocation`` on a random node that can still take it, without a
    pod, that node's first free device (the allocator's first solution; upstream shuffles the nodes
    and takes the first that fits: a uniform pick among the nodes with a free device, as here)."""
    if dra.init_fill == "selector":
        return []       # dra_selector_allocations
    free = {dra_node_name(i): 0 for i in range(size.nodes)}
    open_nodes = list(free)
    allocations = []
    for k in range(dra_init_claims(dra, size)):
        node = rng.choice(open_nodes)
        device = free[node]
        free[node] += 1
        if free[node] >= dra.max_claims_per_node:
            open_nodes.remove(node)
        allocations.append((k, {
            "devices": {"results": [{"request": "req-0", "driver": DRA_DRIVER, "pool": node,
                                     "device": f"instance-{device}"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}}))
    return allocations


def dra_pod(dra: Dra, pod: Obj, i: int) -> Obj:
    """Pod ``i`` of a DRA template with its index filled in: ``test-claim-<i/5>`` for a claim
    reference (``DivideInt .Index 5``), ``example.com/gpu-<i mod classes>`` requested and limited
    for an extended resource (the ``Mod .Index 25`` / ``50`` templates)."""
    for pc in pod["spec"].get("resourceClaims") or ():
        if "resourceClaimName" in pc:
            pc["resourceClaimName"] = f"test-claim-{i // 5}"
    if dra.classes and not dra.scoring:
        gpu = {f"example.com/gpu-{i % dra.classes}": "1"}
        pod["spec"]["containers"][0]["resources"] = {"requests": dict(gpu), "limits": dict(gpu)}
    return pod
