"""The volume plugins through a whole scheduling cycle, with a profile that enables them (they are
registered, not default): preemption resolves a ReadWriteOncePod conflict as upstream's does, a
bound PV's zone steers the pod, and a full CSI attach limit sends the pod elsewhere."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from scheduler.cache import VolumeStore
from scheduler.framework.status import Code
from scheduler.model import Pod
from tests.builders import make_scheduler, node, pod
from tests.plugins.volumes import pv, pv_controller, pvc, store

VOLUME_PLUGINS = {"plugins": {"multiPoint": {"enabled": [
    {"name": "VolumeRestrictions"}, {"name": "NodeVolumeLimits"}, {"name": "VolumeZone"}]}}}


def with_claim(name: str, claim: str, **kw: Any) -> Pod:
    return pod(name, spec={"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}, **kw)


def schedule(s: Any, p: Pod) -> None:
    async def go() -> None:
        s.queue.add(p)
        info = s.queue.pop(timeout=0)
        assert info is not None
        await s.finish(s.schedule_one(info))
        for _ in range(20):
            await asyncio.sleep(0)
    asyncio.run(go())


def test_read_write_once_pod_conflict_is_resolved_by_preemption() -> None:
    volumes = store(pv("pv-data"), pvc("data", volume_name="pv-data", access_modes=["ReadWriteOncePod"]))
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=volumes)
    s.cache.add_node(node("n1"))
    s.cache.add_node(node("n2"))
    s.cache.add_pod(with_claim("low", "data", node_name="n1", priority=0))
    schedule(s, with_claim("high", "data", priority=100))
    (key, reason, message, nominated), = client.failures
    assert key == "default/high"
    assert reason == "Unschedulable"
    assert "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode" in message
    assert [(v, n) for v, _, n in client.preempted] == [("default/low", "n1")]
    assert nominated == "n1"


def test_read_write_once_pod_conflict_with_a_higher_priority_user_is_not_preempted() -> None:
    volumes = store(pv("pv-data"), pvc("data", volume_name="pv-data", access_modes=["ReadWriteOncePod"]))
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=volumes)
    s.cache.add_node(node("n1"))
    s.cache.add_pod(with_claim("first", "data", node_name="n1", priority=100))
    schedule(s, with_claim("second", "data", priority=0))
    assert client.preempted == [] and not client.bound
    assert client.failures[0][2] == ("0/1 nodes are available: 1 node has pod using PersistentVolumeClaim with the "
                                     "same name and ReadWriteOncePod access mode. preemption: 0/1 nodes are available: "
                                     "1 No preemption victims found for incoming pod.")


def test_bound_volume_zone_steers_the_pod() -> None:
    zone = "topology.kubernetes.io/zone"
    volumes = store(pv("pv-b", {zone: "b"}), pvc("data", volume_name="pv-b"))
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=volumes)
    for name, z in (("a1", "a"), ("a2", "a"), ("b1", "b")):
        s.cache.add_node(node(name, labels={zone: z}))
    p = with_claim("web", "data")
    schedule(s, p)
    assert client.bound == {p.uid: "b1"}


def test_full_attach_limit_sends_the_pod_elsewhere() -> None:
    driver = "ebs.csi.aws.com"
    objects = [pv(f"pv{i}", csi={"driver": driver, "volumeHandle": f"vol-{i}"}) for i in range(2)]
    objects += [pvc(f"c{i}", volume_name=f"pv{i}") for i in range(2)]
    volumes: VolumeStore = store(*objects)
    for n in ("n1", "n2"):
        volumes.on_event("CSINode", "ADDED", {"metadata": {"name": n}, "spec": {"drivers": [
            {"name": driver, "nodeID": n, "allocatable": {"count": 1}}]}})
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=volumes)
    s.cache.add_node(node("n1", cpu="8"))    # emptier in CPU: it would win without the limit
    s.cache.add_node(node("n2", cpu="4"))
    s.cache.add_pod(with_claim("old", "c0", node_name="n1"))
    p = with_claim("new", "c1")
    schedule(s, p)
    assert client.bound == {p.uid: "n2"}


def test_preemption_frees_an_attach_slot() -> None:
    """Preemption's dry run accounts for volume limits, as upstream's: the victim's volume leaves the
    count, so the node fits once it goes."""
    driver = "ebs.csi.aws.com"
    objects = [pv(f"pv{i}", csi={"driver": driver, "volumeHandle": f"vol-{i}"}) for i in range(2)]
    objects += [pvc(f"c{i}", volume_name=f"pv{i}") for i in range(2)]
    volumes = store(*objects)
    volumes.on_event("CSINode", "ADDED", {"metadata": {"name": "n1"}, "spec": {"drivers": [
        {"name": driver, "nodeID": "n1", "allocatable": {"count": 1}}]}})
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=volumes)
    s.cache.add_node(node("n1"))
    s.cache.add_pod(with_claim("low", "c0", node_name="n1", priority=0))
    schedule(s, with_claim("high", "c1", priority=100))
    (_, reason, message, nominated), = client.failures
    assert reason == "Unschedulable" and "node(s) exceed max volume count" in message
    assert [(v, n) for v, _, n in client.preempted] == [("default/low", "n1")] and nominated == "n1"


def test_without_a_volume_store_claims_read_as_not_found() -> None:
    """Handle.volumes None: every plugin answers as upstream's does when its listers return NotFound."""
    from scheduler.framework.handle import Handle
    from scheduler.plugins import nodevolumelimits, volumebinding, volumerestrictions, volumezone
    from tests.plugins.volumes import run
    p = with_claim("web", "data")
    n = node("n1")
    missing = (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'persistentvolumeclaim "data" not found')
    assert run(volumerestrictions.new(None, Handle()), p, n) == (missing, None)
    assert run(volumezone.new(None, Handle()), p, n) == (missing, None)
    assert run(volumebinding.new(None, Handle()), p, n) == (missing, None)
    assert run(nodevolumelimits.new(None, Handle()), p, n) == (
        None, (Code.UNSCHEDULABLE_AND_UNRESOLVABLE, 'looking up PVC default/data: persistentvolumeclaim "data" not found'))


def test_volume_binding_reserves_a_static_pv_for_one_pod_only() -> None:
    """Two pods, one local PV on n1 for their WaitForFirstConsumer class (no provisioner): the first
    goes to n1 and Reserve assumes the PV bound to its claim, so the second finds none."""
    hostname = "kubernetes.io/hostname"
    volumes = store(
        {"kind": "StorageClass", "metadata": {"name": "local"}, "provisioner": "kubernetes.io/no-provisioner",
         "volumeBindingMode": "WaitForFirstConsumer"},
        {"kind": "PersistentVolume", "metadata": {"name": "local-n1"}, "status": {"phase": "Available"},
         "spec": {"storageClassName": "local", "capacity": {"storage": "10Gi"}, "nodeAffinity": {"required": {
             "nodeSelectorTerms": [{"matchExpressions": [{"key": hostname, "operator": "In", "values": ["n1"]}]}]}}}},
        pvc("a", storage_class="local"), pvc("b", storage_class="local"))
    spec = {"plugins": {"multiPoint": {"enabled": [{"name": "VolumeBinding"}]}}}
    s, client = make_scheduler(spec, volumes=volumes)
    pv_controller(client, volumes)          # PreBind's write binds at once
    s.cache.add_node(node("n1"))
    s.cache.add_node(node("n2"))
    first, second = with_claim("first", "a"), with_claim("second", "b")
    schedule(s, first)
    assert client.bound == {first.uid: "n1"}
    assert client.volume_binds == [("local-n1", "default/a")]
    bound_pv = volumes.pv("local-n1")
    assert bound_pv is not None and bound_pv.claim_ref is not None and bound_pv.claim_ref[:2] == ("default", "a")
    schedule(s, second)
    assert second.uid not in client.bound
    assert client.failures[-1][2].startswith("0/2 nodes are available: 2 node(s) didn't find available persistent "
                                             "volumes to bind.")


WFFC = {"kind": "StorageClass", "metadata": {"name": "wffc"}, "provisioner": "csi.example.com",
        "volumeBindingMode": "WaitForFirstConsumer"}


def test_a_claim_to_provision_is_written_and_waited_for_through_the_cycle() -> None:
    """Reserve assumes the claim annotated with the node, PreBind writes the annotation, the
    provisioner (the test's client) binds it, and only then is the pod bound."""
    volumes = store(WFFC, pvc("data", storage_class="wffc"))
    s, client = make_scheduler(VOLUME_BINDING, volumes=volumes)
    pv_controller(client, volumes)
    s.cache.add_node(node("n1"))
    p = with_claim("db", "data")
    schedule(s, p)
    assert client.selected_nodes == [("default/data", "n1")] and client.bound == {p.uid: "n1"}
    bound = volumes.pvc("default", "data")
    assert bound is not None and bound.volume_name == "pvc-data" and not volumes.is_assumed(bound)


def test_a_claim_that_never_binds_fails_pre_bind_and_the_pod_is_retried() -> None:
    """No provisioner answers: PreBind fails after bindTimeoutSeconds with upstream's text, the
    framework unreserves (the assumed claim is restored), and the pod waits in the queue with
    backoff, not lost."""
    volumes = store(WFFC, pvc("data", storage_class="wffc"))
    spec = {**VOLUME_BINDING, "pluginConfig": [{"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 0}}]}
    s, client = make_scheduler(spec, volumes=volumes)
    s.cache.add_node(node("n1"))
    p = with_claim("db", "data")
    schedule(s, p)
    assert client.bound == {} and client.selected_nodes == [("default/data", "n1")]
    (key, reason, message, _), = client.failures
    assert (key, reason, message) == ("default/db", "SchedulerError",
                                      "binding rejected: binding volumes: context deadline exceeded")
    assert s.queue.where(p.uid) is not None                     # requeued
    assert s.cache.assumed_count() == 0
    restored = volumes.pvc("default", "data")
    assert restored is not None and "volume.kubernetes.io/selected-node" not in restored.annotations


VOLUME_BINDING = {"plugins": {"multiPoint": {"enabled": [{"name": "VolumeBinding"}]}}}


# test/integration/scheduler/preemption/preemption_test.go TestReadWriteOncePodPreemption: one node,
# ReadWriteOncePod claims bound to their PVs; the victims are low priority, the preemptor high.
RWOP_PREEMPTION = [
    ("preempt single pod", [("victim-pod", ["pvc-1"])], ["pvc-1"], ["victim-pod"]),
    ("preempt two pods", [("victim-pod-1", ["pvc-1"]), ("victim-pod-2", ["pvc-2"])], ["pvc-1", "pvc-2"],
     ["victim-pod-1", "victim-pod-2"]),
    ("preempt single pod with two volumes", [("victim-pod", ["pvc-1", "pvc-2"])], ["pvc-1", "pvc-2"],
     ["victim-pod"]),
]


@pytest.mark.parametrize(("name", "existing", "claims", "preempted"), RWOP_PREEMPTION,
                         ids=[c[0] for c in RWOP_PREEMPTION])
def test_read_write_once_pod_preemption(name: str, existing: list[tuple[str, list[str]]], claims: list[str],
                                        preempted: list[str]) -> None:
    objects: list[dict[str, Any]] = []
    for i in (1, 2):
        objects.append(pv(f"pv-with-read-write-once-pod-{i}", accessModes=["ReadWriteOncePod"],
                          capacity={"storage": "1Mi"}))
        objects.append(pvc(f"pvc-{i}", volume_name=f"pv-with-read-write-once-pod-{i}",
                           access_modes=["ReadWriteOncePod"]))
    s, client = make_scheduler(VOLUME_PLUGINS, volumes=store(*objects))
    s.cache.add_node(node("node1", cpu="500m", memory="500Ki", pods=32))
    for victim, victim_claims in existing:
        s.cache.add_pod(pod(victim, None, None, node_name="node1", priority=0, spec={"volumes": [
            {"name": c, "persistentVolumeClaim": {"claimName": c}} for c in victim_claims]}))
    preemptor = pod("preemptor-pod", None, None, priority=100, spec={"volumes": [
        {"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]})
    schedule(s, preemptor)
    assert sorted(v for v, _, _ in client.preempted) == [f"default/{v}" for v in preempted]
    assert client.failures[-1][3] == "node1"        # nominated there
