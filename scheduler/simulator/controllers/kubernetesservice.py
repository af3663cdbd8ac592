"""The ``default/kubernetes`` Service and its endpoints, as kube-apiserver's own controllers keep them
(``pkg/controlplane/controller/kubernetesservice`` and the endpoint reconciler's
``pkg/controlplane/reconcilers/endpointsadapter.go``).

The Service (labels ``provider: kubernetes``, ``component: apiserver``) has the first address of the
service range, ``10.96.0.1``, and one port ``https`` 443 targeting the port the server serves on; the
Endpoints and the EndpointSlice named ``kubernetes`` (label ``kubernetes.io/service-name``) hold
``127.0.0.1`` and that port. They are made once the server knows its port (``advertise``), made
again when deleted, and put back when changed, on a later loop turn.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.simulator.controllers.base import Controller, Timers
from scheduler.simulator.interfaces import ClusterWriter
from scheduler.simulator.registry.core.admission import SERVICE_CIDR

if TYPE_CHECKING:
    from scheduler.simulator.store import Event

__all__ = ["KubernetesService"]

Obj = dict[str, Any]
NAME, NAMESPACE = "kubernetes", "default"
_STORES = ("/services", "/endpoints", "discovery.k8s.io/endpointslices")


class KubernetesService(Controller):
    """The API server's own Service, Endpoints and EndpointSlice in ``default``."""

    def __init__(self, api: ClusterWriter, timers: Timers) -> None:
        super().__init__(api, timers)
        self.host, self.port = "127.0.0.1", 0

    def advertise(self, host: str, port: int) -> None:
        """The server serves on ``host:port`` now: make or fix the objects at once."""
        self.host, self.port = ("127.0.0.1" if host == "localhost" else host), port
        self._sync_dirty()

    def on_event(self, store: str, ev: Event) -> None:
        meta = ev.obj["metadata"]
        if self.port and store in _STORES and meta.get("name") == NAME and meta.get("namespace") == NAMESPACE \
                and ev.type != "ADDED":
            self._schedule()

    def _sync_dirty(self) -> None:
        if not self.port:
            return
        ip = str(next(SERVICE_CIDR.hosts()))
        port = {"name": "https", "port": self.port, "protocol": "TCP"}
        self._keep("", "v1", "services", {
            "metadata": {"name": NAME, "labels": {"component": "apiserver", "provider": "kubernetes"}},
            "spec": {"type": "ClusterIP", "clusterIP": ip, "sessionAffinity": "None",
                     "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": self.port}]}},
            lambda o: (o.get("spec") or {}).get("ports") == [{"name": "https", "port": 443, "protocol": "TCP",
                                                              "targetPort": self.port}])
        self._keep("", "v1", "endpoints", {
            "metadata": {"name": NAME, "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
            "subsets": [{"addresses": [{"ip": self.host}], "ports": [port]}]},
            lambda o: o.get("subsets") == [{"addresses": [{"ip": self.host}], "ports": [port]}])
        endpoints = [{"addresses": [self.host], "conditions": {"ready": True}}]
        self._keep("discovery.k8s.io", "v1", "endpointslices", {
            "metadata": {"name": NAME, "labels": {"kubernetes.io/service-name": NAME}},
            "addressType": "IPv6" if ":" in self.host else "IPv4", "endpoints": endpoints, "ports": [port]},
            lambda o: o.get("endpoints") == endpoints and o.get("ports") == [port])

    def _keep(self, group: str, version: str, plural: str, want: Obj, current: Any) -> None:
        """Create ``want`` if missing, or write its fields over a stored one that ``current`` rejects."""
        rt = self.api.rt(group, version, plural)
        found = self.api.store.get(rt, NAMESPACE, NAME)
        body = {"apiVersion": rt.api_version, "kind": rt.kind, **want}
        if found is None:
            self.api.create(rt, NAMESPACE, body)
        elif not current(found) and not found["metadata"].get("deletionTimestamp"):
            fixed = {**found, **{k: v for k, v in want.items() if k != "metadata"}}
            if plural == "services":
                fixed["spec"] = {**found.get("spec", {}), **want["spec"]}
            self.api.write(rt, found, fixed)
