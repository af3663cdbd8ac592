"""The seams between the simulated API server and its controllers, as small Protocols.

The server is one object (``server.ApiServer``), but nothing below it types against it:

- ``ClusterWriter`` is what a controller sees of the server: reads from the ``store`` (``get`` and
  ``bucket``), the resource types in the ``registry``, and the storage paths every request takes:
  ``create`` and ``delete`` (defaulted, validated, as a client's), ``write`` (an object in place of its
  old self, the next resourceVersion, MODIFIED) and ``remove`` (DELETED). Controllers write through
  these, so their writes reach watchers as any client's do.
- ``ControllerHooks`` is what the request handlers and the registries tell the controllers, where
  kube-apiserver's behaviour depends on a component beside it: the kubelet holds a deleted pod until
  its containers stop and starts a bound one, the namespace controller empties a Terminating
  namespace, the garbage collector owns the Foreground/Orphan finalizers, the disruption controller
  recounts budgets, which ``pods/eviction`` asks (``registry/core/eviction.py``), the ServiceAccounts
  controller makes a namespace's ``default`` account, which ServiceAccount admission waits for.
- ``Writer`` is who writes, read from a request: its field manager and options.

Read next: ``registry`` (the kinds' strategies), then ``handlers`` (the verbs), then ``controllers``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceRegistry, ResourceType
    from scheduler.simulator.store import Store

__all__ = ["FOREGROUND_FINALIZER", "ORPHAN_FINALIZER", "ClusterWriter", "ControllerHooks", "Writer"]

Obj = dict[str, Any]
Entries = list[Obj]          # metadata.managedFields

# metav1.FinalizerDeleteDependents and metav1.FinalizerOrphanDependents: the garbage collector's.
FOREGROUND_FINALIZER, ORPHAN_FINALIZER = "foregroundDeletion", "orphan"


@dataclass(frozen=True, slots=True)
class Writer:
    """Who writes, from the request: the field manager (``fieldManager``, else the User-Agent's product, as
    ``managerOrUserAgent``), the subresource, ``fieldValidation=Strict`` and ``force``."""
    manager: str
    sub: str = ""
    strict: bool = False
    force: bool = False
    requested_manager: bool = True


class ClusterWriter(Protocol):
    """The server as a controller sees it: reads from the store, writes through the storage paths."""

    @property
    def store(self) -> Store: ...
    @property
    def registry(self) -> ResourceRegistry: ...
    @property
    def feature_gates(self) -> Mapping[str, bool]: ...
    def rt(self, group: str, version: str, plural: str) -> ResourceType: ...
    def create(self, rt: ResourceType, namespace: str, body: Any, *, dry: bool = False, strict: bool = False,
               keep_status: bool = False, fresh: bool = False, writer: Writer | None = None,
               managed_fields: Entries | None = None) -> Obj: ...
    def write(self, rt: ResourceType, old: Obj, new: Obj) -> Obj: ...
    def remove(self, rt: ResourceType, old: Obj) -> None: ...
    def delete(self, rt: ResourceType, namespace: str, name: str, options: Any, *,
               dry: bool = False) -> tuple[int, Obj]: ...


class KubeletHooks(Protocol):
    def register(self, node: Obj) -> None: ...
    def pod_bound(self, namespace: str, name: str, uid: str) -> None: ...
    def terminates(self, pod: Obj, grace: Any) -> bool: ...
    def awaits(self, pod: Obj) -> bool: ...
    def pod_deleting(self, namespace: str, name: str, uid: str, grace: Any) -> None: ...
    def pod_resized(self, namespace: str, name: str, uid: str) -> None: ...


class NamespaceHooks(Protocol):
    def namespace_deleting(self, name: str) -> None: ...


class ServiceAccountHooks(Protocol):
    def ensure_default(self, namespace: str) -> Obj | None: ...


class KubernetesServiceHooks(Protocol):
    def advertise(self, host: str, port: int) -> None: ...


class DisruptionHooks(Protocol):
    def mark(self, namespace: str) -> None: ...
    def healthy(self, pod: Obj) -> bool: ...
    def numbers(self, pdb: Obj) -> tuple[int, int, int, int]: ...


class GarbageCollectorHooks(Protocol):
    @property
    def dependents(self) -> dict[str, set[tuple[str, str, str]]]: ...


class ControllerHooks(Protocol):
    """What the API side tells the controllers (``controllers.Controllers`` provides it)."""

    @property
    def kubelet(self) -> KubeletHooks: ...
    @property
    def namespaces(self) -> NamespaceHooks: ...
    @property
    def disruption(self) -> DisruptionHooks: ...
    @property
    def gc(self) -> GarbageCollectorHooks: ...
    @property
    def serviceaccounts(self) -> ServiceAccountHooks: ...
    @property
    def kubernetes_service(self) -> KubernetesServiceHooks: ...
    def start(self) -> None: ...
    def stop(self) -> None: ...


