"""The ``kopf-scheduler`` command line (an edge: it depends on the core, never the reverse).

This release ships ``crd`` (print the SchedulingProfile CRD). ``run``, ``cluster``, ``simulate``
and ``bench`` arrive with the operator, simulated-cluster and benchmark work.
"""

from __future__ import annotations

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
