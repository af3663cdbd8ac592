"""The garbage collector (``pkg/controller/garbagecollector``), through ``ownerReferences``: when an owner
is gone, its dependents are deleted (background); ``propagationPolicy: Foreground`` holds the owner
(finalizer ``foregroundDeletion``) until its dependents are gone; ``Orphan`` (finalizer ``orphan``)
strips the owner reference from its dependents first.

An owner reference whose owner is absent (no object of that kind and name, or one with another uid; an
owner that never existed is as absent as one deleted) is dangling, as ``attemptToDeleteItem`` classifies
it: a dependent with only dangling owners is deleted, one with a live owner too loses the dangling
references.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers, without_finalizer
from scheduler.simulator.interfaces import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, ClusterWriter
from scheduler.simulator.store import Event

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceType

__all__ = ["GarbageCollector"]

Obj = dict[str, Any]
Key = tuple[str, str, str]          # (store, namespace, name)


class GarbageCollector(Controller):
    """Deletes dependents whose owners are gone, and finishes Foreground and Orphan deletions."""

    FOREGROUND, ORPHAN = FOREGROUND_FINALIZER, ORPHAN_FINALIZER

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.dependents: dict[str, set[Key]] = {}          # owner uid → dependents
        self.held: dict[str, Key] = {}                    # owners held by foregroundDeletion or orphan
        self.pending: set[str] = set()                    # owner uids to process
        self.referring: set[Key] = set()                  # dependents whose owners to verify

    def on_event(self, store: str, ev: Event) -> None:
        meta = ev.obj["metadata"]
        key = (store, meta.get("namespace", ""), meta["name"])
        self._track_references(key, ev)
        uid = str(meta.get("uid", ""))
        gone = ev.type == "DELETED" and uid in self.dependents
        held = bool(meta.get("deletionTimestamp")) and bool({self.FOREGROUND, self.ORPHAN} &
                                                            set(meta.get("finalizers") or ()))
        if held:
            self.held[uid] = key
        if ev.type == "DELETED":
            self.held.pop(uid, None)
        if gone or held:
            self._mark(uid)
        if ev.type == "DELETED" and uid and not self.dependents.get(uid):
            self.dependents.pop(uid, None)

    def _track_references(self, key: Key, ev: Event) -> None:
        """The dependents index by owner uid, and the dependents whose (new) owners to verify."""
        meta = ev.obj["metadata"]
        if ev.old is not None:
            for ref in ev.old["metadata"].get("ownerReferences") or []:
                self.dependents.get(str(ref.get("uid")), set()).discard(key)
        if ev.type == "DELETED":
            return
        for ref in meta.get("ownerReferences") or []:
            if isinstance(ref, dict) and ref.get("uid"):
                self.dependents.setdefault(str(ref["uid"]), set()).add(key)
        old_refs = (ev.old or {}).get("metadata", {}).get("ownerReferences") if ev.old is not None else None
        if meta.get("ownerReferences") and meta.get("ownerReferences") != old_refs:
            self.referring.add(key)
            self._schedule(0)

    def _mark(self, uid: str) -> None:
        self.pending.add(uid)
        self._schedule(0)

    def _sync_dirty(self) -> None:
        batch, self.pending = self.pending, set()
        for uid in batch:
            self._collect(uid)
        referring, self.referring = self.referring, set()
        for key in sorted(referring):
            self._verify_owners(key)

    def _verify_owners(self, key: Key) -> None:
        """attemptToDeleteItem for a dependent: its owners looked up (kind, name, uid); with none live it is
        deleted, with some live its dangling references are removed."""
        store, namespace, name = key
        obj = self.api.store.bucket(store).objects.get((namespace, name))
        if obj is None or obj["metadata"].get("deletionTimestamp"):
            return
        refs = [r for r in obj["metadata"].get("ownerReferences") or [] if isinstance(r, dict)]
        dangling = [r for r in refs if self._absent(r, namespace)]
        if not dangling:
            return
        if len(dangling) == len(refs):
            self._delete(store, obj)
            return
        meta = {**obj["metadata"], "ownerReferences": [r for r in refs if r not in dangling]}
        self.api.write(self._rt(store), obj, {**obj, "metadata": meta})

    def _absent(self, ref: Obj, namespace: str) -> bool:
        """Whether the reference's owner is absent; an owner of a kind not served cannot be told, so is not."""
        rt = self.api.registry.for_object({"apiVersion": ref.get("apiVersion"), "kind": ref.get("kind")})
        if rt is None or (rt.namespaced and not namespace):
            return False
        owner = self.api.store.bucket(rt.store).objects.get((namespace if rt.namespaced else "",
                                                             str(ref.get("name", ""))))
        return owner is None or owner["metadata"].get("uid") != ref.get("uid")

    def _held_owner(self, uid: str) -> tuple[str, Obj] | None:
        """The owner with this uid if it is still stored (held by a finalizer), with its store."""
        key = self.held.get(uid)
        if key is None:
            return None
        obj = self.api.store.bucket(key[0]).objects.get((key[1], key[2]))
        if obj is None or obj["metadata"].get("uid") != uid:
            return None
        return key[0], obj

    def _collect(self, uid: str) -> None:
        found = self._held_owner(uid)
        deps = [(k, self.api.store.bucket(k[0]).objects.get((k[1], k[2])))
                for k in sorted(self.dependents.get(uid, set()))]
        live = [(k, o) for k, o in deps if o is not None]
        if found is None:                                  # the owner is gone: background deletion
            for (store, _, _), o in live:
                if not o["metadata"].get("deletionTimestamp"):
                    self._delete(store, o)
            return
        store, owner = found
        finalizers = list(owner["metadata"].get("finalizers") or [])
        if self.ORPHAN in finalizers:
            self._orphan(uid, store, owner, live)
        elif self.FOREGROUND in finalizers:
            self._foreground(uid, store, owner, live)

    def _orphan(self, uid: str, store: str, owner: Obj, live: list[tuple[Any, Obj]]) -> None:
        """Orphan: the owner's reference taken off each dependent, then the owner's finalizer."""
        for (dstore, _, _), o in live:
            refs = [r for r in o["metadata"].get("ownerReferences") or [] if r.get("uid") != uid]
            meta = {**o["metadata"], "ownerReferences": refs}
            if not refs:
                meta.pop("ownerReferences")
            self.api.write(self._rt(dstore), o, {**o, "metadata": meta})
        self._drop_finalizer(store, owner, self.ORPHAN)

    def _foreground(self, uid: str, store: str, owner: Obj, live: list[tuple[Any, Obj]]) -> None:
        """Foreground: each dependent deleted (in the foreground too); the owner's finalizer comes off once
        they are all gone, checked again until then."""
        pending = [(k, o) for k, o in live]
        for (dstore, _, _), o in pending:
            if not o["metadata"].get("deletionTimestamp"):
                self._delete(dstore, o, "Foreground")
        if not [1 for k, _ in pending if self.api.store.bucket(k[0]).objects.get((k[1], k[2])) is not None]:
            self._drop_finalizer(store, owner, self.FOREGROUND)
        else:
            self.timers.later(0.1, lambda: self._mark(uid))

    def _rt(self, store: str) -> ResourceType:
        for rt in self.api.registry.by_path.values():
            if rt.store == store and not rt.to_external:
                return rt
        raise KeyError(store)

    def _delete(self, store: str, obj: Obj, policy: str = "Background") -> None:
        with contextlib.suppress(ApiError):          # gone meanwhile
            self.api.delete(self._rt(store), obj["metadata"].get("namespace", ""), obj["metadata"]["name"],
                            {"propagationPolicy": policy})

    def _drop_finalizer(self, store: str, owner: Obj, finalizer: str) -> None:
        cur = self.api.store.bucket(store).objects.get((owner["metadata"].get("namespace", ""),
                                                        owner["metadata"]["name"]))
        if cur is None:
            return
        self.api.write(self._rt(store), cur, without_finalizer(cur, finalizer))
