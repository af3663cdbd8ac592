"""ServiceAccounts in the simulated cluster: the ServiceAccounts controller and root CA publisher
(``controllers/serviceaccounts.py``), ServiceAccount admission and TokenRequest
(``registry/core/serviceaccount.py``), each through the API as a client finds it."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.registry.core import serviceaccount
from tests.simulator.helpers import Http, pod, started, wait
from tests.simulator.kubectl import Kubectl, needs_kubectl

NS = "/api/v1/namespaces"


def _namespace(api: Http, name: str) -> None:
    code, body = api("POST", NS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert code == 201, body


def test_a_new_namespace_gets_the_default_account_and_the_root_ca(sim: SimulatedCluster, api: Http) -> None:
    _namespace(api, "sa-new")
    sa = wait(lambda: (r := api("GET", f"{NS}/sa-new/serviceaccounts/default"))[0] == 200 and r[1],
              message="no default ServiceAccount")
    assert sa["kind"] == "ServiceAccount" and sa["metadata"]["namespace"] == "sa-new"
    cm = wait(lambda: (r := api("GET", f"{NS}/sa-new/configmaps/kube-root-ca.crt"))[0] == 200 and r[1],
              message="no kube-root-ca.crt")
    assert cm["data"] == {"ca.crt": sim.tls.cert_pem.decode()}
    assert cm["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")


def test_the_bootstrap_namespaces_have_them(api: Http) -> None:
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert api("GET", f"{NS}/{ns}/serviceaccounts/default")[0] == 200, ns
        assert api("GET", f"{NS}/{ns}/configmaps/kube-root-ca.crt")[0] == 200, ns


def test_a_deleted_default_account_and_root_ca_come_back(sim: SimulatedCluster, api: Http) -> None:
    _namespace(api, "sa-again")
    wait(lambda: api("GET", f"{NS}/sa-again/serviceaccounts/default")[0] == 200)
    old = api("GET", f"{NS}/sa-again/serviceaccounts/default")[1]["metadata"]["uid"]
    assert api("DELETE", f"{NS}/sa-again/serviceaccounts/default")[0] == 200
    back = wait(lambda: (r := api("GET", f"{NS}/sa-again/serviceaccounts/default"))[0] == 200 and r[1])
    assert back["metadata"]["uid"] != old
    wait(lambda: api("GET", f"{NS}/sa-again/configmaps/kube-root-ca.crt")[0] == 200)
    assert api("DELETE", f"{NS}/sa-again/configmaps/kube-root-ca.crt")[0] == 200
    wait(lambda: api("GET", f"{NS}/sa-again/configmaps/kube-root-ca.crt")[0] == 200, message="not recreated")
    # changed data is put back
    code, _ = api("PATCH", f"{NS}/sa-again/configmaps/kube-root-ca.crt", {"data": {"ca.crt": "forged"}},
                  ctype="application/merge-patch+json")
    assert code == 200
    wait(lambda: api("GET", f"{NS}/sa-again/configmaps/kube-root-ca.crt")[1]["data"]["ca.crt"]
         == sim.tls.cert_pem.decode(), message="forged CA kept")


def test_a_pod_created_right_after_its_namespace_gets_the_default_account(api: Http) -> None:
    _namespace(api, "sa-fresh")          # no wait: the pod follows at once
    code, created = api("POST", f"{NS}/sa-fresh/pods", pod("p"))
    assert code == 201, created
    assert created["spec"]["serviceAccountName"] == "default"
    assert created["spec"]["serviceAccount"] == "default"


def test_a_pod_naming_a_missing_account_is_forbidden(api: Http) -> None:
    code, body = api("POST", f"{NS}/default/pods", pod("needs-sa", serviceAccountName="robot"))
    assert code == 403, body
    assert body["reason"] == "Forbidden"
    assert body["message"] == ('pods "needs-sa" is forbidden: error looking up service account default/robot: '
                               'serviceaccount "robot" not found')
    assert api("GET", f"{NS}/default/pods/needs-sa")[0] == 404


def test_a_pod_naming_an_existing_account_takes_its_pull_secrets(api: Http) -> None:
    code, _ = api("POST", f"{NS}/default/serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount",
                                                            "metadata": {"name": "builder"},
                                                            "imagePullSecrets": [{"name": "registry"}]})
    assert code == 201
    # the deprecated alias alone names the account, as the v1 conversion reads it
    code, created = api("POST", f"{NS}/default/pods", pod("built", serviceAccount="builder"))
    assert code == 201, created
    assert created["spec"]["serviceAccountName"] == created["spec"]["serviceAccount"] == "builder"
    assert created["spec"]["imagePullSecrets"] == [{"name": "registry"}]


def _claims(token: str) -> dict[str, object]:
    part = token.split(".")[1]
    return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))  # type: ignore[no-any-return]


def test_token_request_issues_a_token_the_cluster_accepts_as_the_account(sim: SimulatedCluster, api: Http) -> None:
    code, answer = api("POST", f"{NS}/default/serviceaccounts/default/token",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    assert code == 201, answer
    assert answer["kind"] == "TokenRequest" and answer["apiVersion"] == "authentication.k8s.io/v1"
    assert answer["spec"]["expirationSeconds"] == 3600
    token = answer["status"]["token"]
    claims = _claims(token)
    assert claims["sub"] == "system:serviceaccount:default:default"
    assert int(claims["exp"]) - int(claims["iat"]) == 3600      # type: ignore[call-overload]
    code, review = Http(sim, token)("POST", "/apis/authentication.k8s.io/v1/selfsubjectreviews",
                                    {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"})
    assert code == 201, review
    user = review["status"]["userInfo"]
    assert user["username"] == "system:serviceaccount:default:default"
    assert user["groups"] == ["system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"]


def test_token_request_refuses_a_short_expiry_and_a_missing_account(api: Http) -> None:
    code, body = api("POST", f"{NS}/default/serviceaccounts/default/token",
                     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                      "spec": {"expirationSeconds": 599}})
    assert code == 422, body
    assert body["details"]["causes"][0]["field"] == "spec.expirationSeconds"
    assert "may not specify a duration less than 10 minutes" in body["message"]
    code, body = api("POST", f"{NS}/default/serviceaccounts/nobody/token",
                     {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})
    assert code == 404, body
    assert body["message"] == 'serviceaccounts "nobody" not found'


def test_discovery_lists_the_token_subresource(api: Http) -> None:
    _, resources = api("GET", "/api/v1")
    token = next(r for r in resources["resources"] if r["name"] == "serviceaccounts/token")
    assert token == {"name": "serviceaccounts/token", "singularName": "", "namespaced": True,
                     "kind": "TokenRequest", "verbs": ["create"], "group": "authentication.k8s.io",
                     "version": "v1"}


@needs_kubectl
def test_kubectl_create_token(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    out = kubectl("create", "token", "default", "--duration=20m").stdout.strip()
    assert _claims(out)["sub"] == "system:serviceaccount:default:default"
    who = kubectl("auth", "whoami", f"--token={out}", "-o", "jsonpath={.status.userInfo.username}").stdout
    assert who == "system:serviceaccount:default:default"
    short = kubectl("create", "token", "default", "--duration=1m", check=False)
    assert short.returncode != 0 and "may not specify a duration less than 10 minutes" in short.stderr


def test_a_live_clusters_dump_loads_with_the_objects_the_cluster_keeps_itself(tmp_path: Path) -> None:
    """``kubectl get sa,cm,svc -A -o yaml`` of a live cluster holds the default accounts, the root CA
    config maps and the kubernetes Service: loading it refuses none of them."""
    items = [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "default"}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "shop"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": "default"},
         "data": {"ca.crt": "their CA"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": "shop"},
         "data": {"ca.crt": "their CA"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default"},
         "spec": {"clusterIP": "10.0.0.1", "ports": [{"name": "https", "port": 443, "targetPort": 6443}]}},
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "shop"},
         "spec": {"serviceAccountName": "default", "containers": [{"name": "c", "image": "nginx"}]}}]
    dump = tmp_path / "dump.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": items}))
    with started(load=[dump]) as c:
        assert c.rejected == []
        api = Http(c)
        assert api("GET", "/api/v1/namespaces/default/services/kubernetes")[1]["spec"]["clusterIP"] == "10.96.0.1"
        # the cluster's own CA wins in every namespace, the dump's replaced
        for ns in ("default", "shop"):
            wait(lambda ns=ns: api("GET", f"{NS}/{ns}/configmaps/kube-root-ca.crt")[1]["data"]["ca.crt"]
                 == c.tls.cert_pem.decode(), message=ns)


def test_a_token_bound_to_a_pod_must_name_one_running_as_the_account(api: Http) -> None:
    def request(**ref: str) -> tuple[int, dict[str, object]]:
        return api("POST", f"{NS}/default/serviceaccounts/default/token",  # type: ignore[no-any-return]
                   {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                    "spec": {"boundObjectRef": {"apiVersion": "v1", **ref}}})
    code, created = api("POST", f"{NS}/default/pods", pod("bound-to"))
    assert code == 201, created
    code, answer = request(kind="Pod", name="bound-to", uid=created["metadata"]["uid"])
    assert code == 201 and answer["status"]["token"], answer      # type: ignore[index]
    code, body = request(kind="Pod", name="bound-to", uid="another")
    assert code == 409, body
    assert body["message"] == (f'Operation cannot be fulfilled on Pod "bound-to": the UID in the bound object '
                               f"reference (another) does not match the UID in record ({created['metadata']['uid']})."
                               " The object might have been deleted and then recreated")
    code, body = request(kind="Pod", name="nowhere")
    assert (code, body["message"]) == (404, 'pods "nowhere" not found')
    code, body = request(kind="ConfigMap", name="kube-root-ca.crt")
    assert (code, body["message"]) == (400, "cannot bind token to object of type /v1, Kind=ConfigMap")


def test_issued_tokens_are_bounded(sim: SimulatedCluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """However many tokens are asked for, the server keeps the newest ``MAX_ISSUED``."""
    monkeypatch.setattr(serviceaccount, "MAX_ISSUED", 3)
    api = Http(sim)
    tokens = [api("POST", f"{NS}/default/serviceaccounts/default/token",
                  {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}})[1]["status"]["token"]
              for _ in range(5)]
    # discovery: what every authenticated user may read (system:discovery), so only authentication decides
    answers = [Http(sim, t)("GET", "/api")[0] for t in tokens]
    assert answers == [401, 401, 200, 200, 200]
    assert len(sim.server.issued) == 3
