"""``kopf-scheduler bench``: runs, medians, and the two output formats.

Every run happens in a process of its own (``spawn``), so one run's peak RSS and garbage never
reach the next. With ``--repeat K`` each reported number is the median of that number over the K
runs (computed per field, as upstream's benchstat-style comparisons do).

A run whose measured phase is too short for one throughput sample (under two seconds: the first
sample is skipped) has no SchedulingThroughput, as upstream's collector then reports no metric
(``Failed to measure SchedulingThroughput for ... Increase pods and/or nodes to make scheduling
take longer``) and compares nothing with the threshold. So the throughput medians are over the runs
that were measured; a result none of whose runs was has ``"unmeasured": true``, is not compared
with its bar, and the warning goes to the progress stream.

``--output json`` prints exactly (``environment``: where it was measured, ``environment.py``)::

    {"environment": {...},
     "results": [{"workload", "mode", "nodes", "initPods", "pods",
                  "throughput": {"average", "p50", "p90", "p95", "p99"},
                  "attemptLatencySeconds": {"p50", "p99"}, "peakRssBytes", "seconds"}]}

and, per mode, keys of its own (``docs/benchmarks.md``); end to end, ``peakRssBytes`` is the
operator's, and ``clusterPeakRssBytes`` and ``driverPeakRssBytes`` the simulated cluster's and the
benchmark driver's. The text table gives the operator's; the other two follow it, a line per result,
as does each process's CPU over the measured phase (``operatorCpuSeconds``, ``clusterCpuSeconds``,
``driverCpuSeconds``).
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import statistics
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from scheduler.benchmark.core import RunResult, run_core
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.workloads import WORKLOADS
from scheduler.features import parse_feature_gates
from scheduler.framework.decision import DEFAULT_CAPACITY

__all__ = ["format_table", "median_result", "run_bench"]

Runner = Callable[[str, Size], RunResult]


def _core(workload: str, size: Size, seed: int, decision_records: int = DEFAULT_CAPACITY,
          shadow: dict[str, Any] | None = None, gates: str = "") -> RunResult:
    return run_core(workload, size, seed=seed, decision_records=decision_records, shadow=shadow,
                    feature_gates=parse_feature_gates(gates))


def _in_child(fn: Callable[..., RunResult], *args: Any) -> RunResult:
    ctx = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=ctx, max_tasks_per_child=1) as ex:
        return ex.submit(fn, *args).result()


def median_result(runs: Sequence[RunResult]) -> dict[str, Any]:
    """The JSON result whose every number is the median over ``runs`` (the throughput's over the
    runs that had a throughput sample; ``"unmeasured": true`` when none had)."""
    docs = [r.as_json() for r in runs]
    out = dict(docs[0])
    measured = [d for r, d in zip(runs, docs, strict=True) if r.samples != 0]
    out["throughput"] = {k: statistics.median(d["throughput"][k] for d in measured or docs)
                         for k in docs[0]["throughput"]}
    if not measured:
        out["unmeasured"] = True
    out["attemptLatencySeconds"] = {k: statistics.median(d["attemptLatencySeconds"][k] for d in docs)
                                    for k in ("p50", "p99")}
    out["peakRssBytes"] = int(statistics.median(d["peakRssBytes"] for d in docs))
    out["seconds"] = statistics.median(d["seconds"] for d in docs)
    for key in ("cpuSeconds", "operatorCpuSeconds", "clusterCpuSeconds", "driverCpuSeconds", "recordingShare",
                "batchedPods"):
        if all(key in d for d in docs):
            out[key] = statistics.median(d[key] for d in docs)
    for key in ("clusterPeakRssBytes", "driverPeakRssBytes"):
        if all(key in d for d in docs):
            out[key] = int(statistics.median(d[key] for d in docs))
    if "shadow" in out:                 # the shadow's counts summed over the runs
        out["shadow"] = {k: sum(d["shadow"][k] for d in docs) for k in out["shadow"]}
    return out


def run_bench(workloads: Sequence[str], *, nodes: int | None = None, init_pods: int | None = None,
              pods: int | None = None, mode: str = "core", repeat: int = 1, seed: int = 0, isolate: bool = True,
              progress: Callable[[str], None] | None = None, decision_records: int = DEFAULT_CAPACITY,
              shadow: dict[str, Any] | None = None, baseline: bool = False, feature_gates: Sequence[str] = (),
              explanations: float = 0.0) -> tuple[list[dict[str, Any]], list[str]]:
    """Results (medians) per workload, and the problems seen: runs that did not finish, and medians
    below the workload's threshold at its thresholded size.

    With ``baseline``, each repeat also runs the baseline (no shadow, recording off) next to the
    configured run (before it in even repeats, after it in odd ones), with the same seed: the cost of
    recording or of a shadow is then a ratio measured in one run of the benchmark, pair by pair, not
    across runs on a machine whose speed drifts. The
    baseline's result comes first, with ``"variant": "baseline"``; the configured one carries
    ``"variant": "configured"`` and ``"baselineRatio"``, the median of the per-pair average ratios.

    ``feature_gates``: one ``run --feature-gates`` value for every run; with several, each is a
    variant (``"variant": "OpportunisticBatching=false"``), run in turn within each repeat as the
    baseline pairs are, and every variant after the first carries ``"gatesRatio"``: the median of
    its per-repeat average throughput over the first variant's."""
    results: list[dict[str, Any]] = []
    problems: list[str] = []
    if shadow is not None and mode != "core":
        raise ValueError("--shadow is measured in core mode")
    gates = list(feature_gates) or [""]
    if baseline and len(gates) > 1:
        raise ValueError("--baseline compares with one set of --feature-gates")
    variants = _variants(gates, decision_records, shadow, baseline)
    labelled = baseline or len(gates) > 1
    for name in workloads:
        size = _sized(WORKLOADS[name].default, nodes, init_pods, pods)
        runs: dict[str, list[RunResult]] = {v: [] for v, _, _, _ in variants}
        for k in range(repeat):
            # Pairs alternate their order (baseline first, then configured first), so a machine
            # that speeds up or slows down over the run does not favour one variant.
            for variant in (variants if k % 2 == 0 else variants[::-1]):
                r = _run_once(name, size, mode, seed + k, variant, isolate, explanations)
                if not r.complete:
                    problems.append(f"{name} run {k + 1}: only {r.bound} of {size.pods} measured pods bound")
                if progress is not None:
                    progress(_progress_line(name, mode, variant[0] + " " if labelled else "", k, repeat, r))
                runs[variant[0]].append(r)
        results += _medians(runs, variants, gates, baseline, labelled)
        problems += _threshold_problems(name, mode, size, results[-1], progress)
    return results, problems


# (label, decision records, shadow spec, feature gates) of one variant of a run.
_Variant = tuple[str, int, dict[str, Any] | None, str]


def _variants(gates: list[str], decision_records: int, shadow: dict[str, Any] | None, baseline: bool
              ) -> list[_Variant]:
    """The configured run (one per set of feature gates), after the baseline when asked."""
    variants: list[_Variant] = [
        (g if len(gates) > 1 else "configured", decision_records, shadow, g) for g in gates]
    if baseline:
        variants.insert(0, ("baseline", 0, None, gates[0]))
    return variants


def _sized(size: Size, nodes: int | None, init_pods: int | None, pods: int | None) -> Size:
    """The workload's default size with the given overrides."""
    return replace(size, nodes=nodes if nodes is not None else size.nodes,
                   init_pods=init_pods if init_pods is not None else size.init_pods,
                   pods=pods if pods is not None else size.pods)


def _run_once(name: str, size: Size, mode: str, seed: int, variant: _Variant, isolate: bool,
              explanations: float = 0.0) -> RunResult:
    _, records, shadow_spec, gate = variant
    if mode == "core":
        args = (name, size, seed, records, shadow_spec, *((gate,) if gate else ()))
        return _in_child(_core, *args) if isolate else _core(*args)
    from scheduler.benchmark.e2e import run_e2e  # HTTP, the operator, a cluster process
    return run_e2e(name, size, seed=seed, decision_records=records, feature_gates=gate, explanations=explanations)


def _progress_line(name: str, mode: str, label: str, k: int, repeat: int, r: RunResult) -> str:
    return (f"{name} {mode} {label}run {k + 1}/{repeat}: "
            f"{r.throughput['average']:.0f} pods/s average, {r.seconds:.1f} s"
            + (f", {r.cpu_seconds:.2f} s CPU" if r.cpu_seconds is not None else "")
            + (f", operator {r.operator_cpu_seconds:.2f} s CPU" if r.operator_cpu_seconds is not None else "")
            + (f", cluster {r.cluster_cpu_seconds:.2f} s" if r.cluster_cpu_seconds is not None else "")
            + (f", driver {r.driver_cpu_seconds:.2f} s" if r.driver_cpu_seconds is not None else "")
            + (" (too short for a throughput sample)" if r.samples == 0 else "")
            + (f", shadow {r.shadow}" if r.shadow is not None else ""))


def _medians(runs: dict[str, list[RunResult]], variants: list[_Variant], gates: list[str], baseline: bool,
             labelled: bool) -> list[dict[str, Any]]:
    """One result per variant: the medians of its runs, with its ratio to the first gates variant
    or to the baseline."""
    out_all: list[dict[str, Any]] = []
    for variant, _, _, _ in variants:
        out = median_result(runs[variant])
        if labelled:
            out["variant"] = variant
        if len(gates) > 1 and variant != gates[0]:
            out["gatesRatio"] = statistics.median(
                c.throughput["average"] / b.throughput["average"] if b.throughput["average"] else 0.0
                for b, c in zip(runs[gates[0]], runs[variant], strict=True))
        if baseline and variant == "configured":
            out["baselineRatio"] = statistics.median(
                c.throughput["average"] / b.throughput["average"] if b.throughput["average"] else 0.0
                for b, c in zip(runs["baseline"], runs["configured"], strict=True))
        out_all.append(out)
    return out_all


def _threshold_problems(name: str, mode: str, size: Size, result: dict[str, Any],
                        progress: Callable[[str], None] | None) -> list[str]:
    """Upstream's threshold check of a workload's last result."""
    threshold = WORKLOADS[name].threshold_for(mode, size)
    if result.get("unmeasured"):
        if progress is not None:       # upstream's warning; its threshold check finds no metric
            progress(f"warning: Failed to measure SchedulingThroughput for {name}. "
                     "Increase pods and/or nodes to make scheduling take longer")
    elif threshold is not None and result["throughput"]["average"] < threshold:
        # upstream's failure text, as scheduler_perf prints it
        return [f"{name}: expected SchedulingThroughput Average to be higher: "
                f"got {result['throughput']['average']:.2f}, want {threshold:g}"]
    return []


def format_table(results: Sequence[dict[str, Any]]) -> str:
    head = ("WORKLOAD", "MODE", "NODES/INIT/PODS", "AVERAGE", "P50", "P90", "P99", "THRESHOLD", "RATIO",
            "ATTEMPT P50", "ATTEMPT P99", "PEAK RSS", "SECONDS")
    rows = [head]
    for r in results:
        t = r["throughput"]
        w = WORKLOADS[r["workload"]]
        threshold = w.threshold_for(r["mode"], Size(r["nodes"], r["initPods"], r["pods"]))
        label = r["workload"] + (f" ({r['variant']})" if "variant" in r else "") + (" +shadow" if "shadow" in r else "")
        rows.append((label, r["mode"], f"{r['nodes']}/{r['initPods']}/{r['pods']}",
                     f"{t['average']:.0f}", f"{t['p50']:.0f}", f"{t['p90']:.0f}", f"{t['p99']:.0f}",
                     f"{threshold:.0f}" if threshold else "-",
                     f"{t['average'] / threshold:.2f}" if threshold and not r.get("unmeasured") else "-",
                     f"{r['attemptLatencySeconds']['p50'] * 1000:.1f}ms",
                     f"{r['attemptLatencySeconds']['p99'] * 1000:.1f}ms",
                     f"{r['peakRssBytes'] / 2**20:.0f}MiB", f"{r['seconds']:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    lines = ["  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip() for row in rows]
    for r in results:
        if "baselineRatio" in r:
            lines.append(f"{r['workload']}: configured / baseline average = {r['baselineRatio']:.3f} "
                         f"(median of per-repeat pairs; cost {100 * (1 - r['baselineRatio']):.1f} %)")
        if "gatesRatio" in r:
            lines.append(f"{r['workload']}: {r['variant']} / {results[0]['variant']} average = "
                         f"{r['gatesRatio']:.3f} (median of per-repeat pairs)")
        if "batchedPods" in r:
            lines.append(f"{r['workload']}{' (' + r['variant'] + ')' if 'variant' in r else ''}: "
                         f"{r['batchedPods']} pods placed by opportunistic batching (median over the runs)")
        if "recordingShare" in r:
            lines.append(f"{r['workload']}: decision records took {100 * r['recordingShare']:.1f} % of the measured "
                         f"phase (median over the runs)")
        if "shadow" in r:
            lines.append(f"{r['workload']}: shadow decisions {r['shadow']}")
        if "clusterCpuSeconds" in r and "operatorCpuSeconds" in r and r.get("pods"):
            cpu = {"operator": r["operatorCpuSeconds"], "simulated cluster": r["clusterCpuSeconds"],
                   "driver": r.get("driverCpuSeconds", 0.0)}
            lines.append(f"{r['workload']}{' (' + r['variant'] + ')' if 'variant' in r else ''}: CPU over the measured "
                         "phase, " + ", ".join(f"{k} {v:.2f} s ({1e6 * v / r['pods']:.0f} µs a pod)"
                                               for k, v in cpu.items()))
        if "clusterPeakRssBytes" in r:
            lines.append(f"{r['workload']}{' (' + r['variant'] + ')' if 'variant' in r else ''}: peak RSS of the "
                         f"simulated cluster {r['clusterPeakRssBytes'] / 2**20:.0f}MiB, of the driver "
                         f"{r.get('driverPeakRssBytes', 0) / 2**20:.0f}MiB (PEAK RSS: the operator's)")
    return "\n".join(lines)
