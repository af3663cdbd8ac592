"""``spec.extenders[]``: one HTTP extender, as KubeSchedulerConfiguration v1's ``Extender``.

The fields and their JSON names are upstream's (``k8s.io/kube-scheduler/config/v1``): ``urlPrefix``,
the four verbs, ``weight``, ``enableHTTPS``, ``tlsConfig``, ``httpTimeout`` (a Go duration string,
``"30s"``, ``"1m30s"``), ``nodeCacheCapable``, ``managedResources`` and ``ignorable``. An unset or
zero ``httpTimeout`` is upstream's ``DefaultExtenderTimeout``, 5 s.

Validation is upstream's ``validateExtenders`` with its messages (``field.Invalid``'s
``Invalid value: <value>: <detail>``): a prioritizing extender needs a positive weight, each
managed resource name must be a valid *extended* resource name (a qualified name with a domain
outside ``kubernetes.io/``), no name may be managed twice, and at most one extender may bind.
Beyond upstream, which would only fail when dialling: ``urlPrefix`` must be an ``http(s)://`` URL,
``httpTimeout`` must parse and not be negative, and the ``*Data`` fields must be base64 (Go's
``[]byte`` in JSON). Upstream's checks are ``extenders_errors``: every error, in upstream's order, each naming its field
(``extenders[0].weight: Invalid value: 0: must have a positive weight applied to it``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from scheduler.model.parsing import parse_go_duration
from scheduler.model.selectors import label_key_errors

__all__ = ["DEFAULT_EXTENDER_TIMEOUT", "ExtenderConfig", "ExtenderManagedResource", "ExtenderTLSConfig",
           "extenders_errors", "go_quote", "is_extended_resource_name", "parse_go_duration",
           "qualified_name_errors"]

# Upstream's DefaultExtenderTimeout (pkg/scheduler/extender.go), for an unset or zero httpTimeout.
DEFAULT_EXTENDER_TIMEOUT = 5.0
INT64 = (-(2**63), 2**63 - 1)


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


def go_quote(s: str) -> str:
    """Go's ``%q`` for the plain strings of these messages."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def qualified_name_errors(name: str) -> list[str]:
    """apimachinery's ``IsQualifiedName``: ``IsLabelKey``'s rules, but its too-many-slashes reason
    calls the value "a qualified name"."""
    return [e.replace("a valid label key ", "a qualified name ", 1) for e in label_key_errors(name)]


def is_extended_resource_name(name: str) -> bool:
    """``v1helper.IsExtendedResourceName``: not native (it has a domain, and not ``kubernetes.io/``),
    not ``requests.``-prefixed, and a qualified name once ``requests.`` is put in front (quota's form)."""
    if "/" not in name or "kubernetes.io/" in name or name.startswith("requests."):
        return False
    return not qualified_name_errors("requests." + name)


def _base64(value: str, field: str) -> str:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError(f"illegal base64 data in {field}") from None
    return value


class ExtenderTLSConfig(_Model):
    """How to trust the extender, and how to present ourselves to it (upstream's ExtenderTLSConfig)."""

    insecure: bool = Field(default=False, description="Do not verify the extender's certificate (testing only).")
    server_name: str = Field(default="", alias="serverName",
                             description="The name its certificate is checked against (and SNI).")
    cert_file: str = Field(default="", alias="certFile", description="Client certificate (PEM file).")
    key_file: str = Field(default="", alias="keyFile", description="Client key (PEM file).")
    ca_file: str = Field(default="", alias="caFile", description="Trusted root certificates (PEM file).")
    cert_data: str = Field(default="", alias="certData",
                           description="Client certificate, base64 PEM; wins over certFile.")
    key_data: str = Field(default="", alias="keyData", description="Client key, base64 PEM; wins over keyFile.")
    ca_data: str = Field(default="", alias="caData", description="Trusted roots, base64 PEM; wins over caFile.")

    @field_validator("cert_data", "key_data", "ca_data")
    @classmethod
    def _is_base64(cls, v: str, info: ValidationInfo) -> str:
        alias = {"cert_data": "certData", "key_data": "keyData", "ca_data": "caData"}[str(info.field_name)]
        return _base64(v, alias) if v else v


class ExtenderManagedResource(_Model):
    """An extended resource the extender manages (upstream's ExtenderManagedResource)."""

    name: str = Field(description="The extended resource name (example.com/gpu).")
    ignored_by_scheduler: bool = Field(default=False, alias="ignoredByScheduler",
                                       description="NodeResourcesFit does not check it (its ignoredResources).")


class ExtenderConfig(_Model):
    """An HTTP extender: where it listens and which verbs it serves, an empty verb being one it does not serve."""

    url_prefix: str = Field(alias="urlPrefix", description="The URL the verbs are appended to.")
    filter_verb: str = Field(default="", alias="filterVerb", description="Path of the filter call.")
    preempt_verb: str = Field(default="", alias="preemptVerb", description="Path of the preempt call.")
    prioritize_verb: str = Field(default="", alias="prioritizeVerb", description="Path of the prioritize call.")
    weight: int = Field(default=0, ge=INT64[0], le=INT64[1],
                        description="Multiplier of its prioritize scores; positive when prioritizeVerb is set.")
    bind_verb: str = Field(default="", alias="bindVerb",
                           description="Path of the bind call; the extender then binds the pods it is interested in.")
    enable_https: bool = Field(default=False, alias="enableHTTPS",
                               description="Use TLS; without a CA, the extender's certificate is not verified.")
    tls_config: ExtenderTLSConfig | None = Field(default=None, alias="tlsConfig")
    http_timeout: str | None = Field(default=None, alias="httpTimeout",
                                     description="Timeout of each call, a Go duration (30s); unset or 0: 5s.")
    node_cache_capable: bool = Field(default=False, alias="nodeCacheCapable",
                                     description="Send node names only, not whole Node objects.")
    managed_resources: tuple[ExtenderManagedResource, ...] = Field(
        default=(), alias="managedResources",
        description="Only pods requesting one of these are sent to it; empty: every pod.")
    ignorable: bool = Field(default=False, description="Skip it when it fails or cannot be reached.")

    @field_validator("url_prefix")
    @classmethod
    def _url(cls, v: str) -> str:
        parts = urlsplit(v)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"Invalid value: {go_quote(v)}: must be an http:// or https:// URL")
        return v

    @field_validator("http_timeout")
    @classmethod
    def _timeout(cls, v: str | None) -> str | None:
        if v is not None and parse_go_duration(v) < 0:
            raise ValueError(f"Invalid value: {go_quote(v)}: must not be negative")
        return v

    @property
    def timeout(self) -> float:
        """Seconds each call may take: ``httpTimeout``, or upstream's default when unset or zero."""
        t = parse_go_duration(self.http_timeout) if self.http_timeout else 0.0
        return t or DEFAULT_EXTENDER_TIMEOUT

    @property
    def managed(self) -> frozenset[str]:
        return frozenset(r.name for r in self.managed_resources)


def extenders_errors(extenders: Sequence[ExtenderConfig]) -> list[str]:
    """Upstream's ``validateExtenders``, every error in its order (as its aggregate lists them),
    each as ``<path>: Invalid value: <value>: <detail>``."""
    errs: list[str] = []
    seen: set[str] = set()
    binders = 0
    for i, ext in enumerate(extenders):
        if ext.prioritize_verb and ext.weight <= 0:
            errs.append(f"extenders[{i}].weight: Invalid value: {ext.weight}: "
                        f"must have a positive weight applied to it")
        if ext.bind_verb:
            binders += 1
        for j, r in enumerate(ext.managed_resources):
            path = f"extenders[{i}].managedResources[{j}].name"
            reasons = qualified_name_errors(r.name)
            if not reasons and not is_extended_resource_name(r.name):
                reasons = ["is an invalid extended resource name"]
            errs.extend(f"{path}: Invalid value: {go_quote(r.name)}: {e}" for e in reasons)
            if r.name in seen:
                errs.append(f"{path}: Invalid value: {go_quote(r.name)}: duplicate extender managed resource name")
            seen.add(r.name)
    if binders > 1:
        errs.append(f"extenders: Invalid value: {go_quote(f'found {binders} extenders implementing bind')}: "
                    f"only one extender can implement bind")
    return errs
