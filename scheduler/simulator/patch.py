"""PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902) and strategic merge patch.

Strategic merge follows ``k8s.io/apimachinery/pkg/util/strategicpatch`` for what kubectl relies on:
lists with a merge key (``containers`` by ``name``, ``taints`` by ``key``, ``conditions`` by
``type``, …) merge element by element, primitive lists with ``patchStrategy: merge``
(``finalizers``) take the union, everything else is replaced; the directives ``$patch: replace``,
``$patch: delete``, ``$deleteFromPrimitiveList/<field>``, ``$setElementOrder/<field>`` and
``$retainKeys`` are understood. Field names are matched by name, whatever the object's depth, which is
how the built-in types' patch metadata works out in practice.

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
from typing import Any

import orjson

__all__ = ["COPY_SIZE_LIMIT", "MAX_JSON_PATCH_OPERATIONS", "PatchError", "json_patch", "merge_patch",
           "strategic_merge_patch"]

MAX_JSON_PATCH_OPERATIONS = 10_000
COPY_SIZE_LIMIT = 3 * 1024 * 1024


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


# Lists merged by key in the built-in types (patchMergeKey in the Go struct tags).
MERGE_KEYS: dict[str, str] = {
    "containers": "name", "initContainers": "name", "ephemeralContainers": "name", "env": "name",
    "volumes": "name", "volumeMounts": "mountPath", "volumeDevices": "devicePath", "ports": "containerPort",
    "imagePullSecrets": "name", "conditions": "type", "taints": "key", "addresses": "type",
    "ownerReferences": "uid", "hostAliases": "ip", "topologySpreadConstraints": "topologyKey",
    "resourceClaims": "name", "schedulingGates": "name", "containerStatuses": "name",
    "initContainerStatuses": "name", "podIPs": "ip", "readinessGates": "conditionType",
    # ResourceClaimStatus.reservedFor: patchStrategy merge, patchMergeKey uid (resource.k8s.io/v1)
    "reservedFor": "uid",
}
PRIMITIVE_MERGE = {"finalizers"}


def strategic_merge_patch(target: Any, patch: Any) -> Any:
    return _smp(copy.deepcopy(target), patch)


def _smp(target: Any, patch: Any) -> Any:
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    directive = patch.get("$patch")
    if directive == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if directive == "delete":
        return None
    retain = patch.get("$retainKeys")
    for k, v in patch.items():
        if k in ("$patch", "$retainKeys") or k.startswith("$setElementOrder/"):
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            field = k.split("/", 1)[1]
            if isinstance(target.get(field), list):
                target[field] = [x for x in target[field] if x not in v]
            continue
        _smp_field(target, k, v)
    if isinstance(retain, list):
        for k in list(target):
            if k not in retain:
                del target[k]
    return target


def _smp_field(target: dict[str, Any], k: str, v: Any) -> None:
    """One field of a strategic merge patch: removed (null), a list merged by its merge key or as a set
    of primitives, a list replaced, or a value merged recursively."""
    if v is None:
        target.pop(k, None)
    elif isinstance(v, list) and k in MERGE_KEYS and isinstance(target.get(k), list):
        target[k] = _merge_list(target[k], v, MERGE_KEYS[k])
    elif isinstance(v, list) and k in PRIMITIVE_MERGE and isinstance(target.get(k), list):
        target[k] = list(target[k]) + [x for x in v if x not in target[k]]
    elif isinstance(v, list):
        target[k] = [_smp({}, x) if isinstance(x, dict) else copy.deepcopy(x) for x in v
                     if not (isinstance(x, dict) and x.get("$patch") == "delete")]
        target[k] = [{kk: vv for kk, vv in x.items() if not kk.startswith("$")} if isinstance(x, dict) else x
                     for x in target[k]]
    else:
        merged = _smp(target.get(k), v)
        if merged is None:
            target.pop(k, None)
        else:
            target[k] = merged


def _merge_list(current: list[Any], patch: list[Any], key: str) -> list[Any]:
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    out = [copy.deepcopy(x) for x in current]
    index = {x.get(key): i for i, x in enumerate(out) if isinstance(x, dict)}
    for item in patch:
        if not isinstance(item, dict) or key not in item:
            out.append(copy.deepcopy(item))
            continue
        i = index.get(item[key])
        if item.get("$patch") == "delete":
            if i is not None:
                out[i] = None
            continue
        if i is None:
            index[item[key]] = len(out)
            out.append(_smp({}, item))
        else:
            out[i] = _smp(out[i], item)
    return [x for x in out if x is not None]
