"""Server-side dry runs (``dryRun=All``) change nothing, for every verb kubectl sends them with (issue #16).

``kubectl create|apply|label|replace --dry-run=server`` put ``dryRun=All`` in the query; ``kubectl delete
--dry-run=server`` puts it in the DeleteOptions body, which kube-apiserver then reads instead of the
query. Each answer is the object as it would be, and the store is untouched: same resourceVersion, and
no watch event."""

from __future__ import annotations

from typing import Any

import yaml

from scheduler.simulator import SimulatedCluster
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

CM = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kept"}, "data": {"a": "1"}}


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 16}


def stored_rv(api: Http, name: str) -> str | None:
    code, body = api("GET", f"/api/v1/namespaces/default/configmaps/{name}")
    return str(body["metadata"]["resourceVersion"]) if code == 200 else None


@needs_kubectl
def test_kubectl_dry_runs_leave_the_object_as_it_was(sim: SimulatedCluster, kubectl: Kubectl) -> None:
    api = Http(sim)
    out = kubectl("create", "--dry-run=server", "-o", "yaml", "-f", "-", stdin=yaml.safe_dump(CM)).stdout
    assert yaml.safe_load(out)["metadata"]["uid"]             # answered as created (defaulted, with a uid) ...
    assert stored_rv(api, "kept") is None                     # ... and not stored
    kubectl("create", "-f", "-", stdin=yaml.safe_dump(CM))
    rv = stored_rv(api, "kept")
    assert "(server dry run)" in kubectl("delete", "configmap", "kept", "--dry-run=server").stdout
    assert "(server dry run)" in kubectl("label", "configmap", "kept", "x=y", "--dry-run=server").stdout
    changed = {**CM, "data": {"a": "2"}}
    kubectl("replace", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(changed))
    kubectl("apply", "--dry-run=server", "-f", "-", stdin=yaml.safe_dump(changed))
    assert stored_rv(api, "kept") == rv
    assert api("GET", "/api/v1/namespaces/default/configmaps/kept")[1]["data"] == {"a": "1"}


def test_delete_options_in_the_body_are_read_instead_of_the_query(sim: SimulatedCluster) -> None:
    api = Http(sim)
    api("POST", "/api/v1/namespaces/default/configmaps", {**CM, "metadata": {"name": "body-dry"}})
    rv = stored_rv(api, "body-dry")
    code, _ = api("DELETE", "/api/v1/namespaces/default/configmaps/body-dry",
                  {"kind": "DeleteOptions", "apiVersion": "v1", "dryRun": ["All"]})
    assert code == 200 and stored_rv(api, "body-dry") == rv
    # A body without dryRun is a real delete, whatever the query says.
    code, _ = api("DELETE", "/api/v1/namespaces/default/configmaps/body-dry?dryRun=All",
                  {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": "Background"})
    assert code == 200 and stored_rv(api, "body-dry") is None


def test_a_dry_run_other_than_all_is_refused_on_every_write(sim: SimulatedCluster) -> None:
    api = Http(sim)
    cms = "/api/v1/namespaces/default/configmaps"
    api("POST", cms, {**CM, "metadata": {"name": "foo-dry"}})
    rv = stored_rv(api, "foo-dry")

    def refused(kind: str, code: int, out: Any) -> None:
        assert code == 422, out
        assert out["message"] == (f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: '
                                  '[]string{"Foo"}: supported values: "All"')
        assert out["details"] == {"group": "meta.k8s.io", "kind": kind, "causes": [{
            "reason": "FieldValueNotSupported", "message": 'Unsupported value: []string{"Foo"}: supported values: '
                                                           '"All"', "field": "dryRun"}]}

    refused("CreateOptions", *api("POST", cms, {**CM, "metadata": {"name": "foo-new"}}, params={"dryRun": "Foo"}))
    assert stored_rv(api, "foo-new") is None
    changed = {**CM, "metadata": {"name": "foo-dry"}, "data": {"a": "2"}}
    refused("UpdateOptions", *api("PUT", f"{cms}/foo-dry", changed, params={"dryRun": "Foo"}))
    refused("PatchOptions", *api("PATCH", f"{cms}/foo-dry", {"data": {"a": "3"}}, params={"dryRun": "Foo"},
                                 ctype="application/merge-patch+json"))
    refused("PatchOptions", *api("PATCH", f"{cms}/foo-dry", changed, params={"dryRun": "Foo", "fieldManager": "t"},
                                 ctype="application/apply-patch+yaml"))
    refused("DeleteOptions", *api("DELETE", f"{cms}/foo-dry", params={"dryRun": "Foo"}))
    refused("DeleteOptions", *api("DELETE", f"{cms}/foo-dry", {"kind": "DeleteOptions", "apiVersion": "v1",
                                                               "dryRun": ["Foo"]}))
    refused("DeleteOptions", *api("DELETE", cms, params={"dryRun": "Foo"}))
    assert stored_rv(api, "foo-dry") == rv
    assert api("POST", cms, {**CM, "metadata": {"name": "foo-new"}}, params={"dryRun": "All"})[0] == 201
    assert stored_rv(api, "foo-new") is None
