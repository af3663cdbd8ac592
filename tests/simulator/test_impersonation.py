"""Impersonation and per-request authorization (``impersonation.py``, ``requestinfo.py``, ``auth.py``):
``kubectl --as`` runs a request as the user it names, once the requester is allowed the ``impersonate``
verb, and every request is decided by RBAC for whoever it runs as, with upstream's 403 texts
(``filters/impersonation.go``, ``responsewriters.Forbidden``)."""

from __future__ import annotations

import http.client
import json
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.auth import UserInfo
from scheduler.simulator.requestinfo import request_attributes
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

RBAC = "/apis/rbac.authorization.k8s.io/v1"
PODS = "/api/v1/namespaces/default/pods"
WHOAMI = "/apis/authentication.k8s.io/v1/selfsubjectreviews"


def raw(sim: SimulatedCluster, method: str, path: str, headers: list[tuple[str, str]], token: str | None = None,
        body: Any = None) -> tuple[int, Any]:
    """A request with repeated headers (several Impersonate-Group), which ``Http`` cannot send."""
    api = Http(sim)
    conn = http.client.HTTPSConnection(api.host, api.port, context=api.ctx, timeout=30)
    conn.putrequest(method, path)
    conn.putheader("Authorization", f"Bearer {token or sim.token}")
    data = json.dumps(body).encode() if body is not None else b""
    if body is not None:
        conn.putheader("Content-Type", "application/json")
    conn.putheader("Content-Length", str(len(data)))
    for k, v in headers:
        conn.putheader(k, v)
    conn.endheaders(data)
    resp = conn.getresponse()
    out = json.loads(resp.read())
    conn.close()
    return resp.status, out


def whoami(sim: SimulatedCluster, headers: list[tuple[str, str]], token: str | None = None) -> tuple[int, Any]:
    return raw(sim, "POST", WHOAMI, headers, token, {"apiVersion": "authentication.k8s.io/v1",
                                                      "kind": "SelfSubjectReview"})


def grant(api: Http, name: str, rules: list[dict[str, Any]], subject: dict[str, str]) -> None:
    assert api("POST", f"{RBAC}/clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                                "metadata": {"name": name}, "rules": rules})[0] == 201
    assert api("POST", f"{RBAC}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", **subject}]})[0] == 201


def test_an_impersonated_user_is_refused_what_rbac_refuses_it(sim: SimulatedCluster) -> None:
    code, out = raw(sim, "GET", PODS, [("Impersonate-User", "jane")])
    assert code == 403 and out["reason"] == "Forbidden"
    assert out["message"] == ('pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the '
                              'namespace "default"')
    assert out["details"] == {"kind": "pods"}
    code, out = raw(sim, "GET", "/apis/apps/v1/namespaces/kube-system/deployments/coredns",
                    [("Impersonate-User", "jane")])
    assert code == 403 and out["message"] == (
        'deployments.apps "coredns" is forbidden: User "jane" cannot get resource "deployments" in API group '
        '"apps" in the namespace "kube-system"')
    # discovery is every authenticated user's (system:discovery)
    assert raw(sim, "GET", "/apis", [("Impersonate-User", "jane")])[0] == 200
    code, out = raw(sim, "GET", "/metrics", [("Impersonate-User", "jane")])
    assert code == 403 and out["message"] == 'forbidden: User "jane" cannot get path "/metrics"'


def test_the_admin_impersonates_and_the_request_runs_as_the_impersonated(sim: SimulatedCluster) -> None:
    code, out = whoami(sim, [("Impersonate-User", "system:admin"), ("Impersonate-Group", "system:masters"),
                             ("Impersonate-Group", "ops"), ("Impersonate-Uid", "u-7"),
                             ("Impersonate-Extra-Scopes", "view"), ("Impersonate-Extra-Scopes", "edit")])
    assert code == 201
    assert out["status"]["userInfo"] == {"username": "system:admin", "uid": "u-7",
                                         "groups": ["system:masters", "ops", "system:authenticated"],
                                         "extra": {"scopes": ["view", "edit"]}}
    assert raw(sim, "GET", PODS, [("Impersonate-User", "system:admin"),
                                  ("Impersonate-Group", "system:masters")])[0] == 200
    # a service account: its own groups, when none are asked for
    code, out = whoami(sim, [("Impersonate-User", "system:serviceaccount:kube-system:builder")])
    assert out["status"]["userInfo"]["groups"] == ["system:serviceaccounts", "system:serviceaccounts:kube-system",
                                                   "system:authenticated"]
    code, out = raw(sim, "GET", PODS, [("Impersonate-Group", "system:masters")])
    assert code == 400 and out["message"] == "requested [{Group  system:masters    }] without impersonating a user"


def test_impersonating_needs_the_impersonate_verb(sim: SimulatedCluster) -> None:
    api = Http(sim)
    sim.server.add_token("dev-token", UserInfo("dev", "", ("system:authenticated",)))
    code, out = whoami(sim, [("Impersonate-User", "jane")], token="dev-token")
    assert code == 403 and out["message"] == ('users "jane" is forbidden: User "dev" cannot impersonate resource '
                                              '"users" in API group "" at the cluster scope')
    assert out["details"] == {"name": "jane", "kind": "users"}
    grant(api, "impersonate-jane", [{"apiGroups": [""], "resources": ["users"], "verbs": ["impersonate"],
                                     "resourceNames": ["jane"]}], {"kind": "User", "name": "dev"})
    code, out = whoami(sim, [("Impersonate-User", "jane")], token="dev-token")
    assert code == 201 and out["status"]["userInfo"] == {"username": "jane", "groups": ["system:authenticated"]}
    code, out = whoami(sim, [("Impersonate-User", "jane"), ("Impersonate-Group", "system:masters")],
                       token="dev-token")
    assert code == 403 and out["message"].startswith('groups "system:masters" is forbidden: User "dev" cannot '
                                                     'impersonate resource "groups"')
    code, out = whoami(sim, [("Impersonate-User", "jane"), ("Impersonate-Uid", "u-1")], token="dev-token")
    assert code == 403 and out["message"] == (
        'uids.authentication.k8s.io "u-1" is forbidden: User "dev" cannot impersonate resource "uids" in API group '
        '"authentication.k8s.io" at the cluster scope')
    code, out = whoami(sim, [("Impersonate-User", "jane"), ("Impersonate-Extra-Scopes", "view")], token="dev-token")
    assert code == 403 and out["message"] == (
        'userextras.authentication.k8s.io "view" is forbidden: User "dev" cannot impersonate resource '
        '"userextras/scopes" in API group "authentication.k8s.io" at the cluster scope')
    # dev itself may list nothing: its token is authorised as dev
    code, out = raw(sim, "GET", PODS, [], token="dev-token")
    assert code == 403 and 'User "dev" cannot list resource "pods"' in out["message"]


@needs_kubectl
def test_kubectl_as(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    p = kubectl("get", "pods", "--as=jane", check=False)
    assert p.returncode == 1
    assert ('Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" '
            'in the namespace "default"') in p.stderr
    kubectl("get", "pods", "--as=system:admin", "--as-group=system:masters")
    grant(Http(sim), "pod-reader", [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]}],
          {"kind": "User", "name": "jane"})
    kubectl("get", "pods", "--as=jane")
    assert kubectl("auth", "can-i", "list", "pods", "--as=jane").stdout.strip() == "yes"
    p = kubectl("auth", "can-i", "delete", "pods", "--as=jane", check=False)
    assert p.returncode == 1 and p.stdout.strip() == "no"


@needs_kubectl
def test_kubectl_auth_can_i_list(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    lines = kubectl("auth", "can-i", "--list").stdout.splitlines()
    assert lines[0].split() == ["Resources", "Non-Resource", "URLs", "Resource", "Names", "Verbs"]
    assert ["*.*", "[]", "[]", "[*]"] in [line.split() for line in lines]              # cluster-admin
    lines = kubectl("auth", "can-i", "--list", "--as=nobody").stdout.splitlines()
    rows = [line.split() for line in lines]
    assert ["selfsubjectaccessreviews.authorization.k8s.io", "[]", "[]", "[create]"] in rows
    assert ["[/api/*]", "[]", "[get]"] in rows
    assert not any(r[0] == "*.*" for r in rows)


def test_rules_review_needs_a_namespace(sim: SimulatedCluster) -> None:
    code, out = Http(sim)("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews", {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview", "spec": {}})
    assert code == 400 and out["message"] == "no namespace on request"


# (case, method, path, query, attributes, resource request)
ATTRIBUTES = [
    ("list", "GET", "/api/v1/namespaces/a/pods", {}, {"verb": "list", "group": "", "version": "v1",
                                                      "resource": "pods", "namespace": "a"}, True),
    ("watch", "GET", "/apis/apps/v1/deployments", {"watch": "true"},
     {"verb": "watch", "group": "apps", "version": "v1", "resource": "deployments", "namespace": ""}, True),
    ("get by field selector", "GET", "/api/v1/namespaces/a/pods", {"fieldSelector": "metadata.name=p"},
     {"verb": "list", "group": "", "version": "v1", "resource": "pods", "namespace": "a", "name": "p"}, True),
    ("subresource", "POST", "/api/v1/namespaces/a/pods/p/binding", {},
     {"verb": "create", "group": "", "version": "v1", "resource": "pods", "namespace": "a", "name": "p",
      "subresource": "binding"}, True),
    ("a namespace", "PUT", "/api/v1/namespaces/a", {},
     {"verb": "update", "group": "", "version": "v1", "resource": "namespaces", "namespace": "a", "name": "a"}, True),
    ("namespace finalize", "PUT", "/api/v1/namespaces/a/finalize", {},
     {"verb": "update", "group": "", "version": "v1", "resource": "namespaces", "namespace": "a", "name": "a",
      "subresource": "finalize"}, True),
    ("collection", "DELETE", "/api/v1/namespaces/a/configmaps", {},
     {"verb": "deletecollection", "group": "", "version": "v1", "resource": "configmaps", "namespace": "a"}, True),
    ("group version", "GET", "/apis/apps/v1", {}, {"verb": "get", "path": "/apis/apps/v1"}, False),
    ("legacy group version", "GET", "/api/v1", {}, {"verb": "get", "path": "/api/v1"}, False),
    ("openapi", "GET", "/openapi/v2", {}, {"verb": "get", "path": "/openapi/v2"}, False),
]


@pytest.mark.parametrize("case,method,path,query,want,resource", ATTRIBUTES, ids=[a[0] for a in ATTRIBUTES])
def test_request_attributes(case: str, method: str, path: str, query: dict[str, str], want: dict[str, Any],
                            resource: bool) -> None:
    assert request_attributes(method, path, query) == (want, resource)
