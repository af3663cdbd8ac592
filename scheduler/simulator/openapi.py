"""OpenAPI v2 and v3 for every kind served, and the unknown-field check that ``fieldValidation`` needs.

What kubectl 1.37 reads, and why:

- ``/openapi/v3`` (discovery: one ``serverRelativeURL`` per group-version, with the document's hash) and
  ``/openapi/v3/apis/GROUP/VERSION``. ``kubectl apply|create|replace`` look up, for each object's GVK, the
  PATCH operation tagged ``x-kubernetes-group-version-kind`` and whether it takes the ``fieldValidation``
  query parameter; if so, validation is the server's (``fieldValidation=Strict``), and kubectl falls back
  to OpenAPI v2 only when the GVK is missing. ``kubectl apply`` computes its strategic merge patch from
  the component schemas when the PATCH operation accepts ``application/strategic-merge-patch+json``
  (built-in kinds; never custom resources). ``kubectl explain`` walks the component schemas.
- ``/openapi/v2``, JSON only. kubectl asks for it in protobuf (gnostic's encoding), which this server does
  not produce: as kube-openapi's handler does for an ``Accept`` it cannot meet, the answer is an empty
  406, and kubectl moves on (its v2 paths are fallbacks).

The built-in kinds' schemas are ``apidefs``'s (Kubernetes 1.37's, complete, descriptions shortened); a kind
served without one (a kind added to ``resources.py`` before its definition) gets an open object schema that
declares only ``apiVersion``, ``kind`` and ``metadata``. A custom resource's schema is its CRD version's
``openAPIV3Schema`` with ``apiVersion``, ``kind`` and ``metadata`` added and named as the apiextensions
builder names it (``io.kopf-scheduler.scheduling.v1alpha1.SchedulingProfile``), with its ``List``. Each
document is built on first request and cached until the registry changes (a CRD established, updated or
deleted); its hash is the SHA-512 of its bytes, as kube-openapi computes it, so a client's cache of a
``?hash=`` URL is valid forever and a stale hash is redirected (301) to the current one.

``FieldChecker`` walks an object against a built-in kind's schema and returns, or drops, the fields the
kind does not have, with sigs.k8s.io/json's paths (``spec.containers[0].nodeSelectr``). Schemas that
declare no properties (``RawExtension``, ``FieldsV1``, apiextensions' ``JSON``) and scalars are not
walked, so a valid object is never refused.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable
from typing import Any

import orjson

from scheduler.simulator import apidefs, openapiproto
from scheduler.simulator.resources import ResourceRegistry, ResourceType
from scheduler.simulator.typecheck import content_key

__all__ = ["FieldChecker", "OpenAPI", "definition_for"]

Obj = dict[str, Any]
_REF = "#/components/schemas/"
_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_OBJECT_META, _LIST_META = _META + "ObjectMeta", _META + "ListMeta"
_STATUS, _DELETE_OPTIONS = _META + "Status", _META + "DeleteOptions"
_JSON_PATCH, _MERGE_PATCH = "application/json-patch+json", "application/merge-patch+json"
_SMP, _APPLY = "application/strategic-merge-patch+json", "application/apply-patch+yaml"
_TYPE_META = {
    "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object.",
                   "type": "string"},
    "kind": {"description": "Kind is a string value representing the REST resource this object represents.",
             "type": "string"}}
# Subresources whose body is another kind: (group, version, kind).
_SUB_KINDS = {"binding": ("", "v1", "Binding"), "eviction": ("policy", "v1", "Eviction"),
              "token": ("authentication.k8s.io", "v1", "TokenRequest"),
              "scale": ("autoscaling", "v1", "Scale")}


def definition_for(group: str, version: str, kind: str) -> str | None:
    """The built-in definition describing this kind, if there is one."""
    return apidefs.kind_definitions().get((group, version, kind))


def _crd_model_name(group: str, version: str, kind: str) -> str:
    """apiextensions' ``gvkToModelName``: the group reversed, then version and kind."""
    return ".".join(reversed(group.split("."))) + f".{version}.{kind}"


def _refs(value: Any, out: set[str]) -> None:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF):
            out.add(ref[len(_REF):])
        for v in value.values():
            _refs(v, out)
    elif isinstance(value, list):
        for v in value:
            _refs(v, out)


def _closure(names: Iterable[str], schemas: dict[str, Obj]) -> dict[str, Obj]:
    out: dict[str, Obj] = {}
    todo = list(names)
    while todo:
        name = todo.pop()
        if name in out or name not in schemas:
            continue
        out[name] = schemas[name]
        found: set[str] = set()
        _refs(schemas[name], found)
        todo.extend(found - out.keys())
    return dict(sorted(out.items()))


def _param(name: str, where: str = "query", type_: str = "string", required: bool = False) -> Obj:
    out: Obj = {"name": name, "in": where, "schema": {"type": type_, "uniqueItems": True}}
    if required:
        out["required"] = True
    return out


_LIST_PARAMS = [_param("allowWatchBookmarks", type_="boolean"), _param("continue"), _param("fieldSelector"),
                _param("labelSelector"), _param("limit", type_="integer"), _param("resourceVersion"),
                _param("resourceVersionMatch"), _param("sendInitialEvents", type_="boolean"),
                _param("timeoutSeconds", type_="integer"), _param("watch", type_="boolean")]
_WRITE_PARAMS = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]


class _Kinds:
    """What one resource's operations read and write: the kind's and its list's schema names, and schemas."""

    def __init__(self, rt: ResourceType, schemas: dict[str, Obj]) -> None:
        self.rt = rt
        self.extra: dict[str, Obj] = {}
        g, v = rt.group, rt.version
        self.gvk = {"group": g, "version": v, "kind": rt.kind}
        if rt.crd_name:
            self.name = _crd_model_name(g, v, rt.kind)
            self.list_name = _crd_model_name(g, v, rt.list_kind)
            body: Obj = copy.deepcopy(rt.schema) if rt.schema else {"type": "object"}
            if rt.schema:                            # buildKubeNative: TypeMeta and ObjectMeta added
                props = body.setdefault("properties", {})
                props.update(copy.deepcopy(_TYPE_META))
                props["metadata"] = {"allOf": [{"$ref": _REF + _OBJECT_META}],
                                     "description": "Standard object's metadata."}
            body["x-kubernetes-group-version-kind"] = [self.gvk]
            self.extra[self.name] = body
            self.smp = False
        else:
            name = definition_for(g, v, rt.kind)
            self.smp = name is not None
            if name is None:        # served without a definition: open, so nothing valid is refused
                name = f"io.k8s.simulated.{g or 'core'}.{v}.{rt.kind}"
                self.extra[name] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True,
                                    "properties": {**copy.deepcopy(_TYPE_META), "metadata": {
                                        "allOf": [{"$ref": _REF + _OBJECT_META}]}},
                                    "x-kubernetes-group-version-kind": [self.gvk]}
            self.name = name
            list_name = definition_for(g, v, rt.list_kind)
            self.list_name = list_name or f"{name}List"
        if self.list_name not in schemas:
            self.extra[self.list_name] = {
                "description": f"{rt.list_kind} is a list of {rt.kind}", "type": "object", "required": ["items"],
                "properties": {**copy.deepcopy(_TYPE_META),
                               "items": {"type": "array", "items": {"$ref": _REF + self.name}},
                               "metadata": {"allOf": [{"$ref": _REF + _LIST_META}]}},
                "x-kubernetes-group-version-kind": [{"group": g, "version": v, "kind": rt.list_kind}]}


def _content(ref: str, types: Iterable[str]) -> Obj:
    return {t: {"schema": {"$ref": _REF + ref}} for t in types}


def _operation(op_id: str, action: str, gvk: Obj, params: list[Obj], response: str, *,
               body: str | None = None, body_types: Iterable[str] = ("application/json", "application/yaml"),
               created: bool = False) -> Obj:
    responses: Obj = {"200": {"description": "OK", "content": _content(response, ("application/json",
                                                                                  "application/yaml"))},
                      "401": {"description": "Unauthorized"}}
    if created:
        responses["201"] = {"description": "Created", "content": _content(response, ("application/json",
                                                                                     "application/yaml"))}
    op: Obj = {"operationId": op_id, "parameters": params, "responses": responses, "x-kubernetes-action": action,
               "x-kubernetes-group-version-kind": gvk}
    if body is not None:
        op["requestBody"] = {"content": _content(body, body_types), **({"required": True} if action != "delete"
                                                                          else {})}
    return op


def _paths(k: _Kinds, schemas_for: dict[tuple[str, str, str], str]) -> Obj:
    """The REST operations of one resource, as kube-apiserver's installer documents them."""
    rt = k.rt
    base = f"/apis/{rt.group}/{rt.version}" if rt.group else f"/api/{rt.version}"
    ns_part = "Namespaced" if rt.namespaced else ""
    coll = f"{base}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{base}/{rt.plural}"
    item = f"{coll}/{{name}}"
    path_params = [_param("namespace", "path", required=True)] if rt.namespaced else []
    item_params = [_param("name", "path", required=True), *path_params]
    verbs = set(rt.verbs)
    kind = rt.kind
    patch_types = [_JSON_PATCH, _MERGE_PATCH] + ([_SMP] if k.smp else []) + [_APPLY]
    out: Obj = {}
    coll_ops = _collection_ops(k, ns_part, path_params)
    if coll_ops:
        out[coll] = coll_ops
    item_ops = _item_ops(k, ns_part, item_params, patch_types)
    if item_ops:
        out[item] = item_ops
    if rt.namespaced and "list" in verbs:
        out[f"{base}/{rt.plural}"] = {"get": _operation(f"list{kind}ForAllNamespaces", "list", k.gvk, _LIST_PARAMS,
                                                        k.list_name)}
    for sub in rt.subresources:
        ops = _subresource_ops(k, sub, ns_part, item_params, patch_types, schemas_for)
        if ops is not None:
            out[f"{item}/{sub}"] = ops
    return out


def _collection_ops(k: _Kinds, ns_part: str, path_params: list[Obj]) -> Obj:
    """list, create and deletecollection on the collection's path."""
    verbs, kind = set(k.rt.verbs), k.rt.kind
    coll_ops: Obj = {}
    if "list" in verbs:
        coll_ops["get"] = _operation(f"list{ns_part}{kind}", "list", k.gvk, [*path_params, *_LIST_PARAMS],
                                     k.list_name)
    if "create" in verbs:
        coll_ops["post"] = _operation(f"create{ns_part}{kind}", "post", k.gvk, [*path_params, *_WRITE_PARAMS],
                                      k.name, body=k.name, created=True)
    if "deletecollection" in verbs:
        coll_ops["delete"] = _operation(f"deletecollection{ns_part}{kind}", "deletecollection", k.gvk,
                                        [*path_params, *_LIST_PARAMS], _STATUS, body=_DELETE_OPTIONS)
    return coll_ops


def _item_ops(k: _Kinds, ns_part: str, item_params: list[Obj], patch_types: list[str]) -> Obj:
    """get, update, patch and delete on an object's path."""
    verbs, kind = set(k.rt.verbs), k.rt.kind
    item_ops: Obj = {}
    if "get" in verbs:
        item_ops["get"] = _operation(f"read{ns_part}{kind}", "get", k.gvk, item_params, k.name)
    if "update" in verbs:
        item_ops["put"] = _operation(f"replace{ns_part}{kind}", "put", k.gvk, [*item_params, *_WRITE_PARAMS],
                                     k.name, body=k.name, created=True)
    if "patch" in verbs:
        item_ops["patch"] = _operation(f"patch{ns_part}{kind}", "patch", k.gvk,
                                       [*item_params, *_WRITE_PARAMS, _param("force", type_="boolean")], k.name,
                                       body=k.name, body_types=patch_types, created=True)
    if "delete" in verbs:
        item_ops["delete"] = _operation(f"delete{ns_part}{kind}", "delete", k.gvk,
                                        [*item_params, _param("dryRun"), _param("gracePeriodSeconds", type_="integer"),
                                         _param("propagationPolicy")], k.name, body=_DELETE_OPTIONS)
    return item_ops


def _subresource_ops(k: _Kinds, sub: str, ns_part: str, item_params: list[Obj], patch_types: list[str],
                     schemas_for: dict[tuple[str, str, str], str]) -> Obj | None:
    """A subresource's operations: status's get, put and patch, or a POSTed kind's create (None where
    its kind has no schema, or the subresource is not documented)."""
    kind = k.rt.kind
    title = sub[:1].upper() + sub[1:]
    if sub == "status":
        return {
            "get": _operation(f"read{ns_part}{kind}Status", "get", k.gvk, item_params, k.name),
            "put": _operation(f"replace{ns_part}{kind}Status", "put", k.gvk, [*item_params, *_WRITE_PARAMS],
                              k.name, body=k.name, created=True),
            "patch": _operation(f"patch{ns_part}{kind}Status", "patch", k.gvk,
                                [*item_params, *_WRITE_PARAMS, _param("force", type_="boolean")], k.name,
                                body=k.name, body_types=patch_types, created=True)}
    if sub not in _SUB_KINDS:
        return None
    g, v, sub_kind = _SUB_KINDS[sub]
    name = schemas_for.get((g, v, sub_kind))
    if name is None:
        return None
    return {"post": _operation(f"create{ns_part}{kind}{title}", "post", {"group": g, "version": v, "kind": sub_kind},
                               [*item_params, *_WRITE_PARAMS], name, body=name, created=True)}


def _to_v2(value: Any) -> Any:
    """A v3 component schema in OpenAPI v2's shape: ``#/definitions/`` references, a described reference
    as ``$ref`` with siblings, ``IntOrString`` a string of format int-or-string, ``Quantity`` a string."""
    if isinstance(value, list):
        return [_to_v2(v) for v in value]
    if not isinstance(value, dict):
        return value
    out: Obj = {}
    for key, v in value.items():
        if key == "$ref" and isinstance(v, str):
            out[key] = "#/definitions/" + v[len(_REF):] if v.startswith(_REF) else v
        elif key == "allOf" and isinstance(v, list) and len(v) == 1 and isinstance(v[0], dict) and "$ref" in v[0]:
            out.update(_to_v2(v[0]))
        elif key == "oneOf":
            types = [o.get("type") for o in v if isinstance(o, dict)]
            out["type"] = "string"
            if "integer" in types and value.get("format") != "int-or-string":
                out["format"] = "int-or-string"
        elif key == "nullable":
            continue
        else:
            out[key] = _to_v2(v)
    return out


def _v2_operation(op: Obj, v3_params: list[Obj]) -> Obj:
    params = []
    for p in v3_params:
        q: Obj = {"name": p["name"], "in": p["in"], "type": p["schema"]["type"], "uniqueItems": True}
        if p.get("required"):
            q["required"] = True
        params.append(q)
    if "requestBody" in op:
        content = op["requestBody"]["content"]
        ref = next(iter(content.values()))["schema"]["$ref"]
        params.append({"name": "body", "in": "body", "required": op["requestBody"].get("required", False),
                       "schema": {"$ref": "#/definitions/" + ref[len(_REF):]}})
    responses = {}
    for code, r in op["responses"].items():
        resp: Obj = {"description": r["description"]}
        if "content" in r:
            resp["schema"] = {"$ref": "#/definitions/" + r["content"]["application/json"]["schema"]["$ref"][len(_REF):]}
        responses[code] = resp
    out: Obj = {"operationId": op["operationId"], "produces": ["application/json", "application/yaml"],
                "schemes": ["https"], "parameters": params, "responses": responses,
                "x-kubernetes-action": op["x-kubernetes-action"],
                "x-kubernetes-group-version-kind": op["x-kubernetes-group-version-kind"]}
    if "requestBody" in op:
        out["consumes"] = list(op["requestBody"]["content"])
    return out


class OpenAPI:
    """The documents, built on demand and cached until the registry changes."""

    def __init__(self, registry: ResourceRegistry, version: str) -> None:
        self.registry = registry
        self.version = version
        self._gv: dict[tuple[str, str], tuple[tuple[int, ...], bytes, str]] = {}
        self._v2: tuple[tuple[int, ...], bytes, str] | None = None
        self._v2_proto: tuple[bytes, bytes] | None = None     # (the JSON it encodes, its protobuf)

    def _fingerprint(self, rts: Iterable[ResourceType]) -> tuple[int, ...]:
        # A CRD's update registers new ResourceType objects: their identities say what changed.
        return tuple(sorted(id(rt) for rt in rts))

    def _parts(self, group: str, version: str) -> tuple[Obj, dict[str, Obj]]:
        """The paths and the component schemas (closure included) of one group-version."""
        schemas = apidefs.schemas()
        builtin = apidefs.kind_definitions()
        paths: Obj = {}
        roots: set[str] = {_STATUS, _DELETE_OPTIONS}
        extra: dict[str, Obj] = {}
        for rt in self.registry.resources(group, version):
            k = _Kinds(rt, schemas)
            extra.update(k.extra)
            paths.update(_paths(k, builtin))
            roots |= {k.name, k.list_name}
        _refs(paths, roots)
        return dict(sorted(paths.items())), _closure(roots, {**schemas, **extra})

    def group_version(self, group: str, version: str) -> tuple[bytes, str] | None:
        """The v3 document of one group-version and its hash; None when nothing is served there."""
        rts = self.registry.resources(group, version)
        if not rts:
            return None
        key = self._fingerprint(rts)
        cached = self._gv.get((group, version))
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        paths, components = self._parts(group, version)
        doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": self.version}, "paths": paths,
               "components": {"schemas": components}}
        data = orjson.dumps(doc)
        etag = hashlib.sha512(data).hexdigest().upper()
        self._gv[(group, version)] = (key, data, etag)
        return data, etag

    def discovery(self) -> bytes:
        """``/openapi/v3``: each group-version's document, by URL with its current hash."""
        paths = {}
        for group, versions in sorted(self.registry.groups().items()):
            for version in versions:
                got = self.group_version(group, version)
                if got is None:
                    continue
                key = f"apis/{group}/{version}" if group else f"api/{version}"
                paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={got[1]}"}
        return orjson.dumps({"paths": paths})

    def v2(self) -> tuple[bytes, str]:
        """``/openapi/v2``: every group-version in one Swagger 2.0 document."""
        every = list(self.registry.by_path.values())
        key = self._fingerprint(every)
        if self._v2 is not None and self._v2[0] == key:
            return self._v2[1], self._v2[2]
        paths: Obj = {}
        definitions: Obj = {}
        for group, versions in sorted(self.registry.groups().items()):
            for version in versions:
                gv_paths, components = self._parts(group, version)
                for path, ops in gv_paths.items():
                    paths[path] = {method: _v2_operation(op, op["parameters"]) for method, op in ops.items()}
                for name, schema in components.items():
                    definitions[name] = _to_v2(schema)
        doc = {"swagger": "2.0", "info": {"title": "Kubernetes", "version": self.version},
               "paths": dict(sorted(paths.items())), "definitions": dict(sorted(definitions.items()))}
        data = orjson.dumps(doc)
        etag = hashlib.sha512(data).hexdigest().upper()
        self._v2 = (key, data, etag)
        return data, etag

    def v2_proto(self) -> tuple[bytes, str]:
        """``/openapi/v2`` as gnostic's protobuf ``Document`` (``openapiproto``), with the JSON's ETag, as
        kube-openapi's protobuf cache derives from its JSON one."""
        data, etag = self.v2()
        if self._v2_proto is None or self._v2_proto[0] is not data:
            self._v2_proto = (data, openapiproto.document(orjson.loads(data)))
        return self._v2_proto[1], etag


# ---- unknown fields ----------------------------------------------------------------------------------
class _Node:
    """A compiled schema: ``props`` for an object with declared fields (a child None: not walked), ``item``
    for an array's elements, ``value`` for a map's values."""
    __slots__ = ("item", "props", "value")

    def __init__(self) -> None:
        self.props: dict[str, _Node | None] | None = None
        self.item: _Node | None = None
        self.value: _Node | None = None


class FieldChecker:
    """Unknown fields of built-in kinds, as their typed decoding (sigs.k8s.io/json, strict) finds them."""

    # How many clean subtrees ``unknown`` remembers before it starts over.
    CLEAN_MAX = 4096

    def __init__(self) -> None:
        self._compiled: dict[str, _Node | None] = {}
        # Top-level subtrees (a pod's ``spec``) seen without an unknown field, by compiled node (kept
        # for the checker's life, so its id is stable) and encoded content: a workload's pods share
        # their spec. Only clean ones, so a subtree with an unknown field is always walked (and dropped).
        self._clean: set[tuple[int, bytes]] = set()

    def _definition(self, name: str) -> _Node | None:
        if name in self._compiled:
            return self._compiled[name]
        schema = apidefs.schemas().get(name)
        if schema is None:
            self._compiled[name] = None
            return None
        node = _Node()
        self._compiled[name] = node            # before the fields: definitions may refer to themselves
        compiled = self._schema(schema, top=True)
        if compiled is None:
            self._compiled[name] = None
            return None
        node.props, node.item, node.value = compiled.props, compiled.item, compiled.value
        return node

    def _container(self, inner: Obj, slot: str) -> _Node | None:
        """An array (``slot`` "item") or a map ("value") whose elements are walked by ``inner``'s node;
        None where the elements are not walked (nor, then, the container)."""
        child = self._schema(inner)
        if child is None:
            return None
        node = _Node()
        setattr(node, slot, child)
        return node

    def _schema(self, schema: Obj, top: bool = False) -> _Node | None:
        ref = schema.get("$ref")
        if ref is None and schema.get("allOf"):
            ref = schema["allOf"][0].get("$ref")
        if ref is not None and not top:
            return self._definition(ref.rpartition("/")[2])
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return None
        if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
            return self._container(schema["items"], "item")
        if isinstance(schema.get("additionalProperties"), dict):
            return self._container(schema["additionalProperties"], "value")
        props = schema.get("properties")
        if props:
            node = _Node()
            node.props = {k: self._schema(v) for k, v in props.items()}
            return node
        return None                      # a scalar, or an object of any shape (RawExtension, FieldsV1, JSON)

    def unknown(self, definition: str, obj: Any, *, drop: bool = False) -> list[str]:
        """The paths of ``obj``'s fields that ``definition`` does not have; ``drop`` removes them (in place)."""
        node = self._definition(definition)
        out: list[str] = []
        if node is None:
            return out
        props = node.props
        if props is None or not isinstance(obj, dict):
            _walk(node, obj, "", out, drop)
            return out
        for key in list(obj) if drop else obj:          # _walk's object case, remembering clean subtrees
            if key not in props:
                out.append(key)
                if drop:
                    del obj[key]
                continue
            child = props[key]
            if child is None:
                continue
            value = obj[key]
            seen = content_key(child, value)
            if seen is not None and seen in self._clean:
                continue
            before = len(out)
            _walk(child, value, key, out, drop)
            if seen is not None and len(out) == before:
                if len(self._clean) >= self.CLEAN_MAX:
                    self._clean.clear()
                self._clean.add(seen)
        return out



def _walk(node: _Node, value: Any, path: str, out: list[str], drop: bool) -> None:
    props = node.props
    if props is not None:
        if not isinstance(value, dict):
            return
        for key in list(value) if drop else value:
            if key in props:
                child = props[key]
                if child is not None:
                    _walk(child, value[key], f"{path}.{key}" if path else key, out, drop)
            else:
                out.append(f"{path}.{key}" if path else key)
                if drop:
                    del value[key]
        return
    if node.item is not None:
        if isinstance(value, list):
            for i, v in enumerate(value):
                _walk(node.item, v, f"{path}[{i}]", out, drop)
        return
    if node.value is not None and isinstance(value, dict):
        for key, v in value.items():
            _walk(node.value, v, f"{path}.{key}" if path else key, out, drop)
