"""Metadata-only answers (``transform.py``): the Accept headers client-go's metadata client sends (protobuf
first, then JSON) on a list, a get and a watch, answered as ``handlers/response.go`` transforms them."""

from __future__ import annotations

import http.client
import json
from typing import Any

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http

CMS = "/api/v1/namespaces/partial/configmaps"
# The test's own ConfigMaps: a namespace also holds the root CA publisher's kube-root-ca.crt.
OURS = {"labelSelector": "app"}
AS_LIST = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
AS_ONE = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
# k8s.io/client-go/metadata: the list's Accept, and the get's and the watch's
CLIENT_LIST = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,"
               "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
CLIENT_ONE = ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,"
              "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")


def setup_objects(api: Http) -> None:
    if api("GET", "/api/v1/namespaces/partial")[0] == 200:
        return
    api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "partial"}})
    for name in ("a", "b", "c"):
        code, _ = api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap",
                                    "metadata": {"name": name, "labels": {"app": name}}, "data": {"k": "secret"}})
        assert code == 201


def test_a_list_as_partial_object_metadata_list(sim: SimulatedCluster) -> None:
    api = Http(sim)
    setup_objects(api)
    for accept in (AS_LIST, CLIENT_LIST):
        code, out = api("GET", CMS, accept=accept, params=OURS)
        assert code == 200, out
        assert out["kind"] == "PartialObjectMetadataList" and out["apiVersion"] == "meta.k8s.io/v1"
        assert int(out["metadata"]["resourceVersion"]) > 0
        assert [i["metadata"]["name"] for i in out["items"]] == ["a", "b", "c"]
        first = out["items"][0]
        assert set(first) == {"kind", "apiVersion", "metadata"}
        assert first["kind"] == "PartialObjectMetadata" and first["apiVersion"] == "meta.k8s.io/v1"
        assert first["metadata"]["labels"] == {"app": "a"} and first["metadata"]["uid"]
    code, page = api("GET", CMS, accept=AS_LIST, params={**OURS, "limit": "2"})
    assert len(page["items"]) == 2 and page["metadata"]["remainingItemCount"] == 1 and page["metadata"]["continue"]
    code, rest = api("GET", CMS, accept=AS_LIST, params={**OURS, "limit": "2",
                                                            "continue": page["metadata"]["continue"]})
    assert [i["metadata"]["name"] for i in rest["items"]] == ["c"]
    code, beta = api("GET", CMS, accept="application/json;as=PartialObjectMetadataList;v=v1beta1;g=meta.k8s.io")
    assert beta["apiVersion"] == "meta.k8s.io/v1beta1" and beta["items"][0]["apiVersion"] == "meta.k8s.io/v1beta1"


def test_a_get_as_partial_object_metadata(sim: SimulatedCluster) -> None:
    api = Http(sim)
    setup_objects(api)
    code, out = api("GET", f"{CMS}/a", accept=CLIENT_ONE)
    assert code == 200
    assert out == {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": api("GET", f"{CMS}/a")[1]["metadata"]}


def test_the_wrong_form_is_not_acceptable(sim: SimulatedCluster) -> None:
    api = Http(sim)
    setup_objects(api)
    code, out = api("GET", CMS, accept=AS_ONE)
    assert code == 406 and out["reason"] == "NotAcceptable"
    assert out["message"] == ("you requested PartialObjectMetadata, but the requested object is a list "
                              "(*core.ConfigMapList)")
    code, out = api("GET", f"{CMS}/a", accept=AS_LIST)
    assert code == 406 and out["message"] == ("you requested PartialObjectMetadataList, but the requested object "
                                              "is not a list (*core.ConfigMap)")
    # a clause the server cannot meet is passed over
    code, out = api("GET", f"{CMS}/a", accept="application/json;as=Other;v=v1;g=meta.k8s.io,application/json")
    assert code == 200 and out["kind"] == "ConfigMap" and out["data"] == {"k": "secret"}


def test_a_watch_carries_partial_object_metadata(sim: SimulatedCluster) -> None:
    api = Http(sim)
    setup_objects(api)
    conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=30)
    conn.request("GET", "/api/v1/namespaces/partial/configmaps?watch=true&timeoutSeconds=1&labelSelector=app",
                 headers={"Authorization": f"Bearer {sim.token}", "Accept": CLIENT_ONE})
    resp = conn.getresponse()
    events: list[dict[str, Any]] = [json.loads(line) for line in resp.read().splitlines() if line.strip()]
    conn.close()
    assert resp.status == 200
    assert [e["type"] for e in events] == ["ADDED"] * 3
    assert all(set(e["object"]) == {"kind", "apiVersion", "metadata"} for e in events)
    assert {e["object"]["kind"] for e in events} == {"PartialObjectMetadata"}
    code, out = api("GET", CMS, accept=AS_LIST, params={"watch": "true"})
    assert code == 406 and "is not a list" in out["message"]
