"""``kopf-scheduler explain NAMESPACE/NAME`` against a cluster (issue #20 §2): the pod's profile run
over the cluster's state, locally; another profile on request; every node with --all-nodes; and
nothing written to the cluster."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.kubeapi.config import load_config
from scheduler.profiles.crd import API_VERSION, KIND, crd, profiles_path
from scheduler.simulator import SimulatedCluster
from scheduler.simulator.tls import SelfSigned
from tests.simulator.helpers import Http


def node(name: str, cpu: str, taint: bool = False) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "spec": {"taints": [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}] if taint else []},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def pod(name: str, cpu: str, node_name: str | None = None, scheduler: str = "default-scheduler") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "shop"},
            "spec": {"schedulerName": scheduler, **({"nodeName": node_name} if node_name else {}),
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}}


@pytest.fixture(scope="module")
def cluster() -> Iterator[SimulatedCluster]:
    c = SimulatedCluster()
    c.start()
    http = Http(c)
    http("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd())
    for name, spec in (("default", {"schedulerName": "default-scheduler"}),
                       ("packing", {"schedulerName": "bin-packing", "pluginConfig": [
                           {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]})):
        assert http("POST", profiles_path(), {"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": name},
                                              "spec": spec})[0] == 201
    http("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}})
    for n in (node("empty", "8"), node("busy", "8"), node("small", "1"), node("db", "8", taint=True)):
        http("POST", "/api/v1/nodes", n)
    http("POST", "/api/v1/namespaces/shop/pods", pod("resident", "6", node_name="busy"))
    http("POST", "/api/v1/namespaces/shop/pods", pod("web", "1500m"))
    http("POST", "/api/v1/namespaces/shop/pods", pod("huge", "16"))
    yield c
    c.stop()


def explain(cluster: SimulatedCluster, *args: str) -> Any:
    result = CliRunner().invoke(main, ["explain", *args, "--kubeconfig", str(cluster.kubeconfig), "--output", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_the_pods_own_profile_spreads_and_another_packs(cluster: SimulatedCluster) -> None:
    out = explain(cluster, "shop/web")
    d = out["decision"]
    assert d["pod"] == "shop/web" and d["profile"] == "default-scheduler" and d["profileGeneration"] == 1
    assert d["node"] == "empty"                                     # LeastAllocated
    assert d["evaluatedNodes"] == 4 and d["feasibleNodes"] == 2
    assert sum(d["filtered"].values()) == 2 and d["filtered"]["Insufficient cpu"] == 1
    assert [s["node"] for s in d["scores"]] == ["empty", "busy"]
    assert all(sum(s["plugins"].values()) == s["total"] for s in d["scores"])
    assert out["recorded"] is None and "not reachable" in out["recordedError"]
    packed = explain(cluster, "shop/web", "--profile", "packing")["decision"]        # by CR name
    assert packed["node"] == "busy" and packed["profile"] == "bin-packing"          # MostAllocated
    assert explain(cluster, "shop/web", "--profile", "bin-packing")["decision"]["node"] == "busy"


def test_all_nodes_and_a_pending_pod(cluster: SimulatedCluster) -> None:
    out = explain(cluster, "shop/huge", "--all-nodes")
    d = out["decision"]
    assert d["node"] is None and d["feasibleNodes"] == 0 and d["scores"] == []
    assert d["filtered"]["Insufficient cpu"] == 3
    nodes = {n["node"]: n for n in out["nodes"]}
    assert set(nodes) == {"empty", "busy", "small", "db"}
    assert nodes["db"]["plugin"] == "TaintToleration" and not nodes["db"]["feasible"]
    assert nodes["small"]["plugin"] == "NodeResourcesFit" and nodes["small"]["reasons"] == ["Insufficient cpu"]
    web = {n["node"]: n for n in explain(cluster, "shop/web", "--all-nodes")["nodes"]}
    assert web["empty"]["feasible"] and web["empty"]["total"] >= web["busy"]["total"]


def test_nothing_is_written_and_errors_are_one_line(cluster: SimulatedCluster) -> None:
    http = Http(cluster)
    explain(cluster, "shop/web")
    assert http("GET", "/api/v1/namespaces/shop/pods/web")[1]["spec"].get("nodeName") is None
    assert http("GET", "/api/v1/namespaces/shop/events")[1]["items"] == []
    for args, message in ((["shop/nope"], "pod shop/nope"), (["shop/web", "--profile", "nobody"], "'nobody'"),
                          (["web"], "expected NAMESPACE/NAME")):
        result = CliRunner().invoke(main, ["explain", *args, "--kubeconfig", str(cluster.kubeconfig)])
        assert result.exit_code != 0 and message in result.output, result.output


@contextmanager
def decisions_server(tls: SelfSigned | None) -> Iterator[tuple[str, list[str]]]:
    """A stand-in for the scheduler's secure port on 127.0.0.1: answers any GET with a record, and
    keeps the Authorization header of each request it got."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            seen.append(self.headers.get("Authorization") or "")
            body = json.dumps({"pod": "shop/web", "node": "empty"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    if tls is not None:
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(str(tls.cert_file), str(tls.key_file))
        server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{server.server_address[1]}", seen
    finally:
        server.shutdown()
        server.server_close()


def test_scheduler_url_gets_the_token_only_over_verified_https(cluster: SimulatedCluster, tmp_path: Path) -> None:
    """#32: ``--scheduler-url`` sends the user's cluster token. Plain HTTP is refused before anything
    is sent; HTTPS whose certificate does not verify gets no request; HTTPS verified against
    ``--scheduler-ca-file`` gets the token and its record is shown."""
    token = load_config(str(cluster.kubeconfig)).bearer()
    assert token
    with decisions_server(None) as (url, seen):
        result = CliRunner().invoke(main, ["explain", "shop/web", "--kubeconfig", str(cluster.kubeconfig),
                                           "--scheduler-url", url])
        assert result.exit_code == 1 and "only https:// is allowed" in result.output, result.output
    assert seen == []
    pair = SelfSigned(tmp_path, common_name="kopf-scheduler", stem="serving")
    with decisions_server(pair) as (url, seen):
        out = explain(cluster, "shop/web", "--scheduler-url", url)
        assert out["recorded"] is None and "certificate verify failed" in out["recordedError"], out
        assert seen == []
        out = explain(cluster, "shop/web", "--scheduler-url", url, "--scheduler-ca-file", str(pair.cert_file))
        assert out["recorded"] == {"pod": "shop/web", "node": "empty"} and "recordedError" not in out
        assert seen == [f"Bearer {token}"]
