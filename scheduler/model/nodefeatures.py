"""Node declared features (KEP-5328): which features a node's kubelet declares, and which of them a
pod needs, ported from ``staging/src/k8s.io/component-helpers/nodedeclaredfeatures``.

Each ``Feature`` in ``REGISTRY`` is one of upstream's ``features/<name>`` packages: its ``name``,
``infer_for_scheduling`` (whether a pod spec, as API JSON, needs it: ``InferForScheduling``),
``discover`` (whether a kubelet with a given ``NodeConfiguration`` declares it: ``Discover``) and
``max_version`` (above it the feature no longer matters for scheduling: ``MaxVersion``). The
registry is sorted by name, as ``nodedeclaredfeatures.New`` sorts it.

The scheduler reads ``required_features(spec)`` once per pod, when the pod is parsed
(``Pod.required_features``), and a node's ``status.declaredFeatures`` once per node
(``Node.declared_features``); the NodeDeclaredFeatures plugin then checks a subset per distinct
declared set (``cache/node_table.py``), never per node.

Only the features whose inference and discovery were read in upstream's source are here; the
features that only matter to pod updates (``InferForScheduling`` is false) are listed so a kubelet
declares them, but never make a pod's requirement.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["COMPONENT_VERSION", "REGISTRY", "Feature", "NodeConfiguration", "active_registry",
           "discover_node_features", "required_features"]

Spec = Mapping[str, Any]
# The version kopf-scheduler's scheduler and simulated kubelet claim (upstream's ``version.Get()``).
COMPONENT_VERSION = (1, 37, 0)


@dataclass(frozen=True, slots=True)
class NodeConfiguration:
    """Upstream's ``types.NodeConfiguration``, reduced to what the ported features discover from:
    the kubelet's enabled feature gates, its static configuration, and its runtime's features."""

    feature_gates: frozenset[str] = frozenset()
    cpu_manager_policy: str = "none"
    cgroups_v2: bool = True
    cgroup_nsdelegate: bool = False
    cgroups_per_qos: bool = True
    runtime_features: frozenset[str] = frozenset()
    version: tuple[int, int, int] = COMPONENT_VERSION


@dataclass(frozen=True, slots=True)
class Feature:
    name: str
    infer_for_scheduling: Callable[[Spec], bool]
    discover: Callable[[NodeConfiguration], bool]
    max_version: tuple[int, int, int] | None = None
    source: str = field(default="", compare=False)


def _never(spec: Spec) -> bool:
    return False


def _gate(name: str) -> Callable[[NodeConfiguration], bool]:
    return lambda cfg: name in cfg.feature_gates


def _containers(spec: Spec, *, ephemeral: bool = False) -> Iterator[Mapping[str, Any]]:
    kinds = ("containers", "initContainers", "ephemeralContainers") if ephemeral else ("containers", "initContainers")
    for kind in kinds:
        for c in spec.get(kind) or ():
            if isinstance(c, Mapping):
                yield c


def _restart_all_containers(spec: Spec) -> bool:
    # restartallcontainers/restart_all_containers.go: a restart rule whose action is RestartAllContainers,
    # on a container or an init container.
    return any(isinstance(r, Mapping) and r.get("action") == "RestartAllContainers"
               for c in _containers(spec) for r in c.get("restartPolicyRules") or ())


def _user_namespaces_host_network(spec: Spec) -> bool:
    # usernamespaceshostnetwork/user_namespaces_host_network.go: host network with hostUsers false.
    return bool(spec.get("hostNetwork")) and spec.get("hostUsers") is False


def _container_ulimits(spec: Spec) -> bool:
    # containerulimits/container_ulimits.go: securityContext.ulimits set (even empty) on any container.
    return any(isinstance(c.get("securityContext"), Mapping) and c["securityContext"].get("ulimits") is not None
               for c in _containers(spec, ephemeral=True))


def _per_pod_pid_limit(spec: Spec) -> bool:
    # perpodpidlimit/feature.go: a pod-level limit on the "pid" resource.
    resources = spec.get("resources")
    return isinstance(resources, Mapping) and "pid" in (resources.get("limits") or {})


def _downward_api_assigned_resources(spec: Spec) -> bool:
    # downwardapiassignedresources: a downwardAPI volume (plain or projected) item reading assigned.cpuset.
    def items(vol: Mapping[str, Any]) -> Iterator[Any]:
        dapi = vol.get("downwardAPI")
        if isinstance(dapi, Mapping):
            yield from dapi.get("items") or ()
        projected = vol.get("projected")
        if isinstance(projected, Mapping):
            for source in projected.get("sources") or ():
                d = source.get("downwardAPI") if isinstance(source, Mapping) else None
                if isinstance(d, Mapping):
                    yield from d.get("items") or ()
    return any(isinstance(i, Mapping) and isinstance(i.get("resourceFieldRef"), Mapping)
               and i["resourceFieldRef"].get("resource") == "assigned.cpuset"
               for v in spec.get("volumes") or () if isinstance(v, Mapping) for i in items(v))


def _cgroup_options(spec: Spec) -> bool:
    # cgroupoptions/feature.go: securityContext.cgroupOptions.mountMode set on a container or init container.
    for c in _containers(spec):
        sc = c.get("securityContext")
        opts = sc.get("cgroupOptions") if isinstance(sc, Mapping) else None
        if isinstance(opts, Mapping) and opts.get("mountMode") is not None:
            return True
    return False


def _guaranteed_cpu_resize_discover(cfg: NodeConfiguration) -> bool:
    # inplacepodresize/guaranteed_cpu_resize.go
    return (("InPlacePodVerticalScalingExclusiveCPUs" in cfg.feature_gates and cfg.cpu_manager_policy == "static")
            or cfg.cpu_manager_policy == "none")


REGISTRY: tuple[Feature, ...] = tuple(sorted((
    Feature("CgroupOptions", _cgroup_options,
            lambda cfg: ("CgroupOptions" in cfg.feature_gates and cfg.cgroups_v2 and cfg.cgroup_nsdelegate
                         and cfg.cgroups_per_qos and "CgroupMountMode" in cfg.runtime_features),
            source="cgroupoptions/feature.go"),
    Feature("ContainerUlimits", _container_ulimits,
            lambda cfg: "ContainerUlimits" in cfg.feature_gates and "ContainerUlimits" in cfg.runtime_features,
            source="containerulimits/container_ulimits.go"),
    Feature("DownwardAPIAssignedResources", _downward_api_assigned_resources, _gate("DownwardAPIAssignedResources"),
            source="downwardapiassignedresources/downward_api_assigned_resources.go"),
    Feature("ExtendWebSocketsToKubelet", _never, _gate("ExtendWebSocketsToKubelet"),
            source="extendwebsocketstokubelet/feature.go"),
    Feature("GuaranteedQoSPodCPUResize", _never, _guaranteed_cpu_resize_discover,
            source="inplacepodresize/guaranteed_cpu_resize.go"),
    Feature("InPlacePodLevelResourcesVerticalScaling", _never, _gate("InPlacePodLevelResourcesVerticalScaling"),
            source="inplacepodresize/pod_level_resource_resize.go"),
    Feature("InPlacePodVerticalScalingInitContainers", _never, _gate("InPlacePodVerticalScalingInitContainers"),
            source="inplacepodresize/nonsidecar_initcontainers_resize.go"),
    Feature("InPlacePodVerticalScalingMemoryBackedVolumes", _never,
            _gate("InPlacePodVerticalScalingMemoryBackedVolumes"),
            source="inplacepodresize/memory_backed_volumes_resize.go"),
    Feature("PerPodPIDLimit", _per_pod_pid_limit,
            lambda cfg: "PerPodPIDLimit" in cfg.feature_gates and cfg.cgroups_v2,
            source="perpodpidlimit/feature.go"),
    Feature("RestartAllContainersOnContainerExits", _restart_all_containers,
            _gate("RestartAllContainersOnContainerExits"),
            source="restartallcontainers/restart_all_containers.go"),
    Feature("UserNamespacesHostNetworkSupport", _user_namespaces_host_network,
            lambda cfg: ("UserNamespacesHostNetworkSupport" in cfg.feature_gates
                         and "UserNamespacesHostNetwork" in cfg.runtime_features),
            source="usernamespaceshostnetwork/user_namespaces_host_network.go"),
), key=lambda f: f.name))


# Every parsed pod is inferred at COMPONENT_VERSION against the active registry: only the features
# that can be required then are asked (the update-only ones never are), which keeps the parse cheap.
def _at_version(registry: tuple[Feature, ...]) -> tuple[tuple[str, Callable[[Spec], bool]], ...]:
    return tuple((f.name, f.infer_for_scheduling) for f in registry
                 if f.infer_for_scheduling is not _never
                 and (f.max_version is None or f.max_version >= COMPONENT_VERSION))


_active: tuple[Feature, ...] = REGISTRY
_AT_COMPONENT_VERSION = _at_version(REGISTRY)
_NONE: frozenset[str] = frozenset()


def active_registry(registry: tuple[Feature, ...] | None = None) -> tuple[Feature, ...]:
    """The registry every pod parse and every default discovery reads; with ``registry``, make that
    one active (None leaves it) and return the one it replaces. Upstream's registry is a package
    variable (``features.AllFeatures``) for the same reason: scheduler_perf's nodedeclaredfeatures
    test swaps in mock features for a run and restores the real ones after it
    (``benchmark/declaredfeatures.py`` does the same, in the process that schedules)."""
    global _active, _AT_COMPONENT_VERSION
    previous = _active
    if registry is not None:
        _active, _AT_COMPONENT_VERSION = registry, _at_version(registry)
    return previous


def required_features(spec: Spec, version: tuple[int, int, int] = COMPONENT_VERSION,
                      registry: tuple[Feature, ...] | None = None) -> frozenset[str]:
    """The features a pod with ``spec`` needs of its node (upstream's ``InferForPodScheduling``): a
    feature of ``registry`` (the active one when None) counts unless ``version`` is above its
    ``max_version``."""
    if registry is None and version == COMPONENT_VERSION:
        needed = [name for name, infer in _AT_COMPONENT_VERSION if infer(spec)]
        return frozenset(needed) if needed else _NONE
    return frozenset(f.name for f in (_active if registry is None else registry)
                     if (f.max_version is None or version <= f.max_version) and f.infer_for_scheduling(spec))


def discover_node_features(cfg: NodeConfiguration, registry: tuple[Feature, ...] | None = None) -> list[str]:
    """The sorted names a kubelet with ``cfg`` declares (upstream's ``DiscoverNodeFeatures``): a
    feature of ``registry`` (the active one when None) it discovers, unless its version is above
    the feature's ``max_version``."""
    return sorted(f.name for f in (_active if registry is None else registry)
                  if f.discover(cfg) and (f.max_version is None or cfg.version <= f.max_version))

