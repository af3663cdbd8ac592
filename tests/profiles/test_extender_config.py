"""``spec.extenders`` validated as upstream's ``validateExtenders``
(``pkg/scheduler/apis/config/validation``), with its messages. ``VALIDATE_V1`` ports the extender
scenarios of ``validation_test.go`` TestValidateKubeSchedulerConfigurationV1 (its ``validConfig``
has one extender, ``{prioritizeVerb: prioritize, weight: 1}``; each scenario changes it)."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.errors import ProfileError
from scheduler.profiles.compile import parse_spec
from scheduler.profiles.extender_config import is_extended_resource_name, parse_go_duration

VALID = {"urlPrefix": "http://127.0.0.1:8888", "prioritizeVerb": "prioritize", "weight": 1}


def parse(extenders: list[dict[str, Any]]) -> Any:
    return parse_spec({"schedulerName": "s", "extenders": extenders})


VALIDATE_V1: list[tuple[str, list[dict[str, Any]], str]] = [
    ("good", [VALID], ""),
    ("extender-negative-weight", [{**VALID, "weight": -1}],
     "spec: extenders[0].weight: Invalid value: -1: must have a positive weight applied to it"),
    # Upstream's names ("foo") are not extended resource names either: its aggregate lists both.
    ("extender-duplicate-managed-resources",
     [{**VALID, "managedResources": [{"name": "foo", "ignoredByScheduler": False},
                                     {"name": "foo", "ignoredByScheduler": False}]}],
     'spec: extenders[0].managedResources[0].name: Invalid value: "foo": is an invalid extended resource name; '
     'extenders[0].managedResources[1].name: Invalid value: "foo": is an invalid extended resource name; '
     'extenders[0].managedResources[1].name: Invalid value: "foo": duplicate extender managed resource name'),
    ("extender-duplicate-bind",
     [{**VALID, "bindVerb": "foo"}, {"urlPrefix": "http://127.0.0.1:8889", "prioritizeVerb": "prioritize",
                                     "bindVerb": "bar", "weight": 1}],
     'spec: extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind'),
]


@pytest.mark.parametrize(("name", "extenders", "error"), VALIDATE_V1, ids=[c[0] for c in VALIDATE_V1])
def test_validate_kube_scheduler_configuration_v1_extenders(name: str, extenders: list[dict[str, Any]],
                                                            error: str) -> None:
    if not error:
        assert parse(extenders).extenders[0].weight == 1
        return
    with pytest.raises(ProfileError) as e:
        parse(extenders)
    assert str(e.value) == error


def test_weight_matters_only_for_a_prioritizer() -> None:
    assert parse([{"urlPrefix": "http://x", "filterVerb": "filter"}]).extenders[0].weight == 0
    with pytest.raises(ProfileError, match=r"extenders\[0\].weight: Invalid value: 0: must have a positive weight"):
        parse([{"urlPrefix": "http://x", "prioritizeVerb": "p"}])


@pytest.mark.parametrize(("name", "extended"), [
    ("example.com/gpu", True), ("nvidia.com/gpu", True), ("foo", False), ("cpu", False),
    ("kubernetes.io/foo", False), ("example.kubernetes.io/foo", False), ("requests.example.com/foo", False),
    ("example.com/-bad", False), ("Example.com/gpu", False),
])
def test_is_extended_resource_name(name: str, extended: bool) -> None:
    """v1helper.IsExtendedResourceName: outside kubernetes.io, with a domain, quota-nameable."""
    assert is_extended_resource_name(name) is extended


def test_a_name_that_is_no_qualified_name_gets_is_qualified_names_reasons() -> None:
    with pytest.raises(ProfileError) as e:
        parse([{"urlPrefix": "http://x", "managedResources": [{"name": "a/b/c"}]}])
    assert str(e.value) == (
        "spec: extenders[0].managedResources[0].name: Invalid value: \"a/b/c\": a qualified name must consist of "
        "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. "
        "'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?"
        "[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


@pytest.mark.parametrize(("text", "seconds", "error"), [
    ("30s", 30.0, ""), ("1m30s", 90.0, ""), ("1.5h", 5400.0, ""), ("300ms", 0.3, ""), ("0", 0.0, ""),
    ("5", None, 'time: missing unit in duration "5"'), ("5d", None, 'time: unknown unit "d" in duration "5d"'),
    ("", None, 'time: invalid duration ""'), ("s", None, 'time: invalid duration "s"'),
])
def test_http_timeout_is_a_go_duration(text: str, seconds: float | None, error: str) -> None:
    if error:
        with pytest.raises(ValueError, match=f"^{error}$"):
            parse_go_duration(text)
        with pytest.raises(ProfileError, match=r"^spec.extenders\[0\].httpTimeout: "):
            parse([{"urlPrefix": "http://x", "httpTimeout": text}])
        return
    assert parse_go_duration(text) == pytest.approx(seconds)


@pytest.mark.parametrize(("entry", "field", "message"), [
    ({"urlPrefix": "127.0.0.1:8888"}, "spec.extenders[0].urlPrefix", "must be an http:// or https:// URL"),
    ({"urlPrefix": "http://x", "httpTimeout": "-1s"}, "spec.extenders[0].httpTimeout", "must not be negative"),
    ({"urlPrefix": "http://x", "tlsConfig": {"caData": "not base64!"}}, "spec.extenders[0].tlsConfig.caData",
     "illegal base64 data in caData"),
    ({"urlPrefix": "http://x", "filterVerb": "f", "bogus": 1}, "spec.extenders[0].bogus", "unknown field"),
    ({}, "spec.extenders[0].urlPrefix", "Field required"),
])
def test_beyond_upstream_what_could_never_be_called_is_refused(entry: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ProfileError) as e:
        parse([entry])
    assert e.value.field == field and message in str(e.value)


def test_the_whole_upstream_shape_is_accepted() -> None:
    full = {"urlPrefix": "https://gpu.example.com/scheduler", "filterVerb": "filter", "preemptVerb": "preempt",
            "prioritizeVerb": "prioritize", "bindVerb": "bind", "weight": 5, "enableHTTPS": True,
            "tlsConfig": {"insecure": False, "serverName": "gpu", "certFile": "/c", "keyFile": "/k", "caFile": "/ca",
                          "certData": "Y2VydA==", "keyData": "a2V5", "caData": "Y2E="},
            "httpTimeout": "30s", "nodeCacheCapable": True,
            "managedResources": [{"name": "example.com/gpu", "ignoredByScheduler": True}], "ignorable": True}
    ext = parse([full]).extenders[0]
    assert ext.model_dump(by_alias=True, mode="json") == full and ext.timeout == 30.0
