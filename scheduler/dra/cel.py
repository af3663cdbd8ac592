"""CEL device selectors, as upstream's ``k8s.io/dynamic-resource-allocation/cel``.

An expression sees one variable, ``device``, with ``driver`` (a string), ``allowMultipleAllocations``
(a bool, DRAConsumableCapacity), ``attributes`` and
``capacity``: maps from a domain to maps from an identifier to a value. A qualified name
``gpu.example.com/model`` is domain ``gpu.example.com``, id ``model``; an unqualified one belongs
to the device's driver. An unknown domain reads as an empty map (upstream's
``newStringInterfaceMapWithDefault``), so ``device.attributes["x.com"].foo`` is a runtime "no such
key" error while ``has(device.attributes["x.com"].foo)`` is false. Attribute values are CEL ints,
bools and strings; versions are Kubernetes ``semver`` values and capacities ``quantity`` values,
with Kubernetes' CEL libraries for both (``quantity("1Gi")``, ``isQuantity``, ``compareTo``,
``isGreaterThan``, ``isLessThan``, ``add``, ``sub``, ``isInteger``, ``asInteger``,
``asApproximateFloat``, ``sign``; ``semver("1.2.3")``, ``isSemver``, ``major``, ``minor``,
``patch``, ``compareTo``, ``isGreaterThan``, ``isLessThan``). The extended string, list, set and
math functions of ``cel.stdlib`` are there too.

**The engine** is ``common-expression-language`` (the ``cel`` module: Python bindings of the Rust
``cel`` crate), chosen over ``cel-python`` (pure Python, 25x slower per evaluation, no
cross-type numeric comparison) and ``cel-expr-python`` (Google's cel-cpp wrapper, 0.1: it cannot
carry an opaque value such as a quantity). Its gaps, and what this module does about them:

* No type checker: an expression that parses compiles. ``compile`` rejects calls to functions the
  environment does not have and variables other than ``device`` and those a comprehension binds
  (``undeclared reference to 'x'``, cel-go's wording), but a type error shows only when the
  expression runs (a runtime error, which the allocator reports as upstream reports runtime errors).
* No opaque values: a quantity is the map ``{"__quantity__": "<exact value>"}`` and a version
  ``{"__semver__": "<version>"}``. Equality, ``compareTo`` and the other functions behave as
  Kubernetes' types do; only ``type(q)`` (a map) and indexing such a value give it away.
* No ``cel.bind`` (the Bindings extension upstream enables), no optional syntax (``.?``): an
  expression with those does not compile.
* No cost tracking: upstream runs a selector with ``CELSelectorExpressionMaxCost`` as its runtime
  cost limit. Here ``compile`` computes cel-go's static worst-case estimate instead
  (``celcost.py``) into ``max_cost``, and the allocator never evaluates an expression estimated
  over the budget (``over_budget``): it reports upstream's cost-limit error for it, as upstream
  reports the runtime failure.
* No list-typed attributes (DRAListTypeAttributes, alpha): such an attribute is absent.

**Caching.** ``compile`` caches by expression text (upstream's LRU ``cel.Cache``), so each class or
claim selector compiles once, not per device. The device's CEL value is built once per device per
set of domains the expression names (``DeviceEnv``), and the allocator caches each
(expression, device) result until a slice or class changes.
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import cel
import cel.stdlib

from scheduler.dra.celcost import CEL_SELECTOR_MAX_COST, CostError, estimate_cost
from scheduler.errors import QuantityError
from scheduler.model.dra import Device, DeviceAttribute
from scheduler.quantity import parse_quantity

__all__ = ["CompiledExpression", "DeviceEnv", "compile_expression", "device_env"]

_Q = "__quantity__"
_V = "__semver__"
_SEMVER = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+([0-9A-Za-z.-]+))?$")
# The variables a comprehension macro binds: ``.all(x, ...)``, ``.exists(k, v, ...)``, ...
_BOUND = re.compile(r"\.\s*(?:all|exists|exists_one|existsOne|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,"
                    r"(?:\s*([A-Za-z_]\w*)\s*,)?")
_LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"|\'((?:[^\'\\]|\\.)*)\'')

# The Rust crate's built-in functions and operators (and macros' internal names).
_BUILTINS = frozenset({
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes",
    "bool", "timestamp", "duration", "type", "dyn", "has", "all", "exists", "exists_one", "map", "filter",
    "max", "min", "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek",
    "getHours", "getMinutes", "getSeconds", "getMilliseconds",
})


class CELError(ValueError):
    """A CEL runtime error (or a compile error, raised by ``CompiledExpression.require``)."""


# --- Kubernetes' quantity and semver libraries ---------------------------------------------------

def _qval(x: Any) -> Fraction:
    if isinstance(x, Mapping) and _Q in x:
        return Fraction(x[_Q])
    raise CELError("no such overload: expected a quantity")


def _quantity(value: Fraction) -> dict[str, str]:
    return {_Q: str(value)}


def _parse_q(text: Any) -> dict[str, str]:
    if not isinstance(text, str):
        raise CELError("no such overload: quantity(string)")
    try:
        return _quantity(parse_quantity(text))
    except QuantityError as e:
        raise CELError(e.problem) from None


def _is_q(text: Any) -> bool:
    try:
        parse_quantity(text)
    except (QuantityError, TypeError):
        return False
    return isinstance(text, str)


def _semver_key(x: Any) -> tuple[int, int, int, tuple[tuple[int, int | str], ...], bool]:
    if not (isinstance(x, Mapping) and _V in x):
        raise CELError("no such overload: expected a semver")
    m = _SEMVER.match(str(x[_V]))
    if m is None:
        raise CELError(f"invalid semver {x[_V]!r}")
    pre = m.group(4)
    parts: tuple[tuple[int, int | str], ...] = ()
    if pre:
        parts = tuple((0, int(p)) if p.isdigit() else (1, p) for p in pre.split("."))
    # A version without pre-release sorts after any with one (semver §11).
    return int(m.group(1)), int(m.group(2)), int(m.group(3)), parts, not pre


def _cmp_key(k: tuple[int, int, int, tuple[tuple[int, int | str], ...], bool]) -> tuple[Any, ...]:
    return (k[0], k[1], k[2], k[4], k[3])


def _parse_semver(text: Any, normalize: bool = False) -> dict[str, str]:
    if not isinstance(text, str):
        raise CELError("no such overload: semver(string)")
    if normalize:
        text = text.removeprefix("v")
        core, sep, rest = text.partition("-") if "-" in text else text.partition("+")
        nums = core.split(".")
        while len(nums) < 3:
            nums.append("0")
        text = ".".join(str(int(n)) if n.isdigit() else n for n in nums) + sep + rest
    if not _SEMVER.match(text):
        raise CELError(f"invalid semver {text!r}")
    return {_V: text}


def _compare(a: Any, b: Any) -> int:
    if isinstance(a, Mapping) and _Q in a:
        x, y = _qval(a), _qval(b)
        return (x > y) - (x < y)
    ka, kb = _cmp_key(_semver_key(a)), _cmp_key(_semver_key(b))
    return (ka > kb) - (ka < kb)


def _sign(a: Any) -> int:
    v = _qval(a)
    return (v > 0) - (v < 0)


def _as_integer(a: Any) -> int:
    v = _qval(a)
    if v.denominator != 1 or not -(2**63) <= v < 2**63:
        raise CELError("cannot convert value to integer")
    return int(v)


def _add(a: Any, b: Any) -> dict[str, str]:
    return _quantity(_qval(a) + (Fraction(b) if isinstance(b, int) and not isinstance(b, bool) else _qval(b)))


def _sub(a: Any, b: Any) -> dict[str, str]:
    return _quantity(_qval(a) - (Fraction(b) if isinstance(b, int) and not isinstance(b, bool) else _qval(b)))


def _part(i: int) -> Callable[[Any], int]:
    return lambda v: _semver_key(v)[i]  # type: ignore[return-value]


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _parse_q,
    "isQuantity": _is_q,
    "semver": _parse_semver,
    "isSemver": lambda t, normalize=False: _is_semver(t, normalize),
    "compareTo": _compare,
    "isGreaterThan": lambda a, b: _compare(a, b) > 0,
    "isLessThan": lambda a, b: _compare(a, b) < 0,
    "sign": _sign,
    "isInteger": lambda a: _qval(a).denominator == 1 and -(2**63) <= _qval(a) < 2**63,
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: float(_qval(a)),
    "add": _add,
    "sub": _sub,
    "major": _part(0),
    "minor": _part(1),
    "patch": _part(2),
}


def _is_semver(text: Any, normalize: bool) -> bool:
    try:
        _parse_semver(text, normalize)
    except CELError:
        return False
    return True


_KNOWN = _BUILTINS | set(FUNCTIONS) | set(cel.stdlib.STDLIB_FUNCTIONS)


# --- compilation ------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class CompiledExpression:
    """One compiled selector: ``error`` is set when it did not compile (then it matches nothing
    and the allocator reports the error); ``domains`` are the string literals of the expression
    (the domains it may index ``attributes`` / ``capacity`` with); ``max_cost`` is cel-go's
    worst-case cost estimate (``celcost.estimate_cost``)."""

    expression: str
    program: Any = None
    error: str = ""
    domains: frozenset[str] = frozenset()
    functions: frozenset[str] = frozenset()     # the library functions it calls (registered per context)
    max_cost: int = 0

    @property
    def over_budget(self) -> bool:
        """Estimated above ``CELSelectorExpressionMaxCost``: upstream's runtime limit would stop it
        (and its API refuses to store it), so it must not be evaluated."""
        return self.max_cost > CEL_SELECTOR_MAX_COST

    def device_matches(self, env: DeviceEnv) -> bool:
        """Evaluate on one device; raises ``CELError`` for a runtime error or a non-bool result."""
        ctx = env.context(self.domains, self.functions)
        try:
            result = self.program.execute(ctx)
        except KeyError as e:
            raise CELError(f"no such key: {e.args[0] if e.args else ''}") from None
        except Exception as e:  # the engine's errors: TypeError, RuntimeError, ZeroDivisionError, ...
            raise CELError(_clean(str(e))) from None
        if not isinstance(result, bool):
            raise CELError(f"CEL result of type {_cel_type(result)} could not be converted to bool")
        return result


def _clean(message: str) -> str:
    # The engine wraps our own CELErrors: keep their text.
    m = re.search(r"(?:CELError|ValueError): (.*?)(?:\. Check function arguments.*)?$", message)
    return m.group(1) if m else message


def _cel_type(v: object) -> str:
    if isinstance(v, Mapping):
        return "kubernetes.Quantity" if _Q in v else "kubernetes.Semver" if _V in v else "map"
    return {int: "int", float: "double", str: "string", list: "list", bytes: "bytes"}.get(type(v), type(v).__name__)


_CACHE: OrderedDict[str, CompiledExpression] = OrderedDict()
_CACHE_SIZE = 1024


def compile_expression(expression: str) -> CompiledExpression:
    """Compile (or reuse) ``expression``; never raises: a bad one has ``error`` set."""
    got = _CACHE.get(expression)
    if got is not None:
        _CACHE.move_to_end(expression)
        return got
    got = _compile(expression)
    _CACHE[expression] = got
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return got


def _compile(expression: str) -> CompiledExpression:
    if not expression.strip():
        return CompiledExpression(expression, error="compilation failed: empty expression")
    try:
        program = cel.compile(expression)
    except Exception as e:  # the engine raises ValueError for syntax errors
        return CompiledExpression(expression, error=f"compilation failed: {_clean(str(e))}")
    for name in program.functions():
        if name[0] not in "_@!" and name not in _KNOWN:
            return CompiledExpression(expression, error=f"compilation failed: undeclared reference to '{name}'")
    bound = {v for pair in _BOUND.findall(expression) for v in pair if v}
    for name in program.variables():
        if name != "device" and name not in bound:
            return CompiledExpression(expression, error=f"compilation failed: undeclared reference to '{name}' "
                                                        "(in container '')")
    try:
        cost = estimate_cost(expression)
    except CostError as e:      # never evaluate what cannot be bounded (upstream: an internal error)
        return CompiledExpression(expression, error=f"cost estimation failed: {e}")
    domains = frozenset(a or b for a, b in _LITERAL.findall(expression))
    used = frozenset(f for f in program.functions() if f in FUNCTIONS or f in cel.stdlib.STDLIB_FUNCTIONS)
    return CompiledExpression(expression, program, "", domains, used, cost)


# --- the device variable ------------------------------------------------------------------------

def _value(attr: DeviceAttribute) -> Any:
    if attr.kind == "version":
        return {_V: attr.value}
    return attr.value


def _split(name: str, driver: str) -> tuple[str, str]:
    domain, sep, ident = name.partition("/")
    return (domain, ident) if sep else (driver, name)


@dataclass(slots=True)
class DeviceEnv:
    """The ``device`` variable of one device, and the CEL contexts built from it (one per set of
    domains an expression names, each with an empty map for the domains the device lacks, and the
    library functions it calls: registering all of them per device would cost more than evaluating)."""

    driver: str
    attributes: dict[str, dict[str, Any]]
    capacity: dict[str, dict[str, Any]]
    allow_multiple_allocations: bool = False
    _contexts: dict[tuple[frozenset[str], frozenset[str]], Any] = field(default_factory=dict)

    def context(self, domains: frozenset[str], functions: frozenset[str]) -> Any:
        ctx = self._contexts.get((domains, functions))
        if ctx is None:
            attrs = dict(self.attributes)
            caps = dict(self.capacity)
            for d in domains:
                attrs.setdefault(d, {})
                caps.setdefault(d, {})
            ctx = cel.Context()
            for name in functions:
                ctx.add_function(name, FUNCTIONS.get(name) or cel.stdlib.STDLIB_FUNCTIONS[name])
            ctx.add_variable("device", {"driver": self.driver, "attributes": attrs, "capacity": caps,
                                        "allowMultipleAllocations": self.allow_multiple_allocations})
            self._contexts[(domains, functions)] = ctx
        return ctx


def device_env(driver: str, device: Device) -> DeviceEnv:
    attrs: dict[str, dict[str, Any]] = {}
    for name, attr in device.attributes.items():
        if attr.kind == "unknown":
            continue
        domain, ident = _split(name, driver)
        attrs.setdefault(domain, {})[ident] = _value(attr)
    caps: dict[str, dict[str, Any]] = {}
    for name, q in device.capacity.items():
        domain, ident = _split(name, driver)
        caps.setdefault(domain, {})[ident] = _quantity(q)
    return DeviceEnv(driver, attrs, caps, device.allow_multiple_allocations)

