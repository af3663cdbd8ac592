"""Leader election on a ``coordination.k8s.io/v1`` Lease, as client-go's ``leaderelection`` does it.

::

    standby ──(lease absent, or not renewed by its holder for leaseDuration)──► try to take it (PUT with
       ▲                                                                         resourceVersion: one winner)
       │                                                                               │ won
       └──(no successful renew for renewDeadline: stop *before* the lease can expire)── leading: renew every
                                                                                        retryPeriod

Expiry is judged on the local clock from when this replica last *saw the record change*, not from
the holder's timestamps, so clock skew between replicas does not matter (client-go's
``observedTime``). Defaults are upstream's: leaseDuration 15 s, renewDeadline 10 s, retryPeriod 2 s;
they must satisfy ``leaseDuration > renewDeadline > 1.2 × retryPeriod``.
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
                 ) -> None:
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
        self._path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases/{name}"

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
                await self.api.request("POST", f"/apis/coordination.k8s.io/v1/namespaces/{self.namespace}/leases",
                                       body)
            except ConflictError:
                return False
            self._observe(body["spec"])
            self.holder, self.transitions = self.identity, 0
            return True
        spec = lease.get("spec") or {}
        self._observe(spec)
        self.holder = str(spec.get("holderIdentity") or "")
        self.transitions = int(spec.get("leaseTransitions") or 0)
        mine = self.holder == self.identity
        if self.holder and not mine and self._observed_at + self.lease_duration > self.clock():
            return False                      # held by someone who renewed within leaseDuration
        new_spec = dict(spec)
        new_spec.update(holderIdentity=self.identity, leaseDurationSeconds=int(self.lease_duration),
                        renewTime=_micro(now_wall))
        if not mine:
            new_spec["acquireTime"] = _micro(now_wall)
            new_spec["leaseTransitions"] = self.transitions + 1
        try:
            await self.api.request("PUT", self._path, {**lease, "spec": new_spec})   # carries resourceVersion
        except ConflictError:
            return False
        self._observe(new_spec)
        self.holder, self.transitions = self.identity, int(new_spec.get("leaseTransitions") or 0)
        return True

    def _observe(self, spec: dict[str, Any]) -> None:
        record = (spec.get("holderIdentity"), spec.get("renewTime"), spec.get("leaseTransitions"))
        if record != self._observed:
            self._observed, self._observed_at = record, self.clock()

    async def run(self, stop: asyncio.Event) -> None:
        """Campaign, lead, and fall back to standby, until ``stop`` is set (then release nothing:
        the lease simply expires, as client-go does without ReleaseOnCancel)."""
        while not stop.is_set():
            # Standby: try every retryPeriod, with jitter.
            try:
                acquired = await self.try_acquire_or_renew()
            except ClientError as e:
                log.warning("cannot reach lease %s/%s: %s", self.namespace, self.name, e)
                acquired = False
            if not acquired:
                await self._sleep(stop, self.retry_period * random.uniform(1.0, JITTER))
                continue
            self.last_renew = self.clock()
            self._set_leading(True)
            try:
                while not stop.is_set():
                    await self._sleep(stop, self.retry_period)
                    budget = max(0.1, self.renew_deadline - (self.clock() - self.last_renew))
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
                        self.last_renew = self.clock()
                    elif self.clock() - self.last_renew >= self.renew_deadline or self.holder != self.identity:
                        break                         # stop leading before the lease can expire elsewhere
            finally:
                self._set_leading(False)      # also when this loop dies: a replica that cannot renew must not lead

    def watchdog(self, now: float, timeout: float = 20.0) -> str | None:
        """client-go's ``HealthzAdaptor`` check, with kube-scheduler's 20 s timeout: a replica that
        believes it leads but has not renewed for ``leaseDuration + timeout`` is unhealthy."""
        if self.leading and now - self.last_renew > self.lease_duration + timeout:
            return f"failed election to renew leadership on lease {self.name}"
        return None

    @staticmethod
    async def _sleep(stop: asyncio.Event, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=seconds)
