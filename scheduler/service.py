"""``SchedulerService``: the scheduler as the operator runs it, with no Kopf and no HTTP in it.

The operator's Kopf handlers are thin: each calls one method here with the raw object it received.

::

    on_profile(name, spec) ─► parse ─► compile ─► ProfileMap.set (atomic swap) ─► ProfileStatus
                              (refused, the last good one serving: a name an older CR holds, or a
                               QueueSort other than the other profiles')
    on_pod(type, body)      ─► assigned?  yes ─► cache.add/update/remove ─► queue.move_all (AssignedPod*)
                                          no  ─► profile for schedulerName? queue.add/update/delete
                                                                            else parked until one exists
    on_node(type, body)     ─► cache.add/update/remove ─► queue.move_all (NodeAdd, UpdateNodeLabel, …)
    on_pdb(type, body)      ─► the PodDisruptionBudgets preemption reads
    on_dra_object(kind, type, body)
                            ─► DraStore (DeviceClass, ResourceClaim, ResourceClaimTemplate,
                               ResourceSlice) ─► queue.move_all with old/new (DynamicResources' hints)
      (these and the other low-rate kinds' handlers are ``object_handlers.ObjectHandlers``, mixed in)
    run_worker(stop)        ─► pop ─► Scheduler.schedule_one (sync) ─► finish (async task: Binding, Events)

HTTP extenders (a profile's ``spec.extenders``) are built by the ``extender_factory`` the edge
passes in, over ``bodies``: the pod and node objects as served, kept only while a profile has
extenders (``framework/extender.py``).

The worker runs on its own event loop in its own thread (``scheduler/app/runtime.py``), so a long
scheduling cycle never delays Kopf's watch processing and the binding cycles of earlier pods run while
the next pod is scheduled. Cache and queue are lock-protected; the profile map is swapped in one
assignment; so handler threads and the worker never see half an update.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Coroutine, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from scheduler import features
from scheduler.cache import Cache
from scheduler.cache.dra import DraStore
from scheduler.cache.podgroups import PodGroupStore
from scheduler.cache.selector_owners import SelectorOwners
from scheduler.cache.volumes import VolumeStore
from scheduler.client import SchedulerClient
from scheduler.cycle import Binding, Failure, GroupOutcome, Outcome, Scheduler
from scheduler.deadline import Deadline
from scheduler.errors import ProfileError
from scheduler.framework.decision import DEFAULT_CAPACITY, DEFAULT_TOP_NODES, DecisionStore
from scheduler.framework.extender import Extender, ObjectBodies, ObjectSource
from scheduler.framework.handle import Handle
from scheduler.framework.runtime import Framework
from scheduler.framework.types import ClusterEvent, QueuedPodInfo
from scheduler.framework.waiting_pods import WaitingPods
from scheduler.metrics import Metrics
from scheduler.model import Node, Pod, PodDisruptionBudget, parse_node
from scheduler.model.podparser import PodParser
from scheduler.model.podresources import RequestOptions
from scheduler.object_handlers import ObjectHandlers, _serialized
from scheduler.plugins.registry import Registry
from scheduler.podgroup_cycle import PodGroupCycle
from scheduler.profiles import ProfileMap, compile_profile, parse_spec
from scheduler.profiles.models import ExtenderConfig
from scheduler.profiles.profile_map import ClaimChange
from scheduler.profiles.shadows import Shadows
from scheduler.queue import SchedulingQueue

__all__ = ["ExtenderFactory", "ProfileStatus", "SchedulerService", "profile_status_body"]

log = logging.getLogger("kopf_scheduler")
ASSUMED_CLEANUP_PERIOD = 1.0
YIELD_EVERY = 16
CONFLICT_REASON = "SchedulerNameConflict"
# How long a binding cycle (PreBind, Bind) may take beyond its Permit wait before it is abandoned
# and the pod requeued: twice the API client's request timeout, so one slow retry still fits.
BINDING_TIMEOUT = 60.0
# How long a stopping worker waits for its in-flight binding cycles before it cancels them (each
# then unreserves and forgets its pod, left for the next leader): a graceful stop's bound, well
# inside a pod's default 30 s termination grace period, and longer than a binding takes.
DRAIN_TIMEOUT = 5.0
# Binding cycles that only talk to the API (no Permit wait, no PreBind wait budget) may be in flight
# at once before the worker waits for one to finish: back-pressure for when the API, not the cycle,
# is the bottleneck. Without it, end to end the worker schedules faster than the binds complete, the
# backlog grows for the whole run, and each pod's attempt (scheduling through binding) waits behind
# it: SchedulingBasic e2e's attempt P50 went from 0.06 to 0.44 s, P99 from 0.24 to 1-2 s. Cycles
# that may wait on purpose (a provisioner, a Permit) take no slot, so pods parked in PreBind never
# hold up the others' scheduling, as upstream's (uncapped) binding goroutines do not.
MAX_BINDING_API_IN_FLIGHT = 256
# Builds an HTTP extender (the edge's) from its config, reading the objects it sends from the source.
ExtenderFactory = Callable[[ExtenderConfig, ObjectSource], Extender]


@dataclass
class ProfileStatus:
    """What a SchedulingProfile's ``status`` says after a create or an edit."""

    accepted: bool
    message: str
    scheduler_name: str = ""
    plugins: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    percentage_of_nodes_to_score: int | None = None
    reason: str = ""        # the condition's reason when not the default (Compiled or Invalid)
    shadow_of: str = ""     # a shadow profile: the live schedulerName it follows

    def condition(self, generation: int | None) -> dict[str, Any]:
        return {"type": "Accepted", "status": "True" if self.accepted else "False",
                "reason": self.reason or ("Compiled" if self.accepted else "Invalid"), "message": self.message,
                "observedGeneration": generation,
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def profile_status_body(st: ProfileStatus, generation: int | None) -> dict[str, Any]:
    """The SchedulingProfile ``status`` for a compile outcome (a rejected edit keeps the last good
    plugins: only the condition and observedGeneration change). The runtime writes it when it gains
    the lease, and after each profile event (``app/profile_status.py``)."""
    body: dict[str, Any] = {"conditions": [st.condition(generation)], "observedGeneration": generation}
    if st.accepted:
        # shadowOf null removes it from a profile that stopped being a shadow (a merge patch).
        body.update(schedulerName=st.scheduler_name, plugins=st.plugins,
                    percentageOfNodesToScore=st.percentage_of_nodes_to_score, shadowOf=st.shadow_of or None)
    return body


def node_change(old: Node | None, new: Node) -> frozenset[str]:
    """Upstream's node update events (``nodeSchedulingPropertiesChange``)."""
    if old is None:
        return frozenset({"Add"})
    out = set()
    if old.labels != new.labels:
        out.add("UpdateNodeLabel")
    if old.taints != new.taints or old.unschedulable != new.unschedulable:
        out.add("UpdateNodeTaint")
    if old.allocatable != new.allocatable:
        out.add("UpdateNodeAllocatable")
    if old.declared_features != new.declared_features:
        out.add("UpdateNodeDeclaredFeature")
    return frozenset(out)


class SchedulerService(ObjectHandlers):
    """The scheduler as the operator runs it (upstream's ``Scheduler`` with its informer handlers):
    profile, pod, node, PDB and namespace events in; the worker (``run_worker``) scheduling pods out."""

    def __init__(self, client: SchedulerClient, *, registry: Registry | None = None, metrics: Metrics | None = None,
                 seed: int | None = None, default_selector: Callable[[Pod], Any] | None = None,
                 binding_timeout: float = BINDING_TIMEOUT,
                 decision_records: int = DEFAULT_CAPACITY, decision_top_nodes: int = DEFAULT_TOP_NODES,
                 extender_factory: ExtenderFactory | None = None,
                 feature_gates: Mapping[str, bool] | None = None) -> None:
        self.registry = registry or Registry()
        # ``run --feature-gates`` (``scheduler/features.py``): upstream's defaults, overridden.
        self.feature_gates = features.feature_gates(feature_gates)
        # PodLevelResources and in-place resize shape every pod's requests (``model.podresources``).
        self.request_options = RequestOptions(
            pod_level_resources=features.enabled(self.feature_gates, "PodLevelResources"),
            use_status_resources=features.enabled(self.feature_gates, "InPlacePodVerticalScaling"),
            pod_level_resize=features.enabled(self.feature_gates, "InPlacePodLevelResourcesVerticalScaling"))
        self.extender_factory = extender_factory
        # Pod events parsed with a memory of each pod's last parse: the Binding's and the kubelet's
        # status-only updates reuse it (``model.podparser``; forgotten on DELETED).
        self.pod_parser = PodParser()
        self.bodies = ObjectBodies()
        self._extender_crs: set[str] = set()       # CRs whose compiled framework calls extenders
        # The thread that runs the cycles of pods whose profile calls extenders (_schedule_off_loop);
        # started on first use.
        self._extender_cycles = ThreadPoolExecutor(max_workers=1, thread_name_prefix="extender-cycle")
        self.metrics = metrics or Metrics()
        self.client = client
        self.seed = seed
        self.profiles = ProfileMap()
        self.shadows = Shadows()
        self.cache = Cache()
        self.queue = SchedulingQueue(self.profiles.for_pod, metrics=self.metrics,
                                     pop_from_backoff=features.enabled(self.feature_gates,
                                                                       "SchedulerPopFromBackoffQ"))
        self.decisions = DecisionStore(decision_records, decision_top_nodes)
        self.scheduler = Scheduler(self.profiles, self.cache, self.queue, client, metrics=self.metrics,
                                   decisions=self.decisions, shadows=self.shadows,
                                   batching=self.feature_gates[features.OPPORTUNISTIC_BATCHING],
                                   nominate_for_expectation=features.enabled(self.feature_gates,
                                                                             "NominatedNodeNameForExpectation"))
        # Services and controllers: PodTopologySpread's default selector (upstream's DefaultSelector).
        self.selector_owners = SelectorOwners()
        if default_selector is None:
            default_selector = self.selector_owners.default_selector
        # PVs, PVCs, StorageClasses and the CSI kinds: what the volume plugins look up.
        self.volumes = VolumeStore()
        # DeviceClasses, ResourceClaims, ResourceClaimTemplates, ResourceSlices (on_dra_object).
        self.dra = DraStore()
        # DRADeviceTaintRules off: rules are kept but taint nothing (upstream's tracker is then a
        # plain slice informer).
        self.dra.apply_taint_rules = features.enabled(self.feature_gates, "DRADeviceTaintRules")
        self.dra.on_claim_change = self._assumed_claim_changed
        # PodGroups (on_pod_group; watched only with the GenericWorkload gate).
        self.pod_groups = PodGroupStore()
        # GenericWorkload: gang members are scheduled in PodGroup cycles (scheduler/podgroup_cycle.py).
        self.generic_workload = features.enabled(self.feature_gates, "GenericWorkload")
        if self.generic_workload:
            PodGroupCycle.install(self.scheduler, self.pod_groups)
            # the queue counts a gang as one entity (scheduler_queued_entities)
            self.queue.pod_group_exists = lambda ns, name: self.pod_groups.get(ns, name) is not None
            # upstream registers the PodGroup metrics only with the gate (metrics.Register)
            self.metrics.register_generic_workload()
        # Pods waiting at Permit, shared by every profile (GangScheduling allows a group's).
        self.waiting_pods = WaitingPods(self.metrics)
        self._pdbs: dict[str, PodDisruptionBudget] = {}
        self._pdb_list: tuple[PodDisruptionBudget, ...] = ()
        self._background: set[asyncio.Task[None]] = set()
        self.handle = Handle(client=client, metrics=self.metrics, default_selector=default_selector,
                             nominator=self.queue.nominator, pdbs=lambda: self._pdb_list,
                             assigned_pod=self.cache.get_pod, activate=self.queue.activate,
                             placed_version=lambda: self.cache.pods_version,
                             spawn=self._spawn, seed=seed, volumes=self.volumes,
                             dra=self.dra, pod_groups=self.pod_groups, feature_gates=self.feature_gates,
                             waiting_pods=self.waiting_pods)
        self._parked: dict[str, Pod] = {}         # unassigned pods whose schedulerName has no profile
        self._nodes: dict[str, Node] = {}
        self._gauge_keys: set[tuple[str, str]] = set()
        self._event_children: dict[str, Any] = {}
        self.synced = False
        # Leader election gates the worker and profile status writes; without it, always leading.
        # ``lease_valid`` (the edge's elector fence, when there is one) is asked at the moment of
        # each Binding and PreBind write: ``leader`` is only as fresh as the elector's last run.
        self.leader = True
        self.lease_valid: Callable[[], bool] | None = None
        self.scheduler.may_bind = self.is_leader
        self.drain_timeout = DRAIN_TIMEOUT
        self.leader_info: Callable[[], str] | None = None
        self.profile_status: dict[str, tuple[ProfileStatus, int | None]] = {}
        self.profile_uids: dict[str, str] = {}
        self._compiled: dict[str, ProfileStatus] = {}   # CR -> Accepted status of its latest spec, if it compiled
        self._profile_updates: set[str] = set()
        self.cycles = 0
        self.last_activity = time.monotonic()
        self.worker_beat = time.monotonic()
        self.binding_timeout = binding_timeout
        self._bindings: dict[asyncio.Future[None], Deadline] = {}  # in-flight binding cycle -> its deadline
        # The edge's health and readiness checks (name -> problem or None), for /healthz and /readyz.
        self.health: Callable[[], dict[str, str | None]] | None = None
        self.readiness: Callable[[], dict[str, str | None]] | None = None

    # ---- profiles -------------------------------------------------------------------------------
    def on_profile(self, cr_name: str, spec: Mapping[str, Any],
                   meta: Mapping[str, Any] | None = None) -> ProfileStatus:
        """Validate and compile a SchedulingProfile; swap it in on success, keep the old one on failure.

        ``meta`` is the CR's metadata: its ``creationTimestamp`` ranks it among the CRs claiming one
        schedulerName (``ProfileMap``), its ``generation`` goes in ``profile_status``. The statuses of
        *other* CRs this changes (a name won or lost) are updated in ``profile_status`` and queued
        for ``take_profile_updates``.
        """
        meta = meta or {}
        if meta.get("uid"):
            self.profile_uids[cr_name] = str(meta["uid"])
        try:
            parsed = parse_spec(spec)
            # A shadow's cycles must not count in the live profiles' metrics (it may share the name).
            factory = self.extender_factory
            fwk = compile_profile(parsed, registry=self.registry, handle=self.handle,
                                  metrics=None if parsed.shadow_of else self.metrics, seed=self.seed,
                                  extender_factory=None if factory is None else (
                                      lambda cfg: factory(cfg, self.bodies)))
        except ProfileError as e:
            if self.shadows.get(cr_name) is None:
                self._compiled.pop(cr_name, None)
            return self._profile_result(cr_name, meta, ProfileStatus(False, str(e)))
        self._uses_extenders(cr_name, bool(fwk.extenders))
        name = fwk.profile_name
        generation = meta.get("generation")
        fwk.generation = int(generation) if isinstance(generation, int) else None
        if parsed.shadow_of:
            return self._shadow_profile(cr_name, meta, fwk, parsed.shadow_of, parsed.percentage_of_nodes_to_score)
        if self.shadows.remove(cr_name):
            log.info("profile %s is no longer a shadow", cr_name)
        change = self.profiles.set(cr_name, fwk, created=str(meta.get("creationTimestamp") or ""))
        if change.queue_sort_conflict:
            self._compiled.pop(cr_name, None)
            return self._profile_result(cr_name, meta, ProfileStatus(
                False, f"spec.plugins.queueSort: {change.queue_sort_conflict}"))
        if change.refused_by is not None:
            self._compiled.pop(cr_name, None)
            return self._profile_result(cr_name, meta, ProfileStatus(
                False, f"spec.schedulerName: schedulerName {name!r} is already served by SchedulingProfile "
                       f"{change.refused_by!r}, which is older", reason=CONFLICT_REASON))
        self._compiled[cr_name] = ProfileStatus(True, f"profile compiled: schedulerName {name}", name,
                                                fwk.effective_plugins(), parsed.percentage_of_nodes_to_score)
        self._apply_claim_change(change)
        st = self._standing_status(cr_name)
        assert st is not None
        if st.accepted:
            log.info("profile %s accepted: schedulerName=%s", cr_name, name)
        return self._profile_result(cr_name, meta, st)

    def _shadow_profile(self, cr_name: str, meta: Mapping[str, Any], fwk: Framework, shadow_of: str,
                        percentage: int | None) -> ProfileStatus:
        """Make the CR a shadow of ``shadow_of`` (``profiles/shadows.py``): it releases any
        schedulerName it served (the next claimant takes over) and binds nothing."""
        if self.profiles.claim(cr_name) is not None:
            self._apply_claim_change(self.profiles.remove(cr_name))
        self.shadows.set(cr_name, shadow_of, fwk)
        serving = self.profiles.owner_of(shadow_of)
        st = ProfileStatus(True, f"shadow profile compiled: decides alongside schedulerName {shadow_of} "
                                 f"({'served by SchedulingProfile ' + repr(serving) if serving else 'not served now'})"
                                 f" and binds nothing", fwk.profile_name, fwk.effective_plugins(), percentage,
                           reason="Shadow", shadow_of=shadow_of)
        self._compiled[cr_name] = st
        log.info("profile %s accepted as a shadow of schedulerName %s", cr_name, shadow_of)
        return self._profile_result(cr_name, meta, st)

    def take_shadow_updates(self) -> dict[str, dict[str, Any] | None]:
        """Each shadow CR's ``status.shadow`` that changed since the last call (None: no longer a shadow)."""
        return self.shadows.take_updates()

    def remove_profile(self, cr_name: str) -> None:
        """Stop serving the profile; the next CR claiming its schedulerName (oldest first) takes
        it over, else its pending pods are parked, untouched."""
        self.shadows.remove(cr_name)
        self._uses_extenders(cr_name, False)
        claim = self.profiles.claim(cr_name)
        change = self.profiles.remove(cr_name)
        self._compiled.pop(cr_name, None)
        self.profile_status.pop(cr_name, None)
        self.profile_uids.pop(cr_name, None)
        self._profile_updates.discard(cr_name)
        self._apply_claim_change(change)
        if claim is not None:
            successor = self.profiles.owner_of(claim.scheduler_name)
            log.info("profile %s deleted: schedulerName %s is %s", cr_name, claim.scheduler_name,
                     f"now served by {successor}" if successor else "no longer scheduled")

    def _uses_extenders(self, cr_name: str, uses: bool) -> None:
        """Keep the objects' bodies while some CR's framework calls extenders. (A refused edit
        keeps the last good framework, and its extenders, serving: only a compiled one counts.)"""
        if uses:
            self._extender_crs.add(cr_name)
        else:
            self._extender_crs.discard(cr_name)
        if self.bodies.enabled != bool(self._extender_crs):
            self.bodies.enable(bool(self._extender_crs))
            log.info("%s the API objects for HTTP extenders", "keeping" if self._extender_crs else "no longer keeping")

    def take_profile_updates(self) -> dict[str, tuple[ProfileStatus, int | None]]:
        """The statuses of CRs that changed because of *another* CR's event, since the last call."""
        names, self._profile_updates = self._profile_updates, set()
        return {n: self.profile_status[n] for n in sorted(names) if n in self.profile_status}

    def _profile_result(self, cr_name: str, meta: Mapping[str, Any], st: ProfileStatus) -> ProfileStatus:
        self.metrics.profile_reloads.labels(cr_name, "accepted" if st.accepted else "rejected").inc()
        self.profile_status[cr_name] = (st, meta.get("generation"))
        self._profile_updates.discard(cr_name)
        return st

    def _standing_status(self, cr_name: str) -> ProfileStatus | None:
        """The status of a CR whose latest spec compiled: Accepted when it serves its schedulerName,
        else who holds the name; None for a CR whose latest spec did not compile."""
        compiled = self._compiled.get(cr_name)
        if compiled is None:
            return None
        holder = self.profiles.owner_of(compiled.scheduler_name)
        if holder == cr_name:
            return compiled
        return ProfileStatus(False, f"spec.schedulerName: schedulerName {compiled.scheduler_name!r} is already "
                                    f"served by SchedulingProfile {holder!r}, which is older; this profile takes "
                                    f"over if that one is deleted or renamed", reason=CONFLICT_REASON)

    def _apply_claim_change(self, change: ClaimChange) -> None:
        served = self.profiles.current

        def named(name: str) -> Callable[[Pod], bool]:
            return lambda p: p.scheduler_name == name

        for name in change.names:
            if name in served:
                # Pods that waited for this schedulerName join the queue; pods the old framework
                # left unschedulable are re-evaluated under the new one.
                for uid, pod in list(self._parked.items()):
                    if pod.scheduler_name == name:
                        del self._parked[uid]
                        self.queue.add(pod)
                self.queue.move_all_to_active_or_backoff(
                    ClusterEvent("*", frozenset({"*"}), label="ProfileChange"),
                    pre_check=named(name))
            else:
                for info in self.queue.pending():
                    if info.pod.scheduler_name == name:
                        self.queue.delete(info.pod)
                        self._parked[info.uid] = info.pod
        for other in change.others:
            st = self._standing_status(other)
            if st is not None:
                self.profile_status[other] = (st, self.profile_status.get(other, (st, None))[1])
                self._profile_updates.add(other)

    # ---- cluster objects ------------------------------------------------------------------------
    def _handled(self, label: str, t0: float) -> None:
        """``scheduler_event_handling_duration_seconds{event}``, with upstream's event labels."""
        child = self._event_children.get(label)
        if child is None:
            child = self._event_children[label] = self.metrics.event_handling_duration.labels(label)
        child.observe(time.perf_counter() - t0)

    @_serialized
    def on_pod(self, event: str, body: Mapping[str, Any]) -> None:
        """A pod watch event (ADDED, MODIFIED, DELETED); raises ParseError for a pod we cannot read."""
        t0 = time.perf_counter()
        self._handled(self._on_pod(event, body), t0)

    def _on_pod(self, event: str, body: Mapping[str, Any]) -> str:
        """Handle it; the event's label as upstream's handlers name it (``AssignedPodAdd``,
        ``UnschedulablePodUpdate``, ...). As upstream's ``eventhandlers.go``, an assigned pod goes
        to the cache and an unassigned one to the queue."""
        self.last_activity = time.monotonic()
        if event == "DELETED":
            return self._on_pod_deleted(body)
        pod = self.pod_parser.parse(body, self.request_options)
        # The pending pod as served, for the extenders its filter, prioritize and bind calls send.
        self.bodies.set_pod(pod.uid, None if pod.node_name or pod.phase in ("Succeeded", "Failed") else body)
        if pod.scheduling_group:
            # Counted in its PodGroup first, so its own PreEnqueue sees it (AllPodsCount).
            if pod.phase in ("Succeeded", "Failed"):
                self.pod_groups.untrack(pod.uid)
            else:
                self.pod_groups.track(pod)
        if pod.node_name:
            return self._on_assigned_pod(pod)
        return self._on_unassigned_pod(pod)

    def _on_pod_deleted(self, body: Mapping[str, Any]) -> str:
        meta = body.get("metadata") or {}
        uid = str(meta.get("uid", ""))
        self.decisions.forget(f"{meta.get('namespace', '')}/{meta.get('name', '')}")
        self.bodies.set_pod(uid, None)
        self.pod_parser.forget(uid)
        self._parked.pop(uid, None)
        self.pod_groups.untrack(uid)
        old = self.cache.get_pod(uid)
        if old is not None:
            self.cache.remove_pod(old)
            self.queue.move_all_to_active_or_backoff(ClusterEvent("Pod", frozenset({"Delete"}), old=old,
                                                                   label="AssignedPodDelete"))
        self.queue.delete(uid)
        return "AssignedPodDelete" if old is not None else "UnschedulablePodDelete"

    def _on_assigned_pod(self, pod: Pod) -> str:
        self._parked.pop(pod.uid, None)
        self.queue.delete(pod.uid)             # bound (by us or anyone): no longer pending
        old = self.cache.get_pod(pod.uid)
        if pod.phase in ("Succeeded", "Failed"):
            if old is not None:
                self.cache.remove_pod(old)
                self.queue.move_all_to_active_or_backoff(ClusterEvent("Pod", frozenset({"Delete"}), old=old,
                                                                       label="AssignedPodDelete"))
            return "AssignedPodUpdate"
        confirming = old is not None and self.cache.is_assumed(pod.uid)
        self.cache.add_pod(pod)
        if old is None or not confirming:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(
                "Pod", frozenset({"Add"} if old is None else {"Update"}), old=old, new=pod,
                label="AssignedPodAdd" if old is None else "AssignedPodUpdate"))
        return "AssignedPodAdd" if old is None else "AssignedPodUpdate"

    def _on_unassigned_pod(self, pod: Pod) -> str:
        label = "UnschedulablePodUpdate" if pod.uid in self.queue or pod.uid in self._parked \
            else "UnschedulablePodAdd"
        cached = self.cache.get_pod(pod.uid)
        if cached is not None and not self.cache.is_assumed(pod.uid):
            self.cache.remove_pod(cached)         # it was assigned and is not any more (a re-created pod)
        if pod.phase in ("Succeeded", "Failed"):
            self.queue.delete(pod.uid)
            return label
        if self.profiles.for_pod(pod) is None:
            self._parked[pod.uid] = pod
            return label
        if self.cache.is_assumed(pod.uid):
            return label                            # our own binding is in flight; the watch will confirm it
        self.queue.update(pod)
        if label == "UnschedulablePodAdd" and pod.scheduling_group and self.generic_workload:
            # A new member may complete its gang's quorum (GangScheduling's hint); upstream's
            # queue reports UnscheduledPod/Add for every added pending pod, no plugin but
            # GangScheduling registers it here.
            self.queue.move_all_to_active_or_backoff(ClusterEvent("UnscheduledPod", frozenset({"Add"}), new=pod,
                                                                  label="UnscheduledPodAdd"))
        return label

    @_serialized
    def on_node(self, event: str, body: Mapping[str, Any]) -> None:
        t0 = time.perf_counter()
        self._handled(self._on_node(event, body), t0)

    def _on_node(self, event: str, body: Mapping[str, Any]) -> str:
        self.last_activity = time.monotonic()
        name = str((body.get("metadata") or {}).get("name", ""))
        if event == "DELETED":
            self._nodes.pop(name, None)
            self.bodies.set_node(name, None)
            self.cache.remove_node(name)
            self.queue.move_all_to_active_or_backoff(ClusterEvent("Node", frozenset({"Delete"}), label="NodeDelete"))
            return "NodeDelete"
        node = parse_node(body)
        self.bodies.set_node(name, body)
        old = self._nodes.get(name)
        self._nodes[name] = node
        self.cache.add_node(node)
        actions = node_change(old, node)
        if actions:
            self.queue.move_all_to_active_or_backoff(ClusterEvent(
                "Node", actions, old=old, new=node, label="NodeAdd" if old is None else "NodeUpdate"))
        return "NodeAdd" if old is None else "NodeUpdate"

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        """Run API work off the cycle (async preemption); ``run_worker`` waits for it on stop."""
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def refresh_gauges(self) -> None:
        """The gauges a scrape reads from the current state: unschedulable pods by plugin, the
        cache's size (``scheduler_scheduler_cache_size{type}``: nodes, pods, assumed_pods) and the
        pods in flight (``scheduler_inflight_events{event="PodPopped"}``: kopf-scheduler requeues
        by the move-request cycle, not by recording each event during a pod's attempt, so no
        other event is ever in flight)."""
        self.refresh_unschedulable_gauge()
        size = self.metrics.cache_size
        with self.cache.lock:
            size.labels("nodes").set(len(self._nodes))
            size.labels("pods").set(self.cache.pod_count())
            size.labels("assumed_pods").set(self.cache.assumed_count())
        self.metrics.inflight_events.labels("PodPopped").set(self.queue.in_flight_count())

    def refresh_unschedulable_gauge(self) -> None:
        """``scheduler_unschedulable_pods{plugin,profile}``: each unschedulable pod counts once for
        every plugin that rejected it, as upstream's gauge counts."""
        counts: dict[tuple[str, str], int] = {}
        for info in self.queue.pending():
            if self.queue.where(info.uid) != "unschedulable" or info.gating_plugin:
                continue
            for plugin in info.unschedulable_plugins | info.pending_plugins:
                key = (plugin, info.pod.scheduler_name)
                counts[key] = counts.get(key, 0) + 1
        gauge = self.metrics.unschedulable_pods
        for key in self._gauge_keys - counts.keys():
            gauge.labels(*key).set(0)
        for key, n in counts.items():
            gauge.labels(*key).set(n)
        self._gauge_keys = set(counts)

    def known_pod_uids(self) -> set[str]:
        """Every pod the service holds: assigned (cache), pending (queue) or parked."""
        with self.cache.lock:
            uids = {p.uid for _, p in self.cache.iter_pods()}
        uids.update(i.uid for i in self.queue.pending())
        uids.update(self._parked)
        return uids

    def is_leader(self) -> bool:
        """This replica may schedule and bind now: it leads, and (with leader election) its lease
        cannot have been taken by another replica yet (``lease_valid``)."""
        return self.leader and (self.lease_valid is None or self.lease_valid())

    @property
    def parked(self) -> Mapping[str, Pod]:
        return self._parked

    def _binding_done(self, task: asyncio.Future[None]) -> None:
        self._bindings.pop(task, None)

    def binding_overdue(self) -> float:
        """Seconds the most overdue in-flight binding cycle is past its deadline (0 with none): the
        binding watchdog. Its deadline cancels it, so anything over a moment means the loop is stuck."""
        if not self._bindings:
            return 0.0
        return max(0.0, time.monotonic() - min(d.due for d in self._bindings.values()))

    # ---- the worker -----------------------------------------------------------------------------
    def _calls_extenders(self, pod: Pod) -> bool:
        """Whether the pod's cycle may call an HTTP extender (its profile's, or a shadow's of it)."""
        if not self._extender_crs:
            return False
        fwk = self.profiles.for_pod(pod)
        return fwk is not None and (bool(fwk.extenders) or any(
            s.framework.extenders for s in self.shadows.for_live(fwk.profile_name)))

    async def _schedule_off_loop(self, info: QueuedPodInfo) -> Outcome:
        """``schedule_one`` on the extender-cycle thread, this loop running meanwhile.

        An extender's call blocks for up to its ``httpTimeout``, and this loop also runs the
        informers, the binding cycles, ``/healthz`` and the Lease's renewal, none of which may wait
        on it. The cycle lets go of the cache's lock while a call is out, so they need not wait
        for the lock either. Cycles stay one at a time (the worker awaits this one), as upstream's
        do; the heartbeat advances while it waits, since a cycle bounded by its extenders'
        timeouts is not a stall."""
        loop = asyncio.get_running_loop()
        cycle = loop.run_in_executor(self._extender_cycles, self.scheduler.schedule_one, info)
        while True:
            done, _ = await asyncio.wait({cycle}, timeout=1.0)
            self.worker_beat = time.monotonic()
            if done:
                return cycle.result()

    async def run_worker(self, stop: asyncio.Event) -> None:
        """Pop, schedule, and start each binding cycle as a task; until ``stop`` is set.

        Each binding cycle has a deadline (``binding_timeout`` plus the pod's Permit wait plus the
        PreBind plugins' wait budget for it, ``Framework.pre_bind_budget``): one that
        has not finished by then is cancelled, which unreserves, forgets and requeues the pod, so no
        pod stays assumed for ever whatever the network does. Time its requests wait for the API
        client's rate-limit tokens does not count (``scheduler/deadline.py``): a burst of pods queued
        behind the client's QPS binds on its first attempt, as upstream's binding goroutines (no
        whole-cycle deadline, each request waiting in client-go's limiter) do, while a cycle hung
        anywhere else is still cut. A replica that stops leading cancels
        its bindings at once instead of waiting out their requests. The binding tasks
        belong to the service, not to this call, so a worker restarted after a crash (the runtime
        supervises it) sees the bindings its predecessor started. ``worker_beat`` is the liveness
        heartbeat: it advances every iteration, idle or not.

        Binding cycles that may wait on purpose (a Permit wait, or a PreBind wait budget: a
        provisioner that never answers may hold one for ``bindTimeoutSeconds``) are not capped, as
        upstream's (one goroutine per cycle) are not, so they never stop other pods' scheduling;
        each wait is bounded by its deadline, and their number by the pods themselves (a pod in
        flight is assumed, not queued). Cycles that only talk to the API take one of
        ``MAX_BINDING_API_IN_FLIGHT`` slots until they end; with every slot taken the worker pops
        nothing until one is given back: when binds complete slower than pods are scheduled, the
        worker waits for them instead of growing a backlog that every attempt's latency includes.
        """
        loop = asyncio.get_running_loop()
        tasks = self._bindings
        api_bound = 0                       # binding cycles in flight that only talk to the API
        slot_free = asyncio.Event()
        binding = self.metrics.goroutines.labels("binding")
        last_cleanup = time.monotonic()

        def deadline_of(outcome: Any) -> float:
            if isinstance(outcome, GroupOutcome):
                return max((deadline_of(m) for m in outcome.members if isinstance(m, Binding)),
                           default=self.binding_timeout)
            if not isinstance(outcome, Binding):
                return self.binding_timeout
            # The Permit wait and the PreBind plugins' own budget (VolumeBinding's bindTimeoutSeconds
            # when it has claims to bind) come on top: the deadline guards against a hung cycle,
            # not against a wait a plugin is configured to make.
            return (self.binding_timeout + outcome.permit_wait
                    + outcome.framework.pre_bind_budget(outcome.state))

        def give_back(_: asyncio.Future[None]) -> None:
            # A done callback, not the coroutine's ``finally``: a task cancelled before it ever ran
            # (a replica that stops leading cancels them all) never enters its coroutine.
            nonlocal api_bound
            api_bound -= 1
            slot_free.set()

        def undo_if_never_ran(outcome: Any, ran: list[bool]) -> Callable[[asyncio.Future[None]], None]:
            # A task cancelled before its first turn (this replica stopped leading meanwhile) never
            # enters ``finish``, so nothing in it can undo the cycle: the pod would stay assumed, and
            # in flight in the queue, for ever. Its done callback does, as the coroutine would have.
            def done(task: asyncio.Future[None]) -> None:
                if task.cancelled() and not ran:
                    self.scheduler.abandon(outcome)
            return done

        async def finish(outcome: Any, deadline: Deadline, budget: float, ran: list[bool]) -> None:
            ran.append(True)
            binding.inc()
            try:
                await deadline.guard(self.scheduler.finish(outcome))
            except TimeoutError:    # the cycle undid itself on the cancellation
                log.warning("binding cycle of %s did not finish within %.0f s: requeued", outcome.info.key, budget)
            except asyncio.CancelledError:
                if stop.is_set() or not self.is_leader():
                    return          # abandoned on purpose; the cycle undid itself
                raise
            except Exception:  # the cycle already requeued or dropped the pod; never kill the worker
                log.exception("binding cycle of %s failed", outcome.info.key)
            finally:
                binding.dec()

        while not stop.is_set():
            self.worker_beat = time.monotonic()
            if not self.is_leader():          # standby: caches stay warm, no cycles, no bindings
                for task in list(tasks):      # a deposed leader's binds would only race the new one's
                    task.cancel()
                await asyncio.sleep(0.05)
                continue
            if time.monotonic() - last_cleanup > ASSUMED_CLEANUP_PERIOD:
                last_cleanup = time.monotonic()
                for pod in self.cache.cleanup():
                    log.warning("assumed pod %s expired: its binding was never confirmed", pod.key)
                self.refresh_unschedulable_gauge()
            if api_bound >= MAX_BINDING_API_IN_FLIGHT:
                # Wait for a binding to end before popping: meanwhile pods stay in activeQ, in
                # priority order, and the heartbeat goes on (waiting for the API is not a stall).
                slot_free.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(slot_free.wait(), 1.0)
                continue
            info = self.queue.pop(timeout=0)
            if info is None:
                info = await loop.run_in_executor(None, self.queue.pop, 0.2)
                if info is None:
                    continue
            if not self.is_leader():          # lost the lease while waiting: hand the pod back
                self.queue.done(info.uid)
                self.queue.add(info.pod)
                continue
            try:
                outcome = (await self._schedule_off_loop(info) if self._calls_extenders(info.pod)
                           else self.scheduler.schedule_one(info))
            except Exception as e:  # a bug in a plugin must cost one attempt, not the scheduler
                log.exception("scheduling cycle of %s failed", info.key)
                self.queue.requeue_after_error(info)
                try:
                    await self.client.report_failure(info.pod, "SchedulerError", f"scheduling cycle failed: {e}",
                                                     None)
                except Exception as report_error:
                    log.warning("cannot report the failed cycle of %s: %s", info.key, report_error)
                continue
            self.cycles += 1
            self.last_activity = time.monotonic()
            budget = deadline_of(outcome)
            deadline = Deadline(budget)
            ran: list[bool] = []
            task = asyncio.ensure_future(finish(outcome, deadline, budget, ran))
            tasks[task] = deadline
            task.add_done_callback(self._binding_done)
            task.add_done_callback(undo_if_never_ran(outcome, ran))
            if budget <= self.binding_timeout:    # only talks to the API: takes a slot
                api_bound += 1
                task.add_done_callback(give_back)
            if isinstance(outcome, Failure) and outcome.preparation is not None:
                # Synchronous preemption (SchedulerAsyncPreemption=false): upstream deletes the
                # victims inside the scheduling cycle, so no other pod is scheduled meanwhile.
                await asyncio.wait({task})
                continue
            # Yield every few cycles: the binding tasks, their HTTP responses and the pod informer
            # share this loop, so a bind must not wait behind hundreds of cycles (attempt latency),
            # yet a yield per cycle costs throughput (BENCHMARKS.md has both measured).
            if not isinstance(outcome, Binding) or self.cycles % YIELD_EVERY == 0:
                await asyncio.sleep(0)
        self.queue.close()
        pending = set(tasks) | self._background
        if pending:
            _, late = await asyncio.wait(pending, timeout=self.drain_timeout)
            for task in late:
                task.cancel()
