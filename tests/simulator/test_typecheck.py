"""``typecheck.check_types``: the decoding check, and its memo of clean top-level subtrees."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.simulator import typecheck
from scheduler.simulator.admission import ApiError

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
