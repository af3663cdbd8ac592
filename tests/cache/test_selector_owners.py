"""The Services and controllers behind default spreading, after upstream's
``plugins/helper/spread_test.go`` (``TestGetPodServices``) and ``helper/spread.go`` (``DefaultSelector``)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cache.selector_owners import SelectorOwners
from scheduler.model import Pod, parse_pod
from tests.builders import pod


def service(name: str, selector: dict[str, str] | None, namespace: str = "test") -> dict[str, Any]:
    spec: dict[str, Any] = {} if selector is None else {"selector": selector}
    return {"metadata": {"name": name, "namespace": namespace}, "spec": spec}


def owned(name: str, labels: dict[str, str], kind: str, owner: str, api_version: str = "apps/v1",
          controller: bool = True) -> Pod:
    body = {"metadata": {"name": name, "namespace": "test", "labels": labels,
                         "ownerReferences": [{"apiVersion": api_version, "kind": kind, "name": owner,
                                              "uid": "u", "controller": controller}]},
            "spec": {"containers": [{"name": "c", "image": "i"}]}}
    return parse_pod(body)


def as_map(owners: SelectorOwners, p: Pod) -> dict[str, list[str]] | None:
    sel = owners.default_selector(p)
    return None if sel is None else {f"{r.key} {r.operator}": sorted(r.values) for r in sel.requirements}


# spread_test.go TestGetPodServices: three Services app=test-0..2 in namespace "test"; pods 0..4.
@pytest.mark.parametrize(("name", "i", "want"), [
    ("GetPodServices for pod-0", 0, {"app In": ["test-0"]}),
    ("GetPodServices for pod-1", 1, {"app In": ["test-1"]}),
    ("GetPodServices for pod-2", 2, {"app In": ["test-2"]}),
    ("GetPodServices for pod-3", 3, None),
    ("GetPodServices for pod-4", 4, None),
])
def test_get_pod_services(name: str, i: int, want: dict[str, list[str]] | None) -> None:
    owners = SelectorOwners()
    for k in range(3):
        assert owners.on_event("Service", "ADDED", service(f"service-{k}", {"app": f"test-{k}"}))
    p = pod(f"test-pod-{i}", namespace="test", labels={"app": f"test-{i}", "label": f"label-{i}"})
    assert as_map(owners, p) == want, name


def test_a_service_without_selector_selects_nothing_and_other_namespaces_do_not_count() -> None:
    # spread.go GetPodServices: "services with nil selectors match nothing, not everything".
    owners = SelectorOwners()
    owners.on_event("Service", "ADDED", service("headless-external", None))
    owners.on_event("Service", "ADDED", service("elsewhere", {"app": "web"}, namespace="other"))
    assert as_map(owners, pod("p", namespace="test", labels={"app": "web"})) is None


RS = {"metadata": {"name": "rs1", "namespace": "test"},
      "spec": {"selector": {"matchLabels": {"app": "web"},
                            "matchExpressions": [{"key": "tier", "operator": "Exists"}]}}}


@pytest.mark.parametrize(("name", "kind", "api_version", "controller", "want"), [
    ("ReplicaSet controller adds its requirements", "ReplicaSet", "apps/v1", True,
     {"app In": ["web"], "role In": ["front"], "tier Exists": []}),
    ("StatefulSet controller adds its requirements", "StatefulSet", "apps/v1", True,
     {"app In": ["web"], "role In": ["front"], "tier Exists": []}),
    # DefaultSelector switches on the exact group/version/kind.
    ("ReplicaSet in another group version is not supported", "ReplicaSet", "extensions/v1beta1", True,
     {"role In": ["front"]}),
    ("an owner that is not the controller is ignored", "ReplicaSet", "apps/v1", False, {"role In": ["front"]}),
])
def test_default_selector_merges_services_and_the_controller(name: str, kind: str, api_version: str,
                                                              controller: bool, want: dict[str, list[str]]) -> None:
    owners = SelectorOwners()
    owners.on_event("Service", "ADDED", service("front", {"role": "front"}))
    owners.on_event(kind, "ADDED", {**RS, "kind": kind})
    p = owned("p", {"app": "web", "role": "front", "tier": "1"}, kind, "rs1", api_version, controller)
    assert as_map(owners, p) == want, name


def test_replication_controller_merges_its_map_and_deletion_forgets() -> None:
    owners = SelectorOwners()
    rc = {"metadata": {"name": "rc1", "namespace": "test"}, "spec": {"selector": {"app": "web"}}}
    assert owners.on_event("ReplicationController", "ADDED", rc)
    p = owned("p", {"app": "web"}, "ReplicationController", "rc1", "v1")
    assert as_map(owners, p) == {"app In": ["web"]}
    assert not owners.on_event("ReplicationController", "MODIFIED", rc)   # nothing a selector reads changed
    assert owners.on_event("ReplicationController", "DELETED", rc)
    assert as_map(owners, p) is None
    assert len(owners) == 0


def test_an_unknown_controller_contributes_nothing() -> None:
    # DefaultSelector ignores the lister's NotFound: the Services' selector alone.
    owners = SelectorOwners()
    owners.on_event("Service", "ADDED", service("front", {"app": "web"}))
    assert as_map(owners, owned("p", {"app": "web"}, "ReplicaSet", "gone")) == {"app In": ["web"]}
