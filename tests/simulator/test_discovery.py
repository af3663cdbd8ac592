"""Discovery as kube-apiserver answers it (``handlers/discovery.py``): the aggregated
``APIGroupDiscoveryList`` for client-go's Accept header, the legacy documents otherwise."""

from __future__ import annotations

import http.client
import json
import re
from typing import Any

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

# client-go's discovery client (discovery_client.go: AcceptV2, AcceptV2Beta1, then the legacy JSON)
CLIENT_GO = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
             "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json")


def get(sim: SimulatedCluster, path: str, headers: dict[str, str]) -> tuple[int, dict[str, str], Any]:
    api = Http(sim)
    conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=30)
    conn.request("GET", path, headers={"Authorization": f"Bearer {sim.token}", **headers})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, json.loads(body) if body else None


def resource(doc: dict[str, Any], group: str, version: str, plural: str) -> dict[str, Any]:
    item = next(i for i in doc["items"] if i["metadata"].get("name", "") == group)
    ver = next(v for v in item["versions"] if v["version"] == version)
    return next(r for r in ver["resources"] if r["resource"] == plural)  # type: ignore[no-any-return]


def test_aggregated_discovery_for_client_go(sim: SimulatedCluster) -> None:
    code, headers, doc = get(sim, "/apis", {"Accept": CLIENT_GO})
    assert code == 200
    assert headers["content-type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert doc["kind"] == "APIGroupDiscoveryList" and doc["apiVersion"] == "apidiscovery.k8s.io/v2"
    assert "" not in {i["metadata"].get("name", "") for i in doc["items"]}
    deployments = resource(doc, "apps", "v1", "deployments")
    assert deployments["responseKind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert deployments["scope"] == "Namespaced" and deployments["singularResource"] == "deployment"
    assert deployments["shortNames"] == ["deploy"] and "watch" in deployments["verbs"]
    assert {"subresource": "scale", "responseKind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "verbs": ["get", "patch", "update"]} in deployments["subresources"]
    events = next(i for i in doc["items"] if i["metadata"]["name"] == "events.k8s.io")
    assert events["versions"][0]["version"] == "v1" and events["versions"][0]["freshness"] == "Current"
    code, _, core = get(sim, "/api", {"Accept": CLIENT_GO})
    assert [i["metadata"] for i in core["items"]] == [{"creationTimestamp": None}]
    pods = resource(core, "", "v1", "pods")
    assert {s["subresource"] for s in pods["subresources"]} >= {"binding", "eviction", "status"}
    assert resource(core, "", "v1", "nodes")["scope"] == "Cluster"
    # revalidated by its ETag
    assert get(sim, "/apis", {"Accept": CLIENT_GO, "If-None-Match": headers["etag"]})[0] == 304


def test_legacy_discovery_without_the_aggregated_accept(sim: SimulatedCluster) -> None:
    code, headers, doc = get(sim, "/apis", {"Accept": "application/json"})
    assert code == 200 and headers["content-type"].startswith("application/json")
    assert "apidiscovery" not in headers["content-type"]
    assert doc["kind"] == "APIGroupList"
    code, _, doc = get(sim, "/api", {})
    assert doc["kind"] == "APIVersions"


@needs_kubectl
def test_kubectl_discovers_in_two_requests(kubectl: Kubectl) -> None:
    log = kubectl("get", "deployments", "-v=6").stderr
    # kubectl 1.37 logs requests structured ('verb="GET" url="https://..."'); older ones as "GET https://..."
    paths = re.findall(r'(?:GET |verb="GET" url=")https://[^/]+(/[^ ?"]*)', log)
    assert paths[:2] == ["/api", "/apis"] and paths[2] == "/apis/apps/v1/namespaces/default/deployments"
