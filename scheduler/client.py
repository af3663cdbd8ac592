"""The one door between the scheduling core and the API: an interface, implemented by the edges.

The core never imports an HTTP library. The operator implements ``SchedulerClient`` over the
Kubernetes API; the benchmark's core mode and the tests implement it in memory. Errors are raised
as ``scheduler.errors.ClientError`` subclasses (``ConflictError`` for 409, ``NotFoundError`` for 404).

The ResourceClaim methods are the writes upstream's DynamicResources plugin makes
(``bindClaim``, ``Unreserve``, ``PostFilter``, the extended-resource claim), one method per API call
so the plugin keeps upstream's retry logic (``retry.RetryOnConflict``: refetch with ``get_claim``,
then write again). The writes that upstream makes with ``Update``/``UpdateStatus`` are conditional on
the claim's ``resource_version`` (a ``ConflictError`` when it changed since it was read); each
returns the claim as written, with its new resourceVersion, for the next conditional write and for
the store's assumption.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from scheduler.model import Pod
from scheduler.model.dra import AllocationResult, ResourceClaim
from scheduler.model.podgroup import PodGroup
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

    async def report_pod_event(self, pod: Pod, type_: str, reason: str, action: str, note: str) -> None:
        """Post an event about ``pod`` from the scheduler (``events.k8s.io/v1``: ``type_`` Normal
        or Warning, ``reason``, ``action``, ``note``): a plugin's, such as DynamicResources'
        ``BindingConditionsPending``."""
        ...

    async def set_pod_group_condition(self, group: PodGroup, condition: Mapping[str, object]) -> None:
        """Set one of the PodGroup's ``status.conditions`` (a ``metav1.Condition``: type, status,
        reason, message, lastTransitionTime, observedGeneration) through its ``/status``
        subresource, merged by type:
        the ``PodGroupInitiallyScheduled`` condition the PodGroup cycle writes."""
        ...

    async def preempt(self, victim: Pod, preemptor: Pod, node_name: str, group: PodGroup | None = None) -> None:
        """Evict a preemption victim as upstream's ``PreemptPod``: set its ``DisruptionTarget``
        condition (reason ``PreemptionByScheduler``), delete it (uid precondition), and post
        ``Normal Preempted`` (``Preempted by pod <uid> on node <node>``). For a PodGroup's
        preemption (``group``; upstream's ``podGroupExecutorPreemptor``) the preemptor is the group:
        ``Preempted by podgroup <group uid> on node <node>``, the condition's message ends in
        ``higher priority podgroup``, and the event's related object is the PodGroup. A victim
        already gone is not an error."""
        ...

    async def clear_nomination(self, pod: Pod) -> None:
        """Clear ``status.nominatedNodeName`` of a lower-priority pod whose node was taken."""
        ...

    async def nominate(self, pod: Pod, node_name: str) -> None:
        """Set ``status.nominatedNodeName`` of a pod about to be bound to ``node_name``, before a
        PreBind that has work or a Permit wait (NominatedNodeNameForExpectation), so other
        components see where it goes."""
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

    async def get_claim(self, namespace: str, name: str) -> ResourceClaim:
        """``GET`` a ResourceClaim from the API (not the informer): PreBind's fresh copy after a
        conflict. ``NotFoundError`` when it is gone."""
        ...

    async def add_claim_finalizer(self, claim: ResourceClaim) -> ResourceClaim:
        """Add ``resource.kubernetes.io/delete-protection`` to the claim's ``metadata.finalizers``
        (upstream's ``Update`` before an allocation is written), conditional on
        ``claim.resource_version``; the claim as written."""
        ...

    async def reserve_claim(self, claim: ResourceClaim, pod: Pod, allocation: AllocationResult | None
                            ) -> ResourceClaim:
        """Write the claim's status (upstream's ``UpdateStatus`` in ``bindClaim``): ``allocation``
        when given, and ``status.reservedFor`` = ``claim.reserved_for`` plus ``{resource: pods,
        name, uid}`` of ``pod``, conditional on ``claim.resource_version``; the claim as written."""
        ...

    async def unreserve_claim(self, claim: ResourceClaim, pod: Pod) -> None:
        """Remove ``pod`` from ``status.reservedFor`` (upstream's Unreserve: a strategic-merge patch
        deleting the entry by uid, with the claim's uid as precondition, so no fresh copy is needed)."""
        ...

    async def deallocate_claim(self, claim: ResourceClaim) -> None:
        """Clear ``status.allocation``, ``status.reservedFor`` and ``status.devices`` (upstream's
        PostFilter ``UpdateStatus``), conditional on ``claim.resource_version``."""
        ...

    async def create_claim(self, body: Mapping[str, Any]) -> ResourceClaim:
        """Create a ResourceClaim in ``body["metadata"]["namespace"]`` (``metadata.generateName``
        honoured): the claim upstream creates for extended resources backed by DRA. The claim as
        created (name, uid, resourceVersion)."""
        ...

    async def delete_claim(self, claim: ResourceClaim) -> None:
        """Delete a claim the scheduler created (upstream's ``deleteClaim``): first remove
        ``resource.kubernetes.io/delete-protection`` from its finalizers (an update conditional on
        ``claim.resource_version``: ``ConflictError`` when it changed; the caller refetches), then
        delete it (uid precondition). A claim already gone is not an error."""
        ...

    async def set_extended_resource_claim_status(self, pod: Pod, claim_name: str,
                                                 request_mappings: Sequence[Mapping[str, str]]) -> None:
        """Set the pod's ``status.extendedResourceClaimStatus`` (``resourceClaimName`` and the
        ``requestMappings``, each ``{containerName, resourceName, requestName}``): the claim made
        for its extended resources backed by DRA (upstream's ``PatchPodStatus``)."""
        ...
