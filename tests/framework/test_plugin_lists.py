"""A profile's typed plugin lists (``scheduler.framework.plugin_lists``): built and checked once by
``PluginLists.build``, frozen, and only stored by ``Framework``. The invariants' error messages are
upstream's and are tested through ``Framework`` in ``test_runtime.py``."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import pytest

from scheduler.framework import Framework, Plugin
from scheduler.framework.handle import Handle
from scheduler.framework.plugin_lists import PluginLists
from scheduler.plugins.registry import Registry
from scheduler.profiles import compile_profile, parse_spec
from tests.framework.test_runtime import Binder, Injected, QueueSort


def test_build_gives_one_tuple_per_point_in_order_and_is_frozen() -> None:
    a, b = Injected("A"), Injected("B")
    points: dict[str, Sequence[Plugin]] = {"queueSort": [QueueSort()], "bind": [Binder()],
                                           "filter": [b, a], "score": [a, b]}
    lists = PluginLists.build("p", points, {"A": 3})
    assert lists.filter == (b, a)
    assert lists.score == ((a, 3), (b, 1))
    assert [e.name for e in lists.filters] == ["B", "A"] and [e.weight for e in lists.scores] == [3, 1]
    assert lists.reserve == () and lists.by_name["A"] is a
    with pytest.raises(dataclasses.FrozenInstanceError):
        lists.filter = ()  # type: ignore[misc]


def test_a_compiled_profile_hands_its_lists_to_the_framework_which_stores_them() -> None:
    fwk = compile_profile(parse_spec({"schedulerName": "s"}), registry=Registry(), handle=Handle())
    assert isinstance(fwk.plugins, PluginLists)
    assert fwk.filter is fwk.plugins.filter and fwk.score is fwk.plugins.score
    again = Framework("s", fwk.plugins)
    assert again.plugins is fwk.plugins and again.queue_sort is fwk.queue_sort
