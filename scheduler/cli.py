"""The ``kopf-scheduler`` command line (an edge: it depends on the core, never the reverse).

Commands: ``crd`` (print the SchedulingProfile CRD) and ``cluster`` (serve the simulated cluster).
``run`` and ``simulate`` come with the operator, ``bench`` with the benchmarks.
"""

from __future__ import annotations

import asyncio
import signal
import sys

import click

from scheduler.profiles.crd import crd_yaml

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kopf-scheduler")
def main() -> None:
    """kopf-scheduler: a kube-scheduler-compatible pod scheduler with live SchedulingProfiles."""


@main.command()
def crd() -> None:
    """Print the SchedulingProfile CustomResourceDefinition as YAML."""
    click.echo(crd_yaml(), nl=False)


@main.command()
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to serve on (loopback only).")
@click.option("--port", default=0, show_default=True, type=click.IntRange(0, 65535), help="0 picks a free port.")
@click.option("--kubeconfig", type=click.Path(dir_okay=False, writable=True), default=None,
              help="Where to write the kubeconfig (default: a temporary file).")
@click.option("--load", "load", multiple=True, type=click.Path(exists=True, dir_okay=False),
              help="YAML/JSON objects to create at start (repeatable; Lists are flattened).")
@click.option("--fault", "faults", multiple=True, metavar="RULE",
              help="Fault rule: latency=20ms, error:VERB:RESOURCE=RATE[/CODE], drop-watch=RATE, gone=RATE.")
@click.option("--seed", default=0, show_default=True, help="Seed for generated names and faults.")
@click.option("--pod-running-after", type=float, default=None,
              help="Seconds after binding when a pod becomes Running/Ready (default: stays Pending).")
@click.option("--pod-termination-seconds", type=float, default=0.0, show_default=True,
              help="How long a deleted bound pod stays Terminating (capped by its grace period).")
def cluster(host: str, port: int, kubeconfig: str | None, load: tuple[str, ...], faults: tuple[str, ...],
            seed: int, pod_running_after: float | None, pod_termination_seconds: float) -> None:
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

    async def serve() -> None:
        c = SimulatedCluster(host=host, port=port, kubeconfig=kubeconfig, load=load, faults=f, seed=seed,
                             pod_running_after=pod_running_after, pod_termination_seconds=pod_termination_seconds,
                             threaded=False)
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

    from scheduler.simulator.cluster import new_event_loop
    with asyncio.Runner(loop_factory=new_event_loop) as runner:
        runner.run(serve())


@main.command("cluster-bench")
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

    from scheduler.simulator.bench import format_table, run_bench

    report = run_bench(pods=pods, watchers=watchers, concurrency=concurrency, repeat=repeat, time_limit=time_limit)
    click.echo(json.dumps(report, indent=2) if output == "json" else format_table(report))


if __name__ == "__main__":
    main()
