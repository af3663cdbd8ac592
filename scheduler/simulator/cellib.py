"""The Kubernetes CEL environment of CRD validation rules, on the ``cel`` engine (``common-expression-language``).

kube-apiserver compiles ``x-kubernetes-validations`` with cel-go's standard library, its ``strings``,
``sets``, ``math`` (and more) extensions, and Kubernetes' own libraries (``k8s.io/apiserver/pkg/cel/library``).
What this module gives the engine, beyond what the engine implements natively (``size``, ``has``,
``matches``, ``contains``/``startsWith``/``endsWith``, the macros ``all``/``exists``/``exists_one``/
``map``/``filter``, conversions, timestamps and durations, optional values):

* the extended string, list, set, math and base64 functions of ``cel.stdlib`` (``lowerAscii``,
  ``upperAscii``, ``replace``, ``split``, ``join``, ``trim``, ``substring``, ``charAt``, ...);
* the Kubernetes **lists** library: ``isSorted``, ``sum``, ``min``, ``max``, and ``indexOf`` /
  ``lastIndexOf`` on lists as well as strings;
* the **regex** library: ``find``, ``findAll``;
* the **URLs** library: ``url``, ``isURL``, ``getScheme``, ``getHost``, ``getHostname``, ``getPort``,
  ``getEscapedPath``, ``getQuery``;
* the **quantity** and **semver** libraries, shared with the DRA device selectors
  (``scheduler.dra.cel.FUNCTIONS``: a quantity is the map ``{"__quantity__": ...}`` there, a URL
  ``{"__url__": ...}`` here, since the engine carries no opaque values).

Not here: the ``ip``/``cidr`` and ``format`` libraries, ``authz``, and ``cel.bind``.

``names_ok`` is the compile-time check the engine lacks: cel-go refuses an expression that calls a
function or names a variable its environment does not declare (``undeclared reference to 'x'``);
the engine would only fail when it runs.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import SplitResult, parse_qs, quote, urlsplit

import cel
import cel.stdlib

from scheduler.dra.cel import FUNCTIONS as DRA_FUNCTIONS

__all__ = ["FUNCTIONS", "bad_pattern", "context", "undeclared"]

_URL = "__url__"

# The engine's own functions and operators, the optional value methods, and macros' internal names.
_BUILTINS = frozenset({
    "size", "contains", "startsWith", "endsWith", "matches", "int", "uint", "double", "string", "bytes",
    "bool", "timestamp", "duration", "type", "dyn", "has", "all", "exists", "exists_one", "map", "filter",
    "getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek", "getHours",
    "getMinutes", "getSeconds", "getMilliseconds", "hasValue", "value", "orValue", "or", "of", "none",
})
# Identifiers that read as variables to the engine but are type names or function namespaces in CEL.
_IDENTS = frozenset({"int", "uint", "double", "bool", "string", "bytes", "list", "map", "null_type", "type",
                     "math", "strings", "sets", "lists", "base64", "optional"})


class CELError(ValueError):
    """A library function's runtime error (the engine reports it as the rule's evaluation error)."""


def _index_of(x: Any, item: Any, *rest: Any) -> int:
    if isinstance(x, list):
        return next((i for i, v in enumerate(x) if v == item and type(v) is type(item)), -1)
    return int(cel.stdlib.index_of(x, item, *rest))


def _last_index_of(x: Any, item: Any, *rest: Any) -> int:
    if isinstance(x, list):
        return next((i for i in range(len(x) - 1, -1, -1) if x[i] == item and type(x[i]) is type(item)), -1)
    return int(cel.stdlib.last_index_of(x, item, *rest))


def _is_sorted(x: Any) -> bool:
    if not isinstance(x, list):
        raise CELError("no such overload: isSorted")
    return all(a <= b for a, b in itertools.pairwise(x))


def _extreme(pick: Callable[[Iterable[Any]], Any], name: str) -> Callable[..., Any]:
    def f(x: Any, *more: Any) -> Any:
        items = list(x) if isinstance(x, list) and not more else [x, *more]
        if not items:
            raise CELError(f"{name} called on empty list")
        return pick(items)
    return f


def _sum(x: Any) -> Any:
    if not isinstance(x, list):
        raise CELError("no such overload: sum")
    return sum(x[1:], x[0]) if x else 0


def _find(s: str, pattern: str) -> str:
    m = re.search(pattern, s)
    return m.group(0) if m else ""


def _find_all(s: str, pattern: str, limit: int = -1) -> list[str]:
    found = [m.group(0) for m in re.finditer(pattern, s)]
    return found if limit < 0 else found[:limit]


def _parse_url(text: Any) -> Any:
    # url.Parse(RequestURI): an absolute URL, or an absolute path (with its query).
    if not isinstance(text, str) or not text:
        return None
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 -- raises on a bad port
    except ValueError:
        return None
    if parts.scheme:
        return parts if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme) else None
    return parts if text.startswith("/") else None


def _url(text: Any) -> dict[str, str]:
    if _parse_url(text) is None:
        raise CELError(f"URL parse error during conversion from string: parse {text!r}: invalid URI for request")
    return {_URL: str(text)}


def _parts(u: Any) -> SplitResult:
    if isinstance(u, Mapping) and _URL in u:
        return urlsplit(str(u[_URL]))
    raise CELError("no such overload: expected a URL")


def _hostname(u: Any) -> str:
    host = _parts(u).netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:host.find("]")]
    return host.partition(":")[0]


def _port(u: Any) -> str:
    host = _parts(u).netloc.rpartition("@")[2]
    tail = host[host.find("]") + 1:] if host.startswith("[") else host
    return tail.partition(":")[2]


FUNCTIONS: dict[str, Callable[..., Any]] = {
    **DRA_FUNCTIONS,
    "indexOf": _index_of,
    "lastIndexOf": _last_index_of,
    "isSorted": _is_sorted,
    "sum": _sum,
    "min": _extreme(min, "min"),
    "max": _extreme(max, "max"),
    "find": _find,
    "findAll": _find_all,
    "url": _url,
    "isURL": lambda t: _parse_url(t) is not None,
    "getScheme": lambda u: _parts(u).scheme,
    "getHost": lambda u: _parts(u).netloc.rpartition("@")[2],
    "getHostname": _hostname,
    "getPort": _port,
    "getEscapedPath": lambda u: quote(_parts(u).path, safe="/$&+,:;=@!'()*[]~"),
    "getQuery": lambda u: parse_qs(_parts(u).query, keep_blank_values=True),
}
_KNOWN = _BUILTINS | set(FUNCTIONS) | set(cel.stdlib.STDLIB_FUNCTIONS)
# The variables a comprehension macro binds: ``.all(x, ...)``, ``.exists(k, v, ...)``, ...
_BOUND = re.compile(r"\.\s*(?:all|exists|exists_one|existsOne|map|filter)\s*\(\s*([A-Za-z_]\w*)\s*,"
                    r"(?:\s*([A-Za-z_]\w*)\s*,)?")


# A regex function called with a literal pattern: cel-go compiles the pattern with the program.
_LITERAL_PATTERN = re.compile(r"""\.\s*(?:matches|find|findAll)\s*\(\s*"""
                              r"""(?:r?'((?:[^'\\]|\\.)*)'|r?"((?:[^"\\]|\\.)*)")""")


def bad_pattern(expression: str) -> str:
    """The error of the first literal regex pattern that does not compile, or ''."""
    for single, double in _LITERAL_PATTERN.findall(expression):
        pattern = single or double
        try:
            re.compile(pattern)
        except re.error as e:
            return f"error parsing regexp: {e}: `{pattern}`"
    return ""


def undeclared(program: Any, expression: str, variables: frozenset[str]) -> str:
    """The first function or variable ``program`` uses that the environment does not declare, or ''."""
    namespaces = {v for v in program.variables() if v in _IDENTS}
    for name in program.functions():
        if name[0] in "_@!" or name in _KNOWN or any(f"{ns}.{name}" in _KNOWN for ns in namespaces):
            continue
        return str(name)
    bound = {v for pair in _BOUND.findall(expression) for v in pair if v}
    for name in program.variables():
        if name not in variables and name not in bound and name not in _IDENTS:
            return str(name)
    return ""


def context(program: Any, variables: Mapping[str, Any]) -> Any:
    """A context with the library functions ``program`` calls (registering all would cost more than
    evaluating) and ``variables``."""
    ctx = cel.Context()
    namespaces = {v for v in program.variables() if v in _IDENTS}
    for name in program.functions():
        fn = FUNCTIONS.get(name) or cel.stdlib.STDLIB_FUNCTIONS.get(name)
        if fn is None:
            for ns in namespaces:
                if (fn := cel.stdlib.STDLIB_FUNCTIONS.get(f"{ns}.{name}")) is not None:
                    ctx.add_function(f"{ns}.{name}", fn)
            continue
        ctx.add_function(name, fn)
    for k, v in variables.items():
        ctx.add_variable(k, v)
    return ctx
