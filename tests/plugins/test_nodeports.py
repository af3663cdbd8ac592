"""NodePorts, after upstream's ``nodeports/node_ports_test.go``."""

from __future__ import annotations

import pytest

from scheduler.framework import ClusterEvent
from scheduler.model import Pod
from scheduler.plugins import nodeports
from tests.builders import make_scheduler, node, pod, reasons, run_filter, setup


def test_node_ports() -> None:
    spec = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    existing = pod("e", node_name="a", spec=spec)
    got = run_filter(nodeports.NodePorts(), pod("p", spec=spec), [node("a"), node("b")], [existing])
    assert reasons(got) == [("node(s) didn't have free ports for the requested pod ports",), None]
    other_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}]}]}
    first_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}]}
    got = run_filter(nodeports.NodePorts(), pod("p", spec=other_ip), [node("a")], [pod("e", node_name="a", spec=first_ip)])
    assert reasons(got) == [None]


# --- node_ports_test.go TestNodePorts and TestFits ---------------------------------------------------
NP = nodeports.NodePorts()
CONFLICT = "Unschedulable: " + nodeports.ERR_REASON


def new_pod(name: str, host: str, *port_infos: str, init: str = "") -> Pod:
    """upstream's newPod(host, "PROTO/IP/PORT"...); ``init`` puts the ports on an init container
    ("sidecar" with restartPolicy Always, or "plain")."""
    ports = []
    for info in port_infos:
        proto, ip, port = info.split("/")
        ports.append({"containerPort": int(port), "hostPort": int(port), "hostIP": ip, "protocol": proto})
    container = {"name": "c", "image": "i", "ports": ports}
    if init:
        if init == "sidecar":
            container["restartPolicy"] = "Always"
        spec = {"containers": [], "initContainers": [container]}
    else:
        spec = {"containers": [container]}
    return pod(name, None, None, node_name=host, spec=spec)


NODE_PORTS = [
    ("skip filter", pod("p", None, None, spec={"containers": []}), [], "Skip"),
    ("other port", new_pod("p", "", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/9090"], None),
    ("same udp port", new_pod("p", "", "UDP/127.0.0.1/8080"), ["UDP/127.0.0.1/8080"], CONFLICT),
    ("same tcp port", new_pod("p", "", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], CONFLICT),
    ("different host ip", new_pod("p", "", "TCP/127.0.0.1/8080"), ["TCP/127.0.0.2/8080"], None),
    ("different protocol", new_pod("p", "", "UDP/127.0.0.1/8080"), ["TCP/127.0.0.1/8080"], None),
    ("second udp port conflict", new_pod("p", "", "UDP/127.0.0.1/8000", "UDP/127.0.0.1/8080"),
     ["UDP/127.0.0.1/8080"], CONFLICT),
    ("first tcp port conflict", new_pod("p", "", "TCP/127.0.0.1/8001", "UDP/127.0.0.1/8080"),
     ["TCP/127.0.0.1/8001", "UDP/127.0.0.1/8081"], CONFLICT),
    ("first tcp port conflict due to 0.0.0.0 hostIP", new_pod("p", "", "TCP/0.0.0.0/8001"), ["TCP/127.0.0.1/8001"],
     CONFLICT),
    ("TCP hostPort conflict due to 0.0.0.0 hostIP", new_pod("p", "", "TCP/10.0.10.10/8001", "TCP/0.0.0.0/8001"),
     ["TCP/127.0.0.1/8001"], CONFLICT),
    ("second tcp port conflict to 0.0.0.0 hostIP", new_pod("p", "", "TCP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"],
     CONFLICT),
    ("second different protocol", new_pod("p", "", "UDP/127.0.0.1/8001"), ["TCP/0.0.0.0/8001"], None),
    ("UDP hostPort conflict due to 0.0.0.0 hostIP", new_pod("p", "", "UDP/127.0.0.1/8001"),
     ["TCP/0.0.0.0/8001", "UDP/0.0.0.0/8001"], CONFLICT),
    ("non-sidecar initContainer using hostPort", new_pod("p", "", "TCP/0.0.0.0/8001", init="plain"),
     ["TCP/0.0.0.0/8001"], "Skip"),
    ("TCP hostPort conflict from sidecar initContainer", new_pod("p", "", "TCP/0.0.0.0/8001", init="sidecar"),
     ["TCP/0.0.0.0/8001"], CONFLICT),
]


@pytest.mark.parametrize(("name", "p", "existing_ports", "want"), NODE_PORTS, ids=[c[0] for c in NODE_PORTS])
def test_node_ports_table(name: str, p: Pod, existing_ports: list[str], want: str | None) -> None:
    existing = [new_pod("e", "m1", *existing_ports)] if existing_ports else []
    snap, state, _ = setup([node("m1")], existing)
    _, s = NP.pre_filter(state, p, snap)
    if want == "Skip":
        assert s.is_skip(), name
        return
    assert s.is_success(), name
    (got,) = run_filter(NP, p, [node("m1")], existing)
    assert (None if got is None else f"{got.code.name.title()}: {got.reasons[0]}") == want, name


FITS = [
    ("non-conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/9090"], True),
    ("multiple non-conflicting ports", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
     ["TCP/127.0.0.1/9090", "TCP/127.0.0.1/9191", "TCP/127.0.1.1/8080"], True),
    ("same ports on different protocols", ["TCP/127.0.0.1/80"], ["UDP/127.0.0.1/80"], True),
    ("conflicting ports", ["TCP/127.0.0.1/80"], ["TCP/127.0.0.1/80"], False),
    ("multiple ports, some conflicting", ["TCP/127.0.0.1/80", "TCP/127.0.1.1/80", "TCP/127.0.1.1/90", "TCP/127.0.1.1/100"],
     ["TCP/127.0.0.1/9090", "TCP/127.0.1.1/90", "TCP/127.0.1.1/8080"], False),
]


@pytest.mark.parametrize(("desc", "ports", "existing_ports", "fits"), FITS, ids=[c[0] for c in FITS])
def test_fits(desc: str, ports: list[str], existing_ports: list[str], fits: bool) -> None:
    (got,) = run_filter(NP, new_pod("p", "", *ports), [node("m1")], [new_pod("e", "m1", *existing_ports)])
    assert (got is None) == fits, desc


def test_pre_filter_disabled() -> None:
    """node_ports_test.go TestPreFilterDisabled: upstream's Filter without its PreFilter state is an
    Error; ours keeps no state and reads the pod's ports itself, so a Filter called alone gives the
    verdict PreFilter would have led to: a pod with no ports fits."""
    snap, state, rows = setup([node("n")], [])
    verdict = NP.filter_nodes(state, pod("p", None, None, spec={"containers": []}), snap, rows)
    assert not verdict.failed.any()


# --- node_ports_test.go Test_isSchedulableAfterAssignedPodDeleted, through the queue: a pod NodePorts
# rejected waits in unschedulablePods, and the Pod/Delete event either moves it (Queue) or not
# (QueueSkip). A hint that fails (an object that is not a pod) means Queue, as upstream's error.
def host_port(name: str, port: int = 0, node_name: str = "") -> Pod:
    """``st.MakePod().HostPort(port)``, and ``.Node(node_name)``: one container, the port with no
    host IP or protocol (defaulted to 0.0.0.0 and TCP)."""
    ports = [{"containerPort": port, "hostPort": port}] if port else []
    spec = {"containers": [{"name": "container", "image": "pause", "ports": ports}]}
    return pod(name, None, None, node_name=node_name, spec=spec)


AFTER_POD_DELETED = [
    ("backoff-wrong-old-object", "not-a-pod", True),
    ("skip-queue-on-unscheduled", host_port("deleted"), False),
    ("skip-queue-on-non-hostport", host_port("deleted", node_name="fake-node"), False),
    ("skip-queue-on-unrelated-hostport", host_port("deleted", 8081, "fake-node"), False),
    ("queue-on-released-hostport", host_port("deleted", 8080, "fake-node"), True),
]


@pytest.mark.parametrize(("name", "deleted", "queue"), AFTER_POD_DELETED, ids=[c[0] for c in AFTER_POD_DELETED])
def test_is_schedulable_after_pod_deleted(name: str, deleted: object, queue: bool) -> None:
    """Test_isSchedulableAfterAssignedPodDeleted (the hint also runs on its own: an error for a non-pod)."""
    s, _ = make_scheduler()
    p = host_port("p", 8080)
    s.queue.add(p)
    info = s.queue.pop(0)
    assert info is not None
    info.unschedulable_plugins = {nodeports.NAME}
    s.queue.add_unschedulable_if_not_present(info)
    event = ClusterEvent("Pod", "Delete", old=deleted)
    assert s.queue.move_all_to_active_or_backoff(event) == int(queue), name
    if not isinstance(deleted, Pod):
        with pytest.raises(TypeError):
            nodeports.is_schedulable_after_pod_deleted(p, event)


@pytest.mark.parametrize(("wanted", "used", "conflict"), [
    ("TCP/0.0.0.0/8080", "TCP/127.0.0.1/8080", True),
    ("TCP/127.0.0.1/8080", "TCP/0.0.0.0/8080", True),
    ("TCP/127.0.0.1/8080", "TCP/127.0.0.2/8080", False),
    ("UDP/0.0.0.0/8080", "TCP/0.0.0.0/8080", False),
])
def test_deleted_pod_hint_uses_check_conflict(wanted: str, used: str, conflict: bool) -> None:
    """The hint's port test is HostPortInfo.CheckConflict's (0.0.0.0 on either side conflicts), as
    the Filter's, not an exact match of the ports."""
    event = ClusterEvent("Pod", "Delete", old=new_pod("deleted", "fake-node", used))
    assert nodeports.is_schedulable_after_pod_deleted(new_pod("p", "", wanted), event) is conflict
