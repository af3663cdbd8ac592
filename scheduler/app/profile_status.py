"""``ProfileFollower``: SchedulingProfile events into the service, and its verdicts back into each
CR's ``status`` and warning Events.

The profiles come through the runtime's own informer (``informers.py``) on the worker's loop, as
every other kind does: one list, then a watch from that list's resourceVersion, so a profile
deleted at any moment is seen (there is no second listing with a gap before it). Each event is:

- an ADDED or MODIFIED whose spec, uid and generation this replica has handled already (the echo
  of a status write, a relist after ``410 Gone``): nothing to do;
- any other ADDED or MODIFIED: ``SchedulerService.on_profile`` validates, compiles and swaps it in,
  or keeps the previous version serving when it is refused;
- a DELETED: ``SchedulerService.remove_profile``; the next CR claiming the name takes over.

An event on one profile can change another's standing (it wins or loses its schedulerName), so
after each one the statuses the service queued for other CRs are written too, with a warning Event
on each that lost its name.

**Statuses** are written by the leader only (a standby compiles, warm, and writes nothing), and
all of them when it gains the lease (``write_all``). ``StatusWriter`` sends one status at a time,
each computed from the service's state when it is sent: a status computed earlier never lands after
one computed later, and a CR edited ten times while a write was slow gets one more write, not ten.

**The last good spec.** A refused edit leaves the previous version serving, but only in the memory
of the replicas that saw it. So an accepted status also carries ``lastAcceptedSpec`` and
``lastAcceptedGeneration``; a replica that meets a CR for the first time (it starts, or a standby
starts after the edit) whose current spec does not compile serves that spec instead, and reports
the current one's rejection, as the replica that saw the edit does. The status is one merge patch,
and a merge patch merges the new spec into the stored one key by key, which would keep the fields an
edit removed: so the patch also sets to null every key of the stored copy (as last seen, or as last
written) that the new one lacks (``replacing``).

Warnings go to ``involvedObject`` with an empty namespace, where ``kubectl describe sp`` looks for
Events about a cluster-scoped object.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
from collections.abc import Callable, Coroutine, Iterable, Mapping
from typing import Any

from scheduler.kubeapi import KubeClient
from scheduler.kubeapi.scheduler_client import ApiSchedulerClient
from scheduler.profiles.crd import API_VERSION, KIND, profiles_path
from scheduler.service import CONFLICT_REASON, ProfileStatus, SchedulerService, profile_status_body

__all__ = ["INVALID_REASON", "ProfileFollower", "StatusWriter", "replacing", "spawner"]

log = logging.getLogger("kopf_scheduler")

INVALID_REASON = "InvalidProfile"
_MERGE = "application/merge-patch+json"

Spawn = Callable[[Coroutine[Any, Any, Any]], None]


def _digest(uid: str, generation: Any, spec: Any) -> str:
    text = json.dumps([uid, generation, spec], sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def replacing(new: Any, *old: Any) -> Any:
    """A merge patch that turns any of ``old`` into ``new``: ``new``, plus a null for every key (at
    any depth) an old value has and ``new`` lacks. (RFC 7386: a list or a scalar replaces whole.)"""
    if not isinstance(new, Mapping):
        return new
    olds = [o for o in old if isinstance(o, Mapping)]
    out: dict[str, Any] = {k: replacing(v, *(o.get(k) for o in olds)) for k, v in new.items()}
    for o in olds:
        out.update({k: None for k in o if k not in new})
    return out


class StatusWriter:
    """Writes profile statuses one at a time, each from the latest state when it is sent.

    ``status_of(name)`` returns the merge patch of ``status`` (None: the CR is gone)."""

    def __init__(self, api: KubeClient | None, status_of: Callable[[str], dict[str, Any] | None],
                 spawn: Spawn) -> None:
        self.api, self.status_of, self.spawn = api, status_of, spawn
        self.pending: set[str] = set()
        self._running = False

    def want(self, names: Iterable[str]) -> None:
        self.pending.update(names)
        if self.pending and not self._running:
            self._running = True
            self.spawn(self._flush())

    async def _flush(self) -> None:
        try:
            while self.pending:
                name = min(self.pending)
                self.pending.discard(name)
                await self.write(name)
        finally:
            self._running = False

    async def write(self, name: str) -> None:
        body = self.status_of(name)
        if body is None or self.api is None:
            return                       # deleted meanwhile, or a follower that only reads
        try:
            await self.api.request("PATCH", profiles_path(name, "status"), {"status": body}, content_type=_MERGE)
        except Exception as e:  # 404 (deleted meanwhile) or the network: the next leader rewrites all
            log.warning("cannot write the status of profile %s: %s", name, e)


class ProfileFollower:
    """The profile informer's handler (``on_event``) and the statuses and Events it leads to.

    Without ``api`` and ``client`` (``explain``'s scheduler, never leading) it compiles, restores
    the last good spec, and writes nothing."""

    def __init__(self, service: SchedulerService, api: KubeClient | None, client: ApiSchedulerClient | None,
                 spawn: Spawn) -> None:
        self.service, self.client, self.spawn = service, client, spawn
        self.writer = StatusWriter(api, self.status_of, spawn)
        self._handled: dict[str, str] = {}                          # CR name -> digest of what was handled
        self._uids: dict[str, str] = {}
        # CR name -> (spec, generation) of the version it serves now, for lastAcceptedSpec.
        self._serving: dict[str, tuple[dict[str, Any], Any]] = {}
        # CR name -> its status.lastAcceptedSpec as last seen, and as last written.
        self._stored: dict[str, Any] = {}
        self._written: dict[str, Any] = {}

    # ---- events ---------------------------------------------------------------------------------
    def on_event(self, event: str, obj: dict[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        if event == "DELETED":
            self._forget(name)
            return
        status = obj.get("status")
        self._stored[name] = status.get("lastAcceptedSpec") if isinstance(status, Mapping) else None
        spec = obj.get("spec") or {}
        spec = dict(spec) if isinstance(spec, Mapping) else {}
        uid = str(meta.get("uid", ""))
        digest = _digest(uid, meta.get("generation"), spec)
        if self._handled.get(name) == digest:
            return                      # our own status write echoed, or a relist: the spec is unchanged
        if name in self._uids and self._uids[name] != uid:
            self._forget(name)          # deleted and created again while the watch was away
            self._stored[name] = status.get("lastAcceptedSpec") if isinstance(status, Mapping) else None
        first = name not in self._uids
        self._handled[name], self._uids[name] = digest, uid
        st = self._compile(name, spec, meta)
        if first and self._restore(name, st, meta, obj.get("status")):
            st = self._compile(name, spec, meta)            # refused again; now the last good one serves
        self._report(name, st, uid)

    def _compile(self, name: str, spec: dict[str, Any], meta: Mapping[str, Any]) -> ProfileStatus:
        st = self.service.on_profile(name, spec, meta)
        if st.accepted or st.reason == CONFLICT_REASON:    # it compiled: it serves now, or on a takeover
            self._serving[name] = (spec, meta.get("generation"))
        return st

    def _restore(self, name: str, st: ProfileStatus, meta: Mapping[str, Any], status: Any) -> bool:
        """A CR this replica meets for the first time, whose current spec is refused: serve the last
        good spec its status keeps, as the replicas that saw the refused edit do."""
        if st.accepted or st.reason or not isinstance(status, Mapping):
            return False            # accepted, or compiled but refused the name: nothing to restore
        last, generation = status.get("lastAcceptedSpec"), status.get("lastAcceptedGeneration")
        if not isinstance(last, Mapping) or generation == meta.get("generation"):
            return False
        restored = self._compile(name, dict(last), {**meta, "generation": generation})
        if not restored.accepted:
            return False
        log.info("profile %s: generation %s is refused; serving the last accepted generation %s from its status",
                 name, meta.get("generation"), generation)
        return True

    def _forget(self, name: str) -> None:
        self._handled.pop(name, None)
        self._uids.pop(name, None)
        self._serving.pop(name, None)
        self._stored.pop(name, None)
        self._written.pop(name, None)
        self.service.remove_profile(name)
        others = self.service.take_profile_updates()
        if self.service.leader:
            self.writer.want(others)
            self._warn_losers(others)

    def _report(self, name: str, st: ProfileStatus, uid: str) -> None:
        others = self.service.take_profile_updates()
        if not self.service.leader:
            return          # a standby compiles (warm) but writes nothing; the leader writes the status
        self.writer.want([name, *others])
        if st.reason == CONFLICT_REASON:
            self.warn(name, uid, st.reason, st.message)
        elif not st.accepted:
            # The last good version keeps serving; the user sees why this edit was refused.
            log.warning("profile %s rejected: %s", name, st.message)
            self.warn(name, uid, INVALID_REASON, f"profile rejected, the previous version keeps serving: {st.message}")
        self._warn_losers(others)

    def _warn_losers(self, names: Iterable[str]) -> None:
        for other in names:
            st, _generation = self.service.profile_status[other]
            if not st.accepted:
                self.warn(other, self.service.profile_uids.get(other, ""), st.reason or INVALID_REASON, st.message)

    def warn(self, name: str, uid: str, reason: str, message: str) -> None:
        if self.client is None:
            return
        self.spawn(self.client.cluster_event(API_VERSION, KIND, name, uid, "Warning", reason, "Compile", message))

    # ---- statuses -------------------------------------------------------------------------------
    def status_of(self, name: str) -> dict[str, Any] | None:
        """The merge patch of the CR's status, from the latest state (None: it is gone)."""
        current = self.service.profile_status.get(name)
        if current is None:
            return None
        st, generation = current
        body = profile_status_body(st, generation)
        serving = self._serving.get(name)
        if st.accepted and serving is not None:
            spec, spec_generation = serving
            body["lastAcceptedSpec"] = replacing(spec, self._stored.get(name), self._written.get(name))
            body["lastAcceptedGeneration"] = spec_generation
            self._written[name] = spec
        return body

    def write_all(self) -> None:
        """The leader writes every status (on gaining the lease: a standby wrote none)."""
        self.writer.want(list(self.service.profile_status))


def spawner(tasks: set[asyncio.Future[None]]) -> Spawn:
    """Run a coroutine as a task of the running loop, kept referenced until it ends."""
    def spawn(coro: Coroutine[Any, Any, Any]) -> None:
        task: asyncio.Future[None] = asyncio.ensure_future(coro)
        tasks.add(task)
        task.add_done_callback(tasks.discard)
    return spawn
