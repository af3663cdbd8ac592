"""The volume workloads of ``kopf-scheduler bench`` (issue #18: upstream's SchedulingInTreePVs,
SchedulingMigratedInTreePVs, SchedulingCSIPVs and PreemptionPVs) in core mode, at upstream's
integration-test sizes: every measured pod bound, each with its own claim bound to its own PV as
``CreatePodWithPersistentVolume`` pre-binds them, and the attach limit each workload's CSINodes
publish honoured. Results only: the timing thresholds live in the benchmark."""

from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest

from scheduler.benchmark import workloads
from scheduler.benchmark.core import run_core
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.templates import template
from scheduler.benchmark.volumes import EBS_CSI, csi_node, volume_objects, with_claim
from scheduler.benchmark.workloads import WORKLOADS

# upstream's "5Nodes" workloads of volumes/performance-config.yaml
SMOKE = {"SchedulingInTreePVs": Size(5, 5, 10), "SchedulingMigratedInTreePVs": Size(5, 5, 10),
         "SchedulingCSIPVs": Size(5, 5, 10), "PreemptionPVs": Size(5, 20, 5)}
MOST_ALLOCATED = {"pluginConfig": [{"name": "NodeResourcesFit",
                                    "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}


def test_upstreams_sizes_and_thresholds() -> None:
    got = {name: (WORKLOADS[name].default, WORKLOADS[name].threshold) for name in SMOKE}
    assert got == {"SchedulingInTreePVs": (Size(5000, 1000, 2000), 290),
                   "SchedulingMigratedInTreePVs": (Size(5000, 5000, 5000), 100),
                   "SchedulingCSIPVs": (Size(5000, 5000, 5000), 100),
                   "PreemptionPVs": (Size(1000, 4000, 1000), None)}


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_every_measured_pod_is_bound_with_its_own_volume(name: str) -> None:
    w, size = WORKLOADS[name], SMOKE[name]
    r = run_core(name, size, time_limit=60)
    assert r.complete and r.bound == size.pods
    prefix = template(w.measured)["metadata"]["generateName"]
    # pod i of the measured namespace mounts pvc-i, bound to the PV <namespace>-vol-i whose claimRef names it
    assert r.volumes == {f"{w.namespace}/{prefix}{i}": f"{w.namespace}-vol-{i}" for i in range(size.pods)}
    assert set(r.placements) == set(r.volumes)
    if name == "PreemptionPVs":
        # 4 low-priority pods of 900m fill each node; a 3-CPU pod fits only where 3 of them were preempted.
        assert len(set(r.placements.values())) == size.pods


@pytest.mark.parametrize("name", ["SchedulingCSIPVs", "SchedulingMigratedInTreePVs"])
def test_the_csi_nodes_attach_limit_holds(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under MostAllocated the pods pack onto one node; with the CSINodes' count at 3 (39 upstream),
    NodeVolumeLimits stops each node at 3 volumes: the CSI PVs, and the in-tree EBS PVs that the
    migrated workload's CSINodes name as migrated to ebs.csi.aws.com."""
    w = WORKLOADS[name]
    assert w.node_strategy is not None
    packed = run_core(name, Size(5, 0, 15), profile=MOST_ALLOCATED, time_limit=60)
    limited = replace(w, node_strategy=replace(w.node_strategy, csi_allocatable=((EBS_CSI, 3),)))
    monkeypatch.setitem(workloads.WORKLOADS, name, limited)
    spread = run_core(name, Size(5, 0, 15), profile=MOST_ALLOCATED, time_limit=60)
    assert packed.complete and spread.complete
    assert sorted(Counter(packed.placements.values()).values()) == [15]
    assert sorted(Counter(spread.placements.values()).values()) == [3, 3, 3, 3, 3]


def test_the_objects_are_upstreams_templates_pre_bound() -> None:
    """``CreatePodWithPersistentVolume`` with ``bindVolume``: claim pvc-i and PV <ns>-vol-i name each
    other; the AWS volume id is vol-i, the CSI handle the PV's name; the pod mounts the claim."""
    aws, csi = WORKLOADS["SchedulingInTreePVs"].volumes, WORKLOADS["SchedulingCSIPVs"].volumes
    assert aws is not None and csi is not None
    pvc, pv = volume_objects(aws, "ns", 7)
    assert pvc["metadata"] == {"name": "pvc-7", "namespace": "ns",
                               "annotations": {"pv.kubernetes.io/bind-completed": "true"}}
    assert pvc["spec"] == {"accessModes": ["ReadOnlyMany"], "resources": {"requests": {"storage": "1Gi"}},
                           "volumeName": "ns-vol-7"}
    assert pv["metadata"] == {"name": "ns-vol-7"} and pv["spec"]["awsElasticBlockStore"] == {"volumeID": "vol-7"}
    assert pv["spec"]["claimRef"] == {"kind": "PersistentVolumeClaim", "namespace": "ns", "name": "pvc-7",
                                      "apiVersion": "v1"}
    assert pvc["status"] == pv["status"] == {"phase": "Bound"}
    _, pv = volume_objects(csi, "ns", 7)
    assert pv["spec"]["csi"] == {"driver": EBS_CSI, "volumeHandle": "ns-vol-7"}
    pod = with_claim({"spec": {"containers": []}}, 7)
    assert pod["spec"]["volumes"] == [{"name": "vol", "persistentVolumeClaim": {"claimName": "pvc-7"}}]
    strategy = WORKLOADS["SchedulingMigratedInTreePVs"].node_strategy
    assert strategy is not None
    assert csi_node("n1", strategy) == {
        "apiVersion": "storage.k8s.io/v1", "kind": "CSINode",
        "metadata": {"name": "n1", "annotations": {"storage.alpha.kubernetes.io/migrated-plugins":
                                                   "kubernetes.io/aws-ebs"}},
        "spec": {"drivers": [{"name": EBS_CSI, "nodeID": "n1", "allocatable": {"count": 39}}]}}
    assert WORKLOADS["SchedulingCSIPVs"].node_strategy is not None
    assert csi_node("n1", WORKLOADS["SchedulingCSIPVs"].node_strategy)["metadata"]["annotations"] == {
        "storage.alpha.kubernetes.io/migrated-plugins": ""}


def test_e2e_mode_binds_every_measured_pod() -> None:
    """The operator against the simulated cluster: the CSINodes, claims and PVs created through the API
    (the cluster's PV controller binds each claim again once its PV exists), every measured pod bound."""
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e("SchedulingMigratedInTreePVs", Size(5, 5, 10), time_limit=120)
    assert r.complete and r.bound == 10 and r.mode == "e2e"
