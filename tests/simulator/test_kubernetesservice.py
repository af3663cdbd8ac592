"""The ``default/kubernetes`` Service, Endpoints and EndpointSlice (``controllers/kubernetesservice.py``):
there from the start, pointing at the server, and made again when deleted."""

from __future__ import annotations

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, wait
from tests.simulator.kubectl import Kubectl, needs_kubectl

SVC = "/api/v1/namespaces/default/services/kubernetes"
SLICE = "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes"
EP = "/api/v1/namespaces/default/endpoints/kubernetes"


def test_the_kubernetes_service_and_its_endpoints_point_at_the_server(sim: SimulatedCluster, api: Http) -> None:
    code, svc = api("GET", SVC)
    assert code == 200, svc
    assert svc["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert svc["spec"]["clusterIP"] == "10.96.0.1"
    assert svc["spec"]["ports"] == [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": sim.port}]
    code, eps = api("GET", SLICE)
    assert code == 200, eps
    assert eps["addressType"] == "IPv4"
    assert eps["metadata"]["labels"]["kubernetes.io/service-name"] == "kubernetes"
    assert eps["endpoints"] == [{"addresses": ["127.0.0.1"], "conditions": {"ready": True}}]
    assert eps["ports"] == [{"name": "https", "port": sim.port, "protocol": "TCP"}]
    code, ep = api("GET", EP)
    assert code == 200, ep
    assert ep["subsets"] == [{"addresses": [{"ip": "127.0.0.1"}],
                              "ports": [{"name": "https", "port": sim.port, "protocol": "TCP"}]}]


def test_they_are_made_again_when_deleted(sim: SimulatedCluster, api: Http) -> None:
    for path in (SVC, SLICE, EP):
        uid = api("GET", path)[1]["metadata"]["uid"]
        assert api("DELETE", path)[0] == 200
        back = wait(lambda p=path: (r := api("GET", p))[0] == 200 and r[1], message=f"{path} not recreated")
        assert back["metadata"]["uid"] != uid
    assert api("GET", SVC)[1]["spec"]["clusterIP"] == "10.96.0.1"


@needs_kubectl
def test_kubectl_prints_them_as_upstreams_printers(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    lines = kubectl("get", "svc", "kubernetes").stdout.splitlines()
    assert lines[1].split()[:5] == ["kubernetes", "ClusterIP", "10.96.0.1", "<none>", "443/TCP"]
    lines = kubectl("get", "endpoints", "kubernetes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ENDPOINTS", "AGE"]
    assert lines[1].split()[:2] == ["kubernetes", f"127.0.0.1:{sim.port}"]
    lines = kubectl("get", "endpointslices", "kubernetes").stdout.splitlines()
    assert lines[0].split() == ["NAME", "ADDRESSTYPE", "PORTS", "ENDPOINTS", "AGE"]
    assert lines[1].split()[:4] == ["kubernetes", "IPv4", str(sim.port), "127.0.0.1"]
