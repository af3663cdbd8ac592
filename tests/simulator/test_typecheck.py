"""``typecheck.check_types``: the decoding check, and its memo of clean top-level subtrees."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.simulator import typecheck
from scheduler.simulator.apierrors import ApiError

POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
                       "spec": {"containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": "1"}}}],
                                "nodeSelector": {"zone": "a"}, "priority": 3}}


def _error(body: dict[str, Any]) -> str | None:
    try:
        typecheck.check_types(body, "", "v1", "Pod")
    except ApiError as e:
        return str(e.body()["message"])
    return None


def _with(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    body = copy.deepcopy(POD)
    target = body
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    return body


@pytest.mark.parametrize(("name", "path", "value", "message"), [
    ("nodeSelector a string, the rest of the spec as before", ("spec", "nodeSelector"), "ssd",
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field '
     "PodSpec.spec.nodeSelector of type map[string]string"),
    ("priority a fraction", ("spec", "priority"), 1.5,
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number 1.5 into Go struct field '
     "PodSpec.spec.priority of type int32"),
    ("labels a list, the spec clean and seen", ("metadata", "labels"), ["a"],
     'Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal array into Go struct field '
     "ObjectMeta.metadata.labels of type map[string]string"),
])
def test_a_seen_clean_spec_never_hides_an_error(name: str, path: tuple[str, ...], value: Any, message: str) -> None:
    """The first body is clean and remembered; a body with one bad field is refused with the same
    message as when nothing was remembered, and refused again (errors are never remembered)."""
    assert _error(copy.deepcopy(POD)) is None
    bad = _with(path, value)
    typecheck._CLEAN.clear()
    fresh = _error(copy.deepcopy(bad))
    assert _error(copy.deepcopy(POD)) is None
    assert fresh == message, name
    assert _error(copy.deepcopy(bad)) == message and _error(copy.deepcopy(bad)) == message, name


def test_clean_subtrees_are_remembered_and_bounded() -> None:
    typecheck._CLEAN.clear()
    assert _error(copy.deepcopy(POD)) is None
    assert len(typecheck._CLEAN) == 2                  # metadata and spec
    for i in range(typecheck._CLEAN_MAX + 10):
        assert _error(_with(("metadata", "name"), f"p{i}")) is None
    assert len(typecheck._CLEAN) <= typecheck._CLEAN_MAX


def test_a_value_orjson_cannot_encode_is_walked() -> None:
    """A YAML body can hold what JSON cannot (a huge integer): it is walked, never remembered."""
    typecheck._CLEAN.clear()
    body = _with(("spec", "priority"), 2**70)
    assert _error(body) == ('Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number '
                            f"{2**70} into Go struct field PodSpec.spec.priority of type int32")
    assert not any(b"priority" in k[1] for k in typecheck._CLEAN)


def _verdict(fn: Any, value: str, layout: tuple[str, ...]) -> str | None:
    try:
        fn(value, layout)
    except typecheck._TimeError as e:
        return str(e)
    return None


@pytest.mark.parametrize("layout", [typecheck._RFC3339, typecheck._RFC3339_MICRO], ids=["Time", "MicroTime"])
def test_time_fast_path_gives_the_element_walks_verdict(layout: tuple[str, ...]) -> None:
    """``_parse_time``'s one-match fast path accepts exactly what ``time.Parse``'s element walk
    (``_parse_time_slow``) accepts, and a refused value gets the walk's own message."""
    import random
    rng = random.Random(7)
    base = ["2026-12-04T17:11:51Z", "2026-12-04T17:11:51.123456Z", "2026-12-04T17:11:51.Z",
            "2026-12-04T17:11:51,5+01:00", "2026-02-31T23:59:59-07:30", "0000-01-01T00:00:00Z",
            "2026-13-04T17:11:51Z", "2026-12-00T17:11:51Z", "2026-12-04T24:11:51Z", "2026-12-04T17:60:51Z",
            "2026-12-04T17:11:60Z", "2026-12-04 17:11:51Z", "2026-12-04T17:11:51", "2026-12-04T17:11:51.1234567Z",
            "2026-12-04T17:11:51z", "2026-12-04T17:11:51+0100", "２026-12-04T17:11:51Z", "2026-1²-04T17:11:51Z",
            "2026-12-04T17:11:51.123456Zx", "2026-12-04T17:11:51.000001+05:30", "2026-01-31T00:00:00.999999Z",
            "1999-07-15T08:30:00.500000-11:00", ""]
    alphabet = "0123456789-:TZ.,+ z²"
    values = list(base)
    for _ in range(3000):
        v = list(rng.choice(base) or "2026-12-04T17:11:51Z")
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(v) + 1)
            op = rng.random()
            if op < 0.4 and i < len(v):
                v[i] = rng.choice(alphabet)
            elif op < 0.7:
                v.insert(i, rng.choice(alphabet))
            elif i < len(v):
                del v[i]
        values.append("".join(v))
    accepted = 0
    for v in values:
        slow = _verdict(typecheck._parse_time_slow, v, layout)
        assert _verdict(typecheck._parse_time, v, layout) == slow, v
        accepted += slow is None
    assert 20 < accepted < len(values) - 100           # both verdicts are well represented
