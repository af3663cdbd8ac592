"""``Handle``: what a plugin factory may use besides its args (upstream's ``framework.Handle``).

The service fills every field; tests and tools leave out what they do not need, and plugins treat a
missing service as "nothing there" (no nominated pods, no PDBs, no storage objects) rather than failing.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from scheduler.cache.dra import DraStore
    from scheduler.cache.podgroups import PodGroupStore
    from scheduler.cache.volumes import VolumeStore
    from scheduler.client import SchedulerClient
    from scheduler.framework.interfaces import PodNominator
    from scheduler.framework.waiting_pods import WaitingPods
    from scheduler.metrics import Metrics
    from scheduler.model import LabelSelector, Pod, PodDisruptionBudget

__all__ = ["Handle"]


@dataclass(frozen=True, slots=True)
class Handle:
    client: SchedulerClient | None = None
    metrics: Metrics | None = None
    # The label selector of the Services and controllers (ReplicaSet, StatefulSet, ...) that own a
    # pod, as upstream's ``helper.DefaultSelector``; PodTopologySpread's default constraints need
    # it. The operator provides it from its listers; ``None`` means no default constraints.
    default_selector: Callable[[Pod], LabelSelector | None] | None = None
    # The queue's nominated pods (filters count them; preemption clears lower ones).
    nominator: PodNominator | None = None
    # The PodDisruptionBudgets the informer holds.
    pdbs: Callable[[], Sequence[PodDisruptionBudget]] | None = None
    # An assigned (or assumed) pod from the cache, by uid.
    assigned_pod: Callable[[str], Pod | None] | None = None
    # A number that changes whenever a pod joins or leaves the cache (``Cache.pods_version``): what
    # a plugin derived from ``assigned_pod`` holds while it is unchanged. ``None``: nothing is kept.
    placed_version: Callable[[], int] | None = None
    # Move pods to activeQ through PreEnqueue again (upstream's ``Handle.Activate``).
    activate: Callable[[Iterable[str]], None] | None = None
    # Run API work off the scheduling cycle's path (async preemption); the service tracks the task
    # so shutdown waits for it. ``None``: a task on the running loop.
    spawn: Callable[[Coroutine[Any, Any, None]], None] | None = None
    # PVs, PVCs, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities (upstream's storage
    # listers), fed by the edge's informers. ``None`` reads as an empty store: the volume plugins
    # then answer as upstream does when its listers return NotFound.
    volumes: VolumeStore | None = None
    # DeviceClasses, ResourceClaims, ResourceClaimTemplates and ResourceSlices, with the claim assume
    # cache and in-flight allocations (upstream's SharedDRAManager), fed by the edge's informers.
    # ``None`` reads as an empty store.
    dra: DraStore | None = None
    # The PodGroups (scheduling.k8s.io/v1beta1) pods join through ``Pod.scheduling_group``, fed by the
    # edge's informer when the GenericWorkload gate is on. ``None`` reads as an empty store.
    pod_groups: PodGroupStore | None = None
    # The process's feature gates (``run --feature-gates``); plugins read one with
    # ``scheduler.features.enabled(handle.feature_gates, Name)``, upstream's default when unset.
    feature_gates: Mapping[str, bool] | None = None
    # The pods waiting at Permit, shared by every profile's framework (upstream's
    # ``Handle.GetWaitingPod``). ``None``: each framework keeps its own.
    waiting_pods: WaitingPods | None = None
    # Seeds plugins' random choices (preemption's dry-run offset), for reproducible runs.
    seed: int | None = None
