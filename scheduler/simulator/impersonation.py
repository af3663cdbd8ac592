"""Impersonation, as apiserver's ``WithImpersonation`` filter does it
(``staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go``): ``kubectl --as``,
``--as-group``, ``--as-uid`` and the ``Impersonate-Extra-*`` headers.

Each thing asked for is authorised for the requester with the ``impersonate`` verb on its own
resource: ``users`` (or ``serviceaccounts`` in their namespace, for ``system:serviceaccount:NS:NAME``)
and ``groups`` in the core group, ``uids`` and ``userextras/KEY`` in ``authentication.k8s.io``. The
first refusal is the request's 403, worded as ``responsewriters.Forbidden`` words it. Once all are
allowed, the request runs as the impersonated user: its groups are the ones asked for (a service
account's own groups if none were), plus ``system:authenticated``. Groups, extras or a uid without a
user are a 400.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any
from urllib.parse import unquote

from scheduler.simulator.apierrors import bad_request
from scheduler.simulator.auth import UserInfo, forbidden

__all__ = ["impersonated", "wants_impersonation"]

Obj = dict[str, Any]

USER, GROUP, UID, EXTRA = "Impersonate-User", "Impersonate-Group", "Impersonate-Uid", "Impersonate-Extra-"
_AUTHENTICATED, _UNAUTHENTICATED, _ANONYMOUS = "system:authenticated", "system:unauthenticated", "system:anonymous"
_SA_PREFIX = "system:serviceaccount:"


def wants_impersonation(headers: Mapping[str, str]) -> bool:
    """Whether the request carries any ``Impersonate-*`` header (cheap: the common case has none)."""
    return any(k[:12].lower() == "impersonate-" for k in headers)


def _requests(headers: Any) -> list[Obj]:
    """``buildImpersonationRequests``: one ObjectReference-like entry per thing asked for."""
    out: list[Obj] = []
    user = headers.get(USER, "")
    if user:
        parts = user.split(":")
        if user.startswith(_SA_PREFIX) and len(parts) == 4 and parts[2] and parts[3]:
            out.append({"kind": "ServiceAccount", "namespace": parts[2], "name": parts[3]})
        else:
            out.append({"kind": "User", "name": user})
    out += [{"kind": "Group", "name": g} for g in headers.getall(GROUP, [])]
    for key in {k for k in headers if k.lower().startswith(EXTRA.lower())}:
        extra = unquote(key[len(EXTRA):].lower())
        out += [{"kind": "UserExtra", "name": v, "fieldPath": extra} for v in headers.getall(key, [])]
    if uid := headers.get(UID, ""):
        out.append({"kind": "UID", "name": uid})
    if not user and out:
        # %v of []v1.ObjectReference: each struct's seven fields, space separated
        shown = " ".join("{" + " ".join([r["kind"], r.get("namespace", ""), r["name"], "",
                                        "authentication.k8s.io/v1" if r["kind"] in ("UserExtra", "UID") else "",
                                        "", r.get("fieldPath", "")]) + "}" for r in out)
        raise bad_request(f"requested [{shown}] without impersonating a user")
    return out


def _attributes(ref: Obj) -> Obj:
    """The ``impersonate`` request the requester must be allowed, for one thing asked for."""
    kind = ref["kind"]
    attrs: Obj = {"verb": "impersonate", "name": ref["name"], "group": "", "namespace": ""}
    if kind == "ServiceAccount":
        attrs.update(resource="serviceaccounts", namespace=ref["namespace"])
    elif kind == "User":
        attrs["resource"] = "users"
    elif kind == "Group":
        attrs["resource"] = "groups"
    elif kind == "UserExtra":
        attrs.update(resource="userextras", subresource=ref["fieldPath"], group="authentication.k8s.io")
    else:
        attrs.update(resource="uids", group="authentication.k8s.io")
    return attrs


def impersonated(headers: Any, requester: UserInfo,
                 allowed: Callable[[UserInfo, Obj], tuple[bool, str]] | None) -> UserInfo:
    """The user the request runs as. ``allowed(user, attributes)`` is the authorizer; with None the
    checks are skipped (the request was authorised once already)."""
    refs = _requests(headers)
    if not refs:
        return requester
    username, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    given_groups = bool(headers.getall(GROUP, []))
    for ref in refs:
        attrs = _attributes(ref)
        if allowed is not None:
            ok, reason = allowed(requester, attrs)
            if not ok:
                raise forbidden(requester, attrs, True, reason)
        if ref["kind"] == "ServiceAccount":
            username = f"{_SA_PREFIX}{ref['namespace']}:{ref['name']}"
            if not given_groups:
                groups = ["system:serviceaccounts", f"system:serviceaccounts:{ref['namespace']}"]
        elif ref["kind"] == "User":
            username = ref["name"]
        elif ref["kind"] == "Group":
            groups.append(ref["name"])
        elif ref["kind"] == "UserExtra":
            extra.setdefault(ref["fieldPath"], []).append(ref["name"])
        else:
            uid = ref["name"]
    if username != _ANONYMOUS:
        if not any(g in (_AUTHENTICATED, _UNAUTHENTICATED) for g in groups):
            groups.append(_AUTHENTICATED)
    elif _UNAUTHENTICATED not in groups:
        groups.append(_UNAUTHENTICATED)
    return UserInfo(username, uid, tuple(groups), tuple((k, tuple(v)) for k, v in extra.items()))

