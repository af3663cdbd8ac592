"""PUT (``handlers/update.py``): a body whose ``metadata.uid`` names another object is that object's
precondition, and the generic store refuses it with etcd3's StorageError in a 409 Conflict."""

from __future__ import annotations

import yaml

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

CMS = "/api/v1/namespaces/default/configmaps"


def test_a_put_that_changes_the_uid_is_a_conflict(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, cm = api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "uid"},
                                 "data": {"a": "1"}})
    assert code == 201
    uid = cm["metadata"]["uid"]
    code, out = api("PUT", f"{CMS}/uid", {**cm, "metadata": {**cm["metadata"], "uid": "not-the-uid"},
                                          "data": {"a": "2"}})
    assert code == 409 and out["reason"] == "Conflict"
    assert out["message"] == (
        'Operation cannot be fulfilled on configmaps "uid": StorageError: invalid object, Code: 4, '
        'Key: /registry/configmaps/default/uid, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: '
        f'UID in precondition: not-the-uid, UID in object meta: {uid}')
    assert out["details"] == {"name": "uid", "kind": "configmaps"}
    assert api("GET", f"{CMS}/uid")[1]["data"] == {"a": "1"}
    # the object's own uid, or none, is no obstacle
    assert api("PUT", f"{CMS}/uid", {**cm, "data": {"a": "3"}})[0] == 200
    meta = {k: v for k, v in cm["metadata"].items() if k not in ("uid", "resourceVersion")}
    assert api("PUT", f"{CMS}/uid", {**cm, "metadata": meta, "data": {"a": "4"}})[0] == 200


@needs_kubectl
def test_kubectl_replace_of_a_recreated_object_is_refused(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    api = Http(sim)
    code, old = api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "again"}})
    assert code == 201
    api("DELETE", f"{CMS}/again")
    api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "again"}})
    stale = {**old, "metadata": {k: v for k, v in old["metadata"].items() if k != "resourceVersion"}}
    p = kubectl("replace", "-f", "-", stdin=yaml.safe_dump(stale), check=False)
    assert p.returncode != 0
    assert f"Precondition failed: UID in precondition: {old['metadata']['uid']}" in p.stderr


def test_a_patch_that_changes_the_uid_is_invalid(sim: SimulatedCluster) -> None:
    api = Http(sim)
    code, cm = api("POST", CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "uid-patch"}})
    assert code == 201
    code, out = api("PATCH", f"{CMS}/uid-patch", {"metadata": {"uid": "other"}, "data": {"a": "1"}},
                    ctype="application/merge-patch+json")
    assert code == 422
    assert out["message"] == 'ConfigMap "uid-patch" is invalid: metadata.uid: Invalid value: "other": field is immutable'
    got = api("GET", f"{CMS}/uid-patch")[1]
    assert got["metadata"]["uid"] == cm["metadata"]["uid"] and "data" not in got
    # its own uid is no change
    assert api("PATCH", f"{CMS}/uid-patch", {"metadata": {"uid": cm["metadata"]["uid"]}, "data": {"a": "1"}},
               ctype="application/merge-patch+json")[0] == 200
