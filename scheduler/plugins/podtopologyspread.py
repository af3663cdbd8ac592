"""PodTopologySpread: spread matching pods evenly over topology domains.

Filter (``DoNotSchedule`` constraints), per node and constraint::

    node lacks the topology key                       -> UnschedulableAndUnresolvable
        "node(s) didn't match pod topology spread constraints (missing required label)"
    matching(domain) + selfMatch - globalMin > maxSkew -> Unschedulable
        "node(s) didn't match pod topology spread constraints"

``globalMin`` is the smallest count over the domains of *eligible* nodes (nodes having every
constraint's key and passing ``nodeAffinityPolicy`` / ``nodeTaintsPolicy``), and 0 while there are
fewer domains than ``minDomains``. Score (``ScheduleAnyway`` constraints) follows upstream's
``scoreForCount``: ``count * log(domains + 2) + (maxSkew - 1)`` summed and rounded, then normalised
so the least crowded node gets 100; nodes missing a key are ignored (score 0).

Counts come from the cache's incremental per-row counters (``SpreadMatch``: same namespace, not
terminating, selector matches), aggregated per domain with one ``bincount`` over the label column.
With ``defaultingType: System`` the system default constraints (hostname maxSkew 3, zone maxSkew 5,
both ScheduleAnyway) apply to pods without constraints whose selector can be derived from their
Services and controllers; the core has no lister for those, so it asks ``Handle.default_selector``
and applies no default when that is absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler import features
from scheduler.cache import Snapshot, SpreadMatch
from scheduler.errors import PluginArgsError
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import MAX_NODE_SCORE  # bare: Score reads it per node
from scheduler.framework.signature import SignFragment, unsignable
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import LabelSelector, Pod, TopologySpreadConstraint
from scheduler.model.pod import _spread
from scheduler.plugins.args import PodTopologySpreadArgs
from scheduler.plugins.helpers import (
    BoolArray,
    at_domain,
    derived,
    labels_mask,
    node_selector_mask,
    untolerated_taint_per_set,
)

NAME = "PodTopologySpread"
ERR_REASON_CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
ERR_REASON_NODE_LABEL_NOT_MATCH = ERR_REASON_CONSTRAINTS_NOT_MATCH + " (missing required label)"
MATCH_LABEL_KEYS_GATE = "MatchLabelKeysInPodTopologySpread"
HOSTNAME = "kubernetes.io/hostname"
ZONE = "topology.kubernetes.io/zone"
_PREFILTER_KEY = "PreFilter" + NAME
_PRESCORE_KEY = "PreScore" + NAME
_SKIP = Status(Code.SKIP)
_NOT_MATCH = Status.unschedulable(ERR_REASON_CONSTRAINTS_NOT_MATCH)
_MISSING = Status.unresolvable(ERR_REASON_NODE_LABEL_NOT_MATCH)
SYSTEM_DEFAULTS = ((HOSTNAME, 3), (ZONE, 5))

DefaultSelectorFn = Callable[[Pod], LabelSelector | None]


@dataclass(slots=True)
class _FilterState:
    constraints: tuple[TopologySpreadConstraint, ...]
    # Per constraint: domain counts indexed by value id, the global minimum, self-match.
    domain_counts: list[npt.NDArray[np.int64]]
    minimum: list[int]
    self_match: list[int]


@dataclass(slots=True)
class _ScoreState:
    constraints: tuple[TopologySpreadConstraint, ...]
    ignored: BoolArray  # aligned with the scored rows
    weights: list[float]
    domain_counts: list[npt.NDArray[np.int64] | None]  # None for the hostname key (per-node counts)


def _score_state(state: CycleState) -> _ScoreState:
    """PreScore's state (upstream's ``getPreScoreState``): an error if PreScore did not write it."""
    return state.read(_PRESCORE_KEY, _ScoreState)


class PodTopologySpread:
    """Upstream's ``podtopologyspread.PodTopologySpread``: PreFilter, Filter, PreScore, Score (NormalizeScore),
    EnqueueExtensions."""

    name = NAME

    def __init__(self, args: PodTopologySpreadArgs, default_selector: DefaultSelectorFn | None = None, *,
                 match_label_keys: bool = True) -> None:
        self.args = args
        self._default_selector = default_selector
        # MatchLabelKeysInPodTopologySpread (beta, on): off, a constraint's matchLabelKeys are ignored
        # (common.go filterTopologySpreadConstraints, enableMatchLabelKeysInPodTopologySpread).
        self._match_label_keys = match_label_keys
        self._system_defaulted = args.defaulting_type == "System"
        self._defaults: tuple[dict[str, object], ...] = args.default_constraints
        if self._system_defaulted:
            self._defaults = tuple({"maxSkew": s, "topologyKey": k, "whenUnsatisfiable": "ScheduleAnyway"}
                                   for k, s in SYSTEM_DEFAULTS)
        try:
            for i, c in enumerate(self._defaults):
                if "labelSelector" in c:
                    raise PluginArgsError("constraints must not define a selector", field=f"defaultConstraints[{i}]")
                _spread({**c, "labelSelector": {}}, f"defaultConstraints[{i}]", {})
        except ValueError as e:
            raise PluginArgsError(str(e)) from None

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: a pod with spread constraints has no signature, nor one the default
        constraints apply to (as the KEP words it: "a default set of rules are applied"; upstream's
        code refuses every pod while default constraints are configured, also those whose default
        selector is empty, to which none applies). Otherwise the plugin skips the pod."""
        if pod.topology_spread:
            return unsignable("pods with topology constraints are not signable")
        if self._constraints(pod, "DoNotSchedule") or self._constraints(pod, "ScheduleAnyway"):
            return unsignable("pods with default topology constraints are not signable")
        return (), SUCCESS

    # --- constraints -----------------------------------------------------------------------
    def _constraints(self, pod: Pod, when: str) -> tuple[TopologySpreadConstraint, ...]:
        if pod.topology_spread:
            own = tuple(c for c in pod.topology_spread if c.when_unsatisfiable == when)
            if self._match_label_keys:
                return own
            return tuple(replace(c, selector=c.label_selector) if c.match_label_keys else c for c in own)
        if not self._defaults or self._default_selector is None:
            return ()
        selector = self._default_selector(pod)
        if selector is None or selector.is_empty:
            return ()
        out = []
        for i, c in enumerate(self._defaults):
            base = _spread({**c, "labelSelector": {}}, f"defaultConstraints[{i}]", {})
            if base.when_unsatisfiable == when:
                out.append(TopologySpreadConstraint(base.max_skew, base.topology_key, base.when_unsatisfiable,
                                                    selector, base.min_domains))
        return tuple(out)

    def _eligible(self, snapshot: Snapshot, pod: Pod, constraints: Sequence[TopologySpreadConstraint],
                  c: TopologySpreadConstraint) -> BoolArray:
        """Rows that count for ``c``: every constraint key present, and c's inclusion policies."""
        t = snapshot.table
        keys = tuple(sorted({x.topology_key for x in constraints}))

        def base() -> BoolArray:
            m = t.valid.copy()
            for k in keys:
                m &= t.label_column(k) >= 0
            return m
        mask = derived(t, ("pts-keys", keys), base)
        if c.node_affinity_policy == "Honor":
            if pod.node_selector:
                mask = mask & labels_mask(t, pod.node_selector)
            if pod.required_node_affinity is not None:
                mask = mask & node_selector_mask(t, pod.required_node_affinity)
        if c.node_taints_policy == "Honor":
            per_set = untolerated_taint_per_set(t, pod.tolerations, frozenset({"NoSchedule", "NoExecute"}))
            ok = np.array([x is None for x in per_set], np.bool_)
            mask = mask & ok[t.taint_set]
        return mask

    def _domain_counts(self, snapshot: Snapshot, pod: Pod, c: TopologySpreadConstraint, eligible: BoolArray
                       ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.bool_]]:
        t = snapshot.table
        col = t.label_column(c.topology_key)
        n_values = max(len(t.label_values.get(c.topology_key, ())), 1)
        if c.selector is None:
            counts = np.zeros(t.capacity, np.int32)
        else:
            counts = snapshot.counter(SpreadMatch(pod.namespace, c.selector))
        vals = col[eligible]
        per_domain = np.bincount(vals, weights=counts[eligible], minlength=n_values).astype(np.int64)
        present = np.bincount(vals, minlength=n_values) > 0
        return per_domain, present

    # --- PreFilter / Filter ----------------------------------------------------------------
    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        constraints = self._constraints(pod, "DoNotSchedule")
        if not constraints:
            return None, _SKIP
        counts, minimum, selfm = [], [], []
        for c in constraints:
            eligible = self._eligible(snapshot, pod, constraints, c)
            per_domain, present = self._domain_counts(snapshot, pod, c, eligible)
            n_domains = int(present.sum())
            # Too few domains for minDomains: the global minimum counts as 0.
            lo = 0 if n_domains < c.min_domains else (int(per_domain[present].min()) if n_domains else 2**31 - 1)
            counts.append(per_domain)
            minimum.append(lo)
            selfm.append(1 if c.selector is not None and c.selector.matches(pod.labels) else 0)
        state.write(_PREFILTER_KEY, _FilterState(constraints, counts, minimum, selfm))
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        # PreFilter's state, computed now if it did not run (None: it skipped).
        s = state.read_or_compute(_PREFILTER_KEY, _FilterState, lambda: self.pre_filter(state, pod, snapshot))
        if s is None:
            return fwk.FilterVerdict.passed(len(rows))
        t = snapshot.table
        missing = np.zeros(len(rows), np.bool_)
        skewed = np.zeros(len(rows), np.bool_)
        for i, c in enumerate(s.constraints):
            has, match = at_domain(t, c.topology_key, rows, s.domain_counts[i])
            missing |= ~has & ~skewed
            skew = match + s.self_match[i] - s.minimum[i]
            skewed |= has & ~missing & (skew > c.max_skew)
        failed = missing | skewed
        return fwk.FilterVerdict(failed, (_MISSING, _NOT_MATCH), np.where(missing, 0, 1).astype(np.int64))

    # --- PreScore / Score ------------------------------------------------------------------
    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        constraints = self._constraints(pod, "ScheduleAnyway")
        if not constraints:
            return _SKIP
        t = snapshot.table
        require_all = bool(pod.topology_spread) or not self._system_defaulted
        ignored = np.zeros(len(rows), np.bool_)
        if require_all:
            for c in constraints:
                ignored |= t.label_column(c.topology_key)[rows] < 0
        kept = rows[~ignored]
        weights: list[float] = []
        domain_counts: list[npt.NDArray[np.int64] | None] = []
        for c in constraints:
            col = t.label_column(c.topology_key)
            if c.topology_key == HOSTNAME:
                size = len(kept)
            else:
                # Under System defaulting a node without the key is not ignored: upstream files it
                # under the pair (key, "") and counts that as one more domain in the weight
                # (TestPreScoreStateEmptyNodes, "system default constraints and a replicaset").
                v = col[kept]
                size = len(np.unique(v[v >= 0])) + int(bool((v < 0).any()))
            weights.append(math.log(size + 2))
            if c.topology_key == HOSTNAME:
                domain_counts.append(None)
                continue
            if require_all:
                eligible = self._eligible(snapshot, pod, constraints, c)
            else:
                eligible = self._eligible(snapshot, pod, (c,), c)
            per_domain, _ = self._domain_counts(snapshot, pod, c, eligible)
            domain_counts.append(per_domain)
        state.write(_PRESCORE_KEY, _ScoreState(constraints, ignored, weights, domain_counts))
        return SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        s = _score_state(state)
        t = snapshot.table
        score = np.zeros(len(rows), np.float64)
        for i, c in enumerate(s.constraints):
            dc = s.domain_counts[i]
            cnt: npt.NDArray[np.int64] | npt.NDArray[np.int32]
            if dc is None:
                has = t.label_column(c.topology_key)[rows] >= 0
                cnt = (snapshot.counter(SpreadMatch(pod.namespace, c.selector))[rows]
                       if c.selector is not None else np.zeros(len(rows), np.int32))
            else:
                has, cnt = at_domain(t, c.topology_key, rows, dc)
            score += np.where(has, cnt * s.weights[i] + (c.max_skew - 1), 0.0)
        out = np.floor(score + 0.5).astype(np.int64)
        out[s.ignored] = -1  # upstream's invalidScore, resolved in normalize_score
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: fwk.Scores) -> Status:
        valid = scores >= 0
        if not valid.any():
            scores[:] = 0
            return SUCCESS
        lo, hi = int(scores[valid].min()), int(scores[valid].max())
        if hi == 0:
            scores[:] = np.where(valid, MAX_NODE_SCORE, 0)
        else:
            scores[:] = np.where(valid, MAX_NODE_SCORE * (hi + lo - scores) // hi, 0)
        return SUCCESS

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return self

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        def same_namespace(pod: Pod, change: object) -> bool:
            other = getattr(change, "new", None) or getattr(change, "old", None)
            return not isinstance(other, Pod) or other.namespace == pod.namespace
        def uses_defaults(pod: Pod, change: object) -> bool:
            # Only a pod without constraints of its own reads the Services' and controllers' selectors.
            return not pod.topology_spread
        owners = () if not self._defaults else tuple(
            fwk.ClusterEventWithHint(fwk.ClusterEvent(kind, "*"), uses_defaults)
            for kind in ("Service", "ReplicationController", "ReplicaSet", "StatefulSet"))
        return (*owners,
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Pod", "*"), same_namespace),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Delete")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeLabel")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeTaint")))


def new(args: PodTopologySpreadArgs | None, handle: Handle) -> PodTopologySpread:
    return PodTopologySpread(args or PodTopologySpreadArgs(), handle.default_selector,
                             match_label_keys=features.enabled(handle.feature_gates, MATCH_LABEL_KEYS_GATE))


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = PodTopologySpread
    __: type[fwk.BatchScorePlugin] = PodTopologySpread
    ___: type[fwk.PreFilterPlugin] = PodTopologySpread
