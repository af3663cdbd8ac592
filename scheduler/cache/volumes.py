"""The storage objects the volume plugins read: upstream's PV, PVC, StorageClass, CSINode, CSIDriver
and CSIStorageCapacity listers, as one core store.

The edge (the operator's informers) feeds it with ``on_event(kind, event, body)`` or the typed
``upsert`` / ``delete``; the plugins read it through ``Handle.volumes`` with the lookups below. It
does no I/O and holds the parsed objects only (``scheduler.model.volumes``), never their bodies.

A lookup that finds nothing returns ``None``, and the plugins turn that into what upstream's listers'
``NotFound`` leads to. Their error texts are the informer listers' (``persistentvolumeclaim "x" not
found``: client-go's generated listers name the singular resource), built by ``not_found``. A body
that does not parse is dropped and reported by the return value, so one bad object never blocks a
cycle; the object then reads as absent, as an object the informer never delivered would.

Without a store (``Handle.volumes is None``: tests and tools that do not watch storage) every
lookup finds nothing, exactly as an empty store answers.

**Assumed objects** (upstream's ``AssumeCache``): VolumeBinding's Reserve assumes the PV it
pre-binds to a claim and the claim it annotates with the selected node, so the next cycle sees them
so; ``restore`` (Unreserve) puts the informer's object back. The next watch event for the object
(``on_event`` or ``upsert``) replaces the assumption, as the informer's newer version does upstream.
``api_pv`` / ``api_pvc`` give the informer's object behind an assumption (upstream's ``GetAPIPV``):
VolumeBinding's PreBind waits on those, never on what a later cycle assumed.

**Change journal.** ``changes(since)`` lists the objects changed since ``version`` was ``since``,
as ``(kind, key)``, with the version to read from next time, so a reader that derives data from a
few objects (NodeVolumeLimits' attach counts read the claims, PVs and classes of placed pods) redoes
only what depends on them; the journal keeps the last ``JOURNAL_MAX`` changes, and a reader further
behind is told to redo everything.

**Watches.** ``watch(kind, namespace, name, fn)`` calls ``fn()`` whenever that object changes
(written, assumed, restored or deleted), from whichever thread changed it; PreBind's wait uses it
to wake at once rather than poll. ``fn`` must be cheap and must not call back into the store.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from scheduler.errors import ParseError
from scheduler.model.volumes import (
    CSIDriver,
    CSINode,
    CSIStorageCapacity,
    PersistentVolume,
    PersistentVolumeClaim,
    StorageClass,
    parse_csi_driver,
    parse_csi_node,
    parse_csi_storage_capacity,
    parse_pv,
    parse_pvc,
    parse_storage_class,
)

__all__ = ["JOURNAL_MAX", "KINDS", "ObjectKey", "VolumeObject", "VolumeStore", "not_found"]

VolumeObject = PersistentVolume | PersistentVolumeClaim | StorageClass | CSINode | CSIDriver | CSIStorageCapacity
# (kind, (namespace, name)): the namespace is "" for the cluster-scoped kinds.
ObjectKey = tuple[str, tuple[str, str]]
# Changes the journal keeps (see module doc).
JOURNAL_MAX = 4096

# The kinds the edge watches for the store, as (group, version, plural, kind).
KINDS: tuple[tuple[str, str, str, str], ...] = (
    ("", "v1", "persistentvolumes", "PersistentVolume"),
    ("", "v1", "persistentvolumeclaims", "PersistentVolumeClaim"),
    ("storage.k8s.io", "v1", "storageclasses", "StorageClass"),
    ("storage.k8s.io", "v1", "csinodes", "CSINode"),
    ("storage.k8s.io", "v1", "csidrivers", "CSIDriver"),
    ("storage.k8s.io", "v1", "csistoragecapacities", "CSIStorageCapacity"),
)
_PARSERS: dict[str, Any] = {
    "PersistentVolume": parse_pv, "PersistentVolumeClaim": parse_pvc, "StorageClass": parse_storage_class,
    "CSINode": parse_csi_node, "CSIDriver": parse_csi_driver, "CSIStorageCapacity": parse_csi_storage_capacity,
}
# client-go's listers build NotFound from v1.Resource("persistentvolumeclaim") and friends: the
# singular resource, with the group for storage.k8s.io kinds.
_RESOURCE = {
    "PersistentVolume": "persistentvolume", "PersistentVolumeClaim": "persistentvolumeclaim",
    "StorageClass": "storageclass.storage.k8s.io", "CSINode": "csinode.storage.k8s.io",
    "CSIDriver": "csidriver.storage.k8s.io", "CSIStorageCapacity": "csistoragecapacity.storage.k8s.io",
}


def not_found(kind: str, name: str) -> str:
    """The text of the informer lister's NotFound error for ``kind`` ``name``."""
    return f'{_RESOURCE[kind]} "{name}" not found'


def _key(obj: VolumeObject) -> tuple[str, str]:
    return (obj.namespace, obj.name) if isinstance(obj, PersistentVolumeClaim | CSIStorageCapacity) else ("", obj.name)


class VolumeStore:
    """PVs, PVCs, StorageClasses, CSINodes, CSIDrivers and CSIStorageCapacities by (namespace, name).

    ``version`` is bumped on every change, so a caller may cache what it derives from the store.
    """

    def __init__(self) -> None:
        self._objects: dict[str, dict[tuple[str, str], VolumeObject]] = {k: {} for k in _PARSERS}
        # (kind, key) -> the informer's object an assumption shadows (None: there was none)
        self._assumed: dict[tuple[str, tuple[str, str]], VolumeObject | None] = {}
        self._watchers: dict[tuple[str, tuple[str, str]], list[Callable[[], None]]] = {}
        self.version = 0
        # (the version a change made, the object changed), oldest first: see ``changes``.
        self._journal: list[tuple[int, ObjectKey]] = []

    def __len__(self) -> int:
        return sum(len(v) for v in self._objects.values())

    # --- writes ----------------------------------------------------------------------------
    def _changed(self, kind: str, key: tuple[str, str]) -> None:
        # Journal first, then the version: a reader on another thread that has read ``version``
        # finds every change up to it in the journal (``changes``).
        if len(self._journal) >= JOURNAL_MAX:
            del self._journal[: JOURNAL_MAX // 2]
        self._journal.append((self.version + 1, (kind, key)))
        self.version += 1
        fns = self._watchers.get((kind, key))
        if fns:
            for fn in tuple(fns):
                fn()

    def changes(self, since: int) -> tuple[list[ObjectKey] | None, int]:
        """The objects changed since ``version`` was ``since``, oldest first (an object may appear
        more than once), and the version they bring the reader to; ``None`` for the objects when
        the journal no longer reaches back that far (or ``since`` is ahead: another store).

        Safe against a writer on another thread: each slice of the journal is one atomic copy,
        and changes made after ``version`` was read are left for the next call."""
        end = self.version
        if since == end:
            return [], end
        if since > end:
            return None, end
        want = end - since
        while True:
            tail = self._journal[-want:]
            if tail and tail[0][0] <= since + 1:
                return [key for version, key in tail if since < version <= end], end
            if len(tail) < want:
                return None, end            # trimmed past ``since``
            want *= 2                       # newer changes came in meanwhile: look further back

    def watch(self, kind: str, namespace: str, name: str, fn: Callable[[], None]) -> Callable[[], None]:
        """Call ``fn()`` on every change of ``kind`` ``namespace/name`` (``namespace`` "" for the
        cluster-scoped kinds); returns the function that stops it."""
        wkey = (kind, (namespace, name) if kind in ("PersistentVolumeClaim", "CSIStorageCapacity") else ("", name))
        self._watchers.setdefault(wkey, []).append(fn)

        def unwatch() -> None:
            fns = self._watchers.get(wkey)
            if fns is not None and fn in fns:
                fns.remove(fn)
                if not fns:
                    del self._watchers[wkey]
        return unwatch

    def upsert(self, obj: VolumeObject) -> None:
        """The informer's object: it replaces any assumption about it."""
        kind, key = type(obj).__name__, _key(obj)
        self._assumed.pop((kind, key), None)
        self._objects[kind][key] = obj
        self._changed(kind, key)

    def assume(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        """Shadow the informer's object with ``obj`` until ``restore`` or the next watch event."""
        kind, key = type(obj).__name__, _key(obj)
        if (kind, key) not in self._assumed:
            self._assumed[(kind, key)] = self._objects[kind].get(key)
        self._objects[kind][key] = obj
        self._changed(kind, key)

    def restore(self, obj: PersistentVolume | PersistentVolumeClaim) -> None:
        """Undo ``assume`` for ``obj``'s key (nothing if no assumption is left)."""
        kind, key = type(obj).__name__, _key(obj)
        if (kind, key) not in self._assumed:
            return
        original = self._assumed.pop((kind, key))
        if original is None:
            self._objects[kind].pop(key, None)
        else:
            self._objects[kind][key] = original
        self._changed(kind, key)

    def is_assumed(self, obj: VolumeObject) -> bool:
        return (type(obj).__name__, _key(obj)) in self._assumed

    def delete(self, kind: str, namespace: str, name: str) -> bool:
        """Forget an object; whether it was there."""
        key = (namespace if kind in ("PersistentVolumeClaim", "CSIStorageCapacity") else "", name)
        self._assumed.pop((kind, key), None)
        gone = self._objects[kind].pop(key, None) is not None
        if gone:
            self._changed(kind, key)
        return gone

    def on_event(self, kind: str, event: str, body: Mapping[str, Any]) -> VolumeObject | None:
        """Apply one watch event (ADDED / MODIFIED / DELETED) of ``kind``; the parsed object, or
        ``None`` for a deletion or a body that does not parse (then the object reads as absent)."""
        meta = body.get("metadata") or {}
        ns = str(meta.get("namespace") or "") if kind in ("PersistentVolumeClaim", "CSIStorageCapacity") else ""
        if kind == "PersistentVolumeClaim":
            ns = ns or "default"
        name = str(meta.get("name") or "")
        if event == "DELETED":
            self.delete(kind, ns, name)
            return None
        try:
            obj: VolumeObject = _PARSERS[kind](body)
        except ParseError:
            self.delete(kind, ns, name)
            return None
        self.upsert(obj)
        return obj

    # --- lookups (upstream's listers' Get) -------------------------------------------------
    def pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        obj = self._objects["PersistentVolumeClaim"].get((namespace, name))
        return obj if isinstance(obj, PersistentVolumeClaim) else None

    def pv(self, name: str) -> PersistentVolume | None:
        obj = self._objects["PersistentVolume"].get(("", name))
        return obj if isinstance(obj, PersistentVolume) else None

    def _api(self, kind: str, key: tuple[str, str]) -> VolumeObject | None:
        if (kind, key) in self._assumed:
            return self._assumed[(kind, key)]
        return self._objects[kind].get(key)

    def api_pvc(self, namespace: str, name: str) -> PersistentVolumeClaim | None:
        """The informer's claim, ignoring any assumption (upstream's ``GetAPIPVC``)."""
        obj = self._api("PersistentVolumeClaim", (namespace, name))
        return obj if isinstance(obj, PersistentVolumeClaim) else None

    def api_pv(self, name: str) -> PersistentVolume | None:
        """The informer's PV, ignoring any assumption (upstream's ``GetAPIPV``)."""
        obj = self._api("PersistentVolume", ("", name))
        return obj if isinstance(obj, PersistentVolume) else None

    def capacity(self, namespace: str, name: str) -> CSIStorageCapacity | None:
        obj = self._objects["CSIStorageCapacity"].get((namespace, name))
        return obj if isinstance(obj, CSIStorageCapacity) else None

    def storage_class(self, name: str) -> StorageClass | None:
        obj = self._objects["StorageClass"].get(("", name))
        return obj if isinstance(obj, StorageClass) else None

    def csi_node(self, name: str) -> CSINode | None:
        obj = self._objects["CSINode"].get(("", name))
        return obj if isinstance(obj, CSINode) else None

    def csi_driver(self, name: str) -> CSIDriver | None:
        obj = self._objects["CSIDriver"].get(("", name))
        return obj if isinstance(obj, CSIDriver) else None

    def pvs(self) -> Iterator[PersistentVolume]:
        for obj in self._objects["PersistentVolume"].values():
            if isinstance(obj, PersistentVolume):
                yield obj

    def capacities(self) -> Iterator[CSIStorageCapacity]:
        for obj in self._objects["CSIStorageCapacity"].values():
            if isinstance(obj, CSIStorageCapacity):
                yield obj
