"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` (``patch.go``), its patch
metadata read from the served OpenAPI schema, walked as field ownership walks it (``managed.py``
compiles each definition once, by ``$ref``): a list whose field declares
``x-kubernetes-patch-strategy: merge`` merges its maps by the field's
``x-kubernetes-patch-merge-key`` (a Service's ``ports`` by ``port``, a container's by
``containerPort``), or its primitives as a set (``finalizers``); every other list is replaced whole (a
Node's ``spec.taints``, a pod's ``tolerations``); a map merges field by field unless its field
declares ``replace`` (a PDB's ``selector``). The directives ``$patch: replace|delete``,
``$deleteFromPrimitiveList/<field>``, ``$setElementOrder/<field>`` and ``$retainKeys`` are understood.
Custom resources never get here: kube-apiserver refuses their strategic merge patches with 415.

A JSON patch is the one body that can grow a document far beyond its own size: ``copy`` duplicates a
subtree, so 23 self-copies double a document 23 times. kube-apiserver bounds it in two ways
(``endpoints/handlers/patch.go``). A patch may hold at most ``MAX_JSON_PATCH_OPERATIONS`` operations,
or the answer is 413. The bytes that ``copy`` adds, summed over the patch, may not exceed
``COPY_SIZE_LIMIT``: evanphx/json-patch's ``AccumulatedCopySizeLimit``, which the apiserver sets to
``JSONPatchMaxCopyBytes``, 3 MiB. Beyond that the answer is 422. Both checks happen before the
document grows, so the work a patch can cause is bounded too.
"""

from __future__ import annotations

import copy
import math
from typing import Any

import orjson

from scheduler.simulator.managed import DEDUCED, MAP, STRUCT, Schema

__all__ = ["COPY_SIZE_LIMIT", "MAX_JSON_PATCH_OPERATIONS", "PatchError", "go_value", "json_patch", "merge_patch",
           "strategic_merge_patch"]

MAX_JSON_PATCH_OPERATIONS = 10_000
COPY_SIZE_LIMIT = 3 * 1024 * 1024

_DIRECTIVE = "$patch"
_RETAIN = "$retainKeys"
_ORDER = "$setElementOrder/"
_DELETE_FROM = "$deleteFromPrimitiveList/"
_UNKNOWN = Schema(DEDUCED)          # no patch metadata: maps merge, lists are replaced


class PatchError(ValueError):
    """A patch that cannot be applied; ``code`` is the HTTP status the server answers."""

    def __init__(self, message: str, code: int = 422) -> None:
        super().__init__(message)
        self.code = code


def merge_patch(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for k, v in patch.items():
        if v is None:
            out.pop(k, None)
        else:
            out[k] = merge_patch(out.get(k), v)
    return out


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _walk(doc: Any, pointer: str) -> tuple[Any, str]:
    if not pointer.startswith("/"):
        raise PatchError(f"invalid JSON pointer {pointer!r}")
    parts = [_unescape(p) for p in pointer[1:].split("/")]
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict):
            if p not in cur:
                raise PatchError(f"doc is missing path: \"{pointer}\"")
            cur = cur[p]
        elif isinstance(cur, list):
            try:
                cur = cur[int(p)]
            except (ValueError, IndexError):
                raise PatchError(f"doc is missing path: \"{pointer}\"") from None
        else:
            raise PatchError(f"doc is missing path: \"{pointer}\"")
    return cur, parts[-1]


def _get(doc: Any, pointer: str) -> Any:
    if pointer == "":
        return doc
    parent, key = _walk(doc, pointer)
    try:
        return parent[int(key)] if isinstance(parent, list) else parent[key]
    except (KeyError, ValueError, IndexError, TypeError):
        raise PatchError(f"doc is missing path: \"{pointer}\"") from None


def _add(doc: Any, pointer: str, value: Any) -> Any:
    if pointer == "":
        return value
    parent, key = _walk(doc, pointer)
    if isinstance(parent, list):
        if key == "-":
            parent.append(value)
        else:
            try:
                idx = int(key)
            except ValueError:
                raise PatchError(f"invalid index {key!r}") from None
            if idx < 0 or idx > len(parent):
                raise PatchError(f"Unable to access invalid index: {idx}")
            parent.insert(idx, value)
    elif isinstance(parent, dict):
        parent[key] = value
    else:
        raise PatchError(f"doc is missing path: \"{pointer}\"")
    return doc


def _remove(doc: Any, pointer: str) -> Any:
    parent, key = _walk(doc, pointer)
    try:
        if isinstance(parent, list):
            del parent[int(key)]
        else:
            del parent[key]
    except (KeyError, ValueError, IndexError, TypeError):
        raise PatchError(f"Unable to remove nonexistent key: {key}: missing value") from None
    return doc


def json_patch(target: Any, ops: Any, *, copy_limit: int = COPY_SIZE_LIMIT) -> Any:
    if not isinstance(ops, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch", 400)
    if len(ops) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, "
                         f"got {len(ops)}", 413)
    doc = copy.deepcopy(target)
    copied = 0
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError("Unable to parse patch operation", 400)
        kind, path = op["op"], op["path"]
        if not isinstance(path, str) or ("from" in op and not isinstance(op["from"], str)):
            raise PatchError("Unable to parse patch operation", 400)
        if kind in ("move", "copy") and "from" not in op:
            raise PatchError(f"{kind} operation failed to decode from: operation, missing from field")
        if kind == "copy":
            value = orjson.dumps(_get(doc, op["from"]))
            copied += len(value)
            if copied > copy_limit:
                raise PatchError(f"Unable to complete the copy, the accumulated size increase of copy is {copied}, "
                                 f"exceeding the limit {copy_limit}")
            doc = _add(doc, path, orjson.loads(value))
        else:
            doc = _apply_op(doc, kind, path, op)
    return doc


def _apply_op(doc: Any, kind: Any, path: str, op: dict[str, Any]) -> Any:
    """One JSON patch operation other than copy (which counts the bytes it copies)."""
    if kind == "add":
        return _add(doc, path, copy.deepcopy(op.get("value")))
    if kind == "remove":
        return _remove(doc, path)
    if kind == "replace":
        _get(doc, path)
        return _add(_remove(doc, path), path, copy.deepcopy(op.get("value"))) if path else op.get("value")
    if kind == "move":
        val = _get(doc, op["from"])
        return _add(_remove(doc, op["from"]), path, val)
    if kind == "test":
        if _get(doc, path) != op.get("value"):
            raise PatchError(f"testing value {path} failed: test failed")
        return doc
    raise PatchError(f"Unexpected kind: {kind}", 400)


def go_value(value: Any) -> str:
    """fmt's ``%+v`` of a decoded JSON value (maps with sorted keys, strings bare, null ``<nil>``): how the
    patcher shows a strategic merge patch in ``patch_invalid``."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_value(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    return str(value)


def _go_float(f: float) -> str:
    """``%v`` of a float64: the shortest digits, in exponent form below 1e-4 or from 1e6 (``1e+06``)."""
    if math.isnan(f) or math.isinf(f):
        return "NaN" if math.isnan(f) else ("+Inf" if f > 0 else "-Inf")
    sign = "-" if math.copysign(1.0, f) < 0 else ""
    if f == 0:
        return sign + "0"
    mantissa, _, e = repr(abs(f)).partition("e")
    whole, _, frac = mantissa.partition(".")
    raw = (whole + frac).lstrip("0")
    exp = (len(whole) - 1 if whole.strip("0") else -(len(frac) - len(frac.lstrip("0"))) - 1) + int(e or 0)
    digits = raw.rstrip("0") or "0"
    if exp < -4 or exp >= 6:
        return f"{sign}{digits[0]}{'.' + digits[1:] if len(digits) > 1 else ''}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if exp < 0:
        return f"{sign}0.{'0' * (-exp - 1)}{digits}"
    digits = digits.ljust(exp + 1, "0")
    return f"{sign}{digits[:exp + 1]}{'.' + digits[exp + 1:] if len(digits) > exp + 1 else ''}"


def strategic_merge_patch(target: Any, patch: Any, schema: Schema) -> Any:
    """``StrategicMergeMapPatch`` of ``patch`` into ``target`` (a copy), ``schema`` being the kind's
    compiled schema (``managed.kind_schema``), as the server applies it (``MergeParallelList`` and
    ``IgnoreUnmatchedNulls``)."""
    if not isinstance(patch, dict):
        raise PatchError("the patch must be a JSON object", 400)
    return _merge_map(copy.deepcopy(target) if isinstance(target, dict) else {}, patch, schema)


def _field(node: Schema, k: str) -> tuple[Schema, str, str]:
    """A field's schema node, patch strategy (without ``retainKeys``) and merge key."""
    if node.kind == STRUCT:
        strategy, key = node.patch.get(k, ("", ""))
        strategies = [s for s in strategy.split(",") if s and s != "retainKeys"]
        return node.props.get(k, _UNKNOWN), strategies[0] if strategies else "", key
    if node.kind == MAP and node.value is not None:
        return node.value, "", ""
    return _UNKNOWN, "", ""


def _clean(value: Any) -> Any:
    """A value the patch adds where the target has none: without nulls (``discardNullValuesFromPatch``)
    and without directives, which the object's decoding would drop."""
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items() if v is not None and not k.startswith("$")}
    if isinstance(value, list):
        return [_clean(v) for v in value if not (isinstance(v, dict) and v.get(_DIRECTIVE) == "delete")]
    return value


def _merge_map(original: dict[str, Any], patch: dict[str, Any], node: Schema) -> dict[str, Any]:
    """``mergeMap``: directives first (``$patch``, ``$retainKeys``, ``$setElementOrder``), then each field."""
    if _DIRECTIVE in patch:
        directive = patch[_DIRECTIVE]
        if directive == "replace":
            replaced: dict[str, Any] = _clean({k: v for k, v in patch.items() if k != _DIRECTIVE})
            return replaced
        if directive == "delete":
            return {}
        raise PatchError(f"unknown patch type: {directive} in map: {go_value(patch)}", 500)
    patch = dict(patch)
    retain = patch.pop(_RETAIN, None)
    if retain is not None:
        _retain_keys(original, patch, retain)
    for k in [k for k in patch if k.startswith(_ORDER)]:
        _ordered_list(original, patch, k[len(_ORDER):], patch.pop(k), node)
    for k, v in patch.items():
        if k.startswith(_DELETE_FROM):
            _delete_from_primitive_list(original, k[len(_DELETE_FROM):], v)
        elif v is None:
            original.pop(k, None)
        else:
            original[k] = _merge_field(original.get(k), k, v, node)
    return original


def _delete_from_primitive_list(original: dict[str, Any], field: str, values: Any) -> None:
    """``$deleteFromPrimitiveList/<field>``: those values leave the field's list."""
    if not isinstance(values, list):
        raise PatchError("invalid patch format of primitive list", 400)
    if isinstance(original.get(field), list):
        original[field] = [x for x in original[field] if x not in values]


def _merge_field(current: Any, k: str, v: Any, node: Schema) -> Any:
    """One field's new value: maps merged unless the field says ``replace``, lists merged by key
    when their strategy is ``merge``, anything else replaced."""
    if isinstance(current, dict) and isinstance(v, dict):
        child, strategy, _ = _field(node, k)
        return _clean(v) if strategy == "replace" else _merge_map(current, v, child)
    if isinstance(current, list) and isinstance(v, list):
        child, strategy, key = _field(node, k)
        return _merge_list(current, v, child, key) if strategy == "merge" else _clean(v)
    return _clean(v)


def _retain_keys(original: dict[str, Any], patch: dict[str, Any], retain: Any) -> None:
    """``applyRetainKeysDirective``: the patch may only set retained fields; the others are cleared."""
    if not isinstance(retain, list) or not all(isinstance(k, str) for k in retain):
        raise PatchError("invalid patch format of retainKeys", 400)
    for k, v in patch.items():
        if v is not None and not k.startswith((_DELETE_FROM, _ORDER)) and k not in retain:
            raise PatchError("patch content doesn't match retainKeys list", 422)
    for k in [k for k in original if k not in retain]:
        del original[k]


def _merge_list(original: list[Any], patch: list[Any], node: Schema, key: str) -> list[Any]:
    """``mergeSlice``: primitives as a set, maps by ``key`` (``$patch: delete``/``replace`` items),
    then ordered as the patch orders its items (``normalizeElementOrder``)."""
    if not original and not patch:
        return original
    maps = [isinstance(x, dict) for x in original + patch]
    if any(isinstance(x, list) for x in original + patch):
        raise PatchError("lists of lists are not supported", 422)
    if not any(maps):
        merged = list(original) + [x for x in patch if x not in original]
        return _normalize(merged, patch, original, "")
    if not all(maps):
        raise PatchError("types don't match: a merged list mixes maps and other values", 500)
    if not key:
        raise PatchError("cannot merge lists without merge key", 500)
    return _merge_keyed(original, patch, node.item or _UNKNOWN, key)


def _merge_keyed(original: list[Any], patch: list[Any], item_node: Schema, key: str) -> list[Any]:
    """The maps of a merged list, by ``key``: the patch's directive items first, then each plain item
    merged into the original's item with its key, or added."""
    plain: list[dict[str, Any]] = []
    merged = list(original)
    for item in patch:
        directive = item.get(_DIRECTIVE)
        if directive is None:
            plain.append(item)
        elif directive == "replace":
            return [_clean(x) for x in patch if _DIRECTIVE not in x]
        else:
            merged = _list_item_directive(merged, item, directive, key)
    for item in plain:
        if key not in item:
            raise PatchError(f"map: {go_value(item)} does not contain declared merge key: {key}", 500)
        at = next((i for i, x in enumerate(merged) if x.get(key) == item[key]), None)
        if at is None:
            merged.append(_clean(item))
        else:
            merged[at] = _merge_map(merged[at], item, item_node)
    return _normalize(merged, plain, original, key)


def _list_item_directive(merged: list[Any], item: dict[str, Any], directive: Any, key: str) -> list[Any]:
    """A merged list's item carrying ``$patch``: ``delete`` removes the item with its key; ``merge``
    and anything else are refused as upstream refuses them (``replace`` is the caller's)."""
    if directive == "delete":
        if key not in item:
            raise PatchError(f"map: {go_value(item)} does not contain declared merge key: {key}", 500)
        return [x for x in merged if x.get(key) != item[key]]
    if directive == "merge":
        raise PatchError("merging lists cannot yet be specified in the patch", 500)
    raise PatchError(f"unknown patch type: {directive} in map: {go_value(item)}", 500)


def _ordered_list(original: dict[str, Any], patch: dict[str, Any], field: str, order: Any, node: Schema) -> None:
    """``$setElementOrder/<field>``: the field's patch list merged, then ordered as the directive lists
    the items the client knows; items only the server has keep their places among them."""
    if not isinstance(order, list):
        raise PatchError("invalid patch format of setElementOrder list", 400)
    child, strategy, key = _field(node, field)
    if strategy != "merge":
        return
    current = original.get(field)
    sent = patch.pop(field, [])
    if sent is None:
        original.pop(field, None)
        return
    if not isinstance(sent, list):
        got = "map[string]interface {}" if isinstance(sent, dict) else \
            {str: "string", bool: "bool", int: "float64", float: "float64"}.get(type(sent), "interface {}")
        raise PatchError(f"expected a []interface {{}}, but received a {got}", 500)   # ErrBadArgType
    base = current if isinstance(current, list) else []
    merged = _merge_list(base, sent, child, key) if base or sent else []
    if merged or current is not None:
        original[field] = _normalize(merged, order, base, key)


def _ident(item: Any, key: str) -> Any:
    return orjson.dumps(item.get(key) if key and isinstance(item, dict) else item)


def _normalize(merged: list[Any], patch_order: list[Any], server_order: list[Any], key: str) -> list[Any]:
    """``normalizeElementOrder``: the items the patch names in the patch's order, those only the server
    has in its order, interleaved by the server's order where both are known (``mergeSortedSlice``)."""
    in_patch = {_ident(x, key): i for i, x in enumerate(patch_order) if not key or isinstance(x, dict)}
    in_server = {_ident(x, key): i for i, x in enumerate(server_order)}
    patched = sorted((x for x in merged if _ident(x, key) in in_patch), key=lambda x: in_patch[_ident(x, key)])
    server_only = sorted((x for x in merged if _ident(x, key) not in in_patch),
                         key=lambda x: in_server.get(_ident(x, key), len(in_server)))
    out: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patched):
        if j >= len(patched):
            out.append(server_only[i])
            i += 1
        elif i >= len(server_only):
            out.append(patched[j])
            j += 1
        else:
            li, ri = in_server.get(_ident(server_only[i], key), -1), in_server.get(_ident(patched[j], key), -1)
            if li >= 0 and ri >= 0 and li < ri:
                out.append(server_only[i])
                i += 1
            else:
                out.append(patched[j])
                j += 1
    return out
