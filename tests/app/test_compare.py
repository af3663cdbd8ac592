"""``simulate --compare`` (issue #20 §4): the same input replayed per profile file; the exact JSON
shape; the same profile twice differs nowhere; MostAllocated uses fewer nodes than LeastAllocated;
and ``--report`` writes a self-contained page with the heatmaps."""

from __future__ import annotations

import html
import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main

CLUSTER = [
    *[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"n{i}", "labels": {
        "topology.kubernetes.io/zone": f"z{i % 3}"}}, "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}
      for i in range(6)],
    *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "namespace": "default"},
       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "500m",
                                                                                      "memory": "256Mi"}}}]}}
      for i in range(12)],
]


def profile(strategy: str) -> dict[str, Any]:
    return {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
            "metadata": {"name": "default-scheduler"},
            "spec": {"schedulerName": "default-scheduler", "percentageOfNodesToScore": 100, "pluginConfig": [
                {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": strategy}}}]}}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, str]:
    out = {}
    for name, doc in (("cluster.yaml", {"apiVersion": "v1", "kind": "List", "items": CLUSTER}),
                      ("least.yaml", profile("LeastAllocated")), ("most.yaml", profile("MostAllocated"))):
        (tmp_path / name).write_text(yaml.safe_dump(doc))
        out[name] = str(tmp_path / name)
    return out


def compare(files: dict[str, str], *names: str, extra: tuple[str, ...] = ()) -> Any:
    args = ["simulate", "-f", files["cluster.yaml"], "--output", "json", "--timeout", "60", *extra]
    for n in names:
        args += ["--compare", files[n]]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_least_against_most_allocated(files: dict[str, str], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    out = compare(files, "least.yaml", "most.yaml", extra=("--report", str(page)))
    assert list(out) == ["runs", "differences"]
    least, most = out["runs"]
    assert least["profiles"] == [files["least.yaml"]] and most["profiles"] == [files["most.yaml"]]
    s = least["summary"]
    assert list(s) == ["pods", "scheduled", "pending", "nodesUsed", "utilisation", "fragmentation", "zones"]
    assert (s["pods"], s["scheduled"], s["pending"]) == (12, 12, 0)
    assert set(s["utilisation"]) == {"cpu", "memory"} and set(s["utilisation"]["cpu"]) == {"mean", "stdev"}
    assert set(s["fragmentation"]) == {"cpu", "memory"} and sum(s["zones"].values()) == 12
    assert s["utilisation"]["cpu"]["mean"] == pytest.approx(12 * 0.5 / (6 * 4), abs=1e-3)
    assert most["summary"]["nodesUsed"] < least["summary"]["nodesUsed"] == 6
    assert most["summary"]["utilisation"]["cpu"]["stdev"] > least["summary"]["utilisation"]["cpu"]["stdev"]
    assert out["differences"] and all(len(d["nodes"]) == 2 for d in out["differences"])

    class Cells(HTMLParser):
        def __init__(self) -> None:
            super().__init__()
            self.heat, self.external = 0, []

        def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
            a = dict(attrs)
            if tag == "td" and a.get("class") == "heat":
                self.heat += 1
            self.external += [v for k, v in a.items() if k in ("src", "href") and v]
    cells = Cells()
    text = page.read_text()
    cells.feed(text)
    assert cells.heat == 2 * 6 * 2 and cells.external == []      # 2 runs × 6 nodes × (cpu, memory); no network
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium:                                                  # Debian's chromium, where installed
        dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom",
                              page.as_uri()], capture_output=True, text=True, timeout=60, check=True).stdout
        assert dom.count('class="heat"') == 24 and 'id="differences"' in dom


def test_the_same_profile_twice_differs_nowhere(files: dict[str, str]) -> None:
    out = compare(files, "least.yaml", "least.yaml")
    assert out["differences"] == []
    assert out["runs"][0]["summary"] == out["runs"][1]["summary"]


def test_a_file_without_profiles_is_refused(files: dict[str, str]) -> None:
    result = CliRunner().invoke(main, ["simulate", "-f", files["cluster.yaml"], "--compare", files["cluster.yaml"]])
    assert result.exit_code == 2 and "holds no SchedulingProfile" in result.output


def test_plain_simulate_writes_a_report_of_its_one_run(files: dict[str, str], tmp_path: Path) -> None:
    page = tmp_path / "one.html"
    result = CliRunner().invoke(main, ["simulate", "-f", files["cluster.yaml"], "--timeout", "60", "--report", str(page)])
    assert result.exit_code == 0, result.output
    text = page.read_text()
    assert text.count('class="heat"') == 6 * 2 and "default-scheduler" in text


def test_each_run_gets_the_simulated_dra_driver(tmp_path: Path, files: dict[str, str]) -> None:
    """--gpus-per-node applies to every --compare run: 2 nodes of 1 GPU, 3 one-GPU pods, in each run
    2 placed and 1 pending."""
    gpu_pods = [
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
         "metadata": {"name": "one", "namespace": "default"},
         "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu.example.com"}}]}}}},
        *[{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"train-{i}", "namespace": "default"},
           "spec": {"resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "one"}],
                    "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}
          for i in range(3)]]
    cluster = tmp_path / "gpus.yaml"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*CLUSTER[:2], *gpu_pods]}))
    out = compare({**files, "cluster.yaml": str(cluster)}, "least.yaml", "most.yaml", extra=("--gpus-per-node", "1"))
    for run in out["runs"]:
        assert (run["summary"]["scheduled"], run["summary"]["pending"]) == (2, 1)


def test_pending_pods_are_grouped_by_reason_per_profile(files: dict[str, str], tmp_path: Path) -> None:
    """As found: with MostAllocated, 2 ``api`` pods with required hostname anti-affinity stayed pending on
    2 nodes, and the table, the JSON and the HTML gave no reason. Each run now says why, per profile."""
    api = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"api-{i}", "namespace": "default",
                                                           "labels": {"app": "api"}},
            "spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "api"}}, "topologyKey": "kubernetes.io/hostname"}]}},
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m"}}}]}}
           for i in range(4)]
    nodes = [{**n, "metadata": {**n["metadata"], "labels": {**n["metadata"]["labels"],
                                                            "kubernetes.io/hostname": n["metadata"]["name"]}}}
             for n in CLUSTER[:2]]
    cluster, page = tmp_path / "api.yaml", tmp_path / "api.html"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [*nodes, *api]}))
    spread = {**files, "cluster.yaml": str(cluster)}
    out = compare(spread, "least.yaml", "most.yaml", extra=("--report", str(page)))
    why = "node(s) didn't match pod anti-affinity rules"
    for run in out["runs"]:
        assert run["summary"]["pending"] == 2 and list(run["summary"]) == [
            "pods", "scheduled", "pending", "nodesUsed", "utilisation", "fragmentation", "zones"]
        (group,) = run["pendingByProfile"]["default-scheduler"]
        assert (group["reason"], group["count"], len(group["pods"])) == (why, 2, 2)
        assert group["message"].startswith(f"0/2 nodes are available: 2 {why}.")
    text = page.read_text()
    assert text.count(f'<td class="count">2</td><td class="reason">{html.escape(why)}</td>') == 2
    table = CliRunner().invoke(main, ["simulate", "-f", str(cluster), "--timeout", "60",
                                      "--compare", files["least.yaml"], "--compare", files["most.yaml"]])
    assert table.exit_code == 0, table.output
    assert table.stdout.count(f"  default-scheduler:     2  {why}\n") == 2
    assert f"PENDING BY REASON in {files['most.yaml']}" in table.stdout
