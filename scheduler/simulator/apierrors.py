"""The API's errors: ``ApiError`` carries the ``Status`` kube-apiserver answers, and the constructors
here build the common ones with upstream's reasons and messages (``k8s.io/apimachinery/pkg/api/errors``):
``NotFound``, ``Conflict`` and ``Invalid`` (422, with the field causes). Every layer of the simulator
raises them; the handlers turn them into responses.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from scheduler.simulator.params import go_quote

if TYPE_CHECKING:
    from scheduler.simulator.resources import ResourceType

__all__ = ["ApiError", "bad_request", "conflict", "invalid", "not_found", "patch_invalid", "resource_name",
           "status_body", "strict_decoding_error"]

Obj = dict[str, Any]


class ApiError(Exception):
    """An error response: HTTP ``code``, Status ``reason`` and ``message``."""

    def __init__(self, code: int, reason: str, message: str, details: Obj | None = None,
                 headers: dict[str, str] | None = None, list_meta: Obj | None = None) -> None:
        super().__init__(message)
        self.code, self.reason, self.message = code, reason, message
        self.details = details
        self.headers = headers or {}
        self.list_meta = list_meta          # the Status's ListMeta (a continue token for an expired one)

    def body(self) -> Obj:
        out = status_body(self.code, self.reason, self.message, self.details)
        if self.list_meta:
            out["metadata"] = dict(self.list_meta)
        return out


def status_body(code: int, reason: str, message: str, details: Obj | None = None) -> Obj:
    """A failure ``Status``, its fields in ``metav1.Status``'s order (kind, apiVersion, metadata, status,
    message, reason, details, code), as encoding/json writes them. An empty ``reason`` is left out, as
    Go's ``omitempty`` leaves out ``StatusReasonUnknown``: that is how kube-apiserver passes on an error
    it does not recognise (etcd's)."""
    out: Obj = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message}
    if reason:
        out["reason"] = reason
    if details:
        out["details"] = details
    out["code"] = code
    return out


def resource_name(rt: ResourceType) -> str:
    return f"{rt.plural}.{rt.group}" if rt.group else rt.plural


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{resource_name(rt)} "{name}" not found',
                    {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural})


def conflict(rt: ResourceType, name: str, why: str) -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {resource_name(rt)} "{name}": {why}',
                    {"name": name, **({"group": rt.group} if rt.group else {}), "kind": rt.plural})


def invalid(kind: str, name: str, causes: list[tuple[str, str, str]], group: str = "") -> ApiError:
    """422 Invalid; ``causes`` are (field, reason, detail) with reason a FieldValue* constant.

    The message names the qualified kind (``PriorityClass.scheduling.k8s.io``), as ``NewInvalid``
    prints its ``GroupKind``; the details carry the bare kind and the group apart."""
    text = ", ".join(f"{f}: {d}" for f, _, d in causes)
    if len(causes) > 1:
        text = f"[{text}]"
    qualified = f"{kind}.{group}" if group and not kind.endswith(f".{group}") else kind
    return ApiError(422, "Invalid", f'{qualified} "{name}" is invalid: {text}', {
        "name": name, **({"group": group} if group else {}), "kind": kind,
        "causes": [{"reason": r, "message": d, "field": f} for f, r, d in causes]})


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def strict_decoding_error(unknown: list[str]) -> str:
    """``runtime.NewStrictDecodingError``'s text for the unknown fields a strict decoding found."""
    return "strict decoding error: " + ", ".join(f'unknown field "{u}"' for u in unknown)


def patch_invalid(shown: str, detail: str) -> ApiError:
    """The patcher's answer when the patched object does not decode: ``NewInvalid(GroupKind{}, "", ...)``
    on the field ``patch`` with the patch as its value (kubectl prints ``The request is invalid: ...``)."""
    body = f"Invalid value: {go_quote(shown)}: {detail}"
    return ApiError(422, "Invalid", f' "" is invalid: patch: {body}',
                    {"causes": [{"reason": "FieldValueInvalid", "message": body, "field": "patch"}]})
