"""Kopf entry script of kopf-scheduler (loaded by path: ``operator/`` is not a package).

Kopf holds no handler of a kind: every kind the scheduler reads (pods, nodes, the storage and DRA
kinds, namespaces, PodDisruptionBudgets, the selector owners and SchedulingProfiles) comes through
the runtime's own informers on the worker's loop, one per kind, each continuing its initial list
with a watch from that list's resourceVersion (``scheduler/app/runtime.py`` says why: a second
listing by Kopf left a gap in which a deletion was never seen, and Kopf's watches died when its
credential refresh closed them). What is left here: the settings, the login from the scheduler's
own kubeconfig, the ``task`` worker mode's start, and the probe. Kopf is started, and restarted
when it dies, by ``OperatorRuntime.run_kopf``. The scheduler (``memo.service``) and its runtime
(``memo.runtime``) are built by ``kopf-scheduler run`` before Kopf starts.
"""

from typing import Any

import kopf


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Kopf posts no Events: it writes the namespace it posts to into involvedObject, where
    # `kubectl describe` of a cluster-scoped object never looks. The warnings users must see (a
    # rejected profile, a lost schedulerName) are posted by the runtime's client
    # (scheduler/app/profile_status.py).
    settings.posting.enabled = False
    # No handler of a kind: nothing to discover, so Kopf watches nothing (not even CRDs).
    settings.scanning.disabled = True
    settings.networking.connect_timeout = 10


@kopf.on.startup()
async def start_worker_in_task_mode(memo: kopf.Memo, **_: Any) -> None:
    if memo.runtime.worker_mode == "task":
        await memo.runtime.start_in_this_loop()


@kopf.on.login()
def login(memo: kopf.Memo, **_: Any) -> kopf.ConnectionInfo:
    # Kopf logs in at start, when the token it holds has expired, and after a 401. In the last two
    # cases the token we have is no good, so ask again: an exec plugin runs, a token file is re-read.
    # (A sync handler: Kopf runs it in a thread, so a slow plugin does not stall its loop.)
    cfg = memo.runtime.config
    if memo.get("logged_in"):
        cfg.invalidate_bearer()
    memo["logged_in"] = True
    return kopf.ConnectionInfo(server=cfg.server, ca_path=cfg.ca_path, insecure=cfg.insecure,
                               token=cfg.bearer(), expiration=cfg.expiration(), proxy_url=cfg.proxy_url,
                               certificate_path=cfg.cert_path, private_key_path=cfg.key_path,
                               default_namespace=cfg.namespace)


@kopf.on.probe(id="scheduler")
def probe(memo: kopf.Memo, **_: Any) -> dict[str, Any]:
    s = memo.service
    return {"synced": s.synced, "cycles": s.cycles, "pending": dict(s.queue.counts())}
