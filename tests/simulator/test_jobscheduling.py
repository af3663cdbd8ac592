"""The simulated Job controller's workload integration (``controllers/jobscheduling.py``, upstream's
``job_scheduling_manager.go``): with ``WorkloadWithJob`` and ``GenericWorkload`` on, a Job's YAML gets a
Workload and a PodGroup, and its pods join the group; a Job that wires its own group, or a cluster
without the gate, gets none."""

from __future__ import annotations

from typing import Any

from tests.simulator.helpers import Http, started, wait

SIM_OPTIONS: dict[str, Any] = {"seed": 38, "feature_gates": {"GenericWorkload": True, "WorkloadWithJob": True}}

BATCH = "/apis/batch/v1/namespaces/default/jobs"
SCHED = "/apis/scheduling.k8s.io/v1beta1/namespaces/default"
PODS = "/api/v1/namespaces/default/pods"


def job(name: str, parallelism: int, scheduling: dict[str, Any] | None = None, **pod_spec: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"parallelism": parallelism, "completions": parallelism, "template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox:1.36"}], **pod_spec}}}
    if scheduling is not None:
        spec["scheduling"] = scheduling
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name}, "spec": spec}


def owned(api: Http, path: str, uid: str) -> list[dict[str, Any]]:
    _, body = api("GET", path)
    return [o for o in body["items"] if any(r.get("uid") == uid and r.get("controller")
                                            for r in o["metadata"].get("ownerReferences") or [])]


def test_a_gang_job_gets_a_workload_a_pod_group_and_pods_in_it(api: Http) -> None:
    code, created = api("POST", BATCH, job("train", 3, {"schedulingPolicy": {"gang": {}}}))
    assert code == 201, created
    uid = created["metadata"]["uid"]
    pods = wait(lambda: len(p := owned(api, PODS, uid)) == 3 and p, message="three pods")
    workloads = owned(api, f"{SCHED}/workloads", uid)
    groups = owned(api, f"{SCHED}/podgroups", uid)
    assert len(workloads) == 1 and len(groups) == 1
    wl, pg = workloads[0], groups[0]
    assert wl["metadata"]["name"].startswith("train-")
    assert wl["spec"]["controllerRef"] == {"apiGroup": "batch", "kind": "Job", "name": "train"}
    assert wl["spec"]["podGroupTemplates"] == [{"name": "train-pgt-0",
                                                "schedulingPolicy": {"gang": {"minCount": 3}}}]
    assert pg["metadata"]["name"].startswith(f"{wl['metadata']['name']}-train-pgt-0-")
    assert pg["spec"]["workloadRef"] == {"workloadName": wl["metadata"]["name"], "templateName": "train-pgt-0"}
    assert pg["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}      # minCount from parallelism
    assert {r["kind"] for r in pg["metadata"]["ownerReferences"]} == {"Job", "Workload"}
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}


def test_a_job_without_scheduling_gets_a_basic_group(api: Http) -> None:
    code, created = api("POST", BATCH, job("plain", 2))
    assert code == 201, created
    pods = wait(lambda: len(p := owned(api, PODS, created["metadata"]["uid"])) == 2 and p, message="two pods")
    (pg,) = owned(api, f"{SCHED}/podgroups", created["metadata"]["uid"])
    assert pg["spec"]["schedulingPolicy"] == {"basic": {}}
    assert {p["spec"]["schedulingGroup"]["podGroupName"] for p in pods} == {pg["metadata"]["name"]}


def test_a_job_wiring_its_own_group_is_left_alone(api: Http) -> None:
    code, created = api("POST", BATCH, job("byo", 1, schedulingGroup={"podGroupName": "mine"}))
    assert code == 201, created
    (pod,) = wait(lambda: owned(api, PODS, created["metadata"]["uid"]), message="the pod")
    assert pod["spec"]["schedulingGroup"] == {"podGroupName": "mine"}
    assert owned(api, f"{SCHED}/workloads", created["metadata"]["uid"]) == []


def test_without_workload_with_job_a_job_gets_no_group() -> None:
    with started(seed=39, feature_gates={"GenericWorkload": True}) as c:
        api = Http(c)
        code, created = api("POST", BATCH, job("solo", 2, {"schedulingPolicy": {"gang": {}}}))
        assert code == 201, created
        pods = wait(lambda: len(p := owned(api, PODS, created["metadata"]["uid"])) == 2 and p, message="two pods")
        assert all("schedulingGroup" not in p["spec"] for p in pods)
        assert owned(api, f"{SCHED}/podgroups", created["metadata"]["uid"]) == []


def test_a_gangs_min_count_follows_the_jobs_parallelism(api: Http) -> None:
    code, created = api("POST", BATCH, job("elastic", 2, {"schedulingPolicy": {"gang": {}}}))
    assert code == 201, created
    uid = created["metadata"]["uid"]
    wait(lambda: owned(api, f"{SCHED}/podgroups", uid), message="the PodGroup")
    _, current = api("GET", f"{BATCH}/elastic")
    current["spec"]["parallelism"] = 4
    code, body = api("PUT", f"{BATCH}/elastic", current)
    assert code == 200, body
    wait(lambda: owned(api, f"{SCHED}/podgroups", uid)[0]["spec"]["schedulingPolicy"]["gang"]["minCount"] == 4,
         message="minCount 4 on the PodGroup")
    (wl,) = owned(api, f"{SCHED}/workloads", uid)
    assert wl["spec"]["podGroupTemplates"][0]["schedulingPolicy"] == {"gang": {"minCount": 4}}


def test_the_pod_templates_priority_class_is_not_carried_to_the_group(api: Http) -> None:
    """job_scheduling_manager.go compiles the Workload from ``spec.scheduling`` only
    (``mapSchedulingConfig``: policy, constraints, disruptionMode, resourceClaims) and
    ``podGroupSpecFromTemplate`` copies those into the PodGroup: the pod template's
    ``priorityClassName`` stays on the pods, and the group's priority comes from the Priority
    admission of its own (empty) class, 0 without a global default."""
    code, body = api("POST", "/apis/scheduling.k8s.io/v1/priorityclasses",
                     {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                      "metadata": {"name": "job-high"}, "value": 1000})
    assert code == 201, body
    code, created = api("POST", BATCH, job("prio", 2, {"schedulingPolicy": {"gang": {}}},
                                            priorityClassName="job-high"))
    assert code == 201, created
    uid = created["metadata"]["uid"]
    pods = wait(lambda: len(p := owned(api, PODS, uid)) == 2 and p, message="two pods")
    assert {(p["spec"]["priorityClassName"], p["spec"]["priority"]) for p in pods} == {("job-high", 1000)}
    (wl,) = owned(api, f"{SCHED}/workloads", uid)
    assert "priorityClassName" not in wl["spec"]["podGroupTemplates"][0]
    (pg,) = owned(api, f"{SCHED}/podgroups", uid)
    assert not pg["spec"].get("priorityClassName")
    assert pg["spec"]["priority"] == 0
