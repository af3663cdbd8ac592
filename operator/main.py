"""Kopf entry script of kopf-scheduler (loaded by path: ``operator/`` is not a package).

Everything here is an adapter: settings, the login from the scheduler's own kubeconfig, and the
probe. The handlers are in ``on_profiles.py``, ``on_nodes.py`` (namespaces),
``on_budgets.py`` and ``on_selectors.py`` (Services and controllers); pods, the hot path, nodes,
and the storage and DRA kinds the plugins read per pod come from the runtime's own informers on the
worker's loop (``scheduler/app/runtime.py`` says why). Kopf is started, and restarted when it dies,
by ``OperatorRuntime.run_kopf``. The scheduler (``memo.service``) and its runtime
(``memo.runtime``) are built by ``kopf-scheduler run`` before Kopf starts.
"""

import hashlib
import json
from collections.abc import Iterable
from typing import Any, cast

import kopf

from scheduler.profiles.crd import GROUP

PREFIX = GROUP              # Kopf's annotations (progress, last-handled digest) under the CRD's group


class DigestDiffBaseStorage(kopf.AnnotationsDiffBaseStorage):
    """Kopf's last-handled configuration as a digest of the essence, not the essence itself.

    Kopf's own storage copies the whole essence (spec, labels, annotations) into one annotation, so
    a profile of about 256 KiB or more makes every patch Kopf sends fail on a real cluster: all the
    annotations together may hold at most 262,144 bytes. Change detection needs only "same or not",
    and our handlers read the current ``spec``, never ``old``, ``new`` or ``diff`` (which are now
    digests), so the annotation is about 130 bytes (key and value) whatever the profile's size.
    """

    def build(self, *, body: kopf.Body, extra_fields: Iterable[Any] | None = None) -> kopf.BodyEssence:
        essence = cast(dict[str, Any], super().build(body=body, extra_fields=extra_fields))
        annotations = essence.get("metadata", {}).get("annotations", {})
        for key in [k for k in annotations if k.startswith(f"{self.prefix}/")]:
            del annotations[key]        # progress records and markers: Kopf's clear() cannot see into a digest
        text = json.dumps(essence, sort_keys=True, separators=(",", ":"))
        return cast(kopf.BodyEssence, {"sha256": hashlib.sha256(text.encode()).hexdigest()})


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    # Profiles keep Kopf's state in annotations: status belongs to the scheduler. The last-handled
    # configuration is a digest, so a large profile never makes an annotation the API server refuses.
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=PREFIX)
    settings.persistence.diffbase_storage = DigestDiffBaseStorage(prefix=PREFIX, key="last-handled-configuration")
    settings.persistence.finalizer = f"{PREFIX}/finalizer"
    # Kopf posts no Events: it writes the namespace it posts to into involvedObject, where
    # `kubectl describe` of a cluster-scoped object never looks. The warnings users must see (a
    # rejected profile, a lost schedulerName) are posted by the runtime's client (on_profiles.warn).
    settings.posting.enabled = False
    settings.watching.server_timeout = 300
    settings.watching.client_timeout = 330
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
