"""``kopf-scheduler cluster --load``: the command itself, as a user starts it (a process, stopped by SIGTERM)."""

from __future__ import annotations

import base64
import json
import signal
import ssl
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import yaml

from scheduler.profiles.crd import API_VERSION, KIND, profiles_path


def _get(url: str, kubeconfig: Path, path: str) -> Any:
    kc = yaml.safe_load(kubeconfig.read_text())
    ctx = ssl.create_default_context()
    ctx.load_verify_locations(cadata=base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"])
                              .decode())
    req = urllib.request.Request(url + path, headers={"Authorization": f"Bearer {kc['users'][0]['user']['token']}"})
    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
        return json.loads(r.read())


def test_cluster_load_keeps_a_dumps_profiles_and_orders_its_kinds(tmp_path: Path) -> None:
    """A dump listing a SchedulingProfile (no CRD in it) and a pod before its PriorityClass and its namespace:
    everything loads, nothing is refused, and the profile is served."""
    dump = {"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team"},
         "spec": {"priorityClassName": "high", "containers": [{"name": "c", "image": "busybox:1.36"}]}},
        {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "batch"},
         "spec": {"schedulerName": "batch-scheduler"}},
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}},
        {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000},
    ]}
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(dump))
    kubeconfig = tmp_path / "kubeconfig"
    p = subprocess.Popen([sys.executable, "-m", "scheduler.app.cli", "cluster", "--load", str(f), "--kubeconfig",
                          str(kubeconfig)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert p.stdout is not None
        lines: dict[str, str] = {}
        deadline = time.monotonic() + 60
        while "loaded" not in lines:
            assert time.monotonic() < deadline and p.poll() is None, p.stderr.read() if p.stderr else ""
            key, _, value = p.stdout.readline().strip().partition(": ")
            lines[key] = value
        assert lines["loaded"] == "4 objects, rejected: 0"
        profile = _get(lines["url"], kubeconfig, f"{profiles_path()}/batch")
        assert profile["spec"]["schedulerName"] == "batch-scheduler"
        pod = _get(lines["url"], kubeconfig, "/api/v1/namespaces/team/pods/p")
        assert pod["spec"]["priority"] == 1000
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)
    assert p.returncode == 0
