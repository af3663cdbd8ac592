"""ResourceQuotas: their validation (``registry/core/resourcequota.py``), the ResourceQuota admission
plugin's refusals, and the quota controller's status (``controllers/resourcequota.py``), through the API."""

from __future__ import annotations

from typing import Any

from tests.simulator.helpers import Http, wait
from tests.simulator.kubectl import Kubectl, needs_kubectl

Obj = dict[str, Any]
NS = "/api/v1/namespaces"


def _namespace(api: Http, name: str) -> None:
    code, body = api("POST", NS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert code == 201, body


def _quota(api: Http, ns: str, name: str, hard: dict[str, str], **spec: Any) -> None:
    code, body = api("POST", f"{NS}/{ns}/resourcequotas", {"apiVersion": "v1", "kind": "ResourceQuota",
                                                           "metadata": {"name": name},
                                                           "spec": {"hard": hard, **spec}})
    assert code == 201, body


def _pod(name: str, requests: dict[str, str] | None = None, limits: dict[str, str] | None = None) -> Obj:
    resources = {k: v for k, v in (("requests", requests), ("limits", limits)) if v}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": resources}]}}


def _status(api: Http, ns: str, name: str) -> Obj:
    return api("GET", f"{NS}/{ns}/resourcequotas/{name}")[1].get("status") or {}  # type: ignore[no-any-return]


def test_the_controller_fills_in_status_hard_and_used(api: Http) -> None:
    _namespace(api, "rq-status")
    assert api("POST", f"{NS}/rq-status/pods", _pod("a", {"cpu": "250m", "memory": "1Gi"}, {"cpu": "1"}))[0] == 201
    _quota(api, "rq-status", "q", {"pods": "10", "requests.cpu": "2", "requests.memory": "4Gi", "limits.cpu": "4",
                                   "count/configmaps": "5"})
    want = {"hard": {"pods": "10", "requests.cpu": "2", "requests.memory": "4Gi", "limits.cpu": "4",
                     "count/configmaps": "5"},
            # the namespace's kube-root-ca.crt is a config map too
            "used": {"pods": "1", "requests.cpu": "250m", "requests.memory": "1Gi", "limits.cpu": "1",
                     "count/configmaps": "1"}}
    wait(lambda: _status(api, "rq-status", "q") == want, message=f"status {_status(api, 'rq-status', 'q')}")


def test_a_pod_past_the_pod_count_is_forbidden_and_a_deleted_one_frees_it(api: Http) -> None:
    _namespace(api, "rq-pods")
    _quota(api, "rq-pods", "q", {"pods": "2"})
    for name in ("a", "b"):
        assert api("POST", f"{NS}/rq-pods/pods", _pod(name))[0] == 201
    code, body = api("POST", f"{NS}/rq-pods/pods", _pod("c"))
    assert code == 403, body
    assert body["reason"] == "Forbidden"
    assert body["message"] == ('pods "c" is forbidden: exceeded quota: q, requested: pods=1, used: pods=2, '
                               "limited: pods=2")
    wait(lambda: _status(api, "rq-pods", "q").get("used") == {"pods": "2"})
    assert api("DELETE", f"{NS}/rq-pods/pods/a", params={"gracePeriodSeconds": "0"})[0] == 200
    wait(lambda: _status(api, "rq-pods", "q").get("used") == {"pods": "1"}, message="delete not counted")
    assert api("POST", f"{NS}/rq-pods/pods", _pod("c"))[0] == 201


def test_a_terminal_pod_frees_its_compute_but_not_its_object_count(api: Http) -> None:
    _namespace(api, "rq-terminal")
    _quota(api, "rq-terminal", "q", {"pods": "5", "count/pods": "5", "requests.cpu": "1"})
    assert api("POST", f"{NS}/rq-terminal/pods", _pod("job", {"cpu": "1"}))[0] == 201
    code, body = api("POST", f"{NS}/rq-terminal/pods", _pod("more", {"cpu": "100m"}))
    assert code == 403, body
    assert body["message"] == ('pods "more" is forbidden: exceeded quota: q, requested: requests.cpu=100m, '
                               "used: requests.cpu=1, limited: requests.cpu=1")
    code, _ = api("PATCH", f"{NS}/rq-terminal/pods/job/status", {"status": {"phase": "Succeeded"}},
                  ctype="application/merge-patch+json")
    assert code == 200
    wait(lambda: _status(api, "rq-terminal", "q").get("used") == {"pods": "0", "count/pods": "1",
                                                                   "requests.cpu": "0"},
         message=f"{_status(api, 'rq-terminal', 'q')}")
    assert api("POST", f"{NS}/rq-terminal/pods", _pod("more", {"cpu": "100m"}))[0] == 201


def test_a_pod_without_a_cpu_request_under_a_cpu_quota_must_specify_it(api: Http) -> None:
    _namespace(api, "rq-specify")
    _quota(api, "rq-specify", "q", {"requests.cpu": "4", "limits.memory": "4Gi"})
    code, body = api("POST", f"{NS}/rq-specify/pods", _pod("bare"))
    assert code == 403, body
    assert body["message"] == ('pods "bare" is forbidden: failed quota: q: must specify limits.memory for: c; '
                               "requests.cpu for: c")
    code, body = api("POST", f"{NS}/rq-specify/pods", _pod("stated", {"cpu": "1"}, {"memory": "1Gi"}))
    assert code == 201, body


def test_object_counts_and_scopes(api: Http) -> None:
    _namespace(api, "rq-count")
    # kube-root-ca.crt is one already
    _quota(api, "rq-count", "cms", {"count/configmaps": "2", "services": "0"})
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "one"}}
    wait(lambda: api("GET", f"{NS}/rq-count/configmaps/kube-root-ca.crt")[0] == 200)
    assert api("POST", f"{NS}/rq-count/configmaps", cm)[0] == 201
    code, body = api("POST", f"{NS}/rq-count/configmaps", {**cm, "metadata": {"name": "two"}})
    assert code == 403, body
    assert body["message"] == ('configmaps "two" is forbidden: exceeded quota: cms, requested: count/configmaps=1, '
                               "used: count/configmaps=2, limited: count/configmaps=2")
    code, body = api("POST", f"{NS}/rq-count/services", {"apiVersion": "v1", "kind": "Service",
                                                         "metadata": {"name": "web"},
                                                         "spec": {"ports": [{"port": 80}]}})
    assert code == 403, body
    assert "exceeded quota: cms, requested: services=1, used: services=0, limited: services=0" in body["message"]
    # a BestEffort-scoped quota counts only pods without requests or limits
    _quota(api, "rq-count", "besteffort", {"pods": "1"}, scopes=["BestEffort"])
    assert api("POST", f"{NS}/rq-count/pods", _pod("be-1"))[0] == 201
    assert api("POST", f"{NS}/rq-count/pods", _pod("burstable", {"cpu": "100m"}))[0] == 201
    code, body = api("POST", f"{NS}/rq-count/pods", _pod("be-2"))
    assert code == 403, body
    assert "exceeded quota: besteffort" in body["message"]


def test_an_invalid_quota_is_refused(api: Http) -> None:
    code, body = api("POST", f"{NS}/default/resourcequotas", {"apiVersion": "v1", "kind": "ResourceQuota",
                                                              "metadata": {"name": "neg"},
                                                              "spec": {"hard": {"pods": "-1"}}})
    assert code == 422, body
    assert body["message"] == ('ResourceQuota "neg" is invalid: spec.hard[pods]: Invalid value: "-1": must be '
                               "greater than or equal to 0")


def test_a_replica_set_stops_at_the_quota_and_a_dry_run_takes_nothing(api: Http) -> None:
    """Five replicas under a quota of three pods: the controller's creates in one sync are charged one
    by one, so three pods exist; a dry-run create is checked but not charged."""
    _namespace(api, "rq-burst")
    _quota(api, "rq-burst", "q", {"pods": "3"})
    code, body = api("POST", f"{NS}/rq-burst/pods", _pod("dry"), params={"dryRun": "All"})
    assert code == 201, body
    assert _status(api, "rq-burst", "q").get("used", {"pods": "0"}) == {"pods": "0"}
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "web"},
          "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    assert api("POST", "/apis/apps/v1/namespaces/rq-burst/replicasets", rs)[0] == 201
    wait(lambda: _status(api, "rq-burst", "q").get("used") == {"pods": "3"}, message="quota not charged")
    # give the controller the time it takes to try the rest; none may get through
    wait(lambda: len(api("GET", f"{NS}/rq-burst/pods")[1]["items"]) == 3)
    counts = [len(api("GET", f"{NS}/rq-burst/pods")[1]["items"]) for _ in range(10)]
    assert counts == [3] * 10


@needs_kubectl
def test_kubectl_creates_and_prints_a_quota(api: Http, kubectl: Kubectl) -> None:
    """``kubectl create quota`` sends a protobuf ResourceQuota; get and describe print its use."""
    _namespace(api, "rq-kubectl")
    kubectl("create", "quota", "q", "-n", "rq-kubectl", "--hard=pods=4,requests.cpu=2,limits.memory=1Gi")
    assert api("POST", f"{NS}/rq-kubectl/pods", _pod("p", {"cpu": "500m"}, {"memory": "256Mi"}))[0] == 201
    wait(lambda: _status(api, "rq-kubectl", "q").get("used", {}).get("pods") == "1")
    lines = kubectl("get", "quota", "q", "-n", "rq-kubectl").stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert lines[1].split("   ")[0] == "q"
    assert "pods: 1/4, requests.cpu: 500m/2" in lines[1] and "limits.memory: 256Mi/1Gi" in lines[1]
    described = kubectl("describe", "quota", "q", "-n", "rq-kubectl").stdout
    assert [line.split() for line in described.splitlines()[-3:]] == [
        ["limits.memory", "256Mi", "1Gi"], ["pods", "1", "4"], ["requests.cpu", "500m", "2"]]
