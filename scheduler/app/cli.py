"""The ``kopf-scheduler`` command line: the ``[project.scripts]`` entry point (upstream's ``NewSchedulerCommand``).

Commands: ``run`` (the operator against a cluster: ``runtime``), ``simulate`` (the operator against the
embedded simulated cluster: ``simulate``), ``dump`` (a live cluster as one List for ``simulate -f``:
``dump``), ``crd`` (print the SchedulingProfile CRD), ``config import``
(a KubeSchedulerConfiguration as SchedulingProfiles: ``scheduler.profiles.import_config``), ``cluster``
(serve the simulated cluster: ``scheduler.simulator``), and the measurements of ``scheduler.benchmark``:
``cluster-bench``, ``bench`` (the scheduler_perf workloads) and ``soak``. Each command imports what it
needs when it runs. Next to read: ``runtime``.
"""

from __future__ import annotations

import asyncio
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import click

from scheduler.profiles.crd import crd as profiles_crd
from scheduler.profiles.crd import crd_yaml
from scheduler.profiles.explanation_crd import crd as explanation_crd
from scheduler.profiles.explanation_crd import crd_yaml as explanation_crd_yaml

__all__ = ["EXIT_REJECTED", "main"]

EXIT_REJECTED = 3      # simulate: the API refused input objects (without --allow-rejected)


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


def _feature_gates(ctx: click.Context, param: click.Parameter, value: str) -> dict[str, bool]:
    """``Name=bool[,Name=bool]`` (``scheduler/features.py``); an unknown gate is a usage error."""
    from scheduler.features import FeatureGateError, parse_feature_gates
    try:
        return parse_feature_gates(value or "")
    except FeatureGateError as e:
        raise click.BadParameter(str(e)) from None


@main.command()
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


@main.command()
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


def _gpu_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``--gpus-per-node`` and ``--gpu-attributes``: the simulated DRA driver
    (``scheduler.simulator.controllers.gpudriver``)."""
    fn = click.option("--gpu-attributes", type=click.Path(exists=True, dir_okay=False), default=None,
                      help="YAML describing the simulated GPUs (model, memory, driverVersion, attributes) in place "
                           "of the packaged scheduler/simulator/data/gpus.yaml.")(fn)
    return click.option("--gpus-per-node", type=click.IntRange(0, 128), default=0, show_default=True,
                        help="GPUs the simulated DRA driver gpu.example.com publishes on each node (one "
                             "ResourceSlice per node, DeviceClass gpu.example.com); 0: no driver.")(fn)


def _gpu_description(gpus_per_node: int, path: str | None) -> dict[str, Any] | None:
    """The GPU description ``--gpu-attributes`` names (the packaged one without it), checked up front."""
    from scheduler.simulator import load_gpu_attributes

    if gpus_per_node <= 0 and path is None:
        return None
    try:
        return load_gpu_attributes(path)
    except (ValueError, OSError) as e:
        raise click.BadParameter(str(e), param_hint="--gpu-attributes") from None


@main.command()
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


@main.command()
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

    from scheduler.benchmark.cluster_bench import format_table, run_bench

    report = run_bench(pods=pods, watchers=watchers, concurrency=concurrency, repeat=repeat, time_limit=time_limit)
    click.echo(json.dumps(report, indent=2) if output == "json" else format_table(report))


def _setup_logging(fmt: str, verbosity: int) -> None:
    import json
    import logging

    level = logging.WARNING if verbosity == 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    handler = logging.StreamHandler()
    if fmt == "json":
        class Json(logging.Formatter):
            def format(self, r: logging.LogRecord) -> str:
                return json.dumps({"ts": r.created, "level": r.levelname.lower(), "logger": r.name,
                                   "msg": r.getMessage(), **({"err": self.formatException(r.exc_info)}
                                                             if r.exc_info else {})})
        handler.setFormatter(Json())
    else:
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
    logging.getLogger("kopf_scheduler").setLevel(min(level, logging.INFO))


def _address(ctx: click.Context, param: click.Parameter, value: str | None) -> tuple[str, int] | None:
    from scheduler.app.serving import parse_bind_address
    if not value:
        return None
    try:
        return parse_bind_address(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _duration(ctx: click.Context, param: click.Parameter, value: str) -> float:
    """Go-style durations as upstream's flags take them: 15s, 500ms, 1m, or plain seconds."""
    import re
    m = re.fullmatch(r"([0-9]*\.?[0-9]+)(ms|s|m)?", value.strip())
    if not m:
        raise click.BadParameter(f"{value!r} is not a duration (e.g. 15s, 500ms, 1m)")
    return float(m.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}[m.group(2)]


@main.command()
@click.option("--kubeconfig", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, or in-cluster).")
@click.option("--context", default=None, help="Kubeconfig context (default: current-context).")
@click.option("--metrics-bind-address", default="0.0.0.0:10259", show_default=True, callback=_address,
              help="HOST:PORT serving /metrics, /healthz and /readyz.")
@click.option("--health-bind-address", default=None, callback=_address,
              help="HOST:PORT also serving the probes (default: only the metrics address).")
@click.option("--leader-elect/--no-leader-elect", default=False, show_default=True,
              help="Run only while holding a coordination.k8s.io/v1 Lease (for several replicas).")
@click.option("--leader-elect-lease-duration", default="15s", show_default=True, callback=_duration,
              help="How long a lease lasts without renewal.")
@click.option("--leader-elect-renew-deadline", default="10s", show_default=True, callback=_duration,
              help="How long the leader keeps trying to renew before it stops scheduling.")
@click.option("--leader-elect-retry-period", default="2s", show_default=True, callback=_duration,
              help="How often candidates try, and the leader renews.")
@click.option("--leader-elect-resource-name", default="kopf-scheduler", show_default=True)
@click.option("--leader-elect-resource-namespace", default=None,
              help="Namespace of the Lease (default: $POD_NAMESPACE, else the in-cluster or kubeconfig namespace).")
@click.option("--decision-records", default=10_000, show_default=True, type=click.IntRange(0),
              help="Keep the latest decision record of this many pods (GET /debug/decisions/NS/NAME); 0: off.")
@click.option("--decision-top-nodes", default=3, show_default=True, type=click.IntRange(0),
              help="Nodes per decision record, with their per-plugin scores.")
@click.option("--explanation-qps", default=5.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="SchedulingExplanations answered per second at most (the leader's token bucket).")
@click.option("--explanation-burst", default=10, show_default=True, type=click.IntRange(1),
              help="SchedulingExplanations the bucket lets through at once.")
@click.option("--kube-api-qps", default=50.0, show_default=True, type=click.FloatRange(0, min_open=True),
              help="Requests per second to the API server (client-go's token bucket; kube-scheduler's default).")
@click.option("--kube-api-burst", default=100, show_default=True, type=click.IntRange(1),
              help="Requests the bucket lets through at once.")
@click.option("--tls-cert-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Serving certificate (PEM); without it and --tls-private-key-file, a self-signed one is made.")
@click.option("--tls-private-key-file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Serving certificate's private key (PEM).")
@click.option("--authorization-always-allow-paths", default="/healthz,/readyz,/livez", show_default=True,
              help="Paths served without authentication or authorization (comma-separated; a trailing * is a prefix).")
@click.option("--feature-gates", default="", callback=_feature_gates, metavar="Name=bool[,Name=bool]",
              help="Upstream's feature gates: OpportunisticBatching (default true).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("-v", "--verbose", count=True, help="-v info, -vv debug.")
def run(kubeconfig: str | None, context: str | None, metrics_bind_address: tuple[str, int],
        health_bind_address: tuple[str, int] | None, leader_elect: bool, leader_elect_lease_duration: float,
        leader_elect_renew_deadline: float, leader_elect_retry_period: float, leader_elect_resource_name: str,
        leader_elect_resource_namespace: str | None, decision_records: int, decision_top_nodes: int,
        explanation_qps: float, explanation_burst: int, kube_api_qps: float, kube_api_burst: int,
        tls_cert_file: str | None, tls_private_key_file: str | None,
        authorization_always_allow_paths: str, feature_gates: dict[str, bool], log_format: str,
        verbose: int) -> None:
    """Run the scheduler against a cluster (kubeconfig or in-cluster).

    /metrics, /healthz, /readyz and /livez are served over HTTPS; every path but the always-allowed
    ones needs a bearer token that the API server authenticates (TokenReview) and authorizes
    (SubjectAccessReview), as kube-scheduler's secure port does."""
    import os
    import socket
    import uuid

    from scheduler.app.runtime import OperatorRuntime, raise_open_file_limit
    from scheduler.app.serving import SecureServing
    from scheduler.kubeapi.config import ConfigError, load_config
    from scheduler.kubeapi.leaderelection import validate_timings

    if (tls_cert_file is None) != (tls_private_key_file is None):
        raise click.BadParameter("give both --tls-cert-file and --tls-private-key-file, or neither",
                                 param_hint="--tls-cert-file")
    secure = SecureServing(tls_cert_file, tls_private_key_file,
                           tuple(p.strip() for p in authorization_always_allow_paths.split(",") if p.strip()))
    try:
        validate_timings(leader_elect_lease_duration, leader_elect_renew_deadline, leader_elect_retry_period)
    except ValueError as e:
        raise click.BadParameter(str(e), param_hint="--leader-elect-*") from None
    _setup_logging(log_format, verbose)
    try:
        cfg = load_config(kubeconfig, context)
    except ConfigError as e:
        raise click.ClickException(str(e)) from None
    election = None
    if leader_elect:
        election = {"namespace": leader_elect_resource_namespace or os.environ.get("POD_NAMESPACE") or cfg.namespace,
                    "name": leader_elect_resource_name, "identity": f"{socket.gethostname()}_{uuid.uuid4()}",
                    "lease_duration": leader_elect_lease_duration, "renew_deadline": leader_elect_renew_deadline,
                    "retry_period": leader_elect_retry_period}
    addresses = [metrics_bind_address] + ([health_bind_address] if health_bind_address else [])
    raise_open_file_limit()
    runtime = OperatorRuntime(cfg, http_addresses=addresses, leader_election=election, secure_serving=secure,
                              qps=kube_api_qps, burst=kube_api_burst, decision_records=decision_records,
                              decision_top_nodes=decision_top_nodes, feature_gates=feature_gates,
                              explanation_qps=explanation_qps, explanation_burst=explanation_burst)
    # Kopf is imported here, before the worker starts, not by its thread once the worker is ready:
    # the import is a few tenths of a second of CPU, and after readiness it competed with the
    # first scheduling cycles for the GIL.
    import kopf  # noqa: F401
    # SIGTERM and SIGINT are this thread's, not Kopf's (Kopf runs in a thread of its own): a stop
    # drains the worker and releases the lease at once, while Kopf stops alongside.
    terminate = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: terminate.set())
    runtime.start()
    # In task mode the worker starts inside Kopf's loop (its startup handler), so it cannot sync
    # before Kopf runs: waiting for it here would wait for ever.
    while runtime.worker_mode == "thread" and not runtime.synced.wait(0.2):
        if terminate.is_set():
            runtime.stop()
            return
    if runtime.failed is not None:
        raise click.ClickException(f"the scheduling worker failed to start: {runtime.failed}")
    # The worker thread's end stops Kopf too: a scheduler that cannot schedule must exit.
    runtime.run_until(terminate)
    if runtime.failed is not None:
        raise click.ClickException(f"the scheduling worker stopped: {runtime.failed}")


@main.command()
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


@main.command()
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

    from scheduler.benchmark.environment import environment, format_header, load_average
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
    env["loadAverage"]["after"] = load_average()
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
    from scheduler.benchmark.environment import environment, format_header, load_average
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
    env["loadAverage"]["after"] = load_average()
    report = {"environment": env, **report}
    click.echo(json.dumps(report, indent=2) if output == "json"
               else format_header(report["environment"]) + "\n" + format_against(report))


@main.command()
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


if __name__ == "__main__":
    main()
