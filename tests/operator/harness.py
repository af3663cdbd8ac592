"""The real operator (worker thread + Kopf) against a simulated cluster, for end-to-end tests."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from scheduler.app.runtime import OperatorRuntime
from scheduler.kubeapi import load_config
from scheduler.profiles.crd import crd
from scheduler.profiles.explanation_crd import crd as explanation_crd
from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import KUBECTL


class Env:
    def __init__(self, cluster: SimulatedCluster, runtime: OperatorRuntime, home: Path) -> None:
        self.cluster, self.runtime, self.api = cluster, runtime, Http(cluster)
        self.env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(home)}

    def kubectl(self, *args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        assert KUBECTL is not None
        p = subprocess.run([KUBECTL, *args], check=False, input=stdin, capture_output=True, text=True,
                           env=self.env, timeout=60)
        if check and p.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)}: {p.stderr}")
        return p

    def apply(self, *objs: dict[str, Any]) -> None:
        self.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(objs))

    def get_json(self, *args: str) -> Any:
        return json.loads(self.kubectl("get", *args, "-o", "json").stdout)

    def metrics(self) -> str:
        port = self.runtime.http_ports[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
            return r.read().decode()

    def wait(self, what: Callable[[], Any], timeout: float = 30.0, message: str = "") -> Any:
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = what()
            if got:
                return got
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting: {message}")


@contextmanager
def running_operator(home: Path, *, series_interval: float = 30, leader_election: dict[str, Any] | None = None,
                     runtime_kwargs: dict[str, Any] | None = None,
                     kubeconfig: Callable[[SimulatedCluster], Path] | None = None, kopf: bool = True,
                     **cluster_kwargs: Any) -> Iterator[Env]:
    """``kubeconfig``: the operator's own kubeconfig, made from the started cluster (default: the
    cluster's, with its static admin token, which ``Env.kubectl`` always uses). ``kopf=False``
    runs the worker thread alone: what reaches the scheduler then came through its own informers."""
    cluster = SimulatedCluster(**cluster_kwargs)
    cluster.start()
    for c in (crd(), explanation_crd()):
        Http(cluster)("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", c)
    config = load_config(str(kubeconfig(cluster) if kubeconfig else cluster.kubeconfig))
    runtime = OperatorRuntime(config, http_addresses=[("127.0.0.1", 0)], seed=1,
                              series_interval=series_interval, leader_election=leader_election,
                              **(runtime_kwargs or {}))
    runtime.start()
    assert runtime.synced.wait(30) and runtime.failed is None
    stop_kopf = start_kopf(runtime) if kopf else (lambda: None)
    try:
        yield Env(cluster, runtime, home)
    finally:
        stop_kopf()
        runtime.stop()
        cluster.stop()


def start_kopf(runtime: OperatorRuntime) -> Callable[[], None]:
    """Kopf with the operator's handlers for ``runtime``, in a thread; returns its stopper."""
    stop = threading.Event()

    t = threading.Thread(target=runtime.run_kopf, args=(stop,), daemon=True)
    t.start()

    def stopper() -> None:
        stop.set()
        t.join(timeout=20)
    return stopper
