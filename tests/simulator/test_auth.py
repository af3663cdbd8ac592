"""The simulated cluster's TokenReview, SubjectAccessReview, SelfSubjectAccessReview and
SelfSubjectReview, and the RBAC rules they are decided by (upstream's
``plugin/pkg/auth/authorizer/rbac/rbac_test.go`` and ``rbac/v1/evaluation_helpers.go`` matching)."""

from __future__ import annotations

import time
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.auth import UserInfo, authorize
from tests.simulator.helpers import Http

RBAC = "/apis/rbac.authorization.k8s.io/v1"


def review(http: Http, kind: str, spec: dict[str, Any]) -> tuple[int, Any]:
    group = "authentication.k8s.io" if kind.endswith("Review") and "Access" not in kind else "authorization.k8s.io"
    plural = kind.lower() + "s"
    return http("POST", f"/apis/{group}/v1/{plural}", {"apiVersion": f"{group}/v1", "kind": kind, "spec": spec})


def test_token_review(sim: SimulatedCluster) -> None:
    http = Http(sim)
    code, out = review(http, "TokenReview", {"token": sim.token})
    assert code == 201 and out["status"]["authenticated"] is True
    assert "system:masters" in out["status"]["user"]["groups"]
    sim.server.add_token("dev-token", UserInfo("dev", "u-1", ("devs", "system:authenticated")))
    sim.server.add_token("old-token", UserInfo("old"), until=time.time() - 1)
    code, out = review(http, "TokenReview", {"token": "dev-token"})
    assert out["status"]["user"] == {"username": "dev", "uid": "u-1", "groups": ["devs", "system:authenticated"]}
    for token in ("old-token", "nobody"):
        code, out = review(http, "TokenReview", {"token": token})
        assert code == 201 and not out["status"].get("authenticated")
    code, out = review(http, "TokenReview", {})
    assert code == 422 and out["details"]["causes"][0]["field"] == "spec.token"


def test_reviews_are_not_stored_and_only_created(sim: SimulatedCluster) -> None:
    http = Http(sim)
    code, _ = http("GET", "/apis/authentication.k8s.io/v1/tokenreviews")
    assert code == 405
    code, out = http("GET", "/apis/authorization.k8s.io/v1")
    assert {r["name"] for r in out["resources"]} == {"subjectaccessreviews", "selfsubjectaccessreviews",
                                                     "selfsubjectrulesreviews", "localsubjectaccessreviews"}


def test_subject_access_review_by_rbac(sim: SimulatedCluster) -> None:
    http = Http(sim)
    assert http("POST", f"{RBAC}/clusterroles", {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                                                  "metadata": {"name": "metrics-reader"},
                                                  "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]})[0] == 201
    assert http("POST", f"{RBAC}/clusterrolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "prom"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "metrics-reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "prometheus", "namespace": "monitoring"}]})[0] == 201
    code, out = review(http, "SubjectAccessReview", {"user": "system:serviceaccount:monitoring:prometheus",
                                                     "nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    assert code == 201 and out["status"]["allowed"] is True
    assert out["status"]["reason"] == ('RBAC: allowed by ClusterRoleBinding "prom" of ClusterRole "metrics-reader" '
                                       'to ServiceAccount "prometheus/monitoring"')
    code, out = review(http, "SubjectAccessReview", {"user": "someone-else",
                                                     "nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    assert out["status"]["allowed"] is False
    code, out = review(http, "SubjectAccessReview", {"user": "x", "groups": ["system:masters"],
                                                     "resourceAttributes": {"verb": "delete", "resource": "nodes"}})
    assert out["status"]["allowed"] is True
    code, out = review(http, "SubjectAccessReview", {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    assert code == 422 and "at least one of user or group must be specified" in out["message"]
    code, out = review(http, "SubjectAccessReview", {"user": "x"})
    assert code == 422 and "exactly one of nonResourceAttributes or resourceAttributes" in out["message"]


def test_self_reviews_answer_for_the_requester(sim: SimulatedCluster) -> None:
    sim.server.add_token("viewer-token", UserInfo("viewer", "", ("system:authenticated",)))
    http = Http(sim, token="viewer-token")
    code, out = review(http, "SelfSubjectReview", {})
    assert code == 201 and out["status"]["userInfo"]["username"] == "viewer"
    code, out = review(http, "SelfSubjectAccessReview", {"resourceAttributes": {"verb": "list", "resource": "pods"}})
    assert code == 201 and out["status"]["allowed"] is False


def buckets(objs: dict[str, list[dict[str, Any]]]) -> Any:
    return lambda store: objs.get(store.split("/")[-1], [])


ROLE = {"metadata": {"name": "r"}, "rules": [
    {"apiGroups": [""], "resources": ["pods", "pods/status"], "verbs": ["get", "list"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "resourceNames": ["web"], "verbs": ["*"]},
    {"nonResourceURLs": ["/metrics", "/debug/*"], "verbs": ["get"]}]}


def binding(kind: str, name: str, **extra: Any) -> dict[str, Any]:
    return {"metadata": {"name": "b", **extra}, "roleRef": {"kind": kind, "name": "r"},
            "subjects": [{"kind": "User", "name": name}, {"kind": "Group", "name": "team"}]}


# (case, user, groups, attributes, non-resource, allowed)
RULES = [
    ("verb and resource", "alice", (), {"verb": "get", "resource": "pods"}, False, True),
    ("subresource", "alice", (), {"verb": "get", "resource": "pods", "subresource": "status"}, False, True),
    ("other subresource", "alice", (), {"verb": "get", "resource": "pods", "subresource": "log"}, False, False),
    ("verb not granted", "alice", (), {"verb": "delete", "resource": "pods"}, False, False),
    ("other group", "alice", (), {"verb": "get", "group": "apps", "resource": "pods"}, False, False),
    ("resourceNames match", "alice", (), {"verb": "patch", "group": "apps", "resource": "deployments",
                                          "name": "web"}, False, True),
    ("resourceNames no match", "alice", (), {"verb": "patch", "group": "apps", "resource": "deployments",
                                             "name": "db"}, False, False),
    ("non-resource exact", "alice", (), {"verb": "get", "path": "/metrics"}, True, True),
    ("non-resource prefix", "alice", (), {"verb": "get", "path": "/debug/pprof"}, True, True),
    ("non-resource other", "alice", (), {"verb": "get", "path": "/healthz"}, True, False),
    ("by group", "bob", ("team",), {"verb": "get", "path": "/metrics"}, True, True),
    ("unbound user", "bob", (), {"verb": "get", "path": "/metrics"}, True, False),
]


@pytest.mark.parametrize("case,user,groups,attrs,non,want", RULES, ids=[r[0] for r in RULES])
def test_rbac_rules(case: str, user: str, groups: tuple[str, ...], attrs: dict[str, Any], non: bool,
                    want: bool) -> None:
    objs = {"clusterroles": [ROLE], "clusterrolebindings": [binding("ClusterRole", "alice")]}
    assert authorize(buckets(objs), UserInfo(user, "", groups), attrs, non)[0] is want


def test_role_bindings_are_namespaced() -> None:
    objs = {"roles": [{**ROLE, "metadata": {"name": "r", "namespace": "a"}}],
            "rolebindings": [binding("Role", "alice", namespace="a")]}
    alice = UserInfo("alice")
    assert authorize(buckets(objs), alice, {"verb": "get", "resource": "pods", "namespace": "a"}, False)[0]
    assert not authorize(buckets(objs), alice, {"verb": "get", "resource": "pods", "namespace": "b"}, False)[0]
    assert not authorize(buckets(objs), alice, {"verb": "get", "path": "/metrics"}, True)[0]  # roles never grant URLs


def test_the_allowed_reason_names_the_subject_that_matched(sim: SimulatedCluster) -> None:
    http = Http(sim)
    code, out = review(http, "SubjectAccessReview", {"user": "x", "groups": ["system:authenticated"],
                                                     "nonResourceAttributes": {"path": "/apis", "verb": "get"}})
    assert code == 201 and out["status"] == {
        "allowed": True, "reason": 'RBAC: allowed by ClusterRoleBinding "system:discovery" of ClusterRole '
                                   '"system:discovery" to Group "system:authenticated"'}
    assert http("POST", f"{RBAC}/namespaces/default/roles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["list"]}]})[0] == 201
    assert http("POST", f"{RBAC}/namespaces/default/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "read"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot"}]})[0] == 201
    code, out = review(http, "SubjectAccessReview", {
        "user": "system:serviceaccount:default:bot",
        "resourceAttributes": {"verb": "list", "resource": "pods", "namespace": "default"}})
    assert out["status"]["reason"] == ('RBAC: allowed by RoleBinding "read/default" of Role "reader" to '
                                       'ServiceAccount "bot/default"')


LOCAL = "/apis/authorization.k8s.io/v1/namespaces/team/localsubjectaccessreviews"


def local_review(http: Http, spec: dict[str, Any], path: str = LOCAL, **meta: Any) -> tuple[int, Any]:
    return http("POST", path, {"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
                               "metadata": meta, "spec": spec})


def test_local_subject_access_review_is_namespaced(sim: SimulatedCluster) -> None:
    http = Http(sim)
    http("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    assert http("POST", f"{RBAC}/namespaces/team/roles", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "editor"},
        "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["update"]}]})[0] == 201
    assert http("POST", f"{RBAC}/namespaces/team/rolebindings", {
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "edit"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "editor"},
        "subjects": [{"kind": "User", "name": "ann"}]})[0] == 201
    attrs = {"verb": "update", "group": "apps", "resource": "deployments", "namespace": "team"}
    code, out = local_review(http, {"user": "ann", "resourceAttributes": attrs})
    assert code == 201 and out["metadata"] == {"namespace": "team"}
    assert out["status"] == {"allowed": True, "reason": 'RBAC: allowed by RoleBinding "edit/team" of Role "editor" '
                                                        'to User "ann"'}
    code, out = local_review(http, {"user": "bob", "resourceAttributes": attrs})
    assert code == 201 and out["status"] == {"allowed": False}
    code, out = local_review(http, {"user": "ann", "resourceAttributes": {**attrs, "namespace": "other"}})
    assert code == 422 and out["message"] == ('LocalSubjectAccessReview.authorization.k8s.io "" is invalid: '
                                              'spec.resourceAttributes.namespace: Invalid value: "other": must match '
                                              'metadata.namespace')
    code, out = local_review(http, {"user": "ann", "nonResourceAttributes": {"path": "/metrics", "verb": "get"}})
    assert code == 422 and out["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "spec.nonResourceAttributes",
        "message": 'Invalid value: authorization.NonResourceAttributes{Path:"/metrics", Verb:"get"}: disallowed on '
                   'this kind of request'}]
    code, out = local_review(http, {"user": "ann", "resourceAttributes": attrs}, namespace="elsewhere")
    assert code == 400 and out["message"] == ("the namespace of the provided object does not match the namespace "
                                              "sent on the request")
