"""SchedulingThroughput exactly as scheduler_perf computes it, and quantiles of a histogram.

upstream's ``throughputCollector`` ticks every second and counts the measured pods bound so far:

* ticks before the first bound pod record nothing; the first tick that sees one is skipped (an
  outlier: sampling and pod creation start independently);
* a tick with no new pod records nothing and is merged into the next one, whose rate
  ``new / seconds since the last recorded tick`` is then recorded ``skipped + 1`` times;
* the collector stops when the last measured pod is bound; a final partial second is not sampled.

``samples`` replays that ticker over the exact bind timestamps, so no sampling thread competes with
the scheduler for the GIL and the ticks are exact. ``summary`` gives Average and
``sorted[ceil(n·p/100) − 1]`` for p = 50, 90, 95, 99.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence

__all__ = ["histogram_quantile", "samples", "summary"]

INTERVAL = 1.0


def samples(start: float, binds: Sequence[float], end: float | None = None) -> list[float]:
    """Throughput samples (pods/s) for measured pods bound at ``binds`` (monotonic seconds)."""
    ts = sorted(binds)
    if not ts:
        return []
    stop = ts[-1] if end is None else end
    out: list[float] = []
    started = False
    skipped = 0
    last_count = 0
    last_time = start
    k = 1
    while start + k * INTERVAL <= stop:
        now = start + k * INTERVAL
        k += 1
        count = bisect.bisect_right(ts, now)
        if count == 0:
            continue
        if not started:
            started = True
            last_count, last_time = count, now
            continue
        new = count - last_count
        if new == 0:
            skipped += 1
            continue
        rate = new / (now - last_time)
        out.extend([rate] * (skipped + 1))
        last_count, last_time, skipped = count, now, 0
    return out


def summary(values: Sequence[float]) -> dict[str, float]:
    """Average, P50, P90, P95, P99 (upstream's ``DataItem`` for SchedulingThroughput)."""
    if not values:
        return {"average": 0.0, "p50": 0.0, "p90": 0.0, "p95": 0.0, "p99": 0.0}
    s = sorted(values)
    n = len(s)

    def perc(p: int) -> float:
        return s[max(math.ceil(n * p / 100) - 1, 0)]

    return {"average": sum(s) / n, "p50": perc(50), "p90": perc(90), "p95": perc(95), "p99": perc(99)}


def histogram_quantile(q: float, bounds: Sequence[float], counts: Sequence[float]) -> float:
    """Prometheus' ``histogram_quantile`` over cumulative ``counts`` per upper bound (the last
    bound ``+Inf``): linear interpolation inside the bucket."""
    if not counts or counts[-1] == 0:
        return 0.0
    rank = q * counts[-1]
    i = bisect.bisect_left(counts, rank)
    if i >= len(bounds) - 1:
        return bounds[-2] if len(bounds) > 1 else 0.0
    lo = 0.0 if i == 0 else bounds[i - 1]
    below = 0.0 if i == 0 else counts[i - 1]
    inside = counts[i] - below
    return lo + (bounds[i] - lo) * ((rank - below) / inside if inside else 0.0)
