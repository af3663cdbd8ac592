"""DefaultPreemption: PostFilter and PreEnqueue, as upstream's ``defaultpreemption`` plugin and its
``preemption.Evaluator`` (asynchronous preemption, KEP-4832).

When no node fits a pod, PostFilter looks for a node where deleting lower-priority pods would make
room::

    eligible?  preemptionPolicy Never ─► "not eligible due to preemptionPolicy=Never."
               nominated node still has a victim terminating ─► wait for it
    potential nodes   only those the filters rejected as Unschedulable (resolvable)
    dry run           from a random offset, node by node until
                      max(numNodes × pct / 100, abs) candidates (≥ 1 without PDB violations):
                        remove every pod of strictly lower priority (a what-if on the snapshot)
                        still no fit ─► the filter's status; nothing to remove ─► "No preemption
                        victims found for incoming pod"
                        reprieve, most important first, PDB-violating pods before the others:
                        add each back and keep it if the pod still fits
    choose            fewest PDB violations, lowest highest-priority victim, smallest priority sum,
                      fewest victims, latest start among the highest-priority victims, first
    carry out         (off the cycle) clear lower-priority nominations on the node; DisruptionTarget,
                      delete and Preempted event per victim, all but the last in parallel.
                      SchedulerAsyncPreemption=false: PostFilter hands the cycle a ``prepare``
                      instead, awaited before the failure is handled (all victims at once, then
                      the nominations); its error is PostFilter's, and no PreEnqueue gating

The cycle still ends Unschedulable, with ``status.nominatedNodeName`` set; the pod counts on its
nominated node for equal or lower priority pods, and its next cycle tries that node first. While
the victims are being deleted PreEnqueue keeps the pod out of activeQ ("waiting for the preemption
for this pod to be finished"); it re-checks when a victim's deletion is seen, so the pod neither
runs a cycle that would preempt again nor waits for an event that already passed.

With ``GenericWorkload`` on (workload-aware preemption, ``podgrouppreemption.py``): a gang member's
own PostFilter refuses ("not eligible due to workload aware preemption enabled"), because its
PodGroup cycle preempts for the whole gang and hands the result to ``preempt_group``; and once
PodGroups exist, a plain pod's victims are units (``select_victim_units_on_node``): a
``disruptionMode: All`` group is removed and reprieved whole, at its PodGroup's priority.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections import OrderedDict
from collections.abc import Coroutine, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from scheduler import features
from scheduler.errors import ClientError
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis, NodeToStatus, fit_error_message
from scheduler.framework.extender import Victims, call_extenders_for_preemption
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    FilterRunner,
    PostFilterContext,
    PostFilterResult,
)
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.logonce import CauseLog, cause_of
from scheduler.model import Pod, PodDisruptionBudget
from scheduler.model.podgroup import PodGroup
from scheduler.plugins.args import DefaultPreemptionArgs
from scheduler.plugins.budgets import breaks_budget
from scheduler.plugins.podgrouppreemption import (
    GENERIC_WORKLOAD,
    NOT_ELIGIBLE_WORKLOAD,
    WAITING_GROUP,
    GroupPreemption,
    is_disruption_mode_all,
    node_victims,
    order_victims,
)

if TYPE_CHECKING:
    from scheduler.cache import Snapshot, WhatIf

__all__ = ["NAME", "Candidate", "DefaultPreemption", "filter_pods_with_pdb_violation", "importance",
           "new", "pick_one_node_for_preemption"]

NAME = "DefaultPreemption"
ASYNC_PREEMPTION_GATE = "SchedulerAsyncPreemption"
NOT_ELIGIBLE_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NO_VICTIMS = "No preemption victims found for incoming pod"
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
WAITING = "waiting for the preemption for this pod to be finished"
# actuatePodGroupPreemption's candidate: a PodGroup's victims may be on any node ("... on node cluster").
GROUP_CANDIDATE = "cluster"
MAX_INT32 = 2**31 - 1
MAX_TRACKED = 10_000

log = logging.getLogger("kopf_scheduler.preemption")
_api_log = CauseLog(log)


@dataclass(frozen=True, slots=True)
class Candidate:
    node: str
    victims: tuple[Pod, ...]      # most important first
    num_pdb_violations: int = 0


def _start(p: Pod) -> str:
    # A pod that has not started counts as starting now: later than any recorded time.
    return p.start_time or "~"


def importance(p: Pod) -> tuple[int, str, str]:
    """Sort key, most important first: higher priority, then earlier start (``MoreImportantPod``).
    Upstream leaves equal pods in the node's pod order; the uid makes that order deterministic here,
    so which of two equal pods is reprieved never depends on how the node's pods were last moved."""
    return -p.priority, _start(p), p.uid


def filter_pods_with_pdb_violation(pods: Sequence[Pod], pdbs: Sequence[PodDisruptionBudget]
                                   ) -> tuple[list[Pod], list[Pod]]:
    """Split ``pods`` (order kept) into those whose eviction would break a budget, and the rest."""
    allowed = [b.disruptions_allowed for b in pdbs]
    violating: list[Pod] = []
    fine: list[Pod] = []
    for p in pods:
        (violating if breaks_budget(p, pdbs, allowed) else fine).append(p)
    return violating, fine



def pick_one_node_for_preemption(candidates: Sequence[Candidate]) -> Candidate | None:
    """Upstream's ``pickOneNodeForPreemption``: each criterion keeps the best-scoring candidates;
    the first one left wins."""
    if not candidates:
        return None

    def earliest_start_of_highest(c: Candidate) -> str:
        top = c.victims[0].priority
        return min(_start(v) for v in c.victims if v.priority == top)

    criteria: tuple[Any, ...] = (
        lambda c: -c.num_pdb_violations,
        lambda c: -c.victims[0].priority,
        lambda c: -sum(v.priority + MAX_INT32 + 1 for v in c.victims),
        lambda c: -len(c.victims),
        earliest_start_of_highest,          # later is better
    )
    left = list(candidates)
    for score in criteria:
        best = max(score(c) for c in left)
        left = [c for c in left if score(c) == best]
        if len(left) == 1:
            break
    return left[0]


def _reprieve_order(potential: list[Pod], pdbs: Sequence[PodDisruptionBudget]) -> tuple[list[Pod], int]:
    """A row's reprieve order (most important first, budget-violating pods before the others) and
    how many violating pods lead it."""
    potential.sort(key=importance)
    if not pdbs:
        return potential, 0
    bad, fine = filter_pods_with_pdb_violation(potential, pdbs)
    return bad + fine, len(bad)


def _reprieve_rows(state: CycleState, pod: Pod, snap: Snapshot, fwk: FilterRunner, w: WhatIf, alive: list[int],
                   orders: list[list[Pod]], violating: list[int]) -> tuple[list[list[Pod]], list[int]]:
    """Upstream's reprieve loop for every row at once: step by step, each row's next pod is added
    back, one batched Filter runs, and the rows that fail take it out again as a victim. Per row:
    its victims, and how many of them violate a budget."""
    victims: list[list[Pod]] = [[] for _ in alive]
    violations = [0] * len(alive)
    active = list(range(len(alive)))
    step = 0
    while True:
        active = [k for k in active if step < len(orders[k])]
        if not active:
            break
        now = [alive[k] for k in active]
        back = [(orders[k][step],) for k in active]
        w.move_rows(now, back, +1)
        # only which rows pass: a failed reprieve's status is never shown
        ok, _ = fwk.run_filter_on_rows(state, pod, snap, np.array(now, np.int64), statuses=False)
        lost = np.flatnonzero(~ok).tolist()
        if lost:
            w.move_rows([now[j] for j in lost], [back[j] for j in lost], -1)
            for j in lost:
                k = active[j]
                victims[k].append(back[j][0])
                if step < violating[k]:
                    violations[k] += 1
        step += 1
    return victims, violations


class DefaultPreemption:
    """Upstream's ``defaultpreemption.DefaultPreemption``: PostFilter, PreEnqueue, EnqueueExtensions."""

    name = NAME

    def __init__(self, args: DefaultPreemptionArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        self.rng = random.Random(handle.seed)
        # Evaluate node-local dry runs in batches (the outcome is the same; tests turn it off to compare).
        self.batch_dry_run = True
        self._lock = threading.Lock()
        # SchedulerAsyncPreemption (beta, on): off, the victims are deleted before the failure is
        # handled and no PreEnqueue gating is needed (preemption.go, prepareCandidate).
        self.async_preemption = features.enabled(handle.feature_gates, ASYNC_PREEMPTION_GATE)
        # Preemptors whose victims are being deleted right now, and the victims each waits for.
        self.preempting: set[str] = set()
        self._victims: OrderedDict[str, frozenset[str]] = OrderedDict()
        # GenericWorkload: a gang preempts as a unit, in its PodGroup cycle (podgrouppreemption.py);
        # its members wait in PreEnqueue with the group's message.
        self.workload_aware = features.enabled(handle.feature_gates, GENERIC_WORKLOAD)
        self._group_members: set[str] = set()

    # --- PreEnqueue: hold the preemptor while its victims go --------------------------------
    def pre_enqueue(self, pod: Pod) -> Status:
        with self._lock:
            waiting = WAITING_GROUP if pod.uid in self._group_members else WAITING
            if pod.uid in self.preempting:
                return Status.unresolvable(waiting)
            victims = self._victims.get(pod.uid)
            if victims is None:
                return SUCCESS
            lookup = self.handle.assigned_pod
            if lookup is not None and any(
                    (v := lookup(uid)) is not None and not v.deleting for uid in victims):
                return Status.unresolvable(waiting)
            del self._victims[pod.uid]
            self._group_members.discard(pod.uid)
            return SUCCESS

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        # A victim's deletion (or its deletionTimestamp) may let the waiting preemptor in.
        return (ClusterEventWithHint(ClusterEvent("Pod", "Delete"), self._victim_changed),
                ClusterEventWithHint(ClusterEvent("Pod", "Update"), self._victim_changed))

    def _victim_changed(self, pod: Pod, change: ClusterEvent) -> bool:
        victims = self._victims.get(pod.uid)
        if not victims:
            return False
        changed = change.old if change.old is not None else change.new
        return changed is not None and changed.uid in victims

    # --- PostFilter -------------------------------------------------------------------------
    def post_filter(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: PostFilterContext
                    ) -> tuple[PostFilterResult | None, Status]:
        if self.workload_aware and self.in_gang(pod):
            # A gang member preempts only with its whole group, in the PodGroup cycle
            # (defaultpreemption.go, whose deferred count includes this attempt).
            if self.handle.metrics is not None:
                self.handle.metrics.preemption_attempts.inc()
            return None, Status.unschedulable(f"preemption: {NOT_ELIGIBLE_WORKLOAD}")
        try:
            result, status = self._preempt(state, pod, statuses, ctx)
        finally:
            if self.handle.metrics is not None:
                self.handle.metrics.preemption_attempts.inc()
        if status.reasons:
            status = Status(status.code, (f"preemption: {status.message()}",))
        return result, status

    def in_gang(self, pod: Pod) -> bool:
        """Whether ``pod`` is scheduled in a PodGroup cycle (its group exists and is a gang): upstream
        refuses any grouped pod here because every group has a PodGroup cycle; a basic group's pods
        are scheduled one by one here, so they keep their own preemption."""
        store = self.handle.pod_groups
        if not pod.scheduling_group or store is None:
            return False
        group = store.get(pod.namespace, pod.scheduling_group)
        return group is not None and group.is_gang

    def num_candidates(self, num_nodes: int) -> int:
        n = num_nodes * self.args.min_candidate_nodes_percentage // 100
        return min(max(n, self.args.min_candidate_nodes_absolute), num_nodes)

    def _preempt(self, state: CycleState, pod: Pod, statuses: NodeToStatus, ctx: PostFilterContext
                 ) -> tuple[PostFilterResult | None, Status]:
        snap = ctx.snapshot
        ok, why = self._eligible(pod, statuses, snap)
        if not ok:
            return None, Status.unschedulable(why)
        potential = self._potential_nodes(statuses, snap)
        node_statuses = NodeToStatus()
        candidates: list[Candidate] = []
        if len(potential):
            pdbs = list(self.handle.pdbs()) if self.handle.pdbs is not None else []
            offset = self.rng.randrange(len(potential))
            candidates, node_statuses = self.dry_run(state, pod, snap, ctx.framework, potential, pdbs, offset,
                                                     self.num_candidates(len(potential)))
        if not candidates:
            node_statuses.absent = Status.unresolvable(NOT_HELPFUL)
            msg = fit_error_message(snap.num_nodes, Diagnosis(node_to_status=node_statuses))
            # An empty nomination clears the one the pod may have had.
            return PostFilterResult(""), Status.unschedulable(msg)
        if ctx.extenders:
            # Upstream's Evaluator.callExtenders: extenders that support preemption revise the
            # candidates (node -> victims) before the best node is picked.
            revised, s = call_extenders_for_preemption(
                ctx.extenders, pod, {c.node: Victims(c.victims, c.num_pdb_violations) for c in candidates}, snap)
            if not s.is_success():
                return None, s
            order = {c.node: i for i, c in enumerate(candidates)}
            candidates = [Candidate(n, v.pods, v.num_pdb_violations)
                          for n, v in sorted(revised.items(), key=lambda kv: order.get(kv[0], len(order)))]
        best = pick_one_node_for_preemption(candidates)
        if best is None:
            return None, Status.unschedulable(NO_CANDIDATE)
        log.info("preempting %d pod(s) on %s for %s", len(best.victims), best.node, pod.key)
        if not self.async_preemption:
            fwk = ctx.framework
            return PostFilterResult(best.node, prepare=lambda: self._prepare_candidate(best, pod, fwk)), SUCCESS
        self._prepare(best, pod, ctx.framework)
        return PostFilterResult(best.node), SUCCESS

    def _eligible(self, pod: Pod, statuses: NodeToStatus, snap: Snapshot) -> tuple[bool, str]:
        if pod.preemption_policy == "Never":
            return False, NOT_ELIGIBLE_NEVER
        nominated = pod.nominated_node_name
        if not nominated and self.handle.nominator is not None:
            nominated = self.handle.nominator.node_of(pod.uid)
        if nominated:
            row = snap.row_of(nominated)
            if row is None:
                return True, ""
            st = statuses.get(row)
            if st is not None and st.code == Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                return True, ""
            for p in snap.node_info(row).pods.values():
                if p.priority < pod.priority and p.deleting and p.preempted_by_scheduler:
                    return False, NOT_ELIGIBLE_TERMINATING
        return True, ""

    @staticmethod
    def _potential_nodes(statuses: NodeToStatus, snap: Snapshot) -> np.ndarray:
        """Rows rejected as Unschedulable, in the snapshot's node order."""
        order = snap.node_order
        mask = np.isin(order, statuses.rows_with_code(Code.UNSCHEDULABLE))
        if statuses.absent is not None and statuses.absent.code == Code.UNSCHEDULABLE:
            listed = np.array([r for r, _ in statuses.items()], np.int64)
            mask |= ~np.isin(order, listed)
        return order[mask]

    def dry_run(self, state: CycleState, pod: Pod, snap: Snapshot, fwk: FilterRunner, potential: np.ndarray,
                pdbs: Sequence[PodDisruptionBudget], offset: int, num_candidates: int
                ) -> tuple[list[Candidate], NodeToStatus]:
        """Upstream's ``DryRunPreemption``: nodes in order from ``offset`` until enough candidates.

        When every Filter that runs for the pod is node-local (no spread or inter-pod affinity in
        play), removing victims from one node cannot change another node's verdict, so the nodes of a
        chunk are evaluated together: one batched Filter call per reprieve step instead of one per
        node and step. The outcome is the same as node by node (a test compares the two); nodes with
        nominated pods are still evaluated one at a time.
        """
        non_violating: list[Candidate] = []
        violating: list[Candidate] = []
        statuses = NodeToStatus()
        n = len(potential)
        order = np.concatenate((potential[offset:], potential[:offset])) if offset else potential
        # Victim units spanning nodes (a disruptionMode All group) are evaluated node by node.
        batched = self.batch_dry_run and not self._units() and fwk.filters_are_node_local(state)
        chunk = max(num_candidates, 1) if batched else 1
        nominated = fwk.nominated_rows(pod, snap) if batched else set()
        for start in range(0, n, chunk):
            rows = order[start: start + chunk]
            if batched:
                plain = np.array([r for r in rows.tolist() if r not in nominated], np.int64)
                results = self.select_victims_on_nodes(state, pod, snap, fwk, plain, pdbs)
            else:
                results = {}
            for row in rows.tolist():
                got = results.get(row)
                victims, violations, status = got if got is not None else \
                    self.select_victims_on_node(state, pod, snap, fwk, row, pdbs)
                if status.is_success() and victims:
                    c = Candidate(snap.node_info(row).name, victims, violations)
                    if violations == 0:
                        non_violating.append(c)
                    elif len(violating) < num_candidates:
                        violating.append(c)
                    if non_violating and len(non_violating) + len(violating) >= num_candidates:
                        return non_violating + violating, statuses
                    continue
                if status.is_success():
                    status = Status(Code.ERROR,
                                    (f'expected at least one victim pod on node "{snap.node_info(row).name}"',))
                statuses.set_row(row, status)
        return non_violating + violating, statuses

    def select_victims_on_nodes(self, state: CycleState, pod: Pod, snap: Snapshot, fwk: FilterRunner,
                                rows: np.ndarray, pdbs: Sequence[PodDisruptionBudget]
                                ) -> dict[int, tuple[tuple[Pod, ...], int, Status]]:
        """``select_victims_on_node`` for many node-local rows at once (see ``dry_run``): every row's
        lower-priority pods removed in one move, then one reprieve step for all rows at a time (each
        row's next pod added back, one batched Filter, the rows that fail take it out again)."""
        out: dict[int, tuple[tuple[Pod, ...], int, Status]] = {}
        todo: list[int] = []
        potentials: list[list[Pod]] = []
        priority = pod.priority
        for row in rows.tolist():
            potential = [p for p in snap.node_info(row).pods.values() if p.priority < priority]
            if not potential:
                out[row] = ((), 0, Status.unresolvable(NO_VICTIMS))
                continue
            todo.append(row)
            potentials.append(potential)
        if not todo:
            return out
        # Node-local filters read neither pod counters nor term holders: move the columns only.
        with snap.what_if(columns_only=True) as w:
            w.move_rows(todo, potentials, -1)
            passed, failed = fwk.run_filter_on_rows(state, pod, snap, np.array(todo, np.int64))
            alive: list[int] = []               # rows a full removal makes room on
            orders: list[list[Pod]] = []        # each one's reprieve order: budget-violating pods first
            violating: list[int] = []           # how many of those lead the order
            for i, row in enumerate(todo):
                if not passed[i]:
                    out[row] = ((), 0, failed[row])
                    continue
                order, bad = _reprieve_order(potentials[i], pdbs)
                alive.append(row)
                orders.append(order)
                violating.append(bad)
            victims, violations = _reprieve_rows(state, pod, snap, fwk, w, alive, orders, violating)
        for k, row in enumerate(alive):
            v = victims[k]
            if 0 < violating[k] < len(orders[k]):
                v.sort(key=importance)
            out[row] = (tuple(v), violations[k], SUCCESS)
        return out

    def select_victims_on_node(self, state: CycleState, pod: Pod, snap: Snapshot, fwk: FilterRunner, row: int,
                               pdbs: Sequence[PodDisruptionBudget]) -> tuple[tuple[Pod, ...], int, Status]:
        """The fewest pods to remove from ``row`` so ``pod`` fits, and how many break a budget."""
        if self._units():
            return self.select_victim_units_on_node(state, pod, snap, fwk, row, pdbs)
        info = snap.node_info(row)
        node = info.name
        potential = [p for p in info.pods.values() if p.priority < pod.priority]
        if not potential:
            return (), 0, Status.unresolvable(NO_VICTIMS)
        victims: list[Pod] = []
        violations = 0
        with snap.what_if() as w:
            for p in potential:
                w.remove(p, node)
            # Inter-pod affinity to a victim is not considered, as upstream (for performance).
            s = fwk.run_filter_with_nominated_pods(state, pod, snap, row, pods_changed=True)
            if not s.is_success():
                return (), 0, s
            potential.sort(key=importance)
            violating, fine = filter_pods_with_pdb_violation(potential, pdbs)

            def reprieve(p: Pod) -> bool:
                w.add(p, node)
                if fwk.run_filter_with_nominated_pods(state, pod, snap, row, pods_changed=True).is_success():
                    return True
                w.remove(p, node)
                victims.append(p)
                return False

            for p in violating:
                if not reprieve(p):
                    violations += 1
            for p in fine:
                reprieve(p)
        if violating and fine:
            victims.sort(key=importance)
        return tuple(victims), violations, SUCCESS

    # --- GenericWorkload: victims are units (podgrouppreemption.py) ---------------------------
    def _units(self) -> bool:
        """Whether victims are chosen as units: GenericWorkload is on and PodGroups exist."""
        return self.workload_aware and self.handle.pod_groups is not None and len(self.handle.pod_groups) > 0

    def _scheduled(self, group: PodGroup) -> list[Pod]:
        """A group's members the cache has placed (assigned or assumed), as the cache has them."""
        store, lookup = self.handle.pod_groups, self.handle.assigned_pod
        if store is None or lookup is None:
            return []
        return [q for p in store.members(group.namespace, group.name) if (q := lookup(p.uid)) is not None]

    def select_victim_units_on_node(self, state: CycleState, pod: Pod, snap: Snapshot, fwk: FilterRunner, row: int,
                                    pdbs: Sequence[PodDisruptionBudget]) -> tuple[tuple[Pod, ...], int, Status]:
        """``SelectVictimsOnNode`` with GenericWorkload on: a pod's victim is its unit (a lone pod, a
        ``Single`` group's member, or a ``disruptionMode: All`` group whole, on every node it runs on),
        at the group's priority; units are removed, and reprieved, whole."""
        store = self.handle.pod_groups
        groups = store.get if store is not None else None
        units = node_victims(list(snap.node_info(row).pods.values()), groups, self._scheduled)
        if pod.scheduling_group:
            # A member of a (basic) group never preempts its own group: its siblings are victims at the
            # group's priority, which may be below the member's own, yet evicting them only trades one
            # member for another (upstream's "basic group" scenarios evict the blocker, not siblings).
            units = [u for u in units if not any(q.namespace == pod.namespace
                                                 and q.scheduling_group == pod.scheduling_group for q in u.pods)]
        ordered = order_victims(units, pod.priority, pdbs)
        if not ordered:
            return (), 0, Status.unresolvable(NO_VICTIMS)
        victims: list[Pod] = []
        violations = 0
        with snap.what_if() as w:
            for u, _ in ordered:
                for p in u.pods:
                    w.remove(p, p.node_name)
            s = fwk.run_filter_with_nominated_pods(state, pod, snap, row, pods_changed=True)
            if not s.is_success():
                return (), 0, s
            for u, bad in ordered:
                for p in u.pods:
                    w.add(p, p.node_name)
                if fwk.run_filter_with_nominated_pods(state, pod, snap, row, pods_changed=True).is_success():
                    continue
                for p in u.pods:
                    w.remove(p, p.node_name)
                victims.extend(u.pods)
                violations += bad
        victims.sort(key=importance)
        return tuple(victims), violations, SUCCESS

    # --- carrying it out before the failure is handled (SchedulerAsyncPreemption off) ---------
    async def _prepare_candidate(self, c: Candidate, pod: Pod, fwk: FilterRunner) -> str:
        """Upstream's synchronous ``prepareCandidate``: every victim not already terminating is
        deleted (or its Permit wait rejected) at once; the first error is PostFilter's error. Then
        the lower-priority pods nominated to the node lose their nomination (an error there is only
        logged, as upstream)."""
        self._observe(c)
        started = time.perf_counter()
        client = self.handle.client

        async def evict(v: Pod) -> None:
            if fwk.reject_waiting_pod(v.uid, NAME, "preempted"):
                return
            if client is not None:
                await client.preempt(v, pod, c.node)

        results = await asyncio.gather(*(evict(v) for v in c.victims if not v.deleting), return_exceptions=True)
        errors = [r for r in results if isinstance(r, BaseException)]
        if self.handle.metrics is not None:
            self.handle.metrics.observe_preemption_execution("pod", bool(errors), time.perf_counter() - started)
        if errors:
            _api_log.report(f"preempt: {cause_of(errors[0])}", "preemption for %s on %s failed: %s",
                             pod.key, c.node, errors[0])
            return str(errors[0])
        nominator = self.handle.nominator
        lower = [p for p in nominator.pods_for_node(c.node) if p.priority < pod.priority] if nominator else []
        for p in lower:
            if nominator is not None:
                nominator.delete(p.uid)
            if client is not None:
                try:
                    await client.clear_nomination(p)
                except ClientError as e:
                    _api_log.report(f"clear nomination: {cause_of(e)}",
                                     "cannot clear the nominated node of %s: %s", p.key, e)
        if lower and self.handle.activate is not None:
            self.handle.activate([p.uid for p in lower])
        return ""

    # --- carrying it out, off the cycle -------------------------------------------------------
    def _observe(self, c: Candidate) -> None:
        """The executor's victim metrics for a pod's preemption (``Metrics.observe_preemption``)."""
        if self.handle.metrics is not None:
            self.handle.metrics.observe_preemption("pod", len(c.victims), c.num_pdb_violations,
                                                   self._group_disruptions(c.victims))

    def _group_disruptions(self, victims: Sequence[Pod]) -> int:
        """``NumPodGroupDisruptions`` of a pod's victims: the units that are PodGroups, each
        ``disruptionMode: All`` group once and each other grouped pod alone."""
        store = self.handle.pod_groups
        whole: set[tuple[str, str]] = set()
        alone = 0
        for v in victims:
            if not v.scheduling_group:
                continue
            group = store.get(v.namespace, v.scheduling_group) if store is not None else None
            if is_disruption_mode_all(group):
                whole.add((v.namespace, v.scheduling_group))
            else:
                alone += 1
        return alone + len(whole)

    def _prepare(self, c: Candidate, pod: Pod, fwk: FilterRunner) -> None:
        self._observe(c)
        to_delete = [v for v in c.victims if not v.deleting]
        if not to_delete:
            return
        nominator = self.handle.nominator
        lower = [p for p in nominator.pods_for_node(c.node) if p.priority < pod.priority] if nominator else []
        with self._lock:
            self.preempting.add(pod.uid)
            self._victims[pod.uid] = frozenset(v.uid for v in c.victims)
            self._victims.move_to_end(pod.uid)
            while len(self._victims) > MAX_TRACKED:
                self._victims.popitem(last=False)
        self._spawn(self._carry_out(c, pod, to_delete, lower, fwk, time.perf_counter()))

    def preempt_group(self, result: GroupPreemption, group: PodGroup, members: Sequence[Pod],
                      fwk: FilterRunner) -> None:
        """Carry out a PodGroup's preemption (``actuatePodGroupPreemption``), off the cycle: every
        member is held in PreEnqueue ("waiting for the preemption for this pod group to be
        finished") until each victim is gone or going; the victims are evicted as one pod's are.
        (The attempt is counted by the PodGroup cycle's PostFilter.) Its victims are observed in
        ``scheduler_workload_preemption_victims``, not in ``scheduler_preemption_victims``, as
        upstream's executor does for a ``podgroup`` preemptor."""
        if self.handle.metrics is not None:
            self.handle.metrics.observe_preemption("podgroup", len(result.pods), result.num_pdb_violations,
                                                   result.num_pod_group_disruptions)
        to_delete = [v for v in result.pods if not v.deleting]
        if not to_delete or not members:
            return
        victims = frozenset(v.uid for v in result.pods)
        with self._lock:
            for m in members:
                self.preempting.add(m.uid)
                self._group_members.add(m.uid)
                self._victims[m.uid] = victims
                self._victims.move_to_end(m.uid)
            while len(self._victims) > MAX_TRACKED:
                self._victims.popitem(last=False)
        self._spawn(self._carry_out_group(result, group, list(members), to_delete, fwk, time.perf_counter()))

    async def _carry_out_group(self, result: GroupPreemption, group: PodGroup, members: list[Pod],
                               victims: list[Pod], fwk: FilterRunner, started: float) -> None:
        client = self.handle.client
        preemptor = members[0]
        failed = False
        try:
            async def evict(v: Pod) -> None:
                if fwk.reject_waiting_pod(v.uid, NAME, "preempted"):
                    return
                if client is not None:
                    # Upstream's PodGroup candidate is the whole cluster ("on node cluster").
                    await client.preempt(v, preemptor, GROUP_CANDIDATE, group)

            results = await asyncio.gather(*(evict(v) for v in victims), return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                failed = True
                _api_log.report(f"preempt: {cause_of(errors[0])}", "preemption for pod group of %s failed: %s",
                                 preemptor.key, errors[0])
        except Exception as e:  # never leave the members gated
            failed = True
            log.exception("preemption for the pod group of %s failed: %s", preemptor.key, e)
        finally:
            if self.handle.metrics is not None:
                self.handle.metrics.observe_preemption_execution("podgroup", failed, time.perf_counter() - started)
            with self._lock:
                for m in members:
                    self.preempting.discard(m.uid)
                    if failed:
                        self._victims.pop(m.uid, None)
                        self._group_members.discard(m.uid)
            if self.handle.activate is not None:
                self.handle.activate([m.uid for m in members])

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        if self.handle.spawn is not None:
            self.handle.spawn(coro)
        else:
            asyncio.get_running_loop().create_task(coro)

    async def _carry_out(self, c: Candidate, pod: Pod, victims: list[Pod], lower: list[Pod],
                         fwk: FilterRunner, started: float) -> None:
        failed = False
        client = self.handle.client
        try:
            for p in lower:
                # Their node was just taken: let them look elsewhere now rather than after the victims go.
                if self.handle.nominator is not None:
                    self.handle.nominator.delete(p.uid)
                if client is not None:
                    try:
                        await client.clear_nomination(p)
                    except ClientError as e:
                        _api_log.report(f"clear nomination: {cause_of(e)}",
                                         "cannot clear the nominated node of %s: %s", p.key, e)
            if lower and self.handle.activate is not None:
                self.handle.activate([p.uid for p in lower])

            async def evict(v: Pod) -> None:
                if fwk.reject_waiting_pod(v.uid, NAME, "preempted"):
                    return
                if client is not None:
                    await client.preempt(v, pod, c.node)

            # All victims but the last in parallel, then the last, as upstream.
            results = await asyncio.gather(*(evict(v) for v in victims[:-1]), return_exceptions=True)
            errors = [r for r in results if isinstance(r, BaseException)]
            if not errors:
                try:
                    await evict(victims[-1])
                except ClientError as e:
                    errors.append(e)
            if errors:
                failed = True
                _api_log.report(f"preempt: {cause_of(errors[0])}", "preemption for %s on %s failed: %s",
                                 pod.key, c.node, errors[0])
        except Exception as e:  # never leave the preemptor gated
            failed = True
            log.exception("preemption for %s on %s failed: %s", pod.key, c.node, e)
        finally:
            if self.handle.metrics is not None:
                self.handle.metrics.observe_preemption_execution("pod", failed, time.perf_counter() - started)
            with self._lock:
                self.preempting.discard(pod.uid)
                if failed:
                    self._victims.pop(pod.uid, None)
            # If the pod was gated meanwhile, PreEnqueue decides again: in if every victim is
            # gone or going, else it waits for their deletion events.
            if self.handle.activate is not None:
                self.handle.activate([pod.uid])


def new(args: DefaultPreemptionArgs | None, handle: Handle) -> DefaultPreemption:
    return DefaultPreemption(args or DefaultPreemptionArgs(), handle)


if TYPE_CHECKING:
    from scheduler.framework.interfaces import EnqueueExtensions, PostFilterPlugin, PreEnqueuePlugin

    _: type[PostFilterPlugin] = DefaultPreemption
    __: type[PreEnqueuePlugin] = DefaultPreemption
    ___: type[EnqueueExtensions] = DefaultPreemption
