"""The ServiceAccounts controller and the root CA publisher of kube-controller-manager.

- ``ServiceAccountsController`` (``pkg/controller/serviceaccount/serviceaccounts_controller.go``): every
  active namespace has a ``default`` ServiceAccount; one deleted is made again.
- ``RootCACertPublisher`` (``pkg/controller/certificates/rootcacertpublisher/publisher.go``): every active
  namespace has the ``kube-root-ca.crt`` ConfigMap, ``ca.crt`` holding the cluster's CA (PEM) and the
  ``kubernetes.io/description`` annotation; one deleted is made again, one changed is put back.

Both sync a namespace when it is added or updated, and when their object in it is deleted (or, for the
ConfigMap, changed), on a later loop turn (``base.Controller``). Outside an event loop (the server's
own bootstrap namespaces) nothing is scheduled: ``sync_all``, at the controller manager's start, is the
informers' initial list. ``ensure_default`` is what the ServiceAccount admission plugin's retries wait
for (``registry/core/serviceaccount.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import TYPE_CHECKING, Any

from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.registry.core.serviceaccount import DEFAULT_NAME

if TYPE_CHECKING:
    from scheduler.simulator.store import Event

__all__ = ["ROOT_CA_CONFIGMAP", "RootCACertPublisher", "ServiceAccountsController"]

Obj = dict[str, Any]
ROOT_CA_CONFIGMAP = "kube-root-ca.crt"
_DESCRIPTION_KEY = "kubernetes.io/description"
_DESCRIPTION = ("Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints "
                "such as the internal service IP or kubernetes.default.svc. No other usage is guaranteed across "
                "distributions of Kubernetes clusters.")


class _PerNamespace(Controller):
    """A controller whose work item is a namespace: ``_watched`` (a store) names what it keeps there."""

    _watched = ""

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.dirty: set[str] = set()

    def on_event(self, store: str, ev: Event) -> None:
        meta = ev.obj["metadata"]
        if store == "/namespaces" and ev.type != "DELETED":
            self._mark(str(meta["name"]))
        elif store == self._watched and self._concerns(ev):
            self._mark(str(meta.get("namespace", "")))

    def _concerns(self, ev: Event) -> bool:
        return False

    def _mark(self, namespace: str) -> None:
        self.dirty.add(namespace)
        try:
            asyncio.get_running_loop()
        except RuntimeError:      # the bootstrap, before the manager starts: ``sync_all`` will see it
            return
        self._schedule()

    def _sync_dirty(self) -> None:
        dirty, self.dirty = self.dirty, set()
        for ns in sorted(dirty):
            with contextlib.suppress(ApiError):    # gone, or terminating meanwhile: nothing to keep
                self.sync(ns)

    def sync_all(self) -> None:
        """Sync every namespace (the informers' initial list)."""
        self.dirty |= {str(ns["metadata"]["name"]) for ns in self.api.store.bucket("/namespaces").items(None)}
        self._sync_dirty()

    def _active(self, namespace: str) -> bool:
        ns = self.api.store.get(self.api.rt("", "v1", "namespaces"), "", namespace)
        return ns is not None and not ns["metadata"].get("deletionTimestamp")

    def sync(self, namespace: str) -> None:
        """Make what this controller keeps in ``namespace`` as it should be."""


class ServiceAccountsController(_PerNamespace):
    """The ``default`` ServiceAccount in every active namespace."""

    _watched = "/serviceaccounts"

    def _concerns(self, ev: Event) -> bool:
        return ev.type == "DELETED" and ev.obj["metadata"]["name"] == DEFAULT_NAME

    def sync(self, namespace: str) -> None:
        self.ensure_default(namespace)

    def ensure_default(self, namespace: str) -> Obj | None:
        """The namespace's ``default`` account, created now if missing (None: no active namespace)."""
        rt = self.api.rt("", "v1", "serviceaccounts")
        found = self.api.store.get(rt, namespace, DEFAULT_NAME)
        if found is not None or not self._active(namespace):
            return found
        return self.api.create(rt, namespace, {"apiVersion": "v1", "kind": "ServiceAccount",
                                               "metadata": {"name": DEFAULT_NAME}})


class RootCACertPublisher(_PerNamespace):
    """The ``kube-root-ca.crt`` ConfigMap in every active namespace."""

    _watched = "/configmaps"

    def __init__(self, api: ClusterWriter, timers: Timers, root_ca: bytes) -> None:
        super().__init__(api, timers)
        self.root_ca = root_ca.decode()

    def _concerns(self, ev: Event) -> bool:
        return ev.type != "ADDED" and ev.obj["metadata"]["name"] == ROOT_CA_CONFIGMAP

    def sync(self, namespace: str) -> None:
        if not self._active(namespace):
            return
        rt = self.api.rt("", "v1", "configmaps")
        data = {"ca.crt": self.root_ca}
        cm = self.api.store.get(rt, namespace, ROOT_CA_CONFIGMAP)
        if cm is None:
            self.api.create(rt, namespace, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {
                "name": ROOT_CA_CONFIGMAP, "annotations": {_DESCRIPTION_KEY: _DESCRIPTION}}, "data": data})
            return
        annotations = cm["metadata"].get("annotations") or {}
        if cm.get("data") == data and annotations.get(_DESCRIPTION_KEY):
            return
        if cm["metadata"].get("deletionTimestamp"):
            return
        self.api.write(rt, cm, {**cm, "data": data, "metadata": {
            **cm["metadata"], "annotations": {**annotations, _DESCRIPTION_KEY: _DESCRIPTION}}})
