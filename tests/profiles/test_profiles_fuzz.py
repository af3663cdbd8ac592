"""Fuzzed SchedulingProfile specs: every outcome is Accepted with a working profile, or Accepted=False
with a message naming the field; never a crash, never a half-applied profile."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from scheduler.service import SchedulerService
from tests.builders import MemoryClient

PLUGINS = ["NodeResourcesFit", "TaintToleration", "NodeAffinity", "PodTopologySpread", "InterPodAffinity",
           "ImageLocality", "NodeResourcesBalancedAllocation", "PrioritySort", "DefaultBinder", "NoSuchPlugin", "*"]
POINTS = ["queueSort", "preFilter", "filter", "postFilter", "preScore", "score", "reserve", "permit", "preBind",
          "bind", "postBind", "multiPoint", "bogusPoint"]
scalars = st.one_of(st.none(), st.booleans(), st.integers(-10**12, 10**12), st.floats(allow_nan=True),
                    st.text(max_size=8))
plugin = st.fixed_dictionaries({"name": st.sampled_from(PLUGINS)},
                               optional={"weight": st.one_of(st.integers(-5, 10**9), st.text(max_size=3))})
plugin_set = st.fixed_dictionaries({}, optional={"enabled": st.lists(plugin, max_size=3),
                                                 "disabled": st.lists(plugin, max_size=2)})
args = st.one_of(scalars, st.dictionaries(st.sampled_from(["scoringStrategy", "hardPodAffinityWeight",
                                                           "defaultingType", "addedAffinity", "ignoredResources"]),
                                          st.one_of(scalars, st.dictionaries(st.sampled_from(["type", "resources"]),
                                                                             scalars, max_size=2)), max_size=3))
spec = st.fixed_dictionaries({"schedulerName": st.one_of(st.just("s1"), st.just("taken"), scalars)}, optional={
    "percentageOfNodesToScore": scalars,
    "podInitialBackoffSeconds": scalars,
    "podMaxBackoffSeconds": scalars,
    "plugins": st.one_of(scalars, st.dictionaries(st.sampled_from(POINTS), plugin_set, max_size=3)),
    "pluginConfig": st.one_of(scalars, st.lists(st.fixed_dictionaries({"name": st.sampled_from(PLUGINS)},
                                                                       optional={"args": args}), max_size=3)),
    "unknownField": scalars,
})


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(spec)
def test_any_spec_is_accepted_or_rejected_with_a_field(raw: dict[str, Any]) -> None:
    s = SchedulerService(MemoryClient())
    assert s.on_profile("other", {"schedulerName": "taken"}).accepted
    assert s.on_profile("p", {"schedulerName": "good"}).accepted
    before = dict(s.profiles.current)
    st_ = s.on_profile("p", raw)
    if st_.accepted:
        fwk = s.profiles.current[st_.scheduler_name]
        assert fwk.queue_sort is not None and fwk.bind                      # a complete, working framework
        assert "good" not in s.profiles.current or st_.scheduler_name == "good"
    else:
        assert st_.message and ("spec" in st_.message or "plugin" in st_.message.lower()), st_.message
        assert dict(s.profiles.current) == before                           # the last good version serves
