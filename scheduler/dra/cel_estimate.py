"""The estimate per expression and per call kind: cel-go's ``checker/cost.go`` (``costCall``,
``functionCost``) with Kubernetes' ``library/cost.go`` (``EstimateCallCost``) consulted first, over
the tree ``cel_ast`` parses and the sizes ``cel_sizes`` models. Each call kind is one rule; the
first rule that applies, in cel-go's order, gives the call's cost and result.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from scheduler.dra.cel_ast import _ACCU, _Call, _Comp, _Expr, _Ident, _List, _Lit, _Map, _Select, _Struct
from scheduler.dra.cel_sizes import (
    _DEVICE,
    _DYN,
    _LIST_CREATE,
    _MAP_CREATE,
    _PRESENCE_TEST,
    _QUANTITY,
    _REGEX_LENGTH,
    _SELECT_AND_IDENT,
    _STRING_TRAVERSAL,
    _STRINGISH,
    _STRUCT_CREATE,
    _T,
    U64,
    Size,
    _add,
    _child,
    _factor,
    _Info,
    _mul,
    _size,
    _size_add,
    _size_mul,
    _union,
)

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
