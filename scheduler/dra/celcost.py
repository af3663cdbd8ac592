"""The worst-case cost of a CEL device selector, as kube-apiserver estimates it before it stores one.

Upstream compiles each selector (``k8s.io/dynamic-resource-allocation/cel/compile.go``) and asks
cel-go for the expression's worst-case cost (``env.EstimateCost`` with Kubernetes'
``library.CostEstimator`` and DRA's size estimator); validation refuses an expression estimated
above ``CELSelectorExpressionMaxCost`` (``"too complex, exceeds cost limit"``), and the allocator
runs each selector with that budget as its runtime cost limit (``"operation cancelled: actual cost
limit exceeded"``). The ``cel`` engine this project evaluates with (``scheduler.dra.cel``) counts no
cost at all, so an expression like four nested ``[0, ..., 59].all(...)`` ran for tens of seconds.
This module is the static half of that budget: it parses the expression itself and computes
cel-go's estimate over the AST, so an expression over the budget is never evaluated.

**The parser** is CEL's grammar (``parser/gen/CEL.g4``): literals (ints, uints, doubles,
strings and bytes with their raw and triple-quoted forms, bools, null), identifiers, field
selection, indexing, global and member calls, list, map and message literals, the unary,
arithmetic, relational and logical operators and the conditional. Macros expand as cel-go's
``parser/macro.go`` expands them (``has``, ``all``, ``exists``, ``exists_one``, ``map`` with two or
three arguments, ``filter``), into comprehensions with the ``__result__`` accumulator, because the
estimate is computed over that expansion.

**The estimate** follows ``checker/cost.go`` (``coster``): an identifier or a field selected from
a map or struct costs 1, a constant 0, a list literal 10, a map literal 30, a message 40; a call
costs its arguments plus its function's cost (``functionCost``: O(1) functions 1; string equality,
ordering and concatenation, ``startsWith``/``endsWith``, ``contains``, ``matches`` and ``in`` on a
list by the sizes involved, with the string traversal factor 0.1 and the regex factor 0.25);
``&&`` and ``||`` cost both sides, ``?:`` the condition and the dearer branch; a comprehension
its range, its initial value and its result plus, for each element the range may hold, its loop
condition and step. Kubernetes' ``library/cost.go`` overrides the string and list library
functions (``lowerAscii``, ``split``, ``join``, ``find``, ``indexOf``, ...), the quantity and semver
ones, and ``==`` between two quantities or two versions (O(1));
its base environment makes ``has()`` free (``PresenceTestHasCost(false)``). Sizes come, in cel-go's
order, from the expression (a literal's length, a list literal's element count, a function's result
size), from DRA's size estimator for paths under ``device`` (``sizeEstimator``: the driver name at
most 63 characters, at most 32 attribute or capacity domains and 32 ids per domain, domains at
most 63 and ids at most 32 characters, an attribute value at most 64), from the type (a scalar is
1), or are unknown (2^64 - 1, and every sum and product saturates there). The types are the few the
estimate needs (the ``device`` declaration, literal lists and maps, what a comprehension variable
iterates over; everything else is ``dyn``), and where a ``dyn`` operand leaves several overloads
possible the dearest one counts, as cel-go's union over the overloads does.

What it does not model: ``cel.bind`` and the optional syntax (the engine rejects both), and the
cost estimators of cel-go's ``ext`` list functions (``lists.range``, ``sort``, ``distinct``, ...:
O(1) here); ``sets.*`` are ``ext/sets.go``'s. A chain of selections and calls along first operands
(``a + b + c + ...``) is costed in a loop, so a 10 KiB expression never exhausts the recursion
limit; parentheses nested more deeply than the engine parses (about 150) fail the estimate.
Upstream's own cases (``cel/compile_test.go``) are ported in ``tests/dra/test_cel.py``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

__all__ = ["CEL_SELECTOR_MAX_COST", "CEL_SELECTOR_MAX_LENGTH", "COST_LIMIT_EXCEEDED", "TOO_COMPLEX", "CostError",
           "estimate_cost"]

# pkg/apis/resource/types.go
CEL_SELECTOR_MAX_COST = 1_000_000        # CELSelectorExpressionMaxCost
CEL_SELECTOR_MAX_LENGTH = 10 * 1024      # CELSelectorExpressionMaxLength
_MAX_ATTRIBUTES_AND_CAPACITIES = 32      # ResourceSliceMaxAttributesAndCapacitiesPerDevice
_ATTRIBUTE_MAX_VALUE_LENGTH = 64         # DeviceAttributeMaxValueLength
_MAX_DOMAIN_LENGTH = 63                  # DeviceMaxDomainLength
_MAX_ID_LENGTH = 32                      # DeviceMaxIDLength
_DRIVER_NAME_MAX_LENGTH = 63             # DriverNameMaxLength
# cel-go's runtime error when the cost limit is hit (interpreter/runtimecost.go), and validation's
# detail for an expression estimated over it (pkg/apis/resource/validation/validation.go).
COST_LIMIT_EXCEEDED = "operation cancelled: actual cost limit exceeded"
TOO_COMPLEX = "too complex, exceeds cost limit"

U64 = 2**64 - 1
# cel-go common/cost.go
_SELECT_AND_IDENT, _LIST_CREATE, _MAP_CREATE, _STRUCT_CREATE = 1, 10, 30, 40
_STRING_TRAVERSAL, _REGEX_LENGTH = 0.1, 0.25
_PRESENCE_TEST = 0                       # Kubernetes: checker.PresenceTestHasCost(false)
_ACCU = "__result__"


class CostError(ValueError):
    """The expression does not parse (the engine's own parse error is what users see)."""


# --- saturating arithmetic, as cel-go's CostEstimate / SizeEstimate -----------------------------

def _add(a: int, b: int) -> int:
    return min(a + b, U64)


def _mul(a: int, b: int) -> int:
    return min(a * b, U64)


def _factor(x: int, f: float) -> int:
    """``multiplyByCostFactor``: ceil(x * f) in float64, saturating."""
    xf = float(x)
    if xf > 0 and f > 0 and xf > float(U64) / f:
        return U64
    c = math.ceil(xf * f)
    return U64 if c >= 2**64 else int(c)


Size = tuple[int, int]
_UNKNOWN: Size = (0, U64)


def _size_add(a: Size, b: Size) -> Size:
    return _add(a[0], b[0]), _add(a[1], b[1])


def _size_mul(a: Size, b: Size) -> Size:
    return _mul(a[0], b[0]), _mul(a[1], b[1])


def _union(a: Size, b: Size) -> Size:
    return min(a[0], b[0]), max(a[1], b[1])


# --- types: just what the estimate reads ----------------------------------------------------------

@dataclass(eq=False)
class _T:
    """A type as the estimate needs it: its kind, a list's or map's element (a map's value) and
    key, a struct's fields; ``max`` is the declaration's MaxElements for the size estimator."""

    kind: str                              # struct map list string bytes int uint double bool null dyn ...
    elem: _T | None = None
    key: _T | None = None
    fields: dict[str, _T] = field(default_factory=dict)
    max: int = 0


_DYN = _T("dyn")
_SCALARS = frozenset({"bool", "double", "int", "uint", "duration", "timestamp"})
_STRINGISH = frozenset({"string", "bytes"})
# compile.go: the device variable's declaration (newCompiler) and its size limits.
_ATTRIBUTE = _T("dyn", max=_ATTRIBUTE_MAX_VALUE_LENGTH)
_QUANTITY = _T("quantity")
_DOMAIN = _T("string", max=_MAX_DOMAIN_LENGTH)
_ID = _T("string", max=_MAX_ID_LENGTH)
_INNER_ATTRIBUTES = _T("map", elem=_ATTRIBUTE, key=_ID, max=_MAX_ATTRIBUTES_AND_CAPACITIES)
_INNER_CAPACITY = _T("map", elem=_QUANTITY, key=_ID, max=_MAX_ATTRIBUTES_AND_CAPACITIES)
_DEVICE = _T("struct", fields={
    "driver": _T("string", max=_DRIVER_NAME_MAX_LENGTH),
    "attributes": _T("map", elem=_INNER_ATTRIBUTES, key=_DOMAIN, max=_MAX_ATTRIBUTES_AND_CAPACITIES),
    "capacity": _T("map", elem=_INNER_CAPACITY, key=_DOMAIN, max=_MAX_ATTRIBUTES_AND_CAPACITIES)})


def _child(path: tuple[str, ...] | None, name: str) -> tuple[str, ...] | None:
    return (*path, name) if path else None


def _path_size(path: tuple[str, ...] | None) -> Size | None:
    """DRA's ``sizeEstimator.EstimateSize``: walk the declaration from ``device``."""
    if not path or path[0] != "device":
        return None
    node = _DEVICE
    for name in path[1:]:
        nxt: _T | None
        if name in ("@items", "@values"):
            nxt = node.elem
        elif name == "@keys":
            nxt = node.key
        else:
            nxt = node.fields.get(name)
            if nxt is None and node.elem is _ATTRIBUTE:
                nxt = _ATTRIBUTE      # every attribute has the same maximum size, whatever its name
        if nxt is None:
            return None
        node = nxt
    return 0, node.max


# --- the AST --------------------------------------------------------------------------------------

@dataclass(eq=False)
class _Expr:
    pass


@dataclass(eq=False)
class _Lit(_Expr):
    kind: str
    size: int = 1
    value: object = None


@dataclass(eq=False)
class _Ident(_Expr):
    name: str


@dataclass(eq=False)
class _Select(_Expr):
    operand: _Expr
    name: str
    test_only: bool = False


@dataclass(eq=False)
class _Call(_Expr):
    fn: str
    args: list[_Expr]
    target: _Expr | None = None


@dataclass(eq=False)
class _List(_Expr):
    elems: list[_Expr]


@dataclass(eq=False)
class _Map(_Expr):
    entries: list[tuple[_Expr, _Expr]]


@dataclass(eq=False)
class _Struct(_Expr):
    values: list[_Expr]


@dataclass(eq=False)
class _Comp(_Expr):
    rng: _Expr
    var: str
    var2: str
    init: _Expr
    cond: _Expr
    step: _Expr
    result: _Expr


# --- the lexer and parser -------------------------------------------------------------------------

_TOKEN = re.compile(r"""
    (?P<ws>\s+|//[^\n]*)
  | (?P<str>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"[\s\S]*?\"\"\"|'''[\s\S]*?'''|"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<num>0[xX][0-9a-fA-F]+[uU]?|\d+\.\d+(?:[eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+(?:[eE][+-]?\d+)?|\d+[uU]?)
  | (?P<id>[_a-zA-Z][_a-zA-Z0-9]*)
  | (?P<op>==|!=|<=|>=|&&|\|\||[-+*/%!<>?:.,\[\](){}])
""", re.VERBOSE)
_ESCAPE = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|[0-3][0-7]{2}|.)", re.S)
_RELATIONS = {"<": "_<_", "<=": "_<=_", ">": "_>_", ">=": "_>=_", "==": "_==_", "!=": "_!=_", "in": "@in"}
# The function namespaces of cel-go's extensions (math.greatest, sets.contains, strings.quote, ...).
_NAMESPACES = frozenset({"base64", "lists", "math", "sets", "strings"})
_RESERVED = frozenset({"as", "break", "const", "continue", "else", "for", "function", "if", "import", "let",
                       "loop", "package", "namespace", "return", "var", "void", "while"})


def _tokens(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise CostError(f"unexpected character at {pos}")
        pos = m.end()
        kind = m.lastgroup
        assert kind is not None
        if kind != "ws":
            out.append((kind, m.group()))
    out.append(("eof", ""))
    return out


def _string_literal(tok: str) -> _Lit:
    prefix = re.match(r"[rRbB]*", tok)
    assert prefix is not None
    flags = prefix.group().lower()
    body = tok[len(flags):]
    quote = 3 if body[:3] in ('"""', "'''") else 1
    body = body[quote:-quote]
    if "r" not in flags:
        # Each escape is one character (one byte for \x and octal in a bytes literal).
        body = _ESCAPE.sub("_", body)
    if "b" in flags:
        return _Lit("bytes", len(body.encode()))
    return _Lit("string", len(body), body)


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str]:
        return self.toks[min(self.i + k, len(self.toks) - 1)]

    def next(self) -> tuple[str, str]:
        tok = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return tok

    def accept(self, value: str) -> bool:
        kind, text = self.peek()
        if kind in ("op", "id") and text == value:
            self.i += 1
            return True
        return False

    def expect(self, value: str) -> None:
        if not self.accept(value):
            raise CostError(f"expected {value!r}, got {self.peek()[1]!r}")

    def parse(self) -> _Expr:
        e = self.expr()
        if self.peek()[0] != "eof":
            raise CostError(f"unexpected {self.peek()[1]!r}")
        return e

    def expr(self) -> _Expr:
        e = self.or_()
        if self.accept("?"):
            a = self.or_()
            self.expect(":")
            b = self.expr()
            return _Call("_?_:_", [e, a, b])
        return e

    def or_(self) -> _Expr:
        e = self.and_()
        while self.accept("||"):
            e = _Call("_||_", [e, self.and_()])
        return e

    def and_(self) -> _Expr:
        e = self.relation()
        while self.accept("&&"):
            e = _Call("_&&_", [e, self.relation()])
        return e

    def relation(self) -> _Expr:
        e = self.calc()
        while self.peek()[1] in _RELATIONS and self.peek()[0] in ("op", "id"):
            op = self.next()[1]
            e = _Call(_RELATIONS[op], [e, self.calc()])
        return e

    def calc(self) -> _Expr:
        e = self.mult()
        while self.peek() in (("op", "+"), ("op", "-")):
            op = self.next()[1]
            e = _Call(f"_{op}_", [e, self.mult()])
        return e

    def mult(self) -> _Expr:
        e = self.unary()
        while self.peek() in (("op", "*"), ("op", "/"), ("op", "%")):
            op = self.next()[1]
            e = _Call(f"_{op}_", [e, self.unary()])
        return e

    def unary(self) -> _Expr:
        for op, fn in (("!", "!_"), ("-", "-_")):
            n = 0
            while self.accept(op):
                n += 1
            if n:
                if op == "-" and n == 1 and self.peek()[0] == "num":
                    # A negative number is one literal in CEL's grammar, not a call.
                    lit = self.number(self.next()[1])
                    if isinstance(lit.value, int):
                        lit.value = -lit.value
                    return self.member(lit)
                e = self.member(self.primary())
                return e if n % 2 == 0 else _Call(fn, [e])
        return self.member(self.primary())

    def number(self, text: str) -> _Lit:
        if text[-1] in "uU":
            return _Lit("uint")
        if text.lower().startswith("0x"):
            return _Lit("int")
        return _Lit("double") if any(c in text for c in ".eE") else _Lit("int", value=int(text))

    def args(self, close: str) -> list[_Expr]:
        out: list[_Expr] = []
        while not self.accept(close):
            out.append(self.expr())
            if not self.accept(","):
                self.expect(close)
                break
        return out

    def primary(self) -> _Expr:
        kind, text = self.next()
        if kind == "num":
            return self.number(text)
        if kind == "str":
            return _string_literal(text)
        if kind == "op" and text == ".":
            kind, text = self.next()          # a leading dot: the root scope
        if kind == "id":
            if text in ("true", "false"):
                return _Lit("bool", value=text == "true")
            if text == "null":
                return _Lit("null")
            if text in _RESERVED or text == "in":
                raise CostError(f"reserved identifier {text!r}")
            if self.accept("("):
                return self.global_call(text, self.args(")"))
            return _Ident(text)
        if kind == "op" and text == "(":
            e = self.expr()
            self.expect(")")
            return e
        if kind == "op" and text == "[":
            return _List(self.args("]"))
        if kind == "op" and text == "{":
            entries: list[tuple[_Expr, _Expr]] = []
            while not self.accept("}"):
                k = self.expr()
                self.expect(":")
                entries.append((k, self.expr()))
                if not self.accept(","):
                    self.expect("}")
                    break
            return _Map(entries)
        raise CostError(f"unexpected {text!r}")

    def member(self, e: _Expr) -> _Expr:
        while True:
            if self.accept("."):
                kind, name = self.next()
                if kind != "id":
                    raise CostError(f"expected a field name, got {name!r}")
                e = self.member_call(e, name, self.args(")")) if self.accept("(") else _Select(e, name)
            elif self.accept("["):
                idx = self.expr()
                self.expect("]")
                e = _Call("_[_]", [e, idx])
            elif self.peek() == ("op", "{") and _qualified(e):
                self.next()
                values: list[_Expr] = []
                while not self.accept("}"):
                    self.next()                 # the field name
                    self.expect(":")
                    values.append(self.expr())
                    if not self.accept(","):
                        self.expect("}")
                        break
                e = _Struct(values)
            else:
                return e

    def global_call(self, name: str, args: list[_Expr]) -> _Expr:
        if name == "has" and len(args) == 1 and isinstance(args[0], _Select):
            return _Select(args[0].operand, args[0].name, test_only=True)
        return _Call(name, args)

    def member_call(self, target: _Expr, name: str, args: list[_Expr]) -> _Expr:
        """A member call, or one of cel-go's comprehension macros (parser/macro.go) expanded."""
        if isinstance(target, _Ident) and target.name in _NAMESPACES:
            return _Call(f"{target.name}.{name}", args)     # a namespaced function: a global call
        var = args[0].name if args and isinstance(args[0], _Ident) else None
        if var is None:
            return _Call(name, args, target)
        accu = _Ident(_ACCU)
        if name in ("all", "exists", "exists_one", "existsOne") and len(args) in (2, 3):
            var2 = args[1].name if len(args) == 3 and isinstance(args[1], _Ident) else ""
            pred = args[-1]
            if name == "all":
                return _Comp(target, var, var2, _Lit("bool"), _Call("@not_strictly_false", [accu]),
                             _Call("_&&_", [accu, pred]), accu)
            if name == "exists":
                return _Comp(target, var, var2, _Lit("bool"), _Call("@not_strictly_false", [_Call("!_", [accu])]),
                             _Call("_||_", [accu, pred]), accu)
            one = _Lit("int", value=1)
            return _Comp(target, var, var2, _Lit("int", value=0), _Lit("bool"),
                         _Call("_?_:_", [pred, _Call("_+_", [accu, one]), accu]), _Call("_==_", [accu, one]))
        if name == "map" and len(args) in (2, 3):
            step: _Expr = _Call("_+_", [accu, _List([args[-1]])])
            if len(args) == 3:
                step = _Call("_?_:_", [args[1], step, accu])
            return _Comp(target, var, "", _List([]), _Lit("bool"), step, accu)
        if name == "filter" and len(args) == 2:
            step = _Call("_?_:_", [args[1], _Call("_+_", [accu, _List([_Ident(var)])]), accu])
            return _Comp(target, var, "", _List([]), _Lit("bool"), step, accu)
        return _Call(name, args, target)


def _qualified(e: _Expr) -> bool:
    while isinstance(e, _Select) and not e.test_only:
        e = e.operand
    return isinstance(e, _Ident)


# --- the estimate ---------------------------------------------------------------------------------

@dataclass(eq=False)
class _Info:
    """What the estimate knows of a subexpression: its type, its path from ``device`` (for the
    size estimator), its computed size and, for a list or map literal, its entries' sizes."""

    t: _T
    path: tuple[str, ...] | None = None
    size: Size | None = None
    entry: Size | None = None


def _size(info: _Info) -> Size:
    """``sizeOrUnknown`` / ``computeSize``: computed, then the size estimator, then the type."""
    if info.size is not None:
        return info.size
    got = _path_size(info.path)
    if got is not None:
        return got
    if info.t.kind in _SCALARS:
        return 1, 1
    return _UNKNOWN


_BOOL, _INT, _STRING, _DOUBLE = _T("bool"), _T("int"), _T("string"), _T("double")
_LIB_O1 = {"sign": _INT, "asInteger": _INT, "isInteger": _BOOL, "asApproximateFloat": _DOUBLE,
           "isGreaterThan": _BOOL, "isLessThan": _BOOL, "compareTo": _INT, "add": _QUANTITY, "sub": _QUANTITY}
_RESULTS = {"quantity": _QUANTITY, "isQuantity": _BOOL, "semver": _T("semver"), "isSemver": _BOOL,
            "major": _INT, "minor": _INT, "patch": _INT, "size": _INT, "int": _INT, "uint": _T("uint"),
            "double": _DOUBLE, "string": _STRING, "bytes": _T("bytes"), "bool": _BOOL, "matches": _BOOL,
            "contains": _BOOL, "startsWith": _BOOL, "endsWith": _BOOL, "@in": _BOOL, "!_": _BOOL,
            "@not_strictly_false": _BOOL, "_&&_": _BOOL, "_||_": _BOOL, "indexOf": _INT, "lastIndexOf": _INT,
            "charAt": _STRING, "lowerAscii": _STRING, "upperAscii": _STRING, "trim": _STRING,
            "substring": _STRING, "replace": _STRING, "join": _STRING, "find": _STRING,
            "split": _T("list", elem=_STRING), "findAll": _T("list", elem=_STRING), "isSorted": _BOOL,
            "sets.contains": _BOOL, "sets.equivalent": _BOOL, "sets.intersects": _BOOL,
            "strings.quote": _STRING, "reverse": _STRING}


class _Coster:
    def __init__(self) -> None:
        self.scopes: list[dict[str, _Info]] = []

    def local(self, name: str) -> _Info | None:
        for scope in reversed(self.scopes):
            if name in scope:
                return scope[name]
        return None

    def cost(self, e: _Expr) -> tuple[int, _Info]:
        if isinstance(e, _Lit):
            return 0, _Info(_T(e.kind), size=(e.size, e.size))
        if isinstance(e, _Ident):
            got = self.local(e.name)
            if got is not None:
                return _SELECT_AND_IDENT, _Info(got.t, got.path, got.size, got.entry)
            if e.name == "device":
                return _SELECT_AND_IDENT, _Info(_DEVICE, ("device",))
            return _SELECT_AND_IDENT, _Info(_DYN)
        if isinstance(e, (_Select, _Call)):
            return self.spine(e)
        if isinstance(e, _List):
            total, entry, elem = _LIST_CREATE, (U64, 0) if e.elems else (0, 0), None
            kinds = set()
            for x in e.elems:
                c, info = self.cost(x)
                total = _add(total, c)
                entry = _union(entry, _size(info))
                kinds.add(info.t.kind)
                elem = info.t
            t = _T("list", elem=elem if len(kinds) == 1 and elem is not None else _DYN)
            return total, _Info(t, size=(len(e.elems), len(e.elems)), entry=entry)
        if isinstance(e, _Map):
            total, vsize = _MAP_CREATE, (U64, 0) if e.entries else (0, 0)
            keys, values = set(), set()
            kt = vt = _DYN
            for k, v in e.entries:
                ck, ki = self.cost(k)
                cv, vi = self.cost(v)
                total = _add(total, _add(ck, cv))
                vsize = _union(vsize, _size(vi))
                keys.add(ki.t.kind)
                values.add(vi.t.kind)
                kt, vt = ki.t, vi.t
            t = _T("map", elem=vt if len(values) == 1 else _DYN, key=kt if len(keys) == 1 else _DYN)
            return total, _Info(t, size=(len(e.entries), len(e.entries)), entry=vsize)
        if isinstance(e, _Struct):
            total = _STRUCT_CREATE
            for x in e.values:
                total = _add(total, self.cost(x)[0])
            return total, _Info(_T("struct"))
        assert isinstance(e, _Comp)
        return self.comprehension(e)

    def spine(self, e: _Select | _Call) -> tuple[int, _Info]:
        """Cost a chain of selections and calls along their first operands (``a + b + c``,
        ``s.trim().lowerAscii()``) bottom-up in a loop: such a chain is as long as the expression
        (10 KiB), which recursion would not survive."""
        chain: list[_Select | _Call] = [e]
        while True:
            nxt = _first(chain[-1])
            if not isinstance(nxt, (_Select, _Call)):
                break
            chain.append(nxt)
        bottom = _first(chain[-1])
        acc = self.cost(bottom) if bottom is not None else None
        for node in reversed(chain):
            acc = self.select(node, acc) if isinstance(node, _Select) else self.call(node, acc)
        assert acc is not None
        return acc

    def select(self, e: _Select, first: tuple[int, _Info] | None) -> tuple[int, _Info]:
        assert first is not None
        c, op = first
        if e.test_only:
            return _add(c, _PRESENCE_TEST), _Info(_BOOL)
        t = op.t
        if t.kind in ("map", "struct"):
            c = _add(c, _SELECT_AND_IDENT)
        if t.kind == "struct":
            nt = t.fields.get(e.name, _DYN)
        elif t.kind == "map":
            nt = t.elem or _DYN
        else:
            nt = _DYN
        path = _child(op.path, e.name)
        return c, _Info(nt, path)

    def comprehension(self, e: _Comp) -> tuple[int, _Info]:
        c_rng, rng = self.cost(e.rng)
        c_init, init = self.cost(e.init)
        scope: dict[str, _Info] = {_ACCU: _Info(init.t, None, _size(init) if init.size is not None else None)}
        self.scopes.append(scope)
        rt = rng.t
        if rt.kind == "list":
            item = _Info(rt.elem or _DYN, _child(rng.path, "@items"))
            first = item if not e.var2 else _Info(_INT)
        elif rt.kind == "map":
            first = _Info(rt.key or _DYN, _child(rng.path, "@keys"))
            item = _Info(rt.elem or _DYN, _child(rng.path, "@values"))
        else:
            first = item = _Info(_DYN)
        iters = {e.var: first}
        if e.var2:
            iters[e.var2] = item
        self.scopes.append(iters)
        c_cond, _ = self.cost(e.cond)
        c_step, _ = self.cost(e.step)
        self.scopes.pop()
        c_result, result = self.cost(e.result)
        self.scopes.pop()
        count = _size(rng)
        total = _add(_add(c_rng, c_init), _add(c_result, _mul(count[1], _add(c_step, c_cond))))
        if isinstance(e.init, _List):
            return total, _Info(result.t if result.t.kind == "list" else _T("list"), size=count)
        return total, _Info(result.t, size=_size(init))

    def call(self, e: _Call, first: tuple[int, _Info] | None) -> tuple[int, _Info]:
        """``first``: the cost of the target (a member call) or else of the first argument."""
        if e.fn == "dyn" and len(e.args) == 1 and e.target is None:
            assert first is not None
            c, info = first
            return _add(c, 1), _Info(_DYN, info.path, info.size, info.entry)
        costs: list[int] = []
        infos: list[_Info] = []
        for i, a in enumerate(e.args):
            c, info = first if i == 0 and e.target is None and first is not None else self.cost(a)
            costs.append(c)
            infos.append(info)
        total = 0
        target: _Info | None = None
        if e.target is not None:
            assert first is not None
            total, target = first
        fn_cost, result = self.function(e, target, infos, costs)
        return _add(total, fn_cost), result

    def function(self, e: _Call, target: _Info | None, args: list[_Info],
                 costs: list[int]) -> tuple[int, _Info]:
        """``functionCost`` with Kubernetes' ``EstimateCallCost`` first, for this call's overloads."""
        fn = e.fn
        arg_sum = 0
        for c in costs:
            arg_sum = _add(arg_sum, c)
        result = _Info(_RESULTS.get(fn, _DYN))
        # library/cost.go (EstimateCallCost): its estimate plus the arguments.
        if fn in _LIB_O1:
            return _add(1, arg_sum), _Info(_LIB_O1[fn])
        call = _CallArgs(e, fn, len(args), target, args, [a.t.kind for a in args], costs, arg_sum, result)
        # Then cel-go checker/cost.go (functionCost): the first rule that applies, in this order.
        for rule in _CALL_RULES:
            got = rule(call)
            if got is not None:
                return got
        return _add(1, arg_sum), result


def _first(e: _Select | _Call) -> _Expr | None:
    """The operand evaluated first: a selection's operand, a member call's target, else the first
    argument."""
    if isinstance(e, _Select):
        return e.operand
    if e.target is not None:
        return e.target
    return e.args[0] if e.args else None


def _maybe(kinds: list[str], wanted: frozenset[str]) -> bool:
    """Some overload for these operand kinds takes ``wanted`` kinds (a dyn operand takes any)."""
    if any(k in wanted for k in kinds):
        return True
    return all(k == "dyn" for k in kinds)


def _equality(a: _Info, b: _Info) -> int:
    """cel-go's cost of ``==``, ``!=`` and string ordering: the smaller operand's maximum size
    times the string traversal factor."""
    return _factor(min(_size(a)[1], _size(b)[1]), _STRING_TRAVERSAL)


def _replace_size(sz: Size, to_replace: Size, replace_with: Size) -> Size:
    """library/cost.go's result size of ``replace``: each bound from the same bound of the string,
    the other bound of what is replaced, and whether a replacement can move that bound at all
    (lengthen the string for the maximum, shorten it for the minimum)."""
    count_max, retained_max = _replace_bound(sz[1], to_replace[0], replace_with[1] <= to_replace[0])
    count_min, retained_min = _replace_bound(sz[0], to_replace[1], to_replace[1] <= replace_with[0])
    return _size_add(_size_mul((count_min, count_max), replace_with), (retained_min, retained_max))


def _replace_bound(n: int, replaced: int, unmoved: bool) -> tuple[int, int]:
    """One bound of ``replace``'s result, for a string of size ``n``: how many replacements, and how
    much of the string is retained. An empty ``replaced`` matches around every character."""
    if replaced == 0:
        return (n + 1 if n < U64 else n), n
    if unmoved:
        return 0, n
    return math.ceil(n / replaced), 0


def estimate_cost(expression: str) -> int:
    """cel-go's worst-case cost estimate (``CostEstimate.Max``) of a device selector; raises
    ``CostError`` for an expression this parser cannot read."""
    try:
        tree = _Parser(expression).parse()
    except (IndexError, RecursionError) as e:
        raise CostError(str(e) or type(e).__name__) from None
    try:
        return _Coster().cost(tree)[0]
    except RecursionError as e:
        raise CostError("expression nested too deeply") from e


@dataclass(frozen=True, slots=True)
class _CallArgs:
    """One call, as the cost rules read it."""

    e: _Call
    fn: str
    n: int
    target: _Info | None
    args: list[_Info]
    kinds: list[str]
    costs: list[int]
    arg_sum: int
    result: _Info


def _member_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """library/cost.go's member functions of a target (``EstimateCallCost``)."""
    fn, n, target, args, arg_sum, result = c.fn, c.n, c.target, c.args, c.arg_sum, c.result
    if target is None:
        return None
    ts = _size(target)
    if fn in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf"):
        if target.t.kind == "list":
            el = 1
            elem = target.t.elem or _DYN
            if elem.kind in _STRINGISH:
                el = _add(el, _factor(_size(_Info(elem, _child(target.path, "@items")))[1], _STRING_TRAVERSAL))
            return _add(_mul(ts[1], el), arg_sum), _Info(elem if fn in ("sum", "max", "min") else
                                                          result.t)
        return _add(_factor(ts[1], _STRING_TRAVERSAL), arg_sum), result
    if fn in ("lowerAscii", "upperAscii", "substring", "trim"):
        return _add(_factor(ts[1], _STRING_TRAVERSAL), arg_sum), _Info(_STRING, size=ts)
    if fn == "replace" and n >= 2:
        return _add(_factor(ts[1], 2 * _STRING_TRAVERSAL), arg_sum), _Info(
            _STRING, size=_replace_size(ts, _size(args[0]), _size(args[1])))
    if fn in ("find", "findAll") and n >= 1:
        s = _factor(_add(ts[1], 1), _STRING_TRAVERSAL)
        r = _factor(_size(args[0])[1], _REGEX_LENGTH)
        return _add(_mul(s, r), arg_sum), _Info(result.t, size=(0, ts[1]))
    return None


def _split_join_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """library/cost.go's ``split`` and ``join`` of a target."""
    e, fn, n, target, args, arg_sum, result = c.e, c.fn, c.n, c.target, c.args, c.arg_sum, c.result
    if target is None:
        return None
    ts = _size(target)
    if fn == "split":
        top = ts[1]
        limit = e.args[1].value if n > 1 and isinstance(e.args[1], _Lit) else None
        if isinstance(limit, int) and not isinstance(limit, bool):
            top = limit % 2**64         # uint64(i): a negative limit wraps, as in Go
        return _add(_factor(ts[1], 2 * _STRING_TRAVERSAL), arg_sum), _Info(result.t, size=(0, top))
    if fn == "join":
        sz: Size = (0, 0)
        if target.t.kind == "list":
            elem = target.t.elem or _DYN
            sz = _size_mul(ts, _size(_Info(elem, _child(target.path, "@items"))))
        if n > 0:
            seps = (max(ts[0] - 1, 0), max(ts[1] - 1, 0))
            sz = _size_add(sz, _size_mul(_size(args[0]), seps))
        return _add(_factor(sz[1], _STRING_TRAVERSAL), arg_sum), _Info(_STRING, size=sz)
    return None


def _logic_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """Logic, the conditional and equality (checker/cost.go's ``functionCost``)."""
    fn, args, kinds, costs, arg_sum, result = c.fn, c.args, c.kinds, c.costs, c.arg_sum, c.result
    if fn in ("_&&_", "_||_"):
        return arg_sum, result
    if fn == "_?_:_":
        size = _union(_size(args[1]), _size(args[2]))
        t = args[1].t if args[1].t.kind == args[2].t.kind else _DYN
        return _add(costs[0], max(costs[1], costs[2])), _Info(t, size=size)
    if fn == "_==_" and kinds[0] == kinds[1] and kinds[0] in ("quantity", "semver"):
        return _add(1, arg_sum), result       # library/cost.go: O(1) equality of these types
    if fn in ("_==_", "_!=_"):
        return _add(_equality(args[0], args[1]), arg_sum), result
    return None


def _compare_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """Ordering comparisons."""
    fn, args, kinds, arg_sum = c.fn, c.args, c.kinds, c.arg_sum
    if fn in ("_<_", "_<=_", "_>_", "_>=_"):
        cost = 1
        if _maybe(kinds, _STRINGISH):
            cost = _equality(args[0], args[1])
            if not any(k in _STRINGISH for k in kinds):
                cost = max(cost, 1)           # dyn operands: the numeric overloads too
        return _add(cost, arg_sum), _Info(_BOOL)
    return None


def _in_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """``in``, by the right operand's kind."""
    fn, args, kinds, arg_sum, result = c.fn, c.args, c.kinds, c.arg_sum, c.result
    if fn == "@in":
        rk = kinds[1]
        if rk == "list":
            return _add(_factor(_size(args[1])[1], 1), arg_sum), result
        if rk == "dyn":
            return _add(max(_factor(_size(args[1])[1], 1), 1), arg_sum), result
        return _add(1, arg_sum), result
    return None


def _plus_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """``+`` on lists, strings and bytes, and numbers."""
    fn, n, args, kinds, arg_sum = c.fn, c.n, c.args, c.kinds, c.arg_sum
    if fn == "_+_" and n == 2:
        size = _size_add(_size(args[0]), _size(args[1]))
        if "list" in kinds:
            return _add(1, arg_sum), _Info(args[0].t if kinds[0] == "list" else args[1].t, size=size)
        if _maybe(kinds, _STRINGISH):
            cost = _factor(size[1], _STRING_TRAVERSAL)
            t = args[0].t if kinds[0] in _STRINGISH else args[1].t if kinds[1] in _STRINGISH else _DYN
            return _add(max(cost, 1) if t is _DYN else cost, arg_sum), _Info(t, size=size)
        return _add(1, arg_sum), _Info(args[0].t)
    return None


def _string_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """``startsWith``, ``endsWith``, ``contains`` and ``matches`` of a string target."""
    fn, n, target, args, arg_sum, result = c.fn, c.n, c.target, c.args, c.arg_sum, c.result
    if fn in ("startsWith", "endsWith") and n == 1 and target is not None:
        return _add(_factor(_size(args[0])[1], _STRING_TRAVERSAL), arg_sum), result
    if fn == "contains" and n == 1 and target is not None and target.t.kind in ("string", "dyn"):
        s = _factor(_size(target)[1], _STRING_TRAVERSAL)
        return _add(_mul(s, _factor(_size(args[0])[1], _STRING_TRAVERSAL)), arg_sum), result
    if fn == "matches" and n == 1 and target is not None:
        s = _factor(_add(_size(target)[1], 1), _STRING_TRAVERSAL)
        return _add(_mul(s, _factor(_size(args[0])[1], _REGEX_LENGTH)), arg_sum), result
    return None


def _conversion_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """``string(bytes)``, ``bytes(string)`` and ``strings.quote``."""
    fn, n, target, args, kinds, arg_sum, result = c.fn, c.n, c.target, c.args, c.kinds, c.arg_sum, c.result
    if fn == "string" and n == 1 and target is None and kinds[0] in ("bytes", "dyn"):
        sz = _size(args[0])
        cost = _factor(sz[1], _STRING_TRAVERSAL)
        return _add(max(cost, 1) if kinds[0] == "dyn" else cost, arg_sum), _Info(_STRING, size=(sz[0] // 4, sz[1]))
    if fn == "bytes" and n == 1 and target is None and kinds[0] in ("string", "dyn"):
        sz = _size(args[0])
        cost = _factor(sz[1], _STRING_TRAVERSAL)
        return _add(max(cost, 1) if kinds[0] == "dyn" else cost, arg_sum), _Info(
            result.t, size=(sz[0], _mul(sz[1], 4)))
    if fn == "strings.quote" and n == 1:
        sz = _size(args[0])
        return _add(_factor(sz[1], _STRING_TRAVERSAL), arg_sum), _Info(
            _STRING, size=(_add(sz[0], 2), _add(_mul(sz[1], 2), 2)))
    return None


def _collection_cost(c: _CallArgs) -> tuple[int, _Info] | None:
    """Sets, indexing and arithmetic."""
    fn, n, args, arg_sum, result = c.fn, c.n, c.args, c.arg_sum, c.result
    if fn in ("sets.contains", "sets.equivalent", "sets.intersects") and n == 2:
        # ext/sets.go's estimateSetsCost: the sizes' product (twice for equivalent), plus 1.
        product = _factor(_mul(_size(args[0])[1], _size(args[1])[1]), 2.0 if fn == "sets.equivalent" else 1.0)
        return _add(_add(product, 1), arg_sum), result
    if fn == "_[_]" and n == 2:
        t = args[0].t
        out = _Info(_DYN, size=args[0].entry)
        if t.kind == "list":
            out = _Info(t.elem or _DYN, _child(args[0].path, "@items"), args[0].entry)
        elif t.kind == "map":
            out = _Info(t.elem or _DYN, _child(args[0].path, "@values"), args[0].entry)
        return _add(1, arg_sum), out
    if fn in ("_-_", "_*_", "_/_", "_%_", "-_") and n:
        return _add(1, arg_sum), _Info(args[0].t)
    return None


_CALL_RULES = (_member_cost, _split_join_cost, _logic_cost, _compare_cost, _in_cost, _plus_cost, _string_cost,
               _conversion_cost, _collection_cost)
