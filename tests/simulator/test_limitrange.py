"""LimitRanges (``registry/core/limitrange.py``): their defaulting and validation, the LimitRanger's
defaults and refusals on pod create, and the scheduler seeing the defaulted requests."""

from __future__ import annotations

import json
from typing import Any

import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

Obj = dict[str, Any]
NS = "/api/v1/namespaces"


def _namespace(api: Http, name: str) -> None:
    code, body = api("POST", NS, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert code == 201, body


def _limits(name: str, *items: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "LimitRange", "metadata": {"name": name}, "spec": {"limits": list(items)}}


def _bare(name: str, **resources: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "app", "image": "nginx", **({"resources": resources} if resources
                                                                        else {})}]}}


def test_a_limit_range_is_stored_with_upstreams_defaults(api: Http) -> None:
    _namespace(api, "lr-defaults")
    code, lr = api("POST", f"{NS}/lr-defaults/limitranges",
                   _limits("lr", {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}))
    assert code == 201, lr
    (item,) = lr["spec"]["limits"]
    # SetDefaults_LimitRangeItem: default from max, defaultRequest from default, then from min
    assert item["default"] == {"cpu": "2"}
    assert item["defaultRequest"] == {"cpu": "2", "memory": "64Mi"}


def test_an_inconsistent_limit_range_is_invalid(api: Http) -> None:
    code, body = api("POST", f"{NS}/default/limitranges",
                     _limits("bad", {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
                             {"type": "Pod", "default": {"cpu": "1"}}))
    assert code == 422, body
    assert body["message"] == (
        'LimitRange "bad" is invalid: [spec.limits[0].min[cpu]: Invalid value: "2": min value 2 is greater than '
        "max value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: \"1\": min value 2 is greater than default "
        'request value 1, spec.limits[0].default[cpu]: Invalid value: "2": min value 2 is greater than default value '
        "1, spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod']")


def test_a_pod_without_resources_gets_the_defaults_and_the_annotation(api: Http) -> None:
    _namespace(api, "lr-fill")
    code, _ = api("POST", f"{NS}/lr-fill/limitranges", _limits("lr", {
        "type": "Container", "default": {"cpu": "500m", "memory": "256Mi"},
        "defaultRequest": {"cpu": "250m", "memory": "128Mi"}}))
    assert code == 201
    code, created = api("POST", f"{NS}/lr-fill/pods", _bare("p"))
    assert code == 201, created
    assert created["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "500m", "memory": "256Mi"}, "requests": {"cpu": "250m", "memory": "128Mi"}}
    assert created["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container app; cpu, memory limit for container app")
    assert created["status"]["qosClass"] == "Burstable"
    # what the pod states is kept; a limit it states is its request first (SetDefaults_Pod)
    code, created = api("POST", f"{NS}/lr-fill/pods", _bare("q", limits={"cpu": "1"}))
    assert code == 201, created
    assert created["spec"]["containers"][0]["resources"] == {
        "limits": {"cpu": "1", "memory": "256Mi"}, "requests": {"cpu": "1", "memory": "128Mi"}}


def test_a_pod_outside_the_range_is_forbidden(api: Http) -> None:
    _namespace(api, "lr-refuse")
    code, _ = api("POST", f"{NS}/lr-refuse/limitranges", _limits("lr", {
        "type": "Container", "max": {"cpu": "1"}, "min": {"cpu": "100m"}, "maxLimitRequestRatio": {"cpu": "2"}}))
    assert code == 201
    code, body = api("POST", f"{NS}/lr-refuse/pods", _bare("big", limits={"cpu": "2"}, requests={"cpu": "2"}))
    assert code == 403, body
    assert body["message"] == 'pods "big" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
    code, body = api("POST", f"{NS}/lr-refuse/pods", _bare("spiky", limits={"cpu": "1"}, requests={"cpu": "200m"}))
    assert code == 403, body
    assert body["message"] == ('pods "spiky" is forbidden: cpu max limit to request ratio per Container is 2, but '
                               "provided ratio is 5.000000")
    code, body = api("POST", f"{NS}/lr-refuse/pods", _bare("tiny", limits={"cpu": "1"}, requests={"cpu": "50m"}))
    assert code == 403, body
    assert body["message"] == ('pods "tiny" is forbidden: [minimum cpu usage per Container is 100m, but request is '
                               "50m, cpu max limit to request ratio per Container is 2, but provided ratio is "
                               "20.000000]")
    code, body = api("POST", f"{NS}/lr-refuse/pods", _bare("fits", limits={"cpu": "1"}, requests={"cpu": "500m"}))
    assert code == 201, body


def test_the_scheduler_counts_a_pods_defaulted_request() -> None:
    """A pod stating no request, in a namespace whose LimitRange defaults cpu to 2, does not fit a
    1-CPU node; the same pod in a namespace without one schedules there."""
    def pod(name: str, ns: str) -> Obj:
        return {**_bare(name), "metadata": {"name": name, "namespace": ns}}
    objects = [
        {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "small", "labels": {"kubernetes.io/hostname": "small"}},
         "status": {"capacity": {"cpu": "1", "memory": "4Gi", "pods": "110"}}},
        {**_limits("lr", {"type": "Container", "defaultRequest": {"cpu": "2"}}),
         "metadata": {"name": "lr", "namespace": "limited"}},
        pod("defaulted", "limited"), pod("free", "open")]
    result = CliRunner().invoke(main, ["simulate", "--timeout", "60", "-f", "-", "--output", "json"],
                                input=yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objects}))
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    pods = {p["name"]: p for p in report["pods"]}
    assert pods["free"]["node"] == "small"
    assert pods["defaulted"]["node"] is None
    assert [g["reason"] for g in report["unschedulable"]] == ["Insufficient cpu"]


@needs_kubectl
def test_kubectl_applies_a_limit_range_and_strict_validation_knows_its_fields(api: Http, kubectl: Kubectl) -> None:
    _namespace(api, "lr-kubectl")
    manifest = json.dumps({**_limits("lr", {"type": "Container", "defaultRequest": {"cpu": "100m"}}),
                           "metadata": {"name": "lr", "namespace": "lr-kubectl"}})
    assert "limitrange/lr created" in kubectl("apply", "-f", "-", stdin=manifest).stdout
    typo = manifest.replace('"defaultRequest"', '"defaultRequests"')
    bad = kubectl("apply", "-f", "-", stdin=typo.replace('"name": "lr"', '"name": "lr2"'), check=False)
    assert bad.returncode != 0 and 'unknown field "spec.limits[0].defaultRequests"' in bad.stderr


def test_a_claim_outside_the_storage_range_is_forbidden(api: Http) -> None:
    _namespace(api, "lr-claims")
    code, _ = api("POST", f"{NS}/lr-claims/limitranges", _limits("storage", {
        "type": "PersistentVolumeClaim", "min": {"storage": "1Gi"}, "max": {"storage": "5Gi"}}))
    assert code == 201

    def claim(name: str, size: str) -> Obj:
        return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": size}}}}
    code, body = api("POST", f"{NS}/lr-claims/persistentvolumeclaims", claim("huge", "10Gi"))
    assert code == 403, body
    assert body["message"] == ('persistentvolumeclaims "huge" is forbidden: maximum storage usage per '
                               "PersistentVolumeClaim is 5Gi, but request is 10Gi")
    code, body = api("POST", f"{NS}/lr-claims/persistentvolumeclaims", claim("tiny", "500Mi"))
    assert code == 403, body
    assert body["message"] == ('persistentvolumeclaims "tiny" is forbidden: minimum storage usage per '
                               "PersistentVolumeClaim is 1Gi, but request is 500Mi")
    assert api("POST", f"{NS}/lr-claims/persistentvolumeclaims", claim("fits", "2Gi"))[0] == 201
