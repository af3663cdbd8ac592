"""The simulated controller manager: builds every controller of one API server, registers them as store
listeners, and owns their timers and tasks (started and stopped with the aiohttp application).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.disruption import DisruptionController
from scheduler.simulator.controllers.eventttl import DEFAULT_EVENT_TTL, EventTTL
from scheduler.simulator.controllers.garbagecollector import GarbageCollector
from scheduler.simulator.controllers.gpudriver import GpuDriver
from scheduler.simulator.controllers.kubelet import Kubelet
from scheduler.simulator.controllers.kubernetesservice import KubernetesService
from scheduler.simulator.controllers.namespace import NamespaceController
from scheduler.simulator.controllers.resourceclaims import ResourceClaimController
from scheduler.simulator.controllers.resourcequota import ResourceQuotaController
from scheduler.simulator.controllers.serviceaccounts import RootCACertPublisher, ServiceAccountsController
from scheduler.simulator.controllers.volumes import VolumeController
from scheduler.simulator.controllers.workloads import WorkloadControllers
from scheduler.simulator.interfaces import ClusterWriter

__all__ = ["Controllers"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]


class Controllers:
    """The simulated controller manager and kubelet of one ``ApiServer``, with their timers and tasks."""

    def __init__(self, api: ClusterWriter, *, pod_running_after: float | None, pod_termination_seconds: float,
                 pod_completion_seconds: float = 2.0, provision_seconds: float = 0.2, gpus_per_node: int = 0,
                 gpu_attributes: Obj | None = None, root_ca: bytes = b"",
                 event_ttl: float = DEFAULT_EVENT_TTL) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()
        self._timers: set[asyncio.TimerHandle] = set()
        self.disruption = DisruptionController(api, self, pods_become_ready=pod_running_after is not None)
        self.kubelet = Kubelet(api, self, self.disruption, running_after=pod_running_after,
                               termination_seconds=pod_termination_seconds, completion_seconds=pod_completion_seconds)
        self.workloads = WorkloadControllers(api, self)
        self.volumes = VolumeController(api, self, provision_seconds=provision_seconds)
        self.claims = ResourceClaimController(api, self)
        self.gpus = GpuDriver(api, self, gpus_per_node=gpus_per_node, attributes=gpu_attributes)
        self.gc = GarbageCollector(api, self)
        self.namespaces = NamespaceController(api, self)
        self.serviceaccounts = ServiceAccountsController(api, self)
        self.root_ca = RootCACertPublisher(api, self, root_ca)
        self.quota = ResourceQuotaController(api, self)
        self.kubernetes_service = KubernetesService(api, self)
        self.event_ttl = EventTTL(api, self, event_ttl)

    def start(self) -> None:
        self.spawn(self.disruption.run())
        # the informers' initial list: the namespaces made before the loop ran
        self.serviceaccounts.sync_all()
        self.root_ca.sync_all()

    def stop(self) -> None:
        for t in list(self._tasks):
            t.cancel()
        for h in list(self._timers):
            h.cancel()

    def spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def later(self, delay: float, fn: Callable[[], None]) -> None:
        loop = asyncio.get_running_loop()
        handle: asyncio.TimerHandle

        def run() -> None:
            self._timers.discard(handle)
            try:
                fn()
            except ApiError:
                pass
            except Exception:
                log.exception("simulated controller failed")
        handle = loop.call_later(delay, run)
        self._timers.add(handle)
