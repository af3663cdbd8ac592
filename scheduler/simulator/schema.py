"""Structural-schema validation, pruning and defaulting for custom resources (a subset of apiextensions).

Checked: ``type`` (object, array, string, integer, number, boolean), ``required``, ``enum``,
``minimum``/``maximum`` (and their exclusive forms), ``minLength``/``maxLength``, ``minItems``/
``maxItems``, ``pattern``, ``nullable``, ``x-kubernetes-int-or-string`` and
``x-kubernetes-preserve-unknown-fields``. Unknown fields are pruned, as a real server prunes them;
``prune`` returns their paths so ``fieldValidation=Strict`` can refuse them. Error texts follow
the apiserver's: ``spec.replicas: Invalid value: "string": spec.replicas in body must be of type
integer: "string"``.

**Decoding** (``coerce``) is what apiextensions-apiserver's codec does to every custom resource it
decodes, a request's body (create, update, the result of a patch) and an object read from storage
alike: prune unknown fields; drop a ``null`` that is neither ``nullable`` nor defaulted
(``PruneNonNullableNullsWithoutDefaults``: not an error, it is as if it were not sent); then apply
``default:`` values (``defaulting/algorithm.go``: a missing property, or a non-nullable ``null``,
gets a copy of its default, in properties, ``additionalProperties`` values and ``items``, and the
walk goes on into what was defaulted). Defaults come after pruning, and a CRD's defaults are checked
to be pruned already (``crdcheck.py``), so defaulting adds no unknown field. Server-side apply
defaults the merged object, not the apply configuration, so its manager does not own the defaults.

**Validation** (``validate``) is the OpenAPI check, then the CRD's CEL rules (``celrules.py``)
unless the OpenAPI check found a blocking error (a wrong type, a missing required field, an enum
miss, too long, too many), as the custom resource strategy's ``hasBlockingErr`` decides.
"""

from __future__ import annotations

import copy
import operator
import re
from collections.abc import Mapping
from typing import Any, TypeVar

from scheduler.simulator import celrules

__all__ = ["coerce", "default", "prune", "prune_nulls", "redecode", "validate"]

Obj = dict[str, Any]
K = TypeVar("K")
_TYPES = {"object": dict, "array": list, "string": str, "boolean": bool}
# (keyword, its exclusive flag, what lies beyond it, the word of the message) for numbers
_BOUNDS = (("minimum", "exclusiveMinimum", operator.lt, "greater than"),
           ("maximum", "exclusiveMaximum", operator.gt, "less than"))


# A JSON value's type as the schema names it (bool before int: a bool is an int in Python).
_TYPE_NAMES = ((bool, "boolean"), (int, "integer"), (float, "number"), (str, "string"), (list, "array"),
               (dict, "object"))


def _type_name(v: Any) -> str:
    return next((name for t, name in _TYPE_NAMES if isinstance(v, t)), "null")


def _type_ok(t: str, v: Any) -> bool:
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, (int, float)) and not isinstance(v, bool)
    cls = _TYPES.get(t)
    return cls is None or isinstance(v, cls)


def _show(v: Any) -> str:
    return f'"{v}"' if isinstance(v, str) else ("null" if v is None else str(v).lower() if isinstance(v, bool) else
                                                 str(v))


# The OpenAPI errors after which the CEL rules are not run (the strategy's hasBlockingErr).
_BLOCKING = frozenset({"FieldValueNotSupported", "FieldValueRequired", "FieldValueTooLong", "FieldValueTooMany",
                       "FieldValueTypeInvalid"})
NOT_CHECKED = ("<nil>", "FieldValueInvalid", 'Invalid value: "null": some validation rules were not checked because '
                                            "the object was invalid; correct the existing errors to complete "
                                            "validation")


def validate(schema: Obj | None, value: Any, path: str = "", *, old: Any = None,
             rules: bool = True) -> list[tuple[str, str, str]]:
    """(field, reason, detail) causes for ``value`` against ``schema``; empty when valid. ``old``:
    the stored object on an update (transition rules and ratcheting); ``rules=False``: the OpenAPI
    check alone."""
    if not schema:
        return []
    causes: list[tuple[str, str, str]] = []
    _check(schema, value, path, causes, top=True)
    if not rules:
        return causes
    if any(reason in _BLOCKING for _, reason, _ in causes):
        if celrules.has_rules(schema):
            causes.append(NOT_CHECKED)
        return causes
    return causes + celrules.validate(schema, value, old)


def _check(s: Obj, v: Any, path: str, out: list[tuple[str, str, str]], top: bool = False) -> None:
    shown = path or "<root>"
    if v is None:
        if not s.get("nullable") and s.get("type") and not top:
            out.append((shown, "FieldValueTypeInvalid",
                        f'Invalid value: "null": {shown} in body must be of type {s["type"]}: "null"'))
        return
    t = s.get("type")
    if s.get("x-kubernetes-int-or-string"):
        if not (isinstance(v, (int, str)) and not isinstance(v, bool)):
            out.append((shown, "FieldValueTypeInvalid",
                        f'Invalid value: "{_type_name(v)}": {shown} in body must be of type integer-or-string'))
        return
    if t and not _type_ok(t, v):
        out.append((shown, "FieldValueTypeInvalid",
                    f'Invalid value: "{_type_name(v)}": {shown} in body must be of type {t}: "{_type_name(v)}"'))
        return
    if "enum" in s and v not in s["enum"]:
        allowed = ", ".join(_show(e) for e in s["enum"])
        out.append((shown, "FieldValueNotSupported", f"Unsupported value: {_show(v)}: supported values: {allowed}"))
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        _check_number(s, v, shown, out)
    if isinstance(v, str):
        _check_string(s, v, shown, out)
    if isinstance(v, list):
        _check_list(s, v, path, shown, out)
    if isinstance(v, dict):
        _check_object(s, v, path, out, top)


def _check_number(s: Obj, v: float, shown: str, out: list[tuple[str, str, str]]) -> None:
    """minimum and maximum, inclusive or exclusive."""
    for bound, exclusive, beyond, word in _BOUNDS:
        if bound in s and (beyond(v, s[bound]) or (s.get(exclusive) is True and v == s[bound])):
            rel = word if s.get(exclusive) is True else f"{word} or equal to"
            out.append((shown, "FieldValueInvalid", f"Invalid value: {v}: {shown} in body should be {rel} "
                                                    f"{s[bound]}"))


def _check_string(s: Obj, v: str, shown: str, out: list[tuple[str, str, str]]) -> None:
    """maxLength, minLength and pattern (each bound worded as upstream words it, so the two stay apart)."""
    if "maxLength" in s and len(v) > s["maxLength"]:
        out.append((shown, "FieldValueTooLong", f"Too long: may not be more than {s['maxLength']} bytes"))
    if "minLength" in s and len(v) < s["minLength"]:
        out.append((shown, "FieldValueInvalid", f'Invalid value: "{v}": {shown} in body should be at least '
                                                f"{s['minLength']} chars long"))
    if "pattern" in s and not re.search(s["pattern"], v):
        out.append((shown, "FieldValueInvalid", f'Invalid value: "{v}": {shown} in body should match '
                                                f"'{s['pattern']}'"))


def _check_list(s: Obj, v: list[Any], path: str, shown: str, out: list[tuple[str, str, str]]) -> None:
    """maxItems and minItems, then each item against ``items``."""
    if "maxItems" in s and len(v) > s["maxItems"]:
        out.append((shown, "FieldValueTooMany", f"Too many: {len(v)}: must have at most {s['maxItems']} items"))
    if "minItems" in s and len(v) < s["minItems"]:
        out.append((shown, "FieldValueInvalid", f"Invalid value: {len(v)}: {shown} in body should have at "
                                                f"least {s['minItems']} items"))
    items = s.get("items")
    if isinstance(items, dict):
        for i, x in enumerate(v):
            _check(items, x, f"{path}[{i}]", out)


def _check_object(s: Obj, v: Obj, path: str, out: list[tuple[str, str, str]], top: bool) -> None:
    """required, then each field against its property (or ``additionalProperties``)."""
    props = s.get("properties") or {}
    for req in s.get("required") or ():
        if req not in v:
            out.append((f"{path}.{req}" if path else req, "FieldValueRequired", "Required value"))
    for k, x in v.items():
        if top and k in ("apiVersion", "kind", "metadata"):
            continue
        sub = props.get(k)
        if sub is None and isinstance(s.get("additionalProperties"), dict):
            sub = s["additionalProperties"]
        if sub is not None:
            _check(sub, x, f"{path}.{k}" if path else k, out)


def prune(schema: Obj | None, value: Any, path: str = "", top: bool = True) -> list[str]:
    """Drop fields the schema does not declare (in place); the dropped paths."""
    if not schema or not isinstance(value, (dict, list)):
        return []
    dropped: list[str] = []
    if isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, x in enumerate(value):
                dropped += prune(items, x, f"{path}[{i}]", False)
        return dropped
    if schema.get("x-kubernetes-preserve-unknown-fields") and not schema.get("properties"):
        return []
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties")
    for k in list(value):
        if top and k in ("apiVersion", "kind", "metadata"):
            continue
        sub = props.get(k)
        if sub is None and isinstance(extra, dict):
            sub = extra
        if sub is None and extra is not True:
            if schema.get("x-kubernetes-preserve-unknown-fields"):
                continue
            del value[k]
            dropped.append(f"{path}.{k}" if path else k)
        elif sub is not None:
            dropped += prune(sub, value[k], f"{path}.{k}" if path else k, False)
    return dropped


def prune_nulls(schema: Obj | None, value: Any) -> None:
    """Drop (in place) each ``null`` whose field is neither nullable nor defaulted (upstream's
    ``PruneNonNullableNullsWithoutDefaults``; a list's items are kept, the validation sees them)."""
    if isinstance(value, dict):
        for k in list(value):
            sub = _field_schema(schema, k)
            if value[k] is None and sub is not None and not sub.get("nullable") and "default" not in sub:
                del value[k]
            else:
                prune_nulls(sub, value[k])
    elif isinstance(value, list):
        items = schema.get("items") if schema else None
        for x in value:
            prune_nulls(items if isinstance(items, dict) else None, x)


def _field_schema(schema: Obj | None, key: str) -> Obj | None:
    if not schema:
        return None
    sub = (schema.get("properties") or {}).get(key)
    if sub is None and isinstance(schema.get("additionalProperties"), dict):
        sub = schema["additionalProperties"]
    return sub if isinstance(sub, dict) else None


def _defaults_null(value: Any, schema: Obj | None) -> bool:
    # isNonNullableNull: a null where the schema has a default and does not allow null.
    return value is None and schema is not None and not schema.get("nullable") and "default" in schema


def default(schema: Obj | None, value: Any) -> None:
    """Apply the schema's ``default:`` values to ``value`` in place (upstream's ``Default``)."""
    if not schema:
        return
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        for k, sub in props.items():
            if isinstance(sub, dict) and "default" in sub and (k not in value or _defaults_null(value[k], sub)):
                value[k] = copy.deepcopy(sub["default"])
        extra = schema.get("additionalProperties")
        for k in list(value):
            sub = props.get(k)
            if sub is not None:
                default(sub, value[k])
            elif isinstance(extra, dict):
                if _defaults_null(value[k], extra):
                    value[k] = copy.deepcopy(extra["default"])
                default(extra, value[k])
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            for i, x in enumerate(value):
                if _defaults_null(x, items):
                    value[i] = copy.deepcopy(items["default"])
                default(items, value[i])


def coerce(schema: Obj | None, value: Any, *, defaults: bool = True) -> list[str]:
    """Decode ``value`` as apiextensions' codec does (in place): prune, drop the nulls nobody may
    send, then default (unless ``defaults`` is False: a server-side apply configuration). The
    unknown fields' paths, for ``fieldValidation``."""
    if not schema:
        return []
    unknown = prune(schema, value)
    prune_nulls(schema, value)
    if defaults:
        default(schema, value)
    return unknown


def redecode(schema: Obj | None, objects: Mapping[K, Obj]) -> list[tuple[K, Obj]]:
    """The stored ``objects`` that read differently under ``schema`` (a new CRD generation: storage
    decoding prunes and defaults what was stored before), each as it now reads (a copy)."""
    out = []
    for key, obj in objects.items():
        new = copy.deepcopy(obj)
        coerce(schema, new)
        if new != obj:
            out.append((key, new))
    return out
