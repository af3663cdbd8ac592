"""The benchmark: upstream's SchedulingThroughput arithmetic, every workload at upstream's smallest
(integration-test) size, the JSON contract, and placement equal to percentageOfNodesToScore 100.
Results only: timing thresholds live in the benchmark, never here."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.benchmark.core import run_core
from scheduler.benchmark.report import format_table, median_result
from scheduler.benchmark.sizes import Size
from scheduler.benchmark.throughput import histogram_quantile, samples, summary
from scheduler.benchmark.workloads import WORKLOADS


@pytest.mark.parametrize(("binds", "end", "want"), [
    pytest.param([0.5, 1.5, 2.5, 3.5], None, [1.0, 1.0], id="first sample skipped"),
    pytest.param([0.5, 1.5, 3.5, 3.6, 3.7], 4.0, [1.0, 1.5, 1.5], id="an empty second merges into the next"),
    pytest.param([2.5, 2.6, 3.5], 4.0, [1.0], id="ticks before the first bind record nothing"),
    pytest.param([0.2, 0.4, 0.9], None, [], id="shorter than a second: no sample"),
    pytest.param([], None, [], id="nothing bound"),
])
def test_throughput_samples(binds: list[float], end: float | None, want: list[float]) -> None:
    assert samples(0.0, binds, end) == pytest.approx(want)


def test_summary_percentiles_as_upstream() -> None:
    s = summary([float(v) for v in range(10, 0, -1)])
    assert s == {"average": 5.5, "p50": 5.0, "p90": 9.0, "p95": 10.0, "p99": 10.0}
    assert summary([]) == {"average": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0}


def test_histogram_quantile_interpolates_in_the_bucket() -> None:
    bounds, counts = [0.1, 0.2, float("inf")], [10.0, 20.0, 20.0]
    assert histogram_quantile(0.5, bounds, counts) == pytest.approx(0.1)
    assert histogram_quantile(0.75, bounds, counts) == pytest.approx(0.15)
    assert histogram_quantile(0.99, [0.1, float("inf")], [0.0, 5.0]) == 0.1
    assert histogram_quantile(0.5, bounds, [0.0, 0.0, 0.0]) == 0.0


# upstream's integration-test sizes (the "5Nodes" workloads of scheduler_perf)
SMOKE = {
    "SchedulingBasic": Size(5, 5, 10), "SchedulingNodeAffinity": Size(5, 5, 10),
    "TopologySpreading": Size(5, 10, 10), "PreferredTopologySpreading": Size(5, 10, 10),
    "SchedulingPodAntiAffinity": Size(5, 1, 4), "SchedulingPodAffinity": Size(5, 5, 10),
    "SchedulingPreferredPodAffinity": Size(5, 5, 10), "SchedulingPreferredPodAntiAffinity": Size(5, 5, 10),
    "Unschedulable": Size(5, 1, 10), "SchedulingWithMixedChurn": Size(10, 0, 100),
    "PreemptionBasic": Size(5, 20, 5), "PreemptionAsync": Size(5, 20, 5),
    "DefaultTopologySpreading": Size(5, 10, 10),
    "SchedulingInTreePVs": Size(5, 5, 10), "SchedulingMigratedInTreePVs": Size(5, 5, 10),
    "SchedulingCSIPVs": Size(5, 5, 10), "PreemptionPVs": Size(5, 20, 5),
}


def test_every_workload_has_a_smoke_size() -> None:
    from tests.benchmark.test_batching_workloads import SMOKE as BATCHING_SMOKE  # and #38's batching
    from tests.benchmark.test_declaredfeatures_workloads import SMOKE as NDF_SMOKE  # and NodeDeclaredFeatures
    from tests.benchmark.test_dra_feature_workloads import FEATURE_WORKLOADS  # and issue #35's
    from tests.benchmark.test_dra_workloads import SMOKE as DRA_SMOKE  # the DRA workloads run there
    from tests.benchmark.test_newer_workloads import SMOKE as NEWER_SMOKE  # and issue #21's
    from tests.benchmark.test_podgroup_workloads import SMOKE as GROUP_SMOKE  # and issue #36's
    assert set(SMOKE) | set(DRA_SMOKE) | set(NEWER_SMOKE) | FEATURE_WORKLOADS | set(GROUP_SMOKE) \
        | set(BATCHING_SMOKE) | set(NDF_SMOKE) == set(WORKLOADS)


@pytest.mark.parametrize("name", sorted(SMOKE))
def test_workload_schedules_every_measured_pod(name: str) -> None:
    r = run_core(name, SMOKE[name], time_limit=60)
    assert r.complete and r.bound == SMOKE[name].pods
    assert len(r.placements) == SMOKE[name].pods
    doc = r.as_json()
    assert (doc["workload"], doc["mode"], doc["nodes"], doc["initPods"], doc["pods"]) == (
        name, "core", SMOKE[name].nodes, SMOKE[name].init_pods, SMOKE[name].pods)
    if name == "SchedulingPodAntiAffinity":
        # 1 init + 4 measured pods that repel each other by hostname: 5 pods on 5 different nodes.
        assert len(set(r.placements.values())) == 4


def test_default_topology_spreading_spreads_by_the_services_selector(monkeypatch: pytest.MonkeyPatch) -> None:
    """The Service the workload creates gives its pods the System default constraints: under
    MostAllocated they spread over the nodes; without the Service, nothing selects them and they pack."""
    from dataclasses import replace

    from scheduler.benchmark import workloads
    most = {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}
    with_service = run_core("DefaultTopologySpreading", Size(6, 0, 12), profile=most, time_limit=60)
    monkeypatch.setitem(workloads.WORKLOADS, "DefaultTopologySpreading",
                        replace(WORKLOADS["DefaultTopologySpreading"], services=()))
    without = run_core("DefaultTopologySpreading", Size(6, 0, 12), profile=most, time_limit=60)
    assert len(set(with_service.placements.values())) == 6
    assert len(set(without.placements.values())) == 1


def test_preemption_basic_preempts_three_low_pods_per_high_pod() -> None:
    from scheduler.benchmark import sink
    seen: list[int] = []
    real = sink.SinkClient.preempt

    async def count(self: sink.SinkClient, victim, preemptor, node) -> None:  # type: ignore[no-untyped-def]
        await real(self, victim, preemptor, node)
        seen.append(1)

    sink.SinkClient.preempt = count  # type: ignore[method-assign]
    try:
        r = run_core("PreemptionBasic", Size(5, 20, 5), time_limit=60)
    finally:
        sink.SinkClient.preempt = real  # type: ignore[method-assign]
    assert r.complete and len(set(r.placements.values())) == 5
    assert len(seen) == 15           # 4 × 900m leave 400m; 3 CPUs need 3 of them gone, and only 3


@pytest.mark.parametrize("name", ["SchedulingBasic", "TopologySpreading", "SchedulingPodAntiAffinity",
                                  "SchedulingPreferredPodAffinity", "SchedulingNodeAffinity"])
def test_placement_equals_percentage_of_nodes_to_score_100(name: str) -> None:
    size = Size(60, 10, 40)  # fewer pods than nodes, so the anti-affinity pods all fit
    default = run_core(name, size, seed=7, time_limit=60)
    full = run_core(name, size, seed=7, time_limit=60, profile={"percentageOfNodesToScore": 100})
    assert default.complete and full.complete
    assert default.placements == full.placements


def test_bench_command_json_contract() -> None:
    out = CliRunner().invoke(main, ["bench", "--workload", "SchedulingBasic", "--nodes", "5", "--init-pods", "5",
                                    "--pods", "10", "--output", "json"])
    assert out.exit_code == 0, out.output
    doc = json.loads(out.stdout)
    (r,) = doc["results"]
    assert set(doc) == {"environment", "results"}
    assert set(r) == {"workload", "mode", "nodes", "initPods", "pods", "throughput", "attemptLatencySeconds",
                      "peakRssBytes", "seconds", "cpuSeconds", "recordingShare", "batchedPods",  # these 3: core only
                      "unmeasured"}
    assert r["unmeasured"] is True      # 10 pods bind in far less than the two seconds a sample needs
    assert set(r["throughput"]) == {"average", "p50", "p90", "p95", "p99"}
    assert set(r["attemptLatencySeconds"]) == {"p50", "p99"}
    assert r["peakRssBytes"] > 0 and (r["nodes"], r["initPods"], r["pods"]) == (5, 5, 10)


def test_bench_rejects_an_unknown_workload() -> None:
    out = CliRunner().invoke(main, ["bench", "--workload", "Nope"])
    assert out.exit_code == 2 and "unknown workload 'Nope'" in out.output


def test_e2e_mode_runs_the_operator_against_the_cluster() -> None:
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e("SchedulingBasic", Size(5, 5, 20), time_limit=120)
    assert r.complete and r.bound == 20 and r.mode == "e2e"
    assert r.peak_rss > 0
    # All three processes' peaks: each is a Python interpreter with the package loaded, so over 10 MiB
    # (the cluster's alone imports aiohttp, orjson and the registries), and under 2 GiB at this size.
    assert r.cluster_peak_rss is not None and r.driver_peak_rss is not None
    assert 10 * 2**20 < r.cluster_peak_rss < 2 * 2**30, r.cluster_peak_rss
    assert 10 * 2**20 < r.driver_peak_rss < 2 * 2**30, r.driver_peak_rss
    doc = median_result([r, r])
    assert doc["peakRssBytes"] == r.peak_rss                        # still the operator's
    assert (doc["clusterPeakRssBytes"], doc["driverPeakRssBytes"]) == (r.cluster_peak_rss, r.driver_peak_rss)
    assert f"peak RSS of the simulated cluster {r.cluster_peak_rss / 2**20:.0f}MiB" in format_table([doc])
    # Each process's CPU over the measured phase: the cluster served 20 creates, bindings and events,
    # the driver created the pods; each is some CPU, none more than the phase's seconds on two cores.
    for cpu in (r.operator_cpu_seconds, r.cluster_cpu_seconds, r.driver_cpu_seconds):
        assert cpu is not None and 0 < cpu <= 2 * r.seconds + 1, (cpu, r.seconds)
    assert (doc["operatorCpuSeconds"], doc["clusterCpuSeconds"]) == (round(r.operator_cpu_seconds or 0, 2),
                                                                     round(r.cluster_cpu_seconds or 0, 2))
    assert "CPU over the measured phase, operator " in format_table([doc])
    other = run_e2e("SchedulingBasic", Size(5, 5, 20), time_limit=120)
    three = median_result([other, r, r])           # the median of each process's CPU, not the first run's
    assert three["clusterCpuSeconds"] == round(r.cluster_cpu_seconds or 0, 2)


def test_e2e_mode_with_a_stream_of_explanations_has_them_answered() -> None:
    from scheduler.benchmark.e2e import run_e2e
    r = run_e2e("SchedulingBasic", Size(5, 5, 100), time_limit=120, explanations=3)   # below the 5/s bound
    assert r.complete and r.bound == 100
    assert r.explanations is not None and r.explanations["created"] >= 1, r.explanations
    assert r.explanations["unanswered"] == 0, r.explanations         # the leader answered every one
    assert r.operator_cpu_seconds is not None and r.operator_cpu_seconds > 0
    out = CliRunner().invoke(main, ["bench", "--explanations", "5"])
    assert out.exit_code == 2 and "use --mode e2e" in out.output


def test_thresholds_apply_at_the_thresholded_size_only() -> None:
    basic = WORKLOADS["SchedulingBasic"]
    assert basic.threshold_for("core", Size(5000, 1000, 10000)) == 680
    assert basic.threshold_for("e2e", Size(5000, 1000, 10000)) == 680      # upstream's, end to end too
    assert basic.threshold_for("core", Size(5, 5, 10)) is None
    assert WORKLOADS["PreemptionBasic"].threshold_for("core", WORKLOADS["PreemptionBasic"].default) is None


def test_a_median_below_the_bar_fails_with_upstreams_text(monkeypatch: pytest.MonkeyPatch) -> None:
    from scheduler.benchmark import report
    from scheduler.benchmark.core import RunResult

    def fake(workload: str, size: Size, seed: int, decision_records: int, shadow: object = None) -> RunResult:
        assert decision_records == 10000    # the default store is on in every bench run
        assert shadow is None
        avg = 600.0 + seed           # seeds 0, 1, 2: median 601
        return RunResult(workload, "core", size, summary([avg, avg]), 0.001, 0.002, 1, 10.0, size.pods, True)

    monkeypatch.setattr(report, "_core", fake)
    results, problems = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False)
    assert results[0]["throughput"]["average"] == 601.0
    assert problems == ["SchedulingBasic: expected SchedulingThroughput Average to be higher: got 601.00, want 680"]
    assert "0.88" in report.format_table(results)


def test_baseline_pairs_each_run_and_reports_the_median_ratio(monkeypatch: pytest.MonkeyPatch) -> None:
    """--baseline: next to each configured run, the baseline (no shadow, recording off) with the same
    seed, before it in even repeats and after it in odd ones (a drifting machine favours neither);
    the configured result carries the median of the per-pair ratios."""
    from scheduler.benchmark import report
    from scheduler.benchmark.core import RunResult
    calls: list[tuple[int, int, object]] = []

    def fake(workload: str, size: Size, seed: int, decision_records: int, shadow: object = None) -> RunResult:
        calls.append((seed, decision_records, shadow))
        avg = 1000.0 if shadow is None else (900.0, 950.0, 800.0)[seed]       # ratios .9 .95 .8: median .9
        r = RunResult(workload, "core", size, summary([avg, avg]), 0.001, 0.002, 1, 10.0, size.pods, True)
        r.shadow = None if shadow is None else {"agreed": 1, "differed": 2, "wouldBePending": 0}
        return r

    monkeypatch.setattr(report, "_core", fake)
    spec = {"pluginConfig": []}
    results, _ = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False, decision_records=0, shadow=spec,
                                  baseline=True)
    assert calls == [(0, 0, None), (0, 0, spec), (1, 0, spec), (1, 0, None), (2, 0, None), (2, 0, spec)]
    base, configured = results
    assert base["variant"] == "baseline" and "shadow" not in base and "baselineRatio" not in base
    assert configured["variant"] == "configured" and configured["baselineRatio"] == pytest.approx(0.9)
    assert configured["shadow"] == {"agreed": 3, "differed": 6, "wouldBePending": 0}
    table = report.format_table(results)
    assert "SchedulingBasic (configured) +shadow" in table and "cost 10.0 %" in table


def test_feature_gate_variants_run_side_by_side(monkeypatch: pytest.MonkeyPatch) -> None:
    """--feature-gates given twice: each set is a variant, in alternating order per repeat, and the
    second carries the median of its per-repeat throughput ratios over the first."""
    from scheduler.benchmark import report
    from scheduler.benchmark.core import RunResult
    calls: list[tuple[int, str]] = []

    def fake(workload: str, size: Size, seed: int, decision_records: int, shadow: object = None,
             gates: str = "") -> RunResult:
        calls.append((seed, gates))
        avg = 1000.0 if gates.endswith("true") else (900.0, 950.0, 800.0)[seed]
        r = RunResult(workload, "core", size, summary([avg, avg]), 0.001, 0.002, 1, 10.0, size.pods, True)
        r.batched_pods = 7 if gates.endswith("true") else 0
        return r

    monkeypatch.setattr(report, "_core", fake)
    on, off = "OpportunisticBatching=true", "OpportunisticBatching=false"
    results, _ = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False, feature_gates=[on, off])
    assert calls == [(0, on), (0, off), (1, off), (1, on), (2, on), (2, off)]
    first, second = results
    assert (first["variant"], second["variant"]) == (on, off)
    assert "gatesRatio" not in first and second["gatesRatio"] == pytest.approx(0.9)
    assert (first["batchedPods"], second["batchedPods"]) == (7, 0)
    table = report.format_table(results)
    assert f"SchedulingBasic: {off} / {on} average = 0.900" in table
    assert f"SchedulingBasic ({on}): 7 pods placed by opportunistic batching" in table


def test_bench_refuses_an_unknown_feature_gate() -> None:
    out = CliRunner().invoke(main, ["bench", "--workload", "SchedulingBasic", "--feature-gates", "Nope=true"])
    assert out.exit_code == 2 and "unrecognized feature gate: Nope" in out.output


def test_a_core_run_reports_its_measured_phase_cpu_time_and_recording_share() -> None:
    from scheduler.benchmark.core import run_core
    r = run_core("SchedulingBasic", Size(20, 10, 50))
    assert r.complete and r.cpu_seconds is not None and 0 < r.cpu_seconds <= r.seconds + 1.0
    assert r.recording_seconds is not None and 0 < r.recording_seconds < r.seconds
    doc = r.as_json()
    assert doc["cpuSeconds"] == r.cpu_seconds and doc["recordingShare"] == r.recording_seconds / r.seconds
    off = run_core("SchedulingBasic", Size(20, 10, 50), decision_records=0)
    assert off.recording_seconds is None and "recordingShare" not in off.as_json()


def test_a_shadow_runs_beside_the_workload_and_changes_no_placement() -> None:
    """--shadow in core mode: the shadow decides every pod the workload's profile does, and the live
    placements are exactly those of the run without it."""
    spec = {"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "MostAllocated"}}}]}
    plain = run_core("SchedulingBasic", Size(20, 10, 40), seed=3, time_limit=60)
    shadowed = run_core("SchedulingBasic", Size(20, 10, 40), seed=3, time_limit=60, shadow=spec)
    assert plain.shadow is None and shadowed.shadow is not None
    assert sum(shadowed.shadow.values()) == 50 and shadowed.shadow["differed"] > 0
    assert shadowed.placements == plain.placements


def test_a_run_without_a_throughput_sample_is_not_compared_with_the_bar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Upstream's collector reports no SchedulingThroughput for a measured phase too short for one
    sample (``Failed to measure SchedulingThroughput for ...``), and its threshold check finds no
    metric to compare: such a run is left out of the medians, and a workload none of whose runs was
    measured is flagged ``unmeasured``, warned about, and not failed."""
    from scheduler.benchmark import report
    from scheduler.benchmark.core import RunResult
    from scheduler.benchmark.throughput import samples

    averages: dict[int, list[float]] = {}

    def fake(workload: str, size: Size, seed: int, decision_records: int, shadow: object = None) -> RunResult:
        rates = averages[seed]
        return RunResult(workload, "core", size, summary(rates), 0.001, 0.002, 1, 1.7, size.pods, True,
                         samples=len(rates))

    monkeypatch.setattr(report, "_core", fake)
    assert samples(0.0, [0.1 * i for i in range(1, 18)]) == []     # 1.7 s of binds: no sample
    averages.update({0: [], 1: [700.0, 700.0], 2: [900.0, 900.0]})
    results, problems = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False)
    assert results[0]["throughput"]["average"] == 800.0          # the median of the two measured runs
    assert "unmeasured" not in results[0] and problems == []
    averages.update({1: [600.0], 2: [600.0, 650.0]})
    _, problems = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False)
    assert problems == ["SchedulingBasic: expected SchedulingThroughput Average to be higher: got 612.50, want 680"]
    averages.update({1: [], 2: []})
    said: list[str] = []
    results, problems = report.run_bench(["SchedulingBasic"], repeat=3, isolate=False, progress=said.append)
    assert results[0]["unmeasured"] is True and results[0]["throughput"]["average"] == 0.0
    assert problems == []
    assert said[-1] == ("warning: Failed to measure SchedulingThroughput for SchedulingBasic. "
                        "Increase pods and/or nodes to make scheduling take longer")
    assert all("too short for a throughput sample" in line for line in said[:-1])
    row = next(line for line in report.format_table(results).splitlines() if line.startswith("SchedulingBasic"))
    assert row.split()[7:9] == ["680", "-"]                       # the bar, and no ratio
