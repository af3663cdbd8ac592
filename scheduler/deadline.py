"""``Deadline``: a binding cycle's whole-cycle deadline, which client-side throttling does not spend.

A binding cycle (PreBind, Bind, its Events) must not stay in flight for ever: a hung cycle keeps
its pod assumed. So ``SchedulerService.run_worker`` runs each one under a deadline and cancels it
when the deadline passes. But the API client holds each request back until its rate limiter has a
token (client-go's token bucket, ``clientConnection.qps``), and that wait grows with the queue: a
burst of 3,000 pods at 50 QPS makes the last Binding wait a minute for its token. Upstream's binding
goroutines have no whole-cycle deadline (each request waits in client-go's rate limiter as long as it
takes, then has its own timeout); this deadline guards only the time a cycle is *not* waiting for a
token, so a cycle queued behind the limiter is never cancelled for it, and a hung one still is.

The client says so itself. The cycle's ``Deadline`` is the current one in its task's context
(``Deadline.guard``); when a request of that task reserves a token it must wait for, the edge's
limiter calls ``throttled(seconds)`` before it waits, and the deadline moves out by that much
(waits that overlap, requests of one cycle sent at once, count once). Outside a binding cycle
(informers, leader election, the CLI) there is no current deadline and ``throttled`` does nothing.
The core never learns how a client throttles; the edge never learns what a binding cycle is.

::

    run_worker ─► Deadline(budget) ─► guard(cycle) ─► PreBind ─► client write ─► limiter: reserve a token
                    due (watchdog)      asyncio.timeout                            │ wait w > 0 s
                        ▲                   ▲                                       ▼
                        └── due += w ───────┴── reschedule(+w) ◄──────────── throttled(w)

The per-request timeout starts once the token is held (``kubeapi/client.py``) and is not affected.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["Deadline", "throttled"]

T = TypeVar("T")

_CURRENT: contextvars.ContextVar[Deadline | None] = contextvars.ContextVar("binding_deadline", default=None)


class Deadline:
    """A whole-cycle deadline: ``due`` (on ``clock``, ``time.monotonic``) is when the cycle is
    abandoned; the binding watchdog (``SchedulerService.binding_overdue``) reads it too."""

    __slots__ = ("_clock", "_throttled_until", "_timeout", "due")

    def __init__(self, seconds: float, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.due = clock() + seconds
        self._throttled_until = 0.0
        self._timeout: asyncio.Timeout | None = None

    def throttled(self, seconds: float) -> None:
        """A request of this cycle waits ``seconds`` from now for a rate-limit token: move the
        deadline out by the part of that wait no earlier wait already covers."""
        now = self._clock()
        end = now + seconds
        extra = end - max(now, self._throttled_until)
        if extra <= 0:
            return
        self._throttled_until = end
        self.due += extra
        timeout = self._timeout
        # Past its deadline the cycle is being cancelled (a plugin that swallowed the cancellation
        # may still send): too late to move it, and asyncio refuses to.
        if timeout is not None and not timeout.expired() and (when := timeout.when()) is not None:
            timeout.reschedule(when + extra)

    async def guard(self, aw: Awaitable[T]) -> T:
        """Await ``aw`` until the deadline: past it, ``aw`` is cancelled and ``TimeoutError``
        raised. Meanwhile this is the current deadline, for ``throttled``."""
        token = _CURRENT.set(self)
        try:
            async with asyncio.timeout(self.due - self._clock()) as self._timeout:
                return await aw
        finally:
            self._timeout = None
            _CURRENT.reset(token)


def throttled(seconds: float) -> None:
    """Called by a client that holds a request back ``seconds`` on its own side (a rate limiter)
    before it waits: the current binding cycle's deadline, if there is one, moves out by that."""
    deadline = _CURRENT.get()
    if deadline is not None:
        deadline.throttled(seconds)
