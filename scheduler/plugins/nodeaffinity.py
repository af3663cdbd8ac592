"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity, and the plugin's
``addedAffinity`` arg (scheduler-enforced affinity that every pod of the profile must also meet).

Filter failures are UnschedulableAndUnresolvable: ``node(s) didn't match Pod's node
affinity/selector`` (or ``... scheduler-enforced node affinity`` for ``addedAffinity``).
PreFilter narrows the candidates to the names of required ``matchFields metadata.name In`` terms
(as DaemonSet pods use) and skips the Filter when the pod has no node constraints at all.
Score: the summed weights of matching preferred terms, normalised by the max.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler.cache import Snapshot
from scheduler.errors import PluginArgsError
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.interfaces import (
    ClusterEvent,
    ClusterEventWithHint,
    FilterVerdict,
    PreFilterResult,
    Rows,
    ScoreExtensions,
    Scores,
)
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import NodeSelector, NodeSelectorTerm, Pod
from scheduler.model.selectors import parse_node_selector, parse_node_selector_term
from scheduler.plugins.args import NodeAffinityArgs
from scheduler.plugins.helpers import default_normalize_score, labels_mask, node_selector_mask, term_mask

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
_POD = Status.unresolvable(ERR_REASON_POD)
_ENFORCED = Status.unresolvable(ERR_REASON_ENFORCED)
_SKIP = Status(Code.SKIP)


class NodeAffinity:
    """Upstream's ``nodeaffinity.NodeAffinity``: PreFilter, Filter, PreScore, Score (NormalizeScore),
    EnqueueExtensions."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: preemption's dry run may batch nodes
    pre_filter_reads_pods = False   # PodReadingPreFilter: its state survives a change of the node's pods

    def __init__(self, args: NodeAffinityArgs) -> None:
        self.args = args
        self._added_required: NodeSelector | None = None
        self._added_preferred: tuple[tuple[int, NodeSelectorTerm], ...] = ()
        added = args.added_affinity or {}
        try:
            req = added.get("requiredDuringSchedulingIgnoredDuringExecution")
            if req is not None:
                self._added_required = parse_node_selector(
                    req, "addedAffinity.requiredDuringSchedulingIgnoredDuringExecution")
            pref = []
            for i, p in enumerate(added.get("preferredDuringSchedulingIgnoredDuringExecution") or []):
                f = f"addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[{i}]"
                w = p.get("weight")
                if not isinstance(w, int) or not 1 <= w <= 100:
                    raise PluginArgsError("must be in the range 1-100", field=f"{f}.weight")
                pref.append((w, parse_node_selector_term(p.get("preference") or {}, f"{f}.preference")))
            self._added_preferred = tuple(pref)
        except ValueError as e:
            raise PluginArgsError(str(e)) from None

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[PreFilterResult | None, Status]:
        if not pod.node_selector and pod.required_node_affinity is None and self._added_required is None:
            return None, _SKIP
        req = pod.required_node_affinity
        if req is None:
            return None, SUCCESS
        # Only when *every* term pins node names can the candidate set be narrowed.
        names: set[str] = set()
        for term in req.terms:
            pinned = [r for r in term.match_fields if r.key == "metadata.name" and r.operator == "In"]
            if not pinned:
                return None, SUCCESS
            term_names = set(pinned[0].values)
            for r in pinned[1:]:
                term_names &= r.values
            names |= term_names
        if not names:
            return None, _POD
        return PreFilterResult(frozenset(names)), SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> FilterVerdict:
        t = snapshot.table
        failed = np.zeros(len(rows), np.bool_)
        if self._added_required is not None:
            enforced_fail = ~node_selector_mask(t, self._added_required)[rows]
        else:
            enforced_fail = failed
        ok = np.ones(len(rows), np.bool_)
        if pod.node_selector:
            ok &= labels_mask(t, pod.node_selector)[rows]
        if pod.required_node_affinity is not None:
            ok &= node_selector_mask(t, pod.required_node_affinity)[rows]
        pod_fail = ~ok
        failed = enforced_fail | pod_fail
        if not enforced_fail.any():
            return FilterVerdict.uniform(failed, _POD)
        return FilterVerdict(failed, (_ENFORCED, _POD), np.where(enforced_fail, 0, 1).astype(np.int64))

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Status:
        return SUCCESS if pod.preferred_node_affinity or self._added_preferred else _SKIP

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: Rows) -> Scores:
        t = snapshot.table
        out = np.zeros(len(rows), np.int64)
        for weight, term in pod.preferred_node_affinity + self._added_preferred:
            out += np.where(term_mask(t, term)[rows], weight, 0)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: Scores) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    def score_extensions(self) -> ScoreExtensions | None:
        return self

    def events_to_register(self) -> Sequence[ClusterEventWithHint]:
        return (ClusterEventWithHint(ClusterEvent("Node", "Add")),
                ClusterEventWithHint(ClusterEvent("Node", "UpdateNodeLabel")))


def new(args: NodeAffinityArgs | None, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args or NodeAffinityArgs())


if TYPE_CHECKING:
    from scheduler.framework.interfaces import BatchFilterPlugin, BatchScorePlugin, PreFilterPlugin

    _: type[BatchFilterPlugin] = NodeAffinity
    __: type[BatchScorePlugin] = NodeAffinity
    ___: type[PreFilterPlugin] = NodeAffinity
