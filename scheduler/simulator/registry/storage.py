"""What kube-apiserver does to the storage kinds between decoding and storage: core PersistentVolumes and
PersistentVolumeClaims, and ``storage.k8s.io/v1`` StorageClasses, CSINodes, CSIDrivers and
CSIStorageCapacities.

- **Defaulting** (``pkg/apis/core/v1/defaults.go``, ``pkg/apis/storage/v1/defaults.go``): a PV's
  ``persistentVolumeReclaimPolicy`` Retain, ``volumeMode`` Filesystem, a hostPath source's ``type: ""``
  and ``status.phase`` Pending; a PVC's ``volumeMode`` Filesystem and ``status.phase`` Pending; a
  StorageClass's ``reclaimPolicy`` Delete and ``volumeBindingMode`` Immediate; a CSIDriver's
  ``attachRequired`` true, ``podInfoOnMount``/``storageCapacity``/``requiresRepublish``/``seLinuxMount``
  false, ``fsGroupPolicy`` ReadWriteOnceWithFSType and ``volumeLifecycleModes`` [Persistent].
- **Admission**: DefaultStorageClass (``plugin/pkg/admission/storage/storageclass/setdefault``) gives a
  new claim without ``storageClassName`` (absent, not ``""``) the default class: the one annotated
  ``storageclass.kubernetes.io/is-default-class: "true"`` (or the beta key), the newest if several
  (``GetDefaultClass``: creation time, newest first, then name); StorageObjectInUseProtection adds the
  ``kubernetes.io/pv-protection`` and ``kubernetes.io/pvc-protection`` finalizers, which the simulated
  controller manager (``controllers/volumes.py``) removes as upstream's protection controllers do.
- **Validation** (``pkg/apis/core/validation``: ``ValidatePersistentVolume(Update)``,
  ``ValidatePersistentVolumeClaim(Update)``; ``pkg/apis/storage/validation``): what a scheduler's user
  or a dump can get wrong, with upstream's causes (field path, reason, detail). A PV needs access modes,
  a ``storage`` capacity (and nothing else) greater than zero, exactly one volume source (``local`` with
  node affinity), and its source, ``volumeMode`` and a set ``nodeAffinity`` never change. A claim needs
  access modes and ``resources.requests.storage``; its spec is immutable after creation but for
  ``volumeName`` while it is empty and ``resources.requests`` of a bound claim (not below
  ``status.capacity``). A StorageClass needs a provisioner; its parameters, provisioner, reclaim policy
  and binding mode never change. A CSINode's driver names are unique and an existing driver entry changes
  only its ``allocatable`` (MutableCSINodeAllocatableCount). The diff kube-apiserver appends to the
  PVC/PV immutability messages (``cmp.Diff``) is abbreviated here to the changed fields.

Quantities that do not parse were refused before (``typecheck``: a 400, as decoding refuses them).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any

from scheduler.errors import QuantityError
from scheduler.model.selectors import label_key_errors, label_value_errors
from scheduler.quantity import parse_quantity
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.apierrors import invalid as invalid_error
from scheduler.simulator.registry.core import validation as core
from scheduler.simulator.registry.core.validation import (
    Cause,
    _label_selector,
    _node_selector_term,
    duplicate,
    forbidden,
    invalid,
    not_supported,
    required,
)
from scheduler.simulator.registry.core.validation import dns_subdomain as _class_name  # ValidateClassName
from scheduler.simulator.registry.meta import QUANTITY_RE, SUBDOMAIN_MSG

__all__ = ["BETA_DEFAULT_CLASS", "BETA_STORAGE_CLASS", "DEFAULT_CLASS", "PROTECTION_PV", "PROTECTION_PVC", "STORES",
           "access_modes_string", "admit_storage", "claim_class", "default_class", "is_default_class",
           "volume_class", "volume_sources"]

Obj = dict[str, Any]

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"
PROTECTION_PV = "kubernetes.io/pv-protection"
PROTECTION_PVC = "kubernetes.io/pvc-protection"

_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")
_RECLAIM = ("Delete", "Recycle", "Retain")
_CLASS_RECLAIM = ("Delete", "Retain")
_VOLUME_MODES = ("Block", "Filesystem")
_BINDING_MODES = ("Immediate", "WaitForFirstConsumer")
_LIFECYCLE_MODES = ("Ephemeral", "Persistent")
_FS_GROUP_POLICIES = ("File", "None", "ReadWriteOnceWithFSType")
# ValidatePersistentVolumeSpec's order of the volume sources (the second one set is the one refused).
_PV_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "glusterfs", "flocker", "nfs", "rbd",
               "quobyte", "cephfs", "iscsi", "cinder", "fc", "flexVolume", "azureFile", "vsphereVolume",
               "photonPersistentDisk", "portworxVolume", "azureDisk", "scaleIO", "local", "storageos", "csi")
_MAX_PARAMETERS = 512                    # maxProvisionerParameterLen
_MAX_PARAMETER_BYTES = 256 * 1024        # maxProvisionerParameterSize
_CSI_NODE_ID_MAX = 192                   # csiNodeIDMaxLength
IMMUTABLE = "field is immutable"
_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


# --- shared helpers ------------------------------------------------------------------------------

def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def is_default_class(sc: Obj) -> bool:
    """``IsDefaultAnnotation``: the GA or the beta annotation is ``"true"``."""
    ann = (sc.get("metadata") or {}).get("annotations") or {}
    return ann.get(DEFAULT_CLASS) == "true" or ann.get(BETA_DEFAULT_CLASS) == "true"


def default_class(classes: Iterable[Obj]) -> Obj | None:
    """``GetDefaultClass``: of the default classes, the newest (creation time), then the first by name."""
    found = [sc for sc in classes if is_default_class(sc)]
    if not found:
        return None
    found.sort(key=lambda sc: sc["metadata"]["name"])
    found.sort(key=lambda sc: str(sc["metadata"].get("creationTimestamp") or ""), reverse=True)
    return found[0]


def volume_class(pv: Obj) -> str:
    """``GetPersistentVolumeClass``: the beta annotation, else ``spec.storageClassName``."""
    ann = (pv.get("metadata") or {}).get("annotations") or {}
    if BETA_STORAGE_CLASS in ann:
        return _str(ann[BETA_STORAGE_CLASS])
    return _str((pv.get("spec") or {}).get("storageClassName"))


def claim_class(pvc: Obj) -> str:
    """``GetPersistentVolumeClaimClass``: the beta annotation, else ``spec.storageClassName`` ("" if unset)."""
    return volume_class(pvc)


def access_modes_string(modes: Any) -> str:
    """``GetAccessModesAsString``: RWO, ROX, RWX, RWOP in that order, as far as present."""
    have = set(modes or ())
    short = (("ReadWriteOnce", "RWO"), ("ReadOnlyMany", "ROX"), ("ReadWriteMany", "RWX"),
             ("ReadWriteOncePod", "RWOP"))
    return ",".join(s for m, s in short if m in have)


def volume_sources(spec: Obj) -> list[str]:
    """The volume sources a PV spec sets, in ``ValidatePersistentVolumeSpec``'s order."""
    return [s for s in _PV_SOURCES if spec.get(s) is not None]


def _quantity(raw: Any) -> Fraction | None:
    """A quantity's exact value (None if it is not one: decoding refused those already)."""
    if isinstance(raw, bool):
        return None
    if isinstance(raw, (int, float)):
        return Fraction(raw)
    try:
        return parse_quantity(str(raw))
    except QuantityError:
        return None


def _csi_driver_name(name: str, path: str) -> list[Cause]:
    """``ValidateCSIDriverName``: required, at most 63 characters, a DNS subdomain once lowercased."""
    out = []
    if not name:
        out.append(required(path))
    if len(name) > 63:
        out.append((path, "FieldValueTooLong", "Too long: may not be more than 63 bytes"))
    if not _SUBDOMAIN.match(name.lower()):
        out.append(invalid(path, name, SUBDOMAIN_MSG))
    return out


def _qualified(value: str, path: str) -> list[Cause]:
    return [invalid(path, value, msg) for msg in label_key_errors(value)]


def _diff(old: Any, new: Any, prefix: str = "") -> list[str]:
    """The changed fields as ``-``/``+`` lines (an abbreviation of ``cmp.Diff``)."""
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        lines: list[str] = []
        for k in sorted(set(old) | set(new)):
            lines += _diff(old.get(k), new.get(k), f"{prefix}.{k}" if prefix else str(k))
        return lines
    if old == new:
        return []
    shown = [f"-\t{prefix}: {json.dumps(old)}"] if old is not None else []
    return shown + ([f"+\t{prefix}: {json.dumps(new)}"] if new is not None else [])


def _access_modes(modes: Any, path: str) -> list[Cause]:
    out: list[Cause] = []
    rwop = other = False
    for m in modes or []:
        if m not in _ACCESS_MODES:
            out.append(not_supported(path, m, _ACCESS_MODES))
        if m == "ReadWriteOncePod":
            rwop = True
        elif m in _ACCESS_MODES:
            other = True
    if rwop and other:
        out.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return out


def _positive(raw: Any, path: str) -> list[Cause]:
    q = _quantity(raw)
    if q is not None and q <= 0:
        return [invalid(path, raw, "must be greater than zero")]
    return []


def _non_negative(raw: Any, path: str) -> list[Cause]:
    q = _quantity(raw)
    if q is not None and q < 0:
        return [invalid(path, raw, "must be greater than or equal to 0")]
    return []


# --- PersistentVolume ----------------------------------------------------------------------------

def default_pv(pv: Obj) -> None:
    spec = pv.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("persistentVolumeReclaimPolicy", "Retain")
        spec.setdefault("volumeMode", "Filesystem")
        if isinstance(spec.get("hostPath"), dict):
            spec["hostPath"].setdefault("type", "")
    status = pv.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def validate_pv(pv: Obj) -> list[Cause]:
    """``ValidatePersistentVolumeSpec`` (not inline): the checks a user or a dump can fail."""
    spec = pv.get("spec") or {}
    out: list[Cause] = []
    if not spec.get("accessModes"):
        out.append(required("spec.accessModes"))
    out += _access_modes(spec.get("accessModes"), "spec.accessModes")
    capacity = spec.get("capacity") or {}
    if not capacity:
        out.append(required("spec.capacity"))
    if "storage" not in capacity or len(capacity) > 1:
        out.append(not_supported("spec.capacity", capacity, ("storage",)))
    for r, q in capacity.items():
        out += _positive(q, f"spec.capacity[{r}]")
    policy = _str(spec.get("persistentVolumeReclaimPolicy"))
    if policy and policy not in _RECLAIM:
        out.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, _RECLAIM))
    affinity = spec.get("nodeAffinity")
    affinity_set = affinity is not None and _pv_node_affinity(affinity, out)
    sources = volume_sources(spec)
    if not sources:
        out.append(required("spec", "must specify a volume type"))
    for s in sources[1:]:
        if s != "flexVolume":              # upstream counts a flexVolume without refusing it
            out.append(forbidden(f"spec.{s}", "may not specify more than 1 volume type"))
    if sources:
        out += _source(sources[0], spec[sources[0]], affinity_set)
    cls = _str(spec.get("storageClassName"))
    if cls:
        out += _class_name(cls, "spec.storageClassName")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        out.append(not_supported("spec.volumeMode", mode, _VOLUME_MODES))
    return out


def _pv_node_affinity(affinity: Any, out: list[Cause]) -> bool:
    """A volume's nodeAffinity: its required node selector terms checked; whether it has them."""
    req = (affinity or {}).get("required")
    if req is None:
        out.append(required("spec.nodeAffinity.required", "must specify required node constraints"))
        return False
    terms = req.get("nodeSelectorTerms") or []
    if not terms:
        out.append(required("spec.nodeAffinity.required.nodeSelectorTerms",
                            "must have at least one node selector term"))
    for i, t in enumerate(terms):
        out += _node_selector_term(t, f"spec.nodeAffinity.required.nodeSelectorTerms[{i}]")
    return True


def _source(kind: str, src: Any, affinity_set: bool) -> list[Cause]:
    at = f"spec.{kind}"
    src = src if isinstance(src, Mapping) else {}
    out: list[Cause] = []
    if kind == "hostPath" and not _str(src.get("path")):
        out.append(required(f"{at}.path"))
    elif kind == "local":
        if not _str(src.get("path")):
            out.append(required(f"{at}.path"))
        if not affinity_set:
            out.append(required("spec.nodeAffinity", "Local volume requires node affinity"))
    elif kind == "nfs":
        if not _str(src.get("server")):
            out.append(required(f"{at}.server"))
        if not _str(src.get("path")):
            out.append(required(f"{at}.path"))
    elif kind == "csi":
        out += _csi_driver_name(_str(src.get("driver")), f"{at}.driver")
        if not _str(src.get("volumeHandle")):
            out.append(required(f"{at}.volumeHandle"))
    return out


def validate_pv_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidatePersistentVolumeUpdate``: the source (but for a first ``controllerExpandSecretRef``),
    ``volumeMode`` and a set ``nodeAffinity`` are immutable."""
    out = validate_pv(new)
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    src_new = {s: ns[s] for s in _PV_SOURCES if s in ns}
    src_old = {s: os_[s] for s in _PV_SOURCES if s in os_}
    if isinstance(src_new.get("csi"), dict) and isinstance(src_old.get("csi"), dict) \
            and "controllerExpandSecretRef" not in src_old["csi"]:
        src_new["csi"] = {k: v for k, v in src_new["csi"].items() if k != "controllerExpandSecretRef"}
    if src_new != src_old:
        out.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after "
                             "creation\n" + "\n".join(_diff(src_old, src_new))))
    if ns.get("volumeMode") != os_.get("volumeMode"):
        out.append(invalid("volumeMode", ns.get("volumeMode"), IMMUTABLE))
    if os_.get("nodeAffinity") is not None and ns.get("nodeAffinity") != os_.get("nodeAffinity"):
        out.append(invalid("nodeAffinity", ns.get("nodeAffinity"), IMMUTABLE))
    return out


# --- PersistentVolumeClaim -----------------------------------------------------------------------

def default_pvc(pvc: Obj, classes: Callable[[], Iterable[Obj]] | None) -> None:
    """Defaults; on create (``classes`` given) the DefaultStorageClass admission plugin too."""
    spec = pvc.setdefault("spec", {})
    if isinstance(spec, dict):
        spec.setdefault("volumeMode", "Filesystem")
        ann = (pvc.get("metadata") or {}).get("annotations") or {}
        if classes is not None and "storageClassName" not in spec and BETA_STORAGE_CLASS not in ann:
            sc = default_class(classes())
            if sc is not None:
                spec["storageClassName"] = sc["metadata"]["name"]
    status = pvc.setdefault("status", {})
    if isinstance(status, dict) and not status.get("phase"):
        status["phase"] = "Pending"


def validate_pvc_spec(spec: Obj, path: str = "spec") -> list[Cause]:
    """``ValidatePersistentVolumeClaimSpec``."""
    out: list[Cause] = []
    if not spec.get("accessModes"):
        out.append(required(f"{path}.accessModes", "at least 1 access mode is required"))
    if spec.get("selector") is not None:
        out += _label_selector(spec.get("selector"), f"{path}.selector")
    out += _access_modes(spec.get("accessModes"), f"{path}.accessModes")
    requests = ((spec.get("resources") or {}).get("requests")) or {}
    if "storage" not in requests:
        out.append(required(f"{path}.resources[storage]"))
    else:
        out += _positive(requests["storage"], f"{path}.resources[storage]")
    cls = _str(spec.get("storageClassName"))
    if cls:
        out += _class_name(cls, f"{path}.storageClassName")
    mode = spec.get("volumeMode")
    if mode is not None and mode not in _VOLUME_MODES:
        out.append(not_supported(f"{path}.volumeMode", mode, _VOLUME_MODES))
    for ds in ("dataSource", "dataSourceRef"):
        ref = spec.get(ds)
        if isinstance(ref, Mapping):
            if not _str(ref.get("name")):
                out.append(required(f"{path}.{ds}.name"))
            if not _str(ref.get("kind")):
                out.append(required(f"{path}.{ds}.kind"))
            if not _str(ref.get("apiGroup")) and ref.get("kind") != "PersistentVolumeClaim":
                out.append(invalid(f"{path}.{ds}", _str(ref.get("kind")), ""))
    return out


def validate_pvc_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidatePersistentVolumeClaimUpdate``."""
    out = validate_pvc_spec(new.get("spec") or {})
    new_spec, old_spec = _pvc_specs_to_compare(new, old, out)
    if new_spec != old_spec:
        out.append(forbidden("spec", "spec is immutable after creation except resources.requests for bound "
                                     "claims\n" + "\n".join(_diff(old_spec, new_spec))))
    if _pvc_shrinks_below_capacity(new, old):
        out.append(forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    if (new.get("spec") or {}).get("volumeMode") != (old.get("spec") or {}).get("volumeMode"):
        out.append(invalid("volumeMode", (new.get("spec") or {}).get("volumeMode"), IMMUTABLE))
    return out


def _pvc_specs_to_compare(new: Obj, old: Obj, out: list[Cause]) -> tuple[Obj, Obj]:
    """Copies of the two specs with what may change made equal: volumeName set once, the beta storage
    class annotation upgraded to storageClassName (a changed annotation is a cause in ``out``), and a
    bound claim's storage request."""
    new_spec = json.loads(json.dumps(new.get("spec") or {}))
    old_spec = json.loads(json.dumps(old.get("spec") or {}))
    if not old_spec.get("volumeName"):
        if "volumeName" in new_spec:
            old_spec["volumeName"] = new_spec["volumeName"]      # volumeName may be set once
        else:
            old_spec.pop("volumeName", None)
    _upgrade_storage_class(new, old, new_spec, old_spec, out)
    bound = ((new.get("status") or {}).get("phase")) == "Bound"
    if bound and isinstance((new_spec.get("resources") or {}).get("requests"), dict):
        old_storage = ((old_spec.get("resources") or {}).get("requests") or {}).get("storage")
        if old_storage is None:
            new_spec["resources"]["requests"].pop("storage", None)
        else:
            new_spec["resources"]["requests"]["storage"] = old_storage
    return new_spec, old_spec


def _upgrade_storage_class(new: Obj, old: Obj, new_spec: Obj, old_spec: Obj, out: list[Cause]) -> None:
    """validateStorageClassUpgrade: the beta annotation's class may move to storageClassName; else the
    annotation is immutable."""
    new_ann = (new.get("metadata") or {}).get("annotations") or {}
    old_ann = (old.get("metadata") or {}).get("annotations") or {}
    if (BETA_STORAGE_CLASS in old_ann and "storageClassName" not in old_spec
            and new_spec.get("storageClassName") == old_ann[BETA_STORAGE_CLASS]
            and new_ann.get(BETA_STORAGE_CLASS, old_ann[BETA_STORAGE_CLASS]) == old_ann[BETA_STORAGE_CLASS]):
        new_spec.pop("storageClassName", None)           # validateStorageClassUpgrade
    elif new_ann.get(BETA_STORAGE_CLASS) != old_ann.get(BETA_STORAGE_CLASS):
        out.append(invalid(f"metadata.annotations[{BETA_STORAGE_CLASS}]", new_ann.get(BETA_STORAGE_CLASS, ""),
                           IMMUTABLE))


def _pvc_shrinks_below_capacity(new: Obj, old: Obj) -> bool:
    """A storage request lowered to or below the claim's capacity."""
    new_size = _quantity(((new.get("spec") or {}).get("resources") or {}).get("requests", {}).get("storage", 0))
    old_size = _quantity(((old.get("spec") or {}).get("resources") or {}).get("requests", {}).get("storage", 0))
    status_size = _quantity(((old.get("status") or {}).get("capacity") or {}).get("storage", 0))
    return new_size is not None and old_size is not None and status_size is not None and new_size < old_size \
        and new_size <= status_size


# --- storage.k8s.io ------------------------------------------------------------------------------

def default_storage_class(sc: Obj) -> None:
    sc.setdefault("reclaimPolicy", "Delete")
    sc.setdefault("volumeBindingMode", "Immediate")


def validate_storage_class(sc: Obj) -> list[Cause]:
    """``ValidateStorageClass``."""
    out: list[Cause] = []
    out += core.required_and(_str(sc.get("provisioner")), "provisioner", lambda prov, p: _qualified(prov.lower(), p))
    out += _class_parameters(sc.get("parameters") or {})
    policy = sc.get("reclaimPolicy")
    if policy and policy not in _CLASS_RECLAIM:
        out.append(not_supported("reclaimPolicy", policy, _CLASS_RECLAIM))
    mode = sc.get("volumeBindingMode")
    if mode is None:
        out.append(required("volumeBindingMode"))
    elif mode not in _BINDING_MODES:
        out.append(not_supported("volumeBindingMode", mode, _BINDING_MODES))
    seen: list[Any] = []
    for i, term in enumerate(sc.get("allowedTopologies") or []):
        at = f"allowedTopologies[{i}]"
        keys = _topology_term(term, at, out)
        if keys in seen:
            out.append(duplicate(f"{at}.matchLabelExpressions", ""))
        seen.append(keys)
    return out


def _class_parameters(params: Obj) -> list[Cause]:
    """A StorageClass's parameters: how many, their keys, and their total size."""
    if len(params) > _MAX_PARAMETERS:
        return [("parameters", "FieldValueTooLong", f"Too long: may not be more than {_MAX_PARAMETERS} items")]
    out: list[Cause] = []
    size = 0
    for k, v in params.items():
        if not k:
            out.append(invalid("parameters", k, "field can not be empty."))
        size += len(k) + len(_str(v))
    if size > _MAX_PARAMETER_BYTES:
        out.append(("parameters", "FieldValueTooLong",
                    f"Too long: may not be more than {_MAX_PARAMETER_BYTES} bytes"))
    return out


def _topology_term(term: Any, at: str, out: list[Cause]) -> dict[str, list[str]]:
    """One allowedTopologies term's label expressions checked; its values by key (to find a repeated term)."""
    exprs = (term or {}).get("matchLabelExpressions") or []
    if not exprs:
        out.append(required(f"{at}.matchLabelExpressions", "must have at least one label expression"))
    keys: dict[str, list[str]] = {}
    for j, e in enumerate(exprs):
        ep = f"{at}.matchLabelExpressions[{j}]"
        key = _str((e or {}).get("key"))
        out += _qualified(key, f"{ep}.key")
        values = (e or {}).get("values") or []
        if not values:
            out.append(required(f"{ep}.values", "must specify as least one value"))
        for k, v in enumerate(values):
            out += [invalid(f"{ep}.values[{k}]", v, msg) for msg in label_value_errors(_str(v))]
        if key in keys:
            out.append(duplicate(f"{ep}.key", key))
        keys[key] = sorted(set(map(str, values)))
    return keys


def validate_storage_class_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidateStorageClassUpdate``."""
    out = validate_storage_class(new)
    if (new.get("parameters") or {}) != (old.get("parameters") or {}):
        out.append(forbidden("parameters", "updates to parameters are forbidden."))
    if new.get("provisioner") != old.get("provisioner"):
        out.append(forbidden("provisioner", "updates to provisioner are forbidden."))
    if new.get("reclaimPolicy") != old.get("reclaimPolicy"):
        out.append(forbidden("reclaimPolicy", "updates to reclaimPolicy are forbidden."))
    if new.get("volumeBindingMode") != old.get("volumeBindingMode"):
        out.append(invalid("volumeBindingMode", new.get("volumeBindingMode"), IMMUTABLE))
    return out


def validate_csi_node(node: Obj) -> list[Cause]:
    """``ValidateCSINode``: each driver's name, nodeID, allocatable count and topology keys; names unique."""
    out: list[Cause] = []
    names: set[str] = set()
    for i, d in enumerate((node.get("spec") or {}).get("drivers") or []):
        at = f"spec.drivers[{i}]"
        name = _str((d or {}).get("name"))
        out += _csi_driver_name(name, f"{at}.name")
        node_id = _str((d or {}).get("nodeID"))
        if not node_id:
            out.append(required(f"{at}.nodeID"))
        if len(node_id) > _CSI_NODE_ID_MAX:
            out.append(invalid(f"{at}.nodeID", node_id, f"must be {_CSI_NODE_ID_MAX} characters or less"))
        count = ((d or {}).get("allocatable") or {}).get("count")
        if isinstance(count, int) and count < 0:
            out.append(invalid(f"{at}.allocatable.count", count, "must be greater than or equal to 0"))
        if name in names:
            out.append(duplicate(f"{at}.name", name))
        names.add(name)
        keys: set[str] = set()
        for key in (d or {}).get("topologyKeys") or []:
            key = _str(key)
            if not key:
                out.append(required(at))
            if key in keys:
                out.append(duplicate(at, key))
            keys.add(key)
            out += _qualified(key, at)
    return out


def validate_csi_node_update(new: Obj, old: Obj) -> list[Cause]:
    """``ValidateCSINodeUpdate``: an existing driver entry may change only its ``allocatable``."""
    out = validate_csi_node(new)

    def strip(d: Obj) -> Obj:
        return {k: v for k, v in d.items() if k != "allocatable"}
    for o in (old.get("spec") or {}).get("drivers") or []:
        for n in (new.get("spec") or {}).get("drivers") or []:
            if (o or {}).get("name") == (n or {}).get("name") and strip(n) != strip(o):
                out.append(invalid("spec.drivers", n, IMMUTABLE))
    return out


def default_csi_driver(driver: Obj) -> None:
    spec = driver.setdefault("spec", {})
    if isinstance(spec, dict):
        for k, v in (("attachRequired", True), ("podInfoOnMount", False), ("storageCapacity", False),
                     ("fsGroupPolicy", "ReadWriteOnceWithFSType"), ("requiresRepublish", False),
                     ("seLinuxMount", False)):
            spec.setdefault(k, v)
        if not spec.get("volumeLifecycleModes"):
            spec["volumeLifecycleModes"] = ["Persistent"]


def validate_csi_driver(driver: Obj) -> list[Cause]:
    """``validateCSIDriverSpec``."""
    spec = driver.get("spec") or {}
    out: list[Cause] = []
    for i, m in enumerate(spec.get("volumeLifecycleModes") or []):
        if m not in _LIFECYCLE_MODES:
            out.append(not_supported(f"spec.volumeLifecycleModes[{i}]", m, _LIFECYCLE_MODES))
    policy = spec.get("fsGroupPolicy")
    if policy is not None and policy not in _FS_GROUP_POLICIES:
        out.append(not_supported("spec.fsGroupPolicy", policy, _FS_GROUP_POLICIES))
    audiences: set[str] = set()
    for i, t in enumerate(spec.get("tokenRequests") or []):
        aud = _str((t or {}).get("audience"))
        if aud in audiences:
            out.append(duplicate(f"spec.tokenRequests[{i}].audience", aud))
        audiences.add(aud)
        secs = (t or {}).get("expirationSeconds")
        if isinstance(secs, int) and secs < 600:
            out.append(invalid(f"spec.tokenRequests[{i}].expirationSeconds", secs,
                               "may not specify a duration less than 10 minutes"))
    period = spec.get("nodeAllocatableUpdatePeriodSeconds")
    if isinstance(period, int) and period < 10:
        out.append(invalid("spec.nodeAllocatableUpdatePeriodSeconds", period,
                           "must be greater than or equal to 10 seconds"))
    return out


def validate_csi_driver_update(new: Obj, old: Obj) -> list[Cause]:
    out = validate_csi_driver(new)
    ns, os_ = new.get("spec") or {}, old.get("spec") or {}
    for f in ("attachRequired", "volumeLifecycleModes"):
        if ns.get(f) != os_.get(f):
            out.append(invalid(f"spec.{f}", ns.get(f), IMMUTABLE))
    return out


def validate_capacity(cap: Obj) -> list[Cause]:
    """``ValidateCSIStorageCapacity``."""
    out: list[Cause] = []
    out += core.required_and(_str(cap.get("storageClassName")), "storageClassName", _class_name)
    out += _label_selector(cap.get("nodeTopology"), "nodeTopology")
    for f in ("capacity", "maximumVolumeSize"):
        if cap.get(f) is not None:
            out += _non_negative(cap[f], f)
    return out


def validate_capacity_update(new: Obj, old: Obj) -> list[Cause]:
    out = validate_capacity(new)
    for f in ("storageClassName", "nodeTopology"):
        if new.get(f) != old.get(f):
            out.append(invalid(f, new.get(f), IMMUTABLE))
    return out


# --- the server's entry point ----------------------------------------------------------------------

def _decode_quantities(kind: str, obj: Obj, store: str) -> None:
    """What decoding refuses with a 400: a quantity that does not parse."""
    spec: Obj = obj["spec"] if isinstance(obj.get("spec"), dict) else {}
    fields: list[tuple[str, Any]] = []
    if store == "/persistentvolumes":
        fields = [(f"spec.capacity[{k}]", v) for k, v in (spec.get("capacity") or {}).items()]
    elif store == "/persistentvolumeclaims":
        res = spec.get("resources") or {}
        fields = [(f"spec.resources.{part}[{k}]", v) for part in ("requests", "limits")
                  for k, v in (res.get(part) or {}).items()]
    elif store == "storage.k8s.io/csistoragecapacities":
        fields = [(f, obj[f]) for f in ("capacity", "maximumVolumeSize") if obj.get(f) is not None]
    for field, raw in fields:
        if isinstance(raw, bool) or _quantity(raw) is None:
            raise ApiError(400, "BadRequest", f'{kind} in version "v1" cannot be handled as a {kind}: {field}: '
                                              f"quantities must match the regular expression {QUANTITY_RE}")


def admit_storage(store: str, obj: Obj, old: Obj | None, classes: Callable[[], Iterable[Obj]]) -> None:
    """Default, admit and validate a storage object (a create when ``old`` is None); raises the 422."""
    name = str((obj.get("metadata") or {}).get("name") or "")
    obj.setdefault("metadata", {})
    if store not in STORES:
        return
    _decode_quantities(STORES[store], obj, store)
    default, validate_create, validate_update, group = _STRATEGIES[store]
    default(obj, old, classes)
    causes = validate_create(obj) if old is None else validate_update(obj, old)
    if causes:
        raise invalid_error(STORES[store], name, causes, group)


def _default_pv(pv: Obj, old: Obj | None, classes: Callable[[], Iterable[Obj]]) -> None:
    default_pv(pv)
    _protect(pv, old, PROTECTION_PV)


def _default_pvc(pvc: Obj, old: Obj | None, classes: Callable[[], Iterable[Obj]]) -> None:
    default_pvc(pvc, classes if old is None else None)
    _protect(pvc, old, PROTECTION_PVC)


def _protect(obj: Obj, old: Obj | None, finalizer: str) -> None:
    """The protection controller's finalizer, added on create (the admission plugin's part of it)."""
    meta = obj["metadata"]
    if old is None and finalizer not in (meta.get("finalizers") or []):
        meta["finalizers"] = [*(meta.get("finalizers") or []), finalizer]


def _no_defaults(obj: Obj, old: Obj | None, classes: Callable[[], Iterable[Obj]]) -> None:
    pass


def _validate_pvc(pvc: Obj) -> list[Cause]:
    return validate_pvc_spec(pvc.get("spec") or {})


STORES = {"/persistentvolumes": "PersistentVolume", "/persistentvolumeclaims": "PersistentVolumeClaim",
          "storage.k8s.io/storageclasses": "StorageClass", "storage.k8s.io/csinodes": "CSINode",
          "storage.k8s.io/csidrivers": "CSIDriver", "storage.k8s.io/csistoragecapacities": "CSIStorageCapacity"}

# Each store's strategy: defaulting (with admission's finalizers), validation on create and on update,
# and the API group its errors name.
_Defaulter = Callable[[Obj, Obj | None, Callable[[], Iterable[Obj]]], None]
_STRATEGIES: dict[str, tuple[_Defaulter, Callable[[Obj], list[Cause]], Callable[[Obj, Obj], list[Cause]], str]] = {
    "/persistentvolumes": (_default_pv, validate_pv, validate_pv_update, ""),
    "/persistentvolumeclaims": (_default_pvc, _validate_pvc, validate_pvc_update, ""),
    "storage.k8s.io/storageclasses": (lambda sc, old, classes: default_storage_class(sc), validate_storage_class,
                                      validate_storage_class_update, "storage.k8s.io"),
    "storage.k8s.io/csinodes": (_no_defaults, validate_csi_node, validate_csi_node_update, "storage.k8s.io"),
    "storage.k8s.io/csidrivers": (lambda d, old, classes: default_csi_driver(d), validate_csi_driver,
                                  validate_csi_driver_update, "storage.k8s.io"),
    "storage.k8s.io/csistoragecapacities": (_no_defaults, validate_capacity, validate_capacity_update,
                                            "storage.k8s.io"),
}
