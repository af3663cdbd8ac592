"""``kopf-scheduler run``: the operator against a cluster (``runtime``; ``cli.py`` is the overview),
with upstream's flags (bind addresses, leader election, Go-style durations, TLS, rate limits).
"""

from __future__ import annotations

import signal
import threading

import click

from scheduler.app.cli_options import _feature_gates, _setup_logging

__all__ = ["run"]


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


@click.command()
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
