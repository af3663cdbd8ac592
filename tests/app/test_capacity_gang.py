"""``capacity -f pod.yaml`` for a member of a gang PodGroup (issue #37 §3, the gang's answer):
``gang`` says whether ``minCount`` replicas of the pod, with the group's existing members, fit as
one gang, where, and if not why. Checked against brute force: the real operator, with
``--feature-gates GenericWorkload=true``, is given the group's pods in the simulated cluster, and
what it binds (or the per-node diagnosis it writes on the PodGroup) must be what ``capacity``
answered before any pod was created.

Each scenario has nodes of its own (label ``pool``) and its pods select them, so the scenarios
share one operator; the other scenarios' nodes appear in a diagnosis as nodes that refused on
node affinity, in capacity's answer and in the scheduler's alike."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler.app.cli import main
from scheduler.profiles.crd import API_VERSION, KIND
from tests.app.test_capacity import SCHEDULER, create, node, pod
from tests.operator.harness import Env, running_operator
from tests.operator.test_e2e import accepted

GATES = {"GenericWorkload": True}
POD_GROUPS = "/apis/scheduling.k8s.io/v1beta1/namespaces/cap/podgroups"


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    with running_operator(tmp_path_factory.mktemp("capacity-gang"), runtime_kwargs={"feature_gates": GATES},
                          feature_gates=GATES) as e:
        assert e.api("POST", f"/apis/{API_VERSION}/schedulingprofiles", {
            "apiVersion": API_VERSION, "kind": KIND, "metadata": {"name": "live"},
            "spec": {"schedulerName": SCHEDULER}})[0] == 201
        assert e.api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                    "metadata": {"name": "cap"}})[0] == 201
        e.wait(lambda: accepted(e, "live"), message="profile accepted")
        yield e


def gang(env: Env, name: str, min_count: int) -> None:
    status, body = env.api("POST", POD_GROUPS, {
        "apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name, "namespace": "cap"},
        "spec": {"schedulingPolicy": {"gang": {"minCount": min_count}}}})
    assert status == 201, body


def member(name: str, pool: str, cpu: str, group: str) -> dict[str, Any]:
    return pod(name, pool, cpu, labels={"gang": group}, schedulingGroup={"podGroupName": group})


def capacity(env: Env, tmp_path: Path, manifest: dict[str, Any], *args: str) -> Any:
    path = tmp_path / f"{manifest['metadata']['name']}.yaml"
    path.write_text(yaml.safe_dump(manifest))
    result = CliRunner().invoke(main, ["capacity", "-f", str(path), "--kubeconfig", str(env.cluster.kubeconfig),
                                       "--feature-gates", "GenericWorkload=true", "--output", "json", *args])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def condition(env: Env, group: str) -> dict[str, Any] | None:
    status, pg = env.api("GET", f"{POD_GROUPS}/{group}")
    assert status == 200, pg
    return next((c for c in (pg.get("status") or {}).get("conditions") or []
                 if c["type"] == "PodGroupInitiallyScheduled"), None)


def bound(env: Env, group: str) -> Counter[str]:
    status, pods = env.api("GET", "/api/v1/namespaces/cap/pods", params={"labelSelector": f"gang={group}"})
    assert status == 200, pods
    return Counter(p["spec"]["nodeName"] for p in pods["items"] if p["spec"].get("nodeName"))


def brute_force(env: Env, manifest: dict[str, Any], count: int) -> tuple[Counter[str], dict[str, Any]]:
    """Create ``count`` pods of ``manifest``'s group at once and let the operator settle: the nodes
    it bound them to, and the PodGroup's condition."""
    group = manifest["spec"]["schedulingGroup"]["podGroupName"]
    base = manifest["metadata"]["name"]
    for i in range(count):
        create(env, {**manifest, "metadata": {**manifest["metadata"], "name": f"{base}-bf-{i}"}})
    cond = env.wait(lambda: condition(env, group), timeout=60, message=f"{group}'s condition")
    if cond["status"] == "True":
        # "N of minCount M pods scheduled": written once the binds went through.
        scheduled = int(cond["message"].split()[0])
        env.wait(lambda: sum(bound(env, group).values()) >= scheduled, timeout=60, message=f"{group} bound")
    return bound(env, group), cond


def test_a_gang_that_fits_is_placed_whole_where_the_scheduler_places_it(env: Env, tmp_path: Path) -> None:
    """minCount 3 of a 2-cpu pod: gf0 (4 cpu) takes two, gf1 (2 cpu) one, whatever the ties."""
    create(env, node("gf0", "gf", "4"), node("gf1", "gf", "2"))
    gang(env, "fits", 3)
    manifest = member("fits", "gf", "2", "fits")
    answer = capacity(env, tmp_path, manifest)
    g = answer["gang"]
    assert g == {"podGroup": "cap/fits", "fits": True, "minCount": 3, "replicas": 3, "bound": 0, "pending": 0,
                 "perNode": {"gf0": 2, "gf1": 1}, "unplaced": 0, "diagnosis": None}, answer
    # The pod-by-pod keys keep their meaning: replicas one at a time, outside the group.
    assert answer["fits"] == 3 and answer["perNode"] == {"gf0": 2, "gf1": 1} and "note" not in answer
    per_node, cond = brute_force(env, manifest, 3)
    assert cond["status"] == "True", cond
    assert dict(per_node) == g["perNode"], (per_node, g)


def test_a_gang_that_does_not_fit_gets_the_diagnosis_the_scheduler_writes(env: Env, tmp_path: Path) -> None:
    """minCount 4 of a 2-cpu pod on 4 + 2 cpus: three would be placed, so none is. capacity's
    diagnosis is, word for word, the PodGroup condition the live scheduler writes."""
    create(env, node("gn0", "gn", "4"), node("gn1", "gn", "2"))
    gang(env, "nofit", 4)
    manifest = member("nofit", "gn", "2", "nofit")
    answer = capacity(env, tmp_path, manifest)
    g = answer["gang"]
    assert g["fits"] is False and g["perNode"] == {"gn0": 2, "gn1": 1} and g["unplaced"] == 1, g
    assert g["diagnosis"].startswith("pod group cap/nofit: 3 of 4 pods placed, minCount 4; ")
    assert "gn0 accepted 2, then Insufficient cpu; gn1 accepted 1, then Insufficient cpu" in g["diagnosis"]
    assert answer["fits"] == 3                       # pod by pod, three would fit
    per_node, cond = brute_force(env, manifest, 4)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable"), cond
    assert cond["message"] == g["diagnosis"], (cond, g)
    assert per_node == Counter(), per_node


def test_the_groups_existing_members_join_the_replicas(env: Env, tmp_path: Path) -> None:
    """A gang of minCount 2 with one 3-cpu member pending (it waits for its quorum) on 4 + 4
    cpus: two 3-cpu replicas and the pending member are three pods for two nodes, so the quorum
    is met, and one is left over. The operator, given the same two pods, binds two of the three."""
    create(env, node("ge0", "ge", "4"), node("ge1", "ge", "4"))
    gang(env, "elastic", 2)
    create(env, member("elastic-first", "ge", "3", "elastic"))
    manifest = member("elastic", "ge", "3", "elastic")
    answer = capacity(env, tmp_path, manifest)
    g = answer["gang"]
    assert (g["fits"], g["replicas"], g["pending"], g["bound"], g["unplaced"]) == (True, 2, 1, 0, 1), g
    assert g["perNode"] == {"ge0": 1, "ge1": 1}, g
    per_node, cond = brute_force(env, manifest, 2)
    assert cond["status"] == "True", cond
    assert dict(per_node) == g["perNode"], (per_node, g)


def test_text_output_and_the_gate(env: Env, tmp_path: Path) -> None:
    """The table names the gang's verdict and, when it does not fit, the diagnosis; a pod naming
    a PodGroup that does not exist waits for it; with the gate off the pod is counted pod by pod
    and ``note`` says so."""
    create(env, node("gt0", "gt", "2"))
    gang(env, "text", 2)
    manifest = member("text", "gt", "2", "text")
    path = tmp_path / "text.yaml"
    path.write_text(yaml.safe_dump(manifest))
    kube = ["--kubeconfig", str(env.cluster.kubeconfig)]
    result = CliRunner().invoke(main, ["capacity", "-f", str(path), *kube, "--feature-gates", "GenericWorkload=true"])
    assert result.exit_code == 0, result.output
    assert "pod group cap/text (minCount 2): 2 replica(s) as one gang: does NOT fit  (gt0 1)" in result.output
    assert "pod group cap/text: 1 of 2 pods placed, minCount 2;" in result.output
    missing = capacity(env, tmp_path, member("lost", "gt", "1", "nowhere"))
    assert missing["gang"]["fits"] is False and missing["gang"]["minCount"] is None
    assert missing["gang"]["diagnosis"] == 'waiting for pods\'s pod group "nowhere" to appear in scheduling queue'
    result = CliRunner().invoke(main, ["capacity", "-f", str(path), *kube, "--output", "json"])
    assert result.exit_code == 0, result.output
    off = json.loads(result.stdout)
    assert "gang" not in off and "GenericWorkload gate off" in off["note"] and off["fits"] == 1, off
