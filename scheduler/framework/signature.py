"""Pod scheduling signatures (KEP-5598, upstream's ``kube-scheduler/framework/signers.go`` and
``frameworkImpl.SignPod``).

A signature captures what of a pod the PreFilter, Filter, PreScore and Score plugins read, so that
two pods with equal signatures get the same feasibility and the same scores on every node in the
same state. Opportunistic batching (``framework/batch.py``) reuses one pod's scored node list for
the next pod only when their signatures are equal.

Each plugin signs its part (``SignPlugin.sign_pod``) with fragments keyed by upstream's signer names
(``RESOURCES_SIGNER_NAME``, ...); plugins that read the same part share a key, and ``sign_pod``
merges them into one value. A plugin that cannot sign a pod (InterPodAffinity for a pod with
affinity terms, PodTopologySpread for a pod with spread constraints, DynamicResources for a pod with
claims, the volume plugins for a pod with volumes) returns a non-success status, and the pod gets
no signature (``None``), as upstream's nil ``PodSignature``.

Upstream marshals the fragments to JSON bytes; here a signature is a tuple of ``(name, value)``
pairs sorted by name, the values hashable model values (frozen dataclasses, tuples, frozensets),
compared with ``==``. Where upstream sorts a list to make the signature order-insensitive (hosts
ports, tolerations) we do the same; where it keeps order we keep it. An order-sensitive value can
only make two equivalent pods look different (a missed batch), never two different pods equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scheduler.framework.interfaces import SignPlugin
from scheduler.framework.status import Status
from scheduler.model import Pod
from scheduler.model.volumes import PodVolume

__all__ = [
    "DYNAMIC_RESOURCES_SIGNER_NAME",
    "HOST_PORTS_SIGNER_NAME",
    "IMAGE_NAMES_SIGNER_NAME",
    "LABELS_SIGNER_NAME",
    "NODE_AFFINITY_SIGNER_NAME",
    "NODE_NAME_SIGNER_NAME",
    "NODE_SELECTOR_SIGNER_NAME",
    "RESOURCES_SIGNER_NAME",
    "SCHEDULER_NAME_SIGNER_NAME",
    "TOLERATIONS_SIGNER_NAME",
    "VOLUMES_SIGNER_NAME",
    "PodSignature",
    "SignFragment",
    "host_ports_signer",
    "node_affinity_signer",
    "sign_pod",
    "tolerations_signer",
    "unsignable",
    "volumes_fragment",
]

# Upstream's signer names (staging/src/k8s.io/kube-scheduler/framework/signers.go).
DYNAMIC_RESOURCES_SIGNER_NAME = "v1.Pod.Spec.DynamicResources"
IMAGE_NAMES_SIGNER_NAME = "v1.Pod.Spec.CanonicalImageNames()"
LABELS_SIGNER_NAME = "v1.Pod.Labels"
NODE_NAME_SIGNER_NAME = "v1.Pod.Spec.NodeName"
NODE_AFFINITY_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeAffinity"
NODE_SELECTOR_SIGNER_NAME = "v1.Pod.Spec.Affinity.NodeSelector"
HOST_PORTS_SIGNER_NAME = "v1.Pod.Spec.HostPorts()"
RESOURCES_SIGNER_NAME = "v1.Pod.Spec.ContainerRequestsAndOverheads()"
SCHEDULER_NAME_SIGNER_NAME = "v1.Pod.Spec.SchedulerName"
TOLERATIONS_SIGNER_NAME = "v1.Pod.Spec.Tolerations"
VOLUMES_SIGNER_NAME = "v1.Pod.Spec.Volumes.NonSyntheticSources()"

SignFragment = tuple[str, object]
PodSignature = tuple[tuple[str, object], ...]
_NONE: tuple[SignFragment, ...] = ()


def unsignable(reason: str) -> tuple[Sequence[SignFragment], Status]:
    """What ``sign_pod`` returns for a pod the plugin cannot sign (upstream: ``Unschedulable``)."""
    return _NONE, Status.unschedulable(reason)


def mapping_value(m: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """A label map as a hashable, order-free value."""
    return tuple(sorted(m.items()))


def host_ports_signer(pod: Pod) -> tuple[object, ...]:
    """Upstream's ``HostPortsSigner``, over what NodePorts reads: the pod's host ports (protocol,
    host IP and port, not only the port number as upstream's sorted port set: two pods asking the
    same port on different IPs or protocols conflict differently), sorted, duplicates dropped."""
    return tuple(sorted({(p.protocol, p.host_ip, p.port) for p in pod.host_ports}))


def tolerations_signer(pod: Pod) -> tuple[object, ...]:
    """Upstream's ``TolerationsSigner``: the tolerations, sorted (their order never matters)."""
    return tuple(sorted(set(pod.tolerations), key=repr))


def node_affinity_signer(pod: Pod) -> tuple[object, ...]:
    """Upstream's ``NodeAffinitySigner`` plus the node selector: the required and preferred node
    affinity as parsed (frozen selectors), and ``spec.nodeSelector``."""
    return (pod.required_node_affinity, pod.preferred_node_affinity, mapping_value(pod.node_selector))


def volumes_fragment(pod: Pod) -> tuple[Sequence[SignFragment], Status]:
    """The volume plugins' signing (VolumeBinding, VolumeRestrictions, VolumeZone,
    NodeVolumeLimits): a pod with storage volumes (claims, ephemeral claims, in-tree disks, inline
    CSI) has no signature. Upstream signs the volume sources
    (``VolumesSigner``); here their verdicts also read PersistentVolumes, claims and classes, which
    may change between two pods without the cache noticing, and a claim name means another claim in
    another namespace, so such a pod is not batched."""
    if any(_storage(v) for v in pod.volumes):
        return unsignable("pods with volumes are not signable")
    return ((VOLUMES_SIGNER_NAME, ()),), Status()


def _storage(v: PodVolume) -> bool:
    """Whether a volume has a source a plugin reads. The others (configMap, secret, projected,
    emptyDir, ...) are kept by name only and change no verdict, as upstream's ``VolumesSigner``
    leaves out the synthetic ones: every pod has a projected service-account volume."""
    return bool(v.claim_name is not None or v.ephemeral or v.gce_pd or v.aws_ebs or v.azure_disk or v.iscsi_iqn
                or v.rbd or v.csi_driver)


def sign_pod(plugins: Sequence[SignPlugin], pod: Pod) -> PodSignature | None:
    """Upstream's ``frameworkImpl.SignPod``: the scheduler name plus every plugin's fragments, or
    ``None`` as soon as one plugin cannot sign the pod. Fragments with the same signer name from
    two plugins (Fit and BalancedAllocation both sign the requests) are the same value."""
    parts: dict[str, object] = {SCHEDULER_NAME_SIGNER_NAME: pod.scheduler_name}
    for p in plugins:
        fragments, status = p.sign_pod(pod)
        if not status.is_success():
            return None
        for key, value in fragments:
            parts[key] = value
    return tuple(sorted(parts.items()))
