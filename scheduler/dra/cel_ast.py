"""The expression parser of the cost estimate: a lexer and a recursive-descent parser for CEL's
grammar into a small AST, with cel-go's macros expanded into comprehensions over the
``__result__`` accumulator, because the estimate is computed over that expansion
(``scheduler.dra.celcost`` lists what is read; ``cel_estimate`` costs the tree).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_ACCU = "__result__"


class CostError(ValueError):
    """The expression does not parse (the engine's own parse error is what users see)."""


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
