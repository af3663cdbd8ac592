"""The lean counters and histograms expose what prometheus_client's would, sample for sample
(scheduler/lean_metrics.py): the same text on ``/metrics`` for the same observations."""

from __future__ import annotations

import math
import random
import threading

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from scheduler.lean_metrics import LeanCounter, LeanHistogram
from scheduler.metrics import exponential_buckets

BUCKETS = exponential_buckets(0.0001, 2, 12)


def _pair() -> tuple[CollectorRegistry, CollectorRegistry]:
    return CollectorRegistry(), CollectorRegistry()


@pytest.mark.parametrize("seed", range(5))
def test_the_exposition_is_prometheus_clients(seed: int) -> None:
    rng = random.Random(seed)
    old, new = _pair()
    ref = (Counter("c", "help c", ["a", "b"], registry=old), Counter("solo", "help s", registry=old),
           Histogram("h", "help h", ["a"], buckets=BUCKETS, registry=old),
           Histogram("hs", "help hs", buckets=[1, 2, 4], registry=old))
    lean = (LeanCounter("c", "help c", ["a", "b"], registry=new), LeanCounter("solo", "help s", registry=new),
            LeanHistogram("h", "help h", ["a"], buckets=BUCKETS, registry=new),
            LeanHistogram("hs", "help hs", buckets=[1, 2, 4], registry=new))
    for _ in range(500):
        a, b = rng.choice("xyz"), rng.choice("pq")
        n = rng.choice([1, 2, 0.5])
        v = rng.choice([rng.random() * 0.5, 0.0001 * 2 ** rng.randrange(12), 7.0, 0.0])   # on a bound, past all
        for c, s, h, hs in (ref, lean):
            c.labels(a, b).inc(n)
            s.inc()
            h.labels(a).observe(v)
            hs.observe(v * 10)
    assert generate_latest(new).decode() == generate_latest(old).decode()


def test_an_unlabelled_metric_is_exposed_at_zero_before_its_first_sample() -> None:
    old, new = _pair()
    Counter("c", "h", registry=old), Histogram("hs", "h", buckets=[1, 2], registry=old)
    LeanCounter("c", "h", registry=new), LeanHistogram("hs", "h", buckets=[1, 2], registry=new)
    assert generate_latest(new) == generate_latest(old)
    assert b"c_total 0.0" in generate_latest(new)


def test_misuse_is_refused_as_prometheus_client_refuses_it() -> None:
    r = CollectorRegistry()
    c = LeanCounter("c", "h", ["a"], registry=r)
    with pytest.raises(ValueError, match="Incorrect label count"):
        c.labels("x", "y")
    with pytest.raises(ValueError, match="non-negative"):
        c.labels("x").inc(-1)
    with pytest.raises(ValueError):
        c.inc()                         # labelled: needs .labels() first
    with pytest.raises(ValueError):
        LeanCounter("c", "again", registry=r)     # a duplicate name in one registry
    with pytest.raises(ValueError, match="sorted"):
        LeanHistogram("h", "h", buckets=[2, 1])


def test_a_nan_observation_adds_to_the_sum_and_to_no_bucket() -> None:
    old, new = _pair()
    Histogram("h", "h", buckets=[1], registry=old).observe(math.nan)
    LeanHistogram("h", "h", buckets=[1], registry=new).observe(math.nan)
    assert new.get_sample_value("h_count") == old.get_sample_value("h_count") == 0
    assert math.isnan(new.get_sample_value("h_sum") or 0.0)


def test_no_increment_is_lost_across_threads() -> None:
    c = LeanCounter("c", "h", ["a"])
    h = LeanHistogram("h", "h", ["a"], buckets=[1])

    def work() -> None:
        for _ in range(20_000):
            c.labels("x").inc()
            h.labels("x").observe(0.5)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert c.labels("x").get() == 80_000
    assert h.labels("x").snapshot() == ([80_000, 0], 40_000.0)


def test_a_bad_sample_raises_and_leaves_the_metric_usable() -> None:
    """What is not a number raises at the call, as prometheus_client's does, and never leaves a
    child's lock held (the next sample and the scrape still go through)."""
    r = CollectorRegistry()
    c, h = LeanCounter("c", "h", registry=r), LeanHistogram("h", "h", buckets=[1], registry=r)
    with pytest.raises(TypeError):
        c.inc("x")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        h.observe(None)  # type: ignore[arg-type]
    c.inc()
    h.observe(0.5)
    assert r.get_sample_value("c_total") == 1 and r.get_sample_value("h_count") == 1
