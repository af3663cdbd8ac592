"""The ``kopf-scheduler`` command line: the ``[project.scripts]`` entry point (upstream's ``NewSchedulerCommand``).

Commands: ``run`` (the operator against a cluster: ``runtime``), ``simulate`` (the operator against the
embedded simulated cluster: ``simulate``), ``dump`` (a live cluster as one List for ``simulate -f``:
``dump``), ``crd`` (print the SchedulingProfile CRD), ``config import``
(a KubeSchedulerConfiguration as SchedulingProfiles: ``scheduler.profiles.import_config``), ``cluster``
(serve the simulated cluster: ``scheduler.simulator``), and the measurements of ``scheduler.benchmark``:
``cluster-bench``, ``bench`` (the scheduler_perf workloads) and ``soak``. Each command imports what it
needs when it runs.

This module is the group (``main``), ``crd`` and ``config``; the other commands are plain click
commands in a module an area, added to the group here: ``cli_inspect`` (``explain``, ``capacity``,
``dump``), ``cli_simulate`` (``cluster``, ``simulate``), ``cli_run`` (``run``) and ``cli_bench``
(``cluster-bench``, ``bench``, ``soak``), over ``cli_options`` (the options and set-up they share).
Click lists a group's commands by name, so ``--help`` does not depend on where they are defined.
Next to read: ``runtime``.
"""

from __future__ import annotations

import sys
from typing import TextIO

import click

from scheduler.app.cli_bench import bench, cluster_bench, soak
from scheduler.app.cli_inspect import capacity, dump, explain
from scheduler.app.cli_run import run
from scheduler.app.cli_simulate import cluster, simulate
from scheduler.profiles.crd import crd_yaml
from scheduler.profiles.explanation_crd import crd_yaml as explanation_crd_yaml

__all__ = ["main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="kopf-scheduler")
def main() -> None:
    """kopf-scheduler: a kube-scheduler-compatible pod scheduler with live SchedulingProfiles."""
    from scheduler.app.gcpolicy import apply_gc_policy
    try:
        apply_gc_policy()       # every process: the operator, the cluster, the benchmark's driver
    except ValueError as e:
        raise click.UsageError(str(e)) from None


@main.command()
@click.option("--kind", type=click.Choice(["SchedulingProfile", "SchedulingExplanation"]), default="SchedulingProfile",
              show_default=True)
def crd(kind: str) -> None:
    """Print the SchedulingProfile (or SchedulingExplanation) CustomResourceDefinition as YAML."""
    click.echo(crd_yaml() if kind == "SchedulingProfile" else explanation_crd_yaml(), nl=False)


@main.group()
def config() -> None:
    """Bring a kube-scheduler configuration across."""


@config.command("import")
@click.argument("file", type=click.File("r"))
def config_import(file: TextIO) -> None:
    """Print one SchedulingProfile per profiles[] entry of a KubeSchedulerConfiguration (v1) FILE ('-': stdin).

    The top-level percentageOfNodesToScore, backoff settings and extenders are folded into each profile. Each
    field that does not come across is named on stderr. A file kube-scheduler would refuse (two profiles with one
    schedulerName, a removed plugin, ...) or a profile that would be rejected is an error: exit code 1, nothing
    printed on stdout."""
    import yaml

    from scheduler.errors import ProfileError
    from scheduler.plugins.registry import Registry
    from scheduler.profiles.compile import compile_profile, parse_spec
    from scheduler.profiles.import_config import import_configuration
    try:
        docs = [d for d in yaml.safe_load_all(file) if d is not None]
    except yaml.YAMLError as e:
        raise click.ClickException(f"{file.name}: not YAML: {e}") from None
    if len(docs) != 1:
        raise click.ClickException(f"{file.name}: expected one KubeSchedulerConfiguration document, found {len(docs)}")
    try:
        result = import_configuration(docs[0])
    except ProfileError as e:
        raise click.ClickException(f"{file.name}: {e}") from None
    for line in result.unsupported:
        click.echo(f"warning: {line}", err=True)
    registry = Registry()
    rejected = False
    for i, obj in enumerate(result.profiles):
        try:
            spec = parse_spec(obj["spec"])      # validates spec.extenders; they are called only when it runs
            compile_profile(spec.model_copy(update={"extenders": ()}), registry=registry)
        except ProfileError as e:
            click.echo(f"error: profiles[{i}] ({obj['spec']['schedulerName']}): would be rejected: {e}", err=True)
            rejected = True
    if rejected:
        # kube-scheduler does not start with such a file: nothing to apply.
        sys.exit(1)
    click.echo(yaml.safe_dump_all(result.profiles, sort_keys=False), nl=False)


main.add_command(explain)
main.add_command(capacity)
main.add_command(dump)
main.add_command(cluster)
main.add_command(simulate)
main.add_command(run)
main.add_command(cluster_bench)
main.add_command(bench)
main.add_command(soak)


if __name__ == "__main__":
    main()
