"""``ExplanationController``: the leading scheduler answers SchedulingExplanations from its live state.

A SchedulingExplanation (``scheduler/profiles/explanation_crd.py``) asks "why is this pod (or would
this pod be) placed where it is". Every replica's worker loop runs an informer of the kind (the
runtime's own, beside the scheduler's kinds), which keeps each object in ``objects`` and puts the
key of one whose ``metadata.generation`` is not yet ``status.observedGeneration`` on a queue of keys
(a key is queued at most once, so the queue never holds more than the objects there are). Only the
leader answers (it holds the live state; a standby's queue waits for its turn):

- ``podName``: the pod is read from the API server, in the explanation's own namespace only. A
  bound pod gets the scheduler's own decision record (``DecisionStore``) when it has one for that
  node (``source: record``); otherwise, and for a pending pod, the answer is computed now over the
  live cache (``source: computed``) with ``Scheduler.explain``, the code path ``explain_object``
  runs, and the profile ``explain.framework_for`` picks (``--profile``'s rules: a CR name, a
  shadow's included, or a schedulerName). A pod the cache holds (bound or assumed) is taken off its
  node in a ``WhatIf`` for the duration and put back, under the cache's lock: the live cache ends
  as it was.
- ``template``: a PodTemplateSpec explained as a pod that does not exist, in the explanation's
  namespace (a template naming another namespace is refused), with the scheduler's parsing and
  defaults but no admission (no dry-run create: the scheduler may not create pods).

For a member of a gang PodGroup (``GenericWorkload`` on), ``status.group`` is the group's answer
(``explain_group.py``: the PodGroup cycle run hypothetically over the live cache), and a pending
member's ``verdict``, ``node`` and ``message`` are the group's: it is placed with its group or not
at all.

``status`` is the decision record's JSON (``decision``, as ``explain --output json`` prints it),
with ``pod``, ``node``, ``profile`` and ``verdict`` (``Bound``, ``Schedulable``, ``Unschedulable``
or ``Error``) for the printer columns, ``observedGeneration``, ``finishedAt`` and an ``Explained``
condition. A missing pod, an unknown profile or a bad template is ``verdict: Error`` with the
condition's message; no object can stop the loop.

Cost is bounded: explanations are started at most ``qps`` per second (a token bucket of ``burst``),
at most ``in_flight`` at once (the pod read and the status write are I/O; the computation itself is
synchronous on the worker loop, so one at a time, between scheduling cycles, each as long as one
unsampled scheduling cycle). Excess waits in the queue; the scheduling worker never waits for it.

Objects expire: ``spec.ttlSecondsAfterFinished`` (default ``DEFAULT_TTL_SECONDS``) after
``finishedAt``, the leader deletes them (checked every ``SWEEP_PERIOD``).
"""

from __future__ import annotations

import asyncio
import calendar
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from typing import Any

from scheduler.app.explain import HYPOTHETICAL_UID, ExplainError, framework_for
from scheduler.app.explain_group import group_answer
from scheduler.app.informers import object_key
from scheduler.errors import ClientError, ParseError
from scheduler.framework.decision import DEFAULT_TOP_NODES
from scheduler.kubeapi import KubeClient
from scheduler.model import parse_pod
from scheduler.profiles.explanation_crd import API_VERSION, DEFAULT_TTL_SECONDS, KIND, explanations_path
from scheduler.service import SchedulerService

__all__ = ["DEFAULT_BURST", "DEFAULT_IN_FLIGHT", "DEFAULT_QPS", "ExplanationController", "NotAnswered",
           "request_explanation"]

log = logging.getLogger("kopf_scheduler")
Obj = dict[str, Any]

DEFAULT_QPS, DEFAULT_BURST, DEFAULT_IN_FLIGHT = 5.0, 10, 4
SWEEP_PERIOD = 1.0
CONDITION = "Explained"


def _rfc3339(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))


def _parse_rfc3339(s: str) -> float | None:
    try:
        return float(calendar.timegm(time.strptime(s[:19], "%Y-%m-%dT%H:%M:%S")))
    except (TypeError, ValueError):
        return None


class _Problem(Exception):
    """An explanation that cannot be answered: its condition's reason and message."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason, self.message = reason, message


class TokenBucket:
    """At most ``qps`` per second, ``burst`` at once; ``clock`` injected for tests."""

    def __init__(self, qps: float, burst: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.qps, self.burst, self.clock = qps, max(1, burst), clock
        self.tokens, self.last = float(self.burst), clock()

    def delay(self) -> float:
        """Take a token: the seconds to wait before using it (0 when one was there)."""
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1
        return 0.0 if self.tokens >= 0 else -self.tokens / self.qps


class ExplanationController:
    """The SchedulingExplanations' store, queue and answers (see the module docstring)."""

    def __init__(self, service: SchedulerService, api: KubeClient, *, qps: float = DEFAULT_QPS,
                 burst: int = DEFAULT_BURST, in_flight: int = DEFAULT_IN_FLIGHT,
                 clock: Callable[[], float] = time.time) -> None:
        self.service, self.api = service, api
        self.limiter = TokenBucket(qps, burst)
        self.in_flight = max(1, in_flight)
        self.clock = clock
        self.objects: dict[str, Obj] = {}
        self.queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._deleting: set[str] = set()
        self._wake = asyncio.Event()
        self._tasks: set[asyncio.Task[None]] = set()
        # The most explanations ever being answered at once (a test reads it: the bound holds).
        self.running, self.max_running = 0, 0
        self.beat: Callable[[float], None] = lambda _: None

    # ---- the informer's handler (on the worker loop) --------------------------------------------
    def on_event(self, event: str, body: Obj) -> None:
        key = object_key(body)
        if event == "DELETED":
            self.objects.pop(key, None)
            self._deleting.discard(key)
            return
        self.objects[key] = body
        if self._needs_answer(body):
            self.enqueue(key)

    def enqueue(self, key: str) -> None:
        if key not in self._queued:
            self._queued.add(key)
            self.queue.append(key)
            self._wake.set()

    @staticmethod
    def _needs_answer(body: Obj) -> bool:
        meta, status = body.get("metadata") or {}, body.get("status") or {}
        return bool(status.get("observedGeneration") != meta.get("generation"))

    def requeue_all(self) -> None:
        """Queue every unanswered object again (a replica that starts leading)."""
        for key, body in list(self.objects.items()):
            if self._needs_answer(body):
                self.enqueue(key)

    # ---- the loop -------------------------------------------------------------------------------
    async def run(self, stop: asyncio.Event) -> None:
        """Answer queued explanations (leader only) and delete expired ones, until ``stop``."""
        slots = asyncio.Semaphore(self.in_flight)
        last_sweep = 0.0
        try:
            while not stop.is_set():
                self.beat(time.monotonic())
                if not self.service.is_leader():
                    await asyncio.sleep(0.1)
                    continue
                if time.monotonic() - last_sweep >= SWEEP_PERIOD:
                    last_sweep = time.monotonic()
                    self.sweep()
                if not self.queue:
                    self._wake.clear()
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(self._wake.wait(), timeout=SWEEP_PERIOD)
                    continue
                await slots.acquire()
                delay = self.limiter.delay()
                if delay > 0:
                    await asyncio.sleep(delay)
                key = self.queue.popleft()
                self._queued.discard(key)
                task = asyncio.ensure_future(self._answer_key(key))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
                task.add_done_callback(lambda _: slots.release())
        finally:
            for t in list(self._tasks):
                t.cancel()

    async def _answer_key(self, key: str) -> None:
        body = self.objects.get(key)
        if body is None or not self._needs_answer(body) or not self.service.is_leader():
            return
        self.running += 1
        self.max_running = max(self.max_running, self.running)
        try:
            status = await self.answer(body)
            await self._write_status(body, status)
        except asyncio.CancelledError:
            raise
        except Exception:                  # never the loop's end: the next event queues it again
            log.exception("SchedulingExplanation %s could not be answered", key)
        finally:
            self.running -= 1

    async def _write_status(self, body: Obj, status: Obj) -> None:
        meta = body.get("metadata") or {}
        ns, name = str(meta.get("namespace")), str(meta.get("name"))
        # A PUT of the whole status (conditional on the version answered): a merge patch would keep
        # keys of an earlier answer (a node no longer filtered) in the new one.
        new = {**body, "status": status}
        try:
            await self.api.request("PUT", explanations_path(ns, name, "status"), new)
        except ClientError as e:
            if e.status in (404, 409):     # deleted, or changed meanwhile: its next event queues it
                return
            raise

    # ---- answers --------------------------------------------------------------------------------
    async def answer(self, body: Obj) -> Obj:
        """The status for ``body``: an answer, or an ``Error`` verdict saying why there is none."""
        meta, spec = body.get("metadata") or {}, body.get("spec") or {}
        ns, generation = str(meta.get("namespace") or "default"), meta.get("generation")
        now = self.clock()
        try:
            out = await self._explain(ns, str(meta.get("name")), spec)
            reason, message = "Explained", out.pop("message")
            ok = True
        except _Problem as e:
            out, reason, message, ok = {"verdict": "Error"}, e.reason, e.message, False
        except ExplainError as e:
            out, reason, message, ok = {"verdict": "Error"}, "UnknownProfile", str(e), False
        except Exception as e:              # whatever it is, the user reads it, and the loop lives on
            log.exception("SchedulingExplanation %s/%s failed", ns, meta.get("name"))
            out, reason, message, ok = {"verdict": "Error"}, "InternalError", f"{type(e).__name__}: {e}", False
        return {**out, "observedGeneration": generation, "finishedAt": _rfc3339(now),
                **({} if ok else {"message": message}),
                "conditions": [{"type": CONDITION, "status": "True" if ok else "False", "reason": reason,
                                "message": message, "observedGeneration": generation,
                                "lastTransitionTime": _rfc3339(now)}]}

    async def _explain(self, ns: str, name: str, spec: Obj) -> Obj:
        profile = spec.get("profile")
        if profile is not None and not isinstance(profile, str):
            raise _Problem("InvalidSpec", "spec.profile: expected a string")
        pod_name, template = spec.get("podName"), spec.get("template")
        if (pod_name is None) == (template is None):
            raise _Problem("InvalidSpec", "give exactly one of spec.podName and spec.template")
        if pod_name is not None:
            if not isinstance(pod_name, str) or not pod_name:
                raise _Problem("InvalidSpec", "spec.podName: expected a pod's name")
            try:
                pod_body: Obj = await self.api.request("GET", f"/api/v1/namespaces/{ns}/pods/{pod_name}")
            except ClientError as e:
                if e.status == 404:
                    raise _Problem("PodNotFound", f'pods "{pod_name}" not found in namespace {ns}') from None
                raise _Problem("PodNotReadable", f"pod {ns}/{pod_name}: {e}") from None
            return self._explain_pod(pod_body, profile, hypothetical=False)
        return self._explain_pod(self._template_pod(ns, name, template), profile, hypothetical=True)

    @staticmethod
    def _template_pod(ns: str, name: str, template: Any) -> Obj:
        if not isinstance(template, dict):
            raise _Problem("InvalidTemplate", "spec.template: expected a pod template (metadata, spec)")
        tmeta = template.get("metadata") or {}
        if not isinstance(tmeta, dict):
            raise _Problem("InvalidTemplate", "spec.template.metadata: expected an object")
        if tmeta.get("namespace") not in (None, ns):
            raise _Problem("InvalidTemplate", f"spec.template.metadata.namespace {tmeta.get('namespace')!r}: an "
                                              f"explanation only explains pods of its own namespace ({ns})")
        tspec = template.get("spec")
        if not isinstance(tspec, dict):
            raise _Problem("InvalidTemplate", "spec.template.spec: expected a pod spec")
        if tspec.get("nodeName"):
            raise _Problem("InvalidTemplate", "spec.template.spec.nodeName: a pod that names its node is placed "
                                              "by no scheduler")
        return {"apiVersion": "v1", "kind": "Pod",
                "metadata": {**tmeta, "namespace": ns, "name": str(tmeta.get("name") or name),
                             "uid": f"{HYPOTHETICAL_UID}-{ns}-{name}"},
                "spec": tspec, "status": {"phase": "Pending"}}

    def _explain_pod(self, body: Obj, profile: str | None, *, hypothetical: bool) -> Obj:
        service = self.service
        meta, spec = body.get("metadata") or {}, body.get("spec") or {}
        key = f"{meta.get('namespace')}/{meta.get('name')}"
        bound = str(spec.get("nodeName") or "")
        try:
            target = parse_pod({**body, "spec": {**spec, "nodeName": None}}, service.request_options)
        except ParseError as e:
            raise _Problem("InvalidTemplate" if hypothetical else "PodNotReadable",
                           f"the pod cannot be read: {e}") from None
        if bound and profile is None:
            record = service.decisions.get(key)
            if record is not None and record.node == bound:
                d = record.to_json()
                answer: Obj = {"pod": key, "node": bound, "profile": d["profile"], "verdict": "Bound",
                               "source": "record", "decision": d,
                               "message": f"bound to {bound}: the scheduler's own record of its decision"}
                own = service.profiles.for_pod(target)
                group = group_answer(service, own, target) if own is not None else None
                return {**answer, "group": group} if group is not None else answer
        fwk, shadow = framework_for(service, target, profile)
        # A gang member's group, as the PodGroup cycle would place it now (explain_group.py).
        group = group_answer(service, fwk, target)
        cache = service.cache
        with cache.lock:
            placed = cache.get_pod(target.uid)
            with cache.what_if() as w:
                if placed is not None and placed.node_name:
                    w.remove(placed, placed.node_name)      # its own place free, as when it was scheduled
                record, _ = service.scheduler.explain(fwk, target,
                                                      top_nodes=service.decisions.top_nodes or DEFAULT_TOP_NODES)
        d = record.to_json()
        out: Obj = {"pod": key, "profile": d["profile"], "source": "computed", "decision": d}
        if bound or d["node"]:            # absent when none, so kubectl's column reads <none>
            out["node"] = bound or d["node"]
        if shadow is not None:
            out["shadow"] = {"profile": shadow.cr_name, "shadowOf": shadow.shadow_of}
        if group is not None:
            out["group"] = group
        if bound:
            out["verdict"] = "Bound"
            out["message"] = (f"bound to {bound}; the scheduler has no record of that decision, so this is its "
                              f"profile run now over the live state (the cluster may have changed since)")
        elif d["node"]:
            out["verdict"], out["message"] = "Schedulable", f"would be placed on {d['node']}"
        else:
            out["verdict"] = "Unschedulable"
            # The FitError's wording (framework/types.go: "0/N nodes are available: ...").
            reasons = ", ".join(f"{n} {r}" for r, n in sorted(d["filtered"].items(), key=lambda x: (-x[1], x[0])))
            out["message"] = f"0/{d['evaluatedNodes']} nodes are available: {reasons or 'no node fits'}."
        if group is not None and not bound:
            # A gang member is placed with its group or not at all: the group's verdict is its own.
            mine = next((m for m in group["members"] if m["pod"] == key), None)
            if group["fits"] and mine is not None and mine["node"]:
                out["node"], out["verdict"] = mine["node"], "Schedulable"
                out["message"] = f"would be placed on {mine['node']} with its pod group: {group['message']}"
            else:
                out.pop("node", None)
                out["verdict"], out["message"] = "Unschedulable", group["waiting"] or group["message"]
        return out

    # ---- expiry ---------------------------------------------------------------------------------
    def sweep(self) -> None:
        """Delete every answered explanation past its TTL (the leader only calls it)."""
        now = self.clock()
        for key, body in list(self.objects.items()):
            if key in self._deleting:
                continue
            status = body.get("status") or {}
            finished = _parse_rfc3339(str(status.get("finishedAt") or ""))
            if finished is None:
                continue
            ttl = (body.get("spec") or {}).get("ttlSecondsAfterFinished")
            ttl = ttl if isinstance(ttl, int) and ttl >= 0 else DEFAULT_TTL_SECONDS
            if finished + ttl <= now:
                self._deleting.add(key)
                task = asyncio.ensure_future(self._delete(key, body))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    async def _delete(self, key: str, body: Obj) -> None:
        meta = body.get("metadata") or {}
        try:
            await self.api.request("DELETE", explanations_path(str(meta.get("namespace")), str(meta.get("name"))),
                                   {"kind": "DeleteOptions", "apiVersion": "v1",
                                    "preconditions": {"uid": meta.get("uid")}})
        except ClientError as e:
            if e.status not in (404, 409):
                log.warning("cannot delete the expired SchedulingExplanation %s: %s", key, e)
                self._deleting.discard(key)             # tried again at the next sweep


# ---- the client side: ``kopf-scheduler explain`` -------------------------------------------------
class NotAnswered(Exception):
    """No SchedulingExplanation answer: the CRD is not served, or no leader answered in time."""


async def request_explanation(api: KubeClient, namespace: str, *, pod_name: str | None = None,
                              template: Obj | None = None, profile: str | None = None,
                              timeout: float = 30.0, poll: float = 0.2) -> Obj:
    """Create a SchedulingExplanation, wait for the leader's answer, delete it, and return its
    status. Only the user's own credentials and the API server are involved: no proxy, no token
    sent anywhere else. Raises ``NotAnswered`` when the kind is not served or no answer came within
    ``timeout`` (the caller falls back to explaining locally)."""
    spec: Obj = {"ttlSecondsAfterFinished": max(60, int(timeout) * 2)}   # a crashed caller's is cleaned up
    if pod_name is not None:
        spec["podName"] = pod_name
    if template is not None:
        spec["template"] = template
    if profile is not None:
        spec["profile"] = profile
    body = {"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"generateName": f"explain-{(pod_name or 'pod')[:40]}-"}, "spec": spec}
    try:
        created: Obj = await api.request("POST", explanations_path(namespace), body)
    except ClientError as e:
        if e.status == 404:
            raise NotAnswered("the SchedulingExplanation CRD is not installed") from None
        raise
    name = str(created["metadata"]["name"])
    deadline = time.monotonic() + timeout
    try:
        while True:
            got: Obj = await api.request("GET", explanations_path(namespace, name))
            status = got.get("status") or {}
            if status.get("observedGeneration") == got["metadata"].get("generation"):
                return status
            if time.monotonic() >= deadline:
                raise NotAnswered(f"no scheduler answered SchedulingExplanation {namespace}/{name} within "
                                  f"{timeout:.0f} s (is a leader running?)")
            await asyncio.sleep(poll)
    finally:
        with contextlib.suppress(ClientError):
            await api.request("DELETE", explanations_path(namespace, name))
