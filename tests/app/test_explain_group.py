"""``explain`` for a member of a gang PodGroup (issue #36 §3, ``scheduler/app/explain_group.py``):
the group's answer beside the pod's, from the PodGroup cycle run hypothetically over a dump (the
local route; ``--from`` reads the cluster in memory, through the same path as ``--kubeconfig``).
The leader's answer to a SchedulingExplanation is in ``tests/operator/test_explanations_e2e.py``;
that the what-if answers as the real cycle then does is ``tests/test_podgroup_cycle.py``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.app.explain import explain_object, listings_from_objects
from scheduler.app.kinds import watched_kinds
from scheduler.profiles.crd import API_VERSION, KIND

GATES = {"GenericWorkload": True}


def node(name: str, cpu: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "uid": f"uid-{name}",
                                                             "labels": {"kubernetes.io/hostname": name}},
            "status": {"capacity": {"cpu": cpu, "memory": "16Gi", "pods": "110"},
                       "allocatable": {"cpu": cpu, "memory": "16Gi", "pods": "110"}}}


def group(name: str, min_count: int) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
            "metadata": {"name": name, "namespace": "ml", "uid": f"uid-pg-{name}"},
            "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}}


def member(name: str, group_name: str, cpu: str = "2", node_name: str | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "uid": f"uid-{name}",
                         "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"schedulerName": "default-scheduler", "schedulingGroup": {"podGroupName": group_name},
                     **({"nodeName": node_name} if node_name else {}),
                     "containers": [{"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]},
            "status": {"phase": "Running" if node_name else "Pending"}}


def cluster(*objs: dict[str, Any]) -> list[dict[str, Any]]:
    """Two nodes, n0 with room for two 2-cpu members and n1 for one, and the profile."""
    return [{"apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "default"},
             "spec": {"schedulerName": "default-scheduler"}}, node("n0", "4"), node("n1", "2"), *objs]


def explained(objs: list[dict[str, Any]], name: str, gates: dict[str, bool] | None = GATES) -> dict[str, Any]:
    kinds = watched_kinds(gates)
    body = next(o for o in objs if o["kind"] == "Pod" and o["metadata"]["name"] == name)
    return explain_object(body, listings_from_objects(objs, kinds), kinds, feature_gates=gates)[0]


def test_a_gang_that_fits_shows_where_each_member_goes() -> None:
    objs = cluster(group("train", 3), *(member(f"train-{i}", "train") for i in range(3)))
    out = explained(objs, "train-1")
    g = out["group"]
    assert g["podGroup"] == "ml/train" and g["minCount"] == 3 and g["fits"] is True and g["waiting"] is None
    assert g["scheduled"] == 3 and g["perNode"] == {"n0": 2, "n1": 1}
    assert g["message"] == "3 of minCount 3 pods scheduled"
    # Members in QueueSort order: equal priorities, so as they reached the queue (the explained
    # pod, taken out of the listings for its own answer, last).
    assert sorted((m["pod"], m["state"]) for m in g["members"]) == [(f"ml/train-{i}", "placed") for i in range(3)]
    assert g["members"][-1]["pod"] == "ml/train-1"
    assert sorted(m["node"] for m in g["members"]) == ["n0", "n0", "n1"]
    assert out["decision"]["pod"] == "ml/train-1"          # the pod's own answer is still there


def test_a_gang_that_does_not_fit_gets_the_schedulers_per_node_diagnosis() -> None:
    """Four members of 2 cpu, room for three: the pod alone would fit (its own decision says so),
    the group does not, and says why node by node, in the words the scheduler writes on the
    PodGroup (``group_diagnosis``)."""
    objs = cluster(group("big", 4), *(member(f"big-{i}", "big") for i in range(4)))
    out = explained(objs, "big-0")
    assert out["decision"]["node"] is not None
    g = out["group"]
    assert g["fits"] is False and g["scheduled"] == 3 and g["perNode"] == {"n0": 2, "n1": 1}
    assert g["message"] == ("pod group ml/big: 3 of 4 pods placed, minCount 4; 0/2 nodes can take the rest: "
                            "n0 accepted 2, then Insufficient cpu; n1 accepted 1, then Insufficient cpu. "
                            # the cycle's workload-aware preemption (PodGroupPostFilter), nothing to preempt
                            "pod group preemption: No preemption victims found for incoming preemptor")
    unplaced = [m for m in g["members"] if m["state"] == "unplaced"]
    # The explained pod reaches the (what-if's) queue last, so it is the one left over; its FitError
    # carries its own PostFilter's refusal, as the cycle, which runs it, words it.
    assert unplaced == [{"pod": "ml/big-0", "state": "unplaced", "node": None,
                         "reason": "0/2 nodes are available: 2 Insufficient cpu. preemption: "
                                   "not eligible due to workload aware preemption enabled"}]


def test_a_bound_member_counts_as_placed() -> None:
    """minCount 3: one member runs on n0, so n0 has room for one more and n1 for one: the two
    pending members complete the quorum. Explaining the bound one shows the same group."""
    objs = cluster(group("mix", 3), member("mix-0", "mix", node_name="n0"), member("mix-1", "mix"),
                   member("mix-2", "mix"))
    for name in ("mix-0", "mix-1"):
        g = explained(objs, name)["group"]
        assert g["fits"] is True and g["scheduled"] == 3, (name, g)
        assert g["members"][0] == {"pod": "ml/mix-0", "state": "bound", "node": "n0"}, (name, g)
        assert sorted(m["node"] for m in g["members"][1:]) == ["n0", "n1"], (name, g)


def test_a_group_waiting_for_its_quorum_or_its_podgroup_says_so(tmp_path: Path) -> None:
    """Two of three members exist: GangScheduling's PreEnqueue holds them, with upstream's words.
    ``explain -f`` of a third, hypothetical member completes the quorum, and the group would fit.
    A pod naming a PodGroup that does not exist waits for it."""
    objs = cluster(group("q", 3), member("q-0", "q"), member("q-1", "q"))
    g = explained(objs, "q-0")["group"]
    assert g["fits"] is False and g["waiting"] == "waiting for minCount pods from a gang to appear in scheduling queue"
    dump, pod_file = tmp_path / "cluster.yaml", tmp_path / "pod.yaml"
    dump.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": objs}))
    new = member("q-new", "q")
    del new["metadata"]["uid"], new["status"]
    pod_file.write_text(yaml.safe_dump(new))
    result = CliRunner().invoke(main, ["explain", "-f", str(pod_file), "--from", str(dump), "--feature-gates",
                                       "GenericWorkload=true", "--output", "json"])
    assert result.exit_code == 0, result.output
    g = json.loads(result.stdout)["group"]
    assert g["fits"] is True and g["waiting"] is None and g["scheduled"] == 3
    assert g["members"][-1]["pod"] == "ml/q-new" and g["members"][-1]["state"] == "placed"
    result = CliRunner().invoke(main, ["explain", "-f", str(pod_file), "--from", str(dump), "--feature-gates",
                                       "GenericWorkload=true"])
    assert result.exit_code == 0, result.output
    assert "pod group ml/q  minCount 3: the whole group FITS  (scheduled 3)" in result.output, result.output
    assert "ml/q-new" in result.output and "would be placed" in result.output
    lonely = explained(cluster(member("alone", "missing")), "alone")["group"]
    assert lonely["fits"] is False and lonely["minCount"] is None
    assert lonely["waiting"] == 'waiting for pods\'s pod group "missing" to appear in scheduling queue'


def test_without_the_gate_or_a_gang_the_pod_is_explained_alone() -> None:
    objs = cluster(group("train", 3), *(member(f"train-{i}", "train") for i in range(3)))
    assert "group" not in explained(objs, "train-0", gates=None)
    basic = {**group("web", 1), "spec": {"schedulingPolicy": {"basic": {}}}}
    assert "group" not in explained(cluster(basic, member("web-0", "web")), "web-0")
