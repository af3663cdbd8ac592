"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection`` does it.

::

    standby ──(lease absent, or not renewed by its holder for leaseDuration)──► try to take it (PUT with
       ▲                                                                         resourceVersion: one winner)
       │                                                                               │ won
       └──(no successful renew for renewDeadline: stop *before* the lease can expire)── leading: renew every
                                                                                        retryPeriod

Expiry is judged on the local clock from when this replica last *saw the record change*, not from
the holder's timestamps, so clock skew between replicas does not matter (client-go's
``observedTime``), and against the record's own ``leaseDurationSeconds``. Defaults are upstream's:
leaseDuration 15 s, renewDeadline 10 s, retryPeriod 2 s; they must satisfy
``leaseDuration > renewDeadline > 1.2 × retryPeriod``.

**Stopping** (``stop`` set) releases the lease, as kube-scheduler does with client-go's
``ReleaseOnCancel``: the record is rewritten with an empty ``holderIdentity``, ``leaseDurationSeconds:
1`` and the observed ``leaseTransitions``, conditional on the resourceVersion this replica last
wrote (a 409 means someone else holds it now: nothing to release). A standby may take a lease with
no holder at once (client-go's ``tryAcquireOrRenew``), and a standby does not wait out its
retryPeriod to notice: while it stands by it watches its one Lease object (``fieldSelector
metadata.name``) and tries again as soon as the lease is released or deleted. The watch only wakes
it early; expiry is still judged by polling every retryPeriod, so a lost watch costs promptness,
never safety.

**The fence** (``holds``): a replica may act as leader only while it leads *and* its last successful
renew began less than renewDeadline ago. The elector notices a failed renew only when its own task
runs; a process that froze (a long CPU-bound cycle on the same loop, a stopped VM) wakes believing
it leads while another replica may already have taken the lease. ``holds`` is judged on the clock at
the moment of asking, so the scheduler checks it before every Binding and PreBind write.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import time
from collections.abc import Callable
from typing import Any

from scheduler.errors import ClientError, ConflictError, NotFoundError
from scheduler.kubeapi.client import KubeClient

__all__ = ["JITTER", "LeaderElector", "validate_timings"]

log = logging.getLogger("kopf_scheduler.leaderelection")
JITTER = 1.2
# How soon a standby tries again after a failed attempt at a lease that has no holder (released):
# not a whole retryPeriod, or one injected 503 would cost the hand-over seconds.
FREE_RETRY = 0.1


def validate_timings(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    if not lease_duration > renew_deadline:
        raise ValueError("leaseDuration must be greater than renewDeadline")
    if not renew_deadline > JITTER * retry_period:
        raise ValueError(f"renewDeadline must be greater than retryPeriod*{JITTER}")
    if retry_period <= 0:
        raise ValueError("retryPeriod must be positive")


def _micro(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int(t % 1 * 1e6):06d}Z"


class LeaderElector:
    def __init__(self, api: KubeClient, *, namespace: str, name: str, identity: str, lease_duration: float = 15.0,
                 renew_deadline: float = 10.0, retry_period: float = 2.0,
                 on_change: Callable[[bool], None] | None = None, clock: Callable[[], float] = time.monotonic,
                 release_on_cancel: bool = True, watch_release: bool = True) -> None:
        validate_timings(lease_duration, renew_deadline, retry_period)
        self.api, self.namespace, self.name, self.identity = api, namespace, name, identity
        self.lease_duration, self.renew_deadline, self.retry_period = lease_duration, renew_deadline, retry_period
        self.on_change = on_change
        self.clock = clock
        self.leading = False
        self.holder = ""
        self.transitions = 0
        self._observed: tuple[Any, ...] | None = None
        self._observed_at = 0.0
        self.last_renew = 0.0
        self.release_on_cancel, self.watch_release = release_on_cancel, watch_release
        self._lease: dict[str, Any] | None = None       # the Lease as last read or written (its resourceVersion)
        self._observed_duration = lease_duration
        self._wake = asyncio.Event()                     # the standby's watch saw the lease released
        self.released_at: float | None = None            # when this replica last released the lease (clock)
        self._collection = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
        self._path = f"{self._collection}/{name}"

    def holds(self) -> bool:
        """The fence: this replica leads, and its last successful renew began less than renewDeadline
        ago (judged now, not when the elector last ran), so no other replica can have taken the lease
        (``leaseDuration > renewDeadline``)."""
        return self.leading and self.clock() - self.last_renew < self.renew_deadline

    def _set_leading(self, value: bool) -> None:
        if value != self.leading:
            self.leading = value
            log.info("%s leadership of lease %s/%s", "acquired" if value else "lost", self.namespace, self.name)
            if self.on_change is not None:
                self.on_change(value)

    async def try_acquire_or_renew(self) -> bool:
        now_wall = time.time()
        try:
            lease = await self.api.request("GET", self._path)
        except NotFoundError:
            body: dict[str, Any] = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                    "metadata": {"name": self.name, "namespace": self.namespace},
                    "spec": {"holderIdentity": self.identity, "leaseDurationSeconds": int(self.lease_duration),
                             "acquireTime": _micro(now_wall), "renewTime": _micro(now_wall), "leaseTransitions": 0}}
            try:
                created = await self.api.request("POST", self._collection, body)
            except ConflictError:
                return False
            self._lease = created if isinstance(created, dict) else None
            self._observe(body["spec"])
            self.holder, self.transitions = self.identity, 0
            return True
        self._lease = lease
        spec = lease.get("spec") or {}
        self._observe(spec)
        mine = self.holder == self.identity
        # client-go's isLeaseValid: the record's own leaseDurationSeconds from when it was observed.
        if self.holder and not mine and self._observed_at + self._observed_duration > self.clock():
            return False                      # held by someone who renewed within leaseDuration
        new_spec = dict(spec)
        new_spec.update(holderIdentity=self.identity, leaseDurationSeconds=int(self.lease_duration),
                        renewTime=_micro(now_wall))
        if not mine:
            new_spec["acquireTime"] = _micro(now_wall)
            new_spec["leaseTransitions"] = self.transitions + 1
        try:
            written = await self.api.request("PUT", self._path, {**lease, "spec": new_spec})   # carries resourceVersion
        except ConflictError:
            return False
        self._lease = written if isinstance(written, dict) else None
        self._observe(new_spec)
        self.holder, self.transitions = self.identity, int(new_spec.get("leaseTransitions") or 0)
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._observed:
            self._observed, self._observed_at = record, self.clock()
            self._observed_duration = float(spec.get("leaseDurationSeconds") or self.lease_duration)
        self.holder = str(spec.get("holderIdentity") or "")
        self.transitions = int(spec.get("leaseTransitions") or 0)

    async def release(self) -> bool:
        """client-go's ``release``: give the lease up if this replica holds it, so a standby need not
        wait for it to expire. The record keeps the observed ``leaseTransitions`` and says
        ``leaseDurationSeconds: 1`` with no holder; the write is conditional on the resourceVersion
        this replica last saw, so it can never take the lease from a replica that acquired it
        meanwhile. A 409 is answered by reading the lease again (still ours: release that version);
        a failed request is retried until ``renewDeadline`` after the last renew, beyond which the
        lease may have been taken anyway. True when the lease is released, or not ours."""
        deadline = self.last_renew + self.renew_deadline
        delay = FREE_RETRY
        while True:
            if self.holder != self.identity or self._lease is None:
                return True
            now_wall = time.time()
            spec = {"holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": _micro(now_wall),
                    "renewTime": _micro(now_wall), "leaseTransitions": self.transitions}
            try:
                budget = max(0.1, deadline - self.clock())
                written = await asyncio.wait_for(self.api.request("PUT", self._path, {**self._lease, "spec": spec}),
                                                 timeout=budget)
            except ConflictError:
                try:
                    self._lease = await self.api.request("GET", self._path)
                    self._observe((self._lease or {}).get("spec") or {})
                    continue
                except NotFoundError:
                    return True
                except ClientError as e:
                    error: Exception = e
            except (ClientError, TimeoutError) as e:
                error = e
            else:
                self._lease = written if isinstance(written, dict) else None
                self._observe(spec)
                self.released_at = self.clock()
                log.info("released lease %s/%s", self.namespace, self.name)
                return True
            if self.clock() + delay >= deadline:
                log.error("Failed to release lease %s/%s: %s", self.namespace, self.name, error)
                return False
            await asyncio.sleep(delay)
            delay = min(delay * 2, 1.0)

    async def run(self, stop: asyncio.Event) -> None:
        """Campaign, lead, and fall back to standby, until ``stop`` is set; then release the lease if
        this replica holds it (``release_on_cancel``, as kube-scheduler's ``ReleaseOnCancel``).

        Whoever sets ``stop`` must first have stopped everything the lease protects (the scheduler
        drains its binding cycles before): leadership ends (``on_change(False)``) before the
        release is written."""
        watcher: asyncio.Future[None] | None = None
        quick = 0                 # failed attempts in a row at a lease seen without a holder
        try:
            while not stop.is_set():
                # Standby: try every retryPeriod, with jitter; at once when the watch sees a release.
                self._wake.clear()
                started = self.clock()
                try:
                    acquired = await self.try_acquire_or_renew()
                except ClientError as e:
                    log.warning("cannot reach lease %s/%s: %s", self.namespace, self.name, e)
                    acquired = False
                if not acquired:
                    if watcher is None and self.watch_release:
                        watcher = asyncio.ensure_future(self._watch(stop))
                    delay = self.retry_period * random.uniform(1.0, JITTER)
                    if self._observed is not None and not self.holder:
                        # Released: nobody may hold it yet, so try again soon (doubling, up to the
                        # usual period), not a whole retryPeriod after an injected error.
                        delay = min(delay, FREE_RETRY * 2 ** quick)
                        quick += 1
                    else:
                        quick = 0
                    await self._sleep(stop, delay, self._wake)
                    continue
                quick = 0
                if watcher is not None:
                    watcher.cancel()
                    watcher = None
                self.last_renew = started
                self._set_leading(True)
                try:
                    await self._renew(stop)
                finally:
                    self._set_leading(False)      # also when this loop dies: a replica that cannot renew must not lead
                    if stop.is_set() and self.release_on_cancel:
                        await self.release()
        finally:
            if watcher is not None:
                watcher.cancel()

    async def _renew(self, stop: asyncio.Event) -> None:
        """Lead: renew every retryPeriod until ``stop``, or until no renew succeeded for renewDeadline."""
        while not stop.is_set():
            await self._sleep(stop, self.retry_period)
            if stop.is_set():
                return
            started = self.clock()
            budget = max(0.1, self.renew_deadline - (started - self.last_renew))
            try:
                ok = await asyncio.wait_for(self.try_acquire_or_renew(), timeout=budget)
            except TimeoutError:
                log.warning("cannot renew lease %s/%s: no answer within %.1f s (what is left of the "
                            "%.0f s renew deadline)", self.namespace, self.name, budget, self.renew_deadline)
                ok = False
            except ClientError as e:
                log.warning("cannot renew lease %s/%s: %s", self.namespace, self.name, e)
                ok = False
            if ok:
                # From when the renew was sent: other replicas saw the record change no earlier.
                self.last_renew = started
            elif self.clock() - self.last_renew >= self.renew_deadline or self.holder != self.identity:
                return                            # stop leading before the lease can expire elsewhere

    async def _watch(self, stop: asyncio.Event) -> None:
        """The standby's watch of its one Lease: every record it delivers is observed (as a GET's
        would be), and a release (no holder) or a deletion wakes the standby at once. Reopened
        after any failure, a retryPeriod later; polling goes on meanwhile."""
        selector = {"fieldSelector": f"metadata.name={self.name}"}
        while not stop.is_set():
            rv = ((self._lease or {}).get("metadata") or {}).get("resourceVersion")
            try:
                async for kind, obj in self.api.watch_path(self._collection, resource_version=rv, params=selector,
                                                           timeout=max(60, int(self.lease_duration * 4))):
                    if kind == "DELETED":
                        self._lease = None
                        self.holder = ""
                        self._wake.set()
                        continue
                    if kind not in ("ADDED", "MODIFIED"):
                        continue
                    self._lease = obj
                    self._observe(obj.get("spec") or {})
                    if not self.holder:
                        self._wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as e:   # a watch is only a hint: never let it take the elector down
                log.debug("watch of lease %s/%s ended: %s", self.namespace, self.name, e)
            await self._sleep(stop, self.retry_period)

    def watchdog(self, now: float, timeout: float = 20.0) -> str | None:
        """client-go's ``HealthzAdaptor`` check, with kube-scheduler's 20 s timeout: a replica that
        believes it leads but has not renewed for ``leaseDuration + timeout`` is unhealthy."""
        if self.leading and now - self.last_renew > self.lease_duration + timeout:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    @staticmethod
    async def _sleep(stop: asyncio.Event, seconds: float, wake: asyncio.Event | None = None) -> None:
        """Sleep ``seconds``, or less if ``stop`` (or ``wake``) is set."""
        if wake is None:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), timeout=seconds)
            return
        waiters = [asyncio.ensure_future(stop.wait()), asyncio.ensure_future(wake.wait())]
        try:
            await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waiters:
                w.cancel()
