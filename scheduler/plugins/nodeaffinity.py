"""NodeAffinity: ``spec.nodeSelector``, required and preferred node affinity, and the plugin's
``addedAffinity`` arg (scheduler-enforced affinity that every pod of the profile must also meet).

Filter failures are UnschedulableAndUnresolvable: ``node(s) didn't match Pod's node
affinity/selector`` (or ``... scheduler-enforced node affinity`` for ``addedAffinity``).
PreFilter narrows the candidates to the names of required ``matchFields metadata.name In`` terms
(as DaemonSet pods use): when every term pins names, the union of each term's intersection; when
those intersections are all empty no node can match, and PreFilter says so at once (``pod affinity
terms conflict``). It skips the Filter when the pod has no node constraints at all.
Score: the summed weights of matching preferred terms, normalised by the max.

Terms that do not parse (``NodeSelectorTerm.parse_errors``, see ``scheduler.model.selectors``) are
treated as upstream treats them: a required one matches no node and Filter says nothing more (the
pod's other terms still count); a preferred one makes PreScore (or Score, when PreScore did not
run) return an error Status with ``NewPreferredSchedulingTerms``'s message; one in ``addedAffinity``
refuses the profile, with ``ValidateNodeAffinityArgs``'s message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from scheduler.cache import Snapshot
from scheduler.errors import ParseError, PluginArgsError
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import NODE_AFFINITY_SIGNER_NAME, SignFragment, node_affinity_signer
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import NodeSelector, NodeSelectorTerm, Pod
from scheduler.model.selectors import (
    FieldError,
    aggregate_message,
    parse_node_selector,
    parse_node_selector_term,
)
from scheduler.plugins.args import NodeAffinityArgs
from scheduler.plugins.helpers import default_normalize_score, labels_mask, node_selector_mask, term_mask

NAME = "NodeAffinity"
ERR_REASON_POD = "node(s) didn't match Pod's node affinity/selector"
ERR_REASON_ENFORCED = "node(s) didn't match scheduler-enforced node affinity"
ERR_REASON_CONFLICT = "pod affinity terms conflict"
_POD = Status.unresolvable(ERR_REASON_POD)
_ENFORCED = Status.unresolvable(ERR_REASON_ENFORCED)
_CONFLICT = Status.unresolvable(ERR_REASON_CONFLICT)
_SKIP = Status(Code.SKIP)
_ADDED = "addedAffinity"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


def preferred_terms_errors(terms: Sequence[tuple[int, NodeSelectorTerm]], path: str = "") -> list[FieldError]:
    """``NewPreferredSchedulingTerms``' errors: every bad term's, under ``path[i]`` (``[i]`` for the
    pod's own terms, as upstream's message has it). Upstream skips weight-0 terms; the pod model and
    the args refuse those before they get here."""
    return [e.under(f"{path}[{i}]") for i, (_, term) in enumerate(terms) for e in term.parse_errors]


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
        errors: list[FieldError] = []
        try:
            req = added.get(_REQUIRED)
            if req is not None:
                self._added_required = parse_node_selector(req, f"{_ADDED}.{_REQUIRED}")
                errors += [e.under(f"{_ADDED}.{_REQUIRED}") for e in self._added_required.parse_errors()]
            pref = []
            for i, p in enumerate(added.get(_PREFERRED) or []):
                f = f"{_ADDED}.{_PREFERRED}[{i}]"
                w = p.get("weight")
                if not isinstance(w, int) or not 1 <= w <= 100:
                    raise PluginArgsError("must be in the range 1-100", field=f"{f}.weight")
                pref.append((w, parse_node_selector_term(p.get("preference") or {}, f"{f}.preference")))
            self._added_preferred = tuple(pref)
        except ValueError as e:
            raise PluginArgsError(str(e)) from None
        # ValidateNodeAffinityArgs: the required selector's errors, then the preferred terms', flattened.
        errors += preferred_terms_errors(self._added_preferred, f"{_ADDED}.{_PREFERRED}")
        if errors:
            raise PluginArgsError(aggregate_message(errors))

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreFilter, Filter and Score read the node selector and node affinity (the
        profile's addedAffinity is the same for every pod of the framework)."""
        return ((NODE_AFFINITY_SIGNER_NAME, node_affinity_signer(pod)),), SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        if not pod.node_selector and pod.required_node_affinity is None and self._added_required is None:
            return None, _SKIP
        req = pod.required_node_affinity
        if req is None or not req.terms:
            return None, SUCCESS
        # Only when *every* term pins node names can the candidate set be narrowed (terms are ORed;
        # a term's name requirements are ANDed, which the model's ``node_names`` already did).
        names: set[str] = set()
        for term in req.terms:
            if term.node_names is None:
                return None, SUCCESS
            names |= term.node_names
        if not names:
            return None, _CONFLICT
        return fwk.PreFilterResult(frozenset(names)), SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        t = snapshot.table
        # Each mask is the table's (cached until its labels change), gathered at the rows; no
        # array is built that no mask needs (a DaemonSet pod filters one row, every cycle).
        ok: npt.NDArray[np.bool_] | None = None
        if pod.node_selector:
            ok = labels_mask(t, pod.node_selector)[rows]
        if pod.required_node_affinity is not None:
            # A term that did not parse matches nothing; upstream ignores its errors here "for
            # backwards compatibility", so the node just fails with the usual reason.
            required = node_selector_mask(t, pod.required_node_affinity)[rows]
            ok = required if ok is None else ok & required
        pod_fail = np.zeros(len(rows), np.bool_) if ok is None else ~ok
        if self._added_required is None:
            return fwk.FilterVerdict.uniform(pod_fail, _POD)
        enforced_fail = ~node_selector_mask(t, self._added_required)[rows]
        failed = enforced_fail | pod_fail
        if not enforced_fail.any():
            return fwk.FilterVerdict.uniform(failed, _POD)
        return fwk.FilterVerdict(failed, (_ENFORCED, _POD), np.where(enforced_fail, 0, 1).astype(np.int64))

    def pre_score(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> Status:
        errors = preferred_terms_errors(pod.preferred_node_affinity)
        if errors:
            return Status.as_error(ParseError(aggregate_message(errors)))
        return SUCCESS if pod.preferred_node_affinity or self._added_preferred else _SKIP

    def score_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.Scores:
        # Without PreScore (disabled, or a caller scoring directly) upstream's Score parses the
        # terms itself and returns the same error; the framework turns this raise into that Status.
        errors = preferred_terms_errors(pod.preferred_node_affinity)
        if errors:
            raise ParseError(aggregate_message(errors))
        t = snapshot.table
        out = np.zeros(len(rows), np.int64)
        for weight, term in pod.preferred_node_affinity + self._added_preferred:
            out += np.where(term_mask(t, term)[rows], weight, 0)
        return out

    def normalize_score(self, state: CycleState, pod: Pod, scores: fwk.Scores) -> Status:
        default_normalize_score(scores, reverse=False)
        return SUCCESS

    def score_extensions(self) -> fwk.ScoreExtensions | None:
        return self

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "Add")),
                fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", "UpdateNodeLabel")))


def new(args: NodeAffinityArgs | None, handle: Handle) -> NodeAffinity:
    return NodeAffinity(args or NodeAffinityArgs())


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodeAffinity
    __: type[fwk.BatchScorePlugin] = NodeAffinity
    ___: type[fwk.PreFilterPlugin] = NodeAffinity
