"""``CauseLog``: log an API failure once per cause, not once per pod.

Under an API outage every pod's event post, status patch or binding fails for the same reason; a
line per pod would bury the one line that matters. ``CauseLog.report(cause, msg, ...)`` writes the
first occurrence of each ``cause`` (for example ``"post event: HTTP 503"``) at once; later ones are
counted and summarised at most once per ``interval`` seconds ("... 312 more times in the last 60 s").
The counts are also exported by the caller's metrics (``rest_client_requests_total``), so nothing
is lost by logging less.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

__all__ = ["CauseLog", "cause_of"]

MAX_CAUSES = 1000


def cause_of(err: BaseException) -> str:
    """A short, pod-independent cause: the HTTP status if there is one, else the error's type."""
    status = getattr(err, "status", 0)
    return f"HTTP {status}" if status else type(err).__name__


class CauseLog:
    def __init__(self, logger: logging.Logger, *, interval: float = 60.0,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.logger = logger
        self.interval = interval
        self.clock = clock
        self._lock = threading.Lock()
        self._seen: dict[str, tuple[float, int]] = {}     # cause -> (last line written, suppressed since)

    def report(self, cause: str, msg: str, *args: object) -> None:
        now = self.clock()
        with self._lock:
            hit = self._seen.get(cause)
            if hit is not None and now - hit[0] < self.interval:
                self._seen[cause] = (hit[0], hit[1] + 1)
                return
            suppressed = hit[1] if hit is not None else 0
            if len(self._seen) >= MAX_CAUSES and cause not in self._seen:
                self._seen.pop(next(iter(self._seen)))
            self._seen[cause] = (now, 0)
        if suppressed:
            self.logger.warning(msg + " (and %d more times for the same cause in the last %.0f s)",
                                *args, suppressed, self.interval)
        else:
            self.logger.warning(msg, *args)
