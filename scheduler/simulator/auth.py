"""Who a token is, and what RBAC lets it do: the simulated cluster's authentication and
authorization APIs, for the tokens it knows.

- ``authentication.k8s.io/v1``: ``TokenReview`` (a delegating server asks who a bearer token is)
  and ``SelfSubjectReview`` (``kubectl auth whoami``);
- ``authorization.k8s.io/v1``: ``SubjectAccessReview`` (may user U do V on path P / resource R?),
  ``SelfSubjectAccessReview`` (``kubectl auth can-i``) and ``SelfSubjectRulesReview``.

These kinds are never stored: a review is created and answered in one request, as kube-apiserver
does. The admin token of the cluster is a member of ``system:masters`` and may do anything; every
other token the server knows (``ApiServer.add_token``) is whichever user and groups it was given,
and RBAC decides for it from the ClusterRoles, Roles and their bindings in the store, with
upstream's matching: verbs and ``*``; API groups, resources (``res/sub``) and resource names;
non-resource URLs exact or with a trailing ``*``; subjects by User, Group or ServiceAccount
(``system:serviceaccount:NS:NAME``, and its groups ``system:serviceaccounts[:NS]``). Aggregated
ClusterRoles are not evaluated. Errors are kube-apiserver's 422 causes.

Every request is authorised the same way (``ApiServer.dispatch``, after impersonation): a refusal is
``responsewriters.Forbidden``'s 403 (``forbidden``). Upstream's bootstrap policy that any
authenticated user relies on is built in (``BOOTSTRAP_ROLES``, evaluated, not stored):
``system:discovery`` and ``system:public-info-viewer`` (discovery, OpenAPI, health, version),
``system:basic-user`` (the self reviews) and ``cluster-admin`` for ``system:masters``.
``SelfSubjectRulesReview`` (``kubectl auth can-i --list``) lists the rules of the requester's
bindings, cluster-wide and in the namespace asked for, as RBAC's ``RulesFor`` does.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from scheduler.simulator.apierrors import ApiError, invalid
from scheduler.simulator.resources import ResourceType

__all__ = ["ADMIN", "BOOTSTRAP_ROLES", "REVIEW_TYPES", "UserInfo", "answer_review", "authorize", "forbidden"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class UserInfo:
    username: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def as_obj(self) -> Obj:
        out: Obj = {"username": self.username, "groups": list(self.groups)}
        if self.uid:
            out["uid"] = self.uid
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra}
        return out


ADMIN = UserInfo("kopf-scheduler-sim-admin", "", ("system:masters", "system:authenticated"))

REVIEW_TYPES = [
    ResourceType("authentication.k8s.io", "v1", "tokenreviews", "TokenReview", False, verbs=("create",)),
    ResourceType("authentication.k8s.io", "v1", "selfsubjectreviews", "SelfSubjectReview", False, verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "subjectaccessreviews", "SubjectAccessReview", False,
                 verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectaccessreviews", "SelfSubjectAccessReview", False,
                 verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "selfsubjectrulesreviews", "SelfSubjectRulesReview", False,
                 verbs=("create",)),
    ResourceType("authorization.k8s.io", "v1", "localsubjectaccessreviews", "LocalSubjectAccessReview", True,
                 verbs=("create",)),
]


def _role(name: str, *rules: Obj) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": name},
            "rules": list(rules)}


def _binding(name: str, *groups: str) -> Obj:
    return {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
            "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g} for g in groups]}


# plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: the roles every authenticated user is bound to.
BOOTSTRAP_ROLES = [
    _role("cluster-admin", {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
          {"nonResourceURLs": ["*"], "verbs": ["*"]}),
    _role("system:basic-user",
          {"apiGroups": ["authorization.k8s.io"], "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
           "verbs": ["create"]},
          {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"], "verbs": ["create"]}),
    _role("system:discovery", {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez",
                                                   "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                               "verbs": ["get"]}),
    _role("system:public-info-viewer", {"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version",
                                                            "/version/"], "verbs": ["get"]}),
]
BOOTSTRAP_BINDINGS = [
    _binding("cluster-admin", "system:masters"),
    _binding("system:basic-user", "system:authenticated"),
    _binding("system:discovery", "system:authenticated"),
    _binding("system:public-info-viewer", "system:authenticated", "system:unauthenticated"),
]


def _matches(values: Iterable[str], want: str) -> bool:
    return any(v in ("*", want) for v in values)


def _url_matches(urls: Iterable[str], path: str) -> bool:
    return any(u in ("*", path) or (u.endswith("*") and path.startswith(u[:-1])) for u in urls)


def _rule_allows(rule: Obj, attrs: Obj, non_resource: bool) -> bool:
    if not _matches(rule.get("verbs") or (), str(attrs.get("verb", ""))):
        return False
    if non_resource:
        return _url_matches(rule.get("nonResourceURLs") or (), str(attrs.get("path", "")))
    if rule.get("nonResourceURLs"):
        return False
    resource = str(attrs.get("resource", ""))
    if attrs.get("subresource"):
        resource = f"{resource}/{attrs['subresource']}"
    names = rule.get("resourceNames") or ()
    return (_matches(rule.get("apiGroups") or (), str(attrs.get("group", "")))
            and _matches(rule.get("resources") or (), resource)
            and (not names or str(attrs.get("name", "")) in names))


def _subject_is(subject: Obj, user: UserInfo, binding_ns: str) -> bool:
    kind, name = subject.get("kind"), subject.get("name")
    if kind == "User":
        return bool(name == user.username)
    if kind == "Group":
        return name in user.groups
    if kind == "ServiceAccount":
        ns = subject.get("namespace") or binding_ns
        return user.username == f"system:serviceaccount:{ns}:{name}"
    return False


def authorize(buckets: Any, user: UserInfo, attrs: Obj, non_resource: bool) -> tuple[bool, str]:
    """(allowed, reason) as kube-apiserver's RBAC authorizer answers; ``buckets(store)`` yields
    the stored objects of a kind (``rbac.authorization.k8s.io/clusterroles`` ...)."""
    if "system:masters" in user.groups:
        return True, ""
    for binding, ns, subject, role in _bound_roles(buckets, user,
                                                  "" if non_resource else str(attrs.get("namespace", ""))):
        if any(_rule_allows(rule, attrs, non_resource) for rule in role.get("rules") or ()):
            return True, _allowed_by(binding, ns, subject)
    return False, ""


def _bound_roles(buckets: Any, user: UserInfo, namespace: str) -> Iterator[tuple[Obj, str, Obj, Obj]]:
    """(binding, its namespace, the first of its subjects that is ``user``, role) for each binding
    naming ``user``: the cluster role bindings (the bootstrap ones first), then the role bindings of
    ``namespace``, as RBAC's ``VisitRulesFor`` visits them (``appliesTo``)."""
    roles = {r["metadata"]["name"]: r for r in [*BOOTSTRAP_ROLES, *buckets("rbac.authorization.k8s.io/clusterroles")]}
    bindings = [(b, "") for b in [*BOOTSTRAP_BINDINGS, *buckets("rbac.authorization.k8s.io/clusterrolebindings")]]
    ns_roles: dict[str, Obj] = {}
    if namespace:
        ns_roles = {r["metadata"]["name"]: r for r in buckets("rbac.authorization.k8s.io/roles")
                    if r["metadata"].get("namespace") == namespace}
        bindings += [(b, namespace) for b in buckets("rbac.authorization.k8s.io/rolebindings")
                     if b["metadata"].get("namespace") == namespace]
    for binding, ns in bindings:
        ref = binding.get("roleRef") or {}
        subject = next((s for s in binding.get("subjects") or () if _subject_is(s, user, ns)), None)
        if subject is None:
            continue
        role = (roles if ref.get("kind") == "ClusterRole" else ns_roles).get(str(ref.get("name")))
        if role is not None:
            yield binding, ns, subject, role


def rules_for(buckets: Any, user: UserInfo, namespace: str) -> Obj:
    """A SubjectRulesReviewStatus: the resource and non-resource rules ``user`` has in ``namespace``."""
    resource: list[Obj] = []
    non_resource: list[Obj] = []
    for _, _, _, role in _bound_roles(buckets, user, namespace):
        for rule in role.get("rules") or ():
            verbs = list(rule.get("verbs") or ())
            if rule.get("nonResourceURLs"):
                non_resource.append({"verbs": verbs, "nonResourceURLs": list(rule["nonResourceURLs"])})
                continue
            out: Obj = {"verbs": verbs}
            for key in ("apiGroups", "resources", "resourceNames"):
                if rule.get(key):
                    out[key] = list(rule[key])
            resource.append(out)
    return {"resourceRules": resource, "nonResourceRules": non_resource, "incomplete": False}


def forbidden(user: UserInfo, attrs: Obj, resource_request: bool, reason: str = "") -> ApiError:
    """``responsewriters.Forbidden``: the 403 for a request the authorizer did not allow, its message
    ``forbiddenMessage`` (plus the authorizer's reason) inside ``NewForbidden``."""
    verb = attrs.get("verb", "")
    if not resource_request:
        msg = f'User "{user.username}" cannot {verb} path "{attrs.get("path", "")}"'
        group, resource, name = "", "", ""
    else:
        group, resource, name = str(attrs.get("group", "")), str(attrs.get("resource", "")), str(attrs.get("name", ""))
        shown = f"{resource}/{attrs['subresource']}" if attrs.get("subresource") else resource
        where = (f'in the namespace "{attrs["namespace"]}"' if attrs.get("namespace") else "at the cluster scope")
        msg = f'User "{user.username}" cannot {verb} resource "{shown}" in API group "{group}" {where}'
    if reason:
        msg = f"{msg}: {reason}"
    qualified = f"{resource}.{group}" if group else resource
    if not qualified:
        text = f"forbidden: {msg}"
    elif not name:
        text = f"{qualified} is forbidden: {msg}"
    else:
        text = f'{qualified} "{name}" is forbidden: {msg}'
    details: Obj = {k: v for k, v in (("name", name), ("group", group), ("kind", resource)) if v}
    return ApiError(403, "Forbidden", text, details or None)


def _allowed_by(binding: Obj, ns: str, subject: Obj) -> str:
    """The reason RBAC gives for an allowed request: ``clusterRoleBindingDescriber`` or
    ``roleBindingDescriber``, naming the binding, its role and the subject that matched."""
    ref = binding.get("roleRef") or {}
    name = binding["metadata"]["name"]
    kind, shown = ("RoleBinding", f"{name}/{ns}") if ns else ("ClusterRoleBinding", name)
    return f'RBAC: allowed by {kind} "{shown}" of {ref.get("kind")} "{ref.get("name")}" to {_describe(subject, ns)}'


def _describe(subject: Obj, binding_ns: str) -> str:
    """``describeSubject``: a service account as ``name/namespace``, anything else by its name."""
    if subject.get("kind") == "ServiceAccount":
        return f'ServiceAccount "{subject.get("name")}/{subject.get("namespace") or binding_ns}"'
    return f'{subject.get("kind")} "{subject.get("name")}"'


def answer_review(rt: ResourceType, body: Any, requester: UserInfo, token_user: Any, buckets: Any,
                  namespace: str = "") -> Obj:
    """The created review, with its ``status``; ApiError 422 for a spec kube-apiserver refuses.
    ``token_user(token)`` is the UserInfo of a token, or None; ``namespace`` the request's (a
    LocalSubjectAccessReview's)."""
    if not isinstance(body, dict):
        raise ApiError(400, "BadRequest", f"the body of the request was not a {rt.kind}")
    spec = body.get("spec") or {}
    if rt.kind == "LocalSubjectAccessReview":
        return _local_review(rt, body, spec, namespace, buckets)
    out: Obj = {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": body.get("metadata") or {},
                "spec": spec}
    if rt.kind == "TokenReview":
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise invalid(rt.kind, "", [("spec.token", "FieldValueRequired", "Required value")], rt.group)
        user = token_user(token)
        out["status"] = ({"authenticated": True, "user": user.as_obj(), "audiences": spec.get("audiences") or []}
                         if user is not None else {"user": {}, "error": "invalid bearer token"})
        return out
    if rt.kind == "SelfSubjectReview":
        out["status"] = {"userInfo": requester.as_obj()}
        return out
    if rt.kind == "SelfSubjectRulesReview":
        # selfsubjectrulesreview.REST.Create: a namespace is required, and the answer carries only the status
        if not spec.get("namespace"):
            raise ApiError(400, "BadRequest", "no namespace on request")
        return {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {}, "spec": {},
                "status": rules_for(buckets, requester, str(spec["namespace"]))}
    if rt.kind == "SubjectAccessReview":
        user = UserInfo(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()))
        if not user.username and not user.groups:
            raise invalid(rt.kind, "", [("spec.user", "FieldValueInvalid",
                                         'Invalid value: "": at least one of user or group must be specified')],
                          rt.group)
    else:
        user = requester
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if (res is None) == (non is None):
        field = "spec.resourceAttributes"
        raise invalid(rt.kind, "", [(field, "FieldValueInvalid", "Invalid value: \"null\": exactly one of "
                                     "nonResourceAttributes or resourceAttributes must be specified")], rt.group)
    attrs = res if res is not None else non
    if not isinstance(attrs, dict):
        raise ApiError(400, "BadRequest", f"{rt.kind}: the attributes must be an object")
    allowed, reason = authorize(buckets, user, attrs, non is not None)
    out["status"] = {"allowed": allowed, **({"reason": reason} if reason else {})}
    return out


def _local_review(rt: ResourceType, body: Obj, spec: Obj, namespace: str, buckets: Any) -> Obj:
    """A LocalSubjectAccessReview (``localsubjectaccessreview.REST``): a SubjectAccessReview of
    resource attributes in the request's namespace only (``ValidateLocalSubjectAccessReview``)."""
    meta = dict(body.get("metadata") or {})
    # rest.BeforeCreate: the object takes the request's namespace, or must already name it
    if meta.setdefault("namespace", namespace) != namespace:
        raise ApiError(400, "BadRequest", "the namespace of the provided object does not match the namespace sent "
                                          "on the request")
    res, non = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    causes: list[tuple[str, str, str]] = []
    if res is not None and non is not None:
        causes.append(("spec.nonResourceAttributes", "FieldValueInvalid", "Invalid value: "
                       f"{_go_non_resource(non)}: cannot be specified in combination with resourceAttributes"))
    if res is None and non is None:
        causes.append(("spec.resourceAttributes", "FieldValueInvalid", "Invalid value: \"null\": exactly one of "
                       "nonResourceAttributes or resourceAttributes must be specified"))
    if not spec.get("user") and not spec.get("groups"):
        causes.append(("spec.user", "FieldValueInvalid",
                       'Invalid value: "": at least one of user or group must be specified'))
    if isinstance(res, dict) and res.get("namespace", "") != namespace:
        causes.append(("spec.resourceAttributes.namespace", "FieldValueInvalid",
                       f'Invalid value: "{res.get("namespace", "")}": must match metadata.namespace'))
    if non is not None:
        causes.append(("spec.nonResourceAttributes", "FieldValueInvalid",
                       f"Invalid value: {_go_non_resource(non)}: disallowed on this kind of request"))
    if causes:
        raise invalid(rt.kind, "", causes, rt.group)
    if not isinstance(res, dict):
        raise ApiError(400, "BadRequest", f"{rt.kind}: the attributes must be an object")
    user = UserInfo(str(spec.get("user") or ""), str(spec.get("uid") or ""), tuple(spec.get("groups") or ()))
    allowed, reason = authorize(buckets, user, res, False)
    return {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": meta, "spec": spec,
            "status": {"allowed": allowed, **({"reason": reason} if reason else {})}}


def _go_non_resource(non: Any) -> str:
    """``%#v`` of the internal ``authorization.NonResourceAttributes`` a bad value is shown as."""
    attrs = non if isinstance(non, dict) else {}
    path, verb = (str(attrs.get(k, "")).replace("\\", "\\\\").replace('"', '\\"') for k in ("path", "verb"))
    return f'authorization.NonResourceAttributes{{Path:"{path}", Verb:"{verb}"}}'
