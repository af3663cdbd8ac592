"""``fieldValidation=Strict`` (kubectl's default) refuses unknown fields with kube-apiserver's answers
(issue #16), for built-in kinds and custom resources alike:

- create and update: decoding the body fails, ``transformDecodeError``'s 400
  ``Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "spec.x"``;
- patch (``kubectl apply`` to an existing object): the patched object fails to decode, and the patcher
  answers 422 Invalid on the field ``patch``, showing a strategic merge patch as Go prints its map
  (kubectl: ``The request is invalid: patch: Invalid value: "map[...]": strict decoding error: ...``).

Without validation (``--validate=false``, ``fieldValidation=Ignore``) the fields are dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.simulator import SimulatedCluster
from scheduler.simulator.handlers.patch import _go_float, go_value
from tests.simulator.helpers import Http
from tests.simulator.kubectl import Kubectl, needs_kubectl

REPO = Path(__file__).resolve().parents[2]
POD: dict[str, Any] = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "typo"},
       "spec": {"containers": [{"name": "c", "image": "busybox:1.36"}]}}
SP: dict[str, Any] = {"apiVersion": "scheduling.kopf-scheduler.io/v1alpha1", "kind": "SchedulingProfile",
      "metadata": {"name": "typo"}, "spec": {"schedulerName": "typo"}}
SPS = "/apis/scheduling.kopf-scheduler.io/v1alpha1/schedulingprofiles"
STRICT = {"fieldValidation": "Strict"}


# The simulated cluster this module shares (tests/simulator/conftest.py: ``sim``).
SIM_OPTIONS: dict[str, Any] = {"seed": 6}


@pytest.fixture(scope="module")
def sim(sim: SimulatedCluster) -> SimulatedCluster:
    """The shared cluster, with the SchedulingProfile CRD installed."""
    Http(sim)("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
              yaml.safe_load((REPO / "crds" / "schedulingprofile.yaml").read_text()))
    return sim


def with_spec(obj: dict[str, Any], **fields: Any) -> str:
    return yaml.safe_dump({**obj, "spec": {**obj["spec"], **fields}})


@needs_kubectl
def test_kubectl_apply_to_an_existing_pod_gets_the_patchers_invalid(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(POD))
    p = kubectl("apply", "-f", "-", stdin=with_spec(POD, nodeSelectr={"a": "b"}), check=False)
    assert p.returncode != 0
    assert 'The request is invalid: patch: Invalid value: "map[metadata:map[annotations:map[' in p.stderr
    assert 'spec:map[nodeSelectr:map[a:b]]]": strict decoding error: unknown field "spec.nodeSelectr"' in p.stderr
    assert "nodeSelectr" not in kubectl("get", "pod", "typo", "-o", "json").stdout


@needs_kubectl
def test_kubectl_create_and_apply_of_a_custom_resource(kubectl: Kubectl) -> None:
    p = kubectl("apply", "-f", "-", stdin=with_spec(SP, percentageOfNodesToScor=50), check=False)
    assert ('SchedulingProfile in version "v1alpha1" cannot be handled as a SchedulingProfile: strict decoding '
            'error: unknown field "spec.percentageOfNodesToScor"') in p.stderr
    kubectl("apply", "-f", "-", stdin=yaml.safe_dump(SP))
    p = kubectl("apply", "-f", "-", stdin=with_spec(SP, percentageOfNodesToScor=50), check=False)
    assert p.returncode != 0 and "The request is invalid: patch: Invalid value: " in p.stderr
    assert 'strict decoding error: unknown field "spec.percentageOfNodesToScor"' in p.stderr
    kubectl("apply", "--validate=false", "-f", "-", stdin=with_spec(SP, percentageOfNodesToScor=50))
    assert "percentageOfNodesToScor" not in kubectl("get", "sp", "typo", "-o", "jsonpath={.spec}").stdout


def test_the_answers_over_http(sim: SimulatedCluster) -> None:
    api = Http(sim)
    pod = {**POD, "metadata": {"name": "raw"}}
    code, body = api("POST", "/api/v1/namespaces/default/pods", yaml.safe_load(with_spec(pod, a=1, b=2)),
                     params=STRICT)
    assert (code, body["reason"]) == (400, "BadRequest")
    assert body["message"] == ('Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
                               'unknown field "spec.a", unknown field "spec.b"')
    assert api("POST", "/api/v1/namespaces/default/pods", pod, params=STRICT)[0] == 201
    code, body = api("PATCH", "/api/v1/namespaces/default/pods/raw", {"spec": {"x": 1.5}},
                     ctype="application/strategic-merge-patch+json", params=STRICT)
    shown = 'Invalid value: "map[spec:map[x:1.5]]": strict decoding error: unknown field "spec.x"'
    assert (code, body["reason"], body["message"]) == (422, "Invalid", f' "" is invalid: patch: {shown}')
    assert body["details"] == {"causes": [{"reason": "FieldValueInvalid", "message": shown, "field": "patch"}]}
    # A merge patch shows the patched object's JSON; without Strict the field is dropped.
    code, body = api("PATCH", "/api/v1/namespaces/default/pods/raw", {"spec": {"x": 1}},
                     ctype="application/merge-patch+json", params=STRICT)
    assert code == 422 and body["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\"')
    code, body = api("PATCH", "/api/v1/namespaces/default/pods/raw", {"spec": {"x": 1}},
                     ctype="application/merge-patch+json")
    assert code == 200 and "x" not in body["spec"]
    code, body = api("PUT", f"{SPS}/absent", yaml.safe_load(with_spec({**SP, "metadata": {"name": "absent"}},
                                                                         y=True)), params=STRICT)
    assert (code, body["message"]) == (400, 'SchedulingProfile in version "v1alpha1" cannot be handled as a '
                                             'SchedulingProfile: strict decoding error: unknown field "spec.y"')


@pytest.mark.parametrize(("value", "printed"), [
    ({"b": [1, "x", None, True, False], "a": {}}, "map[a:map[] b:[1 x <nil> true false]]"),
    (1e6, "1e+06"), (123456.0, "123456"), (1234567.0, "1.234567e+06"), (0.0001, "0.0001"),
    (1.234e-05, "1.234e-05"), (100.0, "100"), (-2.5, "-2.5"), (-0.0, "-0"), (12345.678, "12345.678"),
])
def test_go_value_prints_as_fmt_does(value: object, printed: str) -> None:
    assert (go_value(value) if not isinstance(value, float) else _go_float(value)) == printed
