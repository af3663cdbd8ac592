"""The commands of the simulated cluster (``cli.py`` is the overview): ``cluster`` (serve the
simulated Kubernetes API server: ``scheduler.simulator``) and ``simulate`` (the real operator
against it, with ``--compare`` of several profiles: ``simulate``, ``compare``). ``EXIT_REJECTED`` is
``simulate``'s exit code when the API refused input objects.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from pathlib import Path
from typing import Any

import click

from scheduler.app.cli_options import _feature_gates, _gpu_description, _gpu_options, _setup_logging
from scheduler.profiles.crd import crd as profiles_crd
from scheduler.profiles.explanation_crd import crd as explanation_crd

__all__ = ["EXIT_REJECTED", "cluster", "format_comparison", "simulate"]


EXIT_REJECTED = 3      # simulate: the API refused input objects (without --allow-rejected)


@click.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on (loopback only).")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Where to write the kubeconfig (default: a temporary file).")
@click.option("--load", "load", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="YAML/JSON objects to create at start (repeatable; Lists are flattened), as simulate -f "
                   "loads them: kinds in dependency order, a dump's uids kept.")
@click.option("--fault", "faults", multiple=True, metavar="RULE",
              help="Fault rule: latency=20ms, error:VERB:RESOURCE=RATE[/CODE], drop-watch=RATE, gone=RATE.")
@click.option("--seed", default=0, show_default=True, help="Seed for generated names and faults.")
@click.option("--pod-running-after", type=float, default=1.0, show_default=True,
              help="Seconds after binding when the kubelet makes a pod Running/Ready; negative: pods stay Pending.")
@click.option("--pod-completion-seconds", type=click.FloatRange(min=0), default=2.0, show_default=True,
              help="How long a Job's pod runs before it Succeeds.")
@click.option("--pod-termination-seconds", type=float, default=1.0, show_default=True,
              help="How long a deleted bound pod stays Terminating (capped by its grace period); 0: gone at once.")
@click.option("--provision-seconds", type=float, default=0.2, show_default=True,
              help="How long the simulated external provisioner takes to create a claim's volume; negative: "
                   "never.")
@click.option("--feature-gates", default="", callback=_feature_gates, metavar="Name=bool[,Name=bool]",
              help="kube-apiserver's gates: GenericWorkload=true serves Workloads and PodGroups "
                   "(scheduling.k8s.io/v1beta1).")
@_gpu_options
def cluster(host: str, port: int, kubeconfig: str | None, load: tuple[str, ...], faults: tuple[str, ...],
            seed: int, pod_running_after: float, pod_completion_seconds: float,
            pod_termination_seconds: float, provision_seconds: float, feature_gates: dict[str, bool],
            gpus_per_node: int, gpu_attributes: str | None) -> None:
    """Serve the simulated Kubernetes API server until stopped (Ctrl-C)."""
    from scheduler.simulator import Faults, SimulatedCluster, parse_fault
    from scheduler.simulator.cluster import LoadError
    from scheduler.simulator.faults import FaultError

    if host not in ("127.0.0.1", "localhost", "::1"):
        raise click.BadParameter("the simulated cluster serves on loopback only", param_hint="--host")
    f = Faults(seed=seed)
    for rule in faults:
        try:
            parse_fault(f, rule)
        except FaultError as e:
            raise click.BadParameter(str(e), param_hint="--fault") from None
    gpus = _gpu_description(gpus_per_node, gpu_attributes)

    async def serve() -> None:
        # loaded as ``simulate -f`` loads (scheduler.simulator.loader); the profiles' CRD when a dump has profiles
        c = SimulatedCluster(host=host, port=port, kubeconfig=kubeconfig, load=load,
                             crds=[profiles_crd(), explanation_crd()], faults=f, seed=seed,
                             pod_running_after=pod_running_after if pod_running_after >= 0 else None,
                             pod_completion_seconds=pod_completion_seconds,
                             pod_termination_seconds=pod_termination_seconds,
                             provision_seconds=provision_seconds, gpus_per_node=gpus_per_node,
                             gpu_attributes=gpus, feature_gates=feature_gates, threaded=False)
        try:
            await c.__aenter__()
        except (LoadError, OSError) as e:
            raise click.ClickException(str(e)) from None
        for doc, err in c.rejected:
            meta = doc.get("metadata") or {}
            click.echo(f"rejected {doc.get('kind')} {meta.get('name')}: {err.code} {err.message}", err=True)
        click.echo(f"url: {c.url}")
        click.echo(f"kubeconfig: {c.kubeconfig}")
        click.echo(f"loaded: {len(c.loaded)} objects, rejected: {len(c.rejected)}")
        sys.stdout.flush()
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await c.__aexit__(None, None, None)

    from scheduler.kubeapi import new_event_loop
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        runner.run(serve())


@click.command()
@click.option("-f", "--filename", "files", multiple=True, type=click.Path(exists=True, allow_dash=True),
              help="Objects to load, in order (YAML/JSON, Lists flattened; a dump or a KWOK snapshot): a file, "
                   "'-' for stdin, or a directory (its .yaml/.yml/.json files, sorted); repeatable.")
@click.option("--nodes", default=10, show_default=True, type=click.IntRange(0, 100_000),
              help="Demo cluster size when no -f is given (0: no node; the run settles at once).")
@click.option("--pods", default=50, show_default=True, type=click.IntRange(0, 1_000_000),
              help="Demo pods when no -f is given.")
@click.option("--seed", default=0, show_default=True)
@click.option("--timeout", default=120.0, show_default=True, type=click.FloatRange(1, 86_400),
              help="Seconds before an unsettled run is ended (exit code 1).")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--explain", is_flag=True, help="Add each pod's decision record to --output json as \"decision\".")
@click.option("--compare", "compare", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="SchedulingProfiles to replay the input with, in place of its own (repeatable: one run each).")
@click.option("--report", "report_file", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Write a self-contained HTML page: utilisation heatmaps per run, and the pods placed differently.")
@click.option("--allow-rejected", is_flag=True,
              help=f"Exit 0 even when the API refused input objects (else exit code {EXIT_REJECTED}).")
@click.option("--show-pods", is_flag=True, help="List every pod in the table output (--output json always does).")
@click.option("--feature-gates", default="", callback=_feature_gates,
              metavar="Name=bool[,Name=bool]", help="As run --feature-gates: the simulated scheduler's gates.")
@_gpu_options
def simulate(files: tuple[str, ...], nodes: int, pods: int, seed: int, timeout: float, output: str,
             explain: bool, compare: tuple[str, ...], report_file: str | None, allow_rejected: bool,
             show_pods: bool, feature_gates: dict[str, bool], gpus_per_node: int, gpu_attributes: str | None) -> None:
    """Run the real operator against the embedded simulated cluster and report the placements.

    Exit codes: 0; 1 when the run did not settle within --timeout; 3 when the API refused input
    objects (they are listed in the report), unless --allow-rejected."""
    from scheduler.app.simulate import demo_objects, load_objects
    from scheduler.simulator.cluster import LoadError

    _setup_logging("text", 0)
    if files.count("-") > 1:
        raise click.BadParameter("stdin ('-') can be read once", param_hint="-f")
    try:
        objects = load_objects(files) if files else demo_objects(nodes, pods, seed)
        profiles = [(f, [o for o in load_objects([f]) if o.get("kind") == "SchedulingProfile"]) for f in compare]
    except (LoadError, OSError) as e:
        raise click.ClickException(str(e)) from None
    for f, found in profiles:
        if not found:
            raise click.BadParameter(f"{f} holds no SchedulingProfile", param_hint="--compare")
    gpus = _gpu_description(gpus_per_node, gpu_attributes)
    if compare:
        if explain:
            raise click.BadParameter("--explain reports one run; use it without --compare", param_hint="--explain")
        _simulate_compare(objects, profiles, timeout=timeout, seed=seed, output=output, report_file=report_file,
                          allow_rejected=allow_rejected, gpus_per_node=gpus_per_node, gpus=gpus,
                          feature_gates=feature_gates)
        return
    _simulate_one(objects, timeout=timeout, seed=seed, explain=explain, output=output, report_file=report_file,
                  allow_rejected=allow_rejected, show_pods=show_pods, gpus_per_node=gpus_per_node, gpus=gpus,
                  feature_gates=feature_gates)


def _simulate_compare(objects: list[dict[str, Any]], profiles: list[tuple[str, list[dict[str, Any]]]], *,
                      timeout: float, seed: int, output: str, report_file: str | None, allow_rejected: bool,
                      gpus_per_node: int, gpus: dict[str, Any] | None,
                      feature_gates: dict[str, bool] | None = None) -> None:
    """``simulate --compare``: one run per profile file, side by side."""
    import json

    from scheduler.app.compare import run_compare, zones_of
    from scheduler.app.report import report_html
    from scheduler.kubeapi import new_event_loop

    with asyncio.Runner(loop_factory=new_event_loop) as r:
        result, reports = r.run(run_compare(objects, profiles, timeout=timeout, seed=seed,
                                            gpus_per_node=gpus_per_node, gpu_attributes=gpus,
                                            feature_gates=feature_gates))
    if report_file:
        Path(report_file).write_text(report_html(result, reports, zones_of(objects)))
    click.echo(json.dumps(result, indent=2) if output == "json" else format_comparison(result))
    if not all(rep.settled for rep in reports):
        raise SystemExit(1)
    if any(rep.rejected for rep in reports) and not allow_rejected:
        click.echo("input objects refused by the API (--allow-rejected to accept)", err=True)
        raise SystemExit(EXIT_REJECTED)


def _simulate_one(objects: list[dict[str, Any]], *, timeout: float, seed: int, explain: bool, output: str,
                  report_file: str | None, allow_rejected: bool, show_pods: bool, gpus_per_node: int,
                  gpus: dict[str, Any] | None, feature_gates: dict[str, bool] | None = None) -> None:
    """``simulate`` without --compare: one run with the input's own profiles."""
    import json

    from scheduler.app.compare import summarize, zones_of
    from scheduler.app.report import report_html
    from scheduler.app.simulate import Progress, format_table, run_simulation
    from scheduler.kubeapi import new_event_loop

    with asyncio.Runner(loop_factory=new_event_loop) as r:
        report = r.run(run_simulation(objects, timeout=timeout, seed=seed, explain=explain, progress=Progress(),
                                      gpus_per_node=gpus_per_node, gpu_attributes=gpus, feature_gates=feature_gates))
    if report_file:
        zones = zones_of(objects)
        one = {"runs": [{"profiles": [p["name"] for p in report.profiles], "summary": summarize(report, zones),
                         "pendingByProfile": report.pending_by_profile}], "differences": []}
        Path(report_file).write_text(report_html(one, [report], zones))
    click.echo(json.dumps(report.as_json(), indent=2) if output == "json" else format_table(report,
                                                                                       show_pods=show_pods))
    if not report.settled:
        raise SystemExit(1)
    if report.rejected and not allow_rejected:
        click.echo(f"{len(report.rejected)} input object(s) refused by the API (--allow-rejected to accept)",
                   err=True)
        raise SystemExit(EXIT_REJECTED)


def format_comparison(result: dict[str, Any]) -> str:
    """The side-by-side summary of ``simulate --compare``."""
    runs = result["runs"]
    names = [", ".join(r["profiles"]) for r in runs]
    width = max(12, *(len(n) for n in names))
    rows = _comparison_rows(runs)
    lines = [f"{'':18} " + " ".join(f"{n:>{width}}" for n in names)]
    lines += [f"{label:18} " + " ".join(f"{v:>{width}}" for v in values) for label, values in rows]
    for name, run in zip(names, runs, strict=True):
        pending = run.get("pendingByProfile") or {}
        if pending:
            lines += ["", f"PENDING BY REASON in {name}"]
            lines += [f"  {profile}: {g['count']:>5}  {g['reason']}" for profile, groups in pending.items()
                      for g in groups]
    diffs = result["differences"]
    lines += ["", f"{len(diffs)} pod(s) placed differently"]
    lines += [f"  {d['pod']:40} " + "  ".join(n or "<pending>" for n in d["nodes"]) for d in diffs[:50]]
    if len(diffs) > 50:
        lines.append(f"  ... and {len(diffs) - 50} more (--output json lists all)")
    return "\n".join(lines)


def _comparison_rows(runs: list[dict[str, Any]]) -> list[tuple[str, list[str]]]:
    """One row per summary figure: its label and its value in each run."""
    rows: list[tuple[str, list[str]]] = [
        ("pods", [str(r["summary"]["pods"]) for r in runs]),
        ("scheduled", [str(r["summary"]["scheduled"]) for r in runs]),
        ("pending", [str(r["summary"]["pending"]) for r in runs]),
        ("nodes used", [str(r["summary"]["nodesUsed"]) for r in runs])]
    for res in ("cpu", "memory"):
        rows.append((f"{res} util mean", [f"{r['summary']['utilisation'][res]['mean']:.0%}" for r in runs]))
        rows.append((f"{res} util stdev", [f"{r['summary']['utilisation'][res]['stdev']:.0%}" for r in runs]))
        rows.append((f"{res} stranded", [f"{r['summary']['fragmentation'][res]:.0%}" for r in runs]))
    zones = sorted({z for r in runs for z in r["summary"]["zones"]})
    rows += [(f"zone {z}", [str(r["summary"]["zones"].get(z, 0)) for r in runs]) for z in zones]
    return rows
