"""The official ``kubernetes`` Python client against the simulated cluster."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import pod


@pytest.fixture
def core() -> Iterator[client.CoreV1Api]:
    c = SimulatedCluster(history=20)
    c.start()
    api_client = config.new_client_from_config(config_file=str(c.kubeconfig))
    yield client.CoreV1Api(api_client)
    api_client.close()
    c.stop()


def test_crud(core: client.CoreV1Api) -> None:
    created = core.create_namespaced_pod("default", pod("p1", labels={"app": "web"}))
    assert created.metadata.uid and created.spec.scheduler_name == "default-scheduler"
    assert core.read_namespaced_pod("p1", "default").status.phase == "Pending"
    got = core.list_namespaced_pod("default", label_selector="app=web")
    assert [p.metadata.name for p in got.items] == ["p1"]
    patched = core.patch_namespaced_pod("p1", "default", {"metadata": {"labels": {"app": "db"}}})
    assert patched.metadata.labels == {"app": "db"}
    core.delete_namespaced_pod("p1", "default")
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("p1", "default")
    assert e.value.status == 404


def test_stale_put_conflicts(core: client.CoreV1Api) -> None:
    p = core.create_namespaced_pod("default", pod("p1"))
    p.metadata.labels = {"v": "1"}
    core.replace_namespaced_pod("p1", "default", p)
    p.metadata.labels = {"v": "2"}
    with pytest.raises(ApiException) as e:
        core.replace_namespaced_pod("p1", "default", p)     # still carries the old resourceVersion
    assert e.value.status == 409


def test_watch_from_resource_version(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("a"))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    core.create_namespaced_pod("default", pod("b"))
    core.delete_namespaced_pod("a", "default")
    seen = [(ev["type"], ev["object"].metadata.name) for ev in watch.Watch().stream(
        core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1)]
    assert seen == [("ADDED", "b"), ("DELETED", "a")]


def test_watch_from_an_expired_resource_version_is_410(core: client.CoreV1Api) -> None:
    core.create_namespaced_pod("default", pod("a"))
    rv = core.list_namespaced_pod("default").metadata.resource_version
    for i in range(30):
        core.patch_namespaced_pod("a", "default", {"metadata": {"labels": {"i": str(i)}}})
    with pytest.raises(ApiException) as e:
        for _ in watch.Watch().stream(core.list_namespaced_pod, "default", resource_version=rv, timeout_seconds=1):
            pass
    assert e.value.status == 410


def test_create_from_yaml_conflict_prints_the_status_body_as_kube_apiserver_writes_it(
        core: client.CoreV1Api) -> None:
    """The client suite's ``test_create_from_multi_resource_yaml_with_conflict``: a second create of a
    Service fails with the Status body exactly as kube-apiserver's JSON encoder writes it, Go's field
    order and the trailing newline included."""
    from kubernetes import utils
    svc = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "mock-2", "labels": {"app": "mock-2"}},
           "spec": {"selector": {"app": "mock-2"}, "ports": [{"port": 99, "targetPort": 9949}]}}
    utils.create_from_dict(core.api_client, svc)
    with pytest.raises(utils.FailToCreateError) as e:
        utils.create_from_dict(core.api_client, svc)
    assert str(e.value) == (
        'Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"services \\"mock-2\\" already exists","reason":"AlreadyExists","details":{"name":"mock-2",'
        '"kind":"services"},"code":409}\n')


@pytest.fixture
def registration(core: client.CoreV1Api) -> client.ApiregistrationV1Api:
    return client.ApiregistrationV1Api(core.api_client)


WARDLE = {"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
          "metadata": {"name": "v1alpha1.wardle.k8s.io"},
          "spec": {"insecureSkipTLSVerify": True, "group": "wardle.k8s.io", "groupPriorityMinimum": 1000,
                   "versionPriority": 15, "service": {"name": "api", "namespace": "wardle"},
                   "version": "v1alpha1"}}


def test_an_apiservice_is_created_read_conflicts_and_deleted(registration: client.ApiregistrationV1Api) -> None:
    """The client suite's ``test_create_apiservice_from_yaml_with_conflict`` (it got 404: the kind was not
    served)."""
    from kubernetes import utils
    utils.create_from_dict(registration.api_client, WARDLE)
    svc = registration.read_api_service("v1alpha1.wardle.k8s.io")
    assert (svc.spec.group, svc.spec.version, svc.spec.service.port) == ("wardle.k8s.io", "v1alpha1", 443)
    with pytest.raises(utils.FailToCreateError) as e:
        utils.create_from_dict(registration.api_client, WARDLE)
    assert str(e.value) == (
        'Error from server (Conflict): {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",'
        '"message":"apiservices.apiregistration.k8s.io \\"v1alpha1.wardle.k8s.io\\" already exists",'
        '"reason":"AlreadyExists","details":{"name":"v1alpha1.wardle.k8s.io","group":"apiregistration.k8s.io",'
        '"kind":"apiservices"},"code":409}\n')
    registration.delete_api_service("v1alpha1.wardle.k8s.io")
    assert [s.metadata.name for s in registration.list_api_service().items] == []


@pytest.mark.parametrize(("change", "message"), [
    ({"metadata": {"name": "v1.wardle.k8s.io"}},
     'APIService.apiregistration.k8s.io "v1.wardle.k8s.io" is invalid: metadata.name: Invalid value: '
     '"v1.wardle.k8s.io": must be `spec.version+"."+spec.group`: "v1alpha1.wardle.k8s.io"'),
    ({"spec": {**WARDLE["spec"], "groupPriorityMinimum": 20001, "versionPriority": 0}},
     'APIService.apiregistration.k8s.io "v1alpha1.wardle.k8s.io" is invalid: [spec.groupPriorityMinimum: '
     'Invalid value: 20001: must be positive and less than 20000, spec.versionPriority: Invalid value: 0: '
     'must be positive and less than 1000]'),
    ({"spec": {**WARDLE["spec"], "service": {"name": "api", "namespace": "wardle", "port": 70000}}},
     'APIService.apiregistration.k8s.io "v1alpha1.wardle.k8s.io" is invalid: spec.service.port: Invalid value: '
     '70000: port is not valid: must be between 1 and 65535, inclusive'),
    ({"spec": {**WARDLE["spec"], "service": None}},
     'APIService.apiregistration.k8s.io "v1alpha1.wardle.k8s.io" is invalid: spec.insecureSkipTLSVerify: '
     'Invalid value: true: local APIServices may not have insecureSkipTLSVerify'),
])
def test_an_invalid_apiservice_is_refused_as_the_aggregator_refuses_it(
        registration: client.ApiregistrationV1Api, change: dict[str, object], message: str) -> None:
    with pytest.raises(ApiException) as e:
        registration.create_api_service({**WARDLE, **change})
    assert e.value.status == 422
    assert json.loads(e.value.body)["message"] == message
