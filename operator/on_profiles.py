"""SchedulingProfile handlers: validate, compile, swap; report in ``status``; never lose the old one.

One schedulerName claimed by several profiles is served by the oldest (``scheduler/profiles/
profile_map.py``). An event on one profile can change another's standing (it wins or loses the
name), so after each event the statuses the service queued for *other* profiles are written too,
with a warning Event on each that lost its name. Every status goes through one ``StatusWriter``
per runtime, which sends the latest state, so a stale status never lands after a newer one.

A deletion is seen on the watch's DELETED event, on every replica, with no finalizer: a finalizer
would block ``kubectl delete`` while no scheduler runs, and only one replica would see it released.
"""

import asyncio
import logging
import weakref
from collections.abc import Iterable
from typing import Any

import kopf

from scheduler.profiles.crd import API_VERSION, GROUP, KIND, PLURAL, VERSION, profiles_path
from scheduler.service import profile_status_body

log = logging.getLogger("kopf_scheduler")


@kopf.on.resume(GROUP, VERSION, PLURAL)
@kopf.on.create(GROUP, VERSION, PLURAL)
@kopf.on.update(GROUP, VERSION, PLURAL)
async def profile_changed(name: str, spec: kopf.Spec, meta: kopf.Meta, memo: kopf.Memo,
                          logger: kopf.Logger, **_: Any) -> None:
    st = memo.service.on_profile(name, dict(spec), meta)
    memo.service.profile_status[name] = (st, meta.get("generation"))
    others = memo.service.take_profile_updates()
    if not memo.service.leader:
        return          # a standby compiles (warm) but writes nothing; the leader writes the status
    write_statuses(memo, [name, *others])
    if st.accepted:
        logger.info(st.message)
    elif st.reason == "SchedulerNameConflict":
        warn(memo, name, str(meta.get("uid", "")), st.reason, st.message)
    else:
        # The last good version keeps serving; the user sees why this edit was refused.
        logger.warning("profile rejected: %s", st.message)
        warn(memo, name, str(meta.get("uid", "")), "InvalidProfile",
             f"profile rejected, the previous version keeps serving: {st.message}")
    warn_losers(memo, others)


@kopf.on.event(GROUP, VERSION, PLURAL)
async def profile_event(event: kopf.RawEvent, name: str, memo: kopf.Memo, **_: Any) -> None:
    if event["type"] != "DELETED":
        return
    memo.service.remove_profile(name)
    others = memo.service.take_profile_updates()
    if memo.service.leader:
        write_statuses(memo, others)
        warn_losers(memo, others)


def warn(memo: kopf.Memo, name: str, uid: str, reason: str, message: str) -> None:
    """A Warning Event on the profile. Not ``kopf.warn``: Kopf puts the namespace it posts to
    into ``involvedObject`` too, and ``kubectl describe sp`` looks for events about a cluster-scoped
    object with an empty ``involvedObject.namespace``, so Kopf's never showed there."""
    memo.runtime.submit(memo.runtime.client.cluster_event(API_VERSION, KIND, name, uid, "Warning", reason,
                                                          "Compile", message))


def warn_losers(memo: kopf.Memo, names: Iterable[str]) -> None:
    for other in names:
        st, _generation = memo.service.profile_status[other]
        if not st.accepted:
            warn(memo, other, memo.service.profile_uids.get(other, ""), st.reason or "InvalidProfile", st.message)


class StatusWriter:
    """Writes profile statuses on the worker loop (which owns the API session), one at a time, each
    from the service's latest state when it is sent: an event on one profile rewrites another's
    status, and a write computed earlier must never land after one computed later."""

    def __init__(self, runtime: Any) -> None:
        self.runtime = runtime
        self.pending: set[str] = set()
        self.lock: asyncio.Lock | None = None

    def want(self, names: Iterable[str]) -> None:
        self.pending.update(names)
        self.runtime.submit(self.flush())

    async def flush(self) -> None:
        if self.lock is None:
            self.lock = asyncio.Lock()
        async with self.lock:
            while self.pending:
                name = self.pending.pop()
                current = self.runtime.service.profile_status.get(name)
                if current is None:
                    continue                    # deleted meanwhile
                try:
                    await self.runtime.api.request("PATCH", profiles_path(name, "status"),
                                                   {"status": profile_status_body(*current)},
                                                   content_type="application/merge-patch+json")
                except Exception as e:  # 404 (deleted meanwhile) or the network: a new leader rewrites all
                    log.warning("cannot write the status of profile %s: %s", name, e)


_writers: weakref.WeakKeyDictionary[Any, StatusWriter] = weakref.WeakKeyDictionary()


def write_statuses(memo: kopf.Memo, names: Iterable[str]) -> None:
    writer = _writers.get(memo.runtime)
    if writer is None:
        writer = _writers[memo.runtime] = StatusWriter(memo.runtime)
    writer.want(names)
