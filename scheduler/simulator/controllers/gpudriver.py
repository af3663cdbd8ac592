"""A simulated DRA driver (kubernetes-sigs/dra-example-driver's ``gpu.example.com``): with
``gpus_per_node`` above zero, each node gets one ResourceSlice (``generateName
<node>-gpu.example.com-``, the node as controller owner, so the garbage collector removes it with
the node): driver ``gpu.example.com``, pool = the node's name (generation 0, one slice),
``nodeName`` the node, devices ``gpu-0`` … ``gpu-<N-1>`` with attributes ``index``, ``uuid``
(``gpu-<uuid5 of node and index>``), ``model`` and ``driverVersion`` and capacity ``memory``,
taken from ``data/gpus.yaml`` or the file given (``load_gpu_attributes``). The DeviceClass
``gpu.example.com`` (selector ``device.driver == "gpu.example.com"``) is created when the first
node comes, unless one exists, as the driver's Helm chart installs it.

**Partitioned GPUs** (``partitions: true`` in the description; DRAPartitionableDevices): each GPU
``gpu-<i>`` is also offered as two halves, ``gpu-<i>-half-0`` and ``gpu-<i>-half-1``, all three
consuming the GPU's counter set ``gpu-<i>`` (counter ``memory``: the GPU's memory; the whole GPU
takes all of it, a half takes half), so a GPU is given out whole or as up to two halves. The
pool then has slices of at most 8 counter sets (``sharedCounters``, which API validation keeps
apart from devices) and slices of at most 64 devices (the limits for counter sets and for devices
that consume counters). Every device has the attribute ``partition`` (``"whole"`` or ``"half"``) and its own
``memory`` capacity.

**Binding conditions** (KEP-5007), when the description has ``bindingDelaySeconds``: each GPU is
published with ``bindingConditions: [gpu.example.com/attached]``, ``bindingFailureConditions:
[gpu.example.com/attach-failed]`` and ``bindsToNode``, as a driver whose devices must be attached
before the pod may start; once a claim is allocated one of them, the driver reports the condition
True in the claim's ``status.devices`` that many seconds later, and the scheduler's PreBind (which
waits for it) lets the pod bind.
"""

from __future__ import annotations

import contextlib
import logging
import uuid
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from scheduler.errors import QuantityError
from scheduler.quantity import format_quantity, parse_quantity
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter, Writer
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.resource import CLAIMS, CLASSES, SLICES
from scheduler.simulator.registry.resource_fields import SLICE_MAX_COUNTER_SETS, SLICE_MAX_DEVICES_ADVANCED
from scheduler.simulator.registry.resource_slices import validate_resource_slice
from scheduler.simulator.store import Event

__all__ = ["ATTACHED", "ATTACH_FAILED", "DEVICE_CLASS_SELECTOR", "GPU_DRIVER", "GpuDriver", "load_gpu_attributes"]

log = logging.getLogger("kopf_scheduler.simulator")
Obj = dict[str, Any]

GPU_DRIVER = "gpu.example.com"
DEVICE_CLASS_SELECTOR = f'device.driver == "{GPU_DRIVER}"'
ATTACHED, ATTACH_FAILED = f"{GPU_DRIVER}/attached", f"{GPU_DRIVER}/attach-failed"
_KEYS = ("model", "memory", "driverVersion", "attributes", "partitions", "bindingDelaySeconds")


def load_gpu_attributes(path: str | Path | None = None) -> Obj:
    """The GPU description (``model``, ``memory``, ``driverVersion``, and extra ``attributes``) from
    ``path``, or the packaged ``data/gpus.yaml``; raises ``ValueError`` naming what is wrong."""
    if path is None:
        text = resources.files("scheduler.simulator").joinpath("data/gpus.yaml").read_text()
        where = "data/gpus.yaml"
    else:
        text, where = Path(path).read_text(), str(path)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ValueError(f"{where}: not YAML: {e}") from None
    if not isinstance(doc, dict):
        raise ValueError(f"{where}: expected a mapping (model, memory, driverVersion, attributes)")
    unknown = sorted(set(doc) - set(_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(unknown)} (known: {', '.join(_KEYS)})")
    if not isinstance(doc.get("partitions", False), bool):
        raise ValueError(f"{where}: partitions: expected true or false")
    extra = doc.get("attributes") or {}
    if not isinstance(extra, dict):
        raise ValueError(f"{where}: attributes: expected a mapping of name to value")
    out: Obj = {"model": str(doc.get("model", "LATEST-GPU-MODEL")), "memory": str(doc.get("memory", "80Gi")),
                "driverVersion": str(doc.get("driverVersion", "1.0.0")), "attributes": dict(extra)}
    if doc.get("partitions"):
        out["partitions"] = True
    delay = doc.get("bindingDelaySeconds")
    if delay is not None:
        if isinstance(delay, bool) or not isinstance(delay, int | float) or delay < 0:
            raise ValueError(f"{where}: bindingDelaySeconds: expected a number of seconds >= 0, got {delay!r}")
        out["bindingDelaySeconds"] = float(delay)
    sample = {"spec": {"driver": GPU_DRIVER, "nodeName": "node", "pool": {"name": "node", "resourceSliceCount": 1},
                       "devices": [_gpu(out, "node", 0)]}}
    try:
        parse_quantity(out["memory"])
    except QuantityError:
        raise ValueError(f"{where}: memory: not a quantity: {out['memory']!r}") from None
    causes = validate_resource_slice(sample)
    if causes:
        raise ValueError(f"{where}: " + "; ".join(f"{f.replace('spec.devices[0].', '')}: {d}" for f, _, d in causes))
    return out


def _attribute(value: Any) -> Obj:
    """A YAML value as a DeviceAttribute: a bool, an integer, a string, or already ``{version: ...}``-like."""
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    return {"string": str(value)}


def _gpu(desc: Obj, node: str, index: int, part: str = "") -> Obj:
    """Device ``gpu-<index>`` of ``node``, as the example driver describes its GPUs; ``part``
    (``-half-0``, ``-half-1``, or ``""`` for the whole GPU) with partitioned GPUs."""
    name = f"gpu-{index}{part}"
    attrs: Obj = {k: _attribute(v) for k, v in (desc.get("attributes") or {}).items()}
    attrs.update({"index": {"int": index}, "model": {"string": desc["model"]},
                  "uuid": {"string": f"gpu-{uuid.uuid5(uuid.NAMESPACE_URL, f'{node}/{name}')}"},
                  "driverVersion": {"version": desc["driverVersion"]}})
    memory = desc["memory"]
    if desc.get("partitions"):
        attrs["partition"] = {"string": "half" if part else "whole"}
        if part:
            memory = format_quantity(parse_quantity(memory) / 2)
    device: Obj = {"name": name, "attributes": dict(sorted(attrs.items())), "capacity": {"memory": {"value": memory}}}
    if desc.get("partitions"):
        device["consumesCounters"] = [{"counterSet": f"gpu-{index}", "counters": {"memory": {"value": memory}}}]
    if desc.get("bindingDelaySeconds") is not None:
        device.update({"bindingConditions": [ATTACHED], "bindingFailureConditions": [ATTACH_FAILED],
                       "bindsToNode": True})
    return device


def _partitioned_specs(desc: Obj, node: str, gpus: int) -> list[Obj]:
    """The specs of a node's pool of partitioned GPUs: the counter sets, then the devices."""
    devices = [_gpu(desc, node, i, part) for i in range(gpus) for part in ("", "-half-0", "-half-1")]
    sets = [{"name": f"gpu-{i}", "counters": {"memory": {"value": desc["memory"]}}} for i in range(gpus)]
    chunks = [devices[i:i + SLICE_MAX_DEVICES_ADVANCED] for i in range(0, len(devices), SLICE_MAX_DEVICES_ADVANCED)]
    set_chunks = [sets[i:i + SLICE_MAX_COUNTER_SETS] for i in range(0, len(sets), SLICE_MAX_COUNTER_SETS)]
    pool = {"name": node, "generation": 0, "resourceSliceCount": len(set_chunks) + len(chunks)}
    return [*({"driver": GPU_DRIVER, "nodeName": node, "pool": pool, "sharedCounters": c} for c in set_chunks),
            *({"driver": GPU_DRIVER, "nodeName": node, "pool": pool, "devices": c} for c in chunks)]


class GpuDriver(Controller):
    """``gpu.example.com``'s kubelet plugin on every node: one ResourceSlice per node."""

    def __init__(self, api: ClusterWriter, timers: Timers, *, gpus_per_node: int = 0,
                 attributes: Obj | None = None) -> None:
        super().__init__(api, timers)
        self.gpus_per_node = gpus_per_node
        self.desc = attributes if attributes is not None else (load_gpu_attributes() if gpus_per_node > 0 else {})
        self.nodes: set[tuple[str, str]] = set()          # (name, uid) to publish for
        self._class_checked = False
        self.binding_delay: float | None = self.desc.get("bindingDelaySeconds")
        self._attaching: set[tuple[str, str]] = set()     # claims whose attach is under way

    def on_event(self, store: str, ev: Event) -> None:
        if self.gpus_per_node <= 0:
            return
        if store == CLAIMS and ev.type != "DELETED" and self.binding_delay is not None:
            self._on_claim(ev.obj)
            return
        if store != "/nodes" or ev.type != "ADDED":
            return
        self.nodes.add((ev.obj["metadata"]["name"], str(ev.obj["metadata"].get("uid"))))
        self._schedule(0)

    def _sync_dirty(self) -> None:
        if not self._class_checked:
            self._class_checked = True
            self._ensure_class()
        nodes, self.nodes = self.nodes, set()
        for name, uid in sorted(nodes):
            try:
                self._publish(name, uid)
            except ApiError as e:
                log.warning("simulated DRA driver %s: node %s: %s", GPU_DRIVER, name, e.message)

    # --- binding conditions -------------------------------------------------------------------------
    @staticmethod
    def _unattached(claim: Obj) -> list[Obj]:
        """The claim's results for this driver's devices with binding conditions whose attach is not
        reported yet in ``status.devices``."""
        status = claim.get("status") or {}
        results = ((status.get("allocation") or {}).get("devices") or {}).get("results") or []
        reported = {(d.get("driver"), d.get("pool"), d.get("device")) for d in status.get("devices") or []}
        return [r for r in results if r.get("driver") == GPU_DRIVER and r.get("bindingConditions")
                and (r.get("driver"), r.get("pool"), r.get("device")) not in reported]

    def _on_claim(self, claim: Obj) -> None:
        meta = claim["metadata"]
        key = (str(meta.get("namespace") or ""), str(meta["name"]))
        if key in self._attaching or not self._unattached(claim):
            return
        self._attaching.add(key)
        assert self.binding_delay is not None
        self.timers.later(self.binding_delay, lambda: self._attach(key))

    def _attach(self, key: tuple[str, str]) -> None:
        """The devices attached: their condition True in the claim's ``status.devices``."""
        self._attaching.discard(key)
        rt = self.api.rt("resource.k8s.io", "v1", "resourceclaims")
        claim = self.api.store.get(rt, key[0], key[1])
        if claim is None:
            return
        todo = self._unattached(claim)
        if not todo:
            return
        status = dict(claim.get("status") or {})
        status["devices"] = [*(status.get("devices") or []), *({
            "driver": r["driver"], "pool": r["pool"], "device": r["device"],
            "conditions": [{"type": ATTACHED, "status": "True", "reason": "Attached", "lastTransitionTime": now_iso(),
                            "message": f"{r['device']} attached to the node"}]} for r in todo)]
        try:
            self.api.write(rt, claim, {**claim, "status": status})
        except ApiError as e:
            log.warning("simulated DRA driver %s: claim %s/%s: %s", GPU_DRIVER, key[0], key[1], e.message)

    def _ensure_class(self) -> None:
        if self.api.store.bucket(CLASSES).objects.get(("", GPU_DRIVER)) is not None:
            return
        with contextlib.suppress(ApiError):
            self.api.create(self.api.rt("resource.k8s.io", "v1", "deviceclasses"), "", {
                "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": GPU_DRIVER},
                "spec": {"selectors": [{"cel": {"expression": DEVICE_CLASS_SELECTOR}}]}}, fresh=True,
                writer=Writer("helm"))

    def _publish(self, node: str, uid: str) -> None:
        current = self.api.store.bucket("/nodes").objects.get(("", node))
        if current is None or str(current["metadata"].get("uid")) != uid:
            return
        for s in self.api.store.bucket(SLICES).objects.values():
            spec = s.get("spec") or {}
            # (a slice of an earlier node of the same name is not this node's: the garbage collector takes it)
            if spec.get("nodeName") == node and spec.get("driver") == GPU_DRIVER and any(
                    r.get("uid") == uid for r in s["metadata"].get("ownerReferences") or []):
                return
        specs = _partitioned_specs(self.desc, node, self.gpus_per_node) if self.desc.get("partitions") else [
            {"driver": GPU_DRIVER, "nodeName": node, "pool": {"name": node, "generation": 0, "resourceSliceCount": 1},
             "devices": [_gpu(self.desc, node, i) for i in range(self.gpus_per_node)]}]
        for spec in specs:
            body: Obj = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {
                "generateName": f"{node}-{GPU_DRIVER}-",
                "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": node, "uid": uid,
                                     "controller": True}]},
                "spec": spec}
            self.api.create(self.api.rt("resource.k8s.io", "v1", "resourceslices"), "", body, fresh=True,
                            writer=Writer(GPU_DRIVER))
