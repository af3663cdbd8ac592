"""The ``pods/resize`` subresource (``registry/core/resize.py``): what a write takes and refuses, as
kube-apiserver's ``podResizeStrategy`` and ``ValidatePodResize``."""

from __future__ import annotations

from typing import Any

import pytest

from tests.simulator.helpers import Http

PODS = "/api/v1/namespaces/default/pods"
SMP = "application/strategic-merge-patch+json"


def _pod(api: Http, name: str, **container: Any) -> None:
    c = {"name": "app", "image": "pause", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                         "limits": {"cpu": "200m", "memory": "64Mi"}}, **container}
    code, body = api("POST", PODS, {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
        "initContainers": [{"name": "init", "image": "pause", "resources": {"requests": {"cpu": "10m"}}},
                           {"name": "side", "image": "pause", "restartPolicy": "Always",
                            "resources": {"requests": {"cpu": "10m"}}}],
        "containers": [c]}})
    assert code == 201, body


def test_discovery_serves_pods_resize(api: Http) -> None:
    body = api("GET", "/api/v1")[1]
    (entry,) = [r for r in body["resources"] if r["name"] == "pods/resize"]
    assert entry["kind"] == "Pod" and sorted(entry["verbs"]) == ["get", "patch", "update"]


def test_a_resize_takes_only_the_resources_and_bumps_the_generation(api: Http) -> None:
    _pod(api, "rz")
    gen = api("GET", f"{PODS}/rz")[1]["metadata"]["generation"]
    code, body = api("PATCH", f"{PODS}/rz/resize", {
        "metadata": {"labels": {"sneaky": "yes"}},
        "spec": {"containers": [{"name": "app", "image": "other", "resources": {"requests": {"cpu": "150m"}}}],
                 "initContainers": [{"name": "init"}, {"name": "side", "resources": {"requests": {"cpu": "20m"}}}]}},
        ctype=SMP)
    assert code == 200, body
    assert body["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "150m", "memory": "64Mi"}
    assert body["spec"]["containers"][0]["image"] == "pause" and "sneaky" not in body["metadata"].get("labels", {})
    assert body["spec"]["initContainers"][1]["resources"]["requests"] == {"cpu": "20m"}     # a sidecar resizes
    assert body["metadata"]["generation"] == gen + 1


@pytest.mark.parametrize(("name", "patch", "field", "message"), [
    ("ephemeral-storage", {"containers": [{"name": "app", "resources": {"limits": {"ephemeral-storage": "1Gi"}}}]},
     "spec", "Forbidden: only cpu and memory resources are mutable"),
    ("a removed request", {"containers": [{"name": "app", "resources": {"requests": {"memory": None}}}]},
     "spec.containers[0].resources.requests[memory]", "Forbidden: resource requests cannot be removed"),
    ("an init container", {"initContainers": [{"name": "init", "resources": {"requests": {"cpu": "20m"}}},
                                              {"name": "side"}]},
     "spec.initContainers[0].resources", "Forbidden: resources for non-sidecar init containers are immutable"),
])
def test_a_resize_is_refused_as_upstream_refuses_it(api: Http, name: str, patch: dict[str, Any], field: str,
                                                    message: str) -> None:
    pod = f"refused-{len(field)}-{len(message)}"
    _pod(api, pod)
    code, body = api("PATCH", f"{PODS}/{pod}/resize", {"spec": patch}, ctype=SMP)
    assert code == 422, body
    causes = [(c["field"], c["message"]) for c in body["details"]["causes"]]
    assert (field, message) in causes, name


def test_a_main_resource_update_still_may_not_change_resources(api: Http) -> None:
    _pod(api, "plain")
    code, body = api("PATCH", f"{PODS}/plain", {"spec": {"containers": [
        {"name": "app", "resources": {"requests": {"cpu": "150m"}}}]}}, ctype=SMP)
    assert code == 422 and "pod updates may not change fields" in body["message"]
