"""ServiceAccounts: the ServiceAccount admission plugin on pod create, and the ``serviceaccounts/token``
subresource (TokenRequest).

Admission follows ``plugin/pkg/admission/serviceaccount/admission.go``: a pod naming no account gets
``default`` (and ``spec.serviceAccount``, the deprecated alias, mirrors the name, as the v1 conversion
writes it); the account must exist, or the pod is refused with upstream's 403 (``pods "x" is forbidden:
error looking up service account ns/name: serviceaccount "name" not found``); a pod without
``imagePullSecrets`` gets its account's. Mirror pods are left alone. Upstream looks an account missing
from its informer up again, ten times for ``default`` (the controller creates it a moment after the
namespace): here the lookup asks the ServiceAccounts controller to make ``default`` at once, which is
what those retries wait for, so a pod created right after its namespace is admitted. The projected
token volume is not added: nothing in the simulated cluster reads it.

TokenRequest follows ``pkg/registry/core/serviceaccount/storage/token.go`` and
``pkg/apis/authentication/validation``: ``expirationSeconds`` defaults to 3600 and must be at least 600
(and at most 2^32); the token names ``system:serviceaccount:NS:NAME`` with the groups
``system:serviceaccounts``, ``system:serviceaccounts:NS`` and ``system:authenticated``, and the server
accepts it until it expires (the newest ``MAX_ISSUED`` of them: memory stays bounded however many are
asked for). A ``boundObjectRef`` must name a Pod running as the account, or a Secret, in its namespace.
Tokens are JWT-shaped (header, claims, signature) as clients that read
their claims expect; only this server checks them, by lookup.
"""

from __future__ import annotations

import base64
import datetime as dt
import secrets
from collections.abc import Callable
from typing import Any

import orjson

from scheduler.simulator.apierrors import ApiError, bad_request, invalid

__all__ = ["AUDIENCE", "DEFAULT_NAME", "MAX_ISSUED", "TokenGrant", "admit_pod", "service_account_user", "token_request"]

Obj = dict[str, Any]
DEFAULT_NAME = "default"
# kube-apiserver's --api-audiences default to its --service-account-issuer; clusters name it so.
AUDIENCE = "https://kubernetes.default.svc.cluster.local"
_MIRROR = "kubernetes.io/config.mirror"
_MIN_SECONDS, _MAX_SECONDS, _DEFAULT_SECONDS = 600, 1 << 32, 3600
MAX_ISSUED = 10_000

Lookup = Callable[[str, str], "Obj | None"]


def admit_pod(pod: Obj, namespace: str, lookup: Lookup) -> None:
    """The ServiceAccount admission plugin on a pod create (mutates ``pod``); raises the 403.
    ``lookup(namespace, name)`` is the account, or None."""
    spec = pod["spec"]
    name = spec.get("serviceAccountName") or spec.get("serviceAccount") or ""
    if _MIRROR in ((pod.get("metadata") or {}).get("annotations") or {}):
        return
    name = name or DEFAULT_NAME
    spec["serviceAccountName"] = spec["serviceAccount"] = name
    account = lookup(namespace, name)
    if account is None:
        raise ApiError(403, "Forbidden", f'pods "{pod["metadata"].get("name", "")}" is forbidden: error looking up '
                                         f'service account {namespace}/{name}: serviceaccount "{name}" not found')
    if not spec.get("imagePullSecrets") and account.get("imagePullSecrets"):
        spec["imagePullSecrets"] = [{"name": s.get("name", "")} for s in account["imagePullSecrets"]
                                    if isinstance(s, dict)]


class TokenGrant:
    """A token issued for an account: the user it authenticates as and until when (epoch seconds)."""

    __slots__ = ("groups", "token", "uid", "until", "username")

    def __init__(self, token: str, username: str, uid: str, groups: tuple[str, ...], until: float) -> None:
        self.token, self.username, self.uid, self.groups, self.until = token, username, uid, groups, until


def service_account_user(namespace: str, name: str) -> tuple[str, tuple[str, ...]]:
    """The username and groups a ServiceAccount's token authenticates as (``serviceaccount.UserInfo``)."""
    return (f"system:serviceaccount:{namespace}:{name}",
            ("system:serviceaccounts", f"system:serviceaccounts:{namespace}", "system:authenticated"))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


BoundLookup = Callable[[str, str], "Obj | None"]


def _check_bound(name: str, spec: Obj, bound: BoundLookup) -> None:
    """``spec.boundObjectRef``: a Pod running as the account, or a Secret, that exists (with the uid
    given, if one is); the token registry's 404, 400 and 409."""
    ref = spec.get("boundObjectRef")
    if not isinstance(ref, dict):
        return
    api_version, kind = str(ref.get("apiVersion") or ""), str(ref.get("kind") or "")
    obj_name = str(ref.get("name") or "")
    group, _, version = api_version.rpartition("/")
    if group or kind not in ("Pod", "Secret"):
        raise bad_request(f"cannot bind token to object of type {group}/{version}, Kind={kind}")
    obj = bound(kind, obj_name)
    if obj is None:
        plural = "pods" if kind == "Pod" else "secrets"
        raise ApiError(404, "NotFound", f'{plural} "{obj_name}" not found', {"name": obj_name, "kind": plural})
    running_as = str((obj.get("spec") or {}).get("serviceAccountName") or "")
    if kind == "Pod" and running_as != name:
        raise bad_request(f'cannot bind token for serviceaccount "{name}" to pod running with serviceaccount '
                          f'"{running_as}"')
    uid = str(obj["metadata"].get("uid", ""))
    if ref.get("uid") and ref["uid"] != uid:
        raise ApiError(409, "Conflict", f'Operation cannot be fulfilled on {kind} "{obj_name}": the UID in the bound '
                                        f"object reference ({ref['uid']}) does not match the UID in record ({uid}). "
                                        "The object might have been deleted and then recreated",
                       {"name": obj_name, "kind": kind})


def token_request(account: Obj, body: Any, bound: BoundLookup,
                  now: dt.datetime | None = None) -> tuple[Obj, TokenGrant]:
    """The answered TokenRequest for ``account`` (its status holds the token) and the grant to accept;
    400 for a body that is not a TokenRequest or binds to what it may not, 404 for a bound object that
    does not exist, 409 for its wrong uid, 422 for what validation refuses. ``bound(kind, name)`` is
    the account's namespace's Pod or Secret of that name, or None."""
    meta = account["metadata"]
    namespace, name = str(meta.get("namespace", "")), str(meta["name"])
    if not isinstance(body, dict):
        raise bad_request("the body of the request was not a TokenRequest")
    if body.get("kind") not in (None, "", "TokenRequest"):
        raise bad_request(f"the kind in the data ({body['kind']}) does not match the expected kind (TokenRequest)")
    spec = body.get("spec")
    spec = dict(spec) if isinstance(spec, dict) else {}
    seconds = spec.get("expirationSeconds")
    if seconds is None:
        seconds = _DEFAULT_SECONDS                      # SetDefaults_TokenRequestSpec
    if isinstance(seconds, bool) or not isinstance(seconds, int):
        raise bad_request("TokenRequest: spec.expirationSeconds: expected an integer")
    if seconds < _MIN_SECONDS:
        raise invalid("TokenRequest", name, [("spec.expirationSeconds", "FieldValueInvalid",
                                              f"Invalid value: {seconds}: may not specify a duration less than "
                                              "10 minutes")], "authentication.k8s.io")
    if seconds > _MAX_SECONDS:
        raise invalid("TokenRequest", name, [("spec.expirationSeconds", "FieldValueTooLong",
                                              f"Invalid value: {seconds}: may not specify a duration larger than "
                                              "2^32 seconds")], "authentication.k8s.io")
    _check_bound(name, spec, bound)
    audiences = [str(a) for a in spec.get("audiences") or []] or [AUDIENCE]
    spec.update(expirationSeconds=seconds, audiences=audiences)
    start = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
    expiry = start + dt.timedelta(seconds=seconds)
    username, groups = service_account_user(namespace, name)
    claims = {"aud": audiences, "exp": int(expiry.timestamp()), "iat": int(start.timestamp()), "iss": AUDIENCE,
              "jti": secrets.token_hex(16), "nbf": int(start.timestamp()), "sub": username,
              "kubernetes.io": {"namespace": namespace,
                                "serviceaccount": {"name": name, "uid": str(meta.get("uid", ""))}}}
    token = ".".join((_b64(orjson.dumps({"alg": "RS256", "kid": "kopf-scheduler-sim"})), _b64(orjson.dumps(claims)),
                      _b64(secrets.token_bytes(32))))
    out_meta = {k: v for k, v in (body.get("metadata") or {}).items() if k in ("name", "namespace")}
    out_meta.update(name=name, namespace=namespace, creationTimestamp=None)
    out = {"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1", "metadata": out_meta, "spec": spec,
           "status": {"token": token, "expirationTimestamp": expiry.strftime("%Y-%m-%dT%H:%M:%SZ")}}
    return out, TokenGrant(token, username, str(meta.get("uid", "")), groups, expiry.timestamp())
