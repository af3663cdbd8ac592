"""NodeUnschedulable, after upstream's ``nodeunschedulable/node_unschedulable_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework import ClusterEvent, Status
from scheduler.model import Node, Pod
from scheduler.plugins import nodeunschedulable
from scheduler.queue import SchedulingQueue
from tests.builders import node, node_event, pod, reasons, rejected_by, run_filter
from tests.st import MakePod


def test_node_unschedulable() -> None:
    plugin = nodeunschedulable.NodeUnschedulable()
    nodes = [node("a", unschedulable=True), node("b")]
    assert reasons(run_filter(plugin, pod("p"), nodes)) == [("node(s) were unschedulable",), None]
    tolerant = pod("p", spec={"tolerations": [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                               "effect": "NoSchedule"}]})
    assert reasons(run_filter(plugin, tolerant, nodes)) == [None, None]


# Upstream's pkg/scheduler/framework/plugins/nodeunschedulable/node_unschedulable_test.go,
# TestNodeUnschedulable: its three cases (the toleration names key and effect, no operator: Equal to "").
@pytest.mark.parametrize(("name", "tolerations", "unschedulable", "want"), [
    ("Does not schedule pod to unschedulable node (node.Spec.Unschedulable==true)", [], True,
     Status.unresolvable(nodeunschedulable.ERR_REASON_UNSCHEDULABLE)),
    ("Schedule pod to normal node", [], False, None),
    ("Schedule pod with toleration to unschedulable node (node.Spec.Unschedulable==true)",
     [{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}], True, None),
])
def test_node_unschedulable_upstream(name: str, tolerations: list[dict[str, str]], unschedulable: bool,
                                     want: Status | None) -> None:
    p = pod("p", spec={"tolerations": tolerations})
    (got,) = run_filter(nodeunschedulable.NodeUnschedulable(), p, [node("n", unschedulable=unschedulable)])
    assert got == want, name


# --- node_unschedulable_test.go TestIsSchedulableAfterNodeChange and
# TestIsSchedulableAfterPodTolerationChange, through the queue: a pod NodeUnschedulable rejected waits
# in unschedulablePods, and the event either moves it (Queue) or not (QueueSkip). A hint that fails
# (an object that is not a node) means Queue, as upstream's error.
def _rejected(p: Pod) -> tuple[SchedulingQueue, str]:
    q, uid = rejected_by(nodeunschedulable.NAME, p)
    return q, uid


def _node_event(old: object, new: object) -> ClusterEvent:
    event: ClusterEvent = node_event(old, new)
    return event


NOT_READY = [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]
AFTER_NODE_CHANGE = [
    ("error-wrong-new-object", None, "not-a-node", True),
    ("error-wrong-old-object", "not-a-node", node("n", unschedulable=True), True),
    ("skip-queue-on-unschedulable-node-added", None, node("n", unschedulable=True), False),
    ("queue-on-schedulable-node-added", None, node("n"), True),
    ("skip-unrelated-change-unschedulable-true", node("n", unschedulable=True),
     node("n", unschedulable=True, taints=NOT_READY), False),
    ("skip-unrelated-change-unschedulable-false", node("n"), node("n", taints=NOT_READY), False),
    ("queue-on-unschedulable-field-change", node("n", unschedulable=True), node("n"), True),
]


@pytest.mark.parametrize(("name", "old", "new", "queue"), AFTER_NODE_CHANGE, ids=[c[0] for c in AFTER_NODE_CHANGE])
def test_is_schedulable_after_node_change(name: str, old: object, new: object, queue: bool) -> None:
    """TestIsSchedulableAfterNodeChange (the hint also runs on its own: an error for a non-node)."""
    p = pod("p", None, None, spec={"containers": []})
    q, uid = _rejected(p)
    assert q.move_all_to_active_or_backoff(_node_event(old, new)) == int(queue), name
    assert (q.where(uid) != "unschedulable") is queue, name
    if not isinstance(new, Node) or not (old is None or isinstance(old, Node)):
        with pytest.raises(TypeError):
            nodeunschedulable.is_schedulable_after_node_change(p, _node_event(old, new))


# Our queue, not a plugin hint, decides on a pending pod's own update (SchedulingQueue.update: the
# legacy rule, any scheduling-relevant spec change moves it); an update of another pending pod
# reaches no other pod. The error cases test the hint's type check, and there is no such hint here:
# the queue is handed parsed pods only.
UNRELATED_TOLERATION_XFAIL = pytest.mark.xfail(strict=True, reason=(
    "upstream's Pod/UpdatePodToleration hint skips a toleration that does not tolerate "
    "node.kubernetes.io/unschedulable:NoSchedule; our SchedulingQueue.update "
    "(scheduler/queue/scheduling_queue.py, _scheduling_relevant_change) moves the pod on any toleration change"))
AFTER_POD_TOLERATION_CHANGE = [
    pytest.param("error-wrong-new-object", "", "", True, id="error-wrong-new-object",
                 marks=pytest.mark.skip(reason="no hint receives raw objects: the queue is handed parsed pods")),
    pytest.param("error-wrong-old-object", "", "", True, id="error-wrong-old-object",
                 marks=pytest.mark.skip(reason="no hint receives raw objects: the queue is handed parsed pods")),
    pytest.param("skip-different-pod-update", "different-uid", "node.kubernetes.io/unschedulable", False,
                 id="skip-different-pod-update"),
    pytest.param("queue-when-the-unsched-pod-gets-toleration", "uid", "node.kubernetes.io/unschedulable", True,
                 id="queue-when-the-unsched-pod-gets-toleration"),
    pytest.param("skip-when-the-unsched-pod-gets-unrelated-toleration", "uid", "unrelated-key", False,
                 id="skip-when-the-unsched-pod-gets-unrelated-toleration", marks=UNRELATED_TOLERATION_XFAIL),
]


@pytest.mark.parametrize(("name", "updated_uid", "toleration_key", "queue"), AFTER_POD_TOLERATION_CHANGE)
def test_is_schedulable_after_pod_toleration_change(name: str, updated_uid: str, toleration_key: str,
                                                    queue: bool) -> None:
    """TestIsSchedulableAfterPodTolerationChange: the pod (or another pending pod) gains
    ``st.MakePod().Toleration(key)``, an Exists toleration with no effect."""
    target = MakePod().Name("target").UID("uid").Obj()
    other = MakePod().Name("other").UID("different-uid").Obj()
    q, uid = _rejected(target)
    q.add(other)
    updated = target if updated_uid == "uid" else other
    q.update(MakePod().Name(updated.name).UID(updated.uid).Toleration(toleration_key).Obj())
    assert (q.where(uid) != "unschedulable") is queue, name
