"""``immutable: true`` ConfigMaps and Secrets (``registry/core/immutable.py``): their data and the flag
itself are refused on update, patch and apply, as ``ValidateConfigMapUpdate`` / ``ValidateSecretUpdate``
refuse them; deleting them still works."""

from __future__ import annotations

import copy

import yaml

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

CMS = "/api/v1/namespaces/default/configmaps"
SECRETS = "/api/v1/namespaces/default/secrets"
MERGE = "application/merge-patch+json"
IMMUTABLE = "Forbidden: field is immutable when `immutable` is set"


def test_an_immutable_config_map_refuses_changes_and_can_be_deleted(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, cm = api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "frozen"},
                                 "data": {"a": "1"}, "immutable": True})
    assert code == 201
    changed = copy.deepcopy(cm)
    changed["data"]["a"] = "2"
    code, out = api("PUT", f"{CMS}/frozen", changed)
    assert code == 422
    assert out["message"] == 'ConfigMap "frozen" is invalid: data: ' + IMMUTABLE
    code, out = api("PATCH", f"{CMS}/frozen", {"immutable": False, "binaryData": {"b": "AA=="}}, ctype=MERGE)
    assert code == 422
    assert [(c["field"], c["message"]) for c in out["details"]["causes"]] == [
        ("immutable", IMMUTABLE), ("binaryData", IMMUTABLE)]
    assert api("GET", f"{CMS}/frozen")[1]["data"] == {"a": "1"}
    # metadata may still change
    assert api("PATCH", f"{CMS}/frozen", {"metadata": {"labels": {"x": "y"}}}, ctype=MERGE)[0] == 200
    assert api("DELETE", f"{CMS}/frozen")[0] == 200
    assert api("GET", f"{CMS}/frozen")[0] == 404


def test_an_immutable_secret_refuses_string_data(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, _ = api("POST", SECRETS, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "frozen"},
                                    "stringData": {"k": "v"}, "immutable": True})
    assert code == 201
    code, out = api("PATCH", f"{SECRETS}/frozen", {"stringData": {"k": "w"}}, ctype=MERGE)
    assert code == 422 and out["message"] == 'Secret "frozen" is invalid: data: ' + IMMUTABLE
    code, out = api("PATCH", f"{SECRETS}/frozen", {"type": "kubernetes.io/tls"}, ctype=MERGE)
    assert code == 422 and out["details"]["causes"][0]["message"] == ('Invalid value: "kubernetes.io/tls": '
                                                                      'field is immutable')
    assert api("DELETE", f"{SECRETS}/frozen")[0] == 200


def test_a_mutable_config_map_may_become_immutable(sim: SimulatedCluster) -> None:
    api = Http(sim)
    api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "thaw"}, "data": {"a": "1"}})
    assert api("PATCH", f"{CMS}/thaw", {"data": {"a": "2"}, "immutable": True}, ctype=MERGE)[0] == 200
    assert api("PATCH", f"{CMS}/thaw", {"data": {"a": "3"}}, ctype=MERGE)[0] == 422


@needs_kubectl
def test_kubectl_apply_to_an_immutable_config_map_is_refused(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied"}, "data": {"a": "1"},
          "immutable": True}
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(cm))
    p = kubectl("apply", "-f", "-", stdin=yaml.safe_dump({**cm, "data": {"a": "2"}}), check=False)
    assert p.returncode != 0 and "data: Forbidden: field is immutable when `immutable` is set" in p.stderr
    kubectl("delete", "configmap", "applied")
