"""``simulator/loader.py``: a dump loaded by ``cluster --load`` (``SimulatedCluster(load=...)``) and by
``simulate -f`` (``replay``) goes one way: kinds in the order kubectl users expect, and workloads keep
their dumped pods (adopted and counted by their controllers, not collected as orphans)."""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.simulate import SimulationReport, replay
from scheduler.profiles.crd import API_VERSION as PROFILE_API_VERSION
from scheduler.profiles.crd import crd as profiles_crd
from scheduler.profiles.crd import profiles_path
from scheduler.simulator import ApiError, SimulatedCluster
from tests.simulator.helpers import Http, node, started

Obj = dict[str, Any]
NS = "shop"
OPTS: dict[str, Any] = {"pod_running_after": 0.05, "pod_completion_seconds": 3600.0}


def _labels(app: str) -> Obj:
    return {"matchLabels": {"app": app}}


def _template(app: str) -> Obj:
    return {"metadata": {"labels": {"app": app}},
            "spec": {"containers": [{"name": "c", "image": "busybox:1.36",
                                     "resources": {"requests": {"cpu": "100m"}}}]}}


WORKLOADS: list[tuple[str, str, Obj]] = [
    ("/apis/apps/v1", "replicasets", {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
                                      "spec": {"replicas": 3, "selector": _labels("web"),
                                               "template": _template("web")}}),
    ("/apis/apps/v1", "daemonsets", {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "agent"},
                                     "spec": {"selector": _labels("agent"), "template": _template("agent")}}),
    ("/apis/apps/v1", "statefulsets", {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "db"},
                                       "spec": {"replicas": 2, "serviceName": "db", "selector": _labels("db"),
                                                "podManagementPolicy": "Parallel", "template": _template("db")}}),
    ("/apis/batch/v1", "jobs", {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "batch"},
                                "spec": {"parallelism": 2, "completions": 2,
                                         "template": {**_template("batch"),
                                                      "spec": {**_template("batch")["spec"],
                                                               "restartPolicy": "Never"}}}}),
]
WANT_PODS = {"ReplicaSet": 3, "DaemonSet": 2, "StatefulSet": 2, "Job": 2}


def _poll(check: Callable[[], bool], seconds: float = 20.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def _pods(api: Http) -> list[Obj]:
    return list(api("GET", f"/api/v1/namespaces/{NS}/pods")[1]["items"])


def _bind_all(api: Http) -> bool:
    """Bind every unbound pod (a daemon pod to its node, the rest to n1 and n2 in turn), as a scheduler
    would; True once every pod runs."""
    pods = _pods(api)
    for i, p in enumerate(pods):
        if p["spec"].get("nodeName"):
            continue
        terms = (p["spec"].get("affinity") or {}).get("nodeAffinity", {}).get(
            "requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms") or []
        target = terms[0]["matchFields"][0]["values"][0] if terms else f"n{i % 2 + 1}"
        name = p["metadata"]["name"]
        api("POST", f"/api/v1/namespaces/{NS}/pods/{name}/binding",
            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": name},
             "target": {"apiVersion": "v1", "kind": "Node", "name": target}})
    return len(pods) == sum(WANT_PODS.values()) and all(p["status"].get("phase") == "Running" for p in pods)


@pytest.fixture(scope="module")
def dump() -> list[Obj]:
    """A live cluster's workloads with their running pods, dumped as ``kubectl get all -o yaml`` lists
    them: pods first, the controllers after them, the nodes and the namespace last."""
    with started(**OPTS) as c:
        api = Http(c)
        for n in ("n1", "n2"):
            assert api("POST", "/api/v1/nodes", node(n))[0] == 201
        assert api("POST", "/api/v1/namespaces", {"metadata": {"name": NS}})[0] == 201
        for prefix, plural, body in WORKLOADS:
            assert api("POST", f"{prefix}/namespaces/{NS}/{plural}", body)[0] == 201, plural
        _poll(lambda: _bind_all(api))
        # a list's items carry no kind and apiVersion: kubectl's dump names them
        out = [{**p, "apiVersion": "v1", "kind": "Pod"} for p in _pods(api)]
        for prefix, plural, body in WORKLOADS:
            out += [{**o, "apiVersion": body["apiVersion"], "kind": body["kind"]}
                    for o in api("GET", f"{prefix}/namespaces/{NS}/{plural}")[1]["items"]]
        out += [{**n, "apiVersion": "v1", "kind": "Node"} for n in api("GET", "/api/v1/nodes")[1]["items"]]
        out.append(api("GET", f"/api/v1/namespaces/{NS}")[1])
    return out


@contextlib.contextmanager
def _cluster_load(tmp_path: Path, objects: list[Obj]) -> Iterator[SimulatedCluster]:
    """``kopf-scheduler cluster --load dump.yaml``: the CLI builds the cluster so."""
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    with started(load=[f], crds=[profiles_crd()], **OPTS) as c:
        yield c


@contextlib.contextmanager
def _simulate_load(tmp_path: Path, objects: list[Obj]) -> Iterator[SimulatedCluster]:
    """``kopf-scheduler simulate -f dump.yaml``: ``replay`` into a started cluster (its refusals put where
    ``cluster --load`` puts them)."""
    with started(**OPTS) as c:
        report = SimulationReport()
        replay(c, objects, report)
        c.rejected = [(r, ApiError(r["code"], "", r["message"])) for r in report.rejected]
        yield c


WAYS = pytest.mark.parametrize("way", [_cluster_load, _simulate_load], ids=["cluster-load", "simulate"])


@WAYS
def test_a_dumps_workloads_keep_their_pods(way: Any, dump: list[Obj], tmp_path: Path) -> None:
    dumped = {p["metadata"]["name"]: p for p in dump if p["kind"] == "Pod"}
    owners = {o["metadata"]["uid"]: o for o in dump if o["kind"] in WANT_PODS}
    assert len(dumped) == 9 and len(owners) == 4
    with way(tmp_path, dump) as c:
        api = Http(c)
        assert c.rejected == []

        live = {body["kind"]: api("GET", f"{prefix}/namespaces/{NS}/{plural}/{body['metadata']['name']}")[1]
                for prefix, plural, body in WORKLOADS}

        def same_pods() -> None:
            pods = _pods(api)
            assert sorted(p["metadata"]["name"] for p in pods) == sorted(dumped)
            for p in pods:
                assert not p["metadata"].get("deletionTimestamp"), p["metadata"]["name"]
                (ref,) = p["metadata"]["ownerReferences"]
                want = dumped[p["metadata"]["name"]]["metadata"]["ownerReferences"][0]
                assert (ref["kind"], ref["name"], ref["uid"], ref.get("controller")) == \
                       (want["kind"], want["name"], live[want["kind"]]["metadata"]["uid"], True)
        # the controllers and the garbage collector sync within a few loop turns of the load; nothing
        # they do may create, replace or delete a pod, for a window well past that
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            same_pods()
            time.sleep(0.1)
        assert {o["metadata"]["uid"] for o in live.values()} == set(owners)      # a restore keeps the dump's uids
        counts = {kind: sum(1 for p in _pods(api) if p["metadata"]["ownerReferences"][0]["kind"] == kind)
                  for kind in WANT_PODS}
        assert counts == WANT_PODS
        rs = api("GET", f"/apis/apps/v1/namespaces/{NS}/replicasets/web")[1]
        assert rs["status"]["replicas"] == 3


def _kubectl_ordered_dump() -> list[Obj]:
    """A namespace's objects as ``kubectl get`` lists kinds (alphabetically, pods early), each before
    what it depends on: pods before their PriorityClass, namespace, claims and ServiceAccount; a custom
    resource and a SchedulingProfile before any CRD."""
    pvc_uid = str(uuid.uuid4())
    return [
        {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "team"},
         "spec": {"size": 3}},
        *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"p{i}", "namespace": "team"},
           "spec": {"priorityClassName": "high", "serviceAccountName": "runner",
                    "containers": [{"name": "c", "image": "busybox:1.36"}],
                    "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]}}
          for i in range(9)],
        {"apiVersion": "v1", "kind": "PersistentVolumeClaim",
         "metadata": {"name": "data", "namespace": "team", "uid": pvc_uid},
         "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteMany"],
                  "resources": {"requests": {"storage": "1Gi"}}}},
        {"apiVersion": PROFILE_API_VERSION, "kind": "SchedulingProfile", "metadata": {"name": "batch"},
         "spec": {"schedulerName": "batch-scheduler"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "runner", "namespace": "team"}},
        {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "pv1"},
         "spec": {"storageClassName": "fast", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "1Gi"},
                  "hostPath": {"path": "/data"},
                  "claimRef": {"namespace": "team", "name": "data", "uid": pvc_uid}}},
        {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
         "metadata": {"name": "widgets.example.com"},
         "spec": {"group": "example.com", "scope": "Namespaced",
                  "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
                  "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                      "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kube-system"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"},
         "value": 1000},
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "metadata": {"name": "fast"},
         "provisioner": "example.com/fast", "volumeBindingMode": "WaitForFirstConsumer"},
    ]


@WAYS
def test_a_dump_in_kubectls_order_loads_with_nothing_refused(way: Any, tmp_path: Path) -> None:
    with way(tmp_path, _kubectl_ordered_dump()) as c:
        api = Http(c)
        assert c.rejected == []
        pods = api("GET", "/api/v1/namespaces/team/pods")[1]["items"]
        assert len(pods) == 9 and {p["spec"]["priority"] for p in pods} == {1000}    # the class admitted them
        assert api("GET", "/apis/example.com/v1/namespaces/team/widgets/w")[1]["spec"] == {"size": 3}
        profile = api("GET", f"{profiles_path()}/batch")[1]
        assert profile["spec"]["schedulerName"] == "batch-scheduler"       # the dump's profile, CRD installed
        pv = api("GET", "/api/v1/persistentvolumes/pv1")[1]
        pvc = api("GET", "/api/v1/namespaces/team/persistentvolumeclaims/data")[1]
        assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
