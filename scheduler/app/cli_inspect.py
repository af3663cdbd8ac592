"""The commands that look at one pod against a cluster (``cli.py`` is the overview): ``explain``
(why a pod is or would be placed where it is: the running scheduler's answer, or a local
explanation of a manifest: ``explain``), ``capacity`` (how many more replicas fit: ``capacity``)
and ``dump`` (a live cluster as one List for ``simulate -f``: ``dump``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import click

from scheduler.app.cli_options import _feature_gates

__all__ = ["capacity", "dump", "explain"]


@click.command()
@click.argument("pod", metavar="NAMESPACE/NAME", required=False)
@click.option("-f", "--filename", "manifest", default=None,
              help="Explain this pod instead, which need not exist: a YAML or JSON file, or - for stdin.")
@click.option("--from", "dump", type=click.Path(exists=True), default=None,
              help="With -f: read the cluster from this dump (kopf-scheduler dump), in memory, with no API server.")
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", default=None, help="Kubeconfig context (default: current-context).")
@click.option("--profile", default=None, help="Ask this profile (CR name or schedulerName) instead of the pod's own.")
@click.option("--all-nodes", is_flag=True, help="List every node: its first failing filter, or its scores.")
@click.option("--top-nodes", default=3, show_default=True, type=click.IntRange(1), help="Best nodes in the record.")
@click.option("--scheduler-url", default=None, help="The running scheduler's secure port (https:// only: the "
              "request carries your credentials), for its own record (default: through the API server's service "
              "proxy to kopf-scheduler/kopf-scheduler-metrics).")
@click.option("--scheduler-ca-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="CA bundle that verifies --scheduler-url's certificate (default: the system's CAs).")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--feature-gates", default="", callback=_feature_gates,
              metavar="Name=bool[,Name=bool]", help="As run --feature-gates: the gates the local cycle runs with.")
@click.option("--local", is_flag=True, help="Explain locally (the old route), without asking the running scheduler "
              "through a SchedulingExplanation.")
@click.option("--wait", "wait_seconds", default=30.0, show_default=True, type=click.FloatRange(0),
              help="Seconds to wait for the scheduler's answer to the SchedulingExplanation before explaining locally.")
def explain(pod: str | None, manifest: str | None, dump: str | None, kubeconfig: str | None, context: str | None,
            profile: str | None, all_nodes: bool, top_nodes: int, scheduler_url: str | None,
            scheduler_ca_file: str | None, output: str, feature_gates: dict[str, bool], local: bool,
            wait_seconds: float) -> None:
    """Why the pod is (or would be) placed where it is, or why it stays pending.

    NAMESPACE/NAME asks the running scheduler by default: a SchedulingExplanation is created in the
    pod's namespace, the leader's answer (its own record, or its profile run over its live state)
    printed, and the object deleted; only the API server and your own credentials are used. When
    the CRD is not installed or no answer comes within --wait, and with --local, --all-nodes or
    --scheduler-url, the pod's profile is run locally over the cluster's current state instead,
    beside the scheduler's record (the decision annotation, --scheduler-url, or the service proxy).
    With -f, a pod that does not exist: where it would go and why not elsewhere."""
    import json

    from scheduler.app.explain import (
        ExplainError,
        check_scheduler_url,
        explain_pod,
        format_explanation,
        recorded_decision,
    )
    from scheduler.kubeapi import KubeClient, new_event_loop
    from scheduler.kubeapi.config import ConfigError, load_config

    if manifest is not None or dump is not None:
        if pod is not None or manifest is None:
            raise click.UsageError("give NAMESPACE/NAME, or -f pod.yaml [--from cluster.yaml]")
        if scheduler_url is not None:
            raise click.UsageError("--scheduler-url: a pod from -f has no record of the scheduler's")
        ask = not (local or all_nodes or feature_gates or dump is not None)
        _explain_manifest(manifest, dump, kubeconfig, context, profile, all_nodes, top_nodes, output, feature_gates,
                          wait_seconds if ask else None)
        return
    if pod is None:
        raise click.UsageError("give NAMESPACE/NAME, or -f pod.yaml")
    namespace, sep, name = pod.partition("/")
    if not sep or not namespace or not name:
        raise click.BadParameter("expected NAMESPACE/NAME", param_hint="POD")
    if scheduler_url is not None:
        try:
            check_scheduler_url(scheduler_url)      # before anything is sent anywhere
        except ExplainError as e:
            raise click.ClickException(str(e)) from None
    try:
        cfg = load_config(kubeconfig, context)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None

    if not (local or all_nodes or scheduler_url is not None or feature_gates):
        answer = _ask_scheduler(cfg, namespace, name, profile, wait_seconds)
        if answer is not None:
            if answer.get("verdict") == "Error":
                raise click.ClickException(str(answer.get("message")))
            click.echo(json.dumps(answer, indent=2) if output == "json" else _format_answer(answer))
            return

    async def go() -> dict[str, object]:
        async with KubeClient(cfg) as api:
            return await explain_pod(api, namespace, name, profile=profile, all_nodes=all_nodes, top_nodes=top_nodes,
                                     recorded=lambda: recorded_decision(api, namespace, name, scheduler_url,
                                                                        scheduler_ca_file),
                                     feature_gates=feature_gates)
    try:
        with asyncio.Runner(loop_factory=new_event_loop) as r:
            result = r.run(go())
    except ExplainError as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(result, indent=2) if output == "json" else format_explanation(result))


def _ask_scheduler(cfg: Any, namespace: str, name: str | None, profile: str | None, wait_seconds: float,
                   template: dict[str, Any] | None = None) -> dict[str, Any] | None:
    """The running scheduler's answer through a SchedulingExplanation (naming the pod ``name``, or
    embedding ``template``), or None (said on stderr) when there is none to be had: then ``explain``
    goes the local route."""
    from scheduler.app.explanations import NotAnswered, request_explanation
    from scheduler.errors import ClientError
    from scheduler.kubeapi import KubeClient, new_event_loop

    async def go() -> dict[str, Any]:
        async with KubeClient(cfg) as api:
            return await request_explanation(api, namespace, pod_name=name, template=template, profile=profile,
                                             timeout=wait_seconds)
    try:
        with asyncio.Runner(loop_factory=new_event_loop) as r:
            return r.run(go())
    except (NotAnswered, ClientError) as e:
        click.echo(f"explain: the scheduler did not answer ({e}); explaining locally", err=True)
        return None


def _format_answer(answer: dict[str, Any]) -> str:
    from scheduler.app.explain import format_explanation
    source = ("its own record of the decision" if answer.get("source") == "record"
              else "its profile run now over its live state")
    head = f"answered by the leading scheduler (a SchedulingExplanation): {answer.get('verdict')}, from {source}"
    body = format_explanation({k: v for k, v in answer.items() if k in ("decision", "shadow", "group")})
    return f"{head}\n{body}"


def _explain_manifest(manifest: str, dump: str | None, kubeconfig: str | None, context: str | None,
                      profile: str | None, all_nodes: bool, top_nodes: int, output: str,
                      feature_gates: dict[str, bool], wait_seconds: float | None) -> None:
    """``explain -f``: the pod of ``manifest`` over the dump ``--from``, or over the live cluster. Live,
    the pod is first defaulted by a dry-run create with the caller's credentials; then, unless
    ``wait_seconds`` is None, the running scheduler is asked through a SchedulingExplanation that
    embeds it (its profiles and live state, as for NAMESPACE/NAME), and only without an answer is
    it explained locally."""
    import json

    from scheduler.app.explain import (
        ExplainError,
        dry_run_default,
        explain_manifest,
        format_explanation,
        hypothetical_body,
    )
    from scheduler.app.explanations import NotAnswered, request_explanation
    from scheduler.app.simulate import load_objects
    from scheduler.errors import ClientError
    from scheduler.kubeapi import KubeClient, new_event_loop
    from scheduler.kubeapi.config import ConfigError, load_config
    from scheduler.simulator.cluster import LoadError

    try:
        docs = load_objects([manifest])
        objects = load_objects([dump]) if dump is not None else None
    except (LoadError, OSError) as e:
        raise click.ClickException(str(e)) from None
    if len(docs) != 1:
        raise click.BadParameter(f"expected one Pod, found {len(docs)} objects", param_hint="-f")

    async def ask(api: KubeClient, body: dict[str, Any], wait: float) -> dict[str, Any] | None:
        meta = body["metadata"]
        template = {"metadata": {k: meta[k] for k in ("name", "labels", "annotations", "ownerReferences")
                                 if k in meta},
                    "spec": body.get("spec") or {}}
        try:
            return await request_explanation(api, str(meta["namespace"]), template=template, profile=profile,
                                             timeout=wait)
        except (NotAnswered, ClientError) as e:
            click.echo(f"explain: the scheduler did not answer ({e}); explaining locally", err=True)
            return None

    async def go() -> tuple[str, dict[str, Any]]:
        if objects is not None:
            return "local", await explain_manifest(docs[0], objects=objects, profile=profile, all_nodes=all_nodes,
                                                   top_nodes=top_nodes, feature_gates=feature_gates)
        try:
            cfg = load_config(kubeconfig, context)
        except ConfigError as e:
            raise click.ClickException(str(e)) from None
        async with KubeClient(cfg) as api:
            body = await dry_run_default(api, hypothetical_body(docs[0]))
            if wait_seconds is not None:
                answer = await ask(api, body, wait_seconds)
                if answer is not None:
                    return "scheduler", answer
            return "local", await explain_manifest(body, api=api, profile=profile, all_nodes=all_nodes,
                                                   top_nodes=top_nodes, feature_gates=feature_gates, defaulted=True)
    try:
        with asyncio.Runner(loop_factory=new_event_loop) as r:
            route, result = r.run(go())
    except ExplainError as e:
        raise click.ClickException(str(e)) from None
    if route == "scheduler":
        if result.get("verdict") == "Error":
            raise click.ClickException(str(result.get("message")))
        click.echo(json.dumps(result, indent=2) if output == "json" else _format_answer(result))
        return
    click.echo(json.dumps(result, indent=2) if output == "json" else format_explanation(result))


@click.command()
@click.option("-f", "--filename", "manifest", required=True,
              help="The pod to count replicas of: a YAML or JSON file, or - for stdin. It need not exist.")
@click.option("--from", "dump", type=click.Path(exists=True), default=None,
              help="Read the cluster from this dump (kopf-scheduler dump), in memory, with no API server.")
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Path to a kubeconfig (default: $KUBECONFIG, ~/.kube/config, or in-cluster). Read-only.")
@click.option("--context", default=None, help="Kubeconfig context (default: current-context).")
@click.option("--profile", default=None, help="Count with this profile (CR name or schedulerName) instead of the "
              "pod's own.")
@click.option("--max", "max_replicas", default=1000, show_default=True, type=click.IntRange(1),
              help="Stop after placing this many replicas.")
@click.option("--output", type=click.Choice(["table", "json"]), default="table", show_default=True)
@click.option("--feature-gates", default="", callback=_feature_gates, metavar="Name=bool[,Name=bool]",
              help="As run --feature-gates: GenericWorkload=true answers for a gang's whole PodGroup.")
def capacity(manifest: str, dump: str | None, kubeconfig: str | None, context: str | None, profile: str | None,
             max_replicas: int, output: str, feature_gates: dict[str, bool]) -> None:
    """How many more replicas of this pod fit now and on which nodes, how many more if preemption
    ran (victims by priority), and why the first one that does not fit does not: the scheduler's
    own cycle run in memory, replica after replica. Nothing is written to the cluster."""
    import json

    from scheduler.app.capacity import CapacityError, format_capacity
    from scheduler.app.capacity import capacity as count
    from scheduler.app.simulate import load_objects
    from scheduler.kubeapi import KubeClient, new_event_loop
    from scheduler.kubeapi.config import ConfigError, load_config
    from scheduler.simulator.cluster import LoadError

    if dump is not None and kubeconfig is not None:
        raise click.UsageError("give --kubeconfig or --from, not both")
    try:
        docs = load_objects([manifest])
        objects = load_objects([dump]) if dump is not None else None
    except (LoadError, OSError) as e:
        raise click.ClickException(str(e)) from None
    if len(docs) != 1:
        raise click.BadParameter(f"expected one Pod, found {len(docs)} objects", param_hint="-f")

    async def go() -> dict[str, Any]:
        if objects is not None:
            return await count(docs[0], objects=objects, profile=profile, max_replicas=max_replicas,
                               feature_gates=feature_gates)
        try:
            cfg = load_config(kubeconfig, context)
        except ConfigError as e:
            raise click.ClickException(str(e)) from None
        async with KubeClient(cfg) as api:
            return await count(docs[0], api=api, profile=profile, max_replicas=max_replicas,
                               feature_gates=feature_gates)
    try:
        with asyncio.Runner(loop_factory=new_event_loop) as r:
            result = r.run(go())
    except CapacityError as e:
        raise click.ClickException(str(e)) from None
    click.echo(json.dumps(result, indent=2) if output == "json" else format_capacity(result))


@click.command()
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The cluster to dump (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", default=None, help="The kubeconfig context to use.")
@click.option("-o", "--output", "output_file", type=click.Path(dir_okay=False, writable=True, allow_dash=True),
              default="-", show_default=True, help="Where to write the List ('-': stdout).")
@click.option("--minimal", is_flag=True, help="Keep only what scheduling reads (no managedFields, no other status).")
@click.option("--anonymize", is_flag=True,
              help="Rename namespaces, names, nodes and images, consistently across references (implies --minimal).")
def dump(kubeconfig: str | None, context: str | None, output_file: str, minimal: bool, anonymize: bool) -> None:
    """Write everything `simulate -f` needs from a live cluster as one List (YAML).

    Nodes, pods, workloads, PVs and PVCs, StorageClasses, PriorityClasses, PDBs, Services,
    SchedulingProfiles; a kind the server does not serve is skipped with a note on stderr."""
    import yaml

    from scheduler.app.dump import dump_cluster
    from scheduler.errors import ClientError
    from scheduler.kubeapi import KubeClient, load_config, new_event_loop
    from scheduler.kubeapi.config import ConfigError

    try:
        cfg = load_config(kubeconfig, context)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None

    async def go() -> Any:
        api = KubeClient(cfg)
        try:
            return await dump_cluster(api, minimal=minimal, anonymize=anonymize)
        finally:
            await api.close()

    try:
        with asyncio.Runner(loop_factory=new_event_loop) as r:
            result = r.run(go())
    except ClientError as e:
        raise click.ClickException(f"dump: {e}") from None
    for note in result.notes:
        click.echo(f"dump: {note}", err=True)
    text = yaml.safe_dump(result.as_list(), sort_keys=False)
    if output_file == "-":
        click.echo(text, nl=False)
    else:
        Path(output_file).write_text(text)
        click.echo(f"dump: {len(result.items)} objects written to {output_file}", err=True)
