"""Deterministic fault injection: latency, error rates, dropped watches and forced 410s.

A ``Faults`` object is consulted on every request. Its random stream is seeded, so a run with the
same seed and the same request order fails the same requests. The command line takes one
``--fault`` per rule::

    latency=20ms                 every request waits 20 ms (also latency:VERB:RESOURCE=5ms)
    latency=200ms-500ms          every request waits a uniformly drawn 200 to 500 ms
    error:create:pods/binding=0.05/503     5 % of binding creations answer 503 (codes 500, 503, 429)
    error:*:*=0.01               1 % of all requests answer 500
    reset:create:pods/binding=0.5         half the binding creations: the connection is cut, no answer
    blackhole:create:pods/binding=1       every binding creation: no answer at all until the client
                                          gives up (the connection is held at most BLACKHOLE_SECONDS)
    drop-watch=0.001             each delivered watch event cuts its connection with this probability
    gone=0.1                     10 % of watches that name a resourceVersion answer 410 Gone

VERB is the API verb (get, list, watch, create, update, patch, delete, deletecollection) and
RESOURCE the plural with an optional ``/subresource``; ``*`` matches anything. 429 and 503 carry
``Retry-After: 1``, as a real server's priority-and-fairness and overload answers do.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field

__all__ = ["BLACKHOLE", "BLACKHOLE_SECONDS", "RESET", "ErrorRule", "FaultError", "Faults", "parse_fault"]

# Not HTTP codes: an ErrorRule with one of these cuts the connection, or never answers.
RESET, BLACKHOLE = -1, -2
BLACKHOLE_SECONDS = 120.0


class FaultError(ValueError):
    pass


@dataclass
class ErrorRule:
    verb: str
    resource: str
    rate: float
    code: int = 500

    def matches(self, verb: str, resource: str) -> bool:
        return self.verb in ("*", verb) and self.resource in ("*", resource)


@dataclass
class Faults:
    seed: int = 0
    latency: float = 0.0                                   # seconds, every request
    latency_max: float = 0.0                               # if above latency: uniform in [latency, max]
    latency_rules: list[tuple[str, str, float]] = field(default_factory=list)
    errors: list[ErrorRule] = field(default_factory=list)
    drop_watch: float = 0.0
    gone: float = 0.0

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    @property
    def active(self) -> bool:
        return bool(self.latency or self.latency_max or self.latency_rules or self.errors or self.drop_watch
                    or self.gone)

    def delay(self, verb: str, resource: str) -> float:
        extra = sum(s for v, r, s in self.latency_rules if v in ("*", verb) and r in ("*", resource))
        base = self.rng.uniform(self.latency, self.latency_max) if self.latency_max > self.latency else self.latency
        return base + extra

    def error(self, verb: str, resource: str) -> int | None:
        for rule in self.errors:
            if rule.matches(verb, resource) and self.rng.random() < rule.rate:
                return rule.code
        return None

    def drop(self) -> bool:
        return self.drop_watch > 0 and self.rng.random() < self.drop_watch

    def force_gone(self) -> bool:
        return self.gone > 0 and self.rng.random() < self.gone


def _seconds(text: str) -> float:
    m = re.fullmatch(r"([0-9.]+)(ms|s)?", text.strip())
    if not m:
        raise FaultError(f"invalid duration {text!r} (e.g. 20ms, 0.5s)")
    return float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)


def _rate(text: str) -> float:
    try:
        r = float(text)
    except ValueError:
        raise FaultError(f"invalid rate {text!r}: a number between 0 and 1") from None
    if not 0 <= r <= 1:
        raise FaultError(f"invalid rate {text!r}: a number between 0 and 1")
    return r


def parse_fault(faults: Faults, text: str) -> None:
    """Add one ``--fault`` rule to ``faults``; FaultError explains a malformed rule."""
    if "=" not in text:
        raise FaultError(f"invalid fault {text!r}: expected NAME=VALUE, e.g. latency=20ms")
    name, value = text.split("=", 1)
    parts = name.split(":")
    if parts[0] == "latency":
        if len(parts) == 1:
            low, sep, high = value.partition("-")
            faults.latency = _seconds(low)
            if sep:
                faults.latency_max = _seconds(high)
                if faults.latency_max < faults.latency:
                    raise FaultError(f"invalid fault {text!r}: the range must go up, e.g. 200ms-500ms")
        elif len(parts) == 3:
            faults.latency_rules.append((parts[1], parts[2], _seconds(value)))
        else:
            raise FaultError(f"invalid fault {text!r}: latency=MS or latency:VERB:RESOURCE=MS")
    elif parts[0] == "error":
        if len(parts) != 3:
            raise FaultError(f"invalid fault {text!r}: error:VERB:RESOURCE=RATE[/CODE]")
        rate, _, code = value.partition("/")
        c = int(code) if code.isdigit() else 500
        if code and c not in (429, 500, 503):
            raise FaultError(f"invalid fault {text!r}: the code must be 500, 503 or 429")
        faults.errors.append(ErrorRule(parts[1], parts[2], _rate(rate), c))
    elif parts[0] in ("reset", "blackhole"):
        if len(parts) != 3:
            raise FaultError(f"invalid fault {text!r}: {parts[0]}:VERB:RESOURCE=RATE")
        faults.errors.append(ErrorRule(parts[1], parts[2], _rate(value), RESET if parts[0] == "reset" else BLACKHOLE))
    elif parts[0] == "drop-watch" and len(parts) == 1:
        faults.drop_watch = _rate(value)
    elif parts[0] == "gone" and len(parts) == 1:
        faults.gone = _rate(value)
    else:
        raise FaultError(f"unknown fault {name!r}: one of latency, error, reset, blackhole, drop-watch, gone")
