"""``simulate --report``: the HTML page. Natural node order, node sizes, per-zone totals and stranded
capacity as the module docstring defines them (table-driven, on a built report), and a real headless
Chromium rendering the page of a run with MostAllocated where 2 ``api`` pods with required hostname
anti-affinity stay pending: the DOM and the screenshot show the legend, the heatmaps and why."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.app.report import HEAT_STOPS, STRANDED_COLOUR, heat_colour, natural_key, node_rows, report_html
from scheduler.app.simulate import SimulationReport
from tests.app.chromium import colour_counts, dump_dom, find_chromium, read_png, screenshot

ANTI_AFFINITY = "node(s) didn't match pod anti-affinity rules"


@pytest.mark.parametrize(("names", "want"), [
    (["node-10", "node-2", "node-1"], ["node-1", "node-2", "node-10"]),
    (["b", "a10", "a9", "a"], ["a", "a9", "a10", "b"]),
    (["z1-n10", "z1-n2", "z0-n3"], ["z0-n3", "z1-n2", "z1-n10"]),
])
def test_natural_order(names: list[str], want: list[str]) -> None:
    assert sorted(names, key=natural_key) == want


def node(name: str, cpu: str, mem: str, req_cpu: str, req_mem: str) -> dict[str, Any]:
    return {"name": name, "pods": 1, "allocatable": {"cpu": cpu, "memory": mem},
            "requested": {"cpu": req_cpu, "memory": req_mem}}


GI = 2**30


@pytest.mark.parametrize(("case", "entry", "smallest", "want"), [
    ("empty node", node("n", "4", "8Gi", "0m", "0"), {}, {"cpu": 0, "memory": 0}),
    ("full node", node("n", "4", "8Gi", "4000m", str(8 * GI)), {}, {"cpu": 0, "memory": 0}),
    ("memory full: the free cpu is stranded", node("n", "4", "8Gi", "1000m", str(8 * GI)), {},
     {"cpu": 3000, "memory": 0}),
    ("cpu full: the free memory is stranded", node("n", "4", "8Gi", "4000m", str(2 * GI)), {},
     {"cpu": 0, "memory": 6 * GI}),
    ("under 1 % of memory left counts as none", node("n", "4", "8Gi", "1000m", str(8 * GI - 2**20)), {},
     {"cpu": 3000, "memory": 0}),
    ("less memory left than the smallest pending request counts as none",
     node("n", "4", "8Gi", "1000m", str(7 * GI)), {"memory": 2 * GI}, {"cpu": 3000, "memory": 0}),
    ("as much left as the smallest pending request is free", node("n", "4", "8Gi", "1000m", str(7 * GI)),
     {"memory": GI}, {"cpu": 0, "memory": 0}),
])
def test_stranded_capacity(case: str, entry: dict[str, Any], smallest: dict[str, int], want: dict[str, int]) -> None:
    (row,) = node_rows(SimulationReport(nodes=[entry], smallest_pending=smallest), {})
    assert row.stranded == want, case


def test_page_has_sizes_zones_and_stranded_totals() -> None:
    report = SimulationReport(nodes=[node("node-10", "4", "8Gi", "1000m", str(8 * GI)),
                                     node("node-2", "8", "16Gi", "2000m", str(4 * GI)),
                                     node("node-1", "4", "8Gi", "4000m", str(2 * GI))])
    summary = {"pods": 3, "scheduled": 3, "pending": 0, "nodesUsed": 3,
               "utilisation": {r: {"mean": 0.5, "stdev": 0.1} for r in ("cpu", "memory")}}
    page = report_html({"runs": [{"profiles": ["p"], "summary": summary}], "differences": []}, [report],
                       {"node-10": "zone-a", "node-2": "zone-a", "node-1": "zone-b"})
    assert re.findall(r'data-node="([^"]+)"', page) == ["node-1", "node-2", "node-10"]
    assert '<td class="size">8</td><td class="size">16.0Gi</td>' in page          # node-2's size
    zone_a = re.search(r'<tr data-zone="zone-a">(.*?)</tr>', page)
    assert zone_a is not None
    # zone-a: node-2 and node-10; 3 of 12 cpu and 12 of 24Gi requested; node-10's 3 cpu stranded
    assert re.findall(r"<td>([^<]*)</td>", zone_a.group(1)) == ["2", "2", "3 / 12 (25%)", "12.0Gi / 24.0Gi (50%)",
                                                                "3", "0.0Gi"]
    zone_b = re.search(r'<tr data-zone="zone-b">(.*?)</tr>', page)
    assert zone_b is not None and zone_b.group(1).endswith("<td>0</td><td>6.0Gi</td>")
    assert page.count('class="stranded"') == 2 and "stranded 3 cpu, 6.0Gi" in page


def api_pod(i: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"api-{i}", "namespace": "default",
                                                          "labels": {"app": "api"}},
            "spec": {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "api"}}, "topologyKey": "kubernetes.io/hostname"}]}},
                "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "100m",
                                                                                     "memory": "64Mi"}}}]}}


CLUSTER = [
    {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
     "metadata": {"name": "default-scheduler"},
     "spec": {"schedulerName": "default-scheduler", "pluginConfig": [
         {"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}},
    *[{"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": {
        "kubernetes.io/hostname": f"node-{i}", "topology.kubernetes.io/zone": f"zone-{i % 2}"}},
       "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}} for i in (1, 2, 10)],
    # node-10's memory is taken: its free cpu is stranded
    {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "cache", "namespace": "default"},
     "spec": {"nodeName": "node-10", "containers": [{"name": "c", "image": "i", "resources": {
         "requests": {"cpu": "500m", "memory": "8150Mi"}}}]}},
    *[api_pod(i) for i in range(4)],
]


def test_chromium_renders_the_legend_heatmaps_and_why(tmp_path: Path) -> None:
    chromium = find_chromium()
    cluster, page = tmp_path / "cluster.yaml", tmp_path / "report.html"
    cluster.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": CLUSTER}))
    result = CliRunner().invoke(main, ["simulate", "-f", str(cluster), "--output", "json", "--timeout", "60",
                                       "--report", str(page)])
    assert result.exit_code == 0, result.output
    out = json.loads(result.stdout)
    (group,) = out["pendingByProfile"]["default-scheduler"]
    assert group["count"] == 2 and ANTI_AFFINITY in group["reason"], group

    dom = dump_dom(chromium, page)
    assert 'id="legend"' in dom and "stranded: free CPU on a node with no free memory" in dom
    assert re.findall(r'data-node="([^"]+)"', dom) == ["node-1", "node-2", "node-10"]
    assert dom.count('class="heat"') == 3 * 2
    assert re.search(r'<tr data-node="node-10">.*?<td class="stranded"[^>]*>3\.5 cpu</td>', dom)
    reasons = [(int(n), html.unescape(r)) for n, r in
               re.findall(r'<td class="count">(\d+)</td><td class="reason">([^<]*)</td>', dom)]
    assert reasons == [(2, group["reason"])]

    width, height, rows = read_png(screenshot(chromium, page, tmp_path / "report.png"))
    counts = colour_counts(rows)
    assert (width, height) == (1400, 1000)
    assert len(counts) > 20 and max(counts.values()) < 0.95 * width * height          # not blank
    legend = [heat_colour(s) for s in HEAT_STOPS[1:]] + [STRANDED_COLOUR]
    assert all(counts.get(c, 0) >= 200 for c in legend), {c: counts.get(c, 0) for c in legend}  # 24×14 swatches
    cells = {tuple(int(v) for v in m) for m in re.findall(r'class="heat"[^>]*background:\s*rgb\((\d+),\s*(\d+),\s*(\d+)\)',
                                                           dom)}
    assert cells and all(counts.get(c, 0) >= 200 for c in cells), {c: counts.get(c, 0) for c in cells}


def test_without_chromium_the_browser_test_fails_in_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch,
                                                                           tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))                     # no chromium on it
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI=true and no chromium"):
        find_chromium()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception):
        find_chromium()


def test_ci_installs_debians_chromium_before_the_tests() -> None:
    script = (Path(__file__).parents[2] / ".ci" / "run").read_text()
    install = script.index("apt-get install -y -qq --no-install-recommends chromium")
    assert 'export CI="${CI:-true}"' in script and "DEBIAN_FRONTEND=noninteractive" in script
    assert install < script.index("pytest"), "chromium must be installed before any test runs"
