"""``simulate --compare A --compare B``: the same cluster replayed once per profile file, and
what each decided.

Each ``--compare`` file holds SchedulingProfiles; in its run they replace the input's own, and the
rest of the input (nodes, pods, everything else) is replayed unchanged, from the same empty
cluster with the same seed. Per run, a summary:

- ``pods``, ``scheduled``, ``pending``; ``nodesUsed`` (nodes holding at least one pod);
- ``utilisation``: per resource (cpu, memory), the mean and population standard deviation over the
  nodes of requested / allocatable;
- ``fragmentation``: per resource, the free capacity stranded on partly used nodes (0 < requested
  < allocatable), as a share of all allocatable;
- ``zones``: scheduled pods per ``topology.kubernetes.io/zone``.

``differences`` lists every pod whose node is not the same in all runs, with its node in each run
(``null`` where it stayed pending). Each run also has ``pendingByProfile``: its pending pods grouped by
reason, per profile (``simulate.group_by_profile``). ``report.report_html`` draws it all as one page.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from typing import Any

from scheduler.app.simulate import SimulationReport, run_simulation
from scheduler.profiles.crd import KIND
from scheduler.quantity import resource_value

__all__ = ["RESOURCES", "ZONE_LABEL", "run_compare", "summarize", "zones_of"]

Obj = dict[str, Any]
RESOURCES = ("cpu", "memory")
ZONE_LABEL = "topology.kubernetes.io/zone"


def _usage(report: SimulationReport) -> list[tuple[str, int, dict[str, float]]]:
    """Per node: (name, pods, resource -> requested / allocatable)."""
    out = []
    for n in report.nodes:
        ratios = {}
        for r in RESOURCES:
            alloc = resource_value(r, str(n["allocatable"].get(r, "0")))
            req = resource_value(r, str(n["requested"].get(r, "0")))
            ratios[r] = req / alloc if alloc > 0 else 0.0
        out.append((n["name"], int(n["pods"]), ratios))
    return out


def zones_of(objects: list[Obj]) -> dict[str, str]:
    """Node name to its ``topology.kubernetes.io/zone`` label ("" without one), from the input."""
    return {str(o["metadata"]["name"]): str(((o.get("metadata") or {}).get("labels") or {}).get(ZONE_LABEL, ""))
            for o in objects if o.get("kind") == "Node" and (o.get("metadata") or {}).get("name")}


def summarize(report: SimulationReport, zones: dict[str, str]) -> Obj:
    pods = [p for p in report.pods if not p["deleted"]]
    scheduled = [p for p in pods if p["node"]]
    usage = _usage(report)
    utilisation, fragmentation = {}, {}
    for r in RESOURCES:
        ratios = [u[2][r] for u in usage]
        utilisation[r] = {"mean": round(statistics.fmean(ratios), 4) if ratios else 0.0,
                          "stdev": round(statistics.pstdev(ratios), 4) if ratios else 0.0}
        total = stranded = 0
        for n in report.nodes:
            alloc = resource_value(r, str(n["allocatable"].get(r, "0")))
            req = resource_value(r, str(n["requested"].get(r, "0")))
            total += alloc
            if 0 < req < alloc:
                stranded += alloc - req
        fragmentation[r] = round(stranded / total, 4) if total else 0.0
    per_zone: dict[str, int] = {}
    for p in scheduled:
        zone = zones.get(str(p["node"]))
        if zone:
            per_zone[zone] = per_zone.get(zone, 0) + 1
    return {"pods": len(pods), "scheduled": len(scheduled), "pending": len(pods) - len(scheduled),
            "nodesUsed": sum(1 for u in usage if u[1] > 0), "utilisation": utilisation,
            "fragmentation": fragmentation, "zones": dict(sorted(per_zone.items()))}


async def run_compare(objects: list[Obj], compare: list[tuple[str, list[Obj]]], *, timeout: float = 120.0,
                      seed: int = 0, progress: Callable[[str], None] | None = None, gpus_per_node: int = 0,
                      gpu_attributes: Obj | None = None, feature_gates: Mapping[str, bool] | None = None
                      ) -> tuple[Obj, list[SimulationReport]]:
    """The JSON of ``--output json`` and each run's full report (for the HTML page). Every run gets
    the same cluster options (the simulated DRA driver's GPUs included) and the same feature gates."""
    base = [o for o in objects if o.get("kind") != KIND]
    zones = zones_of(base)
    runs, reports, placements = [], [], []
    for name, profiles in compare:
        report = await run_simulation([*profiles, *base], timeout=timeout, seed=seed, progress=progress,
                                      gpus_per_node=gpus_per_node, gpu_attributes=gpu_attributes,
                                      feature_gates=feature_gates)
        reports.append(report)
        runs.append({"profiles": [name], "summary": summarize(report, zones),
                     "pendingByProfile": report.pending_by_profile})
        placements.append({f"{p['namespace']}/{p['name']}": p["node"] for p in report.pods if not p["deleted"]})
    keys = sorted(set().union(*placements)) if placements else []
    differences = [{"pod": k, "nodes": [pl.get(k) for pl in placements]} for k in keys
                   if len({pl.get(k) for pl in placements}) > 1]
    return {"runs": runs, "differences": differences}, reports
