"""CRD ``x-kubernetes-validations``: CEL rules evaluated as apiextensions-apiserver evaluates them.

Upstream: ``pkg/apiserver/schema/cel/validation.go`` (the walk and the errors), ``cel/compilation.go``
(compiling a schema node's rules), ``cel/model`` and ``k8s.io/apiserver/pkg/cel`` (how a value is
seen from CEL). The library functions are ``cellib.py``'s.

**Compiled once per CRD generation.** ``compiled(schema)`` turns an ``openAPIV3Schema`` into a tree of
``Node``s, each with the compiled rules declared there; the tree is cached by the schema object's
identity (a CRD update re-registers its versions with new schema objects, so a new generation
compiles anew). A rule that does not compile is never served: the CRD was refused (``crdcheck.py``).

**The walk** (``validate``): at each node with rules in its subtree, each rule runs with ``self`` bound
to the value there, as CEL sees it: an object with declared properties is a map of those properties
(names escaped as upstream's ``Escape``: ``foo-bar`` is ``self.foo__dash__bar``), a map
(``additionalProperties``) a map, a list a list, ``type: number`` a double, int-or-string an int or a
string; at the root, ``self.metadata`` has only ``name`` and ``generateName``. A ``null`` or absent
value runs no rule.

**Transition rules** (the rule names ``oldSelf``) run only on an update where the node has an old
value to correlate with: object properties and map values by key, ``x-kubernetes-list-type: map``
items by their keys; a ``set`` or atomic list's items have none. With ``optionalOldSelf: true`` the
rule runs anyway and ``oldSelf`` is an optional value (``oldSelf.hasValue()``, ``oldSelf.orValue(...)``).

**Ratcheting** (CRDValidationRatcheting, GA): on an update, a failed rule that does not use
``oldSelf`` is not an error where the value is unchanged from the old one, or, for a node with no
old value to correlate with (a set's or atomic list's item), where its nearest correlated ancestor
is unchanged (upstream then sends a warning instead; not sent here). An evaluation error is never
ratcheted.

**Errors**, as upstream's ``fieldErrorForReason``: the ``reason`` (``FieldValueInvalid`` when unset:
``spec.foo: Invalid value: "object": <message>``, the value shown being the schema node's type, ""
for int-or-string; ``FieldValueForbidden``: ``Forbidden: <message>``; ``FieldValueRequired``:
``Required value: <message>``; ``FieldValueDuplicate``: ``Duplicate value: "object"``), at the node's
path plus the rule's ``fieldPath``; the message is ``messageExpression``'s result (when it
evaluates to a non-empty one-line string), else ``message``, else ``failed rule: <rule>``. The root
node's path is ``<nil>``, as a nil ``field.Path`` prints. A rule that fails to evaluate is an
``Invalid`` at the node's path: ``<error> evaluating rule: <rule>``, or for a runtime type mismatch
``'no such overload': call arguments did not match a supported operator, function or macro
signature for rule: <rule>``.

A string with ``format: byte`` is CEL bytes, ``duration`` a duration, ``date`` and ``date-time`` a
timestamp (as ``cel/model`` types them).

Not done: cel-go's type checker, beyond ``undefined_field`` (``self.a.b`` must name declared fields;
other type errors show when the rule runs, as ``no such overload``), cost estimation and the
runtime cost budget, the timezone argument of the timestamp accessors (``getHours('01:00')``),
embedded resources (``x-kubernetes-embedded-resource``), and the set semantics of ``set``/``map``
lists (``==`` ignoring order, ``+`` as a union). The engine's ``size()`` of a string counts bytes
where cel-go counts code points, and its ``exists``/``all`` stop at the first element whose
predicate fails to evaluate where cel-go lets another element decide: both stricter than upstream,
never more lenient.
"""

from __future__ import annotations

import base64
import re
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import cel

from scheduler.simulator import cellib

__all__ = ["Node", "Rule", "compile_rule", "compiled", "field_path", "has_rules", "undefined_field", "validate"]

Obj = dict[str, Any]
Cause = tuple[str, str, str]
REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
_RESERVED = frozenset({"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
                       "function", "if", "import", "let", "loop", "package", "namespace", "return", "var",
                       "void", "while"})
_EXPAND = re.compile(r"(__|[-./]|[^a-zA-Z0-9\-./_])")
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}
_OLD_SELF = re.compile(r"\boldSelf\b")


@dataclass(frozen=True, slots=True)
class Rule:
    """One compiled ``x-kubernetes-validations`` entry (``error`` set when it did not compile)."""

    rule: str
    program: Any = None
    message: str = ""
    message_program: Any = None
    reason: str = ""
    field_path: str = ""              # the rule's fieldPath as a field path suffix (".foo[bar]")
    uses_old: bool = False
    optional_old: bool = False
    error: str = ""

    def default_message(self) -> str:
        # ruleMessageOrDefault
        return self.message.strip() or f"failed rule: {self.rule.strip()}"

    def error_string(self) -> str:
        # ruleErrorString
        return self.message.strip() or self.rule.strip()


@dataclass(slots=True)
class Node:
    """A schema node's rules and the nodes below it (only where some rule lies below)."""

    type: str = ""
    rules: tuple[Rule, ...] = ()
    properties: dict[str, Node] = field(default_factory=dict)
    additional: Node | None = None
    items: Node | None = None
    list_type: str = ""
    map_keys: tuple[str, ...] = ()
    schema: Obj = field(default_factory=dict)


def escape(name: str) -> str | None:
    """A property name as a CEL identifier (upstream's ``Escape``), or None when CEL cannot name it."""
    if not name or name[0].isdigit():
        return None
    if name in _RESERVED:
        return f"__{name}__"
    bad = False

    def sub(m: re.Match[str]) -> str:
        nonlocal bad
        out = _ESCAPES.get(m.group(0))
        if out is None:
            bad = True
            return ""
        return out
    out = _EXPAND.sub(sub, name)
    return None if bad else out


def compile_program(expression: str, variables: frozenset[str]) -> tuple[Any, str]:
    """(program, "") or (None, the compile error as cel-go words it)."""
    if not expression.strip():
        return None, "compilation failed: ERROR: <input>:1:1: Syntax error: mismatched input '<EOF>'"
    try:
        program = cel.compile(expression)
    except Exception as e:  # the engine raises ValueError for syntax errors
        text = re.sub(r"^Failed to parse expression '.*?': ", "", str(e), flags=re.S)
        return None, f"compilation failed: {text}"
    name = cellib.undeclared(program, expression, variables)
    if name:
        m = re.search(rf"\b{re.escape(name)}\b", expression)
        pos = m.start() if m else 0
        line = expression.count("\n", 0, pos) + 1
        col = pos - (expression.rfind("\n", 0, pos) + 1)
        src = expression.splitlines()[line - 1] if expression.splitlines() else ""
        return None, (f"compilation failed: ERROR: <input>:{line}:{col + 1}: undeclared reference to '{name}' "
                      f"(in container '')\n | {src}\n | {'.' * col}^")
    if problem := cellib.bad_pattern(expression):
        return None, f"program instantiation failed: {problem}"
    return program, ""


def compile_rule(entry: Obj, schema: Obj | None = None, root: bool = False) -> Rule:
    """Compile one ``x-kubernetes-validations`` entry declared on ``schema`` (``root``: a resource's)."""
    text = str(entry.get("rule") or "")
    uses_old = bool(_OLD_SELF.search(text))
    program, error = compile_program(text, frozenset({"self", "oldSelf"}))
    if program is not None and schema is not None:
        error = undefined_field(text, schema, root)
    msg_program = None
    if entry.get("messageExpression"):
        msg_program, msg_error = compile_program(str(entry["messageExpression"]), frozenset({"self", "oldSelf"}))
        if msg_program is not None and schema is not None:
            msg_error = undefined_field(str(entry["messageExpression"]), schema, root)
        error = error or ("messageExpression " + msg_error if msg_error else "")
    suffix, _ = field_path(str(entry.get("fieldPath") or ""), schema or {})
    return Rule(text, program, str(entry.get("message") or ""), msg_program, str(entry.get("reason") or ""),
                suffix, uses_old, entry.get("optionalOldSelf") is True, error)


# String literals (blanked out before looking for field selections), and ``self.a.b`` selections.
_STRING = re.compile(r"[rR]?(?:'''(?:.|\n)*?'''|\"\"\"(?:.|\n)*?\"\"\"|'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\")")
_SELECT = re.compile(r"\b(self|oldSelf)((?:\s*\.\s*[A-Za-z_]\w*)+)(\s*\()?")
_ROOT_FIELDS = {"apiVersion": {"type": "string"}, "kind": {"type": "string"},
                "metadata": {"type": "object", "properties": {"name": {"type": "string"},
                                                              "generateName": {"type": "string"}}}}


def undefined_field(expression: str, schema: Obj, root: bool = False) -> str:
    """The part of cel-go's type check that matters most: ``self.a.b`` (and ``oldSelf``'s) must name
    fields the schema declares where it declares properties (``undefined field 'b'``). A map, an
    int-or-string or a free-form value ends the check, and comprehension variables are not checked."""
    code = _STRING.sub(lambda m: " " * len(m.group(0)), expression)     # no matches inside literals
    for m in _SELECT.finditer(code):
        names = [n.strip() for n in m.group(2).split(".")[1:]]
        if m.group(3):
            names = names[:-1]              # the last one is a method: self.name.startsWith(...)
        node: Any = schema
        pos = m.start(2)
        for i, name in enumerate(names):
            props = dict(node.get("properties") or {}) if isinstance(node, dict) else {}
            if root and i == 0:
                props = {**{k: v for k, v in props.items() if k != "metadata"}, **_ROOT_FIELDS}
            pos = code.index(".", pos)
            if not props:
                break
            by_cel_name = {escape(k): v for k, v in props.items()}
            if name not in by_cel_name:
                line = expression.count("\n", 0, pos) + 1
                col = pos - (expression.rfind("\n", 0, pos) + 1)
                src = expression.splitlines()[line - 1]
                return (f"compilation failed: ERROR: <input>:{line}:{col + 1}: undefined field '{name}'\n"
                        f" | {src}\n | {'.' * col}^")
            node = by_cel_name[name]
            pos += 1
    return ""


_TOKEN = re.compile(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+|'.*")
_UNESCAPE = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "'": "'",
             "\\": "\\"}


def field_path(text: str, schema: Obj) -> tuple[str, str]:
    """A rule's ``fieldPath`` (``.foo.bar``, ``['foo.bar']``, ``.m['key']``) against the schema it is
    declared on, as upstream's ``ValidFieldPath``: (the field path suffix, "") or ("", the error)."""
    out = ""
    tokens = _TOKEN.findall(text)
    node: Any = schema
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        if tok not in (".", "["):
            return "", f"expected [ or . but got: {tok}"
        if i + 1 >= len(tokens):
            return "", "unexpected end of JSON path"
        name = tokens[i + 1]
        if tok == "[":
            if len(name) < 2 or name[0] != "'" or name[-1] != "'":
                return "", f"expected single quoted string but got {name}"
            name = re.sub(r"\\(.)", lambda m: _UNESCAPE.get(m.group(1), ""), name[1:-1])
            if i + 2 >= len(tokens):
                return "", "unexpected end of JSON path"
            if tokens[i + 2] != "]":
                return "", f"expected ] but got {tokens[i + 2]}"
            i += 1
        i += 2
        if not isinstance(node, dict):
            return "", "does not refer to a valid field"
        if node.get("properties"):
            if name not in node["properties"]:
                return "", "does not refer to a valid field"
            node = node["properties"][name]
            out += f".{name}"
        elif isinstance(node.get("additionalProperties"), dict):
            node = node["additionalProperties"]
            out += f"[{name}]"
        else:
            return "", "does not refer to a valid field"
    return out, ""


def _build(schema: Obj, root: bool = False) -> Node | None:
    node = Node(type=str(schema.get("type") or ""), schema=schema,
                list_type=str(schema.get("x-kubernetes-list-type") or ""),
                map_keys=tuple(schema.get("x-kubernetes-list-map-keys") or ()))
    rules = schema.get("x-kubernetes-validations") or ()
    node.rules = tuple(r for r in (compile_rule(e, schema, root) for e in rules if isinstance(e, dict))
                       if not r.error)
    for k, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict) and (child := _build(sub)) is not None:
            node.properties[k] = child
    if isinstance(schema.get("additionalProperties"), dict):
        node.additional = _build(schema["additionalProperties"])
    if isinstance(schema.get("items"), dict):
        node.items = _build(schema["items"])
    if node.rules or node.properties or node.additional or node.items:
        return node
    return None


# id(schema) -> (schema, its tree): the schema is held so its id is not reused while cached.
_CACHE: OrderedDict[int, tuple[Obj, Node | None]] = OrderedDict()
_CACHE_SIZE = 256


def compiled(schema: Obj) -> Node | None:
    """The compiled rule tree of ``schema`` (None when it declares no rule), cached."""
    got = _CACHE.get(id(schema))
    if got is not None and got[0] is schema:
        _CACHE.move_to_end(id(schema))
        return got[1]
    tree = _build(schema, root=True)
    _CACHE[id(schema)] = (schema, tree)
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return tree


def has_rules(schema: Obj) -> bool:
    return compiled(schema) is not None


# --- values as CEL sees them --------------------------------------------------------------------

def to_cel(value: Any, schema: Obj | None, root: bool = False) -> Any:
    if value is None or schema is None:
        return value
    if isinstance(value, dict):
        return _object_to_cel(value, schema, root)
    if isinstance(value, list):
        items = schema.get("items")
        return [to_cel(x, items if isinstance(items, dict) else None) for x in value]
    if schema.get("type") == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and schema.get("type") == "string" and schema.get("format") in _FORMATS:
        return _FORMATS[str(schema["format"])](value)
    return value


def _object_to_cel(value: Obj, schema: Obj, root: bool) -> Any:
    """An object as CEL sees it: only its declared fields (a null one is absent), and at the root only
    metadata's name and generateName; a map's values each by ``additionalProperties``."""
    props = schema.get("properties")
    extra = schema.get("additionalProperties")
    if props:
        out = {}
        for k, v in value.items():
            sub = props.get(k)
            if v is None:
                continue        # a null field reads as absent (has() is false)
            if root and k == "metadata" and isinstance(v, dict):
                out[k] = {f: v[f] for f in ("name", "generateName") if f in v}
            elif sub is not None and (name := escape(k)) is not None:
                out[name] = to_cel(v, sub)
            elif root and k in ("apiVersion", "kind"):
                out[k] = v
        return out
    if isinstance(extra, dict):
        return {k: to_cel(v, extra) for k, v in value.items()}
    return value


_GO_DURATION = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1, "m": 60, "h": 3600}


def _duration(text: str) -> Any:
    # Go's time.ParseDuration ("1h2m3s4ms", "-1.5h", "0"); what does not parse stays a string.
    body = text.lstrip("+-")
    if body == "0":
        return timedelta(0)
    parts = _GO_DURATION.findall(body)
    if not body or not parts or "".join(n + u for n, u in parts) != body or any(n in ("", ".") for n, _ in parts):
        return text
    seconds = sum(float(n) * _UNIT_SECONDS[u] for n, u in parts)
    return timedelta(seconds=-seconds if text.startswith("-") else seconds)


def _timestamp(text: str) -> Any:
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return text
    return t if t.tzinfo is not None else t.replace(tzinfo=UTC)


def _bytes(text: str) -> Any:
    try:
        return base64.b64decode(text, validate=True)
    except ValueError:
        return text


# A string's ``format`` as CEL types it (cel/model: byte -> bytes, duration, date and date-time -> timestamp).
_FORMATS: dict[str, Callable[[str], Any]] = {"byte": _bytes, "duration": _duration, "date": _timestamp,
                                             "date-time": _timestamp, "datetime": _timestamp}


# --- the walk ------------------------------------------------------------------------------------

_ABSENT = object()


def validate(schema: Obj, value: Any, old: Any = None, path: str = "") -> list[Cause]:
    """The causes of ``value`` failing the rules of ``schema`` (``old``: the stored object on an
    update, None on a create). ``path``: where the value is (empty for a resource's root)."""
    tree = compiled(schema)
    if tree is None:
        return []
    out: list[Cause] = []
    _walk(tree, value, _ABSENT if old is None else old, False, path, out, root=not path)
    return out


def _walk(node: Node, value: Any, old: Any, same_above: bool, path: str, out: list[Cause],
          root: bool = False) -> None:
    """``old``: the correlated old value (``_ABSENT`` when there is none); ``same_above``: whether the
    nearest correlated ancestor is unchanged (what ratchets an uncorrelated node's errors)."""
    if value is None:
        return
    same = value == old if old is not _ABSENT else same_above
    if node.rules:
        _run(node, value, old, same, path, out, root)
    if isinstance(value, dict):
        for k, child in node.properties.items():
            if k in value and not (root and k == "metadata"):
                _walk(child, value[k], old.get(k, _ABSENT) if isinstance(old, dict) else _ABSENT, same,
                      f"{path}.{k}" if path else k, out)
        if node.additional is not None:
            props = node.schema.get("properties") or {}
            for k, v in value.items():
                if k not in props:
                    _walk(node.additional, v, old.get(k, _ABSENT) if isinstance(old, dict) else _ABSENT, same,
                          f"{path}[{k}]", out)
    elif isinstance(value, list) and node.items is not None:
        olds = _correlate(node, value, old)
        for i, x in enumerate(value):
            _walk(node.items, x, olds[i], same, f"{path}[{i}]", out)


def _correlate(node: Node, value: list[Any], old: Any) -> list[Any]:
    """Each item's old value: by key for ``map`` lists (makeMapList), none otherwise (a ``set`` or
    atomic list's items have no ``oldSelf``; their errors ratchet with the list's)."""
    if not isinstance(old, list) or node.list_type != "map" or not node.map_keys:
        return [_ABSENT] * len(value)
    keyed = {}
    for o in old:
        if isinstance(o, dict):
            keyed[tuple(repr(o.get(k)) for k in node.map_keys)] = o
    return [keyed.get(tuple(repr(x.get(k)) for k in node.map_keys), _ABSENT) if isinstance(x, dict) else _ABSENT
            for x in value]


def _shown(node: Node) -> str:
    return f'"{node.type}"'


def _run(node: Node, value: Any, old: Any, same: bool, path: str, out: list[Cause], root: bool) -> None:
    has_old = old is not _ABSENT and old is not None
    this = to_cel(value, node.schema, root)
    prior: Any = None
    shown = path or "<nil>"
    for rule in node.rules:
        if rule.uses_old and not has_old and not rule.optional_old:
            continue      # a transition rule needs a value to transition from
        if rule.uses_old:
            if prior is None:
                prior = to_cel(old, node.schema, root) if has_old else None
            variables = {"self": this, "oldSelf": _old_self(rule, prior, has_old)}
        else:
            variables = {"self": this}
        ratchet = not rule.uses_old and same
        result, error = _eval(rule.program, variables)
        if error:       # (never ratcheted: upstream appends evaluation errors directly)
            how = "for rule" if error.startswith("'") else "evaluating rule"
            out.append((shown, "FieldValueInvalid", f"Invalid value: {_shown(node)}: {error} {how}: "
                                                    f"{rule.error_string()}"))
            continue
        if result is True or ratchet:
            continue
        message = _message(rule, this, old, has_old, node, root)
        where = (path + rule.field_path).lstrip(".") if rule.field_path else shown
        out.append(_error(where, rule.reason, _shown(node), message))


def _old_self(rule: Rule, prior: Any, has_old: bool) -> Any:
    """``oldSelf``: the old value, or for an optionalOldSelf rule an optional of it."""
    if rule.optional_old:
        return cel.OptionalValue.of(prior) if has_old else cel.OptionalValue.none()
    return prior


def _message(rule: Rule, this: Any, old: Any, has_old: bool, node: Node, root: bool) -> str:
    """A failed rule's message: its messageExpression's result where that is one clean line, else the
    rule's message."""
    message = rule.default_message()
    if rule.message_program is not None:
        # (upstream evaluates it with the plain activation, even for an optionalOldSelf rule)
        plain = {"self": this, **({"oldSelf": to_cel(old, node.schema, root)} if has_old else {})}
        got, msg_error = _eval(rule.message_program, plain)
        if not msg_error and isinstance(got, str) and got.strip() and "\n" not in got.strip():
            message = got.strip()
    return message


def _error(where: str, reason: str, shown: str, message: str) -> Cause:
    if reason == "FieldValueForbidden":
        return where, reason, f"Forbidden: {message}"
    if reason == "FieldValueRequired":
        return where, reason, f"Required value: {message}"
    if reason == "FieldValueDuplicate":
        return where, reason, f"Duplicate value: {shown}"
    return where, "FieldValueInvalid", f"Invalid value: {shown}: {message}"


def _eval(program: Any, variables: dict[str, Any]) -> tuple[Any, str]:
    try:
        return program.execute(cellib.context(program, variables)), ""
    except KeyError as e:
        return None, f"no such key: {e.args[0] if e.args else ''}"
    except IndexError as e:
        return None, str(e)
    except ZeroDivisionError:
        return None, "division by zero"
    except Exception as e:  # the engine's TypeError, RuntimeError, ...
        text = str(e)
        if text.startswith(("No such overload", "Unsupported operation")):
            return None, "'no such overload': call arguments did not match a supported operator, function or " \
                         "macro signature"
        if text.startswith("Arithmetic overflow"):
            return None, "integer overflow"
        text = re.sub(r"^Function '\w+' error: |\.? Check function arguments and their types\.$", "", text)
        m = re.search(r"(?:CELError|ValueError): (.*)$", text, flags=re.S)
        return None, m.group(1) if m else text
