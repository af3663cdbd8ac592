"""``replacing``: the merge patch that stores a new last good spec over whichever one is stored."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.app.profile_status import replacing


def merge(target: Any, patch: Any) -> Any:
    """RFC 7386 MergePatch, as the API server applies a merge patch."""
    if not isinstance(patch, dict):
        return patch
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge(out.get(k), v)
    return out


OLD = {"schedulerName": "s", "pluginConfig": [{"name": "A"}], "plugins": {"score": {"enabled": [{"name": "X"}]},
                                                                      "filter": {"disabled": [{"name": "*"}]}}}


@pytest.mark.parametrize(("name", "stored", "written", "new"), [
    ("a field removed", OLD, None, {"schedulerName": "s", "plugins": OLD["plugins"]}),
    ("a nested key removed", OLD, None, {"schedulerName": "s", "plugins": {"score": {"enabled": []}}}),
    ("nothing stored yet", None, None, OLD),
    ("stored is stale, the last write is not", {"schedulerName": "s"}, OLD, {"schedulerName": "t"}),
    ("a list shrinks", OLD, OLD, {**OLD, "pluginConfig": []}),
])
def test_the_stored_spec_becomes_the_new_one_exactly(name: str, stored: Any, written: Any, new: Any) -> None:
    patch = replacing(new, stored, written)
    for before in (stored, written):
        if before is not None:
            assert merge(before, patch) == new, name
