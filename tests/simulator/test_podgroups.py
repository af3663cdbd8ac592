"""scheduling.k8s.io/v1beta1 Workloads and PodGroups (``registry/podgroups.py``), requested raw over HTTPS:
served only with the ``GenericWorkload`` gate, defaulted, validated with upstream's messages
(``pkg/apis/scheduling/validation/validation.go`` and the declarative tags of
``staging/src/k8s.io/api/scheduling/v1beta1/types.go``), the PodGroup's status a subresource, and the
pod field ``spec.schedulingGroup`` (``core/v1`` ``PodSchedulingGroup``) immutable, or dropped with the
gate off as ``dropDisabledFields`` drops it."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.registry import podgroups
from tests.simulator.helpers import PODS, Http, pod, started
from tests.simulator.kubectl import Kubectl, needs_kubectl

SIM_OPTIONS: dict[str, Any] = {"seed": 36, "feature_gates": {"GenericWorkload": True}}

BASE = "/apis/scheduling.k8s.io/v1beta1/namespaces/default"
WORKLOADS, PODGROUPS = f"{BASE}/workloads", f"{BASE}/podgroups"


def workload(name: str, *templates: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "Workload", "metadata": {"name": name},
            "spec": {"podGroupTemplates": list(templates) or [gang_template("workers", 4)], **spec}}


def gang_template(name: str, min_count: Any, **more: Any) -> dict[str, Any]:
    return {"name": name, "schedulingPolicy": {"gang": {"minCount": min_count}}, **more}


def pod_group(name: str, policy: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup", "metadata": {"name": name},
            "spec": {"schedulingPolicy": policy if policy is not None else {"gang": {"minCount": 3}}, **spec}}


def causes(body: dict[str, Any]) -> list[tuple[str, str]]:
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def test_a_pod_group_is_created_with_its_disruption_mode_defaulted_and_no_status(api: Http) -> None:
    body = pod_group("pg-defaults")
    body["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "True", "reason": "x",
                                      "message": "", "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    code, got = api("POST", PODGROUPS, body)
    assert code == 201, got
    assert got["spec"]["disruptionMode"] == {"single": {}}
    assert "status" not in got or not got["status"].get("conditions")
    code, read = api("GET", f"{PODGROUPS}/pg-defaults")
    assert code == 200 and read["spec"]["schedulingPolicy"] == {"gang": {"minCount": 3}}


def test_the_status_subresource_writes_conditions_and_a_main_write_keeps_them(api: Http) -> None:
    code, got = api("POST", PODGROUPS, pod_group("pg-status"))
    assert code == 201, got
    cond = {"type": "PodGroupInitiallyScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available", "lastTransitionTime": "2026-12-07T04:00:00Z"}
    got["status"] = {"conditions": [cond]}
    code, written = api("PUT", f"{PODGROUPS}/pg-status/status", got)
    assert code == 200, written
    assert written["status"]["conditions"] == [cond]
    # A main-resource write may change minCount (mutable) but never the status.
    written["spec"]["schedulingPolicy"]["gang"]["minCount"] = 5
    written["status"] = {}
    code, updated = api("PUT", f"{PODGROUPS}/pg-status", written)
    assert code == 200, updated
    assert updated["spec"]["schedulingPolicy"]["gang"]["minCount"] == 5
    assert updated["status"]["conditions"] == [cond]


def test_a_status_write_with_a_bad_condition_is_refused_as_validate_conditions_does(api: Http) -> None:
    code, got = api("POST", PODGROUPS, pod_group("pg-badcond"))
    assert code == 201
    got["status"] = {"conditions": [{"type": "PodGroupInitiallyScheduled", "status": "Maybe"}]}
    code, err = api("PUT", f"{PODGROUPS}/pg-badcond/status", got)
    assert code == 422, err
    assert causes(err) == [
        ("status.conditions[0].status", 'Unsupported value: "Maybe": supported values: "False", "True", "Unknown"'),
        ("status.conditions[0].lastTransitionTime", "Required value"),
        ("status.conditions[0].reason", "Required value")]


# validation.go validatePodGroupSchedulingPolicy / validateGangSchedulingPolicy, and the declarative
# tags (+k8s:minimum=1, +k8s:maximum=1000000000, +k8s:format, union DisruptionMode).
POD_GROUP_CASES = [
    ("policy with neither basic nor gang", {"schedulingPolicy": {}},
     [("spec.schedulingPolicy", 'Invalid value: "": must specify one of: `basic`, `gang`')]),
    ("policy with both basic and gang", {"schedulingPolicy": {"basic": {}, "gang": {"minCount": 2}}},
     [("spec.schedulingPolicy", 'Invalid value: "{`basic`, `gang`}": exactly one of `basic`, `gang` is required, '
                                "but multiple fields are set")]),
    ("gang minCount zero", {"schedulingPolicy": {"gang": {"minCount": 0}}},
     [("spec.schedulingPolicy.gang.minCount", "Required value")]),
    ("gang minCount negative", {"schedulingPolicy": {"gang": {"minCount": -1}}},
     [("spec.schedulingPolicy.gang.minCount", "Invalid value: -1: must be greater than or equal to 1")]),
    ("workloadRef with empty names", {"workloadRef": {"workloadName": "", "templateName": ""}},
     [("spec.workloadRef.workloadName", "Required value"), ("spec.workloadRef.templateName", "Required value")]),
    ("workloadRef invalid template name", {"workloadRef": {"workloadName": "w", "templateName": "temp/late"}},
     [("spec.workloadRef.templateName", 'Invalid value: "temp/late": a lowercase RFC 1123 label must consist of '
                                        "lower case alphanumeric characters or '-', and must start and end with an "
                                        "alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for "
                                        "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]),
    ("disruption mode with both", {"disruptionMode": {"single": {}, "all": {}}},
     [("spec.disruptionMode", 'Invalid value: "{`single`, `all`}": exactly one of `single`, `all` is required, '
                              "but multiple fields are set")]),
    ("composite parent with CompositePodGroup disabled", {"parentCompositePodGroupName": "parent"},
     [("spec.parentCompositePodGroupName", "Forbidden")]),
]


def test_too_high_a_priority_is_invalid_and_the_priority_admission_refuses_it_first(api: Http) -> None:
    """``+k8s:maximum=1000000000`` on ``priority``. Through the API the Priority admission plugin, which
    runs before validation as kube-apiserver's chain does, refuses a priority its class did not give
    (403); the validation's own message is checked on the validator."""
    body = pod_group("pg-too-high", priority=1_000_000_001)
    assert podgroups.validate_pod_group(body, None) == [
        ("spec.priority", "FieldValueInvalid", "Invalid value: 1000000001: must be less than or equal to 1000000000")]
    code, err = api("POST", PODGROUPS, body)
    assert code == 403 and err["reason"] == "Forbidden", err


@pytest.mark.parametrize(("case", "spec", "want"), POD_GROUP_CASES, ids=[c[0] for c in POD_GROUP_CASES])
def test_invalid_pod_groups_are_refused_with_upstreams_messages(api: Http, case: str, spec: dict[str, Any],
                                                                 want: list[tuple[str, str]]) -> None:
    body = pod_group(f"pg-{abs(hash(case)) % 10**8}")
    body["spec"].update(spec)
    code, err = api("POST", PODGROUPS, body)
    assert code == 422, err
    assert err["reason"] == "Invalid"
    assert causes(err) == want
    assert err["message"].startswith(f'PodGroup.scheduling.k8s.io "{body["metadata"]["name"]}" is invalid: ')


def test_fields_behind_disabled_gates_are_dropped_from_a_pod_group(api: Http) -> None:
    body = pod_group("pg-dropped", schedulingConstraints={"topology": [{"key": "zone"}]},
                     resourceClaims=[{"name": "c", "resourceClaimName": "rc"}])
    code, got = api("POST", PODGROUPS, body)
    assert code == 201, got
    assert "schedulingConstraints" not in got["spec"] and "resourceClaims" not in got["spec"]


@pytest.mark.parametrize(("field", "value", "want"), [
    ("disruptionMode", {"all": {}}, ("spec.disruptionMode", 'Invalid value: {"all":{}}: field is immutable')),
    ("workloadRef", {"templateName": "t", "workloadName": "w"},     # shown in the Go struct's field order
     ("spec.workloadRef", 'Invalid value: {"workloadName":"w","templateName":"t"}: field is immutable')),
    ("schedulingPolicy", {"basic": {}}, ("spec.schedulingPolicy.basic", "Invalid value: {}: field is immutable")),
])
def test_a_pod_groups_immutable_fields_may_not_change(api: Http, field: str, value: Any,
                                                       want: tuple[str, str]) -> None:
    name = f"pg-imm-{field.lower()}"
    code, got = api("POST", PODGROUPS, pod_group(name))
    assert code == 201
    got["spec"][field] = value
    code, err = api("PUT", f"{PODGROUPS}/{name}", got)
    assert code == 422, err
    assert want in causes(err)


def test_a_workload_is_created_and_its_templates_may_be_neither_added_nor_removed(api: Http) -> None:
    code, got = api("POST", WORKLOADS, workload("wl-ok", gang_template("a", 2), gang_template("b", 3),
                                                controllerRef={"apiGroup": "batch", "kind": "Job", "name": "j"}))
    assert code == 201, got
    more = copy.deepcopy(got)
    more["spec"]["podGroupTemplates"].append(gang_template("c", 1))
    code, err = api("PUT", f"{WORKLOADS}/wl-ok", more)
    assert code == 422 and ("spec.podGroupTemplates[2]", "Forbidden: items may not be added") in causes(err)
    fewer = copy.deepcopy(got)
    fewer["spec"]["podGroupTemplates"].pop()
    code, err = api("PUT", f"{WORKLOADS}/wl-ok", fewer)
    assert code == 422 and ("spec.podGroupTemplates", "Forbidden: items may not be removed") in causes(err)
    scaled = copy.deepcopy(got)
    scaled["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = 7   # mutable
    code, ok = api("PUT", f"{WORKLOADS}/wl-ok", scaled)
    assert code == 200, ok
    moved = copy.deepcopy(ok)
    moved["spec"]["controllerRef"]["name"] = "other"
    code, err = api("PUT", f"{WORKLOADS}/wl-ok", moved)
    assert code == 422 and causes(err)[0][0] == "spec.controllerRef"


WORKLOAD_CASES = [
    ("no templates", {"podGroupTemplates": []}, [("spec.podGroupTemplates", "Required value: must have at least one item")]),
    ("too many templates", {"podGroupTemplates": [gang_template(f"t{i}", 1) for i in range(9)]},
     [("spec.podGroupTemplates", "Too many: 9: must have at most 8 items")]),
    ("duplicate template names", {"podGroupTemplates": [gang_template("a", 1), gang_template("a", 2)]},
     [("spec.podGroupTemplates[1]", 'Duplicate value: "a"')]),
    ("template without a name", {"podGroupTemplates": [gang_template("", 1)]},
     [("spec.podGroupTemplates[0].name", "Required value")]),
    ("multiple priority configurations",
     {"podGroupTemplates": [gang_template("a", 1, priority=5), gang_template("b", 1, priority=6)]},
     [("spec", "Invalid value: null: detected multiple priority configurations")]),
    ("controllerRef without kind", {"controllerRef": {"name": "j"}}, [("spec.controllerRef.kind", "Required value")]),
    # v1beta1 PodGroupTemplate.preemptionPolicy: +k8s:ifDisabled("PodGroupPreemptionPolicy")=+k8s:forbidden
    ("template preemptionPolicy with PodGroupPreemptionPolicy disabled",
     {"podGroupTemplates": [gang_template("a", 1, preemptionPolicy="Never")]},
     [("spec.podGroupTemplates[0].preemptionPolicy", "Forbidden")]),
]


@pytest.mark.parametrize(("case", "spec", "want"), WORKLOAD_CASES, ids=[c[0] for c in WORKLOAD_CASES])
def test_invalid_workloads_are_refused_with_upstreams_messages(api: Http, case: str, spec: dict[str, Any],
                                                                want: list[tuple[str, str]]) -> None:
    body = workload(f"wl-{abs(hash(case)) % 10**8}")
    body["spec"].update(spec)
    code, err = api("POST", WORKLOADS, body)
    assert code == 422, err
    assert causes(err) == want


def test_the_kinds_are_in_discovery_with_the_gate(api: Http) -> None:
    code, got = api("GET", "/apis/scheduling.k8s.io/v1beta1")
    assert code == 200, got
    names = {r["name"] for r in got["resources"]}
    assert {"workloads", "podgroups", "podgroups/status"} <= names
    assert all(r["namespaced"] for r in got["resources"])


def test_a_pods_scheduling_group_is_validated_and_immutable(api: Http) -> None:
    code, err = api("POST", PODS, pod("sg-bad", schedulingGroup={"podGroupName": "Not_A_Name"}))
    assert code == 422, err
    assert causes(err)[0][0] == "spec.schedulingGroup.podGroupName"
    code, got = api("POST", PODS, pod("sg-ok", schedulingGroup={"podGroupName": "gang-a"}))
    assert code == 201, got
    assert got["spec"]["schedulingGroup"] == {"podGroupName": "gang-a"}
    got["spec"]["schedulingGroup"] = {"podGroupName": "gang-b"}
    code, err = api("PUT", f"{PODS}/sg-ok", got)
    assert code == 422, err
    assert causes(err) == [("spec.schedulingGroup", 'Invalid value: {"podGroupName":"gang-b"}: field is immutable')]


@pytest.fixture(scope="module")
def gate_off() -> Any:
    with started(seed=37) as c:
        yield c


def test_without_the_gate_the_kinds_are_not_served_and_the_pod_field_is_dropped(gate_off: SimulatedCluster) -> None:
    api = Http(gate_off)
    code, _ = api("POST", PODGROUPS, pod_group("pg"))
    assert code == 404
    code, _ = api("GET", "/apis/scheduling.k8s.io/v1beta1")
    assert code == 404
    code, groups = api("GET", "/apis")
    versions = {v["version"] for g in groups["groups"] if g["name"] == "scheduling.k8s.io" for v in g["versions"]}
    assert versions == {"v1"}
    code, got = api("POST", PODS, pod("sg-dropped", schedulingGroup={"podGroupName": "gang-a"}))
    assert code == 201, got
    assert "schedulingGroup" not in got["spec"]


@needs_kubectl
def test_kubectl_applies_and_gets_pod_groups(kubectl: Kubectl) -> None:
    doc = pod_group("kubectl-gang")
    assert "created" in kubectl("apply", "-f", "-", stdin=json.dumps(doc)).stdout
    assert "unchanged" in kubectl("apply", "-f", "-", stdin=json.dumps(doc)).stdout
    lines = kubectl("get", "podgroups").stdout.splitlines()
    # Upstream registers no printer for them: the default table convertor's Name and Created At.
    assert lines[0].split() == ["NAME", "CREATED", "AT"]
    assert any(line.split()[0] == "kubectl-gang" for line in lines[1:])
    got = json.loads(kubectl("get", "podgroup", "kubectl-gang", "-o", "json").stdout)
    assert got["spec"]["disruptionMode"] == {"single": {}}
    assert "created" in kubectl("apply", "-f", "-", stdin=json.dumps(workload("kubectl-wl"))).stdout
    assert "kubectl-wl" in kubectl("get", "workloads.scheduling.k8s.io").stdout


@pytest.fixture(scope="module")
def policy_gate() -> Any:
    with started(seed=38, feature_gates={"GenericWorkload": True, "PodGroupPreemptionPolicy": True}) as c:
        yield c


def test_with_pod_group_preemption_policy_the_field_is_served_defaulted_and_immutable(
        policy_gate: SimulatedCluster) -> None:
    """SetDefaults_PodGroup (PodGroupPreemptionPolicy on): PreemptLowerPriority when unset; only the two
    core policies are valid; like the priority, it does not change."""
    api = Http(policy_gate)
    code, got = api("POST", PODGROUPS, pod_group("pg-default-policy"))
    assert code == 201, got
    assert got["spec"]["preemptionPolicy"] == "PreemptLowerPriority"
    code, never = api("POST", PODGROUPS, pod_group("pg-never", preemptionPolicy="Never"))
    assert code == 201 and never["spec"]["preemptionPolicy"] == "Never"
    code, err = api("POST", PODGROUPS, pod_group("pg-bad", preemptionPolicy="Sometimes"))
    assert code == 422, err
    assert causes(err) == [("spec.preemptionPolicy",
                            'Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"')]
    changed = copy.deepcopy(never)
    changed["spec"]["preemptionPolicy"] = "PreemptLowerPriority"
    code, err = api("PUT", f"{PODGROUPS}/pg-never", changed)
    assert code == 422, err
    assert [f for f, _ in causes(err)] == ["spec.preemptionPolicy"]


def test_with_pod_group_preemption_policy_a_workload_template_takes_one_not_defaulted_and_immutable(
        policy_gate: SimulatedCluster) -> None:
    """v1beta1 PodGroupTemplate.preemptionPolicy (PodGroupPreemptionPolicy on): optional, one of the
    +k8s:enum PreemptionPolicy values, +k8s:immutable; unlike PodGroupSpec's it has no +default."""
    api = Http(policy_gate)
    code, got = api("POST", WORKLOADS, workload("wl-no-policy"))
    assert code == 201, got
    assert "preemptionPolicy" not in got["spec"]["podGroupTemplates"][0]
    code, never = api("POST", WORKLOADS, workload("wl-never", gang_template("w", 2, preemptionPolicy="Never")))
    assert code == 201, never
    assert never["spec"]["podGroupTemplates"][0]["preemptionPolicy"] == "Never"
    code, err = api("POST", WORKLOADS, workload("wl-bad", gang_template("w", 2, preemptionPolicy="Sometimes")))
    assert code == 422, err
    assert causes(err) == [("spec.podGroupTemplates[0].preemptionPolicy",
                            'Unsupported value: "Sometimes": supported values: "Never", "PreemptLowerPriority"')]
    changed = copy.deepcopy(never)
    changed["spec"]["podGroupTemplates"][0]["preemptionPolicy"] = "PreemptLowerPriority"
    code, err = api("PUT", f"{WORKLOADS}/wl-never", changed)
    assert code == 422, err
    assert [f for f, _ in causes(err)] == ["spec.podGroupTemplates[0].preemptionPolicy"]
    unset = copy.deepcopy(never)
    del unset["spec"]["podGroupTemplates"][0]["preemptionPolicy"]
    code, err = api("PUT", f"{WORKLOADS}/wl-never", unset)
    assert code == 422, err
    # minCount stays mutable next to an immutable preemptionPolicy.
    resized = copy.deepcopy(never)
    resized["spec"]["podGroupTemplates"][0]["schedulingPolicy"]["gang"]["minCount"] = 3
    code, got = api("PUT", f"{WORKLOADS}/wl-never", resized)
    assert code == 200, got


PRIORITY_CLASSES = "/apis/scheduling.k8s.io/v1/priorityclasses"


@pytest.mark.parametrize(("name", "class_name", "priority", "code", "want"), [
    # plugin/pkg/admission/priority/admission_test.go, TestAdmitPodGroup (no global default class here)
    ("pod group with explicit priorityClassName, accepted", "pg-nondefault1", None, 201, ("pg-nondefault1", 500)),
    ("pod group with non-existent priorityClassName, rejected", "non-existent", None, 403, None),
    ("pod group with no priorityClassName and no global default, accepted and priority should be zero", None, None,
     201, (None, 0)),
    ("pod group create with pre-set Priority matching computed value, accepted", "pg-nondefault1", 500, 201,
     ("pg-nondefault1", 500)),
    ("pod group create with pre-set Priority not matching computed value, rejected", "pg-nondefault1", 9999, 403,
     None),
])
def test_priority_admission_resolves_a_pod_groups_priority(api: Http, name: str, class_name: str | None,
                                                           priority: int | None, code: int, want: Any) -> None:
    api("POST", PRIORITY_CLASSES, {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                                   "metadata": {"name": "pg-nondefault1"}, "value": 500})
    spec: dict[str, Any] = {}
    if class_name:
        spec["priorityClassName"] = class_name
    if priority is not None:
        spec["priority"] = priority
    pg_name = f"pg-prio-{abs(hash(name)) % 10**8}"
    got_code, got = api("POST", PODGROUPS, pod_group(pg_name, **spec))
    assert got_code == code, got
    if code == 403:
        assert got["reason"] == "Forbidden"
        assert got["message"].startswith(f'podgroups.scheduling.k8s.io "{pg_name}" is forbidden: ')
        return
    assert (got["spec"].get("priorityClassName"), got["spec"]["priority"]) == want


# PodGroupWorkloadExists, the admission plugin that refused (403) a PodGroup naming a missing Workload, a
# missing template or a terminating Workload (plugin/pkg/admission/podgroup/admission.go), was alpha in 1.36
# only: kubernetes/kubernetes#139008 reverted it (plugin, registration and tests) early in the 1.37 cycle, and
# 1.37's v1beta1 PodGroup has no podGroupTemplateRef, the v1alpha2 field it read. So 1.37's kube-apiserver
# creates every one of these. Each row is a case of the removed tests, named as there (its name says 1.36's
# outcome), the reference podGroupTemplateRef.workload{workloadName, podGroupTemplateName} written as
# v1beta1's spec.workloadRef{workloadName, templateName}. The outcome wanted is 1.37's: 201 for all, so the
# simulated cluster is neither stricter nor more lenient than kube-apiserver here.
REMOVED_ADMISSION_CASES: list[tuple[str, dict[str, Any] | None, bool, bool]] = [
    # (upstream file: case as named there, workloadRef, create Workload "test-workload" (template "worker")
    #  first, delete that Workload while a finalizer holds it)
    ("test/integration/scheduler/podgroup/admission/admission_test.go: PodGroup referencing non-existent "
     "Workload is rejected", {"workloadName": "non-existent-workload", "templateName": "worker"}, False, False),
    ("admission_test.go (integration): PodGroup referencing non-existent template is rejected",
     {"workloadName": "test-workload", "templateName": "non-existent-template"}, True, False),
    ("admission_test.go (integration): PodGroup referencing valid Workload and template is accepted",
     {"workloadName": "test-workload", "templateName": "worker"}, True, False),
    ("admission_test.go (integration): PodGroup without templateRef is accepted", None, False, False),
    ("admission_test.go (integration): PodGroup referencing terminating Workload is rejected",
     {"workloadName": "test-workload", "templateName": "worker"}, True, True),
    ("plugin/pkg/admission/podgroup/admission_test.go TestValidate: workload found but template name does "
     "not match", {"workloadName": "test-workload", "templateName": "non-existent-template"}, True, False),
]


@pytest.mark.parametrize(("index", "case"), list(enumerate(REMOVED_ADMISSION_CASES)),
                         ids=[c[0].rsplit(": ", 1)[-1] for c in REMOVED_ADMISSION_CASES])
def test_a_pod_group_naming_a_missing_workload_or_template_is_created_as_in_1_37(
        api: Http, index: int, case: tuple[str, dict[str, Any] | None, bool, bool]) -> None:
    _, ref, with_workload, terminating = case
    ns = f"pg-admission-{index}"     # one namespace per case, as upstream's InitTestSchedulerWithNS gives
    code, got = api("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    assert code == 201, got
    base = f"/apis/scheduling.k8s.io/v1beta1/namespaces/{ns}"
    if with_workload:
        wl = workload("test-workload", gang_template("worker", 3))
        if terminating:
            wl["metadata"]["finalizers"] = ["test.k8s.io/block-deletion"]
        code, got = api("POST", f"{base}/workloads", wl)
        assert code == 201, got
        if terminating:
            code, got = api("DELETE", f"{base}/workloads/test-workload")
            assert code == 200 and got["metadata"].get("deletionTimestamp"), got
    spec: dict[str, Any] = {"workloadRef": ref} if ref is not None else {}
    code, got = api("POST", f"{base}/podgroups", pod_group("pg1", **spec))
    assert code == 201, got
    assert got["spec"].get("workloadRef") == ref
    if terminating:     # let the held Workload go
        code, got = api("PATCH", f"{base}/workloads/test-workload", {"metadata": {"finalizers": None}},
                        ctype="application/merge-patch+json")
        assert code == 200, got
