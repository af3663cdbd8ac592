from pathlib import Path

import pytest
import yaml

from scheduler.errors import ProfileError
from scheduler.framework.handle import Handle
from scheduler.plugins.registry import Registry
from scheduler.profiles import compile_profile, crd, parse_spec

REPO = Path(__file__).resolve().parent.parent


def compiled(spec: dict) -> dict:
    fwk = compile_profile(parse_spec({"schedulerName": "s", **spec}), registry=Registry(), handle=Handle())
    return fwk.effective_plugins()


def names(points: dict, point: str) -> list[str]:
    return [p["name"] for p in points.get(point, [])]


def test_defaults_match_upstream() -> None:
    p = compiled({})
    assert names(p, "queueSort") == ["PrioritySort"]
    assert names(p, "preEnqueue") == ["SchedulingGates", "DefaultPreemption"]
    assert names(p, "postFilter") == ["DefaultPreemption"]
    assert names(p, "filter") == ["NodeUnschedulable", "NodeName", "TaintToleration", "NodeAffinity", "NodePorts",
                                  "NodeResourcesFit", "PodTopologySpread", "InterPodAffinity"]
    assert {s["name"]: s["weight"] for s in p["score"]} == {
        "TaintToleration": 3, "NodeAffinity": 2, "NodeResourcesFit": 1, "PodTopologySpread": 2,
        "InterPodAffinity": 2, "NodeResourcesBalancedAllocation": 1, "ImageLocality": 1}
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
