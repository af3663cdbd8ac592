"""``simulate --report FILE``: one self-contained HTML page (inline CSS, no script, no network) of
one run or of every ``--compare`` run, side by side.

Per run:

- a **heatmap**: one row per node in natural order (``node-2`` before ``node-10``), with its zone,
  its size (allocatable CPU and memory), its pods, and per resource the share requested / allocatable
  as a cell from white (0 %) to red (100 % and over);
- **stranded capacity**: free CPU on nodes with no free memory, and free memory on nodes with no
  free CPU. A resource counts as *no free* on a node when what is left of it is below the larger of
  1 % of the node's allocatable and the smallest request for it among the pods left pending (so a
  node "has no free CPU" exactly when no pending pod could get its CPU there). Such cells are blue;
- **per-zone totals** (``topology.kubernetes.io/zone``): nodes, pods, requested / allocatable and
  stranded capacity per resource;
- the **pending pods grouped by reason, per profile** (``pendingByProfile``): count, reason (the
  FitError's reasons without the node counts), one full message and the pods.

A legend explains the colours; then the pods placed differently between runs.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from scheduler.app.simulate import SimulationReport
from scheduler.quantity import resource_value

__all__ = ["HEAT_STOPS", "STRANDED_COLOUR", "NodeRow", "heat_colour", "natural_key", "node_rows", "report_html"]

Obj = dict[str, Any]
RESOURCES = ("cpu", "memory")
# the legend's swatches: the heat colour at these shares
HEAT_STOPS = (0.0, 0.25, 0.5, 0.75, 1.0)
STRANDED_COLOUR = (70, 130, 200)
_DIGITS = re.compile(r"(\d+)")


def natural_key(name: str) -> list[tuple[int, int | str]]:
    """Sort key that orders the digit runs of a name as numbers: ``node-2`` before ``node-10``."""
    return [(0, int(part)) if part.isdigit() else (1, part) for part in _DIGITS.split(name) if part]


def heat_colour(ratio: float) -> tuple[int, int, int]:
    """White at 0, red at 1; over-committed stays full red."""
    g = int(255 - 200 * max(0.0, min(1.0, ratio)))
    return 255, g, g


@dataclass(frozen=True)
class NodeRow:
    """One node of a run: name, zone, pods, allocatable and requested (milli-CPU, bytes) and what is stranded."""
    name: str
    zone: str
    pods: int
    allocatable: dict[str, int]
    requested: dict[str, int]
    stranded: dict[str, int]

    def ratio(self, resource: str) -> float:
        alloc = self.allocatable[resource]
        return self.requested[resource] / alloc if alloc > 0 else 0.0


def _no_free(resource: str, free: int, alloc: int, smallest_pending: dict[str, int]) -> bool:
    return free < max(-(-alloc // 100), smallest_pending.get(resource, 0))


def node_rows(report: SimulationReport, zones: dict[str, str]) -> list[NodeRow]:
    """The run's nodes in natural order, each with its stranded capacity (see the module docstring)."""
    rows = []
    for n in sorted(report.nodes, key=lambda n: natural_key(str(n["name"]))):
        alloc = {r: resource_value(r, str(n["allocatable"].get(r, "0"))) for r in RESOURCES}
        req = {r: resource_value(r, str(n["requested"].get(r, "0"))) for r in RESOURCES}
        free = {r: max(0, alloc[r] - req[r]) for r in RESOURCES}
        none = {r: _no_free(r, free[r], alloc[r], report.smallest_pending) for r in RESOURCES}
        stranded = {"cpu": free["cpu"] if none["memory"] and not none["cpu"] else 0,
                    "memory": free["memory"] if none["cpu"] and not none["memory"] else 0}
        rows.append(NodeRow(str(n["name"]), zones.get(str(n["name"]), ""), int(n["pods"]), alloc, req, stranded))
    return rows


def _cpu(milli: int) -> str:
    return f"{milli / 1000:g}"


def _mem(b: int) -> str:
    return f"{b / 2**30:.1f}Gi"


def _rgb(c: tuple[int, int, int]) -> str:
    return f"rgb({c[0]},{c[1]},{c[2]})"


def _heat_cell(ratio: float) -> str:
    return (f'<td class="heat" data-ratio="{ratio:.3f}" style="background:{_rgb(heat_colour(ratio))}" '
            f'title="{ratio:.0%}">{ratio:.0%}</td>')


def _stranded_cell(row: NodeRow) -> str:
    parts = []
    if row.stranded["cpu"]:
        parts.append(f"{_cpu(row.stranded['cpu'])} cpu")
    if row.stranded["memory"]:
        parts.append(_mem(row.stranded["memory"]))
    if not parts:
        return '<td class="stranded-none"></td>'
    return f'<td class="stranded" style="background:{_rgb(STRANDED_COLOUR)};color:#fff">{", ".join(parts)}</td>'


def _heatmap(rows: list[NodeRow]) -> str:
    body = "".join(
        f'<tr data-node="{html.escape(r.name)}"><th>{html.escape(r.name)}</th><td>{html.escape(r.zone)}</td>'
        f'<td class="size">{_cpu(r.allocatable["cpu"])}</td><td class="size">{_mem(r.allocatable["memory"])}</td>'
        f"<td>{r.pods}</td>{''.join(_heat_cell(r.ratio(x)) for x in RESOURCES)}{_stranded_cell(r)}</tr>"
        for r in rows)
    return ('<table class="heatmap"><tr><th>node</th><th>zone</th><th>cpu</th><th>memory</th><th>pods</th>'
            f'<th>cpu used</th><th>memory used</th><th>stranded</th></tr>{body}</table>')


def _zones(rows: list[NodeRow]) -> str:
    by_zone: dict[str, list[NodeRow]] = {}
    for r in rows:
        by_zone.setdefault(r.zone or "(none)", []).append(r)
    body = ""
    for zone in sorted(by_zone, key=natural_key):
        zr = by_zone[zone]
        tot = {k: {x: sum(getattr(r, k)[x] for r in zr) for x in RESOURCES} for k in ("allocatable", "requested",
                                                                                     "stranded")}
        used = {x: tot["requested"][x] / tot["allocatable"][x] if tot["allocatable"][x] else 0.0 for x in RESOURCES}
        body += (f'<tr data-zone="{html.escape(zone)}"><th>{html.escape(zone)}</th><td>{len(zr)}</td>'
                 f"<td>{sum(r.pods for r in zr)}</td>"
                 f'<td>{_cpu(tot["requested"]["cpu"])} / {_cpu(tot["allocatable"]["cpu"])} ({used["cpu"]:.0%})</td>'
                 f'<td>{_mem(tot["requested"]["memory"])} / {_mem(tot["allocatable"]["memory"])} '
                 f'({used["memory"]:.0%})</td>'
                 f'<td>{_cpu(tot["stranded"]["cpu"])}</td><td>{_mem(tot["stranded"]["memory"])}</td></tr>')
    return ('<table class="zones"><tr><th>zone</th><th>nodes</th><th>pods</th><th>cpu requested / allocatable</th>'
            '<th>memory requested / allocatable</th><th>stranded cpu</th><th>stranded memory</th></tr>'
            f"{body}</table>")


def _pending(by_profile: dict[str, list[Obj]]) -> str:
    if not by_profile:
        return '<table class="pending"><tr><td>no pending pods</td></tr></table>'
    body = ""
    for profile, groups in by_profile.items():
        for g in groups:
            pods = [str(p) for p in g["pods"]]
            shown = ", ".join(html.escape(p) for p in pods[:10]) + (f" and {len(pods) - 10} more" if len(pods) > 10
                                                                    else "")
            body += (f'<tr><td>{html.escape(profile)}</td><td class="count">{g["count"]}</td>'
                     f'<td class="reason">{html.escape(str(g["reason"]))}</td>'
                     f'<td class="message">{html.escape(str(g["message"] or ""))}</td><td>{shown}</td></tr>')
    return ('<table class="pending"><tr><th>profile</th><th>pods</th><th>reason</th><th>example message</th>'
            f"<th>pods</th></tr>{body}</table>")


def _legend(smallest_pending: dict[str, int]) -> str:
    swatches = "".join(f'<span class="swatch" style="background:{_rgb(heat_colour(s))}"></span>{s:.0%}'
                       f'{"+" if s == 1.0 else ""} ' for s in HEAT_STOPS)
    pending = ", ".join(f"{_cpu(v) if r == 'cpu' else _mem(v)} {r}" for r, v in sorted(smallest_pending.items())
                        if r in RESOURCES) or "none"
    return ('<div id="legend"><h2>Legend</h2>'
            f"<p>cpu used, memory used: requested / allocatable. {swatches}</p>"
            f'<p><span class="swatch" style="background:{_rgb(STRANDED_COLOUR)}"></span>stranded: free CPU on a '
            "node with no free memory, or free memory on a node with no free CPU. &quot;No free&quot; means less "
            "left than the larger of 1 % of the node's allocatable and the smallest request among the pending "
            f"pods (smallest pending: {html.escape(pending)}).</p>"
            "<p>cpu and memory: the node's allocatable (cores, GiB). Pending pods are grouped by profile and by "
            "the reasons of their last FitError, without the node counts.</p></div>")


def report_html(result: Obj, reports: list[SimulationReport], zones: dict[str, str] | None = None) -> str:
    """The page for ``result`` (``run_compare``'s JSON, or one run's) and each run's full report."""
    zones = zones or {}
    runs: list[Obj] = result["runs"]
    cols = []
    smallest: dict[str, int] = {}
    for run, report in zip(runs, reports, strict=True):
        for r, v in report.smallest_pending.items():
            smallest[r] = min(v, smallest.get(r, v))
        rows = node_rows(report, zones)
        s: Obj = run["summary"]
        util: dict[str, dict[str, float]] = s["utilisation"]
        names: list[str] = run["profiles"]
        cols.append(
            f'<section class="run"><h2>{html.escape(", ".join(names))}</h2>'
            f'<p>{s["scheduled"]}/{s["pods"]} scheduled, {s["pending"]} pending, {s["nodesUsed"]} nodes used; '
            f'cpu {util["cpu"]["mean"]:.0%} &plusmn; {util["cpu"]["stdev"]:.0%}, '
            f'memory {util["memory"]["mean"]:.0%} &plusmn; {util["memory"]["stdev"]:.0%}; stranded '
            f'{_cpu(sum(r.stranded["cpu"] for r in rows))} cpu, {_mem(sum(r.stranded["memory"] for r in rows))}</p>'
            f"{_heatmap(rows)}<h3>Zones</h3>{_zones(rows)}"
            f"<h3>Pending pods by reason</h3>{_pending(report.pending_by_profile)}</section>")
    names = [", ".join(r["profiles"]) for r in runs]
    differences: list[Obj] = result["differences"]
    diff_rows = "".join(f"<tr><td>{html.escape(str(d['pod']))}</td>"
                        f"{''.join(f'<td>{html.escape(n) if n else chr(8212)}</td>' for n in d['nodes'])}</tr>"
                        for d in differences) or f'<tr><td colspan="{len(names) + 1}">none</td></tr>'
    return ("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>kopf-scheduler simulate</title><style>"
            "body{font-family:sans-serif;margin:1em}.runs{display:flex;gap:2em;align-items:flex-start}"
            "table{border-collapse:collapse;margin-bottom:.5em}td,th{border:1px solid #ccc;padding:2px 6px;"
            "font-size:12px}td.heat{min-width:3em;text-align:right}td.size{text-align:right}"
            ".swatch{display:inline-block;width:24px;height:14px;border:1px solid #888;margin:0 4px;"
            "vertical-align:middle}</style></head><body>"
            "<h1>kopf-scheduler simulate</h1>"
            f"{_legend(smallest)}"
            f'<div class="runs">{"".join(cols)}</div>'
            f'<h2>Pods placed differently</h2><table id="differences"><tr><th>pod</th>'
            f'{"".join(f"<th>{html.escape(n)}</th>" for n in names)}</tr>{diff_rows}</table>'
            "</body></html>\n")
