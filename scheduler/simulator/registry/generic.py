"""The generic registry store (``k8s.io/apiserver/pkg/registry/generic/registry/store.go``): the storage
paths every write ends in. ``write`` stores an object in place of its old self with the next resourceVersion
(MODIFIED, or DELETED once the last finalizer is gone), ``remove`` deletes it (DELETED) and what depends on
it (a CRD's custom resources), and an established CRD registers its resource types.
"""

from __future__ import annotations

from typing import Any

from scheduler.simulator import schema
from scheduler.simulator.registry.meta import now_iso
from scheduler.simulator.registry.strategy import Strategy
from scheduler.simulator.resources import ResourceType

__all__ = ["GenericStore"]

Obj = dict[str, Any]


class GenericStore(Strategy):
    """The storage paths every write takes, the handlers' and the controllers' alike."""

    def write(self, rt: ResourceType, old: Obj, new: Obj) -> Obj:
        """Store ``new`` in place of ``old`` with the next resourceVersion (MODIFIED)."""
        meta = new["metadata"] = dict(new["metadata"])
        meta["resourceVersion"] = str(self.store.next_rv())
        key = (meta.get("namespace", ""), meta["name"])
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not (
                rt.store == "/pods" and self.controllers.kubelet.awaits(new)) and not (
                rt.store == "/namespaces" and (new.get("spec") or {}).get("finalizers")):
            # (a namespace's spec.finalizers hold it until the namespace controller has emptied it)
            self.store.commit(rt, "DELETED", key, new, old)
            self._after_delete(rt, new)
        else:
            self.store.commit(rt, "MODIFIED", key, new, old)
        return new

    def remove(self, rt: ResourceType, old: Obj) -> None:
        """Remove ``old`` from the store with the next resourceVersion (DELETED), and what depends on it."""
        new = dict(old)
        new["metadata"] = {**old["metadata"], "resourceVersion": str(self.store.next_rv())}
        self.store.commit(rt, "DELETED", (old["metadata"].get("namespace", ""), old["metadata"]["name"]), new, old)
        self._after_delete(rt, new)

    def _after_delete(self, rt: ResourceType, obj: Obj) -> None:
        if rt.plural == "customresourcedefinitions" and not rt.crd_name:
            gone = self.registry.remove_crd(obj["metadata"]["name"])
            if gone:
                for o in list(self.store.bucket(gone[0].store).objects.values()):
                    self.remove(gone[0], o)

    def _establish(self, crd: Obj) -> None:
        self.registry.remove_crd(crd["metadata"]["name"])     # an update re-registers its versions
        storage_version = next((v.get("name") for v in crd["spec"]["versions"] if v.get("storage")), None)
        for rt in self.registry.crd_types(crd):
            self.registry.add(rt)
            if rt.version == storage_version:
                # What was stored before reads as this generation's schema decodes it (pruned, defaulted).
                bucket = self.store.bucket(rt.store)
                for key, obj in schema.redecode(rt.schema, bucket.objects):
                    bucket.put(key, obj)
        names = crd["spec"]["names"]
        status = {"conditions": [
            {"type": "NamesAccepted", "status": "True", "reason": "NoConflicts", "message": "no conflicts found",
             "lastTransitionTime": now_iso()},
            {"type": "Established", "status": "True", "reason": "InitialNamesAccepted",
             "message": "the initial names have been accepted", "lastTransitionTime": now_iso()}],
            "acceptedNames": names, "storedVersions": (crd.get("status") or {}).get("storedVersions") or [
                v["name"] for v in crd["spec"]["versions"] if v.get("storage")]}
        crt = self.rt("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        self.write(crt, crd, {**crd, "status": status})
