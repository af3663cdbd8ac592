"""The one door between the scheduling core and the API: an interface, implemented by the edges.

The core never imports an HTTP library. The operator implements ``SchedulerClient`` over the
Kubernetes API; the benchmark's core mode and the tests implement it in memory. Errors are raised
as ``scheduler.errors.ClientError`` subclasses (``ConflictError`` for 409, ``NotFoundError`` for 404).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from scheduler.model import Pod
from scheduler.model.volumes import PersistentVolume, PersistentVolumeClaim

__all__ = ["SchedulerClient"]


class SchedulerClient(Protocol):
    async def bind(self, pod: Pod, node_name: str) -> None:
        """Create the ``v1.Binding`` of ``pod`` to ``node_name``."""
        ...

    async def report_scheduled(self, pod: Pod, node_name: str, message: str) -> None:
        """Post the ``Normal Scheduled`` event (``Successfully assigned ns/name to node``)."""
        ...

    async def report_failure(self, pod: Pod, reason: str, message: str, nominated_node: str | None) -> None:
        """Post ``Warning FailedScheduling`` and set ``PodScheduled=False`` with ``reason``
        (``Unschedulable`` or ``SchedulerError``); set or clear ``status.nominatedNodeName`` when
        ``nominated_node`` is not ``None``."""
        ...

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        """Evict a preemption victim as upstream's ``PreemptPod``: set its ``DisruptionTarget``
        condition (reason ``PreemptionByScheduler``), delete it (uid precondition), and post
        ``Normal Preempted`` (``Preempted by pod <uid> on node <node>``). A victim already gone is
        not an error."""
        ...

    async def clear_nomination(self, pod: Pod) -> None:
        """Clear ``status.nominatedNodeName`` of a lower-priority pod whose node was taken."""
        ...

    async def annotate(self, pod: Pod, annotations: Mapping[str, str]) -> None:
        """Merge ``annotations`` into the pod's ``metadata.annotations`` (a merge patch): the decision
        record of a pod that asked for it (``scheduling.kopf-scheduler.io/explain: "true"``)."""
        ...

    async def bind_volume(self, pv: PersistentVolume, claim: PersistentVolumeClaim) -> None:
        """VolumeBinding's PreBind for a static binding (upstream's ``BindPodVolumes``, its PV
        ``Update``): set the PV's ``spec.claimRef`` to ``claim`` and annotate it
        ``pv.kubernetes.io/bound-by-controller: "yes"``, conditional on ``pv.resource_version`` (a
        ``ConflictError`` when the PV changed since it was read). The PV controller binds the claim."""
        ...

    async def select_node(self, claim: PersistentVolumeClaim, node_name: str) -> None:
        """VolumeBinding's PreBind for a claim to provision: annotate it
        ``volume.kubernetes.io/selected-node: <node_name>``, conditional on
        ``claim.resource_version``. The provisioner then creates the volume for that node."""
        ...
