"""Volumes: what the volume plugins read of a pod's ``spec.volumes`` and of the storage objects.

Two halves, both parsed once when an object arrives (GUIDE §4):

* ``PodVolume``: one entry of a pod's ``spec.volumes``, reduced to the sources a scheduler plugin
  reads: ``persistentVolumeClaim`` (the claim name), ``ephemeral`` (its claim is named
  ``<pod>-<volume>``, upstream's ``ephemeral.VolumeClaimName``), and the in-tree disks that
  VolumeRestrictions checks for conflicts (``gcePersistentDisk``, ``awsElasticBlockStore``,
  ``rbd``, ``iscsi``) or that NodeVolumeLimits counts once migrated to CSI (``azureDisk`` too), and
  an inline ``csi`` volume's driver (VolumeBinding's CSIDriver queueing hint reads it).
  Every other source (configMap, secret, emptyDir, ...) is kept only by name: no plugin reads it.
* The storage kinds, as the plugins look them up: ``PersistentVolume``, ``PersistentVolumeClaim``,
  ``StorageClass``, ``CSINode``, ``CSIDriver`` and ``CSIStorageCapacity``. Quantities are bytes,
  selectors are parsed (``model.selectors``), and a claim's class is resolved as upstream's
  ``GetPersistentVolumeClaimClass`` (the beta annotation wins over ``spec.storageClassName``).

The store that holds them is ``scheduler.cache.volumes``; the plugins are ``plugins.volumezone``,
``plugins.volumerestrictions`` and ``plugins.nodevolumelimits``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.parsing import parsing
from scheduler.model.selectors import LabelSelector, NodeSelector, parse_label_selector, parse_node_selector
from scheduler.quantity import value as quantity_value

__all__ = [
    "AWS_EBS_PLUGIN",
    "AZURE_DISK_PLUGIN",
    "BETA_STORAGE_CLASS_ANNOTATION",
    "GCE_PD_PLUGIN",
    "MIGRATED_PLUGINS_ANNOTATION",
    "READ_WRITE_ONCE_POD",
    "SELECTED_NODE_ANNOTATION",
    "WAIT_FOR_FIRST_CONSUMER",
    "CSIDriver",
    "CSINode",
    "CSIStorageCapacity",
    "InTreeDisk",
    "PersistentVolume",
    "PersistentVolumeClaim",
    "PodVolume",
    "RBDImage",
    "StorageClass",
    "parse_csi_driver",
    "parse_csi_node",
    "parse_csi_storage_capacity",
    "parse_pod_volumes",
    "parse_pv",
    "parse_pvc",
    "parse_storage_class",
]

READ_WRITE_ONCE_POD = "ReadWriteOncePod"
WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer"
BETA_STORAGE_CLASS_ANNOTATION = "volume.beta.kubernetes.io/storage-class"
SELECTED_NODE_ANNOTATION = "volume.kubernetes.io/selected-node"
# On a CSINode: the in-tree plugins the node's kubelet migrated to CSI (v1.MigratedPluginsAnnotationKey).
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"
# In-tree plugin names (csi-translation-lib's *InTreePluginName).
AWS_EBS_PLUGIN = "kubernetes.io/aws-ebs"
GCE_PD_PLUGIN = "kubernetes.io/gce-pd"
AZURE_DISK_PLUGIN = "kubernetes.io/azure-disk"


# --- the pod's side --------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class RBDImage:
    monitors: frozenset[str]
    pool: str
    image: str
    read_only: bool


@dataclass(frozen=True, slots=True)
class InTreeDisk:
    """An in-tree attachable disk, inline in a pod or as a PV's source: ``plugin`` is the in-tree
    plugin name (``kubernetes.io/aws-ebs``, ...) and ``handle`` its volume id as written."""

    plugin: str
    handle: str
    read_only: bool = False


@dataclass(frozen=True, slots=True)
class PodVolume:
    """One ``spec.volumes[]`` entry, reduced to what the volume plugins read."""

    name: str
    claim_name: str | None = None       # persistentVolumeClaim.claimName ("" kept: upstream rejects it)
    ephemeral: bool = False             # a generic ephemeral volume: its claim is <pod>-<name>
    gce_pd: InTreeDisk | None = None
    aws_ebs: InTreeDisk | None = None
    azure_disk: InTreeDisk | None = None
    iscsi_iqn: str | None = None
    iscsi_read_only: bool = False
    rbd: RBDImage | None = None
    csi_driver: str | None = None       # an inline CSI (ephemeral) volume's ``csi.driver``

    @property
    def needs_restrictions_check(self) -> bool:
        """Upstream's ``needsRestrictionsCheck``: a source VolumeRestrictions compares across pods."""
        return self.gce_pd is not None or self.aws_ebs is not None or self.rbd is not None or self.iscsi_iqn is not None

    @property
    def inline_disk(self) -> InTreeDisk | None:
        """The inline in-tree disk csi-translation-lib can migrate (``IsInlineMigratable``), if any."""
        return self.aws_ebs or self.gce_pd or self.azure_disk


def _bool(raw: Any) -> bool:
    return raw is True


def _str(raw: Any) -> str:
    return raw if isinstance(raw, str) else ""


def parse_pod_volumes(raw: Any, field: str = "spec.volumes") -> tuple[PodVolume, ...]:
    """``spec.volumes``; sources no plugin reads are kept by name only (cheap for the common pod)."""
    if raw is None:
        return ()
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise ParseError("must be a list", field=field)
    out: list[PodVolume] = []
    for i, v in enumerate(raw):
        if not isinstance(v, Mapping):
            raise ParseError("must be an object", field=f"{field}[{i}]")
        out.append(_pod_volume(v))
    return tuple(out)


def _pod_volume(v: Mapping[str, Any]) -> PodVolume:
    name = _str(v.get("name"))
    pvc = v.get("persistentVolumeClaim")
    claim = None if not isinstance(pvc, Mapping) else _str(pvc.get("claimName"))
    gce, aws, az, rbd_raw, iscsi, csi = (v.get(k) for k in (
        "gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "rbd", "iscsi", "csi"))
    if claim is None and not isinstance(v.get("ephemeral"), Mapping) and not any(
            isinstance(s, Mapping) for s in (gce, aws, az, rbd_raw, iscsi, csi)):
        return PodVolume(name)
    return PodVolume(
        name=name,
        claim_name=claim,
        ephemeral=isinstance(v.get("ephemeral"), Mapping),
        gce_pd=_disk(GCE_PD_PLUGIN, gce, "pdName"),
        aws_ebs=_disk(AWS_EBS_PLUGIN, aws, "volumeID"),
        azure_disk=_disk(AZURE_DISK_PLUGIN, az, "diskURI"),
        iscsi_iqn=_str(iscsi.get("iqn")) if isinstance(iscsi, Mapping) else None,
        iscsi_read_only=isinstance(iscsi, Mapping) and _bool(iscsi.get("readOnly")),
        rbd=_rbd(rbd_raw),
        csi_driver=_str(csi.get("driver")) if isinstance(csi, Mapping) else None,
    )


def _disk(plugin: str, raw: Any, id_key: str) -> InTreeDisk | None:
    return InTreeDisk(plugin, _str(raw.get(id_key)), _bool(raw.get("readOnly"))) if isinstance(raw, Mapping) else None


def _rbd(raw: Any) -> RBDImage | None:
    if not isinstance(raw, Mapping):
        return None
    mons = raw.get("monitors") or ()
    return RBDImage(frozenset(m for m in mons if isinstance(m, str)), _str(raw.get("pool")) or "rbd",
                    _str(raw.get("image")), _bool(raw.get("readOnly")))


# --- the storage objects ---------------------------------------------------------------------------

def _meta(obj: Mapping[str, Any]) -> tuple[Mapping[str, Any], str, str]:
    meta = obj.get("metadata") or {}
    if not isinstance(meta, Mapping):
        raise ParseError("must be an object", field="metadata")
    return meta, _str(meta.get("namespace")), _str(meta.get("name"))


def _labels(meta: Mapping[str, Any], key: str = "labels") -> dict[str, str]:
    raw = meta.get(key) or {}
    if not isinstance(raw, Mapping):
        raise ParseError("must be a map of strings", field=f"metadata.{key}")
    return {str(k): str(v) for k, v in raw.items()}


def _quantity(raw: Any, field: str) -> int | None:
    if raw is None:
        return None
    try:
        return quantity_value(raw)
    except ParseError as e:
        raise e.located("", field) from None


def _access_modes(raw: Any) -> frozenset[str]:
    return frozenset(m for m in raw or () if isinstance(m, str))


@dataclass(frozen=True, slots=True)
class PersistentVolume:
    name: str
    labels: Mapping[str, str] = field(default_factory=dict)
    capacity: int | None = None                      # spec.capacity.storage, bytes
    access_modes: frozenset[str] = frozenset()
    storage_class: str = ""
    volume_mode: str = "Filesystem"
    claim_ref: tuple[str, str, str] | None = None   # (namespace, name, uid)
    node_affinity: NodeSelector | None = None       # spec.nodeAffinity.required
    csi: tuple[str, str] | None = None              # (driver, volumeHandle)
    in_tree: InTreeDisk | None = None               # a migratable in-tree source
    phase: str = ""
    deleting: bool = False
    volume_attributes_class: str = ""
    # metadata.resourceVersion as read: PreBind's write of claimRef is conditional on it, as
    # upstream's Update of the assumed PV is (a 409 when the PV controller got there first).
    resource_version: str = ""


def parse_pv(obj: Mapping[str, Any]) -> PersistentVolume:
    meta, _, name = _meta(obj)
    where = f"PersistentVolume {name}"
    with parsing(where):
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        ref = spec.get("claimRef")
        claim_ref = ((_str(ref.get("namespace")), _str(ref.get("name")), _str(ref.get("uid")))
                     if isinstance(ref, Mapping) else None)
        aff = (spec.get("nodeAffinity") or {}).get("required")
        csi = spec.get("csi")
        in_tree = None
        for key, plugin, id_key in (("awsElasticBlockStore", AWS_EBS_PLUGIN, "volumeID"),
                                    ("gcePersistentDisk", GCE_PD_PLUGIN, "pdName"),
                                    ("azureDisk", AZURE_DISK_PLUGIN, "diskURI")):
            src = spec.get(key)
            if isinstance(src, Mapping):
                in_tree = InTreeDisk(plugin, _str(src.get(id_key)), _bool(src.get("readOnly")))
        return PersistentVolume(
            name=name,
            labels=_labels(meta),
            capacity=_quantity((spec.get("capacity") or {}).get("storage"), "spec.capacity.storage"),
            access_modes=_access_modes(spec.get("accessModes")),
            storage_class=_str(_labels(meta, "annotations").get(BETA_STORAGE_CLASS_ANNOTATION))
            or _str(spec.get("storageClassName")),
            volume_mode=_str(spec.get("volumeMode")) or "Filesystem",
            claim_ref=claim_ref,
            node_affinity=None if aff is None else parse_node_selector(aff, "spec.nodeAffinity.required"),
            csi=(_str(csi.get("driver")), _str(csi.get("volumeHandle"))) if isinstance(csi, Mapping) else None,
            in_tree=in_tree,
            phase=_str(status.get("phase")),
            deleting=bool(meta.get("deletionTimestamp")),
            volume_attributes_class=_str(spec.get("volumeAttributesClassName")),
            resource_version=_str(meta.get("resourceVersion")),
        )


@dataclass(frozen=True, slots=True)
class PersistentVolumeClaim:
    namespace: str
    name: str
    uid: str = ""
    access_modes: frozenset[str] = frozenset()
    # Upstream's GetPersistentVolumeClaimClass: the beta annotation, else spec.storageClassName, else "".
    storage_class: str = ""
    volume_name: str = ""
    request: int | None = None                      # spec.resources.requests.storage, bytes
    selector: LabelSelector | None = None
    volume_mode: str = "Filesystem"
    annotations: Mapping[str, str] = field(default_factory=dict)
    controller_uid: str = ""                        # the controlling ownerReference's uid
    phase: str = ""
    deleting: bool = False
    volume_attributes_class: str = ""
    resource_version: str = ""                      # as read; PreBind's annotation write is conditional on it

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def parse_pvc(obj: Mapping[str, Any]) -> PersistentVolumeClaim:
    meta, ns, name = _meta(obj)
    ns = ns or "default"
    where = f"PersistentVolumeClaim {ns}/{name}"
    with parsing(where):
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        annotations = _labels(meta, "annotations")
        sel = spec.get("selector")
        owner = ""
        for ref in meta.get("ownerReferences") or ():
            if isinstance(ref, Mapping) and ref.get("controller") is True:
                owner = _str(ref.get("uid"))
                break
        return PersistentVolumeClaim(
            namespace=ns,
            name=name,
            uid=_str(meta.get("uid")),
            access_modes=_access_modes(spec.get("accessModes")),
            storage_class=annotations.get(BETA_STORAGE_CLASS_ANNOTATION) or _str(spec.get("storageClassName")),
            volume_name=_str(spec.get("volumeName")),
            request=_quantity(((spec.get("resources") or {}).get("requests") or {}).get("storage"),
                              "spec.resources.requests.storage"),
            selector=None if sel is None else parse_label_selector(sel, "spec.selector"),
            volume_mode=_str(spec.get("volumeMode")) or "Filesystem",
            annotations=annotations,
            controller_uid=owner,
            phase=_str(status.get("phase")),
            deleting=bool(meta.get("deletionTimestamp")),
            volume_attributes_class=_str(spec.get("volumeAttributesClassName")),
            resource_version=_str(meta.get("resourceVersion")),
        )


@dataclass(frozen=True, slots=True)
class StorageClass:
    name: str
    provisioner: str = ""
    # ``None``: volumeBindingMode unset (the API server defaults it to Immediate; VolumeZone's
    # tests build classes without it, and upstream reports that case by name).
    binding_mode: str | None = None
    allowed_topologies: tuple[Mapping[str, frozenset[str]], ...] = ()


def parse_storage_class(obj: Mapping[str, Any]) -> StorageClass:
    _, _, name = _meta(obj)
    topologies = []
    for term in obj.get("allowedTopologies") or ():
        if isinstance(term, Mapping):
            topologies.append({_str(e.get("key")): frozenset(v for v in e.get("values") or () if isinstance(v, str))
                               for e in term.get("matchLabelExpressions") or () if isinstance(e, Mapping)})
    mode = obj.get("volumeBindingMode")
    return StorageClass(name, _str(obj.get("provisioner")), mode if isinstance(mode, str) else None,
                        tuple(topologies))


@dataclass(frozen=True, slots=True)
class CSINodeDriver:
    name: str
    node_id: str = ""
    count: int | None = None                        # allocatable.count: the attach limit
    topology_keys: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class CSINode:
    name: str
    drivers: Mapping[str, CSINodeDriver] = field(default_factory=dict)
    migrated_plugins: frozenset[str] = frozenset()

    def limits(self) -> dict[str, int]:
        """Attach limit per driver name, for the drivers that publish one (``getVolumeLimits``)."""
        return {d.name: d.count for d in self.drivers.values() if d.count is not None}


def parse_csi_node(obj: Mapping[str, Any]) -> CSINode:
    meta, _, name = _meta(obj)
    drivers: dict[str, CSINodeDriver] = {}
    for d in (obj.get("spec") or {}).get("drivers") or ():
        if not isinstance(d, Mapping):
            continue
        count = (d.get("allocatable") or {}).get("count")
        drivers[_str(d.get("name"))] = CSINodeDriver(
            _str(d.get("name")), _str(d.get("nodeID")),
            count if isinstance(count, int) and not isinstance(count, bool) else None,
            tuple(k for k in d.get("topologyKeys") or () if isinstance(k, str)))
    migrated = _labels(meta, "annotations").get(MIGRATED_PLUGINS_ANNOTATION, "")
    return CSINode(name, drivers, frozenset(p for p in migrated.split(",") if p))


@dataclass(frozen=True, slots=True)
class CSIDriver:
    name: str
    attach_required: bool = True                    # the API server's default
    storage_capacity: bool = False
    # spec.preventPodSchedulingIfMissing (VolumeLimitScaling): NodeVolumeLimits keeps the driver's
    # volumes off a node whose CSINode does not list the driver.
    prevent_pod_scheduling_if_missing: bool = False


def parse_csi_driver(obj: Mapping[str, Any]) -> CSIDriver:
    _, _, name = _meta(obj)
    spec = obj.get("spec") or {}
    return CSIDriver(name, spec.get("attachRequired") is not False, spec.get("storageCapacity") is True,
                     spec.get("preventPodSchedulingIfMissing") is True)


@dataclass(frozen=True, slots=True)
class CSIStorageCapacity:
    namespace: str
    name: str
    storage_class: str
    node_topology: LabelSelector | None = None      # None: no node has access
    capacity: int | None = None
    maximum_volume_size: int | None = None


def parse_csi_storage_capacity(obj: Mapping[str, Any]) -> CSIStorageCapacity:
    _, ns, name = _meta(obj)
    where = f"CSIStorageCapacity {ns}/{name}"
    try:
        topo = obj.get("nodeTopology")
        return CSIStorageCapacity(
            ns, name, _str(obj.get("storageClassName")),
            None if topo is None else parse_label_selector(topo, "nodeTopology"),
            _quantity(obj.get("capacity"), "capacity"), _quantity(obj.get("maximumVolumeSize"), "maximumVolumeSize"))
    except ParseError as e:
        raise e.located(where) from None
