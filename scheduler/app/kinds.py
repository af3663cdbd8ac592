"""The kinds the scheduler reads, and one way to feed a ``SchedulerService`` from their listings.

``watched_kinds`` is the single list: the live scheduler builds one informer per entry
(``runtime.py``), and ``explain`` lists the same entries from a cluster, or picks them out of a dump,
and feeds them through ``feed`` into a scheduler of its own. Each entry names the service's handler
its events go to (``on_node``, ``on_volume_object``, ...), so both paths parse and default every
object the same way, and a kind added here (for a new plugin's lister) reaches ``explain`` without
a second edit.

The order is the initial sync's (and a replay's): namespaces, nodes, budgets, the selector owners
(Services and the controllers PodTopologySpread's default constraints read), the storage kinds, the
DRA kinds, the SchedulingProfiles, the PodGroups (only with the GenericWorkload gate, as upstream
starts that informer only then) and last the pods, so a pod arrives after what it names.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any

from scheduler import features
from scheduler.app.informers import collection_path
from scheduler.cache.dra import KINDS as DRA_KINDS
from scheduler.cache.selector_owners import KINDS as SELECTOR_OWNER_KINDS
from scheduler.cache.volumes import KINDS as VOLUME_KINDS
from scheduler.errors import ParseError
from scheduler.profiles.crd import API_VERSION as PROFILE_API_VERSION
from scheduler.profiles.crd import KIND as PROFILE_KIND
from scheduler.profiles.crd import PLURAL
from scheduler.service import SchedulerService

__all__ = ["GENERIC_WORKLOAD", "POD_GROUPS", "POD_GROUP_API", "WatchedKind", "feed", "kind_of", "watched_kinds"]

log = logging.getLogger("kopf_scheduler")

Obj = dict[str, Any]
Handler = Callable[[str, dict[str, Any]], None]

# The PodGroup informer's kind (``scheduling.k8s.io/v1beta1``), watched with the GenericWorkload gate.
GENERIC_WORKLOAD = "GenericWorkload"
POD_GROUP_API, POD_GROUPS = ("scheduling.k8s.io", "v1beta1"), "podgroups"


@dataclass(frozen=True)
class WatchedKind:
    """One kind the service reads: where it is listed and which of the service's handlers takes it.

    ``key`` names the informer (``/readyz``'s ``informer-sync:<key>``); ``optional`` kinds may be
    unserved by a cluster (a 404 reads as an empty list); ``handler`` is None for the
    SchedulingProfiles, whose events go through a ``ProfileFollower`` (statuses, the last good spec).
    """

    key: str
    name: str
    group: str
    version: str
    plural: str
    kind: str
    optional: bool = False
    handler: Callable[[SchedulerService], Handler] | None = None

    def handler_for(self, service: SchedulerService, own: Mapping[str, Handler]) -> Handler:
        """``own[key]`` when the caller wraps this kind's handler, else the service's handler."""
        if self.key in own:
            return own[self.key]
        if self.handler is None:
            raise ValueError(f"{self.key}: the caller must give its handler")
        return self.handler(service)

    @property
    def path(self) -> str:
        return collection_path(self.group, self.version, self.plural)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _method(name: str) -> Callable[[SchedulerService], Handler]:
    def bound(service: SchedulerService) -> Handler:
        handler: Handler = getattr(service, name)
        return handler
    return bound


def _by_kind(name: str, kind: str) -> Callable[[SchedulerService], Handler]:
    def bound(service: SchedulerService) -> Handler:
        return partial(getattr(service, name), kind)
    return bound


_PROFILE_GROUP, _, _PROFILE_VERSION = PROFILE_API_VERSION.partition("/")


def watched_kinds(feature_gates: Mapping[str, bool] | None = None) -> tuple[WatchedKind, ...]:
    """Every kind the scheduler watches with these gates, in the initial sync's order."""
    pod_groups = (WatchedKind(POD_GROUPS, POD_GROUPS, *POD_GROUP_API, POD_GROUPS, "PodGroup", optional=True,
                              handler=_method("on_pod_group")),) \
        if features.enabled(feature_gates, GENERIC_WORKLOAD) else ()
    return (
        WatchedKind("namespaces", "namespace", "", "v1", "namespaces", "Namespace", handler=_method("on_namespace")),
        WatchedKind("nodes", "node", "", "v1", "nodes", "Node", handler=_method("on_node")),
        WatchedKind("poddisruptionbudgets", "poddisruptionbudgets", "policy", "v1", "poddisruptionbudgets",
                    "PodDisruptionBudget", handler=_method("on_pdb")),
        # Services and controllers: the selectors PodTopologySpread's default constraints read.
        *(WatchedKind(plural, plural, group, version, plural, kind, handler=_by_kind("on_selector_owner", kind))
          for group, version, plural, kind in SELECTOR_OWNER_KINDS),
        *(WatchedKind(plural, plural, group, version, plural, kind, optional=True,
                      handler=_by_kind("on_volume_object", kind))
          for group, version, plural, kind in VOLUME_KINDS),
        *(WatchedKind(plural, plural, group, version, plural, kind, optional=True,
                      handler=_by_kind("on_dra_object", kind))
          for group, version, plural, kind in DRA_KINDS),
        WatchedKind(PLURAL, PLURAL, _PROFILE_GROUP, _PROFILE_VERSION, PLURAL, PROFILE_KIND, optional=True),
        *pod_groups,
        WatchedKind("pods", "pod", "", "v1", "pods", "Pod", handler=_method("on_pod")),
    )


def kind_of(kinds: Iterable[WatchedKind], obj: Mapping[str, Any]) -> WatchedKind | None:
    """The watched kind of an object that carries its ``apiVersion`` and ``kind`` (a dump's item)."""
    api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
    group = api_version.rpartition("/")[0]
    for k in kinds:
        if k.kind == kind and k.group == group:
            return k
    return None


def feed(service: SchedulerService, kinds: Iterable[WatchedKind], listings: Mapping[str, Iterable[Obj]],
         handlers: Mapping[str, Handler] | None = None) -> dict[str, int]:
    """Deliver each kind's listed objects (``listings[key]``) as ADDED, in ``kinds``' order, to its
    handler (``handlers[key]`` when given, else the service's own). An object the service cannot
    read is left out, as the live scheduler leaves it out of its cache; the return value counts
    those per kind (only kinds with any)."""
    unreadable: dict[str, int] = {}
    for k in kinds:
        handle = k.handler_for(service, handlers or {})
        for obj in listings.get(k.key, ()):
            try:
                handle("ADDED", obj)
            except ParseError as e:
                unreadable[k.key] = unreadable.get(k.key, 0) + 1
                meta = obj.get("metadata") or {}
                log.info("%s %s cannot be read and is left out: %s", k.kind, meta.get("name"), e)
    return unreadable
