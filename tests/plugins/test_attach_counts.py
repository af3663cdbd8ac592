"""NodeVolumeLimits' columns (``plugins.attach_counts``) against the rule they replace.

``reference`` is the per-node form of upstream's ``CSILimits.Filter``, as this plugin ran it before
the columns: for each node, its CSINode's limits, the distinct volumes of all its pods, and the new
pod's volumes not among them. Seeded random histories of a small cluster (pods placed and removed,
what-ifs and their restore, claims bound and rebound, PVs replaced, CSINodes and CSIDrivers changed,
nodes added and removed) must give, after every step, the same verdict and reason on every node
from the columns as from the reference. The upstream tables (``test_nodevolumelimits``) pin the rule
itself on one node.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any

import numpy as np
import pytest

from scheduler.cache import Cache, VolumeStore
from scheduler.framework import CycleState, Status
from scheduler.model import Pod
from scheduler.plugins.nodevolumelimits import (
    ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED,
    NodeVolumeLimits,
    VolumeError,
    driver_not_installed,
)
from tests.plugins.volumes import pv, pvc, storage_class
from tests.st import MakeNode, MakePod

A, B = "a.csi.example.com", "b.csi.example.com"
EBS_IN_TREE = "kubernetes.io/aws-ebs"
NODES = [f"node-{i}" for i in range(6)]
CLAIMS = [f"claim-{i}" for i in range(14)]


def reference(plugin: NodeVolumeLimits, volumes: VolumeStore, pod: Pod, cache: Cache) -> list[tuple[str, str] | None]:
    """Per node of ``NODES`` (in the cache), ``None`` (passes) or ``(code, reason)``; an error on any
    node is the verdict of every node, as the batched Filter reports it."""
    out: list[tuple[str, str] | None] = []
    table = cache.table
    for name in NODES:
        row = table.row_of.get(name)
        if row is None or not table.valid[row]:
            continue
        info = table.info(row)
        csi = volumes.csi_node(name)
        has_csi = csi is not None
        try:
            new = plugin.attachable_volumes(pod, has_csi, new_pod=True)
        except VolumeError as e:
            s = Status.unresolvable(str(e)) if e.not_found else Status.as_error(e)
            return [(s.code.name, s.message())]
        if not new:
            out.append(None)
            continue
        missing = ""
        if plugin._volume_limit_scaling:
            for driver in dict.fromkeys(new.values()):
                spec = volumes.csi_driver(driver)
                if spec is not None and spec.prevent_pod_scheduling_if_missing and (
                        csi is None or driver not in csi.drivers):
                    missing = driver
                    break
        if missing:
            out.append(("UNSCHEDULABLE", driver_not_installed(missing)))
            continue
        limits = csi.limits() if csi is not None else {}
        if not limits:
            out.append(None)
            continue
        attached: dict[str, str] = {}
        try:
            for other in info.pods.values():
                attached.update(plugin.attachable_volumes(other, has_csi, new_pod=False))
        except VolumeError as e:
            s = Status.as_error(e)
            return [(s.code.name, s.message())]
        counts: dict[str, int] = {}
        for driver in attached.values():
            counts[driver] = counts.get(driver, 0) + 1
        extra: dict[str, int] = {}
        for unique, driver in new.items():
            if unique not in attached:
                extra[driver] = extra.get(driver, 0) + 1
        over = any(d in limits and counts.get(d, 0) + k > limits[d] for d, k in extra.items())
        out.append(("UNSCHEDULABLE", ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED) if over else None)
    return out


def columnar(plugin: NodeVolumeLimits, pod: Pod, cache: Cache) -> list[tuple[str, str] | None]:
    snap = cache.snapshot()
    rows = np.array([snap.table.row_of[n] for n in NODES
                     if n in snap.table.row_of and snap.table.valid[snap.table.row_of[n]]], np.int64)
    v = plugin.filter_nodes(CycleState(), pod, snap, rows)
    out: list[tuple[str, str] | None] = []
    for i in range(len(rows)):
        if not v.failed[i]:
            out.append(None)
            continue
        s = v.statuses[0 if v.status_ids is None else int(v.status_ids[i])]
        out.append((s.code.name, s.message()))
    if out and all(o is not None and o[0] == "ERROR" for o in out) and len(set(out)) == 1:
        return out[:1]
    if out and all(o is not None and o[0] == "UNSCHEDULABLE_AND_UNRESOLVABLE" for o in out) and len(set(out)) == 1:
        return out[:1]
    return out


class World:
    """A small cluster whose storage and pods a seeded random history changes."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.volumes = VolumeStore()
        self.cache = Cache()
        self.plugin = NodeVolumeLimits(self.volumes, random_prefix="prefix")
        self.placed: dict[str, tuple[Pod, str]] = {}
        self.serial = 0
        self.volumes.on_event("StorageClass", "ADDED", storage_class("sc-a", A))
        self.volumes.on_event("StorageClass", "ADDED", storage_class("sc-ebs", EBS_IN_TREE))
        for name in NODES[:5]:
            self.add_node(name)
        for i in range(10):
            self.new_pv(f"pv-{i}")
        for claim in CLAIMS:
            self.rebind(claim)

    def add_node(self, name: str) -> None:
        self.cache.add_node(MakeNode().Name(name).Obj())
        if self.rng.random() < 0.8:
            self.set_csi_node(name)

    def set_csi_node(self, name: str) -> None:
        drivers = []
        for d in (A, B, "ebs.csi.aws.com"):
            if self.rng.random() < 0.7:
                entry: dict[str, Any] = {"name": d, "nodeID": name}
                if self.rng.random() < 0.7:
                    entry["allocatable"] = {"count": self.rng.randint(0, 4)}
                drivers.append(entry)
        self.volumes.on_event("CSINode", "ADDED", {"kind": "CSINode", "metadata": {"name": name},
                                                   "spec": {"drivers": drivers}})

    def new_pv(self, name: str) -> None:
        kind = self.rng.random()
        handle = f"h-{self.rng.randint(0, 6)}"        # handles repeat: one volume behind two PVs
        if kind < 0.4:
            body = pv(name, csi={"driver": A, "volumeHandle": handle})
        elif kind < 0.7:
            body = pv(name, csi={"driver": B, "volumeHandle": handle})
        elif kind < 0.9:
            body = pv(name, awsElasticBlockStore={"volumeID": f"vol-{handle}"})
        else:
            body = pv(name, hostPath={"path": "/tmp"})
        self.volumes.on_event("PersistentVolume", "ADDED", body)

    def rebind(self, claim: str) -> None:
        r = self.rng.random()
        if r < 0.6:
            body = pvc(claim, volume_name=f"pv-{self.rng.randint(0, 11)}")     # pv-10, pv-11 are missing
        elif r < 0.75:
            body = pvc(claim, storage_class=self.rng.choice(["sc-a", "sc-ebs", "sc-gone"]))
        elif r < 0.85:
            body = pvc(claim)
        else:
            self.volumes.on_event("PersistentVolumeClaim", "DELETED", pvc(claim))
            return
        self.volumes.on_event("PersistentVolumeClaim", "ADDED", body)

    def make_pod(self) -> Pod:
        self.serial += 1
        b = MakePod().Name(f"p-{self.serial}").UID(f"uid-{self.serial}")
        for claim in self.rng.sample(CLAIMS, self.rng.randint(0, 2)):
            b = b.PVC(claim)
        if self.rng.random() < 0.2:
            b = b.Volume({"name": "inline", "awsElasticBlockStore": {"volumeID": f"vol-h-{self.rng.randint(0, 6)}"}})
        return b.Obj()

    def live_nodes(self) -> list[str]:
        return [n for n in NODES if n in self.cache.table.row_of and self.cache.table.valid[self.cache.table.row_of[n]]]

    def step(self) -> None:
        rng, r = self.rng, self.rng.random()
        if r < 0.35 or not self.placed:
            nodes = self.live_nodes()
            if nodes:
                pod = self.make_pod()
                node = rng.choice(nodes)
                self.cache.add_pod(replace(pod, node_name=node))
                self.placed[pod.uid] = (pod, node)
        elif r < 0.5:
            uid = rng.choice(sorted(self.placed))
            pod, node = self.placed.pop(uid)
            self.cache.remove_pod(replace(pod, node_name=node))
        elif r < 0.65:
            self.rebind(rng.choice(CLAIMS))
        elif r < 0.72:
            self.new_pv(f"pv-{rng.randint(0, 11)}")
        elif r < 0.8:
            name = rng.choice(NODES)
            if rng.random() < 0.7:
                self.set_csi_node(name)
            else:
                self.volumes.on_event("CSINode", "DELETED", {"kind": "CSINode", "metadata": {"name": name}})
        elif r < 0.85:
            prevent = rng.choice([None, True, False])
            body = {"kind": "CSIDriver", "metadata": {"name": rng.choice([A, B])},
                    "spec": {} if prevent is None else {"preventPodSchedulingIfMissing": prevent}}
            self.volumes.on_event("CSIDriver", "ADDED", body)
        elif r < 0.9:
            name = rng.choice(NODES)
            if name in self.live_nodes() and rng.random() < 0.5:
                self.cache.remove_node(name)
            else:
                self.add_node(name)
        else:
            self.what_if()

    def check(self, pods: int = 3) -> None:
        for _ in range(pods):
            pod = self.make_pod()
            with self.cache.lock:
                got = columnar(self.plugin, pod, self.cache)
                want = reference(self.plugin, self.volumes, pod, self.cache)
            assert got == want, (pod.volumes, got, want)

    def what_if(self) -> None:
        """Checks inside a what-if (preemption's dry run: pods removed, then some put back) and
        after its restore."""
        with self.cache.lock:
            by_node: dict[str, list[Pod]] = {}
            live = self.live_nodes()    # preemption's candidates: a removed node's pods are not victims
            for pod, node in self.placed.values():
                if node in live:
                    by_node.setdefault(node, []).append(replace(pod, node_name=node))
            columns_only = self.rng.random() < 0.5
            with self.cache.what_if(columns_only=columns_only) as w:
                victims = [(p, n) for n, ps in by_node.items() for p in ps if self.rng.random() < 0.5]
                for p, n in victims:
                    w.remove(p, n)
                self.check(2)
                for p, n in victims[: len(victims) // 2]:
                    w.add(p, n)
                self.check(2)
            self.check(2)


@pytest.mark.parametrize("seed", range(12))
def test_columns_give_the_reference_verdicts(seed: int) -> None:
    world = World(random.Random(seed))
    world.check()
    for _ in range(120):
        world.step()
        world.check()


def test_a_volume_attached_by_another_pod_is_not_counted_twice() -> None:
    """Two nodes at their limit of 1 for driver A: only the node that already holds the new pod's
    volume takes it (upstream's "volume already attached" rule), found without a per-node pass."""
    volumes = VolumeStore()
    for name in ("n1", "n2"):
        volumes.on_event("CSINode", "ADDED", {"kind": "CSINode", "metadata": {"name": name}, "spec": {
            "drivers": [{"name": A, "nodeID": name, "allocatable": {"count": 1}}]}})
    for name, handle in (("pv-x", "x"), ("pv-y", "y")):
        volumes.on_event("PersistentVolume", "ADDED", pv(name, csi={"driver": A, "volumeHandle": handle}))
    for claim, name in (("cx", "pv-x"), ("cy", "pv-y"), ("cx2", "pv-x")):
        volumes.on_event("PersistentVolumeClaim", "ADDED", pvc(claim, volume_name=name))
    cache = Cache()
    for name in ("n1", "n2"):
        cache.add_node(MakeNode().Name(name).Obj())
    cache.add_pod(replace(MakePod().Name("on-1").PVC("cx").Obj(), node_name="n1"))
    cache.add_pod(replace(MakePod().Name("on-2").PVC("cy").Obj(), node_name="n2"))
    plugin = NodeVolumeLimits(volumes)
    with cache.lock:
        snap = cache.snapshot()
        rows = np.array([snap.table.row_of["n1"], snap.table.row_of["n2"]], np.int64)
        v = plugin.filter_nodes(CycleState(), MakePod().Name("new").PVC("cx2").Obj(), snap, rows)
    assert v.failed.tolist() == [False, True]
    assert v.statuses[0].message() == ERR_REASON_MAX_VOLUME_COUNT_EXCEEDED
