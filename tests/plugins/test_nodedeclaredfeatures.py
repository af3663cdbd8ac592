"""NodeDeclaredFeatures, after upstream's ``nodedeclaredfeatures/nodedeclaredfeatures_test.go``: its
tables kept as data (``data/nodedeclaredfeatures_test.json``, each case by its Go test and t.Run name;
the two places where this plugin differs say so in a ``divergence`` field), then the plugin in the
scheduler: placement and the FitError text, and a rejected pod requeued by a node's declared
features changing."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from scheduler.framework import ClusterEvent, CycleState
from scheduler.framework.handle import Handle
from scheduler.framework.status import Code, Status
from scheduler.model import Node, parse_node
from scheduler.model.nodefeatures import Feature, required_features
from scheduler.plugins import nodedeclaredfeatures as ndf
from tests.builders import make_scheduler, node, node_event, pod, rejected_by, setup

DATA = json.loads((Path(__file__).parent / "data" / "nodedeclaredfeatures_test.json").read_text())
RESTART_ALL = {"name": "c", "image": "i", "restartPolicy": "Never",
               "restartPolicyRules": [{"action": "RestartAllContainers", "exitCodes": {"operator": "In", "values": [1]}}]}


def declaring(name: str, features: list[str] | None, cpu: str = "4") -> Node:
    """``node(name)`` with ``status.declaredFeatures`` (None: the field absent)."""
    base = node(name, cpu=cpu)
    raw: dict[str, Any] = {"metadata": {"name": name, "labels": dict(base.labels)},
                           "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}}}
    if features is not None:
        raw["status"]["declaredFeatures"] = features
    return parse_node(raw)


def _version(v: str) -> tuple[int, int, int]:
    major, minor, patch = (int(x) for x in v.split("."))
    return major, minor, patch


@pytest.mark.parametrize("case", DATA["TestPreFilter"], ids=lambda c: c["case"])
def test_pre_filter_upstream(case: dict[str, Any]) -> None:
    """TestPreFilter: mock features (a fixed InferForScheduling answer and a MaxVersion), inferred at
    the component version into the pod's requirements, then PreFilter."""
    registry = tuple(sorted((Feature(f["name"], lambda spec, infer=f["infer"]: infer, lambda cfg: False,
                                     _version(f["maxVersion"]) if f["maxVersion"] else None)
                             for f in case["features"]), key=lambda f: f.name))
    p = pod("test-pod")
    p = dataclasses.replace(p, required_features=required_features({}, _version(case["componentVersion"]), registry))
    plugin = ndf.NodeDeclaredFeatures(enabled=case["pluginEnabled"])
    snap, state, _ = setup([], [])
    result, status = plugin.pre_filter(state, p, snap)
    assert result is None
    assert str(status.code) == case["wantCode"]
    got = state.get(ndf._PREFILTER_KEY)
    assert got == (None if case["wantReqs"] is None else frozenset(case["wantReqs"]))


@pytest.mark.parametrize("case", DATA["TestFilter"], ids=lambda c: c["case"])
def test_filter_upstream(case: dict[str, Any]) -> None:
    """TestFilter: the node's declared features against the requirements PreFilter wrote."""
    plugin = ndf.NodeDeclaredFeatures(enabled=case["pluginEnabled"])
    snap, state, rows = setup([declaring("node-1", case["nodeFeatures"])], [])
    if case["preFilterReqs"] is not None:
        state.write(ndf._PREFILTER_KEY, frozenset(case["preFilterReqs"]))
    v = plugin.filter_nodes(state, pod("test-pod"), snap, rows)
    want = case["want"]
    if want is None:
        assert not v.failed[0]
    else:
        assert v.failed[0]
        assert v.statuses[0] == Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, (want["message"],))
        assert str(v.statuses[0].code) == want["code"]


@pytest.mark.parametrize("case", DATA["TestEnqueueExtensionsNodeUpdate"], ids=lambda c: c["case"])
def test_is_schedulable_after_node_change_upstream(case: dict[str, Any]) -> None:
    old = None if case["old"] is None else declaring("node-1", case["old"])
    new = declaring("node-1", case["new"])
    event = node_event(old, new)
    assert ndf.is_schedulable_after_node_change(pod("test-pod"), event) is (case["want"] == "Queue")


@pytest.mark.parametrize("case", DATA["TestEventsToRegister"], ids=lambda c: c["case"])
def test_events_to_register_upstream(case: dict[str, Any]) -> None:
    assert len(ndf.NodeDeclaredFeatures(enabled=case["enabled"]).events_to_register()) == case["wantLength"]


def test_the_hint_errs_on_an_object_that_is_not_a_node() -> None:
    with pytest.raises(TypeError):
        ndf.is_schedulable_after_node_change(pod("p"), ClusterEvent("Node", "Add", new="not-a-node"))


def test_the_gate_is_read_from_the_handle() -> None:
    assert ndf.new(None, Handle()).enabled is True
    assert ndf.new(None, Handle(feature_gates={"NodeDeclaredFeatures": False})).enabled is False


def test_one_answer_per_distinct_declared_set() -> None:
    """Many nodes, two distinct sets: the verdict fans out by set, and the set ids are shared."""
    nodes = [declaring(f"n{i}", ["RestartAllContainersOnContainerExits"] if i % 2 else []) for i in range(6)]
    snap, state, rows = setup(nodes, [])
    p = pod("p", spec={"containers": [RESTART_ALL]})
    _, st = ndf.NodeDeclaredFeatures().pre_filter(state, p, snap)
    assert st.is_success()
    v = ndf.NodeDeclaredFeatures().filter_nodes(state, p, snap, rows)
    assert v.failed.tolist() == [True, False] * 3
    assert len(set(snap.table.feature_set[rows].tolist())) == 2


def _schedule(nodes: list[Node], p: Any) -> Any:
    s, client = make_scheduler()
    for n in nodes:
        s.cache.add_node(n)

    async def go() -> None:
        s.queue.add(p)
        info = s.queue.pop(timeout=0)
        assert info is not None
        await s.finish(s.schedule_one(info))
        for _ in range(20):
            await asyncio.sleep(0)
    asyncio.run(go())
    return client


def test_a_pod_needing_a_feature_goes_to_the_node_that_declares_it() -> None:
    p = pod("needs", spec={"containers": [RESTART_ALL]})
    client = _schedule([declaring("old", []), declaring("new", ["RestartAllContainersOnContainerExits"], cpu="1")], p)
    assert client.bound == {p.uid: "new"}


def test_no_node_declares_it_fit_error_text() -> None:
    p = pod("needs", spec={"containers": [RESTART_ALL]})
    client = _schedule([declaring("a", None), declaring("b", ["GuaranteedQoSPodCPUResize"])], p)
    assert client.bound == {}
    (key, reason, message, nominated), = client.failures
    assert (key, reason, nominated) == ("default/needs", "Unschedulable", "")
    # UnschedulableAndUnresolvable: preemption cannot help, as upstream's.
    assert message == ("0/2 nodes are available: 2 node(s) didn't match Pod's required features. "
                       "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.")


def test_a_pod_needing_nothing_ignores_declared_features() -> None:
    p = pod("plain")
    client = _schedule([declaring("a", None)], p)
    assert client.bound == {p.uid: "a"}


def test_a_rejected_pod_moves_when_a_node_declares_a_feature() -> None:
    """Through the queue: Node/UpdateNodeDeclaredFeature (service.node_change) moves the pod this plugin
    rejected; an update that leaves the declared features alone (a label) does not."""
    p = pod("needs", spec={"containers": [RESTART_ALL]})
    before = declaring("n", [])
    q, uid = rejected_by(ndf.NAME, p)
    relabelled = dataclasses.replace(before, labels={**before.labels, "x": "y"})
    assert q.move_all_to_active_or_backoff(node_event(before, relabelled)) == 0
    assert q.where(uid) == "unschedulable"
    after = declaring("n", ["RestartAllContainersOnContainerExits"])
    assert node_event(before, after).actions == {"UpdateNodeDeclaredFeature"}
    assert q.move_all_to_active_or_backoff(node_event(before, after)) == 1
    assert q.where(uid) != "unschedulable"


def test_signature_carries_the_required_features() -> None:
    plain, needs = pod("a"), pod("b", spec={"containers": [RESTART_ALL]})
    sign = ndf.NodeDeclaredFeatures().sign_pod
    assert sign(plain)[0] == ((ndf.FEATURES_SIGNER_NAME, ()),)
    assert sign(needs)[0] == ((ndf.FEATURES_SIGNER_NAME, ("RestartAllContainersOnContainerExits",)),)


def test_cycle_state_is_not_shared_between_pods() -> None:
    state = CycleState()
    snap, _, _ = setup([], [])
    ndf.NodeDeclaredFeatures().pre_filter(state, pod("plain"), snap)
    assert state.get(ndf._PREFILTER_KEY) is None
