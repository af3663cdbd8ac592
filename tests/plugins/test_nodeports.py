"""NodePorts, after upstream's ``nodeports/node_ports_test.go``."""

from __future__ import annotations

import pytest

from scheduler.model import Pod
from scheduler.plugins import nodeports
from tests.builders import node, pod, reasons, run_filter, setup


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
