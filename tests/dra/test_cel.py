"""``scheduler.dra.cel``: DRA's CEL environment (device.driver, attributes and capacity by domain,
Kubernetes' quantity and semver libraries), compile errors as values, runtime errors as CELError.
Expressions from upstream's ``cel/compile_test.go`` where they run on this engine."""

from __future__ import annotations

import pytest

from scheduler.dra.cel import CELError, compile_expression, device_env
from scheduler.model.dra import parse_resource_slice

DEVICE = parse_resource_slice({"metadata": {"name": "s"}, "spec": {
    "driver": "dra.example.com", "pool": {"name": "p", "generation": 1, "resourceSliceCount": 1}, "nodeName": "n",
    "devices": [{"name": "d", "attributes": {
        "name": {"string": "x"}, "count": {"int": 3}, "enabled": {"bool": True},
        "driverVersion": {"version": "1.2.3-alpha.1"}, "other.example.com/foo": {"int": 2}},
        "capacity": {"memory": {"value": "1Gi"}}}]}})
ENV = device_env(DEVICE.driver, DEVICE.devices[0])


@pytest.mark.parametrize(("expression", "want"), [
    ('device.driver == "dra.example.com"', True),
    ('device.attributes["dra.example.com"].name == "x"', True),
    ('device.attributes["dra.example.com"].count > 2', True),
    ('device.attributes["dra.example.com"].enabled', True),
    ('device.attributes["other.example.com"].foo == 2', True),
    ('"other.example.com" in device.attributes', True),
    ('has(device.attributes["no-such-domain"].foo)', False),
    ('device.capacity["dra.example.com"].memory.compareTo(quantity("1Gi")) == 0', True),
    ('device.capacity["dra.example.com"].memory == quantity("1024Mi")', True),
    ('device.capacity["dra.example.com"].memory.isGreaterThan(quantity("1G"))', True),
    ('device.capacity["dra.example.com"].memory.isLessThan(quantity("1G"))', False),
    ('quantity("1500m").add(quantity("500m")).asInteger() == 2', True),
    ('quantity("1.5").isInteger()', False),
    ('isQuantity("1Gi") && !isQuantity("one")', True),
    ('device.attributes["dra.example.com"].driverVersion.isLessThan(semver("1.2.3"))', True),
    ('device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.2.3-alpha"))', True),
    ('device.attributes["dra.example.com"].driverVersion.major() == 1', True),
    ('semver("1.0.0").compareTo(semver("1.0.1")) == -1 && isSemver("1.0.0") && !isSemver("1.0")', True),
    ('device.attributes["dra.example.com"].name.lowerAscii() == "x"', True),
])
def test_matches(expression: str, want: bool) -> None:
    compiled = compile_expression(expression)
    assert compiled.error == ""
    assert compiled.device_matches(ENV) is want


@pytest.mark.parametrize(("expression", "error"), [
    ("1 +", "compilation failed: Failed to parse expression"),
    ("nosuch(device)", "compilation failed: undeclared reference to 'nosuch'"),
    ("", "compilation failed: empty expression"),
])
def test_compile_errors(expression: str, error: str) -> None:
    assert compile_expression(expression).error.startswith(error)


@pytest.mark.parametrize(("expression", "error"), [
    ('device.attributes["dra.example.com"].nosuch == 1', "no such key: nosuch"),
    ("device.driver", "CEL result of type string could not be converted to bool"),
    ('quantity("lots") == quantity("1")', "quantities must match the regular expression"),
])
def test_runtime_errors(expression: str, error: str) -> None:
    with pytest.raises(CELError, match="^" + error.replace("(", r"\(")):
        compile_expression(expression).device_matches(ENV)


def test_compiled_once() -> None:
    assert compile_expression("device.driver != ''") is compile_expression("device.driver != ''")
