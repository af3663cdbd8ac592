"""``Pod.with_fields``: ``dataclasses.replace`` for the hot path, with the same result."""

from __future__ import annotations

import dataclasses

import pytest

from tests.builders import pod


def test_it_equals_dataclasses_replace_field_for_field() -> None:
    p = pod("a", labels={"x": "y"}, priority=3, spec={"nodeSelector": {"zone": "a"}})
    got, want = p.with_fields(node_name="n1", priority=7), dataclasses.replace(p, node_name="n1", priority=7)
    assert got is not p
    assert [getattr(got, f.name) for f in dataclasses.fields(got)] == \
        [getattr(want, f.name) for f in dataclasses.fields(want)]
    assert (p.node_name, p.priority) == ("", 3)       # the original is unchanged


def test_an_unknown_field_is_refused() -> None:
    with pytest.raises(TypeError, match="no field 'nodeName'"):
        pod("a").with_fields(nodeName="n1")


def test_copy_with_copies_every_slot() -> None:
    """The generated copier reads every slot (a slot left out would keep its default silently)."""
    from scheduler.model.pod import Pod, copy_with
    p = pod("a", labels={"x": "y"}, priority=3)
    got = copy_with(p, {})
    assert all(getattr(got, name) is getattr(p, name) for name in Pod.__slots__)
