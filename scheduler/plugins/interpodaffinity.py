"""InterPodAffinity: required and preferred pod affinity and anti-affinity.

Filter, in upstream's order, per node:

1. the pod's required affinity: every term's topology key on the node, and in that domain at least
   one pod matching *all* terms; else UnschedulableAndUnresolvable
   ``node(s) didn't match pod affinity rules``. The first pod of a group (no pod anywhere matches,
   and the pod matches its own terms) may go anywhere that has the keys.
2. the pod's required anti-affinity: no pod matching a term in the node's domain for that term;
   else Unschedulable ``node(s) didn't match pod anti-affinity rules``.
3. existing pods' required anti-affinity: no assigned pod whose anti-affinity term matches the
   incoming pod shares the term's domain with the node; else Unschedulable
   ``node(s) didn't satisfy existing pods anti-affinity rules``.

Score: the pod's preferred terms (+/- weight for each matching pod in the domain), existing pods'
required affinity (hardPodAffinityWeight) and preferred terms that match the incoming pod, summed
per domain, then min-max normalised to 0..100.

No pod list is walked in a cycle. Counts of pods matching the incoming pod's terms come from the
cache's incremental per-row counters (one per distinct term), aggregated per domain with
``bincount``; existing pods' terms come from ``TermHolders``, one entry per distinct term, so
the incoming pod is matched once per term.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import AllTermsMatch, Snapshot, term_match
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import LABELS_SIGNER_NAME, SignFragment, mapping_value, unsignable
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Pod, PodAffinityTerm
from scheduler.plugins.args import InterPodAffinityArgs
from scheduler.plugins.helpers import at_domain

NAME = "InterPodAffinity"
ERR_REASON_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod affinity rules"
ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
_PREFILTER_KEY = "PreFilter" + NAME
_PRESCORE_KEY = "PreScore" + NAME
_SKIP = Status(Code.SKIP)
_STATUSES = (Status.unresolvable(ERR_REASON_AFFINITY_RULES_NOT_MATCH),
             Status.unschedulable(ERR_REASON_ANTI_AFFINITY_RULES_NOT_MATCH),
             Status.unschedulable(ERR_REASON_EXISTING_ANTI_AFFINITY_RULES_NOT_MATCH))
IntArray = npt.NDArray[np.int64]


def _domain_sum(snapshot: Snapshot, key: str, per_row: npt.NDArray[np.generic]) -> IntArray:
    """Sum ``per_row`` over the live nodes of each value of label ``key``."""
    t = snapshot.table
    col = t.label_column(key)
    ok = t.valid & (col >= 0)
    n_values = max(len(t.label_values.get(key, ())), 1)
    return np.bincount(col[ok], weights=per_row[ok], minlength=n_values).astype(np.int64)


def _holder_domains(snapshot: Snapshot, key: str, rows: dict[int, int]) -> IntArray:
    """Per value of ``key``: the summed amounts of the holder rows in that domain."""
    t = snapshot.table
    n_values = max(len(t.label_values.get(key, ())), 1)
    idx = np.fromiter(rows.keys(), np.int64, len(rows))
    amounts = np.fromiter(rows.values(), np.int64, len(rows))
    col = t.label_column(key)[idx]
    ok = t.valid[idx] & (col >= 0)
    return np.bincount(col[ok], weights=amounts[ok], minlength=n_values).astype(np.int64)


@dataclass(slots=True)
class _FilterState:
    affinity: list[tuple[str, IntArray]] = field(default_factory=list)
    affinity_map_empty: bool = True
    self_match_all: bool = False
    anti: list[tuple[str, IntArray]] = field(default_factory=list)
    existing_anti: dict[str, IntArray] = field(default_factory=dict)


@dataclass(slots=True)
class _ScoreState:
    topology_score: dict[str, IntArray] = field(default_factory=dict)


def _score_state(state: CycleState) -> _ScoreState:
    """PreScore's state (upstream's ``getPreScoreState``): an error if PreScore did not write it."""
    return state.read(_PRESCORE_KEY, _ScoreState)


class InterPodAffinity:
    """Upstream's ``interpodaffinity.InterPodAffinity``: PreFilter, Filter, PreScore, Score (NormalizeScore),
    EnqueueExtensions."""

    name = NAME

    def __init__(self, args: InterPodAffinityArgs) -> None:
        self.args = args

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with affinity or anti-affinity terms has no signature (its verdicts
        depend on other pods' placement), as upstream. Without terms, the existing pods' terms still
        match the pod by its namespace and labels, so those are its fragment (upstream signs nothing
        here; two pods with other labels would see other anti-affinity)."""
        if pod.has_affinity_terms:
            return unsignable("pods with affinity terms are not signable")
        return ((LABELS_SIGNER_NAME, (pod.namespace, mapping_value(pod.labels))),), SUCCESS

    # --- PreFilter / Filter ----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        holders = snapshot.holders.by_kind["required_anti_affinity"]
        if not pod.affinity_required and not pod.anti_affinity_required and not holders:
            return None, _SKIP
        ns_labels = snapshot.namespace_labels
        s = _FilterState()
        if pod.affinity_required:
            all_terms = AllTermsMatch(tuple(term_match(t) for t in pod.affinity_required))
            matching = snapshot.counter(all_terms)
            for t in pod.affinity_required:
                d = _domain_sum(snapshot, t.topology_key, matching)
                s.affinity.append((t.topology_key, d))
                if d.any():
                    s.affinity_map_empty = False
            s.self_match_all = all_terms.matches(pod, ns_labels)
        for t in pod.anti_affinity_required:
            s.anti.append((t.topology_key, _domain_sum(snapshot, t.topology_key, snapshot.counter(term_match(t)))))
        for term, rows in holders.items():
            if term_match(term).matches(pod, ns_labels):
                d = _holder_domains(snapshot, term.topology_key, rows)
                prev = s.existing_anti.get(term.topology_key)
                s.existing_anti[term.topology_key] = d if prev is None else prev + d
        if not pod.affinity_required and not pod.anti_affinity_required and not any(
                d.any() for d in s.existing_anti.values()):
            # Upstream's Skip: no existing pod's required anti-affinity counts against this pod (no
            # term matches it, or no holder's node has the term's topology key), and it has no
            # required terms of its own, so Filter could refuse no node.
            return None, _SKIP
        state.write(_PREFILTER_KEY, s)
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        # PreFilter's state, computed now if it did not run (None: it skipped).
        s = state.read_or_compute(_PREFILTER_KEY, _FilterState, lambda: self.pre_filter(state, pod, snapshot))
        if s is None:
            return fwk.FilterVerdict.passed(len(rows))
        t = snapshot.table
        n = len(rows)
        aff_fail = np.zeros(n, np.bool_)
        if s.affinity:
            has_all = np.ones(n, np.bool_)
            pods_exist = np.ones(n, np.bool_)
            for key, d in s.affinity:
                has, count = at_domain(t, key, rows, d)
                has_all &= has
                pods_exist &= count > 0
            first_of_group = s.affinity_map_empty and s.self_match_all
            aff_fail = ~has_all | (~pods_exist & (not first_of_group))
        anti_fail = np.zeros(n, np.bool_)
        for key, d in s.anti:
            anti_fail |= at_domain(t, key, rows, d)[1] > 0
        exist_fail = np.zeros(n, np.bool_)
        for key, d in s.existing_anti.items():
            exist_fail |= at_domain(t, key, rows, d)[1] > 0
        failed = aff_fail | anti_fail | exist_fail
        ids = np.where(aff_fail, 0, np.where(anti_fail, 1, 2)).astype(np.int64)
        return fwk.FilterVerdict(failed, _STATUSES, ids)

    # --- PreScore / Score ------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        has_constraints = bool(pod.affinity_preferred or pod.anti_affinity_preferred)
        if self.args.ignore_preferred_terms_of_existing_pods and not has_constraints:
            return _SKIP
        ns_labels = snapshot.namespace_labels
        scores: dict[str, IntArray] = {}

        def add(key: str, d: IntArray) -> None:
            prev = scores.get(key)
            scores[key] = d if prev is None else prev + d

        for sign, weighted in ((1, pod.affinity_preferred), (-1, pod.anti_affinity_preferred)):
            for w in weighted:
                counts = snapshot.counter(term_match(w.term))
                add(w.term.topology_key, sign * w.weight * _domain_sum(snapshot, w.term.topology_key, counts))
        by_kind = snapshot.holders.by_kind
        kinds: list[tuple[str, int]] = [("preferred_affinity", 1), ("preferred_anti_affinity", -1)]
        if self.args.hard_pod_affinity_weight > 0:
            kinds.append(("required_affinity", self.args.hard_pod_affinity_weight))
        for kind, factor in kinds:
            for term, rows_held in by_kind[kind].items():
                if _matches(term, pod, ns_labels):
                    add(term.topology_key, factor * _holder_domains(snapshot, term.topology_key, rows_held))
        if not scores:
            return _SKIP
        state.write(_PRESCORE_KEY, _ScoreState(scores))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        s = _score_state(state)
        t = snapshot.table
        out = np.zeros(len(rows), np.int64)
        for key, d in s.topology_score.items():
            out += at_domain(t, key, rows, d)[1]
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: fwk.Scores) -> Status:
        if len(scores) == 0:
            return SUCCESS
        lo, hi = int(scores.min()), int(scores.max())
        diff = hi - lo
        if diff > 0:
            scores[:] = (MAX_NODE_SCORE * ((scores - lo) / diff)).astype(np.int64)
        else:
            scores[:] = 0
        return SUCCESS

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return self

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        def related(pod: Pod, change: object) -> bool:
            other = getattr(change, "new", None) or getattr(change, "old", None)
            if not isinstance(other, Pod):
                return True
            terms = pod.affinity_required + pod.anti_affinity_required
            return any(term_match(t).matches(other, lambda _ns: {}) for t in terms) or other.has_affinity_terms
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "*"), related),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeLabel")))


def _matches(term: PodAffinityTerm, pod: Pod, ns_labels: object) -> bool:
    return term_match(term).matches(pod, ns_labels)  # type: ignore[arg-type]


def new(args: InterPodAffinityArgs | None, handle: Handle) -> InterPodAffinity:
    return InterPodAffinity(args or InterPodAffinityArgs())


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = InterPodAffinity
    __: type[fwk.BatchScorePlugin] = InterPodAffinity
    ___: type[fwk.PreFilterPlugin] = InterPodAffinity
