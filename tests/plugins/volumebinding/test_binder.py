"""VolumeBinding's PreBind (upstream's ``BindPodVolumes``: ``bindAPIUpdate`` then the
``checkBindings`` poll) and PreBindPreFlight, after ``binder.go``: one case per branch of
``checkBindings`` and of the writes, with upstream's error texts. The cases are ours: upstream's
TestBindAPIUpdate / TestCheckBindings / TestBindPodVolumes drive a fake clientset and the assume
caches, which here are the client protocol (``tests.builders.MemoryClient``, recording the writes)
and the ``VolumeStore`` (the tests play the informer: ``volumes.upsert`` is a watch event).

Every wait is real time but short (``bind_timeout`` of a fraction of a second): the point is that
the wait wakes on the store's change, not on a poll, and gives up at its deadline."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache, VolumeStore
from scheduler.errors import ConflictError
from scheduler.framework import CycleState
from scheduler.framework.status import Code, Status
from scheduler.model import NodeSelector, NodeSelectorTerm, Pod, Requirement, parse_node
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim
from scheduler.plugins import volumebinding
from scheduler.plugins.volumebinding import POLL_INTERVAL, VolumeBinding, VolumeBindingError
from tests.builders import MemoryClient
from tests.plugins.volumes import storage_class, store
from tests.st import MakePod

HOSTNAME = "kubernetes.io/hostname"
NODE = parse_node({"metadata": {"name": "node-a", "labels": {HOSTNAME: "node-a"}}})
BIND_COMPLETED = volumebinding.ANN_BIND_COMPLETED
SELECTED = "volume.kubernetes.io/selected-node"


def claim(name: str, cls: str, *, volume_name: str = "", annotations: dict[str, str] | None = None,
          rv: str = "10") -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default", "uid": f"uid-{name}", "resourceVersion": rv,
                            "annotations": dict(annotations or {})}
    spec: dict[str, Any] = {"storageClassName": cls, "resources": {"requests": {"storage": "1Gi"}}}
    if volume_name:
        spec["volumeName"] = volume_name
    return {"kind": "PersistentVolumeClaim", "metadata": meta, "spec": spec}


def local_pv(name: str, node: str = "node-a", rv: str = "20") -> dict[str, Any]:
    return {"kind": "PersistentVolume", "metadata": {"name": name, "resourceVersion": rv},
            "status": {"phase": "Available"},
            "spec": {"storageClassName": "local", "capacity": {"storage": "5Gi"}, "nodeAffinity": {"required": {
                "nodeSelectorTerms": [{"matchExpressions": [{"key": HOSTNAME, "operator": "In",
                                                             "values": [node]}]}]}}}}


CLASSES = [storage_class("local", "kubernetes.io/no-provisioner", mode="WaitForFirstConsumer"),
           storage_class("dyn", "csi.example.com", mode="WaitForFirstConsumer")]


def make_pod(*claims: str) -> Pod:
    p = MakePod().Name("web").Namespace("default").UID("web-uid")
    for c in claims:
        p.Volume({"name": c, "persistentVolumeClaim": {"claimName": c}})
    return p.Obj()


class Env:
    """A plugin reserved on node-a for ``pod``, with its client, store and cache."""

    def __init__(self, objects: list[dict[str, Any]], pod: Pod, *, bind_timeout: float = 2.0,
                 pod_exists: bool = True) -> None:
        self.volumes: VolumeStore = store(*CLASSES, *objects)
        self.client = MemoryClient()
        self.pod = pod
        self.pod_exists = pod_exists
        self.plugin = VolumeBinding(self.volumes, client=self.client, bind_timeout=bind_timeout,
                                    assigned_pod=lambda uid: pod if self.pod_exists else None)
        self.cache = Cache()
        self.cache.add_node(NODE)
        self.state = CycleState()
        with self.cache.lock:
            snap = self.cache.snapshot()
            _, s = self.plugin.pre_filter(self.state, pod, snap)
            assert s.is_success() or s.is_skip(), s
            v = self.plugin.filter_nodes(self.state, pod, snap, np.array([0], np.int64))
            assert not v.failed[0], v.statuses
            assert self.plugin.reserve(self.state, pod, "node-a").is_success()

    def pre_bind(self, *events: tuple[float, Any]) -> tuple[Status, float]:
        """Run PreBind while ``events`` (delay, callable) happen, as the PV controller's and the
        informer's; the status and how long PreBind took."""
        async def go() -> tuple[Status, float]:
            async def later(delay: float, fn: Any) -> None:
                await asyncio.sleep(delay)
                fn()
            tasks = [asyncio.ensure_future(later(d, fn)) for d, fn in events]
            t0 = time.monotonic()
            s = await self.plugin.pre_bind(self.state, self.pod, "node-a")
            took = time.monotonic() - t0
            for t in tasks:
                t.cancel()
            return s, took
        return asyncio.run(go())

    # --- the PV controller, as the informer shows it -------------------------------------------
    def pv(self, name: str) -> PersistentVolume:
        got = self.volumes.api_pv(name)
        assert got is not None
        return got

    def pvc(self, name: str) -> PersistentVolumeClaim:
        got = self.volumes.api_pvc("default", name)
        assert got is not None
        return got

    def bind(self, pv_name: str, claim_name: str, rv: str = "30") -> None:
        """The PV controller completes a binding: the PV's claimRef, the claim's volume name and
        bind-completed annotation, each a newer version."""
        c = self.pvc(claim_name)
        self.volumes.upsert(replace(self.pv(pv_name), claim_ref=("default", claim_name, c.uid), phase="Bound",
                                    resource_version=rv))
        self.volumes.upsert(replace(c, volume_name=pv_name, phase="Bound", resource_version=rv,
                                    annotations={**c.annotations, BIND_COMPLETED: "yes"}))

    def provision(self, claim_name: str, node: str = "node-a", rv: str = "30") -> None:
        """The provisioner creates a PV for the node, and the PV controller binds the claim."""
        c = self.pvc(claim_name)
        affinity = NodeSelector((NodeSelectorTerm((Requirement(HOSTNAME, "In", frozenset({node})),)),))
        self.volumes.upsert(PersistentVolume(f"pvc-{claim_name}", capacity=c.request, storage_class=c.storage_class,
                                             claim_ref=("default", claim_name, c.uid), node_affinity=affinity,
                                             phase="Bound", resource_version=rv))
        self.volumes.upsert(replace(c, volume_name=f"pvc-{claim_name}", resource_version=rv,
                                    annotations={**c.annotations, SELECTED: "node-a", BIND_COMPLETED: "yes"}))

    def annotate(self, claim_name: str, annotations: dict[str, str], rv: str = "30") -> None:
        self.volumes.upsert(replace(self.pvc(claim_name), annotations=annotations, resource_version=rv))


def error(s: Status) -> str:
    assert s.code == Code.ERROR, s
    assert isinstance(s.error, VolumeBindingError), s.error
    return s.message()


# --- nothing to bind ---------------------------------------------------------------------------------
def test_all_bound_skips_and_writes_nothing() -> None:
    env = Env([claim("data", "local", volume_name="pv-a", annotations={BIND_COMPLETED: "yes"}), local_pv("pv-a")],
              make_pod("data"))
    assert env.plugin.pre_bind_pre_flight(env.state, env.pod, "node-a").is_skip()
    assert env.plugin.pre_bind_wait(env.state) == 0.0
    s, _ = env.pre_bind()
    assert s.is_success() and env.client.volume_binds == [] and env.client.selected_nodes == []


def test_a_pod_without_claims_skips() -> None:
    env = Env([], make_pod())
    assert env.plugin.pre_bind_pre_flight(env.state, env.pod, "node-a").is_skip()
    assert env.pre_bind()[0].is_success()


def test_another_node_than_reserved_is_an_error() -> None:
    """PreBindPreFlight and PreBind: 'no pod volumes found for node' (podVolumesByNode has none)."""
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    s = env.plugin.pre_bind_pre_flight(env.state, env.pod, "node-b")
    assert error(s) == 'no pod volumes found for node "node-b"'
    s = asyncio.run(env.plugin.pre_bind(env.state, env.pod, "node-b"))
    assert error(s) == 'no pod volumes found for node "node-b"'


# --- static bindings ---------------------------------------------------------------------------------
def test_static_binding_is_written_then_waited_for() -> None:
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    assert env.plugin.pre_bind_pre_flight(env.state, env.pod, "node-a").is_success()
    assert env.plugin.pre_bind_wait(env.state) == 2.0
    s, took = env.pre_bind((0.05, lambda: env.bind("pv-a", "data")))
    assert s.is_success(), s
    assert env.client.volume_binds == [("pv-a", "default/data")]
    assert took < POLL_INTERVAL     # the store's change woke the wait; no poll was needed


def test_the_written_pv_carries_the_claim_ref_and_the_read_resource_version() -> None:
    """bind_volume gets the PV Reserve assumed (claimRef to the claim), at the version read: the
    write is conditional on it."""
    env = Env([claim("data", "local"), local_pv("pv-a", rv="20")], make_pod("data"))
    sent: list[tuple[PersistentVolume, PersistentVolumeClaim]] = []
    recorded = env.client.bind_volume

    async def spy(pv: PersistentVolume, c: PersistentVolumeClaim) -> None:
        sent.append((pv, c))
        await recorded(pv, c)
    env.client.bind_volume = spy    # type: ignore[method-assign]
    env.pre_bind((0.02, lambda: env.bind("pv-a", "data")))
    ((pv, c),) = sent
    assert pv.claim_ref == ("default", "data", "uid-data") and pv.resource_version == "20" and c.name == "data"


def test_a_resync_of_the_old_version_keeps_waiting() -> None:
    """The informer re-delivers the PV at the version the write was made against (no claimRef):
    that is not 'ClaimRef got reset', only not yet our update (CompareResourceVersion)."""
    env = Env([claim("data", "local"), local_pv("pv-a", rv="20")], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.volumes.upsert(env.pv("pv-a"))),
                        (0.05, lambda: env.bind("pv-a", "data")))
    assert s.is_success(), s


def test_claim_ref_reset() -> None:
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.volumes.upsert(replace(env.pv("pv-a"), resource_version="25"))))
    assert error(s) == 'binding volumes: ClaimRef got reset for pv "pv-a"'


@pytest.mark.parametrize(("deleted", "message"), [
    ("PersistentVolume", 'binding volumes: failed to check binding: could not find v1.PersistentVolume "pv-a"'),
    ("PersistentVolumeClaim", 'binding volumes: failed to check binding: could not find v1.PersistentVolumeClaim '
                              '"default/data"'),
])
def test_static_binding_objects_deleted(deleted: str, message: str) -> None:
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    name = "pv-a" if deleted == "PersistentVolume" else "data"
    s, _ = env.pre_bind((0.02, lambda: env.volumes.delete(deleted, "" if deleted == "PersistentVolume" else "default",
                                                         name)))
    assert error(s) == message


def test_bound_pv_whose_node_affinity_no_longer_matches() -> None:
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    other = NodeSelector((NodeSelectorTerm((Requirement(HOSTNAME, "In", frozenset({"node-b"})),)),))

    def moved() -> None:
        env.bind("pv-a", "data")
        env.volumes.upsert(replace(env.pv("pv-a"), node_affinity=other, resource_version="31"))
    s, _ = env.pre_bind((0.02, moved))
    assert error(s) == ("binding volumes: pv \"pv-a\" node affinity doesn't match node \"node-a\": "
                        "no matching NodeSelectorTerms")


# --- dynamic provisioning ----------------------------------------------------------------------------
def test_claim_to_provision_gets_the_selected_node_then_its_volume() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))
    s, took = env.pre_bind((0.05, lambda: env.annotate("data", {SELECTED: "node-a"}, rv="20")),
                           (0.1, lambda: env.provision("data")))
    assert s.is_success(), s
    assert env.client.selected_nodes == [("default/data", "node-a")]
    assert took < POLL_INTERVAL


def test_provisioned_claim_deleted() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.volumes.delete("PersistentVolumeClaim", "default", "data")))
    assert error(s) == ('binding volumes: failed to check provisioning pvc: could not find '
                        'v1.PersistentVolumeClaim "default/data"')


def test_selected_node_annotation_reset() -> None:
    """The provisioner gave up and removed the annotation, leaving none: 'selectedNode annotation
    reset' (the claim's annotations are nil)."""
    env = Env([claim("data", "dyn")], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.annotate("data", {})))
    assert error(s) == 'binding volumes: selectedNode annotation reset for PVC "data"'


def test_provisioning_failed() -> None:
    """The annotation removed while others stay (or set to another node): 'provisioning failed'."""
    env = Env([claim("data", "dyn", annotations={"example.com/keep": "x"})], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.annotate("data", {"example.com/keep": "x"})))
    assert error(s) == 'binding volumes: provisioning failed for PVC "data"'


def test_provisioned_pv_not_yet_seen_keeps_waiting() -> None:
    """The claim names its new volume before the PV reaches the informer: wait (tolerated NotFound)."""
    env = Env([claim("data", "dyn")], make_pod("data"))

    def claim_first() -> None:
        c = env.pvc("data")
        env.volumes.upsert(replace(c, volume_name="pvc-data", resource_version="30",
                                   annotations={SELECTED: "node-a", BIND_COMPLETED: "yes"}))
    s, took = env.pre_bind((0.02, claim_first), (0.08, lambda: env.provision("data", rv="31")))
    assert s.is_success(), s
    assert took < POLL_INTERVAL     # the wait watched the PV the claim named, too


def test_provisioned_pv_in_another_topology() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))
    s, _ = env.pre_bind((0.02, lambda: env.provision("data", node="node-b")))
    assert error(s) == ("binding volumes: pv \"pvc-data\" node affinity doesn't match node \"node-a\": "
                        "no matching NodeSelectorTerms")


# --- the wait itself ---------------------------------------------------------------------------------
def test_timeout() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"), bind_timeout=0.2)
    s, took = env.pre_bind()
    assert error(s) == "binding volumes: context deadline exceeded"
    assert 0.2 <= took < 0.2 + POLL_INTERVAL


def test_zero_timeout_fails_at_once() -> None:
    """bindTimeoutSeconds 0 is valid, and upstream's poll then returns its expired context's error
    without checking once: a pod with something to bind always fails."""
    env = Env([claim("data", "dyn")], make_pod("data"), bind_timeout=0)
    assert env.plugin.pre_bind_wait(env.state) == 0.0
    s, _ = env.pre_bind()
    assert error(s) == "binding volumes: context deadline exceeded"
    assert env.client.selected_nodes == [("default/data", "node-a")]     # the write was made first


def test_pod_deleted_while_waiting() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))

    def gone() -> None:
        env.pod_exists = False
        env.annotate("data", {SELECTED: "node-a"})     # any change of a watched object wakes the check
    s, _ = env.pre_bind((0.02, gone))
    assert error(s) == 'binding volumes: pod does not exist any more: pod "web" not found'


def test_node_deleted_while_waiting() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))

    def gone() -> None:
        env.cache.remove_node("node-a")
        env.annotate("data", {SELECTED: "node-a"})
    s, _ = env.pre_bind((0.02, gone))
    assert error(s) == 'binding volumes: failed to get node "node-a": node "node-a" not found'


def test_watches_are_removed_after_the_wait() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"), bind_timeout=0.05)
    env.pre_bind()
    assert env.volumes._watchers == {}


def test_a_watch_event_from_another_thread_wakes_the_wait() -> None:
    """The operator's watch handlers run in their own threads: the store's notification must reach
    the loop thread-safely."""
    import threading
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    s, took = env.pre_bind((0.02, lambda: threading.Timer(0.03, lambda: env.bind("pv-a", "data")).start()))
    assert s.is_success(), s
    assert took < POLL_INTERVAL


# --- the writes --------------------------------------------------------------------------------------
def test_an_api_conflict_is_an_error_to_retry_not_a_lost_pod() -> None:
    """A 409 on the PV (the PV controller or another scheduler changed it since Reserve read it)
    fails PreBind with the API's text. The status's error is no ConflictError: the binding cycle
    would read that as 'someone else bound the pod' and drop it."""
    env = Env([claim("data", "local"), local_pv("pv-a")], make_pod("data"))
    env.client.volume_error = ConflictError('Operation cannot be fulfilled on persistentvolumes "pv-a": the object '
                                            "has been modified; please apply your changes to the latest version and "
                                            "try again", status=409)
    s, _ = env.pre_bind()
    assert error(s) == ('Operation cannot be fulfilled on persistentvolumes "pv-a": the object has been modified; '
                        "please apply your changes to the latest version and try again")
    assert not isinstance(s.error, ConflictError)


def test_without_a_client() -> None:
    env = Env([claim("data", "dyn")], make_pod("data"))
    env.plugin._client = None
    assert error(env.pre_bind()[0]) == "VolumeBinding has no API client"


def test_unreserve_after_a_failed_pre_bind_restores_the_store() -> None:
    env = Env([claim("data", "local"), claim("other", "dyn"), local_pv("pv-a")], make_pod("data", "other"),
              bind_timeout=0.05)
    assert env.volumes.pv("pv-a").claim_ref is not None                       # type: ignore[union-attr]
    assert SELECTED in env.volumes.pvc("default", "other").annotations        # type: ignore[union-attr]
    s, _ = env.pre_bind()
    assert error(s) == "binding volumes: context deadline exceeded"
    assert env.client.volume_binds == [("pv-a", "default/data")]
    assert env.client.selected_nodes == [("default/other", "node-a")]        # PVs first, then claims
    env.plugin.unreserve(env.state, env.pod, "node-a")
    assert env.volumes.pv("pv-a").claim_ref is None                           # type: ignore[union-attr]
    assert SELECTED not in env.volumes.pvc("default", "other").annotations    # type: ignore[union-attr]
