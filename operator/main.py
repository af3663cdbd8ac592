"""Kopf entry script of kopf-scheduler (loaded by path: ``operator/`` is not a package).

Everything here is an adapter: settings, the login from the scheduler's own kubeconfig, and the
probe. The handlers are in ``on_profiles.py``, ``on_nodes.py`` (nodes, namespaces) and
``on_budgets.py``; pods, the hot path, come from the runtime's own informer on the worker's loop
(``scheduler/runner.py`` says why). The scheduler (``memo.service``) and its runtime
(``memo.runtime``) are built by ``kopf-scheduler run`` before Kopf starts.
"""

import logging
from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Profiles keep Kopf's state in annotations: status belongs to the scheduler.
    prefix = "scheduling.kopf-scheduler.io"
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=prefix)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=prefix,
                                                                            key="last-handled-configuration")
    settings.persistence.finalizer = f"{prefix}/finalizer"
    settings.posting.level = logging.WARNING        # only warnings (a rejected profile) become Events
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
    settings.networking.connect_timeout = 10


@kopf.on.startup()
async def start_worker_in_task_mode(memo: kopf.Memo, **_: Any) -> None:
    if memo.runtime.worker_mode == "task":
        await memo.runtime.start_in_this_loop()


@kopf.on.login()
def login(memo: kopf.Memo, **_: Any) -> kopf.ConnectionInfo:
    cfg = memo.runtime.config
    return kopf.ConnectionInfo(server=cfg.server, ca_path=cfg.ca_path, insecure=cfg.insecure,
                               token=cfg.bearer(), certificate_path=cfg.cert_path, private_key_path=cfg.key_path,
                               default_namespace=cfg.namespace)


@kopf.on.probe(id="scheduler")
def probe(memo: kopf.Memo, **_: Any) -> dict[str, Any]:
    s = memo.service
    return {"synced": s.synced, "cycles": s.cycles, "pending": dict(s.queue.counts())}
