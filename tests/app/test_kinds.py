"""``watched_kinds`` and ``feed``: the one list of kinds the scheduler reads, and feeding a service
from their listings through its own handlers (what the runtime's informers and ``explain`` share)."""

from __future__ import annotations

from typing import Any

from scheduler.app.kinds import feed, kind_of, watched_kinds
from scheduler.service import SchedulerService
from tests.builders import MemoryClient


def test_the_order_puts_what_pods_name_before_the_pods_and_podgroups_only_with_their_gate() -> None:
    keys = [k.key for k in watched_kinds()]
    assert keys[:3] == ["namespaces", "nodes", "poddisruptionbudgets"] and keys[-1] == "pods"
    assert {"services", "replicasets", "statefulsets", "replicationcontrollers", "persistentvolumeclaims",
            "csistoragecapacities", "resourceclaims", "resourceslices", "schedulingprofiles"} <= set(keys)
    assert "podgroups" not in keys
    gated = [k.key for k in watched_kinds({"GenericWorkload": True})]
    assert gated.index("podgroups") == len(gated) - 2
    assert {k.path for k in watched_kinds() if k.key in ("nodes", "csinodes", "resourceclaims")} == {
        "/api/v1/nodes", "/apis/storage.k8s.io/v1/csinodes", "/apis/resource.k8s.io/v1/resourceclaims"}


def test_a_dumps_items_are_matched_by_group_and_kind() -> None:
    kinds = watched_kinds()
    assert kind_of(kinds, {"apiVersion": "v1", "kind": "PersistentVolumeClaim"}).key == "persistentvolumeclaims"  # type: ignore[union-attr]
    assert kind_of(kinds, {"apiVersion": "apps/v1", "kind": "ReplicaSet"}).key == "replicasets"  # type: ignore[union-attr]
    assert kind_of(kinds, {"apiVersion": "apps/v1", "kind": "Deployment"}) is None
    assert kind_of(kinds, {"apiVersion": "v1", "kind": "ReplicaSet"}) is None


def test_feed_goes_through_the_services_handlers_and_leaves_unreadable_objects_out() -> None:
    service = SchedulerService(MemoryClient())
    node: dict[str, Any] = {"metadata": {"name": "n1"}, "status": {"capacity": {"cpu": "4", "pods": "10"}}}
    bad: dict[str, Any] = {"metadata": {"name": "n2"}, "status": {"capacity": {"cpu": "four"}}}
    pod: dict[str, Any] = {"metadata": {"name": "p", "namespace": "default", "uid": "u1"},
                           "spec": {"nodeName": "n1", "containers": [{"name": "c"}]}}
    claim: dict[str, Any] = {"metadata": {"name": "c", "namespace": "default", "uid": "u2"},
                             "spec": {"devices": {"requests": []}}}
    unreadable = feed(service, [k for k in watched_kinds() if k.key != "schedulingprofiles"],
                      {"nodes": [node, bad], "pods": [pod], "resourceclaims": [claim]})
    assert unreadable == {"nodes": 1}
    assert service.cache.get_pod("u1") is not None
    assert service.dra.claim("default", "c") is not None
    assert service.known_pod_uids() == {"u1"}
