"""``kopf-scheduler simulate``: the real operator on the embedded cluster, and its exact JSON report."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from scheduler.app.cli import main

DUMP = {"apiVersion": "v1", "kind": "List", "items": [
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "resourceVersion": "99", "uid": "x"},
     "status": {"capacity": {"cpu": "2", "memory": "4Gi", "pods": "110"}}},
    *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "namespace": "shop"},
       "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "500m"}}}]}}
      for i in range(3)],
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "huge", "namespace": "shop"},
     "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "8"}}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "broken", "namespace": "shop"},
     "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "two"}}}]}},
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "elsewhere", "namespace": "shop"},
     "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}]}},
]}


def test_simulate_replays_a_dump_and_reports_exact_json(tmp_path: Path) -> None:
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(DUMP))
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "--output", "json", "--timeout", "60",
                                       "--allow-rejected"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert set(report) == {"pods", "nodes", "profiles", "rejected", "summary", "unschedulable", "terminal"}
    pods = {p["name"]: p for p in report["pods"]}
    assert set(pods["web-0"]) == {"namespace", "name", "schedulerName", "node", "message", "deleted", "volumes",
                                  "devices"}
    assert pods["web-0"]["volumes"] == []          # no claims (#18: each claim and the PV it bound to)
    assert pods["web-0"]["devices"] == []          # no ResourceClaims (#19: each allocated device)
    assert [pods[f"web-{i}"]["node"] for i in range(3)] == ["n1"] * 3
    assert pods["huge"]["node"] is None and pods["huge"]["message"].startswith(
        "0/1 nodes are available: 1 Insufficient cpu.")
    assert pods["elsewhere"]["node"] is None and "nobody" in pods["elsewhere"]["message"]
    assert "broken" not in pods
    (rej,) = report["rejected"]
    assert (rej["kind"], rej["name"], rej["code"]) == ("Pod", "broken", 400)
    assert "spec.containers[0].resources.requests[cpu]" in rej["message"]
    (node,) = report["nodes"]
    assert set(node) == {"name", "pods", "allocatable", "requested"}
    assert (node["name"], node["pods"], node["requested"]["cpu"]) == ("n1", 3, "1500m")
    assert report["profiles"] == [{"name": "default-scheduler", "accepted": True, "message": None}]
    s = report["summary"]
    assert set(s) == {"pods", "scheduled", "unschedulable", "seconds", "podsPerSecond", "terminal", "rejected"}
    assert (s["pods"], s["scheduled"], s["unschedulable"], s["terminal"], s["rejected"]) == (5, 3, 1, 0, 1)
    assert [(g["reason"], g["count"]) for g in report["unschedulable"]] == [
        ("Insufficient cpu", 1), ("no SchedulingProfile serves schedulerName 'nobody'", 1)]


def test_simulate_demo_cluster_table(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["simulate", "--nodes", "3", "--pods", "12", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "12/12 pods scheduled, 0 unschedulable" in result.stdout
    assert "default-scheduler: accepted" in result.stdout


def test_simulate_explain_adds_each_pods_decision(tmp_path: Path) -> None:
    """``--explain``: each pod's report gains ``"decision"``, the record ``/debug/decisions`` serves."""
    f = tmp_path / "dump.yaml"
    f.write_text(yaml.safe_dump(DUMP))
    result = CliRunner().invoke(main, ["simulate", "-f", str(f), "--output", "json", "--timeout", "60", "--explain",
                                       "--allow-rejected"])
    assert result.exit_code == 0, result.output
    pods = {p["name"]: p for p in json.loads(result.stdout)["pods"]}
    web = pods["web-0"]["decision"]
    assert list(web) == ["pod", "profile", "profileGeneration", "attempt", "time", "node", "evaluatedNodes",
                         "feasibleNodes", "filtered", "scores", "preemption"]
    assert (web["pod"], web["node"], web["profile"], web["evaluatedNodes"]) == ("shop/web-0", "n1", "default-scheduler", 1)
    huge = pods["huge"]["decision"]
    assert huge["node"] is None and huge["filtered"] == {"Insufficient cpu": 1} and huge["scores"] == []
    assert pods["elsewhere"]["decision"] is None           # no profile serves it: never attempted
