"""Field ownership: ``metadata.managedFields`` and server-side apply, as structured-merge-diff does them.

Every create, update and patch records who set which fields: the request's ``fieldManager`` (or the
User-Agent's product, as ``managerOrUserAgent``), with operation ``Update``, or ``Apply`` for a
server-side apply (``application/apply-patch+yaml``). An apply merges the sent configuration into the
live object, removes the fields this manager applied last time and no longer sends (unless another
manager owns them), and fails with 409 when it would change a field another manager owns, unless
``force=true``, which takes the field over. Non-apply writes never conflict: they take what they
change.

A field set is a dict from path to the leaf's value (scalars and atomic values) or ``MEMBER`` (a map, or
an item of an associative list, which is owned as itself besides its fields). Path elements are
FieldsV1's own keys: ``f:name`` for a field or map key, ``k:{"name":"c"}`` for an associative list's
item (its key fields, sorted, as JSON), ``v:"x"`` for a set's item. Structs are not members (only
their fields are), unless empty; atomic lists, atomic maps and atomic structs (``LabelSelector``) are
leaves.

Schemas: a built-in kind's from ``apidefs`` (``x-kubernetes-list-type``, ``-list-map-keys``,
``-map-type``; a list without a list type but with a patch merge key is associative on that key, as
the built-in types' schema conversion does; otherwise atomic). A custom resource's from its CRD (lists
atomic unless typed; ``x-kubernetes-preserve-unknown-fields`` and untyped values are deduced: maps
granular, lists atomic). A struct also keeps its fields' ``x-kubernetes-patch-strategy`` and
``-patch-merge-key`` (``Schema.patch``): the strategic merge patch (``patch.py``) walks the same nodes.

Left out: unions, field-level version conversion (one version per kind is served), and the
``managedFields`` of writes the simulated controllers make themselves.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from typing import Any

import orjson

from scheduler.simulator import apidefs
from scheduler.simulator.apierrors import ApiError
from scheduler.simulator.typecheck import memo_bytes

__all__ = ["MEMBER", "Conflict", "FieldSets", "Owner", "Schema", "duplicate_entries", "from_fields_v1",
           "to_fields_v1"]

Obj = dict[str, Any]
Path = tuple[str, ...]
FieldSet = dict[Path, Any]


class _Member:
    def __repr__(self) -> str:
        return "MEMBER"


MEMBER: Any = _Member()
_REF = "#/components/schemas/"

# What the fieldmanager strips before tracking (StripMetaManager), by top-level path.
_STRIPPED = {("f:apiVersion",), ("f:kind",), ("f:metadata", "f:name"), ("f:metadata", "f:namespace"),
             ("f:metadata", "f:uid"), ("f:metadata", "f:resourceVersion"), ("f:metadata", "f:generation"),
             ("f:metadata", "f:creationTimestamp"), ("f:metadata", "f:managedFields"), ("f:metadata", "f:selfLink"),
             ("f:metadata", "f:deletionTimestamp"), ("f:metadata", "f:deletionGracePeriodSeconds")}

# ---- schemas --------------------------------------------------------------------------------------------
SCALAR, STRUCT, MAP, ATOMIC, LIST_MAP, LIST_SET, DEDUCED = range(7)


class Schema:
    """A compiled schema node: how a value at this place is owned and merged."""
    __slots__ = ("item", "keys", "kind", "patch", "props", "value")

    def __init__(self, kind: int) -> None:
        self.kind = kind
        self.props: dict[str, Schema] = {}
        # STRUCT: the strategic merge patch metadata of the fields that declare it, as
        # (x-kubernetes-patch-strategy, x-kubernetes-patch-merge-key): kept on the struct, not on the
        # field's node, because a field's node may be a definition other fields share.
        self.patch: dict[str, tuple[str, str]] = {}
        self.value: Schema | None = None       # MAP: its values
        self.item: Schema | None = None        # LIST_MAP / LIST_SET: its items
        self.keys: tuple[str, ...] = ()        # LIST_MAP: the key fields


_DEDUCED = Schema(DEDUCED)
_COMPILED: dict[str, Schema] = {}
_STABLE: set[int] = set()


def _definition(name: str) -> Schema:
    if name in _COMPILED:
        return _COMPILED[name]
    node = Schema(STRUCT)
    _COMPILED[name] = node                    # before its fields: definitions refer to themselves
    _STABLE.add(id(node))                     # kept for the process's life: its id is a cache key
    compiled = compile_schema(apidefs.schemas().get(name) or {}, builtin=True)
    node.kind, node.props, node.value, node.item, node.keys, node.patch = (
        compiled.kind, compiled.props, compiled.value, compiled.item, compiled.keys, compiled.patch)
    return node


def compile_schema(schema: Obj, *, builtin: bool) -> Schema:
    """Compile an OpenAPI v3 schema (a built-in definition's, or a CRD version's ``openAPIV3Schema``)."""
    ref = schema.get("$ref")
    if ref is None and schema.get("allOf"):
        ref = schema["allOf"][0].get("$ref")
    if isinstance(ref, str) and ref.startswith(_REF):
        return _definition(ref[len(_REF):])
    kind = schema.get("type")
    if kind == "array":
        return _compile_array(schema, builtin)
    if schema.get("x-kubernetes-map-type") == "atomic" or schema.get("x-kubernetes-int-or-string"):
        return Schema(ATOMIC)
    props = schema.get("properties")
    if isinstance(props, dict) and props:
        node = Schema(STRUCT)
        node.props = {k: compile_schema(v, builtin=builtin) for k, v in props.items() if isinstance(v, dict)}
        node.patch = {k: (str(v["x-kubernetes-patch-strategy"]), str(v.get("x-kubernetes-patch-merge-key") or ""))
                      for k, v in props.items() if isinstance(v, dict) and v.get("x-kubernetes-patch-strategy")}
        return node
    extra = schema.get("additionalProperties")
    if isinstance(extra, dict):
        node = Schema(MAP)
        node.value = compile_schema(extra, builtin=builtin)
        return node
    if kind == "object" or schema.get("x-kubernetes-preserve-unknown-fields") or not kind:
        return _DEDUCED
    return Schema(SCALAR)


def _compile_array(schema: Obj, builtin: bool) -> Schema:
    """An array: an associative list (``x-kubernetes-list-type: map``, or a built-in's patch merge key), a
    set, or atomic."""
    list_type = schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or []
    if list_type is None and builtin and schema.get("x-kubernetes-patch-merge-key") and \
            "merge" in str(schema.get("x-kubernetes-patch-strategy", "")):
        list_type, keys = "map", [schema["x-kubernetes-patch-merge-key"]]
    raw_items = schema.get("items")
    items: Obj = raw_items if isinstance(raw_items, dict) else {}
    if list_type == "map" and keys:
        node = Schema(LIST_MAP)
        node.keys = tuple(keys)
        node.item = compile_schema(items, builtin=builtin)
        return node
    if list_type == "set":
        node = Schema(LIST_SET)
        node.item = compile_schema(items, builtin=builtin)
        return node
    node = Schema(ATOMIC)
    if "merge" in str(schema.get("x-kubernetes-patch-strategy", "")):
        # Atomic to field ownership, merged by a strategic merge patch (JobStatus.conditions): its
        # items' schema is what the patch recurses into.
        node.item = compile_schema(items, builtin=builtin)
    return node


def kind_schema(group: str, version: str, kind: str, crd_schema: Obj | None) -> Schema:
    """The compiled schema of a kind: a CRD's own (with ObjectMeta's), or the built-in definition."""
    if crd_schema is not None:
        node = compile_schema(crd_schema, builtin=False)
        if node.kind == STRUCT:
            node.props["metadata"] = _definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        return node
    name = apidefs.kind_definitions().get((group, version, kind))
    return _definition(name) if name else _DEDUCED


# ---- field sets -----------------------------------------------------------------------------------------
def _key_json(item: Obj, keys: tuple[str, ...]) -> str:
    return "k:" + orjson.dumps({k: item.get(k) for k in sorted(keys) if k in item}).decode()


def _walk(value: Any, node: Schema, path: Path, out: FieldSet) -> None:
    kind = node.kind
    if kind == DEDUCED:
        kind = MAP if isinstance(value, dict) else (ATOMIC if isinstance(value, list) else SCALAR)
        node = _DEDUCED
    if kind in (SCALAR, ATOMIC) or value is None:
        out[path] = value
        return
    if kind in (STRUCT, MAP):
        if not isinstance(value, dict):
            out[path] = value
            return
        if not value:
            out[path] = MEMBER if kind == MAP else {}
            return
        if kind == MAP:
            out[path] = MEMBER
        for k, v in value.items():
            child = node.props.get(k, _DEDUCED) if kind == STRUCT else (node.value or _DEDUCED)
            _walk(v, child, (*path, f"f:{k}"), out)
        return
    if not isinstance(value, list):
        out[path] = value
        return
    if not value:
        out[path] = []
        return
    _walk_items(value, node, kind, path, out)


def _walk_items(value: list[Any], node: Schema, kind: int, path: Path, out: FieldSet) -> None:
    """A set's values, or an associative list's items by key and each of their fields."""
    item_node = node.item or _DEDUCED
    for item in value:
        if kind == LIST_SET:
            out[(*path, "v:" + orjson.dumps(item).decode())] = item
        elif isinstance(item, dict):
            item_path = (*path, _key_json(item, node.keys))
            out[item_path] = MEMBER
            for k, v in item.items():
                child = item_node.props.get(k, _DEDUCED) if item_node.kind == STRUCT else _DEDUCED
                _walk(v, child, (*item_path, f"f:{k}"), out)


def field_set(obj: Obj, node: Schema, *, status: bool | None = None) -> FieldSet:
    """The fields ``obj`` sets, without those the fieldmanager never tracks; ``status``: True keeps only
    ``status`` (a status subresource write), False drops it (the main resource, when status is a
    subresource), None keeps everything."""
    out: FieldSet = {}
    if status is True:
        if "status" in obj:
            _walk(obj["status"], node.props.get("status", _DEDUCED) if node.kind == STRUCT else _DEDUCED,
                  ("f:status",), out)
        return out
    _walk({k: v for k, v in obj.items() if k != "status"} if status is False else obj, node, (), out)
    out.pop((), None)
    for p in [p for p in out if p[:2] in _STRIPPED or p[:1] in _STRIPPED]:
        del out[p]
    return out


_CONTAINERS = (dict, list)


def _tree(value: Any, node: Schema) -> Obj:
    """The FieldsV1 tree below one value, built directly (``to_fields_v1(field_set(...))`` in one walk,
    for creates, where there is nothing to compare with)."""
    kind = node.kind
    if kind == DEDUCED:
        kind = MAP if isinstance(value, dict) else (ATOMIC if isinstance(value, list) else SCALAR)
    if kind in (SCALAR, ATOMIC) or value is None or not value:
        return {}
    out: Obj = {}
    if kind in (STRUCT, MAP):
        if not isinstance(value, dict):
            return {}
        if kind == MAP:
            out["."] = {}
        for k in sorted(value):
            v = value[k]
            if v.__class__ not in _CONTAINERS or not v:          # a scalar or an empty value: a leaf
                out[f"f:{k}"] = {}
            else:
                out[f"f:{k}"] = _tree(v, node.props.get(k, _DEDUCED) if kind == STRUCT else (node.value or _DEDUCED))
        return out
    if not isinstance(value, list):
        return {}
    return _tree_items(value, node, kind)


def _tree_items(value: list[Any], node: Schema, kind: int) -> Obj:
    """The FieldsV1 tree of a set (its values) or an associative list (its items by key, with their fields)."""
    items: list[tuple[str, Obj]] = []
    item_node = node.item or _DEDUCED
    for item in value:
        if kind == LIST_SET:
            items.append(("v:" + orjson.dumps(item).decode(), {}))
        elif isinstance(item, dict):
            fields: Obj = {".": {}}
            for k in sorted(item):
                v = item[k]
                if v.__class__ not in _CONTAINERS or not v:
                    fields[f"f:{k}"] = {}
                else:
                    fields[f"f:{k}"] = _tree(v, item_node.props.get(k, _DEDUCED) if item_node.kind == STRUCT
                                             else _DEDUCED)
            items.append((_key_json(item, node.keys), fields))
    return dict(sorted(items))


# Objects that differ only in what the fieldmanager never tracks (a ReplicaSet's replicas, a benchmark's
# pods) have the same FieldsV1: the tree is computed once per such shape. Trees are never mutated once
# built (every write builds new ones), so stored objects may share them. The shape also leaves out the
# scalar values that objects keep in maps (``_shape``): a node's hostname label and machine ID, a bound
# pod's nodeName. 50,000 nodes then share one tree instead of holding 1.4 KB each.
_VOLATILE_META = frozenset({"name", "uid", "resourceVersion", "creationTimestamp", "managedFields", "generation"})
_TREES: dict[tuple[int, bool | None, bytes], Obj] = {}
_TREES_MAX = 1024


def fields_v1_of(obj: Obj, node: Schema, *, status: bool | None = None) -> Obj:
    """``to_fields_v1(field_set(obj, node, status=status))``, in one walk, or from the shape cache."""
    if id(node) not in _STABLE:
        return _fields_v1_of(obj, node, status)     # a CRD's schema, compiled per call: its id is not stable
    meta = obj.get("metadata")
    probe = _shape({**obj, "metadata": {k: v for k, v in meta.items() if k not in _VOLATILE_META}}
                   if isinstance(meta, dict) else obj)
    try:
        key = (id(node), status, memo_bytes(orjson.dumps(probe)))     # kept: its exact size
    except TypeError:                       # not JSON (never from a request): no caching
        return _fields_v1_of(obj, node, status)
    tree = _TREES.get(key)
    if tree is None:
        if len(_TREES) >= _TREES_MAX:
            _TREES.clear()
        tree = _TREES[key] = _fields_v1_of(obj, node, status)
    return tree


def _shape(value: Obj) -> Obj:
    """``value`` with every scalar held in a map replaced by None: what its FieldsV1 tree depends on.

    A map member whose value is a scalar is a leaf whatever the scalar (``_tree``: None, a string and
    a number all give ``{}``), so blanking it changes no tree. Lists are kept as they are: a set's
    members (``v:``) and an associative list's keys (``k:``) are values the tree spells out."""
    return {k: (_shape(v) if v.__class__ is dict else v if v.__class__ is list else None) for k, v in value.items()}


def _fields_v1_of(obj: Obj, node: Schema, status: bool | None) -> Obj:
    if status is True:
        if "status" not in obj:
            return {}
        child = node.props.get("status", _DEDUCED) if node.kind == STRUCT else _DEDUCED
        return {"f:status": _tree(obj["status"], child)}
    top = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind") and not (status is False and k == "status")}
    tree = _tree(top, node)
    meta = tree.get("f:metadata")
    if meta is not None:
        for p in _STRIPPED:
            if p[0] == "f:metadata":
                meta.pop(p[1], None)
        if not meta and obj.get("metadata"):
            del tree["f:metadata"]
    return tree


def to_fields_v1(paths: Iterable[Path]) -> Obj:
    """FieldsV1's nested form, keys sorted: a member that also has owned children carries ``"."``
    (first, as ``"."`` sorts before every ``f:``/``k:``/``v:`` key)."""
    root: Obj = {}
    members = sorted(paths)
    last = len(members) - 1
    for i, p in enumerate(members):
        node = root
        for el in p:
            node = node.setdefault(el, {})
        if i < last and members[i + 1][:len(p)] == p:
            node["."] = {}
    return root


def from_fields_v1(tree: Any, prefix: Path = ()) -> set[Path]:
    out: set[Path] = set()
    if not isinstance(tree, dict):
        return out
    for k, v in tree.items():
        if k == ".":
            out.add(prefix)
        elif isinstance(v, dict) and v:
            out |= from_fields_v1(v, (*prefix, k))
        else:
            out.add((*prefix, k))
    return out


def path_string(path: Path) -> str:
    """fieldpath.Path.String: ``.spec.containers[name="c"].image``, ``[="x"]`` for a set's item."""
    out = []
    for el in path:
        kind, _, rest = el.partition(":")
        if kind == "f":
            out.append("." + rest)
        elif kind == "k":
            key = orjson.loads(rest)
            out.append("[" + ",".join(f"{k}={orjson.dumps(v).decode()}" for k, v in key.items()) + "]")
        elif kind == "v":
            out.append(f"[={rest}]")
        else:
            out.append(f"[{rest}]")
    return "".join(out)


# ---- owners ---------------------------------------------------------------------------------------------
class Owner:
    """One ``managedFields`` entry, as its identity (manager, operation, subresource, apiVersion) and set."""
    __slots__ = ("api_version", "fields", "manager", "operation", "raw", "subresource", "time")

    def __init__(self, manager: str, operation: str, api_version: str, subresource: str, fields: set[Path],
                 time: str, raw: Obj | None = None) -> None:
        self.manager, self.operation, self.api_version = manager, operation, api_version
        self.subresource, self.fields, self.time = subresource, fields, time
        self.raw = raw          # the entry as read, reused while nothing of it changes

    @property
    def key(self) -> tuple[str, str, str, str]:
        # BuildManagerIdentifier: time never, apiVersion not for appliers.
        return (self.manager, self.operation, "" if self.operation == "Apply" else self.api_version,
                self.subresource)

    def describe(self) -> str:
        """printManager, for conflict messages."""
        out = orjson.dumps(self.manager).decode()
        if self.subresource:
            out += f" with subresource {orjson.dumps(self.subresource).decode()}"
        if self.operation == "Update":
            out += f" using {self.api_version}"
        return out

    def entry(self) -> Obj:
        if self.raw is not None:
            return self.raw
        return self.entry_with(to_fields_v1(self.fields))

    def entry_with(self, fields_v1: Obj) -> Obj:
        out: Obj = {"manager": self.manager, "operation": self.operation, "apiVersion": self.api_version,
                    "time": self.time, "fieldsType": "FieldsV1", "fieldsV1": fields_v1}
        if self.subresource:
            out["subresource"] = self.subresource
        return out


def owners_of(obj: Obj) -> list[Owner]:
    out = []
    for e in (obj.get("metadata") or {}).get("managedFields") or []:
        if isinstance(e, dict) and e.get("manager") is not None:
            out.append(Owner(str(e.get("manager", "")), str(e.get("operation", "")), str(e.get("apiVersion", "")),
                             str(e.get("subresource", "")), from_fields_v1(e.get("fieldsV1")), str(e.get("time", "")),
                             e))
    return out


class Conflict(ApiError):
    """409 with one FieldManagerConflict cause per conflicting field, as ``NewConflictError`` builds it."""

    def __init__(self, conflicts: list[tuple[Owner, Path]]) -> None:
        if len(conflicts) == 1:
            owner, path = conflicts[0]
            message = f"Apply failed with 1 conflict: conflict with {owner.describe()}: {path_string(path)}"
        else:
            by: dict[str, list[str]] = {}
            for owner, path in conflicts:
                by.setdefault(owner.describe(), []).append(path_string(path))
            lines = []
            for who in sorted(by):
                lines.append(f"conflicts with {who}:")
                lines.extend(f"- {p}" for p in by[who])
            message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
        causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {owner.describe()}",
                   "field": path_string(path)} for owner, path in conflicts]
        super().__init__(409, "Conflict", message, {"causes": causes})


_CLOCK: list[Any] = [0, ""]


def _now() -> str:
    """RFC 3339 to the second (metav1.Time), formatted once per second."""
    second = int(time.time())
    if _CLOCK[0] != second:
        _CLOCK[0], _CLOCK[1] = second, dt.datetime.fromtimestamp(second, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return str(_CLOCK[1])


# ---- duplicates in an apply configuration ---------------------------------------------------------------
def _smd_value(v: Any) -> str:
    """A key value as structured-merge-diff prints it in a path: strings quoted, numbers and bools bare."""
    return orjson.dumps(v).decode()


def duplicate_entries(value: Any, node: Schema, path: str = "") -> list[str]:
    """structured-merge-diff's refusal of an apply configuration whose associative list names one key
    twice (``ObjectToTyped`` without ``AllowDuplicates``): one ``<path>: duplicate entries for key
    [k=v,...]`` per repeated entry, the path and the key's fields as it prints them (fields sorted).
    Create, update and the other patches accept such lists (validation only warns); server-side
    apply cannot merge them, so kube-apiserver answers 500 (kubernetes#113482)."""
    kind = node.kind
    out: list[str] = []
    if kind in (STRUCT, MAP) and isinstance(value, dict):
        for k in sorted(value):         # fields in name order, as the fieldmanager's errors list them
            child = node.props.get(k, _DEDUCED) if kind == STRUCT else (node.value or _DEDUCED)
            if child.kind != DEDUCED:
                out.extend(duplicate_entries(value[k], child, f"{path}.{k}"))
    elif kind == LIST_MAP and isinstance(value, list):
        seen: set[str] = set()
        item_node = node.item or _DEDUCED
        for item in value:
            if not isinstance(item, dict):
                continue
            element = "[" + ",".join(f"{k}={_smd_value(item[k])}" for k in sorted(node.keys) if k in item) + "]"
            if element in seen:
                out.append(f"{path}: duplicate entries for key {element}")
                continue
            seen.add(element)
            out.extend(duplicate_entries(item, item_node, path + element))
    return out


# ---- merge and prune ------------------------------------------------------------------------------------
def merge(live: Any, config: Any, node: Schema) -> Any:
    """``live.Merge(config)``: config's values win; structs and maps merge by field, associative lists by
    key (live's order, new items after), sets by value; everything else is replaced."""
    kind = node.kind
    if kind == DEDUCED:
        kind = MAP if isinstance(config, dict) else SCALAR
    if kind in (STRUCT, MAP) and isinstance(live, dict) and isinstance(config, dict):
        out = dict(live)
        for k, v in config.items():
            child = node.props.get(k, _DEDUCED) if kind == STRUCT else (node.value or _DEDUCED)
            out[k] = merge(live[k], v, child) if k in live else v
        return out
    if kind == LIST_MAP and isinstance(live, list) and isinstance(config, list):
        return _merge_keyed(live, config, node)
    if kind == LIST_SET and isinstance(live, list) and isinstance(config, list):
        seen = {orjson.dumps(i) for i in live}
        return live + [i for i in config if orjson.dumps(i) not in seen]
    return config


def _merge_keyed(live: list[Any], config: list[Any], node: Schema) -> list[Any]:
    """An associative list merged by key: live's items in live's order (those config names merged),
    then config's new ones."""
    keyed = {_key_json(i, node.keys): i for i in config if isinstance(i, dict)}
    out_list = []
    for item in live:
        key = _key_json(item, node.keys) if isinstance(item, dict) else None
        if key is not None and key in keyed:
            out_list.append(merge(item, keyed.pop(key), node.item or _DEDUCED))
        else:
            out_list.append(item)
    out_list.extend(i for i in config if isinstance(i, dict) and _key_json(i, node.keys) in keyed)
    return out_list


def remove_paths(obj: Obj, paths: Iterable[Path], node: Schema) -> None:
    """Remove each path's value from ``obj`` (in place; containers copied on the way down)."""
    for path in sorted(paths, key=len, reverse=True):
        _remove(obj, path, node)


def _remove(container: Any, path: Path, node: Schema) -> None:
    if not path or not isinstance(container, dict):
        return
    el = path[0]
    kind, _, rest = el.partition(":")
    if kind != "f" or rest not in container:
        return
    if len(path) == 1:
        del container[rest]
        return
    child = node.props.get(rest, _DEDUCED) if node.kind == STRUCT else (node.value or _DEDUCED)
    value = container[rest]
    nxt = path[1]
    if isinstance(value, dict):
        value = container[rest] = dict(value)
        _remove(value, path[1:], child)
    elif isinstance(value, list) and child.kind in (LIST_MAP, LIST_SET):
        items = list(value)
        for i, item in enumerate(items):
            match = (nxt.startswith("k:") and isinstance(item, dict) and _key_json(item, child.keys) == nxt) or \
                    (nxt.startswith("v:") and "v:" + orjson.dumps(item).decode() == nxt)
            if not match:
                continue
            if len(path) == 2:
                del items[i]
            elif isinstance(item, dict):
                items[i] = dict(item)
                _remove(items[i], path[2:], child.item or _DEDUCED)
            break
        container[rest] = items


# ---- the updater ----------------------------------------------------------------------------------------
class FieldSets:
    """Computes an object's new ``managedFields`` for each write (structured-merge-diff's ``Updater``)."""

    @staticmethod
    def _compare(old: FieldSet, new: FieldSet) -> tuple[set[Path], set[Path], set[Path]]:
        added = new.keys() - old.keys()
        removed = old.keys() - new.keys()
        modified = {p for p in new.keys() & old.keys() if new[p] is not MEMBER and new[p] != old[p]}
        return set(added), set(removed), modified

    def update(self, old: Obj | None, new: Obj, node: Schema, manager: str, api_version: str, subresource: str,
               status_split: bool) -> list[Obj]:
        """A non-apply write by ``manager``: it takes what it added or changed; nobody keeps what it removed."""
        owners = self._sent_or_live(old, new)
        scope = None if not status_split else subresource == "status"
        if old is None and not owners:       # a create: the writer owns all it set
            tree = fields_v1_of(new, node, status=scope)
            if not tree:
                return []
            return [Owner(manager, "Update", api_version, subresource, set(), _now(), None).entry_with(tree)]
        before = field_set(old, node, status=scope) if old else {}
        after = field_set(new, node, status=scope)
        added, removed, modified = self._compare(before, after)
        changed = added | modified
        mine: Owner | None = None
        for o in owners:
            if o.key == (manager, "Update", api_version, subresource):
                mine = o
            elif o.fields & (changed | removed):
                o.fields, o.raw = o.fields - (changed | removed), None
        if mine is None:
            mine = Owner(manager, "Update", api_version, subresource, set(), _now())
            owners.append(mine)
        if changed or removed:
            mine.fields, mine.time, mine.raw = (mine.fields - removed) | changed, _now(), None
        return [o.entry() for o in owners if o.fields]

    def apply(self, live: Obj | None, config: Obj, node: Schema, manager: str, api_version: str, force: bool,
              status_split: bool) -> tuple[Obj, list[Obj]]:
        """A server-side apply: the merged object and its managedFields, or ``Conflict``."""
        owners = owners_of(live) if live else []
        scope = False if status_split else None
        base = live or {}
        merged = merge(base, config, node)
        applied = set(field_set(config, node, status=scope))
        key = (manager, "Apply", "", "")
        mine = next((o for o in owners if o.key == key), None)
        if mine is not None:
            _drop_released(merged, mine, owners, applied, node)
        before = field_set(base, node, status=scope) if live else {}
        after = field_set(merged, node, status=scope)
        added, removed, modified = self._compare(before, after)
        conflicts = [(o, p) for o in owners if o is not mine for p in sorted(o.fields & (added | modified))]
        if conflicts and not force:
            raise Conflict(conflicts)
        taken = added | modified | removed
        for o in owners:
            if o is not mine and o.fields & taken:
                o.fields, o.raw = o.fields - taken, None
        if mine is None:
            mine = Owner(manager, "Apply", api_version, "", set(), _now())
            owners.append(mine)
        mine.fields, mine.api_version, mine.time, mine.raw = applied, api_version, _now(), None
        return merged, [o.entry() for o in owners if o.fields]

    @staticmethod
    def _sent_or_live(old: Obj | None, new: Obj) -> list[Owner]:
        # managedFields in the request are honoured (an empty list resets them); absent, the live ones stay.
        sent = (new.get("metadata") or {}).get("managedFields")
        if sent is not None:
            return owners_of(new)
        return owners_of(old) if old else []


def _drop_released(merged: Obj, mine: Owner, owners: list[Owner], applied: set[Path], node: Schema) -> None:
    """Remove from ``merged`` the fields the manager applied before and no longer applies, unless
    another manager owns them (or a field below them)."""
    others: set[Path] = set().union(*(o.fields for o in owners if o is not mine)) if len(owners) > 1 \
        else set()
    gone = {p for p in mine.fields - applied - others
            if not any(q[:len(p)] == p for q in applied | others if len(q) > len(p))}
    remove_paths(merged, gone, node)
