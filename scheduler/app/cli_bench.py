"""The measurements of ``scheduler.benchmark`` (``cli.py`` is the overview): ``cluster-bench``
(the simulated cluster alone), ``bench`` (upstream's scheduler_perf workloads, in core or e2e mode,
optionally against another revision) and ``soak`` (churn, API errors and leader kills).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

__all__ = ["bench", "cluster_bench", "soak"]


@click.command("cluster-bench")
@click.option("--pods", default=5000, show_default=True, type=click.IntRange(1, 100_000))
@click.option("--watchers", default=10, show_default=True, type=click.IntRange(0, 100))
@click.option("--concurrency", default=64, show_default=True, type=click.IntRange(1, 1000),
              help="Requests in flight.")
@click.option("--repeat", default=3, show_default=True, type=click.IntRange(1, 20))
@click.option("--time-limit", default=60.0, show_default=True, type=click.FloatRange(1, 600),
              help="Seconds each run may take at most.")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
def cluster_bench(pods: int, watchers: int, concurrency: int, repeat: int, time_limit: float, output: str) -> None:
    """Measure the simulated cluster: pod creates/s, bindings/s, watch events/s (127.0.0.1 only)."""
    import json

    from scheduler.benchmark.cluster_bench import format_table, run_bench

    report = run_bench(pods=pods, watchers=watchers, concurrency=concurrency, repeat=repeat, time_limit=time_limit)
    click.echo(json.dumps(report, indent=2) if output == "json" else format_table(report))


@click.command()
@click.option("--workload", "workloads", multiple=True, metavar="NAME",
              help="A scheduler_perf workload (repeatable; default: all). See BENCHMARKS.md.")
@click.option("--nodes", type=click.IntRange(1), default=None, help="Override the workload's node count.")
@click.option("--init-pods", type=click.IntRange(0), default=None, help="Override its init (unmeasured) pods.")
@click.option("--pods", type=click.IntRange(1), default=None, help="Override its measured pods.")
@click.option("--mode", type=click.Choice(["core", "e2e"]), default="core", show_default=True,
              help="core: the scheduling core in-process; e2e: the operator against the simulated cluster.")
@click.option("--repeat", type=click.IntRange(1, 50), default=1, show_default=True, help="Runs per workload (medians).")
@click.option("--decision-records", default=10_000, show_default=True, type=click.IntRange(0),
              help="As run --decision-records: 0 measures the scheduler with recording off.")
@click.option("--shadow", "shadow_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A SchedulingProfile (YAML) run as a shadow of the workload's profile (core mode).")
@click.option("--baseline", is_flag=True,
              help="Also run the baseline (no shadow, --decision-records 0) before each run and report the ratio.")
@click.option("--feature-gates", "feature_gates", multiple=True, metavar="Name=bool[,Name=bool]",
              help="As run --feature-gates; repeat it to run each set as a variant, side by side.")
@click.option("--against", "against", default=None, metavar="REV",
              help="Alternated pairs: REV against this checkout's HEAD, each installed fresh into its own "
                   "venv (cached); reports each pair, the medians and the ratio new/old.")
@click.option("--against-cache", type=click.Path(file_okay=False), default=None,
              help="Where --against keeps its installs (default: ~/.cache/kopf-scheduler/against).")
@click.option("--time-limit", type=click.FloatRange(10), default=3600.0, show_default=True,
              help="--against: seconds for all the pairs (installs not counted).")
@click.option("--explanations", type=click.FloatRange(0), default=0.0, show_default=True, metavar="PER_SECOND",
              help="e2e mode: SchedulingExplanations created per second over the measured phase (TTL 0).")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--seed", default=0, show_default=True, help="Seed of the first run (run k uses seed + k).")
def bench(workloads: tuple[str, ...], nodes: int | None, init_pods: int | None, pods: int | None, mode: str,
          repeat: int, decision_records: int, shadow_file: str | None, baseline: bool,
          feature_gates: tuple[str, ...], against: str | None, against_cache: str | None, time_limit: float,
          explanations: float, output: str, seed: int) -> None:
    """Run upstream's scheduler_perf workloads and report SchedulingThroughput as upstream computes it."""
    import json

    import yaml

    from scheduler.benchmark.environment import environment, finish, format_header, load_average
    from scheduler.benchmark.report import format_table, run_bench
    from scheduler.benchmark.workloads import WORKLOADS, Workload
    from scheduler.features import FeatureGateError, parse_feature_gates
    for gates in feature_gates:
        try:
            parse_feature_gates(gates)
        except FeatureGateError as e:
            raise click.BadParameter(str(e), param_hint="--feature-gates") from None
    if baseline and len(feature_gates) > 1:
        raise click.BadParameter("--baseline compares with one set of feature gates", param_hint="--feature-gates")
    unknown = [w for w in workloads if w not in WORKLOADS]
    if unknown:
        raise click.BadParameter(f"unknown workload {unknown[0]!r} (known: {', '.join(WORKLOADS)})",
                                 param_hint="--workload")
    # A workload that needs what is not built (podgroups.refusal), or a locked gate's other value end
    # to end (declaredfeatures.refusal): refused when named, skipped from "all".
    from scheduler.benchmark import declaredfeatures
    from scheduler.benchmark.podgroups import refusal as group_refusal

    def refusal(name: str, w: Workload) -> str | None:
        if (why := group_refusal(name, w.groups)) is not None or mode != "e2e":
            return why
        return next((why for g in feature_gates or ("",) if (why := declaredfeatures.refusal(
            name, w.node_features, {**dict(w.feature_gates), **parse_feature_gates(g)})) is not None), None)
    for name in workloads:
        if (why := refusal(name, WORKLOADS[name])) is not None:
            raise click.ClickException(why)
    shadow: dict[str, Any] | None = None
    if shadow_file is not None:
        if mode != "core":
            raise click.BadParameter("a shadow is measured in core mode", param_hint="--shadow")
        doc = yaml.safe_load(Path(shadow_file).read_text())
        shadow = doc.get("spec", doc) if isinstance(doc, dict) else None
        if not isinstance(shadow, dict):
            raise click.BadParameter(f"{shadow_file}: not a SchedulingProfile or its spec", param_hint="--shadow")
    if explanations and mode != "e2e":
        raise click.BadParameter("explanations are answered by the operator: use --mode e2e",
                                 param_hint="--explanations")
    if against is not None:
        _bench_against(against, list(workloads) or ["SchedulingBasic"], mode=mode, nodes=nodes, init_pods=init_pods,
                       pods=pods, repeat=repeat, seed=seed, time_limit=time_limit, cache=against_cache,
                       output=output, plain=not (shadow or baseline or feature_gates or explanations
                                                 or decision_records != 10_000))
        return
    chosen = list(workloads)
    if not chosen:
        for name, w in WORKLOADS.items():
            if (why := refusal(name, w)) is not None:
                click.echo(f"skipped: {why}", err=True)
            else:
                chosen.append(name)
    env = environment(load_average())        # the commit and packages as the run starts
    results, problems = run_bench(chosen, nodes=nodes, init_pods=init_pods, pods=pods,
                                  mode=mode, repeat=repeat, seed=seed, decision_records=decision_records,
                                  shadow=shadow, baseline=baseline, feature_gates=feature_gates,
                                  explanations=explanations, progress=lambda m: click.echo(m, err=True))
    finish(env)
    click.echo(json.dumps({"environment": env, "results": results}, indent=2) if output == "json"
               else format_header(env) + "\n" + format_table(results))
    for p in problems:
        click.echo(f"error: {p}", err=True)
    if problems:
        sys.exit(1)


def _bench_against(rev: str, workloads: list[str], *, mode: str, nodes: int | None, init_pods: int | None,
                   pods: int | None, repeat: int, seed: int, time_limit: float, cache: str | None, output: str,
                   plain: bool) -> None:
    """``bench --against REV``: scheduler.benchmark.against; exit 1 with its message when it cannot run."""
    import json

    from scheduler.benchmark.against import AgainstError, format_against, run_against
    from scheduler.benchmark.environment import environment, finish, format_header, load_average
    if not plain:
        raise click.BadParameter("--against compares the options every commit's bench has: --workload, --nodes, "
                                 "--init-pods, --pods, --mode, --repeat, --seed", param_hint="--against")
    env = environment(load_average())
    try:
        report = run_against(rev, workloads, mode=mode, nodes=nodes, init_pods=init_pods, pods=pods, repeat=repeat,
                             seed=seed, time_limit=time_limit, cache=Path(cache) if cache else None,
                             progress=lambda m: click.echo(m, err=True))
    except AgainstError as e:
        click.echo(f"error: {e}", err=True)
        sys.exit(1)
    finish(env)
    report = {"environment": env, **report}
    click.echo(json.dumps(report, indent=2) if output == "json"
               else format_header(report["environment"]) + "\n" + format_against(report))


@click.command()
@click.option("--pods", type=click.IntRange(1), default=20_000, show_default=True, help="Pods to create.")
@click.option("--nodes", type=click.IntRange(1), default=300, show_default=True)
@click.option("--rate", type=click.FloatRange(1), default=150.0, show_default=True, help="Pod creations per second.")
@click.option("--delete-share", type=click.FloatRange(0, 1), default=0.5, show_default=True,
              help="Bound pods deleted again, per pod created.")
@click.option("--kill-every", type=click.FloatRange(1), default=30.0, show_default=True,
              help="Seconds between SIGKILLs of the leading replica.")
@click.option("--graceful-every", type=click.FloatRange(1), default=None,
              help="Seconds between SIGTERMs of the leading replica (rolling restarts), instead of SIGKILLs; "
                   "reports hand-over times.")
@click.option("--error-rate", type=click.FloatRange(0, 0.2), default=0.05, show_default=True,
              help="Share of all API requests answered 503 (at most 0.2).")
@click.option("--latency", default="", metavar="DURATION[-DURATION]",
              help="Latency added to every API request, e.g. 20ms or 200ms-500ms (default: none).")
@click.option("--drop-watch", type=click.FloatRange(0, 1), default=0.0, show_default=True,
              help="Probability that each delivered watch event cuts its connection.")
@click.option("--time-limit", type=click.FloatRange(10), default=1800.0, show_default=True)
@click.option("--seed", default=0, show_default=True)
def soak(pods: int, nodes: int, rate: float, delete_share: float, kill_every: float, graceful_every: float | None,
         error_rate: float, latency: str, drop_watch: float, time_limit: float, seed: int) -> None:
    """Churn, API errors and leader kills (or graceful restarts) against two replicas; report lost and
    double-bound pods (JSON)."""
    import json

    from scheduler.benchmark.soak import run_soak
    from scheduler.simulator import Faults, parse_fault
    from scheduler.simulator.faults import FaultError

    if latency:
        try:
            parse_fault(Faults(), f"latency={latency}")
        except FaultError as e:
            raise click.BadParameter(str(e), param_hint="--latency") from None
    report = run_soak(pods=pods, nodes=nodes, rate=rate, delete_share=delete_share, kill_every=kill_every,
                      error_rate=error_rate, seed=seed, time_limit=time_limit, latency=latency,
                      drop_watch=drop_watch, graceful_every=graceful_every)
    click.echo(json.dumps(report, indent=2))
    if report["lost"] or report["doubleBound"]:
        sys.exit(1)
