"""OpenAPI, request media types and object names as kube-apiserver serves them (issue #16): the documents
kubectl's validation, ``apply`` and ``explain`` read, protobuf request bodies from client-go's typed
clients, and each kind's name rule (``ValidateObjectMeta`` with the kind's name validator)."""

from __future__ import annotations

import copy
import http.client
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

REPO = Path(__file__).resolve().parents[2]
PROTOBUF = "application/vnd.kubernetes.protobuf"


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 37}


def get(sim: SimulatedCluster, path: str, headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    """A GET that shows the response headers (ETag, Location, Cache-Control)."""
    api = Http(sim)
    conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=30)
    conn.request("GET", path, headers={"Authorization": f"Bearer {sim.token}", **(headers or {})})
    resp = conn.getresponse()
    body = resp.read()
    conn.close()
    return resp.status, {k.lower(): v for k, v in resp.getheaders()}, body


# ---- OpenAPI v3 ---------------------------------------------------------------------------------------
def test_v3_discovery_names_every_group_version_with_its_hash(sim: SimulatedCluster) -> None:
    code, _, body = get(sim, "/openapi/v3")
    paths = json.loads(body)["paths"]
    assert code == 200
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/rbac.authorization.k8s.io/v1", "apis/policy/v1",
            "apis/events.k8s.io/v1", "apis/coordination.k8s.io/v1"} <= paths.keys()
    assert paths["apis/apps/v1"]["serverRelativeURL"].startswith("/openapi/v3/apis/apps/v1?hash=")


def test_a_group_version_document_has_kubectls_patch_operation_and_the_schemas(sim: SimulatedCluster) -> None:
    url = json.loads(get(sim, "/openapi/v3")[2])["paths"]["apis/apps/v1"]["serverRelativeURL"]
    code, headers, body = get(sim, url)
    doc = json.loads(body)
    assert code == 200 and headers["cache-control"] == "public, immutable, max-age=31536000"
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    # kubectl leaves validation to the server when the PATCH takes fieldValidation, and computes a
    # strategic merge patch when it accepts one (built-in kinds).
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "version": "v1", "kind": "Deployment"}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" in patch["requestBody"]["content"]
    deployment = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert "spec" in deployment["properties"]
    assert "io.k8s.api.core.v1.PodSpec" in doc["components"]["schemas"]          # the closure of refs


def test_a_stale_hash_is_redirected_and_an_etag_revalidates(sim: SimulatedCluster) -> None:
    code, headers, _ = get(sim, "/openapi/v3/api/v1?hash=STALE")
    assert code == 301 and headers["location"].startswith("/openapi/v3/api/v1?hash=")
    code, headers, _ = get(sim, "/openapi/v3/api/v1")
    assert code == 200 and headers["cache-control"] == "no-cache, private"
    assert get(sim, "/openapi/v3/api/v1", {"If-None-Match": headers["etag"]})[0] == 304
    assert get(sim, "/openapi/v3/apis/nothing.example.com/v1")[0] == 404


def test_a_crd_schema_appears_in_its_group_version_document(sim: SimulatedCluster, api: Http) -> None:
    crd = yaml.safe_load((REPO / "crds" / "schedulingprofile.yaml").read_text())
    assert api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    code, _, body = get(sim, "/openapi/v3/apis/scheduling.kopf-scheduler.io/v1alpha1")
    schemas = json.loads(body)["components"]["schemas"]
    profile = schemas["io.kopf-scheduler.scheduling.v1alpha1.SchedulingProfile"]
    assert code == 200 and {"apiVersion", "kind", "metadata", "spec"} <= profile["properties"].keys()
    # Custom resources take no strategic merge patch.
    patch = json.loads(body)["paths"][
        "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles/{name}"]["patch"]
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]


def test_v2_is_json_or_gnostic_protobuf_and_refuses_an_accept_it_cannot_meet(sim: SimulatedCluster) -> None:
    # client-go's OpenAPISchema() asks for gnostic protobuf only, and kube-openapi serves it (issue #34).
    code, headers, proto = get(sim, "/openapi/v2",
                               {"Accept": "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"})
    assert code == 200 and headers["content-type"] == "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    assert proto.startswith(b"\x0a\x032.0\x12")          # Document.swagger = "2.0", then Document.info
    assert b"io.k8s.api.core.v1.Pod" in proto
    code, json_headers, body = get(sim, "/openapi/v2", {"Accept": "application/json"})
    doc = json.loads(body)
    assert code == 200 and doc["swagger"] == "2.0" and "io.k8s.api.core.v1.Pod" in doc["definitions"]
    assert json_headers["etag"] == headers["etag"]          # one document, one ETag, as kube-openapi's caches
    assert get(sim, "/openapi/v2", {"Accept": "text/html"})[0] == 406
    assert get(sim, "/openapi/v2", {"Accept": "text/html, */*;q=0.1"})[0] == 200


# ---- protobuf request bodies ------------------------------------------------------------------------
def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        b, n = n & 0x7F, n >> 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def _field(num: int, payload: bytes) -> bytes:
    return _varint(num << 3 | 2) + _varint(len(payload)) + payload


def configmap_protobuf(name: str, data: dict[str, str]) -> bytes:
    """What client-go's typed client sends for a ConfigMap: the ``k8s\\0`` envelope (runtime.Unknown:
    typeMeta=1, raw=2) around the generated message (metadata=1 with name=1; data=2 as map entries)."""
    meta = _field(1, _field(1, name.encode()))
    entries = b"".join(_field(2, _field(1, k.encode()) + _field(2, v.encode())) for k, v in data.items())
    type_meta = _field(1, b"v1") + _field(2, b"ConfigMap")
    return b"k8s\x00" + _field(1, type_meta) + _field(2, meta + entries) + _field(4, PROTOBUF.encode())


def test_a_protobuf_body_of_a_built_in_kind_is_read(api: Http) -> None:
    code, body = api("POST", "/api/v1/namespaces/default/configmaps", raw=configmap_protobuf("pb", {"a": "b"}),
                     ctype=PROTOBUF)
    assert code == 201, body
    assert api("GET", "/api/v1/namespaces/default/configmaps/pb")[1]["data"] == {"a": "b"}


@pytest.mark.parametrize(("name", "raw"), [
    ("no magic", b"\x0a\x02v1"),
    ("truncated", configmap_protobuf("pb2", {"a": "b"})[:-9]),
    ("illegal wire type", b"k8s\x00\x0f"),
])
def test_a_malformed_protobuf_body_is_400_never_500(api: Http, name: str, raw: bytes) -> None:
    code, body = api("POST", "/api/v1/namespaces/default/configmaps", raw=raw, ctype=PROTOBUF)
    assert (code, body["reason"]) == (400, "BadRequest"), name


def test_protobuf_is_advertised_only_where_it_is_read(sim: SimulatedCluster, api: Http) -> None:
    code, body = api("POST", "/api/v1/namespaces/default/configmaps", raw=b"<x/>", ctype="application/xml")
    assert (code, body["reason"]) == (415, "UnsupportedMediaType")
    assert body["message"].endswith("accepted media types include: application/json, application/yaml, "
                                    "application/vnd.kubernetes.protobuf")
    crd = yaml.safe_load((REPO / "crds" / "schedulingprofile.yaml").read_text())
    api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    code, body = api("POST", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles",
                     raw=b"k8s\x00", ctype=PROTOBUF)
    assert code == 415 and body["message"].endswith("include: application/json, application/yaml")


# ---- names ------------------------------------------------------------------------------------------
SUBDOMAIN = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
             "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
             "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
DNS1035 = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
           "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for "
           "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')")


def obj(api_version: str, kind: str, name: str, **rest: Any) -> dict[str, Any]:
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name}, **rest}


RBAC = "/apis/rbac.authorization.k8s.io/v1"
# (case, collection, body, the 422's message or None when accepted)
NAMES = [
    # ValidateRBACName is path.IsValidPathSegmentName: "system:auth-delegator"-style names are fine.
    ("rbac name with a colon", f"{RBAC}/clusterroles", obj("rbac.authorization.k8s.io/v1", "ClusterRole",
                                                           "kopf:reader"), None),
    ("rbac name with a slash", f"{RBAC}/clusterroles", obj("rbac.authorization.k8s.io/v1", "ClusterRole", "a/b"),
     'Invalid value: "a/b": may not contain \'/\''),
    ("rbac name ..", f"{RBAC}/namespaces/default/roles", obj("rbac.authorization.k8s.io/v1", "Role", ".."),
     "Invalid value: \"..\": may not be '..'"),
    # ValidateServiceName is a DNS-1035 label: no leading digit.
    ("service name with a leading digit", "/api/v1/namespaces/default/services",
     obj("v1", "Service", "1svc", spec={"ports": [{"port": 80}]}), f'Invalid value: "1svc": {DNS1035}'),
    ("service name", "/api/v1/namespaces/default/services", obj("v1", "Service", "svc-1", spec={"ports": [
        {"port": 80}]}), None),
    ("configmap name with a colon", "/api/v1/namespaces/default/configmaps", obj("v1", "ConfigMap", "a:b"),
     f'Invalid value: "a:b": {SUBDOMAIN}'),
    ("service account", "/api/v1/namespaces/default/serviceaccounts", obj("v1", "ServiceAccount", "sa.1"), None),
    ("secret", "/api/v1/namespaces/default/secrets", obj("v1", "Secret", "s1", stringData={"a": "b"}), None),
    ("deployment with an upper-case name", "/apis/apps/v1/namespaces/default/deployments",
     obj("apps/v1", "Deployment", "Web", spec={
         "selector": {"matchLabels": {"app": "web"}},
         "template": {"metadata": {"labels": {"app": "web"}},
                      "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}),
     f'Invalid value: "Web": {SUBDOMAIN}'),
]


@pytest.mark.parametrize(("case", "path", "body", "want"), NAMES, ids=[n[0] for n in NAMES])
def test_each_kind_validates_its_name_by_its_rule(api: Http, case: str, path: str, body: dict[str, Any],
                                                  want: str | None) -> None:
    code, out = api("POST", path, body)
    if want is None:
        assert code == 201, out
    else:
        assert (code, out["reason"]) == (422, "Invalid"), out
        assert [c["message"] for c in out["details"]["causes"]] == [want]


# ---- response media types ---------------------------------------------------------------------------
@pytest.mark.parametrize(("accept", "code", "ctype"), [
    ("", 200, "application/json"),
    ("application/vnd.kubernetes.protobuf,application/json", 200, "application/json"),   # client-go's
    ("application/json;as=Table;v=v1;g=meta.k8s.io,application/json", 200, "application/json"),
    ("application/yaml", 200, "application/yaml"),
    ("application/json;q=0.5,application/yaml", 200, "application/yaml"),
    ("*/*", 200, "application/json"),
    ("application/xml", 406, "application/json"),
    ("application/vnd.kubernetes.protobuf", 406, "application/json"),
])
def test_responses_are_negotiated(sim: SimulatedCluster, accept: str, code: int, ctype: str) -> None:
    got, headers, body = get(sim, "/api/v1/namespaces", {"Accept": accept} if accept else None)
    assert (got, headers["content-type"].split(";")[0]) == (code, ctype)
    if ctype == "application/yaml":
        assert yaml.safe_load(body)["kind"] == "NamespaceList"
    if code == 406:
        assert json.loads(body)["message"] == ("only the following media types are accepted: application/json, "
                                               "application/yaml")


def test_a_watch_is_json_only(sim: SimulatedCluster) -> None:
    code, _, body = get(sim, "/api/v1/namespaces?watch=true&timeoutSeconds=1", {"Accept": "application/yaml"})
    assert code == 406 and "application/json;stream=watch" in json.loads(body)["message"]


def test_kubectl_get_o_yaml_reads_either(sim: SimulatedCluster) -> None:
    # kubectl itself asks for JSON (or a Table); a client asking for YAML gets YAML of the same object.
    _, _, as_json = get(sim, "/api/v1/namespaces/default")
    _, _, as_yaml = get(sim, "/api/v1/namespaces/default", {"Accept": "application/yaml"})
    assert yaml.safe_load(as_yaml) == json.loads(as_json)


# --- unknown fields: clean top-level subtrees are remembered, unknown ones always found -----------
def test_a_remembered_clean_spec_never_hides_an_unknown_field() -> None:
    from scheduler.simulator.openapi import FieldChecker
    checker = FieldChecker()
    clean = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
    assert checker.unknown("io.k8s.api.core.v1.Pod", copy.deepcopy(clean), drop=True) == []
    assert len(checker._clean) == 2                      # metadata and spec
    for _ in range(2):                                   # and again: what is unknown is never remembered
        body = copy.deepcopy(clean)
        body["spec"]["containers"][0]["colour"] = "red"
        body["spec"]["bogus"] = 1
        assert checker.unknown("io.k8s.api.core.v1.Pod", body, drop=True) == ["spec.containers[0].colour",
                                                                              "spec.bogus"]
        assert body == clean
    assert checker.unknown("io.k8s.api.core.v1.Pod", {**copy.deepcopy(clean), "extra": 1}) == ["extra"]
    for i in range(FieldChecker.CLEAN_MAX + 5):
        checker.unknown("io.k8s.api.core.v1.Pod", {"metadata": {"name": f"p{i}"}})
    assert len(checker._clean) <= FieldChecker.CLEAN_MAX


# ---- kubectl on top of OpenAPI v2 (issue #34) ---------------------------------------------------------
SAR = """apiVersion: authorization.k8s.io/v1
kind: SubjectAccessReview
spec:
  user: jane
  resourceAttributes: {verb: get, resource: pods}
"""


@needs_kubectl
def test_kubectl_creates_a_subject_access_review(kubectl: Kubectl) -> None:
    out = yaml.safe_load(kubectl("create", "-f", "-", "-o", "yaml", stdin=SAR).stdout)
    assert out["kind"] == "SubjectAccessReview" and out["status"] == {"allowed": False}


@needs_kubectl
def test_kubectl_names_an_unknown_kind(kubectl: Kubectl) -> None:
    for verb in ("apply", "create"):
        p = kubectl(verb, "-f", "-", stdin="apiVersion: x/v1\nkind: Foo\nmetadata:\n  name: a\n", check=False)
        assert p.returncode == 1
        assert 'no matches for kind "Foo" in version "x/v1"' in p.stderr, p.stderr


@needs_kubectl
def test_kubectl_explains_from_the_v2_protobuf(kubectl: Kubectl) -> None:
    out = kubectl("explain", "nodes.spec", "--output=plaintext-openapiv2", "--recursive").stdout
    assert "KIND:     Node" in out and "RESOURCE: spec <Object>" in out
    assert "taints\t<[]Object>" in out and "effect\t<string>" in out
