"""``scheduler.dra.cel``: DRA's CEL environment (device.driver, attributes and capacity by domain,
Kubernetes' quantity and semver libraries), compile errors as values, runtime errors as CELError.
Expressions from upstream's ``cel/compile_test.go`` where they run on this engine, and its worst-case
cost estimates (``scheduler.dra.celcost``)."""

from __future__ import annotations

import time

import pytest

from scheduler.dra.allocator import SelectorCache
from scheduler.dra.cel import CELError, CompiledExpression, compile_expression, device_env
from scheduler.dra.celcost import CEL_SELECTOR_MAX_COST, estimate_cost
from scheduler.model.dra import parse_resource_slice
from tests.dra.expressions import nested_comprehensions

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


# Upstream's worst-case cost estimates (dynamic-resource-allocation/cel/compile_test.go, testcases'
# expectCost), case by case: (case, expression, cost). Left out: "bind" (cel.bind), the
# "includes-*" cases (DRAListTypeAttributes' function) and "allow_multiple_allocations*"
# (DRAConsumableCapacity's field), which this environment does not have. Attributes are at most
# 64 long either way (maxElementsListTypeEnabled: max(DeviceAttributeMaxValueLength,
# ResourceSliceMaxAttributeValuesPerDevice)), so the list-typed cases' costs hold for scalars.
_ALL = """
device.capacity["dra.example.com"].quantity.isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"].bool &&
device.attributes["dra.example.com"].int > 0 &&
device.attributes["dra.example.com"].string == "fish" &&
device.attributes["dra.example.com"].version.isGreaterThan(semver("0.0.1")) &&
device.capacity["dra.example.com"]["quantity"].isGreaterThan(quantity("1Ki")) &&
device.attributes["dra.example.com"]["bool"] &&
device.attributes["dra.example.com"]["int"] > 0 &&
device.attributes["dra.example.com"]["string"] == "fish" &&
device.attributes["dra.example.com"]["version"].isGreaterThan(semver("0.0.1"))
"""
_EXPENSIVE = ("[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(x, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(y, [1, 2, 3, 4, 5, 6, 7, 8, "
              "9, 10].all(z, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z2, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z3, [1, 2, 3, "
              "4, 5, 6, 7, 8, 9, 10].all(z4, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].all(z5, int('1'.find('[0-9]*')) < 100)))))))")
_A = 'device.attributes["dra.example.com"]'
COMPILE_TEST_COSTS = [
    ("true", "true", 0),
    ("false", "false", 0),
    ("runtime-error-lookup-identifier",
     'device.attributes["no-such-domain"].noSuchAttr.isGreaterThan(quantity("0"))', 6),
    ("runtime-error-lookup-map", 'device.attributes["no-such-domain"]["noSuchAttr"].isGreaterThan(quantity("0"))', 6),
    ("domain-check-negative", '"no-such-domain" in device.attributes', 3),
    ("domain-check-positive", '"dra.example.com" in device.attributes', 3),
    ("empty-driver-name", 'device.driver == ""', 2),
    ("real-driver-name", 'device.driver == "dra.example.com"', 4),
    ("driver-name-qualifier", f"{_A}.name", 4),
    ("driver-name-qualifier-map-lookup", f'{_A}["name"]', 4),
    ("qualified-attribute-name", 'device.attributes["other.example.com"].name', 4),
    ("bool", f"{_A}.name", 4),
    ("int", f"{_A}.name > 0", 5),
    ("string", f'{_A}.name == "fish"', 5),
    ("macro-exists-on-int", f"{_A}.name.exists(x, x > 0)", 5 + (3 + 3) * 64),
    ("macro-exists-on-bool", f"{_A}.name.exists(x, x == true)", 5 + (3 + 3) * 64),
    ("macro-exists-on-string", f'{_A}.name.exists(x, x == "fish")', 5 + (3 + 3) * 64),
    ("list-result-type-causes-match-error", f"{_A}.names", 4),
    ("list-of-string", f"{_A}.names.size() == 2", 6),
    ("macro-on-list-of-int", f"{_A}.names.exists(x, x > 0)", 5 + (3 + 3) * 64),
    ("macro-on-list-of-string", f'{_A}.names.all(x, x != "")', 5 + (2 + 2) * 64),
    ("macro-on-list-of-semver", f'{_A}.names.all(x, x.isGreaterThan(semver("0.0.1")))', 5 + (2 + 4) * 64),
    ("in-operator-on-list", f"1 in {_A}.names", 4 + 64),
    ("version", f'{_A}.name.isGreaterThan(semver("0.0.1"))', 6),
    ("version_v", f'{_A}.name.isGreaterThan(semver("v0.0.1", true)) && isSemver("v1.0.0", true)', 7),
    ("macro-exists-on-version", f'{_A}.name.exists(x, x.isGreaterThan(semver("0.0.1")))', 5 + (3 + 4) * 64),
    ("quantity", 'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 6),
    ("check-positive", '"name" in device.capacity["dra.example.com"] && '
                       'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 10),
    ("check-negative", '!("name" in device.capacity["dra.example.com"]) || '
                       'device.capacity["dra.example.com"].name.isGreaterThan(quantity("1Ki"))', 11),
    ("all", _ALL, 52),
    ("many", f"{_A}.a && {_A}.b && {_A}.c", 12),
    ("check_attribute_domains", 'device.attributes.exists_one(x, x == "dra.example.com")', 164),
    ("check_attribute_ids", f'{_A}.exists_one(x, x == "services")', 133),
    ("split_attribute", f'{_A}.services.split("example").size() >= 2', 19),
    ("regexp_attribute", f'{_A}.services.matches("[^a]?sym")', 18),
    ("check_capacity_domains", 'device.capacity.exists_one(x, x == "dra.example.com")', 164),
    ("check_capacity_ids", 'device.capacity["dra.example.com"].exists_one(x, x == "memory")', 133),
    ("expensive", _EXPENSIVE, 85555551),
]


@pytest.mark.parametrize(("expression", "cost"), [c[1:] for c in COMPILE_TEST_COSTS],
                         ids=[c[0] for c in COMPILE_TEST_COSTS])
def test_cost_estimates_are_cel_gos(expression: str, cost: int) -> None:
    assert estimate_cost(expression) == cost
    compiled = compile_expression(expression)
    if not compiled.error:        # "expensive" calls find(), which this engine does not have
        assert compiled.max_cost == cost
        assert compiled.over_budget is (cost > CEL_SELECTOR_MAX_COST)


# apiserver/pkg/cel/library/cost_test.go, TestTwoVariableComprehensionCost and TestListsCost
# (expectEstimatedCost's Max), the cases whose sizes need no size estimator.
LIBRARY_COST_TEST = [
    ("map all", "{'a': 1, 'b': 2}.all(k, v, v > 0)", 41),
    ("map exists", "{'a': 1, 'b': 2}.exists(k, v, v > 0)", 43),
    ("map existsOne", "{'a': 1, 'b': 2}.existsOne(k, v, v > 0)", 40),
    ("list all", "[1, 2].all(i, v, v > 0)", 21),
    ("list exists", "[1, 2].exists(i, v, v > 0)", 23),
    ("list existsOne", "[1, 2].existsOne(i, v, v > 0)", 20),
    ("[1, 2, 3, 4, 5].sum()", "[1, 2, 3, 4, 5].sum()", 15),
    ("[1.0, 2.0, 3.0, 4.0, 5.0].isSorted()", "[1.0, 2.0, 3.0, 4.0, 5.0].isSorted()", 15),
    ("[false, true, false, true, false].max()", "[false, true, false, true, false].max()", 15),
    ("[1, 2, 3, 4, 5].indexOf(3)", "[1, 2, 3, 4, 5].indexOf(3)", 15),
]


@pytest.mark.parametrize(("expression", "cost"), [c[1:] for c in LIBRARY_COST_TEST],
                         ids=[c[0] for c in LIBRARY_COST_TEST])
def test_library_cost_estimates_are_kubernetes(expression: str, cost: int) -> None:
    assert estimate_cost(expression) == cost


@pytest.mark.parametrize(("expression", "cost"), [
    # The parser's other forms, each costed as cel-go's functionCost does.
    ('device.driver.startsWith("dra.")', 1 + 1 + 1),                   # ident, select, ceil(4 * 0.1)
    ('device.driver.contains("example")', 2 + 7 * 1),                  # ceil(63 * 0.1) * ceil(7 * 0.1)
    ("[1, 2, 3].map(x, x * 2).size() > 2", 10 + 10 + 1 + 3 * (12 + 2) + 1 + 1),
    ("[1, 2, 3].filter(x, x > 1).size() == 2", 10 + 10 + 1 + 3 * (2 + 13) + 1 + 1),
    ('{"a": 1}["a"] == 1 ? true : false', 30 + 1 + 1 + 0),
    ("-1 < 2 && !(3 >= 4u) || 1.5e3 != 0.0", 1 + 2 + 1),
    ('r"a\\b" + "\\x00" == "a"', 1 + 1),                                # sizes 3 + 1, then min(4, 1)
    ('b"\\x00\\x01" == b"ab"', 1),
    ('has(device.attributes["dra.example.com"].name)', 3),             # PresenceTestHasCost(false)
    ('device.attributes["dra.example.com"].name.lowerAscii() == "x"', 4 + 7 + 1),
    ('device.driver.split(",", 3).size() == 3', 2 + 13 + 1 + 1),
    ("math.greatest(1, 2) == 2", 1 + 1),                             # a namespaced global call
    # library/cost.go: == between two quantities (or versions) is O(1); != is not special-cased,
    # and a capacity selected by name has no size estimate (unknown: 2^64 - 1, times 0.1).
    ('device.capacity["dra.example.com"].memory == quantity("1Gi")', 4 + 1 + 1),
    ('semver("1.0.0") == semver("1.0.0")', 1 + 1 + 1),
    ('device.capacity["dra.example.com"].memory != quantity("1Gi")', 4 + 1 + 1844674407370955264),
    ("sets.contains([1, 2], [1])", 2 * 1 + 1 + 10 + 10),             # ext/sets.go: sizes' product + 1
    ("sets.equivalent([1, 2], [1])", 2 * 2 + 1 + 10 + 10),
])
def test_cost_estimates_of_other_forms(expression: str, cost: int) -> None:
    assert estimate_cost(expression) == cost


def test_a_10_kib_chain_is_costed_without_recursion() -> None:
    # Left-deep chains as long as the length limit allows: the estimate walks them in a loop.
    assert estimate_cost(" && ".join(['device.driver == "x"'] * 480)) == 480 * 3
    assert estimate_cost(" + ".join(["1"] * 5000) + " > 0") == 5000
    assert estimate_cost("device.driver" + ".trim()" * 1400 + ' == ""') == 2 + 1400 * 7


def test_an_unknown_size_saturates() -> None:
    # An unbounded list (the result of a function without a size estimate) times a loop: 2^64 - 1.
    assert estimate_cost('device.driver.split("").all(x, x.split("").all(y, y == "z"))') == 2**64 - 1


def test_issue_32_nested_comprehensions_are_never_evaluated(monkeypatch: pytest.MonkeyPatch) -> None:
    # The issue's selector: four nested comprehensions over literal lists of 60 elements. The
    # allocator's cache reports upstream's runtime cost-limit error without starting the program.
    expression = nested_comprehensions(4)
    compiled = compile_expression(expression)
    assert compiled.error == "" and compiled.max_cost == 145_635_251 and compiled.over_budget
    sel = SelectorCache()
    monkeypatch.setattr(CompiledExpression, "device_matches", lambda *_: pytest.fail("evaluated"))
    started = time.monotonic()
    with pytest.raises(CELError, match=r"^operation cancelled: actual cost limit exceeded$"):
        sel.matches(expression, DEVICE, 0)
    assert time.monotonic() - started < 1.0
