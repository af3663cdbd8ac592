"""A real Kopf operator (watch, on.event, on.create with a status patch) against the simulated cluster."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from kopf.testing import KopfRunner

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http, pod

OPERATOR = Path(__file__).resolve().parents[1] / "fixtures" / "kopf_widgets.py"
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced", "names": {"plural": "widgets", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True, "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}


def test_kopf_operator_handles_events_and_patches_status(monkeypatch: pytest.MonkeyPatch) -> None:
    c = SimulatedCluster()
    c.start()
    try:
        api = Http(c)
        assert api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", CRD)[0] == 201
        monkeypatch.setenv("KUBECONFIG", str(c.kubeconfig))
        with KopfRunner(["run", "--standalone", "-A", "--verbose", str(OPERATOR)], timeout=60) as runner:
            base = "/apis/example.com/v1/namespaces/default/widgets"
            api("POST", base, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                               "spec": {"size": 21}})
            api("POST", "/api/v1/namespaces/default/pods", pod("watched"))
            deadline = time.time() + 30
            status: dict[str, object] = {}
            while time.time() < deadline:
                status = api("GET", f"{base}/w")[1].get("status", {})
                if status.get("size2") == 42:
                    break
                time.sleep(0.1)
            time.sleep(1.0)        # the pod's event is handled concurrently with the widget's
        assert runner.exit_code == 0, runner.output
        assert runner.exception is None
        assert status.get("size2") == 42, runner.output
        assert "saw pod event ADDED:watched" in runner.output or "saw pod event None:watched" in runner.output
    finally:
        c.stop()
