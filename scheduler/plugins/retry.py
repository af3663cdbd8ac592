"""client-go's ``util/retry``: ``RetryOnConflict`` with ``DefaultRetry``, for the writes plugins make
through the client protocol (DynamicResources' PreBind and Unreserve).

``retry_on_conflict`` runs an attempt until it returns; an attempt that raises the conflict type
given (a 409, or the caller's wrapping of one) is run again after ``interval``, up to ``steps``
attempts, and the last conflict is raised. Any other exception ends it at once. As with upstream's
closures, the attempt refetches the object itself when it is not the first (it is told its
number): only it knows which object and how to wrap a failed read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

__all__ = ["RETRY_INTERVAL", "RETRY_STEPS", "retry_on_conflict"]

T = TypeVar("T")

# retry.DefaultRetry: 5 attempts, 10 ms apart (factor 1.0, jitter 0.1).
RETRY_STEPS = 5
RETRY_INTERVAL = 0.010


async def retry_on_conflict(attempt: Callable[[int], Awaitable[T]],
                            conflict: type[BaseException] | tuple[type[BaseException], ...], *,
                            steps: int = RETRY_STEPS, interval: float = RETRY_INTERVAL) -> T:
    """``retry.RetryOnConflict(DefaultRetry, fn)``: ``attempt(0)``, then, after each ``conflict``,
    ``attempt(1)``, ... ``attempt(steps - 1)``, ``interval`` apart; the last conflict is raised."""
    last: BaseException | None = None
    for n in range(steps):
        if n:
            await asyncio.sleep(interval)
        try:
            return await attempt(n)
        except conflict as e:
            last = e
    assert last is not None
    raise last
