"""NodePorts, after upstream's ``nodeports/node_ports_test.go``."""

from __future__ import annotations

from scheduler.plugins import nodeports
from tests.builders import node, pod, reasons, run_filter


def test_node_ports() -> None:
    spec = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080}]}]}
    existing = pod("e", node_name="a", spec=spec)
    got = run_filter(nodeports.NodePorts(), pod("p", spec=spec), [node("a"), node("b")], [existing])
    assert reasons(got) == [("node(s) didn't have free ports for the requested pod ports",), None]
    other_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.2"}]}]}
    first_ip = {"containers": [{"name": "c", "ports": [{"containerPort": 80, "hostPort": 8080, "hostIP": "10.0.0.1"}]}]}
    got = run_filter(nodeports.NodePorts(), pod("p", spec=other_ip), [node("a")], [pod("e", node_name="a", spec=first_ip)])
    assert reasons(got) == [None]
