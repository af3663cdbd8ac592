import itertools
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, Field

from scheduler.errors import ProfileError
from scheduler.framework.handle import Handle
from scheduler.framework.runtime import Framework
from scheduler.framework.types import QueuedPodInfo
from scheduler.plugins.registry import PluginSpec, Registry
from scheduler.profiles import ProfileMap, compile_profile, crd, parse_spec
from scheduler.profiles.profile_map import rank
from scheduler.service import SchedulerService
from tests.builders import MemoryClient

REPO = Path(__file__).resolve().parents[2]


def compiled(spec: dict) -> dict:
    fwk = compile_profile(parse_spec({"schedulerName": "s", **spec}), registry=Registry(), handle=Handle())
    return fwk.effective_plugins()


def names(points: dict, point: str) -> list[str]:
    return [p["name"] for p in points.get(point, [])]


def test_defaults_match_upstream() -> None:
    p = compiled({})
    assert names(p, "queueSort") == ["PrioritySort"]
    assert names(p, "preEnqueue") == ["SchedulingGates", "DynamicResources", "DefaultPreemption"]
    assert names(p, "postFilter") == ["DynamicResources", "DefaultPreemption"]
    assert names(p, "filter") == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                  "NodeResourcesFit", "VolumeRestrictions", "NodeVolumeLimits", "VolumeBinding",
                                  "VolumeZone", "PodTopologySpread", "InterPodAffinity", "DynamicResources",
                                  "NodeDeclaredFeatures"]
    assert names(p, "reserve") == names(p, "preBind") == ["VolumeBinding", "DynamicResources"]
    assert {s["name"]: s["weight"] for s in p["score"]} == {
        "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "VolumeBinding": 1, "PodTopologySpread": 2,
        "InterPodAffinity": 2, "DynamicResources": 1, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
    assert names(p, "bind") == ["DefaultBinder"]


def test_disable_and_reweight() -> None:
    p = compiled({"plugins": {"score": {"disabled": [{"name": "ImageLocality"}],
                                        "enabled": [{"name": "NodeResourcesFit", "weight": 5}]}}})
    weights = {s["name"]: s["weight"] for s in p["score"]}
    assert "ImageLocality" not in weights and weights["NodeResourcesFit"] == 5
    assert names(p, "score")[0] == "NodeResourcesFit"  # the explicit override comes first, as upstream orders


def test_star_disables_all_defaults_at_a_point() -> None:
    p = compiled({"plugins": {"score": {"disabled": [{"name": "*"}],
                                        "enabled": [{"name": "NodeResourcesFit", "weight": 1}]}}})
    assert names(p, "score") == ["NodeResourcesFit"]
    assert "TaintToleration" in names(p, "filter")


def test_zero_weight_means_one() -> None:
    p = compiled({"plugins": {"score": {"enabled": [{"name": "ImageLocality", "weight": 0}]}}})
    assert {s["name"]: s["weight"] for s in p["score"]}["ImageLocality"] == 1


@pytest.mark.parametrize(("spec", "field", "text"), [
    ({"plugins": {"filter": {"enabled": [{"name": "NoSuchPlugin"}]}}}, "spec.plugins.filter.enabled[0]",
     "not registered"),
    ({"plugins": {"score": {"enabled": [{"name": "NodeResourcesFit", "weight": -1}]}}},
     "spec.plugins.score.enabled[0].weight", "greater than or equal to 0"),
    ({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Fancy"}}}]},
     "spec.pluginConfig[0].args.scoringStrategy.type", "LeastAllocated"),
    ({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"ignoredResourcez": []}}]},
     "spec.pluginConfig[0].args.ignoredResourcez", "unknown field"),
    ({"pluginConfig": [{"name": "A", "args": {}}, {"name": "A", "args": {}}]}, "spec", "Duplicate"),
    ({"plugins": {"bind": {"disabled": [{"name": "*"}]}}}, "spec.plugins", "at least one bind plugin"),
    ({"plugins": {"filter": {"enabled": [{"name": "ImageLocality"}]}}}, "spec.plugins.filter.enabled[0]",
     "does not extend filter"),
    ({"podInitialBackoffSeconds": 20, "podMaxBackoffSeconds": 10}, "spec", "podMaxBackoffSeconds"),
    ({"percentageOfNodesToScore": 101}, "spec.percentageOfNodesToScore", "less than or equal to 100"),
])
def test_invalid_profiles_name_the_field(spec: dict, field: str, text: str) -> None:
    with pytest.raises(ProfileError) as e:
        compiled(spec)
    assert e.value.field == field, str(e.value)
    assert text in str(e.value)


def test_every_mistake_of_an_edit_is_reported() -> None:
    """As kube-apiserver's aggregated 422: all of them, so the user fixes them in one round."""
    with pytest.raises(ProfileError) as e:
        compiled({"percentageOfNodesToScore": 200, "plugins": {"score": {"enabled": [{"name": "", "weight": -1}]}},
                  "bogus": 1})
    assert e.value.field == "spec.percentageOfNodesToScore"
    assert str(e.value) == ("spec.percentageOfNodesToScore: Input should be less than or equal to 100; "
                            "spec.plugins.score.enabled[0].name: String should have at least 1 character; "
                            "spec.plugins.score.enabled[0].weight: Input should be greater than or equal to 0; "
                            "spec.bogus: unknown field")
    with pytest.raises(ProfileError) as e:
        compiled({"pluginConfig": [{"name": "NodeResourcesFit", "args": {"scoringStrategy": {"type": "Fancy"},
                                                                          "ignoredResourcez": []}}]})
    assert "spec.pluginConfig[0].args.scoringStrategy.type" in str(e.value)
    assert "spec.pluginConfig[0].args.ignoredResourcez: unknown field" in str(e.value)


def test_upstream_profile_pastes_as_is() -> None:
    upstream = yaml.safe_load("""
schedulerName: bin-packing
plugins:
  score:
    disabled:
    - name: NodeResourcesBalancedAllocation
pluginConfig:
- name: NodeResourcesFit
  args:
    scoringStrategy:
      type: MostAllocated
      resources:
      - name: cpu
        weight: 1
      - name: memory
        weight: 1
""")
    assert "NodeResourcesBalancedAllocation" not in names(compiled(upstream), "score")


def test_crd_file_matches_the_model() -> None:
    on_disk = yaml.safe_load((REPO / "crds" / "schedulingprofile.yaml").read_text())
    assert on_disk == crd(), "crds/schedulingprofile.yaml drifted: regenerate with `kopf-scheduler crd`"


def test_crd_is_structural() -> None:
    def walk(node: object) -> None:
        if isinstance(node, dict):
            assert "$ref" not in node and "anyOf" not in node and "$defs" not in node
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
    walk(crd())


# ---- who owns a schedulerName --------------------------------------------------------------------
T0, T1, T2 = "2025-01-01T00:00:00Z", "2025-01-01T00:00:01Z", "2025-01-01T00:00:02Z"


def fwk(scheduler: str) -> Framework:
    return compile_profile(parse_spec({"schedulerName": scheduler}), registry=Registry(), handle=Handle())


@pytest.mark.parametrize(("case", "a", "b", "older"), [
    ("older timestamp wins over the first name", (T1, "a"), (T0, "b"), "b"),
    ("same second: the first name wins", (T0, "b"), (T0, "a"), "a"),
    ("fractional seconds still compare as time", ("2025-01-01T00:00:00.5Z", "a"), ("2025-01-01T00:00:00.25Z", "b"),
     "b"),
    ("a missing timestamp ranks after any readable one", ("", "a"), (T2, "b"), "b"),
    ("an unreadable timestamp ranks after any readable one", ("yesterday", "a"), (T2, "b"), "b"),
    ("two missing timestamps: the name decides", ("", "b"), ("", "a"), "a"),
])
def test_rank_orders_by_creation_then_name(case: str, a: tuple[str, str], b: tuple[str, str], older: str) -> None:
    assert min([a, b], key=lambda x: rank(*x))[1] == older, case


# Each case: the claims (CR name, creationTimestamp, schedulerName) and who serves each name.
OWNERSHIP = [
    ("one claimant", [("p", T0, "s")], {"s": "p"}),
    ("oldest wins", [("young", T1, "s"), ("old", T0, "s")], {"s": "old"}),
    ("the older has the later name", [("a-new", T1, "s"), ("b-old", T0, "s")], {"s": "b-old"}),
    ("same second: first name", [("zeta", T0, "s"), ("alpha", T0, "s")], {"s": "alpha"}),
    ("three claimants, two names", [("c", T2, "s"), ("b", T1, "s"), ("a", T2, "t")], {"s": "b", "t": "a"}),
]


@pytest.mark.parametrize(("case", "claims", "owners"), OWNERSHIP, ids=[c[0] for c in OWNERSHIP])
def test_every_arrival_order_gives_the_same_owner(case: str, claims: list[tuple[str, str, str]],
                                                  owners: dict[str, str]) -> None:
    frameworks = {cr: fwk(name) for cr, _, name in claims}
    for order in itertools.permutations(claims):
        m = ProfileMap()
        for cr, created, _ in order:
            m.set(cr, frameworks[cr], created=created)
        got = {name: m.owner_of(name) for name in owners}
        assert got == owners, (case, [c[0] for c in order])
        assert dict(m.current) == {n: frameworks[cr] for n, cr in owners.items()}


def test_deleting_the_owner_hands_the_name_to_the_next_oldest() -> None:
    m = ProfileMap()
    m.set("c", fwk("s"), created=T2)
    m.set("a", fwk("s"), created=T0)
    m.set("b", fwk("s"), created=T1)
    assert m.claimants("s") == ["a", "b", "c"]
    change = m.remove("a")
    assert m.owner_of("s") == "b" and change.names == {"s"}
    assert change.others == {"b", "c"}          # b now serves; c now waits for b rather than a
    change = m.remove("c")                     # a waiting claimant leaves: nobody else changes
    assert change.names == frozenset() and change.others == frozenset() and m.owner_of("s") == "b"
    change = m.remove("b")
    assert change.names == {"s"} and "s" not in m.current and m.owner_of("s") is None


def test_an_older_claim_arriving_late_takes_the_name_from_a_younger_one() -> None:
    m = ProfileMap()
    young = fwk("s")
    assert m.set("young", young, created=T1).names == {"s"}
    young.next_start_node_index = 7
    old = fwk("s")
    change = m.set("old", old, created=T0)
    assert change.names == {"s"} and change.others == {"young"} and m.current["s"] is old
    assert old.next_start_node_index == 7                   # the node scan goes on where it was


@pytest.mark.parametrize(("case", "serving", "refused"), [
    ("an owner renamed onto an older CR's name is refused and keeps serving", True, True),
    ("a waiting claimant may move to another name", False, False),
])
def test_rename_onto_a_held_name(case: str, serving: bool, refused: bool) -> None:
    m = ProfileMap()
    m.set("holder", fwk("t"), created=T0)
    if not serving:
        m.set("owner-of-s", fwk("s"), created=T0)
    m.set("p", fwk("s"), created=T1)
    before = dict(m.current)
    change = m.set("p", fwk("t"), created=T1)
    assert (change.refused_by == "holder") is refused, case
    if refused:
        assert dict(m.current) == before and m.owner_of("s") == "p"
    else:
        assert m.owner_of("t") == "holder" and m.claimants("t") == ["holder", "p"]


def test_renaming_the_owner_frees_its_old_name_for_the_next_claimant() -> None:
    m = ProfileMap()
    m.set("a", fwk("s"), created=T0)
    m.set("b", fwk("s"), created=T1)
    change = m.set("a", fwk("u"), created=T0)
    assert change.names == {"s", "u"} and change.others == {"b"}
    assert m.owner_of("s") == "b" and m.owner_of("u") == "a"


def test_service_status_says_who_holds_the_name_and_is_rewritten_when_it_goes() -> None:
    s = SchedulerService(MemoryClient())
    young = s.on_profile("young", {"schedulerName": "s"}, {"creationTimestamp": T1, "generation": 1, "uid": "u1"})
    assert young.accepted
    old = s.on_profile("old", {"schedulerName": "s"}, {"creationTimestamp": T0, "generation": 3})
    assert old.accepted and s.profiles.owner_of("s") == "old"
    updates = s.take_profile_updates()
    assert list(updates) == ["young"]
    lost, generation = updates["young"]
    assert not lost.accepted and lost.reason == "SchedulerNameConflict" and generation == 1
    assert lost.message.startswith("spec.schedulerName:") and "'old'" in lost.message
    assert lost.condition(1)["reason"] == "SchedulerNameConflict"
    assert s.take_profile_updates() == {}
    s.remove_profile("old")
    updates = s.take_profile_updates()
    assert list(updates) == ["young"] and updates["young"][0].accepted
    assert s.profile_status["young"][0].accepted and "old" not in s.profile_status
    assert s.profiles.owner_of("s") == "young"


# ---- one QueueSort for every profile (upstream's profile.NewMap) -----------------------------------
class FifoSort:
    """A QueueSort plugin other than PrioritySort: first in, first out."""

    name = "FifoSort"

    def sort_key(self, info: QueuedPodInfo) -> Any:
        return info.timestamp


class TieBreakArgs(BaseModel):
    newest_first: bool = Field(default=False, alias="newestFirst")


class TieBreakSort:
    """A QueueSort plugin with args."""

    name = "TieBreakSort"

    def __init__(self, args: TieBreakArgs) -> None:
        self.sign = -1 if args.newest_first else 1

    def sort_key(self, info: QueuedPodInfo) -> Any:
        return (-info.pod.priority, self.sign * info.timestamp)


SORTS = Registry(extra={
    "FifoSort": PluginSpec("FifoSort", lambda a, h: FifoSort()),
    "TieBreakSort": PluginSpec("TieBreakSort", lambda a, h: TieBreakSort(a or TieBreakArgs()), TieBreakArgs),
})


def sort_spec(scheduler: str, sort: str = "", args: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": scheduler}
    if sort:
        spec["plugins"] = {"queueSort": {"enabled": [{"name": sort}], "disabled": [{"name": "*"}]}}
    if args is not None:
        spec["pluginConfig"] = [{"name": sort, "args": args}]
    return spec


def sorted_fwk(scheduler: str, sort: str = "", args: dict[str, Any] | None = None) -> Framework:
    return compile_profile(parse_spec(sort_spec(scheduler, sort, args)), registry=SORTS, handle=Handle())


# Each case: the first CR's (sort, args), the second CR's, and upstream's error for the second ("" = accepted).
QUEUE_SORTS = [
    ("both default: PrioritySort", ("", None), ("", None), ""),
    ("the same out-of-tree sort", ("FifoSort", None), ("FifoSort", None), ""),
    ("a different plugin", ("", None), ("FifoSort", None),
     'different queue sort plugins for profile "b": "FifoSort", first: "PrioritySort"'),
    ("PrioritySort after another", ("FifoSort", None), ("", None),
     'different queue sort plugins for profile "b": "PrioritySort", first: "FifoSort"'),
    ("the same plugin with the same args", ("TieBreakSort", {"newestFirst": True}), ("TieBreakSort", {"newestFirst": True}),
     ""),
    ("the same plugin, args defaulted to the same values", ("TieBreakSort", {"newestFirst": False}),
     ("TieBreakSort", None), ""),
    ("the same plugin with other args", ("TieBreakSort", {"newestFirst": True}), ("TieBreakSort", None),
     'different queue sort plugin args for profile "b"'),
]


@pytest.mark.parametrize(("case", "first", "second", "error"), QUEUE_SORTS, ids=[c[0] for c in QUEUE_SORTS])
def test_profiles_share_one_queue_sort(case: str, first: tuple[str, dict[str, Any] | None],
                                       second: tuple[str, dict[str, Any] | None], error: str) -> None:
    m = ProfileMap()
    a = sorted_fwk("a", *first)
    assert m.set("cr-a", a, created=T0).names == {"a"}
    before = dict(m.current)
    change = m.set("cr-b", sorted_fwk("b", *second), created=T1)
    assert change.queue_sort_conflict == error, case
    if error:
        assert dict(m.current) == before and m.claim("cr-b") is None and change.names == frozenset()
    else:
        assert m.owner_of("b") == "cr-b"


def test_the_only_profile_may_change_its_queue_sort() -> None:
    m = ProfileMap()
    m.set("cr-a", sorted_fwk("a"), created=T0)
    fifo = sorted_fwk("a", "FifoSort")
    assert m.set("cr-a", fifo, created=T0).queue_sort_conflict == ""
    assert m.current["a"] is fifo


def test_service_refuses_a_different_queue_sort_and_keeps_the_last_good() -> None:
    s = SchedulerService(MemoryClient(), registry=SORTS)
    assert s.on_profile("a", sort_spec("s1"), {"creationTimestamp": T0}).accepted
    assert s.on_profile("b", sort_spec("s2"), {"creationTimestamp": T1}).accepted
    good = s.profiles.current["s2"]
    edit = s.on_profile("b", sort_spec("s2", "FifoSort"), {"creationTimestamp": T1, "generation": 2})
    assert not edit.accepted and edit.reason == ""
    assert edit.message == ('spec.plugins.queueSort: different queue sort plugins for profile "s2": "FifoSort", '
                            'first: "PrioritySort"')
    assert edit.condition(2)["status"] == "False" and edit.condition(2)["reason"] == "Invalid"
    assert s.profile_status["b"][0] is edit and s.profile_status["b"][1] == 2
    assert s.profiles.current["s2"] is good and s.profiles.owner_of("s2") == "b"     # the last good one serves
    new = s.on_profile("c", sort_spec("s3", "FifoSort"), {"creationTimestamp": T2})
    assert not new.accepted and "s3" not in s.profiles.current
