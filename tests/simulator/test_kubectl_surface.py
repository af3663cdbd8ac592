"""The real kubectl 1.37 against the simulated cluster, for what a new user tries first (issue #16):
``apply -k manifests/`` and ``delete -k``, ``diff``, ``explain``, the ``create`` generators (typed clients
sending protobuf), ``auth can-i``/``whoami``, strict field validation, and the printer columns."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import yaml

from tests.simulator.kubectl import Kubectl, needs_kubectl

REPO = Path(__file__).resolve().parents[2]
pytestmark = needs_kubectl


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 11}


def header(out: str) -> list[str]:
    return out.splitlines()[0].split()


def test_apply_k_manifests_leaves_every_object_and_delete_k_removes_them(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(REPO / "crds"))
    p = kubectl("apply", "-k", str(REPO / "manifests"))
    built = [d for d in yaml.safe_load_all(kubectl("kustomize", str(REPO / "manifests")).stdout) if d]
    assert len(p.stdout.splitlines()) == len(built) and "created" in p.stdout
    names = kubectl("get", "-k", str(REPO / "manifests"), "-o", "name").stdout.split()
    assert len(names) == len(built) and "serviceaccount/kopf-scheduler" in names \
        and "deployment.apps/kopf-scheduler" in names
    # Applied again, only the PDB is "configured": its selector's patch strategy is replace, so
    # kubectl's three-way patch is never empty for it (as against kube-apiserver).
    again = kubectl("apply", "-k", str(REPO / "manifests")).stdout.splitlines()
    assert [line for line in again if not line.endswith(" unchanged")] == \
        ["poddisruptionbudget.policy/kopf-scheduler configured"]
    assert kubectl("diff", "-k", str(REPO / "manifests"), check=False).returncode == 0
    gone = kubectl("delete", "-k", str(REPO / "manifests"))
    assert "not found" not in gone.stderr and len(gone.stdout.splitlines()) == len(built)
    deadline = time.time() + 10
    while kubectl("get", "namespace", "kopf-scheduler", check=False).returncode == 0 and time.time() < deadline:
        time.sleep(0.2)
    assert "NotFound" in kubectl("get", "namespace", "kopf-scheduler", check=False).stderr
    assert "No resources found" in kubectl("get", "clusterrolebinding", "-l",
                                           "app.kubernetes.io/name=kopf-scheduler").stderr


def test_diff_shows_a_change(kubectl: Kubectl) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "diffed"}, "data": {"a": "1"}}
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(cm))
    cm["data"]["a"] = "2"
    p = kubectl("diff", "-f", "-", stdin=yaml.safe_dump(cm), check=False)
    assert p.returncode == 1 and "-  a: \"1\"" in p.stdout and "+  a: \"2\"" in p.stdout


def test_explain_reads_the_openapi_of_crds_and_built_in_kinds(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", str(REPO / "crds"))
    out = kubectl("explain", "sp.spec").stdout
    assert "KIND:       SchedulingProfile" in out and "extenders\t<[]Object>" in out
    assert "map[string]string" in kubectl("explain", "pod.spec.nodeSelector").stdout
    assert "replicas\t<integer>" in kubectl("explain", "deployment.spec").stdout


def test_create_generators_send_protobuf_and_are_read(kubectl: Kubectl) -> None:
    kubectl("create", "namespace", "gen")
    for args in (["configmap", "cm1", "--from-literal=a=b", "--from-literal=c=d"],
                 ["secret", "generic", "s1", "--from-literal=a=b"],
                 ["job", "j1", "--image=busybox:1.36"],
                 ["deployment", "d1", "--image=nginx:1.27", "--replicas=2"],
                 ["service", "clusterip", "svc1", "--tcp=80:8080"],
                 ["poddisruptionbudget", "p1", "--selector=app=x", "--min-available=1"]):
        kubectl("create", *args, "-n", "gen")
    kubectl("create", "priorityclass", "pc-gen", "--value=10")
    assert kubectl("get", "configmap", "cm1", "-n", "gen", "-o", "jsonpath={.data}").stdout == '{"a":"b","c":"d"}'
    assert kubectl("get", "secret", "s1", "-n", "gen", "-o", "jsonpath={.data.a}{.type}").stdout == "Yg==Opaque"
    assert kubectl("get", "priorityclass", "pc-gen", "-o", "jsonpath={.value}").stdout == "10"
    # The printer columns kube-apiserver's Table carries for each kind.
    want = {"configmaps": ["NAME", "DATA", "AGE"], "secrets": ["NAME", "TYPE", "DATA", "AGE"],
            "jobs": ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
            "deployments": ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"],
            "services": ["NAME", "TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"],
            "poddisruptionbudgets": ["NAME", "MIN", "AVAILABLE", "MAX", "UNAVAILABLE", "ALLOWED", "DISRUPTIONS",
                                     "AGE"]}
    for kind, columns in want.items():
        assert header(kubectl("get", kind, "-n", "gen").stdout) == columns, kind
    svc = kubectl("get", "service", "svc1", "-n", "gen").stdout.splitlines()[1].split()
    assert svc[1] == "ClusterIP" and svc[2].startswith("10.9") and svc[4] == "80/TCP"
    assert kubectl("get", "deployment", "d1", "-n", "gen").stdout.splitlines()[1].split()[1] == "0/2"
    assert kubectl("get", "job", "j1", "-n", "gen").stdout.splitlines()[1].split()[1:3] == ["Running", "0/1"]


def test_auth_can_i_and_whoami(kubectl: Kubectl) -> None:
    assert kubectl("auth", "can-i", "create", "pods").stdout.strip() == "yes"
    assert "kopf-scheduler-sim-admin" in kubectl("auth", "whoami").stdout


def test_unknown_fields_are_refused_by_default_and_dropped_without_validation(kubectl: Kubectl) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typo"},
           "spec": {"nodeSelectr": {"a": "b"}, "containers": [{"name": "c", "image": "busybox:1.36"}]}}
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump(pod), check=False)
    assert p.returncode != 0
    assert ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field '
            '"spec.nodeSelectr"') in p.stderr
    kubectl("apply", "--validate=false", "-f", "-", stdin=yaml.safe_dump(pod))
    # (the last-applied annotation keeps what was sent; the object does not)
    assert "nodeSelectr" not in kubectl("get", "pod", "typo", "-o", "jsonpath={.spec}").stdout


def test_unknown_fields_are_warnings_with_validate_warn(kubectl: Kubectl) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "warned"},
           "spec": {"nodeSelectr": {"a": "b"}, "containers": [{"name": "c", "image": "busybox:1.36"}]}}
    p = kubectl("apply", "--validate=warn", "-f", "-", stdin=yaml.safe_dump(pod))
    assert 'Warning: unknown field "spec.nodeSelectr"' in p.stderr
    assert "nodeSelectr" not in kubectl("get", "pod", "warned", "-o", "jsonpath={.spec}").stdout
    ignored = {**pod, "metadata": {"name": "ignored"}}
    p = kubectl("apply", "--validate=ignore", "-f", "-", stdin=yaml.safe_dump(ignored))
    assert "Warning" not in p.stderr
