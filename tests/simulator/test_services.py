"""Services are validated as ``ValidateService`` validates them, on create and on update
(``registry/core/services.py``): the bodies below were accepted and stored before."""

from __future__ import annotations

import copy
from typing import Any

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http

SVCS = "/api/v1/namespaces/default/services"


def svc(name: str, *ports: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
            "spec": {"selector": {"app": name}, "ports": list(ports), **spec}}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def test_duplicate_ports_are_refused(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, out = api("POST", SVCS, svc("dup", {"name": "a", "port": 80}, {"name": "b", "port": 80}))
    assert code == 422, out
    assert out["message"] == (
        'Service "dup" is invalid: spec.ports[1]: Duplicate value: core.ServicePort{Name:"", Protocol:"TCP", '
        'AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, '
        'NodePort:0}')
    assert causes(out)[0][0] == "spec.ports[1]" and out["details"]["causes"][0]["reason"] == "FieldValueDuplicate"
    assert api("GET", f"{SVCS}/dup")[0] == 404
    # The same number over another protocol is another port.
    code, _ = api("POST", SVCS, svc("dns", {"name": "a", "port": 53}, {"name": "b", "port": 53, "protocol": "UDP"}))
    assert code == 201


def test_several_ports_must_each_be_named(sim: SimulatedCluster) -> None:
    code, out = Http(sim)("POST", SVCS, svc("unnamed", {"port": 80}, {"port": 443}))
    assert code == 422
    assert causes(out) == [("spec.ports[0].name", "Required value"), ("spec.ports[1].name", "Required value")]
    code, out = Http(sim)("POST", SVCS, svc("same-name", {"name": "web", "port": 80}, {"name": "web", "port": 443}))
    assert code == 422 and causes(out) == [("spec.ports[1].name", 'Duplicate value: "web"')]


def test_a_port_out_of_range_is_refused(sim: SimulatedCluster) -> None:
    code, out = Http(sim)("POST", SVCS, svc("big", {"port": 70000, "targetPort": 8080}))
    assert code == 422
    assert out["message"] == ('Service "big" is invalid: spec.ports[0].port: Invalid value: 70000: must be '
                              'between 1 and 65535, inclusive')
    # the defaulted target port is the port, and is checked too
    code, out = Http(sim)("POST", SVCS, svc("big2", {"port": 70000}))
    assert [f for f, _ in causes(out)] == ["spec.ports[0].port", "spec.ports[0].targetPort"]


def test_type_protocol_affinity_and_node_ports(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, out = api("POST", SVCS, svc("t", {"port": 80, "protocol": "HTTP"}, type="Magic",
                                      sessionAffinity="Sticky"))
    assert code == 422
    assert causes(out) == [
        ("spec.ports[0].protocol", 'Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"'),
        ("spec.sessionAffinity", 'Unsupported value: "Sticky": supported values: "ClientIP", "None"'),
        ("spec.type", 'Unsupported value: "Magic": supported values: "ClusterIP", "ExternalName", "LoadBalancer", '
                      '"NodePort"')]
    code, out = api("POST", SVCS, svc("np", {"port": 80, "nodePort": 30080}))
    assert code == 422 and causes(out) == [("spec.ports[0].nodePort",
                                            "Forbidden: may not be used when `type` is 'ClusterIP'")]
    code, out = api("POST", SVCS, svc("noports"))
    assert code == 422 and causes(out) == [("spec.ports", "Required value")]
    code, out = api("POST", SVCS, svc("ext", type="ExternalName"))
    assert code == 422 and causes(out) == [("spec.externalName", "Required value")]
    code, out = api("POST", SVCS, svc("lb", {"port": 10250}, type="LoadBalancer"))
    assert code == 422 and causes(out) == [("spec.ports[0]", "Invalid value: 10250: may not expose port 10250 "
                                                             "externally since it is used by kubelet")]


def test_an_update_is_validated_too(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, created = api("POST", SVCS, svc("upd", {"name": "a", "port": 80}))
    assert code == 201
    changed = copy.deepcopy(created)
    changed["spec"]["ports"].append({"name": "b", "port": 80, "protocol": "TCP", "targetPort": 80})
    code, out = api("PUT", f"{SVCS}/upd", changed)
    assert code == 422 and causes(out)[0][0] == "spec.ports[1]"
    code, out = api("PATCH", f"{SVCS}/upd", [{"op": "replace", "path": "/spec/ports/0/port", "value": 70000}],
                    ctype="application/json-patch+json")
    assert code == 422 and ("spec.ports[0].port", "Invalid value: 70000: must be between 1 and 65535, "
                                                  "inclusive") in causes(out)
    assert api("GET", f"{SVCS}/upd")[1]["spec"]["ports"] == created["spec"]["ports"]


def test_the_cluster_ip_may_not_change(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, created = api("POST", SVCS, svc("ip", {"port": 80}))
    assert code == 201
    ip = created["spec"]["clusterIP"]
    code, out = api("PATCH", f"{SVCS}/ip", {"spec": {"clusterIP": "10.96.0.250", "clusterIPs": ["10.96.0.250"]}},
                    ctype="application/merge-patch+json")
    assert code == 422
    assert out["message"] == ('Service "ip" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.0.250"}: '
                              'may not change once set')
    # sent again unchanged, or left out (kubectl apply), it is kept
    assert api("PUT", f"{SVCS}/ip", created)[0] == 200
    code, out = api("PATCH", f"{SVCS}/ip", {"spec": {"selector": {"app": "other"}}},
                    ctype="application/merge-patch+json")
    assert code == 200 and out["spec"]["clusterIP"] == ip
