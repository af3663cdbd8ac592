"""NodeDeclaredFeatures (KEP-5328, GA and locked on in 1.37): a pod that needs a node feature
(``Pod.required_features``, inferred once when the pod is parsed by ``model/nodefeatures.py``, the
port of component-helpers' ``nodedeclaredfeatures`` registry) is kept off every node whose
``status.declaredFeatures`` lacks one: UnschedulableAndUnresolvable, as preemption cannot give a
node a feature. Upstream: ``pkg/scheduler/framework/plugins/nodedeclaredfeatures/nodedeclaredfeatures.go``.

PreFilter skips a pod that needs nothing (so does the whole plugin, for that pod) and writes the
pod's requirements; Filter answers once per distinct declared set (``NodeTable.feature_sets``) and
fans the verdict out to the rows. Unlike upstream's, Filter called without PreFilter reads the pod's
requirements itself instead of failing with an Error (NodePorts does the same): the answer is the
one PreFilter would have led to.

EnqueueExtensions: Node/Add and Node/UpdateNodeDeclaredFeature with upstream's
``isSchedulableAfterNodeChange`` (Queue for a node added, or one whose declared features changed).
Upstream's TargetPod/Update hint (Queue when the pod's own requirements changed) is the queue's rule
for a pending pod's spec change (``SchedulingQueue.update``), as for TaintToleration's tolerations.

The ``NodeDeclaredFeatures`` gate (``scheduler/features.py``) is locked on in 1.37; with it off the
plugin would skip every pod and register no event, as upstream's disabled plugin does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from scheduler import features
from scheduler.cache import Snapshot
from scheduler.framework import interfaces as fwk
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.signature import SignFragment
from scheduler.framework.status import SUCCESS, Code, Status
from scheduler.model import Node, Pod
from scheduler.plugins.helpers import derived

NAME = "NodeDeclaredFeatures"
ERR_REASON_UNSATISFIED_REQUIREMENTS = "node(s) didn't match Pod's required features"
# Upstream's signer name (staging/src/k8s.io/kube-scheduler/framework/signers.go).
FEATURES_SIGNER_NAME = "v1.Pod.Spec.RequiredFeatures()"
UPDATE_NODE_DECLARED_FEATURE = "UpdateNodeDeclaredFeature"
_PREFILTER_KEY = "PreFilter" + NAME
_STATUS = Status.unresolvable(ERR_REASON_UNSATISFIED_REQUIREMENTS)
_SKIP = Status(Code.SKIP)


class NodeDeclaredFeatures:
    """Upstream's ``nodedeclaredfeatures.NodeDeclaredFeatures``: PreFilter, Filter, EnqueueExtensions,
    SignPlugin."""

    name = NAME
    filter_is_node_local = True     # NodeLocalFilter: reads only the node's declared features
    pre_filter_reads_pods = False   # PodReadingPreFilter: reads only the pod

    def __init__(self, *, enabled: bool = True) -> None:
        self.enabled = enabled

    def sign_pod(self, pod: Pod) -> tuple[Sequence[SignFragment], Status]:
        """SignPlugin: PreFilter and Filter read the pod's required features."""
        return ((FEATURES_SIGNER_NAME, tuple(sorted(pod.required_features))),), SUCCESS

    def pre_filter(self, state: CycleState, pod: Pod, snapshot: Snapshot
                   ) -> tuple[fwk.PreFilterResult | None, Status]:
        if not self.enabled or not pod.required_features:
            return None, _SKIP
        state.write(_PREFILTER_KEY, pod.required_features)
        return None, SUCCESS

    def filter_nodes(self, state: CycleState, pod: Pod, snapshot: Snapshot, rows: fwk.Rows) -> fwk.FilterVerdict:
        reqs = state.get(_PREFILTER_KEY)
        if not isinstance(reqs, frozenset):
            reqs = pod.required_features
        if not self.enabled or not reqs:
            return fwk.FilterVerdict.passed(len(rows))
        t = snapshot.table
        # One subset test per distinct declared set; feature_sets only grows, so its length is in the key.
        ok = derived(t, ("declared-features", reqs, len(t.feature_sets)),
                     lambda: np.array([reqs <= s for s in t.feature_sets], np.bool_))
        return fwk.FilterVerdict.uniform(~ok[t.feature_set[rows]], _STATUS)

    def events_to_register(self) -> Sequence[fwk.ClusterEventWithHint]:
        if not self.enabled:
            return ()
        return (fwk.ClusterEventWithHint(fwk.ClusterEvent("Node", ("Add", UPDATE_NODE_DECLARED_FEATURE)),
                                         is_schedulable_after_node_change),)


def is_schedulable_after_node_change(pod: Pod, event: fwk.ClusterEvent) -> bool:
    """Upstream's ``isSchedulableAfterNodeChange``: QueueSkip when the node's declared features did
    not change, else Queue (a node added is always Queue). Raises ``TypeError`` for objects that are
    not nodes (upstream's ``util.As`` error: Queue)."""
    old, new = event.old, event.new
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        raise TypeError(f"expected nodes, got {type(old).__name__} and {type(new).__name__}")
    return old is None or old.declared_features != new.declared_features


def new(args: None, handle: Handle) -> NodeDeclaredFeatures:
    return NodeDeclaredFeatures(enabled=features.enabled(handle.feature_gates, features.NODE_DECLARED_FEATURES))


if TYPE_CHECKING:
    _: type[fwk.BatchFilterPlugin] = NodeDeclaredFeatures
    __: type[fwk.PreFilterPlugin] = NodeDeclaredFeatures
    ___: type[fwk.SignPlugin] = NodeDeclaredFeatures
